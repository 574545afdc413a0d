"""Bad input to the runs facility and its commands: every failure is one line naming the bad path or
value, with a non-zero exit; a failed merge or run changes nothing stored and leaves no empty folder;
a Dask run whose workers are gone stops instead of waiting forever."""

import concurrent.futures as cf
import errno
import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from helpers import copy_results, edit_cell
from lengthgen import cli, store
from lengthgen.config import ConfigError
from lengthgen.engine.runs import Cell, RunError, run_cells
from lengthgen.store import ResultFileError


# module-level cell functions
def square(n):
    return {"value": n * n}


def cells3():
    return [Cell(f"sq{n}", square, {"n": n}, seeds=(0,)) for n in (1, 2, 3)]


def one_line_error(capsys, *needles):
    """The stderr of the last command (after a progress bar's carriage returns): one line starting
    with ``error:``, holding every needle."""
    err = capsys.readouterr().err.rsplit("\r", 1)[-1].strip()
    assert err.startswith("error:") and "\n" not in err and "Traceback" not in err, err
    for needle in needles:
        assert str(needle) in err, (needle, err)
    return err


def snapshot(folder: Path) -> dict:
    """``{relative path: (bytes, mtime_ns)}`` of every file under ``folder``."""
    return {
        str(p.relative_to(folder)): (p.read_bytes(), p.stat().st_mtime_ns)
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


@pytest.fixture
def ch0_run(tmp_path):
    """A smoke run of chapter 0 written with ``--out`` (its ``cells/`` holds ``dilution_grid.json``)."""
    src = tmp_path / "a"
    assert cli.main(["reproduce", "ch0", "--out", str(src), "--device", "cpu"]) == 0
    return src


def merge_ch0(src, dst):
    return cli.main(["merge", "ch0", str(src), "--scale", "smoke", "--out", str(dst)])


def _deny_writes(monkeypatch):
    """Make every stored write fail as it does in a folder without write permission."""

    def denied(path, obj):
        raise PermissionError(
            errno.EACCES,
            "Permission denied",
            str(Path(path).parent / f".{Path(path).name}.tmp"),
        )

    monkeypatch.setattr(store, "atomic_write_json", denied)


# --------------------------------------------------------------------------- 1. unwritable cells/
def test_merge_into_unwritable_cells_is_one_line(ch0_run, tmp_path, monkeypatch, capsys):
    dst = tmp_path / "b"
    (dst / "cells").mkdir(parents=True)
    capsys.readouterr()
    _deny_writes(monkeypatch)
    assert merge_ch0(ch0_run, dst) == 2
    one_line_error(capsys, dst / "cells", "Permission denied", "nothing was merged")
    assert list((dst / "cells").iterdir()) == []


@pytest.mark.skipif(
    os.geteuid() == 0,
    reason="root writes into read-only folders; the monkeypatched variant runs",
)
def test_merge_into_read_only_cells_is_one_line(
    ch0_run, tmp_path, capsys
):  # pragma: no cover - CI runs as root
    dst = tmp_path / "b"
    (dst / "cells").mkdir(parents=True)
    os.chmod(dst / "cells", 0o500)
    try:
        capsys.readouterr()
        assert merge_ch0(ch0_run, dst) == 2
        one_line_error(capsys, dst / "cells")
    finally:
        os.chmod(dst / "cells", 0o700)


def test_merge_write_failure_puts_back_what_was_written(tmp_path, monkeypatch):
    """A write failing after others succeeded: the cells already written are put back (bytes and
    times), the new ones removed; the error names the destination."""
    src, dst = tmp_path / "src", tmp_path / "dst"
    run_cells(cells3(), src, scale="smoke", progress=False)
    run_cells(cells3()[:1], dst, scale="smoke", progress=False)
    obj = json.loads((dst / "sq1.json").read_text())  # sq1 unmeasured: the merge replaces it
    obj["provenance"].pop("cpu_time_s")
    (dst / "sq1.json").write_text(json.dumps(obj))
    before = snapshot(dst)
    real, calls = store.save_result, []  # the store writes the cells

    def flaky(path, data, prov):
        calls.append(path)
        if len(calls) == 3:
            raise OSError(errno.ENOSPC, "No space left on device", str(path))
        return real(path, data, prov)

    monkeypatch.setattr(store, "save_result", flaky)
    with pytest.raises(
        ConfigError,
        match=f"cannot write the merged cells into {dst}: No space left on device",
    ):
        store.merge_cells(src, dst, cells3(), "smoke")
    assert len(calls) == 3 and snapshot(dst) == before
    monkeypatch.setattr(store, "save_result", real)
    assert store.merge_cells(src, dst, cells3(), "smoke")["taken"] == [
        "sq1",
        "sq2",
        "sq3",
    ]


def test_oserror_anywhere_is_one_line(tmp_path, monkeypatch, capsys):
    """The last resort of ``main``: an OS error the commands did not foresee is one line, exit 1."""

    def broken(args):
        raise PermissionError(errno.EACCES, "Permission denied", str(tmp_path / "x"))

    monkeypatch.setattr(cli, "_cost", broken)
    assert cli.main(["cost"]) == 1
    one_line_error(capsys, "Permission denied", tmp_path / "x")


# --------------------------------------------------------------------------- 2. a folder where a cell file should be
def test_folder_in_place_of_a_source_cell(ch0_run, tmp_path, capsys):
    path = ch0_run / "cells" / "dilution_grid.json"
    path.unlink()
    path.mkdir()
    capsys.readouterr()
    assert merge_ch0(ch0_run, tmp_path / "b") == 2
    one_line_error(capsys, path, "is a folder")
    assert not (tmp_path / "b").exists()  # the merge created it, and it stayed empty


def test_folder_in_place_of_a_destination_cell(ch0_run, tmp_path, capsys):
    path = tmp_path / "b" / "cells" / "dilution_grid.json"
    path.mkdir(parents=True)
    capsys.readouterr()
    assert merge_ch0(ch0_run, tmp_path / "b") == 2
    one_line_error(capsys, path, "is a folder")
    assert path.is_dir()
    assert cli.main(["reproduce", "ch0", "--out", str(tmp_path / "b"), "--device", "cpu"]) == 2
    one_line_error(capsys, path, "is a folder")


def test_folder_in_place_of_a_cell_in_the_api(tmp_path):
    (tmp_path / "sq2.json").mkdir()
    for call in (
        lambda: run_cells(cells3(), tmp_path, scale="smoke", progress=False),
        lambda: store.load_cell(tmp_path, "sq2"),
        lambda: store.merge_cells(tmp_path, tmp_path / "dst", cells3(), "smoke"),
    ):
        with pytest.raises(
            ResultFileError,
            match=r"sq2\.json is a folder where a result file should be",
        ):
            call()


# --------------------------------------------------------------------------- 3. schema check, all or nothing
def test_merge_checks_the_schema_and_is_all_or_nothing(tmp_path, capsys):
    """A source cell failing its chapter's schema stops the merge before anything is written: the
    store is exactly as before (bytes and times), and the error names the bad file."""
    src = copy_results(tmp_path / "src", ["ch2"]) / "ch2"
    names = sorted(p.stem for p in (src / "cells").glob("*.json"))
    assert len(names) > 5
    dst = tmp_path / "store"
    (dst / "cells").mkdir(parents=True)
    for name in names[:2]:
        shutil.copy2(src / "cells" / f"{name}.json", dst / "cells")
    before = snapshot(dst)
    bad = (
        names[4] if names[4] != "volume_scans" else names[5]
    )  # written after good ones by a naive merge
    good = (src / "cells" / f"{bad}.json").read_bytes()

    def corrupt(value):
        test = value["members"][0]["test"]
        test[next(iter(test))] = 1.5

    edit_cell(src.parent, "ch2", bad, corrupt)
    capsys.readouterr()
    assert cli.main(["merge", "ch2", str(src), "--out", str(dst)]) == 2
    one_line_error(
        capsys,
        src / "cells" / f"{bad}.json",
        "must be a probability in [0, 1], got 1.5",
    )
    assert snapshot(dst) == before
    assert cli.main(["merge", "ch2", str(src), "--out", str(tmp_path / "new")]) == 2
    assert not (tmp_path / "new").exists()
    (src / "cells" / f"{bad}.json").write_bytes(good)
    assert cli.main(["merge", "ch2", str(src), "--out", str(dst)]) == 0
    assert sorted(p.stem for p in (dst / "cells").glob("*.json")) == names
    assert snapshot(dst)[f"cells/{names[0]}.json"] == before[f"cells/{names[0]}.json"]


def test_merge_cells_schema_argument(tmp_path):
    src, dst = tmp_path / "src", tmp_path / "dst"
    run_cells(cells3(), src, scale="smoke", progress=False)

    def only(name):  # "value" a probability in cell ``name`` only: sq1 (1) passes, sq2 (4) fails
        return lambda c: "value:p" if c.name == name else None

    with pytest.raises(
        ResultFileError,
        match=r"invalid result .*sq2\.json: field 'value' must be a prob",
    ):
        store.merge_cells(src, dst, cells3(), "smoke", schema=only("sq2"))
    assert not dst.exists()
    with pytest.raises(ConfigError, match="a cell's description must be a str"):
        store.merge_cells(src, dst, cells3(), "smoke", schema=lambda c: ("value",))
    assert store.merge_cells(src, dst, cells3(), "smoke", schema=only("sq1"))["taken"] == [
        "sq1",
        "sq2",
        "sq3",
    ]


def test_chapter_schema_finds_each_chapters_declaration():
    from lengthgen.chapters import chapter_schema

    from lengthgen.chapters import chapter_module

    for ch in ("ch1", "ch2", "ch3", "ch4"):
        cell = chapter_module(ch).cells("full")[0]
        assert isinstance(chapter_schema(ch, "full")(cell), str), ch
    from lengthgen.chapters.ch0.experiments import GRID_SCHEMA

    assert chapter_schema("ch0", "full")(chapter_module("ch0").cells("full")[0]) is GRID_SCHEMA
    with pytest.raises(ConfigError, match="valid choices"):
        chapter_schema("ch9", "full")


# --------------------------------------------------------------------------- 4. a missing results store
@pytest.mark.parametrize(
    "args",
    [
        ["cost"],
        ["cost", "--chapter", "ch0"],
        ["claims"],
        ["claims", "--json"],
        ["claims", "--check"],
        ["claims", "--check", "--chapter", "ch0"],
    ],
)
def test_missing_results_store_is_one_line(tmp_path, monkeypatch, capsys, args):
    monkeypatch.setenv("LENGTHGEN_ROOT", str(tmp_path))
    assert cli.main(args) == 2
    one_line_error(capsys, tmp_path / "results", "does not exist", "LENGTHGEN_ROOT")
    (tmp_path / "results").write_text("not a folder")
    assert cli.main(args) == 2
    one_line_error(capsys, tmp_path / "results", "is not a folder")


def test_missing_results_store_from_the_shell(tmp_path):
    r = subprocess.run(
        [sys.executable, "-m", "lengthgen", "cost"],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "LENGTHGEN_ROOT": str(tmp_path)},
    )
    assert r.returncode == 2 and r.stdout == "" and "Traceback" not in r.stderr
    assert r.stderr.strip() == (
        f"error: no results store: {tmp_path / 'results'} does not exist "
        f"(LENGTHGEN_ROOT={tmp_path}); run from the book's repository or set "
        "LENGTHGEN_ROOT to it"
    )


