"""Leaving an edge (issue 20, the exact model): where the support of a character standing on
an edge ends within a move (core.controller.departure), the place it leaves from, and walks
that leave an edge at the same height at 30, 60 and 120 Hz (core.walk.edges)."""

import math

import numpy as np
import pytest
from capsule_collision.core.controller.controller import CharacterController
from capsule_collision.core.controller.departure import off_edge, support_end
from capsule_collision.core.controller.ground import Ground
from capsule_collision.core.controller.settings import ON_GROUND, ControllerSettings
from capsule_collision.core.mesh.triangle_mesh import TriangleMesh
from capsule_collision.core.walk.walkthrough import walkthrough
from controller_scenes import RATES, box

S = ControllerSettings()
REACH = S.radius * math.sqrt(1.0 - 0.25 ** 2)  # the axis past a level edge where support ends


def _on_edge(x):
    """A controller on a platform whose edge is x = 0, and (feet (1, 3), Ground) of a character
    walked there from 0.5 m inside it in 1 cm moves until its axis is ``x`` past the edge."""
    ctrl = CharacterController(TriangleMesh(*box((-3, -3, -3), (0, 3, 0))))
    b = ctrl.move_many(np.array([[-0.5, 0.0, 0.0]]), np.zeros((1, 3)), Ground.unknown(1))
    for _ in range(round((x + 0.5) / 0.01)):
        b = ctrl.move_many(b.position, np.array([[0.01, 0.0, 0.0]]), b.ground)
    assert b.ground.state[0] == ON_GROUND and b.position[0, 0] == pytest.approx(x)
    return ctrl, b.position, b.ground


def test_support_ends_where_the_axis_is_097_radius_past_a_level_edge():
    ctrl, feet, ground = _on_edge(0.2)
    for along, rate in (((1.0, 0.0), 1.0), ((math.sqrt(0.5), math.sqrt(0.5)), math.sqrt(0.5))):
        disp = np.array([[0.3 * along[0], 0.3 * along[1], 0.0]])
        end = support_end(ctrl, feet, disp, ground)
        want = (REACH - 0.2 - 1e-6) / (0.3 * rate)
        assert end.t[0] == pytest.approx(want, abs=1e-9)
    # walking back onto the platform, or not reaching the end within the move: no end
    assert np.isinf(support_end(ctrl, feet, np.array([[-0.3, 0, 0]]), ground).t[0])
    assert np.isinf(support_end(ctrl, feet, np.array([[0.1, 0, 0]]), ground).t[0])


def test_a_character_leaves_from_the_support_line_clear_of_the_edge():
    ctrl, feet, ground = _on_edge(0.3)
    disp = np.array([[0.3, 0.0, 0.0]])
    end = support_end(ctrl, feet, disp, ground)
    foot = off_edge(ctrl, feet, end)[0]
    centre = foot + np.array([0.0, 0.0, S.radius])
    assert centre[2] == pytest.approx(0.25 * S.radius)  # on the support line
    assert np.hypot(centre[0], centre[2]) == pytest.approx(S.radius + S.skin_width)


def test_walks_leave_a_platform_at_the_same_height_at_every_rate():
    """The first airborne frame walking off a platform: 0.103, 0.223 and 0.223 m below it at
    30, 60 and 120 Hz before issue 20 (where the frames fell on the edge); now the support
    line, 0.75 x radius below it, at all three."""
    mesh = TriangleMesh(*box((-3, -3, -30), (2, 3, 0)))
    heights = []
    for hz in RATES:
        rep = walkthrough(mesh, [[0, 0, 0], [6, 0, 0]], dt=1.0 / hz)
        first = int(np.argmax(~rep.grounded))
        heights.append(rep.trace[first, 2])
    assert heights == pytest.approx([0.25 * S.radius - S.radius] * 3, abs=1e-9)
