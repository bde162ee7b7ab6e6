"""core.contact against the exact Fraction oracle (tests/core/oracle.py).

About 6,000 oracle evaluations per run (hypothesis cases x frames, boundary probes, named
regressions), all deterministic (hypothesis derandomize=True).

Checked: hit iff the exact distance is < the sum of radii (strict), depth = r - exact distance
when the axis is clear of the obstacle, unit normals, contact points on the obstacle, and that
moving the capsule by normal * (depth + 1e-7) separates it (exact oracle distance >= r).
"""

import math

import numpy as np
import oracle  # noqa: E402
import pytest
from capsule_collision.core.constants import CONTACT_SLOP  # noqa: E402
from capsule_collision.core.geometry.closest import closest_point_segment  # noqa: E402
from capsule_collision.core.geometry.contact import (  # noqa: E402
    capsule_capsule,
    capsule_triangle,
    capsule_triangle_many,
    sphere_triangle,
)
from capsule_collision.core.geometry.shapes import Capsule  # noqa: E402
from frames import FRAME_IDS, FRAMES, SETTINGS, in_frame, size  # noqa: E402
from hypothesis import given
from hypothesis import strategies as st

EPS = np.finfo(np.float64).eps
TRI = [(0.0, 0.0, 0.0), (4.0, 0.0, 0.0), (0.0, 4.0, 0.0)]


def _dist_seg_tri(p, q, a, b, c):
    return math.sqrt(oracle.closest_points_segment_triangle(p, q, a, b, c)[2])


def _dist_seg_seg(p1, q1, p2, q2):
    return math.sqrt(oracle.closest_points_segment_segment(p1, q1, p2, q2)[2])


def _check_triangle_contact(contact, p, q, r, a, b, c):
    """Contact (or None) of capsule p-q, r with triangle a, b, c against the oracle."""
    L = size([p, q, a, b, c]) + r
    exact = _dist_seg_tri(p, q, a, b, c)
    if exact < r * (1 - 1e-9):
        assert contact is not None, (exact, r)
    elif exact > r * (1 + 1e-9):
        assert contact is None, (exact, r, contact)
    if contact is None:
        return
    assert contact.triangle == -1
    assert contact.depth > 0
    assert abs(np.linalg.norm(contact.normal) - 1.0) < 1e-12
    if not oracle.segment_intersects_triangle(p, q, a, b, c) and exact > 1e-9 * L:
        assert abs(contact.depth - (r - exact)) <= 1e-9 * r + 1e-13 * L
    on = oracle.closest_point_triangle(contact.point, a, b, c)[1]
    assert math.sqrt(on) <= 1e-13 * L + 8 * EPS * np.abs(np.array([a, b, c])).max()
    move = contact.normal * (contact.depth + CONTACT_SLOP)
    assert _dist_seg_tri(p + move, q + move, a, b, c) >= r, "push-out does not separate"


def _check_capsule_contact(contact, c1, c2):
    r = c1.radius + c2.radius
    L = size([c1.a, c1.b, c2.a, c2.b]) + r
    exact = _dist_seg_seg(c1.a, c1.b, c2.a, c2.b)
    if exact < r * (1 - 1e-9):
        assert contact is not None
    elif exact > r * (1 + 1e-9):
        assert contact is None
    if contact is None:
        return
    assert contact.depth > 0 and contact.triangle == -1
    assert abs(np.linalg.norm(contact.normal) - 1.0) < 1e-12
    if exact > 1e-9 * L:
        assert abs(contact.depth - (r - exact)) <= 1e-9 * r + 1e-13 * L
    else:  # touching axes: depth r1 + r2 (or r - rounding-level distance)
        assert r - 1e-9 * L <= contact.depth <= r
    # point: on the surface of c2
    d_point = math.sqrt(oracle.dist2_point_segment(contact.point, c2.a, c2.b))
    # (a normal from a distance just above the touching threshold may be off by ~1e-5 rad)
    tol = 1e-8 * c2.radius + 1e-12 * L + 8 * EPS * np.abs(c2.a).max()
    assert abs(d_point - c2.radius) <= tol
    move = contact.normal * (contact.depth + CONTACT_SLOP)
    assert _dist_seg_seg(c1.a + move, c1.b + move, c2.a, c2.b) >= r, "push-out does not separate"


