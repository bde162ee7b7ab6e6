"""Operators in real Blender: results equal ``core`` on the same arrays, rows select exactly
those faces, bad input changes nothing, undo restores, results survive save and reload."""

import importlib
import math
import pathlib

import numpy as np
import ops_scenes as S
import pytest


@pytest.fixture
def mods(addon):
    class M:
        core = importlib.import_module(addon.__name__ + ".core")
        scene_data = importlib.import_module(addon.__name__ + ".addon.scene_data")
        props = importlib.import_module(addon.__name__ + ".addon.properties")
        results = importlib.import_module(addon.__name__ + ".addon.results")
        findings = importlib.import_module(addon.__name__ + ".core.checks.findings")
        naming = importlib.import_module(addon.__name__ + ".core.checks.naming")
    return M


def level_now(bpy, mods):
    dg = bpy.context.evaluated_depsgraph_get()
    return mods.scene_data.read_level(dg, bpy.context.scene)


def attribute(bpy, ob, name, dtype=bool):
    attr = ob.data.attributes.get(name)
    assert attr is not None, f"{ob.name} has no {name}"
    out = np.empty(len(ob.data.polygons), dtype)
    attr.data.foreach_get("value", out)
    return out


def expected_faces(level, tris, object_name):
    """Original faces of ``object_name`` among triangles ``tris`` (the oracle)."""
    k = level.objects.index(object_name)
    tris = np.asarray(tris, np.int64)
    sel = tris[level.tri_object[tris] == k]
    orig = level.tri_orig_face[sel]
    return np.unique(orig[orig >= 0])


def mixed_level(bpy):
    """Rotated/scaled/negatively scaled objects, array stairs, a collection instance, a floor;
    one capsule penetrating each, plus one clear capsule."""
    S.transformed_level(bpy)
    v, f = S.grid(4, 20.0)
    S.mesh_object(bpy, "Ground", v, f, location=(0, 0, -2.0))
    stairs = S.array_stairs(bpy)
    stairs.location.y = 6.0
    S.collection_instance(bpy, location=(4.0, 4.0, 0.0))
    caps = [
        S.capsule(bpy, "InRamp", (0.0, 0.0, -0.6)),
        S.capsule(bpy, "InFlipped", (5.2, 0.1, 0.3)),
        S.capsule(bpy, "InTilted", (-3.0, 0.5, 0.0)),
        S.capsule(bpy, "InStairs", (0.5, 6.0, 0.1)),
        S.capsule(bpy, "InCrate", (4.2, 4.0, 0.2), rotation=(0.3, 0.0, 0.0)),
        S.capsule(bpy, "Clear", (8.0, -8.0, 0.0)),
    ]
    return caps


def snapshot(bpy):
    """What an operator may change: objects, rows, attributes, collections, settings."""
    s = bpy.context.scene.capsule_collision
    return {
        "objects": sorted(o.name for o in bpy.data.objects),
        "collections": sorted(c.name for c in bpy.data.collections),
        "rows": [(r.kind, r.label, r.faces) for r in s.results],
        "attributes": sorted((m.name, a.name) for m in bpy.data.meshes for a in m.attributes
                             if not a.name.startswith(".")),
        "states": sorted((o.name, o.capsule_collision.penetrating_count)
                         for o in bpy.data.objects),
        "actions": sorted(a.name for a in bpy.data.actions),
        "counts": tuple(s.walk_counts),
    }


# ---------------------------------------------------------------- penetration

def test_check_penetration_equals_core_on_transformed_modified_and_instanced_level(
        scene, bpy_module, mods, capfd):
    bpy = bpy_module
    caps = mixed_level(bpy)
    assert bpy.ops.capsule_collision.check_penetration() == {"FINISHED"}
    out = capfd.readouterr().out
    level = level_now(bpy, mods)
    all_tris = {}
    for ob in caps:
        capsule = mods.scene_data.capsule_of(ob, level.unit_scale)
        all_tris[ob.name] = level.mesh.penetrating_triangles(capsule)
        assert ob.capsule_collision.penetrating_count == all_tris[ob.name].size
    assert all(all_tris[c.name].size for c in caps[:-1]), "each capsule must penetrate"
    assert all_tris["Clear"].size == 0
    union = np.unique(np.concatenate(list(all_tris.values())))
    for name in ("Ramp", "Flipped", "Tilted", "Ground"):
        ob = bpy.data.objects[name]
        got = np.flatnonzero(attribute(bpy, ob, "capsule_penetration"))
        np.testing.assert_array_equal(got, expected_faces(level, union, name), err_msg=name)
    crate = bpy.data.objects["Crate"]  # instance faces land on the instanced mesh
    got = np.flatnonzero(attribute(bpy, crate, "capsule_penetration"))
    np.testing.assert_array_equal(got, expected_faces(level, union, "CrateInstance/Crate"))
    assert got.size
    # the array modifier's faces do not map back: found, listed with a count, said
    rows = [r for r in scene.capsule_collision.results if r.capsule == "InStairs"]
    assert len(rows) == 1 and rows[0].object == "Stairs"
    assert rows[0].unmapped > 0 and rows[0].face_count == rows[0].unmapped
    assert mods.props.decode_faces(rows[0].faces).size == 0
    assert not attribute(bpy, bpy.data.objects["Stairs"], "capsule_penetration").any()
    assert "come from modifiers" in out
    assert f"{len(caps)} capsules checked: {len(caps) - 1} penetrating" in out
    clear_rows = [r for r in scene.capsule_collision.results if r.capsule == "Clear"]
    assert len(clear_rows) == 1 and clear_rows[0].face_count == 0


