"""Swept capsule against triangle: exact time of first contact, no tunnelling at any speed.

Definition (binding, notes/API.md): the capsule (segment ``p``-``q``, radius ``r``) moves by
``t * displacement`` for ``t`` in [0, 1]; the triangle is fixed.

    time = inf { t in [0, 1] : dist(segment + t * displacement, triangle) < r }

Touching (distance exactly ``r``), grazing (the distance reaches ``r`` but never goes below) and
sliding tangentially while touching are not hits. A capsule that starts penetrating hits at
``time = 0`` with the discrete contact's normal and point (notes/API.md sign conventions). At a
hit with ``time > 0`` the distance is ``r > 0``, so the normal is the unit vector from the
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

Performance: one pass evaluates all 20 pieces for all pairs with (n, 15, 3) and (n, 5, 4)
arrays (no Python loop over pairs; batches above ``_CHUNK`` pairs run in cache-sized chunks);
per-pair quantities are computed once, the two batches of cross products are single gathers.
The discrete contact (core.contact) is only evaluated for the pairs that start penetrating.
"""

from __future__ import annotations

import numpy as np

from ._validate import as_point
from .constants import DEGENERATE_REL2, SWEEP_GRAZE_REL, SWEEP_THIN_REL2
from .contact import capsule_triangle_many
from .shapes import Capsule, Hit

__all__ = ["sweep_capsule_triangle", "sweep_capsule_triangle_many"]

# ---------------------------------------------------------------------------------------------
# Candidate tables. Quadratic pieces 0..14, planar pieces 15..19 (k = index into times (n, 20)).
#   0..5   end point i = k // 3 against edge j = k % 3 (cylinder around edge j)
#   6..8   segment interior against vertex j = k - 6 (cylinder around the segment)
#   9..14  end point i = (k - 9) // 3 against vertex j (sphere)
#   15..16 end point i = k - 15 against the triangle's face
#   17..19 segment interior against edge j = k - 17 (parallelogram)
# Per pair, rel6 (n, 6, 3) holds X_i - V_j at flat index 3 i + j (X_0 = p, X_1 = q, V_j the
# vertices, all relative to vertex a). A cylinder piece has the relative vector w = rel6[...]
# and a unit axis: E_j / |E_j| for 0..5, -d / |d| for 6..8 (d = q - p), with the axial
# coordinate w . axis in [0, length]; a sphere has no axis.
# vec8 (n, 8, 3) holds [E_0, E_1, E_2, d, N, m_0, m_1, m_2] with N = E_2 x E_0 the winding
# normal (= (b - a) x (c - a)) and m_j = d x E_j.
# ---------------------------------------------------------------------------------------------
_N_QUAD = 15
_N_CYL = 9
_QUAD_W = np.array([0, 1, 2, 3, 4, 5, 0, 1, 2, 0, 1, 2, 3, 4, 5])
_CYL_AXIS = np.array([0, 1, 2, 0, 1, 2, 3, 3, 3])  # into [E_0, E_1, E_2, -d]
_PLANE_W = np.array([0, 3, 0, 1, 2])  # X_0 - V_0, X_1 - V_0, P - V_j
_PLANE_NORMAL = np.array([0, 0, 1, 2, 3])  # into [N, m_0, m_1, m_2]
_END_I = np.array([0, 0, 0, 1, 1, 1, 0, 0, 0, 0, 0, 0, 1, 1, 1, 0, 1, 0, 0, 0])
_VERT_J = np.array([0, 1, 2, 0, 1, 2, 0, 1, 2, 0, 1, 2, 0, 1, 2, 0, 0, 0, 1, 2])
# features whose segment side is an end point (on_triangle = end point - relative vector)
_AT_END = np.array([True] * 6 + [False] * 3 + [True] * 6 + [True] * 2 + [False] * 3)
_ROLL1 = np.array([1, 2, 0])
_ROLL2 = np.array([2, 0, 1])
# cross products as gathers from vec8: first [N, m_0, m_1, m_2] = L x R, then from vec12 =
# [vec8, N, m_j] ... see _geometry. Second: [g_0, g_1, g_2, -ub_0..2, -ua_0..2] with
# g_j = N x E_j (in-plane, pointing into the triangle), ub_j = E_j x m_j, ua_j = d x m_j.
# linear constraints of the planar pieces, lin(t) = lin0 + t * lin_v >= 0, 4 per piece, as
# indices into the 18 values [g_j . (P - V_j) (3), g_j . (Q - V_j) (3), beta_j (3),
# alpha_j (3), 1 - beta_j (3), 1 - alpha_j (3)]; a face repeats one of its three constraints
_G_W = np.array([0, 1, 2, 0, 1, 2, 3, 4, 5, 6, 7, 8])  # rows of the second cross product
_G_REL = np.array([0, 1, 2, 3, 4, 5, 0, 1, 2, 0, 1, 2])  # rows of rel6
_LIN = np.array([[0, 1, 2, 0], [3, 4, 5, 3], [6, 12, 9, 15], [7, 13, 10, 16], [8, 14, 11, 17]])
_CHUNK = 4096  # pairs per kernel pass: temporaries stay cache-sized (<= 0.5 MB each)


