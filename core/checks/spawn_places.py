"""Where the spawns stand: a spawn inside a wall, over no floor, or placed above its floor.

A spawn is where the game starts the player, and where reachability floods from
(``core.reachability``). One finding (check "spawns") per spawn placed wrong, for the panel
and the CLI alike, naming the spawn:

- ``in_wall`` (a warning): the character's capsule standing there penetrates a wall
  (``reach_spawns.spawns_in_walls``): the game starts the player stuck. It says whether
  the flood still found floor beside it or floods nothing;
- ``no_floor`` (a warning): it stands on no free floor where placed nor where it falls to
  (nothing below it within FALL_OUT_OF_LEVEL_DISTANCE, or only floor the character cannot
  stand on): it floods nothing;
- ``falls`` (an info): placed above the floor, it falls to the floor below as the game
  drops the player, and floods from there; the info says how far.

A spawn inside a closed solid is left out of the flood before it runs and has its own
finding (``targets.spawn_findings``); it is not judged again here. ``spawn_listed`` is every
spawn finding of a flood, both kinds, as the report and the panel list them.

Frame and units: world space, metres.
"""

from __future__ import annotations

import numpy as np

from ..walk.walker import FALL_OUT_OF_LEVEL_DISTANCE
from .findings import Listed
from .targets import spawn_findings
from .verdicts import Finding, format_vector

SPAWN_CHECK = "spawns"  # the finding kind (core.checks.severity)
ON_FLOOR = "on_floor"  # what a spawn is expected to be
IN_WALL, NO_FLOOR, FALLS = "in_wall", "no_floor", "falls"


def spawn_names(capsules, n_spawns: int) -> list:
    """Names of the ``n_spawns`` spawns in ``core.checks.spec.spawn_points``'s order: the
    capsules marked spawn by name, then the sidecar's spawn points ("spawn 1", ...)."""
    names = [c.name for c in capsules if getattr(c, "spawn", False)]
    return names + [f"spawn {k}" for k in range(1, n_spawns - len(names) + 1)]


def _flooded(result, buried):
    """(cells (K,), drops (K,)) per spawn of the flood ``result`` (which left out the
    ``buried`` spawns: -1 / NaN for those)."""
    k = buried.size
    cells = np.full(k, -1, np.int64)
    drops = np.full(k, np.nan)
    keep = np.flatnonzero(buried < 0)
    got = np.asarray(getattr(result, "spawn_cells", np.zeros(0, np.int64)), np.int64)
    fell = np.asarray(getattr(result, "spawn_drop", np.zeros(0)), float)
    if got.size == keep.size:  # a stand-in without them tells nothing
        cells[keep] = got
    if fell.size == keep.size:
        drops[keep] = fell
    elif got.size == keep.size:
        drops[keep] = 0.0
    return cells, drops


def _one(name, foot, wall, cell, drop, name_of):
    """The Listed finding of one spawn, or None when it stands right."""
    at = f"spawn {name} at {format_vector(foot, 2)}"
    if wall >= 0:
        floods = ("it floods from the floor beside it" if cell >= 0 else "it floods nothing")
        return Listed(Finding(SPAWN_CHECK, name, ON_FLOOR, IN_WALL, foot,
                              f"{at} is inside a wall (the character's capsule penetrates "
                              f"{name_of(int(wall))}): the game starts the player stuck; "
                              f"{floods}; move the spawn clear of the wall", "warning"),
                      np.array([wall], np.int64))
    if cell < 0:
        why = (f"nothing below it within {FALL_OUT_OF_LEVEL_DISTANCE:.0f} m"
               if not np.isfinite(drop) else
               f"it falls {drop:.2f} m onto floor the character cannot stand on")
        return Listed(Finding(SPAWN_CHECK, name, ON_FLOOR, NO_FLOOR, foot,
                              f"{at} stands on no floor ({why}): it floods nothing; move it "
                              f"onto walkable floor", "warning"), np.empty(0, np.int64))
    if np.isfinite(drop) and drop > 0.0:
        return Listed(Finding(SPAWN_CHECK, name, ON_FLOOR, FALLS, foot,
                              f"{at} is {drop:.2f} m above the floor: it falls to the floor "
                              f"below, as the game drops the player, and floods from there",
                              "info"), np.empty(0, np.int64), value=float(drop))
    return None


def spawn_place_findings(names, feet, buried, walled, result, name_of) -> list:
    """``Listed`` findings (check "spawns", module docstring) of the spawns ``names`` (K,)
    at foot points ``feet`` (K, 3): ``buried`` (K,) int64 the closed solid each is inside
    (-1: none; those are skipped), ``walled`` (K,) int64 the wall each penetrates
    (``spawns_in_walls``; -1: none), ``result`` the flood of the spawns not buried (its
    ``spawn_cells`` and ``spawn_drop``), ``name_of(triangle)`` names a wall."""
    pts = np.asarray(feet, np.float64).reshape(-1, 3)
    buried = np.asarray(buried, np.int64).reshape(-1)
    walled = np.asarray(walled, np.int64).reshape(-1)
    if not (len(names) == pts.shape[0] == buried.size == walled.size):
        raise ValueError(f"spawn_place_findings: {len(names)} names, {pts.shape[0]} feet, "
                         f"{buried.size} buried and {walled.size} walled flags differ")
    cells, drops = _flooded(result, buried)
    out = []
    for k in np.flatnonzero(buried < 0):  # one per spawn (a handful, not per triangle)
        got = _one(names[k], tuple(float(x) for x in pts[k]), walled[k], cells[k], drops[k],
                   name_of)
        if got is not None:
            out.append(got)
    return out


def spawn_listed(names, feet, buried, walled, result, name_of) -> list:
    """Every spawn finding of a flood, as (Listed, bracket) pairs in the report's order: one
    error per spawn inside a closed solid (``targets.spawn_findings``, its solid's triangle,
    bracket True), then ``spawn_place_findings`` (bracket False). The one list of the level
    report (``report._findings``) and the panel's SPAWN rows; arguments as
    ``spawn_place_findings``."""
    pts = np.asarray(feet, np.float64).reshape(-1, 3)
    buried = np.asarray(buried, np.int64).reshape(-1)
    solids = buried[buried >= 0]
    out = [(Listed(f, np.array([t], np.int64)), True) for f, t in zip(
        spawn_findings(pts, buried, name_of, names), solids, strict=True)]
    out += [(listed, False) for listed in spawn_place_findings(
        names, pts, buried, walled, result, name_of)]
    return out
