"""Scene reading (addon/scene_data.py) in real Blender: what core sees equals the scene."""

import math

import blender_helpers as bh
import numpy as np
import pytest
from capsule_collision.core import Capsule, TriangleMesh


@pytest.fixture
def sd(addon):
    return bh.addon_module(addon, "addon.scene_data")


def _level(sd, scene):
    return sd.read_level(bh.depsgraph(), scene)


def _outward(level, center):
    """Per triangle: dot(normal, centroid - center) (> 0 when the normal points out)."""
    v, t = level.mesh.vertices, level.mesh.triangles
    cen = v[t].mean(axis=1)
    return np.einsum("ij,ij->i", level.mesh.normals, cen - np.asarray(center))


def test_rotated_scaled_box_is_world_space_float64_with_normals_out(sd, scene):
    ob = bh.box("Box", location=(3, -2, 1), rotation=(0.3, 0.2, 1.1), scale=(2, 1, 0.5))
    level = _level(sd, scene)
    m = np.array(ob.matrix_world)
    local = np.array(bh.box_vertices((-1, -1, -1), (1, 1, 1)), dtype=np.float64)
    expected = local @ m[:3, :3].T + m[:3, 3]
    assert level.mesh.vertices.dtype == np.float64
    np.testing.assert_allclose(level.mesh.vertices, expected, atol=1e-6)
    assert level.mesh.n_triangles == 12
    assert (_outward(level, (3, -2, 1)) > 0).all()
    assert level.objects == ("Box",)
    np.testing.assert_array_equal(level.tri_orig_face, level.tri_face)
    assert sorted(np.bincount(level.tri_face).tolist()) == [2] * 6


@pytest.mark.parametrize("scale", [(-1, 1, 1), (1, 1, -2), (-1, -1, -1)])
def test_negative_scale_flips_winding_so_normals_point_out(sd, scene, scale):
    bh.box("Mirrored", location=(0, 0, 5), scale=scale)
    level = _level(sd, scene)
    assert (_outward(level, (0, 0, 5)) > 0).all()
    # the top of the box (highest triangles) faces up: a floor stays a floor
    top = level.mesh.vertices[level.mesh.triangles].mean(axis=1)[:, 2].argmax()
    assert level.mesh.normals[top][2] > 0.99


def test_float32_positions_are_read_as_blender_stores_them(sd, scene):
    bh.mesh_object("Tri", [(0.1, 0.2, 0.3), (1.1, 0.2, 0.3), (0.1, 1.3, 0.3)], [(0, 1, 2)])
    level = _level(sd, scene)
    assert level.mesh.vertices[0, 0] == float(np.float32(0.1))
    assert level.mesh.vertices[0, 0] != 0.1


def test_concave_ngon_is_blenders_triangulation_without_invented_area(sd, scene):
    # a U shape (8 corners, concave): area 3*2 - 1*1 = 5; a fan from corner 0 covers the notch
    u = [(0, 0, 0), (3, 0, 0), (3, 2, 0), (2, 2, 0), (2, 1, 0), (1, 1, 0), (1, 2, 0), (0, 2, 0)]
    bh.mesh_object("U", u, [tuple(range(8))])
    level = _level(sd, scene)
    assert level.mesh.n_triangles == 6
    assert level.mesh.areas.sum() == pytest.approx(5.0)
    assert (level.mesh.normals[:, 2] > 0.99).all()
    # no triangle covers the notch centre (1.5, 1.5)
    c = level.mesh.vertices[level.mesh.triangles].mean(axis=1)
    assert not ((np.abs(c[:, 0] - 1.5) < 0.5) & (c[:, 1] > 1.0)).any()
    assert (level.tri_face == 0).all() and (level.tri_orig_face == 0).all()


