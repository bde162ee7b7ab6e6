"""Operators of Capsule Collision (``capsule_collision.*``): capsules, checks, selection, presets.

Each operator is a thin adapter (STYLE habit 10): read the level through ``scene_data``, call
``core`` on its arrays, then write the results back as data (``results``). Everything is
computed before anything is written, so a ``ValueError`` becomes an ``{'ERROR'}`` report and
the scene is left unchanged. Audits are in ``operators_audit``, walk-throughs in
``operators_walk``.
"""

import json
from typing import Any, NamedTuple

import bpy
import numpy as np
from bpy.props import EnumProperty, StringProperty

from .. import core
from ..core import report as core_report
from ..core.checks.held import held_document, held_level
from . import cache, level_parts, penetration, properties, results, scene_data, staleness

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


NO_SPAWN = ("no spawn: select a capsule and tick Spawn in the Active Object panel (the "
            "character starts at its foot)")


class SpawnInputs(NamedTuple):
    """What a check that floods from the spawns reads before it starts: the objects that were
    in Edit Mode, the spawn capsules, the character, the level, its depsgraph and the spawns'
    feet (K, 3) in metres."""

    edited: tuple
    spawns: list
    settings: Any
    level: Any
    depsgraph: Any
    feet: np.ndarray


def spawn_inputs(context) -> SpawnInputs:
    """Read a spawn check's inputs (Edit Mode flushed first). ValueError when there is no
    spawn, or the level or settings cannot be read."""
    edited = leave_edit_mode(context)
    spawns = scene_data.spawn_objects(context.scene)
    if not spawns:
        raise ValueError(NO_SPAWN)
    settings = controller_settings(context)
    level, depsgraph = level_of(context)
    return SpawnInputs(edited, spawns, settings, level, depsgraph,
                       scene_data.spawn_feet(spawns, level.unit_scale))


def spawn_poll(cls, context) -> bool:
    """Poll of the checks that flood from the spawns: ``object_mode_poll`` and at least one
    capsule marked Spawn; says why it is disabled."""
    if not object_mode_poll(cls, context):
        return False
    if not scene_data.spawn_objects(context.scene):
        cls.poll_message_set("No spawn: select a capsule and tick Spawn in the Active "
                             "Object panel")
        return False
    return True


def leave_edit_mode(context) -> tuple:
    """Edit Mode keeps its own copy of the mesh: flush it (back to Object Mode) before reading
    or writing data. Returns the names of the objects that were in Edit Mode."""
    edited = tuple(o.name for o in context.view_layer.objects if o.mode == "EDIT")
    if context.mode != "OBJECT":
        ob = context.view_layer.objects.active
        with context.temp_override(active_object=ob, object=ob):
            bpy.ops.object.mode_set(mode="OBJECT")
    return edited


def edit_note(edited) -> str:
    """The words an operator adds when it flushed Edit Mode ("" when nothing was edited)."""
    if not edited:
        return ""
    return f"; {', '.join(edited)} left Edit Mode, its edits checked"


class Progress:
    """``window_manager.progress_*`` as a context manager (no-op without a window manager).

    Nested uses (a check run by Re-check All) leave the outer progress alone."""

    active = 0  # progress bars open now (only the outermost one drives the cursor)

    def __init__(self, context, total):
        self.wm = context.window_manager
        self.total = max(int(total), 1)
        self.outer = False

    def __enter__(self):
        self.outer = Progress.active == 0
        Progress.active += 1
        if self.wm is not None and self.outer:
            self.wm.progress_begin(0, self.total)
        return self

    def update(self, i):
        if self.wm is not None and self.outer:
            self.wm.progress_update(min(int(i), self.total))

    def __exit__(self, *exc):
        Progress.active -= 1
        if self.wm is not None and self.outer:
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
        edited = leave_edit_mode(context)
        return check_penetration(context, capsule_objects(context), edited)


def check_penetration(context, capsules, edited=()):
    """Judge ``capsules`` (capsule objects) on the level and write their states, rows and the
    ``capsule_penetration`` attribute (``penetration.write``, the live check's writer too).
    Returns the message, or ("WARNING", message) when an expectation is not met."""
    if not capsules:
        raise ValueError("no capsules to check: add one with Add Capsule")
    level, _dg = level_of(context)
    with Progress(context, 2) as progress:
        judged = penetration.judge(level, capsules)
        progress.update(1)
    written = penetration.write(context.scene, level, judged)
    message = (f"{len(capsules)} capsules checked: {written.penetrating} penetrating, "
               f"{written.faces} faces")
    if written.unmapped:
        message += (f"; {written.unmapped} faces come from modifiers and map to no original "
                    "face (listed, not selectable)")
    message += edit_note(edited)
    if written.failed:
        return "WARNING", message + f"; {written.failed} capsules not as expected"
    return message


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
        return classify_walkability(context, leave_edit_mode(context))


