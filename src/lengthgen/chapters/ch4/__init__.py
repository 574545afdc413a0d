"""Chapter 4: Huang & Li, *Provable Benefits of Sinusoidal Activation for Modular Addition*.

:mod:`.paper` the paper's numbers and our protocol; :mod:`.data` the task and the MLPs;
:mod:`.constructions` the exact networks of Sec. 4; :mod:`.checks` accuracy at every length;
:mod:`.training`, :mod:`.sweeps` the trained studies and the learning theory;
:mod:`.paper_scale` the p = 53 GPU run; :mod:`.experiments` the plan and stored-run readers;
:mod:`.measures` (rules, values), :mod:`.claims` the ledger; :mod:`.figures` the pages' plots."""


def experiments_cell(fn):
    """Keep a cell function under :mod:`.experiments` (which imports them all, so pickling finds
    them), where ``results/ch4/cells/`` were computed: a stored cell's hash covers its qualname."""
    fn.__module__ = "lengthgen.chapters.ch4.experiments"
    return fn
