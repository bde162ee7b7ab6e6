"""When a result row no longer says what a check would say now (the row is stale), and why.

A row's answer depends on the level (its geometry stamp, ``row.stamp``) and on its own
inputs, recorded as ``row.inputs`` when the row is written (``inputs_key``):

* PENETRATION rows: the capsule's world matrix, radius, height and expectation, and the
  unit scale;
* WALK rows: the path's points (world metres) and expectation, and the character settings;
* audit rows (STAND, STAIRS, HEADROOM, LEDGE): the character settings;
* WALKABILITY rows: the walkable slope and the up axis;
* reachability rows (REACHABILITY, ISLAND, TRAP): the spawns (which capsules, their world
  matrices) and the character settings.

``stale_reason(scene, row, level_stamp)`` compares both with the scene now and names the
first difference ("capsule moved or resized", "path edited or moved", "settings changed",
"level changed", "capsule deleted", ...), or "" when the row is current. Reading a path's
points evaluates its curve, so ``stale_reasons`` computes each owner's key once per call.
"""

from __future__ import annotations

import hashlib
import json

import bpy
import numpy as np

from . import properties, scene_data

SETTINGS_KINDS = ("STAND", "STAIRS", "HEADROOM", "LEDGE")
REACH_KINDS = ("REACHABILITY", "ISLAND", "TRAP", "SPAWN")
WALKABILITY_FIELDS = ("max_slope_deg", "up")


def _digest(*parts) -> str:
    h = hashlib.sha1(usedforsecurity=False)
    for p in parts:
        h.update(p if isinstance(p, bytes) else str(p).encode())
        h.update(b"\0")
    return h.hexdigest()[:16]


def settings_key(scene, fields=None) -> str:
    """Digest of the character settings in metres (``fields`` only, when given); "invalid"
    when the settings cannot be read (a check would refuse them)."""
    try:
        d = properties.controller_settings(scene).to_dict()
    except ValueError:
        return "invalid"
    if fields is not None:
        d = {k: d[k] for k in fields}
    return _digest(json.dumps(d, sort_keys=True))


def capsule_key(ob, unit_scale: float) -> str:
    """Digest of what a capsule's rows depend on besides the level: its world matrix, radius,
    height and expectation, and the unit scale (metres per Blender unit)."""
    pg = ob.capsule_collision
    m = np.array(ob.matrix_world, dtype=np.float64)
    return _digest(m.tobytes(), float(pg.radius), float(pg.height), pg.expect, unit_scale)


def spawns_key(scene) -> str:
    """Digest of where Reachability floods from: the spawn capsules' names and world
    matrices, and the unit scale."""
    parts: list = [scene_data.unit_scale_of(scene)]
    for ob in scene_data.spawn_objects(scene):
        parts += [ob.name, np.array(ob.matrix_world, dtype=np.float64).tobytes()]
    return _digest(*parts)


def path_key(ob, depsgraph, scale) -> str:
    """Digest of a path's points (world metres); "invalid" when it is not a walkable path."""
    try:
        pts = scene_data.path_points(ob, depsgraph, scale)
    except ValueError:
        return "invalid"
    return _digest(np.ascontiguousarray(pts).tobytes())


def inputs_key(scene, kind, owner=None, depsgraph=None) -> str:
    """The key ``row.inputs`` records for a row of ``kind`` owned by object ``owner`` (the
    capsule or path; None for level-wide rows). A walk's key is "<path>:<settings>"."""
    if kind == "PENETRATION":
        if owner is None:
            return ""
        return capsule_key(owner, scene_data.unit_scale_of(scene))
    if kind == "WALK":
        if owner is None:
            return ""
        dg = depsgraph or bpy.context.evaluated_depsgraph_get()
        scale = scene_data.unit_scale_of(scene)
        path = _digest(path_key(owner, dg, scale), owner.capsule_collision.expect_walk)
        return f"{path}:{settings_key(scene)}"
    if kind == "WALKABILITY":
        return settings_key(scene, WALKABILITY_FIELDS)
    if kind in REACH_KINDS:  # "<spawns>:<settings>", the same key for the three kinds
        return f"{spawns_key(scene)}:{settings_key(scene)}"
    if kind in SETTINGS_KINDS:  # spawns scope the audits (core.checks.findings)
        return f"{spawns_key(scene)}:{settings_key(scene)}"
    return ""


OWNER_KINDS = {"PENETRATION": "capsule", "WALK": "path"}


def stale_reason(scene, row, level_stamp, keys=None, depsgraph=None) -> str:
    """Why ``row`` is stale ("" when it is current). ``level_stamp``: the level's stamp now
    (None when unknown: the level is not judged). ``keys``: a memo {(kind, owner): key}."""
    if level_stamp is not None and row.stamp and row.stamp != level_stamp:
        return "level changed"
    if not row.inputs:
        return ""  # a row written before inputs were recorded: judged by the level only
    owner = None
    if row.kind in OWNER_KINDS:
        owner = scene.objects.get(row.capsule)
        if owner is None:
            return f"{OWNER_KINDS[row.kind]} deleted"
    memo = {} if keys is None else keys
    key = ("REACHABILITY" if row.kind in REACH_KINDS else row.kind, row.capsule)
    if key not in memo:
        memo[key] = inputs_key(scene, row.kind, owner, depsgraph)
    now = memo[key]
    if now == row.inputs:
        return ""
    if row.kind == "PENETRATION":
        return "capsule moved, resized or its expectation changed"
    if row.kind == "WALK" and now.split(":")[0] != row.inputs.split(":")[0]:
        return "path edited, moved or its expectation changed"
    if (row.kind in REACH_KINDS or row.kind in SETTINGS_KINDS) and \
            now.split(":")[0] != row.inputs.split(":")[0]:
        return "spawns moved, added or removed"
    return "settings changed"


def stale_reasons(scene, level_stamp, depsgraph=None) -> list[str]:
    """``stale_reason`` of every row of the scene, in row order."""
    keys: dict = {}
    return [stale_reason(scene, r, level_stamp, keys, depsgraph)
            for r in scene.capsule_collision.results]
