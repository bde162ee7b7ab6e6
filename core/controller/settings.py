"""Character settings and ground states: what the controller, the walk-through, the audits,
the presets and the extension share (none of them needs the controller engine for these).

Frame and units: metres, degrees, seconds; ``ControllerSettings.up`` is up (default +Z).
The character's position is its *foot*: the lowest point of the upright capsule, whose
segment ``upright_segment(feet, settings)`` builds (the one place that does).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, replace
from enum import StrEnum

import numpy as np

from ..constants import (
    ENGINE_CONTACT_GAP,
    FLOAT32_DIGITS,
    GROUND_PROBE_SKINS,
    JOLT_SUPPORT_MIN_COS,
    RAPIER_SHORT_STRIDE,
    RAPIER_SUPPORT_MIN_COS,
    SLOPE_LIMIT_TOL_RAD,
    SUPPORT_MIN_COS,
)
from ..geometry.validate import as_finite, as_point


class GroundState(StrEnum):
    """Where a character stands after a move (Jolt ``EGroundState``).

    A ``StrEnum``: each member equals its string value (``GroundState.IN_AIR == "in_air"``)
    and serialises to it in JSON. Arrays of many characters hold the integer ``code``
    (int8 ``ON_GROUND`` = 0, ``ON_STEEP_GROUND`` = 1, ``IN_AIR`` = 2).
    """

    ON_GROUND = "on_ground"
    """standing on a walkable face (or a funnel of steep faces that averages walkable)"""
    ON_STEEP_GROUND = "on_steep_ground"
    """supported only by faces steeper than ``max_slope_deg``: slides down"""
    IN_AIR = "in_air"
    """no support within the ground probe"""

    @property
    def code(self) -> int:
        """The int8 code stored in per-frame arrays (``WalkReport.ground_state``)."""
        return GROUND_STATES.index(self.value)

    @classmethod
    def from_code(cls, code) -> GroundState:
        return _BY_CODE[int(code)]


# int8 codes of the ground states in per-character arrays, and their names by code
ON_GROUND, ON_STEEP_GROUND, IN_AIR = 0, 1, 2
GROUND_STATES = ("on_ground", "on_steep_ground", "in_air")
_BY_CODE = (GroundState.ON_GROUND, GroundState.ON_STEEP_GROUND, GroundState.IN_AIR)

# The controller models (``ControllerSettings.model``): which behaviour a verdict comes from.
MODELS = ("exact", "jolt", "rapier")


@dataclass(frozen=True)
class ControllerSettings:
    """Character and controller parameters. Metres, degrees, seconds. Frozen; use ``replace``.

    Defaults follow the engines (Unity/Unreal/Jolt: radius ~0.35, height 1.8, slope 45,
    step 0.35). Each field says what changing it does to the verdicts.
    """

    radius: float = 0.35
    """metres, capsule radius. Corridors narrower than 2 x radius block; treads and gaps are
    judged against it (the capsule stands on an edge while its axis is within radius of it)."""
    height: float = 1.8
    """metres, total capsule height including both caps (>= 2 x radius). Ceilings lower than
    this above a walkable floor block (``ceiling_too_low``)."""
    max_slope_deg: float = 45.0
    """degrees from up; faces at most this steep are walkable floor. Steeper faces are not
    climbed (``slope_too_steep``) and standing on one slides down."""
    step_height: float = 0.35
    """metres, highest riser climbed without jumping (Unity stepOffset, Unreal MaxStepHeight).
    Also the drop below the last floor beyond which a landing counts as ``fell``."""
    min_step_depth: float = 0.15
    """metres, minimum tread: the floor ``min_step_depth`` past a riser must be walkable and at
    most ``step_height`` above the current floor, else the step is refused (Jolt's forward
    test 0.15 m; Rapier min_width). Larger values refuse steep, shallow-tread stairs."""
    skin_width: float = 0.02
    """metres, the gap kept to surfaces after a hit (Jolt padding 0.02, Unreal 1.9-2.4 cm). The
    character floats up to 2 x skin_width above the floor; the floor counts as touched within
    that. Also the penetration tolerated at the end of a move. Larger values hide thin gaps."""
    snap_distance: float = 0.4
    """metres, stick-to-floor reach when walking down steps and slopes (Jolt StickToFloor,
    Godot floor_snap_length). Keep >= step_height + 2 x skin_width or the character is briefly
    in the air on every full-height step down; a snap of more than step_height fires ``fell``."""
    gravity: float = 9.81
    """metres / second^2, downward acceleration while in the air or on steep ground."""
    speed: float = 4.0
    """metres / second, walk-through steering speed (horizontal)."""
    max_iterations: int = 5
    """slide iterations (sweeps) per move; each hit uses one (Jolt 5, Godot 6, Quake 4). Too few
    stops the character early in tight corners; the count used is reported."""
    up: tuple = (0.0, 0.0, 1.0)
    """unit up vector (normalised on construction)."""
    max_fall_speed: float = 55.0
    """metres / second, terminal falling speed (Bullet's fall speed 55)."""
    jump_height: float = 0.0
    """metres, apex of a standing jump above the take-off floor (take-off speed
    sqrt(2 x gravity x jump_height)); 0: the character does not jump. Only reachability
    (``core.reachability``) jumps: ledges up to about this high and gaps the ballistic arc at
    ``speed`` clears become reachable."""
    model: str = "exact"
    """which controller the verdicts model (``MODELS``). ``"exact"``: the limits are the
    numbers as given: ``step_height`` is the highest riser climbed, a corridor 2 x radius wide
    and a ceiling ``height`` high are passed, the floor is kept ``skin_width`` away.
    ``"jolt"`` (Jolt CharacterVirtual with ExtendedUpdate) and ``"rapier"`` (Rapier
    KinematicCharacterController): what that engine's character does with these numbers: the
    padding ``skin_width`` is kept from every surface (corridors need 2 x (radius +
    skin_width), ceilings height + 2 x skin_width), risers above ``step_height`` are climbed
    as that engine's rounded bottom rides over them (``climb_height``), and the character
    stands on and lands on edges as that engine does (docs/how-it-works.md, "Engine models")."""

    def __post_init__(self):
        r = as_finite(self.radius, "radius")
        h = as_finite(self.height, "height")
        if r <= 0.0:
            raise ValueError(f"radius must be > 0, got {r}")
        if h < 2.0 * r:
            raise ValueError(f"height must be >= 2 * radius = {2.0 * r}, got {h}")
        slope = as_finite(self.max_slope_deg, "max_slope_deg")
        if not 0.0 <= slope < 90.0:
            raise ValueError(f"max_slope_deg must be in [0, 90), got {slope}")
        step = as_finite(self.step_height, "step_height")
        if not 0.0 <= step < h:
            raise ValueError(f"step_height must be in [0, height), got {step}")
        depth = as_finite(self.min_step_depth, "min_step_depth")
        if depth < 0.0:
            raise ValueError(f"min_step_depth must be >= 0, got {depth}")
        skin = as_finite(self.skin_width, "skin_width")
        if not 0.0 < skin < r:
            raise ValueError(f"skin_width must be in (0, radius), got {skin}")
        snap = as_finite(self.snap_distance, "snap_distance")
        if snap < 0.0:
            raise ValueError(f"snap_distance must be >= 0, got {snap}")
        g = as_finite(self.gravity, "gravity")
        if g < 0.0:
            raise ValueError(f"gravity must be >= 0, got {g}")
        speed = as_finite(self.speed, "speed")
        if speed <= 0.0:
            raise ValueError(f"speed must be > 0, got {speed}")
        fall = as_finite(self.max_fall_speed, "max_fall_speed")
        if fall <= 0.0:
            raise ValueError(f"max_fall_speed must be > 0, got {fall}")
        jump = as_finite(self.jump_height, "jump_height")
        if jump < 0.0:
            raise ValueError(f"jump_height must be >= 0, got {jump}")
        if self.model not in MODELS:
            raise ValueError(f"model must be one of {MODELS}, got {self.model!r}")
        it = self.max_iterations
        if isinstance(it, bool) or not isinstance(it, (int, np.integer)) or it < 1:
            raise ValueError(f"max_iterations must be an integer >= 1, got {it!r}")
        up = as_point(self.up, "up")
        n = float(np.sqrt(up @ up))
        if n == 0.0:
            raise ValueError("up must be a non-zero vector")
        for name, val in (("radius", r), ("height", h), ("max_slope_deg", slope),
                          ("step_height", step), ("min_step_depth", depth),
                          ("skin_width", skin), ("snap_distance", snap), ("gravity", g),
                          ("speed", speed), ("max_fall_speed", fall), ("jump_height", jump)):
            object.__setattr__(self, name, val)
        object.__setattr__(self, "max_iterations", int(it))
        object.__setattr__(self, "up", tuple(float(x) for x in up / n))

    @property
    def up_vector(self) -> np.ndarray:
        """(3,) float64 unit up."""
        return np.array(self.up)

    @property
    def cos_max_slope(self) -> float:
        """cos of the slope limit, widened by SLOPE_LIMIT_TOL_RAD so that a face exactly at the
        limit is walkable here as in ``classify_triangles`` (a 45 degree ramp built with
        tan/atan has a normal 1e-16 steeper than cos 45)."""
        return math.cos(math.radians(self.max_slope_deg) + SLOPE_LIMIT_TOL_RAD)

    @property
    def exact(self) -> bool:
        """The limits are the numbers as given (``model == "exact"``)."""
        return self.model == "exact"

    @property
    def shape_radius(self) -> float:
        """metres, the radius the controller collides with: ``radius``, or for an engine
        model ``radius + skin_width`` (the engine keeps its padding from every surface)."""
        return self.radius if self.exact else self.radius + self.skin_width

    @property
    def contact_gap(self) -> float:
        """metres the controller stops short of a surface it hits: ``skin_width``, or for an
        engine model ENGINE_CONTACT_GAP (the padding is inside ``shape_radius``)."""
        return self.skin_width if self.exact else ENGINE_CONTACT_GAP

    @property
    def ground_probe(self) -> float:
        """metres: floor within this gap below the capsule counts as touched."""
        return GROUND_PROBE_SKINS * self.contact_gap

    @property
    def support_min_cos(self) -> float:
        """cosine: a contact supports when its normal's up component exceeds this (the
        lower cap within ~75 degrees of straight down; for an engine model about anywhere
        below the bottom sphere's centre, Jolt's supporting volume and Rapier's grounded
        test; core.constants JOLT_SUPPORT_MIN_COS, RAPIER_SUPPORT_MIN_COS)."""
        if self.exact:
            return SUPPORT_MIN_COS
        return JOLT_SUPPORT_MIN_COS if self.model == "jolt" else RAPIER_SUPPORT_MIN_COS

    @property
    def climb_height(self) -> float:
        """metres, the highest riser climbed. ``"exact"``: ``step_height``. ``"jolt"``:
        ``step_height + radius``: lifted by step_height, the character stands on the riser's
        edge while it is below its bottom sphere's centre and steps again (measured: 0.68 m
        climbed, 0.70 m refused at 60 and 120 Hz with step 0.35, radius 0.35; 0.64 / 0.66 m
        at 30 Hz). ``"rapier"``: Rapier's autostep lifts the capsule by step_height +
        offset (it floats offset above the floor) and needs ``w = min_step_depth + offset`` of
        room ahead: a riser whose edge the lifted capsule (radius + offset) would touch moving
        w forward is refused, i.e. ``step_height + 2 offset + radius - sqrt((radius +
        offset)^2 - max(radius + offset - w, 0)^2)`` (0.4287 m for the engines README's
        character; measured: 0.425 climbed, 0.43 refused at 30 and 60 Hz, 0.405 / 0.41 at
        120 Hz; radius 0.5: 0.50 / 0.51, offset 0.05: 0.45 / 0.46, step 0.25: 0.32 / 0.33,
        all 60 Hz). Zero when ``step_height`` is zero (no stepping)."""
        if self.exact or self.step_height <= 0.0:
            return self.step_height
        if self.model == "jolt":
            return self.step_height + self.radius
        r, s = self.radius, self.skin_width
        ahead = max(r + s - (self.min_step_depth + s), 0.0)
        return self.step_height + 2.0 * s + r - math.sqrt((r + s) ** 2 - ahead ** 2)

    @property
    def air_climb_height(self) -> float:
        """metres above its foot, the highest edge a character in the air steps onto (the
        ``"rapier"`` model only: Rapier's autostep runs whether grounded or not). Its room
        test, ``climb_height`` less the ``skin_width`` a grounded foot floats above its
        floor: 0.4087 m for the engines README's character (measured, gaps at 60 and 120
        Hz: Rapier steps onto a far edge met 0.400 m above its foot and falls past one met
        0.403-0.405 m above it, issue 26)."""
        return max(self.climb_height - self.skin_width, 0.0)

    def stride_climb(self, stride) -> np.ndarray:
        """(K,) metres: the highest riser climbed by characters whose frame moves them
        ``stride`` (K,) metres horizontally. ``climb_height`` except for ``"rapier"`` at a
        stride of ``RAPIER_SHORT_STRIDE`` or less (4 m/s at 120 Hz), where it is
        ``step_height + 2 skin_width`` (0.39 m for the engines README's character): the
        lifted capsule's bottom clears that riser, while a taller one leaves it on the
        edge at a wall-steep normal, where Rapier's walk stalls on most risers (measured
        with rapier3d 0.36.1 over 20 phases and places at 120 Hz: single risers 0.38 m
        climbed 20/20, 0.40 m 9/20, 0.42 m 6/20, 0.43 m 0/20; docs/benchmarks.md, issue
        26)."""
        stride = np.asarray(stride, float)
        full = np.full(stride.shape, self.climb_height)
        if self.model != "rapier" or self.step_height <= 0.0:
            return full
        short = min(self.step_height + 2.0 * self.skin_width, self.climb_height)
        return np.where(stride <= RAPIER_SHORT_STRIDE, short, full)

    @property
    def creep_probe_length(self) -> float:
        """metres, how far past a riser's edge Rapier's slope check reaches during the creep
        up the edge (``creep_stalls``): the lifted capsule's radius plus its room ahead,
        ``(radius + skin_width) + (min_step_depth + skin_width)`` (0.54 m for the engines
        README's character). The Rapier model's horizontal ray for the next riser is this
        long; a riser's face found nearer than this less ``(radius + skin_width) x
        sin(max_slope_deg)`` stalls the creep."""
        return self.radius + self.skin_width + self.min_step_depth + self.skin_width

    def creep_stalls(self, riser, run, stride) -> np.ndarray:
        """(K,) bool: risers (K,) metres whose next riser's face lies ``run`` (K,) metres
        past them along the walk (inf: none), which a ``"rapier"`` character whose frame moves
        it ``stride`` (K,) metres (at most ``RAPIER_SHORT_STRIDE``) does not get up. At such
        a stride Rapier's autostep lets the capsule down on the riser's edge and it creeps up
        the edge, one autostep a frame, until the contact is at ``max_slope_deg``; each
        autostep first casts the lifted capsule (radius + offset, ``R``) down ``w =
        min_step_depth + offset`` ahead and refuses when that cast meets a face steeper than
        the slope limit first. With the next riser's face less than ``R + w - R sin(slope)``
        ahead of the edge (0.278 m for the engines README's character: 25 cm treads walked
        straight, not at 30 deg) the cast reaches it during the creep, and meets its nosing
        before the edge the capsule rests on when the riser is above ``sqrt(R^2 - (R -
        run)^2)`` (0.35 m on 25 cm treads): the walk stalls on the edge (measured, issue
        26, 120 Hz: flights of 0.36 and 0.38 m on 25 cm treads blocked, 0.30-0.34 m and 30
        cm treads climbed; rapier3d over 20 phases: 0.34 m climbed 13/20, 0.36 m 6/20, 0.38 m
        7/20). All False for the other models and at longer strides, where the creep's
        autosteps skip that stretch of the edge."""
        riser, run, stride = np.broadcast_arrays(np.asarray(riser, float),
                                                 np.asarray(run, float),
                                                 np.asarray(stride, float))
        if self.model != "rapier" or self.step_height <= 0.0:
            return np.zeros(riser.shape, bool)
        big = self.radius + self.skin_width
        reach = self.creep_probe_length - big * math.sin(math.radians(self.max_slope_deg))
        near = np.minimum(run, big)
        nosing = np.sqrt(np.maximum(big * big - (big - near) ** 2, 0.0))
        return (stride <= RAPIER_SHORT_STRIDE) & (run < reach) & (riser > nosing)

    @property
    def pushes_into_floor(self) -> bool:
        """Whether a frame that starts on walkable ground asks for one frame of gravity
        (``-gravity * dt`` of vertical speed) instead of none. True for ``"rapier"``, as a
        Rapier game loop drives its controller (the engines' runner): a character walking
        off an edge then falls ``gravity * dt^2`` on its first frame in the air and ``k``
        times that on its ``k``-th, one frame ahead of a character that starts falling from
        rest (measured: the same take-off and 2.5 cm lower at a gap's far wall at 60 Hz,
        issue 26)."""
        return self.model == "rapier"

    @property
    def rises_through_offset(self) -> bool:
        """Whether a character set down inside its padding (its foot less than
        ``skin_width`` above the floor) stays there and rises by RAPIER_NORMAL_NUDGE a frame
        while it walks on, meeting a floor's edge ahead early and riding up over it (losing
        a few mm of its walk: core.walk.edges.rapier_edge_ride). True for ``"rapier"``, as
        Rapier's slide does (its normal nudge); the other models float their padding above
        the floor from the first frame."""
        return self.model == "rapier"

    @property
    def slides_on_steep_ground(self) -> bool:
        """Whether a character on ground steeper than ``max_slope_deg`` slides down it,
        gaining speed (frictionless: g sin^2 vertically). True for ``"exact"`` and
        ``"jolt"``; False for ``"rapier"``: Rapier's controller is grounded on any upward
        normal and, walked as the engines' runner walks it (its falling speed restarts
        while grounded), stays where it is on a steep slope (measured: the ``lips`` lanes of
        tools/bench_engines.py, 50-70 deg slopes; docs/how-it-works.md, "Engine models")."""
        return self.model != "rapier"

    @property
    def segment_offsets(self) -> tuple:
        """(lower, upper) (3,) float64: the capsule segment's end points relative to the foot,
        ``radius * up`` and ``(height - radius) * up`` (see ``upright_segment``)."""
        u = self.up_vector
        return u * self.radius, u * (self.height - self.radius)

    def replace(self, **changes) -> ControllerSettings:
        return replace(self, **changes)

    def to_dict(self) -> dict:
        d = asdict(self)
        d["up"] = list(self.up)
        return d

    @classmethod
    def from_dict(cls, d: dict) -> ControllerSettings:
        d = dict(d)
        if "up" in d:
            d["up"] = tuple(d["up"])
        return cls(**d)


def as_typed(value):
    """A number as a designer typed it into a float32 store (Blender's FloatProperty, its unit
    scale): the shortest decimal at float32 precision, ``FLOAT32_DIGITS`` significant digits
    (0.35 stored reads 0.3499999940395355 and comes back as 0.35). Non-floats pass unchanged.
    One rule for the panel's settings, the scene's unit scale and the CLI's settings."""
    if isinstance(value, float):
        return float(f"{value:.{FLOAT32_DIGITS}g}")
    return value


def upright_segment(feet, settings: ControllerSettings):
    """Segment end points (a, b) of the upright capsules standing on ``feet``.

    feet : (3,) or (N, 3) float64 foot points (lowest points of the capsules), metres.
    Returns a, b of the same shape: ``a = foot + radius * up`` (centre of the lower cap),
    ``b = foot + (height - radius) * up`` (centre of the upper cap). The capsule is every
    point within ``settings.radius`` of segment a-b.
    """
    lower, upper = settings.segment_offsets
    f = np.asarray(feet, float)
    return f + lower, f + upper
