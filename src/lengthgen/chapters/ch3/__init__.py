"""Chapter 3: Han, Chai & Wang (2026), *A Positional Realizability Theory of Length Generalization*.

* :mod:`.paper`         -- the paper's numbers and the chapter's protocol (PROTOCOL, seeds, Tables 3-5, ...)
* :mod:`.realizability` -- kernel families, the α_L transfer statistic, selection rules (§2–5)
* :mod:`.experiments`   -- the cells of ``reproduce ch3`` (α tables, theory checks, one cell per
  trained decoder group of §6), readers of the stored cells and the study's statistics and figures
"""
