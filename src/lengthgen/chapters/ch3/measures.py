"""What chapter 3's claims measure: the study's statistics (§6, App. D, E) from rows and an α table;
readers of the full-scale cells (validated by :func:`.experiments.load`, cached per stored results
``r``); the measurements the claims name, each of ``r`` (the notebooks show the same numbers)."""

from __future__ import annotations

import collections
import functools
import math
import operator

import numpy as np

from lengthgen.chapters.ch3 import experiments as ch3
from lengthgen.chapters.ch3 import paper
from lengthgen.chapters.ch3.paper import MAIN_TASKS, POS_TASKS, STUDY_LENGTHS, TASKS
from lengthgen.chapters.ch3.realizability import exact_min_norm_spectrum
from lengthgen.config import check_choice, check_probability
from lengthgen.nn.decoder import TIERS
from lengthgen.nn.positional import ENCODINGS
from lengthgen.stats import auc, bootstrap_ci, permutation_pvalue, spearman
from lengthgen.store import _clean, max_difference

#: Shuffles of the AUC permutation test (the paper's 20k) and our bootstrap resamples.
N_PERM = paper.STUDY_1L1H["n_perm"]
N_BOOT = 2_000
#: The paper's thresholds (§6, Table 4): a cell is learnable when its train accuracy exceeds 0.8 and
#: generalizes when its LG reaches 0.5; a row succeeds when LG ≥ 0.7 and is high-α when α_L ≥ 0.5.
LEARNABLE, GENERALIZES, SUCCESS, HIGH_ALPHA = 0.8, 0.5, 0.7, 0.5


# ----------------------------------------------------- the study's statistics (rows, an α table)


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


# ---------------------------------------------------------------------- stored results (cached)
def _memo(results, key, fn):
    cache = results.__dict__.setdefault("_ch3_cache", {})
    if key not in cache:
        cache[key] = fn()
    return cache[key]


def stored(results, name: str):
    """The validated data of the stored cell ``name`` (:func:`experiments.load`), read once."""
    return _memo(results, name, lambda: ch3.load(name, folder=results.folder)["data"])


def _int_lengths(tab: dict) -> dict:
    """A stored α table ``{"enc/task": {"L": α}}`` with integer lengths and float values."""
    return {k: {int(L): float(a) for L, a in d.items()} for k, d in tab.items()}


def alpha_tables(results) -> dict:
    """The stored α tables ``{rule: {"enc/task": {L: α}}}`` (integer lengths)."""
    tabs = stored(results, "alpha_tables")
    return _memo(results, "alpha", lambda: {r: _int_lengths(t) for r, t in tabs.items()})


def alpha(results, rule: str = "ce") -> dict:
    return alpha_tables(results)[rule]


def alpha_exact(results) -> dict:
    return stored(results, "alpha_min_norm_exact")


def min_norm_exact_table(results) -> dict:
    """The min-norm α table, exact rows for sinusoidal and RoPE (float64 is exact elsewhere)."""
    return {**alpha(results, "min_norm"), **_int_lengths(alpha_exact(results)["alpha"])}


def theory(results) -> dict:
    return stored(results, "theory")


def th(*keys):
    """The measure ``theory(r)[keys[0]][keys[1]]…``."""
    return lambda r: functools.reduce(operator.getitem, keys, theory(r))


def lr_grid_headline_diff(results) -> int:
    """Entries of the ``lr_grid`` cell at our lr (16 frequencies) that differ from the α tables."""
    g, A, lr = stored(results, "lr_grid"), alpha(results), paper.CE_FIT["lr"]
    pts = [p for p in g["points"] if p["lr"] == lr and p["num_freq"] == 16]
    pts = [(f"{p['encoding']}/{p['task']}", p["L"], p["alpha"]) for p in pts]
    pts += [(f"rope/{f['task']}", f["L"], f["alpha"]) for f in g["fixed"] if f["lr"] == lr]
    return sum(A[k][L] != a for k, L, a in pts) if pts else -1


def rows(results) -> list[dict]:
    """Every stored measurement of the trained study (main and pos groups)."""
    return _memo(results, "rows", lambda: ch3.study_rows(folder=results.folder))


