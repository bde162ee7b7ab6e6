"""The pictures: the level rendered headless (Workbench), findings in red, walks and a legend.

``report.png`` (one level; ``report-<n>-<name>.png`` for several) is the overview: a
flat-shaded oblique orthographic view from the level's -X/-Y side (risers and walls facing
the paths' starts are visible), with everything above the character's height over the
highest place a check looks at cut away (roofs and ceilings of enclosed maps): faces
coloured by walkability, islands and traps (reachability) in the overlay's violet and
raspberry, the faces of every finding red, capsules (red when their
expectation failed), walk traces as tubes (blue when the walk met its expectation, red when
not), walk events as yellow balls, a numbered label at each finding that has an inset, and a
legend. Then one inset per finding (``finding-<n>-<k>.png``, errors first, up to
``--insets``): the same view framed on the finding (a few metres across), cut above the
character there, titled with the finding's number, name, kind and value. ``View`` is the
camera as plain numbers so a test can find where a world point lands in an image without
Blender.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

WIDTH, HEIGHT = 1280, 800  # pixels, the overview
INSET_WIDTH, INSET_HEIGHT = 640, 400  # pixels, one finding
INSET_SPAN = 8.0  # metres across an inset (at least; a capsule or ledge run widens it)
CUT_MARGIN = 0.3  # metres above the character's height kept below the cut
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
    "plate": (0.97, 0.97, 0.97, 1.0),
    "island": (0.55, 0.3, 1.0, 1.0),  # as the viewport overlay's (addon/overlay_reach.py)
    "trap": (0.85, 0.1, 0.45, 1.0),
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
REACH_LEGEND = (("island", "island: no spawn reaches it"),
                ("trap", "trap: no way back to a spawn"))
REACH_MATERIALS = ("island", "trap")  # material slots after "finding", by reachability class
ISLAND, TRAP = 2, 1  # core.checks.reachability's classes (triangle_classes)


@dataclass(frozen=True)
class View:
    """An orthographic camera looking at ``center`` (3,), unit ``right``/``up``/``forward`` (3,) and
    ``width_m`` metres across the image (Blender's ortho_scale with a landscape image)."""

    center: np.ndarray
    right: np.ndarray
    up: np.ndarray
    forward: np.ndarray
    width_m: float
    width_px: int = WIDTH
    height_px: int = HEIGHT

    @property
    def height_m(self) -> float:
        return self.width_m * self.height_px / self.width_px

    def pixels(self, points) -> np.ndarray:
        """(N, 2) pixel (column, row from the top) of world points (N, 3)."""
        d = np.asarray(points, float).reshape(-1, 3) - self.center
        u = d @ self.right / self.width_m + 0.5
        v = d @ self.up / self.height_m + 0.5
        return np.stack([u * self.width_px, (1.0 - v) * self.height_px], axis=1)


def _axes(direction=VIEW_DIRECTION):
    f = np.asarray(direction, float)
    f = f / np.linalg.norm(f)
    right = np.cross(f, (0.0, 0.0, 1.0))
    right /= np.linalg.norm(right)
    return right, np.cross(right, f), f


def inset_view(position, span=INSET_SPAN, width_px=INSET_WIDTH, height_px=INSET_HEIGHT,
               direction=VIEW_DIRECTION) -> View:
    """The inset's view: ``span`` metres across, centred on ``position`` (3,), looking
    along ``direction`` (3,; not vertical), ``width_px`` x ``height_px`` pixels (the one
    inset view of levelcheck's pictures and tools/diff_pictures.py)."""
    right, up, f = _axes(direction)
    return View(np.asarray(position, float), right, up, f, float(span), int(width_px),
                int(height_px))


def view_for(vertices) -> View:
    """The view framing ``vertices`` (N, 3) world metres, with room for the legend."""
    v = np.asarray(vertices, float)
    right, up, f = _axes()
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
    """A mesh object of triangles, written through the attribute API (positions, corner
    vertices, material indices: about 4x faster than the element collections at 1M
    triangles, tools/bench_levelcheck.py)."""
    me = bpy.data.meshes.new(name)
    v = np.asarray(vertices, np.float32).reshape(-1, 3)
    f = np.asarray(faces, np.int32).reshape(-1, 3)
    me.vertices.add(len(v))
    me.attributes["position"].data.foreach_set("vector", v.ravel())
    me.loops.add(f.size)
    me.attributes[".corner_vert"].data.foreach_set("value", f.ravel())
    me.polygons.add(len(f))
    me.polygons.foreach_set("loop_start", np.arange(0, f.size, 3, dtype=np.int32))
    me.update(calc_edges=True)
    for mat in materials:
        me.materials.append(mat)
    if material_index is not None:
        index = me.attributes.get("material_index") or me.attributes.new(
            "material_index", "INT", "FACE")
        index.data.foreach_set("value", np.asarray(material_index, np.int32))
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


def cut_height(mesh, walkability, places, height) -> float:
    """The overview's cut (metres, along Z): everything wholly above it is hidden. The
    character's height plus CUT_MARGIN over the highest place a check looks at (``places``
    (P, 3): capsule feet, path points, findings), else over the median walkable floor."""
    places = np.asarray(places, float).reshape(-1, 3)
    if len(places):
        top = float(places[:, 2].max())
    elif walkability is not None and (np.asarray(walkability) == 0).any():
        tris = mesh.triangles[np.asarray(walkability) == 0]
        top = float(np.median(mesh.vertices[tris][:, :, 2].mean(1)))
    else:
        return float("inf")
    return top + height + CUT_MARGIN


def triangle_bounds(mesh):
    """(M, 3) lowest and (M, 3) highest corner coordinates of each triangle."""
    corners = mesh.vertices[mesh.triangles]
    return corners.min(1), corners.max(1)


def shown_triangles(mesh, cut, box=None, bounds=None) -> np.ndarray:
    """Triangles below ``cut`` (their lowest corner), within ``box`` ((lo, hi) x-y) if given.
    ``bounds``: ``triangle_bounds(mesh)`` when already computed."""
    lo_c, hi_c = bounds if bounds is not None else triangle_bounds(mesh)
    keep = lo_c[:, 2] <= cut
    if box is not None:
        lo, hi = box
        keep &= (hi_c[:, :2] >= lo).all(1) & (lo_c[:, :2] <= hi).all(1)
    return np.flatnonzero(keep)


class Drawing:
    """What the pictures draw, as plain data: the level (mesh, walkability codes, finding
    triangles), capsules [(Capsule, failed)], walks [(trace, event positions, failed)],
    labels [(number, position)] and ``reach``: (T,) reachability classes per triangle
    (``core.checks.reachability.triangle_classes``) or None."""

    def __init__(self, mesh, walkability, finding_triangles, capsules, walks, labels=(),
                 reach=None):
        self.mesh, self.walkability = mesh, walkability
        self.reach = None if reach is None else np.asarray(reach)
        self.finding_triangles = np.asarray(finding_triangles, np.int64)
        self.capsules, self.walks, self.labels = list(capsules), list(walks), list(labels)
        self.bounds = triangle_bounds(mesh)  # once for the overview and every inset


def _level_object(bpy, coll, mats, drawing, tris):
    mesh = drawing.mesh
    codes = (np.asarray(drawing.walkability, np.int32) if drawing.walkability is not None
             else np.full(mesh.n_triangles, WALKABILITY_ORDER.index("wall"), np.int32)).copy()
    if drawing.reach is not None:
        codes[drawing.reach == ISLAND] = len(WALKABILITY_ORDER) + 1
        codes[drawing.reach == TRAP] = len(WALKABILITY_ORDER) + 2
    codes[drawing.finding_triangles] = len(WALKABILITY_ORDER)
    used = np.unique(mesh.triangles[tris])
    remap = np.full(len(mesh.vertices), -1, np.int64)
    remap[used] = np.arange(len(used))
    _new_mesh(bpy, coll, "levelcheck level", mesh.vertices[used], remap[mesh.triangles[tris]],
              codes[tris], [mats[k] for k in WALKABILITY_ORDER] + [mats["finding"]]
              + [mats[k] for k in REACH_MATERIALS])


def _markers(bpy, coll, mats, drawing, view, cut):
    for i, (cap, failed) in enumerate(drawing.capsules):
        v, f = _capsule_mesh(cap.a, cap.b, cap.radius)
        _new_mesh(bpy, coll, f"levelcheck capsule {i}", v, f, None,
                  [mats["finding" if failed else "capsule"]])
    for i, (trace, events, failed) in enumerate(drawing.walks):
        v, f = _tube(np.asarray(trace) + (0.0, 0.0, 0.05), 0.06)
        _new_mesh(bpy, coll, f"levelcheck walk {i}", v, f, None,
                  [mats["walk_failed" if failed else "walk_ok"]])
        for j, p in enumerate(np.asarray(events, float).reshape(-1, 3)):
            v, f = _sphere(p + (0.0, 0.0, 0.3), 0.22)
            _new_mesh(bpy, coll, f"levelcheck event {i}.{j}", v, f, None, [mats["event"]])
    size = view.height_m / 24.0
    for number, position in drawing.labels:
        p = np.asarray(position, float) + view.up * size * 0.6 - view.forward * 2.0
        _text(bpy, coll, f"levelcheck label {number}", str(number), p, view, size,
              mats["text"])


def _camera(bpy, coll, scene, view, depth):
    cam_data = bpy.data.cameras.new("levelcheck camera")
    cam_data.type = "ORTHO"
    cam_data.ortho_scale = view.width_m
    cam_data.clip_end = 10_000.0
    cam = bpy.data.objects.new("levelcheck camera", cam_data)
    m = np.eye(4)
    m[:3, :3] = np.stack([view.right, view.up, -view.forward], axis=1)
    m[:3, 3] = view.center - view.forward * (depth + 10.0)
    cam.matrix_world = _matrix(m)
    coll.objects.link(cam)
    scene.camera = cam


def legend_of(drawing) -> tuple:
    """The overview's legend rows: LEGEND, and islands and traps when the level has them."""
    if drawing.reach is None:
        return LEGEND
    present = {"island": (drawing.reach == ISLAND).any(), "trap": (drawing.reach == TRAP).any()}
    return LEGEND + tuple(row for row in REACH_LEGEND if present[row[0]])


def _legend(bpy, coll, mats, view, title, rows=LEGEND):
    size = view.height_m / 32.0
    left = view.center + view.right * (-0.5 * view.width_m + 1.5 * size)
    top = left + view.up * (0.5 * view.height_m - 2.0 * size)
    _text(bpy, coll, "levelcheck title", title, top, view, size * 1.1, mats["text"])
    for k, (key, label) in enumerate(rows):
        row = top - view.up * (2.2 * size * (k + 1.5))
        v, f = _sphere(row + view.up * 0.35 * size + view.right * 0.4 * size
                       - view.forward * 0.5, 0.45 * size)
        _new_mesh(bpy, coll, f"levelcheck swatch {key}", v, f, None, [mats[key]])
        _text(bpy, coll, f"levelcheck label {key}", label, row + view.right * 1.3 * size,
              view, size, mats["text"])


def build_view(bpy, scene, drawing: Drawing, title, view=None, cut=float("inf"), box=None):
    """Add one picture's objects to ``scene`` in a fresh collection (the previous picture's
    removed; the level's own objects hidden from the render): the level below ``cut`` (within
    ``box``), markers, labels, the camera and a title (with the legend for the overview).
    Returns the View (``view``, or the one framing the whole level)."""
    old = bpy.data.collections.get("Levelcheck View")
    if old is not None:
        for ob in list(old.objects):
            bpy.data.objects.remove(ob)
        bpy.data.collections.remove(old)
    for ob in scene.objects:
        ob.hide_render = True
    coll = bpy.data.collections.new("Levelcheck View")
    scene.collection.children.link(coll)
    mats = {k: _material(bpy, f"levelcheck {k}", c) for k, c in COLORS.items()}
    tris = shown_triangles(drawing.mesh, cut, box, drawing.bounds)
    overview = view is None
    view = view or view_for(drawing.mesh.vertices[drawing.mesh.triangles[tris]].reshape(-1, 3)
                            if len(tris) else drawing.mesh.vertices)
    if len(tris):
        _level_object(bpy, coll, mats, drawing, tris)
    _markers(bpy, coll, mats, drawing, view, cut)
    _camera(bpy, coll, scene, view, float(np.linalg.norm(np.ptp(drawing.mesh.vertices, 0))))
    if overview:
        _legend(bpy, coll, mats, view, title, legend_of(drawing))
    else:
        size = view.height_m / 14.0
        corner = view.center + view.right * (-0.5 * view.width_m + 0.5 * size) + view.up * (
            0.5 * view.height_m - 1.3 * size) - view.forward * 20.0
        _text(bpy, coll, "levelcheck title", title, corner, view, size, mats["text"])
        # a white plate behind the title, so geometry under it does not hide it
        width = min(view.width_m, 0.6 * size * (len(title) + 2))
        origin = corner - view.right * 0.4 * size - view.up * 0.45 * size + view.forward * 0.01
        _new_mesh(bpy, coll, "levelcheck title plate",
                  [origin, origin + view.right * width, origin + view.right * width
                   + view.up * 1.6 * size, origin + view.up * 1.6 * size],
                  [(0, 1, 2), (0, 2, 3)], None, [mats["plate"]])
    return view


def render(bpy, scene, filepath, width=WIDTH, height=HEIGHT):
    """Render ``scene`` with Workbench (flat-ish studio light, material colours) to the PNG
    ``filepath``, ``width`` x ``height`` pixels."""
    r = scene.render
    r.engine = "BLENDER_WORKBENCH"
    r.resolution_x, r.resolution_y, r.resolution_percentage = width, height, 100
    r.film_transparent = False
    r.image_settings.file_format = "PNG"
    # Measured at 1280 x 800 on llvmpipe (tools/bench_levelcheck.py's machine): zlib level 90
    # costs about 2 s a picture for 12 % less than level 50; FXAA 0.85 s for smoother edges of
    # flat-shaded faces. A picture costs about 0.3 s with neither, an inset under 0.1 s.
    r.image_settings.compression = 50
    r.filepath = filepath
    shading = scene.display.shading
    shading.light = "STUDIO"
    shading.color_type = "MATERIAL"
    shading.show_cavity = False
    shading.show_shadows = False
    scene.display.render_aa = "OFF"
    world = scene.world or bpy.data.worlds.new("levelcheck world")
    scene.world = world
    world.color = (0.95, 0.95, 0.95)
    scene.view_settings.view_transform = "Standard"
    bpy.ops.render.render(write_still=True)
