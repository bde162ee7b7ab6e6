"""Audit operators: ``core.audits`` (stand test, stairs, headroom, ledges) on the level.

Each audit returns triangles with values; the operator writes a BOOLEAN face attribute
(``cc_cannot_stand``, ``cc_stair_problem``, ``cc_low_headroom``, ``cc_ledge``) and one row per
object, selectable like the penetration rows. Values are metres in the rows' ``value``.
"""

import math

import bpy
import numpy as np

from .. import core
from . import level_parts, operators, results


def _stand(level, settings):
    r = core.stand_test(level.mesh, settings)
    return (r.faces, r.depth, r.position, "max",
            "cannot stand on {n} faces of {obj}, deepest {v:.3g} m")


def _stairs(level, settings):
    r = core.stair_audit(level.mesh, settings)
    bad = np.asarray(r.too_high, bool) | np.asarray(r.too_shallow, bool)
    return (r.riser[bad], r.rise[bad], r.position[bad], "max",
            "{n} stair problems on {obj} (risers above the step height or treads shallower "
            "than the minimum), highest rise {v:.3g} m")


def _headroom(level, settings):
    r = core.headroom_audit(level.mesh, settings)
    return (r.faces, r.clearance, r.position, "min",
            "{n} faces of {obj} with headroom below the capsule height, lowest {v:.3g} m")


def ledge_faces(result):
    """(faces, drop, position) of a LedgeResult, one entry per face to mark: every face along
    each ledge run when the audit reports runs (``edge_faces``/``edge_run``), else its rows."""
    drop = np.where(np.isfinite(result.drop), result.drop, core.LEDGE_MAX_DROP)
    runs = getattr(result, "edge_run", None)
    if runs is None:
        return result.faces, drop, result.position
    runs = np.asarray(runs, np.int64)
    return (np.concatenate([result.faces, result.edge_faces]),
            np.concatenate([drop, drop[runs]]),
            np.concatenate([result.position, np.asarray(result.position)[runs]]))


def _ledges(level, settings):
    r = core.ledge_audit(level.mesh, settings)
    faces, drop, position = ledge_faces(r)
    return (faces, drop, position, "max",
            "{n} faces of {obj} on a ledge over an unsafe drop, deepest {v:.3g} m")


AUDITS = {
    "STAND": (_stand, "Stand Test"),
    "STAIRS": (_stairs, "Stair Audit"),
    "HEADROOM": (_headroom, "Headroom Audit"),
    "LEDGE": (_ledges, "Ledge Audit"),
}


class AuditOperator(operators.CheckOperator):
    """Shared body of the four audits; subclasses name ``kind``."""

    kind = ""

    @classmethod
    def poll(cls, context):
        return operators.object_mode_poll(cls, context)

    def run(self, context):
        operators.leave_edit_mode(context)
        scene = context.scene
        settings = operators.controller_settings(context)
        level, _dg = operators.level_of(context)
        audit, title = AUDITS[self.kind]
        with operators.Progress(context, 2) as progress:
            tris, values, positions, worst, text = audit(level, settings)
            progress.update(1)
        tris = np.asarray(tris, np.int64)
        values = np.asarray(values, float)
        positions = np.asarray(positions, float).reshape(-1, 3)
        rows, by_mesh, unmapped_total = [], {}, 0
        pick = np.argmax if worst == "max" else np.argmin
        for obj_index, faces, unmapped, sel in results.group_triangles(level, tris):
            in_obj = np.isin(tris, sel)
            k = int(pick(np.where(in_obj, values, -math.inf if worst == "max" else math.inf)))
            target = results.object_for(level.objects[obj_index])
            name = target.name if target is not None else level.objects[obj_index]
            if target is not None and target.type == "MESH":
                prev = by_mesh.get(target.data.name, np.empty(0, np.int32))
                by_mesh[target.data.name] = np.union1d(prev, faces)
            n = int(faces.size + unmapped)
            unmapped_total += unmapped
            rows.append({"kind": self.kind, "capsule": "", "object": name,
                         "label": text.format(n=n, obj=name, v=values[k]),
                         "face_count": n, "value": float(values[k]), "faces": faces,
                         "unmapped": int(unmapped), "stamp": level.stamp,
                         "position": tuple(positions[k] / level.unit_scale)})
        results.write_face_flags(level, results.AUDIT_ATTRIBUTES[self.kind], by_mesh)
        level_parts.remember_results(scene, self.kind, level, tris)
        results.replace_rows(scene, {self.kind}, rows)
        n_faces = sum(r["face_count"] for r in rows)
        message = f"{title}: {n_faces} faces on {len(rows)} objects"
        if unmapped_total:
            message += (f"; {unmapped_total} faces come from modifiers and map to no original "
                        "face (listed, not selectable)")
        return message


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
