"""Stand test and headroom audit, read off the standable map (core/audits/standable.py): one
rule decides "can the character stand here" for both, and for reachability.

- Stand test: a walkable face is reported when part of it is *cramped*: at least one cell of
  it where no character can stand (the capsule fits neither at that cell nor anywhere near
  enough on the same floor for its body to be over it). The row says how much of the face
  is standable and cramped (m^2), a point of the cramped part a designer can go to, and the
  cramped region it belongs to (connected cramped cells, possibly over several faces).
- Headroom: a walkable face is reported when part of it is cramped *and* the clearance
  above the floor there (a ray up) is less than the character's height: the ceiling is
  what keeps the character out.

Floor inside closed solids (winding number; stacked solids with coincident faces included,
whatever the order of the faces) is *buried*: not a place, not a finding.

Frame and units: world space, metres, square metres; ``settings.up`` is up.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ..walkability import WALKABLE
from .common import EMPTY_I, as_faces, settings_or_default
from .standable import CRAMPED, INSIDE, StandableMap, standable_map


class StandResult(NamedTuple):
    """Walkable faces with a cramped part (K rows, one per face), and the cramped regions.

    faces : (K,) int64 faces with at least one cramped cell;
    depth : (K,) float64 metres, the shallowest blocking penetration of the capsule over the
        face's cramped cells (how far the best try there is from fitting);
    blocker : (K,) int64 the triangle blocking that try deepest;
    position : (K, 3) float64 that cramped cell's foot point (on the face's floor);
    tested : (M,) int64 every face tested (walkable faces, or the ``faces`` argument);
    buried : (B,) int64 tested faces lying wholly inside closed solids (not findings);
    standable_area, cramped_area : (K,) m^2 of each reported face;
    region : (K,) int64 the cramped region of ``position`` (index into the next two);
    region_area : (R,) m^2 and region_point : (R, 3) of every cramped region of the level,
        largest first (a foot point inside each).
    """

    faces: np.ndarray
    depth: np.ndarray
    blocker: np.ndarray
    position: np.ndarray
    tested: np.ndarray
    buried: np.ndarray
    standable_area: np.ndarray
    cramped_area: np.ndarray
    region: np.ndarray
    region_area: np.ndarray
    region_point: np.ndarray


class HeadroomResult(NamedTuple):
    """Walkable faces with a cramped part under a ceiling lower than the character.

    faces : (K,) int64 faces with a cramped cell whose clearance is below ``height``;
    clearance : (K,) float64 metres, the lowest clearance over those cells of the face;
    position : (K, 3) float64 that cell's foot point; ceiling : (K,) int64 the triangle
        above it;
    region : (K,) int64 the cramped region of that cell (the stand test's numbering), so one
        low-headroom region is one problem (core/checks/problems.py);
    region_area : (R,) m^2 of the low-headroom cells of each cramped region (0: none).
    """

    faces: np.ndarray
    clearance: np.ndarray
    position: np.ndarray
    ceiling: np.ndarray
    region: np.ndarray = np.empty(0, np.int64)
    region_area: np.ndarray = np.empty(0)


def _face_rows(smap: StandableMap, spans, key):
    """For spans ``spans`` (S,) (faces crossing no cell centre included through the span of
    their centroid's cell): (faces (K,), the span of each face with the least ``key`` (S,))."""
    lone = np.flatnonzero(np.isin(smap.face_span, spans))
    faces = np.concatenate([smap.face[spans], lone])
    span = np.concatenate([spans, smap.face_span[lone]])
    k = np.concatenate([key, key[np.searchsorted(spans, smap.face_span[lone])]]) \
        if lone.size else key
    order = np.lexsort((span, k, faces))
    first = order[np.r_[True, faces[order][1:] != faces[order][:-1]]] if faces.size else order
    return faces[first], span[first]


def _buried(smap: StandableMap, tested) -> np.ndarray:
    """Tested faces whose every span is INSIDE (or which took an INSIDE span)."""
    t = smap.standable_area.size
    spans = np.bincount(smap.face, minlength=t)
    outside = np.bincount(smap.face, smap.state != INSIDE, minlength=t)
    buried = ((spans > 0) & (outside == 0)) | (smap.face_state == INSIDE)
    return tested[buried[tested]]


def stand_test(mesh, settings=None, faces=None) -> StandResult:
    """Faces (walkable faces, or ``faces``) with a cramped part (module docstring)."""
    s = settings_or_default(settings)
    smap = standable_map(mesh, s)
    tested = (np.flatnonzero(smap.classes == WALKABLE) if faces is None
              else as_faces(mesh, faces))
    cramped = np.flatnonzero(smap.state == CRAMPED)
    f, span = _face_rows(smap, cramped, smap.depth[cramped])
    keep = np.isin(f, tested)
    f, span = f[keep], span[keep]
    return StandResult(f, smap.depth[span], smap.blocker[span], smap.foot[span], tested,
                       _buried(smap, tested), smap.standable_area[f], smap.cramped_area[f],
                       smap.region[span], smap.region_area, smap.region_point)


def headroom_audit(mesh, settings=None) -> HeadroomResult:
    """Walkable faces where a cramped cell has less than ``height`` free above its floor."""
    s = settings_or_default(settings)
    smap = standable_map(mesh, s)
    low = np.flatnonzero((smap.state == CRAMPED) & (smap.clearance < s.height))
    if not low.size:
        return HeadroomResult(EMPTY_I, np.empty(0), np.empty((0, 3)), EMPTY_I, EMPTY_I,
                              np.zeros(smap.region_area.size))
    f, span = _face_rows(smap, low, smap.clearance[low])
    area = np.bincount(smap.region[low], smap.weight[low], minlength=smap.region_area.size)
    return HeadroomResult(f, smap.clearance[span], smap.foot[span], smap.ceiling[span],
                          smap.region[span], area)
