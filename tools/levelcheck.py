"""levelcheck: check levels for character collision problems, headless, for pipelines and CI.

Usage::

    python tools/levelcheck.py [LEVEL ...] [--out DIR] [--preset ENGINE] [--set NAME=VALUE ...]
        [--collection NAME | --naming] [--checks LIST] [--spec FILE] [--jobs N]
        [--shard K/N] [--baseline REPORT] [--save-blend] [--no-png] [--quiet]
    python tools/levelcheck.py --merge DIR [DIR ...] [--out DIR] [--baseline REPORT]

LEVEL is a .blend, .glb/.gltf, .obj or .fbx file, read by Blender's own importers (axes and
units converted as Blender imports them), or a JSON level spec naming one (``"mesh"``). With no
LEVEL the bundled sample level is checked (built in memory by ``tools/sample_level.py``).

What to check comes from the level: capsules (Empties with role Capsule) and walk paths (role
Path) placed with the extension, with the expectations set in its panel. A sidecar JSON
(``<level>.levelcheck.json`` beside the level, or ``--spec FILE`` for every level) adds or
overrides them by name and may set the character::

    {"settings": {"step_height": 0.3}, "preset": "unity", "collection": "Collision",
     "capsules": [{"name": "spawn", "foot": [x, y, z], "expect": "clear",
                   "radius": 0.35, "height": 1.8}],
     "paths": [{"name": "stairs", "points": [[x, y, z], ...], "expect": "reached_goal"}]}

Outputs in ``--out`` (default ``levelcheck-out``), each written atomically: report.json (see
schema/report.schema.json), junit.xml, report.png (one level; ``report-<n>-<name>.png`` each
for several) and with ``--save-blend`` the annotated level(s) as .blend. The console gets one
summary table and the output paths; progress goes to stderr.

Exit status: 0 every check passed (with ``--baseline``: no new finding), 1 findings, 2 usage
or input error (one line on stderr, no outputs), found before any level is checked.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import xml.etree.ElementTree as ET

TOOLS = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(TOOLS)
for _p in (ROOT, TOOLS):
    if _p not in sys.path:
        sys.path.insert(0, _p)

from capsule_collision.core import ControllerSettings, presets  # noqa: E402  (validation only, before Blender)
from capsule_collision.core.checks.report import (  # noqa: E402
    CHECKS,
    DEFAULT_CHECKS,
    REPORT_FORMAT,
    combine_levels,
    mark_baseline,
    parse_checks,
)
from capsule_collision.core.checks.verdicts import (  # noqa: E402
    MIN_REPORTED_DEPTH,
    parse_capsule_expectation,
    parse_min_depth,
    parse_walk_expectation,
)

LEVEL_SUFFIXES = (".blend", ".obj", ".glb", ".gltf", ".fbx")
SIDECAR_SUFFIX = ".levelcheck.json"
DEFAULT_OUT = "levelcheck-out"
SETTING_NAMES = tuple(f.name for f in dataclasses.fields(ControllerSettings) if f.name != "up")
ENGINES = presets.ENGINES


class UsageError(Exception):
    """Bad command line or input: one line on stderr, exit status 2."""


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # one line, no usage dump
        raise UsageError(message)


def _parser():
    p = _Parser(prog="levelcheck", description=__doc__.split("\n\n")[0],
                formatter_class=argparse.RawDescriptionHelpFormatter,
                epilog="exit status: 0 every check passed, 1 findings, 2 usage or input error. "
                       "Outputs: report.json (schema/report.schema.json), junit.xml, report.png.")
    p.add_argument("levels", nargs="*", metavar="LEVEL",
                   help="level files (.blend .glb .gltf .obj .fbx, or a JSON spec); none: the "
                        "bundled sample level")
    p.add_argument("--out", default=DEFAULT_OUT, help="output folder (default levelcheck-out)")
    p.add_argument("--preset", choices=ENGINES, type=str.lower,
                   help="character settings from an engine's defaults")
    p.add_argument("--set", action="append", default=[], metavar="NAME=VALUE",
                   help=f"a character setting in metres/degrees ({', '.join(SETTING_NAMES)})")
    src = p.add_mutually_exclusive_group()
    src.add_argument("--collection", help="collision = the meshes of this collection")
    src.add_argument("--naming", action="store_true",
                     help="collision = meshes named by engine conventions (UCX_, _col, ...)")
    p.add_argument("--checks", default=",".join(DEFAULT_CHECKS),
                   help=f"comma-separated: {', '.join(CHECKS)} or all (default: all but "
                        "frame_rates)")
    p.add_argument("--frame-rates", default="30,60,120",
                   help="Hz for the frame_rates check (default 30,60,120)")
    p.add_argument("--min-depth", default=str(MIN_REPORTED_DEPTH),
                   help="metres; shallower capsule contacts count as clear (default 1e-6)")
    p.add_argument("--spec", help="sidecar JSON for every level (default: <level>"
                                  + SIDECAR_SUFFIX + " when present)")
    p.add_argument("--jobs", type=int, default=1, help="parallel processes over levels")
    p.add_argument("--shard", help="K/N: check only the K-th of N deterministic shares of the "
                                   "levels (a CI matrix); merge the outputs with --merge")
    p.add_argument("--merge", nargs="+", metavar="DIR",
                   help="combine the report.json of shard output folders into one report")
    p.add_argument("--baseline", help="a previous report.json: fail only on findings new "
                                      "since it")
    p.add_argument("--save-blend", action="store_true",
                   help="also save the level annotated by the extension's operators (face "
                        "attributes, traces, markers) as <level>.levelcheck.blend")
    p.add_argument("--no-png", action="store_true", help="skip rendering report.png")
    p.add_argument("--quiet", action="store_true", help="no progress on stderr")
    p.add_argument("--only", help=argparse.SUPPRESS)  # internal: indices for --jobs workers
    return p


# ----------------------------------------------------------------------------- validation
@dataclasses.dataclass
class Level:
    index: int
    path: str | None  # None: the bundled sample
    display: str  # as given on the command line
    spec: dict  # normalised sidecar (possibly empty)


@dataclasses.dataclass
class Job:
    levels: list
    out: str
    settings: dict  # field -> value overrides from --preset/--set
    preset: str | None
    collection: str | None
    naming: bool
    checks: tuple
    frame_rates: tuple
    min_depth: float
    save_blend: bool
    png: bool
    quiet: bool
    baseline: dict | None
    baseline_file: str | None


def _number(value, field):
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise UsageError(f"{field}: expected a number, got {value!r}")
    return value


def _vec3(value, field):
    if not isinstance(value, (list, tuple)) or len(value) != 3:
        raise UsageError(f"{field}: expected [x, y, z], got {value!r}")
    return [float(_number(v, field)) for v in value]


def _settings_overrides(pairs, field) -> dict:
    """{name: value} from NAME=VALUE strings or a dict; unknown names are usage errors."""
    items = pairs.items() if isinstance(pairs, dict) else []
    if not isinstance(pairs, dict):
        for pair in pairs:
            name, sep, value = pair.partition("=")
            if not sep:
                raise UsageError(f"{field}: expected NAME=VALUE, got {pair!r}")
            items.append((name.strip(), value.strip()))
    out = {}
    for name, value in items:
        if name not in SETTING_NAMES:
            raise UsageError(f"{field}: unknown setting {name!r}; known: "
                             f"{', '.join(SETTING_NAMES)}")
        try:
            out[name] = int(value) if name == "max_iterations" else float(value)
        except (TypeError, ValueError):
            raise UsageError(f"{field}: {name} must be a number, got {value!r}") from None
    return out


def _read_json(path, what):
    try:
        with open(path, encoding="utf-8") as handle:
            return json.load(handle)
    except OSError as exc:
        raise UsageError(f"{what} {path}: cannot read it ({exc.strerror})") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise UsageError(f"{what} {path}: not valid JSON ({exc})") from None


def _normalise_spec(spec, path) -> dict:
    """Check a sidecar (every field, every expectation word) and return it normalised."""
    if not isinstance(spec, dict):
        raise UsageError(f"spec {path}: expected a JSON object")
    known = {"name", "mesh", "settings", "preset", "collection", "naming", "capsules", "paths"}
    unknown = sorted(set(spec) - known)
    if unknown:
        raise UsageError(f"spec {path}: unknown key {unknown[0]!r}; known: "
                         f"{', '.join(sorted(known))}")
    out = {"name": spec.get("name"), "mesh": spec.get("mesh"), "capsules": [], "paths": []}
    out["settings"] = _settings_overrides(spec.get("settings", {}) or {}, f"spec {path}: settings")
    preset = spec.get("preset")
    if preset is not None and str(preset).lower() not in ENGINES:
        raise UsageError(f"spec {path}: preset {preset!r} is not one of {', '.join(ENGINES)}")
    out["preset"] = None if preset is None else str(preset).lower()
    out["collection"] = spec.get("collection")
    out["naming"] = bool(spec.get("naming", False))
    for i, cap in enumerate(spec.get("capsules", []) or []):
        field = f"spec {path}: capsules[{i}]"
        if not isinstance(cap, dict) or not isinstance(cap.get("name"), str):
            raise UsageError(f"{field}: needs a \"name\"")
        row = {"name": cap["name"]}
        if "foot" in cap:
            row["foot"] = _vec3(cap["foot"], field + ".foot")
        for key in ("radius", "height"):
            if key in cap:
                v = float(_number(cap[key], f"{field}.{key}"))
                if not v > 0:
                    raise UsageError(f"{field}.{key}: must be > 0 metres, got {cap[key]!r}")
                row[key] = v
        if "expect" in cap:
            try:
                row["expect"] = parse_capsule_expectation(cap["expect"], field + ".expect")
            except ValueError as exc:
                raise UsageError(str(exc)) from None
        out["capsules"].append(row)
    for i, path_spec in enumerate(spec.get("paths", []) or []):
        field = f"spec {path}: paths[{i}]"
        if not isinstance(path_spec, dict) or not isinstance(path_spec.get("name"), str):
            raise UsageError(f"{field}: needs a \"name\"")
        row = {"name": path_spec["name"]}
        if "points" in path_spec:
            pts = path_spec["points"]
            if not isinstance(pts, list) or len(pts) < 2:
                raise UsageError(f"{field}.points: need at least 2 points [x, y, z]")
            row["points"] = [_vec3(p, f"{field}.points[{k}]") for k, p in enumerate(pts)]
        if "expect" in path_spec:
            try:
                row["expect"] = parse_walk_expectation(path_spec["expect"], field + ".expect")
            except ValueError as exc:
                raise UsageError(str(exc)) from None
        out["paths"].append(row)
    return out


BLEND_MAGIC = (b"BLENDER", b"\x28\xb5\x2f\xfd", b"\x1f\x8b")  # plain, zstd, gzip


def _sniff(path):
    """Cheap checks that ``path`` is a level file of its kind (before Blender starts)."""
    suffix = os.path.splitext(path)[1].lower()
    if suffix not in LEVEL_SUFFIXES:
        raise UsageError(f"level {path}: unsupported file type {suffix or '(none)'!r}; "
                         f"expected one of {', '.join(LEVEL_SUFFIXES)}")
    if not os.path.isfile(path):
        raise UsageError(f"level {path}: no such file")
    try:
        with open(path, "rb") as handle:
            head = handle.read(4096)
    except OSError as exc:
        raise UsageError(f"level {path}: cannot read it ({exc.strerror})") from None
    corrupt = UsageError(f"level {path}: not a valid {suffix} file (corrupt or empty)")
    if not head:
        raise corrupt
    if suffix == ".blend" and not head.startswith(BLEND_MAGIC):
        raise corrupt
    if suffix == ".glb" and not head.startswith(b"glTF"):
        raise corrupt
    if suffix == ".fbx" and not (head.startswith(b"Kaydara FBX Binary")
                                 or b"FBXHeaderExtension" in head):
        raise corrupt
    if suffix == ".gltf":
        doc = _read_json(path, "level")
        if not isinstance(doc, dict) or "asset" not in doc:
            raise corrupt
    if suffix == ".obj":
        try:
            text = head.decode("utf-8")
        except UnicodeDecodeError:
            raise corrupt from None
        if not any(line.split()[:1] in (["v"], ["o"], ["g"], ["f"], ["mtllib"], ["#"])
                   for line in text.splitlines() if line.strip()):
            raise corrupt


def _check_out(out):
    """The output folder must exist and be writable, or be creatable (nothing is created)."""
    path = os.path.abspath(out)
    probe = path
    while not os.path.exists(probe):
        parent = os.path.dirname(probe)
        if parent == probe:
            break
        probe = parent
    if not os.path.isdir(probe):
        raise UsageError(f"--out {out}: {probe} is not a folder")
    if not os.access(probe, os.W_OK | os.X_OK):
        raise UsageError(f"--out {out}: {probe} is not writable")


def _levels(args) -> list:
    given = args.levels or [None]
    levels = []
    common = None
    if args.spec:
        common = _normalise_spec(_read_json(args.spec, "spec"), args.spec)
    for i, arg in enumerate(given):
        if arg is None:
            levels.append(Level(i, None, "sample level", common or _empty_spec()))
            continue
        path, spec = arg, None
        if arg.lower().endswith(".json"):  # a level spec naming its mesh (today's format)
            spec = _normalise_spec(_read_json(arg, "spec"), arg)
            if not spec["mesh"]:
                raise UsageError(f"spec {arg}: names no level file (\"mesh\")")
            path = os.path.join(os.path.dirname(os.path.abspath(arg)), spec["mesh"])
        _sniff(path)
        if spec is None:
            sidecar = os.path.splitext(path)[0] + SIDECAR_SUFFIX
            if common is not None:
                spec = common
            elif os.path.isfile(sidecar):
                spec = _normalise_spec(_read_json(sidecar, "spec"), sidecar)
            else:
                spec = _empty_spec()
        levels.append(Level(i, path, arg, spec))
    return levels


def _empty_spec():
    return {"name": None, "mesh": None, "settings": {}, "preset": None, "collection": None,
            "naming": False, "capsules": [], "paths": []}


def _resolve_settings(base: dict, preset, spec_settings: dict, overrides: dict) -> dict:
    """The character: the level's own settings, replaced by an engine preset when one is
    named, then the sidecar's fields, then ``--set`` (metres, degrees)."""
    fields = presets.preset(preset).to_dict() if preset else dict(base)
    fields.update(spec_settings)
    fields.update(overrides)
    fields.pop("up", None)
    return fields


