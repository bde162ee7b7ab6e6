"""core.checks.problems, core.checks.naming and the one capsule verdict: the rules the panel
and the report share (which rows are problems and how bad, how a triangle is named, when a
capsule penetrates)."""

from types import SimpleNamespace

import numpy as np
import pytest
from audit_scenes import ROOMS, one_problem_scene
from capsule_collision.core import Capsule, ControllerSettings, TriangleMesh
from capsule_collision.core.checks.audits import (
    StairResult,
    headroom_audit,
    ledge_audit,
    stair_audit,
    stand_test,
)
from capsule_collision.core.checks.naming import TriangleNames
from capsule_collision.core.checks.problems import (
    audit_problems,
    capsule_outcome,
    stair_problems,
    walk_event_outcomes,
    walk_outcome,
)
from capsule_collision.core.checks.report import check_level
from capsule_collision.core.checks.severity import ERROR, INFO, PASSED, WARNING
from capsule_collision.core.checks.verdicts import (
    MIN_REPORTED_DEPTH,
    capsule_verdict,
    capsule_verdicts,
)
from capsule_collision.core.walk.walkthrough import WalkEvent, WalkReport

S = ControllerSettings()


@pytest.fixture(scope="module")
def rooms():
    return one_problem_scene()


def _floor(z=0.0):
    v = np.array([[-5, -5, z], [5, -5, z], [5, 5, z], [-5, 5, z]], float)
    return TriangleMesh(v, [[0, 1, 2], [0, 2, 3]])


# ---------------------------------------------------------------- the one capsule verdict
def test_a_contact_shallower_than_the_reporting_depth_is_clear_in_every_form():
    """Issue 16: a capsule 5e-7 m into a floor was red live and clear in the report."""
    mesh = _floor()
    cap = Capsule.upright((0.5, 0.5, -5e-7), 1.8, 0.35)
    assert mesh.capsule_contacts(cap)  # the raw query sees the contact ...
    assert not capsule_verdict(mesh, cap).penetrating  # ... the verdict does not
    assert not capsule_verdicts(mesh, [cap])[0].penetrating
    deeper = Capsule.upright((0.5, 0.5, -2e-6), 1.8, 0.35)
    assert capsule_verdict(mesh, deeper).penetrating
    assert capsule_verdict(mesh, deeper).deepest == pytest.approx(2e-6, rel=1e-6)


def _level_floor_capsule(z, r, ulps):
    """A floor at height z and an upright capsule of radius r whose lower end sits ``ulps``
    float steps above z + r (rounded): a float tie between touching and penetrating."""
    mesh = _floor(z)
    az = z + r
    a = np.array([0.3, 0.7, az + ulps * np.spacing(az)])
    return mesh, Capsule(a, a + [0.0, 0.0, 1.0], r)


@pytest.mark.parametrize("z, r, ulps, penetrating", [
    (-1.1290112879370873, 0.4809938040753181, 0, False),  # floats say 'touching is a hit'
    (-1.021609701005447, 0.8095858330855639, 1, True),  # floats say 'clear'
])
def test_with_no_reporting_depth_a_tie_is_decided_exactly(z, r, ulps, penetrating):
    """min_depth 0: the float batch gets these two ties wrong (found by a search); the verdict
    settles them with core.exact, as the single-capsule query does."""
    mesh, cap = _level_floor_capsule(z, r, ulps)
    batch = mesh.capsule_contacts_many(cap.a[None], cap.b[None], np.array([r]))
    assert bool(batch.query.size) != penetrating  # the floats alone are wrong here
    assert capsule_verdict(mesh, cap, min_depth=0.0).penetrating == penetrating
    assert capsule_verdicts(mesh, [cap, cap], min_depth=0.0)[1].penetrating == penetrating
    assert not capsule_verdict(mesh, cap).penetrating  # under the reporting depth: clear


