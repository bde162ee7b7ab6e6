"""Reachability's arcs shared among forked processes (core/walk/shares.py, ``workers``): the
same flood for any number of workers, a child that dies or fails stops the run with a clear
error, and no fork where a process may not have children; and the flood's components grown
by its arcs (what the what-if refloods start from) equal to those of all its moves."""

import multiprocessing
import os
import signal
import threading
import time

import numpy as np
import pytest
from capsule_collision.core import ControllerSettings, TriangleMesh, reachability
from capsule_collision.core.checks import reach_arcs
from capsule_collision.core.checks.reach_graph import mutual_components, mutual_components_grown
from capsule_collision.core.checks.reach_links import FALL, JUMP, WALK, Links
from capsule_collision.core.checks.reachability import ISLAND, REACHABLE
from capsule_collision.core.walk import shares
from scenes import box, merge

pytestmark = pytest.mark.skipif(not shares.can_fork(), reason="no fork on this platform")

JUMPER = ControllerSettings(jump_height=1.0)


def _terraces():
    """A 12 x 12 m floor with blocks 0.8 m (a jump up) and 2.4 m (out of the jump's reach,
    from either) and a deck across a 1.5 m gap beside it (a jump across)."""
    parts = [box((0, 0, -0.2), (12, 12, 0)),
             box((2, 2, 0), (4, 4, 0.8)), box((6, 2, 0), (8, 4, 2.4)),
             box((12 + 1.5, 0, -0.2), (16, 12, 0))]
    return TriangleMesh(*merge(parts))


@pytest.fixture
def forks(monkeypatch):
    """Every round forks (FORK_MIN_ARCS 2); counts the runs dealt to more than one share."""
    monkeypatch.setattr(reach_arcs, "FORK_MIN_ARCS", 2)
    seen = []
    real = reach_arcs.run_shares

    def spy(work, n, workers, what):
        got = real(work, n, workers, what)
        seen.append(len(got[0]))
        return got

    monkeypatch.setattr(reach_arcs, "run_shares", spy)
    return seen


def _same(a, b):
    assert np.array_equal(a.cell_class, b.cell_class)
    for x, y in zip(a.moves, b.moves):
        assert np.array_equal(x, y)
    assert a.arcs == b.arcs
    assert [r.faces.tolist() for r in a.islands] == [r.faces.tolist() for r in b.islands]
    assert a.what_if == b.what_if


@pytest.mark.parametrize("workers", [2, 3])
def test_arcs_shared_among_processes_give_the_flood_of_one_process(forks, workers):
    mesh = _terraces()
    spawn = [[1.0, 6.0, 0.0]]
    one = reachability(mesh, spawn, JUMPER)
    many = reachability(mesh, spawn, JUMPER, workers=workers)
    _same(one, many)
    assert max(forks) == workers  # the arcs were dealt to forked children
    # the scene needs the arcs: the 0.8 m block and the far deck are reached by jumping only
    top = one.can_reach(np.array([[3.0, 3.0, 0.8], [14.0, 6.0, 0.0], [7.0, 3.0, 2.4]]))
    assert list(top) == [True, True, False]
    walking = reachability(mesh, spawn, ControllerSettings())
    assert list(walking.can_reach(np.array([[3.0, 3.0, 0.8], [14.0, 6.0, 0.0]]))) == \
        [False, False]
    assert (one.cell_class == REACHABLE).any() and (one.cell_class == ISLAND).any()


def test_one_worker_or_few_arcs_fly_here(monkeypatch):
    calls = []
    monkeypatch.setattr(reach_arcs, "run_shares", lambda *a: calls.append(a))
    reachability(_terraces(), [[1.0, 6.0, 0.0]], JUMPER, workers=1)
    assert calls == []  # workers 1: no share is dealt
    monkeypatch.setattr(reach_arcs, "FORK_MIN_ARCS", 10**9)
    reachability(_terraces(), [[1.0, 6.0, 0.0]], JUMPER, workers=4)
    assert calls == []  # too few arcs to be worth a fork


@pytest.mark.parametrize("bad", [0, -1, 1.5, True, "2"])
def test_workers_must_be_a_positive_integer(bad):
    with pytest.raises(ValueError, match="workers must be an integer >= 1"):
        reachability(_terraces(), [[1.0, 6.0, 0.0]], JUMPER, workers=bad)


def test_a_child_that_dies_stops_the_run_naming_the_work_at_once():
    def work(idx):
        if idx[0] == 1:
            os._exit(3)  # as the out-of-memory killer ends a process: nothing sent
        time.sleep(60)  # the other share is slow: its end is not waited for
        return idx.tolist()

    t0 = time.monotonic()
    with pytest.raises(shares.WorkerDied, match=r"reachability's arcs: worker process exited "
                                                r"with code 3"):
        shares.run_shares(work, 10, 2, "reachability's arcs")
    assert time.monotonic() - t0 < 30


