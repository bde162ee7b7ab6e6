"""Render against collision benchmark (``core.collision_diff``): seconds and problems per kind.

Pairs:
- ``10k``: the 10,332-triangle game level of ``tools/scenes.py`` (``terrain(55)``: the
  stairs-and-ramps block on a 14 m terrain) against itself with a 1 x 2 m crate added to the
  collision (one invisible wall); the default character, one spawn on the terrain's edge.
- with ``--real``: the four OpenArena maps (``tools/real_levels.py``): ``<map>.obj`` (render)
  against ``<map>_clip.obj`` (collision), Quake's player, the maps' spawns.

Each pair is timed two ways in the same run (fresh meshes each: maps are kept with a mesh):
- ``own``: ``collision_diff`` flooding both meshes itself (a plain core call; the baseline);
- ``cli``: as ``levelcheck`` runs it: the reachability check floods the collision
  (``flood`` column) and ``collision_diff(..., collision_reach=flood)`` reuses it
  (``diff`` column: the check's own time, what the budget is about); ``same`` says whether
  both ways found the same problems.

With ``--explained`` the CLI's way runs once more with both floods explained (the islands'
causes, lines of sight and what-if refloods, as before ``reachability(explain=False)``: the
baseline, side by side in the same run): ``explained`` column, and ``same`` then also says
whether its problems are the same as the unexplained floods' ones.

Targets (issue 25): at most 2 s on a 10k-triangle pair and 20 s on the largest map
(oa_koth1: 11k render against 41k clip triangles). CPU seconds of this process (they say
more on a shared, loaded machine) and wall seconds, meshes built before timing, the fastest
of ``--repeat`` runs.

With ``--workers N`` the CLI's diff runs once more with its floods' arcs shared among N
processes (``collision_diff(..., workers=N)``, as ``levelcheck`` runs a level on a machine
of N CPUs): ``shared wall`` column, wall seconds (the forked children's CPU is not this
process's); ``same`` then also compares its problems.

Problems per kind are counted twice: every problem (the report's ``collision_diff`` block)
and, after the minimum area (``diff_report.split_small`` with the character's footprint,
``severity.min_areas``: what report.json, JUnit and the panel list), those listed one by one
and those counted in the one info per kind (smaller than the footprint).

Usage:  python tools/bench_diff.py [--real] [--maps oa_koth1,...] [--repeat N] [--explained]
                                   [--workers N]
"""

from __future__ import annotations

import argparse
import contextlib
import sys
import time

import capsule_collision.core.checks.collision_diff as diff_module
import numpy as np
from capsule_collision.core import (
    ControllerSettings,
    TriangleMesh,
    collision_diff,
    reachability,
)
from capsule_collision.core.checks.collision_diff import DIFF_KINDS
from capsule_collision.core.checks.diff_report import split_small
from capsule_collision.core.checks.severity import min_areas
from scenes import box, merge, terrain

TARGETS = {"10k": 2.0, "oa_koth1": 20.0}  # seconds
SHORT = {"hole": "hole", "invisible_wall": "inv.wall", "walk_through_wall": "thru.wall",
         "floating": "floating", "sunk": "sunk", "reach_differs": "reach"}


def _spawn(mesh, vertices) -> np.ndarray:
    """A foot point on the terrain 3 m in from its low-y edge, in the middle along x."""
    x, y = float(vertices[:, 0].mean()), float(vertices[:, 1].min()) + 3.0
    top = float(vertices[:, 2].max()) + 10.0
    hit = mesh.raycast([x, y, top], [0.0, 0.0, -1.0], top - float(vertices[:, 2].min()) + 10.0)
    return np.array([[x, y, top - hit.time]])


def synthetic_pair():
    """(name, render (V, T), collision (V, T), spawns (K, 3), settings): the 10k pair."""
    v, t = terrain(55, seed=1)
    spawn = _spawn(TriangleMesh(v, t), v)
    x, y, z = spawn[0]
    crate = box((x - 0.5, y + 2.0, z - 1.0), (x + 0.5, y + 4.0, z + 2.5))
    return "10k", (v, t), merge([(v, t), crate]), spawn, ControllerSettings()


