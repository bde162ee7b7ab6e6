"""Viewport overlay: one POST_VIEW draw handler drawing what the stored results say.

Layers (each behind a scene toggle ``show_*``, all behind ``show_overlay``):

* capsules: wire outline, red when ``penetrating_count > 0``, green when clear, grey unchecked;
* penetration: faces flagged in the ``capsule_penetration`` face attribute of the collision
  meshes, plus the live check's penetrated triangles that map to no original face (array or
  mirror copies, geometry-nodes instances), which no attribute can hold;
* walkability: faces coloured by the ``walkability`` INT8 face attribute (core codes);
* traces: walk trace meshes (role TRACE) as lines, green where ``grounded``, orange airborne;
* events: event markers (role MARKER) as crosses coloured by their ``kind``.

Data first: ``overlay_geometry(scene, depsgraph)`` gathers every layer as numpy arrays (world
space, Blender units; testable headless without a GPU). The draw handler turns them into GPU
batches once and keeps them until a depsgraph update may have changed them (``invalidate``,
called by the live handler); heavy layers (penetration, walkability) are rebuilt only when
their meshes' content keys change, so dragging a capsule redraws only the capsule layer.
Nothing touches ``gpu`` at import or register time.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field

import bpy
import numpy as np

from . import cache, gizmos, live_state, scene_data
from .results import PENETRATION_ATTRIBUTE  # the one name; written only by penetration.py

WALKABILITY_ATTRIBUTE = "walkability"

RED = (1.0, 0.05, 0.05, 0.85)
CAPSULE_CLEAR = (0.2, 0.9, 0.4, 1.0)
CAPSULE_UNCHECKED = (0.7, 0.7, 0.7, 1.0)
# core walkability codes WALKABLE, STEEP, WALL, CEILING
WALKABILITY_COLORS = np.array([
    (0.15, 0.75, 0.25, 0.35),
    (0.95, 0.65, 0.1, 0.35),
    (0.25, 0.35, 0.9, 0.25),
    (0.7, 0.2, 0.8, 0.35),
], dtype=np.float32)
TRACE_GROUNDED = (0.1, 0.9, 0.3, 1.0)
TRACE_AIRBORNE = (1.0, 0.55, 0.0, 1.0)
EVENT_COLORS = {
    "reached_goal": (0.1, 0.9, 0.3, 1.0),
    "blocked": (1.0, 0.1, 0.1, 1.0),
    "step_too_high": (1.0, 0.35, 0.1, 1.0),
    "slope_too_steep": (1.0, 0.65, 0.1, 1.0),
    "ceiling_too_low": (0.8, 0.2, 0.9, 1.0),
}
EVENT_DEFAULT = (1.0, 0.9, 0.1, 1.0)
MARKER_SIZE = 0.15  # Blender units: half-length of an event cross's arms
# Penetrated/walkability faces are drawn this far (Blender units) in front of their surface,
# so the depth test keeps them visible over the mesh without z-fighting at 1-100 m views.
SURFACE_LIFT = 0.002
LINE_WIDTH_PX = 2.5  # capsule outlines, traces and markers: readable over a busy level


@dataclass
class OverlayGeometry:
    """Every layer as arrays: positions (N, 3) float32 world Blender units, colours (N, 4)."""

    capsule_lines: np.ndarray = field(default_factory=lambda: np.empty((0, 3), np.float32))
    capsule_colors: np.ndarray = field(default_factory=lambda: np.empty((0, 4), np.float32))
    penetration_tris: np.ndarray = field(default_factory=lambda: np.empty((0, 3), np.float32))
    walk_tris: np.ndarray = field(default_factory=lambda: np.empty((0, 3), np.float32))
    walk_colors: np.ndarray = field(default_factory=lambda: np.empty((0, 4), np.float32))
    trace_lines: np.ndarray = field(default_factory=lambda: np.empty((0, 3), np.float32))
    trace_colors: np.ndarray = field(default_factory=lambda: np.empty((0, 4), np.float32))
    event_lines: np.ndarray = field(default_factory=lambda: np.empty((0, 3), np.float32))
    event_colors: np.ndarray = field(default_factory=lambda: np.empty((0, 4), np.float32))


def _transform(points, matrix) -> np.ndarray:
    m = np.array(matrix, dtype=np.float64)
    return (np.asarray(points, np.float64) @ m[:3, :3].T + m[:3, 3]).astype(np.float32)


def capsule_layer(scene):
    """(lines (N, 3), colours (N, 4)) of every capsule's outline in world space."""
    pts, cols = [], []
    for ob in scene.objects:
        if scene_data.role_of(ob) != "CAPSULE" or not ob.visible_get():
            continue
        radius, height = gizmos.capsule_size(ob)
        try:
            local = gizmos.capsule_wire_vertices(radius, height)
        except ValueError:
            continue
        n = ob.capsule_collision.penetrating_count
        color = RED if n > 0 else CAPSULE_CLEAR if n == 0 else CAPSULE_UNCHECKED
        pts.append(_transform(local, ob.matrix_world.normalized()))
        cols.append(np.tile(np.array(color, np.float32), (local.shape[0], 1)))
    if not pts:
        return np.empty((0, 3), np.float32), np.empty((0, 4), np.float32)
    return np.concatenate(pts), np.concatenate(cols)


