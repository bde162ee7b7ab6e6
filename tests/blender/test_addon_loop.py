"""The designer's loop in real Blender (issue 16): check -> look -> click the row -> fix ->
check again, never silently wrong. Named regressions for each way it was wrong: a row click in
Edit Mode dropping a wall from the level (live check on and off), array and instance rows, a
5e-7 m contact red live and clear in the report, rows that stayed "clear" after their capsule
or path moved, a 3.5 mm capsule in a centimetre scene; and undo in the middle of the loop."""

import importlib
import json
import pathlib

import blender_helpers as bh
import numpy as np
import ops_scenes as S
import pytest


@pytest.fixture
def mods(addon):
    M = bh.addon_modules(
        addon, core="core", sd="addon.scene_data", cache="addon.cache", live="addon.live",
        props="addon.properties", results="addon.results", staleness="addon.staleness")

    M.cache.clear()
    yield M
    M.cache.clear()


def update(bpy):
    bpy.context.view_layer.update()  # runs depsgraph_update_post as the UI would


def to_object_mode(bpy):
    ob = bpy.context.view_layer.objects.active
    if bpy.context.mode != "OBJECT":
        with bpy.context.temp_override(active_object=ob, object=ob):
            bpy.ops.object.mode_set(mode="OBJECT")


def two_walls(bpy):
    """A floor, a wall each side of the origin and a capsule 0.15 m into each wall."""
    bh.floor("Floor", size=6.0)
    bh.box("Wall", lo=(2, -5, 0), hi=(2.5, 5, 3))
    bh.box("Wall2", lo=(-2.5, -5, 0), hi=(-2, 5, 3))
    bh.capsule("Cap", location=(1.8, 0, 0.01))
    bh.capsule("Cap2", location=(-1.8, 0, 0.01))
    update(bpy)


def row_index(scene, **match):
    rows = scene.capsule_collision.results
    found = [i for i, r in enumerate(rows) if all(getattr(r, k) == v for k, v in match.items())]
    assert len(found) == 1, (match, [r.label for r in rows])
    return found[0]


def states(bpy):
    return {n: bpy.data.objects[n].capsule_collision.penetrating_count for n in ("Cap", "Cap2")}


# ---------------------------------------------------------------- row clicks in Edit Mode
@pytest.mark.parametrize("live", [True, False], ids=["live on", "live off"])
def test_row_clicks_in_edit_mode_keep_every_wall_in_the_level(scene, bpy_module, mods, capfd,
                                                              live):
    """Issue 16: clicking a second row while the first row's wall is in Edit Mode left a
    level without that wall (Cap2 'clear' until an undo); with the live check on, the handler
    raised 'foreach_get ... mismatch' and set both capsules clear."""
    bpy = bpy_module
    scene.capsule_collision.live_check = live
    two_walls(bpy)
    assert bpy.ops.capsule_collision.check_penetration() == {"FINISHED"}
    assert bpy.ops.capsule_collision.select_result(
        index=row_index(scene, object="Wall")) == {"FINISHED"}
    assert bpy.context.mode == "EDIT_MESH"
    update(bpy)
    assert bpy.ops.capsule_collision.select_result(
        index=row_index(scene, object="Wall2")) == {"FINISHED"}
    assert bpy.context.active_object.name == "Wall2" and bpy.context.mode == "EDIT_MESH"
    update(bpy)
    level = mods.cache.cached_level(bh.depsgraph(), scene)  # read with Wall2 in Edit Mode
    assert set(level.objects) == {"Floor", "Wall", "Wall2"}
    assert level.edit_objects == ("Wall2",)
    to_object_mode(bpy)
    update(bpy)
    assert set(mods.cache.cached_level(bh.depsgraph(), scene).objects) == {
        "Floor", "Wall", "Wall2"}
    if live:
        assert states(bpy) == {"Cap": 2, "Cap2": 2}
    assert bpy.ops.capsule_collision.check_penetration() == {"FINISHED"}
    assert states(bpy) == {"Cap": 2, "Cap2": 2}
    err = capfd.readouterr().err
    assert "Traceback" not in err and "Error in bpy.app.handlers" not in err, err


