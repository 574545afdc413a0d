"""The chapters, one package each: ``chapters/chN/`` holds that paper's models, constructions and
analyses, ``paper.py`` (the paper's numbers and protocol, where the chapter has a paper) and
``experiments.py`` (the chapter's runs).

Every chapter's ``experiments`` module declares its reproduction as a list of cells of the runs
facility (:mod:`lengthgen.engine.runs`)::

    cells(scale: str) -> list[Cell]          # the plan, in run order

and may define ``assemble(out, scale, values) -> list[Path]`` to write summary files from the
finished cells. :func:`reproduce` (``python -m lengthgen reproduce chN``) runs the plan; nothing
else in a chapter loops over stored results to resume. Modules are imported only when their
chapter is asked for.
"""

from __future__ import annotations

import fnmatch
import importlib
from pathlib import Path
from typing import Callable

from lengthgen.config import CHAPTERS, ConfigError, check_choice


def chapter_module(chapter: str):
    """The ``experiments`` module of ``chapter`` (clear error for an unknown chapter)."""
    check_choice("chapter", chapter, CHAPTERS)
    return importlib.import_module(f"{__name__}.{chapter}.experiments")


def plan(chapter: str, scale: str, only=None) -> list:
    """The cells of ``chapter`` at ``scale``; ``only`` keeps the cells whose names match one of
    the given shell patterns (``"lengthgen_*"``), each pattern having to match at least one cell."""
    from lengthgen.config import get_run_scale

    cells = chapter_module(chapter).cells(get_run_scale(scale))
    if only is None:
        return cells
    pats = [only] if isinstance(only, str) else list(only)
    if not pats or not all(isinstance(p, str) and p for p in pats):
        raise ConfigError(f"--only needs cell names or patterns, got {only!r}")
    names = [c.name for c in cells]
    for p in pats:
        if not fnmatch.filter(names, p):
            shown = ", ".join(names[:12]) + (", …" if len(names) > 12 else "")
            raise ConfigError(f"--only {p!r} matches no cell of {chapter}; cells: {shown}")
    return [c for c in cells if any(fnmatch.fnmatchcase(c.name, p) for p in pats)]


def reproduce(chapter: str, *, scale: str, out=None, only=None, **run) -> list[Path]:
    """Run (or resume) ``chapter``'s cells at ``scale`` into ``out`` (default
    :func:`lengthgen.engine.runs.default_out`) and return the paths written or found; ``run`` holds
    the options of :func:`lengthgen.engine.runs.run_cells` (``device``, ``executor``, ``workers``,
    ``scheduler``, ``budget_s``, ``allow_dirty``, ``progress``, and ``refresh``, which also
    re-runs stored cells without a recorded CPU time), with its defaults.

    Every argument is checked and the output folder prepared before the first cell runs.
    """
    from lengthgen.engine import runs

    mod = chapter_module(chapter)
    cells = plan(chapter, scale, only)
    out = runs.check_out_dir(out if out is not None else runs.default_out(chapter, scale))
    folder = out / "cells"
    values = runs.run_cells(cells, folder, scale=scale, desc=f"{chapter} {scale}", **run)
    paths = [runs.cell_path(folder, name) for name in values]
    if hasattr(mod, "assemble") and only is None:
        paths += list(mod.assemble(out, scale, values) or [])
    return paths


def chapter_schema(chapter: str, scale: str) -> Callable:
    """The schema lookup of ``chapter``'s stored cells at ``scale``: a function of a
    :class:`lengthgen.engine.runs.Cell` returning its :class:`lengthgen.store.Schema` (or
    ``None``), from the chapter's ``experiments.schema(name, scale)``, the one convention. Used by
    :func:`lengthgen.engine.runs.merge_cells`."""
    from lengthgen.config import get_run_scale

    scale = get_run_scale(scale)
    mod = chapter_module(chapter)
    return lambda cell: mod.schema(cell.name, scale)
