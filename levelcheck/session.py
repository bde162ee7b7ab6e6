"""Blender for the command line and the tests: the pip ``bpy`` module, the user folders kept
out of the home folder, and the extension registered.

One home for both ways the extension is loaded in this project:

- ``start()`` (the CLI): registers the add-on from the package itself
  (``capsule_collision.register()``: the same classes Blender's extension loader registers),
  so the process has one import identity: ``capsule_collision.core`` is the core the CLI, the
  add-on's operators and the report use (no second copy under ``bl_ext.*``).
- ``enable_extension(root)`` (tests/conftest.py, the Blender benchmarks): the checkout loaded
  through Blender's real extension loader (a symlink in the user repository, then
  ``addon_utils.enable``), as a designer's Blender loads the installed zip.

``isolate_user_folders()`` must run before anything imports ``bpy``: it points
``BLENDER_USER_RESOURCES`` at a temporary folder (removed at exit) and ``XDG_CACHE_HOME``
(Mesa's and Blender's shader caches) at ``cache`` unless the caller set them, so nothing is
written into the home folder.
"""

from __future__ import annotations

import atexit
import os
import shutil
import sys
import tempfile

from .. import register as register_extension

ADDON_ID = "capsule_collision"  # = blender_manifest.toml id = the package's name
EXTENSION_MODULE = f"bl_ext.user_default.{ADDON_ID}"
# Compiling Workbench's shaders on the CPU takes most of a first render (about 9 of 11 s
# measured), so the CLI keeps one shader cache in the system's temporary folder across runs.
SHADER_CACHE = os.path.join(tempfile.gettempdir(), "capsule_collision_cache")


class SessionError(RuntimeError):
    """The extension could not be registered (e.g. another copy is already registered)."""


def isolate_user_folders(cache: str | None = None):
    """Set ``BLENDER_USER_RESOURCES`` (a temporary folder removed at exit) and
    ``XDG_CACHE_HOME`` (``cache``, default a folder inside the user resources) unless set."""
    if "BLENDER_USER_RESOURCES" not in os.environ:
        user = tempfile.mkdtemp(prefix="capsule_collision_bpy_user_")
        atexit.register(shutil.rmtree, user, True)
        os.environ["BLENDER_USER_RESOURCES"] = user
    os.environ.setdefault("XDG_CACHE_HOME", cache or os.path.join(
        os.environ["BLENDER_USER_RESOURCES"], "cache"))


def start():
    """Import bpy (user folders isolated, the shared shader cache) and register the add-on
    from the package. Returns bpy. Idempotent."""
    isolate_user_folders(SHADER_CACHE)
    import bpy  # noqa: PLC0415  (after the environment is set)

    if getattr(bpy.types, "CAPSULE_COLLISION_PG_settings", None) is None:
        register_extension()
    elif EXTENSION_MODULE in sys.modules:
        raise SessionError(f"the extension is already registered as {EXTENSION_MODULE}: "
                           "run levelcheck in its own process")
    return bpy


def _reraise(exc):
    raise exc


def enable_extension(root):
    """Load the checkout ``root`` through Blender's extension loader (symlinked as
    ``<user resources>/extensions/user_default/capsule_collision``) and enable it. Returns the
    extension's module (``bl_ext.user_default.capsule_collision``)."""
    isolate_user_folders()
    import bpy  # noqa: PLC0415, I001  (first: it puts Blender's addon_utils on the path)
    import addon_utils  # noqa: PLC0415

    repo = os.path.join(bpy.utils.user_resource("EXTENSIONS"), "user_default")
    os.makedirs(repo, exist_ok=True)
    link = os.path.join(repo, ADDON_ID)
    try:
        os.symlink(root, link)  # the checkout *is* the extension
    except FileExistsError:  # made earlier, or by another process sharing the folder
        if os.path.realpath(link) != os.path.realpath(root):
            raise SessionError(f"{link} is not the checkout {root}") from None
    module = addon_utils.enable(EXTENSION_MODULE, default_set=True, handle_error=_reraise)
    if module is None:
        raise SessionError(f"the extension {EXTENSION_MODULE} did not load")
    return module


def disable_extension():
    """Disable what ``enable_extension`` enabled."""
    import addon_utils  # noqa: PLC0415

    addon_utils.disable(EXTENSION_MODULE, default_set=True, handle_error=_reraise)