def _validate_settings(fields: dict, what: str):
    try:
        ControllerSettings(**fields)
    except (TypeError, ValueError) as exc:
        raise UsageError(f"{what}: {exc}") from None


def _shard(text):
    try:
        k, n = (int(x) for x in text.split("/"))
    except ValueError:
        raise UsageError(f"--shard: expected K/N such as 1/4, got {text!r}") from None
    if not 1 <= k <= n:
        raise UsageError(f"--shard: need 1 <= K <= N, got {text!r}")
    return k, n


def _load_baseline(path):
    doc = _read_json(path, "--baseline")
    if not isinstance(doc, dict) or doc.get("format") != REPORT_FORMAT:
        raise UsageError(f"--baseline {path}: not a levelcheck report.json")
    return doc


def build_job(args) -> Job:
    """Every input checked; UsageError for the first problem."""
    _check_out(args.out)
    if args.jobs < 1:
        raise UsageError(f"--jobs: must be >= 1, got {args.jobs}")
    try:
        checks = parse_checks(args.checks)
        min_depth = parse_min_depth(args.min_depth, "--min-depth")
        from capsule_collision.core.checks.report import parse_frame_rates  # noqa: PLC0415

        rates = parse_frame_rates(args.frame_rates)
    except ValueError as exc:
        raise UsageError(str(exc).replace("frame_rates:", "--frame-rates:")
                         .replace("checks:", "--checks:")) from None
    overrides = _settings_overrides(args.set, "--set")
    levels = _levels(args)
    for lv in levels:
        fields = _resolve_settings(ControllerSettings().to_dict(), args.preset or
                                   lv.spec["preset"], lv.spec["settings"], overrides)
        _validate_settings(fields, f"settings for {lv.display}")
    if args.shard:
        k, n = _shard(args.shard)
        levels = [lv for lv in levels if lv.index % n == k - 1]
    if args.only is not None:
        keep = {int(x) for x in args.only.split(",") if x}
        levels = [lv for lv in levels if lv.index in keep]
    baseline = _load_baseline(args.baseline) if args.baseline else None
    return Job(levels, args.out, overrides, args.preset, args.collection, args.naming, checks,
               rates, min_depth, args.save_blend, not args.no_png, args.quiet, baseline,
               args.baseline)


