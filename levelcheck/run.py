"""Running the levels: in this process, or in ``--jobs`` worker processes, each starting
Blender once and taking levels from a queue, one at a time, in order.

Blender's importers and renderer print to stdout and Mesa prints EGL notices to stderr on
every Workbench render: while Blender works, both go through a filter that keeps stdout for
the summary, drops Mesa's EGL lines and, with ``--quiet``, everything else. Progress lines go
to stderr.

Workers are ``multiprocessing`` processes (spawned: a fresh interpreter, never a fork of
Blender), with one thread each for numpy's BLAS and Mesa's llvmpipe: two processes on two
cores each running two or more threads measured slower than one process.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import sys
import threading
import time

from .levels import UsageError

NOISE = (b"EGL Error", b"EGL_BAD")  # Mesa's notices on every headless Workbench render
THREAD_VARIABLES = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
                    "LP_NUM_THREADS")


class Progress:
    """Progress lines on stderr (``[levelcheck HH:MM:SS] ...``), nothing with ``quiet``."""

    def __init__(self, quiet: bool, fd: int | None = None):
        self.quiet = quiet
        self.fd = fd

    def __call__(self, message: str):
        if self.quiet:
            return
        line = f"[levelcheck {time.strftime('%H:%M:%S')}] {message}\n".encode()
        if self.fd is None:
            sys.stderr.buffer.write(line)
            sys.stderr.flush()
        else:
            os.write(self.fd, line)


@contextlib.contextmanager
def blender_output(quiet: bool):
    """While Blender works: fd 1 and 2 into a pipe; lines that are not Mesa's EGL notices go
    on to the real stderr (none with ``quiet``). Yields the real stderr's fd for progress."""
    sys.stdout.flush()
    sys.stderr.flush()
    saved_out, saved_err = os.dup(1), os.dup(2)
    read, write = os.pipe()

    def relay():
        with os.fdopen(read, "rb") as stream:
            for line in stream:
                if not quiet and not line.startswith(NOISE):
                    os.write(saved_err, line)

    thread = threading.Thread(target=relay, daemon=True)
    thread.start()
    os.dup2(write, 1)
    os.dup2(write, 2)
    os.close(write)
    try:
        yield saved_err
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os.dup2(saved_out, 1)
        os.dup2(saved_err, 2)
        thread.join()
        os.close(saved_out)
        os.close(saved_err)


def _check(bpy, level, job, work_dir, say):
    """One level's (report, outputs); UsageError naming the level for a bad level."""
    from .check import check_one  # noqa: PLC0415  (imports bpy: after session.start)

    try:
        return check_one(bpy, level, job, work_dir, say)
    except ValueError as exc:  # LevelError, or core on the level's data: name the level
        text = str(exc)
        named = level.display in text or (level.path and os.path.abspath(level.path) in text)
        raise UsageError(text if named else f"level {level.display}: {text}") from None


def run_levels(job, work_dir: str) -> tuple[list, dict]:
    """Check the job's levels in this process. Returns (level reports, {name: temp path})."""
    from . import session  # noqa: PLC0415

    reports, outputs = [], {}
    if not job.levels:  # an empty shard (more shards than levels): no Blender to start
        return reports, outputs
    with blender_output(job.quiet) as err:
        say = Progress(job.quiet, err)
        bpy = session.start()
        for level in job.levels:
            report, out = _check(bpy, level, job, work_dir, say)
            reports.append(report)
            outputs.update(out)
    return reports, outputs


_WORKER: dict = {}


def _worker_start(job, work_dir):
    from . import session  # noqa: PLC0415

    _WORKER.update(job=job, work_dir=work_dir)
    _WORKER["output"] = blender_output(job.quiet)
    err = _WORKER["output"].__enter__()  # for the life of the worker process
    _WORKER["say"] = Progress(job.quiet, err)
    _WORKER["bpy"] = session.start()


def _worker_level(level):
    try:
        return _check(_WORKER["bpy"], level, _WORKER["job"], _WORKER["work_dir"],
                      _WORKER["say"])
    except UsageError as exc:
        return exc


def run_parallel(job, n_jobs: int, work_dir: str) -> tuple[list, dict]:
    """Check the job's levels in ``n_jobs`` worker processes (see the module docstring)."""
    saved = {k: os.environ.get(k) for k in THREAD_VARIABLES}
    os.environ.update(dict.fromkeys(THREAD_VARIABLES, "1"))  # the workers inherit them
    try:
        ctx = multiprocessing.get_context("spawn")
        with ctx.Pool(n_jobs, initializer=_worker_start, initargs=(job, work_dir)) as pool:
            results = pool.map(_worker_level, job.levels, chunksize=1)
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    reports, outputs = [], {}
    for result in results:
        if isinstance(result, UsageError):
            raise result
        report, out = result
        reports.append(report)
        outputs.update(out)
    return reports, outputs
