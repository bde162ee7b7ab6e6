"""Level audits built on the controller's pieces: each returns faces or positions with values.

Frame and units: world space, metres, degrees; ``settings.up`` is up. Every audit is a few
batched mesh queries (no Python loop over faces) and returns a NamedTuple whose arrays line up
row by row, so a Blender operator can select exactly the offending faces (3D-Print Toolbox
style) and a pipeline can print the values.

- ``stand_test``: can the actual capsule stand on each walkable face (at its centroid, resting
  on the face) without penetrating anything?
- ``stair_audit``: every riser (a wall face with walkable floor in front and behind) with its
  rise and the depth of the tread behind it, against ``step_height`` / ``min_step_depth``.
- ``headroom_audit``: clearance straight above each walkable face against ``height``.
- ``ledge_audit``: open edges of walkable faces with the drop beyond them, against a safe drop.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .constants import STEP_PROBE_OFFSET
from .controller import ControllerSettings
from .walkability import WALKABLE, WALL, classify_triangles

AUDIT_CHUNK = 16384  # capsules / rays per batched query (bounds temporary memory)


class StandResult(NamedTuple):
    """faces (K,) int64 walkable faces where the capsule cannot stand; depth (K,) metres of
    the deepest penetration; blocker (K,) int64 the triangle penetrated deepest; position
    (K, 3) the foot tested; tested (M,) int64 all walkable faces tested."""

    faces: np.ndarray
    depth: np.ndarray
    blocker: np.ndarray
    position: np.ndarray
    tested: np.ndarray


class StairResult(NamedTuple):
    """One row per riser triangle: riser (K,) int64; rise (K,) metres; tread_depth (K,) metres
    (inf when nothing rises behind within ``max_tread``); too_high (K,) bool (rise >
    step_height); too_shallow (K,) bool (tread_depth < min_step_depth); position (K, 3) the
    point on the riser's top edge measured."""

    riser: np.ndarray
    rise: np.ndarray
    tread_depth: np.ndarray
    too_high: np.ndarray
    too_shallow: np.ndarray
    position: np.ndarray


class HeadroomResult(NamedTuple):
    """faces (K,) int64 walkable faces with clearance < height; clearance (K,) metres;
    position (K, 3) face centroids; ceiling (K,) int64 the triangle above."""

    faces: np.ndarray
    clearance: np.ndarray
    position: np.ndarray
    ceiling: np.ndarray


class LedgeResult(NamedTuple):
    """faces (K,) int64 walkable faces with an open edge over a drop > safe_drop; drop (K,)
    metres (inf: nothing below within max_drop); position (K, 3) the edge midpoint;
    direction (K, 3) unit horizontal direction off the ledge."""

    faces: np.ndarray
    drop: np.ndarray
    position: np.ndarray
    direction: np.ndarray


def _settings(settings):
    return settings if settings is not None else ControllerSettings()


def _raycast(mesh, origins, dirs, max_distance):
    out_t, out_n, out_tri = [], [], []
    for i in range(0, len(origins), AUDIT_CHUNK):
        sl = slice(i, i + AUDIT_CHUNK)
        md = max_distance[sl] if np.ndim(max_distance) else max_distance
        r = mesh.raycast_many(origins[sl], dirs[sl], md)
        out_t.append(r.time)
        out_n.append(r.normal)
        out_tri.append(r.triangle)
    if not out_t:
        return np.empty(0), np.empty((0, 3)), np.empty(0, np.int64)
    return np.concatenate(out_t), np.concatenate(out_n), np.concatenate(out_tri)


def _centroids(mesh, faces):
    return mesh.vertices[mesh.triangles[faces]].mean(axis=1)


def walkable_faces(mesh, settings=None) -> np.ndarray:
    s = _settings(settings)
    cls = classify_triangles(mesh, s.max_slope_deg, s.up)
    return np.flatnonzero(cls == WALKABLE)


