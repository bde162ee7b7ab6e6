"""Gizmos and the viewport overlay (addon/gizmos.py, addon/overlay*.py).

Gizmo setup/draw and draw handlers are never called headless, so the tests pin: registration,
the pure capsule outline, the overlay's data layers (arrays, no GPU), the screen layout, and,
in a subprocess (an EGL failure aborts the process, reference 3), the overlay drawn into a
GPUOffScreen after a tiny Workbench render: pixels at the push-out arrow, the depth label,
penetrated faces, instanced and arrayed faces, mirrored faces behind Blender's own depth,
markers sharing a spot, only the edited object's batches rebuilt, and reachability's
colours, cramped squares and spawn ring.
"""

import json
import os
import subprocess
import sys

import blender_helpers as bh
import numpy as np
import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
HERE = os.path.dirname(os.path.abspath(__file__))


@pytest.fixture
def gz(addon):
    return bh.addon_module(addon, "addon.gizmos")


@pytest.fixture
def ov(addon):
    return bh.addon_module(addon, "addon.overlay")


@pytest.fixture
def text(addon):
    return bh.addon_module(addon, "addon.overlay_text")


def _segment_distance(p, a, b):
    ab = b - a
    t = np.clip((p - a) @ ab / (ab @ ab), 0.0, 1.0) if ab @ ab > 0 else np.zeros(len(p))
    return np.linalg.norm(p - (a + t[:, None] * ab), axis=1)


@pytest.mark.parametrize("radius, height", [(0.35, 1.8), (0.5, 1.0), (2.0, 10.0)])
def test_capsule_outline_lies_on_the_capsule(gz, radius, height):
    v = gz.capsule_wire_vertices(radius, height)
    assert v.dtype == np.float32 and v.shape[1] == 3 and v.shape[0] % 2 == 0
    d = _segment_distance(v.astype(np.float64), np.array([0, 0, radius]),
                          np.array([0, 0, height - radius]))
    np.testing.assert_allclose(d, radius, rtol=1e-5)
    assert v[:, 2].min() == pytest.approx(0.0, abs=1e-6)  # the foot is the origin
    assert v[:, 2].max() == pytest.approx(height, rel=1e-6)


def test_capsule_outline_rejects_impossible_sizes(gz):
    with pytest.raises(ValueError, match="height"):
        gz.capsule_wire_vertices(0.5, 0.99)
    with pytest.raises(ValueError, match="radius"):
        gz.capsule_wire_vertices(0.0, 1.0)


def test_gizmo_and_overlay_registration(gz, ov, bpy_module):
    # a registered class carries its RNA struct; unregistering removes it
    assert "bl_rna" in gz.CAPSULE_COLLISION_GGT_capsules.__dict__
    assert "bl_rna" in gz.CAPSULE_COLLISION_GT_capsule.__dict__
    assert len(ov._handles) == 2  # noqa: SLF001  (POST_VIEW and POST_PIXEL, read-only)


def _flag(mesh, faces, name="capsule_penetration", dtype="BOOLEAN", values=None):
    attr = mesh.attributes.new(name, dtype, "FACE")
    vals = np.zeros(len(mesh.polygons), dtype=bool if dtype == "BOOLEAN" else np.int8)
    vals[list(faces)] = True if values is None else values
    attr.data.foreach_set("value", vals)
    mesh.update()


def _geometry(ov, scene):
    ov.invalidate()
    return ov.overlay_geometry(scene, bh.depsgraph())


