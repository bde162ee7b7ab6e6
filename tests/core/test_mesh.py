"""TriangleMesh: validation, BVH culling and every query equal to brute force over all triangles."""

import numpy as np
import pytest
from brute_force import brute_contacts, brute_ray, brute_sweep
from capsule_collision.core.geometry.contact import capsule_triangle
from capsule_collision.core.geometry.shapes import Capsule
from capsule_collision.core.mesh import triangle_mesh
from capsule_collision.core.mesh.bvh import BVH, morton_codes
from capsule_collision.core.mesh.sweeps import first_hits, first_per_query
from capsule_collision.core.mesh.triangle_mesh import ContactBatch, SweepBatch, TriangleMesh
from mesh_scenes import grid_mesh, random_capsules, soup_mesh

from tools import scenes

# ---------------------------------------------------------------- fixtures
MESHES = {
    "grid": lambda: grid_mesh(),
    "soup": lambda: soup_mesh(),
    "block": lambda: scenes.stairs_ramps_block(),
    "terrain": lambda: scenes.terrain(24, seed=5),
}


@pytest.fixture(scope="module", params=sorted(MESHES))
def mesh(request):
    return TriangleMesh(*MESHES[request.param]())


# ---------------------------------------------------------------- validation
@pytest.mark.parametrize(
    "vertices, triangles, match",
    [
        (np.zeros((3, 2)), [[0, 1, 2]], "vertices must have shape"),
        (np.zeros((0, 3)), np.zeros((0, 3), int), "empty"),
        (np.zeros((3, 3)), np.zeros((0, 3), int), "empty"),
        ([[0, 0, np.nan], [1, 0, 0], [0, 1, 0]], [[0, 1, 2]], "finite"),
        ([[0, 0, np.inf], [1, 0, 0], [0, 1, 0]], [[0, 1, 2]], "finite"),
        (np.eye(3), [[0, 1, 3]], "out of range"),
        (np.eye(3), [[0, -1, 2]], "negative"),
        (np.eye(3), [[0, 1]], "triangles must have shape"),
        (np.eye(3), [0, 1, 2], "triangles must have shape"),
        (np.eye(3), [[0.0, 1.5, 2.0]], "whole-number"),
        (np.eye(3), [["a", "b", "c"]], "integer"),
        (np.eye(3), [[True, False, True]], "integer"),
        ([["x", 0, 0], [1, 0, 0], [0, 1, 0]], [[0, 1, 2]], "vertices"),
        (np.eye(3), np.array([[0, 1, 2**64 - 1]], dtype=np.uint64), "out of range"),
    ],
)
def test_bad_input(vertices, triangles, match):
    with pytest.raises(ValueError, match=match):
        TriangleMesh(vertices, triangles)


def test_properties_and_readonly():
    v = np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0], [2, 2, 2]], float)
    m = TriangleMesh(v, np.array([[0, 1, 2], [0, 0, 3]], dtype=np.int32))
    assert m.n_triangles == 2 and m.triangles.dtype == np.int64
    np.testing.assert_allclose(m.normals, [[0, 0, 1], [0, 0, 0]])
    np.testing.assert_allclose(m.areas, [0.5, 0.0])
    lo, hi = m.aabb
    np.testing.assert_allclose(lo, 0)
    np.testing.assert_allclose(hi, 2)
    with pytest.raises(ValueError):
        m.vertices[0, 0] = 5
    with pytest.raises(ValueError):
        m.normals[0, 0] = 5
    v[0, 0] = 9  # the mesh keeps its own copy
    assert m.vertices[0, 0] == 0


def test_threaded_build_equals_the_serial_build(monkeypatch):
    """From THREADED_BUILD_TRIANGLES the BVH and kernel records build in threads: the mesh
    must be the serial build's, array for array and bit for bit (degenerate rows included)."""
    v, t = soup_mesh(n=triangle_mesh.THREADED_BUILD_TRIANGLES + 7, seed=3)
    threaded = TriangleMesh(v, t)
    monkeypatch.setattr(triangle_mesh, "THREADED_BUILD_TRIANGLES", 10 ** 12)
    serial = TriangleMesh(v, t)
    for name in ("normals", "areas", "cull_rows", "kernel_records"):
        a, b = getattr(threaded, name), getattr(serial, name)
        assert a.tobytes() == b.tobytes(), name
    for name in ("order", "slot_box", "slot32"):
        assert getattr(threaded.bvh, name).tobytes() == getattr(serial.bvh, name).tobytes()
    assert threaded.aabb[0].tobytes() == serial.aabb[0].tobytes()


