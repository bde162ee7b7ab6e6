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
  can see are one info row, those smaller than the character's footprint another:
  ``core.checks.severity.min_areas``); and a summary row (the reachable area, how many islands and
  traps, spawns that stand on no floor);
* the "Reachability Cells" object in the results collection (role CELLS; none when there is
  no such cell): one vertex per cell a face's colour does not show
  (``core.checks.reachability.square_cells``: cramped floor, and island or trap floor on a
  face shown better), with its class (POINT INT8
  ``cell_class``, core's codes) and its face's outward normal (POINT FLOAT_VECTOR
  ``normal``); the cell side and the grid's axes as custom properties (Blender units). The
  overlay draws a square of that side at each, where it is.

Invoked from the UI it runs modal: the flood works in a thread (``ReachJob``) while the
progress bar moves, Esc cancels it (core's progress callback raises ``Cancelled`` at its
next stage) and the previous results stay as they were: results are written only when the
flood has finished. From a script (and headless, where invoke is skipped) it runs at once.

Rows record the spawns' placements and the character settings as their inputs
(``staleness``): moving a spawn or changing a setting makes them stale, and so does a change
of the level (their stamp).
"""

import threading
from typing import Any, NamedTuple

import bpy
import numpy as np

from .. import core
from ..core.checks.findings import region_findings
from ..core.checks.gate import min_area_listed
from ..core.checks.reach_spawns import spawns_in_walls
from ..core.checks.reach_what_if import describe
from ..core.checks.reachability import square_cells, triangle_classes
from ..core.checks.severity import min_areas
from ..core.checks.spawn_places import spawn_listed
from ..core.checks.targets import buried_spawns
from . import level_parts, operators, results, scene_data, staleness

REACH_KINDS = staleness.REACH_KINDS  # row kinds this operator writes
CELLS_NAME = "Reachability Cells"
CELL_CLASS_ATTRIBUTE = "cell_class"  # POINT INT8 on the cells object, core's cell codes
CELL_NORMAL_ATTRIBUTE = "normal"  # POINT FLOAT_VECTOR, the cell's face normal (world)
CANCELLED_TEXT = "Reachability cancelled (Esc): the previous results are kept"


def summary_text(res, n_spawns, lost, fell=(), inside=()) -> str:
    """The summary row's words: reachable area, islands and traps (their areas), spawns
    standing on no floor (``lost``: names), spawns placed above the floor that fell to it
    (``fell``: (name, metres)), spawns inside a closed solid (``inside``: (spawn, solid)
    names; they flood nothing), and what one setting changed alone opens (core's
    ``what_if``: "with step height 0.42 m (now 0.35 m): 3 islands are reached")."""
    def count(regions, word):
        n = len(regions)
        area = sum(r.area for r in regions)
        return f"{n} {word}{'' if n == 1 else 's'} ({area:.3g} m²)"

    text = (f"Reachability from {n_spawns} spawn{'' if n_spawns == 1 else 's'}: "
            f"{res.reachable_area:.4g} m² reachable, {count(res.islands, 'island')}, "
            f"{count(res.traps, 'trap')}")
    if fell:
        text += "; " + ", ".join(f"{name} falls {drop:.2f} m" for name, drop in fell) + \
            " to the floor below"
    if lost:
        text += f"; {', '.join(lost)} stand{'s' if len(lost) == 1 else ''} on no floor"
    for spawn, solid in inside:
        text += f"; {spawn} is inside the closed solid {solid}: it floods nothing"
    return text + describe(getattr(res, "what_if", ()))


def walled_text(walled) -> str:
    """The summary's words for spawns inside walls (``walled``: (spawn, wall) names), or
    ""."""
    return "".join(f"; spawn {name} is inside a wall (its capsule penetrates {wall}): move "
                   f"it out" for name, wall in walled)


def spawn_rows(level, prep: "Prepared", res, key):
    """(rows, walled): one SPAWN row per spawn inside a closed solid (an error: it floods
    nothing), inside a wall, on no floor or fallen to the floor below
    (``core.checks.spawn_places.spawn_listed``: the findings the CLI lists), and the
    (spawn, wall) names of those inside a wall."""
    feet = scene_data.spawn_feet(prep.spawns, level.unit_scale)
    walls = spawns_in_walls(level.mesh, feet, prep.settings)
    names = [ob.name for ob in prep.spawns]

    def name_of(t):
        return _object_name(level, t)

    placed = [x for x, _bracket in spawn_listed(names, feet, prep.buried, walls, res, name_of)]
    walled = [(n, _object_name(level, t)) for n, t, b in zip(names, walls, prep.buried)
              if t >= 0 and b < 0]
    return results.finding_rows(level, "SPAWN", placed, key), walled


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


def remembered(scene, level, key):
    """The flood kept for ``scene`` at this level stamp and inputs key, or None."""
    memo = _REMEMBERED.get(scene.name)
    if memo is not None and memo[0] == level.stamp and memo[1] == key:
        return memo[2]
    return None


def remember(scene, level, key, res):
    """Keep ``res`` as the scene's last flood (one kept: a big level's map is large)."""
    _REMEMBERED.clear()
    _REMEMBERED[scene.name] = (level.stamp, key, res)


def current_reach(context, level, settings, progress=None):
    """The flood of the scene's level from its spawns with ``settings`` (core.reachability),
    computed once per level stamp, spawns and settings (the audits scope their findings by
    it); None when the scene has no spawn. ``progress``: as core.reachability's."""
    scene = context.scene
    spawns = scene_data.spawn_objects(scene)
    if not spawns:
        return None
    key = staleness.inputs_key(scene, "REACHABILITY")
    res = remembered(scene, level, key)
    if res is None:
        feet = scene_data.spawn_feet(spawns, level.unit_scale)
        buried = buried_spawns(level.mesh, feet, settings)  # inside a solid: floods nothing
        res = core.reachability(level.mesh, feet[buried < 0], settings, progress=progress)
        remember(scene, level, key, res)
    return res


