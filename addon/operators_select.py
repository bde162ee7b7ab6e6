"""One click away: look at a result row, and walk through the findings in severity order.

``capsule_collision.select_result`` shows one row: it selects exactly the row's faces in
Edit Mode (face select, as the 3D-Print Toolbox does), on every object the problem spans (all
of them in Edit Mode at once, Blender's multi-object Edit Mode; faces on instanced objects
are named, not selected) or, where there are no faces to select,
the thing the row is about (the capsule of a clear row, the marker of a walk event on no
face, the path of a walk's verdict, the instancer of instanced geometry), frames it in the 3D
View (View Selected, ``framing``) and, for a walk event of a baked walk, moves the timeline
to the moment it happened. A stale row is still shown, with a warning naming why it is stale.

``capsule_collision.goto_finding`` steps to the next (or previous) finding: the rows that are
errors, then warnings, then infos (``core.checks.severity.rank``), each group in row order,
wrapping around; passed rows and data rows are skipped.
"""

import bpy
import numpy as np
from bpy.props import BoolProperty, IntProperty

from ..core.checks.severity import rank
from . import framing, operators, properties, results, staleness

FINDING_SEVERITIES = ("ERROR", "WARNING", "INFO")


def finding_order(scene) -> list[int]:
    """Row indices of the findings, most severe first (``core.checks.severity.rank``), then
    in row order."""
    rows = scene.capsule_collision.results
    found = [i for i, r in enumerate(rows) if r.severity in FINDING_SEVERITIES]
    return sorted(found, key=lambda i: (rank(rows[i].severity.lower()), i))


def select_faces(mesh, faces) -> np.ndarray:
    """Select exactly ``faces`` (and their edges and vertices) of ``mesh``; nothing else.
    Returns the (V,) bool mask of the selected vertices."""
    n_faces, n_edges, n_verts = len(mesh.polygons), len(mesh.edges), len(mesh.vertices)
    face_sel = np.zeros(n_faces, bool)
    face_sel[np.asarray(faces, np.int64)] = True
    loop_total = np.empty(n_faces, np.int32)
    mesh.polygons.foreach_get("loop_total", loop_total)
    corner_face = np.repeat(face_sel, loop_total)
    corner_vert = np.empty(len(mesh.loops), np.int32)
    corner_edge = np.empty(len(mesh.loops), np.int32)
    mesh.loops.foreach_get("vertex_index", corner_vert)
    mesh.loops.foreach_get("edge_index", corner_edge)
    vert_sel = np.zeros(n_verts, bool)
    vert_sel[corner_vert[corner_face]] = True
    edge_sel = np.zeros(n_edges, bool)
    edge_sel[corner_edge[corner_face]] = True
    # Selection lives in the attributes .select_vert/.select_edge/.select_poly; write them
    # through the attribute API (foreach_set("select") crashed bpy 5.0 on a mesh whose
    # .select_edge had another type).
    for name, domain, values in ((".select_vert", "POINT", vert_sel),
                                 (".select_edge", "EDGE", edge_sel),
                                 (".select_poly", "FACE", face_sel)):
        attr = mesh.attributes.get(name)
        if attr is not None and (attr.data_type != "BOOLEAN" or attr.domain != domain):
            mesh.attributes.remove(attr)  # e.g. an INT32_2D .select_edge from from_pydata
            attr = None
        if attr is None:
            attr = mesh.attributes.new(name, "BOOLEAN", domain)
        attr.data.foreach_set("value", values)
    mesh.update()
    return vert_sel


def vertices_box(ob, mask) -> tuple | None:
    """World box (Blender units, min xyz + max xyz) of the vertices ``mask`` of mesh object
    ``ob`` (Object Mode data), or None when the mask is empty."""
    if not mask.any():
        return None
    pos = np.empty(len(ob.data.vertices) * 3, np.float32)
    ob.data.attributes["position"].data.foreach_get("vector", pos)
    pts = pos.reshape(-1, 3)[mask].astype(np.float64)
    m = np.array(ob.matrix_world, dtype=np.float64)
    pts = pts @ m[:3, :3].T + m[:3, 3]
    return tuple(pts.min(0)) + tuple(pts.max(0))


def current_stamp(context):
    """The level's geometry stamp now ("" when the level cannot be read)."""
    try:
        return operators.level_of(context)[0].stamp
    except ValueError:
        return ""


