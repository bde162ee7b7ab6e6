"""examples/ci: the GitHub Actions workflow and the GitLab CI file a studio copies. Each is
parsed, checked for its shape (a matrix / ``parallel:`` over ``--shard K/N``, one merge job
that publishes junit.xml and keeps the pictures), and its shard and merge commands run here
through bash, as the CI runner would, on three small levels (artifacts moved between jobs as
the CI system moves them)."""

import json
import os
import pathlib
import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET

import pytest

yaml = pytest.importorskip("yaml")

ROOT = pathlib.Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples" / "ci"
PINS = {line.strip() for line in (ROOT / "requirements.txt").read_text().splitlines()
        if line.startswith(("bpy==", "numpy=="))}


@pytest.fixture(scope="module")
def levels(tmp_path_factory, addon):
    """Three small levels: a capsule in a wall (an error), a clean floor, the first again."""
    import bpy  # noqa: PLC0415
    from blender_helpers import box  # noqa: PLC0415

    folder = tmp_path_factory.mktemp("farm") / "levels"
    folder.mkdir()
    for name, bugged in (("a_castle", True), ("b_forest", False), ("c_castle2", True)):
        bpy.ops.wm.read_homefile(use_empty=True)
        box("Floor", (-5, -5, -1), (5, 5, 0))
        box("Wall", (1, -5, 0), (1.5, 5, 3))
        cap = bpy.data.objects.new("Spawn", None)
        cap.location = (1.2 if bugged else -2.0, 0.0, 0.0)
        bpy.context.scene.collection.objects.link(cap)
        cap.capsule_collision.role = "CAPSULE"
        cap.capsule_collision.expect = "CLEAR"
        bpy.ops.wm.save_as_mainfile(filepath=str(folder / f"{name}.blend"), copy=True)
    bpy.ops.wm.read_homefile(use_empty=True)
    return folder


def _bash(command, cwd, env):
    """A CI step: bash with the job's variables, the venv's console scripts on PATH."""
    env = dict(os.environ, **env)
    env["PATH"] = os.path.dirname(sys.executable) + os.pathsep + env["PATH"]
    return subprocess.run(["bash", "-c", command], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=900)


def _workspace(tmp_path, name, levels):
    ws = tmp_path / name
    ws.mkdir()
    shutil.copytree(levels, ws / "levels")
    return ws


def _check_merged(out, single):
    doc = json.loads((out / "report.json").read_text())
    assert [lv["key"] for lv in doc["levels"]] == ["a_castle.blend", "b_forest.blend",
                                                   "c_castle2.blend"]
    assert [lv["ok"] for lv in doc["levels"]] == [False, True, False]
    assert doc["run"]["merged"] == 4
    whole = json.loads((single / "report.json").read_text())
    assert [[f["message"] for f in lv["findings"]] for lv in doc["levels"]] == [
        [f["message"] for f in lv["findings"]] for lv in whole["levels"]]
    names = sorted(os.listdir(out))
    assert names == sorted(os.listdir(single))  # report, junit and every picture
    assert "report-0-a_castle.png" in names and "finding-2-1.png" in names
    suites = ET.parse(out / "junit.xml").getroot().findall("testsuite")
    assert [s.get("failures") for s in suites] == ["1", "0", "1"]


@pytest.fixture(scope="module")
def single_run(tmp_path_factory, levels):
    ws = tmp_path_factory.mktemp("single")
    shutil.copytree(levels, ws / "levels")
    proc = _bash("levelcheck levels/*.blend --out single --quiet", ws, {})
    assert proc.returncode == 1, proc.stderr
    return ws / "single"


