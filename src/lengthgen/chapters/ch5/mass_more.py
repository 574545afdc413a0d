"""Chapter 5, section "Softmax mass, not just argmax": the runs beyond the evaluation-time factor
(a refit of chapter 3's kernels with per-row log scaling; where the fitted RoPE kernels put their
maxima over offsets and what chapter 3's Theorem 2 then predicts far beyond the study's lengths).
Predictions: :mod:`lengthgen.chapters.ch5.mass_more_claims`."""

from __future__ import annotations

from lengthgen.engine.runs import Cell

SCHEMAS: dict = {}


def cells(scale: str) -> list[Cell]:
    """The section's further cells (none yet)."""
    return []
