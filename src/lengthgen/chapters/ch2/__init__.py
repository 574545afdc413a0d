"""Chapter 2: Zhu & Chiang (2026), *Exact-Solution Volume and Length Generalization in Transformers*.

* :mod:`.paper`        -- the paper's protocol and reported numbers; the tolerance rules
* :mod:`.single_layer` -- the single-layer models A_gen, A_pos, A_norm, A_sin of the paper
* :mod:`.volume`       -- exact-solution sets, widths, count levels; Table 1's zeros, Thm. 9, eq. 87
* :mod:`.experiments`  -- the plan (``reproduce ch2``), how a cell trains, volume scans, readers
* :mod:`.figures`      -- what the chapter draws; :mod:`.measures` what it reads off a stored run
* :mod:`.claims`       -- the claims (Tables 1–3 as rows)"""
