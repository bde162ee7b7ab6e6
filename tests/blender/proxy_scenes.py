"""Scenes for the collision-authoring tests (tests/blender/test_addon_proxy.py), built from
numpy through ``blender_helpers`` (Blender units = metres here).

- ``crate``: a box 2 x 1 x 0.5 m, rotated about two axes (its own box is the tight one);
- ``l_block``: an L-shaped solid (concave: two boxes welded);
- ``pill``: a capsule-shaped render mesh (radius 0.4, segment 1.2 m, 24 x 6 rings);
- ``stairs_level``: floor, a staircase of five 0.5 m risers (too high to step: 0.35 m)
  and 0.8 m treads along +x in one object "Stairs", a landing box 2.5 m high beyond it.
"""

from __future__ import annotations

import blender_helpers as bh
import numpy as np
from capsule_collision.core.authoring import capsule_mesh

STAIR_RISE, STAIR_TREAD, STAIR_COUNT, STAIR_WIDTH = 0.5, 0.8, 5, 2.0
LANDING_HEIGHT = STAIR_RISE * STAIR_COUNT


def crate(name="Crate", location=(0.0, 0.0, 1.0)):
    return bh.box(name, (-1.0, -0.5, -0.25), (1.0, 0.5, 0.25), location=location,
                  rotation=(0.3, 0.0, 0.7))


def l_block(name="Block", location=(4.0, 0.0, 0.0)):
    v = [(0, 0, 0), (2, 0, 0), (2, 1, 0), (1, 1, 0), (1, 2, 0), (0, 2, 0)]
    top = [(x, y, 1.0) for x, y, _z in v]
    faces = [(5, 4, 3, 2, 1, 0), (6, 7, 8, 9, 10, 11)]
    faces += [(i, (i + 1) % 6, (i + 1) % 6 + 6, i + 6) for i in range(6)]
    return bh.mesh_object(name, v + top, faces, location=location)


def pill(name="Pill", location=(-4.0, 0.0, 1.0)):
    v, t = capsule_mesh([0, 0, -0.6], [0, 0, 0.6], 0.4, segments=24, rings=6)
    return bh.mesh_object(name, v, t.tolist(), location=location)


def _staircase():
    """(vertices, quads) of one closed staircase solid rising along +x from x = 0."""
    verts, faces = [], []

    def quad(*corners):
        base = len(verts)
        verts.extend(corners)
        faces.append((base, base + 1, base + 2, base + 3))

    y0, y1 = -STAIR_WIDTH / 2, STAIR_WIDTH / 2
    for i in range(STAIR_COUNT):
        xa, xb = i * STAIR_TREAD, (i + 1) * STAIR_TREAD
        zb, z = i * STAIR_RISE, (i + 1) * STAIR_RISE
        quad((xa, y1, zb), (xa, y0, zb), (xa, y0, z), (xa, y1, z))  # riser
        quad((xa, y0, z), (xb, y0, z), (xb, y1, z), (xa, y1, z))  # tread
        quad((xa, y0, 0), (xb, y0, 0), (xb, y0, z), (xa, y0, z))  # side -y
        quad((xb, y1, 0), (xa, y1, 0), (xa, y1, z), (xb, y1, z))  # side +y
        quad((xa, y1, 0), (xb, y1, 0), (xb, y0, 0), (xa, y0, 0))  # bottom
    return verts, faces


def stairs_level():
    """(floor, stairs, landing) objects; the landing's top is at LANDING_HEIGHT from
    x = STAIR_COUNT * STAIR_TREAD (where the last tread ends)."""
    floor = bh.floor("Floor", size=30.0)
    v, f = _staircase()
    stairs = bh.mesh_object("Stairs", v, f)
    x0 = (STAIR_COUNT - 1) * STAIR_TREAD + STAIR_TREAD
    landing = bh.box("Landing", (x0, -3.0, 0.0), (x0 + 4.0, 3.0, LANDING_HEIGHT))
    return floor, stairs, landing


def triangles_of(level) -> np.ndarray:
    """(M, 3, 3) triangles of a LevelGeometry, each one's corners sorted and the list sorted
    (rounded to 0.1 mm): equal arrays, equal collision whatever the order or winding."""
    tri = np.round(level.mesh.vertices[level.mesh.triangles], 4)
    tri = np.array([sorted(map(tuple, t)) for t in tri])
    order = np.lexsort(tri.reshape(len(tri), -1).T[::-1])
    return tri[order]


def wide_tread_stairs(name="Wide"):
    """One object: six 0.2 m risers 1.2 m wide (y 0 - 1.2), 0.3 m treads along +x whose
    quads run 1 m further out (y -1 - 1.2: a floor beside the flight in the same faces); the
    sixth tread (x 1.5 - 1.8, 1.2 m up) meets a landing box (another object, x 1.8 - 4)."""
    verts, faces = [], []
    for i in range(6):
        xa, xb, z = 0.3 * i, 0.3 * (i + 1), 0.2 * (i + 1)
        for quad in (((xa, 1.2, z - 0.2), (xa, 0.0, z - 0.2), (xa, 0.0, z), (xa, 1.2, z)),
                     ((xa, -1.0, z), (xb, -1.0, z), (xb, 1.2, z), (xa, 1.2, z))):
            faces.append(tuple(range(len(verts), len(verts) + 4)))
            verts.extend(quad)
    bh.floor("Floor", size=30.0)
    bh.box("Landing", (1.8, -2.0, 0.0), (4.0, 3.2, 1.2))
    return bh.mesh_object(name, verts, faces)
