"""Incremental level rebuild: re-read and re-build only the collision objects that changed.

Moving one box of a million-triangle level used to re-read every object (0.1-0.4 s per million
triangles) and rebuild the whole ``TriangleMesh`` (2-5 s) on the main thread. Here:

* ``PartReader`` (one per scene) keeps every part of the level (``scene_data.Part``: one
  object or instance as world arrays) with a cheap *signature* of what it was read from
  (world matrix, the evaluated mesh's positions and corners, face map inputs: attribute reads
  and one sha1, ~15 ms per million triangles). ``parts()`` re-reads only the parts whose
  signature changed.
* ``patched_level(level, depsgraph, scene)`` is the level cache's hook (``addon/cache.py``,
  ``cached_level``): it lines the current parts up with the ones the cached level was built
  from (by name and digest, ``difflib``), and splices each changed run into the built mesh
  with ``core.replace_triangles`` (the built mesh is kept, a small second mesh holds the new
  triangles; answers equal a full rebuild, bit for bit) and into the level's triangle ->
  (object, face) arrays. The result is the ``LevelGeometry`` a full read would give: same
  triangle order, same stamp. When the edit touches more than ``PATCH_MAX_FRACTION`` of the
  level, or the unit scale changed, it returns None and the cache rebuilds as before.
* ``remember(level, parts, depsgraph, scene)`` (the cache's other hook, after a full build)
  records the parts a level was built from.
* When nothing has been patched for ``COMPACT_AFTER_S``, a background thread builds a fresh
  ``TriangleMesh`` of the patched level (numpy only, no Blender data) and a timer swaps it
  into the level (same triangles, same answers; full query speed again).

The overlay reads the same parts (``current_parts``) and redraws only the parts whose digest
changed. Nothing here touches ``gpu``.
"""

from __future__ import annotations

import difflib
import hashlib
import itertools
import threading
import time
from dataclasses import dataclass, field
from typing import Any

import bpy
import numpy as np

from ..core import TriangleMesh, replace_triangles
from ..core.mesh.patched import base_extremes
from . import scene_data

PATCH_MAX_FRACTION = 0.25  # an edit replacing more of the level's triangles rebuilds it
_EDIT_READS = itertools.count()  # signatures of objects in Edit Mode: never equal
COMPACT_AFTER_S = 2.0  # seconds without a patch before the background full rebuild starts
_TIMER_S = 0.5

stats = {"patches": 0, "parts_read": 0, "compactions": 0}  # for tests and the benchmark


# ---------------------------------------------------------------- reading parts
def signature(src: scene_data.PartSource, unit_scale: float, mesh_digests: dict) -> bytes:
    """What one part is read from, cheaply: unit scale, world matrix, positions, corners,
    face count and what decides the face map (modifiers, the original's face and corner
    counts). ``mesh_digests`` caches mesh digests by evaluated mesh within one pass.

    An object in Edit Mode has no readable arrays (its evaluated mesh wraps the edit data):
    its signature is new at every call, so it is read again each time (``read_part`` converts
    the edit data), never taken for unchanged."""
    if scene_data.in_edit_mode(src.eval_obj):
        return b"edit mode %d" % next(_EDIT_READS)
    me = src.eval_obj.data
    key = me.as_pointer()
    digest = mesh_digests.get(key)
    if digest is None:
        pos, cv = scene_data.mesh_arrays(me)
        h = hashlib.sha1(pos.tobytes(), usedforsecurity=False)
        h.update(cv.tobytes())
        h.update(len(me.polygons).to_bytes(8, "little"))
        digest = mesh_digests[key] = h.digest()
    h = hashlib.sha1(digest, usedforsecurity=False)
    h.update(np.array(src.matrix, dtype=np.float64).tobytes())
    h.update(np.float64(unit_scale).tobytes())
    orig = src.original
    if src.maps_back and orig is not None:
        h.update(b"m" if scene_data.has_modifiers(orig) else b"-")
        h.update(np.array([len(orig.data.polygons), len(orig.data.loops)], np.int64).tobytes())
    return h.digest()


