"""Reachability in Blender (issue 19): capsules marked Spawn, the Reachability operator (the
``cc_reachability`` face codes, island and trap rows, the cells object), select and frame,
no spawn, undo, Re-check All, staleness, Clear Results, the overlay's arrays, and the CLI
taking a .blend's spawn capsules as spawns.

The level (``ops_scenes.reach_level``): ground around a 1.5 m pit (a trap), a 0.36 m
platform (an island with the 0.35 m step), a slab floating 1.7 m up (cramped floor under it,
an island on top), a spawn at (1, 1, 0)."""

import json
import pathlib
import subprocess
import sys
import types
from unittest import mock

import blender_helpers as bh
import numpy as np
import ops_scenes as S
import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
TOPS = {name: 1 for name in S.REACH_BOXES}  # every box's top is its face 1
CODES = {"Ground West": 1, "Ground East": 1, "Ground South": 1, "Ground North": 1,
         "Pit Floor": 2, "Platform": 3, "Slab": 3}  # results.REACH_CODES of each top


@pytest.fixture
def mods(addon):
    M = bh.addon_modules(
        addon, results="addon.results", reach="addon.operators_reach",
        recheck="addon.operators_recheck", staleness="addon.staleness", cache="addon.cache",
        props="addon.properties", panels="addon.panels", scene_data="addon.scene_data",
        overlay="addon.overlay", overlay_reach="addon.overlay_reach", core="core",
        classes="core.checks.reachability")

    M.cache.clear()
    return M


def _level(bpy, scene, **kw):
    scene.capsule_collision.live_check = False  # only the operators write rows here
    cap = S.reach_level(bpy, **kw)
    bpy.context.view_layer.update()
    return cap


def _codes(ob):
    attr = ob.data.attributes.get("cc_reachability")
    if attr is None:
        return None
    out = np.empty(len(ob.data.polygons), np.int8)
    attr.data.foreach_get("value", out)
    return out


def _rows(scene, kinds=("REACHABILITY", "ISLAND", "TRAP")):
    return [r for r in scene.capsule_collision.results if r.kind in kinds]


def _core_result(mods, bpy, scene):
    """core.reachability on the level the operator read, from the spawn's foot."""
    level = mods.cache.peek(scene)
    s = mods.props.controller_settings(scene)
    feet = mods.scene_data.spawn_feet(mods.scene_data.spawn_objects(scene), level.unit_scale)
    return level, mods.core.reachability(level.mesh, feet, s)


def _cells(bpy):
    (ob,) = [o for o in bpy.data.objects if o.capsule_collision.role == "CELLS"]
    n = len(ob.data.vertices)
    pos = np.empty(n * 3, np.float32)
    ob.data.attributes["position"].data.foreach_get("vector", pos)
    cls = np.empty(n, np.int8)
    ob.data.attributes["cell_class"].data.foreach_get("value", cls)
    return ob, pos.reshape(-1, 3), cls


