"""core.closest against the exact Fraction oracle (tests/core/oracle.py).

About 11,000 oracle evaluations per run (hypothesis cases x 4 frames + the adversarial lists),
all deterministic (hypothesis derandomize=True).

Accuracy criterion: |d - d_exact| <= 1e-9 * d_exact + 1e-14 * L, with L the size of the local
configuration (so a 0.1 mm configuration is judged at its own scale and a 10 km offset adds
nothing); returned points additionally carry the rounding of their absolute coordinates
(a few ulps of |x|, ~2e-12 m at 10 km).
"""

import itertools
import math

import numpy as np
import oracle  # noqa: E402
import pytest
from capsule_collision.core.geometry.closest import (  # noqa: E402
    closest_point_segment,
    closest_point_triangle,
    closest_point_triangle_many,
    closest_points_segment_segment,
    closest_points_segment_segment_many,
    closest_points_segment_triangle,
    closest_points_segment_triangle_many,
)
from frames import FRAME_IDS, FRAMES, SETTINGS, in_frame, size  # noqa: E402
from hypothesis import given, settings
from hypothesis import strategies as st

EPS = np.finfo(np.float64).eps
REL = 1e-9  # relative distance agreement with the oracle
ABS_REL_SCALE = 1e-14  # absolute floor, relative to the configuration size L (~45 ulps)



def _mag(points):
    return float(np.max(np.abs(np.asarray(points, dtype=np.float64))))


def _assert_dist(d, exact_d2, L, extra=0.0):
    exact = math.sqrt(exact_d2)
    err = abs(d - exact)
    assert err <= REL * exact + ABS_REL_SCALE * L + extra, (d, exact, L, err)


def _assert_on(dist2_to_primitive, L, M):
    """A returned point lies on its primitive (within rounding of its coordinates)."""
    tol = ABS_REL_SCALE * L + 8 * EPS * M
    assert math.sqrt(dist2_to_primitive) <= tol, (math.sqrt(dist2_to_primitive), tol)


# ---------------------------------------------------------------------------------------------
# case generation
# ---------------------------------------------------------------------------------------------


def _random_points(seed, mode, count):
    """count random points in [-1, 1]^3 with an adversarial relation chosen by ``mode``."""
    rng = np.random.default_rng(seed)
    pts = rng.uniform(-1.0, 1.0, size=(count, 3))
    if mode == "general":
        pass
    elif mode == "dyadic":  # small grid: many exact ties, coplanarities, collinearities
        pts = rng.integers(-2, 3, size=(count, 3)) / 2.0
    elif mode == "zero_length_first":
        pts[1] = pts[0]
    elif mode == "parallel":  # second pair parallel to the first (exactly, dyadic)
        pts = rng.integers(-4, 5, size=(count, 3)) / 4.0
        pts[3] = pts[2] + (pts[1] - pts[0]) * rng.choice([-2.0, -0.5, 0.5, 1.0, 2.0])
    elif mode == "collinear":  # all on one line (dyadic parameters, exact)
        o = rng.integers(-4, 5, size=3) / 4.0
        d = rng.integers(-2, 3, size=3) / 2.0
        pts = o + rng.integers(-8, 9, size=(count, 1)) / 8.0 * d
    elif mode == "degenerate_triangle":  # last three points collinear or coincident
        pts = rng.integers(-4, 5, size=(count, 3)) / 4.0
        k = rng.integers(-4, 9) / 4.0
        pts[-1] = pts[-3] + k * (pts[-2] - pts[-3])
        if rng.random() < 0.3:
            pts[-2] = pts[-3]
    elif mode == "sliver":  # nearly collinear triangle
        w = 10.0 ** rng.uniform(-14, -3)
        pts[-1] = pts[-3] + rng.uniform(-1, 2) * (pts[-2] - pts[-3]) + w * rng.normal(size=3)
    elif mode == "near_parallel":
        ang = 10.0 ** rng.uniform(-17, -1)
        d = pts[1] - pts[0]
        pts[3] = pts[2] + rng.choice([-1.5, 0.7, 1.3]) * (d + ang * rng.normal(size=3))
    elif mode == "near_touching":  # second pair through a point close to the first segment
        x = pts[0] + rng.uniform(-0.2, 1.2) * (pts[1] - pts[0]) + 1e-9 * rng.normal(size=3)
        v = rng.normal(size=3)
        pts[2] = x - rng.uniform(0, 1) * v
        pts[3] = x + rng.uniform(0, 1) * v
    elif mode == "point_on_triangle":  # first point on the triangle (last three points)
        a, b, c = pts[-3:]
        u, v = rng.dirichlet([1, 1, 1])[:2] if rng.random() < 0.5 else (rng.choice([0, 1]), 0.0)
        pts[0] = a + u * (b - a) + v * (c - a)
    elif mode == "segment_parallel_to_triangle":
        a, b, c = pts[-3:]
        n = np.cross(b - a, c - a)
        h = rng.uniform(-0.3, 0.3)
        pts[0] = a + rng.uniform(-1, 1) * (b - a) + rng.uniform(-1, 1) * (c - a)
        pts[1] = pts[0] + rng.uniform(-1, 1) * (b - a) + rng.uniform(-1, 1) * (c - a)
        pts[0] = pts[0] + h * n
        pts[1] = pts[1] + h * n
    elif mode == "crossing_triangle":
        a, b, c = pts[-3:]
        x = a + 0.3 * (b - a) + 0.3 * (c - a)
        v = rng.normal(size=3)
        pts[0] = x - v
        pts[1] = x + v
    else:
        raise AssertionError(mode)
    return [p for p in pts]


