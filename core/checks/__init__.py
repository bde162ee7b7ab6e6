"""Checks: what a level designer and a pipeline ask of a level, the top folder of ``core``.

Walkability per face (``walkability``), level sanity warnings (``sanity``), the audits
(``audits``: stand, headroom, stairs, ledges), the shortest way out of the solids a capsule
is in (``push_out``), expectations and verdicts (``verdicts``), severities (``severity``),
which results are problems (``problems``), how a triangle is named (``naming``) and the level
report both the extension and the CLI write (``report``). Built on every lower folder.
"""
