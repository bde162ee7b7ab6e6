"""Our walk-through against real engines' characters on the same levels (issue 20).

Writes the lanes of ``tools/engine_lanes.py`` as jobs for the engine peers (Jolt
CharacterVirtual and Rapier KinematicCharacterController run as WebAssembly under node, see
``../shared/peers/engines/README.md``), runs them when node and the npm packages are present,
walks the same lanes with our controller under each model (``exact``, ``jolt``, ``rapier``
presets), and prints, per lane kind, our verdict against each engine's, the distance between
end positions, the agreement rows of the issue's targets, each preset against its own
engine on every lane walked (issue 26: the lanes that differ by name; its flights and wide
gaps are walked with the rest but not timed) and the steps per second of all three in the
same run.

A verdict is ``reached`` (the walk ended standing on walkable ground within ``radius`` of
the goal), ``fell`` (it ended more than ``step_height`` below its start), else ``blocked``.
Ours also names its first event (``step_too_high 0.36`` ...).

    python tools/bench_engines.py [--rates 60] [--kinds riser,gap] [--keep DIR] [--no-engines]

Engines: the runners are found in ``$CAPSULE_ENGINES_RUNNERS`` or ``../shared/peers/engines``
beside the project root, their npm packages in ``$ENGINES_NODE_MODULES`` (the engines
README installs them in /tmp/engines/node_modules); without node or the packages the Jolt
column is skipped with a message (CI has no node) and Rapier runs through its Python
bindings (PyPI ``rapier3d``, in the requirements; ``tools/walk_rapier_py.py``), which the
message names.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass

import numpy as np
from capsule_collision.core.controller import presets
from capsule_collision.core.controller.controller import CharacterController
from capsule_collision.core.controller.settings import ControllerSettings
from capsule_collision.core.mesh.triangle_mesh import TriangleMesh
from capsule_collision.core.walk.walkthrough import walkthrough_many
from engine_lanes import (
    FLIGHT_KINDS,
    KINDS,
    LIMIT_KINDS,
    SPEED,
    issue26_lanes,
    limit_lanes,
    merge,
    other_lanes,
)

try:  # Rapier's Python bindings (requirements.txt): the Rapier column without node
    import walk_rapier_py
except ImportError:  # pragma: no cover - rapier3d is in the requirements
    walk_rapier_py = None

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

ENGINES = ("jolt", "rapier")
MODELS = ("exact", "jolt", "rapier")
LANE_PITCH = 12.0  # metres between the lanes of one job (side by side along y)
END_AGREE = 0.1  # metres: end positions "agree" within this (issue 20's target)
# The character and controller every engine and model walks with (the engines README's).
CHARACTER = dict(radius=0.35, height=1.8, step_height=0.35, max_slope_deg=45.0,
                 speed=SPEED, gravity=9.81, snap_distance=0.4, skin_width=0.02,
                 min_step_depth=0.15)


def runners_dir() -> str:
    return os.environ.get("CAPSULE_ENGINES_RUNNERS",
                          os.path.join(os.path.dirname(ROOT), "shared", "peers", "engines"))


def engines_missing() -> str | None:
    """Why the engines cannot run here (None when they can)."""
    if shutil.which("node") is None:
        return "node is not on PATH"
    nm = os.environ.get("ENGINES_NODE_MODULES")
    if not nm:
        return "ENGINES_NODE_MODULES is not set (see ../shared/peers/engines/README.md)"
    for pkg in ("jolt-physics", os.path.join("@dimforge", "rapier3d-compat")):
        if not os.path.isdir(os.path.join(nm, pkg)):
            return f"{pkg} is not installed in {nm}"
    for eng in ENGINES:
        if not os.path.isfile(os.path.join(runners_dir(), f"walk_{eng}.mjs")):
            return f"walk_{eng}.mjs not found in {runners_dir()} (set CAPSULE_ENGINES_RUNNERS)"
    return None


def model_settings(model: str) -> ControllerSettings:
    """Our settings for CHARACTER under ``model``: the engine's own parameters through its
    preset, or the same numbers as they are (``exact``)."""
    c = CHARACTER
    if model == "jolt":
        return presets.from_jolt(
            mMaxSlopeAngle=np.radians(c["max_slope_deg"]),
            mWalkStairsStepUp=(0.0, c["step_height"], 0.0),
            mStickToFloorStepDown=(0.0, -c["snap_distance"], 0.0),
            mCharacterPadding=c["skin_width"],
            mWalkStairsStepForwardTest=c["min_step_depth"],
            halfHeightOfCylinder=c["height"] / 2 - c["radius"], radius=c["radius"],
            speed=c["speed"], gravity=c["gravity"])
    if model == "rapier":
        return presets.from_rapier(
            radius=c["radius"], half_height=c["height"] / 2 - c["radius"],
            offset=c["skin_width"], max_slope_climb_angle=np.radians(c["max_slope_deg"]),
            autostep_max_height=c["step_height"], autostep_min_width=c["min_step_depth"],
            snap_to_ground=c["snap_distance"], speed=c["speed"], gravity=c["gravity"])
    return ControllerSettings(**c)


# ---------------------------------------------------------------- jobs
@dataclass
class Job:
    """The lanes of one kind laid side by side in one level (LANE_PITCH apart along y)."""

    kind: str
    lanes: list
    vertices: np.ndarray
    triangles: np.ndarray
    starts: np.ndarray  # (L, 3) foot points, metres
    goals: np.ndarray  # (L, 3)


def make_job(kind, lanes) -> Job:
    parts, starts, goals = [], [], []
    for i, lane in enumerate(lanes):
        off = np.array([0.0, i * LANE_PITCH, 0.0])
        parts.append((lane.vertices + off, lane.triangles))
        starts.append(np.add(lane.start, off))
        goals.append(np.add(lane.goal, off))
    v, t = merge(parts)
    return Job(kind, lanes, v, t, np.array(starts), np.array(goals))


def job_doc(job: Job, dt: float) -> dict:
    """``job`` as the engines' job document (walkcommon.mjs), without the level's files."""
    return {"settings": dict(CHARACTER, dt=dt),
            "walks": [{"id": lane.name, "start": list(map(float, s)),
                       "goal": list(map(float, g)), "duration": lane.duration}
                      for lane, s, g in zip(job.lanes, job.starts, job.goals)],
            "stop_at_goal": True}


def write_job(job: Job, folder: str, dt: float) -> str:
    """Write ``job`` as the engines' job format (walkcommon.mjs) into ``folder``; its path."""
    base = os.path.join(folder, job.kind)
    job.vertices.astype("<f8").tofile(base + ".f64")
    job.triangles.astype("<u4").tofile(base + ".u32")
    doc = dict(job_doc(job, dt), vertices=os.path.basename(base) + ".f64",
               triangles=os.path.basename(base) + ".u32")
    with open(base + ".json", "w") as f:
        json.dump(doc, f, indent=1)
    return base + ".json"


