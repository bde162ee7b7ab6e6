"""Every overlay layer drawn with each kind of object in Object Mode and in Edit Mode
(issue 24, section 5): a mesh in Edit Mode keeps its face attributes in the edit data, where
reading the original mesh's arrays raised ``TypeError: foreach_get(..) sequence length
mismatch`` on every redraw (addon/overlay_layers.py). The data layers are compared here;
tests/blender/test_addon_overlay.py draws them into a GPUOffScreen in each mode
(overlay_gl_script.py ``modes``)."""

import blender_helpers as bh
import numpy as np
import ops_scenes as S
import pytest


@pytest.fixture
def ov(addon):
    return bh.addon_module(addon, "addon.overlay")


def _geometry(ov, scene):
    ov.invalidate()
    return ov.overlay_geometry(scene, bh.depsgraph())


def _edit(bpy, ob):
    for other in bpy.context.selected_objects:
        other.select_set(False)
    bpy.context.view_layer.objects.active = ob
    ob.select_set(True)
    bpy.ops.object.mode_set(mode="EDIT")
    bpy.context.view_layer.update()  # the live check re-reads the level from the edit data
    assert ob.mode == "EDIT"


def test_every_layer_has_something_to_draw_in_object_mode(ov, scene, bpy_module):
    S.every_result_level(bpy_module)
    g = _geometry(ov, scene)
    # every layer but render against collision, which needs a render/collision split and is
    # drawn in both modes by tests/blender/test_addon_diff.py
    assert set(g.faces) == {layer.name for layer in ov.FACE_LAYERS} - {"collision_diff"}
    for name, (tris, colors) in g.faces.items():
        assert tris.shape[0] > 0 and tris.shape[0] == colors.shape[0], name
    assert g.trace_lines.shape[0] and g.cell_tris.shape[0] and g.spawn_lines.shape[0]
    assert g.capsule_lines.shape[0] and g.push_lines.shape[0]


@pytest.mark.parametrize("edited", ["Platform", "Steps", "Ground West"])
def test_a_level_mesh_in_edit_mode_draws_every_layer_as_in_object_mode(ov, scene,
                                                                       bpy_module, edited):
    """Platform carries the penetration and stand flags, Steps the stair flags, Ground West
    the spawn's reachable floor: each in Edit Mode, every layer draws the same triangles in
    the same colours as in Object Mode (read from the edit data, not dropped)."""
    bpy = bpy_module
    S.every_result_level(bpy)
    before = _geometry(ov, scene)
    _edit(bpy, bpy.data.objects[edited])
    after = _geometry(ov, scene)
    assert set(after.faces) == set(before.faces)
    for name, (tris, colors) in before.faces.items():
        np.testing.assert_array_equal(after.faces[name][0], tris, err_msg=name)
        np.testing.assert_array_equal(after.faces[name][1], colors, err_msg=name)
    assert after.legend == before.legend
    for name in ("capsule_lines", "push_lines", "trace_lines", "cell_tris", "spawn_lines"):
        np.testing.assert_array_equal(getattr(after, name), getattr(before, name), name)


def test_a_face_moved_in_edit_mode_keeps_its_colour_on_the_new_place(ov, addon, scene,
                                                                    bpy_module):
    """The edit data is what is drawn: the walkable top of the platform (0.36 m) lifted 1 m
    in Edit Mode is drawn walkable at 1.36 m, before anything is flushed to the mesh."""
    import bmesh  # noqa: PLC0415

    bpy = bpy_module
    S.every_result_level(bpy)
    lift = bh.addon_module(addon, "addon.overlay_layers").SURFACE_LIFT_M

    def top_corners(z):
        tris, colors = _geometry(ov, scene).face_layer("walkability")
        at = np.abs(tris[:, 2] - (z + lift)) < 1e-4
        return tris[at], colors[at]

    before, colors = top_corners(0.36)
    assert before.shape[0] == 6  # the platform's top: two triangles
    ob = bpy.data.objects["Platform"]
    _edit(bpy, ob)
    bm = bmesh.from_edit_mesh(ob.data)
    for v in bm.verts:
        v.co.z += 1.0
    bmesh.update_edit_mesh(ob.data)
    after, after_colors = top_corners(1.36)
    assert top_corners(0.36)[0].shape[0] == 0
    np.testing.assert_allclose(after[:, :2], before[:, :2], atol=1e-5)
    np.testing.assert_array_equal(after_colors, colors)


