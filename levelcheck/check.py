"""One level in a Blender session: load it, read it through the extension, merge the spec,
run ``core``'s checks and build its report; annotate and picture it into a work folder.

Imported only after ``session.start()`` (the extension's modules import ``bpy``).
"""

from __future__ import annotations

import os
import time

from .. import core
from ..core.checks import report as core_report
from ..core.checks.spec import merge_checks, resolve_settings, spawn_points
from ..core.checks.targets import TargetCheck
from . import pictures, scene
from .axes import (
    DEFAULT_FORWARD,
    DEFAULT_UP,
    axis_vector,
    blender_axis,
    default_forward,
    file_axis,
)


def stem(level) -> str:
    base = "sample_level" if level.path is None else os.path.splitext(
        os.path.basename(level.path))[0]
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in base)


def _importer_axes(level):
    """(up, forward) the importer read the level with, or None when the file's own frame
    decided (.blend, glTF, an FBX without --up)."""
    suffix = os.path.splitext(level.path or "")[1].lower()
    if suffix not in (".obj", ".fbx") or (suffix == ".fbx" and not level.up):
        return None
    up = level.up or DEFAULT_UP
    return up, level.forward or (default_forward(up) if level.up else DEFAULT_FORWARD)


def _likely_up(level):
    """Where the importer put the file axis a rotated OBJ/FBX most likely had as up (the
    other of Y and Z), or None for formats with their own frame."""
    axes = _importer_axes(level)
    if axes is None:
        return None
    return blender_axis("Y" if axes[0].lstrip("-") == "Z" else "Z", *axes)


def _rotation_hint(level, warning) -> str:
    """What to do about a level whose floors face ``warning.axis`` (Blender's frame)."""
    suffix = os.path.splitext(level.path or "")[1].lower()
    facing = warning.axis
    axes = _importer_axes(level)
    if axes is not None:
        up, forward = axes
        fix = file_axis(axis_vector(facing.lstrip("+")), up, forward)
        read = f"read with up {up}, forward {forward}"
        return (f" The file's floors face its {fix} axis ({read}): pass --up {fix} "
                f"(or \"up\": \"{fix}\" in the level's sidecar).")
    if suffix == ".fbx":
        return (" The FBX's own axis settings put its floors on " + facing + ": pass --up "
                "with the file's up axis (or \"up\" in the sidecar).")
    if suffix in (".glb", ".gltf"):
        return " glTF is Y-up by definition: re-export it with its floors facing +Y."
    return f" Rotate the level in Blender so its floors face +Z (they face {facing})."


def _warnings(level, res):
    """The level's sanity warnings again with the likely mistake, and what to do for this
    file's format (the CLI knows the importer's axes; core does not)."""
    out = []
    for w in res.warnings:
        if w.code == "up_axis" and w.axis:
            w = w._replace(message=w.message + _rotation_hint(level, w))
        out.append(w)
    return out


def _checks(spec, settings, scene_caps, scene_paths, level):
    """(capsules, paths, targets, spawns): the scene's merged with the spec's (spawns: the
    feet of the capsules marked Spawn, then the spec's). LevelError naming the level."""
    try:
        capsules, paths = merge_checks(spec, scene_caps, scene_paths, settings)
        targets = [TargetCheck(t.name, t.point, t.expect) for t in spec.targets]
        spawns = spawn_points(spec, capsules)
        if targets and not len(spawns):
            raise ValueError("targets need spawns: mark a capsule of the level as a Spawn, or "
                             "give \"spawns\": [[x, y, z], ...] in its sidecar")
    except ValueError as exc:
        raise scene.LevelError(f"level {level.display}: {exc}") from None
    return capsules, paths, targets, spawns


def check_one(bpy, level, job, work_dir: str, say):
    """Load, read and check one level; annotate/picture it into ``work_dir``. Returns
    (level report dict, {output name: temp path})."""
    spec = level.spec
    say(f"level {level.display}: loading")
    t0 = time.perf_counter()
    render, render_from = None, None
    if level.render is not None and "collision_diff" in job.checks:
        say(f"level {level.display}: loading its render level {spec.render}")
        render, render_from = scene.read_render_file(bpy, level.render, level.up,
                                                     level.forward), spec.render
    blender_scene = scene.load(bpy, level.path, level.up, level.forward)
    t1 = time.perf_counter()
    scene.set_collision_source(bpy, blender_scene, job.collection or spec.collection,
                               job.naming or bool(spec.naming))
    scene.exclude(bpy, (*spec.exclude, *job.exclude))
    geometry, scene_settings, scene_caps, scene_paths = scene.read(bpy, blender_scene)
    if render is None and "collision_diff" in job.checks:
        render, render_from = scene.read_render(bpy, blender_scene)
    t2 = time.perf_counter()
    fields = resolve_settings(scene_settings, job.preset or spec.preset, spec.settings,
                              job.settings)
    settings = core.ControllerSettings(**fields)
    capsules, paths, targets, spawns = _checks(spec, settings, scene_caps, scene_paths, level)
    say(f"level {level.display}: {geometry.mesh.n_triangles} triangles, "
        f"{len(capsules)} capsules, {len(paths)} paths, {len(spawns)} spawns")
    res = core_report.run_checks(
        geometry.mesh, settings, capsules, paths, checks=job.checks, min_depth=job.min_depth,
        frame_rates=job.frame_rates, spawns=spawns, targets=targets,
        likely_up=_likely_up(level), render=None if render is None else render.mesh,
        workers=job.workers, progress=lambda m: say(f"level {level.display}: {m}"))
    res.render_geometry, res.render_source = render, render_from
    res.waivers = spec.waivers
    res.severity = {**spec.severity, **job.severity}  # the command line's win
    res.min_area = {**spec.min_area, **job.min_area}
    res.warnings = _warnings(level, res)
    name = spec.name or ("Sample level" if level.path is None else
                         os.path.basename(level.path))
    report = core_report.level_report(res, level=name, geometry=geometry, index=level.index,
                                      file=None if level.path is None else level.display,
                                      fail_on=job.fail_on)
    report["key"] = level.key
    report["shard"] = list(job.shard) if job.shard else None
    report["timings_s"] = {"load": round(t1 - t0, 4), "read_level": round(t2 - t1, 4),
                           **report["timings_s"]}
    outputs = {}
    if job.save_blend:  # before the picture's objects are added
        say(f"level {level.display}: annotating with the extension's operators")
        scene.annotate(bpy, blender_scene, settings, res.capsules, res.paths, say,
                       spec.spawns)
        tmp = os.path.join(work_dir, f"{level.index}.blend")
        scene.save_blend(bpy, tmp)
        outputs[f"{stem(level)}.levelcheck.blend"] = tmp
    report["pictures"] = {"overview": None, "insets": []}
    if job.png:
        say(f"level {level.display}: rendering")
        t3 = time.perf_counter()
        outputs.update(pictures.pictures(bpy, blender_scene, res, report, level, job, work_dir,
                                       stem(level)))
        report["timings_s"]["render"] = round(time.perf_counter() - t3, 4)
    return report, outputs
