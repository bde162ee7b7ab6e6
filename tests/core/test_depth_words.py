"""Depths in words (issue 24, section 5): below 1 cm in millimetres ("3 mm deep", never
"0.00 m deep"), from 1 cm in metres, infinite as "no way out"; the capsule finding and the
stand finding use them."""

import math

import numpy as np
import pytest
from capsule_collision import core
from capsule_collision.core.checks import verdicts
from capsule_collision.core.checks.verdicts import format_depth


@pytest.mark.parametrize("metres, words", [
    (0.003, "3 mm"), (0.0004, "0.4 mm"), (0.0099, "10 mm"), (0.0, "0.0 mm"),
    (0.01, "0.010 m"), (0.4572, "0.457 m"), (12.0, "12.000 m"), (math.inf, "no way out")])
def test_format_depth(metres, words):
    assert format_depth(metres) == words


def test_a_capsule_3_mm_into_a_floor_says_3_mm():
    floor = core.TriangleMesh(np.array([[-5, -5, 0], [5, -5, 0], [0, 5, 0]], float),
                              np.array([[0, 1, 2]]))
    cap = core.Capsule.upright((0, 0, -0.003), 1.8, 0.35)
    check = verdicts.CapsuleCheck("Cap", cap, "CLEAR", (0.0, 0.0, -0.003))
    finding = verdicts.capsule_finding(check, verdicts.capsule_verdict(floor, cap))
    assert "deepest 3 mm" in finding.message and "deepest 0.00" not in finding.message
