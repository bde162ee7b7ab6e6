"""Reachability on the four shipped OpenArena maps (clip meshes, Quake's player, their own
spawns; tools/real_levels.py makes the maps on first use): every spawn is reachable
(issue 24: 12 of a real arena's spawns 0.61 m above the floor flooded nothing; the game drops
the player, and so does the flood), and most spawns placed above the floor fall only a little
to it."""

import numpy as np
import pytest
import real_levels
from capsule_collision.core import ControllerSettings, TriangleMesh, reachability
from capsule_collision.core.checks.reachability import TRAP

pytestmark = pytest.mark.slow


@pytest.mark.parametrize("name", real_levels.MAPS)
def test_every_spawn_of_a_real_map_is_reachable(name):
    level = real_levels.load(name, clip=True)
    s = ControllerSettings(**real_levels.QUAKE_PLAYER)
    res = reachability(TriangleMesh(level.vertices, level.triangles), level.spawn_feet, s)
    assert (res.spawn_cells >= 0).all()
    assert (res.cell_class[res.spawn_cells] <= TRAP).all()
    drop = res.spawn_drop
    assert np.isfinite(drop).all() and (drop >= 0.0).all()
    # most spawns stand or hover a little (0.61 m: the origin placed 24 units too high);
    # oa_bases7 has one placed 19.3 m up, which the game drops as far
    assert (drop < 2.5).mean() > 0.9
    assert res.reachable_area > 1000.0
