"""Findings on the shipped maps: how many a designer is asked to look at, per check.

On the four OpenArena maps (``tools/real_levels.py``: the clip meshes, Z up, metres, and the
maps' own spawn feet) with Quake's player (``real_levels.QUAKE_PLAYER``), every default check
runs through ``core``'s level report (what ``levelcheck`` lists: the same rule counts the
panel, report.json, JUnit and report.png). One row per map: warnings per check (stand,
headroom, stairs, islands, traps), the audit and reachability warnings together (issue 24's
budget: at most 40 a map), the infos (ledges, the one "out of reach" row per audit, unseen
islands) and the seconds of the whole run (wall; under load on a shared machine it says
little, see docs/benchmarks.md).

Usage:  CC_REAL_LEVELS=/path/to/levels python tools/bench_findings.py [MAP ...]
"""

from __future__ import annotations

import collections
import sys
import time

import real_levels
from capsule_collision.core import ControllerSettings, TriangleMesh
from capsule_collision.core.checks.report import level_report, run_checks

BUDGET = 40  # audit and reachability warnings a map (issue 24, "Done when")
COUNTED = ("stand", "headroom", "stairs", "islands", "traps")


def count(name: str) -> dict:
    """{check/severity: findings} and the seconds of one map's run."""
    level = real_levels.load(name, clip=True)
    mesh = TriangleMesh(level.vertices, level.triangles)
    settings = ControllerSettings(**real_levels.QUAKE_PLAYER)
    t0 = time.perf_counter()
    report = level_report(run_checks(mesh, settings, spawns=level.spawn_feet), level=name)
    seconds = time.perf_counter() - t0
    counts = collections.Counter((f["check"], f["severity"]) for f in report["findings"])
    return {"counts": counts, "seconds": seconds, "triangles": len(level.triangles)}


def main(argv) -> int:
    names = argv or list(real_levels.MAPS)
    head = ["map", "tris"] + list(COUNTED) + ["warnings", "infos", "s"]
    print(" | ".join(head))
    print(" | ".join("---" for _ in head))
    over = 0
    for name in names:
        row = count(name)
        c = row["counts"]
        warnings = [c[(k, "warning")] for k in COUNTED]
        total = sum(warnings)
        infos = sum(n for (_, sev), n in c.items() if sev == "info")
        over += total > BUDGET
        print(" | ".join([name, str(row["triangles"])] + [str(n) for n in warnings]
                         + [str(total), str(infos), f"{row['seconds']:.0f}"]), flush=True)
    print(f"\nbudget: at most {BUDGET} audit and reachability warnings a map; "
          f"{over} map(s) over it")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