def test_mixed_tris_quads_and_ngons_map_every_triangle_to_its_face(sd, scene):
    verts = [(0, 0, 0), (1, 0, 0), (1, 1, 0), (0, 1, 0), (2, 0, 0), (3, 0, 0), (3, 1, 0),
             (2.5, 1.5, 0), (2, 1, 0)]
    bh.mesh_object("Mixed", verts, [(0, 1, 2), (0, 2, 3), (4, 5, 6, 7, 8), (1, 4, 8, 2)])
    level = _level(sd, scene)
    assert np.bincount(level.tri_face).tolist() == [1, 1, 3, 2]
    face_area = np.bincount(level.tri_face, weights=level.mesh.areas)
    np.testing.assert_allclose(face_area, [0.5, 0.5, 1.25, 1.0])


def test_array_modifier_of_steps_reads_every_step_and_maps_none_back(sd, scene):
    step = bh.box("Steps", lo=(0, 0, 0), hi=(0.3, 2, 0.2))
    mod = step.modifiers.new("array", "ARRAY")
    mod.count = 5
    mod.use_relative_offset = False
    mod.use_constant_offset = True
    mod.constant_offset_displace = (0.3, 0, 0.2)
    level = _level(sd, scene)
    assert level.mesh.n_triangles == 5 * 12
    assert level.mesh.aabb[1].tolist() == pytest.approx([1.5, 2.0, 1.0])
    assert (level.tri_orig_face == sd.NO_ORIGINAL_FACE).all()
    assert level.tri_face.max() == 29


def test_mirror_modifier_reads_the_mirrored_half_unmapped(sd, scene):
    half = bh.box("Half", lo=(0.5, -1, 0), hi=(1.5, 1, 1))
    half.modifiers.new("mirror", "MIRROR")
    level = _level(sd, scene)
    assert level.mesh.n_triangles == 24
    assert level.mesh.aabb[0][0] == pytest.approx(-1.5)
    assert (level.tri_orig_face == -1).all()
    # the mirrored copy keeps its normals out
    left = level.mesh.vertices[level.mesh.triangles].mean(axis=1)[:, 0] < 0
    assert (_outward(level, (-1, 0, 0.5))[left] > 0).all()


def test_deforming_modifier_keeps_the_identity_face_map(sd, scene):
    ob = bh.box("Bent")
    mod = ob.modifiers.new("deform", "DISPLACE")  # no texture: 0.5 * strength along normals
    mod.strength = 1.0
    level = _level(sd, scene)
    np.testing.assert_array_equal(level.tri_orig_face, level.tri_face)
    # the evaluated (displaced) positions, not the original cube
    assert np.abs(level.mesh.vertices).max() > 1.2


def test_collection_instance_and_linked_duplicate(sd, scene):
    import bpy  # noqa: PLC0415

    props = bpy.data.collections.new("Props")
    bh.box("Crate", lo=(0, 0, 0), hi=(1, 1, 1), collection=props)
    bh.collection_instance("Spawn", props, location=(10, 0, 0), rotation=(0, 0, math.pi / 2))
    a = bh.floor("FloorA", size=2)
    bh.floor("FloorB", mesh=a.data, location=(0, 0, 3))  # linked duplicate
    level = _level(sd, scene)
    assert set(level.objects) == {"Spawn/Crate", "FloorA", "FloorB"}
    crate = level.tri_object == level.objects.index("Spawn/Crate")
    pts = level.mesh.vertices[np.unique(level.mesh.triangles[crate])]
    assert pts.min(axis=0).tolist() == pytest.approx([9, 0, 0], abs=1e-6)
    assert pts.max(axis=0).tolist() == pytest.approx([10, 1, 1], abs=1e-6)
    np.testing.assert_array_equal(level.tri_orig_face[crate], level.tri_face[crate])
    b = level.tri_object == level.objects.index("FloorB")
    assert level.mesh.vertices[level.mesh.triangles[b]][..., 2].tolist() == [[3.0] * 3] * 2


