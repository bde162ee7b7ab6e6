"""Scene settings of Capsule Collision (``scene.capsule_collision``)."""

import bpy
from bpy.props import FloatProperty


class CAPSULE_COLLISION_PG_settings(bpy.types.PropertyGroup):
    """Character capsule and walkability limits used by the checks (metres, degrees)."""

    radius: FloatProperty(
        name="Radius",
        description="Character capsule radius",
        default=0.35,
        min=0.001,
        soft_max=5.0,
        unit="LENGTH",
    )
    height: FloatProperty(
        name="Height",
        description="Character capsule height, both caps included",
        default=1.8,
        min=0.002,
        soft_max=10.0,
        unit="LENGTH",
    )
    max_slope_deg: FloatProperty(
        name="Max Slope",
        description="Steepest floor the character can walk on, in degrees",
        default=45.0,
        min=0.0,
        max=90.0,
    )
    step_height: FloatProperty(
        name="Step Height",
        description="Highest riser the character climbs",
        default=0.35,
        min=0.0,
        soft_max=2.0,
        unit="LENGTH",
    )


classes = (CAPSULE_COLLISION_PG_settings,)
