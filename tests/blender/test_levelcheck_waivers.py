"""Waivers, thresholds and scope of the levelcheck gate (issue 27), through the CLI as CI runs
it: a sidecar's "waivers" (a waived finding never fails the gate, a stale waiver is an info, a
re-export with reversed faces keeps its waiver), "severity", "min_area" and "exclude" and
their command-line options (--severity, --min-area, --exclude).

Levels are small Z-up OBJ files of closed boxes: a floor slab (top at z = 0), a crate two
capsules can be buried in, and a 1 m platform no spawn on the floor can climb (an island of
16 m^2 the floor can see; the crate's top is an island nobody can see, an info)."""

import json
import pathlib
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
SCHEMA = json.loads((ROOT / "schema" / "report.schema.json").read_text())
CLI = [sys.executable, "-m", "capsule_collision.levelcheck"]
FAST = ["--quiet", "--no-png", "--up", "Z", "--forward", "Y"]
BOXES = (("Floor", (-10, -10, -1), (10, 10, 0)), ("Crate", (-8, -8, 0), (-4, -4, 3)),
         ("Platform", (2, 2, 0), (6, 6, 1)))


def levelcheck(*args):
    return subprocess.run([*CLI, *map(str, args)], capture_output=True, text=True, timeout=600)


def _box(lo, hi):
    x0, y0, z0 = lo
    x1, y1, z1 = hi
    v = [(x0, y0, z0), (x1, y0, z0), (x1, y1, z0), (x0, y1, z0),
         (x0, y0, z1), (x1, y0, z1), (x1, y1, z1), (x0, y1, z1)]
    f = [(0, 3, 2, 1), (4, 5, 6, 7), (0, 1, 5, 4), (1, 2, 6, 5), (2, 3, 7, 6), (3, 0, 4, 7)]
    return v, f


def write_level(path: pathlib.Path, sidecar: dict, reverse=False, boxes=BOXES):
    """The boxes as one Z-up OBJ (``reverse``: each object's vertices and faces written in
    reversed order, as another exporter would) and its sidecar."""
    lines, base = [], 1
    for name, lo, hi in boxes:
        v, f = _box(lo, hi)
        if reverse:
            v, f = v[::-1], [tuple(7 - i for i in face) for face in f[::-1]]
        lines += [f"o {name}", *(f"v {x} {y} {z}" for x, y, z in v),
                  *("f " + " ".join(str(i + base) for i in face) for face in f)]
        base += 8
    path.write_text("\n".join(lines) + "\n")
    (path.parent / (path.stem + ".levelcheck.json")).write_text(json.dumps(sidecar))
    return path


def buried(*names):
    """Capsules inside the crate, expected clear: one error each."""
    return {"capsules": [{"name": n, "foot": [-6.0, -6.0 + k, 0.5], "expect": "clear"}
                         for k, n in enumerate(names)]}


def waiver(check, name, got, **more):
    return {"check": check, "name": name, "got": got, "reason": "a prop clips it on purpose",
            "who": "ana", **more}


def _report(out):
    doc = json.loads((pathlib.Path(out) / "report.json").read_text())
    jsonschema = pytest.importorskip("jsonschema")
    jsonschema.validate(doc, SCHEMA)
    return doc


def _findings(out, check=None):
    """The level's findings of ``check`` (all with None); the crate's top, an island nobody
    can see, is its info (got "unseen") and left out."""
    return [f for f in _report(out)["levels"][0]["findings"]
            if (check is None or f["check"] == check) and f["got"] != "unseen"]


