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

from ..constants import SUPPORT_MIN_COS
from ..walkability import WALKABLE
from .common import (
    EMPTY_I,
    N_CANDIDATES,
    as_faces,
    column_rays,
    column_reach,
    contacts_chunks,
    face_candidates,
    face_classes,
    perch_centres,
    polygon_partners,
    settings_or_default,
    up_normals,
    weld_vertices,
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


def _blocked(mesh, s, faces, pts, classes, perch=True):
    """Per capsule (F*(C+P),): (blocked bool, deepest blocking depth, its triangle), for the
    C candidates ``pts`` (F*C, 3) resting on the faces, then (``perch``) P perched on each
    face's edges.

    A contact blocks unless it is floor: a walkable triangle touching the capsule from below
    (contact normal . up > SUPPORT_MIN_COS, the controller's support test)."""
    u = s.up_vector
    n = np.repeat(up_normals(mesh, faces, u), pts.shape[0] // max(faces.size, 1), axis=0)
    a = pts + n * (s.radius + s.skin_width)  # lower sphere centre, resting skin_width off
    if perch:
        a = np.concatenate([a, perch_centres(mesh, faces, s).reshape(-1, 3)])
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


def _around(mesh, faces, few):
    """The ``faces`` sharing a vertex position with one of ``few`` (``few`` included)."""
    _, weld = weld_vertices(mesh.vertices)
    mark = np.zeros(int(weld.max()) + 1, bool)
    mark[weld[mesh.triangles[few]].ravel()] = True
    return faces[mark[weld[mesh.triangles[faces]]].any(1)]


def stand_test(mesh, settings=None, faces=None) -> StandResult:
    """Faces (walkable faces, or ``faces``) on which no candidate position is free.

    At each candidate foot point the character's capsule rests on the face (its lower cap
    ``skin_width`` off the face along the face normal, as the controller leaves it). The
    position is blocked when a triangle other than floor penetrates the capsule: any
    non-walkable triangle, or a walkable one touching it from the side or above (a low slab,
    a thin plate overhead). A face is reported when it has candidates outside solids and all
    of them are blocked.
    """
    s = settings_or_default(settings)
    classes = face_classes(mesh, s)
    tested = _tested_faces(mesh, s, faces, classes)
    rest = tested[~open_faces(mesh, tested, s, classes)]
    # first pass: the centroid alone; a face whose centroid is free is settled
    if rest.size:
        centre = face_candidates(mesh, rest)[:, 0]
        blocked, _d, _b = _blocked(mesh, s, rest, centre, classes, perch=False)
        rest = rest[blocked]
    if not rest.size:
        return StandResult(EMPTY_I, np.empty(0), EMPTY_I, np.empty((0, 3)), tested, EMPTY_I)
    pts, _clear, _tri, inside = _columns(mesh, s, rest)
    blocked, depth, blocker = _blocked(mesh, s, rest, pts, classes)
    f, c = rest.size, N_CANDIDATES
    inside = inside.reshape(f, c)
    # a perch counts as outside when the inset point of its edge or vertex is
    inside = np.concatenate([inside, inside[:, 4:7], inside[:, 1:4]], axis=1)
    blocked = np.concatenate([blocked[:f * c].reshape(f, c), blocked[f * c:].reshape(f, -1)], 1)
    depth = np.concatenate([depth[:f * c].reshape(f, c), depth[f * c:].reshape(f, -1)], 1)
    blocker = np.concatenate([blocker[:f * c].reshape(f, c), blocker[f * c:].reshape(f, -1)], 1)
    buried = inside.all(1)
    bad = ~buried & ~(~inside & ~blocked).any(1)
    # a face of one polygon (a quad's or n-gon's triangles) with a free partner is stood on
    # with the partner: the back half of a stair tread next to its nosing
    a, b = polygon_partners(mesh, _around(mesh, tested, rest[bad]))
    fine = np.isin(b, rest[bad], invert=True) & np.isin(b, rest[buried], invert=True)
    bad[bad] = ~np.isin(rest[bad], a[fine])
    # best try: the outside resting candidate with the shallowest blocking penetration
    d = np.where(inside, np.inf, depth)[:, :c]
    best = np.argmin(d, axis=1)
    rows = np.arange(f)
    return StandResult(rest[bad], d[rows, best][bad], blocker[rows, best][bad],
                       pts.reshape(f, c, 3)[rows, best][bad], tested, rest[buried])


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
    # first pass: a ray of ``height`` up from the centroid; a miss settles the face
    if rest.size:
        centre = face_candidates(mesh, rest)[:, 0]
        _c, tri, _inside = column_rays(mesh, centre, s.up_vector, s.height)
        rest = rest[tri >= 0]
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
