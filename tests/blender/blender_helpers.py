"""Scene builders shared by the Blender tests (real bpy; import after the ``addon`` fixture).

Everything builds through ``bpy.data`` (no operators, no context needed), links into the scene's
master collection unless ``collection`` is given, and returns the new object.
"""

from __future__ import annotations

import importlib
from types import SimpleNamespace

import numpy as np


def addon_module(addon, name: str):
    """The enabled extension's submodule, e.g. ``addon_module(addon, "addon.scene_data")``."""
    return importlib.import_module(f"{addon.__name__}.{name}")


def addon_modules(addon, **names):
    """The enabled extension's submodules by attribute name, e.g.
    ``addon_modules(addon, cache="addon.cache", core="core").cache``."""
    return SimpleNamespace(**{k: addon_module(addon, v) for k, v in names.items()})


def png_rgb(path) -> np.ndarray:
    """(H, W, 3) float32 RGB of a PNG loaded through Blender, rows from the top (Blender
    stores them bottom-up); the image is removed again."""
    bpy = _bpy()
    img = bpy.data.images.load(str(path))
    try:
        w, h = img.size
        px = np.empty(w * h * 4, np.float32)
        img.pixels.foreach_get(px)
    finally:
        bpy.data.images.remove(img)
    return px.reshape(h, w, 4)[::-1, :, :3]


def _bpy():
    import bpy  # noqa: PLC0415  (after conftest set the environment)

    return bpy


def mesh_object(name, vertices, faces, location=(0, 0, 0), rotation=(0, 0, 0),
                scale=(1, 1, 1), collection=None, mesh=None):
    """A mesh object from vertex coordinates and faces (lists of vertex indices).

    ``mesh`` reuses an existing mesh datablock (a linked duplicate).
    """
    bpy = _bpy()
    if mesh is None:
        mesh = bpy.data.meshes.new(name)
        mesh.from_pydata([tuple(map(float, v)) for v in vertices], [], [list(f) for f in faces])
        mesh.update()
    ob = bpy.data.objects.new(name, mesh)
    ob.location = location
    ob.rotation_euler = rotation
    ob.scale = scale
    (collection or bpy.context.scene.collection).objects.link(ob)
    return ob


BOX_FACES = (
    (0, 3, 2, 1), (4, 5, 6, 7),  # bottom (normal -Z), top (+Z)
    (0, 1, 5, 4), (1, 2, 6, 5), (2, 3, 7, 6), (3, 0, 4, 7),
)


def box_vertices(lo, hi):
    (x0, y0, z0), (x1, y1, z1) = lo, hi
    return [(x0, y0, z0), (x1, y0, z0), (x1, y1, z0), (x0, y1, z0),
            (x0, y0, z1), (x1, y0, z1), (x1, y1, z1), (x0, y1, z1)]


def box(name, lo=(-1, -1, -1), hi=(1, 1, 1), **kw):
    """An axis-aligned box (6 quads, normals out) from corner ``lo`` to ``hi`` (object space)."""
    return mesh_object(name, box_vertices(lo, hi), BOX_FACES, **kw)


def floor(name, size=10.0, z=0.0, **kw):
    """A square quad of side ``size`` at height ``z``, normal +Z."""
    h = size / 2
    return mesh_object(name, [(-h, -h, z), (h, -h, z), (h, h, z), (-h, h, z)], [(0, 1, 2, 3)],
                       **kw)


def grid(name, n, size=10.0, **kw):
    """An n x n quad grid (2 n^2 triangles) of side ``size``, built from numpy (fast)."""
    bpy = _bpy()
    xs = np.linspace(-size / 2, size / 2, n + 1)
    gx, gy = np.meshgrid(xs, xs, indexing="xy")
    z = 0.05 * np.sin(gx) * np.cos(gy)
    co = np.stack([gx.ravel(), gy.ravel(), z.ravel()], axis=1).astype(np.float32)
    i = np.arange(n)
    a = (i[None, :] + (n + 1) * i[:, None]).ravel()
    quads = np.stack([a, a + 1, a + n + 2, a + n + 1], axis=1).astype(np.int32)
    me = bpy.data.meshes.new(name)
    me.vertices.add(co.shape[0])
    me.vertices.foreach_set("co", co.ravel())
    me.loops.add(quads.size)
    me.loops.foreach_set("vertex_index", quads.ravel())
    me.polygons.add(quads.shape[0])
    me.polygons.foreach_set("loop_start", np.arange(0, quads.size, 4, dtype=np.int32))
    me.update(calc_edges=True)
    return mesh_object(name, None, None, mesh=me, **kw)


def empty(name, location=(0, 0, 0), collection=None):
    bpy = _bpy()
    ob = bpy.data.objects.new(name, None)
    ob.location = location
    (collection or bpy.context.scene.collection).objects.link(ob)
    return ob


def collection_instance(name, collection, location=(0, 0, 0), rotation=(0, 0, 0),
                        scale=(1, 1, 1)):
    """An Empty instancing ``collection`` (the collection itself is not linked to the scene)."""
    ob = empty(name, location)
    ob.instance_type = "COLLECTION"
    ob.instance_collection = collection
    ob.rotation_euler = rotation
    ob.scale = scale
    return ob


def instance_cubes_on_points(obj, cube_size=0.5):
    """A geometry-nodes modifier on ``obj``: a cube instanced on every vertex (not realized)."""
    bpy = _bpy()
    tree = bpy.data.node_groups.new("cubes on points", "GeometryNodeTree")
    tree.interface.new_socket("Geometry", in_out="INPUT", socket_type="NodeSocketGeometry")
    tree.interface.new_socket("Geometry", in_out="OUTPUT", socket_type="NodeSocketGeometry")
    n_in = tree.nodes.new("NodeGroupInput")
    n_out = tree.nodes.new("NodeGroupOutput")
    iop = tree.nodes.new("GeometryNodeInstanceOnPoints")
    cube = tree.nodes.new("GeometryNodeMeshCube")
    cube.inputs["Size"].default_value = (cube_size, cube_size, cube_size)
    tree.links.new(n_in.outputs[0], iop.inputs["Points"])
    tree.links.new(cube.outputs[0], iop.inputs["Instance"])
    tree.links.new(iop.outputs[0], n_out.inputs[0])
    mod = obj.modifiers.new("cubes", "NODES")
    mod.node_group = tree
    return mod


def set_role(obj, role):
    """Give ``obj`` an extension role when the object property group is registered."""
    pg = getattr(obj, "capsule_collision", None)
    if pg is None:
        return False
    pg.role = role
    return True


def capsule(name, location=(0, 0, 0), radius=0.35, height=1.8, rotation=(0, 0, 0)):
    """A capsule Empty (role CAPSULE) with ``radius``/``height`` in Blender units."""
    ob = empty(name, location)
    ob.rotation_euler = rotation
    set_role(ob, "CAPSULE")
    pg = ob.capsule_collision
    pg.radius = radius
    pg.height = height
    return ob


def depsgraph():
    bpy = _bpy()
    return bpy.context.evaluated_depsgraph_get()
