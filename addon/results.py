"""Writing results back into the scene: face attributes, result rows, the results collection.

Operators compute everything first (``core`` on the level's arrays) and only then call these
functions, so an error leaves the scene unchanged. Every result lives in the .blend:
attributes on the ORIGINAL meshes, rows on ``scene.capsule_collision.results``, objects in the
"Capsule Collision Results" collection.
"""

import json

import bpy
import numpy as np

from ..core.checks.held import finding_counts
from ..core.checks.severity import PASSED, SEVERITIES
from . import properties, scene_data, waivers

RESULTS_COLLECTION = scene_data.RESULTS_COLLECTION  # "Capsule Collision Results"

# Face attributes the extension writes (BOOLEAN FACE unless said), by result kind.
PENETRATION_ATTRIBUTE = "capsule_penetration"
WALKABILITY_ATTRIBUTE = "walkability"  # INT8 FACE, core codes (-1: no triangle maps there)
WALKABILITY_COLOR_ATTRIBUTE = "walkability_color"  # BYTE_COLOR CORNER
AUDIT_ATTRIBUTES = {
    "STAND": "cc_cannot_stand",
    "STAIRS": "cc_stair_problem",
    "HEADROOM": "cc_low_headroom",
    "LEDGE": "cc_ledge",
}
# BOOLEAN FACE: an audit's problems on floor no spawn reaches (one info row lists them).
OUT_OF_REACH_ATTRIBUTES = {kind: name + "_out_of_reach" for kind, name in AUDIT_ATTRIBUTES.items()}
OUT_OF_REACH_ATTRIBUTE = "cc_out_of_reach"  # BOOLEAN FACE: any audit's (the overlay's layer)
# INT8 FACE: where the character can go (Reachability), one of REACH_CODES per face: the
# best class of the standable floor on the face, core's class + 1
# (core.checks.reachability.triangle_classes: REACHABLE 0, TRAP 1, ISLAND 2; -1 none).
REACHABILITY_ATTRIBUTE = "cc_reachability"
REACH_NONE, REACH_REACHABLE, REACH_TRAP, REACH_ISLAND = 0, 1, 2, 3
REACH_CODES = {REACH_NONE: "none (no standable floor: walls, ceilings, cramped or buried)",
               REACH_REACHABLE: "reachable from a spawn, and back",
               REACH_TRAP: "trap: a spawn reaches it but cannot get back",
               REACH_ISLAND: "island: no spawn reaches it"}
# INT8 FACE: render against collision (operators_diff.DIFF_CODES), on both levels' meshes.
DIFF_ATTRIBUTE = "cc_collision_diff"
ALL_ATTRIBUTES = ((PENETRATION_ATTRIBUTE, WALKABILITY_ATTRIBUTE, WALKABILITY_COLOR_ATTRIBUTE)
                  + tuple(AUDIT_ATTRIBUTES.values()) + tuple(OUT_OF_REACH_ATTRIBUTES.values())
                  + (OUT_OF_REACH_ATTRIBUTE, REACHABILITY_ATTRIBUTE, DIFF_ATTRIBUTE))
UNKNOWN_WALKABILITY = -1  # INT8 code of an original face no evaluated triangle maps back to

# RGBA per core walkability code (WALKABLE, STEEP, WALL, CEILING), then unknown.
WALKABILITY_COLORS = np.array([
    (0.20, 0.75, 0.25, 1.0),  # walkable: green
    (0.95, 0.60, 0.10, 1.0),  # steep: orange
    (0.45, 0.50, 0.60, 1.0),  # wall: blue-grey
    (0.60, 0.25, 0.70, 1.0),  # ceiling: purple
    (0.30, 0.30, 0.30, 1.0),  # unknown (face made only by modifiers): dark grey
], np.float32)

RESULT_ROLES = ("TRACE", "MARKER", "CELLS")  # objects the extension creates (Clear removes)
BAKE_TAG = "capsule_collision_bake"  # custom property on actions the walk bake creates


# ---------------------------------------------------------------- level -> objects

