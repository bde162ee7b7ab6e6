"""Plane solvers of the capsule mover (Box2D v3 ``mover.c``: ``b2SolvePlanes``,
``b2ClipVector``), batched over K characters.

- ``solve_planes``: penetration recovery. Each character has up to M contact planes
  (unit normal obstacle -> capsule, penetration depth); find the smallest push ``x`` with
  ``n_j . x >= depth_j`` for every plane by Gauss-Seidel relaxation (Box2D: a few passes
  over the planes, each pass pushing out of the still-violated ones).
- ``clip_slide``: collide-and-slide. Clip the rest of a displacement against the plane just
  hit and every plane met earlier in the move (creases between two planes slide along their
  crossing line, Quake ``PM_SlideMove``); a steep upward slope is a vertical wall for the
  climbing part of the motion (Jolt ``CancelVelocityTowardsSteepSlopes``).

Frame and units: world space, metres; arrays are float64.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ..constants import (
    CLIMB_TOL,
    CORNER_VIOLATION,
    CREASE_MIN_SIN,
    CREASE_VIOLATION,
    DEPENETRATION_PASSES,
)


def dot_rows(a, b):
    """(K,) row-wise dot products of a, b (K, 3)."""
    return np.einsum("ij,ij->i", a, b)


def unit_rows(v):
    """(unit rows of v (K, 3), their lengths (K,)); zero rows stay zero."""
    n = np.sqrt(dot_rows(v, v))
    safe = np.where(n > 0.0, n, 1.0)
    return v / safe[:, None], n


class PlaneSolution(NamedTuple):
    """Result of ``solve_planes``: push (K, 3) metres, the translation that resolves the
    planes; length (K,) metres, |push|; passes int, relaxation passes run."""

    push: np.ndarray
    length: np.ndarray
    passes: int


def solve_planes(normal, depth, passes: int = DEPENETRATION_PASSES) -> PlaneSolution:
    """Smallest push out of M planes per character, by Gauss-Seidel (Box2D ``b2SolvePlanes``).

    normal : (K, M, 3) unit plane normals (obstacle -> capsule; zero rows are unused slots);
    depth : (K, M) metres each plane must be pushed past (0 for unused slots).
    Each pass visits the planes in order and pushes along each still-violated one by its
    remaining violation ``depth_j - n_j . x``.
    """
    x = np.zeros((normal.shape[0], 3))
    for _ in range(passes):
        for j in range(normal.shape[1]):
            viol = depth[:, j] - dot_rows(normal[:, j], x)
            x += normal[:, j] * np.maximum(viol, 0.0)[:, None]
    return PlaneSolution(x, np.sqrt(dot_rows(x, x)), passes)


class SlideClip(NamedTuple):
    """Result of ``clip_slide``: remaining (K, 3) metres, the displacement left after the
    clips (zero rows: nothing left to move); plane (K, 3) the plane to remember for later
    clips (the hit's normal, or the vertical wall standing in for a steep slope)."""

    remaining: np.ndarray
    plane: np.ndarray


def clip_slide(remaining, normal, horizontal, earlier, up, cos_slope) -> SlideClip:
    """Clip the displacement ``remaining`` (K, 3) against the plane just hit and earlier ones.

    normal : (K, 3) unit hit normals; horizontal : (K, 3) their unit horizontal parts (the
    wall a steep slope stands for); earlier : (K, J, 3) planes met earlier in the move;
    up : (3,) unit; cos_slope : cosine of the slope limit.
    """
    vn = dot_rows(remaining, normal)
    out = remaining - normal * np.minimum(vn, 0.0)[:, None]
    nu = normal @ up
    steep = (nu < cos_slope) & (nu > 0.0)
    climb = steep & (out @ up > np.maximum(remaining @ up, 0.0) + CLIMB_TOL)
    plane = normal.copy()
    if climb.any():
        # horizontal part: the slope is a vertical wall (w); vertical part: slides down the
        # real plane. Neither climbs: r . n >= 0 and r . up <= max(remaining . up, 0)
        c = np.flatnonzero(climb)
        w = horizontal[c]
        nc = normal[c]
        rc = remaining[c]
        vert = np.outer(rc @ up, up)
        hor = rc - vert
        hor = hor - w * np.minimum(dot_rows(hor, w), 0.0)[:, None]
        vert = vert - nc * np.minimum(dot_rows(vert, nc), 0.0)[:, None]
        out[c] = hor + vert
        plane[c] = w
    for j in range(earlier.shape[1]):  # creases with earlier planes
        pj = earlier[:, j]
        viol = dot_rows(out, pj) < -CREASE_VIOLATION
        if viol.any():
            v = np.flatnonzero(viol)
            cr, crl = unit_rows(np.cross(plane[v], pj[v]))
            proj = cr * dot_rows(out[v], cr)[:, None]
            flat = out[v] - pj[v] * dot_rows(out[v], pj[v])[:, None]
            out[v] = np.where((crl > CREASE_MIN_SIN)[:, None], proj, flat)
    for j in range(earlier.shape[1]):  # corners: stop
        bad = dot_rows(out, earlier[:, j]) < -CORNER_VIOLATION
        out[bad] = 0.0
    return SlideClip(out, plane)
