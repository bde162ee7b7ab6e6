"""Bounding volume hierarchy over triangle AABBs, built and traversed with numpy only.

The hierarchy is *implicit*: triangles are sorted by the Morton code of their AABB centres
(Karras 2012's ordering), cut into leaves of ``BVH_LEAF_SIZE`` consecutive triangles, and every
level above groups ``BVH_FANOUT`` consecutive nodes. Children of node ``i`` at level ``L`` are
``i*F .. i*F+F-1`` at level ``L-1``; no pointers are stored. Each level is padded to a multiple
of the fan-out with *empty* boxes (``+inf`` everywhere), which never overlap a query.

Boxes are stored as ``(n, 8)`` float64 rows ``[lo_x, lo_y, lo_z, -hi_x, -hi_y, -hi_z, -inf,
-inf]`` so that an overlap test against a query box ``q8 = [hi_q, -lo_q, 0, 0]`` is one
comparison ``box8 <= q8`` whose 8 bool bytes per row are read as one uint64 and compared with
``_ALL_TRUE`` (closed intervals: touching boxes overlap). Public methods take ``q6 = [hi, -lo]``.

Node levels are kept as float32 copies rounded outward (``round_down32``) and tested against
query rows rounded up (``round_up32``): never fewer nodes than the float64 test, half the bytes
gathered. The leaves' triangle slots (``slot_box``) stay float64, so answers are exact;
``query_many_box6(..., exact=False)`` ends on float32 outward copies of the slots instead
(``slot32``, +32 bytes a slot) for callers whose exact culls and kernels follow anyway.

Build: one Morton sort plus one reshape-and-reduce per level; no Python loop per node or per
triangle. Traversal: one loop per level, over frontier arrays of (query, node) pairs; batched
queries start from the level with <= ``BVH_BATCH_START_NODES`` nodes (one broadcast test).
"""

from __future__ import annotations

import numpy as np

BVH_LEAF_SIZE = 8  # triangles per leaf (fixed; padded with empty slots)
BVH_FANOUT = 8  # children per inner node
# Largest number of nodes at the level a single query tests exhaustively before descending:
# with float32 node rows a contiguous compare on ~250 rows is cheaper than one more traversal
# level (terrain_1M: 248 entry nodes, 3 levels below; tools/bench.py's single-query row).
BVH_ENTRY_NODES = 256
# Largest number of nodes at the level batched queries start from: each query chunk is
# tested against all of them in one broadcast compare instead of descending from the root.
BVH_BATCH_START_NODES = 64
# Queries per chunk in batched traversal: bounds the frontier temporaries and keeps them
# cache-sized (tools/bench.py's batched rows).
BVH_QUERY_CHUNK = 1024

# float32 bounds of the outward rounding (round_down32, round_up32)
_F32_INF = np.float32(np.inf)
_F32_NEG_INF = np.float32(-np.inf)
_F32_MAX = float(np.finfo(np.float32).max)
_F32_BELOW_MAX = float(np.nextafter(np.finfo(np.float32).max, np.float32(0)))


def _spread_bits_10(x: np.ndarray) -> np.ndarray:
    """Spread the low 10 bits of ``x`` (uint64) to every third bit (Morton encoding)."""
    x = x & np.uint64(0x3FF)
    x = (x | (x << np.uint64(16))) & np.uint64(0x030000FF)
    x = (x | (x << np.uint64(8))) & np.uint64(0x0300F00F)
    x = (x | (x << np.uint64(4))) & np.uint64(0x030C30C3)
    x = (x | (x << np.uint64(2))) & np.uint64(0x09249249)
    return x


_SPREAD = _spread_bits_10(np.arange(1024, dtype=np.uint64)).astype(np.uint32)


def morton_codes(points: np.ndarray) -> np.ndarray:
    """30-bit Morton codes (uint32, shape (n,)) of ``points`` (n, 3) quantised to their bounds."""
    lo = points.min(axis=0)
    ext = points.max(axis=0) - lo
    scale = np.where(ext > 0.0, 1023.0 / np.where(ext > 0.0, ext, 1.0), 0.0)
    q = ((points - lo) * scale).astype(np.int32)
    np.clip(q, 0, 1023, out=q)
    code = _SPREAD[q[:, 0]] << np.uint32(2)
    code |= _SPREAD[q[:, 1]] << np.uint32(1)
    code |= _SPREAD[q[:, 2]]
    return code


