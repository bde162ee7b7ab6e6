"""Viewport gizmos: every capsule drawn as a wire capsule, radius/height handles on the active one.

The capsule outline is a custom gizmo shape (``capsule_wire_vertices``, a pure function);
``new_custom_shape`` runs only inside the gizmo's ``draw`` (never at import or register: the
GPU is not available then, and in background mode it never is). The handles are Blender's
arrow gizmos bound to the active capsule's ``capsule_collision.radius`` / ``height`` through
get/set handlers that also tag the object, so the live check re-runs while dragging.
"""

from __future__ import annotations

import bpy
import numpy as np
from mathutils import Matrix

from . import scene_data

CAPSULE_WIRE_SEGMENTS = 24  # segments per circle of the outline (a smooth look at 1-10 m)
_SHAPE_KEY_DIGITS = 6  # radius/height rounded to this many digits decide a shape rebuild


def capsule_wire_vertices(radius: float, height: float, segments=CAPSULE_WIRE_SEGMENTS):
    """LINES vertex list (K, 3) float32 of a capsule outline in its local frame.

    Foot (lowest point) at the origin, axis +Z, ``height`` including both caps. Three rings
    (foot-cap equator, waist, head-cap equator) and four meridians (half circles over the caps
    and the straight sides). ValueError when ``radius <= 0`` or ``height < 2 * radius``.
    """
    r = float(radius)
    h = float(height)
    if not r > 0.0:
        raise ValueError(f"radius must be > 0, got {radius}")
    if not h >= 2.0 * r:
        raise ValueError(f"height must be >= 2 * radius = {2.0 * r}, got {height}")
    n = int(segments)
    t = np.linspace(0.0, 2.0 * np.pi, n + 1)
    ring = np.stack([np.cos(t), np.sin(t), np.zeros_like(t)], axis=1) * r
    lines = []

    def polyline(points):
        lines.append(np.repeat(points, 2, axis=0)[1:-1])  # p0 p1 p1 p2 ... as LINES pairs

    for z in (r, h / 2.0, h - r):
        polyline(ring + (0.0, 0.0, z))
    half = np.linspace(0.0, np.pi, n // 2 + 1)
    for ang in (0.0, np.pi / 2.0):
        d = np.array([np.cos(ang), np.sin(ang), 0.0])
        # bottom half circle (foot cap) from +d over the foot to -d, then up, then the head cap
        foot = np.outer(np.cos(half), d) * r + np.outer(-np.sin(half), (0, 0, 1)) * r
        head = np.outer(np.cos(half), d) * r + np.outer(np.sin(half), (0, 0, 1)) * r
        polyline(foot + (0.0, 0.0, r))
        polyline(head + (0.0, 0.0, h - r))
        for side in (d, -d):
            polyline(np.array([side * r + (0, 0, r), side * r + (0, 0, h - r)]))
    return np.concatenate(lines).astype(np.float32)


def capsule_size(obj) -> tuple[float, float]:
    """(radius, height) in Blender units as the checks see them (object scale applied)."""
    pg = obj.capsule_collision
    m = np.array(obj.matrix_world, dtype=np.float64)
    cols = np.linalg.norm(m[:3, :3], axis=0)
    return float(pg.radius) * float(max(cols[0], cols[1])), float(pg.height) * float(cols[2])


class CAPSULE_COLLISION_GT_capsule(bpy.types.Gizmo):
    """Wire outline of one capsule (custom shape, rebuilt when its size changes)."""

    bl_idname = "CAPSULE_COLLISION_GT_capsule"
    __slots__ = ("custom_shape", "shape_key", "capsule_name")

    def setup(self):
        self.custom_shape = None
        self.shape_key = None
        self.capsule_name = ""

    def _ensure_shape(self, context):
        ob = context.scene.objects.get(self.capsule_name)
        if ob is None:
            return False
        radius, height = capsule_size(ob)
        key = (round(radius, _SHAPE_KEY_DIGITS), round(height, _SHAPE_KEY_DIGITS))
        if key != self.shape_key:
            try:
                verts = capsule_wire_vertices(radius, height)
            except ValueError:
                return False
            self.custom_shape = self.new_custom_shape("LINES", verts.tolist())
            self.shape_key = key
        return self.custom_shape is not None

    def draw(self, context):
        if self._ensure_shape(context):
            self.draw_custom_shape(self.custom_shape)

    def draw_select(self, context, select_id):
        if self._ensure_shape(context):
            self.draw_custom_shape(self.custom_shape, select_id=select_id)


def size_handlers(name: str, prop: str):
    """get/set for an arrow gizmo bound to capsule ``name``'s ``prop`` (looked up each call:
    no property-group reference outlives an undo). The arrow shows the size as drawn (object
    scale applied, ``capsule_size``) and writes the property back without the scale."""
    index = 0 if prop == "radius" else 1

    def scale_of(ob):
        pg = ob.capsule_collision
        stored = float(getattr(pg, prop))
        shown = capsule_size(ob)[index]
        return shown / stored if stored > 0.0 else 1.0

    def get():
        ob = bpy.data.objects.get(name)
        return capsule_size(ob)[index] if ob is not None else 0.0

    def set_(value):
        ob = bpy.data.objects.get(name)
        if ob is None:
            return
        pg = ob.capsule_collision
        value = value / scale_of(ob) if scale_of(ob) > 0.0 else value
        if prop == "radius":
            value = min(max(value, 1e-4), pg.height / 2.0)
        else:
            value = max(value, 2.0 * pg.radius)
        setattr(pg, prop, value)
        ob.update_tag()  # the live check listens to object updates

    return get, set_


class CAPSULE_COLLISION_GGT_capsules(bpy.types.GizmoGroup):
    """All capsules of the scene; radius and height arrows on the active capsule."""

    bl_idname = "CAPSULE_COLLISION_GGT_capsules"
    bl_label = "Capsule Collision Capsules"
    bl_space_type = "VIEW_3D"
    bl_region_type = "WINDOW"
    bl_options = {"3D", "PERSISTENT", "SHOW_MODAL_ALL"}

    @classmethod
    def poll(cls, context):
        pg = getattr(context.scene, "capsule_collision", None)
        if pg is None or not (pg.show_overlay and pg.show_capsules):
            return False
        return any(scene_data.role_of(o) == "CAPSULE" for o in context.scene.objects)

    def setup(self, context):
        self.outlines = {}
        self.radius_arrow = self.gizmos.new("GIZMO_GT_arrow_3d")
        self.height_arrow = self.gizmos.new("GIZMO_GT_arrow_3d")
        for gz, color in ((self.radius_arrow, (0.9, 0.3, 0.3)),
                          (self.height_arrow, (0.3, 0.5, 0.9))):
            gz.color = color
            gz.alpha = 0.6
            gz.color_highlight = (1.0, 1.0, 1.0)
            gz.alpha_highlight = 1.0
        self.bound = None
        self.refresh(context)

    def refresh(self, context):
        caps = [o for o in context.scene.objects if scene_data.role_of(o) == "CAPSULE"]
        names = {o.name for o in caps}
        for name in [n for n in self.outlines if n not in names]:
            self.gizmos.remove(self.outlines.pop(name))
        for ob in caps:
            if ob.name not in self.outlines:
                gz = self.gizmos.new(CAPSULE_COLLISION_GT_capsule.bl_idname)
                gz.capsule_name = ob.name
                gz.use_draw_modal = True
                self.outlines[ob.name] = gz
        active = context.active_object
        name = active.name if active is not None and active.name in names else None
        if name != self.bound:
            if name is not None:
                for gz, prop in ((self.radius_arrow, "radius"), (self.height_arrow, "height")):
                    get, set_ = size_handlers(name, prop)
                    gz.target_set_handler("offset", get=get, set=set_)
            self.bound = name
        self.radius_arrow.hide = self.height_arrow.hide = name is None
        self.draw_prepare(context)

    def draw_prepare(self, context):
        for name, gz in self.outlines.items():
            ob = context.scene.objects.get(name)
            if ob is None:
                continue
            gz.matrix_basis = ob.matrix_world.normalized()
            pg = ob.capsule_collision
            penetrating = pg.penetrating_count > 0 or bool(pg.inside_solid)
            gz.color = (1.0, 0.1, 0.1) if penetrating else (0.2, 0.9, 0.4)
            gz.alpha = 0.9
        if self.bound is None:
            return
        ob = context.scene.objects.get(self.bound)
        if ob is None:
            return
        basis = ob.matrix_world.normalized()
        _, height = capsule_size(ob)
        # height arrow: from the foot up the axis; radius arrow: out along local X at mid height
        self.height_arrow.matrix_basis = basis
        self.radius_arrow.matrix_basis = (basis @ Matrix.Translation((0.0, 0.0, height / 2.0))
                                          @ Matrix.Rotation(np.pi / 2.0, 4, "Y"))


classes = (CAPSULE_COLLISION_GT_capsule, CAPSULE_COLLISION_GGT_capsules)
_register_classes, _unregister_classes = bpy.utils.register_classes_factory(classes)  # type: ignore[func-returns-value,misc]


def register():
    _register_classes()


def unregister():
    _unregister_classes()
