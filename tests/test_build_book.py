"""``make book`` refuses a book with a chapter that fails to execute (scripts/build_book.py), and
generates the ledger pages only after the chapters executed. Built on a two-page book in a temporary
folder (a few seconds per build)."""

import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "build_book.py"


def _book(root: Path, cells: list[str]) -> Path:
    (root / "scripts").mkdir(parents=True)
    (root / "_config.yml").write_text(
        "title: t\nexecute:\n  execute_notebooks: cache\n  allow_errors: false\n"
    )
    (root / "_toc.yml").write_text("format: jb-book\nroot: intro\nchapters:\n  - file: nb\n")
    (root / "intro.md").write_text("# Intro\n\n```{include} book/_generated/results_box.md\n```\n")
    # the pages step of the real book reads the ledgers; this one records what the chapter wrote
    (root / "scripts" / "build_pages.py").write_text(
        "from pathlib import Path\nroot = Path(__file__).resolve().parents[1]\n"
        "gen = root / 'book' / '_generated'\ngen.mkdir(parents=True, exist_ok=True)\n"
        "led = root / 'ledger.txt'\n"
        "(gen / 'results_box.md').write_text(led.read_text() if led.exists() else 'no ledger')\n"
    )
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell("# Chapter")] + [
        nbformat.v4.new_code_cell(c) for c in cells
    ]
    nb.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    nbformat.write(nb, root / "nb.ipynb")
    return root


def _run(root: Path, *args):
    return subprocess.run(
        [sys.executable, str(SCRIPT), "--root", str(root), *args],
        capture_output=True,
        text=True,
        timeout=600,
    )


@pytest.mark.slow
def test_a_failing_chapter_stops_the_build_naming_chapter_and_cell(tmp_path):
    root = _book(
        tmp_path / "book",
        [
            "x = 1",
            "import math\nraise ValueError('boom in cell two')",
            "open('ledger.txt', 'w').write('claims of this build')",
        ],
    )
    res = _run(root)
    assert res.returncode == 1
    err = res.stderr.strip().splitlines()
    assert any(
        "chapter nb failed at cell 2 ('import math')" in ln and "ValueError: boom in cell two" in ln
        for ln in err
    ), res.stderr
    assert "1 chapter(s) failed to execute; the book is not published" in err[-1]
    assert not (root / "ledger.txt").exists()
    assert (
        "claims of this build" not in (root / "book" / "_generated" / "results_box.md").read_text()
    )


@pytest.mark.slow
def test_pages_come_from_the_ledgers_the_build_wrote(tmp_path):
    root = _book(tmp_path / "book", ["open('ledger.txt', 'w').write('claims of this build')"])
    res = _run(root, "-W", "-n", "--keep-going")
    assert res.returncode == 0, res.stdout[-2000:] + res.stderr[-2000:]
    assert "claims of this build" in (root / "_build" / "html" / "intro.html").read_text()


def test_bad_root_is_one_line():
    res = subprocess.run(
        [sys.executable, str(SCRIPT), "--root", "/no/such/folder"],
        capture_output=True,
        text=True,
    )
    assert (
        res.returncode == 2
        and res.stderr.strip().count("\n") == 0
        and "/no/such/folder" in res.stderr
    )
