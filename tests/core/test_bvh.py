"""core.bvh: float32 traversal rounded outward, float64 leaf test: answers equal brute force."""

import numpy as np
import pytest
from capsule_collision.core.mesh.bvh import BVH, round_down32, round_up32


def _truth(lo, hi, qlo, qhi):
    return [np.flatnonzero((lo <= qhi[i]).all(1) & (hi >= qlo[i]).all(1)) for i in range(len(qlo))]


def _check(lo, hi, qlo, qhi):
    bvh = BVH(lo, hi)
    truth = _truth(lo, hi, qlo, qhi)
    qi, bi = bvh.query_many_box6(np.concatenate([qhi, -qlo], 1))
    assert qi.dtype == np.int64 and bi.dtype == np.int64
    assert (np.diff(qi) >= 0).all()
    for i in range(len(qlo)):
        single = bvh.query_box6(np.concatenate([qhi[i], -qlo[i]]))
        assert single.dtype == np.int64
        np.testing.assert_array_equal(np.sort(single), truth[i])
        np.testing.assert_array_equal(np.sort(bi[qi == i]), truth[i])


@pytest.mark.parametrize("offset", [0.0, 1e4, -1e4, 3e6])
@pytest.mark.parametrize("n", [7, 300, 4000])
def test_queries_equal_brute_force_with_offsets(n, offset):
    rng = np.random.default_rng(n)
    lo = rng.uniform(-20, 20, (n, 3)) + offset
    ext = rng.uniform(0, 2, (n, 3))
    ext[rng.uniform(size=n) < 0.2, 2] = 0.0  # flat (horizontal) boxes
    ext[rng.uniform(size=n) < 0.05] = 0.0  # points
    hi = lo + ext
    qlo = rng.uniform(-22, 22, (150, 3)) + offset
    qhi = qlo + rng.uniform(0, 4, (150, 3))
    # touching boxes, within float32 rounding of boundaries, and degenerate queries
    k = min(n, 40)
    qlo[:k] = hi[:k]
    qhi[:k] = hi[:k]
    qhi[k:2 * k] = np.nextafter(lo[:k], -np.inf)  # just misses box i (if nothing else)
    qlo[k:2 * k] = qhi[k:2 * k] - 0.5
    qlo[2 * k:3 * k] = np.nextafter(hi[:k], np.inf)
    qhi[2 * k:3 * k] = qlo[2 * k:3 * k] + 1e-9
    _check(lo, hi, qlo, qhi)


def test_terrain_like_flat_grid():
    # a heightfield's triangle boxes: many equal-height, touching, float32-inexact values
    x, y = np.meshgrid(np.arange(60) * 0.1 + 0.05, np.arange(60) * 0.1 + 0.05, indexing="ij")
    lo = np.stack([x.ravel(), y.ravel(), np.full(x.size, 0.1)], 1) + 1e4 / 3
    hi = lo + [0.1, 0.1, 0.0]
    rng = np.random.default_rng(5)
    qlo = rng.uniform(lo.min(0) - 0.3, hi.max(0), (120, 3))
    qhi = qlo + rng.uniform(0, 0.7, (120, 3))
    qlo[:30, 2] = hi[0, 2]  # resting exactly on the plane
    qhi[:30, 2] = hi[0, 2] + 1.0
    qhi[30:60, 2] = np.nextafter(lo[0, 2], -np.inf)  # just below it
    _check(lo, hi, qlo, qhi)


def test_huge_coordinates_beyond_float32():
    rng = np.random.default_rng(9)
    lo = rng.uniform(-1, 1, (200, 3)) * 1e39
    hi = lo + np.abs(rng.uniform(-1, 1, (200, 3))) * 1e38
    qlo = rng.uniform(-1, 1, (50, 3)) * 1e39
    qhi = qlo + 5e38
    qlo[:10] = lo[:10]
    qhi[:10] = lo[:10]
    _check(lo, hi, qlo, qhi)


def test_outward_rounding():
    rng = np.random.default_rng(2)
    x = np.concatenate([rng.normal(size=1000) * 10.0 ** rng.integers(-30, 38, 1000),
                        [0.0, -0.0, 1e39, -1e39, np.inf, -np.inf]])
    with np.errstate(over="ignore"):
        assert (round_down32(x).astype(np.float64) <= x).all()
    f32max = float(np.finfo(np.float32).max)
    assert (round_up32(x).astype(np.float64) >= np.minimum(x, f32max)).all()


def test_many_empty_and_chunked():
    rng = np.random.default_rng(4)
    lo = rng.uniform(0, 10, (500, 3))
    hi = lo + 0.2
    bvh = BVH(lo, hi)
    qi, bi = bvh.query_many_box6(np.empty((0, 6)))
    assert qi.size == bi.size == 0
    qlo = rng.uniform(-1, 11, (2500, 3))  # more than one query chunk
    qhi = qlo + 0.5
    qi, bi = bvh.query_many_box6(np.concatenate([qhi, -qlo], 1))
    truth = _truth(lo, hi, qlo, qhi)
    assert (np.diff(qi) >= 0).all()
    counts = np.bincount(qi, minlength=len(qlo))
    assert counts.tolist() == [t.size for t in truth]
    for i in range(0, 2500, 97):
        np.testing.assert_array_equal(np.sort(bi[qi == i]), truth[i])
