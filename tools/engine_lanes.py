"""The lanes of ``tools/bench_engines.py``: small levels, one straight walk each, that put a
character at one limit of a controller (a riser, a ramp, a corridor, a ceiling, a gap) or
through an everyday situation (stairs down, a slope ending in a lip, walking along a wall).

Every lane is its own level: (vertices (V, 3) float64 metres, triangles (M, 3) int, counter-
clockwise seen from the front, closed solids where a solid is meant), a start foot point on
the floor, a goal foot point on the floor it is meant to reach, and the walk's duration in
seconds. The character walks along +x from x = 0 (or, on a flight approached at an angle,
diagonally across it); Z is up. ``LIMIT_KINDS`` are the lanes of the agreement targets (issue
20), ``FLIGHT_KINDS`` those of issue 26 (flights of tall risers, gaps about where the engines
stop crossing); the rest are everyday lanes shown beside them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scenes import box, grid, merge

LIMIT_KINDS = ("riser", "ramp", "corridor", "ceiling", "gap")
OTHER_KINDS = ("stairs", "stairs_down", "lip", "lips", "wall")
FLIGHT_KINDS = ("flight", "wide_gap")  # issue 26: flights of tall risers, gaps near the switch
KINDS = LIMIT_KINDS + OTHER_KINDS + FLIGHT_KINDS
SPEED = 4.0  # metres / second, the lanes' walking speed (the engines README's)
SLACK = 2.0  # seconds, walk time beyond 3 x the straight distance / SPEED (the library's)


@dataclass(frozen=True)
class Lane:
    """One walk on its own level. value: the lane's parameter in ``unit``."""

    kind: str
    value: float
    unit: str
    vertices: np.ndarray
    triangles: np.ndarray
    start: tuple
    goal: tuple
    note: str = ""  # what else the lane varies (its name says it)

    @property
    def name(self) -> str:
        return f"{self.kind} {self.value:g}{self.unit}{', ' + self.note if self.note else ''}"

    @property
    def duration(self) -> float:
        """Seconds: the library's default walk time for the straight path."""
        d = np.subtract(self.goal, self.start)
        return 3.0 * float(np.hypot(d[0], d[1])) / SPEED + SLACK


# ---------------------------------------------------------------- geometry


def prism(profile, y0, y1):
    """Closed solid extruded along y from y0 to y1 of a convex ``profile`` [(x, z), ...]
    listed counter-clockwise seen from -y (x right, z up)."""
    p = np.asarray(profile, float)
    k = len(p)
    v = np.concatenate([np.column_stack([p[:, 0], np.full(k, y0), p[:, 1]]),
                        np.column_stack([p[:, 0], np.full(k, y1), p[:, 1]])])
    t = [[0, i, i + 1] for i in range(1, k - 1)]  # the y0 cap faces -y
    t += [[k, k + i + 1, k + i] for i in range(1, k - 1)]  # the y1 cap faces +y
    for i in range(k):
        j = (i + 1) % k
        t += [[i, k + j, j], [i, k + i, k + j]]
    return v, np.array(t)


# ---------------------------------------------------------------- limit lanes
WIDTH = 4.0  # metres across a lane (y from -2 to 2)
RADIUS, PADDING = 0.35, 0.02  # metres: the engines README's character (radius, padding/offset)
X0 = 2.0  # metres: where each lane's feature begins


def riser(h):
    """Floor, then one solid step ``h`` m high and 6 m deep; the goal on top of it."""
    v, t = merge([grid(-3.0, X0, -WIDTH / 2, WIDTH / 2),
                  box((X0, -WIDTH / 2, -1.0), (X0 + 6.0, WIDTH / 2, h))])
    return Lane("riser", h, " m", v, t, (0.0, 0.0, 0.0), (X0 + 3.0, 0.0, h))


def ramp(deg, height=1.5):
    """Floor, a solid ramp at ``deg`` degrees up to ``height`` m, a 4 m flat top (the goal)."""
    run = height / math.tan(math.radians(deg))
    x1 = X0 + run
    v, t = merge([grid(-3.0, X0, -WIDTH / 2, WIDTH / 2),
                  prism([(X0, 0.0), (x1 + 4.0, 0.0), (x1 + 4.0, height), (x1, height)],
                        -WIDTH / 2, WIDTH / 2)])
    return Lane("ramp", deg, " deg", v, t, (0.0, 0.0, 0.0), (x1 + 2.0, 0.0, height))


