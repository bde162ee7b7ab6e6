"""Scenes for the standable-map and reachability tests, built in numpy (metres, Z up, closed
solids with outward winding, floors of 0.5 m cells as a level's mesh has).

- ``slot_scene``: a floor with two 3 m walls 0.5 m apart: a 4 m long slot whose floor (a
  face of its own) opens onto the main floor at both ends.
- ``stacked_scene``: closed boxes stacked on a floor, the top of each coinciding with the
  bottom of the next (as Quake brushes and kit pieces are); ``order`` permutes the faces.
- ``pillars_scene``: a row of 0.5 m square pillars with 0.8 m strips between them, and a
  second row with 0.6 m strips.
- ``slab_scene``: a floor under two slabs, one 1.7 m up (lower than the 1.8 m character),
  one 1.9 m up.
- ``steps_scene``: two platforms beside each other, 0.34 m and 0.36 m high (either side of
  the 0.35 m step height).
- ``gap_scene``: two decks 1 m above a pit floor, separated by a gap.
- ``pit_scene``: a floor with a 2 m square pit 1.5 m deep (no way out), a 1 m platform with
  a ramp up, and an edge off the platform back to the floor.
- ``room_scene``: one ground quad with a closed room walled off on it (its floor the same
  face as the yard outside).
"""

from __future__ import annotations

import numpy as np
from capsule_collision.core.mesh.triangle_mesh import TriangleMesh
from scenes import box, grid, merge


def ramp(x0, x1, y0, y1, z1):
    """Closed wedge rising along +x from the floor at x0 to height z1 at x1."""
    v = [[x0, y0, 0], [x1, y0, 0], [x1, y1, 0], [x0, y1, 0], [x1, y0, z1], [x1, y1, z1]]
    t = [[0, 2, 1], [0, 3, 2], [0, 4, 5], [0, 5, 3], [1, 2, 5], [1, 5, 4], [0, 1, 4],
         [3, 5, 2]]
    return np.array(v, float), np.array(t)


def slot_scene() -> TriangleMesh:
    """Main floor x, y in [0, 10] (0.5 m cells) with a 0.5 m gap at y in [4.75, 5.25] for
    x in [3, 7] filled by the slot's own floor face; two 3 m walls (0.3 m thick) along it."""
    parts = [grid(0.0, 10.0, 0.0, 4.75), grid(0.0, 10.0, 5.25, 10.0),
             grid(0.0, 3.0, 4.75, 5.25, cell=0.25), grid(7.0, 10.0, 4.75, 5.25, cell=0.25)]
    v = np.array([[3, 4.75, 0], [7, 4.75, 0], [7, 5.25, 0], [3, 5.25, 0]], float)
    parts.append((v, np.array([[0, 1, 2], [0, 2, 3]])))  # the slot's floor: one quad
    parts += [box((3.0, 4.45, 0.0), (7.0, 4.75, 3.0)), box((3.0, 5.25, 0.0), (7.0, 5.55, 3.0))]
    return TriangleMesh(*merge(parts))


def stacked_scene(order=None) -> TriangleMesh:
    """A 6 x 6 m floor; on it a 2 x 2 m box 0.5 m high, on that a 2 x 2 m box 2.5 m high
    (its bottom coincides with the lower box's top: a point on that top is inside the upper
    box, which is taller than the character), and a 1 x 1 m box 0.3 m high on top.
    ``order`` (T,) permutes the triangles."""
    parts = [grid(-3.0, 3.0, -3.0, 3.0), box((-1, -1, 0), (1, 1, 0.5)),
             box((-1, -1, 0.5), (1, 1, 3.0)), box((-0.5, -0.5, 3.0), (0.5, 0.5, 3.3))]
    v, t = merge(parts)
    if order is not None:
        t = t[np.asarray(order)]
    return TriangleMesh(v, t)


PILLAR_ROWS = ((0.8, 2.0), (0.6, 6.0))  # (strip width m, y of the row), pillars 2 m deep


