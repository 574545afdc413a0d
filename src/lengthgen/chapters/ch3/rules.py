"""How chapter 3's claims (:mod:`.claims`, :mod:`.claims_details`) compare ours with the paper's:
the tolerance rules, written once here, the causes a deviation may name, and one builder per rule.

How each comparison is chosen (rules fixed per kind of quantity, then applied)
------------------------------------------------------------------------------
1. **Exact quantities** — counts, sets of cells, offsets, constructions, a perfect separation
   (AUC = 1), α values the theory makes exactly 0 or 1: ``equal``.
2. **α_L and closed-form rates** (deterministic given the fit) printed with d decimals: within half a
   unit of the last printed decimal (:func:`rounding`; for a list, of its coarsest entry): two
   decimals ±0.005, three ±0.0005.
3. **Trained accuracies, mean over n seeds**: ±:data:`ACC_TOL_ONE_RUN`/√n (one run ±0.10, the
   paper's 5 seeds ±0.045). Where the paper prints the spread s over its seeds (Table 3's ±), the
   tolerance is the larger of that and 2·s·√(2/n), two standard errors of the difference between two
   independent n-seed means (:func:`seed_mean_tol`).
4. **Rank correlations and AUCs over cells**: ours inside the paper's 95 % interval where it prints
   one; otherwise ±:data:`RHO_TOL` = 0.05, the spread of the paper's own robustness checks (ρ =
   0.91/0.90/0.90 across learnability cutoffs, App. D; 0.90 against 0.92 across model sizes, App. F).
5. **Precisions** Pr[LG ≥ 0.7 | α_L ≥ 0.5] (proportions over high-α rows): ours inside the paper's
   95 % bootstrap interval where the text prints it (2L4H, 4L4H). For 1L1H the interval is lost with
   Table 4 but the text gives the counts (148 of 160 rows); the interval is then the paper's method
   applied to the paper's rows: a percentile bootstrap of those 160 outcomes (10,000 resamples,
   seed 0; :func:`paper_precision_interval`). The number of high-α rows is a separate ``equal``
   claim, so a precision over other rows than the paper's shows as such.
6. **Monte-Carlo estimates**: against a closed form, within 3 standard errors of our estimate;
   against a Monte-Carlo figure of the paper (no sample size given), half a unit of its last digit
   plus 3 standard errors of ours at p = 1/2 (:data:`MC_FIGURE_TOL`).
7. **"≈ 0" / "→ 0" without a number**: at most :data:`NEAR_ZERO` = 0.01 (one scored row in a
   hundred); a margin that must be ≤ 0: at most :data:`FLOAT_TOL`.
8. **An order without a magnitude** (CE beats min-norm; α falls from 8 to 32 frequencies; precision
   rises with the threshold): ``direction``, never counted as a numeric reproduction.

Thresholds inside predicates are the paper's own (:data:`lengthgen.chapters.ch3.measures.LEARNABLE`
and its neighbours, §6, Table 4). Deviations are declared with a cause from :data:`CAUSES` and an
explanation we wrote. Our own checks of the code are ``group="self-check"``.
"""

from __future__ import annotations

import math

import numpy as np

from lengthgen.chapters.ch3 import paper
from lengthgen.claims import Claim, Deviation