# ----------------------------------------------------------------------------- running
@contextlib.contextmanager
def _blender_output(quiet: bool):
    """Blender's importers and renderer print to stdout (and Mesa to stderr): keep stdout for
    the summary by sending their output to stderr, or nowhere with ``--quiet``."""
    sys.stdout.flush()
    sys.stderr.flush()
    saved = os.dup(1), os.dup(2)
    sink = os.open(os.devnull, os.O_WRONLY) if quiet else None
    try:
        os.dup2(2 if sink is None else sink, 1)
        if sink is not None:
            os.dup2(sink, 2)
        yield
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os.dup2(saved[0], 1)
        os.dup2(saved[1], 2)
        for fd in (*saved, sink):
            if fd is not None:
                os.close(fd)


def _foot(capsule):
    import numpy as np  # noqa: PLC0415

    axis = np.asarray(capsule.b) - np.asarray(capsule.a)
    length = float(np.linalg.norm(axis))
    d = axis / length if length > 0 else np.array([0.0, 0.0, 1.0])
    return tuple(float(x) for x in np.asarray(capsule.a) - capsule.radius * d)


def _stem(level: Level) -> str:
    base = "sample_level" if level.path is None else os.path.splitext(
        os.path.basename(level.path))[0]
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in base)


def check_one(bpy, level: Level, job: Job, work_dir: str, say, png_name: str | None):
    """Load, read and check one level; render/save into ``work_dir``. Returns
    (level report dict, {output name: temp path})."""
    import blender_session  # noqa: PLC0415
    import levelcheck_scene  # noqa: PLC0415
    import numpy as np  # noqa: PLC0415

    core = blender_session.extension_module("core")
    report_mod = blender_session.extension_module("core.checks.report")
    verdicts = blender_session.extension_module("core.checks.verdicts")
    spec = level.spec
    say(f"level {level.display}: loading")
    t0 = time.perf_counter()
    scene = levelcheck_scene.load(bpy, level.path)
    t1 = time.perf_counter()
    levelcheck_scene.set_collision_source(bpy, scene, job.collection or spec["collection"],
                                          job.naming or spec["naming"])
    geometry, scene_settings, scene_caps, scene_paths = levelcheck_scene.read(bpy, scene)
    t2 = time.perf_counter()
    fields = _resolve_settings(scene_settings, job.preset or spec["preset"], spec["settings"],
                               job.settings)
    settings = core.ControllerSettings(**fields)
    capsules = {n: {"name": n, "capsule": c, "expect": e, "source": "scene"}
                for n, c, e in scene_caps}
    for row in spec["capsules"]:
        base = capsules.get(row["name"])
        if base is None and "foot" not in row:
            raise levelcheck_scene.LevelError(
                f"spec capsule {row['name']!r}: no such capsule in the level, and no \"foot\"")
        cap = base["capsule"] if base else None
        foot = row.get("foot") or _foot(cap)
        radius = row.get("radius", cap.radius if cap else settings.radius)
        height = row.get("height", (float(np.linalg.norm(cap.b - cap.a)) + 2 * cap.radius)
                         if cap else settings.height)
        try:
            capsule = core.Capsule.upright(foot, height, radius, up=settings.up)
        except ValueError as exc:
            raise levelcheck_scene.LevelError(f"spec capsule {row['name']!r}: {exc}") from None
        capsules[row["name"]] = {"name": row["name"], "capsule": capsule,
                                 "expect": row.get("expect", base["expect"] if base else "any"),
                                 "source": "spec"}
    paths = {n: {"name": n, "points": p, "expect": e, "source": "scene"}
             for n, p, e in scene_paths}
    for row in spec["paths"]:
        base = paths.get(row["name"])
        if base is None and "points" not in row:
            raise levelcheck_scene.LevelError(
                f"spec path {row['name']!r}: no such path in the level, and no \"points\"")
        paths[row["name"]] = {"name": row["name"],
                              "points": row.get("points", base["points"] if base else None),
                              "expect": row.get("expect", base["expect"] if base else "any"),
                              "source": "spec"}
    try:
        cap_checks = [verdicts.CapsuleCheck(c["name"], c["capsule"], c["expect"],
                                            foot=_foot(c["capsule"]), source=c["source"])
                      for c in capsules.values()]
        path_checks = [verdicts.PathCheck(p["name"], p["points"], p["expect"],
                                          source=p["source"]) for p in paths.values()]
    except ValueError as exc:
        raise levelcheck_scene.LevelError(f"{level.display}: {exc}") from None
    say(f"level {level.display}: {geometry.mesh.n_triangles} triangles, "
        f"{len(cap_checks)} capsules, {len(path_checks)} paths")
    res = report_mod.run_checks(geometry.mesh, settings, cap_checks, path_checks,
                                checks=job.checks, min_depth=job.min_depth,
                                frame_rates=job.frame_rates,
                                progress=lambda m: say(f"level {level.display}: {m}"))
    name = spec["name"] or ("Sample level" if level.path is None else
                            os.path.basename(level.path))
    report = report_mod.level_report(res, level=name, file=None if level.path is None
                                     else level.display, geometry=geometry, index=level.index)
    report["timings_s"] = {"load": round(t1 - t0, 4), "read_level": round(t2 - t1, 4),
                           **report["timings_s"]}
    outputs = {}
    if job.save_blend:  # before the picture's objects are added
        say(f"level {level.display}: annotating with the extension's operators")
        levelcheck_scene.annotate(bpy, scene, settings, res.capsules, res.paths, say)
        tmp = os.path.join(work_dir, f"{level.index}.blend")
        levelcheck_scene.save_blend(bpy, tmp)
        outputs[f"{_stem(level)}.levelcheck.blend"] = tmp
    if job.png:
        import levelcheck_render  # noqa: PLC0415

        caps = [(c.capsule, verdicts.capsule_finding(c, v) is not None)
                for c, v in zip(res.capsules, res.capsule_verdicts)]
        walks = [(r.trace, [e.position for e in r.events],
                  not verdicts.walk_expectation_holds(p.expect, r))
                 for p, r in zip(res.paths, res.walk_reports)]
        n = len(report["findings"])
        title = f"{name}: {n} finding{'s' if n != 1 else ''}"
        levelcheck_render.build_view(bpy, scene, geometry.mesh, res.walkability,
                                     res.finding_triangles, caps, walks, title)
        say(f"level {level.display}: rendering")
        tmp = os.path.join(work_dir, f"{level.index}.png")
        t3 = time.perf_counter()
        levelcheck_render.render(bpy, scene, tmp)
        report["timings_s"]["render"] = round(time.perf_counter() - t3, 4)
        outputs[png_name] = tmp
    return report, outputs


