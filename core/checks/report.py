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

import functools
import math
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..walk.walkthrough import FRAME_RATES, compare_frame_rates, walkthrough_many
from .audits import headroom_audit, ledge_audit, stair_audit, stand_test
from .collision_diff import collision_diff, reach_reusable
from .diff_report import diff_findings, diff_section
from .findings import (
    IDENTITY_GRID,
    Listed,
    audit_findings,
    level_findings,
    low_headroom_regions,
    region_findings,
)
from .gate import apply_min_area, apply_severity, apply_waivers, stale_finding
from .naming import TriangleNames
from .problems import AUDIT_KINDS
from .reach_spawns import spawns_in_walls
from .reachability import reachability
from .report_rows import (
    TRIANGLES_LISTED,
    audits_section,
    capsule_rows,
    finding_row,
    frame_rate_rows,
    walk_rows,
    walkability_section,
    warning_entry,
)
from .sanity import level_warnings
from .severity import ERROR, count_by_severity, fails, min_areas, parse_severity
from .spawn_places import spawn_listed, spawn_names
from .targets import (
    reach_summary,
    run_reachability,
    target_findings,
    target_rows,
)
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
from .walkability import classify_triangles

REPORT_FORMAT = "capsule_collision.levelcheck"
REPORT_VERSION = 1
CHECKS = ("penetration", "walkability", "stand", "stairs", "headroom", "ledges", "walks",
          "reachability", "collision_diff", "frame_rates")
# Every check but the frame-rate comparison, which walks every path three more times.
# ("reachability" runs only on levels with spawns or targets; "collision_diff" only on levels
# with spawns and a render level beside the collision: engine naming or a sidecar "render".)
DEFAULT_CHECKS = CHECKS[:-1]


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
    spawns: np.ndarray | None = None
    targets: list = field(default_factory=list)
    reach: Any = None  # targets.ReachResults, or None when reachability did not run
    render: Any = None  # the render level (TriangleMesh) against the collision, or None
    render_geometry: Any = None  # its LevelGeometry naming render triangles, or None
    render_source: str | None = None  # where the render came from (naming, a sidecar file)
    diff: Any = None  # core.CollisionDiff, or None when collision_diff did not run
    warnings: list = field(default_factory=list)
    findings: list = field(default_factory=list)
    timings: dict = field(default_factory=dict)
    waivers: tuple = ()  # gate.Waiver: findings marked as intended (core/checks/gate.py)
    severity: dict = field(default_factory=dict)  # finding kind -> severity override
    min_area: dict = field(default_factory=dict)  # check -> m^2 listed from (gate.MIN_AREA_CHECKS;
    # over the defaults of severity.min_areas: one footprint of the character)

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

    @property
    def has_checks(self) -> bool:
        """Whether the level says what to expect (capsules, paths, spawns or targets)."""
        return bool(self.capsules or self.paths or self.targets
                    or (self.spawns is not None and len(self.spawns)))


