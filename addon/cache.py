"""The one cache of the built collision level (``cached_level``).

Rule: the cached ``LevelGeometry`` is reused until a collision object's geometry, transform or
the membership of the collision source changes. A ``depsgraph_update_post`` handler
(registered by ``addon.live``) passes ``depsgraph.updates`` to ``note_updates``:

* an update of an Object or Mesh that the cached level was read from (or of an instancer of
  it) with ``is_updated_transform`` or ``is_updated_geometry`` marks the cache *suspect*;
* an update of a Scene or Collection (selection, hide, link, unlink, a setting), or of a
  mesh object or instancer not in the level (shown, renamed into a naming convention),
  recomputes ``scene_data.membership`` (names and visibility, no mesh data) and marks the
  cache suspect only when it differs: selecting an object costs no re-read;
* anything else (a capsule, an Empty, a path, a camera moving) is ignored: moving a capsule
  never rebuilds the level.

A flagged update of a level object whose world matrix, positions and corners are unchanged
(``Snapshot``: attribute reads and a memory compare, ~4 ms per million triangles) is ignored:
writing a result attribute (``capsule_penetration``) onto a wall, which Blender reports as a
geometry update of that wall, keeps the cache current. A suspect cache is not thrown away
blindly: the next ``cached_level`` re-reads the parts (the attribute path, ~0.1 s per million
triangles) and compares them with the cached arrays; only a real difference rebuilds the
``TriangleMesh`` (the expensive part).

The cache is per scene name and cleared on file load (``clear``).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field

import bpy
import numpy as np

from . import level_parts, scene_data


@dataclass
class _Entry:
    level: scene_data.LevelGeometry
    parts_key: tuple  # (names, (V, M) per part) of the parts the level was built from
    digest: bytes  # content digest of those parts
    sources: set = field(default_factory=set)  # original object / mesh names it depends on
    fingerprints: dict = field(default_factory=dict)  # object name -> Snapshot
    membership: tuple = ()  # scene_data.membership() when read
    suspect: bool = False


_entries: dict[str, _Entry] = {}
stats = {"builds": 0, "rereads": 0}  # counters for tests and the benchmark


def clear() -> None:
    """Forget every cached level (file loaded, extension disabled)."""
    _entries.clear()
    level_parts.clear()


def mark_suspect() -> None:
    """Re-check every cached level on next use (after undo/redo: the restored data may differ
    from what the update stream said); a re-read equal to the cache keeps the built mesh."""
    for entry in _entries.values():
        entry.suspect = True


def _parts_key(parts) -> tuple:
    return tuple((p.name, p.vertices.shape[0], p.triangles.shape[0]) for p in parts)


def _sources(parts) -> set:
    names = set()
    for p in parts:
        for n in p.name.split("/"):
            names.add(n)
            ob = bpy.data.objects.get(n)
            if ob is not None and ob.data is not None:
                names.add(ob.data.name)
    return names


def _arrays(eval_obj) -> tuple:
    """(world matrix bytes, positions (V * 3,) float32, corners (C,) int32, face count) of an
    evaluated mesh object: attribute reads (an object in Edit Mode is converted first,
    ``scene_data.readable_mesh``, as slow as a read)."""
    with scene_data.readable_mesh(eval_obj) as me:
        pos, cv = scene_data.mesh_arrays(me)
        n_faces = len(me.polygons)
    return np.array(eval_obj.matrix_world, dtype=np.float64).tobytes(), pos, cv, n_faces


def fingerprint(eval_obj) -> tuple:
    """What the level reads from an evaluated mesh object, as a small key: its world matrix
    and a digest of its positions and corners (the overlay keys its batches with it)."""
    matrix, pos, cv, n_faces = _arrays(eval_obj)
    h = hashlib.sha1(pos.tobytes(), usedforsecurity=False)
    h.update(cv.tobytes())
    h.update(n_faces.to_bytes(8, "little"))
    return matrix, h.digest()


class Snapshot:
    """What the level read from one mesh object, kept to compare with (the cache's check that
    a flagged update changed nothing): comparing the arrays costs their attribute reads and a
    memory compare, ~4 ms per million triangles, where hashing them costs ~20 ms."""

    def __init__(self, eval_obj):
        self.arrays = _arrays(eval_obj)

    def same(self, eval_obj) -> bool:
        matrix, pos, cv, n_faces = _arrays(eval_obj)
        m0, pos0, cv0, n0 = self.arrays
        return (matrix == m0 and n_faces == n0 and np.array_equal(pos, pos0)
                and np.array_equal(cv, cv0))


def snapshot(eval_obj) -> Snapshot | None:
    """A Snapshot, or None for an object in Edit Mode (converting its edit data on every
    update would cost a read each time): any flagged update of it then counts as a change and
    the next use re-reads (a read equal to the cache keeps the built mesh)."""
    return None if scene_data.in_edit_mode(eval_obj) else Snapshot(eval_obj)


def _fingerprints(parts, depsgraph) -> dict:
    out: dict = {}
    for p in parts:
        if "/" in p.name:
            continue  # instances: any flagged update of their objects re-reads
        ob = bpy.data.objects.get(p.name)
        if ob is not None and ob.type == "MESH":
            fp = snapshot(ob.evaluated_get(depsgraph))
            if fp is not None:
                out[p.name] = fp
    return out


def _sources_of(parts, members: tuple) -> set:
    """Names the level depends on: its parts' objects and meshes, and every collision object
    of the membership, even one that gave no triangles (an empty mesh being modelled): an
    update of any of them is a content update, never mistaken for a membership change."""
    names = _sources(parts)
    for n in members[3]:  # membership(): (source, collection, unit, meshes, instancers)
        names.add(n)
        ob = bpy.data.objects.get(n)
        if ob is not None and ob.data is not None:
            names.add(ob.data.name)
    return names


def cached_level(depsgraph, scene) -> scene_data.LevelGeometry:
    """The scene's level, read and built only when it changed (see the module docstring)."""
    entry = _entries.get(scene.name)
    unit = scene_data.unit_scale_of(scene)
    if entry is not None and not entry.suspect and entry.level.unit_scale == unit:
        return entry.level
    # only the objects that changed are re-read and spliced into the built mesh
    patched = level_parts.patched_level(entry.level, depsgraph, scene) if entry else None
    if patched is not None:
        level, parts = patched
        members = scene_data.membership(scene, depsgraph)
        _entries[scene.name] = _Entry(level, _parts_key(parts), scene_data.parts_digest(parts),
                                      _sources_of(parts, members), _fingerprints(parts, depsgraph),
                                      members)
        return level
    parts = scene_data.read_parts(depsgraph, scene)
    key, digest = _parts_key(parts), scene_data.parts_digest(parts)
    members = scene_data.membership(scene, depsgraph)
    edit = tuple(p.name for p in parts if p.from_edit_mode)
    if (entry is not None and entry.parts_key == key and entry.digest == digest
            and entry.level.unit_scale == unit and entry.level.edit_objects == edit):
        stats["rereads"] += 1
        entry.suspect = False
        entry.sources = _sources_of(parts, members)
        entry.fingerprints = _fingerprints(parts, depsgraph)
        entry.membership = members
        level_parts.remember(entry.level, parts, depsgraph, scene)
        return entry.level
    level = scene_data.level_from_parts(parts, unit, digest)
    stats["builds"] += 1
    level_parts.remember(level, parts, depsgraph, scene)
    _entries[scene.name] = _Entry(level, key, digest, _sources_of(parts, members),
                                  _fingerprints(parts, depsgraph), members)
    return level


