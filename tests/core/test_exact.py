"""core.exact against the exact rational oracle (tests/core/oracle.py), plus oracle self-checks.

Layout:
1. oracle self-checks: closed forms, symmetries, dense float sampling (brute force).
2. core.exact vs oracle: hypothesis over ints / Fractions / floats (incl. 1e4 offsets and
   1e-4 scales), 2-D and 3-D, with radii bracketing the exact distance as tightly as 1e-20.
3. constructed exact touching (rational unit normals): touching is False, +eps True, -eps False.
4. adversarial lists: parallel, collinear, overlapping, zero-length, degenerate triangles, big ints.
5. bad input -> ValueError naming the argument.
"""

from __future__ import annotations

import itertools
import math
import random
from fractions import Fraction as Fr

import numpy as np
import oracle as O
import pytest
from capsule_collision.core.geometry.exact import capsule_triangle_intersect, capsules_intersect
from hypothesis import given, settings
from hypothesis import strategies as st

SETTINGS = settings(max_examples=250, derandomize=True, deadline=None, database=None)
EPS = Fr(1, 10**30)  # "smallest" Fraction step used for boundary probes


# ---------------------------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------------------------


def sqrt_bracket(d2: Fr, digits: int = 20):
    """Rationals lo <= sqrt(d2) < hi with hi - lo = 10**-digits / den; lo exact if d2 is square."""
    k = 10**digits
    num, den = d2.numerator, d2.denominator
    m = math.isqrt(num * den * k * k)  # sqrt(d2) = sqrt(num * den) / den
    return Fr(m, den * k), Fr(m + 1, den * k), m * m == num * den * k * k


def exact_sqrt(d2: Fr):
    """sqrt(d2) as a Fraction if d2 is a perfect rational square, else None."""
    n, d = math.isqrt(d2.numerator), math.isqrt(d2.denominator)
    return Fr(n, d) if n * n == d2.numerator and d * d == d2.denominator else None


def split(r: Fr, frac: Fr):
    """r -> (r1, r2) with r1 + r2 == r, both > 0 (0 < frac < 1)."""
    r1 = r * frac
    return r1, r - r1


def rational_unit(a: int, b: int):
    """Exact rational unit vector (inverse stereographic projection)."""
    den = a * a + b * b + 1
    return (Fr(2 * a, den), Fr(2 * b, den), Fr(a * a + b * b - 1, den))


def add(u, v):
    return tuple(x + y for x, y in zip(u, v))


def sub(u, v):
    return tuple(x - y for x, y in zip(u, v))


def mul(s, v):
    return tuple(s * x for x in v)


def cross(u, v):
    return (u[1] * v[2] - u[2] * v[1], u[2] * v[0] - u[0] * v[2], u[0] * v[1] - u[1] * v[0])


def check_capsules(a1, b1, a2, b2, r1, r2):
    """Compare core with the oracle for one configuration and its argument-order symmetries."""
    d2 = O.dist2_segment_segment(a1, b1, a2, b2)
    expected = d2 < (O.F(r1) + O.F(r2)) ** 2
    assert capsules_intersect(a1, b1, r1, a2, b2, r2) is expected, (a1, b1, r1, a2, b2, r2, d2)
    assert capsules_intersect(b2, a2, r2, b1, a1, r1) is expected
    return expected


def check_triangle(a, b, r, p0, p1, p2):
    """Compare core with the oracle for one configuration and reordered arguments."""
    d2 = O.dist2_segment_triangle(a, b, p0, p1, p2)
    expected = d2 < O.F(r) ** 2
    assert capsule_triangle_intersect(a, b, r, p0, p1, p2) is expected, (a, b, r, p0, p1, p2, d2)
    assert capsule_triangle_intersect(b, a, r, p2, p0, p1) is expected
    assert capsule_triangle_intersect(a, b, r, p1, p0, p2) is expected  # other winding
    return expected


def probe_radii(d2: Fr):
    """Radii bracketing sqrt(d2): [(r, expected)], incl. exact touching when d2 is a square."""
    if d2 == 0:
        return [(EPS, True), (Fr(1), True)]
    lo, hi, exact = sqrt_bracket(d2)
    out = [(hi, True), (lo, False)]
    if exact:
        eps = min(EPS, lo / 2)  # keep lo - eps > 0 for tiny distances
        out += [(lo + eps, True), (lo - eps, False)]
    return out


# ---------------------------------------------------------------------------------------------
# strategies
# ---------------------------------------------------------------------------------------------

small_int = st.integers(-6, 6)
big_int = st.integers(-(10**30), 10**30)
fraction = st.fractions(min_value=-5, max_value=5, max_denominator=50)
float_unit = st.floats(-5.0, 5.0, allow_nan=False, allow_infinity=False)
float_offset = st.floats(-1.0, 1.0, allow_nan=False, allow_infinity=False).map(lambda x: 1e4 + x)
float_tiny = st.integers(-6, 6).map(lambda k: k * 1e-4)


def points(coord, dim, n):
    return st.lists(st.tuples(*[coord] * dim), min_size=n, max_size=n)


