"""Level audits: every finding is a place where the character really has the problem.

Scenes: the bundled sample level; a Blender-like export (floor of two triangles, a closed
six-riser staircase, a landing, two ramps, a wall); a floor partly under a landing; four
rooms with one real problem each (tests/core/audit_scenes.py). Findings of the one-problem scene
are confirmed with the controller (a capsule placed there, a short walk across it).
"""

import warnings

import numpy as np
import pytest
from audit_scenes import (
    ROOM_W,
    ROOMS,
    blender_stairs_scene,
    bumpy_floor,
    landing_over_floor_scene,
    low_plates_scene,
    merge,
    one_problem_scene,
    plates_scene,
    quad,
    roofed_hall_scene,
    slot_beside_box_scene,
    staircase,
)
from capsule_collision.core.checks.audits import (
    headroom_audit,
    ledge_audit,
    stair_audit,
    stand_test,
)
from capsule_collision.core.checks.audits.common import (
    column_rays,
    column_reach,
    contacts_chunks,
    face_candidates,
    face_classes,
    walkable_faces,
)
from capsule_collision.core.checks.audits.screen import open_faces
from capsule_collision.core.checks.walkability import WALKABLE
from capsule_collision.core.constants import SUPPORT_MIN_COS
from capsule_collision.core.controller.controller import CharacterController, ControllerSettings
from capsule_collision.core.mesh.triangle_mesh import TriangleMesh
from capsule_collision.core.walk.walkthrough import walkthrough

S = ControllerSettings()
# The old bundled sample: the benchmark's stairs-and-ramps block (tools/scenes.py)
import scenes  # noqa: E402


@pytest.fixture(scope="module")
def sample():
    return TriangleMesh(*scenes.stairs_ramps_block())


@pytest.fixture(scope="module")
def rooms():
    return one_problem_scene()


def _in_room(pos, name):
    x0, x1 = ROOMS[name]
    return (pos[:, 0] >= x0) & (pos[:, 0] <= x1)


# ------------------------------------------------------------------ the sample level
def test_sample_stand_findings_are_the_low_ceiling_and_the_narrow_slots(sample):
    # the 1.5 m slab (x 9..13, y 4..7), the 0.4-0.5 m slots between the staircases and
    # between the ramps (the 0.70 m wide capsule fits in neither), and the tread of the
    # 45 cm flight in front of its last riser (0.30 m deep, 0.45 m riser ahead)
    res = stand_test(sample)
    p = res.position
    ceiling = (p[:, 0] > 9) & (p[:, 0] < 13) & (p[:, 1] > 4) & (p[:, 1] < 7)
    block = (p[:, 0] > 0.9) & (p[:, 0] < 6.5) & (p[:, 1] > 0.4) & (p[:, 1] < 10.1)
    assert (ceiling | block).all()
    # every face under the slab has a cramped part but one corner triangle lying wholly in
    # the border a capsule beside the slab stands over (was 70: a face counted as standable
    # when a capsule beyond its edge fitted, so the border row of faces was never reported)
    assert ceiling.sum() == 95
    assert (res.cramped_area > 0).all() and (res.depth > 0).all()
    assert len(np.unique(res.region[ceiling])) == 1  # one region under the slab
    assert res.region_area[res.region[ceiling][0]] == pytest.approx(10.33, abs=0.01)
    floor = block & np.isclose(p[:, 2], 0.0)
    slots = floor & (p[:, 0] < 3.0)  # between the staircases: y 2.0-2.5, 4.0-4.5, 6.0-6.5
    gaps = floor & (p[:, 0] > 4.0)  # between the ramps
    assert slots.sum() == 10 and gaps.sum() == 13
    y = p[slots, 1]
    assert (((y > 2.0) & (y < 2.5)) | ((y > 4.0) & (y < 4.5)) | ((y > 6.0) & (y < 6.5))).all()
    tread = block & np.isclose(p[:, 2], 1.8)  # the 45 cm flight's fourth tread
    assert tread.sum() == 6 and (np.abs(p[tread, 0] - 2.06) < 0.01).all()
    assert res.standable_area[tread] == pytest.approx(np.zeros(6))


def test_sample_headroom_is_only_under_the_slab(sample):
    res = headroom_audit(sample)
    p = res.position
    # the floor's 4 x 3 m under the slab, 0.5 m cells, but one corner triangle a capsule
    # beside the slab stands over (the same map as the stand test)
    assert len(res.faces) == 95
    assert ((p[:, 0] >= 9) & (p[:, 0] <= 13) & (p[:, 1] >= 4) & (p[:, 1] <= 7)).all()
    assert res.clearance == pytest.approx(np.full(95, 1.5))


