"""levelcheck as a gate a studio keeps on (issue 27), through the CLI as CI runs it: a capsule
inside a closed crate is penetrating, keys that cannot collide across folders, runs that end
(a killed worker, SIGINT, SIGTERM, stale outputs, --jobs capped), sidecars found or warned.

Levels are small Z-up OBJ files (a floor slab and a crate, both closed boxes) with sidecars."""

import json
import os
import pathlib
import signal
import subprocess
import sys
import time

import pytest

CLI = [sys.executable, "-m", "capsule_collision.levelcheck"]
FAST = ["--no-png", "--checks", "penetration", "--quiet", "--up", "Z", "--forward", "Y"]


def levelcheck(*args, cwd=None, timeout=600):
    return subprocess.run([*CLI, *map(str, args)], cwd=cwd, capture_output=True, text=True,
                          timeout=timeout)


def _box(lo, hi, base):
    x0, y0, z0 = lo
    x1, y1, z1 = hi
    v = [(x0, y0, z0), (x1, y0, z0), (x1, y1, z0), (x0, y1, z0),
         (x0, y0, z1), (x1, y0, z1), (x1, y1, z1), (x0, y1, z1)]
    f = [(1, 4, 3, 2), (5, 6, 7, 8), (1, 2, 6, 5), (2, 3, 7, 6), (3, 4, 8, 7), (4, 1, 5, 8)]
    return ([f"v {x} {y} {z}" for x, y, z in v],
            ["f " + " ".join(str(i + base) for i in face) for face in f])


def write_level(path: pathlib.Path, capsule_foot, sidecar_name=None, expect="clear"):
    """A floor slab (top at z = 0) and a 4 m crate (x, y in [-2, 2], z in [0, 3]) as one Z-up
    OBJ; a sidecar with one capsule at ``capsule_foot`` expected ``expect``."""
    lines = []
    for name, lo, hi, base in (("Floor", (-10, -10, -1), (10, 10, 0), 0),
                               ("Crate", (-2, -2, 0), (2, 2, 3), 8)):
        v, f = _box(lo, hi, base)
        lines += [f"o {name}", *v, *f]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n")
    sidecar = path.parent / (sidecar_name or (path.stem + ".levelcheck.json"))
    sidecar.write_text(json.dumps({"capsules": [
        {"name": "Spawn", "foot": list(capsule_foot), "expect": expect}]}))
    return path


def _report(out):
    return json.loads((pathlib.Path(out) / "report.json").read_text())


# ------------------------------------------------------------------------ inside is not clear
def test_capsule_inside_a_closed_crate_is_an_error_naming_the_crate_and_the_way_out(tmp_path):
    level = write_level(tmp_path / "crate.obj", (0.0, 0.0, 0.5))
    proc = levelcheck(level, "--out", tmp_path / "out", *FAST)
    assert proc.returncode == 1, proc.stderr
    (capsule,) = _report(tmp_path / "out")["levels"][0]["capsules"]
    assert (capsule["verdict"], capsule["buried"]) == ("penetrating", True)
    assert capsule["penetrating_count"] == 0 and capsule["inside_solid"]["object"] == "Crate"
    (finding,) = [f for f in _report(tmp_path / "out")["levels"][0]["findings"]
                  if f["check"] == "capsule"]
    assert "buried inside the closed solid Crate" in finding["message"]
    assert "move it by (2.350, 0.000, 0.000) m" in finding["message"]
    assert finding["message"] in proc.stdout
    # beside the crate (touching nothing): clear, exit 0
    clear = write_level(tmp_path / "beside.obj", (2.5, 0.0, 0.0))
    assert levelcheck(clear, "--out", tmp_path / "clear", *FAST).returncode == 0


