"""Deterministic procedural scenes and query sets for benchmarks and tests (numpy only).

Scenes return ``(vertices (V, 3) float64, triangles (M, 3) int64)``, metres, Z up:

- ``stairs_ramps_block()``: a 20 x 12 m floor with four staircases (risers 0.10, 0.20, 0.30,
  0.45 m), six ramps (20, 30, 40, 45, 50, 60 degrees), a 0.90 m wide corridor, a 1.50 m high
  ceiling slab and a 0.05 m thin wall; faces subdivided to ~0.5 m like a level's mesh.
- ``terrain(n_cells, seed)``: a heightfield of ``2 * n_cells**2`` triangles (0.25 m cells) with
  smooth hills, flattened in the middle, with the block placed there.
- ``soup(n, seed)``: n random triangles (0.05-2 m) in a 40 m cube: worst case for a hierarchy.

Parts for hand-built scenes: ``box(lo, hi)`` (a closed box, two triangles a face),
``grid(x0, x1, y0, y1, z, cell)`` (a floor of ~cell squares) and ``merge(parts)``.

Query sets (``capsule_queries``, ``sweep_queries``) put upright capsules near random surface
points, about half of them penetrating. Everything is a pure function of its seed.
"""

from __future__ import annotations

import numpy as np

CELL = 0.25  # metres, terrain grid spacing
SUBDIV = 0.5  # metres, target edge length when subdividing block faces
# Cells per face edge are ceil(length / SUBDIV - this): an edge whose length (a computed norm)
# is a whole number of SUBDIV steps up to float rounding gets that many cells, not one more.
SUBDIV_ROUNDING = 1e-9


def _quad_grid(origin, u, v, nu: int, nv: int):
    """Planar quad origin + [0,1]u + [0,1]v split into nu x nv cells, 2 triangles each.

    Winding follows u x v (the face normal).
    """
    s = np.linspace(0.0, 1.0, nu + 1)
    t = np.linspace(0.0, 1.0, nv + 1)
    S, T = np.meshgrid(s, t, indexing="ij")
    verts = (np.asarray(origin, float) + S[..., None] * np.asarray(u, float)
             + T[..., None] * np.asarray(v, float)).reshape(-1, 3)
    idx = np.arange((nu + 1) * (nv + 1)).reshape(nu + 1, nv + 1)
    i00, i10 = idx[:-1, :-1].ravel(), idx[1:, :-1].ravel()
    i01, i11 = idx[:-1, 1:].ravel(), idx[1:, 1:].ravel()
    tris = np.concatenate([np.stack([i00, i10, i11], 1), np.stack([i00, i11, i01], 1)])
    return verts, tris


def _n(length: float) -> int:
    return max(1, int(np.ceil(abs(length) / SUBDIV - SUBDIV_ROUNDING)))


def _quad(origin, u, v):
    u = np.asarray(u, float)
    v = np.asarray(v, float)
    return _quad_grid(origin, u, v, _n(np.linalg.norm(u)), _n(np.linalg.norm(v)))


def _subdivided_box(lo, hi):
    """Closed axis-aligned box, outward-facing, subdivided."""
    x0, y0, z0 = lo
    x1, y1, z1 = hi
    dx, dy, dz = x1 - x0, y1 - y0, z1 - z0
    X, Y, Z = np.array([dx, 0, 0]), np.array([0, dy, 0]), np.array([0, 0, dz])
    return [
        _quad((x0, y0, z1), X, Y),  # top (+z)
        _quad((x0, y0, z0), Y, X),  # bottom (-z)
        _quad((x0, y0, z0), X, Z),  # front (-y)
        _quad((x0, y1, z0), Z, X),  # back (+y)
        _quad((x0, y0, z0), Z, Y),  # left (-x)
        _quad((x1, y0, z0), Y, Z),  # right (+x)
    ]


