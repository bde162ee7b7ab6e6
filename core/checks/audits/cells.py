"""The cell grid of the standable map: square cells in the horizontal plane, triangles
rasterised at the cell centres, and "is this point inside a closed solid" by winding number.

Frame: ``horizontal_frame(up)`` gives (e1, e2) with e1 x e2 = up; a point's grid coordinates
are ``(p . e1 - ox, p . e2 - oy)`` and its height ``p . up``. Cell (ix, iy) is the square
``[ix, ix + 1) x [iy, iy + 1)`` times ``cell`` metres; its centre is at ``(ix + 0.5, iy + 0.5)``
cells; its flat index is ``ix * ny + iy``.

**Rasterisation.** A triangle covers the cell centres inside its projection on the horizontal
plane. A centre exactly on an edge or a vertex is decided as if it were moved by an
infinitesimal fixed offset (-eps^2, eps) (a symbolic perturbation): every edge is evaluated
from its lexicographically smaller end point, so two triangles sharing an edge compute the
same float, and a centre on the shared edge of a surface's two triangles belongs to exactly
one of them. Vertical triangles (zero projected area) cover nothing.

**Inside a closed solid.** Solids have outward normals, so going straight up from a point
inside one, the first face met is its top seen from inside: it faces up. From a point in the
open (or in a room whose ceiling faces down into it) the first face faces down, or there is
none. Faces met at the same height count together, and the point is inside when any of them
faces up: where closed solids are stacked (the top of one is the bottom of the next, as
Quake brushes and kit-built levels are), or a pillar meets a ceiling, the up-facing top and
the down-facing bottom coincide, and the answer no longer depends on which of them a ray
query happens to return first (the order of the faces). An up-facing one-sided plate over a
floor counts as a solid's roof. The faces above a point are read from the rasterisation at
its cell centre (exact there, no ray query).

Frame and units: world space, metres; ``up`` from the settings.
"""

from __future__ import annotations

import math
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from typing import NamedTuple

import numpy as np

from ...constants import THREADED_BUILD_TRIANGLES
from .common import horizontal_frame, max3, min3

RASTER_CHUNK = 2_000_000  # (triangle, cell centre) candidate pairs per chunk (memory)
SMALL_BOX = 36  # centres in a triangle's box at most to go by box shape (most level faces;
#                the open arena's 0.86 m faces hold 25 of its 0.175 m cells: by box shape its
#                raster takes 0.20 s of CPU against 0.31 s by pairs, the same records)
GRID_MAX_CELLS = 400_000_000  # cells of the bounding grid at most (flat index range)
DENSE_COLUMNS = 32_000_000  # cells at most for a dense column index (8 bytes a cell)


