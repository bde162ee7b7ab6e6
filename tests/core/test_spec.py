"""core.checks.spec: the sidecar spec is strict (unknown keys by JSON path, typos in verdicts,
duplicate names, wrong types) and merges with what the scene says by name."""

import numpy as np
import pytest
from capsule_collision.core import Capsule, ControllerSettings
from capsule_collision.core.checks.spec import (
    EMPTY_SPEC,
    SpecError,
    merge_checks,
    parse_axis,
    parse_settings,
    parse_spec,
    resolve_settings,
    spawn_points,
)
from capsule_collision.core.checks.verdicts import CapsuleCheck, PathCheck

FULL = {"name": "Castle", "mesh": "castle.obj", "preset": "Unity",
        "settings": {"step_height": 0.3, "max_iterations": 6}, "collection": "Collision",
        "naming": False, "up": "z", "forward": "+Y",
        "capsules": [{"name": "Spawn", "foot": [1, 2, 0], "radius": 0.4, "height": 2,
                      "expect": "CLEAR"}],
        "paths": [{"name": "Route", "points": [[0, 0, 0], [3, 0, 0]], "expect": "fell"}],
        "spawns": [[0, 0, 0]],
        "targets": [{"name": "Roof", "point": [5, 5, 3], "expect": "unreachable"}]}


def test_a_full_spec_is_normalised():
    spec = parse_spec(FULL, "castle.levelcheck.json")
    assert spec.preset == "unity" and spec.up == "Z" and spec.forward == "Y"
    assert spec.settings == {"step_height": 0.3, "max_iterations": 6}
    assert isinstance(spec.settings["max_iterations"], int)
    (cap,) = spec.capsules
    assert cap == ("Spawn", (1.0, 2.0, 0.0), 0.4, 2.0, "clear")
    assert spec.paths[0].expect == "fell" and spec.paths[0].points[1] == (3.0, 0.0, 0.0)
    assert spec.spawns == ((0.0, 0.0, 0.0),) and spec.targets[0].expect == "unreachable"
    assert spec.has_checks and not EMPTY_SPEC.has_checks


@pytest.mark.parametrize("doc, where", [
    ({"capsules": [{"name": "Spawn", "expected": "clear"}]}, "capsules[0].expected: unknown key"),
    ({"paths": [{"name": "R", "points": [[0, 0, 0], [1, 0, 0]], "expcet": "fell"}]},
     "paths[0].expcet: unknown key"),
    ({"targets": [{"name": "T", "point": [0, 0, 0], "expect": "reachable", "why": 1}]},
     "targets[0].why: unknown key"),
    ({"capsule": []}, "capsule: unknown key 'capsule'"),
    ({"settings": {"stepheight": 0.3}}, "settings.stepheight: unknown setting"),
    ({"settings": {"step_height": "high"}}, "settings.step_height: must be a number"),
    ({"settings": {"max_iterations": 2.5}}, "settings.max_iterations: must be a whole number"),
    ({"capsules": [{"name": "A", "foot": [0, 0, 0], "expect": "penetrated"}]},
     "capsules[0].expect: unknown expected verdict 'penetrated'"),
    ({"capsules": [{"name": "A", "foot": [0, 0, 0], "expect": None}]},
     "capsules[0].expect: expected a verdict word, got null"),
    ({"capsules": [{"name": "A", "foot": [0, 0]}]}, "capsules[0].foot: expected [x, y, z]"),
    ({"capsules": [{"name": "A", "foot": [0, 0, float("nan")]}]}, "capsules[0].foot[2]: must be"),
    ({"capsules": [{"name": "A", "radius": 0}]}, "capsules[0].radius: must be > 0"),
    ({"capsules": [{"foot": [0, 0, 0]}]}, "capsules[0].name: expected a non-empty string"),
    ({"capsules": [{"name": "A"}, {"name": "B"}, {"name": "A"}]},
     "capsules[2].name: duplicate capsule name 'A' (also capsules[0])"),
    ({"paths": [{"name": "R"}, {"name": "R"}]}, "paths[1].name: duplicate path name 'R'"),
    ({"paths": [{"name": "R", "points": [[0, 0, 0]]}]}, "paths[0].points: need at least 2"),
    ({"spawns": [[0, 0, 0]], "targets": [{"name": "T", "point": [0, 0, 0]}]},
     "targets[0].expect: unknown expected"),
    ({"spawns": [[0, 0, 0]], "targets": [{"name": "T", "expect": "reachable"}]},
     "targets[0]: needs a \"point\""),
    ({"spawns": [[0, 0]]}, "spawns[0]: expected [x, y, z]"),
    ({"naming": "yes"}, "naming: expected true or false"),
    ({"preset": "quake"}, "preset: 'quake' is not one of"),
    ({"up": "W"}, "up: expected one of X, Y, Z, -X, -Y, -Z"),
    ({"up": "Z", "forward": "-Z"}, "forward: -Z lies along up Z"),
    ({"capsules": {"name": "A"}}, "capsules: expected a list"),
    ([], "expected a JSON object, got a list"),
])
def test_every_mistake_is_an_error_naming_its_json_path(doc, where):
    with pytest.raises(SpecError) as err:
        parse_spec(doc, "level.levelcheck.json")
    assert str(err.value).startswith("spec level.levelcheck.json: ")
    assert where in str(err.value)


