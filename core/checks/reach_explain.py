"""Islands and traps explained: what stops the way in or out, and can a player see them.

Causes (``regions_causes``): at the border of an island (or a trap), each of its free nodes
looks along the four grid directions, up to BORDER_CELLS columns, for the nearest node of
the floor the spawns reach (for a trap: floor that can get back). The pair did not link, and
why is read off the map between them:

- the region stands more than ``step_height`` above that floor: a *riser* (value: the
  rise; an island up a riser);
- it stands lower by more than ``step_height``: a *drop* (a trap whose floor out stands
  that much above it: no way back up; an island below the reached floor);
- a riser or a drop whose columns between hold a steep face (a ray down at the middle
  meets it): a ramp too steep, a *slope* (value: its angle, degrees);
- a column between holds cramped floor whose clearance is less than ``height``: a *ceiling*
  (value: the clearance);
- else, the column between holds floor at their height that a body stands over (FREE or
  COVERED) between two floors it does not join: something stands in the way, a *wall*
  (value: the distance between the two floors' nodes; no setting opens it);
- a column between holds no floor within ``step_height``: a ray down there meets a steep
  face: a *slope* (value: its angle, degrees); else a *gap* (value: the distance between the
  two floors' edges, metres; limit: how far the character crosses, running off or jumping).
  That limit is an estimate (the flood flies the controller's own jumps): a gap no wider
  than it was not crossed by them, and says so ("gap 0.59 m not crossed (jump reach about
  6.25 m)", never "0.59 m > 6.25 m"), unless a ray up from its middle meets something lower
  than ``height``: then it is a *ceiling* (value: that clearance; a beam over a narrow gap).

Per region the causes are grouped by kind, most frequent first; each kind's value is the
least found (the setting that would open the way at its easiest point), with its point.

A trap left with no cause (its floor out lies beyond the columns searched: a pit under a
deck in the middle of a hall, delta's 1534 m^2 floor 8.9 m below the one it is dropped from
5.7 m away) is explained by its way in instead (``entry_causes``): of the one-way moves
into it (falls and jumps) the one of least drop, a *drop* (value: that drop, the point
where it lands) when it exceeds ``step_height``, else a *one_way* move (value: its drop,
the point it starts from: a fall or a jump across at about one height that no move undoes).
An island left with no cause (a ledge high in the air, oa_koth1's 0.8 m^2 at 14.6 m) is
read off one pair as at a border (``nearest_causes``): its free node nearest the reached
floor's free node nearest it.

Visibility (``regions_visible``): a line of sight from the eye (EYE_FRACTION x height above
a reached foot point) of up to EYES reached nodes (the nearest to the region first) to up to
TARGETS points of the region, just above its floor (the rays of every region in one batch,
cast SIGHT_PIECE metres at a time, a line no further once something meets it):
a roof above the eye, the outside of a sealed level or a wall top is not visible.

Frame and units: world space, metres, degrees; ``settings.up`` is up.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from ..constants import SIGHT_PIECE_OVERLAP, STEP_RISE_TOL
from .audits.cells import shifted
from .audits.common import raycast_chunks
from .audits.standable import COVERED, CRAMPED, FREE
from .reach_links import DIRECTIONS, FALL, reach_cells
from .walkability import STEEP

BORDER_CELLS_EXTRA = 16  # columns searched beyond reach_cells for the floor across a gap
EYE_FRACTION = 0.9  # of the character's height: where it looks from
EYES = 16  # reached foot points looked from, per region (half the nearest, half spread)
TARGETS = 8  # points of a region looked at
TARGET_LIFT = 0.01  # metres above the floor a target point is looked at
SIGHT_PIECE = 4.0  # metres of a line of sight cast at a time (sight_blocked; 1 / 2 / 8 m
# took 0.30 / 0.23 / 0.21 CPU s on oa_koth1's lines where 4 m took 0.18 s)
CEILING_RAY_LIFT = 0.01  # metres above the floors a ray looks up over a gap within reach
CAUSE_KINDS = ("riser", "gap", "ceiling", "slope", "drop", "one_way", "wall")
GAP_CODE, CEILING_CODE, WALL_CODE = (CAUSE_KINDS.index(k) for k in ("gap", "ceiling", "wall"))
EMPTY = np.empty(0, np.int64)


class Cause(NamedTuple):
    """Why a region is cut off: kind one of CAUSE_KINDS; value (metres, degrees for a slope)
    and limit (the setting it exceeds, same unit); point (3,) where, metres; text the
    designer reads ("riser 0.41 m > step height 0.35 m at (x, y, z)")."""

    kind: str
    value: float
    limit: float
    point: np.ndarray
    text: str


def _text(kind, value, limit, point) -> str:
    at = f"at ({point[0]:.2f}, {point[1]:.2f}, {point[2]:.2f})"
    if kind == "riser":
        return f"riser {value:.2f} m > step height {limit:.2f} m {at}"
    if kind == "drop":
        return f"drop {value:.2f} m > step height {limit:.2f} m (no way back up) {at}"
    if kind == "ceiling":
        return f"ceiling {value:.2f} m < height {limit:.2f} m {at}"
    if kind == "wall":
        return f"wall in the way {at}"
    if kind == "one_way":
        return f"one-way move in (a fall or a jump of {value:.2f} m) {at}: no move back"
    if kind == "slope":
        return f"slope {value:.0f} deg > {limit:.0f} deg {at}"
    if value > limit:
        return f"gap {value:.2f} m > jump reach {limit:.2f} m {at}"
    return f"gap {value:.2f} m not crossed (jump reach about {limit:.2f} m) {at}"


def cross_reach(settings) -> float:
    """Metres a character crosses between two floors at one height: its stride over a gap
    (its diameter) plus, with jumps, the jump's flight at ``speed``."""
    s = settings
    v0 = math.sqrt(2.0 * s.gravity * s.jump_height)
    return 2.0 * s.radius + s.speed * 2.0 * v0 / max(s.gravity, 1e-12)


