"""Kinematic capsule character controller: collide-and-slide, ground state, step-up, snap.

Frame and units: world space, metres, seconds, degrees; ``settings.up`` is up (default +Z).
The character's position is its *foot*: the lowest point of the upright capsule
(``core.controller.settings.upright_segment``).

A move composes five named phases (Jolt ``CharacterVirtual::ExtendedUpdate``, Unreal
``UCharacterMovementComponent``, Quake ``PM_StepSlideMove``), each a method returning a
small named result:

1. ``follow_ground`` -> FollowGround: on walkable ground and not moving up, the horizontal
   part of the displacement is projected onto the ground plane keeping its horizontal length
   (Unreal ``ComputeGroundMovementDelta``); the downward part is dropped (the floor carries
   the character).
2. ``slide`` -> SlideResult (core.slide): collide-and-slide with exact capsule sweeps (seed
   003), at most ``settings.max_iterations`` sweeps. Each hit stops ``skin_width`` short of
   the surface (measured along the contact normal; each sweep looks ``skin_width`` past the
   move's end, so a move never ends inside the skin of what lies ahead) and the rest is
   clipped against every plane met so far (core.planes.clip_slide). A sweep that starts
   penetrating triggers penetration recovery (``depenetrate``, core.planes.solve_planes).
3. ``step_up`` -> StepUp: when grounded and blocked by a non-walkable obstacle the input
   pushes into (within 75 degrees), the step probe (core.steps) measures riser and tread;
   if climbable, sweep up ``step_height`` (minus the current floor gap), forward by the
   missing distance, then down; accepted only when the landing supports the character.
   A refused step-up is remembered (``RefusedStep``) and not retried while the character
   starts and ends its slide in the same place against the same triangle (a character
   blocked by a wall costs about two mesh calls a frame, not five).
4. ``stick_to_floor`` -> Floor: the ground probe where the slide's speculative one is not
   valid; when the move started on ground and was not moving up, a downward probe of
   ``snap_distance`` puts the character back on the floor (stairs and slopes going down
   stay grounded every frame).
5. ``classify_ground`` (core.ground) -> Ground: ``on_ground`` / ``on_steep_ground`` /
   ``in_air`` from the probe, and from every nearby contact at edges and steep faces; the
   ``"jolt"`` model also stands on a walkable face's edge whose contact plane a slide on
   steep ground reached (``edge_plane_support``, as Jolt's planes do).

Every mesh query of a phase is one batched call for all characters moving together
(``walkthrough_many``); the single-character ``move`` is the same code with a batch of one.
The common case (walking on open ground) costs one mesh call per move: the slide sweep and
the ground probe at its end point are issued together and the probe is used when the sweep
hits nothing; a character moving parallel to the face it stands on, staying inside that
triangle, needs no probe at all (same-face shortcut).

Guarantee: a move never ends with the capsule penetrating the mesh deeper than
``skin_width`` (it normally ends clear, ``skin_width`` away from what it touched).
"""

from __future__ import annotations

import numpy as np

from ..constants import (
    CONTROLLER_MIN_MOVE,
    MIN_APPROACH_COS,
    MIN_UP_COS,
    RAPIER_SHORT_STRIDE,
    STEP_FORWARD_MIN_COS,
    STEP_PROBE_OFFSET,
    STEP_RETRY_MOVE,
    STEP_RISE_TOL,
    SUPPORT_MIN_COS,
)
from ..geometry.shapes import Capsule
from ..geometry.validate import as_point
from .ground import Ground, Probe, classify_ground, edge_plane_support, inside_triangles
from .moves import (
    Climb,
    Floor,
    FollowGround,
    MoveBatch,
    MoveResult,
    RefusedStep,
    StepUp,
)
from .planes import dot_rows, unit_rows
from .recovery import Depenetration, depenetrate
from .settings import (
    GROUND_STATES,
    IN_AIR,
    ON_GROUND,
    ON_STEEP_GROUND,
    ControllerSettings,
    GroundState,
    upright_segment,
)
from .slide import Block, SlideResult, slide
from .steps import climbable, probe_from_hits, step_rays

