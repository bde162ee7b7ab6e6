"""Data model of Capsule Collision in Blender: scene settings, result rows, object roles.

Everything the extension computes is stored here or as mesh attributes / result objects, so
it persists in the .blend and a headless test can read it.

- ``scene.capsule_collision`` (CAPSULE_COLLISION_PG_settings): one property per numeric field
  of ``core.ControllerSettings`` with the SAME NAME; lengths, speeds and accelerations are
  stored in Blender units and shown in the scene's units; ``controller_settings(scene)``
  converts them to metres for ``core``. A value never set is the engine default in METRES
  shown in the scene's units (``default_in_scene_units``): a centimetre scene starts with a
  35 cm radius, not 0.35 cm; capsule objects' radius and height follow the same rule.
- ``obj.capsule_collision`` (CAPSULE_COLLISION_PG_object): the role of an object (capsule,
  path, trace, marker) and a capsule's size, expectation and live state.
- Result rows (CAPSULE_COLLISION_PG_result): one per (check, capsule or path, object); the
  faces are stored as base64 of little-endian int32 ORIGINAL face indices
  (``encode_faces``/``decode_faces``); each row has a severity (``SEVERITY_ITEMS``), the
  inputs it was computed from (``staleness``) and a box to frame.
"""

import base64
import dataclasses

import bpy
import numpy as np
from bpy.props import (
    BoolProperty,
    CollectionProperty,
    EnumProperty,
    FloatProperty,
    FloatVectorProperty,
    IntProperty,
    IntVectorProperty,
    PointerProperty,
    StringProperty,
)

from ..core import ControllerSettings, as_typed
from ..core.controller.presets import SLOPE_DISABLED_DEG
from . import scene_data

# Every ControllerSettings field that is a plain number, with the Blender unit it is shown in.
# "LENGTH", "VELOCITY" and "ACCELERATION" values scale with scene.unit_settings.scale_length
# (Blender units -> metres); "NONE" values (degrees, counts) do not.
SETTINGS_UNITS = {
    "radius": "LENGTH",
    "height": "LENGTH",
    "max_slope_deg": "NONE",
    "step_height": "LENGTH",
    "min_step_depth": "LENGTH",
    "skin_width": "LENGTH",
    "snap_distance": "LENGTH",
    "gravity": "ACCELERATION",
    "speed": "VELOCITY",
    "max_iterations": "NONE",
    "max_fall_speed": "VELOCITY",
    "jump_height": "LENGTH",
}
SCALED_UNITS = ("LENGTH", "VELOCITY", "ACCELERATION")

PRESET_ITEMS = (
    ("CUSTOM", "Custom", "Settings edited by hand"),
    ("UNITY", "Unity", "Unity CharacterController defaults (through core.presets)"),
    ("UNREAL", "Unreal", "Unreal CharacterMovementComponent defaults, converted from cm"),
    ("GODOT", "Godot", "Godot CharacterBody3D + CapsuleShape3D defaults (no step-up)"),
    ("PHYSX", "PhysX", "PhysX PxCapsuleControllerDesc defaults"),
    ("JOLT", "Jolt", "Jolt CharacterVirtual defaults (Jolt samples' capsule); verdicts "
     "predict Jolt at the limits"),
    ("RAPIER", "Rapier", "Rapier KinematicCharacterController defaults; verdicts predict "
     "Rapier at the limits"),
)

# ControllerSettings.model: which behaviour the verdicts model (core.controller.settings.MODELS)
MODEL_ITEMS = (
    ("EXACT", "Exact", "The limits are the numbers as set: step height is the highest riser, "
     "a corridor two radii wide passes"),
    ("JOLT", "Jolt", "Predict Jolt's CharacterVirtual at the limits (its padding, the rounded "
     "bottom riding over risers, edges)"),
    ("RAPIER", "Rapier", "Predict Rapier's character controller at the limits (its padding, "
     "autostep, edges)"),
)

SOURCE_ITEMS = (
    ("VISIBLE", "Visible Meshes",
     "Every visible mesh (never the extension's own capsules, paths and results)"),
    ("COLLECTION", "Collection", "The meshes of one collection (and its children)"),
    ("NAMING", "Naming Convention",
     "Engine collision names: UCX_/UBX_/UCP_/USP_ prefixes, -col/-colonly, _col/_collision"),
)

