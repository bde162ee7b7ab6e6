"""The arena's fast paths (issue 24 section 4, docs/benchmarks.md "Both cores for the arena")
agree with the slow ones they replace, bit for bit: column lookups that walk storeys only
where a column has them, components hooked over the runs their edges touch, batched mesh
queries split between two threads, the four directions' moves and a region's lines of sight
in two threads, and the covering spans kept from the map's build for the cell classes."""

from __future__ import annotations

import capsule_collision.core.checks.audits.common as common
import capsule_collision.core.checks.audits.standable as standable
import capsule_collision.core.checks.reach_links as reach_links
import capsule_collision.core.checks.reach_regions as reach_regions
import numpy as np
import pytest
import scenes
from capsule_collision.core import ControllerSettings, TriangleMesh, reachability
from capsule_collision.core.checks.audits.cells import nearest_in_column
from capsule_collision.core.checks.audits.spans import sweep_chunks

S = ControllerSettings()


def _naive_nearest(cells, heights, q_cell, q_height, lo, hi, mask):
    """nearest_in_column by a loop over the queries: the span of the query's cell within
    [q + lo, q + hi] nearest q, the first of equals; -1 when none."""
    out = np.full(q_cell.size, -1, np.int64)
    for i, (c, q) in enumerate(zip(q_cell, q_height)):
        best = np.inf
        for j in np.flatnonzero(cells == c):
            d = heights[j] - q
            if lo <= d <= hi and (mask is None or mask[j]) and abs(d) < best:
                best, out[i] = abs(d), j
    return out


@pytest.mark.parametrize("dense", [True, False])
def test_column_lookups_walk_storeys_only_where_columns_have_them(dense):
    rng = np.random.default_rng(7)
    per = rng.choice([0, 1, 1, 1, 2, 3, 6], 200)  # mostly one storey, a few up to six
    cells = np.repeat(np.arange(200), per)
    heights = rng.uniform(0.0, 3.0, cells.size)
    heights[::17] = np.nan  # NaN heights are in no range (the map's non-free spans)
    q_cell = rng.integers(-1, 200, 500)
    q_height = rng.uniform(0.0, 3.0, 500)
    mask = rng.random(cells.size) < 0.8
    starts = np.zeros(201, np.int64)
    np.cumsum(np.bincount(cells, minlength=200), out=starts[1:])
    for m in (None, mask):
        got = nearest_in_column(cells, heights, q_cell, q_height, -0.35, 0.35, m,
                                starts if dense else None)
        want = _naive_nearest(cells, heights, q_cell, q_height, -0.35, 0.35, m)
        assert (got == want).all()
        assert (got[q_cell < 0] == -1).all()


def _naive_components(n, a, b):
    label = np.arange(n)
    changed = True
    while changed:  # relax min labels along every edge until nothing changes
        changed = False
        for x, y in zip(a, b):
            m = min(label[x], label[y])
            if label[x] != m or label[y] != m:
                label[x] = label[y] = m
                changed = True
    return label


def test_components_hooked_over_the_touched_runs_only():
    """Few edges among many nodes (the arena's island moves): the untouched nodes keep their
    own labels, the others the smallest member, as hooking every node gives."""
    rng = np.random.default_rng(3)
    n = 3000
    a = rng.integers(0, n, 400)
    b = np.where(rng.random(400) < 0.5, a + 1, rng.integers(0, n, 400)).clip(0, n - 1)
    got = common.components(n, a, b)
    assert (got == _naive_components(n, a, b)).all()
    assert (got == common._hook(n, a, b)).all()  # every node hooked: the slow path


@pytest.fixture
def block():
    return TriangleMesh(*scenes.stairs_ramps_block())