# ---------------------------------------------------------------- the operator
@pytest.mark.parametrize("unit", [1.0, 0.01])
def test_codes_rows_and_cells(scene, bpy_module, mods, unit):
    """Face codes per face, one row per island and trap with core's areas and points,
    a summary row, the cramped cells under the slab; a centimetre scene gives the same
    metres and m^2 with places in its own units."""
    bpy = bpy_module
    scene.unit_settings.scale_length = unit
    _level(bpy, scene, unit=unit)
    assert bpy.ops.capsule_collision.reachability() == {"FINISHED"}
    for name in S.REACH_BOXES:
        want = np.zeros(6, np.int8)
        want[TOPS[name]] = CODES[name]
        np.testing.assert_array_equal(_codes(bpy.data.objects[name]), want, err_msg=name)
    level, res = _core_result(mods, bpy, scene)
    assert [len(res.islands), len(res.traps)] == [2, 1]
    rows = _rows(scene)
    assert [(r.kind, r.object, r.severity) for r in rows] == [
        ("REACHABILITY", "", "NONE"), ("ISLAND", "Platform", "WARNING"),
        ("ISLAND", "Slab", "WARNING"), ("TRAP", "Pit Floor", "WARNING")]
    for row, region in zip(rows[1:], res.islands + res.traps):
        assert row.value == pytest.approx(region.area, rel=1e-6)
        np.testing.assert_allclose(row.position, np.asarray(region.point) / unit, rtol=1e-6)
        assert mods.props.decode_faces(row.faces).tolist() == [1]
        assert row.has_bounds and row.stamp == level.stamp
    assert rows[1].value == pytest.approx(7.5, abs=0.05)  # the platform's top
    assert rows[2].value == pytest.approx(4.0, abs=0.05)  # the slab's top
    assert rows[3].value == pytest.approx(4.0, abs=0.05)  # the pit's floor
    assert rows[1].position[2] == pytest.approx(0.36 / unit, rel=1e-5)
    assert rows[3].position[2] == pytest.approx(-1.5 / unit, rel=1e-5)
    assert rows[1].label == ("island: 7.5 m² of standable floor no spawn reaches, e.g. at "
                             "(8.41, 6.39, 0.36); riser 0.36 m > step height 0.35 m at "
                             "(9.99, 7.44, 0.36)")  # with what stops the way in (issue 24)
    assert rows[1].face_count == 1
    assert rows[0].label == (f"Reachability from 1 spawn: {res.reachable_area:.4g} m² "
                             "reachable, 2 islands (11.5 m²), 1 trap (4 m²); with step "
                             "height 0.36 m (now 0.35 m): 1 island is reached")  # issue 24 s3
    assert rows[0].value == pytest.approx(res.reachable_area, rel=1e-6)
    # the cells object: the cells no face colour shows, here the cramped floor under the slab
    ob, pos, cls = _cells(bpy)
    sq = mods.classes.square_cells(res)
    assert len(cls) == int(sq.sum()) > 50
    np.testing.assert_array_equal(cls, res.cell_class[sq])
    assert (cls == mods.classes.CRAMPED_CELL).all()
    np.testing.assert_allclose(pos, res.cell_points[sq] / unit, rtol=1e-6)
    assert ((pos[:, :2] * unit > (8.0, 0.5)).all(1) & (pos[:, :2] * unit < (10.0, 2.5)).all(1)
            ).all()  # under the slab
    assert ob["cell_size"] == pytest.approx(res.cell_size / unit)
    assert ob.name in mods.results.results_collection(scene).objects


def test_select_result_selects_and_frames_an_island(scene, bpy_module, mods):
    bpy = bpy_module
    _level(bpy, scene)
    bpy.ops.capsule_collision.reachability()
    index = [i for i, r in enumerate(scene.capsule_collision.results)
             if r.kind == "ISLAND" and r.object == "Platform"][0]
    assert bpy.ops.capsule_collision.select_result(index=index) == {"FINISHED"}
    platform = bpy.data.objects["Platform"]
    assert bpy.context.mode == "EDIT_MESH" and bpy.context.active_object == platform
    bpy.ops.object.mode_set(mode="OBJECT")
    sel = np.empty(6, bool)
    platform.data.polygons.foreach_get("select", sel)
    assert np.flatnonzero(sel).tolist() == [1]
    (space,) = [a.spaces.active for a in bpy.context.screen.areas if a.type == "VIEW_3D"]
    assert tuple(space.region_3d.view_location) == pytest.approx((8.5, 6.25, 0.36), abs=1e-5)


def test_designer_loop_click_the_island_lower_it_in_edit_mode_and_recheck(scene, bpy_module,
                                                                           mods):
    """The loop a designer runs: Reachability, click the 0.36 m platform's island row (Edit
    Mode, its top selected), lower the selected top 4 cm there (0.32 m, under the 0.35 m
    step) and press Re-check All without leaving Edit Mode: the platform is read from its
    edit data, reached, and its island row is gone; the others stay."""
    import bmesh  # noqa: PLC0415

    bpy = bpy_module
    _level(bpy, scene)
    bpy.ops.capsule_collision.reachability()
    islands = {r.object for r in _rows(scene, ("ISLAND",))}
    assert "Platform" in islands
    index = [i for i, r in enumerate(scene.capsule_collision.results)
             if r.kind == "ISLAND" and r.object == "Platform"][0]
    assert bpy.ops.capsule_collision.select_result(index=index) == {"FINISHED"}
    platform = bpy.data.objects["Platform"]
    assert bpy.context.mode == "EDIT_MESH"
    bm = bmesh.from_edit_mesh(platform.data)
    top = {v for f in bm.faces if f.select for v in f.verts}
    assert len(top) == 4
    for v in top:
        v.co.z -= 0.04  # local = world here: the box is centred at z = 0.18
    bmesh.update_edit_mesh(platform.data)
    assert bpy.ops.capsule_collision.recheck_all() == {"FINISHED"}
    scene = bpy.context.scene
    assert {r.object for r in _rows(scene, ("ISLAND",))} == islands - {"Platform"}
    assert _codes(bpy.data.objects["Platform"])[1] == 1  # its top: reachable
    summary = _rows(scene, ("REACHABILITY",))[0].label
    assert f"{len(islands) - 1} island" in summary


