"""Results of a walk-through: ``WalkEvent``, ``WalkReport``, ``FrameRateReport`` (plain data
with ``to_dict`` for JSON). The event kinds and their values are described in
core/walk/walkthrough.py.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..controller.settings import GROUND_STATES


@dataclass(frozen=True)
class EventKind:
    """What one walk event kind means, in the one place every front end reads it from.

    kind : the event's name; value_name : what ``WalkEvent.value`` measures ("rise", "angle",
    ...; None when the value is not shown); unit : the value's unit in JSON ("m", "deg", "s";
    None without a value); symbol : the unit as a designer reads it ("m", "°", "s");
    word : the short word of a label ("step", "slope", ...).
    """

    kind: str
    value_name: str | None
    unit: str | None
    symbol: str | None
    word: str

    def label(self, value=None) -> str:
        """``"step 0.45 m"``, ``"slope 52°"``; the word alone without a finite value."""
        if self.unit is None or value is None or not math.isfinite(float(value)):
            return self.word
        digits = 0 if self.unit == "deg" else 2
        space = "" if self.symbol == "°" else " "
        return f"{self.word} {float(value):.{digits}f}{space}{self.symbol}"


EVENTS = {e.kind: e for e in (
    EventKind("blocked", None, None, None, "blocked"),
    EventKind("step_too_high", "rise", "m", "m", "step"),
    EventKind("slope_too_steep", "angle", "deg", "°", "slope"),
    EventKind("fell", "drop", "m", "m", "fall"),
    EventKind("fell_out_of_level", "drop", "m", "m", "out of level"),
    EventKind("ceiling_too_low", "clearance", "m", "m", "ceiling"),
    EventKind("stuck", "stalled", "s", "s", "stuck"),
    EventKind("reached_goal", "distance", "m", "m", "goal"),
)}
EVENT_KINDS = tuple(EVENTS)


def event_label(kind: str, value=None) -> str:
    """The viewport's and the console's label of an event: ``"step 0.45 m"``."""
    return EVENTS[kind].label(value)


def _json_float(x):
    if x is None:
        return None
    x = float(x)
    return x if math.isfinite(x) else None


@dataclass(frozen=True)
class WalkEvent:
    """One verdict of a walk-through.

    kind : one of EVENT_KINDS; time : seconds since the start; position : (3,) foot, metres;
    value : float or None (unit depends on kind, see the module docstring);
    triangle : int mesh triangle that caused it, -1 if none.
    """

    kind: str
    time: float
    position: tuple
    value: float | None
    triangle: int = -1

    def to_dict(self) -> dict:
        return {"kind": self.kind, "time": _json_float(self.time),
                "position": [float(x) for x in self.position],
                "value": _json_float(self.value), "triangle": int(self.triangle)}


@dataclass(eq=False)
class WalkReport:
    """Result of one walk-through.

    trace : (N, 3) foot positions, trace[0] the start (path[0] settled onto the floor);
    grounded : (N,) bool (ground_state == on_ground); ground_state : (N,) int8 codes into
    GROUND_STATES; ground_normal : (N, 3) unit (zeros in the air); events : list[WalkEvent]
    in time order; reached_goal : bool (only ever standing on ground at the goal); dt :
    seconds per frame; duration : seconds walked; stepped : (N,) bool, the frame climbed a
    step; ended_airborne : bool, the last frame is in the air (the walk ended mid-fall: out
    of the level, out of time).
    """

    trace: np.ndarray
    grounded: np.ndarray
    events: list
    reached_goal: bool
    ground_normal: Any = None  # (N, 3) ndarray, filled by the walker
    ground_state: Any = None  # (N,) int8 ndarray
    dt: float = 1.0 / 60.0
    duration: float = 0.0
    stepped: Any = field(default=None, repr=False)  # (N,) bool ndarray
    ended_airborne: bool = False

    def kinds(self) -> list:
        """Event kinds in order of first occurrence (no repeats)."""
        out = []
        for e in self.events:
            if e.kind not in out:
                out.append(e.kind)
        return out

    def first(self, kind: str):
        """The first event of ``kind``, or None."""
        for e in self.events:
            if e.kind == kind:
                return e
        return None

    def trace_bytes(self) -> bytes:
        """Canonical bytes of the trace (positions, grounded, normals) for determinism checks."""
        return (np.ascontiguousarray(self.trace).tobytes()
                + np.ascontiguousarray(self.grounded).tobytes()
                + np.ascontiguousarray(self.ground_normal).tobytes())

    def to_dict(self, include_trace: bool = True) -> dict:
        d = {
            "reached_goal": bool(self.reached_goal),
            "events": [e.to_dict() for e in self.events],
            "dt": float(self.dt),
            "duration": float(self.duration),
            "steps": int(len(self.trace) - 1),
            "ended_airborne": bool(self.ended_airborne),
        }
        if include_trace:
            d["trace"] = np.round(self.trace, 6).tolist()
            d["grounded"] = [bool(g) for g in self.grounded]
            d["ground_state"] = [GROUND_STATES[int(s)] for s in self.ground_state]
            d["ground_normal"] = np.round(self.ground_normal, 6).tolist()
        return d


@dataclass(eq=False)
class FrameRateReport:
    """The same walk at several frame rates and where the verdicts differ.

    rates : tuple of Hz; reports : {Hz: WalkReport}; verdicts : {Hz: {"reached_goal",
    "kinds"}}; differences : list of dicts ({"what", "kind", "present_at", "absent_at",
    "positions"}); consistent : bool (no differences).
    """

    rates: tuple
    reports: dict
    verdicts: dict
    differences: list
    consistent: bool

    def to_dict(self) -> dict:
        return {
            "rates": list(self.rates),
            "consistent": bool(self.consistent),
            "verdicts": {str(k): v for k, v in self.verdicts.items()},
            "differences": self.differences,
            "reports": {str(k): r.to_dict(include_trace=False) for k, r in self.reports.items()},
        }


