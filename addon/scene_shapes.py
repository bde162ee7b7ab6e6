"""Reading capsules and walk paths from a Blender scene into ``core`` shapes (world metres).

Used by ``scene_data`` (which re-exports ``capsule_of``, ``path_points`` and
``spawn_objects`` for its callers), the operators, the live check and the pipeline CLI.
"""

from __future__ import annotations

import numpy as np

from ..core import Capsule


def world_points(pos32: np.ndarray, matrix, unit_scale: float) -> tuple[np.ndarray, bool]:
    """(V, 3) float64 world metres of object-space positions ``pos32`` (V, 3) under
    ``matrix`` (4 x 4, Blender units) and ``unit_scale`` (metres per unit); and whether the
    matrix mirrors (negative determinant: triangles must flip to keep their normals out)."""
    m = np.array(matrix, dtype=np.float64)
    rot = m[:3, :3]
    out = pos32.astype(np.float64) @ rot.T
    out += m[:3, 3]
    if unit_scale != 1.0:
        out *= unit_scale
    return out, bool(np.linalg.det(rot) < 0.0)


def spawn_objects(scene) -> list:
    """The scene's capsules marked as spawns (``capsule_collision.spawn``), by name: where
    Reachability floods from (``scene_data.scene_checks`` gives the CLI the same flag)."""
    def is_spawn(ob):
        pg = getattr(ob, "capsule_collision", None)
        return pg is not None and pg.role == "CAPSULE" and pg.spawn

    return sorted((ob for ob in scene.objects if is_spawn(ob)), key=lambda o: o.name)


def spawn_feet(objects, unit_scale: float) -> np.ndarray:
    """(K, 3) world metres: the foot (origin) of each capsule object, as ``scene_checks``
    places a capsule's foot."""
    feet = [np.array(ob.matrix_world, dtype=np.float64)[:3, 3] * unit_scale for ob in objects]
    return np.asarray(feet, np.float64).reshape(-1, 3)


def capsule_of(obj, unit_scale: float) -> Capsule:
    """The capsule an Empty stands for, in world metres: foot = origin, axis = local Z.

    Radius and height come from ``obj.capsule_collision`` (Blender units), scaled by the
    object's scale (radius by the larger of the X/Y scales, height by the Z scale) and by
    ``unit_scale``. ValueError naming the object when it carries no capsule, the sizes are
    invalid (a radius of 0 included) or its Z scale is negative (a mirrored capsule).
    """
    pg = getattr(obj, "capsule_collision", None)
    if pg is None or not hasattr(pg, "radius"):
        raise ValueError(f"object {obj.name!r} is not a capsule (no capsule properties)")
    m = np.array(obj.matrix_world, dtype=np.float64)
    cols = np.linalg.norm(m[:3, :3], axis=0)
    if cols[2] == 0.0:
        raise ValueError(f"capsule {obj.name!r} has zero scale along its axis")
    scale_z = float(getattr(obj, "scale", (1.0, 1.0, 1.0))[2])
    if scale_z < 0.0:  # a mirror: the capsule would hang down from its foot, upside down
        raise ValueError(f"capsule {obj.name!r} has a negative Z scale ({scale_z:g}): its "
                         f"axis would point down from its foot; make Scale Z positive "
                         f"(rotate the capsule to tilt it)")
    radius = float(pg.radius) * float(max(cols[0], cols[1])) * unit_scale
    height = float(pg.height) * float(cols[2]) * unit_scale
    foot = m[:3, 3] * unit_scale
    up = m[:3, 2] / cols[2]
    try:
        return Capsule.upright(foot, height, radius, up=up)
    except ValueError as exc:
        raise ValueError(f"capsule {obj.name!r}: {exc}") from exc


def _ordered_chain(n_vert: int, edges: np.ndarray, name: str) -> np.ndarray:
    """Vertex order of a single open or closed polyline given its edges (E, 2)."""
    if edges.shape[0] == 0:
        return np.arange(n_vert)
    used = np.unique(edges)
    degree = np.bincount(edges.ravel(), minlength=n_vert)
    if (degree > 2).any():
        raise ValueError(f"path {name!r} branches (a vertex with more than two edges)")
    ends = np.flatnonzero(degree == 1)
    start = int(ends[0]) if ends.size else int(used[0])
    nbrs: dict[int, list[int]] = {}
    for a, b in edges.tolist():
        nbrs.setdefault(a, []).append(b)
        nbrs.setdefault(b, []).append(a)
    order = [start]
    prev = -1
    cur = start
    for _ in range(used.size):  # capped: at most one step per vertex
        nxt = [v for v in nbrs[cur] if v != prev]
        if not nxt or nxt[0] == start:
            break
        prev, cur = cur, nxt[0]
        order.append(cur)
    if len(order) != used.size:
        raise ValueError(f"path {name!r} has separate pieces: use one connected polyline")
    return np.array(order)


def path_points(obj, depsgraph, unit_scale: float) -> np.ndarray:
    """(N, 3) float64 world metres along a path object, N >= 2.

    A curve object (any spline type) is evaluated (its resolution, modifiers) into its
    polyline; a mesh object is an ordered polyline: its vertices in edge order from one end
    (vertex order when it has no edges). ValueError for other types, a branching or broken
    polyline, or fewer than 2 points.
    """
    if obj.type not in {"CURVE", "MESH"}:
        raise ValueError(f"path {obj.name!r} must be a curve or a mesh polyline, "
                         f"not {obj.type.lower()}")
    ev = obj.evaluated_get(depsgraph)
    me = ev.to_mesh()
    try:
        n = len(me.vertices)
        pos = np.empty(n * 3, dtype=np.float32)
        if n:
            me.attributes["position"].data.foreach_get("vector", pos)
        edges = np.empty(len(me.edges) * 2, dtype=np.int32)
        if len(me.edges):
            me.edges.foreach_get("vertices", edges)
        if len(me.polygons):
            raise ValueError(f"path {obj.name!r} has faces: use a curve without bevel or a "
                             "mesh of edges only")
        order = _ordered_chain(n, edges.reshape(-1, 2), obj.name)
        pts, _ = world_points(pos.reshape(-1, 3)[order], ev.matrix_world, unit_scale)
    finally:
        ev.to_mesh_clear()
    if pts.shape[0] < 2:
        raise ValueError(f"path {obj.name!r} has {pts.shape[0]} point(s); a walk needs at "
                         "least 2")
    return pts