def _border_pairs(smap, h, inner, outer, settings):
    """(i, o, k, d): nodes ``inner`` (I,) and the nearest node where ``outer`` (N,) holds
    along grid direction d (index into DIRECTIONS), k columns away (k >= 1): within
    ``step_height`` of the inner node's height where there is one (across a gap, a ceiling,
    a slope), else at any height (a riser, a drop)."""
    s = settings
    i, o, k, d = _pairs_within(smap, h, inner, outer, s, s.step_height)
    rest = np.setdiff1d(inner, i)
    if rest.size:
        more = _pairs_within(smap, h, rest, outer, s, np.inf)
        i, o, k, d = (np.concatenate(pair) for pair in zip((i, o, k, d), more, strict=True))
    return i, o, k, d


def _pairs_within(smap, h, inner, outer, settings, band):
    """``_border_pairs`` with the outer node's height within ``band`` of the inner's."""
    free = smap.state == FREE
    theirs, mine_mask = free & outer, free & ~outer
    kk = reach_cells(settings, smap.grid.cell) + BORDER_CELLS_EXTRA
    out_i, out_o, out_k, out_d = [], [], [], []
    for d, (dx, dy) in enumerate(DIRECTIONS):
        rows = inner
        for k in range(1, kk + 1):
            col = shifted(smap.grid, smap.cell[rows], k * dx, k * dy)
            j = smap.columns.lookup(col, h[rows], -band, band, theirs, h)
            hit = j >= 0
            out_i.append(rows[hit])
            out_o.append(j[hit])
            out_k.append(np.full(int(hit.sum()), k))
            out_d.append(np.full(int(hit.sum()), d))
            # a free node of the inner side in between ends the search that way
            mine = smap.columns.lookup(col, h[rows], -settings.step_height,
                                       settings.step_height, mine_mask, h) >= 0
            rows = rows[~hit & ~mine]
            if not rows.size:
                break
    return (np.concatenate(out_i), np.concatenate(out_o), np.concatenate(out_k),
            np.concatenate(out_d))


