"""Kinematic capsule character controller: collide-and-slide, ground state, step-up, snap.

Frame and units: world space, metres, seconds, degrees; ``settings.up`` is up (default +Z).
The character's position is its *foot*: the lowest point of the upright capsule
(``Capsule.upright(foot, height, radius, up)``).

A move runs in named phases (Jolt ``CharacterVirtual::ExtendedUpdate``, Unreal
``UCharacterMovementComponent``, Quake ``PM_StepSlideMove``):

1. **follow ground**: on walkable ground and not moving up, the horizontal part of the
   displacement is projected onto the ground plane keeping its horizontal length (Unreal
   ``ComputeGroundMovementDelta``); the downward part is dropped (the floor carries the
   character).
2. **slide**: collide-and-slide with exact capsule sweeps (seed 003), at most
   ``settings.max_iterations`` sweeps. Each hit stops ``skin_width`` short of the surface
   (measured along the contact normal) and the rest of the displacement is clipped against
   every plane met so far (creases between two planes, Quake ``PM_SlideMove``). A hit on an
   upward-facing slope steeper than ``max_slope_deg`` acts as a vertical wall for any motion
   that would climb it (Jolt ``CancelVelocityTowardsSteepSlopes``). A sweep that starts
   penetrating triggers penetration recovery (a plane solver over the deepest contacts).
3. **step up**: when grounded and blocked by a non-walkable obstacle the input pushes into
   (within 75 degrees), sweep up ``step_height`` (minus the current floor gap), forward by the
   missing distance, then down; accepted only when the landing supports the character and a
   ray ``min_step_depth`` past the obstacle finds walkable ground at most ``step_height``
   above the floor (the tread test: a 0.05 m "no stairs" flight is refused).
4. **stick to floor**: when the move started on ground and was not moving up, a downward
   sweep of ``snap_distance`` puts the character back on the floor (stairs and slopes going
   down stay grounded every frame).
5. **ground state**: from the downward probe, and when the probe touches an edge or a steep
   face, from every contact within ``2 * skin_width``: a contact *supports* when it touches
   the lower cap (normal . up > ``SUPPORT_MIN_COS``); walkability is judged by the touched
   triangle's face normal, so standing on a stair nosing is standing on the tread. Several
   steep supports whose normals average to a walkable one (a funnel) count as ground
   (Godot). ``on_ground`` / ``on_steep_ground`` / ``in_air``.

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

import math
from dataclasses import asdict, dataclass, replace
from typing import NamedTuple

import numpy as np

from ._validate import as_finite, as_point
from .constants import (
    CONTROLLER_MIN_MOVE,
    DEPENETRATION_MAX_CONTACTS,
    DEPENETRATION_PASSES,
    DEPENETRATION_STALL_RATIO,
    DEPENETRATION_STALL_ROUNDS,
    FACE_CONTACT_COS,
    GROUND_PROBE_SKINS,
    HOOD_MARGIN,
    SAME_FACE_MARGIN,
    SLOPE_LIMIT_TOL_RAD,
    STEP_FORWARD_MIN_COS,
    STEP_PROBE_OFFSET,
    STEP_RISE_TOL,
    SUPPORT_MIN_COS,
)
from .mesh import Hood
from .shapes import Capsule, Hit

ON_GROUND, ON_STEEP_GROUND, IN_AIR = 0, 1, 2
GROUND_STATES = ("on_ground", "on_steep_ground", "in_air")


@dataclass(frozen=True)
class ControllerSettings:
    """Character and controller parameters. Metres, degrees, seconds. Frozen; use ``replace``.

    Defaults follow the engines (Unity/Unreal/Jolt: radius ~0.35, height 1.8, slope 45,
    step 0.35). Each field says what changing it does to the verdicts.
    """

    radius: float = 0.35
    """metres, capsule radius. Corridors narrower than 2 x radius block; treads and gaps are
    judged against it (the capsule stands on an edge while its axis is within radius of it)."""
    height: float = 1.8
    """metres, total capsule height including both caps (>= 2 x radius). Ceilings lower than
    this above a walkable floor block (``ceiling_too_low``)."""
    max_slope_deg: float = 45.0
    """degrees from up; faces at most this steep are walkable floor. Steeper faces are not
    climbed (``slope_too_steep``) and standing on one slides down."""
    step_height: float = 0.35
    """metres, highest riser climbed without jumping (Unity stepOffset, Unreal MaxStepHeight).
    Also the drop below the last floor beyond which a landing counts as ``fell``."""
    min_step_depth: float = 0.15
    """metres, minimum tread: the floor ``min_step_depth`` past a riser must be walkable and at
    most ``step_height`` above the current floor, else the step is refused (Jolt's forward
    test 0.15 m; Rapier min_width). Larger values refuse steep, shallow-tread stairs."""
    skin_width: float = 0.02
    """metres, the gap kept to surfaces after a hit (Jolt padding 0.02, Unreal 1.9-2.4 cm). The
    character floats up to 2 x skin_width above the floor; the floor counts as touched within
    that. Also the penetration tolerated at the end of a move. Larger values hide thin gaps."""
    snap_distance: float = 0.4
    """metres, stick-to-floor reach when walking down steps and slopes (Jolt StickToFloor,
    Godot floor_snap_length). Keep >= step_height + 2 x skin_width or the character is briefly
    in the air on every full-height step down; a snap of more than step_height fires ``fell``."""
    gravity: float = 9.81
    """metres / second^2, downward acceleration while in the air or on steep ground."""
    speed: float = 4.0
    """metres / second, walk-through steering speed (horizontal)."""
    max_iterations: int = 5
    """slide iterations (sweeps) per move; each hit uses one (Jolt 5, Godot 6, Quake 4). Too few
    stops the character early in tight corners; the count used is reported."""
    up: tuple = (0.0, 0.0, 1.0)
    """unit up vector (normalised on construction)."""
    max_fall_speed: float = 55.0
    """metres / second, terminal falling speed (Bullet's fall speed 55)."""

    def __post_init__(self):
        r = as_finite(self.radius, "radius")
        h = as_finite(self.height, "height")
        if r <= 0.0:
            raise ValueError(f"radius must be > 0, got {r}")
        if h < 2.0 * r:
            raise ValueError(f"height must be >= 2 * radius = {2.0 * r}, got {h}")
        slope = as_finite(self.max_slope_deg, "max_slope_deg")
        if not 0.0 <= slope < 90.0:
            raise ValueError(f"max_slope_deg must be in [0, 90), got {slope}")
        step = as_finite(self.step_height, "step_height")
        if not 0.0 <= step < h:
            raise ValueError(f"step_height must be in [0, height), got {step}")
        depth = as_finite(self.min_step_depth, "min_step_depth")
        if depth < 0.0:
            raise ValueError(f"min_step_depth must be >= 0, got {depth}")
        skin = as_finite(self.skin_width, "skin_width")
        if not 0.0 < skin < r:
            raise ValueError(f"skin_width must be in (0, radius), got {skin}")
        snap = as_finite(self.snap_distance, "snap_distance")
        if snap < 0.0:
            raise ValueError(f"snap_distance must be >= 0, got {snap}")
        g = as_finite(self.gravity, "gravity")
        if g < 0.0:
            raise ValueError(f"gravity must be >= 0, got {g}")
        speed = as_finite(self.speed, "speed")
        if speed <= 0.0:
            raise ValueError(f"speed must be > 0, got {speed}")
        fall = as_finite(self.max_fall_speed, "max_fall_speed")
        if fall <= 0.0:
            raise ValueError(f"max_fall_speed must be > 0, got {fall}")
        it = self.max_iterations
        if isinstance(it, bool) or not isinstance(it, (int, np.integer)) or it < 1:
            raise ValueError(f"max_iterations must be an integer >= 1, got {it!r}")
        up = as_point(self.up, "up")
        n = float(np.sqrt(up @ up))
        if n == 0.0:
            raise ValueError("up must be a non-zero vector")
        for name, val in (("radius", r), ("height", h), ("max_slope_deg", slope),
                          ("step_height", step), ("min_step_depth", depth),
                          ("skin_width", skin), ("snap_distance", snap), ("gravity", g),
                          ("speed", speed), ("max_fall_speed", fall)):
            object.__setattr__(self, name, val)
        object.__setattr__(self, "max_iterations", int(it))
        object.__setattr__(self, "up", tuple(float(x) for x in up / n))

    @property
    def up_vector(self) -> np.ndarray:
        """(3,) float64 unit up."""
        return np.array(self.up)

    @property
    def cos_max_slope(self) -> float:
        """cos of the slope limit, widened by SLOPE_LIMIT_TOL_RAD so that a face exactly at the
        limit is walkable here as in ``classify_triangles`` (a 45 degree ramp built with
        tan/atan has a normal 1e-16 steeper than cos 45)."""
        return math.cos(math.radians(self.max_slope_deg) + SLOPE_LIMIT_TOL_RAD)

    @property
    def ground_probe(self) -> float:
        """metres: floor within this gap below the capsule counts as touched."""
        return GROUND_PROBE_SKINS * self.skin_width

    def replace(self, **changes) -> ControllerSettings:
        return replace(self, **changes)

    def to_dict(self) -> dict:
        d = asdict(self)
        d["up"] = list(self.up)
        return d

    @classmethod
    def from_dict(cls, d: dict) -> ControllerSettings:
        d = dict(d)
        if "up" in d:
            d["up"] = tuple(d["up"])
        return cls(**d)


class MoveResult(NamedTuple):
    """Result of ``CharacterController.move``.

    position : (3,) foot position after the move, metres
    grounded : bool, ``ground_state == "on_ground"``
    ground_state : "on_ground" | "on_steep_ground" | "in_air"
    ground_normal : (3,) unit face normal of the supporting triangle (turned to face the
        character); zeros in the air
    hits : list[Hit], one per slide sweep that touched something; ``time`` is the fraction of
        that sweep's displacement, ``triangle`` the mesh triangle
    stepped : bool, the move climbed a step
    iterations : int, slide sweeps plus penetration-recovery rounds used (<= 2 x max_iterations)
    ground_triangle : int, supporting triangle, -1 in the air
    ground_distance : float, metres between the capsule and the floor below (inf in the air)
    depenetration : float, metres the capsule was pushed out of the mesh
    """

    position: np.ndarray
    grounded: bool
    ground_state: str
    ground_normal: np.ndarray
    hits: list
    stepped: bool
    iterations: int
    ground_triangle: int = -1
    ground_distance: float = math.inf
    depenetration: float = 0.0


class _Batch(NamedTuple):
    """Internal per-character arrays of one lock-step move (N characters)."""

    position: np.ndarray  # (N, 3)
    state: np.ndarray  # (N,) int8
    normal: np.ndarray  # (N, 3) ground face normal (oriented), zeros in the air
    triangle: np.ndarray  # (N,) ground triangle or -1
    gap: np.ndarray  # (N,) ground distance, inf in air
    stepped: np.ndarray  # (N,) bool
    iterations: np.ndarray  # (N,) int
    depenetration: np.ndarray  # (N,) metres
    block_normal: np.ndarray  # (N, 3) contact normal of the most opposing non-walkable hit
    block_point: np.ndarray  # (N, 3)
    block_triangle: np.ndarray  # (N,) or -1
    floor: np.ndarray  # (N,) height (along up) of the supporting contact point, nan in air
    riser_rise: np.ndarray  # (N,) metres above floor at the obstacle (nan if not probed)
    tread_rise: np.ndarray  # (N,) metres above floor min_step_depth past it (nan if not probed)
    point: np.ndarray  # (N, 3) supporting contact point on the mesh, nan rows in the air
    interior: np.ndarray  # (N,) bool: supported by a face interior (triangle = the floor plane)
    hits: list = None  # [(agent, Hit)] when logged

    def ground(self):
        """The ground arrays a following move starts from (``_move_many(..., ground0=)``)."""
        return (self.triangle, self.gap, self.point, self.interior)


_TRUE1 = np.ones(1, dtype=bool)


def _dot(a, b):
    return np.einsum("ij,ij->i", a, b)


def _unit_rows(v):
    n = np.sqrt(_dot(v, v))
    safe = np.where(n > 0.0, n, 1.0)
    return v / safe[:, None], n


def _dot3(a, b):
    """a . b of two 3-sequences of floats, summed as numpy's einsum sums a row of three
    ((x0 + x2) + x1), so that the one-character path (``_move_lone``) reproduces ``_dot`` and
    ``_inside`` of the batched path bit for bit."""
    return (a[0] * b[0] + a[2] * b[2]) + a[1] * b[1]


def _mdot3(a, u):
    """a . u summed left to right, as ``(1, 3) @ (3,)`` (matmul of one row) does."""
    return (a[0] * u[0] + a[1] * u[1]) + a[2] * u[2]


class _HoodCache:
    """Candidate triangles around each of N characters, kept across frames (walkthrough_many).

    A character's region is the reach box of its frame (``CharacterController._reach_box``)
    grown by HOOD_MARGIN metres on every side; it is queried from the mesh's hierarchy again
    only when a frame's reach box leaves it (every few frames at walking speed), and the
    batch's sweeps take their candidates from it (``TriangleMesh._pairs_box6``). One pool of
    candidate rows, appended to in place as regions are renewed; when full, its live rows are
    compacted into a pool twice their size.
    """

    def __init__(self, mesh, n, margin=HOOD_MARGIN):
        self.mesh = mesh
        self.margin = margin
        self.lo = np.full((n, 3), np.inf)
        self.hi = np.full((n, 3), -np.inf)
        self.off = np.zeros(n, np.int64)
        self.cnt = np.zeros(n, np.int64)
        self.used = 0  # pool rows in use (live or stale); capacity is tri.size
        self.tri = np.empty(65536, np.int64)
        self.box = np.empty((65536, 8), np.float32)

    def hood(self, agents, lo, hi) -> Hood:
        """The Hood over all N characters, with ``agents``' regions covering lo, hi."""
        stale = ~((lo >= self.lo[agents]).all(1) & (hi <= self.hi[agents]).all(1))
        if stale.any():
            s = agents[stale]
            nlo = lo[stale] - self.margin
            nhi = hi[stale] + self.margin
            cnt, tri, box = self.mesh.hood_triangles(nlo, nhi)
            self.cnt[s] = 0
            add = tri.size
            if self.used + add > self.tri.size:  # full: compact the live rows, then grow
                live = int(self.cnt.sum())
                pos = np.repeat(self.off - np.cumsum(self.cnt) + self.cnt, self.cnt)
                pos += np.arange(live)
                cap = max(self.tri.size, 2 * (live + add))
                tri_new = np.empty(cap, np.int64)
                box_new = np.empty((cap, 8), np.float32)
                np.take(self.tri, pos, out=tri_new[:live])
                np.take(self.box, pos, axis=0, out=box_new[:live])
                self.tri, self.box = tri_new, box_new
                self.off = np.cumsum(self.cnt) - self.cnt
                self.used = live
            self.lo[s] = nlo
            self.hi[s] = nhi
            self.off[s] = self.used + np.cumsum(cnt) - cnt
            self.cnt[s] = cnt
            self.tri[self.used:self.used + add] = tri
            self.box[self.used:self.used + add] = box
            self.used += add
        return Hood(self.lo, self.hi, self.off, self.cnt, self.tri, self.box)


class CharacterController:
    """A capsule character moving through a ``TriangleMesh`` (static level geometry).

    mesh : core.mesh.TriangleMesh (collision is two-sided: back faces collide too)
    settings : ControllerSettings (defaults if None)

    ``move(position, displacement)`` is stateless for the caller: the ground state at the
    start of a move is the one the previous move ended with at that exact position (cached),
    or is probed.
    """

    def __init__(self, mesh, settings: ControllerSettings | None = None):
        self.mesh = mesh
        self.settings = settings if settings is not None else ControllerSettings()
        s = self.settings
        self._u = s.up_vector
        self._ua = self._u * s.radius
        self._ub = self._u * (s.height - s.radius)
        self._cos = s.cos_max_slope
        self._probe = s.ground_probe
        self._cache: dict[bytes, tuple] = {}
        # TriangleMesh's unvalidated batch entry point, when the mesh has one
        self._sweep_batch = getattr(mesh, "_sweep_batch", None)
        self._verts = mesh.vertices
        self._tris = mesh.triangles
        self._radii = np.full(1, s.radius)  # read-only, grown on demand (_sweep)
        self._radii.setflags(write=False)
        self.mesh_calls = 0  # batched mesh queries issued (for benchmarks and tests)
        # batches of at most this many characters sweep, then probe (see _move_many)
        self._lone_max = 1
        # one character moves through _move_lone (Python floats); False: always _move_batch
        self._lone_fast = True
        # walkthrough_many keeps candidate triangles per character across frames
        # (_HoodCache); False: every sweep queries the hierarchy (tests compare the two)
        self._use_hoods = True
        self._hood = None  # Hood of the batch being moved (_move_batch with hoods)
        self._hood_rows = None  # its owner row per batch row
        self._up3 = tuple(float(x) for x in self._u)
        self._ua3 = tuple(float(x) for x in self._ua)
        self._ub3 = tuple(float(x) for x in self._ub)

    # ------------------------------------------------------------------ public
    def capsule_at(self, foot) -> Capsule:
        """The character's capsule with its lowest point at ``foot`` (3,)."""
        s = self.settings
        return Capsule.upright(as_point(foot, "foot"), s.height, s.radius, s.up)

    def move(self, position, displacement) -> MoveResult:
        """Move the character whose foot is at ``position`` (3,) by ``displacement`` (3,) m.

        Returns a MoveResult (see the module docstring for the phases).
        """
        p = as_point(position, "position")
        d = as_point(displacement, "displacement")
        start = self._cache.get(p.tobytes())
        settled = 0.0
        if start is None:
            start, settled = self._settle(p)
            p = start[0]
        _, st0, n0, fl0, g0 = start
        b = self._move_many(p[None], d[None], np.array([st0], np.int8), n0[None],
                            np.array([fl0]), log_hits=True, ground0=g0)
        return self._result(b, settled)

    def ground(self, position) -> MoveResult:
        """Ground state at ``position`` without moving (penetration is still resolved)."""
        return self.move(position, np.zeros(3))

    # ------------------------------------------------------------------ internals
    def _result(self, b: _Batch, settled: float = 0.0) -> MoveResult:
        pos = b.position[0].copy()
        st = int(b.state[0])
        if len(self._cache) > 256:
            self._cache.clear()
        self._cache[pos.tobytes()] = (pos, st, b.normal[0].copy(), float(b.floor[0]),
                                      tuple(x[:1].copy() for x in b.ground()))
        return MoveResult(
            pos, st == ON_GROUND, GROUND_STATES[st], b.normal[0].copy(),
            [h for _, h in b.hits], bool(b.stepped[0]), int(b.iterations[0]),
            int(b.triangle[0]), float(b.gap[0]), float(b.depenetration[0]) + settled,
        )

    def _settle(self, p):
        b = self._move_many(p[None], np.zeros((1, 3)), np.array([IN_AIR], np.int8),
                            np.zeros((1, 3)), np.array([np.nan]))
        return ((b.position[0].copy(), int(b.state[0]), b.normal[0].copy(), float(b.floor[0]),
                 tuple(x[:1].copy() for x in b.ground())), float(b.depenetration[0]))

    def _sweep(self, feet, disp, rows=None, want=None):
        """One batched mesh sweep of the characters at ``feet`` (Q, 3) by ``disp`` (Q, 3);
        ``rows`` (Q,): the batch rows of the characters swept, for the hood cache; ``want``
        (Q,) bool: queries whose normal and point matter when they start penetrating."""
        self.mesh_calls += 1
        if self._sweep_batch is not None:  # arrays are built here: skip re-validation
            q = feet.shape[0]
            if self._radii.size < q:
                self._radii = np.full(max(q, 2 * self._radii.size), self.settings.radius)
                self._radii.setflags(write=False)
            if self._hood is not None and rows is not None:
                return self._sweep_batch(feet + self._ua, feet + self._ub, self._radii[:q],
                                         disp, self._hood, self._hood_rows[rows], want)
            return self._sweep_batch(feet + self._ua, feet + self._ub, self._radii[:q], disp,
                                     want=want)
        return self.mesh.sweep_capsule_many(feet + self._ua, feet + self._ub,
                                            self.settings.radius, disp)

    def _depenetrate(self, pos):
        """Push capsules at feet ``pos`` (K, 3) out of the mesh to a gap of skin/2.

        Plane solver (Gauss-Seidel over the deepest DEPENETRATION_MAX_CONTACTS contacts of
        each capsule, DEPENETRATION_PASSES passes), re-queried up to max_iterations rounds,
        all capsules still in contact in one batched query per round. Give-up rule: a capsule
        whose deepest contact fails DEPENETRATION_STALL_ROUNDS times in a row to get shallower
        (by the factor DEPENETRATION_STALL_RATIO) cannot be pushed out (it does not fit where
        it is, e.g. between walls closer than its diameter: the pushes ping-pong) and leaves
        the solve.
        Returns (new feet (K, 3), pushed distance (K,), trapped (K,) bool: given up).
        """
        s = self.settings
        out = pos.copy()
        pushed = np.zeros(len(pos))
        trapped = np.zeros(len(pos), bool)
        live = np.arange(len(pos))
        prev = np.full(len(pos), np.inf)  # deepest contact of the previous round
        strikes = np.zeros(len(pos), np.int64)
        kmax = DEPENETRATION_MAX_CONTACTS
        for _ in range(s.max_iterations):
            if not live.size:
                break
            self.mesh_calls += 1
            cb = self.mesh.capsule_contacts_many(out[live] + self._ua, out[live] + self._ub,
                                                 s.radius + 0.5 * s.skin_width)
            if not cb.query.size:
                break
            q = cb.query
            # deepest contact of each capsule (contacts come sorted by query, depth)
            first = np.concatenate((_TRUE1, q[1:] != q[:-1]))
            qa = live[q[first]]
            deepest = cb.depth[first]
            # a stall: still really penetrating (deeper than the skin/2 query margin) and
            # not clearly shallower than the previous round
            stall = (deepest > DEPENETRATION_STALL_RATIO * prev[qa]) & (
                deepest > 0.5 * s.skin_width)
            strikes[qa] = np.where(stall, strikes[qa] + 1, 0)
            prev[qa] = deepest
            if stall.any() and (strikes[qa] >= DEPENETRATION_STALL_ROUNDS).any():
                trapped[qa[strikes[qa] >= DEPENETRATION_STALL_ROUNDS]] = True
                keep_c = ~trapped[live[q]]
                if not keep_c.any():
                    break
                stay = ~trapped[live]
                q = np.cumsum(stay)[q[keep_c]] - 1  # renumber into the remaining capsules
                live = live[stay]
                cb = cb._replace(depth=cb.depth[keep_c], normal=cb.normal[keep_c])
            rank = np.arange(q.size) - np.searchsorted(q, q, side="left")
            keep = rank < kmax
            q, rank = q[keep], rank[keep]
            n_live = live.size
            depth = np.zeros((n_live, kmax))
            nrm = np.zeros((n_live, kmax, 3))
            depth[q, rank] = cb.depth[keep]
            nrm[q, rank] = cb.normal[keep]
            x = np.zeros((n_live, 3))
            for _p in range(DEPENETRATION_PASSES):
                for j in range(kmax):
                    viol = depth[:, j] - _dot(nrm[:, j], x)
                    x += nrm[:, j] * np.maximum(viol, 0.0)[:, None]
            out[live] += x
            pushed[live] += np.sqrt(_dot(x, x))
            live = live[np.unique(q)]
        return out, pushed, trapped

    def _move_many(self, f0, d, state0, normal0, floor0, log_hits=False,
                   ground0=None, hoods=None) -> _Batch:
        """Lock-step move of N characters: feet f0 (N,3), displacements d (N,3), start ground
        state (N,) int8, start ground normal (N,3), start floor height (N,) along up (the
        supporting contact point; nan if unknown); ``ground0`` the previous move's
        ``_Batch.ground()`` (optional: enables the same-face shortcut below).

        A lone character (N == 1) takes ``_move_lone``: the same phases in Python floats
        for the common move (the first slide sweep hits nothing), handing over to the
        batched code below, with that sweep's result, as soon as it hits."""
        if f0.shape[0] == 1 and self._lone_fast:
            return self._move_lone(f0, d, state0, normal0, floor0, log_hits, ground0)
        if hoods is None or self._sweep_batch is None:
            return self._move_batch(f0, d, state0, normal0, floor0, log_hits, ground0)
        cache, agents = hoods
        self._hood = cache.hood(agents, *self._reach_box(f0, d, normal0))
        self._hood_rows = agents
        try:
            return self._move_batch(f0, d, state0, normal0, floor0, log_hits, ground0)
        finally:
            self._hood = self._hood_rows = None

    def _reach_box(self, f0, d, normal0):
        """Box (lo, hi (N, 3)) around what a move of feet f0 by d can sweep this frame: the
        capsule at f0 grown by the ground-following step's length plus the skin and probe,
        and along up by the step height (up) and the snap or step-down probe (down). Only
        sizes the hood cache's regions: a sweep reaching outside falls back to the BVH."""
        s = self.settings
        u = self._u
        a = f0 + self._ua
        b = f0 + self._ub
        r = s.radius
        d_up = d @ u
        dh = d - d_up[:, None] * u
        nu = np.maximum(normal0 @ u, SUPPORT_MIN_COS)
        # ground-following length: |dh| / cos(slope) bounds |dd| on walkable ground
        reach = np.sqrt(_dot(d, d)) + np.sqrt(_dot(dh, dh)) / nu + s.skin_width + self._probe + r
        au = np.abs(u)
        down = max(s.snap_distance, self._probe) + s.step_height + s.skin_width
        lo = np.minimum(a, b) - reach[:, None] - down * au
        hi = np.maximum(a, b) + reach[:, None] + (s.step_height + s.skin_width) * au
        return lo, hi

    def _move_batch(self, f0, d, state0, normal0, floor0, log_hits=False, ground0=None,
                    first=None) -> _Batch:
        """``_move_many`` for any N; ``first``: the result of the first slide sweep when the
        caller (``_move_lone``) already issued it with the same arguments."""
        s = self.settings
        u = self._u
        n_agents = f0.shape[0]
        skin = s.skin_width
        probe = self._probe
        cos_slope = self._cos
        max_it = s.max_iterations

        d_up = d @ u
        dh = d - d_up[:, None] * u
        dir_h, dh_len = _unit_rows(dh)
        on_ground0 = state0 == ON_GROUND
        not_rising = d_up <= 0.0
        # Phase 1: follow the ground plane (keep the horizontal length of the step).
        follow = on_ground0 & not_rising
        dd = d.copy()
        if follow.any():
            n0 = normal0[follow]
            nu = n0 @ u
            safe_nu = np.where(nu > 1e-9, nu, 1.0)
            dh_f = dh[follow]
            dd[follow] = dh_f - (_dot(n0, dh_f) / safe_nu)[:, None] * u
        snap_ok = follow & (s.snap_distance > probe)
        # speculative probes are short (few candidate triangles); a long stick-to-floor probe
        # is only issued for characters that lost the floor (phase 4)
        any_block = False  # a slide sweep hit something (blocking bookkeeping ran)

        cur = f0.copy()
        rem = dd.copy()
        iters = np.zeros(n_agents, np.int64)
        depen = np.zeros(n_agents)
        trapped = np.zeros(n_agents, bool)  # penetration recovery gave up (_depenetrate)
        planes = None  # (N, max_it, 3) slide planes met, allocated at the first hit
        blk_score = np.full(n_agents, np.inf)
        blk_n = np.zeros((n_agents, 3))
        blk_pt = np.zeros((n_agents, 3))
        blk_tri = np.full(n_agents, -1, np.int64)
        g_t = np.full(n_agents, np.inf)  # ground probe: distance in metres
        g_n = np.zeros((n_agents, 3))
        g_tri = np.full(n_agents, -1, np.int64)
        g_pt = np.zeros((n_agents, 3))
        g_valid = np.zeros(n_agents, bool)
        probe_out = (g_t, g_n, g_tri, g_pt, g_valid)
        hits = []

        rem_len = np.sqrt(_dot(rem, rem))
        active = rem_len > CONTROLLER_MIN_MOVE
        rem[~active] = 0.0
        idle = np.flatnonzero(~active)
        # Same-face shortcut: a character resting on a face interior that moves parallel to
        # that face, with its support point staying inside the triangle, keeps the same gap
        # to that face; if its sweep hits nothing it needs no ground probe. The ground state
        # is exact (the walkable face is still under it within the probe distance); the
        # reported floor is that face even if some other surface came equally close.
        same_face = np.zeros(n_agents, bool)
        if ground0 is not None:
            tri0, gap0, pt0, int0 = ground0
            coh = follow & active & int0 & (tri0 >= 0) & (gap0 <= probe)
            if coh.any():
                c = np.flatnonzero(coh)
                same_face[c[self._inside(pt0[c] + dd[c], tri0[c])]] = True

        # Phase 2: slide. Each sweep is batched with a speculative ground probe at its end
        # (lock-step batches), or, for a lone character, followed by the probe only when it
        # hit nothing: two single sweeps take the mesh's lean route and cost less than one
        # general batch of two, and a sweep that hits needs no probe.
        lone = n_agents <= self._lone_max
        for it in range(max_it):
            ids = np.flatnonzero(active)
            pids = idle if it == 0 else np.empty(0, np.int64)
            if not ids.size and not pids.size:
                break
            k = ids.size
            seq = lone and it > 0  # after a hit, the next sweep often hits again
            if seq:
                prb = np.empty(0, np.int64)
            else:
                prb = ids[~same_face[ids]] if it == 0 else ids
            slot = np.full(n_agents, -1, np.int64)
            slot[prb] = k + np.arange(prb.size)
            feet = np.concatenate([cur[ids], cur[prb] + rem[prb], cur[pids]])
            disp = np.concatenate([rem[ids], np.tile(-probe * u, (prb.size + pids.size, 1))])
            # a move's or an idle probe's start-in-contact normal can matter (hit log,
            # a character that cannot be pushed out); a speculative probe's cannot (it is
            # only kept when its move missed, so it starts clear)
            want = np.zeros(feet.shape[0], bool)
            want[:k] = log_hits
            want[k + prb.size:] = True
            res = first if it == 0 and first is not None else self._sweep(
                feet, disp, np.concatenate((ids, prb, pids)), want)
            # probes of idle characters
            if pids.size:
                sl = np.arange(k + prb.size, k + prb.size + pids.size)
                self._store_probe(pids, res, sl, probe, probe_out)
            if not k:
                continue
            t = res.time[:k]
            iters[ids] += 1
            miss = np.isinf(t)
            if miss.any():
                m = ids[miss]
                if seq:  # probe now, only the characters that need one
                    pr = self._sweep(cur[m] + rem[m], np.tile(-probe * u, (m.size, 1)), m)
                    self._store_probe(m, pr, slice(0, m.size), probe, probe_out)
                    ms = m[:0]
                else:
                    mp = m[slot[m] >= 0]
                    if mp.size:
                        self._store_probe(mp, res, slot[mp], probe, probe_out)
                        # starting in contact after a clear move: rounding; probe again
                        g_valid[mp[res.time[slot[mp]] == 0.0]] = False
                    ms = m[slot[m] < 0]  # same-face shortcut
                if ms.size:
                    g_t[ms] = gap0[ms]
                    g_n[ms] = normal0[ms]
                    g_tri[ms] = tri0[ms]
                    g_pt[ms] = pt0[ms] + dd[ms]
                    g_valid[ms] = True
                cur[m] += rem[m]
                rem[m] = 0.0
                active[m] = False
            zero = t == 0.0
            if zero.any():
                z = ids[zero]
                cur[z], pushed, trap = self._depenetrate(cur[z])
                depen[z] += pushed
                iters[z] += 1
                if trap.any():  # cannot get out: stop sliding (every sweep would be time 0)
                    tz = z[trap]
                    trapped[tz] = True
                    rem[tz] = 0.0
                    active[tz] = False
                if log_hits:
                    for j in np.flatnonzero(zero):
                        hits.append((ids[j], Hit(0.0, res.normal[j].copy(), res.point[j].copy(),
                                                 int(res.triangle[j]))))
            hit = np.isfinite(t) & (t > 0.0)
            if not hit.any():
                continue
            if planes is None:
                planes = np.zeros((n_agents, max_it, 3))
            any_block = True
            hj = np.flatnonzero(hit)
            h = ids[hj]
            n = res.normal[hj]
            th = t[hj]
            if log_hits:
                for j in hj:
                    hits.append((ids[j], Hit(float(t[j]), res.normal[j].copy(),
                                             res.point[j].copy(), int(res.triangle[j]))))
            r_h = rem[h]
            rhat, rlen = _unit_rows(r_h)
            approach = -_dot(rhat, n)
            travel = th * rlen
            back = np.minimum(skin / np.maximum(approach, 1e-6), travel)
            cur[h] += rhat * (travel - back)[:, None]
            r_h = rhat * (rlen - travel + back)[:, None]
            # blocking obstacle bookkeeping (non-walkable contacts only)
            nu = n @ u
            nh, nh_len = _unit_rows(n - nu[:, None] * u)
            score = np.where((nu < cos_slope) & (nh_len > 1e-9), _dot(dir_h[h], nh), np.inf)
            better = score < blk_score[h]
            if better.any():
                bh = h[better]
                blk_score[bh] = score[better]
                blk_n[bh] = n[better]
                blk_pt[bh] = res.point[hj[better]]
                blk_tri[bh] = res.triangle[hj[better]]
            # clip against this plane; steep slopes act as walls for climbing motion
            vn = _dot(r_h, n)
            r1 = r_h - n * np.minimum(vn, 0.0)[:, None]
            steep = (nu < cos_slope) & (nu > 0.0)
            climb = steep & (r1 @ u > np.maximum(r_h @ u, 0.0) + 1e-12)
            plane_used = n.copy()
            if climb.any():
                # horizontal part: the slope is a vertical wall (w); vertical part: slides
                # down the real plane. Neither climbs: r . n >= 0 and r . up <= max(rem . up, 0)
                c = np.flatnonzero(climb)
                w = nh[c]
                nc = n[c]
                rc = r_h[c]
                vert = np.outer(rc @ u, u)
                hor = rc - vert
                hor = hor - w * np.minimum(_dot(hor, w), 0.0)[:, None]
                vert = vert - nc * np.minimum(_dot(vert, nc), 0.0)[:, None]
                r1[c] = hor + vert
                plane_used[c] = w
            # creases with earlier planes
            for j in range(it):
                pj = planes[h, j]
                viol = _dot(r1, pj) < -1e-12
                if viol.any():
                    v = np.flatnonzero(viol)
                    cr, crl = _unit_rows(np.cross(plane_used[v], pj[v]))
                    proj = cr * _dot(r1[v], cr)[:, None]
                    flat = r1[v] - pj[v] * _dot(r1[v], pj[v])[:, None]
                    r1[v] = np.where((crl > 1e-9)[:, None], proj, flat)
            for j in range(it):
                pj = planes[h, j]
                bad = _dot(r1, pj) < -1e-9
                r1[bad] = 0.0
            planes[h, it] = plane_used
            # stop when nothing is left to move
            done = _dot(r1, r1) <= CONTROLLER_MIN_MOVE * CONTROLLER_MIN_MOVE
            r1[done] = 0.0
            rem[h] = r1
            active[h] = ~done
        rem[active] = 0.0  # iterations exhausted: stay where the last sweep ended

        # Phase 3: step up (up, forward, down) for grounded characters blocked by an obstacle.
        riser = np.full(n_agents, np.nan)
        tread = np.full(n_agents, np.nan)
        stepped = np.zeros(n_agents, bool)
        if any_block and s.step_height > 0.0:  # blk_tri is -1 everywhere without a hit
            missing = dh_len - _dot(cur - f0, dir_h)
            cand = (on_ground0 & not_rising & (blk_tri >= 0)
                    & (blk_score <= -STEP_FORWARD_MIN_COS) & (missing > CONTROLLER_MIN_MOVE))
            if cand.any():
                # height of the foot above the supporting contact (negative when the rounded
                # bottom dips below a stair nosing it rests on)
                foot_above = np.where(np.isfinite(floor0), f0 @ u - floor0, 0.0)
                self._step_up(np.flatnonzero(cand), f0, cur, dir_h, missing, foot_above,
                              blk_pt, riser, tread, stepped, probe_out)

        # Phase 4: ground probe where the speculative one is not valid (slid, recovered).
        snap_len = np.where(snap_ok, max(s.snap_distance, probe), probe)
        need_m = ~g_valid | (snap_ok & ~stepped & (g_t > probe))
        if need_m.any():
            need = np.flatnonzero(need_m)
            res = self._sweep(cur[need], snap_len[need, None] * -u, need)
            self._store_probe(need, res, slice(0, need.size), snap_len[need], probe_out)
        # probes starting in contact (time 0): recover and probe again
        zero_m = g_valid & (g_t == 0.0) & (g_tri >= 0) & ~trapped
        if zero_m.any():
            zero = np.flatnonzero(zero_m)
            cur[zero], pushed, _trap = self._depenetrate(cur[zero])
            depen[zero] += pushed
            res = self._sweep(cur[zero], snap_len[zero, None] * -u, zero)
            self._store_probe(zero, res, slice(0, zero.size), snap_len[zero], probe_out)

        # Phase 5: stick to floor, then the ground state.
        state, gnorm, gtri, gap, floor, point, interior = self._ground_state(
            cur, g_t, g_n, g_tri, g_pt, snap_ok & ~stepped)
        return _Batch(cur, state, gnorm, gtri, gap, stepped, iters, depen, blk_n, blk_pt,
                      blk_tri, floor, riser, tread, point, interior, hits)

    def _move_lone(self, f0, d, state0, normal0, floor0, log_hits, ground0) -> _Batch:
        """``_move_batch`` for one character, in Python floats, when its first slide sweep
        hits nothing (open ground: nearly every frame); otherwise ``_move_batch`` continues
        from that sweep's result. The same phases with the same mesh calls (same arguments)
        and the same float operations in the same order (``_dot3``, ``_mdot3``), so the
        result matches ``_move_batch`` bit for bit with this numpy (another numpy build may
        sum a row in another order: an ulp; tests/test_controller.py allows 1e-9 m and
        requires every discrete outcome to be equal).
        Penetration recovery and ground decided from contacts reuse the batched helpers
        with arrays of one."""
        s = self.settings
        u = self._up3
        probe = self._probe
        cur = f0[0].tolist()
        dv = d[0].tolist()
        # Phase 1: follow the ground plane.
        d_up = _mdot3(dv, u)
        follow = int(state0[0]) == ON_GROUND and d_up <= 0.0
        rem = dv
        if follow:
            dh = [dv[i] - d_up * u[i] for i in range(3)]
            n0 = normal0[0].tolist()
            nu = _mdot3(n0, u)
            c = _dot3(n0, dh) / (nu if nu > 1e-9 else 1.0)
            rem = [dh[i] - c * u[i] for i in range(3)]
        snap_ok = follow and s.snap_distance > probe
        active = math.sqrt(_dot3(rem, rem)) > CONTROLLER_MIN_MOVE
        same_face = False
        if ground0 is not None and follow and active:
            tri0, gap0, pt0, int0 = ground0
            if int0[0] and tri0[0] >= 0 and gap0[0] <= probe:
                moved0 = pt0[0] + rem
                same_face = self._inside_one(moved0, int(tri0[0]))
        # Phase 2, first sweep: the slide sweep and (unless same-face) the probe at its end,
        # or the idle character's probe.
        down = [-probe * x for x in u]
        if not active:
            feet, disp = [cur], [down]
        elif same_face:
            feet, disp = [cur], [rem]
        else:
            feet, disp = [cur, [cur[i] + rem[i] for i in range(3)]], [rem, down]
        res = self._sweep(np.array(feet), np.array(disp))
        iters = 0
        if active:
            if res.time[0] != np.inf:  # hit, or started in contact: the batched code goes on
                return self._move_batch(f0, d, state0, normal0, floor0, log_hits, ground0,
                                        first=res)
            iters = 1
            cur = feet[1] if not same_face else [cur[i] + rem[i] for i in range(3)]
        if active and same_face:
            g_t, g_n, g_tri, g_pt = float(gap0[0]), normal0[0].tolist(), int(tri0[0]), moved0
        else:
            j = len(feet) - 1
            g_t = float(res.time[j]) * probe
            g_n, g_tri, g_pt = res.normal[j].tolist(), int(res.triangle[j]), res.point[j]
        # Phase 4: stick-to-floor probe; probes starting in contact recover and probe again.
        snap_len = max(s.snap_distance, probe) if snap_ok else probe
        depen = 0.0
        for again in (False, True):
            if again:
                if not (g_t == 0.0 and g_tri >= 0):
                    break
                out, pushed, _trap = self._depenetrate(np.array([cur]))
                cur = out[0].tolist()
                depen += float(pushed[0])
            elif not (snap_ok and g_t > probe):
                continue
            r = self._sweep(np.array([cur]), np.array([[snap_len * -x for x in u]]))
            g_t = float(r.time[0]) * snap_len
            g_n, g_tri, g_pt = r.normal[0].tolist(), int(r.triangle[0]), r.point[0]
        # Phase 5: stick to floor, then the ground state.
        g_pt = g_pt.tolist() if isinstance(g_pt, np.ndarray) else g_pt
        cur, state, gnorm, gtri, gap, floor, interior = self._ground_lone(
            cur, g_t, g_n, g_tri, g_pt, snap_ok)
        point = [math.nan] * 3 if state == IN_AIR else g_pt
        return _Batch(np.array([cur]), np.array([state], np.int8), np.array([gnorm]),
                      np.array([gtri], np.int64), np.array([gap]), np.zeros(1, bool),
                      np.array([iters], np.int64), np.array([depen]), np.zeros((1, 3)),
                      np.zeros((1, 3)), np.full(1, -1, np.int64), np.array([floor]),
                      np.full(1, np.nan), np.full(1, np.nan), np.array([point]),
                      np.array([interior]), [])

    def _ground_lone(self, cur, g_t, g_n, g_tri, g_pt, snap_ok):
        """``_ground_state`` for one character in Python floats (``_move_lone``); edges and
        steep faces are decided by ``_ground_from_contacts`` on arrays of one.
        Returns (foot, state, normal, triangle, gap, floor height, interior)."""
        s = self.settings
        u = self._up3
        probe = self._probe
        hit = g_tri >= 0 and math.isfinite(g_t)
        up_c = _mdot3(g_n, u)
        near = hit and g_t <= probe
        gap = g_t if hit else math.inf
        if (hit and not near and snap_ok and g_t <= max(s.snap_distance, probe)
                and up_c > SUPPORT_MIN_COS):
            near_or_snap = True
            back = min(s.skin_width, gap)
            cur = [cur[i] - (gap - back) * u[i] for i in range(3)]
            gap = back
        else:
            near_or_snap = near
        supported = near_or_snap and up_c > SUPPORT_MIN_COS
        face = self.mesh.normals[max(g_tri, 0)].tolist()
        fc = _dot3(face, g_n)
        sign = -1.0 if fc < 0.0 else 1.0
        fo = [x * sign for x in face]
        easy = supported and abs(fc) >= FACE_CONTACT_COS and _mdot3(fo, u) >= self._cos
        floor = _mdot3(g_pt, u) if supported else math.nan
        if easy:
            state, gnorm, gtri = ON_GROUND, fo, g_tri
        elif supported or near:
            st = np.full(1, IN_AIR, np.int8)
            gn = np.zeros((1, 3))
            gt = np.full(1, -1, np.int64)
            fl = np.array([floor])
            self._ground_from_contacts(np.zeros(1, np.int64), np.array([cur]), st, gn, gt, fl,
                                       None, None)
            state, gnorm, gtri, floor = int(st[0]), gn[0].tolist(), int(gt[0]), float(fl[0])
        else:
            state, gnorm, gtri = IN_AIR, [0.0, 0.0, 0.0], -1
        if state == IN_AIR:
            gap, floor = math.inf, math.nan
        return cur, state, gnorm, gtri, gap, floor, easy

    def _inside_one(self, p, tri):
        """``_inside`` for one point p (3,) and triangle index, in Python floats."""
        a, b, c = self._verts[self._tris[tri]].tolist()
        e0 = [b[i] - a[i] for i in range(3)]
        e1 = [c[i] - a[i] for i in range(3)]
        w = [float(p[i]) - a[i] for i in range(3)]
        d00, d01, d11 = _dot3(e0, e0), _dot3(e0, e1), _dot3(e1, e1)
        d20, d21 = _dot3(e0, w), _dot3(e1, w)
        den = d00 * d11 - d01 * d01
        if not den > 0.0:
            return False
        bv = (d11 * d20 - d01 * d21) / den
        bw = (d00 * d21 - d01 * d20) / den
        m = SAME_FACE_MARGIN
        return bv > m and bw > m and bv + bw < 1.0 - m

    def _inside(self, p, tri):
        """(K,) bool: points p (K, 3) strictly inside triangles tri (K,) (projected onto the
        triangle's plane; barycentric coordinates > a relative margin)."""
        v = self._verts[self._tris[tri]]  # (K, 3, 3)
        a = v[:, 0]
        e = v[:, 1:] - a[:, None]  # (K, 2, 3): e0, e1
        g = np.einsum("kij,klj->kil", e, e)  # Gram matrix
        d00, d01, d11 = g[:, 0, 0], g[:, 0, 1], g[:, 1, 1]
        h = np.einsum("kij,kj->ki", e, p - a)
        d20, d21 = h[:, 0], h[:, 1]
        den = d00 * d11 - d01 * d01
        ok = den > 0.0
        den = np.where(ok, den, 1.0)
        bv = (d11 * d20 - d01 * d21) / den
        bw = (d00 * d21 - d01 * d20) / den
        m = SAME_FACE_MARGIN
        return ok & (bv > m) & (bw > m) & (bv + bw < 1.0 - m)

    @staticmethod
    def _store_probe(ids, res, sl, length, out):
        g_t, g_n, g_tri, g_pt, g_valid = out
        g_t[ids] = res.time[sl] * length
        g_n[ids] = res.normal[sl]
        g_tri[ids] = res.triangle[sl]
        g_pt[ids] = res.point[sl]
        g_valid[ids] = True

    def _step_up(self, S, f0, cur, dir_h, missing, foot_above, blk_pt, riser, tread, stepped,
                 probe_out):
        s = self.settings
        u = self._u
        skin = s.skin_width
        probe = self._probe
        # Tread and riser rays: down from the character's top height, just past the obstacle
        # and min_step_depth past it (one batched ray call).
        floor = f0[S] @ u - foot_above[S]
        bp = blk_pt[S]
        bp_h = bp - np.outer(bp @ u, u)
        top = floor + s.height + s.step_height
        origins = np.concatenate([
            bp_h + dir_h[S] * STEP_PROBE_OFFSET + np.outer(top, u),
            bp_h + dir_h[S] * max(s.min_step_depth, STEP_PROBE_OFFSET) + np.outer(top, u),
        ])
        self.mesh_calls += 1
        rays = self.mesh.raycast_many(origins, np.tile(-u, (origins.shape[0], 1)),
                                      s.height + 2.0 * s.step_height)
        k = S.size
        rise = np.where(np.isfinite(rays.time), s.height + s.step_height - rays.time, -np.inf)
        tri = rays.triangle
        face_up = np.where(tri >= 0, self.mesh.normals[np.maximum(tri, 0)] @ u, 1.0)
        rise = np.where(face_up < 0.0, np.inf, rise)  # ray began inside a solid: a wall
        riser[S] = rise[:k]
        tread[S] = rise[k:]
        tread_up = rays.normal[k:] @ u
        limit = s.step_height + STEP_RISE_TOL
        tread_ok = (rise[:k] <= limit) & ((rise[k:] == -np.inf) | (
            (rise[k:] <= limit) & (tread_up >= self._cos)))
        # Each stage only sweeps the characters that can still succeed: a refused tread, no
        # head room or no forward advance cannot be accepted whatever the later sweeps find.
        S = S[tread_ok]
        if not S.size:
            return
        # up
        up_len = np.maximum(s.step_height - foot_above[S] - (cur[S] - f0[S]) @ u, 0.0)
        keep = up_len > CONTROLLER_MIN_MOVE  # gained <= up_len
        S, up_len = S[keep], up_len[keep]
        if not S.size:
            return
        r1 = self._sweep(cur[S], up_len[:, None] * u, S)
        t1 = r1.time
        gained = np.where(np.isinf(t1), up_len, np.maximum(t1 * up_len - skin, 0.0))
        keep = gained > CONTROLLER_MIN_MOVE
        S, gained = S[keep], gained[keep]
        if not S.size:
            return
        raised = cur[S] + gained[:, None] * u
        # forward
        dS = dir_h[S]
        fwd = np.maximum(missing[S], skin)
        r2 = self._sweep(raised, dS * fwd[:, None], S)
        t2 = r2.time
        approach = np.maximum(-_dot(dS, r2.normal), 1e-6)
        adv = np.where(np.isinf(t2), fwd, np.maximum(t2 * fwd - skin / approach, 0.0))
        keep = (adv > CONTROLLER_MIN_MOVE) & (t2 > 0.0)
        S, gained = S[keep], gained[keep]
        if not S.size:
            return
        moved = raised[keep] + dS[keep] * adv[keep, None]
        # down
        down_len = gained + probe
        r3 = self._sweep(moved, down_len[:, None] * -u, S)
        t3 = r3.time
        land_up = r3.normal @ u
        ok = np.isfinite(t3) & (t3 > 0.0) & (land_up > SUPPORT_MIN_COS)
        drop = np.where(np.isfinite(t3), t3 * down_len, 0.0)
        back = np.minimum(skin, drop)
        land = moved - (drop - back)[:, None] * u
        ok &= (land - f0[S]) @ u > -probe  # a step never ends lower than it started
        if ok.any():
            acc = S[ok]
            cur[acc] = land[ok]
            stepped[acc] = True
            g_t, g_n, g_tri, g_pt, g_valid = probe_out
            g_t[acc] = back[ok]
            g_n[acc] = r3.normal[ok]
            g_tri[acc] = r3.triangle[ok]
            g_pt[acc] = r3.point[ok]
            g_valid[acc] = True

    def _ground_state(self, cur, g_t, g_n, g_tri, g_pt, snap_ok):
        """Snap to the floor where allowed, then classify.

        Returns (state, normal, triangle, gap, floor height, point, interior)."""
        s = self.settings
        u = self._u
        skin = s.skin_width
        probe = self._probe
        cos_slope = self._cos
        n_agents = cur.shape[0]
        hit = (g_tri >= 0) & np.isfinite(g_t)
        up_c = g_n @ u
        near = hit & (g_t <= probe)
        snap = hit & ~near & snap_ok & (g_t <= max(s.snap_distance, probe)) & (
            up_c > SUPPORT_MIN_COS)
        gap = np.where(hit, g_t, np.inf)
        if snap.any():
            sn = np.flatnonzero(snap)
            back = np.minimum(skin, gap[sn])
            cur[sn] -= np.outer(gap[sn] - back, u)
            gap[sn] = back
        supported = (near | snap) & (up_c > SUPPORT_MIN_COS)
        face = self.mesh.normals[np.maximum(g_tri, 0)]
        fc = _dot(face, g_n)
        sign = np.where(fc < 0.0, -1.0, 1.0)
        fo = face * sign[:, None]
        up_f = fo @ u
        interior = np.abs(fc) >= FACE_CONTACT_COS
        state = np.full(n_agents, IN_AIR, np.int8)
        gnorm = np.zeros((n_agents, 3))
        gtri = np.full(n_agents, -1, np.int64)
        easy = supported & interior & (up_f >= cos_slope)
        state[easy] = ON_GROUND
        gnorm[easy] = fo[easy]
        gtri[easy] = g_tri[easy]
        floor = np.where(supported, g_pt @ u, np.nan)
        # edges, steep faces, and probes stopped by a non-supporting contact (e.g. the next
        # stair nosing at the cap's equator) are decided from every contact in probe range
        hard = np.flatnonzero((supported & ~easy) | (near & ~supported))
        if hard.size:
            self._ground_from_contacts(hard, cur, state, gnorm, gtri, floor, g_n, g_tri)
        air = state == IN_AIR
        gap[air] = np.inf
        floor[air] = np.nan
        point = np.where(air[:, None], np.nan, g_pt)
        return state, gnorm, gtri, gap, floor, point, easy

    def _best_per_query(self, ids, q, score, code, fo, cb, state, gnorm, gtri, floor):
        """For each query with a finite score, take its best-scoring contact as the ground.

        Returns the contact rows chosen and the queries they belong to."""
        order = np.lexsort((-score, q))
        qs = q[order]
        first = order[np.concatenate((_TRUE1, qs[1:] != qs[:-1]))]
        w = first[np.isfinite(score[first])]
        tgt = ids[q[w]]
        state[tgt] = code
        gnorm[tgt] = fo[w]
        gtri[tgt] = cb.triangle[w]
        floor[tgt] = cb.point[w] @ self._u
        return w

    def _ground_from_contacts(self, ids, cur, state, gnorm, gtri, floor, g_n, g_tri):
        s = self.settings
        u = self._u
        cos_slope = self._cos
        feet = cur[ids]
        self.mesh_calls += 1
        cb = self.mesh.capsule_contacts_many(feet + self._ua, feet + self._ub,
                                             s.radius + self._probe)
        state[ids] = IN_AIR
        if not cb.query.size:
            return
        q = cb.query
        face = self.mesh.normals[cb.triangle]
        fc = _dot(face, cb.normal)
        fo = face * np.where(fc < 0.0, -1.0, 1.0)[:, None]
        up_f = fo @ u
        up_c = cb.normal @ u
        sup = (up_c > SUPPORT_MIN_COS) & (up_f > 0.0)
        walk = sup & (up_f >= cos_slope)
        # steep supports first (overwritten below by walkable ones and funnels)
        self._best_per_query(ids, q, np.where(sup, up_c, -np.inf), ON_STEEP_GROUND, fo, cb,
                             state, gnorm, gtri, floor)
        # best walkable support per character: the contact most directly below (highest
        # contact normal . up), then deepest (stable order)
        w = self._best_per_query(ids, q, np.where(walk, up_c, -np.inf), ON_GROUND, fo, cb,
                                 state, gnorm, gtri, floor)
        # funnel: several steep supports whose normals average to a walkable one (Godot)
        only = np.ones(ids.size, bool)  # characters without a walkable support
        only[q[w]] = False
        if only.any():
            m = only[q] & sup
            if m.any():
                acc = np.zeros((ids.size, 3))
                np.add.at(acc, q[m], fo[m])
                cnt = np.bincount(q[m], minlength=ids.size)
                avg, alen = _unit_rows(acc)
                fun = (cnt >= 2) & (alen > 0.0) & (avg @ u >= cos_slope)
                if fun.any():
                    state[ids[fun]] = ON_GROUND
                    gnorm[ids[fun]] = avg[fun]
