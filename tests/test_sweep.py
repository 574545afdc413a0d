"""Sweeps: grid, resume after a killed run, packing into ensembles, process pool and Dask executors."""
import concurrent.futures as cf
import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest
import torch

from lengthgen.config import ConfigError
from lengthgen.store import ResultStore, load_result
from lengthgen.engine.runs import (InProcessExecutor, SweepError, cell_key, collect, dask_executor, grid,
                             local_dask_executor, pending_cells, run_sweep)

AXES = {"N": [3, 5], "seed": [0, 1, 2]}


def square(cell):
    """Module level so that process pools and Dask can pickle it."""
    return {"value": cell["N"] ** 2 + cell["seed"]}


def packed_square(cells):
    return [{"value": c["N"] ** 2 + c["seed"], "pack": len(cells)} for c in cells]


def ensemble_cell(cells):
    """A packed cell function that trains one ensemble per pack with the engine."""
    from lengthgen.engine.train import OptimConfig, train_ensemble

    class Scalar:
        def forward(self, p, x):
            return p["w"][:, None] * x

    seeds = [c["seed"] for c in cells]
    params = {"w": torch.tensor([float(c["N"]) for c in cells], dtype=torch.float64)}
    res = train_ensemble(Scalar(), params, sample=lambda s, g: (torch.ones(len(g), 2), None),
                         loss=lambda out, y: (out ** 2).mean(1), optim=OptimConfig("sgd", lr=0.1),
                         steps=3, data_seeds=seeds, progress=False)
    return [{"w": float(w), "members": res.members} for w in res.final_params["w"]]


def test_grid_and_keys():
    cells = grid(AXES)
    assert cells[0] == {"N": 3, "seed": 0} and cells[-1] == {"N": 5, "seed": 2} and len(cells) == 6
    assert cell_key({"N": 3, "seed": 0}) == "N=3__seed=0"
    for bad, match in [({}, "non-empty dict"), ({"N": []}, "has no values"), ({"N": 3}, "must be a sequence"),
                       ({"N": "abc"}, "must be a sequence"), ({"N": [1, 1]}, "repeated values"),
                       ({"": [1]}, "non-empty strings")]:
        with pytest.raises(ConfigError, match=match):
            grid(bad)
    with pytest.raises(ConfigError, match="non-empty dict"):
        cell_key({})


def test_sweep_stores_with_provenance_and_skips_done_cells(tmp_path):
    store = ResultStore(tmp_path / "s")
    calls = []

    def fn(cell):
        calls.append(cell)
        return square(cell)

    out = run_sweep(AXES, fn, store, name="toy", progress=False)
    assert len(calls) == 6 and out["N=5__seed=2"] == {"value": 27}
    obj = load_result(store.path("N=3__seed=1"))
    prov = obj["provenance"]
    assert prov["sweep"] == "toy" and prov["cell"] == {"N": 3, "seed": 1} and prov["seeds"] == [1]
    assert prov["scale"] == "smoke" and prov["device"] == "cpu" and prov["wall_time_s"] is not None
    # a second run computes nothing and returns the same results
    assert run_sweep(AXES, fn, store, progress=False) == out and len(calls) == 6
    rows = collect(AXES, store)
    assert rows[0] == {"N": 3, "seed": 0, "value": 9} and len(rows) == 6
    with pytest.raises(SweepError, match="N=7__seed=0"):
        collect({"N": [7], "seed": [0]}, store)
    assert collect({"N": [3, 7], "seed": [0]}, store, missing="skip") == [{"N": 3, "seed": 0, "value": 9}]
    with pytest.raises(ConfigError, match="valid choices: raise, skip"):
        collect(AXES, store, missing="ignore")
    # a bigger grid computes only the new cells
    run_sweep({"N": [3, 5, 7], "seed": [0, 1, 2]}, fn, store, progress=False)
    assert len(calls) == 9 and pending_cells({"N": [3, 5, 7], "seed": [0, 1, 2]}, store) == []
    assert pending_cells({"N": [3, 9]}, store.folder) == [{"N": 3}, {"N": 9}]
    with pytest.raises(ConfigError, match="store must be a ResultStore"):
        pending_cells(AXES, 3)


def test_packing_groups_cells_sharing_a_shape(tmp_path):
    store = ResultStore(tmp_path / "p")
    store.put("N=3__seed=1", {"value": 10}, {"scale": "smoke", "device": "cpu", "torch_version": "x", "date": "d"})
    packs = []

    def fn(cells):
        packs.append([cell_key(c) for c in cells])
        return packed_square(cells)

    out = run_sweep(AXES, fn, store, pack_by=lambda c: c["N"], progress=False)
    assert packs == [["N=3__seed=0", "N=3__seed=2"], ["N=5__seed=0", "N=5__seed=1", "N=5__seed=2"]]
    assert out["N=5__seed=1"] == {"value": 26, "pack": 3} and out["N=3__seed=1"] == {"value": 10}
    assert load_result(store.path("N=5__seed=0"))["provenance"]["pack_size"] == 3
    packs.clear()
    run_sweep({"N": [7], "seed": list(range(5))}, fn, store, pack_by=lambda c: c["N"], max_pack=2, progress=False)
    assert [len(p) for p in packs] == [2, 2, 1]
    # axis names instead of a function
    packs.clear()
    run_sweep({"N": [11, 12], "seed": [0, 1]}, fn, store, pack_by="N", progress=False)
    assert packs == [["N=11__seed=0", "N=11__seed=1"], ["N=12__seed=0", "N=12__seed=1"]]
    packs.clear()
    run_sweep({"N": [13], "task": ["a", "b"], "seed": [0, 1]}, fn, tmp_path / "q", pack_by=("N", "task"),
              progress=False)
    assert [len(p) for p in packs] == [2, 2]
    # a packed function trains one ensemble per pack
    out = run_sweep(AXES, ensemble_cell, tmp_path / "e", pack_by=lambda c: c["N"], progress=False)
    assert out["N=5__seed=0"]["members"] == 3 and out["N=3__seed=2"]["w"] == pytest.approx(3 * 0.8 ** 3)


