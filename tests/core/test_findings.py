"""core.checks.findings and core.checks.targets: audit problems (core.checks.problems' rule)
worst first and as findings with their severities, the level's own findings, and the targets
judged by core.reachability (a stand-in here)."""

from types import SimpleNamespace

import numpy as np
import pytest
from capsule_collision.core.checks.findings import audit_findings, level_findings, worst_first
from capsule_collision.core.checks.sanity import SanityWarning
from capsule_collision.core.checks.targets import (
    TargetCheck,
    region_findings,
    run_reachability,
    target_findings,
    target_rows,
)


def _stairs():
    # two risers of two triangles each (steps 7 and 9) and one fine riser (step 8)
    return SimpleNamespace(
        riser=np.array([10, 11, 20, 21, 30]), rise=np.array([0.4, 0.4, 0.2, 0.2, 0.5]),
        tread_depth=np.array([0.3, 0.3, 0.4, 0.4, 0.05]),
        too_high=np.array([True, True, False, False, True]),
        too_shallow=np.array([False, False, False, False, True]),
        position=np.arange(15.0).reshape(5, 3), flight=np.zeros(5, int),
        step=np.array([7, 7, 8, 8, 9]))


def test_a_stair_problem_is_one_row_per_bad_riser_highest_first():
    p = worst_first("stairs", _stairs())
    assert p.rows.tolist() == [4, 0] and p.faces.tolist() == [30, 10]
    assert p.got == ("too_high", "too_high") and p.value.tolist() == [0.5, 0.4]


def test_beyond_the_limit_one_finding_counts_the_rest():
    stand = SimpleNamespace(faces=np.arange(5), depth=np.linspace(0.5, 0.1, 5),
                            position=np.zeros((5, 3)))
    findings, rows = audit_findings("stand", stand, lambda t: f"Floor face {t}", limit=2)
    assert [f.name for f in findings] == ["Floor face 0", "Floor face 1", "stand: more"]
    assert rows == [0, 1] and "3 more stand problem(s)" in findings[-1].message
    # the report asks for every one (limit None): the baseline compares them all
    every, rows = audit_findings("stand", stand, lambda t: f"Floor face {t}", limit=None)
    assert [f.name for f in every] == [f"Floor face {k}" for k in range(5)] and rows == [
        0, 1, 2, 3, 4]


def test_one_finding_per_face_its_worst_row():
    stand = SimpleNamespace(faces=np.array([4, 5, 7]), depth=np.array([0.1, 0.3, 0.2]),
                            position=np.zeros((3, 3)))
    faces = {4: "Floor face 2", 5: "Floor face 2", 7: "Ramp face 0"}  # 4, 5: one quad
    findings, rows = audit_findings("stand", stand, faces.get)
    assert [f.name for f in findings] == ["Floor face 2", "Ramp face 0"]
    assert "penetrates 0.300 m" in findings[0].message and rows == [0, 1]


def test_ledges_without_floor_below_come_first():
    lg = SimpleNamespace(faces=np.array([1, 2, 3]), drop=np.array([1.0, np.inf, 2.0]),
                         position=np.zeros((3, 3)), edge_faces=np.array([7, 8]),
                         edge_run=np.array([2, 0]))
    p = worst_first("ledges", lg)
    assert p.rows.tolist() == [1, 2, 0] and p.faces.tolist() == [2, 3, 1]


def test_audit_findings_are_named_by_face_capped_and_counted():
    findings, rows = audit_findings("stairs", _stairs(), lambda t: f"Stairs face {t}",
                                    SimpleNamespace(step_height=0.35), limit=1)
    first, more = findings
    assert rows == [0]  # the problem row (of stair_problems) of the listed finding
    assert (first.check, first.name, first.got, first.severity) == (
        "stairs", "Stairs face 30", "too_high", "warning")
    assert "a 0.50 m riser, above the step height (0.35 m)" in first.message
    assert (more.name, more.position) == ("stairs: more", None)
    assert "1 more stairs problem(s)" in more.message


def test_level_findings_are_warnings_and_say_when_there_is_nothing_to_check():
    found = level_findings([SanityWarning("up_axis", "looks rotated", "-Y")], has_checks=False)
    assert [(f.check, f.name, f.severity) for f in found] == [
        ("level", "up_axis", "warning"), ("level", "nothing_to_check", "warning")]
    assert level_findings([], has_checks=True) == []


class FakeReach:
    """Stands in for core.reachability's result: reaches points with x < 10."""

    islands = (SimpleNamespace(faces=np.array([5]), area=12.5, point=np.array([20, 0, 0])),)
    traps = ()

    def can_reach(self, points):
        return np.asarray(points)[:, 0] < 10


def test_targets_become_errors_when_their_expectation_fails():
    targets = [TargetCheck("Near", (1, 0, 0), "reachable"),
               TargetCheck("Far", (20, 0, 0), "reachable"),
               TargetCheck("Secret", (2, 0, 0), "unreachable")]
    calls = []

    def reach(mesh, spawns, settings):
        calls.append(spawns.shape)
        return FakeReach()

    res = run_reachability(reach, None, [[0, 0, 0]], targets, None)
    assert calls == [(1, 3)] and res.reached.tolist() == [True, False, True]
    found = target_findings(targets, res.reached)
    assert [(f.name, f.expected, f.got, f.severity) for f in found] == [
        ("Far", "reachable", "unreachable", "error"),
        ("Secret", "unreachable", "reachable", "error")]
    assert [r["ok"] for r in target_rows(targets, res.reached)] == [True, False, False]
    (island,) = region_findings(res.result, lambda t: f"Floor face {t}")
    assert (island.check, island.name, island.severity) == ("islands", "Floor face 5",
                                                            "warning")


def test_targets_without_spawns_are_refused_clearly():
    with pytest.raises(ValueError, match="targets need spawns"):
        run_reachability(lambda *a: FakeReach(), None, np.empty((0, 3)),
                         [TargetCheck("T", (0, 0, 0), "reachable")], None)
