"""Shared pieces of the level audits: constants, chunked batch queries, candidate foot points.

Frame and units: world space, metres; ``settings.up`` is up. Nothing here loops over faces
in Python: every function takes (K, ...) arrays and issues batched mesh queries in chunks of
``AUDIT_CHUNK`` rows (bounds temporary memory).
"""

from __future__ import annotations

import math
import weakref
from concurrent.futures import ThreadPoolExecutor
from typing import NamedTuple

import numpy as np

from ...constants import COPLANAR_COS, COPLANAR_DIST
from ...controller.settings import ControllerSettings
from ...mesh.triangle_mesh import TriangleMesh
from ..walkability import WALKABLE, classify_triangles

AUDIT_CHUNK = 16384  # capsules / rays per batched query (bounds temporary memory)
# From this many rows a batched query runs as two halves in two threads (``map_rows``):
# the stand test's 8 k raised rests and push-outs beside the arena's walls, its 4 k falls
# off the wall tops; below it a thread pool's start (about 1 ms) costs more than it saves.
THREAD_MIN_ROWS = 2048

# Candidate foot points per tested face: the centroid, the three vertices pulled towards the
# centroid by CANDIDATE_INSET (a point on the face, not on its edge, so a neighbour sharing
# the vertex cannot decide it) and the three edge midpoints pulled in likewise.
CANDIDATE_INSET = 0.1  # fraction of the way from a vertex / edge midpoint to the centroid
N_CANDIDATES = 7


# Lift of probe ray origins above the surface they start from, metres (as the controller's
# STEP_PROBE_OFFSET: 1 cm, above float noise on levels within 10 km, below any modelled step).
PROBE_LIFT = 0.01

EMPTY_I = np.empty(0, np.int64)


def settings_or_default(settings) -> ControllerSettings:
    """``settings`` or the default ControllerSettings."""
    return settings if settings is not None else ControllerSettings()


def walkable_faces(mesh, settings=None) -> np.ndarray:
    """(M,) int64 indices of the WALKABLE faces of ``mesh`` under ``settings`` (slope, up)."""
    s = settings_or_default(settings)
    return np.flatnonzero(face_classes(mesh, s) == WALKABLE)


_CLASSES: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # mesh -> {key: classes}


def face_classes(mesh, settings) -> np.ndarray:
    """(T,) int8 WALKABLE..CEILING of every triangle: ``classify_triangles`` with the
    settings' slope limit and up (one rule for the audits, the controller and the report).
    Kept with the mesh (weakly; a mesh is never changed in place) per slope limit and up,
    read-only: reachability asks three times (the window's estimate, the window, the map)."""
    key = (float(settings.max_slope_deg), tuple(float(x) for x in settings.up))
    try:
        kept = _CLASSES.setdefault(mesh, {})
    except TypeError:  # a mesh that takes no weak reference: computed each time
        kept = {}
    if key not in kept:
        classes = classify_triangles(mesh, settings.max_slope_deg, settings.up)
        classes.setflags(write=False)
        kept[key] = classes
    return kept[key]


def as_faces(mesh, faces, name="faces") -> np.ndarray:
    """``faces`` as a validated (K,) int64 array of triangle indices of ``mesh``."""
    f = np.asarray(faces)
    if f.ndim > 1 or (f.size and not np.issubdtype(f.dtype, np.integer)):
        raise ValueError(f"{name} must be a 1-D sequence of triangle indices")
    f = f.astype(np.int64).ravel()
    if f.size and (f.min() < 0 or f.max() >= mesh.n_triangles):
        raise ValueError(f"{name} must index triangles 0..{mesh.n_triangles - 1}")
    return f


