"""The flood of reachability over its graph of moves: components joined by the moves that go
both ways, and what the spawns reach (and what gets back to them) over the one-way moves
between components (core/checks/reachability.py builds the moves and reads the answer).

Arrays only, no loop over nodes: components by ``audits.common.components``; the one-way
moves condensed to distinct component pairs, flooded in array rounds (one per link of the
longest chain of one-way moves).
"""

from __future__ import annotations

import numpy as np

from .audits.common import components
from .reach_links import WALK, Links


def mutual_components(n: int, links: Links) -> np.ndarray:
    """(n,) int64 component of every span over the moves that go both ways: walks (two free
    neighbouring cells within a slope's rise of each other: walking is symmetric) and the
    other moves present both ways (a step up and the step down back)."""
    walk = links.kind == WALK
    # the walks one way round (src < dst) first: a walk and its walk back join the same two
    # nodes, so the walks the other way round join only the few pairs not already joined
    # (half the millions of walks of open floor through the components' passes); then the
    # few other moves present both ways (mutual_components_grown)
    up = walk & (links.src < links.dst)
    comp = components(n, links.src[up], links.dst[up])
    down = np.flatnonzero(walk & ~up)
    a, b = links.src[down], links.dst[down]
    apart = comp[a] != comp[b]
    return mutual_components_grown(merge_components(comp, a[apart], b[apart]), links)


def merge_components(comp: np.ndarray, a, b) -> np.ndarray:
    """``comp`` (N,) component labels (each the smallest member) with the components of
    nodes ``a`` and ``b`` (E,) joined (components of the few labels touched, then one
    relabelling); labels stay the smallest member."""
    if not a.size:
        return comp
    touched, inv = np.unique(np.concatenate([comp[a], comp[b]]), return_inverse=True)
    inv = inv.ravel()
    root = touched[components(touched.size, inv[:a.size], inv[a.size:])]
    relabel = np.arange(comp.size, dtype=np.int64)
    relabel[touched] = root
    return relabel[comp]


def mutual_components_grown(comp: np.ndarray, links: Links) -> np.ndarray:
    """``mutual_components(n, links)`` from ``comp``, the mutual components of moves that
    hold every walk of ``links`` (the flood's moves before its arcs): only the other moves
    present both ways are joined (a few, not the millions of walks of open floor)."""
    walk = links.kind == WALK
    a, b = links.src[~walk], links.dst[~walk]
    n = comp.size
    both = np.isin(b * n + a, a * n + b)
    return merge_components(comp, a[both], b[both])


def _flood(comp, a, b, seeds, n) -> np.ndarray:
    """(n,) bool by component label: the labels reached from ``seeds`` over the condensed
    edges a -> b (labels), in array rounds."""
    on = np.zeros(n, bool)
    on[comp[seeds]] = True
    for _ in range(n):  # at most one round per component (a chain of one-way moves)
        nxt = b[on[a] & ~on[b]]
        if not nxt.size:
            break
        on[nxt] = True
    return on


def one_way_pairs(comp, links: Links) -> np.ndarray:
    """(P, 2) int64 the distinct (from, to) component pairs (``comp`` labels) the moves
    ``links`` join, sorted; moves within a component are left out. ``comp`` joins the ends
    of every walk (``mutual_components`` or coarser), so the walks (most of the moves of
    open floor: 3.3 M of the arena's) are not looked at."""
    rows = np.flatnonzero(links.kind != WALK)
    ca, cb = comp[links.src[rows]], comp[links.dst[rows]]
    one = ca != cb
    return np.unique(np.stack([ca[one], cb[one]], 1), axis=0) if one.any() else \
        np.zeros((0, 2), np.int64)


def closure(comp, links: Links, seeds, n: int, pairs=None):
    """(reach, back) (n,) bool per span: reached from the spawn nodes ``seeds``; a spawn's
    node is reachable from it. Works on components (``mutual_components``) joined by the
    one-way moves (``pairs``: their ``one_way_pairs`` when already known)."""
    pairs = one_way_pairs(comp, links) if pairs is None else pairs
    fwd = _flood(comp, pairs[:, 0], pairs[:, 1], seeds, n)
    back = _flood(comp, pairs[:, 1], pairs[:, 0], seeds, n)
    return fwd[comp], back[comp]
