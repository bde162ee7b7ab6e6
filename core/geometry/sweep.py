"""Swept capsule against triangle: exact time of first contact, no tunnelling at any speed.

Definition (docs/decisions.md, Sweeps): the capsule (segment ``p``-``q``, radius ``r``) moves by
``t * displacement`` for ``t`` in [0, 1]; the triangle is fixed.

    time = inf { t in [0, 1] : dist(segment + t * displacement, triangle) < r }

Touching (distance exactly ``r``), grazing (the distance reaches ``r`` but never goes below) and
sliding tangentially while touching are not hits. A capsule that starts penetrating hits at
``time = 0`` with the discrete contact's normal and point (core.contact's sign conventions). At
a hit with ``time > 0`` the distance is ``r > 0``, so the normal is the unit vector from the
contact point on the triangle to the closest point of the capsule's segment, and ``point`` is
that contact point on the triangle.

Method: closed form, no sampling in time (seed article 003's decomposition, generalised).
With ``S`` the segment and ``T`` the triangle, ``dist(S + t v, T) = dist(t v, T - S)``: the
moving capsule is a point on the ray ``t v`` and the obstacle is the Minkowski difference
``K = T - S`` rounded by ``r``. ``K`` is covered by 20 pieces whose rounded versions are convex,
and the first entry into the rounded ``K`` is the earliest entry into any rounded piece (the
rounded pieces are open sets, so an infimum over their union is the minimum of the infima):

* 2 triangles ``T - p``, ``T - q``: an end point against the triangle's face, planes offset by
  ``+-r`` (linear in ``t``), valid when the projection lies in the closed triangle;
* 3 parallelograms ``edge - S``: the segment's interior against an edge line, line-line
  distance ``(P + t v - A) . m / |m| = +-r`` with ``m = d x e`` (linear in ``t``), valid when
  both closest-point parameters lie in [0, 1];
* 6 cylinders ``edge - p``, ``edge - q``: an end point against an edge (quadratic);
* 3 cylinders ``vertex - S``: the segment's interior against a vertex (quadratic);
* 6 spheres ``vertex - p``, ``vertex - q``: an end point against a vertex (quadratic).

Faces only test their flat part and cylinders their lateral part: every boundary of a piece
is itself one of the pieces. When the segment is parallel to an edge or the triangle has zero
area, the degenerate pieces are skipped and the remaining ones still cover ``K``: a degenerate
capsule (``p == q``) is a sphere, a zero-area triangle is the segment or point it collapses to.

Numerics: everything is computed relative to a local origin (the triangle's first vertex), so
a scene 10 km from the world origin keeps its precision. Quadratic first roots use the
cancellation-free form ``t = C / (-B + sqrt(B*B - A*C))`` (citardauq; only approaching
motions with ``B < 0`` can enter) and the discriminant is computed as
``A (r^2 - |w - (B/A) v|^2)`` from the closest-approach vector, which stays accurate near
tangency where ``B*B - A*C`` cancels. Near-tangent entries shallower
than ``SWEEP_GRAZE_REL * r`` are grazing (see core/constants.py).

Performance: the kernel works on per-triangle records (``records.triangle_record``, 31
floats relative to vertex a; ``TriangleMesh`` stores them as ``_krec`` and passes gathered rows
through ``sweep_records``) with component-major (3, K, n) stacks: the 9 cylinders, the 6 spheres
and the 5 planar pieces are each one stacked evaluation, so a call costs a fixed few dozen
numpy operations whatever the number of pairs (no Python loop over pairs; batches above
``_CHUNK`` pairs run in cache-sized chunks). ``sweep_capsule_triangle_many`` builds the records
of its triangles and runs the same kernel. The discrete contact (core.contact) is only
evaluated for the pairs that start penetrating, from the same records.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ..constants import DEGENERATE_REL2, SWEEP_GRAZE_REL, SWEEP_THIN_REL2
from .contact import capsule_triangle_records
from .records import REC_A, REC_E, REC_EE, REC_G, REC_NN, triangle_record
from .shapes import Capsule, Hit
from .validate import as_point

__all__ = ["sweep_capsule_triangle", "sweep_capsule_triangle_many", "sweep_records"]

# ---------------------------------------------------------------------------------------------
# Piece tables. 20 pieces in a fixed order (k = row of the (20, n) times array); ties go to
# the lowest k.
#   0..5   end point i = k // 3 against edge j = k % 3 (cylinder around edge j)
#   6..8   segment interior against vertex j = k - 6 (cylinder around the segment)
#   9..14  end point i = (k - 9) // 3 against vertex j (sphere)
#   15..16 end point i = k - 15 against the triangle's face
#   17..19 segment interior against edge j = k - 17 (parallelogram)
# Arrays are component-major (3, K, n) stacks (core.closest convention). Per pair, rel
# (3, 6, n) holds X_i - V_j at 3 i + j (X_0 = P, X_1 = Q, V_j the vertices, all relative to
# vertex a). The cylinders' unit axes come from ax4 (3, 4, n) = [E_0, E_1, E_2, -d] / length
# (E_j = V_{j+1} - V_j, d = Q - P); the planes' unit normals are [n, n, m_0, m_1, m_2] / length
# with n the record's winding normal and m_j = d x E_j.
# ---------------------------------------------------------------------------------------------
_N_QUAD = 15
_N_CYL = 9
_CYL_W = np.array([0, 1, 2, 3, 4, 5, 0, 1, 2])  # rows of rel
_CYL_AXIS = np.array([0, 1, 2, 0, 1, 2, 3, 3, 3])  # rows of ax4
_PLANE_W = np.array([0, 3, 0, 1, 2])  # rows of rel: P - V_0, Q - V_0, P - V_j
_TWICE = np.array([0, 1, 2, 0, 1, 2])
_CYCLIC = np.array([1, 2, 0, 1])  # u[_CYCLIC][:3] = (u1, u2, u0), [1:] = (u2, u0, u1)
_END_I = np.array([0, 0, 0, 1, 1, 1, 0, 0, 0, 0, 0, 0, 1, 1, 1, 0, 1, 0, 0, 0])
_VERT_J = np.array([0, 1, 2, 0, 1, 2, 0, 1, 2, 0, 1, 2, 0, 1, 2, 0, 0, 0, 1, 2])
# features whose segment side is an end point (on_triangle = end point - relative vector)
_AT_END = np.array([True] * 6 + [False] * 3 + [True] * 6 + [True] * 2 + [False] * 3)
# validity constraints of the planar pieces, lin(t) = lin0 + t * lin_v >= 0, 4 per piece.
# gv (3, 9, n) = [M_j (record's inward edge normals), (m_j x E_j) / |m_j|^2, (m_j x d) / |m_j|^2];
# vals (18, n) = [M_j . (P - V_j) (3), M_j . (Q - V_j) (3), beta_j (3), alpha_j (3),
# 1 - beta_j (3), 1 - alpha_j (3)] (beta_j, alpha_j: closest-point parameters of the lines
# P' + beta d and V_j + alpha E_j, Ericson RTCD 5.1.8); a face repeats one of its constraints.
_G_W = np.array([0, 1, 2, 0, 1, 2, 3, 4, 5, 6, 7, 8])  # rows of gv
_G_REL = np.array([0, 1, 2, 3, 4, 5, 0, 1, 2, 0, 1, 2])  # rows of rel
_LIN = np.array([[0, 1, 2, 0], [3, 4, 5, 3], [6, 12, 9, 15], [7, 13, 10, 16], [8, 14, 11, 17]])
# rates of the 18 values as rows of rates9 = v . gv (9, n), with signs
_RATE_ROW = np.array([0, 1, 2, 0, 1, 2, 3, 4, 5, 6, 7, 8, 3, 4, 5, 6, 7, 8])
_RATE_SIGN = np.array([1.0] * 12 + [-1.0] * 6)
_LIN_ROW = _RATE_ROW[_LIN]
_LIN_SIGN = _RATE_SIGN[_LIN][..., None]
_CHUNK = 4096  # pairs per kernel pass: temporaries stay cache-sized (<= 0.5 MB each)
_CONTIGUOUS_MIN = 64  # gathered records are made contiguous from this many pairs on


def _dot(u: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Dot product over the leading (component) axis of (3, ...) stacks.

    Summed left to right, so a pair's value does not depend on the batch it is in (einsum's
    reduction order can change with the operands' shapes and strides).
    """
    s = u[0] * w[0]
    s += u[1] * w[1]
    s += u[2] * w[2]
    return s


