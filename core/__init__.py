"""Capsule Collision core: host-independent collision math (Python + numpy, no Blender).

Units are metres, Z is up. See DESIGN.md for the conventions every function follows.
"""

from .shapes import Capsule, Contact, Hit

__all__ = ["Capsule", "Contact", "Hit"]
