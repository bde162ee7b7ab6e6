"""Triangle meshes of proxy shapes: a box from its corners, a capsule or sphere from its
segment and radius. Outward winding (counter-clockwise seen from outside), float64, the frame
of the inputs (world space, metres, in the add-on and the CLI).
"""

from __future__ import annotations

import numpy as np

from ..geometry.validate import as_point, as_radius
from .primitives import OrientedBox

# (8, 3) corners indexed as OrientedBox.corners: bit k set = + along axis k
BOX_TRIANGLES = np.array([
    [0, 2, 3], [0, 3, 1],  # -axis2
    [4, 5, 7], [4, 7, 6],  # +axis2
    [0, 1, 5], [0, 5, 4],  # -axis1
    [2, 6, 7], [2, 7, 3],  # +axis1
    [0, 4, 6], [0, 6, 2],  # -axis0
    [1, 3, 7], [1, 7, 5],  # +axis0
], dtype=np.int64)


def box_mesh(box: OrientedBox) -> tuple[np.ndarray, np.ndarray]:
    """(8, 3) corners and (12, 3) outward triangles of ``box``."""
    return box.corners, BOX_TRIANGLES.copy()


def orient_outwards(vertices, triangles) -> np.ndarray:
    """``triangles`` of a convex solid with each one wound so its normal points away from the
    solid's centroid (vertex mean)."""
    v, t = np.asarray(vertices, float), np.asarray(triangles, np.int64).copy()
    c = v[t]
    n = np.cross(c[:, 1] - c[:, 0], c[:, 2] - c[:, 0])
    flip = ((c.mean(axis=1) - v.mean(axis=0)) * n).sum(axis=1) < 0
    t[flip] = t[flip][:, [0, 2, 1]]
    return t


def capsule_mesh(a, b, radius, segments=16, rings=4) -> tuple[np.ndarray, np.ndarray]:
    """A capsule (``a != b``) or sphere (``a == b``) around segment a-b: two hemispheres of
    ``rings`` latitude rings each (``segments`` around) joined by the cylinder between them.
    Every vertex lies exactly ``radius`` from the segment. Returns (V, 3), (T, 3)."""
    pa, pb = as_point(a, "a"), as_point(b, "b")
    r = as_radius(radius)
    if int(segments) < 3 or int(rings) < 1:
        raise ValueError(f"segments must be >= 3 and rings >= 1, got {segments}, {rings}")
    seg, ring = int(segments), int(rings)
    axis = pb - pa
    length = float(np.linalg.norm(axis))
    z = axis / length if length > 0 else np.array([0.0, 0.0, 1.0])
    helper = np.array([1.0, 0.0, 0.0]) if abs(z[0]) < 0.9 else np.array([0.0, 1.0, 0.0])
    x = np.cross(helper, z)
    x /= np.linalg.norm(x)
    y = np.cross(z, x)
    phi = np.arange(seg) * 2.0 * np.pi / seg
    around = np.outer(np.cos(phi), x) + np.outer(np.sin(phi), y)  # (seg, 3)
    lat = np.arange(1, ring + 1) * (np.pi / 2.0) / ring  # from the pole to the equator
    top = [pb + r * np.cos(t_) * z + r * np.sin(t_) * around for t_ in lat]
    bottom = [pa - r * np.cos(t_) * z + r * np.sin(t_) * around for t_ in lat[::-1]]
    if length == 0:
        bottom = bottom[1:]  # a sphere: one equator
    rows = top + bottom
    verts = np.concatenate([[pb + r * z], *rows, [pa - r * z]])
    tris = []
    first = 1
    j = np.arange(seg)
    k = (j + 1) % seg
    tris.append(np.column_stack([np.zeros(seg, np.int64), first + j, first + k]))
    for row in range(len(rows) - 1):
        u, w = first + row * seg, first + (row + 1) * seg
        tris.append(np.column_stack([u + j, w + j, w + k]))
        tris.append(np.column_stack([u + j, w + k, u + k]))
    last, pole = first + (len(rows) - 1) * seg, len(verts) - 1
    tris.append(np.column_stack([last + j, np.full(seg, pole), last + k]))
    t = np.concatenate(tris).astype(np.int64)
    return verts, orient_outwards(verts, t)
