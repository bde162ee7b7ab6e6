"""The levels of a run, checked before Blender starts: the files exist and are what their
suffix says (OBJ vertices finite), each level's spec (sidecar) parsed strictly, its importer
axes, and its key (the path relative to the run's root: a finding's identity across runs).

The root is ``--root``, else the git top level of the levels' common folder when it is in a
repository, else that folder: keys are then the paths in the repository, the same whichever
subset of levels a run checks (two ``level.obj`` in different folders never share a key).
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import subprocess
import sys

from ..core.checks import sidecar
from ..core.checks.spec import EMPTY_SPEC, LevelSpec, check_axes, parse_spec
from .axes import AXIS_FORMATS, LEVEL_SUFFIXES

SIDECAR_SUFFIX = sidecar.SIDECAR_SUFFIX
SAMPLE_KEY = "sample level"
BLEND_MAGIC = (b"BLENDER", b"\x28\xb5\x2f\xfd", b"\x1f\x8b")  # plain, zstd, gzip
# An OBJ vertex line with a coordinate Blender's importer would read as 0 (nan, inf).
_OBJ_NONFINITE = re.compile(rb"^[ \t]*v[ \t][^\n]*?(?<![A-Za-z])(nan|inf)", re.M | re.I)


class UsageError(Exception):
    """Bad command line or input: one line on stderr, exit status 2."""


@dataclasses.dataclass
class Level:
    index: int
    path: str | None  # None: the bundled sample
    display: str  # as given on the command line
    spec: LevelSpec
    key: str = SAMPLE_KEY  # identity across runs: the path relative to --root
    up: str | None = None  # importer axes (OBJ, FBX), from the spec or the command line
    forward: str | None = None
    render: str | None = None  # the render level's file (the spec's "render"), absolute


def read_json(path, what):
    """Parsed JSON of ``path``; UsageError for an unreadable file, invalid JSON or a key
    that appears twice in one object (JSON parsers keep the last silently)."""
    def pairs(items):
        seen = {}
        for key, value in items:
            if key in seen:
                raise UsageError(f"{what} {path}: key {key!r} appears twice in one object")
            seen[key] = value
        return seen

    try:
        with open(path, encoding="utf-8") as handle:
            return json.load(handle, object_pairs_hook=pairs)
    except OSError as exc:
        raise UsageError(f"{what} {path}: cannot read it ({exc.strerror})") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise UsageError(f"{what} {path}: not valid JSON ({exc})") from None


def read_spec(path) -> LevelSpec:
    try:
        return parse_spec(read_json(path, "spec"), path)
    except ValueError as exc:
        raise UsageError(str(exc)) from None


def obj_nonfinite(path) -> int | None:
    """The 1-based line of the first OBJ vertex with a nan or inf coordinate, else None
    (Blender's importer reads them as 0: a silently wrong level)."""
    with open(path, "rb") as handle:
        data = handle.read()
    m = _OBJ_NONFINITE.search(data)
    return None if m is None else data.count(b"\n", 0, m.start()) + 1


def sniff(path):
    """Cheap checks that ``path`` is a level file of its kind (before Blender starts)."""
    suffix = os.path.splitext(path)[1].lower()
    if suffix not in LEVEL_SUFFIXES:
        raise UsageError(f"level {path}: unsupported file type {suffix or '(none)'!r}; "
                         f"expected one of {', '.join(LEVEL_SUFFIXES)}")
    if not os.path.isfile(path):
        raise UsageError(f"level {path}: no such file")
    try:
        with open(path, "rb") as handle:
            head = handle.read(4096)
    except OSError as exc:
        raise UsageError(f"level {path}: cannot read it ({exc.strerror})") from None
    corrupt = UsageError(f"level {path}: not a valid {suffix} file (corrupt or empty)")
    if not head:
        raise corrupt
    if suffix == ".blend" and not head.startswith(BLEND_MAGIC):
        raise corrupt
    if suffix == ".glb" and not head.startswith(b"glTF"):
        raise corrupt
    if suffix == ".fbx" and not (head.startswith(b"Kaydara FBX Binary")
                                 or b"FBXHeaderExtension" in head):
        raise corrupt
    if suffix == ".gltf":
        doc = read_json(path, "level")
        if not isinstance(doc, dict) or "asset" not in doc:
            raise corrupt
    if suffix == ".obj":
        try:
            text = head.decode("utf-8")
        except UnicodeDecodeError:
            raise corrupt from None
        if not any(line.split()[:1] in (["v"], ["o"], ["g"], ["f"], ["mtllib"], ["#"])
                   for line in text.splitlines() if line.strip()):
            raise corrupt
        line = obj_nonfinite(path)
        if line is not None:
            raise UsageError(f"level {path}: line {line}: a vertex with a nan or inf "
                             "coordinate (Blender would read it as 0)")


def find_sidecar(path: str, warn=None) -> str | None:
    """The sidecar of the level ``path`` (core's rule, ``core.checks.sidecar.find_sidecar``:
    either name, a near miss not read), or None. UsageError when both names exist; each near
    miss is one warning line through ``warn(line)`` (default: stderr)."""
    try:
        found = sidecar.find_sidecar(path)
    except sidecar.SidecarError as exc:
        raise UsageError(str(exc)) from None
    for line in found.near_miss_lines(path):
        (warn or _stderr)(f"levelcheck: warning: {line}")
    return found.path


def _stderr(line: str):
    print(line, file=sys.stderr)


def _render_file(path: str, spec: LevelSpec) -> str | None:
    """The spec's ``render`` file beside the level ``path`` (relative to the level file),
    checked like a level (its importer axes are the level's); None when it names none."""
    if not spec.render:
        return None
    render = os.path.join(os.path.dirname(os.path.abspath(path)), spec.render)
    try:
        sniff(render)
    except UsageError as exc:
        raise UsageError(f"level {path}: \"render\": {exc}") from None
    return render


def _axes(level: Level, up, forward):
    """The level's importer axes: the spec's, else the command line's (OBJ and FBX only)."""
    suffix = os.path.splitext(level.path or "")[1].lower()
    spec = level.spec
    if (spec.up or spec.forward) and suffix not in AXIS_FORMATS:
        raise UsageError(f"level {level.display}: the spec sets \"up\"/\"forward\", but "
                         f"{suffix or 'the sample level'} levels carry their own axes (only "
                         f"{', '.join(AXIS_FORMATS)} take them)")
    if suffix in AXIS_FORMATS:
        level.up = spec.up or up
        level.forward = spec.forward or forward
        try:
            check_axes(level.up or "Y", level.forward, "forward")
        except ValueError as exc:
            raise UsageError(f"level {level.display}: {exc}") from None


def _key(path: str, root: str) -> str:
    rel = os.path.relpath(os.path.realpath(path), root)
    if rel.startswith(os.pardir + os.sep) or rel == os.pardir:
        raise UsageError(f"level {path}: not inside --root {root}")
    return rel.replace(os.sep, "/")


def git_top(folder: str) -> str | None:
    """The top level of the git work tree holding ``folder``, or None (not in one, or no git)."""
    try:
        proc = subprocess.run(["git", "-C", folder, "rev-parse", "--show-toplevel"],
                              capture_output=True, text=True, timeout=30, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    top = proc.stdout.strip()
    return os.path.realpath(top) if proc.returncode == 0 and top else None


def default_root(paths) -> str:
    """The run's root for ``paths``: the git top level of their common folder, else that
    folder (absolute, symbolic links resolved)."""
    folders = [os.path.dirname(os.path.realpath(p)) for p in paths]
    common = os.path.commonpath(folders) if folders else os.getcwd()
    return git_top(common) or common


def gather(args) -> list:
    """The run's levels (index = position on the command line), every spec read and checked.
    UsageError for the first problem."""
    return gather_with_root(args)[0]


def gather_with_root(args) -> tuple[list, str | None]:
    """(``gather``'s levels, the root their keys are relative to: None for the bundled
    sample)."""
    given = args.levels or [None]
    common = read_spec(args.spec) if args.spec else None
    levels = []
    for i, arg in enumerate(given):
        if arg is None:
            levels.append(Level(i, None, "sample level", common or EMPTY_SPEC))
            continue
        path, spec = arg, None
        if arg.lower().endswith(".json"):  # a level spec naming its mesh
            spec = read_spec(arg)
            if not spec.mesh:
                raise UsageError(f"spec {arg}: names no level file (\"mesh\")")
            path = os.path.join(os.path.dirname(os.path.abspath(arg)), spec.mesh)
        sniff(path)
        if spec is None:
            sidecar = find_sidecar(path)
            spec = common or (read_spec(sidecar) if sidecar else EMPTY_SPEC)
        levels.append(Level(i, path, arg, spec, render=_render_file(path, spec)))
    files = [lv.path for lv in levels if lv.path is not None]
    root = os.path.realpath(args.root) if args.root else default_root(files)
    if args.root and not os.path.isdir(root):
        raise UsageError(f"--root {args.root}: no such folder")
    keys: dict = {}
    for lv in levels:
        if lv.path is not None:
            lv.key = _key(lv.path, root)
        if lv.key in keys:
            raise UsageError(f"level {lv.display}: given twice (also {keys[lv.key]})")
        keys[lv.key] = lv.display
        _axes(lv, args.up, args.forward)
    if (args.up or args.forward) and not any(
            os.path.splitext(lv.path or "")[1].lower() in AXIS_FORMATS for lv in levels):
        raise UsageError(f"--up/--forward: no {' or '.join(AXIS_FORMATS)} level to apply "
                         "them to (other formats carry their own axes)")
    return levels, (root if files else None)
