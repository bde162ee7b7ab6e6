"""Verdicts and expectations: what a capsule placement or a walk-through concluded, and whether
that is what the level designer said it should be.

Shared by the Blender extension (the panel's expectations on capsule and path objects) and the
pipeline CLI (``tools/levelcheck.py``), so both judge a level the same way.

- Expectations are strings. Capsules: ``"any"``, ``"clear"``, ``"penetrating"``. Paths:
  ``"any"``, ``"reached_goal"`` or a walk event kind that must occur (``"step_too_high"`` ...).
  Parsing is case-insensitive (the extension's enums are upper case) and strict: anything else
  is a ``ValueError`` naming the field and the allowed values, never silently ``"clear"``.
- ``capsule_verdicts`` (``capsule_verdict`` for one): which triangles each capsule penetrates
  deeper than ``min_depth`` metres (``MIN_REPORTED_DEPTH`` by default), its deepest contact and
  push-out. The ONE rule for a capsule: the extension's live check, Check Penetration and the
  CLI all call it, so a capsule is never red in the viewport and clear in the report.
- ``walk_verdict``: one word for a ``WalkReport``: ``"reached_goal"``, else its first event
  kind, else ``"ended"`` (the time limit passed with neither).
- ``capsule_finding`` / ``walk_finding``: a ``Finding`` when an expectation did not hold.

Frame and units: world space, metres; ``up`` as in ``ControllerSettings``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np

from ..constants import EXACT_TIE_REL, MIN_REPORTED_DEPTH
from ..geometry.shapes import Capsule
from ..mesh.solids import enclosing_solids
from ..walk.walkthrough import EVENT_KINDS
from .push_out import PushOut, axis_points, push_out
from .severity import parse_severity, severity_of

ANY = "any"
CLEAR = "clear"
PENETRATING = "penetrating"
REACHED_GOAL = "reached_goal"
ENDED = "ended"  # walk verdict: the time limit passed without reaching the goal or any event
# Walk event kinds of core plus the fall out of the level the extension's enum lists.
WALK_EVENT_KINDS = tuple(k for k in EVENT_KINDS if k != REACHED_GOAL) + tuple(
    k for k in ("fell_out_of_level",) if k not in EVENT_KINDS)

CAPSULE_EXPECTATIONS = (ANY, CLEAR, PENETRATING)
WALK_EXPECTATIONS = (ANY, REACHED_GOAL) + WALK_EVENT_KINDS


def _parse(value, field: str, allowed: tuple) -> str:
    if value is None:
        return ANY
    if not isinstance(value, str):
        raise ValueError(f"{field}: expected one of {', '.join(allowed)}; got {value!r}")
    word = value.strip().lower()
    if word not in allowed:
        raise ValueError(f"{field}: unknown expected verdict {value!r}; "
                         f"allowed: {', '.join(allowed)}")
    return word


def parse_capsule_expectation(value, field: str = "expect") -> str:
    """``value`` (str or None) as one of CAPSULE_EXPECTATIONS; None means ``"any"``.

    Raises ValueError naming ``field`` and the allowed values for anything else (a typo such
    as ``"penetrated"`` must never read as ``"clear"``)."""
    return _parse(value, field, CAPSULE_EXPECTATIONS)


def parse_walk_expectation(value, field: str = "expect") -> str:
    """``value`` (str or None) as one of WALK_EXPECTATIONS; None means ``"any"``."""
    return _parse(value, field, WALK_EXPECTATIONS)


def parse_min_depth(value, field: str = "min_depth") -> float:
    """A minimum reported depth in metres: finite and >= 0, else ValueError naming ``field``."""
    try:
        depth = float(value)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{field}: expected a depth in metres, got {value!r}") from exc
    if not math.isfinite(depth) or depth < 0.0:
        raise ValueError(f"{field}: must be a finite depth >= 0 metres, got {value!r}")
    return depth


@dataclass(frozen=True)
class CapsuleCheck:
    """A capsule placement to check: ``name`` (the object's name or the spec's), ``capsule``
    (world space, metres), ``expect`` (one of CAPSULE_EXPECTATIONS, parsed), ``foot`` (3,)
    the lowest point as placed (for the report), ``source`` ("scene" or "spec"), ``spawn``
    whether the character starts here (reachability floods from its foot; it is still
    checked for penetration: a spawn inside a wall is a bug)."""

    name: str
    capsule: Capsule
    expect: str = ANY
    foot: tuple = (0.0, 0.0, 0.0)
    source: str = "spec"
    spawn: bool = False

    def __post_init__(self):
        object.__setattr__(self, "expect",
                           parse_capsule_expectation(self.expect, f"capsule {self.name!r} expect"))


@dataclass(frozen=True)
class PathCheck:
    """A walk-through to run: ``name``, ``points`` (K, 3) foot waypoints in metres,
    ``expect`` (one of WALK_EXPECTATIONS, parsed), ``source`` ("scene" or "spec")."""

    name: str
    points: np.ndarray
    expect: str = ANY
    source: str = "spec"

    def __post_init__(self):
        pts = np.asarray(self.points, dtype=np.float64)
        if pts.ndim != 2 or pts.shape[1] != 3 or pts.shape[0] < 2:
            raise ValueError(f"path {self.name!r} points: need (K >= 2, 3) coordinates, "
                             f"got shape {pts.shape}")
        if not np.isfinite(pts).all():
            raise ValueError(f"path {self.name!r} points: NaN or infinite coordinate")
        object.__setattr__(self, "points", pts)
        object.__setattr__(self, "expect",
                           parse_walk_expectation(self.expect, f"path {self.name!r} expect"))


@dataclass(frozen=True)
class CapsuleVerdict:
    """Where one capsule stands. triangles (K,) int64 penetrated deeper than the minimum
    reported depth, sorted by depth (deepest first); depths (K,) metres; normals (K, 3) unit
    contact normals; points (K, 3) deepest points on the triangles; penetrating: K > 0;
    deepest: metres (0 when clear); way_out: ``push_out.PushOut``, the shortest move that
    frees the capsule without leaving through another solid (None when clear, or when not
    asked for); push_out (3,) metres: that move (the deepest contact's normal x depth without
    a way out); buried: no way out within the capsule's height, or wholly inside a closed
    solid; solid: when the capsule touches no face but lies wholly inside a closed solid
    (``core.mesh.solids``), the face of that solid it would leave through first (names the
    solid), else -1."""

    triangles: np.ndarray
    depths: np.ndarray
    normals: np.ndarray
    points: np.ndarray
    way_out: PushOut | None = None
    solid: int = -1

    @property
    def penetrating(self) -> bool:
        return bool(self.triangles.size) or self.solid >= 0

    @property
    def deepest(self) -> float:
        """Metres: the deepest contact's depth; inside a solid touching no face, the way out's
        length (inf when none was found or asked for); 0 when clear."""
        if self.depths.size:
            return float(self.depths[0])
        if self.solid >= 0:
            return float(self.way_out.distance) if self.way_out is not None else math.inf
        return 0.0

    @property
    def push_out(self) -> np.ndarray:
        if self.way_out is not None:
            return self.way_out.vector
        return self.normals[0] * self.depths[0] if self.depths.size else np.zeros(3)

    @property
    def buried(self) -> bool:
        return self.solid >= 0 or bool(self.way_out is not None and self.way_out.buried)

    @property
    def word(self) -> str:
        return PENETRATING if self.penetrating else CLEAR


def capsule_verdicts(mesh, capsules, min_depth: float = MIN_REPORTED_DEPTH,
                     way_out: bool = True) -> list:
    """One CapsuleVerdict per ``Capsule`` in ``capsules`` (one batched mesh query), with the
    way out (``push_out``) of each penetrating one when ``way_out`` (its cost: a few batched
    queries per penetrating capsule, ~50 ms at a million triangles; none for clear ones).

    A contact counts when its depth exceeds ``min_depth`` metres (strictly; touching is never
    a contact: docs/decisions.md). When ``min_depth`` is so small that a float touching tie
    could pass it (at most ``EXACT_TIE_REL`` x twice the largest coordinate, e.g. 0), each
    capsule is decided by the mesh's single-capsule query, which settles ties exactly
    (``core.exact``); above that the batched float query gives the same answer."""
    min_depth = parse_min_depth(min_depth)
    capsules = list(capsules)
    if not capsules:
        return []
    a = np.array([c.a for c in capsules], dtype=np.float64)
    b = np.array([c.b for c in capsules], dtype=np.float64)
    r = np.array([c.radius for c in capsules], dtype=np.float64)
    magnitude = max(float(np.abs(np.asarray(mesh.aabb)).max()), float(np.abs(a).max()),
                    float(np.abs(b).max()), float(r.max()))
    if min_depth <= EXACT_TIE_REL * 2.0 * magnitude:
        verdicts = _with_solids(mesh, capsules, [_exact_verdict(mesh, c, min_depth)
                                                 for c in capsules])
        return _with_ways_out(mesh, capsules, verdicts) if way_out else verdicts
    batch = mesh.capsule_contacts_many(a, b, r)
    keep = batch.depth > min_depth
    q = batch.query[keep]
    out = []
    for i in range(len(capsules)):
        sel = np.flatnonzero(keep)[q == i]
        order = sel[np.argsort(-batch.depth[sel], kind="stable")]
        out.append(CapsuleVerdict(batch.triangle[order].astype(np.int64), batch.depth[order],
                                  batch.normal[order], batch.point[order]))
    out = _with_solids(mesh, capsules, out)
    return _with_ways_out(mesh, capsules, out) if way_out else out


def _with_solids(mesh, capsules, verdicts) -> list:
    """``verdicts`` with ``solid`` set for each capsule that touches no face but whose axis
    middle lies inside a closed solid (then all of it does: it crosses no face)."""
    free = [i for i, v in enumerate(verdicts) if not v.triangles.size]
    if not free:
        return verdicts
    middles = np.array([axis_points(capsules[i])[1] for i in free])
    solids = enclosing_solids(mesh, middles)
    out = list(verdicts)
    for i, solid in zip(free, solids):
        if solid >= 0:
            out[i] = replace(out[i], solid=int(solid))
    return out


def _with_ways_out(mesh, capsules, verdicts) -> list:
    return [replace(v, way_out=push_out(mesh, c)) if v.penetrating else v
            for c, v in zip(capsules, verdicts, strict=True)]


def capsule_verdict(mesh, capsule, min_depth: float = MIN_REPORTED_DEPTH,
                    way_out: bool = True) -> CapsuleVerdict:
    """``capsule_verdicts`` of one ``Capsule`` (the live check's form)."""
    return capsule_verdicts(mesh, [capsule], min_depth, way_out)[0]


def _exact_verdict(mesh, capsule, min_depth: float) -> CapsuleVerdict:
    contacts = [c for c in mesh.capsule_contacts(capsule) if c.depth > min_depth]
    if not contacts:
        return CapsuleVerdict(np.empty(0, np.int64), np.empty(0), np.empty((0, 3)),
                              np.empty((0, 3)))
    return CapsuleVerdict(np.array([c.triangle for c in contacts], np.int64),
                          np.array([c.depth for c in contacts]),
                          np.array([c.normal for c in contacts]),
                          np.array([c.point for c in contacts]))


def walk_verdict(report) -> str:
    """``"reached_goal"`` when the walk reached its goal, else its first event kind, else
    ``"ended"``."""
    if report.reached_goal:
        return REACHED_GOAL
    for event in report.events:
        if event.kind != REACHED_GOAL:
            return event.kind
    return ENDED


def capsule_expectation_holds(expect: str, verdict: CapsuleVerdict) -> bool:
    expect = parse_capsule_expectation(expect)
    return expect == ANY or expect == verdict.word


def walk_expectation_holds(expect: str, report) -> bool:
    """``"reached_goal"``: the walk reached its goal; an event kind: that event occurred."""
    expect = parse_walk_expectation(expect)
    if expect == ANY:
        return True
    if expect == REACHED_GOAL:
        return bool(report.reached_goal)
    return any(e.kind == expect for e in report.events)


def format_depth(metres: float, digits: int = 3) -> str:
    """A depth or length for a designer: "3 mm" below 1 cm (never "0.00 m"), from 1 cm up
    metres with ``digits`` decimals ("0.123 m"), "no way out" when infinite."""
    m = float(metres)
    if not math.isfinite(m):
        return "no way out"
    if abs(m) < 0.01:
        mm = abs(m) * 1000.0
        return f"{mm:.1f} mm" if mm < 1.0 else f"{mm:.0f} mm"
    return f"{m:.{digits}f} m"


def format_vector(v, digits: int = 3) -> str:
    """``(x, y, z)`` with ``digits`` decimals and no negative zeros (``-0.000``)."""
    parts = []
    for x in v:
        text = f"{float(x):.{digits}f}"
        parts.append(text[1:] if text.startswith("-") and float(text) == 0.0 else text)
    return "(" + ", ".join(parts) + ")"


@dataclass(frozen=True)
class Finding:
    """An expectation that did not hold.

    check : "capsule", "walk" or "frame_rate" (a finding kind of core.checks.severity);
    name : the capsule or path; expected / got : verdict words; position : (3,) metres where
    to look (or None); message : what happened and what to fix, one line; severity : "error",
    "warning" or "info" (default: the kind's, ``severity.DEFAULT_SEVERITY``)."""

    check: str
    name: str
    expected: str
    got: str
    position: tuple | None
    message: str
    severity: str = ""

    def __post_init__(self):
        object.__setattr__(self, "severity", severity_of(self.check) if not self.severity
                           else parse_severity(self.severity))

    @property
    def key(self) -> tuple:
        """Identity across runs (positions may move by float noise): check, name, verdicts."""
        return (self.check, self.name, self.expected, self.got)

    def to_dict(self) -> dict:
        return {"check": self.check, "severity": self.severity, "name": self.name,
                "expected": self.expected, "got": self.got,
                "position": None if self.position is None else [float(x) for x in self.position],
                "message": self.message}


def capsule_finding(check: CapsuleCheck, verdict: CapsuleVerdict,
                    solid_name: str | None = None) -> Finding | None:
    """A Finding when ``check.expect`` does not hold for ``verdict``, else None.
    ``solid_name``: what to call the solid a capsule touching no face is inside (its object,
    from the caller's triangle names; default: by the face's index)."""
    if capsule_expectation_holds(check.expect, verdict):
        return None
    if verdict.solid >= 0:
        message = inside_message(f"capsule {check.name}", verdict,
                                 solid_name or f"triangle {verdict.solid}")
    elif verdict.buried:
        depth = verdict.way_out.distance if verdict.way_out is not None else math.inf
        how_deep = f"{format_depth(depth)} deep" if math.isfinite(depth) else "with no way out"
        message = (f"capsule {check.name} is buried in solid geometry ({how_deep}, "
                   f"{verdict.triangles.size} triangle(s) penetrated): move it out of the "
                   f"solid or fix the geometry")
    elif verdict.penetrating:
        push = verdict.push_out
        message = (f"capsule {check.name} penetrates {verdict.triangles.size} triangle(s), "
                   f"deepest {format_depth(verdict.deepest)}; move it by {format_vector(push)} m "
                   f"(the shortest way out) or fix the geometry")
    else:
        message = (f"capsule {check.name} is clear but was expected to penetrate; "
                   f"the geometry it tests is missing or moved")
    return Finding("capsule", check.name, check.expect, verdict.word,
                   tuple(float(x) for x in check.foot), message)


def inside_message(what: str, verdict: CapsuleVerdict, solid_name: str) -> str:
    """One line for a capsule touching no face inside the closed solid ``solid_name``: the
    solid and the way out (``verdict.way_out``)."""
    head = (f"{what} is buried inside the closed solid {solid_name} (it touches no face, "
            f"so nothing else reports it)")
    way = verdict.way_out
    if way is not None and np.isfinite(way.distance) and way.distance > 0.0:
        return (f"{head}; move it by {format_vector(way.vector)} m (the shortest way out, "
                f"{way.distance:.3f} m) or remove the solid")
    return f"{head}; no way out found: move it out of the solid or remove the solid"


def walk_finding(check: PathCheck, report) -> Finding | None:
    """A Finding when ``check.expect`` does not hold for the WalkReport, else None. The
    position is where the walk's first event happened (else its last trace point)."""
    if walk_expectation_holds(check.expect, report):
        return None
    got = walk_verdict(report)
    first = next((e for e in report.events if e.kind != REACHED_GOAL), None)
    if first is not None:
        position = tuple(float(x) for x in first.position)
        value = "" if first.value is None or not math.isfinite(first.value) else (
            f" ({first.value:.3g})")
        where = f"{first.kind}{value} at {format_vector(position, 2)} after {first.time:.2f} s"
    else:
        position = tuple(float(x) for x in report.trace[-1])
        where = (f"reached its goal at {format_vector(position, 2)}" if report.reached_goal
                 else f"ended at {format_vector(position, 2)} (time limit)")
    if check.expect == REACHED_GOAL:
        message = f"path {check.name} does not reach its goal: {where}"
    else:
        message = f"path {check.name} was expected to meet {check.expect} but got {got}: {where}"
    hint = WALK_FIXES.get(got) if check.expect == REACHED_GOAL else (
        "the level no longer stops the walk where the path says it should: check the geometry "
        "or the expectation")
    if hint:
        message += f"; {hint}"
    return Finding("walk", check.name, check.expect, got, position, message)


# What a designer can do about the event that stopped a walk expected to reach its goal.
WALK_FIXES = {
    "blocked": "widen the passage or move the obstacle",
    "step_too_high": "lower the riser to the character's step height or add a step",
    "slope_too_steep": "flatten the slope to the character's walkable slope",
    "fell": "close the gap or lower the drop to the character's step height",
    "fell_out_of_level": "add floor under the path",
    "ceiling_too_low": "raise the ceiling to the character's height",
    "stuck": "clear the path around the position (the character stopped making progress)",
    ENDED: "shorten the path or check its points (the walk ran out of time)",
}