def test_a_wall_edited_in_edit_mode_is_checked_with_its_edits(scene, bpy_module, mods):
    """The live check reads the edit data (the designer stays in Edit Mode) and says so; the
    highlight waits until the wall leaves Edit Mode, then follows the rows."""
    bpy = bpy_module
    two_walls(bpy)
    bpy.ops.capsule_collision.check_penetration()
    bpy.ops.capsule_collision.select_result(index=row_index(scene, object="Wall"))
    wall = bpy.data.objects["Wall"]
    bmesh = importlib.import_module("bmesh")  # importable once bpy is
    bm = bmesh.from_edit_mesh(wall.data)
    for v in bm.verts:
        v.co.x += 1.0  # the wall moves 1 m away: Cap is clear
    bmesh.update_edit_mesh(wall.data)
    update(bpy)
    assert bpy.context.mode == "EDIT_MESH"
    assert states(bpy) == {"Cap": 0, "Cap2": 2}
    status = mods.live.status(bpy.context.scene)
    assert "Wall checked with the edits of Edit Mode" in status
    assert "highlight of Wall is written when it leaves Edit Mode" in status
    (row,) = [r for r in scene.capsule_collision.results if r.capsule == "Cap"]
    assert row.label == "Cap: clear"  # the live check refreshed the row
    to_object_mode(bpy)
    update(bpy)
    flags = mods.results.read_face_flags(bpy.data.objects["Wall"].data,
                                         mods.results.PENETRATION_ATTRIBUTE)
    assert not flags.any()
    assert mods.results.read_face_flags(bpy.data.objects["Wall2"].data,
                                        mods.results.PENETRATION_ATTRIBUTE).sum() == 1


def test_an_operator_in_edit_mode_flushes_and_says_so(scene, bpy_module, capfd):
    bpy = bpy_module
    scene.capsule_collision.live_check = False
    two_walls(bpy)
    bpy.ops.capsule_collision.check_penetration()
    bpy.ops.capsule_collision.select_result(index=row_index(scene, object="Wall"))
    capfd.readouterr()
    assert bpy.ops.capsule_collision.check_penetration() == {"FINISHED"}
    assert "Wall left Edit Mode, its edits checked" in capfd.readouterr().out
    assert bpy.context.mode == "OBJECT"


# ---------------------------------------------------------------- array and instance rows
def test_array_row_click_selects_frames_and_never_raises(scene, bpy_module, mods, capfd):
    """Issue 16: clicking an array-modifier row raised KeyError 'position' in the cache
    fingerprint (the evaluated mesh of an object in Edit Mode has no readable arrays)."""
    bpy = bpy_module
    v, f = S.grid(4, 20.0)
    S.mesh_object(bpy, "Ground", v, f, location=(0, 0, -0.01))
    S.array_stairs(bpy, count=6, rise=0.2, run=0.4)
    S.capsule(bpy, "InStep3", (1.0, 0.0, 0.3))  # inside the third step, an array copy
    update(bpy)
    assert bpy.ops.capsule_collision.check_penetration() == {"FINISHED"}
    i = row_index(scene, object="Stairs")
    row = scene.capsule_collision.results[i]
    assert row.unmapped > 0 and row.has_bounds
    assert bpy.ops.capsule_collision.select_result(index=i) == {"FINISHED"}
    out = capfd.readouterr()
    assert "cannot be selected" in out.out and "framed" in out.out
    assert bpy.context.active_object.name == "Stairs"
    # the array object in Edit Mode: the cache still reads and fingerprints it
    with bpy.context.temp_override(active_object=bpy.data.objects["Stairs"]):
        bpy.ops.object.mode_set(mode="EDIT")
    update(bpy)
    level = mods.cache.cached_level(bh.depsgraph(), scene)
    assert "Stairs" in level.objects and level.edit_objects == ("Stairs",)
    n_tris = int((level.tri_object == level.objects.index("Stairs")).sum())
    assert n_tris == 6 * 12  # six steps of twelve triangles, read from the edit data
    fp = mods.cache.fingerprint(bpy.data.objects["Stairs"].evaluated_get(bh.depsgraph()))
    assert len(fp) == 2
    to_object_mode(bpy)
    assert "Traceback" not in capfd.readouterr().err


