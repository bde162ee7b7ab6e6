"""Findings on the shipped maps: how many a designer is asked to look at, per check.

On the four OpenArena maps (``tools/real_levels.py``: the clip meshes, Z up, metres, and the
maps' own spawn feet) with Quake's player (``real_levels.QUAKE_PLAYER``: it jumps), every
default check runs through ``core``'s level report (what ``levelcheck`` lists: the same rule
counts the panel, report.json, JUnit and report.png). One row per map: warnings per check
(stand, headroom, stairs, islands, traps), the audit and reachability warnings together
(issue 24's budget: at most 40 a map), the infos (ledges, the one "out of reach" row per
audit, unseen islands, those below the minimum area), the spawns that flood nothing, and the
seconds of the run: wall and CPU of this process (under load the CPU seconds say more).

``--cli`` runs each map end to end through the CLI instead, as a studio would (a subprocess
``python -m capsule_collision.levelcheck MAP_clip.obj`` with a sidecar holding ``"up": "Z"``,
Quake's player and the spawns; pictures included): the counts are report.json's, the
seconds the subprocess's wall and CPU (its children's user + system time), issue 24's budget
being 60 s a map.

Usage:  CC_REAL_LEVELS=/path/to/levels python tools/bench_findings.py [--cli] [MAP ...]
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import pathlib
import resource
import subprocess
import sys
import tempfile
import time

import real_levels
from capsule_collision.core import ControllerSettings, TriangleMesh
from capsule_collision.core.checks.report import level_report, run_checks

BUDGET = 40  # audit and reachability warnings a map (issue 24, "Done when")
SECONDS = 60  # a map end to end through the CLI (issue 24, "Done when")
COUNTED = ("stand", "headroom", "stairs", "islands", "traps")


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def in_core(name: str) -> dict:
    """{check/severity: findings}, the spawns flooding nothing and the seconds of one map's
    run through core."""
    level = real_levels.load(name, clip=True)
    mesh = TriangleMesh(level.vertices, level.triangles)
    settings = ControllerSettings(**real_levels.QUAKE_PLAYER)
    t0, c0 = time.perf_counter(), time.process_time()
    res = run_checks(mesh, settings, spawns=level.spawn_feet)
    report = level_report(res, level=name)
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    counts = collections.Counter((f["check"], f["severity"]) for f in report["findings"])
    lost = int((res.reach.result.spawn_cells < 0).sum())
    return {"counts": counts, "wall": wall, "cpu": cpu, "triangles": len(level.triangles),
            "lost": lost}


def through_cli(name: str) -> dict:
    """``in_core``'s answer for one map run end to end by ``levelcheck`` (module docstring)."""
    level = real_levels.load(name, clip=True)
    with tempfile.TemporaryDirectory() as tmp:
        spec = pathlib.Path(tmp) / "map.levelcheck.json"
        spec.write_text(json.dumps({"up": "Z", "settings": real_levels.QUAKE_PLAYER,
                                    "spawns": level.spawn_feet.tolist()}))
        out = pathlib.Path(tmp) / "out"
        command = [sys.executable, "-m", "capsule_collision.levelcheck", str(level.obj),
                   "--spec", str(spec), "--out", str(out), "--quiet"]
        t0, c0 = time.perf_counter(), _children_cpu()
        proc = subprocess.run(command, capture_output=True, text=True, env=os.environ)
        wall, cpu = time.perf_counter() - t0, _children_cpu() - c0
        if proc.returncode not in (0, 1):
            raise RuntimeError(f"levelcheck {name}: exit {proc.returncode}\n{proc.stderr}")
        (lv,) = json.loads((out / "report.json").read_text())["levels"]
    counts = collections.Counter((f["check"], f["severity"]) for f in lv["findings"])
    lost = int(lv["reachability"]["spawns_on_no_floor"])
    return {"counts": counts, "wall": wall, "cpu": cpu, "triangles": len(level.triangles),
            "lost": lost}


def main(argv) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--cli", action="store_true", help="end to end through levelcheck")
    p.add_argument("maps", nargs="*", default=list(real_levels.MAPS))
    args = p.parse_args(argv)
    head = (["map", "tris"] + list(COUNTED)
            + ["warnings", "infos", "spawns lost", "wall s", "CPU s"])
    print(" | ".join(head))
    print(" | ".join("---" for _ in head))
    over = slow = 0
    for name in args.maps:
        row = through_cli(name) if args.cli else in_core(name)
        c = row["counts"]
        warnings = [c[(k, "warning")] for k in COUNTED]
        total = sum(warnings)
        infos = sum(n for (_, sev), n in c.items() if sev == "info")
        over += total > BUDGET or row["lost"] > 0
        slow += row["wall"] > SECONDS
        print(" | ".join([name, str(row["triangles"])] + [str(n) for n in warnings]
                         + [str(total), str(infos), str(row["lost"]), f"{row['wall']:.0f}",
                            f"{row['cpu']:.0f}"]), flush=True)
    with open("/proc/loadavg") as f:
        load = f.read().split()[0]
    print(f"\nbudget: at most {BUDGET} audit and reachability warnings a map and no spawn "
          f"lost: {over} map(s) over it; {SECONDS} s a map end to end: {slow} map(s) over "
          f"it by the wall clock (load average {load})")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
