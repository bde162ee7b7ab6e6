"""The record-based sweep entry point (core.sweep.sweep_records, used by TriangleMesh) runs the
same kernel as sweep_capsule_triangle_many: identical answers, bit for bit, for shared and
per-pair capsules, small and chunked batches, and degenerate triangles."""

import numpy as np
import pytest
from capsule_collision.core.geometry import sweep as sweep_module
from capsule_collision.core.geometry.closest import triangle_record
from capsule_collision.core.geometry.sweep import sweep_capsule_triangle_many, sweep_records


def _records(a, b, c):
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.ascontiguousarray(triangle_record(a.T, b.T, c.T).T)


def _scene(seed, n_tri=300, offset=0.0):
    rng = np.random.default_rng(seed)
    a, b, c = (rng.normal(size=(n_tri, 3)) * 2.0 + offset for _ in range(3))
    degenerate = rng.random(n_tri) < 0.1  # collapsed onto an edge or a vertex
    c[degenerate] = a[degenerate] + (b - a)[degenerate] * rng.choice([0.0, 0.5, 1.0])
    return a, b, c


def _assert_same(got, want):
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)


@pytest.mark.parametrize("offset", [0.0, 10_000.0])
def test_rec_path_equals_vertex_path_per_pair(offset):
    a, b, c = _scene(1, offset=offset)
    krec = _records(a, b, c)
    rng = np.random.default_rng(2)
    n = 2000
    ti = rng.integers(0, len(a), n)
    p = rng.normal(size=(n, 3)) * 2.0 + offset
    q = p + rng.normal(size=(n, 3)) * rng.choice([0.0, 0.5, 1.5], (n, 1))
    v = rng.normal(size=(n, 3)) * rng.choice([0.0, 1.0, 4.0], (n, 1))
    r = rng.uniform(0.05, 0.8, n)
    want = sweep_capsule_triangle_many(p, q, r, v, a[ti], b[ti], c[ti])
    got = sweep_records(p, q, r, v, krec, ti)
    _assert_same(got, want)
    hits = np.isfinite(want[0])
    assert 0.1 < hits.mean() < 0.9 and (want[0] == 0.0).any()


def test_rec_path_shared_capsule_equals_broadcast():
    a, b, c = _scene(3)
    krec = _records(a, b, c)
    ti = np.arange(len(a))
    p, q, v = np.array([0.1, 0.2, -0.3]), np.array([0.3, 0.1, 1.2]), np.array([1.5, -2.0, 0.7])
    want = sweep_capsule_triangle_many(p, q, 0.4, v, a, b, c)
    got = sweep_records(p, q, 0.4, v, krec, ti)
    _assert_same(got, want)
    assert np.isfinite(want[0]).any()


def test_rec_path_chunks_identical():
    a, b, c = _scene(4)
    krec = _records(a, b, c)
    rng = np.random.default_rng(5)
    n = sweep_module._CHUNK * 2 + 17
    ti = rng.integers(0, len(a), n)
    p = rng.normal(size=(n, 3)) * 2.0
    q = p + rng.normal(size=(n, 3))
    v = rng.normal(size=(n, 3)) * 3.0
    r = rng.uniform(0.05, 0.8, n)
    got = sweep_records(p, q, r, v, krec, ti)
    small = [sweep_records(p[s], q[s], r[s], v[s], krec, ti[s])
             for s in (slice(0, 50), slice(50, 4000), slice(4000, n))]
    _assert_same(got, [np.concatenate(x) for x in zip(*small)])
    shared = sweep_records(p[0], q[0], r[0], v[0], krec, ti)
    want = sweep_capsule_triangle_many(p[0], q[0], r[0], v[0], a[ti], b[ti], c[ti])
    _assert_same(shared, want)


def test_rec_path_empty():
    a, b, c = _scene(6, n_tri=4)
    time, normal, point = sweep_records(np.zeros(3), np.ones(3), 0.3, np.ones(3), _records(a, b, c),
                                     np.zeros(0, dtype=np.int64))
    assert time.shape == (0,) and normal.shape == point.shape == (0, 3)
