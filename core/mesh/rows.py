"""The per-triangle rows a ``TriangleMesh`` stores and its queries read, and how they are built.

Two stored blocks, row-major so that one candidate's data is one contiguous row:

- cull rows ``(M, CULL_FIELDS)`` float64: unit normal (``CULL_NORMAL``), plane offset
  ``n . a`` (``CULL_OFFSET``), bounding-sphere centroid (``CULL_CENTROID``) and radius (max
  vertex distance, ``CULL_RADIUS``), metres. Read by the culls (core/mesh/culls.py).
- kernel records ``(M, REC_FIELDS)`` float64: the exact kernels' triangle records
  (``triangle_record``: inward edge normals and offsets relative to vertex a, vertex a at
  ``REC_A``). Read by the exact contact and sweep kernels.

``gather_rows`` assembles, for a few candidates, ``(k, ROW_FIELDS)`` rows of the corners and
the cull row (layout ``ROW_A`` .. ``ROW_OFFSET``): the corners are gathered from the vertices
on demand rather than stored per triangle (72 bytes a triangle at 1M triangles).

Input validation of the mesh arrays (``as_vertices``, ``as_triangles``) lives here too: the
rows are built from what they return. World space, metres.
"""

from __future__ import annotations

from contextlib import contextmanager

import numpy as np

from ..constants import MESH_CULL_REL, PLANE_SLACK_REL, SLIVER_REL2
from ..geometry.closest import REC_FIELDS, triangle_record
from ..geometry.records import as_rows

# ------------------------------------------------------------------ layouts
CULL_FIELDS = 8
CULL_NORMAL, CULL_OFFSET = slice(0, 3), 3
CULL_CENTROID, CULL_RADIUS = slice(4, 7), 7
ROW_FIELDS = 17  # corners (9) then the cull row (8)
ROW_A, ROW_B, ROW_C = slice(0, 3), slice(3, 6), slice(6, 9)
ROW_NORMAL, ROW_OFFSET = slice(9, 12), 12  # then centroid 13:16, radius 16

RECORD_BUILD_CHUNK = 65536  # triangles per chunk when building the kernel records (temporaries)



# ------------------------------------------------------------------ validation
def as_vertices(vertices) -> np.ndarray:
    """(V, 3) float64 C-contiguous copy of ``vertices``; ValueError naming the argument."""
    try:
        arr = np.array(vertices, dtype=np.float64, copy=True)
    except (TypeError, ValueError) as exc:
        raise ValueError("vertices must be an (N, 3) array of numbers") from exc
    if arr.ndim != 2 or arr.shape[1] != 3:
        raise ValueError(f"vertices must have shape (N, 3), got shape {arr.shape}")
    if arr.shape[0] == 0:
        raise ValueError("vertices is empty: a mesh needs at least one triangle")
    if not np.isfinite(arr).all():
        raise ValueError("vertices must be finite (no NaN or infinity)")
    return np.ascontiguousarray(arr)


def as_triangles(triangles, n_vertices: int) -> np.ndarray:
    """(M, 3) int64 vertex indices in [0, n_vertices); ValueError naming the argument."""
    raw = np.asarray(triangles)
    if raw.ndim != 2 or raw.shape[1] != 3:
        raise ValueError(f"triangles must have shape (M, 3), got shape {raw.shape}")
    if raw.shape[0] == 0:
        raise ValueError("triangles is empty: a mesh needs at least one triangle")
    if raw.dtype.kind == "b" or raw.dtype.kind not in "iuf":
        raise ValueError(f"triangles must be integer vertex indices, got dtype {raw.dtype}")
    if raw.dtype.kind == "f":
        if not np.isfinite(raw).all() or (raw != np.round(raw)).any():
            raise ValueError("triangles must hold whole-number vertex indices")
    if raw.dtype.kind == "u" and raw.dtype.itemsize >= 8 and (raw > n_vertices).any():
        raise ValueError(f"triangles has indices out of range [0, {n_vertices})")
    tri = np.ascontiguousarray(raw, dtype=np.int64)
    if (tri < 0).any():
        raise ValueError("triangles has negative vertex indices")
    if (tri >= n_vertices).any():
        raise ValueError(
            f"triangles has indices out of range [0, {n_vertices}) (max {int(tri.max())})"
        )
    return tri


# ------------------------------------------------------------------ build
@contextmanager
def small_pages():
    """Build without numpy's transparent-huge-page advice, restoring it afterwards.

    numpy asks Linux for huge pages on large arrays; with THP in ``madvise`` mode the kernel
    then compacts memory synchronously on first touch, which makes a large build's time vary
    widely; queries on the built arrays run at the same speed either way. A no-op where numpy
    lacks the switch.
    """
    multiarray = getattr(getattr(np, "_core", None), "multiarray", None) or getattr(
        getattr(np, "core", None), "multiarray", None)
    switch = getattr(multiarray, "_set_madvise_hugepage", None)
    if switch is None:
        yield
        return
    previous = switch(False)
    try:
        yield
    finally:
        switch(previous)


