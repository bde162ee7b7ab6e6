"""Per-triangle records: the layout the exact kernels share (closest, contact, sweep, mesh).

A record is a column of a (REC_FIELDS, N) float64 array (component-major: slices reshape to
(3, K, N) vector stacks), everything relative to the triangle's vertex a, built once per
triangle (``TriangleMesh`` stores them row-major, (M, REC_FIELDS)) by ``triangle_record``.
Also the component-major vector helpers the kernels use: vectors are (3, ...) arrays, a
component is a contiguous row (core/geometry/closest.py's module notes).
"""

from __future__ import annotations

import numpy as np

from ..constants import SLIVER_REL2

__all__ = [
    "FLOAT_TINY",
    "REC_A",
    "REC_E",
    "REC_EE",
    "REC_FIELDS",
    "REC_G",
    "REC_MOFF",
    "REC_NN",
    "as_rows",
    "cross3",
    "dot3",
    "drop_sliver_normal",
    "triangle_record",
]

# Smallest normal float64: a divisor guard against 0/0 (not a tolerance).
FLOAT_TINY = float(np.finfo(np.float64).tiny)
_CYCLIC = np.array([1, 2, 0, 1])  # u[_CYCLIC][:3] = (u1, u2, u0), [1:] = (u2, u0, u1)


def as_rows(x) -> np.ndarray:
    """(3,) -> (3, 1); (N, 3) -> (3, N) view, float64. No validation."""
    x = np.asarray(x, dtype=np.float64)
    return x.reshape(3, 1) if x.ndim == 1 else x.T


def dot3(u, v):
    """Dot products over the leading (component) axis of (3, ...) stacks."""
    return (u * v).sum(0)


def cross3(u, v):
    """Cross products over the leading (component) axis of (3, ...) stacks."""
    ue = u[_CYCLIC]
    ve = v[_CYCLIC]
    return ue[:3] * ve[1:] - ue[1:] * ve[:3]


def drop_sliver_normal(n, ee):
    """n (3, ...), or 0 where the triangle is a sliver: |n|^2 <= SLIVER_REL2 * (max |E|^2)^2.

    ee (3, ...) the squared edge lengths. A zero normal selects the kernels' degenerate path
    (the union of the three edges), so a sliver behaves as the segment it nearly is (see
    SLIVER_REL2). Other triangles keep n bit for bit (multiplied by 1.0)."""
    emax = ee.max(0)
    return n * (dot3(n, n) > SLIVER_REL2 * (emax * emax))


# Rows of the per-triangle record (``triangle_record``), component-major: a (F, N) float64
# array whose slices reshape to (3, K, N) vector stacks. Everything is relative to vertex a.
REC_G = slice(0, 12)  # (3, 4): normal n, inward edge normals M0, M1, M2 (M_i = n x E_i)
REC_E = slice(12, 21)  # (3, 3): edge vectors E0 = B, E1 = C - B, E2 = -C (B = b - a, C = c - a)
REC_EE = slice(21, 24)  # |E_i|^2
REC_MOFF = slice(24, 27)  # O_i . M_i, edge origins O = (0, B, C)
REC_NN = 27  # |n|^2 (0 only for an exactly degenerate triangle)
REC_A = slice(28, 31)  # vertex a, world space (the local origin)
REC_FIELDS = 31


def triangle_record(A, B, C, out=None):
    """Per-triangle data for the segment-triangle kernel; A, B, C (3, N) world vertices.

    Returns (REC_FIELDS, N) float64 (rows named by the ``REC_*`` slices), or fills ``out``.
    The normal is cross(B, C) re-orthogonalised against B (see the module notes).
    """
    N = np.broadcast_shapes(A.shape, B.shape, C.shape)[1]
    T = np.empty((REC_FIELDS, N)) if out is None else out
    G = T[REC_G].reshape(3, 4, N)
    E = T[REC_E].reshape(3, 3, N)
    E[:, 0] = B - A
    E[:, 2] = A - C  # = -(c - a): the edge c -> a
    Bv = E[:, 0]
    Cv = -E[:, 2]
    n = cross3(Bv, Cv)
    n -= (dot3(n, Bv) / np.maximum(dot3(Bv, Bv), FLOAT_TINY)) * Bv
    E[:, 1] = Cv - Bv
    ee = T[REC_EE]
    ee[:] = dot3(E, E)
    n = drop_sliver_normal(n, ee)
    G[:, 0] = n
    G[:, 1:] = cross3(n[:, None], E)
    T[REC_MOFF][0] = 0.0
    T[REC_MOFF][1] = dot3(Bv, G[:, 2])
    T[REC_MOFF][2] = dot3(Cv, G[:, 3])
    T[REC_NN] = dot3(n, n)
    T[REC_A] = A
    return T
