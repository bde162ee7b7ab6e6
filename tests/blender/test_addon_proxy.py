"""Collision authoring through the installed extension (issue 25, sections 1-2): each proxy
kind on many objects at once, the stair ramp, undo, bad input, and the export to each engine
read back by the extension's engine-naming reader (the same collision triangles); and the
CLI's ``--export-collision``."""

from __future__ import annotations

import importlib
import pathlib
import subprocess
import sys
from unittest import mock

import blender_helpers as bh
import numpy as np
import proxy_scenes as P
import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
CLI = [sys.executable, "-m", "capsule_collision.levelcheck"]


@pytest.fixture
def mods(addon):
    M = bh.addon_modules(addon, scene_data="addon.scene_data", proxies="addon.proxies",
                         shapes="addon.proxy_shapes", cache="addon.cache", core="core",
                         authoring="core.authoring")
    M.cache.clear()
    return M


def _select(bpy, *objs):
    for ob in bpy.context.scene.objects:
        ob.select_set(False)
    for ob in objs:
        ob.select_set(True)
    bpy.context.view_layer.objects.active = objs[0] if objs else None
    bpy.context.view_layer.update()


def _collision(bpy):
    coll = bpy.data.collections.get("Collision")
    return sorted(o.name for o in coll.objects) if coll is not None else []


def _arrays(mods, bpy, ob):
    dg = bpy.context.evaluated_depsgraph_get()
    return mods.proxies.world_arrays(ob, dg, 1.0)


def _last(scene):
    return scene.capsule_collision.last_report


def _refused(op, **kw) -> str:
    """The {'ERROR'} report of operator ``op`` (a script sees it as RuntimeError)."""
    with pytest.raises(RuntimeError) as err:
        op(**kw)
    return str(err.value)


def _level(mods, bpy):
    mods.cache.clear()
    return mods.scene_data.read_level(bpy.context.evaluated_depsgraph_get(), bpy.context.scene)


# ---------------------------------------------------------------- proxies
def test_boxes_for_many_objects_at_once_are_their_own_boxes(scene, bpy_module, mods):
    bpy = bpy_module
    crates = [P.crate(f"Crate{k}", location=(3.0 * k, 0.0, 1.0)) for k in range(3)]
    _select(bpy, *crates)
    assert bpy.ops.capsule_collision.make_proxies(kind="BOX", engine="UNREAL") == {"FINISHED"}
    assert _collision(bpy) == ["UBX_Crate0_01", "UBX_Crate1_01", "UBX_Crate2_01"]
    assert "3 collision objects (box) for 3 render meshes in" in _last(scene)
    for ob in crates:
        proxy = bpy.data.objects[f"UBX_{ob.name}_01"]
        v, _t = _arrays(mods, bpy, ob)
        pv, pt = _arrays(mods, bpy, proxy)
        assert len(pt) == 12 and proxy[mods.proxies.PROXY_OF] == ob.name
        # the rotated crate's eight corners, exactly (float32 storage)
        assert np.allclose(np.sort(pv, axis=0), np.sort(v, axis=0), atol=1e-5)
    s = scene.capsule_collision
    assert s.collision_source == "COLLECTION" and s.collision_collection.name == "Collision"
    level = _level(mods, bpy)
    assert level.mesh.n_triangles == 36
    assert set(level.objects) == {f"UBX_Crate{k}_01" for k in range(3)}


def test_hull_of_a_concave_block_is_convex_and_holds_it(scene, bpy_module, mods):
    bpy = bpy_module
    block = P.l_block()
    _select(bpy, block)
    assert bpy.ops.capsule_collision.make_proxies(kind="HULL", engine="GODOT") == {"FINISHED"}
    hull = bpy.data.objects["Block_01-convcolonly"]
    v, t = _arrays(mods, bpy, hull)
    bv, bt = _arrays(mods, bpy, block)
    assert mods.authoring.is_convex(v, t) and not mods.authoring.is_convex(bv, bt)
    # every hull corner is a corner of the block; the re-entrant corners are gone
    corners = {tuple(np.round(p, 5)) for p in bv}
    assert {tuple(np.round(p, 5)) for p in v} <= corners and len(v) == 10


