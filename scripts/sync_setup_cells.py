"""Write the Colab setup cell of every chapter from one template and ``_config.yml``'s repository URL.

The cell also imports the page code (:mod:`lengthgen.pages`) everywhere, so the claims tables a
notebook shows draw as in the book.

The repository address lives in ``_config.yml`` only; this script copies it into each notebook's
first code cell (tagged ``remove-cell``, so the book does not show it). ``tests/test_colab.py``
checks that every notebook's cell equals :func:`setup_cell` and executes it with a fake Colab.

    .venv/bin/python scripts/sync_setup_cells.py      # then: .venv/bin/jupytext --sync notebooks/*.md
"""

import re
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]

TEMPLATE = """# Colab setup (runs only inside Google Colab): fetch the book's code and stored results.
import sys

if "google.colab" in sys.modules:
    import os, subprocess

    REPO_URL = "{url}"
    ROOT = os.environ.get("LENGTHGEN_COLAB_DIR", "/content/lengthgen")
    if not os.path.isdir(ROOT):
        subprocess.run(["git", "clone", "--depth", "1", REPO_URL, ROOT], check=True)
    sys.path.insert(0, os.path.join(ROOT, "src"))  # no install: Colab's packages serve
    os.environ["LENGTHGEN_ROOT"] = ROOT
    os.chdir(os.path.join(ROOT, "notebooks"))

import lengthgen.pages  # the page code: this notebook's claims tables draw as in the book"""


def repo_url() -> str:
    return yaml.safe_load((ROOT / "_config.yml").read_text())["repository"]["url"]


def setup_cell() -> str:
    return TEMPLATE.format(url=repo_url())


CELL = re.compile(
    r"```\{code-cell\} ipython3\n:tags: \[remove-cell\]\n\n# Colab setup.*?\n```", re.S
)


def main(paths) -> int:
    new = "```{code-cell} ipython3\n:tags: [remove-cell]\n\n" + setup_cell() + "\n```"
    for p in map(Path, paths):
        text = p.read_text()
        out, n = CELL.subn(lambda m: new, text, count=1)
        if n != 1:
            print(f"{p}: no Colab setup cell found", file=sys.stderr)
            return 1
        if out != text:
            p.write_text(out)
            print(f"updated {p}")
    return 0


if __name__ == "__main__":
    sys.exit(
        main(sys.argv[1:] or sorted(str(p) for p in (ROOT / "notebooks").glob("[0-9][0-9]_*.md")))
    )
