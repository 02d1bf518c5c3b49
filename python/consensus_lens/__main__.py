"""``python -m consensus_lens``: the ``consensus-lens`` command (consensus_lens/cli.py)."""

import sys

from .cli import main

sys.exit(main())
