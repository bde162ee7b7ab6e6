"""Benchmark rows for "inside is not clear" (core/mesh/solids.py): what deciding whether a
capsule touching no face sits inside a closed solid costs the capsule verdict.

    CC_REAL_LEVELS=/work/levels python tools/bench_solids.py [--capsules 16]

Per shipped map (clip mesh) and the noisy million-triangle terrain of tools/scenes.py: the
capsule verdict of ``--capsules`` upright Quake players (at the spawns, clear) with the
inside test (today's ``capsule_verdicts``) and without it (the verdict before issue 27, the
test replaced by a no-op in this process), best of 3, and their ratio; then the inside test
alone per point. Figures depend on the machine's load: the load average is printed.
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np
import real_levels
import scenes
from capsule_collision.core import Capsule, TriangleMesh
from capsule_collision.core.checks import verdicts
from capsule_collision.core.mesh.solids import enclosing_solids


def _best(fn, repeat=3):
    best = np.inf
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def row(name, mesh, feet, radius, height):
    caps = [Capsule.upright(f, height, radius) for f in feet]
    with_test = _best(lambda: verdicts.capsule_verdicts(mesh, caps))
    saved = verdicts._with_solids if hasattr(verdicts, "_with_solids") else None
    verdicts._with_solids = lambda _m, _c, v: v  # noqa: SLF001  (the verdict without it)
    try:
        without = _best(lambda: verdicts.capsule_verdicts(mesh, caps))
    finally:
        verdicts._with_solids = saved  # noqa: SLF001
    middles = np.array([c.a + 0.5 * (c.b - c.a) for c in caps])
    alone = _best(lambda: enclosing_solids(mesh, middles))
    print(f"| {name} | {mesh.n_triangles:,} | {len(caps)} | {without * 1e3:.1f} | "
          f"{with_test * 1e3:.1f} | {with_test / without:.2f} | "
          f"{alone / len(caps) * 1e3:.2f} |")


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--capsules", type=int, default=16)
    p.add_argument("--terrain-cells", type=int, default=700)
    args = p.parse_args(argv)
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    print("| level | triangles | capsules | verdict without (ms) | with (ms) | ratio | "
          "inside test per capsule (ms) |")
    print("|---|---|---|---|---|---|---|")
    q = real_levels.QUAKE_PLAYER
    for name in real_levels.MAPS:
        level = real_levels.load(name, clip=True)
        mesh = TriangleMesh(level.vertices, level.triangles)
        feet = level.spawn_feet[:args.capsules] + (0.0, 0.0, 0.01)
        row(name, mesh, feet, q["radius"], q["height"])
    v, t = scenes.terrain(args.terrain_cells)
    mesh = TriangleMesh(v, t)
    rng = np.random.default_rng(0)
    lo, hi = mesh.aabb
    feet = np.column_stack([rng.uniform(lo[0] + 5, hi[0] - 5, args.capsules),
                            rng.uniform(lo[1] + 5, hi[1] - 5, args.capsules),
                            np.full(args.capsules, hi[2] + 0.5)])
    row(f"terrain({args.terrain_cells})", mesh, feet, 0.35, 1.8)


if __name__ == "__main__":
    main()