@st.composite
def configs(draw, n):
    """n points of one dimension, in one coordinate family; sometimes with coincidences."""
    dim = draw(st.sampled_from([2, 3]))
    coord = draw(
        st.sampled_from(
            [small_int, small_int, fraction, float_unit, float_offset, float_tiny, big_int]
        )
    )
    pts = draw(points(coord, dim, n))
    # adversarial structure: repeat a point, or make one point an affine combination
    mode = draw(st.integers(0, 4))
    if mode == 1:
        i, j = draw(st.integers(0, n - 1)), draw(st.integers(0, n - 1))
        pts[i] = pts[j]
    elif mode == 2 and n >= 3 and coord in (small_int, fraction, big_int):
        # collinear / parallel: pts[2] = pts[0] + k (pts[1] - pts[0])
        k = draw(st.sampled_from([Fr(-1), Fr(1, 2), Fr(2), Fr(3, 7)]))
        pts[2] = tuple(x + k * (y - x) for x, y in zip(pts[0], pts[1]))
    elif mode == 3 and n >= 4 and coord in (small_int, fraction, big_int):
        # segment 2 parallel to segment 1
        k = draw(st.sampled_from([Fr(-2), Fr(1, 3), Fr(1)]))
        pts[3] = tuple(p2 + k * (q1 - p1) for p1, q1, p2 in zip(pts[0], pts[1], pts[2]))
    return pts


# ---------------------------------------------------------------------------------------------
# 1. oracle self-checks
# ---------------------------------------------------------------------------------------------


def test_oracle_F_and_vec_are_exact():
    assert O.F(0.1) == Fr(3602879701896397, 36028797018963968)
    assert O.F(3) == 3 and O.F(Fr(1, 3)) == Fr(1, 3)
    assert O.F(np.float64(0.1)) == Fr(0.1)
    assert O.F(np.float32(0.1)) == Fr(float(np.float32(0.1)))
    assert O.F(np.int64(-7)) == -7
    assert O.vec(np.array([0.5, 2.0])) == (Fr(1, 2), Fr(2))
    assert all(isinstance(c, Fr) for c in O.vec([1, 0.25, Fr(1, 3)]))
    with pytest.raises((ValueError, OverflowError)):
        O.F(float("nan"))
    # a Fraction holding numpy ints would overflow silently; F normalises it to Python ints
    g = O.F(Fr(np.int64(3), np.int64(7)))
    assert type(g.numerator) is int and type(g.denominator) is int and g == Fr(3, 7)


def test_oracle_closed_forms():
    # point-segment: interior foot, clamped to each end, zero-length segment
    assert O.closest_point_segment((1, 5, 0), (0, 0, 0), (4, 0, 0)) == ((1, 0, 0), 25)
    assert O.dist2_point_segment((-3, 4, 0), (0, 0, 0), (4, 0, 0)) == 25
    assert O.dist2_point_segment((7, 4), (0, 0), (4, 0)) == 25
    assert O.dist2_point_segment((1, 1, 1), (2, 2, 2), (2, 2, 2)) == 3
    # skew perpendicular segments crossing in projection: distance = z offset
    c1, c2, d2 = O.closest_points_segment_segment((-1, 0, 0), (1, 0, 0), (0, -1, 3), (0, 1, 3))
    assert (c1, c2, d2) == ((0, 0, 0), (0, 0, 3), 9)
    # interior stationary point with a fractional parameter
    c1, c2, d2 = O.closest_points_segment_segment((0, 0, 0), (3, 0, 0), (1, -1, 1), (1, 2, 1))
    assert c1 == (1, 0, 0) and c2 == (1, 0, 1) and d2 == 1
    # parallel overlapping at distance 2, collinear overlapping, zero-length vs segment
    assert O.dist2_segment_segment((0, 0, 0), (4, 0, 0), (1, 2, 0), (6, 2, 0)) == 4
    assert O.dist2_segment_segment((0, 0, 0), (4, 0, 0), (3, 0, 0), (9, 0, 0)) == 0
    assert O.dist2_segment_segment((0, 0, 0), (4, 0, 0), (6, 0, 0), (9, 0, 0)) == 4
    assert O.dist2_segment_segment((2, 3, 0), (2, 3, 0), (0, 0, 0), (4, 0, 0)) == 9
    # point-triangle: above interior, beyond a vertex, beyond an edge
    tri = ((0, 0, 0), (4, 0, 0), (0, 4, 0))
    assert O.closest_point_triangle((1, 1, 5), *tri) == ((1, 1, 0), 25)
    assert O.closest_point_triangle((-3, -4, 0), *tri) == ((0, 0, 0), 25)
    assert O.closest_point_triangle((3, 3, 0), *tri) == ((2, 2, 0), 2)
    # degenerate triangles: collinear and a single point
    assert O.closest_point_triangle((1, 2, 0), (0, 0, 0), (2, 0, 0), (4, 0, 0))[1] == 4
    assert O.closest_point_triangle((1, 2, 2), (1, 0, 0), (1, 0, 0), (1, 0, 0))[1] == 8
    # segment-triangle: piercing, endpoint on face, parallel above, coplanar crossing an edge
    assert O.segment_intersects_triangle((1, 1, -1), (1, 1, 1), *tri)
    assert O.segment_intersects_triangle((1, 1, 0), (1, 1, 1), *tri)
    assert O.segment_intersects_triangle((4, 0, -1), (4, 0, 1), *tri)  # through a vertex
    assert not O.segment_intersects_triangle((3, 3, -1), (3, 3, 1), *tri)
    assert O.closest_points_segment_triangle((-5, 1, 2), (5, 1, 2), *tri)[2] == 4
    assert O.segment_intersects_triangle((-1, 1, 0), (1, 1, 0), *tri)
    assert not O.segment_intersects_triangle((-1, 1, 0), (-1, 3, 0), *tri)
    assert O.closest_points_segment_triangle((-1, 1, 0), (-1, 3, 0), *tri)[2] == 1
    on_s, on_t, d2 = O.closest_points_segment_triangle((1, 1, -1), (1, 1, 3), *tri)
    assert on_s == on_t == (1, 1, 0) and d2 == 0
    # degenerate triangle pierced by a segment
    assert O.segment_intersects_triangle((1, -1, 0), (1, 1, 0), (0, 0, 0), (2, 0, 0), (4, 0, 0))
    # sweep: segment moved by t*v
    v = (0, 0, -2)
    assert O.capsule_sweep_dist2((0, 0, 5), (1, 1, 5), v, Fr(1, 2), *tri) == 16
    assert O.capsule_sweep_dist2((1, 1, 5), (1, 1, 6), v, Fr(5, 2), *tri) == 0


