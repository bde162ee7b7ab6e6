"""Problems: which results of a check a designer must look at, and how bad each one is.

One rule for the extension's result rows and the level report (``report.py``), so the panel
and the CLI never count differently:

- ``capsule_outcome(expect, verdict)``: a capsule placement's severity (``severity.ERROR``
  when its expectation failed, ``WARNING`` when it has none and penetrates) or ``PASSED``;
- ``walk_outcome(expect, report)`` and ``walk_event_outcomes(expect, report)``: the same for a
  walk and for each of its events (the first event of a walk that broke its expectation is
  the error, the others are info);
- ``audit_problems(kind, result)``: the problems of an audit result, one per problem (a face
  where the character cannot stand, a face with low headroom, a RISER of a flight that is too
  high or whose tread is too shallow, a ledge RUN), with every triangle each one covers (the
  faces to select), its value and position. A riser is judged by its first triangle's row,
  as the report lists it.

Frame and units: world space, metres, as the audits.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .severity import PASSED, severity_of
from .verdicts import ANY, REACHED_GOAL, capsule_expectation_holds, walk_expectation_holds

AUDIT_KINDS = ("stand", "stairs", "headroom", "ledges")  # finding kinds of core.checks.severity


def capsule_outcome(expect: str, verdict) -> str:
    """Severity of a capsule placement (a ``CapsuleVerdict``), or PASSED: an expectation that
    failed is a "capsule" finding; with no expectation ("any"), penetrating is a
    "penetration" finding."""
    if expect.strip().lower() != ANY:
        return PASSED if capsule_expectation_holds(expect, verdict) else severity_of("capsule")
    return severity_of("penetration") if verdict.penetrating else PASSED


def walk_outcome(expect: str, report) -> str:
    """Severity of a walk (a ``WalkReport``), or PASSED: an expectation that failed is a
    "walk" finding; with none, not reaching the goal is a "route" finding."""
    if expect.strip().lower() != ANY:
        return PASSED if walk_expectation_holds(expect, report) else severity_of("walk")
    return PASSED if report.reached_goal else severity_of("route")


def walk_event_outcomes(expect: str, report) -> list[str]:
    """One outcome per event of ``report.events``: a walk that failed its expectation has its
    first event (other than reaching the goal: where ``walk_finding`` points) at the walk's
    severity; the expected event of a walk that met its expectation is PASSED; every other
    event is a "walk_event" (info), and reaching the goal is PASSED."""
    outcome = walk_outcome(expect, report)
    word = expect.strip().lower()
    failed = outcome != PASSED and word != ANY
    out, first = [], True
    for event in report.events:
        if event.kind == REACHED_GOAL:
            out.append(PASSED)
            continue
        if failed and first:
            out.append(outcome)
        elif not failed and word == event.kind:
            out.append(PASSED)
        else:
            out.append(severity_of("walk_event"))
        first = False
    return out


class AuditProblems(NamedTuple):
    """The problems of one audit result.

    kind : "stand", "stairs", "headroom" or "ledges" (its finding kind); severity : its
    default severity; rows : (P,) int64 row indices into the result, one per problem, in the
    order the result lists them; triangles : (K,) int64 every triangle the problems cover;
    owner : (K,) int64 the problem (index into ``rows``) each triangle belongs to; value : (P,)
    float64 metres (cannot stand: depth, stairs: rise, headroom: clearance, ledges: drop, inf
    when no floor is below); position : (P, 3) float64 where to look; worse : "max" or "min",
    which way a value is worse; unit : what one problem is ("faces", "risers", "runs").
    """

    kind: str
    severity: str
    rows: np.ndarray
    triangles: np.ndarray
    owner: np.ndarray
    value: np.ndarray
    position: np.ndarray
    worse: str
    unit: str


def _per_row(kind, faces, value, position, worse, unit) -> AuditProblems:
    rows = np.arange(len(faces), dtype=np.int64)
    return AuditProblems(kind, severity_of(kind), rows, np.asarray(faces, np.int64), rows,
                         np.asarray(value, np.float64),
                         np.asarray(position, np.float64).reshape(-1, 3), worse, unit)


def stand_problems(result) -> AuditProblems:
    """Every row of a ``StandResult``: a face the character cannot stand on anywhere."""
    return _per_row("stand", result.faces, result.depth, result.position, "max", "faces")


def headroom_problems(result) -> AuditProblems:
    """Every row of a ``HeadroomResult``: a face with less than the character's height free."""
    return _per_row("headroom", result.faces, result.clearance, result.position, "min",
                    "faces")


def stair_problems(result) -> AuditProblems:
    """One problem per riser of a ``StairResult`` whose first row is too high or too shallow
    (rows ordered by riser id), covering every triangle of that riser."""
    first = np.unique(result.step, return_index=True)[1]  # one row per riser, by riser id
    rows = first[(np.asarray(result.too_high) | np.asarray(result.too_shallow))[first]]
    rows = rows.astype(np.int64)
    step = np.asarray(result.step)
    bad_steps = step[rows]  # sorted: ``first`` is in riser-id order
    covered = np.flatnonzero(np.isin(step, bad_steps))
    owner = np.searchsorted(bad_steps, step[covered]).astype(np.int64)
    return AuditProblems("stairs", severity_of("stairs"), rows,
                         np.asarray(result.riser, np.int64)[covered], owner,
                         np.asarray(result.rise, np.float64)[rows],
                         np.asarray(result.position, np.float64).reshape(-1, 3)[rows], "max",
                         "risers")


def ledge_problems(result) -> AuditProblems:
    """Every run of a ``LedgeResult``, covering the faces of all its edges."""
    n = len(result.faces)
    rows = np.arange(n, dtype=np.int64)
    return AuditProblems("ledges", severity_of("ledges"), rows,
                         np.concatenate([np.asarray(result.faces, np.int64),
                                         np.asarray(result.edge_faces, np.int64)]),
                         np.concatenate([rows, np.asarray(result.edge_run, np.int64)]),
                         np.asarray(result.drop, np.float64),
                         np.asarray(result.position, np.float64).reshape(-1, 3), "max", "runs")


_AUDITS = {"stand": stand_problems, "stairs": stair_problems, "headroom": headroom_problems,
           "ledges": ledge_problems}


def audit_problems(kind: str, result) -> AuditProblems:
    """The problems of ``result``, the result of the audit ``kind`` (one of AUDIT_KINDS).
    ValueError for another kind."""
    if kind not in _AUDITS:
        raise ValueError(f"unknown audit {kind!r}; known: {', '.join(AUDIT_KINDS)}")
    return _AUDITS[kind](result)
