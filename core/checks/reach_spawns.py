"""Where the flood starts: the free node at each spawn, or where a spawn placed above the
floor lands (as the game drops the player), and the free node nearest any foot point.

Frame and units: world space, metres; ``settings.up`` is up.
"""

from __future__ import annotations

import numpy as np

from ..walk.walker import FALL_OUT_OF_LEVEL_DISTANCE
from .audits.cells import shifted
from .audits.spans import sweep_chunks
from .audits.standable import FREE, StandableMap
from .reach_links import reach_cells


def nearest_nodes(smap: StandableMap, h, points, settings) -> np.ndarray:
    """(P,) int64 the FREE span nearest each foot point (P, 3) among the cells within
    ``reach_cells`` of its cell (a character perched on an edge stands a radius beyond the
    floor's last cell), stand heights within ``step_height`` of the point (-1: none)."""
    up = smap.grid.up
    ph = points @ up
    cell = smap.grid.cell_of(points)
    best = np.full(points.shape[0], -1, np.int64)
    best_d = np.full(points.shape[0], np.inf)
    step = settings.step_height
    k = reach_cells(settings, smap.grid.cell)
    for dx in range(-k, k + 1):
        for dy in range(-k, k + 1):
            j = smap.columns.lookup(shifted(smap.grid, cell, dx, dy), ph, -step, step,
                                    smap.state == FREE, h)
            jj = np.maximum(j, 0)
            d = np.where(j >= 0, ((smap.stand[jj] - points) ** 2).sum(1), np.inf)
            better = d < best_d
            best[better], best_d[better] = j[better], d[better]
    return best


def spawn_floor(mesh, pts, settings):
    """Where spawns placed at foot points ``pts`` (K, 3) come to stand, as the game drops the
    player: the capsule swept straight down (at most FALL_OUT_OF_LEVEL_DISTANCE) until it
    touches something. Returns (feet (K, 3), drop (K,) metres fallen, NaN where nothing is
    below; a spawn touching something where placed drops 0)."""
    s = settings
    u = s.up_vector
    k = pts.shape[0]
    if not k:
        return pts.copy(), np.zeros(0)
    a = pts + u * (s.radius + s.skin_width)
    t, _n, _p, _tri = sweep_chunks(mesh, a, a + u * (s.height - 2.0 * s.radius), s.radius,
                                   np.tile(-u * FALL_OUT_OF_LEVEL_DISTANCE, (k, 1)))
    drop = np.where(np.isfinite(t), np.maximum(t * FALL_OUT_OF_LEVEL_DISTANCE - s.skin_width,
                                               0.0), np.nan)
    return pts - np.outer(np.nan_to_num(drop), u), drop


def spawn_nodes(smap, h, pts, feet, drop, settings):
    """(nodes (K,) int64, drop (K,)): the node of each spawn where placed (drop 0), else
    where it lands (``spawn_floor``: ``feet``, ``drop``); -1 where neither stands on a free
    node (drop NaN when nothing is below)."""
    nodes = nearest_nodes(smap, h, pts, settings)
    out = np.where(nodes >= 0, 0.0, drop)
    fell = np.flatnonzero((nodes < 0) & np.isfinite(drop))
    if fell.size:
        nodes[fell] = nearest_nodes(smap, h, feet[fell], settings)
    return nodes, out


def spawns_in_walls(mesh, feet, settings) -> np.ndarray:
    """(K,) int64 for each spawn foot point ``feet`` (K, 3): the deepest triangle the
    character's capsule standing there penetrates above ``step_height`` (a wall, a pillar,
    a low ceiling: the game would start the player stuck), else -1. The capsule is lifted
    by ``step_height``: a spawn sunk into its floor less than a step is stepped up out of
    it, as the controller does, and is no bug."""
    s = settings
    pts = np.asarray(feet, np.float64).reshape(-1, 3)
    out = np.full(pts.shape[0], -1, np.int64)
    if not pts.shape[0]:
        return out
    u = s.up_vector
    top = s.height - s.radius
    a = pts + u * min(s.step_height + s.radius, top)
    b = pts + u * top
    got = mesh.capsule_contacts_many(a, b, np.full(pts.shape[0], s.radius))
    first = np.unique(got.query, return_index=True)[1]  # sorted by query, deepest first
    out[got.query[first]] = got.triangle[first]
    return out
