"""Exact, strict capsule intersection predicates (integer arithmetic, no square roots).

Use these as the ground truth and as the tie-breaker when a float result is borderline
(a float distance within a few ulps of the radius): they decide exactly for the numbers
given, and a float argument is taken at its exact binary value (``Fraction(0.1)``, not 1/10).

Method (seed article 004, extended to 3-D):

1. Every coordinate and radius is converted to an exact ``Fraction`` and the whole problem is
   scaled by the least common multiple of all denominators. The predicates are invariant under
   uniform scaling, so from then on everything is Python ``int`` arithmetic: no rounding,
   no overflow (ints are unbounded), no division, no ``sqrt``. 2-D input is embedded as z = 0.
2. A squared distance that is a ratio ``num / den`` (den > 0) is compared with ``r**2`` as
   ``num < r**2 * den`` (the seed's "scale both sides by segLenSq**2" trick).
3. Segment-segment distance (Ericson RTCD 5.1.9 structure): the minimum of the convex quadratic
   ``|p1 + s d1 - p2 - t d2|**2`` over ``[0, 1]**2`` is either at its interior stationary point
   (only when the segments are not parallel; in 3-D this is the generic case, unlike 2-D where a
   non-intersecting pair always has its minimum at an endpoint) or on the boundary, i.e. an
   endpoint-vs-segment problem (RTCD 5.1.2). An exact intersection test (orientation and
   coplanarity predicates) answers the distance-0 case first.
4. Segment-triangle: exact intersection test (orient3d of the endpoints against the plane, then
   the crossing point scaled to integers against the three edge half-planes; coplanar segments
   via endpoint-in-triangle and segment-edge tests). If disjoint, the distance is attained with a
   segment endpoint (point-triangle, RTCD 5.1.5 by plane projection) or on a triangle edge
   (segment-segment). Degenerate (zero-area) triangles are the segment or point they collapse to.

Both predicates are strict: distance < radius is a hit, distance == radius (touching) is not.
Slow compared with the numpy kernels (pure Python); intended for single queries and tests.
"""

from __future__ import annotations

import math
import numbers
from decimal import Decimal
from fractions import Fraction

__all__ = ["capsules_intersect", "capsule_triangle_intersect"]


# ---------------------------------------------------------------------------------------------
# validation and exact conversion
# ---------------------------------------------------------------------------------------------


def _to_fraction(x, name: str) -> Fraction:
    """Exact Fraction of a real number, or ValueError naming ``name``."""
    if isinstance(x, bool):
        raise ValueError(f"{name} must be numeric, got bool {x!r}")
    if isinstance(x, Fraction):
        if type(x.numerator) is int and type(x.denominator) is int:
            return x
        # e.g. Fraction(np.int64(3), 7): rebuild from Python ints (numpy ints wrap around)
        return Fraction(int(x.numerator), int(x.denominator))
    if isinstance(x, numbers.Integral):
        return Fraction(int(x))
    if isinstance(x, float):
        if not math.isfinite(x):
            raise ValueError(f"{name} must be finite (no NaN or infinity), got {x!r}")
        return Fraction(x)
    if isinstance(x, Decimal):
        if not x.is_finite():
            raise ValueError(f"{name} must be finite (no NaN or infinity), got {x!r}")
        return Fraction(x)
    if hasattr(x, "dtype") and hasattr(x, "item") and getattr(x, "ndim", 0) == 0:
        return _to_fraction(x.item(), name)  # numpy scalar: exact via the Python value
    if isinstance(x, numbers.Rational):
        return Fraction(int(x.numerator), int(x.denominator))
    if isinstance(x, numbers.Real):
        return _to_fraction(float(x), name)
    raise ValueError(f"{name} must be numeric, got {type(x).__name__} {x!r}")


def _point(value, name: str) -> tuple:
    if isinstance(value, (str, bytes)):
        raise ValueError(f"{name} must be a 2-D or 3-D point, got {value!r}")
    try:
        coords = list(value)
    except TypeError as exc:
        raise ValueError(f"{name} must be a 2-D or 3-D point, got {value!r}") from exc
    if len(coords) not in (2, 3):
        raise ValueError(f"{name} must have 2 or 3 coordinates, got {len(coords)}")
    return tuple(_to_fraction(c, f"{name}[{i}]") for i, c in enumerate(coords))


def _radius(value, name: str) -> Fraction:
    r = _to_fraction(value, name)
    if r <= 0:
        raise ValueError(f"{name} must be > 0, got {value!r}")
    return r


