"""Stair ramps: one solid ramp per stair flight (``stair_audit``), laid along its nosings, so
a character glides up instead of stepping (the collision engines ship for stairs).

For a flight with risers i = 0..K-1 (bottom to top), the ascent direction ``w`` is the mean of
the risers' horizontal normals reversed, the nosing of riser i is its top edge at tread height
h_i and distance s_i along ``w``. The ramp's surface is the line through the first and last
nosings, extended down to the floor in front of the first riser (h_bot = h_0 - rise_0): its
bottom edge lies on that floor and its top edge on the top landing's edge, both flush. Across
``w`` it spans the risers' width. The solid is the wedge under that surface down to h_bot
(6 corners, 8 triangles, convex: an engine's convex collider as it is). Its slope is
atan((h_top - h_0) / (s_top - s_0)); ``fits_slope`` says whether the character walks it
(``max_slope_deg``).

The flight's own faces are the level's triangles lying wholly inside the wedge (grown by
``RAMP_FLIGHT_TOL``): the risers, the treads and the stepped sides of the flight, which the
ramp replaces in collision. Landings reach out of the wedge and stay.

Frame and units: world space, metres, ``settings.up`` up.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from ..checks.audits import stair_audit
from ..checks.audits.common import settings_or_default
from .meshes import orient_outwards

RAMP_FLIGHT_TOL = 0.01  # metres: a face this close to the wedge still belongs to the flight

# the wedge's corners in (s, lateral, h) as (start|end of run, left|right, low|high)
_WEDGE_TRIANGLES = np.array([
    [0, 2, 4], [1, 5, 3],          # the two triangular sides
    [0, 4, 5], [0, 5, 1],          # the slope (bottom edge 0-1, top edge 4-5)
    [0, 1, 3], [0, 3, 2],          # the base
    [2, 3, 5], [2, 5, 4],          # the vertical back under the top edge
], dtype=np.int64)


class StairRamp(NamedTuple):
    """One flight's ramp.

    flight : the flight id in ``stair_audit``'s result; vertices : (6, 3) wedge corners
    (0/1 bottom edge, 2/3 base under the top edge, 4/5 top edge); triangles : (8, 3) outward;
    slope_deg : the ramp's slope; fits_slope : slope_deg <= the settings' max_slope_deg;
    bottom_height / top_height : metres along up of the two landings it is flush with;
    width, run : metres across and along; direction : (3,) unit horizontal ascent;
    flight_faces : (F,) int64 triangles of the level the ramp replaces (sorted);
    nosing_gap : metres, the largest height of a nosing above or below the ramp's surface
    (0 for even steps).
    """

    flight: int
    vertices: np.ndarray
    triangles: np.ndarray
    slope_deg: float
    fits_slope: bool
    bottom_height: float
    top_height: float
    width: float
    run: float
    direction: np.ndarray
    flight_faces: np.ndarray
    nosing_gap: float


def _frame(mesh, rows, stairs, u):
    """Unit ascent ``w`` and lateral ``l`` of a flight's risers (w, l, u right-handed)."""
    n = mesh.normals[stairs.riser[rows]]
    nh = n - np.outer(n @ u, u)
    w = -nh.sum(axis=0)
    w /= np.linalg.norm(w)
    return w, np.cross(u, w)


def _flight_faces(mesh, basis, lo, hi, s_bot, slope_tan):
    """Triangles whose three corners lie inside the wedge grown by RAMP_FLIGHT_TOL."""
    c = mesh.vertices[mesh.triangles] @ basis.T  # (T, 3, 3) in (s, lateral, h)
    tol = RAMP_FLIGHT_TOL
    surface = lo[2] + np.clip(c[..., 0] - s_bot, 0.0, None) * slope_tan
    inside = ((c[..., 0] >= lo[0] - tol) & (c[..., 0] <= hi[0] + tol)
              & (c[..., 1] >= lo[1] - tol) & (c[..., 1] <= hi[1] + tol)
              & (c[..., 2] >= lo[2] - tol) & (c[..., 2] <= np.minimum(surface, hi[2]) + tol))
    return np.flatnonzero(inside.all(axis=1)).astype(np.int64)


def _ramp(mesh, stairs, flight, s):
    u = s.up_vector
    rows = np.flatnonzero(stairs.flight == flight)
    w, lat = _frame(mesh, rows, stairs, u)
    basis = np.array([w, lat, u])
    steps = np.unique(stairs.step[rows])
    first = [rows[stairs.step[rows] == k][0] for k in steps]
    pos = stairs.position[first]
    order = np.argsort(pos @ u)
    pos, rise = pos[order], stairs.rise[first][order]
    s_n, h_n = pos @ w, pos @ u
    h_bot, h_top = float(h_n[0] - rise[0]), float(h_n[-1])
    slope_tan = (h_top - h_n[0]) / (s_n[-1] - s_n[0])
    s_bot = float(s_n[0] - rise[0] / slope_tan)
    s_top = float(s_n[-1])
    corners = mesh.vertices[mesh.triangles[stairs.riser[rows]]].reshape(-1, 3) @ lat
    l_lo, l_hi = float(corners.min()), float(corners.max())
    pts = np.array([[s_bot, l_lo, h_bot], [s_bot, l_hi, h_bot],
                    [s_top, l_lo, h_bot], [s_top, l_hi, h_bot],
                    [s_top, l_lo, h_top], [s_top, l_hi, h_top]])
    verts = pts @ basis
    lo, hi = np.array([s_bot, l_lo, h_bot]), np.array([s_top, l_hi, h_top])
    slope = math.degrees(math.atan(slope_tan))
    gap = float(np.abs(h_n - (h_bot + (s_n - s_bot) * slope_tan)).max())
    return StairRamp(int(flight), verts, orient_outwards(verts, _WEDGE_TRIANGLES), slope,
                     bool(slope <= s.max_slope_deg), h_bot, h_top, l_hi - l_lo, s_top - s_bot,
                     w, _flight_faces(mesh, basis, lo, hi, s_bot, slope_tan), gap)


def stair_ramps(mesh, settings=None, stairs=None) -> list[StairRamp]:
    """One ``StairRamp`` per flight of ``stair_audit(mesh, settings)`` (or of ``stairs``, a
    result of it on this mesh), in flight order; see the module docstring."""
    s = settings_or_default(settings)
    result = stairs if stairs is not None else stair_audit(mesh, s)
    return [_ramp(mesh, result, f, s) for f in np.unique(result.flight).tolist()]
