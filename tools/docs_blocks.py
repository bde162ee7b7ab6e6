"""The fenced code blocks of the README and of ``docs/``, with their ``docs-test`` directives:
the one reader of the docs tests (``tests/core/test_docs_snippets.py`` runs the Python snippets
and checks the sidecar example, ``tests/blender/test_docs_commands.py`` runs the shell
commands), so that every command and snippet a reader copies runs in CI.

A block's language says what happens to it: ``python`` runs (a page's snippets in order, in one
namespace, from the repository's root), ``sh`` runs in bash (a page's blocks in order, in one
scratch folder, with the test environment's ``python`` and ``levelcheck`` first on PATH),
``json`` parses, ``text`` is output. Only the README's two commands are untagged (CI greps
them). An HTML comment on the line before the fence changes that, and says why:

``<!-- docs-test: exit=1 -->``
    the block's expected exit status (default 0).
``<!-- docs-test: each K=1,2,3,4 -->``
    run it once per value, with ``K`` set in the environment.
``<!-- docs-test: covered-by PATH[::TEST] (reason) -->``
    not run here: PATH (a test file and its test, or a CI script) runs it; the test checks
    that they exist.
``<!-- docs-test: help-only (reason) -->``
    each command runs with ``--help`` only (benchmarks, which take minutes).
``<!-- docs-test: output-of-previous (...) -->``
    a ``text`` block: every line but ``...`` is a line the previous block printed.
``<!-- docs-test: sidecar -->``
    a ``json`` block that is a valid levelcheck sidecar (``core.checks.spec.parse_spec``).
"""

from __future__ import annotations

import pathlib
import re
from typing import NamedTuple

ROOT = pathlib.Path(__file__).resolve().parents[1]
LANGUAGES = ("python", "sh", "json", "text")
KEYS = ("exit", "each", "covered-by", "help-only", "output-of-previous", "sidecar")
REASONED = ("covered-by", "help-only")  # an opt-out must say why

_FENCE = re.compile(r"^```([A-Za-z0-9_-]*)\s*$")
_DIRECTIVE = re.compile(r"^<!-- docs-test: (.*?) -->$")
_REASON = re.compile(r"\s*\((.+)\)\s*$")


class Block(NamedTuple):
    """One fenced block: ``page`` (path relative to the root), ``line`` (1-based, the fence),
    ``language`` ("" untagged), ``text`` (the block's lines), ``directive`` {key: value}
    ("" for a bare key), ``reason`` (the parenthesised text of its directive, or "")."""

    page: str
    line: int
    language: str
    text: str
    directive: dict
    reason: str


def pages() -> list[pathlib.Path]:
    """README.md, then docs/*.md (architecture.md is ARCHITECTURE.md, read once)."""
    docs = sorted(p for p in (ROOT / "docs").glob("*.md") if not p.is_symlink())
    return [ROOT / "README.md", ROOT / "ARCHITECTURE.md", *docs]


def parse_directive(comment: str) -> tuple[dict, str]:
    """``exit=1 (why)`` -> ({"exit": "1"}, "why"). ValueError for an unknown key."""
    reason = ""
    match = _REASON.search(comment)
    if match:
        reason, comment = match.group(1).strip(), comment[:match.start()]
    words = comment.split()
    out: dict = {}
    i = 0
    while i < len(words):
        key, _, value = words[i].partition("=")
        if key not in KEYS:
            raise ValueError(f"unknown docs-test key {key!r}; known: {', '.join(KEYS)}")
        if key in ("each", "covered-by") and not value:
            i += 1
            value = words[i] if i < len(words) else ""
        out[key] = value
        i += 1
    return out, reason


def blocks(path: pathlib.Path) -> list[Block]:
    """The fenced blocks of one page, in order."""
    lines = path.read_text().split("\n")
    out, i = [], 0
    while i < len(lines):
        match = _FENCE.match(lines[i])
        if not match:
            i += 1
            continue
        end = next((j for j in range(i + 1, len(lines)) if lines[j].startswith("```")), None)
        if end is None:
            raise ValueError(f"{path.name}:{i + 1}: a fence that is never closed")
        before = _DIRECTIVE.match(lines[i - 1]) if i else None
        directive, reason = parse_directive(before.group(1)) if before else ({}, "")
        page = str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else path.name
        out.append(Block(page, i + 1, match.group(1),
                         "\n".join(lines[i + 1:end]), directive, reason))
        i = end + 1
    return out


def all_blocks() -> list[Block]:
    return [b for page in pages() for b in blocks(page)]


def commands(block: Block) -> list[str]:
    """The command lines of a ``sh`` block, comments and blank lines left out."""
    return [ln.split(" #")[0].strip() for ln in block.text.split("\n")
            if ln.strip() and not ln.lstrip().startswith("#")]


def expected_output_lines(block: Block) -> list[str]:
    """The lines of an ``output-of-previous`` block that must appear, ``...`` left out."""
    return [ln.rstrip() for ln in block.text.split("\n") if ln.strip() not in ("", "...")]
