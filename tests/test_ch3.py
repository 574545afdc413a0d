"""Chapter 3 study plumbing: data and labels, masked loss, banks, plan order, statistics, a tiny run."""
import numpy as np
import pytest
import torch

from lengthgen.chapters.ch3 import experiments as ch3
from lengthgen.config import ConfigError
from lengthgen.chapters.ch3.realizability import MAIN_TASKS, STUDY_LENGTHS


def test_target_table_and_labels():
    T = ch3.target_table(("prev", "copy"), 20)
    assert T.shape == (2, 21, 20)
    assert T[0, 12, :4].tolist() == [-1, 0, 1, 2] and T[0, 12, 12:].eq(-1).all()
    assert T[1, 10, 5:10].tolist() == [0, 1, 2, 3, 4]
    x = torch.tensor([[7, 3, 9, 4]])
    y = ch3.labels(x, torch.tensor([[-1, 0, 1, 2]]))
    assert y.tolist() == [[ch3.IGNORE, 7, 3, 9]]


def test_sampler_is_per_member_and_shares_the_length_schedule():
    s = ch3.make_sampler(("prev", "first"), batch=4, steps=10, length_seed=0)
    g = [torch.Generator().manual_seed(1), torch.Generator().manual_seed(2)]
    x, y = s(0, g)
    assert x.shape[:2] == (2, 4) and 10 <= x.shape[2] <= 20 and y.shape == x.shape
    n = x.shape[2]
    assert torch.equal(y[0, :, 1:], x[0, :, :-1]) and (y[0, :, 0] == ch3.IGNORE).all()
    assert torch.equal(y[1], x[1, :, :1].expand(4, n))
    x1, _ = ch3.make_sampler(("first",), batch=4, steps=10)(0, [torch.Generator().manual_seed(2)])
    assert torch.equal(x1[0], x[1])     # a member's data do not depend on its ensemble


def test_masked_loss_and_accuracy():
    out = torch.zeros(2, 1, 3, 5)
    out[0, 0, 1, 2] = 10.0
    y = torch.tensor([[[ch3.IGNORE, 2, ch3.IGNORE]], [[ch3.IGNORE, ch3.IGNORE, ch3.IGNORE]]])
    acc = ch3.masked_acc(out, y)
    assert acc.tolist() == [1.0, 0.0]
    ce = ch3.masked_ce(out, y)
    assert ce[0] < 1e-3 and ce[1] == 0


def test_eval_banks_score_only_extrapolation_rows():
    b = ch3.eval_banks(("prev", "copy"), (30,), n_eval=3, train_n=2)
    x, y = b[30]
    assert x.shape == (2, 3, 30)
    assert (y[:, :, :20] == ch3.IGNORE).all() and (y[0, :, 20:] != ch3.IGNORE).all()
    assert torch.equal(y[1, :, 20:], x[1, :, 5:15])            # copy at L = 30: t = i - 15
    assert ("train", 10) in b and ("train", 20) in b


def test_study_plan_order():
    plan = ch3.study_plan("full")
    assert len(plan) == 3 * 5 * 5 * 2
    assert plan[0]["tier"] == "1L1H" and plan[0]["seed"] == 0 and plan[0]["tasks"] == MAIN_TASKS
    assert len({p["key"] for p in plan}) == len(plan)
    assert all(p["tier"] == "1L1H" and p["tasks"] == MAIN_TASKS for p in plan[:25])       # 1L1H, all seeds
    assert [p["seed"] for p in plan[:25:5]] == [0, 1, 2, 3, 4]
    assert [(p["tier"], p["seed"]) for p in plan[25:35:5]] == [("2L4H", 0), ("4L4H", 0)]   # deep tiers, seed 0
    assert all(p["tier"] == "1L1H" and p["tasks"] == ("pos2", "pos5") for p in plan[35:60])
    assert plan[60]["tier"] == "2L4H" and plan[60]["seed"] == 1 and plan[60]["tasks"] == MAIN_TASKS
    with pytest.raises(ConfigError):
        ch3.study_plan("huge")


