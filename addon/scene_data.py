"""Reading a Blender scene into ``core`` arrays: the collision level, capsules and walk paths.

One module, used by the operators, the live check and the pipeline CLI.

Level (``read_level``): every collision object of the scene's collision source, EVALUATED
(modifiers, shape keys and geometry nodes applied), in world space, in METRES (Blender units
times ``scene.unit_settings.scale_length``), float64, triangulated by Blender itself:

* triangles-only meshes: the corners in order (``.corner_vert`` read as one attribute), which
  is what Blender's own corner triangulation gives for a triangle;
* any quad or n-gon: Blender's corner triangles (``loop_triangles``, its quad rule and
  polyfill, so concave n-gons are split without inventing area), their corners gathered
  through ``.corner_vert``; ``loop_triangle_polygons`` gives the face of each triangle.

Positions come from the ``position`` attribute (float32, as Blender stores them); nothing loops
over vertices or faces in Python. Instances (collection instances, geometry-nodes instances)
come from ``depsgraph.object_instances`` with their own world matrix; linked duplicates are
separate objects sharing a mesh and are read once per object. A matrix with a negative
determinant (a mirror, negative scale) reverses the winding of its triangles so normals still
point out of the geometry.

Objects in Edit Mode are read from their edit data (``readable_mesh``: what the viewport
shows, modifiers applied; nothing is flushed and the designer stays in Edit Mode), so a level
never loses a mesh because a designer is editing it; ``LevelGeometry.edit_objects`` names them.

Map back to faces: ``tri_object`` / ``tri_face`` name the object and the polygon of its
evaluated mesh. ``tri_orig_face`` is the polygon of the ORIGINAL mesh (the one a designer
selects in Edit Mode): the identity when the evaluated mesh has the same faces as the original
(no modifier, or only modifiers that keep the topology: deforms, shape keys, displace, ...:
face count, corner count and every face's corner count equal), and -1 for every face of an
object whose topology a modifier changed (array, mirror, subdivision, triangulate, geometry
nodes) and for geometry-nodes instances, which no original face stands for. Blender keeps its
internal original-index layer away from Python, and writing an index attribute onto the user's
meshes would change their file; -1 is the honest answer. An instance's original face indices
refer to the mesh of the instanced object (the name after the last "/").
"""

from __future__ import annotations

import hashlib
import re
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, NamedTuple

import bpy
import numpy as np

from ..core import TriangleMesh, as_typed
from ..core.checks.verdicts import CapsuleCheck, PathCheck
from .scene_shapes import capsule_of, path_points, spawn_feet, spawn_objects, world_points

RESULTS_COLLECTION = "Capsule Collision Results"
NO_ORIGINAL_FACE = -1  # tri_orig_face where an evaluated face maps to no original face

# Engine naming conventions for collision meshes. Unreal: prefixes; Godot: suffixes (import
# hints); Unity: the "_collider" suffix of its common pipelines (core.authoring.naming);
# and the common "_col"/"_collision" suffixes. Blender's ".001" duplicate suffix is
# ignored, so "Wall_col.001" is collision too.
COLLISION_PREFIXES = ("UCX_", "UBX_", "UCP_", "USP_")
COLLISION_SUFFIXES = ("-col", "-colonly", "-convcol", "-convcolonly", "_col", "_collision",
                      "_collider")
_DUPLICATE_SUFFIX = re.compile(r"\.\d{3,}$")