def run_rapier_py(job: Job, dt: float) -> dict:
    """Rapier through its Python bindings (tools/walk_rapier_py.py), in this process: the
    runner's output dict (``walks``, ``timing``)."""
    return walk_rapier_py.run(job_doc(job, dt), job.vertices, job.triangles)[0]


def run_engine(engine: str, job_path: str) -> dict:
    """Run one engine's runner on a job; its output JSON (``walks``, ``timing``)."""
    out = job_path[:-5] + f".{engine}.out.json"
    runner = os.path.join(runners_dir(), f"walk_{engine}.mjs")
    proc = subprocess.run(["node", runner, job_path, out], capture_output=True, text=True,
                          env=dict(os.environ), check=False)
    if proc.returncode != 0:
        raise RuntimeError(f"{engine} runner failed: {proc.stderr.strip()[-2000:]}")
    with open(out) as f:
        return json.load(f)


# ---------------------------------------------------------------- verdicts
@dataclass
class Outcome:
    """One walk's verdict ("reached", "blocked", "fell"), end foot (3,), and what we named."""

    verdict: str
    end: np.ndarray
    detail: str = ""


def coarse_verdict(reached: bool, start_z: float, end_z: float, step_height: float) -> str:
    if reached:
        return "reached"
    return "fell" if end_z < start_z - step_height - 1e-3 else "blocked"


