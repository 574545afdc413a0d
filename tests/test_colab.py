"""The Colab path: every chapter's setup cell, executed in a fresh kernel that believes it runs in
Colab (a fake ``google.colab`` module), clones the repository — redirected by git's ``insteadOf``
to a local clone of this checkout — puts the package on the path and finds the stored results;
the chapter's next cell (its imports) then runs, and the chapter's stored results load."""

import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
from sync_setup_cells import repo_url, setup_cell  # noqa: E402

import colab_check as cc  # noqa: E402

NOTEBOOKS = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
STORED = {
    "00": ("ch0", "dilution_grid"),
    "01": ("ch1", "first_training"),
    "02": ("ch2", "index_posnorm"),
    "03": ("ch3", "alpha_tables"),
    "04": ("ch4", "exhaustive"),
    "05": ("ch5", "summing"),
}


def _code_cells(path):
    nb = nbformat.read(path, as_version=4)
    return [c for c in nb.cells if c.cell_type == "code"]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_setup_cell_is_the_generated_one(path):
    first = _code_cells(path)[0]
    assert first.source.strip() == setup_cell().strip(), (
        f"{path.name}: run scripts/sync_setup_cells.py (the setup cell differs from the template)"
    )
    assert "remove-cell" in first.metadata.get("tags", [])


@pytest.fixture(scope="module")
def mirror(tmp_path_factory):
    """A bare clone of this checkout's HEAD, and git configuration redirecting the book's URL to it."""
    base = tmp_path_factory.mktemp("colab")
    bare = base / "mirror.git"
    subprocess.run(["git", "clone", "--bare", "-q", str(ROOT), str(bare)], check=True)
    cfg = base / "gitconfig"
    cfg.write_text(
        f'[url "{bare.as_uri()}"]\n\tinsteadOf = {repo_url()}\n[protocol "file"]\n\tallow = always\n'
    )
    fake = base / "fake"
    (fake / "google" / "colab").mkdir(parents=True)
    (fake / "google" / "__init__.py").write_text("")
    (fake / "google" / "colab" / "__init__.py").write_text(
        '"""A stand-in for Colab\'s module."""\n'
    )
    return base, cfg, fake


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_setup_cell_runs_in_a_fake_colab(path, mirror, tmp_path):
    from nbclient import NotebookClient

    base, cfg, fake = mirror
    target = tmp_path / "content" / "lengthgen"
    cells = _code_cells(path)
    chapter, cell_name = STORED[path.stem[:2]]
    check = textwrap.dedent(f"""
        import lengthgen, os
        from lengthgen.store import load_stored
        assert lengthgen.__file__.startswith({str(target)!r}), lengthgen.__file__
        assert os.getcwd() == {str(target / "notebooks")!r}
        res = load_stored({chapter!r}, {cell_name!r})
        assert res["path"].startswith({str(target)!r}) and res["provenance"]["scale"] == "full"
    """)
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_code_cell("import google.colab"),
        nbformat.v4.new_code_cell(cells[0].source),
        nbformat.v4.new_code_cell(cells[1].source),
        nbformat.v4.new_code_cell(check),
    ]
    env = {
        "LENGTHGEN_COLAB_DIR": str(target),
        "GIT_CONFIG_GLOBAL": str(cfg),
        "PYTHONPATH": str(fake),
        "LENGTHGEN_ROOT": "",
    }
    old = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    os.environ.pop("LENGTHGEN_ROOT")
    try:
        NotebookClient(
            nb,
            timeout=300,
            kernel_name="python3",
            resources={"metadata": {"path": str(tmp_path)}},
        ).execute()
    finally:
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    assert (target / "results" / chapter / "cells").is_dir()


# ---------------------------------------------------------- the Colab leg's checker
# scripts/colab_check.py (make test-colab) finds each kind of problem it promises
def _nb(*outputs, source="x = 1"):
    return {
        "cells": [
            {
                "cell_type": "code",
                "source": source,
                "metadata": {},
                "outputs": list(outputs),
            }
        ]
    }


def test_a_clean_notebook_has_no_problems():
    ok = {"output_type": "stream", "name": "stderr", "text": "100%|####| 3/3 [00:01]\n"}
    view = {
        "output_type": "display_data",
        "data": {"text/html": '<div class="lg-explorer">', cc.WIDGET_VIEW: {}},
    }
    assert cc.problems(_nb(ok, view)) == []


def test_error_outputs_and_tracebacks_are_found():
    # what IPython sends when a display formatter raises: an error output in a cell that goes on
    err = {
        "output_type": "error",
        "ename": "AttributeError",
        "evalue": "'VBox' object has no attribute",
    }
    tb = {
        "output_type": "stream",
        "name": "stdout",
        "text": "Traceback (most recent call last):\n",
    }
    line = {
        "output_type": "stream",
        "name": "stderr",
        "text": "warn\nConfigError: bad k\n",
    }
    found = cc.problems(_nb(err, tb, line))
    assert len(found) == 3 and "AttributeError" in found[0] and "ConfigError" in found[2]


def test_an_explorer_without_a_widget_view_is_found():
    static = {
        "output_type": "display_data",
        "data": {"text/html": '<div class="lg-explorer">'},
    }
    assert "no widget view" in cc.problems(_nb(static))[0]


def test_checked_outputs_compare_after_sanitizing():
    src = "# NBVAL_CHECK_OUTPUT\nprint(t)"
    stored = _nb(
        {"output_type": "stream", "name": "stdout", "text": "took 3.2 s: 7\n"},
        source=src,
    )
    same = _nb({"output_type": "stream", "name": "stdout", "text": "took 9 s: 7\n"}, source=src)
    other = _nb({"output_type": "stream", "name": "stdout", "text": "took 9 s: 8\n"}, source=src)
    rules = cc.sanitizers(ROOT / "notebooks" / "nbval_sanitize.cfg")
    assert cc.problems(same, stored, rules) == []
    assert "differs" in cc.problems(other, stored, rules)[0]
    assert cc.problems(other, stored, [(re.compile(r"[\d.]+"), "N")]) == []
