"""The fast paths of the capsule-triangle kernel agree with the generic kernel.

* TriangleMesh's precomputed per-triangle records (gathered per candidate, chunked) give the
  same answers as ``capsule_triangle_many`` on the raw vertices.
* The chunked large-N path of ``capsule_triangle_many`` equals per-pair calls.
Random pairs include degenerate (segment / point) triangles, zero-length capsules, capsules
parallel to edges and shapes 10 km from the origin.
"""

import numpy as np
import pytest
from capsule_collision.core.geometry.contact import CONTACT_CHUNK, capsule_triangle_many
from capsule_collision.core.mesh.contacts import exact_contacts
from capsule_collision.core.mesh.triangle_mesh import TriangleMesh


def _pairs(n, offset, seed):
    rng = np.random.default_rng(seed)
    tri = rng.uniform(-1.0, 1.0, (n, 3, 3))
    k = n // 8
    tri[:k, 2] = 0.5 * (tri[:k, 0] + tri[:k, 1])  # segment-degenerate
    tri[k:2 * k, 1] = tri[k:2 * k, 0]  # repeated vertex
    tri[2 * k:3 * k, 1:] = tri[2 * k:3 * k, :1]  # point
    p = rng.uniform(-1.0, 1.0, (n, 3))
    q = p + rng.uniform(-1.0, 1.0, (n, 3))
    q[3 * k:4 * k] = p[3 * k:4 * k]  # spheres
    # upright capsules beside vertical edges (parallel segment-edge pairs)
    sl = slice(4 * k, 5 * k)
    tri[sl, 1] = tri[sl, 0] + [0.0, 0.0, 0.7]
    p[sl] = tri[sl, 0] + rng.uniform(-0.3, 0.3, (k, 3)) * [1, 1, 0] + [0, 0, -0.2]
    q[sl] = p[sl] + [0.0, 0.0, 1.1]
    r = rng.uniform(0.05, 0.8, n)
    off = np.asarray(offset, dtype=np.float64)
    return p + off, q + off, r, tri + off


def _assert_same(x, y, hit):
    np.testing.assert_array_equal(x[0], y[0])
    for u, v in zip(x[1:], y[1:]):
        np.testing.assert_allclose(u[hit], v[hit], rtol=0, atol=1e-12)


@pytest.mark.parametrize("offset", [(0.0, 0.0, 0.0), (1e4, -1e4, 1e4)])
def test_mesh_records_equal_generic_kernel(offset):
    n = 3000
    p, q, r, tri = _pairs(n, offset, seed=5)
    mesh = TriangleMesh(tri.reshape(-1, 3), np.arange(3 * n).reshape(n, 3))
    generic = capsule_triangle_many(p, q, r, mesh.vertices[mesh.triangles[:, 0]],
                                    mesh.vertices[mesh.triangles[:, 1]],
                                    mesh.vertices[mesh.triangles[:, 2]])
    idx = np.arange(n)
    hit, depth, normal, point = exact_contacts(mesh, p, q, r, idx, idx)
    fast = hit, depth, normal.T, point.T
    _assert_same(fast, generic, generic[0])
    assert generic[0].any() and not generic[0].all()


@pytest.mark.parametrize("offset", [(0.0, 0.0, 0.0), (-1e4, 1e4, 5e3)])
def test_chunked_kernel_equals_per_pair(offset):
    n = CONTACT_CHUNK + 700
    p, q, r, tri = _pairs(n, offset, seed=9)
    big = capsule_triangle_many(p, q, r, tri[:, 0], tri[:, 1], tri[:, 2])
    sample = np.r_[np.arange(0, n, 97), CONTACT_CHUNK - 1, CONTACT_CHUNK, n - 1]
    for i in sample:
        one = capsule_triangle_many(p[i], q[i], r[i], tri[i, 0], tri[i, 1], tri[i, 2])
        assert one[0][0] == big[0][i]
        if one[0][0]:
            assert abs(one[1][0] - big[1][i]) <= 1e-12
            np.testing.assert_allclose(one[2][0], big[2][i], rtol=0, atol=1e-12)
            np.testing.assert_allclose(one[3][0], big[3][i], rtol=0, atol=1e-9)


def test_single_capsule_against_many_triangles_broadcasts():
    p, q, r, tri = _pairs(64, (0.0, 0.0, 0.0), seed=2)
    many = capsule_triangle_many(p[0], q[0], r[0], tri[:, 0], tri[:, 1], tri[:, 2])
    rows = capsule_triangle_many(np.broadcast_to(p[0], (64, 3)), np.broadcast_to(q[0], (64, 3)),
                                 np.full(64, r[0]), tri[:, 0], tri[:, 1], tri[:, 2])
    for u, v in zip(many, rows):
        np.testing.assert_array_equal(u, v)