def test_query_argument_errors(mesh):
    with pytest.raises(ValueError, match="displacement"):
        mesh.sweep_capsule(Capsule((0, 0, 0), (0, 0, 1), 0.3), (0, 0, np.nan))
    with pytest.raises(ValueError, match="radius"):
        mesh.capsule_contacts_many(np.zeros((2, 3)), np.zeros((2, 3)), [0.3, -1])
    with pytest.raises(ValueError, match="same shape"):
        mesh.capsule_contacts_many(np.zeros((2, 3)), np.zeros((3, 3)), 0.3)
    with pytest.raises(ValueError, match="direction"):
        mesh.raycast((0, 0, 0), (0, 0, 0))
    with pytest.raises(ValueError, match="lo must be"):
        mesh.triangles_in_aabb((1, 1, 1), (0, 0, 0))


# ---------------------------------------------------------------- BVH
def test_morton_order_and_bvh_bounds():
    rng = np.random.default_rng(1)
    lo = rng.uniform(-5, 5, (1000, 3))
    hi = lo + rng.uniform(0, 1, (1000, 3))
    bvh = BVH(lo, hi)
    assert sorted(bvh.order[bvh.order >= 0].tolist()) == list(range(1000))
    root = bvh.levels[-1][0]
    np.testing.assert_array_equal(root[:3], lo.min(0))
    np.testing.assert_array_equal(-root[3:6], hi.max(0))
    codes = morton_codes(rng.uniform(size=(100, 3)))
    assert codes.dtype == np.uint32 and codes.max() < 2**30


@pytest.mark.parametrize("n", [1, 5, 8, 9, 64, 65, 513, 5000])
def test_bvh_queries_equal_brute_force(n):
    rng = np.random.default_rng(n)
    lo = rng.uniform(-5, 5, (n, 3))
    hi = lo + rng.uniform(0, 1.5, (n, 3)) * (rng.uniform(size=(n, 1)) > 0.1)  # some flat
    bvh = BVH(lo, hi)
    qlo = rng.uniform(-6, 6, (200, 3))
    qhi = qlo + rng.uniform(0, 3, (200, 3))
    qlo[:5] = lo[:5]  # touching boxes (closed intervals)
    qhi[:5] = lo[:5]
    truth = [np.flatnonzero((lo <= qhi[i]).all(1) & (hi >= qlo[i]).all(1)) for i in range(200)]
    qi, bi = bvh.query_many_box6(np.concatenate([qhi, -qlo], 1))
    assert (np.diff(qi) >= 0).all()
    for i in range(200):
        single = np.sort(bvh.query_box6(np.concatenate([qhi[i], -qlo[i]])))
        np.testing.assert_array_equal(single, truth[i])
        np.testing.assert_array_equal(np.sort(bi[qi == i]), truth[i])


def test_triangles_in_aabb(mesh):
    rng = np.random.default_rng(3)
    tri = mesh.vertices[mesh.triangles]
    tlo, thi = tri.min(1), tri.max(1)
    mlo, mhi = mesh.aabb
    for _ in range(30):
        c = rng.uniform(mlo, mhi)
        lo, hi = c - rng.uniform(0, 2, 3), c + rng.uniform(0, 2, 3)
        truth = np.flatnonzero((tlo <= hi).all(1) & (thi >= lo).all(1))
        np.testing.assert_array_equal(mesh.triangles_in_aabb(lo, hi), truth)


# ---------------------------------------------------------------- capsule queries
def test_capsule_queries_equal_brute_force(mesh):
    a, b, r = random_capsules(mesh, 60, seed=11)
    batch = mesh.capsule_contacts_many(a, b, r)
    assert isinstance(batch, ContactBatch)
    n_hit = 0
    for i in range(len(a)):
        cap = Capsule(a[i], b[i], r[i])
        idx, depth, normal, point = brute_contacts(mesh, a[i], b[i], r[i])
        contacts = mesh.capsule_contacts(cap)
        assert [c.triangle for c in contacts] == idx.tolist()
        if contacts:
            n_hit += 1
            np.testing.assert_array_equal([c.depth for c in contacts], depth)
            np.testing.assert_array_equal([c.normal for c in contacts], normal)
            np.testing.assert_array_equal([c.point for c in contacts], point)
        np.testing.assert_array_equal(mesh.penetrating_triangles(cap), np.sort(idx))
        sel = batch.query == i
        np.testing.assert_array_equal(batch.triangle[sel], idx)
        np.testing.assert_array_equal(batch.depth[sel], depth)
        np.testing.assert_array_equal(batch.normal[sel], normal)
        np.testing.assert_array_equal(batch.point[sel], point)
    assert 0 < n_hit < len(a)


