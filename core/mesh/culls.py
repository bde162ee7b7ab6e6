"""Culls of (query, triangle) candidate pairs: proofs that a pair cannot touch, no exact kernel.

Every cull here only *drops* pairs it proves cannot meet within ``pad`` (the query's radius
plus the mesh's rounding margin, ``TriangleMesh.cull_pad``); the exact kernels decide every
pair that survives, so the queries' answers never depend on a cull. A NaN keeps the pair.

- plane slabs (``plane_slab_keeps``, ``moving_plane_slab_keeps``): the segment stays on one
  side of the triangle's plane, farther than the pad (single queries);
- bounding spheres with the plane slab (``capsule_pair_keeps``): batched capsules;
- bounding disc (``swept_disc_may_touch``): sweeps, the triangle's disc against the segment
  at mid-motion padded by half the motion, and the moving plane slab;
- tangent (``swept_capsule_may_touch``): short sweeps, the exact mid-motion distance minus
  half its slope (the distance is convex in time), with a lower bound of the pair's time;
- windows (``sweep_windows``): long sweeps, time intervals on five separating axes, with a
  lower bound of the pair's time and an ordering key;
- ranking (``most_promising_pairs``): each query's first pairs to decide exactly (an
  ordering heuristic the pruning in core/mesh/sweeps.py uses; answers do not depend on it).

Rows: ``cull`` is the mesh's (M, CULL_FIELDS) cull rows, ``krec`` its (M, REC_FIELDS) kernel
records (core/mesh/rows.py). Queries: a, b, v (Q, 3) segment ends and displacement, r, pad
(Q,), metres; pairs: qi, ti (K,) int64 query and triangle. World space, metres.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ..constants import CAPSULE_CULL_CHUNK, SWEEP_CULL_CHUNK, SWEEP_PRUNE_FIRST, TANGENT_SLOPE_SLACK
from ..geometry.closest import segment_triangle_records
from ..geometry.records import REC_A
from .rows import (
    CULL_CENTROID,
    CULL_NORMAL,
    CULL_OFFSET,
    CULL_RADIUS,
    ROW_A,
    ROW_B,
    ROW_C,
    ROW_NORMAL,
    ROW_OFFSET,
)


class TangentBound(NamedTuple):
    """Tangent cull of short sweeps: keep (K,) bool, lower (K,) float64 a lower bound of each
    kept pair's exact time (fraction of the displacement; 0 for pairs not tested)."""

    keep: np.ndarray
    lower: np.ndarray


class SweepWindows(NamedTuple):
    """Window cull of sweeps: keep (K,) bool; enter (K,) a lower bound of the pair's exact
    time; key (K,) the face-entry time that ranks pairs (``inf`` when none)."""

    keep: np.ndarray
    enter: np.ndarray
    key: np.ndarray


# ------------------------------------------------------------------ single queries
def plane_slab_keeps(cull, a, b, pad) -> np.ndarray:
    """(k,) bool: segment a, b (3,) comes within ``pad`` (float) of the planes of cull rows
    (k, CULL_FIELDS) (a zero normal and offset, a triangle without a plane, always keeps)."""
    nrm = cull[:, CULL_NORMAL]
    off = cull[:, CULL_OFFSET]
    d0 = nrm @ a - off
    d1 = nrm @ b - off
    return (np.minimum(d0, d1) < pad) & (np.maximum(d0, d1) > -pad)


def moving_plane_slab_keeps(cull, ends, v, pad) -> np.ndarray:
    """(k,) bool: segment ``ends[0:2]`` (rows of ends (4, 3)) moved by v (3,) comes within
    ``pad`` of the planes of cull rows (k, CULL_FIELDS) at some time in [0, 1]."""
    nrm = cull[:, CULL_NORMAL]
    d = nrm @ ends[0:2].T.copy() - cull[:, CULL_OFFSET, None]  # (k, 2): d0, d1
    dv = nrm @ v
    d0 = d[:, 0]
    d1 = d[:, 1]
    return (np.minimum(d0, d1) + np.minimum(dv, 0.0) < pad) & (
        np.maximum(d0, d1) + np.maximum(dv, 0.0) > -pad
    )


