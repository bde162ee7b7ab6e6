"""Benchmark rows for the levelcheck CLI: wall time of whole runs (as CI runs them: a
subprocess of ``python -m capsule_collision.levelcheck``) and each step's time.

    python tools/bench_levelcheck.py [--rows main,jobs,terrain] [--terrain-cells 700]
                                     [--profile-stand]

Rows:
- ``main``: the main job (the bundled sample level, Blender's start and the pictures included);
- ``jobs``: 4 levels (the sample level saved twice with its bugs, twice without) with
  ``--jobs 1`` and ``--jobs 2``, pictures included, and the ratio of the two walls;
- ``terrain``: the noisy terrain of tools/scenes.py (``terrain(700)``: 999,698 triangles on
  175 x 175 m with the stairs-and-ramps block, +-2 cm bumps) as a .blend with 4 capsules and
  4 paths, end to end with the pictures, each step from report.json's ``timings_s``.
``--profile-stand`` also profiles the stand audit on that terrain in this process (cProfile,
the 12 functions with the most cumulative time). Levels are written to a temporary folder and
removed. Figures depend on the machine's load: the load average is printed with them.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import os
import pstats
import subprocess
import sys
import tempfile
import time

import numpy as np
import scenes
from capsule_collision.core import ControllerSettings, TriangleMesh, stand_test

SAVE_LEVEL = r"""
import sys, numpy as np
from capsule_collision.levelcheck import session, sample_level
bpy = session.start()
bpy.ops.wm.read_homefile(use_empty=True)
kind, out = sys.argv[1], sys.argv[2]
if kind in ("bugged", "clean"):
    sample_level.build(bpy.context.scene, bugs=kind == "bugged")
else:
    data = np.load(kind)
    co, tris = data["vertices"].astype(np.float32), data["triangles"].astype(np.int32)
    me = bpy.data.meshes.new("Terrain")
    me.vertices.add(len(co)); me.vertices.foreach_set("co", co.ravel())
    me.loops.add(tris.size); me.loops.foreach_set("vertex_index", tris.ravel())
    me.polygons.add(len(tris))
    me.polygons.foreach_set("loop_start", np.arange(0, tris.size, 3, dtype=np.int32))
    me.update(calc_edges=True)
    bpy.context.scene.collection.objects.link(bpy.data.objects.new("Terrain", me))
    for k in range(4):
        e = bpy.data.objects.new(f"Capsule {k}", None)
        e.location = (20 + 30 * k, 20 + 25 * k, 2.0)
        bpy.context.scene.collection.objects.link(e)
        e.capsule_collision.role = "CAPSULE"
        cu = bpy.data.curves.new(f"Path {k}", "CURVE"); cu.dimensions = "3D"
        sp = cu.splines.new("POLY"); sp.points.add(1)
        sp.points[0].co = (10, 10 + 35 * k, 2.0, 1); sp.points[1].co = (40, 15 + 35 * k, 2.0, 1)
        ob = bpy.data.objects.new(f"Path {k}", cu)
        bpy.context.scene.collection.objects.link(ob)
        ob.capsule_collision.role = "PATH"
bpy.ops.wm.save_as_mainfile(filepath=out)
"""
STEPS = ["load", "read_level", "sanity", "walkability", "penetration", "walks", "stand",
         "stairs", "headroom", "ledges", "render"]


def _save(kind, path):
    subprocess.run([sys.executable, "-c", SAVE_LEVEL, kind, path], check=True,
                   capture_output=True)


def _run(args, out):
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "capsule_collision.levelcheck", *args,
                           "--out", out, "--quiet"], capture_output=True, text=True)
    wall = time.perf_counter() - t0
    if proc.returncode not in (0, 1):
        raise SystemExit(proc.stderr)
    with open(os.path.join(out, "report.json"), encoding="utf-8") as handle:
        return wall, json.load(handle)["levels"]


def _row(name, wall, levels):
    t = {s: sum(lv["timings_s"].get(s, 0.0) for lv in levels) for s in STEPS}
    return f"{name:<40} {wall:7.1f} " + " ".join(f"{t[s]:8.2f}" for s in STEPS)


def _terrain(tmp, cells):
    v, t = scenes.terrain(cells, seed=2)
    npz = os.path.join(tmp, "terrain.npz")
    np.savez(npz, vertices=v, triangles=t)
    blend = os.path.join(tmp, "terrain.blend")
    _save(npz, blend)
    return blend, (v, t)


def profile_stand(v, t, top=12) -> str:
    mesh = TriangleMesh(v, t)
    prof = cProfile.Profile()
    t0 = time.perf_counter()
    prof.enable()
    res = stand_test(mesh, ControllerSettings())
    prof.disable()
    wall = time.perf_counter() - t0
    text = io.StringIO()
    pstats.Stats(prof, stream=text).sort_stats("cumulative").print_stats(top)
    return (f"stand_test on {mesh.n_triangles:,} triangles: {wall:.2f} s, "
            f"{len(res.faces)} faces reported of {len(res.tested)} tested\n" + text.getvalue())


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--rows", default="main,jobs,terrain", help="main, jobs, terrain")
    p.add_argument("--terrain-cells", type=int, default=700, help="2 n^2 terrain triangles")
    p.add_argument("--profile-stand", action="store_true")
    args = p.parse_args(argv)
    rows = [r.strip() for r in args.rows.split(",") if r.strip()]
    lines = []
    with tempfile.TemporaryDirectory(prefix="bench_levelcheck_") as tmp:
        if "main" in rows:
            wall, levels = _run([], os.path.join(tmp, "main"))
            lines.append(_row("sample level (main job, pictures)", wall, levels))
        if "jobs" in rows:
            blends = [os.path.join(tmp, f"{k}.blend") for k in range(4)]
            for k, path in enumerate(blends):
                _save("bugged" if k % 2 == 0 else "clean", path)
            walls = {}
            for jobs in (1, 2):
                wall, levels = _run([*blends, "--jobs", str(jobs)], os.path.join(tmp, f"j{jobs}"))
                walls[jobs] = wall
                lines.append(_row(f"4 sample levels, --jobs {jobs}", wall, levels))
            lines.append(f"--jobs 2 vs 1: {walls[1] / walls[2]:.2f}x faster")
        terrain = None
        if "terrain" in rows or args.profile_stand:
            blend, terrain = _terrain(tmp, args.terrain_cells)
        if "terrain" in rows:
            wall, levels = _run([blend], os.path.join(tmp, "terrain"))
            lines.append(_row(f"terrain {levels[0]['triangles']:,} triangles, pictures", wall,
                              levels))
    head = f"{'run':<40} {'wall s':>7} " + " ".join(f"{s[:8]:>8}" for s in STEPS)
    print(head)
    print("-" * len(head))
    print("\n".join(lines))
    print(f"load average: {', '.join(f'{x:.1f}' for x in os.getloadavg())} "
          f"({os.cpu_count()} cores); per-step seconds from report.json timings_s (summed "
          "over levels)")
    if args.profile_stand and terrain is not None:
        print(profile_stand(*terrain))
    return 0


if __name__ == "__main__":
    sys.exit(main())
