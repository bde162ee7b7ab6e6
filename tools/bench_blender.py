"""Benchmark rows of the Blender side on a ~1M-triangle level (real bpy, the real extension).

    python tools/bench_blender.py [--n 707] [--moves 30] [--triangulated]

Builds an n x n quad grid (2 n^2 triangles: 999,698 at n = 707) with a capsule standing in
it, loads the extension through Blender's extension loader (a temporary user folder, nothing
written to the home folder), and prints one table:

* first check_penetration: the operator on a cold cache (read the evaluated level through the
  attribute API + build the TriangleMesh + query + write the face attribute and rows), with
  its parts (read, build) timed separately;
* live re-check: the capsule moved by a script and the view layer updated (the depsgraph
  handler: cache bookkeeping, capsule re-check, state and highlight writes), warm cache; the
  median and the worst of ``--moves`` moves;
* classify_walkability: the operator on a warm cache (classify + per-object rows + INT8 and
  colour attribute writes), and on a cold cache (read + build included);
* Reachability (issue 19): the operator on the 1M level from the capsule marked Spawn (warm
  cache: the standable map, the flood, the ``cc_reachability`` attribute, rows and the cells
  object); and on the sample level from its "Spawn" capsule, cold and warm cache;
* the designer's loop (``loop_rows``, issue 16): Check Penetration again after a capsule move
  (warm cache: query + states, rows and attribute through the one writer), and Re-check All
  on the sample level (tools/sample_level.py: penetration, walkability, the four audits and
  the eleven walks; warm and cold cache).

Timings are wall-clock on this machine; the budgets are 2 s (first check), 16 ms (live
re-check), 1 s (walkability), 10 s and 1 s (Reachability on the 1M and the sample level:
core's targets for the map and the flood), 0.05 s (re-check after a move) and 3 s (Re-check
All). Beside
them, ``reference_workload`` times a fixed numpy workload in the same run (best of 3): the
"x ref" column divides each row by it, so figures from different days (or a busy machine)
compare.

A second table (``edit_rows``, issue 16) edits one object of the same level with the live
check on and the overlay drawn (the GPU initialised by a tiny Workbench render): a box moved,
then a box's mesh edited (its triangle count changes); per edit the main thread's time in the
depsgraph update, the check on release (the level patched: only the edited object re-read and
spliced into the built mesh, the capsules re-checked) and the overlay's redraw (only the
edited object's batches rebuilt), against a full rebuild of the level and the overlay's first
build measured in the same run. Budget: 0.2 s for what blocks the UI after an edit.
"""

from __future__ import annotations

import argparse
import atexit
import importlib
import pathlib
import statistics
import sys
import time

from capsule_collision.levelcheck import sample_level, session

ROOT = pathlib.Path(__file__).resolve().parents[1]


def load_extension():
    """Import bpy with a temporary user folder and enable the checkout as the extension
    (Blender's real loader: ``capsule_collision.levelcheck.session``)."""
    session.isolate_user_folders()
    import bpy  # noqa: PLC0415

    return bpy, session.enable_extension(ROOT)


def build_grid(bpy, n: int, triangulated: bool):
    """An n x n grid of side 200 m with gentle bumps (quads, or 2 triangles a cell)."""
    import numpy as np  # noqa: PLC0415

    size = 200.0
    xs = np.linspace(-size / 2, size / 2, n + 1)
    gx, gy = np.meshgrid(xs, xs, indexing="xy")
    z = 0.3 * np.sin(gx * 0.7) * np.cos(gy * 0.5)
    co = np.stack([gx.ravel(), gy.ravel(), z.ravel()], axis=1).astype(np.float32)
    i = np.arange(n)
    a = (i[None, :] + (n + 1) * i[:, None]).ravel()
    if triangulated:
        faces = np.concatenate([np.stack([a, a + 1, a + n + 2], 1),
                                np.stack([a, a + n + 2, a + n + 1], 1)]).astype(np.int32)
    else:
        faces = np.stack([a, a + 1, a + n + 2, a + n + 1], axis=1).astype(np.int32)
    k = faces.shape[1]
    me = bpy.data.meshes.new("Terrain")
    me.vertices.add(co.shape[0])
    me.vertices.foreach_set("co", co.ravel())
    me.loops.add(faces.size)
    me.loops.foreach_set("vertex_index", faces.ravel())
    me.polygons.add(faces.shape[0])
    me.polygons.foreach_set("loop_start", np.arange(0, faces.size, k, dtype=np.int32))
    me.update(calc_edges=True)
    ob = bpy.data.objects.new("Terrain", me)
    bpy.context.scene.collection.objects.link(ob)
    return ob


