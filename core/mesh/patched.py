"""A triangle mesh edited in place of a rebuild: ``replace_triangles`` and ``PatchedMesh``.

Building a ``TriangleMesh`` of a million triangles takes seconds (records, cull rows, the
BVH); editing one object of a level changes a few hundred. ``replace_triangles(mesh, start,
stop, vertices, triangles)`` replaces the run of triangles ``[start, stop)`` (one object of a
level) by new ones, of any count, and returns a ``PatchedMesh`` in time proportional to the
edit plus a few passes over an (M,) bool mask: the built mesh (``base``) is kept whole and its
removed triangles are hidden from its queries (``TriangleMesh.masked``: the hierarchy skips
them), and a small second ``TriangleMesh`` (``extra``) holds every added triangle. Patching a
patched mesh hides more base triangles and rebuilds the small one; ``compacted()`` is the
full rebuild, for when the editing is over.

Index order, the contract: the new triangles take the place of the replaced ones, so the
patched mesh's triangles are in the order a fresh build of the edited level would have
(``start`` = ``stop`` = ``n_triangles`` appends). ``vertices`` are the base's, then the
added ones. Every query answers exactly as ``TriangleMesh(patched.vertices,
patched.triangles)`` would, bit for bit: both halves are exact meshes over the same corners
(records depend on a triangle's corners only; culls only drop pairs that cannot touch), and
their answers are merged in that index order (contacts by depth then index, first hits by
time then index). tests/core/test_patched_mesh.py checks it query for query against a fresh
build.

Bookkeeping: each added triangle has an *anchor*, the base triangle it sits just before
(``base.n_triangles``: at the end); added triangles are kept in mesh order, so their anchors
never decrease. The index of live base triangle ``i`` is (live base triangles before ``i``)
+ (added triangles anchored at or before ``i``); that of added triangle ``j`` is (live base
triangles before its anchor) + ``j``.

The whole-mesh arrays (``vertices``, ``triangles``, ``normals``, ``areas``, ``aabb``) are
assembled on first use (a copy, run by run: ~0.1 s at 1M triangles). The internal
per-triangle rows of ``TriangleMesh`` are not offered: the controller and the walks run on a
patched mesh through its batched sweep (``sweep_batch``, no candidate cache). World space,
metres.
"""

from __future__ import annotations

import weakref

import numpy as np

from ..geometry.shapes import Capsule, Contact, Hit
from ..geometry.validate import as_points
from .contacts import ContactBatch, contact_order
from .rows import as_triangles, as_vertices
from .sweeps import SweepBatch
from .triangle_mesh import TriangleMesh

__all__ = ["PatchedMesh", "replace_triangles"]


def replace_triangles(mesh, start: int, stop: int, vertices, triangles) -> PatchedMesh:
    """``mesh`` (TriangleMesh or PatchedMesh) with its triangles ``[start, stop)`` replaced
    by ``triangles`` over the new ``vertices``, in their place (see the module docstring).

    start, stop : 0 <= start <= stop <= mesh.n_triangles
    vertices : (E, 3) float64 metres, the new triangles' corners (may be empty with no new
        triangles); triangles : (K, 3) int indices into ``vertices`` (K may be 0: removal)

    ValueError for a bad range, bad arrays, or a result with no triangle.
    """
    base, live, extra_v, extra_t, anchor = _halves(mesh)
    n = int(live.sum()) + extra_t.shape[0]
    start, stop = int(start), int(stop)
    if not 0 <= start <= stop <= n:
        raise ValueError(f"the range [{start}, {stop}) must lie within [0, {n}]")
    new_v, new_t = _added(vertices, triangles)
    at = extra_positions(live, anchor)
    before, after = at < start, at >= stop
    # live base triangles of ranks [r0, r1) sit in the range; rank r1 is the first after it
    r0, r1 = start - int(before.sum()), stop - int((~after).sum())
    n_live = int(live.sum())
    new_anchor = int(base_index(live, np.array([r1]))[0]) if r1 < n_live else base.n_triangles
    if r1 > r0:
        live = live.copy()
        live[base_index(live, np.arange(r0, r1))] = False
    k = new_t.shape[0]
    extra_v, extra_t = _compact(
        np.concatenate([extra_v, new_v]),
        np.concatenate([extra_t[before], new_t + extra_v.shape[0], extra_t[after]]))
    anchor = np.concatenate([anchor[before], np.full(k, new_anchor, np.int64), anchor[after]])
    if not live.any() and not extra_t.shape[0]:
        raise ValueError("the edit leaves no triangle: a mesh needs at least one")
    return PatchedMesh(base, live, extra_v, extra_t, anchor)


