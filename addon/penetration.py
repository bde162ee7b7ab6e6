"""Capsule penetration written back: ONE writer for Check Penetration and the live check.

``judge(level, capsule_objects)`` decides with the one capsule verdict of ``core``
(``core.checks.verdicts.capsule_verdicts``: contacts deeper than ``MIN_REPORTED_DEPTH``, one
batched query), so the viewport and the report never disagree. ``write(scene, level,
judged)`` then writes, each only where it changed (the live check's writes must not feed back
into endless updates):

* each capsule's state (``penetrating_count``, ``deepest_depth``, ``push_out``,
  ``state_stamp``);
* its result rows: one per object it penetrates (faces, deepest depth, push-out, a box to
  frame) or one "clear" row, with its severity (``core.checks.problems.capsule_outcome``) and
  the inputs it was computed from (``staleness``);
* the ``capsule_penetration`` face attribute (``results.PENETRATION_ATTRIBUTE``, this module
  its only writer): exactly the faces of every PENETRATION row, on every mesh of the level.
  A mesh in Edit Mode keeps its attribute until it leaves Edit Mode (attribute arrays are not
  writable there); ``write`` names such meshes so the caller can say so and write later.
"""

from __future__ import annotations

from dataclasses import dataclass

import bpy
import numpy as np

from ..core.checks import verdicts
from ..core.checks.problems import capsule_outcome
from ..core.checks.verdicts import format_depth
from . import results, scene_data, staleness


@dataclass(frozen=True)
class Judged:
    """One capsule object, its check (name, capsule in metres, expectation), verdict and
    the key of what it was judged on."""

    obj: bpy.types.Object
    check: verdicts.CapsuleCheck
    verdict: verdicts.CapsuleVerdict
    key: str  # staleness.capsule_key when judged (the rows' inputs)


@dataclass(frozen=True)
class Written:
    """What ``write`` did: capsules penetrating, faces listed (modifier faces included),
    faces that map to no original face, expectations not met, meshes in Edit Mode whose
    attribute waits."""

    penetrating: int
    faces: int
    unmapped: int
    failed: int
    deferred: tuple


def judge(level, capsule_objects, unreadable=None) -> list[Judged]:
    """Verdicts of ``capsule_objects`` (capsule Empties) on ``level`` in one batched query.

    A capsule that cannot be read raises ValueError naming it, or, when ``unreadable`` is
    given (the live check), is passed to ``unreadable(obj, error)`` and left out."""
    scale = level.unit_scale
    objects, checks = [], []
    for ob in capsule_objects:
        try:
            checks.append(verdicts.CapsuleCheck(ob.name, scene_data.capsule_of(ob, scale),
                                                ob.capsule_collision.expect, source="scene"))
        except ValueError as exc:
            if unreadable is None:
                raise
            unreadable(ob, exc)
            continue
        objects.append(ob)
    found = verdicts.capsule_verdicts(level.mesh, [c.capsule for c in checks])
    return [Judged(ob, c, v, staleness.capsule_key(ob, scale))
            for ob, c, v in zip(objects, checks, found)]


def _expect_text(check, holds) -> str:
    if check.expect == verdicts.ANY:
        return ""
    return f" (expected {check.expect}: {'met' if holds else 'NOT met'})"


def _box(points, scale) -> tuple:
    pts = np.asarray(points, float).reshape(-1, 3) / scale
    return tuple(pts.min(0)) + tuple(pts.max(0))


def capsule_rows(scene, level, j: Judged) -> list[dict]:
    """The result rows of one judged capsule (see the module docstring)."""
    ob, check, verdict = j.obj, j.check, j.verdict
    scale = level.unit_scale
    holds = verdicts.capsule_expectation_holds(check.expect, verdict)
    common = {"kind": "PENETRATION", "capsule": ob.name, "stamp": level.stamp,
              "inputs": j.key,
              "severity": capsule_outcome(check.expect, verdict).upper(),
              "position": tuple(np.asarray(ob.matrix_world.translation)), "has_bounds": True,
              # the finding (Export Report): one per capsule, whatever objects it penetrates
              "check": ("penetration" if check.expect.strip().lower() == verdicts.ANY
                        else "capsule"),
              "finding": ob.name, "expected": check.expect.strip().lower(),
              "got": verdict.word,
              "has_position": True}
    expect = _expect_text(check, holds)
    tris, depths, normals = verdict.triangles, verdict.depths, verdict.normals
    if not tris.size and verdict.solid >= 0:
        return [_inside_row(level, common, verdict, expect)]
    if not tris.size:
        cap = check.capsule
        r = cap.radius
        ends = np.array([cap.a - r, cap.a + r, cap.b - r, cap.b + r])
        return [dict(common, label=f"{ob.name}: clear{expect}", bounds=_box(ends, scale))]
    rows = []
    for obj_index, faces, unmapped, sel in results.group_triangles(level, tris):
        in_obj = np.isin(tris, sel)
        deepest = int(np.argmax(np.where(in_obj, depths, -np.inf)))
        level_name = level.objects[obj_index]
        target = results.object_for(level_name)
        name = target.name if target is not None else level_name
        extra = f", {unmapped} from modifiers" if unmapped else ""
        corners = level.mesh.vertices[level.mesh.triangles[sel]]
        rows.append(dict(
            common, object=name, instancer=results.instancer_of(level_name, target),
            label=f"{ob.name} in {name}: {faces.size + unmapped} faces{extra}, "
                  f"deepest {format_depth(depths[deepest])}{expect}",
            face_count=int(faces.size + unmapped), value=float(depths[deepest]),
            has_value=True,
            push_out=tuple(normals[deepest] * depths[deepest] / scale), faces=faces,
            unmapped=int(unmapped), bounds=_box(corners, scale)))
    return rows


