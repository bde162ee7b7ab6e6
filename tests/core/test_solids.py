"""core.mesh.solids and the capsule verdict it feeds: a capsule (or spawn) wholly inside a
closed solid touches no face, yet is penetrating ("buried"), with the solid and the way out;
open meshes and inward-wound rooms hold nothing. Ground truth on the shipped maps: Quake's own
brush test (../shared/real_levels/q3bsp.py box_depths)."""

import pathlib
import sys

import numpy as np
import pytest
from audit_scenes import box as open_box
from capsule_collision.core import Capsule, ControllerSettings, TriangleMesh
from capsule_collision.core.checks.report import check_level
from capsule_collision.core.checks.verdicts import (
    CapsuleCheck,
    capsule_verdict,
    capsule_verdicts,
)
from capsule_collision.core.mesh.solids import enclosing_solids
from scenes import box, grid, merge

R, H = 0.35, 1.8
CRATE = ((-2.0, -2.0, 0.0), (2.0, 2.0, 3.0))


def _crate_on_floor(top=True):
    crate = box(*CRATE) if top else open_box(*CRATE, top=False)
    return TriangleMesh(*merge([grid(-10, 10, -10, 10, z=0.0), crate]))


def test_centre_of_a_closed_box_is_inside_and_a_millimetre_outside_is_not():
    mesh = TriangleMesh(*box((0.0, 0.0, 0.0), (1.0, 1.0, 1.0)))
    got = enclosing_solids(mesh, [(0.5, 0.5, 0.5), (0.5, 0.5, 0.999), (0.5, 0.5, 1.001),
                                  (1.001, 0.5, 0.5), (-3.0, 0.5, 0.5)])
    assert (got[:2] >= 0).all() and (got[2:] == -1).all()
    # the named face is the one the point leaves through first: the top (normal +z) at 0.999
    np.testing.assert_allclose(mesh.normals[got[1]], (0.0, 0.0, 1.0))


def test_open_meshes_and_an_inward_wound_room_hold_nothing():
    floor = TriangleMesh(*grid(-5, 5, -5, 5, z=0.0))
    assert enclosing_solids(floor, [(0.0, 0.0, -0.5), (0.0, 0.0, 0.5)]).tolist() == [-1, -1]
    v, t = box((-5.0, -5.0, 0.0), (5.0, 5.0, 3.0))
    room = TriangleMesh(v, t[:, ::-1])  # normals inward: its inside is the level
    assert enclosing_solids(room, [(0.0, 0.0, 1.5)]).tolist() == [-1]
    # two overlapping crates: inside both counts once, and the point is still inside
    two = TriangleMesh(*merge([box((0, 0, 0), (2, 2, 2)), box((1, 1, 1), (3, 3, 3))]))
    assert (enclosing_solids(two, [(1.5, 1.5, 1.5), (2.5, 2.5, 2.5)]) >= 0).all()


def test_capsule_wholly_inside_a_crate_is_buried_with_the_solid_and_the_way_out():
    mesh = _crate_on_floor()
    cap = Capsule.upright((0.0, 0.0, 0.5), H, R)
    assert mesh.penetrating_triangles(cap).size == 0  # no face touches it
    v = capsule_verdict(mesh, cap)
    assert v.penetrating and v.buried and v.word == "penetrating"
    assert v.solid >= 0 and mesh.triangles[v.solid].min() >= 4  # a face of the crate
    # the way out: 2 m to the crate's side + the radius (not down through the floor)
    assert v.way_out.distance == pytest.approx(2.0 + R)
    assert v.deepest == pytest.approx(2.0 + R)
    moved = cap.translated(v.push_out * (1.0 + 1e-9))
    assert not capsule_verdict(mesh, moved).penetrating
    # just outside the crate (touching nothing): clear
    assert not capsule_verdict(mesh, Capsule.upright((2.0 + R + 1e-3, 0.0, 0.0), H, R)).penetrating