def test_an_island_on_an_instanced_and_a_mirrored_platform_names_its_instancer(scene,
                                                                              bpy_module,
                                                                              mods):
    """Kit-built levels: a 0.5 m crate kept in a collection that is not in the scene, placed
    by a collection instance on open ground, and a mirrored copy (scale x -1) of the 0.36 m
    platform. Both tops are islands; the instance's row names its instancer and selects the
    crate's top (face 1), and the mirrored platform's top is coded island on its own face."""
    bpy = bpy_module
    _level(bpy, scene)
    props = bpy.data.collections.new("Props")
    v, f = S.box((1.0, 1.0, 0.5))
    crate = bh.mesh_object("Crate", v, f, location=(0.0, 0.0, 0.25))
    for c in list(crate.users_collection):
        c.objects.unlink(crate)
    props.objects.link(crate)
    bh.collection_instance("Crate Here", props, location=(10.5, 3.0, 0.0))
    mirrored = bpy.data.objects["Platform"].copy()
    mirrored.data = bpy.data.objects["Platform"].data.copy()
    mirrored.name = "Platform Mirrored"
    mirrored.location = (-5.5 + 12.0, 6.25 - 4.0, 0.18)  # x in [5, 8], y in [1, 3.5]
    mirrored.scale = (-1.0, 1.0, 1.0)
    scene.collection.objects.link(mirrored)
    bpy.context.view_layer.update()
    assert bpy.ops.capsule_collision.reachability() == {"FINISHED"}
    rows = {r.object: r for r in _rows(scene, ("ISLAND",))}
    # one row per island: the two platforms' tops side by side are one, its faces on both
    assert "Crate" in rows and {"Platform", "Platform Mirrored"} & set(rows)
    crate_row = rows["Crate"]
    assert crate_row.instancer == "Crate Here"
    assert crate_row.value == pytest.approx(1.0, abs=0.15)  # its 1 x 1 m top, cell by cell
    assert tuple(crate_row.position)[2] == pytest.approx(0.5, abs=1e-4)
    assert _codes(mirrored)[1] == 3 and _codes(bpy.data.objects["Platform"])[1] == 3


def test_no_spawn_is_an_error_and_writes_nothing(scene, bpy_module, mods):
    bpy = bpy_module
    _level(bpy, scene, spawn=None)
    S.capsule(bpy, "Just a capsule", (1.0, 1.0, 0.0))  # not marked Spawn
    bpy.context.view_layer.update()
    with pytest.raises(RuntimeError, match="No spawn: select a capsule and tick Spawn"):
        bpy.ops.capsule_collision.reachability()
    with pytest.raises(ValueError, match="no spawn: select a capsule and tick Spawn"):
        mods.reach.run_reachability(bpy.context)  # what Re-check All would call
    assert not _rows(scene)
    assert all(_codes(bpy.data.objects[n]) is None for n in S.REACH_BOXES)
    assert not [o for o in bpy.data.objects if o.capsule_collision.role == "CELLS"]


def test_undo_removes_everything_it_wrote(scene, bpy_module, mods):
    bpy = bpy_module
    _level(bpy, scene)
    bpy.ops.ed.undo_push(message="built")
    bpy.ops.ed.undo_push(message="before")
    assert bpy.ops.capsule_collision.reachability() == {"FINISHED"}
    bpy.ops.ed.undo_push(message="reachability")
    assert len(_rows(bpy.context.scene)) == 4
    bpy.ops.ed.undo()
    scene = bpy.context.scene  # a memfile undo replaces the scene
    assert not _rows(scene)
    assert all(_codes(bpy.data.objects[n]) is None for n in S.REACH_BOXES)
    assert not [o for o in bpy.data.objects if o.capsule_collision.role == "CELLS"]
    assert bpy.data.objects["Spawn"].capsule_collision.spawn


