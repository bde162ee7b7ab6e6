"""The levelcheck CLI run as CI runs it: a subprocess of ``python -m capsule_collision.levelcheck``
(the README's main job through ``tools/levelcheck.py``). The main job on the sample level, the
same level in four file formats, bad inputs, the gate (--fail-on, warnings, nothing to
check), Z-up OBJ, JUnit for CI viewers, parallel, sharded and baseline runs, outputs that
cannot be written. Levels are saved in-process with the ``addon`` fixture."""

import collections
import json
import os
import pathlib
import re
import resource
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET

import blender_helpers as bh
import numpy as np
import pytest
from capsule_collision.levelcheck import render, sample_level

ROOT = pathlib.Path(__file__).resolve().parents[2]
CLI = [sys.executable, "-m", "capsule_collision.levelcheck"]
SCHEMA = json.loads((ROOT / "schema" / "report.schema.json").read_text())
README_FIRST = ("python3.11 -m venv .venv && .venv/bin/pip install -q -r requirements.txt && "
                ".venv/bin/python tools/levelcheck.py")
FAST = ["--no-png", "--checks", "penetration,walks", "--quiet"]


def levelcheck(*args, cwd=None, preexec_fn=None, timeout=900):
    return subprocess.run([*CLI, *map(str, args)], cwd=cwd, capture_output=True, text=True,
                          timeout=timeout, preexec_fn=preexec_fn)


def _errors(level):
    return [(f["check"], f["name"], f["expected"], f["got"]) for f in level["findings"]
            if f["severity"] == "error"]


def _strip_timings(document):
    doc = json.loads(json.dumps(document))
    for lv in doc["levels"]:
        lv.pop("timings_s")
    return doc


def _report(out):
    return json.loads((pathlib.Path(out) / "report.json").read_text())


@pytest.fixture(scope="module")
def main_job(tmp_path_factory):
    """The README's first command (minus the venv set-up), from a scratch folder."""
    cwd = tmp_path_factory.mktemp("main_job")
    proc = subprocess.run([sys.executable, str(ROOT / "tools" / "levelcheck.py")], cwd=cwd,
                          capture_output=True, text=True, timeout=900)
    return proc, cwd / "levelcheck-out"


def test_main_job_reports_the_two_level_bugs_where_they_are(main_job):
    proc, out = main_job
    assert proc.returncode == 1, proc.stdout + proc.stderr
    doc = _report(out)
    (level,) = doc["levels"]
    assert _errors(level) == list(sample_level.EXPECTED_FINDINGS)
    capsule, walk = level["findings"][:2]
    assert capsule["position"] == pytest.approx([5.0, sample_level.lane_y(6) - 0.4, 0.0])
    assert {f["object"] for f in capsule["faces"]} == {"Corridor 60cm L"}
    assert "[Corridor 60cm L faces" in capsule["message"]
    assert capsule["value"] == pytest.approx(0.25)
    assert walk["position"][0] == pytest.approx(4.0 - 0.35, abs=0.05)  # against the curb
    assert [f["object"] for f in walk["faces"]] == ["Curb 45cm"]
    verdicts = {w["name"]: w["verdict"] for w in level["walks"]}
    designed = {name: expect for name, _, expect in sample_level.paths()}
    designed["Main Route"] = "step_too_high"  # bug 2
    designed["Walk Ledge"] = "reached_goal"  # expects fell: it falls, then reaches its goal
    assert verdicts == designed
    # the audits' problems are findings too, one per problem: the 45 cm flight and the
    # flight without treads are warnings (each with every bad riser's faces), ledges infos
    stairs = [f for f in level["findings"] if f["check"] == "stairs"]
    assert [f["got"] for f in stairs] == ["too_high", "too_shallow"]
    assert {x["object"] for x in stairs[0]["faces"]} == {"Stairs 45cm"}
    assert sorted({x["face"] for x in stairs[0]["faces"]}) == [2, 4, 6]  # its three risers
    assert stairs[0]["name"].startswith("stair flight at (")
    assert {f["severity"] for f in stairs} == {"warning"}
    assert {f["severity"] for f in level["findings"] if f["check"] == "ledges"} == {"info"}
    # the console: one table naming objects and positions, the findings, then the outputs
    assert "Spawn Corridor" in proc.stdout and "(5.00, 18.60, 0.00)" in proc.stdout
    assert "on Curb 45cm face" in proc.stdout
    assert "ERROR: path Main Route does not reach its goal" in proc.stdout
    warnings = doc["summary"]["by_severity"]["warning"]
    assert warnings >= 4  # two flights, the corridor's and the low ceiling's regions, islands
    assert f"2 error(s), {warnings} warning(s)" in proc.stdout
    assert "2 fail the gate" in proc.stdout
    tail = proc.stdout.rstrip().splitlines()
    assert tail[tail.index("outputs:") + 1:][:2] == [f"  {out / n}" for n in ("report.json",
                                                                               "junit.xml")]
    assert f"  {out / 'report.png'}" in tail and f"  {out / 'finding-0-1.png'}" in tail
    assert "Traceback" not in proc.stderr and "EGL" not in proc.stderr
    assert "level sample level: walk Main Route: step_too_high" in proc.stderr  # progress


