"""Audit operators: ``core.audits`` (stand test, stairs, headroom, ledges) on the level.

Which results are problems, and how bad, is core's rule (``core.checks.problems``), the same
the report uses: every face where the character cannot stand or has too little headroom, one
problem per RISER of a flight (too high, or its tread too shallow), one per ledge RUN. The
operator writes a BOOLEAN face attribute (``cc_cannot_stand``, ``cc_stair_problem``,
``cc_low_headroom``, ``cc_ledge``) on every face the problems cover and one row per object,
selectable like the penetration rows, with the severity of the audit's finding kind; an audit
that finds nothing leaves one passed row. Values are metres in the rows' ``value``.
"""

import bpy
import numpy as np

from .. import core
from ..core.checks.problems import audit_problems
from ..core.checks.verdicts import format_depth
from . import level_parts, operators, results, staleness

# row kind -> (core audit, finding kind, title, label of one object's row)
AUDITS = {
    "STAND": (core.stand_test, "stand", "Stand Test",
              "cannot stand on {n} faces of {obj}, deepest {v}"),
    "STAIRS": (core.stair_audit, "stairs", "Stair Audit",
               "{n} risers of {obj} too high or with treads too shallow, highest rise "
               "{v}"),
    "HEADROOM": (core.headroom_audit, "headroom", "Headroom Audit",
                 "{f} faces of {obj} with headroom below the capsule height, lowest {v}"),
    "LEDGE": (core.ledge_audit, "ledges", "Ledge Audit",
              "{n} ledge runs over an unsafe drop on {obj} ({f} faces), {v}"),
}


def value_words(kind, metres) -> str:
    """A row's worst value in words: "3 mm" below 1 cm, "0.450 m"; a ledge's "deepest 2.300
    m", or "one over no floor below" for an infinite drop (never the search limit in m)."""
    if kind != "LEDGE":
        return format_depth(float(metres))
    if not np.isfinite(metres):
        return "one over no floor below"
    return f"deepest {format_depth(float(metres))}"


def _box(level, tris):
    pts = level.mesh.vertices[level.mesh.triangles[tris]].reshape(-1, 3) / level.unit_scale
    return tuple(pts.min(0)) + tuple(pts.max(0))


def audit_rows(level, kind, problems, key):
    """One row per object the problems cover (the worst problem's value and position), or
    one passed row when there is none; and {mesh name: faces} for the attribute."""
    _, _, title, text = AUDITS[kind]
    p = problems
    value = np.where(np.isfinite(p.value), p.value, core.LEDGE_MAX_DROP)
    rows, by_mesh = [], {}
    pick = np.argmax if p.worse == "max" else np.argmin
    for obj_index, faces, unmapped, sel in results.group_triangles(level, p.triangles):
        mine = np.unique(p.owner[np.isin(p.triangles, sel)])  # this object's problems
        k = int(mine[int(pick(value[mine]))])
        level_name = level.objects[obj_index]
        target = results.object_for(level_name)
        name = target.name if target is not None else level_name
        if target is not None and target.type == "MESH":
            prev = by_mesh.get(target.data.name, np.empty(0, np.int32))
            by_mesh[target.data.name] = np.union1d(prev, faces)
        n_faces = int(faces.size + unmapped)
        rows.append({"kind": kind, "capsule": "", "object": name,
                     "instancer": results.instancer_of(level_name, target),
                     "label": text.format(n=mine.size, f=n_faces, obj=name,
                                          v=value_words(kind, p.value[k])),
                     "face_count": n_faces, "value": float(value[k]), "faces": faces,
                     "unmapped": int(unmapped), "stamp": level.stamp, "inputs": key,
                     "severity": p.severity.upper(), "has_bounds": True,
                     "bounds": _box(level, sel),
                     "position": tuple(p.position[k] / level.unit_scale)})
    if not rows:
        rows.append({"kind": kind, "capsule": "", "label": f"{title}: no problems",
                     "stamp": level.stamp, "inputs": key, "severity": "PASSED"})
    return rows, by_mesh


def run_audit(context, kind):
    """Run audit ``kind`` (a key of AUDITS) on the scene's level and write its rows and
    attribute. Returns the message (ValueError for unreadable settings or level)."""
    edited = operators.leave_edit_mode(context)
    scene = context.scene
    settings = operators.controller_settings(context)
    level, _dg = operators.level_of(context)
    audit, finding_kind, title, _ = AUDITS[kind]
    with operators.Progress(context, 2) as progress:
        problems = audit_problems(finding_kind, audit(level.mesh, settings))
        progress.update(1)
    rows, by_mesh = audit_rows(level, kind, problems,
                               staleness.inputs_key(scene, kind))
    results.write_face_flags(level, results.AUDIT_ATTRIBUTES[kind], by_mesh)
    level_parts.remember_results(scene, kind, level, problems.triangles)
    results.replace_rows(scene, {kind}, rows)
    n_faces = sum(r.get("face_count", 0) for r in rows)
    unmapped = sum(r.get("unmapped", 0) for r in rows)
    message = (f"{title}: {problems.rows.size} {problems.unit} with problems "
               f"({n_faces} faces on {sum(1 for r in rows if r.get('object'))} objects)")
    if unmapped:
        message += (f"; {unmapped} faces come from modifiers and map to no original face "
                    "(listed, not selectable)")
    return message + operators.edit_note(edited)


class AuditOperator(operators.CheckOperator):
    """Shared body of the four audits; subclasses name ``kind``."""

    kind = ""

    @classmethod
    def poll(cls, context):
        return operators.object_mode_poll(cls, context)

    def run(self, context):
        return run_audit(context, self.kind)


class CAPSULE_COLLISION_OT_stand_test(AuditOperator, bpy.types.Operator):
    """Place the capsule on every walkable face and mark the faces it cannot stand on
    (attribute cc_cannot_stand)"""

    bl_idname = "capsule_collision.stand_test"
    bl_label = "Stand Test"
    bl_options = {"REGISTER", "UNDO"}
    kind = "STAND"


class CAPSULE_COLLISION_OT_stair_audit(AuditOperator, bpy.types.Operator):
    """Mark risers higher than the step height or with treads shallower than the minimum
    (attribute cc_stair_problem)"""

    bl_idname = "capsule_collision.stair_audit"
    bl_label = "Stair Audit"
    bl_options = {"REGISTER", "UNDO"}
    kind = "STAIRS"


class CAPSULE_COLLISION_OT_headroom_audit(AuditOperator, bpy.types.Operator):
    """Mark walkable faces with a ceiling lower than the capsule height above them
    (attribute cc_low_headroom)"""

    bl_idname = "capsule_collision.headroom_audit"
    bl_label = "Headroom Audit"
    bl_options = {"REGISTER", "UNDO"}
    kind = "HEADROOM"


class CAPSULE_COLLISION_OT_ledge_audit(AuditOperator, bpy.types.Operator):
    """Mark walkable faces with an open edge over a drop higher than the step height
    (attribute cc_ledge)"""

    bl_idname = "capsule_collision.ledge_audit"
    bl_label = "Ledge Audit"
    bl_options = {"REGISTER", "UNDO"}
    kind = "LEDGE"


classes = (
    CAPSULE_COLLISION_OT_stand_test,
    CAPSULE_COLLISION_OT_stair_audit,
    CAPSULE_COLLISION_OT_headroom_audit,
    CAPSULE_COLLISION_OT_ledge_audit,
)