def test_penetration_rows_hold_depth_and_push_out_of_the_deepest_contact(scene, bpy_module,
                                                                        mods):
    bpy = bpy_module
    S.floor_and_wall(bpy)
    # the axis is 0.05 m behind (inside) the wall's -x face: the closest points give the
    # contact normal, from the face towards the axis (+x), depth radius - 0.05
    cap = S.capsule(bpy, "C", (1.8, 0.0, 0.0))
    assert bpy.ops.capsule_collision.check_penetration() == {"FINISHED"}
    (row,) = [r for r in scene.capsule_collision.results if r.object == "Wall"]
    assert row.value == pytest.approx(0.30, abs=1e-6)
    assert tuple(row.push_out) == pytest.approx((0.30, 0.0, 0.0), abs=1e-6)
    assert cap.capsule_collision.deepest_depth == pytest.approx(0.30, abs=1e-6)
    # the floor is touched (distance == radius) but touching is not a contact
    assert not attribute(bpy, bpy.data.objects["Floor"], "capsule_penetration").any()


def test_centimetre_scene_gives_the_metre_scene_results(scene, bpy_module, mods):
    bpy = bpy_module
    scene.unit_settings.scale_length = 0.01
    S.floor_and_wall(bpy, unit=100.0)
    cap = S.capsule(bpy, "C", (180.0, 0.0, 0.0), radius=35.0, height=180.0)
    assert bpy.ops.capsule_collision.check_penetration() == {"FINISHED"}
    (row,) = [r for r in scene.capsule_collision.results if r.object == "Wall"]
    assert row.value == pytest.approx(0.30, abs=1e-5)  # metres
    assert tuple(row.push_out) == pytest.approx((30.0, 0.0, 0.0), abs=1e-3)  # Blender units
    assert cap.capsule_collision.deepest_depth == pytest.approx(30.0, abs=1e-3)
    assert cap.capsule_collision.penetrating_count == 2  # triangles: the two of one quad
    assert row.face_count == 1


def test_selected_capsules_only_when_some_are_selected(scene, bpy_module):
    bpy = bpy_module
    scene.capsule_collision.live_check = False  # the live check writes every capsule's rows
    floor, wall = S.floor_and_wall(bpy)
    a = S.capsule(bpy, "A", (1.8, 0.0, 0.0))  # in the wall
    b = S.capsule(bpy, "B", (-3.0, 0.0, -0.2))  # in the floor
    with bpy.context.temp_override(selected_objects=[a], active_object=a, object=a):
        assert bpy.ops.capsule_collision.check_penetration() == {"FINISHED"}
    assert {r.capsule for r in scene.capsule_collision.results} == {"A"}
    assert attribute(bpy, wall, "capsule_penetration").any()
    assert not attribute(bpy, floor, "capsule_penetration").any()
    with bpy.context.temp_override(selected_objects=[b], active_object=b, object=b):
        assert bpy.ops.capsule_collision.check_penetration() == {"FINISHED"}
    # B's rows join A's; the attribute shows the faces of every row
    assert {r.capsule for r in scene.capsule_collision.results} == {"A", "B"}
    assert attribute(bpy, wall, "capsule_penetration").any()
    assert attribute(bpy, floor, "capsule_penetration").sum() == 4  # the corner of 4 quads
    wall_rows = [r for r in scene.capsule_collision.results if r.object == "Wall"]
    assert [r.capsule for r in wall_rows] == ["A"]


def test_select_result_selects_exactly_the_rows_faces_in_edit_mode(scene, bpy_module, mods):
    bpy = bpy_module
    S.transformed_level(bpy)
    S.capsule(bpy, "InRamp", (0.0, 0.0, -0.6))
    assert bpy.ops.capsule_collision.check_penetration() == {"FINISHED"}
    s = scene.capsule_collision
    (index,) = [i for i, r in enumerate(s.results) if r.object == "Ramp"]
    want = mods.props.decode_faces(s.results[index].faces)
    assert want.size >= 2
    assert bpy.ops.capsule_collision.select_result(index=index) == {"FINISHED"}
    ramp = bpy.data.objects["Ramp"]
    assert bpy.context.mode == "EDIT_MESH" and bpy.context.active_object == ramp
    bpy.ops.object.mode_set(mode="OBJECT")
    sel = np.empty(len(ramp.data.polygons), bool)
    ramp.data.polygons.foreach_get("select", sel)
    np.testing.assert_array_equal(np.flatnonzero(sel), np.sort(want))
    assert scene.capsule_collision.results_index == index
    assert [o.name for o in bpy.context.selected_objects] == ["Ramp"]


