"""Discrete contact tests: sphere-triangle, capsule-capsule, capsule-triangle.

Conventions (docs/decisions.md): metres, world space. Shapes intersect iff their
distance is strictly less than the sum of radii (touching is not a contact). ``Contact.normal``
is a unit vector from the obstacle towards the capsule; moving the capsule by
``normal * (depth + CONTACT_SLOP)`` separates it from that obstacle. ``Contact.point`` is the
deepest point of the obstacle (for a triangle: the triangle point closest to the capsule's
segment). ``triangle`` is -1 (these are non-mesh queries).

Borderline verdicts: the single-capsule functions (``sphere_triangle``, ``capsule_triangle``)
let core.exact decide when the float distance is within EXACT_TIE_REL of the radius
(``settle_touching``), so a capsule exactly touching a triangle is never a contact and one
penetrating by less than the rounding always is. The batched kernels stay float.

Push-out rules:
* Segment clear of the obstacle: depth = r - dist, normal = (on_segment - on_obstacle) / dist.
* Segment touching or crossing a triangle (dist^2 below CONTACT_DIRECTION_REL2 x scale^2):
  push along the triangle's unit normal n. With d0, d1 the signed plane distances of the segment
  ends, depth = min(|d0|, |d1|) + r and the normal points to the side of the end FARTHER from the
  plane, so the nearer end is pushed through (afterwards both ends are >= r on that side). Equal
  |d0| == |d1|: the side of d0 + d1, +n when that is 0 (segment in the plane, or symmetric cross).
  (Seed 003 picks the nearer end's side, which fails e.g. for d0 = 0.2, d1 = -0.5, r = 0.35.)
* Degenerate (zero-area) triangle touched by the segment: push by r along unit(D x e), D the
  capsule axis, e the collapsed triangle's direction (longest edge); if they are parallel (or the
  capsule is a sphere) along a deterministic unit vector perpendicular to e (to D if the triangle
  is a point; +Z if both are points). Either way the lines end up r apart.
* Capsule-capsule with touching segments: normal = unit(d1 x d2), depth = r1 + r2; parallel
  segments use a deterministic perpendicular whose sign flips when the capsules are swapped
  (unless both are the same segment).
"""

from __future__ import annotations

import numpy as np

from ..constants import CONTACT_DIRECTION_REL2, DEGENERATE_REL2, EXACT_TIE_REL, PARALLEL_SIN2
from . import exact
from .closest import segment_segment_kernel, segment_triangle_records
from .records import REC_A, REC_E, REC_EE, REC_G, REC_NN, as_rows, cross3, dot3, triangle_record
from .shapes import Capsule, Contact
from .validate import as_point, as_radius

__all__ = [
    "sphere_triangle",
    "capsule_capsule",
    "capsule_triangle",
    "capsule_triangle_many",
    "capsule_triangle_records",
    "settle_touching",
    "settle_touching_many",
    "touching_band",
]

_AXES = np.eye(3)
_UP = np.array([0.0, 0.0, 1.0])


def _unit_perpendicular(v):
    """Deterministic unit vectors perpendicular to v (3, K): cross with the axis of v's smallest
    |component| (first on ties). Zero vectors give NaN (callers select around them)."""
    axis = _AXES[:, np.abs(v).argmin(0)]
    w = cross3(v, axis)
    return w / np.sqrt(dot3(w, w))


def _degenerate_push_normal(D, E, ee):
    """Push normal for a segment with direction D (3, K) touching degenerate triangles with edge
    vectors E (3, 3, K), ee = |E|^2 (3, K). See the module docstring."""
    e = (E * (ee.argmax(0) == np.arange(3)[:, None])).sum(1)  # longest edge = collapsed dir
    e2 = dot3(e, e)
    dd = dot3(D, D)
    m = cross3(D, e)
    mm = dot3(m, m)
    normal = np.where(
        mm > DEGENERATE_REL2 * (dd * e2),
        m / np.sqrt(mm),
        np.where(e2 > 0.0, _unit_perpendicular(e), _unit_perpendicular(D)),
    )
    return np.where((e2 > 0.0) | (dd > 0.0), normal, _UP[:, None])