def _ramp(x0, y0, width, angle_deg, height):
    """Wedge rising along +x from (x0, y0, 0) to ``height`` at ``angle_deg``; width along y."""
    run = height / np.tan(np.radians(angle_deg))
    W = np.array([0, width, 0.0])
    slope = np.array([run, 0, height])
    parts = [
        _quad((x0, y0, 0.0), slope, W),  # sloped top: normal (-h, 0, run) direction
        _quad((x0 + run, y0, 0.0), W, np.array([0, 0, height])),  # back wall (+x)
    ]
    # Two triangular sides (-y and +y).
    a, b, c = (x0, y0, 0.0), (x0 + run, y0, 0.0), (x0 + run, y0, height)
    side0 = np.array([a, c, b])
    side1 = side0 + W
    parts.append((side0, np.array([[0, 2, 1]])))  # normal -y
    parts.append((side1, np.array([[0, 1, 2]])))  # normal +y
    return parts


def merge(parts):
    """One (vertices, triangles) from several (vertices, triangles) parts."""
    verts, tris, off = [], [], 0
    for v, t in parts:
        verts.append(np.asarray(v, float))
        tris.append(np.asarray(t, np.int64) + off)
        off += len(v)
    return np.concatenate(verts), np.concatenate(tris)


def box(lo, hi):
    """Closed axis-aligned box from corner ``lo`` to ``hi`` (metres), outward faces, each face
    two triangles."""
    x0, y0, z0 = lo
    x1, y1, z1 = hi
    v = [[x0, y0, z0], [x1, y0, z0], [x1, y1, z0], [x0, y1, z0],
         [x0, y0, z1], [x1, y0, z1], [x1, y1, z1], [x0, y1, z1]]
    t = [[0, 2, 1], [0, 3, 2], [4, 5, 6], [4, 6, 7], [0, 1, 5], [0, 5, 4], [1, 2, 6], [1, 6, 5],
         [2, 3, 7], [2, 7, 6], [3, 0, 4], [3, 4, 7]]
    return np.array(v, float), np.array(t)


def grid(x0, x1, y0, y1, z=0.0, cell=0.5):
    """Flat floor at height z subdivided into about ``cell`` m squares, normal +z."""
    nx = max(1, int(round((x1 - x0) / cell)))
    ny = max(1, int(round((y1 - y0) / cell)))
    xs, ys = np.linspace(x0, x1, nx + 1), np.linspace(y0, y1, ny + 1)
    gx, gy = np.meshgrid(xs, ys, indexing="ij")
    v = np.stack([gx.ravel(), gy.ravel(), np.full(gx.size, z)], 1)
    idx = np.arange(v.shape[0]).reshape(nx + 1, ny + 1)
    a, b = idx[:-1, :-1].ravel(), idx[1:, :-1].ravel()
    c, d = idx[1:, 1:].ravel(), idx[:-1, 1:].ravel()
    return v, np.concatenate([np.stack([a, b, c], 1), np.stack([a, c, d], 1)])


STEP_RISERS = (0.10, 0.20, 0.30, 0.45)  # metres
RAMP_ANGLES = (20.0, 30.0, 40.0, 45.0, 50.0, 60.0)  # degrees
CORRIDOR_WIDTH = 0.90  # metres
CEILING_HEIGHT = 1.50  # metres (underside)
THIN_WALL = 0.05  # metres


