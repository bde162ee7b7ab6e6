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


# The system libraries bpy's shared objects need (ldd on .venv's bpy/*.so and bpy/lib/*.so:
# everything not bundled in bpy/lib and not in python:3.11-slim) and their Debian packages.
SYSTEM_LIBS = {"libX11.so.6": "libx11-6", "libXext.so.6": "libxext6", "libXt.so.6": "libxt6",
               "libSM.so.6": "libsm6", "libICE.so.6": "libice6", "libGL.so.1": "libgl1",
               "libOpenGL.so.0": "libopengl0", "libvulkan.so.1": "libvulkan1"}


def test_the_system_libraries_listed_are_the_ones_bpy_loads():
    """ldd on bpy's shared objects: every library that resolves outside bpy and the Python
    image's own libraries (libc, libstdc++, libm, ...) or what the packages of SYSTEM_LIBS
    pull in (libGLX, libxcb, ...) is one of SYSTEM_LIBS."""
    import bpy  # noqa: PLC0415

    folder = pathlib.Path(bpy.__file__).parent
    needed = set()
    for so in list(folder.glob("*.so")) + list(folder.glob("lib/*.so*")):
        out = subprocess.run(["ldd", str(so)], capture_output=True, text=True).stdout
        for line in out.splitlines():
            parts = line.split()
            if len(parts) >= 3 and parts[1] == "=>" and str(folder) not in parts[2]:
                needed.add(parts[0])
    base = {"libc.so.6", "libm.so.6", "libdl.so.2", "libpthread.so.0", "librt.so.1",
            "libstdc++.so.6", "libgcc_s.so.1", "libutil.so.1", "libz.so.1", "libuuid.so.1",
            "libGLX.so.0", "libGLdispatch.so.0", "libxcb.so.1", "libXau.so.6",
            "libXdmcp.so.6", "libbsd.so.0", "libmd.so.0", "libexpat.so.1", "libffi.so.8",
            "libcrypto.so.3", "libssl.so.3", "libtinfo.so.6", "libzstd.so.1", "liblzma.so.5",
            "libbz2.so.1.0", "libsqlite3.so.0", "libreadline.so.8", "libncursesw.so.6"}
    assert needed - base <= set(SYSTEM_LIBS), sorted(needed - base - set(SYSTEM_LIBS))


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


INSTALL_STEP = 'eval "$LEVELCHECK_INSTALL"'


def _installs_the_checkouts_wheel(command):
    """The install builds the wheel from the checkout and installs it with Blender's pins
    (the project is on no package index: ``pip install capsule-collision`` would fail)."""
    build, install = (part.strip() for part in command.split("&&"))
    assert build == "pip wheel --no-deps --wheel-dir dist ."
    assert install.startswith("pip install ") and set(install.split()) >= PINS
    assert install.split()[-1] == "dist/capsule_collision-*.whl"
    assert "capsule-collision" not in install.split()


_INSTALLED: dict = {}  # install command -> the bin folder it installed levelcheck into


def installed(command, tmp_path_factory):
    """Run a workflow's install step as written (``eval "$LEVELCHECK_INSTALL"``) in a copy of
    the checkout, with a fresh venv's ``pip`` first on PATH, as on a runner. The venv sees
    this test venv's packages through a .pth file, so the pinned bpy and numpy are already
    satisfied (not downloaded again) and pip builds and installs the wheel alone: levelcheck
    then runs from the wheel, not from this editable checkout. Returns the venv's bin."""
    if command not in _INSTALLED:
        work = tmp_path_factory.mktemp("runner")
        checkout = work / "checkout"
        shutil.copytree(ROOT, checkout, ignore=shutil.ignore_patterns(
            ".venv*", ".git", ".real_levels", "*.egg-info", "build", "dist", ".mypy_cache",
            ".ruff_cache", ".pytest_cache", "__pycache__"))
        venv = work / "venv"
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        site = next((venv / "lib").glob("python3*/site-packages"))
        ours = [p for p in sys.path if p.endswith("site-packages")]
        (site / "test_venv.pth").write_text("\n".join(ours) + "\n")
        env = dict(os.environ, LEVELCHECK_INSTALL=command,
                   PATH=str(venv / "bin") + os.pathsep + os.environ["PATH"])
        proc = subprocess.run(["bash", "-c", INSTALL_STEP], cwd=checkout, env=env,
                              capture_output=True, text=True, timeout=900)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        assert (venv / "bin" / "levelcheck").is_file()
        assert list(site.glob("capsule_collision-*.dist-info"))  # the wheel, installed
        _INSTALLED[command] = venv / "bin"
    return _INSTALLED[command]


def _bash(command, cwd, env, bin_dir=None):
    """A CI step: bash with the job's variables, the installed console scripts on PATH."""
    env = dict(os.environ, **env)
    env["PATH"] = str(bin_dir or os.path.dirname(sys.executable)) + os.pathsep + env["PATH"]
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


