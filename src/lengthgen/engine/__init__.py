"""The generic engine, shared by every chapter and independent of any paper.

* :mod:`lengthgen.engine.train` -- the ensemble trainer: many models (seeds × variants) trained as one
  batched program, validation and early stopping per member, batched evaluation
* :mod:`lengthgen.engine.ensemble` -- the ensemble's model interface: member-stacked parameters,
  per-member generators, sub-ensembles
* :mod:`lengthgen.engine.optim` -- per-member optimizers (Adam, AdamW, SGD, Muon) for the ensemble
* :mod:`lengthgen.engine.runs`  -- resumable runs: named cells stored atomically under a key that holds
  the scale and the cell's configuration hash, with in-process, process-pool and Dask executors

The book's page ``book/engine.md`` explains the design.
"""