MODES = [
    "general",
    "dyadic",
    "zero_length_first",
    "parallel",
    "collinear",
    "degenerate_triangle",
    "sliver",
    "near_parallel",
    "near_touching",
    "point_on_triangle",
    "segment_parallel_to_triangle",
    "crossing_triangle",
]

cases = st.tuples(st.integers(0, 2**32 - 1), st.sampled_from(MODES))


# ---------------------------------------------------------------------------------------------
# checks shared by the hypothesis and adversarial tests
# ---------------------------------------------------------------------------------------------


def check_point_segment(p, a, b):
    L, M = size([p, a, b]), _mag([p, a, b])
    c = closest_point_segment(p, a, b)
    _, exact_d2 = oracle.closest_point_segment(p, a, b)
    _assert_dist(float(np.linalg.norm(p - c)), exact_d2, L, 8 * EPS * M)
    _assert_on(oracle.dist2_point_segment(c, a, b), L, M)


def check_segment_segment(p1, q1, p2, q2):
    L, M = size([p1, q1, p2, q2]), _mag([p1, q1, p2, q2])
    _, _, exact_d2 = oracle.closest_points_segment_segment(p1, q1, p2, q2)
    c1, c2, d2 = closest_points_segment_segment_many(p1, q1, p2, q2)
    _assert_dist(math.sqrt(d2[0]), exact_d2, L)
    s1, s2 = closest_points_segment_segment(p1, q1, p2, q2)
    np.testing.assert_array_equal(s1, c1[0])
    np.testing.assert_array_equal(s2, c2[0])
    _assert_dist(float(np.linalg.norm(s1 - s2)), exact_d2, L, 16 * EPS * M)
    _assert_on(oracle.dist2_point_segment(s1, p1, q1), L, M)
    _assert_on(oracle.dist2_point_segment(s2, p2, q2), L, M)
    # argument-order symmetry: swapped segments, reversed segments
    t2, t1 = closest_points_segment_segment(p2, q2, p1, q1)
    _assert_dist(float(np.linalg.norm(t1 - t2)), exact_d2, L, 16 * EPS * M)
    r1, r2 = closest_points_segment_segment(q1, p1, q2, p2)
    _assert_dist(float(np.linalg.norm(r1 - r2)), exact_d2, L, 16 * EPS * M)


def check_point_triangle(p, a, b, c):
    L, M = size([p, a, b, c]), _mag([p, a, b, c])
    _, exact_d2 = oracle.closest_point_triangle(p, a, b, c)
    x, d2 = closest_point_triangle_many(p, a, b, c)
    _assert_dist(math.sqrt(d2[0]), exact_d2, L)
    y = closest_point_triangle(p, a, b, c)
    np.testing.assert_array_equal(y, x[0])
    _assert_dist(float(np.linalg.norm(p - y)), exact_d2, L, 16 * EPS * M)
    _assert_on(oracle.closest_point_triangle(y, a, b, c)[1], L, M)
    for u, v, w in itertools.permutations((a, b, c)):  # vertex order does not matter
        _, d2p = closest_point_triangle_many(p, u, v, w)
        _assert_dist(math.sqrt(d2p[0]), exact_d2, L)