def test_batched_queries_in_two_threads_answer_as_one_batch(block, monkeypatch):
    """Raycasts, capsule contacts and sweeps over more than THREAD_MIN_ROWS rows run as
    even ranges in two threads; the answers, row by row and in order, are one batch's."""
    rng = np.random.default_rng(11)
    k = 5000
    lo, hi = block.vertices.min(0), block.vertices.max(0)
    a = rng.uniform(lo, hi, (k, 3))
    b = a + [0.0, 0.0, 1.1]
    disp = rng.normal(0.0, 1.0, (k, 3))
    assert common.row_chunks(k) == [(0, 2500), (2500, 5000)]  # even halves
    threaded = (common.raycast_chunks(block, a, disp / np.linalg.norm(disp, axis=1)[:, None],
                                      3.0),
                common.contacts_chunks(block, a, b, 0.35), sweep_chunks(block, a, b, 0.35, disp))
    monkeypatch.setattr(common, "THREAD_MIN_ROWS", 10 ** 9)  # one range, this thread
    assert len(common.row_chunks(k)) == 1
    single = (common.raycast_chunks(block, a, disp / np.linalg.norm(disp, axis=1)[:, None],
                                    3.0),
              common.contacts_chunks(block, a, b, 0.35), sweep_chunks(block, a, b, 0.35, disp))
    for got, want in zip(threaded, single):
        for x, y in zip(got, want):
            assert np.array_equal(x, y, equal_nan=True)
    assert single[1][0].size > 100  # contacts found: the comparison is not of empties


def _digest(res):
    return (res.reachable_faces.tolist(), res.reachable_area, res.cell_class.tobytes(),
            res.moves.src.tobytes(), res.moves.dst.tobytes(), res.moves.kind.tobytes(),
            [(r.faces.tolist(), r.area, r.point.tolist(), r.visible,
              [c.text for c in r.causes]) for r in res.islands + res.traps], res.what_if)


def test_moves_and_sight_in_two_threads_answer_as_in_one(monkeypatch):
    """The block's flood with its directions' moves and its regions' lines of sight in two
    threads (thresholds set to 0) equals the flood in this thread alone, move for move."""
    spawn = [[1.0, 1.0, 0.0]]
    monkeypatch.setattr(reach_links, "THREADED_NODES", 0)
    monkeypatch.setattr(reach_regions, "THREADED_EYES", 0)
    threaded = reachability(TriangleMesh(*scenes.stairs_ramps_block()), spawn, S)
    monkeypatch.setattr(reach_links, "THREADED_NODES", 10 ** 9)
    monkeypatch.setattr(reach_regions, "THREADED_EYES", 10 ** 9)
    single = reachability(TriangleMesh(*scenes.stairs_ramps_block()), spawn, S)
    assert len(single.islands) > 0 and single.moves.src.size > 1000
    assert _digest(threaded) == _digest(single)


def test_cover_kept_from_the_build_answers_as_computed_again(block):
    """The cell classes' cover_min over the covered spans reads the rows the map's build
    kept; computed afresh (nothing kept) it gives the same values; another free mask is not
    answered from what was kept."""
    smap = standable.standable_map(block, S)
    s = standable.exact_model(S)
    free = smap.state == standable.FREE
    covered = np.flatnonzero(smap.state == standable.COVERED)
    assert covered.size > 50
    value = np.arange(smap.face.size, dtype=float)[::-1].copy()
    kept = standable.cover_min(smap.columns, smap.stand, free, covered, value, s)
    standable._COVER[0] = None
    fresh = standable.cover_min(smap.columns, smap.stand, free, covered, value, s)
    assert np.array_equal(kept, fresh)
    assert np.isfinite(fresh).all()  # a covered span has a covering free span
    fewer = free.copy()
    fewer[np.flatnonzero(free)[::2]] = False
    spans = standable.cover_spans(smap.columns, smap.stand, fewer, covered, s)
    standable._COVER[0] = None
    assert np.array_equal(spans, standable.cover_spans(smap.columns, smap.stand, fewer,
                                                       covered, s))