def stand_test(mesh, settings: ControllerSettings | None = None, faces=None) -> StandResult:
    """Place the character on each walkable face (or ``faces``) and test for penetration.

    The capsule rests on the face at its centroid: the lower cap touches the face plane there,
    lifted by ``skin_width`` along the face normal (the controller's resting gap). A face
    fails when any triangle penetrates that capsule.
    """
    s = _settings(settings)
    u = s.up_vector
    faces = walkable_faces(mesh, s) if faces is None else np.asarray(faces, np.int64).ravel()
    n = mesh.normals[faces]
    n = n * np.where(n @ u < 0.0, -1.0, 1.0)[:, None]
    foot = _centroids(mesh, faces) + n * (s.radius + s.skin_width) - u * s.radius
    a = foot + u * s.radius
    b = foot + u * (s.height - s.radius)
    bad_q, bad_d, bad_t = [], [], []
    for i in range(0, len(faces), AUDIT_CHUNK):
        cb = mesh.capsule_contacts_many(a[i:i + AUDIT_CHUNK], b[i:i + AUDIT_CHUNK], s.radius)
        if cb.query.size:
            first = np.r_[True, cb.query[1:] != cb.query[:-1]]  # deepest first per query
            bad_q.append(cb.query[first] + i)
            bad_d.append(cb.depth[first])
            bad_t.append(cb.triangle[first])
    if bad_q:
        q = np.concatenate(bad_q)
        return StandResult(faces[q], np.concatenate(bad_d), np.concatenate(bad_t), foot[q],
                           faces)
    e = np.empty(0, np.int64)
    return StandResult(e, np.empty(0), e.copy(), np.empty((0, 3)), faces)


def headroom_audit(mesh, settings: ControllerSettings | None = None) -> HeadroomResult:
    """Clearance straight up from each walkable face's centroid; rows where < height."""
    s = _settings(settings)
    u = s.up_vector
    faces = walkable_faces(mesh, s)
    c = _centroids(mesh, faces) + u * STEP_PROBE_OFFSET
    t, _n, tri = _raycast(mesh, c, np.tile(u, (len(faces), 1)), s.height)
    clearance = t + STEP_PROBE_OFFSET
    bad = np.isfinite(t) & (clearance < s.height)
    return HeadroomResult(faces[bad], clearance[bad], c[bad] - u * STEP_PROBE_OFFSET, tri[bad])


def stair_audit(mesh, settings: ControllerSettings | None = None,
                max_tread: float = 2.0) -> StairResult:
    """Every riser triangle with its rise and tread depth (one batched ray call).

    A riser is a WALL face (classify_triangles) with walkable floor in front of it (the side
    its horizontal normal faces, measured just off the face below its top) and walkable floor
    behind it at most ``height`` higher. rise = floor behind - floor in front; tread depth =
    horizontal distance from the riser to the next obstacle rising behind it (a horizontal
    ray just above the tread), up to ``max_tread`` (inf beyond).
    """
    s = _settings(settings)
    u = s.up_vector
    cls = classify_triangles(mesh, s.max_slope_deg, s.up)
    cand = np.flatnonzero(cls == WALL)
    empty = StairResult(np.empty(0, np.int64), np.empty(0), np.empty(0),
                        np.empty(0, bool), np.empty(0, bool), np.empty((0, 3)))
    if not cand.size:
        return empty
    n = mesh.normals[cand]
    nh = n - np.outer(n @ u, u)
    nl = np.sqrt((nh * nh).sum(1))
    keep = nl > 0.0
    cand, nh = cand[keep], nh[keep] / nl[keep, None]
    v = mesh.vertices[mesh.triangles[cand]]
    h = v @ u  # (K, 3) heights
    top = h.max(1)
    centre = v.mean(1)
    centre_h = centre - np.outer(centre @ u, u)
    d = STEP_PROBE_OFFSET
    k = cand.size
    front = centre_h + nh * d + np.outer(top, u)
    behind = centre_h - nh * d + np.outer(top + s.height, u)
    down = np.tile(-u, (k, 1))
    t, nrm, tri = _raycast(mesh, np.concatenate([front, behind]), np.concatenate([down, down]),
                           np.concatenate([np.full(k, s.height + top.ptp() + 10.0),
                                           np.full(k, 2.0 * s.height)]))
    walk = (nrm @ u) >= s.cos_max_slope
    f_ok = np.isfinite(t[:k]) & walk[:k]
    b_ok = np.isfinite(t[k:]) & walk[k:]
    floor_front = top - t[:k]
    floor_behind = top + s.height - t[k:]
    rise = floor_behind - floor_front
    riser = f_ok & b_ok & (rise > STEP_PROBE_OFFSET) & (rise < s.height)
    idx = np.flatnonzero(riser)
    if not idx.size:
        return empty
    # tread depth: horizontal ray over the tread, away from the riser
    o = centre_h[idx] - nh[idx] * d + np.outer(floor_behind[idx] + STEP_PROBE_OFFSET, u)
    tt, _nn, _tr = _raycast(mesh, o, -nh[idx], max_tread)
    depth = np.where(np.isfinite(tt), tt + d, np.inf)
    pos = centre_h[idx] + np.outer(floor_behind[idx], u)
    return StairResult(cand[idx], rise[idx], depth, rise[idx] > s.step_height,
                       depth < s.min_step_depth, pos)