def _xprod(u, w):
    """Cross product over the leading (component) axis of (3, ...) stacks."""
    ue = u.take(_CYCLIC, 0)
    we = w.take(_CYCLIC, 0)
    return ue[:3] * we[1:] - ue[1:] * we[:3]


class _PairGeometry(NamedTuple):
    """Per-pair geometry of one kernel chunk, local origin at vertex a (phase 1)."""

    n: int  # pairs
    r: np.ndarray | float  # (n,) or scalar radius
    r2: np.ndarray | float  # r * r
    graze: np.ndarray | float  # SWEEP_GRAZE_REL * r
    v: np.ndarray  # (3, n) or (3, 1) displacement
    E: np.ndarray  # (3, 3, n) edge vectors
    G: np.ndarray  # (3, 4, n) normal and inward edge normals (record rows)
    nn: np.ndarray  # (n,) |normal|^2
    Y: np.ndarray  # (3, 2, n) the ends X_0 = P, X_1 = Q
    verts: np.ndarray  # (3, 3, n) V_0 = 0, V_1 = B, V_2 = C
    rel: np.ndarray  # (3, 6, n) X_i - V_j at 3 i + j
    d: np.ndarray  # (3, n) segment direction Q - P
    m: np.ndarray  # (3, 3, n) m_j = d x E_j
    mm: np.ndarray  # (3, n) |m_j|^2
    okn: np.ndarray  # (n,) bool: the face is wide enough to test (SWEEP_THIN_REL2)
    okm: np.ndarray  # (3, n) bool: the parallelograms likewise
    axis: np.ndarray  # (3, 9, n) unit cylinder axes
    cyl_len: np.ndarray  # (9, n) cylinder lengths


