"""levelcheck's Blender side: load a level file with Blender's own importers and gather what to
check through the extension's scene reading (``addon/scene_data.py``; no second reader here).

Needs ``session.start()`` first. Blender's units and axes are whatever its importers make of
the file (glTF's Y-up and FBX's centimetres are converted on import; OBJ and FBX take the
``up`` / ``forward`` axes of ``--up`` / ``--forward`` or the sidecar), so a level gives the
same verdicts in every format.
"""

from __future__ import annotations

import os

from ..addon import properties, scene_data, scene_render
from ..core import Capsule, as_typed
from . import sample_level
from .axes import importer


class LevelError(ValueError):
    """A level that cannot be checked (unreadable, no collision meshes): exit status 2."""


def load(bpy, path: str | None, up: str | None = None, forward: str | None = None,
         sample_bugs: bool = True):
    """Replace the current file with the level at ``path`` (None: the bundled sample level,
    built in memory), read with the importer axes ``up``/``forward`` (OBJ, FBX). Returns the
    scene. LevelError when Blender cannot read it."""
    if path is None:
        bpy.ops.wm.read_homefile(use_empty=True)
        sample_level.build(bpy.context.scene, bugs=sample_bugs)
        return bpy.context.scene
    path = os.path.abspath(path)
    suffix = os.path.splitext(path)[1].lower()
    try:
        if suffix == ".blend":
            bpy.ops.wm.open_mainfile(filepath=path, load_ui=False)
        else:
            bpy.ops.wm.read_homefile(use_empty=True)
            op_path, kwargs = importer(suffix, up, forward)
            group, name = op_path.split(".")
            result = getattr(getattr(bpy.ops, group), name)(filepath=path, **kwargs)
            if "FINISHED" not in result:
                raise LevelError(f"{path}: Blender's importer could not read it ({result})")
    except RuntimeError as exc:  # Blender reports an ERROR as RuntimeError("Error: ...")
        message = " ".join(str(exc).replace("Error:", "").split())
        raise LevelError(f"{path}: cannot read this level: {message}") from exc
    return bpy.context.scene


def set_collision_source(bpy, scene, collection: str | None, naming: bool):
    """Point the scene's collision source at ``collection`` (by name) or the naming convention;
    unchanged (what the .blend says, else every visible mesh) when neither is given."""
    props = scene.capsule_collision
    if collection is not None:
        coll = bpy.data.collections.get(collection)
        if coll is None:
            names = ", ".join(sorted(c.name for c in bpy.data.collections)) or "none"
            raise LevelError(f"--collection: no collection named {collection!r} in this level "
                             f"(collections: {names})")
        props.collision_source = "COLLECTION"
        props.collision_collection = coll
    elif naming:
        props.collision_source = "NAMING"


def exclude(bpy, names):
    """Leave the objects and collections ``names`` out of the level (their objects are
    removed before it is read: their triangles are not part of it for any check).
    LevelError naming an unknown name and the level's objects and collections."""
    names = list(dict.fromkeys(names))
    missing = [n for n in names if n not in bpy.data.objects and n not in bpy.data.collections]
    if missing:
        known = sorted({*(o.name for o in bpy.data.objects if o.type == "MESH"),
                        *(c.name for c in bpy.data.collections)})
        raise LevelError(f"--exclude / \"exclude\": no object or collection named "
                         f"{missing[0]!r} in this level (known: {', '.join(known) or 'none'})")
    gone = {o.name: o for n in names for o in (
        [bpy.data.objects[n]] if n in bpy.data.objects else []) + (
        list(bpy.data.collections[n].all_objects) if n in bpy.data.collections else [])}
    for obj in gone.values():
        bpy.data.objects.remove(obj, do_unlink=True)


def read(bpy, scene):
    """(LevelGeometry, scene settings dict in metres, capsules, paths) of ``scene``: the
    capsules (CapsuleCheck) and paths (PathCheck) its objects carry, gathered by the
    extension (``scene_data.scene_checks``, as the panel's report does)."""
    depsgraph = bpy.context.evaluated_depsgraph_get()
    try:
        geometry = scene_data.read_level(depsgraph, scene)
    except ValueError as exc:
        raise LevelError(str(exc)) from exc
    try:
        settings = properties.controller_settings(scene).to_dict()
    except ValueError as exc:
        raise LevelError(f"the level's character settings: {exc}") from exc
    # Settings scaled by a scene unit scale are read as typed too (0.35 m stays 0.35), so
    # a .blend and the same level exported to glTF/OBJ/FBX walk identically.
    settings = {k: as_typed(v) for k, v in settings.items()}
    try:
        capsules, paths = scene_data.scene_checks(scene, depsgraph, geometry.unit_scale)
    except ValueError as exc:
        raise LevelError(str(exc)) from exc
    return geometry, settings, capsules, paths


