"""A level's pictures: the overview and one inset per finding (render.py draws them), named
in the report (``pictures``, each finding's ``picture``) so report.json and JUnit link them.

Insets go to errors and warnings with a position, errors first (the report's order within a
severity), at most ``--insets`` per level (infos, such as ledges, are in the overview only).
Files: ``report.png`` (one level on the command line, else ``report-<n>-<name>.png``) and
``finding-<n>-<k>.png`` (level n's k-th inset, k from 1), the same names in a sharded run as
in a single one, so a merge can combine them.
"""

from __future__ import annotations

import os

import numpy as np

from ..core.checks.reachability import Reachability, triangle_classes
from ..core.checks.severity import rank
from ..core.checks.verdicts import capsule_finding, walk_expectation_holds
from . import render


def overview_name(level, many: bool, stem: str) -> str:
    return f"report-{level.index}-{stem}.png" if many else "report.png"


def inset_name(level, k: int) -> str:
    return f"finding-{level.index}-{k}.png"


def _label(k, finding) -> str:
    value = finding.get("value")
    amount = "" if value is None else f" {value:.3g}"
    return f"{k}. {finding['check']}: {finding['name']} ({finding['got']}{amount})"


RED_KINDS = ("stairs",)  # warnings whose faces are the problem itself (a riser)


def _drawing(res, findings, labels):
    """What to draw: red the faces of every error (a penetrated wall, the face that stopped a
    walk) and of the risers the stair audit flags; a cramped or low floor is one big face
    as often as not (a level's ground), so those are shown by their labels and insets;
    islands and traps in their colours (their findings are labelled like the others)."""
    red = [t["triangle"] for f in findings
           if f["severity"] == "error" or f["check"] in RED_KINDS for t in f["faces"]]
    caps = [(c.capsule, capsule_finding(c, v) is not None)
            for c, v in zip(res.capsules, res.capsule_verdicts)]
    walks = [(r.trace, [e.position for e in r.events], not walk_expectation_holds(p.expect, r))
             for p, r in zip(res.paths, res.walk_reports)]
    reach = res.reach.result if res.reach is not None else None
    return render.Drawing(res.mesh, res.walkability, np.unique(np.asarray(red, np.int64)), caps,
                          walks, labels,
                          triangle_classes(reach) if isinstance(reach, Reachability) else None)


def _places(res, findings) -> np.ndarray:
    pts = [c.foot for c in res.capsules] + [p for path in res.paths for p in path.points]
    pts += [f["position"] for f in findings if f["position"] is not None]
    return np.asarray(pts, float).reshape(-1, 3)


def pictures(bpy, scene, res, report, level, job, work_dir: str, stem: str) -> dict:
    """Render the overview and the insets of one level into ``work_dir``; set
    ``report["pictures"]`` and each inset finding's ``picture``. Returns {file name: temp
    path}."""
    findings = report["findings"]
    for f in findings:
        f["picture"] = None
    chosen = sorted((i for i, f in enumerate(findings)
                     if f["position"] is not None and f["severity"] != "info"),
                    key=lambda i: rank(findings[i]["severity"]))[:job.insets]
    labels = [(k + 1, findings[i]["position"]) for k, i in enumerate(chosen)]
    drawing = _drawing(res, findings, labels)
    height = res.settings.height
    outputs = {}
    n = len(findings)
    title = f"{report['level']}: {n} finding{'s' if n != 1 else ''}"
    cut = render.cut_height(res.mesh, res.walkability, _places(res, findings), height)
    render.build_view(bpy, scene, drawing, title, cut=cut)
    name = overview_name(level, job.many, stem)
    tmp = os.path.join(work_dir, f"{level.index}-overview.png")
    render.render(bpy, scene, tmp)
    outputs[name] = tmp
    report["pictures"] = {"overview": name, "insets": []}
    for k, i in enumerate(chosen, start=1):
        f = findings[i]
        centre = np.asarray(f["position"], float) + (0.0, 0.0, 0.5 * height)
        view = render.inset_view(centre)
        half = 0.75 * view.width_m
        box = (centre[:2] - half, centre[:2] + half)
        render.build_view(bpy, scene, drawing, _label(k, f), view=view,
                          cut=float(f["position"][2]) + height + render.CUT_MARGIN, box=box)
        tmp = os.path.join(work_dir, f"{level.index}-inset-{k}.png")
        render.render(bpy, scene, tmp, render.INSET_WIDTH, render.INSET_HEIGHT)
        name = inset_name(level, k)
        outputs[name] = tmp
        f["picture"] = name
        report["pictures"]["insets"].append(name)
    return outputs
