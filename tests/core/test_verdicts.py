"""core.verdicts: strict expectation parsing, the capsule verdict with its minimum reported
depth, the walk verdict and the findings."""

import numpy as np
import pytest
from capsule_collision.core import Capsule, ControllerSettings, TriangleMesh, walkthrough
from capsule_collision.core.checks.verdicts import (
    CAPSULE_EXPECTATIONS,
    MIN_REPORTED_DEPTH,
    WALK_EXPECTATIONS,
    CapsuleCheck,
    PathCheck,
    capsule_finding,
    capsule_verdicts,
    parse_capsule_expectation,
    parse_min_depth,
    parse_walk_expectation,
    walk_finding,
    walk_verdict,
)
from capsule_collision.core.walk.walkthrough import WalkEvent, WalkReport


def _floor_with_step(rise):
    """A 10 x 4 m floor at z=0 for x < 5 and a block of height ``rise`` for x in [5, 10]."""
    v = np.array([[0, 0, 0], [5, 0, 0], [5, 4, 0], [0, 4, 0],  # low floor
                  [5, 0, rise], [10, 0, rise], [10, 4, rise], [5, 4, rise],  # tread
                  [5, 0, 0], [5, 4, 0]], float)  # riser foot
    t = np.array([[0, 1, 2], [0, 2, 3], [4, 5, 6], [4, 6, 7], [8, 9, 7], [8, 7, 4]])
    return TriangleMesh(v, t)


@pytest.mark.parametrize("typo", ["penetrated", "clean", "", "penetrating ish"])
def test_capsule_typo_is_a_value_error_naming_field_and_allowed_values(typo):
    with pytest.raises(ValueError) as err:
        parse_capsule_expectation(typo, "capsules[1].expect")
    msg = str(err.value)
    assert "capsules[1].expect" in msg and repr(typo) in msg
    for word in CAPSULE_EXPECTATIONS:
        assert word in msg


def test_expectations_are_case_insensitive_and_none_means_any():
    assert parse_capsule_expectation("PENETRATING") == "penetrating"  # the extension's enum
    assert parse_capsule_expectation(" Clear ") == "clear"
    assert parse_capsule_expectation(None) == "any"
    assert parse_walk_expectation("ANY") == "any"
    assert parse_walk_expectation("step_too_high") == "step_too_high"
    assert "fell_out_of_level" in WALK_EXPECTATIONS and "reached_goal" in WALK_EXPECTATIONS


@pytest.mark.parametrize("value", ["reach_goal", "step too high", 3, True])
def test_walk_typo_is_a_value_error(value):
    with pytest.raises(ValueError, match=r"paths\[0\]\.expect.*reached_goal"):
        parse_walk_expectation(value, "paths[0].expect")


def test_checks_parse_their_expectation_on_construction():
    cap = Capsule.upright((0, 0, 0), 1.8, 0.35)
    with pytest.raises(ValueError, match="capsule 'spawn' expect"):
        CapsuleCheck("spawn", cap, "penetrated")
    with pytest.raises(ValueError, match="path 'p' points"):
        PathCheck("p", [[0, 0, 0]], "reached_goal")
    with pytest.raises(ValueError, match="NaN or infinite"):
        PathCheck("p", [[0, 0, 0], [np.inf, 0, 0]])
    assert PathCheck("p", [[0, 0, 0], [1, 0, 0]], "REACHED_GOAL").expect == "reached_goal"


@pytest.mark.parametrize("value", [-1e-9, float("nan"), float("inf"), "deep", None])
def test_negative_or_non_finite_min_depth_is_rejected(value):
    with pytest.raises(ValueError, match="min_depth"):
        parse_min_depth(value)


def test_min_depth_boundary():
    """Just inside / just outside MIN_REPORTED_DEPTH below a floor at z=0."""
    mesh = _floor_with_step(0.45)
    r = 0.35
    shallow = Capsule.upright((1, 1, -0.5 * MIN_REPORTED_DEPTH), 1.8, r)
    deep = Capsule.upright((1, 1, -2.0 * MIN_REPORTED_DEPTH), 1.8, r)
    v_shallow, v_deep = capsule_verdicts(mesh, [shallow, deep])
    assert not v_shallow.penetrating and v_shallow.deepest == 0.0
    assert v_deep.penetrating
    assert v_deep.deepest == pytest.approx(2.0 * MIN_REPORTED_DEPTH, rel=1e-6)
    # with min_depth 0 the shallow one counts too
    assert capsule_verdicts(mesh, [shallow], min_depth=0.0)[0].penetrating


def test_float32_snapped_capsule_on_a_float32_floor_is_clear():
    """Blender stores float32: a foot snapped onto the floor touches it within rounding."""
    z = float(np.float32(0.3))
    v = np.array([[0, 0, z], [4, 0, z], [4, 4, z], [0, 4, z]], np.float32).astype(float)
    mesh = TriangleMesh(v, [[0, 1, 2], [0, 2, 3]])
    foot = np.array([1.7, 2.3, 0.3], np.float32).astype(float)
    verdict = capsule_verdicts(mesh, [Capsule.upright(foot, 1.8, 0.35)])[0]
    assert not verdict.penetrating


