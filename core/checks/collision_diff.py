"""Render against collision, by the character: the level as the player sees it (render
meshes) against what the engine collides with (collision meshes), judged from the spawns
with the same capsule and controller as every other check.

``collision_diff(render, collision, spawns, settings)`` lets the spawns fall onto each mesh
(``settle``: a spawn placed in the air lands where the player does) and computes
``reachability`` on both meshes over one cell grid (the render's grid starts a whole number
of cells before the collision's, so a render span and a collision span in the same cell are
at the same horizontal point; the collision is never rebuilt, and a caller that flooded it
already, the CLI's reachability check, passes that flood as ``collision_reach``: the
collision is flooded once), then compares them at capsule resolution, in batches:

- On every FREE render span a spawn reaches (render reachability), the capsule standing
  there is let down onto the collision from ``step_height`` above (one batched sweep):
  it lands on collision floor (the height difference is the floor offset), finds no floor
  within ``step_height`` above or below (``hole``: the character falls through), or starts
  in collision that blocks it deeper than ``wall_tolerance`` (``invisible_wall``,
  standing).
- ``floating`` / ``sunk``: where it lands, collision floor more than ``tolerance`` above /
  below the render floor.
- ``invisible_wall`` (walking): two reached render spans joined both ways on the render
  whose collision spans (both FREE) are in different two-way components of the collision's
  moves.
- ``walk_through_wall``: the mirror on the collision side: a FREE collision span a spawn
  reaches (collision reachability) where the capsule overlaps render geometry that is not
  floor deeper than ``wall_tolerance`` (a visible wall the character walks through), or two
  collision spans joined both ways whose render spans are not.
- ``reach_differs``: standable floor in both whose class (reachable, trap, island) differs
  and is reachable on one of them, where no other kind already explains the span.

Marked spans are grouped into one problem per connected region (cells side by side, heights
within ``step_height``) per kind (``diff_problems.py``): its foot point, size (m^2 of floor;
for ``walk_through_wall`` the wall's horizontal length in metres), floor area, the render and
collision faces it concerns, a severity and a cause in words.

Frame and units: world space, metres, square metres; ``settings.up`` is up.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from ..constants import (
    COLLISION_DIFF_TOLERANCE,
    COLLISION_DIFF_WALL_TOLERANCE,
    DIFF_SLOP,
    STAND_MATCH,
    STANDABLE_CELL_FRACTION,
)
from ..geometry.validate import as_points
from ..mesh.patched import PatchedMesh
from ..mesh.triangle_mesh import TriangleMesh
from ..walk.walker import FALL_OUT_OF_LEVEL_DISTANCE
from .audits.cells import cell_grid
from .audits.common import (
    face_classes,
    horizontal_frame,
    raycast_chunks,
    settings_or_default,
)
from .audits.spans import blocking, sweep_chunks
from .audits.standable import FREE, exact_model
from .diff_problems import DIFF_KINDS, DiffProblem, kind_problems
from .reach_links import WALK
from .reachability import ISLAND, REACHABLE, TRAP, Reachability, mutual_components, reachability
from .severity import ERROR, INFO, WARNING

__all__ = ["DIFF_KINDS", "CollisionDiff", "DiffProblem", "collision_diff", "reach_reusable"]


class CollisionDiff(NamedTuple):
    """Result of ``collision_diff``: problems (tuple of DiffProblem, errors first then
    largest first); render, collision : the Reachability of each mesh (over one grid;
    flooded here with ``explain=False``: regions without causes or lines of sight);
    offset : (N,) metres collision floor minus render floor at each render span (NaN where
    not measured); tolerance, wall_tolerance : metres; cell_size : metres."""

    problems: tuple
    render: Reachability
    collision: Reachability
    offset: np.ndarray
    tolerance: float
    wall_tolerance: float
    cell_size: float

    def counts(self) -> dict:
        """{kind: number of problems} for every kind in DIFF_KINDS."""
        out = dict.fromkeys(DIFF_KINDS, 0)
        for p in self.problems:
            out[p.kind] += 1
        return out


def _as_mesh(value, name):
    if not isinstance(value, (TriangleMesh, PatchedMesh)):
        raise ValueError(f"{name} must be a core.TriangleMesh, got {type(value).__name__}")
    return value


def aligned_meshes(render, collision, up, cell):
    """(render, collision) on grids whose cells coincide, the collision as it is (so a flood
    of it made before, ``collision_reach``, is on the same grid): the standable map's grid
    starts one cell before the lowest vertex along each horizontal axis
    (``cells.cell_grid``), so the render gets one unreferenced vertex (at its own lowest
    height: nothing else reads it) a whole number of cells before the collision's lowest,
    at or below its own, and is built again; a render already there is returned as is."""
    u = np.asarray(up, float)
    e1, e2 = horizontal_frame(u)
    r_low = [float((render.vertices @ e).min()) for e in (e1, e2)]
    c_low = [float((collision.vertices @ e).min()) for e in (e1, e2)]
    if r_low == c_low:
        return render, collision
    x0, y0 = (c - cell * max(0.0, math.ceil((c - r) / cell)) for r, c in zip(r_low, c_low))
    h = float((render.vertices @ u).min())
    extra = (x0 * e1 + y0 * e2 + h * u)[None, :]
    return TriangleMesh(np.vstack([render.vertices, extra]), render.triangles), collision


def settle(mesh, spawns, s) -> np.ndarray:
    """(K, 3) the foot points ``spawns`` (K, 3) let fall onto ``mesh`` (the capsule swept
    down at most FALL_OUT_OF_LEVEL_DISTANCE): a spawn placed in the air lands where the
    player does (Quake's spawn points float up to 2 m above the floor); a spawn that starts
    in the mesh or has nothing below stays where it is."""
    u = s.up_vector
    a = spawns + u * (s.radius + s.skin_width)
    t, _n, _p, _t = sweep_chunks(mesh, a, a + u * (s.height - 2.0 * s.radius), s.radius,
                                 np.tile(-u * FALL_OUT_OF_LEVEL_DISTANCE, (spawns.shape[0], 1)))
    drop = np.where(np.isfinite(t), t, 0.0) * FALL_OUT_OF_LEVEL_DISTANCE
    return spawns - np.outer(drop, u)


def counterpart(src: Reachability, dst: Reachability, spans, heights, window, mask=None):
    """(S,) int64 the span of ``dst`` in the cell of each span ``spans`` of ``src`` whose
    height is nearest ``heights`` (S,) within +-``window`` metres (-1: none); ``mask``
    (N_dst,) bool limits the candidates."""
    smap, other = src.standable, dst.standable
    if not spans.size:
        return np.zeros(0, np.int64)
    cell = other.grid.cell_of(smap.foot[spans])
    return other.columns.lookup(cell, heights, -window, window, mask)


class _Side(NamedTuple):
    """Per-span marks on one map: kind masks (N,) bool by name, value (N,) float, faces on
    the other mesh (N,) int64 (-1)."""

    marks: dict
    value: np.ndarray
    other_face: np.ndarray


def _let_down(collision, s, centre, lift, shrink=0.0):
    """The capsules of lower-sphere centres ``centre`` (K, 3) raised ``lift`` metres and
    swept down ``lift + step_height`` on ``collision``, their radius less ``shrink`` metres
    (the same foot and top). Returns (offset (K,) metres of the collision floor above (+)
    or below (-) the floor the centre rests on, ``skin_width`` below it, NaN where the
    capsule lands on no floor it stands on (walkable support); triangle (K,); missed (K,)
    bool nothing met; obstructed (K,) bool it starts in the collision or first meets what
    it cannot stand on: a wall it grazes, an edge, a steep face; started (K,) bool it starts
    in the collision)."""
    u = s.up_vector
    r = s.radius - shrink
    a = centre + u * (lift - shrink)
    seg = u * (s.height - 2.0 * r)
    reach = lift + s.step_height
    t, nrm, _p, tri = sweep_chunks(collision, a, a + seg, r,
                                   np.tile(-u * reach, (centre.shape[0], 1)))
    met = np.isfinite(t)
    stand = met & (t > 0.0) & (nrm @ u >= s.cos_max_slope)
    moved = lift - reach * np.where(stand, t, 0.0) + s.skin_width
    return np.where(stand, moved, np.nan), tri, ~met, met & ~stand, t == 0.0


def _floor_under(collision, s, foot) -> np.ndarray:
    """(K,) metres the collision floor right under (+ above) the floor points ``foot``
    (K, 3), within ``step_height`` either way (a ray down onto an up-facing face; NaN: none).
    A capsule resting on the lip of a hole has no floor under its foot: not sunk."""
    u = s.up_vector
    k = foot.shape[0]
    if not k:
        return np.zeros(0)
    t, tri = raycast_chunks(collision, foot + u * s.step_height, np.tile(-u, (k, 1)),
                            2.0 * s.step_height)
    ok = np.isfinite(t) & (collision.normals[np.maximum(tri, 0)] @ u > 0.0)
    return np.where(ok, s.step_height - np.where(ok, t, 0.0), np.nan)


def same_stand(R: Reachability, C: Reachability, spans, tol) -> tuple:
    """(matched (S,) bool, twin (S,) int64): the FREE render spans ``spans`` whose cell has a
    FREE collision span at the same floor height (within ``tol``) where the character stands
    at the same point (within STAND_MATCH): the capsule fits there on both, at the same
    height, so letting it down would find what the maps already say."""
    twin = counterpart(R, C, spans, R.standable.height[spans], tol,
                       C.standable.state == FREE)
    ok = twin >= 0
    d = np.abs(C.standable.stand[np.maximum(twin, 0)] - R.standable.stand[spans]).max(1)
    return ok & (d <= STAND_MATCH), twin


def _render_marks(R: Reachability, C: Reachability, collision, s, tol, wall_tol) -> tuple:
    """(marks on the render map: hole, invisible_wall (standing and walking), floating,
    sunk (module docstring); offset (N,) metres collision floor minus render floor, NaN
    where not measured)."""
    rm = R.standable
    n = rm.face.size
    marks = {k: np.zeros(n, bool) for k in ("hole", "invisible_wall", "floating", "sunk")}
    value = np.zeros(n)
    other = np.full(n, -1, np.int64)
    offset = np.full(n, np.nan)
    reached = np.flatnonzero((rm.state == FREE) & (R.cell_class <= TRAP))
    same, twin = same_stand(R, C, reached, tol)
    up = s.up_vector
    offset[reached[same]] = (C.standable.stand[twin[same]] - rm.stand[reached[same]]) @ up
    other[reached[same]] = C.standable.face[twin[same]]
    spans = reached[~same]
    centre = rm.centre[spans]
    off, tri, hole, obstructed, _started = _let_down(collision, s, centre, s.step_height)
    rows = np.flatnonzero(obstructed)
    blk = blocking(collision, s, centre[rows], face_classes(collision, s))
    wall = blk.blocked & (blk.depth > wall_tol)
    marks["invisible_wall"][spans[rows[wall]]] = True
    value[spans[rows[wall]]] = blk.depth[wall]
    other[spans[rows[wall]]] = blk.blocker[wall]
    # Not blocked beyond the tolerance: the floor under a capsule thinner by it (it starts
    # clear of what the full one grazes), from a step above, else from where it stands.
    shrink = min(wall_tol + DIFF_SLOP, 0.5 * s.radius)
    rows = rows[~wall]
    buried = np.zeros(rows.size, bool)
    for lift in (s.step_height, 0.0):
        o, t, h, still, buried = _let_down(collision, s, centre[rows], lift, shrink)
        done = ~still
        off[rows[done]], tri[rows[done]], hole[rows[done]] = o[done], t[done], h[done]
        rows, buried = rows[still], buried[still]
    # Thinned, from a step up and from where it stands, still in the collision: buried under
    # collision the player cannot see. Landing on an edge or a steep face with no floor under
    # the foot either: the lip of a hole, where the character slides in.
    marks["invisible_wall"][spans[rows[buried]]] = True
    other[spans[rows[buried]]] = tri[rows[buried]]
    lip = rows[~buried]
    hole[lip[np.isnan(_floor_under(collision, s, rm.foot[spans[lip]]))]] = True
    marks["hole"][spans[hole]] = True
    landed = ~np.isnan(off)
    offset[spans[landed]] = off[landed]
    other[spans[landed]] = tri[landed]
    value[spans[landed]] = off[landed]
    under = np.full(spans.size, np.nan)
    under[landed] = _floor_under(collision, s, rm.foot[spans[landed]])
    marks["floating"][spans[landed & (off > tol) & (under > tol)]] = True
    marks["sunk"][spans[landed & (off < -tol) & (under < -tol)]] = True
    measured = reached[~np.isnan(offset[reached])]
    split, face = _split_moves(R, C, measured, offset, s)
    walk = split & ~marks["invisible_wall"]
    marks["invisible_wall"] |= walk
    other[walk] = face[walk]
    return _Side(marks, value, other), offset


def _split_moves(A: Reachability, B: Reachability, spans, offset, s) -> tuple:
    """(split (N_A,) bool, face (N_A,) int64): spans of ``A`` among ``spans`` joined both
    ways on ``A`` to another of them whose spans on ``B`` (same cell, the FREE one nearest
    the height plus ``offset`` (N_A,), within ``step_height``) are both FREE but in different
    two-way components of ``B``'s moves: a move ``A`` makes and ``B`` refuses; ``face`` the
    face of each split span's span on ``B`` (-1 for the others)."""
    n_a, n_b = A.standable.face.size, B.standable.face.size
    out = np.zeros(n_a, bool)
    on = np.zeros(n_a, bool)
    on[spans] = True
    comp_b = mutual_components(n_b, B.moves)
    h = A.standable.height + np.nan_to_num(offset)
    twin = np.full(n_a, -1, np.int64)
    twin[spans] = counterpart(A, B, spans, h[spans], s.step_height,
                              B.standable.state == FREE)
    src, dst = A.moves.src, A.moves.dst
    keep = on[src] & on[dst] & (twin[src] >= 0) & (twin[dst] >= 0)
    src, dst = src[keep], dst[keep]  # the way back of a kept move is kept too
    both = (A.moves.kind[keep] == WALK) | np.isin(dst * n_a + src, src * n_a + dst)
    src, dst = src[both], dst[both]
    split = comp_b[twin[src]] != comp_b[twin[dst]]
    out[src[split]] = True
    face = np.where(out, B.standable.face[np.maximum(twin, 0)], -1)
    return out, face


def _collision_marks(R: Reachability, C: Reachability, render, s, tol, wall_tol) -> _Side:
    """Marks on the collision map: walk_through_wall where a FREE collision span a spawn
    reaches has no FREE render span within ``tolerance`` of its height and the capsule there
    overlaps render geometry that is not floor deeper than ``wall_tolerance``; and where two
    reached collision spans joined both ways have render spans that are not."""
    cm = C.standable
    n = cm.face.size
    wall = np.zeros(n, bool)
    value = np.zeros(n)
    other = np.full(n, -1, np.int64)
    spans = np.flatnonzero((cm.state == FREE) & (C.cell_class <= TRAP))
    if spans.size:
        twin = counterpart(C, R, spans, cm.height[spans], tol, R.standable.state == FREE)
        test = spans[twin < 0]
        blk = blocking(render, s, cm.centre[test], face_classes(render, s))
        hit = blk.blocked & (blk.depth > wall_tol)
        wall[test[hit]] = True
        value[test[hit]] = blk.depth[hit]
        other[test[hit]] = blk.blocker[hit]
        split, face = _split_moves(C, R, spans, np.zeros(n), s)
        walk = split & ~wall
        wall |= walk
        other[walk] = face[walk]
    return _Side({"walk_through_wall": wall}, value, other)


def _reach_marks(R: Reachability, C: Reachability, offset, taken, s) -> tuple:
    """(marks (N,) bool on the render map, their collision spans (N,)): standable render
    floor whose collision span (same cell, nearest the height plus ``offset``, within
    ``step_height``) is standable too and of another class, one of them REACHABLE; spans in
    ``taken`` (N,) bool (another kind explains them) are left out."""
    rm = R.standable
    n = rm.face.size
    out = np.zeros(n, bool)
    twin = np.full(n, -1, np.int64)
    spans = np.flatnonzero((R.cell_class <= ISLAND) & ~taken)
    if not spans.size:
        return out, twin
    h = rm.height[spans] + np.nan_to_num(offset[spans])
    j = counterpart(R, C, spans, h, s.step_height, C.cell_class <= ISLAND)
    ok = j >= 0
    a, b = R.cell_class[spans[ok]], C.cell_class[j[ok]]
    differ = (a != b) & ((a == REACHABLE) | (b == REACHABLE))
    out[spans[ok][differ]] = True
    twin[spans[ok]] = j[ok]
    return out, twin



def _metres(value, name) -> float:
    """``value`` as finite metres >= 0; ValueError naming ``name``."""
    try:
        out = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a number of metres, got {value!r}") from None
    if not math.isfinite(out) or out < 0.0:
        raise ValueError(f"{name} must be finite and >= 0 metres, got {value!r}")
    return out


def reach_reusable(reach, collision, settings=None) -> bool:
    """Whether ``reach`` can stand for the collision's own flood in ``collision_diff(...,
    collision_reach=reach)``: a Reachability with the settings the diff judges by (the exact
    model of ``settings``; an engine model floods with its own climb, another map) over the
    grid of ``collision`` (the same cells), every floor point on the plane of its face of
    ``collision`` (within STAND_MATCH). What it cannot tell: a flood of another mesh with
    these bounds and these floors (give the flood of this very mesh)."""
    if not isinstance(reach, Reachability):
        return False
    s = exact_model(settings_or_default(settings))
    g, smap = reach.standable.grid, reach.standable
    want = cell_grid(collision, s.up_vector, STANDABLE_CELL_FRACTION * s.radius)
    if reach.settings != s or not np.array_equal(g.up, want.up) or (
            (g.ox, g.oy, g.cell, g.nx, g.ny) != (want.ox, want.oy, want.cell, want.nx, want.ny)):
        return False
    face = smap.face
    if face.size and (face.min() < 0 or face.max() >= collision.triangles.shape[0]):
        return False
    corner = collision.vertices[collision.triangles[face, 0]]
    off = np.einsum("ij,ij->i", smap.foot - corner, collision.normals[face])
    return bool(np.all(np.abs(off) <= STAND_MATCH))


def collision_diff(render, collision, spawns, settings=None, *,
                   tolerance=COLLISION_DIFF_TOLERANCE,
                   wall_tolerance=COLLISION_DIFF_WALL_TOLERANCE,
                   collision_reach=None, workers: int = 1) -> CollisionDiff:
    """Render against collision, judged by the character from ``spawns`` (module docstring).

    render, collision : core.TriangleMesh in the same frame (metres); spawns : (K, 3) foot
    points, K >= 1; settings : ControllerSettings (default if None), judged by the exact
    model; tolerance : metres (>= 0) a collision floor may lie above or below the render
    floor under a standing character before it is floating / sunk; wall_tolerance : metres
    (>= 0) the capsule may overlap the other mesh before it is a wall. collision_reach :
    ``core.reachability(collision, spawns, settings)`` when the caller has it already (the
    CLI's reachability check): used instead of flooding the collision again (it must pass
    ``reach_reusable``), or None. workers : processes sharing the floods' arcs
    (``core.reachability``). ValueError naming the argument for bad input."""
    render = _as_mesh(render, "render")
    collision = _as_mesh(collision, "collision")
    pts = as_points(spawns, "spawns")
    if not pts.shape[0]:
        raise ValueError("spawns: give at least one foot point to judge the level from")
    tol = _metres(tolerance, "tolerance")
    wall_tol = _metres(wall_tolerance, "wall_tolerance")
    s = exact_model(settings_or_default(settings))
    cell = STANDABLE_CELL_FRACTION * s.radius
    if collision_reach is not None and not reach_reusable(collision_reach, collision, s):
        raise ValueError("collision_reach: not core.reachability of this collision mesh with "
                         "these settings (reach_reusable); leave it out to flood here")
    rmesh, cmesh = aligned_meshes(render, collision, s.up_vector, cell)
    R = reachability(rmesh, settle(rmesh, pts, s), s, explain=False, workers=workers)
    C = (collision_reach if collision_reach is not None else
         reachability(cmesh, settle(cmesh, pts, s), s, explain=False, workers=workers))
    rside, offset = _render_marks(R, C, cmesh, s, tol, wall_tol)
    cside = _collision_marks(R, C, rmesh, s, tol, wall_tol)
    taken = np.zeros(R.standable.face.size, bool)
    for mask in rside.marks.values():
        taken |= mask
    differ, twin = _reach_marks(R, C, offset, taken, s)
    cm = C.standable
    twin_faces = np.where(twin >= 0, cm.face[np.maximum(twin, 0)], rside.other_face)
    classes = np.stack([R.cell_class, np.where(twin >= 0, C.cell_class[np.maximum(twin, 0)],
                                               ISLAND)], 1)
    problems = []
    for kind in ("hole", "invisible_wall", "floating", "sunk"):
        problems += kind_problems(kind, R, rside.value, rside.marks[kind], rside.other_face, s,
                                  None)
    problems += kind_problems("walk_through_wall", C, cside.value,
                              cside.marks["walk_through_wall"], cside.other_face, s, None)
    problems += kind_problems("reach_differs", R, np.zeros(taken.size), differ, twin_faces, s,
                              classes)
    rank = {ERROR: 0, WARNING: 1, INFO: 2}
    problems.sort(key=lambda p: (rank[p.severity], DIFF_KINDS.index(p.kind), -p.size))
    return CollisionDiff(tuple(problems), R, C, offset, tol, wall_tol, cell)
