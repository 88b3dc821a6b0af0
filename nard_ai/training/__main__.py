"""``python -m nard_ai.training``: see :mod:`nard_ai.training.cli`."""

import sys

from nard_ai.training.cli import main

if __name__ == "__main__":
    sys.exit(main())
