"""Render-against-collision differences smaller than the character's footprint (issue 24,
"findings a designer acts on"; docs/decisions.md "Minimum areas"): a difference whose floor
area is below the minimum area of check ``collision_diff`` (pi r^2 by default, the sidecar's
``min_area`` or ``--min-area collision_diff=M2`` otherwise) is counted in one info per kind
(got ``below_min_area``, its faces selectable), not listed one by one; every kind alike.
On am_lavaarena (render against clip, Quake's player) 31 of its 32 invisible walls are
0.04-0.15 m² (the render floor 5.0-5.2 cm into the clip, just past the 5 cm wall tolerance)."""

import diff_scenes as D
import numpy as np
import pytest
import real_levels
from capsule_collision.core import ControllerSettings, TriangleMesh, collision_diff
from capsule_collision.core.checks.collision_diff import DIFF_KINDS, DiffProblem
from capsule_collision.core.checks.diff_problems import DIFF_SEVERITY
from capsule_collision.core.checks.diff_report import diff_findings, split_small
from capsule_collision.core.checks.gate import GateError, parse_min_area
from capsule_collision.core.checks.naming import TriangleNames
from capsule_collision.core.checks.report import level_report, run_checks
from capsule_collision.core.checks.severity import min_areas

QUAKE = ControllerSettings(radius=0.381, height=1.4224, step_height=0.4572)
FOOT = 0.456  # pi x 0.381^2, to the 0.001 m² (severity.min_areas)


def _problem(kind, area, k, size=None):
    """A difference of ``kind`` with ``area`` m^2 of floor (a wall's ``size`` in metres),
    its faces ``k`` on both meshes, at x = 3k."""
    return DiffProblem(kind, DIFF_SEVERITY[kind], np.array([3.0 * k, 0.0, 0.0]),
                       area if size is None else size, np.array([k]), np.array([10 + k]),
                       "cause", 0.0, np.zeros((1, 3)), area)


@pytest.mark.parametrize("kind", DIFF_KINDS)
def test_each_kind_just_below_the_footprint_is_one_info_just_above_is_listed(kind):
    """Every kind the diff reports, the hole (an error) included: a region smaller than the
    footprint cannot hold the capsule (no room to stand, nothing to fall through); a
    walk-through wall is judged by the floor it is walked through from, not its length."""
    size = 3.0 if kind == "walk_through_wall" else None  # a long wall of little floor
    problems = [_problem(kind, 0.999 * FOOT, 0, size), _problem(kind, 1.001 * FOOT, 1, size),
                _problem(kind, 0.04, 2, size)]
    out = [x for x, _ in diff_findings(SimpleDiff(problems), TriangleNames(None),
                                       TriangleNames(None), min_areas(QUAKE)["collision_diff"])]
    assert [(x.finding.severity, x.finding.got, x.counted) for x in out] == [
        (DIFF_SEVERITY[kind], kind, 1), ("info", "below_min_area", 2)]
    listed, info = out
    assert listed.where == (3.0, 0.0, 0.0)
    assert info.size == pytest.approx(0.999 * FOOT + 0.04) and info.size_unit == "m2"
    assert info.triangles.tolist() == [10, 12]  # the collision faces of both, to select
    assert info.finding.name == f"{kind}: below_min_area" and info.where is None
    assert f"2 {kind} differences" in info.finding.message
    assert "smaller than the minimum area 0.456 m²" in info.finding.message
    # 0 (or no minimum) lists every one, as before
    assert [p.area for p in split_small(problems, 0.0)[0]] == [p.area for p in problems]
    assert split_small(problems, None)[1] == []


class SimpleDiff:
    def __init__(self, problems):
        self.problems = tuple(problems)


def test_one_info_per_kind_with_the_faces_of_both_meshes():
    problems = [_problem("invisible_wall", 0.04, 0), _problem("reach_differs", 0.04, 1),
                _problem("invisible_wall", 0.1, 2), _problem("invisible_wall", 2.0, 3)]
    kept, folded = split_small(problems, FOOT)
    assert [p.area for p in kept] == [2.0]
    assert [(s.kind, len(s.problems)) for s in folded] == [("invisible_wall", 2),
                                                          ("reach_differs", 1)]
    wall = folded[0]
    assert wall.render_faces.tolist() == [0, 2] and wall.collision_faces.tolist() == [10, 12]
    assert wall.area == pytest.approx(0.14) and wall.limit == FOOT


