"""Stair audit: the risers of stair flights, each with its rise and the tread behind it.

A *riser candidate* is a WALL triangle (``classify_triangles``) with walkable floor in front
of it (the side its normal faces, found by a ray down just in front of its top) and a finite
rise above that floor measured by the step probe (``measure_step``: the controller's riser
ray lands on the tread just behind the face). A candidate *links* to the next riser of a
flight when a horizontal ray just above its tread, walking away from it, meets another
candidate within STAIR_MAX_TREAD that faces the same way (normals within STAIR_ALIGN_COS)
and whose front floor is this tread (within STAIR_TREAD_TOL). A *flight* is a chain of
linked risers: treads and risers alternating in one walking direction. Only risers in a
flight are rows of the result, so the side faces of a staircase (their "tread" runs across
the stairs and ends in a drop), the walls of platforms and the back walls of ramps (nothing
rises behind them) are not risers; walls and ledges have their own audits.

Frame and units: world space, metres; ``settings.up`` is up.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from ...constants import STAIR_CORNER_TOL, STEP_PROBE_OFFSET
from ...controller.steps import measure_step, too_high
from ..walkability import WALKABLE, WALL
from .common import (
    EMPTY_I,
    PROBE_LIFT,
    canonical_mesh,
    column_rays,
    column_reach,
    components,
    face_classes,
    raycast_chunks,
    settings_or_default,
)

STAIR_MAX_TREAD = 2.0  # metres: the next riser of a flight is at most this far behind
STAIR_ALIGN_COS = math.cos(math.radians(30.0))  # risers of one flight face the same way
STAIR_TREAD_TOL = 0.02  # metres: the next riser stands on this tread (rounding, bevels)
STAIR_MIN_RISE = 0.02  # metres: lower rises are bumps, not steps


class StairResult(NamedTuple):
    """One row per riser triangle in a stair flight.

    riser : (K,) int64 triangle; rise : (K,) float64 metres above the tread in front (the
    step probe's riser ray); tread_depth : (K,) float64 metres from this riser to the next
    riser of the flight (inf for the top riser); too_high : (K,) bool rise above the step
    limit (``step_height``); too_shallow : (K,) bool tread_depth < ``min_step_depth``;
    position : (K, 3) float64 the point on the riser's top edge measured; flight : (K,)
    int64 flight id (rows with the same id form one flight); step : (K,) int64 riser id
    (the triangles of one riser share it).
    Findings are the rows with ``too_high | too_shallow`` (``StairResult.findings``).
    """

    riser: np.ndarray
    rise: np.ndarray
    tread_depth: np.ndarray
    too_high: np.ndarray
    too_shallow: np.ndarray
    position: np.ndarray
    flight: np.ndarray
    step: np.ndarray

    @property
    def findings(self) -> np.ndarray:
        """(F,) int64 row indices of risers too high or treads too shallow."""
        return np.flatnonzero(self.too_high | self.too_shallow)


def _empty():
    return StairResult(EMPTY_I, np.empty(0), np.empty(0), np.empty(0, bool), np.empty(0, bool),
                       np.empty((0, 3)), EMPTY_I, EMPTY_I)


def _candidates(mesh, s, classes):
    """Wall triangles with a horizontal normal: (tri (K,), nh (K, 3) unit, top point (K, 3))."""
    u = s.up_vector
    cand = np.flatnonzero(classes == WALL)
    n = mesh.normals[cand]
    nh = n - np.outer(n @ u, u)
    nl = np.sqrt(np.einsum("ij,ij->i", nh, nh))
    keep = nl > 0.5  # WALL faces are within WALL_TOLERANCE_DEG of vertical
    cand, nh = cand[keep], nh[keep] / nl[keep, None]
    v = mesh.vertices[mesh.triangles[cand]]
    c = v.mean(1)
    top = np.outer((v @ u).max(1), u) + c - np.outer(c @ u, u)
    return cand, nh, top


def _risers(mesh, s, classes, cand, nh, top):
    """Front floor height and rise of each candidate; rows with a measurable step."""
    u = s.up_vector
    k = cand.size
    front = top + nh * STEP_PROBE_OFFSET
    t, tri = raycast_chunks(mesh, front + u * PROBE_LIFT, np.tile(-u, (k, 1)),
                            s.height + PROBE_LIFT)
    _c, _t, inside = column_rays(mesh, front, u, column_reach(mesh, front, u))
    # the part of a face buried in the block in front of it (overlapping boxes) is no riser
    ok = ~inside & (tri >= 0) & (classes[np.maximum(tri, 0)] == WALKABLE)
    floor = np.where(ok, top @ u + PROBE_LIFT - np.where(ok, t, 0.0), np.nan)
    probe = measure_step(mesh, np.where(ok, floor, 0.0), top, -nh, s)
    rise = probe.riser
    lands = (probe.riser_triangle >= 0) & (classes[np.maximum(probe.riser_triangle, 0)]
                                           == WALKABLE)
    ok &= lands & np.isfinite(rise) & (rise > STAIR_MIN_RISE)
    # the triangle reaches the tread it rises to (not a lower, buried row of a tall face)
    ok &= np.abs(top @ u - np.where(ok, floor + rise, 0.0)) <= STAIR_TREAD_TOL
    return ok, floor, np.where(ok, rise, np.nan)


def _riser_ids(mesh, cand, nh, top, floor, tread_h) -> np.ndarray:
    """(K,) int64 riser id of each candidate row: the triangles of one riser (same plane,
    same floor and tread, and touching one another: sharing a corner, welded or not) share
    their links. Without the touching, risers of two staircases side by side (the same
    plane, the same heights, metres apart) were one riser, and one staircase's shallow
    treads were reported on the other."""
    key = np.column_stack([np.round(nh, 2), np.round((top * nh).sum(1) / STAIR_TREAD_TOL),
                           np.round(floor / STAIR_TREAD_TOL), np.round(tread_h / STAIR_TREAD_TOL)])
    _, kid = np.unique(key, axis=0, return_inverse=True)
    kid = kid.ravel()
    k = cand.size
    corners = mesh.vertices[mesh.triangles[cand]].reshape(-1, 3)  # (3K, 3)
    _, corner_id = np.unique(np.round(corners / STAIR_CORNER_TOL), axis=0, return_inverse=True)
    row = np.repeat(np.arange(k), 3)
    # rows sharing a corner and a key: consecutive in the (corner, key) order
    order = np.lexsort((kid[row], corner_id.ravel()))
    same = (corner_id.ravel()[order][1:] == corner_id.ravel()[order][:-1]) & (
        kid[row[order]][1:] == kid[row[order]][:-1])
    label = components(k, row[order][:-1][same], row[order][1:][same])
    _, ids = np.unique(label, return_inverse=True)
    return ids.ravel().astype(np.int64)


def stair_audit(mesh, settings=None) -> StairResult:
    """Risers of stair flights with rise and tread depth; see the module docstring. The
    rows do not depend on the order of the faces or vertices (``canonical_mesh``); ``riser``
    indexes ``mesh``'s triangles."""
    canon = canonical_mesh(mesh)
    result = _flights(canon.mesh, settings_or_default(settings))
    return StairResult(canon.face[result.riser], *result[1:])


def _flights(mesh, s) -> StairResult:
    """``stair_audit`` on ``mesh`` as given (its face order breaks ties)."""
    u = s.up_vector
    classes = face_classes(mesh, s)
    cand, nh, top = _candidates(mesh, s, classes)
    if not cand.size:
        return _empty()
    ok, floor, rise = _risers(mesh, s, classes, cand, nh, top)
    cand, nh, top, floor, rise = cand[ok], nh[ok], top[ok], floor[ok], rise[ok]
    k = cand.size
    if not k:
        return _empty()
    tread_h = floor + rise
    start = top - np.outer(top @ u, u) - nh * STEP_PROBE_OFFSET + np.outer(tread_h + PROBE_LIFT,
                                                                          u)
    t, tri = raycast_chunks(mesh, start, -nh, STAIR_MAX_TREAD)
    row_of = np.full(mesh.n_triangles, -1, np.int64)
    row_of[cand] = np.arange(k)
    nxt = np.where(tri >= 0, row_of[np.maximum(tri, 0)], -1)
    j = np.maximum(nxt, 0)
    link = (nxt >= 0) & ((nh * nh[j]).sum(1) >= STAIR_ALIGN_COS) & (
        np.abs(floor[j] - tread_h) <= STAIR_TREAD_TOL)
    step = _riser_ids(mesh, cand, nh, top, floor, tread_h)
    n_steps = int(step.max()) + 1
    fwd = np.zeros(n_steps, bool)
    fwd[step[link]] = True
    back = np.zeros(n_steps, bool)
    back[step[nxt[link]]] = True
    gap = np.full(n_steps, np.inf)
    np.minimum.at(gap, step[link], t[link] + STEP_PROBE_OFFSET)
    member = (fwd | back)[step]
    flight = components(n_steps, step[link], step[nxt[link]])[step]
    depth = gap[step]
    m = np.flatnonzero(member)
    _, fid = np.unique(flight[m], return_inverse=True)
    _, sid = np.unique(step[m], return_inverse=True)
    pos = top[m] - np.outer(top[m] @ u, u) + np.outer(tread_h[m], u)
    return StairResult(cand[m], rise[m], depth[m], too_high(rise[m], s),
                       depth[m] < s.min_step_depth, pos, fid.astype(np.int64).ravel(),
                       sid.astype(np.int64).ravel())
