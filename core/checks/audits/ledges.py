"""Ledge audit: runs of walkable-floor boundary over a drop a character can walk off.

Boundary edges are the edges of walkable faces that no other walkable face shares
(vertices welded by exact position first, so split normals or UV seams do not make every
edge a boundary). Each is probed at LEDGE_SAMPLES points: a sample counts when it is not
inside a solid (``column_rays``), nothing stops a character walking over it (a horizontal
ray ``step_height`` above the edge, outward for ``radius``, is free: no wall or rise taller
than a step) and the floor ``radius`` beyond the edge, found by a ray down, is more than
``safe_drop`` below the edge (or absent) at every one of three distances beyond it (just
past it, ``min_step_depth`` and ``radius``: a crack or a tread below catches the
character). Boundary edges with such a sample are merged into *runs*: edges meeting at a
vertex that only they share, nearly collinear (LEDGE_RUN_COS) and dropping to the same
side. One row per run.

Reachability (issue 12): a ledge is reported only on walkable *regions* a character can
reach. Regions are the walkable faces joined by shared (welded) edges. Two regions connect
both ways where a boundary probe of one finds a walkable face of the other beyond its edge
within ``step_height`` up or down with no wall in the way (a step, a ramp's foot); a drop
deeper than that lets a character fall one way, onto the face below. Seeds: every region
whose area is at least SEED_AREA_FRACTION of the largest region's (the main floor, or the
floors of separate rooms of similar size); reachability spreads from them over these links
(a few array rounds). Wall tops, a slab's top or a platform with no way up are not reached.

Frame and units: world space, metres; ``settings.up`` is up.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from ...controller.steps import too_high
from ..walkability import WALKABLE
from .common import (
    EMPTY_I,
    PROBE_LIFT,
    canonical_mesh,
    column_rays,
    column_reach,
    components,
    face_classes,
    raycast_chunks,
    settings_or_default,
    weld_vertices,
)

LEDGE_SAMPLES = (0.25, 0.5, 0.75)  # probe points along each boundary edge (fractions)
LEDGE_RUN_COS = math.cos(math.radians(10.0))  # edges of one run: directions within 10 deg
LEDGE_MAX_DROP = 100.0  # metres: default reach of the drop ray (inf beyond)
# Seed regions: area at least this fraction of the largest walkable region's (the main floor;
# separate rooms of similar size are floors too; a platform or a wall top is far smaller).
SEED_AREA_FRACTION = 0.75


class LedgeResult(NamedTuple):
    """One row per ledge run (connected, nearly collinear boundary edges over a drop).

    faces : (K,) int64 the walkable face at the run's deepest sample; drop : (K,) float64
        metres, the deepest drop along the run (inf: no floor within ``max_drop``);
    position : (K, 3) float64 that sample point on the edge; direction : (K, 3) unit
        horizontal, off the ledge there; start, end : (K, 3) the run's end points;
    length : (K,) metres along the run; edge_faces : (E,) int64 the faces of all the run's
        edges, and edge_run : (E,) int64 their row (to select every face of a run).
    """

    faces: np.ndarray
    drop: np.ndarray
    position: np.ndarray
    direction: np.ndarray
    start: np.ndarray
    end: np.ndarray
    length: np.ndarray
    edge_faces: np.ndarray
    edge_run: np.ndarray


def _empty():
    e3 = np.empty((0, 3))
    return LedgeResult(EMPTY_I, np.empty(0), e3, e3, e3, e3, np.empty(0), EMPTY_I, EMPTY_I)


def _boundary_edges(mesh, faces):
    """Boundary edges of the walkable faces: (v0, v1 (E,) welded vertex ids, owner (E,)
    face, opp (E,) original id of the owner's third corner, pos (W, 3) welded positions).

    An edge two faces share by vertex index is no boundary (welding only adds sharing), so
    positions are welded only for the edges left once by index."""
    tri = mesh.triangles[faces]
    r0 = tri.reshape(-1)
    r1 = np.roll(tri, -1, axis=1).reshape(-1)
    key = np.minimum(r0, r1) * mesh.vertices.shape[0] + np.maximum(r0, r1)
    order = np.argsort(key)
    ks = key[order]
    single = np.ones(ks.size, bool)
    dup = ks[1:] == ks[:-1]
    single[1:] &= ~dup
    single[:-1] &= ~dup
    ja, jb = order[:-1][dup] // 3, order[1:][dup] // 3  # faces sharing an edge by index
    cand = order[single]  # half-edges whose index pair no other face has
    opp = np.roll(tri, -2, axis=1).reshape(-1)[cand]
    used, inv = np.unique(np.concatenate([r0[cand], r1[cand]]), return_inverse=True)
    pos, wid = weld_vertices(mesh.vertices[used])
    wid = wid[inv.ravel()]
    e0, e1 = wid[:cand.size], wid[cand.size:]
    lo, hi = np.minimum(e0, e1), np.maximum(e0, e1)
    wkey = lo * (int(wid.max(initial=0)) + 1) + hi
    _, winv, cnt = np.unique(wkey, return_inverse=True, return_counts=True)
    winv = winv.ravel()
    keep = (cnt[winv] == 1) & (lo != hi)
    wo = np.argsort(winv, kind="stable")
    same = np.flatnonzero(winv[wo][1:] == winv[wo][:-1])
    ja = np.concatenate([ja, cand[wo[same]] // 3])
    jb = np.concatenate([jb, cand[wo[same + 1]] // 3])
    owner = faces[cand // 3][keep]
    return e0[keep], e1[keep], owner, opp[keep], pos, (ja, jb)


def _probe(mesh, s, p, out, max_drop):
    """Drop (S,) metres beyond sample points p (S, 3) on edges leaving along out (S, 3);
    nan where a character cannot walk off (inside a solid, or a wall beyond)."""
    u = s.up_vector
    n = p.shape[0]
    _c, _t, inside = column_rays(mesh, p - out * PROBE_LIFT, u,
                                 column_reach(mesh, p, u))
    lift = s.step_height + PROBE_LIFT
    beyond = [p + out * d + u * lift for d in (PROBE_LIFT, s.min_step_depth, s.radius)]
    t, tri = raycast_chunks(mesh, np.concatenate([p + u * lift] + beyond),
                          np.concatenate([out] + [np.tile(-u, (n, 1))] * 3),
                          np.concatenate([np.full(n, s.radius), np.full(3 * n, lift + max_drop)]))
    # the floor a character lands on is the highest of the three (a crack or a tread below
    # the edge catches it)
    drops = np.where(np.isfinite(t[n:]), t[n:] - lift, np.inf).reshape(3, n)
    free = ~(inside | np.isfinite(t[:n]))
    return np.where(free, drops.min(0), np.nan), drops, tri[n:].reshape(3, n), free


def _reachable(mesh, s, faces, joins, owner, drops, land, free):
    """(T,) bool: walkable faces in regions reachable from the seed regions (docstring)."""
    nf = faces.size
    reg = components(nf, joins[0], joins[1])
    local = np.full(mesh.n_triangles, -1, np.int64)
    local[faces] = np.arange(nf)
    ok = (land >= 0) & free[None, :]
    lreg = np.where(ok, local[np.maximum(land, 0)], -1)
    ok &= lreg >= 0
    src = np.broadcast_to(reg[local[owner]][None, :], lreg.shape)
    step = ok & ~too_high(np.abs(drops), s)
    a, b = src[step], reg[lreg[step]]
    reg = components(nf, np.concatenate([joins[0], a]), np.concatenate([joins[1], b]))
    fall = ok & too_high(drops, s) & (drops == drops.min(0)[None, :])
    fa, fb = reg[src[fall]], reg[reg[lreg[fall]]]
    v = mesh.vertices[mesh.triangles[faces]]
    area = 0.5 * np.linalg.norm(np.cross(v[:, 1] - v[:, 0], v[:, 2] - v[:, 0]), axis=1)
    tot = np.bincount(reg, area, minlength=nf)
    reach = tot >= SEED_AREA_FRACTION * tot.max()
    while True:  # falls: one way, a few rounds
        new = reach.copy()
        new[fb[reach[fa]]] = True
        if (new == reach).all():
            break
        reach = new
    out = np.zeros(mesh.n_triangles, bool)
    out[faces] = reach[reg]
    return out


def ledge_audit(mesh, settings=None, safe_drop=None, max_drop: float = LEDGE_MAX_DROP
                ) -> LedgeResult:
    """Ledge runs whose drop exceeds ``safe_drop`` metres (default ``step_height``). The
    rows do not depend on the order of the faces or vertices (``canonical_mesh``); ``faces``
    and ``edge_faces`` index ``mesh``'s triangles."""
    s = settings_or_default(settings)
    safe = s.step_height if safe_drop is None else float(safe_drop)
    canon = canonical_mesh(mesh)
    r = _ledges(canon.mesh, s, safe, max_drop)
    return LedgeResult(canon.face[r.faces], r.drop, r.position, r.direction, r.start, r.end,
                       r.length, canon.face[r.edge_faces], r.edge_run)


def _ledges(mesh, s, safe, max_drop) -> LedgeResult:
    """``ledge_audit`` on ``mesh`` as given (its face order breaks ties)."""
    u = s.up_vector
    faces = np.flatnonzero(face_classes(mesh, s) == WALKABLE)
    if not faces.size:
        return _empty()
    v0, v1, owner, opp, pos, joins = _boundary_edges(mesh, faces)
    p0, p1 = pos[v0], pos[v1]
    out = np.cross(p1 - p0, u)
    out -= np.outer(out @ u, u)
    ol = np.sqrt(np.einsum("ij,ij->i", out, out))
    ok = ol > 0.0  # vertical edges have no side to walk off
    out = out / np.where(ok, ol, 1.0)[:, None]
    out *= np.where(((0.5 * (p0 + p1) - mesh.vertices[opp]) * out).sum(1) < 0.0, -1.0,
                    1.0)[:, None]
    f = np.asarray(LEDGE_SAMPLES)
    sp = (p0[:, None] + f[None, :, None] * (p1 - p0)[:, None]).reshape(-1, 3)
    ns = f.size
    drop, drops, land, free = _probe(mesh, s, sp, np.repeat(out, ns, axis=0), max_drop)
    drop = drop.reshape(-1, ns)
    reach = _reachable(mesh, s, faces, joins,
                       np.repeat(owner, ns), drops, land, free)
    ledge = ok & reach[owner] & (np.nan_to_num(drop, nan=-np.inf) > safe).any(1)
    e = np.flatnonzero(ledge)
    if not e.size:
        return _empty()
    best = np.argmax(np.nan_to_num(drop[e], nan=-np.inf), axis=1)
    return _runs(v0[e], v1[e], p0[e], p1[e], out[e], owner[e], drop[e, best],
                 sp.reshape(-1, ns, 3)[e, best])


def _runs(v0, v1, p0, p1, out, owner, drop, at) -> LedgeResult:
    """Merge ledge edges (E,) into runs and build one row per run."""
    n = v0.size
    ends = np.concatenate([v0, v1])
    edge = np.concatenate([np.arange(n), np.arange(n)])
    order = np.argsort(ends, kind="stable")
    ends, edge = ends[order], edge[order]
    cnt = np.bincount(ends)
    pair = (ends[:-1] == ends[1:]) & (cnt[ends[:-1]] == 2)  # vertex shared by exactly two
    a, b = edge[:-1][pair], edge[1:][pair]
    d = p1 - p0
    d = d / np.sqrt(np.einsum("ij,ij->i", d, d))[:, None]
    join = (np.abs((d[a] * d[b]).sum(1)) >= LEDGE_RUN_COS) & ((out[a] * out[b]).sum(1) > 0.0)
    run = components(n, a[join], b[join])
    _, rid = np.unique(run, return_inverse=True)
    rid = rid.ravel()
    k = int(rid.max()) + 1
    order = np.lexsort((-drop, rid))
    head = order[np.r_[True, rid[order][1:] != rid[order][:-1]]]  # deepest edge per run
    ref = d[head][rid]  # each run's direction, from its deepest edge
    ref = ref * np.where((d * ref).sum(1) < 0.0, -1.0, 1.0)[:, None]
    s0, s1 = (p0 * ref).sum(1), (p1 * ref).sum(1)
    lo_s, hi_s = np.minimum(s0, s1), np.maximum(s0, s1)
    lo_p = np.where((s0 <= s1)[:, None], p0, p1)
    hi_p = np.where((s0 <= s1)[:, None], p1, p0)
    first = np.full(k, np.inf)
    last = np.full(k, -np.inf)
    np.minimum.at(first, rid, lo_s)
    np.maximum.at(last, rid, hi_s)
    is_first = lo_s == first[rid]
    is_last = hi_s == last[rid]
    start = np.zeros((k, 3))
    end = np.zeros((k, 3))
    start[rid[is_first]] = lo_p[is_first]
    end[rid[is_last]] = hi_p[is_last]
    length = np.bincount(rid, np.sqrt(((p1 - p0) ** 2).sum(1)), minlength=k)
    return LedgeResult(owner[head], drop[head], at[head], out[head], start, end, length,
                       owner, rid.astype(np.int64))