# ---------------------------------------------------------------------------------------------
# random configurations
# ---------------------------------------------------------------------------------------------


def _capsule_triangle_case(seed, mode):
    rng = np.random.default_rng(seed)
    a, b, c = rng.uniform(-1, 1, (3, 3))
    p, q = rng.uniform(-1, 1, (2, 3))
    r = float(10.0 ** rng.uniform(-1.5, 0.2))
    if mode == "crossing":
        x = a + rng.dirichlet([1, 1, 1])[1] * (b - a) + rng.uniform(0, 0.4) * (c - a)
        v = rng.normal(size=3)
        p, q = x - rng.uniform(0, 1) * v, x + rng.uniform(0, 1) * v
    elif mode == "sphere":
        q = p
    elif mode == "degenerate":
        c = a + rng.integers(-2, 4) / 2.0 * (b - a)
    elif mode == "parallel":
        n = np.cross(b - a, c - a)
        n /= np.linalg.norm(n)
        p = a + rng.uniform(-0.5, 1) * (b - a) + rng.uniform(-0.5, 1) * (c - a)
        q = p + rng.uniform(-1, 1) * (b - a) + rng.uniform(-1, 1) * (c - a)
        h = rng.uniform(-1, 1) * r
        p, q = p + h * n, q + h * n
    elif mode == "in_plane":
        p = a + rng.uniform(-0.5, 1) * (b - a) + rng.uniform(-0.5, 1) * (c - a)
        q = a + rng.uniform(-0.5, 1) * (b - a) + rng.uniform(-0.5, 1) * (c - a)
    return p, q, r, a, b, c


TRI_MODES = ["general", "crossing", "sphere", "degenerate", "parallel", "in_plane"]


@pytest.mark.parametrize("frame", FRAMES, ids=FRAME_IDS)
@SETTINGS
@given(seed=st.integers(0, 2**32 - 1), mode=st.sampled_from(TRI_MODES))
def test_capsule_triangle_matches_oracle_and_separates(frame, seed, mode):
    p, q, r, a, b, c = _capsule_triangle_case(seed, mode)
    p, q, a, b, c = in_frame([p, q, a, b, c], frame)
    r *= frame[0]
    contact = capsule_triangle(Capsule(p, q, r), a, b, c)
    _check_triangle_contact(contact, p, q, r, a, b, c)
    if mode == "sphere":
        assert _same_contact(sphere_triangle(p, r, a, b, c), contact)


def _same_contact(c1, c2):
    if c1 is None or c2 is None:
        return c1 is None and c2 is None
    return (
        c1.depth == c2.depth
        and np.array_equal(c1.normal, c2.normal)
        and np.array_equal(c1.point, c2.point)
    )


def _capsule_pair(seed, mode):
    rng = np.random.default_rng(seed)
    a1, b1, a2, b2 = rng.uniform(-1, 1, (4, 3))
    r1, r2 = (float(x) for x in 10.0 ** rng.uniform(-1.5, -0.2, 2))
    if mode == "crossing":
        x = a1 + rng.uniform(0, 1) * (b1 - a1)
        v = rng.normal(size=3)
        a2, b2 = x - rng.uniform(0, 1) * v, x + rng.uniform(0, 1) * v
    elif mode == "parallel":
        a2 = rng.integers(-4, 5, 3) / 4.0
        a1 = rng.integers(-4, 5, 3) / 4.0
        b1 = a1 + rng.integers(-4, 5, 3) / 4.0
        b2 = a2 + (b1 - a1) * rng.choice([-1.0, 0.5, 2.0])
    elif mode == "collinear":
        d = rng.integers(-2, 3, 3) / 2.0
        a1, b1, a2, b2 = (a1 * 0 + k * d for k in rng.integers(-4, 5, 4) / 4.0)
    elif mode == "spheres":
        b1, b2 = a1, a2
    return Capsule(a1, b1, r1), Capsule(a2, b2, r2)


