import json
import subprocess
import sys

import pytest

from lengthgen import cli


def run(*args):
    return subprocess.run([sys.executable, "-m", "lengthgen", *args], capture_output=True, text=True, timeout=300)


def test_help_lists_subcommands():
    r = run("--help")
    assert r.returncode == 0
    for sub in ("reproduce", "claims", "bench"):
        assert sub in r.stdout


@pytest.mark.parametrize("args, needle", [
    (["reproduce", "ch9"], "invalid choice: 'ch9'"),
    (["reproduce", "ch0", "--scale", "huge"], "invalid choice: 'huge'"),
    (["reproduce", "ch0", "--device", "tpu"], "invalid choice: 'tpu'"),
    (["frobnicate"], "invalid choice: 'frobnicate'"),
])
def test_bad_arguments(args, needle):
    r = run(*args)
    assert r.returncode == 2
    assert needle in r.stderr
    assert "choose from" in r.stderr


def test_bad_env_scale(monkeypatch, capsys):
    monkeypatch.setenv("LENGTHGEN_SCALE", "medium")
    assert cli.main(["reproduce", "ch0"]) == 2
    assert "'medium'" in capsys.readouterr().err


def test_reproduce_ch0(tmp_path):
    from lengthgen.store import load_result

    assert cli.main(["reproduce", "ch0", "--out", str(tmp_path), "--device", "cpu"]) == 0
    res = load_result(tmp_path / "dilution_grid.json")
    assert res["provenance"]["scale"] == "smoke" and res["data"]["max_abs_error"] < 1e5 * 2.3e-16


def test_claims_json(capsys, tmp_path, monkeypatch):
    from lengthgen.claims import Ledger

    (tmp_path / "_config.yml").write_text("")
    monkeypatch.setenv("LENGTHGEN_ROOT", str(tmp_path))
    led = Ledger("ch0", paper="p")
    led.check("ch0.a", location="l", statement="s", paper_value=1, our_value=1, comparison="equal")
    led.save()
    assert cli.main(["claims", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert rows[0]["id"] == "ch0.a"
    for key in ("id", "chapter", "status", "paper_value", "our_value", "scale", "source"):
        assert key in rows[0]
    assert cli.main(["claims"]) == 0
    assert "ch0.a" in capsys.readouterr().out


def test_only_names_experiments(capsys):
    assert cli.main(["reproduce", "ch2", "--only", "index_posnorm,frobnicate", "--out", "/nonexistent/x"]) == 2
    err = capsys.readouterr().err
    assert "'frobnicate'" in err and "index_posnorm" in err
    assert cli.main(["reproduce", "ch0", "--only", "x"]) == 2
    assert "--only is not supported for chapter ch0" in capsys.readouterr().err
