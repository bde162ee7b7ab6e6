"""Capsule Collision: a Blender extension for level collision authoring and validation.

The repository root is the extension. Blender calls register()/unregister(); both delegate
to ``addon/``. The host-independent collision math lives in ``core/``.
"""


def register():
    from .addon import registration

    registration.register()


def unregister():
    from .addon import registration

    registration.unregister()
