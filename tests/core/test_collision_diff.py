"""Render against collision (core/checks/collision_diff.py): pairs with one known difference
of each kind find exactly it, near where it is; identical pairs find nothing; a stair flight
collided as a ramp along its nosings makes no hole and no wall, and walks the same at 30, 60
and 120 Hz.

Scenes: tests/core/diff_scenes.py (a 12 x 6 m yard, the spawn at its west end, the difference
round x 5..7, y 2..4).
"""

import math

import diff_scenes as D
import numpy as np
import pytest
from capsule_collision.core import (
    ControllerSettings,
    TriangleMesh,
    collision_diff,
    compare_frame_rates,
    reachability,
    walkthrough,
)
from capsule_collision.core.checks.collision_diff import (
    DIFF_KINDS,
    aligned_meshes,
    reach_reusable,
)
from capsule_collision.core.constants import (
    COLLISION_DIFF_TOLERANCE,
    COLLISION_DIFF_WALL_TOLERANCE,
)

S = ControllerSettings()


def _kinds(diff):
    return sorted(p.kind for p in diff.problems)


def _near(point, x_range, y_range):
    return x_range[0] <= point[0] <= x_range[1] and y_range[0] <= point[1] <= y_range[1]


def test_identical_pair_finds_nothing():
    render, collision = D.identical()
    diff = collision_diff(render, collision, D.SPAWN, S)
    assert diff.problems == ()
    assert diff.counts() == dict.fromkeys(DIFF_KINDS, 0)
    # every reached render span was compared, and the floors agree to float noise
    measured = diff.offset[~np.isnan(diff.offset)]
    assert measured.size > 1000
    assert np.abs(measured).max() < 1e-9


def test_same_mesh_object_on_both_sides_finds_nothing():
    mesh = D.identical()[0]
    assert collision_diff(mesh, mesh, D.SPAWN, S).problems == ()


@pytest.mark.parametrize("pair, kind, severity", [
    ("crate_in_collision", "invisible_wall", "warning"),
    ("crate_in_render", "walk_through_wall", "warning"),
    ("gap_in_collision", "hole", "error"),
    ("raised_collision", "floating", "info"),
    ("lowered_collision", "sunk", "info"),
])
def test_one_difference_finds_exactly_it(pair, kind, severity):
    render, collision = getattr(D, pair)()
    diff = collision_diff(render, collision, D.SPAWN, S)
    assert _kinds(diff) == [kind]
    (p,) = diff.problems
    assert p.severity == severity
    assert _near(p.point, (4.5, 7.5), (1.5, 4.5)), p.point
    assert p.cause and p.size > 0.0
    assert p.render_faces.size and p.render_faces.max() < render.n_triangles
    assert p.collision_faces.max(initial=-1) < collision.n_triangles


def test_invisible_wall_names_the_crate_and_its_area():
    render, collision = D.crate_in_collision()
    (p,) = collision_diff(render, collision, D.SPAWN, S).problems
    crate = np.arange(render.n_triangles, collision.n_triangles)  # the crate's faces
    assert np.isin(p.collision_faces, crate).all()
    # floor where the capsule cannot stand: the 1 x 2 m crate grown by about a radius
    r = S.radius
    assert 2.0 <= p.size <= (1.0 + 2 * r + 0.2) * (2.0 + 2 * r + 0.2)
    assert p.value > COLLISION_DIFF_WALL_TOLERANCE


def test_walk_through_wall_is_a_length_on_the_collision_floor():
    render, collision = D.crate_in_render()
    (p,) = collision_diff(render, collision, D.SPAWN, S).problems
    crate = np.arange(collision.n_triangles, render.n_triangles)
    assert np.isin(p.render_faces, crate).all()
    assert p.to_dict()["unit"] == "m"
    # the crate's footprint (1 x 2 m) grown by a radius: its diagonal, plus a cell
    grown = math.hypot(1.0 + 2 * S.radius, 2.0 + 2 * S.radius)
    assert math.hypot(1.0, 2.0) <= p.size <= grown + 0.2


def test_hole_is_the_gap_less_where_the_capsule_rests_on_its_lips():
    render, collision = D.gap_in_collision()
    (p,) = collision_diff(render, collision, D.SPAWN, S).problems
    assert p.collision_faces.size == 0
    # the 2 x 2 m gap: at most its area, at least the part no edge holds the capsule over
    assert (2.0 - 2 * S.radius) ** 2 <= p.size <= 4.0
    assert 5.0 <= p.point[0] <= 7.0 and 2.0 <= p.point[1] <= 4.0