def _on_segment(x, p, q):
    d = sub(q, p)
    if all(c == 0 for c in d):
        return tuple(x) == tuple(p)
    t = sum(a * b for a, b in zip(sub(x, p), d)) / sum(c * c for c in d)
    return 0 <= t <= 1 and tuple(x) == add(p, mul(t, d))


def test_oracle_points_are_consistent_and_symmetric():
    rnd = random.Random(7)
    for _ in range(150):
        p1, q1, p2, q2, a, b, c = (
            tuple(Fr(rnd.randint(-9, 9), rnd.randint(1, 3)) for _ in range(3)) for _ in range(7)
        )
        c1, c2, d2 = O.closest_points_segment_segment(p1, q1, p2, q2)
        assert _on_segment(c1, p1, q1) and _on_segment(c2, p2, q2)
        assert sum(x * x for x in sub(c1, c2)) == d2
        assert O.dist2_segment_segment(q2, p2, q1, p1) == d2
        pt, dt = O.closest_point_triangle(p1, a, b, c)
        assert sum(x * x for x in sub(pt, p1)) == dt
        for perm in itertools.permutations((a, b, c)):
            assert O.closest_point_triangle(p1, *perm)[1] == dt
            assert O.dist2_segment_triangle(q1, p1, *perm) == O.dist2_segment_triangle(
                p1, q1, a, b, c
            )
        s_pt, t_pt, dst = O.closest_points_segment_triangle(p1, q1, a, b, c)
        assert sum(x * x for x in sub(s_pt, t_pt)) == dst
        assert _on_segment(s_pt, p1, q1)
        assert (dst == 0) == O.segment_intersects_triangle(p1, q1, a, b, c)
        # the segment-triangle distance is at most every sub-problem's distance
        assert dst <= min(dt, O.closest_point_triangle(q1, a, b, c)[1])
        assert dst <= min(O.dist2_segment_segment(p1, q1, u, v) for u, v in ((a, b), (b, c)))


def _seg_samples(p, q, n):
    s = np.linspace(0.0, 1.0, n)[:, None]
    return np.asarray(p, float) + s * (np.asarray(q, float) - np.asarray(p, float))


def _tri_samples(a, b, c, n):
    u, v = np.meshgrid(np.linspace(0, 1, n), np.linspace(0, 1, n))
    m = (u + v) <= 1.0
    u, v = u[m][:, None], v[m][:, None]
    a, b, c = (np.asarray(x, float) for x in (a, b, c))
    return a + u * (b - a) + v * (c - a)


def test_oracle_against_dense_float_sampling():
    """The oracle's minimum is <= every sampled distance and close to the sampled minimum."""
    rng = np.random.default_rng(2024)
    for _ in range(25):
        p, q, a, b, c = rng.normal(size=(5, 3))
        S = _seg_samples(p, q, 400)
        d_ss = float(O.dist2_segment_segment(p, q, a, b))
        brute = ((S[:, None] - _seg_samples(a, b, 400)[None]) ** 2).sum(-1).min()
        assert d_ss <= brute + 1e-12 and brute - d_ss < 1e-3
        d_pt = float(O.closest_point_triangle(p, a, b, c)[1])
        brute = ((_tri_samples(a, b, c, 300) - p) ** 2).sum(-1).min()
        assert d_pt <= brute + 1e-12 and brute - d_pt < 1e-3
        d_st = float(O.dist2_segment_triangle(p, q, a, b, c))
        brute = (_seg_samples(p, q, 120)[:, None] - _tri_samples(a, b, c, 70)[None]) ** 2
        brute = brute.sum(-1).min()
        assert d_st <= brute + 1e-12 and brute - d_st < 2e-2
        t = Fr(int(rng.integers(0, 8)), 7)
        v = rng.normal(size=3)
        moved = [tuple(O.F(x) + t * O.F(y) for x, y in zip(e, v)) for e in (p, q)]
        assert O.capsule_sweep_dist2(p, q, v, t, a, b, c) == O.dist2_segment_triangle(
            *moved, a, b, c
        )


