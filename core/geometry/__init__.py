"""Geometry: shapes and the exact per-triangle kernels, the lowest folder of ``core``.

Shapes and their results (``shapes``: Capsule, Contact, Hit), argument validation
(``validate``), Ericson's closest points (``closest``), discrete contacts (``contact``), the
exact swept time of impact (``sweep``), the per-triangle record layout they share
(``records``) and the rational predicates that settle touching-vs-penetrating ties
(``exact``). Imports nothing of ``core`` but ``core.constants``.
"""
