"""tools/levelcheck.py, the pipeline CLI: the main job on the sample level (one subprocess run,
as a user runs it), the same level in four file formats, bad inputs, parallel, sharded and
baseline runs (in-process, on the Blender the ``addon`` fixture loaded)."""

import json
import os
import pathlib
import re
import subprocess
import sys
import xml.etree.ElementTree as ET

import numpy as np
import pytest

from tools import levelcheck, levelcheck_render, sample_level

ROOT = pathlib.Path(__file__).resolve().parents[2]
CLI = ROOT / "tools" / "levelcheck.py"
SCHEMA = json.loads((ROOT / "schema" / "report.schema.json").read_text())
README_FIRST = ("python3.11 -m venv .venv && .venv/bin/pip install -q -r requirements.txt && "
                ".venv/bin/python tools/levelcheck.py")
FAST = ["--no-png", "--checks", "penetration,walks", "--quiet"]
TIMINGS = "timings_s"


def _keys(level):
    return [(f["check"], f["name"], f["expected"], f["got"]) for f in level["findings"]]


def _strip_timings(document):
    doc = json.loads(json.dumps(document))
    for lv in doc["levels"]:
        lv.pop(TIMINGS)
    return doc


@pytest.fixture(scope="module")
def main_job(tmp_path_factory):
    """The README's first command (minus the venv set-up), from a scratch folder."""
    cwd = tmp_path_factory.mktemp("main_job")
    proc = subprocess.run([sys.executable, str(CLI)], cwd=cwd, capture_output=True, text=True,
                          timeout=600)
    out = cwd / "levelcheck-out"
    return proc, out


def test_main_job_reports_the_two_level_bugs_where_they_are(main_job):
    proc, out = main_job
    assert proc.returncode == 1, proc.stdout + proc.stderr
    doc = json.loads((out / "report.json").read_text())
    (level,) = doc["levels"]
    assert _keys(level) == list(sample_level.EXPECTED_FINDINGS)
    capsule, walk = level["findings"]
    assert capsule["position"] == pytest.approx([5.0, sample_level.lane_y(6) - 0.4, 0.0])
    assert {f["object"] for f in capsule["faces"]} == {"Corridor 60cm L"}
    assert "[Corridor 60cm L faces" in capsule["message"]
    assert walk["position"][0] == pytest.approx(4.0 - 0.35, abs=0.05)  # against the curb
    assert [f["object"] for f in walk["faces"]] == ["Curb 45cm"]
    verdicts = {w["name"]: w["verdict"] for w in level["walks"]}
    designed = {name: expect for name, _, expect in sample_level.paths()}
    designed["Main Route"] = "step_too_high"  # bug 2
    designed["Walk Ledge"] = "reached_goal"  # expects fell: it falls, then reaches its goal
    assert verdicts == designed
    assert all(w["ok"] for w in level["walks"] if w["name"] != "Main Route")
    event = next(e for w in level["walks"] if w["name"] == "Walk Stairs 45cm"
                 for e in w["events"])
    assert event["kind"] == "step_too_high" and event["value"] == pytest.approx(0.45, abs=0.01)
    assert event["object"] == "Stairs 45cm"
    # the console: one table naming objects and positions, the findings, then the outputs
    assert "Spawn Corridor" in proc.stdout and "(5.00, 18.60, 0.00)" in proc.stdout
    assert "on Curb 45cm face" in proc.stdout
    assert "2 finding(s) in 1 level(s)" in proc.stdout
    assert proc.stdout.rstrip().splitlines()[-3:] == [
        f"  {out / name}" for name in ("report.json", "junit.xml", "report.png")]
    assert "Traceback" not in proc.stderr
    assert "level sample level: walk Main Route: step_too_high" in proc.stderr  # progress


def test_report_json_validates_against_the_schema(main_job):
    jsonschema = pytest.importorskip("jsonschema")
    _, out = main_job
    text = (out / "report.json").read_text()
    jsonschema.validate(json.loads(text), SCHEMA)
    assert "Infinity" not in text and "e+308" not in text