def test_a_childs_exception_is_raised_here():
    def work(idx):
        if idx[0] == 2:
            raise ValueError("bad arc")
        return idx.tolist()

    with pytest.raises(ValueError, match="bad arc"):
        shares.run_shares(work, 10, 3, "arcs")


class _Stop(Exception):
    pass


_STOP_IN_FORK: list = []  # armed: the next fork's parent-side hook sends us SIGTERM


def _sigterm_in_fork():
    if _STOP_IN_FORK:
        _STOP_IN_FORK.clear()
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(0.2)  # still in the hook when the handler's turn comes


os.register_at_fork(after_in_parent=_sigterm_in_fork)  # one hook for the test process


def test_a_stop_that_comes_while_forking_stops_the_run():
    """Regression (CI, levelcheck exited 0 after SIGTERM): a signal whose handler raises,
    arriving while a share's child is forked, ran inside an at-fork hook, where Python
    prints the exception and ignores it; the run went on. Held while forking, it stops it,
    even when another thread takes the signal (CI: the mask of this thread alone was not
    enough, 1 run in 3)."""
    def work(idx):
        time.sleep(30)
        return idx.tolist()

    def stop(_signum, _frame):
        raise _Stop

    saved = signal.signal(signal.SIGTERM, stop)
    # another thread alive (as numpy's BLAS threads are): the process's signal may go to it
    # while this thread blocks it, and Python runs the handler here, in the at-fork hook
    quit_ = threading.Event()
    other = threading.Thread(target=quit_.wait)
    other.start()
    try:
        _STOP_IN_FORK.append(True)
        t0 = time.monotonic()
        with pytest.raises(_Stop):
            shares.run_shares(work, 4, 2, "reachability's arcs")
        assert time.monotonic() - t0 < 20  # the children stopped, not waited for
    finally:
        quit_.set()
        other.join()
        _STOP_IN_FORK.clear()
        signal.signal(signal.SIGTERM, saved)
    assert multiprocessing.active_children() == []


def test_shares_deal_items_round_robin_and_answer_in_share_order():
    got_shares, results = shares.run_shares(lambda idx: (os.getpid(), idx.tolist()), 7, 3,
                                            "arcs")
    assert [s.tolist() for s in got_shares] == [[0, 3, 6], [1, 4], [2, 5]]
    assert [r[1] for r in results] == [[0, 3, 6], [1, 4], [2, 5]]
    # each share in its own forked child, this process waiting on them all
    assert os.getpid() not in {r[0] for r in results} and len({r[0] for r in results}) == 3


def _in_daemon(queue):
    queue.put((shares.can_fork(), [s.tolist() for s in
                                   shares.run_shares(lambda i: i, 4, 2, "arcs")[0]]))


def test_a_daemonic_process_runs_its_shares_itself():
    ctx = multiprocessing.get_context("fork")
    queue = ctx.Queue()
    proc = ctx.Process(target=_in_daemon, args=(queue,), daemon=True)
    proc.start()
    can, got = queue.get(timeout=30)
    proc.join(timeout=30)
    assert can is False and got == [[0, 1, 2, 3]]


def test_the_floods_components_grown_by_its_arcs_are_those_of_all_its_moves():
    """The what-if refloods start from the flood's components (``_Flood.comp``): grown from
    the components before the arcs by the moves the arcs make both ways, they are
    ``mutual_components`` of every move, on a jumping flood and on a hand-made graph where
    a jump and a fall join two ledges both ways."""
    moves = reachability(_terraces(), [[1.0, 6.0, 0.0]], JUMPER).moves
    n = int(max(moves.src.max(), moves.dst.max())) + 1
    before = Links(*(c[~np.isin(moves.kind, [FALL, JUMP])] for c in moves))
    assert before.src.size < moves.src.size
    grown = mutual_components_grown(mutual_components(n, before), moves)
    assert np.array_equal(grown, mutual_components(n, moves))
    # 0-1 and 3-4 walk; 1 -> 3 a jump, 3 -> 1 a fall (both ways: one component); 4 -> 6 a
    # fall only; 5 alone
    walks = Links(np.array([0, 1, 3, 4]), np.array([1, 0, 4, 3]), np.full(4, WALK, np.int8))
    arcs = Links(np.array([1, 3, 4]), np.array([3, 1, 6]), np.array([JUMP, FALL, FALL],
                                                                      np.int8))
    grown = mutual_components_grown(mutual_components(7, walks), Links.join([walks, arcs]))
    assert grown.tolist() == [0, 0, 2, 0, 0, 5, 6]
    assert np.array_equal(grown, mutual_components(7, Links.join([walks, arcs])))
