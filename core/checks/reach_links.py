"""Moves between the free cells of the standable map: walking, steps up and down, falls.

The nodes are the standable map's FREE spans (``core.audits.standable``): places where the
character's capsule fits, each with the point it stands on (``stand``) and its capsule
(``centre``). From every node the four grid directions are searched, one column after
another up to ``reach_cells`` columns (the blocked band in front of a riser or a wall is at
most a radius deep): the first column holding a free node within ``step_height`` of the
node's height is its neighbour that way.

- Next column, height difference within ``walk_rise`` (what a walkable slope rises over one
  cell): a *walk*, both ways. Both capsules are free and a cell apart (less than the
  capsule's diameter), so nothing fits between them: no mesh query. The waist between their
  lower spheres is at most 1.1 cm deep (12 cm where both were pushed a cell apart from their
  centres): a straight sweep there would refuse the slide around a convex corner that the
  controller makes.
- Next column, lower by up to ``step_height``: a *step down* (the controller's stick to
  floor). Higher: a *step up*, accepted when the controller's own step probe
  (``core.steps.measure_step``: riser and tread rays) finds it climbable.
- Farther columns (a blocked band between): the move is swept with the capsule, as the
  controller's step-up does it: up by the rise plus ``ground_probe``, across, then down
  onto the other node; a step up also needs the step probe.
- No floor at all in the next column within ``step_height`` (an edge): a *fall* (one way)
  onto the highest free node below in the next ``reach_cells`` columns, swept across and
  down. Every edge is also left to the controller's own walk-off where it could land
  somewhere else (a character running off a deck crosses a gap narrower than its stride
  and lands on the far deck, not in the pit), and every node-direction without a walk or
  step to its jumps (``core.reach_arcs``).

Frame and units: world space, metres; ``settings.up`` is up.
"""

from __future__ import annotations

import math
from concurrent.futures import ThreadPoolExecutor
from typing import NamedTuple

import numpy as np

from ..constants import STEP_RISE_TOL
from ..controller.steps import climbable, measure_step
from .audits.cells import shifted_xy
from .audits.common import EMPTY_I, raycast_chunks
from .audits.spans import sweep_chunks
from .audits.standable import FREE, exact_model

WALK, STEP_UP, STEP_DOWN, FALL, JUMP = 0, 1, 2, 3, 4
LINK_KINDS = ("walk", "step_up", "step_down", "fall", "jump")
DIRECTIONS = ((1, 0), (-1, 0), (0, 1), (0, -1))
THREADED_NODES = 100_000  # free nodes from which the four directions' moves are found in
# two threads (the arena's 838 k; below it a pool's start and the GIL's hand-overs cost more)


class Links(NamedTuple):
    """Directed moves between map spans: src, dst (L,) int64 span indices; kind (L,) int8
    WALK / STEP_UP / STEP_DOWN / FALL / JUMP."""

    src: np.ndarray
    dst: np.ndarray
    kind: np.ndarray

    @classmethod
    def empty(cls) -> Links:
        return cls(EMPTY_I, EMPTY_I, np.empty(0, np.int8))

    @classmethod
    def join(cls, parts) -> Links:
        """The moves of ``parts`` in order (a single non-empty part as it is: no copy)."""
        parts = [p for p in parts if p.src.size]
        if not parts:
            return cls.empty()
        if len(parts) == 1:
            return parts[0]
        return cls(*(np.concatenate(col) for col in zip(*parts)))


class Edges(NamedTuple):
    """Node-directions with no walk or step: node (E,) int64 span; direction (E,) int64
    index into DIRECTIONS; drop (E,) bool no floor within ``step_height`` in the next column
    (an edge to walk off), else something is in the way (a wall, a riser taller than a
    step); fell (E,) bool a fall link was found that way; fall_to (E,) int64 the node it
    falls to (-1: none)."""

    node: np.ndarray
    direction: np.ndarray
    drop: np.ndarray
    fell: np.ndarray
    fall_to: np.ndarray


def engine_step_rule(settings):
    """The settings reachability judges moves by: the exact model's (``exact_model``: the
    map, the padding and the edges as given), whose ``step_height`` is the model's
    ``climb_height``, the riser its walk climbs (issue 26). Under ``"jolt"`` a flight of
    risers up to ``step_height + radius`` is a route and a taller one is not; under
    ``"rapier"`` up to its autostep's room test (0.4287 m for the engines README's
    character, 0.35 step); the exact model is unchanged. Drops up to the climb height then
    count as steps down rather than falls: both are one-way moves down."""
    exact = exact_model(settings)
    if settings.exact:
        return exact
    return exact.replace(step_height=settings.climb_height)


