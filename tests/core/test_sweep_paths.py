"""The mesh sweep fast paths (single-query route, windowed cull, two-round pruning) equal
brute force over every triangle with the generic kernel, including far from the origin."""

import numpy as np
import pytest
from brute_force import brute_sweep
from capsule_collision.core.constants import (
    SWEEP_CULL_CHUNK,
    SWEEP_FEW_QUERIES,
    SWEEP_PRUNE_MIN_PAIRS,
)
from capsule_collision.core.geometry import sweep as sweep_kernels
from capsule_collision.core.geometry.shapes import Capsule
from capsule_collision.core.geometry.sweep import sweep_capsule_triangle_many
from capsule_collision.core.mesh import sweeps as mesh_sweeps
from capsule_collision.core.mesh.triangle_mesh import TriangleMesh

from tools import scenes


def _scene(offset):
    v, t = scenes.terrain(30, seed=4)
    # a random soup over the terrain, and two zero-area triangles (a point and a segment)
    sv, st = scenes.soup(300, seed=6, extent=12.0)
    sv = sv + np.array([3.0, 3.0, -1.0])
    extra = np.array([[0, 0, 0], [0, 1, 1]]) + len(v) + len(sv)
    ev = np.array([[5.0, 5.0, 0.3], [5.5, 5.0, 0.4]])
    verts = np.concatenate([v, sv, ev]) + offset
    tris = np.concatenate([t, st + len(v), extra])
    return TriangleMesh(verts, tris)


def _equals_brute_force(mesh, batch, a, b, r, d, rows):
    """Assert batch rows' first hits (time, triangle) equal brute force; count the hits."""
    n_hits = 0
    for i in rows:
        truth = brute_sweep(mesh, a[i], b[i], r[i], d[i])
        if truth is None:
            assert batch.triangle[i] == -1
        else:
            n_hits += 1
            assert batch.time[i] == truth[0] and batch.triangle[i] == truth[1]
    return n_hits


@pytest.mark.parametrize("offset", [(0.0, 0.0, 0.0), (1e4, -1e4, 5e3)])
def test_batched_and_single_sweeps_equal_brute_force(offset):
    mesh = _scene(np.asarray(offset))
    a, b, r, d = scenes.sweep_queries(mesh.vertices, mesh.triangles, 80, seed=8)
    d[::7] *= 6.0  # long sweeps: many candidates per query
    d[3::11] = 0.0  # no motion
    batch = mesh.sweep_capsule_many(a, b, r, d)
    assert len(batch.time) == 80
    for i in range(len(a)):
        truth = brute_sweep(mesh, a[i], b[i], r[i], d[i])
        single = mesh.sweep_capsule(Capsule(a[i], b[i], r[i]), d[i])
        if truth is None:
            assert batch.triangle[i] == -1 and single is None
            continue
        t, k, nrm, pt = truth
        assert batch.time[i] == t and batch.triangle[i] == k
        assert single.time == t and single.triangle == k
        np.testing.assert_array_equal(batch.normal[i], nrm)
        np.testing.assert_array_equal(single.point, pt)


def test_pruned_rounds_exercised_and_exact():
    # enough pairs for the two-round pruning and several cull chunks
    mesh = _scene(np.zeros(3))
    a, b, r, d = scenes.sweep_queries(mesh.vertices, mesh.triangles, 400, seed=9)
    d *= 3.0
    batch = mesh.sweep_capsule_many(a, b, r, d)
    lo = np.minimum(np.minimum(a, b), np.minimum(a + d, b + d)) - r[:, None]
    hi = np.maximum(np.maximum(a, b), np.maximum(a + d, b + d)) + r[:, None]
    qi, _ = mesh.bvh.query_many_box6(np.concatenate([hi, -lo], 1))
    assert qi.size > max(SWEEP_PRUNE_MIN_PAIRS, 2 * SWEEP_CULL_CHUNK)
    _equals_brute_force(mesh, batch, a, b, r, d, range(0, len(a), 3))


def test_grazing_and_sliding_are_misses_on_the_mesh():
    v = np.array([[0, 0, 0], [4, 0, 0], [0, 4, 0], [4, 4, 0]], float)
    mesh = TriangleMesh(v, [[0, 1, 2], [1, 3, 2]])
    cap = Capsule((1, 1, 0.5), (1, 1, 2.0), 0.5)  # touching the floor
    assert mesh.sweep_capsule(cap, (2.0, 1.0, 0.0)) is None  # sliding
    assert mesh.sweep_capsule(cap, (1.0, 0.0, 1.0)) is None  # leaving
    batch = mesh.sweep_capsule_many(np.array([cap.a] * 300), np.array([cap.b] * 300), 0.5,
                                    np.tile([2.0, 1.0, 0.0], (300, 1)))
    assert (batch.triangle == -1).all()
    hit = mesh.sweep_capsule(cap, (0.0, 0.0, -0.1))
    assert hit is not None and hit.time == 0.0


