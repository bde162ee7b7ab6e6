"""The stair and ledge audits do not follow the order of the faces or vertices (issue 27: a
level re-exported with its faces reversed found other risers and ledge runs).

Quake levels are built of brushes, each a closed box with its own vertices, so faces of
neighbouring brushes coincide (a step's side against the next step's, a wall's bottom on a
floor's top) and probe rays meet two faces at one distance. Which of the two a ray query
names followed the face index: oa_bases7 re-exported with its faces reversed had 14 more
riser rows (a too-high flight found in that order only) and oa_koth1's ledge audit found 315
runs instead of 321. Both audits now run on the level in an order fixed by geometry
(``audits.common.canonical_mesh``): every row, flight and run comes out the same, and the
faces they name are the same triangles (another index).

Scenes (metres, Z up): ``tools/scenes.brush_map`` (a Quake-style brush map: rooms of 16-unit
brushes, a staircase of 8 steps of 16 units, pillars, a ramp) scaled to metres, with Quake's
player; and oa_koth1 (skipped without the shipped maps)."""

import numpy as np
import pytest
import real_levels
import scenes
from audit_scenes import box
from capsule_collision.core import ControllerSettings, TriangleMesh, ledge_audit, stair_audit
from capsule_collision.core.checks.audits import common
from capsule_collision.core.mesh.patched import replace_triangles
from controller_scenes import merge

QUAKE = ControllerSettings(**real_levels.QUAKE_PLAYER)
SEEDS = (1, 2, 3)


def _brush_level():
    v, t = scenes.brush_map(rooms=2)
    return v * real_levels.UNIT, t


def _stacked_stairs():
    """A floor and, side by side along y, flights of three Quake-style steps along +x (each
    step a closed box from the floor to its tread, 0.2 m risers, 0.3 m treads, 1 m wide) with
    a 2.4 m box standing on the top step: its bottom and the top step's top are one
    rectangle facing both ways, so the step probe's ray down onto the top tread meets two
    faces at one distance."""
    parts = [box((-2.0, -1.0, -0.2), (6.0, 8.0, 0.0))]
    for k in range(4):
        y0 = 2.0 * k
        parts += [box((1.0 + 0.3 * i, y0, 0.0), (1.3 + 0.3 * i, y0 + 1.0, 0.2 * (i + 1)))
                  for i in range(3)]
        parts.append(box((1.6, y0, 0.6), (1.9 + 0.2 * k, y0 + 1.0, 3.0)))
    return merge(parts)


def _reordered(vertices, triangles, seed):
    """The same level with its faces and vertices in another order (``seed`` 0: faces
    reversed, as tests/blender/test_levelcheck_reexport.py writes them; else a random
    permutation of both); every face keeps its corners in order (its winding)."""
    v, t = np.asarray(vertices), np.asarray(triangles)
    rng = np.random.default_rng(seed)
    perm = rng.permutation(len(v))
    inverse = np.empty_like(perm)
    inverse[perm] = np.arange(perm.size)
    t = inverse[t]
    return v[perm], (t[::-1] if seed == 0 else t[rng.permutation(len(t))])


def _corners(mesh, faces):
    """(K, 9) each face's corner positions, sorted (the same triangle whatever its index)."""
    c = mesh.vertices[mesh.triangles[np.asarray(faces, np.int64)]]
    return np.sort(c, axis=1).reshape(-1, 9)


def _stair_rows(mesh, r):
    """The rows of a StairResult as a sorted list, each with its flight's risers (the
    partition), faces as positions: comparable across face orders."""
    corners = [tuple(c) for c in _corners(mesh, r.riser)]
    flights = {f: frozenset(c for c, g in zip(corners, r.flight) if g == f) for f in r.flight}
    return sorted((c, float(r.rise[i]), float(r.tread_depth[i]), bool(r.too_high[i]),
                   bool(r.too_shallow[i]), tuple(r.position[i]), sorted(flights[r.flight[i]]))
                  for i, c in enumerate(corners))