def check_segment_triangle(p, q, a, b, c, permutations=True):
    L, M = size([p, q, a, b, c]), _mag([p, q, a, b, c])
    _, _, exact_d2 = oracle.closest_points_segment_triangle(p, q, a, b, c)
    s, t, d2 = closest_points_segment_triangle_many(p, q, a, b, c)
    _assert_dist(math.sqrt(d2[0]), exact_d2, L)
    if exact_d2 > 0 and oracle.segment_intersects_triangle(p, q, a, b, c) is False:
        assert d2[0] > 0 or math.sqrt(exact_d2) <= ABS_REL_SCALE * L
    s1, t1 = closest_points_segment_triangle(p, q, a, b, c)
    np.testing.assert_array_equal(s1, s[0])
    np.testing.assert_array_equal(t1, t[0])
    _assert_dist(float(np.linalg.norm(s1 - t1)), exact_d2, L, 16 * EPS * M)
    _assert_on(oracle.dist2_point_segment(s1, p, q), L, M)
    _assert_on(oracle.closest_point_triangle(t1, a, b, c)[1], L, M)
    if permutations:
        for u, v, w in itertools.permutations((a, b, c)):
            _, _, d2p = closest_points_segment_triangle_many(p, q, u, v, w)
            _assert_dist(math.sqrt(d2p[0]), exact_d2, L)
        _, _, d2r = closest_points_segment_triangle_many(q, p, a, b, c)
        _assert_dist(math.sqrt(d2r[0]), exact_d2, L)


# ---------------------------------------------------------------------------------------------
# property tests (hypothesis, deterministic)
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("frame", FRAMES, ids=FRAME_IDS)
@SETTINGS
@given(case=cases)
def test_point_segment_matches_oracle(frame, case):
    p, a, b = in_frame(_random_points(case[0], case[1], 5)[2:], frame)
    check_point_segment(p, a, b)


@pytest.mark.parametrize("frame", FRAMES, ids=FRAME_IDS)
@SETTINGS
@given(case=cases)
def test_segment_segment_matches_oracle(frame, case):
    p1, q1, p2, q2 = in_frame(_random_points(case[0], case[1], 4), frame)
    check_segment_segment(p1, q1, p2, q2)


@pytest.mark.parametrize("frame", FRAMES, ids=FRAME_IDS)
@SETTINGS
@given(case=cases)
def test_point_triangle_matches_oracle(frame, case):
    p, _, a, b, c = in_frame(_random_points(case[0], case[1], 5), frame)
    check_point_triangle(p, a, b, c)


@pytest.mark.parametrize("frame", FRAMES, ids=FRAME_IDS)
@settings(max_examples=150, derandomize=True, deadline=None)
@given(case=cases)
def test_segment_triangle_matches_oracle(frame, case):
    p, q, a, b, c = in_frame(_random_points(case[0], case[1], 5), frame)
    check_segment_triangle(p, q, a, b, c, permutations=case[0] % 4 == 0)


@settings(max_examples=200, derandomize=True, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), log_angle=st.floats(-17.0, -1.0))
def test_nearly_parallel_segments(seed, log_angle):
    """Pins PARALLEL_SIN2: nearly parallel, overlapping segments at every angle down to 1e-17."""
    rng = np.random.default_rng(seed)
    p1 = rng.uniform(-1, 1, 3)
    d = rng.normal(size=3)
    p2 = p1 + 10.0 ** rng.uniform(-9, 0) * rng.normal(size=3) + rng.uniform(-0.5, 0.5) * d
    q1 = p1 + d
    q2 = p2 + rng.choice([-1.0, 1.0]) * (d + 10.0**log_angle * rng.normal(size=3))
    for frame in FRAMES[:2]:
        check_segment_segment(*in_frame([p1, q1, p2, q2], frame))


# ---------------------------------------------------------------------------------------------
# adversarial lists (dyadic, so every relation is exact in all four frames)
# ---------------------------------------------------------------------------------------------

