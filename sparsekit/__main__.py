"""``python -m sparsekit``: the ``sparsekit`` command."""

import sys

from .cli import main

sys.exit(main())
