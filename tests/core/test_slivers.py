"""Slivers: triangles collinear only up to rounding, in every query (issue 12, "wrong answers").

A sliver here is a triangle whose third vertex c is computed on the line of a and b (between
them or just beyond b) in general position in 3-D, so its cross product is rounding noise:
tiny, not zero. Queries sit on that line's extension 0.2-1.5 (scaled) beyond the sliver's
ends, or beside it. Before the fix the face-region test of such a triangle let its face reach
along its line: `closest_point_triangle` returned the query point itself (distance 0 instead
of 0.2-1.5 m), `sphere_triangle` reported contacts where nothing touches, sweeps started
"penetrating", and the mesh queries inherited it (measured on 2,000 such unit-frame
slivers with queries 0.2-1.5 m beyond an end: 237 closest points at distance 0, 211 contacts
of a 0.1 m sphere; 15 of this file's 33 tests failed, all 0 after the fix).

Every answer is checked against the rational oracle (tests/core/oracle.py) in three frames:
ordinary scale, 10 km from the origin, and 0.1 mm scale. A sliver behaves as the segment it
nearly is: a distance within rounding of the oracle's, no contact where the oracle's distance
is at least the radius, no sweep hit where the oracle's distance stays at least the radius,
and no ray hit (a sliver has no interior a ray can hit, like a zero-area triangle).
"""

import math

import numpy as np
import oracle  # noqa: E402
import pytest
from capsule_collision.core import (  # noqa: E402
    Capsule,
    TriangleMesh,
    capsule_triangle,
    closest_point_triangle,
    closest_points_segment_triangle,
    sphere_triangle,
    sweep_capsule_triangle,
)
from capsule_collision.core.geometry.closest import (  # noqa: E402
    closest_point_triangle_many,
    closest_points_segment_triangle_many,
)
from capsule_collision.core.geometry.contact import capsule_triangle_many  # noqa: E402
from capsule_collision.core.geometry.sweep import sweep_capsule_triangle_many  # noqa: E402

EPS = np.finfo(np.float64).eps
FRAMES = {"unit": (1.0, 0.0), "10km": (1.0, 1e4), "0.1mm": (2.0**-13, 0.0)}
N_CASES = 60  # slivers per frame; ~10 % of them fooled each query before the fix


def _tol(scale, offset):
    """Distance tolerance: 1e-9 of the configuration's size plus the rounding of absolute
    coordinates (a few ulps of |x|: ~2e-12 m at 10 km)."""
    return 1e-9 * scale + 64 * EPS * (offset + scale)


def sliver_cases(frame, n=N_CASES, seed=0):
    """n slivers (a, b, c) and queries p on their line, beyond the ends, in ``frame``.

    Returns a list of dicts: a, b, c (3,) float64 (c computed on the line of a, b in the
    frame's coordinates, so it is off that line by rounding only), p (3,) the query, u (3,) a
    unit vector perpendicular to the line, gap the distance from p to the sliver's nearer end
    (0.2-1.5 scaled)."""
    scale, offset = FRAMES[frame]
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n):
        a = rng.uniform(-1, 1, 3) * scale + offset
        b = rng.uniform(-1, 1, 3) * scale + offset
        t = rng.uniform(0.2, 0.8) if rng.random() < 0.5 else rng.uniform(1.0, 1.5)
        c = a + t * (b - a)
        d = b - a
        length = float(np.linalg.norm(d))
        gap = rng.uniform(0.2, 1.5) * scale
        if rng.random() < 0.5:  # beyond the far end (b, or c when c lies beyond b)
            p = a + (max(1.0, t) + gap / length) * d
        else:  # before a
            p = a - (gap / length) * d
        u = np.cross(d, rng.normal(size=3))
        u /= np.linalg.norm(u)
        out.append(dict(a=a, b=b, c=c, p=p, u=u, gap=gap, scale=scale, offset=offset))
    return out


def _exact_dist(p, q, a, b, c):
    return math.sqrt(oracle.dist2_segment_triangle(p, q, a, b, c))


@pytest.fixture(scope="module", params=sorted(FRAMES))
def frame(request):
    return request.param


@pytest.fixture(scope="module")
def cases(frame):
    return sliver_cases(frame)


# ---------------------------------------------------------------------------------------------
# closest points
# ---------------------------------------------------------------------------------------------


