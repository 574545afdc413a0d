"""Chapter 3 study plumbing: data and labels, masked loss, banks, plan order, statistics; the chapter
on the runs facility (resume, Dask, device pass-through, schemas) and its stored full-scale cells."""

import importlib.util
import json
import shutil

import pytest
import torch

import lengthgen.chapters
from lengthgen.chapters.ch3 import experiments as ch3
from lengthgen.chapters.ch3 import figures as fig3
from lengthgen.chapters.ch3 import measures as m3
from lengthgen.chapters.ch3 import training as tr3
from lengthgen.chapters.ch3 import paper
from lengthgen.chapters.ch3.experiments import NOT_RUN
from lengthgen.chapters.ch3.realizability import MAIN_TASKS, STUDY_LENGTHS
from lengthgen.config import ConfigError
from lengthgen.engine import runs
from lengthgen.nn.positional import ENCODINGS
from lengthgen import store
from lengthgen.store import ResultFileError, load_result, results_dir
from lengthgen.tables import styled


def _row(tier, e, t, s, L, acc, train_acc):
    """One measurement row of the trained study."""
    return dict(tier=tier, encoding=e, task=t, seed=s, L=L, acc=acc, train_acc=train_acc)


def _table(tasks, alpha):
    """A synthetic α table: ``alpha(encoding, task)`` at every study length."""
    return {f"{e}/{t}": dict.fromkeys(STUDY_LENGTHS, alpha(e, t)) for e in ENCODINGS for t in tasks}


def test_target_table_and_labels():
    T = tr3.target_table(("prev", "copy"), 20)
    assert T.shape == (2, 21, 20)
    assert T[0, 12, :4].tolist() == [-1, 0, 1, 2] and T[0, 12, 12:].eq(-1).all()
    assert T[1, 10, 5:10].tolist() == [0, 1, 2, 3, 4]
    x = torch.tensor([[7, 3, 9, 4]])
    y = tr3.labels(x, torch.tensor([[-1, 0, 1, 2]]))
    assert y.tolist() == [[tr3.IGNORE, 7, 3, 9]]


def test_sampler_is_per_member_and_shares_the_length_schedule():
    s = tr3.make_sampler(("prev", "first"), batch=4, steps=10, length_seed=0)
    g = [torch.Generator().manual_seed(1), torch.Generator().manual_seed(2)]
    x, y = s(0, g)
    assert x.shape[:2] == (2, 4) and 10 <= x.shape[2] <= 20 and y.shape == x.shape
    n = x.shape[2]
    assert torch.equal(y[0, :, 1:], x[0, :, :-1]) and (y[0, :, 0] == tr3.IGNORE).all()
    assert torch.equal(y[1], x[1, :, :1].expand(4, n))
    x1, _ = tr3.make_sampler(("first",), batch=4, steps=10)(0, [torch.Generator().manual_seed(2)])
    assert torch.equal(x1[0], x[1])  # a member's data do not depend on its ensemble


def test_masked_loss_and_accuracy():
    out = torch.zeros(2, 1, 3, 5)
    out[0, 0, 1, 2] = 10.0
    y = torch.tensor([[[tr3.IGNORE, 2, tr3.IGNORE]], [[tr3.IGNORE, tr3.IGNORE, tr3.IGNORE]]])
    acc = tr3.masked_acc(out, y)
    assert acc.tolist() == [1.0, 0.0]
    ce = tr3.masked_ce(out, y)
    assert ce[0] < 1e-3 and ce[1] == 0


def test_eval_banks_score_only_extrapolation_rows():
    b = tr3.eval_banks(("prev", "copy"), (30,), n_eval=3, train_n=2)
    x, y = b[30]
    assert x.shape == (2, 3, 30)
    assert (y[:, :, :20] == tr3.IGNORE).all() and (y[0, :, 20:] != tr3.IGNORE).all()
    assert torch.equal(y[1, :, 20:], x[1, :, 5:15])  # copy at L = 30: t = i - 15
    assert ("train", 10) in b and ("train", 20) in b


