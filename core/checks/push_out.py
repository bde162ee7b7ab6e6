"""Push-out: the shortest move that frees a capsule without leaving through another solid.

A capsule placed in a level penetrates some triangles, or sits wholly inside a closed solid.
Its deepest contact's ``normal * depth`` separates it from that one triangle only: a capsule
0.45 m into a wall box touches the wall's front face from behind (its axis is inside the wall),
so that contact pushes it 0.25 m *deeper*; a capsule inside a crate on a floor crosses the
crate's top face with its lower end farther from it, so that contact pushes it down through
the floor. ``push_out`` instead tries a set of directions and, along each, finds the exact
shortest move that frees the capsule, refusing moves that leave through another solid:

1. Directions (``candidate_directions``): the contacts' normals (deepest first), their
   depth-weighted mean, and the six world axes (+z first).
2. Along a direction ``u`` (``exit_along``): rays from points of the capsule's axis (its two
   ends and its middle) meet faces from behind (the axis is inside a closed solid and leaves
   it) or from the front (the axis would enter a solid). The move must take every axis point
   past the faces it is behind (``lower``) and stop before any axis point enters a face
   (``upper``): a capsule inside a crate on a floor cannot leave downwards, because its axis
   would pass the floor's top face from the front, where the crate's bottom is; outward
   winding tells front from back (Blender's and every engine's convention).
3. Every triangle near the path blocks an open interval of move lengths (the set of ``d``
   where the capsule moved by ``d * u`` is closer than its radius to a convex triangle is an
   interval): its ends are the exact swept first contacts moving forwards from the start and
   backwards from the end of the range (``sweep_capsule_triangle_many``, batched). The first
   free length at or after ``lower`` is found by jumping to the latest end of the intervals
   that block the current length.
4. The shortest valid length over all directions wins (ties: the earlier direction). Once
   one direction has a way out, the others only need searching up to it: they are decided
   together (``exits_within``: one box query, one batched ray test and two batched sweeps),
   with rays that short, so a move that ends free but still inside a closed solid (whose
   exit lies farther on) is refused by a ray from its end (``inside_along``). When the
   winner is longer than ``max_distance`` (default: the capsule's height), or no direction is
   valid, the capsule is *buried*: ``distance`` is then its depth, the shortest way out found
   (inf when none).

Exact cases (tests/core/test_push_out.py): 0.45 m into a wall box gives 0.45 m out of the
wall; inside a crate on a floor gives out through the crate's side or top, never down; at
the centre of a 20 m closed cube gives buried, 10.35 m deep for a 0.35 m radius.

Moving by ``direction * distance`` leaves the capsule exactly touching its last obstacle
(touching is not a contact); add ``CONTACT_SLOP`` to separate under any rounding.
World space, metres.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ..geometry.shapes import Capsule
from ..geometry.sweep import sweep_capsule_triangle_many
from ..geometry.validate import as_nonnegative
from ..mesh.rays import ray_triangle_many
from ..mesh.solids import enclosing_solids

# Contact normals tried as directions (the deepest ones first); the axes always follow.
MAX_CONTACT_DIRECTIONS = 8
# Decimals to which two contact normals must agree to count as one direction.
DIRECTION_DECIMALS = 9
# The world axes, +z first (out of a floor is the likeliest way out), then x, y, down.
AXES = np.array([(0, 0, 1), (1, 0, 0), (-1, 0, 0), (0, 1, 0), (0, -1, 0), (0, 0, -1)], float)
# Points of the axis whose rays decide inside / entering: the ends and the middle.
AXIS_FRACTIONS = (0.0, 0.5, 1.0)


class PushOut(NamedTuple):
    """How to free a capsule.

    direction : (3,) float64 unit vector (zeros when the capsule is clear, or when no way
        out was found); distance : float, metres to move along ``direction`` (0 when clear;
        when ``buried``, the depth: the shortest way out found, inf when none); buried :
        bool, the shortest way out is longer than the allowed push (or there is none).
    """

    direction: np.ndarray
    distance: float
    buried: bool

    @property
    def vector(self) -> np.ndarray:
        """(3,) metres: ``direction * distance`` (zeros when no finite way out exists)."""
        if not np.isfinite(self.distance):
            return np.zeros(3)
        return self.direction * self.distance


class Exit(NamedTuple):
    """One direction's answer: the first free move length (inf when none is valid) and the
    bounds the axis rays set (``lower``: past the faces the axis is behind; ``upper``: before
    the first face it would enter)."""

    distance: float
    lower: float
    upper: float


CLEAR = PushOut(np.zeros(3), 0.0, False)


def push_out(mesh, capsule: Capsule, max_distance=None) -> PushOut:
    """The shortest move of ``capsule`` out of ``mesh`` (see the module docstring).

    mesh : core.TriangleMesh (or a mesh with the same queries), world metres, outward winding
    capsule : Capsule, metres
    max_distance : metres, >= 0: longer ways out mean the capsule is buried (default: the
        capsule's height, 2 radius + segment length)

    Returns ``PushOut``; ``CLEAR`` (zero direction and distance) when the capsule penetrates
    nothing and is not inside a closed solid (``core.mesh.solids.enclosing_solids``).
    ValueError for a non-Capsule or a bad limit.
    """
    if not isinstance(capsule, Capsule):
        raise ValueError(f"capsule must be a Capsule, got {type(capsule).__name__}")
    height = capsule.segment_length + 2.0 * capsule.radius
    limit = height if max_distance is None else as_nonnegative(max_distance, "max_distance")
    contacts = mesh.capsule_contacts(capsule)
    samples = axis_points(capsule)
    if not contacts and enclosing_solids(mesh, samples[1:2])[0] < 0:  # core.mesh.solids
        return CLEAR  # touches nothing and is in no closed solid
    directions = candidate_directions(contacts)
    at_start = mesh.penetrating_triangles(capsule)
    best_u, best_d = np.zeros(3), np.inf
    for k, u in enumerate(directions):
        if best_d <= 0.0:  # already free where it stands (touching a face): nothing is shorter
            break
        if np.isfinite(best_d):  # only a shorter way out can win: the rest at once, within it
            d = exits_within(mesh, capsule, samples, directions[k:], best_d, at_start)
            j = int(np.argmin(d))  # ties: the earlier direction
            if d[j] < best_d:
                best_u, best_d = directions[k + j], float(d[j])
            break
        d = exit_along(mesh, capsule, samples, u, at_start).distance
        if d < best_d:
            best_u, best_d = u, d
    if not np.isfinite(best_d):
        return PushOut(np.zeros(3), np.inf, True)
    return PushOut(best_u, float(best_d), bool(best_d > limit))


def axis_points(capsule: Capsule) -> np.ndarray:
    """(3, 3) points of the capsule's axis at ``AXIS_FRACTIONS`` (a, middle, b), metres."""
    f = np.asarray(AXIS_FRACTIONS)[:, None]
    return capsule.a + f * (capsule.b - capsule.a)


def candidate_directions(contacts) -> np.ndarray:
    """(K, 3) unit directions to try, in order: the contacts' normals (deepest first, equal
    ones once, at most MAX_CONTACT_DIRECTIONS), their depth-weighted mean, the world axes."""
    out = []
    if contacts:
        normals = np.array([c.normal for c in contacts], float)
        depths = np.array([c.depth for c in contacts], float)
        _, first = np.unique(np.round(normals, DIRECTION_DECIMALS), axis=0, return_index=True)
        out.append(normals[np.sort(first)][:MAX_CONTACT_DIRECTIONS])
        mean = depths @ normals
        length = float(np.sqrt(mean @ mean))
        if length > 0.0:
            out.append((mean / length)[None])
    out.append(AXES)
    return np.concatenate(out)


def inside_closed_solid(mesh, points, up=(0.0, 0.0, 1.0)) -> np.ndarray:
    """(K,) bool: the first face straight ``up`` from each point is seen from behind (its
    outward normal points along the ray), so the point lies inside a closed solid."""
    u = np.asarray(up, float)
    hits = mesh.raycast_many(points, np.tile(u, (len(points), 1)))
    tri = hits.triangle
    facing = np.where(tri >= 0, mesh.normals[np.maximum(tri, 0)] @ u, -1.0)
    return (tri >= 0) & (facing > 0.0)


def ray_bounds(mesh, samples, u, reach: float) -> tuple[float, float]:
    """(lower, upper) move lengths along ``u`` set by rays from the axis ``samples`` (K, 3).

    Every face a ray meets within ``reach`` metres is a hit from behind (``normal . u > 0``:
    the axis point leaves a solid) or from the front (it would enter one). ``upper`` is the
    nearest front hit of any ray (inf: none); ``lower`` the farthest back hit at or before
    ``upper`` (0: none), which the move must pass. Zero-area triangles are never hit.
    """
    ends = samples + reach * u
    cand = mesh.triangles_in_aabb(np.minimum(samples, ends).min(0),
                                  np.maximum(samples, ends).max(0))
    lower, upper = ray_limits(mesh, cand, samples, np.asarray(u, float)[None], reach)
    return float(lower[0]), float(upper[0])


def ray_limits(mesh, cand, samples, directions, reach: float):
    """``ray_bounds`` for K directions (K, 3) at once over candidate triangles ``cand``:
    (lower (K,), upper (K,))."""
    k, s, c = directions.shape[0], samples.shape[0], cand.size
    if not c:
        return np.zeros(k), np.full(k, np.inf)
    corners = mesh.vertices[mesh.triangles[cand]]
    di = np.repeat(np.arange(k), s * c)
    si = np.tile(np.repeat(np.arange(s), c), k)
    ci = np.tile(np.arange(c), k * s)
    t, hit = ray_triangle_many(samples[si], directions[di], corners[ci, 0], corners[ci, 1],
                               corners[ci, 2])
    facing = np.einsum("ij,ij->i", mesh.normals[cand][ci], directions[di])
    hit &= (t >= 0.0) & (t <= reach) & (facing != 0.0)
    upper = np.where(hit & (facing < 0.0), t, np.inf).reshape(k, -1).min(axis=1)
    back = hit & (facing > 0.0) & (t <= upper[di])
    lower = np.where(back, t, 0.0).reshape(k, -1).max(axis=1)
    return lower, upper


def blocked_intervals(mesh, cand, capsule: Capsule, directions, length: float, at_start):
    """(enter (K, C), leave (K, C)) move lengths along each of K ``directions`` between which
    each candidate triangle blocks the capsule (open intervals; triangles it penetrates at
    the start, ``at_start``, get ``enter = -1``; ``enter = inf``: never within ``length``).
    Exact swept contacts forwards from the start and backwards from ``length``, batched; a
    triangle still penetrated at ``length`` leaves at ``length``."""
    a, b, r = capsule.a, capsule.b, capsule.radius
    k, c = directions.shape[0], cand.size
    corners = np.tile(mesh.vertices[mesh.triangles[cand]], (k, 1, 1))
    v = np.repeat(directions * length, c, axis=0)
    t_fwd = sweep_capsule_triangle_many(a, b, r, v, corners[:, 0], corners[:, 1],
                                        corners[:, 2])[0]
    t_back = sweep_capsule_triangle_many(a + v, b + v, r, -v, corners[:, 0], corners[:, 1],
                                         corners[:, 2])[0]
    enter = (t_fwd * length).reshape(k, c)
    leave = ((1.0 - t_back) * length).reshape(k, c)
    enter[:, np.isin(cand, at_start)] = -1.0
    return enter, leave


def first_free(enter, leave, lower: float) -> float:
    """The least length >= ``lower`` inside none of the open intervals (enter, leave)."""
    near = np.isfinite(enter)
    enter, leave = enter[near], leave[near]
    d = lower
    for _ in range(enter.size + 1):  # each pass jumps past at least one interval
        blocked = (enter < d) & (d < leave)
        if not blocked.any():
            break
        d = float(leave[blocked].max())
    return d


def exit_along(mesh, capsule: Capsule, samples, u, at_start) -> Exit:
    """The shortest valid move of ``capsule`` along unit ``u`` (see the module docstring):
    ``Exit.distance`` is inf when the capsule cannot get free before its axis enters a face
    or before leaving the level's bounds. ``at_start``: triangles it penetrates now."""
    u = np.asarray(u, float)
    reach = reach_past_level(mesh, capsule, u)
    lower, upper = ray_bounds(mesh, samples, u, reach)
    if lower >= upper:
        return Exit(np.inf, lower, upper)
    length = min(upper, reach)
    v = length * u
    lo, hi = capsule.aabb()
    cand = mesh.triangles_in_aabb(np.minimum(lo, lo + v), np.maximum(hi, hi + v))
    enter, leave = blocked_intervals(mesh, cand, capsule, u[None], length, at_start)
    d = first_free(enter[0], leave[0], lower)
    return Exit(np.inf if d >= length else d, lower, upper)


def exits_within(mesh, capsule: Capsule, samples, directions, limit: float, at_start):
    """(K,) shortest valid moves along K unit ``directions`` shorter than ``limit`` metres
    (inf where none is): every direction at once, over the triangles within ``limit`` of
    the capsule. Rays reach ``limit`` only, so a move that ends free but still inside a
    closed solid (its exit farther on) is caught by ``inside_along`` at its end."""
    lo, hi = capsule.aabb()
    cand = mesh.triangles_in_aabb(lo - limit, hi + limit)
    lower, upper = ray_limits(mesh, cand, samples, directions, limit)
    enter, leave = blocked_intervals(mesh, cand, capsule, directions, limit, at_start)
    d = np.array([first_free(enter[k], leave[k], lower[k]) for k in range(len(directions))])
    d[(d >= np.minimum(upper, limit)) | (lower >= upper)] = np.inf
    ok = np.flatnonzero(np.isfinite(d))
    if ok.size:
        d[ok[inside_along(mesh, samples, directions[ok], d[ok])]] = np.inf
    return d


def inside_along(mesh, samples, directions, lengths) -> np.ndarray:
    """(K,) bool: after moving by ``lengths`` (K,) along ``directions`` (K, 3), some axis
    sample's first face straight on along its direction is seen from behind (inside)."""
    k, s = directions.shape[0], samples.shape[0]
    origins = (samples[None] + (lengths[:, None] * directions)[:, None]).reshape(-1, 3)
    rays = np.repeat(directions, s, axis=0)
    tri = mesh.raycast_many(origins, rays).triangle
    facing = np.einsum("ij,ij->i", mesh.normals[np.maximum(tri, 0)], rays)
    return ((tri >= 0) & (facing > 0.0)).reshape(k, s).any(axis=1)


def reach_past_level(mesh, capsule: Capsule, u) -> float:
    """Metres along ``u`` after which the capsule lies wholly beyond the level's bounds
    (nothing can block it there): the farthest exit of its end points from the mesh's box,
    plus its radius and its segment's length, plus one metre so the range ends in the clear."""
    lo, hi = mesh.aabb
    ends = np.stack([capsule.a, capsule.b])
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.where(u > 0.0, (hi - ends) / u, np.where(u < 0.0, (lo - ends) / u, np.inf))
    exits = np.where(np.isfinite(t), t, np.inf).min(axis=1)
    far = float(np.maximum(exits, 0.0).max())
    return far + capsule.radius + capsule.segment_length + 1.0