# Pairs per chunk of the vectorised capsule-triangle kernel: keeps the (3, 5, n) temporaries
# cache-sized (measured best between 4k and 16k pairs on the development machine).
CONTACT_CHUNK = 8192


def capsule_triangle_records(p, q, radius, T):
    """Capsule-triangle contacts for triangle records T (records.triangle_record).

    p, q : (3, N) or (3, 1) world segment ends; radius : scalar or (N,); T : (REC_FIELDS, N)
    or (REC_FIELDS, 1). Returns hit (N,), depth (N,), normal (3, N), point (3, N)
    (component-major, possibly broadcast views). Callers hold np.errstate.
    """
    A = T[REC_A]
    P = p - A
    Q = q - A
    u, W, d2, _, h = segment_triangle_records(P, Q, T)
    D = Q - P
    on_triangle = P + u * D - W
    hit = d2 < radius * radius
    dist = np.sqrt(d2)
    depth = radius - dist
    normal = W / dist
    # scale of the local configuration: squared lengths relative to vertex a
    ee = T[REC_EE]
    scale2 = np.maximum(np.maximum(ee.max(0), dot3(P, P)), dot3(Q, Q))
    touching = hit & (d2 <= CONTACT_DIRECTION_REL2 * scale2)
    if touching.any():
        shape = np.broadcast_shapes(normal.shape, depth.shape)
        normal = np.array(np.broadcast_to(normal, shape))
        depth = np.array(np.broadcast_to(depth, shape[1:]))
        idx = np.flatnonzero(touching)

        def lanes(x):  # (3, ...) or (...) -> the touching lanes
            return np.broadcast_to(x, x.shape[:-1] + shape[-1:])[..., idx]

        nt = T.shape[1]
        r_t = lanes(np.broadcast_to(radius, shape[1:]))
        nn_t = lanes(T[REC_NN])
        inv = 1.0 / np.sqrt(nn_t)
        d0 = lanes(h[0]) * inv
        d1 = lanes(h[1]) * inv
        ad0 = np.abs(d0)
        ad1 = np.abs(d1)
        far = np.where(ad1 > ad0, d1, np.where(ad0 > ad1, d0, d0 + d1))
        n_push = lanes(T[REC_G].reshape(3, 4, nt)[:, 0]) * (
            inv * np.where(far < 0.0, -1.0, 1.0)
        )
        depth_push = np.minimum(ad0, ad1) + r_t
        degenerate = nn_t <= DEGENERATE_REL2 * lanes(ee[0]) * lanes(ee[2])
        if degenerate.any():
            E = T[REC_E].reshape(3, 3, nt)
            n_deg = _degenerate_push_normal(lanes(D), lanes(E), lanes(ee))
            n_push = np.where(degenerate, n_deg, n_push)
            depth_push = np.where(degenerate, r_t, depth_push)
        normal[:, idx] = n_push
        depth[idx] = depth_push
    return hit, depth, normal, on_triangle + A


def capsule_triangle_many(p, q, radius, a, b, c):
    """Capsule-vs-triangle contacts, vectorised over capsules and/or triangles.

    p, q : (3,) or (N, 3) float64, capsule segment ends (metres); radius : scalar or (N,) > 0;
    a, b, c : (3,) or (N, 3) triangle vertices (metres, winding gives the normal +n).
    Returns hit (N,) bool, depth (N,) metres, normal (N, 3) unit, point (N, 3) on the triangle;
    depth/normal/point are meaningful where hit. No validation (callers validate).
    Rules in the module docstring; closest points from core.closest (exact within rounding).
    Large N is processed in chunks of CONTACT_CHUNK pairs.
    """
    P, Q, A, B, C = as_rows(p), as_rows(q), as_rows(a), as_rows(b), as_rows(c)
    radius = np.asarray(radius, dtype=np.float64)
    shape = np.broadcast_shapes(P.shape, Q.shape, A.shape, B.shape, C.shape,
                                (1,) + radius.shape)
    n = shape[1]
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        if n <= CONTACT_CHUNK:
            hit, depth, normal, point = capsule_triangle_records(
                P, Q, radius, triangle_record(A, B, C)
            )
            return (
                np.broadcast_to(hit, shape[1:]),
                np.broadcast_to(depth, shape[1:]),
                np.broadcast_to(normal, shape).T,
                np.broadcast_to(point, shape).T,
            )
        P, Q, A, B, C = (np.broadcast_to(x, shape) for x in (P, Q, A, B, C))
        radius = np.broadcast_to(radius, shape[1:])
        hit = np.empty(n, dtype=bool)
        depth = np.empty(n)
        normal = np.empty((3, n))
        point = np.empty((3, n))
        for lo in range(0, n, CONTACT_CHUNK):
            hi = min(n, lo + CONTACT_CHUNK)
            s = slice(lo, hi)
            out = capsule_triangle_records(
                P[:, s], Q[:, s], radius[s],
                triangle_record(A[:, s], B[:, s], C[:, s]),
            )
            hit[s], depth[s], normal[:, s], point[:, s] = out
    return hit, depth, normal.T, point.T


