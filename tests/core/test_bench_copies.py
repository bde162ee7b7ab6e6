"""tools/bench_engines.py --copies (issue 26): the copies of a lane are laid and brought back
to the lane's own frame exactly, so the engines' own end spread it reports is the engine's,
not the bench's."""

import numpy as np
import pytest
from bench_engines import COPY_MARGIN, COPY_Y, SPEED, copies_job, make_job
from engine_lanes import riser

LANES = [riser(0.30), riser(0.40)]
N, DT = 4, 1.0 / 60.0


def test_lane_copies_move_the_whole_copy_by_a_fraction_of_a_stride():
    """Copy k of a lane is the lane, moved k / N of a frame's stride along x (and to its own
    column): its start and goal less the copy's offset are the lane's own, and each copy's
    offset along x steps by the column's pitch plus a quarter of a stride."""
    base = make_job("riser", LANES)
    c = copies_job("riser", LANES, N, DT, "lane")
    assert len(c.job.starts) == N * len(LANES)
    for k in range(N):
        rows = slice(k * len(LANES), (k + 1) * len(LANES))
        np.testing.assert_allclose(c.job.starts[rows] - c.offsets[k], base.starts, atol=1e-12)
        np.testing.assert_allclose(c.job.goals[rows] - c.offsets[k], base.goals, atol=1e-12)
    pitch = float(np.ptp(base.vertices[:, 0])) + COPY_MARGIN
    k = np.arange(N)
    np.testing.assert_allclose(
        c.offsets, np.column_stack([k * pitch + SPEED * DT * k / N, k * COPY_Y, 0.0 * k]),
        atol=1e-12)
    # the level holds every copy's triangles, copy k's vertices moved by its offset
    nv = base.vertices.shape[0]
    np.testing.assert_allclose(c.job.vertices[nv:2 * nv] - c.offsets[1], base.vertices,
                               atol=1e-12)


def test_start_copies_move_only_the_start_back_along_the_walk():
    """With ``shift="start"`` the geometry and the goal stay where the copy's column puts
    them and only the start moves k / N of a stride back along the walk, so each frame
    meets every edge at another phase."""
    base = make_job("riser", LANES)
    c = copies_job("riser", LANES, N, DT, "start")
    heading = (base.goals - base.starts) * [1.0, 1.0, 0.0]
    heading /= np.linalg.norm(heading, axis=1, keepdims=True)
    for k in range(N):
        rows = slice(k * len(LANES), (k + 1) * len(LANES))
        back = SPEED * DT * k / N
        np.testing.assert_allclose(c.job.starts[rows] - c.offsets[k],
                                   base.starts - back * heading, atol=1e-12)
        np.testing.assert_allclose(c.job.goals[rows] - c.offsets[k], base.goals, atol=1e-12)
    # no copy's geometry moves by a phase: the columns step by the pitch alone
    pitch = float(np.ptp(base.vertices[:, 0])) + COPY_MARGIN
    np.testing.assert_allclose(c.offsets[:, 0], np.arange(N) * pitch, atol=1e-12)


def test_an_unknown_copy_shift_is_a_value_error():
    with pytest.raises(ValueError, match="shift must be one of"):
        copies_job("riser", LANES, N, DT, "phase")


def test_a_second_run_keeping_into_a_folder_in_use_exits_2_and_writes_nothing(tmp_path):
    """Regression (two runs with one --keep folder raced on the lips job: each engine walked
    the other run's job): while one run holds the folder, a second exits 2 with one line at
    once and leaves the folder's files as they were; once the first is done it runs."""
    import bench_engines
    with bench_engines.keep_lock(str(tmp_path)) as held:
        assert held
        before = sorted(p.name for p in tmp_path.iterdir())
        code = bench_engines.main(["--keep", str(tmp_path), "--kinds", "riser", "--rates",
                                   "60", "--no-engines", "--no-timing", "--summary"])
        assert code == 2
        assert sorted(p.name for p in tmp_path.iterdir()) == before
    with bench_engines.keep_lock(str(tmp_path)) as held:
        assert held  # released
    with bench_engines.keep_lock(None) as held:
        assert held