def _face_attribute(me, name, dtype):
    attr = me.attributes.get(name)
    if attr is None or attr.domain != "FACE":
        return None
    out = np.empty(len(me.polygons), dtype=dtype)
    attr.data.foreach_get("value", out)
    return out


def _lifted_triangles(pos, tris, matrix) -> np.ndarray:
    """(K*3, 3) float32 world corners of triangles ``tris``, lifted along their normals."""
    corners = _transform(pos[tris.ravel()], matrix).reshape(-1, 3, 3).astype(np.float64)
    n = np.cross(corners[:, 1] - corners[:, 0], corners[:, 2] - corners[:, 0])
    length = np.linalg.norm(n, axis=1, keepdims=True)
    n = np.divide(n, length, out=np.zeros_like(n), where=length > 0)
    corners += SURFACE_LIFT * n[:, None, :]
    return corners.reshape(-1, 3).astype(np.float32)


def _attribute_meshes(scene, depsgraph, attribute):
    """(object, evaluated object, face values) for visible meshes carrying ``attribute``."""
    for ob in scene.objects:
        if ob.type != "MESH" or scene_data.role_of(ob) != "NONE" or not ob.visible_get():
            continue
        if ob.data.attributes.get(attribute) is None:
            continue
        yield ob, ob.evaluated_get(depsgraph)


def _mesh_key(ob, ev, attribute) -> bytes:
    h = hashlib.sha1(cache.fingerprint(ev)[1], usedforsecurity=False)
    h.update(np.array(ev.matrix_world, dtype=np.float64).tobytes())
    attr = ob.data.attributes.get(attribute)
    if attr is not None and attr.domain == "FACE":
        vals = np.empty(len(ob.data.polygons), dtype=np.int8 if attr.data_type == "INT8" else bool)
        attr.data.foreach_get("value", vals)
        h.update(vals.tobytes())
    h.update(ob.name.encode())
    return h.digest()


def layer_key(scene, depsgraph, attribute) -> bytes:
    """A digest of everything a face-attribute layer draws (positions, matrices, values)."""
    h = hashlib.sha1(usedforsecurity=False)
    for ob, ev in _attribute_meshes(scene, depsgraph, attribute):
        h.update(_mesh_key(ob, ev, attribute))
    return h.digest()


def penetration_layer(scene, depsgraph) -> np.ndarray:
    """(K*3, 3) float32 world corners of the penetrated triangles (attribute + live unmapped)."""
    out = []
    for ob, ev in _attribute_meshes(scene, depsgraph, PENETRATION_ATTRIBUTE):
        flags = _face_attribute(ob.data, PENETRATION_ATTRIBUTE, bool)
        if flags is None or not flags.any():
            continue
        me = ev.data
        if not scene_data.faces_map_back(ob, me):
            continue  # the attribute's faces are the original's; not drawable on this result
        pos, tris, tri_face = scene_data.mesh_triangles(me)
        sel = flags[tri_face]
        if sel.any():
            out.append(_lifted_triangles(pos, tris[sel], ev.matrix_world))
    unmapped = live_unmapped_triangles(scene)
    if unmapped.size:
        out.append(unmapped)
    return np.concatenate(out) if out else np.empty((0, 3), np.float32)


def live_unmapped_triangles(scene) -> np.ndarray:
    """Corners (Blender units) of live-check hits with no original face (-1)."""
    level = cache.peek(scene)
    tris = live_state.live_triangles(scene)
    if level is None or not tris.size:
        return np.empty((0, 3), np.float32)
    tris = tris[level.tri_orig_face[tris] < 0]
    if not tris.size:
        return np.empty((0, 3), np.float32)
    corners = level.mesh.vertices[level.mesh.triangles[tris]] / level.unit_scale
    n = level.mesh.normals[tris]
    corners = corners + SURFACE_LIFT * n[:, None, :]
    return corners.reshape(-1, 3).astype(np.float32)


