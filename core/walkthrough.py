"""Simulated walk-through: a character controller follows a path and reports what stops it.

Frame and units: world space, metres, seconds, degrees; ``settings.up`` is up.

``walkthrough(mesh, path, settings)`` puts the character's foot (lowest point of the upright
capsule) at ``path[0]``, steers it horizontally toward each next path point at
``speed`` under gravity, and records every frame: foot position, grounded flag, ground
state and ground normal. It ends with ``reached_goal`` (foot within ``settings.radius``
horizontally of the last point), ``stuck`` (less than STUCK_MIN_PROGRESS metres of progress
along the path in STUCK_SECONDS), a fall out of the level, or ``max_time`` (default
3 x path length / speed + WALK_TIME_SLACK seconds).

Events (``WalkEvent(kind, time, position, value, triangle)``):

- ``blocked``: less than BLOCKED_PROGRESS_FRACTION of the desired step was made against an
  obstacle that is neither a step, a steep slope nor a low ceiling (a wall). value: None.
- ``step_too_high``: blocked by an obstacle whose top is more than ``step_height`` above the
  floor (value: that rise, m), or whose riser is climbable but whose tread is shallower than
  ``min_step_depth`` (value: the rise ``min_step_depth`` past the riser, m).
- ``slope_too_steep``: blocked by, or standing on, a face steeper than ``max_slope_deg``
  (value: the face's angle from up, degrees).
- ``fell``: landed (or ended the walk, or left the level) more than ``step_height`` below the
  last ground height (value: the drop, m).
- ``ceiling_too_low``: blocked by an overhang under which the clearance (floor to ceiling,
  measured by rays just past the obstacle) is less than ``height`` (value: clearance, m).
- ``stuck``: no progress for STUCK_SECONDS (value: seconds since the last progress).
- ``reached_goal``: value: horizontal distance to the last path point, m.

An event of a kind is not repeated while the character stays within 2 x radius of where that
kind last fired. ``triangle`` is the mesh triangle that caused it (-1 if none).

``walkthrough_many`` steps N characters in lock-step: every controller phase is one batched
mesh call for all of them. ``compare_frame_rates`` runs a walk at 30/60/120 Hz and reports
where the verdicts differ.
"""

from __future__ import annotations

import math
import multiprocessing
from dataclasses import dataclass, field

import numpy as np

from ._validate import as_points
from .constants import (
    BLOCKED_PROGRESS_FRACTION,
    BLOCKED_SECONDS,
    FACE_CONTACT_COS,
    FALL_OUT_OF_WORLD,
    STEP_PROBE_OFFSET,
    STUCK_MIN_PROGRESS,
    STUCK_SECONDS,
    WALK_TIME_SLACK,
    WALL_TOLERANCE_DEG,
)
from .controller import (
    GROUND_STATES,
    IN_AIR,
    ON_GROUND,
    ON_STEEP_GROUND,
    CharacterController,
    ControllerSettings,
    _dot3,
    _HoodCache,
    _mdot3,
)

EVENT_KINDS = ("blocked", "step_too_high", "slope_too_steep", "fell", "ceiling_too_low",
               "stuck", "reached_goal")
_SIN_WALL = math.sin(math.radians(WALL_TOLERANCE_DEG))


def _json_float(x):
    if x is None:
        return None
    x = float(x)
    return x if math.isfinite(x) else None


@dataclass(frozen=True)
class WalkEvent:
    """One verdict of a walk-through.

    kind : one of EVENT_KINDS; time : seconds since the start; position : (3,) foot, metres;
    value : float or None (unit depends on kind, see the module docstring);
    triangle : int mesh triangle that caused it, -1 if none.
    """

    kind: str
    time: float
    position: tuple
    value: float | None
    triangle: int = -1

    def to_dict(self) -> dict:
        return {"kind": self.kind, "time": _json_float(self.time),
                "position": [float(x) for x in self.position],
                "value": _json_float(self.value), "triangle": int(self.triangle)}


