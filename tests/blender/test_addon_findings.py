"""One click away (issue 16): severities per row and the panel's summary, next / previous
finding in severity order, select-and-frame, the timeline jump to a baked walk's event,
Re-check All against the individual operators, and undo in the middle of the loop."""

import importlib
import types
from unittest import mock

import blender_helpers as bh
import numpy as np
import ops_scenes as S
import pytest


@pytest.fixture
def mods(addon):
    M = bh.addon_modules(
        addon, live="addon.live", cache="addon.cache", props="addon.properties",
        results="addon.results", select="addon.operators_select", panels="addon.panels",
        severity="core.checks.severity", problems="core.checks.problems", core="core")

    M.cache.clear()
    return M


def update(bpy):
    bpy.context.view_layer.update()


def findings_level(bpy):
    """A floor with a wall, a 0.45 m curb on the route and a flight of 0.5 m risers; four
    capsules (expected clear but penetrating, no expectation but penetrating, expected to
    penetrate but clear, clear) and a route expected to reach its goal over the curb."""
    v, f = S.grid(10, 20.0)
    S.mesh_object(bpy, "Ground", v, f)
    v, f = S.box((0.5, 4.0, 3.0))
    S.mesh_object(bpy, "Wall", v, f, location=(-4.0, 0.0, 1.5))
    v, f = S.box((1.0, 4.0, 0.45))
    S.mesh_object(bpy, "Curb", v, f, location=(3.0, 0.0, 0.225))
    S.staircase(bpy, "Steps", [0.5] * 3, [0.6] * 3, location=(0.0, 6.0, 0.0))
    caps = {
        "Spawn": ((-4.2, 0.0, 0.0), "CLEAR"),
        "Probe": ((-3.8, 1.0, 0.0), "ANY"),
        "Neg": ((6.0, -6.0, 0.0), "PENETRATING"),
        "Free": ((6.0, 6.0, 0.0), "ANY"),
    }
    for name, (at, expect) in caps.items():
        S.capsule(bpy, name, at).capsule_collision.expect = expect
    route = S.polyline(bpy, "Route", [(0, 0, 0), (6, 0, 0.45)])
    route.capsule_collision.expect_walk = "reached_goal"
    update(bpy)


def run_all(bpy):
    ops = bpy.ops.capsule_collision
    assert ops.check_penetration() == {"FINISHED"}
    assert ops.stair_audit() == {"FINISHED"}
    assert ops.ledge_audit() == {"FINISHED"}
    assert ops.walkthrough() == {"FINISHED"}


def rows_of(scene):
    return [(r.kind, r.capsule, r.object, r.label, r.faces, r.severity, r.stamp, r.inputs)
            for r in scene.capsule_collision.results]


# ---------------------------------------------------------------- severities
def test_rows_carry_the_severity_of_their_finding_kind(scene, bpy_module, mods):
    bpy = bpy_module
    scene.capsule_collision.live_check = False
    findings_level(bpy)
    run_all(bpy)
    sev = {}
    for r in scene.capsule_collision.results:
        sev.setdefault((r.kind, r.capsule), set()).add(r.severity)
    assert sev[("PENETRATION", "Spawn")] == {"ERROR"}  # expected clear, penetrates
    assert sev[("PENETRATION", "Probe")] == {"WARNING"}  # no expectation, penetrates
    assert sev[("PENETRATION", "Neg")] == {"ERROR"}  # expected to penetrate, clear
    assert sev[("PENETRATION", "Free")] == {"PASSED"}
    assert sev[("STAIRS", "")] == {"WARNING"} and sev[("LEDGE", "")] == {"INFO"}
    route = [r for r in scene.capsule_collision.results if r.kind == "WALK"]
    assert route[0].severity == "ERROR" and "did not reach the goal" in route[0].label
    assert route[1].severity == "ERROR" and route[1].event == "step_too_high"
    assert all(r.severity == "INFO" for r in route[2:])
    counts = mods.results.severity_counts(scene)
    rows = scene.capsule_collision.results
    for word in ("warning", "info", "passed"):
        assert counts[word] == sum(r.severity == word.upper() for r in rows), word
    # one finding per problem (core.checks.held): the route's verdict row and the event that
    # broke it are one walk finding, as report.json counts it: Spawn, Neg and Route
    assert sum(r.severity == "ERROR" for r in rows) == 2 + 2
    assert counts["error"] == 2 + 1 and counts["passed"] == 1
    text = mods.results.summary_text(counts)
    assert text.startswith(f"{counts['error']} errors, {counts['warning']} warning")
    assert text.endswith("1 passed")


