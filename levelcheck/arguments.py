"""The command line: options, and the run they describe (``Job``), every input checked before
Blender starts (``UsageError``: one line, exit status 2, nothing written).
"""

from __future__ import annotations

import argparse
import dataclasses

from ..core import ControllerSettings, presets
from ..core.checks.gate import parse_min_area, parse_severities
from ..core.checks.report import (
    CHECKS,
    DEFAULT_CHECKS,
    REPORT_FORMAT,
    parse_checks,
    parse_frame_rates,
)
from ..core.checks.severity import SEVERITIES
from ..core.checks.spec import AXES, SETTING_NAMES, parse_axis, parse_settings, resolve_settings
from ..core.checks.verdicts import MIN_REPORTED_DEPTH, parse_min_depth
from . import levels as levels_module
from .levels import SIDECAR_SUFFIX, UsageError, read_json
from .merge import fingerprint

DEFAULT_OUT = "levelcheck-out"
DEFAULT_INSETS = 6  # inset pictures per level, one per finding, worst first
EPILOG = ("exit status: 0 no finding fails the gate (--fail-on), 1 findings, 2 usage or input "
          "error or a worker that died (one line on stderr), 130/143 stopped by SIGINT/SIGTERM. "
          "Outputs: report.json, junit.xml, report.png and one inset picture per finding "
          "(finding-<level>-<n>.png); an earlier run's outputs in --out are removed first.")


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # one line, no usage dump
        raise UsageError(message)


def _axis(value):
    try:
        return parse_axis(value, "axis")
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc).replace("axis: ", "")) from None