def stairs_ramps_block(offset=(0.0, 0.0, 0.0)):
    """The stairs-and-ramps test block (about 3k triangles), its floor's top at z = offset z."""
    parts = [_quad((0.0, 0.0, 0.0), (20.0, 0, 0), (0, 12.0, 0))]  # floor, normal +z
    # Staircases along +x at y = 0.5.. (1.5 m wide), 5 steps of 0.30 m tread each.
    for k, riser in enumerate(STEP_RISERS):
        y0 = 0.5 + 2.0 * k
        for s in range(5):
            x0 = 1.0 + 0.3 * s
            parts += _subdivided_box((x0, y0, 0.0), (2.5, y0 + 1.5, riser * (s + 1)))
    # Ramps rising to 1.0 m along +x at x = 4.
    for k, ang in enumerate(RAMP_ANGLES):
        parts += _ramp(4.0, 0.5 + 1.9 * k, 1.5, ang, 1.0)
    # Corridor: two 2.5 m walls, 4 m long, 0.90 m apart (inner faces), at x 9..13.
    parts += _subdivided_box((9.0, 1.0, 0.0), (13.0, 1.2, 2.5))
    parts += _subdivided_box((9.0, 1.2 + CORRIDOR_WIDTH, 0.0),
                             (13.0, 1.4 + CORRIDOR_WIDTH, 2.5))
    # Low ceiling: 0.2 m slab, underside at 1.50 m, over x 9..13, y 4..7.
    parts += _subdivided_box((9.0, 4.0, CEILING_HEIGHT), (13.0, 7.0, CEILING_HEIGHT + 0.2))
    # Thin wall: 0.05 m thick, 2.5 m high, 3 m long.
    parts += _subdivided_box((15.0, 2.0, 0.0), (15.0 + THIN_WALL, 5.0, 2.5))
    v, t = merge(parts)
    return v + np.asarray(offset, float), t


def terrain(n_cells: int, seed: int = 0):
    """Heightfield of 2*n_cells^2 triangles (CELL m spacing) with the block in the middle."""
    rng = np.random.default_rng(seed)
    size = n_cells * CELL
    g = np.arange(n_cells + 1) * CELL
    X, Y = np.meshgrid(g, g, indexing="ij")
    Z = np.zeros_like(X)
    for _ in range(6):
        k = rng.uniform(0.02, 0.3, 2)
        ph = rng.uniform(0, 2 * np.pi, 2)
        amp = rng.uniform(0.2, 1.2) / (1.0 + 3.0 * k.max())
        Z += amp * np.sin(k[0] * X + ph[0]) * np.cos(k[1] * Y + ph[1])
    Z += rng.uniform(-0.02, 0.02, Z.shape)  # small bumps: no two neighbours coplanar
    # Flatten a 24 x 16 m pad in the middle and put the block on it.
    cx, cy = size / 2, size / 2
    d = np.maximum(np.maximum(np.abs(X - cx) - 12.0, np.abs(Y - cy) - 8.0), 0.0)
    w = np.clip(d / 6.0, 0.0, 1.0)
    Z = Z * w * w * (3 - 2 * w)
    idx = np.arange((n_cells + 1) ** 2).reshape(n_cells + 1, n_cells + 1)
    i00, i10 = idx[:-1, :-1].ravel(), idx[1:, :-1].ravel()
    i01, i11 = idx[:-1, 1:].ravel(), idx[1:, 1:].ravel()
    tris = np.concatenate([np.stack([i00, i10, i11], 1), np.stack([i00, i11, i01], 1)])
    verts = np.stack([X.ravel(), Y.ravel(), Z.ravel()], 1)
    bv, bt = stairs_ramps_block((cx - 10.0, cy - 6.0, 0.0))
    return merge([(verts, tris), (bv, bt)])


def _heightfield(size_x, size_y, nx, ny, seed, amp=1.0, flat=None):
    """(vertices, triangles) of a rolling heightfield over [0, size_x] x [0, size_y] with
    nx x ny quads; ``flat`` (x0, y0, x1, y1): a pad at z = 0 (blended over 6 m)."""
    rng = np.random.default_rng(seed)
    X, Y = np.meshgrid(np.linspace(0.0, size_x, nx + 1), np.linspace(0.0, size_y, ny + 1),
                       indexing="ij")
    Z = np.zeros_like(X)
    for _ in range(6):
        k = rng.uniform(0.01, 0.1, 2)
        ph = rng.uniform(0, 2 * np.pi, 2)
        Z += amp * rng.uniform(0.5, 2.0) * np.sin(k[0] * X + ph[0]) * np.cos(k[1] * Y + ph[1])
    if flat is not None:
        x0, y0, x1, y1 = flat
        d = np.maximum(np.maximum(np.maximum(x0 - X, X - x1), np.maximum(y0 - Y, Y - y1)), 0.0)
        w = np.clip(d / 6.0, 0.0, 1.0)
        Z = Z * w * w * (3 - 2 * w)
    idx = np.arange((nx + 1) * (ny + 1)).reshape(nx + 1, ny + 1)
    i00, i10 = idx[:-1, :-1].ravel(), idx[1:, :-1].ravel()
    i01, i11 = idx[:-1, 1:].ravel(), idx[1:, 1:].ravel()
    tris = np.concatenate([np.stack([i00, i10, i11], 1), np.stack([i00, i11, i01], 1)])
    return np.stack([X.ravel(), Y.ravel(), Z.ravel()], 1), tris