@dataclass(frozen=True, eq=False)
class LevelGeometry:
    """The collision level as ``core`` sees it, plus the map back to Blender faces.

    mesh : core.TriangleMesh, world space, metres, float64, Z up
    objects : source object names; an instance is "<instancer>/<object>"
    tri_object : (M,) int32 index into ``objects``
    tri_face : (M,) int32 polygon index in that object's EVALUATED mesh
    tri_orig_face : (M,) int32 ORIGINAL polygon index, -1 where it does not map back
    unit_scale : metres per Blender unit
    stamp : hex digest of the geometry (vertices, triangles, names, face maps): equal stamps,
        equal level, across sessions too
    edit_objects : names read from the edit data of objects in Edit Mode (their edits are
        checked though not yet in the original mesh; the status says so)
    """

    mesh: TriangleMesh
    objects: tuple[str, ...]
    tri_object: np.ndarray
    tri_face: np.ndarray
    tri_orig_face: np.ndarray
    unit_scale: float
    stamp: str
    edit_objects: tuple[str, ...] = ()

    def faces_of(self, triangles) -> dict[str, np.ndarray]:
        """Original face indices per object name for triangle indices ``triangles`` (int array).

        Unmapped faces (-1) are kept as -1 entries; each array is sorted and unique.
        """
        tri = np.asarray(triangles, dtype=np.int64)
        out: dict[str, np.ndarray] = {}
        if tri.size == 0:
            return out
        objs = self.tri_object[tri]
        faces = self.tri_orig_face[tri]
        for k in np.unique(objs).tolist():
            out[self.objects[k]] = np.unique(faces[objs == k])
        return out


# ---------------------------------------------------------------- which objects collide
def role_of(obj) -> str:
    """The extension role of ``obj`` ("NONE" when the property group is not registered)."""
    pg = getattr(obj, "capsule_collision", None)
    return getattr(pg, "role", "NONE") if pg is not None else "NONE"


def unit_scale_of(scene) -> float:
    """Metres per Blender unit (``scene.unit_settings.scale_length``; 0 means 1 in Blender).

    Blender stores the scale as float32 (0.01 reads 0.009999999776); the value the designer
    typed is its shortest decimal at float32 precision (7 significant digits).
    """
    scale = as_typed(float(scene.unit_settings.scale_length))
    return scale if scale > 0.0 else 1.0


def matches_naming_convention(name: str) -> bool:
    """True for engine collision names: UCX_/UBX_/UCP_/USP_ prefixes, -col/_col suffixes."""
    base = _DUPLICATE_SUFFIX.sub("", name)
    if base.startswith(COLLISION_PREFIXES):
        return True
    return base.lower().endswith(COLLISION_SUFFIXES)


def _results_objects() -> set[str]:
    coll = bpy.data.collections.get(RESULTS_COLLECTION)
    return {o.name for o in coll.all_objects} if coll is not None else set()


def _settings(scene):
    return getattr(scene, "capsule_collision", None)


def _source(scene) -> tuple[str, object]:
    pg = _settings(scene)
    source = getattr(pg, "collision_source", "VISIBLE") if pg is not None else "VISIBLE"
    coll = getattr(pg, "collision_collection", None) if pg is not None else None
    return source, coll


def _member_filter(scene):
    """A predicate on ORIGINAL objects: is this object (or instancer) part of the source?"""
    source, coll = _source(scene)
    excluded = _results_objects()

    def usable(ob) -> bool:
        return ob.name not in excluded and role_of(ob) == "NONE"

    if source == "COLLECTION":
        if coll is None:
            raise ValueError("no collision meshes: the collision source is a collection, "
                             "but no collection is chosen")
        members = {o.name for o in coll.all_objects}
        return lambda ob: usable(ob) and ob.name in members
    if source == "NAMING":
        return lambda ob: usable(ob) and matches_naming_convention(ob.name)
    return usable


def _is_instance_member(accept, inst) -> bool:
    """Instances count when their instancer or the instanced object is in the source."""
    parent = inst.parent.original if inst.parent is not None else None
    inner = inst.instance_object.original if inst.instance_object is not None else None
    if parent is not None and role_of(parent) != "NONE":
        return False
    if inner is not None and role_of(inner) != "NONE":
        return False
    return (parent is not None and accept(parent)) or (inner is not None and accept(inner))


