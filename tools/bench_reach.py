"""Standable-map and reachability benchmark: seconds and counts on procedural and real levels.

Levels (``tools/scenes.py``): a 10,332-triangle game level (the stairs-and-ramps block on a
14 m terrain, ``terrain(55)``) and a 984,282-triangle level (the block on a 175 m terrain,
``terrain(700)``). Targets (issue 19): standable map + reachability at most 1 s on the 10k
level and 10 s on the 1M level (the default character: no jumps); the rows with
``jump_height = 1 m`` fly the controller's jumps too. Each of these rows builds the level's
mesh (not timed), then times ``standable_map`` (the stand test's and headroom audit's map)
and ``reachability`` from one spawn on the terrain's edge.

Reachability alone (issue 24, section 4: the map built tile by tile from the spawns outward
on big levels; ``map s`` is then 0): ``huge``, 41k triangles over 420 x 490 m with a walled
yard of a few hundred m^2 reachable (``scenes.huge_bounds_level``; target 5 s); ``arena``,
73k triangles, a 160 m walled arena with about 25,000 m^2 reachable (``scenes.open_arena``;
target 3 s); and the four real OpenArena maps (clip meshes, Quake's player, their own
spawns; ``tools/real_levels.py``, rows skipped when the maps are not made).

Wall and CPU seconds of this process (CPU says more on a shared, loaded machine), the
fastest of ``--repeat`` runs. ``map kept`` (reachability rows): reachability built the
whole map and kept it with the mesh (it gave the window up: open floor, spawns all over the
map), so the stand and headroom audits that ``levelcheck`` runs next read it at no cost;
``no``: it judged a window, and the audits build the whole map themselves.

``--verdicts`` adds a column ``verdicts``: a digest of every answer of the row's
reachability (reachable faces and area, each island and trap with its faces, area, point,
visibility and causes, every cell's class, the moves in order, the spawns' nodes, the arcs
flown, the what-if sentences; not timed), so that two trees' rows can be compared answer for
answer after a change meant only to be faster.

Usage:  python tools/bench_reach.py [--quick] [--repeat N] [--only ROW ...] [--verdicts]
(``--quick``: the 10k level only, one run: a smoke test; rows: 10k 10k-jump 1M 1M-jump huge
arena oa_bases7 am_lavaarena delta oa_koth1.)
"""

from __future__ import annotations

import argparse
import hashlib
import sys
import time

import numpy as np
import real_levels
import scenes
from capsule_collision.core import ControllerSettings, TriangleMesh, reachability
from capsule_collision.core.checks.audits.standable import FREE, has_map, standable_map
from scenes import terrain

TARGETS = {"10k": 1.0, "1M": 10.0, "huge": 5.0, "arena": 3.0}  # seconds, no jumps
LEVELS = {"10k": (55, 1), "1M": (700, 2)}  # terrain cells per side, seed
PLACED = {"huge": scenes.huge_bounds_level, "arena": scenes.open_arena}


def spawn_point(mesh, vertices) -> np.ndarray:
    """A foot point on the terrain 3 m in from its low-y edge, in the middle along x."""
    x, y = float(vertices[:, 0].mean()), float(vertices[:, 1].min()) + 3.0
    top = float(vertices[:, 2].max()) + 10.0
    hit = mesh.raycast([x, y, top], [0.0, 0.0, -1.0], top - float(vertices[:, 2].min()) + 10.0)
    return np.array([[x, y, top - hit.time]])


def verdicts(res) -> str:
    """A 12-hex digest of every answer of a Reachability ``res`` (module docstring)."""
    h = hashlib.sha1()
    for a in (res.reachable_faces, res.cell_class, res.cell_face, res.moves.src,
              res.moves.dst, res.moves.kind, res.spawn_cells, res.spawn_drop):
        h.update(np.ascontiguousarray(a).tobytes())
    regions = [(r.faces.tolist(), repr(float(r.area)), np.asarray(r.point).tolist(),
                bool(r.visible), [c.text for c in r.causes])
               for r in tuple(res.islands) + tuple(res.traps)]
    h.update(repr((repr(float(res.reachable_area)), len(res.islands), regions, res.arcs,
                   res.what_if)).encode())
    return h.hexdigest()[:12]


def run(level: str, jump: float, repeat: int) -> dict:
    """The fastest of ``repeat`` runs of map + reachability on ``level``: a row dict."""
    cells, seed = LEVELS[level]
    v, t = terrain(cells, seed=seed)
    s = ControllerSettings(jump_height=jump)
    best = None
    for _ in range(repeat):
        mesh = TriangleMesh(v, t)  # a fresh mesh: the map is kept with the mesh
        spawn = spawn_point(mesh, v)
        t0, c0 = time.perf_counter(), time.process_time()
        smap = standable_map(mesh, s)
        t1, c1 = time.perf_counter(), time.process_time()
        res = reachability(mesh, spawn, s)
        t2, c2 = time.perf_counter(), time.process_time()
        row = {"level": level, "triangles": mesh.n_triangles, "jump": jump,
               "map_s": t1 - t0, "map_cpu": c1 - c0, "reach_s": t2 - t1, "reach_cpu": c2 - c1,
               "cells": smap.face.size, "free": int((smap.state == FREE).sum()),
               "cramped_regions": int(smap.region_area.size),
               "cramped_m2": float(smap.region_area.sum()),
               "reachable_m2": res.reachable_area, "islands": len(res.islands),
               "traps": len(res.traps), "arcs": res.arcs, "verdicts": verdicts(res)}
        if best is None or row["map_s"] + row["reach_s"] < best["map_s"] + best["reach_s"]:
            best = row
    return best