# ------------------------------------------------------------------ batched capsules
def capsule_pair_keeps(cull, a, b, pad, qi, ti) -> np.ndarray:
    """(K,) bool: capsule qi may touch triangle ti (plane slab and bounding sphere).

    A pair is dropped when the segment's plane offsets are both beyond the pad on one side,
    or when dist(segment, centroid) >= pad + sphere radius (Ericson RTCD 5.1.2). Chunks of
    ``CAPSULE_CULL_CHUNK`` pairs on component-major rows gathered with ``np.take`` (cheaper
    than fancy-indexing rows of a 2-D array).
    """
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
        C = np.take(cull, ti[s], axis=0).T  # (8, n): normal, offset, centre, radius
        A = np.take(aT, q, axis=1)
        Bq = np.take(bT, q, axis=1)
        p = pad[q]
        d0 = C[0] * A[0]  # C[0:3]: the unit normal
        d0 += C[1] * A[1]
        d0 += C[2] * A[2]
        d0 -= C[CULL_OFFSET]
        d1 = C[0] * Bq[0]
        d1 += C[1] * Bq[1]
        d1 += C[2] * Bq[2]
        d1 -= C[CULL_OFFSET]
        kk = (np.minimum(d0, d1) < p) & (np.maximum(d0, d1) > -p)
        # segment to bounding-sphere centre (Ericson RTCD 5.1.2)
        D = np.take(dT, q, axis=1)
        W = C[CULL_CENTROID] - A
        t = W[0] * D[0]
        t += W[1] * D[1]
        t += W[2] * D[2]
        t /= dd[q]
        np.clip(t, 0.0, 1.0, out=t)
        D *= t
        W -= D
        W *= W
        p += C[CULL_RADIUS]
        p *= p
        kk &= (W[0] + W[1] + W[2]) < p
        keep[s] = kk
    return keep


# ------------------------------------------------------------------ sweeps: bounding disc
def swept_disc_may_touch(cull, a, b, v, pad, qi, ti, sel):
    """(K,) bool: can sweep qi touch triangle ti at all? None when no query is selected.

    Only pairs of the selected queries (``sel`` (Q,) bool) are tested, the others kept.
    Every point a + s (b - a) + t v (s, t in [0, 1]) lies within |v| / 2 of the segment S
    shifted by v / 2, so dist(S, triangle) >= pad + |v| / 2 proves a miss. The triangle lies
    in its bounding disc (its plane, unit normal n, around the centroid c, radius ``rad``:
    the bounding sphere's). For x on S and y in the disc, with w = x - c,
    |x - y|^2 = (w.n)^2 + |w_p - y_p|^2 >= (w.n)^2 + max(|w_p| - rad, 0)^2 (w_p: w
    projected on the plane); minimising both terms separately over S gives the lower bound
    hmin^2 + max(rho - rad, 0)^2, hmin the least |w.n| on S (0 if S crosses the plane), rho
    the distance from c to S projected on the plane (Ericson RTCD 5.1.2). Also a moving
    plane slab: the segment's plane offsets stay beyond the pad over the whole motion (they
    move by (t - 1/2) v.n from mid-motion), the bound for a character walking along the
    floor under it, where |v.n| << |v|. A zero normal (zero-area triangle, or a sliver
    without a plane) leaves the bounding-sphere bound.
    """
    if not sel.any():
        return None
    if not sel.all():
        idx = np.flatnonzero(sel[qi])
        keep = np.ones(qi.size, dtype=bool)
        keep[idx] = _disc_keeps(cull, a, b, v, pad, qi[idx], ti[idx])
        return keep
    return _disc_keeps(cull, a, b, v, pad, qi, ti)


def _disc_keeps(cull, a, b, v, pad, qi, ti):
    """``swept_disc_may_touch`` on every pair (component-major rows)."""
    half = 0.5 * v
    reach = pad + np.sqrt(np.einsum("ij,ij->i", half, half))
    reach *= reach
    C = np.take(cull, ti, axis=0).T  # (8, K): normal, offset, centroid, radius
    n = C[CULL_NORMAL]
    cen = C[CULL_CENTROID]
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
    g -= C[CULL_RADIUS]
    np.maximum(g, 0.0, out=g)
    g *= g
    hmin *= hmin
    g += hmin
    return ~((g >= np.take(reach, qi)) | slab)


