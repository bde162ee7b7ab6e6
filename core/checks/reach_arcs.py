"""Walk-offs and jumps, flown by the character controller itself.

Where the map's links (core/reach_links.py) find no move in a direction from a reachable
node, the controller (``CharacterController.move_many``, all arcs in lock-step, one batched
move per frame) tries it:

- *walk-off* (at edges: no floor within ``step_height`` ahead): the character walks off at
  ``speed`` and keeps steering that way while it falls, slides down steep faces, until it
  stands on walkable ground again (a fall from a high ledge lands farther out than the
  straight drop the links sweep, as a running character does).
- *jump* (``settings.jump_height > 0``; at edges and in front of obstacles): the take-off
  speed ``sqrt(2 g jump_height)`` straight up plus ``speed`` horizontally, steering that way
  until it lands: up onto ledges (sliding up the wall while the arc rises) and across gaps.

Each frame is the walk-through's frame (core/walk/walker.py: ``FrameMove``, ``held``), at
the walk-through's default rate, so an arc is what a walk of the same move does. Vertical
speed follows the walk-through's rule: gravity while airborne,
capped at ``max_fall_speed``, never gaining upward speed from a collision; ``ON_GROUND``
ends the arc. An arc that is still airborne, or has not left the ground, after ARC_MAX_TIME
seconds lands nowhere; a walk-off still on the ground after WALKOFF_MAX_CELLS cells of
walking ends there (standing on walkable ground: it crossed without falling).

An arc *below the level* ends at once, with the outcome ARC_MAX_TIME would give: in the
air, not rising, the top of its capsule below the mesh's lowest vertex, nothing is left to
touch (it only falls), so it never lands (its foot is where it was given up: the foot of
an arc that did not land is never read).

Frame and units: world space, metres, seconds; ``settings.up`` is up.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from ..controller.ground import Ground
from ..controller.moves import RefusedStep
from ..controller.settings import IN_AIR, ON_GROUND, ON_STEEP_GROUND
from ..mesh.hoods import HoodCache
from ..walk.edges import FrameMove, held
from ..walk.shares import check_workers, run_shares

# Seconds per controller frame: the walk-through's default, so that an arc lands where a walk
# of the same move does at the limits (issue 24: at 30 Hz a walk-off across a 0.84 m gap
# caught the far edge that a walk at 60 Hz misses). A jump's apex overshoots the exact
# parabola by about g * t_apex * dt / 2 (1.4 cm for a 1 m jump): the arc is the controller's.
ARC_DT = 1.0 / 60.0
ARC_MAX_TIME = 4.0  # seconds: an arc not landed by then (a 78 m fall) lands nowhere
# Arcs a round must fly before ``fly_shared`` forks for them (a fork of a big process costs
# milliseconds; a round of this many arcs flies for a second or more)
FORK_MIN_ARCS = 256
WALKOFF_MAX_CELLS = 4  # a walk-off that stays on the ground this many cells did not fall


class Arcs(NamedTuple):
    """End of K arcs: foot (K, 3) where each ended (or, not landed, was given up); landed
    (K,) bool standing on walkable ground after leaving it; frames int, controller frames
    flown (the longest arc)."""

    foot: np.ndarray
    landed: np.ndarray
    frames: int


def take_off_speed(settings) -> float:
    """Metres / second straight up at take-off: sqrt(2 g jump_height)."""
    return math.sqrt(2.0 * settings.gravity * settings.jump_height)


def lowest_foot(ctrl) -> float:
    """Metres along up: a foot below this height has the top of its capsule below every
    vertex of ``ctrl.mesh`` (an arc there in the air and not rising never lands)."""
    return float((ctrl.mesh.vertices @ ctrl.settings.up_vector).min()) - ctrl.settings.height


def fly(ctrl, feet, directions, v0, max_walk) -> Arcs:
    """Fly K arcs with the controller ``ctrl`` from ``feet`` (K, 3), steering along unit
    horizontal ``directions`` (K, 3) at ``settings.speed``, with take-off speed ``v0`` m/s
    up, a float or (K,) per arc (0: a walk-off; walk-offs and jumps fly in one lock-step
    batch: one tail of frames with few arcs left, not two); ``max_walk`` metres on the
    ground before a walk-off gives up.

    Arcs with the same foot, direction and ``v0`` bit for bit are flown once (two spans of
    a map can share a floor point: 806 of delta's 13,605 arcs): an arc is a function of its
    foot, direction, ``v0`` and ``max_walk`` alone (every query of a frame is row by row;
    the hood cache changes no answer), not of the batch it flies in."""
    k = feet.shape[0]
    speed = np.broadcast_to(np.asarray(v0, float), (k,))
    rows = np.ascontiguousarray(np.concatenate([feet, directions, speed[:, None]], axis=1))
    _u, first, again = np.unique(rows.view(np.dtype((np.void, rows.itemsize * 7))).ravel(),
                                 return_index=True, return_inverse=True)
    if first.size == k:
        return _fly(ctrl, feet, directions, speed, max_walk)
    arcs = _fly(ctrl, feet[first], directions[first], speed[first], max_walk)
    return Arcs(arcs.foot[again.ravel()], arcs.landed[again.ravel()], arcs.frames)


def _fly(ctrl, feet, directions, v0, max_walk) -> Arcs:
    """``fly`` of K arcs, each flown; ``v0`` (K,)."""
    s = ctrl.settings
    u = s.up_vector
    k = feet.shape[0]
    settle = ctrl.move_many(feet, np.zeros((k, 3)), Ground.unknown(k))
    pos = settle.position.copy()
    ground = Ground(*(x.copy() for x in settle.ground))
    vz = np.array(v0, float)
    left = np.zeros(k, bool)  # has been airborne
    landed = np.zeros(k, bool)
    done = np.zeros(k, bool)
    walked = np.zeros(k)
    refused = RefusedStep.none(k)
    frames = 0
    # candidate triangles around each arc, kept across frames (as walkthrough_many does)
    hoods = HoodCache(ctrl.mesh, k) if k > 1 and hasattr(ctrl.mesh, "hood_triangles") else None
    low = lowest_foot(ctrl)
    for frame in range(int(math.ceil(ARC_MAX_TIME / ARC_DT))):
        act = np.flatnonzero(~done)
        if not act.size:
            break
        frames = frame + 1
        g_a = ground.rows(act)
        vz_a = vz[act] if frame == 0 else np.where(
            g_a.state == ON_GROUND, 0.0, np.maximum(vz[act] - s.gravity * ARC_DT,
                                                    -s.max_fall_speed))
        disp = directions[act] * (s.speed * ARC_DT) + np.outer(vz_a * ARC_DT, u)
        # the walk's own frame (core/walk/walker.py): edges left at the support line,
        # refused step-ups not retried, a character caught between edges held there
        b, rise = FrameMove(ctrl, hoods, act, ARC_DT).run(pos[act], disp, g_a,
                                                          refused.rows(act))
        refused.put(act, b.refused)
        moved = b.position - pos[act]
        held(ctrl, b.position, b.ground, -(moved @ u), -vz_a * ARC_DT)
        st = b.ground.state
        steep = vz_a if s.slides_on_steep_ground else 0.0
        vz[act] = np.where(st == ON_GROUND, 0.0, np.where(
            st == ON_STEEP_GROUND, steep, np.minimum(rise, np.maximum(vz_a, 0.0))))
        pos[act] = b.position
        ground.put(act, b.ground)
        left[act] |= st == IN_AIR
        walked[act] += np.where(left[act], 0.0, s.speed * ARC_DT)
        land = left[act] & (st == ON_GROUND) & (vz_a <= 0.0)
        # a walk-off that walked ``max_walk`` without leaving the ground ends where it
        # stands (across a gap narrower than the capsule, stepping onto the far side)
        walked_on = ~left[act] & (walked[act] >= max_walk)
        landed[act[land | (walked_on & (st == ON_GROUND))]] = True
        gone = (st == IN_AIR) & (vz[act] <= 0.0) & (pos[act] @ u < low)  # below the level
        done[act[land | walked_on | gone]] = True
    return Arcs(pos, landed, frames)


def arc_keys(smap, nodes, dirs, jump) -> np.ndarray:
    """(K,) int64 keys naming the arcs from map spans ``nodes`` (K,) in directions ``dirs``
    (K,) (cell, face, direction, ``jump`` bool or (K,) bool, else a walk-off): the same arc
    in any map of the level."""
    faces = int(smap.classes.size)
    return ((smap.cell[nodes] * faces + smap.face[nodes]) * 4 + dirs) * 2 + \
        np.asarray(jump, np.int64)


def fly_shared(ctrl, feet, directions, v0, max_walk, workers: int = 1) -> Arcs:
    """``fly`` with the arcs dealt among ``workers`` processes (``core.walk.shares``:
    children forked from this one) when there are at least FORK_MIN_ARCS of them: the same
    answers, since an arc lands where it lands in any batch."""
    k = feet.shape[0]
    v0 = np.broadcast_to(np.asarray(v0, float), (k,))
    if workers < 2 or k < FORK_MIN_ARCS:
        return fly(ctrl, feet, directions, v0, max_walk)
    shares, got = run_shares(lambda idx: fly(ctrl, feet[idx], directions[idx], v0[idx],
                                             max_walk), k, workers, "reachability's arcs")
    foot, landed = np.empty((k, 3)), np.empty(k, bool)
    for idx, arcs in zip(shares, got):
        foot[idx], landed[idx] = arcs.foot, arcs.landed
    return Arcs(foot, landed, max(a.frames for a in got))


class ArcCache:
    """Arcs flown so far, by ``arc_keys``: a flood over a growing map flies each arc once,
    its new arcs shared among ``workers`` processes (``fly_shared``)."""

    def __init__(self, workers: int = 1):
        self.workers = check_workers(workers)
        self.keys = np.empty(0, np.int64)
        self.foot = np.empty((0, 3))
        self.landed = np.empty(0, bool)

    def fly(self, keys, ctrl, feet, directions, v0, max_walk) -> Arcs:
        """``fly`` for the arcs ``keys`` (K,) not flown yet; the others as flown before."""
        pos = np.minimum(np.searchsorted(self.keys, keys), max(self.keys.size - 1, 0))
        hit = (self.keys.size > 0) & (self.keys[pos] == keys) if self.keys.size else \
            np.zeros(keys.size, bool)
        foot = np.empty((keys.size, 3))
        landed = np.empty(keys.size, bool)
        foot[hit], landed[hit] = self.foot[pos[hit]], self.landed[pos[hit]]
        frames = 0
        miss = np.flatnonzero(~hit)
        if miss.size:
            speed = np.broadcast_to(np.asarray(v0, float), (keys.size,))[miss]
            arcs = fly_shared(ctrl, feet[miss], directions[miss], speed, max_walk,
                              self.workers)
            foot[miss], landed[miss], frames = arcs.foot, arcs.landed, arcs.frames
            keys_all = np.concatenate([self.keys, keys[miss]])
            order = np.argsort(keys_all, kind="stable")
            self.keys = keys_all[order]
            self.foot = np.concatenate([self.foot, arcs.foot])[order]
            self.landed = np.concatenate([self.landed, arcs.landed])[order]
        return Arcs(foot, landed, frames)