def _study_stats(results, key, rows: list, tier: str, **kw) -> dict:
    """:func:`study_stats` of ``rows`` with the CE α table, computed once per ``key``."""
    make = lambda: study_stats(rows, alpha(results), tier, n_perm=N_PERM, n_boot=N_BOOT, **kw)
    return _memo(results, key, make)


def stats(results, tier: str) -> dict:
    """§6 statistics of ``tier``, main tasks (:func:`study_stats`), computed once."""
    return _study_stats(results, ("stats", tier), rows(results), tier)


def stat(tier: str, key: str):
    """The measure ``stats(r, tier)[key]``."""
    return lambda r: stats(r, tier)[key]


def cells(results, tier: str = "1L1H") -> dict:
    """Cell-level summaries ``{"enc/task": {alpha, lg, train, seeds, lengths}}`` of ``tier``."""
    return stats(results, tier).get("cells", {})  # a tier without rows has no cells


def accs(results, tier, cell, L):
    """The stored accuracies of one ``"enc/task"`` cell of ``tier`` at length ``L``."""
    return [x["acc"] for x in cell_rows(rows(results), tier, *cell.split("/"), L)]


def high_rows(results, tier="1L1H", tau=HIGH_ALPHA, A=None) -> list[dict]:
    """The main-task rows of ``tier`` with α_L ≥ ``tau`` under ``A`` (default: the CE table)."""
    A, rs = alpha(results) if A is None else A, rows(results)
    rs = [x for x in rs if x["tier"] == tier and x["task"] in MAIN_TASKS]
    return [x for x in rs if A[f"{x['encoding']}/{x['task']}"][x["L"]] >= tau]


def violations(results, tier: str = "1L1H") -> dict:
    """High-α rows with LG < 0.7, counted per ``"enc/task@L"``."""
    fails = [x for x in high_rows(results, tier) if x["acc"] < SUCCESS]
    fails = [f"{x['encoding']}/{x['task']}@{x['L']}" for x in fails]
    return dict(sorted(collections.Counter(fails).items()))


def spearman_cells(results, keep=None, score=lambda k, v: v["alpha"]) -> float:
    """Spearman(``score(key, cell)``, LG) over the 1L1H cells ``keep`` selects (learnable)."""
    keep = keep or (lambda k, v: v["train"] > LEARNABLE)
    c = [(k, v) for k, v in sorted(cells(results).items()) if keep(k, v)]
    return spearman([score(k, v) for k, v in c], [v["lg"] for _, v in c])


def theory_differences(live: dict, stored: dict, *, skip=("prop1", "prop2"), tol=1e-9) -> list:
    """Theory-check keys where ``live`` and ``stored`` differ by > ``tol`` (Monte Carlo skipped)."""
    # `not <=`: a NaN on one side is a difference
    differ = lambda k: not max_difference(_clean(live[k]), _clean(stored[k])) <= tol
    keys = sorted((set(live) | set(stored)) - set(skip))
    return [k for k in keys if k not in live or k not in stored or differ(k)]


# --------------------------------------------------------------------------- measures
def alpha_at(cell, Ls):
    """The measure ``[α_L of cell for L in Ls]``."""
    return lambda r: [alpha(r)[cell][L] for L in Ls]


def zero_cells_std(r):
    """Standard deviation of the cell-level α of the NoPE, ALiBi, copy and reverse cells."""
    A = alpha(r)
    zero = [(e, t) for e in ENCODINGS for t in MAIN_TASKS]
    zero = [(e, t) for e, t in zero if e in ("nope", "alibi") or t in ("copy", "reverse")]
    return float(np.std([np.mean([A[f"{e}/{t}"][L] for L in STUDY_LENGTHS]) for e, t in zero]))


def prop2_mc(r):
    """Prop. 2's Monte Carlo per (selection, L): min-norm and generic W at L = 30 and 60."""
    P = theory(r)["prop2"]
    return [P[rule][str(L)] for rule in ("min_norm", "generic") for L in (30, 60)]


