"""Which audit rows are problems, and the findings they and the level's warnings make.

One rule for the report, the CLI and the panel (the severities are ``severity.py``'s):

- ``stand``: every row of the stand test (a walkable face the character cannot stand on),
  deepest blocking penetration first;
- ``headroom``: every row of the headroom audit (floor under a ceiling lower than the
  character), lowest clearance first;
- ``stairs``: the risers of a flight too high (above ``step_height``) or with a tread too
  shallow (below ``min_step_depth``): one row per riser (its first triangle), highest first;
  ``stair_problem_triangles`` gives every triangle of those risers (to mark in a viewport);
- ``ledges``: every run of edges over an unsafe drop, highest drop first (no floor below
  first).

``audit_findings(kind, result, name_of, limit)`` turns a kind's problems into findings (one
per row, named by the row's object and face, worst first, at most ``limit`` of them and one
more that counts the rest); ``level_findings`` turns the level's sanity warnings, and a level
with nothing to check, into ``level`` findings.

Frame and units: world space, metres.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .verdicts import Finding, format_vector

AUDIT_KINDS = ("stand", "stairs", "headroom", "ledges")
AUDIT_FINDINGS_LISTED = 100  # findings per audit kind and level; one more counts the rest
NOTHING_TO_CHECK = "nothing_to_check"


class Problems(NamedTuple):
    """The problem rows of one audit result, worst first: ``rows`` (K,) int64 indices into
    the result; ``faces`` (K,) int64 triangles; ``value`` (K,) float64 metres (depth,
    clearance, rise or drop; inf: no floor below a ledge); ``position`` (K, 3) metres;
    ``got`` a word per row ("cramped", "low_headroom", "too_high", "too_shallow", "ledge")."""

    rows: np.ndarray
    faces: np.ndarray
    value: np.ndarray
    position: np.ndarray
    got: tuple


def _problems(result_faces, value, position, order, got) -> Problems:
    order = np.asarray(order, np.int64)
    return Problems(order, np.asarray(result_faces, np.int64)[order],
                    np.asarray(value, np.float64)[order],
                    np.asarray(position, np.float64).reshape(-1, 3)[order],
                    tuple(got[k] if isinstance(got, (list, tuple)) else got for k in order))


def stand_problems(result) -> Problems:
    """Every row of a StandResult, deepest first (stable)."""
    return _problems(result.faces, result.depth, result.position,
                     np.argsort(-np.asarray(result.depth), kind="stable"), "cramped")


def headroom_problems(result) -> Problems:
    """Every row of a HeadroomResult, lowest clearance first (stable)."""
    return _problems(result.faces, result.clearance, result.position,
                     np.argsort(np.asarray(result.clearance), kind="stable"), "low_headroom")


def stair_problem_triangles(result) -> np.ndarray:
    """(F,) int64 rows of a StairResult whose riser is too high or whose tread is too
    shallow: every triangle of those risers."""
    return np.flatnonzero(np.asarray(result.too_high, bool) | np.asarray(result.too_shallow, bool))


def stair_problems(result) -> Problems:
    """One row per problem riser of a StairResult (its first triangle), highest rise first."""
    first = np.unique(result.step, return_index=True)[1]
    bad = first[(np.asarray(result.too_high, bool) | np.asarray(result.too_shallow, bool))[first]]
    order = bad[np.argsort(-np.asarray(result.rise)[bad], kind="stable")]
    got = ["too_high" if h else "too_shallow" for h in np.asarray(result.too_high, bool)]
    return _problems(result.riser, result.rise, result.position, order, got)


def ledge_problems(result) -> Problems:
    """Every run of a LedgeResult, highest drop first (no floor below counts as highest)."""
    drop = np.asarray(result.drop, np.float64)
    key = np.where(np.isfinite(drop), drop, np.inf)
    return _problems(result.faces, drop, result.position, np.argsort(-key, kind="stable"),
                     "ledge")


PROBLEMS = {"stand": stand_problems, "stairs": stair_problems, "headroom": headroom_problems,
            "ledges": ledge_problems}


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
                   limit: int = AUDIT_FINDINGS_LISTED) -> tuple[list, list]:
    """Findings of audit ``kind`` (AUDIT_KINDS) for its ``result``, worst first.

    name_of : callable(triangle) -> str naming a triangle ("Stairs 45cm face 6"), the
    finding's name and identity across runs: one finding per name, the worst row (the
    triangles of one face share its name; ledge runs add their position, several runs lie on
    one face). At most ``limit`` findings, then one named "<kind>: more" counting the rest.
    Returns (findings, the problem row of each listed finding)."""
    problems = PROBLEMS[kind](result)
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
        if len(out) == limit:
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