def reference_workload() -> float:
    """Seconds for a fixed numpy workload (sort 1M float64, 20 matmuls of 200 x 200, a
    gather of 1M rows), best of 3: the machine's speed in this run."""
    import numpy as np  # noqa: PLC0415

    rng = np.random.default_rng(16)
    data = rng.random(1_000_000)
    mat = rng.random((200, 200))
    rows = rng.random((1_000_000, 3))
    index = rng.integers(0, 1_000_000, 1_000_000)
    best = float("inf")
    for _ in range(3):
        t = time.perf_counter()
        np.sort(data)
        m = mat
        for _ in range(20):
            m = (m @ mat) / 200.0
        rows[index].sum()
        best = min(best, time.perf_counter() - t)
    return best


def recheck_after_move(bpy, cap_name: str, moves: int = 10) -> list:
    """Check Penetration run again after each of ``moves`` capsule moves (warm cache, live
    check off): the median and worst."""
    scene = bpy.context.scene
    scene.capsule_collision.live_check = False
    times = []
    for i in range(moves):
        cap = bpy.data.objects[cap_name]
        cap.location.y = 0.07 * (i + 1)
        bpy.context.view_layer.update()
        with bpy.context.temp_override(selected_objects=[cap], active_object=cap, object=cap):
            t = time.perf_counter()
            assert bpy.ops.capsule_collision.check_penetration() == {"FINISHED"}
            times.append(time.perf_counter() - t)
    scene.capsule_collision.live_check = True
    return [(f"Check Penetration again after a capsule move, median of {moves}",
             statistics.median(times), 0.05),
            (f"Check Penetration again after a capsule move, worst of {moves}", max(times),
             None)]


def recheck_all_sample(bpy, cache) -> list:
    """Re-check All on the sample level after every check ran once (warm cache), and again
    with the level cache cleared (read + build included)."""
    bpy.ops.wm.read_homefile(use_empty=True)
    sample_level.build()
    scene = bpy.context.scene
    scene.capsule_collision.live_check = False
    ops = bpy.ops.capsule_collision
    for name in ("check_penetration", "classify_walkability", "stand_test", "stair_audit",
                 "headroom_audit", "ledge_audit", "walkthrough"):
        assert getattr(ops, name)() == {"FINISHED"}, name
    n_rows = len(scene.capsule_collision.results)
    t = time.perf_counter()
    assert ops.recheck_all() == {"FINISHED"}
    warm = time.perf_counter() - t
    cache.clear()
    t = time.perf_counter()
    assert ops.recheck_all() == {"FINISHED"}
    cold = time.perf_counter() - t
    return [(f"Re-check All on the sample level ({n_rows} rows, 7 checks), warm cache", warm,
             3.0),
            ("Re-check All on the sample level, cold cache (read + build included)", cold,
             None)]


def reach_sample(bpy, cache) -> list:
    """Reachability on the sample level from its "Spawn" capsule: cold (read + build
    included) and warm cache."""
    bpy.ops.wm.read_homefile(use_empty=True)
    sample_level.build()
    scene = bpy.context.scene
    scene.capsule_collision.live_check = False
    bpy.data.objects["Spawn"].capsule_collision.spawn = True
    bpy.context.view_layer.update()
    cache.clear()
    times = []
    for _ in range(2):
        t = time.perf_counter()
        assert bpy.ops.capsule_collision.reachability() == {"FINISHED"}
        times.append(time.perf_counter() - t)
    n = sum(r.kind in ("ISLAND", "TRAP") for r in scene.capsule_collision.results)
    return [(f"Reachability on the sample level ({n} island and trap rows), cold cache",
             times[0], None),
            ("Reachability on the sample level, warm cache", times[1], 1.0)]