def _pair_geometry(p, q, r, v, T) -> _PairGeometry:
    """Ends, vertices and directions of each pair relative to vertex a; the unit cylinder
    axes [E_j, -d] and which planar pieces are wide enough to test (a face or parallelogram
    thinner than the thin tolerance is skipped: its edges' cylinders cover it)."""
    n = T.shape[1]
    A = T[REC_A]
    E = T[REC_E].reshape(3, 3, n)
    ee = T[REC_EE]
    nn = T[REC_NN]
    Y = np.empty((3, 2, n))  # X_0 = P, X_1 = Q
    np.subtract(p, A, out=Y[:, 0])
    np.subtract(q, A, out=Y[:, 1])
    verts = np.zeros((3, 3, n))  # V_0 = 0, V_1 = B, V_2 = C
    verts[:, 1] = E[:, 0]
    np.negative(E[:, 2], out=verts[:, 2])
    rel = (Y[:, :, None] - verts[:, None]).reshape(3, 6, n)  # X_i - V_j
    ed = np.empty((3, 4, n))  # [E_0, E_1, E_2, d]
    ed[:, 0:3] = E
    np.subtract(Y[:, 1], Y[:, 0], out=ed[:, 3])
    d = ed[:, 3]
    m = _xprod(d[:, None], E)  # m_j = d x E_j
    len4 = np.empty((4, n))  # |E_j|^2, |d|^2
    len4[0:3] = ee
    len4[3] = _dot(d, d)
    dd = len4[3]
    mm = _dot(m, m)
    eemax = ee.max(0)
    scale2 = np.maximum(_dot(rel, rel).max(0), eemax)
    tiny2 = DEGENERATE_REL2 * scale2  # squared length under which a direction is degenerate
    r2 = r * r
    thin = SWEEP_THIN_REL2 * r2
    tt2 = tiny2 * scale2
    ok4 = len4 > tiny2
    okn = nn > np.maximum(tt2, thin * eemax)
    okm = mm > np.maximum(tt2, thin * np.maximum(dd, ee))
    length4 = np.sqrt(len4)
    inv4 = np.where(ok4, 1.0 / length4, 0.0)
    inv4[3] = -inv4[3]  # the segment-interior cylinders use the axis -d
    ax4 = ed * inv4
    axis = ax4.take(_CYL_AXIS, 1)  # (3, 9, n)
    cyl_len = np.where(ok4, length4, 0.0).take(_CYL_AXIS, 0)
    return _PairGeometry(n, r, r2, SWEEP_GRAZE_REL * r, v, E, T[REC_G].reshape(3, 4, n), nn,
                         Y, verts, rel, d, m, mm, okn, okm, axis, cyl_len)


