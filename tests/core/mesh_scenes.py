"""Mesh scenes and query sets shared by the mesh tests (numpy only, deterministic by seed).

Scenes return ``(vertices (V, 3) float64, triangles (M, 3) int64)``, metres, Z up.
"""

import numpy as np

from tools import scenes


def grid_mesh(n=12, cell=0.5, seed=0, bumps=0.1, z=0.0):
    """An n x n grid of ``cell`` m squares (2 triangles each) at height ``z``, every vertex
    raised by a uniform random amount in [-bumps, bumps] (bumps=0: a flat floor)."""
    g = np.arange(n + 1) * cell
    X, Y = np.meshgrid(g, g, indexing="ij")
    if bumps:
        Z = np.random.default_rng(seed).uniform(-bumps, bumps, X.shape)
        if z:
            Z = Z + z
    else:
        Z = np.full(X.shape, z)
    idx = np.arange((n + 1) ** 2).reshape(n + 1, n + 1)
    i00, i10 = idx[:-1, :-1].ravel(), idx[1:, :-1].ravel()
    i01, i11 = idx[:-1, 1:].ravel(), idx[1:, 1:].ravel()
    tris = np.concatenate([np.stack([i00, i10, i11], 1), np.stack([i00, i11, i01], 1)])
    return np.stack([X.ravel(), Y.ravel(), Z.ravel()], 1), tris


def soup_mesh(n=300, seed=0, extent=4.0, with_degenerate=True):
    """``scenes.soup``; with_degenerate: triangles 0, 1 collapse to segments, 2 to a point,
    3 to three collinear points."""
    v, t = scenes.soup(n, seed=seed, extent=extent)
    if with_degenerate:
        v = v.copy()
        v[3 * 0 + 2] = v[3 * 0 + 1]  # triangle 0 collapses to a segment
        v[3 * 1 + 1] = v[3 * 1]  # triangle 1: a segment
        v[3 * 2 + 1] = v[3 * 2]
        v[3 * 2 + 2] = v[3 * 2]  # triangle 2: a point
        v[3 * 3 + 2] = 0.5 * (v[3 * 3] + v[3 * 3 + 1])  # triangle 3: collinear
    return v, t


def random_capsules(mesh, n, seed):
    """``scenes.capsule_queries`` with ~30 % of the capsules tilted and ~10 % shrunk to
    spheres, so not all are upright. Returns a, b (n, 3), r (n,)."""
    v, t = mesh.vertices, mesh.triangles
    a, b, r = scenes.capsule_queries(v, t, n, seed=seed)
    rng = np.random.default_rng(seed)
    tilt = rng.normal(scale=0.5, size=(n, 3))
    sel = rng.uniform(size=n) < 0.3
    b = np.where(sel[:, None], b + tilt, b)
    sph = rng.uniform(size=n) < 0.1
    b = np.where(sph[:, None], a, b)
    return a, b, r