def pillars_scene() -> TriangleMesh:
    """A 12 x 10 m floor; a row of pillars 0.5 m wide, 2 m deep and 2.5 m tall along x at y
    in [2, 4] with 0.8 m strips between them, and a row at y in [6, 8] with 0.6 m strips.
    Strip k of a row spans x in [1.5 + k * (0.5 + w), 1.5 + k * (0.5 + w) + w]."""
    parts = [grid(0.0, 12.0, 0.0, 10.0)]
    for gap, y0 in PILLAR_ROWS:
        x = 1.0
        while x + 0.5 <= 11.0:
            parts.append(box((x, y0, 0.0), (x + 0.5, y0 + 2.0, 2.5)))
            x += 0.5 + gap
    return TriangleMesh(*merge(parts))


def slab_scene() -> TriangleMesh:
    """A 10 x 6 m floor under two 0.2 m slabs (each 3 x 3 m, on four thin legs at its
    corners): one with its underside 1.7 m up (x in [1, 4]), one 1.9 m up (x in [6, 9])."""
    parts = [grid(0.0, 10.0, 0.0, 6.0)]
    for x0, z in ((1.0, 1.7), (6.0, 1.9)):
        parts.append(box((x0, 1.5, z), (x0 + 3.0, 4.5, z + 0.2)))
        for lx in (x0, x0 + 2.9):
            for ly in (1.5, 4.4):
                parts.append(box((lx, ly, 0.0), (lx + 0.1, ly + 0.1, z)))
    return TriangleMesh(*merge(parts))


def steps_scene(low=0.34, high=0.36) -> TriangleMesh:
    """A 12 x 8 m floor; a platform ``low`` m high (x in [4, 8], y in [0.5, 3.5]) and one
    ``high`` m high (x in [4, 8], y in [4.5, 7.5])."""
    parts = [grid(0.0, 12.0, 0.0, 8.0), box((4.0, 0.5, 0.0), (8.0, 3.5, low)),
             box((4.0, 4.5, 0.0), (8.0, 7.5, high))]
    return TriangleMesh(*merge(parts))


def gap_scene(gap: float, height: float = 3.0) -> TriangleMesh:
    """Two decks ``height`` m high (x in [0, 5] and [5 + gap, 10 + gap], y in [0, 4]) over a
    pit floor at z = 0 spanning both (the pit between them is a trap: too deep to jump out
    of)."""
    x1 = 5.0 + gap
    parts = [grid(0.0, x1 + 5.0, 0.0, 4.0, cell=0.5), box((0.0, 0.0, 0.0), (5.0, 4.0, height)),
             box((x1, 0.0, 0.0), (x1 + 5.0, 4.0, height))]
    return TriangleMesh(*merge(parts))


def pit_scene(ramp_up: bool = True) -> TriangleMesh:
    """Floor at z = 0 (x in [0, 12], y in [0, 8]) made of four 1.5 m thick slabs around a
    2 x 2 m pit (x, y in [2, 4]) whose floor is 1.5 m down; a 1 m platform (x in [7, 10],
    y in [2, 5]) with a 30 degree ramp up to it along its y = 2..3 side (``ramp_up``), its
    other edges dropping back to the floor."""
    d = -1.5
    parts = [box((0, 0, d), (2, 8, 0)), box((4, 0, d), (12, 8, 0)), box((2, 0, d), (4, 2, 0)),
             box((2, 4, d), (4, 8, 0)), box((2, 2, d - 0.2), (4, 4, d)),
             box((7.0, 2.0, 0.0), (10.0, 5.0, 1.0))]
    if ramp_up:
        run = 1.0 / np.tan(np.radians(30.0))
        parts.append(ramp(7.0 - run, 7.0, 2.0, 3.0, 1.0))
    return TriangleMesh(*merge(parts))


def room_scene() -> TriangleMesh:
    """A 10 x 10 m ground of ONE quad (two triangles) at z = 0; on it four 3 m walls 0.3 m
    thick closing a room whose inside is x, y in [6, 9] (no door)."""
    parts = [grid(0.0, 10.0, 0.0, 10.0, cell=10.0),
             box((5.7, 5.7, 0.0), (9.3, 6.0, 3.0)), box((5.7, 9.0, 0.0), (9.3, 9.3, 3.0)),
             box((5.7, 6.0, 0.0), (6.0, 9.0, 3.0)), box((9.0, 6.0, 0.0), (9.3, 9.0, 3.0))]
    return TriangleMesh(*merge(parts))
