"""Render vs Collision in Blender (issue 25, section 3) through the installed extension: the
operator reads the collision by engine naming and the render as every other visible mesh,
writes ``cc_collision_diff`` on both, one row per problem and object (select and frame on
either mesh), its overlay layer on both; no render or no spawn is an error; and the CLI
checks an OBJ collision against its sidecar's ``"render"`` OBJ.

The level: a 10 m floor ``Floor`` (render) and its collision twin ``Floor_col``, a 1 x 2 m
crate ``UCX_Crate`` in the collision only (an invisible wall at x 1..2, y -1..1), a spawn
at (-3, 0, 0)."""

import json
import pathlib
import subprocess
import sys

import blender_helpers as bh
import numpy as np
import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
CLI = [sys.executable, "-m", "capsule_collision.levelcheck"]
SCHEMA = json.loads((ROOT / "schema" / "report.schema.json").read_text())
INVISIBLE_WALL = 2  # operators_diff.DIFF_CODES["invisible_wall"]


@pytest.fixture
def mods(addon):
    M = bh.addon_modules(addon, diff="addon.operators_diff", results="addon.results",
                         props="addon.properties", cache="addon.cache",
                         layers="addon.overlay_layers", scene_render="addon.scene_render")
    M.cache.clear()
    return M


def _level(bpy, scene, source="NAMING"):
    scene.capsule_collision.live_check = False
    bh.grid("Floor", 10)
    bh.grid("Floor_col", 10)
    bh.box("UCX_Crate", (1.0, -1.0, -0.2), (2.0, 1.0, 2.5))
    cap = bh.capsule("Spawn", (-3.0, 0.0, 0.1))
    cap.capsule_collision.spawn = True
    scene.capsule_collision.collision_source = source
    bpy.context.view_layer.update()
    return cap


def _codes(ob):
    attr = ob.data.attributes.get("cc_collision_diff")
    if attr is None:
        return None
    out = np.empty(len(ob.data.polygons), np.int8)
    attr.data.foreach_get("value", out)
    return out


def _rows(scene):
    return [r for r in scene.capsule_collision.results if r.kind == "COLLISION_DIFF"]


def test_rows_and_attributes_on_both_meshes(scene, bpy_module, mods):
    bpy = bpy_module
    _level(bpy, scene)
    assert bpy.ops.capsule_collision.collision_diff() == {"FINISHED"}
    rows = _rows(scene)
    assert rows[0].object == "" and rows[0].label.startswith("Render vs collision from 1 spawn")
    assert "1 invisible wall" in rows[0].label
    by_object = {r.object: r for r in rows[1:]}
    assert set(by_object) == {"UCX_Crate", "Floor"}
    crate, floor = by_object["UCX_Crate"], by_object["Floor"]
    assert crate.severity == floor.severity == "WARNING"
    assert "(collision)" in crate.label and "(render)" in floor.label
    assert crate.label.startswith("Invisible wall 1: ")
    assert 1.0 < crate.position[0] < 2.0 and -1.0 < crate.position[1] < 1.0
    crate_faces = mods.props.decode_faces(crate.faces)
    assert crate_faces.size and (crate_faces < 6).all()
    # the attribute: the crate's faces it concerns, the render floor under it, nothing else
    codes = _codes(bpy.data.objects["UCX_Crate"])
    assert set(np.flatnonzero(codes).tolist()) == set(crate_faces.tolist())
    assert (codes[codes > 0] == INVISIBLE_WALL).all()
    floor_codes = _codes(bpy.data.objects["Floor"])
    assert set(np.flatnonzero(floor_codes).tolist()) == set(
        mods.props.decode_faces(floor.faces).tolist())
    assert not _codes(bpy.data.objects["Floor_col"]).any()
    # the render floor's faces it names lie round the crate
    me = bpy.data.objects["Floor"].data
    centres = np.array([me.polygons[i].center[:] for i in mods.props.decode_faces(floor.faces)])
    assert (centres[:, 0] > 0.0).all() and (centres[:, 0] < 3.0).all()


