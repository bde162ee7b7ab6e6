"""The islands and traps of a flood as regions (``core.reachability``): each region's faces,
area and foot point, chosen by place so that neither the regions' order nor their points
follow the order of the faces (issue 27), and the callable that explains them: causes for
the largest REGIONS_EXPLAINED, a line of sight for every one (``reach_explain``)."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import NamedTuple

import numpy as np

from .audits.standable import FREE
from .reach_explain import entry_causes, nearest_causes, regions_causes, regions_visible

THREADED_EYES = 100_000  # reached nodes from which a region's lines of sight are cast in a
# second thread while its causes are read (both only read the map and the mesh; numpy
# releases the GIL in their array work: the same answers on one core or two)
REGIONS_EXPLAINED = 40  # islands and traps (each) given causes, largest first (every region
# is given a line of sight: an island left unjudged would be called in view, a warning)


class Region(NamedTuple):
    """Standable floor of one class: faces (F,) int64; area m^2; point (3,) a foot point
    where the character stands in it; visible : a standing character on reached floor sees
    it (core/checks/reach_explain.py; judged for every region); causes : tuple of Cause,
    what stops the way in (an island) or out (a trap), most frequent first (the first
    REGIONS_EXPLAINED regions of each class; () for the others)."""

    faces: np.ndarray
    area: float
    point: np.ndarray
    visible: bool = True
    causes: tuple = ()


def span_faces(smap, spans):
    """Faces and their areas (m^2) of the spans ``spans`` (S,) (faces crossing no cell centre
    included through their span): (faces (F,) sorted, area float)."""
    on = np.zeros(smap.face.size + 1, bool)  # a mask, not a sort of the spans (np.isin)
    on[spans] = True
    lone = np.flatnonzero(on[smap.face_span])  # face_span -1 reads the spare False
    faces = np.unique(np.concatenate([smap.face[spans], lone]))
    area = float(smap.weight[spans].sum() + smap.standable_area[lone].sum()
                 + smap.cramped_area[lone].sum())
    return faces, area


def regions(smap, code, group, cls, explain=None) -> tuple:
    """The regions of class ``cls`` (ISLAND or TRAP), largest first (one small numpy split
    per class, not a loop over cells); ``explain([members, ...])`` -> (causes, visible) per
    region (``explainer``)."""
    spans = np.flatnonzero(code == cls)
    if not spans.size:
        return ()
    _labels, inv = np.unique(group[spans], return_inverse=True)
    inv = inv.ravel()
    free = smap.state[spans] == FREE
    mid = np.stack([np.bincount(inv, smap.foot[spans, i]) for i in range(3)], 1) / np.bincount(
        inv)[:, None]
    stand = np.nan_to_num(smap.stand[spans])
    d = np.where(free, ((stand - mid[inv]) ** 2).sum(1), np.inf)
    # the free cell nearest the region's mean foot point; a tie goes to the lowest (z, y, x),
    # never to the first face or cell (a re-export reorders those: issue 27)
    pick = np.lexsort((stand[:, 0], stand[:, 1], stand[:, 2], d, inv))
    point = smap.stand[spans[pick[np.r_[True, inv[pick][1:] != inv[pick][:-1]]]]]
    order = np.argsort(inv, kind="stable")
    cuts = np.cumsum(np.bincount(inv))[:-1]
    out = []
    for r, members in enumerate(np.split(spans[order], cuts)):
        faces, a = span_faces(smap, members)
        out.append((Region(faces, a, point[r]), members))
    out.sort(key=_largest_first)
    if explain is not None:
        whys = explain([m for _reg, m in out])
        out = [(Region(reg.faces, reg.area, reg.point, visible, causes), m)
               for (reg, m), (causes, visible) in zip(out, whys, strict=True)]
    return tuple(reg for reg, _m in out)


def _largest_first(pair) -> tuple:
    """Sort key of a (Region, members) pair: the largest area first (to 1e-6 m^2: a sum in
    another order differs in its last bits), a tie by the lowest (z, y, x) point: the order
    of the regions, like their points, does not follow the order of the faces (issue 27)."""
    reg = pair[0]
    x, y, z = (float(v) for v in np.nan_to_num(reg.point))
    return (-round(float(reg.area), 6), z, y, x)


def explainer(mesh, smap, h, outer, eyes, settings, moves=None, links=None):
    """callable([members, ...]) -> (causes, visible) per region, largest first: the causes
    (``regions_causes``, ``outer`` (N,) bool the floor across their borders) of the first
    REGIONS_EXPLAINED, () for the others; whether a standing character on the reached nodes
    ``eyes`` (E,) sees it, for every region: one left unjudged would be called in view (a
    warning each; on oa_koth1 103 of 143 islands were). ``moves``: None or a list the failed
    border moves of the explained regions are appended to (``regions_causes``). An explained
    region its border leaves without a cause is explained by its way in (``entry_causes``,
    with ``links``, the flood's moves: traps), else by the reached floor nearest it
    (``nearest_causes``)."""
    reached = None
    if links is not None:  # the trap's ways in start on reached floor
        reached = np.zeros(smap.face.size, bool)
        reached[eyes] = True

    def explain(members):
        if eyes.size < THREADED_EYES:
            seen = regions_visible(mesh, smap, members, eyes, settings)
            causes = regions_causes(mesh, smap, h, members[:REGIONS_EXPLAINED], outer,
                                    settings, moves)
        else:  # the lines of sight in a second thread while the causes are read here
            with ThreadPoolExecutor(max_workers=1, thread_name_prefix="cc-sight") as pool:
                sight = pool.submit(regions_visible, mesh, smap, members, eyes, settings)
                causes = regions_causes(mesh, smap, h, members[:REGIONS_EXPLAINED], outer,
                                        settings, moves)
                seen = sight.result()
        causes = list(causes)
        if links is not None:
            _fill_bare(causes, members,
                       lambda ms: entry_causes(smap, h, ms, links, settings, reached))
        _fill_bare(causes, members,
                   lambda ms: nearest_causes(mesh, smap, h, ms, outer, settings))
        causes += [()] * (len(members) - len(causes))
        return zip(causes, seen)
    return explain


def _fill_bare(causes, members, find) -> None:
    """Give the regions whose ``causes`` are () what ``find([members, ...])`` says of them
    (a list of cause tuples, one per region given)."""
    bare = [r for r, c in enumerate(causes) if not c]
    if bare:
        for r, c in zip(bare, find([members[r] for r in bare]), strict=True):
            causes[r] = c
