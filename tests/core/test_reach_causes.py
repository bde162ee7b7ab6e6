"""What a trap's or an island's row says is its cause: every cause a true statement, and a
trap whose border shows nothing explained by its way in (reach_explain, issue 24's "one row
per problem with its cause", found on delta's shipped map).

Regressions named here:
- delta: a 1534 m^2 floor 8.9 m below the walkway it is dropped from, 5.7 m away across the
  hall, was a trap row with no cause (its floor out lies beyond the columns searched);
- delta: a 2.2 m^2 trap said "gap 0.59 m > jump reach 6.25 m" (the reach is an estimate: a
  gap within it was not crossed by the flood's jumps, and its row says that).
"""

from __future__ import annotations

import numpy as np
import pytest
import scenes
from capsule_collision.core import reachability
from capsule_collision.core.checks.reach_explain import CAUSE_KINDS, entry_causes
from capsule_collision.core.checks.reach_links import FALL, JUMP, WALK, Links
from capsule_collision.core.controller.controller import ControllerSettings
from capsule_collision.core.mesh.triangle_mesh import TriangleMesh

S = ControllerSettings()


def _hall(deck_z=6.0):
    """A 16 x 16 m hall floor at z = 0 walled 8 m high, with a 3 x 3 m deck floating at
    ``deck_z`` in its middle (x, y in [6.5, 9.5]): a character walks off the deck into the
    hall and cannot get back."""
    w = 0.3
    parts = [scenes.grid(0.0, 16.0, 0.0, 16.0, cell=1.0),
             scenes.box((-w, -w, 0.0), (16.0 + w, 0.0, 8.0)),
             scenes.box((-w, 16.0, 0.0), (16.0 + w, 16.0 + w, 8.0)),
             scenes.box((-w, 0.0, 0.0), (0.0, 16.0, 8.0)),
             scenes.box((16.0, 0.0, 0.0), (16.0 + w, 16.0, 8.0)),
             scenes.box((6.5, 6.5, deck_z - 0.3), (9.5, 9.5, deck_z))]
    return TriangleMesh(*scenes.merge(parts))


@pytest.mark.parametrize("deck_z", [6.0, 3.0])
def test_a_hall_dropped_into_from_a_deck_far_from_its_walls_says_drop(deck_z):
    """The hall's border is its walls, 6.5 m from the deck: no floor out is found across it;
    the trap is explained by its way in, the fall from the deck: a drop of the deck's height
    (to the float32 of the mesh), at a point on the hall floor."""
    res = reachability(_hall(deck_z), [[8.0, 8.0, deck_z]])
    (hall,) = res.traps
    assert hall.area > 200.0
    (cause,) = hall.causes
    assert (cause.kind, cause.limit) == ("drop", S.step_height)
    assert cause.value == pytest.approx(deck_z, abs=1e-5)
    assert abs(cause.point[2]) < 1e-5 and 0.0 < cause.point[0] < 16.0
    assert cause.text.startswith(f"drop {deck_z:.2f} m > step height 0.35 m (no way back up) "
                                 "at (")


def _pair_map(heights):
    """A stand-in standable map of len(heights) nodes in a row along x, 1 m apart."""
    n = len(heights)
    stand = np.stack([np.arange(n, dtype=float), np.zeros(n), np.asarray(heights, float)], 1)

    class Map:
        face = np.arange(n)
    Map.stand = stand
    return Map, stand[:, 2].copy()


def test_the_way_in_is_the_one_way_move_of_least_drop_and_walks_are_not_ways_in():
    """entry_causes: of the moves into the region (nodes 3, 4) from outside, the walk is
    left out; of the fall (5 m) and the jump (2 m) the jump is the way in named; a region
    nothing enters one way gets no cause; a move of at most step_height is a one-way move
    named at its start."""
    smap, h = _pair_map([5.0, 2.0, 0.0, 0.0, 0.0, 0.2, 0.0])
    links = Links(np.array([0, 1, 2, 5, 3]), np.array([3, 4, 3, 6, 2]),
                  np.array([FALL, JUMP, WALK, FALL, WALK], np.int8))
    way_in, nothing, flat = entry_causes(smap, h, [np.array([3, 4]), np.array([0]),
                                                   np.array([6])], links, S)
    (c,) = way_in
    assert c.kind == "drop" and c.value == pytest.approx(2.0) and c.point[0] == 4.0
    assert nothing == ()
    (c,) = flat
    assert c.kind == "one_way" and c.value == pytest.approx(0.2) and c.point[0] == 5.0
    assert c.text == ("one-way move in (a fall or a jump of 0.20 m) at (5.00, 0.00, 0.20): "
                      "no move back")
    assert "one_way" in CAUSE_KINDS