def touching_band(p, q, radius, a, b, c) -> float:
    """Metres: |radius - float distance| at or below which the float verdict of one capsule
    against one triangle is borderline (EXACT_TIE_REL of the largest coordinate, radius or
    local size: the kernels' rounding is a few ulps of those)."""
    pts = np.stack([p, q, a, b, c])
    size = float(np.abs(pts - pts[2]).max())
    return EXACT_TIE_REL * max(float(np.abs(pts).max()), size, float(radius))


def settle_touching(p, q, radius, a, b, c, hit: bool, depth: float):
    """The penetration verdict of one capsule (segment p-q, radius) against triangle (a, b, c)
    when the float result is borderline: ``(hit, depth)`` with core.exact deciding whenever
    |depth| <= touching_band (depth = radius - float distance). A float contact that exact
    arithmetic says only touches (or misses) is dropped; a float miss that exact arithmetic
    says penetrates by less than the rounding gets depth max(depth, ulp(radius)) > 0.
    Points are (3,) float64 taken at their exact binary values."""
    if abs(depth) > touching_band(p, q, radius, a, b, c):
        return hit, depth
    if not exact.capsule_triangle_intersect(p, q, radius, a, b, c):
        return False, depth
    return True, max(depth, float(np.spacing(radius)))


def settle_touching_many(p, q, radius, a, b, c, hit, depth):
    """``settle_touching`` for one capsule (p, q (3,), radius) against K triangles a, b, c
    (K, 3) with float verdicts hit (K,) bool and depth (K,) = radius - distance: returns new
    (hit, depth) arrays, core.exact deciding the borderline lanes only (for TriangleMesh's
    single-capsule queries: two numpy calls when no lane is borderline)."""
    scale = np.maximum(np.abs(np.stack([a, b, c])).max((0, 2)),
                       max(float(np.abs(p).max()), float(np.abs(q).max()), float(radius)))
    borderline = np.abs(depth) <= EXACT_TIE_REL * 2.0 * scale  # local size <= 2 * magnitude
    if not borderline.any():
        return hit, depth
    hit = np.array(hit, dtype=bool)
    depth = np.array(depth, dtype=np.float64)
    for i in np.flatnonzero(borderline).tolist():
        hit[i], depth[i] = settle_touching(p, q, radius, a[i], b[i], c[i], bool(hit[i]),
                                           float(depth[i]))
    return hit, depth


def _contact_from_many(p, q, radius, a, b, c):
    hit, depth, normal, point = capsule_triangle_many(p, q, radius, a, b, c)
    hit, d = settle_touching(p, q, radius, a, b, c, bool(hit[0]), float(depth[0]))
    if not hit:
        return None
    return Contact(d, normal[0].copy(), point[0].copy(), -1)


def sphere_triangle(center, radius, a, b, c) -> Contact | None:
    """Contact of the sphere (center (3,), radius > 0, metres) with triangle (a, b, c), or None.

    Same rules as ``capsule_triangle`` for a zero-length capsule: clear of the triangle, the
    normal points from the closest triangle point to the centre; a centre on the triangle is
    pushed along +n (the winding normal) by ``radius``. Touching is not a contact.
    """
    center = as_point(center, "center")
    radius = as_radius(radius, "radius")
    a = as_point(a, "a")
    b = as_point(b, "b")
    c = as_point(c, "c")
    return _contact_from_many(center, center, radius, a, b, c)


