"""Chapter 5: our experiments across the four papers (predictions of ours, not the papers' claims).

Sections and modules: "Log-length scaling in the volume theory" (:mod:`.volume_beta`, its runs;
:mod:`.volume_claims`), "Parity: averaging versus summing" (:mod:`.parity`, :mod:`.sum_sine`;
:mod:`.sum_sine_claims`), "Softmax mass, not just argmax" (:mod:`.mass`, :mod:`.mass_more`;
:mod:`.mass_more_claims`). :mod:`.claims` is the chapter's index of claims (and holds the parity
and mass ones), :mod:`.common` the claim builder and shared comparison rules,
:mod:`.experiments` the plan, the parity and mass cells and every cell's schema.
"""
