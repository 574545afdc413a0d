"""Chapter 4: Huang & Li, *Provable Benefits of Sinusoidal Activation for Modular Addition*.

:mod:`.paper` holds the paper's numbers and settings and our per-scale protocol; :mod:`.data`
the task, count vectors and seeding (B.1.3); :mod:`.model` the two-layer MLP (float64
``Network``, batched ``ModularMLP``); :mod:`.constructions` the exact sine networks of
Thms 4.1–4.2, our ReLU interpolant and the ReLU limits of Thms 4.3–4.4; :mod:`.checks` accuracy
at every length (exhaustive, phase automaton, float64); :mod:`.theory` the learning theory
measured; :mod:`.training` (with the margins of Sec. 6) and :mod:`.sweeps` (with the transformer)
the trained studies; :mod:`.paper_scale` the p = 53 GPU run; :mod:`.experiments` the plan and the
stored-run readers; :mod:`.rules` (R1–R6), :mod:`.measures` and :mod:`.claims` the ledger;
:mod:`.figures` what the chapter draws.
"""


def experiments_cell(fn):
    """Keep a cell function under :mod:`.experiments` (which imports them all, so pickling finds
    them), where ``results/ch4/cells/`` were computed: a stored cell's configuration hash covers
    its function's qualified name."""
    fn.__module__ = "lengthgen.chapters.ch4.experiments"
    return fn
