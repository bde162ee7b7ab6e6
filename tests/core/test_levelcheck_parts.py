"""The levelcheck CLI's parts that need no Blender: importer axes, JUnit, the console, shard
merges, sniffing level files (a nan in an OBJ). The CLI itself runs in tests/blender."""

import json
import xml.etree.ElementTree as ET

import numpy as np
import pytest
from capsule_collision.core.checks.report import combine_levels, mark_baseline
from capsule_collision.levelcheck import axes, console, junit, levels, merge


@pytest.mark.parametrize("up, forward, blender, file", [
    ("Y", "-Z", (0, -1, 0), "Z"),  # a Z-up OBJ read with the defaults: floors face -Y
    ("Y", "-Z", (0, 0, 1), "Y"),
    ("Z", "Y", (0, 1, 0), "Y"),  # a Y-up file read as Z-up: floors face +Y
    ("Z", "Y", (0, 0, 1), "Z"),
    ("-Y", "X", (0, 0, -1), "Y"),
])
def test_file_axis_inverts_the_importers_rotation(up, forward, blender, file):
    assert axes.file_axis(blender, up, forward) == file
    back = axes.blender_axis(file, up, forward)
    np.testing.assert_allclose(back, blender, atol=1e-12)


def test_importer_options_by_format():
    # OBJ unvalidated: Blender's validation drops duplicate faces in an order its threads
    # decide (tests/blender/test_levelcheck_determinism.py)
    assert axes.importer(".obj", None, None) == ("wm.obj_import", {"validate_meshes": False})
    assert axes.importer(".obj", "Z", None) == (
        "wm.obj_import", {"validate_meshes": False, "up_axis": "Z", "forward_axis": "Y"})
    assert axes.importer(".fbx", "-Z", "X")[1] == {
        "use_manual_orientation": True, "axis_up": "-Z", "axis_forward": "X"}
    assert axes.importer(".glb", None, None) == ("import_scene.gltf", {})


def _finding(check, name, severity, new=None, picture=None):
    return {"check": check, "severity": severity, "name": name, "expected": "x",
            "got": "y", "position": [0, 0, 0], "message": f"{check} {name} went wrong",
            "faces": [], "new": new, "picture": picture}


def _level(key, index, findings):
    return {"level": key.split("/")[-1], "file": key, "key": key, "index": index,
            "checks": ["penetration", "walks", "stand", "ledges"],
            "capsules": [{"name": "A"}, {"name": "B"}], "walks": [{"name": "R"}],
            "frame_rates": [], "targets": [], "findings": findings,
            "timings_s": {"penetration": 0.2, "walks": 1.5, "stand": 0.5, "ledges": 0.1,
                          "sanity": 0.01}}


def _document():
    forest = _level("forest/main.blend", 0, [
        _finding("capsule", "A", "error", picture="finding-0-1.png"),
        _finding("capsule", "B", "error"),
        _finding("stand", "Floor face 3", "warning"),
        _finding("ledges", "Floor face 1 at (0, 0, 0)", "info")])
    desert = _level("desert/main.blend", 1, [])
    return combine_levels([forest, desert])


def test_junit_has_one_case_per_capsule_path_and_audit_with_times():
    root = ET.fromstring(junit.junit_xml(_document()))
    suites = root.findall("testsuite")
    assert [s.get("name") for s in suites] == ["forest/main.blend", "desert/main.blend"]
    cases = {c.get("name"): c for c in suites[0].iter("testcase")}
    assert list(cases) == ["capsule: A", "capsule: B", "walk: R", "audit: stand",
                           "audit: ledges", "level"]
    assert all(c.get("time") is not None for c in root.iter("testcase"))
    assert all(s.get("time") is not None for s in [root, *suites])
    assert {c.get("classname") for c in suites[0].iter("testcase")} == {
        "levelcheck.forest/main_blend"}  # one dot: Jenkins splits package from class there
    assert cases["capsule: A"].find("failure").get("message") == "capsule A went wrong"
    assert cases["capsule: B"].find("failure") is not None  # two failures, two cases
    assert float(cases["capsule: A"].get("time")) == pytest.approx(0.1)
    stand = cases["audit: stand"]
    assert stand.find("failure") is None  # a warning below --fail-on error
    assert stand.find("system-out").text == "warning: stand Floor face 3 went wrong"
    assert "[[ATTACHMENT|finding-0-1.png]]" in cases["capsule: A"].find("system-out").text
    assert cases["capsule: A"].find("failure").text == (
        "error: capsule A went wrong (picture: finding-0-1.png)")
    assert suites[0].get("failures") == "2" and root.get("failures") == "2"


def _forest_cases(doc):
    suite = ET.fromstring(junit.junit_xml(doc)).find("testsuite")
    return {c.get("name"): c for c in suite.iter("testcase")}