def test_study_plan_order():
    plan = ch3.study_plan("full")
    assert len(plan) == 3 * 5 * 5 * 2
    assert plan[0]["tier"] == "1L1H" and plan[0]["seed"] == 0 and plan[0]["tasks"] == MAIN_TASKS
    assert len({p["key"] for p in plan}) == len(plan)
    assert all(p["tier"] == "1L1H" and p["tasks"] == MAIN_TASKS for p in plan[:25])  # all seeds
    assert [p["seed"] for p in plan[:25:5]] == [0, 1, 2, 3, 4]
    deep = [("2L4H", 0), ("4L4H", 0)]  # deep tiers, seed 0
    assert [(p["tier"], p["seed"]) for p in plan[25:35:5]] == deep
    assert all(p["tier"] == "1L1H" and p["tasks"] == ("pos2", "pos5") for p in plan[35:60])
    assert plan[60]["tier"] == "2L4H" and plan[60]["seed"] == 1 and plan[60]["tasks"] == MAIN_TASKS
    with pytest.raises(ConfigError, match="huge"):
        ch3.study_plan("huge")


def test_cells_follow_the_plan_with_the_whole_configuration():
    cs = ch3.cells("full")
    names = [c.name for c in cs[:6]]
    singles = ["alpha_tables", "alpha_min_norm_exact", "theory", "alpha_lr_match"]
    assert names == singles + ["prop2_old_key", "lr_grid"]
    assert cs[5].kwargs == {"lrs": list(paper.LR_GRID)} and 0.05 in paper.LR_GRID
    lr_kw = cs[3].kwargs
    assert lr_kw["lrs"] == list(ch3.LR_MATCH) and lr_kw["fit"] == paper.CE_FIT
    assert lr_kw["tasks"] == list(MAIN_TASKS) and lr_kw["lengths"] == list(STUDY_LENGTHS)
    assert {0.06, 0.07, 0.08, 0.09, 0.1, 0.11, 0.12} <= set(paper.LR_GRID)
    assert cs[1].kwargs["lengths"] == cs[0].kwargs["lengths"]
    cs = cs[:5] + cs[6:]
    keys = [g["key"] for g in ch3.study_plan("full")]
    assert [c.name for c in cs[5 : 5 + len(keys)]] == keys  # then App. F–H (robustness)
    kw = cs[5].kwargs
    assert (kw["steps"], kw["batch"], kw["lr"], kw["weight_decay"]) == (2000, 64, 3e-4, 0.01)
    assert kw["lengths"] == list(STUDY_LENGTHS) and kw["eval_n"] == 256 and kw["train_eval_n"] == 22
    assert kw["data_seed_offset"] == paper.DATA_SEED_OFFSET
    assert kw["eval_seed_offset"] == paper.EVAL_SEED_OFFSET
    assert cs[5].seeds == (kw["seed"],)
    assert cs[2].kwargs == {"n_trials": 20_000, "n_random": 20_000}
    assert cs[0].kwargs["fit"] == paper.CE_FIT
    assert cs[0].kwargs["lengths"] == [30, 40, 50, 60, 80, 128, 256, 512]
    smoke = singles + ["prop2_old_key", "1L1H__rope__main__seed0"]
    assert [c.name for c in ch3.cells("smoke")] == smoke


def test_study_stats_on_synthetic_rows():
    good = (("rope", "prev"), ("learned_abs", "first"))
    A = _table(MAIN_TASKS, lambda e, t: float((e, t) in good))
    rows = [
        _row("1L1H", e, t, s, L, 0.95 if (e, t) in good else 0.1, 0.9)
        for e in ("rope", "learned_abs", "nope")
        for t in ("prev", "first")
        for s in (0, 1)
        for L in STUDY_LENGTHS
    ]
    st = m3.study_stats(rows, A, "1L1H", n_perm=200, n_boot=200)
    assert st["n_cells"] == 6 and st["n_pos"] == 2 and st["auc"] == 1.0 and st["precision"] == 1.0
    assert st["auc_p"] < 0.2 and st["n_learnable"] == 6
    c = m3.cell_table(rows, A, "1L1H", 60)
    assert c["rope/prev"]["lg_mean"] == 0.95 and c["rope/prev"]["n_seeds"] == 2


