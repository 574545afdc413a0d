"""The package's size budget (issue 34), checked so that growth shows where it happens: the shared
package a chapter's cells call stays small enough to read.

- everything under ``src/`` (every file, any extension) at most :data:`TOTAL` lines, the
  budget of issue 34; new science fits inside it by cutting elsewhere;
- no file under ``src/`` over :data:`FILE` lines, no function or method over :data:`FUNCTION`;
- no packing: lines wider than :data:`WIDTH` columns (ruff's line length; ruff does not wrap
  strings, comments or ``fmt: off`` tables) at most :data:`WIDE` — a wide line holds what would
  otherwise be several, so their number may only fall;
- nothing merely moved out: the notebooks' code cells at most :data:`NOTEBOOK_CODE` lines in all,
  ``scripts/``, ``benchmarks/``, ``_ext/`` and ``tools/`` together at most :data:`TOOLS`.

A failure names the file or the function and its length."""

import ast
import json
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src"
TOTAL, FILE, FUNCTION = 20_000, 800, 80
NOTEBOOK_CODE, TOOLS = 4_000, 2_500
WIDTH, WIDE = 100, 118


def _files(folder: Path) -> list[Path]:
    """The files under ``folder`` that git tracks or would track (build output such as
    ``*.egg-info`` and ``__pycache__`` is ignored, and so left out)."""
    out = subprocess.run(
        [
            "git",
            "ls-files",
            "--cached",
            "--others",
            "--exclude-standard",
            "-z",
            "--",
            ".",
        ],
        cwd=folder,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return sorted(folder / name for name in out.split("\0") if name and (folder / name).is_file())


def _lines(path: Path) -> int:
    return len(path.read_text(errors="replace").splitlines())


def long_functions(path: Path, limit: int = FUNCTION) -> list[str]:
    """``file:line name (n lines)`` for each function or method of ``path`` longer than ``limit``
    lines, counted from its ``def`` to its last line (its docstring included)."""
    out = []
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            n = node.end_lineno - node.lineno + 1
            if n > limit:
                rel = path.relative_to(ROOT) if path.is_relative_to(ROOT) else path
                out.append(f"{rel}:{node.lineno} {node.name} ({n} lines)")
    return out


def test_src_total_lines():
    total = sum(_lines(p) for p in _files(SRC))
    assert total <= TOTAL, f"src/ holds {total} lines, over the ceiling of {TOTAL}"


def test_no_file_over_the_limit():
    big = [f"{p.relative_to(ROOT)} ({n} lines)" for p in _files(SRC) if (n := _lines(p)) > FILE]
    assert not big, f"files over {FILE} lines: {big}"


def test_no_function_over_the_limit():
    big = [f for p in _files(SRC) if p.suffix == ".py" for f in long_functions(p)]
    assert not big, f"functions over {FUNCTION} lines: {big}"


def test_the_function_count_sees_methods_and_nested_functions(tmp_path):
    body = "\n".join(f"        x{i} = {i}" for i in range(FUNCTION))
    f = tmp_path / "m.py"
    f.write_text(f"class A:\n    def m(self):\n{body}\n\n\ndef g():\n    return 1\n")
    (hit,) = long_functions(f)
    assert hit.endswith(f"m ({FUNCTION + 1} lines)")


def test_nothing_merely_moved_out():
    code = 0
    for nb in sorted((ROOT / "notebooks").glob("*.ipynb")):
        cells = json.loads(nb.read_text())["cells"]
        code += sum(
            len("".join(c["source"]).splitlines()) for c in cells if c["cell_type"] == "code"
        )
    assert code <= NOTEBOOK_CODE, f"the notebooks' code cells hold {code} lines"
    tools = sum(
        _lines(p)
        for d in ("scripts", "benchmarks", "_ext", "tools")
        if (ROOT / d).is_dir()
        for p in _files(ROOT / d)
    )
    assert tools <= TOOLS, f"scripts/, benchmarks/, _ext/ and tools/ hold {tools} lines"


def wide_lines(path: Path, width: int = WIDTH) -> int:
    """How many lines of ``path`` are wider than ``width`` characters."""
    return sum(len(line) > width for line in path.read_text(errors="replace").splitlines())


def test_no_more_wide_lines_than_the_ceiling():
    counts = {p.relative_to(ROOT): n for p in _files(SRC) if (n := wide_lines(p))}
    worst = sorted(counts.items(), key=lambda kv: -kv[1])[:5]
    assert sum(counts.values()) <= WIDE, (
        f"{sum(counts.values())} lines of src/ are wider than {WIDTH} columns (ceiling {WIDE}); "
        f"most in {', '.join(f'{p} ({n})' for p, n in worst)}"
    )


def test_the_width_count_counts_characters_not_bytes(tmp_path):
    f = tmp_path / "m.py"
    f.write_text("x = '" + "≤" * (WIDTH - 6) + "'\n" + "y" * (WIDTH + 1) + "\n")
    assert wide_lines(f) == 1
