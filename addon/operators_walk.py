"""Walk-through operators: walk paths with ``core.walkthrough_many``, compare frame rates.

A path is a curve object (any spline type, evaluated) or an ordered mesh polyline
(``scene_data.path_points``). Several paths walk in ONE batched call. Results, in the
"Capsule Collision Results" collection:

- a trace per path ("Trace <path>"): a mesh with one vertex per frame (foot positions),
  edges between consecutive frames, POINT attributes ``grounded`` (BOOLEAN) and ``time``
  (FLOAT, seconds); role TRACE;
- a marker per event ("<kind> <path>"): an Empty where it happened, role MARKER, custom
  properties kind, time, value, the kind's own name for the value (rise, angle, drop,
  clearance), object and face (the collision face that caused it, -1 if none), path;
- result rows (kind WALK): one per event and one verdict per path.

Optionally the first walk is baked to location keyframes on a capsule (replayable on the
timeline); the action carries the custom property ``results.BAKE_TAG``.
"""

import json

import bpy
import numpy as np
from bpy.props import BoolProperty, IntProperty, StringProperty

from .. import core
from ..core import verdicts
from ..core.checks.naming import TriangleNames
from ..core.checks.problems import walk_event_outcomes, walk_outcome
from . import operators, results, scene_data, staleness

LINEAR = 1  # Keyframe.interpolation enum index of 'LINEAR' (CONSTANT 0, LINEAR 1, BEZIER 2)


# Which behaviour a walk's verdicts model (ControllerSettings.model), said in every message.
MODEL_WORDS = {"exact": "exact limits", "jolt": "Jolt model", "rapier": "Rapier model"}

def path_objects(context):
    """Selected paths (role PATH, or curves), or every role PATH object when none is."""
    sel = [o for o in (context.selected_objects or ())
           if o.capsule_collision.role == "PATH"
           or (o.type == "CURVE" and o.capsule_collision.role == "NONE")]
    if sel:
        return sel
    return [o for o in context.scene.objects if o.capsule_collision.role == "PATH"]


def _walk_poll(cls, context):
    if not operators.object_mode_poll(cls, context):
        return False
    if not path_objects(context):
        cls.poll_message_set("No path: select a curve, or give a mesh polyline the role Path")
        return False
    return True


def _event_source(level, triangle):
    """(object name, original face, instancer) of the triangle that caused an event
    ("", -1, "" if none), named by core's one rule (``core.checks.naming.TriangleNames``);
    the object is the scene object a designer selects (an instance's instanced object)."""
    names = TriangleNames(level).name(-1 if triangle is None else triangle)
    if names["object"] is None:
        return "", -1, ""
    target = results.object_for(names["object"])
    face = names["face"]
    return (target.name if target is not None else names["object"],
            -1 if face is None else face, results.instancer_of(names["object"], target))


def _remove_previous(path_name):
    for ob in results.result_objects():
        if ob.get("path") == path_name:
            results.remove_object(ob)


def _trace_object(scene, coll, path_name, report, scale):
    n = len(report.trace)
    me = bpy.data.meshes.new(f"Trace {path_name}")
    me.vertices.add(n)
    me.vertices.foreach_set("co", (np.asarray(report.trace, float) / scale).ravel())
    if n > 1:
        me.edges.add(n - 1)
        me.edges.foreach_set("vertices", np.stack([np.arange(n - 1), np.arange(1, n)],
                                                  1).ravel())
    me.attributes.new("grounded", "BOOLEAN", "POINT").data.foreach_set(
        "value", np.asarray(report.grounded, bool))
    me.attributes.new("time", "FLOAT", "POINT").data.foreach_set(
        "value", np.arange(n, dtype=np.float32) * np.float32(report.dt))
    me.update()
    ob = bpy.data.objects.new(f"Trace {path_name}", me)
    ob.capsule_collision.role = "TRACE"
    ob["path"] = path_name
    ob["reached_goal"] = bool(report.reached_goal)
    coll.objects.link(ob)
    return ob


def _marker(coll, path_name, event, level, scale, size):
    ob = bpy.data.objects.new(f"{event.kind} {path_name}", None)
    ob.empty_display_type = "SPHERE"
    ob.empty_display_size = size
    ob.location = tuple(np.asarray(event.position, float) / scale)
    ob.capsule_collision.role = "MARKER"
    ob["kind"] = event.kind
    ob["time"] = float(event.time)
    if event.value is not None:
        ob["value"] = float(event.value)
        value_name = core.EVENTS[event.kind].value_name
        if value_name:
            ob[value_name] = float(event.value)
    name, face, _ = _event_source(level, event.triangle)
    ob["object"] = name
    ob["face"] = face
    ob["path"] = path_name
    coll.objects.link(ob)
    return ob


def _expectation_met(path_ob, report):
    """None without an expectation, else whether it holds (core.verdicts, as the CLI)."""
    expect = path_ob.capsule_collision.expect_walk
    if expect == "ANY":
        return None
    return verdicts.walk_expectation_holds(expect, report)


