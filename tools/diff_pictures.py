"""Pictures of render against collision on the four OpenArena maps: one PNG per problem kind
(``docs/images/diff-<kind>.png``) where the kind occurs, for docs/how-it-works.md.

    python tools/diff_pictures.py [--maps oa_bases7,am_lavaarena,delta,oa_koth1] [--out DIR]

Runs ``core.collision_diff`` on each map (``<map>.obj`` render against ``<map>_clip.obj``,
Quake's player, the maps' spawns: ``tools/real_levels.py``, ``$CC_REAL_LEVELS``), takes the
largest problem of each kind over the maps, and draws it headless with levelcheck's own
inset pictures (``levelcheck/render.py``: Workbench, an orthographic view from above at a
slant, VIEW_DIRECTION, the cut above the character, faces coloured by walkability,
islands violet, traps raspberry): the render mesh on the left, the collision mesh on the
right, the same view framed on the problem. Marked on both: the problem's cells as red
squares (on the floor it is measured on, raised above a floating collision floor). Red
faces: the collision the player cannot see for ``invisible_wall``, the render wall the
character walks through for ``walk_through_wall``, the offset collision floor for
``floating`` / ``sunk``. Walls between the camera and the problem are left out
(``in_front``). Prints one caption per picture (map, where, size), each map's counts and
the kinds that occur on none of the maps. Takes minutes (four maps, two floods each).
"""

from __future__ import annotations

import argparse
import os
import pathlib
import struct
import sys
import tempfile
import zlib
from typing import NamedTuple

import numpy as np
import real_levels
from capsule_collision.core import ControllerSettings, TriangleMesh, collision_diff
from capsule_collision.core.checks.collision_diff import DIFF_KINDS
from capsule_collision.core.checks.reachability import triangle_classes
from capsule_collision.core.checks.walkability import classify_triangles
from capsule_collision.levelcheck import render as inset

ROOT = pathlib.Path(__file__).resolve().parents[1]
OUT = ROOT / "docs" / "images"
WIDTH, HEIGHT = 560, 360  # pixels, each half (render | collision)
SQUARE_FRACTION = 1.0  # of a cell: the side of a problem cell's red square (a region: one patch)
SQUARE_LIFT = 0.04  # metres above the floor the square marks (above z-fighting)
SPAN_MIN, SPAN_MAX = 8.0, 28.0  # metres across a picture: the problem's region and its air
# Steeper than levelcheck's insets (1, 0.45, -0.95): floors between brushes stay in view.
VIEW_DIRECTION = (0.2, 0.12, -1.0)
QUANTUM = 8  # of 256: a PNG channel's step (png_bytes)
OCCLUDER_GAP = 0.5  # metres nearer the camera than the problem before a wall is left out
BOX_FRACTION = 0.6  # of the picture's width: the half-side of the x-y box of faces drawn
SIDES = ("render", "collision")  # left, right
RED_SIDE = {"invisible_wall": "collision", "walk_through_wall": "render",
            "floating": "collision", "sunk": "collision"}  # whose faces of a problem are red


class Pick(NamedTuple):
    """The problem a picture shows: map name, the DiffProblem, its CollisionDiff, the render
    and collision TriangleMesh, the settings."""

    map: str
    problem: object
    diff: object
    render: TriangleMesh
    collision: TriangleMesh
    settings: ControllerSettings


class Marked(NamedTuple):
    """A mesh as levelcheck/render.py draws it (``vertices``, ``triangles``,
    ``n_triangles``): a level with the problem's squares appended."""

    vertices: np.ndarray
    triangles: np.ndarray
    n_triangles: int


def largest_problems(maps) -> tuple:
    """({kind: Pick} the largest problem of each kind over ``maps``, [(map, counts)])."""
    s = ControllerSettings(**real_levels.QUAKE_PLAYER)
    picks: dict = {}
    counts = []
    for name in maps:
        r, c = real_levels.load(name), real_levels.load(name, clip=True)
        rm, cm = TriangleMesh(r.vertices, r.triangles), TriangleMesh(c.vertices, c.triangles)
        print(f"diff_pictures: {name}: collision_diff", file=sys.stderr, flush=True)
        diff = collision_diff(rm, cm, r.spawn_feet, s)
        counts.append((name, diff.counts()))
        for p in diff.problems:
            best = picks.get(p.kind)
            if best is None or p.size > best.problem.size:
                picks[p.kind] = Pick(name, p, diff, rm, cm, s)
    return picks, counts


