"""The standable map: where on the walkable floor the character can stand, at capsule
resolution, judged with the real capsule.

The floor is sampled on a horizontal grid of square cells of side
``STANDABLE_CELL_FRACTION * radius`` (radius / 2: 0.175 m for the default character). Each
walkable face crossing a cell centre gives a *span* there (core/audits/spans.py), so a
column holds one span per storey. Every span gets one state:

- FREE: the capsule fits with its foot in this cell: resting on the span's face at the cell
  centre, or pushed out of its contacts by at most one cell (a strip between pillars), it
  touches nothing but floor, and its whole height is free.
- COVERED: the capsule does not fit here, but the foot disk (radius ``radius`` around the
  foot point) of a FREE span on the same floor (heights within ``step_height``) overlaps the
  cell: the character's body stands over it (the floor beside a wall, a step's riser foot).
- CRAMPED: neither: no character can stand over this floor (a slot narrower than the
  capsule beyond reach of its mouth, the floor under a slab lower than the character).
- INSIDE: the span lies inside a closed solid (winding number, core/audits/cells.py), or is
  sealed under something lower than ``sealed_gap`` (the radius) that a body stands on: buried
  floor, not a place at all. Under a higher slab whose top is within a step, the body stands
  on the slab, not over the floor: that floor is CRAMPED (a slot).

*Standable* area is FREE + COVERED. Each span stands for ``area(face) / spans(face)`` of its
face, so per face the standable, cramped and buried areas add up to its area (a face crossing
no cell centre takes the state of the span of its centroid's cell on its floor, if any).
Cramped spans joined across cell sides (heights within ``step_height``) form *cramped
regions*, each with its area and a representative foot point a designer can go to; for
them the clearance above the floor (a ray up) is measured too, so headroom is read off the
same map.

The map is computed once per (mesh, settings) and kept (weakly, with the mesh) so the stand
test, the headroom audit and reachability share it.

Frame and units: world space, metres, square metres; ``settings.up`` is up.
"""

from __future__ import annotations

import math
import weakref
from typing import NamedTuple

import numpy as np

from ...constants import STANDABLE_CELL_FRACTION
from ..walkability import WALKABLE
from .cells import CellGrid, Columns, cell_grid, columns, shifted, shifted_xy
from .common import (
    EMPTY_I,
    PROBE_LIFT,
    column_reach,
    components,
    face_classes,
    raycast_chunks,
    settings_or_default,
)
from .screen import ground_screen, open_at
from .spans import (
    Blocking,
    Spans,
    blocking,
    build_spans,
    mark_inside,
    push_out,
    rest_at,
    resting_centres,
    squeezed,
)

FREE, COVERED, CRAMPED, INSIDE = 0, 1, 2, 3
STATE_NAMES = ("free", "covered", "cramped", "inside")


class StandableMap(NamedTuple):
    """The standable map of a level (module docstring). N spans, T triangles, R regions.

    grid : CellGrid (cell side ``grid.cell`` metres);
    face, cell : (N,) int64 each span's walkable face and flat cell index;
    foot : (N, 3) the cell centre on the face (metres); height : (N,) its height along up;
    state : (N,) int8 FREE / COVERED / CRAMPED / INSIDE;
    stand : (N, 3) where the character stands in FREE spans (the floor point at the cell
        centre or pushed within one cell, or the support of a raised rest: a stair nosing),
        NaN for the others; centre : (N, 3) the lower-sphere centre of that capsule;
    screened : (N,) bool free by the open-ground screen (no mesh query);
    depth : (N,) metres, deepest blocking penetration of the capsule at the cell centre (0 if
        free there); blocker : (N,) int64 that triangle (-1);
    weight : (N,) square metres of its face each span stands for;
    clearance : (N,) metres free above the foot (ray up) for CRAMPED spans (inf: nothing
        above), NaN for the others; ceiling : (N,) int64 the triangle above (-1);
    region : (N,) int64 cramped region of each CRAMPED span (-1 for the others), regions
        numbered largest first; region_area : (R,) m^2; region_point : (R, 3) a cramped foot
        point of each region (its span nearest the region's middle);
    standable_area, cramped_area, buried_area : (T,) m^2 per triangle (0 off walkable faces);
    face_state : (T,) int8 for faces crossing no cell centre, the state they took (-1: none
        or not needed); face_span : (T,) int64 that span (-1);
    columns : Columns, the spans indexed by cell for lookups (``Columns.lookup``);
    classes : (T,) int8 every triangle's class (``classify_triangles`` with the settings).
    """

    grid: CellGrid
    face: np.ndarray
    cell: np.ndarray
    foot: np.ndarray
    height: np.ndarray
    state: np.ndarray
    stand: np.ndarray
    centre: np.ndarray
    screened: np.ndarray
    depth: np.ndarray
    blocker: np.ndarray
    weight: np.ndarray
    clearance: np.ndarray
    ceiling: np.ndarray
    region: np.ndarray
    region_area: np.ndarray
    region_point: np.ndarray
    standable_area: np.ndarray
    cramped_area: np.ndarray
    buried_area: np.ndarray
    face_state: np.ndarray
    face_span: np.ndarray
    columns: Columns
    classes: np.ndarray

    @property
    def standable(self) -> np.ndarray:
        """(N,) bool FREE or COVERED."""
        return self.state <= COVERED

    def cell_centres(self) -> np.ndarray:
        """(N, 3) foot points of the spans (the overlay draws one square per span)."""
        return self.foot


