"""The standable map (core/audits/standable.py): where on the walkable floor the character can
stand, per cell of radius / 2, judged with the real capsule; the stand test and the headroom
audit read off it.

Scenes: tests/reach_scenes.py (a 0.5 m slot opening onto the floor at both ends, stacked
closed boxes with coincident faces in several face orders, 0.8 m and 0.6 m strips between
pillars, slabs 1.7 m and 1.9 m up) and the stairs-and-ramps block (tools/scenes.py).
"""

import numpy as np
import pytest
import scenes
from capsule_collision.core.checks.audits import cells as cells_module
from capsule_collision.core.checks.audits import headroom_audit, stand_test
from capsule_collision.core.checks.audits.cells import cell_grid, rasterise
from capsule_collision.core.checks.audits.common import contacts_chunks, walkable_faces
from capsule_collision.core.checks.audits.standable import (
    COVERED,
    CRAMPED,
    FREE,
    INSIDE,
    standable_map,
)
from capsule_collision.core.controller.controller import CharacterController, ControllerSettings
from capsule_collision.core.mesh.triangle_mesh import TriangleMesh
from capsule_collision.core.walk.walkthrough import walkthrough_many
from reach_scenes import (
    PILLAR_ROWS,
    pillars_scene,
    slab_scene,
    slot_scene,
    stacked_scene,
)

S = ControllerSettings()


def _confirm_cramped(mesh, points):
    """The controller cannot stand at each foot point: settling moves it away, pushes it
    out, or leaves it penetrating."""
    ctrl = CharacterController(mesh)
    for p in points:
        m = ctrl.ground(p)
        moved = np.linalg.norm(m.position - p)
        assert moved > S.skin_width or m.depenetration > 0.0 or mesh.capsule_contacts(
            ctrl.capsule_at(m.position)), p


# ------------------------------------------------------------------ resolution and areas
def test_cells_are_half_a_radius_and_face_areas_add_up():
    mesh = TriangleMesh(*scenes.stairs_ramps_block())
    for radius in (0.35, 0.5):
        s = S.replace(radius=radius)
        m = standable_map(mesh, s)
        assert m.grid.cell == pytest.approx(radius / 2)
        walk = walkable_faces(mesh, s)
        total = m.standable_area + m.cramped_area + m.buried_area
        sampled = walk[np.isin(walk, m.face) | (m.face_state[walk] >= 0)]
        assert total[sampled] == pytest.approx(mesh.areas[sampled])
        assert (total[np.setdiff1d(np.arange(mesh.n_triangles), walk)] == 0.0).all()


def test_rasterisation_covers_every_cell_centre_of_a_surface_once():
    # a floor of 0.5 m cells with cell centres exactly on its edges and vertices: each
    # centre belongs to exactly one triangle
    v = np.array([[x, y, 0.0] for x in np.arange(0, 2.01, 0.5) for y in np.arange(0, 2.01, 0.5)])
    idx = np.arange(25).reshape(5, 5)
    a, b, c, d = idx[:-1, :-1].ravel(), idx[1:, :-1].ravel(), idx[1:, 1:].ravel(), \
        idx[:-1, 1:].ravel()
    mesh = TriangleMesh(v, np.concatenate([np.stack([a, b, c], 1), np.stack([a, c, d], 1)]))
    grid = cell_grid(mesh, (0, 0, 1), 0.25)
    grid = grid._replace(ox=grid.ox - 0.125, oy=grid.oy - 0.125, nx=grid.nx + 1,
                         ny=grid.ny + 1)
    rec = rasterise(mesh, grid, np.arange(mesh.n_triangles))
    cells, count = np.unique(rec.cell, return_counts=True)
    assert count.max() == 1 and cells.size == 64  # 9 x 9 lattice points, half-open


def test_threaded_rasterising_and_contacts_equal_the_serial_ones(monkeypatch):
    """From THREADED_BUILD_TRIANGLES the raster's edges and parts run in threads, and the
    audits' capsule contacts in chunks over two threads: the records and the contact pairs
    must be the serial ones, bit for bit (a terrain of ~60k triangles, 40k capsules)."""
    mesh = TriangleMesh(*scenes.terrain(175))
    assert mesh.n_triangles >= cells_module.THREADED_BUILD_TRIANGLES
    grid = cell_grid(mesh, (0, 0, 1), 0.175)
    threaded = rasterise(mesh, grid, np.arange(mesh.n_triangles))
    rng = np.random.default_rng(5)
    lo, hi = mesh.aabb
    a = rng.uniform(lo, hi, (40_000, 3))
    b = a + [0.0, 0.0, 1.1]
    pairs = contacts_chunks(mesh, a, b, 0.35)
    monkeypatch.setattr(cells_module, "THREADED_BUILD_TRIANGLES", 10 ** 12)
    serial = rasterise(mesh, grid, np.arange(mesh.n_triangles))
    for x, y in zip(threaded, serial):
        assert x.tobytes() == y.tobytes()
    whole = mesh.capsule_contacts_many(a, b, 0.35)  # one call, no chunks: the oracle
    assert pairs[0].size > 1000
    for x, y in zip(pairs, (whole.query, whole.triangle, whole.depth, whole.normal)):
        assert x.tobytes() == y.tobytes()