def _between(mesh, smap, h, i, o, k, settings, classes):
    """Per pair: (kind code as CAUSE_KINDS, value, limit, point (P, 3)); a gap within reach
    under something low is a ceiling (``_gaps_within_reach``)."""
    s = settings
    u = s.up_vector
    n = i.size
    kind = np.full(n, 1, np.int64)  # gap
    pi, po = smap.stand[i], smap.stand[o]
    dist = np.linalg.norm((pi - po) - np.outer((pi - po) @ u, u), axis=1)
    value = np.maximum(dist - smap.grid.cell, 0.0)
    limit = np.full(n, cross_reach(s))
    point = 0.5 * (pi + po)
    dh = h[i] - h[o]  # the region's floor above the outer floor
    riser = dh > s.step_height + STEP_RISE_TOL
    drop = dh < -(s.step_height + STEP_RISE_TOL)
    kind[riser], value[riser], limit[riser] = 0, dh[riser], s.step_height
    kind[drop], value[drop], limit[drop] = 4, -dh[drop], s.step_height
    flat = np.flatnonzero(~riser & ~drop)
    if flat.size:  # a ceiling, a slope or a gap between two floors within a step
        mid = 0.5 * (smap.stand[i[flat]] + smap.stand[o[flat]])
        col = smap.grid.cell_of(mid)
        c = smap.columns.lookup(col, mid @ u, -s.step_height, s.step_height,
                                smap.state == CRAMPED)
        low = (c >= 0) & (np.nan_to_num(smap.clearance[np.maximum(c, 0)], nan=np.inf)
                          < s.height)
        rows = flat[low]
        kind[rows], limit[rows] = 2, s.height
        value[rows] = smap.clearance[c[low]]
        # floor between at their height that a body stands over but does not fit on: a wall
        between = smap.columns.lookup(col, mid @ u, -s.step_height, s.step_height,
                                      (smap.state == FREE) | (smap.state == COVERED)) >= 0
        rows = flat[~low & between]
        kind[rows], limit[rows] = WALL_CODE, 2.0 * s.radius
        rest = flat[~low & ~between & (k[flat] > 1)]
        if rest.size:
            m2 = 0.5 * (smap.stand[i[rest]] + smap.stand[o[rest]]) + u * s.step_height
            t, tri = raycast_chunks(mesh, m2, np.tile(-u, (rest.size, 1)), 2.0 * s.height)
            steep = (tri >= 0) & (classes[np.maximum(tri, 0)] == STEEP)
            nrm = mesh.normals[np.maximum(tri, 0)]
            ang = np.degrees(np.arccos(np.clip(np.abs(nrm @ u), -1.0, 1.0)))
            rows = rest[steep]
            kind[rows], value[rows], limit[rows] = 3, ang[steep], s.max_slope_deg
    step = riser | drop
    _ramps(mesh, smap, h, i, o, np.flatnonzero(step & (k > 1)), settings, classes,
           (kind, value, limit))
    step = step & (kind != 3)
    point = np.where(step[:, None], pi, point)
    _gaps_within_reach(mesh, (i, o), h, settings, (kind, value, limit, point))
    return kind, value, limit, point


def _ramps(mesh, smap, h, i, o, rows, settings, classes, out) -> None:
    """A riser or a drop (pairs ``rows``) with columns between whose mid column holds a
    steep face (a ray down from a step above the higher floor meets it) is a ramp too steep:
    a *slope* (value: its angle, degrees), written into ``out`` (kind, value, limit)."""
    if not rows.size:
        return
    s = settings
    u = s.up_vector
    kind, value, limit = out
    mid = 0.5 * (smap.stand[i[rows]] + smap.stand[o[rows]])
    top = np.maximum(h[i[rows]], h[o[rows]]) + s.step_height
    start = mid + np.outer(top - mid @ u, u)
    t, tri = raycast_chunks(mesh, start, np.tile(-u, (rows.size, 1)),
                            np.abs(h[i[rows]] - h[o[rows]]) + 2.0 * s.step_height)
    steep = np.isfinite(t) & (tri >= 0) & (classes[np.maximum(tri, 0)] == STEEP)
    nrm = mesh.normals[np.maximum(tri, 0)]
    ang = np.degrees(np.arccos(np.clip(np.abs(nrm @ u), -1.0, 1.0)))
    hit = rows[steep]
    kind[hit], value[hit], limit[hit] = 3, ang[steep], s.max_slope_deg