def peek(scene) -> scene_data.LevelGeometry | None:
    """The cached level when it is current (no read, no build), else None."""
    entry = _entries.get(scene.name)
    if entry is None or entry.suspect:
        return None
    return entry.level


def note_updates(scene, depsgraph) -> bool:
    """Mark the scene's cache suspect when ``depsgraph.updates`` may change the level.

    Returns True when it did.
    """
    entry = _entries.get(scene.name)
    if entry is None or entry.suspect:
        return False
    check_membership = False
    for update in depsgraph.updates:
        kind = update_kind(update, entry.sources)
        if kind == MEMBERSHIP:
            check_membership = True
        elif kind == CONTENT and not _unchanged(update, entry, depsgraph):
            entry.suspect = True
            return True
    if check_membership and scene_data.membership(scene, depsgraph) != entry.membership:
        entry.suspect = True
        return True
    return False


def _unchanged(update, entry, depsgraph) -> bool:
    """A flagged update of a level object whose matrix, positions and corners are the same
    (e.g. a result attribute written onto a wall)."""
    orig = getattr(update.id, "original", update.id)
    if isinstance(orig, bpy.types.Object):
        fp = entry.fingerprints.get(orig.name)  # None: in Edit Mode when read, or no faces
        return fp is not None and not scene_data.in_edit_mode(orig.evaluated_get(depsgraph)) \
            and fp.same(orig.evaluated_get(depsgraph))
    if isinstance(orig, bpy.types.Mesh):
        # its objects get their own update in the same batch: judged there
        users = [n for n, _ in entry.fingerprints.items()
                 if (ob := bpy.data.objects.get(n)) is not None and ob.data == orig]
        return bool(users)
    return False


IGNORE, MEMBERSHIP, CONTENT = "ignore", "membership", "content"


def update_kind(update, sources) -> str:
    """What one depsgraph update may change of a level read from ``sources`` (names):
    CONTENT (a level object's geometry or transform), MEMBERSHIP (which objects are read:
    a Scene or Collection update such as a selection, hide, link or setting change, or any
    update of a mesh or instancer not in the level, e.g. a rename), or IGNORE."""
    idb = update.id
    if isinstance(idb, (bpy.types.Scene, bpy.types.Collection)):
        return MEMBERSHIP
    orig = getattr(idb, "original", idb)
    if isinstance(orig, bpy.types.Object):
        if orig.name in sources:
            flagged = update.is_updated_transform or update.is_updated_geometry
            return CONTENT if flagged else IGNORE
        if scene_data.role_of(orig) != "NONE":
            return IGNORE  # a capsule, path, trace or marker: never collision
        if orig.type == "MESH" or orig.instance_type != "NONE":
            return MEMBERSHIP
        return IGNORE
    if isinstance(orig, bpy.types.Mesh) and orig.name in sources:
        return CONTENT if update.is_updated_geometry else IGNORE
    return IGNORE