def loop_rows(bpy, cache) -> list:
    """The designer's loop rows (issue 16) and Reachability on the sample level, run after
    the 1M-level rows."""
    return (recheck_after_move(bpy, "Capsule") + reach_sample(bpy, cache)
            + recheck_all_sample(bpy, cache))


def print_table(rows, reference: float) -> None:
    width = max(len(r[0]) for r in rows)
    print(f"{'row':<{width}}  {'time':>10}  {'x ref':>7}  {'budget':>8}")
    for name, secs, budget in rows:
        b = f"{budget * 1000:.0f} ms" if budget is not None else ""
        ok = "" if budget is None else ("  ok" if secs <= budget else "  OVER")
        print(f"{name:<{width}}  {secs * 1000:>7.1f} ms  {secs / reference:>7.2f}  {b:>8}{ok}")
    print(f"reference: a fixed numpy workload (reference_workload) took "
          f"{reference * 1000:.1f} ms in this run")


def _box(bpy, name, location, size=1.0):
    me = bpy.data.meshes.new(name)
    v = [(0, 0, 0), (1, 0, 0), (1, 1, 0), (0, 1, 0), (0, 0, 1), (1, 0, 1), (1, 1, 1), (0, 1, 1)]
    f = [(0, 3, 2, 1), (4, 5, 6, 7), (0, 1, 5, 4), (1, 2, 6, 5), (2, 3, 7, 6), (3, 0, 4, 7)]
    me.from_pydata([tuple(size * c for c in p) for p in v], [], f)
    me.update()
    ob = bpy.data.objects.new(name, me)
    ob.location = location
    bpy.context.scene.collection.objects.link(ob)
    return ob


def _offscreen_drawer(bpy, mod, size=256):
    """A function drawing the overlay into an offscreen from above (GPU after a render)."""
    import gpu  # noqa: PLC0415  (after bpy)

    overlay = importlib.import_module(mod.__name__ + ".addon.overlay")
    scene = bpy.context.scene
    cam = bpy.data.objects.new("Bench Camera", bpy.data.cameras.new("Bench Camera"))
    cam.location = (0.0, 0.0, 150.0)
    scene.collection.objects.link(cam)
    scene.camera = cam
    r = scene.render
    engine, res = r.engine, (r.resolution_x, r.resolution_y)
    r.engine = "BLENDER_WORKBENCH"
    r.resolution_x = r.resolution_y = 8
    bpy.ops.render.render(write_still=False)  # initialises the GPU in background mode
    r.engine, (r.resolution_x, r.resolution_y) = engine, res
    offscreen = gpu.types.GPUOffScreen(size, size)
    atexit.register(offscreen.free)

    def draw():
        dg = bpy.context.evaluated_depsgraph_get()
        view = cam.matrix_world.inverted()
        proj = cam.calc_matrix_camera(dg, x=size, y=size)
        with offscreen.bind():
            overlay.draw_offscreen(scene, dg, view, proj, size, size)

    return draw, overlay