def collision_objects(scene, depsgraph) -> list:
    """The ORIGINAL mesh objects that are collision geometry under the scene's source.

    VISIBLE: every mesh visible in the view layer; COLLECTION: meshes of the chosen collection
    and its children, hidden ones included (collision proxies are usually hidden); NAMING:
    meshes whose names follow an engine convention, hidden ones included. Never an object with
    a ``capsule_collision.role`` other than NONE, nor anything in the results collection.
    Instanced objects are not listed here (``read_level`` adds them).
    """
    accept = _member_filter(scene)
    source, _ = _source(scene)
    out = []
    for ob in scene.objects:
        if ob.type != "MESH" or not accept(ob):
            continue
        if source == "VISIBLE" and not ob.visible_get():
            continue
        if not ob.evaluated_get(depsgraph).is_evaluated:
            continue  # disabled in viewports: not in the depsgraph
        out.append(ob)
    return out


def membership(scene, depsgraph) -> tuple:
    """What decides which objects the level is read from, without reading any mesh: the
    source setting, the unit scale, the collision objects, and every visible collection
    instancer with its collection's objects. Equal tuples, same objects (the cache's check
    on selection, hide, rename, link and source changes)."""
    source, coll = _source(scene)
    try:
        meshes = tuple(o.name for o in collision_objects(scene, depsgraph))
    except ValueError as exc:
        meshes = (str(exc),)
    instancers = tuple(
        (ob.name, ob.instance_collection.name,
         tuple(o.name for o in ob.instance_collection.all_objects))
        for ob in scene.objects
        if ob.instance_type == "COLLECTION" and ob.instance_collection is not None
        and role_of(ob) == "NONE" and ob.visible_get())
    return (source, getattr(coll, "name", ""), unit_scale_of(scene), meshes, instancers)


# ---------------------------------------------------------------- mesh arrays
def blender_corner_triangles(me) -> tuple[np.ndarray, np.ndarray]:
    """Blender's corner triangles of ``me`` read in bulk: (corners (M, 3) int32 corner
    indices, tri_face (M,) int32). ~0.12-0.4 s per million triangles: the one slow read.

    Replicating Blender's quad split in numpy (both of its rules, ties read item by item)
    was tried, and it matched this read exactly on random concave, warped and degenerate
    quads, but it took 2-3x longer than this read at 1M triangles; so only triangles-only
    meshes skip it (``mesh_triangles``)."""
    n_tri = len(me.loop_triangles)
    loops = np.empty(n_tri * 3, dtype=np.int32)
    me.loop_triangles.foreach_get("loops", loops)
    tri_face = np.empty(n_tri, dtype=np.int32)
    me.loop_triangle_polygons.foreach_get("value", tri_face)
    return loops.reshape(-1, 3), tri_face


def mesh_arrays(me) -> tuple[np.ndarray, np.ndarray]:
    """(positions (V * 3,) float32, corner vertices (C,) int32) of mesh ``me``: its
    ``position`` and ``.corner_vert`` attributes, one ``foreach_get`` each (none when empty:
    an empty mesh has no position attribute)."""
    pos = np.empty(len(me.vertices) * 3, dtype=np.float32)
    if pos.size:
        me.attributes["position"].data.foreach_get("vector", pos)
    corner_vert = np.empty(len(me.loops), dtype=np.int32)
    if corner_vert.size:
        me.attributes[".corner_vert"].data.foreach_get("value", corner_vert)
    return pos, corner_vert