def _inside_row(level, common: dict, verdict, expect: str) -> dict:
    """The row of a capsule touching no face inside a closed solid: the solid's object,
    the way out and the face it leaves through (``verdicts.CapsuleVerdict.solid``)."""
    scale = level.unit_scale
    obj_index, faces, unmapped, sel = next(iter(results.group_triangles(
        level, np.array([verdict.solid], np.int64))))
    level_name = level.objects[obj_index]
    target = results.object_for(level_name)
    name = target.name if target is not None else level_name
    way = verdict.way_out
    depth = f"{way.distance:.4g} m from its way out" if way is not None and np.isfinite(
        way.distance) else "no way out found"
    corners = level.mesh.vertices[level.mesh.triangles[sel]]
    return dict(common, object=name, instancer=results.instancer_of(level_name, target),
                label=f"{common['capsule']}: buried inside {name} ({depth}){expect}",
                face_count=int(faces.size + unmapped), value=float(verdict.deepest),
                push_out=tuple(verdict.push_out / scale), faces=faces, unmapped=int(unmapped),
                bounds=_box(corners, scale))


def _as_stored(x: float) -> float:
    """``x`` rounded to float32 as Blender stores float properties."""
    return float(np.float32(x))


def write_state(obj, verdict, unit: float, stamp: str, solid: str = "") -> None:
    """A capsule's state from its verdict (None: pending, not checked), written only where it
    changed (compared as Blender stores floats). ``solid``: the object the capsule is buried
    inside (``verdict.solid``), else ""."""
    pg = obj.capsule_collision
    if verdict is None:
        if pg.penetrating_count != -1:
            pg.penetrating_count = -1
        return
    push = tuple(float(x) / unit for x in verdict.push_out)
    if pg.penetrating_count != int(verdict.triangles.size):
        pg.penetrating_count = int(verdict.triangles.size)
    if pg.inside_solid != solid:
        pg.inside_solid = solid
    deepest = verdict.deepest if np.isfinite(verdict.deepest) else 0.0
    if pg.deepest_depth != _as_stored(deepest / unit):
        pg.deepest_depth = deepest / unit
    if tuple(pg.push_out) != tuple(_as_stored(x) for x in push):
        pg.push_out = push
    if pg.state_stamp != stamp:
        pg.state_stamp = stamp


def write(scene, level, judged: list[Judged]) -> Written:
    """Write states, rows and the attribute for ``judged`` capsules (see the module doc);
    rows of other capsules stay, rows of capsules no longer in the scene go."""
    rows, faces, unmapped, failed, penetrating = [], 0, 0, 0, 0
    for j in judged:
        new = capsule_rows(scene, level, j)
        solid = new[0].get("object", "") if j.verdict.solid >= 0 else ""
        write_state(j.obj, j.verdict, level.unit_scale, level.stamp, solid)
        rows += new
        faces += sum(r.get("face_count", 0) for r in new)
        unmapped += sum(r.get("unmapped", 0) for r in new)
        failed += not verdicts.capsule_expectation_holds(j.check.expect, j.verdict)
        penetrating += j.verdict.penetrating
    owners = {j.obj.name for j in judged}
    results.drop_orphan_rows(scene, "PENETRATION")  # capsules deleted or renamed since
    if not results.rows_equal(scene, "PENETRATION", owners, rows):
        results.replace_rows(scene, {"PENETRATION"}, rows, owners=owners)
    deferred = write_attribute(scene, level)
    return Written(penetrating, faces, unmapped, failed, deferred)


def write_attribute(scene, level) -> tuple:
    """``capsule_penetration`` on every level mesh: True exactly on the faces of the
    PENETRATION rows (all False on the others, so the attribute always says what the checks
    found). Writes only meshes whose values differ; returns the names of meshes left alone
    because they are in Edit Mode."""
    wanted = results.faces_of_rows(scene, "PENETRATION")
    deferred = []
    name = results.PENETRATION_ATTRIBUTE
    for mesh_name, ob in results.mesh_objects_of_level(level).items():
        me = ob.data
        if me.is_editmode:
            deferred.append(ob.name)
            continue
        n = len(me.polygons)
        want = np.zeros(n, bool)
        faces = wanted.get(mesh_name)
        if faces is not None and len(faces):
            faces = np.asarray(faces)
            want[faces[faces < n]] = True
        attr = me.attributes.get(name)
        if attr is not None and attr.domain == "FACE" and attr.data_type == "BOOLEAN":
            have = np.empty(n, bool)
            attr.data.foreach_get("value", have)
            if np.array_equal(have, want):
                continue
        results.face_attribute(me, name, "BOOLEAN").data.foreach_set("value", want)
        me.update()
    return tuple(sorted(deferred))


def edit_mode_note(level, deferred) -> str:
    """The status words for meshes read or left alone in Edit Mode ("" when none)."""
    parts = []
    if level.edit_objects:
        parts.append(", ".join(level.edit_objects) + " checked with the edits of Edit Mode")
    if deferred:
        parts.append("the highlight of " + ", ".join(deferred)
                     + " is written when it leaves Edit Mode")
    return "; ".join(parts)


def meshes_in_edit_mode() -> bool:
    """Whether any local mesh is in Edit Mode (the live check then retries its writes)."""
    return any(me.is_editmode for me in bpy.data.meshes if me.library is None)
