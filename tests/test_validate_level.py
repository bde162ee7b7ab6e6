"""The main job: tools/validate_level.py on the bundled sample level, as a user runs it."""

import json
import pathlib
import re
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
SPEC = ROOT / "samples" / "sample_level.json"


def _run(*args, cwd):
    return subprocess.run(
        [sys.executable, str(ROOT / "tools" / "validate_level.py"), *map(str, args)],
        cwd=cwd, capture_output=True, text=True, timeout=600,
    )


@pytest.fixture(scope="module")
def sample_report(tmp_path_factory):
    out = tmp_path_factory.mktemp("job") / "report.json"
    proc = _run(SPEC, "--report", out, "--strict", cwd=ROOT)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return json.loads(out.read_text()), proc.stdout


def test_sample_level_meets_every_expectation(sample_report):
    report, stdout = sample_report
    assert report["ok"] is True and report["findings"] == []
    assert "0 finding(s)" in stdout
    assert report["mesh"]["triangles"] == 4282


def test_sample_verdicts(sample_report):
    report, _ = sample_report
    verdicts = {w["name"]: w["verdict"] for w in report["walks"]}
    assert verdicts["stairs_30cm"] == "reached_goal"
    assert verdicts["stairs_45cm"] == "step_too_high"
    assert verdicts["ramp_45deg"] == "reached_goal"  # exactly at the limit is walkable
    assert verdicts["ramp_50deg"] == "slope_too_steep"
    assert verdicts["corridor_90cm"] == "reached_goal"
    assert verdicts["low_ceiling_150cm"] == "ceiling_too_low"
    assert verdicts["thin_wall"] == "blocked"
    walks = {w["name"]: w for w in report["walks"]}
    rise = [e["value"] for e in walks["stairs_45cm"]["events"] if e["kind"] == "step_too_high"]
    assert rise and rise[0] == pytest.approx(0.45, abs=0.02)
    fell = [e["value"] for e in walks["off_the_back_of_30cm_stairs"]["events"]
            if e["kind"] == "fell"]
    assert fell and fell[0] == pytest.approx(1.5, abs=0.05)
    capsules = {c["name"]: c for c in report["capsules"]}
    assert capsules["inside_thin_wall"]["penetrating"] and capsules["inside_thin_wall"]["triangles"]
    assert not capsules["on_top_of_30cm_stairs"]["penetrating"]  # standing exactly on a tread


def test_failed_expectation_exits_1_under_strict_and_0_without(tmp_path):
    spec = json.loads(SPEC.read_text())
    spec["mesh"] = str(SPEC.parent / spec["mesh"])
    spec["paths"] = [p for p in spec["paths"] if p["name"] == "stairs_45cm"]
    spec["paths"][0]["expect"] = "reached_goal"
    spec["capsules"] = []
    path = tmp_path / "spec.json"
    path.write_text(json.dumps(spec))
    strict = _run(path, "--report", tmp_path / "r1.json", "--strict", cwd=tmp_path)
    assert strict.returncode == 1, strict.stdout + strict.stderr
    report = json.loads((tmp_path / "r1.json").read_text())
    assert report["findings"] == [
        {"check": "walk", "name": "stairs_45cm", "expected": "reached_goal", "got": "step_too_high"}
    ]
    lenient = _run(path, "--report", tmp_path / "r2.json", cwd=tmp_path)
    assert lenient.returncode == 0


@pytest.mark.parametrize(
    "content, message",
    [("{not json", "not valid JSON"), ('{"name": "x"}', "'mesh'"),
     ('{"mesh": "missing.obj"}', "missing.obj")],
)
def test_bad_spec_is_a_clear_error_with_exit_2(tmp_path, content, message):
    path = tmp_path / "spec.json"
    path.write_text(content)
    proc = _run(path, "--report", tmp_path / "r.json", cwd=tmp_path)
    assert proc.returncode == 2
    assert message in proc.stderr
    assert not (tmp_path / "r.json").exists()


def test_workers_give_the_same_walks_and_bad_counts_exit_2(sample_report, tmp_path):
    report, _ = sample_report
    proc = _run(SPEC, "--report", tmp_path / "r.json", "--strict", "--workers", "2", cwd=ROOT)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert json.loads((tmp_path / "r.json").read_text())["walks"] == report["walks"]
    proc = _run(SPEC, "--report", tmp_path / "bad.json", "--workers", "0", cwd=ROOT)
    assert proc.returncode == 2 and "workers must be an integer >= 1" in proc.stderr
    assert not (tmp_path / "bad.json").exists()


def test_readme_commands_are_the_ones_ci_and_users_run():
    readme = (ROOT / "README.md").read_text()
    ci = (ROOT / ".ci" / "run").read_text()
    test_cmd = re.search(r"test_command='([^']+)'", ci).group(1)
    blocks = re.findall(r"```\n(.+?)\n```", readme)
    assert blocks[1] == test_cmd, "the README's second command must be CI's test command"
    assert "tools/validate_level.py samples/sample_level.json" in blocks[0]
    assert readme.index(blocks[0]) < readme.index(blocks[1])


def test_frame_rate_check_finds_the_same_verdicts_at_30_60_120_hz(tmp_path):
    spec = json.loads(SPEC.read_text())
    spec["mesh"] = str(SPEC.parent / spec["mesh"])
    keep = {"stairs_30cm", "stairs_45cm", "ramp_50deg", "off_the_back_of_30cm_stairs"}
    spec["paths"] = [p for p in spec["paths"] if p["name"] in keep]
    spec["capsules"] = []
    path = tmp_path / "spec.json"
    path.write_text(json.dumps(spec))
    proc = _run(path, "--report", tmp_path / "r.json", "--strict", "--frame-rates", "30,60,120",
                cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "Frame rates 30/60/120 Hz: same verdicts on all 4 walks" in proc.stdout
    report = json.loads((tmp_path / "r.json").read_text())
    for walk in report["walks"]:
        assert walk["frame_rates"] == {"rates": [30, 60, 120], "consistent": True,
                                       "differences": []}


def test_differing_frame_rate_verdicts_become_findings(monkeypatch):
    from types import SimpleNamespace

    from tools import validate_level

    def differing(mesh, points, settings, rates):
        return SimpleNamespace(rates=tuple(int(r) for r in rates), consistent=False, differences=[
            {"what": "event", "kind": "fell", "present_at": [30], "absent_at": [60, 120]}])

    monkeypatch.setattr(validate_level, "compare_frame_rates", differing)
    spec = json.loads(SPEC.read_text())
    spec["paths"] = [p for p in spec["paths"] if p["name"] == "stairs_30cm"]
    spec["capsules"] = []
    spec_path = SPEC.parent / "sample_level.json"
    monkeypatch.setattr(validate_level, "_load_spec", lambda path: spec)
    report = validate_level.validate(spec_path, frame_rates=(30, 60, 120))
    assert report["ok"] is False
    assert report["findings"] == [{"check": "frame_rate", "name": "stairs_30cm",
                                   "expected": "same verdict at 30/60/120 Hz",
                                   "got": "fell differs"}]
