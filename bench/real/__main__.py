"""`python -m bench.real`: see bench/real/run.py."""

from __future__ import annotations

import sys

from bench.real.run import main

sys.exit(main())
