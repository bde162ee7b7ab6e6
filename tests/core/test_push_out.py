"""core.checks.push_out: the shortest way out of the level's solids, on exact cases."""

import numpy as np
import pytest
from capsule_collision.core import Capsule, TriangleMesh
from capsule_collision.core.checks.push_out import CLEAR, PushOut, push_out
from capsule_collision.core.constants import CONTACT_SLOP
from controller_scenes import box, grid, merge

R, H = 0.35, 1.8


def _free_after(mesh, capsule, result):
    moved = capsule.translated(result.direction * (result.distance + CONTACT_SLOP))
    return mesh.penetrating_triangles(moved).size == 0


def test_capsule_045_into_a_wall_box_goes_045_out_of_it():
    # wall box y in [0, 0.5]; its front face (normal -y) at y = 0; the axis 0.1 m inside
    wall = box((-5.0, 0.0, 0.0), (5.0, 0.5, 3.0))
    mesh = TriangleMesh(*merge([wall, grid(-6, 6, -6, 6, z=0.0)]))
    cap = Capsule.upright((0.0, 0.1, 0.01), H, R)
    deepest = mesh.capsule_contacts(cap)[0]
    assert deepest.normal[1] > 0.9 and deepest.depth == pytest.approx(0.25)  # today's push: in
    result = push_out(mesh, cap)
    assert not result.buried
    np.testing.assert_allclose(result.direction, (0.0, -1.0, 0.0), atol=1e-12)
    assert result.distance == pytest.approx(0.45, abs=1e-9)
    assert _free_after(mesh, cap, result)
    # one hair less leaves it touching the face from inside the wall's reach
    short = cap.translated(result.direction * (result.distance - 1e-6))
    assert mesh.penetrating_triangles(short).size > 0


@pytest.mark.parametrize("floor", ["plane", "slab"])
def test_inside_a_crate_on_a_floor_leaves_by_the_side_never_down(floor):
    crate = box((-0.6, -0.6, 0.0), (0.6, 0.6, 1.2))
    ground = grid(-4, 4, -4, 4, z=0.0) if floor == "plane" else box((-4, -4, -0.3), (4, 4, 0.0))
    mesh = TriangleMesh(*merge([ground, crate]))
    cap = Capsule.upright((0.0, 0.0, 0.1), H, R)  # foot inside the crate, head out of its top
    deepest = mesh.capsule_contacts(cap)[0]
    assert deepest.normal[2] < -0.99  # the deepest contact alone says: down, through the floor
    result = push_out(mesh, cap)
    assert not result.buried
    assert result.direction[2] >= 0.0
    # sideways: the axis 0.6 m from the side, plus the radius; upwards would need 1.1 m
    assert result.distance == pytest.approx(0.95, abs=1e-9)
    assert abs(result.direction[2]) < 1e-12
    assert _free_after(mesh, cap, result)


def test_inside_a_crate_under_a_low_roof_leaves_through_the_top():
    # walls hug the crate's sides: the only way out is up
    crate = box((-0.6, -0.6, 0.0), (0.6, 0.6, 1.2))
    walls = [box((-1.6, -1.6, 0.0), (-0.6, 1.6, 3.0)), box((0.6, -1.6, 0.0), (1.6, 1.6, 3.0)),
             box((-0.6, -1.6, 0.0), (0.6, -0.6, 3.0)), box((-0.6, 0.6, 0.0), (0.6, 1.6, 3.0))]
    mesh = TriangleMesh(*merge([grid(-4, 4, -4, 4), crate, *walls]))
    cap = Capsule.upright((0.0, 0.0, 0.1), H, R)
    result = push_out(mesh, cap)
    np.testing.assert_allclose(result.direction, (0.0, 0.0, 1.0), atol=1e-12)
    assert result.distance == pytest.approx(1.1, abs=1e-9)  # the foot clears the crate top
    assert _free_after(mesh, cap, result)


def test_inside_a_closed_solid_bigger_than_any_push_is_buried_with_its_depth():
    mesh = TriangleMesh(*box((-10, -10, -10), (10, 10, 10)))
    cap = Capsule.upright((0.0, 0.0, -0.9), H, R)  # centred, touching nothing
    assert mesh.capsule_contacts(cap) == []
    result = push_out(mesh, cap)
    assert result.buried
    assert result.distance == pytest.approx(10.0 + R, abs=1e-9)  # sideways, out of the cube
    assert abs(result.direction[2]) < 1e-12
    assert _free_after(mesh, cap, result)
    # the same solid is no burial when the allowed push is longer than the way out
    assert not push_out(mesh, cap, max_distance=11.0).buried


