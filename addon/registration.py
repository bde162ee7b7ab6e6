"""register()/unregister() of the extension: one classes tuple, symmetric clean-up.

The classes of every module are registered in one pass, then the Scene and Object property
groups, then the modules with their own hooks (handlers, timers, draw handlers, gizmo groups:
``live``, ``gizmos``, ``overlay``). Everything is undone in reverse order.
"""

import bpy

from . import (
    gizmos,
    live,
    operators,
    operators_audit,
    operators_diff,
    operators_export,
    operators_proxy,
    operators_reach,
    operators_recheck,
    operators_select,
    operators_waive,
    operators_walk,
    overlay,
    panels,
    panels_authoring,
    panels_diff,
    properties,
)

# properties first: the other modules' classes point at its property groups
classes = tuple(c for m in (properties, operators, operators_select, operators_recheck,
                           operators_audit, operators_reach, operators_walk, operators_proxy,
                           operators_export, operators_diff, operators_waive, panels,
                           panels_authoring, panels_diff)
                for c in m.classes)
HOOK_MODULES = (live, gizmos, overlay)

# fake-bpy-module types register_classes_factory as returning None; it returns two functions.
_register_classes, _unregister_classes = bpy.utils.register_classes_factory(classes)  # type: ignore[func-returns-value,misc]

registered_hooks: list = []  # hook modules registered, unregistered in reverse


def all_classes():
    """Every bpy class the extension registers, in registration order."""
    return classes


def register():
    _register_classes()
    bpy.types.Scene.capsule_collision = bpy.props.PointerProperty(
        type=properties.CAPSULE_COLLISION_PG_settings
    )
    bpy.types.Object.capsule_collision = bpy.props.PointerProperty(
        type=properties.CAPSULE_COLLISION_PG_object
    )
    bpy.types.Scene.capsule_collision_authoring = bpy.props.PointerProperty(
        type=panels_authoring.CAPSULE_COLLISION_PG_authoring
    )
    for mod in HOOK_MODULES:
        mod.register()
        registered_hooks.append(mod)


def unregister():
    while registered_hooks:
        registered_hooks.pop().unregister()
    del bpy.types.Scene.capsule_collision_authoring
    del bpy.types.Object.capsule_collision
    del bpy.types.Scene.capsule_collision
    _unregister_classes()
