"""Chapter 4's measurements: our value of each stored claim of :mod:`lengthgen.chapters.ch4.claims`,
read from the full-scale cells under ``results/ch4/cells/`` (through
:func:`lengthgen.chapters.ch4.experiments.load_stored_cell`: same configuration as today's plan,
schema checked). Every function takes the claims' ``results`` (a
:class:`lengthgen.claims.StoredResults`) and follows the rules of :mod:`.rules`.
"""

from __future__ import annotations

import math

import numpy as np

from lengthgen.chapters.ch4 import paper
from lengthgen.chapters.ch4.constructions import fixed_length_window
from lengthgen.chapters.ch4.experiments import (
    PAPER_CELL,
    lengthgen_cell_name,
    load_stored_cell,
    paper_scale_rows,
    window_key,
)
from lengthgen.chapters.ch4.paper import OOD_LENGTHS
from lengthgen.chapters.ch4.relu_limits import homogeneous_pairs, path_lower_bound
from lengthgen.chapters.ch4.theory import (
    loglog_slope,
    relu_interpolant_margins,
    samples_needed,
)
from lengthgen.chapters.ch4.rules import (
    FAR_FROM,
    MODERATE_WD,
    PERFECT,
    ahead,
    binomial_se,
    seed_mean,
    spearman_trend,
)

FULL = paper.protocol("full")
_AUT = paper.checks("full")["automaton"]
_FLOAT = paper.checks("full")["float"]


def cell(results, name):
    """The stored full-scale cell ``name``, checked against today's plan and its schema
    (:func:`~lengthgen.chapters.ch4.experiments.load_stored_cell`), cached on ``results``."""
    cache = vars(results).setdefault("_ch4_cells", {})
    if name not in cache:
        cache[name] = load_stored_cell(name, folder=results.folder)["data"]
    return cache[name]


# --------------------------------------------------------------------------- constructions (Sec. 4)
def nobias_exhaustive_cells():
    """The (p, m) cells of the stored exhaustive check where the bias-free network exists (p ≥ 3)."""
    c = paper.checks("full")["exhaustive"]
    return [(p, m) for p in c["ps"] for m in c["ms"] if p**m <= c["limit"] and p >= 3]


def nobias_exhaustive_paper():
    """The paper's Thm 4.2 (no bias) value, 1 − 1/p or 1 − 2/p, at each of our exhaustive cells."""
    return [1 - (1 if p % 2 else 2) / p for p, _ in nobias_exhaustive_cells()]


def exhaustive_min(results, construction):
    """Lowest accuracy of ``construction`` over the stored exhaustive check's cells."""
    return min(row[construction] for row in cell(results, "exhaustive"))


def nobias_exhaustive(results):
    rows = {(r["p"], r["m"]): r["fourier"] for r in cell(results, "exhaustive")}
    return [rows[c] for c in nobias_exhaustive_cells()]


def nobias_long_paper():
    """The paper's Thm 4.2 (no bias) value 1 − 1/p at each prime of the long-length check."""
    return [1 - 1 / p for p in _AUT["primes"]]


#: inputs behind the long-length accuracy: lengths × inputs per length
N_LONG = _AUT["max_m"] * _AUT["n"]


def automaton(results, construction, field):
    """``field`` of ``construction`` in the stored long-length check, one value per prime."""
    a = cell(results, "automaton")
    return [a[f"{construction}@{p}"][field] for p in _AUT["primes"]]


def ties(results):
    return {
        "errors outside tie residues": sum(
            automaton(results, "fourier", "errors_outside_tie_residues")
        ),
        "max |acc − (1 − tie share)|": max(
            automaton(results, "fourier", "max_abs_acc_minus_1_minus_tie_share")
        ),
    }


def float_agrees(results):
    f = cell(results, f"float_n{_FLOAT['n']}")
    primes = _FLOAT["primes"]
    return {
        "min acc, width-2 nets": min(
            f[f"{c}@{p}"]["min_acc"] for c in ("thm41", "thm42_bias") for p in primes
        ),
        "bias-free errors outside tie residues": sum(
            f[f"fourier@{p}"]["errors_outside_tie_residues"] for p in primes
        ),
    }


def window_derived(cases=paper.WINDOW_CASES, span=paper.WINDOW_SPAN) -> dict:
    """Our derived window (:func:`~.constructions.fixed_length_window`) for each (p, m) case of the
    window check, over the lengths 1 … span·m: the value claim ``ch4.thm41.window`` expects."""
    return {window_key(p, m): fixed_length_window(m, p, span * m) for p, m in cases}


def construction_summary(rows) -> dict:
    """Our value of ``ch4.thm43.construction`` from :func:`~.experiments.relu_construction_check` rows."""
    return {
        "min accuracy": min(r["acc"] for r in rows),
        "narrower than the bound": sum(r["width"] < r["path_bound"] for r in rows),
    }


