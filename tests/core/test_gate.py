"""core/checks/gate.py: waivers matched by the --baseline identity rule (a ``where`` within one
IDENTITY_GRID step, just inside and just outside), strict parsing naming the JSON path, and
the level report with waivers, severity overrides and a stale waiver (issue 27). The CLI's
side is tests/blender/test_levelcheck_waivers.py."""

import numpy as np
import pytest
from capsule_collision.core import Capsule, ControllerSettings, TriangleMesh
from capsule_collision.core.checks.findings import IDENTITY_GRID
from capsule_collision.core.checks.gate import (
    GateError,
    Waiver,
    apply_severity,
    apply_waivers,
    matches,
    parse_min_area,
    parse_severities,
    parse_waivers,
    waiver_hits,
)
from capsule_collision.core.checks.report import combine_levels, level_report, run_checks
from capsule_collision.core.checks.verdicts import CapsuleCheck


def _row(check="islands", name="island at (4.00, 4.00, 1.00)", where=(4.0, 4.0, 1.0),
         got="island"):
    return {"check": check, "name": name, "where": None if where is None else list(where),
            "got": got}


def test_a_waiver_matches_a_where_within_one_grid_step_and_not_beyond():
    w = Waiver("islands", None, (4.0, 4.0, 1.0), "island", "bonus", "ana")
    assert matches(w, _row(where=(4.0 + IDENTITY_GRID, 4.0, 1.0)))  # one step: re-export noise
    assert not matches(w, _row(where=(4.0 + IDENTITY_GRID * 1.01, 4.0, 1.0)))
    assert not matches(w, _row(got="unseen"))  # the cause is part of the identity
    assert not matches(w, _row(check="traps"))
    assert not matches(w, _row(where=None))  # a named finding is not a placed one
    named = Waiver("capsule", "A", None, "penetrating", "prop", "ben")
    assert matches(named, _row("capsule", "A", None, "penetrating"))
    assert not matches(named, _row("capsule", "B", None, "penetrating"))


def test_the_first_waiver_naming_a_finding_marks_it_and_one_naming_none_is_stale():
    """The one waiver rule of the CLI and the panel (``waiver_hits``; the panel's mark_rows
    took the first and called a second waiver of the same finding stale, the CLI took the
    last and did not): the first in the sidecar marks it, a second is not stale, a waiver
    naming nothing is; a row that is no finding (None) is never marked."""
    island = _row()
    cap = _row("capsule", "A", None, "penetrating")
    first = Waiver("islands", None, (4.0, 4.0, 1.0), "island", "bonus", "ana")
    again = Waiver("islands", None, (4.1, 4.0, 1.0), "island", "other words", "ben")
    gone = Waiver("capsule", "Gone", None, "penetrating", "x", "cy")
    named = Waiver("capsule", "A", None, "penetrating", "prop", "dee")
    waivers = (gone, first, again, named)
    assert waiver_hits([island, None, cap], waivers) == ([1, -1, 3], [0])
    assert waiver_hits([], waivers) == ([], [0, 1, 2, 3])
    rows = [dict(island), dict(cap), _row(where=(9.0, 9.0, 1.0))]
    assert apply_waivers(rows, waivers) == [gone]  # the CLI: stale ones become infos
    assert rows[0]["waived"] == {"reason": "bonus", "who": "ana"}
    assert rows[1]["waived"] == {"reason": "prop", "who": "dee"}
    assert "waived" not in rows[2]


@pytest.mark.parametrize("entry, path", [
    ({"check": "capsule", "name": "A", "got": "x", "reason": "r"}, "waivers[0].who"),
    ({"check": "capsule", "name": "A", "got": "x", "who": " ", "reason": "r"}, "waivers[0].who"),
    ({"check": "capsule", "got": "x", "who": "w", "reason": "r"}, "waivers[0]"),
    ({"check": "islands", "where": [1, 2], "got": "x", "who": "w", "reason": "r"},
     "waivers[0].where"),
    ({"check": "islands", "where": [1, 2, float("nan")], "got": "x", "who": "w", "reason": "r"},
     "waivers[0].where"),
])
def test_a_bad_waiver_names_its_json_path(entry, path):
    with pytest.raises(GateError) as err:
        parse_waivers([entry], "f.json")
    assert str(err.value).startswith(f"f.json: {path}:"), err.value


