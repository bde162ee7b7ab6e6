"""Controller: a character capsule moving through a mesh, one frame at a time.

``controller.CharacterController.move`` runs named phases (follow ground, slide, step up,
stick to floor, classify ground) over ``core.mesh`` queries: ``settings`` (ControllerSettings,
GroundState), ``planes`` (Box2D-style plane solvers), ``steps`` (the one step probe),
``ground``, ``slide``, ``recovery`` and ``moves`` (the phases' named results). ``presets``
converts engine parameters to and from ControllerSettings.
"""
