"""Walk: a controller steered along a path, and what stopped it.

``walkthrough`` is the door (``walkthrough``, ``walkthrough_many``, ``compare_frame_rates``);
``walker`` steps characters in lock-step; ``events`` names what stopped a character;
``report`` holds the results (WalkEvent, WalkReport, FrameRateReport). Built on
``core.controller``.
"""
