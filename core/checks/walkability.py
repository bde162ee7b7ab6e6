"""Walkability of faces: WALKABLE / STEEP / WALL / CEILING by the angle to ``up``.

With theta the angle between a face's normal (by winding) and ``up``:
WALKABLE when theta <= max_slope_deg; WALL when |theta - 90| <= wall_tolerance_deg;
CEILING when theta > 90 + wall_tolerance_deg; STEEP otherwise. Zero-area faces and slivers
(core.constants.SLIVER_REL2) are WALL.

theta is computed as ``atan2(|n x up|, n . up)`` from the un-normalised edge cross product
(accurate to a few ulps at every angle, unlike ``arccos`` of a dot product near 0 and 180 deg).
"""

from __future__ import annotations

import numpy as np

from ..constants import CLASSIFY_COS_MARGIN, SLIVER_REL2, SLOPE_LIMIT_TOL_RAD, WALL_TOLERANCE_DEG
from ..geometry.validate import as_point

WALKABLE = 0
STEEP = 1
WALL = 2
CEILING = 3


def _angle_arg(value, name: str, lo: float, hi: float) -> float:
    try:
        x = float(value)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} must be a number of degrees, got {value!r}") from exc
    if not np.isfinite(x) or x < lo or x > hi:
        raise ValueError(f"{name} must be in [{lo}, {hi}] degrees, got {x}")
    return x


def face_slopes(mesh, up=(0.0, 0.0, 1.0)) -> np.ndarray:
    """(M,) float64 angle in radians between each face normal and ``up``; NaN for zero-area
    faces and slivers (core.constants.SLIVER_REL2), whose normal is rounding noise."""
    return _slopes(mesh.vertices[mesh.triangles], _unit_up(up))


def _unit_up(up) -> np.ndarray:
    up = as_point(up, "up")
    n2u = float(up @ up)
    if n2u == 0.0:
        raise ValueError("up must be a non-zero vector")
    return up / np.sqrt(n2u)


def _slopes(corners, up) -> np.ndarray:
    """Exact angles of the faces with corners (K, 3, 3) to the unit ``up`` (NaN: no normal)."""
    a, b, c = corners[:, 0], corners[:, 1], corners[:, 2]
    e1, e2 = b - a, c - a
    cr = np.cross(e1, e2)
    n2 = np.einsum("ij,ij->i", cr, cr)
    e = np.maximum(np.maximum(np.einsum("ij,ij->i", e1, e1), np.einsum("ij,ij->i", e2, e2)),
                   np.einsum("ij,ij->i", c - b, c - b))
    side = np.cross(cr, up)
    theta = np.arctan2(np.sqrt(np.einsum("ij,ij->i", side, side)), cr @ up)
    theta[n2 <= SLIVER_REL2 * e * e] = np.nan  # zero-area or sliver (SLIVER_REL2)
    return theta


def _classes_from_angles(theta, limit, wall) -> np.ndarray:
    """The classification rule on exact angles (NaN: degenerate), every bound widened by
    SLOPE_LIMIT_TOL_RAD."""
    out = np.full(theta.shape, STEEP, dtype=np.int8)
    half = np.pi / 2
    degenerate = np.isnan(theta)
    th = np.where(degenerate, half, theta)
    out[np.abs(th - half) <= wall + SLOPE_LIMIT_TOL_RAD] = WALL
    out[th > half + wall + SLOPE_LIMIT_TOL_RAD] = CEILING
    out[th <= limit + SLOPE_LIMIT_TOL_RAD] = WALKABLE
    out[degenerate] = WALL
    return out


def classify_triangles(mesh, max_slope_deg, up=(0.0, 0.0, 1.0),
                       wall_tolerance_deg=WALL_TOLERANCE_DEG) -> np.ndarray:
    """Classify every triangle of ``mesh`` (a TriangleMesh): (M,) int8 of WALKABLE..CEILING.

    max_slope_deg : degrees in [0, 180]; a face at the limit is WALKABLE within
        SLOPE_LIMIT_TOL_RAD (1e-4 rad: float32 vertices within 100 m, float64 within 10 km),
        one 0.05 deg steeper is not.
    up : (3,) non-zero, any length. wall_tolerance_deg : degrees in [0, 90].
    """
    limit = np.radians(_angle_arg(max_slope_deg, "max_slope_deg", 0.0, 180.0))
    wall = np.radians(_angle_arg(wall_tolerance_deg, "wall_tolerance_deg", 0.0, 90.0))
    up = _unit_up(up)
    normals = mesh.normals
    nz = normals @ up
    half = np.pi / 2
    # theta <= A  <=>  cos(theta) >= cos(A), for A in [0, pi]
    walk_a = min(limit + SLOPE_LIMIT_TOL_RAD, np.pi)
    wall_lo = max(half - wall - SLOPE_LIMIT_TOL_RAD, 0.0)
    wall_hi = min(half + wall + SLOPE_LIMIT_TOL_RAD, np.pi)
    bounds = np.cos([walk_a, wall_lo, wall_hi])
    out = np.full(nz.shape, STEEP, dtype=np.int8)
    out[(nz <= bounds[1]) & (nz >= bounds[2])] = WALL
    out[nz < bounds[2]] = CEILING
    out[nz >= bounds[0]] = WALKABLE
    degenerate = ~(np.abs(normals).max(axis=1) > 0.0) if len(nz) else np.zeros(0, bool)
    out[degenerate] = WALL
    near = np.abs(nz[:, None] - bounds[None, :]).min(axis=1) <= CLASSIFY_COS_MARGIN
    near &= ~degenerate
    rows = np.flatnonzero(near)
    if rows.size:
        corners = mesh.vertices[mesh.triangles[rows]]
        out[rows] = _classes_from_angles(_slopes(corners, up), limit, wall)
    return out