def test_face_classes_kept_per_mesh_slope_and_up(block):
    """face_classes is computed once per mesh, slope limit and up (reachability asked three
    times), read-only, and never answers for another slope or up."""
    from capsule_collision.core.checks.walkability import classify_triangles
    s45, s30 = ControllerSettings(max_slope_deg=45.0), ControllerSettings(max_slope_deg=30.0)
    first = common.face_classes(block, s45)
    assert common.face_classes(block, s45) is first
    assert not first.flags.writeable
    assert np.array_equal(first, classify_triangles(block, 45.0))
    steeper = common.face_classes(block, s30)
    assert np.array_equal(steeper, classify_triangles(block, 30.0))
    assert (steeper != first).any()  # the block's 40 deg ramp
    sideways = common.face_classes(block, ControllerSettings(up=(1.0, 0.0, 0.0)))
    assert np.array_equal(sideways, classify_triangles(block, 45.0, (1.0, 0.0, 0.0)))


def test_bench_reach_verdict_digest_names_every_answer(block):
    """``bench_reach.py --verdicts``: the digest a row prints is the same for the same
    answers (two floods of fresh meshes) and changes with any one answer: a cell's class, a
    move, an island's visibility, a what-if sentence."""
    import io

    from tools import bench_reach
    spawn = [[1.0, 1.0, 0.0]]
    res = reachability(block, spawn, S)
    digest = bench_reach.verdicts(res)
    assert len(digest) == 12 and int(digest, 16) >= 0
    assert bench_reach.verdicts(reachability(TriangleMesh(*scenes.stairs_ramps_block()),
                                             spawn, S)) == digest
    cls = res.cell_class.copy()
    cls[0] = (cls[0] + 1) % 3
    kinds = res.moves.kind.copy()
    kinds[-1] = (kinds[-1] + 1) % 5
    first = res.islands[0]
    for changed in (res._replace(cell_class=cls),
                    res._replace(moves=res.moves._replace(kind=kinds)),
                    res._replace(islands=(first._replace(visible=not first.visible),)
                                 + res.islands[1:]),
                    res._replace(what_if=res.what_if + ("with step height 9 m: all",))):
        assert bench_reach.verdicts(changed) != digest
    out = io.StringIO()
    row = {"level": "10k", "triangles": 1, "jump": 0.0, "map_s": 0.0, "map_cpu": 0.0,
           "reach_s": 0.0, "reach_cpu": 0.0, "cells": 1, "cramped_m2": 0.0,
           "reachable_m2": 1.0, "islands": 1, "traps": 0, "arcs": 0, "verdicts": digest}
    bench_reach.print_table([row], out=out, digests=True)
    assert "verdicts" in out.getvalue() and digest in out.getvalue()


def test_mutual_components_join_walks_one_way_round_first():
    """Walks joined one way round first, the other way round only where still apart: the
    components of every walk and every move present both ways, with walks that have no
    walk back (a storey's nearest span differs) and one-way steps left out."""
    from capsule_collision.core.checks.reach_graph import mutual_components
    from capsule_collision.core.checks.reach_links import STEP_DOWN, STEP_UP, WALK, Links
    rng = np.random.default_rng(5)
    n = 400
    a = rng.integers(0, n, 300)
    b = (a + rng.choice([1, -1, 20, -20, 7], 300)) % n
    back = rng.random(300) < 0.6  # most walks have their walk back, some not
    src = np.concatenate([a, b[back], [3, 50], [51]])
    dst = np.concatenate([b, a[back], [50, 3], [90]])
    kind = np.concatenate([np.full(300 + int(back.sum()), WALK), [STEP_UP, STEP_DOWN],
                           [STEP_UP]]).astype(np.int8)
    got = mutual_components(n, Links(src, dst, kind))
    want = _naive_components(n, np.concatenate([a, [3]]), np.concatenate([b, [50]]))
    assert (got == want).all()  # the one-way step 51 -> 90 joins nothing
    assert len(np.unique(got)) < n - 100  # the walks joined many nodes
