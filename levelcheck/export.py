"""``levelcheck LEVEL ... --export-collision ENGINE --out DIR``: each level's collision (the
same objects its check reads: ``--collection``, ``--naming``, the sidecar's ``collection`` /
``naming``, else every visible mesh) written under the engine's naming with the render
meshes, by the add-on's own exporter (``addon/collision_export.py``): Unreal and Unity FBX,
Godot glTF (``--export-format`` picks FBX or glTF for Unity). One file per level,
``DIR/<level>_collision.fbx|.glb``; no check runs. Exit status 0, or 2 with one line.
"""

from __future__ import annotations

import os

from ..core.authoring.naming import EXPORT_FORMATS
from . import levels as levels_module
from .levels import UsageError
from .outputs import probe, remove_if_empty
from .run import Progress, blender_output

SUFFIX = {"FBX": ".fbx", "GLTF": ".glb"}


def export_format(engine: str, fmt: str | None) -> str:
    """The file format for ``engine`` (its first by default); UsageError when it has none
    such."""
    allowed = EXPORT_FORMATS[engine.upper()]
    chosen = (fmt or allowed[0]).upper()
    if chosen not in allowed:
        raise UsageError(f"--export-format: {engine} takes {' or '.join(allowed).lower()}, "
                         f"not {fmt}")
    return chosen


def _stem(level) -> str:
    base = "sample_level" if level.path is None else os.path.splitext(
        os.path.basename(level.path))[0]
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in base)


def export_levels(args) -> list[tuple[str, tuple]]:
    """Export every level of the command line; [(path written, Unreal-hulled names)]."""
    engine = args.export_collision.upper()
    fmt = export_format(engine, args.export_format)
    gathered = levels_module.gather(args)
    created = probe(args.out)
    from . import session  # noqa: PLC0415  (imports bpy)

    written = []
    try:
        with blender_output(args.quiet) as err:
            say = Progress(args.quiet, err)
            bpy = session.start()
            from ..addon import collision_export  # noqa: PLC0415  (after session.start)
            from . import scene  # noqa: PLC0415

            for level in gathered:
                say(f"exporting {level.display} for {engine.title()}")
                blender_scene = scene.load(bpy, level.path, level.up, level.forward)
                scene.set_collision_source(bpy, blender_scene,
                                           args.collection or level.spec.collection,
                                           args.naming or bool(level.spec.naming))
                path = os.path.join(os.path.abspath(args.out),
                                    f"{_stem(level)}_collision{SUFFIX[fmt]}")
                try:
                    out = collision_export.export_collision(bpy.context, engine, path, fmt)
                except ValueError as exc:
                    raise UsageError(f"level {level.display}: {exc}") from None
                written.append((out.path, out.hulled))
    except (UsageError, ValueError):
        if created:
            remove_if_empty(args.out)
        raise
    return written