class Cancelled(Exception):
    """Reachability stopped by the user (Esc): nothing written, previous results kept."""


class Prepared(NamedTuple):
    """What the flood reads from the scene before it starts (main thread)."""

    edited: tuple
    spawns: list
    settings: Any
    level: Any
    feet: np.ndarray  # the feet of the spawns that flood (not inside a closed solid)
    key: str
    buried: np.ndarray  # (K,) per spawn: a triangle of the solid it is inside, or -1


def prepare(context) -> Prepared:
    """Read the spawns, settings and level (Edit Mode flushed). ValueError when there is no
    spawn, or the level or settings cannot be read."""
    got = operators.spawn_inputs(context)
    buried = buried_spawns(got.level.mesh, got.feet, got.settings)  # left out of the flood
    return Prepared(got.edited, got.spawns, got.settings, got.level, got.feet[buried < 0],
                    staleness.inputs_key(context.scene, "REACHABILITY"), buried)


def write_results(context, prep: Prepared, res):
    """Write the attribute, rows and cells of ``res`` (the module docstring) and keep it as
    the scene's flood (the audits scope by it). Returns the message, or ("WARNING",
    message) when a spawn stands on no floor, inside a wall (its capsule penetrates) or
    inside a closed solid."""
    scene, level, key = context.scene, prep.level, prep.key
    remember(scene, level, key, res)
    classes = triangle_classes(res)
    spawns = prep.spawns
    inside = [(ob.name, _object_name(level, t)) for ob, t in zip(spawns, prep.buried)
              if t >= 0]
    flooding = [ob for ob, t in zip(spawns, prep.buried) if t < 0]
    lost = [ob.name for ob, cell in zip(flooding, res.spawn_cells) if cell < 0]
    drops = np.asarray(res.spawn_drop, float)
    fell = [(ob.name, float(d)) for ob, cell, d in zip(flooding, res.spawn_cells, drops)
            if cell >= 0 and d > 0.0]
    listed = min_area_listed(region_findings(res), min_areas(prep.settings))
    rows = (results.finding_rows(level, "ISLAND",
                                 [x for x in listed if x.finding.check == "islands"], key)
            + results.finding_rows(level, "TRAP",
                                   [x for x in listed if x.finding.check == "traps"], key))
    found = bool(res.islands or res.traps)
    placed, walled = spawn_rows(level, prep, res, key)
    rows += placed
    summary = summary_text(res, len(spawns), lost, fell, inside) + walled_text(walled)
    warn = bool(lost or walled or inside)
    rows.insert(0, {"kind": "REACHABILITY", "capsule": "", "label": summary,
                    "value": float(res.reachable_area), "stamp": level.stamp, "inputs": key,
                    "severity": "NONE" if found or warn else "PASSED"})
    shown = results.write_face_codes(level, results.REACHABILITY_ATTRIBUTE, classes + 1)
    _cells_object(scene, level, res, square_cells(res, shown.astype(np.int16) - 1))
    level_parts.remember_results(scene, "REACHABILITY", level, np.arange(classes.size),
                                 (classes + 1).astype(np.int8))
    results.replace_rows(scene, set(REACH_KINDS), rows)
    message = summary + operators.edit_note(prep.edited)
    return ("WARNING", message) if warn else message