def bounds(results):
    rows = cell(results, "bounds")
    ok = sum(r["paper_bound"] <= r["path_bound"] <= r["construction_width"] for r in rows)
    return {"lengths": len(rows), "paper ≤ path ≤ construction": ok}


def relu_training(results):
    rw = cell(results, "relu_min_width")
    return {str(m): w for m, w in sorted(rw["min_width"].items(), key=lambda kv: int(kv[0]))}


def fits_respect_bound(mw):
    p = FULL["relu_width"]["p"]
    return all(w is None or w >= path_lower_bound(int(m), p) for m, w in mw.items())


def rays(results):
    tl = cell(results, "two_lengths")
    return [s for r in tl["runs"] if not r["bias"] for s in r["same_prediction_pairs"]]


def rays_expected():
    tl = FULL["two_lengths"]
    k = len(homogeneous_pairs(tl["m1"], tl["m2"], tl["p"])["pairs"])
    bias_free_runs = 2  # "X_m1 only" and "X_m1 ∪ X_m2" (experiments.TWO_LENGTH_RUNS)
    return [k] * (bias_free_runs * len(tl["seeds"]))


def union(results):
    runs = cell(results, "two_lengths")["runs"]
    run = next(r for r in runs if not r["bias"] and "∪" in r["name"])
    return [[a, b] for a, b in zip(run["acc_m1"], run["acc_m2"])]


# --------------------------------------------------------------------------- under-parameterized (Fig. 1)
def under_cells(results, name="underparam"):
    """{(m, p, width, n): {activation: (mean test, SE, all seeds fit)}} of the stored B.1.1 sweep
    ``name`` (or Fig. 9's)."""
    n_test = FULL[name]["n_test"]
    groups = {}
    for r in cell(results, name)["rows"]:
        key = (r["m"], r["p"], r["width"], r["n"], r["activation"])
        groups.setdefault(key, []).append(r)
    out = {}
    for (m, p, w, n, act), rs in groups.items():
        mean, se = seed_mean([r["test_acc"] for r in rs], n_test)
        fits = all(r["train_acc"] >= PERFECT[0] for r in rs)
        out.setdefault((m, p, w, n), {})[act] = (mean, se, fits)
    return out


def sine_beats_relu(results):
    cells = under_cells(results)
    wins = sum(ahead(*c["sine"][:2], *c["relu"][:2]) for c in cells.values())
    return {"cells": len(cells), "sine ahead by > 2 SE": wins}


def width_trend(results):
    """R4/R5 for 'reducing the width (while still sufficient for optimization) improves test accuracy',
    sine: per (m, p, n), among widths whose every seed fits its training set (R4 band), test accuracy
    never rises significantly with width, and falls significantly from the narrowest to the widest
    unless the widest is already in the near-perfect band (no room to improve)."""
    cells = under_cells(results)
    compared = agree = 0
    for m, p, n in sorted({(m, p, n) for m, p, _, n in cells}):
        ws = sorted(
            w
            for mm, pp, w, nn in cells
            if (mm, pp, nn) == (m, p, n) and cells[(m, p, w, n)]["sine"][2]
        )
        if len(ws) < 2:
            continue
        compared += 1
        s = [cells[(m, p, w, n)]["sine"][:2] for w in ws]
        no_rise = not any(ahead(*s[i + 1], *s[i]) for i in range(len(s) - 1))
        falls = s[-1][0] >= PERFECT[0] or ahead(*s[0], *s[-1])
        agree += bool(no_rise and falls)
    return {
        "(m, p, n) cells compared": compared,
        "narrower not worse, better where room": agree,
    }


# --------------------------------------------------------------------------- over-parameterized (Figs 2–3)
def _over(results, activation=None, moderate=False):
    return [
        r
        for r in cell(results, "overparam")["rows"]
        if activation in (None, r["activation"]) and (not moderate or r["wd"] <= MODERATE_WD)
    ]


def trend(results, activation, field):
    """R5: Spearman trend of ``field`` over the moderate weight decays."""
    rows = sorted(_over(results, activation, moderate=True), key=lambda r: r["wd"])
    return spearman_trend([r["wd"] for r in rows], [r[field] for r in rows])