def test_touching_exactly_is_not_a_contact():
    v = np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0]], float)
    m = TriangleMesh(v, [[0, 1, 2]])
    touching = Capsule((0.25, 0.25, 0.5), (0.25, 0.25, 2.0), 0.5)
    assert m.capsule_contacts(touching) == []
    inside = Capsule((0.25, 0.25, 0.5), (0.25, 0.25, 2.0), 0.5000001)
    (c,) = m.capsule_contacts(inside)
    assert c.triangle == 0 and c.depth > 0
    np.testing.assert_allclose(c.normal, [0, 0, 1])


def test_degenerate_triangles_act_as_segments_and_points():
    v, t = soup_mesh(10, seed=4)
    m = TriangleMesh(v, t)
    assert (m.areas[:4] == 0).all() and (m.normals[:4] == 0).all()
    seg_mid = 0.5 * (v[0] + v[1])
    cap = Capsule(seg_mid + [0, 0, 0.1], seg_mid + [0, 0, 0.1], 0.2)
    assert 0 in m.penetrating_triangles(cap)
    pt = v[6]
    assert 2 in m.penetrating_triangles(Capsule(pt - [0.05, 0, 0], pt + [0.05, 0, 0], 0.01))
    assert 2 not in m.penetrating_triangles(Capsule(pt + [0, 0, 0.02], pt + [0, 0, 0.03], 0.01))


def test_mesh_of_only_degenerate_triangles():
    v = np.array([[0, 0, 0], [1, 0, 0], [2, 0, 0]], float)
    m = TriangleMesh(v, [[0, 1, 2], [1, 1, 1]])
    assert m.penetrating_triangles(Capsule((0.5, 0, 0.1), (0.5, 0, 1), 0.2)).tolist() == [0]
    assert m.penetrating_triangles(Capsule((1, 0, 0.1), (1, 0, 1), 0.2)).tolist() == [0, 1]


# ---------------------------------------------------------------- sweeps
def test_sweeps_equal_brute_force(mesh):
    a, b, r, d = scenes.sweep_queries(mesh.vertices, mesh.triangles, 40, seed=21)
    batch = mesh.sweep_capsule_many(a, b, r, d)
    assert isinstance(batch, SweepBatch)
    n_hit = 0
    for i in range(len(a)):
        truth = brute_sweep(mesh, a[i], b[i], r[i], d[i])
        hit = mesh.sweep_capsule(Capsule(a[i], b[i], r[i]), d[i])
        if truth is None:
            assert hit is None and batch.triangle[i] == -1 and batch.time[i] == np.inf
            continue
        n_hit += 1
        t, tri, n, p = truth
        assert (hit.time, hit.triangle) == (t, tri)
        np.testing.assert_array_equal(hit.normal, n)
        np.testing.assert_array_equal(hit.point, p)
        assert (batch.time[i], batch.triangle[i]) == (t, tri)
        np.testing.assert_array_equal(batch.normal[i], n)
    assert 0 < n_hit < len(a)


def test_fast_sweep_does_not_tunnel_through_thin_wall():
    v, t = scenes.stairs_ramps_block()
    m = TriangleMesh(v, t)
    # The 0.05 m wall at x = 15..15.05, y 2..5, z 0..2.5; a 0.3 m capsule crossing it at 100 m.
    cap = Capsule((13.0, 3.5, 0.5), (13.0, 3.5, 1.2), 0.3)
    hit = m.sweep_capsule(cap, (100.0, 0.0, 0.0))
    assert hit is not None
    np.testing.assert_allclose(13.0 + 100.0 * hit.time + 0.3, 15.0, atol=1e-9)
    np.testing.assert_allclose(hit.normal, [-1, 0, 0], atol=1e-12)


# ---------------------------------------------------------------- rays
def test_raycast_equal_brute_force(mesh):
    rng = np.random.default_rng(5)
    lo, hi = mesh.aabb
    o = rng.uniform(lo - 1, hi + 1, (60, 3))
    d = rng.normal(size=(60, 3))
    d[:10] = [0, 0, -1]
    md = np.where(rng.uniform(size=60) < 0.5, np.inf, rng.uniform(0.5, 10, 60))
    batch = mesh.raycast_many(o, d, md)
    for i in range(60):
        truth = brute_ray(mesh, o[i], d[i], md[i])
        hit = mesh.raycast(o[i], d[i], md[i])
        if truth is None:
            assert hit is None and batch.triangle[i] == -1
            continue
        assert (hit.time, hit.triangle) == truth
        assert (batch.time[i], batch.triangle[i]) == truth
        assert hit.normal @ d[i] <= 0
        np.testing.assert_allclose(np.linalg.norm(hit.normal), 1.0)


