"""Stair flights a jumping character climbs (issue 24, "findings a designer acts on"): with a
jump in the settings, a flight whose risers are all within ``jump_height`` and whose tops a
spawn reaches is an info "climbed by jumping: riser 0.80 m > step height 0.35 m", not a
warning; without a jump, with risers above it, or with its tops out of reach it stays a
warning. On the shipped maps (Quake's player jumps 1.157 m) the 0.81 m flights of
am_lavaarena (4) and oa_bases7 (2) are such flights (docs/decisions.md "Stairs a jump
climbs")."""

import numpy as np
import pytest
from audit_scenes import staircase
from capsule_collision.core import ControllerSettings, TriangleMesh, reachability, stair_audit
from capsule_collision.core.checks.findings import JUMPED, audit_findings
from capsule_collision.core.checks.gate import apply_severity
from scenes import box, grid, merge

SPAWN = np.array([[-2.0, 0.0, 0.0]])
RISE = 0.8  # metres: three risers, 1 m treads, a 2 m landing


def _flight(*more):
    parts = [grid(-4.0, 10.0, -3.0, 3.0)] + staircase(0.0, -1.0, 1.0, [RISE] * 3,
                                                      [1.0, 1.0, 2.0])
    return TriangleMesh(*merge(parts + list(more)))


def _stairs(mesh, settings, spawns=SPAWN):
    reach = reachability(mesh, spawns, settings) if spawns is not None else None
    return audit_findings("stairs", stair_audit(mesh, settings), settings, reach)


@pytest.mark.parametrize("jump, severity, got", [
    (1.0, "info", JUMPED),  # 0.8 m risers within the jump, the top reached
    (0.7, "warning", "too_high"),  # the jump is lower than the riser (the flood may still
    # reach the top by a jump and a step: a walking-stair problem all the same)
    (0.0, "warning", "too_high"),  # no jump: a stair the character cannot walk up
])
def test_a_flight_of_0_8_m_risers_is_an_info_only_within_the_jump(jump, severity, got):
    s = ControllerSettings(jump_height=jump)
    (flight,) = _stairs(_flight(), s)
    assert (flight.finding.severity, flight.finding.got) == (severity, got)
    assert flight.value == pytest.approx(RISE)
    assert flight.triangles.size >= 3  # every riser of the flight, to select
    if got == JUMPED:
        assert "climbed by jumping: riser 0.80 m > step height 0.35 m" in flight.finding.message


def test_just_inside_and_just_outside_the_jump_height():
    """The riser against ``jump_height``: 0.999 x the riser is a warning, 1.001 x an info."""
    mesh = _flight()
    low, high = ControllerSettings(jump_height=0.999 * RISE), ControllerSettings(
        jump_height=1.001 * RISE)
    assert [x.finding.severity for x in _stairs(mesh, low)] == ["warning"]
    assert [x.finding.severity for x in _stairs(mesh, high)] == ["info"]


def test_a_flight_whose_top_no_spawn_reaches_stays_a_warning():
    """A jump high enough, but a 1.9 m ceiling over the floor in front of and beside the
    flight leaves no room to jump (the character is 1.8 m): nobody reaches the treads, so
    nothing says a jump climbs it; and without spawns (no flood) it is a warning too."""
    s = ControllerSettings(jump_height=1.0)
    lid = [box((-4.0, -1.0, 1.9), (0.0, 1.0, 2.1)), box((-4.0, -3.0, 1.9), (10.0, -1.0, 2.1)),
           box((-4.0, 1.0, 1.9), (10.0, 3.0, 2.1))]
    (flight,) = _stairs(_flight(*lid), s)
    assert (flight.finding.severity, flight.finding.got) == ("warning", "too_high")
    (flight,) = _stairs(_flight(), s, spawns=None)
    assert (flight.finding.severity, flight.finding.got) == ("warning", "too_high")


def test_a_severity_override_of_stairs_applies_to_the_jumped_flight_too():
    """A studio's ``severity`` for stairs sets every stair finding, the jumped one included
    (only the infos counting problems stay infos)."""
    (flight,) = _stairs(_flight(), ControllerSettings(jump_height=1.0))
    rows = [dict(flight.finding.to_dict())]
    apply_severity(rows, {"stairs": "warning"})
    assert rows[0]["severity"] == "warning"
