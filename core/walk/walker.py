"""The lock-step walker behind ``walkthrough_many``: N characters steered along their paths,
one controller ``move_many`` per frame, verdicts named as they happen (core.walk.events).

Frame and units: world space, metres, seconds; ``settings.up`` is up.
"""

from __future__ import annotations

import numpy as np

from ..constants import (
    BLOCKED_PROGRESS_FRACTION,
    BLOCKED_SECONDS,
    FALL_OUT_OF_WORLD,
    MIN_WANTED_STEP,
    STEP_RETRY_MOVE,
    STUCK_MIN_PROGRESS,
    STUCK_SECONDS,
    TIME_TOL,
    WALK_TIME_SLACK,
)
from ..controller.ground import Ground
from ..controller.moves import RefusedStep
from ..controller.settings import IN_AIR, ON_GROUND, ON_STEEP_GROUND, upright_segment
from ..controller.steps import exceeds_step
from ..mesh.hoods import HoodCache
from .edges import (
    FrameMove,
    held,
    next_hover,
    predicted_ground,
    pushed_off,
    rapier_edge_ride,
    start_hover,
)
from .events import EventLog, classify_blocked
from .report import EVENT_KINDS, WalkReport

# Metres. An airborne character more than step_height below its last floor, with no floor
# within this distance straight below (a capsule sweep down), has fallen out of the level:
# ``fell_out_of_level`` ends its walk. Beyond any fall a level designer means a character to
# survive (a 100 m drop lands at ~44 m/s), and short enough to stay one cheap sweep.
FALL_OUT_OF_LEVEL_DISTANCE = 100.0


def default_max_time_many(length, speed):
    """Seconds: 3 x path length / speed + WALK_TIME_SLACK (length in metres, speed m/s)."""
    return 3.0 * np.asarray(length, float) / speed + WALK_TIME_SLACK


def horizontal_length(v, u):
    """(...,) horizontal lengths of vectors v (..., 3) with unit up u (3,)."""
    vh = v - (v @ u)[..., None] * u
    return np.sqrt((vh * vh).sum(-1))


def goal_floors(mesh, goals, settings) -> np.ndarray:
    """(N,) height along up of the floor each goal (N, 3) marks, nan where it marks none.

    A goal's floor is the walkable face a ray straight down from ``step_height`` (at least
    the ground probe) above the goal meets within twice that distance, where the character
    fits standing on it: a goal placed on a floor, or up to a step above it. A goal inside a
    solid, floating higher, or over nothing walkable marks no floor; its walk is then
    reached by the horizontal rule alone. Two uncounted mesh queries (a ray, contacts)."""
    s = settings
    u = s.up_vector
    lift = max(s.step_height, s.ground_probe)
    hits = mesh.raycast_many(goals + lift * u, np.tile(-u, (goals.shape[0], 1)), 2.0 * lift)
    tri = np.maximum(hits.triangle, 0)
    face_up = mesh.normals[tri] @ u
    ok = (hits.triangle >= 0) & np.isfinite(hits.time) & (face_up >= s.cos_max_slope)
    floor = np.where(ok, goals @ u + lift - np.where(ok, hits.time, 0.0), np.nan)
    rows = ok.nonzero()[0]
    if rows.size:  # the character must fit standing there (not inside stacked solids)
        feet = goals[rows] + np.outer(floor[rows] - goals[rows] @ u + s.ground_probe, u)
        a, b = upright_segment(feet, s)
        cb = mesh.capsule_contacts_many(a, b, s.radius)
        floor[rows[np.unique(cb.query)]] = np.nan
    return floor


def into_steep(ground, dirh, want, u) -> np.ndarray:
    """(K,) bool: characters on steep ground walking (``want`` (K,) m > 0 along ``dirh``
    (K, 3)) into the slope, against its horizontal normal. The ``"rapier"`` model drops
    their frame's gravity: Rapier's slope handling keeps, of a move into a slope too steep
    to climb, the part along the slope's horizontal tangent and the part into it, not the
    vertical input (rapier3d walking up 50-70 deg slopes stays on them, creeping up 0.01-0.2
    m in 5 s: tools/bench_engines.py ``lips`` lanes, issue 26)."""
    n = ground.normal
    into = np.einsum("ij,ij->i", dirh, n - np.outer(n @ u, u)) < 0.0
    return (ground.state == ON_STEEP_GROUND) & (want > 0.0) & into