X0, X1, X2, X3 = (0, 0, 0), (1, 0, 0), (2, 0, 0), (3, 0, 0)
SEGMENT_PAIRS = {
    "parallel_disjoint": [X0, X1, (2, 1, 0), (3, 1, 0)],
    "parallel_overlapping": [X0, X1, (0.5, 0.25, 0.5), (1.5, 0.25, 0.5)],
    "antiparallel_contained": [X0, X3, (2, 0.5, 0), (1, 0.5, 0)],
    "collinear_overlapping": [X0, X1, (0.5, 0, 0), X2],
    "collinear_reversed": [X0, X2, X3, (1, 0, 0)],
    "collinear_disjoint": [X0, X1, X2, X3],
    "identical": [X0, X1, X0, X1],
    "identical_reversed": [X0, X1, X1, X0],
    "zero_length_vs_segment": [(0.5, 1, 0), (0.5, 1, 0), X0, X1],
    "zero_length_on_segment": [(0.5, 0, 0), (0.5, 0, 0), X0, X1],
    "both_zero_length": [(0.5, 1, 0), (0.5, 1, 0), (1, 1, 1), (1, 1, 1)],
    "zero_length_coincident": [X1, X1, X1, X1],
    "crossing": [X0, X2, (1, -1, 0), (1, 1, 0)],
    "t_junction": [X0, X2, (1, 0, 0), (1, 1, 0)],
    "shared_endpoint": [X0, X1, X1, (1, 1, 0)],
    "skew": [X0, X2, (1, -1, 1), (1, 1, 1)],
    "skew_clamped": [X0, X1, (3, -1, 1), (3, 1, 1)],
}

TRI = [(0, 0, 0), (4, 0, 0), (0, 4, 0)]
POINT_TRIANGLES = {
    "face": [(1, 1, 1)] + TRI,
    "on_face": [(1, 1, 0)] + TRI,
    "vertex_a": [(-1, -1, 1)] + TRI,
    "vertex_b": [(5, -1, 0)] + TRI,
    "vertex_c": [(-1, 5, -2)] + TRI,
    "edge_ab": [(2, -1, 1)] + TRI,
    "edge_bc": [(3, 3, 1)] + TRI,
    "edge_ca": [(-1, 2, -1)] + TRI,
    "on_vertex": [(4, 0, 0)] + TRI,
    "on_edge": [(2, 2, 0)] + TRI,
    "degenerate_collinear": [(1, 1, 1), (0, 0, 0), (4, 0, 0), (2, 0, 0)],
    "degenerate_collinear_outside": [(6, 1, 0), (0, 0, 0), (2, 0, 0), (4, 0, 0)],
    "degenerate_two_equal": [(1, 1, 1), (0, 0, 0), (0, 0, 0), (4, 0, 0)],
    "degenerate_point": [(1, 1, 1), (1, 0, 0), (1, 0, 0), (1, 0, 0)],
    "degenerate_point_on": [(1, 0, 0), (1, 0, 0), (1, 0, 0), (1, 0, 0)],
    "sliver_above": [(2, 2.0**-30, 1), (0, 0, 0), (4, 0, 0), (2, 2.0**-30, 0)],
    "sliver_beside": [(2, 1, 0.0), (0, 0, 0), (4, 0, 0), (2, 2.0**-30, 0)],
    "sliver_needle": [(0.5, 0.5, 0.5), (0, 0, 0), (0, 2.0**-30, 0), (4, 0, 2.0**-31)],
    "obtuse": [(3, 3, 1), (0, 0, 0), (4, 0, 0), (8, 1, 0)],
}

SEGMENT_TRIANGLES = {
    "crossing_face": [(1, 1, 1), (1, 1, -1)] + TRI,
    "crossing_oblique": [(0.5, 1, 1), (1.5, 0.5, -3)] + TRI,
    "crossing_through_edge": [(2, 0, 1), (2, 0, -1)] + TRI,
    "crossing_through_vertex": [(4, 0, 1), (4, 0, -1)] + TRI,
    "endpoint_on_face": [(1, 1, 0), (1, 1, 2)] + TRI,
    "missing_beside_edge": [(3, 3, 1), (3, 3, -1)] + TRI,
    "parallel_above_face": [(1, 1, 1), (2, 1, 1)] + TRI,
    "parallel_above_outside": [(5, 5, 1), (6, 4, 1)] + TRI,
    "parallel_above_across_edge": [(1, 1, 0.5), (5, 5, 0.5)] + TRI,
    "in_plane_inside": [(1, 1, 0), (2, 1, 0)] + TRI,
    "in_plane_crossing_edge": [(1, 1, 0), (5, 5, 0)] + TRI,
    "in_plane_outside": [(5, 0, 0), (5, 5, 0)] + TRI,
    "in_plane_on_edge": [(1, 0, 0), (3, 0, 0)] + TRI,
    "grazing_edge": [(3, 3, 1), (1, 5, 1)] + TRI,
    "skew_near_edge": [(2, -1, 1), (2, 1, -1 - 2.0**-20)] + TRI,
    "zero_length_above": [(1, 1, 1), (1, 1, 1)] + TRI,
    "zero_length_on": [(1, 1, 0), (1, 1, 0)] + TRI,
    "degenerate_triangle_crossed": [(1, -1, 0), (1, 1, 0), (0, 0, 0), (4, 0, 0), (2, 0, 0)],
    "degenerate_triangle_skew": [(1, -1, 1), (1, 1, 1), (0, 0, 0), (4, 0, 0), (2, 0, 0)],
    "degenerate_triangle_collinear": [(5, 0, 0), (6, 0, 0), (0, 0, 0), (4, 0, 0), (2, 0, 0)],
    "degenerate_point_triangle": [(0, -1, 1), (0, 1, 1)] + [(1, 0, 0)] * 3,
    "sliver_crossed": [(2, 2.0**-31, 1), (2, 2.0**-31, -1), (0, 0, 0), (4, 0, 0), (2, 2.0**-30, 0)],
    "sliver_parallel_above": [(1, 0, 1), (3, 0, 1), (0, 0, 0), (4, 0, 0), (2, 2.0**-30, 0)],
}


