"""Incremental level rebuild (addon/level_parts.py, hooked into addon/cache.py): editing one
object of a level re-reads that object only and splices it into the built mesh; the result
is the level a full read gives (triangle order, maps, stamp) and answers as it does."""

import blender_helpers as bh
import numpy as np
import pytest


@pytest.fixture
def mods(addon):
    M = bh.addon_modules(
        addon, sd="addon.scene_data", cache="addon.cache", lp="addon.level_parts", core="core")

    M.cache.clear()
    yield M
    M.cache.clear()


@pytest.fixture
def level(scene, bpy_module, mods):
    """A bumpy 40 x 40 grid (3,200 triangles), three boxes, one mirrored, a capsule."""
    scene.capsule_collision.live_check = False
    bh.grid("Terrain", 40, size=20.0)
    bh.box("Crate", lo=(0, 0, 0), hi=(1, 1, 1), location=(2, 2, 0))
    bh.box("Pillar", lo=(0, 0, 0), hi=(0.5, 0.5, 3), location=(-3, 1, 0))
    bh.box("Mirrored", lo=(0, 0, 0), hi=(1, 2, 1), location=(4, -3, 0), scale=(-1, 1, 1))
    bpy_module.context.view_layer.update()
    return scene


def _level(mods, scene):
    return mods.cache.cached_level(bh.depsgraph(), scene)


def _same_as_a_full_read(mods, scene, level):
    fresh = mods.sd.read_level(bh.depsgraph(), scene)
    assert level.stamp == fresh.stamp
    assert level.objects == fresh.objects
    for name in ("tri_object", "tri_face", "tri_orig_face"):
        np.testing.assert_array_equal(getattr(level, name), getattr(fresh, name))
    m, f = level.mesh, fresh.mesh
    np.testing.assert_array_equal(m.vertices[m.triangles], f.vertices[f.triangles])
    rng = np.random.default_rng(1)
    for foot in rng.uniform((-6, -6, -0.5), (6, 6, 0.2), (40, 3)):
        cap = mods.core.Capsule.upright(foot, 1.8, 0.6)
        assert [c.triangle for c in m.capsule_contacts(cap)] == \
            [c.triangle for c in f.capsule_contacts(cap)]
    return fresh


def _edit_and_check(mods, scene, bpy_module, edit):
    first = _level(mods, scene)
    builds, patches = mods.cache.stats["builds"], mods.lp.stats["patches"]
    reads = mods.lp.stats["parts_read"]
    edit()
    bpy_module.context.view_layer.update()
    level = _level(mods, scene)
    assert level is not first
    assert mods.cache.stats["builds"] == builds, "the edit rebuilt the whole level"
    assert mods.lp.stats["patches"] == patches + 1
    assert isinstance(level.mesh, mods.core.PatchedMesh)
    assert level.mesh.base is first.mesh or level.mesh.base is first.mesh.base
    _same_as_a_full_read(mods, scene, level)
    return level, mods.lp.stats["parts_read"] - reads


def test_moving_a_box_reads_and_rebuilds_only_that_box(mods, level, bpy_module):
    crate = bpy_module.data.objects["Crate"]

    def move():
        crate.location = (2.6, 1.4, 0.2)
        crate.rotation_euler.z = 0.3

    moved, read = _edit_and_check(mods, level, bpy_module, move)
    assert read == 1
    assert moved.mesh.n_added == 12  # the crate's triangles; the terrain's were kept


def test_editing_a_mirrored_box_mesh_changes_its_triangle_count(mods, level, bpy_module):
    me = bpy_module.data.objects["Mirrored"].data

    def edit():  # a pyramid on top instead of the top quad: 5 faces more, as Edit Mode would
        verts = bh.box_vertices((0, 0, 0), (1, 2, 1)) + [(0.5, 1.0, 2.0)]
        faces = [f for f in bh.BOX_FACES if f != (4, 5, 6, 7)]
        faces += [(4, 5, 8), (5, 6, 8), (6, 7, 8), (7, 4, 8)]
        me.clear_geometry()
        me.from_pydata(verts, [], faces)
        me.update()

    level, _ = _edit_and_check(mods, level, bpy_module, edit)
    assert level.objects.index("Mirrored") >= 0


def test_adding_and_deleting_objects_splice_parts(mods, level, bpy_module):
    _edit_and_check(mods, level, bpy_module,
                    lambda: bh.box("New Crate", lo=(0, 0, 0), hi=(1, 1, 2), location=(-4, -4, 0)))
    _edit_and_check(mods, level, bpy_module, lambda: bpy_module.data.objects.remove(
        bpy_module.data.objects["Pillar"], do_unlink=True))


def test_moving_a_collection_instancer_patches_its_instances(mods, level, bpy_module):
    coll = bpy_module.data.collections.new("Props")
    bh.box("Prop", lo=(0, 0, 0), hi=(0.5, 0.5, 0.5), collection=coll)
    inst = bh.collection_instance("Props Here", coll, location=(0, -4, 0))
    bpy_module.context.view_layer.update()
    assert "Props Here/Prop" in _level(mods, level).objects
    _edit_and_check(mods, level, bpy_module, lambda: setattr(inst, "location", (1, -5, 0.3)))


def test_nothing_changed_keeps_the_level_and_a_big_edit_rebuilds(mods, level, bpy_module):
    first = _level(mods, level)
    terrain = bpy_module.data.objects["Terrain"]
    terrain.location.z = 0.0  # an update that changes nothing
    bpy_module.context.view_layer.update()
    assert _level(mods, level) is first
    builds = mods.cache.stats["builds"]
    terrain.location.z = 0.5  # most of the level: a full rebuild is the faster way
    bpy_module.context.view_layer.update()
    rebuilt = _level(mods, level)
    assert mods.cache.stats["builds"] == builds + 1
    assert isinstance(rebuilt.mesh, mods.core.TriangleMesh)
    _same_as_a_full_read(mods, level, rebuilt)


def test_compaction_swaps_in_an_equal_fresh_build(mods, level, bpy_module):
    crate = bpy_module.data.objects["Crate"]
    _edit_and_check(mods, level, bpy_module, lambda: setattr(crate, "location", (1, 3, 0)))
    patched = _level(mods, level)
    assert mods.lp.compact_now(level.name)
    assert _level(mods, level) is patched  # the same level, with a fresh mesh inside
    assert isinstance(patched.mesh, mods.core.TriangleMesh)
    _same_as_a_full_read(mods, level, patched)