def _ledge_runs(mesh, r):
    """The runs of a LedgeResult as a sorted list, each with the faces of its edges."""
    edges = [tuple(c) for c in _corners(mesh, r.edge_faces)]
    return sorted((tuple(c), float(r.drop[i]), tuple(r.position[i]), tuple(r.direction[i]),
                   tuple(r.start[i]), tuple(r.end[i]), float(r.length[i]),
                   sorted(e for e, k in zip(edges, r.edge_run) if k == i))
                  for i, c in enumerate(_corners(mesh, r.faces)))


def test_the_brush_map_has_coincident_faces_and_problems_to_find():
    """The scene is what the other tests need: faces of different brushes at one place, and
    stair risers and ledge runs found."""
    v, t = _brush_level()
    corners = np.sort(v[t].round(9), axis=1).reshape(-1, 9)
    assert len(np.unique(corners, axis=0)) < len(t)  # coincident faces
    mesh = TriangleMesh(v, t)
    assert len(stair_audit(mesh, QUAKE).riser) > 0 and len(ledge_audit(mesh, QUAKE).faces) > 0


@pytest.mark.parametrize("seed", (0, *SEEDS))
@pytest.mark.parametrize("level", [_brush_level, _stacked_stairs])
def test_stair_rows_do_not_follow_the_face_order(level, seed):
    v, t = level()
    m0, m1 = TriangleMesh(v, t), TriangleMesh(*_reordered(v, t, seed))
    assert _stair_rows(m1, stair_audit(m1, QUAKE)) == _stair_rows(m0, stair_audit(m0, QUAKE))


@pytest.mark.parametrize("seed", (0, *SEEDS))
def test_ledge_runs_do_not_follow_the_face_order(seed):
    v, t = _brush_level()
    m0, m1 = TriangleMesh(v, t), TriangleMesh(*_reordered(v, t, seed))
    assert _ledge_runs(m1, ledge_audit(m1, QUAKE)) == _ledge_runs(m0, ledge_audit(m0, QUAKE))


@pytest.mark.slow
@pytest.mark.skipif(not real_levels.available(), reason="the shipped maps are not made "
                    "(tools/real_levels.py; set CC_REAL_LEVELS or run sh "
                    "../shared/real_levels/make_levels.sh)")
def test_oa_koth1_has_the_same_stair_rows_and_ledge_runs_with_its_faces_reversed():
    """oa_koth1's clip mesh as Blender holds it (of faces with the same three vertices only
    the first) and the same re-exported, its faces reversed and its vertices permuted (as
    tests/blender/test_levelcheck_reexport.py writes it): the same 206 riser rows and the same
    ledge runs (under load: 321 against 315 before, ``canonical_mesh``)."""
    level = real_levels.load("oa_koth1", clip=True)
    t = np.asarray(level.triangles, np.int64)
    _, first = np.unique(np.sort(t, axis=1), axis=0, return_index=True)
    v, t = level.vertices, t[np.sort(first)]
    m0, m1 = TriangleMesh(v, t), TriangleMesh(*_reordered(v, t, 0))
    rows = _stair_rows(m0, stair_audit(m0, QUAKE))
    assert len(rows) > 100 and rows == _stair_rows(m1, stair_audit(m1, QUAKE))
    runs = _ledge_runs(m0, ledge_audit(m0, QUAKE))
    assert len(runs) > 100 and runs == _ledge_runs(m1, ledge_audit(m1, QUAKE))


def test_the_stair_and_ledge_audits_of_a_level_share_one_canonical_mesh():
    """The canonical mesh (and so its BVH) is built once per level and kept with it while
    the level lives; a patched level (a new mesh object) gets its own."""
    mesh = TriangleMesh(*merge([box((0, 0, 0), (4, 4, 1)), box((0, 4, 0), (4, 8, 2))]))
    first = common.canonical_mesh(mesh)
    assert common.canonical_mesh(mesh) is first
    patched = replace_triangles(mesh, 0, 2, np.zeros((0, 3)), np.zeros((0, 3), int))
    other = common.canonical_mesh(patched)
    assert other is not first and other.mesh.n_triangles == mesh.n_triangles - 2