def accuracy_trend(results, activation):
    """R5 for 'test accuracy improves with decay': the Spearman trend over the moderate decays
    (:func:`trend`) and the rise of the seed-mean test accuracy from the grid's first decay to its
    last moderate one, with the R5 SE of that difference (binomial alone for one seed, from the
    stored sweep's test-set size)."""
    n_test = FULL["overparam"]["n_test"]
    by = {}
    for r in _over(results, activation, moderate=True):
        by.setdefault(r["wd"], []).append(r["test_acc"])
    (a0, s0), (a1, s1) = seed_mean(by[min(by)], n_test), seed_mean(by[max(by)], n_test)
    return {
        **trend(results, activation, "test_acc"),
        "rise": a1 - a0,
        "SE of the rise": math.hypot(s0, s1),
    }


def excessive(results, activation):
    n_test = FULL["overparam"]["n_test"]
    rows = _over(results, activation)
    best = max((r for r in rows if r["wd"] <= MODERATE_WD), key=lambda r: r["test_acc"])
    top = max((r for r in rows if r["wd"] > MODERATE_WD), key=lambda r: r["wd"])
    sb, st = binomial_se(best["test_acc"], n_test), binomial_se(top["test_acc"], n_test)
    return {
        "wd": top["wd"],
        "train acc": top["train_acc"],
        "test below best moderate by > 2 SE": ahead(best["test_acc"], sb, top["test_acc"], st),
    }


def excessive_holds(v):
    return v["train acc"] < PERFECT[0] and v["test below best moderate by > 2 SE"]


def sine_vs_relu_over(results):
    n_test = FULL["overparam"]["n_test"]
    by = {(r["activation"], r["wd"]): r for r in _over(results)}
    wds = sorted({wd for _, wd in by})
    ok = 0
    for wd in wds:
        s, r = by[("sine", wd)], by[("relu", wd)]
        ss, sr = binomial_se(s["test_acc"], n_test), binomial_se(r["test_acc"], n_test)
        ok += bool(
            s["normalized_margin"] > r["normalized_margin"]
            and ahead(s["test_acc"], ss, r["test_acc"], sr)
        )
    return {
        "weight decays": len(wds),
        "sine larger margin and test acc ahead by > 2 SE": ok,
    }


# --------------------------------------------------------------------------- length generalization (Figs 4–5)
def rows(results, sweep, activation, bias):
    """The member rows of one variant: of a length-generalization cell (``sweep``), or of the
    paper-scale GPU cell (``sweep`` = :data:`PAPER_CELL`, its last evaluation)."""
    if sweep == PAPER_CELL:
        return [
            r
            for r in paper_scale_rows(cell(results, PAPER_CELL))
            if r["activation"] == activation and r["bias"] == bias
        ]
    return cell(results, lengthgen_cell_name(sweep, activation, bias))["rows"]


def best_over_wd(rows, n, lengths):
    """R4 / App. B.1: per length, the best over weight decay of the seed-averaged accuracy, at budget n."""
    out = {}
    for L in lengths:
        by_wd = {}
        for r in rows:
            if r["n"] == n:
                by_wd.setdefault(r["wd"], []).append(r[str(L)])
        out[L] = max(float(np.mean(v)) for v in by_wd.values())
    return out


def _at_largest_n(results, sweep, activation, bias, lengths):
    rs = rows(results, sweep, activation, bias)
    return best_over_wd(rs, max(r["n"] for r in rs), lengths).values()


def worst(results, sweep, activation, bias, lengths):
    """R4: the worst of ``lengths`` at the largest budget, best over weight decay."""
    return min(_at_largest_n(results, sweep, activation, bias, lengths))


def far_max(results, sweep):
    """R4: the ReLU MLP's highest accuracy at unseen lengths ≥ FAR_FROM, best over weight decay."""
    far = [L for L in OOD_LENGTHS if L >= FAR_FROM]
    return max(_at_largest_n(results, sweep, "relu", False, far))


def _mean_and_se(per_seed, n_test):
    """Mean over every (seed, length, weight decay) and its R5 SE: max(binomial, seed spread)."""
    a = np.concatenate([np.asarray(v) for v in per_seed.values()])
    binom = math.sqrt(float((a * (1 - a)).sum()) / n_test) / len(a)
    means = np.array([np.mean(v) for v in per_seed.values()])
    spread = math.sqrt(float(means.var(ddof=1)) / len(means)) if len(means) > 1 else 0.0
    return float(a.mean()), max(binom, spread)


def bias_gain(results, sweep):
    """R5 for Fig. 5: per budget, the mean accuracy over every (unseen length, weight decay) of the
    biased minus the bias-free sine MLP, and whether it exceeds N_SE standard errors. The SE of each
    mean follows R5: over k seeds, SE² = max(s²/k, binomial SE²), s the spread of the k per-seed
    means (the binomial term alone for one seed)."""
    n_test = paper.PAPER_RUN["n_eval"] if sweep == PAPER_CELL else FULL[sweep]["n_test"]
    by = {}
    for bias in (False, True):
        for r in rows(results, sweep, "sine", bias):
            by.setdefault((bias, r["n"]), {}).setdefault(r["seed"], []).extend(
                r[str(L)] for L in OOD_LENGTHS
            )
    out = {}
    for n in sorted({n for _, n in by}):
        (mb, sb), (m0, s0) = (_mean_and_se(by[(b, n)], n_test) for b in (True, False))
        out[str(n)] = {"gain": mb - m0, "beyond 2 SE": ahead(mb, sb, m0, s0)}
    return out