def test_study_shards_partition_the_plan():
    plan = ch3.study_plan("full")
    parts = [ch3.shard(plan, f"{i}/3") for i in range(3)]
    assert sorted(g["key"] for p in parts for g in p) == sorted(g["key"] for g in plan)
    assert ch3.shard(plan, None) == plan and ch3.shard(plan, "") == plan
    for bad in ("2", "a/b", "3/3", "-1/2", "0/0"):
        with pytest.raises(ConfigError, match="LENGTHGEN_CH3_SHARD"):
            ch3.shard(plan, bad)


def test_study_stats_on_synthetic_rows():
    A = {f"{e}/{t}": {L: (1.0 if (e, t) in (("rope", "prev"), ("learned_abs", "first")) else 0.0) for L in STUDY_LENGTHS}
         for e in ("learned_abs", "nope", "alibi", "sinusoidal", "rope") for t in MAIN_TASKS}
    rows = []
    for e in ("rope", "learned_abs", "nope"):
        for t in ("prev", "first"):
            for s in (0, 1):
                for L in STUDY_LENGTHS:
                    acc = 0.95 if A[f"{e}/{t}"][L] == 1 else 0.1
                    rows.append({"tier": "1L1H", "encoding": e, "task": t, "seed": s, "L": L, "acc": acc, "train_acc": 0.9})
    st = ch3.study_stats(rows, A, "1L1H", n_perm=200, n_boot=200)
    assert st["n_cells"] == 6 and st["n_pos"] == 2 and st["auc"] == 1.0 and st["precision"] == 1.0
    assert st["auc_p"] < 0.2 and st["n_learnable"] == 6
    c = ch3.cell_table(rows, A, "1L1H", 60)
    assert c["rope/prev"]["lg_mean"] == 0.95 and c["rope/prev"]["n_seeds"] == 2


def test_tiny_trained_group_and_collect(tmp_path):
    torch.manual_seed(0)
    rows = ch3.train_cell_group("1L1H", "rope", ("prev", "first"), 0, steps=3, lengths=(30,), eval_n=4, train_eval_n=2)
    assert len(rows) == 2 and {r["task"] for r in rows} == {"prev", "first"}
    assert all(0 <= r["acc"] <= 1 and 0 <= r["train_acc"] <= 1 for r in rows)
    from lengthgen.store import ResultStore, load_result, provenance
    ResultStore(tmp_path / "study").put("1L1H__rope__main__seed0", rows, provenance(scale="smoke", device="cpu"))
    res = load_result(ch3.collect_study("smoke", tmp_path))
    assert len(res["data"]) == 2 and res["provenance"]["groups_done"] == ["1L1H__rope__main__seed0"]
    with pytest.raises(ConfigError):
        ch3.train_cell_group("9L9H", "rope", ("prev",), 0, steps=1)
    with pytest.raises(ConfigError):
        ch3.train_cell_group("1L1H", "rope", ("swap",), 0, steps=1)


def test_selection_ablation_ranks_rows_of_learnable_cells():
    rows = []
    for e, t, acc, tr in (("rope", "prev", 0.95, 0.99), ("nope", "first", 0.1, 0.95), ("alibi", "prev", 0.5, 0.9),
                          ("rope", "copy", 0.3, 0.2)):
        for L in (30, 60):
            for s in (0, 1):
                rows.append({"tier": "1L1H", "encoding": e, "task": t, "seed": s, "L": L, "acc": acc + 0.01 * s, "train_acc": tr})
    good = {"rope/prev": {30: 1.0, 60: 1.0}, "nope/first": {30: 0.0, 60: 0.0}, "alibi/prev": {30: 0.5, 60: 0.4},
            "rope/copy": {30: 0.9, 60: 0.9}}
    bad = {k: {L: 1 - a for L, a in v.items()} for k, v in good.items()}
    out = ch3.selection_ablation(rows, {"good": good, "bad": bad})
    assert out["n_cells"] == 3 and out["n_rows"] == 6            # rope/copy is not learnable (train 0.2)
    assert out["good"] > 0.9 and out["bad"] < -0.9
    with pytest.raises(ValueError):
        ch3.selection_ablation(rows, {})


