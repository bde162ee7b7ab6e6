"""levelcheck: check levels for character collision problems, headless, for pipelines and CI.

The command line (``levelcheck``, ``python -m capsule_collision.levelcheck``) in parts:
``arguments`` (options, the run as a ``Job``, checked before Blender starts), ``levels``
(files, sidecar specs, keys), ``axes`` (importer axes), ``session`` (Blender and the
extension), ``scene`` (loading and reading a level), ``check`` (one level's report), ``run``
(in this process or ``--jobs`` workers), ``pictures``/``render`` (overview and insets),
``outputs`` (probe, atomic writes), ``junit``, ``console``, ``merge`` (shards) and ``cli``
(``main``). ``sample_level`` builds the bundled sample level.
"""
