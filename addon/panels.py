"""The "Capsule Collision" tab of the 3D View sidebar (N panel).

Panels only draw what the data says (scene settings, result rows, object state); they never
compute a check. Staleness uses the level cache's current stamp when it has one (no read).
"""

import bpy

from ..core.checks.held import finding_counts
from ..core.checks.sanity import level_warnings
from . import cache, live, properties, results, scene_data, staleness

CATEGORY = "Capsule Collision"

KIND_ICONS = {
    "PENETRATION": "MOD_PHYSICS",
    "WALKABILITY": "MOD_FLUIDSIM",
    "STAND": "ARMATURE_DATA",
    "STAIRS": "MOD_ARRAY",
    "HEADROOM": "TRIA_UP_BAR",
    "LEDGE": "TRIA_DOWN_BAR",
    "WALK": "CON_FOLLOWPATH",
    "REACHABILITY": "ORIENTATION_GIMBAL",
    "ISLAND": "MESH_PLANE",
    "TRAP": "TRIA_DOWN",
    "SPAWN": "ARMATURE_DATA",
}
KIND_NAMES = {kind: name for kind, name, _ in properties.RESULT_KINDS}
# Said under the audits while no capsule is marked Spawn (core.checks.findings scopes them).
NO_SPAWN_NOTE = "Mark a spawn: the audits then list only problems a player can reach"
ADVANCED_SETTINGS = ("min_step_depth", "skin_width", "snap_distance", "speed", "gravity",
                     "max_fall_speed", "max_iterations", "jump_height")


# level stamp -> sanity warnings (computed once per level)
_warnings_by_stamp: dict[str, list[str]] = {}


def sanity_warnings(scene):
    """``core.sanity.level_warnings`` for the cached level (no read, no build), as text."""
    level = cache.peek(scene)
    if level is None:
        return []
    if level.stamp not in _warnings_by_stamp:
        try:
            settings = properties.controller_settings(scene)
        except ValueError:
            settings = None
        warnings = level_warnings(level.mesh, settings)
        _warnings_by_stamp.clear()
        _warnings_by_stamp[level.stamp] = [getattr(w, "message", str(w)) for w in warnings]
    return _warnings_by_stamp[level.stamp]


# scene name -> stale reason per row, computed once per draw of the Results panel (before
# its list draws the rows)
_stale_by_scene: dict[str, list[str]] = {}


def stale_reasons(scene, view_layer=None):
    """``staleness.stale_reasons`` of the scene's rows against the cached level (no read: the
    level is not judged when nothing is cached) and the scene now."""
    level = cache.peek(scene)
    layer = view_layer or bpy.context.view_layer
    reasons = staleness.stale_reasons(scene, None if level is None else level.stamp,
                                      getattr(layer, "depsgraph", None))
    _stale_by_scene[scene.name] = reasons
    return reasons


def stale_summary(reasons) -> str:
    """"3 results are stale (capsule moved or resized, level changed): check again"."""
    stale = [r for r in reasons if r]
    if not stale:
        return ""
    why = ", ".join(dict.fromkeys(stale))
    return f"{len(stale)} results are stale ({why}): check again"


def has_target(row) -> bool:
    """Whether a row has something to select (faces, a capsule, a marker, a path)."""
    return bool(row.object or row.capsule)


class CAPSULE_COLLISION_UL_results(bpy.types.UIList):
    """Result rows: severity icon, label (stale rows say so); the arrow selects and frames
    the row's faces (Edit Mode) or the capsule, marker or path it is about."""

    def draw_item(self, context, layout, _data, item, _icon, _active_data, _active_prop,
                  index=0, _flt_flag=0):
        row = layout.row(align=True)
        icon = properties.SEVERITY_ICONS.get(item.severity, "DOT")
        if item.severity == "NONE":
            icon = KIND_ICONS.get(item.kind, "DOT")
        reasons = _stale_by_scene.get(getattr(item.id_data, "name", ""), [])
        stale = reasons[index] if index < len(reasons) else ""
        note = f"  [stale: {stale}]" if stale else ""
        if item.waived_by:  # marked as intended: greyed, with a tick, counted apart
            row.active = False
            icon = "CHECKMARK"
            note += f"  [waived by {item.waived_by}: {item.waived_reason}]"
        row.label(text=item.label + note, icon=icon)
        if has_target(item):
            op = row.operator("capsule_collision.select_result", text="",
                              icon="RESTRICT_SELECT_OFF", emboss=False)
            op.index = index

    def filter_items(self, _context, data, propname):
        rows = getattr(data, propname)
        shown = shown_rows(rows, getattr(data, "show_all_results", True))
        flags = [self.bitflag_filter_item if k in shown else 0 for k in range(len(rows))]
        if self.filter_name:
            needle = self.filter_name.lower()
            flags = [f if needle in r.label.lower() else 0 for f, r in zip(flags, rows)]
        return flags, grouped_order(rows)


