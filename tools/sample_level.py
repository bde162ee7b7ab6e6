"""Save the sample level as a .blend: ``python tools/sample_level.py OUT.blend [--clean]``.

The level itself lives in the package (``capsule_collision.levelcheck.sample_level``, which
the CLI builds at run time); this is its command line from a checkout."""

import sys

from capsule_collision.levelcheck.sample_level import main

if __name__ == "__main__":
    sys.exit(main())