def object_for(name):
    """The Blender object a level object name refers to: ``"<instancer>/<object>"`` names an
    instanced object (its mesh data is shared by every instance); None if gone."""
    ob = bpy.data.objects.get(name)
    if ob is not None:
        return ob
    parts = name.split("/")
    for i in range(1, len(parts)):  # instancer names may themselves contain "/"
        ob = bpy.data.objects.get("/".join(parts[i:]))
        if ob is not None:
            return ob
    return None


def instancer_of(level_name, target) -> str:
    """The instancer part of a level object name ``"<instancer>/<object>"`` whose object is
    ``target`` ("" for an object of the scene itself)."""
    if target is None or level_name == target.name:
        return ""
    return level_name[: -(len(target.name) + 1)]


def group_triangles(level, tris):
    """Triangles of the level grouped by source object.

    tris : (K,) int indices into ``level.mesh``. Returns a list of
    ``(object index, original faces (unique, sorted int32), unmapped evaluated face count,
    triangle indices of that object)`` in object order.
    """
    tris = np.asarray(tris, np.int64)
    out = []
    if not tris.size:
        return out
    obj = level.tri_object[tris]
    order = np.argsort(obj, kind="stable")
    tris, obj = tris[order], obj[order]
    cuts = np.flatnonzero(np.diff(obj)) + 1
    for part in np.split(np.arange(tris.size), cuts):
        t = tris[part]
        orig = level.tri_orig_face[t]
        mapped = np.unique(orig[orig >= 0]).astype(np.int32)
        unmapped = np.unique(level.tri_face[t][orig < 0]).size
        out.append((int(obj[part[0]]), mapped, int(unmapped), t))
    return out


def mesh_objects_of_level(level):
    """{mesh datablock name: object} for every level object with editable mesh data."""
    out = {}
    for name in level.objects:
        ob = object_for(name)
        if ob is not None and ob.type == "MESH" and ob.data.library is None:
            out.setdefault(ob.data.name, ob)
    return out


# ---------------------------------------------------------------- face attributes

def face_attribute(mesh, name, data_type):
    """The FACE attribute ``name`` of ``data_type`` on ``mesh`` (replaced if of another
    type)."""
    attr = mesh.attributes.get(name)
    if attr is not None and (attr.domain != "FACE" or attr.data_type != data_type):
        mesh.attributes.remove(attr)
        attr = None
    if attr is None:
        attr = mesh.attributes.new(name, data_type, "FACE")
    return attr


def write_face_flags(level, name, faces_by_mesh):
    """BOOLEAN FACE attribute ``name`` on every level mesh: True exactly on the given faces.

    faces_by_mesh : {mesh name: (K,) original face indices}. Meshes of the level not named
    are written all False, so the attribute always says what the last check found.
    Returns the number of meshes written.
    """
    meshes = mesh_objects_of_level(level)
    for mesh_name, ob in meshes.items():
        me = ob.data
        flags = np.zeros(len(me.polygons), bool)
        faces = faces_by_mesh.get(mesh_name)
        if faces is not None and len(faces):
            faces = np.asarray(faces)
            flags[faces[faces < flags.size]] = True
        face_attribute(me, name, "BOOLEAN").data.foreach_set("value", flags)
        me.update()
    return len(meshes)


def write_face_codes(level, name, tri_codes) -> np.ndarray:
    """INT8 FACE attribute ``name`` on every level mesh from per-triangle ``tri_codes`` (T,)
    (0: none, smaller non-zero codes better): a face gets the best (smallest non-zero) code
    of the triangles mapping to it over every use of its mesh (linked duplicates,
    instances), 0 where none maps. Returns (T,) int8 the code each triangle's face shows now
    (a triangle no original face stands for keeps its own)."""
    users: dict = {}  # mesh name -> level object indices using it
    for k, n in enumerate(level.objects):
        ob = object_for(n)
        if ob is not None and ob.type == "MESH":
            users.setdefault(ob.data.name, []).append(k)
    codes = np.asarray(tri_codes, np.int8)
    shown = codes.copy()
    orig = level.tri_orig_face
    for mesh_name, ob in mesh_objects_of_level(level).items():
        me = ob.data
        best = np.full(len(me.polygons), np.iinfo(np.int8).max, np.int8)
        mine = np.isin(level.tri_object, users[mesh_name]) & (orig >= 0) & (orig < best.size)
        coded = mine & (codes > 0)
        np.minimum.at(best, orig[coded], codes[coded])
        best[best == np.iinfo(np.int8).max] = 0
        face_attribute(me, name, "INT8").data.foreach_set("value", best)
        me.update()
        shown[mine] = best[orig[mine]]
    return shown


