"""core.checks.held: the findings a caller holds (the panel's rows), counted and written by one
rule: one finding per identity, the report's schema, stale ones marked."""

import json
import pathlib

import pytest
from capsule_collision.core import ControllerSettings
from capsule_collision.core.checks import held
from capsule_collision.core.checks.held import (
    count_findings,
    finding_counts,
    finding_identity,
    held_document,
    held_level,
    merge_findings,
)
from capsule_collision.core.checks.report import check_level, combine_levels, parse_checks
from capsule_collision.core.checks.report_rows import FACES_LISTED

jsonschema = pytest.importorskip("jsonschema")  # pinned in requirements.txt

ROOT = pathlib.Path(__file__).resolve().parents[2]
SCHEMA = json.loads((ROOT / "schema" / "report.schema.json").read_text())


def face(obj, k):
    return {"triangle": -1, "object": obj, "face": k}


def probe_row(obj, faces, depth, severity="warning", stale=""):
    """One panel row of a capsule with no expectation penetrating ``obj``."""
    return {"check": "penetration", "severity": severity, "name": "Probe", "expected": "any",
            "got": "penetrating", "position": (1.0, 2.0, 0.0),
            "message": f"Probe in {obj}: {len(faces)} faces", "faces": [face(obj, k)
                                                                       for k in faces],
            "face_count": len(faces), "value": depth, "size": None, "size_unit": None,
            "where": None, "count": 1, "stale": bool(stale), "stale_reason": stale}


def region(where, severity="warning"):
    return {"check": "headroom", "severity": severity, "name": f"region at {where}",
            "expected": "no problem", "got": "low_headroom", "position": where,
            "message": "headroom 1.20 m", "faces": [face("Floor", 3)], "face_count": 1,
            "value": 1.2, "size": 4.0, "size_unit": "m2", "where": where, "count": 1}


def test_a_capsule_in_two_objects_is_one_finding_with_the_faces_of_both():
    rows = [probe_row("Wall", [0, 1], 0.12), probe_row("Post", [5], 0.31)]
    (f,) = merge_findings(rows)
    assert f["faces"] == [face("Wall", 0), face("Wall", 1), face("Post", 5)]
    assert f["face_count"] == 3 and f["value"] == 0.31  # the deepest of the two
    assert f["message"] == "Probe in Wall: 2 faces"  # the first row's (the panel's order)
    assert count_findings(rows) == {"error": 0, "warning": 1, "info": 0}


def test_the_most_severe_part_and_any_stale_part_decide():
    rows = [probe_row("Wall", [0], 0.1, "info"), probe_row("Post", [5], 0.2, "warning",
                                                            stale="capsule moved")]
    (f,) = merge_findings(rows)
    assert f["severity"] == "warning" and f["stale"] and f["stale_reason"] == "capsule moved"
    (f,) = merge_findings(rows[:1])
    assert not f["stale"] and f["stale_reason"] == ""


def test_placed_problems_are_one_entry_each_even_at_one_rounded_place():
    """Regression (am_lavaarena, tools/bench_export.py): two ledge runs whose positions round
    to one identity grid point are two findings, as the run lists them (the panel holds one
    row per placed problem, its faces on every object in that row)."""
    a = region((1.0, 2.0, 0.0))
    assert finding_identity(a, 0) != finding_identity(a, 1)
    assert len(merge_findings([a, dict(a)])) == 2
    named = probe_row("Wall", [0], 0.1)
    assert finding_identity(named, 0) == finding_identity(dict(named), 7)


def test_the_held_report_counts_as_the_panel_and_validates():
    rows = ([probe_row("Wall", [0, 1], 0.12), probe_row("Post", [5], 0.31, stale="moved")]
            + [region((float(k), 0.0, 0.0)) for k in range(3)]
            + [dict(region((9.0, 9.0, 0.0), "info"), value=None)])
    level = held_level(rows, level="arena", file="arena.blend", objects=("Wall", "Post"),
                       settings=ControllerSettings().to_dict(), triangles=12,
                       checks=("penetration", "headroom"), min_depth=1e-4)
    doc = held_document([level])
    jsonschema.validate(doc, SCHEMA)
    assert doc["summary"]["by_severity"] == count_findings(rows) == {
        "error": 0, "warning": 4, "info": 1}
    assert doc["summary"]["findings"] == 5 and doc["summary"]["ok"] is True
    assert doc["run"]["source"] == level["source"] == "panel"
    assert doc["run"]["stale_findings"] == level["stale_findings"] == 1
    found = level["findings"]
    assert [f["stale"] for f in found] == [True, False, False, False, False]
    assert found[0]["stale_reason"] == "moved" and "stale_reason" not in found[1]
    assert found[-1]["value"] is None and found[-1]["value_null_reason"]
    assert found[1]["size"] == 4.0 and found[1]["size_unit"] == "m2"
    assert found[1]["where"] == [0.0, 0.0, 0.0]


