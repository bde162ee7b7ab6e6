"""Engine presets: each engine's parameters into ControllerSettings and back."""

import math

import pytest
from capsule_collision.core.controller.controller import ControllerSettings
from capsule_collision.core.controller.presets import (
    ENGINES,
    export,
    from_godot,
    from_jolt,
    from_physx,
    from_unity,
    from_unreal,
    preset,
    to_godot,
    to_jolt,
    to_physx,
    to_unity,
    to_unreal,
)


def test_unity_defaults_and_fields():
    s = from_unity()
    assert (s.radius, s.height, s.max_slope_deg, s.step_height, s.skin_width) == (
        0.5, 2.0, 45.0, 0.3, 0.08)
    assert to_unity(s) == {"slopeLimit": 45.0, "stepOffset": 0.3, "skinWidth": 0.08,
                           "radius": 0.5, "height": 2.0}


def test_unreal_is_in_centimetres_and_walkable_floor_z():
    s = from_unreal()  # ACharacter defaults: radius 34, half height 88, WalkableFloorZ 0.71
    assert s.radius == pytest.approx(0.34)
    assert s.height == pytest.approx(1.76)
    assert s.step_height == pytest.approx(0.45)
    assert s.max_slope_deg == pytest.approx(math.degrees(math.acos(0.71)))
    assert s.max_slope_deg == pytest.approx(44.765, abs=1e-3)
    assert s.speed == pytest.approx(6.0) and s.gravity == pytest.approx(9.8)
    d = to_unreal(s)
    assert d["CapsuleRadius"] == pytest.approx(34) and d["CapsuleHalfHeight"] == pytest.approx(88)
    assert d["MaxStepHeight"] == pytest.approx(45) and d["WalkableFloorZ"] == pytest.approx(0.71)
    assert from_unreal(WalkableFloorAngle=50).max_slope_deg == pytest.approx(50)
    with pytest.raises(ValueError):
        from_unreal(WalkableFloorAngle=50, WalkableFloorZ=0.71)
    with pytest.raises(ValueError):
        from_unreal(WalkableFloorZ=1.5)


def test_godot_radians_no_step_and_snap():
    s = from_godot()
    assert s.max_slope_deg == pytest.approx(45.0, abs=1e-4)
    assert s.step_height == 0.0 and s.snap_distance == pytest.approx(0.1)
    assert s.skin_width == pytest.approx(0.001) and s.max_iterations == 6
    assert to_godot(s)["floor_max_angle"] == pytest.approx(0.785398)


def test_physx_cosine_slope_and_sphere_centre_height():
    s = from_physx(radius=0.4, height=1.0)
    assert s.height == pytest.approx(1.8)
    assert s.max_slope_deg == pytest.approx(math.degrees(math.acos(0.707)))
    assert s.skin_width == pytest.approx(0.1) and s.step_height == pytest.approx(0.5)
    assert from_physx(slopeLimit=0.0).max_slope_deg == pytest.approx(89.9)
    assert to_physx(s)["height"] == pytest.approx(1.0)
    with pytest.raises(ValueError):
        from_physx(slopeLimit=1.5)


def test_jolt_vectors_radians_and_capsule():
    s = from_jolt()
    assert s.max_slope_deg == pytest.approx(50.0)
    assert s.step_height == pytest.approx(0.4) and s.snap_distance == pytest.approx(0.5)
    assert s.height == pytest.approx(1.95) and s.radius == pytest.approx(0.3)
    assert s.min_step_depth == pytest.approx(0.15) and s.skin_width == pytest.approx(0.02)
    d = to_jolt(s)
    assert d["mWalkStairsStepUp"] == pytest.approx((0, 0.4, 0))
    assert d["halfHeightOfCylinder"] == pytest.approx(0.675)
    with pytest.raises(ValueError):
        from_jolt(mWalkStairsStepUp=(0.1, 0.4, 0))


@pytest.mark.parametrize("engine", ENGINES)
def test_round_trip_engine_dict(engine):
    d = export(preset(engine), engine)
    d2 = export(preset(engine, **d), engine)
    assert d2.keys() == d.keys()
    for k in d:
        assert d2[k] == pytest.approx(d[k]), k


@pytest.mark.parametrize("engine", ENGINES)
def test_round_trip_settings_for_the_fields_an_engine_has(engine):
    s = ControllerSettings(radius=0.4, height=1.9, max_slope_deg=40.0, step_height=0.3,
                           skin_width=0.03, snap_distance=0.45, min_step_depth=0.2,
                           max_iterations=6, speed=5.0, gravity=9.0)
    back = preset(engine, **export(s, engine))
    assert back.radius == pytest.approx(s.radius)
    assert back.height == pytest.approx(s.height)
    assert back.max_slope_deg == pytest.approx(s.max_slope_deg)
    if engine != "unreal":  # Unreal's floor distance is a constant (MAX_FLOOR_DIST 2.4 cm)
        assert back.skin_width == pytest.approx(s.skin_width)
    if engine != "godot":  # Godot has no step-up
        assert back.step_height == pytest.approx(s.step_height)


