"""Simple collision proxies fitted to a render mesh: the tight oriented box, a sphere or a
capsule where one fits within a tolerance, and whether a mesh is convex.

Frame and units: whatever frame the points are in (world space, metres, in the add-on and the
CLI); every result is in that frame. Shapes are numpy float64.

The oriented box is the smallest by volume over a set of candidate "up" axes: the three
principal axes of the points (PCA), the world axes and the normals of the mesh's largest faces
(the minimum-volume box has a face flush with a face of the hull in the usual case, O'Rourke
1985; a render mesh's big faces are its hull's). Across each axis the exact minimum-area
rectangle of the projected points is found by rotating calipers over their 2-D hull (Freeman
and Shapira 1975: one side of the best rectangle lies on a hull edge). A box-shaped mesh,
however rotated, gets its own box exactly.

Sphere and capsule fits are judged on surface samples (vertices, edge midpoints, triangle
centroids): ``deviation`` is the largest distance of a sample from the fitted surface, so a
sphere fits a UV sphere within its sagitta, and a cylinder does not fit a capsule.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ..constants import CONVEX_TOL, HULL_COLLINEAR_REL
from ..geometry.validate import as_finite, as_points

BOX_FACE_AXES = 24  # normals of the largest faces tried as box axes (besides PCA and world)
CONVEX_CHUNK = 512  # face planes tested against every vertex per numpy pass


class OrientedBox(NamedTuple):
    """center (3,); axes (3, 3) rows: orthonormal, right-handed box axes; half_extents (3,)
    metres along each axis row. ``volume`` in m^3."""

    center: np.ndarray
    axes: np.ndarray
    half_extents: np.ndarray

    @property
    def volume(self) -> float:
        return float(8.0 * np.prod(self.half_extents))

    @property
    def corners(self) -> np.ndarray:
        """(8, 3) corners: bit 0 of the index picks -/+ axis 0, bit 1 axis 1, bit 2 axis 2."""
        signs = np.array([[(i >> k & 1) * 2 - 1 for k in range(3)] for i in range(8)], float)
        return self.center + (signs * self.half_extents) @ self.axes


class PrimitiveFit(NamedTuple):
    """A sphere or capsule fitted to a mesh's surface.

    kind : "sphere", "capsule", or "" when neither fits within the tolerance; a : (3,) and
    b : (3,) the capsule's segment ends (equal for a sphere); radius : metres; deviation :
    metres, the largest distance of a surface sample from the fitted shape's surface (of the
    best shape tried when none fits); best : the kind that deviation belongs to.
    """

    kind: str
    a: np.ndarray
    b: np.ndarray
    radius: float
    deviation: float
    best: str


def as_mesh(vertices, triangles) -> tuple[np.ndarray, np.ndarray]:
    """Validated (N, 3) float64 vertices and (M, 3) int64 triangles (indices in range)."""
    v = as_points(vertices, "vertices")
    t = np.asarray(triangles)
    if t.ndim != 2 or t.shape[1] != 3 or (t.size and t.dtype.kind not in "iu"):
        raise ValueError(f"triangles must be an (M, 3) integer array, got shape {t.shape}")
    t = t.astype(np.int64)
    if t.size and (t.min() < 0 or t.max() >= len(v)):
        raise ValueError(f"triangles index vertices out of range [0, {len(v)})")
    return v, t


def surface_samples(vertices, triangles) -> np.ndarray:
    """(N + 4 M, 3) points on the surface: the vertices, each triangle's centroid and the
    midpoints of its edges (shared edges twice)."""
    v, t = as_mesh(vertices, triangles)
    c = v[t]
    mids = (c + np.roll(c, -1, axis=1)) / 2.0
    return np.concatenate([v, c.mean(axis=1), mids.reshape(-1, 3)])


# ---------------------------------------------------------------- oriented box
def hull_2d(points) -> np.ndarray:
    """Indices of the convex hull corners of (N, 2) points, counter-clockwise (quickhull;
    collinear points dropped). Fewer than 3 distinct corners: the extreme points."""
    p = np.asarray(points, dtype=np.float64)
    if len(p) < 3:
        return np.arange(len(p))
    scale2 = float(np.ptp(p, axis=0).max() ** 2) or 1.0
    eps = HULL_COLLINEAR_REL * scale2
    order = np.lexsort((p[:, 1], p[:, 0]))
    i0, i1 = int(order[0]), int(order[-1])
    if i0 == i1:
        return np.array([i0])
    idx = np.arange(len(p))

    def side(sub, a, b):  # the corners strictly left of a->b, a excluded, b excluded
        if not sub.size:
            return []
        d = p[b] - p[a]
        r = p[sub] - p[a]
        cross = d[0] * r[:, 1] - d[1] * r[:, 0]
        left = sub[cross > eps]
        if not left.size:
            return []
        far = int(left[np.argmax(cross[cross > eps])])
        return side(left, a, far) + [far] + side(left, far, b)

    lower = side(idx, i1, i0)  # right of i0->i1: counter-clockwise from i0 to i1
    upper = side(idx, i0, i1)
    return np.array([i0, *lower, i1, *upper], dtype=np.int64)


def min_area_rectangle(points) -> tuple[float, np.ndarray, np.ndarray, np.ndarray]:
    """The minimum-area rectangle around (N, 2) points (rotating calipers over the hull's
    edges): (area, direction (2,) unit along one side, lo (2,), hi (2,)) with lo/hi the
    extents along (direction, its left perpendicular)."""
    p = np.asarray(points, dtype=np.float64)
    h = p[hull_2d(p)]
    if len(h) < 3:
        d = h[-1] - h[0] if len(h) == 2 else np.array([1.0, 0.0])
        n = float(np.hypot(*d))
        dirs = (d / n)[None] if n > 0 else np.array([[1.0, 0.0]])
    else:
        e = np.roll(h, -1, axis=0) - h
        dirs = e / np.hypot(e[:, 0], e[:, 1])[:, None]
    perp = np.column_stack([-dirs[:, 1], dirs[:, 0]])
    a, b = h @ dirs.T, h @ perp.T  # (H, E) projections of every corner on every edge frame
    area = np.ptp(a, axis=0) * np.ptp(b, axis=0)
    k = int(np.argmin(area))
    return (float(area[k]), dirs[k], np.array([a[:, k].min(), b[:, k].min()]),
            np.array([a[:, k].max(), b[:, k].max()]))


def _basis(n):
    """Two unit vectors completing unit ``n`` to a right-handed frame (e1, e2, n)."""
    helper = np.array([1.0, 0.0, 0.0]) if abs(n[0]) < 0.9 else np.array([0.0, 1.0, 0.0])
    e1 = np.cross(helper, n)
    e1 /= np.linalg.norm(e1)
    return e1, np.cross(n, e1)


def _candidate_axes(v, t) -> np.ndarray:
    """(K, 3) unit axes tried as a box's third axis: world, PCA, largest-face normals."""
    axes = [np.eye(3)]
    centred = v - v.mean(axis=0)
    if len(v) >= 2:
        _w, vecs = np.linalg.eigh(centred.T @ centred)
        axes.append(vecs.T)
    if t.size:
        c = v[t]
        cross = np.cross(c[:, 1] - c[:, 0], c[:, 2] - c[:, 0])
        area = np.linalg.norm(cross, axis=1)
        ok = area > 0
        n = cross[ok] / area[ok, None]
        n *= np.where(n @ np.array([1.0, 2.0, 3.0]) < 0, -1.0, 1.0)[:, None]  # n and -n alike
        key, inv = np.unique(np.round(n, 4), axis=0, return_inverse=True)
        total = np.bincount(inv.ravel(), weights=area[ok], minlength=len(key))
        best = np.argsort(-total, kind="stable")[:BOX_FACE_AXES]
        axes.append(key[best] / np.linalg.norm(key[best], axis=1)[:, None])
    out = np.concatenate(axes)
    out *= np.where(out @ np.array([1.0, 2.0, 3.0]) < 0, -1.0, 1.0)[:, None]
    _, first = np.unique(np.round(out, 9), axis=0, return_index=True)
    return out[np.sort(first)]  # each axis once, in the order above


