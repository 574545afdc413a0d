"""Chapter 2: sampler, banks, a tiny end-to-end run, summaries, bad input; the chapter's cells on the
runs facility (resume, device pass-through, schemas) and the stored full-scale cells."""

import json
import os
import shutil

import numpy as np
import pytest
import torch

from lengthgen.chapters import reproduce
from lengthgen.chapters.ch2 import experiments as ch2
from lengthgen.chapters.ch2 import measures
from lengthgen.chapters.ch2 import paper
from lengthgen.chapters.ch2.single_layer import PAD
from lengthgen.config import ConfigError
from lengthgen import store
from lengthgen.store import ResultFileError, results_dir


def test_test_lengths_and_banks():
    assert paper.test_lengths(51) == (51, 103, 153, 255, 409, 511)
    x, y = ch2.test_bank("index", 23, 100)
    assert x.shape == (100, 24) and torch.equal(
        y[50:], 1 - y[:50]
    )  # complemented strings, same queries
    x2, _ = ch2.test_bank("index", 23, 100)
    assert torch.equal(x, x2)  # saved bank: deterministic
    x, y = ch2.test_bank("first", 11, 100)
    assert int(y.sum()) == 50
    with pytest.raises(ValueError, match="odd"):
        ch2.test_bank("majority", 10, 100)