# ---------------------------------------------------------------------------------------------
# 2. core.exact vs oracle (hypothesis)
# ---------------------------------------------------------------------------------------------


@SETTINGS
@given(configs(4), st.fractions(min_value=Fr(1, 100), max_value=Fr(99, 100)))
def test_capsules_intersect_matches_oracle(pts, frac):
    a1, b1, a2, b2 = pts
    d2 = O.dist2_segment_segment(a1, b1, a2, b2)
    for r, expected in probe_radii(d2):
        r1, r2 = split(r, frac)
        assert check_capsules(a1, b1, a2, b2, r1, r2) is expected
    # float radii (exact binary values) far from and near the boundary
    for r in (0.5, 1.0, 3.0, float(math.sqrt(d2)) or 1e-9):
        check_capsules(a1, b1, a2, b2, r / 2, r / 2)


@pytest.mark.slow  # over 10 s on the 2-core CI machine
@SETTINGS
@given(configs(5))
def test_capsule_triangle_intersect_matches_oracle(pts):
    a, b, p0, p1, p2 = pts
    d2 = O.dist2_segment_triangle(a, b, p0, p1, p2)
    for r, expected in probe_radii(d2):
        assert check_triangle(a, b, r, p0, p1, p2) is expected
    for r in (0.25, 1.0, float(math.sqrt(d2)) or 1e-9):
        check_triangle(a, b, r, p0, p1, p2)


@SETTINGS
@given(configs(5), st.sampled_from([Fr(1, 2), Fr(1), Fr(2)]))
def test_two_d_equals_three_d_with_z_zero(pts, r):
    pts3 = [tuple(p) + (0,) if len(p) == 2 else tuple(p) for p in pts]
    a, b, p0, p1, p2 = pts
    A, B, P0, P1, P2 = pts3
    assert capsule_triangle_intersect(a, b, r, p0, p1, p2) == capsule_triangle_intersect(
        A, B, r, P0, P1, P2
    )
    assert capsules_intersect(a, b, r, p0, p1, r) == capsules_intersect(A, B, r, P0, P1, r)


@SETTINGS
@given(configs(5))
def test_intersection_predicates_match_oracle(pts):
    """The exact intersection fast paths on their own (the distance checks would mask them)."""
    from capsule_collision.core import exact as E

    (a, b, p0, p1, p2), _ = E._integerise(dict(zip("ab012", pts)), {})
    seg_meets = E._segments_intersect3(a, b, p0, p1)
    assert seg_meets is (O.dist2_segment_segment(a, b, p0, p1) == 0), (a, b, p0, p1)
    n = E._cross(E._sub(p1, p0), E._sub(p2, p0))
    if n != (0, 0, 0):
        assert E._segment_triangle_intersect(a, b, p0, p1, p2, n) is (
            O.segment_intersects_triangle(a, b, p0, p1, p2)
        )
    # coplanar variant: flatten everything into z = 0
    a, b, p0, p1, p2 = ((x, y, 0) for x, y, _z in (a, b, p0, p1, p2))
    assert E._segments_intersect3(a, b, p0, p1) is (O.dist2_segment_segment(a, b, p0, p1) == 0)
    n = E._cross(E._sub(p1, p0), E._sub(p2, p0))
    if n != (0, 0, 0):
        assert E._segment_triangle_intersect(a, b, p0, p1, p2, n) is (
            O.segment_intersects_triangle(a, b, p0, p1, p2)
        )


# ---------------------------------------------------------------------------------------------
# 3. constructed exact touching (rational distances in general position)
# ---------------------------------------------------------------------------------------------


@st.composite
def touching_setups(draw):
    """Centre c, rational unit normal n, in-plane vectors u, v (perpendicular to n), distance L."""
    n = rational_unit(draw(st.integers(-5, 5)), draw(st.integers(-5, 5)))
    w1 = tuple(draw(st.integers(-4, 4)) for _ in range(3))
    w2 = tuple(draw(st.integers(-4, 4)) for _ in range(3))
    u, v = cross(n, w1), cross(n, w2)
    c = tuple(draw(st.fractions(-10, 10, max_denominator=9)) for _ in range(3))
    L = draw(st.fractions(Fr(1, 1000), 20, max_denominator=1000))
    scale = draw(st.sampled_from([1, 1, 10**30]))
    offset = draw(st.sampled_from([0, 0, 10**30, Fr(1, 3)]))
    return tuple(x * scale + offset for x in c), n, mul(scale, u), mul(scale, v), L * scale


def _touch_probes(L):
    return [(L, False), (L + EPS, True), (L - EPS, False)]