def classify_walkability(context, edited=()):
    """Classify the level's faces, write the attributes, rows (data: no severity) and counts.
    Returns the message."""
    scene = context.scene
    settings = controller_settings(context)
    level, _dg = level_of(context)
    with Progress(context, 2) as progress:
        codes = core.classify_triangles(level.mesh, settings.max_slope_deg, settings.up)
        progress.update(1)
    areas = level.mesh.areas
    key = staleness.inputs_key(scene, "WALKABILITY")
    rows, counts, class_areas = [], [0, 0, 0, 0], [0.0, 0.0, 0.0, 0.0]
    for code, name in enumerate(properties.WALKABILITY_CLASSES):
        tris = np.flatnonzero(codes == code)
        class_areas[code] = float(areas[tris].sum())
        for obj_index, faces, unmapped, sel in results.group_triangles(level, tris):
            level_name = level.objects[obj_index]
            target = results.object_for(level_name)
            oname = target.name if target is not None else level_name
            area = float(areas[sel].sum())
            counts[code] += int(faces.size + unmapped)
            rows.append({"kind": "WALKABILITY", "capsule": "", "object": oname,
                         "instancer": results.instancer_of(level_name, target),
                         "label": f"{name}: {faces.size + unmapped} faces of {oname}, "
                                  f"{area:.3g} m²",
                         "face_count": int(faces.size + unmapped), "value": area,
                         "faces": faces, "unmapped": int(unmapped), "stamp": level.stamp,
                         "inputs": key, "severity": "NONE"})  # framed from its faces
    results.write_walkability(level, codes)
    level_parts.remember_results(scene, "WALKABILITY", level, np.arange(codes.size), codes)
    results.replace_rows(scene, {"WALKABILITY"}, rows)
    s = scene.capsule_collision
    s.walk_counts = counts
    s.walk_areas = class_areas
    parts = ", ".join(f"{c} {n.lower()}" for n, c in
                      zip(properties.WALKABILITY_CLASSES, counts))
    return f"Walkability of {len(level.objects)} objects: {parts} faces" + edit_note(edited)


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
                st.inside_solid = ""
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
    """Write the results the panel holds as JSON (the pipeline tool's schema), stale ones
    marked stale; runs no check"""

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
        if not context.scene.capsule_collision.results:
            self.report({"WARNING"}, NOTHING_TO_EXPORT)
            return {"CANCELLED"}
        try:
            report = held_report(context)
        except ValueError as exc:  # a row core cannot read as a finding
            self.report({"ERROR"}, str(exc))
            return {"CANCELLED"}
        path = bpy.path.abspath(self.filepath)
        try:
            with open(path, "w", encoding="utf-8") as f:
                f.write(json.dumps(report, indent=1, allow_nan=False) + "\n")
        except OSError as exc:
            self.report({"ERROR"}, f"cannot write {path}: {exc.strerror}")
            return {"CANCELLED"}
        summary, stale = report["summary"], report["run"]["stale_findings"]
        message = (f"Wrote {path}: {summary['findings']} findings"
                   if summary["findings"] else f"Wrote {path}: no findings")
        if stale:
            message += f", {stale} stale (marked): Re-check All to refresh them"
        context.scene.capsule_collision.last_report = message
        self.report({"WARNING"} if stale else {"INFO"}, message)
        return {"FINISHED"}


NOTHING_TO_EXPORT = ("Nothing to export: the panel holds no results; run the checks first "
                     "(Re-check All), then export what they found")
# row kind -> the check (core.report.CHECKS) that wrote it
ROW_KIND_CHECKS = {"PENETRATION": "penetration", "WALKABILITY": "walkability",
                   "STAND": "stand", "STAIRS": "stairs", "HEADROOM": "headroom",
                   "LEDGE": "ledges", "WALK": "walks", "REACHABILITY": "reachability",
                   "ISLAND": "reachability", "TRAP": "reachability"}


def held_report(context) -> dict:
    """The report document of the results the panel holds (``core.checks.held``): one
    finding per problem of the rows that are findings (counted as the panel counts them),
    each stale one marked ``stale`` with its reason (``staleness``); the level's name, file,
    objects and settings as they are now. Runs no check. A level that cannot be read now
    (every collision mesh deleted) still exports the rows, stale as "level changed"."""
    scene = context.scene
    s = scene.capsule_collision
    try:
        level = level_of(context)[0]
    except ValueError:
        level = None
    reasons = staleness.stale_reasons(scene, level.stamp if level is not None else "gone")
    unit = level.unit_scale if level is not None else properties.unit_scale(scene)
    rows = list(s.results)
    entries = [results.held_entry(r, unit, reason)
               for r, reason in zip(rows, reasons) if results.is_finding(r)]
    try:
        settings = controller_settings(context).to_dict()
    except ValueError:
        settings = {}
    checks = [c for c in core_report.CHECKS
              if c in {ROW_KIND_CHECKS.get(r.kind) for r in rows}]
    walkability = None
    if "walkability" in checks:
        walkability = {name.lower(): {"faces": int(n), "area_m2": round(float(a), 4)}
                       for name, n, a in zip(properties.WALKABILITY_CLASSES, s.walk_counts,
                                             s.walk_areas)}
    name = bpy.path.basename(bpy.data.filepath) or scene.name
    level_doc = held_level(entries, level=name, file=bpy.data.filepath or None,
                           objects=level.objects if level is not None else (),
                           settings=settings,
                           triangles=level.mesh.n_triangles if level is not None else 0,
                           checks=checks,
                           min_depth=core.verdicts.MIN_REPORTED_DEPTH,
                           walkability=walkability)
    return held_document([level_doc])


classes = (
    CAPSULE_COLLISION_OT_add_capsule,
    CAPSULE_COLLISION_OT_check_penetration,
    CAPSULE_COLLISION_OT_classify_walkability,
    CAPSULE_COLLISION_OT_apply_preset,
    CAPSULE_COLLISION_OT_clear_results,
    CAPSULE_COLLISION_OT_export_report,
)