def test_recheck_all_runs_it_again(scene, bpy_module, mods):
    """After the platform is lowered to 0.3 m (within the step), Re-check All re-runs
    Reachability: the platform is reachable and its island row is gone."""
    bpy = bpy_module
    _level(bpy, scene)
    bpy.ops.capsule_collision.reachability()
    names = [name for name, _ in mods.recheck.planned_checks(bpy.context)]
    assert names == ["reachability"]
    platform = bpy.data.objects["Platform"]
    platform.scale.z = 0.3 / 0.36
    platform.location.z = 0.15
    bpy.context.view_layer.update()
    assert bpy.ops.capsule_collision.recheck_all() == {"FINISHED"}
    assert [(r.kind, r.object) for r in _rows(scene)] == [
        ("REACHABILITY", ""), ("ISLAND", "Slab"), ("TRAP", "Pit Floor")]
    assert _codes(platform)[1] == 1  # reachable now
    assert scene.capsule_collision.last_report.startswith("Re-checked 1 of 1 checks")


def test_rows_go_stale_when_spawns_settings_or_the_level_change(scene, bpy_module, mods):
    bpy = bpy_module
    cap = _level(bpy, scene)
    bpy.ops.capsule_collision.reachability()
    stamp = mods.cache.peek(scene).stamp

    def reasons():
        return set(mods.staleness.stale_reasons(scene, stamp)[i]
                   for i, r in enumerate(scene.capsule_collision.results)
                   if r.kind in mods.reach.REACH_KINDS)

    assert reasons() == {""}
    cap.location.x = 1.5
    bpy.context.view_layer.update()
    assert reasons() == {"spawns moved, added or removed"}
    cap.location.x = 1.0
    bpy.context.view_layer.update()
    assert reasons() == {""}
    other = S.capsule(bpy, "Probe", (5.0, 5.0, 0.0))
    assert reasons() == {""}  # a capsule that is no spawn changes nothing
    other.capsule_collision.spawn = True
    assert reasons() == {"spawns moved, added or removed"}
    other.capsule_collision.spawn = False
    scene.capsule_collision.step_height = 0.4
    assert reasons() == {"settings changed"}
    scene.capsule_collision.step_height = 0.35
    assert reasons() == {""}
    assert set(mods.staleness.stale_reasons(scene, "another level")) == {"level changed"}


def test_clear_results_removes_attribute_rows_and_cells(scene, bpy_module, mods):
    bpy = bpy_module
    _level(bpy, scene)
    bpy.ops.capsule_collision.reachability()
    assert bpy.ops.capsule_collision.clear_results() == {"FINISHED"}
    assert not scene.capsule_collision.results
    assert all(_codes(bpy.data.objects[n]) is None for n in S.REACH_BOXES)
    assert not [o for o in bpy.data.objects if o.capsule_collision.role == "CELLS"]
    assert bpy.data.objects["Spawn"].capsule_collision.spawn  # capsules stay as they are


def test_open_ground_passes_and_leaves_no_cells_object(scene, bpy_module, mods):
    """A plain floor: everything reachable, no island, no trap, nothing cramped: one passed
    summary row and no cells object (an earlier one is removed)."""
    bpy = bpy_module
    _level(bpy, scene)
    bpy.ops.capsule_collision.reachability()
    assert [o.name for o in bpy.data.objects if o.capsule_collision.role == "CELLS"]
    for name in S.REACH_BOXES:
        if name != "Ground East":
            bpy.data.objects.remove(bpy.data.objects[name])
    bpy.context.view_layer.update()
    bpy.data.objects["Spawn"].location = (8.0, 4.0, 0.0)
    assert bpy.ops.capsule_collision.reachability() == {"FINISHED"}
    rows = _rows(scene)
    assert [(r.kind, r.severity) for r in rows] == [("REACHABILITY", "PASSED")]
    assert rows[0].label.endswith("reachable, 0 islands (0 m²), 0 traps (0 m²)")
    assert not [o for o in bpy.data.objects if o.capsule_collision.role == "CELLS"]
    np.testing.assert_array_equal(_codes(bpy.data.objects["Ground East"]), [0, 1, 0, 0, 0, 0])
    mods.overlay.invalidate()
    g = mods.overlay.overlay_geometry(scene, bh.depsgraph())
    words = [text for _c, text in g.legend]
    assert words == ["Reachable", "Spawn"]  # the legend names what is drawn


