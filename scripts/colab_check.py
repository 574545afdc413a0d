"""Execute notebooks as a Colab user runs them and check what the reader sees
(``make test-colab``: scripts/test_colab.sh runs this inside a venv of Colab's versions).

    python scripts/colab_check.py --clone DIR [--jobs N] NOTEBOOK.ipynb ...
    python scripts/colab_check.py --executed _build/jupyter_execute/notebooks/*.ipynb

(``--executed``: only check notebooks already executed, e.g. by the book build, ``make test``.)

Each notebook of the clone ``DIR`` (the repository as Colab's setup cell finds it after its
``git clone``) runs in a fresh kernel of this Python, from its own first cell: a stand-in
``google.colab`` module is imported when the kernel starts (as Colab's kernel does), the package is
not installed and ``PYTHONPATH`` is cleared, so the setup cell must put ``DIR/src`` on the path.
A notebook fails on

* an error output: a cell that raised, or a traceback a display formatter printed while the cell
  went on (IPython reports it as an error output and the cell still succeeds);
* a traceback or an ``...Error:`` line in a stream;
* an explorer (``lg-explorer`` HTML) whose output carries no widget view (no live sliders);
* a cell marked for nbval (``# NBVAL_CHECK_OUTPUT`` or the ``nbval-check-output`` tag) whose text
  output differs from the stored one after ``notebooks/nbval_sanitize.cfg``'s replacements.

Each notebook's time and problems are printed; the exit status is 1 if any notebook failed.
"""

from __future__ import annotations

import argparse
import configparser
import os
import re
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
ERROR_LINE = re.compile(r"^Traceback \(most recent call last\)|^\w*(Error|Exception): ", re.M)
STAND_IN = (
    "import sys, types\n"
    "google = types.ModuleType('google')\n"
    "google.colab = types.ModuleType('google.colab')  # a stand-in: Colab imports it at start\n"
    "sys.modules.update({'google': google, 'google.colab': google.colab})\n"
)


def _text(output: dict) -> str:
    """The text a reader sees of one output (a stream's text or the plain-text data)."""
    if output.get("output_type") == "stream":
        return "".join(output.get("text", ""))
    return "".join(output.get("data", {}).get("text/plain", ""))


def _checked(cell: dict) -> bool:
    src = "".join(cell.get("source", ""))
    return "NBVAL_CHECK_OUTPUT" in src or "nbval-check-output" in cell.get("metadata", {}).get(
        "tags", []
    )


def sanitizers(cfg: Path) -> list[tuple[re.Pattern, str]]:
    """nbval's sanitize file as (regex, replacement) pairs, in file order."""
    parser = configparser.ConfigParser()
    parser.read(cfg)
    return [(re.compile(parser[s]["regex"]), parser[s]["replace"]) for s in parser.sections()]


def problems(executed: dict, stored: dict | None = None, sanitize=()) -> list[str]:
    """One line per problem in an executed notebook (JSON dict); ``stored`` is the notebook as
    committed, whose marked cells' stored outputs the executed ones must reproduce."""
    out = []
    stored_cells = (stored or {}).get("cells", [])
    for i, cell in enumerate(executed.get("cells", [])):
        if cell.get("cell_type") != "code":
            continue
        first = "".join(cell.get("source", "")).strip().split("\n")[0][:60]
        where = f"cell {i} ({first!r})"
        for o in cell.get("outputs", []):
            if o.get("output_type") == "error":
                out.append(f"{where}: error output {o.get('ename')}: {o.get('evalue', '')[:200]}")
            elif o.get("output_type") == "stream" and ERROR_LINE.search(_text(o)):
                line = ERROR_LINE.search(_text(o)).group(0)
                out.append(f"{where}: a traceback or error in its {o.get('name')} stream ({line})")
            html = "".join(o.get("data", {}).get("text/html", ""))
            if "lg-explorer" in html and WIDGET_VIEW not in o.get("data", {}):
                out.append(f"{where}: an explorer with no widget view (no live sliders)")
        ref = stored_cells[i].get("outputs") if i < len(stored_cells) else None
        if _checked(cell) and ref:  # as nbval: a cell stored without outputs is not compared

            def clean(outputs):
                text = "".join(_text(o) for o in outputs)
                for rx, rep in sanitize:
                    text = rx.sub(rep, text)
                return text

            if clean(cell.get("outputs", [])) != clean(ref):
                out.append(f"{where}: output differs from the stored one (nbval check)")
    return out


