"""Chapter 5: our experiments across the four papers (predictions of ours, not the papers' claims).
Runs: :mod:`.volume_beta`, :mod:`.parity`, :mod:`.sum_sine`, :mod:`.mass` (plan and schemas:
:mod:`.experiments`); predictions: :mod:`.claims` (the index, Parity and mass),
:mod:`.volume_beta` and :mod:`.sum_sine`, declared with :mod:`.common`."""
