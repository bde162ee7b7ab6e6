"""Open-ground screen: faces whose centroid position nothing but the floor can reach.

A walkable face is *open* when the character's capsule resting on it at its centroid (lower
sphere centre ``a`` = centroid + normal * (radius + skin_width), as the stand test places
it) is certainly free and has its height free above: within the horizontal disk of radius
``radius`` around ``a``, (1) every walkable triangle stays below ``a`` by more than
``SUPPORT_MIN_COS * radius`` (so every contact it could make is a *supporting* one, which
the stand test ignores: the triangle point is below the segment by more than a quarter of
the contact distance) and (2) no non-walkable triangle (wall, steep face, ceiling) spans the
heights from ``a - radius`` to the capsule's top or the centroid + ``height``. Such a face
passes both the stand test and the headroom audit (one free position is enough for either),
so it needs no mesh query. The screen is conservative: it never clears a face the exact
tests would report; faces it does not clear go to the exact tests (batched capsule and ray
queries). On open terrain it clears almost every face.

Implementation: a dense grid of square cells in the horizontal plane (side ``cell``), per
cell the highest point of the walkable triangles over that cell (each triangle's plane
maximised over the cell, clipped to the triangle's own top) and the height range of the
non-walkable triangles whose box overlaps it; both dilated by ``ceil(radius / cell)`` cells
(a max filter: every point within ``radius`` of a point lies in those cells), then read at
the one cell of each face's ``a``. Triangles spanning at most two cells per axis (almost all
of them) are rasterised with four clipped reads; larger ones by their full cell lists.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from ...constants import SCREEN_SLACK, SUPPORT_MIN_COS
from ..walkability import WALKABLE
from .common import horizontal_frame, max3, min3

SCREEN_MAX_CELLS = 4_000_000  # grid cells at most (memory: ~5 float64 grids of this size)
SCREEN_MAX_PAIRS = 40_000_000  # (triangle, cell) pairs of large triangles at most


def _cell_size(span_xy, ext, radius):
    """Cell side: about the typical walkable face's extent, at least radius / 2, and large
    enough for SCREEN_MAX_CELLS cells and SCREEN_MAX_PAIRS pairs over the level."""
    g = max(float(np.median(ext)) if ext.size else radius, 0.5 * radius)
    area = max(span_xy[0], g) * max(span_xy[1], g)
    g = max(g, math.sqrt(area / SCREEN_MAX_CELLS))
    big = ext[ext > g]
    while big.size and (((big / g) + 2.0) ** 2).sum() > SCREEN_MAX_PAIRS and g < 1e9:
        g *= 2.0
        big = ext[ext > g]
    return g


def _pairs(ix0, iy0, ix1, iy1):
    """(row, cx, cy) of every cell of the cell boxes ix0..ix1, iy0..iy1 (K,), row indexing
    them."""
    wx = ix1 - ix0 + 1
    wy = iy1 - iy0 + 1
    cnt = wx * wy
    row = np.repeat(np.arange(ix0.size), cnt)
    k = np.arange(row.size) - np.repeat(np.cumsum(cnt) - cnt, cnt)
    return row, ix0[row] + k // wy[row], iy0[row] + k % wy[row]


def _cell_rows(ix0, iy0, ix1, iy1, ny):
    """Yield (rows, flat cell, small) covering every (box, cell) pair of the cell boxes
    ix0..ix1, iy0..iy1 (K,) of a grid with ``ny`` cells along its second axis: boxes at most
    two cells wide per axis by four corner reads (a cell may come twice: harmless for max /
    min; ``rows`` is a slice when all are such), the others by their full cell lists."""
    sx = ix1 - ix0
    sy = iy1 - iy0
    small = (sx <= 1) & (sy <= 1)
    rows = slice(None) if small.all() else np.flatnonzero(small)
    base = ix0[rows] * ny + iy0[rows]
    dx = sx[rows] * ny
    dy = sy[rows]
    for off in (0, dx, dy, dx + dy):
        yield rows, base + off, True
    big = np.flatnonzero(~small)
    if big.size:
        r, cx, cy = _pairs(ix0[big], iy0[big], ix1[big], iy1[big])
        yield big[r], cx * ny + cy, False


def _dilate(grid, k, op):
    """Max (or min) filter of a 2-D grid over a (2k+1) x (2k+1) square (separable shifts)."""
    out = grid.copy()
    for axis in (0, 1):
        src = out.copy()
        n = src.shape[axis]
        for s in range(1, min(k, n - 1) + 1):
            a = [slice(None)] * 2
            b = [slice(None)] * 2
            a[axis], b[axis] = slice(s, None), slice(None, n - s)
            op(out[tuple(a)], src[tuple(b)], out=out[tuple(a)])
            op(out[tuple(b)], src[tuple(a)], out=out[tuple(b)])
    return out


class _Grid(NamedTuple):
    """The level projected on the horizontal plane and its cells: px, py (V,) vertex
    coordinates relative to the level's corner (ox, oy), h (V,) heights along up; g cell
    side; nx, ny cells per axis."""

    e1: np.ndarray
    e2: np.ndarray
    px: np.ndarray
    py: np.ndarray
    h: np.ndarray
    ox: float
    oy: float
    g: float
    nx: int
    ny: int

    def cell(self, x):
        """Coordinates >= 0 (relative to the level's corner) to cell indices."""
        return (x * (1.0 / self.g)).astype(np.int64)


def _grid(mesh, u, walk_rows, r) -> _Grid:
    """Project the level and size its cells after the walkable triangles ``walk_rows``."""
    e1, e2 = horizontal_frame(u)
    V = mesh.vertices
    px, py, h = V @ e1, V @ e2, V @ u
    ox, oy = px.min(), py.min()
    px -= ox
    py -= oy
    w = mesh.triangles[walk_rows]
    wx = (px[w[:, 0]], px[w[:, 1]], px[w[:, 2]])
    wy = (py[w[:, 0]], py[w[:, 1]], py[w[:, 2]])
    span = (float(px.max()), float(py.max()))
    g = _cell_size(span, np.maximum(max3(*wx) - min3(*wx), max3(*wy) - min3(*wy)), r)
    inv = 1.0 / g
    # one spare cell per axis: a box's top corner may round up to the next cell
    return _Grid(e1, e2, px, py, h, ox, oy, g, int(span[0] * inv) + 2, int(span[1] * inv) + 2)


def _walkable_tops(mesh, grid: _Grid, u, wi) -> np.ndarray:
    """(nx * ny,) highest walkable point per cell: each walkable triangle's plane maximised
    over the cell, clipped to the triangle's top."""
    t = mesh.triangles
    w0, w1, w2 = t[wi, 0], t[wi, 1], t[wi, 2]
    px, py, g, ny = grid.px, grid.py, grid.g, grid.ny
    wx = (px[w0], px[w1], px[w2])
    wy = (py[w0], py[w1], py[w2])
    wh = (grid.h[w0], grid.h[w1], grid.h[w2])
    wtop_tri = max3(*wh)
    wtop = np.full(grid.nx * ny, -np.inf)
    boxes = (grid.cell(min3(*wx)), grid.cell(min3(*wy)), grid.cell(max3(*wx)),
             grid.cell(max3(*wy)))
    for rows, flat, small in _cell_rows(*boxes, ny):
        if small:  # the triangle's top: its plane over a cell is at most one cell lower
            np.maximum.at(wtop, flat, wtop_tri[rows])
            continue
        n = mesh.normals[wi][rows]
        nu = n @ u
        gx, gy = -(n @ grid.e1) / nu, -(n @ grid.e2) / nu  # dh / d(e1, e2), <= tan(slope)
        base = wh[0][rows] - wx[0][rows] * gx - wy[0][rows] * gy  # plane height at the corner
        x0, y0 = (flat // ny) * g, (flat % ny) * g
        top = base + np.maximum(gx * x0, gx * (x0 + g)) + np.maximum(gy * y0, gy * (y0 + g))
        np.maximum.at(wtop, flat, np.minimum(top, wtop_tri[rows]))
    return wtop


def _other_ranges(mesh, grid: _Grid, u, oi):
    """Per cell (nx * ny,) the top and bottom of the non-walkable triangles ``oi`` over it,
    and the top of those facing up (a solid's roof: a point under it may be inside)."""
    n_cells = grid.nx * grid.ny
    otop = np.full(n_cells, -np.inf)
    obot = np.full(n_cells, np.inf)
    uptop = np.full(n_cells, -np.inf)
    if oi.size:
        t = mesh.triangles
        o0, o1, o2 = t[oi, 0], t[oi, 1], t[oi, 2]
        px, py, h = grid.px, grid.py, grid.h
        ox_, oy_, oh = (px[o0], px[o1], px[o2]), (py[o0], py[o1], py[o2]), (h[o0], h[o1], h[o2])
        ohi, olo = max3(*oh), min3(*oh)
        uphi = np.where(mesh.normals[oi] @ u > 0.0, ohi, -np.inf)
        boxes = (grid.cell(min3(*ox_)), grid.cell(min3(*oy_)), grid.cell(max3(*ox_)),
                 grid.cell(max3(*oy_)))
        for rows, flat, _small in _cell_rows(*boxes, grid.ny):
            np.maximum.at(otop, flat, ohi[rows])
            np.minimum.at(obot, flat, olo[rows])
            np.maximum.at(uptop, flat, uphi[rows])
    return otop, obot, uptop


class GroundScreen(NamedTuple):
    """The level's screen rasters, dilated by ``radius``: per screen cell the highest walkable
    point (``wtop``), the top and bottom of the non-walkable triangles (``otop``, ``obot``)
    and the top of the up-facing ones (``uptop``); ``grid`` the screen's cells."""

    grid: _Grid
    wtop: np.ndarray
    otop: np.ndarray
    obot: np.ndarray
    uptop: np.ndarray


def ground_screen(mesh, settings, classes) -> GroundScreen:
    """Build the screen of ``mesh`` for ``settings`` (radius, up) once; ``classes`` (T,)
    int8 the classification of every triangle (``classify_triangles``)."""
    u = settings.up_vector
    r = settings.radius + SCREEN_SLACK
    walk = classes == WALKABLE
    wi = slice(None) if walk.all() else np.flatnonzero(walk)
    grid = _grid(mesh, u, wi, r)
    k = int(math.floor(r * (1.0 / grid.g))) + 1  # >= ceil(r / g), room for rounding

    def dilated(values, op):
        return _dilate(values.reshape(grid.nx, grid.ny), k, op).ravel()

    wtop = dilated(_walkable_tops(mesh, grid, u, wi), np.maximum)
    otop, obot, uptop = _other_ranges(mesh, grid, u, np.flatnonzero(~walk))
    return GroundScreen(grid, wtop, dilated(otop, np.maximum), dilated(obot, np.minimum),
                        dilated(uptop, np.maximum))


def open_at(screen: GroundScreen, settings, a, foot) -> np.ndarray:
    """(K,) bool: capsules with lower-sphere centres ``a`` (K, 3), resting on floor points
    ``foot`` (K, 3), certified free with their height free above (module docstring)."""
    s = settings
    u = s.up_vector
    grid = screen.grid
    r = s.radius + SCREEN_SLACK
    ix = np.minimum(np.maximum(grid.cell(np.maximum(a @ grid.e1 - grid.ox, 0.0)), 0), grid.nx - 1)
    iy = np.minimum(np.maximum(grid.cell(np.maximum(a @ grid.e2 - grid.oy, 0.0)), 0), grid.ny - 1)
    at = ix * grid.ny + iy
    au = a @ u
    floor_ok = screen.wtop[at] < au - SUPPORT_MIN_COS * s.radius - SCREEN_SLACK
    clear_lo = au - r
    clear_hi = np.maximum(au + s.height - s.radius, foot @ u + s.height) + SCREEN_SLACK
    below = screen.otop[at] < clear_lo
    # above: no roof over the foot point
    above = (screen.obot[at] > clear_hi) & (screen.uptop[at] < clear_lo)
    return floor_ok & (below | above)


def open_faces(mesh, faces, settings, classes) -> np.ndarray:
    """(K,) bool: ``faces`` (K,) walkable faces certified open (see the module docstring).

    classes : (T,) int8 classification of every triangle (``classify_triangles``)."""
    s = settings
    u = s.up_vector
    if not faces.size:
        return np.zeros(0, bool)
    screen = ground_screen(mesh, s, classes)
    # each face's resting lower-sphere centre a
    V, tri = mesh.vertices, mesh.triangles
    cen = (V[tri[faces, 0]] + V[tri[faces, 1]] + V[tri[faces, 2]]) * (1.0 / 3.0)
    nf = mesh.normals[faces]
    nf = nf * np.where(nf @ u < 0.0, -1.0, 1.0)[:, None]
    a = cen + nf * (s.radius + s.skin_width)
    return open_at(screen, s, a, cen)