def oriented_box(vertices, triangles=None) -> OrientedBox:
    """The tight oriented box around ``vertices`` (N >= 1, (N, 3)); see the module docstring.
    ``triangles`` (M, 3) adds the normals of the largest faces as candidate axes."""
    v = as_points(vertices, "vertices")
    if not len(v):
        raise ValueError("vertices must hold at least one point")
    t = as_mesh(v, triangles)[1] if triangles is not None else np.empty((0, 3), np.int64)
    best = None
    for n in _candidate_axes(v, t):
        e1, e2 = _basis(n)
        area, d, lo, hi = min_area_rectangle(np.column_stack([v @ e1, v @ e2]))
        h = v @ n
        volume = area * float(np.ptp(h))
        if best is not None and volume >= best[0]:  # ties: the earlier (world, PCA) axes
            continue
        ax0 = d[0] * e1 + d[1] * e2
        ax1 = np.cross(n, ax0)
        mid = (lo + hi) / 2.0
        center = mid[0] * ax0 + mid[1] * ax1 + (h.max() + h.min()) / 2.0 * n
        half = np.array([(hi - lo)[0], (hi - lo)[1], float(np.ptp(h))]) / 2.0
        best = (volume, OrientedBox(center, np.array([ax0, ax1, n]), half))
    assert best is not None
    return best[1]