_CACHE: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def exact_model(settings):
    """``settings`` judged by the exact model (the limits as given): the map and the moves do
    not model an engine's padding, climb or edge support (``ControllerSettings.model``)."""
    return settings if settings.exact else settings.replace(model="exact")


def standable_map(mesh, settings=None, progress=None) -> StandableMap:
    """The standable map of ``mesh`` for the character of ``settings`` (module docstring),
    judged by the exact model (``exact_model``); kept with the mesh: a second call with equal
    settings returns the same map. progress : None or callable(fraction in [0, 1]) called
    between the stages of a build; an exception it raises stops the build (nothing kept)."""
    s = exact_model(settings_or_default(settings))
    cached = _CACHE.get(mesh)
    if cached is not None and cached[0] == s:
        return cached[1]
    result = _build(mesh, s, progress or (lambda _f: None))
    _CACHE[mesh] = (s, result)
    return result


def has_map(mesh, settings) -> bool:
    """True when the map of ``mesh`` for ``settings`` is built and kept."""
    cached = _CACHE.get(mesh)
    return cached is not None and cached[0] == exact_model(settings_or_default(settings))


class Free(NamedTuple):
    """Per span: screened, free (at the centre or pushed), stand (N, 3), centre (N, 3),
    depth, blocker."""

    screened: np.ndarray
    free: np.ndarray
    stand: np.ndarray
    centre: np.ndarray
    depth: np.ndarray
    blocker: np.ndarray


def free_spans(mesh, s, sp: Spans, rec, classes, cell, screen=None) -> Free:
    """Which spans the capsule fits on: the screen, the inside test for the rest (sets
    ``sp.inside``; a screened span is outside every solid: nothing walkable or up-facing is
    above it), one batched contact query (the floor rest at the cell centre), the raised
    rest and the push-out of the blocked ones (core/checks/audits/spans.py). screen : the
    mesh's ``ground_screen`` when already built (None: built here)."""
    n = sp.face.size
    a = resting_centres(s, sp.foot, sp.normal)
    screened = np.zeros(n, bool)
    if n:
        screen = ground_screen(mesh, s, classes) if screen is None else screen
        screened = open_at(screen, s, a, sp.foot)
    mark_inside(sp, rec, np.flatnonzero(~screened))
    free = screened.copy()
    stand = np.where(screened[:, None], sp.foot, np.nan)
    centre = np.where(screened[:, None], a, np.nan)
    depth = np.zeros(n)
    blocker = np.full(n, -1, np.int64)
    test = np.flatnonzero(~screened & ~sp.inside)
    blk = blocking(mesh, s, a[test], classes)
    depth[test], blocker[test] = blk.depth, blk.blocker
    low = squeezed(mesh, s, a[test], classes, blk)
    if low.any():  # fits lowered into its skin under a ceiling: free there
        blk = Blocking(blk.blocked & (low == 0.0), *blk[1:])
        depth[test[low > 0.0]], blocker[test[low > 0.0]] = 0.0, -1
    rest = rest_at(mesh, s, classes, sp.foot[test], sp.normal[test], blk)
    pushed, pushed_c = push_out(mesh, s, classes, sp.foot[test], sp.normal[test], blk, rest,
                                cell)
    ok = ~np.isnan(pushed[:, 0])
    gap = _gap_under_support(mesh, s, sp.foot[test], rest)
    rested = rest.free & ~np.isfinite(gap)
    sp.inside[test[~ok & (gap < sealed_gap(s))]] = True  # sealed under its support
    stand[test] = np.where(ok[:, None], pushed, np.where(rested[:, None], rest.stand, np.nan))
    centre[test] = np.where(ok[:, None], pushed_c,
                            np.where(rested[:, None], rest.centre, np.nan))
    free[test] = rested | ok
    lowered = (low > 0.0) & rested & ~rest.raised
    sq = test[lowered]
    centre[sq] = a[sq] - np.outer(low[lowered], s.up_vector)
    return Free(screened, free, stand, centre, depth, blocker)


