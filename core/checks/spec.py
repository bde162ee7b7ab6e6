"""The level spec: what to check in a level, as its sidecar JSON says (``<level>.levelcheck.json``).

One parser for the pipeline CLI and (later) the panel's import/export, testable without
Blender. Strict everywhere: an unknown key anywhere, a typo in an expected verdict, a
duplicate capsule, path or target name, a wrong type or a non-finite number is a
``SpecError`` naming the key's JSON path (``capsules[2].expected``), never a silent default.

A spec (every key optional)::

    {"name": "Castle", "mesh": "castle.obj", "preset": "unity",
     "settings": {"step_height": 0.3}, "collection": "Collision", "naming": false,
     "up": "Z", "forward": "Y",
     "capsules": [{"name": "Spawn", "foot": [x, y, z], "radius": 0.35, "height": 1.8,
                   "expect": "clear"}],
     "paths": [{"name": "Main Route", "points": [[x, y, z], ...], "expect": "reached_goal"}],
     "spawns": [[x, y, z], ...],
     "targets": [{"name": "Roof", "point": [x, y, z], "expect": "reachable"}],
     "render": "castle_render.obj",
     "waivers": [{"check": "islands", "where": [x, y, z], "got": "island",
                  "reason": "...", "who": "..."}],
     "severity": {"islands": "info"}, "min_area": {"islands": 2.0, "stand": 0.25},
     "exclude": ["SkyShell"]}

``waivers``, ``severity`` and ``min_area`` are the gate's (``core/checks/gate.py``);
``exclude`` names objects or collections the CLI leaves out of the level.

- ``parse_spec(doc, source)`` -> ``LevelSpec`` (validated, normalised).
- ``parse_settings(values, field)`` -> ``{name: value}``: ControllerSettings fields by name
  (metres, degrees, seconds), each converted to the field's type; unknown names are errors.
- ``resolve_settings(base, preset, spec_settings, overrides)``: the character a level is
  checked with (the level's own, an engine preset, the spec's fields, then overrides).
- ``merge_checks(spec, scene_capsules, scene_paths, settings)``: the capsules and paths to
  check, the scene's overridden and completed by the spec's, by name.
- ``spawn_points(spec, capsules)``: where reachability floods from: the feet of the capsules
  marked as spawns (the scene's, where the spec moved them), then the spec's ``spawns``.

``render`` names the level as drawn (a file, relative to the level file) when the level file
is its collision (a Quake map's clip mesh beside its render mesh): render against collision
(``core.collision_diff``) judges the level against it.

``up`` and ``forward`` are the importer axes of an OBJ or FBX level (Blender's names: the
file's axis that points up, and forward); see ``AXES``.

Frame and units: world space, metres; ``settings.up`` is up.
"""

from __future__ import annotations

import dataclasses
import math
from typing import NamedTuple

import numpy as np

from ..controller import presets
from ..controller.settings import ControllerSettings
from ..geometry.shapes import Capsule
from .gate import parse_min_area, parse_severities, parse_waivers
from .verdicts import (
    ANY,
    CapsuleCheck,
    PathCheck,
    parse_capsule_expectation,
    parse_walk_expectation,
)

SPEC_KEYS = ("name", "mesh", "preset", "settings", "collection", "naming", "up", "forward",
             "capsules", "paths", "spawns", "targets", "render", "waivers", "severity",
             "min_area", "exclude")
CAPSULE_KEYS = ("name", "foot", "radius", "height", "expect")
PATH_KEYS = ("name", "points", "expect")
TARGET_KEYS = ("name", "point", "expect")
REACHABLE = "reachable"
UNREACHABLE = "unreachable"
TARGET_EXPECTATIONS = (REACHABLE, UNREACHABLE)
AXES = ("X", "Y", "Z", "-X", "-Y", "-Z")  # Blender's importer axes, as a file's up or forward
# ControllerSettings fields a spec or the command line may set (``up`` is the level's frame).
SETTING_FIELDS = {f.name: f for f in dataclasses.fields(ControllerSettings) if f.name != "up"}
SETTING_NAMES = tuple(SETTING_FIELDS)