def test_closest_point_triangle_on_the_line_beyond_a_sliver(cases):
    for k in cases:
        a, b, c, p = k["a"], k["b"], k["c"], k["p"]
        exact = math.sqrt(oracle.closest_point_triangle(p, a, b, c)[1])
        assert exact > 0.19 * k["scale"]
        x = closest_point_triangle(p, a, b, c)
        tol = _tol(k["scale"], k["offset"])
        assert abs(float(np.linalg.norm(p - x)) - exact) <= tol, (k, x, exact)
        # the point returned lies on the sliver
        assert math.sqrt(oracle.closest_point_triangle(x, a, b, c)[1]) <= tol


def test_closest_point_triangle_many_on_slivers(cases):
    a, b, c, p = (np.array([k[n] for k in cases]) for n in "abcp")
    x, d2 = closest_point_triangle_many(p, a, b, c)
    for i, k in enumerate(cases):
        exact = math.sqrt(oracle.closest_point_triangle(k["p"], k["a"], k["b"], k["c"])[1])
        assert abs(math.sqrt(d2[i]) - exact) <= _tol(k["scale"], k["offset"]), (k, d2[i])


def test_closest_points_segment_triangle_on_slivers(cases):
    for k in cases:
        a, b, c, p, u, s = k["a"], k["b"], k["c"], k["p"], k["u"], k["scale"]
        tol = _tol(s, k["offset"])
        # a short segment at p along the line, and one crossing the line's extension at p
        for q0, q1 in ((p, p + 0.01 * s * (b - a)), (p - 0.3 * s * u, p + 0.3 * s * u)):
            exact = _exact_dist(q0, q1, a, b, c)
            on_seg, on_tri = closest_points_segment_triangle(q0, q1, a, b, c)
            assert abs(float(np.linalg.norm(on_seg - on_tri)) - exact) <= tol, (k, exact)
            _, _, d2 = closest_points_segment_triangle_many(q0, q1, a, b, c)
            assert abs(math.sqrt(d2[0]) - exact) <= tol


# ---------------------------------------------------------------------------------------------
# contacts
# ---------------------------------------------------------------------------------------------


def test_sphere_triangle_no_contact_beyond_a_sliver(cases):
    for k in cases:
        a, b, c, p = k["a"], k["b"], k["c"], k["p"]
        exact = math.sqrt(oracle.closest_point_triangle(p, a, b, c)[1])
        assert sphere_triangle(p, 0.9 * exact, a, b, c) is None, k
        hit = sphere_triangle(p, 1.1 * exact, a, b, c)  # just reaches the sliver's end
        assert hit is not None
        assert abs(hit.depth - 0.1 * exact) <= _tol(k["scale"], k["offset"]), (k, hit)


def test_capsule_triangle_beyond_a_sliver(cases):
    for k in cases:
        a, b, c, p, u, s = k["a"], k["b"], k["c"], k["p"], k["u"], k["scale"]
        q0, q1 = p - 0.3 * s * u, p + 0.3 * s * u  # axis across the line's extension
        exact = _exact_dist(q0, q1, a, b, c)
        assert capsule_triangle(Capsule(q0, q1, 0.9 * exact), a, b, c) is None, k
        hit = capsule_triangle(Capsule(q0, q1, 1.1 * exact), a, b, c)
        assert hit is not None
        assert abs(hit.depth - 0.1 * exact) <= _tol(s, k["offset"]), (k, hit)


def test_capsule_triangle_many_on_slivers(cases):
    a, b, c, p, u = (np.array([k[n] for k in cases]) for n in "abcpu")
    s = cases[0]["scale"]
    q0, q1 = p - 0.3 * s * u, p + 0.3 * s * u
    exact = np.array([_exact_dist(*x) for x in zip(q0, q1, a, b, c, strict=True)])
    hit, *_ = capsule_triangle_many(q0, q1, 0.9 * exact, a, b, c)
    assert not hit.any()
    hit, depth, *_ = capsule_triangle_many(q0, q1, 1.1 * exact, a, b, c)
    assert hit.all()
    assert np.abs(depth - 0.1 * exact).max() <= _tol(s, cases[0]["offset"])


# ---------------------------------------------------------------------------------------------
# sweeps
# ---------------------------------------------------------------------------------------------


