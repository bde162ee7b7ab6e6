"""register()/unregister() of the extension: one classes tuple, symmetric clean-up.

Modules with their own hooks (handlers, timers, draw handlers, gizmos) expose
``register()``/``unregister()`` and are listed in ``HOOK_MODULES``; a listed module that does
not exist yet in this checkout is skipped. Everything is undone in reverse order.
"""

import importlib

import bpy

from . import properties

# Optional modules of the Blender side with their own register()/unregister().
HOOK_MODULES = ("live", "gizmos", "overlay")


def _class_modules():
    # after properties: they use its classes
    from . import operators, operators_audit, operators_walk, panels  # noqa: PLC0415

    return (properties, operators, operators_audit, operators_walk, panels)


def _hook_modules():
    mods = []
    for name in HOOK_MODULES:
        try:
            mods.append(importlib.import_module(f".{name}", __package__))
        except ModuleNotFoundError as exc:
            if exc.name != f"{__package__}.{name}":
                raise  # a real import error inside the module
    return [m for m in mods if hasattr(m, "register") and hasattr(m, "unregister")]


def all_classes():
    """Every bpy class the extension registers, in registration order."""
    return tuple(c for m in _class_modules() for c in m.classes)


registered_hooks = []


def register():
    for cls in all_classes():
        bpy.utils.register_class(cls)
    bpy.types.Scene.capsule_collision = bpy.props.PointerProperty(
        type=properties.CAPSULE_COLLISION_PG_settings
    )
    bpy.types.Object.capsule_collision = bpy.props.PointerProperty(
        type=properties.CAPSULE_COLLISION_PG_object
    )
    for mod in _hook_modules():
        mod.register()
        registered_hooks.append(mod)


def unregister():
    while registered_hooks:
        registered_hooks.pop().unregister()
    del bpy.types.Object.capsule_collision
    del bpy.types.Scene.capsule_collision
    for cls in reversed(all_classes()):
        bpy.utils.unregister_class(cls)
