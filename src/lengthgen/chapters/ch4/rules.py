"""How chapter 4 compares our numbers with the paper's: each rule once, as code, named by the
claims of :mod:`.claims`, fixed before looking at our values (the paper gives no error bars and
no numbers for its figures, only sentences).

R1  An exact statement of a theorem (accuracy exactly 1): ``equal`` (:data:`R1`).
R2  An exact population accuracy evaluated on every input in float64: ``value`` ± 1e-12.
R3  An exact population accuracy estimated from N i.i.d. inputs: ± 3 binomial SE
    (:func:`r3_tolerance`); also "chance" in the p = 53 GPU run (:data:`R3_CHANCE_P53`).
R4  A level stated in words: "perfect", "near-perfect", "excellent" read as 1, "chance" as 1/p,
    each ± :data:`WORD_BAND`; per length the best over weight decay of the seed mean (App. B.1),
    "all lengths" taking the worst length, "chance at longer lengths" the highest at ≥ FAR_FROM.
R5  An order stated in words: ``direction``, only beyond 2 SE of the difference (:func:`ahead`);
    a trend only where Spearman's ρ is significant at 5 % (:func:`significant_rise`), an accuracy
    trend also beyond 2 SE end to end; "moderate" decay ends at B.1.3's grid top, 0.3.
R6  Our own checks (brute force, consequences by construction, live vs stored): ``self-check``."""

from __future__ import annotations

import itertools
import math

import numpy as np

from lengthgen.chapters.ch4 import paper

N_SE_EXACT = 3  # R3: binomial SEs around an exact population accuracy
WORD_BAND = 0.05  # R4: the band around a level stated in words
PERFECT = (1.0 - WORD_BAND, 1.0)  # R4: "perfect" and its synonyms
N_SE = 2.0  # R5: an order counts beyond this many SE of the difference
TREND_ALPHA = 0.05  # R5: significance level of a trend
MODERATE_WD = 0.3  # R5: the end of the paper's one stated weight-decay grid (B.1.3)
FAR_FROM = 201  # R4: "longer unseen lengths" for the chance-level claim


def r3_tolerance(qs, n: int) -> float:
    """R3: N_SE_EXACT binomial SE of the largest of the paper's values ``qs`` from ``n`` inputs."""
    return N_SE_EXACT * max(math.sqrt(q * (1 - q) / n) for q in qs)


def seed_mean(values, n_test):
    """R5: mean over seeds and its standard error, max(seed spread, binomial)."""
    a = np.asarray(values, dtype=float)
    mean = float(a.mean())
    binom = mean * (1 - mean) / (len(a) * n_test)
    spread = float(a.var(ddof=1)) / len(a) if len(a) > 1 else 0.0
    return mean, math.sqrt(max(spread, binom))


def binomial_se(acc, n_test):
    """The binomial SE of one accuracy measured on ``n_test`` inputs (R5 for one seed)."""
    return math.sqrt(acc * (1 - acc) / n_test)


def ahead(a, sa, b, sb):
    """R5: accuracy ``a`` (SE ``sa``) ahead of ``b`` (SE ``sb``) by more than N_SE standard errors."""
    return a - b > N_SE * math.hypot(sa, sb)


def spearman_trend(x, y):
    """Spearman's ρ of ``y`` against ``x`` and its exact one-sided permutation p-value (R5)."""
    from scipy.stats import rankdata

    rx, ry = rankdata(x), rankdata(y)

    def rho(a, b):
        a, b = a - a.mean(), b - b.mean()
        den = math.sqrt(float((a * a).sum() * (b * b).sum()))
        return float((a * b).sum()) / den if den > 0 else float("nan")

    r0 = rho(rx, ry)
    if not math.isfinite(r0):
        return {"rho": None, "p": 1.0}
    perms = list(itertools.permutations(ry))
    return {"rho": r0, "p": sum(rho(rx, np.asarray(q)) >= r0 - 1e-12 for q in perms) / len(perms)}


def significant_rise(t):
    """R5: a rising trend, significant at TREND_ALPHA."""
    return t["rho"] is not None and t["rho"] > 0 and t["p"] < TREND_ALPHA


def significant_rise_beyond_se(v):
    """R5 for an accuracy: a significant rise whose size also exceeds N_SE SE of the difference."""
    return significant_rise(v) and v["rise"] > N_SE * v["SE of the rise"]


def all_agree(total, hit):
    """R5 over a grid: the order holds at every point (``v[hit] == v[total] > 0``)."""
    return lambda v: v[hit] == v[total] and v[total] > 0


def r5_everywhere(
    total, hit, why="R5: an order stated in words, counted only beyond 2 binomial SE"
) -> dict:
    """R5 over a grid: the stated order holds, beyond 2 SE, at all ``v[total]`` points."""
    return {"check": "direction", "holds": all_agree(total, hit), "why": why}


# --------------------------------------------------------------------------- the comparisons
R1 = {"check": "equal", "why": "R1: an exact statement of the theorem"}
R2 = dict(check="value", tolerance=1e-12)
R2["why"] = "R2: an exact population accuracy evaluated on every input, equal up to float rounding"
R4_PERFECT = dict(check="interval", interval=PERFECT)
R4_PERFECT["why"] = "R4: a level stated in words, read as 1 with a ±0.05 band"
_P17 = paper.protocol("full")["lengthgen"]["p"]
R4_CHANCE = dict(check="interval", interval=(1 / _P17 - WORD_BAND, 1 / _P17 + WORD_BAND))
R4_CHANCE["why"] = "R4: 'chance' read as 1/p (p = 17) with a ±0.05 band"
R5_STRUGGLES = dict(check="direction", holds=lambda v: v < PERFECT[0])
R5_STRUGGLES["why"] = "R4/R5: 'struggles' stated in words, read as 'not near-perfect'"
R5_BIAS_GAIN = {  # the gain exceeds 2 SE at every budget
    "check": "direction",
    "holds": lambda v: all(g["beyond 2 SE"] for g in v.values()) and len(v) > 0,
    "why": "R5: an order stated in words; the mean over (length, weight decay) rewards both a wider "
    "length range and a wider weight-decay range",
}

# R3 for "chance" in the p = 53 GPU run: at chance, one reported value (a seed mean on n_eval
# held-out inputs of one length) has population accuracy q = 1/p, binomial SE ≤ √(q(1−q)/n_eval).
# The claim reports the highest of K = (lengths ≥ FAR_FROM) × (decays) such values: at chance it
# exceeds the ±3 SE band with probability ≤ K × the one-sided normal tail beyond 3 SE (union bound).
_P53, _N_EVAL = paper.PAPER_RUN["p"], paper.PAPER_RUN["n_eval"]
_SE_P53 = math.sqrt((1 / _P53) * (1 - 1 / _P53) / _N_EVAL)
CHANCE_P53 = (1 / _P53 - N_SE_EXACT * _SE_P53, 1 / _P53 + N_SE_EXACT * _SE_P53)
_K_P53 = sum(L >= FAR_FROM for L in paper.OOD_LENGTHS) * len(paper.PAPER_RUN["wds"])
_TAIL = 0.5 * math.erfc(N_SE_EXACT / math.sqrt(2))
R3_CHANCE_P53 = {
    "check": "interval",
    "interval": CHANCE_P53,
    "why": f"R3: 'chance' read as the population accuracy 1/p (p = {_P53}) ± {N_SE_EXACT} "
    f"binomial SE of one evaluation ({_N_EVAL:,} held-out inputs per length); the highest of "
    f"{_K_P53} such values exceeds it at chance with probability ≤ {100 * _K_P53 * _TAIL:.1f} %",
}