def test_stale_result_is_detected_and_said(scene, bpy_module, capfd):
    bpy = bpy_module
    scene.capsule_collision.live_check = False  # on, it would refresh the row at once
    floor, wall = S.floor_and_wall(bpy)
    S.capsule(bpy, "C", (1.8, 0.0, 0.0))
    bpy.ops.capsule_collision.check_penetration()
    capfd.readouterr()
    (index,) = [i for i, r in enumerate(scene.capsule_collision.results) if r.object == "Wall"]
    assert bpy.ops.capsule_collision.select_result(index=index, edit_mode=False) == {"FINISHED"}
    assert "stale" not in capfd.readouterr().out
    wall.location.x += 0.5
    bpy.context.view_layer.update()
    assert bpy.ops.capsule_collision.select_result(index=index, edit_mode=False) == {"FINISHED"}
    assert "stale" in capfd.readouterr().out


# ---------------------------------------------------------------- walkability

def test_walkability_codes_equal_classify_triangles(scene, bpy_module, mods):
    bpy = bpy_module
    mixed_level(bpy)
    scene.capsule_collision.max_slope_deg = 30.0
    assert bpy.ops.capsule_collision.classify_walkability() == {"FINISHED"}
    level = level_now(bpy, mods)
    codes = mods.core.classify_triangles(level.mesh, 30.0)
    mapped = level.tri_orig_face >= 0
    for k, name in enumerate(level.objects):
        ob = mods.results.object_for(name)
        sel = (level.tri_object == k) & mapped
        if not sel.any():
            continue
        got = attribute(bpy, ob, "walkability", np.int8)
        np.testing.assert_array_equal(got[level.tri_orig_face[sel]], codes[sel], err_msg=name)
    # the negatively scaled box's top is floor, its bottom ceiling (winding flipped)
    flipped = attribute(bpy, bpy.data.objects["Flipped"], "walkability", np.int8)
    assert flipped[1] == mods.core.WALKABLE and flipped[0] == mods.core.CEILING
    # a 20-degree ramp is walkable at 30 degrees
    assert (attribute(bpy, bpy.data.objects["Ramp"], "walkability", np.int8) == 0).all()
    s = scene.capsule_collision
    areas = [level.mesh.areas[codes == c].sum() for c in range(4)]
    assert tuple(s.walk_areas) == pytest.approx(areas, rel=1e-5)
    assert sum(s.walk_counts) >= len(bpy.data.objects["Ramp"].data.polygons)
    col = bpy.data.objects["Ramp"].data.color_attributes
    assert col.active_color_name == "walkability_color"
    assert col["walkability_color"].domain == "CORNER"


def test_walkability_follows_the_slope_setting_just_either_side(scene, bpy_module, mods):
    bpy = bpy_module
    S.transformed_level(bpy)  # the ramp is rotated 20 degrees about X
    scene.capsule_collision.max_slope_deg = 20.01
    bpy.ops.capsule_collision.classify_walkability()
    assert (attribute(bpy, bpy.data.objects["Ramp"], "walkability", np.int8) == 0).all()
    scene.capsule_collision.max_slope_deg = 19.99
    bpy.ops.capsule_collision.classify_walkability()
    assert (attribute(bpy, bpy.data.objects["Ramp"], "walkability", np.int8) == 1).all()


# ---------------------------------------------------------------- audits

def audit_level(bpy, unit=1.0):
    """A flight of 0.5 m risers (too high) beside a flight of 0.2 m risers, a 5 x 5 m slab
    1.15 m above the ground (no headroom, nowhere to stand below it), a raised platform
    (ledges); lengths times ``unit`` (100 for a centimetre scene)."""
    u = unit
    v, f = S.grid(8, 16.0 * u)
    S.mesh_object(bpy, "Ground", v, f)
    S.staircase(bpy, "StepLow", [0.2 * u] * 4, [0.4 * u] * 4, width=2.0 * u,
                location=(-6.0 * u, -1.0 * u, 0))
    S.staircase(bpy, "StepHigh", [0.5 * u] * 4, [0.5 * u] * 4, width=2.0 * u,
                location=(-6.0 * u, 4.0 * u, 0))
    v, f = S.box((5.0 * u, 5.0 * u, 0.1 * u))
    S.mesh_object(bpy, "LowCeiling", v, f, location=(4.0 * u, -4.0 * u, 1.2 * u))
    v, f = S.box((2.0 * u, 2.0 * u, 2.0 * u))
    S.mesh_object(bpy, "Platform", v, f, location=(4.0 * u, 4.0 * u, 1.0 * u),
                  rotation=(0, 0, math.radians(30)))