def test_the_panel_shows_the_summary_at_the_top(scene, bpy_module, mods):
    bpy = bpy_module
    scene.capsule_collision.live_check = False
    findings_level(bpy)
    run_all(bpy)
    layout = mock.MagicMock()
    ctx = types.SimpleNamespace(scene=scene, active_object=None)
    mods.panels.CAPSULE_COLLISION_PT_main.draw(types.SimpleNamespace(layout=layout), ctx)
    labels = [c for c in layout.mock_calls if c[0].endswith("label")]
    first = labels[0].kwargs
    assert first["text"] == mods.results.summary_text(mods.results.severity_counts(scene))
    assert first["icon"] == "CANCEL"  # there are errors
    ops = [c.args[0] for c in layout.mock_calls if c[0].endswith("operator")]
    assert ops[:2] == ["capsule_collision.goto_finding"] * 2
    assert "capsule_collision.recheck_all" in ops
    for index, row in enumerate(scene.capsule_collision.results):
        item = mock.MagicMock()
        mods.panels.CAPSULE_COLLISION_UL_results.draw_item(None, None, item, None, row, 0,
                                                           None, "", index)
        icon = [c for c in item.mock_calls if c[0].endswith("label")][0].kwargs["icon"]
        if row.severity != "NONE":
            assert icon == mods.props.SEVERITY_ICONS[row.severity], row.label


ROW_CHECKS = {"STAND": "stand", "STAIRS": "stairs", "HEADROOM": "headroom", "LEDGE": "ledges",
              "ISLAND": "islands", "TRAP": "traps"}


def _junit_counts(path, cases):
    """{severity: lines} over the findings JUnit lists in ``cases`` (failures and
    system-out lines, one per finding; attachments are not findings)."""
    import xml.etree.ElementTree as ET  # noqa: PLC0415

    counts: dict = {}
    for case in ET.parse(path).getroot().iter("testcase"):
        if case.get("name") not in cases:
            continue
        for part in ("failure", "system-out"):
            node = case.find(part)
            for line in ([] if node is None else (node.text or "").splitlines()):
                if not line.startswith("[[ATTACHMENT"):
                    severity = line.split(":", 1)[0]
                    counts[severity] = counts.get(severity, 0) + 1
    return counts