TINY_STUDY = dict(
    steps=3, batch=8, lr=3e-4, weight_decay=0.01, lengths=(30,), eval_n=4, train_eval_n=2
)


def test_tiny_trained_group_and_argument_checks():
    rows = ch3.train_cell_group("1L1H", "rope", ("prev", "first"), 0, **TINY_STUDY)
    assert len(rows) == 2 and {r["task"] for r in rows} == {"prev", "first"}
    assert all(0 <= r["acc"] <= 1 and 0 <= r["train_acc"] <= 1 for r in rows)
    kw = dict(tier="1L1H", encoding="rope", seed=0, steps=3, tasks=["prev", "first"], lengths=[30])
    assert ch3.check_group(rows, kw) is rows
    for bad, match in (
        (dict(tier="9L9H"), "9L9H"),
        (dict(tasks=("swap",)), "swap"),
        (dict(encoding="xpos"), "xpos"),
        (dict(steps=0), "steps"),
        (dict(lengths=(15,)), "test length"),
        (dict(device="tpu"), "tpu"),
        (dict(seed=-1), "seed"),
    ):
        args = dict(tier="1L1H", encoding="rope", tasks=("prev",), seed=0, **TINY_STUDY) | bad
        pos = [args.pop(k) for k in ("tier", "encoding", "tasks", "seed")]
        with pytest.raises(ConfigError, match=match):
            ch3.train_cell_group(*pos, **args)


# --------------------------------------------------------------------------- the chapter on the runs facility
#: A tiny protocol (seconds): every cell kind, four trained groups.
TINY = {
    "alpha": {
        "encodings": ("rope", "learned_abs"),
        "tasks": ("prev", "first"),
        "lengths": (30,),
        "L0": 20,
        "fit": {"steps": 20, "lr": 0.05, "weight_decay": 1e-4},
    },
    "theory": {"n_trials": 50, "n_random": 50},
    "study": dict(TINY_STUDY, lengths=(30, 40), L0=20)
    | {"tiers": ("1L1H",), "encodings": ("rope", "nope"), "seeds": (0, 1)}
    | {"groups": {"main": ("prev", "first")}},
}
TINY_NAMES = ["alpha_tables", "alpha_min_norm_exact", "theory", "alpha_lr_match", "prop2_old_key"]
TINY_NAMES += [f"1L1H__{e}__main__seed{s}" for s in (0, 1) for e in ("rope", "nope")]


@pytest.fixture
def tiny(monkeypatch):
    monkeypatch.setitem(paper.PROTOCOL, "smoke", TINY)
    assert [c.name for c in ch3.cells("smoke")] == TINY_NAMES


def _values(folder):
    return {p.stem: store.cell_value(folder, p.stem) for p in sorted(folder.glob("*.json"))}


def test_reproduce_writes_every_cell_resumes_and_dask_is_bit_identical(tiny, tmp_path, monkeypatch):
    paths = lengthgen.chapters.reproduce("ch3", scale="smoke", out=tmp_path, progress=False)
    assert sorted(p.stem for p in paths) == sorted(TINY_NAMES)
    vals = _values(tmp_path / "cells")
    assert set(vals) == set(TINY_NAMES)
    assert set(vals["alpha_tables"]) == {"ce", "min_norm"}
    assert vals["alpha_tables"]["ce"]["learned_abs/first"] == {"30": 1.0}
    g = vals["1L1H__nope__main__seed1"]
    assert len(g) == 4 and {r["seed"] for r in g} == {1}
    prov = load_result(tmp_path / "cells" / "1L1H__nope__main__seed1.json")["provenance"]
    assert prov["scale"] == "smoke" and prov["seeds"] == [1]
    assert prov["device"] == "cpu" and prov["trained_on"] == ["cpu"]
    theory = load_result(tmp_path / "cells" / "theory.json")["provenance"]
    assert theory["trained_on"] == []  # no training there
    # the Dask executor gives the same cells bit for bit (a trained group of each encoding and a
    # Monte-Carlo cell; tests/test_runs.py covers the executors on their own)
    if importlib.util.find_spec("dask.distributed") is not None:
        only = ["prop2_old_key", "1L1H__*__seed1"]
        run = dict(executor="dask", scheduler="local", workers=2, progress=False)
        lengthgen.chapters.reproduce("ch3", scale="smoke", out=tmp_path / "dask", only=only, **run)
        dask = _values(tmp_path / "dask" / "cells")
        assert set(dask) == {"prop2_old_key", "1L1H__rope__main__seed1", "1L1H__nope__main__seed1"}
        assert all(dask[n] == vals[n] for n in dask)
        prov = load_result(tmp_path / "dask" / "cells" / "1L1H__rope__main__seed1.json")
        assert prov["provenance"]["executor"] == "dask" and prov["provenance"]["device"] == "cpu"

    def boom(*a, **k):
        raise AssertionError("a stored cell was recomputed")

    monkeypatch.setattr(runs, "_call", boom)
    again = lengthgen.chapters.reproduce("ch3", scale="smoke", out=tmp_path, progress=False)
    assert sorted(again) == sorted(paths) and _values(tmp_path / "cells") == vals


