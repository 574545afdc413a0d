"""Chapter 5, section "Parity: averaging versus summing": our predictions (group ``ours``) for the
volume and training runs of :mod:`lengthgen.chapters.ch5.sum_sine`, each written with its
comparison before the run it judges."""

from __future__ import annotations

CLAIMS: list = []
