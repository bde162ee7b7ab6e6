"""core.report: the level report every front end writes, validated against its JSON Schema."""

import json
import pathlib
from types import SimpleNamespace

import numpy as np
import pytest
from capsule_collision.core import Capsule, ControllerSettings, TriangleMesh
from capsule_collision.core.checks.report import (
    check_level,
    combine_levels,
    mark_baseline,
    parse_checks,
    parse_frame_rates,
    run_checks,
)
from capsule_collision.core.checks.verdicts import CapsuleCheck, PathCheck

jsonschema = pytest.importorskip("jsonschema")  # pinned in requirements.txt

ROOT = pathlib.Path(__file__).resolve().parents[2]
SCHEMA = json.loads((ROOT / "schema" / "report.schema.json").read_text())


def _step_level(rise=0.45):
    """Floor (x 0..5) and a raised block (x 5..10, top at ``rise``) with its riser; the block's
    far edge at x=10 drops into nothing (a ledge with no floor below)."""
    v = np.array([[0, 0, 0], [5, 0, 0], [5, 4, 0], [0, 4, 0],
                  [5, 0, rise], [10, 0, rise], [10, 4, rise], [5, 4, rise]], float)
    t = np.array([[0, 1, 2], [0, 2, 3],  # Floor faces 0 (two triangles)
                  [4, 5, 6], [4, 6, 7],  # Block top, face 0
                  [1, 2, 7], [1, 7, 4]])  # Block riser, face 1
    geometry = SimpleNamespace(objects=("Floor", "Block"),
                               tri_object=np.array([0, 0, 1, 1, 1, 1], np.int32),
                               tri_orig_face=np.array([0, 0, 0, 0, 1, -1], np.int32))
    return TriangleMesh(v, t), geometry


def _checks():
    capsules = [CapsuleCheck("spawn_in_riser", Capsule.upright((4.9, 2, 0), 1.8, 0.35), "clear",
                             foot=(4.9, 2, 0)),
                CapsuleCheck("open_floor", Capsule.upright((1, 1, 0), 1.8, 0.35), "clear",
                             foot=(1, 1, 0))]
    paths = [PathCheck("up_the_step", [[1, 2, 0], [8, 2, 0.45]], "reached_goal"),
             PathCheck("along_the_floor", [[1, 1, 0], [4, 1, 0]], "reached_goal")]
    return capsules, paths


@pytest.fixture(scope="module")
def report():
    mesh, geometry = _step_level()
    capsules, paths = _checks()
    checks = [c for c in parse_checks("all") if c != "frame_rates"]
    return check_level(mesh, ControllerSettings(), capsules, paths, geometry=geometry,
                       level="step", file="step.blend", checks=checks)


def test_report_validates_against_the_schema_and_has_no_infinities(report):
    document = combine_levels([report])
    text = json.dumps(document, allow_nan=False)  # raises on inf/nan
    jsonschema.validate(json.loads(text), SCHEMA)
    assert "1.79" not in text and "e+308" not in text


def test_schema_rejects_a_report_with_a_bad_expectation_or_a_bare_null(report):
    document = json.loads(json.dumps(combine_levels([report])))
    document["levels"][0]["capsules"][0]["expected"] = "penetrated"
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(document, SCHEMA)
    document = json.loads(json.dumps(combine_levels([report])))
    row = document["levels"][0]["audits"]["ledges"]["highest"][0]
    row["drop_m"] = None
    row.pop("drop_m_null_reason", None)
    with pytest.raises(jsonschema.ValidationError, match="drop_m_null_reason"):
        jsonschema.validate(document, SCHEMA)


