"""tools/bench.py --quick runs end to end: correctness only (no timing asserts)."""

import sys
import types

from tools import bench


def test_bench_quick_runs_and_agrees_with_brute_force(capsys):
    assert bench.main(["--quick", "--queries", "12"]) == 0
    out = capsys.readouterr().out
    for name in ("stairs_ramps", "terrain_small", "soup_small"):
        assert f"## {name}" in out
    assert "disagreements with brute force (capsules + sweeps) | 0 |" in out


def test_bench_includes_optional_walk_rows(monkeypatch, capsys):
    fake = types.ModuleType("tools.bench_walk")
    fake.rows = lambda scene, mesh, quick: [("walk-through test row", f"{scene}:{quick}")]
    monkeypatch.setitem(sys.modules, "tools.bench_walk", fake)
    assert bench.main(["--quick", "--queries", "4", "--scenes", "soup_small"]) == 0
    assert "walk-through test row" in capsys.readouterr().out
