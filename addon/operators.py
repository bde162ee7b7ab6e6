"""Operators of Capsule Collision (``capsule_collision.*``): capsules, checks, selection, presets.

Each operator is a thin adapter (STYLE habit 10): read the level through ``scene_data``, call
``core`` on its arrays, then write the results back as data (``results``). Everything is
computed before anything is written, so a ``ValueError`` becomes an ``{'ERROR'}`` report and
the scene is left unchanged. Audits are in ``operators_audit``, walk-throughs in
``operators_walk``.
"""

import json

import bpy
import numpy as np
from bpy.props import BoolProperty, EnumProperty, IntProperty, StringProperty

from .. import core
from ..core import report as core_report
from ..core import verdicts
from . import cache, level_parts, properties, results, scene_data

# ---------------------------------------------------------------- shared adapter pieces

def capsule_objects(context, selected_first=True):
    """Selected capsules, or every capsule of the scene when none is selected."""
    if selected_first:
        sel = [o for o in (context.selected_objects or ())
               if o.capsule_collision.role == "CAPSULE"]
        if sel:
            return sel
    return [o for o in context.scene.objects if o.capsule_collision.role == "CAPSULE"]


def level_of(context):
    """(LevelGeometry, depsgraph) of the scene; ValueError when there is no collision mesh."""
    depsgraph = context.evaluated_depsgraph_get()
    return cache.cached_level(depsgraph, context.scene), depsgraph


def object_mode_poll(cls, context, edit_mesh_ok=True, message=None):
    """Poll of the operators that need a scene in Object Mode (or mesh Edit Mode, flushed by
    ``leave_edit_mode``, when ``edit_mesh_ok``); says why it is disabled."""
    if context.scene is None:
        cls.poll_message_set("No scene")
        return False
    modes = ("OBJECT", "EDIT_MESH") if edit_mesh_ok else ("OBJECT",)
    if context.mode not in modes:
        cls.poll_message_set(message or ("Switch to Object Mode or mesh Edit Mode first"
                                         if edit_mesh_ok else "Switch to Object Mode first"))
        return False
    return True


def leave_edit_mode(context):
    """Edit Mode keeps its own copy of the mesh: flush it before reading or writing data."""
    if context.mode != "OBJECT":
        ob = context.view_layer.objects.active
        with context.temp_override(active_object=ob, object=ob):
            bpy.ops.object.mode_set(mode="OBJECT")


class Progress:
    """``window_manager.progress_*`` as a context manager (no-op without a window manager)."""

    def __init__(self, context, total):
        self.wm = context.window_manager
        self.total = max(int(total), 1)

    def __enter__(self):
        if self.wm is not None:
            self.wm.progress_begin(0, self.total)
        return self

    def update(self, i):
        if self.wm is not None:
            self.wm.progress_update(min(int(i), self.total))

    def __exit__(self, *exc):
        if self.wm is not None:
            self.wm.progress_end()
        return False


class CheckOperator:
    """Mixin: ``run(context)`` returns the INFO message; ValueError -> {'ERROR'} report."""

    def execute(self, context):
        try:
            message = self.run(context)
        except ValueError as exc:
            self.report({"ERROR"}, str(exc))
            return {"CANCELLED"}
        if isinstance(message, tuple):
            level, message = message
            self.report({level}, message)
        else:
            self.report({"INFO"}, message)
        context.scene.capsule_collision.last_report = message
        return {"FINISHED"}


def controller_settings(context):
    """Scene settings in metres; ValueError says which value is wrong."""
    return properties.controller_settings(context.scene)


# ---------------------------------------------------------------- add capsule