def _png_name(level: Level, many: bool) -> str:
    return f"report-{level.index}-{_stem(level)}.png" if many else "report.png"


def run_levels(job: Job, many: bool, work_dir: str) -> tuple[list, dict]:
    """Check the job's levels in this process. Returns (level reports, {name: temp path})."""
    import blender_session  # noqa: PLC0415

    say = (lambda _m: None) if job.quiet else (
        lambda m: print(f"[levelcheck {time.strftime('%H:%M:%S')}] {m}", file=sys.stderr,
                        flush=True))
    reports, outputs = [], {}
    with _blender_output(job.quiet):
        bpy, _ = blender_session.start()
        for level in job.levels:
            try:
                report, out = check_one(bpy, level, job, work_dir, say, _png_name(level, many))
            except ValueError as exc:  # LevelError, or core on the level's data: name the level
                text = str(exc)
                named = level.path is not None and os.path.abspath(level.path) in text
                raise UsageError(text if named else f"level {level.display}: {text}") from None
            reports.append(report)
            outputs.update(out)
    return reports, outputs


def run_parallel(argv, job: Job, n_jobs: int, work_dir: str) -> tuple[list, dict]:
    """Share the levels round-robin among ``n_jobs`` processes of this tool."""
    indices = [lv.index for lv in job.levels]
    shares = [indices[k::n_jobs] for k in range(n_jobs)]
    procs = []
    for k, share in enumerate(shares):
        if not share:
            continue
        sub_out = os.path.join(work_dir, f"job{k}")
        cmd = [sys.executable, os.path.abspath(__file__), *_strip(argv), "--out", sub_out,
               "--only", ",".join(map(str, share)), "--jobs", "1"]
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                text=True)
        errors: list = []
        relay = threading.Thread(target=_relay, args=(proc.stderr, job.quiet, errors),
                                 daemon=True)
        relay.start()
        procs.append((sub_out, proc, relay, errors))
    reports, outputs = [], {}
    for sub_out, proc, relay, errors in procs:
        proc.wait()
        relay.join()
        if proc.returncode not in (0, 1):
            raise UsageError(errors[-1] if errors
                             else f"a --jobs worker failed with exit status {proc.returncode}")
        doc = _read_json(os.path.join(sub_out, "report.json"), "worker report")
        reports.extend(doc["levels"])
        for name in os.listdir(sub_out):
            if name not in ("report.json", "junit.xml"):
                outputs[name] = os.path.join(sub_out, name)
    return reports, outputs


