"""Chapter 4's experiments (lengthgen.chapters.ch4.experiments): the cell functions on tiny
configurations, the plan on the runs facility, the device each training path trains on, the
schemas of the stored kinds and the stored full run."""

import copy
import json
import shutil
from pathlib import Path

import pytest
import torch

import lengthgen.engine.train as engine_train
from lengthgen.chapters import reproduce
from lengthgen.tables import collapsible, styled
from lengthgen.chapters.ch4 import experiments as ch4
from lengthgen.chapters.ch4 import paper, sweeps
from lengthgen.chapters.ch4 import sweeps as TR
from lengthgen.config import ConfigError
from lengthgen.engine import runs
from lengthgen import store
from lengthgen.store import ResultFileError, load_result, results_dir, validate

LR = 1e-2
TINY = {
    "relu_width": {
        "p": 3,
        "lengths": (2,),
        "widths": (4,),
        "steps": 3,
        "lr": LR,
        "seeds": (1,),
    },
    "two_lengths": {
        "p": 5,
        "m1": 2,
        "m2": 3,
        "width": 4,
        "steps": 2,
        "lr": LR,
        "seeds": (1,),
    },
    "underparam": {
        "configs": ((2, 5),),
        "widths": (4,),
        "budgets": (20, 40),
        "steps": 2,
        "lr": LR,
        "seeds": (1,),
        "n_test": 50,
    },
    "overparam": {
        "m": 2,
        "p": 5,
        "width": 8,
        "n": 30,
        "wds": (0.0, 0.1),
        "steps": 2,
        "lr": LR,
        "seeds": (1,),
        "n_test": 50,
    },
    "lengthgen": {
        "p": 5,
        "width": 8,
        "budgets": (30,),
        "wds": (0.1,),
        "steps": 2,
        "lr": LR,
        "seeds": (1,),
        "n_test": 20,
        "test_lengths": (14, 40),
    },
    "transformer": {
        "m": 2,
        "p": 5,
        "d_model": 8,
        "budgets": (10,),
        "steps": 2,
        "lr": LR,
        "seeds": (1,),
        "n_test": 20,
        "batch_size": 8,
    },
    "budget_study": {
        "p": 5,
        "width": 8,
        "n": 30,
        "wds": (0.3,),
        "seeds": (1,),
        "steps": 4,
        "every": 2,
        "lr": LR,
        "val_length": 20,
        "n_val": 20,
        "n_test": 20,
        "test_lengths": (14,),
    },
}
TINY_CHECKS = {
    "exhaustive": {"ps": (3, 4), "ms": (1, 2), "limit": 100},
    "automaton": {"primes": (7,), "max_m": 12, "n": 50, "seed": 0},
    "float": {"primes": (7,), "max_m": 12, "n": 20, "seed": 10},
    "bounds": {"p": 5, "lengths": (5, 20)},
    "timing": {"p": 5, "width": 8, "n": 50, "runs": 1},
}
TRACKED = {
    **TINY["lengthgen"],
    "steps": 4,
    "track_every": 2,
    "track_length": 20,
    "n_track": 20,
}


# --------------------------------------------------------------------------- protocol and cell functions
def test_protocol_scales():
    for scale in ("smoke", "full"):
        P = paper.protocol(scale)
        assert set(P) >= {
            "relu_width",
            "two_lengths",
            "underparam",
            "overparam",
            "lengthgen",
            "transformer",
        }
        assert set(paper.checks(scale)) == {
            "exhaustive",
            "automaton",
            "float",
            "bounds",
            "timing",
        }
    assert paper.protocol("full")["lengthgen"]["test_lengths"] == paper.OOD_LENGTHS
    with pytest.raises(ConfigError):
        paper.protocol("huge")
    assert set(paper.PAPER_VALUES) >= {
        "ch4.thm41.long",
        "ch4.fig4.sine_far",
        "ch4.fig6.transformer",
    }
    assert all(
        isinstance(v, tuple) and len(v) == 2 for v in paper.PAPER_VALUES.values()
    )  # (location, value)


