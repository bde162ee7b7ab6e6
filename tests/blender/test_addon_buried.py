"""A capsule wholly inside a closed crate in real Blender (issue 27): the live check and Check
Penetration call it penetrating ("buried"), name the crate, give the way out and show it red,
though no face touches it; out of the crate it is clear again."""

import blender_helpers as bh
import pytest


@pytest.fixture
def mods(addon):
    M = bh.addon_modules(addon, cache="addon.cache", live="addon.live")
    M.cache.clear()
    yield M
    M.cache.clear()


def _update(bpy_module):
    bpy_module.context.view_layer.update()  # depsgraph_update_post, as the UI runs it


@pytest.fixture
def crate_scene(scene, bpy_module):
    bh.floor("Floor", size=20.0)
    bh.box("Crate", lo=(-2, -2, 0), hi=(2, 2, 3))
    cap = bh.capsule("Cap", location=(6, 0, 0.01))
    _update(bpy_module)
    return scene, cap


def test_live_check_calls_a_capsule_inside_a_crate_buried_and_names_it(mods, crate_scene,
                                                                     bpy_module):
    scene, cap = crate_scene
    pg = cap.capsule_collision
    assert (pg.penetrating_count, pg.inside_solid) == (0, "")
    cap.location = (0.0, 0.0, 0.5)  # wholly inside: 0.35 m radius, top at 2.3 m < 3 m
    _update(bpy_module)
    pg = bpy_module.data.objects["Cap"].capsule_collision
    assert pg.penetrating_count == 0 and pg.inside_solid == "Crate"
    assert pg.deepest_depth == pytest.approx(2.35, abs=1e-6)  # the way out: 2 m + the radius
    assert tuple(pg.push_out) == pytest.approx((2.35, 0.0, 0.0), abs=1e-6)
    (row,) = [r for r in scene.capsule_collision.results if r.capsule == "Cap"]
    assert row.object == "Crate" and row.label.startswith("Cap: buried inside Crate")
    assert row.severity == "WARNING"  # no expectation: a penetration row, red in the panel
    cap.location = (6.0, 0.0, 0.01)  # out again: clear
    _update(bpy_module)
    pg = bpy_module.data.objects["Cap"].capsule_collision
    assert (pg.penetrating_count, pg.inside_solid) == (0, "")


def test_check_penetration_operator_agrees(mods, crate_scene, bpy_module):
    scene, cap = crate_scene
    scene.capsule_collision.live_check = False
    cap.location = (0.0, 0.0, 0.5)
    cap.capsule_collision.expect = "CLEAR"
    assert bpy_module.ops.capsule_collision.check_penetration() == {"FINISHED"}
    pg = cap.capsule_collision
    assert pg.inside_solid == "Crate" and pg.deepest_depth == pytest.approx(2.35, abs=1e-6)
    (row,) = [r for r in scene.capsule_collision.results if r.capsule == "Cap"]
    assert "expected clear: NOT met" in row.label and row.severity == "ERROR"


def test_reachability_leaves_out_a_spawn_inside_the_crate_and_says_so(mods, crate_scene,
                                                                      bpy_module, capfd):
    scene, cap = crate_scene
    cap.capsule_collision.spawn = True  # on the floor beside the crate
    inside = bh.capsule("Buried", location=(0.0, 0.0, 0.5))
    inside.capsule_collision.spawn = True
    _update(bpy_module)
    assert bpy_module.ops.capsule_collision.reachability() == {"FINISHED"}
    out = capfd.readouterr().out
    assert "Warning: Reachability from 2 spawns:" in out
    assert "; Buried is inside the closed solid Crate: it floods nothing" in out
    (summary,) = [r for r in scene.capsule_collision.results if r.kind == "REACHABILITY"]
    assert summary.severity == "NONE" and summary.value > 300  # the floor, from Cap alone
