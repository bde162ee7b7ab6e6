"""Closest points between points, segments and triangles (Ericson RTCD 5.1).

Public functions take (3,) points (anything ``np.asarray`` turns into that), validate them and
return (3,) float64 arrays, world space, metres. Segments are closed and may have zero length;
triangles are closed and may be degenerate (zero area), in which case they behave exactly as the
segment or point they collapse to.

The ``*_many`` kernels are the vectorised forms used by the mesh queries: no validation, inputs
broadcastable to (N, 3), outputs (N, 3) points and (N,) squared distances (N = 1 when every
input is a single (3,) point). Returned (N, 3) arrays may be non-contiguous views.

Implementation notes
--------------------
* Internally vectors are stored component-major, shape (3, ...), so a component is a contiguous
  row and a dot product is ``(u * v).sum(0)``; this measured fastest both for a handful of
  triangles (call overhead) and for 1e5 pairs (memory traffic). Every kernel is straight-line
  numpy code: masks, ``np.where`` and one-hot selection, no Python loop over elements.
* Precision: all arithmetic is done relative to a local origin (a triangle vertex or a segment
  end) and the origin is added back at the end, so shapes 10 km from the world origin lose
  nothing, and only scale-free tests are used, so 0.1 mm shapes work like 1 m shapes.
* The triangle normal is ``cross(b - a, c - a)`` re-orthogonalised against ``b - a``. For a
  thin triangle the normal's direction is ill-conditioned, but the orthogonalised normal is
  the normal of a triangle (a, b, c') with ``|c' - c|`` at most the triangle's width, and every
  distance uses that one plane, so distances stay 1-Lipschitz in the vertices. The in-plane
  edge tests of the face region round by ~eps * scale, which on a triangle of width ~eps *
  scale would stretch its face along its line past its corners (closest points 0.2-1.5 m
  wrong before; tests/core/test_slivers.py): a point of the face must also project within the
  longest edge (the span guard, exact in real arithmetic). Slivers (relative width <= 1e-10,
  core.constants.SLIVER_REL2) get a zero normal in ``records.drop_sliver_normal`` and take the
  degenerate path: the union of the three edges, the segment they nearly are.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ..constants import PARALLEL_SIN2
from .records import (
    FLOAT_TINY,
    REC_A,
    REC_E,
    REC_EE,
    REC_FIELDS,
    REC_G,
    REC_MOFF,
    REC_NN,
    as_rows,
    cross3,
    dot3,
    drop_sliver_normal,
    triangle_record,
)
from .validate import as_point

__all__ = [
    "REC_FIELDS",
    "as_rows",
    "segment_segment_kernel",
    "segment_triangle_records",
    "triangle_record",
    "closest_point_segment",
    "closest_points_segment_segment",
    "closest_point_triangle",
    "closest_points_segment_triangle",
    "closest_points_segment_segment_many",
    "closest_point_triangle_many",
    "closest_points_segment_triangle_many",
]

_FLOAT_TINY = FLOAT_TINY
_NEXT_VERTEX = np.array([1, 2, 0])
_EDGE_INDEX = np.arange(3)


# ---------------------------------------------------------------------------------------------
# component-major helpers (vectors are (3, ...) arrays)
# ---------------------------------------------------------------------------------------------


def _long_edge(ee):
    """(3, ...) bool one-hot of each triangle's longest edge (first on ties)."""
    return ee.argmax(0) == _EDGE_INDEX.reshape((3,) + (1,) * (ee.ndim - 1))


def _clamp01(x):
    # fmax/fmin ignore NaN: a 0/0 parameter (zero-length segment) becomes 0.
    return np.fmin(np.fmax(x, 0.0), 1.0)


# ---------------------------------------------------------------------------------------------
# kernels (component-major, relative to a local origin; callers hold np.errstate)
# ---------------------------------------------------------------------------------------------