def test_instance_row_click_selects_the_instancer_and_frames_the_crate(scene, bpy_module,
                                                                        mods, capfd):
    bpy = bpy_module
    v, f = S.grid(4, 20.0)
    S.mesh_object(bpy, "Ground", v, f, location=(0, 0, -0.01))
    S.collection_instance(bpy, location=(4.0, 4.0, 0.0))
    S.capsule(bpy, "InCrate", (4.2, 4.0, 0.2))
    update(bpy)
    bpy.ops.capsule_collision.check_penetration()
    i = row_index(scene, object="Crate")
    row = scene.capsule_collision.results[i]
    assert row.instancer == "CrateInstance"
    assert bpy.ops.capsule_collision.select_result(index=i) == {"FINISHED"}
    assert "Crate is instanced by CrateInstance" in capfd.readouterr().out
    assert bpy.context.mode == "OBJECT"
    assert [o.name for o in bpy.context.selected_objects] == ["CrateInstance"]
    centre = np.add(row.bounds[:3], row.bounds[3:]) / 2
    assert view_centre(bpy) == pytest.approx(tuple(centre), abs=1e-5)
    assert 3.5 < centre[0] < 4.5 and 3.5 < centre[1] < 4.5  # the crate, not the origin


def view_centre(bpy):
    spaces = [a.spaces.active for a in bpy.context.screen.areas if a.type == "VIEW_3D"]
    assert spaces, "the home file has a 3D View"
    return tuple(spaces[0].region_3d.view_location)


# ---------------------------------------------------------------- one verdict
def test_a_contact_under_the_reporting_depth_is_clear_live_and_in_the_report(
        scene, bpy_module, mods, tmp_path):
    """Issue 16: a capsule touching a wall by 5e-7 m was red live and "clear" in the
    report. The live check, Check Penetration and Export Report share core's one verdict."""
    bpy = bpy_module
    bh.box("Wall", lo=(2, -5, 0), hi=(2.5, 5, 3))
    cap = bh.capsule("Touch", location=(2.0 - 0.35 + 5e-7, 0, 1.0))
    update(bpy)
    level = mods.cache.cached_level(bh.depsgraph(), scene)
    capsule = mods.sd.capsule_of(bpy.data.objects["Touch"], 1.0)
    depths = [c.depth for c in level.mesh.capsule_contacts(capsule)]
    assert depths and 0.0 < max(depths) < mods.core.verdicts.MIN_REPORTED_DEPTH  # the case
    cap = bpy.data.objects["Touch"]
    cap.location.z = 1.0  # a move: the live check judges it
    update(bpy)
    assert bpy.data.objects["Touch"].capsule_collision.penetrating_count == 0
    assert bpy.ops.capsule_collision.check_penetration() == {"FINISHED"}
    (row,) = scene.capsule_collision.results
    assert row.label == "Touch: clear" and row.severity == "PASSED"
    path = tmp_path / "r.json"
    assert bpy.ops.capsule_collision.export_report(filepath=str(path)) == {"FINISHED"}
    doc = json.loads(path.read_text())  # the panel's results: the clear row is no finding
    assert doc["levels"][0]["findings"] == [] and doc["summary"]["findings"] == 0


