"""The chapters, one package each (``chapters/chN/``). Every chapter's ``experiments`` module
declares its reproduction as ``cells(scale) -> list[Cell]`` (:mod:`lengthgen.engine.runs`) and may
define ``assemble(out, scale, values) -> list[Path]``; :func:`reproduce` runs the plan."""

from __future__ import annotations

import fnmatch
import importlib
from pathlib import Path
from typing import Callable

from lengthgen.config import CHAPTERS, ConfigError, check_choice, get_run_scale


def chapter_module(chapter: str):
    """The ``experiments`` module of ``chapter`` (clear error for an unknown chapter)."""
    check_choice("chapter", chapter, CHAPTERS)
    return importlib.import_module(f"{__name__}.{chapter}.experiments")


def plan(chapter: str, scale: str, only=None) -> list:
    """The cells of ``chapter`` at ``scale``; ``only``: shell patterns of the names to keep."""
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
    """Run (or resume) ``chapter``'s cells at ``scale`` into ``out``; returns the paths written or
    found. ``run``: the options of :func:`lengthgen.engine.runs.run_cells`."""
    from lengthgen.engine import runs
    from lengthgen.store import cell_path

    mod = chapter_module(chapter)
    cells = plan(chapter, scale, only)
    out = runs.check_out_dir(out if out is not None else runs.default_out(chapter, scale))
    folder = out / "cells"
    values = runs.run_cells(cells, folder, scale=scale, desc=f"{chapter} {scale}", **run)
    paths = [cell_path(folder, name) for name in values]
    if hasattr(mod, "assemble") and only is None:
        paths += list(mod.assemble(out, scale, values) or [])
    return paths


def chapter_schema(chapter: str, scale: str) -> Callable:
    """``cell -> description`` of ``chapter``'s stored cells at ``scale`` (``experiments.schema``)."""
    scale = get_run_scale(scale)
    mod = chapter_module(chapter)
    return lambda cell: mod.schema(cell.name, scale)
