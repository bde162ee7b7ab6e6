"""Save the sample level as ``core`` sees it, for Python without Blender:
``python tools/sample_arrays.py OUT.npz``.

``samples/level.npz`` is this file for the sample level with its two deliberate bugs. The
Python snippets of the docs (``docs/api.md``) run against it in the core test lane, which has
no Blender; ``tests/blender/test_docs_commands.py`` builds it again and checks that the stored
file holds the same arrays, so the snippets cannot drift from the level the CLI checks.

Arrays: ``vertices`` (V, 3) float64 and ``triangles`` (M, 3) int64, world space, metres, Z up,
triangulated by Blender (the level the CLI reads); ``objects`` (O,) the collision objects'
names and ``tri_object`` (M,) int64 the object of each triangle; ``spawns`` (K, 3) the feet of
the capsules marked Spawn.
"""

import argparse
import os
import sys

import numpy as np
from capsule_collision.levelcheck import sample_level, session


def sample_arrays() -> dict:
    """The sample level's arrays (see the module docstring), built in a fresh Blender scene."""
    bpy = session.start()
    from capsule_collision.addon import scene_data  # noqa: PLC0415  (needs bpy started)

    bpy.ops.wm.read_homefile(use_empty=True)
    sample_level.build(bpy.context.scene, bugs=True)
    level = scene_data.read_level(bpy.context.evaluated_depsgraph_get(), bpy.context.scene)
    spawns = [foot for name, foot, _ in sample_level.capsules(True)
              if name in sample_level.SPAWNS]
    return {
        "vertices": np.asarray(level.mesh.vertices, dtype=np.float64),
        "triangles": np.asarray(level.mesh.triangles, dtype=np.int64),
        "objects": np.array(level.objects, dtype=str),
        "tri_object": np.asarray(level.tri_object, dtype=np.int64),
        "spawns": np.array(spawns, dtype=np.float64).reshape(-1, 3),
    }


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description="Save the sample level's arrays as .npz.")
    parser.add_argument("out", help="the .npz file to write")
    args = parser.parse_args(argv)
    np.savez_compressed(os.path.abspath(args.out), **sample_arrays())
    return 0


if __name__ == "__main__":
    sys.exit(main())