def engine_outcomes(job: Job, out: dict) -> list:
    res = []
    for s, w in zip(job.starts, out["walks"]):
        end = np.array(w["end"], float)
        v = coarse_verdict(w["end_reason"] == "goal", s[2], end[2], CHARACTER["step_height"])
        res.append(Outcome(v, end, w["end_reason"]))
    return res


def describe(rep) -> str:
    """Our first event that is not ``reached_goal``/``stuck``, with its value."""
    for e in rep.events:
        if e.kind not in ("reached_goal", "stuck"):
            return e.kind if e.value is None else f"{e.kind} {e.value:.3g}"
    return rep.events[-1].kind if rep.events else ""


def our_outcomes(job: Job, reps, step_height) -> list:
    return [Outcome(coarse_verdict(r.reached_goal, s[2], r.trace[-1, 2], step_height),
                    r.trace[-1].copy(), describe(r)) for s, r in zip(job.starts, reps)]


def walk_ours(job: Job, settings: ControllerSettings, dt: float, single: bool):
    """(reports, frames, seconds): the job's walks batched in one ``walkthrough_many`` call,
    or (``single``) one call per walk."""
    mesh = TriangleMesh(job.vertices, job.triangles)
    paths = [np.array([s, g]) for s, g in zip(job.starts, job.goals)]
    durations = np.array([lane.duration for lane in job.lanes])
    ctrl = CharacterController(mesh, settings)
    walkthrough_many(mesh, paths[:1], settings, dt=dt, max_time=0.05, controller=ctrl)  # warm
    t0 = time.perf_counter()
    if single:
        reps = [walkthrough_many(mesh, [p], settings, dt=dt, max_time=d, controller=ctrl)[0]
                for p, d in zip(paths, durations)]
    else:
        reps = walkthrough_many(mesh, paths, settings, dt=dt, max_time=durations,
                                controller=ctrl)
    sec = time.perf_counter() - t0
    return reps, sum(len(r.trace) - 1 for r in reps), sec


# ---------------------------------------------------------------- the run
def run(kinds, rates, keep=None, engines=True, out=print) -> dict:
    """Walk every lane of ``kinds`` at every rate in ``rates`` (Hz) with our models and, when
    ``engines`` and they can run here, with Jolt and Rapier (WebAssembly under node; without
    node, Rapier through its Python bindings and no Jolt). Returns the results
    ``{rate: {kind: {"lanes", "ours": {model: [Outcome]}, "jolt"/"rapier": [Outcome]}}}``
    and the timing rows under ``"speed"`` (``"rapier"`` is the runner that ran)."""
    missing = engines_missing() if engines else "engines not requested"
    if missing and engines:
        if walk_rapier_py is None:
            out(f"engines skipped: {missing}; rapier3d is not installed either "
                f"(pip install -r requirements.txt)")
        else:
            out(f"engines: {missing}: Jolt skipped, Rapier through its Python bindings "
                f"(PyPI rapier3d {walk_rapier_py.rapier3d.__version__}, "
                f"tools/walk_rapier_py.py)")
            missing = "python"
    elif missing:
        out(f"engines skipped: {missing}")
    folder = keep or tempfile.mkdtemp(prefix="bench_engines_")
    os.makedirs(folder, exist_ok=True)
    lanes = limit_lanes() + other_lanes() + issue26_lanes()
    speed = {k: [0, 0.0] for k in ("batched", "single", *ENGINES)}
    results = {}
    for hz in rates:
        results[hz] = {}
        for kind in kinds:
            job = make_job(kind, [ln for ln in lanes if ln.kind == kind])
            timed = hz == rates[0] and kind not in FLIGHT_KINDS
            results[hz][kind] = _run_job(job, 1.0 / hz, folder, missing, speed, timed)
    timed_kinds = [k for k in kinds if k not in FLIGHT_KINDS]
    if rates and timed_kinds:  # every timed lane in one level and one batch (exact model)
        chosen = [ln for kind in timed_kinds for ln in lanes if ln.kind == kind]
        job = make_job("all", chosen)
        settings = model_settings("exact")
        reps, frames, sec = walk_ours(job, settings, 1.0 / rates[0], single=False)
        verdicts = [o.verdict for o in our_outcomes(job, reps, settings.step_height)]
        per_kind = [o.verdict for kind in timed_kinds
                    for o in results[rates[0]][kind]["ours"]["exact"]]
        speed["one_batch"] = [frames, sec]
        speed["one_batch_same"] = (sum(a == b for a, b in zip(verdicts, per_kind)),
                                   len(verdicts))
    results["speed"] = speed
    if keep is None:
        shutil.rmtree(folder, ignore_errors=True)
    return results


