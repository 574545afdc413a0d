"""Per-chapter reproduction entry points used by ``python -m lengthgen reproduce <chapter>``.

Each chapter module ``chN`` defines ``reproduce(scale: str, device: str, out: Path) -> list[Path]``
which runs the chapter's sweeps at the given scale and writes its results (with provenance) under
``out`` (default ``results/chN``). Modules are imported only when their chapter is asked for.
"""
from __future__ import annotations

import importlib

from ..claims import CHAPTERS
from ..config import check_choice


def get_reproducer(chapter: str):
    """The ``reproduce`` function of ``chapter``; clear errors for unknown or unfinished chapters."""
    check_choice("chapter", chapter, CHAPTERS)
    try:
        mod = importlib.import_module(f"{__name__}.{chapter}")
    except ModuleNotFoundError as err:
        if err.name == f"{__name__}.{chapter}":
            raise NotImplementedError(f"chapter {chapter} has no reproduce entry point yet") from None
        raise
    return mod.reproduce