def test_clear_capsule_and_capsule_standing_on_the_floor_need_no_push():
    mesh = TriangleMesh(*grid(-2, 2, -2, 2))
    standing = Capsule.upright((0.0, 0.0, 0.0), H, R)  # touching is not a contact
    for cap in (standing, Capsule.upright((0, 0, 5), H, R)):
        result = push_out(mesh, cap)
        assert result.distance == 0.0 and not result.buried
        assert (result.direction == CLEAR.direction).all()


def test_capsule_grazing_a_wall_from_the_front_moves_back_by_its_depth():
    mesh = TriangleMesh(*box((-5.0, 0.0, 0.0), (5.0, 0.5, 3.0)))
    cap = Capsule.upright((1.0, -0.25, 0.5), H, R)  # axis in front, 0.1 m into the face
    result = push_out(mesh, cap)
    np.testing.assert_allclose(result.direction, (0.0, -1.0, 0.0), atol=1e-12)
    assert result.distance == pytest.approx(0.1, abs=1e-9)
    assert result.distance == pytest.approx(mesh.capsule_contacts(cap)[0].depth, abs=1e-12)


def test_capsule_sunk_into_a_plane_floor_goes_up_by_the_sink():
    mesh = TriangleMesh(*grid(-2, 2, -2, 2))
    cap = Capsule.upright((0.3, 0.2, -0.45), H, R)  # lower sphere centre below the floor
    result = push_out(mesh, cap)
    np.testing.assert_allclose(result.direction, (0.0, 0.0, 1.0), atol=1e-12)
    assert result.distance == pytest.approx(0.45, abs=1e-9)
    assert not result.buried


def test_push_out_refuses_what_is_not_a_capsule_and_a_negative_limit():
    mesh = TriangleMesh(*grid(-1, 1, -1, 1))
    with pytest.raises(ValueError, match="capsule"):
        push_out(mesh, (0, 0, 0))
    with pytest.raises(ValueError, match="max_distance"):
        push_out(mesh, Capsule.upright((0, 0, -0.1), H, R), max_distance=-1.0)


def test_push_out_vector_is_direction_times_distance_and_zero_without_a_way_out():
    p = PushOut(np.array([0.0, 0.0, 1.0]), 0.5, False)
    np.testing.assert_allclose(p.vector, (0, 0, 0.5))
    assert (PushOut(np.zeros(3), np.inf, True).vector == 0.0).all()


def test_getting_free_of_an_inner_wall_inside_a_closed_solid_is_no_way_out():
    # a thin wall inside a 20 m closed cube: 0.2 m frees the capsule from the wall, but it is
    # still inside the cube: the way out is through the cube's side (buried)
    cube = box((-10, -10, -10), (10, 10, 10))
    inner = box((-2.0, 0.0, -3.0), (2.0, 0.1, 3.0))
    mesh = TriangleMesh(*merge([cube, inner]))
    cap = Capsule.upright((0.0, -0.2, -0.9), H, R)  # 0.05 m into the inner wall's front
    assert mesh.capsule_contacts(cap)
    result = push_out(mesh, cap)
    assert result.buried
    assert result.distance == pytest.approx(10.0 - 0.2 + R, abs=1e-9)  # out through y = -10
    np.testing.assert_allclose(result.direction, (0.0, -1.0, 0.0), atol=1e-12)


def test_a_move_that_ends_free_but_still_inside_a_long_solid_is_refused():
    # inside a long solid (its x exits 20 m away, beyond any short move): sliding 1.35 m
    # along x frees the capsule of the inner wall but leaves it inside; out is through y
    slab = box((-20.0, -3.0, -3.0), (20.0, 3.0, 3.0))
    inner = box((-1.0, 0.0, -2.0), (1.0, 0.1, 2.0))
    mesh = TriangleMesh(*merge([slab, inner]))
    cap = Capsule.upright((0.0, -0.2, -0.9), H, R)
    result = push_out(mesh, cap)
    np.testing.assert_allclose(result.direction, (0.0, -1.0, 0.0), atol=1e-12)
    assert result.distance == pytest.approx(3.0 - 0.2 + R, abs=1e-9)
    assert result.buried  # longer than the capsule's 1.8 m height