@pytest.mark.parametrize("frame", FRAMES[:3], ids=FRAME_IDS[:3])
@SETTINGS
@given(
    seed=st.integers(0, 2**32 - 1),
    mode=st.sampled_from(["general", "crossing", "parallel", "collinear", "spheres"]),
)
def test_capsule_capsule_matches_oracle_symmetric_and_separates(frame, seed, mode):
    c1, c2 = _capsule_pair(seed, mode)
    s, o = frame
    c1 = Capsule(c1.a * s + o, c1.b * s + o, c1.radius * s)
    c2 = Capsule(c2.a * s + o, c2.b * s + o, c2.radius * s)
    contact = capsule_capsule(c1, c2)
    _check_capsule_contact(contact, c1, c2)
    swapped = capsule_capsule(c2, c1)
    _check_capsule_contact(swapped, c2, c1)
    assert (contact is None) == (swapped is None)
    if contact is not None:
        assert contact.depth == pytest.approx(swapped.depth, rel=1e-12, abs=1e-15)
        mids_differ = not np.array_equal(c1.a + c1.b, c2.a + c2.b)
        # normals from distances near the touching threshold carry ~1e-5 rad of rounding
        atol = 1e-9 if _dist_seg_seg(c1.a, c1.b, c2.a, c2.b) > 1e-6 * frame[0] else 1e-4
        if mids_differ:  # parallel touching axes with equal midpoints have no antisymmetric sign
            np.testing.assert_allclose(contact.normal, -swapped.normal, atol=atol)


# ---------------------------------------------------------------------------------------------
# boundary probes: 0.999 r inside -> contact, 1.001 r outside -> None, exactly r -> None
# ---------------------------------------------------------------------------------------------

# (capsule end p, end q, direction to push out, exact distance 1 along it) against TRI
TRIANGLE_PROBES = {
    "sphere_face": ((1, 1, 0), (1, 1, 0), (0, 0, 1)),
    "sphere_below_face": ((1, 1, 0), (1, 1, 0), (0, 0, -1)),
    "sphere_edge_ab": ((2, 0, 0), (2, 0, 0), (0, -0.6, 0.8)),
    "sphere_vertex_b": ((4, 0, 0), (4, 0, 0), (0.6, 0, 0.8)),
    "capsule_parallel_face": ((1, 1, 0), (2, 1, 0), (0, 0, 1)),
    "capsule_across_edge": ((1, 0, 0), (3, 0, 0), (0, -0.6, -0.8)),
    "capsule_standing_on_face": ((1, 1, 0), (1, 1, 0), (0, 0, 1)),
    "capsule_edge_skew": ((2, -1, 0), (2, 1, 0), (0, 0, 1)),
}


@pytest.mark.parametrize("frame", FRAMES, ids=FRAME_IDS)
@pytest.mark.parametrize("name", sorted(TRIANGLE_PROBES))
def test_triangle_boundary_probes(name, frame):
    p0, q0, direction = (np.array(v, dtype=float) for v in TRIANGLE_PROBES[name])
    if name == "capsule_standing_on_face":
        q0 = p0 + 2.0 * direction
    if name == "capsule_edge_skew":  # segment over edge ab, skew, offset along +z
        p0, q0 = np.array([2.0, -1, 0]), np.array([2.0, 1, 0])
    r = 0.5
    for factor, expect in ((0.999, True), (1.001, False)):
        p, q, a, b, c = in_frame([p0 + factor * r * direction, q0 + factor * r * direction]
                                      + TRI, frame)
        rr = r * frame[0]
        contact = capsule_triangle(Capsule(p, q, rr), a, b, c)
        assert (contact is not None) == expect, (factor, contact)
        _check_triangle_contact(contact, p, q, rr, a, b, c)
        if p0 is q0 or np.array_equal(p0, q0):
            assert (sphere_triangle(p, rr, a, b, c) is not None) == expect


