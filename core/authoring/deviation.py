"""How far a simplified mesh strays from the mesh it stands for: a sampled, two-sided
(Hausdorff-like) distance, for decimated collision proxies checked against a tolerance.

Samples are each surface's vertices, edge midpoints and triangle centroids
(``primitives.surface_samples``); a sample's distance to the other surface is found with the
mesh's own sphere queries (``TriangleMesh.capsule_contacts_many`` with a == b: a sphere of
radius ``tolerance`` around the sample touches the surface exactly when the surface is closer
than ``tolerance``). Metres, the frame of the inputs.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ..geometry.validate import as_finite
from ..mesh.triangle_mesh import TriangleMesh
from .primitives import as_mesh, surface_samples


class Deviation(NamedTuple):
    """within : every sample of each surface is closer than ``tolerance`` to the other;
    distance : metres, the largest sampled distance (``tolerance`` when some sample is
    farther: the query looks no farther); outside : samples farther than ``tolerance``."""

    within: bool
    distance: float
    outside: int


def _sample_distances(samples, mesh, tol) -> np.ndarray:
    """(N,) distance of each sample to ``mesh``, capped at ``tol``."""
    batch = mesh.capsule_contacts_many(samples, samples, tol)
    dist = np.full(len(samples), tol)
    np.minimum.at(dist, batch.query, tol - batch.depth)
    return np.maximum(dist, 0.0)


def surface_deviation(vertices, triangles, other_vertices, other_triangles,
                      tolerance, mesh: TriangleMesh | None = None) -> Deviation:
    """The sampled two-sided distance between two triangle meshes, up to ``tolerance``
    metres (> 0). See the module docstring. ``mesh``: the first mesh already built as a
    TriangleMesh (a bisection compares one mesh with many simplifications of it)."""
    tol = as_finite(tolerance, "tolerance")
    if tol <= 0:
        raise ValueError(f"tolerance must be > 0 metres, got {tol}")
    v, t = as_mesh(vertices, triangles)
    ov, ot = as_mesh(other_vertices, other_triangles)
    if not t.size or not ot.size:
        raise ValueError("both meshes need triangles (vertices/other_vertices)")
    there = _sample_distances(surface_samples(v, t), TriangleMesh(ov, ot), tol)
    back = _sample_distances(surface_samples(ov, ot),
                             mesh if mesh is not None else TriangleMesh(v, t), tol)
    d = np.concatenate([there, back])
    out = int((d >= tol).sum())
    return Deviation(out == 0, float(d.max()), out)
