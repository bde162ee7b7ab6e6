"""The window's first round decided from the open-ground screen (core/checks/reach_open.py):
whenever the fast answer gives the window up, the full round (every span of its tiles
judged, the flood over them) gives it up too, and reachability answers the same either way;
around a post, a hole over a pit and a step whose edge lies near a tile edge."""

from __future__ import annotations

import capsule_collision.core.checks.reachability as reach_mod
import numpy as np
import pytest
import scenes
from capsule_collision.core import ControllerSettings, TriangleMesh, reachability
from capsule_collision.core.checks import reach_open
from capsule_collision.core.checks.audits import window
from capsule_collision.core.checks.reach_links import reach_cells
from capsule_collision.core.checks.reach_spawns import spawn_floor

S = ControllerSettings()


def _ground_with_a_post_a_hole_and_a_step():
    """24 x 24 m of gently rolling ground in 0.5 m quads (as the arena's: the open-ground
    screen clears most of it) with a 2 x 2 m hole over a pit 1.5 m down (a trap), a 0.4 m
    post 1 m tall, and a 0.3 m step whose edge lies 2 cm past a tile edge of 4-cell tiles
    (x = 5.425 m from the grid origin at -0.175 m)."""
    v, t = scenes._heightfield(24.0, 24.0, 48, 48, seed=3, amp=0.05)
    cen = v[t].mean(axis=1)
    hole = (np.abs(cen[:, 0] - 12.0) < 1.0) & (np.abs(cen[:, 1] - 12.0) < 1.0)
    parts = [(v, t[~hole]), scenes.box((11.0, 11.0, -1.7), (13.0, 13.0, -1.5)),
             scenes.box((3.0, 3.0, -0.5), (3.4, 3.4, 1.0)),  # the post
             scenes.box((5.445, 16.0, -0.5), (8.0, 20.0, 0.3))]  # the step
    return TriangleMesh(*scenes.merge(parts))


# spawn foot points (dropped onto the floor below): open ground, against the post (its
# cells left to the exact tests), on the step, at the step's foot by the tile edge, in the pit
SPAWNS = {"open": [1.0, 1.0, 0.2], "post": [2.62, 3.2, 0.2], "step": [5.6, 18.0, 0.5],
          "step_foot": [5.2, 18.0, 0.2], "pit": [12.0, 12.0, -1.3]}


def _first_round(mesh, spawn):
    """(the fast answer, and what the round needs: window, tiles, feet, landed, settings)."""
    s = reach_mod.engine_step_rule(S)
    pts = np.array([spawn], float)
    landed = spawn_floor(mesh, pts, s)
    win = window.MapWindow(mesh, s)
    grow = win.tiles_around(win.grid.cell_of(np.concatenate([pts, landed[0]])), rings=1)
    answer = reach_open.first_round_spills(win, grow, pts, landed, s,
                                           reach_mod.WINDOW_WHOLE_SHARE)
    return answer, win, grow, pts, landed, s


@pytest.fixture
def small_tiles(monkeypatch):
    monkeypatch.setattr(reach_mod, "WINDOW_MIN_SPANS", 0)
    monkeypatch.setattr(window, "TILE_CELLS", 4)  # the first round builds 3 % of the tiles


@pytest.mark.parametrize("where", sorted(SPAWNS))
def test_fast_first_round_gives_up_only_when_the_full_round_does(small_tiles, monkeypatch,
                                                                 where):
    mesh = _ground_with_a_post_a_hole_and_a_step()
    fast, *_ = _first_round(mesh, SPAWNS[where])
    # the full rounds: every span of their tiles judged, the flood over them
    monkeypatch.setattr(reach_mod, "first_round_spills", lambda *a: False)
    rounds = []
    add = window.MapWindow.add
    monkeypatch.setattr(window.MapWindow, "add", lambda self, t: rounds.append(1) or add(self, t))
    mesh = _ground_with_a_post_a_hole_and_a_step()
    reachability(mesh, [SPAWNS[where]])
    gave_up_at_once = len(rounds) == 1 and reach_mod.has_map(mesh, S)
    if fast:
        assert gave_up_at_once  # never gives up where the full round keeps the window
    # not a guess either way: open ground spills at once (the post's cells judged exactly
    # join the screened ground), the pit's 4 m2 never does; by the step the unscreened band
    # is wider than the cells judged around the spawn: the answer may be "not known"
    if where in ("open", "post"):
        assert fast
    if where == "pit":
        assert not fast and not reach_mod.has_map(mesh, S)


@pytest.mark.parametrize("where", sorted(SPAWNS))
def test_reachability_answers_the_same_with_the_fast_first_round(small_tiles, monkeypatch,
                                                                 where):
    spawn = [SPAWNS[where]]
    fast = reachability(_ground_with_a_post_a_hole_and_a_step(), spawn)
    monkeypatch.setattr(reach_mod, "first_round_spills", lambda *a: False)
    full = reachability(_ground_with_a_post_a_hole_and_a_step(), spawn)
    np.testing.assert_array_equal(fast.cell_class, full.cell_class)
    np.testing.assert_array_equal(fast.standable.cell, full.standable.cell)
    np.testing.assert_array_equal(fast.spawn_cells, full.spawn_cells)
    assert fast.reachable_area == full.reachable_area
    assert [(r.area, tuple(r.point)) for r in fast.islands] == [
        (r.area, tuple(r.point)) for r in full.islands]
    assert [r.area for r in fast.traps] == [r.area for r in full.traps]


def test_fast_first_round_judges_no_span_but_the_spawns_neighbours(small_tiles, monkeypatch):
    # the point of the fast answer: on open floor the round's tiles are not judged span by
    # span (only the cells around the spawn are: its node must be the round's)
    judged = []
    free_spans = reach_open.free_spans
    monkeypatch.setattr(reach_open, "free_spans",
                        lambda m, s, sp, *a: judged.append(sp.face.size) or free_spans(
                            m, s, sp, *a))
    mesh = _ground_with_a_post_a_hole_and_a_step()
    fast, *_ = _first_round(mesh, SPAWNS["post"])
    assert fast
    k = reach_cells(S, 0.5 * S.radius)
    assert judged and sum(judged) <= (2 * k + 1) ** 2 * 2  # the 7 x 7 cells, both feet