def test_the_panel_report_json_and_junit_count_the_same_findings(scene, bpy_module, mods,
                                                                 tmp_path):
    """Issue 24: on the sample level the panel's rows, report.json and junit.xml count the
    audits' and reachability's findings by one rule in core: one per problem (a stair
    flight, a ledge run, an island, ...), never one per object or one per face."""
    import json  # noqa: PLC0415
    import subprocess  # noqa: PLC0415
    import sys  # noqa: PLC0415

    from capsule_collision.levelcheck import sample_level  # noqa: PLC0415

    bpy = bpy_module
    scene.capsule_collision.live_check = False
    sample_level.build(scene)
    ops = bpy.ops.capsule_collision
    for op in (ops.stand_test, ops.stair_audit, ops.headroom_audit, ops.ledge_audit,
               ops.reachability):
        assert op() == {"FINISHED"}
    panel: dict = {}
    for r in scene.capsule_collision.results:
        if r.kind in ROW_CHECKS and r.severity in ("ERROR", "WARNING", "INFO"):
            key = (ROW_CHECKS[r.kind], r.severity.lower())
            panel[key] = panel.get(key, 0) + 1
    stairs = [r for r in scene.capsule_collision.results if r.kind == "STAIRS"]
    assert len(stairs) == 2 and {r.severity for r in stairs} == {"WARNING"}  # 45 cm, no tread
    assert all("stair flight" in r.label for r in stairs)
    blend = tmp_path / "sample.blend"
    bpy.ops.wm.save_as_mainfile(filepath=str(blend), copy=True)
    out = tmp_path / "out"
    proc = subprocess.run(
        [sys.executable, "-m", "capsule_collision.levelcheck", str(blend), "--out", str(out),
         "--no-png", "--quiet", "--checks", "stand,stairs,headroom,ledges,reachability"],
        capture_output=True, text=True, timeout=900)
    assert proc.returncode in (0, 1), proc.stdout + proc.stderr
    (level,) = json.loads((out / "report.json").read_text())["levels"]
    report: dict = {}
    for f in level["findings"]:
        if f["check"] in ROW_CHECKS.values():
            key = (f["check"], f["severity"])
            report[key] = report.get(key, 0) + 1
    assert panel == report and sum(panel.values()) >= 4
    # Export Report writes the panel's findings: the CLI's counts again, without a run
    assert bpy.ops.capsule_collision.export_report(filepath=str(tmp_path / "panel.json")) \
        == {"FINISHED"}
    exported: dict = {}
    for f in json.loads((tmp_path / "panel.json").read_text())["levels"][0]["findings"]:
        key = (f["check"], f["severity"])
        exported[key] = exported.get(key, 0) + 1
    assert exported == report
    junit = _junit_counts(out / "junit.xml", {f"audit: {k}" for k in
                                              ("stand", "stairs", "headroom", "ledges")}
                          | {"reachability"})
    by_severity: dict = {}
    for (_, severity), n in report.items():
        by_severity[severity] = by_severity.get(severity, 0) + n
    assert junit == by_severity
    # the panel: counts per check as the report counts them, the worst few of each listed
    text = dict(mods.panels.check_counts(scene.capsule_collision.results))
    assert text["STAIRS"] == "2 warnings"
    ledges = report[("ledges", "info")]
    assert ledges > mods.panels.ROWS_PER_CHECK and text["LEDGE"] == f"{ledges} infos"
    rows = scene.capsule_collision.results
    shown = mods.panels.shown_rows(rows, False)
    assert sum(rows[k].kind == "LEDGE" for k in shown) == mods.panels.ROWS_PER_CHECK
    assert len(mods.panels.shown_rows(rows, True)) == len(rows)
    order = mods.panels.grouped_order(rows)
    listed = [rows[k] for k in sorted(range(len(rows)), key=order.__getitem__)]
    kinds = [r.kind for r in listed]
    assert all(kinds.index(k) + kinds.count(k) - 1 == len(kinds) - 1 - kinds[::-1].index(k)
               for k in set(kinds))  # each check's rows together
    islands = [r for r in listed if r.kind == "ISLAND"]
    assert [r.value for r in islands] == sorted((r.value for r in islands), reverse=True)
    # the problems nobody reaches: one info row each audit, its faces in cc_out_of_reach,
    # drawn by the overlay's Out of Reach toggle (off by default)
    away = [r for r in rows if r.severity == "INFO" and "on floor no spawn reaches" in r.label]
    assert away and all(r.kind in ("STAND", "STAIRS", "HEADROOM", "LEDGE") for r in away)
    for r in away:
        ob = bpy.data.objects[r.object]
        flags = mods.results.read_face_flags(ob.data, mods.results.OUT_OF_REACH_ATTRIBUTE)
        assert set(mods.props.decode_faces(r.faces).tolist()) <= set(np.flatnonzero(flags))
    overlay = importlib.import_module(mods.panels.__name__.rsplit(".", 1)[0] + ".overlay")
    assert not scene.capsule_collision.show_out_of_reach
    drawn = overlay.overlay_geometry(scene, bh.depsgraph()).face_layer("out_of_reach")[0]
    assert drawn.shape[0] == 0
    scene.capsule_collision.show_out_of_reach = True
    drawn = overlay.overlay_geometry(scene, bh.depsgraph()).face_layer("out_of_reach")[0]
    assert drawn.shape[0] >= 3