class SpecError(ValueError):
    """A spec that cannot be checked: the message names the source and the key's JSON path."""


class CapsuleSpec(NamedTuple):
    """A capsule of the spec: ``foot`` (3,) metres or None (the scene's capsule of that name
    keeps its place), ``radius``/``height`` metres or None (the scene's or the character's),
    ``expect`` a capsule expectation or None (the scene's, else ``any``)."""

    name: str
    foot: tuple | None
    radius: float | None
    height: float | None
    expect: str | None


class PathSpec(NamedTuple):
    """A walk path of the spec: ``points`` ((K, 3) metres as tuples) or None (the scene's
    path of that name), ``expect`` a walk expectation or None (the scene's, else ``any``)."""

    name: str
    points: tuple | None
    expect: str | None


class TargetSpec(NamedTuple):
    """A reachability target: a foot ``point`` (3,) metres that must be reachable from the
    spawns (``expect`` "reachable") or must not be ("unreachable")."""

    name: str
    point: tuple
    expect: str


class LevelSpec(NamedTuple):
    """A validated spec. ``naming`` is None when the spec does not say; ``settings`` holds
    only the fields it sets; ``up``/``forward`` are one of AXES or None; ``render`` the
    render level's file as written (relative to the level file) or None."""

    name: str | None = None
    mesh: str | None = None
    preset: str | None = None
    settings: dict = {}
    collection: str | None = None
    naming: bool | None = None
    up: str | None = None
    forward: str | None = None
    capsules: tuple = ()
    paths: tuple = ()
    spawns: tuple = ()
    targets: tuple = ()
    render: str | None = None
    waivers: tuple = ()  # gate.Waiver: findings marked as intended
    severity: dict = {}  # finding kind -> severity (gate.parse_severities)
    min_area: dict = {}  # "islands" / "stand" -> m^2 (gate.parse_min_area)
    exclude: tuple = ()  # objects or collections left out of the level

    @property
    def has_checks(self) -> bool:
        return bool(self.capsules or self.paths or self.spawns or self.targets)


EMPTY_SPEC = LevelSpec()


# ----------------------------------------------------------------------------- values
def _fail(source: str, path: str, message: str):
    raise SpecError(f"spec {source}: {path}: {message}" if path else f"spec {source}: {message}")


def _keys(obj, allowed: tuple, source: str, path: str):
    if not isinstance(obj, dict):
        _fail(source, path, f"expected a JSON object, got {_kind(obj)}")
    for key in obj:
        if key not in allowed:
            where = f"{path}.{key}" if path else str(key)
            _fail(source, where, f"unknown key {key!r}; known: {', '.join(sorted(allowed))}")


def _kind(value) -> str:
    return {dict: "an object", list: "a list", str: "a string", bool: "a boolean",
            type(None): "null"}.get(type(value), type(value).__name__)


def _number(value, source, path) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        _fail(source, path, f"expected a number, got {value!r}")
    if not math.isfinite(value):
        _fail(source, path, f"must be finite, got {value!r}")
    return float(value)


def _vec3(value, source, path) -> tuple:
    if not isinstance(value, list) or len(value) != 3:
        _fail(source, path, f"expected [x, y, z] in metres, got {value!r}")
    return tuple(_number(v, source, f"{path}[{k}]") for k, v in enumerate(value))


def _string(value, source, path) -> str:
    if not isinstance(value, str) or not value.strip():
        _fail(source, path, f"expected a non-empty string, got {value!r}")
    return value


def _list(doc, key, source) -> list:
    value = doc.get(key, [])
    if value is None:
        return []
    if not isinstance(value, list):
        _fail(source, key, f"expected a list, got {_kind(value)}")
    return value