def mesh_triangles(me) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Blender's own triangulation of mesh ``me`` through the attribute API.

    Returns positions (V, 3) float32 (object space, Blender units), triangles (M, 3) int32
    vertex indices and tri_face (M,) int32 polygon index of each triangle.
    """
    n_face = len(me.polygons)
    pos, corner_vert = mesh_arrays(me)
    pos = pos.reshape(-1, 3)
    n_corner = corner_vert.size
    if n_face == 0:
        return pos, np.empty((0, 3), np.int32), np.empty(0, np.int32)
    if n_corner == 3 * n_face:  # every face has >= 3 corners, so all are triangles
        return pos, corner_vert.reshape(-1, 3), np.arange(n_face, dtype=np.int32)
    corners, tri_face = blender_corner_triangles(me)
    return pos, corner_vert[corners], tri_face


def _face_sizes(me) -> np.ndarray:
    starts = np.empty(len(me.polygons), dtype=np.int32)
    me.polygons.foreach_get("loop_start", starts)
    return np.diff(np.append(starts, len(me.loops)))


def same_topology(original_mesh, evaluated_mesh) -> bool:
    """True when the evaluated mesh has exactly the original's faces (identity face map)."""
    if original_mesh == evaluated_mesh:
        return True
    if (len(original_mesh.polygons) != len(evaluated_mesh.polygons)
            or len(original_mesh.loops) != len(evaluated_mesh.loops)):
        return False
    return bool(np.array_equal(_face_sizes(original_mesh), _face_sizes(evaluated_mesh)))


@dataclass(frozen=True, eq=False)
class Part:
    """One collision object or instance as arrays (``read_part``).

    name : object name, or "<instancer>/<object>" for an instance
    vertices : (V, 3) float64 world metres; triangles : (M, 3) int32 local vertex indices,
    winding fixed (outward); tri_face, tri_orig_face : (M,) int32 (see ``LevelGeometry``);
    digest : sha1 of all of the above (``part_digest``): equal digests, equal part
    """

    name: str
    vertices: np.ndarray
    triangles: np.ndarray
    tri_face: np.ndarray
    tri_orig_face: np.ndarray
    digest: bytes
    from_edit_mode: bool = False  # read from the edit data of an object in Edit Mode


# Modifiers that only move vertices: the evaluated faces are the original faces. Used for
# objects in Edit Mode, whose original mesh is not current (the edit data is not flushed).
DEFORM_MODIFIERS = frozenset((
    "ARMATURE", "CAST", "CORRECTIVE_SMOOTH", "CURVE", "DISPLACE", "HOOK", "LAPLACIANDEFORM",
    "LAPLACIANSMOOTH", "LATTICE", "MESH_CACHE", "MESH_DEFORM", "MESH_SEQUENCE_CACHE",
    "NORMAL_EDIT", "SHRINKWRAP", "SIMPLE_DEFORM", "SMOOTH", "SURFACE_DEFORM", "UV_PROJECT",
    "UV_WARP", "VERTEX_WEIGHT_EDIT", "VERTEX_WEIGHT_MIX", "VERTEX_WEIGHT_PROXIMITY", "WARP",
    "WAVE", "WEIGHTED_NORMAL"))


def has_modifiers(obj) -> bool:
    """Whether any viewport modifier may change ``obj``'s evaluated mesh (original object)."""
    return any(m.show_viewport for m in obj.modifiers)


def in_edit_mode(eval_obj) -> bool:
    """Whether the evaluated object wraps an edit mesh (its object is in Edit Mode): its
    arrays are then not readable (``readable_mesh`` converts them)."""
    return bool(getattr(eval_obj.data, "is_editmode", False))


@contextmanager
def readable_mesh(eval_obj):
    """The evaluated mesh of ``eval_obj`` with readable arrays (a context manager).

    An object in Edit Mode evaluates to a wrapper around its edit data: Python sees no
    ``position`` attribute and no (or stale) counts. ``to_mesh()`` converts the edit data with
    the modifiers applied, as the viewport shows it; nothing is flushed to the original mesh
    and the designer stays in Edit Mode. Other objects yield their evaluated mesh as is."""
    if not in_edit_mode(eval_obj):
        yield eval_obj.data
        return
    try:
        yield eval_obj.to_mesh()
    finally:
        eval_obj.to_mesh_clear()


def faces_map_back(original_obj, evaluated_mesh, edit_mode=False) -> bool:
    """Whether evaluated face i of ``original_obj`` is its original face i (see module doc).

    In Edit Mode the original mesh is not current, so only deform modifiers keep the map."""
    if not has_modifiers(original_obj):
        return True
    if edit_mode:
        return all(m.type in DEFORM_MODIFIERS for m in original_obj.modifiers if m.show_viewport)
    return same_topology(original_obj.data, evaluated_mesh)


