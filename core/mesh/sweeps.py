"""Capsule sweeps on a ``TriangleMesh``: the first triangle each moving capsule hits.

Three routes, the same answers (brute force over all triangles with the exact kernel):

- one sweep (``sweep_one``): the sweep's padded box against the BVH's entry level, the
  moving plane-slab reject, one kernel call (a controller moving one character);
- a few sweeps (``sweep_few``, Q <= ``SWEEP_FEW_QUERIES``): the same per-query culls, one
  kernel call over all their pairs (a controller's slide sweep and ground probe);
- a batch (``sweep_batch``), in named phases: candidate pairs (BVH or a ``Hood``), culls
  (bounding disc, windows, tangent: core/mesh/culls.py), exact decision (two pruned rounds when
  there are many pairs), first hit per query (core/mesh/sweeps.py).

``mesh`` arguments are ``TriangleMesh``; sweeps are a, b (Q, 3) segment ends, r (Q,)
radii, v (Q, 3) displacements, metres, world space, already validated. Times are fractions
of the displacement in [0, 1], ``inf`` for a miss.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ..constants import (
    SWEEP_FEW_QUERIES,
    SWEEP_LOWER_PRUNE_MIN_PAIRS,
    SWEEP_PRUNE_MIN_PAIRS,
    SWEEP_SHORT_REL,
)
from ..geometry import sweep as sweep_kernels
from ..geometry.shapes import Hit
from .culls import (
    most_promising_pairs,
    moving_plane_slab_keeps,
    sweep_windows,
    swept_capsule_may_touch,
    swept_disc_may_touch,
)


class SweepBatch(NamedTuple):
    """Per-query first hit of a batched sweep or raycast (Q queries).

    time : (Q,) float64, fraction of the displacement (raycast: metres), ``inf`` for a miss;
    normal : (Q, 3) unit, obstacle -> mover (zeros for a miss); point : (Q, 3) on the
    obstacle (zeros for a miss); triangle : (Q,) int64, -1 for a miss. Ties in time go to the
    lowest triangle index.
    """

    time: np.ndarray
    normal: np.ndarray
    point: np.ndarray
    triangle: np.ndarray


# ------------------------------------------------------------------ first hits
_TRUE1 = np.ones(1, dtype=bool)


def first_per_query(qi, ti, t) -> np.ndarray:
    """int64 positions of each query's first hit among hits qi (K,) query, ti (K,) triangle,
    t (K,) time: least t, then lowest ti; one position per query present, in query order.

    One lexsort by (query, time, triangle) and the first row of each
    run of equal queries. K = 0 gives an empty array."""
    if not qi.size:
        return np.empty(0, dtype=np.int64)
    order = np.lexsort((ti, t, qi))
    qs = qi[order]
    return order[np.concatenate((_TRUE1, qs[1:] != qs[:-1]))]


def no_hits(nq: int) -> SweepBatch:
    """The SweepBatch of nq misses: time inf, zero normal and point, triangle -1."""
    return SweepBatch(np.full(nq, np.inf), np.zeros((nq, 3)), np.zeros((nq, 3)),
                      np.full(nq, -1, dtype=np.int64))


def first_hits(nq: int, qi, ti, t, normal, point) -> SweepBatch:
    """SweepBatch of nq queries from their hits: qi, ti (K,) int64, t (K,) finite times,
    normal, point (K, 3); queries without a hit report a miss (``no_hits``)."""
    out = no_hits(nq)
    first = first_per_query(qi, ti, t)
    if first.size:
        q = qi[first]
        out.time[q] = t[first]
        out.normal[q] = normal[first]
        out.point[q] = point[first]
        out.triangle[q] = ti[first]
    return out


class CulledPairs(NamedTuple):
    """Sweep pairs that survived the culls, with what the exact phase needs to prune them.

    qi, ti : (K,) int64 query and triangle; bound : (K,) float64 lower bound of each pair's
    exact time (window entry and/or tangent bound), or None; key : (K,) ranking key of the
    first round, or None; prune_above : int, the fewest pairs worth two rounds.
    """

    qi: np.ndarray
    ti: np.ndarray
    bound: np.ndarray | None
    key: np.ndarray | None
    prune_above: int


# ------------------------------------------------------------------ one or a few sweeps
def sweep_candidates_one(mesh, a, b, r: float, v) -> np.ndarray:
    """int64 candidate triangles of one sweep (a, b, v (3,), r): entry-level BVH query on the
    sweep's padded box, then the moving plane-slab reject."""
    ends = np.empty((4, 3))  # a, b, a + v, b + v (min / max / abs are exact: any order)
    ends[0] = a
    ends[1] = b
    np.add(ends[0:2], v, out=ends[2:4])
    ext = float(np.abs(ends).max())
    pad = r + mesh.cull_pad(r + ext)
    q8 = np.empty(8)
    np.add(ends.max(0), pad, out=q8[0:3])
    np.subtract(pad, ends.min(0), out=q8[3:6])
    q8[6:8] = 0.0
    cand = mesh.bvh.query_box8(q8)
    if not cand.size:
        return cand
    return cand[moving_plane_slab_keeps(np.take(mesh.cull_rows, cand, axis=0), ends, v, pad)]