def squares(cells, side, lift) -> tuple:
    """(V, 3), (F, 3) of one horizontal square of ``side`` metres ``lift`` metres above each
    foot point ``cells`` (K, 3) (Z up)."""
    h = 0.5 * side
    corner = np.array([[-h, -h, 0.0], [h, -h, 0.0], [h, h, 0.0], [-h, h, 0.0]])
    v = (np.asarray(cells, float)[:, None, :] + corner + (0.0, 0.0, lift)).reshape(-1, 3)
    base = 4 * np.arange(len(cells))[:, None]
    f = np.concatenate([base + (0, 1, 2), base + (0, 2, 3)])
    return v, f


def in_front(mesh, point, s) -> np.ndarray:
    """(T,) bool: the triangles of ``mesh`` wholly nearer the camera than the problem's
    ``point`` (3,) by OCCLUDER_GAP metres (along the view's horizontal direction) that rise
    above half the character's height over it: walls that would hide it (floors stay)."""
    corners = mesh.vertices[mesh.triangles]
    h = np.asarray(VIEW_DIRECTION[:2], float)
    along = ((corners[..., :2] - np.asarray(point, float)[:2]) @ (h / np.linalg.norm(h))).max(1)
    return (along < -OCCLUDER_GAP) & (corners[..., 2].max(1) > point[2] + 0.5 * s.height)


def side_drawing(pick: Pick, side: str):
    """levelcheck's Drawing of one side (``"render"`` or ``"collision"``) of ``pick``: that
    mesh coloured by walkability and reach class, without what hides the problem
    (``in_front``), its red faces (RED_SIDE) and the problem's squares."""
    p, s = pick.problem, pick.settings
    mesh = pick.render if side == "render" else pick.collision
    reach = pick.diff.render if side == "render" else pick.diff.collision
    lift = SQUARE_LIFT + (max(p.value, 0.0) if side == "collision" else 0.0)
    v, f = squares(p.cells, SQUARE_FRACTION * pick.diff.cell_size, lift)
    keep = ~in_front(mesh, p.point, s)
    red = np.zeros(mesh.n_triangles, bool)
    if RED_SIDE.get(p.kind) == side:
        red[p.render_faces if side == "render" else p.collision_faces] = True
    tris = np.vstack([mesh.triangles[keep], f + len(mesh.vertices)])
    marked = Marked(np.vstack([mesh.vertices, v]), tris, len(tris))
    walk = np.concatenate([classify_triangles(mesh, s.max_slope_deg, up=s.up)[keep],
                           np.zeros(len(f), np.int8)])
    classes = np.concatenate([triangle_classes(reach)[keep], np.zeros(len(f), np.int8)])
    marks = np.concatenate([np.flatnonzero(red[keep]), int(keep.sum()) + np.arange(len(f))])
    return inset.Drawing(marked, walk, marks, [], [], reach=classes)


def span_of(problem) -> float:
    """Metres across the picture: the problem's region and as much air around it."""
    extent = float(np.ptp(problem.cells[:, :2], 0).max()) if len(problem.cells) else 0.0
    return float(np.clip(2.0 * extent + 4.0, SPAN_MIN, SPAN_MAX))


def draw_side(bpy, scene, pick: Pick, side: str, path: str) -> None:
    """One half of a picture into the PNG ``path`` (levelcheck's inset: build_view, render)."""
    p, s = pick.problem, pick.settings
    centre = np.asarray(p.point, float)
    view = inset.inset_view(centre, span_of(p), WIDTH, HEIGHT, VIEW_DIRECTION)
    half = BOX_FRACTION * view.width_m
    box = (centre[:2] - half, centre[:2] + half)
    words = "render: what the player sees" if side == "render" else \
        "collision: what the game collides with"
    inset.build_view(bpy, scene, side_drawing(pick, side), words, view=view,
                     cut=float(p.point[2]) + s.height + inset.CUT_MARGIN, box=box)
    inset.render(bpy, scene, path, WIDTH, HEIGHT)


