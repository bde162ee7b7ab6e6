"""Severities: how much each kind of finding matters, one table for the panel and the CLI.

A finding is anything a check says a designer should look at: an expectation that did not
hold (a capsule, a path, a reachability target), an audit's problem rows, a level warning. Each
kind has a default severity:

- ``error``: the level does what the designer said it must not (a capsule expected clear
  penetrates, a route expected to reach its goal does not, a target expected reachable is not).
  A CI gate fails on these by default (``levelcheck --fail-on error``).
- ``warning``: probably a level bug, never a broken promise: audit problems a character meets
  (cannot stand, low headroom, a riser above the step height), islands and traps, a verdict
  that changes with the frame rate, a level that looks rotated or in centimetres, a level with
  nothing to check. ``--fail-on warning`` fails on these too.
- ``info``: worth seeing, not worth failing: ledges over drops (many are deliberate), the
  events of a walk other than the one that broke its expectation.

What is *not* a finding is ``PASSED`` (a capsule clear as expected, a walk that met its
expectation): the panel counts those too ("N errors, M warnings, K passed").

``SEVERITIES`` is ordered most severe first; ``rank`` sorts findings so (next/previous finding
in the panel, the console, the report).

Minimum areas (``min_areas``): an island, a cramped or low-headroom region or a
render-vs-collision difference smaller than the character's footprint (pi x radius^2:
0.456 m² for Quake's player, 0.385 m² for the default 0.35 m) is counted in one info per
check (per kind of difference), not a warning each (``gate.apply_min_area``,
``diff_report.split_small``).
Smaller floor holds the capsule at a few foot points at most: no room to move, nothing a
player uses or is stopped by (slivers between brushes, the tops of trims). A sidecar's
``min_area`` or ``--min-area CHECK=M2`` sets another (0 lists every one); docs/decisions.md
"Minimum areas".
"""

from __future__ import annotations

import math

ERROR = "error"
WARNING = "warning"
INFO = "info"
SEVERITIES = (ERROR, WARNING, INFO)  # most severe first
PASSED = "passed"  # a check's result that is no finding (never a severity of a finding)

# Finding kinds and their default severity (the README's table is generated from this one).
DEFAULT_SEVERITY = {
    "capsule": ERROR,  # a capsule's expectation (clear / penetrating) did not hold
    "walk": ERROR,  # a path's expectation (reached_goal / an event) did not hold
    "penetration": WARNING,  # a capsule with no expectation penetrates (the panel's rows)
    "route": WARNING,  # a path with no expectation does not reach its goal (the panel's rows)
    "walk_event": INFO,  # an event on a walk that is not what broke its expectation
    "target": ERROR,  # a reachability target's expectation did not hold
    "frame_rate": WARNING,  # a walk's verdict differs between 30, 60 and 120 Hz
    "stand": WARNING,  # walkable floor where the character cannot stand (cramped)
    "headroom": WARNING,  # walkable floor under a ceiling lower than the character
    "stairs": WARNING,  # a flight's riser above the step height or a tread too shallow
    "islands": WARNING,  # standable floor no spawn reaches
    "traps": WARNING,  # floor a spawn reaches but cannot leave (pits, one-way drops)
    "spawns": WARNING,  # a spawn inside a wall or on no floor (one that falls: an info)
    "ledges": INFO,  # walkable floor at the edge of a drop higher than the step height
    "level": WARNING,  # the level itself: looks rotated, centimetres, nothing to check
    # render against collision (core.collision_diff): each problem carries its own severity
    # (holes errors; walls and reach warnings; floating / sunk feet infos)
    "collision_diff": WARNING,
}
FINDING_KINDS = tuple(DEFAULT_SEVERITY)


def parse_severity(value, field: str = "severity") -> str:
    """``value`` as one of SEVERITIES (case-insensitive); ValueError naming ``field``."""
    word = value.strip().lower() if isinstance(value, str) else value
    if word not in SEVERITIES:
        raise ValueError(f"{field}: expected one of {', '.join(SEVERITIES)}, got {value!r}")
    return word


def severity_of(kind: str, overrides=None) -> str:
    """The severity of a finding of ``kind``: ``overrides[kind]`` when given, else the
    default. ValueError for an unknown kind."""
    if kind not in DEFAULT_SEVERITY:
        raise ValueError(f"unknown finding kind {kind!r}; known: {', '.join(FINDING_KINDS)}")
    if overrides and kind in overrides:
        return parse_severity(overrides[kind], f"severity of {kind}")
    return DEFAULT_SEVERITY[kind]


def rank(severity: str) -> int:
    """0 for errors, 1 for warnings, 2 for infos: the sort key of findings."""
    return SEVERITIES.index(parse_severity(severity))


def fails(severity: str, fail_on: str = ERROR) -> bool:
    """Whether a finding of ``severity`` fails a gate that fails on ``fail_on`` and above
    (``fail_on`` "error": errors only; "warning": errors and warnings; "info": every
    finding)."""
    return rank(severity) <= rank(fail_on)


def count_by_severity(severities) -> dict:
    """``{"error": n, "warning": m, "info": k}`` for an iterable of severities."""
    counts = dict.fromkeys(SEVERITIES, 0)
    for s in severities:
        counts[parse_severity(s)] += 1
    return counts


# Footprints of the character (pi x radius^2) below which an island or a cramped region is
# counted in one info (module docstring). On the shipped maps (docs/benchmarks.md) the
# islands in view are either single cells (0.04-0.16 m²) or 0.84 m² and more, the cramped
# regions on reached floor 0.03-0.40 m² (slots and corners between brushes) or 1.7 m² and
# more: one footprint (0.456 m²) lies in both gaps (test_findings::test_min_area_defaults_*).
# Low-headroom regions too: 13 of oa_koth1's 18 are 0.015-0.43 m² (floor running a few cm
# under a brush), and render-vs-collision differences: 31 of am_lavaarena's 32 invisible
# walls are 0.04-0.15 m² (render floor 5 cm into clip); docs/decisions.md "Minimum areas".
MIN_AREA_FOOTPRINTS = {"islands": 1.0, "stand": 1.0, "headroom": 1.0, "collision_diff": 1.0}


def min_areas(settings=None, overrides=None) -> dict:
    """``{check: m^2}``: the default minimum area of each check of MIN_AREA_FOOTPRINTS, in
    footprints of ``settings.radius`` (metres; no default without settings) rounded to
    0.001 m² (the figure the info names), with ``overrides`` (a parsed ``min_area``:
    ``gate.parse_min_area``) winning."""
    radius = getattr(settings, "radius", None)
    out = {} if radius is None else {
        check: round(n * math.pi * float(radius) ** 2, 3)
        for check, n in MIN_AREA_FOOTPRINTS.items()}
    out.update(overrides or {})
    return out
