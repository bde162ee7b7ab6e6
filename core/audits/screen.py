"""Open-ground screen: faces where nothing but the floor can reach the character's capsule.

A walkable face is *open* when, over a horizontal neighbourhood wide enough to hold the
capsule resting anywhere on the face, (1) no non-walkable triangle (wall, steep face,
ceiling) spans the capsule's heights and (2) every walkable triangle stays below the
capsule's lower sphere centre by more than ``SUPPORT_MIN_COS * radius``. Then every contact
such a capsule could have is a *supporting* one (its normal's up component exceeds
SUPPORT_MIN_COS: the triangle point is below the segment by more than a quarter of the
contact distance), which the stand test ignores, and nothing lies above the face, so the
face has full headroom. The screen is conservative: it never clears a face the exact tests
would report; faces it does not clear go to the exact tests (batched capsule and ray
queries). On open terrain it clears almost every face without a mesh query.

Implementation: a dense grid of square cells in the horizontal plane (side ``cell``),
per cell the highest point of the walkable triangles over that cell (each triangle's plane
maximised over the cell, clipped to the triangle's own top) and the height range of the
non-walkable triangles whose box overlaps it; both dilated by the capsule's horizontal reach
(a max filter over the grid), then read at the cells of each face's box.
"""

from __future__ import annotations

import math

import numpy as np

from ..constants import SUPPORT_MIN_COS
from ..walkability import WALKABLE
from .common import horizontal_frame

SCREEN_MAX_CELLS = 4_000_000  # grid cells at most (memory: ~5 float64 grids of this size)
SCREEN_MAX_SPAN = 3  # faces whose box spans more cells per axis go to the exact tests
SCREEN_MAX_PAIRS = 40_000_000  # (triangle, cell) pairs at most; beyond, the cells grow
SCREEN_SLACK = 1e-6  # metres added to every reach and height bound (rounding of the frame)


def _cell_size(span_xy, ext, reach, n_tris):
    """Cell side: about the typical walkable face's extent, at least reach / 2, and large
    enough for SCREEN_MAX_CELLS cells and SCREEN_MAX_PAIRS pairs over the level."""
    g = max(float(np.median(ext)) if ext.size else reach, 0.5 * reach)
    area = max(span_xy[0], g) * max(span_xy[1], g)
    g = max(g, math.sqrt(area / SCREEN_MAX_CELLS))
    while (((ext / g) + 2.0) ** 2).sum() > SCREEN_MAX_PAIRS and g < 1e9:
        g *= 2.0
    return g


