"""Benchmark of core.TriangleMesh against the C++ peers that happen to be installed.

Usage (from the repo root):
    python tools/bench.py                 # all scenes, 10,000 capsules and sweeps each
    python tools/bench.py --quick         # small scenes, correctness only (used by CI)
    python tools/bench.py --scenes terrain_1M

Peers (coal, pybullet, python-fcl) are optional imports: install them in a separate venv with
``pip install -r tools/bench-requirements.txt``. They are never needed by the product or CI.

One table per scene: build time, peak memory, single-query rate, batched rate, swept rate, the
same for each installed peer with the ratio (our rate / peer rate), and each peer's agreement
with our exact answers (penetrates?, identical triangle sets, max depth error). An optional
module ``tools/bench_walk.py`` exposing ``rows(scene_name, mesh, quick) -> list[(label, text)]``
adds its rows (e.g. walk-through timings) to each table.

In ``--quick`` mode every answer is also checked against brute force over all triangles and the
script exits non-zero on any disagreement.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import sys
import time
import tracemalloc

import bench_walk
import numpy as np
import scenes
from capsule_collision.core.geometry.contact import capsule_triangle_many
from capsule_collision.core.geometry.shapes import Capsule
from capsule_collision.core.geometry.sweep import sweep_capsule_triangle_many
from capsule_collision.core.mesh.triangle_mesh import TriangleMesh


def _median_time(fn, repeat):
    times = []
    out = None
    for _ in range(repeat):
        out = None  # each run on its own: the previous result is not kept alive meanwhile
        t = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t)
    return float(np.median(times)), out


def _rate(n, seconds):
    return n / seconds if seconds > 0 else float("inf")


def result_hash(*results) -> str:
    """First 16 hex digits of the SHA-256 of named results' arrays (dtype, shape, bytes): equal
    hashes before and after a change mean bit-identical answers."""
    h = hashlib.sha256()
    for res in results:
        for x in res:
            x = np.ascontiguousarray(x)
            h.update(f"{x.dtype}{x.shape}".encode())
            h.update(x.tobytes())
    return h.hexdigest()[:16]


def _fmt_rate(r):
    return f"{r / 1000:.1f}k q/s ({1e6 / r:.1f} us)" if np.isfinite(r) else "-"


# ------------------------------------------------------------------ peers (optional)
# Each peer factory returns (prepare, query): ``prepare(a, b, r)`` builds the peer's capsule
# object for one query outside the timed loop; ``query(handle)`` is the timed call and returns
# {triangle index: depth} (pybullet: {-1: deepest depth}, it gives no triangle ids).
def _peer_coal(v, t):
    import coal

    model = coal.BVHModelOBBRSS()
    model.beginModel(len(t), len(v))
    model.addVertices(v)
    model.addTriangles(t)
    model.endModel()
    mesh_obj = coal.CollisionObject(model, coal.Transform3s())
    req = coal.CollisionRequest(coal.CollisionRequestFlag.CONTACT, 1000000)

    def prepare(a, b, r):
        tf = coal.Transform3s()
        tf.setTranslation(0.5 * (a + b))  # upright capsules: the peer's local Z is world Z
        return coal.CollisionObject(coal.Capsule(r, float(np.linalg.norm(b - a))), tf)

    def query(cap):
        res = coal.CollisionResult()
        coal.collide(mesh_obj, cap, req, res)
        return {int(c.b1): -float(c.penetration_depth) for c in res.getContacts()}

    return prepare, query


def _peer_fcl(v, t):
    import fcl

    model = fcl.BVHModel()
    model.beginModel(len(v), len(t))
    model.addSubModel(v, t)
    model.endModel()
    mesh_obj = fcl.CollisionObject(model, fcl.Transform())
    req = fcl.CollisionRequest(num_max_contacts=1000000, enable_contact=True,
                               gjk_solver_type=fcl.GJKSolverType.GST_INDEP)

    def prepare(a, b, r):
        lz = float(np.linalg.norm(b - a))
        return fcl.CollisionObject(fcl.Capsule(r, lz), fcl.Transform(0.5 * (a + b)))

    def query(cap):
        res = fcl.CollisionResult()
        fcl.collide(mesh_obj, cap, req, res)
        return {int(c.b1): float(c.penetration_depth) for c in res.contacts}

    return prepare, query


def _peer_pybullet(v, t):
    import tempfile

    import pybullet as p

    cid = p.connect(p.DIRECT)
    # The in-memory route fails above 131,072 vertices and adds a ~1 mm margin: use an .obj.
    with tempfile.NamedTemporaryFile("w", suffix=".obj", delete=False) as f:
        np.savetxt(f, v, fmt="v %.17g %.17g %.17g")
        np.savetxt(f, t + 1, fmt="f %d %d %d")
        path = f.name
    try:
        shape = p.createCollisionShape(p.GEOM_MESH, fileName=path,
                                       flags=p.GEOM_FORCE_CONCAVE_TRIMESH, physicsClientId=cid)
    finally:
        os.unlink(path)
    body = p.createMultiBody(0, shape, physicsClientId=cid)

    def prepare(a, b, r):
        cs = p.createCollisionShape(p.GEOM_CAPSULE, radius=r, height=float(np.linalg.norm(b - a)),
                                    physicsClientId=cid)
        cb = p.createMultiBody(0, cs, basePosition=(0.5 * (a + b)).tolist(), physicsClientId=cid)
        return cb

    def query(cb):
        pts = p.getClosestPoints(body, cb, 0.0, physicsClientId=cid)
        depth = max((-pt[8] for pt in pts), default=0.0)
        return {-1: depth} if pts and depth > 0 else {}

    return prepare, query


PEERS = {"coal": _peer_coal, "pybullet": _peer_pybullet, "python-fcl": _peer_fcl}


# ------------------------------------------------------------------ brute force (quick mode)
def _brute_check(mesh, a, b, r, batch, sa, sb, sr, sd, sweeps):
    tri = mesh.vertices[mesh.triangles]
    errors = 0
    for i in range(len(a)):
        hit, depth, _, _ = capsule_triangle_many(a[i], b[i], r[i], tri[:, 0], tri[:, 1], tri[:, 2])
        idx = np.flatnonzero(hit)
        got = np.sort(batch.triangle[batch.query == i])
        errors += not np.array_equal(got, idx)
    n = len(tri)
    for i in range(len(sa)):
        t, _, _ = sweep_capsule_triangle_many(
            np.broadcast_to(sa[i], (n, 3)), np.broadcast_to(sb[i], (n, 3)), np.full(n, sr[i]),
            np.broadcast_to(sd[i], (n, 3)), tri[:, 0], tri[:, 1], tri[:, 2])
        best = t.min()
        errors += not (best == sweeps.time[i])
    return errors


# ------------------------------------------------------------------ one scene
def bench_scene(name, make, n_queries, n_single, quick, peers):
    """Rows of one scene's table and its number of disagreements (single vs batched, and
    brute force in quick mode)."""
    v, t = make()
    repeat = 1 if quick else 3
    build_s, mesh = _median_time(lambda: TriangleMesh(v, t), repeat)
    tracemalloc.start()
    TriangleMesh(v, t)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    rows = [("triangles", f"{mesh.n_triangles:,}"),
            ("build (median)", f"{build_s:.3f} s"),
            ("build peak memory (tracemalloc)", f"{peak / 1e9:.3f} GB")]
    a, b, r = scenes.capsule_queries(v, t, n_queries, seed=0)
    sa, sb, sr, sd = scenes.sweep_queries(v, t, n_queries, seed=0)
    caps = [Capsule(a[i], b[i], r[i]) for i in range(n_single)]
    single_s, single_out = _median_time(lambda: [mesh.capsule_contacts(c) for c in caps], repeat)
    ours_single = _rate(n_single, single_s)
    batch_s, batch = _median_time(lambda: mesh.capsule_contacts_many(a, b, r), repeat)
    sweep_s, sweeps = _median_time(lambda: mesh.sweep_capsule_many(sa, sb, sr, sd), 1)
    penetrating = np.unique(batch.query).size / len(a)
    rows.append(("ours: single exact capsule query", _fmt_rate(ours_single)))
    rows.append(("ours: batched capsules", _fmt_rate(_rate(len(a), batch_s))))
    rows.append(("ours: batched exact sweeps", _fmt_rate(_rate(len(sa), sweep_s))))
    rows.append(("queries penetrating / sweeps hitting",
                 f"{penetrating:.0%} / {np.isfinite(sweeps.time).mean():.0%}"))
    rows.append(("result hash (batched capsules, sweeps)",
                 f"{result_hash(batch)}, {result_hash(sweeps)}"))

    # Self-consistency: single path == batched path on the single-query subset.
    mismatch = 0
    for i, contacts in enumerate(single_out):
        mismatch += [c.triangle for c in contacts] != batch.triangle[batch.query == i].tolist()
    rows.append(("single vs batched disagreements", str(mismatch)))
    errors = mismatch
    if quick:
        brute = _brute_check(mesh, a, b, r, batch, sa, sb, sr, sd, sweeps)
        rows.append(("disagreements with brute force (capsules + sweeps)", str(brute)))
        errors += brute
    for peer in peers:
        rows.extend(_peer_rows(peer, v, t, a, b, r, n_single, batch, ours_single,
                               _rate(len(a), batch_s)))
    rows.extend(_walk_rows(name, mesh, quick))
    return rows, errors


def _peer_rows(peer, v, t, a, b, r, n_single, batch, ours_single, ours_batched):
    """A peer's rows: its single-query rate, our ratios, its agreement with our answers
    (none when the peer is not installed)."""
    try:
        prepare, query = PEERS[peer](v, t)
        handles = [prepare(a[i], b[i], float(r[i])) for i in range(n_single)]
    except ImportError:
        return []
    except Exception as exc:  # a peer failing must not stop the benchmark
        return [(f"{peer}", f"unavailable: {exc!s:.60}")]
    ours_sets = [set(batch.triangle[batch.query == i].tolist()) for i in range(n_single)]
    ours_depth = [
        {int(k): float(d) for k, d in zip(batch.triangle[batch.query == i],
                                             batch.depth[batch.query == i])}
        for i in range(n_single)
    ]
    t0 = time.perf_counter()
    outs = [query(h) for h in handles]
    rate = _rate(n_single, time.perf_counter() - t0)
    pen_agree = np.mean([bool(o) == bool(s) for o, s in zip(outs, ours_sets)])
    rows = [(f"{peer}: single query", f"{_fmt_rate(rate)}; ours/peer = "
                                      f"{ours_single / rate:.2f}"),
            (f"{peer}: batched ours/peer-single", f"{ours_batched / rate:.2f}")]
    line = f"penetrates? {pen_agree:.2%}"
    if peer != "pybullet":
        same = np.mean([set(o) == s for o, s in zip(outs, ours_sets)])
        errs = [abs(o[k] - d[k]) for o, d in zip(outs, ours_depth) for k in o if k in d]
        # Where the capsule's axis clears the triangle (our depth < r) both report
        # r - distance; where the axis crosses it, our push-out is along the face
        # normal (min(|d0|, |d1|) + r), which is not a peer's minimum translation.
        clear = [abs(o[k] - d[k]) for i, (o, d) in enumerate(zip(outs, ours_depth))
                 for k in o if k in d and d[k] < r[i]]
        line += (f", triangle sets {same:.2%}, depth err median "
                 f"{np.median(errs) if errs else 0.0:.1e} / max {max(errs, default=0.0):.1e} m"
                 f" (axis clear of the triangle: max {max(clear, default=0.0):.1e} m)")
    else:
        errs = [abs(o.get(-1, 0.0) - max(d.values(), default=0.0))
                for o, d in zip(outs, ours_depth) if o and d]
        line += f", deepest depth err max {max(errs, default=0.0):.2e} m (no triangle ids)"
    rows.append((f"{peer}: agreement", line))
    return rows


def _walk_rows(name, mesh, quick):
    """The walk rows (tools/bench_walk.py)."""
    return bench_walk.rows(name, mesh, quick)


def print_table(name, rows):
    width = max(len(k) for k, _ in rows)
    print(f"\n## {name}\n")
    print(f"| {'measure':<{width}} | value |")
    print(f"|{'-' * (width + 2)}|-------|")
    for k, val in rows:
        print(f"| {k:<{width}} | {val} |")
    sys.stdout.flush()


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="small scenes, correctness only")
    ap.add_argument("--scenes", nargs="*", help="scene names (default: all)")
    ap.add_argument("--queries", type=int, default=None, help="capsules and sweeps per scene")
    ap.add_argument("--single", type=int, default=None, help="capsules timed one per call")
    ap.add_argument("--peers", nargs="*", default=list(PEERS), help="peers to try")
    args = ap.parse_args(argv)
    table = scenes.QUICK_SCENES if args.quick else scenes.SCENES
    names = args.scenes or list(table)
    n_queries = args.queries or (40 if args.quick else 10_000)
    n_single = min(n_queries, args.single or (n_queries if args.quick else 2000))
    peers = [] if args.quick and args.peers == list(PEERS) else args.peers
    total_errors = 0
    for name in names:
        if name not in table:
            ap.error(f"unknown scene {name!r}; choose from {sorted(table)}")
        rows, errors = bench_scene(name, table[name], n_queries, n_single, args.quick, peers)
        total_errors += errors
        print_table(name, rows)
    if total_errors:
        print(f"\nFAILED: {total_errors} disagreements")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