@pytest.mark.parametrize("frame", [(1.0, 0.0), (1.0, 1e4), (2.0**-13, 0.0)], ids=FRAME_IDS[:3])
def test_exactly_touching_is_not_a_contact(frame):
    s, o = frame
    tri = [np.array(v) * s + o for v in TRI]
    # dyadic: every distance below is exactly r in float64 arithmetic
    assert sphere_triangle(np.array([1.0, 1, 0.5]) * s + o, 0.5 * s, *tri) is None
    assert sphere_triangle(np.array([1.0, 1, -0.5]) * s + o, 0.5 * s, *tri) is None
    assert sphere_triangle(np.array([2.0, -0.5, 0]) * s + o, 0.5 * s, *tri) is None
    cap = Capsule(np.array([1.0, 1, 0.25]) * s + o, np.array([3.0, 1, 0.25]) * s + o, 0.25 * s)
    assert capsule_triangle(cap, *tri) is None
    c1 = Capsule(np.array([0.0, 0, 0]) * s + o, np.array([2.0, 0, 0]) * s + o, 0.25 * s)
    c2 = Capsule(np.array([1.0, -1, 0.5]) * s + o, np.array([1.0, 1, 0.5]) * s + o, 0.25 * s)
    assert capsule_capsule(c1, c2) is None and capsule_capsule(c2, c1) is None
    c3 = Capsule(np.array([3.0, 0, 0]) * s + o, np.array([5.0, 0, 0]) * s + o, 0.75 * s)
    assert capsule_capsule(c1, c3) is None  # end caps touching on the axis


@pytest.mark.parametrize("frame", FRAMES, ids=FRAME_IDS)
@pytest.mark.parametrize(
    "name,axis2,direction",
    [
        ("crossing", ((1, -1, 0), (1, 1, 0)), (0, 0, 1)),
        ("parallel", ((0.5, 0, 0), (1.5, 0, 0)), (0, 0.6, 0.8)),
        ("end_to_end", ((2, 0, 0), (3, 0, 0)), (-1, 0, 0)),
        ("end_to_side", ((1, 0, 0), (1, 0, 3)), (0, 0, 1)),
    ],
)
def test_capsule_capsule_boundary_probes(name, axis2, direction, frame):
    s, o = frame
    d = np.array(direction, dtype=float)
    base = [np.array([0.0, 0, 0]), np.array([2.0, 0, 0])]
    if name == "end_to_end":
        base = [np.array([-2.0, 0, 0]), np.array([0.0, 0, 0])]
        axis2 = ((0, 0, 0), (1, 0, 0))
    if name == "end_to_side":
        axis2 = ((1, 0, 0), (1, 0, 3))
        base = [np.array([1.0, 0, -2]), np.array([1.0, 0, 0])]
        d = np.array([0.0, 0, -1])
    r1, r2 = 0.3, 0.2
    for factor, expect in ((0.999, True), (1.001, False)):
        shift = factor * (r1 + r2) * d
        c1 = Capsule((base[0] + shift) * s + o, (base[1] + shift) * s + o, r1 * s)
        c2 = Capsule(np.array(axis2[0], float) * s + o, np.array(axis2[1], float) * s + o, r2 * s)
        contact = capsule_capsule(c1, c2)
        assert (contact is not None) == expect, (name, factor)
        _check_capsule_contact(contact, c1, c2)
        if expect:
            np.testing.assert_allclose(contact.normal, d, atol=1e-9)


# ---------------------------------------------------------------------------------------------
# crossing rules (API sign conventions)
# ---------------------------------------------------------------------------------------------


def test_crossing_pushes_to_far_endpoint_side_seed003_regression():
    """d0 = 0.2, d1 = -0.5, r = 0.35: push along -n by 0.2 + 0.35 (the near end goes through).

    Seed 003 pushes to the NEAR end's side (+n by 0.55): ends at 0.75 and 0.05 < r, still
    penetrating; ours leaves both ends at >= r below the plane.
    """
    cap = Capsule([1.0, 1.0, 0.2], [1.0, 1.0, -0.5], 0.35)
    contact = capsule_triangle(cap, *TRI)
    assert contact.depth == pytest.approx(0.55, abs=1e-15)
    np.testing.assert_array_equal(contact.normal, [0.0, 0.0, -1.0])
    np.testing.assert_allclose(contact.point, [1.0, 1.0, 0.0], atol=1e-15)
    seed003_normal = np.array([0.0, 0.0, 1.0])  # sign of the nearer end (d0 = 0.2)
    moved = seed003_normal * (0.55 + CONTACT_SLOP)
    assert _dist_seg_tri(cap.a + moved, cap.b + moved, *TRI) < 0.35  # seed 003 fails
    _check_triangle_contact(contact, cap.a, cap.b, 0.35, *map(np.array, TRI))


