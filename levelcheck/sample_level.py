"""The sample level: a small course generated in Blender, the CLI's default level and a fixture.

Eleven lanes side by side (each 2 m wide along Y, walked towards +X from x = 0.5) on one
ground plane at z = 0, metres, Z up:

====  ======================  ===========================================  ================
lane  objects                 what                                         path expects
====  ======================  ===========================================  ================
0     Stairs 20cm             5 risers of 0.20 m, 0.40 m treads, landing   reached_goal
1     Stairs 30cm             5 risers of 0.30 m                           reached_goal
2     Stairs 45cm             3 risers of 0.45 m (above the 0.35 m step)   step_too_high
3     Stairs No Tread         5 risers of 0.20 m with 0.08 m treads        step_too_high
4     Ramp 40deg              a 40 degree ramp up 1 m, landing             reached_goal
5     Ramp 50deg              a 50 degree ramp (above the 45 limit)        slope_too_steep
6     Corridor 60cm L/R       two walls 0.60 m apart (capsule is 0.70)     blocked
7     Low Ceiling 150cm       a slab 1.50 m above the floor                ceiling_too_low
8     Gap Deck A/B            two 1 m decks with a 1.2 m gap between       fell
9     Ledge                   an L-shaped 1.5 m platform (concave n-gon)   fell
10    Curb 45cm               the main route from the spawn                reached_goal
====  ======================  ===========================================  ================

The staircase sides and the ledge top are single n-gons (concave), as a designer models them.
Capsules (Empties, role CAPSULE): a spawn on open ground ("Spawn", marked Spawn: reachability
floods the course from its foot), one under the low ceiling (expected to penetrate), one on
the 30 cm stairs' landing, and one spawn in the corridor wall. Paths are poly curves (role
PATH), one per lane.

The two deliberate level bugs (``bugs=True``, the default): the "Spawn Corridor" capsule stands
inside the corridor's left wall but is expected clear, and the "Main Route" path is expected
to reach its goal but a 0.45 m curb blocks it. ``bugs=False`` moves the capsule out of the wall
and lowers the curb to 0.15 m: a clean level.

``python -m capsule_collision.levelcheck.sample_level OUT.blend [--clean]`` (or
``python tools/sample_level.py ...``) saves it; ``spec()`` gives the same
capsules and paths as a levelcheck sidecar (for formats that cannot carry them).
"""

from __future__ import annotations

import math
import os
import sys

from . import session

LANE_PITCH = 3.0  # metres between lane centres (2 m lanes, 1 m apart)
LANE_Y0 = 1.0  # metres, the centre of lane 0
START_X = 0.5  # metres, where each walk starts
CURB_BUG = 0.45  # metres: the curb that blocks the main route (bug 2)
CURB_CLEAN = 0.15  # metres: the same curb in the clean level


def lane_y(k: int) -> float:
    return LANE_Y0 + LANE_PITCH * k


def _stairs_profile(x0, rise, tread, count, landing):
    """(x, z) outline of a staircase from the ground, risers at x0, x0 + tread, ..."""
    pts = [(x0, 0.0)]
    x = x0
    for i in range(count):
        pts.append((x, (i + 1) * rise))
        x += tread if i < count - 1 else landing
        pts.append((x, (i + 1) * rise))
    pts.append((x, 0.0))
    return pts


def _ramp_profile(x0, angle_deg, height, landing):
    run = height / math.tan(math.radians(angle_deg))
    return [(x0, 0.0), (x0 + run, height), (x0 + run + landing, height), (x0 + run + landing, 0.0)]


def _lanes(bugs: bool) -> dict:
    """{object name: ("prism", profile, y0, y1) | ("box", (min), (max)) | ("slab", ...)}."""
    half = 1.0
    out = {}

    def prism(name, lane, profile):
        out[name] = ("prism", profile, lane_y(lane) - half, lane_y(lane) + half)

    def box(name, lo, hi):
        out[name] = ("box", lo, hi)

    prism("Stairs 20cm", 0, _stairs_profile(2.0, 0.20, 0.40, 5, 2.0))
    prism("Stairs 30cm", 1, _stairs_profile(2.0, 0.30, 0.40, 5, 2.0))
    prism("Stairs 45cm", 2, _stairs_profile(2.0, 0.45, 0.40, 3, 2.0))
    prism("Stairs No Tread", 3, _stairs_profile(2.0, 0.20, 0.08, 5, 2.0))
    prism("Ramp 40deg", 4, _ramp_profile(2.0, 40.0, 1.0, 2.0))
    prism("Ramp 50deg", 5, _ramp_profile(2.0, 50.0, 1.5, 2.0))
    y = lane_y(6)
    box("Corridor 60cm L", (3.0, y - 0.5, 0.0), (7.0, y - 0.3, 2.2))
    box("Corridor 60cm R", (3.0, y + 0.3, 0.0), (7.0, y + 0.5, 2.2))
    y = lane_y(7)
    box("Low Ceiling 150cm", (3.0, y - 1.0, 1.5), (6.0, y + 1.0, 1.7))
    y = lane_y(8)
    box("Gap Deck A", (0.0, y - 1.0, 0.0), (3.0, y + 1.0, 1.0))
    box("Gap Deck B", (4.2, y - 1.0, 0.0), (8.0, y + 1.0, 1.0))
    y = lane_y(10)
    box("Curb 45cm", (4.0, y - 1.0, 0.0), (8.0, y + 1.0, CURB_BUG if bugs else CURB_CLEAN))
    return out