def test_device_reaches_the_training(tiny, tmp_path, monkeypatch):
    import lengthgen.engine.train as engine

    seen = {"train": [], "eval": []}
    real_train, real_eval = engine.train_ensemble, engine.evaluate_ensemble

    def train(*a, device=None, **k):
        seen["train"].append(device)
        return real_train(*a, device=device, **k)

    def evaluate(*a, device=None, **k):
        seen["eval"].append(device)
        return real_eval(*a, device=device, **k)

    monkeypatch.setattr(engine, "train_ensemble", train)
    monkeypatch.setattr(engine, "evaluate_ensemble", evaluate)
    received = []
    real_group = ch3.train_cell_group

    def group(tier, encoding, tasks, seed, *, device, progress, **kw):
        received.append(device)
        return real_group(tier, encoding, tasks, seed, device=device, progress=progress, **kw)

    monkeypatch.setattr(ch3, "train_cell_group", group)
    run = dict(scale="smoke", out=tmp_path, device="auto", only="1L1H__rope__*", progress=False)
    lengthgen.chapters.reproduce("ch3", **run)
    assert received == ["auto", "auto"]  # what reproduce was given ...
    want = "cuda" if torch.cuda.is_available() else "cpu"
    assert seen["train"] == seen["eval"] == [want, want]  # ... resolved and used for training
    prov = load_result(tmp_path / "cells" / "1L1H__rope__main__seed0.json")["provenance"]
    assert prov["requested_device"] == "auto" and prov["trained_on"]
    assert all(d.startswith(want) for d in prov["trained_on"])
    if not torch.cuda.is_available():
        with pytest.raises(ConfigError, match="cuda"):
            real_group("1L1H", "rope", ("prev",), 0, device="cuda", **TINY_STUDY)


# --------------------------------------------------------------------------- stored full-scale cells
CELLS = results_dir() / "ch3" / "cells"


def test_schema_violation_names_file_and_field(tmp_path):
    name = "1L1H__rope__main__seed0"
    shutil.copy(CELLS / f"{name}.json", tmp_path)
    obj = json.loads((tmp_path / f"{name}.json").read_text())
    obj["data"]["value"][3]["acc"] = 7.0
    (tmp_path / f"{name}.json").write_text(json.dumps(obj))
    with pytest.raises(ResultFileError, match=rf"{name}\.json.*'3\.acc'.*probability"):
        ch3.load(name, folder=tmp_path)
    obj["data"]["value"][3]["acc"] = 0.5
    obj["data"]["value"][4]["seed"] = 3
    (tmp_path / f"{name}.json").write_text(json.dumps(obj))
    with pytest.raises(ResultFileError, match=rf"{name}\.json.*'4\.seed' is 3"):
        ch3.load(name, folder=tmp_path)
    del obj["data"]["value"][4]
    (tmp_path / f"{name}.json").write_text(json.dumps(obj))
    with pytest.raises(ResultFileError, match="differ from the declared 7 tasks"):
        ch3.load(name, folder=tmp_path)
    shutil.copy(CELLS / "alpha_tables.json", tmp_path)
    obj = json.loads((tmp_path / "alpha_tables.json").read_text())
    del obj["data"]["value"]["ce"]["rope/prev"]
    (tmp_path / "alpha_tables.json").write_text(json.dumps(obj))
    with pytest.raises(ResultFileError, match="alpha_tables.json.*'ce' has 44 entries"):
        ch3.load("alpha_tables", folder=tmp_path)
    with pytest.raises(ConfigError, match="no chapter-3 cell 'study_rows'"):
        ch3.load("study_rows")