def test_crossing_ties_use_winding_normal_unless_far_side_is_unambiguous():
    lying = capsule_triangle(Capsule([1, 1, 0], [2, 1, 0], 0.25), *TRI)
    assert lying.depth == 0.25
    np.testing.assert_array_equal(lying.normal, [0, 0, 1])
    symmetric = capsule_triangle(Capsule([1, 1, 0.5], [1, 1, -0.5], 0.25), *TRI)
    assert symmetric.depth == 0.75
    np.testing.assert_array_equal(symmetric.normal, [0, 0, 1])
    flipped = [TRI[0], TRI[2], TRI[1]]  # winding normal -z
    lying = capsule_triangle(Capsule([1, 1, 0], [2, 1, 0], 0.25), *flipped)
    np.testing.assert_array_equal(lying.normal, [0, 0, -1])
    touching_from_below = capsule_triangle(Capsule([1, 1, 0], [1, 1, -1], 0.25), *TRI)
    np.testing.assert_array_equal(touching_from_below.normal, [0, 0, -1])
    assert touching_from_below.depth == 0.25


def test_degenerate_triangle_crossed_pushes_perpendicular_to_both():
    cap = Capsule([1.0, -1.0, 0.0], [1.0, 1.0, 0.0], 0.25)
    tri = [np.array(v, float) for v in ((0, 0, 0), (4, 0, 0), (2, 0, 0))]
    contact = capsule_triangle(cap, *tri)
    assert contact.depth == 0.25
    assert abs(abs(contact.normal[2]) - 1.0) < 1e-15
    _check_triangle_contact(contact, cap.a, cap.b, 0.25, *tri)
    collinear = capsule_triangle(Capsule([1.0, 0, 0], [3.0, 0, 0], 0.25), *tri)
    assert collinear.depth == 0.25 and abs(collinear.normal[0]) < 1e-15
    point = [np.array([1.0, 0, 0])] * 3
    sphere = sphere_triangle([1.0, 0, 0], 0.25, *point)
    assert sphere.depth == 0.25 and abs(np.linalg.norm(sphere.normal) - 1) < 1e-15


# ---------------------------------------------------------------------------------------------
# named regressions: where seed article 000's heuristics are wrong
# ---------------------------------------------------------------------------------------------


def _seed000_capsule_capsule_distance(a_A, a_B, b_A, b_B):
    """Seed 000's 'best endpoint' heuristic, reimplemented to show where it differs."""
    d0, d1 = np.sum((b_A - a_A) ** 2), np.sum((b_B - a_A) ** 2)
    d2, d3 = np.sum((b_A - a_B) ** 2), np.sum((b_B - a_B) ** 2)
    best_a = a_B if (d2 < d0 or d2 < d1 or d3 < d0 or d3 < d1) else a_A
    best_b = closest_point_segment(best_a, b_A, b_B)
    best_a = closest_point_segment(best_b, a_A, a_B)
    with np.errstate(invalid="ignore"):
        v = best_a - best_b
        length = float(np.linalg.norm(v))
        return length, v / length, best_a, best_b


def _seed000_reference_sphere(A, B, p0, p1, p2):
    """Seed 000's capsule-triangle reference point (ray-plane trace, incl. its abs() and the
    'parallel -> first corner' fallback); returns the sphere centre it then tests."""
    n = np.cross(p1 - p0, p2 - p0)
    n /= np.linalg.norm(n)
    axis = (B - A) / np.linalg.norm(B - A)
    denom = abs(n @ axis)
    if denom == 0.0:
        reference = p0
    else:
        x = A + axis * (n @ (p0 - A) / denom)
        reference = oracle.closest_point_triangle(x, p0, p1, p2)[0]
        reference = np.array([float(v) for v in reference])
    return closest_point_segment(reference, A, B)