def reach_cells(settings, cell) -> int:
    """Columns searched ahead: the blocked band in front of a riser or wall (a radius) and
    one more."""
    return int(math.ceil(settings.radius / cell)) + 1


def walk_rise(settings, cell) -> float:
    """Metres: the most a walkable slope rises over one cell (at most ``step_height``)."""
    return min(cell * math.tan(math.radians(settings.max_slope_deg)),
               settings.step_height) + STEP_RISE_TOL


def node_heights(smap) -> np.ndarray:
    """(N,) height along up of each FREE span's stand point (NaN for the others)."""
    return np.where(smap.state == FREE, smap.stand @ smap.grid.up, np.nan)


def _search(smap, s, nodes, h, dx, dy, xy):
    """For ``nodes`` (M,) going (dx, dy): (target (M,) first free node within step_height,
    -1; k (M,) its column; floor1 (M,) bool some floor within step_height in column 1;
    drop (M,) the highest free node below in the first column that has one, -1). Columns
    beyond the first are searched only for the nodes still without a target. xy : the
    nodes' grid coordinates (ix, iy) (M,) each. ``h`` is NaN off the FREE spans, so the
    lookups need no FREE mask (a NaN height is in no range)."""
    cols = smap.columns
    kk = reach_cells(s, smap.grid.cell)
    m = nodes.size
    hq = h[nodes]
    ix, iy = xy
    # the next column for every node at once (no row gathers: most find their target there)
    target = cols.lookup(shifted_xy(smap.grid, ix, iy, dx, dy), hq, -s.step_height,
                         s.step_height, None, h)
    k_at = (target >= 0).astype(np.int64)
    rows = np.flatnonzero(target < 0)
    for k in range(2, kk + 1):
        if not rows.size:
            break
        j = cols.lookup(shifted_xy(smap.grid, ix[rows], iy[rows], k * dx, k * dy), hq[rows],
                        -s.step_height, s.step_height, None, h)
        found = j >= 0
        target[rows[found]], k_at[rows[found]] = j[found], k
        rows = rows[~found]
    floor1 = np.ones(m, bool)
    drop = np.full(m, -1, np.int64)
    if rows.size:  # no target: an edge (no floor next), or something in the way
        floor1[rows] = cols.lookup(shifted_xy(smap.grid, ix[rows], iy[rows], dx, dy),
                                   hq[rows], -s.step_height, s.step_height) >= 0
        left = rows[~floor1[rows]]
        for k in range(1, kk + 1):
            low = cols.lookup(shifted_xy(smap.grid, ix[left], iy[left], k * dx, k * dy),
                              hq[left], -np.inf, -s.step_height - STEP_RISE_TOL, None, h)
            drop[left[low >= 0]] = low[low >= 0]
            left = left[low < 0]
            if not left.size:
                break
    return target, k_at, floor1, drop


def swept(mesh, s, centre_i, centre_j, lift) -> np.ndarray:
    """(K,) bool: the capsule at lower-sphere centres ``centre_i`` (K, 3) goes up by ``lift``
    (K,) metres, across to above ``centre_j`` (K, 3) and down onto it without hitting
    anything on the way up or across, landing on a support within ``ground_probe`` of
    ``centre_j``'s height."""
    u = s.up_vector
    k = centre_i.shape[0]
    if not k:
        return np.zeros(0, bool)
    seg = u * (s.height - 2.0 * s.radius)
    up = np.outer(lift, u)
    t1, _n, _p, _t = sweep_chunks(mesh, centre_i, centre_i + seg, s.radius, up)
    a1 = centre_i + up
    across = centre_j - a1
    across -= np.outer(across @ u, u)
    t2, _n, _p, _t = sweep_chunks(mesh, a1, a1 + seg, s.radius, across)
    a2 = a1 + across
    drop = a2 @ u - centre_j @ u + 2.0 * s.ground_probe
    t3, n3, _p, _t = sweep_chunks(mesh, a2, a2 + seg, s.radius, np.outer(-drop, u))
    land = a2 @ u - np.where(np.isfinite(t3), t3, 1.0) * drop
    return (np.isinf(t1) & np.isinf(t2) & np.isfinite(t3) & (n3 @ u > 0.0)
            & (np.abs(land - centre_j @ u) <= s.ground_probe))


