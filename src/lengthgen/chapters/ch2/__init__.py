"""Chapter 2: Zhu & Chiang (2026), *Exact-Solution Volume and Length Generalization in Transformers*.

* :mod:`.single_layer` -- the single-layer models A_gen, A_pos, A_norm, A_sin of the paper
* :mod:`.volume`       -- exact-solution sets and admissible widths (the volume analysis)
* :mod:`.experiments`  -- the training protocol of App. D.2–D.3 and the volume scans; ``reproduce ch2``
"""
