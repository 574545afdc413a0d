"""The statistics of chapter 3's trained study (§6, App. D and App. E of Han, Chai & Wang 2026),
computed from the measurement rows of :func:`lengthgen.chapters.ch3.experiments.study_rows` and an
α table: per-cell summaries (:func:`cell_summary`, :func:`cell_table`), the screen's AUC, rank
correlations and precision (:func:`study_stats`), the selection-rule ablation
(:func:`selection_ablation`) and the cells rescued by content (:func:`content_channel`)."""

from __future__ import annotations

import numpy as np

from lengthgen.chapters.ch3.realizability import MAIN_TASKS, TASKS
from lengthgen.config import check_choice, check_probability
from lengthgen.nn.decoder import TIERS
from lengthgen.nn.positional import ENCODINGS


def cell_rows(rows, tier: str, encoding: str, task: str, L: int | None = None) -> list:
    """The measurement rows of one cell (``encoding``, ``task``) of ``tier``, at length ``L`` when
    given."""
    return [
        x
        for x in rows
        if x["tier"] == tier
        and x["encoding"] == encoding
        and x["task"] == task
        and (L is None or x["L"] == L)
    ]


def cell_summary(rows, tier: str, alpha: dict, tasks=MAIN_TASKS) -> dict:
    """Per (encoding, task) cell of ``tier`` that has measurement ``rows``: ``{(enc, task): {"alpha"
    (α_L of the table ``alpha`` averaged over the measured lengths), "lg" (trained accuracy on the
    extrapolation rows, mean over seeds and lengths), "train" (mean train accuracy), "seeds",
    "lengths"}}`` — the cell-level view behind §6's AUC/Spearman, App. D and App. E (``tasks=POS_TASKS``)."""
    check_choice("tier", tier, tuple(TIERS))
    for t in tasks:
        check_choice("task", t, TASKS)
    out = {}
    for e in ENCODINGS:
        for t in tasks:
            r = cell_rows(rows, tier, e, t)
            if not r:
                continue
            Ls = sorted({x["L"] for x in r})
            out[(e, t)] = {
                "alpha": float(np.mean([alpha[f"{e}/{t}"][L] for L in Ls])),
                "lg": float(np.mean([x["acc"] for x in r])),
                "train": float(np.mean([x["train_acc"] for x in r])),
                "seeds": sorted({x["seed"] for x in r}),
                "lengths": Ls,
            }
    return out


def study_stats(
    rows,
    alpha: dict,
    tier: str = "1L1H",
    *,
    n_perm: int = 20_000,
    n_boot: int = 10_000,
    learnable: float = 0.8,
    tasks=MAIN_TASKS,
) -> dict:
    """The §6 statistics of one tier from measurement ``rows`` and the CE α table ``alpha``
    (``{"enc/task": {L: α}}``): cell-level AUC (LG ≥ 0.5) with permutation p, Spearman over all
    cells and over learnable cells (train acc > ``learnable``) with a bootstrap CI over cells,
    and the precision Pr[LG ≥ 0.7 | α_L ≥ 0.5] over (cell, L, seed) rows with a bootstrap CI."""
    from lengthgen.stats import auc, bootstrap_ci, permutation_pvalue, spearman

    cells = cell_summary(rows, tier, alpha, tasks)
    if not cells:
        return {"tier": tier, "n_cells": 0}
    keys = sorted(cells)
    a = np.array([cells[k]["alpha"] for k in keys])
    lg = np.array([cells[k]["lg"] for k in keys])
    pos = lg >= 0.5
    out = {
        "tier": tier,
        "n_cells": len(keys),
        "n_pos": int(pos.sum()),
        "cells": {f"{e}/{t}": cells[(e, t)] for e, t in keys},
    }
    if 0 < pos.sum() < len(pos):
        obs, p = permutation_pvalue(
            lambda s, y: auc(s, y), a, pos, n_perm=n_perm, alternative="greater"
        )
        out.update(
            auc=obs, auc_p=p, min_alpha_pos=float(a[pos].min()), max_alpha_neg=float(a[~pos].max())
        )
    out["spearman_all"] = spearman(a, lg)

    def rho(v):
        r = spearman(v[:, 0], v[:, 1])
        return 0.0 if np.isnan(r) else r

    learn = np.array([cells[k]["train"] > learnable for k in keys])
    out["n_learnable"] = int(learn.sum())
    if learn.sum() >= 3:
        v = np.stack([a[learn], lg[learn]], 1)
        est, lo, hi = bootstrap_ci(v, stat=rho, n_boot=n_boot)
        out.update(spearman_learnable=spearman(a[learn], lg[learn]), spearman_ci=(lo, hi))
    hi_rows = [
        x
        for x in rows
        if x["tier"] == tier
        and x["task"] in tasks
        and alpha[f"{x['encoding']}/{x['task']}"][x["L"]] >= 0.5
    ]
    if hi_rows:
        ok = np.array([x["acc"] >= 0.7 for x in hi_rows], dtype=float)
        est, lo, hi = bootstrap_ci(ok, n_boot=n_boot)
        out.update(
            precision=est,
            precision_ci=(lo, hi),
            n_high_rows=len(hi_rows),
            n_violations=int((ok == 0).sum()),
        )
    return out