def stepped(mesh, s, smap, src, dst, d_world, h) -> np.ndarray:
    """(K,) bool: the controller's step probe finds the step from nodes ``src`` up to
    ``dst`` (K,) going ``d_world`` (3,) climbable. The probe starts at the riser: where a
    horizontal ray from half the rise above ``src`` meets it, else half-way."""
    u = s.up_vector
    k = src.size
    if not k:
        return np.zeros(0, bool)
    rise = np.minimum(h[dst] - h[src], s.step_height)
    origin = smap.stand[src] + np.outer(0.5 * rise, u)
    dist = np.abs((smap.stand[dst] - smap.stand[src]) @ d_world)
    t, _tri = raycast_chunks(mesh, origin, np.tile(d_world, (k, 1)), dist)
    mid = 0.5 * (smap.stand[src] + smap.stand[dst])
    mid += np.outer(h[src] - mid @ u, u)
    point = np.where(np.isfinite(t)[:, None], origin + np.outer(np.nan_to_num(t, posinf=0.0),
                                                                d_world), mid)
    probe = measure_step(mesh, h[src], point, np.tile(d_world, (k, 1)), s)
    return climbable(probe, s)


def _direction_links(mesh, s, smap, nodes, h, di, xy):
    """The accepted moves of ``nodes`` (M,) (grid coordinates ``xy``) in direction ``di``
    (two Links: the walks and steps, the falls; joined once by the caller: no copy of the
    millions of walks per direction); (M,) bool nodes that got a walk or step, (M,) int64
    the node each fell to (-1: no fall); (M,) bool floor in the next column."""
    grid = smap.grid
    dx, dy = DIRECTIONS[di]
    d_world = dx * grid.e1 + dy * grid.e2
    wr = walk_rise(s, grid.cell)
    target, k, floor1, drop = _search(smap, s, nodes, h, dx, dy, xy)
    has = np.flatnonzero(target >= 0)
    i, j = nodes[has], target[has]
    dh = h[j] - h[i]
    near = k[has] == 1
    kind = np.zeros(has.size, np.int8)  # WALK
    kind[dh > wr] = STEP_UP
    kind[dh < -wr] = STEP_DOWN
    ok = np.ones(has.size, bool)
    up_near = near & (kind == STEP_UP)
    ok[up_near] = stepped(mesh, s, smap, i[up_near], j[up_near], d_world, h)
    far = np.flatnonzero(~near)
    lift = np.maximum(dh[far], 0.0) + s.ground_probe
    ok[far] = swept(mesh, s, smap.centre[i[far]], smap.centre[j[far]], lift)
    up_far = far[ok[far] & (kind[far] == STEP_UP)]
    ok[up_far] = stepped(mesh, s, smap, i[up_far], j[up_far], d_world, h)
    linked = np.zeros(nodes.size, bool)
    linked[has[ok]] = True
    fall = np.flatnonzero((target < 0) & ~floor1 & (drop >= 0))
    fok = swept(mesh, s, smap.centre[nodes[fall]], smap.centre[drop[fall]],
                np.full(fall.size, s.ground_probe))
    fell = np.full(nodes.size, -1, np.int64)
    fell[fall[fok]] = drop[fall[fok]]
    if not ok.all():  # most moves are accepted: no copies then
        i, j, kind = i[ok], j[ok], kind[ok]
    links = (Links(i, j, kind), Links(nodes[fall[fok]], drop[fall[fok]],
                                      np.full(int(fok.sum()), FALL, np.int8)))
    return links, linked, fell, floor1


def _each_direction(mesh, s, smap, nodes, h, xy) -> list:
    """``_direction_links`` of every direction in DIRECTIONS order; from THREADED_NODES
    nodes in two threads (each direction only reads the map and the mesh, and numpy
    releases the GIL in its array work: the same moves on one core or two)."""
    def one(di):
        return _direction_links(mesh, s, smap, nodes, h, di, xy)

    if nodes.size < THREADED_NODES:
        return [one(di) for di in range(len(DIRECTIONS))]
    with ThreadPoolExecutor(max_workers=2, thread_name_prefix="cc-links") as pool:
        return list(pool.map(one, range(len(DIRECTIONS))))


def neighbour_links(mesh, smap, settings):
    """Walks, steps and falls between the map's free nodes (module docstring): (Links,
    Edges: the node-directions with none)."""
    s = settings
    h = node_heights(smap)
    nodes = np.flatnonzero(smap.state == FREE)
    xy = np.divmod(smap.cell[nodes], smap.grid.ny)  # grid coordinates, shifted 4+ ways
    parts, e_node, e_dir, e_drop, e_fell, e_to = [], [], [], [], [], []
    for di, (links, linked, fell, floor1) in enumerate(_each_direction(mesh, s, smap, nodes,
                                                                        h, xy)):
        parts.extend(links)
        e_node.append(nodes[~linked])
        e_dir.append(np.full(int((~linked).sum()), di, np.int64))
        e_drop.append(~floor1[~linked])
        e_fell.append(fell[~linked] >= 0)
        e_to.append(fell[~linked])
    return Links.join(parts), Edges(*(np.concatenate(x) for x in (e_node, e_dir, e_drop,
                                                                    e_fell, e_to)))
