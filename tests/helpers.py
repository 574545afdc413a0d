"""Helpers shared by the tamper tests: a private copy of the stored results, and an edit of one cell."""

import json
import shutil
from pathlib import Path

from lengthgen.store import results_dir


def copy_results(tmp_path, chapters=None) -> Path:
    """Copy ``results/`` (or only ``chapters`` plus the ledgers) to ``tmp_path/results``."""
    dst = Path(tmp_path) / "results"
    if chapters is None:
        shutil.copytree(results_dir(), dst)
    else:
        for part in [*chapters, "claims"]:
            shutil.copytree(results_dir() / part, dst / part)
    return dst


def edit_cell(root, chapter: str, name: str, edit) -> None:
    """Apply ``edit(value)`` in place to the stored value of cell ``name`` of ``chapter`` under ``root``."""
    path = Path(root) / chapter / "cells" / f"{name}.json"
    obj = json.loads(path.read_text())
    edit(obj["data"]["value"])
    path.write_text(json.dumps(obj))