@pytest.mark.parametrize("pair, sign", [("raised_collision", 1.0), ("lowered_collision", -1.0)])
def test_floating_and_sunk_measure_the_offset(pair, sign):
    render, collision = getattr(D, pair)()
    diff = collision_diff(render, collision, D.SPAWN, S)
    (p,) = diff.problems
    assert p.value == pytest.approx(sign * D.STEP_OFFSET, abs=1e-9)
    # the 2 x 6 m strip; a lowered one less where the capsule rests on its lips
    assert (2.0 - (sign < 0) * 2.0 * S.radius) * 6.0 <= p.size <= 2.0 * 6.0 + 1e-9


@pytest.mark.parametrize("offset, found", [(COLLISION_DIFF_TOLERANCE - 0.005, False),
                                           (COLLISION_DIFF_TOLERANCE + 0.005, True)])
def test_floating_tolerance_boundary(offset, found):
    render, collision = D.offset_collision(offset)
    diff = collision_diff(render, collision, D.SPAWN, S)
    assert _kinds(diff) == (["floating"] if found else [])


def test_tolerance_is_a_setting():
    render, collision = D.raised_collision()
    assert collision_diff(render, collision, D.SPAWN, S, tolerance=0.1).problems == ()
    # the stair ramp's sides stand 3.4 cm proud of the flight's beside its foot
    render, collision, _top = D.stairs_and_ramp()
    strict = collision_diff(render, collision, D.SPAWN, S, wall_tolerance=0.02)
    assert "invisible_wall" in _kinds(strict)
    walls = [q for q in strict.problems if q.kind == "invisible_wall"]
    assert all(0.02 < q.value < COLLISION_DIFF_WALL_TOLERANCE for q in walls)
    # both sides of the flight's foot (y = 2 and y = 4), nowhere else
    assert all(abs(abs(q.point[1] - 3.0) - 1.0) < 0.5 and 3.5 < q.point[0] < 5.0 for q in walls)


def test_reach_differs_on_the_platform_whose_ramp_the_collision_lacks():
    render, collision = D.platform_pair()
    diff = collision_diff(render, collision, D.SPAWN, S)
    reach = [p for p in diff.problems if p.kind == "reach_differs"]
    assert len(reach) == 1
    (p,) = reach
    (x0, y0, _), (x1, y1, z1) = D.PLATFORM
    assert _near(p.point, (x0, x1), (y0, y1)) and p.point[2] == pytest.approx(z1)
    assert "an island on the collision" in p.cause
    assert p.size == pytest.approx((x1 - x0) * (y1 - y0), rel=0.05)
    # everything else is where the ramp was: x in [8 - 1.73, 8], y in [2, 4]
    run = 1.0 / math.tan(math.radians(30.0))
    for q in diff.problems:
        if q is not p:
            assert _near(q.point, (8.0 - run - S.radius, 8.0 + S.radius),
                         (2.0 - S.radius, 4.0 + S.radius)), (q.kind, q.point)
    assert {"hole", "reach_differs"} <= set(_kinds(diff))


def test_render_and_collision_swapped_mirror_the_walls():
    a = collision_diff(*D.crate_in_collision(), D.SPAWN, S)
    render, collision = D.crate_in_collision()
    b = collision_diff(collision, render, D.SPAWN, S)
    assert _kinds(a) == ["invisible_wall"] and _kinds(b) == ["walk_through_wall"]
    assert np.array_equal(a.problems[0].collision_faces, b.problems[0].render_faces)


def test_stair_ramp_gives_no_hole_or_wall():
    render, collision, _top = D.stairs_and_ramp()
    diff = collision_diff(render, collision, D.SPAWN, S)
    kinds = set(_kinds(diff))
    assert not kinds & {"hole", "invisible_wall", "walk_through_wall", "reach_differs"}, kinds
    # the ramp passes through every nosing: feet over the treads float, never sink
    assert kinds <= {"floating"}
    assert all(0.0 < p.value <= D.FLIGHT["rise"] for p in diff.problems)


