"""Build the book so that a page never shows a claim the build did not evaluate (``make book``).

1. Execute and build every chapter (``jupyter-book build``; cached notebooks are not re-run).
2. Refuse the book if any chapter's execution failed: name the chapter, the cell (its index in
   the notebook and its first line) and the error, and exit 1. A failed chapter never reaches
   ``ledger.save()``, so its ledger on disk is not from this build and must not be published.
3. Generate the pages that come from the ledgers (scorecard, the intro's results box, the cost
   table: ``scripts/build_pages.py``) from the ledgers the executions just wrote, and build every
   page again with the extra options (e.g. ``-W``: every notebook comes from the cache by now, and
   a full pass reports every warning of the final pages, which an incremental one would not).

    .venv/bin/python scripts/build_book.py [--root DIR] [jupyter-book build options, e.g. -W -n --keep-going]

``--root`` is the book's folder (default: this repository; the tests build a small book).
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

BIN = Path(sys.executable).parent
ANSI = re.compile(r"\x1b\[[0-9;]*m")


def _cell_of(notebook: Path, log: str) -> str:
    """``cell N (first line)`` of the cell whose source the error log quotes, else ``cell ?``."""
    m = re.search(r"executing the following cell:\n-+\n(.*?)\n-+\n", log, re.S)
    if not m or not notebook.exists():
        return "cell ?"
    source = m.group(1).strip()
    cells = json.loads(notebook.read_text())["cells"]
    for n, cell in enumerate(cells):
        text = "".join(cell.get("source", "")).strip()
        if (
            cell.get("cell_type") == "code"
            and text
            and (text == source or source.startswith(text[:200]))
        ):
            return f"cell {n} ({text.splitlines()[0][:70]!r})"
    return f"cell ? ({source.splitlines()[0][:70]!r})"


def failures(root: Path) -> list[str]:
    """One line per chapter whose execution failed in the last build of the book in ``root``
    (from the error reports Jupyter Book writes under ``_build/html/reports``)."""
    reports = root / "_build" / "html" / "reports"
    out = []
    for log in sorted(reports.rglob("*.err.log")) if reports.exists() else []:
        rel = log.relative_to(reports).with_suffix("").with_suffix("")
        notebook = root / rel.with_suffix(".ipynb")
        text = ANSI.sub("", log.read_text(errors="replace"))
        last = [ln for ln in text.strip().splitlines() if ln.strip()]
        error = last[-1].strip() if last else "unknown error"
        out.append(f"chapter {rel} failed at {_cell_of(notebook, text)}: {error[:200]}")
    return out


def build(root: Path, extra: list[str]) -> int:
    return subprocess.call([str(BIN / "jupyter-book"), "build", *extra, str(root)], cwd=root)


def pages(root: Path) -> None:
    subprocess.check_call([sys.executable, str(root / "scripts" / "build_pages.py")], cwd=root)


def main(argv: list[str]) -> int:
    root = Path(__file__).resolve().parents[1]
    if argv[:1] == ["--root"]:
        if len(argv) < 2 or not Path(argv[1]).is_dir():
            print(
                f"make book: --root needs an existing folder, got {argv[1:2]}",
                file=sys.stderr,
            )
            return 2
        root, argv = Path(argv[1]).resolve(), argv[2:]
    reports = root / "_build" / "html" / "reports"
    for log in reports.rglob("*.err.log") if reports.exists() else []:
        log.unlink()  # reports of an earlier build say nothing about this one
    if not (root / "book" / "_generated" / "results_box.md").exists():
        pages(root)  # the first pass needs the included files to exist
    build(root, [])
    failed = failures(root)
    if failed:
        for line in failed:
            print(f"make book: {line}", file=sys.stderr)
        print(
            f"make book: {len(failed)} chapter(s) failed to execute; the book is not published "
            f"(reports under {reports.relative_to(root)}/)",
            file=sys.stderr,
        )
        return 1
    pages(root)  # from the ledgers this build's executions wrote
    return build(root, ["--all", *argv])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