def corridor(w, length=4.0):
    """Floor and two 3 m walls ``w`` m apart for ``length`` m; the goal beyond them."""
    half = w / 2
    v, t = merge([grid(-3.0, X0 + length + 4.0, -3.0, 3.0),
                  box((X0, half, 0.0), (X0 + length, half + 0.4, 3.0)),
                  box((X0, -half - 0.4, 0.0), (X0 + length, -half, 3.0))])
    return Lane("corridor", w, " m", v, t, (0.0, 0.0, 0.0), (X0 + length + 2.0, 0.0, 0.0))


def ceiling(c, length=3.0):
    """Floor under a 0.2 m slab whose underside is ``c`` m up, ``length`` m deep; the goal
    beyond it."""
    v, t = merge([grid(-3.0, X0 + length + 4.0, -3.0, 3.0),
                  box((X0, -3.0, c), (X0 + length, 3.0, c + 0.2))])
    return Lane("ceiling", c, " m", v, t, (0.0, 0.0, 0.0), (X0 + length + 2.0, 0.0, 0.0))


def gap(g, depth=3.0):
    """Two solid blocks with a ``g`` m trench between them, ``depth`` m deep with a floor
    (a character that falls in lands and walks into the far block's wall)."""
    v, t = merge([box((-3.0, -WIDTH / 2, -depth), (X0, WIDTH / 2, 0.0)),
                  box((X0 + g, -WIDTH / 2, -depth), (X0 + g + 6.0, WIDTH / 2, 0.0)),
                  grid(X0 - 0.5, X0 + g + 0.5, -WIDTH / 2, WIDTH / 2, z=-depth)])
    return Lane("gap", g, " m", v, t, (0.0, 0.0, 0.0), (X0 + g + 2.0, 0.0, 0.0))


# ---------------------------------------------------------------- everyday lanes
def stairs(rise, tread=0.3, n=5):
    """A flight of ``n`` solid steps of ``rise`` m on ``tread`` m; the goal on the landing."""
    parts = [grid(-3.0, X0, -WIDTH / 2, WIDTH / 2)]
    xe = X0 + n * tread + 3.0
    for k in range(n):
        parts.append(box((X0 + k * tread, -WIDTH / 2, -1.0), (xe, WIDTH / 2, (k + 1) * rise)))
    v, t = merge(parts)
    return Lane("stairs", rise, " m", v, t, (0.0, 0.0, 0.0), (xe - 1.5, 0.0, n * rise))


def stairs_down(rise, tread=0.3, n=5):
    """The flight of ``stairs`` walked down: from the landing to the floor below."""
    up = stairs(rise, tread, n)
    xe = X0 + n * tread + 3.0
    start = (xe - 1.0, 0.0, n * rise)
    return Lane("stairs_down", rise, " m", up.vertices, up.triangles, start, (-1.0, 0.0, 0.0))


def lip(deg, lip_depth=0.1, height=2.0):
    """A steep slope of ``deg`` degrees rising ``height`` m, ending in a flat lip
    ``lip_depth`` m deep at its top, then a 1 m high wall; the goal beyond the wall on a
    floor at the lip's height (so a character can reach it only by standing on the lip)."""
    run = height / math.tan(math.radians(deg))
    x1 = X0 + run
    v, t = merge([grid(-3.0, X0, -WIDTH / 2, WIDTH / 2),
                  prism([(X0, 0.0), (x1 + lip_depth, 0.0), (x1 + lip_depth, height),
                         (x1, height)], -WIDTH / 2, WIDTH / 2),
                  box((x1 + lip_depth, -WIDTH / 2, -1.0), (x1 + lip_depth + 4.0, WIDTH / 2,
                                                           height + 1.0))])
    return Lane("lip", deg, " deg", v, t, (0.0, 0.0, 0.0),
                (x1 + lip_depth + 2.0, 0.0, height + 1.0))


