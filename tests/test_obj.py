"""OBJ reading/writing: exact round trip, polygons, relative indices, clear errors."""

import numpy as np
import pytest

from core.obj import read_obj, write_obj


def test_round_trip_is_bit_exact(tmp_path):
    rng = np.random.default_rng(7)
    vertices = rng.normal(size=(50, 3)) * 1e4
    triangles = rng.integers(0, 50, size=(80, 3))
    path = tmp_path / "m.obj"
    write_obj(path, vertices, triangles, header="test level\nsecond line")
    v, t = read_obj(path)
    assert np.array_equal(v, vertices)
    assert np.array_equal(t, triangles)


def test_quads_fan_triangulate_and_relative_indices_resolve(tmp_path):
    path = tmp_path / "quad.obj"
    path.write_text(
        "# quad\nv 0 0 0\nv 1 0 0\nv 1 1 0\nv 0 1 0\nf 1/1/1 2/2/2 3/3/3 4/4/4\nf -4 -3 -1\n"
    )
    v, t = read_obj(path)
    assert v.shape == (4, 3)
    assert t.tolist() == [[0, 1, 2], [0, 2, 3], [0, 1, 3]]


@pytest.mark.parametrize(
    "text, message",
    [
        ("v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 4\n", "refers to no vertex"),
        ("v 0 0 0\nv 1 0 0\nv 0 1 0\nf 0 1 2\n", "start at 1"),
        ("v 0 0 x\n", "bad vertex"),
        ("v 0 0 0\nv 1 0 0\nf 1 2\n", "3 or more"),
        ("v 0 0 0\n", "no faces"),
    ],
)
def test_malformed_files_raise_value_error_with_line(tmp_path, text, message):
    path = tmp_path / "bad.obj"
    path.write_text(text)
    with pytest.raises(ValueError, match=message):
        read_obj(path)