def _dot(u, w):
    """Row-wise dot product over the last axis (einsum: far faster than (u * w).sum(-1))."""
    return np.einsum("...k,...k->...", u, w)


def _cross_index(left, right):
    """Flat gather indices for cross(vecs[:, left], vecs[:, right]) of (n, k, 3) ``vecs``."""
    li, ri = 3 * left[:, None], 3 * right[:, None]
    return ((li + _ROLL1).ravel(), (ri + _ROLL2).ravel(), (li + _ROLL2).ravel(),
            (ri + _ROLL1).ravel())


def _cross_gather(vecs, index):
    """cross(vecs[:, left], vecs[:, right]) for (n, k, 3) ``vecs`` (index = _cross_index)."""
    n = vecs.shape[0]
    flat = vecs.reshape(n, -1)
    l1, r2, l2, r1 = (np.take(flat, i, axis=1) for i in index)
    return (l1 * r2 - l2 * r1).reshape(n, -1, 3)


_X1 = _cross_index(np.array([2, 3, 3, 3]), np.array([0, 0, 1, 2]))
_X2 = _cross_index(np.array([4, 4, 4, 5, 6, 7, 5, 6, 7]), np.array([0, 1, 2, 0, 1, 2, 3, 3, 3]))


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
    Large batches are processed in chunks of a few thousand pairs (cache-sized temporaries).
    """
    p, q, v, a, b, c = np.broadcast_arrays(
        *(np.asarray(x, dtype=np.float64) for x in (p, q, displacement, a, b, c))
    )
    if p.ndim == 1:
        p, q, v, a, b, c = (x.reshape(1, 3) for x in (p, q, v, a, b, c))
    n_pairs = p.shape[0]
    r = np.broadcast_to(np.asarray(radius, dtype=np.float64), (n_pairs,))
    if n_pairs <= _CHUNK:
        return _sweep_kernel(p, q, r, v, a, b, c)
    time = np.empty(n_pairs)
    normal = np.empty((n_pairs, 3))
    point = np.empty((n_pairs, 3))
    for lo in range(0, n_pairs, _CHUNK):
        sl = slice(lo, lo + _CHUNK)
        time[sl], normal[sl], point[sl] = _sweep_kernel(
            p[sl], q[sl], r[sl], v[sl], a[sl], b[sl], c[sl]
        )
    return time, normal, point


def _sweep_kernel(p, q, r, v, a, b, c):
    """sweep_capsule_triangle_many on (n, 3) arrays and (n,) radii (see the module docstring)."""
    n = p.shape[0]
    if n == 0:
        return np.empty(0), np.empty((0, 3)), np.empty((0, 3))
    rows = np.arange(n)

    # ---- per-pair geometry, local origin at vertex a ----------------------------------------
    ends = np.empty((n, 2, 3))  # X_0 = P, X_1 = Q
    ends[:, 0] = p - a
    ends[:, 1] = q - a
    verts = np.zeros((n, 3, 3))  # V_0 = 0, V_1 = B, V_2 = C
    verts[:, 1] = b - a
    verts[:, 2] = c - a
    vec8 = np.empty((n, 8, 3))
    vec8[:, 0:3] = verts[:, (1, 2, 0)] - verts  # E_j = V_{j+1} - V_j
    vec8[:, 3] = ends[:, 1] - ends[:, 0]  # d
    vec8[:, 4:8] = _cross_gather(vec8, _X1)  # N, m_0, m_1, m_2
    edges = vec8[:, 0:3]
    rel6 = (ends[:, :, None, :] - verts[:, None, :, :]).reshape(n, 6, 3)  # X_i - V_j
    len2 = _dot(vec8, vec8)  # |E_j|^2, |d|^2, |N|^2, |m_j|^2
    ee = len2[:, 0:3]
    dd = len2[:, 3]
    scale2 = np.maximum(np.max(_dot(rel6, rel6), axis=1), np.max(ee, axis=1))
    tiny2 = DEGENERATE_REL2 * scale2  # squared length under which a direction is degenerate
    r2 = r * r
    graze = SWEEP_GRAZE_REL * r

    # unit directions: cylinder axes [E_j, -d] and plane normals [N, m_j]. A face or
    # parallelogram thinner than the thin tolerance is skipped (its edges' cylinders cover it).
    thin = SWEEP_THIN_REL2 * r2
    need = np.empty((n, 8))
    need[:, 0:4] = tiny2[:, None]
    need[:, 4] = np.maximum(tiny2 * scale2, thin * np.max(ee, axis=1))
    need[:, 5:8] = np.maximum(
        (tiny2 * scale2)[:, None], thin[:, None] * np.maximum(dd[:, None], ee)
    )
    ok8 = len2 > need
    length = np.sqrt(len2)
    inv = np.where(ok8, 1.0 / np.where(ok8, length, 1.0), 0.0)
    inv[:, 3] = -inv[:, 3]  # the segment-interior cylinders use the axis -d
    unit8 = vec8 * inv[..., None]
    cyl_len = np.take(np.where(ok8[:, 0:4], length[:, 0:4], 0.0), _CYL_AXIS, axis=1)
    axis = np.take(unit8, _CYL_AXIS, axis=1)  # (n, 9, 3)

    # ---- quadratic pieces (n, 15): 9 cylinders then 6 spheres -------------------------------
    # In-plane (perpendicular to the axis) motion w + t vp of the relative vector: entry when
    # |w + t vp|^2 = r^2, i.e. A t^2 + 2 B t + C = 0 with A = |vp|^2, B = w.vp, C = |w|^2 - r^2.
    w = np.take(rel6, _QUAD_W, axis=1)  # fresh copy, turned into the perpendicular part in place
    vp = np.empty((n, _N_QUAD, 3))
    w_ax = _dot(w[:, :_N_CYL], axis)
    v_ax = _dot(axis, v[:, None, :])
    w[:, :_N_CYL] -= w_ax[..., None] * axis
    vp[:, :_N_CYL] = v[:, None, :] - v_ax[..., None] * axis
    vp[:, _N_CYL:] = v[:, None, :]
    qa = _dot(vp, vp)
    qb = _dot(w, vp)
    w2 = _dot(w, w)
    ok = (qb < 0.0) & (qa > (graze * graze)[:, None])  # approaching, and not parallel
    # B^2 - A C = A (r^2 - |closest approach|^2): the closest approach w - (B / A) vp is
    # computed as a vector, which is accurate near tangency (unlike B^2 - A C)
    approach = w - (qb / np.where(ok, qa, 1.0))[..., None] * vp
    h = r2[:, None] - _dot(approach, approach)
    ok &= h > (SWEEP_GRAZE_REL * r2)[:, None]  # shallower than the graze tolerance: a graze
    # citardauq first root C / (-B + sqrt(B^2 - AC)): no cancellation since B < 0
    qc = w2 - r2[:, None]
    t_quad = np.maximum(qc, 0.0) / np.where(ok, np.sqrt(qa * np.maximum(h, 0.0)) - qb, 1.0)
    along = w_ax + t_quad[:, :_N_CYL] * v_ax  # axial coordinate at the entry
    ok[:, :_N_CYL] &= (along >= 0.0) & (along <= cyl_len)
    ok &= t_quad < 1.0
    t_quad = np.where(ok, t_quad, np.inf)
    # squared distance of each piece at t = 0 (clamped axial coordinate)
    dist2_0 = np.min(w2[:, _N_CYL:], axis=1)
    outside = w_ax - np.clip(w_ax, 0.0, cyl_len)
    dist2_0 = np.minimum(dist2_0, np.min(w2[:, :_N_CYL] + outside * outside, axis=1))

    # ---- planar pieces (n, 5): faces and parallelograms --------------------------------------
    plane_n = np.take(unit8[:, 4:8], _PLANE_NORMAL, axis=1)
    plane_ok = np.take(ok8[:, 4:8], _PLANE_NORMAL, axis=1)
    s0 = _dot(np.take(rel6, _PLANE_W, axis=1), plane_n)  # signed offset at t = 0
    sv = _dot(plane_n, v[:, None, :])  # rate of change
    # validity constraints: g_j . (X_i + t v - V_j) >= 0 (face), closest-point parameters
    # beta_j, alpha_j in [0, 1] (parallelogram; Ericson RTCD 5.1.8 for the lines P' + beta d
    # and V_j + alpha E_j: beta = (V_j - P') . (E_j x m_j) / |m_j|^2, alpha with d x m_j)
    gvec = _cross_gather(vec8, _X2)  # [g_j, m_j x E_j, m_j x d]
    inv_mm = np.where(ok8[:, 5:8], 1.0 / np.where(ok8[:, 5:8], len2[:, 5:8], 1.0), 0.0)
    gvec[:, 3:6] *= inv_mm[..., None]
    gvec[:, 6:9] *= inv_mm[..., None]
    vals = np.empty((n, 18))
    vals[:, 0:12] = _dot(np.take(gvec, _G_W, axis=1), np.take(rel6, _G_REL, axis=1))
    vals[:, 12:18] = 1.0 - vals[:, 6:12]
    rates = np.empty((n, 18))
    rates[:, 6:12] = _dot(gvec[:, 3:9], v[:, None, :])
    rates[:, 0:3] = _dot(gvec[:, 0:3], v[:, None, :])
    rates[:, 3:6] = rates[:, 0:3]
    rates[:, 12:18] = -rates[:, 6:12]
    lin0 = np.take(vals, _LIN, axis=1)
    lin_v = np.take(rates, _LIN, axis=1)

    abs_s0 = np.abs(s0)
    speed_in = np.where(s0 >= 0.0, -sv, sv)  # speed towards the plane
    rr = r[:, None]
    ok = plane_ok & (abs_s0 >= rr * (1.0 - SWEEP_GRAZE_REL)) & (speed_in > graze[:, None])
    t_plane = np.maximum(abs_s0 - rr, 0.0) / np.where(ok, speed_in, 1.0)
    ok &= (t_plane < 1.0) & np.all(lin0 + t_plane[..., None] * lin_v >= 0.0, axis=-1)
    t_plane = np.where(ok, t_plane, np.inf)
    inside0 = plane_ok & np.all(lin0 >= 0.0, axis=-1)
    dist2_0 = np.minimum(dist2_0, np.min(np.where(inside0, s0 * s0, np.inf), axis=1))

    # ---- earliest entry ---------------------------------------------------------------------
    times = np.concatenate((t_quad, t_plane), axis=1)  # (n, 20)
    k = np.argmin(times, axis=1)
    t_hit = times[rows, k]

    # ---- starts penetrating? ----------------------------------------------------------------
    # the segment crosses the triangle's interior: distance 0. The signs of the ends' plane
    # offsets are those of the face pieces' s0 unless a face was skipped as thin.
    nondegenerate = len2[:, 4] > tiny2 * scale2
    h0 = s0[:, 0]
    h1 = s0[:, 1]
    if not np.all(plane_ok[:, 0] == nondegenerate):
        raw_n = vec8[:, 4]
        h0 = _dot(raw_n, ends[:, 0])
        h1 = _dot(raw_n, ends[:, 1])
    crossing = nondegenerate & (((h0 > 0.0) & (h1 < 0.0)) | ((h0 < 0.0) & (h1 > 0.0)))
    if crossing.any():
        lam = h0 / np.where(crossing, h0 - h1, 1.0)  # crossing point P + lam d
        # g_j . (P + lam d - V_j) = vals_j + lam (vals_{3+j} - vals_j) >= 0 for j = 0..2
        inside = vals[:, 0:3] + lam[:, None] * (vals[:, 3:6] - vals[:, 0:3])
        crossing &= np.all(inside >= 0.0, axis=1)
    penetrating = (dist2_0 < r2 * (1.0 - SWEEP_GRAZE_REL) ** 2) | crossing

    # ---- contact geometry of the first feature at t_hit -------------------------------------
    tt = np.where(np.isfinite(t_hit), t_hit, 0.0)
    is_quad = k < _N_QUAD
    kq = np.where(is_quad, k, 0)
    kp = np.where(is_quad, 0, k - _N_QUAD)
    tv = tt[:, None] * v
    rel_quad = w[rows, kq] + tt[:, None] * vp[rows, kq]  # at entry the axial part is in range
    rel_plane = (s0[rows, kp] + tt * sv[rows, kp])[:, None] * plane_n[rows, kp]
    rel = np.where(is_quad[:, None], rel_quad, rel_plane)  # on_segment - on_triangle, |rel| = r
    j = _VERT_J[k]
    is_pg = k >= _N_QUAD + 2
    ka = np.where(is_pg, k - _N_QUAD - 2 + 9, 9)  # alpha_j = vals[9 + j] + t rates[9 + j]
    alpha = np.where(is_pg, np.clip(vals[rows, ka] + tt * rates[rows, ka], 0.0, 1.0), 0.0)
    on_tri = np.where(
        _AT_END[k][:, None],
        ends[rows, _END_I[k]] + tv - rel,
        verts[rows, j] + alpha[:, None] * edges[rows, j],
    )
    rel_len2 = _dot(rel, rel)
    positive = rel_len2 > 0.0
    inv_len = np.where(positive, 1.0 / np.sqrt(np.where(positive, rel_len2, 1.0)), 0.0)
    normal = rel * inv_len[:, None]
    point = on_tri + a

    # starts penetrating: time 0 with the discrete contact's normal and point (core.contact,
    # notes/API.md push-out rules), computed only for those pairs
    time = t_hit
    if penetrating.any():
        idx = np.flatnonzero(penetrating)
        _c_hit, _depth, c_normal, c_point = capsule_triangle_many(
            p[idx], q[idx], r[idx], a[idx], b[idx], c[idx]
        )
        time = np.where(penetrating, 0.0, t_hit)
        normal[idx] = c_normal
        point[idx] = c_point
    miss = ~np.isfinite(time)
    if miss.any():
        normal[miss] = 0.0
        point[miss] = 0.0
    return time, normal, point


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