def test_stair_ramp_geometry_passes_through_the_nosings():
    _render, collision, _top = D.stairs_and_ramp()
    f = D.FLIGHT
    for nose in D.nosings():
        hit = collision.raycast(nose + [0, 0, 1.0], [0, 0, -1], 2.0)
        assert hit is not None and hit.point[2] == pytest.approx(nose[2], abs=1e-9)
    slope = math.degrees(math.atan2(f["rise"], f["tread"]))
    assert slope < S.max_slope_deg


def test_stair_ramp_walks_the_same_at_30_60_120_hz():
    render, collision, top = D.stairs_and_ramp()
    path = [D.SPAWN[0], [3.0, 3.0, 0.0], top]
    verdicts = {}
    for name, mesh in (("render", render), ("collision", collision)):
        fr = compare_frame_rates(mesh, path, S, rates=(30, 60, 120))
        assert fr.consistent, (name, fr.differences)
        verdicts[name] = {hz: v["reached_goal"] for hz, v in fr.verdicts.items()}
    assert verdicts["render"] == verdicts["collision"] == {30: True, 60: True, 120: True}
    down = walkthrough(collision, path[::-1], S)
    assert down.reached_goal and not [e for e in down.events if e.kind == "fell"]


def test_grids_share_their_origin():
    render, collision = D.crate_in_render()
    big = TriangleMesh(np.vstack([collision.vertices, [[-3.3, -2.1, 0.0]]]),
                       collision.triangles)
    r2, c2 = aligned_meshes(render, big, S.up_vector, 0.175)
    assert r2 is not render and c2 is big
    assert np.array_equal(r2.triangles, render.triangles)
    assert r2.vertices.shape[0] == render.vertices.shape[0] + 1
    diff = collision_diff(render, big, D.SPAWN, S)
    g1, g2 = diff.render.standable.grid, diff.collision.standable.grid
    assert (g1.ox, g1.oy) == (g2.ox, g2.oy)


def test_a_wider_render_keeps_the_collision_and_its_cells():
    """The render reaching 3.3 m further east and 2.1 m further south (both ahead of the
    collision's grid origin along the grid's axes, y and -x): the collision is not built
    again (a flood made before stays valid) and the render's cells coincide with the
    collision's: its grid origin a whole number of cells before on both axes."""
    render, collision = D.crate_in_collision()
    wide = TriangleMesh(np.vstack([render.vertices, [[15.3, -2.1, 0.0]]]), render.triangles)
    r2, c2 = aligned_meshes(wide, collision, S.up_vector, 0.175)
    assert c2 is collision and r2 is not wide
    diff = collision_diff(wide, collision, D.SPAWN, S)
    g1, g2 = diff.render.standable.grid, diff.collision.standable.grid
    steps = np.array([g2.ox - g1.ox, g2.oy - g1.oy]) / g1.cell
    assert np.all(steps >= 1.0) and np.allclose(steps, np.round(steps), atol=1e-9)
    assert _kinds(diff) == ["invisible_wall"]
    assert _near(diff.problems[0].point, (4.0, 7.0), (1.0, 5.0))


@pytest.mark.parametrize("pair", ["crate_in_collision", "crate_in_render", "platform_pair",
                                  "gap_in_collision"])
def test_collision_reach_given_is_used_and_finds_the_same(pair):
    """The CLI's reachability check floods the collision already: passed as
    ``collision_reach`` it is the diff's collision flood (not made again) and the problems
    are the same as with the diff's own flood."""
    render, collision = getattr(D, pair)()
    own = collision_diff(render, collision, D.SPAWN, S)
    flood = reachability(collision, D.SPAWN, S)
    assert reach_reusable(flood, collision, S)
    given = collision_diff(render, collision, D.SPAWN, S, collision_reach=flood)
    assert given.collision is flood
    assert [(p.kind, tuple(p.point), p.size) for p in given.problems] == \
        [(p.kind, tuple(p.point), p.size) for p in own.problems]
    assert np.array_equal(given.offset, own.offset, equal_nan=True)


@pytest.mark.parametrize("pair", ["crate_in_collision", "crate_in_render", "gap_in_collision",
                                  "raised_collision", "lowered_collision", "platform_pair"])
