"""Behaviour at exact limits that no other test pinned (issue 24, section 6): a batched
capsule query and an exactly touching capsule (touching is not a contact), a walk stopping at
``skin_width`` from a wall (not short of it), and the stair audit's treads and risers exactly
at ``min_step_depth`` and ``step_height``. Values are binary fractions, so "exactly" is exact
in float64."""

import numpy as np
import pytest
from capsule_collision.core import stair_audit
from capsule_collision.core.controller.controller import ControllerSettings
from capsule_collision.core.geometry.shapes import Capsule
from capsule_collision.core.mesh.triangle_mesh import TriangleMesh
from capsule_collision.core.walk.walkthrough import walkthrough
from scenes import box, grid, merge


def _floor():
    return TriangleMesh(np.array([[-4.0, -4.0, 0.0], [4.0, -4.0, 0.0], [0.0, 4.0, 0.0]]),
                        np.array([[0, 1, 2]]))


@pytest.mark.parametrize("radius, contact", [(0.5, False), (np.nextafter(0.5, 1.0), True),
                                             (np.nextafter(0.5, 0.0), False)])
def test_batched_query_touching_capsule_is_no_contact(radius, contact):
    # the capsule's lowest point exactly on the floor: touching, not a contact; a radius one
    # ulp larger penetrates. The batched query and the single one agree.
    mesh = _floor()
    a = np.array([[0.0, 0.0, 0.5], [1.0, 0.5, 0.5]])
    b = a + [0.0, 0.0, 1.0]
    got = mesh.capsule_contacts_many(a, b, radius)
    assert sorted(set(got.query.tolist())) == ([0, 1] if contact else [])
    single = [len(mesh.capsule_contacts(Capsule(a[i], b[i], radius))) > 0 for i in range(2)]
    assert single == [contact, contact]


@pytest.mark.parametrize("skin", [0.02, 0.03125, 0.046875])
@pytest.mark.parametrize("dt", [1 / 30, 1 / 60, 1 / 120])
def test_walk_into_a_wall_stops_at_skin_width_from_it(skin, dt):
    # the foot ends radius + skin_width from the wall's face: the controller's sweep stops
    # skin_width short of the hit, no farther and no nearer. Regression (issue 24 section 6):
    # with skin 0.03125 at 60 and 120 Hz a frame's move ended 0.025 m from the wall without
    # hitting it and the next frame could not back off further than where it started; the
    # slide's sweep now looks skin_width past the move's end (core/controller/slide.py)
    s = ControllerSettings(radius=0.375, skin_width=skin)
    mesh = TriangleMesh(*merge([grid(0.0, 8.0, 0.0, 4.0), box((5.0, 0.0, 0.0), (6.0, 4.0, 3.0))]))
    rep = walkthrough(mesh, [[2.0, 2.0, 0.0], [7.0, 2.0, 0.0]], s, dt=dt, max_time=3.0)
    assert not rep.reached_goal
    gaps = 5.0 - rep.trace[:, 0] - s.radius
    assert gaps[-1] == pytest.approx(skin, abs=1e-6)
    assert gaps.min() >= skin - 1e-6  # never nearer on the way


def _stairs(rise, tread, steps=4, x0=2.0):
    parts = [grid(0.0, 12.0, 0.0, 3.0)]
    for k in range(steps):
        parts.append(box((x0 + k * tread, 0.0, 0.0), (x0 + steps * tread + 2.0, 3.0,
                                                       rise * (k + 1))))
    return TriangleMesh(*merge(parts))


@pytest.mark.parametrize("rise, high", [(0.375, False), (0.375 + 2.0 ** -10, True)])
def test_stair_risers_exactly_at_step_height_are_not_too_high(rise, high):
    s = ControllerSettings(step_height=0.375, min_step_depth=0.25)
    res = stair_audit(_stairs(rise, 0.5), s)
    assert res.riser.size and np.unique(res.step).size == 4
    np.testing.assert_allclose(res.rise, rise, atol=1e-9)
    assert res.too_high.all() == high and res.too_high.any() == high


@pytest.mark.parametrize("tread, shallow", [(0.25, False), (0.25 - 2.0 ** -10, True)])
def test_stair_treads_exactly_at_min_step_depth_are_not_too_shallow(tread, shallow):
    s = ControllerSettings(step_height=0.375, min_step_depth=0.25)
    res = stair_audit(_stairs(0.25, tread), s)
    inner = np.isfinite(res.tread_depth)
    assert inner.any()
    np.testing.assert_allclose(res.tread_depth[inner], tread, atol=1e-9)
    assert res.too_shallow[inner].all() == shallow and res.too_shallow[inner].any() == shallow
    assert not res.too_shallow[~inner].any()
