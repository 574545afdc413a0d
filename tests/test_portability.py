"""Calls that round differently from one call to the next, kept out of the package.

``torch.linalg.lstsq`` on the CPU with its default driver (``gelsy``) returns results that differ
in the last bits between two calls on the same input in one process (seen on the CI machine, and
here with freshly cloned, 64-byte-aligned inputs; ``gelsd``, ``pinv``, ``solve``, ``svdvals`` and
``eigh`` gave one result in forty calls). A least-squares fit in the package uses
:func:`lengthgen.stats.plane_fit` (or names a deterministic driver)."""

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SOURCES = sorted([*(ROOT / "src" / "lengthgen").rglob("*.py"), *(ROOT / "scripts").glob("*.py")])


def _default_lstsq_calls(path: Path) -> list[int]:
    out = []
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "lstsq"
            and isinstance(node.func.value, ast.Attribute)
            and node.func.value.attr == "linalg"
            and isinstance(node.func.value.value, ast.Name)
            and node.func.value.value.id == "torch"
            and not any(k.arg == "driver" for k in node.keywords)
        ):
            out.append(node.lineno)
    return out


def test_no_default_driver_least_squares():
    bad = {str(p.relative_to(ROOT)): _default_lstsq_calls(p) for p in SOURCES}
    assert not {k: v for k, v in bad.items() if v}, "torch.linalg.lstsq without driver="


def test_the_check_sees_a_default_call(tmp_path):
    p = tmp_path / "m.py"
    p.write_text(
        "import torch\ntorch.linalg.lstsq(a, b)\ntorch.linalg.lstsq(a, b, driver='gelsd')\n"
    )
    assert _default_lstsq_calls(p) == [2]
