"""Spans of the standable map and the capsule tests at them.

A *span* is one walkable floor at one cell centre: the cell centre projected along ``up``
onto a walkable face whose projection covers it (``cells.rasterise``). A column of cells
holds one span per storey. Each span is judged with the real capsule:

- *inside*: the span lies inside a closed solid (the first face above it, coincident faces
  together, faces up: ``cells.inside_solids``): not a place a character can be.
- *free*: the character's capsule resting on the span's face (lower sphere ``skin_width``
  off the face along its normal, as the controller leaves it) touches nothing but floor: no
  contact other than a walkable triangle touching it from below (contact normal . up >
  SUPPORT_MIN_COS, the controller's support test). Most spans of open ground are certified
  free by the open-ground screen without a mesh query (``screen.open_at``).
- *pushed free*: a span blocked at its centre whose capsule, pushed horizontally out of its
  blocking contacts (PUSH_ROUNDS rounds, at most one cell in all), is free and still stands
  on walkable floor there. The character fits at that point of the cell (a 0.8 m strip
  between pillars has free points though no cell centre is free).

Frame and units: world space, metres; ``settings.up`` is up.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ...constants import (
    COINCIDENT_SPAN,
    PUSH_MIN_HORIZONTAL,
    PUSH_PLANES,
    PUSH_ROUNDS,
    PUSH_SLOP,
    STEP_RISE_TOL,
    SUPPORT_MIN_COS,
)
from ...controller.planes import solve_planes
from ..walkability import WALKABLE
from .cells import Records, inside_solids, rasterise
from .common import PROBE_LIFT, contacts_chunks, map_rows, raycast_chunks, up_normals


class Spans(NamedTuple):
    """N spans sorted by (cell, height): face (N,) int64 walkable face; cell (N,) int64 flat
    cell index; foot (N, 3) the cell centre on the face; height (N,) foot . up; inside (N,)
    bool inside a closed solid; normal (N, 3) the face's unit normal turned up."""

    face: np.ndarray
    cell: np.ndarray
    foot: np.ndarray
    height: np.ndarray
    inside: np.ndarray
    normal: np.ndarray


def build_spans(mesh, settings, grid, classes):
    """Rasterise every non-vertical triangle at the cell centres; the walkable ones are the
    spans (coincident duplicates merged, COINCIDENT_SPAN). Returns (Spans with ``inside``
    all False, the Records of every triangle for ``mark_inside``)."""
    rec = rasterise(mesh, grid, np.arange(mesh.n_triangles))
    return spans_of(mesh, settings, grid, classes, rec), rec


def spans_of(mesh, settings, grid, classes, rec: Records) -> Spans:
    """The Spans (``inside`` all False) of the walkable up-facing records ``rec``."""
    walk = (classes[rec.triangle] == WALKABLE) & (rec.side > 0)
    face, cell, height = rec.triangle[walk], rec.cell[walk], rec.height[walk]
    order = np.argsort(cell, kind="stable")
    face, cell, height = face[order], cell[order], height[order]
    # cells of several spans (storeys, coincident faces): ordered by height, then face
    same = cell[1:] == cell[:-1]
    multi = np.flatnonzero(np.r_[same, False] | np.r_[False, same])
    if multi.size:
        sub = multi[np.lexsort((face[multi], height[multi], cell[multi]))]
        face[multi], height[multi] = face[sub], height[sub]
    dup = np.r_[False, (cell[1:] == cell[:-1]) & (height[1:] - height[:-1] <= COINCIDENT_SPAN)]
    face, cell, height = face[~dup], cell[~dup], height[~dup]
    x, y = grid.centre_xy(cell)
    foot = grid.to_world(x, y, height)
    return Spans(face, cell, foot, height, np.zeros(face.size, bool),
                 up_normals(mesh, face, settings.up_vector))


def mark_inside(sp: Spans, rec: Records, rows) -> None:
    """Set ``sp.inside`` of the spans ``rows`` (R,): inside a closed solid
    (``cells.inside_solids`` just above the floor, coincident faces within COINCIDENT_SPAN
    together); only the records of their cells are sorted."""
    if not rows.size:
        return
    cells = np.unique(sp.cell[rows])  # searched, not sorted with the 860 k records
    keep = cells[np.minimum(np.searchsorted(cells, rec.cell), cells.size - 1)] == rec.cell
    sub = Records(*(col[keep] for col in rec))
    sp.inside[rows] = inside_solids(sub, sp.cell[rows], sp.height[rows] + PROBE_LIFT,
                                    COINCIDENT_SPAN)


