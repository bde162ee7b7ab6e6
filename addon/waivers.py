"""Waivers in the panel: findings a designer marks as intended, kept in the level's sidecar.

The level is the saved .blend; its sidecar is ``<blend name>.levelcheck.json`` beside it (or
``<blend name>.blend.levelcheck.json`` when that one exists; both is an error, as in the CLI:
core's rule, ``core.checks.sidecar``), the file ``levelcheck`` reads for that .blend and for a
level exported beside it under the same name (``castle.obj`` next to ``castle.blend``). Its
``"waivers"`` are the CLI's (``core.checks.gate``: the finding's ``check``, its ``name`` or
``where``, ``got``, a ``reason`` and ``who``), matched by the same rule (``gate.waiver_hits``:
the first waiver naming a finding marks it), so the panel, Export Report and the CLI mark the
same findings.

- ``sidecar_path()``: the sidecar of the open .blend (ValueError when it is unsaved or has
  two); ``near_miss_lines()``: files beside it that look meant as its sidecar, not read;
- ``read_sidecar(path)`` / ``write_waivers(path, doc, waivers)``: the sidecar as a dict
  (every other key kept as written) and its waivers replaced, written atomically;
- ``row_waiver(row, reason, who)``: the waiver entry naming a finding row;
- ``mark_rows(scene, kinds)``: each finding row a waiver names gets ``waived_by`` and
  ``waived_reason``; for each check among the row ``kinds`` just written, a waiver naming no
  row is an info row (got ``waiver_stale``), as the CLI lists it.

Writing a file is not undone by Blender's undo: the sidecar is the truth, and the rows are
marked again from it whenever a check writes rows (docs/decisions.md).
"""

import json
import os

import bpy

from ..core.checks.gate import WAIVER_STALE, matches, parse_waivers, stale_finding, waiver_hits
from ..core.checks.sidecar import find_sidecar, sidecar_to_write

# The row kinds each finding check is listed under (a stale waiver's row takes that kind).
CHECK_KINDS = {"capsule": "PENETRATION", "penetration": "PENETRATION", "walk": "WALK",
               "route": "WALK", "walk_event": "WALK", "stand": "STAND", "stairs": "STAIRS",
               "headroom": "HEADROOM", "ledges": "LEDGE", "islands": "ISLAND",
               "traps": "TRAP", "spawns": "SPAWN", "collision_diff": "COLLISION_DIFF"}
UNSAVED = ("save the .blend first: waivers are kept in its sidecar "
           "(<name>.levelcheck.json beside it), the file levelcheck reads")


def sidecar_path() -> str:
    """The open .blend's sidecar path (core's rule, ``core.checks.sidecar``: either name
    levelcheck reads; ``<name>.levelcheck.json`` when neither exists yet). ValueError when
    the .blend is not saved, or when both names exist (as the CLI refuses it)."""
    blend = bpy.data.filepath
    if not blend:
        raise ValueError(UNSAVED)
    return sidecar_to_write(blend)


def near_miss_lines() -> list:
    """A line per file beside the saved .blend that looks meant as its sidecar but is not
    read (core's near misses, the CLI's warning); [] when unsaved or there is none."""
    blend = bpy.data.filepath
    if not blend:
        return []
    try:
        return find_sidecar(blend).near_miss_lines(os.path.basename(blend))
    except ValueError:
        return []


def read_sidecar(path: str) -> dict:
    """The sidecar at ``path`` as a dict ({} when there is none). ValueError naming the file
    when it is not a JSON object or its waivers are malformed (``gate.parse_waivers``)."""
    if not os.path.exists(path):
        return {}
    try:
        with open(path, encoding="utf-8") as fh:
            doc = json.load(fh)
    except (OSError, ValueError) as exc:
        raise ValueError(f"{path}: cannot read it as JSON: {exc}") from None
    if not isinstance(doc, dict):
        raise ValueError(f"{path}: expected a JSON object")
    parse_waivers(doc.get("waivers"), path)
    return doc