def faces_of_rows(scene, kind):
    """{mesh name: original faces} over every row of ``kind`` (the attribute's content)."""
    out = {}
    for row in scene.capsule_collision.results:
        if row.kind != kind or not row.faces:
            continue
        ob = bpy.data.objects.get(row.object)
        if ob is None or ob.type != "MESH":
            continue
        faces = properties.decode_faces(row.faces)
        out[ob.data.name] = np.union1d(out.get(ob.data.name, np.empty(0, np.int32)), faces)
    return out


def write_out_of_reach(level) -> None:
    """``cc_out_of_reach`` on every level mesh: the faces any audit's out-of-reach attribute
    flags (the overlay's Out of Reach layer draws it)."""
    for ob in mesh_objects_of_level(level).values():
        me = ob.data
        flags = np.zeros(len(me.polygons), bool)
        for name in OUT_OF_REACH_ATTRIBUTES.values():
            flags |= read_face_flags(me, name)
        face_attribute(me, OUT_OF_REACH_ATTRIBUTE, "BOOLEAN").data.foreach_set("value", flags)
        me.update()


def read_face_flags(mesh, name):
    """(F,) bool values of a BOOLEAN FACE attribute (all False when absent)."""
    attr = mesh.attributes.get(name)
    out = np.zeros(len(mesh.polygons), bool)
    if attr is not None:
        attr.data.foreach_get("value", out)
    return out


def write_walkability(level, codes):
    """INT8 FACE ``walkability`` and BYTE_COLOR CORNER ``walkability_color`` on every level
    mesh from per-triangle ``codes``. A face gets the largest code of its triangles (walkable
    only when all its triangles are); faces no triangle maps to get UNKNOWN_WALKABILITY."""
    meshes = mesh_objects_of_level(level)
    names = {}  # mesh name -> level object indices using it (linked duplicates, instances)
    for k, n in enumerate(level.objects):
        ob = object_for(n)
        if ob is not None and ob.type == "MESH":
            names.setdefault(ob.data.name, []).append(k)
    for mesh_name, ob in meshes.items():
        me = ob.data
        n_faces = len(me.polygons)
        face_code = np.full(n_faces, UNKNOWN_WALKABILITY, np.int8)
        sel = np.isin(level.tri_object, names[mesh_name]) & (level.tri_orig_face >= 0)
        sel &= level.tri_orig_face < n_faces
        np.maximum.at(face_code, level.tri_orig_face[sel], codes[sel].astype(np.int8))
        face_attribute(me, WALKABILITY_ATTRIBUTE, "INT8").data.foreach_set("value", face_code)
        loop_total = np.empty(n_faces, np.int32)
        me.polygons.foreach_get("loop_total", loop_total)
        corner_code = np.repeat(face_code, loop_total)
        colors = WALKABILITY_COLORS[np.where(corner_code < 0, 4, corner_code)]
        col = me.color_attributes.get(WALKABILITY_COLOR_ATTRIBUTE)
        if col is not None and (col.domain != "CORNER" or col.data_type != "BYTE_COLOR"):
            me.color_attributes.remove(col)
            col = None
        if col is None:
            col = me.color_attributes.new(WALKABILITY_COLOR_ATTRIBUTE, "BYTE_COLOR", "CORNER")
        col.data.foreach_set("color", colors.ravel())
        me.color_attributes.active_color_name = WALKABILITY_COLOR_ATTRIBUTE
        me.update()
    return len(meshes)


def remove_attributes(names=ALL_ATTRIBUTES):
    """Remove the extension's attributes from every local mesh; returns how many removed."""
    removed = 0
    for me in bpy.data.meshes:
        if me.library is not None:
            continue
        for name in names:
            attr = me.attributes.get(name)
            if attr is not None:
                me.attributes.remove(attr)
                removed += 1
    return removed