def test_junit_has_a_case_per_check_and_per_path_and_failures_for_findings(main_job):
    _, out = main_job
    suite = ET.parse(out / "junit.xml").getroot().find("testsuite")
    cases = {c.get("name"): c for c in suite.iter("testcase")}
    expected = {"penetration", "walkability", "stand", "stairs", "headroom", "ledges"} | {
        f"walk: {name}" for name, _, _ in sample_level.paths()}
    assert set(cases) == expected
    failed = {name for name, c in cases.items() if c.find("failure") is not None}
    assert failed == {"penetration", "walk: Main Route"}
    assert suite.get("failures") == "2" and suite.get("tests") == str(len(expected))
    message = cases["walk: Main Route"].find("failure").get("message")
    assert "does not reach its goal" in message and "Curb 45cm" in message


def _red(png):
    import bpy  # noqa: PLC0415

    img = bpy.data.images.load(str(png))
    try:
        w, h = img.size
        px = np.empty(w * h * 4, np.float32)
        img.pixels.foreach_get(px)
    finally:
        bpy.data.images.remove(img)
    rgba = px.reshape(h, w, 4)[::-1]  # Blender stores rows bottom-up
    r, g, b = rgba[..., 0], rgba[..., 1], rgba[..., 2]
    return (r > 0.45) & (g < 0.2) & (b < 0.2)


def levelcheck_render_addon():
    return sys.modules["bl_ext.user_default.capsule_collision"]


def test_report_png_is_red_where_the_findings_are(main_job, scene):
    _, out = main_job
    red = _red(out / "report.png")
    assert red.shape == (levelcheck_render.HEIGHT, levelcheck_render.WIDTH)
    # where the faces of each finding land in the picture (same camera, from the geometry)
    import bpy  # noqa: PLC0415
    from blender_helpers import addon_module  # noqa: PLC0415

    sample_level.build(scene)
    scene_data = addon_module(levelcheck_render_addon(), "addon.scene_data")
    geometry = scene_data.read_level(bpy.context.evaluated_depsgraph_get(), scene)
    view = levelcheck_render.view_for(geometry.mesh.vertices)
    doc = json.loads((out / "report.json").read_text())
    for finding in doc["levels"][0]["findings"]:
        tris = [f["triangle"] for f in finding["faces"]]
        centre = geometry.mesh.vertices[geometry.mesh.triangles[tris]].mean(axis=(0, 1))
        col, row = view.pixels([centre])[0].astype(int)
        window = red[row - 6:row + 7, col - 6:col + 7]  # the curb's riser is a thin strip
        assert window.sum() >= 25, (finding["name"], col, row, window.sum())
    assert red[:, : int(0.25 * levelcheck_render.WIDTH)].sum() < 2000  # legend: one swatch
    assert 300 < red.sum() < 0.05 * red.size  # findings stand out; the level is not red


def test_the_clean_sample_level_exits_0(tmp_path, addon, capfd):
    blend = _save_sample(tmp_path / "clean.blend", bugs=False)
    rc = levelcheck.main([str(blend), "--out", str(tmp_path / "out"), "--no-png", "--quiet"])
    captured = capfd.readouterr()
    assert rc == 0, captured.out + captured.err
    doc = json.loads((tmp_path / "out" / "report.json").read_text())
    assert doc["summary"] == {"levels": 1, "findings": 0, "new_findings": None, "ok": True}
    assert len(doc["levels"][0]["walks"]) == 11 and len(doc["levels"][0]["capsules"]) == 4
    assert "0 finding(s) in 1 level(s)" in captured.out


def _save_sample(path, bugs=True):
    import bpy  # noqa: PLC0415

    bpy.ops.wm.read_homefile(use_empty=True)
    sample_level.build(bpy.context.scene, bugs=bugs)
    bpy.ops.wm.save_as_mainfile(filepath=str(path), copy=True)
    return path


