"""The "Collision Authoring" sub-panel of the Capsule Collision tab and its scene settings
(``scene.capsule_collision_authoring``): engine, proxy kind and its options, the export file.
Buttons run ``operators_proxy`` and ``operators_export`` with these values."""

from __future__ import annotations

import bpy
from bpy.props import EnumProperty, FloatProperty, IntProperty, StringProperty

from . import proxies
from .operators_export import FORMAT_ITEMS
from .operators_proxy import ENGINE_ITEMS, KIND_ITEMS
from .panels import SidebarPanel


class CAPSULE_COLLISION_PG_authoring(bpy.types.PropertyGroup):
    engine: EnumProperty(name="Engine", items=ENGINE_ITEMS, default="UNREAL",
                         description="Whose naming collision objects follow")
    kind: EnumProperty(name="Kind", items=KIND_ITEMS, default="BOX")
    tolerance: FloatProperty(name="Tolerance", default=0.02, min=0.0001, soft_max=0.5,
                             unit="LENGTH", description="Sphere/capsule fit and simplified "
                             "mesh: the largest distance from the render surface")
    concavity: FloatProperty(name="Concavity", default=0.05, min=0.01, max=1.0,
                             description="CoACD's concavity threshold: lower, more pieces")
    max_hulls: IntProperty(name="Hull Budget", default=8, min=0, soft_max=64,
                           description="CoACD's most convex pieces per mesh (0: no budget)")
    file_format: EnumProperty(name="Format", items=FORMAT_ITEMS, default="DEFAULT")
    filepath: StringProperty(name="File", subtype="FILE_PATH", default="",
                             description="Export file (empty: asked when exporting)")


class CAPSULE_COLLISION_PT_authoring(SidebarPanel):
    bl_label = "Collision Authoring"
    bl_parent_id = "CAPSULE_COLLISION_PT_main"
    bl_options = {"DEFAULT_CLOSED"}

    def draw(self, context):
        layout = self.layout
        a = context.scene.capsule_collision_authoring
        layout.prop(a, "engine")
        col = layout.column(align=True)
        col.prop(a, "kind", text="")
        if a.kind in ("PRIMITIVE", "SIMPLIFY"):
            col.prop(a, "tolerance")
        if a.kind == "DECOMPOSE":
            col.prop(a, "concavity")
            col.prop(a, "max_hulls")
        op = col.operator("capsule_collision.make_proxies", icon="MESH_CUBE")
        for name in ("kind", "engine", "tolerance", "concavity", "max_hulls"):
            setattr(op, name, getattr(a, name))
        layout.operator("capsule_collision.stair_ramps", icon="IPO_LINEAR").engine = a.engine
        coll = bpy.data.collections.get(proxies.COLLECTION_NAME)
        if coll is not None:
            n = len(coll.all_objects)
            layout.label(text=f"{n} object{'' if n == 1 else 's'} in {coll.name}",
                         icon="OUTLINER_COLLECTION")
        col = layout.column(align=True)
        col.prop(a, "file_format", text="")
        col.prop(a, "filepath", text="")
        op = col.operator("capsule_collision.export_collision", icon="EXPORT")
        op.engine = a.engine
        op.file_format = a.file_format
        op.filepath = a.filepath


classes = (CAPSULE_COLLISION_PG_authoring, CAPSULE_COLLISION_PT_authoring)