def test_the_map_is_kept_with_the_mesh():
    mesh = slot_scene()
    assert standable_map(mesh, S) is standable_map(mesh, ControllerSettings())
    assert standable_map(mesh, S.replace(radius=0.3)).grid.cell == pytest.approx(0.15)


# ------------------------------------------------------------------ bug: the slot's mouth
def test_a_slot_opening_onto_the_floor_is_reported_with_its_cramped_area():
    # the slot's floor is one face; a capsule fits at its mouths, so the old test called the
    # face standable. Its middle is cramped: reported, with that area and a point in it
    mesh = slot_scene()
    res = stand_test(mesh)
    slot_face = [f for f in res.faces if np.isclose(mesh.vertices[mesh.triangles[f]][:, 1],
                                                    4.75).any()]
    assert len(slot_face) >= 1
    rows = np.isin(res.faces, slot_face)
    assert 1.5 < res.cramped_area[rows].sum() < 2.0  # of the 4 x 0.5 m slot
    assert res.standable_area[rows].sum() > 0.0  # its mouths: a capsule outside stands over
    p = res.position[rows]
    assert ((p[:, 1] > 4.75) & (p[:, 1] < 5.25) & (p[:, 0] > 3.0) & (p[:, 0] < 7.0)).all()
    assert len(res.region_area) == 1
    assert (res.region_point[0][:2] == pytest.approx([5.0, 5.0], abs=0.2))
    _confirm_cramped(mesh, np.concatenate([p, res.region_point]))
    # nothing else: the main floor beside the walls is standable
    assert np.isin(res.faces, slot_face).all()


# ------------------------------------------------------------------ bug: inside solids
@pytest.mark.parametrize("seed", [0, 1, 2, 3, 4])
def test_stacked_boxes_bury_the_faces_between_them_in_any_face_order(seed):
    # the lower box's top coincides with the upper box's bottom: the upper box (2.5 m,
    # taller than the character) holds it, so a capsule there touches nothing, yet it is
    # no place. A ray up from it meets two faces at the same height; whichever a query
    # returns first, the face is buried
    base = stacked_scene()
    order = np.random.default_rng(seed).permutation(base.n_triangles) if seed else None
    mesh = stacked_scene(order)
    m = standable_map(mesh, S)
    lower_top = np.isclose(m.foot[:, 2], 0.5)
    assert lower_top.any() and (m.state[lower_top] == INSIDE).all()
    under = np.isclose(m.foot[:, 2], 0.0) & (np.abs(m.foot[:, 0]) < 1) & (
        np.abs(m.foot[:, 1]) < 1)
    assert (m.state[under] == INSIDE).all()
    res = stand_test(mesh)
    assert len(res.faces) == 0
    tops = [f for f in walkable_faces(mesh, S) if np.isclose(mesh.vertices[mesh.triangles[f],
                                                                             2], 0.5).all()]
    assert set(tops) <= set(res.buried.tolist())
    # the same map whatever the order: the same cells in the same states
    ref = standable_map(base, S)
    key = np.lexsort((ref.foot[:, 2], ref.foot[:, 1], ref.foot[:, 0]))
    got = np.lexsort((m.foot[:, 2], m.foot[:, 1], m.foot[:, 0]))
    assert m.foot[got] == pytest.approx(ref.foot[key])
    assert (m.state[got] == ref.state[key]).all()
    assert m.standable_area.sum() == pytest.approx(ref.standable_area.sum())


