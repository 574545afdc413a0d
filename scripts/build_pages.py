"""Generate the parts of the book's pages that come from the claims ledger (run before a build).

Writes ``book/_generated/`` (ignored by git): ``scorecard_body.md`` and ``scorecard.png`` for the
scorecard page, and ``results_box.md`` for the intro's results box. The pages include them, so
they are plain pages (no notebook, no launch button) and always agree with results/claims/.

    .venv/bin/python scripts/build_pages.py
"""
from pathlib import Path

from lengthgen import claims

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    out = ROOT / "book" / "_generated"
    out.mkdir(parents=True, exist_ok=True)
    claims.scorecard_figure(out / "scorecard.png")
    (out / "scorecard_body.md").write_text(claims.scorecard_markdown(figure="_generated/scorecard.png"))
    (out / "results_box.md").write_text(claims.results_box_markdown())
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