def _beam_over_a_gap(gap=0.3, clearance=1.2):
    """Two floors at z = 0 (x in [0, 5] and [5 + gap, 10 + gap], y in [0, 4]) over a pit
    2 m deep, and over the middle of the gap a 5 cm thin wall from ``clearance`` up to 3 m
    (no floor on its top): the gap is narrower than the character, the wall's underside is
    what stops it."""
    x1 = 5.0 + gap
    mid = 5.0 + 0.5 * gap
    parts = [scenes.box((0.0, 0.0, -2.0), (5.0, 4.0, 0.0)),
             scenes.box((x1, 0.0, -2.0), (x1 + 5.0, 4.0, 0.0)),
             scenes.grid(0.0, x1 + 5.0, 0.0, 4.0, z=-2.0),
             scenes.box((mid - 0.025, -0.5, clearance), (mid + 0.025, 4.5, 3.0))]
    return TriangleMesh(*scenes.merge(parts))


JUMPER = S.replace(jump_height=1.0)  # reach: 0.7 m + a 0.9 s jump at 4 m/s, about 4.3 m


def test_a_gap_within_reach_under_a_wall_says_ceiling_not_gap():
    """The far floor is an island behind a wall whose underside is 1.2 m up over a 0.3 m gap
    (the free floors a character's width apart, within a jumping character's reach): its
    cause is the ceiling (1.2 m < height 1.8 m), never "gap 0.5 m > jump reach 4.3 m"."""
    res = reachability(_beam_over_a_gap(), [[2.0, 2.0, 0.0]], JUMPER)
    (island,) = [r for r in res.islands if r.point[0] > 5.3 and abs(r.point[2]) < 1e-6]
    assert [c.kind for c in island.causes] == ["riser", "ceiling"]  # the wall's top, 3 m up
    assert all(c.kind != "gap" for c in island.causes)
    ceiling = island.causes[1]
    assert ceiling.limit == S.height and ceiling.value == pytest.approx(1.2, abs=1e-5)
    assert ceiling.point[0] == pytest.approx(5.15, abs=0.15) and abs(ceiling.point[2]) < 1e-5
    assert ceiling.text.startswith("ceiling 1.20 m < height 1.80 m at (")
    # the setting the ceiling names reaches it (the gap's pairs reopened as walks)
    assert res.what_if == ("with height 1.20 m (now 1.80 m): 1 island is reached",)


def test_a_gap_within_the_reach_estimate_says_it_was_not_crossed():
    """The reach is an estimate: with jump 0.27 m the 2.6 m gap is within it, but the flood's
    own jumps fall short (0.28 m crosses: test_reach_what_if). The deck's cause is the gap,
    worded as what happened, never "gap 2.4 m > jump reach 2.7 m" (a false inequality)."""
    from reach_scenes import gap_scene
    res = reachability(gap_scene(2.6), [[2.5, 2.0, 3.0]], S.replace(jump_height=0.27))
    (deck,) = res.islands
    gap = deck.causes[0]
    assert gap.kind == "gap" and gap.value <= gap.limit
    assert gap.text.startswith(
        f"gap {gap.value:.2f} m not crossed (jump reach about {gap.limit:.2f} m) at (")
    assert ">" not in gap.text


