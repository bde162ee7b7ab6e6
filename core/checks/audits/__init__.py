"""Level audits: places in a level where the character really has a problem.

Each audit returns a NamedTuple of arrays that line up row by row (one row per finding),
naming the mesh triangle, a position and a value, so a Blender operator can select exactly
the offending faces (3D-Print Toolbox style) and a pipeline can print the values:

- ``stand_test``: walkable faces on which the capsule fits nowhere (stand.py);
- ``headroom_audit``: walkable faces with less than ``height`` free above every position
  (stand.py);
- ``stair_audit``: risers of stair flights too high, treads too shallow (stairs.py);
- ``ledge_audit``: edge runs of walkable floor over a drop a character can walk off
  (ledges.py).

Frame and units: world space, metres, degrees; ``settings.up`` is up. Every audit is a few
batched mesh queries (no Python loop over faces).
"""

from .common import walkable_faces
from .ledges import LEDGE_MAX_DROP, LedgeResult, ledge_audit
from .stairs import StairResult, stair_audit
from .stand import HeadroomResult, StandResult, headroom_audit, stand_test

__all__ = ["walkable_faces", "stand_test", "headroom_audit", "stair_audit", "ledge_audit",
           "StandResult", "HeadroomResult", "StairResult", "LedgeResult", "LEDGE_MAX_DROP"]