def prop2_within_3se(r):
    """Whether every conditional rate is within 3 standard errors of 1/(k − 1), and the rates."""
    se = [math.sqrt(d["bound"] * (1 - d["bound"]) / max(d["n_in_new"], 1)) for d in prop2_mc(r)]
    ok = all(abs(d["conditional"] - d["bound"]) <= 3 * s for d, s in zip(prop2_mc(r), se))
    return {"within_3se": ok, "conditional": [d["conditional"] for d in prop2_mc(r)]}


def duality(r):
    d30 = next(x for x in theory(r)["prop4"] if x["L"] == 30)
    keys = ("rope/prev", "peak1/first", "learned_abs/prev", "learned_abs/first")
    margins = {x["learned_abs/first margin"] for x in theory(r)["prop4"]}
    return {"alpha": [d30[k] for k in keys], "clamped_first_margins": sorted(margins)}


def duality_holds(v):
    D, m = paper.DUALITY, v["clamped_first_margins"]
    expected = [D["relative"]["prev"], D["relative"]["first"], D["clamped"]["prev"]]
    return bool(v["alpha"] == [*expected, D["clamped"]["first"]] and len(m) == 1 and m[0] > 0)


def auc_nontrivial(r):
    c = [v for k, v in sorted(cells(r).items()) if v["alpha"] > 0.05]
    return [len(c), auc([v["alpha"] for v in c], [v["lg"] >= GENERALIZES for v in c])]


def spearman_binarized(r):
    """Spearman(1[α ≥ 0.5], LG) over the learnable 1L1H cells."""
    return spearman_cells(r, score=lambda k, v: float(v["alpha"] >= HIGH_ALPHA))


SIN_BOUNDED = ("sinusoidal/prev", "sinusoidal/skip2", "sinusoidal/skip3", "sinusoidal/skip5")


def sin_graded_fine(r):
    """1L1H sinusoidal bounded offsets: Spearman(α_L, LG) over the rows and the (cell, L) means."""
    A = alpha(r)
    key = lambda x: f"{x['encoding']}/{x['task']}"
    rr = [x for x in rows(r) if x["tier"] == "1L1H" and key(x) in SIN_BOUNDED]
    row = spearman([A[key(x)][x["L"]] for x in rr], [x["acc"] for x in rr])
    pts = [(A[c][L], np.mean(accs(r, "1L1H", c, L))) for c in SIN_BOUNDED for L in STUDY_LENGTHS]
    return [row, spearman(*zip(*pts))]


def precision_with(results, tier: str, A: dict, tau: float = HIGH_ALPHA) -> dict:
    """``{"precision", "rows"}``: Pr[LG ≥ 0.7 | α_L ≥ τ] over :func:`high_rows` and their number."""
    h = high_rows(results, tier, tau, A)
    prec = float(np.mean([x["acc"] >= SUCCESS for x in h])) if h else float("nan")
    return {"precision": prec, "rows": len(h)}


def lr_match_precision(results, tier: str) -> dict:
    """``{lr: {"precision", "rows"}}`` of ``tier`` at each lr of :data:`experiments.LR_MATCH`."""
    tabs = {k: _int_lengths(t) for k, t in stored(results, "alpha_lr_match")["alpha"].items()}
    return {str(lr): precision_with(results, tier, tabs[str(lr)]) for lr in ch3.LR_MATCH}


def precision_tau_rows(r) -> dict:
    """1L1H precision and row count at each threshold τ of the paper (0.5, 0.7, 0.9)."""
    return {str(t): precision_with(r, "1L1H", alpha(r), t) for t in paper.PRECISION_TAU}


def precision_by_tau(r):
    """1L1H precision Pr[LG ≥ 0.7 | α_L ≥ τ] for the paper's thresholds τ = 0.5, 0.7, 0.9."""
    return [v["precision"] for v in precision_tau_rows(r).values()]


def baseline_scores(key: str) -> dict:
    """The §6 baseline rules for cell ``"enc/task"`` (0 or 1): PE-blind "is the offset bounded?" and
    the taxonomy (our reading: RoPE, ALiBi relative; sinusoidal, learned-absolute absolute)."""
    e, t = key.split("/")
    bounded = t in ("prev", "skip2", "skip3", "skip5")
    absolute = e in ("sinusoidal", "learned_abs") and t == "first"
    relative = e in ("rope", "alibi") and bounded
    return {"pe_blind": float(bounded), "taxonomy": float(relative or absolute)}


