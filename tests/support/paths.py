"""Where the tests find the checkout and their recorded data: one home for both."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]  # the checkout: gitvault/, tests/, bench/, schemas/
DATA = ROOT / "tests" / "data"  # recorded hook inputs and real transcripts