@dataclass
class PartReader:
    """The current parts of one scene's level, re-read only where their signature changed.

    ``records``: (name, signature, Part or None for a part without faces) in level order.
    ``dirty``: a depsgraph update may have changed a part (``mark_dirty``); ``parts()``
    then checks the signatures again, else it answers from memory.
    """

    records: list = field(default_factory=list)
    dirty: bool = True

    def parts(self, depsgraph, scene, force=False) -> list:
        """The scene's parts (``scene_data.Part``, no empty ones), as ``read_parts`` gives."""
        if self.dirty or force:
            self.refresh(depsgraph, scene)
        return [p for _, _, p in self.records if p is not None]

    def refresh(self, depsgraph, scene) -> None:
        unit = scene_data.unit_scale_of(scene)
        known: dict = {}
        for name, sig, part in self.records:
            known.setdefault((name, sig), []).append(part)
        digests: dict = {}
        records = []
        for src in scene_data.part_sources(depsgraph, scene):
            sig = signature(src, unit, digests)
            old = known.get((src.name, sig))
            if old:
                part = old.pop(0)
            else:
                part = scene_data.read_part(src, unit)
                stats["parts_read"] += 1
            records.append((src.name, sig, part))
        self.records = records
        self.dirty = False

    def adopt(self, parts, depsgraph, scene) -> bool:
        """Take ``parts`` (just read by ``scene_data.read_parts``) as the current ones,
        computing their signatures; False when they do not line up with the scene's sources
        (then the next ``parts()`` reads everything)."""
        unit = scene_data.unit_scale_of(scene)
        digests: dict = {}
        records = []
        it = iter(parts)
        nxt = next(it, None)
        for src in scene_data.part_sources(depsgraph, scene):
            sig = signature(src, unit, digests)
            # a faceless mesh gave no part (an Edit Mode wrapper's counts are not readable:
            # its part is there when the next part read carries its name)
            faceless = (nxt is None or nxt.name != src.name) if scene_data.in_edit_mode(
                src.eval_obj) else len(src.eval_obj.data.polygons) == 0
            if faceless:
                records.append((src.name, sig, None))
                continue
            if nxt is None or nxt.name != src.name:
                self.records, self.dirty = [], True
                return False
            records.append((src.name, sig, nxt))
            nxt = next(it, None)
        if nxt is not None:
            self.records, self.dirty = [], True
            return False
        self.records, self.dirty = records, False
        return True


_readers: dict[str, PartReader] = {}


def reader_of(scene) -> PartReader:
    reader = _readers.get(scene.name)
    if reader is None:
        reader = _readers[scene.name] = PartReader()
    return reader


def mark_dirty() -> None:
    """A depsgraph update may have changed collision objects: check signatures next time."""
    for reader in _readers.values():
        reader.dirty = True


def current_parts(scene, depsgraph) -> list:
    """The scene's collision parts now (for the overlay): ``scene_data.Part`` list.

    ValueError when the collision source is unusable (as ``read_parts`` raises)."""
    return reader_of(scene).parts(depsgraph, scene)


# ---------------------------------------------------------------- the level's parts
@dataclass
class LevelParts:
    """The parts a level was built from: (name, digest) keys and triangle offsets."""

    level: Any
    keys: list  # [(name, digest, read in Edit Mode)] in level order
    offsets: np.ndarray  # (P + 1,) int64 first triangle of each part, then the total


_levels: dict[str, LevelParts] = {}  # scene name -> the cached level's parts


def _level_parts(level, parts) -> LevelParts:
    sizes = [p.triangles.shape[0] for p in parts]
    return LevelParts(level, [(p.name, p.digest, p.from_edit_mode) for p in parts],
                      np.cumsum([0] + sizes).astype(np.int64))


def remember(level, parts, depsgraph, scene) -> None:
    """The cache's hook after a full read: ``level`` was built from ``parts``. Also finds the
    built mesh's extreme triangles now (~0.1 s per million triangles, beside a build of
    seconds), so the first patch's bounds cost nothing."""
    _levels[scene.name] = _level_parts(level, parts)
    reader_of(scene).adopt(parts, depsgraph, scene)
    if isinstance(level.mesh, TriangleMesh):
        base_extremes(level.mesh)