def test_report_json_validates_against_the_schema(main_job):
    jsonschema = pytest.importorskip("jsonschema")
    _, out = main_job
    text = (out / "report.json").read_text()
    jsonschema.validate(json.loads(text), SCHEMA)
    assert "Infinity" not in text and "e+308" not in text


def test_junit_has_a_case_per_capsule_path_and_audit_and_fails_the_two_bugs(main_job):
    _, out = main_job
    root = ET.parse(out / "junit.xml").getroot()
    (suite,) = root.findall("testsuite")
    assert suite.get("name") == "sample level" and root.get("time") and suite.get("time")
    cases = {c.get("name"): c for c in suite.iter("testcase")}
    expected = ({f"capsule: {n}" for n, _, _ in sample_level.capsules()}
                | {f"walk: {n}" for n, _, _ in sample_level.paths()}
                | {f"audit: {k}" for k in ("stand", "stairs", "headroom", "ledges")}
                | {"reachability", "level"})  # the sample's Spawn is marked Spawn
    assert set(cases) == expected and len(cases) == len(expected)
    failed = {name for name, c in cases.items() if c.find("failure") is not None}
    assert failed == {"capsule: Spawn Corridor", "walk: Main Route"}
    assert suite.get("failures") == "2" and suite.get("tests") == str(len(expected))
    assert all(c.get("time") is not None and c.get("classname") == "levelcheck.sample level"
               for c in cases.values())
    message = cases["walk: Main Route"].find("failure").get("message")
    assert "does not reach its goal" in message and "Curb 45cm" in message
    stairs = cases["audit: stairs"].find("system-out").text.splitlines()
    assert sum(line.startswith("warning: stair flight on Stairs 45cm face") for line in
               stairs) == 1  # one flight, one line
    islands = cases["reachability"].find("system-out").text.splitlines()
    assert "warning: island: 8.0 m² of standable floor no spawn reaches, e.g. at (5.94, " \
           "30.94, 0.45); riser 0.45 m > step height 0.35 m at (7.86, 31.99, 0.45)" \
        in islands  # the curb's top: the main route's bug, and what stops the way in
    assert float(cases["reachability"].get("time")) > 0.0
    attached = cases["capsule: Spawn Corridor"].find("system-out").text
    assert "[[ATTACHMENT|finding-0-1.png]]" in attached


def _red(png):
    rgb = bh.png_rgb(png)
    r, g, b = rgb[..., 0], rgb[..., 1], rgb[..., 2]
    return (r > 0.45) & (g < 0.2) & (b < 0.2)