def row_chunks(k: int) -> list:
    """(start, stop) row ranges of a K-row batched query: at most AUDIT_CHUNK rows each
    (bounds temporary memory); from THREAD_MIN_ROWS rows an even number of equal ranges, so
    that ``map_rows``'s two threads share them evenly."""
    parts = max(-(-k // AUDIT_CHUNK), 1)
    if k >= THREAD_MIN_ROWS:
        parts += parts % 2
    cuts = [k * i // parts for i in range(parts + 1)]
    return list(zip(cuts[:-1], cuts[1:]))


def map_rows(query, k: int) -> list:
    """``[query(start, stop) for each range of row_chunks(k)]``, in two threads when there
    are several ranges (a batched mesh query only reads the mesh, row by row, and numpy
    releases the GIL in its array work: the same answers, in order, on one core or two)."""
    chunks = row_chunks(k)
    if len(chunks) > 1:
        with ThreadPoolExecutor(max_workers=2, thread_name_prefix="cc-rows") as pool:
            return list(pool.map(lambda c: query(*c), chunks))
    return [query(*c) for c in chunks]


def raycast_chunks(mesh, origins, directions, max_distance):
    """First hits of K rays in chunks (``map_rows``): (time (K,) metres, inf = miss;
    triangle (K,) -1 = miss).

    max_distance : scalar or (K,) metres."""
    k = origins.shape[0]
    t = np.full(k, np.inf)
    tri = np.full(k, -1, np.int64)
    md = np.broadcast_to(np.asarray(max_distance, float), (k,))

    def chunk(i, j):
        r = mesh.raycast_many(origins[i:j], directions[i:j], md[i:j])
        t[i:j] = r.time
        tri[i:j] = r.triangle

    map_rows(chunk, k)
    return t, tri


def contacts_chunks(mesh, a, b, radius):
    """Penetrating (capsule, triangle) pairs of K capsules in chunks (``map_rows``): (query,
    triangle, depth, normal) flat arrays as ``capsule_contacts_many`` gives them (query
    indexes ``a``)."""
    qs, ts, ds, ns = [EMPTY_I], [EMPTY_I], [np.empty(0)], [np.empty((0, 3))]

    def chunk(i, j):
        cb = mesh.capsule_contacts_many(a[i:j], b[i:j], radius)
        return cb.query + i, cb.triangle, cb.depth, cb.normal

    for q, tri, depth, normal in map_rows(chunk, a.shape[0]):
        qs.append(q)
        ts.append(tri)
        ds.append(depth)
        ns.append(normal)
    return np.concatenate(qs), np.concatenate(ts), np.concatenate(ds), np.concatenate(ns)


def face_candidates(mesh, faces) -> np.ndarray:
    """(K, N_CANDIDATES, 3) foot points on each face: centroid, inset vertices, inset edge
    midpoints (all inside the closed face)."""
    v = mesh.vertices[mesh.triangles[faces]]  # (K, 3, 3)
    c = v.mean(axis=1, keepdims=True)
    mids = 0.5 * (v + np.roll(v, -1, axis=1))
    pts = np.concatenate([c, v, mids], axis=1)
    return c + (pts - c) * (1.0 - CANDIDATE_INSET)


# The foot ring (stand test, last resort): the capsule resting on a face's boundary with its
# axis beyond it, at these fractions of its radius (horizontally), beyond these points along
# each edge and beyond each vertex. A face is stood on when its foot overlaps the face: the
# axis less than ``radius`` from it (the controller stands on an edge while its axis is
# within radius of it). 0.95: just inside that range.
RING_DISTANCES = (0.5, 0.75, 0.95)
RING_ALONG = (0.15, 0.5, 0.85)


def foot_ring(mesh, faces, settings):
    """Lower-sphere centres (K, N, 3) of the capsule resting on the boundary of ``faces`` with
    its axis RING_DISTANCES * radius beyond RING_ALONG points of each edge and beyond each
    vertex, the sphere ``skin_width`` off the boundary point; and the axis foot points
    (K, N, 3) (the boundary point moved out, at its height)."""
    s = settings
    u = s.up_vector
    v = mesh.vertices[mesh.triangles[faces]]  # (K, 3, 3)
    w = np.roll(v, -1, axis=1)
    t = np.asarray(RING_ALONG)
    pts = v[:, :, None] + t[None, None, :, None] * (w - v)[:, :, None]  # (K, 3, A, 3)
    out = np.cross(w - v, u)
    out -= (out @ u)[..., None] * u
    ol = np.sqrt((out * out).sum(-1, keepdims=True))
    out = out / np.where(ol > 0.0, ol, 1.0)
    cen = v.mean(axis=1, keepdims=True)
    away = ((0.5 * (v + w) - cen) * out).sum(-1, keepdims=True)
    out = out * np.where(away < 0.0, -1.0, 1.0)
    corner = v - cen
    corner -= (corner @ u)[..., None] * u
    cl = np.sqrt((corner * corner).sum(-1, keepdims=True))
    corner = corner / np.where(cl > 0.0, cl, 1.0)
    k = faces.size
    base = np.concatenate([pts.reshape(k, -1, 3), v], axis=1)  # (K, 3A + 3, 3)
    dirs = np.concatenate([np.repeat(out, t.size, axis=1), corner], axis=1)
    feet, centres = [], []
    for f in RING_DISTANCES:
        d = f * s.radius
        lift = math.sqrt((s.radius + s.skin_width) ** 2 - d * d)
        foot = base + dirs * d
        feet.append(foot)
        centres.append(foot + u * lift)
    return np.concatenate(centres, axis=1), np.concatenate(feet, axis=1)


def up_normals(mesh, faces, u) -> np.ndarray:
    """(K, 3) unit face normals turned to the side of ``u`` (turned once per triangle when
    ``faces`` lists more rows than the mesh has triangles: the spans of a map)."""
    faces = np.asarray(faces)
    if faces.size > mesh.n_triangles:
        n = mesh.normals
        return (n * np.where(n @ u < 0.0, -1.0, 1.0)[:, None])[faces]
    n = mesh.normals[faces]
    return n * np.where(n @ u < 0.0, -1.0, 1.0)[:, None]


def column_rays(mesh, points, u, reach):
    """Rays straight up from ``points`` (K, 3) + PROBE_LIFT: (clearance (K,) metres from the
    point, inf = nothing within ``reach``; triangle (K,); inside (K,) bool).

    ``inside``: the first face met is seen from behind (its outward normal points up, along
    the ray): the point lies inside a closed solid (a floor face under a box standing on it,
    a tread buried in the next step's block). Such points are not places a character can
    be, so audits skip them. Relies on outward winding, as the controller's step probe does.
    """
    k = points.shape[0]
    t, tri = raycast_chunks(mesh, points + u * PROBE_LIFT, np.tile(u, (k, 1)), reach)
    face_up = np.where(tri >= 0, mesh.normals[np.maximum(tri, 0)] @ u, -1.0)
    inside = (tri >= 0) & (face_up > 0.0)
    return t + PROBE_LIFT, tri, inside


def column_reach(mesh, points, u) -> np.ndarray:
    """(K,) metres from each point up to just above the mesh's highest vertex (the ray length
    that always finds the top of a solid the point is inside)."""
    top = float((mesh.vertices @ u).max())
    return np.maximum(top - points @ u, 0.0) + 1.0


def horizontal_frame(u):
    """Two unit vectors (e1, e2) completing ``u`` to a right-handed orthonormal frame."""
    helper = np.array([1.0, 0.0, 0.0]) if abs(u[0]) < 0.9 else np.array([0.0, 1.0, 0.0])
    e1 = np.cross(u, helper)
    e1 /= math.sqrt(e1 @ e1)
    return e1, np.cross(u, e1)


def components(n: int, a, b) -> np.ndarray:
    """(n,) int64 connected-component label (the smallest member) of n nodes joined by the
    edges a[i]-b[i].

    Edges between consecutive nodes (i, i + 1) first join runs of nodes in one pass (a
    cumulative sum: grid cells stored row by row are mostly joined so); the other edges,
    between runs and without duplicates, go to min-label hooking plus pointer jumping
    (O(log n) rounds of array ops) over the runs."""
    a = np.asarray(a, np.int64)
    b = np.asarray(b, np.int64)
    lo, hi = np.minimum(a, b), np.maximum(a, b)
    chain = hi == lo + 1
    joined = np.zeros(n, bool)
    joined[lo[chain]] = True  # node lo runs on into lo + 1
    starts = np.r_[True, ~joined[:-1]] if n else np.zeros(0, bool)
    run = np.cumsum(starts) - 1
    first = np.flatnonzero(starts)  # each run's smallest node
    ra, rb = run[lo[~chain]], run[hi[~chain]]
    cross = ra != rb
    key = ra[cross] * first.size + rb[cross]
    # neighbouring edges mostly join the same two runs (grid rows): drop repeats in a row
    # before the sort (the arena's 1.7 M cross edges hold 4,700 distinct pairs)
    pairs = np.unique(key[np.r_[True, key[1:] != key[:-1]]] if key.size else key)
    label = _hook_touched(first.size, pairs // max(first.size, 1), pairs % max(first.size, 1))
    return first[label][run] if n else np.zeros(0, np.int64)


def _hook_touched(n: int, a, b) -> np.ndarray:
    """``_hook`` over only the nodes the edges a-b touch (the others keep their own label):
    the same labels, without passes over every node per round (the arena's island moves
    touch a few thousand of its 830 k runs)."""
    touched, inv = np.unique(np.concatenate([a, b]), return_inverse=True)
    if touched.size == n:
        return _hook(n, a, b)
    inv = inv.ravel()
    label = np.arange(n, dtype=np.int64)
    label[touched] = touched[_hook(touched.size, inv[:a.size], inv[a.size:])]
    return label


def _hook(n: int, a, b) -> np.ndarray:
    """(n,) int64 smallest-member labels of n nodes joined by edges a-b: min-label hooking
    plus pointer jumping."""
    label = np.arange(n, dtype=np.int64)
    while True:
        la, lb = label[a], label[b]
        lo, hi = np.minimum(la, lb), np.maximum(la, lb)
        if not (lo != hi).any():
            return label
        np.minimum.at(label, hi, lo)
        while True:  # pointer jumping: every node points at its root
            nxt = label[label]
            if (nxt == label).all():
                break
            label = nxt


def weld_vertices(vertices):
    """Merge vertices at exactly equal positions: (positions (W, 3), id (N,) int64 into them)."""
    order = np.lexsort(vertices.T[::-1])
    sv = vertices[order]
    new = np.r_[True, (sv[1:] != sv[:-1]).any(1)]
    ids = np.empty(vertices.shape[0], np.int64)
    ids[order] = np.cumsum(new) - 1
    return sv[new], ids


def weld_faces(mesh, faces):
    """Weld only the vertices ``faces`` (K,) use: (positions (W, 3), corner ids (K, 3) into
    them; corners at exactly equal positions share an id)."""
    used, inv = np.unique(mesh.triangles[faces], return_inverse=True)
    pos, ids = weld_vertices(mesh.vertices[used])
    return pos, ids[inv.ravel()].reshape(-1, 3)


# A fixed direction to key vertex positions by one float: equal positions give equal keys
# (a prefilter; welding decides exactly). Irrational-looking components so that different
# grid positions rarely collide.
POSITION_KEY = np.array([1.0, 0.7548776662466927, 0.5698402909980532])


def faces_touching(mesh, faces, few):
    """The ``faces`` (K,) sharing a vertex position with one of ``few`` (``few`` included
    when in ``faces``). Welds only the vertices of the faces whose key may match."""
    if not few.size:
        return faces[:0]
    key = mesh.vertices @ POSITION_KEY
    near = np.isin(key, key[mesh.triangles[few]].ravel())
    sub = faces[near[mesh.triangles[faces]].any(1)]
    both = np.concatenate([few, sub])
    _, wid = weld_faces(mesh, both)
    mark = np.zeros(int(wid.max()) + 1, bool)
    mark[wid[:few.size].ravel()] = True
    return sub[mark[wid[few.size:]].any(1)]


class CanonicalMesh(NamedTuple):
    """``mesh`` a TriangleMesh whose arrays depend only on the level's geometry (the set of
    its triangles as positions, each with its winding), never on the order a file lists
    faces or vertices in; ``face`` (M,) int64 the input's index of each of its triangles."""

    mesh: TriangleMesh
    face: np.ndarray


# canonical_mesh's answers, kept (weakly) with their mesh: the stair and ledge audits of a
# level share one (its BVH is built once, not once per audit)
_CANONICAL: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def canonical_mesh(mesh) -> CanonicalMesh:
    """``_canonical(mesh)``, built once per mesh and kept with it (weakly: gone with the
    mesh; a patched level is a new mesh object)."""
    got = _CANONICAL.get(mesh)
    if got is None:
        got = _CANONICAL[mesh] = _canonical(mesh)
    return got


def _canonical(mesh) -> CanonicalMesh:
    """``mesh`` in an order fixed by geometry (issue 27: a re-export with its faces reversed
    found other stair risers and ledge runs). Vertices at equal positions are one vertex,
    numbered in (x, y, z) order; each triangle starts at the least rotation of its corner
    numbers (winding kept); triangles are sorted by their corners. An audit run on it breaks
    every tie among faces (a ray's two equally near faces, coincident faces of stacked
    brushes, the first row of a group, a component's smallest member) by place, and so
    gives the same rows whatever order the input lists its faces and vertices in. Identical
    triangles (the same corners, the same winding) are interchangeable: which of their input
    indices names a row is all the order still decides."""
    pos, vid = weld_vertices(np.asarray(mesh.vertices, np.float64) + 0.0)  # -0.0 is 0.0
    tri = vid[np.asarray(mesh.triangles, np.int64)]
    best = tri
    for shift in (1, 2):
        turned = np.roll(tri, -shift, axis=1)
        best = np.where(_lex_less(turned, best)[:, None], turned, best)
    order = np.lexsort((best[:, 2], best[:, 1], best[:, 0]))
    return CanonicalMesh(TriangleMesh(pos, best[order]), order.astype(np.int64))


def _lex_less(a, b) -> np.ndarray:
    """(M,) bool: row a[i] comes before row b[i] lexicographically ((M, 3) int arrays)."""
    differ = a != b
    first = np.argmax(differ, axis=1)
    rows = np.arange(a.shape[0])
    return differ.any(1) & (a[rows, first] < b[rows, first])


def polygon_partners(mesh, faces):
    """Pairs (a, b) of ``faces`` sharing an edge (welded vertices) and lying in one plane:
    triangles of one polygon (a quad or n-gon split by the exporter), both directions."""
    if not faces.size:
        return faces[:0], faces[:0]
    _, wt = weld_faces(mesh, faces)
    e0 = wt.reshape(-1)
    e1 = np.roll(wt, -1, axis=1).reshape(-1)
    key = np.minimum(e0, e1) * (int(wt.max()) + 1) + np.maximum(e0, e1)
    owner = np.repeat(faces, 3)
    order = np.argsort(key, kind="stable")
    key, owner = key[order], owner[order]
    same = np.flatnonzero(key[1:] == key[:-1])
    a, b = owner[same], owner[same + 1]
    n = mesh.normals
    v = mesh.vertices[mesh.triangles[b]]
    dist = np.abs(((v - mesh.vertices[mesh.triangles[a, 0]][:, None]) * n[a][:, None]).sum(-1))
    flat = ((n[a] * n[b]).sum(1) >= COPLANAR_COS) & (dist.max(1) <= COPLANAR_DIST)
    a, b = a[flat], b[flat]
    return np.concatenate([a, b]), np.concatenate([b, a])


def min3(a, b, c):
    """Element-wise minimum of three arrays (faster than ``.min(axis=1)`` on (K, 3) rows)."""
    return np.minimum(np.minimum(a, b), c)


def max3(a, b, c):
    """Element-wise maximum of three arrays."""
    return np.maximum(np.maximum(a, b), c)
