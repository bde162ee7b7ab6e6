"""Capsule contacts on a ``TriangleMesh``: candidates, culls, exact kernel, contact order.

Single capsule (``capsule_contacts_one``, ``penetrating_one``): the capsule's padded box
is tested against every node of the BVH's entry level (at most ``BVH_ENTRY_NODES``), then
descends to the leaves' triangle slots; the candidates' cull rows reject triangles whose
plane does not come within the pad of the segment; one exact-kernel call decides the rest.
About 50 numpy calls before the kernel at 1M triangles: numpy's per-call cost times that
count is the floor of this design.

Batched (``contacts_batch``): BVH pairs (float32 outward boxes), plane-slab and
bounding-sphere culls (core/mesh/culls.py), the exact kernel in chunks of ``CONTACT_CHUNK``
pairs, then the contacts ordered by query, depth descending, triangle ascending
(``contact_order``).

``mesh`` arguments are ``TriangleMesh``; capsules are a, b (3,) or (Q, 3) segment ends and
radius r, metres, world space, already validated.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ..geometry.contact import CONTACT_CHUNK, capsule_triangle_records, settle_touching_many
from ..geometry.shapes import Contact
from .culls import capsule_pair_keeps, plane_slab_keeps


class ContactBatch(NamedTuple):
    """All penetrating (capsule, triangle) pairs of a batched query, flat arrays of length K.

    query : (K,) int64 capsule index; triangle : (K,) int64 triangle index;
    depth : (K,) float64 metres > 0; normal : (K, 3) unit, obstacle -> capsule;
    point : (K, 3) deepest point on the triangle. Sorted by query, then depth descending,
    then triangle ascending.
    """

    query: np.ndarray
    triangle: np.ndarray
    depth: np.ndarray
    normal: np.ndarray
    point: np.ndarray

_ZERO2 = np.zeros(2)
# Fewest depth bits worth packing into contact_order's sort key; below, plain lexsort.
CONTACT_KEY_MIN_DEPTH_BITS = 8


# ------------------------------------------------------------------ single capsule
def capsule_candidates(mesh, a, b, r: float) -> np.ndarray:
    """int64 indices of one capsule's candidate triangles after box and plane-slab culls."""
    pad = r + mesh.cull_pad(r + max(abs(a).max(), abs(b).max()))
    q8 = np.concatenate((np.maximum(a, b) + pad, pad - np.minimum(a, b), _ZERO2))
    cand = mesh.bvh.query_box8(q8)
    if not cand.size:
        return cand
    return cand[plane_slab_keeps(np.take(mesh.cull_rows, cand, axis=0), a, b, pad)]


def settle_touching_on_mesh(mesh, a, b, r, cand, hit, depth):
    """One capsule's float verdicts on the candidate triangles ``cand`` (K,), with the lanes
    within core.contact's touching band decided exactly (core.exact; touching is
    not a contact). Returns (hit, depth) (K,)."""
    corners = mesh.vertices[mesh.triangles[cand]]
    return settle_touching_many(a, b, r, corners[:, 0], corners[:, 1], corners[:, 2],
                                hit, depth)


def capsule_contacts_one(mesh, a, b, r: float) -> list[Contact]:
    """One Contact per penetrated triangle, deepest first (ties: lower triangle first)."""
    cand = capsule_candidates(mesh, a, b, r)
    if not cand.size:
        return []
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        hit, depth, normal, point = capsule_triangle_records(
            a.reshape(3, 1), b.reshape(3, 1), r, np.take(mesh.kernel_records, cand, axis=0).T
        )
    hit, depth = settle_touching_on_mesh(mesh, a, b, r, cand, hit, depth)
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


def penetrating_one(mesh, a, b, r: float) -> np.ndarray:
    """Sorted int64 indices of the triangles one capsule penetrates (distance < radius)."""
    cand = capsule_candidates(mesh, a, b, r)
    if not cand.size:
        return cand
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        hit, depth = capsule_triangle_records(
            a.reshape(3, 1), b.reshape(3, 1), r, np.take(mesh.kernel_records, cand, axis=0).T
        )[:2]
    hit = settle_touching_on_mesh(mesh, a, b, r, cand, hit, depth)[0]
    out = cand[hit]
    out.sort()
    return out