def _count_routes(monkeypatch):
    """Counts of the calls of each sweep route of core/mesh/sweeps.py and of the exact kernel
    (core/geometry/sweep.py, looked up there at every call)."""
    calls = {"sweep_one": 0, "sweep_few": 0, "sweep_pairs": 0, "sweep_records": 0}
    for name in calls:
        module = sweep_kernels if name == "sweep_records" else mesh_sweeps
        real = getattr(module, name)

        def spy(*args, _real=real, _name=name, **kw):
            calls[_name] += 1
            return _real(*args, **kw)

        monkeypatch.setattr(module, name, spy)
    return calls


@pytest.mark.parametrize("offset", [(0.0, 0.0, 0.0), (1e4, -1e4, 5e3)])
def test_small_batches_take_the_lean_route_and_equal_brute_force(offset, monkeypatch):
    """Batches of 1..SWEEP_FEW_QUERIES sweeps (a controller's slide + probe) use per-query
    culls and one kernel call; their answers equal brute force and the large-batch route."""
    mesh = _scene(np.asarray(offset))
    a, b, r, d = scenes.sweep_queries(mesh.vertices, mesh.triangles, 24, seed=9)
    d[::5] *= 6.0
    d[2::9] = 0.0
    calls = _count_routes(monkeypatch)
    large = mesh.sweep_capsule_many(a, b, r, d)  # > SWEEP_FEW_QUERIES: the batched route
    assert calls["sweep_pairs"] == 1 and calls["sweep_one"] == calls["sweep_few"] == 0
    for size in range(1, SWEEP_FEW_QUERIES + 1):
        for lo in range(0, 24 - size + 1, size):
            s = slice(lo, lo + size)
            for name in calls:
                calls[name] = 0
            small = mesh.sweep_capsule_many(a[s], b[s], r[s], d[s])
            route = "sweep_one" if size == 1 else "sweep_few"
            assert calls[route] == 1 and calls["sweep_pairs"] == 0, (size, calls)
            assert calls["sweep_records"] <= 1  # none when every candidate was culled
            np.testing.assert_array_equal(small.time, large.time[s])
            np.testing.assert_array_equal(small.triangle, large.triangle[s])
            np.testing.assert_array_equal(small.normal, large.normal[s])
            np.testing.assert_array_equal(small.point, large.point[s])
    _equals_brute_force(mesh, large, a, b, r, d, range(24))


def test_empty_batches_return_empty_results():
    mesh = _scene(np.zeros(3))
    e = np.zeros((0, 3))
    sweeps = mesh.sweep_capsule_many(e, e, 0.3, e)
    assert sweeps.time.shape == (0,) and sweeps.normal.shape == (0, 3)
    assert sweeps.triangle.shape == (0,)
    rays = mesh.raycast_many(e, e, 1.0)
    assert rays.time.shape == (0,)
    contacts = mesh.capsule_contacts_many(e, e, 0.3)
    assert contacts.query.shape == (0,)


# ---------------------------------------------------------------- short-sweep culls
# The batched route drops pairs by the bounding-disc test (every sweep) and the exact
# mid-motion distance test (|v| <= SWEEP_SHORT_REL * r): each pair below is its own query
# against its own triangle (triangles 20 m apart), so the batched answer is that pair's
# kernel result, and any pair a cull wrongly dropped shows up as a missed hit.

def _pair_kernel(a, b, r, v, tri):
    t, _, _ = sweep_capsule_triangle_many(a, b, r, v, tri[:, 0], tri[:, 1], tri[:, 2])
    return t


