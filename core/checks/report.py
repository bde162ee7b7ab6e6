"""The level report: every check of a level run on ``core`` and assembled as JSON-ready data.

One function for the extension's "export report" and the pipeline CLI, so both write the same
document (its JSON Schema ships as ``schema/report.schema.json``):

- ``run_checks(mesh, settings, capsules, paths, ...) -> LevelResults``: the raw results
  (capsule verdicts, walk reports, audits, frame-rate reports, findings, timings).
- ``level_report(results, ...) -> dict``: one level's report. Every triangle is named by
  ``{"triangle", "object", "face"}`` when a ``geometry`` (the extension's ``LevelGeometry``:
  ``objects``, ``tri_object``, ``tri_orig_face``) is given; plain core use gives triangle
  indices only (``object``/``face`` null). Infinite values are written as ``null`` with a
  ``<field>_null_reason`` beside them, never as 1.8e308.
- ``check_level(...) = level_report(run_checks(...))``.
- ``combine_levels(levels)``: the document over several levels (``levels`` in input order,
  a summary); ``mark_baseline(document, baseline)`` flags findings not in a previous document.

Units: metres, degrees, seconds; world space, ``settings.up`` is up.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..walk.report import EVENTS
from ..walk.walkthrough import FRAME_RATES, compare_frame_rates, walkthrough_many
from .audits import headroom_audit, ledge_audit, stair_audit, stand_test
from .naming import TriangleNames
from .problems import headroom_problems, ledge_problems, stair_problems, stand_problems
from .sanity import level_warnings
from .verdicts import (
    MIN_REPORTED_DEPTH,
    Finding,
    capsule_finding,
    capsule_verdicts,
    parse_min_depth,
    walk_expectation_holds,
    walk_finding,
    walk_verdict,
)
from .walkability import CEILING, STEEP, WALKABLE, WALL, classify_triangles

REPORT_FORMAT = "capsule_collision.levelcheck"
REPORT_VERSION = 1
CHECKS = ("penetration", "walkability", "stand", "stairs", "headroom", "ledges", "walks",
          "frame_rates")
# Every check but the frame-rate comparison, which walks every path three more times.
DEFAULT_CHECKS = CHECKS[:-1]
WORST_ROWS = 10  # rows listed per audit (the counts cover all)
TRIANGLES_LISTED = 50  # penetrated triangles listed per capsule (the count covers all)
CLASS_NAMES = {WALKABLE: "walkable", STEEP: "steep", WALL: "wall", CEILING: "ceiling"}


def parse_checks(names) -> tuple:
    """Check names (iterable of str, or a comma-separated str; "all" for every check) as a
    tuple in CHECKS order. ValueError naming the unknown check and the allowed ones."""
    if isinstance(names, str):
        names = [n for n in names.split(",") if n.strip()]
    wanted: set[str] = set()
    for name in names:
        word = str(name).strip().lower().replace("-", "_")
        if word == "all":
            wanted.update(CHECKS)
        elif word in CHECKS:
            wanted.add(word)
        else:
            raise ValueError(f"checks: unknown check {name!r}; allowed: all, {', '.join(CHECKS)}")
    if not wanted:
        raise ValueError("checks: name at least one check")
    return tuple(c for c in CHECKS if c in wanted)


def parse_frame_rates(rates) -> tuple:
    """Frame rates in Hz (iterable or comma-separated str), each finite and > 0."""
    if isinstance(rates, str):
        rates = [r for r in rates.split(",") if r.strip()]
    out = []
    for r in rates:
        try:
            hz = float(r)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"frame_rates: {r!r} is not a number of Hz") from exc
        if not math.isfinite(hz) or hz <= 0.0:
            raise ValueError(f"frame_rates: must be > 0 Hz, got {r!r}")
        out.append(int(hz) if hz.is_integer() else hz)
    if not out:
        raise ValueError("frame_rates: name at least one rate")
    return tuple(out)


@dataclass
class LevelResults:
    """Raw results of ``run_checks`` (see there); ``level_report`` turns them into JSON data."""

    mesh: Any
    settings: Any
    checks: tuple
    capsules: list
    paths: list
    min_depth: float
    walkability: np.ndarray | None = None
    capsule_verdicts: list = field(default_factory=list)
    walk_reports: list = field(default_factory=list)
    frame_rate_reports: list = field(default_factory=list)
    stand: Any = None
    stairs: Any = None
    headroom: Any = None
    ledges: Any = None
    warnings: list = field(default_factory=list)
    findings: list = field(default_factory=list)
    timings: dict = field(default_factory=dict)

    @property
    def finding_triangles(self) -> np.ndarray:
        """Triangles to show red: those penetrated by capsules whose expectation failed and
        those that caused the first event of walks whose expectation failed."""
        tris = []
        for check, verdict in zip(self.capsules, self.capsule_verdicts):
            if capsule_finding(check, verdict) is not None:
                tris.append(verdict.triangles)
        for check, rep in zip(self.paths, self.walk_reports):
            if not walk_expectation_holds(check.expect, rep):
                tris.append([e.triangle for e in rep.events if e.triangle >= 0][:1])
        if not tris:
            return np.empty(0, np.int64)
        return np.unique(np.concatenate([np.asarray(t, np.int64) for t in tris]))


def run_checks(mesh, settings, capsules=(), paths=(), *, checks=DEFAULT_CHECKS,
               min_depth=MIN_REPORTED_DEPTH, frame_rates=FRAME_RATES, workers=1,
               progress=None) -> LevelResults:
    """Run ``checks`` (see CHECKS) on ``mesh`` (core.TriangleMesh, metres) with ``settings``
    (ControllerSettings), ``capsules`` (CapsuleCheck) and ``paths`` (PathCheck).

    workers : processes sharing the walks (``walkthrough_many``); progress : callable(str)
    told before each check and path (e.g. printing to stderr), or None."""
    checks = parse_checks(checks)
    min_depth = parse_min_depth(min_depth)
    rates = parse_frame_rates(frame_rates) if "frame_rates" in checks else ()
    say = progress or (lambda _msg: None)
    res = LevelResults(mesh, settings, checks, list(capsules), list(paths), min_depth)

    def timed(name, fn):
        say(f"check {name}")
        t0 = time.perf_counter()
        out = fn()
        res.timings[name] = round(time.perf_counter() - t0, 4)
        return out

    res.warnings = list(timed("sanity", lambda: level_warnings(mesh, settings)))
    if "walkability" in checks:
        res.walkability = timed("walkability", lambda: classify_triangles(
            mesh, settings.max_slope_deg, up=settings.up))
    if "penetration" in checks:
        res.capsule_verdicts = timed("penetration", lambda: capsule_verdicts(
            mesh, [c.capsule for c in res.capsules], min_depth))
        for check, verdict in zip(res.capsules, res.capsule_verdicts):
            res.findings.append(capsule_finding(check, verdict))
    if "walks" in checks and res.paths:
        res.walk_reports = timed(f"walks ({len(res.paths)} paths in lock-step)",
                                 lambda: walkthrough_many(mesh, [p.points for p in res.paths],
                                                          settings, workers=workers))
        res.timings["walks"] = res.timings.pop(f"walks ({len(res.paths)} paths in lock-step)")
        for check, rep in zip(res.paths, res.walk_reports):
            say(f"walk {check.name}: {walk_verdict(rep)}")
            res.findings.append(walk_finding(check, rep))
    if rates and res.paths:
        def compare_all():
            out = []
            for p in res.paths:
                say(f"frame rates {p.name}")
                out.append(compare_frame_rates(mesh, p.points, settings, rates=rates))
            return out
        res.frame_rate_reports = timed("frame_rates", compare_all)
        for p, fr in zip(res.paths, res.frame_rate_reports):
            res.findings.append(_frame_rate_finding(p, fr))
    if "stand" in checks:
        res.stand = timed("stand", lambda: stand_test(mesh, settings))
    if "stairs" in checks:
        res.stairs = timed("stairs", lambda: stair_audit(mesh, settings))
    if "headroom" in checks:
        res.headroom = timed("headroom", lambda: headroom_audit(mesh, settings))
    if "ledges" in checks:
        res.ledges = timed("ledges", lambda: ledge_audit(mesh, settings))
    res.findings = [f for f in res.findings if f is not None]
    return res


def _frame_rate_finding(path, fr) -> Finding | None:
    if fr.consistent:
        return None
    rates = "/".join(f"{hz:g}" for hz in fr.rates)
    parts = []
    for d in fr.differences:
        kind = d.get("kind") or d["what"]
        part = (f"{kind} at " + "/".join(f"{hz:g}" for hz in d["present_at"]) + " Hz only"
                if d["absent_at"] else f"{kind} moves")
        if part not in parts:  # reached_goal is both a verdict and an event kind
            parts.append(part)
    what = "; ".join(parts)
    first = next(iter(fr.differences[0].get("positions", {}).values()), None)
    return Finding("frame_rate", path.name, f"same verdict at {rates} Hz", what,
                   None if first is None else tuple(float(x) for x in first),
                   f"path {path.name}: the verdict depends on the frame rate ({what}); "
                   f"check the geometry near the event (a sliver, a seam or a borderline step)")


def _pos(p) -> list:
    return [round(float(x), 4) for x in p]


def _value(row: dict, key: str, value, reason: str) -> dict:
    """row[key] = value (rounded) when finite, else None and row[key + '_null_reason']."""
    v = None if value is None else float(value)
    if v is not None and math.isfinite(v):
        row[key] = round(v, 6)
    else:
        row[key] = None
        row[key + "_null_reason"] = reason
    return row


# ----------------------------------------------------------------------------- sections
def _walkability_section(mesh, codes) -> dict:
    out = {}
    for code, name in CLASS_NAMES.items():
        mask = codes == code
        out[name] = {"faces": int(mask.sum()), "area_m2": round(float(mesh.areas[mask].sum()), 4)}
    return out


def _capsule_rows(res: LevelResults, names: TriangleNames) -> list:
    rows = []
    for check, verdict in zip(res.capsules, res.capsule_verdicts):
        cap = check.capsule
        height = float(np.linalg.norm(cap.b - cap.a)) + 2.0 * cap.radius
        listed = [dict(names.name(t), position=_pos(p), depth_m=round(float(d), 6))
                  for t, p, d in zip(verdict.triangles[:TRIANGLES_LISTED],
                                     verdict.points[:TRIANGLES_LISTED],
                                     verdict.depths[:TRIANGLES_LISTED])]
        finding = capsule_finding(check, verdict)
        rows.append({
            "name": check.name, "source": check.source, "foot": _pos(check.foot),
            "radius_m": round(float(cap.radius), 6), "height_m": round(height, 6),
            "expected": check.expect, "verdict": verdict.word, "ok": finding is None,
            "penetrating_count": int(verdict.triangles.size),
            "deepest_m": round(verdict.deepest, 6), "push_out_m": _pos(verdict.push_out),
            "triangles": listed})
    return rows


def _event_row(event, names: TriangleNames) -> dict:
    row = {"kind": event.kind, "time_s": round(float(event.time), 4),
           "position": _pos(event.position), "unit": EVENTS[event.kind].unit}
    if event.value is None and event.kind in ("blocked",):
        row["value"] = None
        row["value_null_reason"] = "blocked by a wall: no value"
    else:
        _value(row, "value", event.value,
               "no surface within the probe range" if event.value is not None
               else "no value for this event")
    row.update(names.name(event.triangle))
    return row


def _walk_rows(res: LevelResults, names: TriangleNames) -> list:
    rows = []
    for check, rep in zip(res.paths, res.walk_reports):
        finding = walk_finding(check, rep)
        rows.append({
            "name": check.name, "source": check.source, "expected": check.expect,
            "verdict": walk_verdict(rep), "ok": finding is None,
            "reached_goal": bool(rep.reached_goal), "frames": int(len(rep.trace)),
            "duration_s": round(float(rep.duration), 4),
            "start": _pos(check.points[0]), "goal": _pos(check.points[-1]),
            "end": _pos(rep.trace[-1]),
            "events": [_event_row(e, names) for e in rep.events]})
    return rows


def _frame_rate_rows(res: LevelResults) -> list:
    rows = []
    for p, fr in zip(res.paths, res.frame_rate_reports):
        diffs = []
        for d in fr.differences:
            diffs.append({"what": d["what"], "kind": d.get("kind"),
                          "present_at": list(d["present_at"]), "absent_at": list(d["absent_at"]),
                          "positions": {k: _pos(v) for k, v in d.get("positions", {}).items()}})
        rows.append({"name": p.name, "rates": list(fr.rates), "consistent": bool(fr.consistent),
                     "verdicts": {str(k): v for k, v in fr.verdicts.items()},
                     "differences": diffs})
    return rows


def _audit_rows(names, faces, values, positions, order, key, reason) -> list:
    return [_value(dict(names.name(faces[k]), position=_pos(positions[k])), key, values[k],
                   reason) for k in order[:WORST_ROWS]]


def _audits_section(res: LevelResults, names: TriangleNames) -> dict:
    out = {}
    if res.stand is not None:
        st = res.stand
        out["cannot_stand"] = {
            "faces": int(stand_problems(st).rows.size), "of_walkable": int(len(st.tested)),
            "deepest": _audit_rows(names, st.faces, st.depth, st.position,
                                   np.argsort(-st.depth, kind="stable"), "depth_m", "")}
    if res.stairs is not None:
        sa = res.stairs  # rows are the riser triangles of stair flights (core.audits.stairs)
        first = np.unique(sa.step, return_index=True)[1]  # one row per riser
        bad = stair_problems(sa).rows  # core.checks.problems: the panel's rule too
        worst = []
        for k in bad[np.argsort(-sa.rise[bad], kind="stable")][:WORST_ROWS]:
            row = dict(names.name(sa.riser[k]), position=_pos(sa.position[k]),
                       rise_m=round(float(sa.rise[k]), 6), too_high=bool(sa.too_high[k]),
                       too_shallow=bool(sa.too_shallow[k]), flight=int(sa.flight[k]),
                       step=int(sa.step[k]))
            worst.append(_value(row, "tread_depth_m", sa.tread_depth[k],
                                "the top riser of its flight: no next riser"))
        out["stairs"] = {
            "flights": int(len(np.unique(sa.flight))),
            "step_risers": int(len(first)),
            "too_high": int(sa.too_high[first].sum()),
            "too_shallow": int(sa.too_shallow[first].sum()),
            "worst": worst}
    if res.headroom is not None:
        h = res.headroom
        out["low_headroom"] = {
            "faces": int(headroom_problems(h).rows.size),
            "lowest": _audit_rows(names, h.faces, h.clearance, h.position,
                                  np.argsort(h.clearance, kind="stable"), "clearance_m", "")}
    if res.ledges is not None:
        lg = res.ledges
        sort_key = np.where(np.isfinite(lg.drop), lg.drop, np.inf)
        rows = _audit_rows(names, lg.faces, lg.drop, lg.position,
                           np.argsort(-sort_key, kind="stable"), "drop_m",
                           "no floor below within the audit's reach")
        for row, k in zip(rows, np.argsort(-sort_key, kind="stable")):
            row.update(length_m=round(float(lg.length[k]), 6), start=_pos(lg.start[k]),
                       end=_pos(lg.end[k]))
        out["ledges"] = {
            "runs": int(ledge_problems(lg).rows.size),
            "faces": int(len(np.unique(lg.edge_faces))),
            "highest": rows}
    return out


def _warning_entry(w):
    if isinstance(w, str):
        return {"message": w}
    for attr in ("to_dict", "_asdict"):
        if hasattr(w, attr):
            d = getattr(w, attr)()
            return {k: (v.tolist() if isinstance(v, np.ndarray) else v) for k, v in d.items()}
    return {"message": str(w)}


def _finding_row(finding: Finding, res: LevelResults, names: TriangleNames) -> dict:
    """The finding as JSON with the faces it is about, named, and named in its message."""
    tris: list = []
    if finding.check == "capsule":
        for check, verdict in zip(res.capsules, res.capsule_verdicts):
            if check.name == finding.name:
                tris = verdict.triangles[:TRIANGLES_LISTED].tolist()
    elif finding.check == "walk":
        for check, rep in zip(res.paths, res.walk_reports):
            if check.name == finding.name:
                tris = [e.triangle for e in rep.events if e.triangle >= 0][:1]
    faces = [names.name(t) for t in tris]
    row = dict(finding.to_dict(), faces=faces, new=None)
    by_object: dict = {}
    for f in faces:
        if f["object"] is not None:
            by_object.setdefault(f["object"], set()).add(f["face"])
    if by_object:
        where = "; ".join(
            obj + (" face" + ("s " if len(fs - {None}) > 1 else " ")
                   + ", ".join(str(x) for x in sorted(fs - {None})) if fs - {None} else "")
            for obj, fs in sorted(by_object.items()))
        row["message"] += f" [{where}]"
    elif faces:
        row["message"] += " [triangles " + ", ".join(str(f["triangle"]) for f in faces) + "]"
    return row


def level_report(res: LevelResults, *, level: str = "level", file: str | None = None,
                 geometry=None, index: int = 0) -> dict:
    """One level's report (JSON-ready; see schema/report.schema.json). ``geometry``: the
    extension's LevelGeometry naming triangles by object and face, or None."""
    names = TriangleNames(geometry)
    mesh = res.mesh
    report = {
        "level": level, "file": file, "index": int(index),
        "triangles": int(mesh.n_triangles),
        "objects": list(geometry.objects) if geometry is not None else [],
        "settings": res.settings.to_dict(), "checks": list(res.checks),
        "min_reported_depth_m": res.min_depth,
        "warnings": [_warning_entry(w) for w in res.warnings],
        "walkability": (_walkability_section(mesh, res.walkability)
                        if res.walkability is not None else None),
        "capsules": _capsule_rows(res, names),
        "walks": _walk_rows(res, names),
        "frame_rates": _frame_rate_rows(res),
        "audits": _audits_section(res, names),
        "findings": [_finding_row(f, res, names) for f in res.findings],
        "timings_s": dict(res.timings),
    }
    report["ok"] = not report["findings"]
    return report


