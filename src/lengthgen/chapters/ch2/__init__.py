"""Chapter 2: Zhu & Chiang (2026), *Exact-Solution Volume and Length Generalization in Transformers*.

* :mod:`.paper`        -- the paper's protocol (App. D.2–D.3) and reported numbers, in one place
* :mod:`.single_layer` -- the single-layer models A_gen, A_pos, A_norm, A_sin of the paper
* :mod:`.volume`       -- exact-solution sets and admissible widths (the volume analysis)
* :mod:`.experiments`  -- the chapter's cells (training runs and volume scans; ``reproduce ch2``)
  and the readers of the stored cells under ``results/ch2/cells``
"""