def resting_centres(settings, foot, normal) -> np.ndarray:
    """(K, 3) lower-sphere centres of the capsule resting on floor points ``foot`` (K, 3) of
    faces with up-turned unit normals ``normal`` (K, 3): ``skin_width`` off the face."""
    return foot + normal * (settings.radius + settings.skin_width)


class Blocking(NamedTuple):
    """Capsule tests of K capsules: blocked (K,) bool; depth (K,) metres the deepest blocking
    penetration (0 if free); blocker (K,) int64 its triangle (-1); and the blocking contacts
    as flat arrays query (B,), depth (B,), normal (B, 3)."""

    blocked: np.ndarray
    depth: np.ndarray
    blocker: np.ndarray
    query: np.ndarray
    contact_depth: np.ndarray
    contact_normal: np.ndarray


def blocking(mesh, settings, a, classes, floor_supports=True) -> Blocking:
    """The capsules with lower-sphere centres ``a`` (K, 3): which are blocked, by what.

    A contact blocks unless it is floor: a walkable triangle touching the capsule from below
    (contact normal . up > SUPPORT_MIN_COS, the controller's support test); with
    ``floor_supports=False`` every contact blocks."""
    s = settings
    u = s.up_vector
    b = a + u * (s.height - 2.0 * s.radius)
    q, tri, depth, normal = contacts_chunks(mesh, a, b, s.radius)
    blocks = (classes[tri] != WALKABLE) | (normal @ u <= SUPPORT_MIN_COS)
    if not floor_supports:
        blocks[:] = True
    q, tri, depth, normal = q[blocks], tri[blocks], depth[blocks], normal[blocks]
    k = a.shape[0]
    worst = np.zeros(k)
    blocker = np.full(k, -1, np.int64)
    # contacts come sorted by query, deepest first: the first row of a query is its worst
    first = np.r_[True, q[1:] != q[:-1]] if q.size else np.zeros(0, bool)
    worst[q[first]] = depth[first]
    blocker[q[first]] = tri[first]
    return Blocking(blocker >= 0, worst, blocker, q, depth, normal)


def squeezed(mesh, settings, a, classes, blk: Blocking) -> np.ndarray:
    """(K,) metres the capsules of lower-sphere centres ``a`` (K, 3), resting ``skin_width``
    off their floor and blocked (``blk``) only by ceilings less than ``skin_width`` deep
    (contacts pushing down), are lowered into their skin to fit (0: not so): the
    controller walks under a ceiling its capsule clears, touching being no contact, though
    its skin does not (issue 24: a 1.81 m ceiling over a 1.8 m character)."""
    s = settings
    u = s.up_vector
    k = a.shape[0]
    out = np.zeros(k)
    down = blk.contact_normal @ u < -SUPPORT_MIN_COS
    other = np.zeros(k, bool)
    other[blk.query[~down]] = True
    lower = np.zeros(k)  # lowering by depth / cos clears a contact whose normal is tilted
    np.maximum.at(lower, blk.query[down],
                  blk.contact_depth[down] / -(blk.contact_normal[down] @ u))
    cand = np.flatnonzero(blk.blocked & ~other & (lower + PUSH_SLOP < s.skin_width))
    if cand.size:
        drop = lower[cand] + PUSH_SLOP
        again = blocking(mesh, s, a[cand] - np.outer(drop, u), classes)
        ok = ~again.blocked
        out[cand[ok]] = drop[ok]
    return out


def sweep_chunks(mesh, a, b, radius, disp):
    """First hits of K capsule sweeps in chunks (``common.map_rows``): time (K,) (inf:
    miss), normal (K, 3), point (K, 3), triangle (K,) as in ``SweepBatch``."""
    k = a.shape[0]
    t = np.full(k, np.inf)
    nrm = np.zeros((k, 3))
    pt = np.zeros((k, 3))
    tri = np.full(k, -1, np.int64)

    def chunk(i, j):
        hit = mesh.sweep_capsule_many(a[i:j], b[i:j], radius, disp[i:j])
        t[i:j], nrm[i:j], pt[i:j], tri[i:j] = hit.time, hit.normal, hit.point, hit.triangle

    map_rows(chunk, k)
    return t, nrm, pt, tri


