"""Reachability in the overlay, as arrays (world Blender units, no GPU): the face colours' palette,
the cell squares, the spawn marks and their legend entries.

* Faces: ``cc_reachability`` is a face layer of ``overlay_layers`` (``REACH_COLORS`` by the
  attribute's code: reachable teal, trap raspberry, island violet; none not drawn).
* Cell squares (``cell_squares``): one square of the cell's side at each vertex of the
  "Reachability Cells" object (``operators_reach``): cramped floor dark, islands and traps a
  face's colour does not show in their colours, in the cell's face plane (the grid's square
  dropped onto it along up) and lifted ``SQUARE_LIFT_M`` along the face's outward normal,
  over the face layers. A content key (positions, classes, normals, sizes, matrix) lets the
  GPU side keep the batch until the cells change.
* Spawns (``spawn_marks``): a ring and a cross at the foot of every capsule marked Spawn, in
  the plane across its axis, sized in its radii.
"""

from __future__ import annotations

import hashlib

import numpy as np

from ..core.checks.reachability import CRAMPED_CELL, ISLAND, REACHABLE, TRAP
from . import gizmos, results, scene_data

SQUARE_LIFT_M = 0.004  # metres: twice the face layers' lift, so squares float over them

# RGBA per cc_reachability code (results.REACH_CODES): none, reachable, trap, island
REACH_COLORS = np.array([
    (0.0, 0.0, 0.0, 0.0),  # none: not drawn
    (0.1, 0.8, 0.75, 0.35),  # reachable: teal, translucent like a navmesh view
    (0.85, 0.1, 0.45, 0.55),  # trap: raspberry (no finding red)
    (0.55, 0.3, 1.0, 0.55),  # island: violet
], np.float32)
REACH_NAMES = ("", "Reachable", "Trap", "Island")
CRAMPED = (0.1, 0.1, 0.14, 0.75)  # cramped floor: dark squares
SPAWN = (0.2, 1.0, 0.85, 1.0)  # spawn marks
SPAWN_RING_RADII = 1.5  # the ring around a spawn's foot, in capsule radii
RING_SEGMENTS = 32

# cell colour by core's cell class (REACHABLE, TRAP, ISLAND, CRAMPED_CELL)
_CELL_COLORS = np.zeros((CRAMPED_CELL + 1, 4), np.float32)
_CELL_COLORS[REACHABLE] = REACH_COLORS[results.REACH_REACHABLE]
_CELL_COLORS[TRAP] = REACH_COLORS[results.REACH_TRAP]
_CELL_COLORS[ISLAND] = REACH_COLORS[results.REACH_ISLAND]
_CELL_COLORS[CRAMPED_CELL] = CRAMPED
_CELL_COLORS[:CRAMPED_CELL, 3] = 0.75  # squares read over the face colours

CORNERS = np.array([(-1, -1), (1, -1), (1, 1), (-1, 1)], np.float64)
SQUARE_TRIS = np.array([0, 1, 2, 0, 2, 3])


def empty(cols=3):
    return np.empty((0, cols), np.float32)


def cells_objects(scene) -> list:
    """The visible "Reachability Cells" objects (role CELLS) of the scene; not one in Edit
    Mode (its arrays are in the edit data, and Blender draws its points itself)."""
    return [ob for ob in scene.objects
            if scene_data.role_of(ob) == "CELLS" and ob.type == "MESH" and ob.visible_get()
            and ob.mode != "EDIT"]


def _cells_data(ob):
    """(points (K, 3) world, classes (K,), normals (K, 3) world, half side, ex, ey) of one
    cells object, in Blender units."""
    me = ob.data
    n = len(me.vertices)
    pos = np.empty(n * 3, np.float32)
    nrm = np.zeros(n * 3, np.float32)
    cls = np.full(n, CRAMPED_CELL, np.int8)
    if n:
        me.attributes["position"].data.foreach_get("vector", pos)
        attr = me.attributes.get("normal")
        if attr is not None and attr.domain == "POINT" and attr.data_type == "FLOAT_VECTOR":
            attr.data.foreach_get("vector", nrm)
        attr = me.attributes.get("cell_class")
        if attr is not None and attr.domain == "POINT" and attr.data_type == "INT8":
            attr.data.foreach_get("value", cls)
    m = np.array(ob.matrix_world, dtype=np.float64)
    pts = pos.reshape(-1, 3).astype(np.float64) @ m[:3, :3].T + m[:3, 3]
    normals = nrm.reshape(-1, 3).astype(np.float64) @ np.linalg.inv(m[:3, :3])
    length = np.linalg.norm(normals, axis=1, keepdims=True)
    normals = np.divide(normals, length, out=np.zeros_like(normals), where=length > 0)
    ex = np.asarray(ob.get("axis_x", (1.0, 0.0, 0.0)), np.float64) @ m[:3, :3].T
    ey = np.asarray(ob.get("axis_y", (0.0, 1.0, 0.0)), np.float64) @ m[:3, :3].T
    half = 0.5 * float(ob.get("cell_size", 0.0))
    return pts, cls, normals, half, ex, ey