def test_overrides_and_unknown_engine():
    assert preset("unity", speed=7.0).speed == 7.0
    assert from_unity(stepOffset=0.25, min_step_depth=0.1).min_step_depth == 0.1
    with pytest.raises(ValueError, match="unknown engine"):
        preset("cryengine")
    with pytest.raises(ValueError, match="unknown engine"):
        export(ControllerSettings(), "source")
    with pytest.raises(ValueError):
        from_unity(stepOffset=5.0)  # step higher than the character


# ---------------------------------------------------------------- field by field (issue 26)
# Settings whose every field has its own value, so that a field built from the wrong one
# (to_jolt's mStickToFloorStepDown from step_height instead of snap_distance) shows.
DISTINCT = ControllerSettings(radius=0.41, height=1.93, max_slope_deg=41.0, step_height=0.31,
                              skin_width=0.023, snap_distance=0.47, min_step_depth=0.17,
                              max_iterations=7, speed=5.3, gravity=9.4)
# ControllerSettings fields each engine carries (its export has a field for each)
CARRIED = {
    "unity": ("radius", "height", "max_slope_deg", "step_height", "skin_width"),
    "unreal": ("radius", "height", "max_slope_deg", "step_height", "speed", "gravity"),
    "godot": ("radius", "height", "max_slope_deg", "skin_width", "snap_distance",
              "max_iterations"),
    "physx": ("radius", "height", "max_slope_deg", "step_height", "skin_width"),
    "jolt": ("radius", "height", "max_slope_deg", "step_height", "skin_width",
             "snap_distance", "min_step_depth", "max_iterations"),
    "rapier": ("radius", "height", "max_slope_deg", "step_height", "skin_width",
               "snap_distance", "min_step_depth"),
}
# DISTINCT exported, every field an engine has, in its own units (the oracle, by hand)
EXPORTED = {
    "unity": {"slopeLimit": 41.0, "stepOffset": 0.31, "skinWidth": 0.023, "radius": 0.41,
              "height": 1.93},
    "unreal": {"WalkableFloorAngle": 41.0, "WalkableFloorZ": math.cos(math.radians(41.0)),
               "MaxStepHeight": 31.0, "CapsuleRadius": 41.0, "CapsuleHalfHeight": 96.5,
               "MaxWalkSpeed": 530.0, "GravityZ": -940.0},
    "godot": {"floor_max_angle": math.radians(41.0), "floor_snap_length": 0.47,
              "safe_margin": 0.023, "radius": 0.41, "height": 1.93, "max_slides": 7},
    "physx": {"slopeLimit": math.cos(math.radians(41.0)), "stepOffset": 0.31,
              "contactOffset": 0.023, "radius": 0.41, "height": 1.11},
    "jolt": {"mMaxSlopeAngle": math.radians(41.0), "mWalkStairsStepUp": (0.0, 0.31, 0.0),
             "mStickToFloorStepDown": (0.0, -0.47, 0.0), "mCharacterPadding": 0.023,
             "mWalkStairsStepForwardTest": 0.17, "mMaxCollisionIterations": 7,
             "halfHeightOfCylinder": 0.555, "radius": 0.41},
    "rapier": {"radius": 0.41, "half_height": 0.555, "offset": 0.023,
               "max_slope_climb_angle": math.radians(41.0), "autostep_max_height": 0.31,
               "autostep_min_width": 0.17, "snap_to_ground": 0.47},
}


def _assert_fields_equal(got: dict, want: dict):
    assert got.keys() == want.keys()
    for key, value in want.items():
        assert got[key] == pytest.approx(value, abs=1e-12), key


@pytest.mark.parametrize("engine", ENGINES)
def test_export_gives_every_field_of_the_engine_from_its_own_setting(engine):
    """Each engine field, by hand: a field built from another setting (each setting of
    DISTINCT has its own value) fails here."""
    _assert_fields_equal(export(DISTINCT, engine), EXPORTED[engine])


@pytest.mark.parametrize("engine", ENGINES)
def test_preset_reads_every_field_of_the_engine_into_its_own_setting(engine):
    s = preset(engine, **EXPORTED[engine])
    for field in CARRIED[engine]:
        assert getattr(s, field) == pytest.approx(getattr(DISTINCT, field), abs=1e-12), field


@pytest.mark.parametrize("engine", ENGINES)
def test_round_trip_carries_each_setting_alone(engine):
    """Change one carried setting at a time: the round trip brings back that change and no
    other (a field read from or written to the wrong setting moves two, or loses one)."""
    base = preset(engine, **export(DISTINCT, engine))
    for field in CARRIED[engine]:
        value = getattr(DISTINCT, field)
        moved = DISTINCT.replace(**{field: value + (1 if field == "max_iterations" else
                                                    0.013 if field != "max_slope_deg"
                                                    else 2.0)})
        back = preset(engine, **export(moved, engine))
        for other in CARRIED[engine]:
            want = getattr(moved if other == field else base, other)
            assert getattr(back, other) == pytest.approx(want, abs=1e-12), (field, other)


def test_engine_presets_keep_their_model_through_the_round_trip():
    for engine, model in (("jolt", "jolt"), ("rapier", "rapier"), ("unity", "exact")):
        assert preset(engine, **export(DISTINCT, engine)).model == model
