"""Execute paired notebooks and store outputs only for the cells nbval checks: tagged
``nbval-check-output`` (a tag, so the page never shows the marker) or marked ``# NBVAL_CHECK_OUTPUT``.

nbval compares those cells' fresh outputs with the stored ones; every other cell is kept without
outputs (the .ipynb twins are otherwise output-free). Run after changing a checked cell:

    .venv/bin/python scripts/store_checked_outputs.py notebooks/00_attention_dilution.ipynb
"""

import sys
from pathlib import Path

import nbformat
from nbclient import NotebookClient


def main(paths):
    for p in map(Path, paths):
        nb = nbformat.read(p, as_version=4)
        ran = nbformat.read(p, as_version=4)
        NotebookClient(
            ran,
            timeout=900,
            kernel_name="python3",
            resources={"metadata": {"path": str(p.parent)}},
        ).execute()
        for cell, done in zip(nb.cells, ran.cells):
            if cell.cell_type != "code":
                continue
            keep = "NBVAL_CHECK_OUTPUT" in cell.source or "nbval-check-output" in (
                cell.metadata.get("tags") or []
            )
            cell.outputs = done.outputs if keep else []
            # nbval refuses a reference cell that has outputs but no execution count
            cell.execution_count = done.execution_count if keep else None
        nbformat.write(nb, p)
        print(f"stored checked outputs of {p}")


if __name__ == "__main__":
    main(sys.argv[1:])
