"""Controller scenes shared by the controller, walk-through and audit tests: small numpy meshes,
metres, Z up, the character walks along +x from x = 0."""

import math

import numpy as np
from capsule_collision.core.controller.controller import CharacterController, ControllerSettings
from capsule_collision.core.mesh.triangle_mesh import TriangleMesh
from scenes import box, grid, merge  # re-exported: the tests' scene parts

RATES = (30, 60, 120)
S = ControllerSettings()


# ---------------------------------------------------------------- scene builders


def stairs_scene(rise, tread=0.3, n=5, x0=2.0, width=4.0, after=6.0):
    """Floor up to x0, then n solid steps rising along +x, then a landing."""
    parts = [grid(-3.0, x0, -width / 2, width / 2)]
    xe = x0 + n * tread + after
    for k in range(n):
        parts.append(box((x0 + k * tread, -width / 2, -1.0), (xe, width / 2, (k + 1) * rise)))
    return TriangleMesh(*merge(parts))


def ramp_scene(angle_deg, x0=2.0, height=1.5, width=4.0, after=4.0):
    """Floor, a ramp at angle_deg rising along +x to ``height``, a flat top."""
    a = math.radians(angle_deg)
    run = height / math.tan(a)
    xs = [-3.0, x0, x0 + run, x0 + run + after]
    zs = [0.0, 0.0, height, height]
    parts = []
    for i in range(3):
        v = [(xs[i], -width / 2, zs[i]), (xs[i + 1], -width / 2, zs[i + 1]),
             (xs[i + 1], width / 2, zs[i + 1]), (xs[i], width / 2, zs[i])]
        parts.append((np.array(v), np.array([[0, 1, 2], [0, 2, 3]])))
    return TriangleMesh(*merge(parts)), x0 + run + after


def corridor_scene(width, x0=2.0, length=4.0):
    half = width / 2
    return TriangleMesh(*merge([grid(-3, 10, -3, 3),
                                box((x0, half, 0), (x0 + length, half + 0.4, 3)),
                                box((x0, -half - 0.4, 0), (x0 + length, -half, 3))]))


def ceiling_scene(clearance, x0=2.0, length=3.0):
    return TriangleMesh(*merge([grid(-3, 10, -3, 3),
                                box((x0, -3, clearance), (x0 + length, 3, clearance + 0.2))]))


def gap_scene(gap, x0=2.0):
    return TriangleMesh(*merge([grid(-3, x0, -3, 3), grid(x0 + gap, 10, -3, 3)]))


def wall_scene(thickness=0.02, x0=3.0, height=3.0):
    return TriangleMesh(*merge([grid(-3, 10, -3, 3),
                                box((x0, -3, 0), (x0 + thickness, 3, height))]))


def flat_scene():
    return TriangleMesh(*grid(-5, 5, -5, 5))


def walk(ctrl, start, velocity, seconds, hz):
    """Move with a constant horizontal velocity (m/s) plus gravity; returns MoveResults."""
    s = ctrl.settings
    dt = 1.0 / hz
    p = ctrl.ground(start).position
    vz = 0.0
    out = []
    grounded = True
    for _ in range(int(round(seconds * hz))):
        vz = 0.0 if grounded else max(vz - s.gravity * dt, -s.max_fall_speed)
        r = ctrl.move(p, np.asarray(velocity, float) * dt + np.array([0, 0, vz * dt]))
        if r.ground_state == "in_air":  # actual vertical speed, never gained from a step
            vz = min((r.position[2] - p[2]) / dt, max(vz, 0.0))
        grounded = r.grounded
        p = r.position
        out.append(r)
    return out


def max_depth(mesh, s, foot):
    cap = CharacterController(mesh, s).capsule_at(foot)
    cs = mesh.capsule_contacts(cap)
    return max((c.depth for c in cs), default=0.0)