def _target(row):
    """(object to select, faces to select in it or None) for a row: the row's faces; else a
    walk event's marker, a walk verdict's path, a clear capsule row's capsule."""
    faces = properties.decode_faces(row.faces)
    ob = bpy.data.objects.get(row.object) if row.object else None
    if row.kind == "WALK":
        if row.event and (ob is None or not faces.size):
            marker = framing.marker_of(row.capsule, row.time)
            if marker is not None:
                return marker, None
        if ob is None:
            return bpy.data.objects.get(row.capsule), None
    if ob is None and row.kind == "PENETRATION":
        return bpy.data.objects.get(row.capsule), None
    return ob, faces


def _more_parts(row, faces):
    """The row's faces on its other objects (``results.row_parts`` after the first): (object
    or None, faces, instancer name, unmapped) each; [] for a row selecting no faces."""
    if faces is None:
        return []
    return [(bpy.data.objects.get(name), part, instancer, unmapped)
            for name, instancer, part, unmapped in results.row_parts(row)[1:]]


def _too_few_faces(ob, faces) -> bool:
    return (faces is not None and ob is not None and ob.type == "MESH" and faces.size > 0
            and faces.max() >= len(ob.data.polygons))


def show_row(op, context, index, edit_mode=True, frame=True):
    """Select, frame and (walk events) jump to row ``index``; reports like an operator."""
    scene = context.scene
    s = scene.capsule_collision
    if not 0 <= index < len(s.results):
        op.report({"ERROR"}, f"no result row {index}")
        return {"CANCELLED"}
    row = s.results[index]
    ob, faces = _target(row)
    if ob is None:
        if not (row.object or row.capsule):
            op.report({"INFO"}, f"row {index} has nothing to select: {row.label}")
            return {"CANCELLED"}
        op.report({"ERROR"}, f"row {index} names no object that still exists "
                             f"({row.object or row.capsule!r})")
        return {"CANCELLED"}
    more = _more_parts(row, faces)
    edited = [o for o, f in [(ob, faces)] + [(m[0], m[1]) for m in more] if _too_few_faces(o, f)]
    if edited:
        op.report({"ERROR"}, f"{edited[0].name} has fewer faces than the result: it was "
                             "edited since; run the check again")
        return {"CANCELLED"}
    stale = staleness.stale_reason(scene, row, current_stamp(context))
    operators.leave_edit_mode(context)
    instancer = None
    if ob.name not in context.view_layer.objects:
        instancer = context.view_layer.objects.get(row.instancer) if row.instancer else None
        if instancer is None:
            op.report({"ERROR"}, f"{ob.name} is not in this view layer")
            return {"CANCELLED"}
    parts = [(instancer or ob, faces if instancer is None else None)]
    # the problem's faces on its other objects: selected too when they can be edited here
    own = [(o, f) for o, f, inst, _u in more
           if o is not None and not inst and o.name in context.view_layer.objects]
    if instancer is None and own:
        parts += own
    message, box = _select(context, parts, edit_mode)
    s.results_index = index
    if instancer is not None:
        message += (f"; {ob.name} is instanced by {instancer.name}: edit {ob.name} in its "
                    "collection")
    away = sum(int(f.size) for o, f, inst, _u in more if inst or o is None
               or o.name not in context.view_layer.objects)
    if away:
        message += f"; {away} more on instanced objects, edit them in their collection"
    unmapped = row.unmapped + sum(m[3] for m in more)
    if unmapped and instancer is None:
        message += f"; {unmapped} more come from modifiers and cannot be selected"
    message += _frame_and_jump(context, row, frame, box)
    if stale:
        op.report({"WARNING"}, message + f"; the result is stale ({stale}): run the check "
                                         "again")
    else:
        op.report({"INFO"}, message)
    return {"FINISHED"}


def _select(context, parts, edit_mode) -> tuple:
    """Make the objects of ``parts`` ((object, faces or None) each, the first active) the
    only selected ones; select exactly ``faces`` of each mesh (objects sharing a mesh: the
    union, on the first of them) and enter Edit Mode on all of them at once (multi-object
    Edit Mode) when asked and there are faces. Returns the message and the world box of the
    selected faces (None when no face is selected)."""
    for other in context.view_layer.objects:
        if other.select_get():
            other.select_set(False)
    ob, faces = parts[0]
    if faces is None or ob.type != "MESH":
        ob.hide_set(False)
        ob.select_set(True)
        context.view_layer.objects.active = ob
        return f"Selected {ob.name}", None
    by_mesh: dict = {}  # mesh name -> (object, faces)
    for o, f in parts:
        if o.type == "MESH" and f is not None:
            have = by_mesh.get(o.data.name)
            by_mesh[o.data.name] = (o, f) if have is None else (have[0], np.union1d(have[1], f))
    boxes, chosen, total = [], [], 0
    for o, f in by_mesh.values():
        o.hide_set(False)
        o.select_set(True)
        box = vertices_box(o, select_faces(o.data, f))
        if box is not None:
            boxes.append(box)
        chosen.append(o)
        total += int(f.size)
    context.view_layer.objects.active = ob
    context.tool_settings.mesh_select_mode = (False, False, True)
    if edit_mode and total:
        with context.temp_override(active_object=ob, object=ob, selected_objects=chosen,
                                   selected_editable_objects=chosen):
            bpy.ops.object.mode_set(mode="EDIT")
    box = None
    if boxes:
        b = np.asarray(boxes, np.float64)
        box = tuple(b[:, :3].min(0)) + tuple(b[:, 3:].max(0))
    if len(chosen) == 1:
        return f"Selected {total} faces of {ob.name}", box
    each = ", ".join(f"{o.name} {int(f.size)}" for o, f in by_mesh.values())
    return f"Selected {total} faces on {len(chosen)} objects ({each})", box


