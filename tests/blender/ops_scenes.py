"""Blender scenes for the operator tests (tests/blender/test_addon_ops*.py), built from numpy.

Every builder takes the ``bpy`` module and returns the objects it made. Lengths are in Blender
units; tests set ``scene.unit_settings.scale_length`` for centimetre scenes.
"""

import math

import blender_helpers
import numpy as np


def mesh_object(bpy, name, verts, faces, **kw):
    """A mesh object (blender_helpers.mesh_object; ``bpy`` kept for the builders' calls)."""
    return blender_helpers.mesh_object(name, verts, faces, **kw)


def grid(n, size):
    """(n+1)^2 vertices and n^2 quads of a square of side ``size`` centred on the origin."""
    t = np.linspace(-size / 2, size / 2, n + 1)
    x, y = np.meshgrid(t, t, indexing="xy")
    verts = np.stack([x.ravel(), y.ravel(), np.zeros(x.size)], axis=1)
    idx = np.arange((n + 1) ** 2).reshape(n + 1, n + 1)
    faces = np.stack([idx[:-1, :-1], idx[:-1, 1:], idx[1:, 1:], idx[1:, :-1]], -1)
    return verts, faces.reshape(-1, 4)


def box(size=(1, 1, 1)):
    """Vertices and 6 outward quads of an axis-aligned box with its centre at the origin."""
    sx, sy, sz = (s / 2 for s in size)
    verts = [(-sx, -sy, -sz), (sx, -sy, -sz), (sx, sy, -sz), (-sx, sy, -sz),
             (-sx, -sy, sz), (sx, -sy, sz), (sx, sy, sz), (-sx, sy, sz)]
    faces = [(0, 3, 2, 1), (4, 5, 6, 7), (0, 1, 5, 4), (1, 2, 6, 5), (2, 3, 7, 6),
             (3, 0, 4, 7)]
    return verts, faces


def capsule(bpy, name, location, radius=0.35, height=1.8, rotation=(0, 0, 0)):
    """A capsule Empty (role CAPSULE) with its foot at ``location``."""
    ob = bpy.data.objects.new(name, None)
    ob.location = location
    ob.rotation_euler = rotation
    st = ob.capsule_collision
    st.role = "CAPSULE"
    st.radius = radius
    st.height = height
    bpy.context.scene.collection.objects.link(ob)
    return ob


def floor_and_wall(bpy, unit=1.0):
    """A 10 x 10 floor of 10 x 10 quads and a wall box at x = 2 (lengths times ``unit``)."""
    v, f = grid(10, 10.0 * unit)
    floor = mesh_object(bpy, "Floor", v, f)
    v, f = box((0.5 * unit, 4.0 * unit, 3.0 * unit))
    wall = mesh_object(bpy, "Wall", v, f, location=(2.0 * unit, 0, 1.5 * unit))
    return floor, wall


def centimetre_kerb(bpy, scene):
    """A centimetre scene (scale_length 0.01): a 20 m ground of 10 x 10 cells, a 0.6 m kerb
    (1 x 4 m) 3 m along +x, and a path "Path" 6 m long across it (lengths in centimetres)."""
    scene.unit_settings.scale_length = 0.01
    v, f = grid(10, 2000.0)
    mesh_object(bpy, "Ground", v, f)
    v, f = box((100.0, 400.0, 60.0))
    mesh_object(bpy, "Kerb", v, f, location=(300.0, 0.0, 30.0))
    polyline(bpy, "Path", [(0, 0, 0), (600, 0, 0)])


def transformed_level(bpy):
    """A rotated + scaled ramp, a negatively scaled box and a tilted wall.

    The negative-scale box would show its floor as a ceiling if the winding were not flipped.
    """
    v, f = grid(4, 4.0)
    ramp = mesh_object(bpy, "Ramp", v, f, location=(0, 0, 0),
                       rotation=(math.radians(20), 0, math.radians(30)), scale=(1.5, 1.0, 1.0))
    v, f = box((2.0, 2.0, 0.5))
    flipped = mesh_object(bpy, "Flipped", v, f, location=(5.0, 0, 0.25),
                          scale=(-1.0, 1.0, 1.0))
    v, f = box((0.3, 3.0, 2.5))
    tilted = mesh_object(bpy, "Tilted", v, f, location=(-3.0, 0.5, 1.2),
                         rotation=(0, math.radians(10), math.radians(45)), scale=(1, 2, 1))
    return ramp, flipped, tilted


def array_stairs(bpy, count=6, rise=0.2, run=0.4):
    """One step box with an ARRAY modifier (constant offset) making ``count`` steps."""
    v, f = box((run, 2.0, rise))
    step = mesh_object(bpy, "Stairs", v, f, location=(0, 0, rise / 2))
    mod = step.modifiers.new("Array", "ARRAY")
    mod.count = count
    mod.use_relative_offset = False
    mod.use_constant_offset = True
    mod.constant_offset_displace = (run, 0.0, rise)
    return step


def collection_instance(bpy, location=(4.0, 0.0, 0.0)):
    """A box in a collection that is not in the scene, instanced by an Empty at ``location``."""
    coll = bpy.data.collections.new("Props")
    v, f = box((1.0, 1.0, 1.0))
    mesh_object(bpy, "Crate", v, f, location=(0, 0, 0.5), collection=coll)
    inst = bpy.data.objects.new("CrateInstance", None)
    inst.instance_type = "COLLECTION"
    inst.instance_collection = coll
    inst.location = location
    bpy.context.scene.collection.objects.link(inst)
    return inst


def polyline(bpy, name, points):
    """An ordered mesh polyline (vertices joined by edges) with role PATH."""
    me = bpy.data.meshes.new(name)
    me.from_pydata([tuple(map(float, p)) for p in points],
                   [(i, i + 1) for i in range(len(points) - 1)], [])
    ob = bpy.data.objects.new(name, me)
    ob.capsule_collision.role = "PATH"
    bpy.context.scene.collection.objects.link(ob)
    return ob


