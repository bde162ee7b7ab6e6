"""Export Report on a shipped map: what the panel holds, written without running the checks.

On an OpenArena map (``tools/real_levels.py``: the clip mesh, Z up, metres, with the map's
own spawns as capsules marked Spawn) with Quake's player, the panel's checks run through the
extension's operators (the four audits and Reachability), then Export Report writes them. One
row per map: the seconds of the checks, of Export Report, and of re-running the checks as the
old Export Report did (``core.checks.report.run_checks`` and ``level_report`` on the level
the extension read, as the CLI reads a scene); the findings by severity in the panel
(``results.severity_counts``), in the exported report and in the run's report (the audits'
and reachability's findings: the CLI's). The three must agree. Wall-clock seconds on a
shared machine say little: compare within one run.

Usage:  CC_REAL_LEVELS=/path/to/levels python tools/bench_export.py [MAP ...]
"""

from __future__ import annotations

import argparse
import collections
import json
import sys
import tempfile
import time

import real_levels
from capsule_collision import core
from capsule_collision.levelcheck import session

CHECKED = ("stand", "stairs", "headroom", "ledges", "islands", "traps")
SEVERITIES = ("error", "warning", "info")


def build(bpy, level) -> None:
    """The map as one mesh object, Quake's player, a capsule marked Spawn at each spawn."""
    bpy.ops.wm.read_homefile(use_empty=True)
    scene = bpy.context.scene
    s = scene.capsule_collision
    s.live_check = False
    for key, value in real_levels.QUAKE_PLAYER.items():
        setattr(s, key, value)
    me = bpy.data.meshes.new(level.name)
    me.from_pydata(level.vertices.tolist(), [], level.triangles.tolist())
    me.update()
    scene.collection.objects.link(bpy.data.objects.new(level.name, me))
    for k, foot in enumerate(level.spawn_feet):
        ob = bpy.data.objects.new(f"Spawn.{k:03d}", None)
        ob.location = tuple(float(x) for x in foot)
        st = ob.capsule_collision
        st.role, st.spawn = "CAPSULE", True
        st.radius = real_levels.QUAKE_PLAYER["radius"]
        st.height = real_levels.QUAKE_PLAYER["height"]
        scene.collection.objects.link(ob)
    bpy.context.view_layer.update()


def by_severity(findings) -> dict:
    counts = collections.Counter(f["severity"] for f in findings if f["check"] in CHECKED)
    return {s: counts.get(s, 0) for s in SEVERITIES}


def measure(bpy, results, cache, name: str) -> dict:
    level = real_levels.load(name, clip=True)
    build(bpy, level)
    ops = bpy.ops.capsule_collision
    t0 = time.perf_counter()
    for op in (ops.stand_test, ops.stair_audit, ops.headroom_audit, ops.ledge_audit,
               ops.reachability):
        op()
    checks = time.perf_counter() - t0
    with tempfile.TemporaryDirectory() as tmp:
        path = f"{tmp}/report.json"
        t0 = time.perf_counter()
        assert ops.export_report(filepath=path) == {"FINISHED"}
        export = time.perf_counter() - t0
        with open(path, encoding="utf-8") as f:
            exported = json.load(f)
    panel = results.severity_counts(bpy.context.scene)
    settings = core.ControllerSettings(**real_levels.QUAKE_PLAYER)
    t0 = time.perf_counter()
    read = cache.cached_level(bpy.context.evaluated_depsgraph_get(), bpy.context.scene)
    run = core.report.run_checks(read.mesh, settings, spawns=level.spawn_feet,
                                 checks=("stand", "stairs", "headroom", "ledges",
                                         "reachability"))
    ran = core.report.level_report(run, level=name)
    rerun = time.perf_counter() - t0
    return {"triangles": len(level.triangles), "checks": checks, "export": export,
            "rerun": rerun, "panel": {s: panel[s] for s in SEVERITIES},
            "exported": exported["summary"]["by_severity"],
            "cli": by_severity(ran["findings"])}


def main(argv) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("maps", nargs="*", metavar="MAP", help=f"maps (default "
                        f"am_lavaarena): {', '.join(real_levels.MAPS)}")
    names = parser.parse_args(argv).maps or ["am_lavaarena"]
    unknown = [n for n in names if n not in real_levels.MAPS]
    if unknown:
        parser.error(f"unknown map {unknown[0]!r}; known: {', '.join(real_levels.MAPS)}")
    if not real_levels.available():
        print("set CC_REAL_LEVELS to the folder of the real levels (or run make_levels.sh)")
        return 2
    bpy = session.start()  # the extension registered from the package
    from capsule_collision.addon import cache, results  # noqa: PLC0415  (after bpy)
    print("| map | triangles | checks s | Export Report s | re-run s | panel e/w/i "
          "| exported e/w/i | CLI e/w/i |")
    print("|---|---:|---:|---:|---:|---|---|---|")
    agree = True
    for name in names:
        m = measure(bpy, results, cache, name)

        def ewi(c):
            return "/".join(str(c[s]) for s in SEVERITIES)

        agree &= m["panel"] == m["exported"] == m["cli"]
        print(f"| {name} | {m['triangles']} | {m['checks']:.1f} | {m['export']:.2f} "
              f"| {m['rerun']:.1f} | {ewi(m['panel'])} | {ewi(m['exported'])} "
              f"| {ewi(m['cli'])} |", flush=True)
    return 0 if agree else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
