"""classify_triangles: codes, exactness at the slope limit, walls, ceilings, degenerate faces;
the slope limit's tolerance on float32 and far-from-origin data (issue 12)."""

import numpy as np
import pytest
from capsule_collision.core.checks.walkability import (
    CEILING,
    STEEP,
    WALKABLE,
    WALL,
    classify_triangles,
    face_slopes,
)
from capsule_collision.core.constants import SLOPE_LIMIT_TOL_RAD
from capsule_collision.core.controller.controller import ControllerSettings
from capsule_collision.core.mesh.triangle_mesh import TriangleMesh
from capsule_collision.core.walk.walkthrough import walkthrough

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


def test_limit_is_walkable_and_the_tolerance_decides():
    for deg in (30.0, 45.0, 50.0, 60.0, 20.0):
        lim = np.radians(deg)
        tol = SLOPE_LIMIT_TOL_RAD
        m = tilted([lim, lim + 0.99 * tol, lim + 1.01 * tol, lim + np.radians(0.05)])
        out = classify_triangles(m, deg)
        assert out.tolist() == [WALKABLE, WALKABLE, STEEP, STEEP], deg
        assert out.dtype == np.int8


def test_exact_45_degree_ramp_from_integer_vertices():
    v = np.array([[0, 0, 0], [1, 0, 0], [1, 1, 1], [0, 1, 1]], float)
    m = TriangleMesh(v, [[0, 1, 2], [0, 2, 3]])
    assert classify_triangles(m, 45.0).tolist() == [WALKABLE, WALKABLE]
    assert classify_triangles(m, 45.0 - 0.05).tolist() == [STEEP, STEEP]


def _ramps(angle_deg, n, reach, dtype, seed):
    """n ramp quads (2 triangles each) at ``angle_deg``, each with a random yaw, size
    (0.3-3 m) and position within ``reach`` metres of the origin (or around ``reach`` when
    reach >= 1e3), authored in float64 and stored as ``dtype`` (float32: Blender's vertices)."""
    rng = np.random.default_rng(seed)
    a = np.radians(angle_deg)
    verts = []
    for _ in range(n):
        yaw = rng.uniform(0, 2 * np.pi)
        fwd = np.array([np.cos(yaw), np.sin(yaw), 0.0])
        side = np.array([-np.sin(yaw), np.cos(yaw), 0.0])
        run, width = rng.uniform(0.3, 3.0, 2)
        rise = run * np.tan(a)
        up_ramp = fwd * run + np.array([0, 0, rise])
        if reach >= 1e3:
            o = np.array([reach, -reach, 0.5 * reach]) + rng.uniform(-100, 100, 3)
        else:
            o = rng.uniform(-1, 1, 3) * reach
        quad = [o, o + width * side, o + width * side + up_ramp, o + up_ramp]
        verts.extend(np.asarray(quad, dtype=dtype).astype(np.float64))
    v = np.array(verts)
    tris = (np.arange(n)[:, None, None] * 4 + np.array([[0, 2, 1], [0, 3, 2]])).reshape(-1, 3)
    return TriangleMesh(v, tris)


@pytest.mark.parametrize("dtype, reach", [(np.float32, 100.0), (np.float32, 50.0),
                                          (np.float64, 1e4)], ids=["f32@100m", "f32@50m",
                                                                   "f64@10km"])
def test_ramps_at_the_limit_are_walkable_in_float32_and_far_away(dtype, reach):
    """Issue 12 regression: with a 1e-12 rad tolerance a float32 45 deg ramp within 50 m was
    not walkable at 45 deg in 5 of 24 positions. Classification and the controller's
    (walk events', audits') cos_max_slope agree on it; 0.05 deg steeper is never walkable."""
    for deg in (45.0, 30.0, 60.0):
        m = _ramps(deg, 100, reach, dtype, seed=int(deg))
        assert (classify_triangles(m, deg) == WALKABLE).all(), (deg, np.degrees(
            face_slopes(m)).max())
        cos_up = m.normals[:, 2]
        assert (cos_up >= ControllerSettings(max_slope_deg=deg).cos_max_slope).all()
        steeper = _ramps(deg + 0.05, 100, reach, dtype, seed=int(deg))
        assert (classify_triangles(steeper, deg) == STEEP).all()
        assert (steeper.normals[:, 2] < ControllerSettings(max_slope_deg=deg).cos_max_slope).all()


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


@pytest.mark.parametrize("offset, dtype", [((1e4, 1e4, 0.0), np.float64),
                                           ((1e4, -1e4, 100.0), np.float64),
                                           ((41.3, -27.7, 3.1), np.float32),
                                           ((-63.9, 88.1, -5.3), np.float32)],
                         ids=["f64@10km", "f64@10km-b", "f32@50m", "f32@100m"])
