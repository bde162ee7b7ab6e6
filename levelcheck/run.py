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
import queue
import signal
import sys
import threading
import time

from ..core.walk.shares import WorkerDied
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
    except WorkerDied as exc:  # a process sharing the level's arcs or walks was killed
        raise UsageError(f"level {level.display}: {exc}") from None
    except ValueError as exc:  # LevelError, or core on the level's data: name the level
        text = str(exc)
        named = level.display in text or (level.path and os.path.abspath(level.path) in text)
        raise UsageError(text if named else f"level {level.display}: {text}") from None


# Memory one worker process needs: Blender with the extension (~0.5 GB measured) plus the
# level, its mesh, BVH and pictures: the 10 workers on the shipped maps took 7.1 GB,
# ~0.7 GB each, for clip meshes of 10-40k triangles from OBJ files of 0.3-2 MB.
WORKER_BASE_BYTES = 600 * 2**20
WORKER_BYTES_PER_FILE_BYTE = 100  # a level file's bytes -> bytes of the worker checking it


def available_cpus() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


# At most this many processes share one level's walks and arcs (levelcheck.cli): past a few,
# a round's arcs are too few to keep more busy
MAX_LEVEL_WORKERS = 4


def level_workers() -> int:
    """Processes a level checked in this process shares its walks and the floods' arcs with
    (core's ``workers``): the CPUs this process may use, at most MAX_LEVEL_WORKERS."""
    return max(1, min(available_cpus(), MAX_LEVEL_WORKERS))


def available_memory() -> int | None:
    """Bytes the system can give without swapping (MemAvailable), None when unknown."""
    try:
        with open("/proc/meminfo", encoding="ascii") as handle:
            for line in handle:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


