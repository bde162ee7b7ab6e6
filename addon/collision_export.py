"""Export a scene's collision under an engine's naming: Unreal (FBX), Godot (glTF), Unity
(FBX or glTF). One function for the panel's operator and the CLI (``levelcheck
--export-collision``).

The collision objects are the ones the checks read (``scene_data.collision_objects``: the
scene's collision source). Each takes its engine name for the export only, and gets it back
after: a proxy made by the extension by its kind, render mesh and number
(``proxies.rename_for``); any other object keeps a name that already follows a convention
(``UCX_``, ``-colonly``, ``_col``, ...), else it is named as convex or mesh
(``core.authoring.is_convex``) after itself. With ``include_render`` the visible render
meshes go into the same file (Unreal pairs ``UCX_Wall_01`` with ``Wall`` only in one FBX).
Objects are exported with their modifiers applied, in Blender's own exporters' frames (FBX:
-Z forward, Y up; glTF: Y up), which their importers (and the engines) undo.
"""

from __future__ import annotations

import os
from typing import NamedTuple

import bpy

from ..core.authoring import as_engine, collision_name, concave_for, is_convex
from ..core.authoring.naming import EXPORT_FORMATS
from . import proxies, scene_data

FORMAT_SUFFIX = {"FBX": ".fbx", "GLTF": ".glb"}


class Exported(NamedTuple):
    """path : the file written; names : the collision objects' names in it; render : how many
    render meshes went with them; hulled : names Unreal will hull (concave under UCX_)."""

    path: str
    names: tuple
    render: int
    hulled: tuple


def default_format(engine) -> str:
    return EXPORT_FORMATS[as_engine(engine)][0]


def _export_name(engine, ob, depsgraph, unit) -> tuple[str, str]:
    """(name under ``engine``, kind) of collision object ``ob``."""
    if proxies.PROXY_OF in ob:
        return proxies.rename_for(engine, ob), str(ob[proxies.PROXY_KIND])
    if scene_data.matches_naming_convention(ob.name):
        return ob.name, "convex"
    v, t = proxies.world_arrays(ob, depsgraph, unit)
    kind = "convex" if is_convex(v, t) else "mesh"
    return collision_name(engine, kind, ob.name, 1), kind


def _write(fmt, path):
    if fmt == "FBX":
        bpy.ops.export_scene.fbx(filepath=path, use_selection=True, object_types={"MESH"},
                                 use_mesh_modifiers=True, mesh_smooth_type="FACE",
                                 add_leaf_bones=False, bake_anim=False)
    else:
        bpy.ops.export_scene.gltf(filepath=path, use_selection=True, export_format="GLB",
                                  export_apply=True, export_animations=False)


def export_collision(context, engine, path, fmt=None, include_render=True) -> Exported:
    """Write the scene's collision for ``engine`` to ``path`` (module docstring). ValueError
    for an unknown engine or format, no collision object, or a folder that does not exist."""
    eng = as_engine(engine)
    fmt = (fmt or default_format(eng)).upper()
    if fmt not in EXPORT_FORMATS[eng]:
        raise ValueError(f"format must be one of {', '.join(EXPORT_FORMATS[eng])} for "
                         f"{eng.title()}, got {fmt!r}")
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise ValueError(f"path: the folder {folder} does not exist")
    scene = context.scene
    depsgraph = context.evaluated_depsgraph_get()
    collision = scene_data.collision_objects(scene, depsgraph)
    if not collision:
        raise ValueError("no collision objects to export (make some with Make Collision, or "
                         "set the collision source)")
    unit = scene_data.unit_scale_of(scene)
    named = [(ob, *_export_name(eng, ob, depsgraph, unit)) for ob in collision]
    taken = {ob.name for ob in collision}
    render = [o for o in scene.objects if include_render and o.type == "MESH"
              and o.name not in taken and o.visible_get() and scene_data.role_of(o) == "NONE"
              and proxies.PROXY_OF not in o]
    return _export_renamed(context, named, render, fmt, os.path.abspath(path), eng)


def _export_renamed(context, named, render, fmt, path, eng) -> Exported:
    """Rename, select, export, then restore names, selection and visibility."""
    view_layer = context.view_layer
    before = {o.name: o.select_get() for o in view_layer.objects}
    active = view_layer.objects.active
    original = [(ob, ob.name, ob.hide_get(), ob.hide_viewport) for ob, _n, _k in named]
    try:
        for ob in view_layer.objects:
            ob.select_set(False)
        for ob, name, _kind in named:
            ob.name = name
            ob.hide_viewport = False
            ob.hide_set(False)
            ob.select_set(True)
        for ob in render:
            ob.select_set(True)
        names = tuple(ob.name for ob, _n, _k in named)
        _write(fmt, path)
    finally:
        for ob, name, hidden, hide_viewport in original:
            ob.name = name
            ob.hide_set(hidden)
            ob.hide_viewport = hide_viewport
        for ob in view_layer.objects:
            ob.select_set(before.get(ob.name, False))
        view_layer.objects.active = active
    hulled = tuple(n for (ob, n, kind) in named if concave_for(eng, kind))
    return Exported(path, names, len(render), hulled)