class _QuadraticEntries(NamedTuple):
    """Phase 2: entry times into the 15 quadratic pieces (9 cylinders then 6 spheres)."""

    t: np.ndarray  # (15, n) entry time where ok
    ok: np.ndarray  # (15, n) bool
    w: np.ndarray  # (3, 15, n) in-plane relative vector at t = 0
    vp: np.ndarray  # (3, 15, n) its rate
    dist2_0: np.ndarray  # (n,) least squared distance of these pieces at t = 0


def _quadratic_entries(g: _PairGeometry) -> _QuadraticEntries:
    """In-plane (perpendicular to the axis) motion w + t vp of the relative vector: entry when
    |w + t vp|^2 = r^2, i.e. A t^2 + 2 B t + C = 0 with A = |vp|^2, B = w.vp, C = |w|^2 - r^2."""
    n, r2, graze, axis = g.n, g.r2, g.graze, g.axis
    vq = g.v[:, None]
    w_c = g.rel.take(_CYL_W, 1)
    w_ax = _dot(w_c, axis)
    v_ax = _dot(vq, axis)
    w = np.empty((3, _N_QUAD, n))
    vp = np.empty((3, _N_QUAD, n))
    np.subtract(w_c, w_ax * axis, out=w[:, :_N_CYL])
    w[:, _N_CYL:] = g.rel
    np.subtract(vq, v_ax * axis, out=vp[:, :_N_CYL])
    vp[:, _N_CYL:] = vq
    qa = _dot(vp, vp)
    qb = _dot(w, vp)
    w2 = _dot(w, w)
    ok = (qb < 0.0) & (qa > graze * graze)  # approaching, and not parallel
    # B^2 - A C = A (r^2 - |closest approach|^2): the closest approach w - (B / A) vp is
    # computed as a vector, which is accurate near tangency (unlike B^2 - A C)
    safe_qa: np.ndarray = np.where(ok, qa, 1.0)
    approach = w - (qb / safe_qa) * vp
    h = r2 - _dot(approach, approach)
    ok &= h > SWEEP_GRAZE_REL * r2  # shallower than the graze tolerance: a graze
    # citardauq first root C / (-B + sqrt(B^2 - AC)): no cancellation since B < 0
    denom: np.ndarray = np.where(ok, np.sqrt(qa * np.maximum(h, 0.0)) - qb, 1.0)
    t_quad = np.maximum(w2 - r2, 0.0) / denom
    along = w_ax + t_quad[:_N_CYL] * v_ax  # axial coordinate at the entry
    ok[:_N_CYL] &= (along >= 0.0) & (along <= g.cyl_len)
    ok &= t_quad < 1.0
    # squared distance of each piece at t = 0 (clamped axial coordinate)
    outside = w_ax - np.minimum(np.maximum(w_ax, 0.0), g.cyl_len)
    dist2_0 = np.minimum(w2[_N_CYL:].min(0), (w2[:_N_CYL] + outside * outside).min(0))
    return _QuadraticEntries(t_quad, ok, w, vp, dist2_0)


