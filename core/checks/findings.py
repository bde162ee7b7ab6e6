"""Findings of the audits and of the level itself: what the report, the console and JUnit list.

Which audit rows are problems is ``problems.py``'s rule (the panel's too); here they are put
worst first and turned into findings (severities from ``severity.py``):

- ``worst_first(kind, result)``: an audit's problems, the worst first (deepest, lowest
  clearance, highest riser, highest drop; no floor below a ledge counts as highest), each with
  the face that names it and the word for what is wrong;
- ``audit_findings(kind, result, name_of, settings, limit)``: one finding per name (an object
  and face; ledge runs add their position), its worst row, at most ``limit`` of them and one
  more that counts the rest;
- ``level_findings(warnings, has_checks)``: the level's sanity warnings, and a level with
  nothing to check, as ``level`` findings.

Frame and units: world space, metres.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .problems import audit_problems
from .verdicts import Finding, format_vector

AUDIT_FINDINGS_LISTED = 100  # findings per audit kind and level; one more counts the rest
NOTHING_TO_CHECK = "nothing_to_check"
_WORDS = {"stand": "cramped", "headroom": "low_headroom", "ledges": "ledge"}


class WorstFirst(NamedTuple):
    """An audit's problems, worst first: ``rows`` (P,) int64 indices into the result;
    ``faces`` (P,) int64 the triangle naming each (its own row's); ``value`` (P,) float64
    metres (depth, clearance, rise or drop; inf: no floor below a ledge); ``position`` (P, 3)
    metres; ``got`` a word per problem ("cramped", "low_headroom", "too_high", "too_shallow",
    "ledge")."""

    rows: np.ndarray
    faces: np.ndarray
    value: np.ndarray
    position: np.ndarray
    got: tuple


def worst_first(kind: str, result) -> WorstFirst:
    """``problems.audit_problems(kind, result)`` sorted worst first (stable)."""
    p = audit_problems(kind, result)
    order = np.argsort(p.value if p.worse == "min" else -p.value, kind="stable")
    named = np.full(len(p.rows), -1, np.int64)
    named[p.owner[::-1]] = p.triangles[::-1]  # each problem's first triangle: its own row's
    rows = p.rows[order]
    if kind == "stairs":
        high = np.asarray(result.too_high, bool)[rows]
        got = tuple("too_high" if h else "too_shallow" for h in high)
    else:
        got = (_WORDS[kind],) * len(rows)
    return WorstFirst(rows, named[order], p.value[order], p.position[order], got)


def _message(kind, where, value, got, settings) -> str:
    if kind == "stand":
        return (f"{where}: walkable floor too cramped to stand on (the capsule penetrates "
                f"{value:.3f} m at best); widen the space or make the floor unwalkable")
    if kind == "headroom":
        height = getattr(settings, "height", None)
        than = f" ({height:g} m)" if height is not None else ""
        return (f"{where}: headroom {value:.2f} m, lower than the character{than}; raise the "
                f"ceiling or lower the floor")
    if kind == "stairs" and got == "too_high":
        step = getattr(settings, "step_height", None)
        than = f" ({step:g} m)" if step is not None else ""
        return (f"{where}: a {value:.2f} m riser, above the step height{than}; lower the "
                f"riser or add a step")
    if kind == "stairs":
        return (f"{where}: the tread above a {value:.2f} m riser is shallower than the "
                f"minimum step depth; deepen the tread")
    drop = "no floor below" if not np.isfinite(value) else f"a {value:.2f} m drop"
    return (f"{where}: a ledge over {drop}; add a railing or a way back up if the fall is "
            f"not meant")


def audit_findings(kind: str, result, name_of, settings=None,
                   limit: int | None = AUDIT_FINDINGS_LISTED) -> tuple[list, list]:
    """Findings of audit ``kind`` (AUDIT_KINDS) for its ``result``, worst first.

    name_of : callable(triangle) -> str naming a triangle ("Stairs 45cm face 6"), the
    finding's name and identity across runs: one finding per name, the worst row (the
    triangles of one face share its name; ledge runs add their position, several runs lie on
    one face). At most ``limit`` findings (None: every one, as the report keeps them for the
    baseline), then one named "<kind>: more" counting the rest.
    Returns (findings, the problem row of each listed finding)."""
    problems = worst_first(kind, result)
    out: list[Finding] = []
    rows: list[int] = []
    seen: set[str] = set()
    rest = 0
    for k in range(len(problems.rows)):
        p = problems.position[k]
        name = str(name_of(int(problems.faces[k])))
        if kind == "ledges":
            name += " at " + format_vector(np.round(p, 1), 1)
        if name in seen:
            continue
        seen.add(name)
        if limit is not None and len(out) == limit:
            rest += 1
            continue
        got = problems.got[k]
        where = f"{name} at {format_vector(p, 2)}" if kind != "ledges" else name
        out.append(Finding(kind, name, "no problem", got, tuple(float(x) for x in p),
                           _message(kind, where, float(problems.value[k]), got, settings)))
        rows.append(k)
    if rest:
        out.append(Finding(kind, f"{kind}: more", "no problem", "more problems", None,
                           f"{rest} more {kind} problem(s) in this level beyond the "
                           f"{limit} listed (see the report's audits)"))
    return out, rows


def level_findings(warnings, has_checks: bool) -> list:
    """``level`` findings: one per sanity warning (``SanityWarning(code, message)`` or any
    object with those attributes) and, when ``has_checks`` is false, one saying the level
    has nothing to check (no capsules, paths, spawns or targets: only the audits ran)."""
    out = [Finding("level", w.code, "no warning", w.code, None, f"level: {w.message}")
           for w in warnings]
    if not has_checks:
        out.append(Finding(
            "level", NOTHING_TO_CHECK, "capsules, paths or spawns", "none", None,
            "level: nothing to check: no capsules, paths, spawns or targets, so no "
            "expectation can fail (only the audits ran); place capsules and paths with the "
            "extension or list them in the level's sidecar (<level>.levelcheck.json)"))
    return out
