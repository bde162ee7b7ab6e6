"""Simulated walk-through: a character controller follows a path and reports what stops it.

Frame and units: world space, metres, seconds, degrees; ``settings.up`` is up.

``walkthrough(mesh, path, settings)`` puts the character's foot (lowest point of the upright
capsule) at ``path[0]``, steers it horizontally toward each next path point at
``speed`` under gravity, and records every frame: foot position, grounded flag, ground
state and ground normal. It ends with ``reached_goal`` (standing on ground, foot within
``settings.radius`` horizontally of the last point), ``stuck`` (less than STUCK_MIN_PROGRESS m
of progress along the path in STUCK_SECONDS), ``fell_out_of_level``, or ``max_time`` (default
3 x path length / speed + WALK_TIME_SLACK seconds). With ``stop_early=False`` only
``fell_out_of_level`` and ``max_time`` end a walk (``walkthrough_many``).

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
- ``fell_out_of_level``: airborne more than ``step_height`` below the last floor with no
  floor within FALL_OUT_OF_LEVEL_DISTANCE straight below (a capsule sweep), or below the
  mesh by FALL_OUT_OF_WORLD; ends the walk (value: the drop so far, m; a ``fell`` with the
  same drop comes with it).
- ``ceiling_too_low``: blocked by an overhang under which the clearance (floor to ceiling,
  measured by rays just past the obstacle) is less than ``height`` (value: clearance, m).
- ``stuck``: no progress for STUCK_SECONDS (value: seconds since the last progress).
- ``reached_goal``: standing on walkable ground (``on_ground``) with the foot within
  ``radius`` horizontally of the last path point (a character flying over the goal, or
  sliding down a slope at it, has not reached it); value: that distance, m.

``WalkReport.ended_airborne`` says whether the walk ended in the air.

An event of a kind is not repeated while the character stays within 2 x radius of where that
kind last fired. ``triangle`` is the mesh triangle that caused it (-1 if none).

``walkthrough_many`` steps N characters in lock-step: every controller phase is one batched
mesh call for all of them. ``compare_frame_rates`` runs a walk at 30/60/120 Hz and reports
where the verdicts differ.
"""

from __future__ import annotations

import math

import numpy as np

from ..controller.controller import CharacterController
from ..controller.settings import ControllerSettings
from ..geometry.validate import as_points
from .report import EVENT_KINDS, FrameRateReport, WalkEvent, WalkReport
from .shares import can_fork, check_workers, run_shares
from .walker import Walker, default_max_time_many

__all__ = ["walkthrough", "walkthrough_many", "compare_frame_rates", "default_max_time",
           "default_max_time_many", "EVENT_KINDS", "FRAME_RATES", "WalkEvent", "WalkReport",
           "FrameRateReport"]


FRAME_RATES = (30, 60, 120)  # Hz: the rates games ship at, compared by compare_frame_rates

def _as_path(path, name="path") -> np.ndarray:
    p = as_points(path, name)
    if p.shape[0] < 1:
        raise ValueError(f"{name} needs at least one point")
    return p


def default_max_time(path, speed: float) -> float:
    """Default walk time limit for ``path`` (K, 3) at ``speed`` m/s, seconds."""
    p = _as_path(path)
    length = float(np.sqrt(((p[1:] - p[:-1]) ** 2).sum(1)).sum())
    return float(default_max_time_many(length, float(speed)))


def walkthrough(mesh, path, settings: ControllerSettings | None = None, speed=None,
                dt: float = 1.0 / 60.0, max_time=None, stop_early: bool = True) -> WalkReport:
    """Walk one character along ``path`` (K, 3) foot waypoints, metres. See module docstring.

    speed : m/s (default settings.speed); dt : seconds per frame (> 0);
    max_time : seconds (default 3 x path length / speed + WALK_TIME_SLACK);
    stop_early : see ``walkthrough_many``.
    """
    return walkthrough_many(mesh, [path], settings, speed=speed, dt=dt, max_time=max_time,
                            stop_early=stop_early)[0]


