"""levelcheck checking a level in its own process shares the reachability floods' arcs with
processes forked for them (``levelcheck.run.level_workers``, core/walk/shares.py): a shared
process killed (as the out-of-memory killer does) fails the run with exit 2 naming the level,
and SIGTERM leaves no process behind. On a shipped map (oa_bases7, Quake's player jumps:
thousands of arcs a round); skipped, saying so, where the maps are not made."""

import json
import os
import pathlib
import signal
import subprocess
import sys
import time

import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "tools"))
import real_levels  # noqa: E402

CLI = [sys.executable, "-m", "capsule_collision.levelcheck"]

pytestmark = [pytest.mark.slow, pytest.mark.skipif(
    not real_levels.available(), reason="the shipped maps are not made (tools/real_levels.py; "
    "set CC_REAL_LEVELS or run sh ../shared/real_levels/make_levels.sh)"),
    pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="one CPU: nothing is shared")]


def _start(tmp_path):
    level = real_levels.load("oa_bases7", clip=True)
    spec = tmp_path / "map.levelcheck.json"
    spec.write_text(json.dumps({"up": "Z", "settings": real_levels.QUAKE_PLAYER,
                                "spawns": level.spawn_feet.tolist()}))
    return level.obj, subprocess.Popen(
        [*CLI, str(level.obj), "--spec", str(spec), "--out", str(tmp_path / "out"), "--no-png",
         "--checks", "reachability"], stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def _children(pid):
    try:
        text = pathlib.Path(f"/proc/{pid}/task/{pid}/children").read_text()
    except OSError:
        return []
    return [int(c) for c in text.split()]


def _first_child(proc, timeout=300.0):
    """The first process forked by ``proc`` (a share of the flood's arcs)."""
    end = time.monotonic() + timeout
    while time.monotonic() < end and proc.poll() is None:
        kids = _children(proc.pid)
        if kids:
            return kids[0]
        time.sleep(0.05)
    raise AssertionError("levelcheck forked no process for the flood's arcs")


def _gone(pid):
    try:
        state = pathlib.Path(f"/proc/{pid}/stat").read_text().split()[2]
    except OSError:
        return True
    return state == "Z"


def _kill_shares(proc) -> float:
    """SIGKILL every process ``proc`` forks, as they come, until it ends; the time of the
    first kill. (CI, under load: the first child seen had already sent its share, so its
    death failed nothing and the run went on to its end, 41 s later.)"""
    first = None
    while proc.poll() is None:
        for child in _children(proc.pid):
            try:
                os.kill(child, signal.SIGKILL)
            except ProcessLookupError:
                continue
            first = time.monotonic() if first is None else first
        time.sleep(0.02)
    return first


def test_a_killed_share_of_the_arcs_fails_the_run_naming_the_level(tmp_path):
    obj, proc = _start(tmp_path)
    _first_child(proc)
    killed = _kill_shares(proc)
    _, err = proc.communicate(timeout=120)
    assert time.monotonic() - killed < 30
    assert proc.returncode == 2, err
    last = err.decode().strip().splitlines()[-1]
    assert last == (f"levelcheck: error: level {obj}: reachability's arcs: worker process "
                    "exited with code -9 before returning its share")
    assert not (tmp_path / "out").exists()


def test_sigterm_while_the_arcs_are_shared_leaves_no_process(tmp_path):
    _obj, proc = _start(tmp_path)
    child = _first_child(proc)
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 143, err
    assert err.decode().strip().splitlines()[-1].startswith("levelcheck: stopped by SIGTERM")
    deadline = time.monotonic() + 10
    while not _gone(child) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert _gone(child)