def _run_job(job, dt, folder, missing, speed, timed) -> dict:
    r = {"lanes": job.lanes, "ours": {}}
    for model in MODELS:
        s = model_settings(model)
        reps, frames, sec = walk_ours(job, s, dt, single=False)
        r["ours"][model] = our_outcomes(job, reps, s.step_height)
        if timed and model == "exact":
            speed["batched"][0] += frames
            speed["batched"][1] += sec
            _r, frames1, sec1 = walk_ours(job, s, dt, single=True)
            speed["single"][0] += frames1
            speed["single"][1] += sec1
    if missing == "python":
        speed["rapier_runner"] = "Python rapier3d"
        o = run_rapier_py(job, dt)
        r["rapier"] = engine_outcomes(job, o)
        if timed:
            speed["rapier"][0] += o["timing"]["frames"]
            speed["rapier"][1] += o["timing"]["walk_s"]
    elif not missing:
        sub = os.path.join(folder, f"{round(1.0 / dt)}hz")
        os.makedirs(sub, exist_ok=True)
        path = write_job(job, sub, dt)
        for eng in ENGINES:
            o = run_engine(eng, path)
            r[eng] = engine_outcomes(job, o)
            if timed:
                speed[eng][0] += o["timing"]["frames"]
                speed[eng][1] += o["timing"]["walk_s"]
    return r


# ---------------------------------------------------------------- printing
def agreement(results, model, engine, kinds) -> tuple:
    """(lanes where ``model``'s verdict equals ``engine``'s, lanes, of those the ones whose
    end positions are within END_AGREE, and the largest end distance where verdicts agree)."""
    same = total = close = 0
    worst = 0.0
    for kind in kinds:
        r = results[kind]
        if engine not in r:
            continue
        for o, e in zip(r["ours"][model], r[engine]):
            total += 1
            if o.verdict == e.verdict:
                same += 1
                d = float(np.linalg.norm(o.end - e.end))
                worst = max(worst, d)
                close += d <= END_AGREE
    return same, total, close, worst


def both_against_us(results, model, kinds) -> list:
    """Lanes where Jolt and Rapier agree with each other and ``model`` differs from both."""
    bad = []
    for kind in kinds:
        r = results[kind]
        if not all(e in r for e in ENGINES):
            continue
        for lane, o, j, p in zip(r["lanes"], r["ours"][model], r["jolt"], r["rapier"]):
            if j.verdict == p.verdict != o.verdict:
                bad.append(lane.name)
    return bad


def print_lanes(results, kinds, out=print):
    for kind in kinds:
        r = results[kind]
        out(f"\n### {kind}\n")
        cols = [f"ours ({m})" for m in MODELS] + [e for e in ENGINES if e in r]
        out("| lane | " + " | ".join(cols) + " | end distance (jolt, rapier model) |")
        out("|---" * (len(cols) + 2) + "|")
        for i, lane in enumerate(r["lanes"]):
            cells = [_cell(r["ours"][m][i]) for m in MODELS]
            cells += [_cell(r[e][i], engine=True) for e in ENGINES if e in r]
            dist = [f"{np.linalg.norm(r['ours'][e][i].end - r[e][i].end):.2f}"
                    for e in ENGINES if e in r]
            out(f"| {lane.name} | " + " | ".join(cells) + f" | {', '.join(dist)} |")