@pytest.mark.parametrize("frame", FRAMES, ids=FRAME_IDS)
@pytest.mark.parametrize("name", sorted(SEGMENT_PAIRS))
def test_segment_segment_adversarial(name, frame):
    pts = in_frame(SEGMENT_PAIRS[name], frame)
    check_segment_segment(*pts)
    check_point_segment(pts[0], pts[2], pts[3])


@pytest.mark.parametrize("frame", FRAMES, ids=FRAME_IDS)
@pytest.mark.parametrize("name", sorted(POINT_TRIANGLES))
def test_point_triangle_adversarial(name, frame):
    check_point_triangle(*in_frame(POINT_TRIANGLES[name], frame))


@pytest.mark.parametrize("frame", FRAMES, ids=FRAME_IDS)
@pytest.mark.parametrize("name", sorted(SEGMENT_TRIANGLES))
def test_segment_triangle_adversarial(name, frame):
    check_segment_triangle(*in_frame(SEGMENT_TRIANGLES[name], frame))


# ---------------------------------------------------------------------------------------------
# exact expectations and determinism
# ---------------------------------------------------------------------------------------------


def test_parallel_overlap_gives_midpoint_pair_symmetric_under_swap():
    p1, q1, p2, q2 = map(np.array, ([0.0, 0, 0], [2.0, 0, 0], [1.0, 1, 0], [3.0, 1, 0]))
    c1, c2 = closest_points_segment_segment(p1, q1, p2, q2)
    np.testing.assert_array_equal(c1, [1.5, 0, 0])
    np.testing.assert_array_equal(c2, [1.5, 1, 0])
    d2, d1 = closest_points_segment_segment(p2, q2, p1, q1)
    np.testing.assert_array_equal(d1, c1)
    np.testing.assert_array_equal(d2, c2)


def test_collinear_overlap_distance_zero_at_overlap_midpoint():
    c1, c2 = closest_points_segment_segment([0, 0, 0], [1, 0, 0], [2, 0, 0], [0.5, 0, 0])
    np.testing.assert_array_equal(c1, [0.75, 0, 0])
    np.testing.assert_array_equal(c2, [0.75, 0, 0])


def test_zero_length_segments_are_points():
    c1, c2 = closest_points_segment_segment([1, 2, 3], [1, 2, 3], [0, 0, 0], [0, 0, 4])
    np.testing.assert_array_equal(c1, [1, 2, 3])
    np.testing.assert_array_equal(c2, [0, 0, 3])
    c1, c2 = closest_points_segment_segment([1, 2, 3], [1, 2, 3], [5, 5, 5], [5, 5, 5])
    np.testing.assert_array_equal(c1, [1, 2, 3])
    np.testing.assert_array_equal(c2, [5, 5, 5])


def test_degenerate_triangle_is_its_segment_no_nan():
    with np.errstate(all="raise"):
        x = closest_point_triangle([1, 1, 0], [0, 0, 0], [4, 0, 0], [2, 0, 0])
        np.testing.assert_array_equal(x, [1, 0, 0])
        x = closest_point_triangle([7, 1, 0], [3, 3, 3], [3, 3, 3], [3, 3, 3])
        np.testing.assert_array_equal(x, [3, 3, 3])
        s, t = closest_points_segment_triangle(
            [1, -1, 0], [1, 1, 0], [0, 0, 0], [4, 0, 0], [2, 0, 0]
        )
        np.testing.assert_array_equal(s, [1, 0, 0])
        np.testing.assert_array_equal(t, [1, 0, 0])