@SETTINGS
@given(touching_setups(), st.fractions(min_value=Fr(1, 100), max_value=Fr(99, 100)))
def test_capsules_exact_touching(setup, frac):
    c, n, u, v, L = setup
    # skew (or parallel, or degenerate) segments in parallel planes at distance exactly L,
    # whose projections both contain c: the closest pair is interior-interior in general
    a1, b1 = sub(c, u), add(c, u)
    top = add(c, mul(L, n))
    a2, b2 = sub(top, v), add(top, v)
    assert O.dist2_segment_segment(a1, b1, a2, b2) == L * L
    for r, expected in _touch_probes(L):
        r1, r2 = split(r, frac)
        assert check_capsules(a1, b1, a2, b2, r1, r2) is expected


@SETTINGS
@given(touching_setups(), st.integers(0, 2))
def test_capsule_triangle_exact_touching(setup, kind):
    c, n, u, v, L = setup
    p0, p1, p2 = add(c, u), add(c, v), sub(sub(c, u), v)  # centroid c (degenerate if u || v)
    top = add(c, mul(L, n))
    if kind == 0:  # segment pointing away along the normal, touching with its end point
        a, b = top, add(top, mul(3, n))
    elif kind == 1:  # segment parallel to the plane at height L, crossing above c
        a, b = sub(top, add(u, mul(2, v))), add(top, add(u, mul(2, v)))
    else:  # sphere (zero-length segment)
        a = b = top
    assert O.dist2_segment_triangle(a, b, p0, p1, p2) == L * L
    for r, expected in _touch_probes(L):
        assert check_triangle(a, b, r, p0, p1, p2) is expected


# ---------------------------------------------------------------------------------------------
# 4. adversarial lists
# ---------------------------------------------------------------------------------------------

SEGMENT_PAIRS = [
    # parallel, collinear, overlapping, zero-length, crossing, touching ends (2-D and 3-D)
    ((0, 0), (4, 0), (1, 2), (3, 2)),
    ((0, 0), (4, 0), (5, 0), (9, 0)),
    ((0, 0), (4, 0), (4, 0), (9, 0)),
    ((0, 0), (4, 0), (2, 0), (3, 0)),
    ((0, 0), (4, 0), (9, 0), (5, 0)),
    ((0, 0), (0, 0), (0, 0), (0, 0)),
    ((1, 1), (1, 1), (0, 0), (2, 2)),
    ((1, 2), (1, 2), (0, 0), (2, 2)),
    ((0, 0), (4, 4), (0, 4), (4, 0)),
    ((0, 0), (2, 2), (3, 3), (4, 1)),
    ((0, 0, 0), (4, 0, 0), (2, -1, 3), (2, 1, 3)),
    ((0, 0, 0), (4, 0, 0), (2, -1, 0), (2, 1, 0)),
    ((0, 0, 0), (4, 0, 0), (5, -1, 3), (5, 1, 3)),
    ((0, 0, 0), (0, 0, 5), (0, 0, 5), (0, 0, 9)),
    ((0, 0, 0), (0, 0, 5), (0, 0, 7), (0, 0, 9)),
    ((0, 0, 0), (1, 1, 1), (2, 2, 2), (3, 3, 3)),
    ((0, 0, 0), (3, 3, 3), (1, 1, 1), (2, 2, 2)),
    ((0, 0, 0), (1, 2, 3), (1, 0, 0), (2, 2, 3)),
    ((0, 0, 0), (3, 0, 0), (1, 1, 1), (2, 1, 1)),
    ((0.1, 0.2, 0.3), (0.4, 0.5, 0.6), (0.3, 0.2, 0.1), (0.6, 0.5, 0.4)),
    ((1e4, 1e4, 0), (1e4 + 0.5, 1e4, 0), (1e4 + 0.25, 1e4 + 1e-4, 1e-4), (1e4 + 0.25, 1e4, 1)),
    ((1e-4, 0, 0), (2e-4, 0, 0), (1.5e-4, 1e-4, -1e-4), (1.5e-4, 1e-4, 1e-4)),
    ((Fr(1, 3), 0, 0), (Fr(2, 3), 0, 0), (Fr(1, 2), Fr(1, 7), -1), (Fr(1, 2), Fr(1, 7), 1)),
    ((10**30, 0, 0), (10**30 + 4, 0, 0), (10**30 + 2, 3, -1), (10**30 + 2, 3, 1)),
    ((-(10**30), 7, 10**30), (10**30, 7, -(10**30)), (0, 7 + 10**-1, 0), (3, 8, 5)),
]


@pytest.mark.parametrize("seg", SEGMENT_PAIRS)
def test_adversarial_segment_pairs(seg):
    a1, b1, a2, b2 = seg
    d2 = O.dist2_segment_segment(a1, b1, a2, b2)
    for r, expected in probe_radii(d2):
        for frac in (Fr(1, 2), Fr(1, 10**9)):
            r1, r2 = split(r, frac)
            assert check_capsules(a1, b1, a2, b2, r1, r2) is expected
    assert check_capsules(a1, b1, a2, b2, 1e-300, 1e-300) is (d2 == 0)