def test_small_exhaustive_and_long_checks():
    rows = ch4.small_exhaustive(ps=(3, 4), ms=(1, 2))
    assert all(r["thm41"] == 1.0 and r["thm42_bias"] == 1.0 for r in rows)
    assert all(abs(r["fourier"] - r["fourier_theory"]) < 1e-12 for r in rows)
    s = ch4.automaton_summary(primes=(7,), max_m=30, n=200, seed=0)
    assert s == ch4.summarize_checks(ch4.long_length_checks(primes=(7,), max_m=30, n=200))
    assert s["thm41@7"]["min_acc"] == 1.0 and s["thm42_bias@7"]["min_acc"] == 1.0
    assert s["fourier@7"]["errors_outside_tie_residues"] == 0
    assert s["fourier@7"]["max_abs_acc_minus_1_minus_tie_share"] < 1e-6
    f = ch4.float_summary(primes=(7,), max_m=30, n=100, lengths=(1, 30), seed=10)
    assert f["thm42_bias@7"]["lengths"] == 2 and f["thm42_bias@7"]["min_acc"] == 1.0


def test_relu_bounds_table():
    rows = ch4.relu_bounds_table(p=5, lengths=(5, 20))
    assert rows[0]["paper_bound"] == 0.0 and rows[1]["path_bound"] == 4
    assert all(r["construction_width"] >= r["path_bound"] for r in rows)


def test_relu_construction_check_is_exact_and_counts_inputs():
    rows = ch4.relu_construction_check(cases=((3, (4, 7)), (5, (3,))))
    assert [(r["p"], r["m"]) for r in rows] == [(3, 4), (3, 7), (5, 3)]
    assert all(r["acc"] == 1.0 and r["width"] >= r["path_bound"] for r in rows)
    assert rows[0]["count_vectors"] == 15  # C(4 + 2, 2) count vectors of length 4 over 3 tokens
    with pytest.raises(ConfigError):
        ch4.relu_construction_check(cases=())


def test_tiny_training_runs():
    r = ch4.relu_min_width(**TINY["relu_width"])
    assert set(r["min_width"]) == {2} and len(r["rows"]) == 1
    t = ch4.two_lengths(**TINY["two_lengths"])
    assert t["pairs"] == 4 and len(t["runs"]) == 3
    # Thm 4.4 holds for any bias-free ReLU network, trained or not: paired inputs share a prediction
    assert t["runs"][1]["same_prediction_pairs"] == [4]
    u = ch4.underparam(**TINY["underparam"])
    assert len(u["rows"]) == 2 * 2
    o = ch4.overparam(**TINY["overparam"])
    assert len(o["rows"]) == 4 and all("normalized_margin" in r for r in o["rows"])
    lg = ch4.lengthgen(**TINY["lengthgen"], activation="sine", bias=True)
    assert set(lg["rows"][0]) >= {"train", "3", "14", "40"} and lg["example_b"] is not None
    tr = ch4.lengthgen(**TRACKED, activation="relu")
    assert tr["val_step"] == [2, 4] and len(tr["val_acc"][0]) == 1
    b = ch4.budget_study(**TINY["budget_study"])
    assert b["val_step"] == [2, 4] and set(b["final_acc"]) == {"3", "7", "13", "14"}


def test_transformer_pieces():
    seq = TR.addition_sequences(torch.tensor([[3, 4, 1]]), 5)
    assert seq.tolist() == [[3, 5, 4, 5, 1, 6]]
    model = TR.LastTokenDecoder(5, 3, "sine", d_model=8)
    P = model.init([1, 2])
    assert float(P["l0.b1"].abs().max()) == 0.0 and float(P["l0.ln1_g"].min()) == 1.0
    assert 0.005 < float(P["l0.w1"].std()) < 0.02
    out = model.forward(P, seq.unsqueeze(0).expand(2, 1, 6))
    assert out.shape == (2, 1, 5)
    r = ch4.transformer_baseline(**TINY["transformer"])
    assert {row["activation"] for row in r["rows"]} == {"sine", "relu", "gelu"}


@pytest.mark.parametrize(
    "call",
    [
        lambda: ch4.lengthgen(**TINY["lengthgen"], activation="gelu"),
        lambda: ch4.lengthgen(**TINY["lengthgen"], device="tpu"),
        lambda: ch4.underparam(**{**TINY["underparam"], "seeds": ()}),
        lambda: ch4.overparam(**{**TINY["overparam"], "wds": ()}),
        lambda: ch4.relu_bounds_table(p=1),
        lambda: ch4.epoch_timing(runs=0),
        lambda: ch4.load_stored_cell("no_such_cell"),
        lambda: ch4.fixed_length_exact_lengths(cases=[(5,)]),
        lambda: ch4.fixed_length_exact_lengths(span=0),
        lambda: ch4.paper_scale_at({"history": []}, 0),
        lambda: ch4.paper_scale_at({"history": [{}]}, 1),
    ],
)
def test_bad_arguments_raise(call):
    with pytest.raises(ConfigError):
        call()


