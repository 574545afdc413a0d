"""The generic engine, shared by every chapter and independent of any paper (``book/engine.md``):
the ensemble trainer (:mod:`~lengthgen.engine.train`, :mod:`~lengthgen.engine.ensemble`), its
per-member optimizers (:mod:`~lengthgen.engine.optim`) and resumable runs of stored cells
(:mod:`~lengthgen.engine.runs`)."""
