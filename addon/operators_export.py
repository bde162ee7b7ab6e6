"""``capsule_collision.export_collision``: the scene's collision under an engine's naming, to
an FBX or glTF file (``collision_export``, shared with ``levelcheck --export-collision``)."""

from __future__ import annotations

import time

import bpy
from bpy.props import BoolProperty, EnumProperty, StringProperty

from . import collision_export, operators
from .operators_proxy import ENGINE_ITEMS

FORMAT_ITEMS = (("DEFAULT", "Engine's Own", "FBX for Unreal and Unity, glTF for Godot"),
                ("FBX", "FBX", "Autodesk FBX"), ("GLTF", "glTF Binary", "glTF 2.0 (.glb)"))


class CAPSULE_COLLISION_OT_export_collision(operators.CheckOperator, bpy.types.Operator):
    """Export the collision the checks read, named for the engine (Unreal: UCX_ + FBX;
    Godot: -colonly + glTF; Unity: _collider + FBX or glTF), with the render meshes"""

    bl_idname = "capsule_collision.export_collision"
    bl_label = "Export Collision"
    bl_options = {"REGISTER", "UNDO"}

    engine: EnumProperty(name="Engine", items=ENGINE_ITEMS, default="UNREAL")
    file_format: EnumProperty(name="Format", items=FORMAT_ITEMS, default="DEFAULT")
    filepath: StringProperty(name="File", subtype="FILE_PATH", default="",
                             description="Where the file goes (its folder must exist)")
    include_render: BoolProperty(name="With Render Meshes", default=True,
                                 description="Export the visible render meshes too (Unreal "
                                 "pairs UCX_ meshes with their render mesh in one file)")

    @classmethod
    def poll(cls, context):
        return operators.object_mode_poll(cls, context, edit_mesh_ok=False,
                                          message="Switch to Object Mode to export")

    def invoke(self, context, event):
        if not self.filepath:
            fmt = (collision_export.default_format(self.engine)
                   if self.file_format == "DEFAULT" else self.file_format)
            stem = bpy.path.display_name_to_filepath(bpy.path.basename(bpy.data.filepath)
                                                     or "level")
            self.filepath = f"//{stem}_collision{collision_export.FORMAT_SUFFIX[fmt]}"
        context.window_manager.fileselect_add(self)
        return {"RUNNING_MODAL"}

    def run(self, context):
        if not self.filepath:
            raise ValueError("filepath: choose the file to export to")
        start = time.perf_counter()
        fmt = None if self.file_format == "DEFAULT" else self.file_format
        out = collision_export.export_collision(context, self.engine,
                                                bpy.path.abspath(self.filepath), fmt,
                                                self.include_render)
        message = (f"Exported {len(out.names)} collision object"
                   f"{'' if len(out.names) == 1 else 's'} and {out.render} render mesh"
                   f"{'' if out.render == 1 else 'es'} for {self.engine.title()} to "
                   f"{out.path} in {time.perf_counter() - start:.2f} s")
        if out.hulled:
            return "WARNING", (message + f"; Unreal hulls each UCX_ mesh: {len(out.hulled)} "
                               "concave (" + ", ".join(out.hulled[:5]) + ") lose their "
                               "hollows: decompose them instead")
        return message


classes = (CAPSULE_COLLISION_OT_export_collision,)
