"""tools/bench.py --quick runs end to end: correctness only (no timing asserts)."""

import pathlib
import subprocess
import sys
import types

import numpy as np
import pytest
from capsule_collision.core.mesh.triangle_mesh import TriangleMesh

from tools import bench, bench_walk


def _flat_square():
    """A flat 40 m square at z = 0: a character walking on it never meets anything."""
    v = np.array([[-20.0, -20.0, 0.0], [20.0, -20.0, 0.0], [20.0, 20.0, 0.0], [-20.0, 20.0, 0.0]])
    return TriangleMesh(v, np.array([[0, 1, 2], [0, 2, 3]]))


@pytest.mark.slow  # over 10 s on the 2-core CI machine
def test_bench_quick_runs_and_agrees_with_brute_force(capsys):
    assert bench.main(["--quick", "--queries", "12"]) == 0
    out = capsys.readouterr().out
    for name in ("stairs_ramps", "terrain_small", "soup_small"):
        assert f"## {name}" in out
    assert "disagreements with brute force (capsules + sweeps) | 0 |" in out


def test_bench_includes_the_walk_rows(monkeypatch, capsys):
    monkeypatch.setattr(bench.bench_walk, "rows",
                        lambda scene, mesh, quick: [("walk-through test row", f"{scene}:{quick}")])
    assert bench.main(["--quick", "--queries", "4", "--scenes", "soup_small"]) == 0
    assert "walk-through test row" in capsys.readouterr().out


@pytest.mark.parametrize("script", ["bench.py", "bench_walk.py", "bench_audits.py",
                                    "bench_reach.py", "bench_engines.py"])
def test_core_tools_run_as_the_readme_runs_them(script):
    """``python tools/<script> --help`` from the repository root, as the README gives it (a
    regression: bench.py imported ``tools.scenes``, which only a test run could find)."""
    root = pathlib.Path(__file__).resolve().parents[2]
    done = subprocess.run([sys.executable, f"tools/{script}", "--help"], cwd=root,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "usage:" in done.stdout


def test_walk_scaling_rows_count_every_characters_frames(monkeypatch):
    mesh = _flat_square()  # every character walks the whole max_time (no goal within reach)
    # a clock read twice per walk: the three walks take 1 s, 3 s and 7 s
    ticks = iter([0.0, 1.0, 10.0, 13.0, 20.0, 27.0])
    monkeypatch.setattr(bench_walk, "time", types.SimpleNamespace(perf_counter=lambda: next(ticks)))
    rows = bench_walk.scaling(mesh, sizes=(2, 4, 8), seconds=0.25, repeats=1)
    assert [r[:3] for r in rows] == [(2, 30, 1.0), (4, 60, 3.0), (8, 120, 7.0)]  # 15 frames each
    assert [r[3] for r in rows] == [1.0 / 15 * 1e3, 3.0 / 15 * 1e3, 7.0 / 15 * 1e3]
    assert np.isnan(rows[0][4])  # no previous size
    assert [r[4] for r in rows[1:]] == [15.0, 15.0]  # (60 - 30) / (3 - 1), (120 - 60) / (7 - 3)


def test_walk_rows_report_the_fastest_of_their_repeats(monkeypatch):
    mesh = _flat_square()
    _rate, steps1, calls1, _reps = bench_walk.measure(mesh, 2, 2.0, seed=1, repeats=1)
    ticks = iter([0.0, 5.0, 10.0, 12.0, 20.0, 27.0])  # three walks: 5 s, 2 s, 7 s
    monkeypatch.setattr(bench_walk, "time", types.SimpleNamespace(perf_counter=lambda: next(ticks)))
    rate, steps, calls, reps = bench_walk.measure(mesh, 2, 2.0, seed=1, repeats=3)
    assert len(reps) == 2 and steps == sum(len(r.trace) - 1 for r in reps) == steps1 > 0
    assert rate == steps / 2.0
    assert calls == calls1 > 0  # one walk's mesh calls, not the three walks' sum


def test_blocked_vs_open_row_walks_both_characters():
    (rate_o, calls_o, rep_o), (rate_b, calls_b, rep_b) = bench_walk.blocked_vs_open(repeats=1)
    assert rep_o.reached_goal and rep_o.kinds() == ["reached_goal"]
    assert not rep_b.reached_goal and rep_b.kinds() == ["blocked", "stuck"]
    assert rate_o > 0 and rate_b > 0
    assert calls_o < 1.1 and calls_b < 2.5  # mesh calls per step