def test_single_form_equals_the_batch_bit_for_bit(rooms):
    x0 = ROOMS["riser"][0]
    caps = [Capsule.upright((x0 + 3.0 + 0.2 * i, 1.5, 0.0), 1.8, 0.35) for i in range(5)]
    batch = capsule_verdicts(rooms, caps)
    for cap, want in zip(caps, batch):
        got = capsule_verdict(rooms, cap)
        np.testing.assert_array_equal(got.triangles, want.triangles)
        np.testing.assert_array_equal(got.depths, want.depths)
        np.testing.assert_array_equal(got.normals, want.normals)


# ---------------------------------------------------------------- outcomes
def _verdict(penetrating):
    n = 1 if penetrating else 0
    return SimpleNamespace(penetrating=penetrating, word="penetrating" if n else "clear")


@pytest.mark.parametrize("expect, penetrating, outcome", [
    ("clear", True, ERROR), ("clear", False, PASSED),
    ("PENETRATING", True, PASSED), ("penetrating", False, ERROR),
    ("any", True, WARNING), ("ANY", False, PASSED),
])
def test_capsule_outcome(expect, penetrating, outcome):
    assert capsule_outcome(expect, _verdict(penetrating)) == outcome


def _walk(reached, kinds):
    events = [WalkEvent(k, float(i), (0, 0, 0), 0.1) for i, k in enumerate(kinds)]
    return WalkReport(trace=np.zeros((2, 3)), grounded=np.ones(2, bool), events=events,
                      reached_goal=reached)


def test_walk_outcomes_point_at_the_event_that_broke_the_expectation():
    blocked = _walk(False, ["fell", "step_too_high"])
    assert walk_outcome("reached_goal", blocked) == ERROR
    assert walk_event_outcomes("reached_goal", blocked) == [ERROR, INFO]
    assert walk_outcome("step_too_high", blocked) == PASSED
    assert walk_event_outcomes("step_too_high", blocked) == [INFO, PASSED]
    assert walk_outcome("ANY", blocked) == WARNING  # no expectation, no goal: a route warning
    assert walk_event_outcomes("any", blocked) == [INFO, INFO]
    reached = _walk(True, ["fell", "reached_goal"])
    assert walk_outcome("any", reached) == PASSED
    assert walk_event_outcomes("reached_goal", reached) == [INFO, PASSED]
    assert walk_outcome("blocked", reached) == ERROR
    assert walk_event_outcomes("blocked", reached) == [ERROR, PASSED]


# ---------------------------------------------------------------- audit problems
def test_stairs_count_flights_not_risers_or_triangles(rooms):
    """The too-high riser and the riser before the too-shallow tread lie in two flights: two
    problems, each covering both triangles of its quad; StairResult.findings lists four
    triangles."""
    result = stair_audit(rooms, S)
    p = stair_problems(result)
    assert p.kind == "stairs" and p.severity == WARNING and p.unit == "flights"
    assert np.unique(result.flight[p.rows]).size == 2 and p.size_unit == "m"
    assert p.rows.size == 2
    assert result.findings.size == 4
    np.testing.assert_array_equal(np.sort(p.triangles), np.sort(result.riser[result.findings]))
    np.testing.assert_array_equal(np.bincount(p.owner), [2, 2])
    assert np.all(result.step[p.rows[p.owner]] == result.step[np.isin(result.riser,
                                                                      p.triangles)])
    assert sorted(np.round(p.value, 2).tolist()) == [0.2, 0.45]
    report = check_level(rooms, S, checks=["stairs"])["audits"]["stairs"]
    assert len(report["worst"]) == p.rows.size
    assert report["too_high"] + report["too_shallow"] == p.rows.size


def test_a_riser_is_judged_by_its_first_row():
    """Two triangles of one riser that disagree: the riser's first row decides (as the report
    lists it), and the problem still covers both triangles."""
    result = StairResult(riser=np.array([10, 11, 12]), rise=np.array([0.5, 0.2, 0.2]),
                         tread_depth=np.array([0.3, 0.3, np.inf]),
                         too_high=np.array([True, False, False]),
                         too_shallow=np.array([False, False, False]),
                         position=np.zeros((3, 3)), flight=np.zeros(3, np.int64),
                         step=np.array([4, 4, 5]))
    p = stair_problems(result)
    assert p.rows.tolist() == [0] and p.triangles.tolist() == [10, 11]
    flipped = result._replace(too_high=np.array([False, True, False]))
    assert stair_problems(flipped).rows.size == 0