def test_select_and_frame_on_either_mesh(scene, bpy_module, mods):
    bpy = bpy_module
    _level(bpy, scene)
    bpy.ops.capsule_collision.collision_diff()
    for name in ("UCX_Crate", "Floor"):
        index = [i for i, r in enumerate(scene.capsule_collision.results)
                 if r.kind == "COLLISION_DIFF" and r.object == name][0]
        want = mods.props.decode_faces(scene.capsule_collision.results[index].faces)
        assert bpy.ops.capsule_collision.select_result(index=index) == {"FINISHED"}
        ob = bpy.data.objects[name]
        assert bpy.context.mode == "EDIT_MESH" and bpy.context.active_object == ob
        bpy.ops.object.mode_set(mode="OBJECT")
        sel = np.empty(len(ob.data.polygons), bool)
        ob.data.polygons.foreach_get("select", sel)
        assert np.flatnonzero(sel).tolist() == sorted(want.tolist())


def test_overlay_layer_draws_both_levels_and_has_its_toggle(scene, bpy_module, mods):
    bpy = bpy_module
    _level(bpy, scene)
    bpy.ops.capsule_collision.collision_diff()
    dg = bpy.context.evaluated_depsgraph_get()
    layers = mods.layers.face_layers(scene, dg, ["collision_diff"])
    drawn = {p.name for p in layers["collision_diff"]}
    assert drawn == {"UCX_Crate", "Floor"}
    assert mods.layers.codes_of(layers)["collision_diff"] == {INVISIBLE_WALL}
    geometry = mods.layers.overlay_geometry(scene, dg)
    tris, colors = geometry.face_layer("collision_diff")
    assert tris.shape[0] > 0 and np.allclose(colors[0], mods.layers.DIFF_COLORS[INVISIBLE_WALL])
    assert any(text == "Invisible wall" for _c, text in geometry.legend)
    scene.capsule_collision.show_collision_diff = False
    assert "collision_diff" not in mods.layers.overlay_geometry(scene, dg).faces


@pytest.mark.parametrize("edited", ["UCX_Crate", "Floor"])
def test_overlay_layer_draws_in_edit_mode_as_in_object_mode(scene, bpy_module, mods, edited):
    """Either mesh in Edit Mode (where a row click puts the designer): the layer reads the
    edit data and draws the same triangles in the same colours (issue 24, section 5)."""
    bpy = bpy_module
    _level(bpy, scene)
    bpy.ops.capsule_collision.collision_diff()
    before = mods.layers.overlay_geometry(scene, bpy.context.evaluated_depsgraph_get())
    ob = bpy.data.objects[edited]
    for other in bpy.context.selected_objects:
        other.select_set(False)
    bpy.context.view_layer.objects.active = ob
    ob.select_set(True)
    bpy.ops.object.mode_set(mode="EDIT")
    bpy.context.view_layer.update()
    after = mods.layers.overlay_geometry(scene, bpy.context.evaluated_depsgraph_get())
    bpy.ops.object.mode_set(mode="OBJECT")
    for got, want in zip(after.face_layer("collision_diff"), before.face_layer("collision_diff")):
        assert want.shape[0] > 0
        np.testing.assert_array_equal(got, want)


def test_identical_render_and_collision_pass(scene, bpy_module, mods):
    bpy = bpy_module
    _level(bpy, scene)
    bpy.data.objects.remove(bpy.data.objects["UCX_Crate"])
    bpy.context.view_layer.update()
    assert bpy.ops.capsule_collision.collision_diff() == {"FINISHED"}
    (row,) = _rows(scene)
    assert row.severity == "PASSED" and row.label.endswith("they agree")


def test_no_render_source_is_refused(scene, bpy_module, mods):
    bpy = bpy_module
    _level(bpy, scene, source="VISIBLE")
    assert not bpy.ops.capsule_collision.collision_diff.poll()
    with pytest.raises(ValueError, match="no render meshes"):
        mods.diff.run_collision_diff(bpy.context)


def test_no_spawn_is_refused(scene, bpy_module, mods):
    bpy = bpy_module
    cap = _level(bpy, scene)
    cap.capsule_collision.spawn = False
    with pytest.raises(ValueError, match="no spawn"):
        mods.diff.run_collision_diff(bpy.context)