def segment_segment_kernel(R, D1, D2):
    """Closest points of segments p1 + s*D1 and p2 + t*D2 with R = p1 - p2 (Ericson RTCD 5.1.9).

    R, D1, D2 : (3, ...) broadcastable. Returns s, t (...), W = c1 - c2 (3, ...), dist2 (...).

    The unclamped s comes from cross products, s = ((D1 x D2).(D2 x R)) / |D1 x D2|^2, which
    equals Ericson's (b*f - c*e) / (a*e - b*b) (Lagrange's identity) but loses only eps/sin
    instead of eps/sin^2 for nearly parallel segments. Parallel segments (sin^2 <= PARALLEL_SIN2)
    take s at the midpoint of the overlap of segment 2's projection with [0, 1] (or the nearer
    end), which makes the answer deterministic and symmetric under swapping the segments.
    Then, as in Ericson: t = clamp((b*s + f) / e), s = clamp((b*t - c) / a). Zero-length
    segments give 0/0 = NaN parameters which the NaN-ignoring clamp turns into 0.
    """
    a = dot3(D1, D1)
    e = dot3(D2, D2)
    b = dot3(D1, D2)
    c = dot3(D1, R)
    f = dot3(D2, R)
    N = cross3(D1, D2)
    nn = dot3(N, N)
    s_general = dot3(N, cross3(D2, R)) / nn
    # Parallel: segment 2 spans parameters [u0, u1] along segment 1.
    u0 = -c / a
    u1 = (b - c) / a
    s_parallel = 0.5 * (np.fmax(np.minimum(u0, u1), 0.0) + np.fmin(np.maximum(u0, u1), 1.0))
    s = _clamp01(np.where(nn > PARALLEL_SIN2 * (a * e), s_general, s_parallel))
    t = _clamp01((b * s + f) / e)  # Ericson 5.1.9: t = (b*s + f) / e, clamped
    s = _clamp01((b * t - c) / a)  # Ericson 5.1.9: s = (b*t - c) / a, clamped
    W = R + s * D1 - t * D2
    return s, t, W, dot3(W, W)


def _triangle_setup(B, C):
    """Per-triangle data for a triangle (0, B, C) (vertex a at the local origin).

    B, C : (3, ...) broadcastable. Returns a tuple
    n (3, ...) normal (cross(B, C) orthogonalised against B, unnormalised), nn = |n|^2,
    O (3, 3, ...) edge origins (0, B, C), E (3, 3, ...) edge vectors (B, C - B, -C), ee = |E|^2,
    M (3, 3, ...) in-plane inward edge normals n x E.
    """
    shape = np.broadcast_shapes(B.shape, C.shape)
    n = cross3(B, C)
    n = n - (dot3(n, B) / np.maximum(dot3(B, B), _FLOAT_TINY)) * B
    O = np.zeros((3, 3) + shape[1:])
    O[:, 1] = B
    O[:, 2] = C
    E = O[:, _NEXT_VERTEX] - O
    ee = dot3(E, E)
    n = drop_sliver_normal(n, ee)
    return n, dot3(n, n), O, E, ee, cross3(n[:, None], E)


