"""The level cache (addon/cache.py) and the live check (addon/live.py) in real Blender."""

import blender_helpers as bh
import numpy as np
import pytest


@pytest.fixture
def mods(addon):
    M = bh.addon_modules(addon, sd="addon.scene_data", cache="addon.cache", live="addon.live")
    # (tests/conftest.py keeps the live check decided, never timed, on a busy machine)
    M.cache.clear()
    yield M
    M.cache.clear()


def _update(bpy_module):
    bpy_module.context.view_layer.update()  # runs depsgraph_update_post like the UI would


@pytest.fixture
def level_scene(scene, bpy_module):
    bh.floor("Floor", size=6.0)
    bh.box("Wall", lo=(2, -5, 0), hi=(2.5, 5, 3))
    cap = bh.capsule("Cap", location=(0, 0, 0.01))
    _update(bpy_module)
    return scene, cap


def _cached(mods, scene):
    return mods.cache.cached_level(bh.depsgraph(), scene)


def test_moving_a_capsule_keeps_the_cached_level(mods, level_scene, bpy_module):
    scene, cap = level_scene
    first = _cached(mods, scene)
    builds, reads = mods.cache.stats["builds"], mods.cache.stats["rereads"]
    for x in (0.5, 1.0, 1.9):
        cap.location.x = x
        cap.rotation_euler.z = x
        _update(bpy_module)
        assert _cached(mods, scene) is first
    assert mods.cache.stats["builds"] == builds
    assert mods.cache.stats["rereads"] == reads  # not even a re-read of the walls
    assert mods.cache.cached_level(bh.depsgraph(), scene) is first


def test_moving_or_editing_a_wall_rebuilds(mods, level_scene, bpy_module):
    scene, cap = level_scene
    first = _cached(mods, scene)
    wall = bpy_module.data.objects["Wall"]
    wall.location.x = 1.0
    _update(bpy_module)
    moved = _cached(mods, scene)
    assert moved is not first
    assert moved.mesh.aabb[1][0] == pytest.approx(3.5)
    co = np.empty(24, dtype=np.float32)
    wall.data.vertices.foreach_get("co", co)
    co[2::3] *= 2.0  # twice as tall
    wall.data.vertices.foreach_set("co", co)
    wall.data.update()
    _update(bpy_module)
    edited = _cached(mods, scene)
    assert edited is not moved and edited.mesh.aabb[1][2] == pytest.approx(6.0)


def test_membership_changes_rebuild(mods, level_scene, bpy_module):
    scene, _ = level_scene
    first = _cached(mods, scene)
    bh.box("Crate", lo=(-5, -5, 0), hi=(-4, -4, 1))
    _update(bpy_module)
    added = _cached(mods, scene)
    assert added is not first and "Crate" in added.objects
    bpy_module.data.objects["Crate"].hide_set(True)
    _update(bpy_module)
    hidden = _cached(mods, scene)
    assert "Crate" not in hidden.objects
    bpy_module.data.objects.remove(bpy_module.data.objects["Wall"])
    _update(bpy_module)
    assert _cached(mods, scene).objects == ("Floor",)


def test_selecting_objects_does_not_even_re_read(mods, level_scene, bpy_module):
    scene, cap = level_scene
    first = _cached(mods, scene)
    reads = mods.cache.stats["rereads"]
    view_layer = bpy_module.context.view_layer
    for ob in (bpy_module.data.objects["Wall"], cap):
        ob.select_set(True)
        view_layer.objects.active = ob
        _update(bpy_module)  # an unflagged Scene update: membership is checked, unchanged
        assert mods.cache.peek(bpy_module.context.scene) is first
    assert mods.cache.stats["rereads"] == reads


def test_renaming_into_a_naming_convention_joins_the_level(mods, level_scene, bpy_module):
    scene, _ = level_scene
    scene.capsule_collision.collision_source = "NAMING"
    bpy_module.data.objects["Wall"].name = "Wall_col"
    _update(bpy_module)
    first = _cached(mods, scene)
    assert first.objects == ("Wall_col",)
    bpy_module.data.objects["Floor"].name = "UCX_Floor"  # an unflagged Object update
    _update(bpy_module)
    assert set(_cached(mods, scene).objects) == {"Wall_col", "UCX_Floor"}


def test_a_result_attribute_on_a_wall_does_not_rebuild(mods, level_scene, bpy_module):
    scene, _ = level_scene
    first = _cached(mods, scene)
    reads = mods.cache.stats["rereads"]
    me = bpy_module.data.objects["Wall"].data
    attr = me.attributes.new("capsule_penetration", "BOOLEAN", "FACE")
    attr.data.foreach_set("value", np.ones(6, dtype=bool))
    me.update()
    _update(bpy_module)
    assert _cached(mods, scene) is first
    assert mods.cache.stats["rereads"] == reads  # the fingerprint said "same", no re-read


def _flags(mesh):
    attr = mesh.attributes.get("capsule_penetration")
    if attr is None:
        return np.zeros(len(mesh.polygons), dtype=bool)
    out = np.empty(len(mesh.polygons), dtype=bool)
    attr.data.foreach_get("value", out)
    return out


