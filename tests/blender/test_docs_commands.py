"""Every shell command of the README and docs/ runs as a reader runs it: a page's ``sh`` blocks in
order in one scratch folder, through bash, with this environment's ``python`` and ``levelcheck``
first on PATH, each with the exit status its ``docs-test`` comment gives (default 0); the
printed sample output must be what the command prints; benchmark commands run with ``--help``.
``samples/level.npz``, the sample level the Python snippets run against, is checked to be the
level Blender builds. Blocks and directives: ``tools/docs_blocks.py``."""

import os
import pathlib
import subprocess
import sys

import docs_blocks
import numpy as np
import pytest

ROOT = docs_blocks.ROOT
BLOCKS = docs_blocks.all_blocks()
RUN = ("covered-by", "help-only")  # blocks not run as written


def _env(extra=None) -> dict:
    bin_dir = str(pathlib.Path(sys.executable).parent)
    env = dict(os.environ, PATH=bin_dir + os.pathsep + os.environ.get("PATH", ""))
    env.update(extra or {})
    return env


def _bash(script: str, cwd, env) -> subprocess.CompletedProcess:
    return subprocess.run(["bash", "-e", "-o", "pipefail", "-c", script], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=900)


def _shell_pages():
    return sorted({b.page for b in BLOCKS
                   if b.language == "sh" and not set(b.directive) & set(RUN)})


def _runs(block):
    """[(env additions)] for a block: one run, or one per value of ``each NAME=v1,v2``."""
    if "each" not in block.directive:
        return [{}]
    name, _, values = block.directive["each"].partition("=")
    return [{name: v} for v in values.split(",")]


@pytest.mark.slow  # starts Blender once per levelcheck run (about a minute in all)
@pytest.mark.parametrize("page", _shell_pages())
def test_shell_commands_of_the_page_run_in_order(page, tmp_path):
    last = None
    page_blocks = [b for b in BLOCKS if b.page == page]
    for b in page_blocks:
        where = f"{b.page}:{b.line}"
        if b.language == "text" and "output-of-previous" in b.directive:
            assert last is not None, f"{where}: no command before it"
            printed = {ln.rstrip() for ln in last.stdout.splitlines()}
            for line in docs_blocks.expected_output_lines(b):
                assert line in printed, (
                    f"{where}: the page shows {line!r}; the command printed\n{last.stdout}")
            continue
        if b.language != "sh" or set(b.directive) & set(RUN):
            continue
        want = int(b.directive.get("exit", "0"))
        for extra in _runs(b):
            last = _bash(b.text, tmp_path, _env(extra))
            assert last.returncode == want, (
                f"{where} {extra}: exit status {last.returncode}, the page says {want}\n"
                f"{last.stdout[-3000:]}\n{last.stderr[-3000:]}")


def test_benchmark_commands_exist_and_take_their_options():
    """``help-only`` blocks: each command with ``--help`` from the repository's root (a
    benchmark takes minutes; tests/core/test_bench.py runs bench.py --quick end to end)."""
    helps = [b for b in BLOCKS if "help-only" in b.directive]
    assert helps
    for b in helps:
        for command in docs_blocks.commands(b):
            proc = _bash(command + " --help", ROOT, _env())
            assert proc.returncode == 0 and "usage:" in proc.stdout, (
                f"{b.page}:{b.line}: {command} --help\n{proc.stderr[-2000:]}")


def test_the_stored_sample_arrays_are_the_sample_level(tmp_path):
    """samples/level.npz (the docs' Python snippets run against it without Blender) holds what
    tools/sample_arrays.py reads from the sample level today."""
    out = tmp_path / "level.npz"
    proc = subprocess.run([sys.executable, str(ROOT / "tools" / "sample_arrays.py"), str(out)],
                          cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    fresh, stored = np.load(out), np.load(ROOT / "samples" / "level.npz")
    assert sorted(fresh.files) == sorted(stored.files)
    for name in fresh.files:
        np.testing.assert_array_equal(fresh[name], stored[name], err_msg=name)
        assert fresh[name].dtype == stored[name].dtype, name
