"""Build one chapter (its page and its details page) as a small book of its own, outside
``_build``, and measure its pages (``scripts/html_probe.py``): for working on one chapter while
the whole book builds elsewhere.

    .venv/bin/python scripts/build_chapter.py ch4 [--out /tmp/lgbook_ch4] [--no-probe]

The small book links to nothing outside the chapter (its links to the scorecard and other
chapters are reported as warnings and not followed). The notebooks execute at smoke scale and
are cached in the small book's own ``_build``.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent


def chapter_files(chapter: str) -> list[Path]:
    n = int(chapter.removeprefix("ch"))
    files = sorted((ROOT / "notebooks").glob(f"{n:02d}_*.ipynb"))
    if not files:
        raise SystemExit(f"no notebooks for {chapter!r} (notebooks/{n:02d}_*.ipynb)")
    return files


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    from lengthgen.config import CHAPTERS

    ap.add_argument("chapter", choices=CHAPTERS)
    ap.add_argument("--out", default=None)
    ap.add_argument("--no-probe", action="store_true")
    a = ap.parse_args(argv)
    out = Path(a.out or f"/tmp/lgbook_{a.chapter}")
    (out / "notebooks").mkdir(parents=True, exist_ok=True)
    (out / "book").mkdir(exist_ok=True)
    for name in ("_static", "_ext", "_mathjax"):
        if (ROOT / name).exists():
            dst = out / name
            if dst.exists() or dst.is_symlink():
                dst.unlink() if dst.is_symlink() else shutil.rmtree(dst)
            dst.symlink_to(ROOT / name)
    shutil.copy(ROOT / "book" / "references.bib", out / "book" / "references.bib")
    files = chapter_files(a.chapter)
    for f in files:
        shutil.copy(f, out / "notebooks" / f.name)
    cfg = yaml.safe_load((ROOT / "_config.yml").read_text())
    (out / "_config.yml").write_text(yaml.safe_dump(cfg, sort_keys=False))
    main_nb, *rest = [f"notebooks/{f.stem}" for f in files]
    toc = {"format": "jb-book", "root": main_nb}
    if rest:
        toc["chapters"] = [{"file": r} for r in rest]
    (out / "_toc.yml").write_text(yaml.safe_dump(toc, sort_keys=False))
    env = {"LENGTHGEN_ROOT": str(ROOT)}
    import os

    r = subprocess.run(
        [str(BIN / "jupyter-book"), "build", str(out), "--keep-going"],
        env={**os.environ, **env},
        capture_output=True,
        text=True,
    )
    log = out / "build.log"
    log.write_text(r.stdout + r.stderr)
    errs = sorted((out / "_build" / "html" / "reports").rglob("*.err.log"))
    for e in errs:
        print(f"execution failed: {e}")
        print("\n".join(e.read_text(errors="replace").strip().splitlines()[-15:]))
    print(f"build log: {log} (exit {r.returncode})")
    if a.no_probe or errs:
        return 1 if errs else r.returncode
    sys.path.insert(0, str(ROOT / "scripts"))
    import html_probe

    pages = [out / "_build" / "html" / "notebooks" / f"{f.stem}.html" for f in files]
    return html_probe.main([str(p) for p in pages])


if __name__ == "__main__":
    sys.exit(main())
