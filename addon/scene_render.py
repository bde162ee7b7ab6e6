"""The level as drawn, beside the level as collided: the render meshes that render against
collision (``core.collision_diff``) judges the collision against.

When the collision source picks some meshes (engine naming: ``UCX_``, ``-col``, ``_col``...;
or a collection), the render level is every other visible mesh: the same reading as the
collision (``scene_data.read_part``: evaluated, world space, metres, Blender's triangulation,
instances, triangle -> (object, face)), never an extension object (capsules, paths, traces,
cells) nor anything in the results collection. When every visible mesh collides, render and
collision are the same meshes and there is no render level of its own (None).
"""

from __future__ import annotations

import bpy

from .scene_data import (
    RESULTS_COLLECTION,
    LevelGeometry,
    PartSource,
    collision_objects,
    level_from_parts,
    read_part,
    role_of,
    unit_scale_of,
)


def render_source(scene) -> str | None:
    """"naming" or "collection" when the collision source leaves meshes to draw, else None."""
    pg = getattr(scene, "capsule_collision", None)
    source = getattr(pg, "collision_source", "VISIBLE") if pg is not None else "VISIBLE"
    return {"NAMING": "naming", "COLLECTION": "collection"}.get(source)


def _drawn(ob, collision, excluded) -> bool:
    """An ORIGINAL object is drawn level: a visible plain mesh, not collision, not ours."""
    return (ob is not None and ob.type == "MESH" and ob.name not in collision
            and ob.name not in excluded and role_of(ob) == "NONE" and ob.visible_get())


def render_parts(depsgraph, scene) -> list:
    """The parts (``scene_data.Part``) of the render level: every visible mesh and instance
    the collision source leaves out (module docstring); [] when it leaves none."""
    if render_source(scene) is None:
        return []
    collision = {o.name for o in collision_objects(scene, depsgraph)}
    results = bpy.data.collections.get(RESULTS_COLLECTION)
    excluded: set = {o.name for o in results.all_objects} if results is not None else set()
    unit = unit_scale_of(scene)
    parts = []
    for inst in depsgraph.object_instances:
        ob = inst.object
        if ob.type != "MESH":
            continue
        if inst.is_instance:
            parent = inst.parent.original if inst.parent is not None else None
            inner = inst.instance_object.original if inst.instance_object is not None else None
            if parent is None or inner is None or not (
                    _drawn(parent, collision, excluded) or _drawn(inner, collision, excluded)):
                continue
            generated = inner == parent
            src = PartSource(f"{parent.name}/{inner.name}", ob, None if generated else inner,
                             inst.matrix_world.copy(), not generated)
        else:
            if not _drawn(ob.original, collision, excluded):
                continue
            src = PartSource(ob.original.name, ob, ob.original, inst.matrix_world.copy(), True)
        part = read_part(src, unit)
        if part is not None:
            parts.append(part)
    return parts


def read_render(depsgraph, scene) -> LevelGeometry | None:
    """The render level of ``scene`` as a LevelGeometry, or None when the collision source
    leaves no drawn mesh (every visible mesh collides, or only collision meshes exist)."""
    parts = render_parts(depsgraph, scene)
    return level_from_parts(parts, unit_scale_of(scene)) if parts else None
