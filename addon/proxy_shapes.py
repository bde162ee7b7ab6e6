"""The shapes of collision proxies for one render mesh, as world-space arrays (metres): what
``operators_proxy`` computes before it writes any object.

Each maker takes the render mesh's (vertices (V, 3), triangles (M, 3)) and returns a list of
(kind, vertices, triangles) pieces (``core.authoring.naming`` kinds), or raises ValueError
naming what does not fit. The geometry is core's (oriented box, sphere/capsule fit, sampled
distance) or Blender's own (``bmesh.ops.convex_hull``, the Decimate modifier); CoACD, a
library made for convex decomposition, is imported only by ``decomposition``.
"""

from __future__ import annotations

import importlib
from typing import Any

import bmesh
import bpy
import numpy as np

from ..core import TriangleMesh
from ..core.authoring import box_mesh, capsule_mesh, fit_primitive, oriented_box
from ..core.authoring.deviation import surface_deviation
from . import scene_data

PRIMITIVE_SEGMENTS = 16  # around a sphere or capsule proxy
PRIMITIVE_RINGS = 4  # latitude rings per hemisphere
DECIMATE_STEPS = 7  # halvings of the ratio interval: the ratio found within 1/128
MIN_DECIMATE_RATIO = 0.005  # Decimate's collapse ratio never goes below this
COACD_MISSING = ("convex decomposition needs the CoACD library (PyPI 'coacd'): install the "
                 "extension with its bundled wheels, or 'pip install coacd' for the CLI")


def _temp_mesh(name, vertices, triangles=None):
    """A mesh datablock from arrays (no object; the caller removes it)."""
    co = np.asarray(vertices, np.float32)
    me = bpy.data.meshes.new(name)
    me.vertices.add(len(co))
    me.vertices.foreach_set("co", co.ravel())
    if triangles is not None and len(triangles):
        tris = np.asarray(triangles, np.int32)
        me.loops.add(tris.size)
        me.loops.foreach_set("vertex_index", tris.ravel())
        me.polygons.add(len(tris))
        me.polygons.foreach_set("loop_start", np.arange(0, tris.size, 3, dtype=np.int32))
    me.update(calc_edges=True)
    return me


def _bmesh_triangles(bm) -> tuple[np.ndarray, np.ndarray]:
    """(vertices, triangles) of a bmesh after triangulating it (read through a mesh)."""
    bmesh.ops.triangulate(bm, faces=bm.faces[:])
    me = bpy.data.meshes.new("cc_read")
    try:
        bm.to_mesh(me)
        pos, tris, _faces = scene_data.mesh_triangles(me)
        return pos.astype(np.float64), tris.astype(np.int64)
    finally:
        bpy.data.meshes.remove(me)


def box(vertices, triangles, **_):
    """The tight oriented box (``core.authoring.oriented_box``)."""
    ob = oriented_box(vertices, triangles)
    if (ob.half_extents <= 0).any():
        raise ValueError("is flat: a box proxy needs thickness (use a hull or a mesh)")
    v, t = box_mesh(ob)
    return [("box", v, t)]


def convex_hull(vertices, triangles, **_):
    """The convex hull (``bmesh.ops.convex_hull``), triangulated; interior points dropped."""
    me = _temp_mesh("cc_hull_points", vertices)
    bm = bmesh.new()
    try:
        bm.from_mesh(me)
        out = bmesh.ops.convex_hull(bm, input=bm.verts[:], use_existing_faces=False)
        drop = list({g for g in out["geom_interior"] + out["geom_unused"]
                     if isinstance(g, bmesh.types.BMVert)})
        bmesh.ops.delete(bm, geom=drop, context="VERTS")
        if not bm.faces:
            raise ValueError("has no volume: its hull is flat (use a box or a mesh)")
        v, t = _bmesh_triangles(bm)
    finally:
        bm.free()
        bpy.data.meshes.remove(me)
    return [("convex", v, t)]