def test_github_actions_workflow_shards_and_merges(levels, single_run, tmp_path):
    flow = yaml.safe_load((EXAMPLES / "github-actions.yml").read_text())
    env = {k: str(v) for k, v in flow["env"].items()}
    assert set(env["LEVELCHECK_INSTALL"].split()) >= PINS
    shard_job, merge_job = flow["jobs"]["shard"], flow["jobs"]["merge"]
    shards = shard_job["strategy"]["matrix"]["shard"]
    assert shards == [1, 2, 3, 4] and shard_job["strategy"]["fail-fast"] is False
    assert merge_job["needs"] == "shard" and merge_job["if"] == "always()"
    runs = [s["run"] for s in shard_job["steps"] if "run" in s]
    assert runs[0] == "$LEVELCHECK_INSTALL"
    (upload,) = [s["with"] for s in shard_job["steps"] if "upload-artifact" in s.get("uses", "")]
    store = tmp_path / "artifacts"
    for k in shards:
        ws = _workspace(tmp_path, f"shard{k}", levels)
        expand = lambda text, k=k: text.replace("${{ matrix.shard }}", str(k))  # noqa: E731
        proc = _bash(expand(runs[1]), ws, env)
        assert proc.returncode == 0, proc.stderr  # findings (1) pass a shard job
        shutil.copytree(ws / expand(upload["path"]), store / expand(upload["name"]))
    steps = merge_job["steps"]
    (download,) = [s["with"] for s in steps if "download-artifact" in s.get("uses", "")]
    ws = tmp_path / "merge"
    for artifact in store.iterdir():
        if re.fullmatch(download["pattern"].replace("*", ".*"), artifact.name):
            shutil.copytree(artifact, ws / download["path"] / artifact.name)
    (merge,) = [s["run"] for s in steps if "--merge" in s.get("run", "")]
    proc = _bash(merge, ws, env)
    assert proc.returncode == 1, proc.stderr  # the gate: two levels have an error
    (published,) = [s["with"] for s in steps if "junit-report" in s.get("uses", "")]
    (report,) = [s["with"] for s in steps
                 if "upload-artifact" in s.get("uses", "") and s.get("if") == "always()"]
    assert (ws / published["report_paths"]).is_file()
    _check_merged(ws / report["path"], single_run)
    shutil.rmtree(ws / download["path"] / "levelcheck-shard-3")  # a shard job that died
    proc = _bash(merge, ws, env)
    assert proc.returncode == 2 and "shard(s) 3/4 missing" in proc.stderr


def test_gitlab_ci_file_runs_parallel_shards_and_a_merge(levels, single_run, tmp_path):
    ci = yaml.safe_load((EXAMPLES / "gitlab-ci.yml").read_text())
    variables = {k: str(v) for k, v in ci["variables"].items()}
    assert set(variables["LEVELCHECK_INSTALL"].split()) >= PINS
    assert ci["stages"] == ["check", "report"]
    job, merge_job = ci["levelcheck"], ci["levelcheck-report"]
    assert job["stage"] == "check" and merge_job["stage"] == "report"
    assert merge_job["needs"] == ["levelcheck"] and merge_job["when"] == "always"
    total = job["parallel"]
    assert job["script"][0] == "$LEVELCHECK_INSTALL"
    ws = _workspace(tmp_path, "pipeline", levels)  # artifacts land in the next job's folder
    for index in range(1, total + 1):
        node = {"CI_NODE_INDEX": str(index), "CI_NODE_TOTAL": str(total), **variables}
        shard_ws = _workspace(tmp_path, f"node{index}", levels)
        for line in job["script"][1:]:
            proc = _bash(line, shard_ws, node)
            assert proc.returncode == 0, proc.stderr
        for path in job["artifacts"]["paths"]:
            path = path.replace("$CI_NODE_INDEX", str(index)).rstrip("/")
            shutil.copytree(shard_ws / path, ws / path)
    for line in merge_job["script"][1:]:
        proc = _bash(line, ws, variables)
    assert proc.returncode == 1, proc.stderr
    assert (ws / merge_job["artifacts"]["reports"]["junit"]).is_file()
    _check_merged(ws / merge_job["artifacts"]["paths"][0].rstrip("/"), single_run)