ROWS_PER_CHECK = 5  # finding rows listed per check when "Show All" is off (worst first)
_FINDING_SEVERITIES = ("ERROR", "WARNING", "INFO")


def grouped_order(rows) -> list[int]:
    """The list position of each row: grouped per check (row kind, in the order the kinds
    first appear), each group's errors, then warnings, infos and the rest, each in row order
    (core lists a check's findings worst first)."""
    first: dict = {}
    keys = []
    for k, r in enumerate(rows):
        group = first.setdefault(r.kind, len(first))
        severity = (_FINDING_SEVERITIES.index(r.severity) if r.severity in _FINDING_SEVERITIES
                    else len(_FINDING_SEVERITIES))
        keys.append((group, severity, k))
    order = sorted(range(len(rows)), key=keys.__getitem__)
    position = [0] * len(rows)
    for pos, k in enumerate(order):
        position[k] = pos
    return position


def shown_rows(rows, show_all: bool) -> set[int]:
    """Row indices listed: all, or per check the worst ROWS_PER_CHECK findings and every row
    that is no finding (passed rows, summaries)."""
    if show_all:
        return set(range(len(rows)))
    order = grouped_order(rows)
    by_position = sorted(range(len(rows)), key=order.__getitem__)
    seen: dict = {}
    shown = set()
    for k in by_position:
        r = rows[k]
        if r.severity in _FINDING_SEVERITIES:
            seen[r.kind] = seen.get(r.kind, 0) + 1
            if seen[r.kind] > ROWS_PER_CHECK:
                continue
        shown.add(k)
    return shown


def check_counts(rows) -> list[tuple[str, str]]:
    """(kind, "3 warnings, 1 info") per check with findings, in the order kinds appear: the
    counts of core's findings (``core.checks.held.finding_counts``: one per problem, a
    capsule's rows on several objects one), what report.json and JUnit count."""
    by_kind: dict = {}
    for r in results.finding_rows_of(rows):
        by_kind.setdefault(r.kind, []).append(results.held_entry(r, 1.0, faces=False))
    out = []
    for kind, entries in by_kind.items():
        c = finding_counts(entries)  # one merge per check and redraw
        waived = c.pop("waived")
        words = [f"{n} {s}{'' if n == 1 else 's'}" for s, n in c.items() if n]
        words += [f"{waived} waived"] if waived else []
        out.append((kind, ", ".join(words)))
    return out


def draw_summary(layout, scene):
    """"N errors, M warnings, K passed" and the previous / next finding buttons."""
    counts = results.severity_counts(scene)
    icon = ("CANCEL" if counts["error"] else "ERROR" if counts["warning"] else "CHECKMARK")
    row = layout.row(align=True)
    row.label(text=results.summary_text(counts), icon=icon)
    row.operator("capsule_collision.goto_finding", text="", icon="TRIA_LEFT").step = -1
    row.operator("capsule_collision.goto_finding", text="", icon="TRIA_RIGHT").step = 1


class SidebarPanel(bpy.types.Panel):
    """Base of the tab's panels (never registered itself)."""

    bl_space_type = "VIEW_3D"
    bl_region_type = "UI"
    bl_category = CATEGORY


class CAPSULE_COLLISION_PT_main(SidebarPanel):
    bl_label = "Capsule Collision"
    bl_idname = "CAPSULE_COLLISION_PT_main"

    def draw(self, context):
        layout = self.layout
        s = context.scene.capsule_collision
        if s.results:
            draw_summary(layout, context.scene)
        col = layout.column(align=True)
        col.operator("capsule_collision.add_capsule", icon="MESH_CAPSULE")
        col.operator("capsule_collision.check_penetration", icon="MOD_PHYSICS")
        col.operator("capsule_collision.classify_walkability", icon="MOD_FLUIDSIM")
        col.operator("capsule_collision.recheck_all", icon="FILE_REFRESH")
        row = layout.row(align=True)
        row.prop(s, "live_check")
        text = live.status(context.scene)
        if text:
            layout.label(text=text, icon="INFO")
        if s.last_report:
            layout.label(text=s.last_report)


