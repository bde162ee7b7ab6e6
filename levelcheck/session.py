"""Start Blender (the pip ``bpy`` module) for a command-line tool, with the extension enabled
from this checkout the way Blender's own loader does it (tests/conftest.py does the same).

``start()`` must run before anything imports ``bpy``: it points ``BLENDER_USER_RESOURCES`` at a
temporary folder (removed at exit) and ``XDG_CACHE_HOME`` at a shader cache in the system's
temporary folder (kept between runs) unless the caller set them, so a pipeline run writes
nothing into the home folder, then symlinks the checkout as
``<user resources>/extensions/user_default/capsule_collision`` and enables it. In a process
where the extension is already enabled (pytest's ``addon`` fixture) it only returns it.
"""

from __future__ import annotations

import atexit
import importlib
import os
import pathlib
import shutil
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parents[1]
ADDON_ID = "capsule_collision"  # = blender_manifest.toml id
MODULE = f"bl_ext.user_default.{ADDON_ID}"
SHADER_CACHE = os.path.join(tempfile.gettempdir(), "capsule_collision_cache")


def _reraise(exc):
    raise exc


def start():
    """Import bpy and enable the extension; returns (bpy, the extension's module)."""
    if "bpy" not in sys.modules and "BLENDER_USER_RESOURCES" not in os.environ:
        user = tempfile.mkdtemp(prefix="capsule_collision_bpy_user_")
        atexit.register(shutil.rmtree, user, True)
        os.environ["BLENDER_USER_RESOURCES"] = user
    # Mesa's and Blender's shader caches: compiling Workbench's shaders on the CPU takes most
    # of a first render (about 9 of 11 s measured), so unless the caller chose a cache folder,
    # keep one in the system's temporary folder across runs (never in the home folder).
    os.environ.setdefault("XDG_CACHE_HOME", SHADER_CACHE)
    import bpy  # noqa: PLC0415, I001  (after the environment is set)
    import addon_utils  # noqa: PLC0415  (Blender's, importable once bpy is)

    if MODULE in sys.modules and addon_utils.check(MODULE)[1]:
        return bpy, sys.modules[MODULE]
    repo = os.path.join(bpy.utils.user_resource("EXTENSIONS"), "user_default")
    os.makedirs(repo, exist_ok=True)
    link = os.path.join(repo, ADDON_ID)
    if not os.path.lexists(link):
        os.symlink(ROOT, link)  # the checkout *is* the extension
    module = addon_utils.enable(MODULE, default_set=True, handle_error=_reraise)
    if module is None:
        raise RuntimeError(f"the extension {MODULE} did not load")
    return bpy, module


def extension_module(name: str):
    """The extension's submodule ``name`` (e.g. "addon.scene_data"), as Blender loaded it."""
    return importlib.import_module(f"{MODULE}.{name}")