TRI = ((0, 0, 0), (4, 0, 0), (0, 4, 0))
SEGMENT_TRIANGLE = [
    ((1, 1, -1), (1, 1, 1), *TRI),  # piercing
    ((1, 1, 0), (1, 1, 3), *TRI),  # end point on the face
    ((4, 0, -1), (4, 0, 1), *TRI),  # through a vertex
    ((2, 2, -1), (2, 2, 1), *TRI),  # through an edge
    ((3, 3, -1), (3, 3, 1), *TRI),  # misses next to the hypotenuse
    ((-5, 1, 2), (5, 1, 2), *TRI),  # parallel above
    ((-1, 1, 0), (1, 1, 0), *TRI),  # coplanar, crossing an edge
    ((-1, 1, 0), (-1, 3, 0), *TRI),  # coplanar, outside, parallel to an edge
    ((1, 1, 0), (2, 1, 0), *TRI),  # coplanar, inside
    ((-2, -2, 0), (6, 6, 0), *TRI),  # coplanar, through a vertex and across
    ((5, 5, 0), (6, 6, 0), *TRI),  # coplanar, outside
    ((1, 1, 2), (1, 1, 2), *TRI),  # sphere above
    ((6, -1, 1), (6, 1, 1), *TRI),  # beyond a vertex
    ((1, -1, 0), (1, 1, 0), (0, 0, 0), (2, 0, 0), (4, 0, 0)),  # degenerate, crossing
    ((1, 2, 0), (1, 3, 0), (0, 0, 0), (2, 0, 0), (4, 0, 0)),  # degenerate, off
    ((1, 2, 2), (1, 2, 2), (1, 0, 0), (1, 0, 0), (1, 0, 0)),  # point triangle, sphere
    ((0, 0), (3, 3), (1, 0), (3, 0), (2, 2)),  # 2-D
    ((5, 5), (6, 7), (1, 0), (3, 0), (2, 2)),  # 2-D apart
    (
        (1e4 + 0.5, 1e4 + 0.5, 1e-4),
        (1e4 + 0.5, 1e4 + 0.5, 1),
        (1e4, 1e4, 0),
        (1e4 + 1, 1e4, 0),
        (1e4, 1e4 + 1, 0),
    ),
    ((2e-4, 2e-4, 1e-4), (3e-4, 1e-4, 1e-4), (0, 0, 0), (4e-4, 0, 0), (0, 4e-4, 0)),
    (
        (Fr(1, 3), Fr(1, 3), Fr(-1, 7)),
        (Fr(1, 3), Fr(1, 3), Fr(1, 7)),
        (0, 0, 0),
        (1, 0, 0),
        (0, 1, 0),
    ),
    (
        (10**30 + 1, 10**30 + 1, 3),
        (10**30 + 1, 10**30 + 1, 5),
        (10**30, 10**30, 0),
        (10**30 + 4, 10**30, 0),
        (10**30, 10**30 + 4, 0),
    ),
]


@pytest.mark.parametrize("case", SEGMENT_TRIANGLE)
def test_adversarial_segment_triangle(case):
    a, b, p0, p1, p2 = case
    d2 = O.dist2_segment_triangle(a, b, p0, p1, p2)
    for r, expected in probe_radii(d2):
        assert check_triangle(a, b, r, p0, p1, p2) is expected
    assert check_triangle(a, b, 1e-300, p0, p1, p2) is (d2 == 0)


def test_touching_is_not_intersecting_named_cases():
    # spheres touching, parallel capsules touching, capsule resting on a triangle
    assert not capsules_intersect((0, 0, 0), (0, 0, 0), 1, (2, 0, 0), (2, 0, 0), 1)
    assert capsules_intersect((0, 0, 0), (0, 0, 0), 1, (2, 0, 0), (2, 0, 0), 1 + EPS)
    assert not capsules_intersect((0, 0, 0), (0, 0, 0), 1 - EPS, (2, 0, 0), (2, 0, 0), 1)
    assert not capsules_intersect((0, 0), (5, 0), 0.5, (1, 1), (4, 1), 0.5)
    assert capsules_intersect((0, 0), (5, 0), 0.5, (1, 1), (4, 1), Fr(1, 2) + EPS)
    # 3-4-5 skew pair: closest points interior-interior at distance exactly 5
    assert not capsules_intersect((-1, 0, 0), (1, 0, 0), 2, (0, -1, 5), (0, 1, 5), 3)
    assert capsules_intersect((-1, 0, 0), (1, 0, 0), 2, (0, -1, 5), (0, 1, 5), 3 + EPS)
    assert not capsule_triangle_intersect((1, 1, 1), (1, 1, 9), 1, *TRI)
    assert capsule_triangle_intersect((1, 1, 1), (1, 1, 9), 1 + EPS, *TRI)
    assert not capsule_triangle_intersect((1, 1, 1), (1, 1, 9), 1 - EPS, *TRI)


