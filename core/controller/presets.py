"""Engine presets: convert each engine's character parameters into ControllerSettings and back.

Units: ControllerSettings is metres / degrees / seconds, Z up. Engine dictionaries use the
engine's own field names and units:

- Unity ``CharacterController``: metres, degrees (slopeLimit), Y up. Defaults from serialized
  components: radius 0.5, height 2, slopeLimit 45, stepOffset 0.3, skinWidth 0.08.
- Unreal ``UCharacterMovementComponent`` + ``ACharacter`` capsule: **centimetres**, Z up;
  WalkableFloorAngle (deg) or WalkableFloorZ (its cosine, 0.71 -> 44.77 deg), MaxStepHeight 45,
  CapsuleRadius 34, CapsuleHalfHeight 88 (half the total height), MaxWalkSpeed 600 cm/s,
  GravityZ -980 cm/s^2. The floor is kept 1.9-2.4 cm away (MIN/MAX_FLOOR_DIST), step-down
  reach MaxStepHeight + 2 x MAX_FLOOR_DIST.
- Godot ``CharacterBody3D`` + ``CapsuleShape3D``: metres, **radians** (floor_max_angle), Y up;
  floor_max_angle 0.785398, floor_snap_length 0.1, safe_margin 0.001, max_slides 6, capsule
  radius 0.5, height 2 (total). Godot has no step-up: step_height 0 unless given.
- PhysX ``PxCapsuleControllerDesc``: metres, slopeLimit as a **cosine** (0 disables the limit),
  stepOffset 0.5, contactOffset 0.1, radius, height = distance between the sphere centres
  (total = height + 2 radius), upDirection Y.
- Jolt ``CharacterVirtualSettings`` + ``CapsuleShape``: metres, **radians** (mMaxSlopeAngle,
  default 50 deg), mWalkStairsStepUp (0, 0.4, 0), mStickToFloorStepDown (0, -0.5, 0),
  mCharacterPadding 0.02, mWalkStairsStepForwardTest 0.15, mMaxCollisionIterations 5,
  capsule half height of the cylinder 0.675 and radius 0.3 (Jolt's samples), Y up.
- Rapier ``KinematicCharacterController`` + capsule collider: metres (absolute lengths;
  Rapier's ``CharacterLength.Relative`` values must be multiplied out first), **radians**
  (max_slope_climb_angle), ``offset`` (the gap kept to surfaces), ``autostep`` max_height /
  min_width, ``snap_to_ground``, capsule ``half_height`` of the cylinder and ``radius``.
  Defaults are the engine peers' set-up (``../shared/peers/engines``): offset 0.02, autostep
  0.35 / 0.15, snap 0.4, 45 deg, capsule 0.55 + 0.35 (Rapier's own defaults are relative:
  offset 1 % of the height, snap 20 %, autostep off).

The Jolt and Rapier presets set ``model`` to that engine: the controller then reproduces the
engine's verdicts at the limits (risers climbed above the step height as its rounded bottom
rides over them, its padding kept from both walls of a corridor and from a ceiling, how it
stands on and lands on edges; ``ControllerSettings.model``). The other presets, and any
settings typed by hand, keep the ``"exact"`` model unless ``model=`` is given.

Y-up engines: our ``up`` stays +Z (Blender); engine vectors along their up axis map to ours.
``to_*`` returns every field the engine has for what ControllerSettings models; fields an
engine lacks are lost on the way (e.g. Godot has no step height).
"""

from __future__ import annotations

import math
from collections.abc import Callable

from .settings import ControllerSettings

CM = 0.01  # metres per Unreal unit
UNREAL_MAX_FLOOR_DIST = 2.4  # cm (CharacterMovementComponent.cpp MAX_FLOOR_DIST)
UNREAL_MIN_FLOOR_DIST = 1.9  # cm (MIN_FLOOR_DIST)
SLOPE_DISABLED_DEG = 89.9  # degrees: an engine's "no slope limit" becomes nearly vertical
JOLT_MAX_SLOPE_RAD = 0.8726646259971648  # radians: Jolt's default mMaxSlopeAngle, 50 degrees