def _pairs(lo, hi, g, nx, ny):
    """(triangle row, flat cell) pairs of boxes lo, hi (K, 2) in cell units of side g."""
    i0 = np.clip(np.floor(lo / g).astype(np.int64), 0, [nx - 1, ny - 1])
    i1 = np.clip(np.floor(hi / g).astype(np.int64), 0, [nx - 1, ny - 1])
    wx = i1[:, 0] - i0[:, 0] + 1
    wy = i1[:, 1] - i0[:, 1] + 1
    cnt = wx * wy
    row = np.repeat(np.arange(lo.shape[0]), cnt)
    k = np.arange(row.size) - np.repeat(np.cumsum(cnt) - cnt, cnt)
    cx = i0[row, 0] + k // wy[row]
    cy = i0[row, 1] + k % wy[row]
    return row, cx, cy


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
    e1, e2 = horizontal_frame(u)
    if not faces.size:
        return np.zeros(0, bool)
    V = mesh.vertices
    P = np.stack([V @ e1, V @ e2], axis=1)
    H = V @ u
    tri = mesh.triangles
    cp, ch = P[tri], H[tri]  # (T, 3, 2), (T, 3)
    lo, hi = cp.min(1), cp.max(1)
    origin = lo.min(0)
    lo, hi = lo - origin, hi - origin
    reach = s.radius + math.sin(math.radians(s.max_slope_deg)) * (s.radius + s.skin_width)
    reach += SCREEN_SLACK
    walk = classes == WALKABLE
    g = _cell_size(hi.max(0), (hi - lo)[faces].max(1), reach, faces.size)
    nx, ny = (np.floor(hi.max(0) / g).astype(np.int64) + 1).tolist()
    # walkable tops per cell: each plane maximised over the cell, clipped to the triangle top
    wi = np.flatnonzero(walk)
    n = mesh.normals[wi]
    nu = n @ u
    grad = -np.stack([n @ e1, n @ e2], 1) / nu[:, None]  # dh / d(e1, e2), |grad| <= tan(slope)
    row, cx, cy = _pairs(lo[wi], hi[wi], g, nx, ny)
    base = ch[wi, 0] - ((cp[wi, 0] - origin) * grad).sum(1)  # plane height at the origin
    gr = grad[row]
    x0, y0 = cx * g, cy * g
    top = base[row] + np.maximum(gr[:, 0] * x0, gr[:, 0] * (x0 + g)) + np.maximum(
        gr[:, 1] * y0, gr[:, 1] * (y0 + g))
    top = np.minimum(top, ch[wi].max(1)[row])
    wtop = np.full(nx * ny, -np.inf)
    np.maximum.at(wtop, cx * ny + cy, top)
    # non-walkable height ranges per cell
    oi = np.flatnonzero(~walk)
    row, cx, cy = _pairs(lo[oi], hi[oi], g, nx, ny)
    otop = np.full(nx * ny, -np.inf)
    obot = np.full(nx * ny, np.inf)
    np.maximum.at(otop, cx * ny + cy, ch[oi].max(1)[row])
    np.minimum.at(obot, cx * ny + cy, ch[oi].min(1)[row])
    k = int(math.ceil(reach / g))
    wtop = _dilate(wtop.reshape(nx, ny), k, np.maximum)
    otop = _dilate(otop.reshape(nx, ny), k, np.maximum)
    obot = _dilate(obot.reshape(nx, ny), k, np.minimum)
    return _read_faces(mesh, faces, s, u, lo, hi, ch, g, (nx, ny), (wtop, otop, obot))


def _read_faces(mesh, faces, s, u, lo, hi, ch, g, shape, grids):
    """Apply the two bounds at each face from the dilated grids (max over its box's cells)."""
    nx, ny = shape
    wtop, otop, obot = grids
    i0 = np.clip(np.floor(lo[faces] / g).astype(np.int64), 0, [nx - 1, ny - 1])
    i1 = np.clip(np.floor(hi[faces] / g).astype(np.int64), 0, [nx - 1, ny - 1])
    span = i1 - i0
    small = (span <= SCREEN_MAX_SPAN - 1).all(1)
    w = np.full(faces.size, -np.inf)
    ot = np.full(faces.size, -np.inf)
    ob = np.full(faces.size, np.inf)
    for dx in range(SCREEN_MAX_SPAN):
        for dy in range(SCREEN_MAX_SPAN):
            m = small & (span[:, 0] >= dx) & (span[:, 1] >= dy)
            cx, cy = i0[m, 0] + dx, i0[m, 1] + dy
            w[m] = np.maximum(w[m], wtop[cx, cy])
            ot[m] = np.maximum(ot[m], otop[cx, cy])
            ob[m] = np.minimum(ob[m], obot[cx, cy])
    nz = mesh.normals[faces] @ u
    fmin, fmax = ch[faces].min(1), ch[faces].max(1)
    centre_low = fmin + np.abs(nz) * (s.radius + s.skin_width)
    floor_ok = w < centre_low - SUPPORT_MIN_COS * s.radius - SCREEN_SLACK
    clear_lo = fmin - s.radius - SCREEN_SLACK
    clear_hi = fmax + s.height + s.skin_width + SCREEN_SLACK
    others_ok = (ot < clear_lo) | (ob > clear_hi)
    return small & floor_ok & others_ok