def test_ramp_walks_keep_their_verdicts_far_away_and_in_float32(offset, dtype):
    """Issue 12 regression: the stairs-and-ramps block (the former bundled sample) moved
    10 km from the origin, or stored in float32 near it, flipped the 45 deg ramp's walk to
    slope_too_steep with the 1e-12 rad tolerance; the walk events judge slopes with
    ControllerSettings.cos_max_slope (the same tolerance). 50 and 60 deg stay too steep."""
    v, t = scenes.stairs_ramps_block()
    off = np.array(offset)
    mesh = TriangleMesh((v + off).astype(dtype).astype(np.float64), t)
    settings = ControllerSettings()
    for k, angle in enumerate(scenes.RAMP_ANGLES):
        y = 0.5 + 1.9 * k + 0.75  # the ramp's middle (tools/scenes.py)
        run = 1.0 / np.tan(np.radians(angle))
        path = np.array([[3.0, y, 0.0], [4.0 + 0.8 * run, y, 0.8]]) + off
        report = walkthrough(mesh, path, settings)
        kinds = [e.kind for e in report.events]
        if angle <= 45.0:
            assert report.reached_goal and "slope_too_steep" not in kinds, (angle, kinds)
        else:
            assert "slope_too_steep" in kinds, (angle, kinds)


def test_fast_classes_equal_the_exact_angle_rule():
    """classify_triangles decides from the stored unit normals, and from the exact atan2 angle
    only near a class boundary: the classes must be the exact rule's everywhere, on a random
    soup, float32 45 degree ramps at 24 places within 50 m, faces at the wall band's edges, a
    collinear triangle and a sliver, for several limits and up vectors."""
    from capsule_collision.core.checks.walkability import CLASSIFY_COS_MARGIN, _classes_from_angles

    rng = np.random.default_rng(7)
    parts = [(rng.uniform(-5, 5, (3000, 3)), np.arange(3000).reshape(-1, 3))]
    for off in rng.uniform(-50, 50, (24, 3)):
        v = np.array([[0, 0, 0], [1, 0, 1], [1, 1, 1], [0, 1, 0]], float) + off
        parts.append((v.astype(np.float32).astype(float), np.array([[0, 1, 2], [0, 2, 3]])))
    for deg in (85.0, 95.0, 85.0 - 1e-6, 95.0 + 1e-6, 30.0 + 1e-7):  # near class bounds
        a = np.radians(deg)
        parts.append((np.array([[0, 0, 0], [1, 0, 0], [0, np.cos(a), np.sin(a)]]),
                      np.array([[0, 1, 2]])))
    parts.append((np.array([[0, 0, 0], [1, 1, 1], [2, 2, 2]], float), np.array([[0, 1, 2]])))
    parts.append((np.array([[0, 0, 0], [1, 0, 0], [2, 1e-9, 1e-9]]), np.array([[0, 1, 2]])))
    verts, tris, base = [], [], 0
    for v, t in parts:
        verts.append(v)
        tris.append(t + base)
        base += len(v)
    mesh = TriangleMesh(np.concatenate(verts), np.concatenate(tris))
    ramp_near = 0
    for slope, up in ((45.0, (0, 0, 1)), (30.0, (0, 0, 1)), (60.0, (0, 1, 0)), (0.0, (0, 0, 1)),
                      (45.0, (0.2, -0.3, 0.9)), (180.0, (0, 0, 1))):
        exact = _classes_from_angles(face_slopes(mesh, up), np.radians(slope), np.radians(5.0))
        assert (classify_triangles(mesh, slope, up) == exact).all(), (slope, up)
    # the float32 ramps sit within the margin of the 45 degree bound (cos widened by the
    # tolerance): the exact fallback is what decides them
    bound = np.cos(np.radians(45.0) + SLOPE_LIMIT_TOL_RAD)
    ramp_near = int((np.abs(mesh.normals[:, 2] - bound) <= 1e-4).sum())
    assert ramp_near >= 48 and CLASSIFY_COS_MARGIN < 1e-6


def test_faces_within_rounding_of_the_limit_follow_the_exact_angle():
    """400 faces whose exact angle lies within 3e-16 rad of the widened 45 degree bound: the
    normals alone misjudge some of them (rounding of the normalisation); the exact fallback
    near the bound must give the exact rule's class for every one."""
    from capsule_collision.core.checks.walkability import _classes_from_angles

    rng = np.random.default_rng(1)
    n = 400
    bound = np.radians(45.0) + SLOPE_LIMIT_TOL_RAD
    th = bound + rng.uniform(-3e-16, 3e-16, n)
    ph = rng.uniform(0, 2 * np.pi, n)
    nrm = np.stack([np.sin(th) * np.cos(ph), np.sin(th) * np.sin(ph), np.cos(th)], 1)
    t1 = np.cross(nrm, [0.3, 0.5, 0.7])
    t1 /= np.linalg.norm(t1, axis=1)[:, None]
    t2 = np.cross(nrm, t1)
    off = rng.uniform(-10, 10, (n, 3))
    v = np.stack([off, off + t1 * rng.uniform(0.1, 3, (n, 1)),
                  off + t2 * rng.uniform(0.1, 3, (n, 1))], 1).reshape(-1, 3)
    mesh = TriangleMesh(v, np.arange(3 * n).reshape(-1, 3))
    exact = _classes_from_angles(face_slopes(mesh), np.radians(45.0), np.radians(5.0))
    normals_only = np.where(mesh.normals[:, 2] >= np.cos(bound), WALKABLE, STEEP)
    assert (normals_only != exact).any()  # the case the fallback exists for
    assert (classify_triangles(mesh, 45.0) == exact).all()
