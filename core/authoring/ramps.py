"""Stair ramps: one solid ramp per stair flight (``stair_audit``), laid along its nosings, so
a character glides up instead of stepping (the collision engines ship for stairs).

For a flight with risers i = 0..K-1 (bottom to top), the ascent direction ``w`` is the mean of
the risers' horizontal normals reversed, the nosing of riser i is its top edge at tread height
h_i and distance s_i along ``w``. A flight breaks at its landings (a tread deeper than
``RAMP_OUTLIER_RATIO`` median treads) and at walls in it (a riser that many median rises
high: a ledge, left as it is): one ramp per run of steps between them. The ramp's
surface is the line through the run's first and last nosings (one riser: the flight's median
slope), extended down to the floor in front of the first riser (h_bot = h_0 - rise_0): its
bottom edge lies on that floor and its top edge on the top landing's edge, both flush. Where
no floor is there at h_bot (a short landing in front, a drop), the ramp starts at the first
riser's foot instead: steeper, below the lower nosings by up to one rise (``nosing_gap``), and
still flush with both landings. Across ``w`` it spans the risers' width. The solid is the
wedge under that surface down to h_bot (6 corners, 8 triangles, convex: an engine's convex
collider as it is). ``fits_slope`` says whether the character walks its slope
(``max_slope_deg``); the add-on keeps the steps of a flight whose ramp is too steep.

The flight's own faces are the level's triangles lying wholly inside the wedge (grown by
``RAMP_FLIGHT_TOL``): the risers, the treads and the stepped sides of the flight, which the
ramp replaces in collision. Landings reach out of the wedge and stay. A tread or riser wider
than the flight (one face across the stairs and the floor beside them) is cut at the ramp's
sides: the part across the flight goes, the parts beside it stay (``cut_faces``, ``pieces``).

Frame and units: world space, metres, ``settings.up`` up.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from ..checks.audits import stair_audit
from ..checks.audits.common import settings_or_default
from .clip import clip_triangles
from .meshes import orient_outwards

RAMP_FLIGHT_TOL = 0.01  # metres: a face this close to the wedge still belongs to the flight
RAMP_OUTLIER_RATIO = 1.5  # a tread (riser) this many median treads (rises) deep (high) is a
# landing (a wall): the ramp breaks there
RAMP_FLUSH_TOL = 0.02  # metres: floor this close to a ramp edge's height is flush with it
RAMP_PROBE_LIFT = 0.1  # metres: the floor probes under a ramp's bottom edge start this high

# the wedge's corners in (s, lateral, h) as (start|end of run, left|right, low|high)
_WEDGE_TRIANGLES = np.array([
    [0, 2, 4], [1, 5, 3],          # the two triangular sides
    [0, 4, 5], [0, 5, 1],          # the slope (bottom edge 0-1, top edge 4-5)
    [0, 1, 3], [0, 3, 2],          # the base
    [2, 3, 5], [2, 5, 4],          # the vertical back under the top edge
], dtype=np.int64)


class StairRamp(NamedTuple):
    """One flight's ramp.

    flight : the flight id in ``stair_audit``'s result (a flight broken by landings gives
    several ramps); vertices : (6, 3) wedge corners
    (0/1 bottom edge, 2/3 base under the top edge, 4/5 top edge); triangles : (8, 3) outward;
    slope_deg : the ramp's slope; fits_slope : slope_deg <= the settings' max_slope_deg;
    bottom_height / top_height : metres along up of the two landings it is flush with;
    width, run : metres across and along; direction : (3,) unit horizontal ascent;
    flight_faces : (F,) int64 triangles of the level the ramp replaces (sorted);
    nosing_gap : metres, the largest height of a nosing above or below the ramp's surface
    (0 for even steps); cut_faces : (C,) int64 triangles over the flight that reach out of
    the ramp's sides (a tread wider than the stairs): replace each by its ``pieces``
    (P, 3, 3) world points, outward winding kept) outside the sides, ``piece_face`` (P,)
    the cut triangle of each.
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
    cut_faces: np.ndarray
    pieces: np.ndarray
    piece_face: np.ndarray