def test_sample_stairs_flag_only_the_45cm_flight(sample):
    res = stair_audit(sample)
    assert len(set(res.flight.tolist())) == 4  # four staircases, one flight each
    assert np.unique(np.round(res.rise, 6)).tolist() == [0.1, 0.2, 0.3, 0.45]
    bad = res.findings
    assert res.rise[bad] == pytest.approx(np.full(len(bad), 0.45))
    assert len(set(res.step[bad].tolist())) == 5 and not res.too_shallow.any()
    finite = np.isfinite(res.tread_depth)
    assert res.tread_depth[finite] == pytest.approx(np.full(finite.sum(), 0.3))


def test_sample_ledges_are_real_drops_once_per_run(sample):
    res = ledge_audit(sample)
    assert (res.drop > S.step_height).all()
    border = np.isinf(res.drop)
    assert border.sum() == 4  # the level's four outer edges (the void beyond)
    assert np.isclose(res.position[border, 2], 0.0).all()
    # no ledge on the ground floor inside the level: the floor is one surface
    assert not np.isclose(res.position[~border, 2], 0.0).any()
    assert (res.length > 0).all() and res.edge_run.max() == len(res.faces) - 1
    # nothing on surfaces no character reaches: the slab's top (1.7 m), the corridor walls'
    # and the thin wall's tops (2.5 m), the treads of the 45 cm flight (no step up to them)
    assert len(res.faces) == 39 and (res.position[:, 2] < 1.6).all()


# ------------------------------------------------------------------ Blender-like export
def test_blender_staircase_is_one_flight_of_six_and_nothing_else():
    mesh = blender_stairs_scene()
    st = stair_audit(mesh)
    assert len(set(st.step.tolist())) == 6 and len(set(st.flight.tolist())) == 1
    assert st.rise == pytest.approx(np.full(len(st.riser), 0.2))
    assert len(st.findings) == 0
    assert len(stand_test(mesh).faces) == 0
    assert len(headroom_audit(mesh).faces) == 0


def test_floor_partly_under_a_landing_is_cramped_and_low_only_under_it():
    # the floor's two big triangles are judged by area: the part under the 1.0 m high
    # landing is cramped and low, the rest standable (was: neither, because a face counted
    # as standable when any point of it was)
    mesh = landing_over_floor_scene()
    res = stand_test(mesh)
    assert sorted(res.faces.tolist()) == [0, 1]
    assert (res.position[:, 0] > 0.0).all() and (res.position[:, 0] < 3.0).all()
    assert res.cramped_area.sum() == pytest.approx(27.7, abs=0.1)  # 3 x 10 m but the rims
    assert res.standable_area.sum() + res.cramped_area.sum() == pytest.approx(100.0, abs=0.6)
    low = headroom_audit(mesh)
    assert sorted(low.faces.tolist()) == [0, 1]
    assert low.clearance == pytest.approx([1.0, 1.0])


# ------------------------------------------------------------------ one real problem each
def test_one_problem_scene_stand_test(rooms):
    # the passage under the 1.2 m slab: every face under it has a cramped part (was 36, the
    # faces away from the open ends: a face counted as standable when a capsule outside the
    # passage overlapped its first cells); the cramped region stops where the body of a
    # capsule standing outside reaches in. The 5 cm tread is the stair audit's finding (too
    # shallow), not the stand test's: a capsule perches on its edge, axis over the tread
    # below, as the controller stands on an edge while its axis is within radius.
    res = stand_test(rooms)
    p = res.position
    passage = _in_room(p, "passage")
    assert passage.all() and passage.sum() == 48
    x0 = ROOMS["passage"][0]
    assert ((p[:, 0] > x0 + 3.2) & (p[:, 0] < x0 + 4.8)).all()
    assert len(res.region_area) == 1 and res.region_area[0] == pytest.approx(5.08, abs=0.01)


def test_one_problem_scene_headroom(rooms):
    res = headroom_audit(rooms)
    x0 = ROOMS["passage"][0]
    assert len(res.faces) == 48  # 2 x 3 m under the 1.2 m slab
    assert ((res.position[:, 0] >= x0 + 3.0) & (res.position[:, 0] <= x0 + 5.0)).all()
    assert res.clearance == pytest.approx(np.full(48, 1.2))


