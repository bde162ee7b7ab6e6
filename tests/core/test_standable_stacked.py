"""Floor inside stacked, overlapping solids, and floor under a low slab (issue 24, section 5).

Brush-built levels keep every brush closed and let brushes overlap: on OpenArena's
oa_bases7 a 40 x 32 x 2.8 m brush lies on the floor with a second brush overlapping its
top, so the lowest face above
the floor is the upper brush's bottom (facing down) and "the lowest face above faces up"
called 25,442 cells of floor inside the lower brush standable (FREE: the capsule touches
nothing there, the brush is that large). The winding number along the ray up counts each
solid once (core/checks/audits/cells.py ``inside_solids``).

Under a slab 0.3-0.6 m over the floor whose top is within ``step_height``, the capsule
blocked on the floor rested raised on the slab's top (the rest meant for a stair nosing) or
was covered by a body standing on it, so the floor under the slab was FREE and headroom
called it clear: a raised rest or a cover counts only where the ray up from the floor
reaches the standing foot (core/checks/audits/standable.py). Floor under such a slab less
than a radius up is sealed (buried), from a radius up a slot (cramped)."""

import sys
from pathlib import Path

import numpy as np
import pytest
from capsule_collision import core
from capsule_collision.core.checks.audits import standable as sm
from capsule_collision.core.checks.audits.cells import Records, inside_solids
from scenes import box  # the one home of the hand-built scene parts


def _mesh(*boxes):
    verts, tris, off = [], [], 0
    for lo, hi in boxes:
        v, t = box(lo, hi)
        verts.append(v)
        tris.append(t + off)
        off += len(v)
    return core.TriangleMesh(np.concatenate(verts), np.concatenate(tris))


GROUND = ((-10, -10, -1), (10, 10, 0))
LOWER = ((-5, -5, 0), (5, 5, 3))  # lies on the ground: its bottom coincides with the floor


def _ground_states(mesh, x_range):
    m = sm.standable_map(mesh, core.ControllerSettings())
    on = ((np.abs(m.foot[:, 2]) < 1e-9) & (m.foot[:, 0] > x_range[0])
          & (m.foot[:, 0] < x_range[1]) & (np.abs(m.foot[:, 1]) < 4.5))
    return np.bincount(m.state[on], minlength=4)


@pytest.mark.parametrize("upper_bottom", [2.5, 2.999, 1.0])
def test_floor_under_a_brush_whose_top_an_overlapping_brush_covers_is_inside(upper_bottom):
    """The upper brush overlaps the lower one's top over x < 0 from ``upper_bottom`` up:
    every cell of ground under the lower brush is INSIDE, none FREE or COVERED."""
    mesh = _mesh(GROUND, LOWER, ((-5, -5, upper_bottom), (0, 5, 5)))
    states = _ground_states(mesh, (-4.5, 4.5))
    assert states[sm.FREE] == states[sm.COVERED] == states[sm.CRAMPED] == 0, states
    assert states[sm.INSIDE] > 0


def test_floor_beside_the_stack_stays_free():
    """The control: the same ground beyond the lower brush (x in 6..9) is free."""
    mesh = _mesh(GROUND, LOWER, ((-5, -5, 2.5), (0, 5, 5)))
    states = _ground_states(mesh, (6.0, 9.0))
    assert states[sm.INSIDE] == 0 and states[sm.FREE] > 0, states


def test_floor_under_a_box_on_stilts_over_a_duplicated_top_is_not_inside():
    """A box floating 3 m over the floor whose top face is duplicated (two objects at one
    place): the floor under it is open (the duplicate counts once)."""
    v, t = box((-2, -2, 3), (2, 2, 4))
    top = t[[2, 3]]  # the +z face's two triangles, again
    ground_v, ground_t = box(*GROUND)
    mesh = core.TriangleMesh(np.concatenate([ground_v, v]),
                             np.concatenate([ground_t, t + 8, top + 8]))
    states = _ground_states(mesh, (-1.5, 1.5))
    assert states[sm.INSIDE] == 0 and states[sm.FREE] > 0, states


@pytest.mark.parametrize("slab", [(0.36, 0.45), (0.40, 0.455), (0.35, 0.36)])
def test_floor_under_a_low_slab_is_cramped_and_its_headroom_reported(slab):
    """A 3 x 3 m slab ``slab`` (bottom, top) over the ground, its top within the 0.46 m step
    and its bottom at least a radius (0.35 m) up: the floor under it is CRAMPED (its middle
    cells), the headroom audit reports it with the slab's bottom as clearance, and the
    slab's top stays standable."""
    s = core.ControllerSettings(step_height=0.46)
    mesh = _mesh(GROUND, ((-1.5, -1.5, slab[0]), (1.5, 1.5, slab[1])))
    m = sm.standable_map(mesh, s)
    mid = (np.abs(m.foot[:, 2]) < 1e-9) & (np.abs(m.foot[:, :2]) < 1.0).all(1)
    assert mid.any() and (m.state[mid] == sm.CRAMPED).all(), np.bincount(m.state[mid])
    top = (np.abs(m.foot[:, 2] - slab[1]) < 1e-9) & (np.abs(m.foot[:, :2]) < 1.0).all(1)
    assert top.any() and (m.state[top] == sm.FREE).all()
    head = core.headroom_audit(mesh, s)
    assert head.faces.size > 0
    np.testing.assert_allclose(head.clearance, slab[0], atol=1e-6)