def capsule_triangle(capsule: Capsule, a, b, c) -> Contact | None:
    """Contact of ``capsule`` with triangle (a, b, c) ((3,) points, metres), or None.

    Normal from the triangle towards the capsule; see the module docstring for the crossing and
    degenerate-triangle rules. ``point`` is the triangle point closest to the capsule's segment.
    """
    if not isinstance(capsule, Capsule):
        raise ValueError(f"capsule must be a Capsule, got {type(capsule).__name__}")
    a = as_point(a, "a")
    b = as_point(b, "b")
    c = as_point(c, "c")
    return _contact_from_many(capsule.a, capsule.b, capsule.radius, a, b, c)


def _sign_canonical(v):
    """v or -v, whichever has its first nonzero component positive."""
    nz = v[np.flatnonzero(v)]
    return -v if nz.size and nz[0] < 0.0 else v


def _antisymmetric_sign(x1, x2) -> float:
    """+1 / -1 from the first nonzero component of x1 - x2 (flips when swapped); +1 if equal."""
    for value in x1 - x2:
        if value != 0.0:
            return 1.0 if value > 0.0 else -1.0
    return 1.0


def capsule_capsule(c1: Capsule, c2: Capsule) -> Contact | None:
    """Contact of capsule ``c1`` with capsule ``c2`` (the obstacle), or None.

    Normal from c2 towards c1 (swap the arguments: same depth, opposite normal); depth = r1 + r2
    - dist; point = the point of c2's surface deepest in c1 (closest axis point + r2 * normal).
    Closest axis points from Ericson RTCD 5.1.9 (exact, not seed 000's endpoint heuristic).
    """
    for name, capsule in (("c1", c1), ("c2", c2)):
        if not isinstance(capsule, Capsule):
            raise ValueError(f"{name} must be a Capsule, got {type(capsule).__name__}")
    P1 = c1.a.reshape(3, 1)
    P2 = c2.a.reshape(3, 1)
    D1 = (c1.b - c1.a).reshape(3, 1)
    D2 = (c2.b - c2.a).reshape(3, 1)
    R = P1 - P2
    with np.errstate(divide="ignore", invalid="ignore"):
        s, t, W, d2 = segment_segment_kernel(R, D1, D2)
    d2 = float(d2[0])
    r_sum = c1.radius + c2.radius
    if not d2 < r_sum * r_sum:
        return None
    on2 = c2.a + float(t[0]) * (c2.b - c2.a)
    d1v = D1[:, 0]
    d2v = D2[:, 0]
    scale2 = max(float(d1v @ d1v), float(d2v @ d2v), float(R[:, 0] @ R[:, 0]))
    if d2 > CONTACT_DIRECTION_REL2 * scale2:
        dist = float(np.sqrt(d2))
        normal = W[:, 0] / dist
        depth = r_sum - dist
    else:
        depth = r_sum
        m = np.cross(d1v, d2v)
        mm = float(m @ m)
        if mm > PARALLEL_SIN2 * float(d1v @ d1v) * float(d2v @ d2v) and mm > 0.0:
            normal = m / np.sqrt(mm)
        else:
            # parallel (or point) axes: perpendicular to the longer (sign-canonical) axis, so
            # the direction does not depend on the argument order; the sign below does.
            axes = sorted(
                (float(v @ v), _sign_canonical(v).tolist()) for v in (d1v, d2v)
            )
            axis = np.array(axes[-1][1])
            if axes[-1][0] > 0.0:
                normal = _unit_perpendicular(axis.reshape(3, 1))[:, 0]
            else:
                normal = _UP.copy()
            mid1 = 0.5 * (c1.a + c1.b)
            mid2 = 0.5 * (c2.a + c2.b)
            sign = _antisymmetric_sign(mid1, mid2)
            if np.array_equal(mid1, mid2):
                sign = _antisymmetric_sign(c1.a, c2.a)
            normal = sign * normal
    point = on2 + c2.radius * normal
    return Contact(float(depth), normal, point, -1)