LEDGE_HEIGHT = 1.5  # metres, the L-shaped platform of lane 9


def _ledge_outline():
    """Concave L outline (x, y) of the ledge platform's top, counter-clockwise from above."""
    y = lane_y(9)
    return [(0.0, y - 1.0), (4.0, y - 1.0), (4.0, y), (1.5, y), (1.5, y + 1.0), (0.0, y + 1.0)]


def capsules(bugs: bool = True) -> list:
    """[(name, foot (x, y, z), expect)] of the sample's capsules (radius 0.35, height 1.8)."""
    wall_y = lane_y(6) - 0.4  # inside the corridor's left wall (0.2 m thick)
    return [
        ("Spawn", (START_X, lane_y(10), 0.0), "CLEAR"),
        ("Under Ceiling", (4.5, lane_y(7), 0.0), "PENETRATING"),
        ("Top Of Stairs 30cm", (4.6, lane_y(1), 1.5), "CLEAR"),
        ("Spawn Corridor", (5.0, wall_y if bugs else wall_y - 0.6, 0.0), "CLEAR"),
    ]


SPAWNS = ("Spawn",)  # the capsules marked Spawn (``obj.capsule_collision.spawn``)


def paths() -> list:
    """[(name, points [(x, y, z), ...], expect)] of the sample's walk paths (foot points)."""
    def lane(k, z_end, x_end, z0=0.0, expect="reached_goal", dy=0.0):
        y = lane_y(k) + dy
        return [(START_X, y, z0), (x_end, y, z_end)], expect

    rows = {  # goals on the landings (stairs: x 3.6-5.6, 45 cm: 2.8-4.8; ramps: 3.3-5.2)
        "Walk Stairs 20cm": lane(0, 1.0, 4.8),
        "Walk Stairs 30cm": lane(1, 1.5, 4.8),
        "Walk Stairs 45cm": lane(2, 1.35, 4.2, expect="step_too_high"),
        "Walk Stairs No Tread": lane(3, 1.0, 4.8, expect="step_too_high"),
        "Walk Ramp 40deg": lane(4, 1.0, 4.5),
        "Walk Ramp 50deg": lane(5, 1.5, 4.5, expect="slope_too_steep"),
        "Walk Corridor 60cm": lane(6, 0.0, 8.0, expect="blocked"),
        "Walk Low Ceiling": lane(7, 0.0, 7.0, expect="ceiling_too_low"),
        "Walk Gap": lane(8, 1.0, 6.0, z0=1.0, expect="fell"),
        "Walk Ledge": lane(9, 0.0, 6.0, z0=LEDGE_HEIGHT, expect="fell", dy=-0.5),  # long arm
        "Main Route": lane(10, CURB_BUG, 7.0),
    }
    return [(name, pts, expect) for name, (pts, expect) in rows.items()]


# What the sample level must report (tests pin these; docs/cli.md shows them).
EXPECTED_FINDINGS = (
    ("capsule", "Spawn Corridor", "clear", "penetrating"),
    ("walk", "Main Route", "reached_goal", "step_too_high"),
)


def spec(bugs: bool = True) -> dict:
    """The sample's capsules, spawns and paths as a levelcheck sidecar (metres, Z up)."""
    return {
        "name": "Sample level" + ("" if bugs else " (clean)"),
        "capsules": [{"name": n, "foot": list(f), "expect": e.lower()}
                     for n, f, e in capsules(bugs)],
        "spawns": [list(f) for n, f, _ in capsules(bugs) if n in SPAWNS],
        "paths": [{"name": n, "points": [list(p) for p in pts], "expect": e}
                  for n, pts, e in paths()],
    }