class CellGrid(NamedTuple):
    """Square cells of side ``cell`` metres over the level's horizontal extent.

    e1, e2, up : (3,) the horizontal frame and up; ox, oy : grid origin along e1, e2 (metres);
    cell : side, metres; nx, ny : cells per axis.
    """

    e1: np.ndarray
    e2: np.ndarray
    up: np.ndarray
    ox: float
    oy: float
    cell: float
    nx: int
    ny: int

    def coords(self, points) -> tuple[np.ndarray, np.ndarray]:
        """Grid coordinates (x, y) (K,) metres of points (K, 3)."""
        p = np.asarray(points, float)
        return p @ self.e1 - self.ox, p @ self.e2 - self.oy

    def cell_of(self, points) -> np.ndarray:
        """(K,) flat cell index of points (K, 3); -1 outside the grid."""
        x, y = self.coords(points)
        ix = np.floor(x / self.cell).astype(np.int64)
        iy = np.floor(y / self.cell).astype(np.int64)
        ok = (ix >= 0) & (ix < self.nx) & (iy >= 0) & (iy < self.ny)
        return np.where(ok, ix * self.ny + iy, -1)

    def centre_xy(self, flat) -> tuple[np.ndarray, np.ndarray]:
        """Grid coordinates (x, y) of the centres of cells ``flat`` (K,)."""
        return (flat // self.ny + 0.5) * self.cell, (flat % self.ny + 0.5) * self.cell

    def to_world(self, x, y, h) -> np.ndarray:
        """(K, 3) world points of grid coordinates x, y and heights h (K,): per coordinate
        (x + ox) e1 + (y + oy) e2 + h up, the same floats as the sum of the three outer
        products, written column by column into one array (no three (K, 3) temporaries:
        the arena's 844 k spans)."""
        xo, yo, h = np.asarray(x) + self.ox, np.asarray(y) + self.oy, np.asarray(h)
        out = np.empty((np.broadcast(xo, yo, h).size, 3))
        for j in range(3):
            col = out[:, j]
            np.multiply(xo, self.e1[j], out=col)
            col += yo * self.e2[j]
            col += h * self.up[j]
        return out


def cell_grid(mesh, up, cell: float) -> CellGrid:
    """The grid of ``cell``-metre squares covering ``mesh`` seen along ``up`` (one spare cell
    on every side)."""
    u = np.asarray(up, float)
    e1, e2 = horizontal_frame(u)
    px, py = mesh.vertices @ e1, mesh.vertices @ e2
    ox, oy = float(px.min()) - cell, float(py.min()) - cell
    nx = int(math.floor((float(px.max()) - ox) / cell)) + 2
    ny = int(math.floor((float(py.max()) - oy) / cell)) + 2
    if nx * ny > GRID_MAX_CELLS:
        raise ValueError(f"the level needs {nx * ny:,} cells of {cell} m (at most "
                         f"{GRID_MAX_CELLS:,}): is it in metres?")
    return CellGrid(e1, e2, u, ox, oy, float(cell), nx, ny)


class Records(NamedTuple):
    """Triangles at cell centres: triangle (R,) int64, cell (R,) int64 flat index, height (R,)
    metres of the triangle's plane at the centre, side (R,) int8 +1 facing up, -1 down."""

    triangle: np.ndarray
    cell: np.ndarray
    height: np.ndarray
    side: np.ndarray


def _centre_boxes(x, y, c):
    """Per triangle the index ranges of the cell centres inside its bounding box."""
    inv = 1.0 / c
    ix0 = np.ceil(min3(*x) * inv - 0.5).astype(np.int64)
    ix1 = np.floor(max3(*x) * inv - 0.5).astype(np.int64)
    iy0 = np.ceil(min3(*y) * inv - 0.5).astype(np.int64)
    iy1 = np.floor(max3(*y) * inv - 0.5).astype(np.int64)
    return ix0, ix1, iy0, iy1


class _Edges(NamedTuple):
    """Per triangle, for each of its 3 edges (tuples of 3 arrays (T,)): the edge seen from its
    lexicographically smaller end (lx, ly; direction dx, dy) and the side (+-1) of the
    interior; gx, gy, x0, y0, h0 (T,) its plane (height = h0 + gx (x - x0) + gy (y - y0))."""

    lx: tuple
    ly: tuple
    dx: tuple
    dy: tuple
    side: tuple
    gx: np.ndarray
    gy: np.ndarray
    x0: np.ndarray
    y0: np.ndarray
    h0: np.ndarray


def _edges(x, y, h, orient, nrm) -> _Edges:
    """The edge functions and planes of triangles with corners x, y, h (3 lists of (T,)),
    projected orientation ``orient`` (T,) +-1 and frame normals ``nrm`` (T, 3)."""
    def edge(ends):
        a, b = ends
        px, py, qx, qy = x[a], y[a], x[b], y[b]
        first = (px < qx) | ((px == qx) & (py < qy))  # p is the smaller end
        sign = np.where(first, 1.0, -1.0)
        # from the smaller end: the same floats for both triangles sharing the edge
        return (np.where(first, px, qx), np.where(first, py, qy), (qx - px) * sign,
                (qy - py) * sign, orient * sign)

    pairs = ((0, 1), (1, 2), (2, 0))
    if orient.size >= THREADED_BUILD_TRIANGLES:  # three independent edges: threads
        with ThreadPoolExecutor(max_workers=2, thread_name_prefix="cc-edges") as pool:
            cols = list(pool.map(edge, pairs))
    else:
        cols = [edge(p) for p in pairs]
    lx, ly, dx, dy, side = (tuple(c[i] for c in cols) for i in range(5))
    return _Edges(lx=lx, ly=ly, dx=dx, dy=dy, side=side, gx=-nrm[:, 0] / nrm[:, 2],
                  gy=-nrm[:, 1] / nrm[:, 2], x0=x[0], y0=y[0], h0=h[0])


def _chunk(grid, ed: _Edges, rows, box):
    """(triangle rows (R,) into ``ed``, flat cells (R,), heights (R,)) of the centres covered
    by the triangles ``rows`` with centre boxes ``box``."""
    c = grid.cell
    ix0, ix1, iy0, iy1 = (b[rows] for b in box)
    wx, wy = np.maximum(ix1 - ix0 + 1, 0), np.maximum(iy1 - iy0 + 1, 0)
    cnt = wx * wy
    r = np.repeat(np.arange(rows.size), cnt)
    k = np.arange(r.size) - np.repeat(np.cumsum(cnt) - cnt, cnt)
    cx = ix0[r] + k // wy[r]
    cy = iy0[r] + k % wy[r]
    sx, sy = (cx + 0.5) * c, (cy + 0.5) * c
    g = rows[r]
    ok = (cx >= 0) & (cx < grid.nx) & (cy >= 0) & (cy < grid.ny)
    for e in range(3):
        val = ed.dx[e][g] * (sy - ed.ly[e][g]) - ed.dy[e][g] * (sx - ed.lx[e][g])
        side = ed.side[e][g]
        ok &= (side * val > 0.0) | ((val == 0.0) & (side > 0.0))
    g, cx, cy, sx, sy = g[ok], cx[ok], cy[ok], sx[ok], sy[ok]
    height = ed.h0[g] + ed.gx[g] * (sx - ed.x0[g]) + ed.gy[g] * (sy - ed.y0[g])
    return g, cx * grid.ny + cy, height


def _small(grid, ed: _Edges, rows, ix0, iy0, wx, wy):
    """``_chunk`` for triangles ``rows`` (T,) whose centre boxes are all ``wx`` x ``wy``:
    (T, wx * wy) candidate arrays by broadcasting, no per-pair gathers."""
    c = grid.cell
    ox, oy = np.divmod(np.arange(wx * wy), wy)
    cx = ix0[rows][:, None] + ox[None, :]
    cy = iy0[rows][:, None] + oy[None, :]
    sx, sy = (cx + 0.5) * c, (cy + 0.5) * c
    ok = (cx >= 0) & (cx < grid.nx) & (cy >= 0) & (cy < grid.ny)
    for e in range(3):
        val = ed.dx[e][rows, None] * (sy - ed.ly[e][rows, None]) - ed.dy[e][rows, None] * (
            sx - ed.lx[e][rows, None])
        side = ed.side[e][rows, None]
        ok &= (side * val > 0.0) | ((val == 0.0) & (side > 0.0))
    r, p = np.nonzero(ok)
    g = rows[r]
    sx, sy = sx[r, p], sy[r, p]
    height = ed.h0[g] + ed.gx[g] * (sx - ed.x0[g]) + ed.gy[g] * (sy - ed.y0[g])
    return g, cx[r, p] * grid.ny + cy[r, p], height


def rasterise(mesh, grid: CellGrid, triangles, clip=None) -> Records:
    """Records of ``triangles`` (T,) int64 at the cell centres their projection covers
    (vertical triangles cover none). Triangles whose box holds at most SMALL_BOX centres go
    by box shape (broadcast), the others in chunks of RASTER_CHUNK candidate pairs.

    clip : None, or (ix0, ix1, iy0, iy1) four (T,) int64 inclusive cell ranges: each entry
    of ``triangles`` covers only the centres inside its range (a triangle may be listed once
    per disjoint range: the standable map built tile by tile, core/checks/audits/window.py)."""
    tri = np.asarray(triangles, np.int64)
    V = mesh.vertices
    vx, vy, vh = V @ grid.e1 - grid.ox, V @ grid.e2 - grid.oy, V @ grid.up
    corners = np.ascontiguousarray(mesh.triangles[tri].T)  # (3, T): contiguous gathers
    x = [vx.take(corners[i]) for i in range(3)]
    y = [vy.take(corners[i]) for i in range(3)]
    h = [vh.take(corners[i]) for i in range(3)]
    # normals in the frame (e1, e2, up) from the projected corners: the sign of the up part
    # is the projected orientation, exactly as the edge functions see it
    ax, ay, az = x[1] - x[0], y[1] - y[0], h[1] - h[0]
    bx, by, bz = x[2] - x[0], y[2] - y[0], h[2] - h[0]
    nz = ax * by - ay * bx
    keep = np.flatnonzero(nz != 0.0)
    if keep.size < nz.size:  # vertical triangles cover no centre
        clip = None if clip is None else [np.asarray(b)[keep] for b in clip]
        x, y, h = ([v[keep] for v in arr] for arr in (x, y, h))
        ax, ay, az, bx, by, bz, nz = (v[keep] for v in (ax, ay, az, bx, by, bz, nz))
    nrm = np.stack([ay * bz - az * by, az * bx - ax * bz, nz], 1)
    orient = np.where(nz > 0.0, 1.0, -1.0)
    ed = _edges(x, y, h, orient, nrm)
    box = _centre_boxes(x, y, grid.cell)
    if clip is not None:
        box = (np.maximum(box[0], clip[0]), np.minimum(box[1], clip[1]),
               np.maximum(box[2], clip[2]), np.minimum(box[3], clip[3]))
    wx, wy = np.maximum(box[1] - box[0] + 1, 0), np.maximum(box[3] - box[2] + 1, 0)
    jobs = []  # independent parts, concatenated in this order whoever computes them
    small = (wx * wy <= SMALL_BOX) & (wx * wy > 0)
    shape = wx * (SMALL_BOX + 1) + wy
    for key in np.unique(shape[small]):
        rows = np.flatnonzero(small & (shape == key))
        jobs.append(partial(_small, grid, ed, rows, box[0], box[2],
                            int(key // (SMALL_BOX + 1)), int(key % (SMALL_BOX + 1))))
    big = np.flatnonzero(wx * wy > SMALL_BOX)
    ends = np.cumsum((wx * wy)[big])
    start = 0
    while start < big.size:
        base = ends[start - 1] if start else 0
        stop = max(int(np.searchsorted(ends, base + RASTER_CHUNK, side="right")), start + 1)
        jobs.append(partial(_chunk, grid, ed, big[start:stop], box))
        start = stop
    if tri.size >= THREADED_BUILD_TRIANGLES and len(jobs) > 1:
        # numpy releases the GIL in the parts' array work: two threads, the same records
        with ThreadPoolExecutor(max_workers=2, thread_name_prefix="cc-raster") as pool:
            out = list(pool.map(lambda job: job(), jobs))
    else:
        out = [job() for job in jobs]
    if not out:
        e = np.empty(0, np.int64)
        return Records(e, e, np.empty(0), np.empty(0, np.int8))
    g, cell, height = (np.concatenate(col) for col in zip(*out))
    return Records(tri[keep][g], cell, height, orient[g].astype(np.int8))


def _next_of(mask, order_len):
    """(L,) for each row of a sorted array the index of the next row at or after it where
    ``mask`` (L,) holds (``order_len`` if none)."""
    idx = np.where(mask, np.arange(order_len), order_len)
    return np.minimum.accumulate(idx[::-1])[::-1]


def inside_solids(records: Records, cell, height, tol: float) -> np.ndarray:
    """(Q,) bool: points at the centres of cells ``cell`` (Q,) at heights ``height`` (Q,)
    lie inside a closed solid, by the winding number along the ray up: the faces above a
    point (among ``records`` of its cell, strictly above ``height``) count +1 facing up
    (leaving a solid) and -1 facing down (entering one), faces of one side coincident
    with the one below them (within ``tol`` metres: a duplicated face) once; inside when
    the sum is positive. Overlapping solids count once each: a brush whose top lies inside
    the brush stacked on it (OpenArena's oa_bases7: the lowest face above the floor is the
    upper brush's bottom, facing down) still holds the floor under it, where "the lowest
    face above faces up" called it open (tests/core/test_standable_stacked.py). Also
    inside when the lowest face above faces up, coincident faces counting as up-facing
    when any of them does (an open floor plane above, as before)."""
    nr, nq = records.cell.size, np.asarray(cell).size
    if not nr or not nq:
        return np.zeros(nq, bool)
    keys_c = np.concatenate([records.cell, cell])
    keys_h = np.concatenate([records.height, height])
    kind = np.concatenate([np.zeros(nr, np.int8), np.ones(nq, np.int8)])  # records first
    order = np.lexsort((kind, keys_h, keys_c))
    side = np.concatenate([records.side, np.zeros(nq, np.int8)])[order]
    c_sorted, h_sorted = keys_c[order], np.r_[keys_h[order], np.inf]
    n = order.size
    up, down = _next_of(side > 0, n), _next_of(side < 0, n)
    c_ext = np.r_[c_sorted, -1]
    h_up = np.where(c_ext[up] == c_sorted, h_sorted[up], np.inf)
    h_down = np.where(c_ext[down] == c_sorted, h_sorted[down], np.inf)
    inside = np.isfinite(h_up) & (h_up <= h_down + tol)
    inside |= _winding_above(c_sorted, h_sorted[:-1], side, tol) > 0
    out = np.empty(nq, bool)
    q = order >= nr
    out[order[q] - nr] = inside[q]
    return out


def _winding_above(c_sorted, h_sorted, side, tol):
    """(L,) per row of rows sorted by (cell, height) the sum of ``side`` (+1 up, -1 down,
    0 a query) over the rows after it in its cell, each face of one side within ``tol``
    above the previous face of that side in the cell counted once (a duplicate)."""
    n = side.size
    w = side.astype(np.int64)
    for s in (1, -1):  # a face right above the previous face of its side is a duplicate
        idx = np.flatnonzero(side == s)
        if idx.size > 1:
            dup = ((c_sorted[idx[1:]] == c_sorted[idx[:-1]])
                   & (h_sorted[idx[1:]] - h_sorted[idx[:-1]] <= tol))
            w[idx[1:][dup]] = 0
    total = np.cumsum(w)
    start = np.r_[True, c_sorted[1:] != c_sorted[:-1]]
    end = np.r_[np.flatnonzero(start)[1:], n] - 1  # last row of each cell
    last = end[np.cumsum(start) - 1]
    return total[last] - total  # the rows after this one in its cell


def shifted(grid: CellGrid, cell, dx: int, dy: int) -> np.ndarray:
    """(K,) flat index of the cells ``(dx, dy)`` cells away from ``cell`` (K,); -1 off the
    grid."""
    ix, iy = cell // grid.ny + dx, cell % grid.ny + dy
    ok = (ix >= 0) & (ix < grid.nx) & (iy >= 0) & (iy < grid.ny) & (cell >= 0)
    return np.where(ok, ix * grid.ny + iy, -1)


def shifted_xy(grid: CellGrid, ix, iy, dx: int, dy: int) -> np.ndarray:
    """``shifted`` of the cells of grid coordinates ``ix``, ``iy`` (K,) (``cell // ny``,
    ``cell % ny``, computed once by a caller that shifts the same cells many ways)."""
    jx, jy = ix + dx, iy + dy
    ok = (jx >= 0) & (jx < grid.nx) & (jy >= 0) & (jy < grid.ny)
    return np.where(ok, jx * grid.ny + jy, -1)


class Columns(NamedTuple):
    """The spans of a grid for lookups: grid; cell (N,) int64 ascending; height (N,) metres;
    starts the ``column_starts`` of ``cell``."""

    grid: CellGrid
    cell: np.ndarray
    height: np.ndarray
    starts: np.ndarray

    def lookup(self, q_cell, q_height, lo, hi, mask=None, heights=None) -> np.ndarray:
        """``nearest_in_column`` over these spans (``heights`` (N,) instead of ``height``)."""
        return nearest_in_column(self.cell, self.height if heights is None else heights,
                                 q_cell, q_height, lo, hi, mask, self.starts)


def columns(grid: CellGrid, cells_sorted, heights) -> Columns:
    """The Columns of spans at ``cells_sorted`` (N,) ascending with ``heights`` (N,)."""
    return Columns(grid, cells_sorted, heights, column_starts(grid, cells_sorted))


def column_starts(grid: CellGrid, cells_sorted) -> np.ndarray:
    """(nx * ny + 1,) int64 first span of every cell in ``cells_sorted`` (N,) ascending (a
    dense index: no search per lookup), or an empty array for grids of more than
    DENSE_COLUMNS cells (lookups then search ``cells_sorted``)."""
    n_cells = grid.nx * grid.ny
    if n_cells > DENSE_COLUMNS:
        return np.empty(0, np.int64)
    start = np.zeros(n_cells + 1, np.int64)
    np.cumsum(np.bincount(cells_sorted, minlength=n_cells), out=start[1:])
    return start


def nearest_in_column(cells_sorted, heights, q_cell, q_height, lo, hi, mask=None,
                      starts=None):
    """(Q,) int64 for each query the span of cell ``q_cell`` (Q,) whose height lies in
    ``[q_height + lo, q_height + hi]`` and is nearest ``q_height`` (-1: none).

    cells_sorted : (N,) int64 the spans' cells, ascending; heights : (N,) metres; lo, hi :
    scalars or (Q,) metres; mask : (N,) bool spans allowed (None: all); starts : the
    ``column_starts`` of ``cells_sorted`` (None or empty: searched)."""
    q_cell = np.asarray(q_cell, np.int64)
    if starts is not None and starts.size:
        c = np.maximum(q_cell, 0)
        start = starts.take(c)
        count = np.where(q_cell >= 0, starts[1:].take(c) - start, 0)
    else:
        start = np.searchsorted(cells_sorted, q_cell, "left")
        count = np.searchsorted(cells_sorted, q_cell, "right") - start
    q = q_cell.size
    if not q or not cells_sorted.size:
        return np.full(q, -1, np.int64)
    # the first span of every column at once (most columns hold one: open floor), without
    # gathering the rows that have one; the same floats and comparisons as the rows below
    first = np.minimum(start, cells_sorted.size - 1)
    d = heights[first] - q_height
    ok = (count > 0) & (d >= lo) & (d <= hi)
    if mask is not None:
        ok &= mask[first]
    best = np.where(ok, first, -1)
    most = int(count.max(initial=0))  # spans per column: a few storeys at most
    if most <= 1:  # one storey everywhere asked (open floor): the first span is the answer
        return best
    # the few columns of storeys: later spans only there (no pass over every row per storey)
    multi = np.flatnonzero(count > 1)
    n_of = count[multi]
    best_m = best[multi]
    best_d = np.where(ok[multi], np.abs(d[multi]), np.inf)
    lo = np.broadcast_to(np.asarray(lo, float), (q,))[multi]
    hi = np.broadcast_to(np.asarray(hi, float), (q,))[multi]
    for j in range(1, most):
        sel = np.flatnonzero(n_of > j)
        rows = multi[sel]
        idx = start[rows] + j
        d = heights[idx] - q_height[rows]
        ok = (d >= lo[sel]) & (d <= hi[sel])
        if mask is not None:
            ok &= mask[idx]
        ad = np.abs(d)
        better = ok & (ad < best_d[sel])
        best_m[sel[better]] = idx[better]
        best_d[sel[better]] = ad[better]
    best[multi] = best_m
    return best
