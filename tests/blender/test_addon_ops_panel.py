"""The sidebar panel: everything it draws exists (properties, operators, icons), every
controller setting is on it, and results, walkability and staleness show up as text.

Panels never draw in background Blender, so ``draw`` runs on a recording layout
(reference/blender_headless.md section 2)."""

import importlib
import types
from unittest import mock

import ops_scenes as S


def record(panel_cls, context):
    layout = mock.MagicMock()
    panel = types.SimpleNamespace(layout=layout)
    if hasattr(panel_cls, "draw_header"):
        panel_cls.draw_header(panel, context)
    panel_cls.draw(panel, context)
    return layout.mock_calls


def drawn(calls, method):
    return [c for c in calls if c[0].split(".")[-1] == method]


def panels(addon):
    mod = importlib.import_module(addon.__name__ + ".addon.panels")
    return mod, [c for c in mod.classes if issubclass(c, mod.bpy.types.Panel)]


def all_calls(addon, context):
    mod, classes = panels(addon)
    calls = []
    for cls in classes:
        if hasattr(cls, "poll") and not cls.poll(context):
            continue
        calls += record(cls, context)
    return calls


def test_panel_draws_only_things_that_exist(scene, bpy_module, addon):
    bpy = bpy_module
    S.floor_and_wall(bpy)
    cap = S.capsule(bpy, "C", (1.8, 0.0, 0.0))
    bpy.ops.capsule_collision.check_penetration()
    bpy.ops.capsule_collision.classify_walkability()
    ctx = types.SimpleNamespace(scene=scene, active_object=cap)
    calls = all_calls(addon, ctx)
    icons = set(bpy.types.UILayout.bl_rna.functions["label"].parameters["icon"]
                .enum_items.keys())
    for c in drawn(calls, "prop"):
        data, name = c.args[:2]
        assert name in data.bl_rna.properties, name
    ops = [c.args[0] for c in drawn(calls, "operator")]
    assert "capsule_collision.check_penetration" in ops
    for idname in ops:
        cat, op = idname.split(".")
        getattr(getattr(bpy.ops, cat), op).get_rna_type()  # KeyError if it is not registered
    for c in drawn(calls, "label") + drawn(calls, "operator") + drawn(calls, "prop"):
        icon = c.kwargs.get("icon")
        assert icon is None or icon in icons, icon
    props = {c.args[1] for c in drawn(calls, "prop")}
    mod = importlib.import_module(addon.__name__ + ".addon.properties")
    missing = set(mod.SETTINGS_UNITS) - props
    assert not missing, f"settings not on the panel: {missing}"
    for name in ("preset", "collision_source", "live_check", "show_overlay", "show_capsules",
                 "show_penetration", "show_walkability", "show_traces", "show_events",
                 "expect", "radius", "height", "role"):
        assert name in props, name
    texts = " | ".join(str(c.kwargs.get("text", "")) for c in drawn(calls, "label"))
    assert "Walkable" in texts and "101 faces" in texts  # counts per class
    assert "m²" in texts
    lists = drawn(calls, "template_list")
    assert lists and lists[0].args[0] == "CAPSULE_COLLISION_UL_results"


def test_panel_says_results_are_stale_after_the_level_changes(scene, bpy_module, addon):
    bpy = bpy_module
    scene.capsule_collision.live_check = False  # on, it would refresh the row at once
    floor, wall = S.floor_and_wall(bpy)
    S.capsule(bpy, "C", (1.8, 0.0, 0.0))
    bpy.ops.capsule_collision.check_penetration()
    ctx = types.SimpleNamespace(scene=scene, active_object=None)
    texts = lambda: " | ".join(str(c.kwargs.get("text", ""))  # noqa: E731
                               for c in drawn(all_calls(addon, ctx), "label"))
    assert "stale" not in texts()
    wall.location.x += 1.0
    bpy.context.view_layer.update()  # the depsgraph handler marks the cached level suspect
    cache = importlib.import_module(addon.__name__ + ".addon.cache")
    dg = bpy.context.evaluated_depsgraph_get()
    cache.cached_level(dg, scene)  # what the live check or the next operator does
    assert "results are stale" in texts()


def test_active_object_panel_sets_roles_and_shows_path_expectations(scene, bpy_module,
                                                                   addon):
    bpy = bpy_module
    path = S.polyline(bpy, "P", [(0, 0, 0), (1, 0, 0)])
    mod, _ = panels(addon)
    calls = record(mod.CAPSULE_COLLISION_PT_capsule,
                   types.SimpleNamespace(scene=scene, active_object=path))
    assert [c.args[1] for c in drawn(calls, "prop")] == ["role", "expect_walk"]
    path.capsule_collision.role = "NONE"
    calls = record(mod.CAPSULE_COLLISION_PT_capsule,
                   types.SimpleNamespace(scene=scene, active_object=path))
    assert [c.args[1] for c in drawn(calls, "prop")] == ["role"]


def test_result_list_rows_offer_selection_of_their_faces(scene, bpy_module, addon):
    bpy = bpy_module
    S.floor_and_wall(bpy)
    S.capsule(bpy, "C", (1.8, 0.0, 0.0))
    S.capsule(bpy, "Free", (-3.0, 0.0, 0.5))
    bpy.ops.capsule_collision.check_penetration()
    mod = importlib.import_module(addon.__name__ + ".addon.panels")
    rows = scene.capsule_collision.results
    for index, row in enumerate(rows):
        layout = mock.MagicMock()
        mod.CAPSULE_COLLISION_UL_results.draw_item(None, None, layout, None, row, 0, None,
                                                   "", index)
        ops = drawn(layout.mock_calls, "operator")
        # faces to select, or the capsule of a clear row
        assert bool(ops) == bool(row.object or row.capsule), row.label
