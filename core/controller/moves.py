"""Named results of the controller's phases and moves (plain data, core.controller).

Frame and units: world space, metres; N characters per batch.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from .ground import Ground, Probe
from .settings import GroundState
from .slide import Block


class MoveResult(NamedTuple):
    """Result of ``CharacterController.move``.

    position : (3,) foot position after the move, metres
    grounded : bool, ``ground_state == "on_ground"``
    ground_state : GroundState (a str: "on_ground" | "on_steep_ground" | "in_air")
    ground_normal : (3,) unit face normal of the supporting triangle (turned to face the
        character); zeros in the air
    hits : list[Hit], one per slide sweep that touched something; ``time`` is the fraction of
        that sweep's displacement, ``triangle`` the mesh triangle
    stepped : bool, the move climbed a step
    iterations : int, slide sweeps plus penetration-recovery rounds used (<= 2 x max_iterations)
    ground_triangle : int, supporting triangle, -1 in the air
    ground_distance : float, metres between the capsule and the floor below (inf in the air)
    depenetration : float, metres the capsule was pushed out of the mesh
    """

    position: np.ndarray
    grounded: bool
    ground_state: GroundState
    ground_normal: np.ndarray
    hits: list
    stepped: bool
    iterations: int
    ground_triangle: int = -1
    ground_distance: float = math.inf
    depenetration: float = 0.0


class MoveBatch(NamedTuple):
    """Result of ``CharacterController.move_many`` (N characters moved in lock-step).

    position : (N, 3) feet after the move; ground : Ground (core.ground) they end on;
    stepped : (N,) bool climbed a step; iterations : (N,) int slide sweeps + recovery rounds;
    depenetration : (N,) metres pushed out of the mesh; block : Block, the most opposing
    non-walkable obstacle the slide met (triangle -1: none); riser_rise, tread_rise : (N,)
    metres the step probe measured (nan: not probed); hits : [(character, Hit)] when logged;
    refused : RefusedStep to pass to the next move (None: no step-up tried).
    """

    position: np.ndarray
    ground: Ground
    stepped: np.ndarray
    iterations: np.ndarray
    depenetration: np.ndarray
    block: Block
    riser_rise: np.ndarray
    tread_rise: np.ndarray
    hits: list
    refused: RefusedStep | None = None

    def rows(self, sel) -> MoveBatch:
        """The moves of the characters ``sel`` (an index array, or a bool mask), renumbered
        0..K-1 (hits too)."""
        idx = np.arange(self.position.shape[0])[sel]
        new = np.full(self.position.shape[0], -1, np.int64)
        new[idx] = np.arange(idx.size)
        return MoveBatch(self.position[idx], self.ground.rows(idx), self.stepped[idx],
                         self.iterations[idx], self.depenetration[idx],
                         Block(*(x[idx] for x in self.block)), self.riser_rise[idx],
                         self.tread_rise[idx],
                         [(new[c], h) for c, h in self.hits if new[c] >= 0],
                         None if self.refused is None else self.refused.rows(idx))

    def then(self, rows, other: MoveBatch) -> MoveBatch:
        """This move of N characters followed, for ``rows`` (K,), by ``other`` (their next
        move, K rows): where they end and their ground are ``other``'s; steps, sweeps,
        recovery and hits add up; the obstacle and step measurements are ``other``'s where
        it met one; its refused step-ups are remembered."""
        ground = Ground(*(x.copy() for x in self.ground))
        ground.put(rows, other.ground)
        position = self.position.copy()
        position[rows] = other.position
        stepped = self.stepped.copy()
        stepped[rows] |= other.stepped
        iterations = self.iterations.copy()
        iterations[rows] += other.iterations
        depenetration = self.depenetration.copy()
        depenetration[rows] += other.depenetration
        met = other.block.triangle >= 0
        block = Block(*(x.copy() for x in self.block))
        for dst, src in zip(block, other.block):
            dst[rows[met]] = src[met]
        riser, tread = self.riser_rise.copy(), self.tread_rise.copy()
        for dst, src in ((riser, other.riser_rise), (tread, other.tread_rise)):
            probed = ~np.isnan(src)
            dst[rows[probed]] = src[probed]
        refused = self.refused
        if other.refused is not None or refused is not None:
            refused = RefusedStep.none(position.shape[0]) if refused is None else RefusedStep(
                *(x.copy() for x in refused))
            refused.put(rows, other.refused)
        hits = self.hits + [(rows[c], h) for c, h in other.hits]
        return MoveBatch(position, ground, stepped, iterations, depenetration, block, riser,
                         tread, hits, refused)


class FollowGround(NamedTuple):
    """Phase 1. displacement (N, 3) along the ground plane; direction (N, 3) unit horizontal
    direction of the input; length (N,) its horizontal length; follow (N,) bool, started on
    walkable ground and not moving up; snap_ok (N,) bool, may stick to the floor."""

    displacement: np.ndarray
    direction: np.ndarray
    length: np.ndarray
    follow: np.ndarray
    snap_ok: np.ndarray


class RefusedStep(NamedTuple):
    """Step-ups refused for N characters, remembered across moves until the character or
    the contact changes (``STEP_RETRY_MOVE``): triangle (N,) int64 the blocking triangle
    (-1: none); start, foot (N, 3) where the move started and where its slide ended; floor
    (N,) the floor height the step probe measured from; riser, tread (N,) metres measured."""

    triangle: np.ndarray
    start: np.ndarray
    foot: np.ndarray
    floor: np.ndarray
    riser: np.ndarray
    tread: np.ndarray

    @classmethod
    def none(cls, n: int) -> RefusedStep:
        return cls(np.full(n, -1, np.int64), np.zeros((n, 3)), np.zeros((n, 3)),
                   np.full(n, np.nan), np.full(n, np.nan), np.full(n, np.nan))

    def rows(self, sel) -> RefusedStep:
        return RefusedStep(*(x[sel] for x in self))

    def put(self, sel, other: RefusedStep | None) -> None:
        """Write ``other`` into rows ``sel`` in place (None: nothing refused there)."""
        if other is None:
            self.triangle[sel] = -1
            return
        for dst, src in zip(self, other):
            dst[sel] = src


class StepUp(NamedTuple):
    """Phase 3. feet (N, 3) after the step (unchanged where none); stepped (N,) bool; riser,
    tread (N,) metres measured by the step probe (nan: not probed); probe: ground probe with
    the landings' rows; refused: RefusedStep of this move (None: no step-up was tried)."""

    feet: np.ndarray
    stepped: np.ndarray
    riser: np.ndarray
    tread: np.ndarray
    probe: Probe
    refused: RefusedStep | None = None


class Floor(NamedTuple):
    """Phase 4. feet (N, 3) after snapping down; probe: the ground probe at those feet;
    depenetration (N,) metres pushed out while probing."""

    feet: np.ndarray
    probe: Probe
    depenetration: np.ndarray


class Climb(NamedTuple):
    """Accepted step landings: rows (A,) characters; feet (A, 3); gap (A,) metres above the
    landing; normal (A, 3), triangle (A,), point (A, 3) of the landing contact."""

    rows: np.ndarray
    feet: np.ndarray
    gap: np.ndarray
    normal: np.ndarray
    triangle: np.ndarray
    point: np.ndarray
