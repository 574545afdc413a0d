"""The generic engine, shared by every chapter and independent of any paper (``book/engine.md``):
the ensemble trainer and its model interface (:mod:`~lengthgen.engine.train`), its per-member
optimizers (:mod:`~lengthgen.engine.optim`), resumable runs of stored cells
(:mod:`~lengthgen.engine.runs`) and parted checkpoints (:mod:`~lengthgen.engine.parts`)."""