def centimetre_audit_level(bpy):
    scene = bpy.context.scene
    scene.unit_settings.scale_length = 0.01
    s = scene.capsule_collision
    s.radius, s.height, s.step_height, s.skin_width = 35.0, 180.0, 35.0, 2.0
    s.snap_distance, s.min_step_depth, s.speed, s.gravity = 40.0, 15.0, 400.0, 981.0
    s.max_fall_speed = 5500.0
    audit_level(bpy, unit=100.0)


AUDIT_LEVELS = {"metres": (audit_level, True), "centimetres": (centimetre_audit_level, True),
                "transformed+array+instance": (mixed_level, False)}


@pytest.mark.parametrize("level_name", list(AUDIT_LEVELS))
@pytest.mark.parametrize("op, attr, kind", [
    ("stand_test", "cc_cannot_stand", "STAND"),
    ("stair_audit", "cc_stair_problem", "STAIRS"),
    ("headroom_audit", "cc_low_headroom", "HEADROOM"),
    ("ledge_audit", "cc_ledge", "LEDGE"),
])
def test_audit_attributes_equal_core(scene, bpy_module, mods, op, attr, kind, level_name):
    bpy = bpy_module
    build, must_find = AUDIT_LEVELS[level_name]
    build(bpy)
    assert getattr(bpy.ops.capsule_collision, op)() == {"FINISHED"}
    level = level_now(bpy, mods)
    settings = mods.props.controller_settings(scene)
    c = mods.core
    if kind == "STAND":
        tris = c.stand_test(level.mesh, settings).faces
    elif kind == "STAIRS":
        r = c.stair_audit(level.mesh, settings)
        tris = r.riser[np.asarray(r.too_high) | np.asarray(r.too_shallow)]
    elif kind == "HEADROOM":
        tris = c.headroom_audit(level.mesh, settings).faces
    else:
        r = c.ledge_audit(level.mesh, settings)
        tris = np.concatenate([r.faces, getattr(r, "edge_faces", r.faces)])  # whole runs
    if must_find:
        assert len(tris), f"{kind}: the scene must give the audit something to find"
    by_mesh = {}
    for name in level.objects:
        ob = mods.results.object_for(name)
        by_mesh.setdefault(ob.name, []).append(expected_faces(level, tris, name))
    for obj_name, parts in by_mesh.items():
        got = np.flatnonzero(attribute(bpy, bpy.data.objects[obj_name], attr))
        np.testing.assert_array_equal(got, np.unique(np.concatenate(parts)), err_msg=obj_name)
    rows = [r for r in scene.capsule_collision.results if r.kind == kind]
    finding = {"STAND": "stand", "STAIRS": "stairs", "HEADROOM": "headroom",
               "LEDGE": "ledges"}[kind]
    explained = (mods.findings.low_headroom_regions(c.headroom_audit(level.mesh, settings))
                 if kind == "STAND" else mods.findings.EMPTY_I)
    listed = mods.findings.audit_findings(
        finding, getattr(c, op)(level.mesh, settings), settings,
        name_of=mods.naming.TriangleNames(level).label, explained=explained)
    assert [r.severity for r in rows if r.severity != "PASSED"] == [
        x.finding.severity.upper() for x in listed]  # one row per core finding, in order
    assert [r.label for r in rows if r.severity != "PASSED"] == [
        x.finding.message for x in listed]


def test_stair_audit_row_names_the_flight_with_risers_too_high(scene, bpy_module):
    bpy = bpy_module
    audit_level(bpy)
    bpy.ops.capsule_collision.stair_audit()
    flags = attribute(bpy, bpy.data.objects["StepHigh"], "cc_stair_problem")
    assert flags[[0, 5, 10, 15]].any()  # risers of the 0.5 m flight (every 5th quad)
    (row,) = [r for r in scene.capsule_collision.results
              if r.kind == "STAIRS" and r.object == "StepHigh"]
    # the highest rise in metres (0.5 m risers; core's audit decides what else rises there)
    assert scene.capsule_collision.step_height < row.value < scene.capsule_collision.height


# ---------------------------------------------------------------- walk-through

def walk_level(bpy):
    v, f = S.grid(10, 20.0)
    S.mesh_object(bpy, "Ground", v, f)
    v, f = S.box((1.0, 4.0, 0.6))
    S.mesh_object(bpy, "Kerb", v, f, location=(3.0, 0.0, 0.3))  # a 0.6 m step: too high


