"""The problems of ``core.collision_diff``: marked spans grouped into one problem per
connected region (cells side by side, heights within ``step_height``) per kind, each with its
foot point (the region's span nearest its middle), size (m^2 of floor; for
``walk_through_wall`` the wall's horizontal length in metres), floor area (m^2 for every
kind: what a minimum area compares), the faces on both meshes, a severity and a cause in
words.

Frame and units: world space, metres, square metres.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from .audits.cells import shifted
from .audits.common import components
from .reachability import Reachability
from .severity import ERROR, INFO, WARNING

DIFF_KINDS = ("hole", "invisible_wall", "walk_through_wall", "floating", "sunk",
              "reach_differs")
DIFF_SEVERITY = {"hole": ERROR, "invisible_wall": WARNING, "walk_through_wall": WARNING,
                 "reach_differs": WARNING, "floating": INFO, "sunk": INFO}
CLASS_WORDS = ("reachable", "a trap", "an island")


class DiffProblem(NamedTuple):
    """One difference between render and collision over one connected region of cells.

    kind : one of DIFF_KINDS; severity : "error" / "warning" / "info";
    point : (3,) a foot point in the region (metres); size : m^2 of floor (metres of wall for
    ``walk_through_wall``); render_faces, collision_faces : (F,) int64 sorted face indices
    into each mesh; cause : what differs, in words; value : the kind's measure (the largest
    floor offset in metres for floating / sunk, the deepest blocking penetration for the
    walls, else 0); cells : (K, 3) the foot points of the region's cells (the overlay's
    squares); area : m^2 of floor the region covers, for every kind (``size`` for all but
    ``walk_through_wall``, whose cells are the collision floor the character walks through
    the wall from): what a minimum area compares (``diff_report.split_small``)."""

    kind: str
    severity: str
    point: np.ndarray
    size: float
    render_faces: np.ndarray
    collision_faces: np.ndarray
    cause: str
    value: float
    cells: np.ndarray
    area: float

    def to_dict(self) -> dict:
        """JSON-ready (lists and floats; the cells are left out)."""
        return {"kind": self.kind, "severity": self.severity,
                "point": [float(x) for x in self.point], "size": float(self.size),
                "unit": "m" if self.kind == "walk_through_wall" else "m2",
                "value": float(self.value), "render_faces": self.render_faces.tolist(),
                "collision_faces": self.collision_faces.tolist(), "cause": self.cause}


def regions(R: Reachability, marked, step) -> tuple:
    """The connected regions of the spans ``marked`` (N,) bool of ``R``'s map (cells side by
    side, heights within ``step`` metres): (spans (M,) int64, label (M,) int64 0..G-1)."""
    smap = R.standable
    idx = np.flatnonzero(marked)
    if not idx.size:
        return idx, idx
    local = np.full(marked.size, -1, np.int64)
    local[idx] = np.arange(idx.size)
    a, b = [np.zeros(0, np.int64)], [np.zeros(0, np.int64)]
    for dx, dy in ((1, 0), (0, 1)):
        j = smap.columns.lookup(shifted(smap.grid, smap.cell[idx], dx, dy), smap.height[idx],
                                -step, step, marked)
        a.append(np.flatnonzero(j >= 0))
        b.append(local[j[j >= 0]])
    lab = components(idx.size, np.concatenate(a), np.concatenate(b))
    _u, lab = np.unique(lab, return_inverse=True)
    return idx, lab.ravel()


def cause_words(kind, s, value, classes) -> str:
    """What differs, in words (``classes``: (render class, collision class) at the point
    for reach_differs)."""
    if kind == "hole":
        return (f"no collision floor within {s.step_height:g} m below render floor a spawn "
                f"reaches: the character falls through")
    if kind == "invisible_wall":
        return (f"collision the player cannot see blocks the character on render floor a "
                f"spawn reaches ({value:.3f} m into it)" if value > 0 else
                "collision the player cannot see stops the character walking across render "
                "floor a spawn reaches")
    if kind == "walk_through_wall":
        return ("the character walks through render geometry the collision does not have"
                + (f" ({value:.3f} m into it)" if value > 0 else ""))
    if kind in ("floating", "sunk"):
        where = "above" if kind == "floating" else "below"
        return (f"the collision floor is up to {abs(value):.3f} m {where} the render floor: "
                f"the character's feet {'float' if kind == 'floating' else 'sink'}")
    rc, cc = classes
    return (f"floor {CLASS_WORDS[rc]} on the render level is {CLASS_WORDS[cc]} on the "
            f"collision")


def _middle_pick(feet, lab, groups):
    """(G,) int64 per group the member nearest the group's mean foot point (rows into
    ``feet`` (M, 3), labels ``lab`` (M,))."""
    cnt = np.bincount(lab, minlength=groups)
    mid = np.stack([np.bincount(lab, feet[:, i], minlength=groups) for i in range(3)],
                   1) / np.maximum(cnt, 1)[:, None]
    d = ((feet - mid[lab]) ** 2).sum(1)
    pick = np.lexsort((d, lab))
    return pick[np.r_[True, lab[pick][1:] != lab[pick][:-1]]]


def _wall_length(feet, grid) -> float:
    """Metres: the horizontal diagonal of the box round ``feet`` (K, 3) plus one cell."""
    x, y = grid.coords(feet)
    return float(math.hypot(np.ptp(x), np.ptp(y)) + grid.cell)


def kind_problems(kind, A: Reachability, values, marked, twin_faces, s, classes) -> list:
    """The problems of one kind over the regions of ``marked`` (N,) bool on ``A``'s map
    (render, or collision for walk_through_wall); ``twin_faces`` (N,) int64 faces on the
    other mesh (-1); ``values`` (N,) the kind's measure per span; ``classes`` (N, 2) int8
    (render, collision) class per span or None."""
    smap = A.standable
    spans, lab = regions(A, marked, s.step_height)
    if not spans.size:
        return []
    groups = int(lab.max()) + 1
    order = np.argsort(lab, kind="stable")
    cuts = np.cumsum(np.bincount(lab, minlength=groups))[:-1]
    picks = spans[_middle_pick(smap.foot[spans], lab, groups)]
    out = []
    for g, members in enumerate(np.split(spans[order], cuts)):
        own = np.unique(smap.face[members])
        others = np.unique(twin_faces[members][twin_faces[members] >= 0])
        vals = values[members]
        value = float(vals.max() if kind != "sunk" else vals.min())
        area = float(smap.weight[members].sum())
        if kind == "walk_through_wall":
            size = _wall_length(smap.foot[members], smap.grid)
            render_faces, collision_faces = others, own
        else:
            size = area
            render_faces, collision_faces = own, others
        cls = None if classes is None else tuple(int(c) for c in classes[picks[g]])
        out.append(DiffProblem(kind, DIFF_SEVERITY[kind], smap.foot[picks[g]].copy(), size,
                               render_faces, collision_faces, cause_words(kind, s, value, cls),
                               value, smap.foot[members], area))
    return out
