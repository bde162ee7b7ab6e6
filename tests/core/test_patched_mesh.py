"""core.mesh.patched: a mesh edited without a rebuild answers every query exactly as a fresh
TriangleMesh of the same vertices and triangles does, bit for bit."""

import numpy as np
import pytest
from brute_force import brute_contacts
from capsule_collision.core import ControllerSettings, classify_triangles, walkthrough_many
from capsule_collision.core.geometry.shapes import Capsule
from capsule_collision.core.mesh.patched import PatchedMesh, replace_triangles
from capsule_collision.core.mesh.triangle_mesh import TriangleMesh
from controller_scenes import box, grid, merge
from mesh_scenes import random_capsules

from tools import scenes

# A level of parts: terrain, then boxes (12 triangles each), like the add-on's level order.
BOXES = [((1.0, 1.0, -0.2), (2.0, 2.5, 1.0)), ((-2.5, 0.5, -0.2), (-1.5, 1.0, 2.0)),
         ((0.0, -3.0, -0.2), (3.0, -2.5, 1.5))]


def _level():
    parts = [scenes.terrain(16, seed=3)] + [box(lo, hi) for lo, hi in BOXES]
    v, t = merge(parts)
    sizes = [p[1].shape[0] for p in parts]
    starts = np.cumsum([0] + sizes)
    return TriangleMesh(v, t), [np.arange(s, e) for s, e in zip(starts[:-1], starts[1:])]


def _moved_box(k, offset):
    lo, hi = BOXES[k]
    return box(np.add(lo, offset), np.add(hi, offset))


def _edits():
    """Named sequences of edits; each (start, stop, vertices, triangles) on the previous mesh."""
    mesh, ranges = _level()
    two = box((1.0, 1.0, -0.2), (1.5, 2.5, 1.0))
    tall = box((1.5, 1.0, -0.2), (2.0, 2.5, 3.0))
    r1, r2, r3 = (int(ranges[k][0]) for k in (1, 2, 3))
    n = mesh.n_triangles
    none = (np.empty((0, 3)), np.empty((0, 3), int))
    return mesh, {
        "move a box": [(r1, r1 + 12, *_moved_box(0, (0.4, -0.3, 0.1)))],
        "split a box in two": [(r2, r2 + 12, *merge([two, tall]))],
        "delete a box": [(r3, r3 + 12, *none)],
        "add a box": [(n, n, *box((4.0, 4.0, -0.5), (5.0, 5.0, 1.0)))],
        # edits of edits: the added triangles replaced again, base triangles on either side
        "move twice": [(r1, r1 + 12, *_moved_box(0, (0.4, -0.3, 0.1))),
                       (r1, r1 + 12, *_moved_box(0, (-0.5, 0.2, 0.0)))],
        "grow, then shrink across parts": [(r2, r2 + 12, *merge([two, tall])),
                                           (r2 - 6, r2 + 30, *box((0, -1, 0), (1, 0, 1))),
                                           (r1 + 3, r1 + 9, *none)],
        "edit the terrain": [(0, 40, *grid(-1.0, 1.0, -1.0, 1.0, z=0.3, cell=0.25))],
    }


def _apply(mesh, edits):
    """(patched mesh, corners (M, 3, 3) the edits should give: numpy splices of corners)."""
    corners = mesh.vertices[mesh.triangles]
    for start, stop, v, t in edits:
        mesh = replace_triangles(mesh, start, stop, v, t)
        new = np.asarray(v, float)[np.asarray(t, int)].reshape(-1, 3, 3)
        corners = np.concatenate([corners[:start], new, corners[stop:]])
    return mesh, corners


EDITS = sorted(_edits()[1])


@pytest.fixture(scope="module", params=EDITS)
def pair(request):
    """(patched, fresh) meshes of the same triangles."""
    base, edits = _edits()
    patched, corners = _apply(base, edits[request.param])
    assert isinstance(patched, PatchedMesh) and patched.base is base  # no rebuild of the level
    # the new triangles took the place of the replaced ones: a fresh build's order
    _same(patched.vertices[patched.triangles], corners)
    fresh = TriangleMesh(patched.vertices, patched.triangles)
    return patched, fresh


def _same(x, y):
    np.testing.assert_array_equal(np.asarray(x), np.asarray(y))


def test_whole_mesh_arrays_are_the_fresh_builds(pair):
    patched, fresh = pair
    assert patched.n_triangles == fresh.n_triangles
    for name in ("vertices", "triangles", "normals", "areas"):
        _same(getattr(patched, name), getattr(fresh, name))
    for a, b in zip(patched.aabb, fresh.aabb):
        _same(a, b)
    _same(classify_triangles(patched, 45.0), classify_triangles(fresh, 45.0))


def test_capsule_queries_equal_a_fresh_build(pair):
    patched, fresh = pair
    a, b, r = random_capsules(fresh, 120, seed=7)
    hits = 0
    for i in range(a.shape[0]):
        cap = Capsule(a[i], b[i], r[i])
        got, want = patched.capsule_contacts(cap), fresh.capsule_contacts(cap)
        assert [c.triangle for c in got] == [c.triangle for c in want]
        for g, w in zip(got, want):
            assert g.depth == w.depth
            _same(g.normal, w.normal)
            _same(g.point, w.point)
        _same(patched.penetrating_triangles(cap), fresh.penetrating_triangles(cap))
        hits += len(want)
    assert hits > 50  # the capsules do touch the edited parts and the rest
    got, want = patched.capsule_contacts_many(a, b, r), fresh.capsule_contacts_many(a, b, r)
    for g, w in zip(got, want):
        _same(g, w)
    # and both equal brute force over the fresh triangles (the oracle of TriangleMesh)
    idx, depth, _, _ = brute_contacts(fresh, a[0], b[0], r[0])
    _same([c.triangle for c in patched.capsule_contacts(Capsule(a[0], b[0], r[0]))], idx)