def test_regression_crossed_capsules_best_endpoints_far_from_closest_points():
    """Nearly parallel capsules crossing at x = 5: true distance 0.3 < r1 + r2 = 0.4."""
    c1 = Capsule([0.0, 0, 0], [10.0, 0, 0], 0.2)
    c2 = Capsule([0.0, 1, 0.3], [10.0, -1, 0.3], 0.2)
    contact = capsule_capsule(c1, c2)
    assert contact is not None
    assert contact.depth == pytest.approx(0.1, abs=1e-14)
    np.testing.assert_allclose(contact.normal, [0, 0, -1], atol=1e-14)
    np.testing.assert_allclose(contact.point, [5, 0, 0.1], atol=1e-13)
    seed_len, *_ = _seed000_capsule_capsule_distance(c1.a, c1.b, c2.a, c2.b)
    assert seed_len > 1.0  # the heuristic lands near (9.8, 0, 0): no contact at all


def test_regression_parallel_overlapping_capsules():
    """Collinear overlap: exact depth r1 + r2, deterministic perpendicular normal; seed 000
    normalises a zero vector (NaN). Parallel offset overlap: ours is at the overlap midpoint."""
    c1 = Capsule([0.0, 0, 0], [4.0, 0, 0], 0.25)
    c2 = Capsule([1.0, 0, 0], [6.0, 0, 0], 0.25)
    contact = capsule_capsule(c1, c2)
    assert contact.depth == 0.5
    assert abs(contact.normal[0]) < 1e-15 and abs(np.linalg.norm(contact.normal) - 1) < 1e-15
    np.testing.assert_allclose(contact.normal, -capsule_capsule(c2, c1).normal)
    _check_capsule_contact(contact, c1, c2)
    _, seed_normal, *_ = _seed000_capsule_capsule_distance(c1.a, c1.b, c2.a, c2.b)
    assert np.isnan(seed_normal).all()

    c3 = Capsule([1.0, 0.375, 0], [6.0, 0.375, 0], 0.25)
    contact = capsule_capsule(c1, c3)
    assert contact.depth == 0.125
    np.testing.assert_array_equal(contact.normal, [0, -1, 0])
    np.testing.assert_array_equal(contact.point, [2.5, 0.125, 0])  # overlap [1, 4] midpoint
    *_, seed_b = _seed000_capsule_capsule_distance(c1.a, c1.b, c3.a, c3.b)
    assert seed_b[0] != 2.5  # the heuristic reports an end of the overlap


def test_regression_capsule_grazing_edge_ray_plane_reference_wrong():
    """Segment passes over edge ab at height 0.305; its line meets the plane far beyond vertex a,
    so the ray-plane reference point is a and the sphere lands on the far end (distance 1.04)."""
    p, q, r = np.array([1.0, -1, 0.3]), np.array([3.0, 1, 0.31]), 0.35
    tri = [np.array(v) for v in TRI]
    contact = capsule_triangle(Capsule(p, q, r), *tri)
    assert contact is not None
    exact = _dist_seg_tri(p, q, *tri)  # 0.30499..., just beyond edge ab
    assert 0.3049 < exact < 0.305
    assert contact.depth == pytest.approx(r - exact, abs=1e-14)
    on_seg, on_tri, _ = oracle.closest_points_segment_triangle(p, q, *tri)
    on_seg, on_tri = (np.array([float(v) for v in x]) for x in (on_seg, on_tri))
    np.testing.assert_allclose(contact.normal, (on_seg - on_tri) / exact, atol=1e-13)
    np.testing.assert_allclose(contact.point, on_tri, atol=1e-13)
    assert on_tri[1] == 0.0 and 0.0 < on_tri[0] < 4.0  # on edge ab
    _check_triangle_contact(contact, p, q, r, *tri)
    centre = _seed000_reference_sphere(p, q, *tri)
    seed_dist = math.sqrt(oracle.closest_point_triangle(centre, *tri)[1])
    assert seed_dist > 1.0 > r  # seed 000 reports no contact