_ALL_TRUE = np.frombuffer(np.ones(8, dtype=np.bool_).tobytes(), dtype=np.uint64)[0]


def _empty_boxes(n: int) -> np.ndarray:
    out = np.full((n, 8), np.inf)
    out[:, 6:] = -np.inf
    return out


def boxes_overlap(box8: np.ndarray, q8: np.ndarray) -> np.ndarray:
    """Bool mask over the leading axes of ``box8`` (..., 8): box overlaps the query box."""
    return (box8 <= q8).view(np.uint64)[..., 0] == _ALL_TRUE


def _group_min(rows: np.ndarray, k: int) -> np.ndarray:
    """Componentwise min of each group of ``k`` consecutive rows (n*k, 8) -> (n, 8).

    Chained np.minimum over strided views: faster than ``.min(axis=1)`` over a short axis.
    """
    g = rows.reshape(-1, k, 8)
    out = np.minimum(g[:, 0], g[:, 1])
    for j in range(2, k):
        np.minimum(out, g[:, j], out=out)
    return out


def as_query8(q6: np.ndarray) -> np.ndarray:
    """Query boxes [hi, -lo] (..., 6) -> (..., 8) rows for ``boxes_overlap``."""
    out = np.zeros(q6.shape[:-1] + (8,))
    out[..., :6] = q6
    return out


def round_down32(x: np.ndarray) -> np.ndarray:
    """float32 copy of ``x`` with every element <= the float64 value (outward for lower bounds)."""
    with np.errstate(over="ignore"):
        y = x.astype(np.float32)
    np.nextafter(y, _F32_NEG_INF, out=y, where=y > x)  # no mask gather/scatter
    return y


def round_up32(x: np.ndarray) -> np.ndarray:
    """float32 copy of ``x`` with every element >= min(x, float32 max) (queries' upper bounds).

    Clipping to the float32 range first (no overflow warnings) is still outward for the node
    test: raising a value keeps it an upper bound, and every stored (rounded-down) node bound
    is <= the float32 maximum or is +inf (an empty box). Casting rounds to nearest, so the next
    float32 up is >= the clipped value: 4 numpy calls, no mask.
    """
    y = np.maximum(np.minimum(x, _F32_BELOW_MAX), -_F32_MAX).astype(np.float32)
    return np.nextafter(y, _F32_INF, out=y)