def _cell(o: Outcome, engine=False) -> str:
    if engine or o.verdict == "reached" or not o.detail:
        return o.verdict
    return f"{o.verdict} ({o.detail})"


PRESET_TARGET = 0.97  # issue 26: each preset equals its engine's verdict on this share of lanes


def preset_differences(results, model, kinds) -> tuple:
    """Lanes of ``kinds`` where the ``model`` preset and its engine (``model``) differ:
    (lanes compared, [(name, ours, engine's) verdicts differ], [(name, metres) verdicts
    equal, ends farther apart than END_AGREE])."""
    total, verdict, far = 0, [], []
    for kind in kinds:
        r = results[kind]
        if model not in r:
            continue
        for lane, o, e in zip(r["lanes"], r["ours"][model], r[model]):
            total += 1
            if o.verdict != e.verdict:
                verdict.append((lane.name, o.verdict, e.verdict))
            elif float(np.linalg.norm(o.end - e.end)) > END_AGREE:
                far.append((lane.name, float(np.linalg.norm(o.end - e.end))))
    return total, verdict, far


def print_presets(results, rates, out=print):
    """Issue 26's targets on every lane walked: each preset against its own engine, the
    lanes where the verdicts differ and those where they agree but the ends do not."""
    out(f"\n## Each preset against its engine, every lane (target: verdicts equal on "
        f"{PRESET_TARGET:.0%}, ends within {END_AGREE} m where equal)\n")
    out("| rate | preset | lanes | verdicts equal | ends within | verdicts differ | "
        "ends apart (m) |")
    out("|---|---|---|---|---|---|---|")
    for hz in rates:
        kinds = [k for k in results[hz] if k in KINDS]
        for model in ENGINES:
            n, verdict, far = preset_differences(results[hz], model, kinds)
            if not n:
                continue
            same = n - len(verdict)
            out(f"| {hz} Hz | {model} | {n} | {same} ({same / n:.1%}"
                f"{'' if same >= PRESET_TARGET * n else ', below target'}) | "
                f"{same - len(far)} | "
                + "; ".join(f"{name}: {o} / {e}" for name, o, e in verdict) + " | "
                + "; ".join(f"{name} {d:.2f}" for name, d in far) + " |")


def print_summary(results, rates, out=print):
    limit = [k for k in LIMIT_KINDS if k in results[rates[0]]]
    out("\n## Agreement on the limit lanes (verdicts equal; of those, ends within "
        f"{END_AGREE} m; largest end distance)\n")
    out("| rate | model | vs Jolt | vs Rapier | differs from both engines where they agree |")
    out("|---|---|---|---|---|")
    for hz in rates:
        for model in MODELS:
            cells = []
            for eng in ENGINES:
                s, n, c, w = agreement(results[hz], model, eng, limit)
                cells.append(f"{s}/{n} ({c} within, {w:.2f} m)" if n else "n/a")
            bad = both_against_us(results[hz], model, limit)
            out(f"| {hz} Hz | {model} | {cells[0]} | {cells[1]} | {len(bad)} "
                f"{', '.join(bad[:6])}{' ...' if len(bad) > 6 else ''} |")
    print_kinds(results, rates, out)


def print_kinds(results, rates, out=print):
    """Verdicts equal per lane kind: each model against Jolt / Rapier."""
    kinds = [k for k in results[rates[0]] if k in KINDS]
    out("\n## Agreement per lane kind (model: equal to Jolt / equal to Rapier, of lanes)\n")
    out("| rate | kind | " + " | ".join(MODELS) + " |")
    out("|---" * (len(MODELS) + 2) + "|")
    for hz in rates:
        for kind in kinds:
            cells = []
            for model in MODELS:
                got = [agreement(results[hz], model, e, [kind])[:2] for e in ENGINES]
                n = max(t for _, t in got)
                cells.append(" / ".join(f"{s}" if t else "n/a" for s, t in got) + f" of {n}"
                             if n else "n/a")
            out(f"| {hz} Hz | {kind} | " + " | ".join(cells) + " |")


def lip_place(o: Outcome) -> str:
    """Where a ``lips`` walk ended: on the slope it started on, on the lip, or fallen off
    the lip to the floor 20 m below (engine_lanes.lips)."""
    z = float(o.end[2])
    return "below" if z < -10.0 else "slope" if z > 0.5 else "lip"


