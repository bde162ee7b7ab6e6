"""Reachability (core/reachability.py): the standable map flood-filled from spawns over the
controller's moves, checked against the controller itself.

Scenes (tests/reach_scenes.py): platforms 0.34 m and 0.36 m high (either side of the 0.35 m
step), decks across gaps either side of the jump distance, a pit with no way out beside a
platform reached only by its ramp, and the stairs-and-ramps block (tools/scenes.py). Every
verdict is confirmed by walking (core.walkthrough) or jumping (CharacterController.move, a
frame at a time) there.
"""

import math

import numpy as np
import pytest
import scenes
from capsule_collision.core import reachability
from capsule_collision.core.checks.audits.common import raycast_chunks
from capsule_collision.core.checks.reach_explain import SIGHT_PIECE, sight_blocked
from capsule_collision.core.checks.reach_links import FALL, JUMP, STEP_DOWN, STEP_UP, WALK
from capsule_collision.core.checks.reachability import (
    CRAMPED_CELL,
    INSIDE_CELL,
    ISLAND,
    REACHABLE,
    TRAP,
    mutual_components,
    square_cells,
    triangle_classes,
)
from capsule_collision.core.controller.controller import CharacterController, ControllerSettings
from capsule_collision.core.mesh.triangle_mesh import TriangleMesh
from capsule_collision.core.walk.walkthrough import walkthrough_many
from reach_scenes import gap_scene, pit_scene, room_scene, slot_scene, steps_scene

S = ControllerSettings()
JUMPER = S.replace(jump_height=1.0)


def _jump(mesh, s, foot, direction, dt=1.0 / 60.0, t_max=3.0):
    """Foot where a jump from ``foot`` steering along ``direction`` at ``speed`` lands: the
    controller moved a frame at a time, take-off speed sqrt(2 g jump_height), gravity."""
    ctrl = CharacterController(mesh, s)
    pos = ctrl.ground(foot).position
    vz = math.sqrt(2.0 * s.gravity * s.jump_height)
    airborne = False
    for _ in range(int(t_max / dt)):
        m = ctrl.move(pos, np.asarray(direction, float) * s.speed * dt + [0.0, 0.0, vz * dt])
        pos = m.position
        airborne |= m.ground_state == "in_air"
        if airborne and m.grounded:
            return pos
        vz -= s.gravity * dt
    return pos