def test_every_stored_cell_is_done_and_valid():
    status = store.plan_status(ch3.cells("full"), CELLS, "full")
    stored = sorted(p.stem for p in CELLS.glob("*.json"))
    assert stored and all(status[n] == "done" for n in stored)
    singles = ("alpha_tables", "alpha_min_norm_exact", "theory", "alpha_lr_match", "prop2_old_key")
    singles += ("lr_grid",)
    robust = {c.name for c in ch3.robustness_cells()}
    groups = [n for n in stored if n not in singles and n not in robust]
    assert set(singles) <= set(stored) and len(groups) == 150
    assert {n for n, s in status.items() if s == "missing"} <= NOT_RUN
    for n in stored:
        ch3.load(n)
    rows = ch3.study_rows()
    # 3,375 = the main study's 2,625 measurements (3 tiers x 5 PEs x 7 tasks x 5 seeds x 5 lengths, §6)
    # + App. E's 750 pos2/pos5 measurements (3 tiers x 5 PEs x 2 tasks x 5 seeds x 5 lengths), of which
    # Table 6 is the 250 of tier 1L1H
    main = [r for r in rows if r["task"] in MAIN_TASKS]
    pos = [r for r in rows if r["task"] not in MAIN_TASKS]
    assert len(main) == paper.N_MEASUREMENTS["main"] == 2625
    assert len(pos) == paper.N_MEASUREMENTS["pos"] == 750
    assert {r["tier"] for r in pos} == {"1L1H", "2L4H", "4L4H"}
    assert sum(r["tier"] == "1L1H" for r in pos) == paper.N_MEASUREMENTS["pos_1L1H"] == 250
    assert len(rows) == 3375 and len(ch3.stored_groups()) == 150
    assert fig3.study_label(ch3.stored_groups()).startswith(
        "stored full run: 150 of 150 planned groups"
    )


def test_selection_ablation_ranks_rows_of_learnable_cells():
    cells = [("rope", "prev", 0.95, 0.99), ("nope", "first", 0.1, 0.95)]
    cells += [("alibi", "prev", 0.5, 0.9), ("rope", "copy", 0.3, 0.2)]
    rows = [
        _row("1L1H", e, t, s, L, acc + 0.01 * s, tr)
        for e, t, acc, tr in cells
        for L in (30, 60)
        for s in (0, 1)
    ]
    good = {
        "rope/prev": {30: 1.0, 60: 1.0},
        "nope/first": {30: 0.0, 60: 0.0},
        "alibi/prev": {30: 0.5, 60: 0.4},
        "rope/copy": {30: 0.9, 60: 0.9},
    }
    bad = {k: {L: 1 - a for L, a in v.items()} for k, v in good.items()}
    out = m3.selection_ablation(rows, {"good": good, "bad": bad})
    assert out["n_cells"] == 3 and out["n_rows"] == 6  # rope/copy is not learnable (train 0.2)
    assert out["good"] > 0.9 and out["bad"] < -0.9
    with pytest.raises(ValueError):
        m3.selection_ablation(rows, {})


def _depth_rows():
    """Synthetic 2L4H rows: α = 1 for rope/prev; alibi/first rescued by content (α 0, LG 0.9)."""
    A = _table(MAIN_TASKS, lambda e, t: 1.0 if (e, t) == ("rope", "prev") else 0.0)
    lg = {("rope", "prev"): 0.95, ("alibi", "first"): 0.9, ("nope", "prev"): 0.49}
    lg[("rope", "copy")] = 0.1
    rows = [
        _row("2L4H", e, t, s, L, a, 0.95)
        for (e, t), a in lg.items()
        for s in (0, 1)
        for L in STUDY_LENGTHS
    ]
    return A, rows


