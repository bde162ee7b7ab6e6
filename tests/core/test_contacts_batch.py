"""Batched capsule contacts: the fast contact order, the float32 slot test, exact-tie scenes."""

import numpy as np
import pytest
from capsule_collision.core.geometry.contact import capsule_triangle_many
from capsule_collision.core.geometry.shapes import Capsule
from capsule_collision.core.mesh.bvh import BVH, round_down32
from capsule_collision.core.mesh.contacts import contact_order
from capsule_collision.core.mesh.triangle_mesh import TriangleMesh
from mesh_scenes import grid_mesh

_ADVERSARIAL_DEPTHS = np.array([
    0.1, np.nextafter(0.1, 1.0), np.nextafter(0.1, 0.0), 0.1 + 1e-12, 0.2, 0.3,
    5e-324, 1e-300, 1e300, np.finfo(float).max, 1.0, np.nextafter(1.0, 2.0),
])


def _pairs(rng, nq, nt, k):
    pairs = np.unique(np.stack([rng.integers(0, nq, k), rng.integers(0, nt, k)], 1), axis=0)
    perm = rng.permutation(len(pairs))  # any input order
    return pairs[perm, 0], pairs[perm, 1]


@pytest.mark.parametrize("seed", range(40))
def test_contact_order_equals_lexsort(seed):
    rng = np.random.default_rng(seed)
    nq = int(rng.integers(1, 40))
    nt = int(rng.integers(1, 1 << int(rng.integers(1, 45))))  # up to > 2**40: lexsort fallback
    qi, ti = _pairs(rng, nq, nt, int(rng.integers(1, 600)))
    if seed % 3 == 0:
        depth = rng.choice(_ADVERSARIAL_DEPTHS, qi.size)  # many exact and near ties
    elif seed % 3 == 1:
        depth = 0.25 + rng.integers(0, 4, qi.size) * 1e-15  # ties below the key's bits
    else:
        depth = rng.uniform(0.0, 1.0, qi.size) + 1e-300
    np.testing.assert_array_equal(contact_order(qi, ti, depth, nq, nt),
                                  np.lexsort((ti, -depth, qi)))


def test_round_down32_is_the_largest_float32_below():
    x = np.array([0.1, -0.1, 1e-46, -1e-46, 3.4e38, 3.5e38, -3.5e38, np.inf, -np.inf, 0.0,
                  1.0, 2.0 ** -149, 16777217.0])
    y = round_down32(x)
    assert y.dtype == np.float32
    assert (y.astype(float) <= x).all()
    with np.errstate(over="ignore"):
        up = np.nextafter(y, np.float32(np.inf)).astype(float)
    assert ((up > x) | (y == np.float32(np.finfo(np.float32).max)) | np.isinf(x)).all()


@pytest.mark.parametrize("offset", [0.0, 1e4, -3e6])
def test_float32_slot_test_is_a_tight_superset(offset):
    rng = np.random.default_rng(3)
    n = 3000
    lo = rng.uniform(-20, 20, (n, 3)) + offset
    hi = lo + rng.uniform(0, 2, (n, 3))
    qlo = rng.uniform(-22, 22, (300, 3)) + offset
    qhi = qlo + rng.uniform(0, 3, (300, 3))
    qlo[:50] = hi[:50]  # touching, and within float32 rounding of box faces
    qhi[:50] = hi[:50] + 1e-9
    bvh = BVH(lo, hi)
    q6 = np.concatenate([qhi, -qlo], 1)
    qe, be = bvh.query_many_box6(q6)
    qf, bf = bvh.query_many_box6(q6, exact=False)
    assert (np.diff(qf) >= 0).all()
    exact = set(zip(qe.tolist(), be.tolist()))
    loose = set(zip(qf.tolist(), bf.tolist()))
    assert exact <= loose
    # extras overlap once the boxes are grown by their float32 rounding (query corners: to
    # nearest then one step out, <= 1.5 ulp; slot corners: <= 1 ulp down)
    ulp = 2.5 * np.spacing(np.float32(np.abs(np.r_[lo, hi, qlo, qhi]).max())).astype(float)
    for q, b in loose - exact:
        assert (lo[b] <= qhi[q] + ulp).all() and (hi[b] >= qlo[q] - ulp).all()


@pytest.mark.parametrize("z", [0.0, 1e4])
def test_flat_floor_exact_depth_ties_in_triangle_order(z):
    # An upright capsule sunk into a flat floor touches several coplanar triangles at exactly
    # the same depth: the batch must list them by triangle index, like brute force.
    v, t = grid_mesh(n=16, bumps=0.0, z=z)
    mesh = TriangleMesh(v, t)
    rng = np.random.default_rng(7)
    nq = 200
    base = np.c_[rng.uniform(0.5, 7.5, (nq, 2)), np.full(nq, z)]
    base[:40, :2] = np.round(base[:40, :2] * 2.0) / 2.0  # over grid vertices: many ties
    r = rng.uniform(0.2, 0.6, nq)
    a = base + np.c_[np.zeros((nq, 2)), r * rng.uniform(-0.5, 0.99, nq)]
    b = a + np.array([0.0, 0.0, 1.0])
    batch = mesh.capsule_contacts_many(a, b, r)
    tri = mesh.vertices[mesh.triangles]
    ties = 0
    for i in range(nq):
        hit, depth, normal, point = capsule_triangle_many(a[i], b[i], r[i], tri[:, 0],
                                                          tri[:, 1], tri[:, 2])
        idx = np.flatnonzero(hit)
        idx = idx[np.lexsort((idx, -depth[idx]))]
        sel = batch.query == i
        np.testing.assert_array_equal(batch.triangle[sel], idx)
        np.testing.assert_array_equal(batch.depth[sel], depth[idx])
        np.testing.assert_array_equal(batch.normal[sel], normal[idx])
        np.testing.assert_array_equal(batch.point[sel], point[idx])
        assert [c.triangle for c in mesh.capsule_contacts(Capsule(a[i], b[i], r[i]))] == \
            idx.tolist()
        ties += int((np.diff(depth[idx]) == 0.0).sum())
    assert ties > 50
    assert batch.normal.flags.c_contiguous and batch.point.flags.c_contiguous