class CAPSULE_COLLISION_PT_character(SidebarPanel):
    bl_label = "Character"
    bl_parent_id = "CAPSULE_COLLISION_PT_main"

    def draw(self, context):
        layout = self.layout
        layout.use_property_split = True
        layout.use_property_decorate = False
        s = context.scene.capsule_collision
        row = layout.row(align=True)
        row.prop(s, "preset")
        if s.preset != "CUSTOM":
            row.operator("capsule_collision.apply_preset", text="", icon="FILE_REFRESH"
                         ).engine = s.preset
        layout.prop(s, "model")  # which behaviour every verdict models (issue 20)
        for name in ("radius", "height", "max_slope_deg", "step_height"):
            layout.prop(s, name)


class CAPSULE_COLLISION_PT_character_advanced(SidebarPanel):
    bl_label = "Controller"
    bl_parent_id = "CAPSULE_COLLISION_PT_character"
    bl_options = {"DEFAULT_CLOSED"}

    def draw(self, context):
        layout = self.layout
        layout.use_property_split = True
        layout.use_property_decorate = False
        s = context.scene.capsule_collision
        for name in ADVANCED_SETTINGS:
            layout.prop(s, name)


class CAPSULE_COLLISION_PT_collision(SidebarPanel):
    bl_label = "Collision Source"
    bl_parent_id = "CAPSULE_COLLISION_PT_main"

    def draw(self, context):
        layout = self.layout
        s = context.scene.capsule_collision
        layout.prop(s, "collision_source", text="")
        if s.collision_source == "COLLECTION":
            layout.prop(s, "collision_collection", text="")
        for text in sanity_warnings(context.scene):
            layout.label(text=text, icon="ERROR")


class CAPSULE_COLLISION_PT_capsule(SidebarPanel):
    """The active object's role (a mesh polyline becomes a path here) and, for a capsule,
    its size, expectation and live state; for a path, its expected walk verdict."""

    bl_label = "Active Object"
    bl_parent_id = "CAPSULE_COLLISION_PT_main"

    @classmethod
    def poll(cls, context):
        return context.active_object is not None

    def draw(self, context):
        layout = self.layout
        layout.use_property_split = True
        layout.use_property_decorate = False
        st = context.active_object.capsule_collision
        layout.prop(st, "role")
        if st.role == "PATH":
            layout.prop(st, "expect_walk")
            return
        if st.role != "CAPSULE":
            return
        layout.prop(st, "radius")
        layout.prop(st, "height")
        layout.prop(st, "expect")
        layout.prop(st, "spawn")
        box = layout.box()
        if st.penetrating_count < 0:
            box.label(text="Not checked yet")
        elif st.inside_solid:
            box.label(text=f"Buried inside {st.inside_solid}", icon="ERROR")
            box.prop(st, "deepest_depth")
            box.prop(st, "push_out")
        elif st.penetrating_count == 0:
            box.label(text="Clear", icon="CHECKMARK")
        else:
            box.label(text=f"{st.penetrating_count} triangles penetrated", icon="ERROR")
            box.prop(st, "deepest_depth")
            box.prop(st, "push_out")


class CAPSULE_COLLISION_PT_audits(SidebarPanel):
    bl_label = "Audits and Walks"
    bl_parent_id = "CAPSULE_COLLISION_PT_main"

    def draw(self, context):
        layout = self.layout
        if not scene_data.spawn_objects(context.scene):
            layout.label(text=NO_SPAWN_NOTE, icon="INFO")
        grid = layout.grid_flow(columns=2, align=True)
        grid.operator("capsule_collision.stand_test", icon="ARMATURE_DATA")
        grid.operator("capsule_collision.stair_audit", icon="MOD_ARRAY")
        grid.operator("capsule_collision.headroom_audit", icon="TRIA_UP_BAR")
        grid.operator("capsule_collision.ledge_audit", icon="TRIA_DOWN_BAR")
        layout.operator("capsule_collision.reachability", icon=KIND_ICONS["REACHABILITY"])
        col = layout.column(align=True)
        col.operator("capsule_collision.walkthrough", icon="CON_FOLLOWPATH")
        col.operator("capsule_collision.walkthrough", text="Walk and Bake to Capsule",
                     icon="KEYINGSET").bake = True
        col.operator("capsule_collision.compare_frame_rates", icon="TIME")


