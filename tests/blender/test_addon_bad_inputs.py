"""Bad inputs say which object and field (issue 24, section 5), through the installed
extension: a radius of 0 is an error naming the radius (Blender no longer clamps it to a
0.1 mm capsule that then fails on the skin width); a capsule with a negative Z scale is
flagged by name; a vertex that is not finite names its object and index; a spawn inside a
wall is a reachability warning; a walk that reached its goal counts no event."""

import math

import ops_scenes as S
import pytest


def _floor(bpy):
    v, f = S.grid(4, 8.0)
    return S.mesh_object(bpy, "Floor", v, f)


def test_a_character_radius_of_0_is_an_error_naming_the_radius(scene, bpy_module):
    bpy = bpy_module
    _floor(bpy)
    S.capsule(bpy, "Cap", (0.0, 0.0, 0.0))
    scene.capsule_collision.radius = 0.0
    assert scene.capsule_collision.radius == 0.0  # stored as typed, not clamped to 0.1 mm
    for op in ("classify_walkability", "stand_test", "headroom_audit"):
        with pytest.raises(RuntimeError, match="radius must be > 0") as err:
            getattr(bpy.ops.capsule_collision, op)()
        assert "skin" not in str(err.value), op


def test_a_capsule_of_radius_0_is_an_error_naming_it(scene, bpy_module):
    bpy = bpy_module
    _floor(bpy)
    S.capsule(bpy, "Cap", (0.0, 0.0, 0.0)).capsule_collision.radius = 0.0
    bpy.context.view_layer.update()
    with pytest.raises(RuntimeError, match="capsule 'Cap': radius must be > 0"):
        bpy.ops.capsule_collision.check_penetration()


def test_a_capsule_with_a_negative_z_scale_is_flagged_by_name(scene, bpy_module):
    """Mirrored along Z the capsule would hang down from its foot into the floor below and
    be checked upside down; a rotation that tilts it is no error (the control)."""
    bpy = bpy_module
    _floor(bpy)
    cap = S.capsule(bpy, "Cap", (0.0, 0.0, 0.0))
    cap.scale = (1.0, 1.0, -1.0)
    bpy.context.view_layer.update()
    with pytest.raises(RuntimeError, match="capsule 'Cap' has a negative Z scale"):
        bpy.ops.capsule_collision.check_penetration()
    cap.scale = (1.0, 1.0, 1.0)
    cap.rotation_euler = (math.radians(30), 0.0, 0.0)
    bpy.context.view_layer.update()
    assert bpy.ops.capsule_collision.check_penetration() == {"FINISHED"}


def test_a_vertex_that_is_not_finite_names_its_object_and_index(scene, bpy_module):
    bpy = bpy_module
    floor = _floor(bpy)
    floor.data.vertices[3].co.x = float("nan")
    floor.data.update()
    bpy.context.view_layer.update()
    with pytest.raises(RuntimeError, match=r"object 'Floor': vertex 3 is not finite"):
        bpy.ops.capsule_collision.classify_walkability()


def test_a_spawn_inside_a_wall_is_a_reachability_warning(scene, bpy_module):
    bpy = bpy_module
    _floor(bpy)
    v, f = S.box((0.5, 4.0, 3.0))
    S.mesh_object(bpy, "Wall", v, f, location=(2.0, 0.0, 1.5))
    for name, x in (("Good", -2.0), ("Walled", 1.9)):
        S.capsule(bpy, name, (x, 0.0, 0.0)).capsule_collision.spawn = True
    bpy.context.view_layer.update()
    assert bpy.ops.capsule_collision.reachability() == {"FINISHED"}
    (row,) = [r for r in scene.capsule_collision.results if r.kind == "REACHABILITY"]
    # its middle is inside the wall's closed box: left out of the flood, and an error row
    assert "Walled is inside the closed solid Wall: it floods nothing" in row.label, row.label
    assert "Good" not in row.label
    assert row.severity != "PASSED"
    (spawn,) = [r for r in scene.capsule_collision.results if r.kind == "SPAWN"]
    assert (spawn.finding, spawn.severity, spawn.object) == ("spawn Walled", "ERROR", "Wall")
    assert "spawn Walled at (1.90, 0.00, 0.00) is inside the closed solid Wall" in spawn.label
    assert "it floods nothing" in spawn.label


def test_a_walk_that_reached_its_goal_counts_no_event(scene, bpy_module):
    bpy = bpy_module
    _floor(bpy)
    S.polyline(bpy, "Route", [(-3.0, 0.0, 0.0), (3.0, 0.0, 0.0)])
    bpy.context.view_layer.update()
    assert bpy.ops.capsule_collision.walkthrough() == {"FINISHED"}
    rows = [r for r in scene.capsule_collision.results if r.kind == "WALK"]
    assert len(rows) == 1, [r.label for r in rows]
    assert "reached the goal" in rows[0].label and "0 events" in rows[0].label, rows[0].label


def test_a_spawn_inside_a_wall_is_a_warning_row_naming_it_and_the_wall(scene, bpy_module):
    """Issue 24 section 5: the panel lists a spawn inside a wall as its own warning row (the
    finding the CLI lists, core.checks.spawn_places), selecting the wall's face; a spawn
    beside the wall (1 mm clear of it) is no finding."""
    bpy = bpy_module
    _floor(bpy)
    v, f = S.box((0.5, 4.0, 3.0))
    S.mesh_object(bpy, "Wall", v, f, location=(2.0, 0.0, 1.5))
    for name, x in (("Good", -2.0), ("Clear", 1.75 - 0.35 - 0.001), ("Walled", 1.6)):
        S.capsule(bpy, name, (x, 0.0, 0.0)).capsule_collision.spawn = True
    bpy.context.view_layer.update()
    assert bpy.ops.capsule_collision.reachability() == {"FINISHED"}
    rows = [r for r in scene.capsule_collision.results if r.kind == "SPAWN"]
    assert [(r.finding, r.severity, r.check, r.got) for r in rows] == [
        ("Walled", "WARNING", "spawns", "in_wall")], [r.label for r in rows]
    assert "spawn Walled at (1.60, 0.00, 0.00) is inside a wall" in rows[0].label
    assert "penetrates Wall" in rows[0].label and rows[0].object == "Wall"
    assert rows[0].face_count == 1


def test_a_spawn_above_the_floor_is_an_info_row_saying_how_far(scene, bpy_module):
    bpy = bpy_module
    _floor(bpy)
    S.capsule(bpy, "High", (0.0, 0.0, 0.61)).capsule_collision.spawn = True
    S.capsule(bpy, "Lost", (20.0, 0.0, -5.0)).capsule_collision.spawn = True
    bpy.context.view_layer.update()
    assert bpy.ops.capsule_collision.reachability() == {"FINISHED"}
    rows = {r.finding: r for r in scene.capsule_collision.results if r.kind == "SPAWN"}
    assert set(rows) == {"High", "Lost"}, [r.label for r in rows.values()]
    assert rows["High"].severity == "INFO"
    assert "is 0.61 m above the floor: it falls to the floor below" in rows["High"].label
    assert rows["Lost"].severity == "WARNING" and "stands on no floor" in rows["Lost"].label