def png_bytes(rgb) -> bytes:
    """A PNG of ``rgb`` (H, W, 3) uint8, top row first: each channel quantised to steps of
    QUANTUM (Workbench's studio light is smooth gradients: 3 to 4 times smaller, the same
    picture to the eye), each row filtered by "up" (PNG filter 2), zlib level 9."""
    a = (rgb // QUANTUM) * QUANTUM + QUANTUM // 2
    prev = np.vstack([np.zeros((1, *a.shape[1:]), np.uint8), a[:-1]])
    up = (a.astype(np.int16) - prev) % 256
    raw = np.concatenate([np.full((a.shape[0], 1), 2, np.uint8),
                          up.astype(np.uint8).reshape(a.shape[0], -1)], axis=1)

    def chunk(kind: bytes, data: bytes) -> bytes:
        return (struct.pack(">I", len(data)) + kind + data
                + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF))

    head = struct.pack(">IIBBBBB", a.shape[1], a.shape[0], 8, 2, 0, 0, 0)  # 8-bit RGB
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", head)
            + chunk(b"IDAT", zlib.compress(raw.tobytes(), 9)) + chunk(b"IEND", b""))


def side_by_side(bpy, left: str, right: str, out: str) -> None:
    """The PNGs ``left`` and ``right`` (same height) joined into ``out`` (``png_bytes``)."""
    halves = []
    for path in (left, right):
        image = bpy.data.images.load(path)
        w, h = image.size
        px = np.empty(w * h * 4, np.float32)
        image.pixels.foreach_get(px)
        halves.append(np.round(px.reshape(h, w, 4)[::-1, :, :3] * 255.0).astype(np.uint8))
        bpy.data.images.remove(image)
    gap = np.full((halves[0].shape[0], 4, 3), 255, np.uint8)
    with open(out, "wb") as f:
        f.write(png_bytes(np.concatenate([halves[0], gap, halves[1]], axis=1)))


def caption(kind, pick: Pick) -> str:
    """One line: map, where (metres), size."""
    p = pick.problem
    unit = "m of wall" if kind == "walk_through_wall" else "m²"
    where = ", ".join(f"{x:.1f}" for x in p.point)
    return (f"{kind}: {pick.map}, at ({where}), {p.size:.1f} {unit} "
            f"({pick.diff.counts()[kind]} on this map)")


def draw_all(picks: dict, out_dir: str) -> list:
    """Draw ``picks`` ({kind: Pick}) into ``out_dir``/diff-<kind>.png; one caption line each."""
    import bpy  # noqa: PLC0415 (after the floods: Blender's start is not in their time)

    bpy.ops.wm.read_homefile(use_empty=True)
    scene = bpy.context.scene
    scene.render.dither_intensity = 0.0  # no noise: a flat-shaded picture compresses well
    os.makedirs(out_dir, exist_ok=True)
    lines = []
    with tempfile.TemporaryDirectory() as tmp:
        for kind in (k for k in DIFF_KINDS if k in picks):
            halves = [os.path.join(tmp, f"{kind}-{side}.png") for side in SIDES]
            for side, path in zip(SIDES, halves):
                draw_side(bpy, scene, picks[kind], side, path)
            out = os.path.join(out_dir, f"diff-{kind}.png")
            side_by_side(bpy, *halves, out)
            lines.append(f"{out} ({os.path.getsize(out) // 1024} KB): "
                         f"{caption(kind, picks[kind])}")
    return lines


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--maps", default=",".join(real_levels.MAPS),
                    help="comma-separated map names (default: the four)")
    ap.add_argument("--out", default=str(OUT), help="folder of the PNGs (docs/images)")
    args = ap.parse_args(argv)
    maps = [m for m in args.maps.split(",") if m]
    unknown = sorted(set(maps) - set(real_levels.MAPS))
    if unknown or not maps:
        print(f"diff_pictures: --maps: unknown {', '.join(unknown) or '(none given)'}; known: "
              f"{', '.join(real_levels.MAPS)}", file=sys.stderr)
        return 2
    picks, counts = largest_problems(maps)
    for line in draw_all(picks, args.out):
        print(line)
    for name, c in counts:
        print(f"{name}: " + ", ".join(f"{k} {c[k]}" for k in DIFF_KINDS))
    missing = [k for k in DIFF_KINDS if k not in picks]
    print("on none of the maps: " + (", ".join(missing) if missing else "(every kind occurs)"))
    return 0

if __name__ == "__main__":
    sys.exit(main())