def test_sphere_and_capsule_where_they_fit_and_a_box_named_where_not(scene, bpy_module, mods):
    bpy = bpy_module
    pill, crate = P.pill(), P.crate()
    _select(bpy, pill, crate)
    res = bpy.ops.capsule_collision.make_proxies(kind="PRIMITIVE", engine="UNREAL",
                                                 tolerance=0.02)
    assert res == {"FINISHED"}
    assert _collision(bpy) == ["UCP_Pill_01"]
    assert "Crate fits no sphere or capsule within 0.02 m" in _last(scene)
    v, _t = _arrays(mods, bpy, bpy.data.objects["UCP_Pill_01"])
    assert v[:, 2].min() == pytest.approx(0.0, abs=0.02)
    assert v[:, 2].max() == pytest.approx(2.0, abs=0.02)
    _select(bpy, crate)
    assert "Crate fits no sphere" in _refused(bpy.ops.capsule_collision.make_proxies,
                                              kind="PRIMITIVE")
    assert _collision(bpy) == ["UCP_Pill_01"]


def test_decomposition_gives_convex_pieces_within_the_budget(scene, bpy_module, mods):
    pytest.importorskip("coacd")
    bpy = bpy_module
    block = P.l_block()
    _select(bpy, block)
    res = bpy.ops.capsule_collision.make_proxies(kind="DECOMPOSE", engine="UNITY",
                                                 concavity=0.02, max_hulls=3)
    assert res == {"FINISHED"}
    names = _collision(bpy)
    assert 2 <= len(names) <= 3
    assert names[0] == "Block_01_convex_collider"
    for name in names:
        v, t = _arrays(mods, bpy, bpy.data.objects[name])
        assert mods.authoring.is_convex(v, t, tolerance=1e-3)
    # the pieces cover the L: its volume, within CoACD's concavity
    vol = sum(_volume(*_arrays(mods, bpy, bpy.data.objects[n])) for n in names)
    assert vol == pytest.approx(3.0, rel=0.1)


def _volume(v, t):
    c = v[t]
    return float(np.einsum("ij,ij->i", c[:, 0], np.cross(c[:, 1], c[:, 2])).sum() / 6.0)


def test_decomposition_without_coacd_says_what_to_install(scene, bpy_module, mods):
    bpy = bpy_module
    _select(bpy, P.l_block())
    real = importlib.import_module

    def no_coacd(name, *a, **kw):
        if name == "coacd":
            raise ImportError("No module named 'coacd'")
        return real(name, *a, **kw)

    with mock.patch.object(mods.shapes.importlib, "import_module", no_coacd):
        message = _refused(bpy.ops.capsule_collision.make_proxies, kind="DECOMPOSE")
    assert "Block convex decomposition needs the CoACD library" in message
    assert _collision(bpy) == []


def test_simplified_mesh_stays_within_the_tolerance(scene, bpy_module, mods):
    bpy = bpy_module
    ground = bh.grid("Ground", 24, size=12.0)  # 1152 triangles, 5 cm bumps
    _select(bpy, ground)
    res = bpy.ops.capsule_collision.make_proxies(kind="SIMPLIFY", engine="GODOT",
                                                 tolerance=0.03)
    assert res == {"FINISHED"}
    v, t = _arrays(mods, bpy, bpy.data.objects["Ground_01-colonly"])
    gv, gt = _arrays(mods, bpy, ground)
    assert len(t) < len(gt) / 2
    dev = mods.authoring.surface_deviation(gv, gt, v, t, 0.03)
    assert dev.within


def test_rerun_replaces_a_meshs_proxies_and_undo_removes_them(scene, bpy_module, mods):
    bpy = bpy_module
    crate = P.crate()
    _select(bpy, crate)
    bpy.ops.ed.undo_push(message="start")
    assert bpy.ops.capsule_collision.make_proxies(kind="BOX") == {"FINISHED"}
    assert bpy.ops.capsule_collision.make_proxies(kind="HULL") == {"FINISHED"}
    assert _collision(bpy) == ["UCX_Crate_01"]
    bpy.ops.ed.undo_push(message="made")
    bpy.ops.ed.undo()
    assert _collision(bpy) == [] and "UBX_Crate_01" not in bpy.data.objects


