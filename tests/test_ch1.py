"""Chapter 1: sweeps and training on tiny sizes, the reproduction plan on the runs facility (resume,
device pass-through), the schemas of the stored cells, and the stored full-scale cells themselves."""

import json
import re

import pytest

from lengthgen.chapters import reproduce
from lengthgen.chapters.ch1 import constructions as C
from lengthgen.chapters.ch1 import experiments as ch1
from lengthgen.chapters.ch1 import measures, paper, training
from lengthgen.config import ConfigError
from lengthgen import store
from lengthgen.nn import tasks
from lengthgen.store import ResultFileError, load_result, results_dir, validate

CELLS = ["fig2", "sensitivity", "parity_training", "first_training", "first_rates"]
CELLS += ["first_mechanism", "parity_grid"]
STORED = results_dir() / "ch1" / "cells"
TINY = {
    "rate_runs": 1,
    "runs": 1,
    "epochs": 1,
    "steps_per_epoch": 3,
    "test_n": 50,
    "test_strings": 4,
    "eval_every_epochs": 1,
    "parity_runs": 1,
    "parity_epochs": 1,
    "parity_n": 6,
    "fig2_strings": 3,
    "sens_points": 3,
    "sens_strings": 5,
}


# --------------------------------------------------------------------------- analyses
def test_flawed_first_error_matches_brute_force():
    for n in (1, 2, 5, 9, 12):
        enc, p = C.first_log_scaled(log_scaled=False, c=2.0)
        s = tasks.all_strings(n)
        wrong = 1 - float(measures.evaluate(enc, p, s, "first")["acc"])
        assert wrong == pytest.approx(float(measures.flawed_first_error(2.0, n)), abs=1e-12)


def test_exactness_and_curves_small():
    r = measures.exactness("first", n_exhaustive=6, random_ns=(20,), n_random=10)
    assert r["all_correct"] and r["exhaustive_strings"] == 126
    c = measures.ce_curve("parity", {"layer_norm": True, "eps": 0.0}, lengths=(1, 4), n_strings=5)
    assert [row["n"] for row in c["rows"]] == [1, 4] and all(row["acc"] == 1.0 for row in c["rows"])
    rows = measures.logit_range("first_log_scaled", lengths=(3, 50), n_strings=20)
    assert rows[0]["strings"] == 24 and all(
        0.25 < r["min_abs_logit"] <= r["max_abs_logit"] < 0.5 for r in rows
    )


def test_sensitivity_and_oscillations():
    sw = measures.sensitivity_sweep([0.98, 1.0], n=30, n_strings=20)
    assert sw["rows"][1]["acc"] == 1.0
    grid = ch1.sensitivity(lo=0.98, hi=1.02, points=3, n=30, n_strings=20)
    assert [r["value"] for r in grid["rows"]] == pytest.approx([0.98, 1.0, 1.02])
    assert grid["rows"][1] == measures.sensitivity_sweep([1.0], n=30, n_strings=20)["rows"][0]
    assert measures.oscillations([0, 1, 2, 3, 4], [1.0, 0.2, 0.9, 0.1, 0.95]) == 2
    assert measures.oscillations([0, 1], [1.0, 0.9]) == 0


def test_train_first_tiny_is_deterministic():
    kw = dict(
        lengths=(10, 30),
        runs=1,
        epochs=1,
        steps_per_epoch=3,
        test_n=40,
        test_strings=4,
        eval_every_epochs=1,
    )
    a, b = ch1.train_first(**kw), ch1.train_first(**kw)
    assert (
        len(a["members"]) == 4
        and a["test_acc"] == b["test_acc"]
        and a["test_ce_bits"] == b["test_ce_bits"]
    )
    table = training.first_table(a)
    assert {(r["train_n"], r["attention"]) for r in table} == {
        (10, "standard"),
        (10, "log-scaled"),
        (30, "standard"),
        (30, "log-scaled"),
    }
    assert a["curve"]["epoch"] == [1]
    validate(a, ch1.SCHEMAS["first_training"], "<tiny run>")


def test_train_parity_tiny():
    r = ch1.train_parity(runs=2, epochs=1, steps_per_epoch=2, n=5, test_strings=3)
    assert len(r["test_acc"]) == 2 and r["protocol"]["n"] == 5
    validate(r, ch1.SCHEMAS["parity_training"], "<tiny run>")