# --------------------------------------------------------------------------- 5. no empty --out left behind
def boom(c_values, n_values, workdir):
    os.makedirs(workdir, exist_ok=True)  # an empty checkpoint folder of the failed cell
    raise ArithmeticError("boom")


def boom_after_writing(c_values, n_values, workdir):
    os.makedirs(workdir, exist_ok=True)
    Path(workdir, "checkpoint").write_text("kept")
    raise ArithmeticError("boom")


@pytest.fixture
def failing_ch0(monkeypatch):
    import lengthgen.chapters.ch0.experiments as ex

    def use(fn):
        monkeypatch.setattr(ex, "dilution_grid", fn)

    return use


def test_failed_run_removes_the_out_folder_it_created(tmp_path, failing_ch0, capsys):
    failing_ch0(boom)
    out = tmp_path / "new" / "deeper"
    assert cli.main(["reproduce", "ch0", "--out", str(out), "--device", "cpu"]) == 1
    one_line_error(capsys, "cell 'dilution_grid' failed", "boom")
    assert not (tmp_path / "new").exists() and tmp_path.is_dir()


def test_failed_run_keeps_folders_that_existed_or_hold_files(tmp_path, failing_ch0, capsys):
    failing_ch0(boom)
    empty = tmp_path / "empty"
    empty.mkdir()
    assert cli.main(["reproduce", "ch0", "--out", str(empty), "--device", "cpu"]) == 1
    assert empty.is_dir()
    full = tmp_path / "full"
    full.mkdir()
    (full / "notes.txt").write_text("mine")
    assert cli.main(["reproduce", "ch0", "--out", str(full), "--device", "cpu"]) == 1
    assert (full / "notes.txt").read_text() == "mine"
    failing_ch0(boom_after_writing)
    out = tmp_path / "fresh" / "run"
    assert cli.main(["reproduce", "ch0", "--out", str(out), "--device", "cpu"]) == 1
    assert (out / "work" / "dilution_grid" / "checkpoint").read_text() == "kept"
    capsys.readouterr()