def test_pictures_are_red_where_the_findings_are(main_job, scene):
    _, out = main_job
    doc = _report(out)
    (level,) = doc["levels"]
    red = _red(out / "report.png")
    assert red.shape == (render.HEIGHT, render.WIDTH)
    # where each error's faces land in the overview (same cut and camera, from the geometry)
    import bpy  # noqa: PLC0415
    from blender_helpers import addon_module  # noqa: PLC0415

    sample_level.build(scene)
    addon = sys.modules["bl_ext.user_default.capsule_collision"]
    scene_data = addon_module(addon, "addon.scene_data")
    mesh = scene_data.read_level(bpy.context.evaluated_depsgraph_get(), scene).mesh
    codes = addon_module(addon, "core").classify_triangles(mesh, 45.0)
    places = [c["foot"] for c in level["capsules"]] + [p for w in level["walks"]
                                                       for p in (w["start"], w["goal"])]
    places += [f["position"] for f in level["findings"] if f["position"] is not None]
    cut = render.cut_height(mesh, codes, places, 1.8)
    shown = render.shown_triangles(mesh, cut)
    view = render.view_for(mesh.vertices[mesh.triangles[shown]].reshape(-1, 3))
    for finding in level["findings"][:2]:
        tris = [f["triangle"] for f in finding["faces"]]
        centre = mesh.vertices[mesh.triangles[tris]].mean(axis=(0, 1))
        col, row = view.pixels([centre])[0].astype(int)
        window = red[row - 6:row + 7, col - 6:col + 7]  # the curb's riser is a thin strip
        assert window.sum() >= 25, (finding["name"], col, row, window.sum())
    assert red[:, : int(0.25 * render.WIDTH)].sum() < 2000  # legend: one swatch
    assert 300 < red.sum() < 0.05 * red.size  # findings stand out; the level is not red
    # one inset per finding, errors first, framed on it and named in the report
    assert level["pictures"]["insets"][:2] == ["finding-0-1.png", "finding-0-2.png"]
    assert level["findings"][0]["picture"] == "finding-0-1.png"
    inset = _red(out / "finding-0-1.png")
    assert inset.shape == (render.INSET_HEIGHT, render.INSET_WIDTH)
    h, w = inset.shape
    assert inset[h // 4: 3 * h // 4, w // 4: 3 * w // 4].sum() > 500  # the capsule, the wall


def test_atomic_writes_leave_no_temporary_files(main_job):
    _, out = main_job
    names = sorted(os.listdir(out))
    assert not [n for n in names if n.startswith(".")]
    assert names[-3:] == ["junit.xml", "report.json", "report.png"]


def _save_sample(path, bugs=True):
    import bpy  # noqa: PLC0415

    bpy.ops.wm.read_homefile(use_empty=True)
    sample_level.build(bpy.context.scene, bugs=bugs)
    bpy.ops.wm.save_as_mainfile(filepath=str(path), copy=True)
    return path


@pytest.fixture(scope="module")
def three_levels(tmp_path_factory, addon):
    folder = tmp_path_factory.mktemp("three")
    return [str(_save_sample(folder / "bugged.blend")),
            str(_save_sample(folder / "clean.blend", bugs=False)),
            str(_save_sample(folder / "bugged_again.blend"))]


def test_fail_on_decides_the_exit_status_and_warnings_gate_with_it(three_levels, tmp_path):
    clean = three_levels[1]
    proc = levelcheck(clean, "--out", tmp_path / "e", "--no-png", "--quiet")
    assert proc.returncode == 0, proc.stderr  # its 45 cm risers are warnings
    (level,) = _report(tmp_path / "e")["levels"]
    assert _errors(level) == [] and level["ok"]
    proc = levelcheck(clean, "--out", tmp_path / "w", "--no-png", "--quiet", "--fail-on",
                      "warning")
    assert proc.returncode == 1
    lines = proc.stdout.strip().splitlines()
    (level,) = _report(tmp_path / "w")["levels"]
    warnings = [f for f in level["findings"] if f["severity"] == "warning"]
    assert "stairs" in {f["check"] for f in warnings} and not level["ok"]
    assert lines[-1].endswith(f"; {len(warnings)} fail the gate (--fail-on warning)")
    assert lines[:-1] == [f"clean.blend: WARNING: {f['message']}" for f in warnings]
    assert proc.stderr == ""  # --quiet: no progress, no Blender or Mesa chatter


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
    files["zobj"] = folder / "course_zup.obj"
    bpy.ops.wm.obj_export(filepath=str(files["zobj"]), export_selected_objects=True,
                          export_materials=False, up_axis="Z", forward_axis="Y")
    files["fbx"] = folder / "course_fbx.fbx"
    bpy.ops.export_scene.fbx(filepath=str(files["fbx"]), use_selection=True)
    for kind in ("glb", "obj", "fbx"):
        sidecar = files[kind].with_suffix("").as_posix() + ".levelcheck.json"
        pathlib.Path(sidecar).write_text(json.dumps(sample_level.spec()))
    return files


@pytest.fixture(scope="module")
def exported(tmp_path_factory, addon):
    return _export_all(tmp_path_factory.mktemp("formats"))


def test_same_findings_from_blend_glb_obj_and_fbx(exported, tmp_path):
    files = exported
    obj_text = files["obj"].read_text()
    assert re.search(r"^f( \S+){5,}$", obj_text, re.M), "the OBJ keeps n-gons"
    ys = [float(line.split()[2]) for line in obj_text.splitlines() if line.startswith("v ")]
    assert max(ys) == pytest.approx(2.2, abs=1e-4)  # Y is up in the file (the walls' tops)
    order = ("blend", "glb", "obj", "fbx")
    proc = levelcheck(*[files[k] for k in order], "--out", tmp_path / "out", "--no-png",
                      "--quiet")
    assert proc.returncode == 1, proc.stderr
    levels = _report(tmp_path / "out")["levels"]
    assert [lv["file"] for lv in levels] == [str(files[k]) for k in order]
    reference = levels[0]
    assert _errors(reference) == list(sample_level.EXPECTED_FINDINGS)
    for lv in levels[1:]:
        assert _errors(lv) == _errors(reference), lv["file"]
        for f, g in zip(lv["findings"][:2], reference["findings"][:2]):
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
        assert [w for w in lv["warnings"]] == []


def test_a_z_up_obj_read_on_its_side_is_a_warning_that_says_how_to_fix_it(exported,
                                                                            tmp_path):
    """Z-up OBJ (as Max and Unreal write them): without --up it is read on its side; the
    warning names the fix (a warning: --fail-on warning fails on it); with --up Z, or "up"
    in the sidecar, it gives the .blend's findings."""
    zobj = exported["zobj"]
    assert max(float(line.split()[3]) for line in zobj.read_text().splitlines()
               if line.startswith("v ")) == pytest.approx(2.2, abs=1e-4)  # Z up in the file
    proc = levelcheck(zobj, "--out", tmp_path / "side", "--no-png", "--quiet")
    assert proc.returncode == 0, proc.stderr
    (level,) = _report(tmp_path / "side")["levels"]
    level_findings = {f["name"]: f for f in level["findings"] if f["check"] == "level"}
    # (and an info: no spawn scopes the audits)
    assert set(level_findings) == {"up_axis", "nothing_to_check", "audits_unscoped"}
    up = level_findings["up_axis"]
    assert up["severity"] == "warning" and "floors facing -Y" in up["message"]
    assert "pass --up Z" in up["message"]
    proc = levelcheck(zobj, "--out", tmp_path / "gate", "--no-png", "--quiet", "--fail-on",
                      "warning")
    assert proc.returncode == 1 and "pass --up Z" in proc.stdout
    (tmp_path / "zup.levelcheck.json").write_text(json.dumps(dict(sample_level.spec(),
                                                                  up="Z")))
    shutil.copy(zobj, tmp_path / "zup.obj")
    proc = levelcheck(tmp_path / "zup.obj", "--out", tmp_path / "fixed", "--no-png", "--quiet")
    assert proc.returncode == 1
    (fixed,) = _report(tmp_path / "fixed")["levels"]
    assert _errors(fixed) == list(sample_level.EXPECTED_FINDINGS)
    assert [f for f in fixed["findings"] if f["check"] == "level"] == []
    # the other way round: a Y-up OBJ read with --up Z is on its side too, floors facing +Y
    proc = levelcheck(exported["obj"], "--up", "Z", "--spec", tmp_path / "zup.levelcheck.json",
                      "--out", tmp_path / "yz", "--no-png", "--quiet", "--checks",
                      "penetration")
    (yz,) = _report(tmp_path / "yz")["levels"]
    (up,) = [f for f in yz["findings"] if f["name"] == "up_axis"]
    assert "floors facing +Y" in up["message"] and "pass --up Y" in up["message"]


def test_a_brush_map_exported_z_up_warns_without_a_control_capsule(tmp_path):
    """Named regression: a Quake-style map (two-sided brush walls, pillars) exported Z-up
    gave no warning at all, and a run without a control capsule exited 0."""
    import scenes  # noqa: PLC0415

    v, t = scenes.brush_map(3, ramps=False)
    lines = [f"v {x:.1f} {y:.1f} {z:.1f}" for x, y, z in v]
    lines += [f"f {a + 1} {b + 1} {c + 1}" for a, b, c in t]
    (tmp_path / "q3.obj").write_text("o Map\n" + "\n".join(lines) + "\n")
    proc = levelcheck(tmp_path / "q3.obj", "--out", tmp_path / "out", "--no-png", "--quiet",
                      "--fail-on", "warning", "--checks", "penetration,walkability")
    assert proc.returncode == 1, proc.stderr
    text = proc.stdout
    assert "floors facing -Y" in text and "pass --up Z" in text and "nothing to check" in text


def _bad_inputs(tmp_path):
    corrupt = tmp_path / "corrupt.blend"
    corrupt.write_bytes(b"not a blend file at all")
    empty_glb = tmp_path / "empty.glb"
    empty_glb.write_bytes(b"")
    notes = tmp_path / "level.txt"
    notes.write_text("hello")
    level = tmp_path / "ok.obj"
    level.write_text("o Floor\nv 0 0 0\nv 4 0 0\nv 4 0 -4\nv 0 0 -4\nf 1 2 3 4\n")
    nan = tmp_path / "nan.obj"
    nan.write_text("o Floor\nv 0 0 0\nv 4 0 0\nv 4 0 nan\nv 0 0 -4\nf 1 2 3 4\n")
    blend = tmp_path / "level.blend"
    blend.write_bytes(b"BLENDER-v500" + b"\0" * 64)

    def spec(name, doc):
        path = tmp_path / name
        path.write_text(doc if isinstance(doc, str) else json.dumps(doc))
        return str(path)

    a_file = tmp_path / "a_file"
    a_file.write_text("")
    typo = spec("typo.json", {"capsules": [{"name": "spawn", "foot": [1, 1, 0],
                                            "expect": "penetrated"}]})
    return [
        ([tmp_path / "missing.blend"], "missing.blend: no such file"),
        ([corrupt], "corrupt.blend: not a valid .blend file"),
        ([empty_glb], "empty.glb: not a valid .glb file"),
        ([notes], "level.txt: unsupported file type '.txt'"),
        ([nan], "nan.obj: line 4: a vertex with a nan or inf coordinate"),
        ([level, "--out", a_file / "out"], "a_file/out: cannot create it"),
        ([level, "--out", "/proc/levelcheck-out"], "/proc/levelcheck-out: cannot create it"),
        ([level, "--set", "stepheight=0.3"], "unknown setting 'stepheight'"),
        ([level, "--set", "radius=-0.35"], "radius must be > 0"),
        ([level, "--spec", typo], "capsules[0].expect: unknown expected verdict 'penetrated'; "
                                  "allowed: any, clear, penetrating"),
        ([level, "--spec", spec("key.json", {"capsules": [{"name": "Spawn",
                                                            "expected": "clear"}]})],
         "capsules[0].expected: unknown key 'expected'"),
        ([level, "--spec", spec("dup.json", {"paths": [
            {"name": "R", "points": [[0, 0, 0], [1, 0, 0]]}, {"name": "R"}]})],
         "paths[1].name: duplicate path name 'R' (also paths[0])"),
        ([level, "--spec", spec("twice.json", '{"paths": [], "paths": []}')],
         "key 'paths' appears twice"),
        ([level, "--spec", spec("top.json", {"capsule": []})], "capsule: unknown key"),
        ([blend, "--up", "Z"], "--up/--forward: no .obj or .fbx level"),
        ([blend, "--spec", spec("up.json", {"up": "Z"})], "carry their own axes"),
        ([level, "--up", "Z", "--forward=-Z"], "forward: -Z lies along up Z"),
        ([level, "--up", "W"], "expected one of X, Y, Z, -X, -Y, -Z"),
        ([level, level], "given twice"),
        ([level, "--root", tmp_path / "elsewhere"], "--root"),
        ([level, "--min-depth", "-0.001"], "--min-depth: must be a finite depth >= 0"),
        ([level, "--checks", "all", "--frame-rates", "60,-30"], "--frame-rates: must be > 0 Hz"),
        ([level, "--checks", "walks,ledge"], "--checks: unknown check 'ledge'"),
        ([level, "--shard", "3/2"], "--shard: need 1 <= K <= N"),
        ([level, "--fail-on", "info"], "--fail-on: invalid choice"),
    ]


def test_bad_inputs_exit_2_with_one_line_before_blender_starts(tmp_path):
    for argv, message in _bad_inputs(tmp_path):
        out = tmp_path / "out"
        if "--out" not in argv:
            argv = [*argv, "--out", out]
        proc = levelcheck(*argv, "--no-png", timeout=120)
        assert proc.returncode == 2, (argv, proc.stderr)
        err = proc.stderr.strip().splitlines()
        assert len(err) == 1 and err[0].startswith("levelcheck: error: "), (argv, err)
        assert message in err[0], (argv, err)
        assert proc.stdout == "" and not out.exists(), argv


def test_a_level_without_collision_meshes_exits_2_and_leaves_no_output_folder(tmp_path,
                                                                             addon):
    import bpy  # noqa: PLC0415

    bpy.ops.wm.read_homefile(use_empty=True)
    bpy.context.scene.collection.objects.link(bpy.data.objects.new("Lonely Empty", None))
    blend = tmp_path / "nothing.blend"
    bpy.ops.wm.save_as_mainfile(filepath=str(blend), copy=True)
    proc = levelcheck(blend, "--out", tmp_path / "out", "--no-png")
    err = proc.stderr.strip().splitlines()
    assert proc.returncode == 2 and f"level {blend}: no collision meshes" in err[-1], err
    assert "Traceback" not in proc.stderr and not (tmp_path / "out").exists()


def test_reachability_targets_and_islands_from_a_sidecar(tmp_path):
    """A Z-up OBJ ("up": "Z" in its sidecar) with a yard and a 1.5 m block beyond a gap: the
    yard is reachable from the spawn, the block's roof is an island and a failed target."""
    v = [(0, 0, 0), (6, 0, 0), (6, 6, 0), (0, 6, 0)]
    faces = [(1, 2, 3, 4)]
    lo, hi = (8, 0, 0), (10, 2, 1.5)
    v += [(x, y, z) for z in (lo[2], hi[2]) for y in (lo[1], hi[1]) for x in (lo[0], hi[0])]
    faces += [(5, 7, 8, 6), (9, 10, 12, 11), (5, 6, 10, 9), (7, 11, 12, 8), (5, 9, 11, 7),
              (6, 8, 12, 10)]
    (tmp_path / "yard.obj").write_text("o Yard\n" + "".join(f"v {x} {y} {z}\n" for x, y, z in v)
                                       + "".join("f " + " ".join(map(str, f)) + "\n"
                                                 for f in faces))
    (tmp_path / "yard.levelcheck.json").write_text(json.dumps({
        "up": "Z", "spawns": [[1, 1, 0]],
        "targets": [{"name": "Yard", "point": [3, 3, 0], "expect": "reachable"},
                    {"name": "Roof", "point": [9, 1, 1.5], "expect": "reachable"}]}))
    proc = levelcheck(tmp_path / "yard.obj", "--out", tmp_path / "out", "--no-png", "--quiet",
                      "--checks", "penetration,reachability")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    (level,) = _report(tmp_path / "out")["levels"]
    assert [(t["name"], t["verdict"], t["ok"]) for t in level["targets"]] == [
        ("Yard", "reachable", True), ("Roof", "unreachable", False)]
    assert _errors(level) == [("target", "Roof", "reachable", "unreachable")]
    islands = [f for f in level["findings"] if f["check"] == "islands"]
    assert islands and islands[0]["severity"] == "warning"
    assert islands[0]["position"][0] == pytest.approx(9.0, abs=1.0)  # on the block's roof
    cases = {c.get("name"): c for c in ET.parse(tmp_path / "out" / "junit.xml").iter(
        "testcase")}
    assert cases["target: Roof"].find("failure") is not None
    assert cases["target: Yard"].find("failure") is None
    assert "of standable floor no spawn reaches" in cases["reachability"].find(
        "system-out").text


def test_an_output_that_fills_up_late_is_exit_2_with_one_line(three_levels, tmp_path):
    """The probe passes (64 KiB), then report.json of three levels does not fit: a full disk
    after the run is exit status 2 and one line, not a traceback CI reads as findings."""
    limit = 72 * 1024  # the probe writes 64 KiB

    def small_files():
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    proc = levelcheck(*three_levels, "--out", tmp_path / "out", "--no-png", "--quiet",
                      "--checks", "penetration,walks,ledges", preexec_fn=small_files)
    err = proc.stderr.strip().splitlines()
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert len(err) == 1 and "cannot write" in err[0] and "report.json" in err[0], err
    assert not (tmp_path / "out" / "report.json").exists()


@pytest.fixture(scope="module")
def two_mains(tmp_path_factory, three_levels):
    """forest/main.blend and desert/main.blend: two levels with the same file name."""
    root = tmp_path_factory.mktemp("levels")
    for folder, src in (("forest", three_levels[0]), ("desert", three_levels[1])):
        (root / folder).mkdir()
        shutil.copy(src, root / folder / "main.blend")
    return root


def test_junit_suites_are_unique_for_levels_with_the_same_file_name(two_mains, tmp_path):
    proc = levelcheck("forest/main.blend", "desert/main.blend", "--out", tmp_path / "out",
                      *FAST, cwd=two_mains)
    assert proc.returncode == 1
    root = ET.parse(tmp_path / "out" / "junit.xml").getroot()
    suites = root.findall("testsuite")
    assert [s.get("name") for s in suites] == ["forest/main.blend", "desert/main.blend"]
    classes = {c.get("classname") for c in root.iter("testcase")}
    assert classes == {"levelcheck.forest/main_blend", "levelcheck.desert/main_blend"}
    assert [s.get("failures") for s in suites] == ["2", "0"]


def test_baseline_keys_levels_by_their_path_under_the_root(two_mains, tmp_path):
    """The same levels given by another path (absolute, another working folder) are the same
    levels: nothing is new. A finding the baseline lacks is new and fails."""
    assert levelcheck("forest/main.blend", "desert/main.blend", "--out", tmp_path / "base",
                      *FAST, cwd=two_mains).returncode == 1
    base = tmp_path / "base" / "report.json"
    assert [lv["key"] for lv in _report(tmp_path / "base")["levels"]] == [
        "forest/main.blend", "desert/main.blend"]
    absolute = [two_mains / "forest" / "main.blend", two_mains / "desert" / "main.blend"]
    proc = levelcheck(*absolute, "--baseline", base, "--out", tmp_path / "same", *FAST,
                      cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout
    assert "; 0 new since the baseline; 0 fail the gate" in proc.stdout
    doc = json.loads(base.read_text())
    doc["levels"][0]["findings"] = [f for f in doc["levels"][0]["findings"]
                                    if f["name"] != "Main Route"]
    older = tmp_path / "older.json"
    older.write_text(json.dumps(doc))
    proc = levelcheck(*absolute, "--root", two_mains, "--baseline", older, "--out",
                      tmp_path / "new", *FAST)
    assert proc.returncode == 1
    assert proc.stdout.splitlines()[0].startswith(
        "forest/main.blend: ERROR NEW: path Main Route")
    junit = ET.parse(tmp_path / "new" / "junit.xml").getroot()
    failed = [c.get("name") for c in junit.iter("testcase") if c.find("failure") is not None]
    assert failed == ["walk: Main Route"]  # the known capsule finding no longer fails CI


@pytest.mark.slow
def test_jobs_2_equals_a_sequential_run(three_levels, tmp_path):
    assert levelcheck(*three_levels, "--out", tmp_path / "seq", *FAST).returncode == 1
    proc = levelcheck(*three_levels, "--jobs", "2", "--out", tmp_path / "par", *FAST)
    assert proc.returncode == 1, proc.stderr
    seq, par = _report(tmp_path / "seq"), _report(tmp_path / "par")
    assert _strip_timings(par) == _strip_timings(seq)
    assert [lv["ok"] for lv in seq["levels"]] == [False, True, False]
    assert [s.get("failures") for s in ET.parse(tmp_path / "par" / "junit.xml").getroot()] == [
        s.get("failures") for s in ET.parse(tmp_path / "seq" / "junit.xml").getroot()]


def test_shards_merged_equal_one_run_with_every_picture(three_levels, tmp_path):
    opts = ["--checks", "penetration,walks", "--insets", "1", "--quiet"]
    assert levelcheck(*three_levels, "--out", tmp_path / "all", *opts).returncode == 1
    rc = [levelcheck(*three_levels, "--shard", f"{k}/2", "--out", tmp_path / f"s{k}",
                     *opts).returncode for k in (1, 2)]
    assert rc == [1, 0]  # shard 1: levels 0 and 2 (bugged); shard 2: level 1 (clean)
    assert [lv["index"] for lv in _report(tmp_path / "s1")["levels"]] == [0, 2]
    proc = levelcheck("--merge", tmp_path / "s2", tmp_path / "s1", "--out", tmp_path / "merged")
    assert proc.returncode == 1, proc.stderr
    merged, whole = _report(tmp_path / "merged"), _report(tmp_path / "all")
    for doc in (merged, whole):
        doc.pop("run")
        for lv in doc["levels"]:
            lv.pop("shard")
    assert _strip_timings(merged) == _strip_timings(whole)
    assert sorted(os.listdir(tmp_path / "merged")) == sorted(os.listdir(tmp_path / "all"))
    missing = levelcheck("--merge", tmp_path / "s1", "--out", tmp_path / "half")
    assert missing.returncode == 2 and "shard(s) 2/2 missing" in missing.stderr
    assert not (tmp_path / "half").exists()
    other = levelcheck(three_levels[0], three_levels[1], "--shard", "2/2", "--out",
                       tmp_path / "o2", *FAST)
    assert other.returncode == 0
    mixed = levelcheck("--merge", tmp_path / "s1", tmp_path / "o2", "--out", tmp_path / "mix")
    assert mixed.returncode == 2 and "comes from another run" in mixed.stderr


def test_todays_spec_format_and_save_blend(tmp_path, addon):
    """A JSON spec naming its mesh still runs; --save-blend keeps the annotated level."""
    (tmp_path / "floor.obj").write_text(
        "o Floor\nv 0 0 0\nv 4 0 0\nv 4 0 -4\nv 0 0 -4\nf 1 2 3 4\n")  # Y-up, as exported
    spec = {"name": "Floor", "mesh": "floor.obj", "settings": {"step_height": 0.3},
            "capsules": [{"name": "sunk", "foot": [1, 1, -0.1], "expect": "clear"},
                         {"name": "free", "foot": [2, 2, 0], "expect": "penetrating"}],
            "paths": [{"name": "across", "points": [[0.5, 2, 0], [3.5, 2, 0]],
                       "expect": "reached_goal"}]}
    (tmp_path / "floor.json").write_text(json.dumps(spec))
    out = tmp_path / "out"
    proc = levelcheck(tmp_path / "floor.json", "--out", out, "--no-png", "--save-blend",
                      "--quiet")
    assert proc.returncode == 1, proc.stderr
    (level,) = _report(out)["levels"]
    assert level["level"] == "Floor" and level["settings"]["step_height"] == 0.3
    assert _errors(level) == [("capsule", "sunk", "clear", "penetrating"),
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
    bpy.ops.wm.read_homefile(use_empty=True)


def test_collection_source_ignores_meshes_outside_it(tmp_path, addon):
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
        proc = levelcheck(blend, "--out", out, "--no-png", "--quiet", "--checks",
                          "penetration", *source)
        runs[" ".join(source)] = (proc.returncode, _report(out)["levels"][0])
    for source in ("--collection Collision", "--naming"):
        rc, level = runs[source]
        assert rc == 0 and level["objects"] == ["Floor_col"], source
    rc, level = runs[""]
    assert rc == 1 and sorted(level["objects"]) == ["Decoration", "Floor_col"]
    proc = levelcheck(blend, "--collection", "Collison", "--out", tmp_path / "typo",
                      "--no-png")
    assert proc.returncode == 2 and "no collection named 'Collison'" in proc.stderr


def test_readme_first_command_runs_levelcheck_and_second_is_ci():
    readme = (ROOT / "README.md").read_text()
    ci = (ROOT / ".ci" / "run").read_text()
    test_cmd = re.search(r"test_command='([^']+)'", ci).group(1)
    blocks = re.findall(r"```\n(.+?)\n```", readme)
    assert blocks[0] == README_FIRST, "the README's first command runs the CLI on the sample"
    assert blocks[1] == test_cmd, "the README's second command must be CI's test command"
    assert ci.rstrip().splitlines()[-1] == 'bash -c "$test_command"'


# ---------------------------------------------------------------- a shipped map (issue 24)
def _junit_findings(path, cases=None) -> dict:
    """{severity: findings} JUnit lists (failure and system-out lines, attachments aside),
    over the test cases named ``cases`` (all when None)."""
    counts: dict = {}
    for case in ET.parse(path).getroot().iter("testcase"):
        if cases is not None and case.get("name") not in cases:
            continue
        for part in ("failure", "system-out"):
            node = case.find(part)
            for line in ([] if node is None else (node.text or "").splitlines()):
                if not line.startswith("[[ATTACHMENT"):
                    counts[line.split(":", 1)[0]] = counts.get(line.split(":", 1)[0], 0) + 1
    return counts


@pytest.mark.slow
def test_a_shipped_map_lists_problems_where_a_player_can_be(tmp_path):
    """Issue 24 on a shipped brush map (OpenArena's am_lavaarena clip mesh, Z-up OBJ, its own
    spawns in a sidecar, Quake's player): report.json and junit.xml count the same findings;
    each stand and headroom warning lies on floor a spawn reaches or beside it (checked
    against the flood of the same level: one of its faces carries reachable floor, or
    reachable floor lies within 0.6 m across and a step up or down of its place or of a cell
    on its faces: the player walks into it); the problems nobody reaches are one info per
    audit; at most 40 audit and reachability warnings, and every spawn floods."""
    import real_levels  # noqa: PLC0415
    from capsule_collision import core  # noqa: PLC0415
    from capsule_collision.core.checks.reachability import TRAP, triangle_classes  # noqa: PLC0415

    level = real_levels.load("am_lavaarena", clip=True)
    spec = tmp_path / "spec.json"
    spec.write_text(json.dumps({"spawns": level.spawn_feet.tolist()}))
    player = [a for k, v in real_levels.QUAKE_PLAYER.items() for a in ("--set", f"{k}={v}")]
    out = tmp_path / "out"
    proc = levelcheck(level.obj, "--up", "Z", "--spec", spec, *player, "--out", out,
                      "--no-png", "--quiet", "--checks",
                      "stand,stairs,headroom,ledges,reachability", timeout=1800)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    (lv,) = _report(out)["levels"]
    by_severity: dict = {}
    for f in lv["findings"]:
        by_severity[f["severity"]] = by_severity.get(f["severity"], 0) + 1
    assert _junit_findings(out / "junit.xml") == by_severity
    warned = [f for f in lv["findings"]
              if f["check"] in ("stand", "headroom") and f["severity"] == "warning"]
    assert warned and len(warned) <= 40
    # issue 24's budget through the CLI (Quake's player jumps): at most 40 audit and
    # reachability warnings (measured 24: its 4 flights of 0.81 m risers are infos, the jump
    # climbs them), every spawn floods
    budget = [f for f in lv["findings"] if f["severity"] == "warning"
              and f["check"] in ("stand", "headroom", "stairs", "islands", "traps")]
    assert len(budget) <= 40, collections.Counter(f["check"] for f in budget)
    assert lv["reachability"]["spawns"] == len(level.spawn_feet) == 29
    assert lv["reachability"]["spawns_on_no_floor"] == 0
    assert all("face" not in f["name"] for f in warned)  # named by where, not by index
    away = [f for f in lv["findings"] if f["got"] == "out_of_reach"]
    assert away and all(f["severity"] == "info" and f["count"] >= 1 for f in away)
    # the flood of the same level, in core: each warning's faces meet reachable floor.
    # the CLI reads the OBJ (float32 vertices written as text), not the .npz: each warning
    # is matched to core's own finding of the same check, cause and size (the nearest
    # such), whose faces are judged
    mesh = core.TriangleMesh(level.vertices, level.triangles)
    run = core.report.run_checks(mesh, core.ControllerSettings(**real_levels.QUAKE_PLAYER),
                                 spawns=level.spawn_feet,
                                 checks=("stand", "stairs", "headroom", "ledges", "reachability"))
    twins = core.report.level_report(run)["findings"]
    reach = run.reach.result
    on = triangle_classes(reach)
    floor = reach.cell_points[reach.cell_class <= TRAP]
    step = real_levels.QUAKE_PLAYER["step_height"]
    for f in warned:
        twin = sorted((np.abs(np.subtract(g["where"], f["where"])).max(), k)
                      for k, g in enumerate(twins)
                      if (g["check"], g["got"]) == (f["check"], f["got"])
                      and abs(g["size"] - f["size"]) <= 0.02 * f["size"] + 0.01)
        assert twin, f["message"]  # core lists the same problem
        tris = np.array([x["triangle"] for x in twins[twin[0][1]]["faces"]])
        # its place and the cells on its faces (a strip region's worst cell may lie 1.3 m
        # from the reached floor at its end: am_lavaarena's 2.68 m² strip under a ledge)
        at = np.vstack([f["position"], reach.cell_points[np.isin(reach.cell_face, tris)]])
        box = floor[((floor >= at.min(0) - 1.0) & (floor <= at.max(0) + 1.0)).all(1)]
        d = np.abs(box[:, None, :] - at[None])
        near = ((d[..., :2].max(2) <= 0.6) & (d[..., 2] <= step + 0.01)).any()
        assert ((on[tris] >= 0) & (on[tris] <= TRAP)).any() or near, f["message"]