def test_bad_input_is_an_error_naming_what(scene, bpy_module, mods):
    bpy = bpy_module
    make = bpy.ops.capsule_collision.make_proxies
    _select(bpy)
    assert "no render mesh in the selection" in _refused(make, kind="BOX")
    flat = bh.floor("Sheet", size=2.0)
    _select(bpy, flat)
    assert "Sheet is flat" in _refused(make, kind="BOX")
    assert "no collection named 'Nope'" in _refused(make, kind="BOX", collection="Nope")
    assert _collision(bpy) == []


# ---------------------------------------------------------------- stair ramps
def test_stair_ramp_replaces_the_steps_and_the_character_walks_up(scene, bpy_module, mods):
    bpy = bpy_module
    floor, stairs, landing = P.stairs_level()
    _select(bpy, floor, landing)
    assert bpy.ops.capsule_collision.make_proxies(kind="HULL") == {"FINISHED"}
    _select(bpy, stairs)
    assert bpy.ops.capsule_collision.stair_ramps(engine="UNREAL") == {"FINISHED"}
    assert "1 stair ramp on 1 render mesh" in _last(scene)
    # the staircase's faces inside the ramp leave; what is left is the last tread's block,
    # at landing height beyond the ramp's top edge (a mesh proxy), then the ramp
    kind = mods.proxies.PROXY_KIND
    assert [(o.name, o[kind]) for o in mods.proxies.proxies_of("Stairs")] == [
        ("UCX_Stairs_01", "mesh"), ("UCX_Stairs_02", "convex")]
    rest, _t = _arrays(mods, bpy, bpy.data.objects["UCX_Stairs_01"])
    last = (P.STAIR_COUNT - 1) * P.STAIR_TREAD
    assert rest[:, 0].min() == pytest.approx(last, abs=1e-5)
    v, t = _arrays(mods, bpy, bpy.data.objects["UCX_Stairs_02"])
    assert mods.authoring.is_convex(v, t) and len(t) == 8
    rise = P.LANDING_HEIGHT - P.STAIR_RISE
    slope = np.degrees(np.arctan(rise / ((P.STAIR_COUNT - 1) * P.STAIR_TREAD)))
    assert v[:, 2].max() == pytest.approx(P.LANDING_HEIGHT, abs=1e-5)
    level = _level(mods, bpy)
    core = mods.core
    settings = core.ControllerSettings()
    assert slope < settings.max_slope_deg
    path = np.array([[-2.0, 0.0, 0.0], [6.0, 0.0, P.LANDING_HEIGHT]])
    for hz in (30, 60, 120):
        assert core.walkthrough(level.mesh, path, settings, dt=1.0 / hz).reached_goal


def test_stair_ramp_too_steep_keeps_the_steps_and_says_so(scene, bpy_module, mods):
    bpy = bpy_module
    _floor, stairs, _landing = P.stairs_level()
    scene.capsule_collision.max_slope_deg = 30.0
    _select(bpy, stairs)
    assert "keeps its steps" in _refused(bpy.ops.capsule_collision.stair_ramps)
    assert _collision(bpy) == []
    _select(bpy, P.crate())
    assert "no stair flight to ramp on Crate" in _refused(bpy.ops.capsule_collision.stair_ramps)


# ---------------------------------------------------------------- export round trips
def _authored_level(bpy):
    crate = P.crate(location=(0.0, 8.0, 1.0))  # beside the stairs (y within 3 m of 0)
    block, pill = P.l_block(location=(4.0, 8.0, 0.0)), P.pill(location=(-4.0, 8.0, 1.0))
    _select(bpy, crate)
    assert bpy.ops.capsule_collision.make_proxies(kind="BOX") == {"FINISHED"}
    _select(bpy, block)
    assert bpy.ops.capsule_collision.make_proxies(kind="HULL") == {"FINISHED"}
    _select(bpy, pill)
    assert bpy.ops.capsule_collision.make_proxies(kind="PRIMITIVE") == {"FINISHED"}
    floor, stairs, _landing = P.stairs_level()
    _select(bpy, floor)
    assert bpy.ops.capsule_collision.make_proxies(kind="SIMPLIFY", tolerance=0.01) == {
        "FINISHED"}
    _select(bpy, stairs)
    assert bpy.ops.capsule_collision.stair_ramps() == {"FINISHED"}


