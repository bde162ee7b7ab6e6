"""Collision proxies as Blender data: the "Collision" collection the checks read, proxy
objects made from world-space arrays, and which render mesh each proxy stands for.

A proxy is a triangulated mesh object in the "Collision" collection, its vertices in world
space (identity transform; Blender units), drawn as wire and never rendered, with custom
properties naming its render mesh (``cc_proxy_of``), its kind (``cc_proxy_kind``: box,
sphere, capsule, convex, mesh; ``core.authoring.naming``) and its number (``cc_proxy_index``),
and named by the scene's engine convention. Making proxies for a render mesh replaces the
proxies it had (the latest operator wins), and points the scene's collision source at the
collection, so every check then reads the proxies.
"""

from __future__ import annotations

import bpy
import numpy as np

from ..core.authoring import collision_name
from . import scene_data

COLLECTION_NAME = "Collision"
PROXY_OF = "cc_proxy_of"  # custom property: the render mesh a proxy stands for
PROXY_KIND = "cc_proxy_kind"  # box, sphere, capsule, convex, mesh
PROXY_INDEX = "cc_proxy_index"  # 1-based number among the render mesh's proxies


def collision_collection(scene):
    """The scene's "Collision" collection (made and linked under the scene when missing),
    set as the scene's collision source."""
    coll = bpy.data.collections.get(COLLECTION_NAME)
    if coll is None or coll.library is not None:
        coll = bpy.data.collections.new(COLLECTION_NAME)
    if coll.name not in scene.collection.children and scene.user_of_id(coll) == 0:
        scene.collection.children.link(coll)
    s = scene.capsule_collision
    s.collision_source = "COLLECTION"
    s.collision_collection = coll
    return coll


def render_objects(context, collection_name: str = "") -> list:
    """The render meshes an authoring operator works on: the meshes of collection
    ``collection_name`` (and its children), else the selected meshes. Never a proxy, an
    object of the extension (capsules, traces, results) or a member of "Collision".
    ValueError naming the collection when it does not exist or nothing is chosen."""
    if collection_name:
        coll = bpy.data.collections.get(collection_name)
        if coll is None:
            raise ValueError(f"no collection named {collection_name!r}")
        pool = list(coll.all_objects)
    else:
        pool = list(context.selected_objects or ())
    proxy_coll = bpy.data.collections.get(COLLECTION_NAME)
    proxies: set[str] = ({o.name for o in proxy_coll.all_objects} if proxy_coll is not None
                         else set())
    out = [o for o in pool if o.type == "MESH" and scene_data.role_of(o) == "NONE"
           and o.name not in proxies and PROXY_OF not in o]
    if not out:
        where = f"collection {collection_name!r}" if collection_name else "the selection"
        raise ValueError(f"no render mesh in {where}: select mesh objects (or name a "
                         "collection); proxies and capsules are not render meshes")
    return out


def world_arrays(obj, depsgraph, unit_scale) -> tuple[np.ndarray, np.ndarray]:
    """(vertices (V, 3) float64 world metres, triangles (M, 3) int64) of ``obj`` evaluated
    (modifiers applied, Blender's triangulation). ValueError naming the object when it has
    no faces."""
    ev = obj.evaluated_get(depsgraph)
    src = scene_data.PartSource(obj.name, ev, obj, ev.matrix_world.copy(), True)
    part = scene_data.read_part(src, unit_scale)
    if part is None:
        raise ValueError(f"{obj.name} has no faces to make collision from")
    return part.vertices, part.triangles.astype(np.int64)


def proxies_of(name: str) -> list:
    """The proxy objects standing for render mesh ``name``, by number."""
    found = [o for o in bpy.data.objects if o.get(PROXY_OF) == name]
    return sorted(found, key=lambda o: int(o.get(PROXY_INDEX, 0)))


def remove_proxies_of(name: str) -> int:
    """Delete the proxies of render mesh ``name`` (and their meshes); how many."""
    found = proxies_of(name)
    for ob in found:
        me = ob.data
        bpy.data.objects.remove(ob)
        if me is not None and me.users == 0:
            bpy.data.meshes.remove(me)
    return len(found)


def new_proxy(scene, engine, source: str, kind: str, index: int, vertices, triangles,
              unit_scale: float):
    """A proxy object of ``kind`` for render mesh ``source`` from world-space metres
    (vertices (V, 3), triangles (M, 3)), linked into the "Collision" collection."""
    name = collision_name(engine, kind, source, index)
    used, tris = np.unique(np.asarray(triangles, np.int64), return_inverse=True)
    tris = tris.reshape(-1, 3).astype(np.int32)  # only the vertices its triangles use
    co = (np.asarray(vertices, np.float64)[used] / unit_scale).astype(np.float32)
    me = bpy.data.meshes.new(name)
    me.vertices.add(len(co))
    me.vertices.foreach_set("co", co.ravel())
    me.loops.add(tris.size)
    me.loops.foreach_set("vertex_index", tris.ravel())
    me.polygons.add(len(tris))
    me.polygons.foreach_set("loop_start", np.arange(0, tris.size, 3, dtype=np.int32))
    me.update(calc_edges=True)
    me.validate()
    ob = bpy.data.objects.new(name, me)
    ob[PROXY_OF] = source
    ob[PROXY_KIND] = kind
    ob[PROXY_INDEX] = int(index)
    ob.display_type = "WIRE"
    ob.hide_render = True
    collision_collection(scene).objects.link(ob)
    return ob


def rename_for(engine, obj) -> str:
    """The name proxy ``obj`` takes under ``engine`` (its own name when it is no proxy)."""
    if PROXY_OF not in obj:
        return obj.name
    return collision_name(engine, str(obj[PROXY_KIND]), str(obj[PROXY_OF]),
                          int(obj.get(PROXY_INDEX, 1)))