class CAPSULE_COLLISION_OT_add_capsule(bpy.types.Operator):
    """Add a character capsule at the 3D cursor: its origin is the foot, local Z the axis"""

    bl_idname = "capsule_collision.add_capsule"
    bl_label = "Add Capsule"
    bl_options = {"REGISTER", "UNDO"}

    @classmethod
    def poll(cls, context):
        return object_mode_poll(cls, context, edit_mesh_ok=False,
                                message="Switch to Object Mode to add a capsule")

    def execute(self, context):
        scene = context.scene
        s = scene.capsule_collision
        try:
            settings = controller_settings(context)  # refuses radius <= 0, height < 2 r
        except ValueError as exc:
            self.report({"ERROR"}, str(exc))
            return {"CANCELLED"}
        scale = properties.unit_scale(scene)
        ob = bpy.data.objects.new("Capsule", None)
        ob.empty_display_type = "SINGLE_ARROW"
        ob.empty_display_size = settings.height / scale
        ob.location = scene.cursor.location
        st = ob.capsule_collision
        st.role = "CAPSULE"
        st.radius = settings.radius / scale
        st.height = settings.height / scale
        collection = context.collection or scene.collection
        if collection.library is not None:
            collection = scene.collection
        collection.objects.link(ob)
        for other in context.selected_objects:
            other.select_set(False)
        ob.select_set(True)
        context.view_layer.objects.active = ob
        message = f"Added {ob.name} (radius {s.radius:g}, height {s.height:g})"
        self.report({"INFO"}, message)
        s.last_report = message
        return {"FINISHED"}


# ---------------------------------------------------------------- penetration

class CAPSULE_COLLISION_OT_check_penetration(CheckOperator, bpy.types.Operator):
    """Check capsules (selected, or all) against the collision meshes: mark penetrated faces
    in the face attribute capsule_penetration and list them per object"""

    bl_idname = "capsule_collision.check_penetration"
    bl_label = "Check Penetration"
    bl_options = {"REGISTER", "UNDO"}

    @classmethod
    def poll(cls, context):
        if not object_mode_poll(cls, context):
            return False
        if not capsule_objects(context, selected_first=False):
            cls.poll_message_set("No capsules in the scene: add one with Add Capsule")
            return False
        return True

    def run(self, context):
        leave_edit_mode(context)
        scene = context.scene
        capsules = capsule_objects(context)
        if not capsules:
            raise ValueError("no capsules to check: add one with Add Capsule")
        level, _dg = level_of(context)
        scale = level.unit_scale
        with Progress(context, 2) as progress:
            checks = [verdicts.CapsuleCheck(ob.name, scene_data.capsule_of(ob, scale),
                                            ob.capsule_collision.expect, source="scene")
                      for ob in capsules]
            # one batched query; contacts deeper than MIN_REPORTED_DEPTH, as the CLI reports
            found = verdicts.capsule_verdicts(level.mesh, [c.capsule for c in checks])
            progress.update(1)
        rows, unmapped_total, faces_total, penetrating, failed = [], 0, 0, 0, 0
        for ob, check, verdict in zip(capsules, checks, found):
            tris, depths, normals = verdict.triangles, verdict.depths, verdict.normals
            holds = verdicts.capsule_expectation_holds(check.expect, verdict)
            failed += not holds
            expect = "" if check.expect == verdicts.ANY else (
                f" (expected {check.expect}: {'met' if holds else 'NOT met'})")
            st = ob.capsule_collision
            st.penetrating_count = int(tris.size)
            st.deepest_depth = verdict.deepest / scale
            st.push_out = tuple(verdict.push_out / scale)
            st.state_stamp = level.stamp
            if not tris.size:
                rows.append({"kind": "PENETRATION", "label": f"{ob.name}: clear{expect}",
                             "capsule": ob.name, "stamp": level.stamp})
                continue
            penetrating += 1
            for obj_index, faces, unmapped, sel in results.group_triangles(level, tris):
                in_obj = np.isin(tris, sel)
                deepest = int(np.argmax(np.where(in_obj, depths, -np.inf)))
                target = results.object_for(level.objects[obj_index])
                name = target.name if target is not None else level.objects[obj_index]
                unmapped_total += unmapped
                faces_total += faces.size + unmapped
                extra = f", {unmapped} from modifiers" if unmapped else ""
                rows.append({
                    "kind": "PENETRATION", "capsule": ob.name, "object": name,
                    "label": f"{ob.name} in {name}: {faces.size + unmapped} faces{extra}, "
                             f"deepest {depths[deepest]:.4g} m{expect}",
                    "face_count": int(faces.size + unmapped), "value": float(depths[deepest]),
                    "push_out": tuple(normals[deepest] * depths[deepest] / scale),
                    "faces": faces, "unmapped": int(unmapped), "stamp": level.stamp,
                    "position": tuple(np.asarray(ob.matrix_world.translation)),
                })
        # rows of capsules not checked now stay; the attribute shows every row's faces
        results.replace_rows(scene, {"PENETRATION"}, rows, owners={ob.name for ob in capsules})
        results.write_face_flags(level, results.PENETRATION_ATTRIBUTE,
                                 results.faces_of_rows(scene, "PENETRATION"))
        message = (f"{len(capsules)} capsules checked: {penetrating} penetrating, "
                   f"{faces_total} faces")
        if unmapped_total:
            message += (f"; {unmapped_total} faces come from modifiers and map to no original "
                        "face (listed, not selectable)")
        if failed:
            return "WARNING", message + f"; {failed} capsules not as expected"
        return message