def test_a_finding_lists_its_first_faces_and_counts_all():
    many = probe_row("Wall", list(range(FACES_LISTED + 5)), 0.1)
    (f,) = held_level([many], level="x")["findings"]
    assert len(f["faces"]) == FACES_LISTED and f["face_count"] == FACES_LISTED + 5


def test_an_error_fails_the_held_report():
    doc = held_document([held_level([probe_row("Wall", [0], 0.1, "error")], level="x")])
    assert doc["summary"]["ok"] is False and doc["levels"][0]["ok"] is False


def test_nothing_held_is_a_valid_empty_report():
    doc = held_document([held_level([], level="empty")])
    jsonschema.validate(doc, SCHEMA)
    assert doc["summary"]["findings"] == 0 and doc["summary"]["ok"] is True


@pytest.mark.parametrize("bad, words", [
    ({"name": "x"}, r"entries\[0\]: a held finding needs a check and a name"),
    ({"check": "penetration"}, r"entries\[0\]: a held finding needs a check and a name"),
    ({"check": "nonsense", "name": "x", "severity": "info"}, "unknown finding kind"),
    ({"check": "stand", "name": "x", "severity": "fatal"}, r"entries\[0\]\.severity"),
])
def test_bad_entries_name_what_is_wrong(bad, words):
    with pytest.raises(ValueError, match=words):
        merge_findings([bad])


def test_a_runs_findings_held_again_count_the_same():
    """A run's findings, held as they are and written again, give the run's counts: the one
    rule of core.checks.report and of the panel (nothing merges that the run kept apart)."""
    from test_report import _checks, _step_level  # noqa: PLC0415

    mesh, geometry = _step_level()
    capsules, paths = _checks()
    checks = [c for c in parse_checks("all") if c != "frame_rates"]
    run = check_level(mesh, ControllerSettings(), capsules, paths, geometry=geometry,
                      level="step", file="step.blend", checks=checks)
    ran = combine_levels([run])
    assert ran["summary"]["findings"] >= 3
    again = held_document([held_level(run["findings"], level="step")])
    assert again["summary"]["by_severity"] == ran["summary"]["by_severity"]
    assert [f["name"] for f in again["levels"][0]["findings"]] == \
        [f["name"] for f in run["findings"]]


def test_finding_counts_merge_once_and_count_the_waived_apart(monkeypatch):
    """The panel's counts per redraw (panels.check_counts, results.severity_counts) come from
    one merge (they merged twice: count_findings then waived_count): a capsule waived on two
    objects is one waived finding, not a warning; the rest as count_findings."""
    waived = {"reason": "prop", "who": "ana"}
    rows = [dict(probe_row("Wall", [0], 0.1), waived=waived),
            dict(probe_row("Post", [5], 0.2), waived=waived),
            region((1.0, 2.0, 0.0)), region((5.0, 2.0, 0.0), "error")]
    merges = []
    real = held.merge_findings
    monkeypatch.setattr(held, "merge_findings", lambda e: merges.append(1) or real(e))
    assert finding_counts(rows) == {"error": 1, "warning": 1, "info": 0, "waived": 1}
    assert len(merges) == 1
    assert count_findings(rows) == {"error": 1, "warning": 1, "info": 0}


def test_an_islands_cause_is_exported_as_the_run_writes_it_and_validates():
    """The panel's island row keeps its cause (addon row ``cause``, JSON): Export Report
    writes it as levelcheck's report.json does; a row without one has none."""
    cause = {"kind": "riser", "value": 0.41, "limit": 0.35, "unit": "m",
             "point": [1.0, 2.0, 0.41], "text": "riser 0.41 m > step height 0.35 m at (1.00, "
             "2.00, 0.41)"}
    island = dict(region((1.0, 2.0, 0.0)), check="islands", got="island", value=None,
                  name="island at (1.00, 2.00, 0.00)", cause=cause,
                  message="island: 4.0 m² of standable floor no spawn reaches; " + cause["text"])
    level = held_level([island, region((5.0, 0.0, 0.0))], level="arena", file="arena.blend",
                       objects=("Floor",), settings=ControllerSettings().to_dict(),
                       triangles=12, checks=("reachability", "headroom"), min_depth=1e-4)
    doc = held_document([level])
    jsonschema.validate(doc, SCHEMA)
    first, second = level["findings"]
    assert first["cause"] == cause and "cause" not in second
