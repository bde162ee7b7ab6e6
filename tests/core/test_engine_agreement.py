"""Our Rapier preset against real Rapier (issue 20), in CI with pip alone: PyPI ``rapier3d``
(requirements.txt and requirements-core.txt; numpy 1.26 and 2.4 alike) walks the same lanes
through ``tools/walk_rapier_py.py`` (the runner of ``../shared/peers/engines/walk_rapier.mjs``,
ported), and ``tools/bench_engines.py`` walks our model; the agreement targets of the issue
hold: verdicts equal on at least 95 % of the lanes, end positions within 0.1 m where the
verdicts agree.

The lanes are tools/engine_lanes.py's, either side of each limit as Rapier draws it with the
engines README's character (r 0.35, h 1.8, step 0.35, 45 deg, offset 0.02, 4 m/s, 60 Hz):
risers about its autostep's 0.4287 m, ramps about 45 deg, corridors about 0.74 m and
ceilings about 1.84 m (2 x (r + offset), h + 2 x offset), gaps about the 1.5 m it crosses at
walking speed. ``tools/bench_engines.py`` walks all 60 limit lanes (docs/benchmarks.md, "Engines"),
including the ceiling exactly 1.84 m high (a tie), under which Rapier stops 1.5 m further in
than the model (both blocked)."""

import numpy as np
import pytest
from bench_engines import (
    END_AGREE,
    engine_outcomes,
    lip_place,
    make_job,
    model_settings,
    our_outcomes,
    run_rapier_py,
    walk_ours,
)
from engine_lanes import ceiling, corridor, gap, lips, ramp, riser

pytestmark = pytest.mark.slow  # about 8 s of walks, 14 s on the busy 2-core machine

HZ = 60
LANES = {"riser": (riser, (0.33, 0.40, 0.42, 0.43, 0.45)),
         "ramp": (ramp, (44.5, 44.875, 45.125, 45.5)),
         "corridor": (corridor, (0.72, 0.73, 0.75, 0.76)),
         "ceiling": (ceiling, (1.82, 1.83, 1.85, 1.86)),
         "gap": (gap, (0.6, 1.0, 1.45, 1.5, 1.55, 1.6))}


def _walks():
    """{kind: (lane names, our outcomes, Rapier's outcomes)} at HZ."""
    settings = model_settings("rapier")
    out = {}
    for kind, (build, values) in LANES.items():
        job = make_job(kind, [build(v) for v in values])
        reps, _frames, _sec = walk_ours(job, settings, 1.0 / HZ, single=False)
        ours = our_outcomes(job, reps, settings.step_height)
        theirs = engine_outcomes(job, run_rapier_py(job, 1.0 / HZ))
        out[kind] = ([lane.name for lane in job.lanes], ours, theirs)
    return out


@pytest.fixture(scope="module")
def walks():
    return _walks()


def test_the_lanes_straddle_each_limit_in_rapier(walks):
    """The lanes show each limit: Rapier's own verdict changes once within each kind."""
    first = {"riser": "reached", "ramp": "reached", "corridor": "blocked",
             "ceiling": "blocked", "gap": "reached"}
    for kind, (names, _ours, theirs) in walks.items():
        v = [o.verdict for o in theirs]
        assert v[0] == first[kind] and sum(a != b for a, b in zip(v, v[1:])) == 1, (
            kind, list(zip(names, v)))


def test_rapier_preset_agrees_with_rapier_at_every_limit(walks):
    """Verdicts equal on >= 95 % of the lanes; where they agree, ends within 0.1 m."""
    same, far, total = 0, [], 0
    for _kind, (names, ours, theirs) in walks.items():
        for name, o, e in zip(names, ours, theirs):
            total += 1
            if o.verdict == e.verdict:
                same += 1
                d = float(np.linalg.norm(o.end - e.end))
                if d > END_AGREE:
                    far.append((name, round(d, 3)))
    table = {k: [(n, o.verdict, e.verdict) for n, o, e in zip(*w)] for k, w in walks.items()}
    assert same >= 0.95 * total, table
    assert not far, far


def test_rapier_preset_stays_on_steep_slopes_above_a_lip_as_rapier_does():
    """Issue 20's lips: on a 50-70 deg slope above a 20 m drop, walking up it, Rapier stays
    on the slope (grounded, it does not slide); so does the Rapier preset, within 0.5 m."""
    settings = model_settings("rapier")
    job = make_job("lips", [lips(50.0), lips(60.0, 0.0, 0.02), lips(70.0, 0.1, 0.05)])
    reps, _frames, _sec = walk_ours(job, settings, 1.0 / HZ, single=False)
    ours = our_outcomes(job, reps, settings.step_height)
    theirs = engine_outcomes(job, run_rapier_py(job, 1.0 / HZ))
    assert [lip_place(o) for o in theirs] == ["slope"] * 3
    assert [lip_place(o) for o in ours] == ["slope"] * 3
    assert max(float(np.linalg.norm(o.end - e.end)) for o, e in zip(ours, theirs)) < 0.5