def run_checks(mesh, settings, capsules=(), paths=(), *, checks=DEFAULT_CHECKS,
               min_depth=MIN_REPORTED_DEPTH, frame_rates=FRAME_RATES, workers=1,
               progress=None, spawns=(), targets=(), reach=None,
               likely_up=None, render=None) -> LevelResults:
    """Run ``checks`` (see CHECKS) on ``mesh`` (core.TriangleMesh, metres) with ``settings``
    (ControllerSettings), ``capsules`` (CapsuleCheck) and ``paths`` (PathCheck).

    workers : processes sharing the walks (``walkthrough_many``) and the floods' arcs
    (``core.reachability``, ``core.collision_diff``); progress : callable(str)
    told before each check and path (e.g. printing to stderr), or None. spawns : (K, 3)
    foot points and targets : TargetCheck, judged by ``reach`` (default
    ``core.reachability``; see core/checks/targets.py) when "reachability" is among the checks
    and either is given.
    likely_up : where the caller expects a rotated level's floors to face
    (``sanity.level_warnings``), or None. render : the level as drawn (TriangleMesh, same
    frame) judged against ``mesh`` as collided (``core.collision_diff``) when
    "collision_diff" is among the checks and there are spawns, or None."""
    checks = parse_checks(checks)
    min_depth = parse_min_depth(min_depth)
    rates = parse_frame_rates(frame_rates) if "frame_rates" in checks else ()
    say = progress or (lambda _msg: None)
    res = LevelResults(mesh, settings, checks, list(capsules), list(paths), min_depth)
    res.spawns = np.asarray(spawns, np.float64).reshape(-1, 3)
    res.targets = list(targets)

    def timed(name, fn):
        say(f"check {name}")
        t0 = time.perf_counter()
        out = fn()
        res.timings[name] = round(time.perf_counter() - t0, 4)
        return out

    res.warnings = list(timed("sanity", lambda: level_warnings(
        mesh, settings, likely_up=likely_up)))
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
    _audits(res, timed)
    if "reachability" in checks and (len(res.spawns) or res.targets):
        res.reach = timed("reachability", lambda: run_reachability(
            reach or functools.partial(reachability, workers=workers), mesh, res.spawns,
            res.targets, settings))
        res.findings.extend(target_findings(res.targets, res.reach.reached))
    res.render = render
    _collision_diff(res, timed, workers)
    res.findings = [f for f in res.findings if f is not None]
    return res


AUDITS = {"stand": stand_test, "stairs": stair_audit, "headroom": headroom_audit,
          "ledges": ledge_audit}


def _audits(res: LevelResults, timed):
    """The audits among ``res.checks``, each timed, into ``res`` (their rows become findings
    in ``level_report``, named)."""
    for name, audit in AUDITS.items():
        if name in res.checks:
            setattr(res, name, timed(name, lambda audit=audit: audit(res.mesh, res.settings)))


def _collision_diff(res: LevelResults, timed, workers: int = 1):
    """Render against collision (``core.collision_diff``) into ``res.diff`` when it is among
    the checks and the level has a render and spawns; the collision's flood of the
    reachability check is reused when it fits (``reach_reusable``: same map and settings),
    so the collision is flooded once."""
    if ("collision_diff" not in res.checks or res.render is None or res.spawns is None
            or not len(res.spawns)):
        return
    flood = None if res.reach is None else res.reach.result
    if not reach_reusable(flood, res.mesh, res.settings):
        flood = None
    res.diff = timed("collision_diff", lambda: collision_diff(
        res.render, res.mesh, res.spawns, res.settings, collision_reach=flood,
        workers=workers))


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


def _findings(res: LevelResults, names: TriangleNames) -> list:
    """Every finding of the level as (Listed, bracket): the expectations that did not hold
    (capsules, walks, frame rates, targets), the audits' problems (scoped by reachability
    when the level has spawns), where the character cannot go (islands, traps) and the
    level's own warnings; islands, cramped regions and render-vs-collision differences below
    their minimum area counted in one info per check (per kind of difference;
    ``severity.min_areas``). The one counting rule of the panel,
    report.json, JUnit and report.png (core/checks/findings.py)."""
    out = []
    for finding in res.findings:
        tris: list = []
        value = None
        if finding.check == "capsule":
            for check, verdict in zip(res.capsules, res.capsule_verdicts):
                if check.name == finding.name and verdict.solid >= 0:  # name the solid
                    finding = capsule_finding(check, verdict, names.label(verdict.solid))
                    tris, value = [verdict.solid], verdict.deepest
                elif check.name == finding.name:
                    tris = verdict.triangles[:TRIANGLES_LISTED].tolist()
                    value = verdict.deepest
        elif finding.check == "walk":
            for check, rep in zip(res.paths, res.walk_reports):
                if check.name == finding.name:
                    tris = [e.triangle for e in rep.events if e.triangle >= 0][:1]
                    value = next((e.value for e in rep.events if e.kind != "reached_goal"),
                                 None)
        out.append((Listed(finding, np.asarray(tris, np.int64), value), True))
    reach = res.reach.result if res.reach is not None else None
    ran = False
    explained = low_headroom_regions(res.headroom)
    for kind in AUDIT_KINDS:
        result = getattr(res, kind)
        if result is None:
            continue
        ran = True
        out.extend((listed, False) for listed in audit_findings(
            kind, result, res.settings, reach, names.label, explained))
    if reach is not None:
        feet = np.zeros((0, 3)) if res.spawns is None else res.spawns
        out.extend(spawn_listed(spawn_names(res.capsules, len(feet)), feet, res.reach.buried,
                                spawns_in_walls(res.mesh, feet, res.settings), reach,
                                names.label))
        out.extend((listed, False) for listed in region_findings(reach))
    minimum = min_areas(res.settings, res.min_area)
    if res.diff is not None:
        out.extend(diff_findings(res.diff, names, TriangleNames(res.render_geometry),
                                 minimum.get("collision_diff")))
    unscoped = ran and reach is None
    out.extend((Listed(f, np.empty(0, np.int64)), False)
               for f in level_findings(res.warnings, res.has_checks, unscoped))
    return apply_min_area(out, minimum)