def test_a_spawn_on_no_floor_is_a_warning(scene, bpy_module, mods, capfd):
    bpy = bpy_module
    _level(bpy, scene)
    lost = S.capsule(bpy, "Floating", (6.0, 4.0, -20.0))  # nothing below it
    lost.capsule_collision.spawn = True
    bpy.context.view_layer.update()
    assert bpy.ops.capsule_collision.reachability() == {"FINISHED"}
    out = capfd.readouterr().out
    assert "Warning: Reachability from 2 spawns:" in out and "; Floating stands on no floor" in out
    assert _rows(scene)[0].severity == "NONE"
    assert [r.object for r in _rows(scene, ("ISLAND",))] == ["Platform", "Slab"]


def test_a_spawn_above_the_floor_falls_to_it_and_says_how_far(scene, bpy_module, mods, capfd):
    # issue 24 section 5: the game drops a spawn placed above the floor; so does the flood
    bpy = bpy_module
    _level(bpy, scene)
    high = S.capsule(bpy, "High", (6.0, 4.0, 0.61))
    high.capsule_collision.spawn = True
    bpy.context.view_layer.update()
    assert bpy.ops.capsule_collision.reachability() == {"FINISHED"}
    out = capfd.readouterr().out
    assert "Info: Reachability from 2 spawns:" in out
    assert "; High falls 0.61 m to the floor below" in out and "no floor" not in out


# ---------------------------------------------------------------- cancel (Esc)
def _state(bpy, scene):
    return ([(r.kind, r.label, r.value) for r in _rows(scene)],
            {n: _codes(bpy.data.objects[n]).tolist() for n in S.REACH_BOXES})


def test_cancelled_flood_writes_nothing_and_keeps_the_previous_results(scene, bpy_module, mods):
    # issue 24 section 4: long reachability work can be cancelled and leaves the previous
    # results intact; here the scene changed (a spawn on the platform) before the new run
    bpy = bpy_module
    _level(bpy, scene)
    assert bpy.ops.capsule_collision.reachability() == {"FINISHED"}
    before = _state(bpy, scene)
    up = S.capsule(bpy, "On Platform", (8.4, 6.4, 0.36))
    up.capsule_collision.spawn = True
    bpy.context.view_layer.update()
    told = []

    def esc(fraction):
        told.append(fraction)
        if len(told) == 2:
            raise mods.reach.Cancelled

    with pytest.raises(mods.reach.Cancelled):
        mods.reach.run_reachability(bpy.context, progress=esc)
    assert _state(bpy, scene) == before
    assert len(told) == 2
    # not cancelled, the same run writes the new answer: the platform is reached now
    assert bpy.ops.capsule_collision.reachability() == {"FINISHED"}
    assert _codes(bpy.data.objects["Platform"])[TOPS["Platform"]] == 1


def test_modal_job_cancelled_by_esc_reports_and_keeps_results(scene, bpy_module, mods):
    # the modal operator's parts (invoke itself is skipped headless): the flood in a worker
    # thread, Esc -> cancel(), the timer's finish() writes nothing
    bpy = bpy_module
    _level(bpy, scene)
    assert bpy.ops.capsule_collision.reachability() == {"FINISHED"}
    before = _state(bpy, scene)
    op_cls = mods.reach.CAPSULE_COLLISION_OT_reachability
    reports = []
    fake = types.SimpleNamespace(report=lambda level, text: reports.append((level, text)))
    job = mods.reach.ReachJob(mods.reach.prepare(bpy.context))
    job.cancel()
    assert job.wait(120)
    assert isinstance(job.error, mods.reach.Cancelled) and job.result is None
    assert op_cls.finish(fake, bpy.context, job) == {"CANCELLED"}
    assert reports == [({"WARNING"}, mods.reach.CANCELLED_TEXT)]
    assert _state(bpy, scene) == before
    # a job left to finish writes what the operator writes
    job = mods.reach.ReachJob(mods.reach.prepare(bpy.context))
    assert job.wait(120) and job.error is None
    assert op_cls.finish(fake, bpy.context, job) == {"FINISHED"}
    assert _state(bpy, scene) == before
    assert reports[-1][0] == {"INFO"} and reports[-1][1].startswith("Reachability from 1 spawn")