def _export_all(folder):
    """The bugged sample as .blend and as Blender exports it to .glb, .obj and .fbx (the
    exporters' defaults: Y-up glTF/OBJ, n-gons in the OBJ, FBX in centimetres), each of the
    three with the sample's capsules and paths as a sidecar."""
    import bpy  # noqa: PLC0415

    blend = _save_sample(folder / "course.blend")
    meshes = [o for o in bpy.context.scene.objects if o.type == "MESH"]
    for o in bpy.context.scene.objects:
        o.select_set(o.type == "MESH")
    bpy.context.view_layer.objects.active = meshes[0]
    files = {"blend": blend}
    files["glb"] = folder / "course_gltf.glb"
    bpy.ops.export_scene.gltf(filepath=str(files["glb"]), use_selection=True)
    files["obj"] = folder / "course_obj.obj"
    bpy.ops.wm.obj_export(filepath=str(files["obj"]), export_selected_objects=True,
                          export_materials=False)
    files["fbx"] = folder / "course_fbx.fbx"
    bpy.ops.export_scene.fbx(filepath=str(files["fbx"]), use_selection=True)
    for kind in ("glb", "obj", "fbx"):
        sidecar = files[kind].with_suffix("").as_posix() + ".levelcheck.json"
        pathlib.Path(sidecar).write_text(json.dumps(sample_level.spec()))
    return files


def test_same_findings_from_blend_glb_obj_and_fbx(tmp_path, addon, capfd):
    files = _export_all(tmp_path)
    obj_text = files["obj"].read_text()
    assert re.search(r"^f( \S+){5,}$", obj_text, re.M), "the OBJ keeps n-gons"
    ys = [float(line.split()[2]) for line in obj_text.splitlines() if line.startswith("v ")]
    assert max(ys) == pytest.approx(2.2, abs=1e-4)  # Y is up in the file (the walls' tops)
    order = ("blend", "glb", "obj", "fbx")
    rc = levelcheck.main([str(files[k]) for k in order]
                         + ["--out", str(tmp_path / "out"), "--no-png", "--quiet"])
    capfd.readouterr()
    assert rc == 1
    doc = json.loads((tmp_path / "out" / "report.json").read_text())
    levels = doc["levels"]
    assert [lv["file"] for lv in levels] == [str(files[k]) for k in order]
    reference = levels[0]
    assert _keys(reference) == list(sample_level.EXPECTED_FINDINGS)
    for lv in levels[1:]:
        assert _keys(lv) == _keys(reference), lv["file"]
        for f, g in zip(lv["findings"], reference["findings"]):
            # The OBJ importer sorts the objects by name, so the triangles come in another
            # order, and the walker's resting height then differs by up to 2 x skin_width
            # (0.00 vs 0.01 m measured): positions agree within that.
            assert f["position"] == pytest.approx(g["position"], abs=0.04), lv["file"]
        assert {w["name"]: w["verdict"] for w in lv["walks"]} == {
            w["name"]: w["verdict"] for w in reference["walks"]}
        assert lv["triangles"] == reference["triangles"]
        for cls, row in reference["walkability"].items():
            assert lv["walkability"][cls]["faces"] == row["faces"], (lv["file"], cls)
            assert lv["walkability"][cls]["area_m2"] == pytest.approx(row["area_m2"], abs=1e-3)
    assert doc["summary"]["findings"] == 8


