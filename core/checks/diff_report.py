"""Render against collision in the level report: each problem of ``core.collision_diff`` as a
finding (check ``collision_diff``), and the report's ``collision_diff`` block.

A finding's ``faces`` are collision triangles (the level the report names is the collision);
the render faces are named in its message. Its identity across runs (``--baseline``) is the
check, the name (the kind and the problem's point on the identity grid, never a face index)
and ``got`` (the kind), so a re-run or a re-export finds the same difference under the same name.

Units: metres, square metres; world space.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .collision_diff import DIFF_KINDS
from .findings import Listed, identity_point
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


def diff_findings(diff, names: TriangleNames, render_names: TriangleNames) -> list:
    """[(Listed, bracket False)] per problem of ``diff`` (a CollisionDiff), in its order (a
    tie by place, ``_by_place``): its
    collision triangles (to select), its size (m^2, m of a wall) and its identity point (a
    re-export keeps it: never a face index). ``names`` name collision triangles,
    ``render_names`` render triangles."""
    out = []
    for p in sorted(diff.problems, key=_by_place):
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