def _walls(x0, y0, x1, y1, height, thick=0.3):
    """Four closed wall boxes just outside the rectangle [x0, x1] x [y0, y1]."""
    return [box((x0 - thick, y0 - thick, 0.0), (x1 + thick, y0, height)),
            box((x0 - thick, y1, 0.0), (x1 + thick, y1 + thick, height)),
            box((x0 - thick, y0, 0.0), (x0, y1, height)),
            box((x1, y0, 0.0), (x1 + thick, y1, height))]


def huge_bounds_level(seed: int = 4):
    """About 40k triangles over 420 x 490 m: rolling terrain and 24 big buildings around a
    walled yard (26 x 18 m, walls 5 m) holding the stairs-and-ramps block (a few hundred m^2
    a spawn in the yard reaches). Returns (vertices, triangles) and a spawn foot point (3,)
    in the yard."""
    rng = np.random.default_rng(seed)
    sx, sy = 420.0, 490.0
    yard = (200.0, 240.0, 226.0, 258.0)
    parts = [_heightfield(sx, sy, 130, 140, seed, flat=(yard[0] - 2, yard[1] - 2,
                                                        yard[2] + 2, yard[3] + 2))]
    parts += _walls(*yard, 5.0)
    parts.append(stairs_ramps_block((yard[0] + 3.0, yard[1] + 3.0, 0.0)))
    for _ in range(24):  # big buildings, away from the yard
        while True:
            x, y = rng.uniform(20.0, sx - 60.0), rng.uniform(20.0, sy - 60.0)
            if x > yard[2] + 10 or x + 40 < yard[0] - 10 or y > yard[3] + 10 or \
                    y + 40 < yard[1] - 10:
                break
        w, d, h = rng.uniform(10.0, 40.0, 2).tolist() + [rng.uniform(8.0, 30.0)]
        parts.append(box((x, y, -2.0), (x + w, y + d, h)))
    v, t = merge(parts)
    return v, t, np.array([yard[0] + 24.0, yard[1] + 16.0, 0.0])


def open_arena(seed: int = 5):
    """About 70k triangles: a 160 x 160 m walled arena of rolling ground (25,000 m^2 a spawn
    reaches) with the stairs-and-ramps block in the middle. Returns (vertices, triangles)
    and a spawn foot point (3,) (on the pad beside the block)."""
    size = 160.0
    mid = 0.5 * size
    pad = (mid - 12.0, mid - 8.0, mid + 12.0, mid + 8.0)
    parts = [_heightfield(size, size, 185, 185, seed, amp=0.4, flat=pad)]
    parts += _walls(0.0, 0.0, size, size, 6.0)
    parts.append(stairs_ramps_block((mid - 10.0, mid - 6.0, 0.0)))
    v, t = merge(parts)
    return v, t, np.array([mid - 11.0, mid - 7.0, 0.0])


def soup(n: int, seed: int = 0, extent: float = 40.0):
    """n random triangles: centres uniform in a cube, sizes 0.05-2 m, random orientation."""
    rng = np.random.default_rng(seed)
    centres = rng.uniform(0.0, extent, (n, 1, 3))
    size = np.exp(rng.uniform(np.log(0.05), np.log(2.0), (n, 1, 1)))
    verts = (centres + size * rng.uniform(-0.5, 0.5, (n, 3, 3))).reshape(-1, 3)
    return verts, np.arange(3 * n, dtype=np.int64).reshape(n, 3)


