"""The statistics of chapter 3's trained study (§6, App. D and E) from the rows of
:func:`.experiments.study_rows` and an α table: cell summaries, :func:`study_stats`, App. D's
ablation and content channel."""

from __future__ import annotations

import numpy as np

from lengthgen.chapters.ch3.realizability import MAIN_TASKS, TASKS
from lengthgen.config import check_choice, check_probability
from lengthgen.nn.decoder import TIERS
from lengthgen.nn.positional import ENCODINGS
from lengthgen.stats import auc, bootstrap_ci, permutation_pvalue, spearman


def cell_rows(rows, tier: str, encoding: str, task: str, L: int | None = None) -> list:
    """The measurement rows of the cell (``encoding``, ``task``) of ``tier`` (at length ``L``)."""
    rows = [x for x in rows if (x["tier"], x["encoding"], x["task"]) == (tier, encoding, task)]
    return [x for x in rows if L is None or x["L"] == L]


def cell_summary(rows, tier: str, alpha: dict, tasks=MAIN_TASKS) -> dict:
    """Per (encoding, task) cell of ``tier``: α (mean over its L), mean LG and train, seeds, L."""
    check_choice("tier", tier, tuple(TIERS))
    for t in tasks:
        check_choice("task", t, TASKS)
    out = {}
    for k in (f"{e}/{t}" for e in ENCODINGS for t in tasks):
        if r := cell_rows(rows, tier, *k.split("/")):
            Ls = sorted({x["L"] for x in r})
            c = out[k] = {"alpha": float(np.mean([alpha[k][L] for L in Ls]))}
            c["lg"], c["train"] = (float(np.mean([x[f] for x in r])) for f in ("acc", "train_acc"))
            c |= {"seeds": sorted({x["seed"] for x in r}), "lengths": Ls}
    return out


def study_stats(
    rows, alpha, tier="1L1H", *, n_perm=20_000, n_boot=10_000, learnable=0.8, tasks=MAIN_TASKS
):
    """The §6 statistics of one tier: cell-level AUC (LG ≥ 0.5) with permutation p, Spearman over
    all and learnable cells with a bootstrap CI, precision Pr[LG ≥ 0.7 | α_L ≥ 0.5] with its CI."""
    cells = cell_summary(rows, tier, alpha, tasks)
    if not cells:
        return {"tier": tier, "n_cells": 0}
    keys = sorted(cells)
    a, lg = (np.array([cells[k][f] for k in keys]) for f in ("alpha", "lg"))
    pos = lg >= 0.5
    out = {"tier": tier, "n_cells": len(keys), "n_pos": int(pos.sum())}
    out["cells"] = {k: cells[k] for k in keys}
    if 0 < pos.sum() < len(pos):
        obs, p = permutation_pvalue(auc, a, pos, n_perm=n_perm, alternative="greater")
        out.update(auc=obs, auc_p=p)
        out.update(min_alpha_pos=float(a[pos].min()), max_alpha_neg=float(a[~pos].max()))
    out["spearman_all"] = spearman(a, lg)

    rho = lambda v: float(np.nan_to_num(spearman(v[:, 0], v[:, 1])))  # a constant resample: 0
    learn = np.array([cells[k]["train"] > learnable for k in keys])
    out["n_learnable"] = int(learn.sum())
    if learn.sum() >= 3:
        v = np.stack([a[learn], lg[learn]], 1)
        est, lo, hi = bootstrap_ci(v, stat=rho, n_boot=n_boot)
        out.update(spearman_learnable=spearman(a[learn], lg[learn]), spearman_ci=(lo, hi))
    hi_rows = [x for x in rows if x["tier"] == tier and x["task"] in tasks]
    hi_rows = [x for x in hi_rows if alpha[f"{x['encoding']}/{x['task']}"][x["L"]] >= 0.5]
    if hi_rows:
        ok = np.array([x["acc"] >= 0.7 for x in hi_rows], dtype=float)
        est, lo, hi = bootstrap_ci(ok, n_boot=n_boot)
        out.update(precision=est, precision_ci=(lo, hi), n_high_rows=len(hi_rows))
        out["n_violations"] = int((ok == 0).sum())
    return out


def selection_ablation(rows, alphas: dict, tier: str = "1L1H", learnable: float = 0.8) -> dict:
    """App. D, Table 5: Spearman(α_L, LG) over the (learnable cell, L) rows, per α table."""
    if not alphas:
        raise ValueError("alphas must name at least one α table")
    cells = cell_summary(rows, tier, next(iter(alphas.values())))
    keys = [k for k in sorted(cells) if cells[k]["train"] > learnable]
    acc = lambda k, L: float(np.mean([x["acc"] for x in cell_rows(rows, tier, *k.split("/"), L)]))
    pts = [(k, L, acc(k, L)) for k in keys for L in cells[k]["lengths"]]
    out = {"tier": tier, "n_cells": len(keys), "n_rows": len(pts)}
    if len(pts) >= 3:
        lg = np.array([q[2] for q in pts])
        for name, tab in alphas.items():
            out[name] = spearman(np.array([tab[k][L] for k, L, _ in pts]), lg)
    return out


def content_channel(
    rows, alpha: dict, tier: str, *, lg_min: float = 0.5, alpha_max: float = 0.5, tasks=MAIN_TASKS
) -> dict:
    """App. D: cells of ``tier`` with α < ``alpha_max``, LG ≥ ``lg_min`` (rescued by content)."""
    lg_min = check_probability("lg_min", lg_min)
    alpha_max = check_probability("alpha_max", alpha_max)
    return {
        k: {"alpha": c["alpha"], "lg": c["lg"], "seeds": c["seeds"]}
        for k, c in sorted(cell_summary(rows, tier, alpha, tasks).items())
        if c["alpha"] < alpha_max and c["lg"] >= lg_min
    }


def cell_table(rows, alpha, tier: str, L: int = 60, tasks=MAIN_TASKS) -> dict:
    """``{"enc/task": {alpha, lg_mean, lg_std, n_seeds}}`` at length ``L`` (Tables 3, 6, Fig. 5)."""
    out = {}
    for k in (f"{e}/{t}" for e in ENCODINGS for t in tasks):
        if acc := [x["acc"] for x in cell_rows(rows, tier, *k.split("/"), L)]:
            m, sd = float(np.mean(acc)), float(np.std(acc))
            out[k] = {"alpha": alpha[k][L], "lg_mean": m, "lg_std": sd, "n_seeds": len(acc)}
    return out