# ---------------------------------------------------------------- spawn flag, panel, report
def test_the_spawn_flag_is_a_capsule_property_shown_for_capsules(scene, bpy_module, mods):
    bpy = bpy_module
    cap = _level(bpy, scene)
    prop = cap.capsule_collision.bl_rna.properties["spawn"]
    assert prop.type == "BOOLEAN" and "Reachability floods" in prop.description
    assert "still checked for penetration" in prop.description
    layout = mock.MagicMock()
    ctx = types.SimpleNamespace(active_object=cap, scene=scene)
    mods.panels.CAPSULE_COLLISION_PT_capsule.draw(types.SimpleNamespace(layout=layout), ctx)
    drawn = [c.args[1] for c in layout.mock_calls if c[0].endswith("prop")]
    assert drawn == ["role", "radius", "height", "expect", "spawn"]
    layout = mock.MagicMock()
    mods.panels.CAPSULE_COLLISION_PT_audits.draw(types.SimpleNamespace(layout=layout), ctx)
    ops = [c.args[0] for c in layout.mock_calls if c[0].endswith("operator")]
    assert "capsule_collision.reachability" in ops
    notes = [c.kwargs.get("text") for c in layout.mock_calls if c[0].endswith("label")]
    assert mods.panels.NO_SPAWN_NOTE not in notes  # a spawn scopes the audits already
    cap.capsule_collision.spawn = False
    layout = mock.MagicMock()
    mods.panels.CAPSULE_COLLISION_PT_audits.draw(types.SimpleNamespace(layout=layout), ctx)
    notes = [c.kwargs.get("text") for c in layout.mock_calls if c[0].endswith("label")]
    assert notes[0] == mods.panels.NO_SPAWN_NOTE  # without one, the panel says what it does
    cap.capsule_collision.spawn = True
    # the one gathering (the CLI's and Export Report's) says which capsules are spawns
    dg = bpy.context.evaluated_depsgraph_get()
    capsules, _paths = mods.scene_data.scene_checks(scene, dg, 1.0)
    assert [(c.name, c.spawn, c.foot) for c in capsules] == [("Spawn", True, (1.0, 1.0, 0.0))]


def test_export_report_lists_the_islands_and_traps_the_panel_holds(scene, bpy_module, mods,
                                                                   tmp_path):
    bpy = bpy_module
    _level(bpy, scene)
    assert bpy.ops.capsule_collision.reachability() == {"FINISHED"}
    path = tmp_path / "report.json"
    assert bpy.ops.capsule_collision.export_report(filepath=str(path)) == {"FINISHED"}
    (level,) = json.loads(path.read_text())["levels"]
    found = [(f["check"], f["name"]) for f in level["findings"]
             if f["check"] in ("islands", "traps")]
    assert found == [("islands", "island at (8.50, 6.50, 0.25)"),
                     ("islands", "island at (9.00, 1.50, 2.00)"),
                     ("traps", "trap at (3.00, 3.00, -1.50)")]  # named by where they are


