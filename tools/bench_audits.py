"""Audit benchmark: seconds and finding counts of the four level audits.

Scenes: the stairs-and-ramps block (``tools/scenes.stairs_ramps_block``, the old bundled
sample) and a ~2M-triangle terrain grid with the stairs-and-ramps block in the middle
(``tools/scenes.terrain(1000)``). Target (issue 12): each audit at most 5 s on the 2M-triangle grid.

The stand test builds the standable map (core/checks/audits/standable.py); the headroom audit
reads the same map, kept with the mesh, so its row is the read alone.

Usage:  python tools/bench_audits.py [--quick] [--cells N]
(``--quick``: a 2 x 300^2-triangle grid instead; ``--cells``: grid cells per side.)
"""

from __future__ import annotations

import argparse
import sys
import time

from capsule_collision.core.checks.audits import (
    headroom_audit,
    ledge_audit,
    stair_audit,
    stand_test,
)
from capsule_collision.core.mesh.triangle_mesh import TriangleMesh
from scenes import stairs_ramps_block, terrain

TARGET_SECONDS = 5.0  # per audit, on the 2M-triangle grid


def findings(name, result) -> int:
    """Number of findings of an audit result (stair rows count only flagged risers)."""
    if name == "stair_audit":
        return int(len(result.findings))
    return int(len(result[0]))


def bench(mesh):
    """[(audit, wall seconds, CPU seconds, findings)] for the four audits on ``mesh``. CPU
    seconds (this process) say more than wall seconds on a shared, loaded machine."""
    rows = []
    for fn in (stand_test, headroom_audit, stair_audit, ledge_audit):
        t0, c0 = time.perf_counter(), time.process_time()
        res = fn(mesh)
        rows.append((fn.__name__, time.perf_counter() - t0, time.process_time() - c0,
                     findings(fn.__name__, res)))
    return rows


def print_table(title, mesh, rows, out=sys.stdout):
    print(f"\n{title}: {mesh.n_triangles:,} triangles", file=out)
    print(f"{'audit':<16}{'seconds':>10}{'cpu s':>10}{'findings':>10}", file=out)
    for name, sec, cpu, n in rows:
        print(f"{name:<16}{sec:>10.2f}{cpu:>10.2f}{n:>10,}", file=out)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--cells", type=int, default=None)
    args = ap.parse_args(argv)
    v, t = stairs_ramps_block()
    mesh = TriangleMesh(v, t)
    print_table("sample level", mesh, bench(mesh))
    cells = args.cells or (300 if args.quick else 1000)
    v, t = terrain(cells, seed=2)
    mesh = TriangleMesh(v, t)
    rows = bench(mesh)
    print_table(f"terrain grid {cells} x {cells} (target {TARGET_SECONDS:g} s per audit)", mesh,
                rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