def walkability_layer(scene, depsgraph):
    """(corners (K*3, 3), colours (K*3, 4)) of faces carrying a ``walkability`` code."""
    pts, cols = [], []
    for ob, ev in _attribute_meshes(scene, depsgraph, WALKABILITY_ATTRIBUTE):
        codes = _face_attribute(ob.data, WALKABILITY_ATTRIBUTE, np.int8)
        me = ev.data
        if codes is None or not scene_data.faces_map_back(ob, me):
            continue
        pos, tris, tri_face = scene_data.mesh_triangles(me)
        c = codes[tri_face]
        ok = (c >= 0) & (c < len(WALKABILITY_COLORS))
        pts.append(_lifted_triangles(pos, tris[ok], ev.matrix_world))
        cols.append(np.repeat(WALKABILITY_COLORS[c[ok]], 3, axis=0))
    if not pts:
        return np.empty((0, 3), np.float32), np.empty((0, 4), np.float32)
    return np.concatenate(pts), np.concatenate(cols)


def trace_layer(scene, depsgraph):
    """(lines (N, 3), colours (N, 4)) of every walk trace's edges, coloured by ``grounded``."""
    pts, cols = [], []
    for ob in scene.objects:
        if ob.type != "MESH" or scene_data.role_of(ob) != "TRACE" or not ob.visible_get():
            continue
        me = ob.data
        n = len(me.vertices)
        if n < 2:
            continue
        pos = np.empty(n * 3, np.float32)
        me.attributes["position"].data.foreach_get("vector", pos)
        edges = np.empty(len(me.edges) * 2, np.int32)
        if len(me.edges):
            me.edges.foreach_get("vertices", edges)
        else:
            edges = np.repeat(np.arange(n, dtype=np.int32), 2)[1:-1]
        grounded = np.ones(n, bool)
        attr = me.attributes.get("grounded")
        if attr is not None and attr.domain == "POINT":
            attr.data.foreach_get("value", grounded)
        world = _transform(pos.reshape(-1, 3), ob.matrix_world)
        pts.append(world[edges])
        both = grounded[edges.reshape(-1, 2)].all(axis=1)
        c = np.where(both[:, None], TRACE_GROUNDED, TRACE_AIRBORNE).astype(np.float32)
        cols.append(np.repeat(c, 2, axis=0))
    if not pts:
        return np.empty((0, 3), np.float32), np.empty((0, 4), np.float32)
    return np.concatenate(pts), np.concatenate(cols)


def event_layer(scene):
    """(lines (N, 3), colours (N, 4)): a 3-axis cross per event marker, coloured by kind."""
    arms = np.array([(-1, 0, 0), (1, 0, 0), (0, -1, 0), (0, 1, 0), (0, 0, -1), (0, 0, 1)],
                    dtype=np.float32) * MARKER_SIZE
    pts, cols = [], []
    for ob in scene.objects:
        if scene_data.role_of(ob) != "MARKER" or not ob.visible_get():
            continue
        loc = np.array(ob.matrix_world.translation, np.float32)
        pts.append(arms + loc)
        color = EVENT_COLORS.get(str(ob.get("kind", "")), EVENT_DEFAULT)
        cols.append(np.tile(np.array(color, np.float32), (6, 1)))
    if not pts:
        return np.empty((0, 3), np.float32), np.empty((0, 4), np.float32)
    return np.concatenate(pts), np.concatenate(cols)


def overlay_geometry(scene, depsgraph) -> OverlayGeometry:
    """Every enabled layer of ``scene`` as arrays (disabled layers stay empty)."""
    s = scene.capsule_collision
    g = OverlayGeometry()
    if not s.show_overlay:
        return g
    if s.show_capsules:
        g.capsule_lines, g.capsule_colors = capsule_layer(scene)
    if s.show_penetration:
        g.penetration_tris = penetration_layer(scene, depsgraph)
    if s.show_walkability:
        g.walk_tris, g.walk_colors = walkability_layer(scene, depsgraph)
    if s.show_traces:
        g.trace_lines, g.trace_colors = trace_layer(scene, depsgraph)
    if s.show_events:
        g.event_lines, g.event_colors = event_layer(scene)
    return g


# ---------------------------------------------------------------- GPU batches and drawing
class _Batches:
    """GPU batches per layer, rebuilt when the layer's data changed."""

    def __init__(self):
        self.light = None  # (capsules, traces, events) batches
        self.heavy: dict[str, tuple] = {}  # layer -> (key, batch)
        self.dirty = True  # light layers: rebuilt on any update
        self.heavy_dirty = True  # face layers: keys re-checked when a non-role object changed


_batches = _Batches()
_handle = None