def baseline_rho(results, rule: str) -> float:
    """Spearman between a baseline rule's score and LG over the learnable 1L1H cells."""
    return spearman_cells(results, score=lambda k, v: baseline_scores(k)[rule])


def conditioning(num_freq: int) -> dict:
    """Sinusoidal Φ_20 at ``num_freq`` frequencies, exact: columns, full column rank, condition."""
    s = exact_min_norm_spectrum("sinusoidal", num_freq=num_freq)
    m = 2 * num_freq
    return {"m": m, "full_column_rank": m <= 20, "cond": s[0] / s[-1]}


def violation(cell, L):
    """``[α_L, mean LG, failing seeds if the row is high-α]`` of one 1L1H row of the study."""
    fails = lambda a, acc: sum(v < SUCCESS for v in acc) if a >= HIGH_ALPHA else 0
    row = lambda a, acc: [a, float(np.mean(acc)), fails(a, acc)]
    return lambda r: row(alpha(r)[cell][L], accs(r, "1L1H", cell, L))


def violation_sin_first(r):
    viol, acc80 = violations(r), accs(r, "1L1H", "sinusoidal/first", 80)
    at = [viol.get(f"sinusoidal/first@{L}", 0) for L in (60, 80)]
    return [float(np.mean(acc80)), float(min(acc80)), *at]


#: the high-α rows with LG < 0.7 the paper reports (§6, sufficiency)
PAPER_FAMILIES = "rope/first@30 sinusoidal/prev@40 sinusoidal/first@60 sinusoidal/first@80".split()


def ablation(r):
    """App. D's :func:`selection_ablation` of the CE and both min-norm tables."""
    tabs = {"ce": alpha(r), "min_norm": alpha(r, "min_norm")}
    tabs["min_norm_exact"] = min_norm_exact_table(r)
    return _memo(r, "ablation", lambda: selection_ablation(rows(r), tabs))


def pos_rows(results, tier: str = "1L1H") -> list[dict]:
    """The stored pos2/pos5 rows of one ``tier`` (App. E; its Table 6 is tier 1L1H)."""
    check_choice("tier", tier, TIERS)
    return [x for x in rows(results) if x["task"] in POS_TASKS and x["tier"] == tier]


def app_e_stats(results, tier: str = "1L1H") -> dict:
    """The §6 statistics of App. E's pos2/pos5 cells at one tier (:func:`study_stats`)."""
    return _study_stats(results, ("appE", tier), pos_rows(results, tier), tier, tasks=POS_TASKS)


def _app_e_by_tier(results) -> dict:
    """:func:`app_e_stats` of every tier with stored pos2/pos5 groups, in tier order."""
    return {t: app_e_stats(results, t) for t in TIERS if pos_rows(results, t)}


def app_e_tiers(results):
    """App. E's ten cells: α, per stored tier mean train accuracy and LG, last row each AUC."""
    import pandas as pd

    nan = float("nan")
    by_tier = _app_e_by_tier(results)
    alphas = {k: c["alpha"] for st in by_tier.values() for k, c in st["cells"].items()}
    keys = sorted(alphas)
    data = {("", "α"): [alphas[k] for k in keys] + [nan]}
    for t, st in by_tier.items():
        c = st["cells"]
        data[(t, "train acc")] = [c.get(k, {}).get("train", nan) for k in keys] + [nan]
        data[(t, "LG")] = [c.get(k, {}).get("lg", nan) for k in keys] + [st.get("auc", nan)]
    return pd.DataFrame(data, index=pd.Index(keys + ["AUC (LG ≥ 0.5)"], name="encoding/task"))


def app_e_rescued(results) -> dict:
    """Per stored tier of App. E: rescued cells, numbers of cells and of generalizing ones, AUC."""
    A = alpha(results)
    rescued = lambda t: content_channel(pos_rows(results, t), A, t, tasks=POS_TASKS)
    return {
        t: {"rescued": sorted(rescued(t))} | {k: st.get(k) for k in ("n_cells", "n_pos", "auc")}
        for t, st in _app_e_by_tier(results).items()
    }


