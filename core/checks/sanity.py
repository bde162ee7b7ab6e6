"""Sanity warnings about a whole level: is it the right way up, and is it in metres?

Every verdict of ``core`` assumes metres and a known ``up`` (docs/decisions.md). A level exported
with another up axis (Y-up read as Z-up) or in centimetres gives verdicts that are silently
wrong: no floor is walkable, or every step is 100 times too high. ``level_warnings`` says so
in words, once, so that the extension and the CLI can show it before any verdict.

Checks (thresholds in core/constants.py, each with its reason):
* ``up_axis``: the level looks rotated, its floors facing another coordinate axis. Either
  (a) the area of faces that would be walkable if another axis (+-X, +-Y, +-Z, except ``up``)
  were up exceeds SANITY_UP_AREA_RATIO times the area walkable along ``up`` and is at least
  SANITY_UP_MIN_FRACTION of the level's area (open levels: terrain, courses), or (b) the
  level is flat across another axis (its extent there at most SANITY_FLAT_RATIO of its extent
  along ``up``) and has at least as much floor-or-ceiling area across that axis as across
  ``up``, at least SANITY_UP_MIN_FRACTION of its area (brush-built maps, whose walls have two
  sides and outweigh the floors facing any one way). Which way the floors face: the side with
  more sloped walkable area (ramps, terrain), else ``likely_up`` (the caller's guess, e.g.
  where an importer put a Z-up file's up), else the side with more flat area. Or (c) its
  risers (wall planes 5 cm to a step high: stairs, kerbs, lips) stand across another axis,
  SANITY_RISER_RATIO times their area across up (brush-built maps on their side, whose boxes
  the area rules see balanced every way); the floors' side is then ``likely_up``'s first. The
  warning's
  ``axis`` names it ("-Y"); a Z-up OBJ read as Y-up faces -Y, a Y-up one read as Z-up +Y.
* ``centimetres``: the level's walls are mostly taller than SANITY_WALL_HEIGHTS character
  heights (the area-weighted median height of its walls, a wall being the wall faces of one
  plane: a 180-unit door, a 300-unit storey), or its largest extent exceeds
  SANITY_MAX_EXTENT metres (no game level is that large; 100 km is a 1 km level in
  centimetres).
* ``too_small``: the level is under SANITY_MIN_EXTENT_HEIGHTS character heights across and
  its tallest wall under SANITY_MIN_WALL_HEIGHTS of one (a metre level in a centimetre
  scene, 100 times too small).
A level in metres with ``up`` right gets no warning.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ..constants import (
    SANITY_FLAT_RATIO,
    SANITY_MAX_EXTENT,
    SANITY_MIN_EXTENT_HEIGHTS,
    SANITY_MIN_WALL_HEIGHTS,
    SANITY_RISER_ACROSS,
    SANITY_RISER_MIN_FRACTION,
    SANITY_RISER_MIN_M,
    SANITY_RISER_RATIO,
    SANITY_UP_AREA_RATIO,
    SANITY_UP_MIN_FRACTION,
    SANITY_WALL_HEIGHTS,
    WALL_TOLERANCE_DEG,
)
from ..geometry.validate import as_point

__all__ = ["SanityWarning", "level_warnings"]

_AXIS_NAMES = ("+X", "-X", "+Y", "-Y", "+Z", "-Z")
_AXES = np.array([[1, 0, 0], [-1, 0, 0], [0, 1, 0], [0, -1, 0], [0, 0, 1], [0, 0, -1]], float)
# Fallbacks when no settings are given: ControllerSettings' defaults (metres, degrees).
_DEFAULT_HEIGHT = 1.8
_DEFAULT_SLOPE_DEG = 45.0
_DEFAULT_STEP = 0.35


class SanityWarning(NamedTuple):
    """One warning about a whole level: ``code`` ("up_axis", "centimetres" or "too_small"),
    ``message`` a sentence for a designer (what looks wrong, the evidence, what to do);
    ``axis``: for "up_axis" the direction the level's floors face ("+X" ... "-Z"), else
    None."""

    code: str
    message: str
    axis: str | None = None


def _face_data(mesh):
    """Unit normals (M, 3) (zero for zero-area faces and slivers), areas (M,) and the corners
    (M, 3, 3) of ``mesh``'s triangles."""
    corners = mesh.vertices[mesh.triangles]
    return np.asarray(mesh.normals), np.asarray(mesh.areas), corners


def _floor_side(normals, areas, axis, cos_walk, likely_up) -> int:
    """+1 when the floors across ``axis`` (a unit axis) face +axis, -1 when -axis."""
    d = normals @ axis
    flat = np.cos(np.radians(1.0))
    sloped = [float(areas[(s * d >= cos_walk) & (s * d < flat)].sum()) for s in (1, -1)]
    if max(sloped) > 1.25 * min(sloped) and max(sloped) > 0.0:
        return 1 if sloped[0] > sloped[1] else -1
    if likely_up is not None and abs(float(likely_up @ axis)) > 0.9:
        return 1 if float(likely_up @ axis) > 0 else -1
    level = [float(areas[s * d >= cos_walk].sum()) for s in (1, -1)]
    return 1 if level[0] >= level[1] else -1