def _halves(mesh):
    if isinstance(mesh, PatchedMesh):
        return (mesh.base, mesh.live, mesh.extra_vertices, mesh.extra_triangles,
                mesh.extra_anchor)
    if not isinstance(mesh, TriangleMesh):
        raise ValueError(f"mesh must be a TriangleMesh or PatchedMesh, got {type(mesh).__name__}")
    return (mesh, np.ones(mesh.n_triangles, bool), np.empty((0, 3)),
            np.empty((0, 3), np.int64), np.empty(0, np.int64))


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


def live_before(live_dead, x) -> np.ndarray:
    """Live base triangles before base positions ``x`` (int64), given the sorted dead ones."""
    return x - np.searchsorted(live_dead, x)


def extra_positions(live, anchor) -> np.ndarray:
    """(K,) int64 mesh indices of the added triangles with ``anchor`` (see module doc)."""
    return live_before(np.flatnonzero(~live), anchor) + np.arange(anchor.size)


def base_index(live, k) -> np.ndarray:
    """Base triangle indices of the live triangles of rank ``k`` (sorted (R,) int64)."""
    dead = np.flatnonzero(~live)
    shifted = dead - np.arange(dead.size)  # live triangles before each dead one
    return k + np.searchsorted(shifted, k, side="right")


EXTREME_COUNT = 64  # triangles kept per bound of a built mesh (a patch rarely removes more)
_extremes: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def base_extremes(mesh: TriangleMesh):
    """(triangles (6, K) int64, values (6, K) float64): per bound (lo x, y, z, hi x, y, z)
    the K triangles of ``mesh`` reaching farthest, most extreme first, and their bound
    values (exact: the hierarchy's float64 slot boxes). Computed once per built mesh."""
    found = _extremes.get(mesh)
    if found is None:
        bvh = mesh.bvh
        slots = np.flatnonzero(bvh.order >= 0)
        rows = bvh.slot_box[slots, :6]  # [lo, -hi]: smaller is more extreme on every column
        k = min(EXTREME_COUNT, slots.size)
        tri, value = np.empty((6, k), np.int64), np.empty((6, k))
        for c in range(6):
            part = np.argpartition(rows[:, c], k - 1)[:k] if k < slots.size else np.arange(k)
            part = part[np.argsort(rows[part, c], kind="stable")]
            tri[c] = bvh.order[slots[part]]
            value[c] = rows[part, c] if c < 3 else -rows[part, c]
        found = _extremes[mesh] = (tri, value)
    return found


def live_runs(live) -> list[tuple[int, int]]:
    """(start, stop) of each run of True in ``live`` (n,) bool, in order."""
    edges = np.flatnonzero(np.diff(np.concatenate(([False], live, [False])).view(np.int8)))
    return list(zip(edges[0::2].tolist(), edges[1::2].tolist()))