def test_github_actions_workflow_shards_and_merges(levels, single_run, tmp_path,
                                                   tmp_path_factory):
    flow = yaml.safe_load((EXAMPLES / "github-actions.yml").read_text())
    env = {k: str(v) for k, v in flow["env"].items()}
    _installs_the_checkouts_wheel(env["LEVELCHECK_INSTALL"])
    bin_dir = installed(env["LEVELCHECK_INSTALL"], tmp_path_factory)
    assert flow["permissions"] == {"contents": "read", "checks": "write"}  # the publisher
    shard_job, merge_job = flow["jobs"]["shard"], flow["jobs"]["merge"]
    shards = shard_job["strategy"]["matrix"]["shard"]
    assert shards == [1, 2, 3, 4] and shard_job["strategy"]["fail-fast"] is False
    assert merge_job["needs"] == "shard" and merge_job["if"] == "always()"
    runs = [s["run"] for s in shard_job["steps"] if "run" in s]
    assert runs[0] == INSTALL_STEP
    for job in (shard_job, merge_job):  # the wheel is built from the checkout
        assert job["steps"][0]["uses"] == "actions/checkout@v4"
        uploads = [s["with"] for s in job["steps"] if "upload-artifact" in s.get("uses", "")]
        assert uploads and all(u["overwrite"] is True for u in uploads)  # a re-run
    (upload,) = [s["with"] for s in shard_job["steps"] if "upload-artifact" in s.get("uses", "")]
    store = tmp_path / "artifacts"
    for k in shards:
        ws = _workspace(tmp_path, f"shard{k}", levels)
        expand = lambda text, k=k: text.replace("${{ matrix.shard }}", str(k))  # noqa: E731
        proc = _bash(expand(runs[1]), ws, env, bin_dir)
        assert proc.returncode == 0, proc.stderr  # findings (1) pass a shard job
        shutil.copytree(ws / expand(upload["path"]), store / expand(upload["name"]))
    steps = merge_job["steps"]
    (download,) = [s["with"] for s in steps if "download-artifact" in s.get("uses", "")]
    ws = tmp_path / "merge"
    for artifact in store.iterdir():
        if re.fullmatch(download["pattern"].replace("*", ".*"), artifact.name):
            shutil.copytree(artifact, ws / download["path"] / artifact.name)
    (merge,) = [s["run"] for s in steps if "--merge" in s.get("run", "")]
    proc = _bash(merge, ws, env, bin_dir)
    assert proc.returncode == 1, proc.stderr  # the gate: two levels have an error
    (published,) = [s["with"] for s in steps if "junit-report" in s.get("uses", "")]
    (report,) = [s["with"] for s in steps
                 if "upload-artifact" in s.get("uses", "") and s.get("if") == "always()"]
    assert (ws / published["report_paths"]).is_file()
    _check_merged(ws / report["path"], single_run)
    shutil.rmtree(ws / download["path"] / "levelcheck-shard-3")  # a shard job that died
    proc = _bash(merge, ws, env, bin_dir)
    assert proc.returncode == 2 and "shard(s) 3/4 missing" in proc.stderr


def test_gitlab_ci_file_runs_parallel_shards_and_a_merge(levels, single_run, tmp_path,
                                                         tmp_path_factory):
    ci = yaml.safe_load((EXAMPLES / "gitlab-ci.yml").read_text())
    variables = {k: str(v) for k, v in ci["variables"].items()}
    _installs_the_checkouts_wheel(variables["LEVELCHECK_INSTALL"])
    bin_dir = installed(variables["LEVELCHECK_INSTALL"], tmp_path_factory)
    assert ci["stages"] == ["check", "report"]
    job, merge_job = ci["levelcheck"], ci["levelcheck-report"]
    assert job["stage"] == "check" and merge_job["stage"] == "report"
    assert merge_job["needs"] == ["levelcheck"] and merge_job["when"] == "always"
    total = job["parallel"]
    for each in (job, merge_job):
        assert each["image"] == "python:3.11-slim" and each["script"][0] == INSTALL_STEP
        assert each["before_script"] == ["apt-get update -qq && apt-get install -y -qq "
                                         "--no-install-recommends $BPY_SYSTEM_LIBS"]
    assert set(variables["BPY_SYSTEM_LIBS"].split()) >= set(SYSTEM_LIBS.values())
    ws = _workspace(tmp_path, "pipeline", levels)  # artifacts land in the next job's folder
    for index in range(1, total + 1):
        node = {"CI_NODE_INDEX": str(index), "CI_NODE_TOTAL": str(total), **variables}
        shard_ws = _workspace(tmp_path, f"node{index}", levels)
        for line in job["script"][1:]:
            proc = _bash(line, shard_ws, node, bin_dir)
            assert proc.returncode == 0, proc.stderr
        for path in job["artifacts"]["paths"]:
            path = path.replace("$CI_NODE_INDEX", str(index)).rstrip("/")
            shutil.copytree(shard_ws / path, ws / path)
    for line in merge_job["script"][1:]:
        proc = _bash(line, ws, variables, bin_dir)
    assert proc.returncode == 1, proc.stderr
    assert (ws / merge_job["artifacts"]["reports"]["junit"]).is_file()
    _check_merged(ws / merge_job["artifacts"]["paths"][0].rstrip("/"), single_run)
