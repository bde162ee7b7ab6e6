"""Issue 24 through the installed extension and the CLI: spawns placed wrong (section 5: a
spawn inside a wall is a reachability warning naming it, one above the floor falls to it
and an info says how far) and what one setting changed alone opens (section 3: "with max
slope 50 deg (now 45 deg): 1 island is reached"), shown where the islands are summarised:
the panel's Reachability row and the CLI's reachability line and report.json.

The level: a 12 x 8 m floor and a 1 m platform (x in [7, 10], y in [2, 6]) whose only way up
is a 49.6 degree ramp (too steep for the 45 degree character), and a wall (x in [1, 1.5]).
"""

import json
import math
import pathlib
import subprocess
import sys

import numpy as np
import ops_scenes as S
from scenes import box, grid, merge

CLI = [sys.executable, "-m", "capsule_collision.levelcheck"]
SLOPE_WORDS = "with max slope 50 deg (now 45 deg): 1 island is reached"


def _wedge(x0, x1, y0, y1, z1):
    """Closed wedge rising along +x from the floor at x0 to height z1 at x1."""
    v = [[x0, y0, 0], [x1, y0, 0], [x1, y1, 0], [x0, y1, 0], [x1, y0, z1], [x1, y1, z1]]
    t = [[0, 2, 1], [0, 3, 2], [0, 4, 5], [0, 5, 3], [1, 2, 5], [1, 5, 4], [0, 1, 4],
         [3, 5, 2]]
    return np.array(v, float), np.array(t)


def _level():
    run = 1.0 / math.tan(math.radians(49.6))
    return merge([grid(0, 12, 0, 8), box((7, 2, 0), (10, 6, 1.0)), _wedge(7 - run, 7, 3, 5, 1.0),
                  box((1.0, 0.0, 0.0), (1.5, 8.0, 3.0))])


def test_panel_says_which_max_slope_reaches_the_platform_and_lists_spawns_placed_wrong(
        scene, bpy_module):
    bpy = bpy_module
    scene.capsule_collision.live_check = False
    v, t = _level()
    S.mesh_object(bpy, "Level", v, t)
    for name, foot in (("Start", (4.0, 4.0, 0.0)), ("Walled", (0.8, 4.0, 0.0)),
                       ("High", (4.0, 6.0, 0.61))):
        S.capsule(bpy, name, foot).capsule_collision.spawn = True
    bpy.context.view_layer.update()
    assert bpy.ops.capsule_collision.reachability() == {"FINISHED"}
    rows = scene.capsule_collision.results
    (summary,) = [r for r in rows if r.kind == "REACHABILITY"]
    assert "; " + SLOPE_WORDS in summary.label, summary.label
    spawns = {r.finding: r for r in rows if r.kind == "SPAWN"}
    assert set(spawns) == {"Walled", "High"}, [r.label for r in rows]
    assert spawns["Walled"].severity == "WARNING" and spawns["Walled"].object == "Level"
    assert "spawn Walled at (0.80, 4.00, 0.00) is inside a wall" in spawns["Walled"].label
    assert spawns["High"].severity == "INFO"
    assert "is 0.61 m above the floor: it falls to the floor below" in spawns["High"].label


def _write_obj(path: pathlib.Path):
    v, t = _level()
    lines = ["o Level"] + [f"v {x} {y} {z}" for x, y, z in v]
    lines += ["f " + " ".join(str(i + 1) for i in tri) for tri in t]
    path.write_text("\n".join(lines) + "\n")
    (path.parent / (path.stem + ".levelcheck.json")).write_text(json.dumps(
        {"spawns": [[4.0, 4.0, 0.0], [0.8, 4.0, 0.0], [4.0, 6.0, 0.61]]}))


def test_cli_lists_the_spawns_placed_wrong_and_says_which_max_slope_reaches_it(tmp_path):
    level = tmp_path / "ramp.obj"
    _write_obj(level)
    out = tmp_path / "out"
    proc = subprocess.run([*CLI, str(level), "--out", str(out), "--no-png", "--checks",
                           "reachability", "--up", "Z", "--forward", "Y"],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr  # warnings and infos: the gate fails on errors
    lv = json.loads((out / "report.json").read_text())["levels"][0]
    assert lv["reachability"]["what_if"] == [SLOPE_WORDS]
    assert SLOPE_WORDS in proc.stdout  # on the reachability line
    spawns = {f["name"]: f for f in lv["findings"] if f["check"] == "spawns"}
    assert {n: (f["severity"], f["got"]) for n, f in spawns.items()} == {
        "spawn 2": ("warning", "in_wall"), "spawn 3": ("info", "falls")}
    assert "spawn spawn 2 at (0.80, 4.00, 0.00) is inside a wall" in spawns["spawn 2"]["message"]
    assert spawns["spawn 2"]["faces"][0]["object"] == "Level"
    assert spawns["spawn 2"]["message"] in proc.stdout
    junit = (out / "junit.xml").read_text()
    assert "is inside a wall" in junit and "is 0.61 m above the floor" in junit