@dataclass(eq=False)
class WalkReport:
    """Result of one walk-through.

    trace : (N, 3) foot positions, trace[0] the start (path[0] settled onto the floor);
    grounded : (N,) bool (ground_state == on_ground); ground_state : (N,) int8 codes into
    GROUND_STATES; ground_normal : (N, 3) unit (zeros in the air); events : list[WalkEvent]
    in time order; reached_goal : bool; dt : seconds per frame; duration : seconds walked.
    """

    trace: np.ndarray
    grounded: np.ndarray
    events: list
    reached_goal: bool
    ground_normal: np.ndarray = None
    ground_state: np.ndarray = None
    dt: float = 1.0 / 60.0
    duration: float = 0.0
    stepped: np.ndarray = field(default=None, repr=False)

    def kinds(self) -> list:
        """Event kinds in order of first occurrence (no repeats)."""
        out = []
        for e in self.events:
            if e.kind not in out:
                out.append(e.kind)
        return out

    def first(self, kind: str):
        """The first event of ``kind``, or None."""
        for e in self.events:
            if e.kind == kind:
                return e
        return None

    def trace_bytes(self) -> bytes:
        """Canonical bytes of the trace (positions, grounded, normals) for determinism checks."""
        return (np.ascontiguousarray(self.trace).tobytes()
                + np.ascontiguousarray(self.grounded).tobytes()
                + np.ascontiguousarray(self.ground_normal).tobytes())

    def to_dict(self, include_trace: bool = True) -> dict:
        d = {
            "reached_goal": bool(self.reached_goal),
            "events": [e.to_dict() for e in self.events],
            "dt": float(self.dt),
            "duration": float(self.duration),
            "steps": int(len(self.trace) - 1),
        }
        if include_trace:
            d["trace"] = np.round(self.trace, 6).tolist()
            d["grounded"] = [bool(g) for g in self.grounded]
            d["ground_state"] = [GROUND_STATES[int(s)] for s in self.ground_state]
            d["ground_normal"] = np.round(self.ground_normal, 6).tolist()
        return d


def _as_path(path, name="path") -> np.ndarray:
    p = as_points(path, name)
    if p.shape[0] < 1:
        raise ValueError(f"{name} needs at least one point")
    return p


def default_max_time_many(length, speed):
    """Seconds: 3 x path length / speed + WALK_TIME_SLACK (length in metres, speed m/s)."""
    return 3.0 * np.asarray(length, float) / speed + WALK_TIME_SLACK


def default_max_time(path, speed: float) -> float:
    """Default walk time limit for ``path`` (K, 3) at ``speed`` m/s, seconds."""
    p = _as_path(path)
    length = float(np.sqrt(((p[1:] - p[:-1]) ** 2).sum(1)).sum())
    return float(default_max_time_many(length, float(speed)))


def walkthrough(mesh, path, settings: ControllerSettings | None = None, speed=None,
                dt: float = 1.0 / 60.0, max_time=None) -> WalkReport:
    """Walk one character along ``path`` (K, 3) foot waypoints, metres. See module docstring.

    speed : m/s (default settings.speed); dt : seconds per frame (> 0);
    max_time : seconds (default 3 x path length / speed + WALK_TIME_SLACK).
    """
    return walkthrough_many(mesh, [path], settings, speed=speed, dt=dt, max_time=max_time)[0]


