"""Live penetration check: moving, rotating or resizing a capsule re-checks it at once.

A ``depsgraph_update_post`` handler (persistent: it survives loading a .blend) does two things
per depsgraph update:

1. passes the updates to ``cache.note_updates`` (a wall moved or edited: the level is stale);
2. when ``scene.capsule_collision.live_check`` is on, re-checks every capsule that changed
   (any update of an object whose role is CAPSULE), and every capsule when the level changed,
   against the cached level, then writes the capsule's state (``penetrating_count``,
   ``deepest_depth``, ``push_out``, ``state_stamp``) and the ``capsule_penetration`` face
   attribute (the union of the live capsules' penetrated faces) onto the collision meshes.
   Values are written only when they change, so the writes cannot feed back forever.

Graceful degradation on huge levels (the viewport must never freeze):

* the level is built inside the handler only when the collision objects have at most
  ``LIVE_SYNC_BUILD_TRIANGLES`` triangles; otherwise the capsule is marked pending
  (``penetrating_count = -1``), the status says why, and a timer builds and checks once the
  capsule has been still for ``LIVE_SETTLE_S``;
* when the median of the last ``LIVE_TIMING_WINDOW`` checks took longer than
  ``LIVE_BUDGET_S`` (one frame at 60 Hz) the scene switches to checking on release the same
  way (the status says so); quick checks switch it back.

``status(scene)`` is the one-line state for the panel.
"""

from __future__ import annotations

import time

import bpy
import numpy as np
from bpy.app.handlers import persistent

from . import cache, overlay, penetration, scene_data, staleness
from .live_state import state_of, states

LIVE_BUDGET_S = 1.0 / 60.0  # one frame at 60 Hz: a slower check moves to "check on release"
LIVE_SYNC_BUILD_TRIANGLES = 50_000  # ~0.2 s to read + build (~4 us a triangle): larger levels wait
LIVE_SETTLE_S = 0.3  # a capsule still for this long counts as released
LIVE_TIMING_WINDOW = 5  # checks whose median time decides "check on release"
_TIMER_INTERVAL_S = 0.1
_busy = False  # the handler is running (its own writes must not re-enter it)


def status(scene) -> str:
    """One line for the panel: how the live check runs right now."""
    pg = getattr(scene, "capsule_collision", None)
    if pg is not None and not pg.live_check:
        return "Live check off"
    st = states.get(scene.name)
    if st is None:
        return "Live check on"
    return st.message or "Live check on"


def checks_run(scene) -> int:
    """How many live checks ran in ``scene`` this session (deferred moves do not count)."""
    st = states.get(scene.name)
    return st.checked if st is not None else 0


def _capsules(scene):
    return [o for o in scene.objects if scene_data.role_of(o) == "CAPSULE"]


def _level_triangle_estimate(scene, depsgraph) -> int:
    n = 0
    for ob in scene_data.collision_objects(scene, depsgraph):
        me = ob.evaluated_get(depsgraph).data
        n += len(me.loops) - 2 * len(me.polygons)  # a face of k corners: k - 2 triangles
    return n


def check_capsules(scene, depsgraph, names=None, allow_build=True) -> bool:
    """Re-check capsules ``names`` (all when None) now. Returns False when it deferred.

    Builds the level only when it is small (or ``allow_build``: the timer's release check).
    The verdicts are core's one capsule verdict and are written by ``penetration.write``,
    the same writer as Check Penetration: states, rows (refreshed, so they never go stale
    under the live check) and the ``capsule_penetration`` attribute.
    """
    st = state_of(scene)
    capsules = {o.name: o for o in _capsules(scene)}
    todo = list(capsules) if names is None else [n for n in names if n in capsules]
    level = cache.peek(scene)
    if level is None:
        if not allow_build and _defer_build(scene, depsgraph, st, capsules, todo):
            return False
        try:
            level = cache.cached_level(depsgraph, scene)
        except ValueError as exc:
            st.message = f"Live check: {exc}"
            return True
    if level.stamp != st.stamp:  # the level changed: every capsule's hits are stale
        st.hits.clear()
        st.stamp = level.stamp
        todo = list(capsules)
    todo += [n for n in capsules if n not in st.hits and n not in todo]  # unseen this session
    t0 = time.perf_counter()
    judged, problem = _judge(level, [capsules[n] for n in todo])
    elapsed = time.perf_counter() - t0  # the query: what grows with the level
    written = penetration.write(scene, level, judged)
    for j in judged:
        st.hits[j.obj.name] = j.verdict.triangles
        st.keys[j.obj.name] = j.key
    for n in [n for n in st.hits if n not in capsules]:
        del st.hits[n]  # deleted or renamed capsules
        st.keys.pop(n, None)
    _note_timing(st, elapsed / max(len(todo), 1), todo)
    st.deferred_write = bool(written.deferred)
    note = penetration.edit_mode_note(level, written.deferred)
    st.message = "; ".join(m for m in (problem, st.message, note and f"Live check: {note}")
                           if m)
    tris = (np.unique(np.concatenate(list(st.hits.values()))) if st.hits
            else np.empty(0, dtype=np.int64))
    if not np.array_equal(tris, st.union):
        st.union = tris
        overlay.invalidate()  # hits with no original face are drawn from here, not attributes
    return True