def supported(mesh, settings, a, classes) -> np.ndarray:
    """(K,) bool: a walkable triangle touches the capsules of lower-sphere centres ``a``
    (K, 3) from below within ``ground_probe`` (contact normal . up > SUPPORT_MIN_COS)."""
    s = settings
    u = s.up_vector
    b = a + u * (s.height - 2.0 * s.radius)
    q, tri, _d, normal = contacts_chunks(mesh, a, b, s.radius + s.ground_probe)
    ok = (classes[tri] == WALKABLE) & (normal @ u > SUPPORT_MIN_COS)
    out = np.zeros(a.shape[0], bool)
    out[q[ok]] = True
    return out


class Rest(NamedTuple):
    """Where K capsules stand at given horizontal places (``rest_at``): free (K,) bool;
    stand (K, 3) the point the character stands on there (NaN if not free): the floor point,
    or for a raised rest the axis at the height of its support; raised (K,) bool blocked on
    the floor but standing on something at most ``step_height`` higher (a stair nosing);
    centre (K, 3) the lower-sphere centre of the capsule standing there (NaN if not free)."""

    free: np.ndarray
    stand: np.ndarray
    raised: np.ndarray
    centre: np.ndarray


def rest_at(mesh, settings, classes, foot, normal, floor_blk: Blocking) -> Rest:
    """The capsules at floor points ``foot`` (K, 3) on faces of normals ``normal``, whose
    floor rests (``resting_centres``) gave ``floor_blk``: free on the floor, or raised.

    Raised: the capsule ``step_height`` above its floor rest touches nothing; swept straight
    down it lands on a support (a walkable triangle touching it from below within
    ``ground_probe``) whose contact point is at most ``step_height`` (+ STEP_RISE_TOL) above
    the floor: the character stands there, as on a stair nosing in front of the next riser.
    A support higher than that (the corner of a taller box) is no place on this floor."""
    s = settings
    u = s.up_vector
    k = foot.shape[0]
    free = ~floor_blk.blocked
    stand = np.where(free[:, None], foot, np.nan)
    centre = np.where(free[:, None], resting_centres(s, foot, normal), np.nan)
    raised = np.zeros(k, bool)
    rows = np.flatnonzero(floor_blk.blocked)
    a0 = resting_centres(s, foot[rows], normal[rows]) + u * s.step_height
    blk = blocking(mesh, s, a0, classes, floor_supports=False)
    go = rows[~blk.blocked]
    if go.size:
        a1 = a0[~blk.blocked]
        drop = s.step_height + s.skin_width + s.ground_probe
        t, nrm, pt, _tri = sweep_chunks(mesh, a1, a1 + u * (s.height - 2.0 * s.radius),
                                        s.radius, np.tile(-u * drop, (go.size, 1)))
        land = a1 - np.outer(np.where(np.isfinite(t), t, 0.0) * drop, u)
        rise = pt @ u - foot[go] @ u
        ok = np.isfinite(t) & (t > 0.0) & (nrm @ u > SUPPORT_MIN_COS) & (
            rise <= s.step_height + STEP_RISE_TOL)
        ok[ok] = supported(mesh, s, land[ok], classes)
        free[go[ok]] = raised[go[ok]] = True
        stand[go[ok]] = land[ok] + np.outer(pt[ok] @ u - land[ok] @ u, u)
        centre[go[ok]] = land[ok]
    return Rest(free, stand, raised, centre)


def _planes(settings, blk: Blocking, k, offset):
    """The push planes of K capsules from their blocking contacts ``blk`` (``query``
    indexes 0..K-1) measured with the capsules already pushed by ``offset`` (K, 3):
    (normal (K, M, 3) unit horizontal, depth (K, M) metres a total push from the unpushed
    place must reach along it; stuck (K,) bool: a contact cannot be cleared horizontally
    (PUSH_MIN_HORIZONTAL: a ceiling)). Contacts from below (normal . up > SUPPORT_MIN_COS:
    a nosing or a kerb under the lower sphere) give no plane: the raised rest stands on
    them. M = PUSH_PLANES, the deepest contacts first."""
    u = settings.up_vector
    n = blk.contact_normal
    side = n @ u <= SUPPORT_MIN_COS
    n, q, d = n[side], blk.query[side], blk.contact_depth[side]
    nh = n - np.outer(n @ u, u)
    hl = np.sqrt(np.einsum("ij,ij->i", nh, nh))
    stuck = np.zeros(k, bool)
    stuck[q[hl < PUSH_MIN_HORIZONTAL]] = True
    ok = hl >= PUSH_MIN_HORIZONTAL
    q, nh, hl, d = q[ok], nh[ok], hl[ok], d[ok]
    unit = nh / hl[:, None]
    need = (d + PUSH_SLOP) / hl + np.einsum("ij,ij->i", unit, offset[q])
    rank = np.arange(q.size) - np.searchsorted(q, q, side="left")  # deepest first per query
    keep = rank < PUSH_PLANES
    normal = np.zeros((k, PUSH_PLANES, 3))
    depth = np.zeros((k, PUSH_PLANES))
    normal[q[keep], rank[keep]] = unit[keep]
    depth[q[keep], rank[keep]] = need[keep]
    return normal, depth, stuck