def _relay(stream, quiet, errors):
    """Pass a worker's progress lines on to stderr as they come; keep its error lines."""
    for line in stream:
        if line.startswith("levelcheck: error: "):
            errors.append(line.rstrip("\n").split("levelcheck: error: ", 1)[1])
        elif not quiet:
            sys.stderr.write(line)
            sys.stderr.flush()


def _strip(argv):
    """argv without the options the parent decides (--out, --jobs, --baseline, --only)."""
    out, skip = [], False
    for a in argv:
        if skip:
            skip = False
            continue
        if a in ("--out", "--jobs", "--baseline", "--only"):
            skip = True
            continue
        if a.split("=", 1)[0] in ("--out", "--jobs", "--baseline", "--only"):
            continue
        out.append(a)
    return out


# ----------------------------------------------------------------------------- outputs
def junit_xml(document) -> bytes:
    """One testsuite per level; one testcase per check and per path (failures: findings)."""
    suites = ET.Element("testsuites", name="levelcheck")
    total_f = total_t = 0
    for lv in document["levels"]:
        cases = []
        findings = lv["findings"]

        def failing(check, name=None, _f=findings):
            return [f for f in _f if f["check"] == check and (name is None or f["name"] == name)
                    and f.get("new") is not False]

        for check in lv["checks"]:
            if check == "walks":
                continue
            if check == "penetration":
                bad = failing("capsule")
                detail = "\n".join(f"{c['name']}: {c['verdict']} (expected {c['expected']}), "
                                   f"deepest {c['deepest_m']} m" for c in lv["capsules"])
            elif check == "frame_rates":
                bad = failing("frame_rate")
                detail = "\n".join(f"{r['name']}: consistent={r['consistent']}"
                                   for r in lv["frame_rates"])
            elif check == "walkability":
                bad, detail = [], json.dumps(lv["walkability"])
            else:
                key = {"stand": "cannot_stand", "stairs": "stairs", "headroom": "low_headroom",
                       "ledges": "ledges"}[check]
                section = dict(lv["audits"].get(key, {}))
                bad = []
                detail = json.dumps({k: v for k, v in section.items()
                                     if not isinstance(v, list)})
            cases.append((check, bad, detail))
        if "walks" in lv["checks"]:
            for w in lv["walks"]:
                detail = "\n".join(f"{e['kind']} {e['value']} at {e['position']} "
                                   f"({e['object']} face {e['face']})" for e in w["events"])
                cases.append((f"walk: {w['name']}", failing("walk", w["name"]), detail))
        suite = ET.SubElement(suites, "testsuite", name=lv["level"], tests=str(len(cases)),
                              failures=str(sum(bool(b) for _, b, _ in cases)))
        for name, bad, detail in cases:
            case = ET.SubElement(suite, "testcase", name=name,
                                 classname=f"levelcheck.{lv['level']}")
            if bad:
                fail = ET.SubElement(case, "failure", message="; ".join(f["message"] for f in bad),
                                     type="finding")
                fail.text = "\n".join(f["message"] for f in bad)
            if detail:
                ET.SubElement(case, "system-out").text = detail
        total_t += len(cases)
        total_f += sum(bool(b) for _, b, _ in cases)
    suites.set("tests", str(total_t))
    suites.set("failures", str(total_f))
    return ET.tostring(suites, encoding="utf-8", xml_declaration=True)


