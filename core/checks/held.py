"""Findings a caller already holds (the extension's panel rows), counted and written as a
report: the same schema (schema/report.schema.json) and the same counting rule as a run,
without running any check again.

A held finding is a dict of the report's finding fields (``check``, ``severity``, ``name``,
``expected``, ``got``, ``position``, ``message``, ``faces``, ``face_count``, ``value``,
``size``, ``size_unit``, ``where``, ``count``, ``waived`` (``{"reason", "who"}`` or absent))
plus ``stale`` (bool) and ``stale_reason`` (words, "" when current). Several held entries may
stand for ONE finding: a capsule penetrating two objects is one row per object in the panel,
one problem. The rule:

- ``finding_identity(entry, k)``: what a finding is about (check, name, expected, got) for
  one named by a capsule, path or event; a placed problem (with a ``where``) is always one
  entry of its own; entries of one identity are one finding;
- ``merge_findings(entries)``: one finding per identity, in the order they first appear:
  the most severe severity, the faces of all (the first FACES_LISTED; ``face_count`` all),
  the largest value, stale when any part is;
- ``finding_counts(entries)``: ``{"error", "warning", "info", "waived"}`` over the merged
  findings (merged once), what the panel shows and what the held report's summary counts;
  ``count_findings`` the same without ``waived``.

``held_level(entries, ...)`` is one level's report of them (its ``source`` "panel") and
``held_document(levels)`` the document (``run.source`` "panel", ``run.stale_findings``).
Frame and units: world space, metres.
"""

from __future__ import annotations

import math

from .report import combine_levels
from .report_rows import FACES_LISTED
from .severity import SEVERITIES, count_by_severity, parse_severity, rank, severity_of

HELD_SOURCE = "panel"  # ``source`` of a held report's level and run


def finding_identity(entry: dict, k: int = 0) -> tuple:
    """(check, name, expected, got) of a finding named by what it is about (a capsule, a
    path, an event); a placed problem (one with a ``where``: a region, flight, run, island,
    trap or an info counting them) is one held entry, whatever it shares with another (two
    ledge runs can round to one ``where``), so its identity is its place in ``entries``,
    ``k``; but the rows of one render-vs-collision difference (one per side and object)
    are one finding: its ``where`` and exact ``position``."""
    if (entry.get("check") == "collision_diff" and entry.get("where") is not None
            and entry.get("position") is not None):
        # one difference's rows, one per side (render, collision) and object
        return ("placed", entry["check"], entry.get("got", ""), tuple(entry["where"]),
                tuple(round(float(x), 6) for x in entry["position"]))
    if entry.get("where") is not None:
        return ("placed", k)
    return (entry["check"], entry["name"], entry.get("expected", ""), entry.get("got", ""))


def _checked(entry: dict, k: int) -> dict:
    if entry.get("check") is None or entry.get("name") is None:
        raise ValueError(f"entries[{k}]: a held finding needs a check and a name")
    severity_of(entry["check"])  # ValueError for an unknown kind
    parse_severity(entry.get("severity"), f"entries[{k}].severity")
    return entry


def _merged(parts: list) -> dict:
    first = parts[0]
    out = dict(first)
    out["severity"] = min((p["severity"] for p in parts), key=rank)
    faces = [f for p in parts for f in p.get("faces", ())]
    out["faces"] = faces[:FACES_LISTED]
    out["face_count"] = sum(int(p.get("face_count", len(p.get("faces", ())))) for p in parts)
    values = [float(p["value"]) for p in parts if p.get("value") is not None]
    out["value"] = max(values) if values else None
    reasons = [p.get("stale_reason") or "" for p in parts if p.get("stale")]
    out["stale"] = bool(reasons)
    out["stale_reason"] = next((r for r in reasons if r), "")
    return out


def merge_findings(entries) -> list[dict]:
    """One finding per ``finding_identity`` of ``entries`` (held dicts), in first-appearance
    order. ValueError naming the entry for one without check or name, an unknown check or
    severity."""
    groups: dict = {}
    for k, entry in enumerate(entries):
        groups.setdefault(finding_identity(_checked(entry, k), k), []).append(entry)
    return [_merged(parts) for parts in groups.values()]


