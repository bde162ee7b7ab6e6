"""The extension as Blender sees it: manifest validation, build contents, real loader."""

import os
import pathlib
import subprocess
import sys
import zipfile

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.blender


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


def test_built_zip_holds_the_extension_and_nothing_else(tmp_path):
    proc = _run_cli("build", "--source-dir", str(ROOT), "--output-dir", str(tmp_path))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    (zip_path,) = tmp_path.glob("capsule_collision-*.zip")
    names = zipfile.ZipFile(zip_path).namelist()
    assert "blender_manifest.toml" in names and "__init__.py" in names
    assert "core/shapes.py" in names and "addon/registration.py" in names
    leaked = [
        n
        for n in names
        if n.startswith(("tests/", "tools/", ".ci/", ".git/"))
        or n.endswith((".md", ".pyc", "pyproject.toml", "requirements.txt"))
        or "__pycache__" in n
    ]
    assert not leaked, leaked


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