def _depth_rows():
    """Synthetic 2L4H rows: α = 1 for rope/prev; alibi/first rescued by content (α 0, LG 0.9)."""
    A = {f"{e}/{t}": {L: (1.0 if (e, t) == ("rope", "prev") else 0.0) for L in STUDY_LENGTHS}
         for e in ("learned_abs", "nope", "alibi", "sinusoidal", "rope") for t in MAIN_TASKS}
    lg = {("rope", "prev"): 0.95, ("alibi", "first"): 0.9, ("nope", "prev"): 0.49, ("rope", "copy"): 0.1}
    rows = [{"tier": "2L4H", "encoding": e, "task": t, "seed": s, "L": L, "acc": a, "train_acc": 0.95}
            for (e, t), a in lg.items() for s in (0, 1) for L in STUDY_LENGTHS]
    return A, rows


def test_content_channel_lists_low_alpha_cells_that_generalize():
    A, rows = _depth_rows()
    cc = ch3.content_channel(rows, A, "2L4H")
    assert list(cc) == ["alibi/first"]                      # nope/prev (0.49) is under the 0.5 split
    assert cc["alibi/first"]["lg"] == pytest.approx(0.9) and cc["alibi/first"]["seeds"] == [0, 1]
    assert list(ch3.content_channel(rows, A, "2L4H", lg_min=0.4)) == ["alibi/first", "nope/prev"]
    assert ch3.content_channel(rows, A, "1L1H") == {}
    with pytest.raises(ConfigError, match="lg_min"):
        ch3.content_channel(rows, A, "2L4H", lg_min=1.5)
    with pytest.raises(ConfigError, match="alpha_max"):
        ch3.content_channel(rows, A, "2L4H", alpha_max=-0.1)
    with pytest.raises(ConfigError, match="3L3H"):
        ch3.content_channel(rows, A, "3L3H")


def test_depth_figures_have_labelled_axes():
    import matplotlib.pyplot as plt
    A, rows = _depth_rows()
    st = {"2L4H": ch3.study_stats(rows, A, "2L4H", n_perm=100, n_boot=100), "4L4H": {"n_cells": 0}}
    fig = ch3.plot_alpha_vs_lg(st)
    assert len([a for a in fig.axes if a.has_data()]) == 1 and fig.axes[0].get_xlabel()
    fig2 = ch3.plot_depth_trend(st, paper={"1L1H": (0.9, 0.925), "2L4H": (0.31, 0.94)})
    assert fig2.axes[0].get_ylabel()
    plt.close("all")


def test_cell_summary_averages_over_seeds_and_lengths():
    A, rows = _depth_rows()
    c = ch3.cell_summary(rows, "2L4H", A)
    assert set(c) == {("rope", "prev"), ("alibi", "first"), ("nope", "prev"), ("rope", "copy")}
    assert c[("rope", "prev")]["alpha"] == 1.0 and c[("rope", "prev")]["lg"] == pytest.approx(0.95)
    assert c[("rope", "prev")]["seeds"] == [0, 1] and c[("rope", "prev")]["lengths"] == sorted(STUDY_LENGTHS)
    assert ch3.cell_summary(rows, "2L4H", A, tasks=ch3.POS_TASKS) == {}
    with pytest.raises(ConfigError, match="9L9H"):
        ch3.cell_summary(rows, "9L9H", A)
    with pytest.raises(ConfigError, match="swap"):
        ch3.cell_summary(rows, "2L4H", A, tasks=("swap",))


def test_study_stats_on_the_interior_position_tasks():
    A = {f"{e}/{t}": {L: float(e in ("learned_abs", "sinusoidal")) for L in STUDY_LENGTHS}
         for e in ("learned_abs", "nope", "alibi", "sinusoidal", "rope") for t in ch3.POS_TASKS}
    rows = [{"tier": "1L1H", "encoding": e, "task": t, "seed": 0, "L": L, "acc": 0.99 if A[f"{e}/{t}"][L] else 0.15,
             "train_acc": 1.0 if A[f"{e}/{t}"][L] else 0.3} for e in ("learned_abs", "rope") for t in ch3.POS_TASKS
            for L in STUDY_LENGTHS]
    st = ch3.study_stats(rows, A, "1L1H", tasks=ch3.POS_TASKS, n_perm=100, n_boot=100)
    assert st["n_cells"] == 4 and st["n_pos"] == 2 and st["auc"] == 1.0 and st["precision"] == 1.0
    assert ch3.study_stats(rows, A, "1L1H", n_perm=100, n_boot=100)["n_cells"] == 0   # default: main tasks only
