"""Reachability in Blender: where the character can go from the scene's spawns.

``capsule_collision.reachability`` floods the level from the feet of the capsules marked as
spawns (``obj.capsule_collision.spawn``; still checked for penetration like every capsule)
with ``core.reachability``: the standable map judged by the real capsule, and the
controller's moves (walks, steps up to the step height, one-way falls, jumps when Jump Height
> 0). Everything is computed first, then written:

* ``cc_reachability`` (INT8 FACE, codes ``results.REACH_CODES``: 0 none, 1 reachable, 2 trap,
  3 island) on every level mesh: per face the best class of the standable floor on it
  (``core.checks.reachability.triangle_classes``);
* one row per island and per trap (core's findings, ``core.checks.findings.region_findings``,
  the rows the CLI lists, none left out): where it is, its area, its faces (select and frame:
  those on the object holding most of them), core's severity (warnings; the islands nobody
  can see are one info row); and a summary row (the reachable area, how many islands and
  traps, spawns that stand on no floor);
* the "Reachability Cells" object in the results collection (role CELLS; none when there is
  no such cell): one vertex per cell a face's colour does not show
  (``core.checks.reachability.square_cells``: cramped floor, and island or trap floor on a
  face shown better), with its class (POINT INT8
  ``cell_class``, core's codes) and its face's outward normal (POINT FLOAT_VECTOR
  ``normal``); the cell side and the grid's axes as custom properties (Blender units). The
  overlay draws a square of that side at each, where it is.

Rows record the spawns' placements and the character settings as their inputs
(``staleness``): moving a spawn or changing a setting makes them stale, and so does a change
of the level (their stamp).
"""

import bpy
import numpy as np

from .. import core
from ..core.checks.findings import region_findings
from ..core.checks.reachability import square_cells, triangle_classes
from ..core.checks.targets import buried_spawns
from . import level_parts, operators, results, scene_data, staleness

REACH_KINDS = ("REACHABILITY", "ISLAND", "TRAP")  # row kinds this operator writes
CELLS_NAME = "Reachability Cells"
CELL_CLASS_ATTRIBUTE = "cell_class"  # POINT INT8 on the cells object, core's cell codes
CELL_NORMAL_ATTRIBUTE = "normal"  # POINT FLOAT_VECTOR, the cell's face normal (world)
NO_SPAWN = ("no spawn: select a capsule and tick Spawn in the Active Object panel (the "
            "character starts at its foot)")


def summary_text(res, n_spawns, lost, inside=()) -> str:
    """The summary row's words: reachable area, islands and traps (their areas), spawns
    standing on no floor (``lost``: names), spawns inside a closed solid (``inside``:
    (spawn, solid) names; they flood nothing)."""
    def count(regions, word):
        n = len(regions)
        area = sum(r.area for r in regions)
        return f"{n} {word}{'' if n == 1 else 's'} ({area:.3g} m²)"

    text = (f"Reachability from {n_spawns} spawn{'' if n_spawns == 1 else 's'}: "
            f"{res.reachable_area:.4g} m² reachable, {count(res.islands, 'island')}, "
            f"{count(res.traps, 'trap')}")
    if lost:
        text += f"; {', '.join(lost)} stand{'s' if len(lost) == 1 else ''} on no floor"
    for spawn, solid in inside:
        text += f"; {spawn} is inside the closed solid {solid}: it floods nothing"
    return text


def spawns_in_walls(level, spawns) -> list:
    """(name, penetrated triangles) of the spawn capsules ``spawns`` whose capsule penetrates
    the level (a spawn inside a wall: the game would start the character stuck)."""
    out = []
    for ob in spawns:
        tris = level.mesh.penetrating_triangles(scene_data.capsule_of(ob, level.unit_scale))
        if tris.size:
            out.append((ob.name, int(tris.size)))
    return out


def walled_text(walled) -> str:
    """The summary's words for spawns inside walls (``spawns_in_walls``), or ""."""
    return "".join(f"; spawn {name} is inside a wall (its capsule penetrates {n} "
                   f"triangle{'' if n == 1 else 's'}): move it out" for name, n in walled)


def _cells_object(scene, level, res, mask):
    """The "Reachability Cells" object (the previous one replaced): the cells ``mask``;
    None (and no object) when there is none."""
    for ob in results.result_objects():
        if ob.capsule_collision.role == "CELLS":
            results.remove_object(ob)
    if not mask.any():
        return None
    unit = level.unit_scale
    grid = res.standable.grid
    pts = (res.cell_points[mask] / unit).astype(np.float32)
    me = bpy.data.meshes.new(CELLS_NAME)
    me.vertices.add(pts.shape[0])
    me.attributes["position"].data.foreach_set("vector", pts.ravel())
    me.attributes.new(CELL_CLASS_ATTRIBUTE, "INT8", "POINT").data.foreach_set(
        "value", res.cell_class[mask].astype(np.int8))
    normals = level.mesh.normals[res.cell_face[mask]].astype(np.float32)
    me.attributes.new(CELL_NORMAL_ATTRIBUTE, "FLOAT_VECTOR", "POINT").data.foreach_set(
        "vector", normals.ravel())
    me.update()
    ob = bpy.data.objects.new(CELLS_NAME, me)
    ob.capsule_collision.role = "CELLS"
    ob.hide_render = True
    ob["cell_size"] = float(res.cell_size / unit)
    ob["axis_x"] = [float(x) for x in grid.e1]
    ob["axis_y"] = [float(x) for x in grid.e2]
    results.results_collection(scene).objects.link(ob)
    return ob