# ---------------------------------------------------------------- select a result row

class CAPSULE_COLLISION_OT_select_result(bpy.types.Operator):
    """Select exactly the faces of a result row (in Edit Mode, face select)"""

    bl_idname = "capsule_collision.select_result"
    bl_label = "Select Result Faces"
    bl_options = {"REGISTER", "UNDO"}

    index: IntProperty(name="Row", default=-1, description="Result row (-1: the active row)")
    edit_mode: BoolProperty(name="Edit Mode", default=True,
                            description="Enter Edit Mode on the object with the faces selected")

    @classmethod
    def poll(cls, context):
        if context.scene is None or not context.scene.capsule_collision.results:
            cls.poll_message_set("No results: run a check first")
            return False
        if context.mode not in ("OBJECT", "EDIT_MESH"):
            cls.poll_message_set("Switch to Object Mode or mesh Edit Mode first")
            return False
        return True

    def execute(self, context):
        s = context.scene.capsule_collision
        index = s.results_index if self.index < 0 else self.index
        if not 0 <= index < len(s.results):
            self.report({"ERROR"}, f"no result row {index}")
            return {"CANCELLED"}
        row = s.results[index]
        ob = bpy.data.objects.get(row.object) if row.object else None
        if ob is None and row.kind == "WALK":
            ob = bpy.data.objects.get(row.capsule)
        if ob is None:
            self.report({"ERROR"}, f"row {index} names no object that still exists "
                                   f"({row.object or row.capsule!r})")
            return {"CANCELLED"}
        faces = properties.decode_faces(row.faces)
        if ob.type == "MESH" and faces.size and faces.max() >= len(ob.data.polygons):
            self.report({"ERROR"}, f"{ob.name} has fewer faces than the result: it was edited "
                                   "since; run the check again")
            return {"CANCELLED"}
        stale = row.stamp and row.stamp != current_stamp(context)
        leave_edit_mode(context)
        for other in context.view_layer.objects:
            if other.select_get():
                other.select_set(False)
        if ob.name not in context.view_layer.objects:
            self.report({"ERROR"}, f"{ob.name} is not in this view layer")
            return {"CANCELLED"}
        ob.hide_set(False)
        ob.select_set(True)
        context.view_layer.objects.active = ob
        s.results_index = index
        if ob.type == "MESH":
            select_faces(ob.data, faces)
            context.tool_settings.mesh_select_mode = (False, False, True)
            if self.edit_mode:
                with context.temp_override(active_object=ob, object=ob, selected_objects=[ob],
                                           selected_editable_objects=[ob]):
                    bpy.ops.object.mode_set(mode="EDIT")
        message = f"Selected {faces.size} faces of {ob.name}"
        if row.unmapped:
            message += f"; {row.unmapped} more come from modifiers and cannot be selected"
        if stale:
            self.report({"WARNING"}, message + "; the result is stale: the level changed "
                                               "since, run the check again")
        else:
            self.report({"INFO"}, message)
        return {"FINISHED"}


def select_faces(mesh, faces):
    """Select exactly ``faces`` (and their edges and vertices) of ``mesh``; nothing else."""
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


def current_stamp(context):
    """The level's geometry stamp now ("" when the level cannot be read)."""
    try:
        return level_of(context)[0].stamp
    except ValueError:
        return ""


def stale_rows(context):
    """Number of result rows computed on another level stamp than the current one."""
    s = context.scene.capsule_collision
    if not s.results:
        return 0
    stamp = current_stamp(context)
    return sum(1 for r in s.results if r.stamp and r.stamp != stamp)


# ---------------------------------------------------------------- walkability