def test_one_problem_scene_stairs(rooms):
    res = stair_audit(rooms)
    bad = res.findings
    high = bad[res.too_high[bad]]
    shallow = bad[res.too_shallow[bad]]
    assert len(set(res.step[high].tolist())) == 1 and len(set(res.step[shallow].tolist())) == 1
    assert res.rise[high] == pytest.approx(np.full(len(high), 0.45))
    assert _in_room(res.position[high], "riser").all()
    assert res.tread_depth[shallow] == pytest.approx(np.full(len(shallow), 0.05))
    assert _in_room(res.position[shallow], "tread").all()
    assert len(set(res.flight.tolist())) == 2


def test_one_problem_scene_ledges(rooms):
    res = ledge_audit(rooms)
    # the platform's edge beside the ramp (y 1..3) and the ramp's side: nothing else (the
    # treads above the 0.45 m riser cannot be reached)
    assert _in_room(res.position, "ledge").all()
    x0 = ROOMS["ledge"][0]
    edge = np.isclose(res.position[:, 0], x0 + 4.0) & (res.direction[:, 0] < -0.9)
    assert edge.sum() == 1 and res.drop[edge] == pytest.approx([1.0])
    assert res.length[edge] == pytest.approx([ROOM_W])  # the box edge is one edge, y 0..3


def test_ledges_only_on_platforms_a_character_can_reach():
    # without the ramp the platform has no way up: its edges are not ledges
    res = ledge_audit(one_problem_scene(ramp_up=False))
    assert not _in_room(res.position, "ledge").any()
    res = ledge_audit(one_problem_scene())
    assert _in_room(res.position, "ledge").sum() >= 2  # platform edge and ramp side


# ------------------------------------------------------------------ the controller agrees
def test_controller_cannot_stand_where_the_stand_test_says(rooms):
    res = stand_test(rooms)
    ctrl = CharacterController(rooms)
    for p in res.position[::6]:
        m = ctrl.ground(p)
        moved = np.linalg.norm(m.position - p)
        assert moved > S.skin_width or m.depenetration > 0.0 or rooms.capsule_contacts(
            ctrl.capsule_at(m.position))


def test_controller_confirms_the_sample_stand_findings(sample):
    res = stand_test(sample)
    ctrl = CharacterController(sample)
    for p in res.position[res.position[:, 0] < 7.0]:  # the block's ground floor
        m = ctrl.ground(p)
        moved = np.linalg.norm(m.position - p)
        assert moved > S.skin_width or m.depenetration > 0.0 or sample.capsule_contacts(
            ctrl.capsule_at(m.position))


def test_walks_meet_the_problems_the_audits_report(rooms):
    x0 = ROOMS["riser"][0]
    rep = walkthrough(rooms, [[x0 + 1.0, 1.5, 0.0], [x0 + 6.0, 1.5, 0.0]])
    e = rep.first("step_too_high")
    assert e is not None and e.value == pytest.approx(0.45, abs=0.02) and not rep.reached_goal
    x0 = ROOMS["tread"][0]
    rep = walkthrough(rooms, [[x0 + 1.0, 1.5, 0.0], [x0 + 6.0, 1.5, 0.0]])
    assert not rep.reached_goal
    x0 = ROOMS["passage"][0]
    rep = walkthrough(rooms, [[x0 + 1.0, 1.5, 0.0], [x0 + 7.0, 1.5, 0.0]])
    assert rep.first("ceiling_too_low") is not None and not rep.reached_goal
    x0 = ROOMS["ledge"][0]
    # up the ramp from the floor, across the platform and off its edge
    rep = walkthrough(rooms, [[x0 + 0.5, 0.5, 0.0], [x0 + 5.0, 0.5, 1.0],
                              [x0 + 6.0, 2.0, 1.0], [x0 + 2.0, 2.0, 1.0]])
    e = rep.first("fell")
    assert e is not None and e.value > S.step_height  # a fall, not a step down


# ------------------------------------------------------------------ hygiene
def test_stair_audit_quiet_when_probe_rays_miss():
    # a lone wall with no floor: every probe ray misses (was a RuntimeWarning)
    from audit_scenes import box
    mesh = TriangleMesh(*merge([box((0, 0, 0), (0.2, 3, 0.3))]))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        res = stair_audit(mesh)
        ledge_audit(mesh)
    assert len(res.riser) == 0


def test_stand_test_rejects_bad_faces(rooms):
    with pytest.raises(ValueError, match="faces"):
        stand_test(rooms, faces=[rooms.n_triangles])
    with pytest.raises(ValueError, match="faces"):
        stand_test(rooms, faces=[[0, 1]])