def _positive(row, key, source, path):
    if key not in row:
        return None
    v = _number(row[key], source, f"{path}.{key}")
    if not v > 0.0:
        _fail(source, f"{path}.{key}", f"must be > 0 metres, got {row[key]!r}")
    return v


def _unique(names: list, what: str, key: str, source: str):
    first: dict = {}
    for i, name in enumerate(names):
        if name in first:
            _fail(source, f"{key}[{i}].name",
                  f"duplicate {what} name {name!r} (also {key}[{first[name]}])")
        first[name] = i


def parse_axis(value, field: str = "up") -> str:
    """``value`` as one of AXES (case-insensitive, "+Z" allowed); ValueError naming ``field``."""
    word = value.strip().upper().lstrip("+") if isinstance(value, str) else value
    if word not in AXES:
        raise ValueError(f"{field}: expected one of {', '.join(AXES)}, got {value!r}")
    return word


def check_axes(up: str | None, forward: str | None, field: str = "forward"):
    """ValueError when ``forward`` lies along ``up`` (the importer needs two different axes)."""
    if up and forward and up.lstrip("-") == forward.lstrip("-"):
        raise ValueError(f"{field}: {forward} lies along up {up}; choose another axis")


def parse_settings(values, field: str = "settings") -> dict:
    """``{name: value}`` from a dict (a spec) or ``NAME=VALUE`` strings (the command line):
    each a ControllerSettings field (``SETTING_NAMES``) converted to that field's type.
    ValueError naming ``field`` and the setting for an unknown name or a bad value."""
    if isinstance(values, dict):
        items = list(values.items())
    else:
        items = []
        for pair in values:
            name, sep, value = str(pair).partition("=")
            if not sep:
                raise ValueError(f"{field}: expected NAME=VALUE, got {pair!r}")
            items.append((name.strip(), value.strip()))
    out = {}
    for name, value in items:
        if name not in SETTING_FIELDS:
            raise ValueError(f"{field}.{name}: unknown setting {name!r}; known: "
                             f"{', '.join(SETTING_NAMES)}")
        out[name] = _setting_value(SETTING_FIELDS[name], value, f"{field}.{name}")
    return out


def _setting_value(fld, value, field):
    kind = type(fld.default)
    if kind is str:
        if not isinstance(value, str):
            raise ValueError(f"{field}: expected a word, got {value!r}")
        return value
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise ValueError(f"{field}: must be a number, got {value!r}")
    try:
        number = float(value)
    except ValueError:
        raise ValueError(f"{field}: must be a number, got {value!r}") from None
    if not math.isfinite(number):
        raise ValueError(f"{field}: must be finite, got {value!r}")
    if kind is int:
        if not number.is_integer():
            raise ValueError(f"{field}: must be a whole number, got {value!r}")
        return int(number)
    return number


# ----------------------------------------------------------------------------- sections
def _capsules(doc, source) -> tuple:
    rows = _list(doc, "capsules", source)
    out = []
    for i, row in enumerate(rows):
        path = f"capsules[{i}]"
        _keys(row, CAPSULE_KEYS, source, path)
        name = _string(row.get("name"), source, f"{path}.name")
        foot = _vec3(row["foot"], source, f"{path}.foot") if "foot" in row else None
        expect = None
        if "expect" in row:
            expect = _parsed(parse_capsule_expectation, row["expect"], source, f"{path}.expect")
        out.append(CapsuleSpec(name, foot, _positive(row, "radius", source, path),
                               _positive(row, "height", source, path), expect))
    _unique([c.name for c in out], "capsule", "capsules", source)
    return tuple(out)


def _parsed(parse, value, source, path):
    if value is None:
        _fail(source, path, "expected a verdict word, got null")
    try:
        return parse(value, path)
    except ValueError as exc:
        raise SpecError(f"spec {source}: {exc}") from None