RESULT_KINDS = (
    ("PENETRATION", "Penetration", "Faces a capsule penetrates"),
    ("WALKABILITY", "Walkability", "Faces of one walkability class"),
    ("STAND", "Stand Test", "Walkable faces the capsule cannot stand on"),
    ("STAIRS", "Stairs", "Risers too high or treads too shallow"),
    ("HEADROOM", "Headroom", "Walkable faces with a ceiling lower than the capsule"),
    ("LEDGE", "Ledge", "Walkable faces with an open edge over an unsafe drop"),
    ("WALK", "Walk", "An event of a walk-through"),
    ("REACHABILITY", "Reachability", "Where the character can go from the spawns (summary)"),
    ("ISLAND", "Island", "Standable floor no spawn reaches"),
    ("TRAP", "Trap", "Floor a spawn reaches but cannot leave (a pit, a one-way drop)"),
    ("SPAWN", "Spawn", "A spawn inside a wall, on no floor, or placed above the floor it "
     "falls to"),
    ("COLLISION_DIFF", "Render vs Collision", "Where the collision differs from the render "
     "meshes for the character: holes, invisible walls, walls it walks through, floating or "
     "sunk feet, reach that differs"),
)

ROLE_ITEMS = (
    ("NONE", "None", "Ordinary object (collision geometry when it is a mesh)"),
    ("CAPSULE", "Capsule", "A character capsule: origin = foot, local Z = axis"),
    ("PATH", "Path", "A walk-through path (curve or mesh polyline)"),
    ("TRACE", "Trace", "A walked trace created by the extension"),
    ("MARKER", "Marker", "A walk event marker created by the extension"),
    ("CELLS", "Cells", "Reachability's cells created by the extension: cramped floor, and "
     "islands and traps a face's colour does not show"),
)

EXPECT_ITEMS = (
    ("ANY", "Any", "No expectation"),
    ("CLEAR", "Clear", "This capsule must not penetrate anything"),
    ("PENETRATING", "Penetrating", "This capsule is expected to penetrate (a negative test)"),
)

# core's walk event kinds (core.walkthrough.EVENT_KINDS plus fell_out_of_level)
WALK_EVENT_KINDS = ("blocked", "step_too_high", "slope_too_steep", "fell", "fell_out_of_level",
                    "ceiling_too_low", "stuck")
EXPECT_WALK_ITEMS = (
    ("ANY", "Any", "No expectation"),
    ("reached_goal", "Reached Goal", "The walk must reach the last point"),
) + tuple((k, k.replace("_", " ").title(), f"The walk is expected to report {k}")
          for k in WALK_EVENT_KINDS)

# Row severities: core.checks.severity's, lower-cased there, plus rows that are no finding.
SEVERITY_ITEMS = (
    ("ERROR", "Error", "An expectation did not hold", "CANCEL", 0),
    ("WARNING", "Warning", "Probably a level bug", "ERROR", 1),
    ("INFO", "Info", "Worth seeing, not worth failing", "INFO", 2),
    ("PASSED", "Passed", "Checked and as expected", "CHECKMARK", 3),
    ("NONE", "None", "Data, not a verdict (walkability classes)", "DOT", 4),
)
SEVERITY_ICONS = {i[0]: i[3] for i in SEVERITY_ITEMS}

# walkability classes in core code order (core.WALKABLE, STEEP, WALL, CEILING)
WALKABILITY_CLASSES = ("Walkable", "Steep", "Wall", "Ceiling")


def encode_faces(faces) -> str:
    """(K,) face indices -> base64 of little-endian int32 (the row's ``faces`` string)."""
    return base64.b64encode(np.asarray(faces, dtype="<i4").tobytes()).decode("ascii")


def decode_faces(text: str) -> np.ndarray:
    """Inverse of ``encode_faces``: (K,) int32."""
    if not text:
        return np.empty(0, np.int32)
    return np.frombuffer(base64.b64decode(text), dtype="<i4").astype(np.int32)


def _scene_of(struct):
    """The scene whose units a property of ``struct`` is shown in: its own scene, or the
    context's (an object's properties)."""
    owner = struct.id_data
    if isinstance(owner, bpy.types.Scene):
        return owner
    return getattr(bpy.context, "scene", None)