def test_unexplained_floods_find_the_same_problems(pair, monkeypatch):
    """The diff floods both meshes with ``explain=False`` (no causes, lines of sight or
    what-if refloods: it reads cells, classes and moves only); flooded explained, the pairs
    with one difference of each kind (hole and reach_differs: the platform) give the very
    same problems, faces, causes and offsets."""
    import capsule_collision.core.checks.collision_diff as diff_module
    render, collision = getattr(D, pair)()
    fast = collision_diff(render, collision, D.SPAWN, S)
    assert fast.render.what_if == () and all(not r.causes for r in fast.render.islands)
    calls = []

    def explained(mesh, spawns, settings=None, progress=None, *, explain=True, workers=1):
        calls.append(explain)
        return reachability(mesh, spawns, settings, progress)

    monkeypatch.setattr(diff_module, "reachability", explained)
    full = collision_diff(render, collision, D.SPAWN, S)
    assert calls == [False, False]  # both floods were asked unexplained, and made explained
    assert fast.counts() == full.counts() and fast.problems
    for a, b in zip(fast.problems, full.problems, strict=True):
        assert (a.kind, a.severity, a.cause) == (b.kind, b.severity, b.cause)
        assert a.size == b.size and a.value == b.value
        assert np.array_equal(a.point, b.point) and np.array_equal(a.cells, b.cells)
        assert np.array_equal(a.render_faces, b.render_faces)
        assert np.array_equal(a.collision_faces, b.collision_faces)
    assert np.array_equal(fast.offset, full.offset, equal_nan=True)


def test_collision_reach_of_another_mesh_or_model_is_refused():
    """A flood of a mesh of other bounds (the render reaching further), of other floors (the
    strip 8 cm lower where this collision has it 8 cm higher: same grid, same face count) or
    under an engine model (its climb: another map) is not this collision's flood."""
    render, collision = D.raised_collision()
    wide = TriangleMesh(np.vstack([render.vertices, [[-3.3, -2.1, 0.0]]]), render.triangles)
    of_wide = reachability(wide, D.SPAWN, S)
    of_lowered = reachability(D.lowered_collision()[1], D.SPAWN, S)
    jolt = S.replace(model="jolt")
    of_jolt = reachability(collision, D.SPAWN, jolt)
    assert reach_reusable(reachability(collision, D.SPAWN, S), collision, S)
    assert not reach_reusable(None, collision, S)
    for flood, s in ((of_wide, S), (of_lowered, S), (of_jolt, jolt)):
        assert not reach_reusable(flood, collision, s)
        with pytest.raises(ValueError, match="collision_reach"):
            collision_diff(render, collision, D.SPAWN, s, collision_reach=flood)


@pytest.mark.parametrize("kwargs, message", [
    ({"render": "mesh"}, "render must be a core.TriangleMesh"),
    ({"collision": np.zeros((3, 3))}, "collision must be a core.TriangleMesh"),
    ({"spawns": np.zeros((0, 3))}, "spawns"),
    ({"spawns": [[0.0, np.nan, 0.0]]}, "spawns"),
    ({"spawns": [1.0, 2.0]}, "spawns"),
    ({"tolerance": -0.01}, "tolerance"),
    ({"tolerance": float("inf")}, "tolerance"),
    ({"wall_tolerance": "a lot"}, "wall_tolerance"),
])
def test_bad_input_names_the_argument(kwargs, message):
    render, collision = D.identical()
    args = {"render": render, "collision": collision, "spawns": D.SPAWN, "settings": S}
    args.update(kwargs)
    with pytest.raises(ValueError, match=message):
        collision_diff(**args)


def test_problem_to_dict_is_json_ready():
    import json
    (p,) = collision_diff(*D.gap_in_collision(), D.SPAWN, S).problems
    d = json.loads(json.dumps(p.to_dict()))
    assert d["kind"] == "hole" and d["unit"] == "m2" and d["collision_faces"] == []
    assert set(d) == {"kind", "severity", "point", "size", "unit", "value", "render_faces",
                      "collision_faces", "cause"}


def test_spawns_in_the_air_land_first():
    """A spawn placed 1.5 m above the floor (Quake's float up to 2 m) lands before the
    flood: the same problem as from the floor."""
    render, collision = D.crate_in_collision()
    low = collision_diff(render, collision, D.SPAWN, S)
    high = collision_diff(render, collision, D.SPAWN + [0.0, 0.0, 1.5], S)
    assert _kinds(high) == _kinds(low) == ["invisible_wall"]
    assert np.array_equal(high.problems[0].collision_faces, low.problems[0].collision_faces)
    assert high.render.spawn_cells[0] >= 0 and high.collision.spawn_cells[0] >= 0
