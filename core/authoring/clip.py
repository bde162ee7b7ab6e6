"""Clipping triangles by a plane (Sutherland-Hodgman on a triangle, vectorised): the part of
each triangle on the positive side, as triangles with the input's winding. Used where a
stair ramp replaces only the part of a wide tread or riser that lies across the flight.
"""

from __future__ import annotations

import numpy as np


def _rotated(points, dist, first):
    """``points`` (K, 3, 3) and ``dist`` (K, 3) with corner ``first`` (K,) moved to index 0,
    the cyclic order (and so the winding) kept."""
    idx = (np.arange(3)[None, :] + first[:, None]) % 3
    return np.take_along_axis(points, idx[:, :, None], 1), np.take_along_axis(dist, idx, 1)


def _cut(a, b, da, db):
    """Where the edge a-b crosses the plane (da, db signed distances of opposite sign)."""
    return a + (b - a) * (da / (da - db))[:, None]


def clip_triangles(points, dist) -> tuple[np.ndarray, np.ndarray]:
    """The parts of triangles ``points`` (K, 3, 3) where the signed distance, linear over each
    triangle and ``dist`` (K, 3) at its corners, is > 0. Returns (pieces (P, 3, 3), source
    (P,) int64 index of the triangle each piece comes from). A triangle wholly on the positive
    side is its own piece; one with one corner there gives one triangle, two corners a quad
    (two triangles)."""
    p = np.asarray(points, np.float64)
    d = np.asarray(dist, np.float64)
    pos = d > 0
    n = pos.sum(axis=1)
    whole = np.flatnonzero(n == 3)
    one = np.flatnonzero(n == 1)
    two = np.flatnonzero(n == 2)
    a1, d1 = _rotated(p[one], d[one], np.argmax(pos[one], axis=1))
    tip = np.stack([a1[:, 0], _cut(a1[:, 0], a1[:, 1], d1[:, 0], d1[:, 1]),
                    _cut(a1[:, 0], a1[:, 2], d1[:, 0], d1[:, 2])], axis=1)
    a2, d2 = _rotated(p[two], d[two], np.argmin(pos[two], axis=1))
    ab = _cut(a2[:, 0], a2[:, 1], d2[:, 0], d2[:, 1])
    ac = _cut(a2[:, 0], a2[:, 2], d2[:, 0], d2[:, 2])
    quad_a = np.stack([ab, a2[:, 1], a2[:, 2]], axis=1)
    quad_b = np.stack([ab, a2[:, 2], ac], axis=1)
    pieces = np.concatenate([p[whole], tip, quad_a, quad_b]).reshape(-1, 3, 3)
    source = np.concatenate([whole, one, two, two]).astype(np.int64)
    return pieces, source
