"""Waivers in the panel (issue 27; issue 25 section 4) through the installed extension: Waive…
on a selected finding row writes the waiver into the saved .blend's sidecar (the file the CLI
reads), the row is listed waived and counted apart (panel, Export Report and the CLI agree),
a re-run keeps it, Remove Waiver undoes it, a waiver whose finding is gone is an info row, an
unsaved .blend is an error; a deliberate render/collision difference waived in the panel
stays waived in the CLI, on a re-run and against ``--baseline``.

The level (as test_addon_diff.py's): a 10 m render floor ``Floor`` and its collision twin
``Floor_col``, a crate ``UCX_Crate`` in the collision only (an invisible wall at x 1..2, a
deliberate clip brush), a spawn at (-3, 0, 0)."""

import json
import pathlib
import subprocess
import sys

import blender_helpers as bh
import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
CLI = [sys.executable, "-m", "capsule_collision.levelcheck"]
SCHEMA = json.loads((ROOT / "schema" / "report.schema.json").read_text())
REASON = "clip brush keeps players off the crate"


@pytest.fixture
def mods(addon):
    M = bh.addon_modules(addon, results="addon.results", waivers="addon.waivers",
                         cache="addon.cache")
    M.cache.clear()
    return M


def _level(bpy, scene):
    scene.capsule_collision.live_check = False
    bh.grid("Floor", 10)
    bh.grid("Floor_col", 10)
    bh.box("UCX_Crate", (1.0, -1.0, -0.2), (2.0, 1.0, 2.5))
    bh.capsule("Spawn", (-3.0, 0.0, 0.1)).capsule_collision.spawn = True
    scene.capsule_collision.collision_source = "NAMING"
    bpy.context.view_layer.update()


def _diff_rows(scene):
    return [r for r in scene.capsule_collision.results
            if r.kind == "COLLISION_DIFF" and r.object]


def _select(scene, row):
    rows = list(scene.capsule_collision.results)
    scene.capsule_collision.results_index = next(k for k, r in enumerate(rows)
                                                 if r.as_pointer() == row.as_pointer())


def _levelcheck(*args):
    return subprocess.run([*CLI, *map(str, args), "--quiet", "--no-png"], capture_output=True,
                          text=True, timeout=600)


def _report(out):
    doc = json.loads((pathlib.Path(out) / "report.json").read_text())
    jsonschema = pytest.importorskip("jsonschema")
    jsonschema.validate(doc, SCHEMA)
    return doc


def _waive(bpy, scene, tmp_path, mods):
    """The level saved as yard.blend, Render vs Collision run, its invisible wall waived."""
    _level(bpy, scene)
    blend = tmp_path / "yard.blend"
    bpy.ops.wm.save_as_mainfile(filepath=str(blend))
    assert bpy.ops.capsule_collision.collision_diff() == {"FINISHED"}
    (wall, *_rest) = _diff_rows(scene)
    assert wall.got == "invisible_wall" and wall.severity == "WARNING" and wall.has_where
    assert mods.results.severity_counts(scene)["warning"] == 1  # two rows, one finding
    _select(scene, wall)
    assert bpy.ops.capsule_collision.waive_finding(reason=REASON, who="ana") == {"FINISHED"}
    return blend


def test_waive_writes_the_sidecar_marks_the_rows_and_counts_them_apart(scene, bpy_module,
                                                                       mods, tmp_path):
    bpy = bpy_module
    blend = _waive(bpy, scene, tmp_path, mods)
    side = json.loads((tmp_path / "yard.levelcheck.json").read_text())
    (entry,) = side["waivers"]
    assert entry["check"] == "collision_diff" and entry["got"] == "invisible_wall"
    assert (entry["reason"], entry["who"]) == (REASON, "ana") and len(entry["where"]) == 3
    rows = _diff_rows(scene)
    assert rows and all(r.waived_by == "ana" and r.waived_reason == REASON for r in rows)
    counts = mods.results.severity_counts(scene)
    assert (counts["warning"], counts["waived"]) == (0, 1)
    assert "1 waived" in mods.results.summary_text(counts)
    # Export Report writes what the CLI writes: waived, not a warning
    out = tmp_path / "panel.json"
    assert bpy.ops.capsule_collision.export_report(filepath=str(out)) == {"FINISHED"}
    doc = json.loads(out.read_text())
    (f,) = [f for f in doc["levels"][0]["findings"] if f["check"] == "collision_diff"]
    assert f["waived"] == {"reason": REASON, "who": "ana"}
    assert doc["summary"]["by_severity"]["warning"] == 0 and doc["summary"]["waived"] == 1
    # a re-run marks the new rows from the sidecar
    assert bpy.ops.capsule_collision.collision_diff() == {"FINISHED"}
    assert all(r.waived_by == "ana" for r in _diff_rows(scene))
    # the CLI on the saved .blend: the same finding waived, the gate passes on warnings
    bpy.ops.wm.save_mainfile()
    proc = _levelcheck(blend, "--out", tmp_path / "cli", "--fail-on", "warning")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    cli = _report(tmp_path / "cli")
    (g,) = [g for g in cli["levels"][0]["findings"] if g["check"] == "collision_diff"]
    assert g["waived"]["who"] == "ana" and tuple(g["where"]) == tuple(entry["where"])
    assert cli["summary"]["by_severity"]["warning"] == 0 and cli["summary"]["waived"] == 1