def default_in_scene_units(default_si: float, minimum: float):
    """``get_transform`` of a length, speed or acceleration property: while the designer has
    never set it, it reads ``default_si`` (metres, m/s, m/s²) in the scene's units (a
    centimetre scene's default radius is 35, not 0.35 = 3.5 mm); once set, it is the value
    typed, in Blender units, like every length in Blender."""

    def transform(self, stored, is_set):
        if is_set:
            return stored
        scene = _scene_of(self)
        scale = unit_scale(scene) if scene is not None else 1.0
        return max(default_si / scale, minimum)

    return transform


def _preset_to_custom(self, _context):
    """Editing a setting by hand leaves the preset: the panel then says Custom."""
    if self.preset != "CUSTOM" and not self.get("_applying_preset", False):
        self["preset"] = 0  # CUSTOM, without re-entering this callback


class CAPSULE_COLLISION_PG_result(bpy.types.PropertyGroup):
    """One result row: a check's verdict on one (capsule or path, object) pair."""

    kind: EnumProperty(name="Kind", items=RESULT_KINDS, default="PENETRATION")
    label: StringProperty(name="Label", description="What this row says, in one line")
    capsule: StringProperty(name="Capsule", description="Capsule or path object name")
    object: StringProperty(name="Object", description="Collision object the faces belong to")
    face_count: IntProperty(name="Faces", description="Number of faces in this row", min=0)
    value: FloatProperty(
        name="Value",
        description="Metres: deepest depth, rise, clearance or drop (0 when not applicable)",
    )
    push_out: FloatVectorProperty(
        name="Push Out", size=3, subtype="TRANSLATION", unit="LENGTH",
        description="Move the capsule by this vector to separate it from the object",
    )
    position: FloatVectorProperty(
        name="Position", size=3, subtype="TRANSLATION", unit="LENGTH",
        description="Where the row happened (walk events, audits), Blender units",
    )
    time: FloatProperty(name="Time", description="Seconds into the walk (walk rows)", min=0.0)
    faces: StringProperty(
        name="Faces", description="Base64 of little-endian int32 original face indices",
    )
    unmapped: IntProperty(
        name="Unmapped", min=0,
        description="Faces found on evaluated geometry (modifiers) that do not map back",
    )
    stamp: StringProperty(name="Stamp", description="Level geometry stamp of this result")
    inputs: StringProperty(
        name="Inputs", description="Digest of the row's own inputs when it was computed "
        "(capsule placement, path points, settings): a difference flags the row stale",
    )
    severity: EnumProperty(name="Severity", items=SEVERITY_ITEMS, default="NONE",
                           description="How much this row matters (core.checks.severity)")
    bounds: FloatVectorProperty(
        name="Bounds", size=6, subtype="NONE",
        description="World box of the row's faces or place, Blender units (min xyz, max xyz)",
    )
    has_bounds: BoolProperty(name="Has Bounds", default=False,
                             description="Whether Bounds says where to frame the row")
    instancer: StringProperty(
        name="Instancer", description="The object instancing the row's object (a collection "
        "or geometry-nodes instance), or empty",
    )
    event: StringProperty(name="Event", description="Walk event rows: the event's kind")
    rate: IntProperty(name="Frame Rate", default=0, min=0,
                      description="Walk rows: the simulation's steps per second (Hz)")
    # The finding a row stands for (core.checks.verdicts.Finding, findings.Listed): what
    # Export Report writes from the panel without running the checks again (results.py).
    check: StringProperty(name="Check", description="Finding kind (core.checks.severity): "
                          "capsule, penetration, walk, route, walk_event, stand, ...")
    finding: StringProperty(name="Finding", description="The finding's name: a capsule or "
                            "path, or a problem named by where it is")
    expected: StringProperty(name="Expected", description="The verdict expected")
    got: StringProperty(name="Got", description="The verdict found (the cause, in a word)")
    where: FloatVectorProperty(name="Where", size=3, subtype="NONE",
                               description="The finding's identity position, metres on core's "
                               "identity grid (findings.IDENTITY_GRID)")
    has_where: BoolProperty(name="Has Where", default=False)
    has_position: BoolProperty(name="Has Position", default=False,
                               description="Whether Position says where the finding is")
    has_value: BoolProperty(name="Has Value", default=False,
                            description="Whether Value is the finding's value (else none)")
    size: FloatProperty(name="Size", description="How big the problem is: m² or m (Size Unit)")
    size_unit: StringProperty(name="Size Unit", description='"m2", "m" or empty (no size)')
    count: IntProperty(name="Count", default=1, min=0,
                       description="How many problems the finding stands for (an info row "
                       "counting those out of reach)")
    cause: StringProperty(name="Cause", description="Islands and traps: the first cause as "
                          "report.json gives it, JSON (kind, value, limit, unit, point, "
                          "text; metres or degrees); empty: none")
    waived_by: StringProperty(name="Waived By", description="Who marked this finding as "
                              "intended (a waiver in the level's sidecar); empty: not waived")
    waived_reason: StringProperty(name="Waiver Reason", description="Why it is intended")
    spans: StringProperty(
        name="Spans", description="JSON: the row's faces on its other objects, "
        "[[object, instancer, base64 faces, unmapped], ...] (Object holds the most)",
    )


