"""The four shipped OpenArena maps of ``../shared/real_levels`` (render and clip meshes, spawns),
found or made once, for tests and benchmarks that run the tool the way a studio would.

Where they are: ``$CC_REAL_LEVELS`` when it is set (a folder ``make_levels.sh`` wrote), else
``.real_levels/`` in the checkout (git ignores it), made there on first use by
``../shared/real_levels/make_levels.sh`` (Debian's ``openarena-088-data`` through
``apt-get download``: about a minute, once). Concurrent test workers wait on one lock.

    >>> import real_levels
    >>> level = real_levels.load("oa_bases7")          # render mesh
    >>> level.vertices.shape, level.spawn_feet.shape   # metres, Z up; feet 0.6096 m below origins
"""

from __future__ import annotations

import fcntl
import os
import pathlib
import shutil
import subprocess
import sys
from dataclasses import dataclass

import numpy as np

MAPS = ("oa_bases7", "am_lavaarena", "delta", "oa_koth1")
ROOT = pathlib.Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared" / "real_levels"
UNIT = 0.0254                                  # one Quake unit in metres
SPAWN_FOOT_BELOW_ORIGIN = 24 * UNIT            # the player origin is 24 units above the foot
JUMP_VELOCITY, GRAVITY = 270.0, 800.0  # Quake units per second (squared): bg_pmove.c
# Quake III's player (real_levels/README.md), in metres and degrees. It jumps: a standing
# jump's apex is v^2 / 2g = 45.5625 units = 1.1573 m (a studio checking a Quake level would
# set it; without it every brush top a player jumps onto is an island).
QUAKE_PLAYER = {"radius": 15 * UNIT, "height": 56 * UNIT, "step_height": 18 * UNIT,
                "max_slope_deg": 45.572996, "speed": 320 * UNIT, "gravity": GRAVITY * UNIT,
                "jump_height": JUMP_VELOCITY ** 2 / (2.0 * GRAVITY) * UNIT}


@dataclass(frozen=True)
class Level:
    name: str
    obj: pathlib.Path           # Z-up OBJ in metres
    vertices: np.ndarray        # (V, 3) float64
    triangles: np.ndarray       # (M, 3) int64
    spawn_feet: np.ndarray      # (K, 3) the spawn entities' foot points


def _cache_dir() -> pathlib.Path:
    # Not under XDG_CACHE_HOME: the tests point that at a temporary folder per run.
    return ROOT / ".real_levels" / "maps"


class MapsUnavailable(RuntimeError):
    """The maps are not made and cannot be: no ``CC_REAL_LEVELS``, and no ``make_levels.sh``
    beside the checkout (a clone without ``../shared``). The tests skip, saying so; a failed
    download where the maker is present stays an error."""


def available() -> bool:
    """True when the maps are made (or ``$CC_REAL_LEVELS`` names them); makes nothing."""
    folder = pathlib.Path(os.environ["CC_REAL_LEVELS"]) if os.environ.get("CC_REAL_LEVELS") \
        else _cache_dir()
    return all((folder / f"{m}_clip.npz").exists() for m in MAPS)


def levels_dir() -> pathlib.Path:
    """The folder holding every map's files, made on first use (see the module's docstring).
    Raises RuntimeError with the maker's output when they cannot be made."""
    if os.environ.get("CC_REAL_LEVELS"):
        folder = pathlib.Path(os.environ["CC_REAL_LEVELS"])
        if not all((folder / f"{m}_clip.npz").exists() for m in MAPS):
            raise RuntimeError(f"CC_REAL_LEVELS={folder} does not hold the four maps "
                               f"(make them with sh {SHARED / 'make_levels.sh'} {folder})")
        return folder
    folder = _cache_dir()
    if not all((folder / f"{m}_clip.npz").exists() for m in MAPS) \
            and not (SHARED / "make_levels.sh").exists():
        raise MapsUnavailable(f"the shipped maps are not made and {SHARED / 'make_levels.sh'} "
                              "is absent (clone beside ../shared, or set CC_REAL_LEVELS)")
    folder.parent.mkdir(parents=True, exist_ok=True)
    with open(folder.parent / "real_levels.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if all((folder / f"{m}_clip.npz").exists() for m in MAPS):
            return folder
        partial = folder.with_name("real_levels.partial")
        shutil.rmtree(partial, ignore_errors=True)
        command = ["sh", str(SHARED / "make_levels.sh"), str(partial), sys.executable]
        made = subprocess.run(command, capture_output=True, text=True)
        if made.returncode != 0 and shutil.which("apt-get"):
            # A new machine has no package lists yet: 'apt-get download' finds nothing.
            subprocess.run(["apt-get", "update", "-qq"], capture_output=True)
            shutil.rmtree(partial, ignore_errors=True)
            made = subprocess.run(command, capture_output=True, text=True)
        if made.returncode != 0:
            raise RuntimeError(f"make_levels.sh failed ({made.returncode}):\n"
                               f"{made.stdout[-2000:]}\n{made.stderr[-2000:]}")
        shutil.rmtree(folder, ignore_errors=True)
        partial.rename(folder)
    return folder


def load(name: str, clip: bool = False) -> Level:
    """One map's render mesh (``clip=False``) or clip (collision) mesh, with its spawns' feet."""
    if name not in MAPS:
        raise ValueError(f"name: unknown map {name!r}; known: {', '.join(MAPS)}")
    folder = levels_dir()
    stem = f"{name}_clip" if clip else name
    data = np.load(folder / f"{stem}.npz")
    spawns = np.load(folder / f"{name}.npz")["spawn_origin"].astype(np.float64).reshape(-1, 3)
    feet = spawns - np.array([0.0, 0.0, SPAWN_FOOT_BELOW_ORIGIN])
    return Level(name, folder / f"{stem}.obj", data["vertices"].astype(np.float64),
                 data["triangles"].astype(np.int64), feet)
