"""The runs facility: keys (scale + configuration hash), resume after a killed run, scale safety,
provenance, executors giving bit-identical results, and bad input."""

import os
import signal
import stat
import subprocess
import sys
import textwrap
import time

import pytest
import torch

from lengthgen.config import ConfigError
from lengthgen.engine import runs
from lengthgen import store
from lengthgen.engine.runs import Cell, RunError, config_hash, run_cells
from lengthgen.store import ScaleConflict
from lengthgen.store import ResultFileError, load_result


# module-level cell functions: process pools and Dask pickle them by reference
def square(n, seed=0):
    return {"value": n * n + seed}


def failing(n):
    if n == 3:
        raise ArithmeticError("boom")
    return n


def slow(i):
    time.sleep(0.3)
    return {"i": i, "pid": os.getpid()}


def train_cell(n_members, steps, device="cpu"):
    """A tiny ensemble trained with the engine: the numbers must not depend on the executor."""
    from lengthgen.engine.train import OptimConfig, seeded_generators, train_ensemble

    class Linear:
        def forward(self, p, x):
            return torch.einsum("ebn,en->eb", x, p["w"])

    seeds = list(range(n_members))
    gens = seeded_generators(seeds)
    params = {"w": torch.stack([torch.randn(4, generator=g, dtype=torch.float64) for g in gens])}

    def sample(step, g):
        x = torch.stack([torch.randint(0, 2, (16, 4), generator=gi) for gi in g]).double()
        return x, x[..., 0]

    res = train_ensemble(
        Linear(),
        params,
        sample=sample,
        optim=OptimConfig("adam", lr=0.05),
        steps=steps,
        data_seeds=seeds,
        progress=False,
        device=device,
    )
    return {"w": res.final_params["w"].tolist(), "device": res.device}


def cells3():
    return [Cell(f"sq{n}", square, {"n": n}, seeds=(0,)) for n in (1, 2, 3)]


def test_config_hash_is_stable_and_sensitive():
    a = config_hash(square, {"n": 2, "seed": 1})
    assert a == config_hash(square, {"seed": 1, "n": 2})  # key order does not matter
    assert a == config_hash(square, {"n": 2, "seed": 1})
    assert a != config_hash(square, {"n": 3, "seed": 1})
    assert a != config_hash(failing, {"n": 2, "seed": 1})  # the function is part of the key
    assert config_hash(square, {"n": (1, 2)}) == config_hash(square, {"n": [1, 2]})
    assert len(a) == 12


def test_a_moved_cell_function_keeps_its_stored_hash():
    def moved(n, seed):
        return square(n, seed)

    moved.stored_as = f"{square.__module__}.{square.__qualname__}"  # its name before the move
    assert config_hash(moved, {"n": 2, "seed": 1}) == config_hash(square, {"n": 2, "seed": 1})


def test_cells_stored_with_key_and_provenance(tmp_path):
    out = run_cells(cells3(), tmp_path, scale="smoke", progress=False)
    assert out == {"sq1": {"value": 1}, "sq2": {"value": 4}, "sq3": {"value": 9}}
    obj = load_result(tmp_path / "sq2.json")
    d, p = obj["data"], obj["provenance"]
    assert (
        d["scale"] == "smoke" and d["config_hash"] == cells3()[1].hash and d["kwargs"] == {"n": 2}
    )
    for key in (
        "command",
        "git_commit",
        "git_dirty",
        "torch_version",
        "numpy_version",
        "lengthgen_version",
        "device",
        "requested_device",
        "threads",
        "wall_time_s",
        "cpu_time_s",
        "load_avg_start",
        "load_avg_end",
        "date",
        "executor",
        "config_hash",
        "seeds",
    ):
        assert key in p, key
    assert p["device"] == "cpu" and p["seeds"] == [0] and p["executor"] == "inprocess"
    mode = stat.S_IMODE(os.stat(tmp_path / "sq2.json").st_mode)
    assert mode & 0o044 == 0o044, oct(mode)  # world-readable