class _PlanarEntries(NamedTuple):
    """Phase 3: entry times into the 5 planar pieces (2 faces, 3 parallelograms)."""

    t: np.ndarray  # (5, n) entry time where ok
    ok: np.ndarray  # (5, n) bool
    plane_n: np.ndarray  # (3, 5, n) unit normals (0 where skipped)
    s0: np.ndarray  # (5, n) signed offsets at t = 0
    sv: np.ndarray  # (5, n) their rates
    vals: np.ndarray  # (18, n) validity values at t = 0 (see the piece tables)
    rates9: np.ndarray  # (9, n) rates of the validity values
    dist2_0: np.ndarray  # (n,) least squared distance of these pieces at t = 0


def _planar_entries(g: _PairGeometry) -> _PlanarEntries:
    """Offsets of the faces (+-r along n) and parallelograms (+-r along m_j), linear in t,
    valid while the constraints lin0 + t lin_v >= 0 hold (the piece tables)."""
    n, r, graze, m, okm = g.n, g.r, g.graze, g.m, g.okm
    mm = g.mm
    vq = g.v[:, None]
    plane_n = np.empty((3, 5, n))
    np.multiply(g.G[:, 0], np.where(g.okn, 1.0 / np.sqrt(g.nn), 0.0), out=plane_n[:, 0])
    plane_n[:, 1] = plane_n[:, 0]
    np.multiply(m, np.where(okm, 1.0 / np.sqrt(mm), 0.0), out=plane_n[:, 2:])
    plane_ok = np.empty((5, n), dtype=bool)
    plane_ok[0] = g.okn
    plane_ok[1] = g.okn
    plane_ok[2:] = okm
    s0 = _dot(g.rel.take(_PLANE_W, 1), plane_n)  # signed offset at t = 0
    sv = _dot(vq, plane_n)  # rate of change
    gv = np.empty((3, 9, n))
    gv[:, 0:3] = g.G[:, 1:]
    right = np.empty((3, 6, n))  # [E_j, d]
    right[:, 0:3] = g.E
    right[:, 3:6] = g.d[:, None]
    np.multiply(
        _xprod(m.take(_TWICE, 1), right).reshape(3, 2, 3, n),
        np.where(okm, 1.0 / mm, 0.0),
        out=gv[:, 3:9].reshape(3, 2, 3, n),
    )
    vals = np.empty((18, n))
    vals[0:12] = _dot(gv.take(_G_W, 1), g.rel.take(_G_REL, 1))
    np.subtract(1.0, vals[6:12], out=vals[12:18])
    rates9 = _dot(vq, gv)
    lin0 = vals.take(_LIN, 0)  # (5, 4, n)
    lin_v = np.take(rates9, _LIN_ROW, 0) * _LIN_SIGN
    abs_s0 = np.abs(s0)
    speed_in = np.where(s0 >= 0.0, -sv, sv)  # speed towards the plane
    ok_p = plane_ok & (abs_s0 >= r * (1.0 - SWEEP_GRAZE_REL)) & (speed_in > graze)
    t_plane = np.maximum(abs_s0 - r, 0.0) / np.where(ok_p, speed_in, 1.0)
    ok_p &= (t_plane < 1.0) & ((lin0 + t_plane[:, None] * lin_v) >= 0.0).all(1)
    inside0 = plane_ok & (lin0 >= 0.0).all(1)
    dist2_0 = np.where(inside0, s0 * s0, np.inf).min(0)
    return _PlanarEntries(t_plane, ok_p, plane_n, s0, sv, vals, rates9, dist2_0)


