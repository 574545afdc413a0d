"""Chapter 5: our experiments across the four papers (predictions of ours, not the papers' claims).

Section "Log-length scaling in the volume theory" (chapter 1 × chapter 2):

* :mod:`.volume_beta`    -- the runs: chapter 2's closed forms, scans and training with β_n = 1
* :mod:`.volume_claims`  -- its predictions (``ch5.volume.*``) with their measures

Section "Parity: averaging versus summing" (chapter 2 × chapter 4):

* :mod:`.parity`          -- the doubling collapse, averaging + one sine unit, summing + sine
* :mod:`.sum_sine`        -- the exact volume around chapter 4's construction, trained summing nets
* :mod:`.sum_sine_claims` -- the predictions on them (``ch5.sumsine.*``)

Section "Softmax mass, not just argmax" (chapters 0/1 × chapter 3):

* :mod:`.mass`             -- α_L^{½} and its closed form for clamped learned tables
* :mod:`.mass_more`        -- the per-row log refit and RoPE far out (its runs too)
* :mod:`.mass_more_claims` -- the predictions on them (``ch5.mass_refit.*``, ``ch5.mass_far.*``)

And the chapter's index: :mod:`.claims` (the ``parity`` and ``mass`` claims, every claim in order,
how each comparison was chosen, the headline), :mod:`.common` (the claim builder and the shared
comparison rules), :mod:`.experiments` (the plan, the parity and mass cells, every cell's schema).
"""
