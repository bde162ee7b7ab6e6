"""Level warnings on real data (issue 24, section 5), through the CLI and the panel: a
shipped Z-up OpenArena map read with the OBJ importer's default up (Y) lies on its side (walls
read as floors) and says which ``--up`` to pass; the same map in a centimetre scene is 100
times too small for the character and says to scale it up. Right way up: no level warning.
Skipped where the maps cannot be made (tools/real_levels.py)."""

import json
import subprocess
import sys
from pathlib import Path

import blender_helpers as bh

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tools"))
import real_levels  # noqa: E402

# The shipped maps are made on first use (tools/real_levels.py): never a silent skip.
CLI = [sys.executable, "-m", "capsule_collision.levelcheck"]
QUAKE = [f"--set={k}={v}" for k, v in real_levels.QUAKE_PLAYER.items()
         if k in ("radius", "height", "step_height", "max_slope_deg")]


def _level_warnings(out, *args):
    proc = subprocess.run([*CLI, *map(str, args), "--checks", "walkability", "--no-png",
                           "--quiet", "--out", str(out), *QUAKE],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    (level,) = json.loads((out / "report.json").read_text())["levels"]
    return level["warnings"], proc.stdout


def test_cli_a_z_up_map_read_y_up_says_it_lies_on_its_side_and_what_to_pass(tmp_path):
    clip = real_levels.levels_dir() / "oa_bases7_clip.obj"
    warnings, _ = _level_warnings(tmp_path / "y", clip)
    (w,) = warnings
    assert w["code"] == "up_axis" and "walls read as floors" in w["message"], w
    assert "pass --up Z" in w["message"], w
    right, _ = _level_warnings(tmp_path / "z", clip, "--up", "Z")
    assert right == []


def _sanity_in_panel(bpy, panels):
    assert bpy.ops.capsule_collision.classify_walkability() == {"FINISHED"}
    return panels.sanity_warnings(bpy.context.scene)


def test_panel_a_map_lying_on_its_side_and_a_metre_map_in_a_centimetre_scene(scene,
                                                                           bpy_module, addon):
    bpy = bpy_module
    panels = bh.addon_module(addon, "addon.panels")
    props = scene.capsule_collision
    for k in ("radius", "height", "step_height", "max_slope_deg"):
        setattr(props, k, real_levels.QUAKE_PLAYER[k])
    clip = str(real_levels.levels_dir() / "oa_bases7_clip.obj")
    bpy.ops.wm.obj_import(filepath=clip)  # the importer's default: up Y
    bpy.context.view_layer.update()
    (text,) = _sanity_in_panel(bpy, panels)
    assert "rotated" in text and "walls read as floors" in text and "Rotate it" in text
    ob = bpy.context.selected_objects[0]
    ob.rotation_euler = (0.0, 0.0, 0.0)  # as a Z-up file: the right way up
    bpy.context.view_layer.update()
    assert _sanity_in_panel(bpy, panels) == []
    scene.unit_settings.scale_length = 0.01  # a metre level in a centimetre scene
    for k in ("radius", "height", "step_height"):  # the character in scene units (cm)
        setattr(props, k, real_levels.QUAKE_PLAYER[k] * 100)
    bpy.context.view_layer.update()
    (text,) = _sanity_in_panel(bpy, panels)
    assert "100 times too small" in text and "x 100" in text, text