# ------------------------------------------------------------------ sweeps: tangent
def swept_capsule_may_touch(krec, a, b, v, r, pad, qi, ti, short) -> TangentBound | None:
    """Tangent cull of the short sweeps (``short`` (Q,) bool); None when there are none.

    f(t) = dist(segment + t v, triangle) is convex in t (the distance from the point t v to
    the convex set triangle - segment), so f(t) >= f(1/2) + f'(1/2) (t - 1/2) and min f over
    [0, 1] >= f(1/2) - |f'(1/2)| / 2, where f'(1/2) = v . W / |W| (W: the closest segment
    point minus the closest triangle point at mid-motion, unique as a difference although
    the pair may not be). min f >= pad proves a miss. |f'| <= |v|, so this is never weaker
    than the bounding capsule of radius r + |v| / 2 around the mid-motion segment, and far
    stronger for motion along the triangle (a character walking parallel to the floor
    under it: f' ~ 0). The distance is the exact segment-triangle kernel's (as
    ``contact.capsule_triangle``'s); the slope gets a slack of
    |v| (TANGENT_SLOPE_SLACK + (pad - r) / f(1/2)). Pairs of long sweeps are kept untested.

    ``lower``: a pair approaching at mid-motion (f' + slack < 0) cannot come below pad
    before 1/2 + (f(1/2) - pad) / |f' - slack| (when f(1/2) >= pad: the tangent falls no
    faster than that after 1/2 and is above pad before) or 1/2 - (pad - f(1/2)) / |f' +
    slack| (when f(1/2) < pad: before 1/2 the tangent rises at least that fast going back
    in time); otherwise 0. The pad (> r) keeps a pair whose exact time ties another's within
    rounding below their computed times. Chunks of ``SWEEP_CULL_CHUNK`` pairs.
    """
    if not short.any():
        return None
    k = qi.size
    keep = np.ones(k, dtype=bool)
    lower = np.zeros(k)
    half = 0.5 * v
    speed = np.sqrt(np.einsum("ij,ij->i", v, v))
    margin = pad - r
    mid = np.concatenate(((a + half).T, (b + half).T))  # (6, Q): the segment at mid-motion
    vT = v.T
    idx = None if short.all() else np.flatnonzero(short[qi])
    n_test = k if idx is None else idx.size
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        for lo in range(0, n_test, SWEEP_CULL_CHUNK):
            s = slice(lo, lo + SWEEP_CULL_CHUNK)
            sel = s if idx is None else idx[s]
            q = qi[sel]
            T = np.ascontiguousarray(np.take(krec, ti[sel], axis=0).T)
            keep[sel], lower[sel] = _tangent_chunk(
                np.take(mid, q, axis=1), T, np.take(vT, q, axis=1), np.take(speed, q),
                np.take(margin, q), np.take(pad, q))
    return TangentBound(keep, lower)


def _tangent_chunk(M, T, V, sp, margin, p):
    """Tangent cull of one chunk: M (6, n) mid-motion segment ends, T (REC_FIELDS, n)
    records, V (3, n) displacements, sp |v|, margin pad - r, p pad (n,). Returns (keep,
    lower) (n,). Callers hold np.errstate."""
    M[0:3] -= T[REC_A]
    M[3:6] -= T[REC_A]
    W, d2 = segment_triangle_records(M[0:3], M[3:6], T)[1:3]
    dist = np.sqrt(d2)
    W *= V
    g = W.sum(0)
    g /= dist  # f'(1/2)
    slack = sp * (TANGENT_SLOPE_SLACK + margin / dist)
    slope = np.abs(g)
    slope += slack
    np.minimum(slope, sp, out=slope)  # nan (dist 0) stays nan: kept
    slope *= 0.5
    keep = ~(dist - slope >= p)
    gap = dist - p
    lo = np.where(gap >= 0.0, gap / (slack - g), gap / -(g + slack))
    lo += 0.5
    np.maximum(lo, 0.0, out=lo)
    return keep, np.where((g + slack < 0.0) & (lo <= 1.0), lo, 0.0)


