"""The step probe: how high is the obstacle a character walks into, and its tread?

One recipe, used by the controller's step-up (to accept or refuse a step), by the
walk-through's event classification (``step_too_high`` and its value) and by the stair audit.

Two rays are cast straight down (along ``-up``) from above the obstacle: the *riser* ray
``STEP_PROBE_OFFSET`` past the contact point on the obstacle (it lands on the obstacle's
top), and the *tread* ray ``max(min_step_depth, STEP_PROBE_OFFSET)`` past it (the floor a
character needs to put its foot on). Both start ``height + step_height`` above the floor and
reach ``height + 2 * step_height`` down. A rise is the height of the surface hit above the
floor: ``-inf`` when the ray finds nothing (a drop or the void beyond), ``+inf`` when the ray
starts inside a solid (it first meets a face from behind: a wall taller than the reach).

One tolerance decides "too high": a rise counts as climbable up to
``step_height + STEP_RISE_TOL`` (core.constants; float rounding of the ray distance, far
below any modelled riser).

Frame and units: world space, metres; ``settings.up`` is up.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ..constants import STEP_PROBE_OFFSET, STEP_RISE_TOL


class StepRays(NamedTuple):
    """The 2K rays of the step probe of K obstacles: origins (2K, 3) (K riser rays, then K
    tread rays), directions (2K, 3) unit (``-up``), max_distance float metres; points
    (2K, 3) the probed places at height 0 along up (origins = points + lift * up)."""

    origins: np.ndarray
    directions: np.ndarray
    max_distance: float
    points: np.ndarray


class StepProbe(NamedTuple):
    """What the step probe measured for K obstacles (metres above each floor).

    riser : (K,) rise just past the obstacle's contact point (the obstacle's top);
    tread : (K,) rise ``min_step_depth`` past it (the tread a foot would stand on);
    tread_up : (K,) up component of the tread's hit normal (0 where the ray missed);
    riser_triangle, tread_triangle : (K,) int64 triangles hit, -1 for a miss.
    Rises are ``-inf`` where the ray found nothing, ``+inf`` where it started inside a solid.
    """

    riser: np.ndarray
    tread: np.ndarray
    tread_up: np.ndarray
    riser_triangle: np.ndarray
    tread_triangle: np.ndarray


def step_limit(settings) -> float:
    """Metres: the highest rise a character climbs, ``climb_height + STEP_RISE_TOL``
    (``climb_height`` is ``step_height`` for the "exact" model, see core.settings)."""
    return settings.climb_height + STEP_RISE_TOL


def too_high(rise, settings) -> np.ndarray:
    """(K,) bool: rises (K,) metres above ``step_limit(settings)`` (``+inf`` included)."""
    return np.asarray(rise) > step_limit(settings)


def exceeds_step(drop, settings) -> np.ndarray:
    """(K,) bool: drops (K,) metres more than ``step_height + STEP_RISE_TOL`` (a fall, for
    every model: an engine model's higher ``climb_height`` does not change what a fall is)."""
    return np.asarray(drop) > settings.step_height + STEP_RISE_TOL


def step_rays(floor, point, direction, settings) -> StepRays:
    """The rays of ``measure_step`` (for callers batching them with rays of their own).

    floor : (K,) float64 height along up of the floor the character stands on, metres;
    point : (K, 3) contact point on the obstacle; direction : (K, 3) unit horizontal walking
    direction (into the obstacle); settings : ControllerSettings (height, step_height,
    min_step_depth, up).
    """
    s = settings
    u = s.up_vector
    point_h = point - np.outer(point @ u, u)
    top = np.outer(floor + s.height + s.step_height, u)
    riser_x = point_h + direction * STEP_PROBE_OFFSET
    tread_x = point_h + direction * max(s.min_step_depth, STEP_PROBE_OFFSET)
    origins = np.concatenate([riser_x + top, tread_x + top])
    return StepRays(origins, np.tile(-u, (origins.shape[0], 1)), s.height + 2.0 * s.step_height,
                    np.concatenate([riser_x, tread_x]))


def rises(mesh, time, triangle, settings) -> np.ndarray:
    """Rises (R,) metres above the floor of step rays that hit at ``time`` (R,) metres along
    the ray (inf: miss) the mesh ``triangle`` (R,) (-1: miss)."""
    s = settings
    face_up = np.where(triangle >= 0, mesh.normals[np.maximum(triangle, 0)] @ s.up_vector, 1.0)
    rise = np.where(np.isfinite(time), s.height + s.step_height - time, -np.inf)
    return np.where(face_up < 0.0, np.inf, rise)  # the ray began inside a solid: a wall


def probe_from_hits(mesh, hits, settings, k=None) -> StepProbe:
    """The StepProbe of K obstacles from the first hits of ``step_rays`` (a ``SweepBatch``
    whose first 2K rows are those rays; ``k`` defaults to half its rows)."""
    k = hits.time.shape[0] // 2 if k is None else k
    rise = rises(mesh, hits.time[:2 * k], hits.triangle[:2 * k], settings)
    return StepProbe(rise[:k], rise[k:], hits.normal[k:2 * k] @ settings.up_vector,
                     hits.triangle[:k], hits.triangle[k:2 * k])


def measure_step(mesh, floor, point, direction, settings) -> StepProbe:
    """Measure the riser and tread of K obstacles a character walks into (one ray query).

    mesh : TriangleMesh (anything with ``raycast_many`` and ``normals``);
    floor : (K,) float64 height along ``settings.up`` of the floor the character stands on,
    metres (e.g. ``floor_point @ up``); point : (K, 3) float64 a point on the obstacle
    (the contact point; for a riser face, a point on its face); direction : (K, 3) float64
    unit horizontal direction into the obstacle; settings : ControllerSettings.
    Returns a StepProbe. The step is climbable when ``not too_high(riser)`` and the tread is
    missing (-inf) or ``not too_high(tread)`` and walkable (``tread_up >= cos_max_slope``);
    see ``climbable``.
    """
    floor = np.asarray(floor, float)
    point = np.asarray(point, float).reshape(-1, 3)
    direction = np.asarray(direction, float).reshape(-1, 3)
    rays = step_rays(floor, point, direction, settings)
    hits = mesh.raycast_many(*rays[:3])
    return probe_from_hits(mesh, hits, settings)


def climbable(probe: StepProbe, settings) -> np.ndarray:
    """(K,) bool: the riser is low enough and the tread (if any) is low enough and walkable."""
    tread_ok = (probe.tread == -np.inf) | (
        ~too_high(probe.tread, settings) & (probe.tread_up >= settings.cos_max_slope))
    return ~too_high(probe.riser, settings) & tread_ok

