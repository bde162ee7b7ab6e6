"""Triangle meshes at level scale: validated arrays, a BVH, exact capsule/sweep/ray queries.

Every query equals a brute-force evaluation of the exact per-triangle kernels
(``contact.capsule_triangle_many``, ``sweep.sweep_capsule_triangle_many``) over all triangles:
the hierarchy and the culls only *drop* pairs that provably cannot touch (with a pad of
``MESH_CULL_REL``), and the kernels decide every surviving pair.

Frame and units: world space, metres, Z up.

Where things live: ``TriangleMesh`` (this module) validates, builds and answers; the stored
per-triangle rows and their build in core/mesh/rows.py; the BVH in core/mesh/bvh.py; the culls in
core/mesh/culls.py; capsule contacts in core/mesh/contacts.py; sweeps in core/mesh/sweeps.py;
rays in core/mesh/rays.py; the first-hit-per-query reduction in core/mesh/sweeps.py; the result
types (``ContactBatch``, ``SweepBatch``, ``Hood``) in core/geometry/shapes.py, importable from here.
"""

from __future__ import annotations

import copy
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from ..constants import MESH_CULL_REL, THREADED_BUILD_TRIANGLES
from ..geometry.shapes import Capsule, Contact, Hit
from ..geometry.validate import as_point, as_points, as_radii
from . import contacts as mesh_contacts
from . import rays
from . import sweeps as mesh_sweeps
from .bvh import BVH, MaskedBVH, as_query8, boxes_overlap, round_up32
from .contacts import ContactBatch
from .hoods import Hood
from .rows import (
    as_triangles,
    as_vertices,
    build_cull_rows,
    build_kernel_records,
    gather_rows,
    small_pages,
)
from .sweeps import SweepBatch

__all__ = ["TriangleMesh", "ContactBatch", "SweepBatch", "Hood"]


