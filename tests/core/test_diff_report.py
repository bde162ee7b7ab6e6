"""Render against collision in the level report (core/checks/diff_report.py): each problem is
a finding of check ``collision_diff`` with its own severity, the report's ``collision_diff``
block lists them, and the document validates against schema/report.schema.json."""

import json
import pathlib
from types import SimpleNamespace

import diff_scenes as D
import numpy as np
import pytest
from capsule_collision.core import ControllerSettings, collision_diff
from capsule_collision.core.checks.diff_report import diff_identity
from capsule_collision.core.checks.report import (
    DEFAULT_CHECKS,
    combine_levels,
    level_report,
    mark_baseline,
    run_checks,
)

jsonschema = pytest.importorskip("jsonschema")  # pinned in requirements.txt

ROOT = pathlib.Path(__file__).resolve().parents[2]
SCHEMA = json.loads((ROOT / "schema" / "report.schema.json").read_text())
S = ControllerSettings()


def _geometry(mesh, name):
    n = mesh.n_triangles
    return SimpleNamespace(objects=(name,), tri_object=np.zeros(n, np.int32),
                           tri_orig_face=np.arange(n, dtype=np.int32))


def _report(pair, checks=("collision_diff",)):
    render, collision = getattr(D, pair)()
    res = run_checks(collision, S, spawns=D.SPAWN, render=render, checks=checks)
    res.render_geometry = _geometry(render, "Yard")
    res.render_source = "yard.obj"
    return level_report(res, level=pair, file=f"{pair}_clip.obj",
                        geometry=_geometry(collision, "Yard_clip"))


def test_collision_diff_is_a_default_check():
    assert "collision_diff" in DEFAULT_CHECKS


def test_a_hole_is_an_error_finding_and_in_the_block():
    rep = _report("gap_in_collision")
    document = combine_levels([rep])
    jsonschema.validate(json.loads(json.dumps(document)), SCHEMA)
    (f,) = [f for f in rep["findings"] if f["check"] == "collision_diff"]
    assert f["severity"] == "error" and f["got"] == "hole"
    # named by its place on the identity grid (a re-export keeps it), never by a face index
    assert f["name"].startswith("hole at (") and f["where"] is not None
    assert f["faces"] == []  # no collision floor there
    assert "[render: Yard faces" in f["message"]
    block = rep["collision_diff"]
    assert block["counts"]["hole"] == 1 and sum(block["counts"].values()) == 1
    assert block["render"] == "yard.obj" and block["render_triangles"] > 0
    assert rep["ok"] is False  # a hole fails the default gate (errors)


def test_an_invisible_wall_names_the_collision_faces():
    rep = _report("crate_in_collision")
    jsonschema.validate(json.loads(json.dumps(combine_levels([rep]))), SCHEMA)
    (f,) = [f for f in rep["findings"] if f["check"] == "collision_diff"]
    assert f["severity"] == "warning" and f["got"] == "invisible_wall"
    assert f["faces"] and all(x["object"] == "Yard_clip" for x in f["faces"])
    assert f["value"] > 0.05


def test_identical_levels_have_an_empty_block_and_no_finding():
    rep = _report("identical")
    assert rep["collision_diff"]["problems"] == []
    assert not [f for f in rep["findings"] if f["check"] == "collision_diff"]


def test_no_render_no_block():
    render, collision = D.identical()
    res = run_checks(collision, S, spawns=D.SPAWN, checks=("collision_diff",))
    assert level_report(res)["collision_diff"] is None
    res = run_checks(collision, S, render=render, checks=("collision_diff",))  # no spawns
    assert level_report(res)["collision_diff"] is None


def test_a_rerun_finds_the_same_findings_under_a_baseline():
    first = combine_levels([_report("crate_in_collision")])
    again = mark_baseline(combine_levels([_report("crate_in_collision")]), first)
    assert again["summary"]["new_findings"] == 0


def test_the_collision_is_flooded_once_when_reachability_ran():
    """With the reachability check the collision is flooded once: collision_diff reuses that
    flood (its result is the diff's collision side) and finds the same as on its own; under an
    engine model (another flood: its climb) it floods the collision itself."""
    render, collision = D.platform_pair()
    both = run_checks(collision, S, spawns=D.SPAWN, render=render,
                      checks=("reachability", "collision_diff"))
    alone = run_checks(collision, S, spawns=D.SPAWN, render=render, checks=("collision_diff",))
    assert both.diff.collision is both.reach.result
    assert [(p.kind, tuple(p.point)) for p in both.diff.problems] == \
        [(p.kind, tuple(p.point)) for p in alone.diff.problems] != []
    jolt = S.replace(model="jolt")
    own = run_checks(collision, jolt, spawns=D.SPAWN, render=render,
                     checks=("reachability", "collision_diff"))
    assert own.diff.collision is not own.reach.result
    assert own.diff.collision.settings == jolt.replace(model="exact")


@pytest.mark.parametrize("pair", ["gap_in_collision", "crate_in_collision", "crate_in_render",
                                  "raised_collision"])
def test_a_problems_identity_is_the_reports_name_got_where_and_size(pair):
    """``diff_identity`` is the one naming of a difference: the report's finding and the
    panel's rows (addon/operators_diff.diff_identity, which rebuilt it) take it, so a
    waiver written in the panel names the CLI's finding."""
    render, collision = getattr(D, pair)()
    problems = collision_diff(render, collision, D.SPAWN, S).problems
    assert problems
    rep = _report(pair)
    found = {f["name"]: f for f in rep["findings"] if f["check"] == "collision_diff"}
    for p in problems:
        ident = diff_identity(p)
        f = found[ident.name]
        assert (f["got"], tuple(f["where"]), f["size_unit"]) == (
            ident.got, tuple(ident.where), ident.size_unit)
        assert f["size"] == pytest.approx(ident.size, abs=1e-4)
        assert ident.name == f"{p.kind} at ({', '.join(f'{x:.2f}' for x in ident.where)})"
        assert ident.size_unit == ("m" if p.kind == "walk_through_wall" else "m2")
