"""Findings of the audits, of reachability and of the level itself: the one counting rule.

One finding per problem a designer fixes, the same list for the panel, report.json, JUnit and
report.png (problems from ``problems.py``, severities from ``severity.py``):

- ``worst_first(kind, result)``: an audit's problems (a cramped region, a low-headroom region,
  a stair flight, a ledge run), the worst first (deepest, lowest clearance, highest riser,
  highest drop; no floor below a ledge counts as highest);
- ``climbed_by_jumping(worst, result, settings, reach)``: the stair flights whose risers a
  character that jumps climbs (within ``jump_height``, their tops reached): infos, not
  warnings (got ``climbed_by_jumping``);
- ``problems_reached(problems, reach)``: which of them lie on floor a spawn reaches;
- ``audit_findings(kind, result, settings, reach, name_of)``: one ``Listed`` finding per
  problem, worst first. With a reachability result (the level has spawns), the problems on
  floor no spawn reaches are not listed one by one: one info says how many and how many m^2;
- ``region_findings(result)``: one per island and trap; an island nobody can see (the
  flood's ``visible`` flag when it gives one) is counted in one info;
- ``level_findings(warnings, has_checks, audits_unscoped)``: the level's sanity warnings, a
  level with nothing to check, and audits that ran without spawns to scope them.

Identity across runs (``--baseline``): a finding is named by what it is about, never by face
or vertex indices: a region, flight, run, island or trap by where it is, its position rounded
to ``IDENTITY_GRID`` (``where``), which a baseline matches within one grid step.

Frame and units: world space, metres, square metres.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .problems import AuditProblems, audit_problems
from .reachability import TRAP, triangle_classes
from .verdicts import Finding, format_depth, format_vector

# Metres: the grid a problem's position is rounded to in its identity. Coarser than float
# noise and than the standable map's cell (a re-exported level moves a region's point by
# at most a cell), finer than the gap between two problems a designer tells apart; a
# baseline matches within one step (test_findings::test_identity_survives_reversed_faces).
IDENTITY_GRID = 0.25
OUT_OF_REACH = "out_of_reach"  # the name suffix of the one info per audit scoped out
UNSEEN = "unseen"  # the name suffix of the one info counting islands nobody can see
JUMPED = "climbed_by_jumping"  # got of a stair flight a jumping character climbs (an info)
AUDITS_UNSCOPED = "audits_unscoped"  # level finding: audits ran with no spawn to scope them
NOTHING_TO_CHECK = "nothing_to_check"
EMPTY_I = np.empty(0, np.int64)
_WORDS = {"stand": "cramped", "headroom": "low_headroom", "ledges": "ledge"}
_TITLES = {"stand": "cramped region", "headroom": "low-headroom region",
           "stairs": "stair flight", "ledges": "ledge"}


class WorstFirst(NamedTuple):
    """An audit's problems, worst first: ``problem`` (P,) int64 index of each into
    ``problems`` (``problems.audit_problems``); ``rows`` (P,) int64 its worst row of the
    result; ``faces`` (P,) int64 the triangle naming it (its worst row's); ``value`` (P,)
    float64 metres (depth, clearance, rise or drop; inf: no floor below a ledge);
    ``position`` (P, 3) metres; ``size`` (P,) m^2 or m; ``centre`` (P, 3) where each is,
    whatever the order of the faces (its identity); ``got`` a word per problem ("cramped",
    "low_headroom", "too_high", "too_shallow", "ledge")."""

    problems: AuditProblems
    problem: np.ndarray
    rows: np.ndarray
    faces: np.ndarray
    value: np.ndarray
    position: np.ndarray
    size: np.ndarray
    centre: np.ndarray
    got: tuple

    def triangles(self, k: int) -> np.ndarray:
        """(F,) int64 every triangle of the ``k``-th worst problem (the faces to select)."""
        p = self.problems
        return p.triangles[p.owner == self.problem[k]]


def worst_first(kind: str, result) -> WorstFirst:
    """``problems.audit_problems(kind, result)`` sorted worst first; a tie by place (the
    lowest (z, y, x) centre), never by the order of the faces (issue 27)."""
    p = audit_problems(kind, result)
    centre = np.nan_to_num(np.asarray(p.centre, np.float64)).reshape(-1, 3)
    order = np.lexsort((centre[:, 0], centre[:, 1], centre[:, 2],
                        p.value if p.worse == "min" else -p.value))
    faces = np.asarray(result.riser if kind == "stairs" else result.faces, np.int64)
    rows = p.rows[order]
    if kind == "stairs":
        high = np.asarray(result.too_high, bool)[rows]
        got = tuple("too_high" if h else "too_shallow" for h in high)
    else:
        got = (_WORDS[kind],) * len(rows)
    return WorstFirst(p, order.astype(np.int64), rows, faces[rows], p.value[order],
                      p.position[order], p.size[order], p.centre[order], got)


def _subset(worst: WorstFirst, keep) -> WorstFirst:
    """``worst`` with only its problems ``keep`` (P,) bool (their triangles stay reachable
    through ``problem``)."""
    return WorstFirst(worst.problems, worst.problem[keep], worst.rows[keep], worst.faces[keep],
                      worst.value[keep], worst.position[keep], worst.size[keep],
                      worst.centre[keep], tuple(g for g, k in zip(worst.got, keep) if k))


def identity_point(point) -> tuple:
    """``point`` (3,) metres rounded to IDENTITY_GRID: where a finding is, in its identity."""
    q = np.round(np.asarray(point, np.float64) / IDENTITY_GRID) * IDENTITY_GRID
    return tuple(round(float(x), 4) + 0.0 for x in q)


def _ring(reach) -> np.ndarray:
    """(9, 3) offsets of 1.5 cells around a point (and the point), across ``up``."""
    cell = float(getattr(reach, "cell_size", 0.1))
    up = np.asarray(reach.settings.up, np.float64)
    e1 = np.cross(up, [1.0, 0.0, 0.0] if abs(up[0]) < 0.9 else [0.0, 1.0, 0.0])
    e1 /= np.linalg.norm(e1)
    e2 = np.cross(up, e1)
    return cell * np.asarray([a * e1 + b * e2 for a in (-1.5, 0.0, 1.5)
                              for b in (-1.5, 0.0, 1.5)])


def _near_reachable(reach, points) -> np.ndarray:
    """(K,) bool: floor a spawn reaches (within a step up or down, ``can_reach``) lies within
    1.5 cells of each of ``points`` (K, 3)."""
    ring = _ring(reach)
    probes = (np.asarray(points, np.float64)[:, None, :] + ring[None]).reshape(-1, 3)
    return np.asarray(reach.can_reach(probes), bool).reshape(-1, len(ring)).any(1)


def _regions_reached(worst: WorstFirst, reach, result) -> np.ndarray | None:
    """For cramped-region problems of the reachability's own standable map: (P,) bool, a
    cell of the region lies within 1.5 cells (and a step) of floor a spawn reaches (the
    character walks to its edge); None when the problems are not its regions."""
    smap = getattr(reach, "standable", None)
    region = getattr(result, "region", None)
    area = getattr(result, "region_area", None)
    if (worst.problems.unit != "regions" or smap is None or region is None or area is None
            or len(area) != len(smap.region_area)):
        return None
    spans = np.flatnonzero(smap.region >= 0)
    hit = np.zeros(len(smap.region_area), bool)
    if spans.size:
        np.logical_or.at(hit, smap.region[spans], _near_reachable(reach, smap.foot[spans]))
    return hit[np.asarray(region, np.int64)[worst.rows]]


def problems_reached(worst: WorstFirst, reach, result=None) -> np.ndarray:
    """(P,) bool per problem of ``worst``: it lies on floor a spawn reaches (reachable or a
    trap) or beside it, where the character walks into it. A cramped or low-headroom region
    (``result`` the audit's, on the flood's own standable map): one of its cells lies within
    1.5 cells and a step of reachable floor. Other problems: reachable floor lies within 1.5
    cells of one of their rows' points (a riser: of its top edge or of its foot, the tread
    it is climbed from), or one of their faces carries it (``triangle_classes``)."""
    n = len(worst.rows)
    if not n:
        return np.zeros(0, bool)
    regions = _regions_reached(worst, reach, result)
    if regions is not None:
        return regions
    p = worst.problems
    classes = np.asarray(triangle_classes(reach))
    on = (classes >= 0) & (classes <= TRAP)
    tri = p.triangles
    ok = (tri >= 0) & (tri < on.size)
    hit = np.zeros(p.rows.size, bool)
    np.logical_or.at(hit, p.owner[ok], on[tri[ok]])
    up = np.asarray(reach.settings.up, np.float64)
    stepped = p.below > 0.0
    at = np.concatenate([p.points, p.points[stepped] - p.below[stepped, None] * up])
    owner = np.concatenate([p.owner, p.owner[stepped]])
    np.logical_or.at(hit, owner, _near_reachable(reach, at))
    return hit[worst.problem]


class Listed(NamedTuple):
    """A finding with what the report, the panel and the pictures show of it: ``triangles``
    (F,) int64 its faces (to select), ``value`` metres or None, ``size`` m^2 or m (None),
    ``size_unit`` "m2" / "m" / None, ``where`` its identity position (IDENTITY_GRID) or
    None, ``counted`` how many problems it stands for (1, or the problems an info counts),
    ``cause`` an island's or a trap's first cause as report.json gives it (``cause_row``)
    or None."""

    finding: Finding
    triangles: np.ndarray
    value: float | None = None
    size: float | None = None
    size_unit: str | None = None
    where: tuple | None = None
    counted: int = 1
    cause: dict | None = None


def cause_row(cause) -> dict:
    """report.json's ``cause`` of an island or a trap (a ``reach_explain.Cause``): its kind,
    value and the limit it exceeds (metres; degrees for a slope: ``unit``), where (metres)
    and the words of the message."""
    return {"kind": cause.kind, "value": round(float(cause.value), 4),
            "limit": round(float(cause.limit), 4),
            "unit": "deg" if cause.kind == "slope" else "m",
            "point": [round(float(x), 4) for x in np.asarray(cause.point, float)],
            "text": cause.text}


def _size_words(size, unit) -> str:
    if size is None or not np.isfinite(size):
        return ""
    return f"{size:.2f} m²" if unit == "m2" else f"{size:.2f} m"


def _message(kind, where, value, got, settings) -> str:
    if kind == "stand":
        return (f"{where}: walkable floor too cramped to stand on (the capsule penetrates "
                f"{format_depth(value)} at best); widen the space or make the floor unwalkable")
    if kind == "headroom":
        height = getattr(settings, "height", None)
        than = f" ({height:g} m)" if height is not None else ""
        return (f"{where}: headroom {value:.2f} m, lower than the character{than}; raise the "
                f"ceiling or lower the floor")
    if kind == "stairs" and got == JUMPED:
        step = getattr(settings, "step_height", 0.0)
        jump = getattr(settings, "jump_height", 0.0)
        return (f"{where}: climbed by jumping: riser {value:.2f} m > step height {step:.2f} m "
                f"(within the jump height {jump:.2f} m, and a spawn reaches its top); a "
                f"walking character cannot climb it")
    if kind == "stairs" and got == "too_high":
        step = getattr(settings, "step_height", None)
        than = f" ({step:g} m)" if step is not None else ""
        return (f"{where}: its highest riser {value:.2f} m, above the step height{than}; "
                f"lower the riser or add a step")
    if kind == "stairs":
        return (f"{where}: the tread above a {value:.2f} m riser is shallower than the "
                f"minimum step depth; deepen the tread")
    drop = "no floor below" if not np.isfinite(value) else f"a {value:.2f} m drop"
    return (f"{where}: a ledge over {drop}; add a railing or a way back up if the fall is "
            f"not meant")


def _problem(kind, worst: WorstFirst, k, settings, name_of, jumped=False) -> Listed:
    p = worst.position[k]
    where = identity_point(worst.centre[k])
    got = JUMPED if jumped else worst.got[k]
    name = f"{_TITLES[kind]} at {format_vector(where, 2)}"
    size = float(worst.size[k]) if np.isfinite(worst.size[k]) else None
    big = _size_words(size, worst.problems.size_unit)
    on = f" on {name_of(int(worst.faces[k]))}" if name_of is not None else ""
    text = f"{_TITLES[kind]}{' of ' + big if big and kind != 'stairs' else ''}{on} at " \
           f"{format_vector(p, 2)}"
    value = float(worst.value[k])
    finding = Finding(kind, name, "no problem", got, tuple(float(x) for x in p),
                      _message(kind, text, value, got, settings),
                      **({"severity": "info"} if jumped else {}))
    return Listed(finding, worst.triangles(k), value if np.isfinite(value) else None, size,
                  worst.problems.size_unit, where)


def _out_of_reach(kind, worst: WorstFirst, away) -> Listed:
    """The one info counting the problems of ``kind`` on floor no spawn reaches."""
    n = int(away.size)
    area = float(np.nansum(worst.size[away])) if worst.problems.size_unit == "m2" else None
    how_big = f" ({area:.1f} m²)" if area is not None else ""
    what = _TITLES[kind] + ("" if n == 1 else "s")
    tris = np.unique(np.concatenate([worst.triangles(int(k)) for k in away]))
    finding = Finding(kind, f"{kind}: {OUT_OF_REACH}", "no problem", OUT_OF_REACH, None,
                      f"{kind}: {n} {what}{how_big} on floor no spawn "
                      f"reaches, not listed one by one (the overlay's Out of Reach shows "
                      f"them)", severity="info")
    return Listed(finding, tris, None, area, worst.problems.size_unit if area else None,
                  None, n)


def climbed_by_jumping(worst: WorstFirst, result, settings, reach) -> np.ndarray:
    """(P,) bool per stair flight of ``worst``: a character that jumps climbs it. The
    settings jump (``jump_height`` > 0), every bad riser of the flight is too high (none has
    a tread too shallow: a jump does not deepen it), no higher than ``jump_height``, and
    floor a spawn reaches lies at its top (``_near_reachable`` of its top edge at tread
    height: a step below that is a whole riser lower, the floor in front). All False
    without a jump or a flood (the rule a designer expects; docs/decisions.md)."""
    n = len(worst.rows)
    jump = float(getattr(settings, "jump_height", 0.0) or 0.0)
    if not n or reach is None or jump <= 0.0:
        return np.zeros(n, bool)
    high = np.asarray(result.too_high, bool)
    shallow = np.asarray(result.too_shallow, bool)
    flight = np.asarray(result.flight, np.int64)
    step = np.asarray(result.step, np.int64)
    bad = np.flatnonzero(high | shallow)
    top = np.zeros(int(step.max()) + 1, bool)  # per riser: its top reached by some row
    np.logical_or.at(top, step[bad], _near_reachable(
        reach, np.asarray(result.position, np.float64).reshape(-1, 3)[bad]))
    ok_row = high[bad] & ~shallow[bad] & (np.asarray(result.rise)[bad] <= jump) & top[step[bad]]
    fails = np.zeros(int(flight.max()) + 1, bool)
    np.logical_or.at(fails, flight[bad], ~ok_row)
    return ~fails[flight[worst.rows]]


def low_headroom_regions(headroom) -> np.ndarray:
    """(R,) int64 the cramped regions a ``HeadroomResult`` finds a low ceiling in (empty for
    None or a result without regions)."""
    region = getattr(headroom, "region", None)
    return np.unique(np.asarray(region, np.int64)) if region is not None else EMPTY_I


def audit_findings(kind: str, result, settings=None, reach=None, name_of=None,
                   explained=EMPTY_I) -> list:
    """``Listed`` findings of audit ``kind`` (AUDIT_KINDS) for its ``result``, worst first:
    one per problem. ``reach``: a ``core.reachability`` result (the level has spawns): the
    problems on floor no spawn reaches become one info (``problems_reached``). ``name_of``:
    callable(triangle) -> str naming the worst row's face in the message, or None.
    ``explained``: for the stand test, the cramped regions the headroom audit lists
    (``low_headroom_regions``): a region cramped under a low ceiling is that one problem,
    listed once, by its cause."""
    worst = worst_first(kind, result)
    keep = np.ones(len(worst.rows), bool)
    if kind == "stand" and len(explained) and hasattr(result, "region"):
        keep = ~np.isin(np.asarray(result.region, np.int64)[worst.rows], explained)
        worst = _subset(worst, keep)
        keep = keep[keep]
    if reach is not None:
        keep = problems_reached(worst, reach, result)
    jumped = (climbed_by_jumping(worst, result, settings, reach) if kind == "stairs"
              else np.zeros(len(worst.rows), bool))
    out = [_problem(kind, worst, k, settings, name_of, bool(jumped[k]))
           for k in np.flatnonzero(keep)]
    away = np.flatnonzero(~keep)
    if away.size:
        out.append(_out_of_reach(kind, worst, away))
    return out


def region_findings(result) -> list:
    """``Listed`` findings (kinds "islands", "traps") for the regions of a reachability result,
    largest first, each named by where it is. An island the flood says nobody can see
    (``visible`` False) is counted in one info; a region's first cause (``causes``, when the
    flood gives them) says what stops the way in or out."""
    out = []
    for kind, regions, what in (
            ("islands", getattr(result, "islands", ()), "standable floor no spawn reaches"),
            ("traps", getattr(result, "traps", ()), "floor a spawn reaches but cannot leave")):
        unseen = []
        for region in regions:
            if kind == "islands" and not getattr(region, "visible", True):
                unseen.append(region)
                continue
            point = tuple(float(x) for x in np.asarray(region.point, float))
            where = identity_point(point)
            causes = getattr(region, "causes", ())
            why = f"; {getattr(causes[0], 'text', causes[0])}" if causes else ""
            first = cause_row(causes[0]) if causes and hasattr(causes[0], "kind") else None
            area = float(region.area)
            out.append(Listed(
                Finding(kind, f"{kind[:-1]} at {format_vector(where, 2)}", "reachable",
                        kind[:-1], point, f"{kind[:-1]}: {area:.1f} m² of {what}, e.g. at "
                                          f"{format_vector(point, 2)}{why}"),
                np.asarray(region.faces, np.int64), None, area, "m2", where, cause=first))
        if unseen:
            area = sum(float(r.area) for r in unseen)
            out.append(Listed(
                Finding(kind, f"{kind}: {UNSEEN}", "reachable", UNSEEN, None,
                        f"{len(unseen)} island(s) ({area:.1f} m²) nobody on reachable floor "
                        f"can see (roofs, the outside of a sealed level, wall tops)",
                        severity="info"),
                np.unique(np.concatenate([np.asarray(r.faces, np.int64) for r in unseen])),
                None, area, "m2", None, len(unseen)))
    return out


def level_findings(warnings, has_checks: bool, audits_unscoped: bool = False) -> list:
    """``level`` findings: one per sanity warning (``SanityWarning(code, message)`` or any
    object with those attributes); when ``has_checks`` is false, one saying the level has
    nothing to check (no capsules, paths, spawns or targets: only the audits ran); when
    ``audits_unscoped``, an info that the audits list problems everywhere, reachable or not,
    until a spawn is marked."""
    out = [Finding("level", w.code, "no warning", w.code, None, f"level: {w.message}")
           for w in warnings]
    if not has_checks:
        out.append(Finding(
            "level", NOTHING_TO_CHECK, "capsules, paths or spawns", "none", None,
            "level: nothing to check: no capsules, paths, spawns or targets, so no "
            "expectation can fail (only the audits ran); place capsules and paths with the "
            "extension or list them in the level's sidecar (<level>.levelcheck.json)"))
    if audits_unscoped:
        out.append(Finding(
            "level", AUDITS_UNSCOPED, "spawns", "none", None,
            "level: no spawn, so the audits list every problem, also where no player can "
            "be; mark a spawn (a capsule's Spawn, or \"spawns\" in the sidecar) to scope "
            "them to floor a spawn reaches", severity="info"))
    return out