@pytest.mark.parametrize("n", [1, 3, 150])  # one sweep, a few, a batch: three routes
def test_sweeps_equal_a_fresh_build(pair, n):
    patched, fresh = pair
    a, b, r = random_capsules(fresh, n, seed=11)
    v = np.random.default_rng(n).normal(scale=1.5, size=(n, 3))
    got, want = patched.sweep_capsule_many(a, b, r, v), fresh.sweep_capsule_many(a, b, r, v)
    for g, w in zip(got, want):
        _same(g, w)
    assert (want.triangle >= 0).sum() >= min(n, 3) // 2
    got = patched.sweep_batch(a, b, r, v)
    for g, w in zip(got, fresh.sweep_batch(a, b, r, v)):
        _same(g, w)
    h1 = patched.sweep_capsule(Capsule(a[0], b[0], r[0]), v[0])
    h2 = fresh.sweep_capsule(Capsule(a[0], b[0], r[0]), v[0])
    assert (h1 is None) == (h2 is None)
    if h1 is not None:
        assert (h1.time, h1.triangle) == (h2.time, h2.triangle)
        _same(h1.normal, h2.normal)


def test_rays_and_boxes_equal_a_fresh_build(pair):
    patched, fresh = pair
    rng = np.random.default_rng(5)
    o = rng.uniform(-4, 4, (200, 3)) + (0, 0, 3)
    d = rng.normal(size=(200, 3)) - (0, 0, 1.5)
    for g, w in zip(patched.raycast_many(o, d, 20.0), fresh.raycast_many(o, d, 20.0)):
        _same(g, w)
    h1, h2 = patched.raycast(o[0], (0, 0, -1)), fresh.raycast(o[0], (0, 0, -1))
    assert (h1.time, h1.triangle) == (h2.time, h2.triangle)
    for lo in rng.uniform(-4, 3, (20, 3)):
        _same(patched.triangles_in_aabb(lo, lo + 1.5), fresh.triangles_in_aabb(lo, lo + 1.5))


def test_walks_equal_a_fresh_build(pair):
    """The controller on a patched mesh (its batched sweep, no candidate cache) walks the
    same frames as on a fresh build (with its cache)."""
    patched, fresh = pair
    paths = [np.array([[-3.0, y, 0.5], [3.5, y + 0.5, 0.5]]) for y in (-2.0, 0.0, 1.5, 2.2)]
    s = ControllerSettings()
    for got, want in zip(walkthrough_many(patched, paths, s), walkthrough_many(fresh, paths, s)):
        _same(got.trace, want.trace)
        assert [(e.kind, e.time) for e in got.events] == [(e.kind, e.time) for e in want.events]


def test_compacted_is_the_fresh_build():
    base, edits = _edits()
    patched, _ = _apply(base, edits["move twice"])
    again = patched.compacted()
    assert isinstance(again, TriangleMesh)
    _same(again.triangles, patched.triangles)
    assert "added" in repr(patched) and patched.n_added == 12


def test_bad_edits_are_refused():
    mesh, ranges = _level()
    n = mesh.n_triangles
    none = (np.empty((0, 3)), np.empty((0, 3), int))
    for start, stop in ((0, n + 1), (-1, 3), (5, 4)):
        with pytest.raises(ValueError, match="range"):
            replace_triangles(mesh, start, stop, *none)
    with pytest.raises(ValueError, match="no triangle"):
        replace_triangles(mesh, 0, n, *none)
    with pytest.raises(ValueError, match="out of range"):
        replace_triangles(mesh, 0, 0, np.eye(3), [[0, 1, 3]])
    with pytest.raises(ValueError, match="finite"):
        replace_triangles(mesh, 0, 0, [[0, 0, np.nan], [1, 0, 0], [0, 1, 0]], [[0, 1, 2]])
    with pytest.raises(ValueError, match="TriangleMesh"):
        replace_triangles(np.eye(3), 0, 0, np.eye(3), [[0, 1, 2]])


@pytest.mark.parametrize("kept", [1, 2, 64])
def test_bounds_after_removing_the_level_extremes(monkeypatch, kept):
    """The bounds of a patched mesh are a fresh build's, whether a live triangle among the
    kept extremes gives them or (all kept ones removed) the live triangles are read."""
    patched_module = pytest.importorskip("capsule_collision.core.mesh.patched")
    monkeypatch.setattr(patched_module, "EXTREME_COUNT", kept)
    v, t = merge([box((0, 0, 0), (1, 1, 1)), box((2, 0, 0), (3, 1, 5)), box((4, 0, 0), (5, 1, 2))])
    mesh = TriangleMesh(v, t)
    patched = replace_triangles(mesh, 12, 24, np.empty((0, 3)), np.empty((0, 3), int))
    fresh = TriangleMesh(patched.vertices, patched.triangles)
    for got, want in zip(patched.aabb, fresh.aabb):
        _same(got, want)
    assert patched.aabb[1][2] == 2.0  # the 5 m box is gone
