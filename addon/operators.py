"""Operators of Capsule Collision (``capsule_collision.*``)."""

classes = ()