def test_command_line_settings_take_each_fields_type():
    assert parse_settings(["step_height=0.3", "max_iterations = 7"], "--set") == {
        "step_height": 0.3, "max_iterations": 7}
    with pytest.raises(ValueError, match=r"--set\.stepheight: unknown setting 'stepheight'"):
        parse_settings(["stepheight=0.3"], "--set")
    with pytest.raises(ValueError, match="expected NAME=VALUE"):
        parse_settings(["step_height"], "--set")
    with pytest.raises(ValueError, match="must be finite"):
        parse_settings(["radius=inf"], "--set")


def test_axes_are_blenders_names():
    assert [parse_axis(a) for a in ("x", "+Y", " -z ")] == ["X", "Y", "-Z"]
    with pytest.raises(ValueError, match="--up: expected one of"):
        parse_axis("up", "--up")


def test_settings_resolve_level_then_preset_then_spec_then_command_line():
    base = ControllerSettings(radius=0.5).to_dict()
    assert resolve_settings(base, None, {}, {})["radius"] == 0.5
    unity = resolve_settings(base, "unity", {"step_height": 0.2}, {"radius": 0.3})
    assert unity["radius"] == 0.3 and unity["step_height"] == 0.2 and "up" not in unity


def _scene():
    cap = CapsuleCheck("Spawn", Capsule.upright((1, 1, 0), 1.8, 0.35), "penetrating",
                       foot=(1.0, 1.0, 0.0), source="scene")
    path = PathCheck("Route", [[0, 0, 0], [4, 0, 0]], "reached_goal", source="scene")
    return [cap], [path]


def test_spec_entries_override_scene_entries_by_name_and_add_new_ones():
    caps, paths = _scene()
    spec = parse_spec({"capsules": [{"name": "Spawn", "expect": "clear"},
                                    {"name": "New", "foot": [5, 5, 0], "height": 2.0}],
                       "paths": [{"name": "Route", "expect": "fell"},
                                 {"name": "Back", "points": [[4, 0, 0], [0, 0, 0]]}]})
    settings = ControllerSettings()
    capsules, walks = merge_checks(spec, caps, paths, settings)
    assert [(c.name, c.expect, c.source) for c in capsules] == [
        ("Spawn", "clear", "spec"), ("New", "any", "spec")]
    assert capsules[0].foot == (1.0, 1.0, 0.0)  # kept its place
    new = capsules[1].capsule
    assert new.radius == settings.radius
    assert float(np.linalg.norm(new.b - new.a)) + 2 * new.radius == pytest.approx(2.0)
    assert [(p.name, p.expect) for p in walks] == [("Route", "fell"), ("Back", "any")]
    np.testing.assert_array_equal(walks[0].points, paths[0].points)


def test_spawns_are_the_spawn_capsules_feet_then_the_specs_spawns():
    """A scene capsule marked spawn floods from its foot, where the spec moves it if the
    spec names it (the flag stays); the spec's unnamed spawns follow; targets need no spawns
    of their own (the level's may be capsules)."""
    up = Capsule.upright((1, 1, 0), 1.8, 0.35)
    scene = [CapsuleCheck("Start", up, foot=(1.0, 1.0, 0.0), source="scene", spawn=True),
             CapsuleCheck("Probe", up, foot=(2.0, 2.0, 0.0), source="scene"),
             CapsuleCheck("Door", up, foot=(3.0, 3.0, 0.0), source="scene", spawn=True)]
    spec = parse_spec({"capsules": [{"name": "Door", "foot": [4, 5, 0.5]},
                                    {"name": "New", "foot": [6, 6, 0]}],
                       "spawns": [[7, 8, 0]],
                       "targets": [{"name": "T", "point": [0, 0, 0], "expect": "reachable"}]})
    capsules, _ = merge_checks(spec, scene, [], ControllerSettings())
    assert [(c.name, c.spawn) for c in capsules] == [
        ("Start", True), ("Probe", False), ("Door", True), ("New", False)]
    np.testing.assert_array_equal(spawn_points(spec, capsules),
                                  [[1, 1, 0], [4, 5, 0.5], [7, 8, 0]])
    assert spawn_points(parse_spec({}), []).shape == (0, 3)


def test_a_spec_entry_without_a_scene_object_needs_its_place():
    with pytest.raises(ValueError, match="spec capsule 'Ghost': no such capsule"):
        merge_checks(parse_spec({"capsules": [{"name": "Ghost"}]}), [], [],
                     ControllerSettings())
    with pytest.raises(ValueError, match="spec path 'Ghost': no such path"):
        merge_checks(parse_spec({"paths": [{"name": "Ghost"}]}), [], [], ControllerSettings())


def test_render_names_the_level_as_drawn():
    assert parse_spec({"render": "delta.obj"}, "s.json").render == "delta.obj"
    assert parse_spec({}, "s.json").render is None
    for bad in (3, "", "  ", ["delta.obj"]):
        with pytest.raises(SpecError, match=r"s\.json.*render"):
            parse_spec({"render": bad}, "s.json")