def _paths(doc, source) -> tuple:
    out = []
    for i, row in enumerate(_list(doc, "paths", source)):
        path = f"paths[{i}]"
        _keys(row, PATH_KEYS, source, path)
        name = _string(row.get("name"), source, f"{path}.name")
        points = None
        if "points" in row:
            pts = row["points"]
            if not isinstance(pts, list) or len(pts) < 2:
                _fail(source, f"{path}.points", "need at least 2 points [x, y, z]")
            points = tuple(_vec3(p, source, f"{path}.points[{k}]") for k, p in enumerate(pts))
        expect = None
        if "expect" in row:
            expect = _parsed(parse_walk_expectation, row["expect"], source, f"{path}.expect")
        out.append(PathSpec(name, points, expect))
    _unique([p.name for p in out], "path", "paths", source)
    return tuple(out)


def _targets(doc, source) -> tuple:
    out = []
    for i, row in enumerate(_list(doc, "targets", source)):
        path = f"targets[{i}]"
        _keys(row, TARGET_KEYS, source, path)
        name = _string(row.get("name"), source, f"{path}.name")
        if "point" not in row:
            _fail(source, path, "needs a \"point\" [x, y, z] (a foot point, metres)")
        point = _vec3(row["point"], source, f"{path}.point")
        expect = row.get("expect")
        word = expect.strip().lower() if isinstance(expect, str) else expect
        if word not in TARGET_EXPECTATIONS:
            _fail(source, f"{path}.expect", f"unknown expected verdict {expect!r}; allowed: "
                  f"{', '.join(TARGET_EXPECTATIONS)}")
        out.append(TargetSpec(name, point, word))
    _unique([t.name for t in out], "target", "targets", source)
    return tuple(out)


def _frame(doc, source) -> tuple:
    up = forward = None
    try:
        if doc.get("up") is not None:
            up = parse_axis(doc["up"], "up")
        if doc.get("forward") is not None:
            forward = parse_axis(doc["forward"], "forward")
        check_axes(up, forward)
    except ValueError as exc:
        raise SpecError(f"spec {source}: {exc}") from None
    return up, forward


def parse_spec(doc, source: str = "<spec>") -> LevelSpec:
    """Validate a spec document (parsed JSON) and return it as a LevelSpec. ``source`` names
    it in messages (the file). SpecError (a ValueError) for the first problem."""
    _keys(doc, SPEC_KEYS, source, "")
    for key in ("name", "mesh", "collection", "render"):
        if doc.get(key) is not None:
            _string(doc[key], source, key)
    preset = doc.get("preset")
    if preset is not None and (not isinstance(preset, str)
                               or preset.lower() not in presets.ENGINES):
        _fail(source, "preset", f"{preset!r} is not one of {', '.join(presets.ENGINES)}")
    naming = doc.get("naming")
    if naming is not None and not isinstance(naming, bool):
        _fail(source, "naming", f"expected true or false, got {naming!r}")
    settings = doc.get("settings") or {}
    if not isinstance(settings, dict):
        _fail(source, "settings", f"expected a JSON object, got {_kind(settings)}")
    try:
        settings = parse_settings(settings, "settings")
    except ValueError as exc:
        raise SpecError(f"spec {source}: {exc}") from None
    up, forward = _frame(doc, source)
    spawns = tuple(_vec3(p, source, f"spawns[{k}]")
                   for k, p in enumerate(_list(doc, "spawns", source)))
    targets = _targets(doc, source)  # their spawns may be the level's (capsules marked spawn)
    exclude = tuple(_string(n, source, f"exclude[{k}]")
                    for k, n in enumerate(_list(doc, "exclude", source)))
    try:
        gate = (parse_waivers(doc.get("waivers"), f"spec {source}"),
                parse_severities(doc.get("severity"), f"spec {source}"),
                parse_min_area(doc.get("min_area"), f"spec {source}"))
    except ValueError as exc:
        raise SpecError(str(exc)) from None
    return LevelSpec(doc.get("name"), doc.get("mesh"), None if preset is None else preset.lower(),
                     settings, doc.get("collection"), naming, up, forward,
                     _capsules(doc, source), _paths(doc, source), spawns, targets,
                     doc.get("render"), *gate, exclude)