def test_geometry_nodes_instances_are_read_and_unmapped(sd, scene):
    base = bh.mesh_object("Points", [(0, 0, 0), (4, 0, 0)], [])
    bh.instance_cubes_on_points(base, cube_size=1.0)
    level = _level(sd, scene)
    assert level.objects == ("Points/Points",)
    assert level.mesh.n_triangles == 24
    assert level.mesh.aabb[0].tolist() == pytest.approx([-0.5, -0.5, -0.5])
    assert level.mesh.aabb[1].tolist() == pytest.approx([4.5, 0.5, 0.5])
    assert (level.tri_orig_face == -1).all()


def test_centimetre_scene_is_converted_to_metres(sd, scene):
    scene.unit_settings.scale_length = 0.01
    bh.floor("Floor", size=400.0, z=50.0)  # 4 m square, 0.5 m up
    level = _level(sd, scene)
    assert level.unit_scale == 0.01
    assert level.mesh.aabb[1].tolist() == pytest.approx([2.0, 2.0, 0.5])


def test_empty_level_is_a_clear_value_error(sd, scene):
    bh.empty("Nothing")
    with pytest.raises(ValueError, match="no collision meshes"):
        _level(sd, scene)


def test_hidden_objects_and_extension_objects_are_not_visible_collision(sd, scene):
    import bpy  # noqa: PLC0415

    bh.floor("Floor")
    bh.box("Hidden").hide_set(True)
    results = bpy.data.collections.new(sd.RESULTS_COLLECTION)
    scene.collection.children.link(results)
    bh.mesh_object("Trace", [(0, 0, 0), (1, 0, 0), (0, 1, 0)], [(0, 1, 2)], collection=results)
    role = bh.box("RoleObject", location=(5, 5, 5))
    assert bh.set_role(role, "MARKER")
    assert _level(sd, scene).objects == ("Floor",)
    assert [o.name for o in sd.collision_objects(scene, bh.depsgraph())] == ["Floor"]


def test_collection_source_includes_hidden_members_only(sd, scene):
    import bpy  # noqa: PLC0415

    coll = bpy.data.collections.new("Collision")
    scene.collection.children.link(coll)
    bh.floor("Visual", z=1.0)
    bh.floor("Proxy", collection=coll).hide_set(True)
    s = scene.capsule_collision
    s.collision_source = "COLLECTION"
    s.collision_collection = coll
    level = _level(sd, scene)
    assert level.objects == ("Proxy",)
    assert level.mesh.aabb[1][2] == pytest.approx(0.0)
    s.collision_collection = None
    with pytest.raises(ValueError, match="no collection"):
        _level(sd, scene)


@pytest.mark.parametrize("name, collides", [
    ("UCX_Wall", True), ("UBX_Box.001", True), ("UCP_Pill", True), ("USP_Ball", True),
    ("wall-col", True), ("wall-colonly", True), ("Wall_col", True), ("Wall_Collision", True),
    ("Wall_col.002", True), ("Wall", False), ("ucx_wall", False), ("Wall_column", False),
    ("Collider", False),
])
def test_naming_convention(sd, name, collides):
    assert sd.matches_naming_convention(name) is collides


def test_naming_source_reads_only_convention_names(sd, scene):
    bh.floor("Floor", z=2.0)
    bh.floor("UCX_Floor").hide_set(True)
    bh.floor("Ramp_col", z=-1.0)
    scene.capsule_collision.collision_source = "NAMING"
    level = _level(sd, scene)
    assert set(level.objects) == {"UCX_Floor", "Ramp_col"}


def test_results_equal_core_on_the_same_arrays(sd, scene):
    bh.grid("Terrain", 20, size=10.0, rotation=(0.1, 0, 0.4))
    bh.box("Pillar", lo=(-0.5, -0.5, 0), hi=(0.5, 0.5, 3), scale=(-1, 1, 1))
    level = _level(sd, scene)
    ref = TriangleMesh(level.mesh.vertices.copy(), level.mesh.triangles.copy())
    for foot in [(0.6, 0, 0), (2.0, 1.0, -0.2), (-3, 3, 1)]:
        cap = Capsule.upright(foot, 1.8, 0.35)
        got = level.mesh.penetrating_triangles(cap)
        np.testing.assert_array_equal(got, ref.penetrating_triangles(cap))
    assert level.mesh.penetrating_triangles(Capsule.upright((0.6, 0, 0), 1.8, 0.35)).size
    faces = level.faces_of(level.mesh.penetrating_triangles(Capsule.upright((0.6, 0, 0), 1.8,
                                                                            0.35)))
    assert set(faces) >= {"Pillar"}


