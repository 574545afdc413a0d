"""The chapters, one package each: ``chapters/chN/`` holds that paper's models, constructions and
analyses and ``experiments.py`` (the chapter's runs, its ``reproduce`` entry point for
``python -m lengthgen reproduce chN``). Modules are imported only when their chapter is asked for.
"""
from __future__ import annotations

import importlib

from lengthgen.claims import CHAPTERS
from lengthgen.config import check_choice


def get_reproducer(chapter: str):
    """The ``reproduce`` function of ``chapter``; clear errors for unknown or unfinished chapters."""
    check_choice("chapter", chapter, CHAPTERS)
    try:
        mod = importlib.import_module(f"{__name__}.{chapter}.experiments")
    except ModuleNotFoundError as err:
        if err.name in (f"{__name__}.{chapter}", f"{__name__}.{chapter}.experiments"):
            raise NotImplementedError(f"chapter {chapter} has no reproduce entry point yet") from None
        raise
    return mod.reproduce
