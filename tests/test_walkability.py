"""classify_triangles: codes, exactness at the slope limit, walls, ceilings, degenerate faces."""

import numpy as np
import pytest

from core.mesh import TriangleMesh
from core.walkability import CEILING, STEEP, WALKABLE, WALL, classify_triangles, face_slopes
from tools import scenes


def tilted(angles_rad, up_axis=2):
    """One triangle per angle, normal at exactly that angle from +Z (rotation about x)."""
    tris = []
    for th in angles_rad:
        n = np.array([0.0, -np.sin(th), np.cos(th)])
        u = np.array([1.0, 0.0, 0.0])
        w = np.cross(n, u)
        tris.append([np.zeros(3), u, w])
    v = np.array(tris).reshape(-1, 3)
    return TriangleMesh(v, np.arange(len(v)).reshape(-1, 3))


def test_codes_are_exported_values():
    assert (WALKABLE, STEEP, WALL, CEILING) == (0, 1, 2, 3)


def test_limit_is_walkable_and_1e9_rad_decides():
    for deg in (30.0, 45.0, 50.0, 60.0, 20.0):
        lim = np.radians(deg)
        m = tilted([lim, lim - 1e-9, lim + 1e-9])
        out = classify_triangles(m, deg)
        assert out.tolist() == [WALKABLE, WALKABLE, STEEP], deg
        assert out.dtype == np.int8


def test_exact_45_degree_ramp_from_integer_vertices():
    v = np.array([[0, 0, 0], [1, 0, 0], [1, 1, 1], [0, 1, 1]], float)
    m = TriangleMesh(v, [[0, 1, 2], [0, 2, 3]])
    assert classify_triangles(m, 45.0).tolist() == [WALKABLE, WALKABLE]
    assert classify_triangles(m, 45.0 - 1e-7).tolist() == [STEEP, STEEP]


def test_walls_ceilings_and_tolerance():
    ang = np.radians([0, 60, 85, 89.9, 90, 94.99, 95.01, 120, 180])
    m = tilted(ang)
    out = classify_triangles(m, 45.0, wall_tolerance_deg=5.0)
    assert out.tolist() == [WALKABLE, STEEP, WALL, WALL, WALL, WALL, CEILING, CEILING, CEILING]
    out = classify_triangles(m, 45.0, wall_tolerance_deg=0.0)
    assert out[2] == STEEP and out[4] == WALL and out[5] == CEILING


def test_up_parameter_and_degenerate_faces():
    v = np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0], [2, 0, 0]], float)
    m = TriangleMesh(v, [[0, 1, 2], [0, 1, 3]])  # floor + zero-area
    assert classify_triangles(m, 45).tolist() == [WALKABLE, WALL]
    assert classify_triangles(m, 45, up=(1, 0, 0)).tolist() == [WALL, WALL]
    assert classify_triangles(m, 45, up=(0, 0, -7)).tolist() == [CEILING, WALL]
    assert np.isnan(face_slopes(m)[1])


@pytest.mark.parametrize("kw, match", [
    (dict(max_slope_deg=np.nan), "max_slope_deg"),
    (dict(max_slope_deg=-1), "max_slope_deg"),
    (dict(max_slope_deg="x"), "max_slope_deg"),
    (dict(max_slope_deg=45, up=(0, 0, 0)), "up"),
    (dict(max_slope_deg=45, up=(0, np.inf, 1)), "up"),
    (dict(max_slope_deg=45, wall_tolerance_deg=-2), "wall_tolerance_deg"),
])
def test_bad_arguments(kw, match):
    m = tilted([0.0])
    with pytest.raises(ValueError, match=match):
        classify_triangles(m, **kw)


def test_block_ramps_either_side_of_limit():
    m = TriangleMesh(*scenes.stairs_ramps_block())
    theta = np.degrees(face_slopes(m))
    out = classify_triangles(m, 45.0)
    for ang in scenes.RAMP_ANGLES:
        sel = np.abs(theta - ang) < 1e-6
        assert sel.any()
        assert (out[sel] == (WALKABLE if ang <= 45.0 else STEEP)).all(), ang