def _frame(mesh, rows, stairs, u):
    """Unit ascent ``w`` and lateral ``l`` of a flight's risers (w, l, u right-handed)."""
    n = mesh.normals[stairs.riser[rows]]
    nh = n - np.outer(n @ u, u)
    w = -nh.sum(axis=0)
    w /= np.linalg.norm(w)
    return w, np.cross(u, w)


def _flight_faces(mesh, basis, lo, hi, s_bot, slope_tan):
    """(faces, cut, pieces, piece_face): the triangles whose three corners lie inside the
    wedge grown by RAMP_FLIGHT_TOL; the triangles inside it along and up but reaching out of
    its sides (a tread or riser wider than the flight) with the parts of them outside the
    sides (pieces (P, 3, 3) world points, piece_face (P,) the triangle each comes from)."""
    c = mesh.vertices[mesh.triangles] @ basis.T  # (T, 3, 3) in (s, lateral, h)
    tol = RAMP_FLIGHT_TOL
    surface = lo[2] + np.clip(c[..., 0] - s_bot, 0.0, None) * slope_tan
    profile = ((c[..., 0] >= lo[0] - tol) & (c[..., 0] <= hi[0] + tol)
               & (c[..., 2] >= lo[2] - tol) & (c[..., 2] <= np.minimum(surface, hi[2]) + tol))
    across = (c[..., 1] >= lo[1] - tol) & (c[..., 1] <= hi[1] + tol)
    in_profile = profile.all(axis=1)
    faces = np.flatnonzero(in_profile & across.all(axis=1)).astype(np.int64)
    lat = c[..., 1]
    cut = np.flatnonzero(in_profile & ~across.all(axis=1)
                         & (lat.max(axis=1) > lo[1]) & (lat.min(axis=1) < hi[1]))
    pts = mesh.vertices[mesh.triangles[cut]]
    right, r_src = clip_triangles(pts, lat[cut] - hi[1])
    left, l_src = clip_triangles(pts, lo[1] - lat[cut])
    pieces = np.concatenate([right, left])
    return faces, cut.astype(np.int64), pieces, cut[np.concatenate([r_src, l_src])]


def _steps(mesh, stairs, rows, u, w):
    """Per riser of a flight, bottom to top: nosing (s along ``w``, height), rise, tread
    depth behind it (inf for the top riser)."""
    steps = np.unique(stairs.step[rows])
    first = np.array([rows[stairs.step[rows] == k][0] for k in steps])
    pos = stairs.position[first]
    order = np.argsort(pos @ u)
    first = first[order]
    return pos[order] @ w, pos[order] @ u, stairs.rise[first], stairs.tread_depth[first]


def _segments(depth, rise):
    """(start, end) riser ranges of a flight split at its landings (treads deeper than
    RAMP_OUTLIER_RATIO median treads) and its walls (risers higher than RAMP_OUTLIER_RATIO
    median rises: a ledge, left as it is), and the median tread depth."""
    inner = depth[:-1]
    going = float(np.median(inner)) if inner.size else np.inf
    landing = np.append(inner > RAMP_OUTLIER_RATIO * going, True)
    wall = rise > RAMP_OUTLIER_RATIO * float(np.median(rise))
    segments, start = [], None
    for i in range(len(depth)):  # the risers of one flight (a handful)
        if wall[i]:
            if start is not None:
                segments.append((start, i - 1))
            start = None
            continue
        start = i if start is None else start
        if landing[i]:
            segments.append((start, i))
            start = None
    return segments, going


