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


def _quake_panel(scene, addon):
    """(the add-on's panels module, the scene's settings) with Quake's player typed in."""
    props = scene.capsule_collision
    for k in ("radius", "height", "step_height", "max_slope_deg"):
        setattr(props, k, real_levels.QUAKE_PLAYER[k])
    return bh.addon_module(addon, "addon.panels"), props


def _sanity_in_panel(bpy, panels):
    assert bpy.ops.capsule_collision.classify_walkability() == {"FINISHED"}
    return panels.sanity_warnings(bpy.context.scene)


def test_panel_a_map_lying_on_its_side_and_a_metre_map_in_a_centimetre_scene(scene,
                                                                           bpy_module, addon):
    bpy = bpy_module
    panels, props = _quake_panel(scene, addon)
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


def _scaled_obj(src: Path, dst: Path, factor: float) -> Path:
    """``src`` (an OBJ) with every vertex times ``factor`` (a map exported in other units)."""
    out = []
    for line in src.read_text().splitlines():
        if line.startswith("v "):
            x, y, z = (float(t) * factor for t in line.split()[1:4])
            line = f"v {x!r} {y!r} {z!r}"
        out.append(line)
    dst.write_text("\n".join(out) + "\n")
    return dst


def test_cli_a_map_100_times_too_large_or_too_small_says_so_and_what_to_do(tmp_path):
    """The shipped map in centimetres (x 100: walls of towers) and a metre map scaled to
    centimetres of a metre (x 0.01: 100 times too small), both the right way up."""
    clip = real_levels.levels_dir() / "oa_bases7_clip.obj"
    big = _scaled_obj(clip, tmp_path / "big.obj", 100.0)
    warnings, _ = _level_warnings(tmp_path / "big", big, "--up", "Z")
    (w,) = warnings
    assert w["code"] == "centimetres" and "Scale it to metres (x 0.01" in w["message"], w
    assert "level: " + w["message"] in (tmp_path / "big" / "junit.xml").read_text()
    small = _scaled_obj(clip, tmp_path / "small.obj", 0.01)
    warnings, _ = _level_warnings(tmp_path / "small", small, "--up", "Z")
    (w,) = warnings
    assert w["code"] == "too_small" and "100 times too small" in w["message"], w
    assert "Scale it up (x 100)" in w["message"]


def test_panel_a_map_100_times_too_large_says_so_and_what_to_do(scene, bpy_module, addon):
    """The shipped map imported right way up and scaled x 100 (a centimetre export read as
    metres): the panel's level warning says it looks authored in centimetres and to scale it
    by 0.01; at x 1 no warning (the control)."""
    bpy = bpy_module
    panels, _props = _quake_panel(scene, addon)
    clip = str(real_levels.levels_dir() / "oa_bases7_clip.obj")
    bpy.ops.wm.obj_import(filepath=clip, up_axis="Z", forward_axis="Y")
    ob = bpy.context.selected_objects[0]
    bpy.context.view_layer.update()
    assert _sanity_in_panel(bpy, panels) == []
    ob.scale = (100.0, 100.0, 100.0)
    bpy.context.view_layer.update()
    (text,) = _sanity_in_panel(bpy, panels)
    assert "centimetres" in text and "x 0.01" in text, text