def _rotated(normals, areas, corners, up, cos_walk, likely_up, step):
    """(axis name, evidence) when the level's floors face another axis than ``up``."""
    total = float(areas.sum())
    walk_up = float(areas[normals @ up >= cos_walk].sum())
    best, best_area = None, 0.0
    for name, axis in zip(_AXIS_NAMES, _AXES, strict=True):
        if axis @ up >= cos_walk:  # up itself (or within the slope limit of it)
            continue
        area = float(areas[normals @ axis >= cos_walk].sum())
        if area > best_area:
            best, best_area = name, area
    if (best is not None and best_area >= SANITY_UP_MIN_FRACTION * total
            and best_area > SANITY_UP_AREA_RATIO * walk_up):
        return best, (f"{100 * best_area / total:.0f}% of its area would be walkable floor if "
                      f"{best} were up, against {100 * walk_up / total:.0f}% along up")
    pts = corners.reshape(-1, 3)
    extent_up = float(np.ptp(pts @ up))
    across_up = float(areas[np.abs(normals @ up) >= cos_walk].sum())
    for axis in _AXES[::2]:
        if abs(float(axis @ up)) >= cos_walk:
            continue
        across = float(areas[np.abs(normals @ axis) >= cos_walk].sum())
        extent = float(np.ptp(pts @ axis))
        if (extent <= SANITY_FLAT_RATIO * extent_up and across >= across_up
                and across >= SANITY_UP_MIN_FRACTION * total):
            side = _floor_side(normals, areas, axis, cos_walk, likely_up)
            name = _AXIS_NAMES[int(np.flatnonzero((_AXES == side * axis).all(1))[0])]
            return name, (f"it is {extent:,.4g} units across {name[1]} but "
                          f"{extent_up:,.4g} along up, and {100 * across / total:.0f}% of its "
                          f"area is floor or ceiling across {name[1]} against "
                          f"{100 * across_up / total:.0f}% across up")
    return _on_its_side(normals, areas, corners, up, cos_walk, likely_up, step)


def _riser_area(normals, areas, corners, axis, step, extent) -> float:
    """Area of the risers across unit ``axis``: wall planes (``_wall_heights``) from
    SANITY_RISER_MIN_M to ``step`` tall along it."""
    wall = (np.abs(normals @ axis) <= np.sin(np.radians(WALL_TOLERANCE_DEG))) & (areas > 0.0)
    if not wall.any():
        return 0.0
    h = _wall_heights(normals[wall], corners[wall], axis, extent)
    return float(areas[wall][(h >= SANITY_RISER_MIN_M) & (h <= step)].sum())


def _on_its_side(normals, areas, corners, up, cos_walk, likely_up, step):
    """Rule (c): risers across another axis outweigh those across up (module docstring).
    ``step`` None: the level is not in metres (risers cannot be told)."""
    if step is None or step <= SANITY_RISER_MIN_M:
        return None
    total = float(areas.sum())
    extent = float(np.ptp(corners.reshape(-1, 3), axis=0).max())
    risers_up = _riser_area(normals, areas, corners, up, step, extent)
    across_up = float(areas[np.abs(normals @ up) >= cos_walk].sum())
    for axis in _AXES[::2]:
        if abs(float(axis @ up)) >= cos_walk:
            continue
        risers = _riser_area(normals, areas, corners, axis, step, extent)
        across = float(areas[np.abs(normals @ axis) >= cos_walk].sum())
        if (risers >= SANITY_RISER_MIN_FRACTION * total
                and across >= SANITY_RISER_ACROSS * across_up
                and risers > SANITY_RISER_RATIO * risers_up):
            # risers have no side: the importer's guess first, then the floors' evidence
            side = (_floor_side(normals, areas, axis, cos_walk, likely_up)
                    if likely_up is None or abs(float(likely_up @ axis)) <= 0.9
                    else (1 if float(likely_up @ axis) > 0 else -1))
            name = _AXIS_NAMES[int(np.flatnonzero((_AXES == side * axis).all(1))[0])]
            return name, (f"its stair risers and kerbs (walls up to a step high) stand "
                          f"across {name[1]}: {100 * risers / total:.2f}% of its area against "
                          f"{100 * risers_up / total:.2f}% across up, so walls read as floors")
    return None


def _up_axis_warning(normals, areas, corners, up, cos_walk, likely_up=None,
                     step: float | None = 0.35):
    if float(areas.sum()) <= 0.0:
        return None
    found = _rotated(normals, areas, corners, up, cos_walk, likely_up, step)
    if found is None:
        return None
    axis, evidence = found
    return SanityWarning(
        "up_axis",
        f"the level looks rotated, its floors facing {axis}: {evidence}. Rotate it so its "
        f"floors face up = {tuple(round(float(x), 3) for x in up)}, or tell the importer the "
        f"file's up axis.", axis)


