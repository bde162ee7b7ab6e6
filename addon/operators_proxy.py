"""Collision authoring operators: proxies from render meshes and stair ramps.

``capsule_collision.make_proxies`` makes, for each selected render mesh (or each mesh of a
named collection), collision proxies of one kind (box, convex hull, sphere/capsule, CoACD
decomposition, simplified mesh: ``proxy_shapes``) in the "Collision" collection, named by
the chosen engine's convention (``proxies``), replacing that mesh's previous proxies; the
scene's collision source becomes that collection. ``capsule_collision.stair_ramps`` finds
the stair flights on the selected meshes (``core.stair_audit`` on the visible render level,
so landings count) and makes one convex ramp per flight (``core.authoring.stair_ramps``),
plus, per mesh, a mesh proxy of its faces that are not the flight's, so the steps leave
collision. Everything is computed before anything is written: a render mesh that cannot be
made into a proxy is named in the report and nothing of it changes; undo restores the rest.
"""

from __future__ import annotations

import time

import bpy
import numpy as np
from bpy.props import EnumProperty, FloatProperty, IntProperty, StringProperty

from ..core import TriangleMesh
from ..core.authoring import ENGINES, stair_ramps
from . import operators, proxies, proxy_shapes, scene_data

ENGINE_ITEMS = tuple((e, e.title(), f"{e.title()}'s collision naming") for e in ENGINES)
KIND_ITEMS = (
    ("BOX", "Box", "The tight oriented box (minimum volume over the mesh's main axes)"),
    ("HULL", "Convex Hull", "The convex hull of the mesh"),
    ("PRIMITIVE", "Sphere / Capsule", "A sphere or capsule, where one fits within the "
     "tolerance"),
    ("DECOMPOSE", "Convex Decomposition", "Convex pieces by CoACD (concavity threshold, hull "
     "budget)"),
    ("SIMPLIFY", "Simplified Mesh", "Blender's Decimate within the distance tolerance"),
)


def _plural(n, word):
    if n == 1:
        return f"{n} {word}"
    return f"{n} {word}{'es' if word.endswith('sh') else 's'}"


def _listed(failures, shown=5) -> str:
    """The first ``shown`` failures, and how many more."""
    more = len(failures) - shown
    return "; ".join(failures[:shown]) + (f"; and {more} more" if more > 0 else "")


class AuthoringOperator(operators.CheckOperator):
    """Mixin: engine and collection options, Object Mode poll."""

    engine: EnumProperty(name="Engine", items=ENGINE_ITEMS, default="UNREAL",
                         description="Whose naming the collision objects follow")
    collection: StringProperty(name="Collection", default="",
                               description="Work on this collection's meshes instead of the "
                               "selection")

    @classmethod
    def poll(cls, context):
        return operators.object_mode_poll(cls, context, edit_mesh_ok=False,
                                          message="Switch to Object Mode to make collision")


class CAPSULE_COLLISION_OT_make_proxies(AuthoringOperator, bpy.types.Operator):
    """Make collision proxies for the selected render meshes (or a collection's) in the
    "Collision" collection, named for the engine; the checks then read that collection"""

    bl_idname = "capsule_collision.make_proxies"
    bl_label = "Make Collision"
    bl_options = {"REGISTER", "UNDO"}

    kind: EnumProperty(name="Kind", items=KIND_ITEMS, default="BOX")
    tolerance: FloatProperty(name="Tolerance", default=0.02, min=0.0001, soft_max=0.5,
                             unit="LENGTH", description="Sphere/capsule fit and simplified "
                             "mesh: the largest distance from the render surface (metres)")
    concavity: FloatProperty(name="Concavity", default=0.05, min=0.01, max=1.0,
                             description="CoACD's concavity threshold: lower, more pieces")
    max_hulls: IntProperty(name="Hull Budget", default=8, min=0, soft_max=64,
                           description="CoACD's most convex pieces per mesh (0: no budget)")

    def run(self, context):
        start = time.perf_counter()
        scene = context.scene
        objs = proxies.render_objects(context, self.collection)
        unit = scene_data.unit_scale_of(scene)
        made, failed = self._shapes(context, objs, unit)
        if not made:
            raise ValueError(_listed(failed))
        n = 0
        for name, pieces in made.items():
            proxies.remove_proxies_of(name)
            for index, (kind, v, t) in enumerate(pieces, start=1):
                proxies.new_proxy(scene, self.engine, name, kind, index, v, t, unit)
                n += 1
        label = dict((k, w) for k, w, _d in KIND_ITEMS)[self.kind].lower()
        message = (f"{_plural(n, 'collision object')} ({label}) for "
                   f"{_plural(len(made), 'render mesh')} in {time.perf_counter() - start:.2f} s")
        if failed:
            return "WARNING", message + "; not made: " + _listed(failed)
        return message

    def _shapes(self, context, objs, unit):
        """({render mesh name: [(kind, vertices, triangles)]}, [failure per mesh])."""
        depsgraph = context.evaluated_depsgraph_get()
        arrays, made, failed = {}, {}, []
        for ob in objs:
            try:
                arrays[ob.name] = proxies.world_arrays(ob, depsgraph, unit)
            except ValueError as exc:
                failed.append(str(exc))
        if self.kind == "SIMPLIFY":
            if arrays:
                made = proxy_shapes.simplified_many(arrays, self.tolerance * unit, unit,
                                                    context.scene)
            return made, failed
        maker = proxy_shapes.MAKERS[self.kind]
        for name, (v, t) in arrays.items():
            try:
                made[name] = maker(v, t, tolerance=self.tolerance * unit,
                                   concavity=self.concavity, max_hulls=self.max_hulls)
            except (ValueError, RuntimeError) as exc:  # RuntimeError: a bmesh op refused
                failed.append(f"{name} {exc}")
        return made, failed