# ------------------------------------------------------------------------------------ waivers
def test_waiving_one_of_two_errors_leaves_the_gate_to_the_other_and_both_pass(tmp_path):
    level = tmp_path / "yard.obj"
    checks = ["--checks", "penetration"]
    side = buried("A", "B")
    write_level(level, side)
    assert levelcheck(level, "--out", tmp_path / "none", *FAST, *checks).returncode == 1
    side["waivers"] = [waiver("capsule", "A", "penetrating")]
    write_level(level, side)
    proc = levelcheck(level, "--out", tmp_path / "one", *FAST[1:], *checks)  # not --quiet
    assert proc.returncode == 1, proc.stderr  # B still fails
    by_name = {f["name"]: f for f in _findings(tmp_path / "one", "capsule")}
    assert by_name["A"]["waived"] == {"reason": "a prop clips it on purpose", "who": "ana"}
    assert "waived" not in by_name["B"]
    assert "ERROR WAIVED by ana (a prop clips it on purpose): capsule A" in proc.stdout
    assert "; 1 waived; 1 fail the gate (--fail-on error)" in proc.stdout
    assert _report(tmp_path / "one")["summary"]["failing"] == 1
    junit = (tmp_path / "one" / "junit.xml").read_text()
    assert junit.count("<failure") == 1 and "waived: capsule A" in junit
    side["waivers"].append(waiver("capsule", "B", "penetrating"))
    write_level(level, side)
    proc = levelcheck(level, "--out", tmp_path / "both", *FAST, *checks)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "<failure" not in (tmp_path / "both" / "junit.xml").read_text()
    # a waived finding is never new against a baseline that lacks it
    proc = levelcheck(level, "--baseline", tmp_path / "none" / "report.json", "--out",
                      tmp_path / "base", *FAST, *checks)
    assert proc.returncode == 0 and _report(tmp_path / "base")["summary"]["new_findings"] == 0


def test_a_waiver_whose_finding_is_gone_is_one_info_and_never_fails(tmp_path):
    side = dict(buried("A"), waivers=[waiver("capsule", "A", "penetrating"),
                                      waiver("capsule", "Gone", "penetrating")])
    level = write_level(tmp_path / "yard.obj", side)
    proc = levelcheck(level, "--out", tmp_path / "out", *FAST, "--checks", "penetration",
                      "--fail-on", "warning")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    (stale,) = [f for f in _findings(tmp_path / "out") if f["got"] == "waiver_stale"]
    assert stale["severity"] == "info" and stale["check"] == "level"
    assert "waiver no longer matches any finding: capsule Gone (penetrating)" in stale["message"]
    # the waiver's cause must match too: a capsule A expected penetrating that is clear is
    # another finding, so a waiver of "penetrating" no longer names it
    side["capsules"][0]["foot"] = [0.0, -6.0, 0.0]
    write_level(level, side)
    proc = levelcheck(level, "--out", tmp_path / "moved", *FAST, "--checks", "penetration")
    stale = [f["name"] for f in _findings(tmp_path / "moved") if f["got"] == "waiver_stale"]
    assert sorted(stale) == ["waiver: capsule A (penetrating)",
                             "waiver: capsule Gone (penetrating)"]


REACH = ["--checks", "penetration,reachability", "--fail-on", "warning"]


def _spawned(**more):
    return {"spawns": [[0.0, -6.0, 0.0]], **more}


def test_a_waived_island_stays_waived_after_a_re_export_with_reversed_faces(tmp_path):
    level = write_level(tmp_path / "yard.obj", _spawned())
    proc = levelcheck(level, "--out", tmp_path / "first", *FAST, *REACH)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    (island,) = _findings(tmp_path / "first", "islands")
    assert island["size"] == pytest.approx(16.0, abs=1.0) and island["where"] is not None
    entry = {"check": "islands", "where": island["where"], "got": island["got"],
             "reason": "a bonus platform, reached by a jump pad", "who": "ana"}
    write_level(level, _spawned(waivers=[entry]), reverse=True)
    proc = levelcheck(level, "--out", tmp_path / "again", *FAST, *REACH)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    (island,) = _findings(tmp_path / "again", "islands")
    assert island["waived"]["who"] == "ana"
    assert not [f for f in _findings(tmp_path / "again") if f["got"] == "waiver_stale"]
    # one grid step and a bit away is another place: the waiver is stale, the island fails
    entry["where"] = [entry["where"][0] + 0.3, *entry["where"][1:]]
    write_level(level, _spawned(waivers=[entry]), reverse=True)
    assert levelcheck(level, "--out", tmp_path / "off", *FAST, *REACH).returncode == 1
    assert [f["got"] for f in _findings(tmp_path / "off") if f["check"] == "level"] == [
        "waiver_stale"]


