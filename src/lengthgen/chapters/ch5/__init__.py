"""Chapter 5: our experiments across the four papers (predictions of ours, not the papers' claims).
Runs: :mod:`.volume_beta`, :mod:`.parity`, :mod:`.sum_sine`, :mod:`.mass`, :mod:`.mass_more` (plan
and schemas: :mod:`.experiments`); predictions: :mod:`.claims` (the index) and the ``*_claims``
modules, declared with :mod:`.common`."""