def read_render_file(bpy, path: str, up: str | None, forward: str | None):
    """The render level in its own file (a sidecar's ``"render"``): loaded with the level's
    importer axes into a fresh file and read whole (every visible mesh) as a LevelGeometry.
    Load the level itself afterwards (this replaces the current file). LevelError when
    Blender cannot read it or it has no faces."""
    render_scene = load(bpy, path, up, forward)
    depsgraph = bpy.context.evaluated_depsgraph_get()
    try:
        return scene_data.read_level(depsgraph, render_scene)
    except ValueError as exc:
        raise LevelError(f"render {path}: {exc}") from exc


def read_render(bpy, scene):
    """(LevelGeometry or None, "naming" / "collection" or None): the meshes of ``scene`` its
    collision source leaves out, the level as drawn (``addon/scene_render.py``)."""
    depsgraph = bpy.context.evaluated_depsgraph_get()
    return scene_render.read_render(depsgraph, scene), scene_render.render_source(scene)


ANNOTATING_OPERATORS = ("check_penetration", "classify_walkability", "walkthrough",
                        "stand_test", "stair_audit", "headroom_audit", "ledge_audit",
                        "reachability")


def _capsule_empty(bpy, scene, name, foot, capsule, expect, spawn):
    empty = bpy.data.objects.new(name, None)
    empty.location = foot
    scene.collection.objects.link(empty)
    props = empty.capsule_collision
    props.role = "CAPSULE"
    props.radius = capsule.radius
    props.height = float(((capsule.b - capsule.a) ** 2).sum() ** 0.5) + 2.0 * capsule.radius
    props.expect = expect.upper()
    props.spawn = spawn


def annotate(bpy, scene, settings, capsules, paths, warn, spawns=()):
    """Annotate the level the way the panel does, with the extension's own operators: face
    attributes (capsule_penetration, walkability, audits, cc_reachability), result rows, walk
    traces and event markers. ``settings`` (core ControllerSettings) are written to the scene
    first; capsules and paths that came from a sidecar (``source == "spec"``) are added as
    capsule Empties and path curves so the operators see them, and each of the sidecar's
    ``spawns`` (foot points) as a capsule marked Spawn ("Spawn 1", ...) of the character's
    size. ``warn(message)`` is told about any operator that refuses (the annotation is best
    effort; report.json is the verdict)."""
    properties.write_controller_settings(scene, settings)
    for check in capsules:
        if check.source == "spec":
            _capsule_empty(bpy, scene, check.name, check.foot, check.capsule, check.expect,
                           check.spawn)
    for k, foot in enumerate(spawns, start=1):
        _capsule_empty(bpy, scene, f"Spawn {k}", foot,
                       Capsule.upright(foot, settings.height, settings.radius, up=settings.up),
                       "any", True)
    for check in paths:
        if check.source != "spec":
            continue
        curve = bpy.data.curves.new(check.name, "CURVE")
        curve.dimensions = "3D"
        spline = curve.splines.new("POLY")
        spline.points.add(len(check.points) - 1)
        for point, (x, y, z) in zip(spline.points, check.points):
            point.co = (x, y, z, 1.0)
        ob = bpy.data.objects.new(check.name, curve)
        scene.collection.objects.link(ob)
        ob.capsule_collision.role = "PATH"
        ob.capsule_collision.expect_walk = (check.expect if check.expect != "any" else "ANY")
    for ob in scene.objects:
        ob.select_set(False)
    for name in ANNOTATING_OPERATORS:
        op = getattr(bpy.ops.capsule_collision, name)
        try:
            if op.poll():
                op()
        except RuntimeError as exc:
            warn(f"--save-blend: {name} did not annotate the level: "
                 + " ".join(str(exc).replace("Error:", "").split()))


def save_blend(bpy, path: str):
    """Save the (annotated) level as ``path`` (the caller renames it into place)."""
    bpy.ops.wm.save_as_mainfile(filepath=os.path.abspath(path), copy=True)
