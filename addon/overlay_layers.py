"""The overlay's data: every layer as numpy arrays in world Blender units, no GPU.

Face layers are drawn from the level's parts (``level_parts.current_parts``: every object and
instance the checks read, world space, Blender's triangulation, winding fixed for negative
scale), one part at a time, so a collection instance, an array copy and a mirrored object
are drawn where the checks see them:

* per triangle, a layer's value (a flag, or a code coloured by the layer's palette:
  walkability, reachability) comes from the check's face attribute on the part's original
  mesh (``tri_orig_face``; instances read the instanced object's mesh), or, for the faces no
  original face stands for (modifiers, geometry nodes), from the last run's per-triangle
  result (``level_parts.results_of_part``), drawn while the attribute is there (Clear Results
  removes both); penetration adds the live check's penetrated triangles;
* each highlighted triangle is lifted ``SURFACE_LIFT_M`` metres off its face along its
  outward normal (on the visible side of a closed solid, mirrored or not);
* a part's layer carries a key (part digest, values, unit scale): the GPU side rebuilds a
  batch only when its key changes, so moving one box redraws that box's batches only.

The light layers (capsules, push-outs, traces, events) live in ``overlay_marks``; here they
join the face layers in ``overlay_geometry``, with the legend's entries. Sizes are metres
converted with the scene's unit scale (the 2 mm lift is 0.2 units in a centimetre scene).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np

from .. import core
from . import cache, level_parts, live_state, overlay_reach, results, scene_data, scene_render
from .overlay_marks import (
    CONTACT,
    EVENT_COLORS,
    EVENT_DEFAULT,
    PUSH_ARROW,
    capsule_layer,
    empty,
    event_marks,
    push_layer,
    push_marks,
    trace_layer,
)

SURFACE_LIFT_M = 0.002  # metres: highlights float this far off their face, outward

PENETRATION_TINT = (1.0, 0.45, 0.45, 0.45)  # lighter than the capsule's red: the arrow reads
WALKABILITY_COLORS = results.WALKABILITY_COLORS[:4].copy()  # WALKABLE, STEEP, WALL, CEILING
WALKABILITY_COLORS[:, 3] = (0.35, 0.35, 0.25, 0.35)
WALKABILITY_NAMES = ("Walkable", "Steep", "Wall", "Ceiling")
# RGBA per cc_collision_diff code (operators_diff.DIFF_CODES): none, hole, invisible wall,
# walk-through wall, reach differs, floating, sunk; drawn on render and collision meshes.
DIFF_COLORS = np.array([
    (0.0, 0.0, 0.0, 0.0),  # none: not drawn
    (1.0, 0.05, 0.05, 0.6),  # hole: red (an error)
    (1.0, 0.55, 0.0, 0.55),  # invisible wall: orange
    (0.95, 0.2, 0.75, 0.55),  # walk-through wall: magenta
    (0.3, 0.45, 1.0, 0.5),  # reach differs: blue
    (0.2, 0.9, 0.95, 0.45),  # floating: cyan
    (0.55, 0.4, 0.2, 0.5),  # sunk: brown
], np.float32)
DIFF_NAMES = ("", "Hole", "Invisible wall", "Walk-through wall", "Reach differs", "Floating",
              "Sunk")


class FaceLayer(NamedTuple):
    """A face layer: its scene toggle, the face attribute and per-triangle result kind it
    draws, its legend title and colour; or, for a layer of codes, ``palette`` (C, 4) the
    colour of each code (alpha 0: not drawn) and ``names`` their legend words."""

    name: str
    toggle: str
    attribute: str
    kind: str | None
    title: str
    color: tuple | None
    palette: np.ndarray | None = None
    names: tuple = ()


FACE_LAYERS = (
    FaceLayer("walkability", "show_walkability", results.WALKABILITY_ATTRIBUTE, "WALKABILITY",
              "Walkability", None, WALKABILITY_COLORS, WALKABILITY_NAMES),
    FaceLayer("reachability", "show_reachability", results.REACHABILITY_ATTRIBUTE,
              "REACHABILITY", "Reachability", None, overlay_reach.REACH_COLORS,
              overlay_reach.REACH_NAMES),
    FaceLayer("stand", "show_stand", results.AUDIT_ATTRIBUTES["STAND"], "STAND",
              "Cannot stand", (0.95, 0.25, 0.95, 0.5)),
    FaceLayer("stairs", "show_stairs", results.AUDIT_ATTRIBUTES["STAIRS"], "STAIRS",
              "Stair problem", (1.0, 0.5, 0.1, 0.55)),
    # headroom a pure blue: the island's violet and the ceiling's purple stay apart from it
    FaceLayer("headroom", "show_headroom", results.AUDIT_ATTRIBUTES["HEADROOM"], "HEADROOM",
              "Low headroom", (0.05, 0.3, 1.0, 0.5)),
    FaceLayer("ledges", "show_ledges", results.AUDIT_ATTRIBUTES["LEDGE"], "LEDGE",
              "Ledge", (1.0, 0.9, 0.15, 0.55)),
    FaceLayer("out_of_reach", "show_out_of_reach", results.OUT_OF_REACH_ATTRIBUTE, None,
              "Out of reach (audits)", (0.55, 0.55, 0.55, 0.45)),
    FaceLayer("penetration", "show_penetration", results.PENETRATION_ATTRIBUTE, None,
              "Penetrated", PENETRATION_TINT),
    FaceLayer("collision_diff", "show_collision_diff", results.DIFF_ATTRIBUTE, None,
              "Render vs collision", None, DIFF_COLORS, DIFF_NAMES),
)
# Layers drawn on the render meshes too (scene_render: the meshes the collision source
# leaves out), not only on the level's parts.
RENDER_LAYERS = ("collision_diff",)
LAYER_BY_NAME = {layer.name: layer for layer in FACE_LAYERS}


@dataclass
class PartFaces:
    """One part's triangles of one face layer: ``key`` changes whenever what ``build``
    returns may change; ``build()`` -> (corners (K*3, 3) float32 world Blender units,
    lifted; colours (K*3, 4) float32); ``codes``: the palette codes it draws (the legend's
    entries of a layer of codes)."""

    name: str
    key: bytes
    build: Callable[[], tuple]
    codes: tuple = ()


@dataclass
class OverlayGeometry:
    """Every layer as arrays: positions (N, 3) float32 world Blender units, colours (N, 4)."""

    capsule_lines: np.ndarray = field(default_factory=empty)
    capsule_colors: np.ndarray = field(default_factory=lambda: empty(4))
    faces: dict = field(default_factory=dict)  # layer name -> (corners, colours)
    push_lines: np.ndarray = field(default_factory=empty)
    push_colors: np.ndarray = field(default_factory=lambda: empty(4))
    pushes: list = field(default_factory=list)  # PushMark
    trace_lines: np.ndarray = field(default_factory=empty)
    trace_colors: np.ndarray = field(default_factory=lambda: empty(4))
    events: list = field(default_factory=list)  # EventMark
    cell_tris: np.ndarray = field(default_factory=empty)  # reachability's cell squares
    cell_colors: np.ndarray = field(default_factory=lambda: empty(4))
    spawn_lines: np.ndarray = field(default_factory=empty)  # spawn marks
    spawn_colors: np.ndarray = field(default_factory=lambda: empty(4))
    legend: list = field(default_factory=list)  # (colour, text)

    def face_layer(self, name):
        return self.faces.get(name, (empty(), empty(4)))

    @property
    def penetration_tris(self) -> np.ndarray:
        return self.face_layer("penetration")[0]

    @property
    def walk_tris(self) -> np.ndarray:
        return self.face_layer("walkability")[0]

    @property
    def walk_colors(self) -> np.ndarray:
        return self.face_layer("walkability")[1]


# ---------------------------------------------------------------- face layers
class _Attributes:
    """Face attribute values per mesh, read once per pass (linked duplicates, instances).

    A mesh in Edit Mode keeps its values in the edit data, where the original mesh's
    attribute arrays are empty (``foreach_get`` would raise a length mismatch on every
    redraw): its values are read from the evaluated object converted with ``to_mesh``
    (``scene_data.readable_mesh``), whose faces are the original faces in Edit Mode (the
    level reads it so, ``scene_data.faces_map_back``). A count that still disagrees gives no
    values (the layer falls back to the last run's per-triangle results), never an error."""

    def __init__(self, depsgraph=None):
        self.values: dict = {}
        self.depsgraph = depsgraph

    def of(self, ob, name):
        if ob is None or ob.type != "MESH":
            return None
        key = (ob.data.name, name)
        if key not in self.values:
            if ob.mode == "EDIT" and self.depsgraph is not None:
                with scene_data.readable_mesh(ob.evaluated_get(self.depsgraph)) as me:
                    self.values[key] = face_values(me, name)
            else:
                self.values[key] = face_values(ob.data, name)
        return self.values[key]


def face_values(me, name):
    """(F,) int8 or bool values of ``me``'s face attribute ``name``, or None when ``me`` has
    none (or its array does not hold one value per face: an edit mesh's stale original)."""
    attr = me.attributes.get(name)
    if attr is None or attr.domain != "FACE" or len(attr.data) != len(me.polygons):
        return None
    vals = np.empty(len(me.polygons), dtype=np.int8 if attr.data_type == "INT8" else bool)
    attr.data.foreach_get("value", vals)
    return vals


def live_hits_by_part(scene) -> dict:
    """{(part name, digest): local triangles} of the live check's penetrated triangles."""
    level = cache.peek(scene)
    tris = live_state.live_triangles(scene)
    if level is None or not tris.size:
        return {}
    out = {}
    for name, digest, start, stop in level_parts.part_ranges(level):
        lo, hi = np.searchsorted(tris, [start, stop])
        if hi > lo:
            out[(name, digest)] = tris[lo:hi] - start
    return out


def drawn(layer: FaceLayer, values) -> np.ndarray:
    """(M,) bool: the triangles ``values`` (flags, or codes of a palette layer) colour."""
    if layer.palette is None:
        return np.asarray(values, bool)
    v = np.asarray(values)
    ok = (v >= 0) & (v < len(layer.palette))
    return ok & (layer.palette[np.where(ok, v, 0), 3] > 0)


def part_values(layer: FaceLayer, part, ob, attrs: _Attributes, scene, live: dict):
    """(M,) per-triangle values of ``layer`` on ``part``: int8 codes (-1: none) or bool
    flags; None when the layer has nothing there."""
    faces = attrs.of(ob, layer.attribute)
    m = part.triangles.shape[0]
    coded = layer.palette is not None
    out = np.full(m, -1, np.int8) if coded else np.zeros(m, bool)
    if faces is not None:
        orig = part.tri_orig_face
        ok = (orig >= 0) & (orig < faces.size)
        out[ok] = faces[orig[ok]]
        if layer.kind is not None:
            found = level_parts.results_of_part(scene, layer.kind, part)
            if found is not None:  # the last run's values, unmapped faces included
                tris, vals = found
                if coded:
                    out[tris] = vals
                else:
                    out[:] = False
                    out[tris] = True
    hits = live.get((part.name, part.digest))
    if hits is not None and layer.name == "penetration":
        out[hits] = True
    if not drawn(layer, out).any():
        return None
    return out


def lifted_corners(part, sel, unit_scale: float) -> np.ndarray:
    """(K*3, 3) float32 corners (world Blender units) of ``part``'s triangles ``sel``, lifted
    SURFACE_LIFT_M along each face's outward normal (the winding is outward, mirrored
    objects included)."""
    c = part.vertices[part.triangles[sel]]  # (K, 3, 3) metres
    n = np.cross(c[:, 1] - c[:, 0], c[:, 2] - c[:, 0])
    length = np.linalg.norm(n, axis=1, keepdims=True)
    n = np.divide(n, length, out=np.zeros_like(n), where=length > 0)
    c += SURFACE_LIFT_M * n[:, None, :]
    return (c.reshape(-1, 3) / unit_scale).astype(np.float32)


def _builder(layer: FaceLayer, part, values, unit_scale: float):
    def build():
        sel = np.flatnonzero(drawn(layer, values))
        if layer.palette is not None:  # codes
            colors = np.repeat(layer.palette[values[sel]], 3, axis=0)
        else:
            colors = np.tile(np.array(layer.color, np.float32), (sel.size * 3, 1))
        return lifted_corners(part, sel, unit_scale), colors.astype(np.float32)

    return build


def face_layers(scene, depsgraph, shown) -> dict:
    """{layer name: [PartFaces]} of the enabled face layers ``shown`` (names), part by part;
    {} when the collision source cannot be read (the panel says why)."""
    try:
        parts = level_parts.current_parts(scene, depsgraph)
    except ValueError:
        return {}
    unit = scene_data.unit_scale_of(scene)
    attrs = _Attributes(depsgraph)
    live = live_hits_by_part(scene) if "penetration" in shown else {}
    out: dict = {name: [] for name in shown}
    render_shown = [n for n in shown if n in RENDER_LAYERS]
    drawn_parts = [(part, shown) for part in parts]
    if render_shown:
        drawn_parts += [(part, render_shown)
                        for part in scene_render.render_parts(depsgraph, scene)]
    for part, names in drawn_parts:
        ob = results.object_for(part.name)
        for name in names:
            layer = LAYER_BY_NAME[name]
            values = part_values(layer, part, ob, attrs, scene, live)
            if values is None:
                continue
            h = hashlib.sha1(part.digest, usedforsecurity=False)
            h.update(name.encode())
            h.update(values.tobytes())
            h.update(np.array([unit, SURFACE_LIFT_M], np.float64).tobytes())
            codes = ()
            if layer.palette is not None:
                n = np.bincount(values[drawn(layer, values)].astype(np.int64),
                                minlength=len(layer.palette))
                codes = tuple(np.flatnonzero(n).tolist())
            out[name].append(PartFaces(part.name, h.digest(),
                                       _builder(layer, part, values, unit), codes))
    return out


def codes_of(layers: dict) -> dict:
    """{layer name: set of codes drawn} of ``face_layers`` output (the legend's ``codes``)."""
    return {name: {c for p in parts for c in p.codes} for name, parts in layers.items()}


# ---------------------------------------------------------------- legend and everything
def legend(faces: dict, pushes, events, extra=(), codes=None) -> list:
    """(colour, text) entries for what is drawn now, in drawing order; ``extra``: entries
    of the layers drawn over the faces (``overlay_reach.legend_entries``); ``codes``: {layer
    name: codes drawn} of the layers of codes (``codes_of``; None: every named code)."""
    out = []
    for layer in FACE_LAYERS:
        if not faces.get(layer.name):
            continue
        if layer.palette is None:
            out.append((tuple((layer.color or EVENT_DEFAULT)[:3]) + (1.0,), layer.title))
            continue
        shown = None if codes is None else codes.get(layer.name, set())
        out += [(tuple(float(c) for c in layer.palette[k][:3]) + (1.0,), word)
                for k, word in enumerate(layer.names) if word and (shown is None or k in shown)]
    out += list(extra)
    if pushes:
        out += [(PUSH_ARROW, "Push-out"), (CONTACT, "Contact point")]
    for kind in core.EVENTS:
        if any(e.kind == kind for e in events):
            out.append((EVENT_COLORS[kind], f"Event: {core.EVENTS[kind].word}"))
    return out


def shown_face_layers(settings) -> list:
    """Names of the face layers the scene's toggles enable."""
    return [layer.name for layer in FACE_LAYERS if getattr(settings, layer.toggle, False)]


def overlay_geometry(scene, depsgraph) -> OverlayGeometry:
    """Every enabled layer of ``scene`` as arrays (disabled layers stay empty)."""
    s = scene.capsule_collision
    g = OverlayGeometry()
    if not s.show_overlay:
        return g
    if s.show_capsules:
        g.capsule_lines, g.capsule_colors = capsule_layer(scene)
    layers = face_layers(scene, depsgraph, shown_face_layers(s))
    for name, parts in layers.items():
        built = [p.build() for p in parts]
        if built:
            g.faces[name] = (np.concatenate([b[0] for b in built]),
                             np.concatenate([b[1] for b in built]))
    if s.show_penetration:
        g.pushes = push_marks(scene)
        g.push_lines, g.push_colors = push_layer(scene, g.pushes)
    if s.show_traces:
        g.trace_lines, g.trace_colors = trace_layer(scene)
    if s.show_events:
        g.events = event_marks(scene)
    extra = []
    if s.show_reachability:
        g.cell_tris, g.cell_colors, _key = overlay_reach.cell_squares(
            scene, scene_data.unit_scale_of(scene))
        g.spawn_lines, g.spawn_colors = overlay_reach.spawn_marks(scene)
        extra = overlay_reach.legend_entries(overlay_reach.classes_drawn(scene),
                                             bool(g.spawn_lines.shape[0]))
    g.legend = legend(g.faces, g.pushes, g.events, extra, codes_of(layers))
    return g