def test_stamp_changes_with_geometry_and_not_otherwise(sd, scene):
    ob = bh.floor("Floor")
    s1 = _level(sd, scene).stamp
    assert _level(sd, scene).stamp == s1
    ob.location.z = 0.5
    assert _level(sd, scene).stamp != s1


def test_capsule_of_uses_foot_axis_scale_and_units(sd, scene):
    cap = bh.capsule("Cap", location=(1, 2, 3), radius=0.5, height=2.0)
    scene.view_layers[0].update()  # matrix_world
    c = sd.capsule_of(cap, 1.0)
    assert c.a.tolist() == pytest.approx([1, 2, 3.5]) and c.b.tolist() == pytest.approx([1, 2, 4.5])
    assert c.radius == pytest.approx(0.5)
    cap.rotation_euler = (math.pi / 2, 0, 0)  # axis along -Y
    cap.scale = (2, 1, 1.5)
    scene.view_layers[0].update()
    c = sd.capsule_of(cap, 0.01)
    assert c.radius == pytest.approx(0.01)
    assert c.a.tolist() == pytest.approx([0.01, 0.02 - 0.01, 0.03], abs=1e-9)
    assert c.b.tolist() == pytest.approx([0.01, 0.02 - 0.02, 0.03], abs=1e-9)
    cap.capsule_collision.height = 0.9
    with pytest.raises(ValueError, match="Cap"):
        sd.capsule_of(cap, 1.0)
    scene.view_layers[0].update()


def test_path_points_from_curves_and_mesh_polylines(sd, scene):
    import bpy  # noqa: PLC0415

    cu = bpy.data.curves.new("PathCurve", "CURVE")
    cu.dimensions = "3D"
    sp = cu.splines.new("POLY")
    sp.points.add(2)
    for p, co in zip(sp.points, [(0, 0, 0), (2, 0, 0), (2, 3, 0)]):
        p.co = (*co, 1)
    ob = bpy.data.objects.new("Path", cu)
    ob.location = (0, 0, 1)
    scene.collection.objects.link(ob)
    pts = sd.path_points(ob, bh.depsgraph(), 1.0)
    assert pts.tolist() == [[0, 0, 1], [2, 0, 1], [2, 3, 1]]
    bez = bpy.data.curves.new("Bez", "CURVE")
    bez.resolution_u = 8
    bsp = bez.splines.new("BEZIER")
    bsp.bezier_points.add(1)
    bsp.bezier_points[0].co = (0, 0, 0)
    bsp.bezier_points[1].co = (4, 0, 0)
    for bp in bsp.bezier_points:
        bp.handle_left_type = bp.handle_right_type = "AUTO"
    bob = bpy.data.objects.new("BezPath", bez)
    scene.collection.objects.link(bob)
    bpts = sd.path_points(bob, bh.depsgraph(), 0.5)
    assert len(bpts) == 9 and bpts[0].tolist() == [0, 0, 0] and bpts[-1].tolist() == [2, 0, 0]
    # a mesh polyline whose vertex order is not its edge order
    me = bpy.data.meshes.new("line")
    me.from_pydata([(1, 0, 0), (0, 0, 0), (2, 0, 0)], [(1, 0), (0, 2)], [])
    line = bh.mesh_object("Line", None, None, mesh=me)
    assert sd.path_points(line, bh.depsgraph(), 1.0)[:, 0].tolist() in ([0, 1, 2], [2, 1, 0])
    me2 = bpy.data.meshes.new("dot")
    me2.from_pydata([(0, 0, 0)], [], [])
    with pytest.raises(ValueError, match="at least 2"):
        sd.path_points(bh.mesh_object("Dot", None, None, mesh=me2), bh.depsgraph(), 1.0)
    me3 = bpy.data.meshes.new("y")
    me3.from_pydata([(0, 0, 0), (1, 0, 0), (2, 0, 0), (1, 1, 0)], [(0, 1), (1, 2), (1, 3)], [])
    with pytest.raises(ValueError, match="branches"):
        sd.path_points(bh.mesh_object("Y", None, None, mesh=me3), bh.depsgraph(), 1.0)
    with pytest.raises(ValueError, match="curve or a mesh"):
        sd.path_points(bh.empty("NoPath"), bh.depsgraph(), 1.0)