ENGINES = ("unity", "unreal", "godot", "physx", "jolt", "rapier")


def _clip_slope(deg: float) -> float:
    return min(float(deg), SLOPE_DISABLED_DEG)


def _y_up_length(v, name: str) -> float:
    """Length of an engine vector along its +Y up axis, e.g. mWalkStairsStepUp (0, 0.4, 0)."""
    try:
        x, y, z = (float(c) for c in v)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} must be a 3-vector") from exc
    if abs(x) > 1e-12 or abs(z) > 1e-12:
        raise ValueError(f"{name} must point along the up axis (0, y, 0), got {tuple(v)}")
    return y


# ---------------------------------------------------------------- Unity
def from_unity(slopeLimit=45.0, stepOffset=0.3, skinWidth=0.08, radius=0.5, height=2.0,
               minMoveDistance=0.001, **overrides) -> ControllerSettings:
    """Unity CharacterController fields (metres, degrees) -> ControllerSettings.

    skin_width = skinWidth; snap_distance = stepOffset + 2 x skinWidth (Unity has no snap; the
    controller's own stick-to-floor keeps it grounded down steps). minMoveDistance is accepted
    and ignored (moves shorter than it are still made).
    """
    del minMoveDistance
    kw = dict(radius=radius, height=height, max_slope_deg=_clip_slope(slopeLimit),
              step_height=stepOffset, skin_width=skinWidth,
              snap_distance=float(stepOffset) + 2.0 * float(skinWidth))
    kw.update(overrides)
    return ControllerSettings(**kw)


def to_unity(s: ControllerSettings) -> dict:
    return {"slopeLimit": s.max_slope_deg, "stepOffset": s.step_height,
            "skinWidth": s.skin_width, "radius": s.radius, "height": s.height}


# ---------------------------------------------------------------- Unreal
def from_unreal(WalkableFloorAngle=None, WalkableFloorZ=None, MaxStepHeight=45.0,
                CapsuleRadius=34.0, CapsuleHalfHeight=88.0, MaxWalkSpeed=600.0,
                GravityZ=-980.0, **overrides) -> ControllerSettings:
    """Unreal fields (centimetres, degrees) -> ControllerSettings (metres).

    Give WalkableFloorAngle (degrees) or WalkableFloorZ (cosine); default WalkableFloorZ 0.71.
    skin_width = MAX_FLOOR_DIST (2.4 cm); snap_distance = MaxStepHeight + 2 x MAX_FLOOR_DIST.
    """
    if WalkableFloorAngle is not None and WalkableFloorZ is not None:
        if abs(math.cos(math.radians(float(WalkableFloorAngle))) - float(WalkableFloorZ)) > 1e-9:
            raise ValueError("WalkableFloorAngle and WalkableFloorZ disagree; give one of them")
        WalkableFloorZ = None
    if WalkableFloorAngle is None:
        z = 0.71 if WalkableFloorZ is None else float(WalkableFloorZ)
        if not -1.0 <= z <= 1.0:
            raise ValueError(f"WalkableFloorZ must be in [-1, 1], got {z}")
        WalkableFloorAngle = math.degrees(math.acos(z))
    kw = dict(radius=CapsuleRadius * CM, height=2.0 * CapsuleHalfHeight * CM,
              max_slope_deg=_clip_slope(WalkableFloorAngle), step_height=MaxStepHeight * CM,
              skin_width=UNREAL_MAX_FLOOR_DIST * CM,
              snap_distance=(MaxStepHeight + 2.0 * UNREAL_MAX_FLOOR_DIST) * CM,
              speed=MaxWalkSpeed * CM, gravity=-GravityZ * CM)
    kw.update(overrides)
    return ControllerSettings(**kw)