def sealed_gap(settings) -> float:
    """Metres: floor under something lower than this (the capsule's radius) is sealed, not a
    place: a trim or a second floor laid 5-13 cm over a floor (OpenArena's delta: 4,400 m2
    of it), as buried as floor inside a solid; from this gap up it is a slot (cramped, a
    headroom finding: oa_bases7's 0.42 m slot under a brush)."""
    return settings.radius


def _gap_under_support(mesh, s, foot, rest) -> np.ndarray:
    """(K,) metres: for raised rests (``rest.raised``) whose support is not beside the floor
    point ``foot`` (K, 3) but over it, the clearance between the floor and what lies over
    it (the ray up meets something below the support's height: a slab 0.3-0.6 m over the
    floor, its top within ``step_height``; the body stands on the slab, not over this
    floor); inf for the others. A stair nosing in front of the next riser is beside the
    floor: the ray up passes it."""
    out = np.full(foot.shape[0], np.inf)
    rows = np.flatnonzero(rest.raised)
    if rows.size:
        up = s.up_vector
        rise = (rest.stand[rows] - foot[rows]) @ up
        clearance, _ = _clearance(mesh, s, foot[rows])
        out[rows] = np.where(clearance < rise, clearance, np.inf)
    return out


def cover_offsets(settings, cell) -> list:
    """Cell offsets (dx, dy) from which a FREE span's foot disk (its foot within one cell of
    its centre) can overlap a cell."""
    r = settings.radius
    k = int(math.ceil(r / cell)) + 2
    out = []
    for dx in range(-k, k + 1):
        for dy in range(-k, k + 1):
            gx = max(abs(dx) * cell - 1.5 * cell, 0.0)
            gy = max(abs(dy) * cell - 1.5 * cell, 0.0)
            if gx * gx + gy * gy <= r * r:
                out.append((dx, dy))
    return out


def cover_min(cols: Columns, stand, free, targets, value, settings):
    """(T,) the least ``value`` (N,) over the FREE spans whose foot disk overlaps each target
    span's cell (``targets`` (T,) span indices), heights within ``step_height``; +inf where
    none does (the target is CRAMPED). cols : the spans' Columns; stand (N, 3) and free (N,)
    as in the map. The covering spans are found once per map (``cover_spans``) and kept:
    reachability's cell classes ask again for the covered spans the build asked for."""
    spans = cover_spans(cols, stand, free, targets, settings)
    if not spans.size:
        return np.full(targets.size, np.inf)
    return np.where(spans >= 0, value[np.maximum(spans, 0)], np.inf).min(axis=1)


_COVER: list = [None]  # the last cover_spans kept: (weak refs to stand, cols.cell and
# cols.height; settings; free; targets; spans)


def cover_spans(cols: Columns, stand, free, targets, settings) -> np.ndarray:
    """(T, O) int64 per target span (``cover_min``) and cover offset (``cover_offsets``) the
    FREE span whose foot disk overlaps the target's cell (-1: none). The last answer is
    kept (``stand`` and the columns weakly, until the map is gone or the next call) for the
    same map, free mask and settings: the next call, for a subset of its targets (the cell
    classes of reachability on the map just built), reads its rows."""
    kept, _COVER[0] = _COVER[0], None  # read once: held no longer than needed
    if kept is not None and kept[0]() is stand and kept[1]() is cols.cell and \
            kept[2]() is cols.height and kept[3] == settings and \
            np.array_equal(kept[4], free) and kept[5].size:
        rows = np.minimum(np.searchsorted(kept[5], targets), kept[5].size - 1)
        if (kept[5][rows] == targets).all():
            return kept[6][rows].astype(np.int64)
    spans = _cover_spans(cols, stand, free, targets, settings)
    if targets.size and (np.diff(targets) > 0).all():  # sorted: searched by a later call
        _COVER[0] = (weakref.ref(stand, _forget_cover), weakref.ref(cols.cell),
                     weakref.ref(cols.height), settings, free.copy(), np.array(targets),
                     spans.astype(np.int32 if free.size < 2 ** 31 else np.int64))
    return spans