class CAPSULE_COLLISION_PT_results(SidebarPanel):
    bl_label = "Results"
    bl_parent_id = "CAPSULE_COLLISION_PT_main"

    def draw(self, context):
        layout = self.layout
        scene = context.scene
        s = scene.capsule_collision
        reasons = stale_reasons(scene, getattr(context, "view_layer", None))
        counts = check_counts(s.results)
        if counts:
            col = layout.column(align=True)
            for kind, words in counts:
                col.label(text=f"{KIND_NAMES.get(kind, kind.title())}: {words}",
                          icon=KIND_ICONS.get(kind, "DOT"))
            hidden = len(s.results) - len(shown_rows(s.results, s.show_all_results))
            label = "Show All" if not hidden else f"Show All ({hidden} more)"
            layout.prop(s, "show_all_results", text=label)
        layout.template_list("CAPSULE_COLLISION_UL_results", "", s, "results", s,
                             "results_index", rows=5)
        row = layout.row(align=True)
        row.operator("capsule_collision.select_result", icon="RESTRICT_SELECT_OFF")
        row.operator("capsule_collision.goto_finding", text="Previous",
                     icon="TRIA_LEFT").step = -1
        row.operator("capsule_collision.goto_finding", text="Next",
                     icon="TRIA_RIGHT").step = 1
        row = layout.row(align=True)
        row.operator("capsule_collision.waive_finding", icon="CHECKMARK")
        row.operator("capsule_collision.remove_waiver", icon="X")
        text = stale_summary(reasons)
        if text:
            layout.label(text=text, icon="ERROR")
        if any(s.walk_counts):
            box = layout.box()
            box.label(text="Walkability")
            grid = box.grid_flow(columns=3, align=True)
            for name, count, area in zip(properties.WALKABILITY_CLASSES, s.walk_counts,
                                         s.walk_areas):
                grid.label(text=name)
                grid.label(text=f"{count} faces")
                grid.label(text=f"{area:.4g} m²")
        if s.frame_rate_report:
            layout.label(text=frame_rate_summary(s.frame_rate_report), icon="TIME")
        row = layout.row(align=True)
        row.operator("capsule_collision.export_report", icon="EXPORT")
        row.operator("capsule_collision.clear_results", icon="TRASH")


def frame_rate_summary(text):
    """One line from the stored 30/60/120 Hz comparison (JSON)."""
    import json  # noqa: PLC0415

    try:
        data = json.loads(text)
    except ValueError:
        return "Frame-rate report unreadable"
    hz = "/".join(str(r) for r in data.get("rates", ()))
    if data.get("consistent"):
        return f"{data.get('path', '')}: same verdicts at {hz} Hz"
    return f"{data.get('path', '')}: {len(data.get('differences', []))} differences at {hz} Hz"


class CAPSULE_COLLISION_PT_overlay(SidebarPanel):
    bl_label = "Overlay"
    bl_parent_id = "CAPSULE_COLLISION_PT_main"
    bl_options = {"DEFAULT_CLOSED"}

    def draw_header(self, context):
        self.layout.prop(context.scene.capsule_collision, "show_overlay", text="")

    def draw(self, context):
        layout = self.layout
        s = context.scene.capsule_collision
        col = layout.column(align=True)
        col.active = s.show_overlay
        for name in ("show_capsules", "show_penetration", "show_walkability", "show_traces",
                     "show_events", "show_stand", "show_stairs", "show_headroom", "show_ledges",
                     "show_out_of_reach", "show_reachability", "show_legend"):
            col.prop(s, name)


classes = (
    CAPSULE_COLLISION_UL_results,
    CAPSULE_COLLISION_PT_main,
    CAPSULE_COLLISION_PT_character,
    CAPSULE_COLLISION_PT_character_advanced,
    CAPSULE_COLLISION_PT_collision,
    CAPSULE_COLLISION_PT_capsule,
    CAPSULE_COLLISION_PT_audits,
    CAPSULE_COLLISION_PT_results,
    CAPSULE_COLLISION_PT_overlay,
)