def to_unreal(s: ControllerSettings) -> dict:
    return {"WalkableFloorAngle": s.max_slope_deg,
            "WalkableFloorZ": math.cos(math.radians(s.max_slope_deg)),
            "MaxStepHeight": s.step_height / CM, "CapsuleRadius": s.radius / CM,
            "CapsuleHalfHeight": 0.5 * s.height / CM, "MaxWalkSpeed": s.speed / CM,
            "GravityZ": -s.gravity / CM}


# ---------------------------------------------------------------- Godot
def from_godot(floor_max_angle=0.785398, floor_snap_length=0.1, safe_margin=0.001,
               radius=0.5, height=2.0, max_slides=6, step_height=0.0,
               **overrides) -> ControllerSettings:
    """Godot CharacterBody3D (radians) + CapsuleShape3D (metres, total height) -> settings.

    Godot does not step up; ``step_height`` (metres, default 0) emulates a stair add-on.
    """
    kw = dict(radius=radius, height=height, max_slope_deg=_clip_slope(
        math.degrees(float(floor_max_angle))), step_height=step_height,
        skin_width=safe_margin, snap_distance=floor_snap_length, max_iterations=max_slides)
    kw.update(overrides)
    return ControllerSettings(**kw)


def to_godot(s: ControllerSettings) -> dict:
    return {"floor_max_angle": math.radians(s.max_slope_deg),
            "floor_snap_length": s.snap_distance, "safe_margin": s.skin_width,
            "radius": s.radius, "height": s.height, "max_slides": s.max_iterations}


# ---------------------------------------------------------------- PhysX
def from_physx(slopeLimit=0.707, stepOffset=0.5, contactOffset=0.1, radius=0.5, height=1.0,
               **overrides) -> ControllerSettings:
    """PxCapsuleControllerDesc -> settings. slopeLimit is a cosine (0: no limit); height is
    the distance between the sphere centres (total height = height + 2 radius).

    PhysX's down pass undoes stepOffset: snap_distance = stepOffset + 2 x contactOffset.
    """
    c = float(slopeLimit)
    if not 0.0 <= c <= 1.0:
        raise ValueError(f"slopeLimit must be a cosine in [0, 1], got {c}")
    deg = SLOPE_DISABLED_DEG if c == 0.0 else math.degrees(math.acos(c))
    kw = dict(radius=radius, height=float(height) + 2.0 * float(radius),
              max_slope_deg=_clip_slope(deg), step_height=stepOffset,
              skin_width=contactOffset,
              snap_distance=float(stepOffset) + 2.0 * float(contactOffset))
    kw.update(overrides)
    return ControllerSettings(**kw)


def to_physx(s: ControllerSettings) -> dict:
    return {"slopeLimit": math.cos(math.radians(s.max_slope_deg)), "stepOffset": s.step_height,
            "contactOffset": s.skin_width, "radius": s.radius,
            "height": s.height - 2.0 * s.radius}


# ---------------------------------------------------------------- Jolt
def from_jolt(mMaxSlopeAngle=JOLT_MAX_SLOPE_RAD, mWalkStairsStepUp=(0.0, 0.4, 0.0),
              mStickToFloorStepDown=(0.0, -0.5, 0.0), mCharacterPadding=0.02,
              mWalkStairsStepForwardTest=0.15, mMaxCollisionIterations=5,
              halfHeightOfCylinder=0.675, radius=0.3, **overrides) -> ControllerSettings:
    """Jolt CharacterVirtualSettings + ExtendedUpdateSettings + CapsuleShape -> settings.

    Radians for the slope; vectors along Jolt's +Y up. Total height = 2 x (half height + r).
    ``model="jolt"``: the controller predicts Jolt's verdicts (``climb_height`` is
    mWalkStairsStepUp + radius; the padding is kept from every surface).
    """
    kw = dict(model="jolt", radius=radius,
              height=2.0 * (float(halfHeightOfCylinder) + float(radius)),
              max_slope_deg=_clip_slope(math.degrees(float(mMaxSlopeAngle))),
              step_height=_y_up_length(mWalkStairsStepUp, "mWalkStairsStepUp"),
              snap_distance=-_y_up_length(mStickToFloorStepDown, "mStickToFloorStepDown"),
              skin_width=mCharacterPadding, min_step_depth=mWalkStairsStepForwardTest,
              max_iterations=mMaxCollisionIterations)
    kw.update(overrides)
    return ControllerSettings(**kw)