def build_cull_rows(A, B, C, max_abs_coordinate: float):
    """Cull rows of triangles (A, B, C) (M, 3) each, metres.

    Returns (cull (M, CULL_FIELDS) float64, normals (M, 3) float64 unit or zero, area2 (M,)
    float64 twice the areas, zero for a zero-area triangle). A triangle is zero-area when
    |e1 x e2|^2 <= SLIVER_REL2 |e_max|^4 (a sliver counts as its segment). ``max_abs_coordinate``:
    the mesh's largest |coordinate|, metres (scales the plane slack below).
    """
    m = A.shape[0]
    cull = np.empty((m, CULL_FIELDS))
    area2 = _unit_normals(A, B, C, out=cull[:, CULL_NORMAL])
    cull[:, CULL_OFFSET] = np.einsum("ij,ij->i", cull[:, CULL_NORMAL], A)
    _bounding_spheres(A, B, C, cull)
    # The public normals, before the cull block may drop some (below).
    normals = cull[:, CULL_NORMAL].copy()
    _drop_loose_planes(B, C, cull, max_abs_coordinate)
    return cull, normals, area2


def _unit_normals(A, B, C, out):
    """Writes unit normals (zero for zero-area triangles) into ``out`` (M, 3); returns (M,)
    |e1 x e2| (zero for zero-area triangles)."""
    e1 = B - A
    e2 = C - A
    cr = np.cross(e1, e2)
    n2 = np.einsum("ij,ij->i", cr, cr)
    emax = np.einsum("ij,ij->i", e1, e1)
    np.maximum(emax, np.einsum("ij,ij->i", e2, e2), out=emax)
    e2 -= e1  # now C - B
    np.maximum(emax, np.einsum("ij,ij->i", e2, e2), out=emax)
    del e1, e2
    degenerate = n2 <= SLIVER_REL2 * emax * emax  # zero-area or sliver: no normal
    length = np.sqrt(n2, out=n2)
    length[degenerate] = 0.0
    inv = np.divide(1.0, length, out=np.zeros_like(length), where=~degenerate)
    np.multiply(cr, inv[:, None], out=out)
    return length


def _bounding_spheres(A, B, C, cull):
    """Writes each triangle's centroid and max vertex distance into the cull rows."""
    cen = cull[:, CULL_CENTROID]
    np.add(A, B, out=cen)
    cen += C
    cen *= 1.0 / 3.0
    rad2 = np.einsum("ij,ij->i", A - cen, A - cen)
    np.maximum(rad2, np.einsum("ij,ij->i", B - cen, B - cen), out=rad2)
    np.maximum(rad2, np.einsum("ij,ij->i", C - cen, C - cen), out=rad2)
    cull[:, CULL_RADIUS] = np.sqrt(rad2)


def _drop_loose_planes(B, C, cull, max_abs_coordinate):
    """Zero the normal and offset of triangles whose corners sit off their stored plane.

    Plane-based culls (plane-slab rejects, the window cull's normal axis, the disc cull)
    take a triangle to lie in its stored plane. A sliver's normal is only known to
    ~1e-16 |e|^2 / |e1 x e2| rad, so a corner can sit farther off that plane than the pads'
    rounding margin; such triangles get no plane in the cull rows (zero normal and offset:
    those culls keep them) and only their bounding sphere culls them
    (tests/core/test_mesh.py::test_sliver_corner_off_its_plane_is_not_culled).
    """
    nrm, off = cull[:, CULL_NORMAL], cull[:, CULL_OFFSET]
    off_plane = np.abs(np.einsum("ij,ij->i", nrm, B) - off)
    np.maximum(off_plane, np.abs(np.einsum("ij,ij->i", nrm, C) - off), out=off_plane)
    loose = off_plane > PLANE_SLACK_REL * MESH_CULL_REL * (1.0 + max_abs_coordinate)
    cull[loose, 0:4] = 0.0  # normal and offset


def build_kernel_records(A, B, C) -> np.ndarray:
    """(M, REC_FIELDS) float64 kernel records of triangles (A, B, C) (M, 3) each, built in
    chunks of ``RECORD_BUILD_CHUNK`` triangles to bound the temporaries."""
    m = A.shape[0]
    krec = np.empty((m, REC_FIELDS))
    with np.errstate(divide="ignore", invalid="ignore"):
        for lo in range(0, m, RECORD_BUILD_CHUNK):
            s = slice(lo, lo + RECORD_BUILD_CHUNK)
            krec[s] = triangle_record(as_rows(A[s]), as_rows(B[s]), as_rows(C[s])).T
    return krec


# ------------------------------------------------------------------ gathering
def gather_rows(vertices, triangles, cull, idx) -> np.ndarray:
    """(k, ROW_FIELDS) float64 rows of triangles ``idx`` (k,) int: corners a, b, c, then the
    cull row; identical to storing them, without the memory."""
    idx = np.asarray(idx)
    out = np.empty((idx.size, ROW_FIELDS))
    corners = np.take(triangles, idx, axis=0)
    out[:, 0:9] = np.take(vertices, corners.ravel(), axis=0).reshape(idx.size, 9)
    out[:, 9:17] = np.take(cull, idx, axis=0)
    return out
