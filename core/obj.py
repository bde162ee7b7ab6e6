"""Wavefront OBJ reading and writing for collision meshes (positions and faces only).

Pipelines hand levels to ``core`` as OBJ when Blender is not in the loop. Faces with more than
three corners are fan-triangulated (exact for the convex polygons collision meshes use);
negative (relative) indices are resolved; texture/normal indices (``f 1/2/3``) are ignored.
"""

from __future__ import annotations

import os

import numpy as np


def read_obj(path) -> tuple[np.ndarray, np.ndarray]:
    """Read an OBJ file.

    Returns
    -------
    vertices : (V, 3) float64, the file's frame and units
    triangles : (M, 3) int64 indices into ``vertices``

    Raises ValueError (with the file name and line number) for malformed lines, indices out of
    range and files without faces; OSError when the file cannot be read.
    """
    vertices: list[tuple[float, float, float]] = []
    triangles: list[tuple[int, int, int]] = []
    name = os.fspath(path)
    with open(name, encoding="utf-8", errors="replace") as handle:
        for line_no, line in enumerate(handle, start=1):
            parts = line.split()
            if not parts or parts[0].startswith("#"):
                continue
            if parts[0] == "v":
                try:
                    x, y, z = (float(v) for v in parts[1:4])
                except ValueError as exc:
                    raise ValueError(f"{name}:{line_no}: bad vertex line {line.strip()!r}") from exc
                vertices.append((x, y, z))
            elif parts[0] == "f":
                if len(parts) < 4:
                    raise ValueError(f"{name}:{line_no}: a face needs 3 or more corners")
                corners = []
                for token in parts[1:]:
                    try:
                        index = int(token.split("/")[0])
                    except ValueError as exc:
                        raise ValueError(f"{name}:{line_no}: bad face index {token!r}") from exc
                    if index == 0:
                        raise ValueError(f"{name}:{line_no}: OBJ indices start at 1, found 0")
                    resolved = index - 1 if index > 0 else len(vertices) + index
                    if not 0 <= resolved < len(vertices):
                        raise ValueError(
                            f"{name}:{line_no}: face index {index} refers to no vertex "
                            f"({len(vertices)} defined so far)"
                        )
                    corners.append(resolved)
                for k in range(1, len(corners) - 1):
                    triangles.append((corners[0], corners[k], corners[k + 1]))
    if not triangles:
        raise ValueError(f"{name}: no faces found")
    return np.asarray(vertices, dtype=np.float64), np.asarray(triangles, dtype=np.int64)


def write_obj(path, vertices, triangles, header: str = "") -> None:
    """Write ``vertices`` (V, 3) and ``triangles`` (M, 3) as an OBJ file (1-based indices)."""
    vertices = np.asarray(vertices, dtype=np.float64)
    triangles = np.asarray(triangles, dtype=np.int64)
    if vertices.ndim != 2 or vertices.shape[1] != 3:
        raise ValueError(f"vertices must have shape (N, 3), got {vertices.shape}")
    if triangles.ndim != 2 or triangles.shape[1] != 3:
        raise ValueError(f"triangles must have shape (M, 3), got {triangles.shape}")
    with open(os.fspath(path), "w", encoding="utf-8") as handle:
        for line in header.splitlines():
            handle.write(f"# {line}\n")
        np.savetxt(handle, vertices, fmt="v %.17g %.17g %.17g")
        np.savetxt(handle, triangles + 1, fmt="f %d %d %d")
