"""Generate the parts of the book's pages that come from the claims ledger (run before a build).

Copies MathJax into ``_mathjax/`` (offline math) and writes ``book/_generated/`` (both ignored by git): ``scorecard_body.md``, ``scorecard.png`` and the ledger's
downloads ``ledger.csv`` and ``ledger.json`` for the scorecard page, ``results_box.md`` for the intro's results box, and ``cost_table.md`` (from the
stored cells' provenance, :mod:`lengthgen.cost`) for the page "What a reproduction costs". The
pages include them, so they are plain pages (no notebook, no launch button) and always agree with results/claims/.

    .venv/bin/python scripts/build_pages.py
"""

import importlib.util
import json
import shutil
from pathlib import Path

from lengthgen import claims, cost, pages

ROOT = Path(__file__).resolve().parents[1]


def copy_mathjax() -> Path:
    """Copy MathJax 3 (from the ``django-static-mathjax`` wheel) into ``_mathjax/mathjax``, which the
    build copies to the site's ``mathjax/`` (``html_extra_path``; not ``_static``, whose every script
    Jupyter Book would load), so the book renders math without a network."""
    spec = importlib.util.find_spec("mathjax")
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit(
            "MathJax is missing: pip install -r requirements.txt (django-static-mathjax)"
        )
    src = Path(next(iter(spec.submodule_search_locations))) / "static" / "mathjax" / "es5"
    dst = ROOT / "_mathjax" / "mathjax"
    if not (dst / "tex-chtml.js").exists():
        shutil.copytree(src, dst, dirs_exist_ok=True)
    return dst


def main() -> None:
    copy_mathjax()
    out = ROOT / "book" / "_generated"
    out.mkdir(parents=True, exist_ok=True)
    pages.scorecard_figure(out / "scorecard.png")
    (out / "ledger.csv").write_text(pages.ledger_csv())
    (out / "ledger.json").write_text(
        json.dumps(claims.load_all(), indent=1, ensure_ascii=False) + "\n"
    )
    (out / "scorecard_body.md").write_text(
        pages.scorecard_markdown(
            figure="_generated/scorecard.png",
            downloads=("_generated/ledger.csv", "_generated/ledger.json"),
        )
    )
    (out / "results_box.md").write_text(pages.results_box_markdown())
    (out / "cost_table.md").write_text(cost.cost_markdown())
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