def _point_triangle(P, tri):
    """Closest point of triangle ``tri`` (from _triangle_setup) to points P (3, K, ...).

    Returns R = P - closest (3, K, ...), dist2 (K, ...), inside (K, ...) (P projects into the
    face of a non-degenerate triangle). Method (Ericson RTCD 5.1.5, regions merged): if the
    projection onto the plane lies in the closed triangle it is the closest point (face
    region); otherwise the closest point lies on an edge (vertex regions are edge ends), so it is
    the best of the three clamped point-segment projections (RTCD 5.1.2). A degenerate triangle
    (n == 0) is the union of its three edges, so the edge answer is exact for it.
    """
    n, nn, O, E, ee, M = tri
    X = P[:, None] - O[:, :, None]  # (3, 3 edges, K, ...)
    Ek = E[:, :, None]
    f = dot3(X, Ek)  # (3, K, ...)
    t = _clamp01(f / ee[:, None])  # RTCD 5.1.2: t = clamp((p - a).ab / ab.ab)
    Rv = X - t * Ek
    d2_edges = dot3(Rv, Rv)  # (3, K, ...)
    one_hot = d2_edges.argmin(0) == _EDGE_INDEX.reshape((3,) + (1,) * (d2_edges.ndim - 1))
    d2 = d2_edges.min(0)
    R = (Rv * one_hot).sum(1)
    # span guard (see segment_triangle_records): inside also needs the projection onto the longest
    # edge within that edge
    f_long = (f * _long_edge(ee)[:, None]).sum(0)
    inside = (dot3(X, M[:, :, None]).min(0) >= 0.0) & (nn > 0.0)
    inside &= (f_long >= 0.0) & (f_long <= ee.max(0)[None])
    height = dot3(P, n[:, None])  # (K, ...), signed distance * |n|
    coef = height / nn
    R = np.where(inside, coef * n[:, None], R)
    d2 = np.where(inside, height * coef, d2)
    return R, d2, inside


class _EndsVsFace(NamedTuple):
    """Phase 1 of segment_triangle_records: the segment's ends against the face."""

    Y: np.ndarray  # (3, 2, N) the ends P, Q
    X: np.ndarray  # (3, 2, 3, N) Y_j - O_i, each end from each edge origin
    fY: np.ndarray  # (2, 3, N) (Y_j - O_i) . E_i
    h: np.ndarray  # (2, N) Y_j . n
    inside: np.ndarray  # (2, N) bool: the end projects into the face
    coef: np.ndarray  # (2, N) face candidates W = coef * n (0 where not inside)
    crossing: np.ndarray  # (N,) bool: the segment crosses the closed face
    tc: np.ndarray  # (N,) plane crossing parameter


def _ends_vs_face(P, Q, D, T, shape) -> _EndsVsFace:
    """Ends against the face (RTCD 5.1.5 face region) and the segment crossing it."""
    nt = T.shape[1]
    G = T[REC_G].reshape(3, 4, nt)
    E = T[REC_E].reshape(3, 3, nt)
    ee = T[REC_EE]
    nn = T[REC_NN]
    Y = np.empty((3, 2) + shape[1:])
    Y[:, 0] = P
    Y[:, 1] = Q
    H = (Y[:, :, None] * G[:, None]).sum(0)  # (2 ends, 4, N): h = Y.n, Y.M_i
    h = H[:, 0]
    g = H[:, 1:] - T[REC_MOFF]  # (2, 3, N) >= 0 inside edge i's half-plane
    X = np.empty((3, 2, 3) + shape[1:])  # Y_j - O_i, (3 comp, 2 ends, 3 edges, N)
    X[:, :, 0] = Y
    np.subtract(Y, E[:, None, 0], out=X[:, :, 1])
    np.add(Y, E[:, None, 2], out=X[:, :, 2])
    fY = dot3(X, E[:, None])  # (2, 3, N)
    # Span guard: a point of the face projects onto the line of the triangle's longest edge
    # within that edge (the other two angles are acute). Redundant in exact arithmetic, it
    # stops the rounding of the edge half-plane tests (~eps * scale) from stretching a thin
    # triangle's face along its line, ~eps * scale / sin(smallest angle) past its corners.
    f_long = (fY * _long_edge(ee)).sum(1)  # (2, N): (Y - O_long) . E_long
    ee_long = ee.max(0)
    ok = nn > 0.0
    gmin = g.min(1)
    inside = (gmin >= 0.0) & ok & (f_long >= 0.0) & (f_long <= ee_long)  # (2, N)
    h0 = h[0]
    h1 = h[1]
    dh = h0 - h1
    tc = h0 / dh  # plane crossing parameter
    gx = g[0] + tc * (g[1] - g[0])
    fx = f_long[0] + tc * (f_long[1] - f_long[0])
    crossing = (h0 * h1 <= 0.0) & (dh != 0.0) & (gx.min(0) >= 0.0) & ok
    crossing &= (fx >= 0.0) & (fx <= ee_long)
    coef = np.where(inside, h / nn, 0.0)  # face candidates: W = coef * n
    return _EndsVsFace(Y, X, fY, h, inside, coef, crossing, tc)