# ---------------------------------------------------------------- rows

ROW_IDENTITY = ("kind", "capsule", "object", "label", "faces", "stamp", "inputs", "severity",
                "face_count", "unmapped", "instancer")


def _identity(values) -> tuple:
    out = []
    for key in ROW_IDENTITY:
        v = values.get(key, "" if key not in ("face_count", "unmapped") else 0)
        if key == "faces" and not isinstance(v, str):
            v = properties.encode_faces(v)
        out.append(v)
    return tuple(out)


def rows_equal(scene, kind, owners, rows) -> bool:
    """Whether the scene's rows of ``kind`` owned by ``owners`` are ``rows`` (dicts), in order
    (same labels, faces, stamps, inputs, severities): nothing to write."""
    have = [r for r in scene.capsule_collision.results
            if r.kind == kind and r.capsule in owners]
    if len(have) != len(rows):
        return False
    return all(_identity({k: getattr(r, k) for k in ROW_IDENTITY}) == _identity(v)
               for r, v in zip(have, rows))


def drop_orphan_rows(scene, kind) -> int:
    """Remove the rows of ``kind`` whose capsule or path is no longer in the scene (deleted
    or renamed); returns how many. Called whenever rows of that kind are written."""
    s = scene.capsule_collision
    gone = [i for i, r in enumerate(s.results)
            if r.kind == kind and r.capsule and r.capsule not in scene.objects]
    for i in reversed(gone):
        s.results.remove(i)
    if gone:
        s.results_index = min(s.results_index, len(s.results) - 1)
    return len(gone)


def replace_rows(scene, kinds, rows, owners=None):
    """Drop the scene's rows of ``kinds`` and append ``rows`` (dicts of row fields).

    owners : capsule / path names whose rows are replaced (None: every row of ``kinds``);
    rows of other capsules or paths stay, e.g. when only the selected capsules were checked.
    """
    s = scene.capsule_collision
    for i in reversed(range(len(s.results))):
        row = s.results[i]
        if row.kind in kinds and (owners is None or row.capsule in owners):
            s.results.remove(i)
    for values in rows:
        row = s.results.add()
        for key, value in values.items():
            if key == "faces":
                row.faces = properties.encode_faces(value)
            else:
                setattr(row, key, value)
    waivers.mark_rows(scene, set(kinds))  # the sidecar's waivers, stale ones as info rows
    s.results_index = min(s.results_index, len(s.results) - 1)


def object_rows(level, kind, label, owner, groups, values=None):
    """Result rows for ``group_triangles`` output: one per object.

    values : optional (K,) metres aligned with the grouped ``tris`` argument, the row value
    is taken by ``label`` (a callable (object name, faces, unmapped, tri) -> (label, value)).
    """
    rows = []
    for obj_index, faces, unmapped, tris in groups:
        name = level.objects[obj_index]
        text, value = label(name, faces, unmapped, tris)
        ob = object_for(name)
        rows.append({"kind": kind, "label": text, "capsule": owner,
                     "object": ob.name if ob is not None else name,
                     "face_count": int(faces.size + unmapped), "value": float(value),
                     "faces": faces, "unmapped": int(unmapped), "stamp": level.stamp})
    return rows


def _world_box(level, tris) -> tuple:
    pts = level.mesh.vertices[level.mesh.triangles[tris]].reshape(-1, 3) / level.unit_scale
    return tuple(pts.min(0)) + tuple(pts.max(0))


def finding_fields(finding, *, where=None, size=None, size_unit=None, counted=1,
                   value=None) -> dict:
    """The row fields keeping what a core finding (``core.checks.verdicts.Finding``) says,
    for Export Report (``held_entry``): check, name, expected, got, its identity ``where``
    (metres), size (m^2 or m), how many problems it counts, whether ``value`` is one."""
    out = {"check": finding.check, "finding": finding.name, "expected": finding.expected,
           "got": finding.got, "count": int(counted),
           "has_value": value is not None and bool(np.isfinite(value))}
    if where is not None:
        out.update(where=tuple(float(x) for x in where), has_where=True)
    if size is not None and np.isfinite(size):
        out.update(size=float(size), size_unit=size_unit or "")
    return out


