"""Level audits: stand test, stairs, headroom, ledges (faces or positions with values)."""

import numpy as np
import pytest
from test_controller import S, box, grid, merge, stairs_scene

from core.audits import headroom_audit, ledge_audit, stair_audit, stand_test
from core.controller import ControllerSettings
from core.mesh import TriangleMesh


def test_stand_test_flags_faces_under_a_low_slab_and_in_a_narrow_slot():
    floor = grid(-4, 4, -4, 4, cell=0.5)
    slab = box((-4, 1.0, 1.5), (4, 2.0, 1.7))  # 1.5 m clearance over y in [1, 2]
    slot = [box((-4, -2.6, 0), (4, -2.5, 2)), box((-4, -2.0, 0), (4, -1.9, 2))]  # 0.5 m wide
    mesh = TriangleMesh(*merge([floor, slab, *slot]))
    res = stand_test(mesh)
    nf = len(floor[1])
    assert set(res.tested.tolist()) >= set(range(nf))
    bad = set(res.faces.tolist())
    cent = mesh.vertices[mesh.triangles[:nf]].mean(1)
    under_slab = {i for i in range(nf) if 1.0 + 0.1 < cent[i, 1] < 2.0 - 0.1}
    in_slot = {i for i in range(nf) if -2.5 < cent[i, 1] < -2.0}
    open_floor = {i for i in range(nf) if abs(cent[i, 1]) < 0.5}
    assert under_slab <= bad and in_slot <= bad
    assert not (open_floor & bad)
    assert (res.depth > 0).all() and (res.blocker >= 0).all()
    assert res.position.shape == (len(res.faces), 3)


def test_stand_test_on_a_walkable_slope_is_clean():
    v = np.array([[0, -2, 0], [4, -2, 2], [4, 2, 2], [0, 2, 0]], float)  # 26.6 deg
    mesh = TriangleMesh(v, [[0, 1, 2], [0, 2, 3]])
    res = stand_test(mesh)
    assert len(res.tested) == 2 and len(res.faces) == 0


@pytest.mark.parametrize("rise,tread", [(0.2, 0.3), (0.45, 0.3), (0.3, 0.05)])
def test_stair_audit_measures_rise_and_tread(rise, tread):
    mesh = stairs_scene(rise, tread=tread, n=4)
    res = stair_audit(mesh)
    assert len(res.riser) >= 4  # one row per riser triangle (2 per riser quad)
    assert res.rise == pytest.approx(np.full(len(res.riser), rise))
    inner = np.isfinite(res.tread_depth)
    assert res.tread_depth[inner] == pytest.approx(np.full(inner.sum(), tread))
    assert (res.too_high == (rise > S.step_height)).all()
    assert (res.too_shallow[inner] == (tread < S.min_step_depth)).all()
    assert not res.too_shallow[~inner].any()  # the top riser has a landing behind it
    heights = np.unique(np.round(res.position[:, 2], 6))
    assert heights == pytest.approx(rise * np.arange(1, 5))


def test_stair_audit_ignores_walls():
    mesh = TriangleMesh(*merge([grid(-3, 3, -3, 3), box((1, -3, 0), (1.2, 3, 3))]))
    assert len(stair_audit(mesh).riser) == 0


def test_headroom_audit():
    floor = grid(-3, 3, -3, 3, cell=0.5)
    mesh = TriangleMesh(*merge([floor, box((-3, 0, 1.6), (3, 3, 1.8)),
                                box((-3, -3, 2.5), (3, -1, 2.7))]))
    res = headroom_audit(mesh)
    nf = len(floor[1])
    assert set(res.faces.tolist()) == {i for i in range(nf)
                                       if mesh.vertices[mesh.triangles[i]].mean(0)[1] > 0}
    assert res.clearance == pytest.approx(np.full(len(res.faces), 1.6))
    assert (res.ceiling >= nf).all()
    tall = ControllerSettings(height=1.5)
    assert len(headroom_audit(mesh, tall).faces) == 0


def test_ledge_audit_reports_drops_above_the_safe_height():
    # floor at 0 on both sides of a solid 1.0 m platform (x in [0, 2]); the platform's top
    # edges drop 1.0 m; the floor's edges against the platform's sides rise (never ledges)
    low = grid(-3, 0, -1, 1, z=0.0)
    platform = box((0, -1, -0.5), (2, 1, 1.0))
    far = grid(2, 5, -1, 1, z=0.0)
    mesh = TriangleMesh(*merge([low, platform, far]))
    res = ledge_audit(mesh, safe_drop=0.5)
    top = np.isclose(res.position[:, 2], 1.0)
    plus_x = top & np.isclose(res.position[:, 0], 2.0)
    minus_x = top & np.isclose(res.position[:, 0], 0.0)
    assert plus_x.any() and minus_x.any()
    assert res.drop[plus_x | minus_x] == pytest.approx(np.full((plus_x | minus_x).sum(), 1.0))
    assert res.direction[plus_x] == pytest.approx(np.tile([1.0, 0, 0], (plus_x.sum(), 1)))
    floor_against_side = np.isclose(res.position[:, 2], 0.0) & (
        np.isclose(res.position[:, 0], 0.0) | np.isclose(res.position[:, 0], 2.0))
    assert not floor_against_side.any()
    assert (np.isin(res.faces, np.arange(mesh.n_triangles))).all()
    res2 = ledge_audit(mesh, safe_drop=1.5)
    assert not (np.isclose(res2.position[:, 2], 1.0) & np.isfinite(res2.drop)).any()


def test_ledge_audit_small_step_down_is_safe():
    mesh = TriangleMesh(*merge([grid(-3, 0, -1, 1, z=0.3), grid(0, 3, -1.5, 1.5, z=0.0)]))
    res = ledge_audit(mesh)  # safe_drop = step_height 0.35
    inner = np.isclose(res.position[:, 0], 0.0) & np.isclose(res.position[:, 2], 0.3)
    assert not inner.any()