def _random_faces_mesh(seed, n_faces=400):
    """Separate random faces: triangles, convex/concave/warped/degenerate quads, n-gons."""
    import bpy  # noqa: PLC0415

    rng = np.random.default_rng(seed)
    verts, faces = [], []
    for i in range(n_faces):
        k = int(rng.choice([3, 4, 4, 4, 5, 7]))
        base = len(verts)
        ang = np.sort(rng.uniform(0, 2 * np.pi, k))
        rad = rng.uniform(0.2, 1.0, k)
        pts = np.stack([rad * np.cos(ang), rad * np.sin(ang), rng.normal(0, 0.3, k)], 1)
        kind = i % 5
        if k == 4 and kind == 1:
            pts[1] = pts[0] * 0.5 + pts[2] * 0.5  # a corner on the 0-2 diagonal (tie)
        if k == 4 and kind == 2:
            pts[2] = pts[0]  # degenerate
        if k == 4 and kind == 3:
            pts[3] = -0.1 * pts[1]  # concave at corner 3
        verts += (pts + rng.uniform(-50, 50, 3)).tolist()
        faces.append(tuple(range(base, base + k)))
    me = bpy.data.meshes.new(f"random{seed}")
    me.from_pydata(verts, [], faces)
    me.update()
    return me


@pytest.mark.parametrize("seed", [0, 1])
def test_mesh_triangles_are_blenders_corner_triangles(sd, scene, seed):
    """The triangles-only shortcut and the bulk read both equal Blender's own triangles."""
    import bpy  # noqa: PLC0415

    mixed = _random_faces_mesh(seed)
    rng = np.random.default_rng(seed)
    tris_only = bpy.data.meshes.new("tris")
    tris_only.from_pydata(rng.normal(size=(30, 3)).tolist(), [],
                          [tuple(rng.choice(30, 3, replace=False)) for _ in range(40)])
    for me in (mixed, tris_only):
        cv = np.empty(len(me.loops), np.int32)
        me.attributes[".corner_vert"].data.foreach_get("value", cv)
        _, tris, tri_face = sd.mesh_triangles(me)
        ref = np.array([tuple(t.vertices) for t in me.loop_triangles])
        ref_face = np.array([t.polygon_index for t in me.loop_triangles])
        np.testing.assert_array_equal(tris, ref)
        np.testing.assert_array_equal(tri_face, ref_face)


def test_mirrored_collection_instance_keeps_normals_out(sd, scene):
    import bpy  # noqa: PLC0415

    props = bpy.data.collections.new("Props")
    bh.box("Crate", lo=(-0.5, -0.5, -0.5), hi=(0.5, 0.5, 0.5), collection=props)
    bh.collection_instance("Mirrored", props, location=(4, 0, 2), scale=(-1, 2, 1))
    level = _level(sd, scene)
    assert level.objects == ("Mirrored/Crate",)
    assert (_outward(level, (4, 0, 2)) > 0).all()


def test_objects_disabled_in_viewports_are_not_read(sd, scene):
    bh.floor("Floor")
    bh.box("Disabled").hide_viewport = True
    assert _level(sd, scene).objects == ("Floor",)
