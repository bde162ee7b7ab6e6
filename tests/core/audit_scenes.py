"""Scenes for the audit tests, built in numpy (metres, Z up, outward winding).

- ``blender_stairs_scene``: what a Blender export of a small level looks like: a floor of
  two triangles, a closed staircase of six 0.2 m risers (one solid: stepped side faces,
  treads, risers, bottom), a landing at 1.2 m behind it, two ramps up to the landing and a
  wall.
- ``landing_over_floor_scene``: a floor of two triangles, partly under a 1.0 m-high landing
  slab standing on two legs.
- ``one_problem_scene``: four closed rooms (floor, walls, ceiling facing in), each with one
  real problem: a 0.45 m riser inside a flight of 0.2 m risers, a 5 cm tread inside a
  flight, a 1.2 m-high passage, a 1.0 m platform edge reached by a 1 m wide ramp along its
  y = 0 side (``ramp=False``: no way up). ``ROOMS`` gives each room's x range.
"""

from __future__ import annotations

import numpy as np
from capsule_collision.core.mesh.triangle_mesh import TriangleMesh
from controller_scenes import grid, merge


def quad(a, b, c, d):
    """Quad a-b-c-d (counter-clockwise seen from its front) as two triangles."""
    return np.array([a, b, c, d], float), np.array([[0, 1, 2], [0, 2, 3]])


def box(lo, hi, top=True):
    """Closed axis-aligned box, outward winding (``top=False``: without its top face)."""
    x0, y0, z0 = lo
    x1, y1, z1 = hi
    v = [[x0, y0, z0], [x1, y0, z0], [x1, y1, z0], [x0, y1, z0],
         [x0, y0, z1], [x1, y0, z1], [x1, y1, z1], [x0, y1, z1]]
    t = [[0, 2, 1], [0, 3, 2], [0, 1, 5], [0, 5, 4], [1, 2, 6], [1, 6, 5],
         [2, 3, 7], [2, 7, 6], [3, 0, 4], [3, 4, 7]]
    if top:
        t += [[4, 5, 6], [4, 6, 7]]
    return np.array(v, float), np.array(t)


def staircase(x0, y0, y1, rises, treads):
    """One closed solid: steps rising along +x from the floor (z = 0) at x0; risers
    ``rises[i]`` high, treads ``treads[i]`` deep; side faces at y0 (normal -y) and y1 (+y)
    made of one rectangle per step column (from the floor to its tread); a back face."""
    parts = []
    xs = x0 + np.concatenate([[0.0], np.cumsum(treads)])
    zs = np.cumsum(rises)
    zb = np.concatenate([[0.0], zs[:-1]])
    for i in range(len(rises)):
        xa, xb, z = xs[i], xs[i + 1], zs[i]
        parts.append(quad((xa, y1, zb[i]), (xa, y0, zb[i]), (xa, y0, z), (xa, y1, z)))  # riser
        parts.append(quad((xa, y0, z), (xb, y0, z), (xb, y1, z), (xa, y1, z)))  # tread
        parts.append(quad((xa, y0, 0), (xb, y0, 0), (xb, y0, z), (xa, y0, z)))  # side -y
        parts.append(quad((xb, y1, 0), (xa, y1, 0), (xa, y1, z), (xb, y1, z)))  # side +y
        parts.append(quad((xa, y1, 0), (xb, y1, 0), (xb, y0, 0), (xa, y0, 0)))  # bottom
        if i + 1 < len(rises):  # riser i+1 starts at this tread: the column wall below it
            continue
        parts.append(quad((xb, y0, 0), (xb, y1, 0), (xb, y1, z), (xb, y0, z)))  # back
    return parts


def ramp(x0, x1, y0, y1, z0, z1, along_y=False):
    """Closed wedge rising from height z0 to z1 between x0 and x1 (or, ``along_y``, between y0
    and y1), sloped top, vertical sides, high back face, bottom at z0."""
    if not along_y:
        v = [[x0, y0, z0], [x1, y0, z0], [x1, y1, z0], [x0, y1, z0], [x1, y0, z1], [x1, y1, z1]]
        t = [[0, 2, 1], [0, 3, 2], [0, 4, 5], [0, 5, 3], [1, 2, 5], [1, 5, 4], [0, 1, 4],
             [3, 5, 2]]
    else:
        v = [[x0, y0, z0], [x1, y0, z0], [x1, y1, z0], [x0, y1, z0], [x0, y1, z1], [x1, y1, z1]]
        t = [[0, 2, 1], [0, 3, 2], [0, 1, 5], [0, 5, 4], [3, 4, 5], [3, 5, 2], [0, 4, 3],
             [1, 2, 5]]
    return [(np.array(v, float), np.array(t))]


