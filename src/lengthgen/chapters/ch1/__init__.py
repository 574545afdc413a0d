"""Chapter 1: Chiang & Cholak (2022), *Overcoming a Theoretical Limitation of Self-Attention*.
:mod:`.encoder` the paper's post-norm encoder, batched over members; :mod:`.constructions` the exact
PARITY and FIRST transformers; :mod:`.measures` what they do, and the explorer; :mod:`.training` the
learners, their training and the analyses of the runs; :mod:`.studies` the details page's secondary
studies; :mod:`.experiments` the plan (cells, their functions, schemas); :mod:`.paper` the paper's
numbers and the protocol; :mod:`.claims` the chapter's claims."""