def test_a_spawn_inside_the_crate_floods_nothing_and_says_so(tmp_path):
    level = write_level(tmp_path / "spawn.obj", (6.0, 0.0, 0.0))
    side = json.loads((tmp_path / "spawn.levelcheck.json").read_text())
    side["spawns"] = [[0.0, 0.0, 0.5], [6.0, 6.0, 0.0]]  # the first inside the crate
    (tmp_path / "spawn.levelcheck.json").write_text(json.dumps(side))
    proc = levelcheck(level, "--out", tmp_path / "out", *FAST[:2], "penetration,reachability",
                      *FAST[3:])
    assert proc.returncode == 1, proc.stderr
    lv = _report(tmp_path / "out")["levels"][0]
    (spawn,) = [f for f in lv["findings"] if f["name"] == "spawn 1"]
    assert spawn["severity"] == "error" and spawn["faces"][0]["object"] == "Crate"
    assert "inside the closed solid Crate face" in spawn["message"]
    assert "floods nothing" in spawn["message"] and spawn["message"] in proc.stdout
    assert not [f for f in lv["findings"] if f["name"] == "spawn 2"]
    assert lv["reachability"]["reachable_m2"] > 300  # the floor, flooded from spawn 2 alone


# -------------------------------------------------------------------- keys that cannot collide
def _git_repo(path):
    path.mkdir()
    subprocess.run(["git", "init", "-q", str(path)], check=True)
    return path


def test_subset_run_of_one_of_two_same_named_levels_is_keyed_by_its_repository_path(tmp_path):
    """Two levels named level.obj in a/ and b/ of one repository. The baseline is a run of
    both; b's capsule then moves into the crate. A run of b alone (its folder alone would be
    the old default root, giving the key "level.obj") is keyed b/level.obj: the new error is
    new and fails the gate, never matched against a's findings."""
    repo = _git_repo(tmp_path / "repo")
    a = write_level(repo / "a" / "level.obj", (0.0, 0.0, 0.5))  # a known error
    b = write_level(repo / "b" / "level.obj", (5.0, 0.0, 0.0))  # clear
    assert levelcheck(a, b, "--out", tmp_path / "base", *FAST).returncode == 1
    base = _report(tmp_path / "base")
    assert base["run"]["root"] == os.path.realpath(repo)
    assert [lv["key"] for lv in base["levels"]] == ["a/level.obj", "b/level.obj"]
    write_level(b, (0.0, 0.0, 0.5))  # b now has the same error as a
    proc = levelcheck(b, "--baseline", tmp_path / "base" / "report.json",
                      "--out", tmp_path / "subset", *FAST, cwd=repo / "b")
    assert proc.returncode == 1, proc.stderr
    (level,) = _report(tmp_path / "subset")["levels"]
    assert level["key"] == "b/level.obj"
    assert [f["new"] for f in level["findings"] if f["check"] == "capsule"] == [True]
    # the same run with a baseline of another root, or of none of its levels: exit 2
    proc = levelcheck(b, "--root", repo / "b", "--baseline", tmp_path / "base" / "report.json",
                      "--out", tmp_path / "other_root", *FAST)
    assert proc.returncode == 2 and "make the baseline with the same --root" in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1
    c = write_level(repo / "c" / "level.obj", (5.0, 0.0, 0.0))
    proc = levelcheck(c, "--baseline", tmp_path / "base" / "report.json",
                      "--out", tmp_path / "none", *FAST)
    assert proc.returncode == 2 and "none of this run's levels (c/level.obj)" in proc.stderr
    assert not (tmp_path / "none").exists()