def _forget_cover(_ref) -> None:
    """The map whose covering spans were kept is gone: drop them."""
    _COVER[0] = None


def _cover_spans(cols: Columns, stand, free, targets, settings) -> np.ndarray:
    """``cover_spans`` computed: one column lookup per cover offset."""
    s = settings
    m_grid = cols.grid
    c = m_grid.cell
    offsets = cover_offsets(s, c)
    out = np.full((targets.size, len(offsets)), -1, np.int64)
    if not targets.size:
        return out
    tc, th = cols.cell[targets], cols.height[targets]
    tx, ty = m_grid.centre_xy(tc)
    fx, fy = m_grid.coords(stand)  # NaN off FREE: read only where ok (a FREE span)
    r2 = s.radius * s.radius
    tix, tiy = np.divmod(tc, m_grid.ny)  # once for the ~40 offsets
    for o, (dx, dy) in enumerate(offsets):
        j = cols.lookup(shifted_xy(m_grid, tix, tiy, dx, dy), th, -s.step_height,
                        s.step_height, free)
        ok = j >= 0
        jj = np.maximum(j, 0)
        gx = np.maximum(np.abs(fx[jj] - tx) - 0.5 * c, 0.0)
        gy = np.maximum(np.abs(fy[jj] - ty) - 0.5 * c, 0.0)
        ok &= gx * gx + gy * gy <= r2
        out[ok, o] = j[ok]
    return out


def _regions(cols: Columns, sp: Spans, cramped, weight, settings):
    """Cramped regions: (region (N,) int64, -1 off them, largest first; area (R,); point
    (R, 3))."""
    n = sp.face.size
    idx = np.flatnonzero(cramped)
    region = np.full(n, -1, np.int64)
    if not idx.size:
        return region, np.empty(0), np.empty((0, 3))
    local = np.full(n, -1, np.int64)
    local[idx] = np.arange(idx.size)
    a, b = [EMPTY_I], [EMPTY_I]
    for dx, dy in ((1, 0), (0, 1)):
        j = cols.lookup(shifted(cols.grid, sp.cell[idx], dx, dy), sp.height[idx],
                        -settings.step_height, settings.step_height, cramped)
        a.append(np.arange(idx.size)[j >= 0])
        b.append(local[j[j >= 0]])
    lab = components(idx.size, np.concatenate(a), np.concatenate(b))
    _, lab = np.unique(lab, return_inverse=True)
    lab = lab.ravel()
    area = np.bincount(lab, weight[idx])
    rank = np.empty(area.size, np.int64)
    order = np.lexsort((np.arange(area.size), -area))  # largest first, ties by position
    rank[order] = np.arange(area.size)
    lab = rank[lab]
    area = area[order]
    cnt = np.bincount(lab)
    mid = np.stack([np.bincount(lab, sp.foot[idx, i]) for i in range(3)], 1) / cnt[:, None]
    d = ((sp.foot[idx] - mid[lab]) ** 2).sum(1)
    pick = np.lexsort((d, lab))
    first = pick[np.r_[True, lab[pick][1:] != lab[pick][:-1]]]
    region[idx] = lab
    return region, area, sp.foot[idx][first]