def test_penetration_layer_is_the_flagged_faces(ov, scene):
    floor = bh.grid("Floor", 4, size=4.0, location=(10, 0, 0))
    _flag(floor.data, [0, 5])
    g = _geometry(ov, scene)
    tris = g.penetration_tris.reshape(-1, 3, 3)
    assert tris.shape[0] == 4  # two quads
    cen = tris.mean(axis=1)
    # quad 0 spans x in [8, 9], y in [-2, -1]; quad 5 x in [9, 10], y in [-1, 0]
    assert sorted({(int(np.floor(x)), int(np.floor(y))) for x, y, _ in cen}) == [(8, -2), (9, -1)]
    np.testing.assert_allclose(g.face_layer("penetration")[1][0], ov.PENETRATION_TINT, rtol=1e-6)
    scene.capsule_collision.show_penetration = False
    assert _geometry(ov, scene).penetration_tris.shape[0] == 0
    scene.capsule_collision.show_penetration = True
    scene.capsule_collision.show_overlay = False
    assert _geometry(ov, scene).penetration_tris.shape[0] == 0


def test_walkability_trace_event_and_capsule_layers(ov, scene, bpy_module):
    floor = bh.grid("Floor", 2, size=2.0)
    _flag(floor.data, [0, 1, 2, 3], name="walkability", dtype="INT8", values=[0, 1, 2, 3])
    g = _geometry(ov, scene)
    assert g.walk_tris.shape == (24, 3)
    np.testing.assert_allclose(np.unique(g.walk_colors, axis=0),
                               np.unique(ov.WALKABILITY_COLORS, axis=0))
    trace = bh.mesh_object("Trace", [(0, 0, 0), (1, 0, 0), (2, 0, 1)], [])
    trace.data.edges.add(2)
    trace.data.edges.foreach_set("vertices", np.array([0, 1, 1, 2], np.int32))
    trace.data.attributes.new("grounded", "BOOLEAN", "POINT").data.foreach_set(
        "value", np.array([True, True, False]))
    bh.set_role(trace, "TRACE")
    marker = bh.empty("step_too_high Path", location=(2, 0, 1))
    bh.set_role(marker, "MARKER")
    marker["kind"] = "step_too_high"
    marker["value"] = 0.45
    scene.capsule_collision.live_check = False  # the stored state below is what is drawn
    cap = bh.capsule("Cap", location=(0, 0, 0.5))
    cap.capsule_collision.penetrating_count = 3
    bpy_module.context.view_layer.update()
    g = _geometry(ov, scene)
    assert g.trace_lines.shape == (4, 3)
    np.testing.assert_allclose(g.trace_colors[:2], [ov.TRACE_GROUNDED] * 2, rtol=1e-6)
    np.testing.assert_allclose(g.trace_colors[2:], [ov.TRACE_AIRBORNE] * 2, rtol=1e-6)
    (event,) = g.events
    assert event.label == "step 0.45 m" and event.kind == "step_too_high"
    assert event.position.tolist() == pytest.approx([2, 0, 1])
    assert event.color == ov.EVENT_COLORS["step_too_high"]
    assert g.capsule_lines.shape[0] > 0
    assert (g.capsule_colors == np.array(ov.RED, np.float32)).all()
    assert g.capsule_lines[:, 2].min() == pytest.approx(0.5, abs=1e-6)
    assert g.walk_tris.shape[0] == 24  # the capsule and trace did not join the level layers
    texts = [t for _, t in g.legend]
    assert texts[:4] == ["Walkable", "Steep", "Wall", "Ceiling"]
    assert "Event: step" in texts


def test_every_event_kind_has_its_own_colour(ov, addon):
    core = bh.addon_module(addon, "core")
    assert set(ov.EVENT_COLORS) == set(core.EVENTS)
    assert len(set(ov.EVENT_COLORS.values())) == len(ov.EVENT_COLORS)


def _instances_and_array(bpy_module):
    coll = bpy_module.data.collections.new("Props")
    prop = bh.box("Prop", lo=(0, 0, 0), hi=(1, 1, 0.5), collection=coll)
    _flag(prop.data, [1], name="cc_cannot_stand")  # the top face
    bh.collection_instance("Props A", coll, location=(-3, 0, 0))
    bh.collection_instance("Props B", coll, location=(-3, 3, 0), scale=(-1, 1, 1))
    tiles = bh.floor("Tiles", size=1.0, location=(2, 0, 0))
    mod = tiles.modifiers.new("array", "ARRAY")
    mod.count = 3
    mod.relative_offset_displace = (1.2, 0, 0)
    bpy_module.context.view_layer.update()
    return tiles


