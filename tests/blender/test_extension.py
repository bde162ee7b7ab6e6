"""The extension as Blender sees it: manifest validation, build contents, real loader."""

import importlib.util
import json
import os
import pathlib
import shutil
import subprocess
import sys
import zipfile

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]



def _bpy_dir():
    import importlib.util

    spec = importlib.util.find_spec("bpy")
    assert spec is not None and spec.origin, "bpy missing: pip install -r requirements.txt"
    return pathlib.Path(spec.origin).parent


def _blender_ext():
    version_dirs = sorted(p for p in _bpy_dir().iterdir() if p.is_dir() and p.name[:1].isdigit())
    assert version_dirs, "no Blender version folder inside the bpy package"
    base = version_dirs[-1] / "scripts"
    cli = base / "addons_core" / "bl_pkg" / "cli" / "blender_ext.py"
    tags = base / "modules" / "_bpy_internal" / "extensions" / "tags.py"
    assert cli.is_file() and tags.is_file()
    return cli, tags


def _run_cli(*args):
    cli, _ = _blender_ext()
    return subprocess.run(
        [sys.executable, str(cli), *args], capture_output=True, text=True, timeout=300
    )


def test_manifest_passes_blenders_validator_with_tag_checking():
    _, tags = _blender_ext()
    proc = _run_cli("validate", str(ROOT), "--valid-tags", str(tags))
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_validator_rejects_an_unknown_tag(tmp_path):
    """Guards the test above: the validator really checks tags."""
    _, tags = _blender_ext()
    bad = tmp_path / "bad"
    bad.mkdir()
    text = (ROOT / "blender_manifest.toml").read_text()
    (bad / "blender_manifest.toml").write_text(text.replace('"Physics"', '"Collision"'))
    (bad / "__init__.py").write_text("def register(): pass\ndef unregister(): pass\n")
    proc = _run_cli("validate", str(bad), "--valid-tags", str(tags))
    assert proc.returncode != 0
    assert "Collision" in proc.stdout + proc.stderr


def _build_tool():
    spec = importlib.util.spec_from_file_location("build_extension",
                                                  ROOT / "tools" / "build_extension.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _tracked_files():
    """The checkout's tracked files (what a fresh clone has), relative paths."""
    proc = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, text=True)
    if proc.returncode != 0:
        pytest.skip("not a git checkout")
    return [f for f in proc.stdout.split("\0") if f and (ROOT / f).is_file()]


def _fresh_clone_with_clutter(tmp_path):
    """A copy of the tracked files plus what a working copy after CI holds: virtual
    environments (dotted and not), caches, samples, a built report, editor files."""
    clone = tmp_path / "clone"
    for f in _tracked_files():
        dst = clone / f
        dst.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / f, dst)
    for venv in (".venv", ".venv-lint", ".venv-core", "venv", "env312"):
        site = clone / venv / "lib" / "python3.11" / "site-packages" / "numpy"
        site.mkdir(parents=True)
        (clone / venv / "pyvenv.cfg").write_text("home = /usr/bin\n")
        (site / "__init__.py").write_text("")
    for junk in ("core/__pycache__/mesh.cpython-311.pyc", "addon/__pycache__/x.pyc",
                 ".pytest_cache/v/cache/nodeids", ".ruff_cache/0.1/x", "report.json",
                 ".hypothesis/examples/x", "addon/.operators.py.swp", "level.blend1"):
        (clone / junk).parent.mkdir(parents=True, exist_ok=True)
        (clone / junk).write_text("x")
    return clone


def _expected_zip_names():
    """The tracked extension files and the wheels the manifest declares (fetched at build
    time, never tracked)."""
    tracked = _tracked_files()
    wheels = [w.removeprefix("./") for w in _build_tool().manifest_wheels(ROOT)]
    assert wheels and not set(wheels) & set(tracked)
    return sorted([f for f in tracked
                   if f in ("__init__.py", "blender_manifest.toml")
                   or f.startswith(("addon/", "core/"))] + wheels)


