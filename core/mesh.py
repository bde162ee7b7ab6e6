"""Triangle meshes at level scale: validated arrays, a BVH, exact capsule/sweep/ray queries.

Every query equals a brute-force evaluation of the exact per-triangle kernels
(``contact.capsule_triangle_many``, ``sweep.sweep_capsule_triangle_many``) over all triangles:
the hierarchy and the plane-slab reject below only *cull* pairs that provably cannot touch
(with a pad of ``MESH_CULL_REL``), and the kernels decide every surviving pair.

Frame and units: world space, metres, Z up (``up`` is a parameter where it matters).

Single-query path (``capsule_contacts``, ``penetrating_triangles``): the capsule's box is
tested against every node of the BVH's entry level (the level with at most 256 nodes: 248 at
1M triangles), then descends the remaining levels to the leaves' triangle slots, gathers the
candidates' cull rows (unit normal, plane offset), rejects triangles whose plane does not come
within ``radius`` of the segment, and calls the exact kernel once on the survivors' stored
records (none when nothing survives). ``SINGLE_QUERY_NUMPY_CALLS`` documents the count.
"""

from __future__ import annotations

from contextlib import contextmanager

import numpy as np

from . import contact as _contact
from . import sweep as _sweep
from ._validate import as_point, as_points, as_radii
from .bvh import BVH, as_query8, boxes_overlap, round_up32
from .closest import _REC_A as _KREC_A
from .closest import REC_FIELDS, _rows, _segment_triangle, _triangle_record
from .constants import (
    CAPSULE_CULL_CHUNK,
    DEGENERATE_REL2,
    MESH_CULL_REL,
    PLANE_SLACK_REL,
    SWEEP_CULL_CHUNK,
    SWEEP_FEW_QUERIES,
    SWEEP_LOWER_PRUNE_MIN_PAIRS,
    SWEEP_PRUNE_FIRST,
    SWEEP_PRUNE_MIN_PAIRS,
    SWEEP_SHORT_REL,
)
from .shapes import Capsule, Contact, ContactBatch, Hit, Hood, SweepBatch

# the batch result types live in core/shapes.py; importable from here too
__all__ = ["TriangleMesh", "ContactBatch", "SweepBatch", "Hood"]

# numpy calls on the single-capsule path for a 1M-triangle mesh (a 248-node entry level and 3
# levels below it), counted by hand: query box ~5, BVH ~37 (4 rounding the box to float32, 4 at
# the entry level, ~7 per level, 8 for the leaf slots), cull-row gather and plane-slab reject
# ~8 = ~50; then one exact-kernel call when a triangle survives (~100 ufunc calls, ~75 us) and
# ~6 calls to order the contacts. Measured: ~130 us per query on terrain_1M, ~45 us when
# nothing survives the culls. Compiled peers (coal) answer in ~30 us: numpy's per-call cost
# (~1-2 us) times the calls above is the floor of this design.
SINGLE_QUERY_NUMPY_CALLS = 50

# Column layout of the per-triangle rows assembled by ``TriangleMesh._rec_rows`` (float64,
# (k, 17)): the corners, then the stored cull block ``_cull`` (M, 8): unit normal, plane
# offset, bounding-sphere centroid and radius. Corners are gathered from the vertices on
# demand rather than stored per triangle (72 bytes a triangle: the 0.6 GB budget at 1M).
_A, _B, _C, _N, _OFF = slice(0, 3), slice(3, 6), slice(6, 9), slice(9, 12), 12
_CEN, _RAD = slice(13, 16), 16  # bounding sphere: centroid and max vertex distance
_ZERO2 = np.zeros(2)
_TRUE1 = np.ones(1, dtype=bool)
_BUILD_CHUNK = 65536  # triangles per chunk when building the kernel records


def _as_vertices(vertices) -> np.ndarray:
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


def _as_triangles(triangles, n_vertices: int) -> np.ndarray:
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