def test_junit_fails_warnings_when_the_gate_does_and_not_known_findings():
    doc = json.loads(json.dumps(_document()))
    doc["summary"]["fail_on"] = "warning"
    cases = _forest_cases(doc)
    assert cases["audit: stand"].find("failure").get("type") == "warning"
    assert cases["audit: ledges"].find("failure") is None  # infos never fail
    base = json.loads(json.dumps(_document()))
    marked = mark_baseline(_document(), base, "base.json")
    cases = _forest_cases(marked)
    assert cases["capsule: A"].find("failure") is None
    assert cases["capsule: A"].find("system-out").text.startswith("known: capsule A")


def test_console_lists_failing_findings_and_one_verdict():
    text = console.quiet_summary(_document())
    assert text.splitlines() == [
        "forest/main.blend: ERROR: capsule A went wrong",
        "forest/main.blend: ERROR: capsule B went wrong",
        "4 finding(s) in 2 level(s): 2 error(s), 1 warning(s), 1 info(s); 2 fail the gate "
        "(--fail-on error)"]


def _shard(tmp_path, k, n, fingerprint="abc", levels_=None):
    folder = tmp_path / f"shard-{k}"
    folder.mkdir()
    doc = combine_levels(levels_ if levels_ is not None else [_level(f"l{k}.blend", k - 1, [])])
    doc["run"] = {"shard": [k, n], "levels": n, "fingerprint": fingerprint}
    (folder / "report.json").write_text(json.dumps(doc))
    (folder / f"finding-{k - 1}-1.png").write_bytes(b"png")
    return str(folder)


def test_merge_takes_exactly_the_shards_of_one_run(tmp_path):
    a, b, c = (_shard(tmp_path, k, 3) for k in (1, 2, 3))
    reports, pictures, run = merge.merge([c, a, b])
    assert sorted(r["index"] for r in reports) == [0, 1, 2]
    assert sorted(pictures) == ["finding-0-1.png", "finding-1-1.png", "finding-2-1.png"]
    assert run["merged"] == 3
    with pytest.raises(levels.UsageError, match=r"shard\(s\) 2/3 missing"):
        merge.merge([a, c])
    with pytest.raises(levels.UsageError, match="shard 1/3 given twice"):
        merge.merge([a, a, b, c])
    (tmp_path / "other").mkdir()
    other = _shard(tmp_path / "other", 2, 3, fingerprint="zzz")
    with pytest.raises(levels.UsageError, match="comes from another run"):
        merge.merge([a, other, c])


def test_a_nan_in_an_obj_is_found_before_blender_reads_it_as_zero(tmp_path):
    obj = tmp_path / "bad.obj"
    obj.write_text("o Floor\nv 0 0 0\nv 4 0 0\nv 4 0 nan\nv 0 0 -4\nf 1 2 3 4\n")
    with pytest.raises(levels.UsageError, match="line 4: a vertex with a nan or inf"):
        levels.sniff(str(obj))
    obj.write_text("o Floor\nv 0 0 0\nv 4 0 0\nv 4 0 -inf\nv 0 0 -4\nf 1 2 3 4\n")
    with pytest.raises(levels.UsageError, match="line 4"):
        levels.sniff(str(obj))
    obj.write_text("o infinity_room\nv 0 0 0\nv 4 0 0\nv 4 0 -4\nf 1 2 3\n")
    levels.sniff(str(obj))  # a name with "inf" in it is not a coordinate


def test_json_with_a_key_twice_is_refused(tmp_path):
    spec = tmp_path / "a.levelcheck.json"
    spec.write_text('{"capsules": [], "capsules": [{"name": "A"}]}')
    with pytest.raises(levels.UsageError, match="key 'capsules' appears twice"):
        levels.read_json(str(spec), "spec")


def test_junit_has_one_case_per_reachability_target():
    lv = _level("keep.blend", 0, [_finding("target", "Roof", "error")])
    lv["checks"].append("reachability")
    lv["targets"] = [{"name": "Roof", "point": [0, 0, 3], "expected": "unreachable",
                      "verdict": "reachable", "ok": False},
                     {"name": "Gate", "point": [1, 0, 0], "expected": "reachable",
                      "verdict": "reachable", "ok": True}]
    lv["timings_s"]["reachability"] = 0.8
    cases = {c.get("name"): c for c in ET.fromstring(
        junit.junit_xml(combine_levels([lv]))).iter("testcase")}
    assert cases["target: Roof"].find("failure").get("message") == "target Roof went wrong"
    assert cases["target: Gate"].find("failure") is None
    assert float(cases["target: Gate"].get("time")) == pytest.approx(0.4)
