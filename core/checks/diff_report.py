"""Render against collision in the level report: each problem of ``core.collision_diff`` as a
finding (check ``collision_diff``), and the report's ``collision_diff`` block.

A finding's ``faces`` are collision triangles (the level the report names is the collision);
the render faces are named in its message. Its identity across runs (``--baseline``) is the
check, the name (the kind and the problem's point on the identity grid, never a face index)
and ``got`` (the kind), so a re-run or a re-export finds the same difference under the same name.

Differences smaller than the character's footprint (a problem's floor ``area`` below the
minimum area of check ``collision_diff``, ``severity.min_areas``: pi x radius^2 unless the
sidecar's ``min_area`` or ``--min-area collision_diff=M2`` says otherwise) are not listed one
by one: ``split_small`` keeps them apart and one info per kind counts them and their m^2 (got
``below_min_area``), with the faces of all of them to select; the panel's rows follow the same
split. The report's ``collision_diff`` block still lists every problem (the data).

Units: metres, square metres; world space.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .collision_diff import DIFF_KINDS
from .findings import Listed, identity_point
from .gate import BELOW_MIN_AREA
from .naming import TriangleNames
from .severity import SEVERITIES
from .verdicts import Finding, format_vector

EXPECTED = "render and collision agree"
FACES_LISTED = 50  # faces of each side listed per problem (the counts cover all)
RENDER_FACES_NAMED = 5  # render faces named in a finding's message


class DiffIdentity(NamedTuple):
    """How a problem is named across runs (report.json, the panel's rows, waivers): ``name``
    (its kind and identity point, never a face index), ``got`` (its kind), ``where`` (3,)
    its identity point (metres), ``size`` and ``size_unit`` ("m" for a wall, else "m2")."""

    name: str
    got: str
    where: tuple
    size: float
    size_unit: str


def diff_identity(problem) -> DiffIdentity:
    """The identity of ``problem`` (a DiffProblem): the one naming of the report's finding
    and the panel's rows."""
    where = identity_point(problem.point)
    return DiffIdentity(f"{problem.kind} at {format_vector(where, 2)}", problem.kind, where,
                        float(problem.size),
                        "m" if problem.kind == "walk_through_wall" else "m2")


def _named(names: TriangleNames, faces, limit: int) -> str:
    """"Crate faces 3, 4; Floor face 1" for the first ``limit`` of ``faces``."""
    by_object: dict = {}
    for t in list(faces)[:limit]:
        n = names.name(int(t))
        key = n["object"] if n["object"] is not None else "triangle"
        by_object.setdefault(key, []).append(n["face"] if n["object"] is not None
                                             else n["triangle"])
    parts = []
    for obj, items in by_object.items():
        shown = [str(i) for i in items if i is not None]
        word = " faces " if len(shown) > 1 else " face " if shown else ""
        parts.append(obj + word + ", ".join(shown) if obj != "triangle" else
                     "triangles " + ", ".join(shown))
    more = len(faces) - limit
    return "; ".join(parts) + (f" and {more} more" if more > 0 else "")


def _by_place(problem) -> tuple:
    """Sort key keeping ``diff.problems``' order (severity, kind, largest first) with a tie
    broken by place (the lowest (z, y, x) identity point), never by face order (issue 27)."""
    x, y, z = identity_point(problem.point)
    return (SEVERITIES.index(problem.severity), DIFF_KINDS.index(problem.kind),
            -round(float(problem.size), 6), z, y, x)


class SmallDifferences(NamedTuple):
    """The problems of one kind smaller than the minimum area, counted in one info:
    ``kind``; ``problems`` (tuple of DiffProblem); ``area`` m^2 of floor of all of them;
    ``limit`` the minimum area (m^2); ``render_faces``, ``collision_faces`` (F,) int64
    every face of them on each mesh (sorted, unique)."""

    kind: str
    problems: tuple
    area: float
    limit: float
    render_faces: np.ndarray
    collision_faces: np.ndarray

    @property
    def name(self) -> str:
        """The info's name (its identity: one per kind)."""
        return f"{self.kind}: {BELOW_MIN_AREA}"

    @property
    def message(self) -> str:
        n = len(self.problems)
        return (f"collision_diff: {n} {self.kind} difference{'' if n == 1 else 's'} "
                f"({self.area:.2f} m²) smaller than the minimum area {self.limit:g} m² (the "
                f"character's footprint), not listed one by one")


def split_small(problems, min_area) -> tuple[list, list]:
    """(the problems listed one by one, [SmallDifferences] one per kind in DIFF_KINDS order):
    a problem whose floor ``area`` is below ``min_area`` m^2 (None or 0: none is) is counted
    in its kind's info, whatever its severity (module docstring). ``problems`` keep their
    order."""
    limit = float(min_area or 0.0)
    kept = [p for p in problems if not p.area < limit]
    small: dict = {}
    for p in problems:
        if p.area < limit:
            small.setdefault(p.kind, []).append(p)
    folded = []
    for kind in DIFF_KINDS:
        rows = small.get(kind)
        if rows:
            folded.append(SmallDifferences(
                kind, tuple(rows), float(sum(p.area for p in rows)), limit,
                np.unique(np.concatenate([p.render_faces for p in rows])).astype(np.int64),
                np.unique(np.concatenate([p.collision_faces for p in rows])).astype(np.int64)))
    return kept, folded


def diff_findings(diff, names: TriangleNames, render_names: TriangleNames,
                  min_area=None) -> list:
    """[(Listed, bracket False)] per problem of ``diff`` (a CollisionDiff) at least
    ``min_area`` m^2 of floor, in its order (a tie by place, ``_by_place``): its
    collision triangles (to select), its size (m^2, m of a wall) and its identity point (a
    re-export keeps it: never a face index); then one info per kind counting the smaller ones
    (``split_small``). ``names`` name collision triangles, ``render_names`` render
    triangles."""
    kept, folded = split_small(diff.problems, min_area)
    out = []
    for p in sorted(kept, key=_by_place):
        ident = diff_identity(p)
        unit = "m" if ident.size_unit == "m" else "m^2"
        message = f"{p.kind}: {p.cause}; {p.size:.2f} {unit} at {format_vector(p.point, 2)}"
        if p.render_faces.size:
            message += f" [render: {_named(render_names, p.render_faces, RENDER_FACES_NAMED)}]"
        if p.collision_faces.size:
            message += f" [collision: {_named(names, p.collision_faces, RENDER_FACES_NAMED)}]"
        finding = Finding("collision_diff", ident.name, EXPECTED, ident.got,
                          tuple(float(x) for x in p.point), message, p.severity)
        value = float(p.value) if p.kind in ("floating", "sunk") or p.value else None
        out.append((Listed(finding, np.asarray(p.collision_faces, np.int64), value,
                           ident.size, ident.size_unit, ident.where), False))
    for small in folded:
        finding = Finding("collision_diff", small.name, EXPECTED, BELOW_MIN_AREA, None,
                          small.message, severity="info")
        out.append((Listed(finding, small.collision_faces, None, small.area, "m2", None,
                           len(small.problems)), False))
    return out


def diff_section(diff, render_triangles: int, render_source: str | None) -> dict:
    """The report's ``collision_diff`` block: where the render came from, its triangles, the
    tolerances, counts per kind and every problem (``DiffProblem.to_dict`` with its faces
    capped at FACES_LISTED per side)."""
    problems = []
    for p in diff.problems:
        row = p.to_dict()
        row["render_faces"] = row["render_faces"][:FACES_LISTED]
        row["collision_faces"] = row["collision_faces"][:FACES_LISTED]
        row["render_face_count"] = int(p.render_faces.size)
        row["collision_face_count"] = int(p.collision_faces.size)
        problems.append(row)
    counts = diff.counts()
    return {"render": render_source, "render_triangles": int(render_triangles),
            "tolerance_m": float(diff.tolerance), "wall_tolerance_m": float(diff.wall_tolerance),
            "counts": {k: int(counts[k]) for k in DIFF_KINDS}, "problems": problems}