def test_schema_by_name_and_scale_is_the_cells_schema():
    """``schema(name, scale)`` (the one convention) describes every cell of that scale's plan;
    an unknown name has none."""
    for scale in ("smoke", "full", "paper"):
        assert all(isinstance(ch4.schema(c.name, scale), str) for c in ch4.cells(scale))
    assert ch4.schema("no_such_cell") is None
    assert "rows=2*configs*widths*budgets*seeds" in ch4.schema("underparam", "full")
    tracked = [c for c in ch4.cells("full") if c.fn is ch4.lengthgen and "track_every" in c.kwargs]
    assert tracked and all("val_acc.*=" in ch4.schema(c.name) for c in tracked)


# --------------------------------------------------------------------------- (a) the plan on the runs facility
def _snapshot(folder):
    return {
        str(p): (p.stat().st_size, p.stat().st_mtime_ns) for p in folder.rglob("*") if p.is_file()
    }


@pytest.fixture
def tiny_smoke(monkeypatch):
    monkeypatch.setitem(paper.PROTOCOL, "smoke", copy.deepcopy(TINY))
    monkeypatch.setitem(paper.CHECKS, "smoke", copy.deepcopy(TINY_CHECKS))


def test_reproduce_writes_every_cell_then_resumes(tmp_path, monkeypatch, tiny_smoke):
    import lengthgen.store as store

    written, real_write = [], store.atomic_write_json
    monkeypatch.setattr(
        store,
        "atomic_write_json",
        lambda path, obj: written.append(path) or real_write(path, obj),
    )
    before = _snapshot(results_dir() / "ch4")
    plan = ch4.cells("smoke")
    assert [c.name for c in plan] == [
        "exhaustive",
        "automaton",
        "float_n20",
        "bounds",
        "relu_min_width",
        "two_lengths",
        "underparam",
        "overparam",
        "lengthgen_sine_nobias",
        "lengthgen_sine_bias",
        "lengthgen_relu_nobias",
        "timing",
        "budget_study",
        "transformer_m2",
    ]
    paths = reproduce("ch4", scale="smoke", out=tmp_path, progress=False)
    assert sorted(p.name for p in paths) == sorted(f"{c.name}.json" for c in plan)
    assert sorted(p.name for p in tmp_path.rglob("*.json")) == sorted(
        f"{c.name}.json" for c in plan
    )
    for cell in plan:
        obj = load_result(tmp_path / "cells" / f"{cell.name}.json")
        spec = ch4.schema(cell.name, "smoke")
        validate(obj["data"]["value"], spec, cell.name, obj["data"]["kwargs"])
        assert obj["data"]["scale"] == "smoke" and obj["data"]["config_hash"] == cell.hash
        assert (
            obj["provenance"]["device"] == "cpu" and obj["provenance"]["requested_device"] == "cpu"
        )
        trains = cell.name not in ("exhaustive", "automaton", "float_n20", "bounds")
        assert obj["provenance"]["trained_on"] == (["cpu"] if trains else [])
    assert set(store.plan_status(plan, tmp_path / "cells", "smoke").values()) == {"done"}

    def boom(*args, **kwargs):
        raise AssertionError("a stored cell was recomputed")

    monkeypatch.setattr(runs, "_call", boom)
    again = _snapshot(tmp_path)
    assert reproduce("ch4", scale="smoke", out=tmp_path, progress=False) == paths
    assert _snapshot(tmp_path) == again
    assert _snapshot(results_dir() / "ch4") == before
    assert written and all(
        tmp_path in Path(p).parents for p in written
    )  # nothing written under results/


# --------------------------------------------------------------------------- (b) every training path gets the device
class _Stop(Exception):
    pass


META = torch.device("meta")


@pytest.mark.parametrize(
    "name,call",
    [
        (
            "relu_min_width",
            lambda d: ch4.relu_min_width(**TINY["relu_width"], device=d),
        ),
        ("two_lengths", lambda d: ch4.two_lengths(**TINY["two_lengths"], device=d)),
        ("underparam", lambda d: ch4.underparam(**TINY["underparam"], device=d)),
        ("overparam", lambda d: ch4.overparam(**TINY["overparam"], device=d)),
        (
            "lengthgen",
            lambda d: ch4.lengthgen(**TINY["lengthgen"], activation="sine", bias=True, device=d),
        ),
        ("lengthgen_tracked", lambda d: ch4.lengthgen(**TRACKED, device=d)),
        ("budget_study", lambda d: ch4.budget_study(**TINY["budget_study"], device=d)),
        (
            "transformer",
            lambda d: ch4.transformer_baseline(**TINY["transformer"], device=d),
        ),
        ("timing", lambda d: ch4.epoch_timing(**TINY_CHECKS["timing"], device=d)),
    ],
)
def test_training_paths_initialise_and_train_on_the_requested_device(name, call, monkeypatch):
    seen = []

    def fake_train_ensemble(model, params, **kw):
        seen.append(({str(t.device) for t in params.values()}, kw.get("device")))
        raise _Stop

    monkeypatch.setattr(engine_train, "train_ensemble", fake_train_ensemble)
    with pytest.raises(_Stop):
        call(META)
    params_on, device_kw = seen[0]
    assert params_on == {"meta"} and device_kw in (
        None,
        META,
    )  # None: the engine trains where params live


