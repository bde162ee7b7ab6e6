"""What if one setting were changed: the smallest change of one setting that opens the way
into the most islands (and out of the most traps) that their causes name.

The causes of a region (``reach_explain.regions_causes``) come from the moves that failed at
its border: pairs of a node of the region and the nearest node of the reached floor, each
with a kind and a value (a riser's rise, a slope's angle, a gap's width, a ceiling's
clearance). For each setting a cause names

- ``riser``: ``step_height`` (a rise up to it is climbed; at most WHAT_IF_STEP x the setting),
- ``slope``: ``max_slope_deg`` (at most WHAT_IF_SLOPE_DEG more, below 90),
- ``gap`` (and a riser or a trap's drop a jump could climb): ``jump_height``, only where the
  character jumps (``jump_height > 0``; at most WHAT_IF_STEP x the setting),
- ``ceiling``: ``height`` (lowered to a clearance, down to 1 / WHAT_IF_STEP of it),

the flood is run again *cheaply*, reusing the map (never rebuilt): for a step height, a
slope or a height, the moves of the map as they are plus the failed border moves the new
value opens (a riser one way: up onto an island, up out of a trap; the others both ways),
and the closure again from the same spawn nodes; for a jump height, the same plus the
controller's own jumps flown with it from the reached side of each failed gap and riser
(``_take_offs``; a gap's width only estimates them). A region is opened when an island
is reached, or a trap gets a way back. First at the largest plausible value (what opens the
most), then at the least value every opened region's easiest failed move needs, then
halving the interval to the smallest change that opens as many (the later jump floods fly
only from the borders of the regions the first one opened): at most
WHAT_IF_FLOODS_EACH floods per setting, WHAT_IF_FLOODS in all (``tools/bench_what_if.py``
times them on the shipped maps).

Frame and units: metres, degrees.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import NamedTuple

import numpy as np

from ..constants import SLOPE_LIMIT_TOL_RAD, STEP_RISE_TOL
from ..controller.controller import CharacterController
from .reach_arcs import WALKOFF_MAX_CELLS, fly_shared, take_off_speed
from .reach_explain import CAUSE_KINDS, cross_reach
from .reach_graph import closure, merge_components, mutual_components
from .reach_links import DIRECTIONS, FALL, JUMP, WALK, Links, node_heights
from .reach_spawns import nearest_nodes

WHAT_IF_STEP = 1.5  # a step height (jump height) up to this many times the setting is worth it
WHAT_IF_SLOPE_DEG = 20.0  # degrees: a max slope up to this much steeper is worth suggesting
WHAT_IF_MAX_SLOPE_DEG = 89.0  # degrees: never suggest a wall as floor
WHAT_IF_FLOODS = 20  # floods at most per result
WHAT_IF_ARCS = 512  # jumps flown at most per jump-height flood (the narrowest gaps first)
WHAT_IF_FLOODS_EACH = (6, 6, 7, 6)  # at most per setting: step, slope, jump (a whole flight
# of arcs again: the costly one), height
RISER, GAP, CEILING, SLOPE, DROP = (CAUSE_KINDS.index(k)
                                     for k in ("riser", "gap", "ceiling", "slope", "drop"))


class BorderMoves(NamedTuple):
    """The failed moves at the borders of a class of regions (islands or traps): region (P,)
    int64 its index in the class's tuple; inner (P,) node of the region; outer (P,) node of
    the floor across; direction (P,) the grid direction from inner to outer (an index into
    reach_links.DIRECTIONS; ``^ 1`` is the opposite one); kind (P,) int64 code of
    CAUSE_KINDS; value (P,) float64 (module docstring)."""

    region: np.ndarray
    inner: np.ndarray
    outer: np.ndarray
    direction: np.ndarray
    kind: np.ndarray
    value: np.ndarray

    @classmethod
    def join(cls, parts) -> BorderMoves:
        parts = list(parts)
        if not parts:
            e = np.zeros(0, np.int64)
            return cls(e, e, e, e, e, np.zeros(0))
        return cls(*(np.concatenate(col) for col in zip(*parts)))


class Reflood(NamedTuple):
    """What ``what_if`` floods again with (``reflood``): ``links(extra: Links)
    -> (reach, back)`` (N,) bool per node, the closure of the map's moves plus ``extra``
    from the same spawn nodes; ``jumps(jump_height, nodes, directions) -> (reach, back)``,
    the same plus the controller's jumps with that jump height from ``nodes`` (E,) along
    grid ``directions`` (E,); the border moves of the islands and of the traps."""

    links: Callable[[Links], tuple]
    jumps: Callable[..., tuple]
    islands: BorderMoves
    traps: BorderMoves


class _Setting(NamedTuple):
    kind: int  # the cause it opens at an island's border
    trap_kind: int  # the cause it opens at a trap's border
    name: str  # the setting's words
    field: str  # ControllerSettings field
    unit: str  # "m" or "deg"
    larger: bool  # a larger value opens more (False: height, lowered)


# A trap's way out up a riser is its "drop" (the floor out stands above it).
SETTINGS = (_Setting(RISER, DROP, "step height", "step_height", "m", True),
            _Setting(SLOPE, SLOPE, "max slope", "max_slope_deg", "deg", True),
            _Setting(GAP, GAP, "jump height", "jump_height", "m", True),
            _Setting(CEILING, CEILING, "height", "height", "m", False))


_GAP_SETTING = SETTINGS[2]


def _needed(st: _Setting, value, settings) -> np.ndarray:
    """(P,) the setting each failed move of values ``value`` (P,) needs, rounded the way
    that opens it (cm, whole degrees); NaN where no plausible value does."""
    s = settings
    v = np.asarray(value, float)
    if st.kind == RISER:  # a rise within STEP_RISE_TOL of the step height is climbed
        need = np.ceil((v - STEP_RISE_TOL) * 100.0) / 100.0
        return np.where(need <= WHAT_IF_STEP * s.step_height, need, np.nan)
    if st.kind == SLOPE:  # a face at the limit is walkable within SLOPE_LIMIT_TOL_RAD
        need = np.ceil(v - math.degrees(SLOPE_LIMIT_TOL_RAD))
        top = min(s.max_slope_deg + WHAT_IF_SLOPE_DEG, WHAT_IF_MAX_SLOPE_DEG)
        return np.where(need <= top, need, np.nan)
    if st.kind == GAP:  # cross_reach: 2 r + speed * 2 v0 / g, v0 = sqrt(2 g j)
        g = max(s.gravity, 1e-12)
        v0 = np.maximum(v - 2.0 * s.radius, 0.0) * g / (2.0 * max(s.speed, 1e-12))
        need = np.ceil(v0 ** 2 / (2.0 * g) * 100.0 + 1e-6) / 100.0
        ok = (s.jump_height > 0.0) & (need <= WHAT_IF_STEP * s.jump_height)
        return np.where(ok, need, np.nan)
    need = np.floor(v * 100.0 + 1e-9) / 100.0  # a ceiling's clearance: the height under it
    ok = (need >= s.height / WHAT_IF_STEP) & (need > 2.0 * s.radius)
    return np.where(ok, need, np.nan)


def _code(st: _Setting, trap: bool) -> int:
    """The cause code the setting opens at an island's (a trap's, ``trap``) border."""
    return st.trap_kind if trap else st.kind


def _opens(st: _Setting, moves: BorderMoves, value, settings, trap: bool) -> np.ndarray:
    """(P,) bool the failed moves of ``moves`` (a trap's: ``trap``) that the setting at
    ``value`` opens."""
    mine = moves.kind == _code(st, trap)
    if st.kind == GAP:
        reach = cross_reach(settings.replace(jump_height=float(value)))
        return mine & (moves.value <= reach)
    need = _needed(st, moves.value, settings)
    with np.errstate(invalid="ignore"):
        return mine & ((need <= value) if st.larger else (need >= value))


def _extra(st: _Setting, moves: BorderMoves, value, settings, trap: bool) -> Links:
    """The moves ``value`` opens: a riser one way (up from the lower floor: into an island;
    out of a trap, ``trap``), the others both ways (walks)."""
    ok = _opens(st, moves, value, settings, trap)
    i, o = moves.inner[ok], moves.outer[ok]
    if st.kind == RISER:
        src, dst = (i, o) if trap else (o, i)
        return Links(src, dst, np.full(src.size, FALL, np.int8))  # one way, not a walk
    return Links(np.concatenate([o, i]), np.concatenate([i, o]),
                 np.full(2 * i.size, WALK, np.int8))


def _heads(moves: BorderMoves, n_regions: int) -> np.ndarray:
    """(R,) int64 one inner node per region (-1: a region with no failed move)."""
    head = np.full(n_regions, -1, np.int64)
    head[moves.region[::-1]] = moves.inner[::-1]
    return head


def _take_offs(flood: Reflood, settings, top: float, only=None):
    """(nodes (E,), directions (E,)): where a jump with a jump height up to ``top`` is tried,
    at most WHAT_IF_ARCS: across each failed gap (the narrowest first), then up each riser
    (an island's; a trap's way out, its drop) a jump could climb (the lowest first), from
    the reached floor towards an island, from a trap towards the floor out; ``only``: None,
    or (islands (R,), traps (R,)) bool, the regions whose moves are tried."""
    climb = top + settings.step_height
    parts = []
    for m, trap in ((flood.islands, False), (flood.traps, True)):
        gap = (m.kind == GAP) & np.isfinite(_needed(_GAP_SETTING, m.value, settings))
        up = (m.kind == (DROP if trap else RISER)) & (m.value <= climb)
        mine = np.ones(m.region.size, bool) if only is None else only[int(trap)][m.region]
        rows = np.flatnonzero((gap | up) & mine)
        node, dirs = (m.inner, m.direction) if trap else (m.outer, m.direction ^ 1)
        parts.append((node[rows], dirs[rows], m.value[rows] + np.where(gap[rows], 0.0, 1e6)))
    node, dirs, key = (np.concatenate(c) for c in zip(*parts, strict=True))
    order = np.argsort(key, kind="stable")
    _u, first = np.unique(node[order] * 4 + dirs[order], return_index=True)
    keep = order[np.sort(first)][:WHAT_IF_ARCS]
    return node[keep], dirs[keep]


def _opened(st, value, flood: Reflood, settings, heads, only=None):
    """(islands reached, traps with a way out) (R,) bool with the setting at ``value``: the
    map's moves plus the failed border moves it opens, or (a jump height) the flood flown
    again with it (``flood.jumps``; ``only``: from the borders of those regions only)."""
    if st.kind == GAP:
        reach, back = flood.jumps(float(value),
                                  *_take_offs(flood, settings, float(value), only))
    else:
        extra = Links.join([_extra(st, flood.islands, value, settings, False),
                            _extra(st, flood.traps, value, settings, True)])
        if not extra.src.size:
            return np.zeros(heads[0].size, bool), np.zeros(heads[1].size, bool)
        reach, back = flood.links(extra)
    hi, ht = heads
    return ((hi >= 0) & reach[np.maximum(hi, 0)], (ht >= 0) & back[np.maximum(ht, 0)])


def _words(st: _Setting, value, now, n_i, n_t) -> str:
    unit = " deg" if st.unit == "deg" else " m"
    fmt = (lambda x: f"{x:.0f}") if st.unit == "deg" else (lambda x: f"{x:.2f}")
    parts = []
    if n_i:
        parts.append(f"{n_i} island{'s' if n_i > 1 else ''} {'is' if n_i == 1 else 'are'} "
                     "reached")
    if n_t:
        parts.append(f"{n_t} trap{'s' if n_t > 1 else ''} "
                     f"{'has' if n_t == 1 else 'have'} a way out")
    return (f"with {st.name} {fmt(value)}{unit} (now {fmt(now)}{unit}): "
            f"{' and '.join(parts)}")


def _grid(st: _Setting) -> float:
    return 1.0 if st.unit == "deg" else 0.01


def _top(st: _Setting, settings) -> float:
    """The largest plausible change's value (module docstring)."""
    s = settings
    now = float(getattr(s, st.field))
    if st.kind == SLOPE:
        return float(np.floor(min(now + WHAT_IF_SLOPE_DEG, WHAT_IF_MAX_SLOPE_DEG)))
    if st.kind == CEILING:
        return float(np.ceil(max(now / WHAT_IF_STEP, 2.0 * s.radius + 0.01) * 100.0) / 100.0)
    return float(np.floor(WHAT_IF_STEP * now * 100.0 + 1e-6) / 100.0)


def _best(st: _Setting, flood: Reflood, settings, heads, budget):
    """(value, islands opened, traps opened, floods used) of the smallest change of one
    setting that opens as many regions as the largest plausible change, or None: the
    largest first, then the least value every region's easiest failed move needs (exact
    for the moves added as they are; an estimate for a jump), then halving the interval
    while ``budget`` lasts."""
    now = float(getattr(settings, st.field))
    need = np.concatenate([_needed(st, m.value[m.kind == _code(st, trap)], settings)
                           for m, trap in ((flood.islands, False), (flood.traps, True))])
    sign = 1.0 if st.larger else -1.0
    if st.kind == GAP:  # a gap's width or a riser only estimates the arcs: fly them
        need = np.zeros(int(settings.jump_height > 0.0)
                        * _take_offs(flood, settings, _top(st, settings))[0].size)
    else:
        need = need[np.isfinite(need) & (sign * (need - now) > 0.0)]
    if not need.size or budget < 1:
        return None
    step = _grid(st)
    top = _top(st, settings)
    if sign * (top - now) < step:
        return None
    best = _opened(st, top, flood, settings, heads)
    used = 1
    count = int(best[0].sum() + best[1].sum())
    if not count:
        return None
    # values on the grid of the words (cm, degrees) away from now: value(k), k = 1, 2, ...
    base = math.floor(now / step + 1e-9) if st.larger else math.ceil(now / step - 1e-9)

    def value(k: int) -> float:
        return round((base + sign * k) * step, 6)

    def steps(v: float) -> int:
        return int(round(sign * (v / step - base)))

    lo, hi = 0, steps(top)  # value(hi) opens ``count`` regions, value(lo) not (now)
    guess = _least(st, flood, settings, heads, *best)
    probes = [] if guess is None else [steps(guess)]
    while used < budget and hi - lo > 1:
        mid = probes.pop() if probes and lo < probes[-1] < hi else (lo + hi) // 2
        got = _opened(st, value(mid), flood, settings, heads, best)  # those opened only
        used += 1
        if int(got[0].sum() + got[1].sum()) >= count:
            hi, best = mid, got
        else:
            lo = mid
    return value(hi), int(best[0].sum()), int(best[1].sum()), used


def _least(st, flood: Reflood, settings, heads, oi, ot):
    """The least change that opens the border moves of every opened region naming this
    setting (each region's easiest such move), or None."""
    out = []
    for moves, opened, trap in ((flood.islands, oi, False), (flood.traps, ot, True)):
        rows = np.flatnonzero((moves.kind == _code(st, trap)) & opened[moves.region])
        if not rows.size:
            continue
        need = _needed(st, moves.value[rows], settings)
        reg = moves.region[rows]
        for r in np.unique(reg):  # the regions (a few dozen at most)
            mine = need[reg == r]
            mine = mine[np.isfinite(mine)]
            if mine.size:
                out.append(mine.min() if st.larger else mine.max())
    if not out:
        return None
    return float(max(out) if st.larger else min(out))


def what_if(islands, traps, settings, flood: Reflood | None = None) -> tuple:
    """Short sentences, one per setting that opens the way into (or out of) regions the
    causes name when changed alone (module docstring): "with step height 0.42 m (now
    0.35 m): 3 islands are reached and 1 trap has a way out". () without ``flood`` or when
    no plausible change of one setting opens anything."""
    if flood is None or not (len(islands) or len(traps)):
        return ()
    heads = (_heads(flood.islands, len(islands)), _heads(flood.traps, len(traps)))
    out = []
    budget = WHAT_IF_FLOODS
    for st, each in zip(SETTINGS, WHAT_IF_FLOODS_EACH, strict=True):
        got = _best(st, flood, settings, heads, min(each, budget))
        if got is None:
            continue
        value, n_i, n_t, used = got
        budget -= used
        out.append(_words(st, value, float(getattr(settings, st.field)), n_i, n_t))
    return tuple(out)


def reflood(mesh, smap, settings, links: Links, seeds, failed, workers: int = 1,
            comp=None) -> Reflood:
    """The Reflood of a flood over ``smap`` whose moves are ``links`` from the spawn nodes
    ``seeds`` (the closure of its two-way components, ``reach_graph``); ``failed``
    (islands' list, traps' list) the border moves ``regions_causes`` appended.
    The components of ``links`` are found once (or given: ``comp``, their
    ``mutual_components``); each flood joins those its new walks join.
    ``jumps`` flies the controller's jumps (``reach_arcs.fly``, as the flood flies them)
    with the new jump height from the nodes given, each linked to the node it lands on,
    shared among ``workers`` processes (``reach_arcs.fly_shared``)."""
    h, n = node_heights(smap), smap.face.size
    vec = np.array([dx * smap.grid.e1 + dy * smap.grid.e2 for dx, dy in DIRECTIONS])
    base: list = [] if comp is None else [comp]  # the components of ``links``
    # the closure looks at the moves between components only: the walks (millions on open
    # floor) lie inside them, so each flood joins the other moves alone to its new ones
    others = Links(*(col[links.kind != WALK] for col in links))

    def with_links(extra: Links):
        if not base:
            base.append(mutual_components(n, links))
        walk = extra.kind == WALK
        joined = merge_components(base[0], extra.src[walk], extra.dst[walk])
        return closure(joined, Links.join([others, extra]), seeds, n)

    def jumps(jump_height: float, nodes, directions):
        s2 = settings.replace(jump_height=jump_height)
        arcs = fly_shared(CharacterController(mesh, s2), smap.stand[nodes], vec[directions],
                          take_off_speed(s2), WALKOFF_MAX_CELLS * smap.grid.cell, workers)
        land = nearest_nodes(smap, h, arcs.foot, s2)
        ok = arcs.landed & (land >= 0) & (land != nodes)
        return with_links(Links(nodes[ok], land[ok], np.full(int(ok.sum()), JUMP, np.int8)))

    return Reflood(with_links, jumps, BorderMoves.join(failed[0]), BorderMoves.join(failed[1]))


def describe(sentences) -> str:
    """The what-if sentences joined for a summary line ("; " before each), or ""."""
    return "".join(f"; {s}" for s in sentences)


__all__ = ["BorderMoves", "Reflood", "describe", "reflood", "what_if"]