def test_walkthrough_markers_and_trace_equal_core(scene, bpy_module, mods):
    bpy = bpy_module
    walk_level(bpy)
    a = S.polyline(bpy, "PathA", [(0, 0, 0), (6, 0, 0)])
    b = S.poly_curve(bpy, "PathB", [(0, -4, 0), (2, -4, 0), (5, -6, 0)])
    assert bpy.ops.capsule_collision.walkthrough() == {"FINISHED"}
    level = level_now(bpy, mods)
    settings = mods.props.controller_settings(scene)
    dg = bpy.context.evaluated_depsgraph_get()
    pts = [mods.scene_data.path_points(o, dg, 1.0) for o in (a, b)]
    reports = mods.core.walkthrough_many(level.mesh, pts, settings, dt=1.0 / 60.0)
    coll = bpy.data.collections["Capsule Collision Results"]
    for ob, rep in zip((a, b), reports):
        trace = coll.objects[f"Trace {ob.name}"]
        assert trace.capsule_collision.role == "TRACE"
        co = np.empty(len(trace.data.vertices) * 3, np.float32)
        trace.data.vertices.foreach_get("co", co)
        np.testing.assert_allclose(co.reshape(-1, 3), rep.trace, atol=1e-5)
        g = np.empty(len(trace.data.vertices), bool)
        trace.data.attributes["grounded"].data.foreach_get("value", g)
        np.testing.assert_array_equal(g, rep.grounded)
        assert len(trace.data.edges) == len(rep.trace) - 1
        events = [e for e in rep.events if e.kind != "reached_goal"]
        markers = sorted((m for m in coll.objects if m.get("path") == ob.name
                          and m.capsule_collision.role == "MARKER"), key=lambda m: m["time"])
        assert [m["kind"] for m in markers] == [e.kind for e in events]
        for m, e in zip(markers, events):
            assert m.name.startswith(f"{e.kind} {ob.name}")
            assert tuple(m.location) == pytest.approx(e.position, abs=1e-5)
            assert m["time"] == pytest.approx(e.time)
            if e.kind == "step_too_high":
                assert m["rise"] == pytest.approx(e.value)
    kinds_a = [e.kind for e in reports[0].events]
    assert "step_too_high" in kinds_a or "blocked" in kinds_a, kinds_a
    kerb_marker = [m for m in coll.objects if m.get("path") == "PathA"
                   and m.capsule_collision.role == "MARKER"][0]
    assert kerb_marker["object"] == "Kerb" and kerb_marker["face"] >= 0
    assert reports[1].reached_goal
    rows = [r for r in scene.capsule_collision.results if r.kind == "WALK"]
    assert any("PathB: reached the goal" in r.label for r in rows)


def test_walkthrough_in_a_centimetre_scene_equals_the_metre_walk(scene, bpy_module, mods):
    bpy = bpy_module
    S.centimetre_kerb(bpy, scene)
    s = scene.capsule_collision
    s.radius, s.height, s.step_height, s.skin_width = 35.0, 180.0, 35.0, 2.0
    s.snap_distance, s.min_step_depth, s.speed, s.gravity = 40.0, 15.0, 400.0, 981.0
    s.max_fall_speed = 5500.0
    assert bpy.ops.capsule_collision.walkthrough() == {"FINISHED"}
    markers = [m for m in bpy.data.objects if m.capsule_collision.role == "MARKER"]
    # the metre walk of the same level
    v, f = S.grid(10, 20.0)
    ground = mods.core.TriangleMesh(*_tri(v, f))
    kv, kf = S.box((1.0, 4.0, 0.6))
    kerb = mods.core.TriangleMesh(*_tri(np.asarray(kv) + (3.0, 0.0, 0.3), kf))
    mesh = mods.core.TriangleMesh(
        np.concatenate([ground.vertices, kerb.vertices]),
        np.concatenate([ground.triangles, kerb.triangles + len(ground.vertices)]))
    rep = mods.core.walkthrough(mesh, [(0, 0, 0), (6, 0, 0)], mods.core.ControllerSettings())
    events = [e for e in rep.events if e.kind != "reached_goal"]
    assert sorted(m["kind"] for m in markers) == sorted(e.kind for e in events)
    first = min(markers, key=lambda m: m["time"])
    assert tuple(first.location) == pytest.approx(np.asarray(events[0].position) * 100, abs=0.1)


def _tri(v, f):
    f = np.asarray(f)
    return np.asarray(v, float), np.concatenate([f[:, [0, 1, 2]], f[:, [0, 2, 3]]])


def test_walkthrough_bake_keys_the_capsule_along_the_trace(scene, bpy_module, mods):
    bpy = bpy_module
    walk_level(bpy)
    S.polyline(bpy, "Path", [(0, -4, 0), (4, -4, 0)])
    cap = S.capsule(bpy, "Walker", (0, 0, 0))
    assert bpy.ops.capsule_collision.walkthrough(bake=True, capsule="Walker") == {"FINISHED"}
    trace = bpy.data.objects["Trace Path"]
    n = len(trace.data.vertices)
    last = trace.data.vertices[n - 1].co
    fps = scene.render.fps / scene.render.fps_base
    end = scene.frame_start + (n - 1) / 60.0 * fps
    scene.frame_set(int(math.floor(end)))
    assert cap.location.x == pytest.approx(last.x, abs=0.1)
    scene.frame_set(scene.frame_start)
    assert tuple(cap.location) == pytest.approx(tuple(trace.data.vertices[0].co), abs=1e-5)
    assert cap.animation_data.action.get(mods.results.BAKE_TAG) == "Path"