class TriangleMesh:
    """An indexed triangle mesh with a BVH, answering exact capsule, sweep and ray queries.

    vertices : (V, 3) float64, world space, metres (any array-like of finite numbers)
    triangles : (M, 3) int vertex indices (any integer dtype, or whole floats), M >= 1

    Raises ValueError for a wrong shape or dtype, NaN/inf, negative or out-of-range indices,
    or an empty mesh. Zero-area triangles are kept and behave as the segment or point they
    collapse to (their ``normals`` row is zero).

    Internal interface for the query modules and the controller (no validation):
    ``cull_rows``, ``kernel_records``, ``cull_pad``, ``triangle_rows``, ``candidate_pairs``,
    ``hood_triangles``, ``sweep_batch``, ``masked``.
    """

    def __init__(self, vertices, triangles):
        with small_pages():
            self._build(vertices, triangles)

    def _build(self, vertices, triangles):
        V = as_vertices(vertices)
        T = as_triangles(triangles, V.shape[0])
        V.flags.writeable = False
        T.flags.writeable = False
        self._vertices = V
        self._triangles = T
        corners = V[T]  # (m, 3, 3) temporary
        A, B, C = corners[:, 0], corners[:, 1], corners[:, 2]
        lo = np.minimum(np.minimum(A, B), C)
        hi = np.maximum(np.maximum(A, B), C)
        # The three parts are independent and numpy releases the GIL in their array work:
        # the BVH and the kernel records build in threads while this one builds the cull
        # rows (1.9 -> 1.35 s for 1M triangles on 2 cores; the same arrays, bit for bit).
        # Peak memory 0.52 -> 0.67 GB for 1M triangles. Small meshes build in this thread.
        if T.shape[0] >= THREADED_BUILD_TRIANGLES:
            with ThreadPoolExecutor(max_workers=2, thread_name_prefix="cc-build") as pool:
                bvh = pool.submit(BVH, lo, hi)
                records = pool.submit(build_kernel_records, A, B, C)
                cull, normals, area2 = build_cull_rows(A, B, C, float(np.abs(V).max()))
                krec = records.result()
                self._bvh = bvh.result()
        else:
            cull, normals, area2 = build_cull_rows(A, B, C, float(np.abs(V).max()))
            krec = build_kernel_records(A, B, C)
            self._bvh = BVH(lo, hi)
        del corners, A, B, C
        normals.flags.writeable = False
        self._normals = normals
        cull.flags.writeable = False
        self._cull = cull
        krec.flags.writeable = False
        self._krec = krec
        area2 *= 0.5
        area2.flags.writeable = False
        self._areas = area2
        self._lo = lo.min(axis=0)
        self._hi = hi.max(axis=0)
        self._scale = float(np.abs(np.concatenate([self._lo, self._hi])).max())

    # ------------------------------------------------------------------ properties
    @property
    def vertices(self) -> np.ndarray:
        """(V, 3) float64, read-only."""
        return self._vertices

    @property
    def triangles(self) -> np.ndarray:
        """(M, 3) int64, read-only."""
        return self._triangles

    @property
    def n_triangles(self) -> int:
        return self._triangles.shape[0]

    @property
    def normals(self) -> np.ndarray:
        """(M, 3) unit face normals by winding (a, b, c counter-clockwise); zeros if zero-area."""
        return self._normals

    @property
    def areas(self) -> np.ndarray:
        """(M,) triangle areas, square metres (0 for zero-area triangles)."""
        return self._areas

    @property
    def aabb(self) -> tuple[np.ndarray, np.ndarray]:
        """(lo (3,), hi (3,)) bounds of all triangles, metres."""
        return self._lo.copy(), self._hi.copy()

    @property
    def bvh(self) -> BVH:
        return self._bvh

    def __repr__(self) -> str:
        return f"TriangleMesh({self._vertices.shape[0]} vertices, {self.n_triangles} triangles)"

    # ------------------------------------------------------------------ internal interface
    @property
    def cull_rows(self) -> np.ndarray:
        """(M, CULL_FIELDS) float64 read-only: unit normal, plane offset, bounding-sphere
        centroid and radius (core/mesh/rows.py); a sliver off its plane has a zero plane."""
        return self._cull

    @property
    def kernel_records(self) -> np.ndarray:
        """(M, REC_FIELDS) float64 read-only: the exact kernels' triangle records."""
        return self._krec

    def cull_pad(self, extra):
        """Rounding margin of the culls, metres: MESH_CULL_REL x (1 + the mesh's coordinate
        scale + ``extra``, the query's radius and coordinate size; float or (Q,)). Dot
        products of unit normals with points err by ~1e-16 x those magnitudes, so their sum
        (not product) bounds it; a product would make the pad ~0.1 m at 10 km."""
        return MESH_CULL_REL * (1.0 + self._scale + extra)

    def triangle_rows(self, idx) -> np.ndarray:
        """(k, ROW_FIELDS) float64 rows of triangles ``idx`` (k,): corners, then cull row."""
        return gather_rows(self._vertices, self._triangles, self._cull, idx)

    def hood_triangles(self, lo, hi):
        """Candidates of H region boxes lo, hi (H, 3): (cnt (H,), tri (n,), box (n, 8)).

        ``tri`` holds, region after region (``cnt[h]`` each), every triangle whose float32
        outward box overlaps the region, ``box`` those boxes (see ``Hood``). No validation:
        lo <= hi finite (for the controller's hood cache)."""
        nh = lo.shape[0]
        qi, tri, box = self._bvh.region_candidates(np.concatenate([hi, -lo], axis=1))
        cnt = np.bincount(qi, minlength=nh).astype(np.int64)
        return cnt, tri, box

    def candidate_pairs(self, q6, hood=None, owner=None):
        """Candidate pairs (query, triangle) (K,) int64 of query boxes q6 (Q, 6) = [hi, -lo]:
        a superset of the triangles whose box overlaps (float32 outward tests).

        With a ``Hood`` and ``owner`` (Q,) int64 rows of it, a query whose box lies inside its
        owner's region tests only that region's cached triangles (the same float32 test on
        the same boxes); the others, and every query without a hood, traverse the hierarchy.
        Pairs are not ordered by query."""
        if hood is None:
            return self._bvh.query_many_box6(q6, exact=False)
        inside = (q6[:, 0:3] <= hood.hi[owner]).all(1) & (q6[:, 3:6] <= -hood.lo[owner]).all(1)
        qin = np.flatnonzero(inside)
        o = owner[qin]
        c = hood.cnt[o]
        ends = np.cumsum(c)
        tot = int(ends[-1]) if ends.size else 0
        qi = np.repeat(qin, c)
        pos = np.repeat(hood.off[o] - ends + c, c)
        pos += np.arange(tot)
        q32 = round_up32(as_query8(q6))
        ok = boxes_overlap(np.take(hood.box, pos, axis=0), np.take(q32, qi, axis=0))
        qi = qi[ok]
        ti = np.take(hood.tri, pos[ok])
        if qin.size == q6.shape[0]:
            return qi, ti
        out = np.flatnonzero(~inside)
        qo, to = self._bvh.query_many_box6(q6[out], exact=False)
        return np.concatenate((qi, out[qo])), np.concatenate((ti, to))

    def sweep_batch(self, a, b, r, v, hood=None, owner=None, want=None) -> SweepBatch:
        """First hits of Q sweeps, no validation: a, b, v (Q, 3) float64, r (Q,) float64.

        ``hood``, ``owner``: cached candidates (see ``candidate_pairs``; answers do not depend
        on them); ``want`` (Q,) bool or None: see ``mesh_sweeps.sweep_batch``."""
        return mesh_sweeps.sweep_batch(self, a, b, r, v, hood, owner, want)

    def masked(self, live) -> TriangleMesh:
        """A view of this mesh whose queries see only the triangles where ``live`` (M,) bool
        is True, with their indices unchanged (``core.mesh.patched``). It shares every array
        (no copy, no rebuild); its arrays and properties still hold every triangle."""
        live = np.asarray(live, dtype=bool)
        if live.shape != (self.n_triangles,):
            raise ValueError(f"live must have shape ({self.n_triangles},), got {live.shape}")
        view = copy.copy(self)
        object.__setattr__(view, "_bvh", MaskedBVH(self._bvh, live))
        return view

    # ------------------------------------------------------------------ single queries
    def triangles_in_aabb(self, lo, hi) -> np.ndarray:
        """Sorted int64 indices of triangles whose AABB overlaps the closed box [lo, hi]."""
        lo = as_point(lo, "lo")
        hi = as_point(hi, "hi")
        if (lo > hi).any():
            raise ValueError(f"lo must be <= hi componentwise, got lo={lo}, hi={hi}")
        idx = self._bvh.query_box6(np.concatenate([hi, -lo]))
        idx.sort()
        return idx

    def capsule_contacts(self, capsule: Capsule) -> list[Contact]:
        """One Contact per penetrated triangle, deepest first (ties: lower triangle first).

        ``Contact.triangle`` is the triangle index; depth/normal/point as ``capsule_triangle``.
        """
        return mesh_contacts.capsule_contacts_one(self, capsule.a, capsule.b, capsule.radius)

    def penetrating_triangles(self, capsule: Capsule) -> np.ndarray:
        """Sorted int64 indices of the triangles the capsule penetrates (distance < radius)."""
        return mesh_contacts.penetrating_one(self, capsule.a, capsule.b, capsule.radius)

    def sweep_capsule(self, capsule: Capsule, displacement) -> Hit | None:
        """First contact of ``capsule`` moved by ``displacement`` (3,) metres, or None.

        Hit.time in [0, 1]; 0 when the capsule starts penetrating (as ``sweep_capsule_triangle``).
        """
        v = as_point(displacement, "displacement")
        first = mesh_sweeps.sweep_one(self, capsule.a, capsule.b, capsule.radius, v)
        if first is None:
            return None
        t, n, pt, tri = first
        return Hit(float(t), n.copy(), pt.copy(), int(tri))

    def raycast(self, origin, direction, max_distance=np.inf) -> Hit | None:
        """First triangle hit by the ray ``origin + t * unit(direction)``, 0 <= t <= max_distance.

        Hit.time is metres along the ray; normal is the face normal turned towards the ray
        origin; point is on the triangle. A zero-area triangle has no interior a ray can hit
        (it is crossed only on a set of measure zero) and is not reported.
        """
        o = as_point(origin, "origin")
        d = as_point(direction, "direction")
        if not (d != 0.0).any():
            raise ValueError("direction must be a non-zero vector")
        md = float(max_distance)
        if np.isnan(md) or md < 0.0:
            raise ValueError(f"max_distance must be >= 0, got {max_distance!r}")
        res = rays.raycast_batch(self, o[None], d[None], np.array([md]))
        if res.triangle[0] < 0:
            return None
        return Hit(float(res.time[0]), res.normal[0], res.point[0], int(res.triangle[0]))

    # ------------------------------------------------------------------ batched queries
    def capsule_contacts_many(self, a, b, radius) -> ContactBatch:
        """Contacts of Q capsules at once: a, b (Q, 3) segment ends; radius scalar or (Q,).

        Returns a ContactBatch over every penetrating (capsule, triangle) pair, exactly the
        pairs and values ``capsule_contacts`` gives per capsule.
        """
        a = as_points(a, "a")
        b = as_points(b, "b")
        if a.shape != b.shape:
            raise ValueError(f"a and b must have the same shape, got {a.shape} and {b.shape}")
        r = as_radii(radius, "radius", a.shape[0])
        return mesh_contacts.contacts_batch(self, a, b, r)

    def sweep_capsule_many(self, a, b, radius, displacement) -> SweepBatch:
        """First hits of Q capsules (a, b (Q,3), radius scalar|(Q,)) moved by displacement (Q,3)."""
        a = as_points(a, "a")
        b = as_points(b, "b")
        v = as_points(displacement, "displacement")
        if a.shape != b.shape or a.shape != v.shape:
            raise ValueError("a, b and displacement must have the same (Q, 3) shape")
        r = as_radii(radius, "radius", a.shape[0])
        return self.sweep_batch(a, b, r, v)

    def raycast_many(self, origins, directions, max_distance=np.inf) -> SweepBatch:
        """First hits of Q rays; origins, directions (Q, 3); max_distance scalar or (Q,) metres.

        SweepBatch.time is metres along each normalised direction, ``inf`` for a miss.
        """
        o = as_points(origins, "origins")
        d = as_points(directions, "directions")
        if o.shape != d.shape:
            raise ValueError("origins and directions must have the same (Q, 3) shape")
        if (~(d != 0.0).any(1)).any():
            raise ValueError("directions must be non-zero vectors")
        md = np.asarray(max_distance, dtype=np.float64)
        if md.ndim == 0:
            md = np.full(o.shape[0], float(md))
        if md.shape != (o.shape[0],) or np.isnan(md).any() or (md < 0).any():
            raise ValueError("max_distance must be a scalar or (Q,) array of values >= 0")
        return rays.raycast_batch(self, o, d, md)