def _bad_inputs(tmp_path):
    corrupt = tmp_path / "corrupt.blend"
    corrupt.write_bytes(b"not a blend file at all")
    empty_glb = tmp_path / "empty.glb"
    empty_glb.write_bytes(b"")
    notes = tmp_path / "level.txt"
    notes.write_text("hello")
    level = tmp_path / "ok.obj"
    level.write_text("o Floor\nv 0 0 0\nv 4 0 0\nv 4 0 -4\nv 0 0 -4\nf 1 2 3 4\n")
    typo = tmp_path / "typo.levelcheck.json"
    typo.write_text(json.dumps({"capsules": [{"name": "spawn", "foot": [1, 1, 0],
                                              "expect": "penetrated"}]}))
    a_file = tmp_path / "a_file"
    a_file.write_text("")
    return [
        ([str(tmp_path / "missing.blend")], "missing.blend: no such file"),
        ([str(corrupt)], "corrupt.blend: not a valid .blend file"),
        ([str(empty_glb)], "empty.glb: not a valid .glb file"),
        ([str(notes)], "level.txt: unsupported file type '.txt'"),
        ([str(level), "--out", str(a_file / "out")], "a_file is not a folder"),
        ([str(level), "--set", "stepheight=0.3"], "unknown setting 'stepheight'"),
        ([str(level), "--set", "radius=-0.35"], "radius must be > 0"),
        ([str(level), "--spec", str(typo)],
         "capsules[0].expect: unknown expected verdict 'penetrated'; allowed: any, clear, "
         "penetrating"),
        ([str(level), "--min-depth", "-0.001"], "--min-depth: must be a finite depth >= 0"),
        ([str(level), "--checks", "all", "--frame-rates", "60,-30"],
         "--frame-rates: must be > 0 Hz"),
        ([str(level), "--checks", "walks,ledge"], "--checks: unknown check 'ledge'"),
        ([str(level), "--shard", "3/2"], "--shard: need 1 <= K <= N"),
        ([str(level), "--collection", "Collision"], "no collection named 'Collision'"),
    ]


def test_bad_inputs_exit_2_with_one_line_naming_the_problem_and_no_outputs(tmp_path, addon,
                                                                           capfd):
    for argv, message in _bad_inputs(tmp_path):
        out = tmp_path / "out"
        if "--out" not in argv:
            argv = argv + ["--out", str(out)]
        rc = levelcheck.main(argv + ["--no-png"])
        captured = capfd.readouterr()
        assert rc == 2, (argv, captured.err)
        err = captured.err.strip().splitlines()
        assert err[-1].startswith("levelcheck: error: ") and message in err[-1], (argv, err)
        assert "Traceback" not in captured.err
        assert not out.exists(), argv


def test_a_level_without_collision_meshes_exits_2(tmp_path, addon, capfd):
    import bpy  # noqa: PLC0415

    bpy.ops.wm.read_homefile(use_empty=True)
    bpy.context.scene.collection.objects.link(bpy.data.objects.new("Lonely Empty", None))
    blend = tmp_path / "nothing.blend"
    bpy.ops.wm.save_as_mainfile(filepath=str(blend), copy=True)
    rc = levelcheck.main([str(blend), "--out", str(tmp_path / "out"), "--no-png"])
    err = capfd.readouterr().err.strip().splitlines()
    assert rc == 2 and f"level {blend}: no collision meshes" in err[-1]
    assert not (tmp_path / "out").exists()


@pytest.fixture(scope="module")
def three_levels(tmp_path_factory, addon):
    folder = tmp_path_factory.mktemp("three")
    return [str(_save_sample(folder / "bugged.blend")),
            str(_save_sample(folder / "clean.blend", bugs=False)),
            str(_save_sample(folder / "bugged_again.blend"))]


def _run(argv, capfd):
    rc = levelcheck.main(argv)
    capfd.readouterr()
    return rc


@pytest.mark.slow
def test_jobs_2_equals_a_sequential_run(three_levels, tmp_path, capfd):
    assert _run(three_levels + ["--out", str(tmp_path / "seq")] + FAST, capfd) == 1
    proc = subprocess.run([sys.executable, str(CLI), *three_levels, "--jobs", "2", "--out",
                           str(tmp_path / "par"), *FAST], capture_output=True, text=True,
                          timeout=600)
    assert proc.returncode == 1, proc.stderr
    seq = json.loads((tmp_path / "seq" / "report.json").read_text())
    par = json.loads((tmp_path / "par" / "report.json").read_text())
    assert _strip_timings(par) == _strip_timings(seq)
    assert [lv["ok"] for lv in seq["levels"]] == [False, True, False]
    assert (tmp_path / "par" / "junit.xml").read_bytes() == (
        tmp_path / "seq" / "junit.xml").read_bytes()