# --------------------------------------------------------------------------- transformer (Fig. 6)
def transformer(results):
    block = FULL["transformer"]
    by = {}
    for r in cell(results, f"transformer_m{block['m']}")["rows"]:
        by.setdefault((r["n"], r["activation"]), []).append(r["test_acc"])
    sizes = sorted({n for n, _ in by})
    ok = 0
    for n in sizes:
        s = seed_mean(by[(n, "sine")], block["n_test"])
        ok += all(ahead(*s, *seed_mean(by[(n, a)], block["n_test"])) for a in ("relu", "gelu"))
    return {
        "training-set sizes": len(sizes),
        "sine ahead of ReLU and GELU by > 2 SE": ok,
    }


# --------------------------------------------------------------------------- Fig. 9 and the learning theory
def sgd_sine_beats_relu(results):
    """Fig. 9: (width, n) cells of the SGD sweep where sine is ahead of ReLU by > 2 SE (R5)."""
    cells = under_cells(results, "underparam_sgd")
    wins = sum(ahead(*c["sine"][:2], *c["relu"][:2]) for c in cells.values())
    return {"cells": len(cells), "sine ahead by > 2 SE": wins}


def sgd_versus_adamw(results, activation):
    """Fig. 9 against the AdamW sweep at the same cells: per cell the seed-mean test accuracies
    (SGD, AdamW) of ``activation``, with their SEs."""
    sgd = under_cells(results, "underparam_sgd")
    adam = under_cells(results, "underparam_adamw97")
    return {k: (sgd[k][activation][:2], adam[k][activation][:2]) for k in sgd}


def sgd_relu_gap(results):
    """Fig. 9: how many cells have the ReLU MLP fit its training set (every seed) under SGD or
    AdamW, and among them the largest |ReLU under SGD − ReLU under AdamW| (seed-mean test
    accuracies; ``None`` over no cell): two networks at chance would match trivially."""
    pairs = sgd_versus_adamw(results, "relu")
    sgd = under_cells(results, "underparam_sgd")
    adam = under_cells(results, "underparam_adamw97")
    fit = [k for k in pairs if sgd[k]["relu"][2] or adam[k]["relu"][2]]
    gaps = [abs(pairs[k][0][0] - pairs[k][1][0]) for k in fit]
    return {"cells where ReLU fits": len(fit), "largest gap": max(gaps, default=None)}


def sgd_sine_slower(results):
    """Fig. 9: cells where sine under AdamW is ahead of sine under SGD by > 2 SE (R5)."""
    pairs = sgd_versus_adamw(results, "sine").values()
    return {
        "cells": len(pairs),
        "AdamW ahead by > 2 SE": sum(ahead(*a, *s) for s, a in pairs),
    }


def relu_margins_vs_interpolant(results):
    """Sec. 6 remark: trained ReLU widths (every seed fits) and how many have every seed's normalized
    margin above our interpolant's at the same (m, p)."""
    c = cell(results, "margin_widths")
    ours = relu_interpolant_margins(c["p"], [c["m"]])[0]["normalized"]
    by_w = {}
    for r in c["rows"]:
        if r["activation"] == "relu":
            by_w.setdefault(r["width"], []).append(r)
    fit = {w: rs for w, rs in by_w.items() if all(r["train_acc"] == 1.0 for r in rs)}
    above = sum(all(r["normalized_margin"] > ours for r in rs) for rs in fit.values())
    return {"widths that fit": len(fit), "above the interpolant, every seed": above,
            "interpolant's normalized margin": ours}  # fmt: skip


def samples_slope(results, axis, level):
    """Cor. 5.8 (``axis="p"``, width 16) or Thm 5.6 (``axis="width"``, p = 23): the log-log slope
    of the samples needed for seed-mean test accuracy ``level`` (:func:`.theory.samples_needed`)
    against p or the width; ``None`` where some point never reaches ``level``."""
    rows = cell(results, "sample_needs")["rows"]
    grid = FULL["sample_needs"]["grid"]
    pts = [(p, w) for p, w in grid if (w == 16 if axis == "p" else p == 23)]
    ns = [samples_needed(rows, p, w, level) for p, w in pts]
    if None in ns:
        return None
    return loglog_slope([p if axis == "p" else w for p, w in pts], ns)["slope"]
