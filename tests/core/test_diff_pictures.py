"""The pictures of render against collision (tools/diff_pictures.py) without Blender: the PNG
it writes decodes to the quantised picture, a problem's cells become squares on the floor, and
only walls between the camera and the problem are left out."""

import struct
import zlib
from types import SimpleNamespace

import diff_pictures as P
import numpy as np
from capsule_collision.core import ControllerSettings, TriangleMesh
from capsule_collision.levelcheck import render as inset
from scenes import box, merge

S = ControllerSettings()


def _decode(data: bytes) -> np.ndarray:
    """(H, W, 3) uint8 of an 8-bit RGB PNG whose rows are all filtered by "up"."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    chunks, i = {}, 8
    while i < len(data):
        (n,) = struct.unpack(">I", data[i:i + 4])
        kind, body = data[i + 4:i + 8], data[i + 8:i + 8 + n]
        (crc,) = struct.unpack(">I", data[i + 8 + n:i + 12 + n])
        assert crc == zlib.crc32(kind + body) & 0xFFFFFFFF
        chunks[kind] = body
        i += 12 + n
    w, h, depth, colour = struct.unpack(">IIBB", chunks[b"IHDR"][:10])
    assert (depth, colour) == (8, 2) and b"IEND" in chunks
    raw = np.frombuffer(zlib.decompress(chunks[b"IDAT"]), np.uint8).reshape(h, 1 + 3 * w)
    assert np.all(raw[:, 0] == 2)
    return (np.cumsum(raw[:, 1:].astype(np.int64), axis=0) % 256).astype(np.uint8).reshape(
        h, w, 3)


def test_png_decodes_to_the_quantised_picture():
    rng = np.random.default_rng(3)
    rgb = rng.integers(0, 256, (7, 5, 3), dtype=np.uint8)
    got = _decode(P.png_bytes(rgb))
    q = P.QUANTUM
    assert np.array_equal(got, (rgb // q) * q + q // 2)
    assert np.abs(got.astype(int) - rgb).max() <= q // 2


def test_cells_become_squares_lifted_above_their_floor():
    cells = np.array([[0.0, 0.0, 1.0], [2.0, 3.0, -0.5]])
    v, f = P.squares(cells, 0.2, 0.04)
    assert v.shape == (8, 3) and f.shape == (4, 3)
    for k, c in enumerate(cells):
        corners = v[4 * k:4 * k + 4]
        assert np.allclose(corners[:, 2], c[2] + 0.04)
        assert np.allclose(corners[:, :2].min(0), c[:2] - 0.1)
        assert np.allclose(corners[:, :2].max(0), c[:2] + 0.1)
    # each square's two triangles use only its own corners
    assert set(f[[0, 2]].ravel()) == {0, 1, 2, 3} and set(f[[1, 3]].ravel()) == {4, 5, 6, 7}


def test_only_walls_between_the_camera_and_the_problem_are_left_out():
    """The camera looks along +x (and a little +y), down: a tall block 2 m on the camera's
    side hides the point: its faces rising above half the character go (its bottom stays);
    the same block behind the point, a low kerb on the camera's side and the floor under the
    point stay."""
    h = np.asarray(P.VIEW_DIRECTION[:2], float)
    h /= np.linalg.norm(h)
    point = np.zeros(3)
    parts = {"floor": box((-6, -6, -0.2), (6, 6, 0.0)),
             "front": box(tuple(-2.5 * h - 0.2) + (0.0,), tuple(-2.0 * h + 0.2) + (3.0,)),
             "behind": box(tuple(2.0 * h - 0.2) + (0.0,), tuple(2.5 * h + 0.2) + (3.0,)),
             "kerb": box(tuple(-2.5 * h - 0.2) + (0.0,), tuple(-2.0 * h + 0.2) + (0.3,))}
    sizes = [len(t) for _v, t in parts.values()]
    mesh = TriangleMesh(*merge(list(parts.values())))
    gone = P.in_front(mesh, point, S)
    spans = np.split(gone, np.cumsum(sizes)[:-1])
    by_name = dict(zip(parts, spans))
    tops = np.split(mesh.vertices[mesh.triangles][..., 2].max(1), np.cumsum(sizes)[:-1])[1]
    assert np.array_equal(by_name["front"], tops > 0.5 * S.height)
    assert by_name["front"].sum() == 10  # the four sides and the top
    assert not by_name["behind"].any() and not by_name["kerb"].any()
    assert not by_name["floor"].any()  # its far corners are beyond the point


def test_a_picture_is_levelchecks_inset_view_along_its_own_direction(monkeypatch):
    """draw_side frames the problem with levelcheck's one inset view (render.inset_view, no
    copy of it): centred on the problem, looking along this tool's steeper VIEW_DIRECTION,
    WIDTH x HEIGHT pixels, span_of metres across; levelcheck's own insets keep theirs."""
    seen = []
    monkeypatch.setattr(P, "side_drawing", lambda pick, side: None)
    monkeypatch.setattr(inset, "build_view", lambda *a, view, cut, box: seen.append(view))
    monkeypatch.setattr(inset, "render", lambda *a: None)
    problem = SimpleNamespace(point=(3.0, -2.0, 1.5), cells=np.array([[0, 0, 0], [5, 1, 0.0]]))
    P.draw_side(None, None, SimpleNamespace(problem=problem, settings=S), "render", "x.png")
    (view,) = seen
    f = np.asarray(P.VIEW_DIRECTION) / np.linalg.norm(P.VIEW_DIRECTION)
    assert np.allclose(view.forward, f) and abs(view.right[2]) < 1e-12
    assert (view.width_px, view.height_px) == (P.WIDTH, P.HEIGHT)
    assert view.width_m == P.span_of(problem) == 14.0  # 2 x 5 m + 4 m of air
    assert np.allclose(view.pixels([problem.point]), [[P.WIDTH / 2, P.HEIGHT / 2]])
    own = inset.inset_view(problem.point)
    assert np.allclose(own.forward, np.asarray(inset.VIEW_DIRECTION) / np.linalg.norm(
        inset.VIEW_DIRECTION))
    assert (own.width_m, own.width_px, own.height_px) == (
        inset.INSET_SPAN, inset.INSET_WIDTH, inset.INSET_HEIGHT)