def test_shards_merged_equal_one_run(three_levels, tmp_path, capfd):
    assert _run(three_levels + ["--out", str(tmp_path / "all")] + FAST, capfd) == 1
    rc1 = _run(three_levels + ["--shard", "1/2", "--out", str(tmp_path / "s1")] + FAST, capfd)
    rc2 = _run(three_levels + ["--shard", "2/2", "--out", str(tmp_path / "s2")] + FAST, capfd)
    assert (rc1, rc2) == (1, 0)  # shard 1: levels 0 and 2 (bugged); shard 2: level 1 (clean)
    s1 = json.loads((tmp_path / "s1" / "report.json").read_text())
    assert [lv["index"] for lv in s1["levels"]] == [0, 2]
    assert _run(["--merge", str(tmp_path / "s2"), str(tmp_path / "s1"), "--out",
                 str(tmp_path / "merged")], capfd) == 1
    merged = json.loads((tmp_path / "merged" / "report.json").read_text())
    whole = json.loads((tmp_path / "all" / "report.json").read_text())
    assert _strip_timings(merged) == _strip_timings(whole)
    assert _run(["--merge", str(tmp_path / "s1"), str(tmp_path / "s1"), "--out",
                 str(tmp_path / "twice")], capfd) == 2


def test_baseline_fails_only_on_new_findings(three_levels, tmp_path, capfd):
    first = three_levels[:1]
    assert _run(first + ["--out", str(tmp_path / "base")] + FAST, capfd) == 1
    base = tmp_path / "base" / "report.json"
    rc = levelcheck.main(first + ["--baseline", str(base), "--out", str(tmp_path / "same")]
                         + FAST)
    out = capfd.readouterr().out
    assert rc == 0 and "0 new since the baseline" in out and "FINDING (known)" in out
    doc = json.loads(base.read_text())
    doc["levels"][0]["findings"] = doc["levels"][0]["findings"][:1]  # the walk is new
    older = tmp_path / "older.json"
    older.write_text(json.dumps(doc))
    rc = levelcheck.main(first + ["--baseline", str(older), "--out", str(tmp_path / "new")]
                         + FAST)
    out = capfd.readouterr().out
    assert rc == 1 and "1 new since the baseline" in out
    assert "FINDING NEW: path Main Route" in out
    junit = ET.parse(tmp_path / "new" / "junit.xml").getroot()
    failed = [c.get("name") for c in junit.iter("testcase") if c.find("failure") is not None]
    assert failed == ["walk: Main Route"]  # the known capsule finding no longer fails CI


def test_readme_first_command_runs_levelcheck_and_second_is_ci():
    readme = (ROOT / "README.md").read_text()
    ci = (ROOT / ".ci" / "run").read_text()
    test_cmd = re.search(r"test_command='([^']+)'", ci).group(1)
    blocks = re.findall(r"```\n(.+?)\n```", readme)
    assert blocks[0] == README_FIRST, "the README's first command runs the CLI on the sample"
    assert blocks[1] == test_cmd, "the README's second command must be CI's test command"


def test_atomic_writes_leave_no_temporary_files(main_job):
    _, out = main_job
    assert sorted(os.listdir(out)) == ["junit.xml", "report.json", "report.png"]


