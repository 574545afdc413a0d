"""Chapter 2: Zhu & Chiang (2026), *Exact-Solution Volume and Length Generalization in Transformers*.

* :mod:`.paper`        -- the paper's protocol (App. D.2–D.3) and reported numbers, in one place
* :mod:`.single_layer` -- the single-layer models A_gen, A_pos, A_norm, A_sin of the paper
* :mod:`.volume`       -- exact-solution sets and admissible widths (the volume analysis)
* :mod:`.experiments`  -- the plan: the chapter's cells (training runs and volume scans;
  ``reproduce ch2``), their schemas (``schema(name, scale)``) and the readers of the stored cells
* :mod:`.training`     -- how a cell trains: banks, batches, one experiment's ensemble
* :mod:`.figures`      -- what the chapter draws
* :mod:`.claims`       -- the claims: the tolerance rules, then Tables 1–3 and the rest as rows
"""
