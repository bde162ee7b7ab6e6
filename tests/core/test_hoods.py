"""Cached neighbourhoods (``Hood``, ``core.hoods.HoodCache``), the tangent-bound cull
and pruning of short sweeps, and sweeps that skip start-in-contact normals: every answer
equals the hierarchy's and brute force's, whatever was cached or pruned."""

import numpy as np
import pytest
from brute_force import brute_sweep
from capsule_collision.core.constants import SWEEP_LOWER_PRUNE_MIN_PAIRS
from capsule_collision.core.controller.controller import (
    CharacterController,
    ControllerSettings,
    batch_sweeper,
)
from capsule_collision.core.geometry import sweep as sweep_mod
from capsule_collision.core.mesh.hoods import HoodCache
from capsule_collision.core.mesh.triangle_mesh import Hood, TriangleMesh
from capsule_collision.core.walk.walkthrough import walkthrough_many

from tools import scenes


def _terrain(offset=(0.0, 0.0, 0.0)):
    v, t = scenes.terrain(24, seed=5)
    return TriangleMesh(v + np.asarray(offset), t)


def _box_overlaps(mesh, lo, hi):
    """Exact float64 set of triangles whose AABB overlaps [lo, hi]."""
    tri = mesh.vertices[mesh.triangles]
    tlo, thi = tri.min(1), tri.max(1)
    return set(np.flatnonzero(((tlo <= hi) & (thi >= lo)).all(1)).tolist())


def _hood(mesh, lo, hi):
    cnt, tri, box = mesh.hood_triangles(lo, hi)
    off = np.cumsum(cnt) - cnt
    return Hood(lo, hi, off, cnt, tri, box)


def _feet_on_surface(mesh, n, seed, margin=1.0):
    rng = np.random.default_rng(seed)
    lo, hi = mesh.aabb
    xy = rng.uniform(lo[:2] + margin, hi[:2] - margin, (n, 2))
    o = np.column_stack([xy, np.full(n, hi[2] + 1.0)])
    res = mesh.raycast_many(o, np.tile([0.0, 0.0, -1.0], (n, 1)))
    assert np.isfinite(res.time).all()
    return res.point


def test_hood_regions_hold_every_overlapping_triangle():
    mesh = _terrain()
    rng = np.random.default_rng(1)
    lo = rng.uniform(0.0, 5.0, (20, 3))
    lo[:, 2] = -1.0
    hi = lo + rng.uniform(0.05, 1.5, (20, 3))
    hi[3] = lo[3]  # a degenerate (point-thin) region
    cnt, tri, box = mesh.hood_triangles(lo, hi)
    assert cnt.sum() == tri.size == box.shape[0] and box.dtype == np.float32
    off = np.cumsum(cnt) - cnt
    corners = mesh.vertices[mesh.triangles[tri]]
    # every cached box encloses its triangle (outward float32 rounding)
    assert (box[:, 0:3] <= corners.min(1)).all() and (-box[:, 3:6] >= corners.max(1)).all()
    for h in range(20):
        got = set(tri[off[h]:off[h] + cnt[h]].tolist())
        assert _box_overlaps(mesh, lo[h], hi[h]) <= got


@pytest.mark.parametrize("offset", [(0.0, 0.0, 0.0), (1e4, -1e4, 5e3)])
def test_sweeps_through_a_hood_equal_the_hierarchy_and_brute_force(offset):
    """Queries inside their owner's region take its cached triangles, queries reaching
    outside it (or owning an empty region) the hierarchy: the answers are the same."""
    mesh = _terrain(offset)
    feet = _feet_on_surface(mesh, 40, seed=2)
    n = len(feet)
    u = np.array([0.0, 0.0, 1.0])
    rng = np.random.default_rng(3)
    r = np.full(2 * n, 0.35)
    a = np.concatenate([feet + 0.35 * u + [0, 0, 0.01], feet + 0.35 * u - [0, 0, 0.005]])
    b = a + 1.1 * u
    v = np.concatenate([rng.normal(size=(n, 3)) * [0.1, 0.1, 0.02], np.tile(-0.04 * u, (n, 1))])
    v[::7] *= 40.0  # some sweeps reach far outside their region: the hierarchy answers
    owner = np.concatenate([np.arange(n), np.arange(n)])
    lo = np.minimum(a, b)[:n] - 0.6
    hi = np.maximum(a, b)[:n] + 0.6
    lo[5], hi[5] = lo[5] + 50.0, hi[5] + 50.0  # a region with no triangle in it
    hood = _hood(mesh, lo, hi)
    assert hood.cnt[5] == 0 and hood.cnt.sum() > 20 * n
    ref = mesh.sweep_capsule_many(a, b, r, v)
    got = batch_sweeper(mesh)(a, b, r, v, hood, owner)
    for x, y in zip(ref, got):
        np.testing.assert_array_equal(x, y)
    assert np.isfinite(ref.time).sum() > n // 2
    for i in range(0, 2 * n, 5):
        truth = brute_sweep(mesh, a[i], b[i], r[i], v[i])
        assert (got.triangle[i] == -1) if truth is None else (
            got.time[i] == truth[0] and got.triangle[i] == truth[1])


