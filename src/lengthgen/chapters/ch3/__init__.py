"""Chapter 3: Han, Chai & Wang (2026), *A Positional Realizability Theory of Length Generalization*.

:mod:`.paper` the paper's numbers and protocol; :mod:`.realizability` the kernel families, α_L and
selection rules (§2–5); :mod:`.experiments` the cells of ``reproduce ch3`` (App. F–H included);
:mod:`.training`, :mod:`.ensembles` the trained decoder groups (§6); :mod:`.figures` tables and
figures; the claims :mod:`.claims`, :mod:`.claims_details`, their rules :mod:`.rules` and measures
:mod:`.measures` (with the study's statistics).
"""