@pytest.mark.parametrize("entry, path", [
    ({"check": "capsule", "name": "A", "got": "penetrating", "reason": "x"}, "waivers[0].who"),
    ({"check": "capsule", "name": "A", "got": "penetrating", "who": "ana"},
     "waivers[0].reason"),
    ({"check": "capsules", "name": "A", "got": "penetrating", "reason": "x", "who": "ana"},
     "waivers[0].check"),
    ({"check": "islands", "name": "A", "where": [0, 0, 0], "got": "island", "reason": "x",
      "who": "ana"}, "waivers[0]"),
    ({"check": "capsule", "name": "A", "got": "penetrating", "reason": "x", "who": "ana",
      "when": "now"}, "waivers[0].when"),
])
def test_a_bad_waiver_is_exit_2_with_one_line_naming_its_json_path(tmp_path, entry, path):
    level = write_level(tmp_path / "yard.obj", dict(buried("A"), waivers=[entry]))
    proc = levelcheck(level, "--out", tmp_path / "out", *FAST, "--checks", "penetration")
    assert proc.returncode == 2
    (line,) = proc.stderr.strip().splitlines()
    assert f"yard.levelcheck.json: {path}:" in line, line


# ------------------------------------------------------------------------ thresholds and scope
def test_severity_override_from_the_command_line_and_the_sidecar(tmp_path):
    level = write_level(tmp_path / "yard.obj", _spawned())
    assert levelcheck(level, "--out", tmp_path / "a", *FAST, *REACH,
                      "--severity", "islands=info").returncode == 0
    assert _findings(tmp_path / "a", "islands")[0]["severity"] == "info"
    write_level(level, _spawned(severity={"islands": "info"}))
    assert levelcheck(level, "--out", tmp_path / "b", *FAST, *REACH).returncode == 0
    # the command line wins over the sidecar
    assert levelcheck(level, "--out", tmp_path / "c", *FAST, *REACH,
                      "--severity", "islands=error").returncode == 1
    assert _findings(tmp_path / "c", "islands")[0]["severity"] == "error"
    for bad in ("islands=fatal", "island=info", "islands"):
        proc = levelcheck(level, "--out", tmp_path / "d", *FAST, *REACH, "--severity", bad)
        assert proc.returncode == 2 and "--severity" in proc.stderr
        assert len(proc.stderr.strip().splitlines()) == 1


def test_islands_smaller_than_the_minimum_area_are_counted_in_one_info(tmp_path):
    level = write_level(tmp_path / "yard.obj", _spawned())
    proc = levelcheck(level, "--out", tmp_path / "big", *FAST, *REACH, "--min-area", "islands=10")
    assert proc.returncode == 1  # 16 m^2 >= 10: listed, a warning
    assert [f["got"] for f in _findings(tmp_path / "big", "islands")] == ["island"]
    proc = levelcheck(level, "--out", tmp_path / "small", *FAST, *REACH,
                      "--min-area", "islands=20")
    assert proc.returncode == 0, proc.stdout
    (info,) = _findings(tmp_path / "small", "islands")
    assert (info["got"], info["severity"], info["count"]) == ("below_min_area", "info", 1)
    assert "1 island(s) (16.0 m²) smaller than the minimum area 20 m²" in info["message"]
    write_level(level, _spawned(min_area={"islands": 20}))
    assert levelcheck(level, "--out", tmp_path / "side", *FAST, *REACH).returncode == 0
    write_level(level, _spawned(min_area={"islands": -1}))
    proc = levelcheck(level, "--out", tmp_path / "bad", *FAST, *REACH)
    assert proc.returncode == 2 and "min_area.islands" in proc.stderr
    proc = levelcheck(level, "--out", tmp_path / "bad2", *FAST, *REACH, "--min-area", "ledges=1")
    assert proc.returncode == 2 and "--min-area.ledges" in proc.stderr