def test_segment_crossing_triangle_returns_crossing_point():
    s, t = closest_points_segment_triangle([1, 1, 1], [1, 1, -3], *TRI)
    np.testing.assert_array_equal(s, [1, 1, 0])
    np.testing.assert_array_equal(t, [1, 1, 0])


# ---------------------------------------------------------------------------------------------
# *_many equals the scalar functions elementwise (and broadcasting)
# ---------------------------------------------------------------------------------------------


def _batch(seed, count):
    rows = [
        in_frame(_random_points(seed + i, MODES[i % len(MODES)], 5), FRAMES[i % len(FRAMES)])
        for i in range(count)
    ]
    return [np.array(col) for col in zip(*rows, strict=False)]


def test_many_equals_scalar_elementwise():
    p, q, a, b, c = _batch(1000, 96)
    c1, c2, d2 = closest_points_segment_segment_many(p, q, a, b)
    x, dx = closest_point_triangle_many(p, a, b, c)
    s, t, ds = closest_points_segment_triangle_many(p, q, a, b, c)
    for i in range(len(p)):
        e1, e2 = closest_points_segment_segment(p[i], q[i], a[i], b[i])
        np.testing.assert_array_equal(c1[i], e1)
        np.testing.assert_array_equal(c2[i], e2)
        np.testing.assert_array_equal(x[i], closest_point_triangle(p[i], a[i], b[i], c[i]))
        e1, e2 = closest_points_segment_triangle(p[i], q[i], a[i], b[i], c[i])
        np.testing.assert_array_equal(s[i], e1)
        np.testing.assert_array_equal(t[i], e2)
    assert c1.shape == x.shape == s.shape == t.shape == (96, 3)
    assert d2.shape == dx.shape == ds.shape == (96,)
    assert np.isfinite(d2).all() and np.isfinite(dx).all() and np.isfinite(ds).all()


def test_many_broadcasts_one_segment_against_many_triangles():
    p, q, a, b, c = _batch(2000, 40)
    s, t, d2 = closest_points_segment_triangle_many(p[0], q[0], a, b, c)
    for i in range(len(a)):
        e1, e2 = closest_points_segment_triangle(p[0], q[0], a[i], b[i], c[i])
        np.testing.assert_allclose(s[i], e1, rtol=0, atol=1e-12)
        np.testing.assert_allclose(t[i], e2, rtol=0, atol=1e-12)
    x, dx = closest_point_triangle_many(p, a[0], b[0], c[0])
    assert x.shape == (40, 3) and dx.shape == (40,)
    one = closest_points_segment_triangle_many(p[0], q[0], a[0], b[0], c[0])
    assert one[0].shape == (1, 3) and one[2].shape == (1,)
    empty = closest_points_segment_triangle_many(p[:0], q[:0], a[:0], b[:0], c[:0])
    assert empty[0].shape == (0, 3) and empty[2].shape == (0,)


# ---------------------------------------------------------------------------------------------
# validation
# ---------------------------------------------------------------------------------------------

PUBLIC = [
    (closest_point_segment, ["p", "a", "b"]),
    (closest_points_segment_segment, ["p1", "q1", "p2", "q2"]),
    (closest_point_triangle, ["p", "a", "b", "c"]),
    (closest_points_segment_triangle, ["p", "q", "a", "b", "c"]),
]
BAD = {
    "shape2": [1.0, 2.0],
    "shape4": [1.0, 2.0, 3.0, 4.0],
    "shapeN3": [[1.0, 2.0, 3.0]],
    "nan": [0.0, float("nan"), 0.0],
    "inf": [0.0, 0.0, float("inf")],
    "text": "abc",
}


@pytest.mark.parametrize("bad", sorted(BAD))
@pytest.mark.parametrize("fn,names", PUBLIC, ids=[f.__name__ for f, _ in PUBLIC])
def test_bad_input_raises_value_error_naming_argument(fn, names, bad):
    good = [[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0], [1.0, 1.0, 1.0]]
    for i, name in enumerate(names):
        args = good[: len(names)]
        args = args[:i] + [BAD[bad]] + args[i + 1 :]
        with pytest.raises(ValueError, match=rf"\b{name}\b"):
            fn(*args)