def test_timing_loop_runs_on_the_requested_device(monkeypatch):
    seen = []

    class Muon(torch.optim.Muon):
        def __init__(self, params, **kw):
            params = list(params)
            seen.append({str(p.device) for p in params})
            super().__init__(params, **kw)

    monkeypatch.setattr(sweeps, "fit", lambda *a, **k: seen.append(k["device"]))
    monkeypatch.setattr(torch.optim, "Muon", Muon)
    ch4.epoch_timing(**TINY_CHECKS["timing"], device=META)
    assert seen == [META, {"meta"}]


def test_cell_provenance_names_the_device_trained_on(tmp_path, tiny_smoke):
    cell = next(c for c in ch4.cells("smoke") if c.name == "overparam")
    runs.run_cells([cell], tmp_path, scale="smoke", device="cpu", progress=False)
    prov = load_result(tmp_path / "overparam.json")["provenance"]
    assert (
        prov["device"] == "cpu"
        and prov["requested_device"] == "cpu"
        and prov["trained_on"] == ["cpu"]
    )


# --------------------------------------------------------------------------- (c) schema violations
STORED = results_dir() / "ch4" / "cells"


def _copy_cell(tmp_path, name, edit):
    obj = json.loads((STORED / f"{name}.json").read_text())
    edit(obj["data"]["value"])
    (tmp_path / f"{name}.json").write_text(json.dumps(obj))


def test_accuracy_out_of_range_names_file_and_field(tmp_path):
    _copy_cell(tmp_path, "underparam", lambda v: v["rows"][3].__setitem__("test_acc", 7.0))
    with pytest.raises(ResultFileError, match=r"underparam\.json.*rows\.3\.test_acc.*probability"):
        ch4.load_stored_cell("underparam", folder=tmp_path)
    _copy_cell(tmp_path, "lengthgen_sine_bias", lambda v: v["rows"][0].__setitem__("811", 7.0))
    with pytest.raises(ResultFileError, match=r"lengthgen_sine_bias\.json.*rows\.0\.811"):
        ch4.load_stored_cell("lengthgen_sine_bias", folder=tmp_path)


def test_missing_member_is_a_count_error(tmp_path):
    _copy_cell(tmp_path, "overparam", lambda v: v["rows"].pop())
    with pytest.raises(ResultFileError, match=r"overparam\.json.*'rows' has 11 entries.*needs 12"):
        ch4.load_stored_cell("overparam", folder=tmp_path)
    _copy_cell(tmp_path, "budget_study", lambda v: v["final_acc"]["811"].pop())
    with pytest.raises(ResultFileError, match=r"budget_study\.json.*final_acc\.811"):
        ch4.load_stored_cell("budget_study", folder=tmp_path)


def test_stored_cell_of_another_configuration_is_refused(tmp_path):
    shutil.copy(STORED / "timing.json", tmp_path / "timing.json")
    obj = json.loads((tmp_path / "timing.json").read_text())
    obj["data"]["config_hash"] = "0" * 12
    (tmp_path / "timing.json").write_text(json.dumps(obj))
    with pytest.raises(ResultFileError, match="timing.*changed"):
        ch4.load_stored_cell("timing", folder=tmp_path)


# --------------------------------------------------------------------------- (d) the stored full run
def test_every_stored_cell_is_done_and_valid():
    plan, gpu = ch4.cells("full"), ch4.cells("paper")
    assert sorted(p.stem for p in STORED.glob("*.json")) == sorted(c.name for c in plan + gpu)
    assert set(store.plan_status(plan, STORED, "full").values()) == {"done"}
    assert set(store.plan_status(gpu, STORED, "paper").values()) <= {"done", "partial"}
    for cell, scale in [(c, "full") for c in plan] + [(c, "paper") for c in gpu]:
        rec = ch4.load_stored_cell(cell.name)
        assert rec["provenance"]["scale"] == scale
    assert (
        not (STORED.parent / "training.json").exists()
        and not (STORED.parent / "constructions_relu.json").exists()
    )