def _segment_vs_edges(D, R, f, E, ee):
    """The segment P + s D against the three edges O_i + t E_i (Ericson RTCD 5.1.9).

    R (3, 3, N) = P - O_i, f (3, N) = R . E_i. Returns s (3, N) and W (3, 3, N) = the closest
    segment point minus the closest edge point, per edge."""
    Dk = D[:, None]
    a = dot3(D, D)
    b = dot3(Dk, E)
    c = dot3(Dk, R)
    Nx = cross3(Dk, E)
    nnx = dot3(Nx, Nx)
    s = (b * f - c * ee) / nnx
    parallel = ~(nnx > PARALLEL_SIN2 * (a * ee))
    if parallel.any():
        u0 = -c / a
        u1 = (b - c) / a
        s_par = 0.5 * (np.fmax(np.minimum(u0, u1), 0.0) + np.fmin(np.maximum(u0, u1), 1.0))
        s = np.where(parallel, s_par, s)
    s = _clamp01(s)
    t = _clamp01((b * s + f) / ee)  # Ericson 5.1.9: t = (b*s + f) / e, clamped
    s = _clamp01((b * t - c) / a)  # Ericson 5.1.9: s = (b*t - c) / a, clamped
    return s, R + s * Dk - t * E


def _first_minimum(ends, n, WY, s, W, rest):
    """Pick the closest of the 11 candidates, first minimum winning: P vs face, P vs edges
    0-2, the same for Q, then the segment vs edges 0-2 (RTCD 5.1.10 order: endpoint-vs-
    triangle before edge pairs). Returns u, W, dist2 (crossing segments not yet applied)."""
    d2c = np.empty((11,) + rest)
    d2Y = d2c[:8].reshape((2, 4) + rest)
    d2Y[:, 0] = np.where(ends.inside, ends.h * ends.coef, np.inf)
    d2Y[:, 1:] = dot3(WY, WY)
    d2c[8:] = dot3(W, W)
    k = d2c.argmin(0)[None]
    d2 = np.take_along_axis(d2c, k, 0)[0]
    uc = np.empty((11,) + rest)
    uc[:4] = 0.0
    uc[4:8] = 1.0
    uc[8:] = s
    u = np.take_along_axis(uc, k, 0)[0]
    Wc = np.empty((3, 11) + rest)
    WcY = Wc[:, :8].reshape((3, 2, 4) + rest)
    WcY[:, :, 0] = ends.coef * n[:, None]
    WcY[:, :, 1:] = WY
    Wc[:, 8:] = W
    return u, np.take_along_axis(Wc, k[None], 1)[:, 0], d2


