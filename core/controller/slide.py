"""Phase 2 of a move: collide-and-slide of N characters in lock-step.

Each iteration sweeps every character still moving (one batched mesh call, with a
speculative ground probe at each sweep's end point: used when the sweep hits nothing).
A hit stops ``skin_width`` short of the surface (measured along the contact normal; each
sweep looks ``skin_width`` past the move's end, so a move never ends inside the skin of what
lies ahead: issue 24, tests/core/test_limits_pinned.py) and the rest of the displacement is
clipped against every plane met so far (``clip_slide``); a sweep that starts penetrating
runs penetration recovery. The most opposing non-walkable obstacle met is remembered for the
step-up and the walk-through's verdicts.

Frame and units: world space, metres; ``ctrl.settings.up`` is up.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ..constants import CONTROLLER_MIN_MOVE, MIN_APPROACH_COS, MIN_HORIZONTAL
from ..geometry.shapes import Hit
from .ground import Ground, Probe
from .planes import clip_slide, dot_rows, unit_rows

# Batches of at most this many characters sweep, then probe only after a miss (after a hit
# the next sweep often hits again); larger batches probe speculatively with every sweep.
# Two single sweeps take the mesh's lean route and cost less than one batch of two.
SEQUENTIAL_PROBE_MAX = 1

_EMPTY = np.empty(0, np.int64)


class Block(NamedTuple):
    """The most opposing non-walkable obstacle each of N characters slid into.

    score : (N,) cos between the walking direction and the obstacle's horizontal normal (-1:
    head-on; inf: none); normal : (N, 3) contact normal; point : (N, 3) contact point;
    triangle : (N,) int64, -1 for none.
    """

    score: np.ndarray
    normal: np.ndarray
    point: np.ndarray
    triangle: np.ndarray


class SlideResult(NamedTuple):
    """Phase 2. feet (N, 3) where the slide ended; iterations (N,) sweeps + recovery rounds;
    depenetration (N,) metres pushed out; trapped (N,) bool, recovery gave up; block: Block;
    blocked: bool, some sweep hit something; probe: Probe, the speculative ground probes
    that are valid at ``feet``; hits: [(character, Hit)] when logged."""

    feet: np.ndarray
    iterations: np.ndarray
    depenetration: np.ndarray
    trapped: np.ndarray
    block: Block
    blocked: bool
    probe: Probe
    hits: list


def slide(ctrl, feet, fg, start: Ground, log_hits=False, expect_hit=None) -> SlideResult:
    """Collide-and-slide the characters at ``feet`` (N, 3) by ``fg.displacement`` (the
    FollowGround of phase 1), starting on ``start``; ``ctrl`` the CharacterController.
    ``expect_hit`` (N,) bool: characters whose first sweep will likely hit (blocked last
    move): no speculative probe is swept with it (a hit makes it useless; the ground probe
    after the slide measures them)."""
    return _Slide(ctrl, feet, fg, start, log_hits, expect_hit).run()


class _Slide:
    """Working arrays of one slide (plain data, updated by the iteration's steps)."""

    def __init__(self, ctrl, feet, fg, start, log_hits, expect_hit=None):
        n = feet.shape[0]
        self.ctrl, self.fg, self.start, self.log_hits = ctrl, fg, start, log_hits
        self.cur = feet.copy()
        rem = fg.displacement.copy()
        self.active = np.sqrt(dot_rows(rem, rem)) > CONTROLLER_MIN_MOVE
        rem[~self.active] = 0.0
        self.rem = rem
        self.idle = (~self.active).nonzero()[0]
        self.same_face = ctrl.same_face(fg, start, self.active)
        # characters swept without a speculative probe in the first iteration
        self.no_probe = self.same_face if expect_hit is None else self.same_face | expect_hit
        self.iters = np.zeros(n, np.int64)
        self.depen = np.zeros(n)
        self.trapped = np.zeros(n, bool)  # penetration recovery gave up
        self.reach = np.zeros(n)  # metres each character's slide sweep looks ahead
        self.planes = None  # (N, max_iterations, 3) slide planes met, at the first hit
        self.block = None  # Block, allocated at the first hit (shared "none" rows until)
        self.blocked = False
        self.probe = Probe.empty(n)
        self.hits = []
        self.sequential = n <= SEQUENTIAL_PROBE_MAX

    def run(self) -> SlideResult:
        for it in range(self.ctrl.settings.max_iterations):
            ids = self.active.nonzero()[0]
            pids = self.idle if it == 0 else _EMPTY
            if not ids.size and not pids.size:
                break
            res, slot = self._sweep(it, ids, pids)
            k = ids.size
            if not k:
                continue
            t = res.time[:k]
            self.iters[ids] += 1
            clear = self._clear_ahead(ids, t, res.normal[:k])
            miss = np.isinf(t) | clear
            if miss.any():
                self._misses(ids[miss], res, slot, it)
            zero = t == 0.0
            if zero.any():
                self._recover(ids, zero, res)
            hit = np.isfinite(t) & (t > 0.0) & ~clear
            if hit.any():
                self._hits(it, ids, hit.nonzero()[0], res)
        block = self.block if self.block is not None else self.ctrl.constant_rows(
            self.cur.shape[0])[3]
        return SlideResult(self.cur, self.iters, self.depen, self.trapped, block,
                           self.blocked, self.probe, self.hits)

    def _clear_ahead(self, ids, t, normal):
        """(K,) bool: sweeps of ``ids`` whose hit at ``t`` (a fraction of the look-ahead)
        lies past the move's end with at least the skin between that end and the surface,
        measured along the hit's ``normal`` (K, 3): the whole move is clear. All False without a
        look-ahead (an engine model): a hit within the move is never past its end."""
        if self.ctrl.look_ahead == 0.0:
            return np.zeros(ids.size, bool)
        gap = self.ctrl.gap
        rhat, rlen = unit_rows(self.rem[ids])
        found = np.isfinite(t) & (t > 0.0)
        approach = np.maximum(-dot_rows(rhat, normal), MIN_APPROACH_COS)
        travel = np.where(found, t, 0.0) * self.reach[ids]
        return found & (travel - gap / approach >= rlen)

    def _store_probe(self, rows, res, sl, length):
        p = self.probe
        p.time[rows] = res.time[sl] * length
        p.normal[rows] = res.normal[sl]
        p.triangle[rows] = res.triangle[sl]
        p.point[rows] = res.point[sl]
        p.valid[rows] = True

    def _sweep(self, it, ids, pids):
        """One batched call: the slide sweeps of ``ids``, speculative probes at their ends
        (batches, first iteration except same-face characters), and the idle characters'
        probes ``pids``. Returns (SweepBatch, slot (N,) of each character's probe row)."""
        ctrl = self.ctrl
        n = self.cur.shape[0]
        k = ids.size
        probe = ctrl.probe
        if self.sequential and it > 0:
            prb = _EMPTY
        else:
            prb = ids[~self.no_probe[ids]] if it == 0 else ids
        slot = np.full(n, -1, np.int64)
        slot[prb] = k + np.arange(prb.size)
        # each slide sweep looks ``ctrl.look_ahead`` (the exact model's skin) further than
        # its move (Rapier's ``target_distance``): a move ending closer than the skin to
        # what lies ahead stops short of it, as one that hits it on the way does
        rhat, rlen = unit_rows(self.rem[ids])
        self.reach[ids] = rlen + ctrl.look_ahead
        feet, rows = [self.cur[ids]], [ids]  # slide sweeps, speculative probes, idle probes
        if prb.size:
            feet.append(self.cur[prb] + self.rem[prb])
            rows.append(prb)
        if pids.size:
            feet.append(self.cur[pids])
            rows.append(pids)
        n_probes = prb.size + pids.size
        feet = np.concatenate(feet) if len(feet) > 1 else feet[0]
        ahead = self.rem[ids] + rhat * ctrl.look_ahead
        disp = np.concatenate([ahead, np.tile(-probe * ctrl.up, (n_probes, 1))]) \
            if n_probes else ahead
        # a move's or an idle probe's start-in-contact normal can matter (hit log, a
        # character that cannot be pushed out); a speculative probe's cannot (it is only
        # kept when its move missed, so it starts clear)
        want = np.zeros(feet.shape[0], bool)
        want[:k] = self.log_hits
        want[k + prb.size:] = True
        res = ctrl.sweep(feet, disp, np.concatenate(rows) if len(rows) > 1 else ids, want)
        if pids.size:
            self._store_probe(pids, res, np.arange(k + prb.size, k + prb.size + pids.size),
                              probe)
        return res, slot

    def _misses(self, m, res, slot, it):
        """Characters m whose sweep hit nothing: move the whole way, keep their probe."""
        ctrl = self.ctrl
        if self.sequential and it > 0:  # probe now, only the characters that need one
            pr = ctrl.sweep(self.cur[m] + self.rem[m], np.tile(-ctrl.probe * ctrl.up,
                                                               (m.size, 1)), m)
            self._store_probe(m, pr, slice(0, m.size), ctrl.probe)
        else:
            mp = m[slot[m] >= 0]
            if mp.size:
                self._store_probe(mp, res, slot[mp], ctrl.probe)
                # starting in contact after a clear move: rounding; probe again
                self.probe.valid[mp[res.time[slot[mp]] == 0.0]] = False
            ms = m[(slot[m] < 0) & self.same_face[m]]  # the start's floor, moved along
            if ms.size:
                st = self.start
                p = self.probe
                p.time[ms] = st.gap[ms]
                p.normal[ms] = st.normal[ms]
                p.triangle[ms] = st.triangle[ms]
                p.point[ms] = st.point[ms] + self.fg.displacement[ms]
                p.valid[ms] = True
        self.cur[m] += self.rem[m]
        self.rem[m] = 0.0
        self.active[m] = False

    def _recover(self, ids, zero, res):
        """Sweeps that started penetrating: push out; trapped characters stop sliding
        (every sweep would be time 0)."""
        z = ids[zero]
        dp = self.ctrl.depenetrate(self.cur[z])
        self.cur[z] = dp.feet
        self.depen[z] += dp.pushed
        self.iters[z] += 1
        if dp.trapped.any():
            tz = z[dp.trapped]
            self.trapped[tz] = True
            self.rem[tz] = 0.0
            self.active[tz] = False
        if self.log_hits:
            for j in zero.nonzero()[0]:
                self.hits.append((ids[j], Hit(0.0, res.normal[j].copy(), res.point[j].copy(),
                                              int(res.triangle[j]))))

    def _hits(self, it, ids, hj, res):
        """Sweeps that hit part-way: stop skin short, remember the obstacle, clip the rest."""
        ctrl = self.ctrl
        u = ctrl.up
        n_all = self.cur.shape[0]
        if self.planes is None:
            self.planes = np.zeros((n_all, ctrl.settings.max_iterations, 3))
            self.block = Block(np.full(n_all, np.inf), np.zeros((n_all, 3)),
                               np.zeros((n_all, 3)), np.full(n_all, -1, np.int64))
        self.blocked = True
        h = ids[hj]
        n = res.normal[hj]
        th = res.time[hj]
        rhat, rlen = unit_rows(self.rem[h])
        if self.log_hits:  # time: a fraction of the move (the sweep looked the skin further)
            frac = np.minimum(th * self.reach[h] / np.maximum(rlen, CONTROLLER_MIN_MOVE), 1.0)
            for j, f in zip(hj, frac):
                self.hits.append((ids[j], Hit(float(f), res.normal[j].copy(),
                                              res.point[j].copy(), int(res.triangle[j]))))
        approach = -dot_rows(rhat, n)
        travel = th * self.reach[h]
        back = np.minimum(ctrl.gap / np.maximum(approach, MIN_APPROACH_COS),
                          travel)
        self.cur[h] += rhat * (travel - back)[:, None]
        r_h = rhat * (rlen - travel + back)[:, None]
        nu = n @ u
        nh, nh_len = unit_rows(n - nu[:, None] * u)
        self._note_block(h, hj, res, nu, nh, nh_len)
        if not ctrl.settings.exact:
            self._rest_on_edges(r_h, n, nu, res.triangle[hj])
        clip = clip_slide(r_h, n, nh, self.planes[h, :it], u, ctrl.cos_slope)
        self.planes[h, it] = clip.plane
        r1 = clip.remaining
        done = dot_rows(r1, r1) <= CONTROLLER_MIN_MOVE * CONTROLLER_MIN_MOVE
        r1[done] = 0.0
        self.rem[h] = r1
        self.active[h] = ~done

    def _rest_on_edges(self, r_h, n, nu, tri):
        """Engine models: a character moving down onto a supporting contact of a walkable
        face (an edge met with its lower half) rests on it: the downward part of the rest of
        its move is dropped (in place, ``r_h`` (K, 3)) instead of sliding down the contact's
        plane away from the edge (Jolt keeps every contact it collided with during a move for
        its ground state; measured, tools/bench_engines.py gap lanes at 30 Hz)."""
        ctrl = self.ctrl
        u = ctrl.up
        down = r_h @ u
        face = ctrl.mesh.normals[tri]
        face_up = np.abs(face @ u) * np.sign(dot_rows(face, n))
        rest = (down < 0.0) & (nu > ctrl.support_cos) & (face_up >= ctrl.cos_slope)
        if rest.any():
            r_h[rest] -= np.outer(down[rest], u)

    def _note_block(self, h, hj, res, nu, nh, nh_len):
        """Remember, per character, the non-walkable hit that opposes its walking direction
        most (lowest score)."""
        score = np.where((nu < self.ctrl.cos_slope) & (nh_len > MIN_HORIZONTAL),
                         dot_rows(self.fg.direction[h], nh), np.inf)
        better = score < self.block.score[h]
        if better.any():
            bh = h[better]
            b = self.block
            b.score[bh] = score[better]
            b.normal[bh] = res.normal[hj[better]]
            b.point[bh] = res.point[hj[better]]
            b.triangle[bh] = res.triangle[hj[better]]