def finding_rows(level, kind, listed, key) -> list[dict]:
    """One row per finding (``core.checks.findings.Listed``: a cramped region, a flight, a
    run, an island, a trap, or an info counting those out of reach): its severity, label (the
    finding's message), value (metres; its size, m^2 or m, when it has no value: an island's
    area), position, the finding's fields (``finding_fields``), the world box of all its
    faces and the faces themselves on every object they lie on: ``object``/``faces`` the
    object holding most, ``spans`` the others (Select selects them all)."""
    rows = []
    unit = level.unit_scale
    for item in listed:
        f = item.finding
        tris = np.asarray(item.triangles, np.int64)
        groups = sorted(group_triangles(level, tris), key=lambda g: -(g[1].size + g[2]))
        row = {"kind": kind, "capsule": "", "label": f.message, "stamp": level.stamp,
               "inputs": key, "severity": f.severity.upper(),
               "value": float(item.value if item.value is not None else item.size or 0.0),
               "face_count": sum(int(g[1].size + g[2]) for g in groups)}
        row.update(finding_fields(f, where=item.where, size=item.size,
                                  size_unit=item.size_unit, counted=item.counted,
                                  value=item.value))
        if item.cause is not None:
            row["cause"] = json.dumps(item.cause)
        parts = [_part(level, g) for g in groups]
        if parts:
            name, instancer, faces, unmapped = parts[0]
            row.update(object=name, instancer=instancer, faces=faces, unmapped=unmapped,
                       has_bounds=True, bounds=_world_box(level, tris))
            row["spans"] = encode_spans(parts[1:])
        if f.position is not None:
            row.update(position=tuple(np.asarray(f.position, float) / unit), has_position=True)
        rows.append(row)
    return rows


def _part(level, group) -> tuple:
    """(object name, instancer, original faces, unmapped) of a ``group_triangles`` group."""
    obj_index, faces, unmapped, _ = group
    level_name = level.objects[obj_index]
    target = object_for(level_name)
    return (target.name if target is not None else level_name,
            instancer_of(level_name, target), faces, int(unmapped))


def encode_spans(parts) -> str:
    """``row.spans`` of (object name, instancer, faces, unmapped) parts ("" for none)."""
    if not parts:
        return ""
    return json.dumps([[n, i, properties.encode_faces(f), int(u)] for n, i, f, u in parts])


def row_parts(row) -> list[tuple]:
    """Every (object name, instancer, (K,) int32 original faces, unmapped) a row's faces lie
    on: its ``object`` first (the most faces), then its ``spans``; [] when it has none."""
    out = []
    if row.object:
        out.append((row.object, row.instancer, properties.decode_faces(row.faces),
                    int(row.unmapped)))
    for name, instancer, faces, unmapped in (json.loads(row.spans) if row.spans else ()):
        out.append((name, instancer, properties.decode_faces(faces), int(unmapped)))
    return out


# Finding kind of a row written before rows kept their finding (kind -> check).
ROW_CHECKS = {"STAND": "stand", "STAIRS": "stairs", "HEADROOM": "headroom", "LEDGE": "ledges",
              "ISLAND": "islands", "TRAP": "traps", "SPAWN": "spawns"}


def _row_check(row) -> str:
    if row.check:
        return row.check
    if row.kind == "PENETRATION":
        return "capsule" if row.severity == "ERROR" else "penetration"
    if row.kind == "WALK":
        if row.event and row.severity == "INFO":
            return "walk_event"
        return "walk" if row.severity == "ERROR" else "route"
    return ROW_CHECKS.get(row.kind, "level")


