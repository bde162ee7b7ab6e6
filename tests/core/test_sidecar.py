"""A level's sidecar by name (core/checks/sidecar.py): the one rule of the CLI
(levelcheck/levels.find_sidecar) and the panel (addon/waivers.sidecar_path): either name,
both refused, near misses named and not read, where a waiver is written. The CLI's wrapper is
checked against core for every state of the folder, so the two cannot drift apart again
(they did: the add-on took the long name when both existed; the panel's side is
tests/blender/test_addon_waivers.py)."""

import os

import pytest
from capsule_collision.core.checks.sidecar import (
    SidecarError,
    find_sidecar,
    sidecar_names,
    sidecar_to_write,
)
from capsule_collision.levelcheck.levels import UsageError
from capsule_collision.levelcheck.levels import find_sidecar as cli_find_sidecar

SHORT, LONG = "castle.levelcheck.json", "castle.blend.levelcheck.json"


def _folder(tmp_path, *names):
    level = tmp_path / "castle.blend"
    level.write_bytes(b"BLENDER")
    for name in names:
        (tmp_path / name).write_text("{}")
    return str(level)


def test_the_two_names_are_the_level_without_and_with_its_suffix():
    assert sidecar_names("/a/castle.blend") == (SHORT, LONG)
    assert sidecar_names("castle.tar.obj") == ("castle.tar.levelcheck.json",
                                               "castle.tar.obj.levelcheck.json")


@pytest.mark.parametrize("present, found", [((), None), ((SHORT,), SHORT), ((LONG,), LONG)])
def test_either_name_is_read_and_written_and_the_cli_reads_the_same(tmp_path, present, found):
    level = _folder(tmp_path, *present)
    got = find_sidecar(level)
    assert got.path == (None if found is None else str(tmp_path / found))
    assert got.near_misses == ()
    # a waiver goes into the one present, else the short name (the panel's file)
    assert sidecar_to_write(level) == str(tmp_path / (found or SHORT))
    said = []
    assert cli_find_sidecar(level, said.append) == got.path and said == []


def test_both_names_are_refused_by_core_the_panel_and_the_cli_alike(tmp_path):
    level = _folder(tmp_path, SHORT, LONG)
    with pytest.raises(SidecarError, match=f"two sidecars, {SHORT} and {LONG}; keep one"):
        find_sidecar(level)
    with pytest.raises(SidecarError, match="two sidecars"):  # the panel writes nowhere
        sidecar_to_write(level)
    with pytest.raises(UsageError, match=f"two sidecars, {SHORT} and {LONG}"):  # exit 2
        cli_find_sidecar(level, lambda line: None)
    assert issubclass(SidecarError, ValueError)  # the add-on's {'ERROR'} report


def test_near_misses_are_named_not_read_and_warned_by_the_cli_in_core_words(tmp_path):
    level = _folder(tmp_path, SHORT, "castle.levelchek.json", "Castle.levelcheck.json",
                    "castle.blend.levelcheck.jsn", "castle2.levelcheck.json", "castle2.blend",
                    "castle.notes.json")
    got = find_sidecar(level)
    assert got.path == str(tmp_path / SHORT)
    # another level's sidecar (castle2) and an unrelated JSON are no near misses
    assert got.near_misses == ("Castle.levelcheck.json", "castle.blend.levelcheck.jsn",
                               "castle.levelchek.json")
    lines = got.near_miss_lines(level)
    assert lines[0] == (f"level {level}: Castle.levelcheck.json is not read as its sidecar "
                        f"(expected {SHORT} or {LONG}): rename it")
    said = []
    cli_find_sidecar(level, said.append)
    assert said == [f"levelcheck: warning: {line}" for line in lines]


def test_an_unreadable_folder_has_no_sidecar(tmp_path):
    missing = os.path.join(str(tmp_path), "gone", "castle.obj")
    assert find_sidecar(missing) == (None, ())
