"""Viewport overlay: two draw handlers drawing what the stored results say.

* POST_VIEW (``draw_scene``), in the scene, depth-tested where it sits on faces:
  face layers (walkability colours; reachable floor, islands and traps; the stand, stair,
  headroom and ledge audits; penetrated faces tinted light red), drawn from the level's parts
  (instances, array copies and mirrored objects included, on the visible side), each behind
  its scene toggle ``show_*``; reachability's cell squares (cramped floor, islands and traps
  a face does not show) over them; then, always on top: capsule outlines (red when
  penetrating) and spawn marks, per penetrating capsule its contact points, the push-out
  arrow and the capsule where it must go; walk traces.
* POST_PIXEL (``draw_pixels``, ``overlay_text``), in screen pixels: event markers in one
  colour per kind, labelled with ``core.event_label`` ("step 0.45 m"), fanned out and stacked
  where several share a spot; the push-out depth at the deepest contact; the legend in the
  bottom-left corner (``show_legend``).

Data first: ``overlay_layers.overlay_geometry(scene, depsgraph)`` returns every layer as
arrays (testable headless). Batches are built lazily inside the draw callbacks (nothing
touches ``gpu`` at import or register time) and kept: face layers per part and layer, keyed
by content, so an edit of one object rebuilds that object's batches only; the light layers
(capsules, push-outs, traces, events) are rebuilt after any depsgraph update; the cell
squares' batch is kept until their content key (``overlay_reach.cell_squares``) changes.
``draw_offscreen`` draws both passes into a bound ``GPUOffScreen`` (tests, tools/screenshot.py).
"""

from __future__ import annotations

from typing import Any

import bpy
import numpy as np

from . import level_parts, overlay_reach, overlay_text, scene_data
from .overlay_layers import (  # noqa: F401  (the overlay's data API, re-exported)
    FACE_LAYERS,
    PENETRATION_TINT,
    WALKABILITY_COLORS,
    OverlayGeometry,
    codes_of,
    face_layers,
    legend,
    overlay_geometry,
    shown_face_layers,
)
from .overlay_marks import (  # noqa: F401
    EVENT_COLORS,
    RED,
    TRACE_AIRBORNE,
    TRACE_GROUNDED,
    capsule_layer,
    event_marks,
    push_layer,
    push_marks,
    trace_layer,
)

LINE_WIDTH_PX = 2.5  # capsule outlines, traces: readable over a busy level
ARROW_WIDTH_PX = 4.0  # push-out arrows and contact crosses


class _Batches:
    """GPU batches: face layers per (part, layer) content key; the light layers."""

    def __init__(self):
        self.faces: dict[bytes, Any] = {}  # PartFaces.key -> batch (None: nothing)
        self.face_keys: dict[str, list] = {}  # layer name -> keys drawn now
        self.face_codes: dict[str, set] = {}  # layer name -> palette codes drawn now
        self.lines = None  # (outlines, spawn marks and traces, push-out) batches
        self.cells: tuple = (b"", None)  # (content key, batch) of the cell squares
        self.screen = ([], [], [])  # (events, pushes, legend) for the pixel pass
        self.dirty = True  # light layers: rebuilt on any update
        self.faces_dirty = True  # face layers: parts and values re-checked
        self.built = 0  # face batches built (tests and the benchmark count them)
        self.cells_built = 0  # cell-square batches built


_batches = _Batches()
_handles: list = []


def invalidate(depsgraph=None) -> None:
    """Mark the overlay for a rebuild at the next draw (cheap: called on every update).

    With ``depsgraph``, updates that only touch the extension's own objects (a capsule being
    dragged) leave the face layers alone: their parts are not even re-checked.
    """
    _batches.dirty = True
    if depsgraph is None:
        _batches.faces_dirty = True
        level_parts.mark_dirty()
        return
    for update in depsgraph.updates:
        idb = getattr(update.id, "original", update.id)
        if not isinstance(idb, bpy.types.Object) or scene_data.role_of(idb) == "NONE":
            _batches.faces_dirty = True
            level_parts.mark_dirty()
            return