# ---------------------------------------------------------------- next / previous
def test_next_and_previous_walk_the_findings_in_severity_order(scene, bpy_module, mods):
    bpy = bpy_module
    scene.capsule_collision.live_check = False
    findings_level(bpy)
    run_all(bpy)
    rows = scene.capsule_collision.results
    order = mods.select.finding_order(scene)
    ranks = [mods.severity.rank(rows[i].severity.lower()) for i in order]
    assert ranks == sorted(ranks) and ranks[0] == 0 and ranks[-1] == 2  # errors .. infos
    assert all(rows[i].severity not in ("PASSED", "NONE") for i in order)
    scene.capsule_collision.results_index = -1
    seen = []
    for _ in range(len(order) + 1):
        assert bpy.ops.capsule_collision.goto_finding(step=1, edit_mode=False) == {"FINISHED"}
        seen.append(scene.capsule_collision.results_index)
    assert seen == order + order[:1]  # wraps around to the first error
    back = []
    for _ in range(2):
        bpy.ops.capsule_collision.goto_finding(step=-1, edit_mode=False)
        back.append(scene.capsule_collision.results_index)
    assert back == [order[-1], order[-2]]


def test_goto_finding_is_disabled_when_everything_passed(scene, bpy_module):
    bpy = bpy_module
    S.floor_and_wall(bpy)
    S.capsule(bpy, "Free", (-3.0, 0.0, 0.0))
    bpy.ops.capsule_collision.check_penetration()
    assert not bpy.ops.capsule_collision.goto_finding.poll()
    with pytest.raises(RuntimeError, match="poll"):
        bpy.ops.capsule_collision.goto_finding()


# ---------------------------------------------------------------- select, frame, jump
def view(bpy):
    (space,) = [a.spaces.active for a in bpy.context.screen.areas if a.type == "VIEW_3D"]
    return space.region_3d


def test_a_row_click_selects_exactly_its_faces_and_frames_them(scene, bpy_module, mods):
    bpy = bpy_module
    findings_level(bpy)
    bpy.ops.capsule_collision.check_penetration()
    index = [i for i, r in enumerate(scene.capsule_collision.results)
             if r.capsule == "Spawn" and r.object == "Wall"][0]
    row = scene.capsule_collision.results[index]
    want = mods.props.decode_faces(row.faces)
    assert bpy.ops.capsule_collision.select_result(index=index) == {"FINISHED"}
    wall = bpy.data.objects["Wall"]
    assert bpy.context.mode == "EDIT_MESH" and bpy.context.active_object == wall
    bpy.ops.object.mode_set(mode="OBJECT")
    sel = np.empty(len(wall.data.polygons), bool)
    wall.data.polygons.foreach_get("select", sel)
    np.testing.assert_array_equal(np.flatnonzero(sel), np.sort(want))
    # framed: the view centre is the centre of the faces' box, the box fits the view
    verts = np.array([wall.matrix_world @ wall.data.vertices[v].co
                      for f in want for v in wall.data.polygons[f].vertices])
    lo, hi = verts.min(0), verts.max(0)
    np.testing.assert_allclose(row.bounds[:3], lo, atol=1e-5)
    np.testing.assert_allclose(row.bounds[3:], hi, atol=1e-5)
    r3d = view(bpy)
    assert tuple(r3d.view_location) == pytest.approx(tuple((lo + hi) / 2), abs=1e-5)
    assert r3d.view_distance > np.linalg.norm(hi - lo) / 2
    clear = [i for i, r in enumerate(scene.capsule_collision.results) if r.capsule == "Free"]
    assert bpy.ops.capsule_collision.select_result(index=clear[0]) == {"FINISHED"}
    assert [o.name for o in bpy.context.selected_objects] == ["Free"]  # the capsule itself
    assert tuple(r3d.view_location)[:2] == pytest.approx((6.0, 6.0), abs=1e-5)


