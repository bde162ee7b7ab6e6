"""The add-on's data model (addon/properties.py): scene settings <-> core.ControllerSettings."""

import dataclasses
import importlib

import numpy as np
import pytest


@pytest.fixture
def props(addon):
    return importlib.import_module(addon.__name__ + ".addon.properties")


@pytest.fixture
def core(addon):
    return importlib.import_module(addon.__name__ + ".core")


def _numeric_fields(core):
    return [f.name for f in dataclasses.fields(core.ControllerSettings)
            if f.name not in ("up", "model")]  # model: a name, not a number (issue 20)


def test_every_numeric_controller_field_is_a_scene_property_with_the_same_name(scene, props,
                                                                               core):
    assert props.settings_fields_missing() == []
    rna = scene.capsule_collision.bl_rna.properties
    for name in _numeric_fields(core):
        assert name in rna, name
        assert rna[name].description, f"{name} has no tooltip"
    for name in ("radius", "height", "step_height", "min_step_depth", "skin_width",
                 "snap_distance"):
        assert rna[name].unit == "LENGTH", name
    assert rna["speed"].unit == "VELOCITY" and rna["gravity"].unit == "ACCELERATION"


def test_scene_defaults_are_core_defaults(scene, props, core):
    got, want = props.controller_settings(scene), core.ControllerSettings()
    for name in _numeric_fields(core):  # stored as float32, read back as typed (0.35, not
        assert getattr(got, name) == getattr(want, name), name  # 0.3499999940395355)


def test_slope_range_is_what_core_accepts(scene, props, core):
    rna = scene.capsule_collision.bl_rna.properties["max_slope_deg"]
    assert rna.hard_min == 0.0
    assert rna.hard_max < 90.0  # core refuses 90
    s = scene.capsule_collision
    s.max_slope_deg = 1000.0  # clamped by Blender to the hard max
    got = props.controller_settings(scene)
    assert got.max_slope_deg == pytest.approx(rna.hard_max, abs=1e-4)
    s.max_slope_deg = -5.0
    assert props.controller_settings(scene).max_slope_deg == 0.0


def test_centimetre_scene_converts_lengths_to_metres(scene, props):
    scene.unit_settings.scale_length = 0.01  # 1 Blender unit = 1 cm
    s = scene.capsule_collision
    s.radius, s.height, s.step_height, s.skin_width = 35.0, 180.0, 35.0, 2.0
    s.snap_distance, s.min_step_depth, s.speed, s.gravity = 40.0, 15.0, 400.0, 981.0
    s.max_slope_deg, s.max_iterations = 40.0, 7
    got = props.controller_settings(scene)
    assert got.radius == pytest.approx(0.35) and got.height == pytest.approx(1.8)
    assert got.step_height == pytest.approx(0.35) and got.skin_width == pytest.approx(0.02)
    assert got.snap_distance == pytest.approx(0.4)
    assert got.min_step_depth == pytest.approx(0.15)
    assert got.speed == pytest.approx(4.0) and got.gravity == pytest.approx(9.81)
    assert got.max_slope_deg == 40.0 and got.max_iterations == 7  # not scaled


def test_write_controller_settings_round_trips_in_a_centimetre_scene(scene, props, core):
    scene.unit_settings.scale_length = 0.01
    want = core.presets.preset("unreal")
    props.write_controller_settings(scene, want, preset="UNREAL")
    s = scene.capsule_collision
    assert s.preset == "UNREAL"
    assert s.radius == pytest.approx(34.0, rel=1e-6)  # cm in a cm scene
    got = props.controller_settings(scene)
    for name in _numeric_fields(core):
        assert getattr(got, name) == pytest.approx(getattr(want, name), rel=1e-6), name


def test_editing_a_setting_by_hand_leaves_the_preset(scene, props, core):
    props.write_controller_settings(scene, core.presets.preset("unity"), preset="UNITY")
    assert scene.capsule_collision.preset == "UNITY"
    scene.capsule_collision.step_height = 0.25
    assert scene.capsule_collision.preset == "CUSTOM"


@pytest.mark.parametrize("name, value, message", [
    ("radius", 1.0, "height must be >= 2 \\* radius"),  # 2 x 1.0 > default height 1.8
    ("skin_width", 0.5, "skin_width"),                 # >= radius
    ("step_height", 1.9, "step_height"),               # >= height
])
def test_inconsistent_settings_raise_value_error(scene, props, name, value, message):
    setattr(scene.capsule_collision, name, value)
    with pytest.raises(ValueError, match=message):
        props.controller_settings(scene)


def test_object_data_model_defaults(scene, bpy_module):
    bpy = bpy_module
    ob = bpy.data.objects.new("C", None)
    scene.collection.objects.link(ob)
    st = ob.capsule_collision
    assert st.role == "NONE" and st.expect == "ANY" and st.expect_walk == "ANY"
    assert st.penetrating_count == -1
    kinds = {i.identifier for i in st.bl_rna.properties["expect_walk"].enum_items}
    assert {"reached_goal", "blocked", "step_too_high", "slope_too_steep", "fell",
            "fell_out_of_level", "ceiling_too_low", "stuck"} <= kinds
    roles = {i.identifier for i in st.bl_rna.properties["role"].enum_items}
    assert roles == {"NONE", "CAPSULE", "PATH", "TRACE", "MARKER", "CELLS"}
    assert st.spawn is False  # a capsule is a spawn only when the designer ticks it


def test_faces_encoding_is_little_endian_int32_base64(props):
    faces = np.array([0, 7, 2**31 - 1, 123456], np.int64)
    text = props.encode_faces(faces)
    import base64

    assert base64.b64decode(text) == faces.astype("<i4").tobytes()
    np.testing.assert_array_equal(props.decode_faces(text), faces)
    assert props.decode_faces("").size == 0


@pytest.mark.parametrize("engine, model", [("JOLT", "jolt"), ("RAPIER", "rapier"),
                                           ("UNITY", "exact")])
def test_presets_set_the_model_their_verdicts_come_from(scene, props, core, engine, model,
                                                        bpy_module):
    """Issue 20: the Jolt and Rapier presets predict their engine; the panel says so."""
    with bpy_module.context.temp_override(scene=scene):
        assert bpy_module.ops.capsule_collision.apply_preset(engine=engine) == {"FINISHED"}
    assert scene.capsule_collision.model == model.upper()
    got = props.controller_settings(scene)
    assert got.model == model
    _assert_same_settings(got, core.presets.preset(engine.lower()))


def test_model_and_jump_height_round_trip_in_a_centimetre_scene(scene, props, core):
    scene.unit_settings.scale_length = 0.01
    want = core.ControllerSettings(model="rapier", jump_height=1.25)
    props.write_controller_settings(scene, want)
    assert scene.capsule_collision.model == "RAPIER"
    assert scene.capsule_collision.jump_height == pytest.approx(125.0)
    _assert_same_settings(props.controller_settings(scene), want)


def _assert_same_settings(got, want):
    """Equal up to the float32 a FloatProperty stores (and the unit scale's product)."""
    g, w = got.to_dict(), want.to_dict()
    assert g.keys() == w.keys()
    for name in w:
        if isinstance(w[name], float):
            assert g[name] == pytest.approx(w[name], rel=1e-6, abs=1e-9), name
        else:
            assert g[name] == w[name], name