def blender_stairs_scene() -> TriangleMesh:
    """Floor (2 triangles, 20 x 20 m), staircase of six 0.2 m risers and 0.3 m treads along
    +x from x = 0 (y in [0, 1.2]) up to a landing box at 1.2 m (x in [1.8, 4.0], y in
    [-2, 3.2]), two ramps up to the landing's sides along y, and a 3 m wall."""
    parts = [quad((-10, -10, 0), (10, -10, 0), (10, 10, 0), (-10, 10, 0))]
    parts += staircase(0.0, 0.0, 1.2, [0.2] * 6, [0.3] * 5 + [0.3])
    parts.append(box((1.8, -2.0, 0.0), (4.0, 3.2, 1.2)))
    parts += ramp(1.8, 4.0, -6.0, -2.0, 0.0, 1.2, along_y=True)  # rises along +y to the landing
    v, t = ramp(1.8, 4.0, 3.2, 7.2, 0.0, 1.2, along_y=True)[0]
    v = v.copy()
    v[:, 1] = 10.4 - v[:, 1]  # mirrored: rises along -y
    parts.append((v, t[:, ::-1]))
    parts.append(box((6.0, -4.0, 0.0), (6.2, 4.0, 3.0)))
    return TriangleMesh(*merge(parts))


def landing_over_floor_scene() -> TriangleMesh:
    """Floor of two triangles (10 x 10 m); a 0.2 m slab, underside 1.0 m up, over
    x in [0, 3], y in [-5, 5], standing on two 0.3 m legs at its ends."""
    parts = [quad((-5, -5, 0), (5, -5, 0), (5, 5, 0), (-5, 5, 0)),
             box((0.0, -5.0, 1.0), (3.0, 5.0, 1.2)),
             box((1.35, -5.0, 0.0), (1.65, -4.7, 1.0)), box((1.35, 4.7, 0.0), (1.65, 5.0, 1.0))]
    return TriangleMesh(*merge(parts))


ROOM_W = 3.0  # metres, room width (y in [0, ROOM_W])
ROOM_H = 3.0  # metres, ceiling height
ROOMS = {"riser": (0.0, 8.0), "tread": (10.0, 18.0), "passage": (20.0, 28.0),
         "ledge": (30.0, 38.0)}


def room(x0, x1):
    """Closed room facing in: floor (0.5 m grid), four walls, ceiling."""
    w, h = ROOM_W, ROOM_H
    return [grid(x0, x1, 0.0, w),
            quad((x0, 0, 0), (x1, 0, 0), (x1, 0, h), (x0, 0, h)),  # y = 0, normal +y
            quad((x1, w, 0), (x0, w, 0), (x0, w, h), (x1, w, h)),  # y = w, normal -y
            quad((x0, w, 0), (x0, 0, 0), (x0, 0, h), (x0, w, h)),  # x = x0, normal +x
            quad((x1, 0, 0), (x1, w, 0), (x1, w, h), (x1, 0, h)),  # x = x1, normal -x
            quad((x0, 0, h), (x1, 0, h), (x1, w, h), (x0, w, h))[0:1]
            + (np.array([[0, 2, 1], [0, 3, 2]]),)]  # ceiling, normal -z


def flight_to_wall(x0, x_end, rises, treads):
    """A flight across the whole room width rising along +x from x0, its top tread running
    on to the room's end wall at x_end."""
    treads = list(treads) + [x_end - x0 - sum(treads)]
    return staircase(x0, 0.0, ROOM_W, rises, treads)


def one_problem_scene(ramp_up: bool = True) -> TriangleMesh:
    """Four rooms (ROOMS), one real problem each (see the module docstring)."""
    parts = []
    x0, x1 = ROOMS["riser"]
    parts += room(x0, x1) + flight_to_wall(x0 + 3.0, x1, [0.2, 0.2, 0.45, 0.2], [0.3] * 3)
    x0, x1 = ROOMS["tread"]
    parts += room(x0, x1) + flight_to_wall(x0 + 3.0, x1, [0.2] * 4, [0.3, 0.05, 0.3])
    x0, x1 = ROOMS["passage"]
    parts += room(x0, x1) + [box((x0 + 3.0, 0.0, 1.2), (x0 + 5.0, ROOM_W, ROOM_H), top=False)]
    x0, x1 = ROOMS["ledge"]
    parts += room(x0, x1) + [box((x0 + 4.0, 0.0, 0.0), (x1, ROOM_W, 1.0))]
    if ramp_up:
        parts += ramp(x0 + 1.0, x0 + 4.0, 0.0, 1.0, 0.0, 1.0)
    return TriangleMesh(*merge(parts))


