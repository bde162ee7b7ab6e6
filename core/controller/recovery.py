"""Penetration recovery: push capsules that start a sweep inside the mesh back out.

Each round queries every capsule still in contact (one batched call, the capsule grown by
half the skin) and solves the deepest contacts' planes (core.planes.solve_planes, Box2D
``b2SolvePlanes``). Frame and units: world space, metres; ``queries`` is the
``CharacterController`` whose counted mesh queries are used.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ..constants import (
    DEPENETRATION_MAX_CONTACTS,
    DEPENETRATION_STALL_RATIO,
    DEPENETRATION_STALL_ROUNDS,
)
from .planes import solve_planes

_TRUE1 = np.ones(1, dtype=bool)


class Depenetration(NamedTuple):
    """Result of ``depenetrate``: feet (K, 3) pushed out; pushed (K,) metres; trapped (K,)
    bool, given up (does not fit where it is); rounds int, contact queries used."""

    feet: np.ndarray
    pushed: np.ndarray
    trapped: np.ndarray
    rounds: int


def depenetrate(queries, pos) -> Depenetration:
    """Push capsules at feet ``pos`` (K, 3) out of the mesh to a gap of skin/2.

    Plane solver (``solve_planes`` over the deepest DEPENETRATION_MAX_CONTACTS contacts
    of each capsule), re-queried up to max_iterations rounds, all capsules still in
    contact in one batched query per round. Give-up rule: a capsule whose deepest
    contact fails DEPENETRATION_STALL_ROUNDS times in a row to get shallower (by the
    factor DEPENETRATION_STALL_RATIO) cannot be pushed out (it does not fit where it is,
    e.g. between walls closer than its diameter: the pushes ping-pong) and is trapped.
    """
    s = queries.settings
    out = pos.copy()
    pushed = np.zeros(len(pos))
    trapped = np.zeros(len(pos), bool)
    live = np.arange(len(pos))
    prev = np.full(len(pos), np.inf)  # deepest contact of the previous round
    strikes = np.zeros(len(pos), np.int64)
    rounds = 0
    for _ in range(s.max_iterations):
        if not live.size:
            break
        rounds += 1
        cb = queries.contacts(out[live], s.shape_radius + 0.5 * s.contact_gap)
        if not cb.query.size:
            break
        q = cb.query
        # deepest contact of each capsule (contacts come sorted by query, depth)
        first = np.concatenate((_TRUE1, q[1:] != q[:-1]))
        qa = live[q[first]]
        deepest = cb.depth[first]
        # a stall: still really penetrating (deeper than the skin/2 query margin) and
        # not clearly shallower than the previous round
        stall = (deepest > DEPENETRATION_STALL_RATIO * prev[qa]) & (
            deepest > 0.5 * s.contact_gap)
        strikes[qa] = np.where(stall, strikes[qa] + 1, 0)
        prev[qa] = deepest
        depth, nrm = cb.depth, cb.normal
        if stall.any() and (strikes[qa] >= DEPENETRATION_STALL_ROUNDS).any():
            trapped[qa[strikes[qa] >= DEPENETRATION_STALL_ROUNDS]] = True
            keep_c = ~trapped[live[q]]
            if not keep_c.any():
                break
            stay = ~trapped[live]
            q = np.cumsum(stay)[q[keep_c]] - 1  # renumber into the remaining capsules
            live = live[stay]
            depth, nrm = depth[keep_c], nrm[keep_c]
        planes_n, planes_d, q = _deepest_planes(q, depth, nrm, live.size)
        sol = solve_planes(planes_n, planes_d)
        out[live] += sol.push
        pushed[live] += sol.length
        live = live[np.unique(q)]
    return Depenetration(out, pushed, trapped, rounds)


def _deepest_planes(q, depth, normal, n_live):
    """Contact planes (n_live, DEPENETRATION_MAX_CONTACTS, 3 | -) of each capsule's deepest
    contacts (contacts sorted by query q, then depth), and the queries kept."""
    kmax = DEPENETRATION_MAX_CONTACTS
    rank = np.arange(q.size) - np.searchsorted(q, q, side="left")
    keep = rank < kmax
    q, rank = q[keep], rank[keep]
    d = np.zeros((n_live, kmax))
    nrm = np.zeros((n_live, kmax, 3))
    d[q, rank] = depth[keep]
    nrm[q, rank] = normal[keep]
    return nrm, d, q