def check_level(mesh, settings, capsules=(), paths=(), *, geometry=None, level="level",
                file=None, **options) -> dict:
    """``level_report(run_checks(mesh, settings, capsules, paths, **options))``."""
    res = run_checks(mesh, settings, capsules, paths, **options)
    return level_report(res, level=level, file=file, geometry=geometry)


# ----------------------------------------------------------------------------- documents
def finding_key(level: dict, finding: dict) -> tuple:
    """Identity of a finding across runs: the level's file (or name) and the finding's check,
    name and verdicts (positions move by float noise, so they are not part of it)."""
    return (level.get("file") or level["level"], finding["check"], finding["name"],
            finding["expected"], finding["got"])


def combine_levels(levels) -> dict:
    """The report document over ``levels`` (level reports), sorted by their ``index``."""
    levels = sorted(levels, key=lambda r: r["index"])
    n = sum(len(r["findings"]) for r in levels)
    return {"format": REPORT_FORMAT, "version": REPORT_VERSION, "levels": levels,
            "baseline": None,
            "summary": {"levels": len(levels), "findings": n, "new_findings": None,
                        "ok": n == 0}}


def mark_baseline(document: dict, baseline: dict, baseline_file: str | None = None) -> dict:
    """Flag each finding of ``document`` ``new`` when ``baseline`` (a previous document) has
    no finding with the same ``finding_key``; ``summary.ok`` then means no new findings."""
    if not isinstance(baseline, dict) or baseline.get("format") != REPORT_FORMAT:
        raise ValueError(f"baseline {baseline_file or ''}: not a {REPORT_FORMAT} report".strip())
    known = {finding_key(lv, f) for lv in baseline.get("levels", []) for f in lv["findings"]}
    new = 0
    for lv in document["levels"]:
        for f in lv["findings"]:
            f["new"] = finding_key(lv, f) not in known
            new += f["new"]
    document["baseline"] = {"file": baseline_file, "known_findings": len(known)}
    document["summary"]["new_findings"] = new
    document["summary"]["ok"] = new == 0
    return document