def test_big_integers_do_not_overflow():
    big = 10**60
    # touching exactly at distance 3 * 10**40 far from the origin, then +-1 (relative 1e-40)
    a1, b1 = (big, big, -big), (big + 2 * 10**40, big, -big)
    a2, b2 = (
        (big + 10**40, big - 10**40, -big + 3 * 10**40),
        (big + 10**40, big + 10**40, -big + 3 * 10**40),
    )
    r = 3 * 10**40
    assert not capsules_intersect(a1, b1, r - 10**40, a2, b2, 10**40)
    assert capsules_intersect(a1, b1, r - 10**40 + 1, a2, b2, 10**40)
    assert not capsules_intersect(a1, b1, r - 10**40 - 1, a2, b2, 10**40)
    tri = ((big, big, -big), (big + 10**50, big, -big), (big, big + 10**50, -big))
    top = (big + 5, big + 7, -big + r)
    assert not capsule_triangle_intersect(top, top, r, *tri)
    assert capsule_triangle_intersect(top, top, r + Fr(1, 10**30), *tri)
    # floats at the limit of the float range work too (exact conversion, no overflow)
    far = (2e300, 0.0)  # == 2 * 1e300 exactly in binary
    assert not capsules_intersect((0.0, 0.0), (0.0, 0.0), 1e300, far, far, 1e300)
    assert capsules_intersect(
        (0.0, 0.0), (0.0, 0.0), 1e300, far, far, math.nextafter(1e300, math.inf)
    )


def test_numpy_inputs_are_accepted():
    # Fractions built from numpy ints are normalised to Python ints (no int64 wrap-around)
    big = np.int64(2**62)
    r = Fr(big, np.int64(1))
    assert not capsules_intersect((0, 0), (0, 0), r, (2**63, 0), (2**63, 0), r)
    assert capsules_intersect((0, 0), (0, 0), r + 1, (2**63, 0), (2**63, 0), r)
    a = np.array([0.0, 0.0, 0.0])
    b = np.array([4.0, 0.0, 0.0])
    assert capsules_intersect(a, b, np.float64(1.0), a + [2, 2, 0], b + [0, 2, 0], np.float32(1.5))
    assert not capsules_intersect(a, b, np.float64(1.0), a + [2, 2, 0], b + [0, 2, 0], 1)
    tri = np.array(TRI, dtype=np.int64)
    assert capsule_triangle_intersect(np.array([1, 1, 1]), np.array([1, 1, 3]), np.int64(2), *tri)


# ---------------------------------------------------------------------------------------------
# 5. bad input
# ---------------------------------------------------------------------------------------------

GOOD_CC = {"a1": (0, 0, 0), "b1": (1, 0, 0), "r1": 1, "a2": (0, 3, 0), "b2": (1, 3, 0), "r2": 1}
GOOD_CT = {
    "a": (0, 0, 1),
    "b": (1, 0, 1),
    "r": 1,
    "p0": (0, 0, 0),
    "p1": (1, 0, 0),
    "p2": (0, 1, 0),
}

BAD_VALUES = [
    ("a1", (float("nan"), 0, 0)),
    ("b1", (0, float("inf"), 0)),
    ("a2", (0, 0, 0, 0)),
    ("b2", (1,)),
    ("a1", "abc"),
    ("b1", None),
    ("a2", (0, "x", 0)),
    ("b1", (0, 0)),  # dimension differs from a1
    ("r1", 0),
    ("r2", -1),
    ("r1", float("nan")),
    ("r2", float("inf")),
    ("r1", "1"),
    ("r2", None),
    ("r1", -0.0),
]


@pytest.mark.parametrize(("name", "value"), BAD_VALUES)
def test_capsules_intersect_bad_input_names_argument(name, value):
    args = dict(GOOD_CC, **{name: value})
    with pytest.raises(ValueError, match=name):
        capsules_intersect(**args)


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("a", (float("nan"), 0, 0)),
        ("b", (0, 0, float("-inf"))),
        ("p0", (0, 0, 0, 1)),
        ("p1", (0, 0)),
        ("p2", "xyz"),
        ("p2", (True, 0, 0)),
        ("r", 0),
        ("r", -2.5),
        ("r", float("nan")),
        ("r", [1]),
    ],
)
def test_capsule_triangle_bad_input_names_argument(name, value):
    args = dict(GOOD_CT, **{name: value})
    with pytest.raises(ValueError, match=name):
        capsule_triangle_intersect(**args)


def test_good_inputs_for_the_bad_input_tests_are_valid():
    assert not capsules_intersect(**GOOD_CC)
    assert not capsule_triangle_intersect(**GOOD_CT)


# ---------------------------------------------------------------------------------------------
# 6. core.exact as the tie-breaker of the single-capsule float verdicts (core.contact)
# ---------------------------------------------------------------------------------------------