def _crate_report(min_area=None):
    render, collision = D.crate_in_collision()
    s = ControllerSettings()
    res = run_checks(collision, s, spawns=D.SPAWN, render=render, checks=("collision_diff",))
    if min_area is not None:
        res.min_area = {"collision_diff": min_area}
    (p,) = res.diff.problems
    return p, [f for f in level_report(res)["findings"] if f["check"] == "collision_diff"]


def test_a_real_difference_at_the_minimum_area_boundary():
    """The crate only the collision has: an invisible wall of its floor area A. A minimum of
    1.001 A folds it into the info (its collision faces selectable), 0.999 A lists it; the
    default (the 0.35 m character's 0.385 m²) lists it; the block keeps every problem."""
    p, found = _crate_report()
    assert p.kind == "invisible_wall" and p.area == pytest.approx(p.size) and p.area > 0.385
    assert [(f["got"], f["severity"]) for f in found] == [("invisible_wall", "warning")]
    _, found = _crate_report(0.999 * p.area)
    assert [(f["got"], f["severity"]) for f in found] == [("invisible_wall", "warning")]
    _, found = _crate_report(1.001 * p.area)
    (info,) = found
    assert (info["got"], info["severity"], info["count"]) == ("below_min_area", "info", 1)
    assert info["size"] == pytest.approx(p.area, abs=1e-4) and info["where"] is None
    assert info["face_count"] == p.collision_faces.size > 0


def test_min_area_of_collision_diff_and_headroom_parse_like_the_others():
    assert parse_min_area({"collision_diff": 0.25}) == {"collision_diff": 0.25}
    assert parse_min_area(["collision_diff=1"]) == {"collision_diff": 1.0}
    with pytest.raises(GateError, match="min_area.collision_diff"):
        parse_min_area({"collision_diff": -1})
    assert min_areas(QUAKE, {"collision_diff": 0.0})["collision_diff"] == 0.0
    # low-headroom regions have their minimum too (test_findings: its boundary)
    assert parse_min_area(["headroom=0"]) == {"headroom": 0.0}
    with pytest.raises(GateError, match="no area threshold for 'ledges'"):
        parse_min_area({"ledges": 1})


@pytest.mark.slow
@pytest.mark.skipif(not real_levels.available(), reason="the shipped maps are not made "
                    "(tools/real_levels.py; CC_REAL_LEVELS)")
def test_am_lavaarena_lists_its_large_differences_and_counts_the_small_ones():
    """am_lavaarena, render against clip, Quake's player and the map's spawns: 32 invisible
    walls and 2 reach_differs before; 31 walls of 0.04-0.15 m² (render floor 5.0-5.2 cm
    into the clip) and one reach_differs of 0.04 m² are folded: listed the 5.9 m² clip strip
    along a wall and the 5.3 m² floor behind it, plus one info per kind."""
    r, c = real_levels.load("am_lavaarena"), real_levels.load("am_lavaarena", clip=True)
    s = ControllerSettings(**real_levels.QUAKE_PLAYER)
    diff = collision_diff(TriangleMesh(r.vertices, r.triangles),
                          TriangleMesh(c.vertices, c.triangles), r.spawn_feet, s)
    assert diff.counts()["invisible_wall"] == 32 and diff.counts()["reach_differs"] == 2
    listed = [x for x, _ in diff_findings(diff, TriangleNames(None), TriangleNames(None),
                                          min_areas(s)["collision_diff"])]
    shown = [x for x in listed if x.finding.got != "below_min_area"]
    assert sorted((x.finding.got, round(x.size, 1)) for x in shown) == [
        ("invisible_wall", 5.9), ("reach_differs", 5.3)]
    infos = {x.finding.name: x.counted for x in listed if x.finding.got == "below_min_area"}
    assert infos == {"invisible_wall: below_min_area": 31, "reach_differs: below_min_area": 1}
    small = [p for p in diff.problems if p.area < 0.456]
    assert max(p.area for p in small) < 0.15
