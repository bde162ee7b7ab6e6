"""Importer axes: which way an OBJ or FBX file is up, and what that means in Blender.

Blender's OBJ and FBX importers turn a file's ``forward`` axis into Blender's +Y and its
``up`` axis into +Z (forward x up becomes +X: a rotation). Both default to a Y-up file
(forward -Z). ``--up``/``--forward`` (and a spec's ``"up"``/``"forward"``) pass other axes,
by Blender's names (``X``, ``Y``, ``Z``, ``-X``, ``-Y``, ``-Z``). No Blender needed here.
"""

from __future__ import annotations

import numpy as np

# Importer axes: Blender's OBJ importer names them X ... NEGATIVE_Z, its FBX importer X ... -Z.
OBJ_AXES = {"X": "X", "Y": "Y", "Z": "Z", "-X": "NEGATIVE_X", "-Y": "NEGATIVE_Y",
            "-Z": "NEGATIVE_Z"}
DEFAULT_UP, DEFAULT_FORWARD = "Y", "-Z"  # both importers' defaults (Y-up files)
AXIS_FORMATS = (".obj", ".fbx")  # the formats whose axes an option can set
LEVEL_SUFFIXES = (".blend", ".obj", ".glb", ".gltf", ".fbx")
_UNIT = {"X": (1, 0, 0), "Y": (0, 1, 0), "Z": (0, 0, 1)}


def default_forward(up: str) -> str:
    """The forward axis used with ``up`` when none is given: Blender's own frame for Z-up
    files (forward Y: no rotation), the importers' default (-Z) otherwise."""
    return "Y" if up.lstrip("-") == "Z" else DEFAULT_FORWARD


def axis_vector(axis: str) -> np.ndarray:
    v = np.array(_UNIT[axis.lstrip("-")], float)
    return -v if axis.startswith("-") else v


def axis_name(vector) -> str:
    """"X", "-Y", ... of a unit axis vector."""
    v = np.asarray(vector, float)
    k = int(np.argmax(np.abs(v)))
    return ("-" if v[k] < 0 else "") + "XYZ"[k]


def file_axis(blender_axis, up: str, forward: str) -> str:
    """The file's axis that an importer with ``up``/``forward`` turned into Blender's
    ``blender_axis`` (a unit axis vector): the importer maps the file's forward to +Y, its up
    to +Z and forward x up to +X (a rotation)."""
    f, u = axis_vector(forward), axis_vector(up)
    basis = np.stack([np.cross(f, u), f, u])  # the file axes of Blender's X, Y, Z
    return axis_name(np.asarray(blender_axis, float) @ basis)


def blender_axis(file_axis_name: str, up: str, forward: str) -> np.ndarray:
    """Where an importer with ``up``/``forward`` puts the file's axis ``file_axis_name``."""
    f, u = axis_vector(forward), axis_vector(up)
    basis = np.stack([np.cross(f, u), f, u])
    return basis @ axis_vector(file_axis_name)


def importer(suffix: str, up: str | None, forward: str | None):
    """(operator path, keyword arguments) of Blender's importer for ``suffix``."""
    if suffix == ".obj":
        # The file's faces as written: Blender's mesh validation drops duplicate faces, and
        # which of two back-to-back faces it keeps (its winding) depends on its threads
        # (oa_koth1's clip mesh: 176 dropped, 80 of the kept ones wound the other way with one
        # CPU than with two), so the same file gave other findings on another machine or
        # under load. Duplicates are harmless to the checks; docs/decisions.md.
        kw = {"validate_meshes": False}
        if up or forward:
            u = up or DEFAULT_UP
            kw |= {"up_axis": OBJ_AXES[u], "forward_axis": OBJ_AXES[forward or default_forward(u)]}
        return "wm.obj_import", kw
    if suffix == ".fbx":
        kw = {}
        if up or forward:  # the file's own axis settings unless told otherwise
            u = up or DEFAULT_UP
            kw = {"use_manual_orientation": True, "axis_up": u,
                  "axis_forward": forward or default_forward(u)}
        return "import_scene.fbx", kw
    return "import_scene.gltf", {}
