"""Naming what stopped a walking character: the events of a walk-through.

``EventLog`` records WalkEvents per character without repeating a kind near where it last
fired; ``classify_blocked`` names the reason of blocked frames (a steep slope, a step too
high or with too shallow a tread, a low ceiling, or a plain wall) from the move's blocking
obstacle, the step probe (core.steps, the one the controller's step-up uses) and two
clearance rays.

Frame and units: world space, metres, seconds, degrees; ``settings.up`` is up.
"""

from __future__ import annotations

import math

import numpy as np

from ..constants import FACE_CONTACT_COS, WALL_TOLERANCE_DEG
from ..controller.settings import ON_STEEP_GROUND
from ..controller.steps import probe_from_hits, step_rays, too_high
from .report import WalkEvent

_SIN_WALL = math.sin(math.radians(WALL_TOLERANCE_DEG))


def _angle_deg(cos_up) -> float:
    """Degrees from up of a unit normal whose up component is ``cos_up``."""
    return math.degrees(math.acos(max(-1.0, min(1.0, float(cos_up)))))


class EventLog:
    """WalkEvents of N characters. An event of a kind is not repeated while the character
    stays within 2 x radius (horizontally) of where that kind last fired, unless forced."""

    def __init__(self, n, radius, up):
        self.events = [[] for _ in range(n)]
        self._last = [dict() for _ in range(n)]
        self.radius = radius
        self.up = up

    def emit(self, i, kind, t, position, value, triangle, force=False):
        last = self._last[i].get(kind)
        p = np.asarray(position, float)
        if not force and last is not None:
            d = p - last
            dh = d - (d @ self.up) * self.up
            if np.sqrt((dh * dh).sum(-1)) < 2.0 * self.radius:
                return
        self._last[i][kind] = p.copy()
        self.events[i].append(WalkEvent(kind, float(t), tuple(float(x) for x in p),
                                        None if value is None else float(value),
                                        int(triangle)))


def classify_blocked(ctrl, log: EventLog, act, js, b, dirh, t):
    """Name the reason of the blocked frames ``js`` (indices into ``act``, the characters
    of the move ``b``, a MoveBatch, walking along ``dirh`` (act, 3)) at time ``t``."""
    s = ctrl.settings
    u = s.up_vector
    g = b.ground
    new = b.position
    for j in js[g.state[js] == ON_STEEP_GROUND]:
        log.emit(act[j], "slope_too_steep", t, new[j], _angle_deg(g.normal[j] @ u),
                 int(g.triangle[j]))
    js = js[(g.state[js] != ON_STEEP_GROUND) & (b.block.triangle[js] >= 0)]
    if not js.size:
        return
    tri = b.block.triangle[js]
    bn = b.block.normal[js]
    face = ctrl.mesh.normals[tri]
    fc = np.einsum("ij,ij->i", face, bn)
    up_f = (face * np.where(fc < 0, -1.0, 1.0)[:, None]) @ u
    interior = np.abs(fc) >= FACE_CONTACT_COS
    slope = interior & (up_f > _SIN_WALL) & (up_f < s.cos_max_slope)
    ceiling = ~slope & ((up_f < -_SIN_WALL) | (bn @ u < -_SIN_WALL))
    for j, uf, tr in zip(js[slope], up_f[slope], tri[slope]):
        log.emit(act[j], "slope_too_steep", t, new[j], _angle_deg(uf), int(tr))
    riser, tread, clearance, t_up = _measure(ctrl, b, js, dirh)
    for jj in np.flatnonzero(~slope):
        kind, value = _wall_or_ceiling_reason(bool(ceiling[jj]), riser[jj], tread[jj],
                                              clearance[jj], t_up[jj], s)
        log.emit(act[js[jj]], kind, t, new[js[jj]], value, int(tri[jj]))


def _wall_or_ceiling_reason(ceiling, riser, tread, clearance, t_up, s):
    """(event kind, value) of one blocked frame against a non-slope obstacle: under an
    overhang, ``ceiling_too_low`` when the clearance is below ``height``; against a wall, a
    riser too high (but lower than the character: taller is a wall), else a climbable
    riser whose tread is too high, else a low ceiling just past it, else ``blocked``."""
    if ceiling:
        if np.isfinite(clearance) and clearance < s.height:
            return "ceiling_too_low", clearance
        return "blocked", None
    riser_high = bool(too_high(riser, s))
    if riser_high and riser < s.height:
        return "step_too_high", riser
    if not riser_high and too_high(tread, s) and tread < s.height:
        return "step_too_high", tread
    if np.isfinite(t_up) and clearance < s.height and not riser_high:
        return "ceiling_too_low", clearance
    return "blocked", None


def _measure(ctrl, b, js, dirh):
    """Riser and tread rises (the controller's when its step-up measured them, else the
    step probe's), clearance above the floor just past the obstacle, and the upward ray's
    distance, for the blocked characters js; one ray query."""
    s = ctrl.settings
    u = s.up_vector
    m = js.size
    floor_h = np.where(np.isfinite(b.ground.floor[js]), b.ground.floor[js],
                       b.position[js] @ u)
    rays = step_rays(floor_h, b.block.point[js], dirh[js], s)
    # the clearance rays start step_height above the floor (over the step), and never on
    # the floor itself: with step_height 0 an upward ray from the floor plane hits the floor
    # at distance 0 and a wall read as a 0 m ceiling (issue 19)
    mid = np.outer(floor_h + max(s.step_height, s.ground_probe), u)
    x1 = rays.points[:m]  # just past the obstacle, at floor level
    origins = np.concatenate([rays.origins, x1 + mid, x1 + mid])
    dirs = np.concatenate([rays.directions, np.tile(u, (m, 1)), np.tile(-u, (m, 1))])
    maxd = np.concatenate([np.full(2 * m, rays.max_distance), np.full(m, 4.0 * s.height),
                           np.full(m, 2.0 * s.step_height)])
    hits = ctrl.raycast(origins, dirs, maxd)
    sp = probe_from_hits(ctrl.mesh, hits, s, m)
    riser = np.where(np.isnan(b.riser_rise[js]), sp.riser, b.riser_rise[js])
    tread = np.where(np.isnan(b.tread_rise[js]), sp.tread, b.tread_rise[js])
    t_up = hits.time[2 * m:3 * m]
    t_dn = hits.time[3 * m:]
    clearance = t_up + np.where(np.isfinite(t_dn), t_dn, s.step_height)
    return riser, tread, clearance, t_up