def face_batches_built() -> int:
    """How many face-layer batches were built this session (one per changed part layer)."""
    return _batches.built


def cell_batches_built() -> int:
    """How many cell-square batches were built this session (one per change of the cells)."""
    return _batches.cells_built


def _face_batch(shader, part):
    from gpu_extras.batch import batch_for_shader  # noqa: PLC0415  (GPU only when drawing)

    corners, colors = part.build()
    _batches.built += 1
    if not corners.shape[0]:
        return None
    return batch_for_shader(shader, "TRIS", {"pos": corners, "color": colors})


def _line_batch(shader, pos, col):
    from gpu_extras.batch import batch_for_shader  # noqa: PLC0415

    if pos.shape[0] == 0:
        return None
    return batch_for_shader(shader, "LINES", {"pos": pos, "color": col})


def _refresh_faces(scene, depsgraph, flat) -> None:
    layers = face_layers(scene, depsgraph, shown_face_layers(scene.capsule_collision))
    keep: dict = {}
    _batches.face_keys = {}
    for name, parts in layers.items():
        keys = []
        for part in parts:
            if part.key not in keep:
                batch = _batches.faces.get(part.key)
                keep[part.key] = batch if part.key in _batches.faces else _face_batch(flat, part)
            keys.append(part.key)
        _batches.face_keys[name] = keys
    _batches.faces = keep
    _batches.face_codes = codes_of(layers)
    _batches.faces_dirty = False


def _refresh_cells(scene, flat, spawns: bool) -> list:
    """The cell squares' batch, rebuilt only when their content changed; the legend of the
    squares and spawn marks (``spawns``: some are drawn)."""
    from gpu_extras.batch import batch_for_shader  # noqa: PLC0415

    s = scene.capsule_collision
    if not s.show_reachability:
        _batches.cells = (b"", None)
        return []
    tris, cols, key = overlay_reach.cell_squares(scene, scene_data.unit_scale_of(scene))
    if key != _batches.cells[0]:
        batch = (batch_for_shader(flat, "TRIS", {"pos": tris, "color": cols})
                 if tris.shape[0] else None)
        _batches.cells = (key, batch)
        _batches.cells_built += 1
    classes = overlay_reach.classes_drawn(scene) if _batches.cells[1] is not None else set()
    return overlay_reach.legend_entries(classes, spawns)


def _refresh_light(scene, depsgraph, lines, flat) -> None:
    s = scene.capsule_collision
    none = (np.empty((0, 3)), np.empty((0, 4)))
    cap = capsule_layer(scene) if s.show_capsules else none
    spawn = overlay_reach.spawn_marks(scene) if s.show_reachability else none
    trace = trace_layer(scene) if s.show_traces else none
    pushes = push_marks(scene) if s.show_penetration else []
    push = push_layer(scene, pushes)
    events = event_marks(scene) if s.show_events else []
    both = (np.concatenate([cap[0], spawn[0], trace[0]]).astype(np.float32),
            np.concatenate([cap[1], spawn[1], trace[1]]).astype(np.float32))
    _batches.lines = (_line_batch(lines, *both), _line_batch(lines, *push))
    extra = _refresh_cells(scene, flat, bool(spawn[0].shape[0]))
    drawn = {name: keys for name, keys in _batches.face_keys.items()
             if any(_batches.faces.get(k) is not None for k in keys)}
    entries = (legend(drawn, pushes, events, extra, _batches.face_codes) if s.show_legend
               else [])
    _batches.screen = (events, pushes, entries)
    _batches.dirty = False


