"""Where can the character go: the standable map flood-filled from spawn points over the
moves the controller can make.

``reachability(mesh, spawns, settings)`` starts from the standable map
(``core.audits.standable``): FREE cells are where the capsule fits, COVERED cells are floor
its body stands over, CRAMPED cells no character can stand on. The FREE cells are the nodes
of a graph whose edges are the controller's moves (core/reach_links.py: walks, steps up
within ``step_height`` by the controller's step probe, steps down, falls one way; and
core/reach_arcs.py: walk-offs and, with ``jump_height > 0``, jumps flown by the controller
itself from the reachable nodes, in rounds until nothing new is reached).

From the spawns' nodes the graph is flood-filled forwards (*reachable*) and backwards
(*can get back*: a spawn's node is reachable from there). Reachable nodes that cannot get
back are *traps* (a pit, the bottom of a one-way drop); nodes no spawn reaches are *islands*.
A COVERED cell takes the best class of the FREE cells whose body stands over it (reachable,
then trap, then island). Islands and traps are grouped into regions (nodes joined by any
move, both ends in the class), each with its faces, area and one foot point, largest first.

Unlike a navigation mesh (Recast, Unity NavMesh), nothing is voxelised or eroded: every
cell is judged by the real capsule and every move by the controller's own rules (the same
step probe, the same support test, the controller's own arcs), so a stair tread the
controller stands on is standable, a 0.8 m strip between pillars is walkable, and a jump is
as far as the controller's ballistic arc carries.

Frame and units: world space, metres, square metres; ``settings.up`` is up.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ..controller.controller import CharacterController
from ..controller.settings import ControllerSettings
from ..geometry.validate import as_points
from ..walk.walker import FALL_OUT_OF_LEVEL_DISTANCE
from .audits.cells import shifted
from .audits.common import components, settings_or_default
from .audits.spans import sweep_chunks
from .audits.standable import (
    COVERED,
    FREE,
    INSIDE,
    StandableMap,
    cover_min,
    has_map,
    standable_map,
)
from .audits.window import MapWindow, window_worthwhile
from .reach_arcs import WALKOFF_MAX_CELLS, ArcCache, arc_keys, fly, take_off_speed
from .reach_explain import Cause
from .reach_graph import closure, mutual_components, mutual_components_grown, one_way_pairs
from .reach_links import (
    DIRECTIONS,
    FALL,
    JUMP,
    Edges,
    Links,
    engine_step_rule,
    neighbour_links,
    node_heights,
)
from .reach_open import first_round_spills
from .reach_regions import Region, explainer, regions, span_faces
from .reach_spawns import nearest_nodes, spawn_floor, spawn_nodes
from .reach_what_if import reflood, what_if

__all__ = ["Cause", "Reachability", "Region", "reachability"]  # also Cause (reach_explain)
# mutual_components and closure (reach_graph) are read from here too (collision_diff, tests)

REACHABLE, TRAP, ISLAND, CRAMPED_CELL, INSIDE_CELL = 0, 1, 2, 3, 4
CELL_CLASSES = ("reachable", "trap", "island", "cramped", "inside")
ARC_ROUNDS = 8  # rounds of arcs from newly reached nodes at most (each can reach more)
WINDOW_MIN_SPANS = 400_000  # spans of the whole map above which the map is built tile by tile
WINDOW_ROUNDS = 24  # rounds of growing the built tiles at most
WINDOW_WHOLE_SHARE = 0.05  # a round that would build more than this share of the floor tiles
#   builds the whole map instead (open floor keeps spilling out: re-flooding a growing
#   window costs 2-3x one flood of the whole map; bench_reach rows huge 1 %, arena 7 %)


class Reachability(NamedTuple):
    """Result of ``reachability``. N cells (the standable map's spans).

    reachable_faces : (F,) int64 faces with floor a spawn reaches (traps included);
    reachable_area : m^2 of that floor (traps included);
    islands, traps : tuples of Region, largest first (module docstring), each with its
        causes and whether it is in view (unless flooded with ``explain=False``);
    cell_points : (N, 3) each cell's floor point (a foot point, metres); cell_face : (N,)
        int64 its face; cell_class : (N,) int8 REACHABLE / TRAP / ISLAND / CRAMPED_CELL /
        INSIDE_CELL (buried in a solid: not drawn); cell_size : metres (the overlay draws a
        square of this side at each cell point);
    spawn_cells : (K,) int64 the node each spawn starts from, where placed or where it
        falls to (``spawn_drop``) (-1: the spawn stands on no
        free cell within a cell and ``step_height``);
    moves : Links over cells (src, dst, kind: WALK, STEP_UP, STEP_DOWN, FALL, JUMP);
    arcs : int controller arcs flown (walk-offs and jumps);
    standable : the StandableMap it was computed from; settings : the character;
    spawn_drop : (K,) metres each spawn fell before standing (0: it stands where placed; a
        spawn placed above the floor drops onto the floor below it, as the game drops the
        player; NaN: no floor below within FALL_OUT_OF_LEVEL_DISTANCE).
    """

    reachable_faces: np.ndarray
    reachable_area: float
    islands: tuple
    traps: tuple
    cell_points: np.ndarray
    cell_face: np.ndarray
    cell_class: np.ndarray
    cell_size: float
    spawn_cells: np.ndarray
    moves: Links
    arcs: int
    standable: StandableMap
    settings: ControllerSettings
    spawn_drop: np.ndarray = np.zeros(0)
    what_if: tuple = ()  # sentences: one setting changed alone opens regions (reach_what_if)

    def can_reach(self, points) -> np.ndarray:
        """(P,) bool: a spawn reaches the floor at foot points ``points`` (P, 3) (traps
        included): the class of the cell under each point, floor within ``step_height``
        below or above it; False off the map."""
        p = as_points(points, "points")
        smap = self.standable
        step = self.settings.step_height
        j = smap.columns.lookup(smap.grid.cell_of(p), p @ smap.grid.up, -step, step)
        return (j >= 0) & (self.cell_class[np.maximum(j, 0)] <= TRAP)


def _no_progress(_fraction) -> None:
    return None


def _rising(progress):
    """``progress`` told only fractions at least as high as the last one told (a window
    given up for the whole map starts the whole map's stages from 0)."""
    last = [0.0]

    def tell(fraction):
        last[0] = max(last[0], fraction)
        progress(last[0])
    return tell


class Scope(NamedTuple):
    """What the flood knows of the map: known(cells) -> (K,) bool the cells built (None: the
    whole map); low : metres, the lowest height an arc can fall to (None: the map's lowest
    free span); cache : the ArcCache of arcs flown so far (None: none kept); progress :
    callable(fraction) called between stages (``reachability``)."""

    known: object = None
    low: object = None
    cache: object = None
    progress: object = _no_progress


WHOLE_MAP = Scope()  # the flood over the whole map: every column built, no cache


def _worth(smap, h, comp, nodes, dirs, reach, rise, scope=WHOLE_MAP, skip=None) -> np.ndarray:
    """(E,) bool: within ``reach`` (E,) cells along each direction lies a FREE span of
    another component at most ``rise`` metres above the node (an arc there could add a move
    the links do not have; landing in the node's own component adds nothing, nor landing in
    the component ``skip`` (E,) (-1: none), where the edge's straight fall lands), or a
    column not built yet (``scope.known``: the arc may land there)."""
    skip = np.full(nodes.size, -1, np.int64) if skip is None else skip
    worth = np.zeros(nodes.size, bool)
    free = smap.state == FREE
    for di, (dx, dy) in enumerate(DIRECTIONS):
        rows = np.flatnonzero(dirs == di)
        for k in range(1, int(reach[rows].max(initial=0)) + 1):
            rows = rows[(reach[rows] >= k) & ~worth[rows]]
            if not rows.size:
                break
            col = shifted(smap.grid, smap.cell[nodes[rows]], k * dx, k * dy)
            j = smap.columns.lookup(col, h[nodes[rows]], -np.inf, rise, free, h)
            cj = comp[np.maximum(j, 0)]
            new = (j >= 0) & (cj != comp[nodes[rows]]) & (cj != skip[rows])
            if scope.known is not None:
                new |= ~scope.known(col)
            worth[rows[new]] = True
    return worth


def _arc_reach(smap, h, nodes, settings, v0, low=None) -> np.ndarray:
    """(E,) cells an arc from ``nodes`` can carry the character horizontally before it is as
    low as the level's lowest point: ``speed`` x the time up and down, plus a radius and a
    cell (where the arc ends perched on an edge). low : the lowest height (None: the map's
    lowest free span)."""
    s = settings
    g = max(s.gravity, 1e-12)
    if low is None:  # h is the FREE spans' stand height (NaN elsewhere)
        low = float(np.nanmin(h))
    drop = np.maximum(h[nodes] - low, 0.0) + s.height
    t_air = 2.0 * v0 / g + np.sqrt(2.0 * drop / g)
    return np.ceil((s.speed * t_air + s.radius) / smap.grid.cell).astype(np.int64) + 1


def _arc_links(ctrl, smap, h, edges: Edges, sels, v0, settings, scope=WHOLE_MAP):
    """Fly the walk-offs and jumps of the edges ``sels`` = (walk, jump) (E,) bool each in one
    lock-step batch (core.reach_arcs.fly, or the arcs ``scope.cache`` already flew) and link
    each landed arc's node to the node it stands on (FALL, then JUMP rows): (Links, (L, 3)
    the landing feet in columns not built yet)."""
    each = [np.flatnonzero(sel) for sel in sels]
    jump = np.repeat([False, True], [r.size for r in each])
    rows = np.concatenate(each)
    nodes, dirs = edges.node[rows], edges.direction[rows]
    vec = np.array([dx * smap.grid.e1 + dy * smap.grid.e2 for dx, dy in DIRECTIONS])
    args = (ctrl, smap.stand[nodes], vec[dirs], np.where(jump, v0, 0.0),
            WALKOFF_MAX_CELLS * smap.grid.cell)
    if scope.cache is None:
        arcs = fly(*args)
    else:
        arcs = scope.cache.fly(arc_keys(smap, nodes, dirs, jump), *args)
    land = nearest_nodes(smap, h, arcs.foot, settings)
    ok = arcs.landed & (land >= 0) & (land != nodes)
    lost = np.zeros((0, 3))
    if scope.known is not None:
        lost = arcs.foot[arcs.landed & ~scope.known(smap.grid.cell_of(arcs.foot))]
    kind = np.where(jump[ok], JUMP, FALL).astype(np.int8)
    return Links(nodes[ok], land[ok], kind), lost


def _drop_landing(mesh, smap, edges: Edges, sel, settings):
    """(E,) bool floor within FALL_OUT_OF_LEVEL_DISTANCE below the capsule moved a cell plus
    a radius off each edge of ``sel`` (else a walk-off leaves the level), and (E,) bool that
    floor is steep (a walk-off slides on it: flown wherever it leads)."""
    s = settings
    u = s.up_vector
    nodes = edges.node[sel]
    vec = np.array([dx * smap.grid.e1 + dy * smap.grid.e2 for dx, dy in DIRECTIONS])
    a = smap.centre[nodes] + vec[edges.direction[sel]] * (smap.grid.cell + s.radius)
    seg = u * (s.height - 2.0 * s.radius)
    t, nrm, _p, _t = sweep_chunks(mesh, a, a + seg, s.radius,
                                  np.tile(-u * FALL_OUT_OF_LEVEL_DISTANCE, (nodes.size, 1)))
    below = np.zeros(sel.size, bool)
    steep = np.zeros(sel.size, bool)
    rows = np.flatnonzero(sel)
    below[rows] = np.isfinite(t)
    steep[rows] = np.isfinite(t) & (nrm @ u < s.cos_max_slope)
    return below, steep


def _arcs_to_fly(mesh, smap, h, comp, edges: Edges, cand, settings, v0, scope=WHOLE_MAP):
    """(walk-offs, jumps) (E,) bool among the candidate edges ``cand``: walk-offs from edges
    with floor below (always where it is steep), jumps when ``v0 > 0``; both only where an
    arc could land in another component (``_worth``; for a walk-off, not the one its
    straight fall lands in)."""
    s = settings
    walk = cand & edges.drop
    if walk.any():
        below, steep = _drop_landing(mesh, smap, edges, walk, s)
        rows = np.flatnonzero(below & ~steep)
        to = edges.fall_to[rows]
        keep = _worth(smap, h, comp, edges.node[rows], edges.direction[rows],
                      _arc_reach(smap, h, edges.node[rows], s, 0.0, scope.low),
                      s.step_height, scope, np.where(to >= 0, comp[np.maximum(to, 0)], -1))
        walk = steep.copy()
        walk[rows[keep]] = True
    jump = np.zeros_like(cand)
    if v0 > 0.0 and cand.any():
        rows = np.flatnonzero(cand)
        jump[rows] = _worth(smap, h, comp, edges.node[rows], edges.direction[rows],
                            _arc_reach(smap, h, edges.node[rows], s, v0, scope.low),
                            s.jump_height + s.step_height, scope)
    return walk, jump


def _edge_known(smap, edges: Edges, scope=WHOLE_MAP) -> np.ndarray:
    """(E,) bool: the next column of each edge is built (always on the whole map). An edge
    into a column not built is no edge yet: its node is within MARGIN_CELLS of a tile not
    built, so the window builds that tile and judges the edge again, arcs and all (no arcs
    flown over floor the window has not read: 536 of the arena's first round's 536)."""
    if scope.known is None:
        return np.ones(edges.node.size, bool)
    step = np.array(DIRECTIONS, np.int64)[edges.direction]
    col = smap.cell[edges.node]
    ix, iy = col // smap.grid.ny + step[:, 0], col % smap.grid.ny + step[:, 1]
    off = (ix < 0) | (ix >= smap.grid.nx) | (iy < 0) | (iy >= smap.grid.ny)
    return scope.known(np.where(off, -1, ix * smap.grid.ny + iy))


def _fly_arcs(mesh, smap, h, comp, links: Links, edges: Edges, seeds, settings,
              scope=WHOLE_MAP, pairs=None):
    """Add the walk-offs and jumps flown from reachable nodes, in rounds until no new node
    is reached (at most ARC_ROUNDS): (links, arcs flown, (L, 3) landing feet in columns not
    built yet, the ``one_way_pairs`` of the links). pairs : those of ``links`` (None:
    computed); each round adds only its arcs' pairs (no pass over every move)."""
    s = settings
    n = smap.face.size
    v0 = take_off_speed(s)
    tried = np.zeros(edges.node.size, bool)
    ctrl = None
    flown = 0
    lost = [np.zeros((0, 3))]
    pairs = one_way_pairs(comp, links) if pairs is None else pairs
    flights: list = []  # the arcs' moves, joined to the links once at the end
    for round_ in range(ARC_ROUNDS):
        scope.progress(round_ / ARC_ROUNDS)
        reach, _back = closure(comp, links, seeds, n, pairs)
        cand = reach[edges.node] & ~tried
        tried |= cand
        cand &= _edge_known(smap, edges, scope)
        walk, jump = _arcs_to_fly(mesh, smap, h, comp, edges, cand, s, v0, scope)
        if not (walk.any() or jump.any()):
            break
        ctrl = ctrl if ctrl is not None else CharacterController(mesh, s)
        got, off = _arc_links(ctrl, smap, h, edges, (walk, jump), v0, s, scope)
        new = [got]
        lost.append(off)
        flown += int(walk.sum() + jump.sum())
        flights.extend(new)
        pairs = np.unique(np.concatenate([pairs] + [one_way_pairs(comp, g) for g in new]),
                          axis=0)
    return Links.join([links] + flights), flown, np.concatenate(lost), pairs


def _cell_classes(smap, links: Links, reach, back, settings):
    """(code (N,) int8 REACHABLE..INSIDE_CELL, group (N,) int64 the island or trap region
    label of each cell, its smallest node)."""
    n = smap.face.size
    free = smap.state == FREE
    code = np.where(smap.state == INSIDE, INSIDE_CELL, CRAMPED_CELL).astype(np.int64)
    code[free] = np.where(reach[free], np.where(back[free], REACHABLE, TRAP), ISLAND)
    rows = np.flatnonzero((code != REACHABLE)[links.src])  # moves from islands and traps
    a, b = links.src[rows], links.dst[rows]
    same = code[a] == code[b]
    group = components(n, a[same], b[same])
    targets = np.flatnonzero(smap.state == COVERED)
    value = (code * (n + 1) + group).astype(float)
    v = cover_min(smap.columns, smap.stand, free, targets, value, settings)
    ok = np.isfinite(v)
    code[targets[ok]] = (v[ok] // (n + 1)).astype(np.int64)
    group[targets[ok]] = (v[ok] % (n + 1)).astype(np.int64)
    return code.astype(np.int8), group


def triangle_classes(result: Reachability) -> np.ndarray:
    """(T,) int8 per triangle of the mesh: the best class (REACHABLE, then TRAP, then ISLAND,
    as a covered cell takes) of the standable floor on it: its cells', or for a triangle
    crossing no cell centre the cell it took (regions list it the same way); -1 where it has
    no standable floor (walls, ceilings, floor that is only cramped or buried). The face
    colours of the viewport and of report.png."""
    smap = result.standable
    best = np.full(smap.face_state.size, ISLAND + 1, np.int8)
    code = result.cell_class
    on = code <= ISLAND
    np.minimum.at(best, result.cell_face[on], code[on])
    lone = np.flatnonzero(smap.face_span >= 0)
    took = code[smap.face_span[lone]]
    keep = took <= ISLAND
    best[lone[keep]] = np.minimum(best[lone[keep]], took[keep])
    best[best > ISLAND] = -1
    return best


def square_cells(result: Reachability, classes=None) -> np.ndarray:
    """(N,) bool: the cells a face's colour does not show, drawn as squares of ``cell_size``
    where they are: every CRAMPED_CELL, and island and trap cells on a triangle that shows a
    better class (``classes``: ``triangle_classes(result)``, computed when None), such as a
    walled-off room on the same ground face as the yard."""
    classes = triangle_classes(result) if classes is None else np.asarray(classes)
    code = result.cell_class
    worse = (code <= ISLAND) & (code > classes[result.cell_face])
    return (code == CRAMPED_CELL) | worse


class _Flood(NamedTuple):
    """One flood over a map: links, spawn nodes, arcs flown, reach and back (N,) bool, the
    landing feet (L, 3) of arcs into columns not built yet."""

    links: Links
    spawn_cells: np.ndarray
    spawn_drop: np.ndarray
    flown: int
    reach: np.ndarray
    back: np.ndarray
    lost: np.ndarray
    comp: np.ndarray  # mutual_components of ``links`` (the what-if refloods start from it)


def _flood_map(mesh, smap, pts, landed, settings, scope=WHOLE_MAP, stop=None):
    """The moves of ``smap``'s nodes and the flood from the spawn feet ``pts`` (K, 3)
    (``landed``: their ``spawn_floor``): a _Flood. stop : None or callable(reach (N,) bool)
    -> bool, asked with the flood's reach before any arc is flown (walks, steps and falls
    only): True returns None (the window gives up; see ``_flood_window``)."""
    s = settings
    n = smap.face.size
    links, edges = neighbour_links(mesh, smap, s)
    scope.progress(0.0)
    h = node_heights(smap)
    spawn_cells, spawn_drop = spawn_nodes(smap, h, pts, landed[0], landed[1], s)
    seeds = spawn_cells[spawn_cells >= 0]
    comp = mutual_components(n, links)
    pairs = one_way_pairs(comp, links)
    if stop is not None and stop(closure(comp, links, seeds, n, pairs)[0]):
        return None
    links, flown, lost, pairs = _fly_arcs(mesh, smap, h, comp, links, edges, seeds, s, scope,
                                          pairs)
    reach, back = closure(comp, links, seeds, n, pairs)
    return _Flood(links, spawn_cells, spawn_drop, flown, reach, back, lost,
                  mutual_components_grown(comp, links))


def _growth(win, smap, reach, lost, rings: int) -> np.ndarray:
    """Flat tile indices the window adds after a flood over its map ``smap`` (``reach`` (N,)
    bool, ``lost`` (L, 3) arcs' landings in columns not built): the tiles within
    MARGIN_CELLS of a reached node or of such a landing not built yet, and ``rings`` tiles
    around them (empty: the flood is complete)."""
    reached = smap.cell[reach & (smap.state == FREE)]
    need = win.tiles_around(np.concatenate([reached, win.grid.cell_of(lost)]))
    need = need[~win.built[need]]
    return win.grown(need, rings) if need.size else need


def _flood_window(mesh, pts, landed, settings, progress, cache):
    """(map, flood) of the map built tile by tile from the spawns ``pts`` (K, 3) outward
    (core/checks/audits/window.py) until no reached node, and no arc's landing, lies within
    MARGIN_CELLS of a tile not built; each round adds the tiles needed and rings of tiles
    around them, twice as many as the round before. None when a round would build more than
    WINDOW_WHOLE_SHARE of the floor tiles (the whole map is then cheaper), judged first
    before the arcs are flown (the flood without them reaches no more than with them, so it
    decides the same without flying arcs over floor the whole map judges again). cache :
    the ArcCache the rounds fly their arcs through (kept for the whole map's flood)."""
    win = MapWindow(mesh, settings)
    scope = Scope(win.known, float((mesh.vertices @ win.grid.up).min()), cache,
                  lambda _f: progress(0.95 * float(win.built.mean())))
    grow = win.tiles_around(win.grid.cell_of(np.concatenate([pts, landed[0]])), rings=1)
    rings = 1
    for round_ in range(WINDOW_ROUNDS + 1):
        if win.share(grow) > WINDOW_WHOLE_SHARE or (round_ == 0 and first_round_spills(
                win, grow, pts, landed, settings, WINDOW_WHOLE_SHARE)):
            return None
        win.add(grow)
        smap = win.map()
        def spills(reach, smap=smap, rings=rings):
            return win.share(_growth(win, smap, reach, np.zeros((0, 3)), rings)) > \
                WINDOW_WHOLE_SHARE

        flood = _flood_map(mesh, smap, pts, landed, settings, scope, spills)
        if flood is None:
            return None
        grow = _growth(win, smap, flood.reach, flood.lost, rings)
        if not grow.size:
            break
        rings *= 2  # open floor: few rounds (a walled area needs no more tiles and stops)
    return smap, flood


def reachability(mesh, spawns, settings=None, progress=None, *,
                 explain: bool = True, workers: int = 1) -> Reachability:
    """Where the character starting at foot points ``spawns`` (K, 3) can go (module
    docstring). settings : ControllerSettings (default if None); ``jump_height > 0`` adds
    jumps. An engine ``model`` is judged by the exact model climbing the engine's risers
    (``reach_links.engine_step_rule``). progress :
    None or callable(fraction in [0, 1]) called between stages (at least every few seconds
    on big levels); an exception it raises stops the work and propagates (a cancel: nothing
    is computed or kept). explain : False leaves the islands and traps unexplained (for a
    caller that reads only the cells, classes and moves: ``collision_diff``): the same
    cells, classes, moves and regions (faces, area, point), but every region's ``causes``
    is (), its ``visible`` True (no line of sight is cast) and ``what_if`` is () (no
    refloods). workers : processes sharing the walk-offs and jumps each round flies and
    the what-if jumps (``reach_arcs.fly_shared``: forked children of this one; default 1,
    this process only; no fork inside Blender's UI process); the same answer for any number.

    A level whose whole map would hold more than WINDOW_MIN_SPANS spans (and whose map is
    not built yet) is judged tile by tile from the spawns outward (``_flood_window``): the
    time follows the playable area; its islands are the free floor of the tiles built. When
    the reached floor keeps spilling out (a round would build more than WINDOW_WHOLE_SHARE
    of the floor tiles: an open arena, a map with spawns all over it), the whole map is
    built instead, once, and kept with the mesh for the audits."""
    s = engine_step_rule(settings_or_default(settings))
    pts = as_points(spawns, "spawns")
    tell = _rising(progress or _no_progress)
    tell(0.0)
    landed = spawn_floor(mesh, pts, s)
    got, cache = None, ArcCache(workers)
    if pts.shape[0] and not has_map(mesh, s) and window_worthwhile(mesh, s, WINDOW_MIN_SPANS):
        got = _flood_window(mesh, pts, landed, s, tell, cache)
    if got is not None:
        smap, fl = got
    else:
        smap = standable_map(mesh, s, lambda f: tell(0.6 * f))
        fl = _flood_map(mesh, smap, pts, landed, s,
                        Scope(cache=cache, progress=lambda f: tell(0.6 + 0.35 * f)))
    tell(0.95)
    code, group = _cell_classes(smap, fl.links, fl.reach, fl.back, s)
    faces, area = span_faces(smap, np.flatnonzero(code <= TRAP))
    islands, traps, sentences = _regions(mesh, smap, code, group, fl, s, explain, workers)
    return Reachability(faces, area, islands, traps, smap.foot, smap.face, code,
                        smap.grid.cell, fl.spawn_cells, fl.links, fl.flown, smap, s,
                        fl.spawn_drop, sentences)


def _regions(mesh, smap, code, group, fl: _Flood, s, explain: bool, workers: int) -> tuple:
    """(islands, traps, what-if sentences) of the cell classes ``code`` (``reachability``):
    with ``explain`` each region's causes and line of sight, and the what-if refloods;
    without, the regions alone (causes (), visible True: not judged) and no sentences.
    workers : processes sharing the what-if jumps (``reflood``)."""
    if not explain:
        return regions(smap, code, group, ISLAND), regions(smap, code, group, TRAP), ()
    h = node_heights(smap)
    free = smap.state == FREE
    eyes = np.flatnonzero(free & (code <= TRAP))
    failed: tuple = ([], [])  # the failed border moves of the islands, of the traps
    islands = regions(smap, code, group, ISLAND,
                      explainer(mesh, smap, h, free & (code <= TRAP), eyes, s, failed[0]))
    traps = regions(smap, code, group, TRAP,
                    explainer(mesh, smap, h, free & (code == REACHABLE), eyes, s, failed[1],
                              fl.links))
    again = reflood(mesh, smap, s, fl.links, fl.spawn_cells[fl.spawn_cells >= 0], failed,
                    workers, fl.comp)
    return islands, traps, what_if(islands, traps, s, again)
