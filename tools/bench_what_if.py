"""What-if benchmark: the cost of ``Reachability.what_if`` (core/checks/reach_what_if.py) on
the shipped maps and the procedural placed levels: the reachability time with the what-if
floods and without them (``what_if`` stubbed out), the floods it used per setting, and the
sentences it says.

Levels: the four real OpenArena maps (clip meshes, their own spawns, Quake's player walking
(no jump) and jumping (jump velocity 270 u/s: 1.157 m); ``tools/real_levels.py``, rows
skipped when the maps are not made) and ``huge`` / ``arena`` (``tools/bench_reach.py``).
CPU seconds of this process (on a shared, loaded machine CPU says more than wall time), one
run each (fresh mesh: no map kept).

Usage:  python tools/bench_what_if.py [--only ROW ...]
(rows: oa_bases7 am_lavaarena delta oa_koth1, each also with -jump; huge arena)
"""

from __future__ import annotations

import argparse
import sys
import time

import bench_reach
import real_levels
from capsule_collision.core import TriangleMesh, reachability
from capsule_collision.core.checks import reach_what_if
from capsule_collision.core.checks import reachability as reach_mod


def _timed(mesh, feet, s):
    c0, t0 = time.process_time(), time.perf_counter()
    res = reachability(mesh, feet, s)
    return res, time.process_time() - c0, time.perf_counter() - t0


def run(name: str):
    """A row dict for ``name`` (a level, "-jump" for Quake's jump), None when not made."""
    level = name.split("-")[0]
    got = bench_reach.placed_level(level)
    if got is None:
        return None
    v, t, feet, s = got
    # the plain rows walk (Quake's player jumps: real_levels.QUAKE_PLAYER), "-jump" rows jump
    s = s.replace(jump_height=real_levels.QUAKE_PLAYER["jump_height"]
                  if name.endswith("-jump") else 0.0)
    used = {"floods": 0}
    real = reach_what_if._opened

    def counted(*args):
        used["floods"] += 1
        return real(*args)

    reach_what_if._opened = counted
    try:
        res, cpu, wall = _timed(TriangleMesh(v, t), feet, s)
    finally:
        reach_what_if._opened = real
    keep = reach_mod.what_if
    reach_mod.what_if = lambda *a, **k: ()
    try:
        _bare, cpu0, wall0 = _timed(TriangleMesh(v, t), feet, s)
    finally:
        reach_mod.what_if = keep
    return {"level": name, "triangles": int(t.shape[0]), "islands": len(res.islands),
            "traps": len(res.traps), "floods": used["floods"], "cpu": cpu, "cpu0": cpu0,
            "wall": wall, "wall0": wall0, "what_if": res.what_if}


def print_table(rows, out=sys.stdout):
    print(f"{'level':<18}{'triangles':>10}{'islands':>8}{'traps':>6}{'floods':>7}"
          f"{'cpu s':>8}{'no what-if':>11}{'what-if s':>10}  sentences", file=out)
    for r in rows:
        print(f"{r['level']:<18}{r['triangles']:>10,}{r['islands']:>8}{r['traps']:>6}"
              f"{r['floods']:>7}{r['cpu']:>8.2f}{r['cpu0']:>11.2f}"
              f"{r['cpu'] - r['cpu0']:>10.2f}  {' | '.join(r['what_if']) or '-'}", file=out)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", nargs="*", default=None)
    args = ap.parse_args(argv)
    plan = [n for m in real_levels.MAPS for n in (m, f"{m}-jump")] + ["huge", "arena"]
    rows = []
    for name in plan:
        if args.only is not None and name not in args.only:
            continue
        row = run(name)
        if row is not None:
            rows.append(row)
            print_table(rows[-1:], out=sys.stderr)
    print_table(rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