class PatchedMesh:
    """A ``TriangleMesh`` with triangles replaced without a rebuild (module doc).

    base : TriangleMesh, the last full build; live : (Mb,) bool, its triangles still in;
    extra_vertices (E, 3) float64, extra_triangles (K, 3) int64: the added triangles, in mesh
    order; extra_anchor (K,) int64 non-decreasing: the base triangle each sits before.
    Build it with ``replace_triangles``. Queries: those of ``TriangleMesh`` (same arguments,
    same validation, the same answers as a fresh build of ``vertices``, ``triangles``).
    """

    def __init__(self, base: TriangleMesh, live, extra_vertices, extra_triangles, extra_anchor):
        self.base = base
        self.live = np.asarray(live, dtype=bool)
        self.live.flags.writeable = False
        self.extra_vertices = extra_vertices
        self.extra_triangles = extra_triangles
        self.extra_anchor = np.asarray(extra_anchor, dtype=np.int64)
        self.n_live = int(self.live.sum())
        self.dead = np.flatnonzero(~self.live)
        self.extra_index = live_before(self.dead, self.extra_anchor) + np.arange(
            self.extra_anchor.size)
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
        """This mesh's indices of live base triangles ``idx`` (int64 array or scalar)."""
        return (live_before(self.dead, idx)
                + np.searchsorted(self.extra_anchor, idx, side="right"))

    def from_extra(self, idx) -> np.ndarray:
        """This mesh's indices of added triangles ``idx`` (int64 array or scalar)."""
        return self.extra_index[idx]

    # ------------------------------------------------------------------ whole-mesh arrays
    def _assembled(self, name, build):
        if name not in self._whole:
            arr = build()
            arr.flags.writeable = False
            self._whole[name] = arr
        return self._whole[name]

    def segments(self) -> list[tuple[bool, int, int]]:
        """This mesh's triangles as runs in order: (from_base, start, stop) of base rows or
        of added rows; a few runs per edited part."""
        runs = live_runs(self.live)
        out: list[tuple[bool, int, int]] = []
        prev = 0
        anchors, first = np.unique(self.extra_anchor, return_index=True)
        ends = np.append(first[1:], self.extra_anchor.size)
        for a, j0, j1 in zip((*anchors.tolist(), self.base.n_triangles),
                             (*first.tolist(), 0), (*ends.tolist(), 0)):
            out += [(True, max(s, prev), min(e, a)) for s, e in runs if s < a and e > prev]
            if j1 > j0:
                out.append((False, j0, j1))
            prev = a
        return out

    def _per_triangle(self, base_rows, extra_rows):
        """(M, ...) rows in this mesh's order, copied run by run (``segments``)."""
        return np.concatenate([base_rows[s:e] if from_base else extra_rows[s:e]
                               for from_base, s, e in self.segments()])

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
        """(M, 3) unit face normals (zeros if zero-area), read-only."""
        return self._assembled("normals", lambda: self._per_triangle(
            self.base.normals, getattr(self.extra, "normals", None)))

    @property
    def areas(self) -> np.ndarray:
        """(M,) triangle areas, square metres, read-only."""
        return self._assembled("areas", lambda: self._per_triangle(
            self.base.areas, getattr(self.extra, "areas", None)))

    @property
    def aabb(self) -> tuple[np.ndarray, np.ndarray]:
        """(lo (3,), hi (3,)) bounds of all triangles, metres."""
        corners = self._assembled("corner_bounds", lambda: self._corner_bounds())
        return corners[0].copy(), corners[1].copy()

    def _corner_bounds(self) -> np.ndarray:
        """[lo, hi] over the live base triangles and the added ones: per bound, the first
        live triangle among the base's ``EXTREME_COUNT`` most extreme (``base_extremes``),
        else (all of those removed) a pass over the live triangles."""
        bounds = np.stack(self.base.aabb)
        if self.dead.size:
            tri, value = base_extremes(self.base)
            for axis in range(6):  # lo x, y, z, then hi x, y, z
                alive = self.live[tri[axis]]
                if not alive.any():
                    return self._live_bounds()
                bounds.flat[axis] = value[axis][np.argmax(alive)]
        if self.extra is not None:
            elo, ehi = self.extra.aabb
            bounds = np.stack([np.minimum(bounds[0], elo), np.maximum(bounds[1], ehi)])
        return bounds

    def _live_bounds(self) -> np.ndarray:
        lo, hi = np.full(3, np.inf), np.full(3, -np.inf)
        if self.n_live:
            live = self.base.vertices[self.base.triangles[self.live].ravel()]
            lo, hi = live.min(axis=0), live.max(axis=0)
        if self.extra is not None:
            elo, ehi = self.extra.aabb
            lo, hi = np.minimum(lo, elo), np.maximum(hi, ehi)
        return np.stack([lo, hi])

    # ------------------------------------------------------------------ single queries
    def triangles_in_aabb(self, lo, hi) -> np.ndarray:
        """Sorted int64 indices of triangles whose AABB overlaps the closed box [lo, hi]."""
        out = [np.empty(0, np.int64)]
        if self.view is not None:
            out.append(self.from_base(self.view.triangles_in_aabb(lo, hi)))
        if self.extra is not None:
            out.append(self.from_extra(self.extra.triangles_in_aabb(lo, hi)))
        return np.sort(np.concatenate(out))

    def capsule_contacts(self, capsule: Capsule) -> list[Contact]:
        """One Contact per penetrated triangle, deepest first (ties: lower triangle first)."""
        found = []
        if self.view is not None:
            for c in self.view.capsule_contacts(capsule):
                found.append(Contact(c.depth, c.normal, c.point,
                                     int(self.from_base(np.int64(c.triangle)))))
        if self.extra is not None:
            for c in self.extra.capsule_contacts(capsule):
                found.append(Contact(c.depth, c.normal, c.point,
                                     int(self.from_extra(c.triangle))))
        found.sort(key=lambda c: (-c.depth, c.triangle))
        return found

    def penetrating_triangles(self, capsule: Capsule) -> np.ndarray:
        """Sorted int64 indices of the triangles the capsule penetrates (distance < radius)."""
        out = [np.empty(0, np.int64)]
        if self.view is not None:
            out.append(self.from_base(self.view.penetrating_triangles(capsule)))
        if self.extra is not None:
            out.append(self.from_extra(self.extra.penetrating_triangles(capsule)))
        return np.sort(np.concatenate(out))

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
            if other is not None:
                other = Hit(other.time, other.normal, other.point,
                            int(self.from_extra(other.triangle)))
                if hit is None or (other.time, other.triangle) < (hit.time, hit.triangle):
                    hit = other
        return hit  # equal times: the lower index

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
        out: SweepBatch | None = None
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
            take = (e.time < out.time) | ((e.time == out.time) & (e.triangle < out.triangle))
            out = SweepBatch(np.where(take, e.time, out.time),
                             np.where(take[:, None], e.normal, out.normal),
                             np.where(take[:, None], e.point, out.point),
                             np.where(take, e.triangle, out.triangle))
        assert out is not None  # a patched mesh has at least one half
        return out