def ledge_audit(mesh, settings: ControllerSettings | None = None, safe_drop=None,
                max_drop: float = 100.0) -> LedgeResult:
    """Open edges of walkable faces over a drop higher than ``safe_drop`` (default
    ``step_height``), metres.

    For each edge of a walkable face that no other walkable face shares, a point ``radius``
    beyond the edge midpoint (horizontally, away from the face) is probed: a horizontal ray
    from the edge to that point must be free (otherwise a wall or a rising step is there), and
    a downward ray from it measures the drop to the next surface (inf when there is none within
    ``max_drop``).
    """
    s = _settings(settings)
    u = s.up_vector
    safe = s.step_height if safe_drop is None else float(safe_drop)
    faces = walkable_faces(mesh, s)
    empty = LedgeResult(np.empty(0, np.int64), np.empty(0), np.empty((0, 3)), np.empty((0, 3)))
    if not faces.size:
        return empty
    tri = mesh.triangles[faces]
    e = np.stack([tri[:, [0, 1]], tri[:, [1, 2]], tri[:, [2, 0]]], axis=1).reshape(-1, 2)
    owner = np.repeat(faces, 3)
    opp = np.stack([tri[:, 2], tri[:, 0], tri[:, 1]], axis=1).reshape(-1)
    key = np.sort(e, axis=1)
    _, inv, cnt = np.unique(key, axis=0, return_inverse=True, return_counts=True)
    open_edge = cnt[inv.ravel()] == 1
    e, owner, opp = e[open_edge], owner[open_edge], opp[open_edge]
    if not e.size:
        return empty
    V = mesh.vertices
    p0, p1, pc = V[e[:, 0]], V[e[:, 1]], V[opp]
    mid = 0.5 * (p0 + p1)
    edge = p1 - p0
    out = np.cross(edge, u)
    out = out - np.outer(out @ u, u)
    ol = np.sqrt((out * out).sum(1))
    ok = ol > 0.0
    out = out / np.where(ok, ol, 1.0)[:, None]
    out *= np.where(((mid - pc) * out).sum(1) < 0.0, -1.0, 1.0)[:, None]
    m = mid.shape[0]
    start = mid + u * STEP_PROBE_OFFSET
    beyond = start + out * s.radius
    t, nrm, _tri = _raycast(mesh, np.concatenate([start, beyond]),
                            np.concatenate([out, np.tile(-u, (m, 1))]),
                            np.concatenate([np.full(m, s.radius), np.full(m, max_drop)]))
    free = ~np.isfinite(t[:m])
    drop = np.where(np.isfinite(t[m:]), t[m:] - STEP_PROBE_OFFSET, np.inf)
    bad = ok & free & (drop > safe)
    return LedgeResult(owner[bad], drop[bad], mid[bad], out[bad])