def _file_mode():
    """The mode a new file gets under the process umask (mkstemp's files are 0600)."""
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask


def _write_atomic(path, data: bytes):
    """Write ``data`` to a temporary file beside ``path``, then rename it over ``path``: a
    reader sees the old file or the whole new one, never half of it."""
    folder = os.path.dirname(path)
    fd, tmp = tempfile.mkstemp(prefix=".levelcheck-", dir=folder)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.chmod(tmp, _file_mode())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def _move_atomic(src, path):
    folder = os.path.dirname(path)
    fd, tmp = tempfile.mkstemp(prefix=".levelcheck-", dir=folder)
    os.close(fd)
    try:
        shutil.copyfile(src, tmp)
        os.chmod(tmp, _file_mode())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def write_outputs(document, outputs: dict, out_dir) -> list:
    os.makedirs(out_dir, exist_ok=True)
    written = []
    for name, src in sorted(outputs.items()):
        dst = os.path.join(out_dir, name)
        _move_atomic(src, dst)
        written.append(dst)
    path = os.path.join(out_dir, "report.json")
    _write_atomic(path, (json.dumps(document, indent=1, allow_nan=False) + "\n").encode())
    written.insert(0, path)
    path = os.path.join(out_dir, "junit.xml")
    _write_atomic(path, junit_xml(document))
    written.insert(1, path)
    return written