def test_failure_breakdown_counts_perfect_runs():
    fake = {
        "protocol": {"lengths": [10]},
        "members": [
            {"train_n": 10, "log_scaled": s, "run": r} for s in (False, True) for r in range(3)
        ],
        "test_acc": [0.5, 1.0, 1.0, 1.0, 1.0, 0.9],
        "test_ce_bits": [1.0, 0.02, 0.001, 0.0, 0.005, 0.3],
        "train_ce_bits_last_epoch": [0.9, 0.1, 0.1, 0.1, 0.1, 0.8],
    }
    std, sc = training.failure_breakdown(fake, perfect_ce_bits=0.01)
    key = training.perfect_key(0.01)
    assert (
        std["perfect (100%)"],
        std[key],
        std["below_100%"],
        std["of_which_unfit_on_training"],
    ) == (2, 1, 1, 1)
    assert (
        sc["perfect (100%)"],
        sc[key],
        sc["below_100%"],
        sc["of_which_unfit_on_training"],
    ) == (2, 2, 1, 1)
    assert std["near_chance (≤ 0.6)"] == 1 and sc["near_chance (≤ 0.6)"] == 0
    with pytest.raises(ConfigError):
        training.failure_breakdown(fake, perfect_ce_bits=float("nan"))


def test_summarize():
    s = training.summarize([1.0, 1.0, 0.0, 1.0])
    assert s["mean"] == 0.75 and s["lo"] <= 0.75 <= s["hi"] and s["n"] == 4


# --------------------------------------------------------------------------- the plan on the runs facility
def _mtimes(folder):
    return {p.name: p.stat().st_mtime_ns for p in sorted(folder.glob("*.json"))}


def test_reproduce_smoke_writes_every_cell_and_resumes(tmp_path):
    paths = reproduce("ch1", scale="smoke", out=tmp_path, progress=False)
    assert sorted(p.name for p in paths) == sorted(f"{n}.json" for n in CELLS)
    folder = tmp_path / "cells"
    assert store.plan_status(ch1.cells("smoke"), folder, "smoke") == {n: "done" for n in CELLS}
    for name in CELLS:
        stored = store.load_stored(
            "ch1", name, schema=ch1.schema(name, "smoke"), folder=folder, scale="smoke"
        )
        assert stored["provenance"]["scale"] == "smoke" and stored["provenance"]["cell"] == name
    # the live computation of the notebook is the same cell
    assert store.cell_value(folder, "fig2") == json.loads(json.dumps(ch1.run_live("fig2", "smoke")))
    before = _mtimes(folder)
    again = reproduce("ch1", scale="smoke", out=tmp_path, progress=False)
    assert sorted(again) == sorted(paths) and _mtimes(folder) == before  # nothing recomputed


def test_device_reaches_training(tmp_path, monkeypatch):
    monkeypatch.setitem(paper.PROTOCOLS, "smoke", TINY)
    seen = []
    real_train, real_device = training.train_ensemble, training.get_device

    def spy(*args, device=None, **kw):
        seen.append(device)
        return real_train(*args, device="cpu", **kw)

    monkeypatch.setattr(training, "train_ensemble", spy)
    reproduce(
        "ch1",
        scale="smoke",
        out=tmp_path / "cpu",
        device="cpu",
        only="*_training",
        progress=False,
    )
    assert seen == ["cpu", "cpu"]
    # a sentinel device name must arrive unchanged (the module resolves it to the CPU for the tensors)
    sentinel = "sentinel-device"
    monkeypatch.setattr(
        training, "get_device", lambda d: real_device("cpu" if d == sentinel else d)
    )
    seen.clear()
    reproduce(
        "ch1",
        scale="smoke",
        out=tmp_path / "sentinel",
        device=sentinel,
        only="*_training",
        progress=False,
    )
    assert seen == [sentinel, sentinel]
    prov = load_result(tmp_path / "sentinel" / "cells" / "first_training.json")["provenance"]
    assert prov["requested_device"] == sentinel and prov["device"] == "cpu"


def test_plan_is_declared_by_the_paper_module(monkeypatch):
    full = {c.name: c for c in ch1.cells("full")}
    assert list(full) == CELLS
    first = full["first_training"].kwargs
    assert (
        first["lengths"] == list(paper.TRAIN_LENGTHS)
        and first["runs"] == paper.PROTOCOLS["full"]["runs"]
    )
    assert first["seed_offsets"] == paper.FIRST_SEED_OFFSETS and first["model"] == paper.MODEL
    assert full["parity_training"].seeds == list(range(paper.PROTOCOLS["full"]["parity_runs"]))
    # a changed protocol is a changed configuration: another hash, so the cell is recomputed
    monkeypatch.setitem(paper.PROTOCOLS, "full", {**paper.PROTOCOLS["full"], "epochs": 99})
    assert {c.name: c for c in ch1.cells("full")}["first_training"].hash != full[
        "first_training"
    ].hash