def _interior(res, cls, margin=1.0):
    """FREE cells of class ``cls`` at least ``margin`` m (horizontally) from every cell of
    another class on their floor."""
    pts = res.cell_points
    free = res.standable.state == 0
    idx = np.flatnonzero(free & (res.cell_class == cls))
    other = np.flatnonzero((res.cell_class != cls) & (res.cell_class != INSIDE_CELL))
    keep = []
    for i in idx[:: max(1, idx.size // 200)]:
        d = np.hypot(*(pts[other, :2] - pts[i, :2]).T)
        dz = np.abs(pts[other, 2] - pts[i, 2])
        if not ((d < margin) & (dz < 0.5)).any():
            keep.append(i)
    return np.array(keep, np.int64)


# ------------------------------------------------------------------ steps
def test_steps_either_side_of_the_step_height():
    mesh = steps_scene(0.34, 0.36)
    res = reachability(mesh, [[1.0, 4.0, 0.0]])
    assert res.can_reach([[6.0, 2.0, 0.34], [6.0, 6.0, 0.36], [1.0, 1.0, 0.0]]).tolist() == [
        True, False, True]
    assert len(res.islands) == 1 and res.islands[0].area == pytest.approx(12.0, abs=0.01)
    assert res.islands[0].point[2] == pytest.approx(0.36)
    assert len(res.traps) == 0
    assert (res.moves.kind == STEP_UP).any()
    reps = walkthrough_many(mesh, [[[1.0, 2.0, 0.0], [6.0, 2.0, 0.34]],
                                   [[1.0, 6.0, 0.0], [6.0, 6.0, 0.36]]], S)
    assert reps[0].reached_goal
    assert not reps[1].reached_goal and reps[1].first("step_too_high") is not None


# ------------------------------------------------------------------ gaps and jumps
@pytest.mark.parametrize("gap, crosses", [(3.5, True), (4.7, False)])
def test_gaps_either_side_of_the_jump_distance(gap, crosses):
    mesh = gap_scene(gap)
    far = [[7.5 + gap, 2.0, 3.0]]
    pit = [[5.0 + 0.5 * gap, 2.0, 0.0]]
    walker = reachability(mesh, [[1.0, 2.0, 3.0]], S)
    assert walker.can_reach(far).tolist() == [False]  # no jumps: the far deck is an island
    assert walker.can_reach(pit).tolist() == [True]  # one way down
    assert len(walker.traps) == 1 and walker.traps[0].point[2] == pytest.approx(0.0, abs=0.05)
    res = reachability(mesh, [[1.0, 2.0, 3.0]], JUMPER)
    assert res.can_reach(far).tolist() == [crosses]
    if crosses:
        jumps = res.moves.kind == JUMP
        assert (res.standable.stand[res.moves.dst[jumps], 0] > 5.0 + gap).any()
    # the controller agrees: from the deck's last free cell, jumping across
    edge = np.flatnonzero((res.cell_class == REACHABLE) & (res.standable.state == 0)
                          & np.isclose(res.standable.stand[:, 2], 3.0)
                          & (np.abs(res.cell_points[:, 1] - 2.0) < 0.1)
                          & (res.cell_points[:, 0] < 5.0))
    start = res.standable.stand[edge[np.argmax(res.cell_points[edge, 0])]]
    land = _jump(mesh, JUMPER, start, [1.0, 0.0, 0.0])
    assert (land[2] > 2.9) == crosses
    assert (land[0] > 5.0 + gap) == crosses


def test_a_jump_out_of_a_shallow_pit():
    # 1 m deep: the character jumps out (jump_height 1 m), so the pit is no trap
    mesh = gap_scene(2.5, height=1.0)
    assert len(reachability(mesh, [[1.0, 2.0, 1.0]], S).traps) == 1
    res = reachability(mesh, [[1.0, 2.0, 1.0]], JUMPER)
    assert len(res.traps) == 0 and len(res.islands) == 0
    land = _jump(mesh, JUMPER, [5.0 + 0.36, 2.0, 0.0], [-1.0, 0.0, 0.0])
    assert land[2] > 0.8  # on the deck (perched on its edge, axis just beyond it)


# ------------------------------------------------------------------ pits, drops, ramps
def test_a_pit_is_a_trap_and_a_drop_back_to_the_floor_is_not():
    mesh = pit_scene()
    res = reachability(mesh, [[1.0, 1.0, 0.0]])
    assert len(res.traps) == 1 and res.traps[0].area == pytest.approx(4.0, abs=0.05)
    assert res.traps[0].point[2] == pytest.approx(-1.5, abs=0.01)
    assert len(res.islands) == 0
    platform = [[8.5, 3.5, 1.0]]
    assert res.can_reach(platform).tolist() == [True]
    top = res.cell_class[np.isclose(res.cell_points[:, 2], 1.0)]
    assert (top == REACHABLE).all()  # the edge off the platform is one way, the ramp not
    assert ((res.moves.kind == FALL) & np.isclose(res.standable.stand[res.moves.src, 2],
                                                  1.0)).any()
    reps = walkthrough_many(mesh, [[[1.0, 1.0, 0.0], [3.0, 3.0, -1.5]],
                                   [[3.0, 3.0, -1.5], [1.0, 1.0, 0.0]],
                                   [[8.5, 3.5, 1.0], [8.5, 6.5, 0.0]]], S)
    assert reps[0].reached_goal and not reps[1].reached_goal and reps[2].reached_goal


def test_a_platform_reached_only_by_its_ramp():
    with_ramp = reachability(pit_scene(True), [[1.0, 1.0, 0.0]])
    without = reachability(pit_scene(False), [[1.0, 1.0, 0.0]])
    platform = [[8.5, 3.5, 1.0]]
    assert with_ramp.can_reach(platform).tolist() == [True]
    assert without.can_reach(platform).tolist() == [False]
    assert len(without.islands) == 1 and without.islands[0].area == pytest.approx(9.0)
    reps = walkthrough_many(pit_scene(False), [[[5.0, 2.5, 0.0], [8.5, 3.5, 1.0]]], S)
    assert not reps[0].reached_goal


# ------------------------------------------------------------------ the controller agrees
@pytest.mark.parametrize("scene", ["pit", "steps", "block"])
def test_sampled_moves_and_unreachable_pairs_agree_with_walks(scene):
    mesh = {"pit": lambda: pit_scene(False), "steps": steps_scene,
            "block": lambda: TriangleMesh(*scenes.stairs_ramps_block())}[scene]()
    spawn = {"pit": [1.0, 1.0, 0.0], "steps": [1.0, 4.0, 0.0], "block": [18.0, 10.0, 0.0]}
    res = reachability(mesh, [spawn[scene]])
    stand = res.standable.stand
    comp = mutual_components(res.cell_class.size, res.moves)
    mv = res.moves
    rng = np.random.default_rng(7)
    paths, expect = [], []
    # a sample of each kind of move: walks, steps up and down, and falls from one region to
    # another (places the character cannot walk back and forth between)
    for kind in (WALK, STEP_UP, STEP_DOWN, FALL):
        rows = np.flatnonzero((mv.kind == kind) & (res.cell_class[mv.src] <= TRAP)
                              & ((comp[mv.src] != comp[mv.dst]) | (kind != FALL)))
        for r in rng.choice(rows, min(4, rows.size), replace=False):
            paths.append([stand[mv.src[r]], stand[mv.dst[r]]])
            expect.append(True)
    # a reachable place to the middle of an island: no walk gets there
    here = _interior(res, REACHABLE)
    there = _interior(res, ISLAND)
    for _ in range(min(4, there.size)):
        a, b = rng.choice(here), rng.choice(there)
        paths.append([stand[a], stand[b]])
        expect.append(False)
    assert len(expect) >= 8
    reps = walkthrough_many(mesh, paths, S)
    assert [r.reached_goal for r in reps] == expect


# ------------------------------------------------------------------ results and arguments
def test_cells_for_the_overlay():
    mesh = slot_scene()
    res = reachability(mesh, [[1.0, 1.0, 0.0]])
    n = res.cell_points.shape[0]
    assert res.cell_class.shape == (n,) and res.cell_face.shape == (n,)
    assert res.cell_size == pytest.approx(S.radius / 2)
    assert set(np.unique(res.cell_class).tolist()) <= {REACHABLE, TRAP, ISLAND, CRAMPED_CELL,
                                                       INSIDE_CELL}
    cramped = res.cell_points[res.cell_class == CRAMPED_CELL]
    assert ((cramped[:, 1] > 4.75) & (cramped[:, 1] < 5.25)).all()  # the slot's middle
    # the floor but the walls' footprints (2 x 1.2 m^2) and the slot's cramped middle
    # (1.8 m^2); each cell stands for its face's area over its cells (a cell's worth)
    assert res.reachable_area == pytest.approx(100.0 - 1.8 - 2 * 1.2, abs=0.5)
    assert res.islands and [g.area for g in res.islands] == sorted(
        [g.area for g in res.islands], reverse=True)  # the wall tops, largest first


def _up_triangles(mesh, z, lo, hi):
    """Up-facing triangles with their centroid at height ``z`` inside the x-y box lo..hi."""
    c = mesh.vertices[mesh.triangles].mean(1)
    inside = (c[:, :2] > lo).all(1) & (c[:, :2] < hi).all(1)
    return np.flatnonzero((mesh.normals[:, 2] > 0.99) & np.isclose(c[:, 2], z) & inside)


def test_triangle_classes_colour_faces_by_their_best_class():
    mesh = steps_scene(0.34, 0.36)
    res = reachability(mesh, [[1.0, 4.0, 0.0]])
    cls = triangle_classes(res)
    assert cls.dtype == np.int8 and cls.shape == (mesh.n_triangles,)
    high = _up_triangles(mesh, 0.36, (4, 4.5), (8, 7.5))
    low = _up_triangles(mesh, 0.34, (4, 0.5), (8, 3.5))
    yard = _up_triangles(mesh, 0.0, (0, 0), (3.5, 8))
    assert high.size == 2 and (cls[high] == ISLAND).all()
    assert low.size == 2 and (cls[low] == REACHABLE).all()
    assert yard.size and (cls[yard] == REACHABLE).all()
    walls = np.flatnonzero(np.abs(mesh.normals[:, 2]) < 0.01)
    assert walls.size and (cls[walls] == -1).all()
    buried = _up_triangles(mesh, 0.0, (4.6, 5.1), (7.4, 6.9))  # floor inside the platform
    assert buried.size and (cls[buried] == -1).all()
    # the faces regions list are the faces coloured their class (or better)
    assert set(res.islands[0].faces.tolist()) == set(np.flatnonzero(cls == ISLAND).tolist())
    pit = reachability(pit_scene(), [[1.0, 1.0, 0.0]])
    pcls = triangle_classes(pit)
    assert (pcls[pit.traps[0].faces] == TRAP).all()
    bottom = _up_triangles(pit_scene(), -1.5, (2, 2), (4, 4))
    assert bottom.size == 2 and (pcls[bottom] == TRAP).all()


def test_square_cells_are_the_cramped_and_those_a_face_does_not_show():
    slot = reachability(slot_scene(), [[1.0, 1.0, 0.0]])
    sq = square_cells(slot)
    assert sq.any()
    np.testing.assert_array_equal(sq & (slot.cell_class != CRAMPED_CELL),
                                  np.zeros_like(sq))  # every square here is cramped
    np.testing.assert_array_equal(sq[slot.cell_class == CRAMPED_CELL], True)
    # a room walled off on the yard's own ground face: the face shows reachable, the room's
    # cells are an island drawn as squares where they are
    mesh = room_scene()
    res = reachability(mesh, [[2.0, 2.0, 0.0]])
    cls = triangle_classes(res)
    ground = _up_triangles(mesh, 0.0, (0, 0), (10, 10))
    assert ground.size == 2 and (cls[ground] == REACHABLE).all()
    sq = square_cells(res, cls)
    p = res.cell_points
    room = (p[:, :2] > 6.0).all(1) & (p[:, :2] < 9.0).all(1) & np.isclose(p[:, 2], 0.0)
    assert room.sum() > 200 and (res.cell_class[room] == ISLAND).all()
    np.testing.assert_array_equal(sq[room], True)
    outside = (p[:, :2] < 5.5).any(1) & np.isclose(p[:, 2], 0.0)
    assert not sq[outside].any()
    # one island: the room and the wall tops (a fall joins them), 9 + 3.96 m^2
    assert len(res.islands) == 1 and res.islands[0].area == pytest.approx(12.96, abs=0.2)


def test_spawns_off_the_map_reach_nothing_and_bad_arguments_are_named():
    mesh = steps_scene()
    res = reachability(mesh, [[50.0, 50.0, 0.0], [1.0, 4.0, 0.0]])
    assert res.spawn_cells[0] == -1 and res.spawn_cells[1] >= 0
    res = reachability(mesh, [[50.0, 50.0, 0.0]])
    assert res.reachable_area == 0.0 and len(res.reachable_faces) == 0
    assert not res.can_reach([[1.0, 4.0, 0.0]]).any()
    assert res.can_reach(np.zeros((0, 3))).shape == (0,)
    with pytest.raises(ValueError, match="spawns"):
        reachability(mesh, [[1.0, 4.0]])
    with pytest.raises(ValueError, match="spawns"):
        reachability(mesh, [[1.0, np.nan, 0.0]])
    with pytest.raises(ValueError, match="points"):
        res.can_reach([1.0, 2.0])


@pytest.mark.parametrize("bad", [-0.1, float("nan"), float("inf"), "x"])
def test_jump_height_is_validated(bad):
    with pytest.raises(ValueError, match="jump_height"):
        ControllerSettings(jump_height=bad)
    assert ControllerSettings().jump_height == 0.0
    assert ControllerSettings(jump_height=1).jump_height == 1.0


def test_the_block_from_its_floor():
    # islands: the slab's top, the 45 cm flight (its risers are too high), the corridor
    # walls' and the thin wall's tops; no traps (every drop lands on the floor)
    mesh = TriangleMesh(*scenes.stairs_ramps_block())
    res = reachability(mesh, [[18.0, 10.0, 0.0]])
    assert len(res.traps) == 0
    assert len(res.islands) == 5
    assert sorted(round(g.area, 2) for g in res.islands)[-1] == pytest.approx(12.0)  # slab
    assert res.can_reach([[2.35, 5.25, 1.5], [6.0, 1.25, 0.8]]).tolist() == [True, True]
    assert res.can_reach([[2.35, 7.25, 2.25], [11.0, 5.5, 1.7]]).tolist() == [False, False]


def _root(parent, x):
    while parent[x] != x:
        x = parent[x]
    return x


def test_components_match_a_union_find():
    # the run contraction (edges i - i+1 joined by a cumulative sum) gives the same
    # smallest-member labels as a plain union-find, on random graphs rich in such edges
    from capsule_collision.core.checks.audits.common import components

    rng = np.random.default_rng(3)
    for _ in range(100):
        n = int(rng.integers(0, 40))
        e = int(rng.integers(0, 60)) if n else 0
        a = rng.integers(0, max(n, 1), e)
        b = np.where(rng.random(e) < 0.5, np.minimum(a + 1, max(n - 1, 0)),
                     rng.integers(0, max(n, 1), e))
        parent = list(range(n))
        for x, y in zip(a.tolist(), b.tolist()):
            rx, ry = _root(parent, x), _root(parent, y)
            parent[max(rx, ry)] = min(rx, ry)
        roots = np.array([_root(parent, i) for i in range(n)], np.int64)
        assert components(n, a, b).tolist() == roots.tolist()


def test_an_engine_model_is_judged_by_the_exact_model_climbing_its_risers():
    """Issue 26 (reach_links.engine_step_rule): the exact model's map and moves, with the
    engine model's climb height for steps up. The 0.36 m platform the exact model cannot
    climb is reached under Jolt (climb 0.70 m); with both platforms within a step, the
    classes are the exact model's."""
    mesh = steps_scene()
    exact = reachability(mesh, [[1.0, 4.0, 0.0]], S)
    jolt = reachability(mesh, [[1.0, 4.0, 0.0]], S.replace(model="jolt"))
    assert exact.can_reach([[6.0, 6.0, 0.36]]).tolist() == [False]
    assert jolt.can_reach([[6.0, 6.0, 0.36], [6.0, 2.0, 0.34]]).tolist() == [True, True]
    low = steps_scene(0.2, 0.3)
    exact = reachability(low, [[1.0, 4.0, 0.0]], S)
    jolt = reachability(low, [[1.0, 4.0, 0.0]], S.replace(model="jolt"))
    assert jolt.reachable_area == exact.reachable_area
    assert (jolt.cell_class == exact.cell_class).all()


# ---------------------------------------------------------------- spawns above the floor


@pytest.mark.parametrize("above", [0.0, 0.61, 3.0])
def test_spawn_placed_above_the_floor_falls_to_the_floor_below(above):
    # issue 24: a real arena's spawns 0.61 m above the floor flooded nothing; the game drops
    # the player onto the floor below, and so does reachability (and says how far)
    mesh = pit_scene()
    res = reachability(mesh, [[10.5, 6.5, above]])
    assert res.spawn_cells[0] >= 0
    assert res.spawn_drop[0] == pytest.approx(above, abs=2 * S.skin_width)
    assert res.can_reach([[10.5, 6.5, 0.0]])[0]
    assert res.reachable_area > 50.0


def test_spawn_over_nothing_stands_on_no_floor():
    mesh = pit_scene()
    res = reachability(mesh, [[30.0, 30.0, 0.5], [10.5, 6.5, 0.0]])
    assert res.spawn_cells[0] == -1 and math.isnan(res.spawn_drop[0])
    assert res.spawn_cells[1] >= 0 and res.spawn_drop[1] == 0.0


def test_spawn_above_the_floor_beyond_the_fall_out_distance_stands_on_no_floor():
    from capsule_collision.core.walk.walker import FALL_OUT_OF_LEVEL_DISTANCE
    res = reachability(pit_scene(), [[10.5, 6.5, FALL_OUT_OF_LEVEL_DISTANCE + 2.0]])
    assert res.spawn_cells[0] == -1 and math.isnan(res.spawn_drop[0])


# ---------------------------------------------------------------- progress and cancel


class _Stop(Exception):
    pass


def test_progress_is_told_in_order_and_an_exception_from_it_stops_the_work():
    seen = []
    res = reachability(pit_scene(), [[10.5, 6.5, 0.0]], progress=seen.append)
    assert seen and seen == sorted(seen) and 0.0 <= seen[0] and seen[-1] <= 1.0
    assert res.reachable_area > 0.0

    def stop(fraction):
        if fraction > 0.0:
            raise _Stop

    mesh = pit_scene()
    with pytest.raises(_Stop):
        reachability(mesh, [[10.5, 6.5, 0.0]], progress=stop)
    # nothing half-built is kept with the mesh: the next call builds and answers in full
    again = reachability(mesh, [[10.5, 6.5, 0.0]])
    assert again.reachable_area == pytest.approx(res.reachable_area)


# ---------------------------------------------------------------- the map built tile by tile


@pytest.mark.parametrize("jump", [0.0, 1.0])
def test_flood_built_tile_by_tile_gives_the_whole_maps_answer(monkeypatch, jump):
    # issue 24 section 4: a big level is judged from the spawns outward; where both apply,
    # the reachable floor, traps and moves are exactly the whole map's
    import capsule_collision.core.checks.reachability as reach_mod
    from capsule_collision.core.checks.audits import window
    v, t = scenes.terrain(30, seed=1)
    s = S.replace(jump_height=jump)
    spawn = [[float(v[:, 0].mean()), float(v[:, 1].min()) + 2.0, 5.0]]
    whole = reachability(TriangleMesh(v, t), spawn, s)
    monkeypatch.setattr(reach_mod, "WINDOW_MIN_SPANS", 0)
    monkeypatch.setattr(reach_mod, "WINDOW_WHOLE_SHARE", 1.0)  # never give the window up
    monkeypatch.setattr(window, "TILE_CELLS", 8)  # several rounds of growth on a 7.5 m level
    mesh = TriangleMesh(v, t)
    tiled = reachability(mesh, spawn, s)
    assert not reach_mod.has_map(mesh, s)  # the window's answer, not the whole map's
    np.testing.assert_array_equal(tiled.reachable_faces, whole.reachable_faces)
    assert tiled.reachable_area == pytest.approx(whole.reachable_area, rel=1e-12)
    assert [r.area for r in tiled.traps] == pytest.approx([r.area for r in whole.traps])
    assert tiled.spawn_drop[0] == pytest.approx(whole.spawn_drop[0])


def _open_floor_with_a_post_a_hole_and_a_step():
    """20 x 20 m of open floor (four 1.5 m slabs, as pit_scene) around a 2 x 2 m hole over a
    pit 1.5 m down (a trap), with a 1 m post, a 0.3 m step whose edge lies 2 cm past a tile
    edge of 8-cell tiles (x = 5.6 m from the grid origin at -0.175 m) and a 0.5 m riser
    (an island)."""
    d = -1.5
    parts = [scenes.box((0, 0, d), (9, 20, 0)), scenes.box((11, 0, d), (20, 20, 0)),
             scenes.box((9, 0, d), (11, 9, 0)), scenes.box((9, 11, d), (11, 20, 0)),
             scenes.box((9, 9, d - 0.2), (11, 11, d)),
             scenes.box((3.0, 3.0, 0.0), (4.0, 4.0, 1.0)),  # the post
             scenes.box((5.445, 12.0, 0.0), (8.0, 16.0, 0.3)),  # the step near a tile edge
             scenes.box((14.0, 3.0, 0.0), (17.0, 6.0, 0.5))]  # the riser
    return TriangleMesh(*scenes.merge(parts))


@pytest.mark.parametrize("jump", [0.0, 1.0])
def test_window_and_whole_map_reach_the_same_cells_around_a_post_a_hole_and_a_step(
        monkeypatch, jump):
    # issue 24 section 4 regression: the map built tile by tile from the spawn outward (no
    # arcs flown over columns not built yet, the flood stopped only when nothing reached
    # lies near a tile not built) reaches exactly the cells the whole map does, where a
    # post, a hole with a pit under it and a step straddle tile edges
    import capsule_collision.core.checks.reachability as reach_mod
    from capsule_collision.core.checks.audits import window
    s = S.replace(jump_height=jump)
    spawn = [[1.0, 1.0, 0.0]]
    whole = reachability(_open_floor_with_a_post_a_hole_and_a_step(), spawn, s)
    monkeypatch.setattr(reach_mod, "WINDOW_MIN_SPANS", 0)
    monkeypatch.setattr(reach_mod, "WINDOW_WHOLE_SHARE", 1.0)
    monkeypatch.setattr(window, "TILE_CELLS", 8)
    mesh = _open_floor_with_a_post_a_hole_and_a_step()
    tiled = reachability(mesh, spawn, s)
    assert not reach_mod.has_map(mesh, reach_mod.engine_step_rule(s))  # it was the window

    def reached(res):
        on = res.cell_class <= TRAP
        h = np.round(res.cell_points[on, 2], 9)
        return set(zip(res.standable.cell[on].tolist(), h.tolist(),
                       res.cell_class[on].tolist()))

    assert reached(tiled) == reached(whole)
    np.testing.assert_array_equal(tiled.reachable_faces, whole.reachable_faces)
    assert tiled.reachable_area == pytest.approx(whole.reachable_area, rel=1e-12)
    assert [r.area for r in tiled.traps] == pytest.approx([r.area for r in whole.traps])
    assert len(whole.traps) == 1 and whole.traps[0].area == pytest.approx(4.0, rel=0.1)
    assert whole.can_reach([[7.0, 14.0, 0.3]])[0]  # the step is climbed
    assert whole.can_reach([[15.5, 4.5, 0.5]])[0] == (jump > 0)  # the riser only jumped


def test_window_on_open_floor_gives_up_for_the_whole_map(monkeypatch):
    # open floor keeps spilling out of the window: once a round would build more than
    # WINDOW_WHOLE_SHARE of the floor tiles, the whole map is built (and kept with the mesh
    # for the audits) and its answer is the answer, islands included
    import capsule_collision.core.checks.reachability as reach_mod
    from capsule_collision.core.checks.audits import window
    spawn = [[1.0, 1.0, 0.0]]
    whole = reachability(_open_floor_with_a_post_a_hole_and_a_step(), spawn)
    monkeypatch.setattr(reach_mod, "WINDOW_MIN_SPANS", 0)
    monkeypatch.setattr(window, "TILE_CELLS", 4)  # the first round builds 3 % of the tiles
    grown = []
    add = window.MapWindow.add
    monkeypatch.setattr(window.MapWindow, "add", lambda self, t: grown.append(1) or add(self, t))
    mesh = _open_floor_with_a_post_a_hole_and_a_step()
    res = reachability(mesh, spawn)
    assert grown  # the window started
    assert reach_mod.has_map(mesh, S)  # then gave up: the whole map, kept
    np.testing.assert_array_equal(res.cell_class, whole.cell_class)
    assert [r.area for r in res.islands] == [r.area for r in whole.islands]
    assert len(whole.islands) >= 2  # the post's top and the riser's


def test_flood_built_tile_by_tile_stays_inside_a_walled_yard_of_a_huge_level(monkeypatch):
    # the time follows the playable area: a walled yard inside a 420 x 490 m level builds a
    # few tiles around the yard, not the level's
    v, t, spawn = scenes.huge_bounds_level()
    mesh = TriangleMesh(v, t)
    res = reachability(mesh, [spawn + [0.0, 0.0, 0.5]])
    assert res.spawn_cells[0] >= 0 and res.spawn_drop[0] == pytest.approx(0.5, abs=0.05)
    assert 300.0 < res.reachable_area < 700.0
    assert res.standable.face.size < 120_000  # the whole map would hold millions of spans
    pts = res.cell_points[res.cell_class <= TRAP]
    assert (pts[:, :2].min(0) > [199.0, 239.0]).all() and (pts[:, :2].max(0) < [227, 259]).all()


# ---------------------------------------------------------------- islands and traps explained


def _platform(height):
    return TriangleMesh(*scenes.merge([scenes.grid(0, 12, 0, 8),
                                       scenes.box((6, 2, 0), (10, 6, height))]))


def test_island_behind_a_riser_says_riser_and_what_step_height_reaches_it():
    res = reachability(_platform(0.41), [[2.0, 2.0, 0.0]])
    (island,) = res.islands
    assert island.visible
    cause = island.causes[0]
    assert (cause.kind, cause.limit) == ("riser", S.step_height)
    assert cause.value == pytest.approx(0.41, abs=1e-6)
    assert cause.text.startswith("riser 0.41 m > step height 0.35 m at (")
    assert cause.point[2] == pytest.approx(0.41) and 6.0 <= cause.point[0] <= 10.0
    assert res.what_if == ("with step height 0.41 m (now 0.35 m): 1 island is reached",)
    # the setting it names reaches it
    assert not reachability(_platform(0.41), [[2.0, 2.0, 0.0]],
                            S.replace(step_height=0.411)).islands


def test_a_roof_is_an_island_nobody_sees_and_no_step_height_is_suggested():
    res = reachability(_platform(3.0), [[2.0, 2.0, 0.0]])
    (roof,) = res.islands
    assert not roof.visible
    assert roof.causes[0].kind == "riser" and roof.causes[0].value == pytest.approx(3.0)
    assert res.what_if == ()


def test_every_island_is_judged_in_view_or_not_not_only_the_explained(monkeypatch):
    """Regression (oa_koth1: 103 of 143 islands, past the 40 given causes, were called in
    view unjudged, a warning each): a 0.41 m platform in view and two 3 m roofs, with causes
    for the largest region only: each roof is still judged out of view."""
    import capsule_collision.core.checks.reach_regions as reach_module
    monkeypatch.setattr(reach_module, "REGIONS_EXPLAINED", 1)
    mesh = TriangleMesh(*scenes.merge([scenes.grid(0, 12, 0, 8),
                                       scenes.box((6, 2, 0), (10, 6, 0.41)),
                                       scenes.box((1, 5, 0), (3, 7, 3.0)),
                                       scenes.box((10.6, 0.4, 0), (12.0, 2.4, 3.0))]))
    res = reachability(mesh, [[2.0, 2.0, 0.0]])
    assert [round(r.point[2], 2) for r in res.islands] == [0.41, 3.0, 3.0]  # largest first
    assert [r.visible for r in res.islands] == [True, False, False]
    assert [bool(r.causes) for r in res.islands] == [True, False, False]


def test_deck_across_a_wide_gap_says_gap_and_its_pit_says_drop():
    res = reachability(gap_scene(2.3), [[2.5, 2.0, 3.0]])
    (deck,) = res.islands
    assert deck.visible
    gap = deck.causes[0]
    assert gap.kind == "gap" and gap.value == pytest.approx(2.3, abs=0.2)
    assert gap.limit == pytest.approx(2 * S.radius) and gap.text.startswith("gap 2.")
    (pit,) = res.traps
    assert pit.causes[0].kind == "drop" and pit.causes[0].value == pytest.approx(3.0)


def _roof_and_platform():
    return TriangleMesh(*scenes.merge([scenes.grid(0, 12, 0, 8),
                                       scenes.box((6, 2, 0), (10, 6, 0.41)),
                                       scenes.box((1, 5, 0), (3, 7, 3.0))]))


@pytest.mark.parametrize("mesh, spawn, seen, what_if", [
    (_roof_and_platform, [2.0, 2.0, 0.0], [True, False], 1),
    (lambda: gap_scene(2.3), [2.5, 2.0, 3.0], [True, True], 0)])
def test_unexplained_flood_has_the_same_cells_and_regions_but_no_causes(mesh, spawn, seen,
                                                                        what_if):
    """``explain=False`` (collision_diff's floods): the same cells, classes, moves and
    regions (faces, area, point) as the explained flood; no causes, no line of sight
    (every region left ``visible``) and no what-if sentence. Scenes: a 0.41 m platform in
    view and a 3 m roof out of view (islands); a deck across a wide gap and its pit (an
    island and a trap)."""
    full = reachability(mesh(), [spawn])
    fast = reachability(mesh(), [spawn], explain=False)
    assert np.array_equal(fast.cell_class, full.cell_class)
    assert np.array_equal(fast.cell_points, full.cell_points)
    assert np.array_equal(fast.reachable_faces, full.reachable_faces)
    assert fast.reachable_area == full.reachable_area and fast.arcs == full.arcs
    assert all(np.array_equal(a, b) for a, b in zip(fast.moves, full.moves, strict=True))
    for kind in ("islands", "traps"):
        a, b = getattr(fast, kind), getattr(full, kind)
        assert len(a) == len(b)
        for x, y in zip(a, b, strict=True):
            assert np.array_equal(x.faces, y.faces) and x.area == y.area
            assert np.array_equal(x.point, y.point)
            assert x.causes == () and x.visible and y.causes
    # what the explained flood says (the roof out of view, a step height that reaches the
    # platform) and the unexplained one leaves out
    assert [r.visible for r in full.islands + full.traps] == seen
    assert len(full.what_if) == what_if and fast.what_if == ()


@pytest.mark.parametrize("wall_x", [2 * SIGHT_PIECE, 2 * SIGHT_PIECE + 1e-9,
                                    2 * SIGHT_PIECE - 1e-9, 1.3 * SIGHT_PIECE])
def test_lines_of_sight_in_pieces_meet_what_the_whole_ray_meets(wall_x):
    """``sight_blocked`` casts a line SIGHT_PIECE metres at a time: a wall on the seam of two
    pieces (and a nanometre either side of it) or inside one is met exactly as the whole
    ray meets it; a line ending 1e-7 m short of the wall is not blocked, 1e-7 m past it is,
    as is a line three walls long; a line that passes above the wall is not."""
    wall = TriangleMesh(*scenes.box((wall_x, -2.0, 0.0), (wall_x + 0.2, 2.0, 2.0)))
    ends = [wall_x - 1e-7, wall_x + 1e-7, 3.0 * wall_x, wall_x - 0.5]
    o = np.array([[0.0, 0.0, 1.0]] * 4 + [[0.0, 0.0, 2.5]])
    d = np.array([[1.0, 0.0, 0.0]] * 5)
    length = np.array(ends + [3.0 * wall_x])
    got = sight_blocked(wall, o, d, length)
    t, _tri = raycast_chunks(wall, o, d, length)
    assert got.tolist() == np.isfinite(t).tolist() == [False, True, True, False, False]


def test_cause_is_exported_with_its_fields():
    from capsule_collision.core.checks.reachability import Cause
    assert Cause._fields == ("kind", "value", "limit", "point", "text")