def part_digest(name, vertices, triangles, tri_orig_face) -> bytes:
    """sha1 of what a level is built from for one part: name, shapes, vertices, triangles,
    original faces."""
    h = hashlib.sha1(usedforsecurity=False)
    h.update(name.encode() + b"\0")
    h.update(np.array(vertices.shape + triangles.shape, np.int64).tobytes())
    h.update(vertices.tobytes())
    h.update(np.ascontiguousarray(triangles).tobytes())
    h.update(tri_orig_face.tobytes())
    return h.digest()


class PartSource(NamedTuple):
    """Where one part comes from (``part_sources``): its name, the EVALUATED object whose
    mesh is read, the ORIGINAL object its faces map back to (None: faces made by nodes), the
    world matrix, and whether its faces may map back at all. Valid only while the depsgraph
    iteration that yielded it runs (instance objects are temporary)."""

    name: str
    eval_obj: Any
    original: Any
    matrix: Any
    maps_back: bool


def read_part(source: PartSource, unit_scale: float) -> Part | None:
    """The arrays of one part (None when its mesh has no faces); an object in Edit Mode is
    read from its edit data (``readable_mesh``). ValueError naming the object and its first
    vertex that is not finite (NaN or infinite), never a nameless "vertices must be finite"."""
    edit = in_edit_mode(source.eval_obj)
    with readable_mesh(source.eval_obj) as me:
        pos, tris, tri_face = mesh_triangles(me)
        if tris.shape[0] == 0:
            return None
        mapped = (source.maps_back and source.original is not None
                  and faces_map_back(source.original, me, edit))
    bad = np.flatnonzero(~np.isfinite(pos).all(axis=1))
    if bad.size:  # before the world matrix: the designer's vertex index, as Edit Mode shows
        x, y, z = (float(c) for c in pos[bad[0]])
        raise ValueError(f"object {source.name!r}: vertex {int(bad[0])} is not finite "
                         f"({x:g}, {y:g}, {z:g})" + (f" and {bad.size - 1} more"
                                                      if bad.size > 1 else "")
                         + "; fix or delete it in Edit Mode")
    verts, flipped = world_points(pos, source.matrix, unit_scale)
    if flipped:
        tris = tris[:, [0, 2, 1]]
    if mapped:
        orig = tri_face  # no modifier (shape keys and edit mode keep faces) or same faces
    else:
        orig = np.full(tri_face.shape, NO_ORIGINAL_FACE, dtype=np.int32)
    return Part(source.name, verts, tris, tri_face, orig,
                part_digest(source.name, verts, tris, orig), edit)


def part_sources(depsgraph, scene):
    """Every collision object and instance of the scene's source, in level order (a
    generator of ``PartSource``; read each before asking for the next)."""
    accept = _member_filter(scene)
    source, _ = _source(scene)
    seen: set[str] = set()
    for inst in depsgraph.object_instances:
        ob = inst.object
        if ob.type != "MESH":
            continue
        if inst.is_instance:
            if not _is_instance_member(accept, inst):
                continue
            parent = inst.parent.original
            inner = inst.instance_object.original
            # geometry made by nodes: the instance's mesh is not the instanced object's mesh
            generated = inner == parent
            yield PartSource(f"{parent.name}/{inner.name}", ob, None if generated else inner,
                             inst.matrix_world.copy(), not generated)
        else:
            orig = ob.original
            if not accept(orig):
                continue
            seen.add(orig.name)
            yield PartSource(orig.name, ob, orig, inst.matrix_world.copy(), True)
    if source != "VISIBLE":  # hidden collision proxies still collide
        for orig in collision_objects(scene, depsgraph):
            if orig.name in seen:
                continue
            ev = orig.evaluated_get(depsgraph)
            yield PartSource(orig.name, ev, orig, ev.matrix_world.copy(), True)


