"""The step probe the stair audit measures risers with (stand-in for the controller's).

TO SWITCH: the controller's own probe (``core.steps.measure_step`` / ``too_high``, same
signatures and results) replaces this module; the stair audit imports these two names only.

Two rays are cast straight down (along ``-up``) from ``height + step_height`` above the
floor: the *riser* ray STEP_PROBE_OFFSET past the point on the obstacle, the *tread* ray
``max(min_step_depth, STEP_PROBE_OFFSET)`` past it; both reach ``height + 2 * step_height``
down. A rise is the height of the surface hit above the floor: ``-inf`` when the ray finds
nothing, ``+inf`` when it starts inside a solid (it first meets a face from behind).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ..constants import STEP_PROBE_OFFSET, STEP_RISE_TOL
from .common import raycast_chunks


class StepProbe(NamedTuple):
    """riser, tread : (K,) rises, metres above each floor; tread_up : (K,) up component of
    the tread hit's normal (0 for a miss); riser_triangle, tread_triangle : (K,) int64."""

    riser: np.ndarray
    tread: np.ndarray
    tread_up: np.ndarray
    riser_triangle: np.ndarray
    tread_triangle: np.ndarray


def too_high(rise, settings) -> np.ndarray:
    """(K,) bool: rises above ``step_height + STEP_RISE_TOL`` (``+inf`` included)."""
    return np.asarray(rise) > settings.step_height + STEP_RISE_TOL


def measure_step(mesh, floor, point, direction, settings) -> StepProbe:
    """Riser and tread of K obstacles: floor (K,) height along up of the floor in front,
    point (K, 3) a point on the obstacle, direction (K, 3) unit horizontal into it."""
    s = settings
    u = s.up_vector
    floor = np.asarray(floor, float)
    point = np.asarray(point, float).reshape(-1, 3)
    direction = np.asarray(direction, float).reshape(-1, 3)
    k = floor.size
    ph = point - np.outer(point @ u, u)
    top = np.outer(floor + s.height + s.step_height, u)
    origins = np.concatenate([ph + direction * STEP_PROBE_OFFSET + top,
                              ph + direction * max(s.min_step_depth, STEP_PROBE_OFFSET) + top])
    t, tri = raycast_chunks(mesh, origins, np.tile(-u, (2 * k, 1)),
                            s.height + 2.0 * s.step_height)
    face_up = np.where(tri >= 0, mesh.normals[np.maximum(tri, 0)] @ u, 1.0)
    rise = np.where(np.isfinite(t), s.height + s.step_height - np.where(np.isfinite(t), t, 0.0),
                    -np.inf)
    rise = np.where(face_up < 0.0, np.inf, rise)
    return StepProbe(rise[:k], rise[k:], np.where(tri[k:] >= 0, face_up[k:], 0.0), tri[:k],
                     tri[k:])
