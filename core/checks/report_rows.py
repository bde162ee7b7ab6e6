"""The rows of the level report (``report.py``): triangles named by object and face, each
section of a level's report as JSON-ready data (metres, degrees, seconds; infinite values as
``null`` with a ``<field>_null_reason`` beside them).
"""

from __future__ import annotations

import math

import numpy as np

from ..walk.report import EVENTS
from .findings import worst_first
from .naming import TriangleNames
from .verdicts import capsule_finding, walk_finding, walk_verdict
from .walkability import CEILING, STEEP, WALKABLE, WALL

WORST_ROWS = 10  # rows listed per audit (the counts cover all)
TRIANGLES_LISTED = 50  # penetrated triangles listed per capsule (the count covers all)
FACES_LISTED = 200  # faces named per finding in report.json (``face_count`` covers all)
CLASS_NAMES = {WALKABLE: "walkable", STEEP: "steep", WALL: "wall", CEILING: "ceiling"}


# ----------------------------------------------------------------------------- naming
def position_row(p) -> list:
    return [round(float(x), 4) for x in p]


def value_row(row: dict, key: str, value, reason: str) -> dict:
    """row[key] = value (rounded) when finite, else None and row[key + '_null_reason']."""
    v = None if value is None else float(value)
    if v is not None and math.isfinite(v):
        row[key] = round(v, 6)
    else:
        row[key] = None
        row[key + "_null_reason"] = reason
    return row


# ----------------------------------------------------------------------------- sections
def walkability_section(mesh, codes) -> dict:
    out = {}
    for code, name in CLASS_NAMES.items():
        mask = codes == code
        out[name] = {"faces": int(mask.sum()), "area_m2": round(float(mesh.areas[mask].sum()), 4)}
    return out


def capsule_rows(res, names: TriangleNames) -> list:
    rows = []
    for check, verdict in zip(res.capsules, res.capsule_verdicts):
        cap = check.capsule
        height = float(np.linalg.norm(cap.b - cap.a)) + 2.0 * cap.radius
        listed = [dict(names.name(t), position=position_row(p), depth_m=round(float(d), 6))
                  for t, p, d in zip(verdict.triangles[:TRIANGLES_LISTED],
                                     verdict.points[:TRIANGLES_LISTED],
                                     verdict.depths[:TRIANGLES_LISTED])]
        finding = capsule_finding(check, verdict)
        rows.append({
            "name": check.name, "source": check.source, "foot": position_row(check.foot),
            "radius_m": round(float(cap.radius), 6), "height_m": round(height, 6),
            "expected": check.expect, "verdict": verdict.word, "ok": finding is None,
            "penetrating_count": int(verdict.triangles.size),
            "push_out_m": position_row(verdict.push_out), "buried": verdict.buried,
            "inside_solid": names.name(verdict.solid) if verdict.solid >= 0 else None,
            "triangles": listed})
        value_row(rows[-1], "deepest_m", verdict.deepest, "inside a closed solid with no way "
                  "out found")
    return rows


def event_row(event, names: TriangleNames) -> dict:
    row = {"kind": event.kind, "time_s": round(float(event.time), 4),
           "position": position_row(event.position), "unit": EVENTS[event.kind].unit}
    if event.value is None and event.kind in ("blocked",):
        row["value"] = None
        row["value_null_reason"] = "blocked by a wall: no value"
    else:
        value_row(row, "value", event.value,
               "no surface within the probe range" if event.value is not None
               else "no value for this event")
    row.update(names.name(event.triangle))
    return row


def walk_rows(res, names: TriangleNames) -> list:
    rows = []
    for check, rep in zip(res.paths, res.walk_reports):
        finding = walk_finding(check, rep)
        rows.append({
            "name": check.name, "source": check.source, "expected": check.expect,
            "verdict": walk_verdict(rep), "ok": finding is None,
            "reached_goal": bool(rep.reached_goal), "frames": int(len(rep.trace)),
            "duration_s": round(float(rep.duration), 4),
            "start": position_row(check.points[0]), "goal": position_row(check.points[-1]),
            "end": position_row(rep.trace[-1]),
            "events": [event_row(e, names) for e in rep.events]})
    return rows


def frame_rate_rows(res) -> list:
    rows = []
    for p, fr in zip(res.paths, res.frame_rate_reports):
        diffs = []
        for d in fr.differences:
            diffs.append({"what": d["what"], "kind": d.get("kind"),
                          "present_at": list(d["present_at"]), "absent_at": list(d["absent_at"]),
                          "positions": {k: position_row(v)
                                        for k, v in d.get("positions", {}).items()}})
        rows.append({"name": p.name, "rates": list(fr.rates), "consistent": bool(fr.consistent),
                     "verdicts": {str(k): v for k, v in fr.verdicts.items()},
                     "differences": diffs})
    return rows