def walkthrough_many(mesh, paths, settings: ControllerSettings | None = None, speed=None,
                     dt: float = 1.0 / 60.0, max_time=None, controller=None,
                     workers: int = 1) -> list:
    """Walk N characters in lock-step, one path each; returns a list of N WalkReports.

    paths : sequence of (K_i, 3) arrays (or an (N, K, 3) array). Each controller phase is
    one batched mesh query for all characters still walking. ``max_time`` may be a scalar or
    (N,) seconds. Identical to N calls of ``walkthrough`` up to float rounding of batched
    kernels.

    workers : processes sharing the characters (default 1: this process only). With
    ``workers > 1`` the characters are dealt round-robin into ``workers`` shares; this
    process walks the first and processes forked from it (copy-on-write: the mesh is not
    copied or pickled) walk the others, each share in lock-step. The reports are those of
    ``workers=1``, in the same order: a character's mesh answers do not depend on the batch
    it is in (bit for bit with this numpy, as the tests check; see the note above on float
    rounding). Where ``fork`` is unavailable (Windows) the walk runs in this process. Do not
    use from inside Blender's UI process (forking it is unsafe); headless pipelines can.
    """
    if isinstance(workers, bool) or not isinstance(workers, (int, np.integer)) or workers < 1:
        raise ValueError(f"workers must be an integer >= 1, got {workers!r}")
    s = settings if settings is not None else ControllerSettings()
    ctrl = controller if controller is not None else CharacterController(mesh, s)
    s = ctrl.settings
    paths = [_as_path(p, f"paths[{i}]") for i, p in enumerate(paths)]
    n_agents = len(paths)
    if n_agents == 0:
        return []
    speed = s.speed if speed is None else float(speed)
    if not (math.isfinite(speed) and speed > 0.0):
        raise ValueError(f"speed must be > 0, got {speed}")
    dt = float(dt)
    if not (math.isfinite(dt) and dt > 0.0):
        raise ValueError(f"dt must be > 0 seconds, got {dt}")
    if max_time is not None:
        mt = np.broadcast_to(np.asarray(max_time, float), (n_agents,)).copy()
        if not np.isfinite(mt).all() or (mt < 0).any():
            raise ValueError("max_time must be finite and >= 0")
        max_time = mt
    workers = min(int(workers), n_agents)
    if workers > 1 and "fork" in multiprocessing.get_all_start_methods():
        return _walk_forked(ctrl, paths, speed, dt, max_time, workers)
    return _Walker(ctrl, paths, speed, dt, max_time).run()


def _walk_share(conn, ctrl, paths, speed, dt, max_time):
    """Child process of ``_walk_forked``: walk one share, send (reports, mesh calls) back."""
    try:
        calls = ctrl.mesh_calls
        out = (_Walker(ctrl, paths, speed, dt, max_time).run(), ctrl.mesh_calls - calls)
    except BaseException as exc:  # noqa: BLE001 - re-raised in the parent
        out = exc
    try:
        conn.send(out)
    finally:
        conn.close()


def _walk_forked(ctrl, paths, speed, dt, max_time, workers):
    """``walkthrough_many`` over ``workers`` processes: share i holds characters i,
    i + workers, ...; this process walks share 0, forked children the others (started
    before share 0 so that all run at once). Child mesh calls are added to
    ``ctrl.mesh_calls``; a child's exception is raised here."""
    ctx = multiprocessing.get_context("fork")
    n = len(paths)
    shares = [np.arange(i, n, workers) for i in range(workers)]

    def share(idx):
        return [paths[i] for i in idx], speed, dt, (None if max_time is None else max_time[idx])

    children = []
    try:
        for idx in shares[1:]:
            recv, send = ctx.Pipe(duplex=False)
            proc = ctx.Process(target=_walk_share, args=(send, ctrl, *share(idx)), daemon=True)
            proc.start()
            send.close()
            children.append((proc, recv))
        reports = [None] * n
        for i, rep in zip(shares[0], _Walker(ctrl, *share(shares[0])).run()):
            reports[i] = rep
        for idx, (proc, recv) in zip(shares[1:], children):
            try:
                got = recv.recv()
            except EOFError:
                proc.join(timeout=5.0)  # reap it, so that its exit code is known
                raise RuntimeError(
                    f"walkthrough_many: worker process exited with code {proc.exitcode} "
                    "before returning its reports") from None
            if isinstance(got, BaseException):
                raise got
            reps, calls = got
            ctrl.mesh_calls += calls
            for i, rep in zip(idx, reps):
                reports[i] = rep
        return reports
    finally:  # children have sent their share (or the walk failed here: stop them)
        for proc, recv in children:
            recv.close()
            proc.join(timeout=5.0)
            if proc.is_alive():
                proc.terminate()
                proc.join()