def test_remove_waiver_undoes_it_and_a_stale_waiver_is_an_info_row(scene, bpy_module, mods,
                                                                   tmp_path):
    bpy = bpy_module
    _waive(bpy, scene, tmp_path, mods)
    side = tmp_path / "yard.levelcheck.json"
    _select(scene, _diff_rows(scene)[0])
    assert bpy.ops.capsule_collision.remove_waiver() == {"FINISHED"}
    assert "waivers" not in json.loads(side.read_text())
    assert not any(r.waived_by for r in _diff_rows(scene))
    assert mods.results.severity_counts(scene)["warning"] == 1
    # a waiver of a difference that is gone (the crate moved away) is one info row
    _select(scene, _diff_rows(scene)[0])
    assert bpy.ops.capsule_collision.waive_finding(reason=REASON, who="ana") == {"FINISHED"}
    bpy.data.objects["UCX_Crate"].location.y += 3.0
    bpy.context.view_layer.update()
    assert bpy.ops.capsule_collision.collision_diff() == {"FINISHED"}
    (stale,) = [r for r in scene.capsule_collision.results if r.got == "waiver_stale"]
    assert stale.severity == "INFO" and "waiver no longer matches any finding" in stale.label
    _select(scene, stale)
    assert bpy.ops.capsule_collision.remove_waiver() == {"FINISHED"}
    assert "waivers" not in json.loads(side.read_text())
    assert not [r for r in scene.capsule_collision.results if r.got == "waiver_stale"]


def test_an_unsaved_blend_is_an_error_asking_to_save(scene, bpy_module, mods):
    bpy = bpy_module
    _level(bpy, scene)
    assert bpy.ops.capsule_collision.collision_diff() == {"FINISHED"}
    _select(scene, _diff_rows(scene)[0])
    with pytest.raises(RuntimeError, match="save the .blend first"):
        bpy.ops.capsule_collision.waive_finding(reason=REASON, who="ana")
    assert not any(r.waived_by for r in _diff_rows(scene))


def test_a_waived_difference_survives_a_re_run_and_a_baseline_in_the_cli(scene, bpy_module,
                                                                         mods, tmp_path):
    """The CLI's baseline from before the waiver lists the wall; after it the wall is
    waived, never new, and the gate on warnings passes; a re-run against that report too."""
    bpy = bpy_module
    _level(bpy, scene)
    blend = tmp_path / "yard.blend"
    bpy.ops.wm.save_as_mainfile(filepath=str(blend))
    proc = _levelcheck(blend, "--out", tmp_path / "before", "--fail-on", "warning")
    assert proc.returncode == 1, proc.stdout + proc.stderr  # the wall is a warning
    assert bpy.ops.capsule_collision.collision_diff() == {"FINISHED"}
    _select(scene, _diff_rows(scene)[0])
    assert bpy.ops.capsule_collision.waive_finding(reason=REASON, who="ana") == {"FINISHED"}
    for base, out in (("before", "after"), ("after", "again")):
        proc = _levelcheck(blend, "--out", tmp_path / out, "--fail-on", "warning",
                           "--baseline", tmp_path / base / "report.json")
        assert proc.returncode == 0, proc.stdout + proc.stderr
        doc = _report(tmp_path / out)
        (f,) = [f for f in doc["levels"][0]["findings"] if f["check"] == "collision_diff"]
        assert f["waived"]["reason"] == REASON and f["new"] is False
        assert doc["summary"]["new_findings"] == 0