def to_jolt(s: ControllerSettings) -> dict:
    return {"mMaxSlopeAngle": math.radians(s.max_slope_deg),
            "mWalkStairsStepUp": (0.0, s.step_height, 0.0),
            "mStickToFloorStepDown": (0.0, -s.snap_distance, 0.0),
            "mCharacterPadding": s.skin_width,
            "mWalkStairsStepForwardTest": s.min_step_depth,
            "mMaxCollisionIterations": s.max_iterations,
            "halfHeightOfCylinder": 0.5 * s.height - s.radius, "radius": s.radius}


# ---------------------------------------------------------------- Rapier
def from_rapier(radius=0.35, half_height=0.55, offset=0.02,
                max_slope_climb_angle=math.pi / 4, min_slope_slide_angle=None,
                autostep_max_height=0.35, autostep_min_width=0.15, snap_to_ground=0.4,
                **overrides) -> ControllerSettings:
    """Rapier KinematicCharacterController + capsule collider (metres, radians) -> settings.

    Total height = 2 x (half_height + radius); skin_width = offset; step_height =
    autostep_max_height (0: autostep off); min_step_depth = autostep_min_width;
    snap_distance = snap_to_ground (0: off). ControllerSettings has one slope limit, the climb
    angle; ``min_slope_slide_angle`` is accepted and must equal it when given.
    ``model="rapier"``: the controller predicts Rapier's verdicts (``climb_height`` from
    Rapier's autostep room test, ``ControllerSettings.climb_height``; the offset is kept from
    every surface).
    """
    climb = float(max_slope_climb_angle)
    if min_slope_slide_angle is not None and abs(float(min_slope_slide_angle) - climb) > 1e-9:
        raise ValueError("min_slope_slide_angle must equal max_slope_climb_angle "
                         "(ControllerSettings has one slope limit)")
    kw = dict(model="rapier", radius=radius, height=2.0 * (float(half_height) + float(radius)),
              max_slope_deg=_clip_slope(math.degrees(climb)),
              step_height=autostep_max_height, min_step_depth=autostep_min_width,
              snap_distance=snap_to_ground, skin_width=offset)
    kw.update(overrides)
    return ControllerSettings(**kw)


def to_rapier(s: ControllerSettings) -> dict:
    return {"radius": s.radius, "half_height": 0.5 * s.height - s.radius,
            "offset": s.skin_width, "max_slope_climb_angle": math.radians(s.max_slope_deg),
            "autostep_max_height": s.step_height, "autostep_min_width": s.min_step_depth,
            "snap_to_ground": s.snap_distance}


_FROM: dict[str, Callable[..., ControllerSettings]] = {
    "unity": from_unity, "unreal": from_unreal, "godot": from_godot, "physx": from_physx,
    "jolt": from_jolt, "rapier": from_rapier}
_TO = {"unity": to_unity, "unreal": to_unreal, "godot": to_godot, "physx": to_physx,
       "jolt": to_jolt, "rapier": to_rapier}


def preset(engine: str, **fields) -> ControllerSettings:
    """ControllerSettings from ``engine`` (one of ``ENGINES``) and
    that engine's field names (engine defaults for the rest)."""
    try:
        fn = _FROM[engine.lower()]
    except (KeyError, AttributeError) as exc:
        raise ValueError(f"unknown engine {engine!r}; expected one of {ENGINES}") from exc
    return fn(**fields)


def export(settings: ControllerSettings, engine: str) -> dict:
    """``settings`` as ``engine``'s field names and units (see the module docstring)."""
    try:
        fn = _TO[engine.lower()]
    except (KeyError, AttributeError) as exc:
        raise ValueError(f"unknown engine {engine!r}; expected one of {ENGINES}") from exc
    return fn(settings)
