"""levelcheck's gate parts without Blender (issue 27): how many workers --jobs gets, which
sidecar a level has, what an earlier run's --out loses, whether a baseline fits the run."""

import json
from types import SimpleNamespace

import pytest
from capsule_collision.levelcheck import run
from capsule_collision.levelcheck.arguments import baseline_fits
from capsule_collision.levelcheck.levels import UsageError, default_root, find_sidecar
from capsule_collision.levelcheck.outputs import OutputError, clear_previous

GB = 2**30


def _levels(tmp_path, n, size=1000):
    out = []
    for k in range(n):
        path = tmp_path / f"l{k}.obj"
        path.write_bytes(b"v 0 0 0\n" * (size // 8))
        out.append(SimpleNamespace(path=str(path)))
    return out


def test_jobs_capped_by_levels_cpus_and_memory_and_said(tmp_path, monkeypatch):
    said = []
    monkeypatch.setattr(run, "available_cpus", lambda: 8)
    monkeypatch.setattr(run, "available_memory", lambda: 64 * GB)
    assert run.worker_count(4, _levels(tmp_path, 10), said.append) == 4 and said == []
    assert run.worker_count(16, _levels(tmp_path, 10), said.append) == 8
    assert said == ["levelcheck: --jobs 16 capped to 8 (CPUs)"]
    # 2 GB free, a 10 MB level: 0.6 GB + 1 GB a worker -> one worker
    monkeypatch.setattr(run, "available_memory", lambda: 2 * GB)
    big = _levels(tmp_path, 3, size=10 * 2**20)
    assert run.worker_count(3, big, said.append) == 1
    assert said[-1] == "levelcheck: --jobs 3 capped to 1 (2.0 GB available at ~1.6 GB a worker)"
    monkeypatch.setattr(run, "available_memory", lambda: None)  # unknown: CPUs and levels
    assert run.worker_count(5, _levels(tmp_path, 2), said.append) == 2


def test_sidecar_by_either_name_both_refused_near_misses_warned(tmp_path):
    level = tmp_path / "castle.obj"
    level.write_text("v 0 0 0\n")
    warned = []
    assert find_sidecar(str(level), warned.append) is None
    (tmp_path / "castle.obj.levelcheck.json").write_text("{}")
    assert find_sidecar(str(level), warned.append).endswith("castle.obj.levelcheck.json")
    (tmp_path / "castle.levelcheck.json").write_text("{}")
    with pytest.raises(UsageError, match="two sidecars"):
        find_sidecar(str(level), warned.append)
    (tmp_path / "castle.obj.levelcheck.json").unlink()
    assert warned == []
    for near in ("castle.levelchek.json", "Castle.levelcheck.json", "castle.levelcheck.jsn"):
        (tmp_path / near).write_text("{}")
    # another level's sidecar beside it is no near miss
    (tmp_path / "castle2.obj").write_text("v 0 0 0\n")
    (tmp_path / "castle2.levelcheck.json").write_text("{}")
    assert find_sidecar(str(level), warned.append).endswith("castle.levelcheck.json")
    assert [w.split(": ")[3].split(" is")[0] for w in warned] == [
        "Castle.levelcheck.json", "castle.levelcheck.jsn", "castle.levelchek.json"]


def test_clear_previous_removes_levelchecks_files_only_and_refuses_a_foreign_folder(tmp_path):
    out = tmp_path / "out"
    assert clear_previous(str(out)) == []  # no folder yet
    out.mkdir()
    assert clear_previous(str(out)) == []  # empty
    (out / "report.json").write_text(json.dumps({"format": "capsule_collision.levelcheck"}))
    for name in ("junit.xml", "report-0-a.png", "finding-0-1.png", "a.levelcheck.blend",
                 ".levelcheck-x1", "notes.txt"):
        (out / name).write_text("x")
    assert sorted(clear_previous(str(out))) == sorted([
        ".levelcheck-x1", "a.levelcheck.blend", "finding-0-1.png", "junit.xml",
        "report-0-a.png", "report.json"])
    assert sorted(p.name for p in out.iterdir()) == ["notes.txt"]
    with pytest.raises(OutputError, match="not empty and not a levelcheck output"):
        clear_previous(str(out))  # only notes.txt left: not levelcheck's


def test_baseline_must_share_the_root_and_some_level():
    doc = {"run": {"root": "/repo"}, "levels": [{"key": "a/level.obj"}]}
    baseline_fits(doc, "/repo", ["a/level.obj", "b/new.obj"], "base.json")
    with pytest.raises(UsageError, match="has root /repo, but this run's level keys are "
                                         "relative to /repo/b"):
        baseline_fits(doc, "/repo/b", ["level.obj"], "base.json")
    with pytest.raises(UsageError, match="records no root"):
        baseline_fits({"levels": doc["levels"]}, "/repo", ["a/level.obj"], "base.json")
    with pytest.raises(UsageError, match=r"none of this run's levels \(c/level.obj\)"):
        baseline_fits(doc, "/repo", ["c/level.obj"], "base.json")


def test_default_root_is_the_git_top_level_else_the_common_folder(tmp_path):
    import subprocess  # noqa: PLC0415

    plain = tmp_path / "plain" / "a"
    plain.mkdir(parents=True)
    assert default_root([str(plain / "x.obj")]) == str(plain.resolve())
    repo = tmp_path / "repo"
    (repo / "levels" / "a").mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    assert default_root([str(repo / "levels" / "a" / "x.obj")]) == str(repo.resolve())
