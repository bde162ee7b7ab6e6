"""Reachability agrees with the controller it follows (issue 24, section 6): every move of
the map gives the verdict a walk of the same move gives (``walkthrough_many``), either side
of each limit (gaps, risers, ceilings, slopes) and wherever the level lies on the cell grid
(each scene shifted by a fraction of a cell along x).

Regression: two decks over a pit, gaps of 0.52-0.72 m, were islands while the controller
walking straight across at full speed reaches the far deck up to about 0.74 m (the deck's
edge falls a fall link into the pit and the walk-off across was never flown; the walk-off
that stays on the ground onto the far deck did not count as landed; and the arcs were not
flown with the walk's frame).
"""

import numpy as np
import pytest
from capsule_collision.core import reachability
from capsule_collision.core.controller.controller import ControllerSettings
from capsule_collision.core.mesh.triangle_mesh import TriangleMesh
from capsule_collision.core.walk.walkthrough import walkthrough_many
from reach_scenes import ramp
from scenes import box, grid, merge

S = ControllerSettings()  # radius 0.35: cells of 0.175 m
OFFSETS = (0.0, 0.07, 0.13)  # metres along x: the scene against the cell grid


def _gap(gap):
    x1 = 5.0 + gap
    parts = [grid(0.0, x1 + 5.0, 0.0, 4.0, cell=0.5), box((0.0, 0.0, 0.0), (5.0, 4.0, 3.0)),
             box((x1, 0.0, 0.0), (x1 + 5.0, 4.0, 3.0))]
    return parts, (2.5, 2.0, 3.0), (x1 + 2.5, 2.0, 3.0)


def _riser(rise):
    parts = [grid(0.0, 10.0, 0.0, 4.0, cell=0.5), box((5.0, 0.0, 0.0), (9.0, 4.0, rise))]
    return parts, (2.0, 2.0, 0.0), (7.0, 2.0, rise)


def _ceiling(under):
    # a slab over the whole floor's width; beyond it the floor goes on (no way around)
    parts = [grid(0.0, 12.0, 0.0, 4.0, cell=0.5),
             box((4.0, -1.0, under), (8.0, 5.0, under + 0.3))]
    return parts, (2.0, 2.0, 0.0), (10.0, 2.0, 0.0)


def _slope(angle):
    run = 1.0 / np.tan(np.radians(angle))
    parts = [grid(0.0, 12.0, 0.0, 4.0, cell=0.5), box((6.0, 0.0, 0.0), (10.0, 4.0, 1.0)),
             ramp(6.0 - run, 6.0, 0.0, 4.0, 1.0)]
    return parts, (1.0, 2.0, 0.0), (8.0, 2.0, 1.0)


CASES = {  # scene, values either side of its limit
    "gap": (_gap, (0.50, 0.70, 0.78, 0.95)),       # walked across up to about 0.74 m
    "riser": (_riser, (0.33, 0.345, 0.355, 0.37)),  # step height 0.35 m
    "ceiling": (_ceiling, (1.75, 1.79, 1.81, 1.85)),  # height 1.8 m
    "slope": (_slope, (43.0, 44.5, 45.5, 47.0)),    # max slope 45 deg
}


def _verdicts(make, values, offset):
    """(reachability's verdicts, the walks' verdicts) (V,) bool: the goal reached from the
    start, for each value, the scene shifted by ``offset``."""
    shift = np.array([offset, 0.0, 0.0])
    reach, lanes, meshes = [], [], []
    for value in values:
        parts, start, goal = make(value)
        mesh = TriangleMesh(*(lambda v, t: (v + shift, t))(*merge(parts)))
        start, goal = np.asarray(start) + shift, np.asarray(goal) + shift
        reach.append(bool(reachability(mesh, [start], S).can_reach([goal])[0]))
        meshes.append(mesh)
        lanes.append(np.array([start, goal]))
    walks = [walkthrough_many(m, [lane], S)[0].reached_goal for m, lane in zip(meshes, lanes)]
    return reach, walks


@pytest.mark.parametrize("offset", OFFSETS)
@pytest.mark.parametrize("case", sorted(CASES))
def test_reachability_agrees_with_a_walk_either_side_of_each_limit(case, offset):
    make, values = CASES[case]
    reach, walks = _verdicts(make, values, offset)
    assert reach == walks, dict(zip(values, zip(reach, walks)))
    assert walks[0] != walks[-1]  # the sweep straddles the limit