# ------------------------------------------------------------------ named regressions
def test_a_floor_whose_centroids_are_inside_a_box_is_judged_at_its_free_slot():
    # the centroids (and most candidates) lie inside the 3 m box, where a capsule touches
    # nothing; they are not places a character can be. Outside, the 0.5 m slot is too narrow
    mesh = slot_beside_box_scene()
    res = stand_test(mesh)
    assert sorted(res.faces.tolist()) == [0, 1]
    assert (res.position[:, 0] < 0.5).all() and (res.depth > 0).all()
    ctrl = CharacterController(mesh)
    for p in res.position:
        m = ctrl.ground(p)
        assert np.linalg.norm(m.position - p) > S.skin_width or m.depenetration > 0.0


def test_walkable_plates_touching_the_capsule_from_the_side_block_it():
    mesh = plates_scene()
    res = stand_test(mesh)
    # the strip's 6 cells (12 triangles) all have cramped parts (was 8: the end cells
    # counted as standable because a capsule with its axis beyond the floor's end, over
    # nothing, fitted)
    p = res.position
    assert len(res.faces) == 12
    assert ((p[:, 1] > 0.0) & (p[:, 1] < 0.5) & (p[:, 0] > 0.0) & (p[:, 0] < 3.0)).all()
    classes = face_classes(mesh, S)
    assert (classes[res.blocker] == WALKABLE).all()  # the plates, not the floor
    assert len(res.buried) == 96  # the floor under the one-sided plates (seen from behind)


def _centroid_free(mesh, faces):
    """Exact: the capsule resting at each face's centroid is free and outside solids."""
    u = S.up_vector
    foot = face_candidates(mesh, faces)[:, 0]
    n = mesh.normals[faces]
    a = foot + n * (S.radius + S.skin_width)
    q, tri, _d, normal = contacts_chunks(mesh, a, a + u * (S.height - 2 * S.radius), S.radius)
    classes = face_classes(mesh, S)
    blocks = (classes[tri] != WALKABLE) | (normal @ u <= SUPPORT_MIN_COS)
    blocked = np.zeros(faces.size, bool)
    blocked[q[blocks]] = True
    clear, _t, inside = column_rays(mesh, foot, u, column_reach(mesh, foot, u))
    return ~blocked & ~inside & (clear >= S.height)


@pytest.mark.parametrize("scene", ["sample", "rooms", "blender", "landing", "slot", "plates",
                                   "hall", "low", "bumpy"])
def test_the_screen_clears_only_faces_the_exact_test_finds_free(scene, sample, rooms):
    mesh = {"sample": sample, "rooms": rooms, "blender": blender_stairs_scene(),
            "landing": landing_over_floor_scene(), "slot": slot_beside_box_scene(),
            "plates": plates_scene(), "hall": roofed_hall_scene(), "low": low_plates_scene(),
            "bumpy": bumpy_floor()}[scene]
    faces = walkable_faces(mesh, S)
    cleared = open_faces(mesh, faces, S, face_classes(mesh, S))
    assert _centroid_free(mesh, faces[cleared]).all()
    if scene == "bumpy":  # open ground: almost no face needs a mesh query
        free = _centroid_free(mesh, faces)
        assert cleared.sum() >= 0.9 * free.sum()


def test_risers_of_two_staircases_side_by_side_are_not_one_riser():
    """Regression (found on the sample level): two staircases with risers in the same plane at
    the same heights, 8 m apart, were grouped as one riser, so the narrow-tread staircase's
    0.08 m treads were reported on the deep-tread one too. A riser's triangles must touch."""
    deep = staircase(2.0, 0.0, 2.0, [0.2] * 4, [0.4] * 4)
    narrow = staircase(2.0, 8.0, 10.0, [0.2] * 4, [0.4, 0.08, 0.08, 0.08])
    floor = [quad((-2, -2, 0), (12, -2, 0), (12, 12, 0), (-2, 12, 0))]
    mesh = TriangleMesh(*merge(deep + narrow + floor))
    r = stair_audit(mesh, ControllerSettings())
    y = mesh.vertices[mesh.triangles[r.riser]].mean(1)[:, 1]
    assert (y < 5).any() and (y > 5).any()  # both flights have risers
    assert not r.too_shallow[y < 5].any()  # the deep flight's treads are 0.4 m
    assert r.too_shallow[y > 5].any()
    assert not np.isin(r.flight[y < 5], r.flight[y > 5]).any()  # two flights, not one