def write_waivers(path: str, doc: dict, waivers: list) -> None:
    """Write ``doc`` with its ``"waivers"`` set to ``waivers`` (key dropped when empty) to
    ``path`` atomically (a temporary file renamed over it)."""
    out = dict(doc)
    if waivers:
        out["waivers"] = waivers
    else:
        out.pop("waivers", None)
    parse_waivers(out.get("waivers"), path)
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as fh:
        json.dump(out, fh, indent=1)
        fh.write("\n")
    os.replace(tmp, path)


def row_finding(row) -> dict | None:
    """The identity of a finding row as the report names it (check, name, where, got), or
    None for a row that is no waivable finding (a summary, a passed row, a stale waiver)."""
    if row.severity not in ("ERROR", "WARNING", "INFO") or not row.check or not row.got:
        return None
    if row.got == WAIVER_STALE:
        return None
    where = tuple(float(x) for x in row.where) if row.has_where else None
    return {"check": row.check, "name": row.finding or row.capsule, "where": where,
            "got": row.got}


def row_waiver(row, reason: str, who: str) -> dict:
    """The sidecar entry waiving finding ``row`` (ValueError for a row that is no finding)."""
    found = row_finding(row)
    if found is None:
        raise ValueError("select a finding row (an error, warning or info of a check) to "
                         "waive")
    entry = {"check": found["check"]}
    if found["where"] is not None:
        entry["where"] = [round(x, 4) for x in found["where"]]
    else:
        entry["name"] = found["name"]
    entry.update(got=found["got"], reason=reason.strip(), who=who.strip())
    return entry


def row_names(row, waiver) -> bool:
    """Whether ``waiver`` (``gate.Waiver``) names ``row``: the finding it waives, or the info
    row saying the waiver's finding is gone."""
    if row.got == WAIVER_STALE:
        return row.finding == stale_finding(waiver).name
    found = row_finding(row)
    return found is not None and matches(waiver, found)


def waivers_of(doc: dict, path: str) -> tuple:
    """The parsed waivers (``gate.Waiver``) of a sidecar dict."""
    return parse_waivers(doc.get("waivers"), path)


_READ: dict = {}  # sidecar path -> ((mtime_ns, size), its waivers): one parse per change


def _sidecar_waivers() -> tuple:
    """The open .blend's waivers, () when it is unsaved or has no (readable) sidecar; the
    file is parsed again only when it changed (every row write asks: a capsule dragged
    writes its rows each redraw)."""
    try:
        path = sidecar_path()
        st = os.stat(path)
    except (ValueError, OSError):
        return ()
    stamp = (st.st_mtime_ns, st.st_size)
    known = _READ.get(path)
    if known is not None and known[0] == stamp:
        return known[1]
    try:
        got = waivers_of(read_sidecar(path), path)
    except ValueError:
        got = ()
    _READ.clear()
    _READ[path] = (stamp, got)
    return got


def mark_rows(scene, kinds=None) -> int:
    """Mark the finding rows the sidecar's waivers name (``waived_by``, ``waived_reason`` of
    the first waiver naming it, core's rule ``gate.waiver_hits``, the CLI's; cleared on the
    others) and add an info row per waiver of a check among ``kinds`` (the row kinds just
    written; None: none) that names no row. Returns how many rows are waived."""
    s = scene.capsule_collision
    waivers = _sidecar_waivers()
    hits, stale = waiver_hits([row_finding(row) for row in s.results], waivers)
    for row, k in zip(s.results, hits, strict=True):
        row.waived_by = "" if k < 0 else waivers[k].who
        row.waived_reason = "" if k < 0 else waivers[k].reason
    kinds = set(kinds or ())
    for i in reversed(range(len(s.results))):  # a partial write (one capsule) keeps them
        if s.results[i].got == WAIVER_STALE and s.results[i].kind in kinds:
            s.results.remove(i)
    for k in stale:
        kind = CHECK_KINDS.get(waivers[k].check)
        if kind not in kinds:
            continue
        f = stale_finding(waivers[k])
        row = s.results.add()
        row.kind, row.label, row.severity = kind, f.message, "INFO"
        row.check, row.finding, row.expected, row.got = f.check, f.name, f.expected, f.got
    return sum(1 for k in hits if k >= 0)