def test_sampler_lengths_and_pairing():
    Ns = [11, 11, 51, 51]
    samp = ch2.make_sampler("majority", Ns, [0, 0, 1, 1], batch=32)
    seen = set()
    for step in range(200):
        x, y = samp(step, None)
        n = (x[..., :-1] != PAD).sum(-1)
        assert torch.equal(x[0], x[1]) and torch.equal(x[2], x[3])  # paired members share batches
        assert int(n[0, 0]) <= 11 and int(n[2, 0]) <= 51 and int(n[0, 0]) % 2 == 1
        ones = (x[..., :-1] == 1).sum(-1)
        assert torch.equal(y, (ones >= (n + 1) // 2).long())
        seen.add(int(n[0, 0]))
    assert seen == set(range(1, 12, 2))
    x, y = ch2.make_sampler("index", [5], [0], batch=64)(3, None)
    k = x[0, :, -1].long()
    assert torch.equal(y[0], x[0].gather(-1, (k - 1)[:, None]).squeeze(-1).long())


def test_tiny_run_and_summaries():
    r = ch2.run_experiment(
        "index_posnorm",
        seeds=(2000, 2001),
        Ns=(5,),
        steps=20,
        every=10,
        val_size=20,
        test_size=20,
        batch=16,
        progress=False,
    )
    assert len(r["members"]) == 4 and {m["variant"] for m in r["members"]} == {
        "pos",
        "norm",
    }
    m, lo, hi = measures.seed_summary(r, "pos", 5, n_boot=200)
    assert lo <= m <= hi
    ca = measures.coefficient_analysis(r, n_perm=50)
    rho, p = ca["chi"]["rho"], ca["chi"]["p"]
    assert (np.isnan(rho) and np.isnan(p)) or (-1 <= rho <= 1 and 0 < p <= 1)
    p = ch2.run_experiment(
        "parity_gen",
        seeds=(2000,),
        Ns=(5,),
        steps=10,
        every=5,
        val_size=10,
        test_size=10,
        batch=8,
        progress=False,
    )
    assert p["members"][0]["sign_changes"] <= p["members"][0]["kinks"] + 1


def test_bad_input():
    with pytest.raises(ValueError, match="unknown experiment"):
        ch2.run_experiment(
            "sorting",
            seeds=(1,),
            Ns=(5,),
            steps=1,
            every=1,
            val_size=2,
            test_size=2,
            batch=2,
        )
    with pytest.raises(ValueError, match="N must be an integer"):
        paper.test_lengths(0)
    kw = dict(seeds=(1,), Ns=(5,), steps=1, val_size=2, test_size=2, batch=2)
    with pytest.raises(ConfigError, match="validation every must be"):
        ch2.run_experiment("first_posnorm", **kw, every=0)


def test_cap_note():
    res = {
        "steps_cap": 100,
        "members": [
            {"variant": "pos", "stop_step": 100, "best_val_acc": 1.0},
            {"variant": "pos", "stop_step": 50, "best_val_acc": 1.0},
        ],
    }
    assert measures.cap_note(res, "pos").startswith("1/2 members were cut")
    assert measures.cap_note(
        {
            **res,
            "steps_cap": 30_000,
            "members": [{**m, "stop_step": 30_000} for m in res["members"]],
        },
        "pos",
    ).startswith("the paper's protocol: 2/2 members ran all 30000 updates")
    res["members"][0]["stop_step"] = 60
    assert "not the cause" in measures.cap_note(res, "pos")


# --------------------------------------------------------------------------- the runs facility
TINY = {
    "seeds": (2000, 2001),
    "Ns": (5,),
    "steps": 20,
    "every": 10,
    "val_size": 20,
    "test_size": 20,
    "batch": 16,
}
STORED = results_dir() / "ch2" / "cells"


def test_cells_plan():
    full = ch2.cells("full")
    names = [c.name for c in full]
    assert names == [*ch2.EXPERIMENTS, "volume_scans"]
    for c in full[:-1]:
        kw = c.kwargs
        assert kw["steps"] == paper.STORED_STEP_CAPS[c.name] and kw["Ns"] == list(
            paper.STORED_NS[c.name]
        )
        assert (
            kw["seeds"] == list(paper.SEEDS) and kw["batch"] == paper.BATCH and kw["lr"] == paper.LR
        )
        # the A_norm map is part of the configuration of the experiments that train A_norm only:
        # the paper's map, except the ablation with our earlier misread map
        expect = (
            None
            if "norm" not in kw["variants"]
            else ("misread" if c.name == "index_norm_misread" else "sqrt")
        )
        assert kw["norm_map"] == expect, c.name
    assert full[-1].kwargs["norm_map"] == "sqrt"
    with pytest.raises(ConfigError, match="norm_map applies to A_norm only"):
        ch2.train_experiment(
            **{**ch2.experiment_config("majority_gen", **TINY), "norm_map": "sqrt"},
            progress=False,
        )
    assert [c.name for c in ch2.cells("smoke")] == list(ch2.SMOKE_EXPERIMENTS)
    with pytest.raises(ValueError, match="unknown scale"):
        ch2.cells("huge")


def test_reproduce_smoke_writes_then_resumes(tmp_path, monkeypatch):
    monkeypatch.setattr(ch2, "SMOKE", TINY)
    paths = reproduce("ch2", scale="smoke", out=tmp_path, only=["majority_gen"], progress=False)
    assert paths == [tmp_path / "cells" / "majority_gen.json"]
    obj = store.load_cell(tmp_path / "cells", "majority_gen", scale="smoke")
    assert obj["data"]["kwargs"]["steps"] == 20 and len(obj["data"]["value"]["members"]) == 2
    assert obj["provenance"]["device"] == "cpu" and obj["provenance"]["scale"] == "smoke"
    ch2.load_experiment(
        "majority_gen", tmp_path / "cells", scale="smoke"
    )  # valid against its schema
    mtime = os.stat(paths[0]).st_mtime_ns
    import lengthgen.engine.train as train

    calls = []
    monkeypatch.setattr(
        train, "train_ensemble", lambda *a, **kw: calls.append(kw)
    )  # a recompute would call it
    assert (
        reproduce("ch2", scale="smoke", out=tmp_path, only=["majority_gen"], progress=False)
        == paths
    )
    assert calls == [] and os.stat(paths[0]).st_mtime_ns == mtime


def test_device_reaches_the_trainer(tmp_path, monkeypatch):
    import lengthgen.engine.train as train

    monkeypatch.setattr(ch2, "SMOKE", TINY)
    seen = {}
    real_train, real_eval = train.train_ensemble, train.evaluate_ensemble

    def spy_train(*a, **kw):
        seen["train"] = kw["device"]
        seen["params"] = {str(t.device) for t in a[1].values()}
        return real_train(*a, **kw)

    def spy_eval(*a, **kw):
        seen["eval"] = kw["device"]
        return real_eval(*a, **kw)

    monkeypatch.setattr(train, "train_ensemble", spy_train)
    monkeypatch.setattr(train, "evaluate_ensemble", spy_eval)
    reproduce(
        "ch2",
        scale="smoke",
        device="cpu",
        out=tmp_path,
        only=["majority_gen"],
        progress=False,
    )
    assert seen == {"train": "cpu", "params": {"cpu"}, "eval": "cpu"}
    prov = store.load_cell(tmp_path / "cells", "majority_gen")["provenance"]
    assert prov["requested_device"] == "cpu" and prov["device"] == "cpu"
    seen.clear()
    ch2.run_experiment("majority_gen", device="auto", progress=False, **TINY)  # "auto" is resolved
    assert seen["train"] in ("cpu", "cuda") and seen["train"] == seen["eval"]


def _copy_cell(tmp_path, name):
    shutil.copy(STORED / f"{name}.json", tmp_path / f"{name}.json")
    return tmp_path / f"{name}.json"


def _edit(path, fn):
    obj = json.loads(path.read_text())
    fn(obj["data"]["value"])
    path.write_text(json.dumps(obj))


def test_schema_violations_name_file_and_field(tmp_path):
    path = _copy_cell(tmp_path, "majority_gen")
    assert len(ch2.load_experiment("majority_gen", tmp_path)["data"]["members"]) == 20
    _edit(path, lambda v: v["members"][3]["test"].__setitem__("511", 7.0))
    with pytest.raises(
        ResultFileError,
        match=r"majority_gen\.json: field 'members\.3\.test\.511' must be a probability",
    ):
        ch2.load_experiment("majority_gen", tmp_path)
    path = _copy_cell(tmp_path, "majority_gen")
    _edit(path, lambda v: v["members"].pop())
    with pytest.raises(
        ResultFileError,
        match=r"majority_gen\.json: field 'members' has 19 entries, but the declared protocol needs 20",
    ):
        ch2.load_experiment("majority_gen", tmp_path)
    path = _copy_cell(tmp_path, "volume_scans")
    _edit(path, lambda v: v["mc"]["pos/index"][0].__setitem__("fraction", -0.5))
    with pytest.raises(
        ResultFileError, match=r"volume_scans\.json: field 'mc\.pos/index\.0\.fraction'"
    ):
        ch2.load_volume_scans(tmp_path)
    with pytest.raises(ValueError, match="unknown experiment"):
        ch2.load_experiment("sorting", tmp_path)


def test_stored_cells_are_done_and_valid():
    plan = ch2.cells("full")
    stored = {p.stem for p in STORED.glob("*.json")}
    assert stored == {c.name for c in plan}, (
        "every stored cell is a cell of the full plan and vice versa"
    )
    status = store.plan_status(plan, STORED, "full")
    assert set(status.values()) == {"done"}, status
    loaded = ch2.load_runs()
    assert list(loaded) == list(ch2.EXPERIMENTS)
    for name, (value, prov) in loaded.items():
        assert prov["scale"] == "full" and value["experiment"] == name
    assert ch2.load_volume_scans()["provenance"]["scale"] == "full"
    # the one schema convention, schema(name, scale): every stored cell passes its schema
    from lengthgen.store import validate

    kw = {c.name: c.kwargs for c in plan}
    for name, (value, _) in loaded.items():
        validate(value, ch2.schema(name, "full"), name, kw[name])
    vol = ch2.load_volume_scans()["data"]
    validate(vol, ch2.schema("volume_scans"), "volume_scans", kw["volume_scans"])
    assert ch2.schema("majority_gen", "smoke") == ch2.EXPERIMENT_SCHEMA
    assert ch2.schema("sorting") is None


# --------------------------------------------------------------------------- the chapter's figures
def _legend_labels(fig):
    labels = []
    for leg in [*fig.legends, *(ax.get_legend() for ax in fig.axes)]:
        if leg is not None:
            labels += [t.get_text() for t in leg.get_texts()]
    return labels


def test_figures_fit_the_column_and_overlay_the_paper():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from lengthgen.chapters.ch2 import figures as f2

    loaded = ch2.load_runs()
    t2, t3 = f2.accuracy_table(loaded, "table2"), f2.accuracy_table(loaded, "table3")
    assert (
        len(t2) == 20
        and len(t3) == 10
        and len(f2.accuracy_table(loaded, "table1")) == len(paper.PAPER_T1)
    )
    row = t2[(t2["N"] == 51) & (t2["model"] == "A_norm")].iloc[0]
    assert (row["paper"], row["paper lo"], row["paper hi"]) == paper.PAPER_T2[("index", "norm")][51]
    assert row["run"] == "index_posnorm" and row["ours lo"] <= row["ours"] <= row["ours hi"]
    assert "A_norm map" not in t2  # every A_norm row reads a run with the paper's map
    html = f2.styled_accuracy_table(t2, "Table 2").to_html()
    assert "85.1 (80.2–90.1)" in html and "Table 2" in html
    scan = ch2.load_volume_scans()["data"]
    figs = [
        f2.index_table2_figure(t2),
        f2.majority_figure(t2, t3),
        f2.curves_figure(loaded),
        f2.windows_figure(scan["widths"]),
        f2.mc_figure(scan["mc"]),
    ]
    for fig in figs:
        assert fig.get_figwidth() <= 7.0
        labels = _legend_labels(fig)
        assert len(labels) == len(set(labels)), labels
    for fig in figs[:3]:
        assert any("paper" in lab for lab in _legend_labels(fig))
    assert "A_norm, misread map (ablation): ours" in _legend_labels(figs[2])
    plt.close("all")


def test_attention_frames_differ():
    import matplotlib

    matplotlib.use("Agg")
    from lengthgen.chapters.ch2 import figures as f2
    from lengthgen.chapters.ch2 import volume as vo
    from lengthgen.widgets import frame_explorer

    C = vo.center("pos", "index", 8, eta=1.0)
    dirs = {v: {c: vo.direction(v, c, C) for c in ("chi", "ell")} for v in ("pos", "norm")}
    fx = frame_explorer(
        lambda chi, k: f2.attention_panels(C, dirs, chi=chi, k=k),
        {"chi": [0.0, 3e-4], "k": [40]},
    )
    a, b = fx.frames[(0.0, 40)], fx.frames[(3e-4, 40)]
    assert a != b
