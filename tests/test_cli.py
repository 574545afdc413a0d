import json
import subprocess
import sys

import pytest
from types import SimpleNamespace

from lengthgen import cli


@pytest.fixture
def run(capsys):
    """``python -m lengthgen ARGS`` in this process: its exit code, stdout and stderr (argparse's
    exits included); ``test_help_lists_subcommands`` runs the real entry point once."""

    def call(*args):
        try:
            code = cli.main(list(args))
        except SystemExit as exc:
            code = exc.code
        out = capsys.readouterr()
        return SimpleNamespace(returncode=code, stdout=out.out, stderr=out.err)

    return call


def test_help_lists_subcommands():
    r = subprocess.run(
        [sys.executable, "-m", "lengthgen", "--help"], capture_output=True, text=True, timeout=300
    )
    assert r.returncode == 0
    for sub in ("reproduce", "claims", "bench"):
        assert sub in r.stdout


@pytest.mark.parametrize(
    "args, needle",
    [
        (["reproduce", "ch9"], "invalid choice: 'ch9'"),
        (["reproduce", "ch0", "--scale", "huge"], "invalid choice: 'huge'"),
        (["reproduce", "ch0", "--device", "tpu"], "invalid choice: 'tpu'"),
        (["frobnicate"], "invalid choice: 'frobnicate'"),
    ],
)
def test_bad_arguments(run, args, needle):
    r = run(*args)
    assert r.returncode == 2
    assert needle in r.stderr
    assert "choose from" in r.stderr


def test_bad_env_scale(monkeypatch, capsys):
    monkeypatch.setenv("LENGTHGEN_SCALE", "medium")
    assert cli.main(["reproduce", "ch0"]) == 2
    assert "'medium'" in capsys.readouterr().err


def test_reproduce_ch0(tmp_path):
    from lengthgen.store import load_stored
    from lengthgen.chapters.ch0.experiments import GRID_SCHEMA

    assert cli.main(["reproduce", "ch0", "--out", str(tmp_path), "--device", "cpu"]) == 0
    res = load_stored(
        "ch0",
        "dilution_grid",
        folder=tmp_path / "cells",
        scale="smoke",
        schema=GRID_SCHEMA,
    )
    assert res["provenance"]["scale"] == "smoke" and res["data"]["max_abs_error"] < 1e5 * 2.3e-16
    assert res["provenance"]["device"] == "cpu" and "cpu_time_s" in res["provenance"]


def test_reproduce_refresh_unmeasured(tmp_path):
    """``--refresh-unmeasured`` re-runs a stored cell that has no CPU time and records what it replaced."""
    import json

    assert cli.main(["reproduce", "ch0", "--out", str(tmp_path), "--device", "cpu"]) == 0
    path = tmp_path / "cells" / "dilution_grid.json"
    obj = json.loads(path.read_text())
    obj["provenance"].pop("cpu_time_s")
    path.write_text(json.dumps(obj))
    assert (
        cli.main(
            [
                "reproduce",
                "ch0",
                "--out",
                str(tmp_path),
                "--device",
                "cpu",
                "--refresh-unmeasured",
            ]
        )
        == 0
    )
    prov = json.loads(path.read_text())["provenance"]
    assert "cpu_time_s" in prov and prov["refreshed"]["max_abs_difference"] == 0.0


def test_smoke_default_out_leaves_results_alone(monkeypatch, tmp_path):
    from lengthgen.engine.runs import default_out
    from lengthgen.store import results_dir

    assert default_out("ch4", "full") == results_dir() / "ch4"
    assert default_out("ch4", "smoke").parts[-3:] == ("_build", "smoke-results", "ch4")


@pytest.mark.parametrize(
    "setup, needle",
    [
        (lambda t: (t / "f").write_text("x") and str(t / "f"), "is an existing file"),
        (
            lambda t: (t / "g").write_text("x") and str(t / "g" / "sub"),
            "is under the file",
        ),
    ],
)
def test_bad_out_is_one_line_before_work(run, tmp_path, setup, needle):
    r = run("reproduce", "ch0", "--out", setup(tmp_path))
    assert r.returncode == 2 and needle in r.stderr
    assert "Traceback" not in r.stderr and len(r.stderr.strip().splitlines()) == 1


def test_scale_conflict_and_corrupt_store_are_one_line(run, tmp_path):
    assert run("reproduce", "ch0", "--out", str(tmp_path)).returncode == 0
    r = run("reproduce", "ch0", "--out", str(tmp_path), "--scale", "full", "--allow-dirty")
    assert (
        r.returncode == 2
        and "holds a result of another scale" in r.stderr
        and "Traceback" not in r.stderr
    )
    (tmp_path / "cells" / "dilution_grid.json").write_text("{oops")
    r = run("reproduce", "ch0", "--out", str(tmp_path))
    assert (
        r.returncode == 2 and "corrupt result file" in r.stderr and "dilution_grid.json" in r.stderr
    )
    assert "Traceback" not in r.stderr


@pytest.mark.parametrize(
    "args, needle",
    [
        (["--workers", "0"], "--workers must be an integer >= 1"),
        (["--budget-minutes", "-1"], "--budget-minutes must be >= 0"),
        (
            ["--executor", "process", "--scheduler", "tcp://x:1"],
            "--scheduler needs --executor dask",
        ),
        (["--only", "nosuchcell"], "matches no cell of ch0"),
    ],
)
def test_bad_run_options(run, tmp_path, args, needle):
    r = run("reproduce", "ch0", "--out", str(tmp_path), *args)
    assert r.returncode == 2 and needle in r.stderr and "Traceback" not in r.stderr


def test_claims_json_table_and_check(capsys):
    assert cli.main(["claims", "--json", "--chapter", "ch0"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert rows[0]["id"].startswith("ch0.")
    for key in (
        "id",
        "chapter",
        "group",
        "status",
        "check",
        "protocol",
        "paper_value",
        "our_value",
        "statement",
    ):
        assert key in rows[0]
    assert cli.main(["claims", "--chapter", "ch0"]) == 0
    out = capsys.readouterr().out
    assert "ch0.eq1.closed_form" in out and "self-check" in out
    assert cli.main(["claims", "--check", "--chapter", "ch0"]) == 0
    assert "0 problem(s)" in capsys.readouterr().out


def test_merge_command(tmp_path, capsys):
    assert cli.main(["reproduce", "ch0", "--out", str(tmp_path / "a"), "--device", "cpu"]) == 0
    assert (
        cli.main(
            [
                "merge",
                "ch0",
                str(tmp_path / "a"),
                "--scale",
                "smoke",
                "--out",
                str(tmp_path / "b"),
            ]
        )
        == 0
    )
    assert (
        "took 1 cells" in capsys.readouterr().out
        and (tmp_path / "b" / "cells" / "dilution_grid.json").exists()
    )
    assert (
        cli.main(
            [
                "merge",
                "ch0",
                str(tmp_path / "a"),
                "--scale",
                "smoke",
                "--out",
                str(tmp_path / "b"),
            ]
        )
        == 0
    )
    assert "kept 1 already stored" in capsys.readouterr().out
    assert (
        cli.main(
            [
                "merge",
                "ch0",
                str(tmp_path / "nothing"),
                "--scale",
                "smoke",
                "--out",
                str(tmp_path / "b"),
            ]
        )
        == 2
    )
    err = capsys.readouterr().err.strip()
    assert err.startswith("error:") and "nothing" in err and "\n" not in err
