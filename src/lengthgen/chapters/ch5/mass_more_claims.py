"""Chapter 5, section "Softmax mass, not just argmax": our further predictions (group ``ours``),
each written with its comparison before the run it judges (:mod:`lengthgen.chapters.ch5.mass_more`)."""

from __future__ import annotations

CLAIMS: list = []
