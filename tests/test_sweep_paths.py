"""The mesh sweep fast paths (single-query route, windowed cull, two-round pruning) equal
brute force over every triangle with the generic kernel, including far from the origin."""

import numpy as np
import pytest

from core.constants import SWEEP_CULL_CHUNK, SWEEP_FEW_QUERIES, SWEEP_PRUNE_MIN_PAIRS
from core.mesh import TriangleMesh
from core.shapes import Capsule
from core.sweep import sweep_capsule_triangle_many
from tools import scenes


def _brute(mesh, a, b, r, v):
    tri = mesh.vertices[mesh.triangles]
    n = len(tri)
    t, nrm, pt = sweep_capsule_triangle_many(
        np.broadcast_to(a, (n, 3)), np.broadcast_to(b, (n, 3)), np.full(n, r),
        np.broadcast_to(v, (n, 3)), tri[:, 0], tri[:, 1], tri[:, 2])
    i = int(np.argmin(t))
    if not np.isfinite(t[i]):
        return None
    return t[i], i, nrm[i], pt[i]


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


@pytest.mark.parametrize("offset", [(0.0, 0.0, 0.0), (1e4, -1e4, 5e3)])
def test_batched_and_single_sweeps_equal_brute_force(offset):
    mesh = _scene(np.asarray(offset))
    a, b, r, d = scenes.sweep_queries(mesh.vertices, mesh.triangles, 80, seed=8)
    d[::7] *= 6.0  # long sweeps: many candidates per query
    d[3::11] = 0.0  # no motion
    batch = mesh.sweep_capsule_many(a, b, r, d)
    assert len(batch.time) == 80
    for i in range(len(a)):
        truth = _brute(mesh, a[i], b[i], r[i], d[i])
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
    for i in range(0, len(a), 3):
        truth = _brute(mesh, a[i], b[i], r[i], d[i])
        if truth is None:
            assert batch.triangle[i] == -1
        else:
            assert batch.time[i] == truth[0] and batch.triangle[i] == truth[1]


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


@pytest.mark.parametrize("offset", [(0.0, 0.0, 0.0), (1e4, -1e4, 5e3)])
def test_small_batches_take_the_lean_route_and_equal_brute_force(offset):
    """Batches of 1..SWEEP_FEW_QUERIES sweeps (a controller's slide + probe) use per-query
    culls and one kernel call; their answers equal brute force and the large-batch route."""
    mesh = _scene(np.asarray(offset))
    a, b, r, d = scenes.sweep_queries(mesh.vertices, mesh.triangles, 24, seed=9)
    d[::5] *= 6.0
    d[2::9] = 0.0
    large = mesh.sweep_capsule_many(a, b, r, d)  # > SWEEP_FEW_QUERIES: the batched route
    for size in range(1, SWEEP_FEW_QUERIES + 1):
        for lo in range(0, 24 - size + 1, size):
            s = slice(lo, lo + size)
            small = mesh.sweep_capsule_many(a[s], b[s], r[s], d[s])
            np.testing.assert_array_equal(small.time, large.time[s])
            np.testing.assert_array_equal(small.triangle, large.triangle[s])
            np.testing.assert_array_equal(small.normal, large.normal[s])
            np.testing.assert_array_equal(small.point, large.point[s])
    for i in range(24):
        truth = _brute(mesh, a[i], b[i], r[i], d[i])
        if truth is None:
            assert large.triangle[i] == -1
        else:
            assert large.time[i] == truth[0] and large.triangle[i] == truth[1]


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
