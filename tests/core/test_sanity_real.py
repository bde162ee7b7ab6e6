"""Level warnings on the shipped OpenArena maps (issue 24, section 5): a Z-up map read with
the OBJ importer's default up (Y) lies on its side and says so with the axis its floors face;
a metre map in a centimetre scene is 100 times too small; right way up and in metres, no
warning. Skipped where the maps cannot be made (tools/real_levels.py)."""

import sys
from pathlib import Path

import numpy as np
import pytest
from capsule_collision import core
from scenes import box  # the one home of the hand-built scene parts

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tools"))
import real_levels  # noqa: E402

# The shipped maps are made on first use (tools/real_levels.py): never a silent skip.
QUAKE = core.ControllerSettings(**real_levels.QUAKE_PLAYER)


def _mesh(name, render, frame="right", scale=1.0):
    lv = real_levels.load(name, clip=not render)
    v = lv.vertices
    if frame == "y_up":  # Blender's OBJ importer, up Y forward -Z: file (x, y, z) -> (x, -z, y)
        v = np.stack([v[:, 0], -v[:, 2], v[:, 1]], axis=1)
    return core.TriangleMesh(v * scale, lv.triangles)


@pytest.mark.parametrize("render", [False, True], ids=["clip", "render"])
@pytest.mark.parametrize("name", real_levels.MAPS)
def test_a_shipped_map_right_way_up_in_metres_gets_no_warning(name, render):
    assert core.level_warnings(_mesh(name, render), QUAKE) == []


@pytest.mark.parametrize("render", [False, True], ids=["clip", "render"])
@pytest.mark.parametrize("name", real_levels.MAPS)
def test_a_z_up_map_read_as_y_up_lies_on_its_side(name, render):
    (w,) = core.level_warnings(_mesh(name, render, "y_up"), QUAKE, likely_up=(0, -1, 0))
    assert w.code == "up_axis" and w.axis == "-Y", w
    assert "walls read as floors" in w.message or "floor" in w.message


@pytest.mark.parametrize("name", real_levels.MAPS)
def test_a_metre_map_in_a_centimetre_scene_is_100_times_too_small(name):
    (w,) = core.level_warnings(_mesh(name, False, scale=0.01), QUAKE)
    assert w.code == "too_small" and "x 100" in w.message, w


def test_a_small_toy_scene_is_not_too_small():
    """A 1 m box on a 3 m floor (a unit-test scene): its wall is as tall as half a
    character and more, so it is not taken for a level 100 times too small; the same scene
    at 1/100 is."""
    toy = core.TriangleMesh(*box((-0.5, -0.5, 0.0), (0.5, 0.5, 1.0)))
    assert core.level_warnings(toy) == []
    v, t = box((-0.005, -0.005, 0.0), (0.005, 0.005, 0.01))
    (w,) = core.level_warnings(core.TriangleMesh(v, t))
    assert w.code == "too_small"