def _starts_penetrating(g: _PairGeometry, planes: _PlanarEntries, dist2_0):
    """(n,) bool: the capsule penetrates at t = 0 (closer than r (1 - SWEEP_GRAZE_REL), or its
    segment crosses the triangle's interior: distance 0, from the raw winding-normal offsets).
    Only faces wider than the thin tolerance (okn) are crossed: a segment crossing a thinner
    face passes within its width (<= 3.2e-6 r) of an edge, so dist2_0 already says it
    penetrates, and the edge half-plane tests of a thin face are too coarse to trust near its
    corners (they stretch the face along its line by ~eps * scale / width; test_slivers)."""
    vals = planes.vals
    h01 = _dot(g.Y, g.G[:, 0][:, None])
    h0 = h01[0]
    h1 = h01[1]
    crossing = g.okn & (((h0 > 0.0) & (h1 < 0.0)) | ((h0 < 0.0) & (h1 > 0.0)))
    if crossing.any():
        lam = h0 / np.where(crossing, h0 - h1, 1.0)  # crossing point P + lam d
        # M_j . (P + lam d - V_j) = vals_j + lam (vals_{3+j} - vals_j) >= 0 for j = 0..2
        inside = vals[0:3] + lam * (vals[3:6] - vals[0:3])
        crossing &= (inside >= 0.0).all(0)
    return (dist2_0 < g.r2 * (1.0 - SWEEP_GRAZE_REL) ** 2) | crossing


def _entry_contact(g: _PairGeometry, quad, planes, k, t_hit, A):
    """Normal (3, n) and point (3, n) of the first piece k (n,) at its entry time t_hit
    (zeros where nothing is entered)."""
    n = g.n
    rows = np.arange(n)
    found = t_hit < np.inf
    if not found.any():
        return np.zeros((3, n)), np.zeros((3, n))
    tt = np.where(found, t_hit, 0.0)
    is_quad = k < _N_QUAD
    flat_q = np.where(is_quad, k, 0) * n + rows  # flat (piece, pair) indices
    flat_p = np.where(is_quad, 0, k - _N_QUAD) * n + rows
    rel_quad = quad.w.reshape(3, -1).take(flat_q, 1)  # at entry the axial part is in range
    rel_quad += tt * quad.vp.reshape(3, -1).take(flat_q, 1)
    rel_plane = planes.plane_n.reshape(3, -1).take(flat_p, 1)
    rel_plane *= planes.s0.take(flat_p) + tt * planes.sv.take(flat_p)
    rel_c = np.where(is_quad, rel_quad, rel_plane)  # on_segment - on_triangle, |rel| = r
    flat_j = _VERT_J.take(k) * n + rows
    is_pg = k >= _N_QUAD + 2
    # alpha_j = vals[9 + j] + t rates9[6 + j] on the parallelograms
    flat_a = (np.where(is_pg, k - (_N_QUAD + 2), 0) + 9) * n + rows
    alpha = planes.vals.take(flat_a) + tt * planes.rates9.take(flat_a - 3 * n)
    alpha = np.where(is_pg, np.minimum(np.maximum(alpha, 0.0), 1.0), 0.0)
    on_tri = np.where(
        _AT_END.take(k),
        g.Y.reshape(3, -1).take(_END_I.take(k) * n + rows, 1) + tt * g.v - rel_c,
        g.verts.reshape(3, -1).take(flat_j, 1) + alpha * g.E.reshape(3, -1).take(flat_j, 1),
    )
    rel_len2 = _dot(rel_c, rel_c)
    normal = rel_c * np.where(rel_len2 > 0.0, 1.0 / np.sqrt(rel_len2), 0.0)
    return normal, on_tri + A