def _sweeps(k):
    """(capsule, displacement, expect_hit) for sweeps beside and towards a sliver's end:
    sideways across the line's extension at p, or from p, with a radius below the gap (the
    distance never drops below the gap: a miss), and along the line towards the sliver (a
    hit)."""
    a, b, p, u, s, gap = k["a"], k["b"], k["p"], k["u"], k["scale"], k["gap"]
    r = 0.5 * gap
    toward = (a + b) / 2 - p
    toward *= 0.9 * k["gap"] / np.linalg.norm(toward)
    side = np.cross(b - a, u)
    side /= np.linalg.norm(side)  # perpendicular to the line and to u
    return [
        (Capsule(p - 0.2 * s * u, p - 0.2 * s * u, r), 0.4 * s * u, False),
        (Capsule(p, p, r), 0.2 * s * u, False),  # starting on the line's extension
        (Capsule(p - 0.3 * s * u, p + 0.3 * s * u, r), 0.2 * s * side, False),  # axis across
        (Capsule(p, p, r), toward, True),
    ]


def test_sweep_capsule_triangle_beside_and_towards_a_sliver(cases):
    for k in cases:
        a, b, c = k["a"], k["b"], k["c"]
        for cap, v, expect in _sweeps(k):
            hit = sweep_capsule_triangle(cap, v, a, b, c)
            assert (hit is not None) == expect, (k, hit)
            if hit is not None:
                # at the reported time the exact distance is the radius (first contact)
                d2 = oracle.capsule_sweep_dist2(cap.a, cap.b, v, hit.time, a, b, c)
                assert abs(math.sqrt(d2) - cap.radius) <= _tol(k["scale"], k["offset"]) * 10


def test_sweep_capsule_triangle_many_on_slivers(cases):
    rows = [(cap, v, expect, k) for k in cases for cap, v, expect in _sweeps(k)]
    p = np.array([r[0].a for r in rows])
    q = np.array([r[0].b for r in rows])
    radius = np.array([r[0].radius for r in rows])
    v = np.array([r[1] for r in rows])
    a, b, c = (np.array([r[3][n] for r in rows]) for n in "abc")
    time, _, _ = sweep_capsule_triangle_many(p, q, radius, v, a, b, c)
    expect = np.array([r[2] for r in rows])
    np.testing.assert_array_equal(np.isfinite(time), expect)


# ---------------------------------------------------------------------------------------------
# meshes: one mesh per sliver (the same slivers as above), queried through every mesh path
# ---------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def meshes(cases):
    return [TriangleMesh(np.array([k["a"], k["b"], k["c"]]), [[0, 1, 2]]) for k in cases]


def test_mesh_contacts_beyond_slivers(cases, meshes):
    for k, mesh in zip(cases, meshes, strict=True):
        p = k["p"]
        exact = math.sqrt(oracle.closest_point_triangle(p, k["a"], k["b"], k["c"])[1])
        tol = _tol(k["scale"], k["offset"])
        miss = Capsule(p, p, 0.9 * exact)
        assert mesh.capsule_contacts(miss) == [], k
        assert mesh.penetrating_triangles(miss).size == 0
        reach = Capsule(p, p, 1.1 * exact)
        assert mesh.penetrating_triangles(reach).tolist() == [0]
        got = mesh.capsule_contacts(reach)
        assert len(got) == 1 and abs(got[0].depth - 0.1 * exact) <= tol, (k, got)
        batch = mesh.capsule_contacts_many(np.array([p, p]), np.array([p, p]),
                                           np.array([0.9, 1.1]) * exact)
        assert batch.query.tolist() == [1]
        assert abs(batch.depth[0] - 0.1 * exact) <= tol


def test_mesh_sweeps_beside_and_towards_slivers(cases, meshes):
    for k, mesh in zip(cases, meshes, strict=True):
        rows = _sweeps(k)
        for cap, v, expect in rows:
            hit = mesh.sweep_capsule(cap, v)
            assert (hit is not None) == expect, (k, hit)
        batch = mesh.sweep_capsule_many(
            np.array([r[0].a for r in rows]), np.array([r[0].b for r in rows]),
            np.array([r[0].radius for r in rows]), np.array([r[1] for r in rows]))
        np.testing.assert_array_equal(np.isfinite(batch.time), [r[2] for r in rows])


def test_mesh_rays_never_hit_a_sliver(cases, meshes):
    for k, mesh in zip(cases, meshes, strict=True):
        s, u = k["scale"], k["u"]
        mid = (k["a"] + k["b"] + k["c"]) / 3
        # across the line's extension at p, and through the sliver's centroid
        origins = np.array([k["p"] + 0.5 * s * u, mid + 0.5 * s * u])
        for o in origins:
            assert mesh.raycast(o, -u, 1.0 * s) is None, k
        assert (mesh.raycast_many(origins, -np.array([u, u]), s).triangle == -1).all()