# ----------------------------------------------------------------------------- Blender
def _mesh_object(bpy, collection, name, vertices, faces, solid=True):
    import bmesh  # noqa: PLC0415

    mesh = bpy.data.meshes.new(name)
    mesh.from_pydata([tuple(map(float, v)) for v in vertices], [], [tuple(f) for f in faces])
    mesh.update(calc_edges=True)
    if solid:  # outward normals whatever the outline's winding (treads must face up)
        bm = bmesh.new()
        bm.from_mesh(mesh)
        bmesh.ops.recalc_face_normals(bm, faces=bm.faces)
        bm.to_mesh(mesh)
        bm.free()
    obj = bpy.data.objects.new(name, mesh)
    collection.objects.link(obj)
    return obj


def _prism(profile, y0, y1):
    """A closed prism: the (x, z) profile (counter-clockwise seen from -Y) swept y0 -> y1."""
    n = len(profile)
    verts = [(x, y0, z) for x, z in profile] + [(x, y1, z) for x, z in profile]
    front = list(range(n))  # at y0, facing -Y
    back = [n + i for i in reversed(range(n))]
    sides = [(i, n + i, n + (i + 1) % n, (i + 1) % n) for i in range(n)]
    return verts, [front, back] + sides


def _box(lo, hi):
    x0, y0, z0 = lo
    x1, y1, z1 = hi
    verts = [(x0, y0, z0), (x1, y0, z0), (x1, y1, z0), (x0, y1, z0),
             (x0, y0, z1), (x1, y0, z1), (x1, y1, z1), (x0, y1, z1)]
    faces = [(0, 3, 2, 1), (4, 5, 6, 7), (0, 1, 5, 4), (1, 2, 6, 5), (2, 3, 7, 6), (3, 0, 4, 7)]
    return verts, faces


def _outline_prism(outline, z0, z1):
    """A closed prism: the (x, y) outline (counter-clockwise from above) from z0 up to z1."""
    n = len(outline)
    verts = [(x, y, z0) for x, y in outline] + [(x, y, z1) for x, y in outline]
    bottom = list(reversed(range(n)))
    top = [n + i for i in range(n)]
    sides = [(i, (i + 1) % n, n + (i + 1) % n, n + i) for i in range(n)]
    return verts, [bottom, top] + sides


def build(scene=None, bugs: bool = True):
    """Create the sample level in ``scene`` (default: the context scene; best an empty one).

    Needs the extension enabled (capsule and path objects carry ``obj.capsule_collision``).
    Returns the collection "Sample Level" holding the geometry, capsules and paths."""
    import bpy  # noqa: PLC0415  (this module is also imported without Blender)

    scene = scene or bpy.context.scene
    root = bpy.data.collections.new("Sample Level")
    scene.collection.children.link(root)
    width = LANE_PITCH * 11 + 2.0
    _mesh_object(bpy, root, "Ground", [(-1.0, -1.0, 0.0), (9.0, -1.0, 0.0),
                                       (9.0, width - 1.0, 0.0), (-1.0, width - 1.0, 0.0)],
                 [(0, 1, 2, 3)], solid=False)
    for name, (kind, *args) in _lanes(bugs).items():
        verts, faces = _prism(*args) if kind == "prism" else _box(*args)
        _mesh_object(bpy, root, name, verts, faces)
    verts, faces = _outline_prism(_ledge_outline(), 0.0, LEDGE_HEIGHT)
    _mesh_object(bpy, root, "Ledge", verts, faces)

    for name, foot, expect in capsules(bugs):
        empty = bpy.data.objects.new(name, None)
        empty.empty_display_type = "SINGLE_ARROW"
        empty.location = foot
        root.objects.link(empty)
        props = empty.capsule_collision
        props.role = "CAPSULE"
        props.radius = 0.35
        props.height = 1.8
        props.expect = expect
        props.spawn = name in SPAWNS
    for name, pts, expect in paths():
        curve = bpy.data.curves.new(name, "CURVE")
        curve.dimensions = "3D"
        spline = curve.splines.new("POLY")
        spline.points.add(len(pts) - 1)
        for point, (x, y, z) in zip(spline.points, pts):
            point.co = (x, y, z, 1.0)
        obj = bpy.data.objects.new(name, curve)
        root.objects.link(obj)
        props = obj.capsule_collision
        props.role = "PATH"
        props.expect_walk = expect
    return root


def main(argv=None) -> int:
    import argparse  # noqa: PLC0415

    parser = argparse.ArgumentParser(description="Save the sample level as a .blend file.")
    parser.add_argument("out", help="the .blend file to write")
    parser.add_argument("--clean", action="store_true", help="without the two level bugs")
    args = parser.parse_args(argv)
    bpy = session.start()
    bpy.ops.wm.read_homefile(use_empty=True)
    build(bpy.context.scene, bugs=not args.clean)
    bpy.ops.wm.save_as_mainfile(filepath=os.path.abspath(args.out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
