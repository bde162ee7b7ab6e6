"""register()/unregister() of the extension: one classes tuple, symmetric clean-up."""

import bpy

from . import properties

classes = properties.classes

# fake-bpy-module types register_classes_factory as returning None; it returns two functions.
_register_classes, _unregister_classes = bpy.utils.register_classes_factory(classes)  # type: ignore[func-returns-value,misc]


def register():
    _register_classes()
    bpy.types.Scene.capsule_collision = bpy.props.PointerProperty(
        type=properties.CAPSULE_COLLISION_PG_settings
    )


def unregister():
    del bpy.types.Scene.capsule_collision
    _unregister_classes()