def test_compare_frame_rates_stores_the_report(scene, bpy_module):
    import json

    bpy = bpy_module
    walk_level(bpy)
    S.polyline(bpy, "Path", [(0, -4, 0), (4, -4, 0)])
    assert bpy.ops.capsule_collision.compare_frame_rates() == {"FINISHED"}
    data = json.loads(scene.capsule_collision.frame_rate_report)
    assert data["rates"] == [30, 60, 120] and data["path"] == "Path"
    assert data["consistent"] is True


# ---------------------------------------------------------------- presets, add, clear

def test_apply_preset_converts_through_core_presets(scene, bpy_module, mods):
    bpy = bpy_module
    scene.unit_settings.scale_length = 0.01
    assert bpy.ops.capsule_collision.apply_preset(engine="UNREAL") == {"FINISHED"}
    s = scene.capsule_collision
    assert s.preset == "UNREAL"
    assert s.radius == pytest.approx(34.0, rel=1e-5)  # centimetres in a centimetre scene
    assert s.height == pytest.approx(176.0, rel=1e-5)
    want = mods.core.presets.preset("unreal")
    assert mods.props.controller_settings(scene).max_slope_deg == pytest.approx(
        want.max_slope_deg, rel=1e-5)


def test_add_capsule_at_the_cursor_with_the_scene_size(scene, bpy_module):
    bpy = bpy_module
    scene.cursor.location = (1.0, 2.0, 3.0)
    scene.capsule_collision.radius = 0.4
    assert bpy.ops.capsule_collision.add_capsule() == {"FINISHED"}
    ob = bpy.context.active_object
    st = ob.capsule_collision
    assert ob.type == "EMPTY" and st.role == "CAPSULE"
    assert tuple(ob.location) == pytest.approx((1.0, 2.0, 3.0))
    assert st.radius == pytest.approx(0.4) and st.height == pytest.approx(1.8)


def test_clear_results_removes_what_the_extension_made_and_nothing_else(scene, bpy_module):
    bpy = bpy_module
    walk_level(bpy)
    S.polyline(bpy, "Path", [(0, 0, 0), (6, 0, 0)])
    S.capsule(bpy, "C", (3.0, 0, 0))
    mine = snapshot(bpy)
    bpy.ops.capsule_collision.check_penetration()
    bpy.ops.capsule_collision.classify_walkability()
    bpy.ops.capsule_collision.ledge_audit()
    bpy.ops.capsule_collision.walkthrough(bake=True)
    assert snapshot(bpy) != mine
    assert bpy.ops.capsule_collision.clear_results() == {"FINISHED"}
    after = snapshot(bpy)
    # capsule states are the live check's (it re-checks after the clear); the rest is gone
    del after["states"], mine["states"]
    assert after == mine
    assert bpy.data.objects["C"].animation_data.action is None


# ---------------------------------------------------------------- errors change nothing

def test_no_collision_meshes_is_an_error_and_changes_nothing(scene, bpy_module):
    bpy = bpy_module
    S.capsule(bpy, "C", (0, 0, 0))
    before = snapshot(bpy)
    for op in ("check_penetration", "classify_walkability", "stand_test", "stair_audit",
               "headroom_audit", "ledge_audit"):
        with pytest.raises(RuntimeError, match="no collision meshes"):
            getattr(bpy.ops.capsule_collision, op)()
        assert snapshot(bpy) == before, op


def test_invalid_settings_are_an_error_and_change_nothing(scene, bpy_module):
    bpy = bpy_module
    walk_level(bpy)
    S.polyline(bpy, "Path", [(0, 0, 0), (6, 0, 0)])
    scene.capsule_collision.radius = 1.0  # height 1.8 < 2 x radius
    before = snapshot(bpy)
    for op in ("classify_walkability", "walkthrough", "stand_test", "add_capsule"):
        with pytest.raises(RuntimeError, match="height must be >= 2"):
            getattr(bpy.ops.capsule_collision, op)()
        assert snapshot(bpy) == before, op


def test_a_path_of_one_point_is_an_error_and_changes_nothing(scene, bpy_module):
    bpy = bpy_module
    walk_level(bpy)
    S.polyline(bpy, "Good", [(0, 0, 0), (6, 0, 0)])
    S.polyline(bpy, "Dot", [(1, 1, 0)])
    before = snapshot(bpy)
    with pytest.raises(RuntimeError, match="Dot.*1 point"):
        bpy.ops.capsule_collision.walkthrough()
    assert snapshot(bpy) == before