def _touching_cases(seed, n):
    """Spheres and capsules placed at distance ~r from a triangle in float (so the exact
    distance is r up to rounding): over the face, beside an edge, off a vertex, lying flat."""
    rng = np.random.default_rng(seed)
    out = []
    for i in range(n):
        a, b, c = rng.uniform(-1, 1, (3, 3)) * (1e4 if i % 5 == 4 else 1.0)
        if i % 5 == 4:
            b, c = a + (b - a) * 1e-4, a + (c - a) * 1e-4  # 10 km from the origin, 1 m wide
        nrm = np.cross(b - a, c - a)
        nrm /= np.linalg.norm(nrm)
        r = float(rng.uniform(0.1, 1.0))
        kind = i % 4
        if kind == 0:  # over the face
            w = rng.dirichlet([1, 1, 1])
            p = w[0] * a + w[1] * b + w[2] * c + r * nrm
            q = p
        elif kind == 1:  # beside the middle of edge ab, in the plane
            m = 0.5 * (a + b)
            out_dir = np.cross(b - a, nrm)
            out_dir /= np.linalg.norm(out_dir)
            if np.dot(out_dir, c - m) > 0:
                out_dir = -out_dir
            p = q = m + r * out_dir
        elif kind == 2:  # off vertex a, away from the triangle
            d = a - (a + b + c) / 3
            p = q = a + r * d / np.linalg.norm(d)
        else:  # a capsule lying flat over the face
            w = rng.dirichlet([1, 1, 1])
            x = w[0] * a + w[1] * b + w[2] * c + r * nrm
            p, q = x, x + 0.3 * (b - a)
        out.append((p, q, r, a, b, c))
    return out


def test_single_capsule_verdicts_at_the_touching_boundary_are_exact():
    """Issue 13 ("docs match code"): core.exact is the tie-breaker for borderline float
    results. Capsules placed at distance r from a triangle in float: the float kernel alone
    disagreed with exact arithmetic in ~20 % of them; sphere_triangle and capsule_triangle
    now agree with core.exact on every one, and a contact they report has depth > 0."""
    from capsule_collision.core import Capsule, capsule_triangle, sphere_triangle
    from capsule_collision.core.geometry.contact import capsule_triangle_many

    float_disagrees = 0
    for p, q, r, a, b, c in _touching_cases(7, 300):
        truth = capsule_triangle_intersect(p, q, r, a, b, c)
        float_disagrees += bool(capsule_triangle_many(p, q, r, a, b, c)[0][0]) != truth
        got = capsule_triangle(Capsule(p, q, r), a, b, c)
        assert (got is not None) == truth, (p, q, r, a, b, c)
        if got is not None:
            assert got.depth > 0.0
        if np.array_equal(p, q):
            assert (sphere_triangle(p, r, a, b, c) is not None) == truth
    assert float_disagrees > 10  # the cases really sit on the boundary


def test_tie_band_leaves_clear_verdicts_to_float():
    """Away from the boundary the exact predicate is never consulted (the band is ~1e-13
    relative): a sphere 1e-9 inside or outside keeps the float verdict and its depth."""
    from capsule_collision.core.geometry.contact import settle_touching, touching_band

    a, b, c = np.array([0.0, 0, 0]), np.array([2.0, 0, 0]), np.array([0.0, 2, 0])
    p = np.array([0.5, 0.5, 0.3])
    assert touching_band(p, p, 0.3, a, b, c) == pytest.approx(2e-13)
    assert settle_touching(p, p, 0.3 + 1e-9, a, b, c, True, 1e-9) == (True, 1e-9)
    assert settle_touching(p, p, 0.3 - 1e-9, a, b, c, False, -1e-9) == (False, -1e-9)
    # exactly touching (0.3 is the same float on both sides): never a contact
    assert settle_touching(p, p, 0.3, a, b, c, True, 0.0)[0] is False


def test_settle_touching_many_equals_the_single_verdicts():
    """The mesh-side form (one capsule, K triangles) gives the single form's verdicts."""
    from capsule_collision.core.geometry.contact import (
        capsule_triangle_many,
        settle_touching,
        settle_touching_many,
    )

    for p, q, r, a, b, c in _touching_cases(11, 20):
        A = np.array([a, a + 5.0, a])
        B = np.array([b, b + 5.0, b])
        C = np.array([c, c + 5.0, c])
        hit, depth, _, _ = capsule_triangle_many(p, q, r, A, B, C)
        got_hit, got_depth = settle_touching_many(p, q, r, A, B, C, hit, depth)
        for i in range(3):
            assert (got_hit[i], got_depth[i]) == settle_touching(
                p, q, r, A[i], B[i], C[i], bool(hit[i]), float(depth[i]))


def test_mesh_single_capsule_verdicts_at_the_touching_boundary_are_exact():
    """The same borderline placements through TriangleMesh (penetrating_triangles and
    capsule_contacts, the single-capsule routes): the verdicts are core.exact's."""
    from capsule_collision.core import Capsule, TriangleMesh

    float_disagrees = 0
    for p, q, r, a, b, c in _touching_cases(7, 300):
        truth = capsule_triangle_intersect(p, q, r, a, b, c)
        mesh = TriangleMesh(np.array([a, b, c]), np.array([[0, 1, 2]]))
        capsule = Capsule(p, q, r)
        float_disagrees += bool(len(mesh.capsule_contacts_many(
            p[None], q[None], r).triangle)) != truth
        assert (len(mesh.penetrating_triangles(capsule)) == 1) == truth, (p, q, r, a, b, c)
        contacts = mesh.capsule_contacts(capsule)
        assert (len(contacts) == 1) == truth
        assert all(contact.depth > 0.0 for contact in contacts)
    assert float_disagrees > 10  # the float route alone does get these wrong
