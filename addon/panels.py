"""The "Capsule Collision" tab of the 3D View sidebar."""

classes = ()