def lips(deg, lip_height=0.0, lip_depth=0.0, height=3.0, drop=20.0, start_at=0.4,
         hidden_floor=True):
    """Issue 20's lip: a steep slope of ``deg`` degrees, ``height`` m high, whose lower edge
    is a lip above a ``drop`` m fall (a floor 20 m below, running 20 m back along -x): with
    ``lip_depth`` 0 the slope's own edge, else a flat ledge ``lip_depth`` m deep at the
    slope's foot, raised by a curb ``lip_height`` m high along its whole depth. The
    character starts on the slope (``start_at`` of its height up), its lower sphere resting
    on it a padding off it, and walks up it towards a goal on the platform at its top,
    which it cannot climb: it slides down onto the lip and stands on it, slides off it and
    falls, or stays on the slope, as each controller does. The slope stands on a block
    whose top face, hidden under it, ends on the slope's lower edge (walkable: Jolt stands
    on that edge); ``hidden_floor`` False (a bare edge only) makes the slope's own solid
    reach down to the drop instead, nothing walkable at its edge. (Until issue 26 the foot
    started 5 cm above the slope, the capsule sunk 0.09-0.21 m into it, which each walker
    resolved its own way: Rapier along the normal at 50 deg, not at all at 60 deg, lifted
    0.22 m at 70 deg.)"""
    run = height / math.tan(math.radians(deg))
    x1 = X0 + run
    x_lip = X0 - lip_depth
    top = box((x1, -WIDTH / 2, -drop), (x1 + 6.0, WIDTH / 2, height))
    below = grid(x_lip - 20.0, x_lip, -WIDTH / 2, WIDTH / 2, z=-drop)
    if hidden_floor or lip_depth > 0.0:
        parts = [top, prism([(X0, 0.0), (x1, 0.0), (x1, height)], -WIDTH / 2, WIDTH / 2),
                 box((x_lip, -WIDTH / 2, -drop), (x1, WIDTH / 2, 0.0)), below]
    else:
        parts = [top, prism([(X0, -drop), (x1, -drop), (x1, height), (X0, 0.0)],
                            -WIDTH / 2, WIDTH / 2), below]
    if lip_height > 0.0:
        parts.append(box((x_lip, -WIDTH / 2, 0.0), (X0, WIDTH / 2, lip_height)))
    v, t = merge(parts)
    xs = X0 + start_at * run
    note = (("bare edge" if hidden_floor else "bare edge, nothing under it")
            if lip_depth <= 0.0 else
            f"{lip_depth * 100:g} cm ledge" + (f", {lip_height * 100:g} cm curb"
                                                if lip_height > 0.0 else ""))
    # the foot above the slope where the lower sphere rests a padding off it (not sunk in it)
    rest = (RADIUS + PADDING) / math.cos(math.radians(deg)) - RADIUS
    return Lane("lips", deg, " deg", v, t, (xs, 0.0, start_at * height + rest),
                (x1 + 3.0, 0.0, height), note)


def along_wall(deg, length=8.0):
    """Walking into a 3 m wall at ``deg`` degrees off parallel (it slides along the wall):
    the wall's face at y = 0.5, the goal 8 m on, 0.1 m from where the character can stand."""
    a = math.radians(deg)
    gy = 0.5 - RADIUS + 0.1  # the wall's face, less the radius, plus 0.1: within reach
    start_y = gy - length * math.tan(a)
    # the floor reaches 1 m past the start (the 30 deg lane starts 4.4 m from the wall)
    v, t = merge([grid(-3.0, length + 3.0, min(-3.0, start_y - 1.0), 3.0),
                  box((-3.0, 0.5, 0.0), (length + 3.0, 0.9, 3.0))])
    return Lane("wall", deg, " deg", v, t, (0.0, start_y, 0.0), (length, gy, 0.0))


def _frange(lo, hi, step):
    n = int(round((hi - lo) / step))
    return [round(lo + k * step, 6) for k in range(n + 1)]


