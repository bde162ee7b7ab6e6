"""Which file is a level's sidecar: the one naming rule of the panel and the CLI.

A level ``castle.obj`` (or ``castle.blend``) has its sidecar (``core/checks/spec.py``) beside
it under one of two names, ``castle.levelcheck.json`` (the level's name without its suffix:
an export written next to its .blend reads the .blend's) or ``castle.obj.levelcheck.json``.

- ``sidecar_names(level)``: the two names, the short one first;
- ``find_sidecar(level)``: the one present (``Sidecar.path``, None for none) and the near
  misses beside it (files that look meant as its sidecar but are not read: another case, a
  typo such as ``.levelchek.json``); ``SidecarError`` when both names exist (which one wins
  would be a guess: a gate refuses, docs/decisions.md);
- ``sidecar_to_write(level)``: where a waiver is written: the sidecar present, else the
  short name.

Reads the level's folder only (a listing), never a sidecar's contents.
"""

from __future__ import annotations

import difflib
import os
from typing import NamedTuple

SIDECAR_SUFFIX = ".levelcheck.json"
# How alike (difflib ratio, 0..1) a file's name must be to a sidecar's name to warn.
NEAR_MISS_RATIO = 0.85


class SidecarError(ValueError):
    """A level with two sidecars (both names exist): the message names both."""


class Sidecar(NamedTuple):
    """A level's sidecar: ``path`` (absolute, None when there is none) and ``near_misses``
    (names of files beside the level that look meant as its sidecar and are not read)."""

    path: str | None
    near_misses: tuple

    def near_miss_lines(self, level: str) -> list:
        """One line per near miss, as the CLI warns and the panel reports."""
        short, long = sidecar_names(level)
        return [f"level {level}: {near} is not read as its sidecar (expected {short} or "
                f"{long}): rename it" for near in self.near_misses]


def sidecar_names(level: str) -> tuple[str, str]:
    """The two names the sidecar of the level file ``level`` may have:
    ``<level>.levelcheck.json`` (its name without its suffix) and
    ``<level>.<ext>.levelcheck.json``."""
    name = os.path.basename(level)
    return os.path.splitext(name)[0] + SIDECAR_SUFFIX, name + SIDECAR_SUFFIX


def _listing(folder: str) -> set:
    try:
        return set(os.listdir(folder))
    except OSError:
        return set()


def find_sidecar(level: str) -> Sidecar:
    """The sidecar of the level file ``level`` (either name of ``sidecar_names``; None when
    neither exists) and its near misses (``near_misses``). SidecarError when both exist."""
    folder = os.path.dirname(os.path.abspath(level))
    names = sidecar_names(level)
    present = _listing(folder)
    found = [n for n in names if n in present]
    if len(found) == 2:
        raise SidecarError(f"level {level}: two sidecars, {found[0]} and {found[1]}; keep "
                           "one")
    return Sidecar(os.path.join(folder, found[0]) if found else None,
                   tuple(near_misses(level, present, names)))


def sidecar_to_write(level: str) -> str:
    """Where the sidecar of ``level`` is written: the one present (``find_sidecar``), else
    ``<level>.levelcheck.json`` beside it. SidecarError when both names exist."""
    found = find_sidecar(level).path
    return found if found is not None else os.path.join(
        os.path.dirname(os.path.abspath(level)), sidecar_names(level)[0])


def near_misses(level: str, present, names) -> list:
    """Files of ``present`` (names in the level's folder) that look like a sidecar of
    ``level`` but are not one of ``names``: the level's name (any case) followed by
    something close to a sidecar's suffix; another level's exact sidecar is never one."""
    stem = os.path.splitext(os.path.basename(level))[0].lower()
    others = {os.path.splitext(n)[0] + SIDECAR_SUFFIX for n in present} | {
        n + SIDECAR_SUFFIX for n in present}
    out = []
    for name in sorted(set(present) - set(names) - others):
        low = name.lower()
        if not low.startswith(stem) or not low.endswith(".json") and "levelch" not in low:
            continue
        if max(difflib.SequenceMatcher(None, low, n.lower()).ratio() for n in names) >= (
                NEAR_MISS_RATIO):
            out.append(name)
    return out