# ----------------------------------------------------------------------------- merging
def resolve_settings(base: dict, preset: str | None, spec_settings: dict,
                     overrides: dict) -> dict:
    """The character's fields: the level's own (``base``), replaced by an engine preset when
    one is named, then the spec's fields, then ``overrides`` (the command line's)."""
    fields = presets.preset(preset).to_dict() if preset else dict(base)
    fields.update(spec_settings)
    fields.update(overrides)
    fields.pop("up", None)
    return fields


def foot_of(capsule: Capsule) -> tuple:
    """The lowest point of ``capsule`` along its axis (its foot as placed), metres."""
    axis = np.asarray(capsule.b) - np.asarray(capsule.a)
    length = float(np.linalg.norm(axis))
    d = axis / length if length > 0 else np.array([0.0, 0.0, 1.0])
    return tuple(float(x) for x in np.asarray(capsule.a) - capsule.radius * d)


def merge_checks(spec: LevelSpec, scene_capsules, scene_paths, settings: ControllerSettings):
    """(capsules, paths): lists of CapsuleCheck and PathCheck, the scene's (``source``
    "scene") in their order, each replaced by the spec's entry of the same name (``source``
    "spec"), then the spec's new ones. A spec entry may change only some fields; a new one
    needs a ``foot`` / ``points``. ValueError naming the entry otherwise. A spec entry
    overriding a scene capsule keeps its ``spawn`` flag (a spawn moved by the spec floods
    from where the spec puts it)."""
    capsules = {c.name: c for c in scene_capsules}
    for row in spec.capsules:
        base = capsules.get(row.name)
        if base is None and row.foot is None:
            raise ValueError(f"spec capsule {row.name!r}: no such capsule in the level, and "
                             "no \"foot\"")
        cap = base.capsule if base else None
        foot = row.foot if row.foot is not None else base.foot  # type: ignore[union-attr]
        radius = row.radius or (cap.radius if cap else settings.radius)
        height = row.height or ((float(np.linalg.norm(cap.b - cap.a)) + 2 * cap.radius)
                                if cap else settings.height)
        try:
            capsule = Capsule.upright(foot, height, radius, up=settings.up)
        except ValueError as exc:
            raise ValueError(f"spec capsule {row.name!r}: {exc}") from None
        expect = row.expect or (base.expect if base else ANY)
        capsules[row.name] = CapsuleCheck(row.name, capsule, expect, foot=tuple(foot),
                                          source="spec", spawn=bool(base and base.spawn))
    paths = {p.name: p for p in scene_paths}
    for row in spec.paths:
        base = paths.get(row.name)
        if base is None and row.points is None:
            raise ValueError(f"spec path {row.name!r}: no such path in the level, and no "
                             "\"points\"")
        points = row.points if row.points is not None else base.points  # type: ignore[union-attr]
        expect = row.expect or (base.expect if base else ANY)
        paths[row.name] = PathCheck(row.name, points, expect, source="spec")
    return list(capsules.values()), list(paths.values())


def spawn_points(spec: LevelSpec, capsules) -> np.ndarray:
    """(K, 3) foot points (metres) reachability floods from: the ``foot`` of every capsule
    (CapsuleCheck, as ``merge_checks`` returns them) marked ``spawn``, in their order, then
    the spec's ``spawns``."""
    feet = [tuple(c.foot) for c in capsules if c.spawn] + [tuple(p) for p in spec.spawns]
    return np.asarray(feet, np.float64).reshape(-1, 3)