def level_report(res: LevelResults, *, level: str = "level", file: str | None = None,
                 geometry=None, index: int = 0, fail_on: str = ERROR) -> dict:
    """One level's report (JSON-ready; see schema/report.schema.json). ``geometry``: the
    extension's LevelGeometry naming triangles by object and face, or None. ``ok``: no
    finding fails a gate on ``fail_on`` (core.checks.severity.fails)."""
    names = TriangleNames(geometry)
    mesh = res.mesh
    findings = [finding_row(listed, names, bracket) for listed, bracket in _findings(res, names)]
    apply_severity(findings, res.severity)
    findings += [finding_row(Listed(stale_finding(w), np.empty(0, np.int64)), names, False)
                 for w in apply_waivers(findings, res.waivers)]
    report = {
        "level": level, "file": file, "key": file or level, "index": int(index),
        "triangles": int(mesh.n_triangles),
        "objects": list(geometry.objects) if geometry is not None else [],
        "settings": res.settings.to_dict(), "checks": list(res.checks),
        "min_reported_depth_m": res.min_depth,
        "warnings": [warning_entry(w) for w in res.warnings],
        "walkability": (walkability_section(mesh, res.walkability)
                        if res.walkability is not None else None),
        "capsules": capsule_rows(res, names),
        "walks": walk_rows(res, names),
        "frame_rates": frame_rate_rows(res),
        "targets": (target_rows(res.targets, res.reach.reached)
                    if res.reach is not None else []),
        "reachability": reach_summary(
            res.reach, 0 if res.spawns is None else len(res.spawns)),
        "audits": audits_section(res, names),
        "collision_diff": (diff_section(res.diff, res.render.n_triangles, res.render_source)
                           if res.diff is not None else None),
        "findings": findings,
        "timings_s": dict(res.timings),
    }
    report["ok"] = not any(gates(f, fail_on) for f in findings)
    return report


def check_level(mesh, settings, capsules=(), paths=(), *, geometry=None, level="level",
                file=None, **options) -> dict:
    """``level_report(run_checks(mesh, settings, capsules, paths, **options))``."""
    res = run_checks(mesh, settings, capsules, paths, **options)
    return level_report(res, level=level, file=file, geometry=geometry)


# ----------------------------------------------------------------------------- documents
def finding_key(level: dict, finding: dict) -> tuple:
    """Identity of a finding across runs: the level's ``key`` (the CLI's path relative to
    its ``--root``, else the file or name), the finding's check, what it is about and its
    cause (expected, got). What it is about: a capsule's, path's or target's name; a
    region, flight, run, island or trap by ``where`` it is (its position on IDENTITY_GRID,
    never a face or vertex index: a re-export reorders those). A baseline also matches a
    ``where`` within one grid step (``mark_baseline``)."""
    about = finding["name"] if finding.get("where") is None else "at"
    return (level.get("key") or level.get("file") or level["level"], finding["check"],
            about, finding["expected"], finding["got"])