# ---------------------------------------------------------------- overlay data (no GPU)
def test_overlay_arrays_colours_squares_spawn_and_legend(scene, bpy_module, mods):
    bpy = bpy_module
    _level(bpy, scene)
    bpy.ops.capsule_collision.reachability()
    mods.overlay.invalidate()
    g = mods.overlay.overlay_geometry(scene, bh.depsgraph())
    tris, cols = g.face_layer("reachability")
    palette = mods.overlay_reach.REACH_COLORS
    # every top but the buried floor under the platform: 7 tops, the ground ones whole
    got = {tuple(np.round(c, 4)) for c in cols}
    assert got == {tuple(np.round(palette[k], 4)) for k in (1, 2, 3)}
    island = np.isclose(cols, palette[3]).all(1)
    assert island.sum() == 2 * 2 * 3  # two tops (platform, slab), 2 triangles, 3 corners
    np.testing.assert_allclose(np.sort(tris[island][:, 2]), [0.362] * 6 + [1.902] * 6,
                               atol=1e-6)  # the tops, lifted 2 mm
    cells, pos, _cls = _cells(bpy)
    assert g.cell_tris.shape == (6 * len(pos), 3)
    np.testing.assert_allclose(g.cell_tris[:, 2], 0.004, atol=1e-6)  # lifted over the faces
    cramped = np.array(mods.overlay_reach.CRAMPED, np.float32)
    np.testing.assert_allclose(g.cell_colors, np.tile(cramped, (len(g.cell_tris), 1)))
    # squares of the cell's side centred on each cell point
    sq = g.cell_tris.reshape(-1, 6, 3)[:, :, :2]
    np.testing.assert_allclose((sq.max(1) + sq.min(1)) / 2, pos[:, :2], atol=1e-5)
    np.testing.assert_allclose(sq.max(1) - sq.min(1), cells["cell_size"], atol=1e-5)
    assert g.spawn_lines.shape[0] == 2 * 32 + 4
    ring = g.spawn_lines[:64]
    np.testing.assert_allclose(np.hypot(ring[:, 0] - 1.0, ring[:, 1] - 1.0), 1.5 * 0.35,
                               rtol=1e-5)
    words = [text for _c, text in g.legend]
    assert words[:5] == ["Reachable", "Trap", "Island", "Cramped", "Spawn"]
    scene.capsule_collision.show_reachability = False
    g = mods.overlay.overlay_geometry(scene, bh.depsgraph())
    assert "reachability" not in g.faces and not g.cell_tris.size and not g.spawn_lines.size


# ---------------------------------------------------------------- the CLI
def _pictured(bpy, scene, out, level):
    """report.png: the islands' tops violet where they land in the overview, the trap's
    raspberry on the pit floor (mostly behind its rim from this side), both in the legend;
    each region's finding has its inset like any warning."""
    from capsule_collision.levelcheck import render  # noqa: PLC0415

    rgb = bh.png_rgb(out / "report.png")
    r, g, b = rgb[..., 0], rgb[..., 1], rgb[..., 2]
    violet = (b > g + 0.2) & (r > g + 0.05) & (b > r + 0.08)
    rasp = (r > g + 0.12) & (b > g + 0.06) & (r > b + 0.04)  # lit or in shade
    red = (r > 0.45) & (g < 0.2) & (b < 0.2)  # the finding red of test_levelcheck
    addon = sys.modules["bl_ext.user_default.capsule_collision"]
    sd = bh.addon_module(addon, "addon.scene_data")
    mesh = sd.read_level(bpy.context.evaluated_depsgraph_get(), scene).mesh
    codes = bh.addon_module(addon, "core").classify_triangles(mesh, 45.0)
    places = [c["foot"] for c in level["capsules"]]
    places += [f["position"] for f in level["findings"] if f["position"] is not None]
    shown = render.shown_triangles(mesh, render.cut_height(mesh, codes, places, 1.8))
    view = render.view_for(mesh.vertices[mesh.triangles[shown]].reshape(-1, 3))
    legend = int(0.25 * render.WIDTH)
    for top in ((8.5, 6.25, 0.36), (9.0, 1.5, 1.9), (7.5, 5.5, 0.36)):
        col, row = view.pixels([top])[0].astype(int)
        assert violet[row - 2:row + 3, col - 2:col + 3].all(), top
    assert violet[:, :legend].sum() > 50 and rasp[:, :legend].sum() > 50  # the swatches
    col, row = view.pixels([(3.9, 3.9, -1.5)])[0].astype(int)
    assert rasp[row - 6:row + 7, col - 6:col + 7].sum() >= 10
    assert rasp[:, legend:].sum() > 30 and not red[:, legend:].any()  # no finding is an error
    regions = [f for f in level["findings"] if f["check"] in ("islands", "traps")]
    assert all(f["picture"] for f in regions)