def bake_walk(scene, capsule, path_name, report, scale):
    """Location keyframes of ``report``'s trace on ``capsule`` (foot = origin), one per frame
    of the walk, at the scene's frame rate from the scene's start frame."""
    fps = scene.render.fps / scene.render.fps_base
    n = len(report.trace)
    frames = scene.frame_start + np.arange(n) * report.dt * fps
    loc = np.asarray(report.trace, float) / scale
    if capsule.animation_data is None:
        capsule.animation_data_create()
    old = capsule.animation_data.action
    if old is not None and old.get(results.BAKE_TAG) is not None and old.users <= 1:
        bpy.data.actions.remove(old)
    action = bpy.data.actions.new(f"Walk {path_name}")
    action[results.BAKE_TAG] = path_name
    capsule.animation_data.action = action
    for axis in range(3):
        fc = action.fcurve_ensure_for_datablock(capsule, "location", index=axis)
        fc.keyframe_points.add(n)
        fc.keyframe_points.foreach_set("co", np.stack([frames, loc[:, axis]], 1).ravel())
        fc.keyframe_points.foreach_set("interpolation", np.full(n, LINEAR, np.int32))
        fc.update()
    scene.frame_end = max(scene.frame_end, int(np.ceil(frames[-1])))
    return action


class CAPSULE_COLLISION_OT_walkthrough(operators.CheckOperator, bpy.types.Operator):
    """Walk the character along the selected paths (curves or mesh polylines) in one batched
    simulation; create a trace and one marker per event in the results collection"""

    bl_idname = "capsule_collision.walkthrough"
    bl_label = "Walk Through"
    bl_options = {"REGISTER", "UNDO"}

    rate: IntProperty(name="Frame Rate", default=60, min=1, max=1000,
                      description="Simulation steps per second (Hz)")
    bake: BoolProperty(name="Bake to Capsule", default=False,
                       description="Key the first walk's foot positions on a capsule")
    capsule: StringProperty(name="Capsule",
                            description="Capsule to bake on (empty: the active or first one)")

    @classmethod
    def poll(cls, context):
        return _walk_poll(cls, context)

    def _bake_target(self, context):
        if self.capsule:
            ob = context.scene.objects.get(self.capsule)
            if ob is None or ob.capsule_collision.role != "CAPSULE":
                raise ValueError(f"capsule {self.capsule!r} is not a capsule of this scene")
            return ob
        caps = operators.capsule_objects(context)
        if not caps:
            raise ValueError("nothing to bake on: add a capsule first")
        active = context.active_object
        return active if active in caps else caps[0]

    def run(self, context):
        edited = operators.leave_edit_mode(context)
        paths = path_objects(context)
        if not paths:
            raise ValueError("no path: select a curve or a mesh polyline with the role Path")
        bake_on = self._bake_target(context) if self.bake else None
        return walk_paths(context, paths, self.rate, bake_on, edited)


def walk_paths(context, paths, rate=60, bake_on=None, edited=()):
    """Walk ``paths`` (path objects) in one batched simulation at ``rate`` Hz: traces,
    markers, rows (with severities from core.checks.problems) and optionally a bake of the
    first walk on the capsule ``bake_on``. Returns the message (or ("WARNING", message))."""
    scene = context.scene
    settings = operators.controller_settings(context)
    level, depsgraph = operators.level_of(context)
    scale = level.unit_scale
    points = [scene_data.path_points(ob, depsgraph, scale) for ob in paths]
    with operators.Progress(context, 2) as progress:
        reports = core.walkthrough_many(level.mesh, points, settings, dt=1.0 / rate)
        progress.update(1)
    coll = results.results_collection(scene)
    rows, n_events, met, expected = [], 0, 0, 0
    for ob, report in zip(paths, reports):
        _remove_previous(ob.name)
        _trace_object(scene, coll, ob.name, report, scale)
        verdict = _expectation_met(ob, report)
        expected += verdict is not None
        met += bool(verdict)
        key = staleness.inputs_key(scene, "WALK", ob, depsgraph)
        rows += _walk_rows(ob, report, level, key, rate, settings.height / scale)
        for event in report.events:
            if event.kind != "reached_goal":
                n_events += 1
                _marker(coll, ob.name, event, level, scale, settings.radius / scale)
    if bake_on is not None:
        bake_walk(scene, bake_on, paths[0].name, reports[0], scale)
    results.drop_orphan_rows(scene, "WALK")  # paths deleted or renamed since
    results.replace_rows(scene, {"WALK"}, rows, owners={ob.name for ob in paths})
    reached = sum(bool(r.reached_goal) for r in reports)
    message = (f"Walked {len(paths)} paths ({MODEL_WORDS[settings.model]}): {reached} reached "
               f"the goal, {n_events} events")
    if expected:
        message += f", {met} of {expected} expectations met"
    if bake_on is not None:
        message += f"; baked {paths[0].name} on {bake_on.name}"
    message += operators.edit_note(edited)
    if expected and met < expected:
        return "WARNING", message
    return message