class CAPSULE_COLLISION_OT_classify_walkability(CheckOperator, bpy.types.Operator):
    """Classify every collision face as walkable, steep, wall or ceiling (face attribute
    walkability, colour attribute walkability_color), with counts and areas per class"""

    bl_idname = "capsule_collision.classify_walkability"
    bl_label = "Classify Walkability"
    bl_options = {"REGISTER", "UNDO"}

    @classmethod
    def poll(cls, context):
        return object_mode_poll(cls, context)

    def run(self, context):
        leave_edit_mode(context)
        scene = context.scene
        settings = controller_settings(context)
        level, _dg = level_of(context)
        with Progress(context, 2) as progress:
            codes = core.classify_triangles(level.mesh, settings.max_slope_deg, settings.up)
            progress.update(1)
        areas = level.mesh.areas
        rows, counts, class_areas = [], [0, 0, 0, 0], [0.0, 0.0, 0.0, 0.0]
        for code, name in enumerate(properties.WALKABILITY_CLASSES):
            tris = np.flatnonzero(codes == code)
            class_areas[code] = float(areas[tris].sum())
            for obj_index, faces, unmapped, sel in results.group_triangles(level, tris):
                target = results.object_for(level.objects[obj_index])
                oname = target.name if target is not None else level.objects[obj_index]
                area = float(areas[sel].sum())
                counts[code] += int(faces.size + unmapped)
                rows.append({"kind": "WALKABILITY", "capsule": "", "object": oname,
                             "label": f"{name}: {faces.size + unmapped} faces of {oname}, "
                                      f"{area:.3g} m²",
                             "face_count": int(faces.size + unmapped), "value": area,
                             "faces": faces, "unmapped": int(unmapped),
                             "stamp": level.stamp})
        results.write_walkability(level, codes)
        level_parts.remember_results(scene, "WALKABILITY", level, np.arange(codes.size), codes)
        results.replace_rows(scene, {"WALKABILITY"}, rows)
        s = scene.capsule_collision
        s.walk_counts = counts
        s.walk_areas = class_areas
        parts = ", ".join(f"{c} {n.lower()}" for n, c in
                          zip(properties.WALKABILITY_CLASSES, counts))
        return f"Walkability of {len(level.objects)} objects: {parts} faces"


# ---------------------------------------------------------------- presets

class CAPSULE_COLLISION_OT_apply_preset(bpy.types.Operator):
    """Set the controller settings to an engine's character defaults (core.presets)"""

    bl_idname = "capsule_collision.apply_preset"
    bl_label = "Apply Preset"
    bl_options = {"REGISTER", "UNDO"}

    engine: EnumProperty(name="Engine", items=properties.PRESET_ITEMS[1:],
                         description="Engine whose defaults to apply")

    @classmethod
    def poll(cls, context):
        if context.scene is None:
            cls.poll_message_set("No scene")
            return False
        return True

    def invoke(self, context, _event):
        preset = context.scene.capsule_collision.preset
        if preset != "CUSTOM" and not self.properties.is_property_set("engine"):
            self.engine = preset
        return self.execute(context)

    def execute(self, context):
        try:
            settings = core.presets.preset(self.engine.lower())
        except ValueError as exc:
            self.report({"ERROR"}, str(exc))
            return {"CANCELLED"}
        properties.write_controller_settings(context.scene, settings, preset=self.engine)
        s = context.scene.capsule_collision
        message = (f"{self.engine.title()} preset: radius {settings.radius:g} m, height "
                   f"{settings.height:g} m, slope {settings.max_slope_deg:.4g}°, step "
                   f"{settings.step_height:g} m")
        s.last_report = message
        self.report({"INFO"}, message)
        return {"FINISHED"}


# ---------------------------------------------------------------- clear

