"""walkthrough_many(..., stop_early=False): every walk runs its whole max_time, as the engine
peers' ``stop_at_goal: false`` (issue 26: tools/bench_engines.py compares ends after the same
walk for every walker). The default (stop at the goal or when stuck) is unchanged: its pinned
hashes are in test_limits_pinned.py and test_walkthrough.py."""

import math

import numpy as np
import pytest
from capsule_collision.core.mesh.triangle_mesh import TriangleMesh
from capsule_collision.core.walk.walkthrough import walkthrough, walkthrough_many
from controller_scenes import RATES, S, grid, stairs_scene, wall_scene

GOAL = np.array([2.0, 0.0, 0.0])


@pytest.mark.parametrize("hz", RATES)
def test_a_reached_walk_runs_on_to_stand_on_the_goal(hz):
    """The default stops on the first frame within radius of the goal (up to a frame's
    stride, 0.13 m at 30 Hz, short of it); the whole walk lands on the goal itself, names
    reached_goal once, and shares the default walk's frames up to where that stopped."""
    mesh = TriangleMesh(*grid(-5, 5, -5, 5))
    path = [[0.0, 0.0, 0.0], GOAL]
    early = walkthrough(mesh, path, dt=1.0 / hz, max_time=2.0)
    whole = walkthrough(mesh, path, dt=1.0 / hz, max_time=2.0, stop_early=False)
    assert early.reached_goal and whole.reached_goal
    assert early.duration <= (2.0 - S.radius) / S.speed + 1.001 / hz
    assert whole.duration == pytest.approx(2.0)
    assert np.hypot(*(early.trace[-1][:2] - GOAL[:2])) > 0.5 * S.radius
    assert np.hypot(*(whole.trace[-1][:2] - GOAL[:2])) < 1e-9
    assert [e.kind for e in whole.events] == ["reached_goal"]
    assert whole.events[0].time == early.events[-1].time
    n = len(early.trace)
    assert np.array_equal(whole.trace[:n], early.trace)


@pytest.mark.parametrize("hz", RATES)
def test_a_held_walk_is_stuck_once_and_walks_its_whole_time(hz):
    mesh = wall_scene(0.2, x0=1.0)
    path = [[0.0, 0.0, 0.0], [4.0, 0.0, 0.0]]
    early = walkthrough(mesh, path, dt=1.0 / hz, max_time=4.0)
    whole = walkthrough(mesh, path, dt=1.0 / hz, max_time=4.0, stop_early=False)
    assert early.kinds()[-1] == "stuck" and early.duration < 3.0
    assert whole.duration == pytest.approx(4.0) and not whole.reached_goal
    assert [e.kind for e in whole.events].count("stuck") == 1
    assert whole.first("stuck").time == early.first("stuck").time
    assert whole.trace[-1][0] == pytest.approx(early.trace[-1][0], abs=1e-6)


def test_a_character_sliding_along_a_riser_slides_on():
    """Class 2 of issue 26's ends: a 0.5 m flight approached at 30 deg. The default walk ends
    ``stuck`` (under 5 cm of progress along the path in 1 s) while the capsule slides along
    the riser; the whole walk slides on along it, as the engines do."""
    mesh = stairs_scene(0.5, n=4, width=16.0)
    a = math.radians(30.0)
    path = [[0.0, 0.0, 0.0], [6.0, 6.0 * math.tan(a), 2.0]]
    early = walkthrough(mesh, path, max_time=5.0)
    whole = walkthrough(mesh, path, max_time=5.0, stop_early=False)
    assert not early.reached_goal and not whole.reached_goal
    assert "stuck" in early.kinds() and early.duration < 5.0
    assert whole.duration == pytest.approx(5.0)
    assert whole.trace[-1][1] > early.trace[-1][1] + 0.1  # further along the riser (+y)
    assert whole.trace[-1][0] == pytest.approx(early.trace[-1][0], abs=0.02)  # held by it


def test_workers_and_batches_walk_the_whole_time_alike():
    mesh = wall_scene(0.2, x0=1.0)
    paths = [np.array([[0.0, y, 0.0], [4.0 if y < 0 else 0.5, y, 0.0]]) for y in (-1.0, 1.0)]
    one = walkthrough_many(mesh, paths, max_time=3.0, stop_early=False)
    two = walkthrough_many(mesh, paths, max_time=3.0, stop_early=False, workers=2)
    assert [r.duration for r in one] == pytest.approx([3.0, 3.0])
    assert [r.reached_goal for r in one] == [False, True]
    for a, b in zip(one, two):
        assert np.array_equal(a.trace, b.trace)
        assert a.kinds() == b.kinds()