def squares(points, normals, half, ex, ey, lift) -> np.ndarray:
    """(K * 6, 3) float32 triangles: per point (K, 3) the square of half side ``half`` along
    ``ex``/``ey``, dropped along up (ex x ey) onto the plane of its ``normal`` (K, 3) through
    the point, lifted ``lift`` along the normal (all Blender units)."""
    up = np.cross(ex, ey)
    up /= max(float(np.linalg.norm(up)), 1e-12)
    offsets = half * (CORNERS[:, :1] * ex + CORNERS[:, 1:] * ey)  # (4, 3)
    c = points[:, None, :] + offsets[None]  # (K, 4, 3)
    rise = normals @ up  # (K,) the plane's cos to up
    ok = np.abs(rise) > 1e-3
    drop = np.where(ok[:, None], -(normals @ offsets.T) / np.where(ok, rise, 1.0)[:, None], 0.0)
    c += drop[..., None] * up
    c += lift * normals[:, None, :]
    return c[:, SQUARE_TRIS].reshape(-1, 3).astype(np.float32)


def cell_squares(scene, unit_scale: float):
    """(triangles (N, 3) float32, colours (N, 4) float32, key bytes) of every visible cells
    object; the key changes whenever the triangles or colours would."""
    tris, cols = [empty()], [empty(4)]
    h = hashlib.sha1(np.float64(unit_scale).tobytes(), usedforsecurity=False)
    for ob in cells_objects(scene):
        pts, cls, normals, half, ex, ey = _cells_data(ob)
        keep = (cls >= 0) & (cls <= CRAMPED_CELL)
        for a in (pts, cls, normals, ex, ey, np.float64(half)):
            h.update(np.ascontiguousarray(a).tobytes())
        if not keep.any() or half <= 0.0:
            continue
        tris.append(squares(pts[keep], normals[keep], half, ex, ey,
                            SQUARE_LIFT_M / unit_scale))
        cols.append(np.repeat(_CELL_COLORS[cls[keep]], 6, axis=0))
    return np.concatenate(tris), np.concatenate(cols), h.digest()


def classes_drawn(scene) -> set:
    """core cell classes among the visible cells objects' vertices."""
    out: set = set()
    for ob in cells_objects(scene):
        attr = ob.data.attributes.get("cell_class")
        if attr is None or not len(ob.data.vertices):
            continue
        cls = np.empty(len(ob.data.vertices), np.int8)
        attr.data.foreach_get("value", cls)
        out.update(np.unique(cls).tolist())
    return out


def spawn_marks(scene):
    """(lines (N, 3), colours (N, 4)): a ring (SPAWN_RING_RADII) and a cross at the foot of
    every visible capsule marked Spawn, across its axis."""
    pts = []
    ang = np.linspace(0.0, 2.0 * np.pi, RING_SEGMENTS + 1)
    ring = np.stack([np.cos(ang), np.sin(ang), np.zeros_like(ang)], 1)
    ring = np.repeat(ring, 2, axis=0)[1:-1]  # LINES: each segment's two ends
    cross = np.array([(-1, 0, 0), (1, 0, 0), (0, -1, 0), (0, 1, 0)], np.float64) * 0.5
    for ob in scene_data.spawn_objects(scene):
        if not ob.visible_get():
            continue
        radius, _height = gizmos.capsule_size(ob)
        m = np.array(ob.matrix_world.normalized(), dtype=np.float64)
        local = np.concatenate([ring * SPAWN_RING_RADII, cross]) * radius
        pts.append((local @ m[:3, :3].T + m[:3, 3]).astype(np.float32))
    if not pts:
        return empty(), empty(4)
    lines = np.concatenate(pts)
    return lines, np.tile(np.array(SPAWN, np.float32), (lines.shape[0], 1))


def legend_entries(cells: set, spawns: bool) -> list:
    """(colour, text) for the squares' cramped class and the spawn marks, when drawn."""
    out = []
    if CRAMPED_CELL in cells:
        out.append((CRAMPED[:3] + (1.0,), "Cramped"))
    if spawns:
        out.append((SPAWN, "Spawn"))
    return out