def app_e_rescued_line(results) -> str:
    """:func:`app_e_rescued` as the sentence under the chapter's per-tier App. E table."""
    parts = []
    for t, v in app_e_rescued(results).items():
        every = "every" if v["n_pos"] == v["n_cells"] else "no"
        sep = f"{every} cell reaches LG ≥ {GENERALIZES}, so no AUC"
        sep = sep if v["auc"] is None else f"AUC {v['auc']:.2f}"
        rescued = ", ".join(v["rescued"]) or "none"
        parts.append(f"{t}: {sep}; transfer with α < {HIGH_ALPHA}: {rescued}.")
    return " ".join(parts)


def app_e_relative(r, tiers=("1L1H",)):
    """``[cells, largest train accuracy, largest LG]`` of App. E's relative and NoPE cells."""
    st = [app_e_stats(r, t)["cells"] for t in tiers]
    rel = [c for s in st for k, c in s.items() if k.split("/")[0] not in paper.APP_E_ABSOLUTE]
    return [len(rel), max(c["train"] for c in rel), max(c["lg"] for c in rel)]


# --------------------------------------------------------------- App. F–H (the robustness cells)
def _lg_train(rows) -> dict:
    """Mean LG and mean train accuracy of ``rows`` (NaN without rows)."""
    mean = lambda k: float(np.mean([x[k] for x in rows])) if rows else float("nan")
    return {"lg": mean("acc"), "train": mean("train_acc")}


def app_g_cells(r) -> dict:
    """App. G per training length: ``{L0: cell summaries at 3·L0}`` over 3 seeds (L0 = 20: the main
    study's seeds 0–2 at L = 60), with α_{3L0} (:func:`cell_summary`)."""
    out = {}
    for L0 in ch3.APP_G_MEASURED:
        if L0 in ch3.APP_G["trained"]:
            rs = [x for e in ENCODINGS for x in stored(r, f"appG__L0_{L0}__{e}")]
        else:
            rs = [x for x in rows(r) if x["L"] == 3 * L0 and x["seed"] in ch3.APP_G["seeds"]]
        A = {k: {3 * L0: a} for k, a in stored(r, "robustness_alpha")["appG"][str(L0)].items()}
        out[L0] = cell_summary(rs, "1L1H", A)
    return out


def app_g_auc(r) -> list:
    """Screen AUC of α_{3L0} for the cells with LG@3L0 ≥ 0.5, at each training length of App. G."""
    by_L0 = [list(c.values()) for c in app_g_cells(r).values()]
    return [auc([v["alpha"] for v in c], [v["lg"] >= GENERALIZES for v in c]) for c in by_L0]


def app_g_generalizing(r) -> dict:
    """The cells with LG@3L0 ≥ 0.5 at each training length, ``{L0: [cells]}``."""
    return {
        str(L0): sorted(k for k, v in c.items() if v["lg"] >= GENERALIZES)
        for L0, c in app_g_cells(r).items()
    }


def rope_scale_table(r) -> dict:
    """App. H's frequency sweep per stored scale: α_60, mean LG@60, train accuracy, LGs."""
    out, alphas = {}, stored(r, "robustness_alpha")["rope_scale"]
    for s in [f"{s:g}" for s in ch3.ROPE_SCALES if f"appH__rope_scale_{s:g}" not in ch3.NOT_RUN]:
        rs = [x for x in stored(r, f"appH__rope_scale_{s}") if x["L"] == 60]
        out[s] = {"alpha": alphas[s]["60"], **_lg_train(rs), "lg_seeds": [x["acc"] for x in rs]}
    return out


def app_f_stats(r) -> dict:
    """App. F's 1L1H tier (vocabulary 64, d = 128): the §6 statistics with the main α table."""
    return _study_stats(r, "app_f", [x for e in ENCODINGS for x in stored(r, f"appF__{e}")], "1L1H")


def induction_table(r) -> dict:
    """App. H's induction: per tier and encoding, mean LG@60 and train accuracy over the seeds."""
    by_tier = lambda t: {e: _lg_train(stored(r, f"appH__induction__{t}__{e}")) for e in ENCODINGS}
    return {t: by_tier(t) for t in ch3.INDUCTION["tiers"]}