def test_build_tool_on_a_fresh_clone_creates_dist_and_packs_only_the_extension(tmp_path):
    clone = _fresh_clone_with_clutter(tmp_path)
    assert not (clone / "dist").exists()
    proc = subprocess.run([sys.executable, str(clone / "tools" / "build_extension.py")],
                          cwd=clone, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    (zip_path,) = (clone / "dist").glob("capsule_collision-*.zip")
    assert str(zip_path) in proc.stdout
    names = sorted(n for n in zipfile.ZipFile(zip_path).namelist() if not n.endswith("/"))
    assert names == _expected_zip_names()
    with zipfile.ZipFile(zip_path) as zf:  # a leaked venv would be tens of MB
        assert sum(i.compress_size for i in zf.infolist()
                   if not i.filename.startswith("wheels/")) < 1_000_000


def test_build_tool_refuses_a_zip_with_foreign_files():
    tool = _build_tool()
    assert tool.zip_problems(["__init__.py", "addon/operators.py", "core/mesh/triangle_mesh.py",
                              "blender_manifest.toml", "addon/"]) == []
    bad = [".venv-lint/lib/x.py", "tests/test_x.py", "core/__pycache__/m.pyc",
           "samples/level.obj", "addon/.hidden", "tools/bench.py", "README.md",
           "wheels/numpy-1.26.4-cp311-cp311-win_amd64.whl"]
    declared = ["coacd-1.0.14-cp39-abi3-win_amd64.whl"]
    assert tool.zip_problems(bad + ["core/mesh/triangle_mesh.py",
                                    "wheels/coacd-1.0.14-cp39-abi3-win_amd64.whl"],
                             declared) == bad


def test_build_tool_bad_arguments_exit_2(tmp_path):
    proc = subprocess.run([sys.executable, str(ROOT / "tools" / "build_extension.py"),
                           "--source-dir", str(tmp_path)], capture_output=True, text=True)
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1 and "blender_manifest.toml" in proc.stderr


INSTALL_SCRIPT = r"""
import json, sys
import bpy, addon_utils
zip_path = sys.argv[1]
res = bpy.ops.extensions.package_install_files(filepath=zip_path, repo="user_default",
                                               enable_on_install=True)
enabled = [m for m in bpy.context.preferences.addons.keys() if m.endswith("capsule_collision")]
bpy.ops.wm.read_homefile(use_empty=True)
scene = bpy.context.scene
def mesh(name, verts, faces, loc):
    me = bpy.data.meshes.new(name)
    me.from_pydata(verts, [], faces)
    ob = bpy.data.objects.new(name, me)
    ob.location = loc
    scene.collection.objects.link(ob)
    return ob
box = [(-.25, -2, -1.5), (.25, -2, -1.5), (.25, 2, -1.5), (-.25, 2, -1.5),
       (-.25, -2, 1.5), (.25, -2, 1.5), (.25, 2, 1.5), (-.25, 2, 1.5)]
faces = [(0, 3, 2, 1), (4, 5, 6, 7), (0, 1, 5, 4), (1, 2, 6, 5), (2, 3, 7, 6), (3, 0, 4, 7)]
wall = mesh("Wall", box, faces, (2.0, 0, 1.5))
cap = bpy.data.objects.new("C", None)
cap.location = (1.8, 0, 0)
cap.capsule_collision.role = "CAPSULE"
scene.collection.objects.link(cap)
out = bpy.ops.capsule_collision.check_penetration()
flags = [False] * len(wall.data.polygons)
wall.data.attributes["capsule_penetration"].data.foreach_get("value", flags)
mod = sys.modules[enabled[0]]
rows = len(scene.capsule_collision.results)
recheck = bpy.ops.capsule_collision.recheck_all()
goto = bpy.ops.capsule_collision.goto_finding(step=1)
mode, active = bpy.context.mode, bpy.context.view_layer.objects.active.name
summary = scene.capsule_collision.last_report
bpy.ops.object.mode_set(mode="OBJECT")
for ob in scene.objects:
    ob.select_set(ob.name == "Wall")
decompose = bpy.ops.capsule_collision.make_proxies(kind="DECOMPOSE", max_hulls=1)
import coacd
loop = {"recheck": sorted(recheck), "goto": sorted(goto), "mode": mode, "active": active,
        "decompose": sorted(decompose), "coacd": coacd.__file__,
        "pieces": [o.name for o in bpy.data.collections["Collision"].objects],
        "severity": scene.capsule_collision.results[0].severity,
        "index": scene.capsule_collision.results_index,
        "summary": summary}
print("RESULT " + json.dumps({"install": sorted(res), "enabled": enabled, "op": sorted(out),
                              "flags": flags, "file": mod.__file__, "rows": rows,
                              "loop": loop}))
"""


def test_built_zip_installs_into_a_fresh_blender_and_checks(tmp_path):
    zip_path = _build_tool().build(ROOT, tmp_path / "dist")
    user = tmp_path / "user"
    user.mkdir()
    env = dict(os.environ, BLENDER_USER_RESOURCES=str(user),
               XDG_CACHE_HOME=str(tmp_path / "cache"))
    script = tmp_path / "install.py"
    script.write_text(INSTALL_SCRIPT)
    proc = subprocess.run([sys.executable, str(script), str(zip_path)], env=env,
                          capture_output=True, text=True, timeout=300, cwd=tmp_path)
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT ")]
    assert proc.returncode == 0 and lines, proc.stdout[-3000:] + proc.stderr[-3000:]
    got = json.loads(lines[0][len("RESULT "):])
    assert got["install"] == ["FINISHED"] and got["op"] == ["FINISHED"]
    assert got["enabled"] == ["bl_ext.user_default.capsule_collision"]
    assert got["file"].startswith(str(user))  # the installed copy, not this checkout
    assert got["flags"] == [False, False, False, False, False, True]  # the -x face only
    assert got["rows"] == 1
    # the loop's operators from the installed copy: Re-check All, then the next finding (the
    # capsule has no expectation and penetrates: a warning) selects the wall in Edit Mode
    loop = got["loop"]
    assert loop["recheck"] == ["FINISHED"] and loop["goto"] == ["FINISHED"]
    assert loop["severity"] == "WARNING" and loop["index"] == 0
    assert loop["mode"] == "EDIT_MESH" and loop["active"] == "Wall"
    assert "Re-checked 1 of 1 checks: 0 errors, 1 warning, 0 passed" in loop["summary"]
    # convex decomposition runs CoACD from the wheel bundled in the zip
    assert loop["decompose"] == ["FINISHED"] and loop["pieces"] == ["UCX_Wall_01"]
    # (this venv has coacd for the CLI too, so which copy imports first is Blender's choice;
    # the bundled wheel must have been installed into the user's extension packages)
    assert list(user.glob("extensions/**/site-packages/coacd/__init__.py"))


def test_extension_loads_through_blenders_loader(addon, bpy_module):
    bpy = bpy_module
    assert addon.__name__ == "bl_ext.user_default.capsule_collision"
    assert "bl_ext.user_default.capsule_collision" in bpy.context.preferences.addons
    import importlib

    core = importlib.import_module(addon.__name__ + ".core")  # relative imports work installed
    capsule = core.Capsule.upright((0, 0, 0), 1.8, 0.35)
    assert capsule.b.tolist() == pytest.approx([0.0, 0.0, 1.45])
    assert hasattr(bpy.types.Scene, "capsule_collision")


def test_scene_settings_defaults(scene):
    settings = scene.capsule_collision
    assert settings.radius == pytest.approx(0.35)
    assert settings.height == pytest.approx(1.8)
    assert settings.max_slope_deg == pytest.approx(45.0)


def test_disable_enable_leaves_nothing_behind(addon, bpy_module):
    import addon_utils

    bpy = bpy_module
    name = addon.__name__
    addon_utils.disable(name, default_set=True, handle_error=_raise)
    try:
        assert not hasattr(bpy.types.Scene, "capsule_collision")
        assert not hasattr(bpy.types, "CAPSULE_COLLISION_PG_settings")
        assert name not in bpy.context.preferences.addons
    finally:
        mod = addon_utils.enable(name, default_set=True, handle_error=_raise)
    assert mod is not None
    assert hasattr(bpy.types.Scene, "capsule_collision")


def _raise(ex):
    raise ex


def test_blender_user_folders_are_redirected_away_from_home(bpy_module):
    user = os.path.realpath(os.environ["BLENDER_USER_RESOURCES"])
    for kind in ("CONFIG", "SCRIPTS", "EXTENSIONS"):
        assert os.path.realpath(bpy_module.utils.user_resource(kind)).startswith(user), kind
    assert not os.path.realpath(os.environ["XDG_CACHE_HOME"]).startswith(
        os.path.realpath(os.path.expanduser("~/.cache"))
    )