def test_findings_name_objects_faces_positions_and_values(report):
    assert not report["ok"]
    keys = [(f["check"], f["name"], f["expected"], f["got"]) for f in report["findings"]
            if f["severity"] == "error"]
    assert keys == [("capsule", "spawn_in_riser", "clear", "penetrating"),
                    ("walk", "up_the_step", "reached_goal", "step_too_high")]
    assert [f["check"] for f in report["findings"][:2]] == ["capsule", "walk"]  # errors first
    caps = {c["name"]: c for c in report["capsules"]}
    riser = caps["spawn_in_riser"]
    assert riser["deepest_m"] == pytest.approx(0.25)
    # the riser (face 1, and a triangle that maps to no original face) and the block's top
    assert {(t["object"], t["face"]) for t in riser["triangles"]} == {
        ("Block", 0), ("Block", 1), ("Block", None)}
    assert riser["triangles"][0]["depth_m"] == pytest.approx(0.25)
    finding = report["findings"][0]
    assert finding["message"].endswith("[Block faces 0, 1]")  # named, unmapped face left out
    assert [f["triangle"] for f in finding["faces"]] == [t["triangle"] for t in riser["triangles"]]
    assert report["findings"][1]["message"].endswith("]") and "[Block face " in report[
        "findings"][1]["message"]  # the face core names for the event (top edge or riser)
    assert riser["push_out_m"] == pytest.approx([-0.25, 0, 0])
    assert caps["open_floor"]["ok"] and caps["open_floor"]["triangles"] == []
    walk = {w["name"]: w for w in report["walks"]}["up_the_step"]
    event = walk["events"][0]
    assert event["kind"] == "step_too_high" and event["unit"] == "m"
    assert event["value"] == pytest.approx(0.45, abs=0.02)
    assert event["object"] == "Block"


def test_infinite_drop_is_null_with_a_reason(report):
    ledges = report["audits"]["ledges"]
    far = [r for r in ledges["highest"] if r["drop_m"] is None]
    reason = "no floor below within the audit's reach"
    assert far and all(r["drop_m_null_reason"] == reason for r in far)
    assert {r["object"] for r in far} == {"Floor", "Block"}  # the floor's far edges too


def test_plain_core_use_names_triangles_by_index():
    mesh, _ = _step_level()
    capsules, _ = _checks()
    rep = check_level(mesh, ControllerSettings(), capsules[:1], checks=["penetration"])
    tri = rep["capsules"][0]["triangles"][0]
    assert tri["object"] is None and tri["face"] is None and tri["triangle"] in (2, 3, 4, 5)
    assert rep["walks"] == [] and rep["audits"] == {} and rep["walkability"] is None
    jsonschema.validate(json.loads(json.dumps(combine_levels([rep]))), SCHEMA)


def test_baseline_flags_only_new_findings(report):
    old = json.loads(json.dumps(combine_levels([report])))
    same = mark_baseline(json.loads(json.dumps(combine_levels([report]))), old, "old.json")
    n = len(report["findings"])
    by_severity = {"error": 2, "warning": 0, "info": n - 2}  # the ledges are infos
    assert same["summary"] == {"levels": 1, "findings": n, "new_findings": 0, "ok": True,
                               "by_severity": by_severity, "fail_on": "error", "failing": 0,
                               "waived": 0}
    assert all(f["new"] is False for f in same["levels"][0]["findings"])
    fewer = json.loads(json.dumps(old))
    fewer["levels"][0]["findings"].pop(1)  # the walk
    marked = mark_baseline(json.loads(json.dumps(combine_levels([report]))), fewer)
    assert marked["summary"]["new_findings"] == 1 and not marked["summary"]["ok"]
    # every finding compared, the new one listed first (issue 27)
    assert [f["new"] for f in marked["levels"][0]["findings"]] == [True] + [False] * (n - 1)
    assert marked["levels"][0]["findings"][0]["check"] == "walk"
    fewer["levels"][0]["findings"].pop()  # a ledge (an info): new, but no gate fails on it
    marked = mark_baseline(json.loads(json.dumps(combine_levels([report]))), fewer)
    assert marked["summary"]["new_findings"] == 2 and marked["summary"]["failing"] == 1
    with pytest.raises(ValueError, match="baseline b.json"):
        mark_baseline(combine_levels([report]), {"levels": []}, "b.json")


def test_combine_orders_levels_by_index():
    a = {"index": 1, "findings": [{"severity": "error"}], "level": "a"}
    b = {"index": 0, "findings": [], "level": "b"}
    doc = combine_levels([a, b])
    assert [lv["level"] for lv in doc["levels"]] == ["b", "a"]
    assert doc["summary"]["findings"] == 1 and not doc["summary"]["ok"]