def test_a_floor_behind_a_thin_wall_says_wall_not_gap():
    """Regression (am_lavaarena: four 16 m^2 islands beside a trap's floor, a wall between
    standing on one floor at one height, said "gap 0.57 m > jump reach 6.25 m"): a 12 x 8 m
    floor split by a 10 cm wall 10 m high; the far half is an island whose cause is the wall,
    where it stands; no gap is named."""
    mesh = TriangleMesh(*scenes.merge([scenes.grid(0.0, 12.0, 0.0, 8.0),
                                       scenes.box((6.0, -1.0, 0.0), (6.1, 9.0, 10.0))]))
    res = reachability(mesh, [[2.0, 4.0, 0.0]], JUMPER)
    (far,) = [r for r in res.islands if r.point[0] > 6.1 and abs(r.point[2]) < 1e-6]
    wall = far.causes[0]
    assert wall.kind == "wall" and "gap" not in [c.kind for c in far.causes]
    assert wall.point[0] == pytest.approx(6.05, abs=0.2) and abs(wall.point[2]) < 1e-6
    assert wall.text.startswith("wall in the way at (")
    assert res.what_if == ()  # no setting opens a wall


def test_a_slab_far_out_over_the_void_says_how_it_stands_to_the_nearest_reached_floor():
    """A 3 x 3 m slab 2 m up and 8 m past the edge of the spawn's floor (farther than the
    border's search reaches): no border pair; the island is read off the pair of its node
    nearest the reached floor's nearest node: a riser of 2 m (to the float32 of the mesh)
    at the island's edge facing the floor."""
    mesh = TriangleMesh(*scenes.merge([scenes.grid(0.0, 10.0, 0.0, 10.0),
                                       scenes.box((18.0, 3.5, 1.7), (21.0, 6.5, 2.0))]))
    res = reachability(mesh, [[5.0, 5.0, 0.0]])
    (slab,) = res.islands
    (riser,) = slab.causes
    assert (riser.kind, riser.limit) == ("riser", S.step_height)
    assert riser.value == pytest.approx(2.0, abs=1e-5)
    assert riser.point[0] == pytest.approx(18.0, abs=0.4) and 3.5 < riser.point[1] < 6.5
    assert riser.text.startswith("riser 2.00 m > step height 0.35 m at (")


def test_report_json_gives_each_region_its_first_cause_and_validates():
    """report.json: an island's and a trap's row carries its first cause as data (kind,
    value, limit, unit, point, text: a pipeline gates on it without reading the message),
    the text the message ends with; the document validates against the schema. A floor
    dropped into from a deck 3 m up in its middle (a trap, by its way in) and a platform up a
    0.41 m riser in its corner (an island). Regression: the island's own edges fall into the
    trap, and its way in was named "drop 0.41 m" (a move from floor nobody reaches)."""
    import json
    import pathlib

    from capsule_collision.core.checks.report import check_level, combine_levels
    jsonschema = pytest.importorskip("jsonschema")
    schema = json.loads((pathlib.Path(__file__).resolve().parents[2] / "schema"
                         / "report.schema.json").read_text())
    mesh = TriangleMesh(*scenes.merge([scenes.grid(0.0, 16.0, 0.0, 16.0, cell=1.0),
                                       scenes.box((6.5, 6.5, 2.7), (9.5, 9.5, 3.0)),
                                       scenes.box((0.5, 0.5, 0.0), (2.5, 2.5, 0.41))]))
    level = check_level(mesh, S, spawns=[[8.0, 8.0, 3.0]])
    rows = {f["check"]: f for f in level["findings"] if f["check"] in ("islands", "traps")}
    trap, island = rows["traps"]["cause"], rows["islands"]["cause"]
    assert (trap["kind"], trap["unit"], trap["limit"]) == ("drop", "m", S.step_height)
    assert trap["value"] == pytest.approx(3.0, abs=1e-4) and abs(trap["point"][2]) < 1e-4
    assert (island["kind"], island["value"]) == ("riser", pytest.approx(0.41, abs=1e-4))
    for row in rows.values():
        assert row["message"].endswith("; " + row["cause"]["text"])
    jsonschema.validate(combine_levels([level]), schema)
    others = [f for f in level["findings"] if f["check"] not in ("islands", "traps")]
    assert all("cause" not in f for f in others)