def test_regression_capsule_parallel_to_triangle_plane():
    """Segment parallel to the plane at height 0.3, partly over the face; seed 000's fallback
    (reference = first corner) puts the sphere outside the face, 0.51 away."""
    p, q, r = np.array([-3.0, 3, 0.3]), np.array([1.0, 3.5, 0.3]), 0.4
    tri = [np.array(v) for v in TRI]
    contact = capsule_triangle(Capsule(p, q, r), *tri)
    assert contact.depth == pytest.approx(0.1, abs=1e-14)
    np.testing.assert_allclose(contact.normal, [0, 0, 1], atol=1e-14)
    _check_triangle_contact(contact, p, q, r, *tri)
    centre = _seed000_reference_sphere(p, q, *tri)
    seed_dist = math.sqrt(oracle.closest_point_triangle(centre, *tri)[1])
    assert seed_dist > r


# ---------------------------------------------------------------------------------------------
# capsule_triangle_many
# ---------------------------------------------------------------------------------------------


def test_capsule_triangle_many_equals_scalar_elementwise():
    rows = [_capsule_triangle_case(7000 + i, TRI_MODES[i % len(TRI_MODES)]) for i in range(120)]
    p, q, r, a, b, c = (np.array(col) for col in zip(*rows, strict=False))
    hit, depth, normal, point = capsule_triangle_many(p, q, r, a, b, c)
    assert hit.shape == depth.shape == (120,) and normal.shape == point.shape == (120, 3)
    assert hit.any() and not hit.all()
    for i in range(len(p)):
        contact = capsule_triangle(Capsule(p[i], q[i], r[i]), a[i], b[i], c[i])
        assert hit[i] == (contact is not None)
        if contact is not None:
            assert depth[i] == contact.depth
            np.testing.assert_array_equal(normal[i], contact.normal)
            np.testing.assert_array_equal(point[i], contact.point)
    # one capsule against many triangles, scalar radius
    hit1, depth1, normal1, _ = capsule_triangle_many(p[0], q[0], 0.5, a, b, c)
    for i in range(len(a)):
        contact = capsule_triangle(Capsule(p[0], q[0], 0.5), a[i], b[i], c[i])
        assert hit1[i] == (contact is not None)
        if contact is not None:
            assert depth1[i] == pytest.approx(contact.depth, abs=1e-14)
            np.testing.assert_allclose(normal1[i], contact.normal, atol=1e-12)


# ---------------------------------------------------------------------------------------------
# validation
# ---------------------------------------------------------------------------------------------

BAD_POINTS = [[1.0, 2.0], [[1.0, 2.0, 3.0]], [0.0, float("nan"), 0.0], [float("inf"), 0, 0]]


@pytest.mark.parametrize("bad", BAD_POINTS, ids=["shape2", "shapeN3", "nan", "inf"])
def test_bad_points_raise(bad):
    tri = [list(v) for v in TRI]
    for i, name in enumerate(["center", "a", "b", "c"]):
        args = [[1.0, 1.0, 1.0]] + tri
        args[i] = bad
        with pytest.raises(ValueError, match=rf"\b{name}\b"):
            sphere_triangle(args[0], 0.5, *args[1:])
    cap = Capsule([1, 1, 1], [1, 1, 2], 0.5)
    for i, name in enumerate(["a", "b", "c"]):
        args = list(tri)
        args[i] = bad
        with pytest.raises(ValueError, match=rf"\b{name}\b"):
            capsule_triangle(cap, *args)


@pytest.mark.parametrize("radius", [0.0, -0.5, float("nan"), float("inf"), "x"])
def test_bad_radius_raises(radius):
    with pytest.raises(ValueError, match="radius"):
        sphere_triangle([1, 1, 1], radius, *TRI)
    with pytest.raises(ValueError, match="radius"):
        Capsule([0, 0, 0], [1, 0, 0], radius)


def test_non_capsule_arguments_raise():
    cap = Capsule([0, 0, 0], [1, 0, 0], 0.5)
    with pytest.raises(ValueError, match="capsule"):
        capsule_triangle(((0, 0, 0), (1, 0, 0), 0.5), *TRI)
    with pytest.raises(ValueError, match="c2"):
        capsule_capsule(cap, "not a capsule")