def edit_rows(bpy, mod, scene):
    """Rows of the second table: editing one object of the level (see the module doc)."""
    cache = importlib.import_module(mod.__name__ + ".addon.cache")
    live = importlib.import_module(mod.__name__ + ".addon.live")
    level_parts = importlib.import_module(mod.__name__ + ".addon.level_parts")
    boxes = [_box(bpy, f"Crate {k}", (10.0 * k - 20.0, 5.0, 0.0)) for k in range(5)]
    bpy.context.view_layer.update()
    with bpy.context.temp_override(selected_objects=[], active_object=None, object=None):
        bpy.ops.capsule_collision.classify_walkability()  # walkability on every part
    draw, overlay = _offscreen_drawer(bpy, mod)
    rows = []
    t = time.perf_counter()
    draw()
    rows.append(("overlay's first build (every batch; the baseline)", time.perf_counter() - t,
                 None))
    cache.clear()
    t = time.perf_counter()
    cache.cached_level(bpy.context.evaluated_depsgraph_get(), scene)
    rows.append(("full read + build of the level (the baseline)", time.perf_counter() - t,
                 None))
    draw()
    t = time.perf_counter()
    draw()
    t_idle = time.perf_counter() - t
    rows.append(("overlay redraw, nothing changed (GPU drawing only; llvmpipe here)", t_idle,
                 None))

    def edit(label, change):
        built = overlay.face_batches_built()
        t = time.perf_counter()
        change()
        bpy.context.view_layer.update()  # depsgraph_update_post: live check, cache, overlay
        t_update = time.perf_counter() - t
        t = time.perf_counter()
        live.run_pending(time.monotonic() + 10.0)  # the capsule released: check on release
        t_release = time.perf_counter() - t
        t = time.perf_counter()
        draw()
        t_draw = time.perf_counter() - t
        n = overlay.face_batches_built() - built
        rows.append((f"{label}: depsgraph update (live handler)", t_update, None))
        rows.append((f"{label}: check on release (level patched)", t_release, None))
        rows.append((f"{label}: overlay redraw ({n} batches rebuilt)", t_draw, None))
        rows.append((f"{label}: all of it", t_update + t_release + t_draw, None))
        rows.append((f"{label}: all of it but the GPU drawing", t_update + t_release + t_draw
                     - t_idle, 0.2))

    def edit_mesh():  # the box's mesh as Edit Mode leaves it: one more face row
        me = boxes[2].data
        v = [tuple(p.co) for p in me.vertices] + [(0.5, 0.5, 2.0)]
        f = [tuple(p.vertices) for p in me.polygons if tuple(p.vertices) != (4, 5, 6, 7)]
        f += [(4, 5, 8), (5, 6, 8), (6, 7, 8), (7, 4, 8)]
        me.clear_geometry()
        me.from_pydata(v, [], f)
        me.update()

    edit("move one box", lambda: setattr(boxes[1], "location", (-8.0, 4.0, 0.3)))
    edit("edit one box's mesh", edit_mesh)
    rows.append((f"patches {level_parts.stats['patches']}, parts read "
                 f"{level_parts.stats['parts_read']}, full builds {cache.stats['builds']}",
                 0.0, None))
    return rows


