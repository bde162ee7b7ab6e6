"""Validate a level headless and write a JSON report: the pipeline/CI entry point.

Usage::

    python tools/validate_level.py samples/sample_level.json --report report.json [--strict]
        [--workers N]

The level spec (JSON) names a collision mesh (OBJ, relative to the spec), the character
settings (``ControllerSettings`` fields), capsule placements and walk paths, each optionally
with an expected verdict:

    {"name": "...", "mesh": "level.obj",
     "settings": {"radius": 0.35, "height": 1.8, "max_slope_deg": 45, "step_height": 0.35},
     "capsules": [{"name": "spawn", "foot": [x, y, z], "expect": "clear" | "penetrating"}],
     "paths": [{"name": "stairs", "points": [[x, y, z], ...],
                "expect": "reached_goal" | "<event kind that must occur>"}]}

The report holds the walkability of every face (counts and areas per class), each capsule's
penetrating triangles and deepest contact, each walk's verdict and events (with positions,
values and triangles), and the findings. Exit status: 0 when the job ran (with ``--strict``:
and every expectation held), 1 when an expectation failed under ``--strict``, 2 for bad input.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

from core import (  # noqa: E402
    CEILING,
    STEEP,
    WALKABLE,
    WALL,
    ControllerSettings,
    TriangleMesh,
    classify_triangles,
    compare_frame_rates,
    headroom_audit,
    ledge_audit,
    stair_audit,
    stand_test,
    walkthrough_many,
)
from core.obj import read_obj  # noqa: E402

CLASS_NAMES = {WALKABLE: "walkable", STEEP: "steep", WALL: "wall", CEILING: "ceiling"}


def _load_spec(path):
    with open(path, encoding="utf-8") as handle:
        try:
            spec = json.load(handle)
        except json.JSONDecodeError as exc:
            raise ValueError(f"{path}: not valid JSON: {exc}") from exc
    if not isinstance(spec, dict) or "mesh" not in spec:
        raise ValueError(f"{path}: a level spec is a JSON object with at least a 'mesh' entry")
    return spec


def _walkability(mesh, settings):
    codes = classify_triangles(mesh, settings.max_slope_deg, up=settings.up)
    out = {}
    for code, name in CLASS_NAMES.items():
        mask = codes == code
        out[name] = {"faces": int(mask.sum()), "area_m2": round(float(mesh.areas[mask].sum()), 4)}
    return out


# metres: contacts shallower than this are reported as clear. A capsule snapped onto a floor
# touches it exactly, and float rounding of foot + radius can turn that into a 1e-16 m
# "penetration"; no designer means that. Overridable with --min-depth.
MIN_REPORTED_DEPTH = 1e-6


def _check_capsules(mesh, settings, capsules, min_depth=MIN_REPORTED_DEPTH):
    if not capsules:
        return []
    up = np.asarray(settings.up, dtype=np.float64)
    foot = np.array([c["foot"] for c in capsules], dtype=np.float64).reshape(-1, 3)
    a = foot + settings.radius * up
    b = foot + (settings.height - settings.radius) * up
    batch = mesh.capsule_contacts_many(a, b, settings.radius)
    rows = []
    for i, spec in enumerate(capsules):
        sel = (batch.query == i) & (batch.depth > min_depth)
        tris = np.sort(batch.triangle[sel])
        row = {
            "name": spec.get("name", f"capsule {i}"),
            "foot": foot[i].tolist(),
            "penetrating": bool(sel.any()),
            "triangles": tris.tolist(),
            "max_depth_m": float(batch.depth[sel].max()) if sel.any() else 0.0,
        }
        if "expect" in spec:
            want = spec["expect"] == "penetrating"
            row["expected"] = spec["expect"]
            row["ok"] = want == row["penetrating"]
        rows.append(row)
    return rows


def _walk_verdict(report):
    if report.reached_goal:
        return "reached_goal"
    kinds = [e.kind for e in report.events if e.kind != "reached_goal"]
    return kinds[0] if kinds else "ended"


def _check_paths(mesh, settings, paths, frame_rates=(), workers=1):
    if not paths:
        return []
    reports = walkthrough_many(mesh, [p["points"] for p in paths], settings, workers=workers)
    rows = []
    for spec, rep in zip(paths, reports):
        d = rep.to_dict(include_trace=False)
        row = {
            "name": spec.get("name", "path"),
            "verdict": _walk_verdict(rep),
            "reached_goal": bool(rep.reached_goal),
            "frames": int(len(rep.trace)),
            "events": d["events"],
        }
        if "expect" in spec:
            want = spec["expect"]
            row["expected"] = want
            if want == "reached_goal":
                row["ok"] = bool(rep.reached_goal)
            else:
                row["ok"] = any(e.kind == want for e in rep.events)
        if frame_rates:
            fr = compare_frame_rates(mesh, spec["points"], settings, rates=frame_rates)
            row["frame_rates"] = {"rates": list(fr.rates), "consistent": bool(fr.consistent),
                                  "differences": fr.differences}
        rows.append(row)
    return rows


STEP_LIKE_FACTOR = 2.0  # risers up to this many step heights tall are audited as steps


def _audits(mesh, settings, worst=10):
    """Level-wide audits: counts plus the ``worst`` rows of each (face, value, position)."""

    def rows(faces, values, positions, order):
        return [{"face": int(faces[k]), "value_m": float(values[k]),
                 "position": [round(float(x), 4) for x in positions[k]]} for k in order[:worst]]

    stand = stand_test(mesh, settings)
    stairs = stair_audit(mesh, settings)
    head = headroom_audit(mesh, settings)
    ledges = ledge_audit(mesh, settings)
    # A riser more than STEP_LIKE_FACTOR x step_height tall is a wall, not a step: a designer
    # wants the 0.45 m steps, not every 2.5 m wall, in the stair section of the report.
    step_like = stairs.rise <= STEP_LIKE_FACTOR * settings.step_height
    bad_stairs = np.flatnonzero(step_like & (stairs.too_high | stairs.too_shallow))
    finite_drop = np.where(np.isfinite(ledges.drop), ledges.drop, np.finfo(float).max)
    return {
        "cannot_stand": {
            "faces": int(len(stand.faces)), "of_walkable": int(len(stand.tested)),
            "deepest": rows(stand.faces, stand.depth, stand.position, np.argsort(-stand.depth))},
        "stairs": {
            "step_risers": int(step_like.sum()),
            "too_high": int((step_like & stairs.too_high).sum()),
            "too_shallow": int((step_like & stairs.too_shallow).sum()),
            "highest": rows(stairs.riser[bad_stairs], stairs.rise[bad_stairs],
                            stairs.position[bad_stairs], np.argsort(-stairs.rise[bad_stairs]))},
        "low_headroom": {
            "faces": int(len(head.faces)),
            "lowest": rows(head.faces, head.clearance, head.position, np.argsort(head.clearance))},
        "ledges": {
            "faces": int(len(ledges.faces)),
            "highest": rows(ledges.faces, finite_drop, ledges.position, np.argsort(-finite_drop))},
    }


def validate(spec_path, min_depth=MIN_REPORTED_DEPTH, frame_rates=(), workers=1):
    """Run every check of the level spec at ``spec_path``; return the report dict.

    ``workers``: processes sharing the walks (``walkthrough_many``); the report is the same."""
    t0 = time.perf_counter()
    spec = _load_spec(spec_path)
    mesh_path = os.path.join(os.path.dirname(os.path.abspath(spec_path)), spec["mesh"])
    vertices, triangles = read_obj(mesh_path)
    mesh = TriangleMesh(vertices, triangles)
    settings = ControllerSettings(**spec.get("settings", {}))
    t_load = time.perf_counter()
    walkability = _walkability(mesh, settings)
    capsules = _check_capsules(mesh, settings, spec.get("capsules", []), min_depth)
    t_caps = time.perf_counter()
    walks = _check_paths(mesh, settings, spec.get("paths", []), frame_rates, workers)
    t_walk = time.perf_counter()
    audits = _audits(mesh, settings)
    t_audit = time.perf_counter()
    findings = [
        {"check": "capsule", "name": r["name"], "expected": r["expected"],
         "got": "penetrating" if r["penetrating"] else "clear"}
        for r in capsules if r.get("ok") is False
    ] + [
        {"check": "walk", "name": r["name"], "expected": r["expected"], "got": r["verdict"]}
        for r in walks if r.get("ok") is False
    ] + [
        {"check": "frame_rate", "name": r["name"], "expected": "same verdict at "
         + "/".join(str(hz) for hz in r["frame_rates"]["rates"]) + " Hz",
         "got": "; ".join(d.get("kind", d["what"]) + " differs" for d in
                          r["frame_rates"]["differences"])}
        for r in walks if "frame_rates" in r and not r["frame_rates"]["consistent"]
    ]
    return {
        "level": spec.get("name", os.path.basename(spec_path)),
        "mesh": {"file": spec["mesh"], "vertices": int(len(vertices)),
                 "triangles": int(mesh.n_triangles)},
        "settings": settings.to_dict(),
        "walkability": walkability,
        "capsules": capsules,
        "walks": walks,
        "audits": audits,
        "min_reported_depth_m": min_depth,
        "findings": findings,
        "ok": not findings,
        "timings_s": {"load_and_build": round(t_load - t0, 4),
                      "walkability_and_capsules": round(t_caps - t_load, 4),
                      "walkthroughs": round(t_walk - t_caps, 4),
                      "audits": round(t_audit - t_walk, 4)},
    }


def _print_summary(report, out):
    print(f"Level: {report['level']}  ({report['mesh']['triangles']} triangles)", file=out)
    w = report["walkability"]
    print("Walkability: " + ", ".join(f"{k} {v['faces']} faces / {v['area_m2']} m2"
                                      for k, v in w.items()), file=out)
    for r in report["capsules"]:
        state = (f"PENETRATES {len(r['triangles'])} triangles, deepest {r['max_depth_m']:.3f} m"
                 if r["penetrating"] else "clear")
        flag = "" if r.get("ok", True) else "   <-- expected " + r["expected"]
        print(f"  capsule {r['name']:<24} {state}{flag}", file=out)
    for r in report["walks"]:
        detail = ", ".join(
            f"{e['kind']}" + (f" {e['value']:.3g}" if isinstance(e.get("value"), float)
                              and math.isfinite(e["value"]) else "")
            for e in r["events"])
        flag = "" if r.get("ok", True) else "   <-- expected " + r["expected"]
        print(f"  walk    {r['name']:<24} {r['verdict']:<16} [{detail}]{flag}", file=out)
    checked = [r for r in report["walks"] if "frame_rates" in r]
    if checked:
        odd = [r["name"] for r in checked if not r["frame_rates"]["consistent"]]
        rates = "/".join(f"{hz:g}" for hz in checked[0]["frame_rates"]["rates"])
        print(f"Frame rates {rates} Hz: " + (f"verdicts differ on {', '.join(odd)}" if odd
              else f"same verdicts on all {len(checked)} walks"), file=out)
    a = report["audits"]
    print(f"Audits: {a['cannot_stand']['faces']} of {a['cannot_stand']['of_walkable']} walkable "
          f"faces too cramped to stand on; {a['stairs']['too_high']} risers too high and "
          f"{a['stairs']['too_shallow']} treads too shallow of {a['stairs']['step_risers']} step "
          f"risers; "
          f"{a['low_headroom']['faces']} faces with low headroom; "
          f"{a['ledges']['faces']} ledges", file=out)
    n = len(report["findings"])
    print(f"{n} finding(s); {'all expectations held' if not n else 'see report'}", file=out)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("spec", help="level spec (JSON)")
    parser.add_argument("--report", default="report.json", help="where to write the JSON report")
    parser.add_argument("--strict", action="store_true",
                        help="exit 1 when any expectation in the spec does not hold")
    parser.add_argument("--frame-rates", default="",
                        help="also walk every path at these rates, e.g. 30,60,120 (Hz), and "
                             "report where the verdicts differ")
    parser.add_argument("--min-depth", type=float, default=MIN_REPORTED_DEPTH,
                        help="metres; shallower capsule contacts count as clear (default 1e-6)")
    parser.add_argument("--workers", type=int, default=1,
                        help="processes sharing the walks (default 1; e.g. the machine's "
                             "core count for levels with hundreds of paths); same report")
    args = parser.parse_args(argv)
    try:
        rates = tuple(float(x) for x in args.frame_rates.split(",") if x.strip())
        report = validate(args.spec, args.min_depth, rates, args.workers)
    except (OSError, ValueError, TypeError, KeyError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    with open(args.report, "w", encoding="utf-8") as handle:
        json.dump(report, handle, indent=2, allow_nan=False, default=float)
        handle.write("\n")
    _print_summary(report, sys.stdout)
    print(f"report written to {os.path.abspath(args.report)}")
    return 1 if (args.strict and report["findings"]) else 0


if __name__ == "__main__":
    sys.exit(main())