def _gaps_within_reach(mesh, pair, h, settings, out) -> None:
    """A gap no wider than its limit (the reach is an estimate: the flood's own jumps did
    not cross it) under something lower than ``height`` (a ray up from its middle at the
    floors' height meets it) is a *ceiling* (value: that clearance), written into ``out``
    (kind, value, limit, point; module docstring)."""
    kind, value, limit, point = out
    rows = np.flatnonzero((kind == GAP_CODE) & (value <= limit))
    if not rows.size:
        return
    s = settings
    u = s.up_vector
    i, o = pair
    base = np.maximum(h[i[rows]], h[o[rows]]) + CEILING_RAY_LIFT
    start = point[rows] + np.outer(base - point[rows] @ u, u)
    t, _tri = raycast_chunks(mesh, start, np.tile(u, (rows.size, 1)), s.height)
    low = np.isfinite(t)
    hit = rows[low]
    kind[hit], value[hit], limit[hit] = CEILING_CODE, t[low] + CEILING_RAY_LIFT, s.height
    point[hit] = start[low] - u * CEILING_RAY_LIFT


def _border(smap, h, label, inner, settings) -> np.ndarray:
    """The nodes of ``inner`` (I,) with a grid neighbour that is not a node of the same
    region (``label`` (N,) region of each node, -1 none) within ``step_height``: the border,
    where a move failed."""
    edge = np.zeros(inner.size, bool)
    for dx, dy in DIRECTIONS:
        col = shifted(smap.grid, smap.cell[inner], dx, dy)
        j = smap.columns.lookup(col, h[inner], -settings.step_height, settings.step_height,
                                label >= 0, h)
        edge |= (j < 0) | (label[np.maximum(j, 0)] != label[inner])
    return inner[edge]


def _grouped(kind, value, limit, point) -> tuple:
    """One Cause per kind found, most frequent first; each kind's least value (a ceiling's
    greatest clearance), with its point."""
    counts = np.bincount(kind, minlength=len(CAUSE_KINDS))
    out = []
    for code in np.argsort(-counts, kind="stable"):
        if not counts[code]:
            break
        rows = np.flatnonzero(kind == code)
        best = rows[np.argmin(value[rows])] if code != 2 else rows[np.argmax(value[rows])]
        name = CAUSE_KINDS[code]
        p = point[best]
        out.append(Cause(name, float(value[best]), float(limit[best]), p,
                         _text(name, float(value[best]), float(limit[best]), p)))
    return tuple(out)


def regions_causes(mesh, smap, h, members, outer, settings, moves=None) -> list:
    """Causes of each region of ``members`` (list of (M,) node arrays), ``outer`` (N,) bool
    the nodes across their borders (reached floor), in one batch; each a tuple grouped by
    kind, most frequent first (module docstring). ``moves``: None, or a list the failed
    border moves are appended to (``reach_what_if.BorderMoves`` fields: region index, inner
    node, outer node, grid direction inner -> outer, kind code, value), for
    ``reach_what_if.what_if``."""
    label = np.full(smap.face.size, -1, np.int64)
    for r, m in enumerate(members):
        label[m[smap.state[m] == FREE]] = r
    inner = np.flatnonzero(label >= 0)
    out: list = [()] * len(members)
    if not inner.size:
        return out
    i, o, k, d = _border_pairs(smap, h, _border(smap, h, label, inner, settings), outer,
                               settings)
    if not i.size:
        return out
    kind, value, limit, point = _between(mesh, smap, h, i, o, k, settings, smap.classes)
    reg = label[i]
    if moves is not None:
        moves.append((reg, i, o, d, kind, value))
    for r in np.unique(reg):
        rows = reg == r
        out[r] = _grouped(kind[rows], value[rows], limit[rows], point[rows])
    return out