def real_pairs(names):
    """The OpenArena pairs (tools/real_levels.py), made on first use."""
    import real_levels  # noqa: PLC0415 (only with --real: it may build the maps)

    s = ControllerSettings(**real_levels.QUAKE_PLAYER)
    for name in names:
        r, c = real_levels.load(name), real_levels.load(name, clip=True)
        yield name, (r.vertices, r.triangles), (c.vertices, c.triangles), r.spawn_feet, s


def _timed(fn):
    """(result, wall s, CPU s) of ``fn()``."""
    t0, c0 = time.perf_counter(), time.process_time()
    out = fn()
    return out, time.perf_counter() - t0, time.process_time() - c0


def _problems(diff) -> list:
    return [(p.kind, tuple(p.point), p.size, p.value, p.cause, tuple(p.render_faces),
             tuple(p.collision_faces)) for p in diff.problems]


@contextlib.contextmanager
def _explained_floods():
    """``collision_diff`` flooding with ``explain=True`` (the baseline) while inside."""
    def explained(mesh, spawns, settings=None, progress=None, *, explain=True, workers=1):
        return reachability(mesh, spawns, settings, progress, workers=workers)

    diff_module.reachability = explained
    try:
        yield
    finally:
        diff_module.reachability = reachability


def run_once(pair, explained=False, workers=1) -> dict:
    """One run of both ways on ``pair`` (module docstring), with ``explained`` the CLI's way
    with explained floods, and with ``workers`` > 1 the CLI's diff again with its arcs
    shared among that many processes (``shared`` columns): a row dict."""
    name, render, collision, spawns, s = pair
    rm, cm = TriangleMesh(*render), TriangleMesh(*collision)
    own, own_wall, own_cpu = _timed(lambda: collision_diff(rm, cm, spawns, s))
    rm, cm = TriangleMesh(*render), TriangleMesh(*collision)  # fresh: no map kept
    flood, flood_wall, flood_cpu = _timed(lambda: reachability(cm, spawns, s))
    cli, diff_wall, diff_cpu = _timed(lambda: collision_diff(rm, cm, spawns, s,
                                                             collision_reach=flood))
    row = {"pair": name, "render": rm.n_triangles, "collision": cm.n_triangles,
           "own_wall": own_wall, "own_cpu": own_cpu, "flood_wall": flood_wall,
           "flood_cpu": flood_cpu, "diff_wall": diff_wall, "diff_cpu": diff_cpu,
           "same": _problems(own) == _problems(cli), "counts": own.counts(),
           "sizes": {k: sum(p.size for p in own.problems if p.kind == k) for k in DIFF_KINDS},
           "spans": int(own.render.cell_class.size + own.collision.cell_class.size)}
    kept, folded = split_small(own.problems, min_areas(s)["collision_diff"])
    row["listed"] = {k: sum(p.kind == k for p in kept) for k in DIFF_KINDS}
    row["folded"] = {k: sum(len(f.problems) for f in folded if f.kind == k) for k in DIFF_KINDS}
    if explained:
        rm = TriangleMesh(*render)  # fresh: the render's map is not kept from the run above
        with _explained_floods():
            full, row["explained_wall"], row["explained_cpu"] = _timed(
                lambda: collision_diff(rm, cm, spawns, s, collision_reach=flood))
        row["same"] = row["same"] and _problems(full) == _problems(cli)
    if workers > 1:
        rm = TriangleMesh(*render)
        shared, row["shared_wall"], row["shared_cpu"] = _timed(
            lambda: collision_diff(rm, cm, spawns, s, collision_reach=flood, workers=workers))
        row["same"] = row["same"] and _problems(shared) == _problems(cli)
    return row