def test_failures_keep_finished_cells(tmp_path):
    store = ResultStore(tmp_path / "f")

    def fn(cell):
        if cell["seed"] == 1:
            raise RuntimeError("boom")
        return square(cell)

    with pytest.raises(SweepError, match=r"N=3__seed=1.*boom"):
        run_sweep(AXES, fn, store, progress=False)
    assert store.keys() == ["N=3__seed=0"]
    with pytest.raises(SweepError, match="one result per cell"):
        run_sweep(AXES, lambda cells: [1], tmp_path / "g", pack_by=lambda c: 0, progress=False)


SCRIPT = textwrap.dedent("""
    import sys, time
    from lengthgen.store import ResultStore
    from lengthgen.engine.runs import run_sweep

    def slow(cell):
        time.sleep(0.4)
        return {"value": cell["i"] * 10, "run": "first"}

    run_sweep({"i": list(range(8))}, slow, ResultStore(sys.argv[1]), progress=False)
""")


def test_resume_after_kill(tmp_path):
    folder = tmp_path / "killed"
    script = tmp_path / "sweep_script.py"
    script.write_text(SCRIPT)
    proc = subprocess.Popen([sys.executable, str(script), str(folder)], stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, env={**os.environ, "LENGTHGEN_THREADS": "1"})
    try:
        deadline = time.time() + 60
        while time.time() < deadline:
            if folder.is_dir() and len(list(folder.glob("*.json"))) >= 2:
                break
            if proc.poll() is not None:
                pytest.fail(f"sweep process ended early: {proc.stderr.read().decode()}")
            time.sleep(0.05)
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    store = ResultStore(folder)
    before = store.keys()
    assert 2 <= len(before) < 8, before
    calls = []

    def fn(cell):
        calls.append(cell["i"])
        return {"value": cell["i"] * 10, "run": "resumed"}

    out = run_sweep({"i": list(range(8))}, fn, store, progress=False)
    # nothing lost, nothing computed twice
    assert sorted(calls) == [i for i in range(8) if f"i={i}" not in before]
    assert [out[f"i={i}"]["value"] for i in range(8)] == [10 * i for i in range(8)]
    assert all(out[k]["run"] == "first" for k in before)
    assert sorted(store.keys()) == sorted(f"i={i}" for i in range(8))


def test_process_pool_executor(tmp_path):
    with cf.ProcessPoolExecutor(max_workers=2) as ex:
        out = run_sweep(AXES, square, tmp_path / "pp", executor=ex, progress=False)
    assert out["N=5__seed=2"] == {"value": 27} and len(out) == 6
    out2 = run_sweep({"N": [9], "seed": [0, 1]}, packed_square, tmp_path / "pp2", pack_by=lambda c: c["N"],
                     executor="process", progress=False)
    assert out2["N=9__seed=1"] == {"value": 82, "pack": 2}


def test_dask_executor_local_cluster(tmp_path):
    pytest.importorskip("dask.distributed")
    from dask.distributed import Client, LocalCluster

    with LocalCluster(n_workers=1, threads_per_worker=1, processes=False, dashboard_address=None) as cluster, \
            Client(cluster) as client:
        ex = dask_executor(client)
        assert isinstance(ex, cf.Executor)
        out = run_sweep(AXES, packed_square, tmp_path / "dask", pack_by=lambda c: c["N"], executor=ex,
                        progress=False)
    assert out["N=3__seed=2"] == {"value": 11, "pack": 3}
    assert load_result(ResultStore(tmp_path / "dask").path("N=5__seed=0"))["provenance"]["pack_size"] == 3
    with local_dask_executor() as ex2:
        assert ex2.submit(square, {"N": 2, "seed": 1}).result() == {"value": 5}


def test_bad_sweep_arguments(tmp_path):
    for kw, match in [({"fn": 3}, "fn must be a callable"), ({"pack_by": 3}, "pack_by must be a callable"),
                      ({"pack_by": ("N", "depth")}, "unknown pack_by axis 'depth'; valid choices: N, seed"),
                      ({"pack_by": []}, "pack_by must be a callable"),
                      ({"max_pack": 0}, "max_pack must be an integer >= 1"), ({"max_pack": 2}, "max_pack needs pack_by"),
                      ({"executor": "threads"}, "valid choices: inprocess, process, dask"),
                      ({"executor": 5}, "executor must be"), ({"workers": 0}, "workers must be"),
                      ({"store": 5}, "store must be a ResultStore"), ({"scale": "huge"}, "valid choices: smoke, full"),
                      ({"key": lambda c: "same"}, "same key"), ({"device": "tpu"}, "unknown device")]:
        args = {"axes": AXES, "fn": square, "store": tmp_path / "b", "progress": False, **kw}
        with pytest.raises(ConfigError, match=match):
            run_sweep(args.pop("axes"), args.pop("fn"), args.pop("store"), **args)
    with pytest.raises(ConfigError, match="needs a dask.distributed.Client"):
        dask_executor(object())
    ex = InProcessExecutor()
    fut = ex.submit(lambda: 1 / 0)
    assert isinstance(fut.exception(), ZeroDivisionError)