def test_rerun_skips_done_and_recomputes_changed(tmp_path):
    run_cells(cells3(), tmp_path, scale="smoke", progress=False)
    before = {n: load_result(tmp_path / f"sq{n}.json")["provenance"]["date"] for n in (1, 2, 3)}
    mtimes = {n: os.stat(tmp_path / f"sq{n}.json").st_mtime_ns for n in (1, 2, 3)}
    changed = [
        Cell("sq1", square, {"n": 1}),
        Cell("sq2", square, {"n": 2, "seed": 5}),
        Cell("sq3", square, {"n": 3}),
    ]
    out = run_cells(changed, tmp_path, scale="smoke", progress=False)
    assert out["sq2"] == {"value": 9}  # recomputed, not reused
    assert os.stat(tmp_path / "sq1.json").st_mtime_ns == mtimes[1]  # untouched
    assert os.stat(tmp_path / "sq3.json").st_mtime_ns == mtimes[3]
    assert load_result(tmp_path / "sq1.json")["provenance"]["date"] == before[1]
    assert store.stored_state(tmp_path, changed[1], "smoke") == "done"


def test_other_scale_is_never_replaced(tmp_path):
    run_cells(cells3(), tmp_path, scale="full", allow_dirty=True, progress=False)
    text = (tmp_path / "sq1.json").read_text()
    with pytest.raises(
        ScaleConflict, match=r"sq1\.json holds a result of another scale than smoke"
    ):
        run_cells(cells3(), tmp_path, scale="smoke", progress=False)
    assert (tmp_path / "sq1.json").read_text() == text


def test_full_scale_needs_a_clean_tree(tmp_path, monkeypatch):
    monkeypatch.setattr(runs.store, "git_state", lambda: {"commit": "abc", "dirty": True})
    with pytest.raises(ConfigError, match="needs a clean git tree"):
        run_cells(cells3(), tmp_path, scale="full", progress=False)
    assert not list(tmp_path.glob("*.json"))
    run_cells(cells3(), tmp_path, scale="full", allow_dirty=True, progress=False)
    prov = load_result(tmp_path / "sq1.json")["provenance"]
    assert prov["git_dirty"] is True and prov["allow_dirty"] is True
    run_cells(cells3(), tmp_path / "smoke", scale="smoke", progress=False)  # smoke: no check


def test_failure_keeps_finished_cells(tmp_path):
    cells = [Cell(f"f{n}", failing, {"n": n}) for n in (1, 2, 3, 4)]
    with pytest.raises(
        RunError, match=r"cell 'f3' failed: ArithmeticError\('boom'\).*re-run to resume"
    ):
        run_cells(cells, tmp_path, scale="smoke", progress=False)
    assert sorted(p.name for p in tmp_path.glob("*.json")) == ["f1.json", "f2.json"]


def test_budget_stops_starting_cells(tmp_path):
    cells = [Cell(f"s{i}", slow, {"i": i}) for i in range(4)]
    out = run_cells(cells, tmp_path, scale="smoke", budget_s=0.1, progress=False)
    assert 1 <= len(out) < 4
    out = run_cells(cells, tmp_path, scale="smoke", progress=False)
    assert sorted(out) == ["s0", "s1", "s2", "s3"]


KILL_MODULE = textwrap.dedent("""
    import os, sys, time
    from lengthgen.engine.runs import Cell, run_cells

    def slow(i):
        time.sleep(0.3)
        return {"i": i, "pid": os.getpid()}

    def cells():
        return [Cell(f"s{i}", slow, {"i": i}) for i in range(8)]

    def main(folder):
        run_cells(cells(), folder, scale="smoke", progress=False)
""")


