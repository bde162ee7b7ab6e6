"""Brute-force references for the mesh tests: the exact per-triangle kernels over every
triangle of a mesh, no hierarchy, no culls. Slow on purpose; small meshes only."""

import numpy as np
from capsule_collision.core.geometry.contact import capsule_triangle_many
from capsule_collision.core.geometry.sweep import sweep_capsule_triangle_many
from capsule_collision.core.mesh.rays import ray_triangle_many


def brute_contacts(mesh, a, b, r):
    """Penetrated triangles of capsule (a, b, r), deepest first (ties: lower index first).
    Returns (indices, depth, normal, point)."""
    tri = mesh.vertices[mesh.triangles]
    hit, depth, normal, point = capsule_triangle_many(a, b, r, tri[:, 0], tri[:, 1], tri[:, 2])
    idx = np.flatnonzero(hit)
    order = idx[np.lexsort((idx, -depth[idx]))]
    return order, depth[order], normal[order], point[order]


def brute_sweep(mesh, a, b, r, v):
    """First hit of capsule (a, b, r) moved by v, or None: (time, triangle, normal, point);
    ties go to the lowest triangle index."""
    tri = mesh.vertices[mesh.triangles]
    n = len(tri)
    t, nrm, pt = sweep_capsule_triangle_many(
        np.broadcast_to(a, (n, 3)), np.broadcast_to(b, (n, 3)), np.full(n, r),
        np.broadcast_to(v, (n, 3)), tri[:, 0], tri[:, 1], tri[:, 2])
    i = int(np.argmin(t))  # first minimum: the lowest index among ties
    if not np.isfinite(t[i]):
        return None
    return t[i], i, nrm[i], pt[i]


def brute_ray(mesh, o, d, md):
    """First triangle the ray o + t unit(d), 0 <= t <= md, hits, or None: (t, triangle);
    zero-area triangles are never hit, ties go to the lowest triangle index."""
    tri = mesh.vertices[mesh.triangles]
    n = len(tri)
    du = d / np.sqrt(np.einsum("i,i->", d, d))
    t, hit = ray_triangle_many(np.broadcast_to(o, (n, 3)), np.broadcast_to(du, (n, 3)),
                               tri[:, 0], tri[:, 1], tri[:, 2])
    hit &= (t >= 0) & (t <= md) & (mesh.areas > 0)
    if not hit.any():
        return None
    idx = np.flatnonzero(hit)
    best = idx[np.lexsort((idx, t[idx]))[0]]
    return t[best], best
