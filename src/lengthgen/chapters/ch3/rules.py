"""How chapter 3's claims (:mod:`.claims`, :mod:`.claims_details`) compare ours with the paper's:
the tolerance rules, written once here, the causes a deviation may name, and one builder per rule.

How each comparison is chosen (rules fixed per kind of quantity, then applied)
------------------------------------------------------------------------------
1. **Exact quantities** (counts, sets, offsets, a perfect separation, α the theory makes 0 or 1):
   ``equal``.
2. **Deterministic α_L and closed forms** printed with d decimals: within half a unit of the last
   (:func:`rounding`; for a list, of its coarsest entry).
3. **Mean trained accuracy over n seeds**: ±:data:`ACC_TOL_ONE_RUN`/√n, or where the paper prints
   its seed spread s (Table 3) the larger of that and 2·s·√(2/n), two standard errors of a
   difference of two n-seed means (:func:`seed_mean_tol`).
4. **Rank correlations and AUCs over cells**: inside the paper's 95 % interval where printed, else
   ±:data:`RHO_TOL` = 0.05, the spread of its own robustness checks (App. D: 0.91/0.90/0.90 across
   learnability cutoffs; App. F: 0.90 against 0.92 across model sizes).
5. **Precisions** over high-α rows: inside the paper's 95 % bootstrap interval (2L4H, 4L4H); at
   1L1H, lost with Table 4, the paper's method on its printed counts (148 of 160 rows,
   :func:`paper_precision_interval`); the row count is a separate ``equal`` claim.
6. **Monte-Carlo estimates**: within 3 standard errors of ours against a closed form; against a
   paper figure without sample size, half a unit of its last digit plus 3 of ours at p = 1/2
   (:data:`MC_FIGURE_TOL`).
7. **"≈ 0" / "→ 0"**: at most :data:`NEAR_ZERO` = 0.01; a margin that must be ≤ 0: :data:`FLOAT_TOL`
8. **An order without a magnitude**: ``direction``, never counted as a numeric reproduction.

Thresholds inside predicates are the paper's (:data:`.measures.LEARNABLE` and its neighbours).
Deviations name a cause from :data:`CAUSES`; our checks of the code are ``group="self-check"``.
"""

from __future__ import annotations

import math

import numpy as np

from lengthgen.chapters.ch3 import paper
from lengthgen.claims import Claim, Deviation
from lengthgen.stats import bootstrap_ci

#: Causes a deviation of this chapter may name.
CAUSES: dict[str, str] = {
    "unstated hyperparameter: CE-fit learning rate": "the paper fixes the CE rule's 400 Adam "
    "steps and weight decay 1e-4, not its learning rate; we use 0.05, chosen before looking at "
    "any number. Cells in the selection gap (sinusoidal bounded offsets, RoPE attend-first's long "
    "tail) change with it",
    "unstated hyperparameter: min-norm pseudo-inverse cutoff": "the sinusoidal and RoPE Φ_20 have "
    "full rank but singular values below float64's resolution, so a float64 min-norm interpolant "
    "depends on where Φ⁺ cuts the spectrum; the paper does not say, we use torch's default",
    "unstated setup: the W of Prop. 2's Monte Carlo": "the paper does not say which selected W "
    "its Monte-Carlo figures for Prop. 2 use",
    "scope: App. E's sentence names no tier": "App. E says the relative encodings neither learn "
    "nor transfer the interior positions, naming no tier; its numbers (Table 6) are the one-layer "
    "tier's, where the sentence holds for us. At the deeper tiers our models reach them through "
    "the content channel (§6, App. D); the paper prints no number there",
    "one crossing per length": "the target of copy and reverse moves with the row, so a kernel "
    "favouring one fixed key or offset hits exactly the row whose target crosses it, at every "
    "length: α = 1/|S_L|, not a transfer, tending to 0 only as the scored set grows",
    "unstated setup: the features of Prop. 2's old-key Monte Carlo": "the paper states the "
    "selection (a min-norm W on the trained rows), m = 64 and L = 128, not how the features are "
    "drawn or normalised",
    "unstated setup: the frequency counts of Conjecture 1 (iv)": "the paper gives a range of "
    "condition numbers for 'realistic frequency counts' without naming counts, bases or lengths",
    "our reading: the moderately low scales of paper Table 10": "the paper names the scales 0.03 "
    "and 0.01 and calls the others, unlisted, standard and moderately low; 0.3 and 0.1 are ours",
    "unstated setup: App. H's induction protocol": "the paper reports induction LG per encoding "
    "at two depths but not its generator, vocabulary, lengths or updates; we train App. C's "
    "protocol on our induction generator",
    "run-to-run variance": "our models are independent runs of App. C's protocol; which seed of a "
    "cell lands on a poorly extrapolating solution differs between independent sets of runs, by "
    "more than the paper's own interval over its rows shows",
}


#: The cause and the shared explanation of the deviations that come from the CE fit's learning rate.
CE_LR = "unstated hyperparameter: CE-fit learning rate"
LR_SENSITIVITY = (
    "The chapter's lr grid (0.01 … 0.2) refits every head whose α the paper prints: 0.09 "
    "reproduces the most of its 37 values (35), 0.1 every sinusoidal one but not RoPE attend-first "
    "at L ≥ 128, no rate all of them. We keep our a-priori 0.05 (28 of 37)."
)


def lr_deviation(why: str) -> Deviation:
    """:data:`CE_LR`'s deviation: ``why`` the value moves with the lr, then the lr grid's result."""
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
    """Rule 3: tolerance of a mean accuracy over ``n`` seeds, widened by the paper's spread sd."""
    base = ACC_TOL_ONE_RUN / math.sqrt(n)
    return base if sd is None else max(base, 2 * sd * math.sqrt(2 / n))


def paper_precision_interval(hits: int, rows: int, *, n_boot=10_000, seed=0) -> tuple:
    """Rule 5: the 95 % percentile-bootstrap interval of ``hits`` successes in ``rows`` rows."""
    _, lo, hi = bootstrap_ci(np.r_[np.ones(hits), np.zeros(rows - hits)], n_boot=n_boot, seed=seed)
    return lo, hi


#: Rule 5 at 1L1H: the interval of the paper's 148 successes in 160 high-α rows.
PRECISION_1L1H_CI = paper_precision_interval(
    paper.HIGH_ROWS_1L1H["rows"] - paper.HIGH_ROWS_1L1H["violations"], paper.HIGH_ROWS_1L1H["rows"]
)


def binomial_band(p: float, n: int, k: float = 2.0) -> float:
    """Rule 5 without an interval: ``k`` binomial standard errors of a proportion ``p`` of ``n``."""
    return k * math.sqrt(p * (1 - p) / n) if n else math.inf


def tau_holds(v) -> bool:
    """Rule 5 at each τ of the paper: ``v = {τ: {"precision", "rows"}}``, :func:`binomial_band`."""
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