def slot_beside_box_scene() -> TriangleMesh:
    """A floor quad (2 triangles, x, y in [0, 2]) whose centroids lie inside a 3 m box
    standing on it (x in [0.5, 4]); its free part is a 0.5 m slot between the box and a
    wall at x = 0: the 0.70 m wide capsule fits nowhere on the floor."""
    parts = [quad((0, 0, 0), (2, 0, 0), (2, 2, 0), (0, 2, 0)),
             box((-0.2, -1.0, 0.0), (0.0, 3.0, 3.0)), box((0.5, -1.0, 0.0), (4.0, 3.0, 3.0))]
    return TriangleMesh(*merge(parts))


def plates_scene() -> TriangleMesh:
    """A floor (0.5 m grid, x in [0, 3], y in [-2, 2.5]) under two one-sided walkable plates
    1.0 m up (y < 0 and y > 0.5): on the 0.5 m strip between them the capsule's side meets
    the plates' edges (walkable triangles touching it from the side block it)."""
    parts = [grid(0.0, 3.0, -2.0, 2.5),
             quad((0, -2, 1), (3, -2, 1), (3, 0, 1), (0, 0, 1)),
             quad((0, 0.5, 1), (3, 0.5, 1), (3, 2.5, 1), (0, 2.5, 1))]
    return TriangleMesh(*merge(parts))


def bumpy_floor(n: int = 60, cell: float = 0.25) -> TriangleMesh:
    """Open terrain: an n x n grid of ``cell`` m, gentle waves (slopes up to ~20 deg)."""
    v, t = grid(0.0, n * cell, 0.0, n * cell, cell=cell)
    v[:, 2] = 0.4 * np.sin(0.7 * v[:, 0]) * np.cos(0.5 * v[:, 1]) + 0.01 * np.sin(9.0 * v[:, 0])
    return TriangleMesh(v, t)


def roofed_hall_scene() -> TriangleMesh:
    """A floor (0.5 m grid, 8 x 8 m) through a bottomless hall (x, y in [2, 6]): four 3 m
    walls facing out and a steep (56 deg) pyramid roof up to 6 m. The floor inside is inside
    the solid (the first face above it is the roof, seen from behind)."""
    a, b, h, top = 2.0, 6.0, 3.0, 6.0
    parts = [grid(0.0, 8.0, 0.0, 8.0),
             quad((a, a, 0), (b, a, 0), (b, a, h), (a, a, h)),  # y = a, normal -y
             quad((b, b, 0), (a, b, 0), (a, b, h), (b, b, h)),  # y = b, normal +y
             quad((a, b, 0), (a, a, 0), (a, a, h), (a, b, h)),  # x = a, normal -x
             quad((b, a, 0), (b, b, 0), (b, b, h), (b, a, h))]  # x = b, normal +x
    c = 0.5 * (a + b)
    v = np.array([[a, a, h], [b, a, h], [b, b, h], [a, b, h], [c, c, top]], float)
    parts.append((v, np.array([[0, 1, 4], [1, 2, 4], [2, 3, 4], [3, 0, 4]])))
    return TriangleMesh(*merge(parts))


def low_plates_scene() -> TriangleMesh:
    """A floor (0.5 m grid, 4 x 4 m) with two one-sided plates of small triangles: a
    walkable strip tilted 27 deg from 0.2 m to 0.33 m up (x in [0, 2], y in [2, 2.25]), its
    high edge within a resting capsule's lower sphere, less than a quarter radius below its
    centre (a blocking contact), and a ceiling (facing down) 1.7 m up (x in [2, 4], y in
    [0, 2]), below the capsule's top."""
    v, t = grid(0.0, 2.0, 2.0, 2.25, cell=0.25)
    v[:, 2] = 0.2 + 0.52 * (v[:, 1] - 2.0)
    c, d = grid(2.0, 4.0, 0.0, 2.0, z=1.7, cell=0.25)
    return TriangleMesh(*merge([grid(0.0, 4.0, 0.0, 4.0), (v, t), (c, d[:, ::-1])]))