def _integerise(points: dict, radii: dict):
    """Validate, then scale everything by the lcm of the denominators.

    ``points``: name -> raw point, ``radii``: name -> raw radius (insertion order kept).
    Returns (list of 3-tuples of int, list of int radii).
    """
    pts = [(name, _point(value, name)) for name, value in points.items()]
    first_name, first = pts[0]
    for name, p in pts[1:]:
        if len(p) != len(first):
            raise ValueError(
                f"{name} has {len(p)} coordinates but {first_name} has {len(first)}; "
                "all points of one call must have the same dimension"
            )
    rads = [_radius(value, name) for name, value in radii.items()]
    scale = 1
    for _, p in pts:
        for c in p:
            scale = math.lcm(scale, c.denominator)
    for r in rads:
        scale = math.lcm(scale, r.denominator)

    def to_int(c: Fraction) -> int:
        return c.numerator * (scale // c.denominator)

    int_pts = []
    for _, p in pts:
        q = [to_int(c) for c in p]
        if len(q) == 2:
            q.append(0)
        int_pts.append(tuple(q))
    return int_pts, [to_int(r) for r in rads]


# ---------------------------------------------------------------------------------------------
# integer vector algebra
# ---------------------------------------------------------------------------------------------


def _sub(u, v):
    return (u[0] - v[0], u[1] - v[1], u[2] - v[2])


def _dot(u, v):
    return u[0] * v[0] + u[1] * v[1] + u[2] * v[2]


def _cross(u, v):
    return (
        u[1] * v[2] - u[2] * v[1],
        u[2] * v[0] - u[0] * v[2],
        u[0] * v[1] - u[1] * v[0],
    )


def _sign(x: int) -> int:
    return (x > 0) - (x < 0)


# ---------------------------------------------------------------------------------------------
# exact intersection predicates
# ---------------------------------------------------------------------------------------------


def _orient2(p, q, r) -> int:
    """Sign of the 2-D cross product (q - p) x (r - p)."""
    return _sign((q[0] - p[0]) * (r[1] - p[1]) - (q[1] - p[1]) * (r[0] - p[0]))


def _in_box2(p, q, r) -> bool:
    """For collinear p, q, r: does q lie on the closed segment [p, r]?"""
    return min(p[0], r[0]) <= q[0] <= max(p[0], r[0]) and min(p[1], r[1]) <= q[1] <= max(p[1], r[1])


def _segments_intersect2(p1, q1, p2, q2) -> bool:
    """Closed 2-D segments share a point (exact; zero-length and collinear cases included)."""
    o1 = _orient2(p1, q1, p2)
    o2 = _orient2(p1, q1, q2)
    o3 = _orient2(p2, q2, p1)
    o4 = _orient2(p2, q2, q1)
    if o1 != o2 and o3 != o4:
        return True
    return (
        (o1 == 0 and _in_box2(p1, p2, q1))
        or (o2 == 0 and _in_box2(p1, q2, q1))
        or (o3 == 0 and _in_box2(p2, p1, q2))
        or (o4 == 0 and _in_box2(p2, q1, q2))
    )


def _drop_axis(v, axis: int):
    return tuple(v[i] for i in range(3) if i != axis)


def _segments_intersect3(p1, q1, p2, q2) -> bool:
    """Closed 3-D segments share a point, exactly.

    Not coplanar (orient3d != 0): disjoint. Coplanar: project along the coordinate axis of the
    largest normal component (an affine bijection of the plane, so it preserves intersection)
    and use the 2-D test. All four points collinear: project along the axis of the smallest
    component of the line direction (injective on the line). All equal: trivially.
    """
    d1 = _sub(q1, p1)
    if _dot(_cross(d1, _sub(p2, p1)), _sub(q2, p1)) != 0:
        return False
    diffs = (d1, _sub(p2, p1), _sub(q2, p1))
    normal = (0, 0, 0)
    for i in range(3):
        for j in range(i + 1, 3):
            normal = _cross(diffs[i], diffs[j])
            if normal != (0, 0, 0):
                break
        if normal != (0, 0, 0):
            break
    if normal != (0, 0, 0):
        axis = max(range(3), key=lambda k: abs(normal[k]))
    else:
        direction = next((d for d in (*diffs, _sub(q2, p2)) if d != (0, 0, 0)), None)
        if direction is None:
            return True  # all four points coincide
        axis = min(range(3), key=lambda k: abs(direction[k]))
    return _segments_intersect2(*(_drop_axis(v, axis) for v in (p1, q1, p2, q2)))


def _point_in_triangle_plane(x_scaled, k, p0, p1, p2, n) -> bool:
    """Is x = x_scaled / k (k != 0, x in or projected onto the plane) in the closed triangle?

    Edge half-plane tests ``((v - u) x (x - u)) . n >= 0`` for the three edges, multiplied by k
    to stay in integers (so the sign is compared with sign(k)). A point off the plane may be
    given: its normal component does not change these dot products, so this is the test of its
    orthogonal projection.
    """
    s = _sign(k)
    for u, v in ((p0, p1), (p1, p2), (p2, p0)):
        xu = (x_scaled[0] - k * u[0], x_scaled[1] - k * u[1], x_scaled[2] - k * u[2])
        if _sign(_dot(_cross(_sub(v, u), xu), n)) * s < 0:
            return False
    return True


def _segment_triangle_intersect(a, b, p0, p1, p2, n) -> bool:
    """Closed segment [a, b] meets the closed non-degenerate triangle with normal n != 0."""
    sa = _dot(n, _sub(a, p0))  # orient3d(p0, p1, p2, a)
    sb = _dot(n, _sub(b, p0))
    if (sa > 0 and sb > 0) or (sa < 0 and sb < 0):
        return False
    if sa == 0 and sb == 0:  # segment in the plane
        if _point_in_triangle_plane(a, 1, p0, p1, p2, n):
            return True
        if _point_in_triangle_plane(b, 1, p0, p1, p2, n):
            return True
        return any(_segments_intersect3(a, b, u, v) for u, v in ((p0, p1), (p1, p2), (p2, p0)))
    # unique crossing point x = (sa b - sb a) / (sa - sb)
    k = sa - sb
    x_scaled = tuple(sa * b[i] - sb * a[i] for i in range(3))
    return _point_in_triangle_plane(x_scaled, k, p0, p1, p2, n)


# ---------------------------------------------------------------------------------------------
# exact "distance < r" predicates (r2 = r**2, all int)
# ---------------------------------------------------------------------------------------------


def _point_segment_closer(p, a, b, r2: int) -> bool:
    """dist(p, [a, b])**2 < r2, exactly (Ericson RTCD 5.1.2, scaled as in seed 004)."""
    d = _sub(b, a)
    ap = _sub(p, a)
    t_num = _dot(ap, d)  # t = t_num / dd
    if t_num <= 0:  # also covers a == b
        return _dot(ap, ap) < r2
    dd = _dot(d, d)
    if t_num >= dd:
        bp = _sub(p, b)
        return _dot(bp, bp) < r2
    # dd * (p - closest) = dd * ap - t_num * d
    w = (dd * ap[0] - t_num * d[0], dd * ap[1] - t_num * d[1], dd * ap[2] - t_num * d[2])
    return _dot(w, w) < r2 * dd * dd


def _segments_closer(p1, q1, p2, q2, r2: int) -> bool:
    """dist([p1, q1], [p2, q2])**2 < r2, exactly."""
    if _segments_intersect3(p1, q1, p2, q2):
        return True  # distance 0 < r
    if (
        _point_segment_closer(p1, p2, q2, r2)
        or _point_segment_closer(q1, p2, q2, r2)
        or _point_segment_closer(p2, p1, q1, r2)
        or _point_segment_closer(q2, p1, q1, r2)
    ):
        return True
    # Interior stationary point of f(s, t) = |p1 + s d1 - p2 - t d2|**2 (Ericson RTCD 5.1.9):
    # s = (b f - c e) / D, t = (a f - b c) / D with D = a e - b**2 > 0 for non-parallel segments.
    d1 = _sub(q1, p1)
    d2 = _sub(q2, p2)
    rr = _sub(p1, p2)
    a = _dot(d1, d1)
    bb = _dot(d1, d2)
    e = _dot(d2, d2)
    c = _dot(d1, rr)
    f = _dot(d2, rr)
    den = a * e - bb * bb
    if den <= 0:
        return False  # parallel or degenerate: the minimum is on the boundary, checked above
    s_num = bb * f - c * e
    t_num = a * f - bb * c
    if not (0 < s_num < den and 0 < t_num < den):
        return False  # stationary point outside the open square: boundary checked above
    # den * (c1 - c2) = den * rr + s_num * d1 - t_num * d2
    w = tuple(den * rr[i] + s_num * d1[i] - t_num * d2[i] for i in range(3))
    return _dot(w, w) < r2 * den * den


def _point_triangle_closer(p, p0, p1, p2, n, r2: int) -> bool:
    """dist(p, triangle)**2 < r2 for a non-degenerate triangle with normal n (RTCD 5.1.5).

    If the orthogonal projection of p lies in the closed triangle, dist**2 = h**2 / |n|**2 with
    h = n . (p - p0); otherwise the closest point is on an edge.
    """
    if _point_in_triangle_plane(p, 1, p0, p1, p2, n):
        h = _dot(n, _sub(p, p0))
        return h * h < r2 * _dot(n, n)
    return (
        _point_segment_closer(p, p0, p1, r2)
        or _point_segment_closer(p, p1, p2, r2)
        or _point_segment_closer(p, p2, p0, r2)
    )


# ---------------------------------------------------------------------------------------------
# public predicates
# ---------------------------------------------------------------------------------------------


def capsules_intersect(a1, b1, r1, a2, b2, r2) -> bool:
    """Exactly decide whether two capsules overlap: dist(segment 1, segment 2) < r1 + r2.

    Parameters
    ----------
    a1, b1 : 2- or 3-sequence of int, Fraction or float
        End points of capsule 1's segment (may coincide: a sphere). Any consistent unit/frame.
    r1 : int, Fraction or float, > 0
        Radius of capsule 1, same unit.
    a2, b2, r2 :
        Capsule 2 likewise. All four points must have the same dimension; 2-D is embedded in
        the plane z = 0.

    Returns
    -------
    bool
        True iff the open capsules overlap, i.e. the segment distance is strictly less than
        ``r1 + r2``; touching (distance == r1 + r2) is False. Floats are taken at their exact
        binary values, so the answer is exact for the numbers passed, never rounded.

    Raises
    ------
    ValueError
        Naming the argument, for NaN/infinite or non-numeric values, a point that is not 2-D or
        3-D or whose dimension differs from the others, or a radius <= 0.
    """
    (pa1, pb1, pa2, pb2), (ir1, ir2) = _integerise(
        {"a1": a1, "b1": b1, "a2": a2, "b2": b2}, {"r1": r1, "r2": r2}
    )
    reach = ir1 + ir2
    return _segments_closer(pa1, pb1, pa2, pb2, reach * reach)


def capsule_triangle_intersect(a, b, r, p0, p1, p2) -> bool:
    """Exactly decide whether a capsule overlaps a closed triangle: dist(segment, triangle) < r.

    Parameters
    ----------
    a, b : 2- or 3-sequence of int, Fraction or float
        End points of the capsule's segment (may coincide: a sphere).
    r : int, Fraction or float, > 0
        Capsule radius, same unit as the points.
    p0, p1, p2 : 2- or 3-sequence of int, Fraction or float
        Triangle vertices (closed, either winding). A degenerate (zero-area) triangle behaves as
        the segment or point it collapses to. Same dimension as ``a`` and ``b``; 2-D is
        embedded in the plane z = 0.

    Returns
    -------
    bool
        True iff the segment-triangle distance is strictly less than ``r`` (touching is False);
        True whenever the segment touches or crosses the triangle. Exact for the numbers given
        (floats at their exact binary values).

    Raises
    ------
    ValueError
        Naming the argument, for NaN/infinite or non-numeric values, a point that is not 2-D or
        3-D or whose dimension differs from the others, or a radius <= 0.
    """
    (pa, pb, t0, t1, t2), (ir,) = _integerise(
        {"a": a, "b": b, "p0": p0, "p1": p1, "p2": p2}, {"r": r}
    )
    r2 = ir * ir
    edges = ((t0, t1), (t1, t2), (t2, t0))
    n = _cross(_sub(t1, t0), _sub(t2, t0))
    if n == (0, 0, 0):
        # zero area: the triangle is the union of its edges (a segment or a point)
        return any(_segments_closer(pa, pb, u, v, r2) for u, v in edges)
    if _segment_triangle_intersect(pa, pb, t0, t1, t2, n):
        return True
    # Disjoint: the closest pair has a segment end point or a triangle edge point.
    if _point_triangle_closer(pa, t0, t1, t2, n, r2) or _point_triangle_closer(
        pb, t0, t1, t2, n, r2
    ):
        return True
    return any(_segments_closer(pa, pb, u, v, r2) for u, v in edges)