def _supported(mesh, basis, s_at, lateral, height) -> bool:
    """Floor at ``height`` (within RAMP_FLUSH_TOL) under three points across the line
    s = ``s_at`` (the ramp's bottom edge)."""
    lat = lateral[0] + (lateral[1] - lateral[0]) * np.array([0.1, 0.5, 0.9])
    pts = np.column_stack([np.full(3, s_at), lat, np.full(3, height + RAMP_PROBE_LIFT)])
    origins = pts @ basis
    down = np.tile(-basis[2], (3, 1))
    hits = mesh.raycast_many(origins, down, RAMP_PROBE_LIFT + RAMP_FLUSH_TOL)
    return bool(np.all((hits.triangle >= 0)
                       & (np.abs(hits.time - RAMP_PROBE_LIFT) <= RAMP_FLUSH_TOL)))


def _ramp(mesh, basis, lateral, nosings, going, flight, s):
    """The ramp over risers ``nosings`` = (s, h, rise) arrays of one segment, or None when
    no ramp can be flush with both landings (one riser, and no floor in front)."""
    s_n, h_n, rise = nosings
    h_bot, h_top, s_top = float(h_n[0] - rise[0]), float(h_n[-1]), float(s_n[-1])
    if len(s_n) >= 2:
        slope_tan = (h_top - h_n[0]) / (s_top - s_n[0])
    else:
        slope_tan = rise[0] / going if np.isfinite(going) else 0.0
    if slope_tan <= 0:
        return None
    s_bot = float(s_n[0] - rise[0] / slope_tan)  # the nosing line meets the floor in front
    if not _supported(mesh, basis, s_bot + RAMP_FLUSH_TOL, lateral, h_bot):
        if len(s_n) < 2:
            return None
        s_bot = float(s_n[0])  # no floor that far out: from the first riser's foot
        slope_tan = (h_top - h_bot) / (s_top - s_bot)
    pts = np.array([[s_bot, lateral[0], h_bot], [s_bot, lateral[1], h_bot],
                    [s_top, lateral[0], h_bot], [s_top, lateral[1], h_bot],
                    [s_top, lateral[0], h_top], [s_top, lateral[1], h_top]])
    verts = pts @ basis
    lo, hi = pts.min(axis=0), pts.max(axis=0)
    slope = math.degrees(math.atan(slope_tan))
    gap = float(np.abs(h_n - (h_bot + (s_n - s_bot) * slope_tan)).max())
    faces, cut, pieces, piece_face = _flight_faces(mesh, basis, lo, hi, s_bot, slope_tan)
    return StairRamp(int(flight), verts, orient_outwards(verts, _WEDGE_TRIANGLES), slope,
                     bool(slope <= s.max_slope_deg), h_bot, h_top, lateral[1] - lateral[0],
                     s_top - s_bot, basis[0].copy(), faces, gap, cut, pieces, piece_face)


def _flight_ramps(mesh, stairs, flight, s) -> list[StairRamp]:
    u = s.up_vector
    rows = np.flatnonzero(stairs.flight == flight)
    w, lat = _frame(mesh, rows, stairs, u)
    basis = np.array([w, lat, u])
    s_n, h_n, rise, depth = _steps(mesh, stairs, rows, u, w)
    corners = mesh.vertices[mesh.triangles[stairs.riser[rows]]].reshape(-1, 3) @ lat
    lateral = (float(corners.min()), float(corners.max()))
    segments, going = _segments(depth, rise)
    out = []
    for a, b in segments:
        cut = slice(a, b + 1)
        ramp = _ramp(mesh, basis, lateral, (s_n[cut], h_n[cut], rise[cut]), going, flight, s)
        if ramp is not None:
            out.append(ramp)
    return out


def stair_ramps(mesh, settings=None, stairs=None) -> list[StairRamp]:
    """One ``StairRamp`` per flight of ``stair_audit(mesh, settings)`` (or of ``stairs``, a
    result of it on this mesh), in flight order; see the module docstring."""
    s = settings_or_default(settings)
    result = stairs if stairs is not None else stair_audit(mesh, s)
    return [ramp for f in np.unique(result.flight).tolist()
            for ramp in _flight_ramps(mesh, result, f, s)]
