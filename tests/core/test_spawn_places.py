"""Where the spawns stand (issue 24, section 5; core/checks/spawn_places.py and
reach_spawns.spawns_in_walls): a spawn inside a wall or on no floor is a reachability
warning naming the spawn, one placed above the floor falls to it (an info says how far),
in the report the CLI writes (report.json, the console's findings, JUnit)."""

import numpy as np
import pytest
from capsule_collision.core import Capsule, ControllerSettings, TriangleMesh, reachability
from capsule_collision.core.checks.reach_spawns import spawns_in_walls
from capsule_collision.core.checks.report import check_level, combine_levels
from capsule_collision.core.checks.spawn_places import (
    spawn_listed,
    spawn_names,
    spawn_place_findings,
)
from capsule_collision.core.checks.targets import run_reachability
from capsule_collision.core.checks.verdicts import CapsuleCheck
from capsule_collision.levelcheck.junit import junit_xml
from scenes import box, grid, merge

S = ControllerSettings()  # radius 0.35, height 1.8, step 0.35


def _level():
    """A 10 x 10 m floor and a wall 0.5 m thick (x in [6, 6.5]), 3 m high."""
    return TriangleMesh(*merge([grid(0.0, 10.0, 0.0, 10.0), box((6.0, 1.0, 0.0),
                                                                (6.5, 9.0, 3.0))]))


@pytest.mark.parametrize(("x", "walled"), [(6.0 - 0.35 - 1e-3, False),  # just clear of it
                                           (6.0 - 0.35 + 1e-3, True),  # 1 mm into it
                                           (6.25, True)])  # inside it
def test_a_spawn_is_in_a_wall_when_the_capsule_penetrates_it(x, walled):
    got = spawns_in_walls(_level(), [[x, 5.0, 0.0]], S)
    assert (got[0] >= 0) == walled


def test_a_spawn_sunk_into_its_floor_less_than_a_step_is_not_in_a_wall():
    mesh = _level()
    got = spawns_in_walls(mesh, [[3.0, 5.0, -0.3], [3.0, 5.0, -0.4]], S)
    assert got[0] == -1 and got[1] >= 0  # 0.3 m: stepped up out of it; 0.4 m: stuck


def _report(spawns, capsules=()):
    return check_level(_level(), S, list(capsules), [], level="spawns",
                       checks=["reachability"], spawns=spawns)


def test_the_report_lists_a_spawn_in_a_wall_on_no_floor_and_one_that_falls():
    spawns = [[2.0, 5.0, 0.0],  # on the floor: no finding
              [5.8, 5.0, 0.0],  # its capsule 0.2 m into the wall
              [50.0, 50.0, -20.0],  # nothing below
              [3.0, 3.0, 0.61]]  # 0.61 m above the floor
    rep = _report(spawns)
    rows = {f["name"]: f for f in rep["findings"] if f["check"] == "spawns"}
    assert set(rows) == {"spawn 2", "spawn 3", "spawn 4"}
    wall, lost, high = rows["spawn 2"], rows["spawn 3"], rows["spawn 4"]
    assert (wall["severity"], wall["got"]) == ("warning", "in_wall")
    assert "spawn spawn 2 at (5.80, 5.00, 0.00) is inside a wall" in wall["message"]
    assert "it floods from the floor beside it" in wall["message"]
    assert wall["face_count"] == 1
    assert (lost["severity"], lost["got"]) == ("warning", "no_floor")
    assert "stands on no floor" in lost["message"] and "it floods nothing" in lost["message"]
    assert (high["severity"], high["got"]) == ("info", "falls")
    assert "is 0.61 m above the floor: it falls to the floor below" in high["message"]
    assert high["value"] == pytest.approx(0.61, abs=0.01)
    doc = combine_levels([rep])
    xml = junit_xml(doc).decode()
    assert "spawn spawn 2 at (5.80, 5.00, 0.00) is inside a wall" in xml  # reachability case


def test_a_spawn_buried_in_the_solid_floods_nothing_and_is_not_listed_twice():
    rep = _report([[2.0, 5.0, 0.0], [6.25, 5.0, 0.0]])
    (row,) = [f for f in rep["findings"] if "spawn 2" in f["name"]]
    assert row["check"] == "capsule" and "it floods nothing" in row["message"]


def test_a_spawn_on_the_floor_gives_no_spawn_finding():
    rep = _report([[2.0, 5.0, 0.0]])
    assert [f for f in rep["findings"] if f["check"] == "spawns"] == []


def test_a_marked_spawn_capsule_is_named_by_its_name():
    foot = (5.8, 5.0, 0.0)
    cap = CapsuleCheck("Walled", Capsule.upright(foot, 1.8, 0.35), foot=foot, spawn=True)
    rep = _report([foot, [2.0, 5.0, 0.0]], [cap])
    (row,) = [f for f in rep["findings"] if f["check"] == "spawns"]
    assert row["name"] == "Walled" and "spawn Walled at" in row["message"]


def test_spawn_names_are_the_marked_capsules_then_the_sidecar_points():
    body = Capsule.upright((0, 0, 0), 1.8, 0.35)
    caps = [CapsuleCheck("A", body, spawn=True), CapsuleCheck("Probe", body)]
    assert spawn_names(caps, 3) == ["A", "spawn 1", "spawn 2"]


def test_mismatched_inputs_are_a_value_error():
    with pytest.raises(ValueError, match="2 names, 1 feet"):
        spawn_place_findings(["a", "b"], np.zeros((1, 3)), [-1], [-1], None, str)


def test_spawn_listed_is_the_reports_spawn_findings_buried_first_with_their_solid():
    """``spawn_listed`` is the one list of spawn findings the report and the panel's SPAWN
    rows take (the panel repeated the report's steps): a buried spawn's error (its solid's
    triangle, bracketed) first, then the placements, each as the report lists it."""
    mesh = _level()
    feet = np.array([[6.25, 5.0, 0.0], [2.0, 5.0, 0.0], [5.8, 5.0, 0.0], [3.0, 3.0, 0.61]])
    flood = run_reachability(reachability, mesh, feet, (), S)
    names = ["Buried", "Ok", "Walled", "High"]
    got = spawn_listed(names, feet, flood.buried, spawns_in_walls(mesh, feet, S), flood.result,
                       lambda t: f"tri {t}")
    assert [(x.finding.check, x.finding.name, x.finding.got, bracket) for x, bracket in got] == [
        ("capsule", "spawn Buried", "penetrating", True), ("spawns", "Walled", "in_wall", False),
        ("spawns", "High", "falls", False)]
    assert got[0][0].triangles.tolist() == [int(flood.buried[0])] and flood.buried[0] >= 0
    rep = _report(feet)
    listed = {(f["check"], f["name"], f["got"]) for f in rep["findings"]
              if f["check"] == "spawns" or f["name"].startswith("spawn ")}
    assert listed == {("capsule", "spawn 1", "penetrating"), ("spawns", "spawn 3", "in_wall"),
                      ("spawns", "spawn 4", "falls")}
