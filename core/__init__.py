"""Capsule Collision core: host-independent collision math (Python + numpy, no Blender).

Units are metres, Z is up. The conventions every function follows are in README.md (Decisions).
"""

from . import exact, presets, report, verdicts
from .audits import headroom_audit, ledge_audit, stair_audit, stand_test, walkable_faces
from .closest import (
    closest_point_segment,
    closest_point_triangle,
    closest_points_segment_segment,
    closest_points_segment_triangle,
)
from .contact import capsule_capsule, capsule_triangle, sphere_triangle
from .controller import CharacterController, MoveResult
from .mesh import TriangleMesh
from .reachability import Reachability, Region, reachability
from .sanity import SanityWarning, level_warnings
from .settings import ControllerSettings, GroundState
from .shapes import Capsule, Contact, ContactBatch, Hit, Hood, SweepBatch
from .sweep import sweep_capsule_triangle
from .walkability import CEILING, STEEP, WALKABLE, WALL, classify_triangles, face_slopes
from .walkthrough import (
    FrameRateReport,
    WalkEvent,
    WalkReport,
    compare_frame_rates,
    walkthrough,
    walkthrough_many,
)

__all__ = [
    "Capsule",
    "Contact",
    "Hit",
    "closest_point_segment",
    "closest_points_segment_segment",
    "closest_point_triangle",
    "closest_points_segment_triangle",
    "sphere_triangle",
    "capsule_capsule",
    "capsule_triangle",
    "sweep_capsule_triangle",
    "exact",
    "TriangleMesh",
    "ContactBatch",
    "SweepBatch",
    "Hood",
    "classify_triangles",
    "face_slopes",
    "WALKABLE",
    "STEEP",
    "WALL",
    "CEILING",
    "ControllerSettings",
    "GroundState",
    "CharacterController",
    "MoveResult",
    "walkthrough",
    "walkthrough_many",
    "compare_frame_rates",
    "WalkReport",
    "WalkEvent",
    "FrameRateReport",
    "presets",
    "report",
    "verdicts",
    "stand_test",
    "stair_audit",
    "headroom_audit",
    "ledge_audit",
    "walkable_faces",
    "reachability",
    "Reachability",
    "Region",
    "level_warnings",
    "SanityWarning",
]
