"""Where a character standing on an edge stops standing on it (the ``"exact"`` model).

While a character walks over an edge, stick-to-floor keeps its rounded bottom on the edge:
the foot sinks as the edge moves up the bottom sphere, until the contact leaves the support
cone (``support_min_cos``: the axis about 0.97 x radius past a level edge), where the
character stops sinking and falls. A frame samples that roll once per ``speed x dt``: the
last frame on the edge used to leave the character anywhere from the support line to a
frame's roll above it, and the frame after could snap it onto the far edge of a gap from
that height, so a character crossed a gap or fell into it with the frame rate and with
where its frames fell (issue 20: 0.8 m crossed, 0.75 and 0.85 m fallen into at 60 Hz).

``support_end`` says, without a mesh query, at which fraction of a move the support of a
character standing on an edge ends: the edge is the line of the supporting triangle's edge
through the contact (a point at a corner), the bottom sphere rolls on it, and the support
ends where the contact normal's up component falls to ``support_min_cos``. ``off_edge``
says where it leaves from: its bottom sphere on the support line, ``contact_gap`` clear of
the edge. The walk (core.walk.edges) moves such a character to just short of that point
(still standing), puts it there and makes the rest of the frame's move in the air: it
leaves every edge at the same height, whatever the frame rate.

Frame and units: world space, metres; ``ctrl.settings.up`` is up. ``ctrl`` is the
``CharacterController`` (its settings, mesh and ground-following phase; no mesh query).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ..constants import DEPARTURE_TOL, EDGE_END_MARGIN, EDGE_LINE_TOL
from .ground import Ground
from .planes import dot_rows, unit_rows
from .settings import ON_GROUND


class SupportEnd(NamedTuple):
    """Where the supports of N characters standing on edges end within their moves.

    t : (N,) the fraction of the move at which the character still stands, DEPARTURE_TOL
    short of the end (inf: the support does not end within the move); a : (N, 3) a point
    of the edge's line (the corner); e : (N, 3) the line's unit direction (zeros at a
    corner); rows without an end hold zeros.
    """

    t: np.ndarray
    a: np.ndarray
    e: np.ndarray

    def rows(self, sel) -> SupportEnd:
        return SupportEnd(self.t[sel], self.a[sel], self.e[sel])

    def holds(self, ground: Ground) -> np.ndarray:
        """(N,) bool: ``ground`` is still the support that ends (standing on an edge whose
        contact lies on this edge's line or corner, within EDGE_LINE_TOL): not a face or
        another edge that took over before it ended."""
        d = ground.point - self.a
        d = d - dot_rows(d, self.e)[:, None] * self.e
        near = dot_rows(d, d) <= EDGE_LINE_TOL * EDGE_LINE_TOL
        return (ground.state == ON_GROUND) & ~ground.interior & near


def off_edge(ctrl, feet, end: SupportEnd) -> np.ndarray:
    """(K, 3) the feet of K characters at ``feet`` (K, 3), standing at the end of their
    support (``end``, K rows), as they leave it: the bottom sphere's centre at the height
    of the support line (where a sphere touching the edge has a contact normal whose up
    component is ``support_min_cos``; not up to a probe's reach above it, where the frames
    before left it), moved off the edge until it is ``contact_gap`` clear of it. From there
    no edge at the height left (the far side of a gap) can support them: every contact
    they make with it is below the support line."""
    s = ctrl.settings
    u = ctrl.up
    centre = feet + s.radius * u
    q = centre - end.a
    q = end.a + dot_rows(q, end.e)[:, None] * end.e  # nearest point of the line (corner)
    up_across, up_len = unit_rows(u - (end.e @ u)[:, None] * end.e)
    out = centre - q
    out = out - dot_rows(out, end.e)[:, None] * end.e
    out = out - dot_rows(out, up_across)[:, None] * up_across
    out_dir, _ = unit_rows(out)
    alpha = np.minimum(ctrl.support_cos / np.maximum(up_len, np.finfo(float).tiny), 1.0)
    rise = alpha * s.radius  # the centre on the support line: touching, the normal's up
    out_len = np.sqrt((s.radius + ctrl.gap) ** 2 - rise * rise)  # ... floated off the edge
    return q + rise[:, None] * up_across + out_len[:, None] * out_dir - s.radius * u


def support_end(ctrl, feet, disp, start: Ground) -> SupportEnd:
    """Where the support of each character at ``feet`` (N, 3) standing on ``start`` ends
    within its move ``disp`` (N, 3) (SupportEnd; t inf where it does not end within the
    move, or the character does not stand on an edge, is not the exact model, or does not
    stick to the floor: only stick-to-floor rolls a character over an edge)."""
    s = ctrl.settings
    n = feet.shape[0]
    out = SupportEnd(np.full(n, np.inf), np.zeros((n, 3)), np.zeros((n, 3)))
    u = ctrl.up
    if not s.exact or not s.snap_distance > ctrl.probe:
        return out
    rows = ((start.state == ON_GROUND) & ~start.interior & (start.triangle >= 0)
            & (disp @ u <= 0.0)).nonzero()[0]
    if not rows.size:
        return out
    chord = ctrl.follow_ground(disp[rows], start.rows(rows)).displacement
    tri = ctrl.mesh.vertices[ctrl.mesh.triangles[start.triangle[rows]]]  # (K, 3, 3)
    point = start.point[rows]
    centre = feet[rows] + s.radius * u  # the bottom sphere's centre
    a, b, opp, at_end = _nearest_edge(tri, point)
    t = np.where(at_end, _corner_end(centre, point, chord, s.radius, ctrl.support_cos, u),
                 _edge_end(centre, a, b, opp, chord, s.radius, ctrl.support_cos, u))
    ends = (t > 0.0) & (t < 1.0)
    out.t[rows] = np.where(ends, t, np.inf)
    out.a[rows] = np.where(at_end[:, None], point, a)
    out.e[rows] = np.where(at_end[:, None], 0.0, unit_rows(b - a)[0])
    return out


def _nearest_edge(tri, point):
    """The edge of each triangle (K, 3, 3) nearest to ``point`` (K, 3): its ends a, b
    (K, 3), the opposite corner (K, 3), and (K,) bool, the point is at one of its ends."""
    best = np.full(point.shape[0], np.inf)
    j_best = np.zeros(point.shape[0], np.int64)
    w_best = np.zeros(point.shape[0])
    for j in range(3):
        a, b = tri[:, j], tri[:, (j + 1) % 3]
        e = b - a
        w = np.clip(dot_rows(point - a, e) / np.maximum(dot_rows(e, e), np.finfo(float).tiny),
                    0.0, 1.0)
        d = point - a - w[:, None] * e
        d2 = dot_rows(d, d)
        better = d2 < best
        best = np.where(better, d2, best)
        j_best = np.where(better, j, j_best)
        w_best = np.where(better, w, w_best)
    k = np.arange(point.shape[0])
    at_end = (w_best <= EDGE_END_MARGIN) | (w_best >= 1.0 - EDGE_END_MARGIN)
    return tri[k, j_best], tri[k, (j_best + 1) % 3], tri[k, (j_best + 2) % 3], at_end


def _edge_end(centre, a, b, opp, chord, radius, cos_support, u):
    """Fractions of ``chord`` (K, 3) at which a sphere rolling on the line a-b leaves the
    support cone (inf: never), DEPARTURE_TOL short. In the plane across the line the
    contact normal is alpha * (up across the line) + beta * m (m: across the line, away from
    the face); it supports while alpha |up across| > cos_support, i.e. while the centre is
    less than radius * sqrt(1 - alpha^2) out along m. Stick-to-floor lowers the centre
    along up, which has no m component, so only the chord moves it along m."""
    e, _ = unit_rows(b - a)
    up_across = u - (e @ u)[:, None] * e
    up_dir, up_len = unit_rows(up_across)
    alpha = cos_support / np.maximum(up_len, np.finfo(float).tiny)
    m = np.cross(e, up_dir)
    m *= np.where(dot_rows(opp - a, m) > 0.0, -1.0, 1.0)[:, None]
    reach = radius * np.sqrt(np.maximum(1.0 - alpha * alpha, 0.0)) - DEPARTURE_TOL
    out0 = dot_rows(centre - a, m)
    rate = dot_rows(chord, m)
    ok = (alpha < 1.0) & (rate > 0.0) & (out0 < reach)
    return np.where(ok, (reach - out0) / np.where(ok, rate, 1.0), np.inf)


def _corner_end(centre, point, chord, radius, cos_support, u):
    """Fractions of ``chord`` (K, 3) at which a sphere rolling on the corner ``point``
    leaves the support cone (inf: never), DEPARTURE_TOL short: touching the corner, it is
    supported while the centre is less than radius * sqrt(1 - cos^2) from it across up."""
    q = centre - point
    q -= np.outer(q @ u, u)
    c = chord - np.outer(chord @ u, u)
    reach = radius * np.sqrt(1.0 - cos_support * cos_support) - DEPARTURE_TOL
    qa = dot_rows(c, c)
    qb = 2.0 * dot_rows(q, c)
    qc = dot_rows(q, q) - reach * reach
    disc = qb * qb - 4.0 * qa * qc
    ok = (qa > 0.0) & (qc < 0.0) & (disc >= 0.0)
    root = (-qb + np.sqrt(np.where(ok, disc, 0.0))) / np.where(ok, 2.0 * qa, 1.0)
    return np.where(ok, root, np.inf)