class CAPSULE_COLLISION_PG_settings(bpy.types.PropertyGroup):
    """Character capsule, controller limits and what the extension checks and draws."""

    radius: FloatProperty(
        # min 0, not a clamp to 0.1 mm: a radius typed as 0 is an error naming the radius
        # (core's "radius must be > 0"), never a tiny capsule or a skin-width message
        name="Radius", default=0.35, min=0.0, soft_min=0.0001, soft_max=5.0, unit="LENGTH",
        precision=3, update=_preset_to_custom,
        get_transform=default_in_scene_units(0.35, 0.0001),
        description="Capsule radius. Corridors narrower than twice this block the character",
    )
    height: FloatProperty(
        name="Height", default=1.8, min=0.0002, soft_max=10.0, unit="LENGTH", precision=3,
        update=_preset_to_custom,
        get_transform=default_in_scene_units(1.8, 0.0002),
        description="Total capsule height, both caps included (at least twice the radius). "
        "Ceilings lower than this above a floor block the walk",
    )
    max_slope_deg: FloatProperty(
        name="Max Slope", default=45.0, min=0.0, max=SLOPE_DISABLED_DEG, precision=1,
        update=_preset_to_custom,
        description="Steepest floor walkable, degrees from up. Steeper faces are classed "
        "Steep, are not climbed and make the character slide",
    )
    step_height: FloatProperty(
        name="Step Height", default=0.35, min=0.0, soft_max=2.0, unit="LENGTH", precision=3,
        update=_preset_to_custom,
        get_transform=default_in_scene_units(0.35, 0.0),
        description="Highest riser climbed without jumping; also the drop beyond which a "
        "landing counts as a fall. Higher risers are reported as steps too high",
    )
    min_step_depth: FloatProperty(
        name="Min Step Depth", default=0.15, min=0.0, soft_max=2.0, unit="LENGTH",
        precision=3, update=_preset_to_custom,
        get_transform=default_in_scene_units(0.15, 0.0),
        description="Minimum tread behind a riser; shallower treads refuse the step",
    )
    skin_width: FloatProperty(
        name="Skin Width", default=0.02, min=0.00001, soft_max=0.2, unit="LENGTH", precision=4,
        update=_preset_to_custom,
        get_transform=default_in_scene_units(0.02, 1e-05),
        description="Gap kept to surfaces after a hit (less than the radius). Larger values "
        "hide thin gaps and tolerate more penetration at the end of a move",
    )
    snap_distance: FloatProperty(
        name="Snap Distance", default=0.4, min=0.0, soft_max=2.0, unit="LENGTH", precision=3,
        update=_preset_to_custom,
        get_transform=default_in_scene_units(0.4, 0.0),
        description="Stick-to-floor reach walking down steps and slopes; keep it at least "
        "step height + 2 x skin width or the character leaves the floor on every step down",
    )
    gravity: FloatProperty(
        name="Gravity", default=9.81, min=0.0, soft_max=50.0, unit="ACCELERATION",
        update=_preset_to_custom,
        get_transform=default_in_scene_units(9.81, 0.0),
        description="Downward acceleration in the air and on steep ground; faster falls",
    )
    speed: FloatProperty(
        name="Speed", default=4.0, min=0.0001, soft_max=20.0, unit="VELOCITY",
        update=_preset_to_custom,
        get_transform=default_in_scene_units(4.0, 0.0001),
        description="Horizontal walk-through speed; faster walks take longer strides per frame",
    )
    max_iterations: IntProperty(
        name="Max Iterations", default=5, min=1, soft_max=16, update=_preset_to_custom,
        description="Slide iterations per move; too few stop the character early in corners",
    )
    max_fall_speed: FloatProperty(
        name="Max Fall Speed", default=55.0, min=0.0001, soft_max=200.0, unit="VELOCITY",
        update=_preset_to_custom,
        get_transform=default_in_scene_units(55.0, 0.0001),
        description="Terminal falling speed",
    )

    jump_height: FloatProperty(
        name="Jump Height", default=0.0, min=0.0, soft_max=5.0, unit="LENGTH", precision=3,
        update=_preset_to_custom,
        get_transform=default_in_scene_units(0.0, 0.0),
        description="Apex of the character's jump above its feet; 0: no jumps. Only "
        "Reachability uses it (jumps up onto ledges and across gaps)",
    )
    model: EnumProperty(
        name="Model", items=MODEL_ITEMS, default="EXACT", update=_preset_to_custom,
        description="Which behaviour every verdict models: the exact limits, or the Jolt or "
        "Rapier character at its limits (set by the Jolt and Rapier presets)",
    )

    preset: EnumProperty(
        name="Preset", items=PRESET_ITEMS, default="CUSTOM",
        description="Engine whose character defaults the settings follow (Apply Preset)",
    )
    collision_source: EnumProperty(
        name="Collision", items=SOURCE_ITEMS, default="VISIBLE",
        description="Which meshes are level collision",
    )
    collision_collection: PointerProperty(
        name="Collection", type=bpy.types.Collection,
        description="Collision collection (Collision = Collection)",
    )

    show_overlay: BoolProperty(name="Overlay", default=True,
                               description="Draw the extension's viewport overlay")
    show_capsules: BoolProperty(name="Capsules", default=True,
                                description="Draw capsules (red when penetrating)")
    show_penetration: BoolProperty(name="Penetration", default=True,
                                   description="Draw penetrated faces, contact points, the "
                                   "push-out arrow and the depth")
    show_walkability: BoolProperty(name="Walkability", default=True,
                                   description="Draw walkability colours")
    show_traces: BoolProperty(name="Traces", default=True, description="Draw walk traces")
    show_events: BoolProperty(name="Events", default=True,
                              description="Draw walk event markers, labelled by kind and value")
    show_stand: BoolProperty(name="Stand", default=True,
                             description="Draw faces the stand test found (cannot stand)")
    show_stairs: BoolProperty(name="Stairs", default=True,
                              description="Draw the stair audit's risers (too high, too shallow)")
    show_headroom: BoolProperty(name="Headroom", default=True,
                                description="Draw faces with headroom below the capsule height")
    show_ledges: BoolProperty(name="Ledges", default=True,
                              description="Draw walkable faces on a ledge over an unsafe drop")
    show_out_of_reach: BoolProperty(
        name="Out of Reach", default=False,
        description="Draw the audits' problems on floor no spawn reaches (listed as one info "
        "row per audit, not one by one)")
    show_reachability: BoolProperty(
        name="Reachability", default=True,
        description="Draw where the character can go: reachable floor, islands and traps "
        "coloured, cramped floor as squares where it is, and the spawns")
    show_collision_diff: BoolProperty(
        name="Render vs Collision", default=True,
        description="Draw where the collision differs from the render meshes (Render vs "
        "Collision), on both, coloured by kind")
    diff_tolerance: FloatProperty(
        name="Floor Tolerance", default=0.03, min=0.0, soft_max=0.5, unit="LENGTH",
        precision=3, description="Render vs Collision: how far the collision floor may lie "
        "above or below the render floor under a standing character before the feet float "
        "or sink")
    show_legend: BoolProperty(name="Legend", default=True,
                              description="Draw the overlay's legend in the viewport corner")
    live_check: BoolProperty(
        name="Live Check", default=True,
        description="Re-check a capsule whenever it moves, against the cached level",
    )

    results: CollectionProperty(type=CAPSULE_COLLISION_PG_result)
    results_index: IntProperty(name="Result", default=-1)
    show_all_results: BoolProperty(
        name="Show All", default=False,
        description="List every finding of each check; off: the worst few of each (Next and "
        "Previous still walk them all)",
    )

    walk_counts: IntVectorProperty(
        name="Walkability Faces", size=4, min=0,
        description="Faces per class: walkable, steep, wall, ceiling",
    )
    walk_areas: FloatVectorProperty(
        name="Walkability Areas", size=4, min=0.0,
        description="Area per class in square metres: walkable, steep, wall, ceiling",
    )
    frame_rate_report: StringProperty(
        name="Frame-Rate Report", description="JSON of the last 30/60/120 Hz comparison",
    )
    last_report: StringProperty(name="Last Report",
                                description="The last operator's message")