def entry_causes(smap, h, members, links, settings, reached=None) -> list:
    """For each region of ``members`` (list of (M,) node arrays, traps): its way in as a
    one-cause tuple (module docstring): of the one-way moves of ``links`` (Links over the
    map's nodes; kinds other than WALK, STEP_UP, STEP_DOWN) from outside the region into
    it, from a node ``reached`` (N,) bool marks (None: any), the one of least drop; () for
    a region no such move enters (an island's fall into a trap is no way in)."""
    n = smap.face.size
    one_way = links.kind >= FALL
    if reached is not None:
        one_way &= reached[links.src]
    src, dst = links.src[one_way], links.dst[one_way]
    out: list = []
    inside = np.zeros(n, bool)
    for m in members:
        inside[m] = True
        rows = np.flatnonzero(inside[dst] & ~inside[src])
        inside[m] = False
        if not rows.size:
            out.append(())
            continue
        drop = h[src[rows]] - h[dst[rows]]
        # the least drop; a tie by the lowest (z, y, x) landing point, not by the moves' order
        land = smap.stand[dst[rows]]
        best = np.lexsort((land[:, 0], land[:, 1], land[:, 2], np.round(drop, 6)))[0]
        value = float(max(drop[best], 0.0))
        if value > settings.step_height + STEP_RISE_TOL:
            kind, point = "drop", land[best]
        else:
            kind, point = "one_way", smap.stand[src[rows[best]]]
        out.append((Cause(kind, value, settings.step_height, point,
                          _text(kind, value, settings.step_height, point)),))
    return out


def nearest_causes(mesh, smap, h, members, outer, settings) -> list:
    """For each region of ``members`` (list of (M,) node arrays): one cause read off as at a
    border (``_between``) from one pair: the free node of ``outer`` (N,) bool (the reached
    floor) nearest the mean of the region's free nodes, and the region's free node nearest
    that one; () where either side has no free node. For a region whose border shows no
    reached floor within the columns searched (module docstring)."""
    far = np.flatnonzero(outer & (smap.state == FREE))
    far_points = smap.stand[far]
    pairs = []
    for r, m in enumerate(members):
        m = m[smap.state[m] == FREE]
        if not far.size or not m.size:
            continue
        mp = smap.stand[m]
        o = far[np.argmin(((far_points - mp.mean(0)) ** 2).sum(1))]
        pairs.append((r, m[np.argmin(((mp - smap.stand[o]) ** 2).sum(1))], o))
    out: list = [()] * len(members)
    if not pairs:
        return out
    reg, i, o = (np.array(col, np.int64) for col in zip(*pairs, strict=True))
    u = settings.up_vector
    apart = smap.stand[i] - smap.stand[o]
    apart -= np.outer(apart @ u, u)
    k = np.maximum(np.rint(np.linalg.norm(apart, axis=1) / smap.grid.cell), 2).astype(np.int64)
    kind, value, limit, point = _between(mesh, smap, h, i, o, k, settings, smap.classes)
    for row, r in enumerate(reg):
        out[r] = _grouped(kind[row:row + 1], value[row:row + 1], limit[row:row + 1],
                          point[row:row + 1])
    return out


def region_visible(mesh, smap, members, eyes_from, settings, seed=0) -> bool:
    """True when a standing character at one of the reached free nodes ``eyes_from`` (E,)
    sees a point of the region ``members`` (M,) (module docstring)."""
    return bool(regions_visible(mesh, smap, [members], eyes_from, settings, seed)[0])


def _nearest(d, k) -> np.ndarray:
    """Indices of the ``k`` least of ``d`` (E,), ties by index: O(E), no full sort."""
    if d.size <= k:
        return np.lexsort((np.arange(d.size), d))
    cand = np.flatnonzero(d <= np.partition(d, k - 1)[k - 1])
    return cand[np.lexsort((cand, d[cand]))][:k]