def segment_triangle_records(P, Q, T):
    """Closest points of segments P-Q and triangles given by records T (``_triangle_record``).

    P, Q : (3, N) or (3, 1), relative to each triangle's vertex a; T : (REC_FIELDS, N) or
    (REC_FIELDS, 1). Returns (u, W, dist2, crossing, h): the closest segment point is
    P + u*D (D = Q - P), the closest triangle point is that minus W; crossing marks a segment
    through the face (dist2 = 0, W = 0, u the crossing parameter); h (2, N) = (P.n, Q.n).

    Method (Ericson RTCD 5.1.10 structure): a segment crossing the closed face has distance 0.
    Otherwise the minimum is attained at an end vs the triangle (the face projection when it
    lies in the face, RTCD 5.1.5 face region; else the nearest edge point, RTCD 5.1.2) or on
    the segment against one of the three edges (RTCD 5.1.9); a segment parallel to the plane
    whose interior projects into the face ties with one of those. A degenerate triangle
    (n == 0) is exactly the union of its edges. Candidates rank P (face, edges), Q (face,
    edges), then segment vs edge ab, bc, ca, first minimum winning, so that when the closest
    pair is not unique (a segment parallel to an edge or the face) an end is reported. The
    end-vs-edge terms reuse the segment-edge dot products. The segment-edge step is
    ``segment_segment_kernel``'s, with the unclamped s = (b*f - c*e) / |D x E|^2.
    """
    nt = T.shape[1]
    E = T[REC_E].reshape(3, 3, nt)
    ee = T[REC_EE]
    n = T[REC_G].reshape(3, 4, nt)[:, 0]
    D = Q - P
    shape = np.broadcast_shapes(P.shape, D.shape, n.shape)
    ends = _ends_vs_face(P, Q, D, T, shape)
    # ends vs edges (RTCD 5.1.2): t = clamp((Y - O).E / E.E)
    WY = ends.X - _clamp01(ends.fY / ee) * E[:, None]
    s, W = _segment_vs_edges(D, ends.X[:, 0], ends.fY[0], E, ee)
    u, Wsel, d2 = _first_minimum(ends, n, WY, s, W, shape[1:])
    crossing = ends.crossing
    u = np.where(crossing, ends.tc, u)
    Wsel = np.where(crossing, 0.0, Wsel)
    d2 = np.where(crossing, 0.0, d2)
    return u, Wsel, d2, crossing, ends.h


# ---------------------------------------------------------------------------------------------
# vectorised public kernels (no validation)
# ---------------------------------------------------------------------------------------------


def closest_points_segment_segment_many(p1, q1, p2, q2):
    """Closest points of segments [p1, q1] and [p2, q2], vectorised (Ericson RTCD 5.1.9).

    p1, q1, p2, q2 : (3,) or (N, 3) float64, broadcast together; metres, any common frame.
    Returns c1 (N, 3) on segment 1, c2 (N, 3) on segment 2, dist2 (N,) = |c1 - c2|^2 (m^2).
    Parallel and collinear-overlapping pairs give the midpoint of the overlap; zero-length
    segments are points. No validation (callers validate).
    """
    P1, Q1, P2, Q2 = as_rows(p1), as_rows(q1), as_rows(p2), as_rows(q2)
    with np.errstate(divide="ignore", invalid="ignore"):
        D1 = Q1 - P1
        D2 = Q2 - P2
        s, t, W, d2 = segment_segment_kernel(P1 - P2, D1, D2)
    c1 = P1 + s * D1
    c2 = P2 + t * D2
    shape = np.broadcast_shapes(c1.shape, c2.shape)
    return (
        np.broadcast_to(c1, shape).T,
        np.broadcast_to(c2, shape).T,
        np.broadcast_to(d2, shape[1:]),
    )


def closest_point_triangle_many(p, a, b, c):
    """Closest points of triangles (a, b, c) to points p, vectorised (Ericson RTCD 5.1.5).

    p, a, b, c : (3,) or (N, 3) float64, broadcast together; metres.
    Returns point (N, 3) on the triangle and dist2 (N,) = |p - point|^2 (m^2). Degenerate
    triangles behave as the segment or point they collapse to. No validation.
    """
    A = as_rows(a)
    with np.errstate(divide="ignore", invalid="ignore"):
        P = as_rows(p) - A
        tri = _triangle_setup(as_rows(b) - A, as_rows(c) - A)
        R, d2, _ = _point_triangle(P[:, None], tri)
    point = (P - R[:, 0]) + A
    return point.T, d2[0]


