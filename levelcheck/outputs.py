"""The output folder: probed before any work, written atomically at the end.

``probe(out)`` creates the folder and writes, flushes, syncs and removes a small file in it
before Blender starts, so an unwritable or full output folder is exit status 2 in a second,
not after the whole run. A write that still fails at the end (the disk filled meanwhile) is
an ``OutputError``: exit status 2 with one line, never a traceback that CI reads as findings.
Every file is written to a temporary file beside it and renamed into place: a reader sees
the old file or the whole new one.

``--out`` never holds an earlier run's outputs after this run (``clear_previous``): before
any work, the files an earlier levelcheck run wrote there (report.json, junit.xml, its
pictures and saved .blend files; known by the folder's report.json) are removed, so a run
that stops with exit status 2 leaves none of them for a "publish always" step to show as
green. A non-empty folder holding no levelcheck report.json is refused (exit status 2): it
is not levelcheck's to clear.
"""

from __future__ import annotations

import contextlib
import fnmatch
import json
import os
import shutil
import tempfile

from ..core.checks.report import REPORT_FORMAT
from .junit import junit_xml

PROBE_BYTES = 64 * 1024  # a little more than a small report.json


class OutputError(Exception):
    """An output that cannot be written: one line on stderr, exit status 2."""


def probe(out: str) -> bool:
    """Create ``out`` if needed and prove it writable. Returns whether it was created (so a
    run that stops with exit status 2 can remove it again). OutputError otherwise."""
    path = os.path.abspath(out)
    created = not os.path.exists(path)
    try:
        os.makedirs(path, exist_ok=True)
    except OSError as exc:
        raise OutputError(f"--out {out}: cannot create it ({exc.strerror or exc})") from None
    if not os.path.isdir(path):
        raise OutputError(f"--out {out}: not a folder")
    try:
        fd, tmp = tempfile.mkstemp(prefix=".levelcheck-probe-", dir=path)
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(b"\0" * PROBE_BYTES)
                handle.flush()
                os.fsync(handle.fileno())
        finally:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
    except OSError as exc:
        if created:
            with contextlib.suppress(OSError):
                os.rmdir(path)
        raise OutputError(f"--out {out}: cannot write there ({exc.strerror or exc})") from None
    return created


# What a levelcheck run writes into --out (and its temporary files if one was killed).
OWN_PATTERNS = ("report.json", "junit.xml", "report.png", "report-*.png", "finding-*.png",
                "*.levelcheck.blend", ".levelcheck-*")


def clear_previous(out: str) -> list:
    """Remove an earlier levelcheck run's outputs from ``out`` (see the module docstring).
    Returns the names removed. OutputError for a non-empty folder that holds no levelcheck
    report.json, or a file that cannot be removed."""
    path = os.path.abspath(out)
    if not os.path.isdir(path):
        return []
    names = sorted(os.listdir(path))
    if not names:
        return []
    report = os.path.join(path, "report.json")
    try:
        with open(report, encoding="utf-8") as handle:
            ours = json.load(handle).get("format") == REPORT_FORMAT
    except (OSError, ValueError, AttributeError):
        ours = False
    if not ours:
        raise OutputError(f"--out {out}: not empty and not a levelcheck output (no levelcheck "
                          "report.json in it); name an empty or new folder")
    removed = [n for n in names if any(fnmatch.fnmatchcase(n, p) for p in OWN_PATTERNS)
               and os.path.isfile(os.path.join(path, n))]
    try:
        for n in [n for n in removed if n != "report.json"] + ["report.json"]:
            os.unlink(os.path.join(path, n))  # report.json last: the folder stays ours
    except OSError as exc:
        raise OutputError(f"--out {out}: cannot remove the earlier run's {n} "
                          f"({exc.strerror or exc})") from None
    return removed


def remove_if_empty(out: str):
    with contextlib.suppress(OSError):
        os.rmdir(out)


def _file_mode():
    """The mode a new file gets under the process umask (mkstemp's files are 0600)."""
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask


def _atomic(path, fill):
    folder = os.path.dirname(path)
    fd, tmp = tempfile.mkstemp(prefix=".levelcheck-", dir=folder)
    try:
        with os.fdopen(fd, "wb") as handle:
            fill(handle)
        os.chmod(tmp, _file_mode())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def write_atomic(path, data: bytes):
    _atomic(path, lambda handle: handle.write(data))


def copy_atomic(src, path):
    def fill(handle):
        with open(src, "rb") as source:
            shutil.copyfileobj(source, handle)
    _atomic(path, fill)


def write_outputs(document, outputs: dict, out_dir) -> list:
    """report.json, junit.xml and every file of ``outputs`` ({name: source path}) into
    ``out_dir``. Returns the paths written (report, junit, then the rest by name).
    OutputError for the first that cannot be written."""
    written = []
    target = ""
    try:
        os.makedirs(out_dir, exist_ok=True)
        for name, src in sorted(outputs.items()):
            target = os.path.join(out_dir, name)
            copy_atomic(src, target)
            written.append(target)
        target = os.path.join(out_dir, "report.json")
        write_atomic(target, (json.dumps(document, indent=1, allow_nan=False) + "\n").encode())
        written.insert(0, target)
        target = os.path.join(out_dir, "junit.xml")
        write_atomic(target, junit_xml(document))
        written.insert(1, target)
    except OSError as exc:
        raise OutputError(f"cannot write {target or out_dir}: {exc.strerror or exc}") from None
    return written
