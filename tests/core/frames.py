"""Frames the core geometry tests check every configuration in, and their helpers.

A frame is (scale, offset). The dyadic scale 2**-13 (0.12 mm) and offset 1e4 (10 km) keep
dyadic configurations exactly degenerate/collinear after the transform.
"""

import numpy as np
from hypothesis import settings

FRAMES = [(1.0, 0.0), (1.0, 1e4), (2.0**-13, 0.0), (2.0**-13, 1e4)]
FRAME_IDS = ["unit", "10km", "0.1mm", "0.1mm@10km"]

# deterministic hypothesis runs, so CI is reproducible
SETTINGS = settings(max_examples=250, derandomize=True, deadline=None)


def in_frame(points, frame):
    """The points scaled and offset by ``frame`` (float64 arrays)."""
    scale, offset = frame
    return [np.asarray(x, dtype=np.float64) * scale + offset for x in points]


def size(points):
    """L: the largest distance between any two of the points (the local scale), 1 if none."""
    pts = np.asarray(points, dtype=np.float64)
    return float(np.max(np.linalg.norm(pts[:, None] - pts[None], axis=-1))) or 1.0