def test_undo_removes_everything_it_wrote(scene, bpy_module, mods):
    bpy = bpy_module
    _level(bpy, scene)
    bpy.ops.ed.undo_push(message="built")
    bpy.ops.ed.undo_push(message="before")
    assert bpy.ops.capsule_collision.collision_diff() == {"FINISHED"}
    bpy.ops.ed.undo_push(message="collision diff")
    assert _rows(bpy.context.scene)
    bpy.ops.ed.undo()
    scene = bpy.context.scene  # a memfile undo replaces the scene
    assert not _rows(scene)
    assert _codes(bpy.data.objects["UCX_Crate"]) is None
    assert _codes(bpy.data.objects["Floor"]) is None


def test_clear_results_removes_the_attribute_and_the_rows(scene, bpy_module, mods):
    bpy = bpy_module
    _level(bpy, scene)
    bpy.ops.capsule_collision.collision_diff()
    assert _codes(bpy.data.objects["UCX_Crate"]) is not None
    bpy.ops.capsule_collision.clear_results()
    assert _codes(bpy.data.objects["UCX_Crate"]) is None
    assert not _rows(scene)


def _write_obj(path, vertices, faces):
    lines = [f"v {x:.6f} {y:.6f} {z:.6f}" for x, y, z in vertices]
    lines += ["f " + " ".join(str(i + 1) for i in f) for f in faces]
    path.write_text("\n".join(lines) + "\n")