def test_collection_instances_draw_the_instanced_objects_flags(ov, scene, bpy_module):
    _instances_and_array(bpy_module)
    stand = _geometry(ov, scene).face_layer("stand")[0].reshape(-1, 3, 3)
    assert stand.shape[0] == 4  # the top face of each instance, 2 triangles each
    cen = stand.mean(axis=1)
    # instance A covers x in [-3, -2], B (mirrored in x) x in [-4, -3]; both tops at z = 0.5
    assert sorted(np.round(cen[:, 0] // 1).tolist()) == [-4, -4, -3, -3]
    assert (cen[:, 2] > 0.5).all()  # on the outward side of the top face, both instances


def test_array_copies_get_walkability_colours(ov, scene, bpy_module):
    _instances_and_array(bpy_module)
    with bpy_module.context.temp_override(selected_objects=[], active_object=None):
        assert bpy_module.ops.capsule_collision.classify_walkability() == {"FINISHED"}
    tiles = bpy_module.data.objects["Tiles"]
    assert set(np.unique([a.value for a in tiles.data.attributes["walkability"].data])) == {-1}
    corners, colors = _geometry(ov, scene).face_layer("walkability")
    cen = corners.reshape(-1, 3, 3).mean(axis=1)
    tiles_tris = cen[cen[:, 0] > 1.0]
    assert tiles_tris.shape[0] == 6  # three copies, 2 triangles each, none maps back
    copies = np.floor((tiles_tris[:, 0] - 1.5) / 1.2).astype(int)  # copy k: x from 1.5 + 1.2 k
    assert sorted(copies.tolist()) == [0, 0, 1, 1, 2, 2]
    tiles_colors = colors.reshape(-1, 3, 4)[cen[:, 0] > 1.0][:, 0]
    np.testing.assert_allclose(tiles_colors, [ov.WALKABILITY_COLORS[0]] * 6, rtol=1e-6)


def test_mirrored_objects_highlight_their_outward_side(ov, scene):
    for name, scale in (("Plain", (1, 1, 1)), ("Mirrored", (-1, 1, 1)), ("Flipped", (1, 1, -1))):
        ob = bh.box(name, lo=(0, 0, 0), hi=(1, 1, 1), location=(0, 0, 5), scale=scale)
        _flag(ob.data, [1], name="cc_ledge")  # the +Z face of the mesh
    ledge = _geometry(ov, scene).face_layer("ledges")[0].reshape(-1, 3, 3)
    z = ledge[:, :, 2].mean(axis=1)
    # plain and mirrored: the top at z = 6, lifted above it; flipped: the face ends at z = 4,
    # the solid's bottom, lifted below it: always outside the solid, where the eye sees it
    assert sorted(np.round(z, 4).tolist()) == pytest.approx(
        [4.0 - 0.002] * 2 + [6.0 + 0.002] * 4, abs=1e-5)


def test_penetrating_capsule_gets_contacts_push_out_and_depth(ov, scene, bpy_module):
    bh.box("Wall", lo=(-3, 0, 0), hi=(3, 0.5, 3))
    cap = bh.capsule("Cap", location=(0, 0.1, 0.01))  # axis 0.1 m inside the wall
    bpy_module.context.view_layer.update()  # the live check finds it penetrating
    assert cap.capsule_collision.penetrating_count > 0
    g = _geometry(ov, scene)
    (mark,) = g.pushes
    np.testing.assert_allclose(mark.vector, (0, -0.45, 0), atol=1e-6)
    assert mark.label == "Cap: 0.45 m deep" and not mark.buried
    assert np.abs(mark.contacts[:, 1]).max() < 1e-6  # on the wall's front face, y = 0
    assert g.push_lines.shape[0] > 0
    texts = [t for _, t in g.legend]
    assert "Push-out" in texts and "Penetrated" in texts


def test_centimetre_scene_sizes_follow_the_unit_scale(ov, scene, bpy_module):
    scene.unit_settings.scale_length = 0.01
    bh.box("Wall", lo=(-300, 0, 0), hi=(300, 50, 300))
    bh.capsule("Cap", location=(0, 10, 1), radius=35, height=180)
    bpy_module.context.view_layer.update()
    g = _geometry(ov, scene)
    (mark,) = g.pushes
    np.testing.assert_allclose(mark.vector, (0, -45, 0), atol=1e-3)  # 0.45 m in centimetres
    arrow = g.push_lines[:10]  # shaft and four barbs; the head is 0.6 radii = 21 cm long
    assert np.linalg.norm(arrow[2] - arrow[3], axis=-1) == pytest.approx(
        np.hypot(21.0, 10.5), rel=1e-4)
    lifted = g.penetration_tris.reshape(-1, 3, 3)[:, :, 1]
    assert lifted.max() == pytest.approx(-0.2, abs=1e-3)  # 2 mm in front of the face y = 0


def test_markers_at_one_spot_fan_out_and_stack_their_labels(text):
    xy = np.array([[100.0, 50.0], [100.0, 50.0], [103.0, 49.0], [300.0, 50.0]])
    glyph, label, anchor = text.stack_markers(xy, np.array([True, True, True, True]))
    g = glyph[:3]
    assert len({tuple(p) for p in g.round(3)}) == 3  # three distinct glyphs at one spot
    assert np.diff(np.sort(g[:, 0])).min() == pytest.approx(text.GLYPH_SPACING_PX)
    assert np.diff(label[:3, 1]) == pytest.approx([-text.LINE_PX] * 2)  # one line each
    assert (label[:3, 0] > g[:, 0].max()).all()
    np.testing.assert_allclose(glyph[3], xy[3])  # alone: where it is
    assert (anchor[:3] == anchor[0]).all()


_GL_SCRIPT = os.path.join(HERE, "overlay_gl_script.py")


@pytest.fixture(scope="module")
def gl(addon, tmp_path_factory):
    """Measurements of the overlay drawn into a GPUOffScreen (one subprocess, all scenes)."""
    proc = subprocess.run([sys.executable, _GL_SCRIPT, ROOT], capture_output=True, text=True,
                          timeout=600)
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT ")]
    if proc.returncode != 0 and not lines:
        if "EGL" in proc.stderr or "epoxy" in proc.stderr:
            pytest.skip("no EGL/GL in this environment: " + proc.stderr[-300:])
        pytest.fail(proc.stderr[-3000:])
    return json.loads(lines[-1][len("RESULT "):])


def test_gl_penetrated_faces_are_tinted_exactly(gl):
    for k, (all_tinted, any_tinted) in gl["cells"].items():
        wanted = int(k) in gl["flagged"]
        assert (all_tinted, any_tinted) == (wanted, wanted), f"face {k}"
    for k, (all_tinted, any_tinted) in gl["after"].items():
        wanted = int(k) in gl["flagged"] + [10]
        assert (all_tinted, any_tinted) == (wanted, wanted), f"face {k} after the update"


def test_gl_push_out_arrow_contacts_and_depth_label(gl):
    f = gl["finding"]
    assert f["arrow_hits"] >= 9, f  # of 10 points along the shaft
    assert f["arrow_back"] == 0, f  # not into the wall, where its deepest contact points
    assert f["label_white"] >= 15 and f["label_box"] >= 100, f
    assert f["contact_hits"] >= 1, f
    assert f["tint_hits"] == f["tint_total"] > 0, f


def test_gl_instances_and_array_copies_are_drawn(gl):
    assert gl["instances"] == [True, True]  # both instances' top faces: cannot stand
    assert gl["array"] == [True, True, True]  # all three array copies: walkable


def test_gl_mirrored_highlight_shows_over_blenders_own_depth(gl):
    m = gl["mirrored"]
    assert m["plain"] and m["mirrored"], m
    assert not m["mirrored_inward"], "the control: a highlight inside the solid is hidden"


def test_gl_two_markers_at_one_spot_are_both_visible(gl):
    s = gl["stack"]
    for kind in ("step_too_high", "blocked"):
        assert s[kind]["glyph"] >= 20, s
        assert s[kind]["text"] >= 8, s
    assert abs(s["step_too_high"]["x"] - s["blocked"]["x"]) >= 10, s


def test_gl_moving_one_box_rebuilds_only_its_batches(gl):
    b = gl["batches"]
    assert b["first"] >= 4  # terrain and three boxes, walkability
    assert b["after_move"] == 1, b  # the moved box's walkability batch, nothing else
    assert b["after_capsule"] == 0, b  # a capsule moving never rebuilds face batches


def test_gl_reachability_island_cramped_squares_and_spawn(gl):
    """Drawn top-down over black: the island's violet on the platform (the floor under it is
    buried, so nothing else there), the reachable floor's teal, a cramped cell's dark
    square over the teal where the cell is (not the face's colour), the spawn's ring; the
    squares' batch kept when nothing changed; nothing of it with the toggle off."""
    r = gl["reachability"]
    assert 4.75 < r["cramped_at"][1] < 5.25, r  # the cell is in the slot
    assert r["island"] == 25 and r["floor"] == 25, r  # the whole 5 x 5 patch
    assert r["cramped"] == 9 and r["cramped_as_floor"] == 0, r
    assert r["spawn_ring"] >= 1, r
    assert r["cell_batches"] == 1, r  # built once, kept on the second draw
    assert r["hidden_island"] == 0, r


def test_gl_every_layer_draws_in_object_and_edit_mode(gl):
    """Every check's results drawn with a level mesh, the trace and the cells object each in
    Edit Mode: no error (the foreach_get length mismatch of issue 24), a level mesh in Edit
    Mode draws the very pixels of Object Mode (its layers read from the edit data), the
    trace or cells in Edit Mode leave the rest drawn."""
    m = gl["modes"]
    assert set(m) == {"object", "Platform", "Steps", "Trace Route", "Reachability Cells"}
    for mode, seen in m.items():
        assert seen["error"] is None, (mode, seen["error"])
        assert seen["drawn"] > 1000, (mode, seen)
    assert m["Platform"]["same"] and m["Steps"]["same"], m


def test_size_handles_show_the_drawn_size_and_write_the_property(gz, scene, bpy_module):
    bh.box("Wall", lo=(2, -5, 0), hi=(2.5, 5, 5))
    cap = bh.capsule("Cap", location=(1.5, 0, 0.01), radius=0.3, height=1.8)
    cap.scale = (1.5, 1.0, 2.0)
    bpy_module.context.view_layer.update()
    get_r, set_r = gz.size_handlers("Cap", "radius")
    get_h, set_h = gz.size_handlers("Cap", "height")
    assert get_r() == pytest.approx(0.45) and get_h() == pytest.approx(3.6)
    set_r(0.6)  # drawn radius 0.6 = stored 0.4 at X scale 1.5: reaches x = 2.1, in the wall
    bpy_module.context.view_layer.update()  # the handler's update_tag re-runs the live check
    cap = bpy_module.data.objects["Cap"]
    assert cap.capsule_collision.radius == pytest.approx(0.4)
    assert cap.capsule_collision.penetrating_count == 2
    set_h(0.1)  # below 2 x radius: clamped to the smallest valid capsule
    assert cap.capsule_collision.height == pytest.approx(0.8)