# --------------------------------------------------------------------------- schemas of the stored cells
def _copy_with(tmp_path, name, edit):
    obj = json.loads((STORED / f"{name}.json").read_text())
    edit(obj["data"]["value"])
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps(obj))
    return path


def _load(tmp_path, name):
    return store.load_stored("ch1", name, schema=ch1.SCHEMAS[name], folder=tmp_path)


def test_schema_rejects_an_accuracy_outside_0_1(tmp_path):
    path = _copy_with(tmp_path, "first_training", lambda v: v["test_acc"].__setitem__(7, 7.0))
    with pytest.raises(
        ResultFileError,
        match=re.escape(str(path)) + r".*'test_acc\.7'.*probability.*7\.0",
    ):
        _load(tmp_path, "first_training")
    path = _copy_with(tmp_path, "parity_training", lambda v: v["test_acc"].__setitem__(0, 7.0))
    with pytest.raises(
        ResultFileError, match=re.escape(str(path)) + r".*'test_acc\.0'.*probability"
    ):
        _load(tmp_path, "parity_training")
    path = _copy_with(tmp_path, "fig2", lambda v: v[2]["rows"][4].__setitem__("acc", 7.0))
    with pytest.raises(
        ResultFileError,
        match=re.escape(str(path)) + r".*'2\.rows\.4\.acc'.*probability",
    ):
        _load(tmp_path, "fig2")
    path = _copy_with(tmp_path, "sensitivity", lambda v: v["rows"][0].__setitem__("acc", -0.5))
    with pytest.raises(
        ResultFileError, match=re.escape(str(path)) + r".*'rows\.0\.acc'.*probability"
    ):
        _load(tmp_path, "sensitivity")


def test_schema_rejects_a_missing_member(tmp_path):
    path = _copy_with(tmp_path, "first_training", lambda v: v["members"].pop(5))
    with pytest.raises(
        ResultFileError,
        match=re.escape(str(path)) + r".*'members' has 159 entries.*needs 160",
    ):
        _load(tmp_path, "first_training")
    path = _copy_with(tmp_path, "first_training", lambda v: v["curve"]["acc"][3].pop())
    with pytest.raises(ResultFileError, match=r"'curve\.acc\.3' has 159 entries.*needs 160"):
        _load(tmp_path, "first_training")
    path = _copy_with(tmp_path, "parity_training", lambda v: v["test_acc"].pop())
    with pytest.raises(
        ResultFileError,
        match=re.escape(str(path)) + r".*'test_acc' has 19 entries.*needs 20",
    ):
        _load(tmp_path, "parity_training")
    path = _copy_with(tmp_path, "fig2", lambda v: v[0]["rows"].pop())
    with pytest.raises(ResultFileError, match=r"'0\.rows' has 12 entries.*needs 13"):
        _load(tmp_path, "fig2")
    path = _copy_with(tmp_path, "first_training", lambda v: v["protocol"].pop("runs"))
    with pytest.raises(ResultFileError, match=r"'protocol\.runs' is missing"):
        _load(tmp_path, "first_training")


def test_stored_cells_are_current_and_valid():
    """Every stored full-scale cell of chapter 1 matches today's plan (scale and configuration hash)
    and holds what its schema requires."""
    plan = ch1.cells("full")
    assert store.plan_status(plan, STORED, "full") == {c.name: "done" for c in plan}
    for name, schema in ch1.SCHEMAS.items():
        stored = store.load_stored("ch1", name, schema=schema)
        assert stored["provenance"]["scale"] == "full"
    first = store.load_stored("ch1", "first_training", schema=ch1.SCHEMAS["first_training"])["data"]
    kw = {c.name: c for c in plan}["first_training"].kwargs
    assert {k: first["protocol"][k] for k in ("lengths", "runs", "epochs", "test_n")} == {
        k: kw[k] for k in ("lengths", "runs", "epochs", "test_n")
    }


def test_one_schema_per_cell_at_each_scale():
    """``schema(name, scale)`` is the one declaration, the same at each scale: the counts come
    from the stored protocol and the cell's arguments (here the sweep's ``points``)."""
    for scale in ("smoke", "full"):
        assert [c.name for c in ch1.cells(scale)] == list(ch1.SCHEMAS)
        assert all(ch1.schema(name, scale) == ch1.SCHEMAS[name] for name in ch1.SCHEMAS)
    assert ch1.schema("no_such_cell") is None
    sweep = {"n": 5, "n_strings": 3, "rows": [{"value": 1.0, "ce_bits": 0.1, "acc": 1.0}] * 3}
    assert validate(sweep, ch1.schema("sensitivity", "smoke"), "s.json", {"points": 3}) == sweep
    with pytest.raises(ResultFileError, match=r"s\.json: field 'rows' has 3 entries.*needs 4"):
        validate(sweep, ch1.schema("sensitivity"), "s.json", {"points": 4})
    assert "members.*.(train_n|run|arm)" in ch1.schema("first_rates")