def test_failed_option_check_leaves_no_out_folder(tmp_path, capsys):
    out = tmp_path / "x"
    assert cli.main(["reproduce", "ch0", "--out", str(out), "--only", "nosuchcell"]) == 2
    one_line_error(capsys, "nosuchcell")
    assert not out.exists()


# --------------------------------------------------------------------------- 6. Dask: no waiting forever
class _FakeClient:
    def __init__(self, workers):
        self.workers = workers

    def nthreads(self, callback_timeout=None):
        return dict.fromkeys(range(self.workers), 1)


class _FakeDaskExecutor(cf.Executor):
    """Looks like a Dask ClientExecutor whose cells never finish."""

    def __init__(self, workers):
        self._client = _FakeClient(workers)

    def submit(self, fn, *args, **kwargs):
        return cf.Future()


def test_dask_without_workers_stops(tmp_path):
    t0 = time.perf_counter()
    with pytest.raises(
        RunError,
        match=r"no worker for 0\.3 s \(the last one died or left\), so cell 'sq1' "
        r"cannot finish; re-run to resume \(cells that finished are kept under",
    ):
        run_cells(
            cells3(),
            tmp_path,
            scale="smoke",
            executor=_FakeDaskExecutor(0),
            no_workers_s=0.3,
            progress=False,
        )
    assert time.perf_counter() - t0 < 10


