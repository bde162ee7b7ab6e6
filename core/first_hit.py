"""The first hit of each query among its (query, triangle, time) hits, and the batch it fills.

One reduction for every batched first-hit query (sweeps, the few-sweeps route, rays): the
hit with the least time, ties going to the lowest triangle index, so that a batched answer
equals brute force over all triangles (``np.argmin``'s first minimum in triangle order).
"""

from __future__ import annotations

import numpy as np

from .shapes import SweepBatch

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