def run(pair, repeat: int, explained=False, workers=1) -> dict:
    """The fastest (CPU) of ``repeat`` runs on ``pair``, per column."""
    rows = [run_once(pair, explained, workers) for _ in range(repeat)]
    best = dict(rows[0])
    for key in ("own_wall", "own_cpu", "flood_wall", "flood_cpu", "diff_wall", "diff_cpu",
                "explained_wall", "explained_cpu", "shared_wall", "shared_cpu"):
        if key in best:
            best[key] = min(r[key] for r in rows)
    best["same"] = all(r["same"] for r in rows)
    return best


def print_table(rows, out=sys.stdout):
    print("CPU s (wall s); own: collision_diff floods both meshes; cli: the reachability "
          "check's flood of the collision, then collision_diff reusing it; explained: the "
          "cli diff with explained floods (the baseline), ratio: cli diff / explained; "
          "same: the same problems every way", file=out)
    extra = "explained_cpu" in rows[0]
    shared = "shared_wall" in rows[0]
    head = (f"{'pair':<13}{'render':>8}{'collision':>10}{'spans':>10}{'own':>15}"
            f"{'cli flood':>15}{'cli diff':>15}"
            + (f"{'explained':>15}{'ratio':>7}" if extra else "")
            + (f"{'shared wall':>12}" if shared else "") + f"{'target':>7}{'same':>6}")
    print(head, file=out)
    for r in rows:
        target = f"{TARGETS[r['pair']]:g}" if r["pair"] in TARGETS else "-"
        keys = ("own", "flood", "diff") + (("explained",) if extra else ())
        cols = "".join(f"{r[k + '_cpu']:>7.2f} ({r[k + '_wall']:>5.1f})" for k in keys)
        if extra:
            cols += f"{r['diff_cpu'] / max(r['explained_cpu'], 1e-9):>7.2f}"
        if shared:
            cols += f"{r['shared_wall']:>12.1f}"
        print(f"{r['pair']:<13}{r['render']:>8,}{r['collision']:>10,}{r['spans']:>10,}"
              f"{cols}{target:>7}{'yes' if r['same'] else 'NO':>6}", file=out)
    print("\nproblems per kind (total size: m^2; thru.wall: m of wall)", file=out)
    print(f"{'pair':<13}" + "".join(f"{SHORT[k]:>16}" for k in DIFF_KINDS), file=out)
    for r in rows:
        print(f"{r['pair']:<13}" + "".join(
            f"{r['counts'][k]:>6} ({r['sizes'][k]:>6.1f})" for k in DIFF_KINDS), file=out)
    print("\nafter the minimum area (the character's footprint): listed one by one + smaller "
          "ones counted in one info per kind", file=out)
    print(f"{'pair':<13}" + "".join(f"{SHORT[k]:>16}" for k in DIFF_KINDS), file=out)
    for r in rows:
        print(f"{r['pair']:<13}" + "".join(
            f"{r['listed'][k]:>9} + {r['folded'][k]:<4}" for k in DIFF_KINDS), file=out)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--real", action="store_true", help="also the four OpenArena maps")
    ap.add_argument("--maps", default="oa_bases7,am_lavaarena,delta,oa_koth1",
                    help="with --real: which maps (comma-separated)")
    ap.add_argument("--repeat", type=int, default=1, help="runs per pair (the fastest)")
    ap.add_argument("--explained", action="store_true",
                    help="also the CLI's way with explained floods (the baseline) and compare")
    ap.add_argument("--workers", type=int, default=1,
                    help="also the CLI's diff with its arcs shared among N processes, as "
                         "levelcheck runs a level (wall s: the children's CPU is not this "
                         "process's)")
    args = ap.parse_args(argv)
    pairs = [synthetic_pair()]
    if args.real:
        pairs += list(real_pairs([m for m in args.maps.split(",") if m]))
    rows = []
    for pair in pairs:
        rows.append(run(pair, max(args.repeat, 1), args.explained, max(args.workers, 1)))
        print(f"# {pair[0]} done", file=sys.stderr, flush=True)
    print_table(rows)


if __name__ == "__main__":
    main()