# ---------------------------------------------------------------- sphere and capsule
def _sphere(s) -> tuple[np.ndarray, float, float]:
    """Least-squares sphere (algebraic fit) through samples, radius minimising the largest
    deviation for that centre: (centre, radius, deviation)."""
    a = np.column_stack([2.0 * s, np.ones(len(s))])
    sol, *_ = np.linalg.lstsq(a, (s * s).sum(axis=1), rcond=None)
    c = sol[:3]
    d = np.linalg.norm(s - c, axis=1)
    return c, float(d.max() + d.min()) / 2.0, float(d.max() - d.min()) / 2.0


def _capsule(s) -> tuple[np.ndarray, np.ndarray, float, float]:
    """Capsule along the samples' principal axis: (a, b, radius, deviation)."""
    c = s.mean(axis=0)
    _w, vecs = np.linalg.eigh((s - c).T @ (s - c))
    axis = vecs[:, 2]
    t = (s - c) @ axis
    c = c + axis * (t.max() + t.min()) / 2.0
    t = (s - c) @ axis
    rho = np.linalg.norm(s - c - np.outer(t, axis), axis=1)
    half = max(float(np.abs(t).max() - rho.max()), 0.0)
    d = np.hypot(rho, np.maximum(np.abs(t) - half, 0.0))
    return c - axis * half, c + axis * half, float(d.max() + d.min()) / 2.0, \
        float(d.max() - d.min()) / 2.0


def fit_primitive(vertices, triangles, tolerance) -> PrimitiveFit:
    """A sphere (preferred) or capsule whose surface is within ``tolerance`` metres of every
    surface sample of the mesh; ``kind == ""`` when neither is (see ``deviation``)."""
    v, t = as_mesh(vertices, triangles)
    tol = as_finite(tolerance, "tolerance")
    if tol < 0:
        raise ValueError(f"tolerance must be >= 0 metres, got {tol}")
    if len(v) < 4 or not t.size:
        raise ValueError("vertices and triangles must describe a surface (>= 4 vertices)")
    s = surface_samples(v, t)
    c, r, dev_s = _sphere(s)
    if dev_s <= tol:
        return PrimitiveFit("sphere", c, c.copy(), r, dev_s, "sphere")
    a, b, rc, dev_c = _capsule(s)
    if dev_c <= tol and rc > 0:
        return PrimitiveFit("capsule", a, b, rc, dev_c, "capsule")
    if dev_s <= dev_c:
        return PrimitiveFit("", c, c.copy(), r, dev_s, "sphere")
    return PrimitiveFit("", a, b, rc, dev_c, "capsule")


def is_convex(vertices, triangles, tolerance=CONVEX_TOL) -> bool:
    """True when no vertex lies more than ``tolerance`` metres in front of any face's plane
    (faces wound outwards; zero-area faces skipped). Stops at the first chunk that fails."""
    v, t = as_mesh(vertices, triangles)
    c = v[t]
    n = np.cross(c[:, 1] - c[:, 0], c[:, 2] - c[:, 0])
    ln = np.linalg.norm(n, axis=1)
    ok = ln > 0
    n, p0 = n[ok] / ln[ok, None], c[ok, 0]
    for start in range(0, len(n), CONVEX_CHUNK):
        nn, pp = n[start:start + CONVEX_CHUNK], p0[start:start + CONVEX_CHUNK]
        if ((v @ nn.T) - (pp * nn).sum(axis=1) > tolerance).any():
            return False
    return True