def test_capsule_in_a_riser_names_triangles_depth_and_push_out():
    mesh = _floor_with_step(0.45)
    cap = Capsule.upright((4.9, 2.0, 0.0), 1.8, 0.35)  # 0.25 m into the riser at x=5
    (verdict,) = capsule_verdicts(mesh, [cap])
    assert verdict.penetrating
    assert set(verdict.triangles.tolist()) >= {4, 5}
    assert verdict.deepest == pytest.approx(0.25, abs=1e-9)
    assert np.allclose(verdict.push_out, [-0.25, 0, 0], atol=1e-9)
    assert np.all(np.diff(verdict.depths) <= 0)  # deepest first
    check = CapsuleCheck("spawn", cap, "clear", foot=(4.9, 2.0, 0.0))
    finding = capsule_finding(check, verdict)
    assert finding.key == ("capsule", "spawn", "clear", "penetrating")
    assert finding.position == (4.9, 2.0, 0.0)
    assert "deepest 0.250 m" in finding.message and "(-0.250, 0.000, 0.000)" in finding.message
    assert capsule_finding(CapsuleCheck("spawn", cap, "penetrating"), verdict) is None
    assert capsule_finding(CapsuleCheck("spawn", cap, "any"), verdict) is None


def test_walk_verdicts_and_findings_on_a_blocking_step():
    mesh = _floor_with_step(0.45)
    settings = ControllerSettings()
    path = PathCheck("to_goal", [[1, 2, 0], [8, 2, 0.45]], "reached_goal")
    report = walkthrough(mesh, path.points, settings)
    assert walk_verdict(report) == "step_too_high"
    finding = walk_finding(path, report)
    assert finding.key == ("walk", "to_goal", "reached_goal", "step_too_high")
    assert finding.position[0] == pytest.approx(5 - settings.radius, abs=0.1)
    assert "does not reach its goal: step_too_high (0.45)" in finding.message
    assert finding.message.endswith("lower the riser to the character's step height or add a step")
    assert walk_finding(PathCheck("p", path.points, "step_too_high"), report) is None
    assert walk_finding(PathCheck("p", path.points, "fell"), report).got == "step_too_high"

    low = _floor_with_step(0.2)
    report = walkthrough(low, path.points, settings)
    assert walk_verdict(report) == "reached_goal"
    assert walk_finding(path, report) is None


def test_walk_that_times_out_without_events_is_ended():
    report = WalkReport(trace=np.zeros((3, 3)), grounded=np.ones(3, bool), events=[],
                        reached_goal=False)
    assert walk_verdict(report) == "ended"
    late = WalkReport(trace=np.zeros((3, 3)), grounded=np.ones(3, bool), reached_goal=True,
                      events=[WalkEvent("fell", 1.0, (0, 0, 0), 0.5),
                              WalkEvent("reached_goal", 2.0, (0, 0, 0), 0.1)])
    assert walk_verdict(late) == "reached_goal"
    finding = walk_finding(PathCheck("p", [[0, 0, 0], [1, 0, 0]], "blocked"), late)
    assert finding.got == "reached_goal" and "fell (0.5)" in finding.message


# ---------------------------------------------------------------- the way out (issue 16)
def test_the_verdict_reports_the_shortest_way_out_not_the_deepest_contact():
    """A capsule 0.45 m into a wall box: its deepest contact says 0.25 m (and inwards); the
    verdict, the panel's push-out and the finding say 0.45 m out (core.push_out)."""
    from controller_scenes import box, grid, merge

    mesh = TriangleMesh(*merge([box((-5.0, 0.0, 0.0), (5.0, 0.5, 3.0)),
                                grid(-6, 6, -6, 6, z=0.0)]))
    cap = Capsule.upright((0.0, 0.1, 0.01), 1.8, 0.35)
    (verdict,) = capsule_verdicts(mesh, [cap])
    assert verdict.penetrating and not verdict.buried
    assert verdict.deepest == pytest.approx(0.25)
    np.testing.assert_allclose(verdict.push_out, (0.0, -0.45, 0.0), atol=1e-9)
    check = CapsuleCheck("Spawn", cap, "clear", foot=(0.0, 0.1, 0.01))
    finding = capsule_finding(check, verdict)
    assert "move it by (0.000, -0.450, 0.000) m" in finding.message
    # without the way out (a caller that does not want its cost): the deepest contact's push
    (fast,) = capsule_verdicts(mesh, [cap], way_out=False)
    assert fast.way_out is None and fast.word == verdict.word
    np.testing.assert_allclose(fast.push_out, (0.0, 0.25, 0.0), atol=1e-9)


def test_a_capsule_deep_inside_a_solid_is_reported_buried():
    from controller_scenes import box, merge

    # a wall inside a closed 20 m cube: out of the wall sideways is still inside the cube
    mesh = TriangleMesh(*merge([box((-10.0, -10.0, -10.0), (10.0, 10.0, 10.0)),
                                box((-0.1, -3.0, -3.0), (0.1, 3.0, 3.0))]))
    cap = Capsule.upright((0.0, 0.0, -0.9), 1.8, 0.35)
    (verdict,) = capsule_verdicts(mesh, [cap])
    assert verdict.penetrating and verdict.buried
    finding = capsule_finding(CapsuleCheck("Deep", cap, "clear"), verdict)
    assert "is buried in solid geometry" in finding.message
    (clear,) = capsule_verdicts(mesh, [Capsule.upright((0.0, 0.0, 20.0), 1.8, 0.35)])
    assert clear.way_out is None and not clear.buried
    np.testing.assert_array_equal(clear.push_out, np.zeros(3))
