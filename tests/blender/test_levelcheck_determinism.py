"""levelcheck reads an OBJ level the same way on every machine: Blender's OBJ importer runs
without its mesh validation (levelcheck/axes.py ``importer``), whose removal of duplicate
faces keeps one face of a back-to-back pair or the other as its threads decide (oa_koth1's
clip mesh: 80 triangles wound the other way with one CPU than with two, and the stand audit,
islands and traps listed other findings; oa_bases7's 13 pillar tops, 8.5 m up, where Quake's
own brush test puts the player box in no brush, read as 2). levelcheck reads the file's faces
as written, its duplicates too (the checks take coincident faces in their stride, as core
does on the maps' own data): the same triangles, in the same order, whatever the CPUs."""

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tools"))
import real_levels  # noqa: E402

READ = """
import hashlib, sys
import numpy as np
from capsule_collision.levelcheck import scene, session
bpy = session.start()
geometry = scene.read(bpy, scene.load(bpy, sys.argv[1], "Z", None))[0]
t = np.ascontiguousarray(geometry.mesh.triangles)
print(t.shape[0], hashlib.sha1(t.tobytes()).hexdigest())
"""


def _box_faces(x0, v0):
    """A unit box's 6 outward quads, its corners v0.. v0+7 (OBJ, 1-based)."""
    c = [v0 + i for i in range(8)]  # corner (i & 1, i >> 1 & 1, i >> 2 & 1) + (x0, 0, 0)
    quads = [(0, 2, 3, 1), (4, 5, 7, 6), (0, 1, 5, 4), (2, 6, 7, 3), (0, 4, 6, 2), (1, 3, 7, 5)]
    return [[c[i] for i in q] for q in quads]


def _two_boxes_obj(path):
    """Two unit boxes side by side sharing the face x = 1, written once for each box (the
    two faces back to back), as brush-built levels export."""
    verts = [(x0 + (i & 1), (i >> 1) & 1, (i >> 2) & 1) for x0 in (0, 1) for i in range(8)]
    faces = _box_faces(0, 1) + _box_faces(1, 9)
    # the second box's corners at x = 1 are the first box's at x = 1: share them
    remap = {9 + i: 1 + i + 1 for i in range(8) if not i & 1}
    faces = [[remap.get(v, v) for v in f] for f in faces]
    lines = [f"v {x} {y} {z}" for x, y, z in verts] + ["f " + " ".join(map(str, f)) for f in faces]
    path.write_text("\n".join(lines) + "\n")


def test_an_obj_level_keeps_both_faces_of_a_back_to_back_pair(addon, bpy_module, tmp_path):
    from capsule_collision.levelcheck import scene  # noqa: PLC0415

    obj = tmp_path / "two_boxes.obj"
    _two_boxes_obj(obj)
    geometry = scene.read(bpy_module, scene.load(bpy_module, str(obj), "Z", None))[0]
    # 12 quads, 24 triangles: Blender's validation would keep one of the two x = 1 faces
    assert geometry.mesh.n_triangles == 24
    t = np.asarray(geometry.mesh.vertices)[np.asarray(geometry.mesh.triangles)]
    shared = np.flatnonzero(np.all(np.isclose(t[..., 0], 1.0), axis=1))
    assert shared.size == 4  # both faces, each as two triangles, wound opposite ways
    normals = np.cross(t[shared, 1] - t[shared, 0], t[shared, 2] - t[shared, 0])
    assert sorted(np.sign(normals[:, 0]).tolist()) == [-1.0, -1.0, 1.0, 1.0]


@pytest.mark.slow
@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="one CPU: nothing to compare")
def test_a_shipped_obj_reads_the_same_on_one_cpu_as_on_all(tmp_path):
    obj = real_levels.levels_dir() / "oa_koth1_clip.obj"

    def read(cpus):
        proc = subprocess.run(
            [sys.executable, "-c", READ, str(obj)], capture_output=True, text=True,
            timeout=300, preexec_fn=lambda: os.sched_setaffinity(0, cpus))
        assert proc.returncode == 0, proc.stderr[-2000:]
        return proc.stdout.split()[-2:]

    one = read({min(os.sched_getaffinity(0))})
    every = read(os.sched_getaffinity(0))
    assert one == every
    assert one[0] == "41445"  # every face of the file, its 176 duplicates too
