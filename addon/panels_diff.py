"""The tab's "Render vs Collision" sub-panel: judge the collision meshes against the render
meshes with the character (``operators_diff``), its floor tolerance, its overlay layer's
toggle and the last run's counts. Self-contained: a sub-panel of the main panel, nothing
else in the tab changes."""

from . import panels, scene_render
from .operators_diff import DIFF_KIND


class CAPSULE_COLLISION_PT_collision_diff(panels.SidebarPanel):
    bl_label = "Render vs Collision"
    bl_parent_id = "CAPSULE_COLLISION_PT_main"
    bl_options = {"DEFAULT_CLOSED"}

    def draw(self, context):
        layout = self.layout
        scene = context.scene
        s = scene.capsule_collision
        source = scene_render.render_source(scene)
        if source is None:
            layout.label(text="Collision Source: Naming or a Collection", icon="INFO")
        else:
            layout.label(text=f"Render: the visible meshes outside the {source} collision")
        layout.operator("capsule_collision.collision_diff", icon="MOD_BOOLEAN")
        layout.prop(s, "diff_tolerance")
        layout.prop(s, "show_collision_diff", text="Draw in the Overlay")
        summary = next((r for r in s.results if r.kind == DIFF_KIND and not r.object), None)
        if summary is not None:
            layout.label(text=summary.label, icon="CHECKMARK" if summary.severity == "PASSED"
                         else "ERROR")


classes = (CAPSULE_COLLISION_PT_collision_diff,)