def test_differences_smaller_than_the_footprint_are_counted_in_one_info_per_kind(tmp_path):
    """Render against collision (sidecar "render"): the clip has a 1 x 2 m crate and a 2 cm
    post the render lacks. The post blocks less floor than the character's footprint (pi r^2,
    0.385 m² for the default 0.35 m): by default it is one info (got below_min_area), the
    crate a warning; --min-area collision_diff=0 lists both, a larger minimum (or the
    sidecar's) folds both into one info counting 2; a bad value is exit 2 naming it."""
    write_level(tmp_path / "render.obj", {}, boxes=BOXES[:1])
    clip = (*BOXES[:1], ("Crate", (-6, -6, 0), (-5, -4, 2.5)), ("Post", (4, 4, 0), (4.02, 4.02, 2)))
    level = write_level(tmp_path / "clip.obj", _spawned(render="render.obj"), boxes=clip)
    opts = [*FAST, "--checks", "collision_diff", "--fail-on", "warning"]

    def diffs(out, *more):
        proc = levelcheck(level, "--out", tmp_path / out, *opts, *more)
        assert proc.returncode in (0, 1), proc.stderr
        return proc.returncode, [(f["got"], f["severity"], f["count"])
                                 for f in _findings(tmp_path / out, "collision_diff")]

    assert diffs("default") == (1, [("invisible_wall", "warning", 1),
                                    ("below_min_area", "info", 1)])
    (info,) = [f for f in _findings(tmp_path / "default", "collision_diff") if f["count"] == 1
               and f["got"] == "below_min_area"]
    assert info["name"] == "invisible_wall: below_min_area" and info["face_count"] > 0
    assert 0.2 < info["size"] < 0.385
    assert diffs("all", "--min-area", "collision_diff=0") == (
        1, [("invisible_wall", "warning", 1)] * 2)
    assert diffs("none", "--min-area", "collision_diff=100") == (
        0, [("below_min_area", "info", 2)])
    write_level(level, _spawned(render="render.obj", min_area={"collision_diff": 100}),
                boxes=clip)
    assert diffs("side") == (0, [("below_min_area", "info", 2)])
    proc = levelcheck(level, "--out", tmp_path / "bad", *opts, "--min-area", "collision_diff=-1")
    assert proc.returncode == 2 and "--min-area.collision_diff" in proc.stderr


def test_an_excluded_object_is_not_part_of_the_level(tmp_path):
    level = write_level(tmp_path / "yard.obj", dict(_spawned(), **buried("A")))
    assert levelcheck(level, "--out", tmp_path / "all", *FAST, *REACH).returncode == 1
    proc = levelcheck(level, "--out", tmp_path / "cli", *FAST, *REACH,
                      "--exclude", "Platform", "--exclude", "Crate")
    assert proc.returncode == 0, proc.stdout + proc.stderr  # no island, A is clear
    doc = _report(tmp_path / "cli")["levels"][0]
    assert doc["triangles"] == 12 and doc["objects"] == ["Floor"]
    write_level(level, dict(_spawned(exclude=["Platform", "Crate"]), **buried("A")))
    assert levelcheck(level, "--out", tmp_path / "side", *FAST, *REACH).returncode == 0
    proc = levelcheck(level, "--out", tmp_path / "bad", *FAST, *REACH, "--exclude", "Sky")
    assert proc.returncode == 2
    (line,) = proc.stderr.strip().splitlines()
    assert "no object or collection named 'Sky'" in line and "Platform" in line


