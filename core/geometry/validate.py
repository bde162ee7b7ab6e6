"""Argument validation shared by every public function of ``core``.

Each helper converts with ``np.asarray(..., dtype=float64)`` and raises ``ValueError`` that
names the argument for a wrong shape, a NaN or an infinity.
"""

from __future__ import annotations

import numpy as np


def as_point(value, name: str) -> np.ndarray:
    """Return ``value`` as a finite (3,) float64 array, or raise ValueError naming ``name``."""
    try:
        arr = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} must be a 3-vector of numbers, got {value!r}") from exc
    if arr.shape != (3,):
        raise ValueError(f"{name} must have shape (3,), got shape {arr.shape}")
    if not np.isfinite(arr).all():
        raise ValueError(f"{name} must be finite (no NaN or infinity), got {arr.tolist()}")
    return arr


def as_points(value, name: str) -> np.ndarray:
    """Return ``value`` as a finite (N, 3) float64 array (N >= 0), or raise ValueError."""
    try:
        arr = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} must be an (N, 3) array of numbers") from exc
    if arr.ndim != 2 or arr.shape[1] != 3:
        raise ValueError(f"{name} must have shape (N, 3), got shape {arr.shape}")
    if not np.isfinite(arr).all():
        raise ValueError(f"{name} must be finite (no NaN or infinity)")
    return arr


def as_finite(value, name: str) -> float:
    """Return ``value`` as a finite float, or raise ValueError naming ``name``."""
    try:
        x = float(value)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} must be a number, got {value!r}") from exc
    if not np.isfinite(x):
        raise ValueError(f"{name} must be finite, got {x}")
    return x


def as_radius(value, name: str = "radius") -> float:
    """Return ``value`` as a finite float > 0, or raise ValueError naming ``name``."""
    r = as_finite(value, name)
    if r <= 0.0:
        raise ValueError(f"{name} must be > 0, got {r}")
    return r


def as_radii(value, name: str, count: int) -> np.ndarray:
    """Return ``value`` as a finite (count,) float64 array of values > 0 (a scalar broadcasts)."""
    try:
        arr = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} must be numbers") from exc
    if arr.ndim == 0:
        arr = np.full(count, float(arr))
    if arr.shape != (count,):
        raise ValueError(f"{name} must be a scalar or have shape ({count},), got shape {arr.shape}")
    if not np.isfinite(arr).all():
        raise ValueError(f"{name} must be finite (no NaN or infinity)")
    if (arr <= 0.0).any():
        raise ValueError(f"{name} must be > 0 everywhere")
    return arr


def as_nonnegative(value, name: str) -> float:
    """Return ``value`` as a finite float >= 0, or raise ValueError naming ``name``."""
    try:
        x = float(value)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} must be a number, got {value!r}") from exc
    if not np.isfinite(x) or x < 0.0:
        raise ValueError(f"{name} must be finite and >= 0, got {x}")
    return x