def read_parts(depsgraph, scene) -> list[Part]:
    """Every collision object and instance as arrays (one entry per object or instance)."""
    unit = unit_scale_of(scene)
    parts = []
    for src in part_sources(depsgraph, scene):
        part = read_part(src, unit)
        if part is not None:
            parts.append(part)
    return parts


def parts_digest(parts) -> bytes:
    """A digest of everything a level is built from: the parts' digests in order (so a
    level patched part by part gets the digest a full read gives)."""
    h = hashlib.sha1(usedforsecurity=False)
    for p in parts:
        h.update(p.digest)
    return h.digest()


def level_from_parts(parts, unit_scale: float, digest: bytes | None = None) -> LevelGeometry:
    """Concatenate parts into one LevelGeometry (raises ValueError when there are none).

    ``digest`` is ``parts_digest(parts)`` when the caller already has it (the stamp).
    """
    if not parts:
        raise ValueError("no collision meshes: nothing in the collision source has faces "
                         "(check the Collision Source setting)")
    names: dict[str, int] = {}
    offsets = np.cumsum([0] + [p.vertices.shape[0] for p in parts])
    tri_obj = []
    for p in parts:
        k = names.setdefault(p.name, len(names))
        tri_obj.append(np.full(p.triangles.shape[0], k, dtype=np.int32))
    vertices = np.concatenate([p.vertices for p in parts])
    triangles = np.concatenate(
        [p.triangles.astype(np.int64) + off for p, off in zip(parts, offsets[:-1])]
    )
    tri_object = np.concatenate(tri_obj)
    tri_face = np.concatenate([p.tri_face for p in parts])
    tri_orig = np.concatenate([p.tri_orig_face for p in parts])
    objects = tuple(names)
    mesh = TriangleMesh(vertices, triangles)
    if digest is None:
        digest = parts_digest(parts)
    for a in (tri_object, tri_face, tri_orig):
        a.flags.writeable = False
    return LevelGeometry(
        mesh=mesh,
        objects=objects,
        tri_object=tri_object,
        tri_face=tri_face,
        tri_orig_face=tri_orig,
        unit_scale=unit_scale,
        stamp=digest.hex()[:16],
        edit_objects=tuple(p.name for p in parts if p.from_edit_mode),
    )


def read_level(depsgraph, scene) -> LevelGeometry:
    """The scene's collision level (see the module docstring). ValueError when it is empty."""
    return level_from_parts(read_parts(depsgraph, scene), unit_scale_of(scene))


__all__ = ["LevelGeometry", "read_level", "read_parts", "level_from_parts", "capsule_of",
           "path_points", "world_points", "membership", "collision_objects", "scene_checks",
           "spawn_objects", "spawn_feet"]


def scene_checks(scene, depsgraph, unit_scale: float) -> tuple[list, list]:
    """What the scene asks to check, by object name: (capsules, paths) as core CapsuleCheck
    (role CAPSULE, its expectation, the foot as placed, whether it is a spawn) and PathCheck
    (role PATH); the spawns are the capsules marked ``spawn`` (``spec.spawn_points``). One
    gathering for the panel's report and the pipeline CLI. ValueError for a bad capsule or
    path, naming it."""
    capsules, paths = [], []
    for ob in sorted(scene.objects, key=lambda o: o.name):
        role = role_of(ob)
        if role == "CAPSULE":
            foot = np.array(ob.matrix_world, dtype=np.float64)[:3, 3] * unit_scale
            capsules.append(CapsuleCheck(ob.name, capsule_of(ob, unit_scale),
                                         ob.capsule_collision.expect,
                                         foot=tuple(float(x) for x in foot), source="scene",
                                         spawn=bool(ob.capsule_collision.spawn)))
        elif role == "PATH":
            paths.append(PathCheck(ob.name, path_points(ob, depsgraph, unit_scale),
                                   ob.capsule_collision.expect_walk, source="scene"))
    return capsules, paths
