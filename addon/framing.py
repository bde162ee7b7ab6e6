"""Looking at a result: frame a box in the 3D View, jump the timeline to a walk's moment.

``frame_box(context, lo, hi)`` is View Selected for a box in Blender units: it sets the view
centre and distance of the 3D View the operator runs in (or of every 3D View of the window
when it runs from elsewhere, e.g. a script), at once rather than with smooth-view animation,
so the result is there when the operator returns and a headless test can read it. A view
through a camera leaves the camera view (as View Selected does) unless Lock Camera to View
is on.

``walk_frame(scene, time)`` is the scene frame at ``time`` seconds into a walk baked with
``operators_walk.bake_walk`` (``frame_start + time x fps``), and ``baked_on(path_name)`` the
capsule carrying that walk's bake, if any.
"""

from __future__ import annotations

import math

import numpy as np

from . import results

SENSOR_MM = 36.0  # Blender's default sensor width: the viewport's field of view from its lens
FRAME_MARGIN = 1.25  # the framed box's sphere fills 80 % of the view


def view_spaces(context) -> list:
    """The 3D View spaces to frame: the context's, else every 3D View of the window."""
    area = getattr(context, "area", None)
    if area is not None and area.type == "VIEW_3D":
        return [area.spaces.active]
    window = getattr(context, "window", None)
    screen = getattr(context, "screen", None) or (window.screen if window else None)
    if screen is None:
        return []
    return [a.spaces.active for a in screen.areas if a.type == "VIEW_3D"]


def frame_box(context, lo, hi, min_radius: float) -> int:
    """Centre the 3D View(s) on the box ``lo``-``hi`` (world, Blender units) at a distance
    that shows all of it (its bounding sphere, at least ``min_radius``). Returns how many
    views were framed."""
    lo, hi = np.asarray(lo, float), np.asarray(hi, float)
    centre = (lo + hi) / 2.0
    radius = max(float(np.linalg.norm(hi - lo)) / 2.0, float(min_radius))
    framed = 0
    for space in view_spaces(context):
        r3d = space.region_3d
        if r3d is None:
            continue
        if r3d.view_perspective == "CAMERA":
            if space.lock_camera:
                continue
            r3d.view_perspective = "PERSP"
        half_fov = math.atan(SENSOR_MM / (2.0 * max(space.lens, 1.0)))
        r3d.view_location = tuple(centre)
        r3d.view_distance = FRAME_MARGIN * radius / math.sin(half_fov)
        framed += 1
    for area in getattr(getattr(context, "screen", None), "areas", ()):
        if area.type == "VIEW_3D":
            area.tag_redraw()
    return framed


def walk_frame(scene, time: float) -> float:
    """The scene frame (fractional) at ``time`` seconds into a baked walk."""
    fps = scene.render.fps / scene.render.fps_base
    return scene.frame_start + float(time) * fps


def baked_on(scene, path_name: str):
    """The scene object whose action is the bake of the walk along ``path_name``, or None."""
    for ob in scene.objects:
        ad = ob.animation_data
        action = ad.action if ad is not None else None
        if action is not None and action.get(results.BAKE_TAG) == path_name:
            return ob
    return None


def jump_to(scene, path_name: str, time: float):
    """Move the timeline to ``time`` seconds into the baked walk along ``path_name`` (the
    baked capsule then stands where the walk was). Returns the frame, or None when that walk
    is not baked (the timeline stays)."""
    if baked_on(scene, path_name) is None:
        return None
    frame = walk_frame(scene, time)
    whole = math.floor(frame)
    scene.frame_set(int(whole), subframe=frame - whole)
    return frame


def marker_of(path_name: str, time: float):
    """The event marker the walk along ``path_name`` made for its event at ``time`` s."""
    for ob in results.result_objects():
        if (ob.capsule_collision.role == "MARKER" and ob.get("path") == path_name
                and abs(float(ob.get("time", -1.0)) - time) < 1e-4):
            return ob
    return None


def view_location(context):
    """The first framed view's centre (tests and the operator's message), or None."""
    for space in view_spaces(context):
        if space.region_3d is not None:
            return tuple(space.region_3d.view_location)
    return None

