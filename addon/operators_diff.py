"""Render against collision in Blender: the level as drawn judged against the level as
collided, by the character from the scene's spawns (``core.collision_diff``).

``capsule_collision.collision_diff`` reads the collision level (the scene's Collision Source:
engine naming or a collection) and the render level (every other visible mesh,
``scene_render.read_render``), floods both from the feet of the capsules marked Spawn and
writes, after everything is computed:

* ``cc_collision_diff`` (INT8 FACE, ``DIFF_CODES``: 0 none, then one code per kind, the most
  severe first) on every mesh of both levels: per face the most severe problem it is in;
* a summary row (how many problems of each kind) and one row per problem and object it
  concerns, on either mesh (at most ``PROBLEMS_LISTED`` problems, most severe and largest
  first): its kind, size, foot point (``position``), the object's faces (select and frame),
  core's severity; the label says whether the object is render or collision. Problems
  smaller than the character's footprint (core's rule, ``diff_report.split_small`` with
  ``severity.min_areas``) are one info per kind instead, with rows per object of the faces of
  all of them (select and frame); the attribute still marks their faces.

The overlay draws the attribute as its own layer (``show_collision_diff``) on both levels.
"""

import bpy
import numpy as np

from .. import core
from ..core.checks.collision_diff import DIFF_KINDS
from ..core.checks.diff_report import EXPECTED as DIFF_EXPECTED
from ..core.checks.diff_report import diff_identity as core_diff_identity
from ..core.checks.diff_report import split_small
from ..core.checks.gate import BELOW_MIN_AREA
from ..core.checks.severity import min_areas
from ..core.checks.verdicts import format_vector
from . import operators, results, scene_render

DIFF_KIND = "COLLISION_DIFF"  # the rows' kind
DIFF_ATTRIBUTE = results.DIFF_ATTRIBUTE  # INT8 FACE on the meshes of both levels
# Attribute codes, most severe first (a face in two problems shows the smaller code).
DIFF_ORDER = ("hole", "invisible_wall", "walk_through_wall", "reach_differs", "floating",
              "sunk")
DIFF_CODES = {kind: k + 1 for k, kind in enumerate(DIFF_ORDER)}
DIFF_WORDS = {"hole": "Hole", "invisible_wall": "Invisible wall",
              "walk_through_wall": "Walk-through wall", "reach_differs": "Reach differs",
              "floating": "Floating", "sunk": "Sunk"}
PROBLEMS_LISTED = 50  # problems given rows (the summary counts all)
NO_RENDER = ("no render meshes: set Collision Source to Naming (UCX_, -col, _col...) or a "
             "Collection; every other visible mesh is then the level as drawn")

assert set(DIFF_ORDER) == set(DIFF_KINDS)


def _box(level, tris) -> tuple:
    pts = level.mesh.vertices[level.mesh.triangles[tris]].reshape(-1, 3) / level.unit_scale
    return tuple(pts.min(0)) + tuple(pts.max(0))


def _object_groups(sides):
    """(word, level, object name, instancer, mapped faces, unmapped count, triangles) of each
    object that the faces of ``sides`` ((word, LevelGeometry, faces)) lie on."""
    for word, level, faces in sides:
        for obj_index, mapped, unmapped, tris in results.group_triangles(level, faces):
            level_name = level.objects[obj_index]
            target = results.object_for(level_name)
            name = target.name if target is not None else level_name
            yield (word, level, name, results.instancer_of(level_name, target), mapped,
                   unmapped, tris)


def _row(level, name, instancer, mapped, unmapped, tris) -> dict:
    """The fields of a difference's row on one object (label, value, severity added)."""
    return {"kind": DIFF_KIND, "capsule": "", "object": name, "instancer": instancer,
            "face_count": int(mapped.size + unmapped), "faces": mapped,
            "unmapped": int(unmapped), "stamp": level.stamp, "inputs": "",
            "has_bounds": True, "bounds": _box(level, tris)}


def problem_rows(problem, k, sides) -> list[dict]:
    """Rows of one problem: one per (side, object) its faces lie on. ``sides``: (word,
    LevelGeometry, faces) for render and collision."""
    rows = []
    size = (f"{problem.size:.3g} m" if problem.kind == "walk_through_wall"
            else f"{problem.size:.3g} m²")
    for word, level, name, instancer, mapped, unmapped, tris in _object_groups(sides):
        n = int(mapped.size + unmapped)
        label = (f"{DIFF_WORDS[problem.kind]} {k}: {size} at {format_vector(problem.point, 2)}"
                 f": {n} face{'' if n == 1 else 's'} of {name} ({word}); {problem.cause}")
        rows.append({
            **_row(level, name, instancer, mapped, unmapped, tris), "label": label,
            "value": float(problem.size), "severity": problem.severity.upper(),
            "position": tuple(np.asarray(problem.point, float) / level.unit_scale),
            **diff_identity(problem)})
    return rows


