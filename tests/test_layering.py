"""The layering rule, checked as a contract: the engine (``engine/``, ``nn/``, ``store``, ``config``)
never imports a chapter, at module level or inside a function (the chapters build on the engine;
code that needs both, such as the benchmark's chapter rows, lives above them)."""

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src" / "lengthgen"
ENGINE = sorted(
    [
        *(SRC / "engine").glob("*.py"),
        *(SRC / "nn").glob("*.py"),
        SRC / "store.py",
        SRC / "config.py",
    ]
)


def _imports(path: Path) -> list[tuple[int, str]]:
    out = []
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            out += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:  # relative: resolve against the module's package
                pkg = path.relative_to(SRC.parent).with_suffix("").parts[: -node.level]
                base = ".".join(pkg + ((node.module,) if node.module else ()))
            else:
                base = node.module or ""
            out += [(node.lineno, f"{base}.{a.name}") for a in node.names] + [
                (node.lineno, base)
            ]
    return out


@pytest.mark.parametrize("path", ENGINE, ids=lambda p: str(p.relative_to(SRC)))
def test_the_engine_never_imports_a_chapter(path):
    bad = [
        f"{path.name}:{line} imports {name}"
        for line, name in _imports(path)
        if name == "lengthgen.chapters" or name.startswith("lengthgen.chapters.")
    ]
    assert not bad, bad


def test_the_contract_sees_imports_inside_functions(tmp_path):
    f = tmp_path / "m.py"
    f.write_text(
        "import os\n\ndef g():\n    from lengthgen.chapters.ch1 import paper\n    import lengthgen.chapters\n"
    )
    names = {n for _, n in _imports(f)}
    assert {
        "lengthgen.chapters.ch1",
        "lengthgen.chapters.ch1.paper",
        "lengthgen.chapters",
    } <= names
