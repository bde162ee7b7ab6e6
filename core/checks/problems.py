"""Problems: which results of a check a designer must look at, and how bad each one is.

One rule for the extension's result rows and the level report (``report.py``), so the panel
and the CLI never count differently:

- ``capsule_outcome(expect, verdict)``: a capsule placement's severity (``severity.ERROR``
  when its expectation failed, ``WARNING`` when it has none and penetrates) or ``PASSED``;
- ``walk_outcome(expect, report)`` and ``walk_event_outcomes(expect, report)``: the same for a
  walk and for each of its events (the first event of a walk that broke its expectation is
  the error, the others are info);
- ``audit_problems(kind, result)``: the problems of an audit result, one per thing a designer
  fixes (a cramped REGION where the character cannot stand, a low-headroom REGION, a stair
  FLIGHT with a riser too high or a tread too shallow, a ledge RUN), with every triangle each
  one covers (the faces to select), its value, position and size. A riser is judged by its
  first triangle's row, as the report lists it.

Frame and units: world space, metres, as the audits.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .severity import PASSED, severity_of
from .verdicts import ANY, REACHED_GOAL, capsule_expectation_holds, walk_expectation_holds

EMPTY = np.empty(0, np.int64)
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
    """The problems of one audit result, one per thing a designer fixes.

    kind : "stand", "stairs", "headroom" or "ledges" (its finding kind); severity : its
    default severity; rows : (P,) int64 the row of the result that gives each problem its
    value and position (its worst row), problems in the order of ``stand_problems`` & co.;
    triangles : (K,) int64 every triangle the problems cover; owner : (K,) int64 the problem
    (index into ``rows``) each triangle belongs to; value : (P,) float64 metres (cannot
    stand: depth, stairs: rise, headroom: clearance, ledges: drop, inf when no floor is
    below); position : (P, 3) float64 where to look; worse : "max" or "min", which way a
    value is worse; unit : what one problem is ("regions", "flights", "runs"); size : (P,)
    float64 how big each is (regions: m^2, flights: the worst rise in m, runs: length in m);
    size_unit : "m2" or "m"; centre : (P, 3) float64 the mean position of each problem's
    rows (risers of a flight, faces of a region): where it is whatever the order of the
    faces (its identity; ``position`` is its worst row's, which ties may pick by order);
    points : (K, 3) float64 a place of each triangle's row (a cramped cell, a riser's top
    edge, a run's point) and below : (K,) metres how far under it the floor the character
    comes from lies (a riser's rise, else 0): where a spawn's floor must be near for the
    problem to be met (``findings.problems_reached``).
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
    size: np.ndarray
    size_unit: str
    centre: np.ndarray
    points: np.ndarray
    below: np.ndarray


def _centres(owner, position, n) -> np.ndarray:
    """(n, 3) mean of ``position`` (K, 3) per group ``owner`` (K,)."""
    if not n:
        return np.empty((0, 3))
    count = np.bincount(owner, minlength=n).astype(np.float64)
    return np.stack([np.bincount(owner, position[:, i], minlength=n) for i in range(3)],
                    1) / np.maximum(count, 1.0)[:, None]


def _groups(labels, value, worse):
    """Group rows by ``labels`` (K,): (the row of each group (G,) in label order with the
    largest ``value`` (``worse`` "max") or the smallest ("min"), owner (K,) the group of each
    row)."""
    labels = np.asarray(labels, np.int64)
    if not labels.size:
        return EMPTY, EMPTY
    _, owner = np.unique(labels, return_inverse=True)
    owner = owner.ravel().astype(np.int64)
    key = np.asarray(value, np.float64)
    key = -key if worse == "max" else key
    order = np.lexsort((np.arange(labels.size), key, owner))  # worst row first per group
    first = order[np.r_[True, owner[order][1:] != owner[order][:-1]]]
    return first.astype(np.int64), owner


def _regions(kind, result, value, worse, region_area) -> AuditProblems:
    """One problem per cramped region of the rows (faces) of ``result``: every face of the
    region, the value and position of its row of least value (stand: the shallowest best
    try, headroom: the lowest clearance), the region's area; ``worse`` orders problems. A
    face too small to hold a cell is a row of the region of its centroid's cell
    (audits/stand.py), never a
    problem of its own. Results without regions (stand-ins) have one problem per row."""
    faces = np.asarray(result.faces, np.int64)
    region = np.asarray(getattr(result, "region", np.arange(faces.size)), np.int64)
    if region.size != faces.size:
        region = np.arange(faces.size)
    rows, owner = _groups(region, value, "min")
    if region_area is None or not rows.size:
        size = np.full(rows.size, np.nan)
    else:
        size = np.asarray(region_area, np.float64)[region[rows]]
    position = np.asarray(result.position, np.float64).reshape(-1, 3)
    return AuditProblems(kind, severity_of(kind), rows, faces, owner,
                         np.asarray(value, np.float64)[rows], position[rows], worse,
                         "regions", size, "m2", _centres(owner, position, rows.size), position,
                         np.zeros(faces.size))


def stand_problems(result) -> AuditProblems:
    """One problem per cramped region of a ``StandResult`` (the faces of the region, its
    shallowest blocking depth, the region's cramped area)."""
    return _regions("stand", result, result.depth, "max",
                    getattr(result, "region_area", None))


def headroom_problems(result) -> AuditProblems:
    """One problem per low-headroom region of a ``HeadroomResult`` (the cramped region its
    cells lie in): the faces, the lowest clearance, the low-headroom area."""
    return _regions("headroom", result, result.clearance, "min",
                    getattr(result, "region_area", None))


def stair_problems(result) -> AuditProblems:
    """One problem per FLIGHT of a ``StairResult`` with a riser too high or whose tread is too
    shallow (a riser judged by its first row, rows ordered by riser id), covering every
    triangle of its bad risers; value and position those of its highest bad riser."""
    first = np.unique(result.step, return_index=True)[1]  # one row per riser, by riser id
    bad = first[(np.asarray(result.too_high) | np.asarray(result.too_shallow))[first]]
    bad = bad.astype(np.int64)
    step = np.asarray(result.step)
    flight = np.asarray(result.flight, np.int64)
    rise = np.asarray(result.rise, np.float64)
    # a flight's highest bad riser (a riser above the step height is too high: so it is
    # the too-high one when there is one)
    worst_of, _ = _groups(flight[bad], rise[bad], "max")
    rows = bad[worst_of]
    position = np.asarray(result.position, np.float64).reshape(-1, 3)
    covered = np.flatnonzero(np.isin(step, step[bad]))
    bad_flights = flight[rows]
    owner = np.searchsorted(bad_flights, flight[covered]).astype(np.int64)
    return AuditProblems("stairs", severity_of("stairs"), rows,
                         np.asarray(result.riser, np.int64)[covered], owner, rise[rows],
                         position[rows], "max", "flights", rise[rows], "m",
                         _centres(owner, position[covered], rows.size), position[covered],
                         rise[covered])


def ledge_problems(result) -> AuditProblems:
    """Every run of a ``LedgeResult``, covering the faces of all its edges (size: its
    length; centre: the middle of its end points)."""
    n = len(result.faces)
    rows = np.arange(n, dtype=np.int64)
    length = np.asarray(getattr(result, "length", np.full(n, np.nan)), np.float64)
    position = np.asarray(result.position, np.float64).reshape(-1, 3)
    # where a run is (its identity): the middle of its end points, never its deepest sample,
    # which along a run of one drop is whichever edge came first (issue 27: oa_koth1
    # re-exported with its faces reversed moved a 16 m run's sample 11 m along it)
    start = np.asarray(getattr(result, "start", position), np.float64).reshape(-1, 3)
    end = np.asarray(getattr(result, "end", position), np.float64).reshape(-1, 3)
    return AuditProblems("ledges", severity_of("ledges"), rows,
                         np.concatenate([np.asarray(result.faces, np.int64),
                                         np.asarray(result.edge_faces, np.int64)]),
                         np.concatenate([rows, np.asarray(result.edge_run, np.int64)]),
                         np.asarray(result.drop, np.float64), position, "max", "runs",
                         length, "m", 0.5 * (start + end),
                         np.concatenate([position, position[np.asarray(result.edge_run,
                                                                       np.int64)]]),
                         np.zeros(n + len(result.edge_faces)))


_AUDITS = {"stand": stand_problems, "stairs": stair_problems, "headroom": headroom_problems,
           "ledges": ledge_problems}


def audit_problems(kind: str, result) -> AuditProblems:
    """The problems of ``result``, the result of the audit ``kind`` (one of AUDIT_KINDS).
    ValueError for another kind."""
    if kind not in _AUDITS:
        raise ValueError(f"unknown audit {kind!r}; known: {', '.join(AUDIT_KINDS)}")
    return _AUDITS[kind](result)
