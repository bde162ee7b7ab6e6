"""Render / collision pairs for the render-against-collision tests (core/checks/collision_diff.py),
built in numpy (metres, Z up, closed solids with outward winding, floors of 0.5 m cells).

Every pair is a 12 x 6 m yard (x in [0, 12], y in [0, 6]) with the spawn at SPAWN, and one
known difference near DIFF_AT (x in [5, 7], y in [2, 4]) unless said otherwise:

- ``identical``: the same mesh on both sides (built twice: two mesh objects).
- ``crate_in_collision``: a 1 x 2 m, 2.5 m tall box in the collision only (an invisible wall).
- ``crate_in_render``: the same box in the render only (a wall the character walks through).
- ``gap_in_collision``: the collision floor with a 2 x 2 m hole (the render floor whole).
- ``raised_collision``: the collision floor 8 cm higher over x in [5, 7] (floating feet).
- ``lowered_collision``: the collision floor 8 cm lower over x in [5, 7] (sunk feet).
- ``platform_pair``: a 1 m platform (x in [8, 11], y in [1, 5]) reached by a ramp on the
  render; the collision has the platform but not the ramp (reach that differs: the platform
  is an island on the collision).
- ``stairs_and_ramp``: a flight of eight 0.17 m risers, 0.3 m treads, up to a 2 m deep landing
  (render), against the same yard and landing with the flight replaced by one ramp along
  its nosings (collision), as the stair-ramp proxy makes it.
"""

from __future__ import annotations

import numpy as np
from audit_scenes import staircase
from capsule_collision.core.mesh.triangle_mesh import TriangleMesh
from reach_scenes import ramp
from scenes import box, grid, merge

SPAWN = np.array([[1.0, 3.0, 0.0]])
DIFF_AT = np.array([6.0, 3.0, 0.0])
CRATE = ((5.0, 2.0, 0.0), (6.0, 4.0, 2.5))
YARD = (0.0, 12.0, 0.0, 6.0)
STEP_OFFSET = 0.08  # metres the collision floor is raised or lowered


def _mesh(parts) -> TriangleMesh:
    return TriangleMesh(*merge(parts))


def yard() -> list:
    return [grid(*YARD)]


def identical():
    return _mesh(yard()), _mesh(yard())


def crate_in_collision():
    return _mesh(yard()), _mesh(yard() + [box(*CRATE)])


def crate_in_render():
    return _mesh(yard() + [box(*CRATE)]), _mesh(yard())


def gap_in_collision():
    """Collision floor without x in [5, 7], y in [2, 4] (nothing below it)."""
    parts = [grid(0.0, 5.0, 0.0, 6.0), grid(7.0, 12.0, 0.0, 6.0), grid(5.0, 7.0, 0.0, 2.0),
             grid(5.0, 7.0, 4.0, 6.0)]
    return _mesh(yard()), _mesh(parts)


def _strip_at(z):
    """The yard with its x in [5, 7] strip at height z (a closed slab from 0.5 m below)."""
    return [grid(0.0, 5.0, 0.0, 6.0), grid(7.0, 12.0, 0.0, 6.0),
            box((5.0, 0.0, -0.5), (7.0, 6.0, z))]


def offset_collision(offset):
    """The yard against its collision with the x in [5, 7] strip ``offset`` m higher."""
    return _mesh(yard()), _mesh(_strip_at(offset))


def raised_collision():
    return offset_collision(STEP_OFFSET)


def lowered_collision():
    return offset_collision(-STEP_OFFSET)


PLATFORM = ((8.0, 1.0, 0.0), (11.0, 5.0, 1.0))


def platform_pair():
    """Render: the yard, a 1 m platform PLATFORM and a 30 degree ramp up to it along its
    x = 8 side (y in [2, 4]). Collision: the same without the ramp (the platform is an
    island there, and the ramp's own floor has no collision under it)."""
    run = 1.0 / np.tan(np.radians(30.0))
    wedge = ramp(8.0 - run, 8.0, 2.0, 4.0, 1.0)
    return _mesh(yard() + [box(*PLATFORM), wedge]), _mesh(yard() + [box(*PLATFORM)])


FLIGHT = {"x0": 4.0, "y0": 2.0, "y1": 4.0, "rise": 0.17, "tread": 0.3, "steps": 8,
          "landing": 2.0}


def stairs_and_ramp():
    """(render, collision, top): a flight rising along +x from x0 (FLIGHT) whose last tread
    is the landing; the collision replaces the flight by a ramp from the floor one tread
    before x0 up through every nosing to the landing's front edge (slope rise / tread,
    29.5 degrees); ``top`` (3,) a foot point on the landing."""
    f = FLIGHT
    n = f["steps"]
    rises = [f["rise"]] * n
    treads = [f["tread"]] * (n - 1) + [f["landing"]]
    render = yard() + staircase(f["x0"], f["y0"], f["y1"], rises, treads)
    top_z = n * f["rise"]
    nose_x = f["x0"] + (n - 1) * f["tread"]  # front edge of the landing
    foot_x = f["x0"] - f["tread"]  # the line through the nosings meets the floor here
    landing = box((nose_x, f["y0"], 0.0), (nose_x + f["landing"], f["y1"], top_z))
    wedge = _ramp_wedge(foot_x, nose_x, f["y0"], f["y1"], top_z)
    collision = yard() + [landing, wedge]
    top = np.array([nose_x + 0.5 * f["landing"], 0.5 * (f["y0"] + f["y1"]), top_z])
    return _mesh(render), _mesh(collision), top


def _ramp_wedge(x0, x1, y0, y1, z1):
    """Closed wedge rising along +x from the floor at x0 to z1 at x1 (no bottom needed on a
    floor, but kept closed for the inside test)."""
    return ramp(x0, x1, y0, y1, z1)


def nosings() -> np.ndarray:
    """(steps, 3) the flight's nosings at the middle of its width (front edge of each
    tread), for checking the ramp passes through them."""
    f = FLIGHT
    k = np.arange(f["steps"])
    return np.stack([f["x0"] + k * f["tread"], np.full(k.size, 0.5 * (f["y0"] + f["y1"])),
                     (k + 1) * f["rise"]], 1)