@pytest.mark.parametrize("bad, message", [("walks,penetraton", "'penetraton'"), ("", "at least")])
def test_unknown_check_is_a_value_error(bad, message):
    with pytest.raises(ValueError, match=message):
        parse_checks(bad)


@pytest.mark.parametrize("bad", ["30,-60", "0", "fast", "inf"])
def test_bad_frame_rates_are_rejected(bad):
    with pytest.raises(ValueError, match="frame_rates"):
        parse_frame_rates(bad)


def test_frame_rate_differences_become_findings(monkeypatch):
    from capsule_collision.core import report as report_module

    def differing(mesh, points, settings, rates):
        return SimpleNamespace(rates=(30, 60, 120), consistent=False, verdicts={}, differences=[
            {"what": "event", "kind": "fell", "present_at": [30], "absent_at": [60, 120],
             "positions": {"30": [1.0, 2.0, 0.0]}}])

    monkeypatch.setattr(report_module, "compare_frame_rates", differing)
    mesh, _ = _step_level()
    _, paths = _checks()
    res = run_checks(mesh, ControllerSettings(), paths=paths[1:], checks=["frame_rates"])
    (finding,) = res.findings
    assert finding.key == ("frame_rate", "along_the_floor", "same verdict at 30/60/120 Hz",
                           "fell at 30 Hz only")
    assert finding.position == (1.0, 2.0, 0.0)


def test_stair_and_ledge_sections_count_risers_and_runs():
    """On the one-problem rooms (tests/core/audit_scenes.py) the stair section counts risers, not
    riser triangles: exactly one riser too high (0.45 m) and one tread too shallow (5 cm), one
    row each; the ledge section has one row per run, with its length and ends."""
    from audit_scenes import one_problem_scene
    from capsule_collision.core.checks.audits import stair_audit

    mesh = one_problem_scene()
    report = check_level(mesh, ControllerSettings(), [], [], level="rooms",
                         checks=["stairs", "ledges"])
    jsonschema.validate(combine_levels([report]), SCHEMA)
    stairs = report["audits"]["stairs"]
    assert (stairs["too_high"], stairs["too_shallow"]) == (1, 1)
    rows = stair_audit(mesh, ControllerSettings())
    assert stairs["flights"] == 2
    assert stairs["step_risers"] == len(set(rows.step.tolist())) < len(rows.riser)  # risers
    assert sorted((r["too_high"], r["too_shallow"]) for r in stairs["worst"]) == [
        (False, True), (True, False)]
    high = next(r for r in stairs["worst"] if r["too_high"])
    assert high["rise_m"] == pytest.approx(0.45, abs=0.01)
    ledges = report["audits"]["ledges"]
    assert ledges["runs"] == len(ledges["highest"]) >= 1
    assert ledges["faces"] >= ledges["runs"]
    for row in ledges["highest"]:
        assert row["length_m"] > 0.0 and len(row["start"]) == len(row["end"]) == 3


def test_reachability_block_counts_spawns_islands_and_traps_and_is_null_without_spawns():
    """report.json's ``reachability`` block is core.reachability's answer: on the steps scene
    (a 0.34 m platform the character steps onto, a 0.36 m one it cannot) from a spawn on the
    floor and one in the void: 2 spawns, 1 on no floor, the floor's reachable m^2, one island
    (the 0.36 m platform, 4 x 3 m); null when the level has no spawn."""
    from capsule_collision.core import reachability
    from capsule_collision.levelcheck import console
    from reach_scenes import steps_scene

    mesh = steps_scene(0.34, 0.36)
    spawns = [[1.0, 1.0, 0.0], [50.0, 50.0, -20.0]]
    report = check_level(mesh, ControllerSettings(), [], [], level="steps",
                         checks=["reachability"], spawns=spawns)
    jsonschema.validate(combine_levels([report]), SCHEMA)
    direct = reachability(mesh, spawns, ControllerSettings())
    block = report["reachability"]
    assert block == {"spawns": 2, "spawns_on_no_floor": 1,
                     "reachable_m2": round(direct.reachable_area, 4), "islands": 1,
                     "islands_m2": round(direct.islands[0].area, 4), "traps": 0,
                     "traps_m2": 0.0,
                     "what_if": ["with step height 0.36 m (now 0.35 m): 1 island is reached"]}
    assert 11.5 < block["islands_m2"] <= 12.0  # the 4 x 3 m platform's top, cell by cell
    text = console.summary(combine_levels([report]))
    assert "reachability: from 2 spawn(s)" in text and "1 spawn(s) stand on no floor" in text
    assert "; with step height 0.36 m (now 0.35 m): 1 island is reached" in text  # issue 24

    bare = check_level(mesh, ControllerSettings(), [], [], level="steps",
                       checks=["reachability"])
    jsonschema.validate(combine_levels([bare]), SCHEMA)
    assert bare["reachability"] is None
    assert "reachability: not run, the level has no spawns" in console.summary(
        combine_levels([bare]))