def _import(bpy, path):
    bpy.ops.wm.read_homefile(use_empty=True)
    if path.suffix == ".fbx":
        assert bpy.ops.import_scene.fbx(filepath=str(path)) == {"FINISHED"}
    else:
        assert bpy.ops.import_scene.gltf(filepath=str(path)) == {"FINISHED"}
    bpy.context.scene.capsule_collision.collision_source = "NAMING"
    bpy.context.view_layer.update()


@pytest.mark.parametrize("engine, fmt, suffix", [
    ("UNREAL", "DEFAULT", ".fbx"), ("GODOT", "DEFAULT", ".glb"),
    ("UNITY", "FBX", ".fbx"), ("UNITY", "GLTF", ".glb")])
def test_export_round_trip_gives_the_same_collision_triangles(scene, bpy_module, mods,
                                                              tmp_path, engine, fmt, suffix):
    bpy = bpy_module
    _authored_level(bpy)
    before = _level(mods, bpy)
    proxies_before = set(before.objects)
    path = tmp_path / f"level{suffix}"
    res = bpy.ops.capsule_collision.export_collision(engine=engine, file_format=fmt,
                                                     filepath=str(path))
    assert res == {"FINISHED"} and path.is_file()
    assert f"Exported 6 collision objects and 6 render meshes for {engine.title()}" in (
        _last(scene))
    # Unreal hulls every UCX_: the concave floor and the stairs' rest are named in a warning
    assert ("UCX_Floor_01, UCX_Stairs_01" in _last(scene)) is (engine == "UNREAL")
    assert set(_collision(bpy)) == proxies_before  # names restored after the export
    expected = {mods.proxies.rename_for(engine, bpy.data.objects[n]) for n in proxies_before}
    want = P.triangles_of(before)
    _import(bpy, path)
    after = _level(mods, bpy)
    assert {n.split(".")[0] for n in after.objects} == expected
    got = P.triangles_of(after)
    assert got.shape == want.shape and np.allclose(got, want, atol=2e-4)


def test_export_refuses_a_missing_folder_and_no_collision(scene, bpy_module, mods, tmp_path):
    bpy = bpy_module
    export = bpy.ops.capsule_collision.export_collision
    scene.capsule_collision.collision_source = "NAMING"
    bh.box("Crate")  # a render mesh, no collision name
    assert "no collision objects" in _refused(export, engine="GODOT",
                                              filepath=str(tmp_path / "x.glb"))
    _select(bpy, P.crate("Crate2"))
    bpy.ops.capsule_collision.make_proxies(kind="BOX")
    assert "does not exist" in _refused(export, engine="GODOT",
                                        filepath=str(tmp_path / "missing" / "x.glb"))


def test_cli_exports_a_levels_collision_for_each_engine(scene, bpy_module, mods, tmp_path):
    bpy = bpy_module
    _authored_level(bpy)
    want = P.triangles_of(_level(mods, bpy))
    blend = tmp_path / "level.blend"
    bpy.ops.wm.save_as_mainfile(filepath=str(blend), copy=True)
    for engine, suffix in (("unreal", ".fbx"), ("godot", ".glb"), ("unity", ".fbx")):
        out = tmp_path / engine
        proc = subprocess.run([*CLI, str(blend), "--export-collision", engine, "--out",
                               str(out)], capture_output=True, text=True, cwd=tmp_path,
                              timeout=300)
        assert proc.returncode == 0, proc.stderr
        path = out / f"level_collision{suffix}"
        assert path.is_file() and str(path) in proc.stdout
        _import(bpy, path)
        got = P.triangles_of(_level(mods, bpy))
        assert got.shape == want.shape and np.allclose(got, want, atol=2e-4)
    bad = subprocess.run([*CLI, str(blend), "--export-collision", "cryengine", "--out",
                          str(tmp_path / "x")], capture_output=True, text=True, cwd=tmp_path,
                         timeout=300)
    assert bad.returncode == 2 and len(bad.stderr.strip().splitlines()) == 1