def walkthrough_many(mesh, paths, settings: ControllerSettings | None = None, speed=None,
                     dt: float = 1.0 / 60.0, max_time=None, controller=None,
                     workers: int = 1, stop_early: bool = True) -> list:
    """Walk N characters in lock-step, one path each; returns a list of N WalkReports.

    paths : sequence of (K_i, 3) arrays (or an (N, K, 3) array). Each controller phase is
    one batched mesh query for all characters still walking. ``max_time`` may be a scalar or
    (N,) seconds. Identical to N calls of ``walkthrough`` up to float rounding of batched
    kernels.

    controller : an existing CharacterController to walk with (its mesh-call counter and
    caches are shared); it must move through ``mesh`` with ``settings`` when those are given
    (ValueError otherwise; pass ``mesh=None, settings=None`` to use the controller's).

    workers : processes sharing the characters (default 1: this process only). With
    ``workers > 1`` the characters are dealt round-robin into ``workers`` shares, each
    walked in lock-step by a process forked from this one (copy-on-write: the mesh is not
    copied or pickled; ``core.walk.shares``). The reports are those of
    ``workers=1``, in the same order: a character's mesh answers do not depend on the batch
    it is in (bit for bit with this numpy, as the tests check; see the note above on float
    rounding). Where ``fork`` is unavailable (Windows) the walk runs in this process. Do not
    use from inside Blender's UI process (forking it is unsafe); headless pipelines can.

    stop_early : end a walk when it reaches its goal or is stuck (default). False: every
    walk runs its whole ``max_time`` (``fell_out_of_level`` still ends one), as the engine
    peers' ``stop_at_goal: false``: a walk that reaches its goal stands on it (its last
    frame shortened to land there), one that is held slides on; ``reached_goal`` and
    ``stuck`` are named when each begins (``stuck`` once per spell without progress) and
    ``WalkReport.reached_goal`` is the last frame's (standing within ``radius`` of the goal).
    tools/bench_engines.py compares ends after the same walk this way.
    """
    check_workers(workers)
    ctrl = _controller(mesh, settings, controller)
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
    if workers > 1 and can_fork():
        return _walk_forked(ctrl, paths, speed, dt, max_time, workers, stop_early)
    return Walker(ctrl, paths, speed, dt, max_time, stop_early).run()


def _controller(mesh, settings, controller):
    """The controller a walk uses: ``controller`` (which must move through ``mesh`` with
    ``settings`` when those are given), else a new one."""
    if controller is None:
        return CharacterController(mesh, settings if settings is not None else
                                   ControllerSettings())
    if mesh is not None and controller.mesh is not mesh:
        raise ValueError("controller moves through another mesh than mesh; pass mesh=None "
                         "or the controller's mesh")
    if settings is not None and settings != controller.settings:
        raise ValueError("settings differ from controller.settings; pass settings=None or "
                         "the controller's settings")
    return controller


def _walk_forked(ctrl, paths, speed, dt, max_time, workers, stop_early):
    """``walkthrough_many`` over ``workers`` processes (``core.walk.shares.run_shares``):
    share i holds characters i, i + workers, ...; child mesh calls are added to
    ``ctrl.mesh_calls``; a child's exception is raised here."""
    def walk(idx):
        calls = ctrl.mesh_calls
        mt = None if max_time is None else max_time[idx]
        reps = Walker(ctrl, [paths[i] for i in idx], speed, dt, mt, stop_early).run()
        return reps, ctrl.mesh_calls - calls

    shares, results = run_shares(walk, len(paths), workers, "walkthrough_many")
    reports = [None] * len(paths)
    if len(shares) > 1:  # the children's calls (one share alone was walked here)
        ctrl.mesh_calls += sum(calls for _reps, calls in results)
    for idx, (reps, _calls) in zip(shares, results):
        for i, rep in zip(idx, reps):
            reports[i] = rep
    return reports


def _verdict(rep: WalkReport) -> dict:
    return {"reached_goal": bool(rep.reached_goal), "kinds": sorted(set(rep.kinds()))}


def compare_frame_rates(mesh, path, settings: ControllerSettings | None = None,
                        rates=FRAME_RATES, speed=None, max_time=None,
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
    diffs: list[dict] = []
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