def closest_points_segment_triangle_many(p, q, a, b, c):
    """Closest points of segments [p, q] and triangles (a, b, c), vectorised.

    p, q, a, b, c : (3,) or (N, 3) float64, broadcast together; metres.
    Returns on_segment (N, 3), on_triangle (N, 3), dist2 (N,) (m^2). A segment that touches or
    crosses a triangle gives dist2 = 0 and on_segment == on_triangle == a common point.
    Degenerate triangles and zero-length segments are handled exactly. No validation.
    """
    A = as_rows(a)
    with np.errstate(divide="ignore", invalid="ignore"):
        T = triangle_record(A, as_rows(b), as_rows(c))
        A = T[REC_A]
        P = as_rows(p) - A
        Q = as_rows(q) - A
        u, W, d2, *_ = segment_triangle_records(P, Q, T)
    on_segment = P + u * (Q - P)
    on_triangle = (on_segment - W) + A
    return (on_segment + A).T, on_triangle.T, d2


# ---------------------------------------------------------------------------------------------
# public, validated, single queries
# ---------------------------------------------------------------------------------------------


def closest_point_segment(p, a, b) -> np.ndarray:
    """Closest point of the closed segment [a, b] to p (Ericson RTCD 5.1.2).

    p, a, b : (3,) points, metres. Returns (3,) float64. ``a == b`` gives ``a``.
    Raises ValueError naming the argument for a wrong shape, NaN or infinity.
    """
    p = as_point(p, "p")
    a = as_point(a, "a")
    b = as_point(b, "b")
    ab = b - a
    dd = float(ab @ ab)
    if dd == 0.0:
        return a.copy()
    t = min(max(float((p - a) @ ab) / dd, 0.0), 1.0)  # RTCD 5.1.2: t = clamp(ap.ab / ab.ab)
    return a + t * ab


def closest_points_segment_segment(p1, q1, p2, q2) -> tuple[np.ndarray, np.ndarray]:
    """Closest points (c1 on [p1, q1], c2 on [p2, q2]) of two closed segments (RTCD 5.1.9).

    All arguments (3,) points, metres; returns two (3,) float64 arrays. Parallel overlapping
    segments give the pair at the midpoint of the overlap (deterministic, symmetric under
    swapping the segments); zero-length segments are points.
    """
    p1 = as_point(p1, "p1")
    q1 = as_point(q1, "q1")
    p2 = as_point(p2, "p2")
    q2 = as_point(q2, "q2")
    c1, c2, _ = closest_points_segment_segment_many(p1, q1, p2, q2)
    return c1[0].copy(), c2[0].copy()


def closest_point_triangle(p, a, b, c) -> np.ndarray:
    """Closest point of the closed triangle (a, b, c) to p (Ericson RTCD 5.1.5).

    All arguments (3,) points, metres; returns (3,) float64. A degenerate (zero-area) triangle
    behaves as the segment or point it collapses to.
    """
    p = as_point(p, "p")
    a = as_point(a, "a")
    b = as_point(b, "b")
    c = as_point(c, "c")
    point, _ = closest_point_triangle_many(p, a, b, c)
    return point[0].copy()


def closest_points_segment_triangle(p, q, a, b, c) -> tuple[np.ndarray, np.ndarray]:
    """Closest points (on_segment, on_triangle) of segment [p, q] and triangle (a, b, c).

    All arguments (3,) points, metres; returns two (3,) float64 arrays. A segment crossing or
    touching the triangle gives distance 0 and the common point twice. Otherwise the minimum of
    the endpoint-vs-triangle (RTCD 5.1.5) and segment-vs-edge (RTCD 5.1.9) distances.
    """
    p = as_point(p, "p")
    q = as_point(q, "q")
    a = as_point(a, "a")
    b = as_point(b, "b")
    c = as_point(c, "c")
    on_segment, on_triangle, _ = closest_points_segment_triangle_many(p, q, a, b, c)
    return on_segment[0].copy(), on_triangle[0].copy()
