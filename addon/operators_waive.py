"""Waive… and Remove Waiver: mark the selected finding row as intended, or no longer.

Both write the level's sidecar (``waivers.sidecar_path``: ``<blend name>.levelcheck.json``
beside the saved .blend, the file ``levelcheck`` reads) and mark the rows again from it
(``waivers.mark_rows``). A waived row is listed greyed with a tick and its reason, is not
counted as an error, warning or info (the panel, Export Report and the CLI count it as
waived) and never fails the CLI's gate; a waiver whose finding is gone is an info row when
its check runs again.

Writing a file is not undone by Blender's undo (Ctrl+Z): Remove Waiver is the undo, and
both operators say so (docs/decisions.md, "Waivers live in the sidecar").
"""

import getpass

import bpy
from bpy.props import StringProperty

from . import waivers

NOT_UNDONE = " (the sidecar file is not undone by Ctrl+Z: use Remove Waiver)"


def _who() -> str:
    """The OS user's name, the default of Who."""
    try:
        return getpass.getuser()
    except (KeyError, OSError):  # no user name in the environment or the password database
        return ""


def _active_row(context):
    s = context.scene.capsule_collision
    if 0 <= s.results_index < len(s.results):
        return s.results[s.results_index]
    return None


class CAPSULE_COLLISION_OT_waive_finding(bpy.types.Operator):
    """Mark the selected finding as intended: a waiver (reason, who) in the level's sidecar
    beside the saved .blend, read by levelcheck too. Writing the file is not undone by
    Ctrl+Z: use Remove Waiver"""

    bl_idname = "capsule_collision.waive_finding"
    bl_label = "Waive…"
    bl_options = {"REGISTER"}  # a file write: Blender's undo cannot take it back

    reason: StringProperty(name="Reason", description="Why this finding is intended (the "
                           "sidecar and report.json keep it)", options={"SKIP_SAVE"})
    who: StringProperty(name="Who", description="Who waives it (default: the OS user; the "
                        "last name typed is remembered)")

    @classmethod
    def poll(cls, context):
        row = _active_row(context)
        if row is None or waivers.row_finding(row) is None:
            cls.poll_message_set("Select a finding row (an error, warning or info)")
            return False
        if row.waived_by:
            cls.poll_message_set("This finding is waived already (Remove Waiver undoes it)")
            return False
        return True

    def invoke(self, context, _event):
        if not self.who:
            self.who = _who()
        return context.window_manager.invoke_props_dialog(self)

    def execute(self, context):
        if not self.who.strip():
            self.who = _who()
        if not self.reason.strip() or not self.who.strip():
            self.report({"ERROR"}, "Give a reason and who: a waiver without them is refused "
                                   "(levelcheck reads it too)")
            return {"CANCELLED"}
        try:
            path = waivers.sidecar_path()
            doc = waivers.read_sidecar(path)
            entry = waivers.row_waiver(_active_row(context), self.reason, self.who)
            kept = [w for w in doc.get("waivers", []) if not _same(w, entry)]
            waivers.write_waivers(path, doc, [*kept, entry])
        except (ValueError, OSError) as exc:
            self.report({"ERROR"}, str(exc))
            return {"CANCELLED"}
        n = waivers.mark_rows(context.scene)
        near = waivers.near_miss_lines()  # the CLI's near-miss warning, core's rule
        self.report({"WARNING" if near else "INFO"},
                    f"Waived {entry['check']} {entry.get('name') or entry['where']} "
                    f"({entry['got']}) in {path}; {n} waived row(s){NOT_UNDONE}"
                    + "".join(f"; {line}" for line in near))
        return {"FINISHED"}


def _same(a: dict, b: dict) -> bool:
    """Whether two sidecar waiver entries name the same finding (check, name or where, got)."""
    return all(a.get(k) == b.get(k) for k in ("check", "name", "where", "got"))


class CAPSULE_COLLISION_OT_remove_waiver(bpy.types.Operator):
    """Remove the waiver of the selected row (a waived finding, or a waiver whose finding is
    gone) from the level's sidecar. Writing the file is not undone by Ctrl+Z"""

    bl_idname = "capsule_collision.remove_waiver"
    bl_label = "Remove Waiver"
    bl_options = {"REGISTER"}  # a file write: Blender's undo cannot take it back

    @classmethod
    def poll(cls, context):
        row = _active_row(context)
        if row is None or not (row.waived_by or row.got == waivers.WAIVER_STALE):
            cls.poll_message_set("Select a waived row, or a waiver whose finding is gone")
            return False
        return True

    def execute(self, context):
        row = _active_row(context)
        try:
            path = waivers.sidecar_path()
            doc = waivers.read_sidecar(path)
            entries = doc.get("waivers", [])
            parsed = waivers.waivers_of(doc, path)
            keep = [e for e, w in zip(entries, parsed, strict=True)
                    if not waivers.row_names(row, w)]
            gone = len(entries) - len(keep)
            if not gone:
                raise ValueError(f"{path}: no waiver names this row (edited by hand?)")
            waivers.write_waivers(path, doc, keep)
        except (ValueError, OSError) as exc:
            self.report({"ERROR"}, str(exc))
            return {"CANCELLED"}
        s = context.scene.capsule_collision
        if row.got == waivers.WAIVER_STALE:
            s.results.remove(s.results_index)
            s.results_index = min(s.results_index, len(s.results) - 1)
        waivers.mark_rows(context.scene)
        self.report({"INFO"}, f"Removed {gone} waiver(s) from {path}{NOT_UNDONE}")
        return {"FINISHED"}


classes = (CAPSULE_COLLISION_OT_waive_finding, CAPSULE_COLLISION_OT_remove_waiver)
