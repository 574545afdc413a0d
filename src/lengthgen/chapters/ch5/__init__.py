"""Chapter 5: our experiments across the four papers (predictions of ours, not the papers' claims).
Runs: :mod:`.volume_beta`, :mod:`.parity`, :mod:`.sum_sine`, :mod:`.mass`, :mod:`.mass_more` (plan
and schemas: :mod:`.experiments`); predictions: :mod:`.claims` (the index, Parity and mass),
:mod:`.volume_claims` and :mod:`.sum_sine_claims`, declared with :mod:`.common`."""