def test_content_channel_lists_low_alpha_cells_that_generalize():
    A, rows = _depth_rows()
    cc = m3.content_channel(rows, A, "2L4H")
    assert list(cc) == ["alibi/first"]  # nope/prev (0.49) is under the 0.5 split
    assert cc["alibi/first"]["lg"] == pytest.approx(0.9) and cc["alibi/first"]["seeds"] == [0, 1]
    assert list(m3.content_channel(rows, A, "2L4H", lg_min=0.4)) == ["alibi/first", "nope/prev"]
    assert m3.content_channel(rows, A, "1L1H") == {}
    with pytest.raises(ConfigError, match="lg_min"):
        m3.content_channel(rows, A, "2L4H", lg_min=1.5)
    with pytest.raises(ConfigError, match="alpha_max"):
        m3.content_channel(rows, A, "2L4H", alpha_max=-0.1)
    with pytest.raises(ConfigError, match="3L3H"):
        m3.content_channel(rows, A, "3L3H")


def test_depth_figures_have_labelled_axes():
    import matplotlib.pyplot as plt

    A, rows = _depth_rows()
    st = {"2L4H": m3.study_stats(rows, A, "2L4H", n_perm=100, n_boot=100), "4L4H": {"n_cells": 0}}
    fig = fig3.plot_alpha_vs_lg(st)
    assert len([a for a in fig.axes if a.has_data()]) == 1 and fig.axes[0].get_xlabel()
    fig2 = fig3.plot_depth_trend(st, paper={"1L1H": (0.9, 0.925), "2L4H": (0.31, 0.94)})
    assert fig2.axes[0].get_ylabel()
    plt.close("all")


def test_cell_summary_averages_over_seeds_and_lengths():
    A, rows = _depth_rows()
    c = m3.cell_summary(rows, "2L4H", A)
    assert set(c) == {"rope/prev", "alibi/first", "nope/prev", "rope/copy"}
    assert c["rope/prev"]["alpha"] == 1.0 and c["rope/prev"]["lg"] == pytest.approx(0.95)
    assert c["rope/prev"]["seeds"] == [0, 1] and c["rope/prev"]["lengths"] == sorted(STUDY_LENGTHS)
    assert m3.cell_summary(rows, "2L4H", A, tasks=ch3.POS_TASKS) == {}
    with pytest.raises(ConfigError, match="9L9H"):
        m3.cell_summary(rows, "9L9H", A)
    with pytest.raises(ConfigError, match="swap"):
        m3.cell_summary(rows, "2L4H", A, tasks=("swap",))


def test_study_stats_on_the_interior_position_tasks():
    A = _table(ch3.POS_TASKS, lambda e, t: float(e in ("learned_abs", "sinusoidal")))
    rows = [
        _row("1L1H", e, t, 0, L, *((0.99, 1.0) if e == "learned_abs" else (0.15, 0.3)))
        for e in ("learned_abs", "rope")
        for t in ch3.POS_TASKS
        for L in STUDY_LENGTHS
    ]
    st = m3.study_stats(rows, A, "1L1H", tasks=ch3.POS_TASKS, n_perm=100, n_boot=100)
    assert st["n_cells"] == 4 and st["n_pos"] == 2 and st["auc"] == 1.0 and st["precision"] == 1.0
    # default: main tasks only
    assert m3.study_stats(rows, A, "1L1H", n_perm=100, n_boot=100)["n_cells"] == 0


def test_page_figures_and_tables_fit_the_column():
    """The chapter's figures are at most 7 in wide with labelled axes; the theory table and the
    styled tables render as HTML."""
    import matplotlib.pyplot as plt
    import pandas as pd

    tabs = {
        r: {"rope/prev": {30: 1.0, 60: 0.5}, "nope/first": {30: 0.0, 60: 0.25}}
        for r in ("ce", "min_norm")
    }
    fig = fig3.plot_alpha_tables(tabs, [("rope/prev", 60)])
    assert fig.get_figwidth() <= 7.0 + 1e-9 and all(a.get_xlabel() for a in fig.axes)
    fig = fig3.plot_heatmaps({"rope/prev": 1.0}, {"rope/prev": 0.9}, paper_lg60={"rope/prev": 0.87})
    assert fig.get_figwidth() <= 7.0 + 1e-9
    assert any(t.get_text() == "(0.87)" for t in fig.axes[1].texts)
    fig, sim = fig3.show_transfer("rope", "prev", 30)
    assert fig.get_figwidth() <= 7.0 and sim.alpha == 1.0
    plt.close("all")
    html = styled(pd.DataFrame({"a": [0.12345], "b": [1]}), 2, index=False).to_html()
    assert "0.12" in html and "0.123" not in html


