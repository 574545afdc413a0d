"""Structural checks of the chapters: pairs exist, Colab setup cells agree with _config.yml, no stray outputs."""

import json
import re
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
SOURCES = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.md"))


def repo_url():
    return yaml.safe_load((ROOT / "_config.yml").read_text())["repository"]["url"]


def test_there_are_chapters():
    assert SOURCES, "no notebooks/NN_name.md chapters found"


@pytest.mark.parametrize("md", SOURCES, ids=lambda p: p.name)
def test_pair_and_setup_cell(md):
    nb_path = md.with_suffix(".ipynb")
    assert nb_path.exists(), f"{md.name} has no paired .ipynb"
    nb = json.loads(nb_path.read_text())
    code = [c for c in nb["cells"] if c["cell_type"] == "code"]
    first = "".join(code[0]["source"])
    assert '"google.colab" in sys.modules' in first, (
        "first code cell must be the Colab-only setup cell"
    )
    urls = re.findall(r'REPO_URL = "([^"]+)"', first)
    assert urls == [repo_url()], f"setup cell installs from {urls}, _config.yml says {repo_url()}"
    for cell in code:
        src = "".join(cell["source"])
        tags = cell.get("metadata", {}).get("tags", [])
        if "NBVAL_CHECK_OUTPUT" not in src and "nbval-check-output" not in tags:
            assert not cell.get("outputs"), (
                f"{nb_path.name}: stored outputs in a cell that nbval does not check"
            )
    assert f"notebooks/{md.stem}" in (ROOT / "_toc.yml").read_text(), (
        f"{md.stem} is not in _toc.yml"
    )


def test_setup_cell_is_inert_outside_colab():
    import sys

    md = SOURCES[0]
    nb = json.loads(md.with_suffix(".ipynb").read_text())
    first = "".join(next(c for c in nb["cells"] if c["cell_type"] == "code")["source"])
    assert "google.colab" not in sys.modules
    exec(compile(first, "setup-cell", "exec"), {})  # must do nothing here (no clone, no install)


@pytest.mark.parametrize("md", SOURCES, ids=lambda p: p.name)
def test_visible_code_fits_the_column(md):
    """Code a reader sees (cells not tagged remove-input / remove-cell) is at most 88 columns wide,
    and no visible cell calls the ledger (bookkeeping is hidden)."""
    nb = json.loads(md.with_suffix(".ipynb").read_text())
    for cell in nb["cells"]:
        if cell["cell_type"] != "code":
            continue
        tags = set(cell.get("metadata", {}).get("tags", []))
        if tags & {"remove-input", "remove-cell"}:
            continue
        src = "".join(cell["source"])
        wide = [line for line in src.splitlines() if len(line) > 88]
        assert not wide, f"{md.name}: visible code wider than 88 columns: {wide[0][:100]!r}"
        assert "ledger." not in src or src.strip().startswith("ledger = "), (
            f"{md.name}: a visible cell calls the ledger: {src[:80]!r}"
        )


CHAPTERS_MD = [p for p in SOURCES if not p.stem.endswith("_details")]


@pytest.mark.parametrize("md", CHAPTERS_MD, ids=lambda p: p.name)
def test_chapter_opens_with_its_results_box_and_a_short_abstract(md):
    """After the title: the Colab cell, the results box, then an abstract of at most 150 words
    (no changelog)."""
    text = md.read_text()
    body = text.split("\n# ", 1)[1]
    cells = re.findall(r"```\{code-cell\}[^\n]*\n(.*?)```", body, re.S)
    assert 'results_box("ch' in cells[1], f"{md.name}: the second cell is not the results box"
    m = re.search(r"\*\*Abstract\.\*\*(.*?)(\n\n|\n```)", body, re.S)
    assert m, f"{md.name} has no **Abstract.** paragraph"
    assert body.index("**Abstract.**") > body.index('results_box("ch')
    words = len(re.sub(r"\{cite\}`[^`]*`", "cite", m.group(1)).split())
    assert words <= 150, f"{md.name}: the abstract has {words} words (at most 150)"


@pytest.mark.parametrize("md", SOURCES, ids=lambda p: p.name)
def test_visible_code_cells_are_short(md):
    """A reader sees the short calls that build a construction or run an experiment: a visible
    code cell has at most 15 lines (the rest is hidden: hide-input, remove-input, remove-cell)."""
    nb = json.loads(md.with_suffix(".ipynb").read_text())
    for cell in nb["cells"]:
        if cell["cell_type"] != "code":
            continue
        tags = set(cell.get("metadata", {}).get("tags", []))
        if tags & {"remove-input", "remove-cell", "hide-input", "hide-cell"}:
            continue
        lines = [ln for ln in "".join(cell["source"]).splitlines()]
        assert len(lines) <= 15, (
            f"{md.name}: a visible cell has {len(lines)} lines: {lines[0][:70]!r}"
        )


@pytest.mark.parametrize("md", CHAPTERS_MD, ids=lambda p: p.name)
def test_every_chapter_shows_some_code(md):
    nb = json.loads(md.with_suffix(".ipynb").read_text())
    visible = [
        c
        for c in nb["cells"]
        if c["cell_type"] == "code"
        and not set(c.get("metadata", {}).get("tags", []))
        & {"remove-input", "remove-cell", "hide-input", "hide-cell"}
    ]
    assert visible, f"{md.name} shows no code"