class _Walker:
    """Lock-step walk of N characters (internal)."""

    def __init__(self, ctrl, paths, speed, dt, max_time):
        self.ctrl = ctrl
        s = self.s = ctrl.settings
        self.u = s.up_vector
        self.u3 = s.up
        self.speed = speed
        self.dt = dt
        n = self.n = len(paths)
        # one character: per-frame vector algebra in Python floats (``_advance_one``; the
        # controller's ``_move_lone``); the controller's switch turns both off (tests)
        self.lone = n == 1 and ctrl._lone_fast
        kmax = max(len(p) for p in paths)
        self.P = np.zeros((n, kmax, 3))
        self.last = np.array([len(p) - 1 for p in paths])
        for i, p in enumerate(paths):
            self.P[i, :len(p)] = p
            self.P[i, len(p):] = p[-1]
        seg = np.sqrt(((self.P[:, 1:] - self.P[:, :-1]) ** 2).sum(-1))  # (n, kmax-1)
        length = seg.sum(1)
        # remaining path length after waypoint k (horizontal)
        segh = self._hlen(self.P[:, 1:] - self.P[:, :-1])
        tail = np.zeros((n, kmax))
        if kmax > 1:
            tail[:, :-1] = np.cumsum(segh[:, ::-1], axis=1)[:, ::-1]
        self.tail = tail
        # max_time: (n,) seconds validated by walkthrough_many, or None (the default)
        mt = default_max_time_many(length, speed) if max_time is None else max_time
        self.max_time = mt
        self.max_steps = np.ceil(mt / dt - 1e-9).astype(np.int64)
        lo, _hi = ctrl.mesh.aabb
        corners = np.array([[x, y, z] for x in (lo[0], _hi[0]) for y in (lo[1], _hi[1])
                            for z in (lo[2], _hi[2])])
        self.kill_h = float((corners @ self.u).min()) - FALL_OUT_OF_WORLD

    def _hlen(self, v):
        vh = v - (v @ self.u)[..., None] * self.u
        return np.sqrt((vh * vh).sum(-1))

    def _hlen3(self, v):
        """``_hlen`` of one vector v (3 floats) in Python floats, same operations."""
        u = self.u3
        a = _mdot3(v, u)
        x, y, z = (v[i] - a * u[i] for i in range(3))
        return math.sqrt((x * x + y * y) + z * z)

    def run(self):
        s, u, n, dt = self.s, self.u, self.n, self.dt
        ctrl = self.ctrl
        # per-frame logs of the characters that moved (memory ~ frames actually walked)
        log_ids, log_pos, log_state, log_normal, log_stepped = [], [], [], [], []
        n_steps = np.zeros(n, np.int64)

        # candidate triangles around each character, kept across frames (batches only)
        hoods = None
        if n > 1 and ctrl._use_hoods and hasattr(ctrl.mesh, "hood_triangles"):
            hoods = _HoodCache(ctrl.mesh, n)
        # settle the start
        b = ctrl._move_many(self.P[:, 0].copy(), np.zeros((n, 3)), np.full(n, IN_AIR, np.int8),
                            np.zeros((n, 3)), np.full(n, np.nan))
        pos = b.position.copy()
        state = b.state.copy()
        gn = b.normal.copy()
        floor = b.floor.copy()
        g_tri, g_gap, g_pt, g_int = (x.copy() for x in b.ground())
        log_ids.append(np.arange(n))
        log_pos.append(pos.copy())
        log_state.append(state.copy())
        log_normal.append(gn.copy())
        log_stepped.append(np.zeros(n, bool))
        vz = np.zeros(n)
        # height of the last floor stood on (the supporting contact, not the foot: a foot
        # perched on an edge dips below it)
        last_ground_h = np.where(np.isfinite(floor), floor, pos @ u)
        k = np.minimum(1, self.last)
        best_rem = np.full(n, np.inf)
        t_best = np.zeros(n)
        done = np.zeros(n, bool)
        reached = np.zeros(n, bool)
        blocked_since = np.full(n, np.nan)
        events = [[] for _ in range(n)]
        last_emit = [dict() for _ in range(n)]
        self._events, self._last_emit = events, last_emit

        step_len = self.speed * dt
        step = 0
        while True:
            t_now = step * dt
            act = np.flatnonzero(~done)
            if not act.size:
                break
            # rows of the walking characters: a slice (views, no gathers) while all walk
            sel = slice(None) if act.size == n else act
            # waypoint advance, goal test
            k, reached_now, dist_goal = self._advance(act, sel, pos, k)
            if reached_now.any():
                for i in act[reached_now]:
                    self._emit(i, "reached_goal", t_now, pos[i], dist_goal[i], -1, force=True)
                    reached[i] = True
                    done[i] = True
            # progress / stuck
            rem_path = self._remaining(pos, k)
            improved = rem_path < best_rem - STUCK_MIN_PROGRESS
            best_rem = np.where(improved, rem_path, best_rem)
            t_best = np.where(improved, t_now, t_best)
            stuck = ~done & (t_now - t_best >= STUCK_SECONDS - 1e-9)
            if stuck.any():
                for i in np.flatnonzero(stuck):
                    self._emit(i, "stuck", t_now, pos[i], t_now - t_best[i], -1, force=True)
                    done[i] = True
            done |= n_steps >= self.max_steps  # timeout
            if done.any():
                act = np.flatnonzero(~done)
                if not act.size:
                    break
                sel = slice(None) if act.size == n else act
            # steering
            p_a = pos[sel]
            k_a = k[sel]
            tgt = self.P[act, k_a]
            to = tgt - p_a
            to_h = to - (to @ u)[:, None] * u
            dist = np.sqrt(np.einsum("ij,ij->i", to_h, to_h))
            dirh = to_h / np.where(dist > 0, dist, 1.0)[:, None]
            want = np.where(k_a == self.last[sel], np.minimum(step_len, dist), step_len)
            st_a = state[sel]
            on_a = st_a == ON_GROUND
            vz_a = np.where(on_a, 0.0, np.maximum(vz[sel] - s.gravity * dt, -s.max_fall_speed))
            disp = dirh * want[:, None] + (vz_a * dt)[:, None] * u
            b = ctrl._move_many(p_a, disp, st_a, gn[sel], floor[sel],
                                ground0=(g_tri[sel], g_gap[sel], g_pt[sel], g_int[sel]),
                                hoods=None if hoods is None else (hoods, act))
            new = b.position
            moved = new - p_a
            # vertical speed from the actual motion, never gaining upward speed from a step
            # (on steep ground the intended vertical speed is kept: its projection on the
            # slope gives the frictionless slide, g sin^2 vertically, at any frame rate)
            b_on = b.state == ON_GROUND
            vz[sel] = np.where(b_on, 0.0, np.where(
                b.state == ON_STEEP_GROUND, vz_a,
                np.minimum((moved @ u) / dt, np.maximum(vz_a, 0.0))))
            prev_state = st_a
            pos[sel] = new
            state[sel] = b.state
            gn[sel] = b.normal
            floor[sel] = b.floor
            g_tri[sel], g_gap[sel], g_pt[sel], g_int[sel] = b.ground()
            n_steps[sel] += 1
            t_after = (step + 1) * dt
            log_ids.append(act)
            log_pos.append(new.copy())
            log_state.append(b.state)
            log_normal.append(b.normal)
            log_stepped.append(b.stepped)
            # events
            h_new = new @ u
            # Drops are measured between walkable floors: resting on a ledge's edge or
            # sliding down a steep face is part of the fall, not a new floor (a walk off a
            # 1.5 m tread reports 1.5 m: tests/test_validate_level.py::test_sample_verdicts).
            supported = b_on
            floor_new = np.where(supported & np.isfinite(b.floor), b.floor, h_new)
            lg = last_ground_h[sel]
            drop = lg - floor_new
            fell = supported & (drop > s.step_height + 1e-9)
            if fell.any():
                for j in np.flatnonzero(fell):
                    i = act[j]
                    self._emit(i, "fell", t_after, new[j], drop[j], int(b.triangle[j]),
                               force=True)
            last_ground_h[sel] = np.where(supported, floor_new, lg)
            out = h_new < self.kill_h
            if out.any():
                for j in np.flatnonzero(out):
                    i = act[j]
                    self._emit(i, "fell", t_after, new[j], last_ground_h[i] - h_new[j], -1,
                               force=True)
                    done[i] = True
            progress = np.einsum("ij,ij->i", moved, dirh)
            blocked = (progress < BLOCKED_PROGRESS_FRACTION * want) & (want > 1e-9) & (
                prev_state != IN_AIR) & ~out
            since = blocked_since[sel]
            since = np.where(blocked, np.where(np.isnan(since), t_now, since), np.nan)
            blocked_since[sel] = since
            blocked &= t_after - since >= BLOCKED_SECONDS - 1e-9
            if blocked.any():
                self._classify(act, np.flatnonzero(blocked), b, dirh, t_after, new)
            step += 1

        # end of walk: fell if in the air below the last ground
        ids = np.concatenate(log_ids)
        order = np.argsort(ids, kind="stable")  # per agent, in frame order
        cuts = np.cumsum(np.bincount(ids, minlength=n))[:-1]
        tr_all = np.split(np.concatenate(log_pos)[order], cuts)
        st_all = np.split(np.concatenate(log_state)[order], cuts)
        nm_all = np.split(np.concatenate(log_normal)[order], cuts)
        sp_all = np.split(np.concatenate(log_stepped)[order], cuts)
        reports = []
        for i in range(n):
            ns = int(n_steps[i])
            h = pos[i] @ u
            if state[i] == IN_AIR and last_ground_h[i] - h > s.step_height and not any(
                    e.kind == "fell" and e.triangle == -1 and e.time == ns * dt
                    for e in events[i]):
                self._emit(i, "fell", ns * dt, pos[i], last_ground_h[i] - h, -1, force=True)
            ev = sorted(events[i], key=lambda e: (e.time, EVENT_KINDS.index(e.kind)))
            reports.append(WalkReport(
                trace=tr_all[i], grounded=st_all[i] == ON_GROUND,
                events=ev, reached_goal=bool(reached[i]),
                ground_normal=nm_all[i], ground_state=st_all[i].astype(np.int8),
                dt=dt, duration=ns * dt, stepped=sp_all[i]))
        return reports

    # -------------------------------------------------------------- helpers
    def _advance(self, act, sel, pos, k):
        """Advance the waypoint index k (N,) of the walking characters ``act`` (``sel`` the
        same rows as an index or a slice). Returns (k, reached (act,), goal distance (N,))."""
        if self.lone:
            return self._advance_one(pos, k)
        u, r = self.u, self.s.radius
        k = k.copy()
        p_a = pos[sel]
        last = self.last[sel]
        for _ in range(self.P.shape[1]):
            k_a = k[sel]
            can = k_a < last
            if not can.any():
                break
            tgt = self.P[act, k_a]
            prev = self.P[act, np.maximum(k_a - 1, 0)]
            dh = self._hlen(tgt - p_a)
            seg = tgt - prev
            seg_h = seg - (seg @ u)[:, None] * u
            sl2 = np.einsum("ij,ij->i", seg_h, seg_h)
            rel = p_a - prev
            tproj = np.einsum("ij,ij->i", rel, seg_h) / np.where(sl2 > 0, sl2, 1.0)
            adv = can & ((dh <= r) | ((tproj >= 1.0) & (sl2 > 0)))
            if not adv.any():
                break
            k[act[adv]] += 1
        tgt = self.P[act, last]
        dist_goal = self._hlen(tgt - p_a)
        reached = (k[sel] == last) & (dist_goal <= r)
        dg = np.zeros(len(pos))
        dg[act] = dist_goal
        return k, reached, dg

    def _advance_one(self, pos, k):
        """``_advance`` for one walking character, in Python floats (the same operations in
        the same order: bit-identical)."""
        u, r = self.u3, self.s.radius
        p = pos[0].tolist()
        P = self.P[0]
        last = int(self.last[0])
        kk = int(k[0])
        while kk < last:
            tgt = P[kk].tolist()
            prev = P[max(kk - 1, 0)].tolist()
            seg = [tgt[i] - prev[i] for i in range(3)]
            a = _mdot3(seg, u)
            seg_h = [seg[i] - a * u[i] for i in range(3)]
            sl2 = _dot3(seg_h, seg_h)
            tproj = _dot3([p[i] - prev[i] for i in range(3)], seg_h) / (sl2 if sl2 > 0 else 1.0)
            if not (self._hlen3([tgt[i] - p[i] for i in range(3)]) <= r
                    or (tproj >= 1.0 and sl2 > 0)):
                break
            kk += 1
        goal = P[last].tolist()
        dist_goal = self._hlen3([goal[i] - p[i] for i in range(3)])
        return (np.array([kk]), np.array([kk == last and dist_goal <= r]),
                np.array([dist_goal]))

    def _remaining(self, pos, k):
        if self.lone:
            kk = int(k[0])
            p, t = pos[0].tolist(), self.P[0, kk].tolist()
            return np.array([self._hlen3([t[i] - p[i] for i in range(3)]) + self.tail[0, kk]])
        idx = np.arange(self.n)
        return self._hlen(self.P[idx, k] - pos) + self.tail[idx, k]

    def _emit(self, i, kind, t, position, value, triangle, force=False):
        last = self._last_emit[i].get(kind)
        p = np.asarray(position, float)
        if not force and last is not None and self._hlen(p - last) < 2.0 * self.s.radius:
            return
        self._last_emit[i][kind] = p.copy()
        self._events[i].append(WalkEvent(kind, float(t), tuple(float(x) for x in p),
                                         None if value is None else float(value), int(triangle)))

    def _classify(self, act, js, b, dirh, t, new):
        """Name the reason of blocked frames js (indices into act)."""
        s, u = self.s, self.u
        ctrl = self.ctrl
        mesh = ctrl.mesh
        cos_slope = s.cos_max_slope
        probe = s.ground_probe
        steep_ground = js[b.state[js] == ON_STEEP_GROUND]
        for j in steep_ground:
            ang = math.degrees(math.acos(max(-1.0, min(1.0, float(b.normal[j] @ u)))))
            self._emit(act[j], "slope_too_steep", t, new[j], ang, int(b.triangle[j]))
        js = js[(b.state[js] != ON_STEEP_GROUND) & (b.block_triangle[js] >= 0)]
        if not js.size:
            return
        tri = b.block_triangle[js]
        bn = b.block_normal[js]
        face = mesh.normals[tri]
        fc = np.einsum("ij,ij->i", face, bn)
        fo = face * np.where(fc < 0, -1.0, 1.0)[:, None]
        up_f = fo @ u
        interior = np.abs(fc) >= FACE_CONTACT_COS
        slope = interior & (up_f > _SIN_WALL) & (up_f < cos_slope)
        ceiling = ~slope & ((up_f < -_SIN_WALL) | (bn @ u < -_SIN_WALL))
        wall = ~slope & ~ceiling
        for j, uf, tr in zip(js[slope], up_f[slope], tri[slope]):
            ang = math.degrees(math.acos(max(-1.0, min(1.0, float(uf)))))
            self._emit(act[j], "slope_too_steep", t, new[j], ang, int(tr))
        # rays: riser / tread (walls lacking them) and clearance (ceilings), one call
        floor_h = np.where(np.isfinite(b.floor[js]), b.floor[js], new[js] @ u)
        bp = b.block_point[js]
        bp_h = bp - np.outer(bp @ u, u)
        d = dirh[js]
        top = floor_h + s.height + s.step_height
        x1 = bp_h + d * STEP_PROBE_OFFSET
        x2 = bp_h + d * max(s.min_step_depth, STEP_PROBE_OFFSET)
        mid = floor_h + s.step_height
        origins = np.concatenate([x1 + np.outer(top, u), x2 + np.outer(top, u),
                                  x1 + np.outer(mid, u), x1 + np.outer(mid, u)])
        m = js.size
        dirs = np.concatenate([np.tile(-u, (2 * m, 1)), np.tile(u, (m, 1)),
                               np.tile(-u, (m, 1))])
        maxd = np.concatenate([np.full(2 * m, s.height + 2 * s.step_height),
                               np.full(m, 4.0 * s.height), np.full(m, 2.0 * s.step_height)])
        ctrl.mesh_calls += 1
        rays = mesh.raycast_many(origins, dirs, maxd)
        tt = rays.time
        face_up = np.where(rays.triangle >= 0, mesh.normals[np.maximum(rays.triangle, 0)] @ u,
                           1.0)
        rise = np.where(np.isfinite(tt), s.height + s.step_height - tt, -np.inf)
        rise = np.where((face_up < 0.0) & np.isfinite(tt), np.inf, rise)
        r1 = np.where(np.isnan(b.riser_rise[js]), rise[:m], b.riser_rise[js])
        r2 = np.where(np.isnan(b.tread_rise[js]), rise[m:2 * m], b.tread_rise[js])
        t_up = tt[2 * m:3 * m]
        t_dn = tt[3 * m:]
        clearance = t_up + np.where(np.isfinite(t_dn), t_dn, s.step_height)
        for jj in range(m):
            j = js[jj]
            i = act[j]
            trj = int(tri[jj])
            if slope[jj]:
                continue
            if ceiling[jj]:
                c = clearance[jj]
                if np.isfinite(c) and c < s.height:
                    self._emit(i, "ceiling_too_low", t, new[j], c, trj)
                else:
                    self._emit(i, "blocked", t, new[j], None, trj)
                continue
            if wall[jj]:
                if s.step_height < r1[jj] < s.height:
                    self._emit(i, "step_too_high", t, new[j], r1[jj], trj)
                elif r1[jj] <= s.step_height + probe and s.step_height + probe < r2[jj] < s.height:
                    self._emit(i, "step_too_high", t, new[j], r2[jj], trj)
                elif np.isfinite(t_up[jj]) and clearance[jj] < s.height and r1[jj] <= s.step_height:
                    self._emit(i, "ceiling_too_low", t, new[j], clearance[jj], trj)
                else:
                    self._emit(i, "blocked", t, new[j], None, trj)