def _defer_build(scene, depsgraph, st, capsules, todo) -> bool:
    """On a level too big to build while moving: mark ``todo`` pending and start the timer."""
    n_tri = _level_triangle_estimate(scene, depsgraph)
    if n_tri <= LIVE_SYNC_BUILD_TRIANGLES:
        return False
    st.pending.update(todo)
    st.message = (f"Live check waits for release: building the level "
                  f"({n_tri:,} triangles) takes too long to do while moving")
    for n in todo:
        penetration.write_state(capsules[n], None, 1.0, "")
    _ensure_timer()
    return True


def _judge(level, objects):
    """Verdicts of the capsule objects that can be read, and the message of one that
    cannot (its state becomes "not checked")."""
    problems = []

    def unreadable(ob, exc):
        problems.append(f"Live check: {exc}")
        penetration.write_state(ob, None, level.unit_scale, "")

    judged = penetration.judge(level, objects, unreadable)
    return judged, "; ".join(problems)


def _note_timing(st, per_capsule_s: float, done) -> None:
    """Record one check's time per capsule (``done``: the capsules checked, no longer
    pending); a slow median switches to check-on-release."""
    st.last_check_s = per_capsule_s
    st.checked += 1
    st.recent = (st.recent + [per_capsule_s])[-LIVE_TIMING_WINDOW:]
    st.pending.difference_update(done)
    typical = float(np.median(st.recent))  # one slow check (a busy machine) is not enough
    st.on_release = typical > LIVE_BUDGET_S
    st.message = (f"Live check on release: one check takes {1000 * typical:.0f} ms"
                  if st.on_release else "")


# ---------------------------------------------------------------- handlers and the timer
def _capsules_in_updates(scene, depsgraph) -> list[str]:
    """Capsules whose placement, size or expectation changed since their last live check
    (``staleness.capsule_key``): a capsule update that only wrote its state (Check
    Penetration, Clear Results, the live check itself) or selected it is not a move."""
    st = states.get(scene.name)
    keys = st.keys if st is not None else {}
    unit = scene_data.unit_scale_of(scene)
    names = []
    for update in depsgraph.updates:
        idb = getattr(update.id, "original", update.id)
        if isinstance(idb, bpy.types.Object) and scene_data.role_of(idb) == "CAPSULE":
            if keys.get(idb.name) != staleness.capsule_key(idb, unit):
                names.append(idb.name)
    return names


@persistent
def on_depsgraph_update(scene, depsgraph):
    global _busy
    if _busy or getattr(scene, "capsule_collision", None) is None:
        return
    _busy = True
    try:
        overlay.invalidate(depsgraph)
        level_changed = cache.note_updates(scene, depsgraph)
        st = states.get(scene.name)
        if st is not None and st.after_undo:
            st.after_undo = False
            level_changed = True
        if st is not None and st.deferred_write and not penetration.meshes_in_edit_mode():
            level = cache.peek(scene)  # a mesh left Edit Mode: write its highlight now
            if level is not None:
                st.deferred_write = bool(penetration.write_attribute(scene, level))
        if not scene.capsule_collision.live_check:
            return
        moved = _capsules_in_updates(scene, depsgraph)
        if not moved and not level_changed:
            return
        names = None if level_changed else moved
        if not moved and not _capsules(scene):
            return
        st = state_of(scene)
        st.last_move = time.monotonic()
        if st.on_release:
            st.pending.update(moved or [o.name for o in _capsules(scene)])
            _ensure_timer()
            return
        check_capsules(scene, depsgraph, names, allow_build=False)
    finally:
        _busy = False


def run_pending(now=None) -> bool:
    """Check capsules that waited for release (no move for ``LIVE_SETTLE_S``).

    Returns True when nothing is pending any more. Called by the timer; tests call it directly.
    """
    global _busy
    now = time.monotonic() if now is None else now
    done = True
    for name, st in list(states.items()):
        if not st.pending:
            continue
        scene = bpy.data.scenes.get(name)
        if scene is None:
            st.pending.clear()
            continue
        if now - st.last_move < LIVE_SETTLE_S:
            done = False
            continue
        depsgraph = scene.view_layers[0].depsgraph
        _busy = True
        try:
            check_capsules(scene, depsgraph, sorted(st.pending), allow_build=True)
        finally:
            _busy = False
        st.pending.clear()
    return done


def _timer():
    return None if run_pending() else _TIMER_INTERVAL_S


def _ensure_timer():
    if not bpy.app.timers.is_registered(_timer):
        bpy.app.timers.register(_timer, first_interval=_TIMER_INTERVAL_S)


@persistent
def on_load_post(*_args):
    cache.clear()
    states.clear()
    overlay.invalidate()


@persistent
def on_undo_redo(*_args):
    cache.mark_suspect()
    for st in states.values():
        st.stamp = ""  # re-check every capsule against the restored level ...
        st.after_undo = True  # ... at the next update, even if no capsule moved (an Edit
        # Mode undo restores the mesh but not the capsules' states)
    overlay.invalidate()


_HANDLERS = (("depsgraph_update_post", on_depsgraph_update), ("load_post", on_load_post),
             ("undo_post", on_undo_redo), ("redo_post", on_undo_redo))


def register():
    for name, fn in _HANDLERS:
        getattr(bpy.app.handlers, name).append(fn)


def unregister():
    if bpy.app.timers.is_registered(_timer):
        bpy.app.timers.unregister(_timer)
    for name, fn in _HANDLERS:
        handlers = getattr(bpy.app.handlers, name)
        while fn in handlers:
            handlers.remove(fn)
    cache.clear()
    states.clear()
