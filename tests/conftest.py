"""pytest set-up shared by both lanes.

Two lanes, by folder: ``tests/core/`` needs only numpy (CI runs it on numpy 1.26 and 2.x,
without bpy) and ``tests/blender/`` needs the real ``bpy`` (every test there is marked
``blender``). A core test that asks for a Blender fixture is an error, never a silent skip.
Blender tests use the ``addon`` / ``scene`` fixtures,
which load the checkout through Blender's real extension loader (the checkout is symlinked
as ``<user resources>/extensions/user_default/capsule_collision``; the code is
``capsule_collision.levelcheck.session``, shared with the CLI and the benchmarks). ``bpy``
is imported lazily, once per process, after ``BLENDER_USER_RESOURCES`` and ``XDG_CACHE_HOME``
point to a temporary folder, so nothing is written into the home folder.

No ``tests/__init__.py`` and no root ``conftest.py``: either would make pytest import the
checkout as a package (running ``import bpy`` too early). See reference/blender_headless.md 7.2.
"""

import pathlib
import sys

import pytest
from capsule_collision.levelcheck import session

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))
import real_levels  # noqa: E402  (tools/: the shipped maps the tests make on first use)

MODULE = session.EXTENSION_MODULE

session.isolate_user_folders()  # before anything imports bpy


@pytest.fixture(scope="session")
def bpy_module():
    import bpy  # noqa: PLC0415  (once per process, after the environment is set)

    return bpy


@pytest.fixture(scope="session")
def addon(bpy_module):
    mod = session.enable_extension(ROOT)
    yield mod
    session.disable_extension()


@pytest.fixture
def scene(addon, bpy_module):
    bpy_module.ops.wm.read_homefile(use_empty=True)  # fresh empty scene, add-on stays enabled
    return bpy_module.context.scene


@pytest.fixture(autouse=True)
def _live_checks_are_never_timed(request, monkeypatch):
    """A Blender test decides by what a check finds, never by how long it took: the live
    check's switch to "check on release" (its median time over one frame at 60 Hz) would flip
    on a busy machine, carried from one test to the next in the live state of the scene
    "Scene". A test of that switch sets LIVE_BUDGET_S itself."""
    if "addon" not in request.fixturenames:
        return
    import importlib

    addon = request.getfixturevalue("addon")
    monkeypatch.setattr(importlib.import_module(addon.__name__ + ".addon.live"),
                        "LIVE_BUDGET_S", 1e9)


BLENDER_FIXTURES = {"bpy_module", "addon", "scene"}
BLENDER_LANE = ROOT / "tests" / "blender"


def _blender_fixtures_of(item) -> set:
    """The Blender fixtures ``item`` really uses: a parameter that happens to be called
    ``scene`` (``@pytest.mark.parametrize("scene", ...)``) is not the fixture."""
    params = set(getattr(getattr(item, "callspec", None), "params", {}))
    return (BLENDER_FIXTURES & set(getattr(item, "fixturenames", ()))) - params


def pytest_collection_modifyitems(config, items):
    """The folder decides the lane: tests under tests/blender/ get the ``blender`` marker (and
    are skipped with a reason where bpy is missing); a test elsewhere that uses a Blender
    fixture fails at collection, so the numpy-2 lane never loses a core test to a guess."""
    import importlib.util

    have_bpy = importlib.util.find_spec("bpy") is not None
    skip = pytest.mark.skip(reason="needs bpy (Blender as a Python module)")
    for item in items:
        in_blender_lane = BLENDER_LANE in pathlib.Path(str(item.fspath)).parents
        if in_blender_lane:
            item.add_marker(pytest.mark.blender)
            if not have_bpy:
                item.add_marker(skip)
        elif _blender_fixtures_of(item):
            raise pytest.UsageError(f"{item.nodeid} uses a Blender fixture outside tests/blender/")



@pytest.hookimpl(wrapper=True)
def pytest_runtest_setup(item):
    """A test whose fixture loads a shipped map skips where the maps cannot be made."""
    try:
        return (yield)
    except real_levels.MapsUnavailable as exc:
        pytest.skip(str(exc))


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item):
    """A test that loads a shipped map skips where the maps cannot be made (a clone without
    ../shared): a skip with the reason, never a failure nor a silent pass."""
    try:
        return (yield)
    except real_levels.MapsUnavailable as exc:
        pytest.skip(str(exc))
