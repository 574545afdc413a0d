"""Chapter 2: Zhu & Chiang (2026), *Exact-Solution Volume and Length Generalization in Transformers*.

* :mod:`.paper`        -- the paper's protocol (App. D.2–D.3) and reported numbers, in one place
* :mod:`.single_layer` -- the single-layer models A_gen, A_pos, A_norm, A_sin of the paper
* :mod:`.volume`       -- exact-solution sets and admissible widths (the volume analysis), and
  A_gen's count levels (eq. 71): Majority area, Lemmas 6–7, Parity
* :mod:`.nesv`         -- the volumes the scans do not reach: Table 1's zeros, Thm. 9, eq. 87
* :mod:`.experiments`  -- the plan: the chapter's cells (training runs and volume scans;
  ``reproduce ch2``), their schemas (``schema(name, scale)``) and the readers of the stored cells
* :mod:`.training`     -- how a cell trains: banks, batches, one experiment's ensemble
* :mod:`.figures`      -- what the chapter draws; :mod:`.measures` what it reads off a stored run
* :mod:`.claims`       -- the claims: Tables 1–3 and the rest as rows and short declarations
  (declared deviations on their rows), checked by the tolerance rules of :mod:`.rules`,
  measured by :mod:`.measures`"""
