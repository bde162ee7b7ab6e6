"""report.png: the level rendered headless (Workbench), findings in red, walks and a legend.

The picture is a flat-shaded oblique orthographic view from the level's -X/-Y side (risers and
walls facing the paths' starts are visible): faces coloured by walkability, the faces of every
finding red (those a capsule penetrates, the face that stopped a walk), capsules (red when
their expectation failed), walk traces as tubes (blue when the walk met its expectation, red
when not), walk events as yellow balls, and a legend. ``View`` is the camera as plain numbers
so a test can find where a world point lands in the image without Blender.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

WIDTH, HEIGHT = 1280, 800  # pixels
VIEW_DIRECTION = (1.0, 0.45, -0.95)  # towards +X (and a little +Y), down: risers facing -X show
MARGIN = 1.06  # frame the level with 6 % air
LEGEND_FRACTION = 0.28  # of the image width, on the left, for the legend

COLORS = {  # RGBA, linear (Workbench "MATERIAL" colour)
    "walkable": (0.25, 0.55, 0.25, 1.0),
    "steep": (0.85, 0.75, 0.15, 1.0),
    "wall": (0.55, 0.55, 0.58, 1.0),
    "ceiling": (0.35, 0.35, 0.6, 1.0),
    "finding": (0.95, 0.02, 0.02, 1.0),
    "capsule": (0.1, 0.75, 0.85, 1.0),
    "walk_ok": (0.1, 0.25, 0.95, 1.0),
    "walk_failed": (0.95, 0.02, 0.02, 1.0),
    "event": (1.0, 0.85, 0.0, 1.0),
    "text": (0.02, 0.02, 0.02, 1.0),
}
WALKABILITY_ORDER = ("walkable", "steep", "wall", "ceiling")  # core codes 0..3
LEGEND = (
    ("finding", "finding (faces, capsule, walk)"),
    ("walkable", "walkable floor"),
    ("steep", "too steep"),
    ("wall", "wall"),
    ("ceiling", "ceiling / underside"),
    ("capsule", "capsule"),
    ("walk_ok", "walk trace"),
    ("event", "walk event"),
)


@dataclass(frozen=True)
class View:
    """An orthographic camera looking at ``center`` (3,), unit ``right``/``up``/``forward`` (3,) and
    ``width_m`` metres across the image (Blender's ortho_scale with a landscape image)."""

    center: np.ndarray
    right: np.ndarray
    up: np.ndarray
    forward: np.ndarray
    width_m: float

    @property
    def height_m(self) -> float:
        return self.width_m * HEIGHT / WIDTH

    def pixels(self, points) -> np.ndarray:
        """(N, 2) pixel (column, row from the top) of world points (N, 3)."""
        d = np.asarray(points, float).reshape(-1, 3) - self.center
        u = d @ self.right / self.width_m + 0.5
        v = d @ self.up / self.height_m + 0.5
        return np.stack([u * WIDTH, (1.0 - v) * HEIGHT], axis=1)


def view_for(vertices) -> View:
    """The view framing ``vertices`` (N, 3) world metres, with room for the legend."""
    v = np.asarray(vertices, float)
    f = np.asarray(VIEW_DIRECTION, float)
    f /= np.linalg.norm(f)
    right = np.cross(f, (0.0, 0.0, 1.0))
    right /= np.linalg.norm(right)
    up = np.cross(right, f)
    lo, hi = v.min(0), v.max(0)
    corners = np.array([[x, y, z] for x in (lo[0], hi[0]) for y in (lo[1], hi[1])
                        for z in (lo[2], hi[2])])
    mid = 0.5 * (lo + hi)
    u = (corners - mid) @ right
    w = (corners - mid) @ up
    span_u = (u.max() - u.min()) * MARGIN
    span_w = (w.max() - w.min()) * MARGIN
    level_width = max(span_u, span_w * WIDTH / HEIGHT)
    width = level_width / (1.0 - LEGEND_FRACTION)
    # shift the level right so the legend has the left strip
    center = (mid + right * (0.5 * (u.max() + u.min()) - 0.5 * LEGEND_FRACTION * width)
              + up * 0.5 * (w.max() + w.min()))
    return View(center, right, up, f, float(width))


def _matrix(m):
    import mathutils  # noqa: PLC0415  (Blender's; a plain nested list would be read by columns)

    return mathutils.Matrix([list(map(float, row)) for row in m])


def _material(bpy, name, rgba):
    mat = bpy.data.materials.get(name) or bpy.data.materials.new(name)
    mat.diffuse_color = rgba
    return mat


def _new_mesh(bpy, collection, name, vertices, faces, material_index=None, materials=()):
    me = bpy.data.meshes.new(name)
    v = np.asarray(vertices, np.float32).reshape(-1, 3)
    f = np.asarray(faces, np.int32).reshape(-1, 3)
    me.vertices.add(len(v))
    me.vertices.foreach_set("co", v.ravel())
    me.loops.add(f.size)
    me.loops.foreach_set("vertex_index", f.ravel())
    me.polygons.add(len(f))
    me.polygons.foreach_set("loop_start", np.arange(0, f.size, 3, dtype=np.int32))
    me.update(calc_edges=True)
    for mat in materials:
        me.materials.append(mat)
    if material_index is not None:
        me.polygons.foreach_set("material_index", np.asarray(material_index, np.int32))
        me.update()
    ob = bpy.data.objects.new(name, me)
    collection.objects.link(ob)
    return ob


def _sphere(center, radius, rings=6, segments=10):
    """(V, 3), (F, 3) of a UV sphere."""
    th = np.linspace(0, np.pi, rings + 1)
    ph = np.linspace(0, 2 * np.pi, segments, endpoint=False)
    t, p = np.meshgrid(th, ph, indexing="ij")
    v = np.stack([np.sin(t) * np.cos(p), np.sin(t) * np.sin(p), np.cos(t)], -1).reshape(-1, 3)
    faces = []
    for i in range(rings):
        for j in range(segments):
            a, b = i * segments + j, i * segments + (j + 1) % segments
            c, d = a + segments, b + segments
            faces += [(a, c, b), (b, c, d)]
    return np.asarray(center) + radius * v, np.array(faces)


def _capsule_mesh(a, b, radius):
    """A capsule as a stretched sphere: the upper hemisphere moved to ``b``."""
    v, f = _sphere((0, 0, 0), radius, rings=8, segments=12)
    axis = np.asarray(b, float) - np.asarray(a, float)
    length = float(np.linalg.norm(axis))
    z = axis / length if length > 0 else np.array([0.0, 0.0, 1.0])
    x = np.cross(z, (1.0, 0.0, 0.0) if abs(z[0]) < 0.9 else (0.0, 1.0, 0.0))
    x /= np.linalg.norm(x)
    y = np.cross(z, x)
    local = v @ np.stack([x, y, z])  # rotate the unit-sphere offsets into the capsule frame
    upper = (v[:, 2] > 0)[:, None]
    pts = np.asarray(a, float) + local + np.where(upper, axis, 0.0)
    return pts, f


def _tube(points, radius, sides=6):
    """(V, 3), (F, 3) of a tube along the polyline ``points`` (N, 3)."""
    p = np.asarray(points, float)
    keep = np.r_[True, np.linalg.norm(np.diff(p, axis=0), axis=1) > 1e-4]
    p = p[keep]
    if len(p) < 2:
        p = np.vstack([p, p + (0.0, 0.0, 0.01)])
    t = np.gradient(p, axis=0)
    t /= np.maximum(np.linalg.norm(t, axis=1, keepdims=True), 1e-12)
    ref = np.where(np.abs(t[:, 2:3]) < 0.9, [[0.0, 0.0, 1.0]], [[1.0, 0.0, 0.0]])
    n1 = np.cross(t, ref)
    n1 /= np.linalg.norm(n1, axis=1, keepdims=True)
    n2 = np.cross(t, n1)
    ang = np.linspace(0, 2 * np.pi, sides, endpoint=False)
    ring = (np.cos(ang)[None, :, None] * n1[:, None] + np.sin(ang)[None, :, None] * n2[:, None])
    v = (p[:, None] + radius * ring).reshape(-1, 3)
    faces = []
    for i in range(len(p) - 1):
        for j in range(sides):
            a, b = i * sides + j, i * sides + (j + 1) % sides
            faces += [(a, b + sides, b), (a, a + sides, b + sides)]
    return v, np.array(faces)


def _text(bpy, collection, name, body, location, view, size, material):
    curve = bpy.data.curves.new(name, "FONT")
    curve.body = body
    curve.size = size
    curve.materials.append(material)
    ob = bpy.data.objects.new(name, curve)
    basis = np.stack([view.right, view.up, -view.forward], axis=1)  # text faces the camera
    m = np.eye(4)
    m[:3, :3] = basis
    m[:3, 3] = location
    ob.matrix_world = _matrix(m)
    collection.objects.link(ob)
    return ob


def build_view(bpy, scene, geometry_mesh, walkability, finding_triangles, capsules, walks,
               title):
    """Add the picture's objects to ``scene`` in a new collection; hide the level's own
    objects from the render. Returns the View.

    geometry_mesh : core TriangleMesh (world metres); walkability (M,) int8 core codes or
    None; finding_triangles (K,) int; capsules [(core Capsule, failed: bool)];
    walks [(trace (N, 3), event positions (E, 3), failed: bool)]."""
    for ob in scene.objects:
        ob.hide_render = True
    coll = bpy.data.collections.new("Levelcheck View")
    scene.collection.children.link(coll)
    mats = {k: _material(bpy, f"levelcheck {k}", c) for k, c in COLORS.items()}
    verts = geometry_mesh.vertices
    tris = geometry_mesh.triangles
    index = (np.asarray(walkability, np.int32) if walkability is not None
             else np.full(len(tris), WALKABILITY_ORDER.index("wall"), np.int32))
    index = index.copy()
    index[np.asarray(finding_triangles, np.int64)] = len(WALKABILITY_ORDER)
    _new_mesh(bpy, coll, "levelcheck level", verts, tris, index,
              [mats[k] for k in WALKABILITY_ORDER] + [mats["finding"]])
    for i, (cap, failed) in enumerate(capsules):
        v, f = _capsule_mesh(cap.a, cap.b, cap.radius)
        _new_mesh(bpy, coll, f"levelcheck capsule {i}", v, f, None,
                  [mats["finding" if failed else "capsule"]])
    for i, (trace, events, failed) in enumerate(walks):
        v, f = _tube(trace + (0.0, 0.0, 0.05), 0.06)
        _new_mesh(bpy, coll, f"levelcheck walk {i}", v, f, None,
                  [mats["walk_failed" if failed else "walk_ok"]])
        for j, p in enumerate(np.asarray(events, float).reshape(-1, 3)):
            v, f = _sphere(p + (0.0, 0.0, 0.3), 0.22)
            _new_mesh(bpy, coll, f"levelcheck event {i}.{j}", v, f, None, [mats["event"]])
    view = view_for(verts)
    cam_data = bpy.data.cameras.new("levelcheck camera")
    cam_data.type = "ORTHO"
    cam_data.ortho_scale = view.width_m
    cam_data.clip_end = 10_000.0
    cam = bpy.data.objects.new("levelcheck camera", cam_data)
    m = np.eye(4)
    m[:3, :3] = np.stack([view.right, view.up, -view.forward], axis=1)
    m[:3, 3] = view.center - view.forward * (float(np.linalg.norm(np.ptp(verts, 0))) + 10.0)
    cam.matrix_world = _matrix(m)
    coll.objects.link(cam)
    scene.camera = cam
    # legend: swatches and labels in the left strip, facing the camera
    size = view.height_m / 32.0
    left = view.center + view.right * (-0.5 * view.width_m + 1.5 * size)
    top = left + view.up * (0.5 * view.height_m - 2.0 * size)
    _text(bpy, coll, "levelcheck title", title, top, view, size * 1.1, mats["text"])
    for k, (key, label) in enumerate(LEGEND):
        row = top - view.up * (2.2 * size * (k + 1.5))
        v, f = _sphere(row + view.up * 0.35 * size + view.right * 0.4 * size
                       - view.forward * 0.5, 0.45 * size)
        _new_mesh(bpy, coll, f"levelcheck swatch {key}", v, f, None, [mats[key]])
        _text(bpy, coll, f"levelcheck label {key}", label, row + view.right * 1.3 * size,
              view, size, mats["text"])
    return view


def render(bpy, scene, filepath):
    """Render ``scene`` with Workbench (flat-ish studio light, material colours) to the PNG
    ``filepath``."""
    r = scene.render
    r.engine = "BLENDER_WORKBENCH"
    r.resolution_x, r.resolution_y, r.resolution_percentage = WIDTH, HEIGHT, 100
    r.film_transparent = False
    r.image_settings.file_format = "PNG"
    r.image_settings.compression = 90  # flat colours: a third of the default's size
    r.filepath = filepath
    shading = scene.display.shading
    shading.light = "STUDIO"
    shading.color_type = "MATERIAL"
    shading.show_cavity = False
    shading.show_shadows = False
    scene.display.render_aa = "FXAA"  # a fraction of the 8-sample default's time on llvmpipe
    world = scene.world or bpy.data.worlds.new("levelcheck world")
    scene.world = world
    world.color = (0.95, 0.95, 0.95)
    scene.view_settings.view_transform = "Standard"
    bpy.ops.render.render(write_still=True)