#: Causes a deviation of this chapter may name.
CAUSES: dict[str, str] = {
    "unstated hyperparameter: CE-fit learning rate": "the paper fixes the cross-entropy selection rule's 400 Adam steps and weight decay 1e-4 but not its "
    "learning rate; we use 0.05, chosen before looking at any number. Cells in the selection gap "
    "(sinusoidal bounded offsets, RoPE attend-first's long tail) change with it",
    "unstated hyperparameter: min-norm pseudo-inverse cutoff": "for the sinusoidal and RoPE bases Φ_20 is full rank but its smallest singular values lie below "
    "float64's resolution, so a float64 min-norm interpolant depends on where the pseudo-inverse cuts "
    "the spectrum; the paper writes Φ⁺ and does not say, we use torch's default cutoff",
    "unstated setup: the W of Prop. 2's Monte Carlo": "the paper reports Monte-Carlo figures for Prop. 2 without saying which selected W they use",
    "scope: App. E's sentence names no tier": "App. E says the relative encodings neither learn nor transfer the interior positions without "
    'naming a depth tier, although its study covers all three; its printed numbers (Table 6, "these '
    "ten cells\") are the one-layer tier's, where the sentence holds in our runs. Read at the deeper "
    "tiers it does not: there our models reach the interior positions through the content channel "
    "that §6 and App. D describe for attend-first, and the paper prints no deeper-tier number to set "
    "beside ours",
    "one crossing per length": "the target of copy and reverse moves with the row, so a selected kernel that favours one "
    "fixed key or one fixed offset hits exactly the row whose target crosses it, at every length: "
    "α = 1/|S_L| from one fixed row, not a transfer of the growing offset, and it tends to 0 only "
    "because the scored set grows",
    "unstated setup: the features of Prop. 2's old-key Monte Carlo": "the paper states the selection (a min-norm W on the "
    "trained rows), m = 64 and L = 128, but not how the features are drawn or normalised",
    "unstated setup: the frequency counts of Conjecture 1 (iv)": "the paper gives a range of condition numbers for "
    "'realistic frequency counts' without naming the counts, bases or lengths it covers",
    "our reading: the moderately low scales of paper Table 10": "the paper names the frequency scales "
    "0.03 and 0.01 and calls the others standard and moderately low without listing them, so the "
    "moderately low scales 0.3 and 0.1 are ours",
    "unstated setup: App. H's induction protocol": "the paper reports induction LG per encoding at two "
    "depths but not its sequence generator, vocabulary, lengths or number of updates; we train App. "
    "C's protocol on our induction generator",
    "run-to-run variance": "our trained models are independent runs of App. C's protocol (our implementation, initialisations "
    "and data streams); which seed of a cell lands on a poorly extrapolating solution differs between "
    "independent sets of runs, by more than the paper's own interval over its rows shows",
}


#: The cause and the shared explanation of the deviations that come from the CE fit's learning rate.
CE_LR = "unstated hyperparameter: CE-fit learning rate"
LR_SENSITIVITY = (
    "The chapter's learning-rate grid (0.01 … 0.2, 0.06–0.12 in steps of 0.01) refits every head whose α "
    "the paper prints: 0.09 reproduces the most of its 37 values (35), 0.1 every sinusoidal one but not "
    "RoPE attend-first at L ≥ 128, and no rate all of them. We keep our a-priori 0.05 (28 of 37)."
)


def lr_deviation(why: str) -> Deviation:
    """The deviation of a value that moves with the CE fit's learning rate (:data:`CE_LR`): ``why``
    it does, then what the chapter's learning-rate grid shows (:data:`LR_SENSITIVITY`)."""
    return Deviation(CE_LR, why + LR_SENSITIVITY)


#: Rule 3: tolerance of a single run's accuracy (a mean over n seeds: this / √n).
ACC_TOL_ONE_RUN = 0.10
#: Rule 4: tolerance of a rank correlation the paper prints without an interval.
RHO_TOL = 0.05
#: Rule 6: a Monte-Carlo figure of the paper (two decimals, ±0.005) against ours over 20,000 trials
#: (3 standard errors at p = 1/2: 3·√(0.25/20000) ≈ 0.0106).
MC_FIGURE_TOL = 0.005 + 3 * math.sqrt(0.25 / 20_000)
#: Rule 7: "≈ 0" without a number, and the float tolerance of a margin that must be ≤ 0.
NEAR_ZERO = 0.01
FLOAT_TOL = 1e-9


def rounding(decimals: int) -> float:
    """Rule 2: half a unit of the last of ``decimals`` printed decimals."""
    return 0.5 * 10.0 ** (-decimals)


def seed_mean_tol(sd: float | None = None, n: int = 5) -> float:
    """Rule 3: tolerance of a mean accuracy over ``n`` seeds, widened by the paper's seed spread ``sd``."""
    base = ACC_TOL_ONE_RUN / math.sqrt(n)
    return base if sd is None else max(base, 2 * sd * math.sqrt(2 / n))