def _rooms_report(mesh, level="rooms"):
    spawns = [[1.0, 1.5, 0.0], [21.0, 1.5, 0.0], [31.0, 1.5, 0.0], [11.0, 1.5, 0.0]]
    return check_level(mesh, ControllerSettings(), level=level, spawns=spawns,
                       checks=["walkability", "stand", "stairs", "headroom", "ledges",
                               "reachability"])


def test_identity_survives_reversed_faces_and_a_deleted_triangle():
    """Issue 27: the same level re-exported with its faces (and vertices) in reversed order
    and one ceiling triangle deleted elsewhere gives 0 new findings: findings are named by
    where they are, never by face index. A real new problem is still new."""
    from audit_scenes import one_problem_scene

    mesh = one_problem_scene()
    before = combine_levels([_rooms_report(mesh)])
    checks = [f["check"] for f in before["levels"][0]["findings"]]
    assert set(checks) >= {"headroom", "stairs", "ledges", "islands"}
    assert "stand" not in checks  # the passage is cramped by its low ceiling: one problem
    v, t = mesh.vertices, mesh.triangles
    ceiling = np.flatnonzero((mesh.normals[:, 2] < -0.99) & (v[t[:, 0], 0] > 30.0))[0]
    t = np.delete(t, ceiling, axis=0)
    perm = np.arange(len(v))[::-1]  # vertex k moves to len - 1 - k
    v2, t2 = v[perm], perm[t][::-1]  # perm is its own inverse
    after = combine_levels([_rooms_report(TriangleMesh(v2, t2))])
    marked = mark_baseline(json.loads(json.dumps(after)), json.loads(json.dumps(before)))
    assert marked["summary"]["new_findings"] == 0
    assert len(after["levels"][0]["findings"]) == len(before["levels"][0]["findings"])
    names = {f["name"] for f in before["levels"][0]["findings"]}
    assert not any("face" in n for n in names), names  # no face index in any identity
    # a finding moved by more than one identity step is new
    moved = json.loads(json.dumps(before))
    f = next(f for f in moved["levels"][0]["findings"] if f["check"] == "headroom")
    f["where"][0] += 0.5
    remarked = mark_baseline(json.loads(json.dumps(after)), moved)
    assert remarked["summary"]["new_findings"] == 1
    assert remarked["levels"][0]["findings"][0]["check"] == "headroom"  # new first


def test_an_island_smaller_than_the_footprint_is_counted_in_one_info_by_default():
    """The report applies the default minimum island area (one footprint, pi r^2 = 0.385 m²
    for the default character): the top of a 0.5 x 0.5 m post (0.25 m²) beside the yard is
    counted in one info, a 2 x 2 m platform is a warning; an explicit 0 lists both."""
    import scenes
    from capsule_collision.core.checks.report import level_report

    mesh = TriangleMesh(*scenes.merge([scenes.grid(0, 12, 0, 8),
                                       scenes.box((6, 2, 0), (8, 4, 0.6)),
                                       scenes.box((2, 5, 0), (2.5, 5.5, 0.6))]))
    res = run_checks(mesh, ControllerSettings(), spawns=[[1.0, 1.0, 0.0]],
                     checks=["reachability"])
    found = [(f["severity"], f["got"], f["count"]) for f in level_report(res)["findings"]]
    assert found == [("warning", "island", 1), ("info", "below_min_area", 1)]
    res.min_area = {"islands": 0.0}
    found = [(f["severity"], f["got"]) for f in level_report(res)["findings"]]
    assert found == [("warning", "island"), ("warning", "island")]