def selection_ablation(rows, alphas: dict, tier: str = "1L1H", learnable: float = 0.8) -> dict:
    """App. D, Table 5: Spearman(α_L, trained LG) over the (learnable cell, L) rows of one tier, for
    each α table in ``alphas`` (``{name: {"enc/task": {L: α}}}``); learnability as in
    :func:`study_stats`, a row's LG its mean over the seeds that exist (75 rows at 1L1H).
    """
    from lengthgen.stats import spearman

    if not alphas:
        raise ValueError("alphas must name at least one α table")
    cells = cell_summary(rows, tier, next(iter(alphas.values())))
    keys = [k for k in sorted(cells) if cells[k]["train"] > learnable]
    pts = []
    for e, t in keys:
        for L in cells[(e, t)]["lengths"]:
            acc = [x["acc"] for x in cell_rows(rows, tier, e, t, L)]
            pts.append((e, t, L, float(np.mean(acc))))
    out = {"tier": tier, "n_cells": len(keys), "n_rows": len(pts)}
    if len(pts) >= 3:
        lg = np.array([q[3] for q in pts])
        for name, tab in alphas.items():
            out[name] = spearman(np.array([tab[f"{e}/{t}"][L] for e, t, L, _ in pts]), lg)
    return out


def content_channel(
    rows, alpha: dict, tier: str, *, lg_min: float = 0.5, alpha_max: float = 0.5, tasks=MAIN_TASKS
) -> dict:
    """App. D, depth trend: the cells the positional predictor rules out but training rescues.

    A cell of ``tier`` is listed when its α (mean over lengths) is below ``alpha_max`` and its trained
    LG (mean over seeds and lengths) at least ``lg_min`` — routes through token content, outside the
    positional abstraction (section "Depth and the content channel"). Returns
    ``{"enc/task": {"alpha", "lg", "seeds"}}``.
    """
    lg_min, alpha_max = (
        check_probability("lg_min", lg_min),
        check_probability("alpha_max", alpha_max),
    )
    return {
        f"{e}/{t}": {"alpha": c["alpha"], "lg": c["lg"], "seeds": c["seeds"]}
        for (e, t), c in sorted(cell_summary(rows, tier, alpha, tasks).items())
        if c["alpha"] < alpha_max and c["lg"] >= lg_min
    }


def cell_table(rows, alpha, tier: str, L: int = 60, tasks=MAIN_TASKS) -> dict:
    """``{"enc/task": {"alpha": α_L, "lg_mean", "lg_std", "n_seeds"}}`` at one length (Table 3, Fig. 5, Table 6)."""
    out = {}
    for e in ENCODINGS:
        for t in tasks:
            acc = [x["acc"] for x in cell_rows(rows, tier, e, t, L)]
            if acc:
                out[f"{e}/{t}"] = {
                    "alpha": alpha[f"{e}/{t}"][L],
                    "lg_mean": float(np.mean(acc)),
                    "lg_std": float(np.std(acc)),
                    "n_seeds": len(acc),
                }
    return out