def _walk_rows(ob, report, level, key, rate, reach):
    """The verdict row and one row per event (reaching the goal aside) of one walk; an
    event's box to frame reaches ``reach`` Blender units around it (the character height)."""
    scale = level.unit_scale
    expect = ob.capsule_collision.expect_walk
    verdict = _expectation_met(ob, report)
    goal = "reached the goal" if report.reached_goal else "did not reach the goal"
    exp = ("" if verdict is None else f" (expected {expect}: {'met' if verdict else 'NOT met'})")
    trace = np.asarray(report.trace, float) / scale
    common = {"kind": "WALK", "capsule": ob.name, "stamp": level.stamp, "inputs": key,
              "rate": int(rate), "has_bounds": True}
    outcome = walk_outcome(expect, report).upper()
    # the finding (Export Report): the walk's verdict, and the event that broke it, are one
    unexpected = expect.strip().lower() == verdicts.ANY
    walk = {"check": "route" if unexpected else "walk", "finding": ob.name,
            "expected": expect.strip().lower(), "got": verdicts.walk_verdict(report),
            "has_position": True}
    n_events = sum(e.kind != "reached_goal" for e in report.events)  # reaching it is none
    rows = [dict(common, label=f"{ob.name}: {goal} in {report.duration:.2f} s, "
                               f"{n_events} events{exp}",
                 severity=outcome, time=float(report.duration),
                 position=tuple(trace[-1]), bounds=tuple(trace.min(0)) + tuple(trace.max(0)),
                 **walk)]
    for event, outcome in zip(report.events, walk_event_outcomes(expect, report)):
        if event.kind == "reached_goal":
            continue
        if outcome == "info":  # an event that is not what broke the expectation
            common.update(check="walk_event", finding=f"{ob.name}: {event.kind} at "
                          f"{event.time:.2f} s", expected="", got=event.kind)
        else:
            common.update(walk)
        name, face, instancer = _event_source(level, event.triangle)
        at = np.asarray(event.position, float) / scale
        rows.append(dict(
            common, object=name, severity=outcome.upper(), event=event.kind,
            instancer=instancer,
            label=f"{ob.name}: {core.event_label(event.kind, event.value)} ({event.kind}) at "
                  f"{event.time:.2f} s"
                  + (f" on {TriangleNames(level).label(event.triangle)}" if name else ""),
            face_count=1 if name else 0,
            value=0.0 if event.value is None else float(event.value),
            has_value=event.value is not None and bool(np.isfinite(event.value)),
            has_position=True,
            faces=[face] if face >= 0 else [], unmapped=int(bool(name) and face < 0),
            time=float(event.time), position=tuple(at),
            bounds=tuple(at - reach) + tuple(at + reach)))
    return rows


class CAPSULE_COLLISION_OT_compare_frame_rates(operators.CheckOperator, bpy.types.Operator):
    """Walk the active path at 30, 60 and 120 Hz and report verdicts that differ"""

    bl_idname = "capsule_collision.compare_frame_rates"
    bl_label = "Compare Frame Rates"
    bl_options = {"REGISTER", "UNDO"}

    @classmethod
    def poll(cls, context):
        return _walk_poll(cls, context)

    def run(self, context):
        edited = operators.leave_edit_mode(context)
        paths = path_objects(context)
        active = context.active_object
        path = active if active in paths else (paths[0] if paths else None)
        if path is None:
            raise ValueError("no path: select a curve or a mesh polyline with the role Path")
        return compare_frame_rates(context, path, edited)


def compare_frame_rates(context, path, edited=()):
    """Walk ``path`` at core.FRAME_RATES and store the comparison on the scene. Returns the
    message (or ("WARNING", message) when verdicts differ)."""
    settings = operators.controller_settings(context)
    level, depsgraph = operators.level_of(context)
    points = scene_data.path_points(path, depsgraph, level.unit_scale)
    with operators.Progress(context, 2) as progress:
        rep = core.compare_frame_rates(level.mesh, points, settings, rates=core.FRAME_RATES)
        progress.update(1)
    data = rep.to_dict()
    data["path"] = path.name
    context.scene.capsule_collision.frame_rate_report = json.dumps(data)
    hz = "/".join(str(r) for r in core.FRAME_RATES)
    if rep.consistent:
        return f"{path.name}: the same verdicts at {hz} Hz" + operators.edit_note(edited)
    parts = []
    for d in rep.differences:
        what = d.get("kind", d["what"])
        parts.append(f"{what} at {d['present_at']} Hz, not at {d['absent_at']} Hz"
                     if d["absent_at"] else f"{what} moves {d.get('spread', 0):.2f} m")
    return "WARNING", (f"{path.name}: verdicts differ between {hz} Hz: " + "; ".join(parts)
                       + operators.edit_note(edited))


classes = (CAPSULE_COLLISION_OT_walkthrough, CAPSULE_COLLISION_OT_compare_frame_rates)
