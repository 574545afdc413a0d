"""Chapter 4: Huang & Li, *Provable Benefits of Sinusoidal Activation for Modular Addition*.

* :mod:`.paper`         -- the paper's numbers and settings, our per-scale protocol, the paper's claim values
* :mod:`.data`          -- the modular-addition task, count vectors, the seeding scheme of B.1.3
* :mod:`.model`         -- the two-layer MLP: one float64 ``Network`` and the batched ``ModularMLP``
* :mod:`.constructions` -- the exact sine networks of Thms 4.1–4.2 and our ReLU interpolant
* :mod:`.checks`        -- accuracy at every length (exhaustive, phase automaton, float64) and the exact-check cells
* :mod:`.relu_limits`   -- the ReLU width bounds (Thm 4.3) and the two-lengths obstruction (Thm 4.4)
* :mod:`.training`      -- training and evaluating ensembles through the engine, on a chosen device
* :mod:`.sweeps`        -- the training cells: ReLU limits, the B.1.1–B.1.4 sweeps, the epoch timing
* :mod:`.paper_scale`   -- the p = 53 GPU run (``reproduce ch4 --scale paper``); its update step
  (eager and captured) in :mod:`.paper_step`, its device checks in :mod:`.device_checks`
* :mod:`.margins`       -- multiclass and normalized margins (Sec. 6, B.1.2)
* :mod:`.transformer`   -- the decoder baseline of B.1.4
* :mod:`.experiments`   -- the plan (``reproduce ch4``), the cells' schemas and the stored-run readers
* :mod:`.rules`         -- how each comparison with the paper is chosen (R1–R6), as code
* :mod:`.measures`      -- our value of each stored claim, read from the stored cells
* :mod:`.claims`        -- the chapter's claims, one declaration per literal id
* :mod:`.figures`       -- what the chapter draws
"""


def experiments_cell(fn):
    """Keep a cell function under :mod:`.experiments` (which imports them all, so pickling finds
    them), where ``results/ch4/cells/`` were computed: a stored cell's configuration hash covers
    its function's qualified name."""
    fn.__module__ = "lengthgen.chapters.ch4.experiments"
    return fn