def _recheck_capsule(self, _context):
    """A capsule's size changed in the panel: tag its object so the live check (which listens
    to object updates) re-checks it, as a move or a gizmo drag does."""
    ob = self.id_data
    if isinstance(ob, bpy.types.Object):
        ob.update_tag()


class CAPSULE_COLLISION_PG_object(bpy.types.PropertyGroup):
    """Role of an object for Capsule Collision, and a capsule's size, expectation and state."""

    role: EnumProperty(name="Role", items=ROLE_ITEMS, default="NONE",
                       description="Objects with a role are never collision geometry")
    radius: FloatProperty(name="Radius", default=0.35, min=0.0, soft_min=0.0001,
                          soft_max=5.0, unit="LENGTH", precision=3,
                          description="Capsule radius (0 is an error naming it)",
                          update=_recheck_capsule,
                          get_transform=default_in_scene_units(0.35, 0.0001))
    height: FloatProperty(name="Height", default=1.8, min=0.0002, soft_max=10.0,
                          unit="LENGTH", precision=3,
                          description="Total capsule height from the foot (origin) up local Z",
                          update=_recheck_capsule,
                          get_transform=default_in_scene_units(1.8, 0.0002))
    expect: EnumProperty(name="Expect", items=EXPECT_ITEMS, default="ANY",
                         description="What this capsule's placement must give")
    spawn: BoolProperty(
        name="Spawn", default=False, update=_recheck_capsule,
        description="The character starts here: Reachability floods the level from this "
        "capsule's foot (the CLI too). A spawn is still checked for penetration like every "
        "capsule: a spawn inside a wall is a bug")
    penetrating_count: IntProperty(name="Penetrating", default=-1, min=-1,
                                   description="Penetrated triangles (-1: not checked)")
    inside_solid: StringProperty(
        name="Inside", default="",
        description="The closed solid this capsule sits wholly inside, touching no face "
        "(buried: penetrating though no triangle is); empty when it is in none")
    deepest_depth: FloatProperty(name="Deepest", default=0.0, unit="LENGTH",
                                 description="Deepest penetration")
    push_out: FloatVectorProperty(name="Push Out", size=3, subtype="TRANSLATION",
                                  unit="LENGTH", description="Move by this to separate")
    state_stamp: StringProperty(name="Stamp",
                                description="Level stamp the state was computed on")
    expect_walk: EnumProperty(name="Expect Walk", items=EXPECT_WALK_ITEMS, default="ANY",
                              description="What a walk along this path must report")