def _kernel_env(tmp: Path, clone: Path) -> None:
    """The kernel's environment: the stand-in google.colab imported at start (IPython startup
    file), a kernel spec for this Python, no PYTHONPATH, the clone where the setup cell looks."""
    startup = tmp / "ipython" / "profile_default" / "startup"
    startup.mkdir(parents=True)
    (startup / "00-google-colab.py").write_text(STAND_IN)
    spec = tmp / "jupyter" / "kernels" / "colab"
    spec.mkdir(parents=True)
    argv = [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"]
    (spec / "kernel.json").write_text(
        '{"argv": %s, "display_name": "colab", "language": "python"}' % str(argv).replace("'", '"')
    )
    os.environ.pop("PYTHONPATH", None)
    os.environ.update(
        IPYTHONDIR=str(tmp / "ipython"),
        JUPYTER_PATH=str(tmp / "jupyter"),
        LENGTHGEN_COLAB_DIR=str(clone),
        PYDEVD_DISABLE_FILE_VALIDATION="1",  # quiets ipykernel 6.17's debugger warning
    )


def run(path: str, clone: str) -> tuple[str, float, list[str]]:
    """Execute one notebook of the clone as Colab does; its name, seconds and problems."""
    import nbformat
    from nbclient import NotebookClient
    from nbclient.exceptions import CellExecutionError

    clone_p = Path(clone)
    nb_path = clone_p / "notebooks" / Path(path).name
    stored = nbformat.read(nb_path, as_version=4)
    nb = nbformat.read(nb_path, as_version=4)
    t0 = time.time()
    with tempfile.TemporaryDirectory() as tmp:
        _kernel_env(Path(tmp), clone_p)
        content = Path(tmp) / "content"  # Colab's working folder; the setup cell leaves it
        content.mkdir()
        client = NotebookClient(
            nb,
            kernel_name="colab",
            timeout=900,
            resources={"metadata": {"path": str(content)}},
        )
        try:
            client.execute()
            found = []
        except CellExecutionError as e:
            found = [f"execution stopped: {str(e).strip().splitlines()[-1][:200]}"]
    cfg = clone_p / "notebooks" / "nbval_sanitize.cfg"
    found += problems(nb, stored, sanitizers(cfg) if cfg.exists() else ())
    return Path(path).name, time.time() - t0, list(dict.fromkeys(found))


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--clone", help="the repository as Colab's setup cell finds it")
    ap.add_argument("--executed", action="store_true", help="check, do not execute")
    ap.add_argument("--jobs", type=int, default=2, help="notebooks executed at once")
    ap.add_argument("notebooks", nargs="+")
    args = ap.parse_args(argv)
    failed = 0
    if args.executed:
        import nbformat

        root = Path(__file__).resolve().parents[1]
        rules = sanitizers(root / "notebooks" / "nbval_sanitize.cfg")
        for path in map(Path, args.notebooks):
            stored = nbformat.read(root / "notebooks" / path.name, as_version=4)
            found = problems(nbformat.read(path, as_version=4), stored, rules)
            failed += bool(found)
            print(f"executed: {path.name}: {'FAILED' if found else 'ok'}")
            print("".join(f"executed:   {line}\n" for line in found), end="")
        return 1 if failed else 0
    with ProcessPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        jobs = [pool.submit(run, nb, args.clone) for nb in args.notebooks]
        for job in jobs:
            name, secs, found = job.result()
            failed += bool(found)
            print(
                f"colab: {name}: {secs:.0f} s, {'FAILED' if found else 'ok'}",
                flush=True,
            )
            for line in found:
                print(f"colab:   {line}", flush=True)
    print(f"colab: {len(jobs) - failed} of {len(jobs)} notebooks ran clean")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