def test_todays_spec_format_and_save_blend(tmp_path, addon, capfd):
    """A JSON spec naming its mesh (validate_level.py's format) still runs; --save-blend keeps
    the annotated level."""
    (tmp_path / "floor.obj").write_text(
        "o Floor\nv 0 0 0\nv 4 0 0\nv 4 0 -4\nv 0 0 -4\nf 1 2 3 4\n")  # Y-up, as exported
    spec = {"name": "Floor", "mesh": "floor.obj", "settings": {"step_height": 0.3},
            "capsules": [{"name": "sunk", "foot": [1, 1, -0.1], "expect": "clear"},
                         {"name": "free", "foot": [2, 2, 0], "expect": "penetrating"}],
            "paths": [{"name": "across", "points": [[0.5, 2, 0], [3.5, 2, 0]],
                       "expect": "reached_goal"}]}
    (tmp_path / "floor.json").write_text(json.dumps(spec))
    out = tmp_path / "out"
    rc = levelcheck.main([str(tmp_path / "floor.json"), "--out", str(out), "--no-png",
                          "--save-blend", "--quiet"])
    capfd.readouterr()
    assert rc == 1
    doc = json.loads((out / "report.json").read_text())
    (level,) = doc["levels"]
    assert level["level"] == "Floor" and level["settings"]["step_height"] == 0.3
    assert _keys(level) == [("capsule", "sunk", "clear", "penetrating"),
                            ("capsule", "free", "penetrating", "clear")]
    assert level["findings"][0]["faces"][0]["object"] == "Floor"
    assert level["capsules"][0]["deepest_m"] == pytest.approx(0.1, abs=1e-6)  # Y-up -> Z-up
    assert level["walks"][0]["verdict"] == "reached_goal"
    assert sorted(os.listdir(out)) == ["floor.levelcheck.blend", "junit.xml", "report.json"]
    import bpy  # noqa: PLC0415

    bpy.ops.wm.open_mainfile(filepath=str(out / "floor.levelcheck.blend"))
    floor = bpy.data.objects["Floor"].data
    flags = np.zeros(len(floor.polygons), bool)
    floor.attributes["capsule_penetration"].data.foreach_get("value", flags)
    assert flags.all()  # the sunk capsule penetrates the floor's only face
    assert bpy.data.objects["sunk"].capsule_collision.role == "CAPSULE"
    assert bpy.context.scene.capsule_collision.step_height == pytest.approx(0.3)
    traces = [o for o in bpy.data.objects if o.capsule_collision.role == "TRACE"]
    assert len(traces) == 1  # the walk along "across"


def test_collection_source_ignores_meshes_outside_it(tmp_path, addon, capfd):
    import bpy  # noqa: PLC0415
    from blender_helpers import box  # noqa: PLC0415

    bpy.ops.wm.read_homefile(use_empty=True)
    coll = bpy.data.collections.new("Collision")
    bpy.context.scene.collection.children.link(coll)
    box("Floor_col", (-5, -5, -1), (5, 5, 0), collection=coll)
    box("Decoration", (0.5, 0.5, 0), (1.5, 1.5, 2))  # visible, not collision
    blend = tmp_path / "proxy.blend"
    bpy.ops.wm.save_as_mainfile(filepath=str(blend), copy=True)
    (tmp_path / "proxy.levelcheck.json").write_text(json.dumps(
        {"capsules": [{"name": "in_decoration", "foot": [0.4, 1, 0], "expect": "clear"}]}))
    runs = {}
    for source in (["--collection", "Collision"], ["--naming"], []):
        out = tmp_path / ("out" + "".join(source))
        rc = levelcheck.main([str(blend), "--out", str(out), "--no-png", "--quiet",
                              "--checks", "penetration", *source])
        capfd.readouterr()
        runs[" ".join(source)] = (rc, json.loads((out / "report.json").read_text())["levels"][0])
    for source in ("--collection Collision", "--naming"):
        rc, level = runs[source]
        assert rc == 0 and level["objects"] == ["Floor_col"], source
    rc, level = runs[""]
    assert rc == 1 and sorted(level["objects"]) == ["Decoration", "Floor_col"]