# ---------------------------------------------------------------- frame-rate comparison
@dataclass(eq=False)
class FrameRateReport:
    """The same walk at several frame rates and where the verdicts differ.

    rates : tuple of Hz; reports : {Hz: WalkReport}; verdicts : {Hz: {"reached_goal",
    "kinds"}}; differences : list of dicts ({"what", "kind", "present_at", "absent_at",
    "positions"}); consistent : bool (no differences).
    """

    rates: tuple
    reports: dict
    verdicts: dict
    differences: list
    consistent: bool

    def to_dict(self) -> dict:
        return {
            "rates": list(self.rates),
            "consistent": bool(self.consistent),
            "verdicts": {str(k): v for k, v in self.verdicts.items()},
            "differences": self.differences,
            "reports": {str(k): r.to_dict(include_trace=False) for k, r in self.reports.items()},
        }


def _verdict(rep: WalkReport) -> dict:
    return {"reached_goal": bool(rep.reached_goal), "kinds": sorted(set(rep.kinds()))}


def compare_frame_rates(mesh, path, settings: ControllerSettings | None = None,
                        rates=(30, 60, 120), speed=None, max_time=None,
                        position_tolerance=None) -> FrameRateReport:
    """Run ``walkthrough`` at each rate (Hz) and report differing verdicts.

    A difference is: reached_goal differs; an event kind present at some rates only; or the
    first event of a kind present at all rates lying farther apart than
    ``position_tolerance`` (default 2 x radius) metres between rates.
    """
    s = settings if settings is not None else ControllerSettings()
    ctrl = CharacterController(mesh, s)
    rates = tuple(int(r) if float(r).is_integer() else float(r) for r in rates)
    if not rates or any(r <= 0 for r in rates):
        raise ValueError("rates must be positive frame rates in Hz")
    tol = 2.0 * s.radius if position_tolerance is None else float(position_tolerance)
    reports = {hz: walkthrough_many(mesh, [path], s, speed=speed, dt=1.0 / hz,
                                    max_time=max_time, controller=ctrl)[0] for hz in rates}
    verdicts = {hz: _verdict(r) for hz, r in reports.items()}
    diffs = []
    goals = {hz: v["reached_goal"] for hz, v in verdicts.items()}
    if len(set(goals.values())) > 1:
        diffs.append({"what": "reached_goal",
                      "present_at": [hz for hz in rates if goals[hz]],
                      "absent_at": [hz for hz in rates if not goals[hz]]})
    kinds = sorted(set().union(*[set(v["kinds"]) for v in verdicts.values()]))
    for kind in kinds:
        present = [hz for hz in rates if kind in verdicts[hz]["kinds"]]
        absent = [hz for hz in rates if hz not in present]
        firsts = {hz: reports[hz].first(kind) for hz in present}
        positions = {str(hz): list(firsts[hz].position) for hz in present}
        if absent:
            diffs.append({"what": "event", "kind": kind, "present_at": present,
                          "absent_at": absent, "positions": positions})
            continue
        pts = np.array([firsts[hz].position for hz in present])
        spread = float(np.sqrt(((pts[:, None] - pts[None]) ** 2).sum(-1)).max())
        if spread > tol:
            diffs.append({"what": "position", "kind": kind, "present_at": present,
                          "absent_at": [], "positions": positions, "spread": spread})
    return FrameRateReport(rates, reports, verdicts, diffs, not diffs)