def test_cramped_regions_smaller_than_the_minimum_area_are_counted_in_one_info(tmp_path):
    """Floor between two walls 0.5 m apart: one cramped region of about 0.55 m^2 (the
    level's "nothing to check" made an info, so the exit status is the region's)."""
    boxes = (("Floor", (-10, -10, -1), (10, 10, 0)), ("WallA", (0, 0, 0), (1, 2, 3)),
             ("WallB", (1.5, 0, 0), (2.5, 2, 3)))
    level = write_level(tmp_path / "gap.obj", {}, boxes=boxes)
    opts = [*FAST, "--checks", "stand", "--fail-on", "warning", "--severity", "level=info"]
    assert levelcheck(level, "--out", tmp_path / "a", *opts, "--min-area",
                      "stand=0.5").returncode == 1
    (region,) = _findings(tmp_path / "a", "stand")
    assert region["got"] == "cramped" and 0.5 < region["size"] < 0.6
    assert levelcheck(level, "--out", tmp_path / "b", *opts, "--min-area",
                      "stand=0.6").returncode == 0
    (info,) = _findings(tmp_path / "b", "stand")
    assert (info["got"], info["severity"], info["count"]) == ("below_min_area", "info", 1)
    assert info["face_count"] > 0  # its faces are still there to select


BLEND = """
import sys, bpy
bpy.ops.wm.read_factory_settings(use_empty=True)
def box(name, lo, hi, coll):
    me = bpy.data.meshes.new(name)
    (x0, y0, z0), (x1, y1, z1) = lo, hi
    v = [(x0, y0, z0), (x1, y0, z0), (x1, y1, z0), (x0, y1, z0),
         (x0, y0, z1), (x1, y0, z1), (x1, y1, z1), (x0, y1, z1)]
    f = [(0, 3, 2, 1), (4, 5, 6, 7), (0, 1, 5, 4), (1, 2, 6, 5), (2, 3, 7, 6), (3, 0, 4, 7)]
    me.from_pydata(v, [], f)
    coll.objects.link(bpy.data.objects.new(name, me))
scene = bpy.context.scene
outside = bpy.data.collections.new("Outside")
scene.collection.children.link(outside)
box("Floor", (-10, -10, -1), (10, 10, 0), scene.collection)
box("ShellA", (20, 0, 0), (24, 4, 1), outside)
box("ShellB", (30, 0, 0), (34, 4, 1), outside)
bpy.ops.wm.save_as_mainfile(filepath=sys.argv[-1])
"""


def test_an_excluded_collection_leaves_out_every_object_in_it(tmp_path):
    level = tmp_path / "sealed.blend"
    made = subprocess.run([sys.executable, "-c", BLEND, str(level)], capture_output=True,
                          text=True, timeout=300)
    assert made.returncode == 0, made.stderr
    opts = ["--quiet", "--no-png", "--checks", "penetration"]
    assert levelcheck(level, "--out", tmp_path / "all", *opts).returncode == 0
    assert sorted(_report(tmp_path / "all")["levels"][0]["objects"]) == [
        "Floor", "ShellA", "ShellB"]
    proc = levelcheck(level, "--out", tmp_path / "cut", *opts, "--exclude", "Outside")
    assert proc.returncode == 0, proc.stderr
    doc = _report(tmp_path / "cut")["levels"][0]
    assert doc["objects"] == ["Floor"] and doc["triangles"] == 12


def test_shards_merged_keep_their_waivers_and_the_gate_follows_them(tmp_path):
    """Two levels on two shards: a's error is waived, b's is not; the merge lists a's as
    waived and fails on b's alone."""
    a = write_level(tmp_path / "a.obj", dict(buried("A"), waivers=[
        waiver("capsule", "A", "penetrating")]))
    b = write_level(tmp_path / "b.obj", buried("B"))
    opts = [*FAST, "--checks", "penetration"]
    for k in (1, 2):
        levelcheck(a, b, "--shard", f"{k}/2", "--out", tmp_path / f"s{k}", *opts)
    proc = levelcheck("--merge", tmp_path / "s1", tmp_path / "s2", "--out", tmp_path / "m",
                      "--quiet")
    assert proc.returncode == 1, proc.stderr
    doc = _report(tmp_path / "m")
    (fa,) = [f for f in doc["levels"][0]["findings"] if f["check"] == "capsule"]
    (fb,) = [f for f in doc["levels"][1]["findings"] if f["check"] == "capsule"]
    assert fa["waived"]["who"] == "ana" and "waived" not in fb
    assert doc["summary"]["failing"] == 1 and doc["levels"][0]["ok"] and not doc["levels"][1]["ok"]
