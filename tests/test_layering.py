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
            out += [(node.lineno, f"{base}.{a.name}") for a in node.names] + [(node.lineno, base)]
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


#: the ledger core: it declares and checks claims; the pages that draw them import it, not back
LEDGER_CORE = SRC / "claims.py"
UPWARD = ("lengthgen.chapters", "lengthgen.cost", "lengthgen.pages")


def _imports_any(path: Path, prefixes) -> list[str]:
    return [
        f"{path.name}:{line} imports {name}"
        for line, name in _imports(path)
        if any(name == p or name.startswith(p + ".") for p in prefixes)
    ]


def test_the_ledger_core_imports_no_chapter_no_cost_and_no_page_code():
    bad = _imports_any(LEDGER_CORE, UPWARD)
    assert not bad, bad


CHAPTER_FILES = sorted(p for ch in range(5) for p in (SRC / "chapters" / f"ch{ch}").rglob("*.py"))


@pytest.mark.parametrize("path", CHAPTER_FILES, ids=lambda p: str(p.relative_to(SRC)))
def test_chapters_0_to_4_never_import_one_another(path):
    """Chapter 5 (across the papers) may import them all; chapters 0-4 stand alone."""
    mine = path.relative_to(SRC / "chapters").parts[0]
    others = [f"lengthgen.chapters.ch{n}" for n in range(6) if f"ch{n}" != mine]
    bad = _imports_any(path, others)
    assert not bad, bad


def _literal_strings() -> set[str]:
    out = set()
    for path in (SRC / "chapters").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                out.add(node.value)
    return out


def test_every_ledger_claim_id_is_a_literal_string_in_the_chapters():
    """Every id of ``results/claims/*.json`` is grep-able where it is declared: it appears as a
    quoted string (not assembled by an f-string or concatenation) under ``chapters/``."""
    import json

    ids = [
        r["id"]
        for f in sorted((SRC.parents[1] / "results" / "claims").glob("*.json"))
        for r in json.loads(f.read_text())
    ]
    assert ids
    literal = _literal_strings()
    missing = [i for i in ids if i not in literal]
    assert not missing, f"{len(missing)} ids not literal, e.g. {missing[:5]}"
