"""Execute the book's notebooks ``--jobs`` at a time into the book's execution cache, so that
``make book`` / ``make html`` (Jupyter Book, which executes one notebook after another) find
every chapter executed (``execute_notebooks: cache`` in ``_config.yml``).

    .venv/bin/python scripts/execute_parallel.py [--jobs N] [NOTEBOOK.ipynb ...]

A notebook already in the cache (same code) is skipped. Each runs as Jupyter Book runs it (its
folder as working directory, ``_config.yml``'s timeout, errors not allowed); one that fails is
not cached, so the book build runs it again and reports the chapter and cell as it always does.
Prints each notebook's seconds.
"""

from __future__ import annotations

import argparse
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CACHE = ROOT / "_build" / ".jupyter_cache"  # Jupyter Book 1's execution cache


def _execute(path: str, timeout: int):
    """One notebook executed in place: (path, executed notebook or None, seconds, error)."""
    import nbformat
    from jupyter_cache.executors.utils import single_nb_execution

    nb = nbformat.read(path, as_version=4)
    res = single_nb_execution(nb, cwd=str(Path(path).parent), timeout=timeout, allow_errors=False)
    err = None if res.err is None else f"{type(res.err).__name__}"
    return path, (nb if res.err is None else None), res.time, err


def main(argv: list[str]) -> int:
    import nbformat
    import yaml
    from jupyter_cache import get_cache
    from jupyter_cache.base import CacheBundleIn

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--jobs", type=int, default=2, help="notebooks executed at once")
    ap.add_argument("only", nargs="*", help="these notebooks only (default: every page)")
    args = ap.parse_args(argv)
    timeout = yaml.safe_load((ROOT / "_config.yml").read_text())["execute"]["timeout"]
    toc = (ROOT / "_toc.yml").read_text()
    cache = get_cache(str(CACHE))
    todo = []
    for path in sorted((ROOT / "notebooks").glob("*.ipynb")):
        if path.stem not in toc or (args.only and path.name not in args.only):
            continue  # only the book's pages are executed by its build
        try:
            cache.match_cache_notebook(nbformat.read(path, as_version=4))
        except KeyError:
            todo.append(str(path))
    t0 = time.time()
    with ProcessPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        for path, nb, secs, err in pool.map(_execute, todo, [timeout] * len(todo)):
            name = Path(path).name
            if nb is None:  # the book build runs it again and names the failing cell
                print(f"execute: {name}: {secs:.0f} s, failed ({err})", flush=True)
                continue
            uri = cache.add_nb_to_project(path).uri
            bundle = CacheBundleIn(nb, uri, data={"execution_seconds": secs})
            cache.cache_notebook_bundle(bundle, check_validity=False, overwrite=True)
            print(f"execute: {name}: {secs:.0f} s", flush=True)
    print(f"execute: {len(todo)} notebooks in {time.time() - t0:.0f} s ({args.jobs} at once)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
