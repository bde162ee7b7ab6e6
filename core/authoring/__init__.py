"""Collision authoring: proxies fitted to render meshes (``primitives``: the tight oriented
box, sphere and capsule fits, convexity; ``meshes``: their triangles), stair ramps
(``ramps``) and engine naming (``naming``). Host-independent; the add-on makes Blender objects
of them and the CLI names and exports collision with them.
"""

from .deviation import Deviation, surface_deviation
from .meshes import box_mesh, capsule_mesh
from .naming import ENGINES, KINDS, as_engine, base_name, collision_name, concave_for
from .primitives import (
    OrientedBox,
    PrimitiveFit,
    fit_primitive,
    is_convex,
    oriented_box,
)
from .ramps import StairRamp, stair_ramps

__all__ = ["Deviation", "ENGINES", "KINDS", "OrientedBox", "PrimitiveFit", "StairRamp",
           "as_engine", "base_name", "box_mesh", "capsule_mesh", "collision_name",
           "concave_for", "fit_primitive", "is_convex", "oriented_box", "stair_ramps",
           "surface_deviation"]
