"""Exact rational oracle for the closest-point and intersection routines of ``core``.

Test-only reference, independent of ``core``: every computation uses ``fractions.Fraction``
arithmetic (no float math, no numpy math), so results are exact. It is deliberately written to be
obviously correct rather than fast; use it on a few hundred cases per test, not on meshes.

Conventions
-----------
* Inputs: points are sequences (tuples, lists, numpy arrays) of length 3, or 2 (padded with z = 0),
  whose entries are ``int``, ``float`` (converted exactly with ``Fraction(float)``),
  ``Fraction`` or numpy scalars. Scalars likewise.
* Outputs: points are 3-tuples of ``Fraction``; distances are returned SQUARED (``dist2``), exact.
* Segments are closed and may have zero length; triangles are closed and may be degenerate
  (zero area), in which case they behave as the segment or point they collapse to.
* When the minimising pair is not unique (parallel segments, a segment lying across a
  triangle, ...), any minimising pair is returned; only ``dist2`` is unique.

Methods (the proof of each is in its docstring):
* point-segment: the exact clamped projection parameter (Ericson RTCD 5.1.2).
* segment-segment: exact minimiser of the convex quadratic f(s, t) over the unit square.
* point-triangle: projection onto the plane plus exact barycentric sign test, else min over edges.
* segment-triangle: an exact intersection test first (distance 0), else min over the two
  endpoint-triangle and three segment-edge problems.
"""

from __future__ import annotations

import numbers
from fractions import Fraction

__all__ = [
    "F",
    "vec",
    "dist2_point_segment",
    "closest_point_segment",
    "closest_points_segment_segment",
    "dist2_segment_segment",
    "closest_point_triangle",
    "closest_points_segment_triangle",
    "dist2_segment_triangle",
    "segment_intersects_triangle",
    "capsule_sweep_dist2",
]


# ---------------------------------------------------------------------------------------------
# conversion
# ---------------------------------------------------------------------------------------------


def F(x) -> Fraction:
    """Return ``x`` as an exact ``Fraction``.

    int, Fraction (normalised to Python-int numerator/denominator), float (exactly:
    ``Fraction(0.1)`` is the binary value of 0.1), numpy integer and floating scalars (via
    ``.item()``, exact for float16/32/64). Raises ValueError for NaN or infinity and TypeError
    for non-numbers (including bool).
    """
    if isinstance(x, Fraction):
        if type(x.numerator) is int and type(x.denominator) is int:
            return x
        # e.g. Fraction(np.int64(3), 7): normalise to Python ints (numpy ints wrap around)
        return Fraction(int(x.numerator), int(x.denominator))
    if isinstance(x, bool):
        raise TypeError(f"bool is not a coordinate: {x!r}")
    if isinstance(x, numbers.Integral):
        return Fraction(int(x))
    if isinstance(x, float):
        return Fraction(x)  # exact; raises ValueError/OverflowError for nan/inf
    if hasattr(x, "item") and hasattr(x, "dtype"):  # numpy scalar or 0-d array
        return F(x.item())
    if isinstance(x, numbers.Rational):
        return Fraction(x.numerator, x.denominator)
    if isinstance(x, numbers.Real):
        return Fraction(float(x))
    raise TypeError(f"not a real number: {x!r}")


def vec(x) -> tuple:
    """Return the sequence ``x`` as a tuple of Fractions (same length as ``x``)."""
    return tuple(F(c) for c in x)


def _v3(x) -> tuple:
    """Point as a 3-tuple of Fractions; 2-D points are padded with z = 0."""
    v = vec(x)
    if len(v) == 2:
        return (v[0], v[1], Fraction(0))
    if len(v) != 3:
        raise ValueError(f"point must have 2 or 3 coordinates, got {len(v)}")
    return v


# ---------------------------------------------------------------------------------------------
# exact vector algebra on 3-tuples of Fractions
# ---------------------------------------------------------------------------------------------


# Written independently of core (core/geometry/exact.py has its own integer algebra): a
# shared helper would let one mistake pass both the code and its oracle.
def _add(u, v):
    return tuple(a + b for a, b in zip(u, v, strict=True))


def _sub(u, v):
    return tuple(a - b for a, b in zip(u, v, strict=True))


def _mul(s, v):
    return tuple(s * a for a in v)


def _dot(u, v):
    return sum((a * b for a, b in zip(u, v, strict=True)), Fraction(0))


def _cross(u, v):
    """(u x v)_i = u_j v_k - u_k v_j over the cyclic (i, j, k)."""
    return tuple(u[(i + 1) % 3] * v[(i + 2) % 3] - u[(i + 2) % 3] * v[(i + 1) % 3]
                 for i in range(3))