def invalidate(depsgraph=None) -> None:
    """Mark the overlay for a rebuild at the next draw (cheap: called on every update).

    With ``depsgraph``, updates that only touch the extension's own objects (a capsule being
    dragged) leave the face layers alone: their keys are not even recomputed.
    """
    _batches.dirty = True
    if depsgraph is None:
        _batches.heavy_dirty = True
        return
    for update in depsgraph.updates:
        idb = getattr(update.id, "original", update.id)
        if not isinstance(idb, bpy.types.Object) or scene_data.role_of(idb) == "NONE":
            _batches.heavy_dirty = True
            return


def _flat_batch(shader, kind, pos, col):
    from gpu_extras.batch import batch_for_shader  # noqa: PLC0415  (GPU only when drawing)

    if pos.shape[0] == 0:
        return None
    return batch_for_shader(shader, kind, {"pos": pos, "color": col})


def _uniform_batch(shader, kind, pos):
    from gpu_extras.batch import batch_for_shader  # noqa: PLC0415

    if pos.shape[0] == 0:
        return None
    return batch_for_shader(shader, kind, {"pos": pos})


def _heavy(name, key, build):
    cached = _batches.heavy.get(name)
    if cached is not None and cached[0] == key:
        return cached[1]
    batch = build()
    _batches.heavy[name] = (key, batch)
    return batch


def draw_scene(scene, depsgraph) -> None:
    """Draw every enabled layer with the current GPU matrices (the handler, or a test's
    ``GPUOffScreen`` with a camera's view and projection loaded)."""
    import gpu  # noqa: PLC0415  (never at import time)

    s = getattr(scene, "capsule_collision", None)
    if s is None or not s.show_overlay:
        return
    flat = gpu.shader.from_builtin("FLAT_COLOR")
    uniform = gpu.shader.from_builtin("UNIFORM_COLOR")
    lines = gpu.shader.from_builtin("POLYLINE_FLAT_COLOR")  # wide lines (core profile)
    if _batches.dirty or _batches.light is None:
        light = []
        for shown, layer in ((s.show_capsules, lambda: capsule_layer(scene)),
                             (s.show_traces, lambda: trace_layer(scene, depsgraph)),
                             (s.show_events, lambda: event_layer(scene))):
            light.append(_flat_batch(lines, "LINES", *layer()) if shown else None)
        _batches.light = tuple(light)
    if _batches.heavy_dirty:
        if s.show_penetration:
            key = layer_key(scene, depsgraph, PENETRATION_ATTRIBUTE)
            key += hashlib.sha1(live_unmapped_triangles(scene).tobytes()).digest()
            _heavy("penetration", key, lambda: _uniform_batch(
                uniform, "TRIS", penetration_layer(scene, depsgraph)))
        if s.show_walkability:
            key = layer_key(scene, depsgraph, WALKABILITY_ATTRIBUTE)
            _heavy("walkability", key, lambda: _flat_batch(
                flat, "TRIS", *walkability_layer(scene, depsgraph)))
        _batches.heavy_dirty = False
    _batches.dirty = False
    gpu.state.blend_set("ALPHA")
    gpu.state.depth_test_set("LESS_EQUAL")
    gpu.state.depth_mask_set(False)
    try:
        if s.show_walkability:
            batch = _batches.heavy.get("walkability", (None, None))[1]
            if batch is not None:
                flat.bind()
                batch.draw(flat)
        if s.show_penetration:
            batch = _batches.heavy.get("penetration", (None, None))[1]
            if batch is not None:
                uniform.bind()
                uniform.uniform_float("color", RED)
                batch.draw(uniform)
        gpu.state.depth_test_set("NONE")  # outlines, traces and markers stay visible
        lines.bind()
        viewport = gpu.state.viewport_get()  # type: ignore[func-returns-value]  # x, y, w, h
        lines.uniform_float("viewportSize", viewport[2:])  # type: ignore[index]
        lines.uniform_float("lineWidth", LINE_WIDTH_PX)
        for batch in _batches.light:
            if batch is not None:
                batch.draw(lines)
    finally:
        gpu.state.depth_test_set("NONE")
        gpu.state.depth_mask_set(True)
        gpu.state.blend_set("NONE")


def _draw_callback():
    context = bpy.context
    scene = context.scene
    if scene is None:
        return
    draw_scene(scene, context.view_layer.depsgraph)


def register():
    global _handle
    _handle = bpy.types.SpaceView3D.draw_handler_add(_draw_callback, (), "WINDOW", "POST_VIEW")


def unregister():
    global _handle
    if _handle is not None:
        bpy.types.SpaceView3D.draw_handler_remove(_handle, "WINDOW")
        _handle = None
    _batches.light = None
    _batches.heavy.clear()
    _batches.dirty = _batches.heavy_dirty = True