def finding_counts(entries) -> dict:
    """``{"error": n, "warning": m, "info": k, "waived": w}`` over ``entries`` merged once
    (``merge_findings``): the findings no waiver names by severity, and those a waiver names
    (an entry's ``waived``: ``{"reason", "who"}``) apart, as a run's summary counts
    (``report._summarise``). What the panel shows per redraw."""
    merged = merge_findings(entries)
    counts = count_by_severity(f["severity"] for f in merged if not f.get("waived"))
    counts["waived"] = sum(1 for f in merged if f.get("waived"))
    return counts


def count_findings(entries) -> dict:
    """``{"error": n, "warning": m, "info": k}`` of ``finding_counts`` (no waived count)."""
    counts = finding_counts(entries)
    del counts["waived"]
    return counts


def _finding_row(f: dict) -> dict:
    """A merged held finding as the report's finding (schema ``finding``) plus ``stale``."""
    row = {"check": f["check"], "severity": parse_severity(f["severity"]), "name": f["name"],
           "expected": f.get("expected", ""), "got": f.get("got", ""),
           "position": (None if f.get("position") is None
                        else [round(float(x), 4) for x in f["position"]]),
           "message": f.get("message", ""), "faces": list(f.get("faces", ())), "new": None,
           "face_count": int(f.get("face_count", 0)),
           "count": int(f.get("count", 1)),
           "where": None if f.get("where") is None else [float(x) for x in f["where"]],
           "stale": bool(f.get("stale"))}
    value = f.get("value")
    if value is not None and math.isfinite(float(value)):
        row["value"] = round(float(value), 6)
    else:
        row["value"] = None
        row["value_null_reason"] = "no value for this finding"
    size = f.get("size")
    row["size"] = None if size is None else round(float(size), 4)
    row["size_unit"] = f.get("size_unit") if size is not None else None
    if f.get("cause"):
        row["cause"] = f["cause"]
    if row["stale"]:
        row["stale_reason"] = f.get("stale_reason", "")
    if f.get("waived"):
        row["waived"] = {"reason": f["waived"]["reason"], "who": f["waived"]["who"]}
    return row


def held_level(entries, *, level: str, file: str | None = None, objects=(),
               settings=None, triangles: int = 0, checks=(), min_depth: float = 0.0,
               walkability=None) -> dict:
    """One level's report of the held ``entries`` (schema ``level``, ``source`` "panel"):
    its findings merged and ordered as held, the stale ones flagged ``stale`` with their
    ``stale_reason``; the sections only a run fills (capsules, walks, audits, ...) empty.
    ``settings``: ControllerSettings.to_dict() or None; ``walkability``: the classes' faces
    and m^2 ({"walkable": {"faces", "area_m2"}, ...}) or None."""
    findings = [_finding_row(f) for f in merge_findings(entries)]
    return {
        "level": level, "file": file, "key": file or level, "index": 0,
        "source": HELD_SOURCE, "triangles": int(triangles), "objects": list(objects),
        "settings": dict(settings or {}), "checks": list(checks),
        "min_reported_depth_m": float(min_depth), "warnings": [],
        "walkability": walkability, "capsules": [], "walks": [], "frame_rates": [],
        "targets": [], "reachability": None, "audits": {}, "findings": findings,
        "timings_s": {}, "ok": not any(f["severity"] == SEVERITIES[0] and not f.get("waived")
                                       for f in findings),
        "stale_findings": sum(f["stale"] for f in findings),
    }


def held_document(levels) -> dict:
    """The report document over held ``levels`` (``held_level``): ``combine_levels`` (summary
    counts by core's rule) with ``run`` saying where the findings came from."""
    document = combine_levels(list(levels))
    document["run"] = {"shard": None, "levels": len(document["levels"]),
                       "source": HELD_SOURCE,
                       "stale_findings": sum(lv.get("stale_findings", 0)
                                             for lv in document["levels"])}
    return document
