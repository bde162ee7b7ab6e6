"""Capsule Collision core: host-independent collision math (Python + numpy, no Blender).

Units are metres, Z is up. The conventions every function follows are in docs/how-it-works.md
(Conventions) and docs/decisions.md.
"""

from . import authoring
from .authoring import OrientedBox, StairRamp, fit_primitive, oriented_box, stair_ramps
from .checks import report, verdicts
from .checks.audits import (
    LEDGE_MAX_DROP,
    headroom_audit,
    ledge_audit,
    stair_audit,
    stand_test,
    walkable_faces,
)
from .checks.collision_diff import CollisionDiff, DiffProblem, collision_diff
from .checks.push_out import PushOut, push_out
from .checks.reachability import Reachability, Region, reachability
from .checks.sanity import SanityWarning, level_warnings
from .checks.walkability import CEILING, STEEP, WALKABLE, WALL, classify_triangles, face_slopes
from .controller import presets
from .controller.controller import CharacterController, MoveResult
from .controller.settings import ControllerSettings, GroundState, as_typed
from .geometry import exact
from .geometry.closest import (
    closest_point_segment,
    closest_point_triangle,
    closest_points_segment_segment,
    closest_points_segment_triangle,
)
from .geometry.contact import capsule_capsule, capsule_triangle, sphere_triangle
from .geometry.shapes import Capsule, Contact, Hit
from .geometry.sweep import sweep_capsule_triangle
from .mesh.contacts import ContactBatch
from .mesh.hoods import Hood
from .mesh.patched import PatchedMesh, replace_triangles
from .mesh.sweeps import SweepBatch
from .mesh.triangle_mesh import TriangleMesh
from .walk.report import EVENTS, EventKind, event_label
from .walk.walkthrough import (
    FRAME_RATES,
    FrameRateReport,
    WalkEvent,
    WalkReport,
    compare_frame_rates,
    walkthrough,
    walkthrough_many,
)

__all__ = [
    "authoring",
    "OrientedBox",
    "StairRamp",
    "fit_primitive",
    "oriented_box",
    "stair_ramps",
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
    "PatchedMesh",
    "replace_triangles",
    "classify_triangles",
    "face_slopes",
    "WALKABLE",
    "STEEP",
    "WALL",
    "CEILING",
    "ControllerSettings",
    "GroundState",
    "as_typed",
    "CharacterController",
    "MoveResult",
    "walkthrough",
    "walkthrough_many",
    "compare_frame_rates",
    "WalkReport",
    "WalkEvent",
    "FrameRateReport",
    "EVENTS",
    "EventKind",
    "event_label",
    "FRAME_RATES",
    "presets",
    "report",
    "verdicts",
    "stand_test",
    "stair_audit",
    "headroom_audit",
    "ledge_audit",
    "LEDGE_MAX_DROP",
    "walkable_faces",
    "reachability",
    "collision_diff",
    "CollisionDiff",
    "DiffProblem",
    "Reachability",
    "Region",
    "level_warnings",
    "push_out",
    "PushOut",
    "SanityWarning",
]