# ------------------------------------------------------------------ batched capsules
def capsule_pairs(mesh, a, b, r):
    """Culled candidate pairs (qi, ti) (K,) int64 for capsules a, b (Q, 3), r (Q,)."""
    pad = r + mesh.cull_pad(r + np.maximum(abs(a).max(1), abs(b).max(1)))
    q6 = np.concatenate(
        [np.maximum(a, b) + pad[:, None], pad[:, None] - np.minimum(a, b)], axis=1
    )
    qi, ti = mesh.bvh.query_many_box6(q6, exact=False)
    keep = capsule_pair_keeps(mesh.cull_rows, a, b, pad, qi, ti)
    return qi[keep], ti[keep]


def exact_contacts(mesh, a, b, r, qi, ti):
    """Exact contacts of pairs (capsule qi, triangle ti), in chunks of CONTACT_CHUNK pairs.

    Returns hit (K,) bool, depth (K,) metres, normal (3, K), point (3, K) (component-major).
    """
    k = qi.size
    hit = np.empty(k, dtype=bool)
    depth = np.empty(k)
    normal = np.empty((3, k))
    point = np.empty((3, k))
    aT = np.ascontiguousarray(a.T)
    bT = np.ascontiguousarray(b.T)
    krec = mesh.kernel_records
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        for lo in range(0, k, CONTACT_CHUNK):
            s = slice(lo, lo + CONTACT_CHUNK)
            q = qi[s]
            T = np.ascontiguousarray(np.take(krec, ti[s], axis=0).T)
            hit[s], depth[s], normal[:, s], point[:, s] = capsule_triangle_records(
                np.take(aT, q, axis=1), np.take(bT, q, axis=1), r[q], T
            )
    return hit, depth, normal, point


def contacts_batch(mesh, a, b, r) -> ContactBatch:
    """ContactBatch of every penetrating (capsule, triangle) pair of capsules a, b (Q, 3),
    r (Q,): exactly the pairs and values ``capsule_contacts_one`` gives per capsule."""
    qi, ti = capsule_pairs(mesh, a, b, r)
    if not qi.size:
        e = np.empty(0, np.int64)
        return ContactBatch(e, e.copy(), np.empty(0), np.empty((0, 3)), np.empty((0, 3)))
    hit, depth, normal, point = exact_contacts(mesh, a, b, r, qi, ti)
    idx = np.flatnonzero(hit)
    qi, ti, depth = qi[idx], ti[idx], depth[idx]
    order = contact_order(qi, ti, depth, a.shape[0], mesh.n_triangles)
    idx = idx[order]
    return ContactBatch(qi[order], ti[order], depth[order],
                        np.take(normal, idx, axis=1).T.copy(),
                        np.take(point, idx, axis=1).T.copy())


def contact_order(qi, ti, depth, nq, nt):
    """Permutation sorting contacts by query, then depth descending, then triangle ascending.

    qi, ti (K,) int64, depth (K,) float64 > 0, pairs (qi, ti) unique; nq, nt the numbers of
    queries and triangles. Equals ``np.lexsort((ti, -depth, qi))``, ~10x faster: one argsort
    of a uint64 key packing qi, the top bits of depth's IEEE pattern (monotonic for
    positive floats) inverted, and ti. The key is exact except that depths agreeing in
    their top bits compare as equal (then ordered by ti); so the result is checked on
    adjacent pairs (a sequence is sorted iff every adjacent pair is) and the few queries
    holding a near-tie are re-sorted exactly.
    """
    bq = max(int(nq - 1).bit_length(), 1)
    bt = max(int(nt - 1).bit_length(), 1)
    nbits = 64 - bq - bt  # depth bits kept in the key
    if nbits < CONTACT_KEY_MIN_DEPTH_BITS:  # huge batches on huge meshes: nothing gained
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
