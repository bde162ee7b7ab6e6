"""core/ must run without Blender, and every import inside the extension must be relative."""

import ast
import pathlib
import warnings

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
BLENDER_MODULES = {"bpy", "bmesh", "mathutils", "gpu", "gpu_extras", "blf", "bpy_extras", "bl_math"}
OWN_PACKAGES = {"core", "addon", "tools", "tests"}


def _imports(path):
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, 0, alias.name
        elif isinstance(node, ast.ImportFrom):
            yield node.lineno, node.level, node.module or ""


def _sources(folder):
    files = sorted((ROOT / folder).rglob("*.py"))
    assert files, f"no Python files under {folder}/"
    return files


@pytest.mark.parametrize("path", _sources("core"), ids=lambda p: p.name)
def test_core_never_imports_blender(path):
    bad = [
        (line, name)
        for line, level, name in _imports(path)
        if level == 0 and name.split(".")[0] in BLENDER_MODULES
    ]
    assert not bad, f"{path.relative_to(ROOT)} imports Blender modules: {bad}"


@pytest.mark.parametrize(
    "path", [*_sources("core"), *_sources("addon"), ROOT / "__init__.py"], ids=str
)
def test_extension_imports_own_packages_relatively(path):
    bad = [
        (line, name)
        for line, level, name in _imports(path)
        if level == 0 and name.split(".")[0] in OWN_PACKAGES
    ]
    assert not bad, f"{path.relative_to(ROOT)} imports the project absolutely: {bad}"


def test_purity_check_catches_a_blender_import(tmp_path):
    """The checker itself must be able to fail (a test that cannot fail is a defect)."""
    probe = tmp_path / "probe.py"
    probe.write_text("import numpy\nfrom mathutils import Vector\nimport bpy.types\n")
    found = [name for _, level, name in _imports(probe) if name.split(".")[0] in BLENDER_MODULES]
    assert found == ["mathutils", "bpy.types"]


def test_core_imports_in_a_fresh_interpreter_without_blender():
    import subprocess
    import sys

    code = (
        "import sys, capsule_collision.core; "
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in "
        f"{sorted(BLENDER_MODULES)!r}); "
        "print(bad); sys.exit(1 if bad else 0)"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


@pytest.mark.parametrize("module", ["capsule_collision.core.checks.audits",
                                    "capsule_collision.core",
                                    "bl_ext.user_default.capsule_collision.core.geometry.sweep"])
def test_warnings_raised_in_core_are_errors(module):
    """pyproject.toml's filterwarnings turns any warning from core (checkout or installed
    extension) into an error, so a NaN subtraction or a numpy deprecation fails the suite."""
    with pytest.raises(RuntimeWarning):
        warnings.warn_explicit("invalid value", RuntimeWarning, "x.py", 1, module=module)


@pytest.mark.parametrize("module", ["numpy.core.fromnumeric", "corelike", "tests.core", "core",
                                    "capsule_collision.addon"])
def test_warnings_elsewhere_stay_warnings(module):
    with pytest.warns(RuntimeWarning):
        warnings.warn_explicit("invalid value", RuntimeWarning, "x.py", 1, module=module)


@pytest.mark.parametrize("path", _sources("core"), ids=str)
def test_no_private_names_imported_from_other_modules(path):
    tree = ast.parse(path.read_text(encoding="utf-8"))
    private = [
        (node.lineno, node.module, alias.name)
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom)
        for alias in node.names
        if alias.name.startswith("_") and alias.name != "__future__"
    ]
    assert private == [], private


# core's folders from the bottom up: a module may import its own folder, a lower folder and the
# leaf core/constants.py, never a higher folder (ARCHITECTURE.md).
CORE_LAYERS = ("constants", "geometry", "mesh", "controller", "walk", "checks", "authoring")


def _core_layer(parts):
    return CORE_LAYERS.index(parts[0].removesuffix(".py")) if parts else len(CORE_LAYERS)


def _relative_target(path, level, module):
    """The core-relative parts a relative import of ``path`` names (``from ..mesh import x``)."""
    here = list(path.relative_to(ROOT / "core").parent.parts)
    base = here[: len(here) - (level - 1)]
    return base + (module.split(".") if module else [])


@pytest.mark.parametrize("path", [p for p in _sources("core") if p.parent != ROOT / "core"],
                         ids=str)
def test_core_folders_import_only_their_own_or_lower_folders(path):
    own = _core_layer(path.relative_to(ROOT / "core").parts)
    upward = [(line, "." * level + name) for line, level, name in _imports(path)
              if level and _core_layer(_relative_target(path, level, name)) > own]
    assert upward == [], f"{path.relative_to(ROOT)} imports a higher folder: {upward}"


def _nested_imports(path):
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return [(node.lineno, ast.unparse(node)) for fn in ast.walk(tree)
            if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef))
            for node in ast.walk(fn)
            if isinstance(node, ast.ImportFrom) and node.level > 0]


@pytest.mark.parametrize("path", [*_sources("core"), *_sources("addon")], ids=str)
def test_no_function_level_imports_of_our_own_modules(path):
    """A relative import inside a function hides a cycle (issue 17): imports sit at the top."""
    assert _nested_imports(path) == []


def test_layer_checks_can_fail(tmp_path):
    probe = tmp_path / "probe.py"
    probe.write_text("def f():\n    from . import rays\n")
    assert _relative_target(ROOT / "core" / "mesh" / "probe.py", 2, "walk") == ["walk"]
    assert _core_layer(["walk"]) > _core_layer(["mesh"])
    assert [text for _, text in _nested_imports(probe)] == ["from . import rays"]


def _named_epsilons(path):
    """Module-level names bound to an expression with a float literal in (0, 1e-3)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    out = []
    for node in tree.body:
        if isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
            tiny = [c.value for c in ast.walk(node.value) if isinstance(c, ast.Constant)
                    and isinstance(c.value, float) and 0.0 < abs(c.value) < 1e-3]
            if tiny:
                out.append((node.lineno, ast.unparse(node).split("=")[0].strip()))
    return out


@pytest.mark.parametrize("path", [p for p in _sources("core") if p.name != "constants.py"],
                         ids=str)
def test_every_epsilon_lives_in_constants(path):
    """core/constants.py says every epsilon comes from there (issue 17): make it true."""
    assert _named_epsilons(path) == []


def test_epsilon_check_can_fail(tmp_path):
    probe = tmp_path / "probe.py"
    probe.write_text("SLACK = 1e-9\nCOUNT = 8\nNEAR_ONE = 1.0 - 1e-6\n")
    assert [name for _, name in _named_epsilons(probe)] == ["SLACK", "NEAR_ONE"]
