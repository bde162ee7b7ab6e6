"""Bounding volume hierarchy over triangle AABBs, built and traversed with numpy only.

The hierarchy is *implicit*: triangles are sorted by the Morton code of their AABB centres
(Karras 2012's ordering), cut into leaves of ``BVH_LEAF_SIZE`` consecutive triangles, and every
level above groups ``BVH_FANOUT`` consecutive nodes. Children of node ``i`` at level ``L`` are
``i*F .. i*F+F-1`` at level ``L-1``; no pointers are stored. Each level is padded to a multiple
of the fan-out with *empty* boxes (``+inf`` everywhere), which never overlap a query.

Boxes are stored as ``(n, 8)`` float64 rows ``[lo_x, lo_y, lo_z, -hi_x, -hi_y, -hi_z, -inf,
-inf]`` so that an overlap test against a query box ``q8 = [hi_q, -lo_q, 0, 0]`` is one
comparison ``box8 <= q8`` whose 8 bool bytes per row are read as one uint64 and compared with
``ALL_TRUE`` (closed intervals: touching boxes overlap). Public methods take ``q6 = [hi, -lo]``.

Build: one Morton sort plus one reshape-and-reduce per level; no Python loop per node or per
triangle. Traversal: one loop per level, over frontier arrays of (query, node) pairs.
"""

from __future__ import annotations

import numpy as np

BVH_LEAF_SIZE = 8  # triangles per leaf (fixed; padded with empty slots)
BVH_FANOUT = 8  # children per inner node
# Largest number of nodes at the level a single query tests exhaustively before descending:
# a contiguous (n, 6) compare on ~2k rows costs about as much as three traversal levels.
BVH_ENTRY_NODES = 2048
# Queries per chunk in batched traversal: bounds the frontier temporaries (~100 MB at worst).
BVH_QUERY_CHUNK = 4096


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


def _overlap(box8: np.ndarray, q8: np.ndarray) -> np.ndarray:
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
    """Query boxes [hi, -lo] (..., 6) -> (..., 8) rows for ``_overlap``."""
    out = np.zeros(q6.shape[:-1] + (8,))
    out[..., :6] = q6
    return out


class BVH:
    """Implicit Morton-ordered BVH over ``n`` axis-aligned boxes (usually triangle bounds).

    lo, hi : (n, 3) float64 box corners, metres.

    Attributes
    ----------
    order : (n_slots,) int64, triangle index in each leaf slot, -1 for padding.
    slot_box : (n_slots, 8) float64, the boxes in slot order (empty rows for padding).
    levels : list of (n_nodes_L, 8) float64 node boxes; ``levels[0]`` are the leaves,
        ``levels[-1]`` holds the single root.
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
        slot_box[:n, :3] = lo[order]
        np.negative(hi[order], out=slot_box[:n, 3:6])
        slot_box[:n, 6:] = -np.inf
        slots = np.empty(n_slots, dtype=np.int64)
        slots[:n] = order
        slots[n:] = -1
        self.order = slots
        self.slot_box = slot_box
        self.n_boxes = n
        levels = [_group_min(slot_box, BVH_LEAF_SIZE)]
        while levels[-1].shape[0] > 1:
            prev = levels[-1]
            n_parent = prev.shape[0] // BVH_FANOUT
            parent = _group_min(prev, BVH_FANOUT)
            if n_parent > 1 and n_parent % BVH_FANOUT:
                pad = BVH_FANOUT - n_parent % BVH_FANOUT
                parent = np.concatenate([parent, _empty_boxes(pad)])
            levels.append(parent)
        self.levels = levels
        # Level tested exhaustively by single queries: the deepest one with few enough nodes.
        entry = len(levels) - 1
        while entry > 0 and levels[entry - 1].shape[0] <= BVH_ENTRY_NODES:
            entry -= 1
        self.entry_level = entry
        self._child = np.arange(BVH_FANOUT, dtype=np.int64)
        self._slot = np.arange(BVH_LEAF_SIZE, dtype=np.int64)

    # ------------------------------------------------------------------ single query
    def query_box6(self, q6: np.ndarray) -> np.ndarray:
        """Indices (unsorted, unique) of boxes overlapping one query ``q6 = [hi, -lo]`` (6,)."""
        return self.query_box8(as_query8(q6))

    def query_box8(self, q8: np.ndarray) -> np.ndarray:
        """As ``query_box6`` for a prepared (8,) query row (``as_query8``).

        numpy calls: 4 at the entry level, then per level 4 (one surviving node) or 8,
        and the same for the leaves' triangle slots.
        """
        lv = self.levels
        level = self.entry_level
        nodes = np.flatnonzero(_overlap(lv[level], q8))
        F, S = BVH_FANOUT, BVH_LEAF_SIZE
        while level > 0 and nodes.size:
            level -= 1
            if nodes.size == 1:
                base = int(nodes[0]) * F
                nodes = np.flatnonzero(_overlap(lv[level][base:base + F], q8)) + base
            else:
                ch = (nodes[:, None] * F + self._child).ravel()
                nodes = ch[_overlap(lv[level][ch], q8)]
        if not nodes.size:
            return nodes
        if nodes.size == 1:
            base = int(nodes[0]) * S
            return self.order[np.flatnonzero(_overlap(self.slot_box[base:base + S], q8)) + base]
        slots = (nodes[:, None] * S + self._slot).ravel()
        return self.order[slots[_overlap(self.slot_box[slots], q8)]]

    # ------------------------------------------------------------------ batched queries
    def query_many_box6(self, q6: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """All overlapping (query, box) pairs for query boxes ``q6`` (Q, 6) = [hi, -lo].

        Returns ``(query, box)`` int64 arrays of equal length, ordered by query.
        """
        q8 = as_query8(q6)
        nq = q8.shape[0]
        out_q, out_b = [], []
        for start in range(0, nq, BVH_QUERY_CHUNK):
            stop = min(nq, start + BVH_QUERY_CHUNK)
            qi, bi = self._query_chunk(q8[start:stop])
            out_q.append(qi + start)
            out_b.append(bi)
        if not out_q:
            return np.empty(0, np.int64), np.empty(0, np.int64)
        return np.concatenate(out_q), np.concatenate(out_b)

    def _query_chunk(self, q8: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        # Children of a node are contiguous rows: gather them as one (n, F, 8) block per
        # frontier pair and test against the query box broadcast over the F children.
        lv = self.levels
        level = len(lv) - 1
        qi = np.flatnonzero(_overlap(lv[level][0], q8))
        nodes = np.zeros(qi.shape[0], dtype=np.int64)
        F, S = BVH_FANOUT, BVH_LEAF_SIZE
        while level > 0 and qi.size:
            level -= 1
            blocks = lv[level].reshape(-1, F, 8)[nodes]
            pair, child = np.nonzero(_overlap(blocks, q8[qi][:, None, :]))
            nodes = nodes[pair] * F + child
            qi = qi[pair]
        blocks = self.slot_box.reshape(-1, S, 8)[nodes]
        pair, slot = np.nonzero(_overlap(blocks, q8[qi][:, None, :]))
        return qi[pair], self.order[nodes[pair] * S + slot]
