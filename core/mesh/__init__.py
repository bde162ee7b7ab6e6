"""Mesh: the triangle mesh and its batched queries, built on ``core.geometry``.

``triangle_mesh.TriangleMesh`` is the door. Every query runs candidates (``bvh``) -> culls
(``culls``: proofs that a pair cannot touch) -> the exact kernel of ``core.geometry`` ->
ordering, over the per-triangle rows of ``rows``. Contacts (``contacts``, with
``ContactBatch``), sweeps (``sweeps``, with ``SweepBatch`` and the first-hit reduction), rays
(``rays``) and per-character candidate caches (``hoods``). ``patched`` edits a built mesh
without a rebuild (``replace_triangles`` -> ``PatchedMesh``, the same answers as a fresh build).
"""
