"""What one setting changed alone opens (issue 24, section 3; core/checks/reach_what_if.py):
"with max slope 50 deg (now 45 deg): 1 island is reached". Each oracle scene has one
region cut off by one cause; the setting the sentence names is checked against
``core.reachability`` run again with it, just inside (it reaches the region) and just
outside (one grid step less: it does not)."""

import math

import pytest
from capsule_collision.core import ControllerSettings, TriangleMesh, reachability
from capsule_collision.core.checks import reach_what_if
from reach_scenes import gap_scene, ramp
from scenes import box, grid, merge

S = ControllerSettings()  # radius 0.35, height 1.8, step 0.35, 45 deg, no jump
DECK = [[2.5, 2.0, 3.0]]  # on the near deck of gap_scene


def _ramp_level(deg: float) -> TriangleMesh:
    """A 12 x 8 m floor and a 1 m platform (x in [7, 10], y in [2, 6]) whose only way up is
    a ramp of ``deg`` degrees along x (y in [3, 5]); its other sides are 1 m risers."""
    run = 1.0 / math.tan(math.radians(deg))
    return TriangleMesh(*merge([grid(0, 12, 0, 8), box((7, 2, 0), (10, 6, 1.0)),
                                ramp(7 - run, 7, 3, 5, 1.0)]))


def _pit(depth: float) -> TriangleMesh:
    """A 12 x 8 m floor (slabs 2 m thick) with a 2 x 2 m pit ``depth`` m deep at x, y in
    [2, 4]: falling in is easy, getting out needs a step of ``depth``."""
    parts = [box((0, 0, -2), (2, 8, 0)), box((4, 0, -2), (12, 8, 0)),
             box((2, 0, -2), (4, 2, 0)), box((2, 4, -2), (4, 8, 0)),
             box((2, 2, -2), (4, 4, -depth))]
    return TriangleMesh(*merge(parts))


def test_a_platform_up_a_too_steep_ramp_says_slope_and_the_max_slope_that_reaches_it():
    res = reachability(_ramp_level(49.6), [[2.0, 2.0, 0.0]], S)
    (island,) = res.islands
    assert "slope" in [c.kind for c in island.causes]
    slope = next(c for c in island.causes if c.kind == "slope")
    assert slope.value == pytest.approx(49.6, abs=0.01) and slope.limit == 45.0
    assert slope.text.startswith("slope 50 deg > 45 deg at (")
    assert res.what_if == ("with max slope 50 deg (now 45 deg): 1 island is reached",)
    # just inside: the setting it names reaches the platform; just outside: 49 deg does not
    assert not reachability(_ramp_level(49.6), [[2.0, 2.0, 0.0]],
                            S.replace(max_slope_deg=50.0)).islands
    below = reachability(_ramp_level(49.6), [[2.0, 2.0, 0.0]], S.replace(max_slope_deg=49.0))
    assert len(below.islands) == 1
    assert below.what_if == ("with max slope 50 deg (now 49 deg): 1 island is reached",)


def test_a_deck_across_a_gap_says_the_jump_height_that_reaches_it():
    """The jump height is found by flying the controller's jumps again (a gap's width only
    estimates them): 0.28 m crosses the 2.6 m gap, 0.27 m does not."""
    s = S.replace(jump_height=0.2)
    res = reachability(gap_scene(2.6), DECK, s)
    (deck,) = res.islands
    assert deck.causes[0].kind == "gap"
    assert res.what_if == ("with jump height 0.28 m (now 0.20 m): 1 island is reached",)
    assert not reachability(gap_scene(2.6), DECK, s.replace(jump_height=0.28)).islands
    outside = reachability(gap_scene(2.6), DECK, s.replace(jump_height=0.27))
    assert len(outside.islands) == 1
    assert outside.what_if == ("with jump height 0.28 m (now 0.27 m): 1 island is reached",)


def test_a_platform_up_a_riser_says_the_jump_height_that_climbs_it():
    """A riser is climbed by a jump too: a 0.9 m platform, jump 0.70 m: 0.72 m reaches it,
    0.71 m does not (the controller's own jumps, flown from the floor below)."""
    def level():
        return TriangleMesh(*merge([grid(0, 12, 0, 8), box((6, 2, 0), (10, 6, 0.9))]))

    s = S.replace(jump_height=0.7)
    res = reachability(level(), [[2.0, 2.0, 0.0]], s)
    (island,) = res.islands
    assert island.causes[0].kind == "riser"
    assert res.what_if == ("with jump height 0.72 m (now 0.70 m): 1 island is reached",)
    assert not reachability(level(), [[2.0, 2.0, 0.0]], s.replace(jump_height=0.72)).islands
    assert len(reachability(level(), [[2.0, 2.0, 0.0]],
                            s.replace(jump_height=0.71)).islands) == 1


def test_a_character_that_does_not_jump_is_told_nothing_about_jump_height():
    res = reachability(gap_scene(2.6), DECK, S)
    assert res.islands and res.islands[0].causes[0].kind == "gap"
    assert not [w for w in res.what_if if "jump height" in w]


def test_a_shallow_pit_is_a_trap_and_the_step_height_that_climbs_out_of_it():
    res = reachability(_pit(0.45), [[8.0, 4.0, 0.0]], S)
    (trap,) = res.traps
    assert trap.causes[0].kind == "drop" and trap.causes[0].value == pytest.approx(0.45)
    assert res.what_if == ("with step height 0.45 m (now 0.35 m): 1 trap has a way out",)
    assert not reachability(_pit(0.45), [[8.0, 4.0, 0.0]], S.replace(step_height=0.45)).traps
    assert len(reachability(_pit(0.45), [[8.0, 4.0, 0.0]],
                            S.replace(step_height=0.44)).traps) == 1


def test_no_plausible_change_is_suggested():
    """A pit 1 m deep needs a step of 1 m: more than WHAT_IF_STEP x 0.35 m, not a setting."""
    res = reachability(_pit(1.0), [[8.0, 4.0, 0.0]], S)
    assert len(res.traps) == 1 and res.what_if == ()


def test_without_a_flood_to_run_again_nothing_is_said():
    res = reachability(_pit(0.45), [[8.0, 4.0, 0.0]], S)
    assert reach_what_if.what_if(res.islands, res.traps, S) == ()


def test_the_floods_are_bounded(monkeypatch):
    """At most WHAT_IF_FLOODS_EACH floods per setting (the jump height's the costly ones)."""
    calls = []
    real = reach_what_if.reflood

    def counting(*args):
        got = real(*args)
        return got._replace(links=lambda extra: calls.append("links") or got.links(extra),
                            jumps=lambda *a: calls.append("jumps") or got.jumps(*a))

    monkeypatch.setattr("capsule_collision.core.checks.reachability.reflood", counting)
    res = reachability(gap_scene(2.6), DECK, S.replace(jump_height=0.2))
    assert res.what_if
    assert 1 <= calls.count("jumps") <= reach_what_if.WHAT_IF_FLOODS_EACH[2]
    assert len(calls) <= reach_what_if.WHAT_IF_FLOODS
