"""lengthgen: the shared package of the executable book *Length Generalization, Executable*.

The package is organised by concept and shared by all chapters:

* :mod:`lengthgen.config`   -- the scale/device knobs, seeding, argument checking
* :mod:`lengthgen.claims`   -- the claims ledger (paper value vs ours, with status)
* :mod:`lengthgen.store`    -- result files with provenance, atomic writes
* :mod:`lengthgen.stats`    -- bootstrap intervals and rank statistics
* :mod:`lengthgen.plotting` -- the house figure style
* :mod:`lengthgen.widgets`  -- ipywidgets explorers
* :mod:`lengthgen.dilution` -- chapter 0: softmax attention dilution and log-length scaling
* :mod:`lengthgen.chapters` -- one ``reproduce`` entry point per chapter for the CLI

Importing the package (or any module in it) runs no computation.
"""

__version__ = "0.1.0"
