"""Ground of N characters after a move: the downward probe's hit, snapped and classified.

A contact *supports* a character when it touches the lower cap (contact normal . up >
``SUPPORT_MIN_COS``); walkability is judged by the touched triangle's face normal, so
standing on a stair nosing is standing on the tread. When the probe touches an edge or a
steep face, every contact within the probe distance decides (``ground_from_contacts``):
the walkable support most directly below wins; several steep supports whose normals average
to a walkable one (a funnel) count as ground (Godot).

Frame and units: world space, metres; ``settings.up`` is up. ``queries`` is the
``CharacterController`` whose counted mesh queries these functions use.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ..constants import FACE_CONTACT_COS, SAME_FACE_MARGIN
from .planes import dot_rows, unit_rows
from .settings import IN_AIR, ON_GROUND, ON_STEEP_GROUND

_TRUE1 = np.ones(1, dtype=bool)


class Probe(NamedTuple):
    """The downward ground probe of N characters.

    time : (N,) metres from the capsule down to the first hit (inf: nothing within reach);
    normal : (N, 3) contact normal (obstacle -> capsule); triangle : (N,) int64, -1 for none;
    point : (N, 3) contact point on the mesh; valid : (N,) bool, the row was measured at the
    character's current position.
    """

    time: np.ndarray
    normal: np.ndarray
    triangle: np.ndarray
    point: np.ndarray
    valid: np.ndarray

    @classmethod
    def empty(cls, n: int) -> Probe:
        return cls(np.full(n, np.inf), np.zeros((n, 3)), np.full(n, -1, np.int64),
                   np.zeros((n, 3)), np.zeros(n, bool))

    def with_rows(self, rows, time, normal, triangle, point) -> Probe:
        """A copy with ``rows`` replaced by a measurement (marked valid)."""
        out = Probe(*(x.copy() for x in self))
        out.time[rows] = time
        out.normal[rows] = normal
        out.triangle[rows] = triangle
        out.point[rows] = point
        out.valid[rows] = True
        return out

    def with_sweep(self, rows, res, sl, length) -> Probe:
        """A copy with ``rows`` set from the sweep result rows ``sl`` of a probe of
        ``length`` metres (time becomes metres)."""
        return self.with_rows(rows, res.time[sl] * length, res.normal[sl], res.triangle[sl],
                              res.point[sl])


class Ground(NamedTuple):
    """Ground of N characters (what a move ends with and the next one starts from).

    state : (N,) int8 ground-state codes (settings.ON_GROUND, ON_STEEP_GROUND, IN_AIR);
    normal : (N, 3) face normal of the supporting triangle turned to the character, zeros in
    the air; triangle : (N,) int64, -1 in the air; gap : (N,) metres from the capsule to the
    floor, inf in the air; floor : (N,) height along up of the supporting contact point, nan
    in the air; point : (N, 3) the supporting contact point, nan rows in the air;
    interior : (N,) bool, supported by a face interior (``triangle`` is the floor plane).
    """

    state: np.ndarray
    normal: np.ndarray
    triangle: np.ndarray
    gap: np.ndarray
    floor: np.ndarray
    point: np.ndarray
    interior: np.ndarray

    @classmethod
    def unknown(cls, n: int) -> Ground:
        """N characters whose ground is not known yet (treated as in the air)."""
        return cls(np.full(n, IN_AIR, np.int8), np.zeros((n, 3)), np.full(n, -1, np.int64),
                   np.full(n, np.inf), np.full(n, np.nan), np.full((n, 3), np.nan),
                   np.zeros(n, bool))

    def rows(self, sel) -> Ground:
        """The ground of the characters ``sel`` (an index array or a slice)."""
        return Ground(*(x[sel] for x in self))

    def put(self, sel, other: Ground) -> None:
        """Write ``other`` into the rows ``sel`` (in place; for the walker's own arrays)."""
        for dst, src in zip(self, other):
            dst[sel] = src


class Classified(NamedTuple):
    """Result of ``classify_ground``: feet (N, 3) after snapping down to the floor; ground."""

    feet: np.ndarray
    ground: Ground


class ContactGround(NamedTuple):
    """Ground of K characters decided from all their contacts: state (K,) int8,
    normal (K, 3), triangle (K,), floor (K,) (nan where none)."""

    state: np.ndarray
    normal: np.ndarray
    triangle: np.ndarray
    floor: np.ndarray


def inside_triangles(mesh, points, tri) -> np.ndarray:
    """(K,) bool: points (K, 3) strictly inside triangles tri (K,) (projected onto the
    triangle's plane; barycentric coordinates > SAME_FACE_MARGIN)."""
    v = mesh.vertices[mesh.triangles[tri]]  # (K, 3, 3)
    a = v[:, 0]
    e = v[:, 1:] - a[:, None]  # (K, 2, 3): e0, e1
    g = np.einsum("kij,klj->kil", e, e)  # Gram matrix
    d00, d01, d11 = g[:, 0, 0], g[:, 0, 1], g[:, 1, 1]
    h = np.einsum("kij,kj->ki", e, points - a)
    d20, d21 = h[:, 0], h[:, 1]
    den = d00 * d11 - d01 * d01
    ok = den > 0.0
    den = np.where(ok, den, 1.0)
    bv = (d11 * d20 - d01 * d21) / den
    bw = (d00 * d21 - d01 * d20) / den
    m = SAME_FACE_MARGIN
    return ok & (bv > m) & (bw > m) & (bv + bw < 1.0 - m)


def classify_ground(queries, feet, probe: Probe, touched=None) -> Classified:
    """Classify each character's ground from its probe (already snapped to the floor by
    the controller's stick-to-floor phase), and from its contacts where the probe met an
    edge or a steep face. ``touched`` (N,) bool, or None: characters whose slide ended
    against an obstacle; those the probe finds no support for are decided from their
    contacts too (engine models: a capsule stopped against an edge at a shallow angle is
    within the contact gap of it, which a probe straight down does not reach)."""
    s = queries.settings
    u = s.up_vector
    hit = (probe.triangle >= 0) & np.isfinite(probe.time)
    up_c = probe.normal @ u
    near = hit & (probe.time <= s.ground_probe)
    gap = np.where(hit, probe.time, np.inf)
    supported = near & (up_c > s.support_min_cos)
    face = queries.mesh.normals[np.maximum(probe.triangle, 0)]
    fc = dot_rows(face, probe.normal)
    fo = face * np.where(fc < 0.0, -1.0, 1.0)[:, None]
    interior = np.abs(fc) >= FACE_CONTACT_COS
    easy = supported & interior & (fo @ u >= s.cos_max_slope)
    state = np.where(easy, ON_GROUND, IN_AIR).astype(np.int8)
    gnorm = np.where(easy[:, None], fo, 0.0)
    gtri = np.where(easy, probe.triangle, -1)
    floor = np.where(supported, probe.point @ u, np.nan)
    # edges, steep faces, and probes stopped by a non-supporting contact (e.g. the next
    # stair nosing at the cap's equator) are decided from every contact in probe range
    hard_m = (supported & ~easy) | (near & ~supported)
    if touched is not None:
        hard_m |= touched & ~supported
    hard = hard_m.nonzero()[0]
    if hard.size:
        cg = ground_from_contacts(queries, feet[hard])
        state[hard], gnorm[hard], gtri[hard], floor[hard] = cg
    air = state == IN_AIR
    gap[air] = np.inf
    floor[air] = np.nan
    point = np.where(air[:, None], np.nan, probe.point)
    return Classified(feet, Ground(state, gnorm, gtri, gap, floor, point, easy))


def _best_per_query(q, score):
    """(contact rows, their queries (0..n-1)): each query's best-scoring contact with a
    finite score (ties: the first contact, i.e. the deepest)."""
    order = np.lexsort((-score, q))
    qs = q[order]
    first = order[np.concatenate((_TRUE1, qs[1:] != qs[:-1]))]
    w = first[np.isfinite(score[first])]
    return w, q[w]


def ground_from_contacts(queries, feet) -> ContactGround:
    """Ground of K characters at ``feet`` (K, 3) from every contact of their capsule grown
    by the ground probe: the best walkable support, else a funnel of steep supports, else
    the best steep support, else in the air."""
    s = queries.settings
    u = s.up_vector
    k = feet.shape[0]
    state = np.full(k, IN_AIR, np.int8)
    gnorm = np.zeros((k, 3))
    gtri = np.full(k, -1, np.int64)
    floor = np.full(k, np.nan)
    cb = queries.contacts(feet, s.shape_radius + s.ground_probe)
    if not cb.query.size:
        return ContactGround(state, gnorm, gtri, floor)
    q = cb.query
    face = queries.mesh.normals[cb.triangle]
    fc = dot_rows(face, cb.normal)
    fo = face * np.where(fc < 0.0, -1.0, 1.0)[:, None]
    up_f = fo @ u
    up_c = cb.normal @ u
    sup = (up_c > s.support_min_cos) & (up_f > 0.0)
    walk = sup & (up_f >= s.cos_max_slope)
    # steep supports first (overwritten below by walkable ones and funnels); then the best
    # walkable support per character: the contact most directly below (highest contact
    # normal . up), then deepest (stable order)
    w = None
    for code, ok in ((ON_STEEP_GROUND, sup), (ON_GROUND, walk)):
        w, tgt = _best_per_query(q, np.where(ok, up_c, -np.inf))
        state[tgt] = code
        gnorm[tgt] = fo[w]
        gtri[tgt] = cb.triangle[w]
        floor[tgt] = cb.point[w] @ u
    # funnel: several steep supports whose normals average to a walkable one (Godot)
    only = np.ones(k, bool)  # characters without a walkable support
    only[q[w]] = False
    if only.any():
        m = only[q] & sup
        if m.any():
            acc = np.zeros((k, 3))
            np.add.at(acc, q[m], fo[m])
            cnt = np.bincount(q[m], minlength=k)
            avg, alen = unit_rows(acc)
            fun = (cnt >= 2) & (alen > 0.0) & (avg @ u >= s.cos_max_slope)
            state[fun] = ON_GROUND
            gnorm[fun] = avg[fun]
    if s.exact:
        _cradles(u, s.cos_max_slope, q, cb.normal, up_c, state, gnorm)
    return ContactGround(state, gnorm, gtri, floor)


def _cradles(u, cos_max, q, normal, up_c, state, gnorm):
    """Exact model: characters with no support that rest on several contacts below their
    bottom sphere's centre whose normals average to a walkable direction (a slot narrower
    than the capsule with its skin, its edges on both sides) stand on them (in place:
    ``state``, ``gnorm``). Without it a character that walked off a ledge into such a slot
    hangs in it, held by edges none of which supports it alone."""
    m = (state[q] == IN_AIR) & (up_c > 0.0)
    if not m.any():
        return
    k = state.shape[0]
    acc = np.zeros((k, 3))
    np.add.at(acc, q[m], normal[m])
    cnt = np.bincount(q[m], minlength=k)
    avg, alen = unit_rows(acc)
    held = (state == IN_AIR) & (cnt >= 2) & (alen > 0.0) & (avg @ u >= cos_max)
    state[held] = ON_GROUND
    gnorm[held] = avg[held]


def edge_plane_support(queries, feet0, feet1, start: Ground, end: Ground) -> Classified:
    """The ``"jolt"`` model's edge planes: characters that slid on steep ground and ended a
    move in the air stand on the edge of a walkable face whose contact plane the move reached.

    Jolt's CharacterVirtual gathers the contacts around the character before it moves and
    solves the move against their planes (each through its contact point, its normal from
    that point to the character); a contact whose plane the move reaches has collided, and
    a collided contact on a walkable face (its face normal, not the contact's) supports. A
    character sliding down a steep face past its lower edge, where a walkable face begins
    (a ledge, or a floor hidden under the slope), meets that face's edge plane within the
    frame and Jolt stands on the edge; a sweep against the edge itself slides past it along
    the steep face's plane and ends the frame clear of it, in the air (measured: the
    ``lips`` lanes of tools/bench_engines.py, docs/benchmarks.md "Lips").

    feet0, feet1 : (N, 3) feet before and after the move; start, end : the Ground the move
    started and ended on. Returns the feet (set back onto the plane where the move went past
    it) and the ground, changed only on those characters.
    """
    s = queries.settings
    rows = ((start.state == ON_STEEP_GROUND) & (end.state == IN_AIR)).nonzero()[0]
    if not rows.size:
        return Classified(feet1, end)
    u = s.up_vector
    d = feet1[rows] - feet0[rows]
    grown = s.shape_radius + float(np.sqrt(dot_rows(d, d)).max()) + s.ground_probe
    cb = queries.contacts(feet0[rows], grown)
    if not cb.query.size:
        return Classified(feet1, end)
    q = cb.query
    face = queries.mesh.normals[cb.triangle]
    fo = face * np.where(dot_rows(face, cb.normal) < 0.0, -1.0, 1.0)[:, None]
    reached = (grown - cb.depth - s.shape_radius) + dot_rows(cb.normal, d[q])
    ok = ((cb.normal @ u > s.support_min_cos) & (fo @ u >= s.cos_max_slope)
          & (reached <= s.contact_gap))
    w, k = _best_per_query(q, np.where(ok, cb.normal @ u, -np.inf))
    if not w.size:
        return Classified(feet1, end)
    r = rows[k]
    feet = feet1.copy()
    feet[r] += np.maximum(-reached[w], 0.0)[:, None] * cb.normal[w]
    g = Ground(*(x.copy() for x in end))
    g.state[r] = ON_GROUND
    g.normal[r] = fo[w]
    g.triangle[r] = cb.triangle[w]
    g.gap[r] = np.maximum(reached[w], 0.0)
    g.floor[r] = cb.point[w] @ u
    g.point[r] = cb.point[w]
    return Classified(feet, g)
