"""Stand test and headroom audit: can the character stand on each walkable face, and does it
have its height of free space above it?

Both judge a face over the positions it supports, not at one point: the candidate foot
points of ``face_candidates`` (centroid, inset vertices, inset edge midpoints). A candidate
inside a closed solid (``column_rays``: the first face above it is seen from behind) is not
a place a character can be and is skipped; a face whose candidates all are is *buried*
(reported apart, not a finding). Faces the open-ground screen certifies (``open_faces``) need
no mesh query.

Frame and units: world space, metres; ``settings.up`` is up.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ...constants import SUPPORT_MIN_COS
from ..walkability import WALKABLE
from .common import (
    EMPTY_I,
    N_CANDIDATES,
    PROBE_LIFT,
    as_faces,
    column_rays,
    column_reach,
    contacts_chunks,
    face_candidates,
    face_classes,
    faces_touching,
    foot_ring,
    polygon_partners,
    raycast_chunks,
    settings_or_default,
    up_normals,
)
from .screen import open_faces


class StandResult(NamedTuple):
    """Walkable faces on which the character cannot stand anywhere.

    faces : (K,) int64 faces where every candidate foot point not inside a solid is blocked;
    depth : (K,) float64 metres, the shallowest blocking penetration over those candidates
        (how far the best try is from fitting);
    blocker : (K,) int64 the triangle blocking that best try deepest;
    position : (K, 3) float64 foot point of that best try, on the face;
    tested : (M,) int64 every face tested (walkable faces, or the ``faces`` argument);
    buried : (B,) int64 tested faces whose every candidate lies inside a closed solid
        (hidden faces, not findings).
    """

    faces: np.ndarray
    depth: np.ndarray
    blocker: np.ndarray
    position: np.ndarray
    tested: np.ndarray
    buried: np.ndarray


class HeadroomResult(NamedTuple):
    """Walkable faces with less than the character's height of free space above them.

    faces : (K,) int64 faces where no candidate foot point (outside solids) has ``height``
        metres free straight above it;
    clearance : (K,) float64 metres, the largest clearance over the face's candidates;
    position : (K, 3) float64 that candidate foot point; ceiling : (K,) int64 the triangle
        above it.
    """

    faces: np.ndarray
    clearance: np.ndarray
    position: np.ndarray
    ceiling: np.ndarray


def _tested_faces(mesh, s, faces, classes):
    if faces is None:
        return np.flatnonzero(classes == WALKABLE)
    return as_faces(mesh, faces)


def _columns(mesh, s, faces):
    """Candidate points (F*C, 3) of ``faces`` and their up rays (clearance, triangle, inside)."""
    u = s.up_vector
    pts = face_candidates(mesh, faces).reshape(-1, 3)
    clearance, tri, inside = column_rays(mesh, pts, u, column_reach(mesh, pts, u))
    return pts, clearance, tri, inside


def _blocked(mesh, s, a, classes):
    """Per capsule (K,) with lower-sphere centres ``a`` (K, 3): (blocked bool, deepest
    blocking depth, its triangle).

    A contact blocks unless it is floor: a walkable triangle touching the capsule from below
    (contact normal . up > SUPPORT_MIN_COS, the controller's support test)."""
    u = s.up_vector
    b = a + u * (s.height - 2.0 * s.radius)
    q, tri, depth, normal = contacts_chunks(mesh, a, b, s.radius)
    blocks = (classes[tri] != WALKABLE) | (normal @ u <= SUPPORT_MIN_COS)
    q, tri, depth = q[blocks], tri[blocks], depth[blocks]
    worst = np.zeros(a.shape[0])
    blocker = np.full(a.shape[0], -1, np.int64)
    # contacts come sorted by query, deepest first: the first row of a query is its worst
    first = np.r_[True, q[1:] != q[:-1]] if q.size else np.zeros(0, bool)
    worst[q[first]] = depth[first]
    blocker[q[first]] = tri[first]
    return blocker >= 0, worst, blocker


def _resting(mesh, s, faces, pts):
    """Lower-sphere centres (F, C, 3) of the capsule resting on ``faces`` at foot points
    ``pts`` (F, C, 3): ``skin_width`` off the face along its normal."""
    n = up_normals(mesh, faces, s.up_vector)
    return pts + n[:, None, :] * (s.radius + s.skin_width)


RING_BATCH = 24  # foot ring candidates per batched query (fewer calls; most faces stop early)


def _on_floor_below(mesh, s, centres, feet, classes):
    """Ring centres (K, 3) raised to rest on the walkable floor under their axis foot points
    ``feet`` (K, 3) when that floor continues within ``radius + skin_width`` below the foot:
    the capsule then stands on it, not perched low on the face's edge."""
    u = s.up_vector
    k = feet.shape[0]
    reach = s.radius + s.skin_width
    t, tri = raycast_chunks(mesh, feet + u * PROBE_LIFT, np.tile(-u, (k, 1)), reach)
    hit = (tri >= 0) & (classes[np.maximum(tri, 0)] == WALKABLE)
    nz = np.abs(mesh.normals[np.maximum(tri, 0)] @ u)
    floor = feet @ u + PROBE_LIFT - np.where(hit, t, 0.0)
    rest = np.where(hit, floor + reach / np.where(hit, nz, 1.0), -np.inf)
    return centres + np.outer(np.maximum(rest - centres @ u, 0.0), u)


def _centroid_pass(mesh, s, faces, classes):
    """First pass, the centroid alone: a face whose resting centroid capsule is free (and not
    inside a solid) is settled. Returns the faces left (K,) with that try's blocking depth
    and blocker (K,)."""
    if not faces.size:
        return faces, np.empty(0), EMPTY_I
    foot = face_candidates(mesh, faces)[:, :1]
    _c, _t, inside0 = column_rays(mesh, foot[:, 0], s.up_vector,
                                  column_reach(mesh, foot[:, 0], s.up_vector))
    blocked, d0, b0 = _blocked(mesh, s, _resting(mesh, s, faces, foot)[:, 0], classes)
    keep = blocked | inside0
    return faces[keep], d0[keep], b0[keep]


def _ring_free(mesh, s, faces, classes) -> np.ndarray:
    """(K,) bool: some foot-ring position of each face (its capsule's foot over the face,
    the axis beyond its edge, ``foot_ring``) is outside solids and free; tried in a few
    batched queries of RING_BATCH ring positions, only for faces still without one."""
    ring, feet = foot_ring(mesh, faces, s)
    n_ring = ring.shape[1]
    ok = np.zeros(faces.size, bool)
    u = s.up_vector
    for j in range(0, n_ring, RING_BATCH):
        rows, cols = np.nonzero(np.broadcast_to(~ok[:, None], (faces.size, min(
            RING_BATCH, n_ring - j))))
        cols += j
        foot = feet[rows, cols]
        _c, _t, inside_ring = column_rays(mesh, foot, u, column_reach(mesh, foot, u))
        rows, cols, foot = rows[~inside_ring], cols[~inside_ring], foot[~inside_ring]
        centre = _on_floor_below(mesh, s, ring[rows, cols], foot, classes)
        ok[rows[~_blocked(mesh, s, centre, classes)[0]]] = True
    return ok


def stand_test(mesh, settings=None, faces=None) -> StandResult:
    """Faces (walkable faces, or ``faces``) on which no candidate position is free.

    At each candidate foot point the character's capsule rests on the face (its lower cap
    ``skin_width`` off the face along the face normal, as the controller leaves it); the
    capsule may also stand on the face's edges (``foot_ring``). A position is blocked
    when a triangle other than floor penetrates the capsule: any non-walkable triangle, or a
    walkable one touching it from the side or above (a low slab, a thin plate overhead). A
    face is reported when it has candidates outside solids and all of them are blocked.

    Work: the open-ground screen settles most faces; the rest are tried one candidate at a
    time (a batched query per candidate over the faces not yet settled), centroid first.
    """
    s = settings_or_default(settings)
    classes = face_classes(mesh, s)
    tested = _tested_faces(mesh, s, faces, classes)
    rest = tested[~open_faces(mesh, tested, s, classes)]
    rest, d0, b0 = _centroid_pass(mesh, s, rest, classes)
    if not rest.size:
        return StandResult(EMPTY_I, np.empty(0), EMPTY_I, np.empty((0, 3)), tested, EMPTY_I)
    f, c = rest.size, N_CANDIDATES
    pts, _clear, _tri, inside = _columns(mesh, s, rest)
    pts, inside = pts.reshape(f, c, 3), inside.reshape(f, c)
    centres = _resting(mesh, s, rest, pts)
    buried = inside.all(1)
    free = np.zeros(f, bool)
    depth = np.full(inside.shape, np.inf)
    blocker = np.full(inside.shape, -1, np.int64)
    depth[:, 0], blocker[:, 0] = d0, b0
    # the other resting candidates: one batched query for all (face, candidate) pairs
    rows, cols = np.nonzero(~inside[:, 1:])
    cols += 1
    blk, depth[rows, cols], blocker[rows, cols] = _blocked(mesh, s, centres[rows, cols], classes)
    free[rows[~blk]] = True
    # last resort: the foot ring (the capsule's foot over the face, its axis beyond it),
    # first for the faces still without a free position
    left = np.flatnonzero(~free & ~buried)
    if left.size:
        free[left[_ring_free(mesh, s, rest[left], classes)]] = True
    bad = ~buried & ~free
    # a face of one polygon (a quad's or n-gon's triangles) with a free partner is stood on
    # with the partner: the back half of a stair tread next to its nosing
    a, b = polygon_partners(mesh, faces_touching(mesh, tested, rest[bad]))
    fine = np.isin(b, rest[bad], invert=True) & np.isin(b, rest[buried], invert=True)
    bad[bad] = ~np.isin(rest[bad], a[fine])
    # best try: the outside resting candidate with the shallowest blocking penetration
    d = np.where(inside, np.inf, depth)[:, :c]
    best = np.argmin(d, axis=1)
    rows = np.arange(f)
    return StandResult(rest[bad], d[rows, best][bad], blocker[rows, best][bad],
                       pts[rows, best][bad], tested, rest[buried])


def headroom_audit(mesh, settings=None) -> HeadroomResult:
    """Walkable faces where no candidate foot point has ``height`` metres free above it.

    Clearance is measured straight up (along ``up``) from each candidate point; the face's
    headroom is the best over its candidates outside solids, so a floor partly under a
    landing is not reported while part of it has full height.
    """
    s = settings_or_default(settings)
    classes = face_classes(mesh, s)
    tested = np.flatnonzero(classes == WALKABLE)
    rest = tested[~open_faces(mesh, tested, s, classes)]
    # first pass: the ray up from the centroid; full height free outside solids settles it
    if rest.size:
        centre = face_candidates(mesh, rest)[:, 0]
        clear, _t, inside = column_rays(mesh, centre, s.up_vector,
                                        column_reach(mesh, centre, s.up_vector))
        rest = rest[(clear < s.height) | inside]
    if not rest.size:
        return HeadroomResult(EMPTY_I, np.empty(0), np.empty((0, 3)), EMPTY_I)
    pts, clearance, tri, inside = _columns(mesh, s, rest)
    shape = (rest.size, N_CANDIDATES)
    c = np.where(inside, -np.inf, clearance).reshape(shape)
    best = np.argmax(c, axis=1)
    rows = np.arange(rest.size)
    top = c[rows, best]
    bad = np.isfinite(top) & (top < s.height)
    flat = (rows * N_CANDIDATES + best)[bad]
    return HeadroomResult(rest[bad], top[bad], pts[flat], tri[flat])
