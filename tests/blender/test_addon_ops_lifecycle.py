"""Enable, disable, enable: nothing of the extension is left behind in between, and
everything works again afterwards."""

import importlib

import ops_scenes as S

HANDLER_LISTS = ("depsgraph_update_post", "depsgraph_update_pre", "load_post", "load_pre",
                 "save_pre", "save_post", "frame_change_post", "frame_change_pre",
                 "undo_post", "redo_post")


def _reraise(ex):
    raise ex


def leftovers(bpy, package):
    """Every trace of the extension in Blender's registries."""
    found = [n for n in dir(bpy.types) if n.startswith("CAPSULE_COLLISION_")]
    found += [f"Scene.{n}" for n in ("capsule_collision",) if hasattr(bpy.types.Scene, n)]
    found += [f"Object.{n}" for n in ("capsule_collision",) if hasattr(bpy.types.Object, n)]
    for name in HANDLER_LISTS:
        for fn in getattr(bpy.app.handlers, name):
            if getattr(fn, "__module__", "").startswith(package):
                found.append(f"handler {name}: {fn.__module__}.{fn.__name__}")
    for op in ("check_penetration", "add_capsule", "walkthrough", "stand_test"):
        try:
            getattr(bpy.ops.capsule_collision, op).get_rna_type()
            found.append(f"operator {op}")
        except KeyError:
            pass
    registration = importlib.import_module(package + ".addon.registration")
    if registration.registered_hooks:  # modules whose unregister() has not run
        found.append(f"hooks {registration.registered_hooks}")
    return found


def test_enable_disable_enable_leaves_nothing_behind(addon, bpy_module):
    import addon_utils

    bpy = bpy_module
    name = addon.__name__
    bpy.ops.wm.read_homefile(use_empty=True)
    S.floor_and_wall(bpy)
    S.capsule(bpy, "C", (1.8, 0.0, 0.0))
    bpy.ops.capsule_collision.check_penetration()  # handlers and caches in use
    addon_utils.disable(name, default_set=True, handle_error=_reraise)
    try:
        assert leftovers(bpy, name) == []
    finally:
        addon_utils.enable(name, default_set=True, handle_error=_reraise)
    assert hasattr(bpy.types.Scene, "capsule_collision")
    addon_utils.disable(name, default_set=True, handle_error=_reraise)
    try:
        assert leftovers(bpy, name) == []
    finally:
        addon_utils.enable(name, default_set=True, handle_error=_reraise)
    bpy.ops.wm.read_homefile(use_empty=True)
    S.floor_and_wall(bpy)
    S.capsule(bpy, "C", (1.8, 0.0, 0.0))
    assert bpy.ops.capsule_collision.check_penetration() == {"FINISHED"}
    handlers = [f.__module__ for f in bpy.app.handlers.depsgraph_update_post
                if f.__module__.startswith(name)]
    assert len(handlers) == len(set(handlers)), "a handler was registered twice"