def _wall_heights(normals, corners, up, extent):
    """(W,) the height along ``up`` of the wall each wall face belongs to. Walls are
    exported subdivided, so a wall is the group of wall faces sharing one plane (normal to
    1e-3, offset to 1e-4 of the level's extent); its height is the group's extent."""
    offset = np.einsum("ij,ij->i", normals, corners[:, 0])
    key = np.concatenate([np.round(normals * 1e3),
                          np.round(offset * (1e4 / max(extent, 1e-300)))[:, None]], axis=1)
    _, group = np.unique(key, axis=0, return_inverse=True)
    group = group.ravel()  # (W,) on every numpy version
    z = corners @ up  # (W, 3)
    lo = np.full(group.max() + 1, np.inf)
    hi = np.full(group.max() + 1, -np.inf)
    np.minimum.at(lo, group, z.min(1))
    np.maximum.at(hi, group, z.max(1))
    return (hi - lo)[group]


def _median_wall_height(normals, areas, corners, up, extent):
    """Area-weighted median height (along up) of the level's walls (``_wall_heights``)."""
    wall_height = _wall_heights(normals, corners, up, extent)
    order = np.argsort(wall_height)
    weight = np.cumsum(areas[order])
    return float(wall_height[order][np.searchsorted(weight, 0.5 * weight[-1])])


def _centimetre_warning(normals, areas, corners, up, height):
    lo = corners.reshape(-1, 3).min(0)
    hi = corners.reshape(-1, 3).max(0)
    extent = float((hi - lo).max()) if corners.size else 0.0
    if extent > SANITY_MAX_EXTENT:
        return SanityWarning(
            "centimetres",
            f"the level is {extent:,.0f} units across; read as metres that is larger than "
            f"any game level ({SANITY_MAX_EXTENT:,.0f} m): it looks authored in centimetres "
            f"(or millimetres). Scale it to metres (x 0.01 for centimetres).")
    sin_wall = np.sin(np.radians(WALL_TOLERANCE_DEG))
    wall = (np.abs(normals @ up) <= sin_wall) & (areas > 0.0)
    if not wall.any():
        return None
    tallest = float(_wall_heights(normals[wall], corners[wall], up, extent).max())
    if (extent < SANITY_MIN_EXTENT_HEIGHTS * height
            and tallest < SANITY_MIN_WALL_HEIGHTS * height):
        return SanityWarning(
            "too_small",
            f"the level is {extent:,.3g} m across and its tallest wall "
            f"{100 * tallest:,.3g} cm high, for a character {height} m tall: it looks "
            f"100 times too small (a level in metres in a scene in centimetres, or a "
            f"Unit Scale of 0.01). Scale it up (x 100), or set the scene's Unit Scale "
            f"to 1 with Length in metres.")
    median = _median_wall_height(normals[wall], areas[wall], corners[wall], up, extent)
    if median <= SANITY_WALL_HEIGHTS * height:
        return None
    return SanityWarning(
        "centimetres",
        f"half of the level's wall area is in walls taller than {median:,.0f} units, "
        f"{median / height:.0f} character heights ({height} m): read as metres the walls "
        f"are towers; the level looks authored in centimetres (a 180-unit door). Scale it "
        f"to metres (x 0.01 for centimetres).")


def level_warnings(mesh, settings=None, up=(0.0, 0.0, 1.0),
                   likely_up=None) -> list[SanityWarning]:
    """Warnings about the whole level ``mesh`` (a TriangleMesh, metres expected).

    settings : ControllerSettings or None (its ``height`` and ``max_slope_deg``; defaults
        1.8 m and 45 deg). up : (3,) non-zero, the level's up (normalised here).
    likely_up : (3,) unit or None, where the caller would expect the floors of a rotated
        level to face (breaks a tie between floors and ceilings; see the module docstring).
    Returns a list of SanityWarning(code, message), empty for a metre level the right way
    up; at most one warning per code. Raises ValueError for a bad ``up``.
    """
    up = as_point(up, "up")
    n2 = float(up @ up)
    if n2 == 0.0:
        raise ValueError("up must be a non-zero vector")
    up = up / np.sqrt(n2)
    height = float(getattr(settings, "height", _DEFAULT_HEIGHT))
    slope = float(getattr(settings, "max_slope_deg", _DEFAULT_SLOPE_DEG))
    cos_walk = float(np.cos(np.radians(min(slope, 89.0))))
    normals, areas, corners = _face_data(mesh)
    out = []
    likely = None if likely_up is None else as_point(likely_up, "likely_up")
    scale = _centimetre_warning(normals, areas, corners, up, height)
    # risers are told in metres: none when the level is not
    step = (float(getattr(settings, "step_height", _DEFAULT_STEP)) if scale is None
            else None)
    for warning in (_up_axis_warning(normals, areas, corners, up, cos_walk, likely, step),
                    scale):
        if warning is not None:
            out.append(warning)
    return out