def primitive(vertices, triangles, tolerance=0.02, **_):
    """A sphere or capsule within ``tolerance`` metres of the surface, else ValueError."""
    fit = fit_primitive(vertices, triangles, tolerance)
    if not fit.kind:
        raise ValueError(f"fits no sphere or capsule within {tolerance:g} m (the best, a "
                         f"{fit.best}, is {fit.deviation:.3g} m off): use a box or a hull")
    v, t = capsule_mesh(fit.a, fit.b, fit.radius, PRIMITIVE_SEGMENTS, PRIMITIVE_RINGS)
    return [(fit.kind, v, t)]


def decomposition(vertices, triangles, concavity=0.05, max_hulls=8, **_):
    """Convex pieces by CoACD (``threshold`` = ``concavity``, at most ``max_hulls``;
    0: no budget)."""
    try:
        coacd = importlib.import_module("coacd")
    except ImportError as exc:
        raise ValueError(COACD_MISSING) from exc
    coacd.set_log_level("error")
    mesh = coacd.Mesh(np.asarray(vertices, np.float64), np.asarray(triangles, np.int32))
    parts = coacd.run_coacd(mesh, threshold=float(concavity),
                            max_convex_hull=int(max_hulls) if max_hulls > 0 else -1, seed=0)
    if not parts:
        raise ValueError("CoACD found no convex pieces")
    return [("convex", np.asarray(v, np.float64), np.asarray(t, np.int64)) for v, t in parts]


def _read_evaluated(depsgraph, obj):
    """(vertices, triangles) of ``obj`` as evaluated (its Decimate applied), Blender units."""
    pos, tris, _faces = scene_data.mesh_triangles(obj.evaluated_get(depsgraph).data)
    return pos.astype(np.float64), tris.astype(np.int64)


def simplified_many(meshes, tolerance=0.02, unit_scale=1.0, scene=None) -> dict:
    """For each render mesh of ``meshes`` ({name: (vertices, triangles)}, world metres):
    Blender's Decimate (collapse) at the smallest ratio whose result stays within
    ``tolerance`` metres of it both ways (``surface_deviation``, sampled), found by bisection
    over the ratio. All meshes are decimated together (one temporary object each in one
    temporary collection, one depsgraph update per bisection step). Returns {name: pieces}."""
    coll = bpy.data.collections.new("cc_decimate")
    scene.collection.children.link(coll)
    temps: dict[str, Any] = {}  # name -> (object, its mesh, its Decimate modifier)
    try:
        for name, (v, t) in meshes.items():
            me = _temp_mesh("cc_decimate", np.asarray(v) / unit_scale, t)
            ob = bpy.data.objects.new("cc_decimate", me)
            mod: Any = ob.modifiers.new("Decimate", "DECIMATE")
            mod.use_collapse_triangulate = True
            coll.objects.link(ob)
            temps[name] = (ob, me, mod)
        lo = dict.fromkeys(meshes, MIN_DECIMATE_RATIO)
        hi = dict.fromkeys(meshes, 1.0)
        best = {name: (np.asarray(v, np.float64), np.asarray(t, np.int64))
                for name, (v, t) in meshes.items()}
        built = {name: TriangleMesh(v, t) for name, (v, t) in best.items()}
        depsgraph = bpy.context.evaluated_depsgraph_get()
        for _step in range(DECIMATE_STEPS):
            for name, (_ob, _me, mod) in temps.items():
                mod.ratio = (lo[name] + hi[name]) / 2.0
            depsgraph.update()
            for name, (ob, _me, _mod) in temps.items():
                v, t = _read_evaluated(depsgraph, ob)
                v *= unit_scale
                mid = (lo[name] + hi[name]) / 2.0
                rv, rt = meshes[name]
                if len(t) == len(rt) or (len(t) and surface_deviation(
                        rv, rt, v, t, tolerance, built[name]).within):
                    best[name], hi[name] = (v, t), mid
                else:
                    lo[name] = mid
    finally:
        for ob, me, _mod in temps.values():
            bpy.data.objects.remove(ob)
            bpy.data.meshes.remove(me)
        bpy.data.collections.remove(coll)
    return {name: [("mesh", v, t)] for name, (v, t) in best.items()}


MAKERS = {"BOX": box, "HULL": convex_hull, "PRIMITIVE": primitive,
          "DECOMPOSE": decomposition}  # one mesh at a time; SIMPLIFY: simplified_many