def _brush(lo, hi):
    """A closed box brush, 12 outward triangles (as a brush-map compiler writes it)."""
    x0, y0, z0 = lo
    x1, y1, z1 = hi
    v = np.array([[x, y, z] for x in (x0, x1) for y in (y0, y1) for z in (z0, z1)], float)
    quads = [(0, 2, 6, 4), (1, 5, 7, 3), (0, 4, 5, 1), (2, 3, 7, 6), (0, 1, 3, 2),
             (4, 6, 7, 5)]  # -z, +z, -y, +y, -x, +x, counter-clockwise from outside
    t = [(a, b, c) for a, b, c, d in quads] + [(a, c, d) for a, b, c, d in quads]
    return v, np.array(t, np.int64)


def _wedge(x0, y0, x1, y1, z0, z1):
    """A ramp brush rising along +x from z0 at x0 to z1 at x1 (sloped top, flat bottom)."""
    v = np.array([[x0, y0, z0], [x1, y0, z0], [x1, y1, z0], [x0, y1, z0],
                  [x1, y0, z1], [x1, y1, z1]], float)
    t = [(0, 3, 2), (0, 2, 1), (0, 1, 4), (3, 5, 2), (1, 2, 5), (1, 5, 4), (0, 4, 5),
         (0, 5, 3)]
    return v, np.array(t, np.int64)