def controller_settings(scene) -> ControllerSettings:
    """``scene.capsule_collision`` as ``core.ControllerSettings`` in metres.

    Lengths, speeds and accelerations are multiplied by ``scene.unit_settings.scale_length``
    (metres per Blender unit). Raises ValueError (from core) for inconsistent values, e.g.
    height < 2 x radius or skin width >= radius.
    """
    s = scene.capsule_collision
    scale = unit_scale(scene)
    kw = {}
    for name, unit in SETTINGS_UNITS.items():
        value = as_typed(getattr(s, name))
        kw[name] = value * scale if unit in SCALED_UNITS else value
    return ControllerSettings(**kw, model=s.model.lower())


def write_controller_settings(scene, settings: ControllerSettings, preset="CUSTOM"):
    """Store ``settings`` (metres) on the scene in Blender units; sets ``preset``."""
    s = scene.capsule_collision
    scale = unit_scale(scene)
    s["_applying_preset"] = True
    try:
        for name, unit in SETTINGS_UNITS.items():
            value = getattr(settings, name)
            setattr(s, name, float(value) / scale if unit in SCALED_UNITS else value)
        s.model = settings.model.upper()
        s.preset = preset
    finally:
        del s["_applying_preset"]


def unit_scale(scene) -> float:
    """Metres per Blender unit, exactly as the level reader converts (``scene_data``)."""
    return scene_data.unit_scale_of(scene)


def settings_fields_missing():
    """Numeric ControllerSettings fields with no scene property (an empty list when in sync)."""
    numeric = [f.name for f in dataclasses.fields(ControllerSettings)
               if f.type in ("float", "int", float, int)]
    return [n for n in numeric if n not in SETTINGS_UNITS]


classes = (CAPSULE_COLLISION_PG_result, CAPSULE_COLLISION_PG_settings,
           CAPSULE_COLLISION_PG_object)