def test_raycast_down_onto_floor():
    m = TriangleMesh(*scenes.stairs_ramps_block())
    hit = m.raycast((0.2, 0.2, 5.0), (0, 0, -3), 10.0)
    assert hit.time == pytest.approx(5.0) and hit.point[2] == pytest.approx(0.0)
    np.testing.assert_allclose(hit.normal, [0, 0, 1])
    assert m.raycast((0.2, 0.2, 5.0), (0, 0, -1), 4.9) is None
    assert m.raycast((0.2, 0.2, 5.0), (0, 0, 1)) is None


# ---------------------------------------------------------------- procedural scenes
def test_scenes_are_deterministic():
    v1, t1 = scenes.terrain(20, seed=3)
    v2, t2 = scenes.terrain(20, seed=3)
    np.testing.assert_array_equal(v1, v2)
    np.testing.assert_array_equal(t1, t2)
    a1 = scenes.capsule_queries(v1, t1, 50, seed=2)
    a2 = scenes.capsule_queries(v2, t2, 50, seed=2)
    for x, y in zip(a1, a2):
        np.testing.assert_array_equal(x, y)


def test_query_sets_about_half_penetrating():
    v, t = scenes.terrain(40, seed=1)
    m = TriangleMesh(v, t)
    a, b, r = scenes.capsule_queries(v, t, 400, seed=0)
    frac = np.unique(m.capsule_contacts_many(a, b, r).query).size / 400
    assert 0.3 < frac < 0.8


def _sliver_off_its_plane():
    """A sliver triangle (just above the zero-area threshold) whose corner lies farther off
    its computed plane than the cull pad's rounding margin, and that corner's offset."""
    rng = np.random.default_rng(11)
    best = None
    for _ in range(400):
        a = rng.uniform(-1, 1, 3)
        d = rng.normal(size=3)
        d /= np.linalg.norm(d)
        b = a + 0.9 * d
        c = a + 0.4 * d + rng.normal(size=3) * 1e-10
        e1, e2 = b - a, c - a
        n = np.cross(e1, e2)
        n /= np.linalg.norm(n)
        off = n @ a
        dev = max(abs(n @ b - off), abs(n @ c - off))
        if best is None or dev > best[0]:
            best = (dev, np.array([a, b, c]), n, off)
    return best


def test_sliver_corner_off_its_plane_is_not_culled():
    """Regression: plane-based culls took every triangle to lie in its stored plane; a sliver's
    normal is only known to ~1e-16 |e|^2 / |e1 x e2|, so a capsule touching its off-plane
    corner was rejected by the plane-slab test although brute force finds the contact."""
    dev, tri, n, off = _sliver_off_its_plane()
    assert dev > 1e-7  # the configuration the cull used to get wrong
    mesh = TriangleMesh(tri, [[0, 1, 2]])
    r = 0.3
    for k in (1, 2):
        side = np.sign(n @ tri[k] - off) or 1.0
        centre = tri[k] + side * (r - 1e-8) * n  # within r of the corner
        cap = Capsule(centre, centre, r)
        truth = capsule_triangle(cap, *tri)
        got = mesh.capsule_contacts(cap)
        assert (truth is not None) == bool(got)
        assert mesh.penetrating_triangles(cap).tolist() == ([0] if truth else [])
        batch = mesh.capsule_contacts_many(centre[None], centre[None], r)
        assert batch.triangle.tolist() == ([0] if truth else [])
        sweep = mesh.sweep_capsule(Capsule(centre + 0.5 * side * n, centre + 0.5 * side * n, r),
                                   -0.5 * side * n)
        assert sweep is not None


def test_first_hit_per_query_takes_the_least_time_then_the_lowest_triangle():
    """The one first-hit reduction (sweeps, few sweeps, rays): least time, ties to the lowest
    triangle index (brute force's first minimum), one row per query, misses elsewhere."""
    qi = np.array([2, 0, 2, 0, 2, 5])
    ti = np.array([7, 3, 4, 1, 9, 0])
    t = np.array([0.5, 0.2, 0.5, 0.2, 0.1, 0.9])
    assert first_per_query(qi, ti, t).tolist() == [3, 4, 5]
    assert first_per_query(qi[:0], ti[:0], t[:0]).size == 0
    nrm = np.arange(18.0).reshape(6, 3)
    got = first_hits(7, qi, ti, t, nrm, -nrm)
    assert got.triangle.tolist() == [1, -1, 9, -1, -1, 0, -1]
    assert got.time.tolist() == [0.2, np.inf, 0.1, np.inf, np.inf, 0.9, np.inf]
    np.testing.assert_array_equal(got.normal[[0, 2, 5]], nrm[[3, 4, 5]])
    np.testing.assert_array_equal(got.point[[0, 2, 5]], -nrm[[3, 4, 5]])
    assert (got.normal[[1, 3, 4, 6]] == 0.0).all()