def test_a_baked_walk_event_moves_the_timeline_to_when_it_happened(scene, bpy_module, mods):
    bpy = bpy_module
    scene.capsule_collision.live_check = False
    findings_level(bpy)
    S.array_stairs(bpy, count=4, rise=0.5, run=0.6).location = (0.0, -6.0, 0.0)
    up = S.polyline(bpy, "Up", [(-2, -6, 0), (3, -6, 2)])
    walker = S.capsule(bpy, "Walker", (0, 0, 0))
    for ob in bpy.context.selected_objects:
        ob.select_set(False)
    with bpy.context.temp_override(selected_objects=[up], active_object=up):
        assert bpy.ops.capsule_collision.walkthrough(bake=True, capsule="Walker") == {
            "FINISHED"}
    rows = scene.capsule_collision.results
    i = [i for i, r in enumerate(rows) if r.capsule == "Up" and r.object == "Stairs"][0]
    row = rows[i]
    assert row.object == "Stairs" and row.unmapped == 1  # an array step: no face to select
    assert bpy.ops.capsule_collision.select_result(index=i) == {"FINISHED"}
    (marker,) = bpy.context.selected_objects
    assert marker.capsule_collision.role == "MARKER" and marker["kind"] == row.event
    fps = scene.render.fps / scene.render.fps_base
    frame = scene.frame_start + row.time * fps
    assert scene.frame_current == int(np.floor(frame))
    assert scene.frame_current_final == pytest.approx(frame, abs=1e-3)
    assert tuple(walker.location) == pytest.approx(tuple(row.position), abs=0.1)
    assert tuple(view(bpy).view_location) == pytest.approx(tuple(row.position), abs=1e-4)
    scene.frame_set(1)
    # an event of a walk that is not baked frames it and leaves the timeline alone
    route = [i for i, r in enumerate(rows) if r.capsule == "Route" and r.event]
    bpy.ops.capsule_collision.walkthrough()
    route = [i for i, r in enumerate(scene.capsule_collision.results)
             if r.capsule == "Route" and r.event]
    assert bpy.ops.capsule_collision.select_result(index=route[0], edit_mode=False) == {
        "FINISHED"}
    assert scene.frame_current == 1
    assert [o.name for o in bpy.context.selected_objects] == ["Curb"]  # its face's object


# ---------------------------------------------------------------- Re-check All
def test_recheck_all_equals_the_individual_operators(scene, bpy_module, mods, capfd):
    bpy = bpy_module
    scene.capsule_collision.live_check = False
    findings_level(bpy)
    S.capsule(bpy, "Walker", (0, -8, 0))
    ops = bpy.ops.capsule_collision

    def individually():  # in the panel's order, which Re-check All follows
        for name in ("check_penetration", "classify_walkability", "stand_test", "stair_audit",
                     "headroom_audit", "ledge_audit"):
            assert getattr(ops, name)() == {"FINISHED"}, name
        with bpy.context.temp_override(selected_objects=[bpy.data.objects["Route"]],
                                       active_object=bpy.data.objects["Route"]):
            assert ops.walkthrough(bake=True, capsule="Walker", rate=30) == {"FINISHED"}
            assert ops.compare_frame_rates() == {"FINISHED"}

    individually()
    individually()  # the first bake moved Walker: now the scene is what the rows say
    first = rows_of(scene)
    assert ops.recheck_all() == {"FINISHED"}
    assert rows_of(scene) == first  # nothing changed: the same rows
    # change the level, a capsule and the settings; then both ways again
    bpy.data.objects["Curb"].location.z = -0.2  # 0.25 m: now climbable
    bpy.data.objects["Probe"].location.x = 0.0
    scene.capsule_collision.max_slope_deg = 40.0
    update(bpy)
    capfd.readouterr()
    assert ops.recheck_all() == {"FINISHED"}
    out = capfd.readouterr().out
    rechecked = rows_of(scene)
    report = scene.capsule_collision.frame_rate_report
    action = bpy.data.objects["Walker"].animation_data.action
    assert action.get(mods.results.BAKE_TAG) == "Route"  # baked again on the same capsule
    individually()
    assert rechecked == rows_of(scene)
    assert report == scene.capsule_collision.frame_rate_report
    counts = mods.results.severity_counts(scene)
    assert f"Re-checked 8 of 8 checks: {mods.results.summary_text(counts)}" in out
    walk = [r for r in scene.capsule_collision.results if r.kind == "WALK"]
    assert walk[0].rate == 30 and "reached the goal" in walk[0].label