@contextmanager
def _small_pages():
    """Build without numpy's transparent-huge-page advice, restoring it afterwards.

    numpy asks Linux for huge pages on large arrays; with THP in ``madvise`` mode the kernel
    then compacts memory synchronously on first touch, which made a 1M-triangle build take
    0.9-1.5 s instead of a steady 0.75 s (``tools/bench.py``, terrain_1M); queries on the
    built arrays run at the same speed either way. A no-op where numpy lacks the switch.
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


class TriangleMesh:
    """An indexed triangle mesh with a BVH, answering exact capsule, sweep and ray queries.

    vertices : (V, 3) float64, world space, metres (any array-like of finite numbers)
    triangles : (M, 3) int vertex indices (any integer dtype, or whole floats), M >= 1

    Raises ValueError for a wrong shape or dtype, NaN/inf, negative or out-of-range indices,
    or an empty mesh. Zero-area triangles are kept and behave as the segment or point they
    collapse to (their ``normals`` row is zero).
    """

    def __init__(self, vertices, triangles):
        with _small_pages():
            self._build(vertices, triangles)

    def _build(self, vertices, triangles):
        V = _as_vertices(vertices)
        T = _as_triangles(triangles, V.shape[0])
        V.flags.writeable = False
        T.flags.writeable = False
        self._vertices = V
        self._triangles = T
        m = T.shape[0]
        corners = V[T]  # (m, 3, 3) temporary
        A, B, C = corners[:, 0], corners[:, 1], corners[:, 2]
        cull = np.empty((m, 8))
        e1 = B - A
        e2 = C - A
        cr = np.cross(e1, e2)
        n2 = np.einsum("ij,ij->i", cr, cr)
        emax = np.einsum("ij,ij->i", e1, e1)
        np.maximum(emax, np.einsum("ij,ij->i", e2, e2), out=emax)
        e2 -= e1  # now C - B
        np.maximum(emax, np.einsum("ij,ij->i", e2, e2), out=emax)
        del e1, e2
        degenerate = n2 <= DEGENERATE_REL2 * emax * emax
        length = np.sqrt(n2, out=n2)
        length[degenerate] = 0.0
        inv = np.divide(1.0, length, out=np.zeros_like(length), where=~degenerate)
        np.multiply(cr, inv[:, None], out=cull[:, 0:3])
        del cr
        cull[:, 3] = np.einsum("ij,ij->i", cull[:, 0:3], A)
        cen = cull[:, 4:7]
        np.add(A, B, out=cen)
        cen += C
        cen *= 1.0 / 3.0
        rad2 = np.einsum("ij,ij->i", A - cen, A - cen)
        np.maximum(rad2, np.einsum("ij,ij->i", B - cen, B - cen), out=rad2)
        np.maximum(rad2, np.einsum("ij,ij->i", C - cen, C - cen), out=rad2)
        cull[:, 7] = np.sqrt(rad2)
        del rad2
        # The public normals, before the cull block may drop some (below).
        self._normals = cull[:, 0:3].copy()
        self._normals.flags.writeable = False
        # Plane-based culls (plane-slab rejects, the window cull's normal axis, the disc cull)
        # take a triangle to lie in its stored plane. A sliver's normal is only known to
        # ~1e-16 |e|^2 / |e1 x e2| rad, so a corner can sit farther off that plane than the
        # pads' rounding margin; such triangles get no plane in the cull block (zero normal
        # and offset: those culls keep them) and only their bounding sphere culls them
        # (tests/test_mesh.py::test_sliver_corner_off_its_plane_is_not_culled).
        nrm, off = cull[:, 0:3], cull[:, 3]
        off_plane = np.abs(np.einsum("ij,ij->i", nrm, B) - off)
        np.maximum(off_plane, np.abs(np.einsum("ij,ij->i", nrm, C) - off), out=off_plane)
        loose = off_plane > PLANE_SLACK_REL * MESH_CULL_REL * (1.0 + float(np.abs(V).max()))
        cull[loose, 0:4] = 0.0
        del off_plane
        self._cull = cull  # unit normal, offset, centroid, radius
        # Exact-kernel record per triangle (closest._triangle_record), row-major (M, F) so a
        # candidate's data is one contiguous row; built in chunks to bound the temporaries.
        krec = np.empty((m, REC_FIELDS))
        with np.errstate(divide="ignore", invalid="ignore"):
            for lo in range(0, m, _BUILD_CHUNK):
                s = slice(lo, lo + _BUILD_CHUNK)
                krec[s] = _triangle_record(_rows(A[s]), _rows(B[s]), _rows(C[s])).T
        self._krec = krec
        length *= 0.5
        self._areas = length
        self._areas.flags.writeable = False
        lo = np.minimum(np.minimum(A, B), C)
        hi = np.maximum(np.maximum(A, B), C)
        del corners, A, B, C  # before the BVH build: bounds the peak
        self._bvh = BVH(lo, hi)
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

    # ------------------------------------------------------------------ helpers
    def _pad(self, extra):
        """Rounding margin of the culls, metres: MESH_CULL_REL x (1 + the mesh's coordinate
        scale + ``extra``, the query's radius and coordinate size). Dot products of unit
        normals with points err by ~1e-16 x those magnitudes, so their sum (not product)
        bounds it; a product made the pad ~0.1 m at 10 km and the culls weak there."""
        return MESH_CULL_REL * (1.0 + self._scale + extra)

    def triangles_in_aabb(self, lo, hi) -> np.ndarray:
        """Sorted int64 indices of triangles whose AABB overlaps the closed box [lo, hi]."""
        lo = as_point(lo, "lo")
        hi = as_point(hi, "hi")
        if (lo > hi).any():
            raise ValueError(f"lo must be <= hi componentwise, got lo={lo}, hi={hi}")
        idx = self._bvh.query_box6(np.concatenate([hi, -lo]))
        idx.sort()
        return idx

    def hood_triangles(self, lo, hi):
        """Candidates of H region boxes lo, hi (H, 3): (cnt (H,), tri (n,), box (n, 8)).

        ``tri`` holds, region after region (``cnt[h]`` each), every triangle whose float32
        outward box overlaps the region, ``box`` those boxes (see ``Hood``). No validation:
        lo <= hi finite (internal, for the controller's hood cache)."""
        nh = lo.shape[0]
        qi, slot = self._bvh.query_many_slots(np.concatenate([hi, -lo], axis=1))
        cnt = np.bincount(qi, minlength=nh).astype(np.int64)
        return cnt, self._bvh.order.take(slot), np.take(self._bvh.slot32, slot, axis=0)

    def _pairs_box6(self, q6, hood=None, owner=None):
        """Candidate pairs (query, triangle) of query boxes q6 (Q, 6) = [hi, -lo]: a superset
        of the triangles whose box overlaps (float32 outward tests, ``exact=False``).

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

    def _rec_rows(self, idx) -> np.ndarray:
        """(k, 17) float64 rows for triangles ``idx``: corners a, b, c, then the cull block
        (layout ``_A``.. ``_RAD``); identical to storing them, without the memory."""
        idx = np.asarray(idx)
        out = np.empty((idx.size, 17))
        corners = np.take(self._triangles, idx, axis=0)
        out[:, 0:9] = np.take(self._vertices, corners.ravel(), axis=0).reshape(idx.size, 9)
        out[:, 9:17] = np.take(self._cull, idx, axis=0)
        return out

    def _swept_disc_may_touch(self, a, b, v, pad, qi, ti, sel):
        """Bool (K,): can sweep qi (a, b, v (Q, 3), pad (Q,)) touch triangle ti at all?

        Only pairs of the selected queries (``sel`` (Q,) bool) are tested, the others kept;
        None when no query is selected (every pair kept).

        Every point a + s (b - a) + t v (s, t in [0, 1]) lies within |v| / 2 of the segment
        S shifted by v / 2, so dist(S, triangle) >= pad + |v| / 2 proves a miss. The triangle
        lies in its bounding disc (its plane, unit normal n, around the centroid c, radius
        ``rad``: the bounding sphere's). For x on S and y in the disc, with w = x - c,
        |x - y|^2 = (w.n)^2 + |w_p - y_p|^2 >= (w.n)^2 + max(|w_p| - rad, 0)^2 (w_p: w
        projected on the plane); minimising both terms separately over S gives the lower
        bound hmin^2 + max(rho - rad, 0)^2, hmin the least |w.n| on S (0 if S crosses the
        plane), rho the distance from c to S projected on the plane (Ericson RTCD 5.1.2).
        Also a moving plane slab: the segment's plane offsets stay beyond the pad over the
        whole motion (they move by (t - 1/2) v.n from mid-motion), the bound for a character
        walking along the floor under it, where |v.n| << |v|. A zero normal (zero-area
        triangle) leaves the bounding-sphere bound. Like the plane-slab rejects
        (``_sweep_windows``' normal axis, ``_capsule_pairs``), it takes the triangle to lie in
        its stored plane: vertex offsets ~1e-16 |e| / sin(smallest angle),
        inside ``pad``'s margin except for slivers near DEGENERATE_REL2. Ground probes (short
        sweeps of an upright capsule standing on a floor): ~65 % of the bounding-sphere
        test's pairs on terrain_1M. A NaN keeps the pair.
        """
        if not sel.any():
            return None
        if not sel.all():
            idx = np.flatnonzero(sel[qi])
            keep = np.ones(qi.size, dtype=bool)
            keep[idx] = self._swept_disc_may_touch(a, b, v, pad, qi[idx], ti[idx],
                                                   np.ones_like(sel))
            return keep
        half = 0.5 * v
        reach = pad + np.sqrt(np.einsum("ij,ij->i", half, half))
        reach *= reach
        C = np.take(self._cull, ti, axis=0).T  # (8, K): normal, offset, centroid, radius
        n = C[0:3]
        cen = C[4:7]
        W0 = np.take((a + half).T, qi, axis=1)
        W0 -= cen
        W1 = np.take((b + half).T, qi, axis=1)
        W1 -= cen
        h0 = (W0 * n).sum(0)
        h1 = (W1 * n).sum(0)
        # moving plane slab: the ends' plane offsets change by (t - 1/2) v.n
        dv = np.take(v.T, qi, axis=1)
        dv *= n
        dv = np.abs(dv.sum(0))
        dv *= 0.5
        p = np.take(pad, qi)
        slab = (np.minimum(h0, h1) - dv >= p) | (np.maximum(h0, h1) + dv <= -p)
        hmin = np.minimum(np.abs(h0), np.abs(h1))
        hmin[h0 * h1 <= 0.0] = 0.0
        W0 -= h0 * n
        W1 -= h1 * n
        W1 -= W0  # projected segment direction D
        dd = (W1 * W1).sum(0)
        t = (W0 * W1).sum(0)
        t /= np.where(dd > 0.0, -dd, -1.0)
        np.clip(t, 0.0, 1.0, out=t)
        W1 *= t
        W0 += W1  # closest point of the projected segment to c, relative to c
        g = np.sqrt((W0 * W0).sum(0))
        g -= C[7]
        np.maximum(g, 0.0, out=g)
        g *= g
        hmin *= hmin
        g += hmin
        return ~((g >= np.take(reach, qi)) | slab)

    def _swept_capsule_may_touch(self, a, b, v, r, pad, qi, ti, short):
        """Bool (K,): can sweep qi (a, b, v (Q, 3), radius r (Q,), pad (Q,)) touch triangle
        ti? Exact distance with its slope.

        f(t) = dist(segment + t v, triangle) is convex in t (the distance from the point t v
        to the convex set triangle - segment), so f(t) >= f(1/2) + f'(1/2) (t - 1/2) and
        min f over [0, 1] >= f(1/2) - |f'(1/2)| / 2, where f'(1/2) = v . W / |W| (W: the
        closest segment point minus the closest triangle point at mid-motion, unique as a
        difference although the pair may not be). min f >= pad proves a miss. |f'| <= |v|,
        so this is never weaker than the bounding capsule of radius r + |v| / 2 around the
        mid-motion segment, and far stronger for motion along the triangle: a character
        walking parallel to the floor under it (f' ~ 0). The distance is the exact
        segment-triangle kernel's (``closest._segment_triangle``, as
        ``contact.capsule_triangle``'s); the slope gets a slack of |v| (1e-6 + (pad - r) /
        f(1/2)), far above the direction's rounding (W's absolute error is ~1e-16 of the
        coordinates, the pad's margin 1e-9 of them). Only short sweeps (|v| <=
        SWEEP_SHORT_REL * r, the controller's slides, probes and snaps; ``short`` (Q,) bool)
        are tested; None when there are none (every pair kept), longer ones keep every pair.
        A NaN keeps the pair. Chunks of ``SWEEP_CULL_CHUNK`` pairs, component-major.

        Returns (keep (K,), lower (K,)) or None: ``lower`` a lower bound of each kept pair's
        exact time from the same tangent (0 for pairs not tested). A pair approaching at
        mid-motion (f' + slack < 0) cannot come below pad before
        1/2 + (f(1/2) - pad) / |f' - slack| (when f(1/2) >= pad; the tangent falls no
        faster than that after 1/2 and is above pad before) or
        1/2 - (pad - f(1/2)) / |f' + slack| (when f(1/2) < pad: before 1/2 the tangent
        rises at least that fast going back in time); otherwise 0. The pad (> r) keeps a
        pair whose exact time ties another's within rounding below their computed times.
        """
        if not short.any():
            return None
        k = qi.size
        keep = np.ones(k, dtype=bool)
        lower = np.zeros(k)
        half = 0.5 * v
        speed = np.sqrt(np.einsum("ij,ij->i", v, v))
        margin = pad - r
        mT = np.concatenate(((a + half).T, (b + half).T))  # (6, Q)
        vT = v.T
        idx = None if short.all() else np.flatnonzero(short[qi])
        n_test = k if idx is None else idx.size
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            for lo in range(0, n_test, SWEEP_CULL_CHUNK):
                s = slice(lo, lo + SWEEP_CULL_CHUNK)
                sel = s if idx is None else idx[s]
                q = qi[sel]
                T = np.ascontiguousarray(np.take(self._krec, ti[sel], axis=0).T)
                M = np.take(mT, q, axis=1)
                M[0:3] -= T[_KREC_A]
                M[3:6] -= T[_KREC_A]
                W, d2 = _segment_triangle(M[0:3], M[3:6], T)[1:3]
                dist = np.sqrt(d2)
                W *= np.take(vT, q, axis=1)
                g = W.sum(0)
                g /= dist  # f'(1/2)
                sp = np.take(speed, q)
                slack = sp * (1e-6 + np.take(margin, q) / dist)
                slope = np.abs(g)
                slope += slack
                np.minimum(slope, sp, out=slope)  # nan (dist 0) stays nan: kept
                slope *= 0.5
                p = np.take(pad, q)
                keep[sel] = ~(dist - slope >= p)
                gap = dist - p
                lo = np.where(gap >= 0.0, gap / (slack - g), gap / -(g + slack))
                lo += 0.5
                np.maximum(lo, 0.0, out=lo)
                lower[sel] = np.where((g + slack < 0.0) & (lo <= 1.0), lo, 0.0)
        return keep, lower

    def _capsule_candidates(self, a: np.ndarray, b: np.ndarray, r: float):
        """Triangle indices of one capsule's candidates after box and plane-slab culling."""
        pad = r + self._pad(r + max(abs(a).max(), abs(b).max()))
        q8 = np.concatenate((np.maximum(a, b) + pad, pad - np.minimum(a, b), _ZERO2))
        cand = self._bvh.query_box8(q8)
        if not cand.size:
            return cand
        cull = np.take(self._cull, cand, axis=0)
        nrm = cull[:, 0:3]
        off = cull[:, 3]
        d0 = nrm @ a - off
        d1 = nrm @ b - off
        keep = (np.minimum(d0, d1) < pad) & (np.maximum(d0, d1) > -pad)
        return cand[keep]

    # ------------------------------------------------------------------ single queries
    def capsule_contacts(self, capsule: Capsule) -> list[Contact]:
        """One Contact per penetrated triangle, deepest first (ties: lower triangle first).

        ``Contact.triangle`` is the triangle index; depth/normal/point as ``capsule_triangle``.
        """
        a, b, r = capsule.a, capsule.b, capsule.radius
        cand = self._capsule_candidates(a, b, r)
        if not cand.size:
            return []
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            hit, depth, normal, point = _contact._capsule_triangle_rec(
                a.reshape(3, 1), b.reshape(3, 1), r, np.take(self._krec, cand, axis=0).T
            )
        idx = np.flatnonzero(hit)
        if not idx.size:
            return []
        if idx.size > 1:
            idx = idx[np.lexsort((cand[idx], -depth[idx]))]
        normal = normal.T
        point = point.T
        return [
            Contact(float(depth[i]), normal[i].copy(), point[i].copy(), int(cand[i]))
            for i in idx.tolist()
        ]

    def penetrating_triangles(self, capsule: Capsule) -> np.ndarray:
        """Sorted int64 indices of the triangles the capsule penetrates (distance < radius)."""
        a, b, r = capsule.a, capsule.b, capsule.radius
        cand = self._capsule_candidates(a, b, r)
        if not cand.size:
            return cand
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            hit = _contact._capsule_triangle_rec(
                a.reshape(3, 1), b.reshape(3, 1), r, np.take(self._krec, cand, axis=0).T
            )[0]
        out = cand[hit]
        out.sort()
        return out

    def sweep_capsule(self, capsule: Capsule, displacement) -> Hit | None:
        """First contact of ``capsule`` moved by ``displacement`` (3,) metres, or None.

        Hit.time in [0, 1]; 0 when the capsule starts penetrating (as ``sweep_capsule_triangle``).
        """
        v = as_point(displacement, "displacement")
        first = self._sweep_one(capsule.a, capsule.b, capsule.radius, v)
        if first is None:
            return None
        t, n, pt, tri = first
        return Hit(float(t), n.copy(), pt.copy(), int(tri))

    def _sweep_candidates_one(self, a, b, r, v):
        """Candidate triangles of one sweep: entry-level BVH query on the sweep's padded box,
        then the moving plane-slab reject (a proven miss when the segment's plane distances
        stay beyond the pad over the whole motion)."""
        ends = np.empty((4, 3))  # a, b, a + v, b + v (min / max / abs are exact: any order)
        ends[0] = a
        ends[1] = b
        np.add(ends[0:2], v, out=ends[2:4])
        ext = float(np.abs(ends).max())
        pad = r + self._pad(r + ext)
        q8 = np.empty(8)
        np.add(ends.max(0), pad, out=q8[0:3])
        np.subtract(pad, ends.min(0), out=q8[3:6])
        q8[6:8] = 0.0
        cand = self._bvh.query_box8(q8)
        if not cand.size:
            return cand
        cull = np.take(self._cull, cand, axis=0)
        nrm = cull[:, 0:3]
        d = nrm @ ends[0:2].T.copy() - cull[:, 3, None]  # (k, 2): d0, d1
        dv = nrm @ v
        d0 = d[:, 0]
        d1 = d[:, 1]
        keep = (np.minimum(d0, d1) + np.minimum(dv, 0.0) < pad) & (
            np.maximum(d0, d1) + np.maximum(dv, 0.0) > -pad
        )
        return cand[keep]

    def _sweep_one(self, a, b, r, v):
        """First hit (time, normal (3,), point (3,), triangle) of one sweep, or None.

        The single-query route (fewer numpy calls than the batched one): candidates from
        ``_sweep_candidates_one``, one kernel call. Also serves ``_sweep_batch`` for a batch
        of one (a controller moving one character).
        """
        cand = self._sweep_candidates_one(a, b, r, v)
        if not cand.size:
            return None
        t, n, pt = _sweep._sweep_rec(a, b, r, v, self._krec, cand)
        i = int(np.argmin(t))  # first minimum; ties go to the lowest triangle index
        tmin = t[i]
        if not np.isfinite(tmin):
            return None
        tie = np.flatnonzero(t == tmin)
        if tie.size > 1:
            i = int(tie[np.argmin(cand[tie])])
        return tmin, n[i], pt[i], cand[i]

    def _sweep_few(self, a, b, r, v) -> SweepBatch:
        """First hits of a handful of sweeps (Q <= SWEEP_FEW_QUERIES): per-query lean culls
        and one kernel call over all their pairs (a controller's slide sweep and ground probe
        come as a batch of two)."""
        nq = a.shape[0]
        cands = [self._sweep_candidates_one(a[i], b[i], float(r[i]), v[i]) for i in range(nq)]
        ti = np.concatenate(cands)
        time = np.full(nq, np.inf)
        normal = np.zeros((nq, 3))
        point = np.zeros((nq, 3))
        tri = np.full(nq, -1, dtype=np.int64)
        if not ti.size:
            return SweepBatch(time, normal, point, tri)
        qi = np.repeat(np.arange(nq), [c.size for c in cands])
        t, n, pt = _sweep._sweep_rec(a[qi], b[qi], r[qi], v[qi], self._krec, ti)
        hit = np.isfinite(t)
        if hit.any():
            qi, ti, t, n, pt = qi[hit], ti[hit], t[hit], n[hit], pt[hit]
            order = np.lexsort((ti, t, qi))
            qs = qi[order]
            first = order[np.concatenate((_TRUE1, qs[1:] != qs[:-1]))]
            q = qi[first]
            time[q] = t[first]
            normal[q] = n[first]
            point[q] = pt[first]
            tri[q] = ti[first]
        return SweepBatch(time, normal, point, tri)

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
        res = self._raycast_batch(o[None], d[None], np.array([md]))
        if res.triangle[0] < 0:
            return None
        return Hit(float(res.time[0]), res.normal[0], res.point[0], int(res.triangle[0]))

    # ------------------------------------------------------------------ batched queries
    def _capsule_pairs(self, a, b, r):
        """Culled candidate pairs (query, triangle) for capsules (Q,3),(Q,3),(Q,).

        BVH boxes (float32 outward test: a superset of the float64 overlaps), then the
        plane-slab and bounding-sphere rejects (dist(segment, centroid) >= pad + sphere
        radius) in chunks of ``CAPSULE_CULL_CHUNK`` pairs on component-major rows gathered
        with ``np.take`` (rows of a 2-D array by fancy indexing cost ~5x more on terrain_1M).
        """
        pad = r + self._pad(r + np.maximum(abs(a).max(1), abs(b).max(1)))
        q6 = np.concatenate(
            [np.maximum(a, b) + pad[:, None], pad[:, None] - np.minimum(a, b)], axis=1
        )
        qi, ti = self._bvh.query_many_box6(q6, exact=False)
        k = qi.size
        keep = np.empty(k, dtype=bool)
        aT = np.ascontiguousarray(a.T)
        bT = np.ascontiguousarray(b.T)
        dT = bT - aT
        dd = (dT * dT).sum(0)
        dd[dd <= 0.0] = 1.0  # a point capsule: t = 0
        for lo in range(0, k, CAPSULE_CULL_CHUNK):
            s = slice(lo, lo + CAPSULE_CULL_CHUNK)
            q = qi[s]
            C = np.take(self._cull, ti[s], axis=0).T  # (8, n): normal, offset, centre, radius
            A = np.take(aT, q, axis=1)
            Bq = np.take(bT, q, axis=1)
            p = pad[q]
            d0 = C[0] * A[0]
            d0 += C[1] * A[1]
            d0 += C[2] * A[2]
            d0 -= C[3]
            d1 = C[0] * Bq[0]
            d1 += C[1] * Bq[1]
            d1 += C[2] * Bq[2]
            d1 -= C[3]
            kk = (np.minimum(d0, d1) < p) & (np.maximum(d0, d1) > -p)
            # segment to bounding-sphere centre (Ericson RTCD 5.1.2)
            D = np.take(dT, q, axis=1)
            W = C[4:7] - A
            t = W[0] * D[0]
            t += W[1] * D[1]
            t += W[2] * D[2]
            t /= dd[q]
            np.clip(t, 0.0, 1.0, out=t)
            D *= t
            W -= D
            W *= W
            p += C[7]
            p *= p
            kk &= (W[0] + W[1] + W[2]) < p
            keep[s] = kk
        return qi[keep], ti[keep]

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
        qi, ti = self._capsule_pairs(a, b, r)
        if qi.size:
            hit, depth, normal, point = self._contacts_pairs3(a, b, r, qi, ti)
            idx = np.flatnonzero(hit)
            qi, ti, depth = qi[idx], ti[idx], depth[idx]
            order = _contact_order(qi, ti, depth, a.shape[0], self.n_triangles)
            idx = idx[order]
            return ContactBatch(qi[order], ti[order], depth[order],
                                np.take(normal, idx, axis=1).T.copy(),
                                np.take(point, idx, axis=1).T.copy())
        e = np.empty(0, np.int64)
        return ContactBatch(e, e.copy(), np.empty(0), np.empty((0, 3)), np.empty((0, 3)))

    def _contacts_pairs3(self, a, b, r, qi, ti):
        """Exact contacts of pairs (capsule qi, triangle ti), in chunks of CONTACT_CHUNK pairs.

        Returns hit (K,), depth (K,), normal (3, K), point (3, K) (component-major)."""
        k = qi.size
        hit = np.empty(k, dtype=bool)
        depth = np.empty(k)
        normal = np.empty((3, k))
        point = np.empty((3, k))
        aT = np.ascontiguousarray(a.T)
        bT = np.ascontiguousarray(b.T)
        chunk = _contact.CONTACT_CHUNK
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            for lo in range(0, k, chunk):
                s = slice(lo, lo + chunk)
                q = qi[s]
                T = np.ascontiguousarray(np.take(self._krec, ti[s], axis=0).T)
                hit[s], depth[s], normal[:, s], point[:, s] = _contact._capsule_triangle_rec(
                    np.take(aT, q, axis=1), np.take(bT, q, axis=1), r[q], T
                )
        return hit, depth, normal, point

    def sweep_capsule_many(self, a, b, radius, displacement) -> SweepBatch:
        """First hits of Q capsules (a, b (Q,3), radius scalar|(Q,)) moved by displacement (Q,3)."""
        a = as_points(a, "a")
        b = as_points(b, "b")
        v = as_points(displacement, "displacement")
        if a.shape != b.shape or a.shape != v.shape:
            raise ValueError("a, b and displacement must have the same (Q, 3) shape")
        r = as_radii(radius, "radius", a.shape[0])
        return self._sweep_batch(a, b, r, v)

    def _sweep_batch(self, a, b, r, v, hood=None, owner=None, want=None) -> SweepBatch:
        """First hits of Q sweeps (a, b, v (Q, 3), r (Q,)): cull, order, prune, exact kernel.

        1. BVH: triangles whose box overlaps the sweep's padded box (float32 outward test,
           ``exact=False``: a superset of the float64 overlaps; the steps below decide).
        2. Bounding-disc cull (``_swept_disc_may_touch``): the triangle's bounding disc
           farther than pad + |v| / 2 from the segment at mid-motion, or its plane beyond
           the pad all along the motion, proves a miss. Runs here for short sweeps (|v| <=
           ``SWEEP_SHORT_REL`` r), after step 3 for long ones.
        3. Batches holding a long sweep only (short ones are decided better by step 4):
           time-interval separating-axis cull (``_sweep_windows``): along the x, y, z axes,
           the triangle's normal and the motion direction, the times at which the moving
           segment's padded projection overlaps the triangle's give a window [enter, exit]
           that contains every t with dist < r; an empty window proves a miss and ``enter``
           is a lower bound of the pair's exact time.
        4. Short sweeps (|v| <= ``SWEEP_SHORT_REL`` r): exact mid-motion distance cull
           (``_swept_capsule_may_touch``): the exact segment-triangle distance at mid-motion
           minus half its rate of change along v (the distance is convex in time) >= pad
           proves a miss; the same tangent bounds each kept pair's time from below.
        5. With more than ``SWEEP_PRUNE_MIN_PAIRS`` survivors (``SWEEP_LOWER_PRUNE_MIN_PAIRS``
           in a batch of short sweeps only), two rounds: the exact kernel first runs on each
           query's ``SWEEP_PRUNE_FIRST`` most promising pairs (earliest face-plane entry, then
           earliest window; short only: earliest tangent bound), which gives each query an
           exact time ``best``; every other pair whose lower bound (window entry, tangent
           bound, the larger of the two) is after ``best`` is dropped (its time is > best, so
           it cannot be the first hit or tie with it); the rest run next.
        Every pair that could be the first hit is decided by the exact kernel, so the answer
        equals brute force over all triangles. ``hood``, ``owner``: cached candidates for
        step 1 (``_pairs_box6``); the answer does not depend on them. ``want`` (Q,) bool or
        None (all): the queries whose normal and point are wanted when they start
        penetrating (time 0); the others then report zeros (no contact kernel; batches of
        more than SWEEP_FEW_QUERIES only: smaller ones compute every contact).
        """
        nq = a.shape[0]
        if nq == 1:
            first = self._sweep_one(a[0], b[0], float(r[0]), v[0])
            if first is None:
                return SweepBatch(np.full(1, np.inf), np.zeros((1, 3)), np.zeros((1, 3)),
                                  np.full(1, -1, dtype=np.int64))
            t, n, pt, tri = first
            return SweepBatch(np.array([t]), n[None].copy(), pt[None].copy(),
                              np.array([tri], dtype=np.int64))
        if 0 < nq <= SWEEP_FEW_QUERIES:
            return self._sweep_few(a, b, r, v)
        a2, b2 = a + v, b + v
        ext = np.maximum(np.maximum(abs(a).max(1), abs(b).max(1)),
                         np.maximum(abs(a2).max(1), abs(b2).max(1)))
        pad = r + self._pad(r + ext)
        lo = np.minimum(np.minimum(a, b), np.minimum(a2, b2)) - pad[:, None]
        hi = np.maximum(np.maximum(a, b), np.maximum(a2, b2)) + pad[:, None]
        qi, ti = self._pairs_box6(np.concatenate([hi, -lo], axis=1), hood, owner)
        time = np.full(nq, np.inf)
        normal = np.zeros((nq, 3))
        point = np.zeros((nq, 3))
        tri = np.full(nq, -1, dtype=np.int64)
        if not qi.size:
            return SweepBatch(time, normal, point, tri)
        # the disc cull runs before the windows for short sweeps (it removes ~55 % of their
        # pairs, cheaper than the windows), after them for long ones (it removes few)
        short = np.einsum("ij,ij->i", v, v) <= (SWEEP_SHORT_REL * r) ** 2
        keep = self._swept_disc_may_touch(a, b, v, pad, qi, ti, short)
        if keep is not None:
            qi, ti = qi[keep], ti[keep]
        enter = key = None
        if not short.all():
            keep, enter, key = _sweep_windows(a, b, r, v, pad, qi, ti, self._rec_rows,
                                              self._krec)
            qi, ti, enter, key = qi[keep], ti[keep], enter[keep], key[keep]
            keep = self._swept_disc_may_touch(a, b, v, pad, qi, ti, ~short)
            if keep is not None:
                qi, ti, enter, key = qi[keep], ti[keep], enter[keep], key[keep]
        cull = self._swept_capsule_may_touch(a, b, v, r, pad, qi, ti, short)
        lower = None
        if cull is not None:
            keep, lower = cull
            qi, ti, lower = qi[keep], ti[keep], lower[keep]
            if enter is not None:
                enter, key = enter[keep], key[keep]
                np.maximum(enter, lower, out=enter)
        if not qi.size:
            return SweepBatch(time, normal, point, tri)
        min_pairs = SWEEP_PRUNE_MIN_PAIRS
        if enter is None and lower is not None:  # all short: rank and prune on the tangent
            enter = key = lower
            min_pairs = SWEEP_LOWER_PRUNE_MIN_PAIRS
        if enter is not None and qi.size > min_pairs:
            first = _first_pairs(qi, enter, key)
            wq = None if want is None else want[qi]
            t1, n1, p1 = _sweep._sweep_rec(
                a[qi[first]], b[qi[first]], r[qi[first]], v[qi[first]], self._krec, ti[first],
                None if wq is None else wq[first])
            best = np.full(nq, np.inf)
            np.minimum.at(best, qi[first], t1)
            rest = np.flatnonzero(~first & (enter <= best[qi]))
            t2, n2, p2 = _sweep._sweep_rec(
                a[qi[rest]], b[qi[rest]], r[qi[rest]], v[qi[rest]], self._krec, ti[rest],
                None if wq is None else wq[rest])
            first = np.flatnonzero(first)
            qi = np.concatenate((qi[first], qi[rest]))
            ti = np.concatenate((ti[first], ti[rest]))
            t = np.concatenate((t1, t2))
            n = np.concatenate((n1, n2))
            pt = np.concatenate((p1, p2))
        else:
            t, n, pt = _sweep._sweep_rec(a[qi], b[qi], r[qi], v[qi], self._krec, ti,
                                         None if want is None else want[qi])
        hit = np.isfinite(t)
        qi, ti, t, n, pt = qi[hit], ti[hit], t[hit], n[hit], pt[hit]
        if qi.size:
            order = np.lexsort((ti, t, qi))
            qs = qi[order]
            first = order[np.r_[True, qs[1:] != qs[:-1]]]
            q = qi[first]
            time[q] = t[first]
            normal[q] = n[first]
            point[q] = pt[first]
            tri[q] = ti[first]
        return SweepBatch(time, normal, point, tri)

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
        return self._raycast_batch(o, d, md)

    def _raycast_batch(self, o, d, md) -> SweepBatch:
        nq = o.shape[0]
        d = d / np.sqrt(np.einsum("ij,ij->i", d, d))[:, None]
        time = np.full(nq, np.inf)
        normal = np.zeros((nq, 3))
        point = np.zeros((nq, 3))
        tri = np.full(nq, -1, dtype=np.int64)
        # Clip each ray to the mesh bounds (slab test), then cull by the clipped segment's box.
        pad = self._pad(np.abs(o).max(1))
        lo_m = self._lo - pad[:, None]
        hi_m = self._hi + pad[:, None]
        with np.errstate(divide="ignore", invalid="ignore"):
            inv = 1.0 / d
            t1 = (lo_m - o) * inv
            t2 = (hi_m - o) * inv
        t1 = np.where(d == 0.0, np.where((o >= lo_m) & (o <= hi_m), -np.inf, np.inf), t1)
        t2 = np.where(d == 0.0, np.where((o >= lo_m) & (o <= hi_m), np.inf, -np.inf), t2)
        tn = np.maximum(np.minimum(t1, t2).max(1), 0.0)
        tf = np.minimum(np.maximum(t1, t2).min(1), md)
        live = np.flatnonzero(tn <= tf)
        if not live.size:
            return SweepBatch(time, normal, point, tri)
        p0 = o[live] + tn[live, None] * d[live]
        p1 = o[live] + tf[live, None] * d[live]
        p = pad[live, None] * (1.0 + tf[live, None])
        q6 = np.concatenate([np.maximum(p0, p1) + p, p - np.minimum(p0, p1)], axis=1)
        # A long oblique ray has a large box; fine for probes, slow for rays across a level.
        qi, ti = self._bvh.query_many_box6(q6)
        qi = live[qi]
        if not qi.size:
            return SweepBatch(time, normal, point, tri)
        rec = self._rec_rows(ti)
        t, hit = _ray_triangle_many(o[qi], d[qi], rec[:, _A], rec[:, _B], rec[:, _C])
        # Zero-area triangles (zero normal row) have no interior to hit.
        hit &= (t >= 0.0) & (t <= md[qi]) & (rec[:, _N] != 0.0).any(1)
        qi, ti, t, rec = qi[hit], ti[hit], t[hit], rec[hit]
        if qi.size:
            order = np.lexsort((ti, t, qi))
            qs = qi[order]
            first = order[np.r_[True, qs[1:] != qs[:-1]]]
            q = qi[first]
            time[q] = t[first]
            n = rec[first][:, _N]
            facing = np.einsum("ij,ij->i", n, d[q])
            normal[q] = np.where((facing > 0.0)[:, None], -n, n)
            point[q] = o[q] + t[first, None] * d[q]
            tri[q] = ti[first]
        return SweepBatch(time, normal, point, tri)


def _contact_order(qi, ti, depth, nq, nt):
    """Permutation sorting contacts by query, then depth descending, then triangle ascending.

    Equals ``np.lexsort((ti, -depth, qi))`` (depth > 0, pairs (qi, ti) unique), ~10x faster:
    one argsort of a uint64 key packing qi, the top bits of depth's IEEE pattern (monotonic
    for positive floats) inverted, and ti. The key is exact except that depths agreeing in
    their top bits compare as equal (then ordered by ti); so the result is checked on
    adjacent pairs (a sequence is sorted iff every adjacent pair is) and the few queries
    holding a near-tie are re-sorted exactly.
    """
    bq = max(int(nq - 1).bit_length(), 1)
    bt = max(int(nt - 1).bit_length(), 1)
    nbits = 64 - bq - bt  # depth bits kept in the key
    if nbits < 8:  # huge batches on huge meshes: nothing gained
        return np.lexsort((ti, -depth, qi))
    dk = depth.view(np.uint64) >> np.uint64(63 - nbits)
    key = qi.astype(np.uint64) << np.uint64(nbits + bt)
    key |= (np.uint64((1 << nbits) - 1) - dk) << np.uint64(bt)
    key |= ti.astype(np.uint64)
    order = np.argsort(key)
    qs, ts, ds = qi[order], ti[order], depth[order]
    d0, d1 = ds[:-1], ds[1:]
    bad = (qs[1:] == qs[:-1]) & ((d0 < d1) | ((d0 == d1) & (ts[:-1] > ts[1:])))
    if bad.any():
        redo = np.zeros(nq, dtype=bool)
        redo[qs[:-1][bad]] = True
        sub = np.flatnonzero(redo[qs])
        order[sub] = order[sub][np.lexsort((ts[sub], -ds[sub], qs[sub]))]
    return order


_CYC = np.array([1, 2, 0, 1])


def _cross_rows(x, y):
    """Row-wise cross products of (N, 3) arrays: ``np.cross``'s values (the same products and
    differences: x1 y2 - x2 y1, ...) with 5 numpy calls instead of ~15. Row-major and
    contiguous, unlike ``sweep._xprod`` on transposed views: the einsum dot products that
    follow sum in an order that depends on their operands' strides."""
    xe = x.take(_CYC, 1)
    ye = y.take(_CYC, 1)
    return xe[:, :3] * ye[:, 1:] - xe[:, 1:] * ye[:, :3]


def _ray_triangle_many(o, d, a, b, c):
    """Möller-Trumbore ray-triangle intersection, vectorised over N rays/triangles.

    o, d : (N, 3) origins and unit directions; a, b, c : (N, 3) vertices.
    Returns (t (N,) metres, hit (N,) bool). Edges and vertices count as inside (closed
    triangle); zero-area or ray-parallel triangles never hit.
    """
    e1 = b - a
    e2 = c - a
    pv = _cross_rows(d, e2)
    det = np.einsum("ij,ij->i", e1, pv)
    ok = det != 0.0
    inv = 1.0 / np.where(ok, det, 1.0)
    s = o - a
    u = np.einsum("ij,ij->i", s, pv) * inv
    qv = _cross_rows(s, e1)
    w = np.einsum("ij,ij->i", d, qv) * inv
    t = np.einsum("ij,ij->i", e2, qv) * inv
    hit = ok & (u >= 0.0) & (w >= 0.0) & (u + w <= 1.0)
    return t, hit


def _sweep_windows(a, b, r, v, pad, qi, ti, rec, krec):
    """Cull and rank candidate sweep pairs with five separating axes (no exact kernel).

    a, b, v (Q, 3) segment ends and displacement; r (Q,) radii; pad (Q,) = r + rounding
    margin; qi, ti (K,) the pairs' query and triangle; rec, krec the mesh's ``_rec_rows``
    and ``_krec``. Returns (keep (K,) bool, enter (K,), key (K,)), in chunks of
    ``SWEEP_CULL_CHUNK`` pairs (cache-sized, component-major temporaries).

    Window: on an axis w the segment's projection [s_lo, s_hi] + t (v . w) must come within
    ``pad`` of the triangle's [t_lo, t_hi] for dist(segment + t v, triangle) < r
    (projections are 1-Lipschitz), which holds on one interval of t. Intersected over the
    axes x, y, z, the unit normal (zero for a zero-area triangle: always overlapping) and
    unit(v), and with [0, 1], it is [enter, exit]; keep is False when it is empty (a proven
    miss), otherwise every t with dist < r is >= enter. key: the time the end nearer the
    plane enters the face piece (its sphere reaches the plane inside the triangle), ``inf``
    where that does not happen; only used to order the pairs.
    """
    k = qi.size
    keep = np.empty(k, dtype=bool)
    enter = np.empty(k)
    key = np.empty(k)
    aT, bT, vT = a.T, b.T, v.T
    for lo in range(0, k, SWEEP_CULL_CHUNK):
        s = slice(lo, lo + SWEEP_CULL_CHUNK)
        q = qi[s]
        R = np.ascontiguousarray(rec(ti[s]).T)  # (17, n)
        n = R.shape[1]
        P = np.take(aT, q, axis=1)
        Q = np.take(bT, q, axis=1)
        V = np.take(vT, q, axis=1)
        vv = (V * V).sum(0)
        speed = np.sqrt(vv)
        U = V * np.where(vv > 0.0, 1.0 / np.where(vv > 0.0, speed, 1.0), 0.0)
        nrm = R[9:12]
        tl = np.empty((5, n))
        th = np.empty((5, n))
        sl = np.empty((5, n))
        sh = np.empty((5, n))
        c = np.empty((5, n))
        np.minimum(np.minimum(R[0:3], R[3:6]), R[6:9], out=tl[0:3])
        np.maximum(np.maximum(R[0:3], R[3:6]), R[6:9], out=th[0:3])
        np.minimum(P, Q, out=sl[0:3])
        np.maximum(P, Q, out=sh[0:3])
        c[0:3] = V
        d0 = (P * nrm).sum(0) - R[12]
        d1 = (Q * nrm).sum(0) - R[12]
        tl[3] = 0.0
        th[3] = 0.0
        np.minimum(d0, d1, out=sl[3])
        np.maximum(d0, d1, out=sh[3])
        c[3] = (V * nrm).sum(0)
        tu = (R[0:9].reshape(3, 3, n) * U).sum(1)  # vertex projections on unit(v)
        np.minimum(np.minimum(tu[0], tu[1]), tu[2], out=tl[4])
        np.maximum(np.maximum(tu[0], tu[1]), tu[2], out=th[4])
        pu = (P * U).sum(0)
        qu = (Q * U).sum(0)
        np.minimum(pu, qu, out=sl[4])
        np.maximum(pu, qu, out=sh[4])
        c[4] = speed
        p = pad[q]
        g1 = tl - sh - p  # need t c >= g1
        g2 = th - sl + p  # need t c <= g2, g2 > g1
        # c == 0: g / c is -inf/+inf (overlapping: never constrains) or both +-inf (disjoint:
        # empty window), or nan when a gap equals the pad exactly (dist > r: a miss; nan
        # makes the comparison below False)
        with np.errstate(divide="ignore", invalid="ignore"):
            g1 /= c
            g2 /= c
        t_in = np.minimum(g1, g2)
        t_out = np.maximum(g1, g2)
        e = np.maximum(np.maximum.reduce(t_in, axis=0), 0.0)
        enter[s] = e
        keep[s] = e <= np.minimum(np.minimum.reduce(t_out, axis=0), 1.0)
        # ordering key: face entry of the end nearer the plane (krec: inward edge normals
        # M_j, offsets, relative to vertex a)
        Kr = np.ascontiguousarray(np.take(krec, ti[s], axis=0).T)  # (31, n)
        near = np.abs(d0) <= np.abs(d1)
        dn = np.where(near, d0, d1)
        E = np.where(near, P, Q)
        gap = np.abs(dn) - r[q]
        towards = np.where(dn > 0.0, -c[3], c[3])
        ok = (gap >= 0.0) & (towards > 0.0)
        tf = gap / np.where(ok, towards, 1.0)
        ok &= tf <= 1.0
        foot = E - Kr[28:31] + tf * V - dn * nrm
        g = (foot[:, None] * Kr[0:12].reshape(3, 4, n)[:, 1:]).sum(0) - Kr[24:27]
        ok &= np.minimum(np.minimum(g[0], g[1]), g[2]) >= 0.0
        key[s] = np.where(ok, tf, np.inf)
    return keep, enter, key


def _first_pairs(qi, enter, key):
    """Bool (K,): each query's ``SWEEP_PRUNE_FIRST`` most promising candidate pairs.

    Ranks a query's pairs by ``key`` (face entry time, see ``_sweep_windows``), then by the
    window's ``enter``. Only an ordering heuristic: correctness does not depend on it.
    """
    k = qi.size
    order = np.lexsort((enter, key, qi))
    qs = qi[order]
    start = np.flatnonzero(np.r_[True, qs[1:] != qs[:-1]])
    rank = np.arange(k) - np.repeat(start, np.diff(np.r_[start, k]))
    first = np.zeros(k, dtype=bool)
    first[order[rank < SWEEP_PRUNE_FIRST]] = True
    return first