# ---------------------------------------------------------------- the sub-panel
def test_authoring_panel_draws_only_things_that_exist(scene, bpy_module, addon):
    """Panels never draw in background Blender: ``draw`` runs on a recording layout."""
    bpy = bpy_module
    mod = importlib.import_module(addon.__name__ + ".addon.panels_authoring")
    _select(bpy, P.crate())
    bpy.ops.capsule_collision.make_proxies(kind="BOX")
    icons = set(bpy.types.UILayout.bl_rna.functions["label"].parameters["icon"]
                .enum_items.keys())
    for kind in ("BOX", "PRIMITIVE", "DECOMPOSE"):
        scene.capsule_collision_authoring.kind = kind
        layout = mock.MagicMock()
        mod.CAPSULE_COLLISION_PT_authoring.draw(mock.Mock(layout=layout),
                                                mock.Mock(scene=scene))
        calls = layout.mock_calls
        for c in calls:
            method = c[0].split(".")[-1]
            if method == "prop":
                assert c.args[1] in c.args[0].bl_rna.properties, c.args[1]
            if method == "operator":
                cat, op = c.args[0].split(".")
                getattr(getattr(bpy.ops, cat), op).get_rna_type()
            if "icon" in c.kwargs:
                assert c.kwargs["icon"] in icons, c.kwargs["icon"]
        ops = [c.args[0] for c in calls if c[0].split(".")[-1] == "operator"]
        assert ops == ["capsule_collision.make_proxies", "capsule_collision.stair_ramps",
                       "capsule_collision.export_collision"]
        labels = [c.kwargs.get("text") for c in calls if c[0].split(".")[-1] == "label"]
        assert "1 object in Collision" in labels
    rna = bpy.ops.capsule_collision.make_proxies.get_rna_type().properties
    assert {"kind", "engine", "tolerance", "concavity", "max_hulls"} <= set(rna.keys())


def test_undo_takes_back_stair_ramps_and_the_proxies_they_replaced(scene, bpy_module, mods):
    bpy = bpy_module
    _floor, stairs, _landing = P.stairs_level()
    _select(bpy, stairs)
    assert bpy.ops.capsule_collision.make_proxies(kind="BOX") == {"FINISHED"}
    bpy.ops.ed.undo_push(message="boxed")
    assert bpy.ops.capsule_collision.stair_ramps() == {"FINISHED"}
    assert _collision(bpy) == ["UCX_Stairs_01", "UCX_Stairs_02"]
    bpy.ops.ed.undo_push(message="ramped")
    bpy.ops.ed.undo()
    assert _collision(bpy) == ["UBX_Stairs_01"]


def test_treads_wider_than_the_flight_keep_their_part_beside_the_ramp(scene, bpy_module,
                                                                      mods):
    bpy = bpy_module
    wide = P.wide_tread_stairs()
    _select(bpy, wide)
    assert bpy.ops.capsule_collision.stair_ramps() == {"FINISHED"}
    kind = mods.proxies.PROXY_KIND
    assert [(o.name, o[kind]) for o in mods.proxies.proxies_of("Wide")] == [
        ("UCX_Wide_01", "mesh"), ("UCX_Wide_02", "convex")]
    v, t = _arrays(mods, bpy, bpy.data.objects["UCX_Wide_01"])
    c = v[t]
    area = 0.5 * np.linalg.norm(np.cross(c[:, 1] - c[:, 0], c[:, 2] - c[:, 0]), axis=1)
    low = c[..., 2].max(axis=1) < 1.2 - 1e-6  # below the top landing: the cut treads
    # five treads' 0.3 x 1 m beside the flight stay, nothing of them across it
    assert area[low].sum() == pytest.approx(5 * 0.3, abs=1e-4)
    assert (c[low][..., 1] <= 1e-5).all()