def test_resume_after_kill(tmp_path, monkeypatch):
    folder = tmp_path / "killed"
    (tmp_path / "killmod.py").write_text(KILL_MODULE)
    proc = subprocess.Popen(
        [sys.executable, "-c", f"import killmod; killmod.main({str(folder)!r})"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env={**os.environ, "LENGTHGEN_THREADS": "1", "PYTHONPATH": str(tmp_path)},
    )
    try:
        deadline = time.time() + 60
        while time.time() < deadline:
            if folder.is_dir() and len(list(folder.glob("s*.json"))) >= 2:
                break
            if proc.poll() is not None:
                pytest.fail(f"run ended early: {proc.stderr.read().decode()}")
            time.sleep(0.05)
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    before = {p.stem: load_result(p)["data"]["value"]["pid"] for p in folder.glob("s*.json")}
    assert 2 <= len(before) < 8, before
    monkeypatch.syspath_prepend(str(tmp_path))
    import killmod

    out = run_cells(killmod.cells(), folder, scale="smoke", progress=False)
    assert sorted(out) == sorted(f"s{i}" for i in range(8))  # nothing lost
    assert all(out[k]["pid"] == pid for k, pid in before.items())  # nothing computed twice
    assert all(out[k]["pid"] == os.getpid() for k in out if k not in before)


def _train_cells():
    return [Cell(f"t{n}", train_cell, {"n_members": n, "steps": 4}) for n in (2, 3)]


def test_process_and_dask_executors_are_bit_identical(tmp_path):
    """Two cells on a pool of two processes and on a one-worker local Dask cluster (each start
    costs a Python and torch import, so as few as show the executors compute what this process
    does)."""
    ref = run_cells(_train_cells(), tmp_path / "inproc", scale="smoke", progress=False)
    pool = run_cells(
        _train_cells(),
        tmp_path / "pool",
        scale="smoke",
        executor="process",
        workers=2,
        progress=False,
    )
    assert pool == ref
    pytest.importorskip("dask.distributed")
    dask = run_cells(
        _train_cells(),
        tmp_path / "dask",
        scale="smoke",
        executor="dask",
        scheduler="local",
        workers=1,
        progress=False,
    )
    assert dask == ref
    prov = load_result(tmp_path / "dask" / "t2.json")["provenance"]
    assert prov["executor"] == "dask" and prov["pid"] != os.getpid() and prov["device"] == "cpu"


def test_device_actually_used_is_recorded(tmp_path):
    run_cells(
        _train_cells()[:1] + cells3()[:1],
        tmp_path,
        scale="smoke",
        device="cpu",
        progress=False,
    )
    prov = load_result(tmp_path / "t2.json")["provenance"]
    assert (
        prov["device"] == "cpu"
        and prov["requested_device"] == "cpu"
        and prov["trained_on"] == ["cpu"]
    )
    prov = load_result(tmp_path / "sq1.json")["provenance"]
    assert (
        prov["trained_on"] == [] and prov["device"] == "cpu"
    )  # nothing trained: computed on the CPU


@pytest.mark.parametrize(
    "make, match",
    [
        (lambda t: (t / "f").write_text("x") and t / "f", "is an existing file"),
        (lambda t: (t / "g").write_text("x") and t / "g" / "sub", "is under the file"),
    ],
)
def test_check_out_dir_bad_paths(tmp_path, make, match):
    with pytest.raises(ConfigError, match=match):
        runs.check_out_dir(make(tmp_path))


@pytest.mark.skipif(os.geteuid() == 0, reason="root can write anywhere")
def test_check_out_dir_not_writable(tmp_path):  # pragma: no cover - CI runs as root
    ro = tmp_path / "ro"
    ro.mkdir(mode=0o500)
    with pytest.raises(ConfigError, match="not writable|cannot be created"):
        runs.check_out_dir(ro / "x")


def test_corrupt_and_foreign_files_are_named(tmp_path):
    (tmp_path / "sq1.json").write_text("{not json")
    with pytest.raises(ResultFileError, match=r"corrupt result file .*sq1\.json"):
        run_cells(cells3(), tmp_path, scale="smoke", progress=False)
    (tmp_path / "sq1.json").write_text('{"provenance": {}, "data": {"x": 1}}')
    with pytest.raises(ResultFileError, match=r"sq1\.json: not a cell of the runs facility"):
        run_cells(cells3(), tmp_path, scale="smoke", progress=False)


def test_bad_arguments(tmp_path):
    with pytest.raises(ConfigError, match="cell name 'a/b'"):
        Cell("a/b", square, {})
    with pytest.raises(ConfigError, match="fn must be callable"):
        Cell("a", 3, {})
    with pytest.raises(ConfigError, match="kwargs must be a dict"):
        Cell("a", square, [1])
    with pytest.raises(ConfigError, match="repeated: a"):
        run_cells(
            [Cell("a", square, {"n": 1}), Cell("a", square, {"n": 2})],
            tmp_path,
            scale="smoke",
        )
    with pytest.raises(ConfigError, match="valid choices: inprocess, process, dask"):
        run_cells(cells3(), tmp_path, scale="smoke", executor="threads")
    with pytest.raises(ConfigError, match="workers must be an integer >= 1"):
        run_cells(cells3(), tmp_path, scale="smoke", executor="process", workers=0)
    with pytest.raises(ConfigError, match="--scheduler needs --executor dask"):
        run_cells(cells3(), tmp_path, scale="smoke", executor="process", scheduler="local")
    with pytest.raises(ConfigError, match="valid choices: smoke, full"):
        run_cells(cells3(), tmp_path, scale="huge")
    with pytest.raises(ConfigError, match="must be a list of lengthgen.engine.runs.Cell"):
        run_cells([square], tmp_path, scale="smoke")


def _migrate(folder, name, value=None):
    """Make a stored cell look like one migrated from before the runs facility: no CPU time."""
    import json

    path = folder / f"{name}.json"
    obj = json.loads(path.read_text())
    for k in ("cpu_time_s", "load_avg_start", "load_avg_end"):
        obj["provenance"].pop(k, None)
    obj["provenance"].update(
        {
            "migrated": {"from": "old.json"},
            "date": "2026-01-01T00:00:00+00:00",
            "git_commit": "abc1234",
            "wall_time_s": 99.0,
        }
    )
    if value is not None:
        obj["data"]["value"] = value
    path.write_text(json.dumps(obj))


def test_refresh_reruns_unmeasured_cells_only(tmp_path):
    """``refresh``: stored cells without CPU time are recomputed and replaced, with a record of what
    they replaced and how far the values differ; measured cells are left alone."""
    run_cells(cells3(), tmp_path, scale="smoke", progress=False)
    _migrate(tmp_path, "sq1")
    _migrate(tmp_path, "sq2", value={"value": 4.5})  # a stored value the re-run will not repeat
    mtime3 = os.stat(tmp_path / "sq3.json").st_mtime_ns
    assert [store.unmeasured(tmp_path, c, "smoke") for c in cells3()] == [
        True,
        True,
        False,
    ]
    run_cells(cells3(), tmp_path, scale="smoke", progress=False)  # without refresh: nothing runs
    assert store.unmeasured(tmp_path, cells3()[0], "smoke")
    out = run_cells(cells3(), tmp_path, scale="smoke", progress=False, refresh=True)
    assert out == {"sq1": {"value": 1}, "sq2": {"value": 4}, "sq3": {"value": 9}}
    assert os.stat(tmp_path / "sq3.json").st_mtime_ns == mtime3
    p1, p2 = (load_result(tmp_path / f"sq{n}.json")["provenance"] for n in (1, 2))
    assert isinstance(p1["cpu_time_s"], float) and "migrated" not in p1
    assert p1["refreshed"] == {
        "previous_date": "2026-01-01T00:00:00+00:00",
        "previous_git_commit": "abc1234",
        "previous_wall_time_s": 99.0,
        "previous_migrated": True,
        "max_abs_difference": 0.0,
    }
    assert p2["refreshed"]["max_abs_difference"] == 0.5
    assert not any(store.unmeasured(tmp_path, c, "smoke") for c in cells3())
    with pytest.raises(ConfigError, match="refresh"):
        run_cells(cells3(), tmp_path, scale="smoke", progress=False, refresh="yes")


def test_refresh_record_shapes():
    old = {
        "provenance": {"date": "d", "git_commit": "c", "wall_time_s": 1.0},
        "data": {"value": [1, 2]},
    }
    assert store.refresh_record(old, [1, 2, 3])["max_abs_difference"] == "inf"
    assert store.refresh_record(old, (1, 2.25))["max_abs_difference"] == 0.25
    assert store.refresh_record(old, [1, 2])["previous_migrated"] is False


def test_merge_cells_follows_the_store_rules(tmp_path):
    """A run into another folder is merged by the rules of a run into the store: missing and
    unmeasured cells are taken (the latter with a refresh record), measured ones are kept."""
    src, dst = tmp_path / "src", tmp_path / "dst"
    run_cells(cells3(), src, scale="smoke", progress=False)
    run_cells(cells3()[:2], dst, scale="smoke", progress=False)
    _migrate(dst, "sq1", value={"value": 1.25})
    mtime2 = os.stat(dst / "sq2.json").st_mtime_ns
    res = store.merge_cells(src, dst, cells3(), "smoke")
    assert res == {"taken": ["sq1", "sq3"], "kept": ["sq2"], "absent": []}
    assert os.stat(dst / "sq2.json").st_mtime_ns == mtime2
    p1 = load_result(dst / "sq1.json")["provenance"]
    assert p1["refreshed"]["max_abs_difference"] == 0.25 and p1["refreshed"]["previous_migrated"]
    assert load_result(dst / "sq3.json")["data"]["value"] == {"value": 9}
    assert store.merge_cells(src, dst, cells3() + [Cell("sq4", square, {"n": 4})], "smoke")[
        "absent"
    ] == ["sq4"]
    with pytest.raises(ConfigError, match="does not exist"):
        store.merge_cells(tmp_path / "nowhere", dst, cells3(), "smoke")
    run_cells(cells3()[:1], tmp_path / "full", scale="full", allow_dirty=True, progress=False)
    with pytest.raises(ScaleConflict):
        store.merge_cells(src, tmp_path / "full", cells3(), "smoke")
