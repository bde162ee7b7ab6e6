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

Ends are compared after the same walk for every walker (issue 26, the lead's decision of
2026-11-29): every walker (Jolt, Rapier, each of our models) walks each lane's whole
``duration`` (the engines' ``stop_at_goal: false``, our ``walkthrough_many(...,
stop_early=False)``), so a reached walk ends on the goal itself (its last frame shortened to
land there) and a blocked one where it is held after the same time. Before, a walk stopped
on the first frame within ``radius`` of the goal (0.13 m apart at 30 Hz) and ours also when
``stuck``; ``--stop-at-goal`` walks that way again.

A verdict is ``reached`` (the walk ended standing on walkable ground within ``radius`` of
the goal), ``fell`` (it ended more than ``step_height`` below its start), else ``blocked``.
Ours also names its first event (``step_too_high 0.36`` ...).

    python tools/bench_engines.py [--rates 60] [--kinds riser,gap] [--keep DIR [--reuse]]
        [--no-engines] [--no-timing] [--stop-at-goal] [--copies N [--copy-shift start]]

``--copies N`` also walks each engine on N copies of every lane in one level (copy k in its
own place, moved by k / N of a frame's stride: the whole copy, or with ``--copy-shift
start`` only its start, which moves the frame's phase at every edge) and prints, per lane
where a preset's verdict equals its engine's (the usual single copy), the engine's own end
spread over its copies and the preset's distance to the nearest copy's end, and per rate
how many of the lanes whose ends are more than 0.1 m apart are within the engine's spread.

Engines: the runners are found in ``$CAPSULE_ENGINES_RUNNERS`` or ``../shared/peers/engines``
beside the project root, their npm packages in ``$ENGINES_NODE_MODULES`` (the engines
README installs them in /tmp/engines/node_modules); without node or the packages the Jolt
column is skipped with a message (CI has no node) and Rapier runs through its Python
bindings (PyPI ``rapier3d``, in the requirements; ``tools/walk_rapier_py.py``), which the
message names.
"""

from __future__ import annotations

import argparse
import contextlib
import fcntl
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
    SPEED,
    issue26_lanes,
    limit_lanes,
    merge,
    other_lanes,
)
from engine_tables import (
    ENGINES,
    MODELS,
    print_lanes,
    print_lips,
    print_presets,
    print_speed,
    print_spread,
    print_summary,
)

try:  # Rapier's Python bindings (requirements.txt): the Rapier column without node
    import walk_rapier_py
except ImportError:  # pragma: no cover - rapier3d is in the requirements
    walk_rapier_py = None

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

LANE_PITCH = 12.0  # metres between the lanes of one job (side by side along y)
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


def job_doc(job: Job, dt: float, stop_at_goal: bool = False) -> dict:
    """``job`` as the engines' job document (walkcommon.mjs), without the level's files;
    every walk runs its whole duration unless ``stop_at_goal``."""
    return {"settings": dict(CHARACTER, dt=dt),
            "walks": [{"id": lane.name, "start": list(map(float, s)),
                       "goal": list(map(float, g)), "duration": lane.duration}
                      for lane, s, g in zip(job.lanes, job.starts, job.goals)],
            "stop_at_goal": stop_at_goal}


def write_job(job: Job, folder: str, dt: float, stop_at_goal: bool = False) -> tuple:
    """Write ``job`` as the engines' job format (walkcommon.mjs) into ``folder``: (its path,
    whether the same job was there already: same document, same level files)."""
    base = os.path.join(folder, job.kind)
    doc = dict(job_doc(job, dt, stop_at_goal), vertices=os.path.basename(base) + ".f64",
               triangles=os.path.basename(base) + ".u32")
    text = json.dumps(doc, indent=1)
    v, t = job.vertices.astype("<f8").tobytes(), job.triangles.astype("<u4").tobytes()
    files = ((".json", text.encode()), (".f64", v), (".u32", t))
    same = all(_holds(base + ext, data) for ext, data in files)
    for ext, data in files:
        with open(base + ext, "wb") as f:
            f.write(data)
    return base + ".json", same


def _holds(path: str, data: bytes) -> bool:
    """Whether the file ``path`` exists and holds exactly ``data``."""
    if not os.path.isfile(path):
        return False
    with open(path, "rb") as f:
        return f.read() == data


def run_rapier_py(job: Job, dt: float, stop_at_goal: bool = False) -> dict:
    """Rapier through its Python bindings (tools/walk_rapier_py.py), in this process: the
    runner's output dict (``walks``, ``timing``)."""
    return walk_rapier_py.run(job_doc(job, dt, stop_at_goal), job.vertices, job.triangles)[0]