def print_rows(title, rows):
    width = max(len(r[0]) for r in rows)
    print(title)
    print(f"{'row':<{width}}  {'time':>10}  {'budget':>8}")
    for name, secs, budget in rows:
        b = f"{budget * 1000:.0f} ms" if budget is not None else ""
        ok = "" if budget is None else ("  ok" if secs <= budget else "  OVER")
        print(f"{name:<{width}}  {secs * 1000:>7.1f} ms  {b:>8}{ok}")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=707, help="grid cells per side (707: ~1M tris)")
    ap.add_argument("--moves", type=int, default=30, help="capsule moves for the live row")
    ap.add_argument("--triangulated", action="store_true",
                    help="a triangles-only level (the corner fast path) instead of quads")
    ap.add_argument("--no-edit", action="store_true",
                    help="skip the second table (editing one object; needs EGL for the GPU)")
    args = ap.parse_args(argv)
    bpy, mod = load_extension()
    cache = importlib.import_module(mod.__name__ + ".addon.cache")
    scene_data = importlib.import_module(mod.__name__ + ".addon.scene_data")
    live = importlib.import_module(mod.__name__ + ".addon.live")
    bpy.ops.wm.read_homefile(use_empty=True)
    scene = bpy.context.scene
    terrain = build_grid(bpy, args.n, args.triangulated)
    cap = bpy.data.objects.new("Capsule", None)
    scene.collection.objects.link(cap)
    cap.capsule_collision.role = "CAPSULE"
    cap.location = (0.0, 0.0, -0.2)  # 0.2 m into the terrain
    bpy.context.view_layer.update()
    rows = []

    def op(name):
        with bpy.context.temp_override(selected_objects=[cap], active_object=cap, object=cap):
            return getattr(bpy.ops.capsule_collision, name)()

    # parts of the first check, each from a cold start
    dg = bpy.context.evaluated_depsgraph_get()
    t = time.perf_counter()
    parts = scene_data.read_parts(dg, scene)
    t_read = time.perf_counter() - t
    t = time.perf_counter()
    level = scene_data.level_from_parts(parts, scene_data.unit_scale_of(scene))
    t_build = time.perf_counter() - t
    n_tri = level.mesh.n_triangles
    del parts, level
    cache.clear()
    t = time.perf_counter()
    assert op("check_penetration") == {"FINISHED"}
    t_first = time.perf_counter() - t
    count = bpy.data.objects["Capsule"].capsule_collision.penetrating_count
    rows.append(("first check_penetration (read + build + query + write)", t_first, 2.0))
    rows.append(("  of which: read the evaluated level (attribute API)", t_read, None))
    rows.append(("  of which: build the TriangleMesh (BVH, records)", t_build, None))

    builds = cache.stats["builds"]
    checks = live.checks_run(scene)
    times = []
    for i in range(args.moves):
        cap = bpy.data.objects["Capsule"]
        cap.location.x = 0.05 * (i + 1)
        t = time.perf_counter()
        bpy.context.view_layer.update()  # depsgraph_update_post: the live check
        times.append(time.perf_counter() - t)
    assert cache.stats["builds"] == builds, "moving a capsule rebuilt the level"
    live_state = bpy.data.objects["Capsule"].capsule_collision.penetrating_count
    at_once = live.checks_run(scene) - checks
    rows.append((f"live re-check after a move, median of {args.moves} "
                 f"({at_once} checked at once)", statistics.median(times), 1 / 60))
    rows.append((f"live re-check after a move, worst of {args.moves}", max(times), None))

    t = time.perf_counter()
    assert op("classify_walkability") == {"FINISHED"}
    t_walk = time.perf_counter() - t
    rows.append(("classify_walkability, warm cache (classify + rows + attributes)", t_walk,
                 1.0))
    cache.clear()
    t = time.perf_counter()
    assert op("classify_walkability") == {"FINISHED"}
    t_walk_cold = time.perf_counter() - t
    rows.append(("classify_walkability, cold cache (read + build included)", t_walk_cold,
                 None))
    spawn = bpy.data.objects["Capsule"]
    spawn.capsule_collision.spawn = True
    spawn.location = (0.0, 0.0, 0.0)  # on the floor: the flood reaches the whole grid
    bpy.context.view_layer.update()
    op("check_penetration")  # the cache warm again
    core = importlib.import_module(mod.__name__ + ".core")
    flood, inner = core.reachability, []

    def timed_flood(*args, **kw):  # the operator calls core.reachability through the module
        t0 = time.perf_counter()
        out = flood(*args, **kw)
        inner.append(time.perf_counter() - t0)
        return out

    core.reachability = timed_flood
    try:
        t = time.perf_counter()
        assert op("reachability") == {"FINISHED"}
        t_reach = time.perf_counter() - t
    finally:
        core.reachability = flood
    summary = next(r.label for r in scene.capsule_collision.results
                   if r.kind == "REACHABILITY")
    assert "on no floor" not in summary, f"the flood measured nothing: {summary}"
    rows.append(("Reachability from the spawn, warm cache (map + flood + attribute + rows)",
                 t_reach, 10.0))
    rows.append(("  of which: core.reachability (the standable map and the flood)", inner[0],
                 None))

    kind = "triangles" if args.triangulated else "quads"
    header = (f"\nBlender side on a {n_tri:,}-triangle level ({len(terrain.data.polygons):,} "
              f"{kind}), bpy {bpy.app.version_string}; capsule penetrates {count} triangles "
              f"(live: {live_state}); {live.status(scene)}")
    # the edit rows use the 1M level; the loop rows then load the sample level
    edits = None if args.no_edit else edit_rows(bpy, mod, scene)
    rows += loop_rows(bpy, cache)
    print(header)
    print_table(rows, reference_workload())
    if edits is not None:
        print_rows("\nEditing one object of that level (live check on, overlay drawn)", edits)
    return 0


if __name__ == "__main__":
    sys.exit(main())