def _frame_and_jump(context, row, frame, box) -> str:
    """Frame the selected faces' box (View Selected), else (and for walk rows, the place of
    the event) the row's stored box; move the timeline for an event of a baked walk. Returns
    the words to add to the message."""
    text = ""
    if row.has_bounds and (box is None or row.kind == "WALK"):  # an event: where it happened
        box = tuple(row.bounds)
    if frame and box is not None:
        unit = properties.unit_scale(context.scene)
        if framing.frame_box(context, box[:3], box[3:], 0.5 / unit):
            text = "; framed"
    if row.kind == "WALK" and row.event:
        at = framing.jump_to(context.scene, row.capsule, row.time)
        if at is not None:
            text += f"; timeline at frame {at:.1f} ({row.time:.2f} s into the walk)"
    return text


def _results_poll(cls, context, need_findings=False):
    if context.scene is None or not context.scene.capsule_collision.results:
        cls.poll_message_set("No results: run a check first")
        return False
    if context.mode not in ("OBJECT", "EDIT_MESH"):
        cls.poll_message_set("Switch to Object Mode or mesh Edit Mode first")
        return False
    if need_findings and not finding_order(context.scene):
        cls.poll_message_set("No findings: every result passed")
        return False
    return True


class CAPSULE_COLLISION_OT_select_result(bpy.types.Operator):
    """Select exactly the faces of a result row (in Edit Mode, face select), or the capsule,
    marker or path it is about; frame it, and move the timeline to a baked walk's event"""

    bl_idname = "capsule_collision.select_result"
    bl_label = "Select Result"
    bl_options = {"REGISTER", "UNDO"}

    index: IntProperty(name="Row", default=-1, description="Result row (-1: the active row)")
    edit_mode: BoolProperty(name="Edit Mode", default=True,
                            description="Enter Edit Mode on the object with the faces selected")
    frame: BoolProperty(name="Frame", default=True,
                        description="Frame the result in the 3D View (View Selected)")

    @classmethod
    def poll(cls, context):
        return _results_poll(cls, context)

    def execute(self, context):
        s = context.scene.capsule_collision
        index = s.results_index if self.index < 0 else self.index
        return show_row(self, context, index, self.edit_mode, self.frame)


class CAPSULE_COLLISION_OT_goto_finding(bpy.types.Operator):
    """Show the next (or previous) finding: errors first, then warnings, then infos"""

    bl_idname = "capsule_collision.goto_finding"
    bl_label = "Next Finding"
    bl_options = {"REGISTER", "UNDO"}

    step: IntProperty(name="Step", default=1, min=-1, max=1,
                      description="1: the next finding, -1: the previous one")
    edit_mode: BoolProperty(name="Edit Mode", default=True,
                            description="Enter Edit Mode on the object with the faces selected")
    frame: BoolProperty(name="Frame", default=True,
                        description="Frame the finding in the 3D View (View Selected)")

    @classmethod
    def poll(cls, context):
        return _results_poll(cls, context, need_findings=True)

    @classmethod
    def description(cls, _context, properties):
        return ("Show the previous finding (infos, then warnings, then errors, backwards)"
                if properties.step < 0 else
                "Show the next finding: errors first, then warnings, then infos")

    def execute(self, context):
        s = context.scene.capsule_collision
        order = finding_order(context.scene)
        if not order:
            self.report({"ERROR"}, "no findings: every result passed")
            return {"CANCELLED"}
        step = -1 if self.step < 0 else 1
        if s.results_index in order:
            index = order[(order.index(s.results_index) + step) % len(order)]
        else:
            index = order[0] if step > 0 else order[-1]
        return show_row(self, context, index, self.edit_mode, self.frame)


classes = (CAPSULE_COLLISION_OT_select_result, CAPSULE_COLLISION_OT_goto_finding)