def test_the_attribute_has_one_name_and_one_writer(addon):
    """capsule_penetration: its name is one constant (results.py), written by penetration.py
    alone (Check Penetration and the live check call it) and read by the overlay."""
    root = pathlib.Path(addon.__file__).parent / "addon"
    literal = [p.name for p in root.glob("*.py") if '"capsule_penetration"' in p.read_text()]
    assert literal == ["results.py"]
    users = sorted(p.name for p in root.glob("*.py") if "PENETRATION_ATTRIBUTE" in p.read_text())
    assert users == ["overlay_layers.py", "penetration.py", "results.py"]


# ---------------------------------------------------------------- stale rows
def test_a_moved_capsule_flags_its_row_and_the_live_check_refreshes_it(scene, bpy_module,
                                                                        mods):
    bpy = bpy_module
    scene.capsule_collision.live_check = False
    two_walls(bpy)
    bpy.ops.capsule_collision.check_penetration()
    reasons = mods.staleness.stale_reasons(scene, None)
    assert not any(reasons)
    bpy.data.objects["Cap"].location.x = 0.0
    update(bpy)
    reasons = dict(zip((r.capsule for r in scene.capsule_collision.results),
                       mods.staleness.stale_reasons(scene, None)))
    assert reasons == {"Cap": "capsule moved, resized or its expectation changed",
                       "Cap2": ""}
    bpy.data.objects["Cap"].location.x = 1.8  # back where it was checked: current again
    update(bpy)
    assert not any(mods.staleness.stale_reasons(scene, None))
    bpy.data.objects["Cap"].capsule_collision.radius = 0.2  # resized
    update(bpy)
    assert mods.staleness.stale_reasons(scene, None)[row_index(scene, capsule="Cap")]
    scene.capsule_collision.live_check = True
    bpy.data.objects["Cap"].location.x = 0.0
    update(bpy)
    (row,) = [r for r in scene.capsule_collision.results if r.capsule == "Cap"]
    assert row.label == "Cap: clear" and not any(mods.staleness.stale_reasons(scene, None))


def test_a_moved_path_flags_its_walk_rows(scene, bpy_module, mods):
    bpy = bpy_module
    v, f = S.grid(10, 20.0)
    S.mesh_object(bpy, "Ground", v, f)
    v, f = S.box((1.0, 4.0, 0.6))
    S.mesh_object(bpy, "Kerb", v, f, location=(3.0, 0.0, 0.3))
    path = S.polyline(bpy, "Path", [(0, 0, 0), (6, 0, 0)])
    other = S.polyline(bpy, "Other", [(0, -6, 0), (6, -6, 0)])
    update(bpy)
    assert bpy.ops.capsule_collision.walkthrough() == {"FINISHED"}
    assert not any(mods.staleness.stale_reasons(scene, None))
    path.location.y = 5.0  # the blocked path now misses the kerb: its rows say "blocked"
    update(bpy)
    rows = scene.capsule_collision.results
    reasons = mods.staleness.stale_reasons(scene, None)
    for r, why in zip(rows, reasons):
        want = "path edited, moved or its expectation changed" if r.capsule == "Path" else ""
        assert why == want, r.label
    path.location.y = 0.0
    other.data.vertices[1].co.x = 3.0  # a path edited in its mesh
    update(bpy)
    reasons = mods.staleness.stale_reasons(scene, None)
    assert {r.capsule for r, why in zip(rows, reasons) if why} == {"Other"}
    scene.capsule_collision.step_height = 0.7  # settings: every walk row is stale
    reasons = mods.staleness.stale_reasons(scene, None)
    assert all(reasons)
    assert set(reasons) >= {"settings changed"}


