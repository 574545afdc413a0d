"""Chapter 3: Han, Chai & Wang (2026), *A Positional Realizability Theory of Length Generalization*.

:mod:`.paper` the paper's numbers and protocol; :mod:`.realizability` (:mod:`.exact_min_norm`)
the kernel families, α_L and selection rules (§2–5); :mod:`.experiments` the cells of ``reproduce
ch3``; :mod:`.training`, :mod:`.ensembles` the trained decoder groups (§6); :mod:`.analysis` the
study's statistics; :mod:`.figures` tables and figures; :mod:`.robustness` App. F–H; the claims
:mod:`.claims`, :mod:`.claims_details`, their rules :mod:`.rules` and measures :mod:`.measures`.
"""
