"""core.checks.findings and core.checks.targets: audit problems (core.checks.problems' rule)
worst first and as findings with their severities, the level's own findings, and the targets
judged by core.reachability (a stand-in here)."""

from types import SimpleNamespace

import numpy as np
import pytest
from capsule_collision.core.checks.findings import (
    IDENTITY_GRID,
    audit_findings,
    identity_point,
    level_findings,
    low_headroom_regions,
    region_findings,
    worst_first,
)
from capsule_collision.core.checks.sanity import SanityWarning
from capsule_collision.core.checks.targets import (
    TargetCheck,
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


def test_a_stair_problem_is_one_per_flight_its_highest_bad_riser():
    p = worst_first("stairs", _stairs())
    assert p.rows.tolist() == [4] and p.faces.tolist() == [30]
    assert p.got == ("too_high",) and p.value.tolist() == [0.5]
    assert sorted(p.triangles(0).tolist()) == [10, 11, 30]  # both bad risers of the flight
    two = _stairs()
    two.flight = np.array([0, 0, 0, 0, 1])
    p = worst_first("stairs", two)
    assert p.rows.tolist() == [4, 0] and p.faces.tolist() == [30, 10]


def _stand(region=None):
    return SimpleNamespace(faces=np.arange(5), depth=np.linspace(0.5, 0.1, 5),
                           position=np.arange(15.0).reshape(5, 3),
                           region=np.arange(5) if region is None else region,
                           region_area=np.full(5, 2.0))


def test_every_problem_is_listed_no_cap():
    """Issue 27: no "at most 100 per audit": every problem is its own finding."""
    listed = audit_findings("stand", _stand())
    assert len(listed) == 5 and all(x.counted == 1 for x in listed)
    assert [x.finding.position[0] for x in listed] == [0.0, 3.0, 6.0, 9.0, 12.0]  # deepest first


def test_one_finding_per_region_named_by_where_it_is_not_by_face():
    listed = audit_findings("stand", _stand(np.array([0, 0, 1, 1, 1])),
                            name_of=lambda t: f"Floor face {t}")
    assert len(listed) == 2
    first, second = listed
    # region 0's best try is 0.4 m in (row 1), region 1's 0.1 m (row 4): region 0 first
    # named by the mean of its rows (whatever their order), shown at its worst row
    assert first.finding.name == "cramped region at (1.50, 2.50, 3.50)"
    assert first.finding.position == (3.0, 4.0, 5.0)
    assert sorted(first.triangles.tolist()) == [0, 1] and first.size == 2.0
    assert first.where == (1.5, 2.5, 3.5) and first.size_unit == "m2"
    assert "Floor face 1" in first.finding.message and "0.400 m at best" in first.finding.message
    assert second.value == pytest.approx(0.1) and sorted(second.triangles.tolist()) == [2, 3, 4]
    assert "face" not in first.finding.name


def test_a_region_cramped_by_a_low_ceiling_is_listed_once_by_headroom():
    """Stand test and headroom share the cramped regions: one under a low ceiling is the
    headroom audit's problem (its cause), the stand test lists only the others."""
    stand = _stand(np.array([0, 0, 1, 2, 2]))
    headroom = SimpleNamespace(faces=np.array([2]), clearance=np.array([1.2]),
                               position=np.zeros((1, 3)), region=np.array([1]))
    explained = low_headroom_regions(headroom)
    assert explained.tolist() == [1]
    listed = audit_findings("stand", stand, explained=explained)
    assert sorted(sorted(x.triangles.tolist()) for x in listed) == [[0, 1], [3, 4]]
    assert low_headroom_regions(None).size == 0


def test_identity_point_rounds_to_the_grid():
    assert identity_point((0.12, -0.13, 1.0)) == (0.0, -0.25, 1.0)
    assert identity_point((-0.1, 0.0, 0.0)) == (0.0, 0.0, 0.0)  # never -0.0
    assert IDENTITY_GRID == 0.25


def test_ledges_without_floor_below_come_first():
    lg = SimpleNamespace(faces=np.array([1, 2, 3]), drop=np.array([1.0, np.inf, 2.0]),
                         position=np.zeros((3, 3)), edge_faces=np.array([7, 8]),
                         edge_run=np.array([2, 0]), length=np.array([1.0, 2.0, 3.0]))
    p = worst_first("ledges", lg)
    assert p.rows.tolist() == [1, 2, 0] and p.faces.tolist() == [2, 3, 1]
    assert p.size.tolist() == [2.0, 3.0, 1.0] and p.triangles(1).tolist() == [3, 7]


def test_stair_findings_say_the_flight_and_its_riser():
    (first,) = audit_findings("stairs", _stairs(), SimpleNamespace(step_height=0.35))
    f = first.finding
    assert (f.check, f.got, f.severity) == ("stairs", "too_high", "warning")
    assert f.name == "stair flight at (5.00, 6.00, 7.00)"  # the mean of its bad risers' rows
    assert "its highest riser 0.50 m, above the step height (0.35 m)" in f.message


class Reaches:
    """Stands in for a Reachability: triangle 2 carries reachable floor, triangle 3 a trap,
    ``can_reach`` is true within 0.1 m of x = 100."""

    cell_size = 0.1
    settings = SimpleNamespace(up=(0.0, 0.0, 1.0))

    def can_reach(self, points):
        return np.abs(np.asarray(points)[:, 0] - 100.0) < 0.1


def test_problems_on_floor_no_spawn_reaches_are_one_info(monkeypatch):
    """Issue 24 section 1: with spawns, a problem is listed when one of its faces carries
    reachable floor (or trap), or reachable floor lies a cell and a half from it (a slot's
    mouth); the others make one info with their count and area."""
    from capsule_collision.core.checks import findings as mod

    monkeypatch.setattr(mod, "triangle_classes",
                        lambda reach: np.array([-1, 2, 0, 1, -1, -1], np.int8))
    stand = _stand(np.array([0, 1, 2, 3, 4]))
    stand.position[4] = (100.24, 0.0, 0.0)  # 1.5 cells to the probe, reachable: listed
    stand.position[0] = (100.26, 0.0, 0.0)  # its probe lands beyond reachable floor: not
    listed = audit_findings("stand", stand, reach=Reaches())
    assert [x.finding.severity for x in listed] == ["warning"] * 3 + ["info"]
    assert sorted(int(x.triangles[0]) for x in listed[:3]) == [2, 3, 4]
    info = listed[-1]
    assert info.counted == 2 and info.size == 4.0 and info.triangles.tolist() == [0, 1]
    assert info.finding.name == "stand: out_of_reach" and info.finding.got == "out_of_reach"
    assert "2 cramped regions (4.0 m²) on floor no spawn reaches" in info.finding.message


def test_invisible_islands_are_one_info_and_a_visible_one_says_why():
    cause = SimpleNamespace(kind="riser", value=0.41, limit=0.35, point=(1, 2, 3),
                            text="riser 0.41 m > step height 0.35 m at (1.00, 2.00, 3.00)")
    seen = SimpleNamespace(faces=np.array([4]), area=3.0, point=np.array([1.0, 2.0, 3.0]),
                           visible=True, causes=(cause,))
    roof = SimpleNamespace(faces=np.array([7, 8]), area=50.0, point=np.zeros(3), visible=False)
    hull = SimpleNamespace(faces=np.array([9]), area=500.0, point=np.ones(3), visible=False)
    trap = SimpleNamespace(faces=np.array([5]), area=1.0, point=np.full(3, 5.0))
    out = region_findings(SimpleNamespace(islands=(hull, roof, seen), traps=(trap,)))
    assert [(x.finding.check, x.finding.severity, x.counted) for x in out] == [
        ("islands", "warning", 1), ("islands", "info", 2), ("traps", "warning", 1)]
    assert out[0].finding.name == "island at (1.00, 2.00, 3.00)"
    assert out[0].finding.message.endswith("; riser 0.41 m > step height 0.35 m at "
                                           "(1.00, 2.00, 3.00)")
    assert out[1].size == 550.0 and out[1].triangles.tolist() == [7, 8, 9]
    plain = SimpleNamespace(faces=np.array([4]), area=3.0, point=np.zeros(3))  # no flags yet
    assert region_findings(SimpleNamespace(islands=(plain,), traps=()))[0].finding.severity \
        == "warning"


def test_audits_without_spawns_say_a_spawn_scopes_them():
    found = level_findings([], has_checks=True, audits_unscoped=True)
    assert [(f.name, f.severity) for f in found] == [("audits_unscoped", "info")]
    assert "mark a spawn" in found[0].message


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
    (island,) = region_findings(res.result)
    assert (island.finding.check, island.finding.name, island.finding.severity) == (
        "islands", "island at (20.00, 0.00, 0.00)", "warning")


def test_targets_without_spawns_are_refused_clearly():
    with pytest.raises(ValueError, match="targets need spawns"):
        run_reachability(lambda *a: FakeReach(), None, np.empty((0, 3)),
                         [TargetCheck("T", (0, 0, 0), "reachable")], None)


def test_a_walled_pocket_on_a_reachable_floor_face_is_out_of_reach_an_open_slot_is_not():
    """Issue 24 on real geometry: one big floor face (two triangles) carries the reachable
    yard, a pocket 0.5 m wide walled in by 1 m thick walls (no way in: out of reach, though
    its face carries reachable floor) and a slot as narrow open to the yard (the character
    walks to its mouth: a warning). The pocket is one info, counted with its area."""
    from audit_scenes import box, merge, quad
    from capsule_collision.core import ControllerSettings, TriangleMesh, reachability
    from capsule_collision.core.checks.audits import stand_test

    parts = [quad((0, 0, 0), (20, 0, 0), (20, 20, 0), (0, 20, 0)),
             box((4, 4, 0), (5, 8, 3)), box((5.5, 4, 0), (6.5, 8, 3)),  # the pocket's sides
             box((5, 4, 0), (5.5, 5, 3)), box((5, 7, 0), (5.5, 8, 3)),  # and its ends
             box((9, 5, 0), (10, 8, 3)), box((10.5, 5, 0), (11.5, 8, 3))]  # the slot, open
    mesh = TriangleMesh(*merge(parts))
    s = ControllerSettings()
    reach = reachability(mesh, [[1.0, 1.0, 0.0]], s)
    listed = audit_findings("stand", stand_test(mesh, s), s, reach)
    assert [(x.finding.severity, x.counted) for x in listed] == [("warning", 1), ("info", 1)]
    slot, pocket = listed
    assert 10.0 <= slot.finding.position[0] <= 10.5 and slot.finding.position[1] >= 5.0
    assert pocket.finding.got == "out_of_reach" and 0.9 < pocket.size < 1.1  # 0.5 x 2 m


def _listed_pairs(kind, sizes, settings):
    """Findings of islands (``kind`` "islands") or cramped regions ("stand") of ``sizes``
    m^2, with the default minimum areas of ``settings`` applied, as report._findings does."""
    from capsule_collision.core.checks.gate import apply_min_area
    from capsule_collision.core.checks.severity import min_areas

    if kind == "islands":
        regions = tuple(SimpleNamespace(faces=np.array([k]), area=a,
                                        point=np.array([3.0 * k, 0.0, 1.0]), visible=True)
                        for k, a in enumerate(sizes))
        listed = region_findings(SimpleNamespace(islands=regions, traps=()))
    else:  # "stand" or "headroom": one region per size, its own face (headroom: its ceiling
        n = len(sizes)  # 0.5 m down to 0.1 m above the floor)
        stand = SimpleNamespace(faces=np.arange(n), depth=np.linspace(0.5, 0.1, n),
                                clearance=np.linspace(0.5, 0.1, n),
                                position=np.arange(3.0 * n).reshape(n, 3) * 3.0,
                                region=np.arange(n), region_area=np.asarray(sizes, float))
        listed = audit_findings(kind, stand, settings)
    return [x for x, _ in apply_min_area([(x, False) for x in listed], min_areas(settings))]


@pytest.mark.parametrize("kind", ["islands", "stand", "headroom"])
def test_min_area_defaults_one_footprint_just_below_is_one_info_just_above_a_warning(kind):
    """Issue 24/27 defaults: an island, a cramped or a low-headroom region smaller than the
    character's footprint (pi r^2: 0.456 m² for Quake's r = 0.381 m) is counted in one info,
    one just larger is a warning of its own; a sidecar's 0 lists every one."""
    from capsule_collision.core import ControllerSettings
    from capsule_collision.core.checks.gate import apply_min_area
    from capsule_collision.core.checks.severity import min_areas

    quake = ControllerSettings(radius=0.381, height=1.4224, step_height=0.4572)
    assert min_areas(quake) == dict.fromkeys(("islands", "stand", "headroom", "collision_diff"),
                                             0.456)  # pi r^2 to the 0.001 m²
    foot = 0.456
    out = _listed_pairs(kind, [0.999 * foot, 1.001 * foot, 0.05], quake)
    got = {"islands": "island", "stand": "cramped", "headroom": "low_headroom"}[kind]
    assert [(x.finding.severity, x.finding.got, x.counted) for x in out] == [
        ("warning", got, 1), ("info", "below_min_area", 2)]
    what = {"islands": "island(s)", "stand": "cramped region(s)",
            "headroom": "low-headroom region(s)"}[kind]
    assert f"2 {what} (" in out[1].finding.message
    assert out[0].size == pytest.approx(1.001 * foot)
    assert out[1].size == pytest.approx(0.999 * foot + 0.05)
    assert "smaller than the minimum area 0.456 m²" in out[1].finding.message
    # an explicit minimum wins over the default: 0 lists every one, as before
    assert min_areas(quake, {kind: 0.0})[kind] == 0.0
    pairs = [(x, False) for x in _listed_pairs(kind, [0.05], None)]  # no settings: no default
    assert [x.finding.got for x, _ in pairs] != ["below_min_area"]
    kept = apply_min_area(pairs, min_areas(quake, {kind: 0.0}))
    assert [x.finding.severity for x, _ in kept] == ["warning"]


def test_min_area_default_follows_the_radius():
    """The default is in footprints of the character's radius, whatever the character: the
    engine default 0.35 m gives 0.385 m²; no settings, no default."""
    from capsule_collision.core import ControllerSettings
    from capsule_collision.core.checks.severity import min_areas

    assert min_areas(ControllerSettings())["islands"] == 0.385
    assert min_areas(ControllerSettings(radius=0.5))["stand"] == 0.785
    assert min_areas(None) == {} and min_areas(None, {"islands": 2.0}) == {"islands": 2.0}
