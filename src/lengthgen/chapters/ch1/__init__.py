"""Chapter 1: Chiang & Cholak (2022), *Overcoming a Theoretical Limitation of Self-Attention*.

* :mod:`.encoder`       -- the post-norm transformer encoder of the paper, batched over members
* :mod:`.constructions` -- the exact PARITY and FIRST transformers (§1.2–1.4 of the chapter)
* :mod:`.measures`      -- what the constructions do: exactness, Fig. 2 curves, logit bands, sweeps
* :mod:`.training`      -- the FIRST and PARITY learners, their training and the analyses of the runs
* :mod:`.experiments`   -- the plan: ``cells(scale)`` of ``reproduce ch1``, the cells' functions and
  ``schema(name, scale)`` of the stored cells
* :mod:`.studies`       -- the details page's secondary studies (FFNN for PARITY, layer norm with log
  scaling, the outvote probe of trained FIRST encoders, the PARITY grid) and their claims
* :mod:`.figures`       -- the explorer's frame
* :mod:`.paper`         -- the paper's numbers and the chapter's protocol, seeds and scales
* :mod:`.claims`        -- every claim the chapter checks, with its comparison and measurement
"""