def held_entry(row, unit: float, stale: str = "", faces: bool = True) -> dict:
    """The finding a row holds as ``core.checks.held`` takes it: metres (``unit``: metres
    per Blender unit), its faces named ``{"triangle": -1, "object", "face"}`` (``faces``
    False: none, for counting), ``stale`` and its reason."""
    named = []
    for name, instancer, part, _unmapped in (row_parts(row) if faces else ()):
        who = f"{instancer}/{name}" if instancer else name
        named += [{"triangle": -1, "object": who, "face": int(x)} for x in part]
    about = row.finding or row.capsule or row.label
    if row.kind == "WALK" and row.event and not row.finding:
        about = f"{row.capsule}: {row.event} at {row.time:.2f} s"
    return {"check": _row_check(row), "severity": row.severity.lower(), "name": about,
            "expected": row.expected, "got": row.got or row.event,
            "position": (tuple(float(x) * unit for x in row.position)
                         if row.has_position else None),
            "message": row.label, "faces": named, "face_count": int(row.face_count),
            "value": float(row.value) if row.has_value else None,
            "size": float(row.size) if row.size_unit else None,
            "size_unit": row.size_unit or None,
            "where": tuple(row.where) if row.has_where else None,
            "count": int(row.count), "stale": bool(stale), "stale_reason": stale,
            **({"cause": json.loads(row.cause)} if row.cause else {}),
            **({"waived": {"reason": row.waived_reason, "who": row.waived_by}}
               if row.waived_by else {})}


def faces_by_mesh(level, tris) -> dict:
    """{mesh name: original faces} of the level triangles ``tris`` (for a face attribute)."""
    out: dict = {}
    for obj_index, faces, _unmapped, _ in group_triangles(level, tris):
        target = object_for(level.objects[obj_index])
        if target is not None and target.type == "MESH":
            prev = out.get(target.data.name, np.empty(0, np.int32))
            out[target.data.name] = np.union1d(prev, faces)
    return out


def is_finding(row) -> bool:
    """Whether a row is a finding (error, warning or info; not passed or a data row)."""
    return row.severity.lower() in SEVERITIES


def finding_rows_of(rows) -> list:
    """The rows that are findings (``is_finding``)."""
    return [r for r in rows if is_finding(r)]


def severity_counts(scene) -> dict:
    """``{"error": n, "warning": m, "info": k, "passed": p}`` over the scene's rows: the
    findings by core's rule (``core.checks.held.finding_counts``: a capsule's rows on two
    objects are one finding), what Export Report's summary counts; passed rows as rows
    (data rows such as walkability classes are not counted)."""
    rows = scene.capsule_collision.results
    entries = [held_entry(r, 1.0, faces=False) for r in finding_rows_of(rows)]
    counts = finding_counts(entries)  # "waived" apart from error/warning/info, as the CLI
    counts[PASSED] = sum(1 for r in rows if r.severity == "PASSED")
    return counts


def summary_text(counts) -> str:
    """"2 errors, 1 warning, 4 passed" (infos and waived findings only when there are
    some)."""
    def n(count, word):
        return f"{count} {word}{'' if count == 1 else 's'}"

    parts = [n(counts["error"], "error"), n(counts["warning"], "warning")]
    if counts["info"]:
        parts.append(n(counts["info"], "info"))
    if counts.get("waived"):
        parts.append(f"{counts['waived']} waived")
    return ", ".join(parts) + f", {counts[PASSED]} passed"


# ---------------------------------------------------------------- results collection

def results_collection(scene, create=True):
    """The "Capsule Collision Results" collection linked to ``scene`` (created if asked)."""
    coll = bpy.data.collections.get(RESULTS_COLLECTION)
    if coll is None and create:
        coll = bpy.data.collections.new(RESULTS_COLLECTION)
    if coll is not None and create and coll.name not in scene.collection.children:
        scene.collection.children.link(coll)
    return coll


def remove_object(ob):
    """Remove a result object and its data block when nothing else uses it."""
    data = ob.data
    bpy.data.objects.remove(ob, do_unlink=True)
    if data is not None and data.users == 0:
        if isinstance(data, bpy.types.Mesh):
            bpy.data.meshes.remove(data)
        elif isinstance(data, bpy.types.Curve):
            bpy.data.curves.remove(data)


def result_objects():
    """Every object the extension created (role TRACE, MARKER or CELLS), wherever it is
    linked."""
    return [ob for ob in bpy.data.objects
            if ob.library is None and ob.capsule_collision.role in RESULT_ROLES]
