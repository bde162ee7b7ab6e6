"""levelcheck: check levels for character collision problems, headless, for pipelines and CI.

Usage::

    levelcheck [LEVEL ...] [--out DIR] [--preset ENGINE] [--set NAME=VALUE ...]
        [--collection NAME | --naming] [--checks LIST] [--spec FILE] [--jobs N]
        [--shard K/N] [--baseline REPORT] [--save-blend] [--no-png] [--quiet]
    levelcheck LEVEL [...] --export-collision ENGINE [--export-format fbx|gltf] [--out DIR]
    levelcheck --merge DIR [DIR ...] [--out DIR] [--baseline REPORT]

(also ``python -m capsule_collision.levelcheck`` and ``python tools/levelcheck.py`` from a
checkout). LEVEL is a .blend, .glb/.gltf, .obj or .fbx file, read by Blender's own importers
(axes and units converted as Blender imports them; ``--up``/``--forward`` for OBJ and FBX), or
a JSON level spec naming one (``"mesh"``). With no LEVEL the bundled sample level is checked
(built in memory by ``sample_level.py``).

What to check comes from the level: capsules (Empties with role Capsule) and walk paths (role
Path) placed with the extension, with the expectations set in its panel. A sidecar JSON
(``<level>.levelcheck.json`` beside the level, or ``--spec FILE`` for every level) adds or
overrides them by name and may set the character::

    {"settings": {"step_height": 0.3}, "preset": "unity", "collection": "Collision",
     "capsules": [{"name": "spawn", "foot": [x, y, z], "expect": "clear",
                   "radius": 0.35, "height": 1.8}],
     "paths": [{"name": "stairs", "points": [[x, y, z], ...], "expect": "reached_goal"}]}

Outputs in ``--out`` (default ``levelcheck-out``), probed before any work and each written
atomically: report.json (see schema/report.schema.json), junit.xml, report.png (one level;
``report-<n>-<name>.png`` each for several), one inset picture per finding
(``finding-<n>-<k>.png``) and with ``--save-blend`` the annotated level(s) as .blend. The
console gets one summary table and the output paths; progress goes to stderr.

Exit status: 0 no finding fails the gate (``--fail-on``; with ``--baseline``: no new one),
1 findings, 2 usage, input or output error, or a worker process that died (one line on
stderr, no outputs), 130 / 143 stopped by SIGINT / SIGTERM (one line; workers stopped,
temporary folders removed). An earlier run's outputs in ``--out`` are removed before any
work (a non-empty folder that is not levelcheck's is refused); ``--jobs`` is capped by the
CPUs and by the memory a worker needs, and says so. Levels checked in this process (no
``--jobs``) share the CPUs within each level: its walks and the flood's arcs are dealt to
processes forked for them (``level_workers``); each ``--jobs`` worker uses one.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile

from ..core.checks.report import combine_levels, mark_baseline
from . import console
from .arguments import baseline_fits, build_job, load_baseline, parser
from .export import export_levels
from .levels import UsageError
from .merge import merge
from .outputs import OutputError, clear_previous, probe, remove_if_empty, write_outputs
from .run import Stopped, level_workers, run_levels, run_parallel, stop_on_signals, worker_count


def _check(args):
    """Check the levels of the command line: (document, written paths)."""
    job = build_job(args)
    clear_previous(args.out)
    created = probe(args.out)
    work_dir = tempfile.mkdtemp(prefix="levelcheck-")
    try:
        n_jobs = worker_count(args.jobs, job.levels) if args.jobs > 1 else 1
        if n_jobs > 1:
            reports, outputs = run_parallel(job, n_jobs, work_dir)
        else:
            job.workers = level_workers()
            reports, outputs = run_levels(job, work_dir)
        document = combine_levels(reports, job.fail_on)
        document["run"] = job.run
        if job.baseline is not None:
            mark_baseline(document, job.baseline, job.baseline_file)
        return document, write_outputs(document, outputs, args.out)
    except (UsageError, OutputError, ValueError, Stopped):
        if created:
            remove_if_empty(args.out)
        raise
    finally:
        shutil.rmtree(work_dir, ignore_errors=True)


def _merge(args):
    """Combine shard outputs: (document, written paths)."""
    if args.levels:
        raise UsageError("--merge takes shard output folders, not levels")
    baseline = load_baseline(args.baseline) if args.baseline else None
    reports, pictures, run = merge(args.merge)
    clear_previous(args.out)
    if baseline is not None:
        baseline_fits(baseline, run.get("root"), [lv["key"] for lv in reports], args.baseline)
    probe(args.out)
    document = combine_levels(reports, args.fail_on)
    document["run"] = run
    if baseline is not None:
        mark_baseline(document, baseline, args.baseline)
    return document, write_outputs(document, pictures, args.out)


def _export(args) -> int:
    """--export-collision: the written files on stdout, Unreal's hull warnings on stderr."""
    if args.merge:
        raise UsageError("--export-collision takes levels, not --merge")
    written = export_levels(args)
    print("outputs:")
    for path, hulled in written:
        print(f"  {path}")
        if hulled:
            print(f"levelcheck: warning: {path}: Unreal hulls each UCX_ mesh; concave: "
                  f"{', '.join(hulled)}", file=sys.stderr)
    return 0


def main(argv=None) -> int:
    """The command line (see the module docstring); returns the exit status."""
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        args = parser(__doc__.split("\n\n")[0]).parse_args(argv)
        if args.export_collision:
            return _export(args)
        with stop_on_signals():
            document, written = _merge(args) if args.merge else _check(args)
    except Stopped as exc:
        print(f"levelcheck: stopped by {exc} (workers stopped, temporary folders removed; "
              "no report)", file=sys.stderr)
        return 128 + exc.signum
    except (UsageError, OutputError, ValueError) as exc:
        # ValueError: LevelError and core on a level's data, named by the level
        print(f"levelcheck: error: {exc}", file=sys.stderr)
        return 2
    if args.quiet:
        print(console.quiet_summary(document))
    else:
        print(console.summary(document))
        print("outputs:")
        for path in written:
            print(f"  {os.path.abspath(path)}")
    return 0 if document["summary"]["ok"] else 1
