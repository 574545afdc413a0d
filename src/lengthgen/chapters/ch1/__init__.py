"""Chapter 1: Chiang & Cholak (2022), *Overcoming a Theoretical Limitation of Self-Attention*.

* :mod:`.encoder`       -- the post-norm transformer encoder of the paper, batched over members
* :mod:`.constructions` -- the exact PARITY and FIRST transformers (§1.2–1.4 of the chapter)
* :mod:`.paper`         -- the paper's numbers and the chapter's protocol, seeds and scales
* :mod:`.experiments`   -- Fig. 2 curves, the sensitivity sweep, FIRST/PARITY training, the schemas
  of the stored cells and ``cells(scale)``, the plan of ``reproduce ch1``
"""
