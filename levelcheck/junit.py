"""junit.xml for CI viewers (Jenkins' JUnit plugin, GitLab's unit test reports, GitHub's JUnit
reporting actions).

One ``testsuite`` per level, named by its key (the path relative to ``--root``: two
``main.blend`` in different folders stay two suites). Test cases: one per capsule
(``capsule: <name>``), per path (``walk: <name>``), per reachability target
(``target: <name>``), per frame-rate comparison (``frame rates: <name>``), per audit that ran
(``audit: stand`` ...), and ``level`` (sanity warnings, nothing to check). ``classname`` is
``levelcheck.<key>`` with the key's dots replaced (Jenkins splits class names on dots into
package and class; GitLab shows the class name as the suite). Every case and suite has a
``time`` (the check's seconds, shared evenly by its cases).

A finding that fails the gate (its severity at or above ``--fail-on``, not waived and, with
a baseline, new) is a ``failure`` of its case, ``type`` its severity, one line per finding.
Findings below the gate are ``system-out`` lines of a passing case (``warning: ...``,
``info: ...``, ``known: ...``, ``waived: ...``), never ``skipped``: all three viewers count a
skipped case as a check that did not run. Pictures are named in the failure's text
(``(picture: finding-0-1.png)``) and are ``[[ATTACHMENT|finding-0-1.png]]`` lines in
``system-out`` (Jenkins' attachments plugin and GitLab show them), names relative to the
output folder.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET

from ..core.checks.problems import AUDIT_KINDS
from ..core.checks.report import gates

AUDIT_TIMING = {"stand": "stand", "stairs": "stairs", "headroom": "headroom", "ledges": "ledges"}


def class_name(key: str) -> str:
    return "levelcheck." + key.replace(".", "_")


REACH_CHECKS = ("islands", "traps", "spawns")  # the findings of the "reachability" case


def _cases(lv) -> list:
    """[(case name, finding kinds and names it holds, seconds)] of one level."""
    t = lv.get("timings_s", {})
    cases = []

    def share(timing, n):
        return float(t.get(timing, 0.0)) / max(n, 1)

    for c in lv["capsules"]:
        cases.append((f"capsule: {c['name']}", {("capsule", c["name"])},
                      share("penetration", len(lv["capsules"]))))
    for w in lv["walks"]:
        cases.append((f"walk: {w['name']}", {("walk", w["name"])},
                      share("walks", len(lv["walks"]))))
    for r in lv["frame_rates"]:
        cases.append((f"frame rates: {r['name']}", {("frame_rate", r["name"])},
                      share("frame_rates", len(lv["frame_rates"]))))
    for g in lv.get("targets", []):
        cases.append((f"target: {g['name']}", {("target", g["name"])},
                      share("reachability", len(lv["targets"]))))
    for kind in AUDIT_KINDS:
        if kind in lv["checks"]:
            cases.append((f"audit: {kind}", kind, float(t.get(AUDIT_TIMING[kind], 0.0))))
    if lv.get("reachability") is not None or any(
            f["check"] in REACH_CHECKS for f in lv["findings"]):
        # the flood's islands, traps and misplaced spawns (warnings: system-out); its time
        # when no target case took it
        cases.append(("reachability", "regions",
                      0.0 if lv.get("targets") else float(t.get("reachability", 0.0))))
    if lv.get("collision_diff") is not None:  # render against collision: one case
        cases.append(("render against collision", "collision_diff",
                      float(t.get("collision_diff", 0.0))))
    cases.append(("level", "level", float(t.get("sanity", 0.0))))
    return cases


def _belongs(finding, holds) -> bool:
    if holds == "regions":
        return finding["check"] in REACH_CHECKS
    if isinstance(holds, str):
        return finding["check"] == holds
    return (finding["check"], finding["name"]) in holds


def _case(suite, classname, name, findings, seconds, fail_on):
    case = ET.SubElement(suite, "testcase", name=name, classname=classname,
                         time=f"{seconds:.3f}")
    failing = [f for f in findings if gates(f, fail_on)]
    quiet = [f for f in findings if f not in failing]
    if failing:
        worst = min(failing, key=lambda f: ("error", "warning", "info").index(f["severity"]))
        more = f" (+{len(failing) - 1} more)" if len(failing) > 1 else ""
        fail = ET.SubElement(case, "failure", type=worst["severity"],
                             message=worst["message"] + more)
        fail.text = "\n".join(f"{f['severity']}: {f['message']}" + (
            f" (picture: {f['picture']})" if f.get("picture") else "") for f in failing)
    lines = [("waived" if f.get("waived") else "known" if f.get("new") is False
              else f["severity"]) + f": {f['message']}"
             for f in quiet]
    lines += [f"[[ATTACHMENT|{f['picture']}]]" for f in findings if f.get("picture")]
    if lines:
        ET.SubElement(case, "system-out").text = "\n".join(lines)
    return bool(failing)


def junit_xml(document) -> bytes:
    """The report ``document`` as JUnit XML (see the module docstring)."""
    fail_on = document["summary"].get("fail_on", "error")
    suites = ET.Element("testsuites", name="levelcheck")
    total_tests = total_failures = 0
    total_time = 0.0
    for lv in document["levels"]:
        key = lv.get("key") or lv.get("file") or lv["level"]
        cases = _cases(lv)
        seconds = sum(float(v) for v in lv.get("timings_s", {}).values())
        suite = ET.SubElement(suites, "testsuite", name=key, tests=str(len(cases)),
                              time=f"{seconds:.3f}")
        failures = sum(
            _case(suite, class_name(key), name,
                  [f for f in lv["findings"] if _belongs(f, holds)], t, fail_on)
            for name, holds, t in cases)
        suite.set("failures", str(failures))
        suite.set("errors", "0")
        suite.set("skipped", "0")
        total_tests += len(cases)
        total_failures += failures
        total_time += seconds
    suites.set("tests", str(total_tests))
    suites.set("failures", str(total_failures))
    suites.set("time", f"{total_time:.3f}")
    return ET.tostring(suites, encoding="utf-8", xml_declaration=True)
