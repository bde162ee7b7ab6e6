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
    standable_map,
)
from .reach_arcs import WALKOFF_MAX_CELLS, fly, take_off_speed
from .reach_links import (
    DIRECTIONS,
    FALL,
    JUMP,
    WALK,
    Edges,
    Links,
    engine_step_rule,
    neighbour_links,
    node_heights,
    reach_cells,
)

REACHABLE, TRAP, ISLAND, CRAMPED_CELL, INSIDE_CELL = 0, 1, 2, 3, 4
CELL_CLASSES = ("reachable", "trap", "island", "cramped", "inside")
ARC_ROUNDS = 8  # rounds of arcs from newly reached nodes at most (each can reach more)


class Region(NamedTuple):
    """Standable floor of one class: faces (F,) int64; area m^2; point (3,) a foot point
    where the character stands in it."""

    faces: np.ndarray
    area: float
    point: np.ndarray


class Reachability(NamedTuple):
    """Result of ``reachability``. N cells (the standable map's spans).

    reachable_faces : (F,) int64 faces with floor a spawn reaches (traps included);
    reachable_area : m^2 of that floor (traps included);
    islands, traps : tuples of Region, largest first (module docstring);
    cell_points : (N, 3) each cell's floor point (a foot point, metres); cell_face : (N,)
        int64 its face; cell_class : (N,) int8 REACHABLE / TRAP / ISLAND / CRAMPED_CELL /
        INSIDE_CELL (buried in a solid: not drawn); cell_size : metres (the overlay draws a
        square of this side at each cell point);
    spawn_cells : (K,) int64 the node each spawn starts from (-1: the spawn stands on no
        free cell within a cell and ``step_height``);
    moves : Links over cells (src, dst, kind: WALK, STEP_UP, STEP_DOWN, FALL, JUMP);
    arcs : int controller arcs flown (walk-offs and jumps);
    standable : the StandableMap it was computed from; settings : the character.
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

    def can_reach(self, points) -> np.ndarray:
        """(P,) bool: a spawn reaches the floor at foot points ``points`` (P, 3) (traps
        included): the class of the cell under each point, floor within ``step_height``
        below or above it; False off the map."""
        p = as_points(points, "points")
        smap = self.standable
        step = self.settings.step_height
        j = smap.columns.lookup(smap.grid.cell_of(p), p @ smap.grid.up, -step, step)
        return (j >= 0) & (self.cell_class[np.maximum(j, 0)] <= TRAP)


def nearest_nodes(smap: StandableMap, h, points, settings) -> np.ndarray:
    """(P,) int64 the FREE span nearest each foot point (P, 3) among the cells within
    ``reach_cells`` of its cell (a character perched on an edge stands a radius beyond the
    floor's last cell), stand heights within ``step_height`` of the point (-1: none)."""
    up = smap.grid.up
    ph = points @ up
    cell = smap.grid.cell_of(points)
    best = np.full(points.shape[0], -1, np.int64)
    best_d = np.full(points.shape[0], np.inf)
    step = settings.step_height
    k = reach_cells(settings, smap.grid.cell)
    for dx in range(-k, k + 1):
        for dy in range(-k, k + 1):
            j = smap.columns.lookup(shifted(smap.grid, cell, dx, dy), ph, -step, step,
                                    smap.state == FREE, h)
            jj = np.maximum(j, 0)
            d = np.where(j >= 0, ((smap.stand[jj] - points) ** 2).sum(1), np.inf)
            better = d < best_d
            best[better], best_d[better] = j[better], d[better]
    return best


def mutual_components(n: int, links: Links) -> np.ndarray:
    """(n,) int64 component of every span over the moves that go both ways: walks (two free
    neighbouring cells within a slope's rise of each other: walking is symmetric) and the
    other moves present both ways (a step up and the step down back)."""
    walk = links.kind == WALK
    a, b = links.src[~walk], links.dst[~walk]
    both = np.isin(b * n + a, a * n + b)
    return components(n, np.concatenate([links.src[walk], a[both]]),
                      np.concatenate([links.dst[walk], b[both]]))


def _flood(comp, a, b, seeds, n) -> np.ndarray:
    """(n,) bool by component label: the labels reached from ``seeds`` over the condensed
    edges a -> b (labels), in array rounds."""
    on = np.zeros(n, bool)
    on[comp[seeds]] = True
    for _ in range(n):  # at most one round per component (a chain of one-way moves)
        nxt = b[on[a] & ~on[b]]
        if not nxt.size:
            break
        on[nxt] = True
    return on


def closure(comp, links: Links, seeds, n: int):
    """(reach, back) (n,) bool per span: reached from the spawn nodes ``seeds``; a spawn's
    node is reachable from it. Works on components (``mutual_components``) joined by the
    one-way moves."""
    ca, cb = comp[links.src], comp[links.dst]
    one = ca != cb
    pairs = np.unique(np.stack([ca[one], cb[one]], 1), axis=0) if one.any() else \
        np.zeros((0, 2), np.int64)
    fwd = _flood(comp, pairs[:, 0], pairs[:, 1], seeds, n)
    back = _flood(comp, pairs[:, 1], pairs[:, 0], seeds, n)
    return fwd[comp], back[comp]


def _worth(smap, h, comp, nodes, dirs, reach, rise) -> np.ndarray:
    """(E,) bool: within ``reach`` (E,) cells along each direction lies a FREE span of
    another component at most ``rise`` metres above the node (an arc there could add a move
    the links do not have; landing in the node's own component adds nothing)."""
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
            worth[rows[(j >= 0) & (comp[np.maximum(j, 0)] != comp[nodes[rows]])]] = True
    return worth


def _arc_reach(smap, h, nodes, settings, v0) -> np.ndarray:
    """(E,) cells an arc from ``nodes`` can carry the character horizontally before it is as
    low as the level's lowest point: ``speed`` x the time up and down, plus a radius and a
    cell (where the arc ends perched on an edge)."""
    s = settings
    g = max(s.gravity, 1e-12)
    drop = np.maximum(h[nodes] - float((smap.stand[smap.state == FREE] @ smap.grid.up).min()),
                      0.0) + s.height
    t_air = 2.0 * v0 / g + np.sqrt(2.0 * drop / g)
    return np.ceil((s.speed * t_air + s.radius) / smap.grid.cell).astype(np.int64) + 1


def _arc_links(ctrl, smap, h, edges: Edges, sel, v0, settings, kind) -> Links:
    """Fly the arcs of the edges ``sel`` (E,) bool (core.reach_arcs.fly) and link each
    landed arc's node to the node it stands on."""
    nodes, dirs = edges.node[sel], edges.direction[sel]
    vec = np.array([dx * smap.grid.e1 + dy * smap.grid.e2 for dx, dy in DIRECTIONS])
    arcs = fly(ctrl, smap.stand[nodes], vec[dirs], v0, WALKOFF_MAX_CELLS * smap.grid.cell)
    land = nearest_nodes(smap, h, arcs.foot, settings)
    ok = arcs.landed & (land >= 0) & (land != nodes)
    return Links(nodes[ok], land[ok], np.full(int(ok.sum()), kind, np.int8))


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


def _arcs_to_fly(mesh, smap, h, comp, edges: Edges, cand, settings, v0):
    """(walk-offs, jumps) (E,) bool among the candidate edges ``cand``: walk-offs from edges
    with floor below (always where it is steep), jumps when ``v0 > 0``; both only where an
    arc could land in another component (``_worth``)."""
    s = settings
    walk = cand & edges.drop & ~edges.fell
    if walk.any():
        below, steep = _drop_landing(mesh, smap, edges, walk, s)
        rows = np.flatnonzero(below & ~steep)
        keep = _worth(smap, h, comp, edges.node[rows], edges.direction[rows],
                      _arc_reach(smap, h, edges.node[rows], s, 0.0), s.step_height)
        walk = steep.copy()
        walk[rows[keep]] = True
    jump = np.zeros_like(cand)
    if v0 > 0.0 and cand.any():
        rows = np.flatnonzero(cand)
        jump[rows] = _worth(smap, h, comp, edges.node[rows], edges.direction[rows],
                            _arc_reach(smap, h, edges.node[rows], s, v0),
                            s.jump_height + s.step_height)
    return walk, jump


def _fly_arcs(mesh, smap, h, comp, links: Links, edges: Edges, seeds, settings):
    """Add the walk-offs and jumps flown from reachable nodes, in rounds until no new node
    is reached (at most ARC_ROUNDS): (links, arcs flown)."""
    s = settings
    n = smap.face.size
    v0 = take_off_speed(s)
    tried = np.zeros(edges.node.size, bool)
    ctrl = None
    flown = 0
    for _ in range(ARC_ROUNDS):
        reach, _back = closure(comp, links, seeds, n)
        cand = reach[edges.node] & ~tried
        tried |= cand
        walk, jump = _arcs_to_fly(mesh, smap, h, comp, edges, cand, s, v0)
        if not (walk.any() or jump.any()):
            break
        ctrl = ctrl if ctrl is not None else CharacterController(mesh, s)
        new = [links]
        for sel, speed, kind in ((walk, 0.0, FALL), (jump, v0, JUMP)):
            if sel.any():
                new.append(_arc_links(ctrl, smap, h, edges, sel, speed, s, kind))
                flown += int(sel.sum())
        links = Links.join(new)
    return links, flown


def _cell_classes(smap, links: Links, reach, back, settings):
    """(code (N,) int8 REACHABLE..INSIDE_CELL, group (N,) int64 the island or trap region
    label of each cell, its smallest node)."""
    n = smap.face.size
    free = smap.state == FREE
    code = np.where(smap.state == INSIDE, INSIDE_CELL, CRAMPED_CELL).astype(np.int64)
    code[free] = np.where(reach[free], np.where(back[free], REACHABLE, TRAP), ISLAND)
    a, b = links.src, links.dst
    same = (code[a] == code[b]) & (code[a] != REACHABLE)
    group = components(n, a[same], b[same])
    targets = np.flatnonzero(smap.state == COVERED)
    value = (code * (n + 1) + group).astype(float)
    v = cover_min(smap.columns, smap.stand, free, targets, value, settings)
    ok = np.isfinite(v)
    code[targets[ok]] = (v[ok] // (n + 1)).astype(np.int64)
    group[targets[ok]] = (v[ok] % (n + 1)).astype(np.int64)
    return code.astype(np.int8), group


def _span_faces(smap, spans):
    """Faces and their areas (m^2) of the spans ``spans`` (S,) (faces crossing no cell centre
    included through their span): (faces (F,) sorted, area float)."""
    lone = np.flatnonzero(np.isin(smap.face_span, spans))
    faces = np.unique(np.concatenate([smap.face[spans], lone]))
    area = float(smap.weight[spans].sum() + smap.standable_area[lone].sum()
                 + smap.cramped_area[lone].sum())
    return faces, area


def _regions(smap, code, group, cls) -> tuple:
    """The regions of class ``cls`` (ISLAND or TRAP), largest first (one small numpy split
    per class, not a loop over cells)."""
    spans = np.flatnonzero(code == cls)
    if not spans.size:
        return ()
    _labels, inv = np.unique(group[spans], return_inverse=True)
    inv = inv.ravel()
    free = smap.state[spans] == FREE
    mid = np.stack([np.bincount(inv, smap.foot[spans, i]) for i in range(3)], 1) / np.bincount(
        inv)[:, None]
    d = np.where(free, ((np.nan_to_num(smap.stand[spans]) - mid[inv]) ** 2).sum(1), np.inf)
    pick = np.lexsort((d, inv))
    point = smap.stand[spans[pick[np.r_[True, inv[pick][1:] != inv[pick][:-1]]]]]
    order = np.argsort(inv, kind="stable")
    cuts = np.cumsum(np.bincount(inv))[:-1]
    out = []
    for r, members in enumerate(np.split(spans[order], cuts)):
        faces, a = _span_faces(smap, members)
        out.append(Region(faces, a, point[r]))
    return tuple(sorted(out, key=lambda reg: -reg.area))


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


def reachability(mesh, spawns, settings=None) -> Reachability:
    """Where the character starting at foot points ``spawns`` (K, 3) can go (module
    docstring). settings : ControllerSettings (default if None); ``jump_height > 0`` adds
    jumps. An engine ``model`` is judged by the exact model climbing the engine's risers
    (``reach_links.engine_step_rule``)."""
    s = engine_step_rule(settings_or_default(settings))
    pts = as_points(spawns, "spawns")
    smap = standable_map(mesh, s)
    n = smap.face.size
    links, edges = neighbour_links(mesh, smap, s)
    h = node_heights(smap)
    spawn_cells = nearest_nodes(smap, h, pts, s)
    seeds = spawn_cells[spawn_cells >= 0]
    comp = mutual_components(n, links)
    links, flown = _fly_arcs(mesh, smap, h, comp, links, edges, seeds, s)
    reach, back = closure(comp, links, seeds, n)
    code, group = _cell_classes(smap, links, reach, back, s)
    faces, area = _span_faces(smap, np.flatnonzero(code <= TRAP))
    return Reachability(faces, area, _regions(smap, code, group, ISLAND),
                        _regions(smap, code, group, TRAP), smap.foot, smap.face, code,
                        smap.grid.cell, spawn_cells, links, flown, smap, s)
