"""A triangle mesh edited in place of a rebuild: ``replace_triangles`` and ``PatchedMesh``.

Building a ``TriangleMesh`` of a million triangles takes seconds (records, cull rows, the
BVH); editing one object of a level changes a few hundred. ``replace_triangles(mesh, remove,
vertices, triangles)`` returns a ``PatchedMesh`` in time proportional to the edit (plus a few
passes over an (M,) bool mask): the built mesh (``base``) is kept whole and its removed
triangles are hidden from its queries (``TriangleMesh.masked``: the hierarchy skips them), and
a small second ``TriangleMesh`` (``extra``) holds every added triangle. Patching a patched
mesh hides more base triangles and rebuilds the small one; ``compacted()`` is the full
rebuild, for when the editing is over.

Index order, the contract: the patched mesh's triangles are the base's live triangles in
their order, then the added ones in the order added (a removed added triangle drops out);
``vertices`` are the base's, then the added ones. Every query answers exactly as
``TriangleMesh(patched.vertices, patched.triangles)`` would, bit for bit: both halves are
exact meshes over the same corners (records depend on a triangle's corners only; culls only
drop pairs that cannot touch), and their answers are merged in that index order (contacts by
depth then index, first hits by time then index). tests/core/test_patched_mesh.py checks it
query for query against a fresh build.

The whole-mesh arrays (``vertices``, ``triangles``, ``normals``, ``areas``, ``aabb``) are
assembled on first use (a copy of the mesh: ~10-30 ms at 1M triangles). The internal
per-triangle rows of ``TriangleMesh`` are not offered: the controller and the walks run on a
patched mesh through its batched sweep (``sweep_batch``, no candidate cache). World space,
metres.
"""

from __future__ import annotations

import numpy as np

from ..geometry.shapes import Capsule, Contact, Hit
from ..geometry.validate import as_points
from .contacts import ContactBatch, contact_order
from .rows import as_triangles, as_vertices
from .sweeps import SweepBatch
from .triangle_mesh import TriangleMesh

__all__ = ["PatchedMesh", "replace_triangles"]


def replace_triangles(mesh, remove, vertices, triangles) -> PatchedMesh:
    """``mesh`` (TriangleMesh or PatchedMesh) without triangles ``remove`` and with
    ``triangles`` over the new ``vertices`` appended (see the module docstring for the order).

    remove : (R,) int indices of ``mesh``'s triangles (any order, repeats allowed)
    vertices : (E, 3) float64 metres, the added triangles' corners (E may be 0 with no
        added triangles); triangles : (K, 3) int indices into ``vertices`` (K may be 0)

    ValueError for an index out of range, bad arrays, or a result with no triangle.
    """
    base, live, extra_v, extra_t = _halves(mesh)
    n_live = int(live.sum())
    remove = np.unique(np.asarray(remove, dtype=np.int64).ravel())
    if remove.size and (remove[0] < 0 or remove[-1] >= n_live + extra_t.shape[0]):
        raise ValueError(f"remove holds indices outside [0, {n_live + extra_t.shape[0]})")
    new_v, new_t = _added(vertices, triangles)
    gone = remove[remove < n_live]
    if gone.size:
        live = live.copy()
        live[base_index(live, gone)] = False
    keep = np.ones(extra_t.shape[0], bool)
    keep[remove[remove >= n_live] - n_live] = False
    extra_v, extra_t = _compact(np.concatenate([extra_v, new_v]),
                                np.concatenate([extra_t[keep], new_t + extra_v.shape[0]]))
    if not live.any() and not extra_t.shape[0]:
        raise ValueError("the edit leaves no triangle: a mesh needs at least one")
    return PatchedMesh(base, live, extra_v, extra_t)


def _halves(mesh):
    if isinstance(mesh, PatchedMesh):
        return mesh.base, mesh.live, mesh.extra_vertices, mesh.extra_triangles
    if not isinstance(mesh, TriangleMesh):
        raise ValueError(f"mesh must be a TriangleMesh or PatchedMesh, got {type(mesh).__name__}")
    return mesh, np.ones(mesh.n_triangles, bool), np.empty((0, 3)), np.empty((0, 3), np.int64)


def _added(vertices, triangles):
    t = np.asarray(triangles)
    if t.size == 0:
        return np.empty((0, 3)), np.empty((0, 3), np.int64)
    v = as_vertices(vertices)
    return v, as_triangles(t, v.shape[0])


def _compact(vertices, triangles):
    """Only the vertices ``triangles`` use, in their order, and the triangles re-indexed."""
    if not triangles.shape[0]:
        return np.empty((0, 3)), np.empty((0, 3), np.int64)
    used, inverse = np.unique(triangles, return_inverse=True)
    return vertices[used], inverse.reshape(-1, 3).astype(np.int64)