def test_the_cli_takes_a_blends_spawn_capsules_as_spawns(scene, bpy_module, tmp_path):
    """A .blend with a capsule marked Spawn: reachability runs by default (no sidecar) and
    reports the islands and the trap; a sidecar's targets use the scene's spawn."""
    bpy = bpy_module
    _level(bpy, scene)
    blend = tmp_path / "reach.blend"
    bpy.ops.wm.save_as_mainfile(filepath=str(blend), copy=True)
    cli = [sys.executable, "-m", "capsule_collision.levelcheck"]
    proc = subprocess.run([*cli, str(blend), "--out", str(tmp_path / "out"), "--quiet"],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    (level,) = json.loads((tmp_path / "out" / "report.json").read_text())["levels"]
    assert "reachability" in level["checks"] and "reachability" in level["timings_s"]
    found = [(f["check"], f["name"], f["severity"]) for f in level["findings"]
             if f["check"] in ("islands", "traps")]
    assert found == [("islands", "island at (8.50, 6.50, 0.25)", "warning"),
                     ("islands", "island at (9.00, 1.50, 2.00)", "warning"),
                     ("traps", "trap at (3.00, 3.00, -1.50)", "warning")]
    island = [f for f in level["findings"] if f["check"] == "islands"][0]
    assert island["faces"][0]["object"] == "Platform"
    assert island["face_count"] == 2  # its two triangles
    assert island["position"][2] == pytest.approx(0.36)
    _pictured(bpy, scene, tmp_path / "out", level)
    (tmp_path / "reach.levelcheck.json").write_text(json.dumps({"targets": [
        {"name": "Pit", "point": [3, 3, -1.5], "expect": "reachable"},
        {"name": "Platform", "point": [8.5, 6.0, 0.36], "expect": "reachable"}]}))
    proc = subprocess.run([*cli, str(blend), "--out", str(tmp_path / "out2"), "--no-png",
                           "--quiet", "--checks", "reachability"],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    (level,) = json.loads((tmp_path / "out2" / "report.json").read_text())["levels"]
    assert [(t["name"], t["verdict"]) for t in level["targets"]] == [
        ("Pit", "reachable"), ("Platform", "unreachable")]


def test_save_blend_marks_the_sidecars_spawns_and_floods_from_all(scene, bpy_module,
                                                                  tmp_path):
    """--save-blend: a sidecar spawn on the platform becomes a capsule marked Spawn, and the
    annotated level's Reachability floods from both spawns (the platform is no island)."""
    bpy = bpy_module
    _level(bpy, scene)
    blend = tmp_path / "reach.blend"
    bpy.ops.wm.save_as_mainfile(filepath=str(blend), copy=True)
    (tmp_path / "reach.levelcheck.json").write_text(json.dumps({"spawns": [[8.5, 6.0, 0.36]]}))
    proc = subprocess.run([sys.executable, "-m", "capsule_collision.levelcheck", str(blend),
                           "--out", str(tmp_path / "out"), "--no-png", "--quiet",
                           "--checks", "penetration,reachability", "--save-blend"],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    (level,) = json.loads((tmp_path / "out" / "report.json").read_text())["levels"]
    assert [f["name"] for f in level["findings"] if f["check"] == "islands"] == [
        "island at (9.00, 1.50, 2.00)"]  # the slab's top
    bpy.ops.wm.open_mainfile(filepath=str(tmp_path / "out" / "reach.levelcheck.blend"))
    added = bpy.data.objects["Spawn 1"]
    assert added.capsule_collision.role == "CAPSULE" and added.capsule_collision.spawn
    assert tuple(added.location) == pytest.approx((8.5, 6.0, 0.36))
    rows = _rows(bpy.context.scene)
    assert rows[0].label.startswith("Reachability from 2 spawns")
    assert [r.object for r in rows if r.kind == "ISLAND"] == ["Slab"]


def test_a_spawn_is_still_checked_for_penetration(scene, bpy_module):
    bpy = bpy_module
    cap = _level(bpy, scene, spawn=(8.5, 6.0, 0.2))  # its foot inside the platform
    assert cap.capsule_collision.spawn
    assert bpy.ops.capsule_collision.check_penetration() == {"FINISHED"}
    rows = [r for r in scene.capsule_collision.results if r.kind == "PENETRATION"]
    assert [(r.capsule, r.object, r.severity) for r in rows] == [
        ("Spawn", "Platform", "WARNING")]
