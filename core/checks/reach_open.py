"""Open floor seen before it is judged: does the flood's first window round spill out?

Reachability builds big levels tile by tile from the spawns outward and gives the window up
for the whole map when a round would build more than a share of the floor tiles (open
floor: ``reachability._flood_window``). On an open arena the first round already spills,
after judging its tiles span by span and flooding them: work the whole map then does again
(0.27 s of CPU of the arena's 3.4 s). ``first_round_spills`` answers the first round's
question from the open-ground screen alone (``audits.screen``), exactly as the round would:

- its spans are the round's (the same tiles rasterised, ``MapWindow.spans``); spans the
  screen certifies free are FREE standing on their foot, as the round judges them; the
  spans within ``reach_cells`` of a spawn (and of where it falls to) are judged as the round
  judges them (``standable.free_spans``), so each spawn's node is the round's
  (``reach_spawns.spawn_nodes``);
- two known FREE spans in neighbouring columns, each column holding that one span only, whose
  heights differ by at most a walk's rise (and ``step_height``) are a walk of the round's
  flood, both ways (``reach_links``: the next column's only span is its target, a walk
  needs no mesh query);
- the walks joined to the spawns' nodes are thus floor the round reaches (it reaches more:
  steps, falls, the spans the screen leaves to the exact tests), and the tiles the round
  would add grow with the floor reached. When those already make more than the share,
  the round gives the window up: so does this answer, with no span judged but the spawns'.

Otherwise (a walled yard) it answers False and the round runs as before.

Frame and units: world space, metres; ``settings.up`` is up.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .audits.cells import CellGrid, Columns, shifted
from .audits.common import EMPTY_I, components
from .audits.screen import open_at
from .audits.spans import Spans, resting_centres
from .audits.standable import CRAMPED, FREE, free_spans
from .reach_links import DIRECTIONS, reach_cells, walk_rise
from .reach_spawns import spawn_nodes


class _Nodes(NamedTuple):
    """What ``spawn_nodes`` reads of a map: grid, columns, state (FREE where known free),
    stand (N, 3)."""

    grid: CellGrid
    columns: Columns
    state: np.ndarray
    stand: np.ndarray


def _near(grid, points, settings) -> np.ndarray:
    """Flat cells within ``reach_cells`` of the cells of ``points`` (P, 3): where
    ``nearest_nodes`` looks."""
    cell = grid.cell_of(points)
    k = reach_cells(settings, grid.cell)
    return np.unique([shifted(grid, cell, dx, dy) for dx in range(-k, k + 1)
                      for dy in range(-k, k + 1)])


def _known_free(win, sp: Spans, rec, near, settings):
    """(free (N,) bool known FREE, stand (N, 3)) of the spans ``sp``: the screened ones and
    those in the cells ``near`` (judged); the others count as not free."""
    s = settings
    free = open_at(win.screen, s, resting_centres(s, sp.foot, sp.normal), sp.foot)
    stand = np.where(free[:, None], sp.foot, np.nan)
    rows = np.flatnonzero(np.isin(sp.cell, near) & ~free)
    if rows.size:
        sub = Spans(sp.face[rows], sp.cell[rows], sp.foot[rows], sp.height[rows],
                    np.zeros(rows.size, bool), sp.normal[rows])  # its own inside flags
        fr = free_spans(win.mesh, s, sub, rec, win.classes, win.grid.cell, win.screen)
        free[rows], stand[rows] = fr.free, fr.stand
    return free, stand


def _walks(grid, cell, h, free, settings):
    """(a, b) (W,) the walks between known FREE spans whose columns hold one span each
    (spans sorted by ``cell`` (N,); searched, no dense index over a 400 m level's grid)."""
    s = settings
    lim = min(s.step_height, walk_rise(s, grid.cell))

    def only(q):  # (Q,) the one span of each column q, -1 where it holds 0 or several
        lo = np.searchsorted(cell, q, "left")
        one = (np.searchsorted(cell, q, "right") - lo == 1) & (q >= 0)
        return np.where(one, lo, -1)

    i = np.flatnonzero(free & (only(cell) >= 0))
    a, b = [], []
    for dx, dy in DIRECTIONS[::2]:  # +x and +y: each walk once
        j = only(shifted(grid, cell[i], dx, dy))
        jj = np.maximum(j, 0)
        d = h[jj] - h[i]
        ok = (j >= 0) & free[jj] & (d >= -lim) & (d <= lim)
        a.append(i[ok])
        b.append(j[ok])
    return np.concatenate(a), np.concatenate(b)


def first_round_spills(win, grow, pts, landed, settings, share_max) -> bool:
    """True when the window ``win``'s first round, building the tiles ``grow`` for the
    spawn feet ``pts`` (K, 3) (``landed``: their ``spawn_floor``), would give the window up
    (the tiles it adds next, one ring around those within MARGIN_CELLS of the floor it
    reaches, make more than ``share_max`` of the floor tiles) (module docstring). False:
    not known (the round runs)."""
    s = settings
    sp, rec = win.spans(grow)
    if not sp.face.size:
        return False
    cols = Columns(win.grid, sp.cell, sp.height, EMPTY_I)  # searched: few spans
    near = _near(win.grid, np.concatenate([pts, landed[0]]), s)
    free, stand = _known_free(win, sp, rec, near, s)
    h = np.where(free, stand @ win.grid.up, np.nan)
    state = np.where(free, FREE, CRAMPED).astype(np.int8)
    nodes, _drop = spawn_nodes(_Nodes(win.grid, cols, state, stand), h, pts, landed[0],
                               landed[1], s)
    if not (nodes >= 0).any():
        return False
    a, b = _walks(win.grid, sp.cell, h, free, s)
    label = components(sp.face.size, a, b)
    reached = np.isin(label, label[nodes[nodes >= 0]]) & free
    built = np.zeros(win.built.size, bool)
    built[grow] = True
    need = win.tiles_around(sp.cell[reached])
    need = need[~built[need]]
    if not need.size:
        return False
    return win.share(np.concatenate([grow, win.grown(need, 1)])) > share_max
