"""Reachability targets: foot points a spawn must (or must not) reach, and what the report
says about where the character can go.

``run_reachability`` takes the flood as an argument (``reach``: ``core.reachability(mesh,
spawns, settings)`` in the report, a stand-in in tests): any callable returning an object
with ``can_reach(points) -> (P,) bool`` and ``islands`` / ``traps`` (regions with ``faces``,
``area`` and a foot ``point``).

- ``TargetCheck(name, point, expect)``: ``expect`` "reachable" or "unreachable".
- ``run_reachability(reach, mesh, spawns, targets, settings)`` -> ``ReachResults``.
- ``reach_summary``: the report's ``reachability`` block.
- ``target_findings``: findings (severities from ``severity.py``: targets are errors; the
  islands' and traps' findings are ``findings.region_findings``).

Frame and units: world space, metres, square metres.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ..mesh.solids import enclosing_solids
from .spec import REACHABLE, TARGET_EXPECTATIONS
from .verdicts import CLEAR, PENETRATING, Finding, format_vector


class TargetCheck(NamedTuple):
    """A foot point ``point`` (3,) metres that the spawns must reach (``expect``
    "reachable") or must not reach ("unreachable")."""

    name: str
    point: tuple
    expect: str


class ReachResults(NamedTuple):
    """``result``: what ``reach`` returned; ``reached`` (T,) bool per target; ``buried``
    (K,) int64 per spawn: a face of the closed solid the spawn's character would stand inside
    (it floods nothing: left out of the flood), else -1."""

    result: object
    reached: np.ndarray
    buried: np.ndarray = np.zeros(0, np.int64)


def run_reachability(reach, mesh, spawns, targets, settings) -> ReachResults:
    """Flood the level from ``spawns`` (K, 3) foot points with ``reach`` (the function
    ``core.reachability``) and judge ``targets`` (TargetCheck). ValueError when there is no
    spawn to flood from, or a target's expectation is unknown."""
    if not len(spawns):
        raise ValueError("reachability: targets need spawns (capsules marked Spawn in the "
                         "level, or \"spawns\": [[x, y, z], ...] in the level's spec)")
    for t in targets:
        if t.expect not in TARGET_EXPECTATIONS:
            raise ValueError(f"target {t.name!r} expect: unknown expected verdict "
                             f"{t.expect!r}; allowed: {', '.join(TARGET_EXPECTATIONS)}")
    spawns = np.asarray(spawns, np.float64).reshape(-1, 3)
    buried = (buried_spawns(mesh, spawns, settings) if mesh is not None  # None: a stand-in
              else np.full(len(spawns), -1, np.int64))
    result = reach(mesh, spawns[buried < 0], settings)
    points = np.asarray([t.point for t in targets], np.float64).reshape(-1, 3)
    reached = (np.asarray(result.can_reach(points), bool) if len(targets)
               else np.zeros(0, bool))
    return ReachResults(result, reached, buried)


def buried_spawns(mesh, spawns, settings) -> np.ndarray:
    """(K,) int64: for each spawn foot point (K, 3), a face of the closed solid that holds
    the middle of the character standing there (``core.mesh.solids``), else -1."""
    up = np.asarray(getattr(settings, "up", (0.0, 0.0, 1.0)), np.float64)
    half = 0.5 * float(getattr(settings, "height", 1.8))
    return enclosing_solids(mesh, spawns + half * up / np.linalg.norm(up))


def spawn_findings(spawns, buried, name_of, names=None) -> list:
    """A Finding (kind "capsule", an error) per spawn inside a closed solid: it floods
    nothing. ``name_of(triangle)`` names the solid; ``names`` (K,) the spawns (None:
    "spawn 1", ...; ``spawn_places.spawn_names``), named "spawn <name>" (a marked capsule's
    own finding keeps its name)."""
    out = []
    for k in np.flatnonzero(np.asarray(buried) >= 0):
        point = tuple(float(x) for x in spawns[k])
        solid = str(name_of(int(buried[k])))
        name = f"spawn {k + 1}" if names is None else str(names[k])
        said = name if name.startswith("spawn ") else f"spawn {name}"  # not the capsule's
        out.append(Finding("capsule", said, CLEAR, PENETRATING, point,
                           f"{said} at {format_vector(point, 2)} is inside the closed "
                           f"solid {solid}: it floods nothing (left out of reachability); "
                           f"move the spawn out of the solid"))
    return out


def target_findings(targets, reached) -> list:
    """A Finding (kind "target", an error) per target whose expectation did not hold."""
    out = []
    for t, ok in zip(targets, np.asarray(reached, bool)):
        got = REACHABLE if ok else "unreachable"
        if got == t.expect:
            continue
        where = format_vector(t.point, 2)
        message = (f"target {t.name} at {where} is not reachable from the spawns; open a "
                   f"way there (a step, a ramp, a wider passage)" if t.expect == REACHABLE
                   else f"target {t.name} at {where} is reachable from the spawns but must "
                        f"not be; close the way there")
        out.append(Finding("target", t.name, t.expect, got, tuple(float(x) for x in t.point),
                           message))
    return out


def reach_summary(reach: ReachResults | None, n_spawns: int) -> dict | None:
    """The report's ``reachability`` block (schema): spawns, spawns standing on no floor,
    reachable m^2, islands and traps (counts and m^2), what one setting changed alone opens
    (``what_if`` sentences); None when reachability did not run."""
    if reach is None:
        return None
    result = reach.result
    cells = np.asarray(getattr(result, "spawn_cells", np.zeros(0, np.int64)))
    islands = list(getattr(result, "islands", ()))
    traps = list(getattr(result, "traps", ()))
    return {"spawns": int(n_spawns), "spawns_on_no_floor": int((cells < 0).sum()),
            "reachable_m2": round(float(getattr(result, "reachable_area", 0.0)), 4),
            "islands": len(islands), "islands_m2": round(sum(float(r.area) for r in islands), 4),
            "traps": len(traps), "traps_m2": round(sum(float(r.area) for r in traps), 4),
            "what_if": [str(w) for w in getattr(result, "what_if", ())]}


def target_rows(targets, reached) -> list:
    """JSON rows: name, point, expected, verdict, ok."""
    rows = []
    for t, ok in zip(targets, np.asarray(reached, bool)):
        got = REACHABLE if ok else "unreachable"
        rows.append({"name": t.name, "point": [round(float(x), 4) for x in t.point],
                     "expected": t.expect, "verdict": got, "ok": got == t.expect})
    return rows
