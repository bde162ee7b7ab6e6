"""The levelcheck CLI from a checkout: ``python tools/levelcheck.py [LEVEL ...] [options]``.

The CLI is the package ``capsule_collision.levelcheck`` (installed by ``pip install -r
requirements.txt``, or ``pip install .`` with the console script ``levelcheck``); this file
only runs it, so the README's first command works as written.
"""

import sys

from capsule_collision.levelcheck.cli import main

if __name__ == "__main__":
    sys.exit(main())