def brush_map(rooms: int = 3, ramps: bool = True, high: float = 384.0, pillars: int = 4):
    """A Quake-style brush map, Z up, in Quake units (a room is 512 x 512 x ``high``; walls,
    floors and ceilings are 16-unit brushes with every side kept, doorways 128 wide and 160
    high; a staircase of 8 x 16-unit steps, ``pillars`` 48-unit pillars and, with ``ramps``,
    a ramp in each room). Returns (vertices, triangles). Its walls (two sides each) and
    pillars outweigh its floors facing any one way, as in a real brush map."""
    size, thick = 512.0, 16.0
    span = rooms * size
    parts = [_brush((0, 0, -thick), (span, span, 0)), _brush((0, 0, high), (span, span,
                                                                            high + thick))]
    for k in range(rooms + 1):  # walls along y (at x = k * size) and along x, with doorways
        c = k * size
        for a in range(rooms):
            lo, hi = a * size, (a + 1) * size
            door = 0 < k < rooms
            for wall in ((c - thick / 2, lo, c + thick / 2, hi), (lo, c - thick / 2, hi,
                                                                 c + thick / 2)):
                x0, y0, x1, y1 = wall
                if not door:
                    parts.append(_brush((x0, y0, 0), (x1, y1, high)))
                    continue
                along_x = x1 - x0 > y1 - y0
                mid, half = 0.5 * (lo + hi), 64.0
                if along_x:
                    parts += [_brush((x0, y0, 0), (mid - half, y1, high)),
                              _brush((mid + half, y0, 0), (x1, y1, high)),
                              _brush((mid - half, y0, 160), (mid + half, y1, high))]
                else:
                    parts += [_brush((x0, y0, 0), (x1, mid - half, high)),
                              _brush((x0, mid + half, 0), (x1, y1, high)),
                              _brush((x0, mid - half, 160), (x1, mid + half, high))]
    for i in range(rooms):
        for j in range(rooms):
            x, y = i * size + 64, j * size + 64
            parts += [_brush((x + 32 * s, y, 0), (x + 32 * s + 32, y + 96, 16 * (s + 1)))
                      for s in range(8)]
            if ramps:
                parts.append(_wedge(x + 96, y + 320, x + 352, y + 416, 0, 96))
            for p in range(pillars):
                px, py = x + 320 + 80 * (p % 2), y + 96 + 80 * (p // 2)
                parts.append(_brush((px, py, 0), (px + 48, py + 48, high)))
    return merge(parts)


SCENES = {
    "stairs_ramps": lambda: stairs_ramps_block(),
    "terrain_100k": lambda: terrain(224, seed=1),
    "terrain_1M": lambda: terrain(700, seed=2),
    "soup": lambda: soup(100_000, seed=3),
}
QUICK_SCENES = {
    "stairs_ramps": lambda: stairs_ramps_block(),
    "terrain_small": lambda: terrain(40, seed=1),
    "soup_small": lambda: soup(2_000, seed=3, extent=12.0),
}


def _surface_samples(vertices, triangles, n, rng):
    """n random points on random triangles (area-weighted) with their unit normals."""
    tri = vertices[triangles]
    cr = np.cross(tri[:, 1] - tri[:, 0], tri[:, 2] - tri[:, 0])
    area = np.sqrt(np.einsum("ij,ij->i", cr, cr))
    p = area / area.sum()
    pick = rng.choice(len(triangles), size=n, p=p)
    u, v = rng.uniform(0, 1, (2, n))
    flip = u + v > 1
    u[flip], v[flip] = 1 - u[flip], 1 - v[flip]
    t = tri[pick]
    pts = t[:, 0] + u[:, None] * (t[:, 1] - t[:, 0]) + v[:, None] * (t[:, 2] - t[:, 0])
    nrm = cr[pick] / area[pick, None]
    return pts, nrm


def capsule_queries(vertices, triangles, n: int = 10_000, seed: int = 0, height: float = 1.8):
    """n upright capsules (radius 0.30-0.50, ``height`` tall) near random surface points.

    The segment passes within r*(1 + delta), delta uniform in [-0.5, 0.5], of a surface point
    along its normal, so about half the capsules penetrate. Returns (a, b, radius) with
    a, b (n, 3) the segment ends (a below b) and radius (n,).
    """
    rng = np.random.default_rng(seed)
    pts, nrm = _surface_samples(vertices, triangles, n, rng)
    r = rng.uniform(0.30, 0.50, n)
    delta = rng.uniform(-0.5, 0.5, n)
    centre = pts + nrm * (r * (1.0 + delta))[:, None]
    length = height - 2.0 * r
    # The segment's point nearest the surface point is ``centre``: floors hold the bottom
    # end, ceilings the top end, walls a random point of the segment.
    u = np.where(nrm[:, 2] > 0.3, 0.0, np.where(nrm[:, 2] < -0.3, 1.0, rng.uniform(0.0, 1.0, n)))
    up = np.array([0.0, 0.0, 1.0])
    a = centre - (u * length)[:, None] * up
    b = a + length[:, None] * up
    return a, b, r


def sweep_queries(vertices, triangles, n: int = 10_000, seed: int = 0, height: float = 1.8):
    """n upright capsules starting near surfaces, moved 0.1-2 m, about half towards the surface.

    Returns (a, b, radius, displacement).
    """
    rng = np.random.default_rng(seed + 7919)
    pts, nrm = _surface_samples(vertices, triangles, n, rng)
    r = rng.uniform(0.30, 0.50, n)
    gap = rng.uniform(0.02, 1.0, n)
    centre = pts + nrm * (r + gap)[:, None]
    length = height - 2.0 * r
    # The segment's point nearest the surface point is ``centre``: floors hold the bottom
    # end, ceilings the top end, walls a random point of the segment.
    u = np.where(nrm[:, 2] > 0.3, 0.0, np.where(nrm[:, 2] < -0.3, 1.0, rng.uniform(0.0, 1.0, n)))
    up = np.array([0.0, 0.0, 1.0])
    a = centre - (u * length)[:, None] * up
    b = a + length[:, None] * up
    direction = rng.normal(size=(n, 3))
    direction /= np.linalg.norm(direction, axis=1)[:, None]
    towards = rng.uniform(0, 1, n) < 0.5
    direction[towards] = -nrm[towards] + 0.5 * direction[towards]
    direction /= np.linalg.norm(direction, axis=1)[:, None]
    dist = rng.uniform(0.1, 2.0, n)
    return a, b, r, direction * dist[:, None]