def _object_name(level, triangle: int) -> str:
    """The scene object a triangle of the level comes from."""
    name = level.objects[int(level.tri_object[int(triangle)])]
    target = results.object_for(name)
    return target.name if target is not None else name


def run_reachability(context, progress=None):
    """Flood the level from the scene's spawns and write the attribute, rows and cells (the
    module docstring). ``progress``: None or callable(fraction) told between core's stages
    (an exception it raises, such as Cancelled, stops the flood before anything is
    written). Returns the message, or ("WARNING", message) when a spawn stands on no floor.
    ValueError when there is no spawn, or the level or settings cannot be read."""
    prep = prepare(context)
    with operators.Progress(context, 100) as bar:
        def tell(fraction):
            bar.update(100 * fraction)
            if progress is not None:
                progress(fraction)

        res = remembered(context.scene, prep.level, prep.key)
        if res is None:
            res = core.reachability(prep.level.mesh, prep.feet, prep.settings, progress=tell)
    return write_results(context, prep, res)


class ReachJob:
    """``core.reachability`` of ``prep`` in a worker thread (numpy releases the GIL, so the
    UI keeps drawing). ``cancel()`` makes core stop at its next stage (Cancelled);
    ``done``, ``fraction``, ``result`` and ``error`` say where it is."""

    def __init__(self, prep: Prepared):
        self.prep = prep
        self.fraction = 0.0
        self.result = None
        self.error = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="cc-reachability", daemon=True)
        self._thread.start()

    def _tell(self, fraction):
        if self._stop.is_set():
            raise Cancelled
        self.fraction = float(fraction)

    def _run(self):
        try:
            p = self.prep
            self.result = core.reachability(p.level.mesh, p.feet, p.settings,
                                            progress=self._tell)
        except BaseException as exc:  # handed to the main thread, which reports it
            self.error = exc

    def cancel(self):
        self._stop.set()

    @property
    def done(self) -> bool:
        return not self._thread.is_alive()

    def wait(self, timeout=None) -> bool:
        self._thread.join(timeout)
        return self.done


class CAPSULE_COLLISION_OT_reachability(operators.CheckOperator, bpy.types.Operator):
    """Flood the level from the capsules marked Spawn over the controller's moves (walks,
    steps, falls, jumps): colour reachable floor, islands and traps (attribute
    cc_reachability), list each island and trap, draw cramped floor where it is"""

    bl_idname = "capsule_collision.reachability"
    bl_label = "Reachability"
    bl_options = {"REGISTER", "UNDO"}

    @classmethod
    def poll(cls, context):
        return operators.spawn_poll(cls, context)

    def run(self, context):
        return run_reachability(context)

    def invoke(self, context, event):
        """Modal from the UI: the flood in a thread, Esc cancels (module docstring)."""
        wm = context.window_manager
        if context.window is None or bpy.app.background:
            return self.execute(context)
        try:
            prep = prepare(context)
        except ValueError as exc:
            self.report({"ERROR"}, str(exc))
            return {"CANCELLED"}
        self._job = ReachJob(prep)
        self._timer = wm.event_timer_add(0.1, window=context.window)
        wm.modal_handler_add(self)
        wm.progress_begin(0, 100)
        context.workspace.status_text_set("Reachability: Esc to cancel")
        return {"RUNNING_MODAL"}

    def modal(self, context, event):
        job = self._job
        if event.type == "ESC":
            job.cancel()
            return {"RUNNING_MODAL"}
        if event.type != "TIMER":
            return {"PASS_THROUGH"}
        wm = context.window_manager
        wm.progress_update(int(100 * job.fraction))
        if not job.done:
            return {"RUNNING_MODAL"}
        wm.event_timer_remove(self._timer)
        wm.progress_end()
        context.workspace.status_text_set(None)
        return self.finish(context, job)

    def finish(self, context, job):
        """Report and write what the finished ``job`` left: its results, or nothing when
        cancelled (the previous results stay) or when it failed."""
        if isinstance(job.error, Cancelled):
            self.report({"WARNING"}, CANCELLED_TEXT)
            context.scene.capsule_collision.last_report = CANCELLED_TEXT
            return {"CANCELLED"}
        if isinstance(job.error, ValueError):
            self.report({"ERROR"}, str(job.error))
            return {"CANCELLED"}
        if job.error is not None:
            raise job.error
        message = write_results(context, job.prep, job.result)
        level, message = message if isinstance(message, tuple) else ("INFO", message)
        self.report({level}, message)
        context.scene.capsule_collision.last_report = message
        return {"FINISHED"}


classes = (CAPSULE_COLLISION_OT_reachability,)