def _kernel(p, q, r, v, T, want=None):
    """Sweep kernel on one chunk; callers hold np.errstate(divide/invalid/over = ignore).

    p, q, v : (3, n) or (3, 1) world segment ends and displacement; r : (n,) or scalar radius;
    T : (REC_FIELDS, n) triangle records (records.triangle_record; relative to vertex a);
    want : (n,) bool or None (all): the pairs whose normal and point are wanted when they
    start penetrating (the discrete contact); the others then report time 0 with zero
    normal and point, and skip the contact kernel.
    Returns time (n,), normal (3, n), point (3, n) (see sweep_capsule_triangle_many).
    Phases: pair geometry, quadratic pieces, planar pieces, earliest entry, starts
    penetrating, the entered piece's contact, the discrete contact of penetrating pairs.
    """
    g = _pair_geometry(p, q, r, v, T)
    n = g.n
    quad = _quadratic_entries(g)
    planes = _planar_entries(g)
    dist2_0 = np.minimum(quad.dist2_0, planes.dist2_0)
    times = np.empty((_N_QUAD + 5, n))  # earliest entry; ties to the lowest piece
    times[:_N_QUAD] = np.where(quad.ok, quad.t, np.inf)
    times[_N_QUAD:] = np.where(planes.ok, planes.t, np.inf)
    k = times.argmin(0)
    t_hit = times.reshape(-1).take(k * n + np.arange(n))
    penetrating = _starts_penetrating(g, planes, dist2_0)
    normal, point = _entry_contact(g, quad, planes, k, t_hit, T[REC_A])
    # starts penetrating: time 0 with the discrete contact's normal and point (core.contact's
    # push-out rules), computed only for those pairs from the same records
    time = t_hit
    if penetrating.any():
        time = np.where(penetrating, 0.0, t_hit)
        if want is not None:
            normal[:, penetrating] = 0.0
            point[:, penetrating] = 0.0
            penetrating &= want
    if penetrating.any():
        idx = np.flatnonzero(penetrating)
        shape = (3, n)
        _c_hit, _depth, c_normal, c_point = capsule_triangle_records(
            np.broadcast_to(p, shape)[:, idx], np.broadcast_to(q, shape)[:, idx],
            np.broadcast_to(r, (n,))[idx], T[:, idx],
        )
        normal[:, idx] = c_normal
        point[:, idx] = c_point
    miss = time == np.inf
    if (t_hit < np.inf).any() and miss.any():
        normal[:, miss] = 0.0
        point[:, miss] = 0.0
    return time, normal, point


def _rows3(x):
    """(3,) -> (3, 1); (n, 3) -> (3, n) view."""
    return x.reshape(3, 1) if x.ndim == 1 else x.T


def sweep_capsule_triangle_many(p, q, radius, displacement, a, b, c):
    """First contact of many swept capsules against many fixed triangles (no validation).

    Parameters
    ----------
    p, q : (N, 3) or (3,) float64, world space, metres
        Capsule segment end points at the start of the motion (``p == q``: a sphere).
    radius : float or (N,) float64, metres, > 0
    displacement : (N, 3) or (3,) float64, metres
        Motion of the capsule over the sweep; the capsule is at ``segment + t * displacement``.
    a, b, c : (N, 3) or (3,) float64, world space, metres
        Triangle vertices (either winding; zero-area triangles allowed).

    Returns
    -------
    time : (N,) float64
        First contact time in [0, 1] (fraction of ``displacement``), ``np.inf`` for a miss.
        0 when the capsule starts penetrating (or starts touching and moves inwards).
    normal : (N, 3) float64
        Unit vector from the triangle towards the capsule at the contact (0 for a miss).
    point : (N, 3) float64, world space, metres
        Contact point on the triangle (0 for a miss).

    Inputs are broadcast against each other to (N, 3); callers validate (core._validate).
    The triangles' records (``records.triangle_record``) are built per chunk of ``_CHUNK``
    pairs and run through the same kernel as the mesh's ``sweep_records``.
    """
    p, q, v, a, b, c = np.broadcast_arrays(
        *(np.asarray(x, dtype=np.float64) for x in (p, q, displacement, a, b, c))
    )
    if p.ndim == 1:
        p, q, v, a, b, c = (x.reshape(1, 3) for x in (p, q, v, a, b, c))
    n_pairs = p.shape[0]
    r = np.broadcast_to(np.asarray(radius, dtype=np.float64), (n_pairs,))
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        if n_pairs <= _CHUNK:
            if n_pairs == 0:
                return np.empty(0), np.empty((0, 3)), np.empty((0, 3))
            T = triangle_record(a.T, b.T, c.T)
            time, normal, point = _kernel(p.T, q.T, r, v.T, T)
            return time, normal.T, point.T
        time = np.empty(n_pairs)
        normal = np.empty((3, n_pairs))
        point = np.empty((3, n_pairs))
        for lo in range(0, n_pairs, _CHUNK):
            s = slice(lo, lo + _CHUNK)
            T = triangle_record(a[s].T, b[s].T, c[s].T)
            time[s], normal[:, s], point[:, s] = _kernel(p[s].T, q[s].T, r[s], v[s].T, T)
    return time, normal.T, point.T


