"""Chapter 5, section "Parity: averaging versus summing": the exact-solution volume of summing
attention + a sine unit around chapter 4's construction, and that network trained with chapter 4's
protocol at p = 2. Predictions: :mod:`lengthgen.chapters.ch5.sum_sine_claims`."""

from __future__ import annotations

from lengthgen.engine.runs import Cell

SCHEMAS: dict = {}


def cells(scale: str) -> list[Cell]:
    """The section's further cells (none yet)."""
    return []
