"""Chapter 4: Huang & Li, *Provable Benefits of Sinusoidal Activation for Modular Addition*.

* :mod:`.paper`         -- the paper's numbers and settings, our per-scale protocol, the paper's claim values
* :mod:`.data`          -- the modular-addition task, count vectors, the seeding scheme of B.1.3
* :mod:`.model`         -- the two-layer MLP: one float64 ``Network`` and the batched ``ModularMLP``
* :mod:`.constructions` -- the exact sine networks of Thms 4.1–4.2 and our ReLU interpolant
* :mod:`.checks`        -- accuracy at every length: exhaustive, phase automaton, float64 network
* :mod:`.relu_limits`   -- the ReLU width bounds (Thm 4.3) and the two-lengths obstruction (Thm 4.4)
* :mod:`.training`      -- training and evaluating ensembles through the engine, on a chosen device
* :mod:`.margins`       -- multiclass and normalized margins (Sec. 6, B.1.2)
* :mod:`.transformer`   -- the decoder baseline of B.1.4
* :mod:`.experiments`   -- the chapter's cells (``reproduce ch4``), their schemas and the stored-run readers
"""
