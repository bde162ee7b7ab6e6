"""Walk-through benchmark rows for tools/bench.py (and standalone use).

``rows(scene_name, mesh, quick) -> list[(label, formatted value)]``: walk-through steps per
second for one character and agent-steps per second for 256 characters in lock-step
(``walkthrough_many``), on paths laid over the scene's surface, in one process and, on a
machine with several cores, shared among that many processes (``workers=``); each row is
the fastest of ``REPEATS`` identical walks (one with ``quick``). Targets (issue 4) on the
~1M-triangle terrain: >= 2,000 steps/s for one agent, >= 50,000 agent-steps/s for 256.

``blocked_vs_open()``: one character walking on open ground against one pushing into a wall
(a 40 m floor of 12,800 triangles with a 3 m wall), steps per second and mesh calls per step
of each; a blocked character should cost at most twice an open-ground one (issue 12). Its row
comes with the ``stairs_ramps`` scene's rows.

Standalone:  python tools/bench_walk.py [--quick] [--scene terrain_1M] [--scaling] [--blocked]
(``--scaling``: agent-steps per second against the number of characters, in one process;
``--blocked``: only the blocked-against-open row.)
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np
from capsule_collision.core.controller.controller import CharacterController
from capsule_collision.core.controller.settings import ControllerSettings
from capsule_collision.core.walk.walkthrough import walkthrough_many

TARGET_SINGLE = 2_000.0  # steps / s, one agent
TARGET_MANY = 50_000.0  # agent-steps / s, 256 agents
REPEATS = 3  # walks per row; a row reports the fastest


def surface_paths(mesh, n_paths, length=12.0, waypoints=4, seed=0, up=(0.0, 0.0, 1.0)):
    """n_paths deterministic foot paths (waypoints, 3) on the mesh's upper surface.

    Straight lines of ``length`` metres in random directions, inside the middle 80 % of the
    mesh's bounds; each waypoint is dropped onto the surface with a downward ray.
    Paths whose first point finds no surface are skipped.
    """
    rng = np.random.default_rng(seed)
    lo, hi = mesh.aabb
    span = hi - lo
    out = []
    tries = 0
    while len(out) < n_paths and tries < 20 * n_paths:
        tries += 1
        start = lo[:2] + span[:2] * rng.uniform(0.1, 0.9, 2)
        ang = rng.uniform(0.0, 2.0 * np.pi)
        d = np.array([np.cos(ang), np.sin(ang)])
        xy = start + np.outer(np.linspace(0.0, length, waypoints), d)
        xy = np.clip(xy, lo[:2] + 0.05 * span[:2], hi[:2] - 0.05 * span[:2])
        origins = np.column_stack([xy, np.full(waypoints, hi[2] + 1.0)])
        res = mesh.raycast_many(origins, np.tile([0.0, 0.0, -1.0], (waypoints, 1)))
        if not np.isfinite(res.time).all() or (res.normal[:, 2] < 0.8).any():
            continue
        out.append(origins - np.outer(res.time, [0.0, 0.0, 1.0]))
    return out


def measure(mesh, n_agents, length, seed=0, dt=1.0 / 60.0, settings=None, workers=1,
            repeats=REPEATS):
    """(agent-steps per second, total agent-steps, mesh calls, reports) for n_agents in
    lock-step, shared among ``workers`` processes (``walkthrough_many(workers=)``); the
    fastest of ``repeats`` identical walks (timeit's rule: the least disturbed run)."""
    s = settings or ControllerSettings()
    paths = surface_paths(mesh, n_agents, length=length, seed=seed)
    ctrl = CharacterController(mesh, s)
    walkthrough_many(mesh, paths[:1], s, dt=dt, max_time=0.1, controller=ctrl)  # warm-up

    def walk():
        ctrl.mesh_calls = 0
        return walkthrough_many(mesh, paths, s, dt=dt, controller=ctrl, workers=workers)

    best, reps = _fastest(walk, repeats)
    steps = sum(len(r.trace) - 1 for r in reps)
    return steps / best, steps, ctrl.mesh_calls, reps


def _fastest(walk, repeats):
    """(the least of ``repeats`` timings of ``walk()``, the last walk's result)."""
    best = np.inf
    for _ in range(repeats):
        t0 = time.perf_counter()
        out = walk()
        best = min(best, time.perf_counter() - t0)
    return best, out


def wall_floor(size=40.0, cell=0.5, wall_x=5.0):
    """(vertices, triangles) of a flat floor ``size`` m square in ``cell`` m cells at z = 0
    and a closed 3 m tall, 0.2 m thick wall box across it at x = ``wall_x``."""
    n = int(round(size / cell))
    xs = np.linspace(-size / 2, size / 2, n + 1)
    gx, gy = np.meshgrid(xs, xs, indexing="ij")
    v = np.column_stack([gx.ravel(), gy.ravel(), np.zeros(gx.size)])
    idx = np.arange(v.shape[0]).reshape(n + 1, n + 1)
    a, b = idx[:-1, :-1].ravel(), idx[1:, :-1].ravel()
    c, d = idx[1:, 1:].ravel(), idx[:-1, 1:].ravel()
    tris = [np.stack([a, b, c], 1), np.stack([a, c, d], 1)]
    x0, x1, y0, y1 = wall_x, wall_x + 0.2, -size / 2, size / 2
    box = np.array([[x, y, z] for z in (0.0, 3.0) for y in (y0, y1) for x in (x0, x1)])
    faces = np.array([[0, 3, 1], [0, 2, 3], [4, 5, 7], [4, 7, 6], [0, 1, 5], [0, 5, 4],
                      [2, 6, 7], [2, 7, 3], [0, 4, 6], [0, 6, 2], [1, 3, 7], [1, 7, 5]])
    tris.append(faces + v.shape[0])
    return np.concatenate([v, box]), np.concatenate(tris)


def blocked_vs_open(repeats=REPEATS, dt=1.0 / 60.0):
    """((open steps/s, mesh calls/step, report), (blocked steps/s, mesh calls/step, report)):
    one character walking 12 m along the floor, one pushing into the wall from 0.1 m before
    it until it is stuck (1 s after its last progress); each the fastest of ``repeats``."""
    from capsule_collision.core.mesh.triangle_mesh import TriangleMesh

    mesh = TriangleMesh(*wall_floor())
    s = ControllerSettings()
    out = []
    for path in ([[-15.0, -6.0, 0.0], [-15.0, 6.0, 0.0]],
                 [[5.0 - s.radius - 0.1, 0.0, 0.0], [15.0, 0.0, 0.0]]):
        ctrl = CharacterController(mesh, s)
        walkthrough_many(mesh, [path], s, dt=dt, max_time=0.1, controller=ctrl)  # warm-up

        def walk(path=path, ctrl=ctrl):
            ctrl.mesh_calls = 0
            return walkthrough_many(mesh, [path], s, dt=dt, controller=ctrl)[0]

        best, rep = _fastest(walk, repeats)
        steps = len(rep.trace) - 1
        out.append((steps / best, ctrl.mesh_calls / max(steps, 1), rep))
    return tuple(out)


def blocked_row(quick):
    """The (label, value) row of ``blocked_vs_open``."""
    (r_open, c_open, _), (r_blk, c_blk, rep) = blocked_vs_open(1 if quick else REPEATS)
    return ("walk-through, 1 agent: open ground vs blocked by a wall (steps/s)",
            f"{r_open:,.0f} open ({c_open:.2f} mesh calls/step), {r_blk:,.0f} blocked "
            f"({c_blk:.2f}/step, {'/'.join(rep.kinds())}): a blocked step costs "
            f"{r_open / r_blk:.2f}x an open one (target <= 2)")


def rows(scene_name, mesh, quick):
    """Benchmark rows for one scene (label, formatted value)."""
    out = [blocked_row(quick)] if scene_name == "stairs_ramps" else []
    n_many = 32 if quick else 256
    length = 4.0 if quick else 12.0
    if not surface_paths(mesh, 1, length=length, seed=1):
        return [("walk-through", "n/a (no walkable surface to lay paths on)")]
    rep = 1 if quick else REPEATS  # --quick checks that the rows run, it times nothing
    rate1, steps1, calls1, _ = measure(mesh, 1, length, seed=1, repeats=rep)
    out.append(("walk-through, 1 agent (steps/s)",
                f"{rate1:,.0f} ({steps1} steps, {calls1 / max(steps1, 1):.2f} mesh calls/step;"
                f" target {TARGET_SINGLE:,.0f})"))
    rate_n, steps_n, calls_n, reps = measure(mesh, n_many, length, seed=2, repeats=rep)
    goal = np.mean([r.reached_goal for r in reps]) if reps else 0.0
    out.append((f"walk-through, {n_many} agents (agent-steps/s)",
                f"{rate_n:,.0f} ({steps_n} agent-steps, {calls_n} mesh calls = "
                f"{calls_n / max(max((len(r.trace) - 1 for r in reps), default=1), 1):.2f}"
                f"/frame, "
                f"{goal:.0%} reached goal; target {TARGET_MANY:,.0f} for 256)"))
    workers = min(os.cpu_count() or 1, 8)
    if workers > 1:
        rate_w, steps_w, _, reps_w = measure(mesh, n_many, length, seed=2, workers=workers,
                                             repeats=rep)
        same = all(x.trace_bytes() == y.trace_bytes() and x.events == y.events
                   for x, y in zip(reps, reps_w))
        out.append((f"walk-through, {n_many} agents, {workers} processes (agent-steps/s)",
                    f"{rate_w:,.0f} ({steps_w} agent-steps; {rate_w / rate_n:.2f}x one "
                    f"process; {'the same reports' if same else 'REPORTS DIFFER'})"))
    return out


def scaling(mesh, sizes=(32, 64, 128, 256, 512, 1024), seconds=2.5, length=12.0, seed=2,
            dt=1.0 / 60.0, repeats=2):
    """Agent-steps per second against the batch size, in one process.

    Every character walks for ``seconds`` (``max_time``), so that the few characters still
    walking after the others have arrived do not weigh on a size. Returns a list of
    (agents, agent-steps, seconds (best of ``repeats``), ms per lock-step frame, marginal
    agent-steps per second from the previous size): the marginal rate is the batch's
    ceiling, what one more character costs once the per-frame fixed cost is paid.
    """
    s = ControllerSettings()
    paths = surface_paths(mesh, max(sizes), length=length, seed=seed)
    ctrl = CharacterController(mesh, s)
    walkthrough_many(mesh, paths[:1], s, dt=dt, max_time=0.1, controller=ctrl)  # warm-up
    out = []
    prev = None
    for n in sizes:
        if n > len(paths):
            break
        some = paths[:n]
        best, reps = _fastest(lambda some=some: walkthrough_many(
            mesh, some, s, dt=dt, max_time=seconds, controller=ctrl), repeats)
        steps = sum(len(r.trace) - 1 for r in reps)
        frames = max(len(r.trace) - 1 for r in reps)
        marginal = np.nan
        if prev is not None and best > prev[1]:
            marginal = (steps - prev[0]) / (best - prev[1])
        out.append((n, steps, best, best / frames * 1e3, marginal))
        prev = (steps, best)
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--scene", default=None)
    ap.add_argument("--scaling", action="store_true",
                    help="agent-steps/s against the number of characters, one process")
    ap.add_argument("--blocked", action="store_true",
                    help="only the row comparing a blocked character with an open-ground one")
    args = ap.parse_args(argv)
    if args.blocked:
        label, value = blocked_row(args.quick)
        print(f"| {label} | {value} |")
        return
    import scenes

    table = scenes.QUICK_SCENES if args.quick else scenes.SCENES
    name = args.scene or ("terrain_small" if args.quick else "terrain_1M")
    from capsule_collision.core.mesh.triangle_mesh import TriangleMesh

    t0 = time.perf_counter()
    mesh = TriangleMesh(*table[name]())
    print(f"{name}: {mesh.n_triangles} triangles, built in {time.perf_counter() - t0:.1f} s")
    if args.scaling:
        sizes = (8, 16, 32) if args.quick else (32, 64, 128, 256, 512, 1024)
        print("| agents | agent-steps | s | ms/frame | agent-steps/s | marginal agent-steps/s |")
        print("|---|---|---|---|---|---|")
        for n, steps, el, ms, marginal in scaling(mesh, sizes, seconds=1.0 if args.quick
                                                  else 2.5):
            m = "" if np.isnan(marginal) else f"{marginal:,.0f}"
            print(f"| {n} | {steps} | {el:.3f} | {ms:.2f} | {steps / el:,.0f} | {m} |")
        return
    for label, value in rows(name, mesh, args.quick):
        print(f"| {label} | {value} |")


if __name__ == "__main__":
    main()
