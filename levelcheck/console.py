"""The console: one table per level (capsules and walks with positions, verdicts, the object
and face at fault), the audits' counts, the findings with what to fix, and one verdict line.
"""

from __future__ import annotations

from ..core.checks.report import gates
from ..core.checks.verdicts import format_depth

LISTED_PER_KIND = 10  # findings listed per kind below the gate (all failing ones are listed)


def _table(rows, headers):
    widths = [max(len(str(x)) for x in col) for col in zip(headers, *rows)]
    line = "  ".join(f"{{:<{w}}}" for w in widths)
    out = [line.format(*headers), line.format(*("-" * w for w in widths))]
    out += [line.format(*map(str, r)) for r in rows]
    return "\n".join("  " + s.rstrip() for s in out)


def _xyz(p):
    return "-" if p is None else "(" + ", ".join(f"{x:.2f}" for x in p) + ")"


# Which behaviour the verdicts model (ControllerSettings.model, issue 20), said per level.
MODEL_WORDS = {"exact": "verdicts at the exact limits", "jolt": "verdicts predict Jolt",
               "rapier": "verdicts predict Rapier"}


def model_words(settings: dict) -> str:
    """``"verdicts predict Jolt"`` for a level's settings (report.json's ``settings``)."""
    return MODEL_WORDS.get(settings.get("model", "exact"), f"model {settings.get('model')}")


def summary(document) -> str:
    """The console report: per level a table of capsules and walks, the audits' counts and
    the findings (at most LISTED_PER_KIND per kind below the gate), then the verdict."""
    fail_on = document["summary"]["fail_on"]
    lines = []
    for lv in document["levels"]:
        lines.append(f"{lv['level']}" + (f" ({lv['file']})" if lv["file"] else "")
                     + f": {lv['triangles']} triangles, {len(lv['objects'])} objects, "
                     f"{len(lv['capsules'])} capsules, {len(lv['walks'])} paths; "
                     + model_words(lv["settings"]))
        rows = []
        for c in lv["capsules"]:
            objs = sorted({t["object"] or f"triangle {t['triangle']}" for t in c["triangles"]})
            rows.append(("capsule", c["name"], _xyz(c["foot"]), c["expected"], c["verdict"],
                         "ok" if c["ok"] else "FAIL",
                         (f"{format_depth(c['deepest_m'])} into " + ", ".join(objs))
                         if objs else ""))
        for w in lv["walks"]:
            first = next((e for e in w["events"] if e["kind"] != "reached_goal"), None)
            what = ""
            if first is not None:
                value = "" if first["value"] is None else f" {first['value']:.3g} {first['unit']}"
                where = first["object"] or ("" if first["triangle"] < 0
                                            else f"triangle {first['triangle']}")
                what = f"{first['kind']}{value} at {_xyz(first['position'])}" + (
                    f" on {where}" + (f" face {first['face']}" if first["face"] is not None
                                      else "") if where else "")
            rows.append(("walk", w["name"], _xyz(w["start"]), w["expected"], w["verdict"],
                         "ok" if w["ok"] else "FAIL", what))
        if rows:
            lines.append(_table(rows, ("check", "name", "at", "expected", "got", "ok?",
                                       "detail")))
        parts = audit_counts(lv)
        if parts:
            lines.append("  audits: " + "; ".join(parts))
        reach = lv.get("reachability")
        if reach is not None:
            lost = reach["spawns_on_no_floor"]
            lines.append(
                f"  reachability: from {reach['spawns']} spawn(s), {reach['reachable_m2']:.4g} m^2 "
                f"reachable; {reach['islands']} island(s) ({reach['islands_m2']:.3g} m^2), "
                f"{reach['traps']} trap(s) ({reach['traps_m2']:.3g} m^2)"
                + (f"; {lost} spawn(s) stand on no floor" if lost else "")
                + "".join(f"; {w}" for w in reach.get("what_if", ())))
        elif "reachability" in lv["checks"]:
            lines.append("  reachability: not run, the level has no spawns (mark a capsule "
                         "Spawn, or give \"spawns\" in its sidecar)")
        for r in lv["frame_rates"]:
            if not r["consistent"]:
                lines.append(f"  frame rates: {r['name']} differs between "
                             + "/".join(f"{x:g}" for x in r["rates"]) + " Hz")
        lines.extend(finding_lines(lv, fail_on, listed=LISTED_PER_KIND))
    lines.append(verdict(document))
    return "\n".join(lines)


AUDIT_WORDS = {"stand": "cramped region", "stairs": "stair flight",
               "headroom": "low-headroom region", "ledges": "ledge run"}
OUT_OF_REACH = "out_of_reach"  # core.checks.findings.OUT_OF_REACH: the info of those scoped out


def audit_counts(lv) -> list:
    """Per audit that ran, its findings as the report counts them (one per problem, core's
    rule) and those on floor no spawn reaches: ``"2 stair flights (+3 out of reach)"``."""
    parts = []
    for check, word in AUDIT_WORDS.items():
        if check not in lv["checks"]:
            continue
        mine = [f for f in lv["findings"] if f["check"] == check]
        listed = sum(1 for f in mine if f["got"] != OUT_OF_REACH)
        away = sum(f.get("count", 1) for f in mine if f["got"] == OUT_OF_REACH)
        parts.append(f"{listed} {word}{'' if listed == 1 else 's'}"
                     + (f" (+{away} out of reach)" if away else ""))
    return parts


def _tag(f) -> str:
    if f.get("waived"):
        return f" WAIVED by {f['waived']['who']} ({f['waived']['reason']})"
    return "" if f.get("new") is None else (" NEW" if f["new"] else " (known)")


def finding_lines(lv, fail_on: str, listed: int | None = None, failing_only: bool = False):
    """``  SEVERITY[ NEW| (known)| WAIVED by who (reason)]: message`` per finding, at most
    ``listed`` per kind below the gate (then a count), only the failing ones with
    ``failing_only``."""
    out, counts = [], {}
    for f in lv["findings"]:
        failing = gates(f, fail_on)
        if failing_only and not failing:
            continue
        key = (f["check"], f["severity"])
        counts[key] = counts.get(key, 0) + 1
        if failing or listed is None or counts[key] <= listed:
            out.append(f"  {f['severity'].upper()}{_tag(f)}: {f['message']}")
    if not failing_only and listed is not None:
        for (kind, severity), n in counts.items():
            if n > listed:
                out.append(f"  {severity.upper()}: ... and {n - listed} more {kind} "
                           "finding(s) (report.json)")
    return out


def verdict(document) -> str:
    """The last line: findings by severity, how many are new and waived, and how many
    fail the gate."""
    s = document["summary"]
    by = s["by_severity"]
    n = s["levels"]
    line = (f"{s['findings']} finding(s) in {n} level(s): {by['error']} error(s), "
            f"{by['warning']} warning(s), {by['info']} info(s)")
    if s["new_findings"] is not None:
        line += f"; {s['new_findings']} new since the baseline"
    waived = sum(1 for lv in document["levels"] for f in lv["findings"] if f.get("waived"))
    if waived:
        line += f"; {waived} waived"
    return line + f"; {s['failing']} fail the gate (--fail-on {s['fail_on']})"


def quiet_summary(document) -> str:
    """``--quiet``: each failing finding's line (with its level) and the verdict."""
    fail_on = document["summary"]["fail_on"]
    lines = []
    for lv in document["levels"]:
        lines += [f"{lv['key']}:{line[1:]}" for line in
                  finding_lines(lv, fail_on, failing_only=True)]
    lines.append(verdict(document))
    return "\n".join(lines)