def limit_lanes() -> list:
    """The 60 limit lanes of the agreement targets: risers 0.33-0.47 m in 1 cm steps, ramps
    44.5-45.5 deg in 0.125 deg steps, corridors 0.69-0.76 m and ceilings 1.79-1.87 m in 1 cm
    steps, gaps 0.6-1.5 m in 5 cm steps."""
    return ([riser(h) for h in _frange(0.33, 0.47, 0.01)]
            + [ramp(d) for d in _frange(44.5, 45.5, 0.125)]
            + [corridor(w) for w in _frange(0.69, 0.76, 0.01)]
            + [ceiling(c) for c in _frange(1.79, 1.87, 0.01)]
            + [gap(g) for g in _frange(0.6, 1.5, 0.05)])


LIPS = ((0.0, 0.0), (0.0, 0.02), (0.05, 0.05), (0.1, 0.05))  # (curb height, ledge depth) m


def lips_lanes() -> list:
    """Issue 20's lips: 50, 60 and 70 deg slopes above a 20 m drop, each with a bare lower
    edge, a 2 cm ledge, and a 5 cm ledge with a 5 or 10 cm curb."""
    return [lips(d, h, w) for d in (50.0, 60.0, 70.0) for h, w in LIPS]


def other_lanes() -> list:
    """Everyday lanes: stairs up and down, slopes ending in a lip (walked up from below, and
    issue 20's lips, slid down from the slope), walking along a wall."""
    return ([stairs(r) for r in (0.15, 0.25, 0.3, 0.35, 0.4)]
            + [stairs_down(r) for r in (0.2, 0.3, 0.35, 0.4)]
            + [lip(d) for d in (50.0, 60.0, 70.0)]
            + lips_lanes()
            + [along_wall(d) for d in (5.0, 15.0, 30.0)])


# ---------------------------------------------------------------- issue 26: flights, wide gaps
FLIGHT_WIDTH = 8.0  # metres across a flight (room for a 30 deg approach)


def flight(rise, tread=0.3, n=5, approach=0.0):
    """A flight of ``n`` solid steps of ``rise`` m on ``tread`` m, 8 m wide, between a floor
    and a 3 m landing (the goal 1.5 m onto it), walked straight up (``approach`` 0) or at
    ``approach`` degrees off straight (the path crosses the flight diagonally, centred on
    y = 0)."""
    parts = [grid(-3.0, X0, -FLIGHT_WIDTH / 2, FLIGHT_WIDTH / 2)]
    xe = X0 + n * tread + 3.0
    for k in range(n):
        parts.append(box((X0 + k * tread, -FLIGHT_WIDTH / 2, -1.0),
                         (xe, FLIGHT_WIDTH / 2, (k + 1) * rise)))
    v, t = merge(parts)
    xg = xe - 1.5
    half_y = 0.5 * xg * math.tan(math.radians(approach))
    note = f"{n} x {tread * 100:g} cm" + (f", {approach:g} deg" if approach else "")
    return Lane("flight", rise, " m", v, t, (0.0, -half_y, 0.0), (xg, half_y, n * rise), note)


def wide_gap(g):
    """``gap`` about where the engines stop crossing at walking speed (kind ``wide_gap``)."""
    lane = gap(g)
    return Lane("wide_gap", lane.value, lane.unit, lane.vertices, lane.triangles, lane.start,
                lane.goal)


FLIGHT_RISES = _frange(0.30, 0.50, 0.02)  # metres: about Jolt's and Rapier's single-riser limits
FLIGHT_SHAPES = ((3, 0.25), (6, 0.30), (5, 0.35), (4, 0.40))  # (risers, tread m)
FLIGHT_APPROACHES = (0.0, 30.0)  # degrees off straight up the flight


def flight_lanes() -> list:
    """Issue 26's flights: risers 0.30-0.50 m (2 cm), each as 3 risers on 25 cm treads, 6 on
    30 cm, 5 on 35 cm and 4 on 40 cm, approached straight and at 30 deg (88 lanes)."""
    return [flight(r, tread, n, a) for a in FLIGHT_APPROACHES for n, tread in FLIGHT_SHAPES
            for r in FLIGHT_RISES]


def wide_gap_lanes() -> list:
    """Issue 26's gaps: 1.2-1.5 m in 2 cm steps (16 lanes)."""
    return [wide_gap(g) for g in _frange(1.2, 1.5, 0.02)]


def issue26_lanes() -> list:
    return flight_lanes() + wide_gap_lanes()