def test_dask_timeout_stops(tmp_path):
    with pytest.raises(
        RunError,
        match=r"cell 'sq1' did not finish within 0\.4 s on the Dask cluster \(timeout_s\)",
    ):
        run_cells(
            cells3(),
            tmp_path,
            scale="smoke",
            executor=_FakeDaskExecutor(1),
            timeout_s=0.4,
            progress=False,
        )
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    "kw, match",
    [
        ({"timeout_s": 0}, "timeout_s must be a positive number"),
        ({"timeout_s": float("inf")}, "timeout_s must be a finite number"),
        ({"no_workers_s": -1}, "no_workers_s must be a positive number"),
        ({"no_workers_s": "1"}, "no_workers_s must be a finite number"),
    ],
)
def test_dask_timeout_arguments(tmp_path, kw, match):
    with pytest.raises(ConfigError, match=match):
        run_cells(cells3(), tmp_path, scale="smoke", progress=False, **kw)


@pytest.mark.slow
def test_dask_run_whose_last_worker_is_killed_stops(tmp_path):
    """A real scheduler and one worker process (no nanny to restart it), killed while the cell runs:
    the run stops with one line within seconds instead of waiting forever."""
    pytest.importorskip("dask.distributed")
    from dask.distributed import Client, LocalCluster

    cluster = LocalCluster(n_workers=0, processes=True, dashboard_address=None)
    worker = None
    try:
        worker = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "distributed.cli.dask_worker",
                cluster.scheduler_address,
                "--no-nanny",
                "--nthreads",
                "1",
                "--no-dashboard",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        with Client(cluster) as client:
            client.wait_for_workers(1, timeout=120)
        killer = threading.Timer(
            2.0, lambda: os.killpg(worker.pid, signal.SIGKILL)
        )  # the worker and its cell
        killer.start()
        cell = Cell("sleeper", subprocess.run, {"args": ["sleep", "120"]})
        t0 = time.perf_counter()
        with pytest.raises(RunError, match=r"no worker for 2 s .*cell 'sleeper' cannot finish"):
            run_cells(
                [cell],
                tmp_path,
                scale="smoke",
                executor="dask",
                scheduler=cluster.scheduler_address,
                no_workers_s=2,
                progress=False,
            )
        assert time.perf_counter() - t0 < 60
        killer.join()
    finally:
        if worker is not None and worker.poll() is None:
            os.killpg(worker.pid, signal.SIGKILL)
        cluster.close()