def small_rows(small, sides) -> list[dict]:
    """Rows of one kind's differences smaller than the minimum area (a
    ``diff_report.SmallDifferences``): one info per (side, object) their faces lie on, all
    one finding (check ``collision_diff``, its name, got ``below_min_area``)."""
    rows = []
    n = len(small.problems)
    for word, level, name, instancer, mapped, unmapped, tris in _object_groups(sides):
        count = int(mapped.size + unmapped)
        label = (f"{DIFF_WORDS[small.kind]}: {n} smaller than the character's footprint, "
                 f"{small.area:.2f} m² in all: {count} face{'' if count == 1 else 's'} of "
                 f"{name} ({word}); not listed one by one")
        rows.append({
            **_row(level, name, instancer, mapped, unmapped, tris), "label": label,
            "value": float(small.area), "severity": "INFO",
            "check": "collision_diff", "finding": small.name, "expected": DIFF_EXPECTED,
            "got": BELOW_MIN_AREA, "count": n, "size": small.area, "size_unit": "m2"})
    return rows


def diff_identity(problem) -> dict:
    """The row fields naming ``problem`` as report.json does (core's naming,
    ``core.checks.diff_report.diff_identity``: check ``collision_diff``, got its kind,
    ``where`` its point on the identity grid), so a row can be waived and Export Report
    writes the CLI's finding."""
    ident = core_diff_identity(problem)
    return {"check": "collision_diff", "finding": ident.name, "expected": DIFF_EXPECTED,
            "got": ident.got, "where": ident.where, "has_where": True, "has_position": True,
            "size": ident.size, "size_unit": ident.size_unit}


def summary_text(diff, n_spawns: int, folded=()) -> str:
    """"Render vs collision from 3 spawns: 7 invisible wall (25 more smaller than the
    character's footprint: one info row per kind)"; ``folded`` the SmallDifferences."""
    counts = diff.counts()
    for small in folded:
        counts[small.kind] -= len(small.problems)
    found = ", ".join(f"{counts[k]} {DIFF_WORDS[k].lower()}" for k in DIFF_ORDER if counts[k])
    small = sum(len(x.problems) for x in folded)
    if small:
        found += (f"{', ' if found else ''}{small} more smaller than the character's "
                  f"footprint (one info row per kind)")
    return (f"Render vs collision from {n_spawns} spawn{'' if n_spawns == 1 else 's'}: "
            + (found if found else "they agree"))


def tri_codes(problems, n_tris: int, side: str) -> np.ndarray:
    """(T,) int8 per triangle of one side ("render" / "collision") the most severe problem's
    code (0: none)."""
    codes = np.zeros(n_tris, np.int8)
    for p in problems:
        faces = p.render_faces if side == "render" else p.collision_faces
        code = DIFF_CODES[p.kind]
        cur = codes[faces]
        codes[faces] = np.where((cur == 0) | (cur > code), code, cur)
    return codes


def run_collision_diff(context):
    """Compare render and collision from the scene's spawns and write the attribute and rows
    (module docstring). Returns the message. ValueError when there is no spawn, no render or
    collision mesh, or the settings cannot be read."""
    edited, spawns, settings, level, depsgraph, feet = operators.spawn_inputs(context)
    scene = context.scene
    render = scene_render.read_render(depsgraph, scene)
    if render is None:
        raise ValueError(NO_RENDER)
    tolerance = scene.capsule_collision.diff_tolerance * level.unit_scale
    with operators.Progress(context, 1):
        diff = core.collision_diff(render.mesh, level.mesh, feet, settings,
                                   tolerance=tolerance)
    kept, folded = split_small(diff.problems, min_areas(settings).get("collision_diff"))
    rows = []
    for k, p in enumerate(kept[:PROBLEMS_LISTED], start=1):
        rows += problem_rows(p, k, (("render", render, p.render_faces),
                                    ("collision", level, p.collision_faces)))
    for small in folded:
        rows += small_rows(small, (("render", render, small.render_faces),
                                   ("collision", level, small.collision_faces)))
    summary = summary_text(diff, len(spawns), folded)
    rows.insert(0, {"kind": DIFF_KIND, "capsule": "", "label": summary,
                    "value": float(len(diff.problems)), "stamp": level.stamp, "inputs": "",
                    "severity": "NONE" if diff.problems else "PASSED"})
    results.write_face_codes(render, DIFF_ATTRIBUTE,
                             tri_codes(diff.problems, render.mesh.n_triangles, "render"))
    results.write_face_codes(level, DIFF_ATTRIBUTE,
                             tri_codes(diff.problems, level.mesh.n_triangles, "collision"))
    results.replace_rows(scene, {DIFF_KIND}, rows)
    return summary + operators.edit_note(edited)


class CAPSULE_COLLISION_OT_collision_diff(operators.CheckOperator, bpy.types.Operator):
    """Judge the collision meshes against the render meshes with the character from the
    capsules marked Spawn: holes, invisible walls, walls it walks through, floating or sunk
    feet, reach that differs (attribute cc_collision_diff, one row per problem)"""

    bl_idname = "capsule_collision.collision_diff"
    bl_label = "Render vs Collision"
    bl_options = {"REGISTER", "UNDO"}

    @classmethod
    def poll(cls, context):
        if not operators.spawn_poll(cls, context):
            return False
        if scene_render.render_source(context.scene) is None:
            cls.poll_message_set("Set Collision Source to Naming or a Collection: the other "
                                 "visible meshes are the level as drawn")
            return False
        return True

    def run(self, context):
        return run_collision_diff(context)


classes = (CAPSULE_COLLISION_OT_collision_diff,)