def placed_level(level: str):
    """(vertices, triangles, spawn feet (K, 3), settings) of a procedural placed level or a
    real map (None when the real maps are not made)."""
    if level in PLACED:
        v, t, spawn = PLACED[level]()
        return v, t, spawn[None, :], ControllerSettings()
    if not real_levels.available():
        return None
    lv = real_levels.load(level, clip=True)
    return lv.vertices, lv.triangles, lv.spawn_feet, ControllerSettings(
        **real_levels.QUAKE_PLAYER)


def run_reach(level: str, repeat: int):
    """The fastest of ``repeat`` reachability runs (fresh mesh, no map built before) on a
    placed or real level: a row dict, or None when the level is not available."""
    got = placed_level(level)
    if got is None:
        return None
    v, t, feet, s = got
    best = None
    for _ in range(repeat):
        mesh = TriangleMesh(v, t)
        t1, c1 = time.perf_counter(), time.process_time()
        res = reachability(mesh, feet, s)
        t2, c2 = time.perf_counter(), time.process_time()
        placed = res.spawn_cells >= 0
        ok = placed.copy()
        ok[placed] = res.cell_class[res.spawn_cells[placed]] <= 1  # reachable or trap
        row = {"level": level, "triangles": mesh.n_triangles, "jump": s.jump_height,
               "map_s": 0.0, "map_cpu": 0.0, "reach_s": t2 - t1, "reach_cpu": c2 - c1,
               "cells": res.standable.face.size,
               "free": int((res.standable.state == FREE).sum()), "cramped_regions": 0,
               "cramped_m2": 0.0, "reachable_m2": res.reachable_area,
               "islands": len(res.islands), "traps": len(res.traps), "arcs": res.arcs,
               "spawns": f"{int(ok.sum())}/{ok.size}",
               "kept": "yes" if has_map(mesh, s) else "no",  # as the audits ask for it
               "verdicts": verdicts(res)}
        if best is None or row["reach_s"] < best["reach_s"]:
            best = row
    return best


def print_table(rows, out=sys.stdout, digests=False):
    head = (f"{'level':<6}{'triangles':>11}{'jump m':>8}{'map s':>8}{'cpu':>7}{'reach s':>9}"
            f"{'cpu':>7}{'total s':>9}{'target':>8}{'cells':>10}{'cramped m2':>12}"
            f"{'reach m2':>11}{'islands':>9}{'traps':>7}{'arcs':>6}{'spawns':>8}"
            f"{'map kept':>10}" + (f"{'verdicts':>14}" if digests else ""))
    print(head, file=out)
    for r in rows:
        total = r["map_s"] + r["reach_s"]
        target = f"{TARGETS[r['level']]:g}" if r["jump"] == 0.0 and r["level"] in TARGETS \
            else "-"
        print(f"{r['level']:<6}{r['triangles']:>11,}{r['jump']:>8g}{r['map_s']:>8.2f}"
              f"{r['map_cpu']:>7.2f}{r['reach_s']:>9.2f}{r['reach_cpu']:>7.2f}{total:>9.2f}"
              f"{target:>8}{r['cells']:>10,}{r['cramped_m2']:>12.2f}{r['reachable_m2']:>11.1f}"
              f"{r['islands']:>9}{r['traps']:>7}{r['arcs']:>6}{r.get('spawns', '-'):>8}"
              f"{r.get('kept', '-'):>10}" + (f"{r['verdicts']:>14}" if digests else ""),
              file=out)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--only", nargs="*", default=None)
    ap.add_argument("--verdicts", action="store_true")
    args = ap.parse_args(argv)
    plan = ["10k"] if args.quick else ["10k", "10k-jump", "1M", "1M-jump", "huge", "arena",
                                       *real_levels.MAPS]
    plan = [p for p in plan if args.only is None or p in args.only]
    rows = []
    for name in plan:
        level, jump = name.split("-")[0], 1.0 if name.endswith("-jump") else 0.0
        repeat = 1 if args.quick else (args.repeat if level == "10k" else 1)
        row = run(level, jump, repeat) if level in LEVELS else run_reach(level, repeat)
        if row is not None:
            rows.append(row)
            print_table(rows[-1:], out=sys.stderr, digests=args.verdicts)  # progress
    print_table(rows, digests=args.verdicts)
    return 0


if __name__ == "__main__":
    sys.exit(main())