def test_polls_say_why_an_operator_is_disabled(scene, bpy_module):
    bpy = bpy_module
    assert not bpy.ops.capsule_collision.check_penetration.poll()
    assert not bpy.ops.capsule_collision.walkthrough.poll()
    assert not bpy.ops.capsule_collision.select_result.poll()
    with pytest.raises(RuntimeError, match="No capsules in the scene"):
        bpy.ops.capsule_collision.check_penetration()
    with pytest.raises(RuntimeError, match="No path"):
        bpy.ops.capsule_collision.walkthrough()


# ---------------------------------------------------------------- undo, save/reload

def test_undo_restores_the_scene_after_each_operator(scene, bpy_module):
    bpy = bpy_module
    scene.capsule_collision.live_check = False  # on, it writes C's rows before the operator
    walk_level(bpy)
    S.polyline(bpy, "Path", [(0, 0, 0), (6, 0, 0)])
    S.capsule(bpy, "C", (3.0, 0, 0))
    bpy.ops.ed.undo_push(message="built")
    before = snapshot(bpy)
    for op in ("check_penetration", "classify_walkability", "stair_audit", "walkthrough"):
        bpy.ops.ed.undo_push(message="before")
        assert getattr(bpy.ops.capsule_collision, op)() == {"FINISHED"}
        bpy.ops.ed.undo_push(message=op)
        assert snapshot(bpy) != before, op
        bpy.ops.ed.undo()
        assert snapshot(bpy) == before, op  # snapshot re-fetches every struct


def test_settings_and_results_survive_save_and_reload(scene, bpy_module, tmp_path):
    bpy = bpy_module
    walk_level(bpy)
    S.polyline(bpy, "Path", [(0, 0, 0), (6, 0, 0)])
    S.capsule(bpy, "C", (3.0, 0, 0))
    bpy.context.scene.capsule_collision.step_height = 0.3
    bpy.ops.capsule_collision.check_penetration()
    bpy.ops.capsule_collision.classify_walkability()
    bpy.ops.capsule_collision.walkthrough()
    before = snapshot(bpy)
    path = str(tmp_path / "level.blend")
    bpy.ops.wm.save_as_mainfile(filepath=path)
    bpy.ops.wm.read_homefile(use_empty=True)
    assert snapshot(bpy) != before
    bpy.ops.wm.open_mainfile(filepath=path)
    assert snapshot(bpy) == before
    s = bpy.context.scene.capsule_collision
    assert s.step_height == pytest.approx(0.3)
    assert bpy.data.objects["C"].capsule_collision.penetrating_count >= 1
    assert bpy.ops.capsule_collision.select_result(index=0, edit_mode=False) == {"FINISHED"}
    # the live check runs after the reload: a capsule moved clear of the kerb says so
    cap = bpy.data.objects["C"]
    cap.location = (-6.0, 6.0, 0.5)
    bpy.context.view_layer.update()
    assert cap.capsule_collision.penetrating_count == 0


def test_walkthrough_from_a_script_walks_only_the_selected_path(scene, bpy_module):
    bpy = bpy_module
    walk_level(bpy)
    a = S.polyline(bpy, "A", [(0, -4, 0), (3, -4, 0)])
    S.polyline(bpy, "B", [(0, 4, 0), (3, 4, 0)])
    with bpy.context.temp_override(selected_objects=[a], active_object=a, object=a):
        assert bpy.ops.capsule_collision.walkthrough(rate=30) == {"FINISHED"}
    traces = [o.name for o in bpy.data.objects if o.capsule_collision.role == "TRACE"]
    assert traces == ["Trace A"]
    trace = bpy.data.objects["Trace A"]
    t = np.empty(len(trace.data.vertices), np.float32)
    trace.data.attributes["time"].data.foreach_get("value", t)
    assert t[1] == pytest.approx(1.0 / 30.0)  # the chosen frame rate


# ---------------------------------------------------------------- expectations and report

def test_capsule_expectations_are_judged_like_the_pipeline(scene, bpy_module, capfd):
    bpy = bpy_module
    S.floor_and_wall(bpy)
    S.capsule(bpy, "MustBeClear", (1.8, 0.0, 0.0)).capsule_collision.expect = "CLEAR"
    S.capsule(bpy, "MustPenetrate", (1.8, 1.0, 0.0)).capsule_collision.expect = "PENETRATING"
    assert bpy.ops.capsule_collision.check_penetration() == {"FINISHED"}
    out = capfd.readouterr().out
    assert "Warning:" in out and "1 capsules not as expected" in out
    labels = {r.capsule: r.label for r in scene.capsule_collision.results}
    assert "expected clear: NOT met" in labels["MustBeClear"]
    assert "expected penetrating: met" in labels["MustPenetrate"]