def worker_count(requested: int, levels, say=None) -> int:
    """``requested`` worker processes capped by the levels, the CPUs and the memory a worker
    needs for the largest level (``WORKER_BASE_BYTES`` + ``WORKER_BYTES_PER_FILE_BYTE`` x its
    file); when capped, ``say`` (default: one line on stderr) says by what."""
    sizes = [os.path.getsize(lv.path) for lv in levels if lv.path and os.path.isfile(lv.path)]
    per_worker = WORKER_BASE_BYTES + WORKER_BYTES_PER_FILE_BYTE * max(sizes, default=0)
    memory = available_memory()
    caps = [(len(levels), f"{len(levels)} level(s)"), (available_cpus(), "CPUs")]
    if memory is not None:
        caps.append((max(1, memory // per_worker), f"{memory / 2**30:.1f} GB available at "
                     f"~{per_worker / 2**30:.1f} GB a worker"))
    n, why = min(caps, key=lambda c: c[0])
    n = max(1, min(requested, n))
    if n < requested:
        (say or (lambda m: print(m, file=sys.stderr)))(
            f"levelcheck: --jobs {requested} capped to {n} ({why})")
    return n


def run_levels(job, work_dir: str) -> tuple[list, dict]:
    """Check the job's levels in this process. Returns (level reports, {name: temp path})."""
    from . import session  # noqa: PLC0415

    reports, outputs = [], {}
    if not job.levels:  # an empty shard (more shards than levels): no Blender to start
        return reports, outputs
    with blender_output(job.quiet) as err:
        say = Progress(job.quiet, err)
        bpy = session.start()
        if signal.getsignal(signal.SIGTERM) is _stop:  # importing bpy took SIGINT back
            signal.signal(signal.SIGINT, _stop)
        for level in job.levels:
            report, out = _check(bpy, level, job, work_dir, say)
            reports.append(report)
            outputs.update(out)
    return reports, outputs


_WORKER: dict = {}
POLL_S = 0.2  # seconds between looks at the workers while waiting for a result
# Environment the workers get pointed inside the run's temporary folder (and the cache).
WORKER_FOLDERS = ("BLENDER_USER_RESOURCES", "TMPDIR", "XDG_CACHE_HOME")


class Stopped(Exception):
    """SIGINT or SIGTERM: the run stops (workers ended, temporary folders removed)."""

    def __init__(self, signum: int):
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


def _stop(signum, _frame):
    raise Stopped(signum)


@contextlib.contextmanager
def stop_on_signals():
    """While the run works, SIGINT and SIGTERM raise ``Stopped`` in the main thread (Blender
    and Python's defaults would ignore the one or kill without clean-up on the other)."""
    saved = {sig: signal.signal(sig, _stop) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for sig, handler in saved.items():
            signal.signal(sig, handler)


def _worker_main(job, work_dir, tasks, results):
    """A worker process: Blender once, then levels from ``tasks`` until None. Tells
    ``results`` ("start", i) before each level and ("done", i, result) after."""
    from . import session  # noqa: PLC0415

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent stops the run, and us
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    output = blender_output(job.quiet)
    err = output.__enter__()  # for the life of the worker process
    say = Progress(job.quiet, err)
    bpy = session.start()
    while True:
        index = tasks.get()
        if index is None:
            return
        results.put(("start", index, os.getpid()))
        try:
            result = _check(bpy, job.levels[index], job, work_dir, say)
        except UsageError as exc:
            result = exc
        results.put(("done", index, result))


def _death(process) -> str:
    code = process.exitcode
    if code is not None and code < 0:
        name = signal.Signals(-code).name
        why = " (killed: out of memory?)" if -code == signal.SIGKILL else ""
        return f"died of {name}{why}"
    return f"exited with status {code}"


def _check_alive(job, procs, working: dict, done: dict):
    """UsageError when a worker has died: naming the level it was checking, else (it died
    before taking one) the levels not yet checked."""
    dead = [p for p in procs if p.exitcode is not None and (p.exitcode != 0 or p.pid in working)]
    dead.sort(key=lambda p: p.pid not in working)  # one that had a level first
    if dead and dead[0].pid in working:
        raise UsageError(f"level {job.levels[working[dead[0].pid]].display}: the worker "
                         f"process checking it {_death(dead[0])}; no report was written")
    if dead:
        rest = [lv.display for i, lv in enumerate(job.levels) if i not in done]
        raise UsageError(f"level {rest[0]}: a worker process {_death(dead[0])} before it "
                         f"took a level (not checked: {', '.join(rest)})")


def _collect(job, procs, results) -> list:
    """Results of every level, in level order; UsageError naming the level whose worker
    died (seen within ``POLL_S`` seconds) or that was bad."""
    done: dict = {}
    working: dict = {}  # pid -> level index
    while len(done) < len(job.levels):
        try:
            message = results.get(timeout=POLL_S)
        except queue.Empty:
            _check_alive(job, procs, working, done)
            continue
        if message[0] == "start":
            working[message[2]] = message[1]
            continue
        _, index, result = message
        working = {pid: i for pid, i in working.items() if i != index}
        if isinstance(result, UsageError):
            raise result
        done[index] = result
    return [done[i] for i in range(len(job.levels))]


def _end(procs):
    """Stop the worker processes (SIGTERM, then SIGKILL after a second) and reap them."""
    for p in procs:
        if p.is_alive():
            p.terminate()
    for p in procs:
        p.join(1.0)
        if p.is_alive():
            p.kill()
            p.join()


def run_parallel(job, n_jobs: int, work_dir: str) -> tuple[list, dict]:
    """Check the job's levels in ``n_jobs`` worker processes (see the module docstring). A
    worker that dies fails the run (UsageError naming its level) within ``POLL_S``; on any
    way out (an error, SIGINT, SIGTERM) every worker is stopped."""
    from .session import SHADER_CACHE  # noqa: PLC0415  (no bpy: the module imports none)

    saved = {k: os.environ.get(k) for k in THREAD_VARIABLES + WORKER_FOLDERS}
    os.environ.update(dict.fromkeys(THREAD_VARIABLES, "1"))  # the workers inherit them
    # Blender's user folders and its session temporary folder inside the run's temporary
    # folder: removed with it, even when a worker is killed; the shader cache stays shared
    os.environ["BLENDER_USER_RESOURCES"] = os.path.join(work_dir, "blender-user")
    os.environ["TMPDIR"] = os.path.join(work_dir, "tmp")
    os.makedirs(os.environ["TMPDIR"], exist_ok=True)
    os.environ.setdefault("XDG_CACHE_HOME", SHADER_CACHE)
    ctx = multiprocessing.get_context("spawn")
    tasks, results = ctx.Queue(), ctx.Queue()
    procs = []
    try:
        for index in range(len(job.levels)):
            tasks.put(index)
        for _ in range(n_jobs):
            tasks.put(None)
        procs = [ctx.Process(target=_worker_main, args=(job, work_dir, tasks, results),
                             daemon=True) for _ in range(n_jobs)]
        for p in procs:
            p.start()
        found = _collect(job, procs, results)
    finally:
        _end(procs)
        for q in (tasks, results):
            q.cancel_join_thread()
            q.close()
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    reports, outputs = [], {}
    for report, out in found:
        reports.append(report)
        outputs.update(out)
    return reports, outputs
