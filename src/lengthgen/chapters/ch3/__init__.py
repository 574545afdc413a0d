"""Chapter 3: Han, Chai & Wang (2026), *A Positional Realizability Theory of Length Generalization*.

* :mod:`.realizability` -- kernel families, the α_L transfer statistic, selection rules (§2–5)
* :mod:`.experiments`   -- α tables, theory checks and the trained decoder study (§6); ``reproduce ch3``
"""
