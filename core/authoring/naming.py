"""Engine naming of collision proxies: the names each engine's importer (or the common
pipeline around it) reads as collision, and which proxy kinds are convex.

Kinds: ``box``, ``sphere``, ``capsule``, ``convex`` (a hull, a decomposition piece, a stair
ramp) and ``mesh`` (a simplified render mesh or what is left of one around a stair ramp; any
shape). For render mesh ``Wall`` and the proxy numbered 1:

- Unreal (FBX): ``UBX_Wall_01``, ``USP_Wall_01``, ``UCP_Wall_01``, ``UCX_Wall_01`` (convex
  and mesh alike: Unreal hulls a mesh);
- Godot (glTF): ``Wall_01-convcolonly`` for box, sphere, capsule and convex, and
  ``Wall_01-colonly`` (a trimesh) for mesh;
- Unity (FBX or glTF): ``Wall_01_box_collider``, ``..._sphere_collider``,
  ``..._capsule_collider``, ``..._convex_collider``, ``..._mesh_collider``.

Unreal has no concave custom collision in FBX: a ``mesh`` proxy named ``UCX_`` is hulled on
import (``concave_for``); decompose it instead. Unity has no naming rule of its own: the names
above are the common ``_collider`` suffix an ``AssetPostprocessor`` turns into Box, Sphere,
Capsule and (convex) Mesh Colliders.
"""

from __future__ import annotations

import re

ENGINES = ("UNREAL", "GODOT", "UNITY")
KINDS = ("box", "sphere", "capsule", "convex", "mesh")
CONVEX_KINDS = ("box", "sphere", "capsule", "convex")
EXPORT_FORMATS = {"UNREAL": ("FBX",), "GODOT": ("GLTF",), "UNITY": ("FBX", "GLTF")}

_UNREAL_PREFIX = {"box": "UBX_", "sphere": "USP_", "capsule": "UCP_", "convex": "UCX_",
                  "mesh": "UCX_"}
_UNITY_SUFFIX = "_collider"
_NAME_TAIL = re.compile(
    r"^(?:UCX_|UBX_|USP_|UCP_)?(?P<base>.+?)(?:_\d{2,})?"
    r"(?:-convcolonly|-colonly|-convcol|-col|_(?:box|sphere|capsule|convex|mesh)_collider"
    r"|_collider|_collision|_col)?(?:\.\d{3,})?$")


def as_engine(engine) -> str:
    """``engine`` upper-cased if it is one of ENGINES, else ValueError naming ``engine``."""
    name = str(engine).upper()
    if name not in ENGINES:
        raise ValueError(f"engine must be one of {', '.join(e.lower() for e in ENGINES)}, "
                         f"got {engine!r}")
    return name


def collision_name(engine, kind: str, base: str, index: int) -> str:
    """The name of proxy number ``index`` (1-based) of kind ``kind`` for render mesh
    ``base`` under ``engine``'s convention (table in the module docstring)."""
    eng = as_engine(engine)
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {', '.join(KINDS)}, got {kind!r}")
    if not base:
        raise ValueError("base must be a non-empty render mesh name")
    if int(index) < 1:
        raise ValueError(f"index must be >= 1, got {index}")
    stem = f"{base}_{int(index):02d}"
    if eng == "UNREAL":
        return _UNREAL_PREFIX[kind] + stem
    if eng == "GODOT":
        return stem + ("-convcolonly" if kind in CONVEX_KINDS else "-colonly")
    return f"{stem}_{kind}{_UNITY_SUFFIX}"


def base_name(name: str) -> str:
    """The render mesh name inside a collision name: engine prefixes and suffixes, the proxy
    number and Blender's ``.001`` stripped (``UCX_Wall_01`` -> ``Wall``)."""
    m = _NAME_TAIL.match(name)
    return m.group("base") if m else name


def concave_for(engine, kind: str) -> bool:
    """True when ``engine`` will not keep a ``kind`` proxy as authored (Unreal hulls every
    custom collision mesh; a ``mesh`` proxy is rarely convex)."""
    return as_engine(engine) == "UNREAL" and kind not in CONVEX_KINDS