def on_plane(foot, normal, up, move):
    """Floor points (K, 3): ``foot`` moved horizontally by ``move`` (K, 3), kept on the plane
    through ``foot`` with unit normal ``normal`` (K, 3)."""
    rise = -np.einsum("ij,ij->i", normal, move) / (normal @ up)
    return foot + move + np.outer(rise, up)


def _floor_under(mesh, settings, classes, feet) -> np.ndarray:
    """(K,) bool: walkable floor within ``ground_probe`` under floor points ``feet`` (K, 3)
    (a ray from PROBE_LIFT above)."""
    u = settings.up_vector
    reach = PROBE_LIFT + settings.ground_probe
    _t, tri = raycast_chunks(mesh, feet + u * PROBE_LIFT, np.tile(-u, (feet.shape[0], 1)),
                             reach)
    return (tri >= 0) & (classes[np.maximum(tri, 0)] == WALKABLE)


def push_out(mesh, settings, classes, foot, normal, floor_blk: Blocking, rest: Rest,
             max_push):
    """Free foot points (K, 3) and their lower-sphere centres (K, 3) of K capsules not free
    at ``foot`` (K, 3) (``rest``, on faces of unit normals ``normal``; their floor rests gave
    ``floor_blk``), pushed horizontally out of their blocking contacts and judged again on
    the floor and raised at each pushed place; NaN rows where no push of at most
    ``max_push`` metres frees the capsule (a floor rest also needs walkable floor under the
    pushed foot).

    Each round adds the planes of the contacts met (``_planes``) and solves all planes met so
    far for the smallest push (``core.planes.solve_planes``, Box2D's plane solver), so a
    strip's two walls and a corner's two walls are cleared together."""
    s = settings
    u = s.up_vector
    k = foot.shape[0]
    out = np.full((k, 3), np.nan)
    cen = np.full((k, 3), np.nan)
    live = np.flatnonzero(~rest.free)
    blk = _renumber(floor_blk, ~rest.free)
    planes_n = np.zeros((live.size, 0, 3))
    planes_d = np.zeros((live.size, 0))
    push = np.zeros((live.size, 3))
    for _ in range(PUSH_ROUNDS):
        pn, pd, stuck = _planes(s, blk, live.size, push)
        planes_n = np.concatenate([planes_n, pn], axis=1)
        planes_d = np.concatenate([planes_d, pd], axis=1)
        sol = solve_planes(planes_n, planes_d)
        moved = (sol.length > 0.0) & ~stuck & (sol.length <= max_push)
        live, push = live[moved], sol.push[moved]
        planes_n, planes_d = planes_n[moved], planes_d[moved]
        if not live.size:
            break
        feet = on_plane(foot[live], normal[live], u, push)
        fb = blocking(mesh, s, resting_centres(s, feet, normal[live]), classes)
        floor_ok = ~fb.blocked
        floor_ok[floor_ok] = _floor_under(mesh, s, classes, feet[floor_ok])
        again = rest_at(mesh, s, classes, feet, normal[live], Blocking(~floor_ok, *fb[1:]))
        out[live[again.free]] = again.stand[again.free]
        cen[live[again.free]] = again.centre[again.free]
        still = ~again.free
        blk = _renumber(fb, still)
        live, push = live[still], push[still]
        planes_n, planes_d = planes_n[still], planes_d[still]
    return out, cen


def _renumber(blk: Blocking, keep) -> Blocking:
    """``blk`` (rows numbered as ``keep`` (K,) bool) restricted to the kept rows,
    renumbered 0..k'-1."""
    new = np.cumsum(keep) - 1
    c = keep[blk.query]
    return Blocking(blk.blocked[keep], blk.depth[keep], blk.blocker[keep], new[blk.query[c]],
                    blk.contact_depth[c], blk.contact_normal[c])
