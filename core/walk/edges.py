"""A walk's frame when a character walks off an edge (the ``"exact"`` model), so that it
leaves every edge at the same place and height whatever the frame rate (issue 20).

The controller samples a walk once per frame: standing on an edge, stick-to-floor lowers the
character as the edge moves up its bottom sphere, and the frame after the last one on the
edge used to find it anywhere from the support line to a frame's roll (and a probe's reach)
above it, from where it could land on the far edge of a gap or not with the frame rate. A
frame in which the support of a character standing on an edge ends
(core.controller.departure.support_end) is walked as:

1. the move to just short of where the support ends (still standing on the edge);
2. if another support took over there (a face, another edge), the rest of the move as usual;
3. else the character leaves the edge from the support line (``off_edge``: the bottom sphere's
   centre at the support line's height, ``contact_gap`` clear of the edge). Where something
   is in the way of that (the far side of a gap narrower than the capsule), it walks on as
   usual instead (it steps onto the far side); otherwise it makes the rest of the move in
   the air (no step-up: it no longer stands) and then sticks to a floor within
   ``snap_distance`` below, as any move that started standing (walking down stairs stays
   grounded: the edge it left is now clear of its bottom sphere).

``rapier_edge_ride`` what a Rapier character standing inside its offset loses riding up
over a floor's edge ahead (``ControllerSettings.rises_through_offset``); ``held`` says where
a falling character that cannot fall further (caught in a slot narrower
than the capsule with its skin, on edges none of which supports it alone) stands;
``predicted_ground`` which characters in the air the Rapier model still counts as grounded.

Frame and units: world space, metres, seconds; ``ctrl.settings.up`` is up.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ..constants import (
    EDGE_LINE_TOL,
    RAPIER_GROUND_PREDICTION,
    RAPIER_NORMAL_NUDGE,
    RAPIER_SUPPORT_MIN_COS,
)
from ..controller.departure import off_edge, support_end
from ..controller.ground import Ground, ground_from_contacts
from ..controller.planes import dot_rows, unit_rows
from ..controller.settings import IN_AIR, ON_GROUND


class FrameMove:
    """The moves of one frame of the characters ``act`` (a walk's batch rows); ``ctrl`` the
    CharacterController, ``hoods`` the walk's HoodCache or None, ``dt`` seconds."""

    def __init__(self, ctrl, hoods, act, dt):
        self.ctrl, self.hoods, self.act, self.dt = ctrl, hoods, act, dt
        self.u = ctrl.up

    def _moves(self, rows, feet, disp, ground, refused=None):
        """ctrl.move_many of the characters ``rows`` (indices into act)."""
        hoods = None if self.hoods is None else (self.hoods, self.act[rows])
        return self.ctrl.move_many(feet, disp, ground, hoods=hoods, refused=refused)

    def run(self, feet, disp, ground, refused):
        """(MoveBatch, (A,) vertical speed of the motion, m/s) of the frame's move of every
        character from ``feet`` (A, 3) on ``ground`` by ``disp`` (A, 3); ``refused`` the
        step-ups not to retry."""
        ctrl, u = self.ctrl, self.u
        end = support_end(ctrl, feet, disp, ground)
        split = np.isfinite(end.t)
        first = disp * np.where(split, end.t, 1.0)[:, None] if split.any() else disp
        b = self._moves(np.arange(feet.shape[0]), feet, first, ground, refused)
        if not split.any():
            return b, (b.position - feet) @ u / self.dt
        js = split.nonzero()[0]
        b, off = self._rest(js, b, disp[js] * (1.0 - end.t[js])[:, None], end.rows(js),
                            (1.0 - end.t[js]) * self.dt)
        rise = (b.position - feet) @ u / self.dt
        rise[js] = np.where(np.isnan(off), rise[js], off)
        return b, rise

    def _rest(self, js, b, rest, end, seconds):
        """The rest ``rest`` (K, 3) of the frame's move, ``seconds`` (K,) long, of the
        characters ``js`` that ``b`` moved to just short of where their support on an edge
        ends (``end``, K rows). Returns the frame's MoveBatch and (K,) the vertical speed of
        the moves off the edges (nan: walked on)."""
        g1 = b.ground.rows(js)
        f1 = b.position[js]
        rise = np.full(js.size, np.nan)
        left = end.holds(g1)
        to = off_edge(self.ctrl, f1, end)
        if left.any():  # the settling from the support's end to the support line
            lj = left.nonzero()[0]
            settle = self._moves(js[lj], f1[lj], to[lj] - f1[lj], Ground.unknown(lj.size))
            d = settle.position - to[lj]
            left[lj[dot_rows(d, d) > EDGE_LINE_TOL * EDGE_LINE_TOL]] = False  # in the way
        on = (~left).nonzero()[0]
        if on.size:  # another support took over, or the far side is in the way: walk on
            b = b.then(js[on], self._moves(
                js[on], f1[on], rest[on], g1.rows(on),
                None if b.refused is None else b.refused.rows(js[on])))
        off = left.nonzero()[0]
        if off.size:
            b, rise[off] = self._off_edge(js[off], b, rest[off], g1.rows(off), to[off],
                                          seconds[off])
        return b, rise

    def _off_edge(self, js, b, rest, g1, to, seconds):
        """The characters ``js`` leave their edge from ``to`` (K, 3), on its support line:
        the rest ``rest`` of the move in the air along the ground plane ``g1`` they left
        (less the settling's step off the edge), then stick-to-floor. Returns the frame's
        MoveBatch and (K,) the vertical speed of the move in the air, m/s."""
        u = self.u
        k = js.size
        f1 = b.position[js]
        rest = self.ctrl.follow_ground(rest, g1).displacement
        along, length = unit_rows(rest - np.outer(rest @ u, u))
        ahead = np.minimum(np.maximum(dot_rows(to - f1, along), 0.0), length)
        off = self._moves(js, to, rest - along * ahead[:, None], Ground.unknown(k))
        rise = (off.position - to) @ u / seconds
        standing = Ground.unknown(k)
        standing.state[:] = ON_GROUND
        standing.normal[:] = u
        stick = self._moves(js, off.position, np.zeros((k, 3)), standing)
        held_rows = (stick.ground.state == ON_GROUND).nonzero()[0]
        settled = off if not held_rows.size else off.then(held_rows, stick.rows(held_rows))
        return b.then(js, settled), rise


def held(ctrl, feet, ground: Ground, fell, wanted) -> None:
    """Exact model: characters at ``feet`` (N, 3) in the air whose move fell ``fell`` (N,)
    metres, less than half the ``wanted`` (N,) metres gravity asked (caught: in a slot
    narrower than the capsule with its skin, on edges none of which supports it alone),
    stand where their contacts hold them (``ground_from_contacts``; in place in
    ``ground``)."""
    if not ctrl.settings.exact:
        return
    stalled = ((ground.state == IN_AIR) & (wanted > 0.0) & (fell < 0.5 * wanted)).nonzero()[0]
    if not stalled.size:
        return
    cg = ground_from_contacts(ctrl, feet[stalled])
    ok = cg.state != IN_AIR
    if not ok.any():
        return
    rows = stalled[ok]
    ground.state[rows] = cg.state[ok]
    ground.normal[rows] = cg.normal[ok]
    ground.triangle[rows] = cg.triangle[ok]
    ground.floor[rows] = cg.floor[ok]
    ground.gap[rows] = 0.0


def predicted_ground(ctrl, feet, state) -> np.ndarray:
    """(N,) bool: characters at ``feet`` (N, 3) whose ground ``state`` (N,) is in the air
    but which Rapier's controller still counts as grounded (a model that
    ``pushes_into_floor``): a contact whose normal points up within ``skin_width +
    RAPIER_GROUND_PREDICTION`` of the capsule (the edge it just walked off). All False for
    other models."""
    s = ctrl.settings
    out = np.zeros(len(state), bool)
    air = (state == IN_AIR).nonzero()[0]
    if not s.pushes_into_floor or not air.size:
        return out
    c = ctrl.contacts(feet[air], s.radius + s.skin_width + RAPIER_GROUND_PREDICTION)
    up = c.normal @ ctrl.up >= RAPIER_SUPPORT_MIN_COS
    out[air[np.unique(c.query[up])]] = True
    return out


class EdgeRide(NamedTuple):
    """``rapier_edge_ride``'s answer for N characters: want (N,) metres of horizontal walk
    this frame, hover (N,) metres of Rapier's foot above its floor after it."""

    want: np.ndarray
    hover: np.ndarray


def start_hover(feet, starts, ground: Ground, settings) -> np.ndarray:
    """(N,) metres: where Rapier's foot stands above its floor after settling at ``starts``
    (N, 3), the walk's first points (the model settled at ``feet`` on ``ground``): its height
    above that floor, at most ``skin_width``, plus the settling frame's nudge; ``skin_width``
    for characters not on the ground and for models that float their padding above it."""
    s = settings
    u = s.up_vector
    if not s.rises_through_offset:
        return np.full(len(feet), s.skin_width)
    above = np.clip(np.asarray(starts) @ u - ground.floor, 0.0, s.skin_width)
    ok = (ground.state == ON_GROUND) & np.isfinite(above)
    return np.where(ok, np.minimum(above + RAPIER_NORMAL_NUDGE, s.skin_width), s.skin_width)


def next_hover(hover, before: Ground, after: Ground, stepped, settings) -> np.ndarray:
    """(N,) Rapier's foot above its floor after a frame that started on ``before`` at
    ``hover`` (N,) and ended on ``after``: one RAPIER_NORMAL_NUDGE higher while it walks on
    the same floor, its height changed by less than a nudge (Rapier's slide hits it every
    frame), else ``skin_width`` (a snap,
    a step, a landing and a slope all leave it its offset above what it stands on)."""
    s = settings
    same = ((before.state == ON_GROUND) & (after.state == ON_GROUND) & ~stepped
            & (np.abs(after.floor - before.floor) <= RAPIER_NORMAL_NUDGE))
    return np.where(same, np.minimum(hover + RAPIER_NORMAL_NUDGE, s.skin_width), s.skin_width)


def rapier_edge_ride(ctrl, feet, ground: Ground, dirh, want, hover) -> EdgeRide:
    """A Rapier character standing inside its offset (``hover`` (N,) m above its floor, less
    than ``skin_width``; ``feet`` (N, 3) the model's, on ``ground``) and walking ``want``
    (N,) m along ``dirh`` (N, 3) meets the edge of its floor ahead (where the floor ends
    over a drop) while its bottom sphere is still over the floor: the edge comes within its
    offset of the sphere ``sqrt((r + offset)^2 - (r + hover)^2)`` short of it. Rapier's
    slide then moves the rest of the frame along the contact's tangent plane: the sphere
    rides up (the hover grows) and the walk loses ``rest x cos^2`` of the angle between the
    walk and the contact normal (about 3 mm before a gap's edge at 120 Hz, 4 m/s, the foot
    0.006 m up: that moves the frame Rapier leaves the edge from, and its take-off height,
    issue 26). Contacts steeper than ``max_slope_deg`` are walls (Rapier autosteps there)
    and left alone. One contact query for the characters it can concern."""
    s = ctrl.settings
    u = ctrl.up
    if not s.rises_through_offset:
        return EdgeRide(want, hover)
    rows = ((ground.state == ON_GROUND) & (hover < s.skin_width) & (want > 0.0)
            & np.isfinite(ground.floor)).nonzero()[0]
    if not rows.size:
        return EdgeRide(want, hover)
    want = np.array(want, float)
    hover = np.array(hover, float)
    big = s.radius + s.skin_width
    low = feet[rows] - np.outer(feet[rows] @ u - ground.floor[rows] - hover[rows], u)
    c = ctrl.contacts(low, big + want[rows])
    if not c.query.size:
        return EdgeRide(want, hover)
    q = c.query
    d = dirh[rows][q]
    rel = low[q] + s.radius * u - c.point  # edge point -> bottom sphere centre
    v = rel @ u
    ahead = -dot_rows(rel, d)
    side2 = np.maximum(dot_rows(rel, rel) - v * v - ahead * ahead, 0.0)
    room2 = big * big - v * v - side2
    reach = np.sqrt(np.maximum(room2, 0.0))
    t = np.maximum(ahead - reach, 0.0)  # walked before the contact
    w = want[rows][q]
    along = (ahead - t) / big  # -(contact normal . walk)
    meets = ((ahead > EDGE_LINE_TOL) & (room2 > 0.0) & (t < w)
             & (v / big >= s.cos_max_slope))
    lost = np.where(meets, (w - t) * along * along, 0.0)
    rise = np.where(meets, (w - t) * along * (v / big), 0.0)
    best = np.zeros(rows.size)
    np.maximum.at(best, q, lost)
    pick = lost >= best[q]
    up = np.zeros(rows.size)
    np.maximum.at(up, q[pick & meets], rise[pick & meets])
    want[rows] -= best
    hover[rows] = np.minimum(hover[rows] + up, s.skin_width)
    return EdgeRide(want, hover)


def pushed_off(ctrl, feet, started: Ground, ended: Ground, push) -> np.ndarray:
    """(N,) bool, in place in ``feet`` (N, 3) and ``ended``: a model that pushes into the
    floor (``ControllerSettings.pushes_into_floor``) whose frame started on the ground
    (``started``) pushing ``push`` (N,) metres down (one frame of gravity) and ended in the
    air has fallen that push in the frame it left the edge, as Rapier's character does (its
    cast carries the whole push once nothing is below; the ground-following phase dropped
    it: 1.1 cm at 30 Hz, 0.07 mm at 120 Hz). One batched fall for those characters."""
    s = ctrl.settings
    left = np.zeros(len(feet), bool)
    if not s.pushes_into_floor:
        return left
    left = (started.state == ON_GROUND) & (ended.state == IN_AIR) & (push > 0.0)
    rows = left.nonzero()[0]
    if rows.size:
        fall = ctrl.move_many(feet[rows], np.outer(-push[rows], ctrl.up), Ground.unknown(rows.size))
        feet[rows] = fall.position
        ended.put(rows, fall.ground)
    return left