def test_a_sidecar_waiver_written_by_hand_marks_the_capsule_and_a_gone_one_is_one_info_row(
        scene, bpy_module, mods, tmp_path):
    """The sidecar checked in beside the level (not written by the panel): its capsule waiver
    marks the capsule's rows, its waiver of a capsule that is gone is ONE info row however
    often the check runs (the live check rewrites one capsule's rows at a time)."""
    bpy = bpy_module
    _level(bpy, scene)
    cap = bh.capsule("Crate clip", (1.5, 0.0, 0.1))  # stands in the crate: penetrating
    cap.capsule_collision.expect = "CLEAR"
    bpy.ops.wm.save_as_mainfile(filepath=str(tmp_path / "yard.blend"))
    (tmp_path / "yard.levelcheck.json").write_text(json.dumps({"waivers": [
        {"check": "capsule", "name": "Crate clip", "got": "penetrating", "reason": REASON,
         "who": "ben"},
        {"check": "capsule", "name": "Gone", "got": "penetrating", "reason": "x", "who": "ben"}]}))
    for _ in range(2):
        assert bpy.ops.capsule_collision.check_penetration() == {"FINISHED"}
    rows = [r for r in scene.capsule_collision.results if r.capsule == "Crate clip"]
    assert rows and all(r.waived_by == "ben" for r in rows if r.severity == "ERROR")
    stale = [r for r in scene.capsule_collision.results if r.got == "waiver_stale"]
    assert len(stale) == 1 and "capsule Gone (penetrating)" in stale[0].label
    counts = mods.results.severity_counts(scene)
    assert (counts["error"], counts["waived"], counts["info"]) == (0, 1, 1)


def test_the_panel_and_the_cli_take_one_sidecar_rule_and_one_waiver_rule(scene, bpy_module,
                                                                        mods, tmp_path):
    """core's rules, not two copies (they drifted): two waivers naming one capsule mark it
    with the FIRST in the panel and in the CLI, and neither calls the second stale (the
    panel did); a near miss beside the .blend is named; both sidecar names present is an
    error in the panel (Waive…) and exit 2 in the CLI (the add-on took the long name)."""
    bpy = bpy_module
    _level(bpy, scene)
    bh.capsule("Crate clip", (1.5, 0.0, 0.1)).capsule_collision.expect = "CLEAR"
    blend = tmp_path / "yard.blend"
    bpy.ops.wm.save_as_mainfile(filepath=str(blend))
    (tmp_path / "yard.levelcheck.json").write_text(json.dumps({"waivers": [
        {"check": "capsule", "name": "Crate clip", "got": "penetrating", "reason": "first",
         "who": "ana"},
        {"check": "capsule", "name": "Crate clip", "got": "penetrating", "reason": "second",
         "who": "ben"}]}))
    (tmp_path / "yard.levelchek.json").write_text("{}")
    assert bpy.ops.capsule_collision.check_penetration() == {"FINISHED"}
    rows = [r for r in scene.capsule_collision.results
            if r.capsule == "Crate clip" and r.severity == "ERROR"]
    assert rows and all((r.waived_by, r.waived_reason) == ("ana", "first") for r in rows)
    assert not [r for r in scene.capsule_collision.results if r.got == "waiver_stale"]
    assert mods.waivers.near_miss_lines() == [
        "level yard.blend: yard.levelchek.json is not read as its sidecar (expected "
        "yard.levelcheck.json or yard.blend.levelcheck.json): rename it"]
    proc = _levelcheck(blend, "--out", tmp_path / "cli", "--checks", "penetration")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "yard.levelchek.json is not read as its sidecar" in proc.stderr
    found = _report(tmp_path / "cli")["levels"][0]["findings"]
    (cap,) = [f for f in found if f["check"] == "capsule" and f["name"] == "Crate clip"]
    assert cap["waived"] == {"reason": "first", "who": "ana"}
    assert not [f for f in found if f["got"] == "waiver_stale"]
    # both names: the panel refuses to guess, as the CLI does
    (tmp_path / "yard.blend.levelcheck.json").write_text("{}")
    _select(scene, rows[0])
    assert bpy.ops.capsule_collision.remove_waiver.poll()
    with pytest.raises(RuntimeError, match="two sidecars, yard.levelcheck.json and "
                                           "yard.blend.levelcheck.json; keep one"):
        bpy.ops.capsule_collision.remove_waiver()
    proc = _levelcheck(blend, "--out", tmp_path / "both")
    assert proc.returncode == 2 and "two sidecars" in proc.stderr
