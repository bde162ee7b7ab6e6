"""The overlay's light layers as arrays (world Blender units, no GPU): capsule outlines, the
push-out findings of penetrating capsules, walk traces, event markers.

* Capsules: wire outlines, red when penetrating, green when clear, grey unchecked.
* Push-outs (``push_marks``): per penetrating capsule, against the cached level when it is
  current, its contact points, ``core.push_out`` (the shortest way out that does not leave
  through another solid) drawn as an arrow from the capsule's middle with the capsule where it
  must go, and a label at the deepest contact ("Cap: 0.45 m deep", or "buried"). Computed once
  per capsule placement and level. Sizes are in the capsule's radii, so they follow the
  scene's units (a centimetre scene's 35-unit capsule gets a 21-unit arrowhead).
* Traces: lines, green where grounded, orange in the air.
* Events: one ``EventMark`` per marker object with ``core.event_label`` ("step 0.45 m") and
  one colour per kind (``EVENT_COLORS``, every kind of ``core.EVENTS``); the screen pass
  (``overlay_text``) draws them at a fixed pixel size.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from .. import core
from ..core.checks.verdicts import format_depth
from . import cache, gizmos, scene_data

RED = (1.0, 0.05, 0.05, 0.9)
CAPSULE_CLEAR = (0.2, 0.9, 0.4, 1.0)
CAPSULE_UNCHECKED = (0.7, 0.7, 0.7, 1.0)
PUSH_ARROW = (0.15, 0.85, 1.0, 1.0)
PUSH_GHOST = (0.15, 0.85, 1.0, 0.55)
BURIED = (1.0, 0.2, 0.85, 1.0)
CONTACT = (1.0, 0.9, 0.25, 1.0)
TRACE_GROUNDED = (0.1, 0.9, 0.3, 1.0)
TRACE_AIRBORNE = (1.0, 0.55, 0.0, 1.0)
# one colour per walk event kind (core.EVENTS: the one home of the kinds and their words)
EVENT_COLORS = {
    "blocked": (1.0, 0.2, 0.2, 1.0),
    "step_too_high": (1.0, 0.55, 0.15, 1.0),
    "slope_too_steep": (1.0, 0.85, 0.2, 1.0),
    "fell": (0.35, 0.65, 1.0, 1.0),
    "fell_out_of_level": (0.55, 0.45, 1.0, 1.0),
    "ceiling_too_low": (0.85, 0.35, 1.0, 1.0),
    "stuck": (0.75, 0.75, 0.75, 1.0),
    "reached_goal": (0.2, 0.95, 0.4, 1.0),
}
EVENT_DEFAULT = (1.0, 1.0, 1.0, 1.0)

ARROW_HEAD_RADII = 0.6  # arrowhead length, in capsule radii
CONTACT_CROSS_RADII = 0.15  # contact point cross half-size, in capsule radii


ARROW_HEAD_RADII = 0.6  # arrowhead length, in capsule radii
CONTACT_CROSS_RADII = 0.15  # contact point cross half-size, in capsule radii


def empty(cols=3):
    return np.empty((0, cols), np.float32)


@dataclass
class PushMark:
    """A penetrating capsule's finding, Blender units: where it penetrates (``contacts``
    (K, 3), ``deepest`` (3,)), where it must go (``start`` (3,) the axis middle, ``vector``
    (3,) the push-out; zero when buried), its label and whether it is buried."""

    capsule: str
    contacts: np.ndarray
    deepest: np.ndarray
    start: np.ndarray
    vector: np.ndarray
    label: str
    buried: bool


class EventMark(NamedTuple):
    """A walk event marker: position (3,) world Blender units, kind, label, colour."""

    position: np.ndarray
    kind: str
    label: str
    color: tuple


def _transform(points, matrix) -> np.ndarray:
    m = np.array(matrix, dtype=np.float64)
    return (np.asarray(points, np.float64) @ m[:3, :3].T + m[:3, 3]).astype(np.float32)


# ---------------------------------------------------------------- capsules and push-outs
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
        n = 1 if n == 0 and ob.capsule_collision.inside_solid else n  # buried in a solid
        color = RED if n > 0 else CAPSULE_CLEAR if n == 0 else CAPSULE_UNCHECKED
        pts.append(_transform(local, ob.matrix_world.normalized()))
        cols.append(np.tile(np.array(color, np.float32), (local.shape[0], 1)))
    if not pts:
        return empty(), empty(4)
    return np.concatenate(pts), np.concatenate(cols)


_push_memo: dict = {}  # (capsule, matrix, size, level stamp) -> PushMark | None


def push_marks(scene) -> list:
    """A PushMark per penetrating capsule (the cached level must be current: after the live
    check or a check operator), computed once per capsule placement and level."""
    level = cache.peek(scene)
    if level is None:
        return []
    unit = level.unit_scale
    marks, keep = [], {}
    for ob in scene.objects:
        if scene_data.role_of(ob) != "CAPSULE" or not ob.visible_get():
            continue
        if ob.capsule_collision.penetrating_count <= 0 and not ob.capsule_collision.inside_solid:
            continue
        pg = ob.capsule_collision
        key = (ob.name, np.array(ob.matrix_world, np.float64).tobytes(),
               float(pg.radius), float(pg.height), level.stamp)
        mark = _push_memo.get(key)
        if mark is None and key not in _push_memo:
            try:
                mark = push_mark(level, ob.name, scene_data.capsule_of(ob, unit))
            except ValueError:
                mark = None
        keep[key] = mark
        if mark is not None:
            marks.append(mark)
    _push_memo.clear()
    _push_memo.update(keep)
    return marks


def push_mark(level, name: str, capsule) -> PushMark | None:
    """The finding of one capsule (metres in, Blender units out), or None when clear."""
    contacts = level.mesh.capsule_contacts(capsule)
    result = core.push_out(level.mesh, capsule)
    if not contacts and result.distance == 0.0:
        return None
    unit = level.unit_scale
    points = np.array([c.point for c in contacts], float).reshape(-1, 3)
    start = 0.5 * (capsule.a + capsule.b)
    deepest = points[0] if len(points) else start
    if result.buried:
        label = f"{name}: buried, {format_depth(result.distance, 2)}"
    else:
        label = f"{name}: {format_depth(result.distance, 2)} deep"
    return PushMark(name, (points / unit).astype(np.float32),
                    (deepest / unit).astype(np.float32), (start / unit).astype(np.float32),
                    (np.zeros(3) if result.buried else result.vector / unit).astype(np.float32),
                    label, bool(result.buried))


def arrow_lines(start, vector, head: float) -> np.ndarray:
    """LINES (10, 3) of an arrow from ``start`` along ``vector`` with a 4-barb head ``head``
    long (all Blender units)."""
    end = start + vector
    length = float(np.linalg.norm(vector))
    if length == 0.0:
        return empty()
    d = vector / length
    head = min(head, 0.5 * length)
    helper = np.array([1.0, 0, 0]) if abs(d[0]) < 0.9 else np.array([0, 1.0, 0])
    e1 = np.cross(d, helper)
    e1 /= np.linalg.norm(e1)
    e2 = np.cross(d, e1)
    back = end - d * head
    pts = [start, end]
    for e in (e1, -e1, e2, -e2):
        pts += [end, back + e * head * 0.5]
    return np.array(pts, np.float32)


def push_layer(scene, marks) -> tuple[np.ndarray, np.ndarray]:
    """(lines, colours): per mark an arrow, the capsule's outline where it must go, and a
    cross at every contact point; sizes in the capsule's radii (so the scene's units)."""
    pts, cols = [], []
    for mark in marks:
        ob = scene.objects.get(mark.capsule)
        if ob is None:
            continue
        radius, height = gizmos.capsule_size(ob)
        lines = [arrow_lines(mark.start, mark.vector, ARROW_HEAD_RADII * radius)]
        colors = [PUSH_ARROW] * len(lines[0])
        if not mark.buried and np.any(mark.vector):
            m = ob.matrix_world.normalized()
            ghost = _transform(gizmos.capsule_wire_vertices(radius, height), m) + mark.vector
            lines.append(ghost)
            colors += [PUSH_GHOST] * len(ghost)
        s = CONTACT_CROSS_RADII * radius
        arms = np.array([(-s, 0, 0), (s, 0, 0), (0, -s, 0), (0, s, 0), (0, 0, -s), (0, 0, s)],
                        np.float32)
        for p in mark.contacts:
            lines.append(arms + p)
            colors += [CONTACT] * 6
        pts.append(np.concatenate(lines).astype(np.float32))
        cols.append(np.array(colors, np.float32))
    if not pts:
        return empty(), empty(4)
    return np.concatenate(pts), np.concatenate(cols)


# ---------------------------------------------------------------- traces and events
def trace_layer(scene):
    """(lines (N, 3), colours (N, 4)) of every walk trace's edges, coloured by ``grounded``;
    not of a trace in Edit Mode (its arrays are in the edit data; Blender draws its edges)."""
    pts, cols = [], []
    for ob in scene.objects:
        if (ob.type != "MESH" or scene_data.role_of(ob) != "TRACE" or not ob.visible_get()
                or ob.mode == "EDIT"):
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
        return empty(), empty(4)
    return np.concatenate(pts), np.concatenate(cols)


def event_label_of(ob) -> str:
    """``core.event_label`` of a marker object ("step 0.45 m"); the kind for unknown ones."""
    kind = str(ob.get("kind", ""))
    value = ob.get("value")
    if kind not in core.EVENTS:
        return kind or "event"
    return core.event_label(kind, None if value is None else float(value))


def event_marks(scene) -> list:
    """An EventMark per visible event marker object."""
    out = []
    for ob in scene.objects:
        if scene_data.role_of(ob) != "MARKER" or not ob.visible_get():
            continue
        kind = str(ob.get("kind", ""))
        out.append(EventMark(np.array(ob.matrix_world.translation, np.float32), kind,
                             event_label_of(ob), EVENT_COLORS.get(kind, EVENT_DEFAULT)))
    return out