# ------------------------------------------------------------------ sweeps: windows
def sweep_windows(a, b, r, v, pad, qi, ti, rows_of, krec) -> SweepWindows:
    """Cull and rank candidate sweep pairs with five separating axes (no exact kernel).

    ``rows_of(idx)``: the mesh's (k, ROW_FIELDS) triangle rows (``TriangleMesh.
    triangle_rows``). Chunks of ``SWEEP_CULL_CHUNK`` pairs (cache-sized, component-major
    temporaries).

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
        R = np.ascontiguousarray(rows_of(ti[s]).T)  # (ROW_FIELDS, n)
        P = np.take(aT, q, axis=1)
        Q = np.take(bT, q, axis=1)
        V = np.take(vT, q, axis=1)
        keep[s], enter[s], d0, d1, vn = _axis_windows(P, Q, V, R, pad[q])
        Kr = np.ascontiguousarray(np.take(krec, ti[s], axis=0).T)  # (REC_FIELDS, n)
        key[s] = _face_entry_time(P, Q, V, R[ROW_NORMAL], d0, d1, vn, r[q], Kr)
    return SweepWindows(keep, enter, key)


def _axis_windows(P, Q, V, R, p):
    """Windows on the axes x, y, z, the normal and unit(v) of one chunk: P, Q, V (3, n)
    segment ends and displacement, R (ROW_FIELDS, n) triangle rows, p (n,) pads.

    Returns (keep, enter, d0, d1, vn) (n,): d0, d1 the ends' plane offsets and vn = v . n
    (for the ordering key)."""
    n = R.shape[1]
    vv = (V * V).sum(0)
    speed = np.sqrt(vv)
    U = V * np.where(vv > 0.0, 1.0 / np.where(vv > 0.0, speed, 1.0), 0.0)
    nrm = R[ROW_NORMAL]
    tl = np.empty((5, n))  # triangle projections [tl, th], segment's [sl, sh], rates c
    th = np.empty((5, n))
    sl = np.empty((5, n))
    sh = np.empty((5, n))
    c = np.empty((5, n))
    np.minimum(np.minimum(R[ROW_A], R[ROW_B]), R[ROW_C], out=tl[0:3])
    np.maximum(np.maximum(R[ROW_A], R[ROW_B]), R[ROW_C], out=th[0:3])
    np.minimum(P, Q, out=sl[0:3])
    np.maximum(P, Q, out=sh[0:3])
    c[0:3] = V
    d0 = (P * nrm).sum(0) - R[ROW_OFFSET]
    d1 = (Q * nrm).sum(0) - R[ROW_OFFSET]
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
    keep = e <= np.minimum(np.minimum.reduce(t_out, axis=0), 1.0)
    return keep, e, d0, d1, c[3]


def _face_entry_time(P, Q, V, nrm, d0, d1, vn, r, Kr):
    """Ordering key of one chunk: the time the segment end nearer the plane reaches it
    (|offset| falls to r) with its foot inside the triangle, ``inf`` otherwise. Kr
    (REC_FIELDS, n) kernel records (inward edge normals M_j, offsets, relative to vertex a)."""
    n = Kr.shape[1]
    near = np.abs(d0) <= np.abs(d1)
    dn = np.where(near, d0, d1)
    E = np.where(near, P, Q)
    gap = np.abs(dn) - r
    towards = np.where(dn > 0.0, -vn, vn)
    ok = (gap >= 0.0) & (towards > 0.0)
    tf = gap / np.where(ok, towards, 1.0)
    ok &= tf <= 1.0
    foot = E - Kr[REC_A] + tf * V - dn * nrm
    g = (foot[:, None] * Kr[0:12].reshape(3, 4, n)[:, 1:]).sum(0) - Kr[24:27]
    ok &= np.minimum(np.minimum(g[0], g[1]), g[2]) >= 0.0
    return np.where(ok, tf, np.inf)


# ------------------------------------------------------------------ ranking
def most_promising_pairs(qi, enter, key) -> np.ndarray:
    """Bool (K,): each query's ``SWEEP_PRUNE_FIRST`` most promising candidate pairs.

    Ranks a query's pairs by ``key`` (face entry time, see ``sweep_windows``), then by the
    lower bound ``enter``. Only an ordering heuristic: correctness does not depend on it.
    """
    k = qi.size
    order = np.lexsort((enter, key, qi))
    qs = qi[order]
    start = np.flatnonzero(np.r_[True, qs[1:] != qs[:-1]])
    rank: np.ndarray = np.arange(k) - np.repeat(start, np.diff(np.r_[start, k]))
    first = np.zeros(k, dtype=bool)
    first[order[rank < SWEEP_PRUNE_FIRST]] = True
    return first