def test_cli_checks_a_clip_obj_against_its_sidecar_render(tmp_path):
    """``levelcheck level_clip.obj --up Z`` with ``"render": "level.obj"`` in the sidecar:
    the clip mesh (a floor and a crate) is the level, the render (the floor) beside it."""
    floor_v = [(-5, -5, 0), (5, -5, 0), (5, 5, 0), (-5, 5, 0)]
    crate_v = bh.box_vertices((1.0, -1.0, 0.0), (2.0, 1.0, 2.5))
    _write_obj(tmp_path / "level.obj", floor_v, [(0, 1, 2, 3)])
    _write_obj(tmp_path / "level_clip.obj", floor_v + crate_v,
               [(0, 1, 2, 3)] + [tuple(i + 4 for i in f) for f in bh.BOX_FACES])
    (tmp_path / "level_clip.levelcheck.json").write_text(json.dumps(
        {"render": "level.obj", "spawns": [[-3.0, 0.0, 0.0]]}))
    out = tmp_path / "out"
    proc = subprocess.run([*CLI, str(tmp_path / "level_clip.obj"), "--up", "Z", "--out",
                           str(out), "--no-png", "--checks", "collision_diff", "--quiet"],
                          capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr  # a warning does not fail the default gate
    doc = json.loads((out / "report.json").read_text())
    jsonschema = pytest.importorskip("jsonschema")
    jsonschema.validate(doc, SCHEMA)
    (level,) = doc["levels"]
    block = level["collision_diff"]
    assert block["render"] == "level.obj" and block["render_triangles"] == 2
    assert block["counts"]["invisible_wall"] == 1 and sum(block["counts"].values()) == 1
    (f,) = [f for f in level["findings"] if f["check"] == "collision_diff"]
    assert f["got"] == "invisible_wall" and f["severity"] == "warning"
    assert 1.0 < f["position"][0] < 2.0
    junit = (out / "junit.xml").read_text()
    assert "render against collision" in junit


def test_cli_refuses_a_missing_render_file(tmp_path):
    _write_obj(tmp_path / "level_clip.obj", [(0, 0, 0), (1, 0, 0), (1, 1, 0)], [(0, 1, 2)])
    (tmp_path / "level_clip.levelcheck.json").write_text(json.dumps({"render": "nope.obj"}))
    proc = subprocess.run([*CLI, str(tmp_path / "level_clip.obj"), "--out",
                           str(tmp_path / "out"), "--no-png"],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 2
    assert "\"render\"" in proc.stderr and "nope.obj" in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1


def test_cli_reads_render_and_collision_by_engine_naming(tmp_path, scene, bpy_module):
    """A .blend with ``--naming``: the collision is Floor_col and UCX_Crate, the render the
    other visible mesh (Floor); the sidecar gives the spawn."""
    bpy = bpy_module
    bh.grid("Floor", 10)
    bh.grid("Floor_col", 10)
    bh.box("UCX_Crate", (1.0, -1.0, -0.2), (2.0, 1.0, 2.5))
    blend = tmp_path / "named.blend"
    bpy.ops.wm.save_as_mainfile(filepath=str(blend), copy=True)
    (tmp_path / "named.levelcheck.json").write_text(json.dumps({"spawns": [[-3.0, 0.0, 0.0]]}))
    out = tmp_path / "out"
    proc = subprocess.run([*CLI, str(blend), "--naming", "--out", str(out), "--no-png",
                           "--checks", "collision_diff", "--quiet"],
                          capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr
    (level,) = json.loads((out / "report.json").read_text())["levels"]
    assert sorted(level["objects"]) == ["Floor_col", "UCX_Crate"]
    block = level["collision_diff"]
    assert block["render"] == "naming" and block["counts"]["invisible_wall"] == 1
    (f,) = [f for f in level["findings"] if f["check"] == "collision_diff"]
    assert f["name"].startswith("invisible_wall at (")  # its place, never a face index
    assert "[render: Floor face" in f["message"]  # the render floor, named by its object
    assert {x["object"] for x in f["faces"]} == {"UCX_Crate"}


def test_render_is_every_visible_mesh_outside_the_collision_collection(scene, bpy_module, mods):
    bpy = bpy_module
    coll = bpy.data.collections.new("Collision")
    scene.collection.children.link(coll)
    bh.grid("Floor", 10)
    bh.grid("Floor_proxy", 10, collection=coll)
    bh.box("Crate_proxy", (1.0, -1.0, -0.2), (2.0, 1.0, 2.5), collection=coll)
    hidden = bh.box("Hidden", (3.0, 3.0, 0.0), (4.0, 4.0, 1.0))
    hidden.hide_set(True)
    cap = bh.capsule("Spawn", (-3.0, 0.0, 0.1))
    cap.capsule_collision.spawn = True
    scene.capsule_collision.collision_source = "COLLECTION"
    scene.capsule_collision.collision_collection = coll
    bpy.context.view_layer.update()
    render = mods.scene_render.read_render(bpy.context.evaluated_depsgraph_get(), scene)
    assert render.objects == ("Floor",)  # not the capsule, not the hidden box
    assert bpy.ops.capsule_collision.collision_diff() == {"FINISHED"}
    assert {r.object for r in _rows(scene)} == {"", "Floor", "Crate_proxy"}


def test_a_difference_smaller_than_the_footprint_is_one_info_row_to_select(
        scene, bpy_module, mods):
    """A 2 cm post only the collision has (``UCX_Post``) blocks less floor than the
    character's footprint (0.385 m² for the default 0.35 m): one info row per object its
    faces lie on (core's ``diff_report.split_small``, as report.json), not a warning; its
    faces select and the attribute still marks them; the crate stays a warning."""
    bpy = bpy_module
    _level(bpy, scene)
    bh.box("UCX_Post", (-1.0, 3.0, -0.2), (-0.98, 3.02, 2.0))
    bpy.context.view_layer.update()
    assert bpy.ops.capsule_collision.collision_diff() == {"FINISHED"}
    rows = _rows(scene)
    assert "1 invisible wall, 1 more smaller than the character's footprint" in rows[0].label
    small = [r for r in rows if r.got == "below_min_area"]
    assert small and all(r.severity == "INFO" and r.count == 1 for r in small)
    assert {r.finding for r in small} == {"invisible_wall: below_min_area"}
    post = [r for r in small if r.object == "UCX_Post"][0]
    assert "smaller than the character's footprint" in post.label and 0.0 < post.size < 0.385
    assert {r.severity for r in rows[1:] if r.got == "invisible_wall"} == {"WARNING"}
    index = list(scene.capsule_collision.results).index(post)
    assert bpy.ops.capsule_collision.select_result(index=index) == {"FINISHED"}
    bpy.ops.object.mode_set(mode="OBJECT")
    ob = bpy.data.objects["UCX_Post"]
    sel = np.empty(len(ob.data.polygons), bool)
    ob.data.polygons.foreach_get("select", sel)
    want = mods.props.decode_faces(post.faces)
    assert want.size and np.flatnonzero(sel).tolist() == sorted(want.tolist())
    assert set(np.flatnonzero(_codes(ob)).tolist()) == set(want.tolist())
