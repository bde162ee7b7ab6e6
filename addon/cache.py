"""The one cache of the built collision level (``cached_level``).

Rule: the cached ``LevelGeometry`` is reused until a collision object's geometry, transform or
the membership of the collision source changes. A ``depsgraph_update_post`` handler
(registered by ``addon.live``) passes ``depsgraph.updates`` to ``note_updates``:

* an update of an Object or Mesh that the cached level was read from (or of an instancer of
  it) with ``is_updated_transform`` or ``is_updated_geometry`` marks the cache *suspect*;
* any update of a Scene or Collection (objects added, removed, linked, hidden, the source
  setting changed), or of a mesh object or instancer not in the level (it may have just been
  shown or renamed into a naming convention) marks it suspect too;
* anything else (a capsule, an Empty, a path, a camera moving) is ignored: moving a capsule
  never rebuilds the level.

A suspect cache is not thrown away blindly: the next ``cached_level`` re-reads the parts
(the fast attribute path, ~tens of ms per million triangles) and compares them with the
cached arrays; only a real difference rebuilds the ``TriangleMesh`` (the expensive part).
So writing a result attribute (``capsule_penetration``) onto a wall, which Blender reports as
a geometry update of that wall, costs one re-read and keeps the same mesh.

The cache is per scene name and cleared on file load (``clear``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import bpy
import numpy as np

from . import scene_data


@dataclass
class _Entry:
    level: scene_data.LevelGeometry
    parts_key: tuple  # (names, (V, M) per part) of the parts the level was built from
    digest: bytes  # content digest of those parts
    sources: set = field(default_factory=set)  # original object / mesh names it depends on
    suspect: bool = False


_entries: dict[str, _Entry] = {}
stats = {"builds": 0, "rereads": 0}  # counters for tests and the benchmark


def clear() -> None:
    """Forget every cached level (file loaded, extension disabled)."""
    _entries.clear()


def _parts_digest(parts) -> tuple[tuple, bytes]:
    import hashlib  # noqa: PLC0415

    h = hashlib.sha1(usedforsecurity=False)
    key = []
    for p in parts:
        key.append((p.name, p.vertices.shape[0], p.triangles.shape[0]))
        h.update(p.vertices.tobytes())
        h.update(np.ascontiguousarray(p.triangles).tobytes())
        h.update(p.tri_orig_face.tobytes())
    return tuple(key), h.digest()


def _sources(parts) -> set:
    names = set()
    for p in parts:
        for n in p.name.split("/"):
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
    parts = scene_data.read_parts(depsgraph, scene)
    key, digest = _parts_digest(parts)
    if (entry is not None and entry.parts_key == key and entry.digest == digest
            and entry.level.unit_scale == unit):
        stats["rereads"] += 1
        entry.suspect = False
        entry.sources = _sources(parts)
        return entry.level
    level = scene_data.level_from_parts(parts, unit)
    stats["builds"] += 1
    _entries[scene.name] = _Entry(level, key, digest, _sources(parts))
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
    for update in depsgraph.updates:
        if affects_level(update, entry.sources):
            entry.suspect = True
            return True
    return False


def affects_level(update, sources) -> bool:
    """Whether one depsgraph update can change a level read from ``sources`` (names)."""
    idb = update.id
    if isinstance(idb, (bpy.types.Scene, bpy.types.Collection)):
        # membership: objects added, removed, linked, hidden (a hide is an unflagged Scene
        # update), or the collision-source setting changed
        return True
    orig = getattr(idb, "original", idb)
    if isinstance(orig, bpy.types.Object):
        if orig.name in sources:
            return bool(update.is_updated_transform or update.is_updated_geometry)
        if scene_data.role_of(orig) != "NONE":
            return False  # a capsule, path, trace or marker: never collision
        # a mesh or instancer not in the level may have just joined it (shown, renamed
        # into a naming convention: an unflagged update)
        return orig.type == "MESH" or orig.instance_type != "NONE"
    if isinstance(orig, bpy.types.Mesh):
        return orig.name in sources and bool(update.is_updated_geometry)
    return False
