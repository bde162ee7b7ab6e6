"""Findings that do not follow the order of the faces or vertices (issue 27: a re-export keeps
every finding known).

Regression: am_lavaarena re-exported with its faces reversed turned one island of 1.30 m^2
"new". Blender's validating OBJ importer kept one of two coincident faces, so the reversed
file kept the other face of a few brush pairs: one more (hidden) island appeared above the 1.30
m^2 island in the largest-first order, which pushed that island, tied in area with two
others, past the 40 regions whose line of sight was computed: an island past that rank was
"visible" by default, listed as a warning. Now every region's line of sight is computed, the
regions are ordered largest first with a tie broken by place, and a region's point is chosen
by place, so neither the rank nor the face order decides what is listed.

Scenes (metres, Z up): a 24 x 8 m floor with closed boxes on it: decks 1 m high (islands a
player on the floor sees) and a 3 m tower (its roof an island nobody sees); a spawn at (2, 2)."""

import numpy as np
import pytest
import scenes
from capsule_collision.core import reachability
from capsule_collision.core.checks import reach_regions as reach_module
from capsule_collision.core.checks.findings import identity_point, region_findings
from capsule_collision.core.mesh.triangle_mesh import TriangleMesh

SPAWN = [[2.0, 2.0, 0.0]]


def _level(*boxes):
    return scenes.merge([scenes.grid(0, 24, 0, 8), *(scenes.box(lo, hi) for lo, hi in boxes)])


def _reordered(vertices, triangles, how):
    """The same level as another exporter writes it: faces reversed (each keeps its winding)
    and, with "vertices", the vertices permuted."""
    t = np.asarray(triangles)[::-1]
    if how == "vertices":
        perm = np.random.default_rng(7).permutation(len(vertices))
        inverse = np.empty_like(perm)
        inverse[perm] = np.arange(perm.size)
        return np.asarray(vertices)[perm], inverse[t]
    return vertices, t


def _listed(res):
    """(got, where, severity) of the island and trap findings, in report order."""
    return [(x.finding.got, x.where, x.finding.severity) for x in region_findings(res)]


@pytest.mark.parametrize("how", ["faces", "vertices"])
def test_a_roof_past_the_explained_regions_is_still_unseen_whatever_the_order(monkeypatch,
                                                                              how):
    """A 4 x 4 m deck (seen) and a smaller 3 x 3 m tower roof (not seen) with only ONE region
    explained: the roof, second largest, is judged unseen all the same (the old rule listed
    it as a visible island), in the file's face order and reordered."""
    monkeypatch.setattr(reach_module, "REGIONS_EXPLAINED", 1)
    v, t = _level(((6, 2, 0), (10, 6, 1)), ((14, 2, 0), (17, 5, 3)))
    for vv, tt in ((v, t), _reordered(v, t, how)):
        res = reachability(TriangleMesh(vv, tt), SPAWN)
        deck, roof = res.islands
        assert deck.area > roof.area
        assert deck.visible and deck.causes and not roof.visible and roof.causes == ()
        assert [got for got, _w, _s in _listed(res)] == ["island", "unseen"]


@pytest.mark.parametrize("how", ["faces", "vertices"])
def test_islands_tied_in_area_keep_their_order_and_points_when_reordered(how):
    """Three 4 x 4 m decks (one area, a tie): listed by place (the lowest (z, y, x) point
    first), each at the same identity point, with the faces and vertices in any order."""
    decks = (((14, 2, 0), (18, 6, 1)), ((6, 2, 0), (10, 6, 1)), ((19, 2, 0), (23, 6, 1)))
    v, t = _level(*decks)
    first = reachability(TriangleMesh(v, t), SPAWN)
    again = reachability(TriangleMesh(*_reordered(v, t, how)), SPAWN)
    assert len(first.islands) == 3
    assert [r.area for r in first.islands] == pytest.approx([first.islands[0].area] * 3)
    xs = [float(r.point[0]) for r in first.islands]
    assert xs == sorted(xs) and 6 < xs[0] < 10 and 14 < xs[1] < 18 and 19 < xs[2] < 23
    assert [identity_point(r.point) for r in again.islands] == [
        identity_point(r.point) for r in first.islands]
    assert _listed(again) == _listed(first)