# ---------------------------------------------------------------- undo in the loop
@pytest.mark.parametrize("edit_in", ["EDIT", "OBJECT"])
def test_undo_in_the_middle_of_the_loop_stays_correct(scene, bpy_module, mods, edit_in):
    """check -> click the row -> fix the wall -> undo -> check again: the capsule is in the
    restored wall, live and in the report."""
    bpy = bpy_module
    S.floor_and_wall(bpy)
    S.capsule(bpy, "C", (1.8, 0.0, 0.0))
    update(bpy)
    bpy.ops.ed.undo_push(message="start")
    assert bpy.ops.capsule_collision.check_penetration() == {"FINISHED"}
    bpy.ops.ed.undo_push(message="checked")
    index = [i for i, r in enumerate(scene.capsule_collision.results) if r.object == "Wall"][0]
    assert bpy.ops.capsule_collision.select_result(index=index) == {"FINISHED"}
    bpy.ops.ed.undo_push(message="clicked")
    wall = bpy.data.objects["Wall"]
    if edit_in == "EDIT":
        bmesh = importlib.import_module("bmesh")
        bm = bmesh.from_edit_mesh(wall.data)
        for v in bm.verts:
            v.co.x += 2.0
        bmesh.update_edit_mesh(wall.data)
    else:
        bpy.ops.object.mode_set(mode="OBJECT")
        wall.location.x += 2.0
    update(bpy)
    assert bpy.data.objects["C"].capsule_collision.penetrating_count == 0  # fixed, live
    bpy.ops.ed.undo_push(message="fixed")
    bpy.ops.ed.undo()
    update(bpy)
    scene = bpy.context.scene  # a memfile undo replaces the scene
    assert bpy.data.objects["C"].capsule_collision.penetrating_count == 2  # the wall is back
    if bpy.context.mode != "OBJECT":
        bpy.ops.object.mode_set(mode="OBJECT")
    assert bpy.ops.capsule_collision.check_penetration() == {"FINISHED"}
    rows = scene.capsule_collision.results
    assert [r.object for r in rows] == ["Wall"] and rows[0].severity == "WARNING"
    assert bpy.data.objects["C"].capsule_collision.penetrating_count == 2


def test_nested_checks_drive_one_progress_bar(addon):
    """Re-check All runs checks that each open a progress bar: only the outermost one drives
    the window manager's cursor (begin once, its own updates, end once)."""
    operators = bh.addon_module(addon, "addon.operators")
    wm = mock.MagicMock()
    ctx = types.SimpleNamespace(window_manager=wm)
    with operators.Progress(ctx, 3) as outer:
        for i in range(3):
            with operators.Progress(ctx, 2) as inner:
                inner.update(1)
            outer.update(i + 1)
    assert wm.progress_begin.call_args_list == [mock.call(0, 3)]
    assert wm.progress_update.call_args_list == [mock.call(1), mock.call(2), mock.call(3)]
    assert wm.progress_end.call_count == 1 and operators.Progress.active == 0


def test_a_flight_the_character_jumps_is_an_info_row(scene, bpy_module, mods):
    """Stair Audit with a spawn: a flight of 0.8 m risers (1 m treads) is an info row
    "climbed by jumping" when the character jumps 1.0 m (the flood reaches its top), a
    warning row when it jumps 0.7 m or not at all (core's rule, ``findings.climbed_by_jumping``)."""
    bpy = bpy_module
    scene.capsule_collision.live_check = False
    v, f = S.grid(10, 20.0)
    S.mesh_object(bpy, "Ground", v, f)
    S.staircase(bpy, "Steps", [0.8] * 3, [1.0, 1.0, 2.0])
    S.capsule(bpy, "Spawn", (-3.0, 0.0, 0.0)).capsule_collision.spawn = True
    update(bpy)
    for jump, severity in ((1.0, "INFO"), (0.7, "WARNING"), (0.0, "WARNING")):
        scene.capsule_collision.jump_height = jump
        assert bpy.ops.capsule_collision.stair_audit() == {"FINISHED"}
        (row,) = [r for r in scene.capsule_collision.results if r.kind == "STAIRS"]
        assert (row.severity, row.check) == (severity, "stairs"), row.label
        assert ("climbed by jumping: riser 0.80 m" in row.label) == (severity == "INFO")
        assert row.object == "Steps" and row.face_count >= 3