def poly_curve(bpy, name, points):
    """A POLY curve through ``points`` (role PATH)."""
    cu = bpy.data.curves.new(name, "CURVE")
    cu.dimensions = "3D"
    sp = cu.splines.new("POLY")
    sp.points.add(len(points) - 1)
    for p, co in zip(sp.points, points):
        p.co = (*map(float, co), 1.0)
    ob = bpy.data.objects.new(name, cu)
    ob.capsule_collision.role = "PATH"
    bpy.context.scene.collection.objects.link(ob)
    return ob


def staircase(bpy, name, rises, treads, width=2.0, location=(0, 0, 0)):
    """One closed mesh of steps rising along +x from z = 0: risers ``rises[i]`` high, treads
    ``treads[i]`` deep, ``width`` along y (centred), a back wall down to the floor."""
    xs = np.concatenate([[0.0], np.cumsum(treads)])
    zs = np.cumsum(rises)
    zb = np.concatenate([[0.0], zs[:-1]])
    y0, y1 = -width / 2, width / 2
    verts, faces = [], []

    def quad(*pts):
        faces.append(tuple(range(len(verts), len(verts) + 4)))
        verts.extend(pts)

    for i in range(len(rises)):
        xa, xb, z = xs[i], xs[i + 1], zs[i]
        quad((xa, y1, zb[i]), (xa, y0, zb[i]), (xa, y0, z), (xa, y1, z))  # riser
        quad((xa, y0, z), (xb, y0, z), (xb, y1, z), (xa, y1, z))  # tread
        quad((xa, y0, 0), (xb, y0, 0), (xb, y0, z), (xa, y0, z))  # side -y
        quad((xb, y1, 0), (xa, y1, 0), (xa, y1, z), (xb, y1, z))  # side +y
        quad((xa, y1, 0), (xb, y1, 0), (xb, y0, 0), (xa, y0, 0))  # bottom
    xb, z = xs[-1], zs[-1]
    quad((xb, y0, 0), (xb, y1, 0), (xb, y1, z), (xb, y0, z))  # back
    ob = mesh_object(bpy, name, verts, faces, location=location)
    return ob


REACH_BOXES = {  # name: (lo, hi) metres; the top of each is its face 1 (``box``)
    "Ground West": ((0, 0, -1.5), (2, 8, 0)),
    "Ground East": ((4, 0, -1.5), (12, 8, 0)),
    "Ground South": ((2, 0, -1.5), (4, 2, 0)),
    "Ground North": ((2, 4, -1.5), (4, 8, 0)),
    "Pit Floor": ((2, 2, -1.7), (4, 4, -1.5)),
    "Platform": ((7, 5, 0), (10, 7.5, 0.36)),
    "Slab": ((8, 0.5, 1.7), (10, 2.5, 1.9)),
}


def reach_level(bpy, spawn=(1.0, 1.0, 0.0), unit=1.0):
    """Ground at z = 0 of four 1.5 m slabs around a 2 x 2 m pit (x, y in [2, 4]) whose floor
    is 1.5 m down: no way out, a trap; a 3 x 2.5 m platform 0.36 m high (above the 0.35 m
    step: an island); a 2 x 2 m slab floating 1.7 m up (the floor under it is cramped, its
    top an island); a capsule marked Spawn at ``spawn`` (None: no capsule). Lengths are
    metres divided by ``unit`` (the scene's metres per Blender unit). Returns the spawn
    capsule or None."""
    k = 1.0 / unit
    for name, (lo, hi) in REACH_BOXES.items():
        size = np.subtract(hi, lo) * k
        v, f = box(size)
        mesh_object(bpy, name, v, f, location=tuple(np.add(lo, hi) / 2 * k))
    if spawn is None:
        return None
    cap = capsule(bpy, "Spawn", tuple(np.asarray(spawn) * k), radius=0.35 * k, height=1.8 * k)
    cap.capsule_collision.spawn = True
    return cap


EVERY_CHECK = ("check_penetration", "classify_walkability", "stand_test", "stair_audit",
               "headroom_audit", "ledge_audit", "reachability", "walkthrough")


def every_result_level(bpy):
    """``reach_level`` with a flight of 0.5 m risers, a capsule "Probe" in the platform's side
    and a route "Route" over the ground; every check of the panel run on it (``EVERY_CHECK``),
    so every face layer, the trace, the cells and the markers have something to draw."""
    reach_level(bpy)
    staircase(bpy, "Steps", [0.5] * 3, [0.6] * 3, location=(5.0, 1.0, 0.0))
    capsule(bpy, "Probe", (6.8, 6.0, 0.0))
    polyline(bpy, "Route", [(1.0, 1.0, 0.0), (1.0, 7.0, 0.0), (4.5, 7.0, 0.0)])
    # a 3 m tower nobody climbs with a lid 1 m over its top: low headroom on floor no spawn
    # reaches, the audits' one info (the Out of Reach layer)
    for name, (lo, hi) in {"Tower": ((10.5, 3.0, 0.0), (12.0, 4.5, 3.0)),
                           "Tower Lid": ((10.5, 3.0, 4.0), (12.0, 4.5, 4.1))}.items():
        v, f = box(np.subtract(hi, lo))
        mesh_object(bpy, name, v, f, location=tuple(np.add(lo, hi) / 2))
    bpy.context.view_layer.update()
    for op in EVERY_CHECK:
        assert getattr(bpy.ops.capsule_collision, op)() == {"FINISHED"}, op
    bpy.context.scene.capsule_collision.show_out_of_reach = True  # off by default