class Walker:
    """Lock-step walk of N characters (``walkthrough_many`` validates the arguments).

    ctrl : CharacterController; paths : list of (K_i, 3) foot waypoints; speed : m/s;
    dt : seconds per frame; max_time : (N,) seconds or None (the default per path);
    stop_early : end a walk when it reaches its goal or is stuck (False: every walk runs its
    whole max_time, see ``walkthrough_many``).
    """

    def __init__(self, ctrl, paths, speed, dt, max_time, stop_early=True):
        self.ctrl = ctrl
        self.stop_early = stop_early
        s = self.s = ctrl.settings
        self.u = s.up_vector
        self.speed = speed
        self.dt = dt
        n = self.n = len(paths)
        kmax = max(len(p) for p in paths)
        self.P = np.zeros((n, kmax, 3))
        self.last = np.array([len(p) - 1 for p in paths])
        for i, p in enumerate(paths):
            self.P[i, :len(p)] = p
            self.P[i, len(p):] = p[-1]
        seg_len = np.sqrt(((self.P[:, 1:] - self.P[:, :-1]) ** 2).sum(-1))  # (n, kmax-1)
        # remaining path length after waypoint k (horizontal)
        segh = horizontal_length(self.P[:, 1:] - self.P[:, :-1], self.u)
        tail = np.zeros((n, kmax))
        if kmax > 1:
            tail[:, :-1] = np.cumsum(segh[:, ::-1], axis=1)[:, ::-1]
        self.tail = tail
        # per waypoint k: the previous waypoint and the horizontal segment arriving at k
        # (constant along the walk; the waypoint advance reads them every frame)
        prev = self.P[:, np.maximum(np.arange(kmax) - 1, 0)]
        seg = (self.P - prev).reshape(-1, 3)
        seg_h = seg - (seg @ self.u)[:, None] * self.u
        self.prev = prev
        self.seg_h = seg_h.reshape(n, kmax, 3)
        self.seg_l2 = np.einsum("ij,ij->i", seg_h, seg_h).reshape(n, kmax)
        mt = default_max_time_many(seg_len.sum(1), speed) if max_time is None else max_time
        self.max_time = mt
        self.max_steps = np.ceil(mt / dt - TIME_TOL).astype(np.int64)
        lo, hi = ctrl.mesh.aabb
        corners = np.array([[x, y, z] for x in (lo[0], hi[0]) for y in (lo[1], hi[1])
                            for z in (lo[2], hi[2])])
        self.kill_h = float((corners @ self.u).min()) - FALL_OUT_OF_WORLD
        self.log = EventLog(n, s.radius, self.u)
        self.goal_floor = goal_floors(ctrl.mesh, self.P[np.arange(n), self.last], s)

    # ------------------------------------------------------------------ the walk
    def run(self) -> list:
        """Walk every character to its end; one WalkReport per path, in order."""
        self._settle()
        step = 0
        while True:
            act = self._still_walking(step)
            if not act.size:
                break
            self._frame(act, step)
            step += 1
        return self._reports()

    def _settle(self):
        """Settle every character at its path's first point (the trace's first frame)."""
        n = self.n
        ctrl = self.ctrl
        # candidate triangles around each character, kept across frames (batches only)
        self.hoods = None
        if n > 1 and ctrl.use_hoods and hasattr(ctrl.mesh, "hood_triangles"):
            self.hoods = HoodCache(ctrl.mesh, n)
        b = ctrl.move_many(self.P[:, 0].copy(), np.zeros((n, 3)), Ground.unknown(n))
        self.pos = b.position.copy()
        self.ground = Ground(*(x.copy() for x in b.ground))
        # per-frame logs of the characters that moved (memory ~ frames actually walked)
        self.logs = [(np.arange(n), self.pos.copy(), self.ground.state.copy(),
                      self.ground.normal.copy(), np.zeros(n, bool))]
        self.n_steps = np.zeros(n, np.int64)
        self.vz = np.zeros(n)
        # height of the last floor stood on (the supporting contact, not the foot: a foot
        # perched on an edge dips below it)
        floor = self.ground.floor
        self.last_ground_h = np.where(np.isfinite(floor), floor, self.pos @ self.u)
        # the Rapier model: how far above its floor Rapier's foot stands (inside its offset
        # when set down on the floor; ControllerSettings.rises_through_offset)
        self.hover = start_hover(self.pos, self.P[:, 0], self.ground, self.s)
        self.k = np.minimum(1, self.last)
        self.best_rem = np.full(n, np.inf)
        self.t_best = np.zeros(n)
        self.done = np.zeros(n, bool)
        self.reached = np.zeros(n, bool)
        self.stuck_named = np.zeros(n, bool)
        self.blocked_since = np.full(n, np.nan)
        self.refused = RefusedStep.none(n)  # step-ups refused, not retried in place
        # blocking triangle and place of each character's last named blocked frame: a frame
        # blocked there again would name the same reason (an event not repeated in place)
        self.named_tri = np.full(n, -1, np.int64)
        self.named_at = np.zeros((n, 3))

    def _still_walking(self, step) -> np.ndarray:
        """End the walks that reached their goal, are stuck or ran out of time; returns the
        characters still walking."""
        t_now = step * self.dt
        act = (~self.done).nonzero()[0]
        if not act.size:
            return act
        sel = slice(None) if act.size == self.n else act
        self.k, reached_now, dist_goal = self._advance(act, sel)
        if not self.stop_early:  # the verdict is the last frame's; named when it begins
            reached_now, self.reached[act] = reached_now & ~self.reached[act], reached_now
        for i in act[reached_now]:
            self.log.emit(i, "reached_goal", t_now, self.pos[i], dist_goal[i], -1, force=True)
            self.reached[i] = True
            self.done[i] = self.stop_early
        # progress / stuck
        idx = np.arange(self.n)
        rem_path = horizontal_length(self.P[idx, self.k] - self.pos, self.u) + self.tail[
            idx, self.k]
        improved = rem_path < self.best_rem - STUCK_MIN_PROGRESS
        self.best_rem = np.where(improved, rem_path, self.best_rem)
        # a falling character is not stuck (it may hover over the goal while it falls)
        self.t_best = np.where(improved | (self.ground.state == IN_AIR), t_now, self.t_best)
        stuck = ~self.done & (t_now - self.t_best >= STUCK_SECONDS - TIME_TOL)
        if not self.stop_early:  # named once per spell without progress (standing on the
            stuck &= ~self.reached  # goal is not one), walked on
            stuck, self.stuck_named = stuck & ~self.stuck_named, stuck
        for i in stuck.nonzero()[0]:
            self.log.emit(i, "stuck", t_now, self.pos[i], t_now - self.t_best[i], -1,
                          force=True)
            self.done[i] = self.stop_early
        self.done |= self.n_steps >= self.max_steps  # timeout
        return (~self.done).nonzero()[0]

    def _advance(self, act, sel):
        """Advance the waypoint index k (N,) of the walking characters ``act`` (``sel`` the
        same rows as an index or a slice). Returns (k, reached (act,), goal distance (N,))."""
        u, r = self.u, self.s.radius
        k = self.k.copy()
        p_a = self.pos[sel]
        last = self.last[sel]
        for _ in range(self.P.shape[1]):
            k_a = k[sel]
            can = k_a < last
            if not can.any():
                break
            dh = horizontal_length(self.P[act, k_a] - p_a, u)
            seg_h = self.seg_h[act, k_a]
            sl2 = self.seg_l2[act, k_a]
            rel = p_a - self.prev[act, k_a]
            tproj = np.einsum("ij,ij->i", rel, seg_h) / np.where(sl2 > 0, sl2, 1.0)
            adv = can & ((dh <= r) | ((tproj >= 1.0) & (sl2 > 0)))
            if not adv.any():
                break
            k[act[adv]] += 1
        dist_goal = horizontal_length(self.P[act, last] - p_a, u)
        # the goal is reached standing on it: not flying over it, not sliding down a slope
        reached = (k[sel] == last) & (dist_goal <= r) & (self.ground.state[sel] == ON_GROUND)
        # ... and on the goal's own floor (not under a bridge deck the goal stands on)
        gf = self.goal_floor[act]
        s = self.s
        reached &= np.isnan(gf) | (np.abs(p_a @ u - gf) <= s.step_height + s.skin_width
                                   + s.ground_probe)
        dg = np.zeros(self.n)
        dg[act] = dist_goal
        return k, reached, dg

    def _frame(self, act, step):
        """One frame of the characters ``act``: steer, move, log, name what happened."""
        s, u, dt = self.s, self.u, self.dt
        sel = slice(None) if act.size == self.n else act
        p_a = self.pos[sel]
        k_a = self.k[sel]
        to = self.P[act, k_a] - p_a
        to_h = to - (to @ u)[:, None] * u
        dist = np.sqrt(np.einsum("ij,ij->i", to_h, to_h))
        dirh = to_h / np.where(dist > 0, dist, 1.0)[:, None]
        step_len = self.speed * dt
        want = np.where(k_a == self.last[sel], np.minimum(step_len, dist), step_len)
        g_a = self.ground.rows(sel)
        ride = rapier_edge_ride(self.ctrl, p_a, g_a, dirh, want, self.hover[sel])
        want = ride.want
        vz_a = np.where(g_a.state == ON_GROUND, -s.gravity * dt if s.pushes_into_floor else 0.0,
                        np.maximum(self.vz[sel] - s.gravity * dt, -s.max_fall_speed))
        if not s.slides_on_steep_ground:  # walking into a slope it cannot climb: held there
            vz_a = np.where(into_steep(g_a, dirh, want, u), 0.0, vz_a)
        # (a model that does not slide on steep ground keeps no falling speed there: its
        # speed restarts from 0 each frame, as on walkable ground, and gravity pulls it by
        # one frame's worth; see ControllerSettings.slides_on_steep_ground)
        disp = dirh * want[:, None] + (vz_a * dt)[:, None] * u
        b, rise = FrameMove(self.ctrl, self.hoods, act, dt).run(p_a, disp, g_a,
                                                              self.refused.rows(sel))
        self.refused.put(sel, b.refused)
        pushed_off(self.ctrl, b.position, g_a, b.ground, -vz_a * dt)
        moved = b.position - p_a
        held(self.ctrl, b.position, b.ground, -(moved @ u), -vz_a * dt)
        st = b.ground.state
        # vertical speed from the actual motion, never gaining upward speed from a step
        # (on steep ground the intended vertical speed is kept: its projection on the
        # slope gives the frictionless slide, g sin^2 vertically, at any frame rate)
        steep = vz_a if s.slides_on_steep_ground else 0.0
        # (a model that pushes into the floor carries that push into the air when it walks
        # off an edge, as its engine's character has already fallen by it)
        kept = np.maximum(vz_a, 0.0)
        if s.pushes_into_floor:
            kept = np.where(g_a.state == ON_GROUND, vz_a, kept)
        self.vz[sel] = np.where((st == ON_GROUND) | predicted_ground(self.ctrl, b.position, st),
                                0.0, np.where(st == ON_STEEP_GROUND, steep,
                                              np.minimum(rise, kept)))
        self.hover[sel] = next_hover(ride.hover, g_a, b.ground, b.stepped, s)
        self.pos[sel] = b.position
        self.ground.put(sel, b.ground)
        self.n_steps[sel] += 1
        self.logs.append((act, b.position.copy(), st, b.ground.normal, b.stepped))
        t_after = (step + 1) * dt
        out = self._falls(act, sel, b, t_after)
        progress = np.einsum("ij,ij->i", moved, dirh)
        blocked = (progress < BLOCKED_PROGRESS_FRACTION * want) & (want > MIN_WANTED_STEP) & (
            g_a.state != IN_AIR) & ~out
        since = self.blocked_since[sel]
        since = np.where(blocked, np.where(np.isnan(since), step * dt, since), np.nan)
        self.blocked_since[sel] = since
        blocked &= t_after - since >= BLOCKED_SECONDS - TIME_TOL
        if blocked.any():
            js = self._not_named_yet(act, blocked.nonzero()[0], b)
            if js.size:
                classify_blocked(self.ctrl, self.log, act, js, b, dirh, t_after)

    def _not_named_yet(self, act, js, b) -> np.ndarray:
        """The blocked frames js (indices into act) still to classify: not those blocked by
        the same triangle within STEP_RETRY_MOVE of where that was last classified (the same
        reason, which the event log would not repeat there)."""
        g = act[js]
        tri = b.block.triangle[js]
        d = b.position[js] - self.named_at[g]
        same = (tri >= 0) & (tri == self.named_tri[g]) & (
            b.ground.state[js] != ON_STEEP_GROUND) & (
            np.einsum("ij,ij->i", d, d) <= STEP_RETRY_MOVE * STEP_RETRY_MOVE)
        js = js[~same]
        self.named_tri[act[js]] = b.block.triangle[js]
        self.named_at[act[js]] = b.position[js]
        return js

    def _falls(self, act, sel, b, t_after) -> np.ndarray:
        """``fell`` events of this frame (landings far below the last floor) and falls out of
        the level (``fell`` with the drop so far, then ``fell_out_of_level``; the walk ends).
        Returns (act,) bool, fell out of the level."""
        u = self.u
        new = b.position
        h_new = new @ u
        # Drops are measured between walkable floors: resting on a ledge's edge or sliding
        # down a steep face is part of the fall, not a new floor (a walk off a 1.5 m tread
        # reports 1.5 m: tests/blender/test_levelcheck.py).
        supported = b.ground.state == ON_GROUND
        floor_new = np.where(supported & np.isfinite(b.ground.floor), b.ground.floor, h_new)
        lg = self.last_ground_h[sel]
        drop = lg - floor_new
        fell = supported & exceeds_step(drop, self.s)
        for j in fell.nonzero()[0]:
            self.log.emit(act[j], "fell", t_after, new[j], drop[j],
                          int(b.ground.triangle[j]), force=True)
        self.last_ground_h[sel] = np.where(supported, floor_new, lg)
        out = self._out_of_level(b, sel, h_new)
        for j in out.nonzero()[0]:
            i = act[j]
            drop_j = self.last_ground_h[i] - h_new[j]
            self.log.emit(i, "fell", t_after, new[j], drop_j, -1, force=True)
            self.log.emit(i, "fell_out_of_level", t_after, new[j], drop_j, -1, force=True)
            self.done[i] = True
        return out

    def _out_of_level(self, b, sel, h_new) -> np.ndarray:
        """(act,) bool: characters below the kill height (FALL_OUT_OF_WORLD under the mesh),
        or airborne more than step_height below their last floor with no floor within
        FALL_OUT_OF_LEVEL_DISTANCE straight below (one batched sweep)."""
        out = h_new < self.kill_h
        falling = (b.ground.state == IN_AIR) & ~out & (
            exceeds_step(self.last_ground_h[sel] - h_new, self.s))
        if falling.any():
            jf = falling.nonzero()[0]
            down = np.tile(-FALL_OUT_OF_LEVEL_DISTANCE * self.u, (jf.size, 1))
            below = self.ctrl.sweep(b.position[jf], down)
            out[jf[np.isinf(below.time)]] = True
        return out

    def _reports(self) -> list:
        """One WalkReport per character from the per-frame logs (an airborne end below the
        last ground is a ``fell``)."""
        n, u, dt, s = self.n, self.u, self.dt, self.s
        ids = np.concatenate([x[0] for x in self.logs])
        order = np.argsort(ids, kind="stable")  # per agent, in frame order
        cuts = np.cumsum(np.bincount(ids, minlength=n))[:-1]
        tr_all, st_all, nm_all, sp_all = (
            np.split(np.concatenate([x[c] for x in self.logs])[order], cuts)
            for c in range(1, 5))
        reports = []
        for i in range(n):
            ns = int(self.n_steps[i])
            h = self.pos[i] @ u
            events = self.log.events[i]
            if self.ground.state[i] == IN_AIR and exceeds_step(self.last_ground_h[i] - h, s) \
                    and not any(e.kind == "fell" and e.triangle == -1 and e.time == ns * dt
                                for e in events):
                self.log.emit(i, "fell", ns * dt, self.pos[i], self.last_ground_h[i] - h, -1,
                              force=True)
            ev = sorted(events, key=lambda e: (e.time, EVENT_KINDS.index(e.kind)))
            reports.append(WalkReport(
                trace=tr_all[i], grounded=st_all[i] == ON_GROUND,
                events=ev, reached_goal=bool(self.reached[i]),
                ground_normal=nm_all[i], ground_state=st_all[i].astype(np.int8),
                dt=dt, duration=ns * dt, stepped=sp_all[i],
                ended_airborne=bool(self.ground.state[i] == IN_AIR)))
        return reports
