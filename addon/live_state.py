"""The live check's per-scene state: which triangles the live-checked capsules penetrate, how
the check runs (at once or on release) and its status line.

Written by ``live`` (the depsgraph handler), read by ``overlay`` (hits with no original face
are drawn from here) and the panel. Module memory, rebuilt on demand after a file load.
"""

from __future__ import annotations

import numpy as np

from . import cache


class LiveState:
    """Per-scene live state (module memory, rebuilt on demand after a file load)."""

    def __init__(self):
        self.hits: dict[str, np.ndarray] = {}  # capsule name -> penetrated triangles
        self.keys: dict[str, str] = {}  # capsule name -> staleness.capsule_key when checked
        self.stamp = ""  # level stamp the hits refer to
        self.pending: set[str] = set()  # capsules waiting for a deferred check
        self.last_move = 0.0
        self.on_release = False  # checks too slow: check on release
        self.message = ""
        self.last_check_s = 0.0
        self.recent: list[float] = []  # seconds per capsule of the last LIVE_TIMING_WINDOW checks
        self.checked = 0  # checks run (tests and the benchmark count them)
        self.after_undo = False  # an undo or redo ran: re-check every capsule once
        self.deferred_write = False  # a mesh in Edit Mode is waiting for its highlight
        self.union = np.empty(0, dtype=np.int64)  # all live hits, as last drawn


states: dict[str, LiveState] = {}  # scene name -> its live state


def state_of(scene) -> LiveState:
    st = states.get(scene.name)
    if st is None:
        st = states[scene.name] = LiveState()
    return st


def live_triangles(scene) -> np.ndarray:
    """Sorted unique level triangles penetrated by the live-checked capsules (may be empty)."""
    st = states.get(scene.name)
    if st is None or not st.hits or st.stamp != getattr(cache.peek(scene), "stamp", None):
        return np.empty(0, dtype=np.int64)
    return np.unique(np.concatenate(list(st.hits.values())))