def _audit_rows(names, problems, key, reason) -> list:
    return [value_row(dict(names.name(problems.faces[k]), position=position_row(
        problems.position[k])), key, problems.value[k], reason)
        for k in range(min(WORST_ROWS, len(problems.rows)))]


def audits_section(res, names: TriangleNames) -> dict:
    """Counts and the worst rows of each audit that ran (the problems of
    core/checks/problems.py, worst first: ``findings.worst_first``)."""
    out = {}
    if res.stand is not None:
        st = res.stand
        out["cannot_stand"] = {
            "faces": int(len(st.faces)), "of_walkable": int(len(st.tested)),
            "deepest": _audit_rows(names, worst_first("stand", st), "depth_m", "")}
    if res.stairs is not None:
        sa = res.stairs  # rows are the riser triangles of stair flights (core.audits.stairs)
        first = np.unique(sa.step, return_index=True)[1]  # one row per riser
        worst = []
        problems = worst_first("stairs", sa)
        for k in problems.rows[:WORST_ROWS]:
            row = dict(names.name(sa.riser[k]), position=position_row(sa.position[k]),
                       rise_m=round(float(sa.rise[k]), 6), too_high=bool(sa.too_high[k]),
                       too_shallow=bool(sa.too_shallow[k]), flight=int(sa.flight[k]),
                       step=int(sa.step[k]))
            worst.append(value_row(row, "tread_depth_m", sa.tread_depth[k],
                                   "the top riser of its flight: no next riser"))
        out["stairs"] = {
            "flights": int(len(np.unique(sa.flight))),
            "step_risers": int(len(first)),
            "too_high": int(sa.too_high[first].sum()),
            "too_shallow": int(sa.too_shallow[first].sum()),
            "worst": worst}
    if res.headroom is not None:
        h = res.headroom
        out["low_headroom"] = {
            "faces": int(len(h.faces)),
            "lowest": _audit_rows(names, worst_first("headroom", h), "clearance_m", "")}
    if res.ledges is not None:
        lg = res.ledges
        problems = worst_first("ledges", lg)
        rows = _audit_rows(names, problems, "drop_m", "no floor below within the audit's reach")
        for row, k in zip(rows, problems.rows):
            row.update(length_m=round(float(lg.length[k]), 6), start=position_row(lg.start[k]),
                       end=position_row(lg.end[k]))
        out["ledges"] = {
            "runs": int(len(lg.faces)),
            "faces": int(len(np.unique(lg.edge_faces))),
            "highest": rows}
    return out


def warning_entry(w):
    if isinstance(w, str):
        return {"message": w}
    for attr in ("to_dict", "_asdict"):
        if hasattr(w, attr):
            d = getattr(w, attr)()
            return {k: (v.tolist() if isinstance(v, np.ndarray) else v) for k, v in d.items()}
    return {"message": str(w)}


def finding_row(listed, names: TriangleNames, bracket: bool = True) -> dict:
    """A ``findings.Listed`` as JSON: the finding with the faces it is about (the first
    FACES_LISTED, named; ``face_count`` all of them), its ``value`` (metres or degrees: a
    capsule's depth, the event's value, a problem's depth, clearance, rise or drop; null when
    none or infinite), its ``size`` (m^2 of a region, m of a flight's riser or a ledge run),
    ``where`` (its identity position) and ``count`` (the problems an info stands for); with
    ``bracket`` the objects and faces are also named in its message."""
    finding = listed.finding
    triangles = np.asarray(listed.triangles, np.int64)
    faces = [names.name(t) for t in triangles[:FACES_LISTED]]
    row = value_row(dict(finding.to_dict(), faces=faces, new=None), "value", listed.value,
                    "no value for this finding")
    row["face_count"] = int(triangles.size)
    row["size"] = None if listed.size is None else round(float(listed.size), 4)
    row["size_unit"] = listed.size_unit if listed.size is not None else None
    row["where"] = None if listed.where is None else [float(x) for x in listed.where]
    row["count"] = int(listed.counted)
    if listed.cause is not None:
        row["cause"] = listed.cause
    if not bracket:
        return row
    by_object: dict = {}
    for f in faces:
        if f["object"] is not None:
            by_object.setdefault(f["object"], set()).add(f["face"])
    if by_object:
        where = "; ".join(
            obj + (" face" + ("s " if len(fs - {None}) > 1 else " ")
                   + ", ".join(str(x) for x in sorted(fs - {None})) if fs - {None} else "")
            for obj, fs in sorted(by_object.items()))
        row["message"] += f" [{where}]"
    elif faces:
        row["message"] += " [triangles " + ", ".join(str(f["triangle"]) for f in faces) + "]"
    return row