__all__ = ["CharacterController", "ControllerSettings", "GroundState", "MoveResult",
           "GROUND_STATES", "ON_GROUND", "ON_STEEP_GROUND", "IN_AIR"]


def batch_sweeper(mesh):
    """The mesh's unvalidated batched sweep ``(a, b, r, v, hood=None, owner=None, want=None)
    -> SweepBatch`` (the controller builds its arrays itself), or None for other meshes."""
    return getattr(mesh, "sweep_batch", None)


class CharacterController:
    """A capsule character moving through a ``TriangleMesh`` (static level geometry).

    mesh : core.mesh.TriangleMesh (collision is two-sided: back faces collide too)
    settings : ControllerSettings (defaults if None)

    ``move(position, displacement)`` is stateless for the caller: the ground state at the
    start of a move is the one the previous move ended with at that exact position (cached),
    or is probed. ``move_many`` moves N characters in lock-step (the walk-through's entry).
    ``mesh_calls`` counts the batched mesh queries issued (benchmarks and tests).
    """

    def __init__(self, mesh, settings: ControllerSettings | None = None):
        self.mesh = mesh
        self.settings = settings if settings is not None else ControllerSettings()
        s = self.settings
        self.up = s.up_vector
        self._lower, self._upper = s.segment_offsets
        self.cos_slope = s.cos_max_slope
        self.probe = s.ground_probe
        # the model's mechanics (core.settings: equal to radius, skin_width, step_height and
        # SUPPORT_MIN_COS for the "exact" model)
        self.shape_radius = s.shape_radius
        self.gap = s.contact_gap
        self.support_cos = s.support_min_cos
        self.climb_height = s.climb_height
        # metres each sweep of a move looks past its end (core.slide): the exact model's skin,
        # so that no move ends inside it (issue 24). An engine model keeps its padding inside
        # ``shape_radius`` and stops its 1 mm contact gap short: it looks no further (a 1 mm
        # look-ahead only moved float ties, e.g. which face of an edge a sweep reports)
        self.look_ahead = s.skin_width if s.exact else 0.0
        # Rapier autosteps on any wall it hits, also in the air (then onto an edge no higher
        # than its bottom sphere's centre: measured, tools/bench_engines.py gap lanes)
        self.steps_in_air = s.model == "rapier"
        self._cache: dict[bytes, tuple] = {}
        self._constant_rows: dict[int, tuple] = {}
        self._sweep_batch = batch_sweeper(mesh)
        self._radii = np.full(1, s.shape_radius)  # read-only, grown on demand (sweep)
        self._radii.setflags(write=False)
        self.mesh_calls = 0
        # walkthrough_many keeps candidate triangles per character across frames
        # (core.hoods.HoodCache); False: every sweep queries the hierarchy (tests compare)
        self.use_hoods = True
        self._hood = None  # Hood of the batch being moved (move_many with hoods)
        self._hood_rows = None  # its owner row per batch row

    # ------------------------------------------------------------------ public
    def capsule_at(self, foot) -> Capsule:
        """The character's capsule with its lowest point at ``foot`` (3,)."""
        a, b = upright_segment(as_point(foot, "foot"), self.settings)
        return Capsule(a, b, self.settings.radius)

    def move(self, position, displacement) -> MoveResult:
        """Move the character whose foot is at ``position`` (3,) by ``displacement`` (3,) m.

        Returns a MoveResult (see the module docstring for the phases).
        """
        p = as_point(position, "position")
        d = as_point(displacement, "displacement")
        start = self._cache.get(p.tobytes())
        settled = 0.0
        if start is None:
            b = self.move_many(p[None], np.zeros((1, 3)), Ground.unknown(1))
            start = (b.position[0].copy(), b.ground.rows(slice(0, 1)))
            settled = float(b.depenetration[0])
        p, ground0 = start
        return self._result(self.move_many(p[None], d[None], ground0, log_hits=True), settled)

    def ground(self, position) -> MoveResult:
        """Ground state at ``position`` without moving (penetration is still resolved)."""
        return self.move(position, np.zeros(3))

    def _result(self, b: MoveBatch, settled: float) -> MoveResult:
        pos = b.position[0].copy()
        g = b.ground
        st = int(g.state[0])
        if len(self._cache) > 256:
            self._cache.clear()
        self._cache[pos.tobytes()] = (pos, Ground(*(x[:1].copy() for x in g)))
        return MoveResult(
            pos, st == ON_GROUND, GroundState.from_code(st), g.normal[0].copy(),
            [h for _, h in b.hits], bool(b.stepped[0]), int(b.iterations[0]),
            int(g.triangle[0]), float(g.gap[0]), float(b.depenetration[0]) + settled,
        )

    def constant_rows(self, n: int) -> tuple:
        """Read-only (N,) rows shared by the moves of N characters that measure nothing:
        (False, nan, nan, Block of no obstacle) (the common frame allocates none of them)."""
        rows = self._constant_rows.get(n)
        if rows is None:
            rows = (np.zeros(n, bool), np.full(n, np.nan), np.full(n, np.nan),
                    Block(np.full(n, np.inf), np.zeros((n, 3)), np.zeros((n, 3)),
                          np.full(n, -1, np.int64)))
            for x in (*rows[:3], *rows[3]):
                x.setflags(write=False)
            self._constant_rows[n] = rows
        return rows

    # ------------------------------------------------------------------ counted mesh queries
    def sweep(self, feet, disp, rows=None, want=None):
        """One batched mesh sweep of the characters at ``feet`` (Q, 3) by ``disp`` (Q, 3)
        -> SweepBatch. ``rows`` (Q,): the batch rows of the characters swept, for the hood
        cache; ``want`` (Q,) bool: queries whose normal and point matter when they start
        penetrating."""
        self.mesh_calls += 1
        a, b = feet + self._lower, feet + self._upper
        if self._sweep_batch is None:
            return self.mesh.sweep_capsule_many(a, b, self.shape_radius, disp)
        q = feet.shape[0]  # arrays are built here: skip re-validation
        if self._radii.size < q:
            self._radii = np.full(max(q, 2 * self._radii.size), self.shape_radius)
            self._radii.setflags(write=False)
        if self._hood is not None and rows is not None:
            return self._sweep_batch(a, b, self._radii[:q], disp, self._hood,
                                     self._hood_rows[rows], want)
        return self._sweep_batch(a, b, self._radii[:q], disp, want=want)

    def contacts(self, feet, radius):
        """All contacts (ContactBatch) of the capsules at ``feet`` (K, 3), grown to ``radius``."""
        self.mesh_calls += 1
        return self.mesh.capsule_contacts_many(feet + self._lower, feet + self._upper, radius)

    def raycast(self, origins, directions, max_distance):
        """First hits (SweepBatch) of rays ``origins``, ``directions`` (R, 3)."""
        self.mesh_calls += 1
        return self.mesh.raycast_many(origins, directions, max_distance)

    # ------------------------------------------------------------------ lock-step move
    def move_many(self, feet, disp, start: Ground, log_hits=False, hoods=None,
                  refused: RefusedStep | None = None) -> MoveBatch:
        """Lock-step move of N characters: feet (N, 3) by displacements disp (N, 3), starting
        on ``start`` (the Ground their previous move ended on, or ``Ground.unknown``).
        ``hoods``: (HoodCache, batch rows (N,)) to take sweep candidates from cached regions;
        ``refused``: the previous move's ``MoveBatch.refused`` (step-ups not to retry).
        """
        if hoods is None or self._sweep_batch is None:
            return self._move(feet, disp, start, log_hits, refused)
        cache, agents = hoods
        self._hood = cache.hood(agents, *self.reach_box(feet, disp, start.normal))
        self._hood_rows = agents
        try:
            return self._move(feet, disp, start, log_hits, refused)
        finally:
            self._hood = self._hood_rows = None

    def _move(self, feet, disp, start: Ground, log_hits, refused) -> MoveBatch:
        fg = self.follow_ground(disp, start)
        slid = slide(self, feet, fg, start, log_hits,
                     None if refused is None else refused.triangle >= 0)
        st = self.step_up(feet, fg, start, slid, refused)
        fl = self.stick_to_floor(st.feet, st.probe, fg.snap_ok, st.stepped, slid.trapped)
        cl = classify_ground(self, fl.feet, fl.probe,
                             None if self.settings.exact else slid.block.triangle >= 0)
        if self.settings.model == "jolt":
            cl = edge_plane_support(self, feet, cl.feet, start, cl.ground)
        return MoveBatch(cl.feet, cl.ground, st.stepped, slid.iterations,
                         slid.depenetration + fl.depenetration, slid.block, st.riser, st.tread,
                         slid.hits, st.refused)

    def follow_ground(self, d, start: Ground) -> FollowGround:
        """Phase 1: project the horizontal step onto the ground plane (keeping its horizontal
        length) for characters on walkable ground not moving up."""
        u = self.up
        d_up = d @ u
        dh = d - d_up[:, None] * u
        dir_h, dh_len = unit_rows(dh)
        follow = (start.state == ON_GROUND) & (d_up <= 0.0)
        dd = d.copy()
        if follow.any():
            n0 = start.normal[follow]
            nu = n0 @ u
            safe_nu = np.where(nu > MIN_UP_COS, nu, 1.0)
            dh_f = dh[follow]
            dd[follow] = dh_f - (dot_rows(n0, dh_f) / safe_nu)[:, None] * u
        snap_ok = follow & (self.settings.snap_distance > self.probe)
        return FollowGround(dd, dir_h, dh_len, follow, snap_ok)

    def same_face(self, fg: FollowGround, start: Ground, active) -> np.ndarray:
        """(N,) bool: characters resting on a face interior that move parallel to that face
        with their support point staying inside the triangle. They keep the same gap to the
        face; if their sweep hits nothing they need no ground probe (the reported floor is
        that face even if some other surface came equally close)."""
        same = np.zeros(active.shape[0], bool)
        coh = fg.follow & active & start.interior & (start.triangle >= 0) & (
            start.gap <= self.probe)
        if coh.any():
            c = coh.nonzero()[0]
            same[c[inside_triangles(self.mesh, start.point[c] + fg.displacement[c],
                                    start.triangle[c])]] = True
        return same

    def step_up(self, feet0, fg: FollowGround, start: Ground, slid: SlideResult,
                refused: RefusedStep | None = None) -> StepUp:
        """Phase 3: grounded characters blocked by an obstacle they push into climb it when
        the step probe finds it climbable and the up, forward, down sweeps land on support.
        A step refused at the same triangle and place (``refused``) is not tried again."""
        n = feet0.shape[0]
        if not slid.blocked or self.settings.step_height <= 0.0:
            # block.triangle is -1 everywhere without a hit: nothing measured or stepped
            stepped0, riser0, tread0 = self.constant_rows(n)[:3]
            return StepUp(slid.feet, stepped0, riser0, tread0, slid.probe)
        riser = np.full(n, np.nan)
        tread = np.full(n, np.nan)
        stepped = np.zeros(n, bool)
        out = StepUp(slid.feet, stepped, riser, tread, slid.probe)
        blk = slid.block
        missing = fg.length - dot_rows(slid.feet - feet0, fg.direction)
        walking = fg.follow | self.steps_in_air
        cand = (walking & (blk.triangle >= 0) & (blk.score <= -STEP_FORWARD_MIN_COS)
                & (missing > CONTROLLER_MIN_MOVE))
        if not cand.any():
            return out
        rows = cand.nonzero()[0]
        # height of the foot above the supporting contact (negative when the rounded
        # bottom dips below a stair nosing it rests on), and the floor the probe measures from
        foot_above = np.where(np.isfinite(start.floor), feet0 @ self.up - start.floor, 0.0)
        floor = np.full(n, np.nan)
        floor[rows] = feet0[rows] @ self.up - foot_above[rows]
        again = self._refused_again(rows, feet0, slid, floor, refused)
        if again.size and refused is not None:  # the same refusal: its measurements, no query
            riser[again] = refused.riser[again]
            tread[again] = refused.tread[again]
            rows = rows[~np.isin(rows, again)]
        climb = self._try_steps(rows, feet0, fg, slid, floor, foot_above, riser, tread)
        feet, probe = slid.feet, slid.probe
        if climb is not None:
            feet = slid.feet.copy()
            feet[climb.rows] = climb.feet
            stepped[climb.rows] = True
            probe = slid.probe.with_rows(climb.rows, climb.gap, climb.normal, climb.triangle,
                                         climb.point)
        no = (cand & ~stepped).nonzero()[0]  # refused: remembered
        memo = RefusedStep.none(n)
        for dst, src in zip(memo, (blk.triangle, feet0, slid.feet, floor, riser, tread)):
            dst[no] = src[no]
        return StepUp(feet, stepped, riser, tread, probe, memo)

    @staticmethod
    def _refused_again(rows, feet0, slid: SlideResult, floor, refused: RefusedStep | None):
        """The candidates ``rows`` repeating a refused step-up: pushing into the same
        triangle from the same floor, starting and ending their slide where they did then
        (within STEP_RETRY_MOVE)."""
        if refused is None:
            return rows[:0]
        same = (refused.triangle[rows] == slid.block.triangle[rows]) & (
            np.abs(refused.floor[rows] - floor[rows]) <= STEP_RETRY_MOVE)
        if not same.any():
            return rows[:0]
        r = rows[same]
        d0 = feet0[r] - refused.start[r]
        d1 = slid.feet[r] - refused.foot[r]
        tol2 = STEP_RETRY_MOVE * STEP_RETRY_MOVE
        return r[(dot_rows(d0, d0) <= tol2) & (dot_rows(d1, d1) <= tol2)]

    def _try_steps(self, rows, feet0, fg, slid, floor, foot_above, riser, tread):
        """Measure the steps of candidates ``rows`` (filling riser, tread) and climb those
        the step probe finds climbable (-> Climb or None)."""
        if not rows.size:
            return None
        rays = step_rays(floor[rows], slid.block.point[rows], fg.direction[rows],
                         self.settings)
        sp = probe_from_hits(self.mesh, self.raycast(*rays[:3]), self.settings)
        riser[rows] = sp.riser
        tread[rows] = sp.tread
        missing = fg.length - dot_rows(slid.feet - feet0, fg.direction)
        ok = climbable(sp, self.settings)
        walked = fg.follow[rows]
        # a short stride's climb is the walking character's (Rapier's edge stall on the
        # ground); off the ground: an edge the autostep's room test clears from where the
        # fall met the obstacle (Rapier's room test runs from its hit, before the rest of the
        # frame's fall slides it down the wall: issue 26)
        ok &= ~walked | (sp.riser <= self.settings.stride_climb(fg.length[rows]) + STEP_RISE_TOL)
        if self.steps_in_air:
            rise = sp.riser + floor[rows] - self._met_at(rows, feet0, fg, slid)
            ok &= walked | (rise <= self.settings.air_climb_height + STEP_RISE_TOL)
            ok &= ~self._creep_stalls(rows, ok & walked, floor, slid, fg, sp.riser)
        return self._climb(rows[ok], feet0, slid.feet,
                           fg.direction, missing, foot_above)

    def _met_at(self, rows, feet0, fg: FollowGround, slid: SlideResult) -> np.ndarray:
        """(K,) height along up of the foot of the characters ``rows`` where their move met
        the obstacle it is blocked by: the move's fall up to the fraction of its walk made
        (a fall against a wall slides down it for the rest of the frame, walking no
        further), and the contact gap further (the engine's cast stops at its padding, the
        model's that gap short of it)."""
        u = self.up
        length = fg.length[rows]
        made = dot_rows(slid.feet[rows] - feet0[rows], fg.direction[rows]) + self.gap
        frac = np.clip(made / np.where(length > 0.0, length, 1.0), 0.0, 1.0)
        return feet0[rows] @ u + frac * (fg.displacement[rows] @ u)

    def _creep_stalls(self, rows, check, floor, slid, fg, rise) -> np.ndarray:
        """(K,) bool: of the step candidates ``rows`` (K,), those ``check`` says to test,
        the risers ``rise`` (K,) m whose edge the Rapier model creeps up and stalls on at a
        short stride (``ControllerSettings.creep_stalls``): the next riser's face is found
        by one horizontal ray along the walk just above the riser's top."""
        s = self.settings
        need = check & (fg.length[rows] <= RAPIER_SHORT_STRIDE) & np.isfinite(rise)
        out = np.zeros(rows.size, bool)
        if not need.any():
            return out
        r = rows[need]
        u = self.up
        d = fg.direction[r]
        p = slid.block.point[r]
        above = floor[r] + rise[need] + STEP_PROBE_OFFSET
        origins = p - np.outer(p @ u - above, u) + d * STEP_PROBE_OFFSET
        hit = self.raycast(origins, d, s.creep_probe_length)
        run = np.where(np.isfinite(hit.time), hit.time + STEP_PROBE_OFFSET, np.inf)
        out[need] = s.creep_stalls(rise[need], run, fg.length[r])
        return out

    def _climb(self, S, feet0, cur, dir_h, missing, foot_above) -> Climb | None:
        """The up, forward and down sweeps of a step-up for characters S. Each stage only
        sweeps the characters that can still succeed."""
        u = self.up
        skin = self.gap
        if not S.size:
            return None
        up_len = np.maximum(self.climb_height - foot_above[S] - (cur[S] - feet0[S]) @ u, 0.0)
        keep = up_len > CONTROLLER_MIN_MOVE  # gained <= up_len
        S, up_len = S[keep], up_len[keep]
        if not S.size:
            return None
        t1 = self.sweep(cur[S], up_len[:, None] * u, S).time
        gained = np.where(np.isinf(t1), up_len, np.maximum(t1 * up_len - skin, 0.0))
        keep = gained > CONTROLLER_MIN_MOVE
        S, gained = S[keep], gained[keep]
        if not S.size:
            return None
        raised = cur[S] + gained[:, None] * u
        dS = dir_h[S]
        fwd = np.maximum(missing[S], skin)
        ahead = fwd + self.look_ahead  # looks as far past its end as the slide does
        r2 = self.sweep(raised, dS * ahead[:, None], S)
        t2 = r2.time
        approach = np.maximum(-dot_rows(dS, r2.normal), MIN_APPROACH_COS)
        adv = np.where(np.isinf(t2), fwd,
                       np.clip(t2 * ahead - skin / approach, 0.0, fwd))
        keep = (adv > CONTROLLER_MIN_MOVE) & (t2 > 0.0)
        S, gained = S[keep], gained[keep]
        if not S.size:
            return None
        moved = raised[keep] + dS[keep] * adv[keep, None]
        down_len = gained + self.probe
        r3 = self.sweep(moved, down_len[:, None] * -u, S)
        t3 = r3.time
        ok = np.isfinite(t3) & (t3 > 0.0) & (r3.normal @ u > self.support_cos)
        drop = np.where(np.isfinite(t3), t3 * down_len, 0.0)
        back = np.minimum(skin, drop)
        land = moved - (drop - back)[:, None] * u
        ok &= (land - feet0[S]) @ u > -self.probe  # a step never ends lower than it started
        if not ok.any():
            return None
        return Climb(S[ok], land[ok], back[ok], r3.normal[ok], r3.triangle[ok], r3.point[ok])

    def stick_to_floor(self, feet, probe: Probe, snap_ok, stepped, trapped) -> Floor:
        """Phase 4: probe the ground where the slide's speculative probe is not valid (slid,
        recovered), reaching ``snap_distance`` for characters that may stick to the floor;
        probes starting in contact recover and probe again; then snap down to the floor
        found within reach (stopping ``skin_width`` above it)."""
        s = self.settings
        u = self.up
        depen = np.zeros(feet.shape[0])
        reach = max(s.snap_distance, self.probe)
        snap_len = None
        snap_ok_now = snap_ok & ~stepped
        need_m = ~probe.valid | (snap_ok_now & (probe.time > self.probe))
        if need_m.any():
            snap_len = np.where(snap_ok, reach, self.probe)
            need = need_m.nonzero()[0]
            res = self.sweep(feet[need], snap_len[need, None] * -u, need)
            probe = probe.with_sweep(need, res, slice(0, need.size), snap_len[need])
        zero_m = probe.valid & (probe.time == 0.0) & (probe.triangle >= 0) & ~trapped
        if zero_m.any():  # probes starting in contact (time 0): recover and probe again
            if snap_len is None:
                snap_len = np.where(snap_ok, reach, self.probe)
            zero = zero_m.nonzero()[0]
            dp = self.depenetrate(feet[zero])
            feet = feet.copy()
            feet[zero] = dp.feet
            depen[zero] += dp.pushed
            res = self.sweep(feet[zero], snap_len[zero, None] * -u, zero)
            probe = probe.with_sweep(zero, res, slice(0, zero.size), snap_len[zero])
        if not snap_ok_now.any():
            return Floor(feet, probe, depen)
        # snap: a floor beyond the probe distance but within the snap distance
        hit = (probe.triangle >= 0) & np.isfinite(probe.time)
        snap = hit & (probe.time > self.probe) & snap_ok_now & (probe.time <= reach) & (
            probe.normal @ u > self.support_cos)
        if snap.any():
            sn = snap.nonzero()[0]
            gap = probe.time[sn]
            back = np.minimum(self.gap, gap)
            feet = feet.copy()
            feet[sn] -= np.outer(gap - back, u)
            time = probe.time.copy()
            time[sn] = back
            probe = Probe(time, probe.normal, probe.triangle, probe.point, probe.valid)
        return Floor(feet, probe, depen)

    # ------------------------------------------------------------------ recovery
    def depenetrate(self, pos) -> Depenetration:
        """Push capsules at feet ``pos`` (K, 3) out of the mesh (core.recovery.depenetrate)."""
        return depenetrate(self, pos)

    def reach_box(self, f0, d, normal0):
        """Box (lo, hi (N, 3)) around what a move of feet f0 by d can sweep this frame: the
        capsule at f0 grown by the ground-following step's length plus the skin and probe,
        and along up by the step height (up) and the snap or step-down probe (down). Only
        sizes the hood cache's regions: a sweep reaching outside falls back to the BVH."""
        s = self.settings
        u = self.up
        a = f0 + self._lower
        b = f0 + self._upper
        d_up = d @ u
        dh = d - d_up[:, None] * u
        nu = np.maximum(normal0 @ u, SUPPORT_MIN_COS)  # sizes regions only
        # ground-following length: |dh| / cos(slope) bounds |dd| on walkable ground
        reach = (np.sqrt(dot_rows(d, d)) + np.sqrt(dot_rows(dh, dh)) / nu + self.gap
                 + self.probe + self.shape_radius)
        au = np.abs(u)
        down = max(s.snap_distance, self.probe) + self.climb_height + self.gap
        lo = np.minimum(a, b) - reach[:, None] - down * au
        hi = np.maximum(a, b) + reach[:, None] + (self.climb_height + self.gap) * au
        return lo, hi