def parser(description: str) -> argparse.ArgumentParser:
    p = _Parser(prog="levelcheck", description=description, epilog=EPILOG,
                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("levels", nargs="*", metavar="LEVEL",
                   help="level files (.blend .glb .gltf .obj .fbx, or a JSON spec naming one); "
                        "none: the bundled sample level")
    p.add_argument("--out", default=DEFAULT_OUT, help="output folder (default levelcheck-out)")
    p.add_argument("--preset", choices=presets.ENGINES, type=str.lower,
                   help="character settings from an engine's defaults")
    p.add_argument("--set", action="append", default=[], metavar="NAME=VALUE",
                   help=f"a character setting in metres/degrees ({', '.join(SETTING_NAMES)})")
    src = p.add_mutually_exclusive_group()
    src.add_argument("--collection", help="collision = the meshes of this collection")
    src.add_argument("--naming", action="store_true",
                     help="collision = meshes named by engine conventions (UCX_, _col, ...)")
    p.add_argument("--up", type=_axis, metavar="AXIS",
                   help=f"the up axis of .obj/.fbx levels ({', '.join(AXES)}; default: the "
                        "importer's, Y for OBJ, the file's own for FBX)")
    p.add_argument("--forward", type=_axis, metavar="AXIS",
                   help="the forward axis of .obj/.fbx levels (default -Z, or Y with --up Z)")
    p.add_argument("--checks", default=",".join(DEFAULT_CHECKS),
                   help=f"comma-separated: {', '.join(CHECKS)} or all (default: all but "
                        "frame_rates)")
    p.add_argument("--frame-rates", default="30,60,120",
                   help="Hz for the frame_rates check (default 30,60,120)")
    p.add_argument("--min-depth", default=str(MIN_REPORTED_DEPTH),
                   help="metres; shallower capsule contacts count as clear (default 1e-6)")
    p.add_argument("--spec", help="sidecar JSON for every level (default: <level>"
                                  + SIDECAR_SUFFIX + " when present)")
    p.add_argument("--fail-on", choices=SEVERITIES[:2], default="error",
                   help="exit 1 on findings of this severity or above (default error; "
                        "warning: audits and level warnings fail too)")
    p.add_argument("--jobs", type=int, default=1,
                   help="worker processes over the levels (capped by the CPUs and by the "
                        "memory a worker needs, said on stderr)")
    p.add_argument("--shard", help="K/N: check only the K-th of N deterministic shares of the "
                                   "levels (a CI matrix); combine the outputs with --merge")
    p.add_argument("--merge", nargs="+", metavar="DIR",
                   help="combine the outputs of all N shard folders into one (refused when "
                        "one is missing or they come from different runs)")
    p.add_argument("--baseline", help="a previous report.json: fail only on findings new "
                                      "since it")
    p.add_argument("--root", help="the folder level keys are relative to (a finding's "
                                  "identity for --baseline; default: the git top level of "
                                  "the levels' common folder, else that folder)")
    p.add_argument("--severity", action="append", default=[], metavar="CHECK=SEVERITY",
                   help="override a check's severity (error, warning, info); repeatable; "
                        "wins over the sidecar's \"severity\"")
    p.add_argument("--min-area", action="append", default=[], metavar="CHECK=M2",
                   help="islands / stand (cramped regions) / headroom (low-headroom "
                        "regions) / collision_diff (render-vs-collision differences, per "
                        "kind) smaller than M2 square metres are "
                        "counted in one info, not listed (default: the character's "
                        "footprint, pi r^2); repeatable")
    p.add_argument("--exclude", action="append", default=[], metavar="NAME",
                   help="leave this object or collection out of every level; repeatable")
    p.add_argument("--save-blend", action="store_true",
                   help="also save the level annotated by the extension's operators (face "
                        "attributes, traces, markers) as <level>.levelcheck.blend")
    p.add_argument("--no-png", action="store_true", help="no pictures")
    p.add_argument("--insets", type=int, default=DEFAULT_INSETS,
                   help=f"inset pictures per level, one per finding (default {DEFAULT_INSETS})")
    p.add_argument("--export-collision", choices=("unreal", "godot", "unity"), type=str.lower,
                   metavar="ENGINE", help="instead of checking: write each level's collision "
                   "named for ENGINE (unreal, godot, unity) with its render meshes to "
                   "--out as <level>_collision.fbx/.glb")
    p.add_argument("--export-format", choices=("fbx", "gltf"), type=str.lower,
                   help="with --export-collision: fbx (Unreal, Unity) or gltf (Godot, Unity); "
                        "default the engine's own")
    p.add_argument("--quiet", action="store_true",
                   help="no progress and no summary table: only each failing finding's line "
                        "and the verdict")
    return p


@dataclasses.dataclass
class Job:
    levels: list
    out: str
    settings: dict  # field -> value overrides from --set
    preset: str | None
    collection: str | None
    naming: bool
    checks: tuple
    frame_rates: tuple
    min_depth: float
    fail_on: str
    save_blend: bool
    png: bool
    insets: int
    quiet: bool
    shard: tuple | None  # (K, N)
    many: bool  # more than one level on the command line (pictures are numbered)
    run: dict  # the report's "run": shard, levels on the command line, fingerprint
    baseline: dict | None
    baseline_file: str | None
    severity: dict = dataclasses.field(default_factory=dict)  # --severity CHECK=SEVERITY
    min_area: dict = dataclasses.field(default_factory=dict)  # --min-area CHECK=M2
    exclude: tuple = ()  # --exclude NAME: objects or collections left out
    # processes one level's floods and walks share (core's ``workers``): the CPUs when the
    # levels are checked in this process, 1 in each ``--jobs`` worker (levelcheck.cli)
    workers: int = 1


def parse_shard(text):
    try:
        k, n = (int(x) for x in text.split("/"))
    except ValueError:
        raise UsageError(f"--shard: expected K/N such as 1/4, got {text!r}") from None
    if not 1 <= k <= n:
        raise UsageError(f"--shard: need 1 <= K <= N, got {text!r}")
    return k, n


def load_baseline(path):
    doc = read_json(path, "--baseline")
    if not isinstance(doc, dict) or doc.get("format") != REPORT_FORMAT:
        raise UsageError(f"--baseline {path}: not a levelcheck report.json")
    return doc


def baseline_fits(baseline: dict, root, keys, path):
    """UsageError unless ``baseline`` (a report document) was made over the same ``root``
    and holds at least one of the run's level ``keys``: a finding must never be matched
    against another level's that happens to share its key."""
    theirs = (baseline.get("run") or {}).get("root")
    if theirs != root:
        said = "records no root (made by an older levelcheck: make it again)" if (
            theirs is None and root is not None) else f"has root {theirs}"
        raise UsageError(f"--baseline {path}: {said}, but this run's level keys are relative "
                         f"to {root}; make the baseline with the same --root")
    known = {lv.get("key") for lv in baseline.get("levels", [])}
    if keys and not known.intersection(keys):
        raise UsageError(f"--baseline {path}: none of this run's levels ({', '.join(keys[:3])}"
                         f"{', ...' if len(keys) > 3 else ''}) is in it (its levels: "
                         f"{', '.join(sorted(k for k in known if k)[:3]) or 'none'}); a "
                         "baseline of other levels would pass every finding as new or known "
                         "by chance")


def _options(args):
    if args.jobs < 1:
        raise UsageError(f"--jobs: must be >= 1, got {args.jobs}")
    if args.insets < 0:
        raise UsageError(f"--insets: must be >= 0, got {args.insets}")
    try:
        checks = parse_checks(args.checks)
        min_depth = parse_min_depth(args.min_depth, "--min-depth")
        rates = parse_frame_rates(args.frame_rates)
        overrides = parse_settings(args.set, "--set")
        gate = (parse_severities(args.severity, "command line", "--severity"),
                parse_min_area(args.min_area, "command line", "--min-area"),
                tuple(args.exclude))
    except ValueError as exc:
        raise UsageError(str(exc).replace("frame_rates:", "--frame-rates:")
                         .replace("checks:", "--checks:")) from None
    return checks, min_depth, rates, overrides, gate


def build_job(args) -> Job:
    """Every input checked; UsageError for the first problem."""
    checks, min_depth, rates, overrides, gate = _options(args)
    levels, root = levels_module.gather_with_root(args)
    for lv in levels:
        fields = resolve_settings(ControllerSettings().to_dict(), args.preset or lv.spec.preset,
                                  lv.spec.settings, overrides)
        try:
            ControllerSettings(**fields)
        except (TypeError, ValueError) as exc:
            raise UsageError(f"settings for {lv.display}: {exc}") from None
    shard = parse_shard(args.shard) if args.shard else None
    many = len(levels) > 1
    run = {"shard": list(shard) if shard else None, "levels": len(levels), "root": root,
           "fingerprint": fingerprint([lv.key for lv in levels], checks, overrides,
                                      args.preset, args.collection, args.naming, rates,
                                      min_depth, args.up, args.forward, args.fail_on,
                                      *gate)}
    if shard:
        levels = [lv for lv in levels if lv.index % shard[1] == shard[0] - 1]
    baseline = load_baseline(args.baseline) if args.baseline else None
    if baseline is not None:
        baseline_fits(baseline, root, [lv.key for lv in levels], args.baseline)
    return Job(levels, args.out, overrides, args.preset, args.collection, args.naming, checks,
               rates, min_depth, args.fail_on, args.save_blend, not args.no_png, args.insets,
               args.quiet, shard, many, run, baseline, args.baseline, *gate)