def sweep_one(mesh, a, b, r: float, v) -> Hit | None:
    """First hit of one sweep as a Hit of numpy values (normal, point: views), or None.

    The single-query route: fewest numpy calls; ties go to the lowest triangle index."""
    cand = sweep_candidates_one(mesh, a, b, r, v)
    if not cand.size:
        return None
    t, n, pt = sweep_kernels.sweep_records(a, b, r, v, mesh.kernel_records, cand)
    i = int(np.argmin(t))  # first minimum; ties go to the lowest triangle index
    tmin = t[i]
    if not np.isfinite(tmin):
        return None
    tie = np.flatnonzero(t == tmin)
    if tie.size > 1:
        i = int(tie[np.argmin(cand[tie])])
    return Hit(tmin, n[i], pt[i], cand[i])


def sweep_few(mesh, a, b, r, v) -> SweepBatch:
    """First hits of a handful of sweeps (Q <= SWEEP_FEW_QUERIES): per-query lean culls and
    one kernel call over all their pairs."""
    nq = a.shape[0]
    cands = [sweep_candidates_one(mesh, a[i], b[i], float(r[i]), v[i]) for i in range(nq)]
    ti = np.concatenate(cands)
    if not ti.size:
        return no_hits(nq)
    qi = np.repeat(np.arange(nq), [c.size for c in cands])
    t, n, pt = sweep_kernels.sweep_records(a[qi], b[qi], r[qi], v[qi], mesh.kernel_records, ti)
    hit = np.isfinite(t)
    return first_hits(nq, qi[hit], ti[hit], t[hit], n[hit], pt[hit])


# ------------------------------------------------------------------ a batch
def sweep_batch(mesh, a, b, r, v, hood=None, owner=None, want=None) -> SweepBatch:
    """First hits of Q sweeps: candidate pairs, culls, exact decision, first hit per query.

    1. Pairs (``sweep_pairs``): triangles whose box overlaps the sweep's padded box
       (float32 outward test: a superset; the steps below decide), from the hierarchy or
       from ``hood`` (a ``Hood``, ``owner`` (Q,) int64 rows of it); the answer does not
       depend on the hood.
    2. Culls (``cull_sweep_pairs``): bounding disc, windows for batches holding a long
       sweep, tangent for short sweeps (|v| <= SWEEP_SHORT_REL r); see core/mesh/culls.py.
    3. Exact decision (``decide_pairs``): with more than ``prune_above`` survivors, the
       exact kernel first runs on each query's most promising pairs, which gives each query
       an exact time ``best``; every other pair whose lower bound is after ``best`` is
       dropped (its time is > best: it cannot be the first hit or tie with it); the rest
       run next. Every pair that could be the first hit is decided by the exact kernel.
    4. First hit per query (least time, then lowest triangle).

    Batches of one and of at most ``SWEEP_FEW_QUERIES`` take the lean routes (``sweep_one``,
    ``sweep_few``). ``want`` (Q,) bool or None (all): the queries whose normal and point are
    wanted when they start penetrating (time 0); the others then report zeros (no contact
    kernel; batches of more than SWEEP_FEW_QUERIES only: smaller ones compute every contact).
    """
    nq = a.shape[0]
    if nq == 1:
        first = sweep_one(mesh, a[0], b[0], float(r[0]), v[0])
        if first is None:
            return no_hits(1)
        t, n, pt, tri = first
        return SweepBatch(np.array([t]), n[None].copy(), pt[None].copy(),
                          np.array([tri], dtype=np.int64))
    if 0 < nq <= SWEEP_FEW_QUERIES:
        return sweep_few(mesh, a, b, r, v)
    qi, ti, pad = sweep_pairs(mesh, a, b, r, v, hood, owner)
    if not qi.size:
        return no_hits(nq)
    pairs = cull_sweep_pairs(mesh, a, b, r, v, pad, qi, ti)
    if not pairs.qi.size:
        return no_hits(nq)
    qi, ti, t, n, pt = decide_pairs(mesh, a, b, r, v, want, pairs)
    hit = np.isfinite(t)
    return first_hits(nq, qi[hit], ti[hit], t[hit], n[hit], pt[hit])


