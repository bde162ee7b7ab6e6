"""Draws the overlay into GPUOffScreens and prints what the pixels show (one JSON line).

Run by tests/blender/test_addon_overlay.py in a subprocess: ``python overlay_gl_script.py
<checkout>``. A tiny Workbench render initialises the GPU first (background mode has no other
way); each scene is then drawn with a camera's matrices through ``overlay.draw_offscreen``
(both passes, as the viewport's handlers draw them), optionally over Blender's own solid
view (``draw_view3d``), and the pixels are read back.
"""

import importlib
import json
import os
import shutil
import sys
import tempfile

user = tempfile.mkdtemp(prefix="cc_overlay_")
os.environ["BLENDER_USER_RESOURCES"] = user
os.environ.setdefault("XDG_CACHE_HOME", os.path.join(user, "cache"))

import bpy  # noqa: E402
import numpy as np  # noqa: E402

ROOT = sys.argv[1]
sys.path.insert(0, os.path.join(ROOT, "tests", "blender"))
import blender_helpers as bh  # noqa: E402
import ops_scenes  # noqa: E402
from capsule_collision.levelcheck.session import enable_extension  # noqa: E402

MOD = enable_extension(ROOT)  # the one home of loading the checkout as Blender does
overlay = importlib.import_module(MOD.__name__ + ".addon.overlay")
layers = importlib.import_module(MOD.__name__ + ".addon.overlay_layers")
marks = importlib.import_module(MOD.__name__ + ".addon.overlay_marks")
cache = importlib.import_module(MOD.__name__ + ".addon.cache")
reach = importlib.import_module(MOD.__name__ + ".addon.overlay_reach")
W = H = 256
_GPU = []


def fresh_scene():
    bpy.ops.wm.read_homefile(use_empty=True)
    overlay.invalidate()
    scene = bpy.context.scene
    scene.render.resolution_x = scene.render.resolution_y = W
    return scene


def camera(scene, location, target, ortho=None):
    from mathutils import Vector  # noqa: PLC0415

    data = bpy.data.cameras.new("cam")
    if ortho:
        data.type = "ORTHO"
        data.ortho_scale = ortho
    cam = bpy.data.objects.new("cam", data)
    cam.location = location
    cam.rotation_euler = (Vector(target) - Vector(location)).to_track_quat("-Z", "Y").to_euler()
    scene.collection.objects.link(cam)
    scene.camera = cam
    bpy.context.view_layer.update()
    if not _GPU:  # the GPU works in background mode only after a render
        scene.render.engine = "BLENDER_WORKBENCH"
        scene.render.filepath = os.path.join(user, "warm.png")
        bpy.ops.render.render(write_still=False)
        _GPU.append(True)
    return cam


def view3d():
    for screen in bpy.data.screens:
        for area in screen.areas:
            if area.type == "VIEW_3D":
                return area.spaces.active, next(r for r in area.regions if r.type == "WINDOW")
    raise RuntimeError("no 3D View")


def draw(scene, cam, solid=False):
    """(pixels (H, W, 4), persp 4x4): the overlay over black, or over the solid view."""
    import gpu  # noqa: PLC0415

    dg = bpy.context.evaluated_depsgraph_get()
    view = cam.matrix_world.inverted()
    proj = cam.calc_matrix_camera(dg, x=W, y=H)
    off = gpu.types.GPUOffScreen(W, H)
    try:
        if solid:
            space, region = view3d()
            space.shading.type = "SOLID"
            off.draw_view3d(scene, bpy.context.view_layer, space, region, view, proj,
                            do_color_management=False)
        with off.bind():
            fb = gpu.state.active_framebuffer_get()
            if not solid:
                fb.clear(color=(0.0, 0.0, 0.0, 0.0), depth=1.0)
            overlay.draw_offscreen(scene, dg, view, proj, W, H)
            px = np.array(fb.read_color(0, 0, W, H, 4, 0, "FLOAT").to_list(), dtype=float)
    finally:
        off.free()
    return px.reshape(H, W, 4), np.array(proj) @ np.array(view)


