"""Marking a render-against-collision difference as intended (issue 25, section 4), through
the CLI on a shipped map: am_lavaarena's clip mesh checked against its render mesh (sidecar
``"render"``), its differences (clip a designer placed on purpose) waived in the sidecar by
the identity report.json gives them (check, where, got): the two of the sidecar example in
docs/how-it-works.md ("Marking a difference as intended") and the rest alike (those smaller
than the character's footprint are one info per kind: nothing to waive). The waivers
hold on a re-run (the gate on warnings passes, every difference still listed as waived, no
waiver stale) and against ``--baseline`` (nothing new). The maps are made on first use
(tools/real_levels.py)."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))
import docs_blocks  # noqa: E402
import real_levels  # noqa: E402

CLI = [sys.executable, "-m", "capsule_collision.levelcheck"]
MAP = "am_lavaarena"
REASON = {"reason": "player clip smooths the wall on purpose", "who": "ana"}


def docs_example() -> dict:
    """The sidecar example of docs/how-it-works.md: the json block naming the map's render."""
    (block,) = [b for b in docs_blocks.blocks(ROOT / "docs" / "how-it-works.md")
                if b.language == "json" and f'"render": "{MAP}.obj"' in b.text]
    return json.loads(block.text)


def _level(folder: Path, waivers=()) -> Path:
    """``<map>_clip.obj`` and ``<map>.obj`` linked into ``folder``, with the sidecar: the
    render, the map's spawns, Quake's player and ``waivers``."""
    for stem in (MAP, f"{MAP}_clip"):
        link = folder / f"{stem}.obj"
        if not link.exists():
            link.symlink_to(real_levels.levels_dir() / f"{stem}.obj")
    sidecar = {"render": f"{MAP}.obj",
               "spawns": [[round(x, 4) for x in p] for p in real_levels.load(MAP).spawn_feet],
               "settings": real_levels.QUAKE_PLAYER, "waivers": list(waivers)}
    (folder / f"{MAP}_clip.levelcheck.json").write_text(json.dumps(sidecar))
    return folder / f"{MAP}_clip.obj"


def _check(level, out, *more):
    """levelcheck on ``level`` (the collision_diff check, the gate on warnings): (exit
    status, the level's report, the console)."""
    proc = subprocess.run([*CLI, str(level), "--up", "Z", "--checks", "collision_diff",
                           "--fail-on", "warning", "--no-png", "--out", str(out), *map(str, more)],
                          capture_output=True, text=True, timeout=1800)
    assert proc.returncode in (0, 1), proc.stderr[-2000:]
    doc = json.loads((out / "report.json").read_text())
    jsonschema = pytest.importorskip("jsonschema")
    jsonschema.validate(doc, json.loads((ROOT / "schema" / "report.schema.json").read_text()))
    return proc.returncode, doc, proc.stdout


def _diffs(doc):
    """The differences listed one by one (a place each); the infos counting those smaller
    than the character's footprint are left out (no place to waive)."""
    return [f for f in doc["levels"][0]["findings"]
            if f["check"] == "collision_diff" and f["got"] != "below_min_area"]


def _small(doc):
    """{kind: count} of the infos counting differences smaller than the footprint."""
    return {f["name"].split(":")[0]: f["count"] for f in doc["levels"][0]["findings"]
            if f["check"] == "collision_diff" and f["got"] == "below_min_area"}


def test_waived_differences_of_a_shipped_map_hold_on_a_rerun_and_against_a_baseline(tmp_path):
    level = _level(tmp_path)
    status, first, _ = _check(level, tmp_path / "first")
    found = _diffs(first)
    walls = [f for f in found if f["got"] == "invisible_wall"]
    assert status == 1 and len(walls) >= 1  # player clip: warnings, the gate fails
    assert all(f["where"] is not None and f.get("waived") is None for f in found)
    # 31 invisible walls of 0.04-0.15 m² (render floor 5 cm into the clip) and one cell of
    # reach_differs are smaller than Quake's footprint: an info per kind, never failing
    assert _small(first) == {"invisible_wall": 31, "reach_differs": 1}
    # the designer copies each difference's identity from report.json into the sidecar:
    # the docs' example waives two of them, the same words waive the rest
    example = docs_example()["waivers"]
    assert len(example) == 2 and all(w["check"] == "collision_diff" for w in example)
    named = {(w["got"], tuple(w["where"])) for w in example}
    rest = [{"check": f["check"], "where": f["where"], "got": f["got"], **REASON}
            for f in found if (f["got"], tuple(f["where"])) not in named]
    assert len(rest) == len(found) - 2  # the example names two findings of this run
    _level(tmp_path, example + rest)
    status, again, console = _check(level, tmp_path / "again")
    assert status == 0, console[-2000:]  # nothing but waived differences: the gate passes
    rows = _diffs(again)
    assert [(f["name"], f["got"]) for f in rows] == [(f["name"], f["got"]) for f in found]
    reasons = {(w["got"], tuple(w["where"])): {"reason": w["reason"], "who": w["who"]}
               for w in example}
    assert all(f["waived"] == reasons.get((f["got"], tuple(f["where"])), REASON) for f in rows)
    assert not [f for f in again["levels"][0]["findings"] if f["got"] == "waiver_stale"]
    assert _small(again) == _small(first)
    assert "WAIVED by ana" in console
    # against the first run (before the waivers) as the baseline: nothing new, still waived
    status, third, _ = _check(level, tmp_path / "third", "--baseline",
                              tmp_path / "first" / "report.json")
    assert status == 0 and third["summary"]["new_findings"] == 0
    assert [f["waived"] for f in _diffs(third)] == [f["waived"] for f in rows]

