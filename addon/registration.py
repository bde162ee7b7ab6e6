"""register()/unregister() of the extension: one classes tuple, symmetric clean-up."""

import bpy

from . import properties

classes = properties.classes

_register_classes, _unregister_classes = bpy.utils.register_classes_factory(classes)


def register():
    _register_classes()
    bpy.types.Scene.capsule_collision = bpy.props.PointerProperty(
        type=properties.CAPSULE_COLLISION_PG_settings
    )


def unregister():
    del bpy.types.Scene.capsule_collision
    _unregister_classes()
