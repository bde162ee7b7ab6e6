"""The standable map built tile by tile, only where it is needed (reachability's flood from
the spawns outward, core/checks/reachability.py).

The level's cell grid (``cells.cell_grid``: the very cells of the whole map) is cut into
square tiles of TILE_CELLS x TILE_CELLS cells. ``MapWindow.add(tiles)`` rasterises the
triangles over the new tiles only (each triangle clipped to a tile's cells, so a 400 m floor
costs only the cells of the tiles built), judges their spans as the whole map does
(``standable.free_spans``: the same capsule tests, the same inside test from the same
records) and merges them; ``MapWindow.map()`` is the StandableMap of the tiles built so far.

A span's FREE / CRAMPED / INSIDE state is its own cell's (exactly the whole map's); COVERED
and the moves look at the spans within MARGIN_CELLS, so everything farther than that from an
unbuilt tile is exactly what the whole map gives. Per-face weights: a face whose tiles are
all built has its exact span count; a face reaching into unbuilt tiles is weighted by its
projected area over a cell's (the span count it would have). Cramped regions and their
clearance are not measured (the audits use the whole map).

Frame and units: world space, metres; ``settings.up`` is up.
"""

from __future__ import annotations

import numpy as np

from ...constants import STANDABLE_CELL_FRACTION
from ..walkability import WALKABLE
from .cells import Records, cell_grid, columns, rasterise
from .common import EMPTY_I, face_classes, max3, min3
from .screen import ground_screen
from .spans import Spans, spans_of
from .standable import (
    COVERED,
    CRAMPED,
    FREE,
    INSIDE,
    StandableMap,
    covered_spans,
    face_areas,
    free_spans,
)

TILE_CELLS = 32  # cells per tile side (5.6 m for the default character)
MARGIN_CELLS = 8  # cells around a span within which its moves and cover look (reach_cells,
#                   cover_offsets: 3 and 4 for the default character, plus slack)

_SPAN_FIELDS = ("face", "cell", "foot", "height", "inside", "normal")  # Spans, in order
_FREE_FIELDS = ("screened", "free", "stand", "centre", "depth", "blocker")  # Free, in order
_FIELDS = _SPAN_FIELDS + _FREE_FIELDS


