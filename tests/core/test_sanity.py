"""core.sanity.level_warnings: a wrong up axis and centimetres are said in words; a metre
Z-up level gets no warning (issue 12, "sanity warnings")."""

import numpy as np
import pytest
from capsule_collision import core
from capsule_collision.core import ControllerSettings, TriangleMesh
from capsule_collision.core.checks.sanity import SanityWarning, level_warnings

from tools import scenes


@pytest.fixture(scope="module")
def sample():
    """The stairs-and-ramps block: stairs, ramps, a corridor, a low ceiling, a thin wall;
    metres, Z up (the benchmark's block, formerly the bundled sample)."""
    v, t = scenes.stairs_ramps_block()
    return np.asarray(v, dtype=np.float64), np.asarray(t)


def _codes(warnings):
    return [w.code for w in warnings]


def test_metre_z_up_levels_get_no_warning(sample):
    assert level_warnings(TriangleMesh(*sample)) == []
    assert level_warnings(TriangleMesh(*scenes.terrain(30, seed=2))) == []
    assert level_warnings(TriangleMesh(*sample), ControllerSettings(height=2.0)) == []


def test_y_up_export_read_as_z_up_is_warned(sample):
    v, t = sample
    y_up = v[:, [0, 2, 1]] * np.array([1.0, 1.0, -1.0])  # (x, y, z) -> (x, z, -y): Y is up
    warnings = level_warnings(TriangleMesh(y_up, t))
    assert _codes(warnings) == ["up_axis"]
    assert "+Y" in warnings[0].message and "up" in warnings[0].message
    # the same level with the right up is fine
    assert level_warnings(TriangleMesh(y_up, t), up=(0, 1, 0)) == []


def test_upside_down_level_is_warned(sample):
    v, t = sample
    assert _codes(level_warnings(TriangleMesh(v, t), up=(0, 0, -1))) == ["up_axis"]


def test_centimetre_level_is_warned(sample):
    v, t = sample
    warnings = level_warnings(TriangleMesh(v * 100.0, t))
    assert _codes(warnings) == ["centimetres"]
    assert "centimetres" in warnings[0].message
    assert isinstance(warnings[0], SanityWarning)


def test_very_large_extent_is_warned():
    v, t = scenes.terrain(10, seed=1)
    v = np.asarray(v, dtype=np.float64)
    lo, hi = v.min(0), v.max(0)
    span = float((hi - lo)[:2].max())
    big = v.copy()
    big[:, :2] *= 2e5 / span  # a flat-ish terrain 200 km across: no walls to judge by
    big[:, 2] *= 1.0
    codes = _codes(level_warnings(TriangleMesh(big, t)))
    assert "centimetres" in codes


def test_both_problems_at_once(sample):
    v, t = sample
    y_up_cm = v[:, [0, 2, 1]] * np.array([100.0, 100.0, -100.0])
    codes = _codes(level_warnings(TriangleMesh(y_up_cm, t)))
    assert codes == ["up_axis", "centimetres"]


def test_bad_up_raises(sample):
    with pytest.raises(ValueError, match="up"):
        level_warnings(TriangleMesh(*sample), up=(0, 0, 0))


def test_exported_from_core():
    assert core.level_warnings is level_warnings
    assert core.SanityWarning is SanityWarning


def _misread_as_y_up(v):
    """A Z-up file as Blender's OBJ importer reads it with its defaults (Y up, forward -Z):
    the file's (x, y, z) lands at (x, -z, y)."""
    return np.stack([v[:, 0], -v[:, 2], v[:, 1]], 1)


def test_a_brush_map_read_on_its_side_is_rotated_and_says_which_way():
    """Named regression: a Quake-style brush map exported Z-up and read as Y-up got no
    warning (its two-sided walls and pillars outweigh the floors facing any one way)."""
    v, t = scenes.brush_map(3)
    assert [w.code for w in level_warnings(TriangleMesh(v, t))] == ["centimetres"]
    (up, _cm) = level_warnings(TriangleMesh(_misread_as_y_up(v), t))
    assert (up.code, up.axis) == ("up_axis", "-Y") and "floors facing -Y" in up.message
    # boxes only (no ramp tells floors from ceilings): the caller's guess decides
    v, t = scenes.brush_map(3, ramps=False)
    misread = TriangleMesh(_misread_as_y_up(v), t)
    assert level_warnings(misread, likely_up=(0, -1, 0))[0].axis == "-Y"
    assert level_warnings(misread, likely_up=(0, 1, 0))[0].axis == "+Y"


def test_a_y_up_level_read_as_z_up_faces_plus_y():
    v, t = scenes.brush_map(2)
    y_up = np.stack([v[:, 0], v[:, 2], -v[:, 1]], 1)  # the same map written Y-up
    (up, _cm) = level_warnings(TriangleMesh(y_up, t))
    assert up.axis == "+Y"
