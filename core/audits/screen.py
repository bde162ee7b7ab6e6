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

import numpy as np

from ..constants import SUPPORT_MIN_COS
from ..walkability import WALKABLE
from .common import horizontal_frame, max3, min3

SCREEN_MAX_CELLS = 4_000_000  # grid cells at most (memory: ~5 float64 grids of this size)
SCREEN_MAX_PAIRS = 40_000_000  # (triangle, cell) pairs of large triangles at most
SCREEN_SLACK = 1e-6  # metres added to every reach and height bound (rounding of the frame)


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


def _pairs(i0, i1):
    """(row, cx, cy) of every cell of the cell boxes i0..i1 (K, 2), row indexing them."""
    wx = i1[:, 0] - i0[:, 0] + 1
    wy = i1[:, 1] - i0[:, 1] + 1
    cnt = wx * wy
    row = np.repeat(np.arange(i0.shape[0]), cnt)
    k = np.arange(row.size) - np.repeat(np.cumsum(cnt) - cnt, cnt)
    return row, i0[row, 0] + k // wy[row], i0[row, 1] + k % wy[row]


def _cell_rows(i0, i1):
    """Yield (rows, cx, cy) covering every (box, cell) pair of the cell boxes i0..i1 (K, 2):
    boxes at most two cells wide per axis by four clipped corner reads (a cell may come
    twice: harmless for max / min), the others by their full cell lists."""
    small = ((i1 - i0) <= 1).all(1)
    rows = np.flatnonzero(small)
    a, b = i0[rows], i1[rows]
    for dx in (0, 1):
        for dy in (0, 1):
            yield rows, np.minimum(a[:, 0] + dx, b[:, 0]), np.minimum(a[:, 1] + dy, b[:, 1]), True
    big = np.flatnonzero(~small)
    if big.size:
        r, cx, cy = _pairs(i0[big], i1[big])
        yield big[r], cx, cy, False


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


def open_faces(mesh, faces, settings, classes) -> np.ndarray:
    """(K,) bool: ``faces`` (K,) walkable faces certified open (see the module docstring).

    classes : (T,) int8 classification of every triangle (``classify_triangles``)."""
    s = settings
    u = s.up_vector
    if not faces.size:
        return np.zeros(0, bool)
    e1, e2 = horizontal_frame(u)
    V = mesh.vertices
    px, py, h = V @ e1, V @ e2, V @ u
    tri = mesh.triangles
    t0, t1, t2 = tri[:, 0], tri[:, 1], tri[:, 2]
    origin = np.array([px.min(), py.min()])
    r = s.radius + SCREEN_SLACK
    walk = classes == WALKABLE

    def boxes(rows):
        """Corner columns and horizontal box (lo, hi (n, 2), relative to origin) of rows."""
        xs = (px[t0[rows]], px[t1[rows]], px[t2[rows]])
        ys = (py[t0[rows]], py[t1[rows]], py[t2[rows]])
        lo = np.stack([min3(*xs), min3(*ys)], 1) - origin
        hi = np.stack([max3(*xs), max3(*ys)], 1) - origin
        return xs, ys, lo, hi

    wi = np.flatnonzero(walk)
    wx, wy, wlo, whi = boxes(wi)
    span = np.array([px.max(), py.max()]) - origin
    g = _cell_size(span, np.maximum(whi - wlo, 0.0).max(1), r)
    nx, ny = (np.floor(span / g).astype(np.int64) + 1).tolist()

    def cells(lo, hi):
        top = np.array([nx - 1, ny - 1])
        i0 = np.minimum(np.maximum((lo * (1.0 / g)).astype(np.int64), 0), top)
        i1 = np.minimum(np.maximum((hi * (1.0 / g)).astype(np.int64), 0), top)
        return i0, i1

    # walkable tops per cell: each plane maximised over the cell, clipped to the triangle top
    n = mesh.normals[wi]
    nu = n @ u
    gx, gy = -(n @ e1) / nu, -(n @ e2) / nu  # dh / d(e1, e2), |grad| <= tan(slope)
    wh = (h[t0[wi]], h[t1[wi]], h[t2[wi]])
    base = wh[0] - (wx[0] - origin[0]) * gx - (wy[0] - origin[1]) * gy  # height at origin
    wtop_tri = max3(*wh)
    wtop = np.full(nx * ny, -np.inf)
    for rows, cx, cy, small in _cell_rows(*cells(wlo, whi)):
        if small:  # the triangle's top: its plane over a cell is at most one cell lower
            np.maximum.at(wtop, cx * ny + cy, wtop_tri[rows])
            continue
        x0, y0 = cx * g, cy * g
        gxr, gyr = gx[rows], gy[rows]
        top = base[rows] + np.maximum(gxr * x0, gxr * (x0 + g)) + np.maximum(gyr * y0,
                                                                             gyr * (y0 + g))
        np.maximum.at(wtop, cx * ny + cy, np.minimum(top, wtop_tri[rows]))
    # non-walkable height ranges per cell
    oi = np.flatnonzero(~walk)
    otop = np.full(nx * ny, -np.inf)
    obot = np.full(nx * ny, np.inf)
    if oi.size:
        _x, _y, olo, ohi = boxes(oi)
        oh = (h[t0[oi]], h[t1[oi]], h[t2[oi]])
        ohi_h, olo_h = max3(*oh), min3(*oh)
        for rows, cx, cy, _small in _cell_rows(*cells(olo, ohi)):
            np.maximum.at(otop, cx * ny + cy, ohi_h[rows])
            np.minimum.at(obot, cx * ny + cy, olo_h[rows])
    k = int(math.floor(r / g)) + 1  # >= ceil(r / g), with room for rounding of the cells
    wtop = _dilate(wtop.reshape(nx, ny), k, np.maximum).ravel()
    otop = _dilate(otop.reshape(nx, ny), k, np.maximum).ravel()
    obot = _dilate(obot.reshape(nx, ny), k, np.minimum).ravel()
    # each face's resting lower-sphere centre a and the one cell it lies in
    f0, f1, f2 = t0[faces], t1[faces], t2[faces]
    cen = (V[f0] + V[f1] + V[f2]) / 3.0
    nf = mesh.normals[faces]
    nf = nf * np.where(nf @ u < 0.0, -1.0, 1.0)[:, None]
    a = cen + nf * (s.radius + s.skin_width)
    ia = np.stack([a @ e1, a @ e2], 1) - origin
    i0, _ = cells(ia, ia)
    cell = i0[:, 0] * ny + i0[:, 1]
    au = a @ u
    floor_ok = wtop[cell] < au - SUPPORT_MIN_COS * s.radius - SCREEN_SLACK
    clear_lo = au - r
    clear_hi = np.maximum(au + s.height - s.radius, cen @ u + s.height) + SCREEN_SLACK
    others_ok = (otop[cell] < clear_lo) | (obot[cell] > clear_hi)
    return floor_ok & others_ok