def _known(baseline: dict):
    """(exact keys, {key: (W, 3) wheres}) of a baseline document's findings."""
    exact: set = set()
    wheres: dict = {}
    for lv in baseline.get("levels", []):
        for f in lv["findings"]:
            key = finding_key(lv, f)
            if f.get("where") is None:
                exact.add(key)
            else:
                wheres.setdefault(key, []).append(f["where"])
    return exact, {k: np.asarray(v, np.float64).reshape(-1, 3) for k, v in wheres.items()}


def _is_known(key, where, exact, wheres) -> bool:
    if where is None:
        return key in exact
    near = wheres.get(key)
    if near is None:
        return False
    step = IDENTITY_GRID * (1.0 + 1e-6)  # one grid step either way: float noise at a rounding
    return bool((np.abs(near - np.asarray(where, np.float64)).max(1) <= step).any())


def gates(finding: dict, fail_on: str) -> bool:
    """Whether a report ``finding`` fails a gate on ``fail_on``: its severity is at or above
    it, it is not waived and, with a baseline, it is new."""
    return (fails(finding["severity"], fail_on) and not finding.get("waived")
            and finding.get("new") is not False)


def _summarise(document: dict, fail_on: str) -> dict:
    """Set each level's and the document's ``ok`` and the summary's counts for ``fail_on``:
    a finding fails the gate when its severity is at or above ``fail_on`` and, with a
    baseline, it is new. ``by_severity`` counts the findings no waiver names, ``waived``
    the others (the panel counts the same way: ``held.count_findings``)."""
    levels = document["levels"]
    findings = [f for lv in levels for f in lv["findings"]]
    failing = 0
    for lv in levels:
        bad = [f for f in lv["findings"] if gates(f, fail_on)]
        lv["ok"] = not bad
        failing += len(bad)
    new = [f for f in findings if f.get("new")]
    summary = document["summary"]
    summary.update(levels=len(levels), findings=len(findings),
                   by_severity=count_by_severity(f["severity"] for f in findings
                                                 if not f.get("waived")),
                   waived=sum(1 for f in findings if f.get("waived")),
                   fail_on=fail_on, failing=failing, ok=failing == 0)
    if document.get("baseline") is not None:
        summary["new_findings"] = len(new)
    return document


def combine_levels(levels, fail_on: str = ERROR) -> dict:
    """The report document over ``levels`` (level reports), sorted by their ``index``;
    ``summary.ok`` when no finding fails a gate on ``fail_on``."""
    fail_on = parse_severity(fail_on, "fail_on")
    levels = sorted(levels, key=lambda r: r["index"])
    document = {"format": REPORT_FORMAT, "version": REPORT_VERSION, "levels": levels,
                "baseline": None, "summary": {"new_findings": None}}
    return _summarise(document, fail_on)


def mark_baseline(document: dict, baseline: dict, baseline_file: str | None = None) -> dict:
    """Flag each finding of ``document`` ``new`` when ``baseline`` (a previous document) has
    no finding of the same ``finding_key`` (a ``where`` within one IDENTITY_GRID step);
    every finding is compared (no finding is left out of a report), and each level lists its
    new findings first. ``summary.ok`` then means no new finding fails the gate (the
    document's ``summary.fail_on``)."""
    if not isinstance(baseline, dict) or baseline.get("format") != REPORT_FORMAT:
        raise ValueError(f"baseline {baseline_file or ''}: not a {REPORT_FORMAT} report".strip())
    exact, wheres = _known(baseline)
    for lv in document["levels"]:
        for f in lv["findings"]:
            f["new"] = not f.get("waived") and not _is_known(
                finding_key(lv, f), f.get("where"), exact, wheres)
        lv["findings"].sort(key=lambda f: not f["new"])  # stable: new first, else in order
    known = len(exact) + sum(len(w) for w in wheres.values())
    document["baseline"] = {"file": baseline_file, "known_findings": known}
    return _summarise(document, document["summary"].get("fail_on", ERROR))