def test_pairs_from_a_hood_equal_the_hierarchy_pairs():
    mesh = _terrain()
    rng = np.random.default_rng(4)
    qlo = rng.uniform(1.0, 4.0, (30, 3))
    qlo[:, 2] = 0.0
    qhi = qlo + rng.uniform(0.1, 0.8, (30, 3))
    q6 = np.concatenate([qhi, -qlo], axis=1)
    owner = rng.integers(0, 3, 30)
    hood = _hood(mesh, np.tile([0.0, 0.0, -1.0], (3, 1)) + [[0, 0, 0], [1, 1, 0], [9, 9, 0]],
                 np.tile([5.0, 5.0, 3.0], (3, 1)))
    qi, ti = mesh.candidate_pairs(q6, hood, owner)
    rq, rt = mesh.bvh.query_many_box6(q6, exact=False)
    assert sorted(zip(qi.tolist(), ti.tolist())) == sorted(zip(rq.tolist(), rt.tolist()))
    assert (owner == 2).any() and (owner < 2).any()  # region 2 misses the queries: fallback


def test_hood_cache_renews_regions_and_compacts_without_losing_triangles():
    mesh = _terrain()
    cache = HoodCache(mesh, 6, margin=0.3)
    rng = np.random.default_rng(5)
    centre = rng.uniform(1.0, 5.0, (6, 3))
    centre[:, 2] = 0.5
    agents = np.array([0, 2, 3, 5])
    rows_before = 0
    for _ in range(400):
        centre[agents] += rng.normal(size=(4, 3)) * [0.2, 0.2, 0.0]
        np.clip(centre, 0.5, 5.5, out=centre)
        lo = centre[agents] - 0.5
        hi = centre[agents] + 0.5
        hood = cache.hood(agents, lo, hi)
        for j, g in enumerate(agents):
            assert (hood.lo[g] <= lo[j]).all() and (hood.hi[g] >= hi[j]).all()
            got = set(hood.tri[hood.off[g]:hood.off[g] + hood.cnt[g]].tolist())
            assert _box_overlaps(mesh, lo[j], hi[j]) <= got
        if cache.used < rows_before:
            break  # compacted
        rows_before = cache.used
    else:
        pytest.fail("the pool never compacted")
    assert (cache.cnt[[1, 4]] == 0).all()  # characters never moved own nothing


def test_walkthrough_many_with_and_without_hoods_is_bit_identical():
    mesh = _terrain()
    feet = _feet_on_surface(mesh, 12, seed=6, margin=1.5)
    rng = np.random.default_rng(7)
    paths = []
    for f in feet:
        ang = rng.uniform(0, 2 * np.pi)
        paths.append([f, f + 3.0 * np.array([np.cos(ang), np.sin(ang), 0.0])])
    paths.append([[0.6, 0.6, 3.0], [5.5, 5.5, 3.0]])  # a fall from above the terrain
    s = ControllerSettings()
    ctrl = CharacterController(mesh, s)
    with_h = walkthrough_many(mesh, paths, s, controller=ctrl)
    plain = CharacterController(mesh, s)
    plain.use_hoods = False
    without = walkthrough_many(mesh, paths, s, controller=plain)
    for x, y in zip(with_h, without):
        assert x.trace_bytes() == y.trace_bytes()
        assert [e.to_dict() for e in x.events] == [e.to_dict() for e in y.events]
    assert sum(r.reached_goal for r in with_h) >= 8


