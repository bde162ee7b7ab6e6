"""Render the docs' viewport picture headless: the overlay over a solid view of the sample level.

    python tools/screenshot.py [--out docs/viewport.png] [--width 1280] [--height 640]
    python tools/screenshot.py --reachability [--out docs/reachability.png]

``--reachability``: the sample's "Spawn" capsule marked as a spawn and Reachability run
instead (reachable floor, islands, traps, cramped squares and the spawn's ring; the other
layers off).

Builds the sample level (``capsule_collision.levelcheck.sample_level``), runs the extension's
own operators on it
(``check_penetration`` on every capsule, ``walkthrough`` on every path), then draws, into one
``GPUOffScreen``, Blender's solid viewport (``draw_view3d``, as the 3D View shows it) seen from
a camera over the course, and on top of it the extension's overlay (``overlay.draw_scene``:
capsules, penetrated faces in red, walk traces, event markers) with the same camera matrices,
exactly as the POST_VIEW handler draws it in the viewport. The GPU is initialised by a tiny
Workbench render first (background mode has no other way, reference 3).
"""

from __future__ import annotations

import argparse
import importlib
import os
import pathlib
import sys

from bench_blender import load_extension
from capsule_collision.levelcheck import sample_level

TOOLS = pathlib.Path(__file__).resolve().parent

# Camera over the course: the sample's lanes run along +X side by side in Y (x -1..9,
# y -1..34); seen from the -X side, high up, the whole course fits a 2:1 picture.
CAMERA_LOCATION = (-9.0, 16.5, 12.0)
CAMERA_TARGET = (4.0, 16.5, 0.0)
CAMERA_LENS_MM = 17.0


def _op(bpy, name):
    with bpy.context.temp_override(selected_objects=[], active_object=None, object=None):
        return getattr(bpy.ops.capsule_collision, name)()


def _view3d(bpy):
    """A 3D View space and its WINDOW region from the startup screens (no window needed)."""
    for screen in bpy.data.screens:
        for area in screen.areas:
            if area.type == "VIEW_3D":
                region = next(r for r in area.regions if r.type == "WINDOW")
                return area.spaces.active, region
    raise RuntimeError("no 3D View in the startup screens")


def _checks(bpy, scene, reach: bool) -> None:
    """Run the picture's checks: penetration, walks and stairs; or Reachability alone."""
    if reach:
        bpy.data.objects["Spawn"].capsule_collision.spawn = True
        bpy.context.view_layer.update()
    names = ("reachability",) if reach else ("check_penetration", "walkthrough", "stair_audit")
    for name in names:
        try:
            _op(bpy, name)
        except RuntimeError as exc:  # an {'ERROR'} report: say it, draw what there is
            print(f"screenshot: {name}: {exc}".strip(), file=sys.stderr)
    s = scene.capsule_collision
    s.show_overlay = s.show_capsules = True
    s.show_penetration = s.show_traces = s.show_events = s.show_walkability = not reach
    s.show_reachability = reach


def render(sample_level, out: str, width: int, height: int, reach: bool = False) -> str:
    """Draw the picture of ``sample_level`` (the module) into ``out`` (``reach``: the
    Reachability picture); returns its path."""
    bpy, mod = load_extension()
    import gpu  # noqa: PLC0415  (after bpy)
    import numpy as np  # noqa: PLC0415
    from mathutils import Vector  # noqa: PLC0415

    overlay = importlib.import_module(mod.__name__ + ".addon.overlay")
    bpy.ops.wm.read_homefile(use_empty=True)
    scene = bpy.context.scene
    sample_level.build(scene)
    bpy.context.view_layer.update()
    _checks(bpy, scene, reach)

    cam_data = bpy.data.cameras.new("Screenshot")
    cam_data.lens = CAMERA_LENS_MM
    cam = bpy.data.objects.new("Screenshot", cam_data)
    cam.location = CAMERA_LOCATION
    direction = Vector(CAMERA_TARGET) - Vector(CAMERA_LOCATION)
    cam.rotation_euler = direction.to_track_quat("-Z", "Y").to_euler()
    scene.collection.objects.link(cam)
    scene.camera = cam
    r = scene.render
    r.engine = "BLENDER_WORKBENCH"
    r.resolution_x, r.resolution_y, r.resolution_percentage = 8, 8, 100
    bpy.ops.render.render(write_still=False)  # initialises the GPU (background mode)
    r.resolution_x, r.resolution_y = width, height
    bpy.context.view_layer.update()

    space, region = _view3d(bpy)
    space.shading.type = "SOLID"
    space.shading.light = "STUDIO"
    space.shading.color_type = "MATERIAL"
    space.overlay.show_overlays = True
    space.overlay.show_floor = True
    space.overlay.show_axis_x = space.overlay.show_axis_y = True
    space.overlay.show_extras = False  # no camera/empty glyphs: the extension draws capsules
    depsgraph = bpy.context.evaluated_depsgraph_get()
    view = cam.matrix_world.inverted()
    proj = cam.calc_matrix_camera(depsgraph, x=width, y=height)
    offscreen = gpu.types.GPUOffScreen(width, height)
    try:
        offscreen.draw_view3d(scene, bpy.context.view_layer, space, region, view, proj,
                              do_color_management=True)
        with offscreen.bind():
            fb = gpu.state.active_framebuffer_get()
            overlay.draw_offscreen(scene, depsgraph, view, proj, width, height)
            pixels = np.array(fb.read_color(0, 0, width, height, 4, 0, "FLOAT").to_list(),
                              dtype=np.float32)
    finally:
        offscreen.free()
    pixels = pixels.reshape(height, width, 4)
    pixels[..., 3] = 1.0
    image = bpy.data.images.new("viewport", width, height, alpha=False)
    image.pixels.foreach_set(np.clip(pixels, 0.0, 1.0).ravel())
    out = os.path.abspath(out)
    os.makedirs(os.path.dirname(out), exist_ok=True)
    image.filepath_raw = out
    image.file_format = "PNG"
    image.save()
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=None,
                    help="default: docs/viewport.png (docs/reachability.png with --reachability)")
    ap.add_argument("--reachability", action="store_true",
                    help="the sample's Spawn marked and Reachability drawn")
    ap.add_argument("--width", type=int, default=1280)
    ap.add_argument("--height", type=int, default=640)
    args = ap.parse_args(argv)
    if args.width < 16 or args.height < 16:
        print("screenshot: --width and --height must be at least 16 pixels", file=sys.stderr)
        return 2
    out = args.out or str(TOOLS.parent / "docs" / ("reachability.png" if args.reachability
                                                    else "viewport.png"))
    print(render(sample_level, out, args.width, args.height, args.reachability))
    return 0


if __name__ == "__main__":
    sys.exit(main())