def sweep_pairs(mesh, a, b, r, v, hood=None, owner=None):
    """Phase 1: (qi, ti) (K,) int64 candidate pairs and the queries' pads (Q,), metres."""
    a2, b2 = a + v, b + v
    ext = np.maximum(np.maximum(abs(a).max(1), abs(b).max(1)),
                     np.maximum(abs(a2).max(1), abs(b2).max(1)))
    pad = r + mesh.cull_pad(r + ext)
    lo = np.minimum(np.minimum(a, b), np.minimum(a2, b2)) - pad[:, None]
    hi = np.maximum(np.maximum(a, b), np.maximum(a2, b2)) + pad[:, None]
    qi, ti = mesh.candidate_pairs(np.concatenate([hi, -lo], axis=1), hood, owner)
    return qi, ti, pad


def cull_sweep_pairs(mesh, a, b, r, v, pad, qi, ti) -> CulledPairs:
    """Phase 2: drop the pairs the culls prove cannot touch; collect their time bounds.

    The disc cull runs before the windows for short sweeps (it removes many of their pairs,
    and is cheaper than the windows), after them for long ones (it removes few)."""
    cull = mesh.cull_rows
    short = np.einsum("ij,ij->i", v, v) <= (SWEEP_SHORT_REL * r) ** 2
    keep = swept_disc_may_touch(cull, a, b, v, pad, qi, ti, short)
    if keep is not None:
        qi, ti = qi[keep], ti[keep]
    enter = key = None
    if not short.all():
        keep, enter, key = sweep_windows(a, b, r, v, pad, qi, ti, mesh.triangle_rows,
                                         mesh.kernel_records)
        qi, ti, enter, key = qi[keep], ti[keep], enter[keep], key[keep]
        keep = swept_disc_may_touch(cull, a, b, v, pad, qi, ti, ~short)
        if keep is not None:
            qi, ti, enter, key = qi[keep], ti[keep], enter[keep], key[keep]
    tangent = swept_capsule_may_touch(mesh.kernel_records, a, b, v, r, pad, qi, ti, short)
    if tangent is None:
        return CulledPairs(qi, ti, enter, key, SWEEP_PRUNE_MIN_PAIRS)
    keep, lower = tangent
    qi, ti, lower = qi[keep], ti[keep], lower[keep]
    if enter is None or key is None:  # all short: rank and prune on the tangent bound
        return CulledPairs(qi, ti, lower, lower, SWEEP_LOWER_PRUNE_MIN_PAIRS)
    enter, key = enter[keep], key[keep]
    np.maximum(enter, lower, out=enter)
    return CulledPairs(qi, ti, enter, key, SWEEP_PRUNE_MIN_PAIRS)


def decide_pairs(mesh, a, b, r, v, want, pairs: CulledPairs):
    """Phase 3: exact times of the pairs that could be first hits.

    Returns (qi, ti, t, normal (K, 3), point (K, 3)); a pair the pruning dropped is absent,
    a miss has t = inf."""
    qi, ti = pairs.qi, pairs.ti
    krec = mesh.kernel_records
    wq = None if want is None else want[qi]
    if pairs.bound is None or qi.size <= pairs.prune_above:
        t, n, pt = sweep_kernels.sweep_records(a[qi], b[qi], r[qi], v[qi], krec, ti, wq)
        return qi, ti, t, n, pt
    first = most_promising_pairs(qi, pairs.bound, pairs.key)
    t1, n1, p1 = sweep_kernels.sweep_records(
        a[qi[first]], b[qi[first]], r[qi[first]], v[qi[first]], krec, ti[first],
        None if wq is None else wq[first])
    best = np.full(a.shape[0], np.inf)
    np.minimum.at(best, qi[first], t1)
    rest = np.flatnonzero(~first & (pairs.bound <= best[qi]))
    t2, n2, p2 = sweep_kernels.sweep_records(
        a[qi[rest]], b[qi[rest]], r[qi[rest]], v[qi[rest]], krec, ti[rest],
        None if wq is None else wq[rest])
    first = np.flatnonzero(first)
    return (np.concatenate((qi[first], qi[rest])), np.concatenate((ti[first], ti[rest])),
            np.concatenate((t1, t2)), np.concatenate((n1, n2)), np.concatenate((p1, p2)))
