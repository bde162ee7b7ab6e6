"""Arcs flown by the controller (core/checks/reach_arcs.py): an arc given up below the level
(nothing left to touch) has the outcome of the same arc flown for ARC_MAX_TIME, either side
of the jump distance across a gap over a void (issues 24, 25)."""

import math

import numpy as np
import pytest
from capsule_collision.core import ControllerSettings, TriangleMesh
from capsule_collision.core.checks import reach_arcs
from capsule_collision.core.controller.controller import CharacterController
from scenes import box, merge

JUMPER = ControllerSettings(jump_height=1.0)
FULL = int(math.ceil(reach_arcs.ARC_MAX_TIME / reach_arcs.ARC_DT))  # frames of a full arc


def _decks(gap):
    """Two 4 x 4 m decks 1 m high, ``gap`` metres apart along x, over nothing."""
    return TriangleMesh(*merge([box((0, 0, 0), (4, 4, 1)),
                                box((4 + gap, 0, 0), (8 + gap, 4, 1))]))


def _fly(gap, v0, monkeypatch=None):
    if monkeypatch is not None:  # the arcs flown for ARC_MAX_TIME (no early end)
        monkeypatch.setattr(reach_arcs, "lowest_foot", lambda _ctrl: -np.inf)
    ctrl = CharacterController(_decks(gap), JUMPER)
    feet = np.array([[3.6, 2.0, 1.0], [3.6, 0.5, 1.0]])
    dirs = np.array([[1.0, 0.0, 0.0], [0.0, -1.0, 0.0]])  # to the far deck, off the side
    return reach_arcs.fly(ctrl, feet, dirs, v0, 1.0)


# measured: a jump from 0.4 m short of the edge lands on the far deck's edge across a
# 3.76 m gap and slides off its side into the void across 3.78 m
@pytest.mark.parametrize(("gap", "crosses"), [(3.76, True), (3.78, False)])
def test_an_arc_given_up_below_the_level_lands_as_one_flown_for_the_full_time(
        gap, crosses, monkeypatch):
    v0 = reach_arcs.take_off_speed(JUMPER)
    early = _fly(gap, v0)
    full = _fly(gap, v0, monkeypatch)
    assert early.landed.tolist() == full.landed.tolist() == [crosses, False]
    assert np.array_equal(early.foot[early.landed], full.foot[full.landed])
    if crosses:
        # perched on the far deck's edge: its bottom sphere on the edge, a radius short of it
        assert early.foot[0, 0] > 4.0 + gap - JUMPER.radius - 0.01
        assert early.foot[0, 2] > 0.5
    # the arcs into the void end once below the level, not after ARC_MAX_TIME
    assert full.frames == FULL and early.frames < FULL // 2
    assert (early.foot[~early.landed] @ JUMPER.up_vector < -JUMPER.height).all()


def test_a_walk_off_into_the_void_ends_below_the_level_and_lands_nowhere(monkeypatch):
    early = _fly(3.0, 0.0)
    full = _fly(3.0, 0.0, monkeypatch)
    assert early.landed.tolist() == full.landed.tolist() == [False, False]
    assert early.frames < full.frames == FULL


def test_arcs_with_the_same_foot_and_direction_fly_once_and_land_as_each_alone(monkeypatch):
    ctrl = CharacterController(_decks(3.0), JUMPER)
    v0 = reach_arcs.take_off_speed(JUMPER)
    feet = np.array([[3.6, 2.0, 1.0], [3.6, 0.5, 1.0], [3.6, 2.0, 1.0], [3.6, 2.0, 1.0]])
    dirs = np.array([[1.0, 0.0, 0.0], [0.0, -1.0, 0.0], [1.0, 0.0, 0.0], [0.0, -1.0, 0.0]])
    alone = [reach_arcs.fly(ctrl, feet[i:i + 1], dirs[i:i + 1], v0, 1.0) for i in range(4)]
    flown = []
    inner = reach_arcs._fly

    def spy(ctrl, f, d, v, m):
        flown.append(f.shape[0])
        return inner(ctrl, f, d, v, m)

    monkeypatch.setattr(reach_arcs, "_fly", spy)
    both = reach_arcs.fly(ctrl, feet, dirs, v0, 1.0)
    assert flown == [3]  # rows 0 and 2 are one arc
    assert both.landed.tolist() == [a.landed[0] for a in alone] == [True, False, True, False]
    assert np.array_equal(both.foot, np.concatenate([a.foot for a in alone]))
