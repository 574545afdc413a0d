"""lengthgen: the shared package of the executable book *Length Generalization, Executable*.

The package is laid out by role (see ``book/engine.md``):

* book infrastructure: :mod:`lengthgen.config` (scale/device knobs, seeding, argument checks),
  :mod:`lengthgen.store` (result files with provenance, validation), :mod:`lengthgen.claims`
  (the claims ledger), :mod:`lengthgen.stats`, :mod:`lengthgen.plotting`, :mod:`lengthgen.widgets`,
  :mod:`lengthgen.cli`
* :mod:`lengthgen.engine` -- the generic ensemble trainer, optimizers, resumable runs, benchmark
* :mod:`lengthgen.nn` -- model pieces shared by several chapters
* :mod:`lengthgen.chapters` -- one package per chapter: its paper's models and analyses and its runs

Importing the package (or any module in it) runs no computation.
"""

__version__ = "0.1.0"
