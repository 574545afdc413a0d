"""lengthgen: the shared package of the executable book *Length Generalization, Executable*.

The package is laid out by role (see ``book/engine.md``):

* book infrastructure: :mod:`lengthgen.config` (scale/device knobs, seeding, argument checks),
  :mod:`lengthgen.store` (result and cell files with provenance, validation),
  :mod:`lengthgen.claims` and :mod:`lengthgen.rounding` (the claims ledger and its rounding),
  :mod:`lengthgen.stats`, :mod:`lengthgen.plotting`, :mod:`lengthgen.widgets`, :mod:`lengthgen.cli`
* page code: :mod:`lengthgen.pages` (scorecard, results boxes, claims tables), :mod:`lengthgen.cost`
  (what the stored runs cost), :mod:`lengthgen.benchmarks` (ensemble vs loop, ``bench``)
* :mod:`lengthgen.engine` -- the generic ensemble trainer, optimizers, planning and running cells
* :mod:`lengthgen.nn` -- model pieces shared by several chapters
* :mod:`lengthgen.chapters` -- one package per chapter: its paper's models and analyses and its runs

Importing the package (or any module in it) runs no computation.
"""

__version__ = "0.1.0"