def sweep_records(p, q, radius, displacement, krec, ti, want=None):
    """sweep_capsule_triangle_many for triangles given by stored records (no validation).

    p, q, displacement : (N, 3) per pair, or (3,) shared by all pairs (world, metres);
    radius : (N,) or scalar; krec : (M, REC_FIELDS) row-major triangle records
    (``records.triangle_record``, e.g. ``TriangleMesh._krec``); ti : (N,) int rows of krec,
    one per pair. Returns time (N,), normal (N, 3), point (N, 3) exactly as
    sweep_capsule_triangle_many on the records' triangles. Records are gathered per chunk
    of ``_CHUNK`` pairs (no (N, REC_FIELDS) temporary). ``want`` (N,) bool or None: as
    ``_kernel``'s (pairs starting in penetration without it get zero normal and point).
    """
    n_pairs = ti.size
    if n_pairs == 0:
        return np.empty(0), np.empty((0, 3)), np.empty((0, 3))
    shared = p.ndim == 1
    r = np.asarray(radius, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        if n_pairs <= _CHUNK:
            T = np.take(krec, ti, axis=0).T
            if n_pairs >= _CONTIGUOUS_MIN:
                T = np.ascontiguousarray(T)
            time, normal, point = _kernel(_rows3(p), _rows3(q), r, _rows3(displacement), T,
                                          want)
            return time, normal.T, point.T
        time = np.empty(n_pairs)
        normal = np.empty((3, n_pairs))
        point = np.empty((3, n_pairs))
        r = np.broadcast_to(r, (n_pairs,))
        for lo in range(0, n_pairs, _CHUNK):
            s = slice(lo, lo + _CHUNK)
            T = np.ascontiguousarray(np.take(krec, ti[s], axis=0).T)
            if shared:
                ps, qs, vs = p.reshape(3, 1), q.reshape(3, 1), displacement.reshape(3, 1)
            else:
                ps, qs, vs = p[s].T, q[s].T, displacement[s].T
            time[s], normal[:, s], point[:, s] = _kernel(
                ps, qs, r[s], vs, T, None if want is None else want[s])
    return time, normal.T, point.T



def sweep_capsule_triangle(capsule, displacement, a, b, c) -> Hit | None:
    """First contact of ``capsule`` moved by ``displacement`` against triangle (a, b, c).

    Parameters
    ----------
    capsule : Capsule
        The moving capsule at the start of the motion (world space, metres).
    displacement : (3,) float64, metres
        The capsule moves by ``t * displacement`` for ``t`` in [0, 1].
    a, b, c : (3,) float64, world space, metres
        Triangle vertices; zero-area triangles behave as the segment or point they collapse to.

    Returns
    -------
    Hit | None
        ``Hit(time, normal, point)`` with ``time`` = inf{t : dist < radius} in [0, 1]
        (0 when the capsule starts penetrating; normal and point are then the discrete
        contact's), ``normal`` the unit vector from the triangle towards the capsule and
        ``point`` the contact point on the triangle; ``None`` when the capsule never comes
        closer than its radius (touching, grazing and sliding along the surface are misses).

    Raises
    ------
    ValueError
        For a non-Capsule ``capsule`` or a malformed/non-finite point (naming the argument).
    """
    if not isinstance(capsule, Capsule):
        raise ValueError(f"capsule must be a Capsule, got {type(capsule).__name__}")
    v = as_point(displacement, "displacement")
    a = as_point(a, "a")
    b = as_point(b, "b")
    c = as_point(c, "c")
    time, normal, point = sweep_capsule_triangle_many(
        capsule.a, capsule.b, capsule.radius, v, a, b, c
    )
    if not np.isfinite(time[0]):
        return None
    return Hit(float(time[0]), normal[0].copy(), point[0].copy())
