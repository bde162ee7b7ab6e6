"""Candidate triangles kept around each character across frames (``walkthrough_many``).

A character's region is a box around where its next frames can sweep; the mesh's hierarchy
is queried again only when a frame's reach leaves it. The batch's sweeps take their
candidates from the cached regions (``Hood``, core.mesh); answers never depend on the cache.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ..constants import HOOD_MARGIN


class Hood(NamedTuple):
    """Cached candidate triangles of H regions ("neighbourhoods"), for callers that query
    around the same places again and again (a walk-through's characters, frame after frame).

    lo, hi : (H, 3) float64 region boxes, metres; off, cnt : (H,) int64, region h's
    triangles are ``tri[off[h]:off[h] + cnt[h]]``; tri : (n,) int64 triangle indices, every
    triangle whose box overlaps the region (a superset: float32 outward boxes); box : (n, 8)
    float32 those triangles' outward-rounded boxes (``BVH.slot32`` rows). Built by
    ``TriangleMesh.hood_triangles``; queries that pass ``hood`` with an ``owner`` per query
    take their candidates from the owner's region when their box lies inside it, and from
    the hierarchy otherwise, so answers never depend on the hood.
    """

    lo: np.ndarray
    hi: np.ndarray
    off: np.ndarray
    cnt: np.ndarray
    tri: np.ndarray
    box: np.ndarray


class HoodCache:
    """Candidate triangles around each of N characters, kept across frames (walkthrough_many).

    A character's region is the reach box of its frame (``CharacterController.reach_box``)
    grown by HOOD_MARGIN metres on every side; it is queried from the mesh's hierarchy again
    only when a frame's reach box leaves it (every few frames at walking speed), and the
    batch's sweeps take their candidates from it (the mesh's batched sweep with ``hood``).
    One pool of candidate rows, appended to in place as regions are renewed; when full, its
    live rows are compacted into a pool twice their size.
    """

    def __init__(self, mesh, n, margin=HOOD_MARGIN):
        self.mesh = mesh
        self.margin = margin
        self.lo = np.full((n, 3), np.inf)
        self.hi = np.full((n, 3), -np.inf)
        self.off = np.zeros(n, np.int64)
        self.cnt = np.zeros(n, np.int64)
        self.used = 0  # pool rows in use (live or stale); capacity is tri.size
        self.tri = np.empty(65536, np.int64)
        self.box = np.empty((65536, 8), np.float32)

    def hood(self, agents, lo, hi) -> Hood:
        """The Hood over all N characters, with ``agents``' regions covering lo, hi."""
        stale = ~((lo >= self.lo[agents]).all(1) & (hi <= self.hi[agents]).all(1))
        if stale.any():
            s = agents[stale]
            nlo = lo[stale] - self.margin
            nhi = hi[stale] + self.margin
            cnt, tri, box = self.mesh.hood_triangles(nlo, nhi)
            self.cnt[s] = 0
            add = tri.size
            if self.used + add > self.tri.size:  # full: compact the live rows, then grow
                live = int(self.cnt.sum())
                pos = np.repeat(self.off - np.cumsum(self.cnt) + self.cnt, self.cnt)
                pos += np.arange(live)
                cap = max(self.tri.size, 2 * (live + add))
                tri_new = np.empty(cap, np.int64)
                box_new = np.empty((cap, 8), np.float32)
                np.take(self.tri, pos, out=tri_new[:live])
                np.take(self.box, pos, axis=0, out=box_new[:live])
                self.tri, self.box = tri_new, box_new
                self.off = np.cumsum(self.cnt) - self.cnt
                self.used = live
            self.lo[s] = nlo
            self.hi[s] = nhi
            self.off[s] = self.used + np.cumsum(cnt) - cnt
            self.cnt[s] = cnt
            self.tri[self.used:self.used + add] = tri
            self.box[self.used:self.used + add] = box
            self.used += add
        return Hood(self.lo, self.hi, self.off, self.cnt, self.tri, self.box)
