"""Rapier's KinematicCharacterController through its Python bindings (PyPI ``rapier3d``,
f32, pinned in requirements.txt and requirements-core.txt), walking an engines job exactly
as ``../shared/peers/engines/walk_rapier.mjs`` does (same set-up, steering, vertical speed
and walkable-ground probe; see that file's header). The one home of the Python Rapier
walks: ``tools/bench_engines.py`` (when node is absent) and
``tests/core/test_engine_agreement.py`` call ``run``.

    python tools/walk_rapier_py.py JOB.json OUT.json

Writes the runner's output format (``walkcommon.mjs``): JSON per walk and timing, plus
``OUT.json.trace.f32``. On the 60 limit lanes at 60 Hz it gives the WebAssembly runner's
verdict on every lane, ends within 0.053 m (docs/benchmarks.md, "Engines").
"""

from __future__ import annotations

import json
import math
import os
import sys
import time

import numpy as np
import rapier3d


def read_job(path):
    with open(path) as f:
        job = json.load(f)
    d = os.path.dirname(path)
    v = np.fromfile(os.path.join(d, job["vertices"]), "<f8").reshape(-1, 3)
    t = np.fromfile(os.path.join(d, job["triangles"]), "<u4").reshape(-1, 3)
    return job, v, t, float(v[:, 2].min()) - 10.0


def steer(pos, goal, speed, dt):
    gx, gy = goal[0] - pos[0], goal[1] - pos[1]
    dist = math.hypot(gx, gy)
    if dist <= 0.0:
        return 0.0, 0.0, 0.0
    step = min(speed * dt, dist)
    return gx / dist * step, gy / dist * step, dist


class RapierWalker:
    """One level and one character controller, set up as walk_rapier.mjs."""

    def __init__(self, rapier, s, v, t):
        self.r, self.s = rapier, s
        self.world = rapier.PhysicsWorld(gravity=(0.0, 0.0, -s["gravity"]))
        self.world.add_collider(rapier.Collider.trimesh(v.astype(np.float32).astype(float),
                                                        t.astype(np.int64)))
        self.world.update_query_pipeline()
        self.q = self.world.query_pipeline
        self.half = 0.5 * s["height"] - s["radius"]
        self.centre = 0.5 * s["height"]
        self.shape = rapier.SharedShape.capsule_z(self.half, s["radius"])
        slope = math.radians(s["max_slope_deg"])
        self.ctrl = rapier.KinematicCharacterController(
            up=(0.0, 0.0, 1.0), offset=s["skin_width"], slide=True,
            autostep=rapier.CharacterAutostep(s["step_height"], s["min_step_depth"], False),
            max_slope_climb_angle=slope, min_slope_slide_angle=slope,
            snap_to_ground=s["snap_distance"])
        self.cos_max = math.cos(slope)

    def pose(self, p):
        return self.r.Isometry3.from_translation(p[0], p[1], p[2] + self.centre)

    def move(self, p, d, dt):
        mv = self.ctrl.move_shape(dt, None, None, self.q, self.shape, self.pose(p), d)
        m = mv.translation
        return [p[0] + m.x, p[1] + m.y, p[2] + m.z], mv.grounded, m.z

    def ground_state(self, grounded, p):
        """0 walkable ground within 0.1 m below, 1 steep or none, 2 not grounded."""
        if not grounded:
            return 2
        opts = self.r.ShapeCastOptions(max_time_of_impact=0.1, target_distance=0.0,
                                       stop_at_penetration=False,
                                       compute_impact_geometry_on_penetration=True)
        hit = self.q.cast_shape(self.pose(p), (0.0, 0.0, -1.0), self.shape, opts)
        if hit is None:
            return 1
        return 0 if abs(hit[1].normal1.z) >= self.cos_max - 1e-6 else 1

    def walk(self, w, dt, kill_z, stop_at_goal):
        s = self.s
        p = list(w["start"])
        p, grounded, _ = self.move(p, (0.0, 0.0, -s["gravity"] * dt * dt), dt)
        trace = [(*p, 0 if grounded else 2)]
        vz, reason = 0.0, "duration"
        for _ in range(int(round(w["duration"] / dt))):
            dx, dy, dist = steer(p, w["goal"], s["speed"], dt)
            if stop_at_goal and grounded and dist <= s["radius"] and \
                    self.ground_state(grounded, p) == 0:
                reason = "goal"
                break
            vz = -s["gravity"] * dt if grounded else vz - s["gravity"] * dt
            p, grounded, mz = self.move(p, (dx, dy, vz * dt), dt)
            if not grounded:
                vz = min(mz / dt, max(vz, 0.0))
            trace.append((*p, 0 if grounded else 2))
            if p[2] < kill_z:
                reason = "out_of_level"
                break
        state = self.ground_state(grounded, p)
        return trace, {"id": w["id"], "end": p, "end_state": state, "grounded_end": state == 0,
                       "max_z": max(x[2] for x in trace), "frames": len(trace) - 1,
                       "end_reason": reason}


def run(doc, v, t):
    """Walk every walk of the job document ``doc`` (the engines' job format: ``settings``
    with ``dt``, ``walks``, ``stop_at_goal``) on the level ``v`` (V, 3) float64, ``t``
    (M, 3). Returns (the runner's output dict
    without ``trace_file``, the traces: one list of (x, y, z, state) per walk)."""
    s = doc["settings"]
    kill_z = float(v[:, 2].min()) - 10.0
    t0 = time.perf_counter()
    walker = RapierWalker(rapier3d, s, v, t)
    build = time.perf_counter() - t0
    traces, walks = [], []
    tw = time.perf_counter()
    for w in doc["walks"]:
        tr, summary = walker.walk(w, s["dt"], kill_z, doc.get("stop_at_goal", True))
        summary["trace_offset"] = sum(len(x) for x in traces)
        summary["trace_frames"] = len(tr)
        traces.append(tr)
        walks.append(summary)
    walk_s = time.perf_counter() - tw
    frames = sum(w["frames"] for w in walks)
    out = {"engine": "rapier-py", "version": rapier3d.__version__, "settings": s,
           "walks": walks, "timing": {"build_s": build, "walk_s": walk_s, "frames": frames,
                                      "steps_per_s": frames / walk_s if walk_s else 0.0}}
    return out, traces


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 2:
        print("usage: python tools/walk_rapier_py.py JOB.json OUT.json", file=sys.stderr)
        return 2
    job, v, t, _kill_z = read_job(argv[0])
    out, traces = run(job, v, t)
    np.array([x for tr in traces for x in tr], "<f4").tofile(argv[1] + ".trace.f32")
    out["trace_file"] = os.path.basename(argv[1]) + ".trace.f32"
    with open(argv[1], "w") as f:
        json.dump(out, f, indent=1)
    tm = out["timing"]
    print(f"rapier-py {rapier3d.__version__}: {len(out['walks'])} walks, {tm['frames']} frames, "
          f"{tm['steps_per_s']:.0f} steps/s, build {tm['build_s']:.3f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