def _sight_lines(smap, members, eyes_from, eye_points, settings, seed):
    """(eyes (A, 3), targets (A, 3)) the lines of sight looked along for one region (the
    module docstring), or None when it has no free node or nobody looks. eye_points : the
    three coordinate columns (E,) of the stand points of ``eyes_from``."""
    u = settings.up_vector
    inner = members[smap.state[members] == FREE]
    if not inner.size or not eyes_from.size:
        return None
    rng = np.random.default_rng(seed)
    tgt = smap.stand[inner if inner.size <= TARGETS else rng.choice(inner, TARGETS, False)]
    tgt = tgt + u * TARGET_LIFT
    m = tgt.mean(0)
    dx, dy, dz = (eye_points[i] - m[i] for i in range(3))
    d = dx * dx + dy * dy + dz * dz  # ((eye - m) ** 2).sum(1), the same floats, no (E, 3)
    near = eyes_from[_nearest(d, EYES // 2)]
    far = eyes_from if eyes_from.size <= EYES // 2 else rng.choice(eyes_from, EYES // 2, False)
    eyes = smap.stand[np.unique(np.concatenate([near, far]))] + u * (
        EYE_FRACTION * settings.height)
    return np.repeat(eyes, tgt.shape[0], axis=0), np.tile(tgt, (eyes.shape[0], 1))


def regions_visible(mesh, smap, regions, eyes_from, settings, seed=0) -> np.ndarray:
    """(R,) bool per region of ``regions`` (list of (M,) node arrays): a standing character
    at one of the reached free nodes ``eyes_from`` (E,) sees a point of it (module
    docstring). Every region's lines of sight are cast in one batch."""
    eye_points = [smap.stand[eyes_from, i] for i in range(3)]  # columns: one pass each
    lines = [_sight_lines(smap, m, eyes_from, eye_points, settings, seed) for m in regions]
    owner = np.concatenate([np.full(len(x[0]), r, np.int64)
                            for r, x in enumerate(lines) if x is not None] + [EMPTY])
    seen = np.zeros(len(regions), bool)
    if not owner.size:
        return seen
    a = np.concatenate([x[0] for x in lines if x is not None])
    ray = np.concatenate([x[1] for x in lines if x is not None]) - a
    length = np.linalg.norm(ray, axis=1)
    ok = length > 1e-9
    blocked = sight_blocked(mesh, a[ok], ray[ok] / length[ok, None], length[ok])
    np.logical_or.at(seen, owner[ok], ~blocked)
    return seen


def sight_blocked(mesh, origins, directions, lengths) -> np.ndarray:
    """(K,) bool: the segments from ``origins`` (K, 3) along unit ``directions`` (K, 3) for
    ``lengths`` (K,) metres meet ``mesh``: the rays of a raycast over the whole length, cast
    SIGHT_PIECE metres at a time from the origin, only the rays nothing met yet (a ray's box
    across a level holds thousands of triangles, a piece's a few; most lines of sight end
    at the first wall: oa_koth1's 9,056 lines, 6.1 CPU s cast whole, 0.18 s in pieces, every
    ray's answer the same). A piece reaches SIGHT_PIECE_OVERLAP past its end (a hit on the
    seam is met by one of the two pieces) but never past the segment's end."""
    hit = np.zeros(origins.shape[0], bool)
    live = np.arange(origins.shape[0])
    rounds = int(np.ceil(lengths.max(initial=0.0) / SIGHT_PIECE))
    for k in range(rounds):
        start = k * SIGHT_PIECE
        o = origins[live] + directions[live] * start
        md = np.minimum(SIGHT_PIECE + SIGHT_PIECE_OVERLAP, lengths[live] - start)
        t, _tri = raycast_chunks(mesh, o, directions[live], md)
        met = np.isfinite(t)
        hit[live[met]] = True
        live = live[~met & (lengths[live] > start + SIGHT_PIECE)]
        if not live.size:
            break
    return hit