def test_settings_flag_audit_rows_and_the_level_flags_everything(scene, bpy_module, mods):
    bpy = bpy_module
    scene.capsule_collision.live_check = False
    S.staircase(bpy, "Steps", [0.5] * 3, [0.5] * 3)
    bpy.ops.capsule_collision.stair_audit()
    bpy.ops.capsule_collision.classify_walkability()
    stamp = mods.cache.cached_level(bh.depsgraph(), scene).stamp
    assert not any(mods.staleness.stale_reasons(scene, stamp))
    scene.capsule_collision.speed = 2.0  # the stair audit depends on it, walkability not
    why = dict(zip((r.kind for r in scene.capsule_collision.results),
                   mods.staleness.stale_reasons(scene, stamp)))
    assert why == {"STAIRS": "settings changed", "WALKABILITY": ""}
    assert set(mods.staleness.stale_reasons(scene, "another level")) == {"level changed"}


# ---------------------------------------------------------------- units
def test_add_capsule_in_a_centimetre_scene_is_character_sized(scene, bpy_module, mods):
    """Issue 16: a centimetre scene (unit scale 0.01) got a 3.5 mm capsule: the defaults in
    metres were used as Blender units."""
    bpy = bpy_module
    scene.unit_settings.scale_length = 0.01
    s = scene.capsule_collision
    assert s.radius == pytest.approx(35.0) and s.height == pytest.approx(180.0)
    assert s.gravity == pytest.approx(981.0) and s.max_slope_deg == pytest.approx(45.0)
    got, want = mods.props.controller_settings(scene), mods.core.ControllerSettings()
    for name in mods.props.SETTINGS_UNITS:  # metres: the defaults (to float rounding)
        assert getattr(got, name) == pytest.approx(getattr(want, name), rel=1e-12), name
    assert bpy.ops.capsule_collision.add_capsule() == {"FINISHED"}
    cap = bpy.context.active_object
    assert cap.capsule_collision.radius == pytest.approx(35.0)
    assert cap.capsule_collision.height == pytest.approx(180.0)
    capsule = mods.sd.capsule_of(cap, 0.01)
    assert capsule.radius == pytest.approx(0.35)
    assert cap.empty_display_size == pytest.approx(180.0)
    plain = bh.capsule("Plain")  # a capsule made by a script: sizes set explicitly
    bare = bpy.data.objects.new("Bare", None)  # one with its sizes never set
    bare.capsule_collision.role = "CAPSULE"
    assert plain.capsule_collision.radius == pytest.approx(0.35)
    assert bare.capsule_collision.radius == pytest.approx(35.0)
    s.radius = 40.0  # typed: kept as typed, in Blender units
    scene.unit_settings.scale_length = 1.0
    assert s.radius == pytest.approx(40.0) and s.height == pytest.approx(1.8)


def test_walk_markers_in_a_centimetre_scene_are_character_sized(scene, bpy_module):
    bpy = bpy_module
    S.centimetre_kerb(bpy, scene)
    assert bpy.ops.capsule_collision.walkthrough() == {"FINISHED"}
    markers = [m for m in bpy.data.objects if m.capsule_collision.role == "MARKER"]
    assert markers and all(m.empty_display_size == pytest.approx(35.0) for m in markers)


def test_rows_of_a_deleted_capsule_are_stale_then_go(scene, bpy_module, mods):
    bpy = bpy_module
    scene.capsule_collision.live_check = False
    two_walls(bpy)
    bpy.ops.capsule_collision.check_penetration()
    bpy.data.objects.remove(bpy.data.objects["Cap2"])
    update(bpy)
    why = dict(zip((r.capsule for r in scene.capsule_collision.results),
                   mods.staleness.stale_reasons(scene, None)))
    assert why == {"Cap": "", "Cap2": "capsule deleted"}
    assert bpy.ops.capsule_collision.check_penetration() == {"FINISHED"}
    assert [r.capsule for r in scene.capsule_collision.results] == ["Cap"]
    flags = mods.results.read_face_flags(bpy.data.objects["Wall2"].data,
                                         mods.results.PENETRATION_ATTRIBUTE)
    assert not flags.any()  # the deleted capsule's faces are no longer highlighted