@pytest.mark.parametrize("edited", ["Trace Route", "Reachability Cells"])
def test_a_trace_or_cells_object_in_edit_mode_is_left_to_blender(ov, scene, bpy_module,
                                                                 edited):
    """The walk's trace and reachability's cells object in Edit Mode: Blender draws their
    points and edges itself; the overlay skips them (no error) and draws everything else."""
    bpy = bpy_module
    S.every_result_level(bpy)
    before = _geometry(ov, scene)
    _edit(bpy, bpy.data.objects[edited])
    after = _geometry(ov, scene)
    if edited == "Trace Route":
        assert after.trace_lines.shape[0] == 0 and after.cell_tris.shape[0] > 0
    else:
        assert after.cell_tris.shape[0] == 0 and after.trace_lines.shape[0] > 0
    for name, (tris, _colors) in before.faces.items():
        np.testing.assert_array_equal(after.faces[name][0], tris, err_msg=name)


def test_a_capsule_3_mm_into_the_floor_is_labelled_in_mm_in_overlay_and_panel(ov, addon,
                                                                               scene,
                                                                               bpy_module):
    """Depths below 1 cm in millimetres (issue 24, section 5): the overlay's label and the
    panel's row say "3 mm", never "0.00 m"."""
    bpy = bpy_module
    marks = bh.addon_module(addon, "addon.overlay_marks")
    v, f = S.grid(4, 4.0)
    S.mesh_object(bpy, "Floor", v, f)
    S.capsule(bpy, "Cap", (0.0, 0.0, -0.003))
    bpy.context.view_layer.update()
    assert bpy.ops.capsule_collision.check_penetration() == {"FINISHED"}
    (mark,) = marks.push_marks(scene)
    assert mark.label == "Cap: 3 mm deep", mark.label
    labels = [r.label for r in scene.capsule_collision.results if r.capsule == "Cap"]
    assert any("deepest 3 mm" in t for t in labels), labels
    assert not any("0.00" in t for t in labels), labels


def test_a_ledge_over_no_floor_says_so_in_the_panel(scene, bpy_module):
    """A floor 2 m up with nothing below (issue 24, section 5): its ledge row says "over no
    floor below", never the search limit as "deepest 100 m"."""
    bpy = bpy_module
    v, f = S.grid(2, 4.0)
    S.mesh_object(bpy, "Deck", v, f, location=(0.0, 0.0, 2.0))
    bpy.context.view_layer.update()
    assert bpy.ops.capsule_collision.ledge_audit() == {"FINISHED"}
    labels = [r.label for r in scene.capsule_collision.results if r.kind == "LEDGE"]
    assert labels and all("over no floor below" in t for t in labels), labels
    assert not any("100" in t for t in labels), labels


def test_headroom_and_islands_are_drawn_in_distinct_colours(addon):
    """Low headroom and islands lie on the same kind of floor (a slab over an island's
    floor): the headroom layer's colour stays at least 0.45 apart (RGB) from every other
    colour a face can take, the island's violet and the ceiling's purple included; in
    report.png a headroom face is a finding (red) and an island violet."""
    layers = bh.addon_module(addon, "addon.overlay_layers")
    reach = bh.addon_module(addon, "addon.overlay_reach")
    render = bh.addon_module(addon, "levelcheck.render")
    head = np.array(layers.LAYER_BY_NAME["headroom"].color[:3])
    others = [np.array(layer.color[:3]) for layer in layers.FACE_LAYERS
              if layer.color is not None and layer.name != "headroom"]
    others += [c[:3] for c in reach.REACH_COLORS[1:]] + [c[:3] for c in
                                                          layers.WALKABILITY_COLORS]
    gaps = [float(np.linalg.norm(head - c)) for c in others]
    assert min(gaps) >= 0.45, gaps
    island = np.array(render.COLORS["island"][:3])
    assert np.linalg.norm(np.array(render.COLORS["finding"][:3]) - island) >= 0.45