def test_a_cramped_room_is_one_region_not_one_problem_per_face(rooms):
    """Issue 24: the stand test's 48 faces of the low passage are one cramped region (one
    problem, its area, the value of its worst face); headroom likewise; a ledge is a run."""
    for kind, result in (("stand", stand_test(rooms, S)),
                         ("headroom", headroom_audit(rooms, S))):
        p = audit_problems(kind, result)
        assert len(result.faces) == 48 and p.rows.size == 1, kind
        assert sorted(p.triangles.tolist()) == sorted(result.faces.tolist())
        assert p.owner.tolist() == [0] * 48 and p.unit == "regions" and p.size_unit == "m2"
        value = result.depth if kind == "stand" else result.clearance
        assert p.value[0] == value.min()  # the region's worst: how close the best try came
        assert 0.0 < p.size[0] <= 8.0 * 2.0  # the passage's floor (x 20..28, y 0..2) at most
        lo, hi = ROOMS["passage"]
        assert lo <= p.position[0][0] <= hi
    ledges = ledge_audit(rooms, S)
    p = audit_problems("ledges", ledges)
    assert p.rows.tolist() == list(range(len(ledges.faces)))
    assert p.severity == INFO and p.triangles.size == len(ledges.faces) + len(ledges.edge_faces)
    np.testing.assert_array_equal(p.owner[len(ledges.faces):], ledges.edge_run)
    np.testing.assert_array_equal(p.size, ledges.length)
    with pytest.raises(ValueError, match="unknown audit 'walls'"):
        audit_problems("walls", ledges)


def test_two_cramped_regions_are_two_problems_and_a_sliver_joins_its_region():
    """Rows of faces carry their region (a sliver's row is its centroid's cell's region): a
    problem per region, never per face."""
    result = SimpleNamespace(faces=np.array([3, 4, 9, 5]), depth=np.array([0.2, 0.1, 0.3, 0.4]),
                             position=np.arange(12.0).reshape(4, 3),
                             region=np.array([1, 1, 0, 1]), region_area=np.array([2.0, 0.5]))
    p = audit_problems("stand", result)
    assert p.rows.tolist() == [2, 1]  # region 0 (its one face), region 1 (its shallowest row)
    assert p.owner.tolist() == [1, 1, 0, 1] and p.size.tolist() == [2.0, 0.5]
    assert p.value.tolist() == [0.3, 0.1]


# ---------------------------------------------------------------- naming
def test_triangle_labels():
    g = SimpleNamespace(objects=("Curb 45cm", "Stairs"), tri_object=np.array([0, 0, 1]),
                        tri_orig_face=np.array([5, 5, -1]))
    names = TriangleNames(g)
    assert names.label(1) == "Curb 45cm face 5"
    assert names.name(1) == {"triangle": 1, "object": "Curb 45cm", "face": 5}
    assert names.label(2) == "Stairs (a face made by a modifier)"
    assert names.face_of(2) is None and names.object_of(2) == "Stairs"
    assert names.label(-1) == "no triangle"
    assert TriangleNames().label(7) == "triangle 7"
    assert TriangleNames().name(7) == {"triangle": 7, "object": None, "face": None}


def test_min_reported_depth_is_the_default_of_the_single_form():
    mesh = _floor()
    cap = Capsule.upright((0, 0, -0.9 * MIN_REPORTED_DEPTH), 1.8, 0.35)
    assert not capsule_verdict(mesh, cap).penetrating
    assert capsule_verdict(mesh, cap, min_depth=0.5 * MIN_REPORTED_DEPTH).penetrating