@pytest.mark.parametrize("slab", [(0.05, 0.15), (0.30, 0.45), (0.349, 0.40)])
def test_floor_sealed_under_a_slab_lower_than_the_radius_is_buried(slab):
    """A slab less than a radius (0.35 m) over the floor, its top within the step: a trim or
    a second floor laid on the first (OpenArena's delta has 4,400 m2 of it 5-13 cm under
    its floors). The floor under it is buried (INSIDE), not a stand or headroom finding;
    the slab's top stays standable."""
    s = core.ControllerSettings(step_height=0.46)
    mesh = _mesh(GROUND, ((-1.5, -1.5, slab[0]), (1.5, 1.5, slab[1])))
    m = sm.standable_map(mesh, s)
    under = (np.abs(m.foot[:, 2]) < 1e-9) & (np.abs(m.foot[:, :2]) < 1.3).all(1)
    assert under.any() and (m.state[under] == sm.INSIDE).all(), np.bincount(m.state[under])
    top = (np.abs(m.foot[:, 2] - slab[1]) < 1e-9) & (np.abs(m.foot[:, :2]) < 1.0).all(1)
    assert top.any() and (m.state[top] == sm.FREE).all()
    assert core.headroom_audit(mesh, s).faces.size == 0
    assert core.stand_test(mesh, s).faces.size == 0


def test_a_stair_nosing_still_holds_the_floor_in_front_of_its_riser():
    """The control of the raised rest: a 0.3 m step (a box on the ground, nothing over the
    ground) leaves no cramped floor in front of its riser."""
    s = core.ControllerSettings(step_height=0.35)
    mesh = _mesh(GROUND, ((0.0, -3.0, 0.0), (3.0, 3.0, 0.3)))
    m = sm.standable_map(mesh, s)
    ground = (np.abs(m.foot[:, 2]) < 1e-9) & (m.state != sm.INSIDE)
    assert ground.any() and not (m.state[ground] == sm.CRAMPED).any()
    assert core.headroom_audit(mesh, s).faces.size == 0


@pytest.mark.parametrize("sides, inside", [
    ((-1, 1, 1), True),   # above: the upper bottom, the lower top, the upper top
    ((-1, 1), False),     # a closed box above: outside
    ((1,), True),         # an open floor plane above (the old rule)
    ((-1,), False),       # a ceiling plane above
    ((-1, -1, 1), False),  # a duplicated bottom (coincident): counted once, then its top
])
def test_inside_solids_counts_each_solid_once(sides, inside):
    heights = np.arange(1, len(sides) + 1, dtype=float)
    if sides == (-1, -1, 1):
        heights = np.array([1.0, 1.0, 2.0])
    k = len(sides)
    rec = Records(np.arange(k, dtype=np.int64), np.zeros(k, np.int64), heights,
                  np.array(sides, np.int8))
    got = inside_solids(rec, np.array([0]), np.array([0.5]), 1e-6)
    assert bool(got[0]) is inside


sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tools"))
import real_levels  # noqa: E402


def test_oa_bases7_stacked_brushes_and_a_slot_under_a_low_brush():
    """oa_bases7 with Quake's player, against Quake's own brush test (../shared/real_levels/
    q3bsp.py ``box_depths``). Brushes 220 and 605 (40 x 32 m, z -11.38..-8.53 m) have their
    tops inside brushes 190 and 574: Quake puts these ground points inside brush 220, and the
    map calls them buried, not standable (25,442 cells were FREE). At (98.635, 4.78, 1.204)
    the floor runs 0.42 m under brush 72, where Quake's player box does not fit: cramped,
    and headroom reports its face (that floor was covered from the brush's top, 0.42 m up,
    and called clear)."""
    lv = real_levels.load("oa_bases7", clip=True)
    mesh = core.TriangleMesh(lv.vertices, lv.triangles)
    quake = core.ControllerSettings(**real_levels.QUAKE_PLAYER)
    m = sm.standable_map(mesh, quake)
    points = np.array([[80.35, -15.98], [71.8, 1.6], [25.66, 1.63], [82.2, 10.8]])
    cells = m.grid.cell_of(np.c_[points, np.full(len(points), -11.3792)])
    for cell in cells:
        on = (m.cell == cell) & (np.abs(m.height + 11.3792) < 1e-3)
        assert on.any() and (m.state[on] == sm.INSIDE).all(), m.state[on]
    slot = np.array([98.635, 4.782, 1.204])
    on = (m.cell == m.grid.cell_of(slot[None])[0]) & (np.abs(m.height - slot[2]) < 1e-2)
    assert on.any() and (m.state[on] == sm.CRAMPED).all(), m.state[on]
    np.testing.assert_allclose(m.clearance[on], 0.422, atol=0.01)
    head = core.headroom_audit(mesh, quake)
    face = int(m.face[on][0])
    assert face in head.faces  # its lowest clearance may lie elsewhere on the face
    assert head.clearance[list(head.faces).index(face)] <= 0.422 + 0.01