# ------------------------------------------------------------------------ nothing hidden by caps
def write_tiles(path: pathlib.Path, n: int):
    """``n`` floor tiles (objects T0, T1, ..., 3 m square) each under a low slab (C0, ...,
    1.5 m up): one low-headroom finding (a warning) per tile."""
    lines, base = [], 0
    for k in range(n):
        x, y = 3 * (k % 20), 3 * (k // 20)
        for name, lo, hi in ((f"T{k}", (x, y, -0.2), (x + 3, y + 3, 0)),
                             (f"C{k}", (x + 0.75, y + 0.75, 1.5), (x + 2.25, y + 2.25, 1.7))):
            v, f = _box(lo, hi, base)
            lines += [f"o {name}", *v, *f]
            base += 8
    path.write_text("\n".join(lines) + "\n")
    return path


def test_baseline_compares_every_finding_and_lists_the_new_ones_first(tmp_path):
    """110 tiles give 110 headroom findings, past the 100 an audit used to list; a tile added
    last is new (its finding alone), listed first though it sorts last, and fails the gate."""
    level = write_tiles(tmp_path / "yard.obj", 110)
    opts = ["--no-png", "--checks", "headroom", "--quiet", "--up", "Z", "--forward", "Y",
            "--fail-on", "warning"]
    assert levelcheck(level, "--out", tmp_path / "base", *opts).returncode == 1
    base = _report(tmp_path / "base")["levels"][0]["findings"]
    assert len([f for f in base if f["check"] == "headroom"]) == 110
    assert not [f for f in base if f["name"].endswith(": more")]  # every one, no cap
    write_tiles(level, 111)
    proc = levelcheck(level, "--baseline", tmp_path / "base" / "report.json", "--out",
                      tmp_path / "next", *opts)
    assert proc.returncode == 1, proc.stderr  # the new warning fails --fail-on warning
    doc = _report(tmp_path / "next")
    findings = doc["levels"][0]["findings"]
    (new,) = [f for f in findings if f["new"]]
    x, y, _ = new["position"]  # under the new tile T110: x in [30, 33], y in [15, 18]
    assert 30.0 <= x <= 33.0 and 15.0 <= y <= 18.0 and findings[0] == new  # listed first
    assert doc["summary"]["new_findings"] == 1 and doc["summary"]["failing"] == 1


# ------------------------------------------------------------------------------ runs that end
def _slow_levels(folder, n=3):
    return [write_level(folder / f"l{k}.obj", (5.0 + k, 0.0, 0.0)) for k in range(n)]


def _children(pid):
    out = subprocess.run(["ps", "-o", "pid=", "--ppid", str(pid)], capture_output=True,
                         text=True).stdout
    return [int(x) for x in out.split()]


def test_a_killed_worker_fails_the_run_naming_its_level_within_seconds(tmp_path):
    """The workers are killed (SIGKILL, as the out-of-memory killer does) once one has begun
    a level: the run ends within seconds, exit 2, naming the level."""
    levels = _slow_levels(tmp_path / "lv", 6)
    proc = subprocess.Popen([*CLI, *map(str, levels), "--jobs", "2", "--out",
                             str(tmp_path / "out"), "--no-png", "--up", "Z", "--forward", "Y"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    lines = []
    for raw in proc.stderr:  # progress lines: a worker has begun a level
        lines.append(raw.decode(errors="replace"))
        if "check sanity" in lines[-1]:
            break
    workers = [w for w in _children(proc.pid) if "spawn_main" in _cmdline(w)]
    assert len(workers) == 2, lines
    for w in workers:
        os.kill(w, signal.SIGKILL)
    killed = time.monotonic()
    _, err = proc.communicate(timeout=60)
    assert time.monotonic() - killed < 15
    assert proc.returncode == 2, err
    last = err.decode().strip().splitlines()[-1]
    assert last.startswith("levelcheck: error: level ") and "died of SIGKILL" in last
    assert any(str(lv) in last for lv in levels)
    assert not any(_alive(w) for w in workers)
    assert not (tmp_path / "out").exists()


def _cmdline(pid):
    try:
        return pathlib.Path(f"/proc/{pid}/cmdline").read_text()
    except OSError:
        return ""


def _alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return pathlib.Path(f"/proc/{pid}/stat").read_text().split()[2] != "Z"


@pytest.mark.parametrize("jobs", [1, 2])
@pytest.mark.parametrize("sig,code", [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_sigint_and_sigterm_stop_the_workers_and_remove_temporary_folders(tmp_path, sig, code,
                                                                        jobs):
    """The signal arrives while a level is being checked (its progress line seen): the run
    exits 128 + the signal with one line, its workers gone and its temporary folders (the
    work folder, Blender's user folders) removed; only the shared shader cache stays."""
    levels = _slow_levels(tmp_path / "lv", 6)
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    env = dict(os.environ, TMPDIR=str(tmp))
    proc = subprocess.Popen([*CLI, *map(str, levels), "--jobs", str(jobs), "--out",
                             str(tmp_path / "out"), "--no-png", "--up", "Z", "--forward", "Y"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    for raw in proc.stderr:
        if b"check sanity" in raw:
            break
    workers = [w for w in _children(proc.pid) if "spawn_main" in _cmdline(w)]
    assert len(workers) == (2 if jobs == 2 else 0)
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == code, err
    last = err.decode().strip().splitlines()[-1]
    assert last.startswith(f"levelcheck: stopped by {sig.name} (workers stopped")
    assert not any(_alive(w) for w in workers)
    assert sorted(p.name for p in tmp.iterdir()) in ([], ["capsule_collision_cache"])
    assert not (tmp_path / "out").exists()


def test_out_never_keeps_an_earlier_runs_outputs(tmp_path):
    levels = _slow_levels(tmp_path / "lv", 1)
    out = tmp_path / "out"
    assert levelcheck(*levels, "--out", out, *FAST).returncode == 0
    assert (out / "report.json").is_file() and (out / "junit.xml").is_file()
    (out / "notes.txt").write_text("the studio's own file")
    broken = tmp_path / "lv" / "broken.obj"
    broken.write_text("v 0 0 0\nv 1 0 0\nv 0 1 nan\nf 1 2 3\n")
    proc = levelcheck(*levels, broken, "--out", out, *FAST)
    assert proc.returncode == 2
    # exit 2 before any work: the earlier run's outputs are not cleared by a usage error...
    assert (out / "report.json").is_file()
    levels[0].write_text("v 0 0 0\n")  # ...but a run that fails after starting leaves none
    proc = levelcheck(*levels, "--out", out, *FAST)
    assert proc.returncode == 2, proc.stderr
    assert sorted(p.name for p in out.iterdir()) == ["notes.txt"]
    foreign = tmp_path / "foreign"
    foreign.mkdir()
    (foreign / "keep.txt").write_text("x")
    proc = levelcheck(*_slow_levels(tmp_path / "lv2", 1), "--out", foreign, *FAST)
    assert proc.returncode == 2 and "not empty and not a levelcheck output" in proc.stderr
    assert sorted(p.name for p in foreign.iterdir()) == ["keep.txt"]


def test_jobs_is_capped_by_cpus_and_memory_and_says_so(tmp_path):
    levels = _slow_levels(tmp_path / "lv", 2)
    proc = levelcheck(*levels, "--jobs", "64", "--out", tmp_path / "out", *FAST)
    assert proc.returncode == 0, proc.stderr
    line = [x for x in proc.stderr.splitlines() if "--jobs 64 capped to" in x]
    assert line and line[0].startswith("levelcheck: --jobs 64 capped to 2 (")


# --------------------------------------------------------------------- sidecars found or warned
def test_sidecar_by_either_name_and_a_near_miss_warns(tmp_path):
    full = write_level(tmp_path / "full" / "crate.obj", (0.0, 0.0, 0.5),
                       sidecar_name="crate.obj.levelcheck.json")
    proc = levelcheck(full, "--out", tmp_path / "o1", *FAST)
    assert proc.returncode == 1, proc.stderr  # the capsule of crate.obj.levelcheck.json
    assert [c["name"] for c in _report(tmp_path / "o1")["levels"][0]["capsules"]] == ["Spawn"]
    typo = write_level(tmp_path / "typo" / "crate.obj", (0.0, 0.0, 0.5),
                       sidecar_name="crate.levelchek.json")
    (tmp_path / "typo" / "Crate.obj.levelcheck.json").write_text("{}")
    proc = levelcheck(typo, "--out", tmp_path / "o2", *FAST)
    warned = [x for x in proc.stderr.splitlines() if x.startswith("levelcheck: warning:")]
    assert len(warned) == 2 and "crate.levelchek.json is not read" in warned[1]
    assert "Crate.obj.levelcheck.json is not read" in warned[0]
    both = write_level(tmp_path / "both" / "crate.obj", (0.0, 0.0, 0.5))
    (tmp_path / "both" / "crate.obj.levelcheck.json").write_text("{}")
    proc = levelcheck(both, "--out", tmp_path / "o3", *FAST)
    assert proc.returncode == 2 and "two sidecars" in proc.stderr
