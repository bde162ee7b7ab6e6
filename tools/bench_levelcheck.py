"""Benchmark rows for tools/levelcheck.py: wall time of whole runs and each check's time.

    python tools/bench_levelcheck.py [--sizes 1000000,2000000] [--no-sample]

Rows: the main job (the bundled sample level, Blender's start and report.png included), then
one wavy terrain level per size (a .blend of one grid mesh, 4 capsules and 4 paths), run with
``--no-png``. Each row prints the wall time of the process and the per-check seconds from
report.json. Levels are written to a temporary folder and removed.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
import time

TOOLS = os.path.dirname(os.path.abspath(__file__))
CLI = os.path.join(TOOLS, "levelcheck.py")


def _terrain_blend(path, triangles):
    """Save a wavy grid of about ``triangles`` triangles (60 x 60 m) with capsules and paths."""
    code = f"""
import sys, numpy as np
sys.path.insert(0, {TOOLS!r})
import blender_session
bpy, _ = blender_session.start()
bpy.ops.wm.read_homefile(use_empty=True)
n = int(({triangles} / 2) ** 0.5) + 1
x, y = np.meshgrid(np.linspace(0, 60, n), np.linspace(0, 60, n), indexing="ij")
z = 0.6 * np.sin(x / 3.0) * np.cos(y / 4.0) + 0.02 * np.sin(7 * x) * np.sin(5 * y)
co = np.stack([x, y, z], -1).reshape(-1, 3).astype(np.float32)
i = np.arange(n - 1)[:, None] * n + np.arange(n - 1)[None, :]
quads = np.stack([i, i + n, i + n + 1, i + 1], -1).reshape(-1, 4).astype(np.int32)
me = bpy.data.meshes.new("Terrain")
me.vertices.add(len(co)); me.vertices.foreach_set("co", co.ravel())
me.loops.add(quads.size); me.loops.foreach_set("vertex_index", quads.ravel())
me.polygons.add(len(quads))
me.polygons.foreach_set("loop_start", np.arange(0, quads.size, 4, dtype=np.int32))
me.update(calc_edges=True)
bpy.context.scene.collection.objects.link(bpy.data.objects.new("Terrain", me))
for k in range(4):
    e = bpy.data.objects.new(f"Capsule {{k}}", None)
    e.location = (10 + 10 * k, 10 + 8 * k, 0.0)
    bpy.context.scene.collection.objects.link(e)
    e.capsule_collision.role = "CAPSULE"
    cu = bpy.data.curves.new(f"Path {{k}}", "CURVE"); cu.dimensions = "3D"
    sp = cu.splines.new("POLY"); sp.points.add(1)
    sp.points[0].co = (5, 5 + 12 * k, 1.0, 1); sp.points[1].co = (25, 8 + 12 * k, 1.0, 1)
    ob = bpy.data.objects.new(f"Path {{k}}", cu)
    bpy.context.scene.collection.objects.link(ob)
    ob.capsule_collision.role = "PATH"
bpy.ops.wm.save_as_mainfile(filepath={path!r})
"""
    subprocess.run([sys.executable, "-c", code], check=True, capture_output=True)


def _run(args, out):
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, CLI, *args, "--out", out, "--quiet"],
                          capture_output=True, text=True)
    wall = time.perf_counter() - t0
    if proc.returncode not in (0, 1):
        raise SystemExit(proc.stderr)
    doc = json.load(open(os.path.join(out, "report.json"), encoding="utf-8"))
    return wall, doc["levels"][0]


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--sizes", default="1000000,2000000", help="terrain triangle counts")
    p.add_argument("--no-sample", action="store_true", help="skip the main-job row")
    args = p.parse_args(argv)
    rows = []
    with tempfile.TemporaryDirectory(prefix="bench_levelcheck_") as tmp:
        if not args.no_sample:
            wall, level = _run([], os.path.join(tmp, "sample"))
            rows.append(("sample level (main job, png)", level, wall))
        for size in (int(s) for s in args.sizes.split(",") if s):
            blend = os.path.join(tmp, f"terrain_{size}.blend")
            _terrain_blend(blend, size)
            wall, level = _run([blend, "--no-png"], os.path.join(tmp, f"t{size}"))
            rows.append((f"terrain {level['triangles']:,} triangles", level, wall))
    checks = ["load", "read_level", "walkability", "penetration", "walks", "stand", "stairs",
              "headroom", "ledges", "render"]
    head = f"{'level':<34} {'wall s':>7} " + " ".join(f"{c[:10]:>10}" for c in checks)
    print(head)
    print("-" * len(head))
    for name, level, wall in rows:
        t = level["timings_s"]
        print(f"{name:<34} {wall:7.1f} " + " ".join(
            f"{t[c]:10.2f}" if c in t else f"{'-':>10}" for c in checks))
    print(f"load average: {', '.join(f'{x:.1f}' for x in os.getloadavg())} "
          f"({os.cpu_count()} cores); per-check seconds from report.json timings_s")
    return 0 if all(math.isfinite(w) for _, _, w in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