def test_stored_readers_shape():
    c, t = ch4.stored_constructions(), ch4.stored_training()
    assert set(c["data"]) == {
        "exhaustive",
        "automaton",
        "float",
        "bounds",
        "relu_min_width",
        "two_lengths",
    }
    assert (
        len(t["data"]["lengthgen"])
        == len(t["data"]["lengthgen_long"])
        == len(paper.LENGTHGEN_VARIANTS)
    )
    assert [r["rows"][0]["bias"] for r in t["data"]["lengthgen"]] == [
        b for _, b in paper.LENGTHGEN_VARIANTS
    ]
    assert c["label"].startswith("stored full run: 6 cells") and t["label"].startswith(
        "stored full run: 12 cells"
    )


# --------------------------------------------------------------------------- the page's helpers
def test_page_tables_and_explorer_frames():
    import matplotlib

    matplotlib.use("Agg")
    import pandas as pd

    from lengthgen.chapters.ch4 import figures as F
    from lengthgen.widgets import frame_explorer

    df = pd.DataFrame({"n": [500, 2000], "acc": [0.91234, 1.0]}).set_index("n")
    html = styled(df).to_html()
    assert "0.912" in html and "2,000" in html and "0.91234" not in html
    assert "<details>" in collapsible(styled(df), "more")._repr_html_()
    summary = {"thm41@7": {"lengths": 3, "min_acc": 1}, "fourier@5": {"lengths": 3, "min_acc": 0.8}}
    t = F.check_frame(summary, {"lengths": "lengths", "min_acc": "min accuracy"})
    assert list(t.columns) == ["network", "p", "lengths", "min accuracy"]
    assert list(t.network) == ["Thm 4.1 (fixed m)", "Thm 4.2 (no bias)"] and list(t.p) == [7, 5]
    row = lambda b, wd, seed, acc: dict(  # noqa: E731
        activation="sine", bias=b, n=500, wd=wd, seed=seed, train=1.0, **{"14": acc, "3": 1.0}
    )
    rows = [row(False, 0.1, 1, 0.2), row(False, 0.1, 2, 0.4), row(False, 0.3, 1, 0.1)]
    best = F.lengthgen_table([{"rows": rows}, {"rows": [row(True, 0.1, 1, 0.9)]}])
    assert list(best.columns) == ["train", "3", "14"]  # lengths in order
    assert best.loc[("sine", 500), "14"] == pytest.approx(0.3)  # best wd of the seed mean
    assert best.loc[("sine+bias", 500), "14"] == 0.9
    assert "<details>" in F.lengthgen_shown([{"rows": rows}], "more")._repr_html_()
    with pytest.raises(ConfigError):
        F.explorer_network("no such network", 17, 5)
    with pytest.raises(ConfigError):
        F.explorer_network("trained sine (2k updates)", 17, 5)  # needs the stored cells

    def draw(network, m):
        return F.explorer_frame(network, m, p=7, n=20)

    constructions = [k for k in F.EXPLORER_KINDS if k not in F.TRAINED]
    fx = frame_explorer(draw, {"network": constructions, "m": [3, 5]})
    frames = list(fx.frames.values())
    assert len(frames) == 8 and len(set(frames)) == 8  # the length moves every network's frame
    # off the grid (a live explorer's slider): a length the grid does not list is drawn too
    assert fx.draw_png(network="Thm 4.2 (bias)", m=4) != fx.draw_png(network="Thm 4.2 (bias)", m=3)
    with pytest.raises(ConfigError):
        F.explorer_frame("Thm 4.2 (bias)", 0, p=7, n=20)


def test_explorer_length_changes_the_trained_networks_too():
    """Issue 26: the length control changes the figure for every network the explorer offers,
    the two trained ones (stored cells) included, and the text stays readable (9 pt)."""
    import matplotlib

    matplotlib.use("Agg")
    from lengthgen import plotting
    from lengthgen.chapters.ch4 import figures as F
    from lengthgen.chapters.ch4.experiments import stored_training

    stored = stored_training()["data"]
    for kind in F.TRAINED:
        a, b = (F.explorer_frame(kind, m, p=17, stored=stored, n=20) for m in (5, 97))
        assert plotting.displayed_text_pt(a) >= plotting.MIN_TEXT_PT
        la, lb = ([t.get_text() for t in f.axes[1].get_legend().get_texts()] for f in (a, b))
        assert la != lb and any("m = 97" in t for t in lb), (kind, lb)
