"""A studio's gate settings of a level: waivers, thresholds and severity overrides.

From the level's sidecar (``core/checks/spec.py`` parses them with the rest of the spec) and
the command line; applied to one level's report by ``report.level_report``:

- ``waivers``: findings a designer marked as intended, each by the finding's identity (the
  one ``--baseline`` matches: ``check``, ``name`` or ``where`` within one IDENTITY_GRID
  step, ``got``) with a ``reason`` and ``who`` (both required). A waived finding carries
  ``waived: {reason, who}``, never fails the gate and is never new against a baseline; a
  waiver whose finding is gone is one info finding (check "level", got "waiver_stale").
- ``min_area``: ``{"islands": m^2, "stand": m^2, "headroom": m^2, "collision_diff": m^2}``:
  islands, cramped and low-headroom regions and render-vs-collision differences smaller are
  not listed one by one; one info per check counts them (got "below_min_area"; per kind of
  difference for ``collision_diff``, which ``diff_report.split_small`` folds).
- ``severity``: ``{check: "error" | "warning" | "info"}`` per finding kind
  (``severity.FINDING_KINDS``), applied before waivers and the gate; the infos counting
  problems that are not listed (``COUNTING``) stay infos.

Strict parsing: ``GateError`` (a ValueError) naming the JSON path (``waivers[1].who``).
Units: metres, square metres.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .findings import IDENTITY_GRID, OUT_OF_REACH, UNSEEN, Listed
from .severity import FINDING_KINDS, parse_severity
from .verdicts import Finding

WAIVER_KEYS = ("check", "name", "where", "got", "reason", "who")
# the checks with an area: islands, cramped and low-headroom regions, render-vs-collision
# differences
MIN_AREA_CHECKS = ("islands", "stand", "headroom", "collision_diff")
FOLDED_PER_KIND = ("collision_diff",)  # folded by their own report (diff_report.split_small)
WAIVER_STALE = "waiver_stale"
BELOW_MIN_AREA = "below_min_area"
COUNTING = (OUT_OF_REACH, UNSEEN, BELOW_MIN_AREA)  # the got of infos that count problems


class GateError(ValueError):
    """Gate settings that cannot be used: the message names the JSON path."""


class Waiver(NamedTuple):
    """A finding marked as intended: its identity (``check``, ``name`` or ``where`` (3,)
    metres, ``got``) and why (``reason``) and by whom (``who``)."""

    check: str
    name: str | None
    where: tuple | None
    got: str
    reason: str
    who: str

    @property
    def label(self) -> str:
        about = self.name if self.where is None else "at (" + ", ".join(
            f"{x:.2f}" for x in self.where) + ")"
        return f"{self.check} {about} ({self.got})"


def _fail(source, path, message):
    raise GateError(f"{source}: {path}: {message}")


def _text(row, key, source, path) -> str:
    value = row.get(key)
    if not isinstance(value, str) or not value.strip():
        _fail(source, f"{path}.{key}", f"expected a non-empty string, got {value!r}")
    return value


def _where(value, source, path) -> tuple:
    ok = isinstance(value, list) and len(value) == 3 and all(
        isinstance(x, (int, float)) and not isinstance(x, bool) and np.isfinite(x)
        for x in value)
    if not ok:
        _fail(source, path, f"expected [x, y, z] in metres, got {value!r}")
    return tuple(float(x) for x in value)


def parse_waivers(value, source: str = "<waivers>", key: str = "waivers") -> tuple:
    """``value`` (a JSON list of waiver objects) as a tuple of ``Waiver``; GateError naming
    the entry's path (``waivers[2].reason``) for an unknown key, a missing ``reason`` or
    ``who``, an unknown check, both or neither of ``name`` and ``where``."""
    if value is None:
        return ()
    if not isinstance(value, list):
        _fail(source, key, f"expected a list of waivers, got {type(value).__name__}")
    out = []
    for i, row in enumerate(value):
        path = f"{key}[{i}]"
        if not isinstance(row, dict):
            _fail(source, path, f"expected a JSON object, got {row!r}")
        for k in row:
            if k not in WAIVER_KEYS:
                _fail(source, f"{path}.{k}",
                      f"unknown key {k!r}; known: {', '.join(WAIVER_KEYS)}")
        check = _text(row, "check", source, path)
        if check not in FINDING_KINDS:
            _fail(source, f"{path}.check",
                  f"unknown check {check!r}; known: {', '.join(FINDING_KINDS)}")
        if ("name" in row) == ("where" in row):
            _fail(source, path, "give the finding's \"name\" or its \"where\" (one of them)")
        name = _text(row, "name", source, path) if "name" in row else None
        where = _where(row["where"], source, f"{path}.where") if "where" in row else None
        out.append(Waiver(check, name, where, _text(row, "got", source, path),
                          _text(row, "reason", source, path), _text(row, "who", source, path)))
    return tuple(out)


def parse_severities(value, source: str = "<severity>", key: str = "severity") -> dict:
    """``{check: severity}`` (a JSON object, or "check=severity" strings) checked: each check
    a finding kind, each severity error/warning/info. GateError naming the entry."""
    items = _pairs(value, source, key)
    out = {}
    for check, word in items:
        if check not in FINDING_KINDS:
            _fail(source, f"{key}.{check}",
                  f"unknown check {check!r}; known: {', '.join(FINDING_KINDS)}")
        try:
            out[check] = parse_severity(word, f"{key}.{check}")
        except ValueError as exc:
            raise GateError(f"{source}: {exc}") from None
    return out


def parse_min_area(value, source: str = "<min_area>", key: str = "min_area") -> dict:
    """``{check: m^2}`` for MIN_AREA_CHECKS (a JSON object, or "check=m2" strings), each a
    finite number >= 0. GateError naming the entry."""
    out = {}
    for check, area in _pairs(value, source, key):
        if check not in MIN_AREA_CHECKS:
            _fail(source, f"{key}.{check}",
                  f"no area threshold for {check!r}; known: {', '.join(MIN_AREA_CHECKS)}")
        try:
            m2 = float(area) if not isinstance(area, bool) else float("nan")
        except (TypeError, ValueError):
            m2 = float("nan")
        if not (np.isfinite(m2) and m2 >= 0.0):
            _fail(source, f"{key}.{check}", f"expected a number of m^2 >= 0, got {area!r}")
        out[check] = m2
    return out


def _pairs(value, source, key) -> list:
    if value is None:
        return []
    if isinstance(value, dict):
        return list(value.items())
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        out = []
        for v in value:
            check, sep, rest = v.partition("=")
            if not sep:
                _fail(source, key, f"expected CHECK=VALUE, got {v!r}")
            out.append((check.strip(), rest.strip()))
        return out
    _fail(source, key, f"expected a JSON object, got {type(value).__name__}")
    return []


def apply_min_area(pairs: list, min_area: dict) -> list:
    """``pairs`` ((Listed, bracket) of ``report._findings``) without the islands, cramped and
    low-headroom regions smaller than ``min_area[check]`` m^2: per check, one info counts
    them (``collision_diff`` is folded per kind by its own report)."""
    if not min_area:
        return pairs
    out: list = []
    small: dict = {}
    for listed, bracket in pairs:
        f = listed.finding
        limit = None if f.check in FOLDED_PER_KIND else min_area.get(f.check)
        if (limit is not None and listed.where is not None and listed.size is not None
                and listed.size_unit == "m2" and listed.size < limit):
            small.setdefault(f.check, []).append(listed)
            continue
        out.append((listed, bracket))
    for check, rows in small.items():
        area = sum(float(r.size) for r in rows)
        tris = np.unique(np.concatenate([np.asarray(r.triangles, np.int64) for r in rows]))
        what = {"islands": "island(s)", "headroom": "low-headroom region(s)"}.get(
            check, "cramped region(s)")
        finding = Finding(check, f"{check}: {BELOW_MIN_AREA}", "no problem", BELOW_MIN_AREA,
                          None, f"{check}: {len(rows)} {what} ({area:.1f} m²) smaller than "
                                f"the minimum area {min_area[check]:g} m², not listed one "
                                f"by one", severity="info")
        out.append((Listed(finding, tris, None, area, "m2", None, len(rows)), False))
    return out


def min_area_listed(listed: list, min_area: dict) -> list:
    """``apply_min_area`` over ``Listed`` findings alone (the panel's rows, no brackets)."""
    return [x for x, _bracket in apply_min_area([(x, False) for x in listed], min_area)]


def apply_severity(rows: list, severity: dict) -> None:
    """Set each finding row's ``severity`` to ``severity[check]`` where given (in place);
    the infos that count problems not listed (out of reach, unseen, below the minimum area)
    stay infos."""
    for row in rows:
        if row["check"] in severity and row["got"] not in COUNTING:
            row["severity"] = severity[row["check"]]


def matches(waiver: Waiver, row: dict) -> bool:
    """Whether ``waiver`` names finding ``row`` (a report finding): the same check and got,
    and the same name, or (a placed problem) a ``where`` within one IDENTITY_GRID step: the
    rule ``report.mark_baseline`` matches a baseline by."""
    if row["check"] != waiver.check or row["got"] != waiver.got:
        return False
    where = row.get("where")
    if waiver.where is None or where is None:
        return waiver.where is None and where is None and row["name"] == waiver.name
    step = IDENTITY_GRID * (1.0 + 1e-6)
    return bool(np.abs(np.asarray(where, float) - np.asarray(waiver.where)).max() <= step)


def waiver_hits(findings, waivers) -> tuple[list, list]:
    """The one waiver rule of the CLI and the panel: (per finding of ``findings`` (report
    finding dicts; None for a row that is no finding) the index in ``waivers`` of the FIRST
    waiver naming it (``matches``), -1 for none; the indexes of the waivers naming no
    finding at all (stale), in order). A waiver naming a finding an earlier one names too is
    not stale: it names one (docs/decisions.md)."""
    hits = []
    named = [False] * len(waivers)
    for row in findings:
        first = -1
        if row is not None:
            for k, w in enumerate(waivers):
                if matches(w, row):
                    named[k] = True
                    first = k if first < 0 else first
        hits.append(first)
    return hits, [k for k, used in enumerate(named) if not used]


def apply_waivers(rows: list, waivers) -> list:
    """Mark each finding row a waiver names ``waived: {reason, who}`` of the first waiver
    naming it (``waiver_hits``, in place); returns the waivers that name no finding
    (stale)."""
    hits, stale = waiver_hits(rows, waivers)
    for row, k in zip(rows, hits, strict=True):
        if k >= 0:
            row["waived"] = {"reason": waivers[k].reason, "who": waivers[k].who}
    return [waivers[k] for k in stale]


def stale_finding(waiver: Waiver) -> Finding:
    """The info finding of a waiver whose finding is gone."""
    return Finding("level", f"waiver: {waiver.label}", "a finding to waive", WAIVER_STALE,
                   None, f"level: waiver no longer matches any finding: {waiver.label}, "
                         f"waived by {waiver.who} ({waiver.reason}); remove it from the "
                         f"level's sidecar", severity="info")
