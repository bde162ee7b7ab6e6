"""The README and docs/ cannot drift from the code: every Python snippet runs (a page's snippets
in order, in one namespace, from the repository's root, against the sample level's arrays in
``samples/level.npz``), the sidecar example is a valid spec, every block is of a known kind and
every opt-out says which test or CI lane runs the block instead, and that test exists. The
shell commands run in ``tests/blender/test_docs_commands.py`` (they start Blender)."""

import json
import linecache
import re

import docs_blocks
import pytest
from capsule_collision.core.checks.spec import SpecError, parse_spec

ROOT = docs_blocks.ROOT
BLOCKS = docs_blocks.all_blocks()
README_COMMANDS = re.findall(r"```\n(.+?)\n```", (ROOT / "README.md").read_text())[:2]


def _python_pages():
    return sorted({b.page for b in BLOCKS if b.language == "python"
                   and "covered-by" not in b.directive})


def test_the_docs_have_blocks_of_every_kind_the_tests_run():
    kinds = {(b.language, tuple(sorted(b.directive))) for b in BLOCKS}
    assert ("python", ()) in kinds and ("sh", ()) in kinds and ("json", ("sidecar",)) in kinds
    assert len(_python_pages()) >= 1 and "docs/api.md" in _python_pages()


def test_every_block_is_of_a_known_language():
    for b in BLOCKS:
        where = f"{b.page}:{b.line}"
        if b.language == "":
            assert b.page == "README.md" and b.text in README_COMMANDS, (
                f"{where}: an untagged block (only the README's two commands are untagged; "
                f"tag it one of {docs_blocks.LANGUAGES})")
        else:
            assert b.language in docs_blocks.LANGUAGES, f"{where}: ```{b.language}"


def test_every_opt_out_names_what_runs_it_instead_and_why():
    opt_outs = [b for b in BLOCKS if set(b.directive) & set(docs_blocks.REASONED)]
    assert opt_outs  # the install and benchmark commands
    for b in opt_outs:
        where = f"{b.page}:{b.line}"
        assert len(b.reason) >= 20, f"{where}: an opt-out without its reason in parentheses"
        target = b.directive.get("covered-by")
        if target is None:
            continue
        path, _, test = target.partition("::")
        assert (ROOT / path).is_file(), f"{where}: covered by {path}, which does not exist"
        if test:
            source = (ROOT / path).read_text()
            assert re.search(rf"^def {re.escape(test)}\(", source, re.M), (
                f"{where}: covered by {target}, which is not a test in {path}")


def test_covered_by_opt_outs_run_where_they_say():
    """The strongest opt-outs are checked for what they claim: the index repeats the README's
    two commands word for word; the docs lane of .ci/run runs the development page's commands;
    .ci/wheel builds and installs the wheel the CLI page shows."""
    index = [b for b in BLOCKS if b.page == "docs/index.md" and b.language == "sh"]
    assert [docs_blocks.commands(b) for b in index] == [README_COMMANDS]
    ci = (ROOT / ".ci" / "run").read_text()
    (dev,) = [b for b in BLOCKS if b.directive.get("covered-by") == ".ci/run"]
    for command in docs_blocks.commands(dev):
        assert command in ci, f"{command!r} is not in .ci/run"
    (wheel,) = [b for b in BLOCKS if b.directive.get("covered-by") == ".ci/wheel"]
    assert "pip wheel" in wheel.text and "pip wheel" in (ROOT / ".ci" / "wheel").read_text()


def test_blocks_are_read_with_their_directives(tmp_path):
    page = tmp_path / "page.md"
    page.write_text("Text.\n<!-- docs-test: exit=1 -->\n```sh\nls -l  # list\n# a note\n\nfalse\n"
                    "```\n\n```text\n...\n  a line  \n```\n")
    run, output = docs_blocks.blocks(page)
    assert (run.page, run.line, run.language, run.directive) == ("page.md", 3, "sh", {"exit": "1"})
    assert docs_blocks.commands(run) == ["ls -l", "false"]
    assert (output.language, output.directive) == ("text", {})  # no comment right before it
    assert docs_blocks.expected_output_lines(output) == ["  a line"]
    page.write_text("```python\nx = 1\n")
    with pytest.raises(ValueError, match="never closed"):
        docs_blocks.blocks(page)


def test_directives_are_parsed_strictly():
    assert docs_blocks.parse_directive("exit=1") == ({"exit": "1"}, "")
    assert docs_blocks.parse_directive("each K=1,2 (two)") == ({"each": "K=1,2"}, "two")
    assert docs_blocks.parse_directive("covered-by a.py::test_x (why)") == (
        {"covered-by": "a.py::test_x"}, "why")
    with pytest.raises(ValueError, match="unknown docs-test key 'skip'"):
        docs_blocks.parse_directive("skip")


@pytest.mark.parametrize("page", _python_pages())
def test_python_snippets_of_the_page_run_in_order(page, monkeypatch):
    monkeypatch.chdir(ROOT)  # the pages say: from the repository's root
    namespace: dict = {"__name__": f"docs:{page}"}
    for b in BLOCKS:
        if b.page != page or b.language != "python" or "covered-by" in b.directive:
            continue
        name = f"{page}:{b.line}"  # a failing snippet's traceback shows its page and lines
        linecache.cache[name] = (len(b.text), None, b.text.splitlines(True), name)
        code = compile(b.text, name, "exec")
        exec(code, namespace)  # noqa: S102  (the snippet a reader copies)


def test_the_sidecar_example_is_a_valid_spec():
    sidecars = [b for b in BLOCKS if b.language == "json" and "sidecar" in b.directive]
    assert sidecars
    for b in sidecars:
        spec = parse_spec(json.loads(b.text), f"{b.page}:{b.line}")
        assert spec.capsules and spec.paths
    for b in BLOCKS:
        if b.language == "json":
            json.loads(b.text)  # every JSON block parses
    with pytest.raises(SpecError, match=r"capsules\[0\]\.expected: unknown key"):
        parse_spec({"capsules": [{"name": "a", "foot": [0, 0, 0], "expected": "clear"}]})


def test_the_manifest_website_is_where_the_site_is_published():
    manifest = (ROOT / "blender_manifest.toml").read_text()
    site = re.search(r"^site_url: (\S+)$", (ROOT / "mkdocs.yml").read_text(), re.M).group(1)
    assert re.search(r'^website = "(\S+)"$', manifest, re.M).group(1) == site
    assert site.startswith("https://") and site in (ROOT / "README.md").read_text()


# Paths the docs name that must not exist (they say so: pytest would import the checkout).
ABSENT_ON_PURPOSE = {"tests/__init__.py"}
_REPO_PATH = re.compile(
    r"(?<![\w./-])((?:\.ci|core|addon|levelcheck|tools|tests|examples|schema|samples|docs)"
    r"/[\w./-]*\w)")


def test_every_repository_path_the_docs_name_exists():
    """A file renamed or removed leaves no dangling name in the prose (``tools/bench_reach.py``,
    ``core/checks/audits/standable.py``; ``module.function`` names their module)."""
    named = 0
    for page in docs_blocks.pages():
        for match in _REPO_PATH.finditer(page.read_text()):
            path = match.group(1)
            named += 1
            if path in ABSENT_ON_PURPOSE:
                assert not (ROOT / path).exists(), path
                continue
            module = path.rsplit(".", 1)[0] + ".py"  # core/checks/verdicts.capsule_verdicts
            assert (ROOT / path).exists() or (ROOT / module).is_file(), (
                f"{page.name} names {path}, which is not in the repository")
    assert named > 50