def test_severity_and_min_area_parse_strictly():
    assert parse_severities(["islands=INFO", "ledges=warning"]) == {"islands": "info",
                                                                    "ledges": "warning"}
    assert parse_min_area({"islands": 0, "stand": 0.25}) == {"islands": 0.0, "stand": 0.25}
    for bad in ({"islands": "fatal"}, {"isle": "info"}, ["islands"]):
        with pytest.raises(GateError):
            parse_severities(bad)
    for bad in ({"islands": -0.01}, {"islands": True}, {"ledges": 1.0}, {"stand": "x"}):
        with pytest.raises(GateError):
            parse_min_area(bad)


def test_a_severity_override_leaves_the_counting_infos_infos():
    rows = [dict(_row(), severity="warning"), dict(_row(got="unseen", where=None),
                                                   severity="info"),
            dict(_row(got="below_min_area", where=None), severity="info"),
            dict(_row("ledges", got="ledge"), severity="info")]
    apply_severity(rows, {"islands": "error"})
    assert [r["severity"] for r in rows] == ["error", "info", "info", "info"]


def _floor_and_crate():
    """A floor quad and a closed 4 m crate; capsules A and B inside it, expected clear."""
    v = np.array([[-10, -10, 0], [10, -10, 0], [10, 10, 0], [-10, 10, 0]], float)
    t = [[0, 1, 2], [0, 2, 3]]
    lo, hi = np.array([-2.0, -2.0, 0.0]), np.array([2.0, 2.0, 3.0])
    corners = np.array([[(hi if (k >> a) & 1 else lo)[a] for a in range(3)] for k in range(8)])
    quads = [(0, 2, 3, 1), (4, 5, 7, 6), (0, 1, 5, 4), (2, 6, 7, 3), (0, 4, 6, 2), (1, 3, 7, 5)]
    for a, b, c, d in quads:
        t += [[4 + a, 4 + b, 4 + c], [4 + a, 4 + c, 4 + d]]
    return TriangleMesh(np.vstack([v, corners]), np.array(t))


def test_the_level_report_marks_waived_findings_and_a_stale_waiver_is_an_info():
    caps = [CapsuleCheck(n, Capsule.upright((0.0, y, 0.5), 1.8, 0.35), "clear")
            for n, y in (("A", -1.0), ("B", 1.0))]
    res = run_checks(_floor_and_crate(), ControllerSettings(), caps, checks=["penetration"])
    assert not level_report(res)["ok"]
    res.waivers = (Waiver("capsule", "A", None, "penetrating", "prop", "ana"),
                   Waiver("capsule", "Gone", None, "penetrating", "old", "ben"))
    report = level_report(res)
    rows = {f["name"]: f for f in report["findings"]}
    assert rows["A"]["waived"] == {"reason": "prop", "who": "ana"} and "waived" not in rows["B"]
    assert not report["ok"]  # B still fails
    stale = rows["waiver: capsule Gone (penetrating)"]
    assert (stale["check"], stale["severity"], stale["got"]) == ("level", "info", "waiver_stale")
    res.waivers += (Waiver("capsule", "B", None, "penetrating", "prop", "ana"),)
    doc = combine_levels([level_report(res)])
    assert doc["summary"]["ok"] and doc["summary"]["failing"] == 0
    res.waivers, res.severity = (), {"capsule": "info"}
    report = level_report(res)
    assert report["ok"] and {f["severity"] for f in report["findings"]
                             if f["check"] == "capsule"} == {"info"}
