"""Chapter 3: Han, Chai & Wang (2026), *A Positional Realizability Theory of Length Generalization*.

* :mod:`.paper`          -- the paper's numbers and the chapter's protocol (PROTOCOL, seeds, Tables 3-5, ...)
* :mod:`.realizability`  -- kernel families, the α_L transfer statistic, selection rules (§2–5); the exact
  min-norm rule in :mod:`.exact_min_norm`
* :mod:`.experiments`    -- the plan: the cells of ``reproduce ch3`` (α tables, theory checks, one cell
  per trained decoder group of §6), their schemas and the readers of the stored cells
* :mod:`.training`       -- how the decoder groups train (data, masked loss, one ensemble per call)
* :mod:`.ensembles`      -- the whole study as a few large ensembles on a GPU (``scripts/gpu_ch3.sh``)
* :mod:`.analysis`       -- the study's statistics (§6, App. D, App. E)
* :mod:`.figures`        -- the chapter's tables and figures
* :mod:`.claims`, :mod:`.claims_details` -- every claim, by page; :mod:`.rules` the tolerance rules;
  :mod:`.measures` what the stored claims measure
"""