def test_capsule_moved_into_a_wall_updates_state_and_attribute(mods, level_scene, bpy_module):
    scene, cap = level_scene
    _update(bpy_module)
    pg = cap.capsule_collision
    assert pg.penetrating_count == 0
    cap.location.x = 1.8  # radius 0.35: reaches x = 2.15, 0.15 into the wall's face at x = 2
    _update(bpy_module)
    pg = bpy_module.data.objects["Cap"].capsule_collision
    assert pg.penetrating_count == 2  # the two triangles of the wall's -X face
    assert pg.deepest_depth == pytest.approx(0.15, abs=1e-6)
    assert tuple(pg.push_out) == pytest.approx((-0.15, 0, 0), abs=1e-6)
    wall = bpy_module.data.objects["Wall"]
    level = _cached(mods, scene)
    assert pg.state_stamp == level.stamp
    expected = level.faces_of(level.mesh.penetrating_triangles(
        mods.sd.capsule_of(cap, level.unit_scale)))["Wall"]
    flags = _flags(wall.data)
    assert np.flatnonzero(flags).tolist() == expected.tolist()
    assert flags.sum() == 1
    cap.location.x = 0.0  # back out: state and highlight clear
    _update(bpy_module)
    assert bpy_module.data.objects["Cap"].capsule_collision.penetrating_count == 0
    assert not _flags(wall.data).any()


def test_resizing_a_capsule_rechecks_it(mods, level_scene, bpy_module):
    _, cap = level_scene
    cap.location.x = 1.5
    _update(bpy_module)
    assert cap.capsule_collision.penetrating_count == 0
    cap.scale = (1.7, 1.7, 1.0)  # radius 0.35 * 1.7 = 0.595: reaches x = 2.095
    _update(bpy_module)
    assert bpy_module.data.objects["Cap"].capsule_collision.penetrating_count == 2
    cap = bpy_module.data.objects["Cap"]
    cap.scale = (1, 1, 1)
    _update(bpy_module)
    assert cap.capsule_collision.penetrating_count == 0
    # a size edit in the panel re-checks: the property's update callback tags the object
    cap.capsule_collision.radius = 0.6
    _update(bpy_module)
    assert bpy_module.data.objects["Cap"].capsule_collision.penetrating_count == 2


def test_live_check_off_leaves_state_alone(mods, level_scene, bpy_module):
    scene, cap = level_scene
    scene.capsule_collision.live_check = False
    assert cap.capsule_collision.penetrating_count == 0
    cap.location.x = 1.8
    _update(bpy_module)
    assert bpy_module.data.objects["Cap"].capsule_collision.penetrating_count == 0  # not 2
    assert mods.live.status(bpy_module.context.scene) == "Live check off"


def test_huge_level_defers_to_release(mods, level_scene, bpy_module, monkeypatch):
    scene, cap = level_scene
    monkeypatch.setattr(mods.live, "LIVE_SYNC_BUILD_TRIANGLES", 0)
    mods.cache.clear()
    cap.location.x = 1.8
    _update(bpy_module)
    scene = bpy_module.context.scene
    assert bpy_module.data.objects["Cap"].capsule_collision.penetrating_count == -1
    assert "waits for release" in mods.live.status(scene)
    assert mods.cache.peek(scene) is None  # nothing was built inside the handler
    assert mods.live.run_pending(now=0.0) is False  # not still long enough yet
    assert mods.live.run_pending(now=1e12) is True
    assert bpy_module.data.objects["Cap"].capsule_collision.penetrating_count == 2


def test_slow_checks_switch_to_check_on_release(mods, level_scene, bpy_module, monkeypatch):
    scene, cap = level_scene
    monkeypatch.setattr(mods.live, "LIVE_BUDGET_S", -1.0)  # every check counts as too slow
    cap.location.x = 1.0
    _update(bpy_module)
    assert "on release" in mods.live.status(bpy_module.context.scene)
    cap.location.x = 1.8
    _update(bpy_module)
    assert bpy_module.data.objects["Cap"].capsule_collision.penetrating_count == 0  # deferred
    mods.live.run_pending(now=1e12)
    assert bpy_module.data.objects["Cap"].capsule_collision.penetrating_count == 2


def test_live_check_works_after_save_and_reload(mods, level_scene, bpy_module, tmp_path):
    path = str(tmp_path / "level.blend")
    bpy_module.ops.wm.save_as_mainfile(filepath=path)
    bpy_module.ops.wm.open_mainfile(filepath=path)
    cap = bpy_module.data.objects["Cap"]
    cap.location.x = 1.8
    _update(bpy_module)
    cap = bpy_module.data.objects["Cap"]
    assert cap.capsule_collision.penetrating_count == 2
    assert _flags(bpy_module.data.objects["Wall"].data).sum() == 1


def test_undo_restores_the_cached_level(mods, level_scene, bpy_module):
    scene, _ = level_scene
    first = _cached(mods, scene)
    bpy_module.ops.ed.undo_push(message="before")
    bpy_module.data.objects["Wall"].location.x = 3.0
    _update(bpy_module)
    assert _cached(mods, bpy_module.context.scene).mesh.aabb[1][0] == pytest.approx(5.5)
    bpy_module.ops.ed.undo_push(message="after")
    bpy_module.ops.ed.undo()
    scene = bpy_module.context.scene
    restored = _cached(mods, scene)
    assert restored.mesh.aabb[1][0] == pytest.approx(3.0)  # floor edge; the wall is back
    assert restored.stamp == first.stamp


def test_handlers_registered_once(mods, addon, bpy_module):
    handlers = bpy_module.app.handlers
    assert list(handlers.depsgraph_update_post).count(mods.live.on_depsgraph_update) == 1
    assert list(handlers.load_post).count(mods.live.on_load_post) == 1
    assert list(handlers.undo_post).count(mods.live.on_undo_redo) == 1
    assert list(handlers.redo_post).count(mods.live.on_undo_redo) == 1