# ------------------------------------------------------------------ bug: beside pillars
def test_strips_between_pillars_are_standable_when_the_capsule_fits():
    # 0.8 m strips: the capsule (0.70 m) fits along their middle though no cell centre may
    # lie there (a free point within a cell of it is found by the push-out); 0.6 m strips
    # are cramped
    mesh = pillars_scene()
    m = standable_map(mesh, S)
    for width, y0 in PILLAR_ROWS:
        strip = np.zeros(m.face.size, bool)
        for k in range(8):
            x0 = 1.5 + k * (0.5 + width)
            strip |= (m.foot[:, 0] > x0) & (m.foot[:, 0] < x0 + width)
        strip &= (m.foot[:, 1] > y0 + 0.5) & (m.foot[:, 1] < y0 + 1.5) & (m.state != INSIDE)
        if width == 0.8:
            assert (m.state[strip] <= COVERED).all() and (m.state[strip] == FREE).any()
        else:
            assert (m.state[strip] == CRAMPED).all()
    res = stand_test(mesh)
    assert (res.position[:, 1] > 6.0).all()  # only the 0.6 m row


def test_the_controller_walks_the_strips_the_map_calls_standable():
    mesh = pillars_scene()
    paths = []
    for width, y0 in PILLAR_ROWS:
        x = 1.5 + 2 * (0.5 + width) + 0.5 * width
        paths.append([[x, y0 - 1.0, 0.0], [x, y0 + 3.0, 0.0]])
    reports = walkthrough_many(mesh, paths, S)
    assert reports[0].reached_goal and not reports[1].reached_goal


# ------------------------------------------------------------------ headroom in the map
def test_headroom_is_part_of_the_map():
    # a slab 1.7 m up (the character is 1.8 m tall) leaves the floor under it cramped and
    # low; 1.9 m is enough
    mesh = slab_scene()
    m = standable_map(mesh, S)
    floor = np.isclose(m.foot[:, 2], 0.0) & (m.foot[:, 1] > 2.0) & (m.foot[:, 1] < 4.0)
    under_low = floor & (m.foot[:, 0] > 1.5) & (m.foot[:, 0] < 3.5)
    under_high = floor & (m.foot[:, 0] > 6.5) & (m.foot[:, 0] < 8.5)
    assert (m.state[under_low] == CRAMPED).all()
    assert m.clearance[under_low] == pytest.approx(np.full(under_low.sum(), 1.7))
    assert (m.state[under_high] == FREE).all()
    low = headroom_audit(mesh)
    assert (low.position[:, 0] < 4.5).all() and low.clearance == pytest.approx(
        np.full(len(low.faces), 1.7))
    assert set(low.faces.tolist()) <= set(stand_test(mesh).faces.tolist())
    _confirm_cramped(mesh, m.foot[under_low][::7])
    ctrl = CharacterController(mesh)
    for p in m.foot[under_high][::7]:
        r = ctrl.ground(p)
        assert np.linalg.norm(r.position - p) <= 2 * S.skin_width and r.grounded


def test_a_stair_flight_is_standable_on_its_nosings():
    # the 0.30 m flight of the block: the capsule stands on each nosing in front of the
    # next riser (a raised rest); the 0.45 m flight's last tread, in front of a riser taller
    # than a step, is cramped
    mesh = TriangleMesh(*scenes.stairs_ramps_block())
    m = standable_map(mesh, S)
    flight = (m.foot[:, 0] > 1.0) & (m.foot[:, 0] < 2.5) & (m.foot[:, 2] > 0.1)
    f30 = flight & (m.foot[:, 1] > 4.7) & (m.foot[:, 1] < 5.8) & (m.state != INSIDE)
    assert (m.state[f30] == FREE).all()
    raised = f30 & (m.stand[:, 2] > m.foot[:, 2] + 0.01)
    assert raised.any()
    assert (m.stand[raised, 2] - m.foot[raised, 2] <= S.step_height + 1e-6).all()
    f45 = flight & (m.foot[:, 1] > 6.7) & (m.foot[:, 1] < 7.8) & np.isclose(m.foot[:, 2], 1.8) & (
        m.state != INSIDE)
    assert (m.state[f45] == CRAMPED).all()


def test_the_stacked_scene_defeats_the_first_hit_ray():
    # the scene reproduces the bug: the first face a ray up meets from the lower box's top
    # (or the floor under the stack) depends on the order of the faces
    from capsule_collision.core.checks.audits.common import column_rays, column_reach

    u = np.array([0.0, 0.0, 1.0])
    p = np.array([[0.3, 0.2, 0.5], [0.0, 0.0, 0.0]])
    seen = set()
    for seed in range(5):
        base = stacked_scene()
        order = np.random.default_rng(seed).permutation(base.n_triangles) if seed else None
        mesh = stacked_scene(order)
        seen.add(tuple(column_rays(mesh, p, u, column_reach(mesh, p, u))[2].tolist()))
    assert len(seen) > 1