def _grazing_pairs(n, seed, offset):
    """n capsule/triangle configurations and, per configuration, motions along a fixed
    direction at the critical length (bisected: the shortest motion the kernel calls a hit)
    and just below/above it, zero motion and a long motion."""
    rng = np.random.default_rng(seed)
    size = np.exp(rng.uniform(np.log(0.05), np.log(3.0), (n, 1, 1)))
    tri = size * rng.uniform(-0.5, 0.5, (n, 3, 3))
    tri[::9, 2] = tri[::9, 0] + 0.5 * (tri[::9, 1] - tri[::9, 0])  # zero-area: a segment
    tri[4::9, 1] = tri[4::9, 0]
    tri[4::9, 2] = tri[4::9, 0]  # a point
    tri[1::9, :, 2] = 0.0  # flat floor pieces (probes standing on them)
    w = rng.dirichlet(np.ones(3) * 0.3, n)  # closest point often near an edge or vertex
    y = np.einsum("ij,ijk->ik", w, tri)
    r = rng.uniform(0.05, 0.5, n)
    u = rng.normal(size=(n, 3))
    u /= np.linalg.norm(u, axis=1)[:, None]
    # every third: straight at the face along its normal (a point triangle: any direction),
    # the far end pointing away, so the mid-motion bound of the swept volume is tight
    nrm = np.cross(tri[:, 1] - tri[:, 0], tri[:, 2] - tri[:, 0])
    ln = np.linalg.norm(nrm, axis=1)
    face = (np.arange(n) % 3 == 1) & (ln > 1e-6)
    u[face] = nrm[face] / ln[face, None]
    gap = r * rng.uniform(0.0, 0.9, n)
    axis = rng.normal(size=(n, 3))
    axis[1::3] = u[1::3]
    axis *= rng.uniform(0.0, 1.5, n)[:, None]
    a = y + (r + gap)[:, None] * u
    b = a + axis
    d = -u + 0.3 * rng.normal(size=(n, 3))  # roughly towards the triangle
    d[1::3] = -u[1::3]
    cell = np.arange(n)  # a 20 x 20 m grid of cells: a small coordinate scale, small pads
    shift = np.asarray(offset) + np.column_stack([20.0 * (cell % 20), 20.0 * (cell // 20),
                                                  np.zeros(n)])
    tri = tri + shift[:, None, :]
    a = a + shift
    b = b + shift
    lo = np.zeros(n)
    hi = np.full(n, 2.0) * r / np.linalg.norm(d, axis=1)
    reach = np.isfinite(_pair_kernel(a, b, r, hi[:, None] * d, tri))
    for _ in range(60):  # hit(length) is monotone: the motion only extends along the ray
        mid = 0.5 * (lo + hi)
        h = np.isfinite(_pair_kernel(a, b, r, mid[:, None] * d, tri))
        hi = np.where(h, mid, hi)
        lo = np.where(h, lo, mid)
    lengths = [hi, np.nextafter(hi, 0.0), lo, hi * (1.0 + 1e-9), hi * (1.0 - 1e-9),
               np.zeros(n), 8.0 * hi]
    A, B, R, V, T = [], [], [], [], []
    for s in lengths:
        A.append(a[reach])
        B.append(b[reach])
        R.append(r[reach])
        V.append(s[reach, None] * d[reach])
        T.append(tri[reach])
    return (np.concatenate(A), np.concatenate(B), np.concatenate(R), np.concatenate(V),
            np.concatenate(T))


@pytest.mark.parametrize("offset", [(0.0, 0.0, 0.0), (1e4, -1e4, 5e3)])
def test_short_sweep_culls_drop_no_hit_at_grazing_lengths(offset):
    a, b, r, v, tri = _grazing_pairs(300, seed=21, offset=offset)
    k = len(a)
    mesh = TriangleMesh(tri.reshape(-1, 3), np.arange(3 * k).reshape(k, 3))
    truth = _pair_kernel(a, b, r, v, tri)
    assert np.isfinite(truth).sum() > k // 3 and (~np.isfinite(truth)).sum() > k // 5
    short = np.linalg.norm(v, axis=1) <= r
    assert (short & np.isfinite(truth)).sum() > k // 4  # the exact cull is exercised
    batch = mesh.sweep_capsule_many(a, b, r, v)
    np.testing.assert_array_equal(batch.time, truth)
    # the motions of one configuration share its triangle's position (7 copies): the lowest
    # index, the first copy, wins the tie
    first = np.arange(k) % (k // 7)
    np.testing.assert_array_equal(batch.triangle, np.where(np.isfinite(truth), first, -1))


@pytest.mark.slow  # over 10 s on the 2-core CI machine
@pytest.mark.parametrize("offset", [(0.0, 0.0, 0.0), (1e4, -1e4, 5e3)])
def test_ground_probes_and_snaps_on_terrain_equal_brute_force(offset):
    """Upright capsules standing on the terrain (foot sphere at, just above and just inside
    the surface), probed 0.04 m down, snapped, slid sideways and held still: the many
    near-floor triangles around the foot are what the short-sweep culls decide."""
    mesh = _scene(np.asarray(offset))
    rng = np.random.default_rng(33)
    n = 60
    xy = rng.uniform(2.0, 20.0, (n, 2)) + np.asarray(offset)[:2]
    o = np.column_stack([xy, np.full(n, mesh.aabb[1][2] + 1.0)])
    hit = mesh.raycast_many(o, np.tile([0.0, 0.0, -1.0], (n, 1)))
    ok = np.isfinite(hit.time)
    foot = hit.point[ok]
    m = len(foot)
    r = np.full(m, 0.35)
    lift = np.array([0.0, 1e-12, -1e-12, 1e-6, 0.02, 0.04, 0.041, -0.01])
    moves = np.array([[0, 0, -0.04], [0, 0, -0.2], [0.05, 0.0, 0.0], [0.03, -0.02, -0.01],
                      [0, 0, 0]], float)
    A, B, R, V = [], [], [], []
    for dz in lift:
        for mv in moves:
            base = foot + np.array([0.0, 0.0, 0.35 + dz])
            A.append(base)
            B.append(base + [0.0, 0.0, 1.1])
            R.append(r)
            V.append(np.broadcast_to(mv, (m, 3)))
    a, b, r, v = (np.concatenate(x) for x in (A, B, R, V))
    batch = mesh.sweep_capsule_many(a, b, r, v)
    assert _equals_brute_force(mesh, batch, a, b, r, v, range(len(a))) > len(a) // 4
