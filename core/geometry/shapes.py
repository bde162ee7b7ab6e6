"""Shapes and query results: ``Capsule``, ``Contact``, ``Hit``, and the batched results
``ContactBatch``, ``SweepBatch`` and ``Hood`` (cached candidate triangles).

Conventions (docs/decisions.md): metres, Z up; a capsule is the set of points within
``radius`` of the segment ``a``-``b`` (Ericson RTCD 4.5.1); ``a == b`` is a sphere. Contact
normals point from the obstacle towards the capsule (the push-out direction); ``depth > 0``."""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from .validate import as_point, as_radius


@dataclass(frozen=True, eq=False)
class Capsule:
    """Points within ``radius`` of segment ``a``-``b``.

    a, b : (3,) float64, world space, metres (segment end points, the centres of the caps)
    radius : float, metres, > 0
    """

    a: np.ndarray
    b: np.ndarray
    radius: float

    def __post_init__(self):
        object.__setattr__(self, "a", as_point(self.a, "a"))
        object.__setattr__(self, "b", as_point(self.b, "b"))
        object.__setattr__(self, "radius", as_radius(self.radius, "radius"))
        self.a.flags.writeable = False
        self.b.flags.writeable = False

    @classmethod
    def from_base_tip(cls, base, tip, radius) -> Capsule:
        """Capsule whose outermost points are ``base`` and ``tip`` (seed article 000).

        The segment runs from ``base + r*n`` to ``tip - r*n`` with ``n`` the unit base->tip
        direction. Raises ValueError when ``|tip - base| < 2*radius`` (no such capsule).
        """
        base = as_point(base, "base")
        tip = as_point(tip, "tip")
        r = as_radius(radius, "radius")
        axis = tip - base
        length = float(np.sqrt(axis @ axis))
        if length < 2.0 * r:
            raise ValueError(
                f"base and tip are {length} m apart, less than 2*radius = {2.0 * r} m"
            )
        n = axis / length if length > 0.0 else np.zeros(3)
        return cls(base + r * n, tip - r * n, r)

    @classmethod
    def upright(cls, foot, height, radius, up=(0.0, 0.0, 1.0)) -> Capsule:
        """Capsule standing on ``foot`` (its lowest point), ``height`` tall including both caps.

        Raises ValueError when ``height < 2*radius`` or ``up`` is zero.
        """
        foot = as_point(foot, "foot")
        up = as_point(up, "up")
        n2 = float(up @ up)
        if n2 == 0.0:
            raise ValueError("up must be a non-zero vector")
        up = up / np.sqrt(n2)
        r = as_radius(radius, "radius")
        h = float(height)
        if not np.isfinite(h) or h < 2.0 * r:
            raise ValueError(f"height must be finite and >= 2*radius = {2.0 * r}, got {h}")
        return cls(foot + r * up, foot + (h - r) * up, r)

    @property
    def segment_length(self) -> float:
        d = self.b - self.a
        return float(np.sqrt(d @ d))

    def translated(self, offset) -> Capsule:
        """The same capsule moved by ``offset`` (3,) metres."""
        offset = as_point(offset, "offset")
        return Capsule(self.a + offset, self.b + offset, self.radius)

    def aabb(self) -> tuple[np.ndarray, np.ndarray]:
        """Axis-aligned bounds (lo, hi), each (3,) metres."""
        return (
            np.minimum(self.a, self.b) - self.radius,
            np.maximum(self.a, self.b) + self.radius,
        )

    def __repr__(self) -> str:
        return f"Capsule(a={self.a.tolist()}, b={self.b.tolist()}, radius={self.radius})"


class Contact(NamedTuple):
    """A penetration.

    depth : float, metres, > 0: moving the capsule by ``normal * depth`` (plus any epsilon)
        separates it from the obstacle
    normal : (3,) float64 unit vector from the obstacle towards the capsule
    point : (3,) float64, the deepest point of the obstacle (on the obstacle's surface)
    triangle : int, index into the mesh, or -1 for a non-mesh obstacle
    """

    depth: float
    normal: np.ndarray
    point: np.ndarray
    triangle: int = -1


class Hit(NamedTuple):
    """First contact of a swept shape.

    time : float in [0, 1], fraction of the displacement (for ``raycast``: metres along the ray)
    normal : (3,) float64 unit vector from the obstacle towards the moving shape
    point : (3,) float64 contact point on the obstacle at that time
    triangle : int, index into the mesh, or -1 for a non-mesh obstacle
    """

    time: float
    normal: np.ndarray
    point: np.ndarray
    triangle: int = -1