def _table(rows, headers):
    widths = [max(len(str(x)) for x in col) for col in zip(headers, *rows)]
    line = "  ".join(f"{{:<{w}}}" for w in widths)
    out = [line.format(*headers), line.format(*("-" * w for w in widths))]
    out += [line.format(*map(str, r)) for r in rows]
    return "\n".join("  " + s.rstrip() for s in out)


def _xyz(p):
    return "-" if p is None else "(" + ", ".join(f"{x:.2f}" for x in p) + ")"


def summary(document) -> str:
    lines = []
    for lv in document["levels"]:
        lines.append(f"{lv['level']}" + (f" ({lv['file']})" if lv["file"] else "")
                     + f": {lv['triangles']} triangles, {len(lv['objects'])} objects, "
                     f"{len(lv['capsules'])} capsules, {len(lv['walks'])} paths")
        for w in lv["warnings"]:
            lines.append(f"  warning: {w.get('message', w)}")
        rows = []
        for c in lv["capsules"]:
            objs = sorted({t["object"] or f"triangle {t['triangle']}" for t in c["triangles"]})
            rows.append(("capsule", c["name"], _xyz(c["foot"]), c["expected"], c["verdict"],
                         "ok" if c["ok"] else "FAIL",
                         (f"{c['deepest_m']:.3f} m into " + ", ".join(objs)) if objs else ""))
        for w in lv["walks"]:
            first = next((e for e in w["events"] if e["kind"] != "reached_goal"), None)
            what = ""
            if first is not None:
                value = "" if first["value"] is None else f" {first['value']:.3g} {first['unit']}"
                where = first["object"] or ("" if first["triangle"] < 0
                                            else f"triangle {first['triangle']}")
                what = f"{first['kind']}{value} at {_xyz(first['position'])}" + (
                    f" on {where}" + (f" face {first['face']}" if first["face"] is not None
                                      else "") if where else "")
            rows.append(("walk", w["name"], _xyz(w["start"]), w["expected"], w["verdict"],
                         "ok" if w["ok"] else "FAIL", what))
        if rows:
            lines.append(_table(rows, ("check", "name", "at", "expected", "got", "ok?",
                                       "detail")))
        a = lv["audits"]
        parts = []
        if "cannot_stand" in a:
            parts.append(f"{a['cannot_stand']['faces']} of {a['cannot_stand']['of_walkable']} "
                         "walkable faces too cramped to stand on")
        if "stairs" in a:
            parts.append(f"{a['stairs']['too_high']} risers too high, "
                         f"{a['stairs']['too_shallow']} treads too shallow")
        if "low_headroom" in a:
            parts.append(f"{a['low_headroom']['faces']} faces with low headroom")
        if "ledges" in a:
            parts.append(f"{a['ledges']['runs']} ledge runs over an unsafe drop")
        if parts:
            lines.append("  audits: " + "; ".join(parts))
        for r in lv["frame_rates"]:
            if not r["consistent"]:
                lines.append(f"  frame rates: {r['name']} differs between "
                             + "/".join(f"{x:g}" for x in r["rates"]) + " Hz")
        for f in lv["findings"]:
            tag = "" if f["new"] is None else (" NEW" if f["new"] else " (known)")
            lines.append(f"  FINDING{tag}: {f['message']}")
    s = document["summary"]
    verdict = f"{s['findings']} finding(s) in {s['levels']} level(s)"
    if s["new_findings"] is not None:
        verdict += f", {s['new_findings']} new since the baseline"
    lines.append(verdict)
    return "\n".join(lines)


