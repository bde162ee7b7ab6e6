"""Audit operators: ``core.audits`` (stand test, stairs, headroom, ledges) on the level.

Which results are problems, and how bad, is core's rule (``core.checks.findings``), the same
the report uses: one finding per cramped region, low-headroom region, stair FLIGHT and ledge
RUN (a region cramped under a low ceiling is the headroom audit's, listed once; the
cramped regions smaller than the character's footprint are one info row,
``core.checks.severity.min_areas``). With spawns (capsules marked Spawn) the problems on
floor no spawn reaches are one info row (the flood: ``operators_reach.current_reach``).
The operator writes a BOOLEAN face attribute (``cc_cannot_stand``, ``cc_stair_problem``,
``cc_low_headroom``, ``cc_ledge``) on every face the listed problems cover, another
(``..._out_of_reach``) on those out of reach (and ``cc_out_of_reach`` on those of any
audit: the overlay's Out of Reach toggle), and one row per finding, selectable like the
penetration rows (the attribute also flags a cramped region listed by the headroom audit:
it is data, the rows are findings); an audit that finds nothing leaves one passed row.
Values are metres in the rows' ``value``.
"""

import bpy
import numpy as np

from .. import core
from ..core.checks.findings import (
    EMPTY_I,
    JUMPED,
    OUT_OF_REACH,
    audit_findings,
    low_headroom_regions,
)
from ..core.checks.gate import BELOW_MIN_AREA, COUNTING, min_area_listed
from ..core.checks.naming import TriangleNames
from ..core.checks.problems import audit_problems
from ..core.checks.severity import min_areas
from . import level_parts, operators, operators_reach, results, staleness

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


def audit_rows(level, kind, listed, key):
    """One row per finding of the audit (``core.checks.findings.audit_findings``: a cramped
    region, a low-headroom region, a stair flight, a ledge run; the problems out of reach as
    one info), or one passed row when there is none."""
    rows = results.finding_rows(level, kind, listed, key)
    if not rows:
        rows.append({"kind": kind, "capsule": "", "label": f"{AUDITS[kind][2]}: no problems",
                     "stamp": level.stamp, "inputs": key, "severity": "PASSED"})
    return rows


def run_audit(context, kind):
    """Run audit ``kind`` (a key of AUDITS) on the scene's level and write its rows and
    attribute. Returns the message (ValueError for unreadable settings or level)."""
    edited = operators.leave_edit_mode(context)
    scene = context.scene
    settings = operators.controller_settings(context)
    level, _dg = operators.level_of(context)
    audit, finding_kind, title, _ = AUDITS[kind]
    with operators.Progress(context, 3) as progress:
        result = audit(level.mesh, settings)
        progress.update(1)
        reach = operators_reach.current_reach(context, level, settings)
        progress.update(2)
        explained = (low_headroom_regions(core.headroom_audit(level.mesh, settings))
                     if kind == "STAND" else EMPTY_I)  # listed by the headroom audit
        listed = audit_findings(finding_kind, result, settings, reach,
                                TriangleNames(level).label, explained)
        listed = min_area_listed(listed, min_areas(settings))
    rows = audit_rows(level, kind, listed, staleness.inputs_key(scene, kind))
    shown = [x for x in listed if x.finding.got not in COUNTING]
    away = [x for x in listed if x.finding.got == OUT_OF_REACH]
    small = [x for x in listed if x.finding.got == BELOW_MIN_AREA]
    out_tris = away[0].triangles if away else np.empty(0, np.int64)
    # the attribute: every problem's faces the audit found (a region the headroom audit
    # lists included), but those nobody reaches, which have their own attribute
    tris = np.setdiff1d(audit_problems(finding_kind, result).triangles, out_tris)
    results.write_face_flags(level, results.AUDIT_ATTRIBUTES[kind],
                             results.faces_by_mesh(level, tris))
    results.write_face_flags(level, results.OUT_OF_REACH_ATTRIBUTES[kind],
                             results.faces_by_mesh(level, out_tris))
    results.write_out_of_reach(level)
    level_parts.remember_results(scene, kind, level, tris)
    results.replace_rows(scene, {kind}, rows)
    unit = {"STAND": "cramped regions", "STAIRS": "stair flights",
            "HEADROOM": "low-headroom regions", "LEDGE": "ledge runs"}[kind]
    message = f"{title}: {len(shown)} {unit}"
    jumped = sum(x.finding.got == JUMPED for x in shown)
    if jumped:
        message += f" ({jumped} climbed by jumping: infos)"
    if away:
        message += f", {away[0].counted} more on floor no spawn reaches (one info row)"
    if small:
        message += (f", {small[0].counted} smaller than the character's footprint "
                    f"(one info row)")
    if reach is None and shown:
        message += "; mark a spawn to list only those on floor a player can reach"
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