def _render_level(context, chosen, unit):
    """The visible render meshes plus ``chosen`` as one TriangleMesh, the owner of each
    triangle (index into the returned names) and each object's (vertices, triangles)."""
    depsgraph = context.evaluated_depsgraph_get()
    coll = bpy.data.collections.get(proxies.COLLECTION_NAME)
    skip = {o.name for o in coll.all_objects} if coll is not None else set()
    pool = {o.name: o for o in context.scene.objects
            if o.type == "MESH" and o.visible_get() and o.name not in skip
            and proxies.PROXY_OF not in o and scene_data.role_of(o) == "NONE"}
    pool.update({o.name: o for o in chosen})
    names, arrays, verts, tris, owner, off = [], {}, [], [], [], 0
    for name, ob in pool.items():
        try:
            v, t = proxies.world_arrays(ob, depsgraph, unit)
        except ValueError:
            continue
        arrays[name] = (v, t)
        owner.append(np.full(len(t), len(names)))
        names.append(name)
        verts.append(v)
        tris.append(t + off)
        off += len(v)
    mesh = TriangleMesh(np.concatenate(verts), np.concatenate(tris))
    return mesh, np.concatenate(owner), names, arrays


class CAPSULE_COLLISION_OT_stair_ramps(AuthoringOperator, bpy.types.Operator):
    """Replace the stair flights of the selected render meshes with one collision ramp each
    (along the nosings, flush with the landings, within the max slope); the steps' own faces
    leave collision"""

    bl_idname = "capsule_collision.stair_ramps"
    bl_label = "Stair Ramps"
    bl_options = {"REGISTER", "UNDO"}

    def run(self, context):
        start = time.perf_counter()
        scene = context.scene
        chosen = proxies.render_objects(context, self.collection)
        unit = scene_data.unit_scale_of(scene)
        settings = operators.controller_settings(context)
        mesh, owner, names, arrays = _render_level(context, chosen, unit)
        wanted = {names.index(o.name) for o in chosen if o.name in names}
        ramps, steep = [], []
        for ramp in stair_ramps(mesh, settings):
            holder = np.bincount(owner[ramp.flight_faces], minlength=len(names))
            k = int(np.argmax(holder))
            if k not in wanted:
                continue
            if not ramp.fits_slope:
                steep.append(f"a flight on {names[k]} ({ramp.slope_deg:.1f}° > "
                             f"{settings.max_slope_deg:g}° max slope) keeps its steps")
                continue
            ramps.append((names[k], ramp))
        if not ramps:
            raise ValueError("no stair flight to ramp on " + ", ".join(o.name for o in chosen)
                             + ("; " + "; ".join(steep) if steep else ""))
        self._write(scene, ramps, mesh, owner, names, arrays, wanted, unit)
        message = (f"{_plural(len(ramps), 'stair ramp')} on "
                   f"{_plural(len({n for n, _r in ramps}), 'render mesh')} "
                   f"({sum(r.flight_faces.size for _n, r in ramps)} step triangles left out) "
                   f"in {time.perf_counter() - start:.2f} s")
        if steep:
            return "WARNING", message + "; " + "; ".join(steep)
        return message

    def _write(self, scene, ramps, mesh, owner, names, arrays, wanted, unit):
        """Each chosen render mesh with faces in a ramp: its proxies replaced by what is not a
        flight's (a mesh proxy of its other faces and of the parts of its cut faces beside
        the ramps, when any) and by the ramps it holds most risers of (convex proxies)."""
        out = np.zeros(mesh.n_triangles, bool)
        for _n, ramp in ramps:
            out[ramp.flight_faces] = True
            out[ramp.cut_faces] = True
        pieces = np.concatenate([r.pieces for _n, r in ramps])
        piece_owner = owner[np.concatenate([r.piece_face for _n, r in ramps])]
        first = np.concatenate([[0], np.cumsum([len(arrays[n][1]) for n in names])])
        touched = sorted({int(k) for k in np.unique(owner[out])} & wanted)
        for k in touched:
            name = names[k]
            proxies.remove_proxies_of(name)
            v, t = arrays[name]
            kept = t[~out[first[k]:first[k + 1]]]
            mine = pieces[piece_owner == k].reshape(-1, 3)
            index = 1
            if len(kept) or len(mine):
                tris = np.concatenate([kept, np.arange(len(mine)).reshape(-1, 3) + len(v)])
                proxies.new_proxy(scene, self.engine, name, "mesh", index,
                                  np.concatenate([v, mine]), tris, unit)
                index += 1
            for _n, ramp in (r for r in ramps if r[0] == name):
                proxies.new_proxy(scene, self.engine, name, "convex", index, ramp.vertices,
                                  ramp.triangles, unit)
                index += 1


classes = (CAPSULE_COLLISION_OT_make_proxies, CAPSULE_COLLISION_OT_stair_ramps)