def face_areas(mesh, sp: Spans, state, cols: Columns, settings, classes, count=None):
    """Per span weight (N,), and per triangle (T,) standable, cramped and buried area, the
    state and span of faces crossing no cell centre (their centroid's span). count : (T,)
    spans per face (None: counted in ``sp``; a partial map passes its estimate; a face of
    count 0 crossing no centre)."""
    t = mesh.n_triangles
    count = np.bincount(sp.face, minlength=t) if count is None else count
    weight = mesh.areas[sp.face] / np.maximum(count[sp.face], 1)
    face_state = np.full(t, -1, np.int8)
    face_span = np.full(t, -1, np.int64)
    lone = np.flatnonzero((count == 0) & (classes == WALKABLE))
    if lone.size and sp.face.size:
        cen = mesh.vertices[mesh.triangles[lone]].mean(axis=1)
        h = cen @ settings.up_vector
        j = cols.lookup(cols.grid.cell_of(cen), h, -settings.step_height,
                        settings.step_height)
        ok = j >= 0
        face_span[lone[ok]] = j[ok]
        face_state[lone[ok]] = state[j[ok]]
    areas = []
    for states in ((FREE, COVERED), (CRAMPED,), (INSIDE,)):
        a = np.bincount(sp.face, weight * np.isin(state, states), minlength=t)
        a += np.where(np.isin(face_state, states), mesh.areas, 0.0)
        areas.append(a)
    return weight, face_state, face_span, areas


def _clearance(mesh, settings, foot):
    """Metres free above floor points ``foot`` (K, 3) (a ray up; inf: nothing above) and the
    triangle met (-1)."""
    u = settings.up_vector
    k = foot.shape[0]
    if not k:
        return np.empty(0), EMPTY_I
    t, tri = raycast_chunks(mesh, foot + u * PROBE_LIFT, np.tile(u, (k, 1)),
                            column_reach(mesh, foot, u))
    return t + PROBE_LIFT, tri


def covered_spans(mesh, s, cols: Columns, sp: Spans, stand, free, targets):
    """(covered (T,) bool, sealed (T,) bool) of the CRAMPED spans ``targets``: covered when a
    FREE span's body (``stand`` (N, 3), ``free`` (N,) bool) stands over them (``cover_min``)
    and nothing lies between their floor and that body's foot (the lowest covering foot
    counts; a ray up from the target's floor must reach its height): a body standing on a
    slab 0.3-0.6 m over the floor (within ``step_height``) is not over the floor under the
    slab (tests/core/test_standable_stacked.py).
    Sealed: not covered for something over the floor lower than ``sealed_gap``."""
    up = s.up_vector
    lowest = cover_min(cols, stand, free, targets, stand @ up, s)  # read on FREE only
    ok = np.isfinite(lowest)
    sealed = np.zeros(targets.size, bool)
    rise = np.where(ok, lowest - sp.height[targets], 0.0)
    check = np.flatnonzero(ok & (rise > PROBE_LIFT))
    if check.size:
        clearance, _ = _clearance(mesh, s, sp.foot[targets[check]])
        ok[check] = clearance >= rise[check]
        sealed[check] = ~ok[check] & (clearance < sealed_gap(s))
    return ok, sealed


def _build(mesh, s, progress) -> StandableMap:
    classes = face_classes(mesh, s)
    c = STANDABLE_CELL_FRACTION * s.radius
    grid = cell_grid(mesh, s.up_vector, c)
    sp, rec = build_spans(mesh, s, grid, classes)
    progress(0.3)
    cols = columns(grid, sp.cell, sp.height)
    fr = free_spans(mesh, s, sp, rec, classes, c)
    progress(0.9)
    state = np.where(sp.inside, INSIDE, np.where(fr.free, FREE, CRAMPED)).astype(np.int8)
    targets = np.flatnonzero(state == CRAMPED)
    covered, sealed = covered_spans(mesh, s, cols, sp, fr.stand, fr.free, targets)
    state[targets[covered]] = COVERED
    state[targets[sealed]] = INSIDE
    weight, face_state, face_span, areas = face_areas(mesh, sp, state, cols, s, classes)
    cramped = state == CRAMPED
    region, region_area, region_point = _regions(cols, sp, cramped, weight, s)
    clearance = np.full(sp.face.size, np.nan)
    ceiling = np.full(sp.face.size, -1, np.int64)
    clearance[cramped], ceiling[cramped] = _clearance(mesh, s, sp.foot[cramped])
    standable, cramped_area, buried = areas
    return StandableMap(grid, sp.face, sp.cell, sp.foot, sp.height, state, fr.stand,
                        fr.centre, fr.screened, fr.depth, fr.blocker, weight, clearance, ceiling,
                        region, region_area, region_point, standable, cramped_area, buried,
                        face_state, face_span, cols, classes)