def to_px(persp, points):
    p = np.asarray(points, float).reshape(-1, 3)
    clip = p @ persp[:3, :3].T + persp[:3, 3]
    w = p @ persp[3, :3] + persp[3, 3]
    ndc = clip[:, :2] / w[:, None]
    return np.stack([(ndc[:, 0] + 1) * 0.5 * W, (ndc[:, 1] + 1) * 0.5 * H], 1)


def near(px, xy, color, tol=0.12, r=2):
    """Pixels within ``tol`` of ``color`` (RGB) in the (2r+1)^2 patch around xy."""
    x, y = int(round(xy[0])), int(round(xy[1]))
    patch = px[max(y - r, 0):y + r + 1, max(x - r, 0):x + r + 1, :3]
    return int((np.abs(patch - np.asarray(color[:3])).max(axis=-1) < tol).sum())


def flag(mesh, faces, name, values=None):
    attr = mesh.attributes.new(name, "BOOLEAN", "FACE")
    vals = np.zeros(len(mesh.polygons), bool)
    vals[list(faces)] = True
    attr.data.foreach_set("value", vals)
    mesh.update()


# ---------------------------------------------------------------- scenes
def penetrated_cells():
    """A 4 x 4 grid with faces flagged: tinted exactly there, and after a new result."""
    scene = fresh_scene()
    scene.capsule_collision.show_legend = False
    floor = bh.grid("Floor", 4, size=4.0)
    flagged = [0, 5, 15]
    flag(floor.data, flagged, "capsule_penetration")
    cam = camera(scene, (0, 0, 10), (0, 0, 0), ortho=4.0)
    tint = np.array(layers.PENETRATION_TINT[:3]) * layers.PENETRATION_TINT[3]

    def cells():
        px, _ = draw(scene, cam)
        hit = np.abs(px[..., :3] - tint).max(axis=-1) < 0.06
        out = {}
        for k in range(16):
            cy, cx = (k // 4) * 64 + 32, (k % 4) * 64 + 32
            patch = hit[cy - 16:cy + 16, cx - 16:cx + 16]
            out[k] = bool(patch.all()), bool(patch.any())
        return out

    first = cells()
    vals = np.zeros(16, bool)
    vals[flagged + [10]] = True
    floor.data.attributes["capsule_penetration"].data.foreach_set("value", vals)
    floor.data.update()
    bpy.context.view_layer.update()  # depsgraph_update_post -> overlay.invalidate
    return {"flagged": flagged, "cells": first, "after": cells()}


def finding():
    """A capsule 0.45 m into a wall: arrow, contacts, depth label, tinted faces."""
    scene = fresh_scene()
    scene.capsule_collision.show_legend = False
    bh.box("Wall", lo=(-3, 0, 0), hi=(3, 0.5, 3))
    bh.capsule("Cap", location=(0, 0.1, 0.01))
    bpy.context.view_layer.update()  # the live check
    cam = camera(scene, (2.5, -4.0, 5.0), (0, -0.2, 0.9))
    px, persp = draw(scene, cam)
    (mark,) = marks.push_marks(scene)
    a, b = to_px(persp, [mark.start, mark.start + mark.vector])
    shaft = [a + t * (b - a) for t in np.linspace(0.2, 0.7, 10)]
    back = [a - t * (b - a) for t in np.linspace(0.3, 0.8, 10)]  # where 0.25 m "in" would go
    out = {"arrow_hits": sum(near(px, p, marks.PUSH_ARROW, 0.15) > 0 for p in shaft),
           "arrow_back": sum(near(px, p, marks.PUSH_ARROW, 0.15) > 0 for p in back)}
    d = to_px(persp, mark.deepest)[0]
    x0, y0 = int(d[0] + 14), int(d[1] + 7)
    box = px[y0 - 3:y0 + 14, x0:x0 + 110, :3]
    out["label_white"] = int((box.min(axis=-1) > 0.8).sum())
    out["label_box"] = int((box.max(axis=-1) < 0.2).sum())  # the dark box behind the text
    out["contact_hits"] = sum(near(px, p, marks.CONTACT, 0.2) > 0
                              for p in to_px(persp, mark.contacts))
    level = cache.peek(scene)
    live = layers.live_hits_by_part(scene)
    tris = np.concatenate(list(live.values()))
    corners = level.mesh.vertices[level.mesh.triangles[tris]]
    facing = level.mesh.normals[tris] @ (np.array(cam.location) - corners.mean(axis=1)).T
    seen = [c for c, f in zip(corners, np.diag(np.atleast_2d(facing))) if f > 0]
    hits = 0
    bary = [(u, v) for u in (0.2, 0.4, 0.6) for v in (0.2, 0.4) if u + v <= 0.8]
    for c in seen:
        inside = [to_px(persp, c[0] + u * (c[1] - c[0]) + v * (c[2] - c[0]))[0] for u, v in bary]
        rgb = np.array([px[int(q[1]), int(q[0]), :3] for q in inside])
        tinted = (rgb[:, 0] > 0.3) & (rgb[:, 0] - rgb[:, 1] > 0.15) & (rgb[:, 0] - rgb[:, 2] > 0.15)
        hits += bool(tinted.mean() >= 0.5)
    out["tint_hits"], out["tint_total"] = hits, len(seen)
    return out


def instances_and_array():
    """Two collection instances' flagged top faces; an array object's three copies."""
    scene = fresh_scene()
    scene.capsule_collision.show_legend = False
    coll = bpy.data.collections.new("Props")
    prop = bh.box("Prop", lo=(0, 0, 0), hi=(1, 1, 0.5), collection=coll)
    flag(prop.data, [1], "cc_cannot_stand")
    bh.collection_instance("Props A", coll, location=(-3, 0, 0))
    bh.collection_instance("Props B", coll, location=(-3, 2, 0))
    tiles = bh.floor("Tiles", size=1.0, location=(1, 0, 0))
    mod = tiles.modifiers.new("array", "ARRAY")
    mod.count = 3
    mod.relative_offset_displace = (1.2, 0, 0)
    bpy.context.view_layer.update()
    with bpy.context.temp_override(selected_objects=[], active_object=None):
        bpy.ops.capsule_collision.classify_walkability()
    cam = camera(scene, (0, 1, 10), (0, 1, 0), ortho=10.0)
    s = scene.capsule_collision
    s.show_walkability = False
    overlay.invalidate()
    px, persp = draw(scene, cam)
    stand = layers.LAYER_BY_NAME["stand"].color
    want = np.array(stand[:3]) * stand[3]
    inst = [near(px, to_px(persp, (x, y, 0.5))[0], want, 0.08) >= 20
            for x, y in ((-2.5, 0.5), (-2.5, 2.5))]
    s.show_walkability, s.show_stand = True, False
    overlay.invalidate()
    px, persp = draw(scene, cam)
    green = layers.WALKABILITY_COLORS[0]
    want = green[:3] * green[3]
    arr = [near(px, to_px(persp, (1 + 1.2 * k, 0, 0))[0], want, 0.08) >= 20 for k in range(3)]
    return {"instances": inst, "array": arr}


def mirrored():
    """Flagged top faces of a plain and a mirrored box over Blender's solid view (depth)."""
    scene = fresh_scene()
    scene.capsule_collision.show_legend = False
    scene.capsule_collision.live_check = False
    for name, loc, scale in (("Plain", (1, -0.5, 0), (1, 1, 1)),
                             ("Mirrored", (0.5, -0.5, 0), (-1, 1, 1))):
        ob = bh.box(name, lo=(0, 0, 0), hi=(1, 1, 1), location=loc, scale=scale)
        flag(ob.data, [1], "cc_ledge")
    cam = camera(scene, (0, 0, 10), (0, 0, 0), ortho=4.0)

    def yellow(px, persp, x):
        rgb = px[tuple(np.round(to_px(persp, (x, 0, 1))[0][::-1]).astype(int))][:3]
        return bool(rgb[0] > 0.5 and rgb[1] > 0.45 and rgb[2] < 0.35)

    px, persp = draw(scene, cam, solid=True)
    out = {"plain": yellow(px, persp, 1.5), "mirrored": yellow(px, persp, 0.0)}
    layers.SURFACE_LIFT_M = -0.002  # the old mistake: 2 mm inside the solid
    overlay.invalidate()
    px, persp = draw(scene, cam, solid=True)
    layers.SURFACE_LIFT_M = 0.002
    out["mirrored_inward"] = yellow(px, persp, 0.0)
    return out


def stack():
    """Two event markers at one spot: both glyphs and both labels visible."""
    scene = fresh_scene()
    scene.capsule_collision.show_legend = False
    bh.floor("Floor", size=4.0)
    for kind, value in (("step_too_high", 0.45), ("blocked", None)):
        ob = bh.empty(f"{kind} Path", location=(0, 0, 0))
        bh.set_role(ob, "MARKER")
        ob["kind"] = kind
        if value is not None:
            ob["value"] = value
    cam = camera(scene, (0, 0, 10), (0, 0, 0), ortho=4.0)
    px, persp = draw(scene, cam)
    spot = to_px(persp, (0, 0, 0))[0]
    out = {}
    for kind in ("step_too_high", "blocked"):
        color = np.array(marks.EVENT_COLORS[kind][:3])
        hit = np.abs(px[..., :3] - color).max(axis=-1) < 0.08
        ys, xs = np.nonzero(hit)
        glyph = (np.abs(xs - spot[0]) < 30) & (np.abs(ys - spot[1]) < 12)
        text = xs > spot[0] + 20
        out[kind] = {"glyph": int(glyph.sum()), "text": int(text.sum()),
                     "x": float(xs[glyph].mean()) if glyph.any() else -1.0}
    return out


def batches():
    """Face batches rebuilt: all at first; one box moved -> only its batch."""
    scene = fresh_scene()
    bh.grid("Terrain", 60, size=30.0)
    for k in range(3):
        bh.box(f"Box {k}", lo=(0, 0, 0), hi=(1, 1, 1), location=(3 * k, 2, 0))
    cap = bh.capsule("Cap", location=(-5, -5, 0.5))
    bpy.context.view_layer.update()
    with bpy.context.temp_override(selected_objects=[], active_object=None):
        bpy.ops.capsule_collision.classify_walkability()
    cam = camera(scene, (0, 0, 30), (0, 0, 0), ortho=32.0)
    n0 = overlay.face_batches_built()
    draw(scene, cam)
    n1 = overlay.face_batches_built()
    bpy.data.objects["Box 1"].location.x += 0.5
    bpy.context.view_layer.update()
    draw(scene, cam)
    n2 = overlay.face_batches_built()
    cap.location.x += 1.0
    bpy.context.view_layer.update()
    draw(scene, cam)
    n3 = overlay.face_batches_built()
    return {"first": n1 - n0, "after_move": n2 - n1, "after_capsule": n3 - n2}


def reachability():
    """A floor of 1 m quads with a 0.36 m platform (an island: the quads under it are
    buried) and a 0.5 m slot between two walls (its middle cramped): the island's colour, a
    cramped cell's square over the reachable floor's colour, and the spawn's ring."""
    scene = fresh_scene()
    s = scene.capsule_collision
    s.show_legend = False
    s.live_check = False
    v, f = ops_scenes.grid(12, 12.0)
    bh.mesh_object("Floor", v, f, location=(6.0, 4.0, 0.0))
    for name, (lo, hi) in (("Platform", ((7, 5, 0), (10, 7, 0.36))),
                           ("Wall A", ((3, 4.45, 0), (7, 4.75, 3))),
                           ("Wall B", ((3, 5.25, 0), (7, 5.55, 3)))):
        bh.box(name, lo=lo, hi=hi)
    spawn = ops_scenes.capsule(bpy, "Spawn", (1.0, 1.0, 0.0))
    spawn.capsule_collision.spawn = True
    bpy.context.view_layer.update()
    assert bpy.ops.capsule_collision.reachability() == {"FINISHED"}
    cam = camera(scene, (6, 4, 10), (6, 4, 0), ortho=14.0)
    n0 = overlay.cell_batches_built()
    px, persp = draw(scene, cam)
    cells = bpy.data.objects["Reachability Cells"]
    pos = np.empty(len(cells.data.vertices) * 3, np.float32)
    cells.data.attributes["position"].data.foreach_get("vector", pos)
    pos = pos.reshape(-1, 3)
    cramped = pos[np.argmin(np.linalg.norm(pos - (5.0, 5.0, 0.0), axis=1))]
    palette = reach.REACH_COLORS
    teal = palette[1][:3] * palette[1][3]
    violet = palette[3][:3] * palette[3][3]
    dark = np.array(reach.CRAMPED[:3]) * reach.CRAMPED[3] + teal * (1 - reach.CRAMPED[3])
    out = {"cramped_at": cramped.tolist(),
           "island": near(px, to_px(persp, (8.5, 6.0, 0.36))[0], violet, 0.03),
           "floor": near(px, to_px(persp, (2.0, 6.0, 0.0))[0], teal, 0.03),
           "cramped": near(px, to_px(persp, cramped)[0], dark, 0.03, r=1),
           "cramped_as_floor": near(px, to_px(persp, cramped)[0], teal, 0.03, r=1),
           "spawn_ring": near(px, to_px(persp, (1.0 + 1.5 * 0.35, 1.0, 0.0))[0],
                              reach.SPAWN, 0.2)}
    draw(scene, cam)  # nothing changed: the squares' batch is kept
    out["cell_batches"] = overlay.cell_batches_built() - n0
    s.show_reachability = False
    overlay.invalidate()
    px, persp = draw(scene, cam)
    out["hidden_island"] = near(px, to_px(persp, (8.5, 6.0, 0.36))[0], violet, 0.03)
    return out


def modes():
    """``ops_scenes.every_result_level`` (every check run) drawn top-down in Object Mode,
    then with a level mesh, the trace and the cells object each in Edit Mode: the error a
    draw raised (None), how many pixels were drawn, and whether they equal Object Mode's (a
    level mesh in Edit Mode draws the same)."""
    import traceback  # noqa: PLC0415

    scene = fresh_scene()
    ops_scenes.every_result_level(bpy)
    cam = camera(scene, (6, 4, 12), (6, 4, 0), ortho=14.0)
    out = {}
    base = None
    for edited in (None, "Platform", "Steps", "Trace Route", "Reachability Cells"):
        if bpy.context.mode != "OBJECT":
            bpy.ops.object.mode_set(mode="OBJECT")
        if edited is not None:
            for other in bpy.context.selected_objects:
                other.select_set(False)
            ob = bpy.data.objects[edited]
            bpy.context.view_layer.objects.active = ob
            ob.select_set(True)
            bpy.ops.object.mode_set(mode="EDIT")
        cache.clear()  # no push arrow in any mode (a cached level is stale in Edit Mode)
        overlay.invalidate()
        try:
            px, _persp = draw(scene, cam)
            error = None
        except Exception:  # noqa: BLE001  (what a redraw would raise)
            px, error = None, traceback.format_exc(limit=3)
        if edited is None:
            base = px
        out[edited or "object"] = {
            "error": error,
            "drawn": 0 if px is None else int((px[..., 3] > 0).sum()),
            "same": px is not None and base is not None and bool(np.array_equal(px, base))}
    return out


result = penetrated_cells()
result["finding"] = finding()
result.update(instances_and_array())
result["mirrored"] = mirrored()
result["stack"] = stack()
result["batches"] = batches()
result["reachability"] = reachability()
result["modes"] = modes()
print("RESULT " + json.dumps(result))
shutil.rmtree(user, ignore_errors=True)
