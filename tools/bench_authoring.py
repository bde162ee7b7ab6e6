"""Collision-authoring benchmark on the four shipped OpenArena maps (``tools/real_levels``):
stair ramps (``core.stair_ramps`` on the render mesh with Quake's player: flights found, ramps
within the max slope, step triangles they replace), the tight oriented box of the whole map
and whether the clip mesh is convex (the CLI's export naming), with seconds each.

Usage:  CC_REAL_LEVELS=/work/levels python tools/bench_authoring.py [MAP ...]
"""

from __future__ import annotations

import sys
import time

import real_levels
from capsule_collision.core import ControllerSettings, TriangleMesh
from capsule_collision.core.authoring import is_convex, oriented_box, stair_ramps


def row(name):
    level = real_levels.load(name)
    clip = real_levels.load(name, clip=True)
    q = real_levels.QUAKE_PLAYER
    settings = ControllerSettings(radius=q["radius"], height=q["height"],
                                  step_height=q["step_height"],
                                  max_slope_deg=q["max_slope_deg"])
    t0 = time.perf_counter()
    mesh = TriangleMesh(level.vertices, level.triangles)
    ramps = stair_ramps(mesh, settings)
    t1 = time.perf_counter()
    box = oriented_box(level.vertices, level.triangles)
    t2 = time.perf_counter()
    convex = is_convex(clip.vertices, clip.triangles)
    t3 = time.perf_counter()
    fits = [r for r in ramps if r.fits_slope]
    return (name, len(level.triangles), len(ramps), len(fits),
            sum(r.flight_faces.size for r in fits), t1 - t0, box.volume, t2 - t1, convex,
            t3 - t2)


def main(argv) -> int:
    names = argv or list(real_levels.MAPS)
    print("| map | render tris | ramps (runs of steps) | within max slope | step tris replaced | "
          "ramps s | whole-map box m^3 | box s | clip convex | convex s |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for name in names:
        r = row(name)
        print(f"| {r[0]} | {r[1]} | {r[2]} | {r[3]} | {r[4]} | {r[5]:.2f} | {r[6]:.0f} | "
              f"{r[7]:.2f} | {r[8]} | {r[9]:.3f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
