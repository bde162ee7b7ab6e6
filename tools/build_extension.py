"""Validate and build the Capsule Collision extension zip with Blender's own tool.

    python tools/build_extension.py [--source-dir .] [--output-dir dist]

Uses ``blender_ext.py`` (the extension CLI shipped inside the ``bpy`` package) with Blender's
tag list (``--valid-tags``), so an unknown tag fails here as it would on extensions.blender.org.
Steps: fetch the wheels the manifest declares (``wheels = [...]``: CoACD for convex
decomposition, one abi3 wheel per platform) into ``wheels/`` when they are not there (from a
shared cache, ``$CC_WHEEL_CACHE`` or ``~/.cache/capsule_collision/wheels``, filled once by
``pip download``; they are never committed), validate the source, build into
``--output-dir`` (created when missing, as on a fresh clone), validate the zip, then check
its file list: the extension and nothing else (the manifest, ``__init__.py``, ``addon/``,
``core/``, the declared ``wheels/*.whl``; no virtual environment, test, tool, sample, cache or
dotfile). Prints the zip's path. Exit 0 on success, 1 when a step fails (with the
tool's output), 2 for bad arguments. Needs only Python 3.11 and the installed ``bpy`` package
(it is not imported).
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import pathlib
import re
import shutil
import subprocess
import sys
import zipfile

ROOT = pathlib.Path(__file__).resolve().parents[1]
MANIFEST = "blender_manifest.toml"
# What the zip may hold: these top-level files, and files under these folders.
ALLOWED_FILES = ("blender_manifest.toml", "__init__.py", "LICENSE")
ALLOWED_DIRS = ("addon/", "core/")
WHEELS_DIR = "wheels/"  # only the manifest's wheels, fetched at build time
BUILD_TIMEOUT_S = 300
# pip's --platform for each wheel's platform tag (pip download fetches abi3 wheels by these)
PIP_PLATFORMS = {"manylinux2014_x86_64": "manylinux2014_x86_64",
                 "macosx_11_0_arm64": "macosx_11_0_arm64", "win_amd64": "win_amd64"}
WHEEL_NAME = re.compile(r"^(?P<dist>[A-Za-z0-9_.]+)-(?P<version>[^-]+)-[^-]+-[^-]+-"
                        r"(?P<platform>[^-]+)\.whl$")


class BuildError(Exception):
    """A step failed; the message says which and why."""


def blender_tools():
    """(blender_ext.py, tags.py) inside the installed bpy package (without importing bpy)."""
    spec = importlib.util.find_spec("bpy")
    if spec is None or not spec.origin:
        raise BuildError("the bpy package is not installed: pip install -r requirements.txt")
    base = pathlib.Path(spec.origin).parent
    versions = sorted((p for p in base.iterdir() if p.is_dir() and p.name[:1].isdigit()),
                      key=lambda p: tuple(int(x) for x in p.name.split(".") if x.isdigit()))
    if not versions:
        raise BuildError(f"no Blender version folder inside {base}")
    scripts = versions[-1] / "scripts"
    cli = scripts / "addons_core" / "bl_pkg" / "cli" / "blender_ext.py"
    tags = scripts / "modules" / "_bpy_internal" / "extensions" / "tags.py"
    for path in (cli, tags):
        if not path.is_file():
            raise BuildError(f"missing {path.name} in the bpy package ({path})")
    return cli, tags


def _run(cli, *args):
    proc = subprocess.run([sys.executable, str(cli), *args], capture_output=True, text=True,
                          timeout=BUILD_TIMEOUT_S)
    if proc.returncode != 0:
        raise BuildError(f"blender_ext.py {args[0]} failed:\n{proc.stdout}{proc.stderr}")
    return proc.stdout


def manifest_wheels(source) -> list[str]:
    """The ``wheels = [...]`` paths of the manifest in ``source`` ("./wheels/x.whl" form)."""
    text = (pathlib.Path(source) / MANIFEST).read_text(encoding="utf-8")
    m = re.search(r"^wheels\s*=\s*\[(.*?)\]", text, re.S | re.M)
    return re.findall(r'"(\./wheels/[^"]+\.whl)"', m.group(1)) if m else []


def _wheel_cache() -> pathlib.Path:
    env = os.environ.get("CC_WHEEL_CACHE")
    base = pathlib.Path(env) if env else pathlib.Path.home() / ".cache" / "capsule_collision"
    return base / "wheels" if not env else base


def fetch_wheels(source) -> list[pathlib.Path]:
    """Every wheel the manifest declares, present in ``<source>/wheels/`` (copied from the
    cache, which ``pip download`` fills when it lacks one). BuildError when pip cannot."""
    out = []
    cache = _wheel_cache()
    for rel in manifest_wheels(source):
        target = pathlib.Path(source) / rel
        out.append(target)
        if target.is_file():
            continue
        cached = cache / target.name
        if not cached.is_file():
            m = WHEEL_NAME.match(target.name)
            platform = m and PIP_PLATFORMS.get(m.group("platform").split(".")[-1])
            if not m or not platform:
                raise BuildError(f"{MANIFEST} declares {rel}: no known platform to fetch it for")
            cache.mkdir(parents=True, exist_ok=True)
            proc = subprocess.run(
                [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:",
                 "--platform", platform, "--python-version", "3.11", "-d", str(cache), "-q",
                 f"{m.group('dist')}=={m.group('version')}"],
                capture_output=True, text=True, timeout=BUILD_TIMEOUT_S)
            if proc.returncode != 0 or not cached.is_file():
                raise BuildError(f"could not fetch {target.name} with pip download "
                                 f"(offline? put it in {cache}):\n{proc.stderr[-2000:]}")
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(cached, target)
    return out


def zip_problems(names, wheels=()) -> list[str]:
    """Entries of a zip that are not part of the extension (empty list: the zip is clean);
    ``wheels`` the names of the wheels the manifest declares (allowed under wheels/)."""
    bad = []
    allowed_wheels = {WHEELS_DIR + pathlib.Path(w).name for w in wheels}
    for name in names:
        parts = name.split("/")
        if name.endswith("/"):
            continue  # directory entries
        if any(p.startswith(".") or p == "__pycache__" for p in parts) or name.endswith(".pyc"):
            bad.append(name)
        elif name.startswith(WHEELS_DIR):
            if name not in allowed_wheels:
                bad.append(name)
        elif name not in ALLOWED_FILES and not name.startswith(ALLOWED_DIRS):
            bad.append(name)
    return bad


def build(source_dir=ROOT, output_dir=None) -> pathlib.Path:
    """Validate, build and check; returns the zip's path. Raises BuildError."""
    source = pathlib.Path(source_dir).resolve()
    if not (source / MANIFEST).is_file():
        raise BuildError(f"{source} has no {MANIFEST}")
    out = pathlib.Path(output_dir) if output_dir is not None else source / "dist"
    out.mkdir(parents=True, exist_ok=True)
    cli, tags = blender_tools()
    wheels = fetch_wheels(source)
    _run(cli, "validate", str(source), "--valid-tags", str(tags))
    before = set(out.glob("*.zip"))
    text = _run(cli, "build", "--source-dir", str(source), "--output-dir", str(out),
                "--valid-tags", str(tags))
    made = [p for p in out.glob("*.zip") if p not in before or p.name in text]
    if len(made) != 1:
        raise BuildError(f"expected one zip in {out}, found {sorted(p.name for p in made)}")
    zip_path = made[0]
    _run(cli, "validate", str(zip_path), "--valid-tags", str(tags))
    with zipfile.ZipFile(zip_path) as zf:
        problems = zip_problems(zf.namelist(), [w.name for w in wheels])
    if problems:
        zip_path.unlink()
        raise BuildError(f"the zip held files that are not the extension ({len(problems)}): "
                         + ", ".join(problems[:10])
                         + f"; fix paths_exclude_pattern in {MANIFEST}")
    return zip_path


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--source-dir", default=str(ROOT),
                        help="extension source (default: this checkout)")
    parser.add_argument("--output-dir", default=None,
                        help="where the zip goes (default: <source>/dist, created)")
    args = parser.parse_args(argv)
    if not (pathlib.Path(args.source_dir) / MANIFEST).is_file():
        print(f"error: {args.source_dir} has no {MANIFEST}", file=sys.stderr)
        return 2
    try:
        zip_path = build(args.source_dir, args.output_dir)
    except BuildError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    with zipfile.ZipFile(zip_path) as zf:
        n = len([n for n in zf.namelist() if not n.endswith("/")])
    print(f"{zip_path} ({n} files, {zip_path.stat().st_size} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