class MapWindow:
    """The standable map of ``mesh`` for ``settings`` (an exact model) over the tiles built so
    far (module docstring). ``built`` (tiles,) bool; ``add``, ``map``, ``known``,
    ``tiles_around``."""

    def __init__(self, mesh, settings):
        s = settings
        self.mesh, self.settings = mesh, s
        self.classes = face_classes(mesh, s)
        self.grid = cell_grid(mesh, s.up_vector, STANDABLE_CELL_FRACTION * s.radius)
        g = self.grid
        self.tnx = -(-g.nx // TILE_CELLS)
        self.tny = -(-g.ny // TILE_CELLS)
        self.built = np.zeros(self.tnx * self.tny, bool)
        self.screen = ground_screen(mesh, s, self.classes)
        v = mesh.vertices
        x = [(v @ g.e1 - g.ox)[mesh.triangles[:, i]] for i in range(3)]
        y = [(v @ g.e2 - g.oy)[mesh.triangles[:, i]] for i in range(3)]
        inv = 1.0 / g.cell
        # each triangle's cell-centre box (cells._centre_boxes), clamped to the grid
        self.box = (np.maximum(np.ceil(min3(*x) * inv - 0.5).astype(np.int64), 0),
                    np.minimum(np.floor(max3(*x) * inv - 0.5).astype(np.int64), g.nx - 1),
                    np.maximum(np.ceil(min3(*y) * inv - 0.5).astype(np.int64), 0),
                    np.minimum(np.floor(max3(*y) * inv - 0.5).astype(np.int64), g.ny - 1))
        proj = 0.5 * np.abs((x[1] - x[0]) * (y[2] - y[0]) - (y[1] - y[0]) * (x[2] - x[0]))
        self.expected = np.rint(proj * inv * inv).astype(np.int64)  # spans a face would have
        self.floor = self._floor_tiles()
        self._last = None  # (tiles key, Spans, Records) of the last ``spans``
        self.data = {f: np.empty((0, 3)) if f in ("foot", "normal", "stand", "centre")
                     else np.empty(0, bool if f in ("inside", "screened", "free") else
                                   (float if f in ("height", "depth") else np.int64))
                     for f in _FIELDS}

    def _floor_tiles(self) -> np.ndarray:
        """(tiles,) bool: tiles the box of a walkable face with spans overlaps (2-D difference
        counts over tiles)."""
        tx0, tx1, ty0, ty1 = self._tile_ranges()
        rows = np.flatnonzero((self.classes == WALKABLE) & (tx1 >= tx0) & (ty1 >= ty0))
        diff = np.zeros((self.tnx + 1, self.tny + 1), np.int64)
        for dx, dy, sign in ((0, 0, 1), (1, 0, -1), (0, 1, -1), (1, 1, 1)):
            np.add.at(diff, ((tx1 + 1 if dx else tx0)[rows], (ty1 + 1 if dy else ty0)[rows]),
                      sign)
        return (diff.cumsum(0).cumsum(1)[:-1, :-1] > 0).ravel()

    def share(self, tiles) -> float:
        """The fraction of the floor tiles (``floor``) built once ``tiles`` (K,) are added."""
        will = self.built.copy()
        will[np.asarray(tiles, np.int64)] = True
        return float((will & self.floor).sum()) / max(int(self.floor.sum()), 1)

    def _tile_ranges(self):
        b = self.box
        return (b[0] // TILE_CELLS, b[1] // TILE_CELLS, b[2] // TILE_CELLS, b[3] // TILE_CELLS)

    def add(self, tiles) -> np.ndarray:
        """Build the tiles ``tiles`` (K,) flat tile indices (built ones skipped); returns
        (N_old,) int64 the new index of every span built before."""
        tiles = np.unique(np.asarray(tiles, np.int64))
        tiles = tiles[~self.built[tiles]]
        n_old = self.data["face"].size
        if not tiles.size:
            return np.arange(n_old)
        new = np.zeros(self.built.size, bool)
        new[tiles] = True
        sp, rec = self.spans(tiles)
        sp = Spans(sp.face, sp.cell, sp.foot, sp.height, sp.inside.copy(), sp.normal)
        self._last = None
        fr = free_spans(self.mesh, self.settings, sp, rec, self.classes, self.grid.cell,
                        self.screen)
        self.built |= new
        merged = {f: np.concatenate([self.data[f], getattr(sp, f) if f in _SPAN_FIELDS
                                     else getattr(fr, f)]) for f in _FIELDS}
        order = np.argsort(merged["cell"], kind="stable")  # new cells are disjoint from old
        self.data = {f: a[order] for f, a in merged.items()}
        where = np.empty(order.size, np.int64)
        where[order] = np.arange(order.size)
        return where[:n_old]

    def spans(self, tiles):
        """(Spans, Records) of the tiles ``tiles`` (K,) flat tile indices, not built yet:
        rasterised and sorted, not judged (the last answer is kept for ``add``)."""
        key = np.unique(np.asarray(tiles, np.int64)).tobytes()
        if self._last is not None and self._last[0] == key:
            return self._last[1], self._last[2]
        new = np.zeros(self.built.size, bool)
        new[np.asarray(tiles, np.int64)] = True
        tri, clip = self._pairs(new)
        rec = rasterise(self.mesh, self.grid, tri, clip) if tri.size else Records(
            EMPTY_I, EMPTY_I, np.empty(0), np.empty(0, np.int8))
        sp = spans_of(self.mesh, self.settings, self.grid, self.classes, rec)
        self._last = (key, sp, rec)
        return sp, rec

    def _pairs(self, new):
        """(triangle (P,), clip ranges) one entry per (triangle, new tile) it overlaps."""
        tx0, tx1, ty0, ty1 = self._tile_ranges()
        wx, wy = np.maximum(tx1 - tx0 + 1, 0), np.maximum(ty1 - ty0 + 1, 0)
        # only triangles whose tile box holds a new tile (2-D prefix sums over tiles)
        cum = np.zeros((self.tnx + 1, self.tny + 1), np.int64)
        cum[1:, 1:] = new.reshape(self.tnx, self.tny).cumsum(0).cumsum(1)
        live = (wx > 0) & (wy > 0)
        a0, a1 = np.clip(tx0, 0, self.tnx - 1), np.clip(tx1, 0, self.tnx - 1)
        b0, b1 = np.clip(ty0, 0, self.tny - 1), np.clip(ty1, 0, self.tny - 1)
        hit = cum[a1 + 1, b1 + 1] - cum[a0, b1 + 1] - cum[a1 + 1, b0] + cum[a0, b0]
        rows = np.flatnonzero(live & (hit > 0))
        cnt = wx[rows] * wy[rows]
        r = np.repeat(rows, cnt)
        k = np.arange(r.size) - np.repeat(np.cumsum(cnt) - cnt, cnt)
        tx = tx0[r] + k // wy[r]
        ty = ty0[r] + k % wy[r]
        ok = new[tx * self.tny + ty]
        r, tx, ty = r[ok], tx[ok], ty[ok]
        t = TILE_CELLS
        clip = (tx * t, tx * t + t - 1, ty * t, ty * t + t - 1)
        return r, clip

    def known(self, cells) -> np.ndarray:
        """(K,) bool: cells ``cells`` (K,) lie in built tiles (or off the grid: -1)."""
        cells = np.asarray(cells, np.int64)
        tile = self.tile_of(np.maximum(cells, 0))
        return (cells < 0) | self.built[tile]

    def tile_of(self, cells) -> np.ndarray:
        """(K,) flat tile index of flat cells ``cells`` (K,) (>= 0)."""
        g = self.grid
        return (cells // g.ny // TILE_CELLS) * self.tny + (cells % g.ny) // TILE_CELLS

    def tiles_around(self, cells, margin=MARGIN_CELLS, rings=0) -> np.ndarray:
        """Flat tile indices of the tiles within ``margin`` cells of cells ``cells`` (K,)
        (>= 0), and ``rings`` tiles farther."""
        g = self.grid
        cells = np.asarray(cells, np.int64)
        cells = cells[cells >= 0]
        ix, iy = cells // g.ny, cells % g.ny
        out = []
        for sx in (-margin, margin):
            for sy in (-margin, margin):
                tx = np.clip(ix + sx, 0, g.nx - 1) // TILE_CELLS
                ty = np.clip(iy + sy, 0, g.ny - 1) // TILE_CELLS
                out.append(np.unique(tx * self.tny + ty))
        tiles = np.unique(np.concatenate(out)) if out else EMPTY_I
        return self.grown(tiles, rings) if rings else tiles

    def grown(self, tiles, rings: int) -> np.ndarray:
        """Flat tile indices of ``tiles`` (K,) and the tiles within ``rings`` tiles of them."""
        tiles = np.asarray(tiles, np.int64)
        d = np.arange(-rings, rings + 1)
        dx, dy = (a.ravel() for a in np.meshgrid(d, d, indexing="ij"))
        tx = np.clip(tiles[:, None] // self.tny + dx[None, :], 0, self.tnx - 1)
        ty = np.clip(tiles[:, None] % self.tny + dy[None, :], 0, self.tny - 1)
        return np.unique(tx * self.tny + ty)

    def map(self) -> StandableMap:
        """The StandableMap of the built tiles (module docstring)."""
        s, g, d = self.settings, self.grid, self.data
        mesh = self.mesh
        sp = Spans(*(d[f] for f in _SPAN_FIELDS))
        cols = columns(g, sp.cell, sp.height)
        state = np.where(sp.inside, INSIDE, np.where(d["free"], FREE, CRAMPED)).astype(np.int8)
        targets = np.flatnonzero(state == CRAMPED)
        covered, sealed = covered_spans(mesh, s, cols, sp, d["stand"], d["free"], targets)
        state[targets[covered]] = COVERED
        state[targets[sealed]] = INSIDE
        count = np.bincount(sp.face, minlength=mesh.n_triangles)
        tx0, tx1, ty0, ty1 = self._tile_ranges()
        cum = np.zeros((self.tnx + 1, self.tny + 1), np.int64)
        cum[1:, 1:] = self.built.reshape(self.tnx, self.tny).cumsum(0).cumsum(1)
        a0, a1 = np.clip(tx0, 0, self.tnx - 1), np.clip(tx1, 0, self.tnx - 1)
        b0, b1 = np.clip(ty0, 0, self.tny - 1), np.clip(ty1, 0, self.tny - 1)
        have = cum[a1 + 1, b1 + 1] - cum[a0, b1 + 1] - cum[a1 + 1, b0] + cum[a0, b0]
        full = (tx1 < tx0) | (ty1 < ty0) | (have == (a1 - a0 + 1) * (b1 - b0 + 1))
        count = np.where(full, count, np.maximum(count, self.expected))
        weight, face_state, face_span, areas = face_areas(mesh, sp, state, cols, s,
                                                          self.classes, count)
        n = sp.face.size
        nan = np.full(n, np.nan)
        standable, cramped_area, buried = areas
        return StandableMap(g, sp.face, sp.cell, sp.foot, sp.height, state, d["stand"],
                            d["centre"], d["screened"], d["depth"], d["blocker"], weight, nan,
                            np.full(n, -1, np.int64), np.full(n, -1, np.int64), np.empty(0),
                            np.empty((0, 3)), standable, cramped_area, buried, face_state,
                            face_span, cols, self.classes)


def window_worthwhile(mesh, settings, min_cells: int) -> bool:
    """True when the whole map would hold more than ``min_cells`` spans (the walkable
    faces' projected area over a cell's): big enough to build only where needed."""
    g_cell = STANDABLE_CELL_FRACTION * settings.radius
    walk = face_classes(mesh, settings) == WALKABLE
    if not walk.any():
        return False
    tri = mesh.vertices[mesh.triangles[walk]]
    u = settings.up_vector
    area = 0.5 * np.abs(np.cross(tri[:, 1] - tri[:, 0], tri[:, 2] - tri[:, 0]) @ u)
    return float(area.sum()) / (g_cell * g_cell) > min_cells