def part_ranges(level) -> list[tuple[str, bytes, int, int]]:
    """(name, digest, start, stop) of each part of ``level`` (the cached one of some scene),
    or [] when it is not known here."""
    for lp in _levels.values():
        if lp.level is level:
            o = lp.offsets.tolist()
            return [(n, d, o[k], o[k + 1]) for k, (n, d, _) in enumerate(lp.keys)]
    return []


def patched_level(level, depsgraph, scene):
    """The cache's hook: (level, parts) of the scene now, made from ``level`` by splicing
    the parts that changed, or None when a full rebuild is due (see the module docstring).
    Returns ``level`` itself when no part changed."""
    lp = _levels.get(scene.name)
    if lp is None or lp.level is not level:
        return None
    if scene_data.unit_scale_of(scene) != level.unit_scale:
        return None
    parts = reader_of(scene).parts(depsgraph, scene, force=True)
    keys = [(p.name, p.digest, p.from_edit_mode) for p in parts]
    if keys == lp.keys:
        return level, parts
    ops = [op for op in difflib.SequenceMatcher(None, lp.keys, keys, autojunk=False)
           .get_opcodes() if op[0] != "equal"]
    total = int(lp.offsets[-1])
    touched = sum(int(lp.offsets[i2] - lp.offsets[i1])
                  + sum(p.triangles.shape[0] for p in parts[j1:j2]) for _, i1, i2, j1, j2 in ops)
    if not parts or touched > PATCH_MAX_FRACTION * total:
        return None
    new = splice_level(level, lp, parts, ops)
    _levels[scene.name] = _level_parts(new, parts)
    stats["patches"] += 1
    _schedule_compaction(scene.name)
    return new, parts


def splice_level(level, lp: LevelParts, parts, ops):
    """A LevelGeometry equal to ``scene_data.level_from_parts(parts)``, made from ``level``
    (built from the parts ``lp``) by replacing the runs ``ops`` (difflib opcodes)."""
    mesh = level.mesh
    faces, orig = level.tri_face, level.tri_orig_face
    runs = []
    for _, i1, i2, j1, j2 in reversed(ops):  # from the end: earlier offsets stay valid
        s, e = int(lp.offsets[i1]), int(lp.offsets[i2])
        new = parts[j1:j2]
        v, t = _merged(new)
        mesh = replace_triangles(mesh, s, e, v, t)
        runs.append((s, e, new))
    # the per-triangle arrays: one pass, in order (runs were collected from the end)
    cut_faces, cut_orig, prev = [], [], 0
    for s, e, new in reversed(runs):
        cut_faces += [faces[prev:s]] + [p.tri_face for p in new]
        cut_orig += [orig[prev:s]] + [p.tri_orig_face for p in new]
        prev = e
    cut_faces.append(faces[prev:])
    cut_orig.append(orig[prev:])
    objects = tuple(dict.fromkeys(p.name for p in parts))
    index = {n: k for k, n in enumerate(objects)}
    tri_object = np.repeat(np.array([index[p.name] for p in parts], np.int32),
                           [p.triangles.shape[0] for p in parts])
    arrays = [np.concatenate(cut_faces).astype(np.int32), np.concatenate(cut_orig).astype(np.int32)]
    for a in (tri_object, *arrays):
        a.flags.writeable = False
    return scene_data.LevelGeometry(mesh=mesh, objects=objects, tri_object=tri_object,
                                    tri_face=arrays[0], tri_orig_face=arrays[1],
                                    unit_scale=level.unit_scale,
                                    stamp=scene_data.parts_digest(parts).hex()[:16],
                                    edit_objects=tuple(p.name for p in parts
                                                       if p.from_edit_mode))