def base_index(live, k) -> np.ndarray:
    """Base triangle indices of the live triangles of rank ``k`` (sorted (R,) int64)."""
    dead = np.flatnonzero(~live)
    shifted = dead - np.arange(dead.size)  # live triangles before each dead one
    return k + np.searchsorted(shifted, k, side="right")


def live_runs(live) -> list[tuple[int, int]]:
    """(start, stop) of each run of True in ``live`` (n,) bool, in order."""
    edges = np.flatnonzero(np.diff(np.concatenate(([False], live, [False])).view(np.int8)))
    return list(zip(edges[0::2].tolist(), edges[1::2].tolist()))


class PatchedMesh:
    """A ``TriangleMesh`` with triangles removed and added without a rebuild (module doc).

    base : TriangleMesh, the last full build; live : (Mb,) bool, its triangles still in;
    extra_vertices (E, 3) float64, extra_triangles (K, 3) int64: the added triangles.
    Build it with ``replace_triangles``. Queries: those of ``TriangleMesh`` (same arguments,
    same validation, the same answers as a fresh build of ``vertices``, ``triangles``).
    """

    def __init__(self, base: TriangleMesh, live, extra_vertices, extra_triangles):
        self.base = base
        self.live = np.asarray(live, dtype=bool)
        self.live.flags.writeable = False
        self.extra_vertices = extra_vertices
        self.extra_triangles = extra_triangles
        self.n_live = int(self.live.sum())
        self.dead = np.flatnonzero(~self.live)
        self.view = base.masked(self.live) if self.n_live else None
        self.extra = TriangleMesh(extra_vertices, extra_triangles) if len(extra_triangles) else None
        self._whole: dict = {}

    # ------------------------------------------------------------------ bookkeeping
    @property
    def n_triangles(self) -> int:
        return self.n_live + self.extra_triangles.shape[0]

    @property
    def n_added(self) -> int:
        """Triangles held by the small mesh (what a ``compacted()`` rebuild would fold in)."""
        return self.extra_triangles.shape[0]

    def compacted(self) -> TriangleMesh:
        """A fresh ``TriangleMesh`` of the same vertices and triangles (the full rebuild)."""
        return TriangleMesh(self.vertices, self.triangles)

    def __repr__(self) -> str:
        return (f"PatchedMesh({self.n_triangles} triangles: {self.n_live} of "
                f"{self.base.n_triangles} built, {self.n_added} added)")

    def from_base(self, idx) -> np.ndarray:
        """Indices of this mesh for live base triangle indices ``idx`` (int64)."""
        return idx - np.searchsorted(self.dead, idx)

    def from_extra(self, idx) -> np.ndarray:
        return idx + self.n_live

    # ------------------------------------------------------------------ whole-mesh arrays
    def _assembled(self, name, build):
        if name not in self._whole:
            arr = build()
            arr.flags.writeable = False
            self._whole[name] = arr
        return self._whole[name]

    def _per_triangle(self, base_rows, extra_rows):
        """Rows of the live base triangles (copied run by run: the removed triangles are a
        few runs, parts of the level) then ``extra_rows``."""
        parts = [base_rows[s:e] for s, e in live_runs(self.live)]
        if self.extra is not None:
            parts.append(extra_rows)
        return np.concatenate(parts)

    @property
    def vertices(self) -> np.ndarray:
        """(V, 3) float64, read-only: the base's vertices, then the added ones."""
        return self._assembled("vertices", lambda: np.concatenate(
            [self.base.vertices, self.extra_vertices]))

    @property
    def triangles(self) -> np.ndarray:
        """(M, 3) int64, read-only, in this mesh's order."""
        nv = self.base.vertices.shape[0]
        return self._assembled("triangles", lambda: self._per_triangle(
            self.base.triangles, self.extra_triangles + nv))

    @property
    def normals(self) -> np.ndarray:
        return self._assembled("normals", lambda: self._per_triangle(
            self.base.normals, getattr(self.extra, "normals", None)))

    @property
    def areas(self) -> np.ndarray:
        return self._assembled("areas", lambda: self._per_triangle(
            self.base.areas, getattr(self.extra, "areas", None)))

    @property
    def aabb(self) -> tuple[np.ndarray, np.ndarray]:
        """(lo (3,), hi (3,)) bounds of all triangles, metres."""
        corners = self._assembled("corner_bounds", lambda: self._corner_bounds())
        return corners[0].copy(), corners[1].copy()

    def _corner_bounds(self) -> np.ndarray:
        corners = self.vertices[self.triangles.ravel()]
        return np.stack([corners.min(axis=0), corners.max(axis=0)])

    # ------------------------------------------------------------------ single queries
    def triangles_in_aabb(self, lo, hi) -> np.ndarray:
        """Sorted int64 indices of triangles whose AABB overlaps the closed box [lo, hi]."""
        out = [np.empty(0, np.int64)]
        if self.view is not None:
            out.append(self.from_base(self.view.triangles_in_aabb(lo, hi)))
        if self.extra is not None:
            out.append(self.from_extra(self.extra.triangles_in_aabb(lo, hi)))
        return np.concatenate(out)

    def capsule_contacts(self, capsule: Capsule) -> list[Contact]:
        """One Contact per penetrated triangle, deepest first (ties: lower triangle first)."""
        found = []
        if self.view is not None:
            for c in self.view.capsule_contacts(capsule):
                found.append(Contact(c.depth, c.normal, c.point,
                                     int(self.from_base(np.int64(c.triangle)))))
        if self.extra is not None:
            for c in self.extra.capsule_contacts(capsule):
                found.append(Contact(c.depth, c.normal, c.point, c.triangle + self.n_live))
        found.sort(key=lambda c: (-c.depth, c.triangle))
        return found

    def penetrating_triangles(self, capsule: Capsule) -> np.ndarray:
        """Sorted int64 indices of the triangles the capsule penetrates (distance < radius)."""
        out = [np.empty(0, np.int64)]
        if self.view is not None:
            out.append(self.from_base(self.view.penetrating_triangles(capsule)))
        if self.extra is not None:
            out.append(self.from_extra(self.extra.penetrating_triangles(capsule)))
        return np.concatenate(out)

    def sweep_capsule(self, capsule: Capsule, displacement) -> Hit | None:
        """First contact of ``capsule`` moved by ``displacement`` (3,) metres, or None."""
        return self._first_hit(lambda m: m.sweep_capsule(capsule, displacement))

    def raycast(self, origin, direction, max_distance=np.inf) -> Hit | None:
        """First triangle hit by the ray (see ``TriangleMesh.raycast``), or None."""
        return self._first_hit(lambda m: m.raycast(origin, direction, max_distance))

    def _first_hit(self, query) -> Hit | None:
        hit = query(self.view) if self.view is not None else None
        if hit is not None:
            hit = Hit(hit.time, hit.normal, hit.point,
                      int(self.from_base(np.int64(hit.triangle))))
        if self.extra is not None:
            other = query(self.extra)
            if other is not None and (hit is None or other.time < hit.time):
                hit = Hit(other.time, other.normal, other.point, other.triangle + self.n_live)
        return hit  # equal times: the base's triangle, the lower index

    # ------------------------------------------------------------------ batched queries
    def capsule_contacts_many(self, a, b, radius) -> ContactBatch:
        """Contacts of Q capsules at once (see ``TriangleMesh.capsule_contacts_many``)."""
        parts = []
        if self.view is not None:
            c = self.view.capsule_contacts_many(a, b, radius)
            parts.append(ContactBatch(c.query, self.from_base(c.triangle), c.depth, c.normal,
                                      c.point))
        if self.extra is not None:
            c = self.extra.capsule_contacts_many(a, b, radius)
            parts.append(ContactBatch(c.query, self.from_extra(c.triangle), c.depth, c.normal,
                                      c.point))
        if len(parts) == 1:
            return parts[0]
        q, t, d, n, p = (np.concatenate(x) for x in zip(*parts))
        order = contact_order(q, t, d, as_points(a, "a").shape[0], self.n_triangles)
        return ContactBatch(q[order], t[order], d[order], n[order], p[order])

    def sweep_capsule_many(self, a, b, radius, displacement) -> SweepBatch:
        """First hits of Q swept capsules (see ``TriangleMesh.sweep_capsule_many``)."""
        return self._first_hits(lambda m: m.sweep_capsule_many(a, b, radius, displacement))

    def raycast_many(self, origins, directions, max_distance=np.inf) -> SweepBatch:
        """First hits of Q rays (see ``TriangleMesh.raycast_many``)."""
        return self._first_hits(lambda m: m.raycast_many(origins, directions, max_distance))

    def sweep_batch(self, a, b, r, v, hood=None, owner=None, want=None) -> SweepBatch:
        """The controller's unvalidated batched sweep (``TriangleMesh.sweep_batch``); no
        ``hood`` (this mesh offers no candidate cache, ``hood_triangles``)."""
        return self._first_hits(lambda m: m.sweep_batch(a, b, r, v, want=want))

    def _first_hits(self, query) -> SweepBatch:
        out = None
        if self.view is not None:
            s = query(self.view)
            tri = np.where(s.triangle >= 0, self.from_base(np.maximum(s.triangle, 0)), -1)
            out = SweepBatch(s.time, s.normal, s.point, tri)
        if self.extra is not None:
            e = query(self.extra)
            tri = np.where(e.triangle >= 0, self.from_extra(e.triangle), -1)
            e = SweepBatch(e.time, e.normal, e.point, tri)
            if out is None:
                return e
            take = e.time < out.time  # equal times: the base's triangle, the lower index
            out = SweepBatch(np.where(take, e.time, out.time),
                             np.where(take[:, None], e.normal, out.normal),
                             np.where(take[:, None], e.point, out.point),
                             np.where(take, e.triangle, out.triangle))
        return out
