"""core.authoring: the tight oriented box, sphere/capsule fits, proxy meshes, convexity,
engine naming and stair ramps (issue 25, section 1)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from audit_scenes import blender_stairs_scene, box, quad, staircase
from capsule_collision.core import ControllerSettings, TriangleMesh, walkthrough
from capsule_collision.core.authoring import (
    ENGINES,
    KINDS,
    OrientedBox,
    base_name,
    box_mesh,
    capsule_mesh,
    collision_name,
    concave_for,
    fit_primitive,
    is_convex,
    oriented_box,
    stair_ramps,
    surface_deviation,
)
from capsule_collision.core.authoring.primitives import hull_2d, min_area_rectangle
from capsule_collision.core.checks.audits import stair_audit
from controller_scenes import merge

# an exact rotation (rows orthonormal: Pythagorean triples)
ROT = np.array([[0.36, 0.48, -0.8], [-0.8, 0.6, 0.0], [0.48, 0.64, 0.6]])


def _edges_shared_twice(t):
    e = np.sort(np.concatenate([t[:, [0, 1]], t[:, [1, 2]], t[:, [2, 0]]]), axis=1)
    _, counts = np.unique(e, axis=0, return_counts=True)
    return bool((counts == 2).all())


def _signed_volume(v, t):
    c = v[t]
    return float(np.einsum("ij,ij->i", c[:, 0], np.cross(c[:, 1], c[:, 2])).sum() / 6.0)


# ---------------------------------------------------------------- oriented box
def test_rotated_box_mesh_gets_its_own_box_exactly():
    truth = OrientedBox(np.array([1.0, 2.0, 3.0]), ROT, np.array([0.5, 1.0, 2.0]))
    v, t = box_mesh(truth)
    got = oriented_box(v, t)
    assert got.volume == pytest.approx(truth.volume, rel=1e-12)
    assert sorted(got.half_extents) == pytest.approx([0.5, 1.0, 2.0], abs=1e-12)
    assert np.allclose(got.center, truth.center, atol=1e-12)
    # the same eight corners, in any order
    assert np.allclose(np.sort(got.corners, axis=0), np.sort(truth.corners, axis=0), atol=1e-12)
    assert np.allclose(got.axes @ got.axes.T, np.eye(3), atol=1e-12)
    assert np.linalg.det(got.axes) == pytest.approx(1.0)


def test_box_holds_every_point_and_beats_the_axis_aligned_and_pca_boxes():
    rng = np.random.default_rng(25)
    pts = (rng.normal(size=(400, 3)) * [3.0, 1.0, 0.3]) @ ROT + [5.0, -2.0, 1.0]
    got = oriented_box(pts)
    local = (pts - got.center) @ got.axes.T
    assert (np.abs(local) <= got.half_extents + 1e-9).all()
    # every axis touches points on both sides: tight
    assert np.allclose(np.abs(local).max(axis=0), got.half_extents, atol=1e-9)
    assert got.volume <= float(np.prod(np.ptp(pts, axis=0))) + 1e-9
    centred = pts - pts.mean(0)
    pca = np.linalg.eigh(centred.T @ centred)[1].T
    assert got.volume <= float(np.prod(np.ptp(pts @ pca.T, axis=0))) + 1e-9


def test_box_of_one_point_is_that_point_and_bad_vertices_name_the_argument():
    got = oriented_box([[1.0, 2.0, 3.0]])
    assert np.allclose(got.center, [1, 2, 3]) and got.volume == 0.0
    with pytest.raises(ValueError, match="vertices"):
        oriented_box(np.empty((0, 3)))
    with pytest.raises(ValueError, match="vertices"):
        oriented_box([[0.0, 0.0, math.nan]])
    with pytest.raises(ValueError, match="triangles"):
        oriented_box([[0.0, 0.0, 0.0]], [[0, 1, 2]])


def test_hull_2d_drops_inside_and_collinear_points_counter_clockwise():
    pts = np.array([[0, 0], [1, 0], [2, 0], [2, 2], [0, 2], [1, 1], [0, 1], [1, 2.0]])
    h = hull_2d(pts)
    assert sorted(h.tolist()) == [0, 2, 3, 4]
    ring = pts[h]
    area2 = np.sum(ring[:, 0] * np.roll(ring[:, 1], -1) - np.roll(ring[:, 0], -1) * ring[:, 1])
    assert area2 == pytest.approx(8.0)  # counter-clockwise: positive area


def test_min_area_rectangle_of_a_rotated_rectangle_is_exact():
    c, s = 0.6, 0.8
    rect = np.array([[0, 0], [3, 0], [3, 1], [0, 1.0]]) @ np.array([[c, s], [-s, c]])
    area, d, lo, hi = min_area_rectangle(np.concatenate([rect, rect.mean(0)[None]]))
    assert area == pytest.approx(3.0, rel=1e-12)
    assert sorted((hi - lo).tolist()) == pytest.approx([1.0, 3.0])


# ---------------------------------------------------------------- sphere and capsule
def test_capsule_mesh_is_closed_outward_and_at_radius_from_its_segment():
    v, t = capsule_mesh([1, 0, 0], [1, 0, 2], 0.5, segments=12, rings=3)
    assert _edges_shared_twice(t) and _signed_volume(v, t) > 0
    z = np.clip(v[:, 2], 0.0, 2.0)
    d = np.linalg.norm(v - np.column_stack([np.ones(len(v)), np.zeros(len(v)), z]), axis=1)
    assert np.allclose(d, 0.5, atol=1e-12)
    sv, st = capsule_mesh([0, 0, 0], [0, 0, 0], 1.0, segments=8, rings=2)
    assert _edges_shared_twice(st) and np.allclose(np.linalg.norm(sv, axis=1), 1.0)
    with pytest.raises(ValueError, match="radius"):
        capsule_mesh([0, 0, 0], [0, 0, 1], 0.0)


def test_capsule_render_mesh_fits_a_capsule_with_its_segment():
    v, t = capsule_mesh([0, 0, 0], [0, 0, 2], 0.5, segments=32, rings=8)
    fit = fit_primitive(v, t, tolerance=0.02)
    assert fit.kind == "capsule"
    ends = sorted([fit.a[2], fit.b[2]])
    assert ends == pytest.approx([0.0, 2.0], abs=0.02)
    assert fit.radius == pytest.approx(0.5, abs=0.02) and fit.deviation <= 0.02


def test_sphere_is_preferred_and_the_tolerance_boundary_decides():
    v, t = capsule_mesh([3, 1, 2], [3, 1, 2], 2.0, segments=24, rings=6)
    fit = fit_primitive(v, t, tolerance=0.1)
    assert fit.kind == "sphere" and np.allclose(fit.a, [3, 1, 2], atol=1e-6)
    dev = fit.deviation
    assert fit_primitive(v, t, tolerance=dev * 1.001).kind == "sphere"
    assert fit_primitive(v, t, tolerance=dev * 0.999).kind != "sphere"


def test_a_box_fits_neither_and_says_how_far_off_the_best_is():
    v, t = box_mesh(OrientedBox(np.zeros(3), np.eye(3), np.array([1.0, 1.0, 1.0])))
    fit = fit_primitive(v, t, tolerance=0.05)
    assert fit.kind == "" and fit.best in ("sphere", "capsule") and fit.deviation > 0.1
    with pytest.raises(ValueError, match="tolerance"):
        fit_primitive(v, t, tolerance=-1.0)
    with pytest.raises(ValueError, match="surface"):
        fit_primitive(v[:3], t[:0], tolerance=0.1)


def test_convexity_of_a_box_a_capsule_and_an_l_shape():
    v, t = box_mesh(OrientedBox(np.zeros(3), ROT, np.array([1.0, 2.0, 3.0])))
    assert is_convex(v, t)
    assert is_convex(*capsule_mesh([0, 0, 0], [0, 0, 1], 0.3))
    lv, lt = merge([box((0, 0, 0), (2, 1, 1)), box((0, 1, 0), (1, 2, 1))])
    assert not is_convex(lv, lt)


# ---------------------------------------------------------------- naming
@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("kind", KINDS)
def test_collision_names_give_back_their_render_mesh(engine, kind):
    name = collision_name(engine, kind, "Wall_Big", 3)
    assert base_name(name) == "Wall_Big" and base_name(name + ".001") == "Wall_Big"


def test_collision_names_per_engine_and_bad_engine():
    assert collision_name("unreal", "box", "Wall", 1) == "UBX_Wall_01"
    assert collision_name("UNREAL", "capsule", "Wall", 2) == "UCP_Wall_02"
    assert collision_name("unreal", "mesh", "Wall", 1) == "UCX_Wall_01"
    assert collision_name("godot", "convex", "Wall", 1) == "Wall_01-convcolonly"
    assert collision_name("godot", "mesh", "Wall", 12) == "Wall_12-colonly"
    assert collision_name("unity", "sphere", "Wall", 1) == "Wall_01_sphere_collider"
    assert concave_for("unreal", "mesh") and not concave_for("godot", "mesh")
    with pytest.raises(ValueError, match="engine"):
        collision_name("cryengine", "box", "Wall", 1)
    with pytest.raises(ValueError, match="kind"):
        collision_name("godot", "cone", "Wall", 1)


# ---------------------------------------------------------------- stair ramps
def test_ramp_of_the_blender_stairs_lies_on_the_nosings_flush_with_both_landings():
    mesh = blender_stairs_scene()
    (ramp,) = stair_ramps(mesh)
    # six 0.2 m risers, 0.3 m treads along +x from x = 0: nosings (0.3 i, 0.2 (i + 1))
    assert ramp.slope_deg == pytest.approx(math.degrees(math.atan(1.0 / 1.5)), abs=1e-9)
    assert ramp.fits_slope and ramp.nosing_gap == pytest.approx(0.0, abs=1e-9)
    assert np.allclose(ramp.direction, [1, 0, 0])
    assert ramp.bottom_height == pytest.approx(0.0, abs=1e-12)
    assert ramp.top_height == pytest.approx(1.2)
    lo, hi = ramp.vertices.min(0), ramp.vertices.max(0)
    assert np.allclose(lo, [-0.3, 0.0, 0.0], atol=1e-9) and np.allclose(hi, [1.5, 1.2, 1.2])
    assert is_convex(ramp.vertices, ramp.triangles)
    assert _edges_shared_twice(ramp.triangles) and _signed_volume(ramp.vertices,
                                                                  ramp.triangles) > 0


def test_ramp_leaves_out_the_flights_faces_and_keeps_the_landings():
    mesh = blender_stairs_scene()
    stairs = stair_audit(mesh)
    (ramp,) = stair_ramps(mesh, stairs=stairs)
    assert set(stairs.riser.tolist()) <= set(ramp.flight_faces.tolist())
    c = mesh.vertices[mesh.triangles].mean(1)
    treads = np.flatnonzero((mesh.normals[:, 2] > 0.99) & (c[:, 0] > 0) & (c[:, 0] < 1.5)
                            & (c[:, 2] > 0.1))
    assert treads.size == 10 and set(treads.tolist()) <= set(ramp.flight_faces.tolist())
    kept = np.setdiff1d(np.arange(mesh.n_triangles), ramp.flight_faces)
    # the floor, the landing box's top and the last tread (x 1.5 - 1.8, at landing height)
    top = np.flatnonzero((mesh.normals[:, 2] > 0.99) & (np.abs(c[:, 2] - 1.2) < 1e-9))
    floor = np.flatnonzero((np.abs(c[:, 2]) < 1e-9) & (np.ptp(mesh.vertices[mesh.triangles][
        :, :, 0], axis=1) > 5))
    assert set(top.tolist()) <= set(kept.tolist()) and floor.size == 2
    assert set(floor.tolist()) <= set(kept.tolist())


def test_ramp_steeper_than_the_character_says_so():
    mesh = blender_stairs_scene()
    (ramp,) = stair_ramps(mesh, ControllerSettings(max_slope_deg=33.6))
    assert not ramp.fits_slope and ramp.slope_deg > 33.6
    (ramp,) = stair_ramps(mesh, ControllerSettings(max_slope_deg=33.7))
    assert ramp.fits_slope


def test_no_flight_no_ramp():
    v, t = quad((-5, -5, 0), (5, -5, 0), (5, 5, 0), (-5, 5, 0))
    assert stair_ramps(TriangleMesh(v, t)) == []


@pytest.mark.parametrize("hz", [30, 60, 120])
def test_a_character_walks_up_the_ramp_that_replaced_the_flight(hz):
    """Steps twice the step height: the flight stops the character, its ramp does not."""
    floor = quad((-10, -10, 0), (10, -10, 0), (10, 10, 0), (-10, 10, 0))
    parts = [floor, *staircase(0.0, -1.0, 1.0, [0.5] * 4, [0.8] * 4),
             box((3.2, -1.0, 0.0), (6.0, 1.0, 2.0))]
    mesh = TriangleMesh(*merge(parts))
    path = np.array([[-2.0, 0.0, 0.0], [5.0, 0.0, 2.0]])
    s = ControllerSettings()
    assert not walkthrough(mesh, path, s, dt=1.0 / hz).reached_goal
    (ramp,) = stair_ramps(mesh, s)
    assert ramp.fits_slope and ramp.top_height == pytest.approx(2.0)
    keep = np.setdiff1d(np.arange(mesh.n_triangles), ramp.flight_faces)
    ramped = TriangleMesh(*merge([(mesh.vertices, mesh.triangles[keep]),
                                  (ramp.vertices, ramp.triangles)]))
    report = walkthrough(ramped, path, s, dt=1.0 / hz)
    assert report.reached_goal
    assert not [e for e in report.events if e.kind in ("step_too_high", "blocked", "fell")]


# ---------------------------------------------------------------- simplified meshes
def test_surface_deviation_of_a_lowered_copy_is_its_offset_both_ways():
    v, t = quad((0, 0, 0), (2, 0, 0), (2, 2, 0), (0, 2, 0))
    for dz, tol, within in ((0.01, 0.02, True), (0.03, 0.02, False)):
        dev = surface_deviation(v, t, v + [0, 0, dz], t, tol)
        assert dev.within is within
        assert dev.distance == pytest.approx(min(dz, tol), abs=1e-9)
    same = surface_deviation(v, t, v, t, 0.01)
    assert same.within and same.distance == pytest.approx(0.0, abs=1e-12)
    with pytest.raises(ValueError, match="tolerance"):
        surface_deviation(v, t, v, t, 0.0)


def test_a_landing_breaks_the_flight_into_two_ramps_each_flush():
    """Three 0.2 m risers, a 1.2 m landing, three more: one ramp below and one above it."""
    floor = quad((-10, -10, 0), (10, -10, 0), (10, 10, 0), (-10, 10, 0))
    treads = [0.3, 0.3, 1.2, 0.3, 0.3, 0.3]
    parts = [floor, *staircase(0.0, 0.0, 1.2, [0.2] * 6, treads),
             box((2.7, -1.0, 0.0), (5.0, 2.2, 1.2))]
    mesh = TriangleMesh(*merge(parts))
    low, high = stair_ramps(mesh)
    assert low.flight == high.flight
    for ramp, (s_bot, h_bot, s_top, h_top) in ((low, (-0.3, 0.0, 0.6, 0.6)),
                                              (high, (1.5, 0.6, 2.4, 1.2))):
        lo, hi = ramp.vertices.min(0), ramp.vertices.max(0)
        assert (lo[0], lo[2], hi[0], hi[2]) == pytest.approx((s_bot, h_bot, s_top, h_top))
        assert ramp.slope_deg == pytest.approx(math.degrees(math.atan(2.0 / 3.0)))
        assert ramp.nosing_gap == pytest.approx(0.0, abs=1e-9)
    # the landing's tread (x 0.6 - 1.8 at 0.6 m) is under neither ramp: it stays
    c = mesh.vertices[mesh.triangles].mean(1)
    landing = np.flatnonzero((np.abs(c[:, 2] - 0.6) < 1e-9) & (mesh.normals[:, 2] > 0.99))
    assert landing.size == 2
    assert not set(landing.tolist()) & set(low.flight_faces.tolist() + high.flight_faces.tolist())


def test_no_floor_in_front_the_ramp_starts_at_the_first_risers_foot():
    """A flight rising from a 10 cm ledge 1 m up: the nosing line would meet z = 1 m 0.3 m out,
    over the drop; the ramp starts at the first riser instead, one rise under its nosing."""
    floor = quad((-10, -10, 0), (10, -10, 0), (10, 10, 0), (-10, 10, 0))
    steps = [(v + [0.0, 0.0, 1.0], t) for v, t in staircase(0.0, 0.0, 1.2, [0.2] * 4,
                                                            [0.3] * 4)]
    parts = [floor, box((-0.1, 0.0, 0.0), (0.0, 1.2, 1.0)), box((0.0, 0.0, 0.0),
                                                                  (1.2, 1.2, 1.0)),
             *steps, box((1.2, -1.0, 0.0), (4.0, 2.2, 1.8))]
    mesh = TriangleMesh(*merge(parts))
    (ramp,) = stair_ramps(mesh)
    lo, hi = ramp.vertices.min(0), ramp.vertices.max(0)
    assert (lo[0], lo[2], hi[0], hi[2]) == pytest.approx((0.0, 1.0, 0.9, 1.8))
    assert ramp.nosing_gap == pytest.approx(0.2)
    assert ramp.slope_deg == pytest.approx(math.degrees(math.atan(0.8 / 0.9)))


# ---------------------------------------------------------------- clipping, wide treads
def test_clip_triangles_keeps_the_positive_side_with_its_winding_and_area():
    from capsule_collision.core.authoring.clip import clip_triangles

    tri = np.array([[[0.0, 0, 0], [2, 0, 0], [0, 2, 0]]] * 4)
    x = tri[..., 0]
    pieces, source = clip_triangles(tri, np.stack([x[0] - 1.0, 1.0 - x[1], x[2] + 5.0,
                                                   x[3] - 5.0]))
    area = 0.5 * np.linalg.norm(np.cross(pieces[:, 1] - pieces[:, 0],
                                         pieces[:, 2] - pieces[:, 0]), axis=1)
    by = np.bincount(source, weights=area, minlength=4)
    # x > 1: the corner triangle (area 0.5); x < 1: the rest (1.5); all; nothing
    assert by == pytest.approx([0.5, 1.5, 2.0, 0.0])
    n = np.cross(pieces[:, 1] - pieces[:, 0], pieces[:, 2] - pieces[:, 0])
    assert (n[:, 2] > 0).all()  # every piece faces +z like its triangle


def test_treads_wider_than_the_flight_are_cut_at_the_ramps_sides():
    """Risers 1.2 m wide (y 0 - 1.2) under treads that run 1 m further out (y -1 - 1.2): the
    ramp takes the treads' parts across the flight, the 1 m beside it stays as floor."""
    floor = quad((-10, -10, 0), (10, -10, 0), (10, 10, 0), (-10, 10, 0))
    parts = [floor, box((1.8, -2.0, 0.0), (4.0, 3.2, 1.2))]
    for i in range(6):  # the sixth tread (x 1.5 - 1.8, at 1.2 m) is the top landing's edge
        xa, xb, z = 0.3 * i, 0.3 * (i + 1), 0.2 * (i + 1)
        parts.append(quad((xa, 1.2, z - 0.2), (xa, 0.0, z - 0.2), (xa, 0.0, z), (xa, 1.2, z)))
        parts.append(quad((xa, -1.0, z), (xb, -1.0, z), (xb, 1.2, z), (xa, 1.2, z)))
    mesh = TriangleMesh(*merge(parts))
    (ramp,) = stair_ramps(mesh)
    assert ramp.width == pytest.approx(1.2) and ramp.cut_faces.size == 10  # 5 treads
    assert (ramp.pieces[..., 1] <= 1e-9).all()  # only the parts beside the flight
    area = 0.5 * np.linalg.norm(np.cross(ramp.pieces[:, 1] - ramp.pieces[:, 0],
                                         ramp.pieces[:, 2] - ramp.pieces[:, 0]), axis=1)
    assert area.sum() == pytest.approx(5 * 0.3 * 1.0)
    assert not set(ramp.cut_faces.tolist()) & set(ramp.flight_faces.tolist())