def test_open_topped_crate_on_a_floor_and_a_floor_alone_hold_nothing():
    cap = Capsule.upright((0.0, 0.0, 0.5), H, R)
    # the closed crate on the floor: five rays (the floor plane under its bottom cancels the
    # sixth); without its top only four: open, not a solid
    assert capsule_verdict(_crate_on_floor(), cap).solid >= 0
    assert capsule_verdict(_crate_on_floor(top=False), cap).solid == -1
    under = Capsule.upright((0.0, 0.0, -3.0), H, R)  # under an open floor plane
    assert capsule_verdict(TriangleMesh(*grid(-10, 10, -10, 10, z=0.0)), under).solid == -1


def test_report_names_the_solid_and_a_buried_spawn_floods_nothing():
    mesh = _crate_on_floor()
    cap = CapsuleCheck("Spawn", Capsule.upright((0.0, 0.0, 0.5), H, R), "clear", (0, 0, 0.5))
    rep = check_level(mesh, ControllerSettings(), [cap], spawns=[(0.0, 0.0, 0.5)],
                      checks=("penetration", "reachability"))
    (row,) = rep["capsules"]
    assert (row["verdict"], row["buried"], row["ok"]) == ("penetrating", True, False)
    assert row["inside_solid"]["triangle"] >= 2 and row["deepest_m"] == pytest.approx(2.35)
    capsule, spawn = [f for f in rep["findings"] if f["check"] == "capsule"]
    assert "buried inside the closed solid" in capsule["message"]
    assert "move it by (2.350, 0.000, 0.000) m" in capsule["message"]
    assert spawn["name"] == "spawn 1" and "floods nothing" in spawn["message"]
    assert rep["reachability"]["reachable_m2"] == 0.0  # the flood started from no spawn


sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "tools"))
import real_levels  # noqa: E402  (tools/, on the test path)

Q3BSP = pathlib.Path(__file__).resolve().parents[3] / "shared" / "real_levels"


@pytest.mark.parametrize("name,missed", [("am_lavaarena", 5), ("delta", 1), ("oa_koth1", 10)])
def test_inside_agrees_with_quakes_brush_test_on_the_shipped_maps(name, missed):
    """500 random points a map, more than half a Quake unit from any brush face: at most
    one called inside where Quake says outside, a few missed (open patches over brushes)."""
    folder = real_levels.levels_dir()  # skips (conftest) where the maps cannot be made
    sys.path.insert(0, str(Q3BSP))
    import q3bsp  # noqa: PLC0415

    level = real_levels.load(name, clip=True)
    mesh = TriangleMesh(level.vertices, level.triangles)
    bsp = q3bsp.BSP.load(folder / "bsp" / "maps" / f"{name}.bsp")
    lo, hi = mesh.aabb
    pts = np.random.default_rng(1).uniform(lo, hi, (500, 3))
    depth, _ = bsp.box_depths(pts / real_levels.UNIT, mins=(0, 0, 0), maxs=(0, 0, 0))
    clear = np.abs(depth) > 0.5  # Quake units from any brush face
    truth, ours = depth > 0, enclosing_solids(mesh, pts) >= 0
    assert truth[clear].sum() > 20  # the sample reaches inside brushes
    assert (ours & ~truth & clear).sum() <= 1  # measured: 0 (lavaarena), 1 (delta, koth1)
    assert (truth & ~ours & clear).sum() <= missed  # open patches cost a few


def test_no_spawn_of_the_shipped_maps_is_inside_a_solid():
    """161 spawns where Quake starts its players: none touches a face, none is buried."""
    q = real_levels.QUAKE_PLAYER
    for name in real_levels.MAPS:
        level = real_levels.load(name, clip=True)
        mesh = TriangleMesh(level.vertices, level.triangles)
        caps = [Capsule.upright(f + (0.0, 0.0, 0.01), q["height"], q["radius"])
                for f in level.spawn_feet]
        found = capsule_verdicts(mesh, caps)
        assert [v.penetrating for v in found] == [False] * len(caps), name