def test_lr_grid_points_and_match_counts():
    """The learning-rate analysis: 37 paper α values with their printed decimals; the match counts
    use rule 2 per value (half a unit of its last decimal) and the fixed-offset table its minimum."""
    pts = ch3.paper_alpha_points()
    assert len(pts) == 37 and sum(p["decimals"] == 3 for p in pts) == 2
    assert {p["source"] for p in pts} == {"Prop. 4(a)", "App. A.4", "Table 3", "App. I", "App. E"}
    lrs = [0.05, 0.1]
    shift = {0.05: 0.0, 0.1: 0.004}
    bump = lambda p, lr: shift[lr] if p["decimals"] == 2 else 0.001
    data = {
        "lrs": lrs,
        "points": [
            {**p, "lr": lr, "alpha": min(1.0, p["paper"] + bump(p, lr))} for lr in lrs for p in pts
        ],
        "fixed": [
            {"lr": lr, "task": t, "L": L, "alpha": 1.0 if lr == 0.05 or L < 512 else 0.9}
            for lr in lrs
            for t in ch3.FIXED_OFFSET_TASKS
            for L in (30, 512)
        ],
    }
    m = fig3.lr_matches(data)
    assert m.loc[0.05, "matched (of 37)"] == 35 and m.loc[0.1, "matched (of 37)"] == 35
    assert m.loc[0.05, "Prop. 4(a) (6)"] == 4 and m.loc[0.05, "Table 3 (10)"] == 10
    assert m.loc[0.05, "on the edge"] == 0 and abs(m.loc[0.1, "largest difference"] - 0.004) < 1e-9
    fx = fig3.lr_fixed_offsets(data)
    assert bool(fx.loc[0.05, "α = 1 up to 512"]) and not bool(fx.loc[0.1, "α = 1 up to 512"])
    assert fx.loc[0.1, "prev"] == 0.9
    tab = fig3.lr_points(data)
    assert tab.shape == (37, 3) and list(tab.columns) == ["paper", "lr 0.05", "lr 0.1"]


def test_stored_lr_grid_supports_the_page():
    """The numbers the page's prose quotes from the stored learning-rate grid."""
    data = ch3.load("lr_grid")["data"]
    m = fig3.lr_matches(data)["matched (of 37)"]
    assert m.idxmax() == 0.09 and m[0.09] == 35 and m[0.1] == 34 and m[0.08] == 33 and m[0.05] == 28
    assert fig3.lr_matches(data).loc[0.1, "on the edge"] == 2
    fx = fig3.lr_fixed_offsets(data)
    holds = [lr for lr, ok in fx["α = 1 up to 512"].items() if ok]
    assert holds == [0.01, 0.02, 0.05, 0.06, 0.12, 0.2]


def test_study_label_counts_refreshed_groups():
    """The stored-run label says how many groups were re-run for their CPU time and how far they moved."""
    prov = {"date": "2026-11-30T10:00:00", "device": "cpu", "torch_version": "2.13.0+cpu"}
    groups = {
        "a": {"provenance": {**prov, "migrated": {"from": "x"}}},
        "b": {"provenance": {**prov, "refreshed": {"max_abs_difference": 2e-7}}},
        "c": {"provenance": {**prov, "refreshed": {"max_abs_difference": 1e-4}}},
    }
    label = fig3.study_label(groups)
    assert "1 migrated from the pre-cells store; 2 re-run to record their CPU time" in label
    assert label.endswith("by at most 0.0001)")
    assert "re-run" not in fig3.study_label({"a": groups["a"]})