def run_engine(engine: str, job_path: str, reuse: bool = False) -> dict:
    """Run one engine's runner on a job; its output JSON (``walks``, ``timing``). With
    ``reuse``, an output the runner wrote earlier for this job file is read instead."""
    out = job_path[:-5] + f".{engine}.out.json"
    if reuse and os.path.isfile(out):
        with open(out) as f:
            return json.load(f)
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
    """The engine's verdicts: reached is standing on walkable ground within radius of the
    goal at the walk's end (the runners' own stop, ``end_reason`` "goal", is the same rule)."""
    res = []
    for s, g, w in zip(job.starts, job.goals, out["walks"]):
        end = np.array(w["end"], float)
        at_goal = w["grounded_end"] and np.hypot(*(end - g)[:2]) <= CHARACTER["radius"]
        v = coarse_verdict(w["end_reason"] == "goal" or bool(at_goal), s[2], end[2],
                           CHARACTER["step_height"])
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


def walk_ours(job: Job, settings: ControllerSettings, dt: float, single: bool,
              stop_early: bool = False):
    """(reports, frames, seconds): the job's walks batched in one ``walkthrough_many`` call,
    or (``single``) one call per walk; each its lane's whole duration unless
    ``stop_early`` (at the goal or stuck)."""
    mesh = TriangleMesh(job.vertices, job.triangles)
    paths = [np.array([s, g]) for s, g in zip(job.starts, job.goals)]
    durations = np.array([lane.duration for lane in job.lanes])
    ctrl = CharacterController(mesh, settings)
    walkthrough_many(mesh, paths[:1], settings, dt=dt, max_time=0.05, controller=ctrl)  # warm
    t0 = time.perf_counter()
    if single:
        reps = [walkthrough_many(mesh, [p], settings, dt=dt, max_time=d, controller=ctrl,
                                 stop_early=stop_early)[0]
                for p, d in zip(paths, durations)]
    else:
        reps = walkthrough_many(mesh, paths, settings, dt=dt, max_time=durations,
                                controller=ctrl, stop_early=stop_early)
    sec = time.perf_counter() - t0
    return reps, sum(len(r.trace) - 1 for r in reps), sec


# ---------------------------------------------------------------- copies (--copies N)
COPY_MARGIN = 10.0  # metres of empty space between two columns of copies (along x)
COPY_Y = 5.0  # metres: each column of copies lies this much further along +y than the last
COPY_SHIFTS = ("lane", "start")  # what moves by k / N of a frame's stride (copies_job)


@dataclass
class Copies:
    """A job of ``n`` copies of a kind's lanes (copy k of lane i is walk k * L + i) and
    ``offsets`` (n, 3): what to subtract from copy k's end to bring it back to the lane's
    own frame (metres)."""

    job: Job
    n: int
    offsets: np.ndarray


def copies_job(kind, lanes, n, dt, shift="lane") -> Copies:
    """``n`` copies of the lanes of one ``kind`` (laid as ``make_job`` lays them) in one
    level, copy k in its own column, k x (the lanes' length along x + COPY_MARGIN) along x
    and k x COPY_Y along y, and moved by d_k = SPEED * dt * k / n, k / n of a frame's
    stride: with ``shift`` "lane" the whole copy moves d_k along x (the helper of the
    8-copy measurements in docs/benchmarks.md: each walk is the same up to rounding, in
    another place of the level); with "start" only its start moves d_k back along the walk
    (each frame meets every edge d_k later: the frame's phase)."""
    if shift not in COPY_SHIFTS:
        raise ValueError(f"shift must be one of {COPY_SHIFTS}, not {shift!r}")
    base = make_job(kind, lanes)
    pitch = float(np.ptp(base.vertices[:, 0])) + COPY_MARGIN
    k = np.arange(n)
    place = np.column_stack([k * pitch, k * COPY_Y, np.zeros(n)])
    phase = SPEED * dt * k / n
    if shift == "lane":
        place[:, 0] += phase
    heading = base.goals[:, :2] - base.starts[:, :2]
    heading = np.column_stack([heading / np.linalg.norm(heading, axis=1, keepdims=True),
                               np.zeros(len(lanes))])
    back = phase[:, None, None] * heading[None] * (shift == "start")  # (n, L, 3)
    v, t = merge([(base.vertices + o, base.triangles) for o in place])
    starts = (base.starts[None] + place[:, None] - back).reshape(-1, 3)
    goals = (base.goals[None] + place[:, None]).reshape(-1, 3)
    job = Job(f"{kind}.{shift}{n}", list(lanes) * n, v, t, starts, goals)
    return Copies(job, n, place)