# --------------------------------------------------------------------------- bad input
def test_bad_inputs():
    with pytest.raises(ValueError, match="'sort'.*parity"):
        measures.exactness("sort")
    with pytest.raises(ValueError, match="n_strings"):
        measures.ce_curve("first", n_strings=0)
    with pytest.raises(ValueError, match="runs"):
        ch1.train_first(runs=0)
    with pytest.raises(ValueError, match="training length"):
        ch1.train_first(lengths=(1,))
    with pytest.raises(ConfigError, match="distinct"):
        ch1.train_first(lengths=(10, 10))
    with pytest.raises(ConfigError, match="'tpu'.*cpu"):
        ch1.train_first(runs=1, epochs=1, steps_per_epoch=1, device="tpu")
    with pytest.raises(ConfigError, match="'tpu'.*cpu"):
        ch1.train_parity(runs=1, epochs=1, steps_per_epoch=1, device="tpu")
    with pytest.raises(ConfigError, match="model must be a dict with the keys"):
        ch1.train_parity(model={"d_model": 16})
    with pytest.raises(ConfigError, match="seed_offsets must be a dict"):
        ch1.train_first(seed_offsets={"data": 1})
    with pytest.raises(ValueError, match="'huge'.*smoke"):
        ch1.cells("huge")
    with pytest.raises(ValueError, match="'nope'.*first_training"):
        ch1.run_live("nope", "smoke")
    with pytest.raises(ConfigError, match="lo < hi"):
        ch1.sensitivity(lo=1.1, hi=0.9)
    with pytest.raises(ConfigError, match="value weight"):
        measures.sensitivity_sweep([1.0, float("nan")])
    with pytest.raises(ValueError, match="n must be"):
        measures.logit_range("first", lengths=(0,))
    with pytest.raises(ConfigError, match="'sort'.*parity"):
        measures.exactness("sort")


# --------------------------------------------------------------------------- the chapter page
def test_explorer_frames_differ_and_check_inputs():
    import matplotlib

    matplotlib.use("Agg")
    from lengthgen.chapters.ch1 import measures
    from lengthgen.widgets import frame_explorer

    fx = frame_explorer(
        measures.explorer_frame,
        {"n": [3, 30], "model": list(measures.EXPLORER_MODELS), "seed": [0]},
        discrete=("seed",),
    )
    assert len(fx.frames) == 4 and len(set(fx.frames.values())) == 4
    with pytest.raises(ConfigError):
        measures.explorer_frame(10, model="no such model")
    with pytest.raises(ConfigError):
        measures.explorer_frame(0)


def test_chapter_page_is_clean():
    """Visible code within 88 columns; claims shown as hidden-input tables; figures captioned
    (on the chapter's page and its details page, each figure referred to on its own page)."""
    from pathlib import Path

    notebooks = Path(__file__).resolve().parents[1] / "notebooks"
    all_figs = []
    for name in ("01_log_scaled_attention", "01_log_scaled_attention_details"):
        nb = json.loads((notebooks / f"{name}.ipynb").read_text())
        code = [c for c in nb["cells"] if c["cell_type"] == "code"]
        for cell in code:
            src = "".join(cell["source"])
            tags = cell.get("metadata", {}).get("tags", [])
            hidden = "remove-input" in tags or "remove-cell" in tags
            if not hidden:
                assert all(len(line) <= 88 for line in src.split("\n")), src[:80]
                assert "ledger." not in src and "print(" not in src, src[:80]
            assert "pd.concat" not in src and "import ipywidgets" not in src
            fig = cell.get("metadata", {}).get("mystnb", {}).get("figure")
            if fig is not None:
                assert fig.get("caption") and fig.get("name", "").startswith("fig-ch1-")
        figs = [
            c["metadata"]["mystnb"]["figure"]["name"]
            for c in code
            if "mystnb" in c.get("metadata", {})
        ]
        text = "".join("".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "markdown")
        assert all(f"{{numref}}`{name}`" in text for name in figs)
        all_figs += figs
    assert len(all_figs) == 7 and len(set(all_figs)) == 7
