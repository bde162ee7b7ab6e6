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