# ----------------------------------------------------------------------------- main
def _merge(args) -> tuple[list, dict]:
    levels = []
    seen = set()
    for folder in args.merge:
        doc = _read_json(os.path.join(folder, "report.json"), "--merge")
        if not isinstance(doc, dict) or doc.get("format") != REPORT_FORMAT:
            raise UsageError(f"--merge {folder}: report.json is not a levelcheck report")
        for lv in doc["levels"]:
            if lv["index"] in seen:
                raise UsageError(f"--merge {folder}: level {lv['level']} (index {lv['index']}) "
                                 "is in two shards")
            seen.add(lv["index"])
            levels.append(lv)
    return levels, {}


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        args = _parser().parse_args(argv)
        if args.merge:
            if args.levels:
                raise UsageError("--merge takes shard output folders, not levels")
            _check_out(args.out)
            baseline = _load_baseline(args.baseline) if args.baseline else None
            reports, outputs = _merge(args)
        else:
            job = build_job(args)
            baseline = job.baseline
            work_dir = tempfile.mkdtemp(prefix="levelcheck-")
            try:
                many = len(args.levels) > 1
                if args.jobs > 1 and len(job.levels) > 1:
                    reports, outputs = run_parallel(argv, job, min(args.jobs, len(job.levels)),
                                                    work_dir)
                else:
                    reports, outputs = run_levels(job, many, work_dir)
                document = combine_levels(reports)
                if baseline is not None:
                    mark_baseline(document, baseline, args.baseline)
                written = write_outputs(document, outputs, args.out)
            finally:
                shutil.rmtree(work_dir, ignore_errors=True)
        if args.merge:
            document = combine_levels(reports)
            if baseline is not None:
                mark_baseline(document, baseline, args.baseline)
            written = write_outputs(document, outputs, args.out)
    except UsageError as exc:
        print(f"levelcheck: error: {exc}", file=sys.stderr)
        return 2
    except ValueError as exc:  # LevelError and ValueErrors from core on the level's data
        print(f"levelcheck: error: {exc}", file=sys.stderr)
        return 2
    print(summary(document))
    print("outputs:")
    for path in written:
        print(f"  {os.path.abspath(path)}")
    return 0 if document["summary"]["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