class BVH:
    """Implicit Morton-ordered BVH over ``n`` axis-aligned boxes (usually triangle bounds).

    lo, hi : (n, 3) float64 box corners, metres.

    Attributes
    ----------
    order : (n_slots,) int64, triangle index in each leaf slot, -1 for padding.
    slot_box : (n_slots, 8) float64, the boxes in slot order (empty rows for padding); the
        final overlap test is done on these, in float64, so answers are exact.
    slot32 : (n_slots, 8) float32, ``slot_box`` rounded outward (``round_down32``).
    levels : list of (n_nodes_L, 8) float64 node boxes (recomputed on access, for tests and
        tools); ``levels[0]`` are the leaves, ``levels[-1]`` holds the single root.

    Traversal uses float32 copies of the node boxes rounded outward (``_lv32``; lower bounds
    rounded down, the stored ``-hi`` too) against query boxes rounded up: a node test can only
    keep more nodes than the float64 test, never fewer, and halves the bytes gathered.
    """

    def __init__(self, lo: np.ndarray, hi: np.ndarray):
        n = lo.shape[0]
        if n == 0:
            raise ValueError("a BVH needs at least one box")
        order = np.argsort(morton_codes(lo + hi), kind="stable")
        n_leaves = -(-n // BVH_LEAF_SIZE)
        n_leaves = -(-n_leaves // BVH_FANOUT) * BVH_FANOUT if n_leaves > 1 else 1
        n_slots = n_leaves * BVH_LEAF_SIZE
        slot_box = np.empty((n_slots, 8))
        slot_box[n:] = _empty_boxes(n_slots - n)
        np.take(lo, order, axis=0, out=slot_box[:n, :3])
        np.take(hi, order, axis=0, out=slot_box[:n, 3:6])
        np.negative(slot_box[:n, 3:6], out=slot_box[:n, 3:6])
        slot_box[:n, 6:] = -np.inf
        slots = np.empty(n_slots, dtype=np.int64)
        slots[:n] = order
        slots[n:] = -1
        del order
        self.order = slots
        self.slot_box = slot_box
        # float32 slot boxes rounded outward (+32 bytes a slot): the final test of
        # ``query_many_box6(..., exact=False)``, for callers whose exact tests follow anyway.
        self.slot32 = round_down32(slot_box)
        # rounding down is monotonic, so the min of rounded slots is the rounded min
        levels = [_group_min(self.slot32, BVH_LEAF_SIZE)]
        while levels[-1].shape[0] > 1:
            prev = levels[-1]
            n_parent = prev.shape[0] // BVH_FANOUT
            parent = _group_min(prev, BVH_FANOUT)
            if n_parent > 1 and n_parent % BVH_FANOUT:
                pad = BVH_FANOUT - n_parent % BVH_FANOUT
                parent = np.concatenate([parent, _empty_boxes(pad).astype(np.float32)])
            levels.append(parent)
        self._lv32 = levels
        # Level tested exhaustively by single queries: the deepest one with few enough nodes.
        entry = len(levels) - 1
        while entry > 0 and levels[entry - 1].shape[0] <= BVH_ENTRY_NODES:
            entry -= 1
        self.entry_level = entry
        # Level batched queries start from (every query against all its nodes, broadcast).
        start = len(levels) - 1
        while start > 0 and levels[start - 1].shape[0] <= BVH_BATCH_START_NODES:
            start -= 1
        self.batch_start_level = start
        self._child = np.arange(BVH_FANOUT, dtype=np.int64)
        self._slot = np.arange(BVH_LEAF_SIZE, dtype=np.int64)

    @property
    def levels(self) -> list[np.ndarray]:
        """Exact float64 node boxes per level, recomputed from ``slot_box`` (not for queries)."""
        levels = [_group_min(self.slot_box, BVH_LEAF_SIZE)]
        while levels[-1].shape[0] > 1:
            n_parent = levels[-1].shape[0] // BVH_FANOUT
            parent = _group_min(levels[-1], BVH_FANOUT)
            if n_parent > 1 and n_parent % BVH_FANOUT:
                parent = np.concatenate([parent, _empty_boxes(BVH_FANOUT - n_parent % BVH_FANOUT)])
            levels.append(parent)
        return levels

    # ------------------------------------------------------------------ single query
    def query_box6(self, q6: np.ndarray) -> np.ndarray:
        """Indices (unsorted, unique) of boxes overlapping one query ``q6 = [hi, -lo]`` (6,)."""
        return self.query_box8(as_query8(q6))

    def query_box8(self, q8: np.ndarray) -> np.ndarray:
        """As ``query_box6`` for a prepared (8,) float64 query row (``as_query8``).

        numpy calls: 3 to round the query to float32, 4 at the entry level, then per level 4
        (one surviving node) or 7, and 4 or 7 for the leaves' float64 slots plus 1 gather.
        """
        q32 = round_up32(q8)
        lv = self._lv32
        level = self.entry_level
        nodes = np.flatnonzero(boxes_overlap(lv[level], q32))
        F, S = BVH_FANOUT, BVH_LEAF_SIZE
        while level > 0 and nodes.size:
            level -= 1
            if nodes.size == 1:
                base = int(nodes[0]) * F
                nodes = np.flatnonzero(boxes_overlap(lv[level][base:base + F], q32)) + base
            else:
                ch = (nodes[:, None] * F + self._child).ravel()
                nodes = ch[boxes_overlap(lv[level].take(ch, axis=0), q32)]
        if not nodes.size:
            return nodes
        if nodes.size == 1:
            base = int(nodes[0]) * S
            hit = np.flatnonzero(boxes_overlap(self.slot_box[base:base + S], q8))
            return self.order[hit + base]
        slots = (nodes[:, None] * S + self._slot).ravel()
        return self.order[slots[boxes_overlap(self.slot_box.take(slots, axis=0), q8)]]

    # ------------------------------------------------------------------ batched queries
    def query_many_box6(
        self, q6: np.ndarray, exact: bool = True
    ) -> tuple[np.ndarray, np.ndarray]:
        """All overlapping (query, box) pairs for query boxes ``q6`` (Q, 6) = [hi, -lo].

        Returns ``(query, box)`` int64 arrays of equal length, ordered by query. With
        ``exact=False`` the final test uses the float32 outward-rounded slot boxes (half the
        bytes): a superset of the exact pairs, larger only by boxes within float32 rounding
        of the query, for callers that decide every pair exactly afterwards.
        """
        q8 = as_query8(q6)
        nq = q8.shape[0]
        out_q, out_b = [], []
        for start in range(0, nq, BVH_QUERY_CHUNK):
            stop = min(nq, start + BVH_QUERY_CHUNK)
            qi, bi = self._query_chunk(q8[start:stop], exact)
            out_q.append(qi + start)
            out_b.append(bi)
        if not out_q:
            return np.empty(0, np.int64), np.empty(0, np.int64)
        if len(out_q) == 1:
            return out_q[0], out_b[0]
        return np.concatenate(out_q), np.concatenate(out_b)

    def query_many_slots(self, q6: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """As ``query_many_box6(q6, exact=False)``, returning leaf slots instead of boxes.

        ``order[slot]`` is the box (triangle) index and ``slot32[slot]`` its float32 outward
        box: callers that cache a neighbourhood and test it again later (``TriangleMesh``'s
        hoods) keep both. Pairs are ordered by query.
        """
        q8 = as_query8(q6)
        nq = q8.shape[0]
        out_q, out_s = [], []
        for start in range(0, nq, BVH_QUERY_CHUNK):
            stop = min(nq, start + BVH_QUERY_CHUNK)
            qi, si = self._query_chunk(q8[start:stop], False, slots=True)
            out_q.append(qi + start)
            out_s.append(si)
        if not out_q:
            return np.empty(0, np.int64), np.empty(0, np.int64)
        return np.concatenate(out_q), np.concatenate(out_s)

    def region_candidates(self, q6: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Candidates of region boxes ``q6`` (H, 6) = [hi, -lo], ordered by region:
        (region (n,) int64, box index (n,) int64, float32 outward box (n, 8)), a superset of
        the boxes overlapping each region (``query_many_slots``): what a ``Hood`` caches."""
        qi, slot = self.query_many_slots(q6)
        return qi, self.order.take(slot), np.take(self.slot32, slot, axis=0)

    def _query_chunk(self, q8: np.ndarray, exact: bool = True,
                     slots: bool = False) -> tuple[np.ndarray, np.ndarray]:
        # Children of a node are contiguous rows: gather them as one (n, F, 8) block per
        # frontier pair and test against the query box broadcast over the F children.
        lv = self._lv32
        q32 = round_up32(q8)
        level = self.batch_start_level
        qi, nodes = np.nonzero(boxes_overlap(lv[level][None, :, :], q32[:, None, :]))
        F, S = BVH_FANOUT, BVH_LEAF_SIZE
        while level > 0 and qi.size:
            level -= 1
            blocks = lv[level].reshape(-1, F, 8).take(nodes, axis=0)
            pair, child = np.nonzero(boxes_overlap(blocks, q32.take(qi, axis=0)[:, None, :]))
            nodes = nodes.take(pair) * F + child
            qi = qi.take(pair)
        if exact:
            blocks = self.slot_box.reshape(-1, S, 8).take(nodes, axis=0)
            pair, slot = np.nonzero(boxes_overlap(blocks, q8.take(qi, axis=0)[:, None, :]))
        else:
            blocks = self.slot32.reshape(-1, S, 8).take(nodes, axis=0)
            pair, slot = np.nonzero(boxes_overlap(blocks, q32.take(qi, axis=0)[:, None, :]))
        if slots:
            return qi.take(pair), nodes.take(pair) * S + slot
        return qi.take(pair), self.order.take(nodes.take(pair) * S + slot)


class MaskedBVH:
    """A ``BVH`` whose queries skip the boxes where ``live`` (n,) bool is False.

    The hierarchy of a mesh some of whose triangles were removed (``core.mesh.patched``):
    every query answers as the wrapped one, minus the hidden boxes, in the same order (a
    filter, no rebuild). Only the query methods the mesh's queries use.
    """

    def __init__(self, bvh, live: np.ndarray):
        self.bvh = bvh
        self.live = live

    def query_box6(self, q6: np.ndarray) -> np.ndarray:
        return self.query_box8(as_query8(q6))

    def query_box8(self, q8: np.ndarray) -> np.ndarray:
        idx = self.bvh.query_box8(q8)
        return idx[self.live[idx]]

    def query_many_box6(self, q6: np.ndarray, exact: bool = True):
        qi, bi = self.bvh.query_many_box6(q6, exact)
        keep = self.live[bi]
        return qi[keep], bi[keep]

    def region_candidates(self, q6: np.ndarray):
        qi, bi, box = self.bvh.region_candidates(q6)
        keep = self.live[bi]
        return qi[keep], bi[keep], box[keep]