def walk_copies(copies: Copies, dt, folder, missing, reuse) -> dict:
    """Each engine's outcomes on ``copies``: {engine: [[Outcome] * n per lane]}, ends in the
    lane's frame. Engines as ``run`` found them (``missing``: "python" walks Rapier
    through its Python bindings, any other reason walks none)."""
    job, n = copies.job, copies.n
    outs = {}
    if missing == "python":
        outs["rapier"] = run_rapier_py(job, dt)
    elif not missing:
        sub = os.path.join(folder, f"{round(1.0 / dt)}hz")
        os.makedirs(sub, exist_ok=True)
        path, same = write_job(job, sub, dt)
        outs = {eng: run_engine(eng, path, reuse=same and reuse) for eng in ENGINES}
    lanes = len(job.lanes) // n
    res = {}
    for eng, out in outs.items():
        got = engine_outcomes(job, out)
        for w, o in enumerate(got):
            o.end = o.end - copies.offsets[w // lanes]
        res[eng] = [got[i::lanes] for i in range(lanes)]
    return res


def run_copies(kinds, rates, n, keep=None, shift="lane", reuse=False, out=print) -> dict:
    """The engines on ``n`` copies of every lane of ``kinds`` at each rate (``copies_job``):
    ``{rate: {kind: {engine: [[Outcome] * n per lane]}}}``."""
    missing = engines_missing()
    if missing and walk_rapier_py is not None:
        missing = "python"
    if missing and missing != "python":
        out(f"copies: engines skipped: {missing}")
    folder = keep or tempfile.mkdtemp(prefix="bench_engines_copies_")
    lanes = limit_lanes() + other_lanes() + issue26_lanes()
    res = {}
    for hz in rates:
        res[hz] = {kind: walk_copies(copies_job(kind, [ln for ln in lanes if ln.kind == kind],
                                                n, 1.0 / hz, shift),
                                     1.0 / hz, folder, missing, reuse and keep is not None)
                   for kind in kinds}
    if keep is None:
        shutil.rmtree(folder, ignore_errors=True)
    return res


# ---------------------------------------------------------------- the run
def run(kinds, rates, keep=None, engines=True, out=print, stop_at_goal=False,
        reuse=False, timing=True) -> dict:
    """Walk every lane of ``kinds`` at every rate in ``rates`` (Hz) with our models and, when
    ``engines`` and they can run here, with Jolt and Rapier (WebAssembly under node; without
    node, Rapier through its Python bindings and no Jolt); every walker walks each lane's
    whole duration unless ``stop_at_goal`` (module docstring); without ``timing`` no walk
    is repeated for the speed rows. Returns the results
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
            timed = timing and hz == rates[0] and kind not in FLIGHT_KINDS
            results[hz][kind] = _run_job(job, 1.0 / hz, folder, missing, speed, timed,
                                         stop_at_goal, reuse and keep is not None)
    timed_kinds = [k for k in kinds if k not in FLIGHT_KINDS]
    if timing and rates and timed_kinds:  # every timed lane in one level, one batch (exact)
        chosen = [ln for kind in timed_kinds for ln in lanes if ln.kind == kind]
        job = make_job("all", chosen)
        settings = model_settings("exact")
        reps, frames, sec = walk_ours(job, settings, 1.0 / rates[0], single=False,
                                      stop_early=stop_at_goal)
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


def _run_job(job, dt, folder, missing, speed, timed, stop_at_goal, reuse) -> dict:
    r = {"lanes": job.lanes, "ours": {}}
    for model in MODELS:
        s = model_settings(model)
        reps, frames, sec = walk_ours(job, s, dt, single=False, stop_early=stop_at_goal)
        r["ours"][model] = our_outcomes(job, reps, s.step_height)
        if timed and model == "exact":
            speed["batched"][0] += frames
            speed["batched"][1] += sec
            _r, frames1, sec1 = walk_ours(job, s, dt, single=True, stop_early=stop_at_goal)
            speed["single"][0] += frames1
            speed["single"][1] += sec1
    if missing == "python":
        speed["rapier_runner"] = "Python rapier3d"
        o = run_rapier_py(job, dt, stop_at_goal)
        r["rapier"] = engine_outcomes(job, o)
        if timed:
            speed["rapier"][0] += o["timing"]["frames"]
            speed["rapier"][1] += o["timing"]["walk_s"]
    elif not missing:
        sub = os.path.join(folder, f"{round(1.0 / dt)}hz")
        os.makedirs(sub, exist_ok=True)
        path, same = write_job(job, sub, dt, stop_at_goal)
        for eng in ENGINES:
            o = run_engine(eng, path, reuse=same and reuse)
            r[eng] = engine_outcomes(job, o)
            if timed:
                speed[eng][0] += o["timing"]["frames"]
                speed[eng][1] += o["timing"]["walk_s"]
    return r


KEEP_LOCK = ".bench_engines.lock"  # in a --keep folder while a run writes and reads it


@contextlib.contextmanager
def keep_lock(folder):
    """Hold ``folder``'s KEEP_LOCK for a run (yields True), or yield False at once when
    another run holds it: two runs keeping into one folder write the same job files and
    each engine would walk the other's job (seen: two runs raced on the lips job). None:
    nothing to lock (a run in its own temporary folder)."""
    if folder is None:
        yield True
        return
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, KEEP_LOCK), "a+") as f:
        try:
            fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            yield False
            return
        try:
            yield True
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rates", default="60", help="frame rates, Hz, comma separated")
    ap.add_argument("--kinds", default=",".join(KINDS))
    ap.add_argument("--keep", help="write the jobs and engine outputs into this folder")
    ap.add_argument("--reuse", action="store_true",
                    help="with --keep: read the engines' outputs already in the folder for "
                         "the same job instead of walking the engines again (the engines' "
                         "walks do not depend on our models)")
    ap.add_argument("--no-engines", action="store_true", help="walk only our models")
    ap.add_argument("--summary", action="store_true", help="no per-lane tables")
    ap.add_argument("--no-timing", action="store_true",
                    help="no speed rows (no walk is repeated to time it)")
    ap.add_argument("--stop-at-goal", action="store_true",
                    help="end each walk at its goal (ours also when stuck), as before issue 26's "
                         "whole-duration walks")
    ap.add_argument("--copies", type=int, default=0, metavar="N",
                    help="also walk the engines on N copies of every lane (k / N of a "
                         "frame's stride apart, each in its own place of the level) and "
                         "print each preset's ends against the engine's own spread")
    ap.add_argument("--copy-shift", choices=COPY_SHIFTS, default="lane",
                    help="with --copies: move each whole copy (lane, default) or only its "
                         "start (start: the frame's phase at every edge)")
    a = ap.parse_args(argv)
    rates = [int(x) for x in a.rates.split(",")]
    kinds = [k for k in a.kinds.split(",") if k]
    unknown = set(kinds) - set(KINDS)
    if unknown:
        ap.error(f"unknown lane kinds {sorted(unknown)}; expected {KINDS}")
    if a.copies < 0 or a.copies == 1:
        ap.error(f"--copies must be 2 or more, not {a.copies}")
    with keep_lock(a.keep) as held:
        if not held:
            print(f"bench_engines: --keep {a.keep} is in use by another bench run (its jobs "
                  f"and outputs would be overwritten under it); wait for it or keep into "
                  f"another folder", file=sys.stderr)
            return 2
        results = run(kinds, rates, a.keep, not a.no_engines, stop_at_goal=a.stop_at_goal,
                      reuse=a.reuse, timing=not a.no_timing)
        for hz in rates:
            if not a.summary:
                print(f"\n## {hz} Hz")
                print_lanes(results[hz], kinds)
        print_summary(results, rates)
        print_presets(results, rates)
        print_lips(results, rates)
        print_speed(results["speed"])
        if a.copies:
            copies = run_copies(kinds, rates, a.copies, a.keep, a.copy_shift, a.reuse)
            print_spread(results, copies, rates, a.copies, lanes=not a.summary)
    return 0


if __name__ == "__main__":
    sys.exit(main())
