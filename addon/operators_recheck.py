"""Re-check All: run again every check the scene has results for, under one progress bar.

Which checks: the kinds of the scene's rows, in panel order: penetration (the capsules that
have rows), walkability, the four audits, reachability (from the spawns marked now), the
walks (the paths that have rows, at the frame rate they were walked, a baked walk baked
again on its capsule), and the frame-rate comparison when one is stored. Each runs through
the same function as its own button, so the rows are exactly what the buttons give;
expectations live on the capsules and paths and are kept. A check that cannot run (a path
deleted, settings refused) is named in the report and the others still run. The message ends
with the panel's summary ("N errors, M warnings, K passed").
"""

import json
from collections.abc import Callable

import bpy

from . import operators, operators_audit, operators_reach, operators_walk, results
from .framing import baked_on

AUDIT_KINDS = ("STAND", "STAIRS", "HEADROOM", "LEDGE")


def _owners(scene, kind):
    """Objects of the scene owning rows of ``kind``, in row order, each once."""
    names = dict.fromkeys(r.capsule for r in scene.capsule_collision.results if r.kind == kind)
    return [scene.objects[n] for n in names if n in scene.objects]


def _walk_rate(scene, path_name) -> int:
    rates = [r.rate for r in scene.capsule_collision.results
             if r.kind == "WALK" and r.capsule == path_name and r.rate > 0]
    return rates[0] if rates else 60


def planned_checks(context) -> list:
    """(name, callable(context) -> message) for every check the scene has results for."""
    scene = context.scene
    kinds = {r.kind for r in scene.capsule_collision.results}
    plan: list[tuple[str, Callable]] = []
    capsules = _owners(scene, "PENETRATION")
    if capsules:
        plan.append(("penetration",
                     lambda c: operators.check_penetration(c, capsules)))
    if "WALKABILITY" in kinds:
        plan.append(("walkability", operators.classify_walkability))
    for kind in AUDIT_KINDS:
        if kind in kinds:
            plan.append((kind.lower(), lambda c, k=kind: operators_audit.run_audit(c, k)))
    if kinds & set(operators_reach.REACH_KINDS):
        plan.append(("reachability", operators_reach.run_reachability))
    by_rate: dict = {}
    for path in _owners(scene, "WALK"):
        bake = baked_on(scene, path.name)
        if bake is not None:
            plan.append((f"walk {path.name}", lambda c, p=path, b=bake: operators_walk.walk_paths(
                c, [p], _walk_rate(c.scene, p.name), b)))
        else:
            by_rate.setdefault(_walk_rate(scene, path.name), []).append(path)
    for rate, paths in sorted(by_rate.items()):
        plan.append((f"walks at {rate} Hz",
                     lambda c, ps=paths, r=rate: operators_walk.walk_paths(c, ps, r)))
    stored = scene.capsule_collision.frame_rate_report
    if stored:
        path = scene.objects.get(json.loads(stored).get("path", ""))
        if path is not None:
            plan.append(("frame rates",
                         lambda c, p=path: operators_walk.compare_frame_rates(c, p)))
    return plan


class CAPSULE_COLLISION_OT_recheck_all(bpy.types.Operator):
    """Run again every check the scene has results for (penetration, walkability, audits,
    reachability, walks, frame rates), keeping expectations, with progress; then count the
    findings"""

    bl_idname = "capsule_collision.recheck_all"
    bl_label = "Re-check All"
    bl_options = {"REGISTER", "UNDO"}

    @classmethod
    def poll(cls, context):
        if not operators.object_mode_poll(cls, context):
            return False
        if not context.scene.capsule_collision.results:
            cls.poll_message_set("No results yet: run a check first")
            return False
        return True

    def execute(self, context):
        edited = operators.leave_edit_mode(context)
        plan = planned_checks(context)
        failed = []
        with operators.Progress(context, len(plan)) as progress:
            for i, (name, run) in enumerate(plan):
                try:
                    run(context)
                except ValueError as exc:
                    failed.append(f"{name}: {exc}")
                progress.update(i + 1)
        counts = results.severity_counts(context.scene)
        message = (f"Re-checked {len(plan) - len(failed)} of {len(plan)} checks: "
                   f"{results.summary_text(counts)}" + operators.edit_note(edited))
        if failed:
            message += "; could not run " + "; ".join(failed)
        context.scene.capsule_collision.last_report = message
        level = "WARNING" if failed or counts["error"] else "INFO"
        self.report({level}, message)
        return {"FINISHED"}


classes = (CAPSULE_COLLISION_OT_recheck_all,)