def draw_scene(scene, depsgraph) -> None:
    """The POST_VIEW pass with the current GPU matrices (the handler, or a test's
    ``GPUOffScreen`` with a camera's view and projection loaded)."""
    import gpu  # noqa: PLC0415  (never at import time)

    s = getattr(scene, "capsule_collision", None)
    if s is None or not s.show_overlay:
        return
    flat = gpu.shader.from_builtin("FLAT_COLOR")
    lines = gpu.shader.from_builtin("POLYLINE_FLAT_COLOR")  # wide lines (core profile)
    if _batches.faces_dirty:
        _refresh_faces(scene, depsgraph, flat)
        _batches.dirty = True
    if _batches.dirty or _batches.lines is None:
        _refresh_light(scene, depsgraph, lines, flat)
    gpu.state.blend_set("ALPHA")
    gpu.state.depth_test_set("LESS_EQUAL")
    gpu.state.depth_mask_set(False)
    try:
        flat.bind()
        for layer in FACE_LAYERS:  # walkability under the audits, penetration on top
            for key in _batches.face_keys.get(layer.name, ()):
                batch = _batches.faces.get(key)
                if batch is not None:
                    batch.draw(flat)
        if _batches.cells[1] is not None:
            _batches.cells[1].draw(flat)
        gpu.state.depth_test_set("NONE")  # outlines, arrows and traces stay visible
        lines.bind()
        viewport = gpu.state.viewport_get()  # type: ignore[func-returns-value]  # x, y, w, h
        lines.uniform_float("viewportSize", viewport[2:])  # type: ignore[index]
        for batch, width in zip(_batches.lines, (LINE_WIDTH_PX, ARROW_WIDTH_PX)):
            if batch is not None:
                lines.uniform_float("lineWidth", width)
                batch.draw(lines)
    finally:
        gpu.state.depth_test_set("NONE")
        gpu.state.depth_mask_set(True)
        gpu.state.blend_set("NONE")


def draw_pixels(scene, persp, width: int, height: int) -> None:
    """The POST_PIXEL pass (pixel-space matrices loaded): markers, labels, the legend.
    ``persp``: the 4x4 view-projection of the 3D view; ``width``/``height``: its pixels."""
    s = getattr(scene, "capsule_collision", None)
    if s is None or not s.show_overlay:
        return
    events, pushes, entries = _batches.screen
    system = getattr(bpy.context.preferences, "system", None)
    scale = float(getattr(system, "ui_scale", 1.0) or 1.0)
    overlay_text.draw(events, pushes, entries, persp, width, height, scale)


def draw_offscreen(scene, depsgraph, view, projection, width: int, height: int) -> None:
    """Both passes into the bound framebuffer of a ``GPUOffScreen`` of ``width`` x
    ``height`` pixels, seen through ``view`` and ``projection`` (4x4, e.g. a camera's)."""
    import gpu  # noqa: PLC0415
    from mathutils import Matrix  # noqa: PLC0415

    gpu.matrix.load_matrix(view)
    gpu.matrix.load_projection_matrix(projection)
    draw_scene(scene, depsgraph)
    persp = np.array(projection) @ np.array(view)
    ortho = Matrix(((2.0 / width, 0, 0, -1.0), (0, 2.0 / height, 0, -1.0), (0, 0, -1.0, 0),
                    (0, 0, 0, 1.0)))
    gpu.matrix.load_matrix(Matrix.Identity(4))
    gpu.matrix.load_projection_matrix(ortho)
    draw_pixels(scene, persp, width, height)


def _draw_view_callback():
    context = bpy.context
    if context.scene is None:
        return
    draw_scene(context.scene, context.view_layer.depsgraph)


def _draw_pixel_callback():
    context = bpy.context
    region, rv3d = context.region, context.region_data
    if context.scene is None or region is None or rv3d is None:
        return
    draw_pixels(context.scene, np.array(rv3d.perspective_matrix), region.width, region.height)


def register():
    space = bpy.types.SpaceView3D
    _handles.append(space.draw_handler_add(_draw_view_callback, (), "WINDOW", "POST_VIEW"))
    _handles.append(space.draw_handler_add(_draw_pixel_callback, (), "WINDOW", "POST_PIXEL"))


def unregister():
    while _handles:
        bpy.types.SpaceView3D.draw_handler_remove(_handles.pop(), "WINDOW")
    _batches.faces.clear()
    _batches.face_keys.clear()
    _batches.face_codes.clear()
    _batches.lines = None
    _batches.cells = (b"", None)
    _batches.screen = ([], [], [])
    _batches.dirty = _batches.faces_dirty = True