def _norm2(v):
    return _dot(v, v)


_ZERO3 = (Fraction(0), Fraction(0), Fraction(0))


# ---------------------------------------------------------------------------------------------
# point - segment
# ---------------------------------------------------------------------------------------------


def _closest_point_segment(p, a, b):
    # Ericson RTCD 5.1.2: t = clamp(dot(p - a, d) / dot(d, d), 0, 1), exact.
    d = _sub(b, a)
    dd = _norm2(d)
    if dd == 0:
        return a, _norm2(_sub(p, a))
    t = _dot(_sub(p, a), d) / dd
    t = min(max(t, Fraction(0)), Fraction(1))
    c = _add(a, _mul(t, d))
    return c, _norm2(_sub(p, c))


def closest_point_segment(p, a, b):
    """Closest point of the closed segment [a, b] to p: ``(point, dist2)``, exact."""
    return _closest_point_segment(_v3(p), _v3(a), _v3(b))


def dist2_point_segment(p, a, b) -> Fraction:
    """Squared distance from p to the closed segment [a, b], exact."""
    return _closest_point_segment(_v3(p), _v3(a), _v3(b))[1]


# ---------------------------------------------------------------------------------------------
# segment - segment
# ---------------------------------------------------------------------------------------------


def _closest_points_segment_segment(p1, q1, p2, q2):
    """Minimise f(s, t) = |p1 + s d1 - (p2 + t d2)|^2 over the unit square, exactly.

    f is a convex quadratic. If its Hessian is nonsingular (denom != 0) its unique stationary
    point is the global minimiser; if that lies in the square, done. Otherwise the constrained
    minimum lies on the boundary of the square. If the Hessian is singular (parallel or
    zero-length segments), f is linear along the null direction, so every line in that direction
    through the square attains its minimum at a boundary point; again the boundary suffices.
    The four edges s=0, s=1, t=0, t=1 are point-segment problems.
    """
    d1 = _sub(q1, p1)
    d2 = _sub(q2, p2)
    r = _sub(p1, p2)
    a = _dot(d1, d1)
    b = _dot(d1, d2)
    e = _dot(d2, d2)
    c = _dot(d1, r)
    f = _dot(d2, r)
    candidates = []
    denom = a * e - b * b
    if denom != 0:
        # grad f = 0:  a s - b t = -c ;  -b s + e t = f
        s = (b * f - c * e) / denom
        t = (a * f - b * c) / denom
        if 0 <= s <= 1 and 0 <= t <= 1:
            c1 = _add(p1, _mul(s, d1))
            c2 = _add(p2, _mul(t, d2))
            candidates.append((c1, c2, _norm2(_sub(c1, c2))))
    # boundary: s = 0, s = 1 (endpoint of segment 1 vs segment 2), t = 0, t = 1
    for end in (p1, q1):
        c2, d = _closest_point_segment(end, p2, q2)
        candidates.append((end, c2, d))
    for end in (p2, q2):
        c1, d = _closest_point_segment(end, p1, q1)
        candidates.append((c1, end, d))
    return min(candidates, key=lambda item: item[2])


def closest_points_segment_segment(p1, q1, p2, q2):
    """Closest points of closed segments [p1, q1] and [p2, q2]: ``(c1, c2, dist2)``, exact.

    Zero-length segments allowed; for parallel overlapping segments any minimising pair.
    """
    return _closest_points_segment_segment(_v3(p1), _v3(q1), _v3(p2), _v3(q2))


def dist2_segment_segment(p1, q1, p2, q2) -> Fraction:
    """Squared distance between closed segments [p1, q1] and [p2, q2], exact."""
    return closest_points_segment_segment(p1, q1, p2, q2)[2]


# ---------------------------------------------------------------------------------------------
# point - triangle
# ---------------------------------------------------------------------------------------------


def _inside_triangle_coplanar(x, a, b, c, n):
    """x in the plane of (a, b, c) with normal n != 0: is x in the closed triangle? Exact."""
    return (
        _dot(_cross(_sub(b, a), _sub(x, a)), n) >= 0
        and _dot(_cross(_sub(c, b), _sub(x, b)), n) >= 0
        and _dot(_cross(_sub(a, c), _sub(x, c)), n) >= 0
    )


def _closest_on_edges(p, a, b, c):
    best = None
    for u, v in ((a, b), (b, c), (c, a)):
        item = _closest_point_segment(p, u, v)
        if best is None or item[1] < best[1]:
            best = item
    return best