class CAPSULE_COLLISION_OT_clear_results(bpy.types.Operator):
    """Remove everything Capsule Collision created: result objects and collection, face
    attributes, result rows, walk bakes, capsule states. Capsules and paths stay"""

    bl_idname = "capsule_collision.clear_results"
    bl_label = "Clear Results"
    bl_options = {"REGISTER", "UNDO"}

    @classmethod
    def poll(cls, context):
        return object_mode_poll(cls, context, edit_mesh_ok=False)

    def execute(self, context):
        scene = context.scene
        objects = results.result_objects()
        n_objects = len(objects)
        for ob in objects:
            results.remove_object(ob)
        coll = bpy.data.collections.get(results.RESULTS_COLLECTION)
        if coll is not None and not coll.objects and not coll.children:
            bpy.data.collections.remove(coll)
        n_attrs = results.remove_attributes()
        n_actions = 0
        for action in list(bpy.data.actions):
            if action.library is None and action.get(results.BAKE_TAG):
                bpy.data.actions.remove(action)
                n_actions += 1
        for ob in scene.objects:
            st = ob.capsule_collision
            if st.role == "CAPSULE":
                st.penetrating_count = -1
                st.deepest_depth = 0.0
                st.push_out = (0.0, 0.0, 0.0)
                st.state_stamp = ""
        s = scene.capsule_collision
        n_rows = len(s.results)
        s.results.clear()
        s.results_index = -1
        s.walk_counts = (0, 0, 0, 0)
        s.walk_areas = (0.0, 0.0, 0.0, 0.0)
        s.frame_rate_report = ""
        message = (f"Cleared {n_rows} rows, {n_objects} result objects, {n_attrs} attributes, "
                   f"{n_actions} walk bakes")
        s.last_report = message
        self.report({"INFO"}, message)
        return {"FINISHED"}


# ---------------------------------------------------------------- export

class CAPSULE_COLLISION_OT_export_report(bpy.types.Operator):
    """Write the level check as JSON, the schema the pipeline tool writes"""

    bl_idname = "capsule_collision.export_report"
    bl_label = "Export Report"
    bl_options = {"REGISTER", "UNDO"}

    filepath: StringProperty(subtype="FILE_PATH", default="capsule_collision_report.json")
    filter_glob: StringProperty(default="*.json", options={"HIDDEN"})

    @classmethod
    def poll(cls, context):
        return object_mode_poll(cls, context)

    def invoke(self, context, _event):
        context.window_manager.fileselect_add(self)
        return {"RUNNING_MODAL"}

    def execute(self, context):
        try:
            report = build_report(context)
        except ValueError as exc:
            self.report({"ERROR"}, str(exc))
            return {"CANCELLED"}
        path = bpy.path.abspath(self.filepath)
        try:
            with open(path, "w", encoding="utf-8") as f:
                f.write(json.dumps(report, indent=1, allow_nan=False) + "\n")
        except OSError as exc:
            self.report({"ERROR"}, f"cannot write {path}: {exc.strerror}")
            return {"CANCELLED"}
        summary = report["summary"]
        message = (f"Wrote {path}: {summary['findings']} findings"
                   if summary["findings"] else f"Wrote {path}: no findings")
        context.scene.capsule_collision.last_report = message
        self.report({"INFO"}, message)
        return {"FINISHED"}


def build_report(context):
    """The scene's report document: ``core.report`` on the level, the scene's capsules (role
    CAPSULE) and paths (role PATH) with their expectations, the same schema the pipeline tool
    writes (one level). ValueError for an unreadable level, capsule, path or setting."""
    leave_edit_mode(context)
    scene = context.scene
    settings = controller_settings(context)
    level, depsgraph = level_of(context)
    scale = level.unit_scale
    capsules, paths = [], []
    for ob in sorted(scene.objects, key=lambda o: o.name):
        st = ob.capsule_collision
        if st.role == "CAPSULE":
            capsules.append(verdicts.CapsuleCheck(
                ob.name, scene_data.capsule_of(ob, scale), st.expect,
                foot=tuple(float(x) * scale for x in ob.matrix_world.translation),
                source="scene"))
        elif st.role == "PATH":
            paths.append(verdicts.PathCheck(
                ob.name, scene_data.path_points(ob, depsgraph, scale), st.expect_walk,
                source="scene"))
    with Progress(context, 1):
        res = core_report.run_checks(level.mesh, settings, capsules, paths)
    name = bpy.path.basename(bpy.data.filepath) or scene.name
    report = core_report.level_report(res, level=name, file=bpy.data.filepath or None,
                                      geometry=level)
    return core_report.combine_levels([report])


classes = (
    CAPSULE_COLLISION_OT_add_capsule,
    CAPSULE_COLLISION_OT_check_penetration,
    CAPSULE_COLLISION_OT_select_result,
    CAPSULE_COLLISION_OT_classify_walkability,
    CAPSULE_COLLISION_OT_apply_preset,
    CAPSULE_COLLISION_OT_clear_results,
    CAPSULE_COLLISION_OT_export_report,
)