def paper_precision_interval(hits: int, rows: int, *, n_boot=10_000, seed=0) -> tuple:
    """Rule 5: the 95 % percentile-bootstrap interval of a precision of ``hits`` successes in ``rows``
    rows (the paper's method — a bootstrap over the high-α rows — applied to the paper's counts)."""
    from lengthgen.stats import bootstrap_ci

    _, lo, hi = bootstrap_ci(np.r_[np.ones(hits), np.zeros(rows - hits)], n_boot=n_boot, seed=seed)
    return lo, hi


#: Rule 5 at 1L1H: the interval of the paper's 148 successes in 160 high-α rows.
PRECISION_1L1H_CI = paper_precision_interval(
    paper.HIGH_ROWS_1L1H["rows"] - paper.HIGH_ROWS_1L1H["violations"], paper.HIGH_ROWS_1L1H["rows"]
)


def binomial_band(p: float, n: int, k: float = 2.0) -> float:
    """Rule 5 for a proportion printed without an interval: ``k`` binomial standard errors of a
    proportion ``p`` over ``n`` rows."""
    return k * math.sqrt(p * (1 - p) / n) if n else math.inf


def tau_holds(v) -> bool:
    """Rule 5 at each threshold τ of the paper: ``v = {τ: {"precision", "rows"}}`` within
    :func:`binomial_band` of the paper's precision."""
    return all(
        abs(v[str(t)]["precision"] - p) <= binomial_band(p, v[str(t)]["rows"])
        for t, p in paper.PRECISION_TAU.items()
    )


def old_key_tolerance(n_trials: int = 20_000, k: int = 108) -> float:
    """Rule 6 for the "up to 5.2×" ratio: half a unit of its printed decimal plus 3 Monte-Carlo
    standard errors at the paper's value (hit rate 5.2/(k − 1), k = 108 keys at L = 128)."""
    p = paper.PROP2_OLD_KEY_RATIO / (k - 1)
    return 0.05 + 3 * math.sqrt(p * (1 - p) / n_trials) * (k - 1)


def within(paper_values, tolerances):
    """``holds`` of an element-wise comparison with one tolerance per element (0: equality)."""
    pv, tv = list(paper_values), list(tolerances)
    close = lambda o, p, t: o is not None and abs(float(o) - float(p)) <= t
    return lambda ours: ours is not None and len(ours) == len(pv) and all(map(close, ours, pv, tv))


# --------------------------------------------------------------------------- builders
# Each takes the claim's id, location, statement, paper value and (for a stored claim) measure,
# positionally, and any other field of :class:`lengthgen.claims.Claim` by keyword.
def claim(check, id, location, statement, paper_value, measure=None, *, why, **kw) -> Claim:
    return Claim(id, location, statement, paper_value, check, why, measure=measure, **kw)


def exact(*args, why="rule 1", **kw) -> Claim:
    """Rule 1: an exact quantity, compared with ``equal``."""
    return claim("equal", *args, why=why, **kw)


def printed(*args, decimals=2, why="rule 2: deterministic α printed with two decimals", **kw):
    """Rule 2: a deterministic value within half a unit of its last printed decimal."""
    return claim("value", *args, why=why, tolerance=rounding(decimals), **kw)


def rank_correlation(*args, why="rule 4: a rank correlation printed without an interval", **kw):
    """Rule 4 without the paper's interval: within :data:`RHO_TOL`."""
    return claim("value", *args, why=why, tolerance=RHO_TOL, **kw)


def element_wise(*args, tolerances, **kw) -> Claim:
    """Rules 1–3 entry by entry: each entry of ours within its own tolerance (0: equal)."""
    return claim("predicate", *args, holds=within(args[3], tolerances), **kw)


def paper_interval(*args, interval, why="rule 5: the paper's own 95 % bootstrap interval", **kw):
    """Rules 4 and 5 with the paper's own 95 % interval: ours inside it."""
    kw |= {"interval": interval, "paper_uncertainty": list(interval)}
    return claim("interval", *args, why=why, **kw)