def print_lips(results, rates, out=print):
    """Issue 20's lips: where each walker ended (slope / lip / below) and at what height."""
    if "lips" not in results[rates[0]]:
        return
    out("\n## Lips: where each walk ended (height of the foot, m; the lip is at 0, the floor "
        "below at -20)\n")
    cols = [f"ours ({m})" for m in MODELS] + list(ENGINES)
    out("| rate | lane | " + " | ".join(cols) + " |")
    out("|---" * (len(cols) + 2) + "|")
    for hz in rates:
        r = results[hz]["lips"]
        for i, lane in enumerate(r["lanes"]):
            cells = [r["ours"][m][i] for m in MODELS] + [r[e][i] for e in ENGINES if e in r]
            out(f"| {hz} Hz | {lane.name} | "
                + " | ".join(f"{lip_place(o)} {o.end[2]:.2f}" for o in cells) + " |")
    out("\n| rate | " + " | ".join(f"{m} model = {e}" for m, e in zip(MODELS[1:], ENGINES))
        + " | exact: on the lip |")
    out("|---|---|---|---|")
    for hz in rates:
        r = results[hz]["lips"]
        n = len(r["lanes"])
        same = [sum(lip_place(a) == lip_place(b) for a, b in zip(r["ours"][m], r[e]))
                if e in r else None for m, e in zip(MODELS[1:], ENGINES)]
        exact = sum(lip_place(o) == "lip" for o in r["ours"]["exact"])
        out(f"| {hz} Hz | " + " | ".join("n/a" if x is None else f"{x}/{n}" for x in same)
            + f" | {exact}/{n} |")


def print_speed(speed, out=print):
    out("\n## Speed (same run, the first rate, every lane but issue 26's walked once)\n")
    out("| walker | frames | seconds | steps/s | ratio to Jolt |")
    out("|---|---|---|---|---|")
    jolt = speed["jolt"][0] / speed["jolt"][1] if speed["jolt"][1] else None
    for k, label in (("batched", "ours, walkthrough_many (exact), one batch per lane kind"),
                     ("one_batch", "ours, walkthrough_many (exact), every lane in one batch "
                                   "(one level)"),
                     ("single", "ours, one walkthrough per lane (exact)"),
                     ("jolt", "Jolt CharacterVirtual (wasm)"),
                     ("rapier", "Rapier KinematicCharacterController "
                                f"({speed.get('rapier_runner', 'wasm')})")):
        frames, sec = speed.get(k, (0, 0.0))
        if not sec:
            continue
        rate = frames / sec
        ratio = f"{rate / jolt:.2f}" if jolt else "n/a"
        out(f"| {label} | {frames} | {sec:.2f} | {rate:,.0f} | {ratio} |")
    if "one_batch_same" in speed:
        same, n = speed["one_batch_same"]
        out(f"\nEvery lane in one batch: {same}/{n} verdicts equal to the batches per kind.")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rates", default="60", help="frame rates, Hz, comma separated")
    ap.add_argument("--kinds", default=",".join(KINDS))
    ap.add_argument("--keep", help="write the jobs and engine outputs into this folder")
    ap.add_argument("--no-engines", action="store_true", help="walk only our models")
    ap.add_argument("--summary", action="store_true", help="no per-lane tables")
    a = ap.parse_args(argv)
    rates = [int(x) for x in a.rates.split(",")]
    kinds = [k for k in a.kinds.split(",") if k]
    unknown = set(kinds) - set(KINDS)
    if unknown:
        ap.error(f"unknown lane kinds {sorted(unknown)}; expected {KINDS}")
    results = run(kinds, rates, a.keep, not a.no_engines)
    for hz in rates:
        if not a.summary:
            print(f"\n## {hz} Hz")
            print_lanes(results[hz], kinds)
    print_summary(results, rates)
    print_presets(results, rates)
    print_lips(results, rates)
    print_speed(results["speed"])
    return 0


if __name__ == "__main__":
    sys.exit(main())