def _closest_point_triangle(p, a, b, c):
    """Project p onto the plane; if the projection is in the closed triangle it is the answer
    (Pythagoras: every triangle point is at least as far). Otherwise the closest point lies on
    the boundary (the in-plane part of the distance is minimised over a convex set not containing
    the projection), i.e. on one of the three edges. Degenerate triangles (n == 0) are the union
    of their three edges.
    """
    n = _cross(_sub(b, a), _sub(c, a))
    nn = _norm2(n)
    if nn != 0:
        h = _dot(_sub(p, a), n)
        proj = _sub(p, _mul(h / nn, n))
        if _inside_triangle_coplanar(proj, a, b, c, n):
            return proj, h * h / nn
    return _closest_on_edges(p, a, b, c)


def closest_point_triangle(p, a, b, c):
    """Closest point of the closed triangle (a, b, c) to p: ``(point, dist2)``, exact.

    Degenerate (zero-area) triangles behave as the segment or point they collapse to.
    """
    return _closest_point_triangle(_v3(p), _v3(a), _v3(b), _v3(c))


# ---------------------------------------------------------------------------------------------
# segment - triangle
# ---------------------------------------------------------------------------------------------


def _segment_triangle_common_point(p, q, a, b, c):
    """A point common to the closed segment [p, q] and closed triangle (a, b, c), or None."""
    n = _cross(_sub(b, a), _sub(c, a))
    if _norm2(n) == 0:
        # degenerate triangle = union of its three edges
        for u, v in ((a, b), (b, c), (c, a)):
            c1, _c2, d = _closest_points_segment_segment(p, q, u, v)
            if d == 0:
                return c1
        return None
    dp = _dot(_sub(p, a), n)  # exact orientation of p against the plane (orient3d)
    dq = _dot(_sub(q, a), n)
    if (dp > 0 and dq > 0) or (dp < 0 and dq < 0):
        return None  # strictly on one side
    if dp == 0 and dq == 0:
        # coplanar: an endpoint inside, or the segment meets an edge
        for end in (p, q):
            if _inside_triangle_coplanar(end, a, b, c, n):
                return end
        for u, v in ((a, b), (b, c), (c, a)):
            c1, _c2, d = _closest_points_segment_segment(p, q, u, v)
            if d == 0:
                return c1
        return None
    # exactly one crossing point with the plane (dp != dq here)
    x = _add(p, _mul(dp / (dp - dq), _sub(q, p)))
    return x if _inside_triangle_coplanar(x, a, b, c, n) else None


def segment_intersects_triangle(p, q, a, b, c) -> bool:
    """Do the closed segment [p, q] and the closed triangle (a, b, c) share a point? Exact."""
    return _segment_triangle_common_point(_v3(p), _v3(q), _v3(a), _v3(b), _v3(c)) is not None


def _closest_points_segment_triangle(p, q, a, b, c):
    x = _segment_triangle_common_point(p, q, a, b, c)
    if x is not None:
        return x, x, Fraction(0)
    # Disjoint: the minimum of the convex distance over segment x triangle is attained with
    # either a segment endpoint or a triangle-boundary point (if both were interior, the
    # segment would be parallel to the plane and the minimising set would reach an endpoint
    # of the segment or an edge of the triangle).
    candidates = []
    for end in (p, q):
        on_tri, d = _closest_point_triangle(end, a, b, c)
        candidates.append((end, on_tri, d))
    for u, v in ((a, b), (b, c), (c, a)):
        candidates.append(_closest_points_segment_segment(p, q, u, v))
    return min(candidates, key=lambda item: item[2])


def closest_points_segment_triangle(p, q, a, b, c):
    """Closest points of closed segment [p, q] and closed triangle (a, b, c), exact.

    Returns ``(on_segment, on_triangle, dist2)``; dist2 == 0 iff they intersect, and then both
    points are the same common point.
    """
    return _closest_points_segment_triangle(_v3(p), _v3(q), _v3(a), _v3(b), _v3(c))


def dist2_segment_triangle(p, q, a, b, c) -> Fraction:
    """Squared distance between closed segment [p, q] and closed triangle (a, b, c), exact."""
    return closest_points_segment_triangle(p, q, a, b, c)[2]


def capsule_sweep_dist2(p, q, v, t, a, b, c) -> Fraction:
    """Squared distance between triangle (a, b, c) and the segment [p + t v, q + t v], exact.

    ``t`` is converted exactly (a float t is its exact binary value; pass a Fraction for 1/3).
    """
    t = F(t)
    shift = _mul(t, _v3(v))
    return _closest_points_segment_triangle(
        _add(_v3(p), shift), _add(_v3(q), shift), _v3(a), _v3(b), _v3(c)
    )[2]