_REMEMBERED: dict = {}  # scene name -> (level stamp, inputs key, Reachability): the last flood


def current_reach(context, level, settings):
    """The flood of the scene's level from its spawns with ``settings`` (core.reachability),
    computed once per level stamp, spawns and settings (the audits scope their findings by
    it); None when the scene has no spawn."""
    scene = context.scene
    spawns = scene_data.spawn_objects(scene)
    if not spawns:
        return None
    key = staleness.inputs_key(scene, "REACHABILITY")
    memo = _REMEMBERED.get(scene.name)
    if memo is not None and memo[0] == level.stamp and memo[1] == key:
        return memo[2]
    feet = scene_data.spawn_feet(spawns, level.unit_scale)
    buried = buried_spawns(level.mesh, feet, settings)  # inside a solid: floods nothing
    res = core.reachability(level.mesh, feet[buried < 0], settings)
    _REMEMBERED.clear()  # one flood kept: a big level's map is large
    _REMEMBERED[scene.name] = (level.stamp, key, res)
    return res


def run_reachability(context):
    """Flood the level from the scene's spawns and write the attribute, rows and cells (the
    module docstring). Returns the message, or ("WARNING", message) when a spawn stands on
    no floor or inside a wall (its capsule penetrates). ValueError when there is no spawn,
    or the level or settings cannot be read."""
    edited = operators.leave_edit_mode(context)
    scene = context.scene
    spawns = scene_data.spawn_objects(scene)
    if not spawns:
        raise ValueError(NO_SPAWN)
    settings = operators.controller_settings(context)
    level, _dg = operators.level_of(context)
    with operators.Progress(context, 2) as progress:
        res = current_reach(context, level, settings)
        progress.update(1)
        classes = triangle_classes(res)
    key = staleness.inputs_key(scene, "REACHABILITY")
    buried = buried_spawns(level.mesh, scene_data.spawn_feet(spawns, level.unit_scale),
                           settings)  # left out of the flood (current_reach)
    inside = [(ob.name, _object_name(level, t)) for ob, t in zip(spawns, buried) if t >= 0]
    flooding = [ob for ob, t in zip(spawns, buried) if t < 0]
    lost = [ob.name for ob, cell in zip(flooding, res.spawn_cells) if cell < 0]
    listed = region_findings(res)
    rows = (results.finding_rows(level, "ISLAND",
                                 [x for x in listed if x.finding.check == "islands"], key)
            + results.finding_rows(level, "TRAP",
                                   [x for x in listed if x.finding.check == "traps"], key))
    found = bool(res.islands or res.traps)
    walled = spawns_in_walls(level, spawns)
    summary = summary_text(res, len(spawns), lost, inside) + walled_text(walled)
    warn = bool(lost or walled or inside)
    rows.insert(0, {"kind": "REACHABILITY", "capsule": "", "label": summary,
                    "value": float(res.reachable_area), "stamp": level.stamp, "inputs": key,
                    "severity": "NONE" if found or warn else "PASSED"})
    shown = results.write_face_codes(level, results.REACHABILITY_ATTRIBUTE, classes + 1)
    _cells_object(scene, level, res, square_cells(res, shown.astype(np.int16) - 1))
    level_parts.remember_results(scene, "REACHABILITY", level, np.arange(classes.size),
                                 (classes + 1).astype(np.int8))
    results.replace_rows(scene, set(REACH_KINDS), rows)
    message = summary + operators.edit_note(edited)
    return ("WARNING", message) if warn else message


def _object_name(level, triangle: int) -> str:
    """The scene object a triangle of the level comes from."""
    name = level.objects[int(level.tri_object[int(triangle)])]
    target = results.object_for(name)
    return target.name if target is not None else name


class CAPSULE_COLLISION_OT_reachability(operators.CheckOperator, bpy.types.Operator):
    """Flood the level from the capsules marked Spawn over the controller's moves (walks,
    steps, falls, jumps): colour reachable floor, islands and traps (attribute
    cc_reachability), list each island and trap, draw cramped floor where it is"""

    bl_idname = "capsule_collision.reachability"
    bl_label = "Reachability"
    bl_options = {"REGISTER", "UNDO"}

    @classmethod
    def poll(cls, context):
        if not operators.object_mode_poll(cls, context):
            return False
        if not scene_data.spawn_objects(context.scene):
            cls.poll_message_set("No spawn: select a capsule and tick Spawn in the Active "
                                 "Object panel")
            return False
        return True

    def run(self, context):
        return run_reachability(context)


classes = (CAPSULE_COLLISION_OT_reachability,)
