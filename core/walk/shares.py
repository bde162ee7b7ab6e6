"""Controller work shared among forked processes: the walks of ``walkthrough_many`` and the
arcs (walk-offs and jumps) of ``core.reachability``.

``run_shares(work, n, workers, what)`` deals items 0..n-1 round-robin into ``workers``
shares (share i holds i, i + workers, ...). Processes forked from this one (copy-on-write:
the mesh and its caches are neither copied nor pickled) run ``work(idx)``, one share each,
and send the result back through a pipe while this process waits on them all, so that a
child that dies is noticed at once. A lock-step batch of characters or arcs gives each item
the same answer in any batch (bit for bit with this numpy; the tests of both callers check
it), so a shared run answers what one process would.

Where forking is unsafe or impossible the work runs here, in one share: no ``fork`` start
method (Windows), inside a daemonic process (which may not have children: a ``--jobs``
worker of the CLI), or ``workers`` 1. Do not ask for more than one worker from inside
Blender's UI process (forking it is unsafe); headless pipelines can.

A child that dies (killed, out of memory) fails the run with WorkerDied (a RuntimeError)
naming ``what`` and its exit code; an exception in a child is raised here; on any way out
the children are stopped.

SIGINT and SIGTERM are held while this process forks. A Python signal handler that raises
(the CLI's stop) would otherwise run inside an at-fork hook (``logging``'s, for one), where
Python prints the exception and ignores it: the run went on as if never stopped. Held, the
stop is raised after the fork, in this module's code. Blocking the signals in this thread is
not enough: another thread (numpy's BLAS, a thread pool) may take a signal sent to the
process, and Python then runs the handler in the main thread wherever it is, the hook
included. So while forking, a raising (Python) handler is swapped for one that notes the
signal, and the original is called once the fork is done. The signals are blocked too, so
that the child (which inherits the mask, not pending signals) sets its own handlers before
it lets them through.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import multiprocessing.connection
import signal
import threading

import numpy as np

# Signals a caller may turn into an exception (levelcheck's stop): held while forking.
HELD_SIGNALS = frozenset({signal.SIGINT, signal.SIGTERM})


class WorkerDied(RuntimeError):
    """A forked child of ``run_shares`` ended before sending its share (killed, out of
    memory): the message names the work and the child's exit code."""


def check_workers(workers) -> int:
    """``workers`` as an int >= 1; ValueError naming it otherwise."""
    if isinstance(workers, bool) or not isinstance(workers, (int, np.integer)) or workers < 1:
        raise ValueError(f"workers must be an integer >= 1, got {workers!r}")
    return int(workers)


def can_fork() -> bool:
    """True where ``run_shares`` may fork: a ``fork`` start method and a process that may
    have children (not daemonic)."""
    return ("fork" in multiprocessing.get_all_start_methods()
            and not multiprocessing.current_process().daemon)


def run_shares(work, n: int, workers: int, what: str) -> tuple[list, list]:
    """(shares, results): ``work(idx)`` for each round-robin share ``idx`` (int array) of
    items 0..n-1, each in a forked child while this process waits on them all (module
    docstring): a child that dies is noticed at once, not after a share of our own; one
    share, in this process, when ``workers`` < 2, ``n`` < 2 or ``can_fork()`` is False."""
    workers = min(check_workers(workers), max(int(n), 1))
    if workers < 2 or not can_fork():
        idx = np.arange(n)
        return [idx], [work(idx)]
    ctx = multiprocessing.get_context("fork")
    shares = [np.arange(i, n, workers) for i in range(workers)]
    children = []
    done = False
    try:
        for idx in shares:
            recv, send = ctx.Pipe(duplex=False)
            proc = ctx.Process(target=_share_main, args=(send, work, idx), daemon=True)
            with _signals_held():  # a stop comes after the child is on the list to end
                proc.start()
                children.append((proc, recv))
            send.close()  # the child's end alone: its death is an end of file here
        results = _collect(children, what)
        done = True
        return shares, results
    finally:  # children have sent their share (or one failed, or we were stopped: end them)
        for proc, recv in children:
            recv.close()
            if done:
                proc.join(timeout=5.0)
            if proc.is_alive():
                proc.terminate()
                proc.join()


@contextlib.contextmanager
def _signals_held():
    """HELD_SIGNALS held for the block (module docstring): blocked in this thread, and in the
    main thread their Python handlers swapped for one that notes them; the originals are
    restored after the block and called for each signal noted, in ordinary code."""
    noted: list = []
    saved = {}
    if threading.current_thread() is threading.main_thread():
        for sig in HELD_SIGNALS:
            if callable(signal.getsignal(sig)):
                saved[sig] = signal.signal(sig, lambda signum, _frame: noted.append(signum))
    blocking = hasattr(signal, "pthread_sigmask")  # not on Windows (no fork there either)
    before = signal.pthread_sigmask(signal.SIG_BLOCK, HELD_SIGNALS) if blocking else None
    try:
        yield
    finally:
        for sig, handler in saved.items():
            signal.signal(sig, handler)
        if blocking:
            signal.pthread_sigmask(signal.SIG_SETMASK, before)
        for signum in noted:
            saved[signum](signum, None)


def _collect(children, what: str) -> list:
    """Each child's result, in share order, taken as each arrives; WorkerDied as soon as a
    child ends without sending, a child's exception raised here."""
    results: list = [None] * len(children)
    pending = {recv: k for k, (_proc, recv) in enumerate(children)}
    while pending:
        for ready in multiprocessing.connection.wait(list(pending)):
            k = pending.pop(ready)
            recv = children[k][1]  # the Connection (wait's answer is typed more loosely)
            try:
                got = recv.recv()
            except EOFError:
                proc = children[k][0]
                proc.join(timeout=5.0)  # reap it, so that its exit code is known
                raise WorkerDied(f"{what}: worker process exited with code "
                                 f"{proc.exitcode} before returning its share") from None
            if isinstance(got, BaseException):
                raise got
            results[k] = got
    return results


def _share_main(conn, work, idx):
    """A forked child of ``run_shares``: run one share, send its result (or exception).
    The parent's signal handlers are not the child's: SIGINT (sent to the whole process
    group at a terminal) is the parent's to act on, and SIGTERM (the parent stopping us)
    ends the child at once."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, HELD_SIGNALS)  # held by the fork (_signals_held)
    try:
        out = work(idx)
    except BaseException as exc:  # noqa: BLE001 - re-raised in the parent
        out = exc
    try:
        conn.send(out)
    finally:
        conn.close()