def test_walk_expectation_uses_core_verdicts(scene, bpy_module, capfd):
    bpy = bpy_module
    walk_level(bpy)
    blocked = S.polyline(bpy, "Blocked", [(0, 0, 0), (6, 0, 0)])
    blocked.capsule_collision.expect_walk = "reached_goal"
    free = S.polyline(bpy, "Free", [(0, -4, 0), (4, -4, 0)])
    free.capsule_collision.expect_walk = "reached_goal"
    assert bpy.ops.capsule_collision.walkthrough() == {"FINISHED"}
    out = capfd.readouterr().out
    assert "1 of 2 expectations met" in out and "Warning:" in out


def test_export_report_writes_the_pipeline_schema(scene, bpy_module, mods, tmp_path):
    import json

    bpy = bpy_module
    walk_level(bpy)
    S.polyline(bpy, "Path", [(0, 0, 0), (6, 0, 0)]).capsule_collision.expect_walk = \
        "reached_goal"
    S.capsule(bpy, "C", (3.0, 0.0, 0.0)).capsule_collision.expect = "CLEAR"
    bpy.context.view_layer.update()  # let the live check mark the capsule first
    out = tmp_path / "report.json"
    # the panel's results, not a fresh run (tests/blender/test_addon_export.py)
    assert bpy.ops.capsule_collision.check_penetration() == {"FINISHED"}
    assert bpy.ops.capsule_collision.walkthrough() == {"FINISHED"}
    before = snapshot(bpy)
    assert bpy.ops.capsule_collision.export_report(filepath=str(out)) == {"FINISHED"}
    assert snapshot(bpy) == before  # exporting changes no result
    doc = json.loads(out.read_text())
    assert doc["format"] == "capsule_collision.levelcheck" and len(doc["levels"]) == 1
    assert doc["run"]["source"] == "panel" and doc["run"]["stale_findings"] == 0
    level = doc["levels"][0]
    assert level["source"] == "panel" and level["objects"] == ["Ground", "Kerb"]
    assert {f["name"] for f in level["findings"] if f["severity"] == "error"} == {"C", "Path"}
    assert not any(f["stale"] for f in level["findings"])
    assert doc["summary"]["ok"] is False
    schema_path = pathlib.Path(__file__).resolve().parents[2] / "schema" / "report.schema.json"
    try:
        import jsonschema  # requirements.txt pins it; CI validates against the schema
    except ImportError:
        jsonschema = None
    if jsonschema is not None and schema_path.is_file():
        jsonschema.validate(doc, json.loads(schema_path.read_text()))


def test_export_report_to_an_unwritable_path_is_an_error(scene, bpy_module, tmp_path):
    bpy = bpy_module
    walk_level(bpy)
    assert bpy.ops.capsule_collision.classify_walkability() == {"FINISHED"}  # rows to export
    with pytest.raises(RuntimeError, match="cannot write"):
        bpy.ops.capsule_collision.export_report(filepath=str(tmp_path / "no" / "such" / "r.json"))


def test_walk_events_on_array_stairs_and_an_instance_equal_core(scene, bpy_module, mods):
    bpy = bpy_module
    v, f = S.grid(10, 20.0)
    S.mesh_object(bpy, "Ground", v, f)
    S.array_stairs(bpy, count=6, rise=0.5, run=0.6).location.y = 6.0  # risers too high
    S.collection_instance(bpy, location=(4.0, 0.0, 0.0))  # a 1 m crate in the way
    up = S.poly_curve(bpy, "UpStairs", [(-2, 6, 0), (4, 6, 3)])
    into = S.polyline(bpy, "IntoCrate", [(0, 0, 0), (7, 0, 0)])
    assert bpy.ops.capsule_collision.walkthrough() == {"FINISHED"}
    level = level_now(bpy, mods)
    settings = mods.props.controller_settings(scene)
    dg = bpy.context.evaluated_depsgraph_get()
    pts = [mods.scene_data.path_points(o, dg, 1.0) for o in (up, into)]
    reports = mods.core.walkthrough_many(level.mesh, pts, settings, dt=1.0 / 60.0)
    sources = set()
    for ob, rep in zip((up, into), reports):
        events = [e for e in rep.events if e.kind != "reached_goal"]
        assert events, f"{ob.name} must report something"
        markers = sorted((m for m in bpy.data.objects if m.get("path") == ob.name
                          and m.capsule_collision.role == "MARKER"), key=lambda m: m["time"])
        assert [m["kind"] for m in markers] == [e.kind for e in events]
        for m, e in zip(markers, events):
            assert tuple(m.location) == pytest.approx(e.position, abs=1e-5)
            if e.triangle >= 0:
                name = level.objects[level.tri_object[e.triangle]]
                assert m["object"] == mods.results.object_for(name).name
                assert m["face"] == level.tri_orig_face[e.triangle]
                sources.add((m["object"], m["face"] >= 0))
    # the array's faces map to no original face (-1); the instance's map to the crate's mesh
    assert ("Stairs", False) in sources and ("Crate", True) in sources, sources