def test_short_probe_batches_prune_on_the_tangent_bound_and_stay_exact(monkeypatch):
    """Ground probes on terrain hit several triangles each; the batch evaluates each probe's
    most promising pairs first, then only pairs whose tangent bound is not later."""
    mesh = _terrain()
    feet = _feet_on_surface(mesh, 60, seed=8)
    u = np.array([0.0, 0.0, 1.0])
    lift = np.array([0.0, 0.005, 0.02, 1e-9])
    a = np.concatenate([feet + (0.35 + dz) * u for dz in lift])
    b = a + 1.1 * u
    r = np.full(len(a), 0.35)
    v = np.tile(-0.04 * u, (len(a), 1))
    evaluated = []
    real = sweep_mod.sweep_records

    def counting(*args):
        evaluated.append(args[5].size)
        return real(*args)

    monkeypatch.setattr(sweep_mod, "sweep_records", counting)
    got = mesh.sweep_capsule_many(a, b, r, v)
    assert len(evaluated) == 2  # two rounds
    monkeypatch.setattr(sweep_mod, "sweep_records", real)
    n_cand = mesh.bvh.query_many_box6(np.concatenate(
        [np.maximum(a, b) + 0.4, 0.4 - np.minimum(a, b + v)], axis=1))[0].size
    assert sum(evaluated) >= SWEEP_LOWER_PRUNE_MIN_PAIRS and sum(evaluated) < n_cand / 4
    assert np.isfinite(got.time).all()
    for i in range(len(a)):
        truth = brute_sweep(mesh, a[i], b[i], r[i], v[i])
        assert got.time[i] == truth[0] and got.triangle[i] == truth[1]
        np.testing.assert_array_equal(got.normal[i], truth[2])


@pytest.mark.parametrize("offset", [(0.0, 0.0, 0.0), (1e4, -1e4, 5e3)])
def test_sliding_along_a_floor_at_the_radius_is_decided_exactly(offset):
    """A capsule moving parallel to a flat floor: the tangent bound culls the floor when the
    gap is at least the radius, never when it is a hair less (the capsule starts in
    contact: time 0), and a rising slab ahead is still hit at brute force's time."""
    o = np.asarray(offset)
    v, t = scenes.terrain(8, seed=0)
    v[:, 2] = 0.0  # flat
    ramp = np.array([[2.0, -1.0, 0.0], [2.0, 3.0, 0.0], [3.0, 1.0, 0.5]])
    verts = np.concatenate([v, ramp]) + o
    tris = np.concatenate([t, [[len(v), len(v) + 1, len(v) + 2]]])
    mesh = TriangleMesh(verts, tris)
    r = 0.35
    gaps = np.array([0.0, 1e-12, -1e-9, 1e-6, -1e-6, 0.01])  # graze tolerance 3.5e-11 m
    a = o + np.array([[0.8, 1.0, r]]) + gaps[:, None] * [0, 0, 1]
    b = a + [0.0, 0.0, 1.1]
    vel = np.array([0.05, 0.0, 0.0])
    got = mesh.sweep_capsule_many(a, b, np.full(len(a), r), np.tile(vel, (len(a), 1)))
    for i in range(len(a)):
        truth = brute_sweep(mesh, a[i], b[i], r, vel)
        if truth is None:
            assert got.triangle[i] == -1
        else:
            assert got.time[i] == truth[0] and got.triangle[i] == truth[1]
    assert got.time[0] == np.inf and got.time[5] == np.inf  # touching / clear: no hit
    assert got.time[2] == 0.0 and got.time[4] == 0.0  # a hair inside: starts in contact
    # towards the rising slab: hit part-way
    far = mesh.sweep_capsule_many(a[5:6], b[5:6], r, np.array([[1.5, 0.0, 0.0]]))
    truth = brute_sweep(mesh, a[5], b[5], r, np.array([1.5, 0.0, 0.0]))
    assert 0.0 < far.time[0] < 1.0 and far.time[0] == truth[0]


def test_sweeps_without_start_contact_normals_report_zeros():
    """want=False: a query starting in contact hits at time 0 with zero normal and point
    (no contact kernel); the others, and wanted ones, are unchanged."""
    mesh = _terrain()
    feet = _feet_on_surface(mesh, 20, seed=9)
    u = np.array([0.0, 0.0, 1.0])
    a = np.concatenate([feet + 0.30 * u, feet + 0.45 * u])  # first half start in contact
    b = a + 1.1 * u
    n = len(a)
    r = np.full(n, 0.35)
    v = np.tile(-0.04 * u, (n, 1))
    want = np.arange(n) % 2 == 0
    ref = mesh.sweep_capsule_many(a, b, r, v)
    got = batch_sweeper(mesh)(a, b, r, v, want=want)
    np.testing.assert_array_equal(got.time, ref.time)
    np.testing.assert_array_equal(got.triangle, ref.triangle)
    zero = ref.time == 0.0
    assert zero[: n // 2].all() and not zero.all()
    keep = ~zero | want
    np.testing.assert_array_equal(got.normal[keep], ref.normal[keep])
    np.testing.assert_array_equal(got.point[keep], ref.point[keep])
    assert (got.normal[zero & ~want] == 0.0).all() and (got.point[zero & ~want] == 0.0).all()
    assert (np.abs(ref.normal[zero & ~want]).sum(1) > 0.5).all()