def _merged(parts):
    """(vertices (V, 3), triangles (M, 3)) of consecutive parts, indices offset."""
    if not parts:
        return np.empty((0, 3)), np.empty((0, 3), np.int64)
    offsets = np.cumsum([0] + [p.vertices.shape[0] for p in parts[:-1]])
    return (np.concatenate([p.vertices for p in parts]),
            np.concatenate([p.triangles.astype(np.int64) + o for p, o in zip(parts, offsets)]))


# ---------------------------------------------------------------- per-part results
# scene name -> result kind -> (part name, part digest) -> (local triangles, values or None)
_results: dict[str, dict[str, dict]] = {}


def remember_results(scene, kind: str, level, triangles, values=None) -> None:
    """Keep an operator's per-triangle result (``kind``: "WALKABILITY", "STAND", ...) by
    level part, so the overlay draws it on every triangle the check read, including those
    that map to no original face (array copies, geometry nodes), and keeps drawing it on the
    parts an edit did not change. ``triangles`` (K,) level indices; ``values`` (K,) or None."""
    ranges = part_ranges(level)
    if not ranges:
        return
    tris = np.asarray(triangles, np.int64).ravel()
    order = np.argsort(tris, kind="stable")
    tris = tris[order]
    vals = None if values is None else np.asarray(values)[order]
    per = {}
    for name, digest, start, stop in ranges:
        lo, hi = np.searchsorted(tris, [start, stop])
        per[(name, digest)] = (tris[lo:hi] - start, None if vals is None else vals[lo:hi])
    _results.setdefault(scene.name, {})[kind] = per


def results_of_part(scene, kind: str, part):
    """(local triangles, values or None) of ``kind`` on ``part`` (a ``scene_data.Part``)
    from the last run, or None when that run did not see this part as it is now."""
    return _results.get(scene.name, {}).get(kind, {}).get((part.name, part.digest))


# ---------------------------------------------------------------- idle compaction
@dataclass
class _Compaction:
    level: Any
    due: float
    thread: threading.Thread | None = None
    mesh: Any = None


_pending: dict[str, _Compaction] = {}


def _schedule_compaction(scene_name: str) -> None:
    lp = _levels[scene_name]
    _pending[scene_name] = _Compaction(lp.level, time.monotonic() + COMPACT_AFTER_S)
    if not bpy.app.background and not bpy.app.timers.is_registered(_compaction_timer):
        bpy.app.timers.register(_compaction_timer, first_interval=_TIMER_S)


def compact_now(scene_name: str) -> bool:
    """Rebuild the scene's patched level in full, now, on this thread (tests, tools);
    True when it swapped a fresh mesh in."""
    job = _pending.pop(scene_name, None)
    if job is None:
        return False
    return _swap(scene_name, job.level, job.level.mesh.compacted())


def _swap(scene_name: str, level, mesh) -> bool:
    lp = _levels.get(scene_name)
    if lp is None or lp.level is not level or not isinstance(mesh, TriangleMesh):
        return False
    # The same level (triangles, order, stamp) with its mesh replaced by an equal fresh
    # build: every holder of the level gets full-speed queries with the same answers.
    object.__setattr__(level, "mesh", mesh)
    stats["compactions"] += 1
    return True


def _compaction_timer():
    now = time.monotonic()
    for name, job in list(_pending.items()):
        if job.thread is None and now >= job.due:
            patched = job.level.mesh

            def build(job=job, patched=patched):
                try:
                    job.mesh = patched.compacted()
                except (ValueError, MemoryError):  # never let the thread take Blender down
                    job.mesh = None

            job.thread = threading.Thread(target=build, name="capsule_collision compaction",
                                          daemon=True)
            job.thread.start()
        elif job.thread is not None and not job.thread.is_alive():
            del _pending[name]
            if job.mesh is not None:
                _swap(name, job.level, job.mesh)
    return _TIMER_S if _pending else None


def clear() -> None:
    """Forget every reader and level (file loaded, extension disabled). A compaction still
    building finishes on its own thread and is dropped."""
    _readers.clear()
    _levels.clear()
    _results.clear()
    _pending.clear()


def unregister() -> None:
    if bpy.app.timers.is_registered(_compaction_timer):
        bpy.app.timers.unregister(_compaction_timer)
    clear()
