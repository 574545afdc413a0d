"""Chapter 2's tolerance rules as code: each ``ruleN`` gives a claim's check, tolerance or
predicate and its ``why``, and the claims of :mod:`.claims` name their rule.

How each comparison was chosen (fixed before looking at our value)
-------------------------------------------------------------------
1. The paper reports a 95 % seed-bootstrap interval (Table 2, Table 3), and so do we (our 20 seeds,
   10,000 resamples). The two means are compared as two independent samples (a ``predicate``):
   each 95 % half-width is read as 1.96 standard errors, so they agree when
   ``|ours − paper| ≤ √(h_ours² + h_paper²)``, each ``h`` being the half-width on the side of its
   interval that faces the other mean (percentile intervals are not symmetric). Neither interval
   is widened; both resample seeds only and leave out the sampling error of the test bank.
2. An accuracy at the 100 % ceiling (the paper's "100.0 (100.0–100.0)": every seed perfect): the
   number of our 20 seeds with 100 % test accuracy must equal 20 (``equal``).
3. A 20-seed mean reported without an interval (the Table 1 cells outside Table 2):
   ``|ours − paper| ≤`` :data:`T1_TOLERANCE` points, the median 95 % half-width of the paper's own
   20-seed means in Tables 2–3 (ceilings excluded), rounded to whole points.
4. A difference of two reported means (the A_norm − A_pos gain of §4.3): the sum of the two 95 %
   half-widths (the widest the difference can be for any correlation between the two).
5. A correlation over n checkpoints reported without an interval (D.4): ours must lie in the
   paper's 95 % interval by Fisher's z, ``tanh(atanh ρ ± 1.96/√(n − 3))``.
6. A theorem's asymptotic exponent measured at finite n: a log-log slope of one exact window
   within :data:`WINDOW_SLOPE_TOL` of the exponent, a Monte Carlo exponent of an exact fraction
   within :data:`MC_EXPONENT_TOL` (fixed when the scans were designed: the log n attention scale
   adds slowly varying factors, and a fraction is a product of several windows plus sampling
   error). A window with one side still exact at the search limit is measured on the side that
   closes.
7. A closed form the paper derives, computed in float64: relative error ≤ :data:`CLOSED_FORM_RTOL`.
   Statements that hold for every point checked (bounds, "none is exact") are ``predicate`` checks
   saying exactly what was checked.
8. A Table 1 cell with zero NESV reported a few points from chance (First and Index under A_gen and
   A_sin; the D.3 banks of these tasks have exactly balanced labels): besides rule 3, a
   ``predicate`` on chance (:func:`chance_side`). Our mean is distinguishable from 50 % when its
   95 % seed-bootstrap interval excludes 50; the paper's number, without an interval, is read with
   rule 3's half-width. The claim holds when ours falls on the same side.
9. A shape the paper describes in words (Fig. 2; the §3.2 counterexample): a ``direction`` claim
   on seed-paired differences, whose 95 % seed-bootstrap interval must exclude 0 on the stated
   side; "as well as" (§3.2) is a ``predicate``: at no compared cell is A_sin below A_gen by more
   than the band of rule 1 (one-sided).
10. A lemma's inequality (App. A.3, Lemmas 6–7): checked as stated, with the constant of its
   proof, at the points we compute (a ``predicate``); a Monte Carlo probability enters by the
   lower end of its 95 % Clopper–Pearson interval.
A ``direction`` claim is never counted as a numeric reproduction; where the paper gives a size too,
a separate value claim checks it.
"""

from __future__ import annotations

import math
import statistics

from lengthgen.chapters.ch2 import paper
from lengthgen.claims import Claim

#: rule 3: median 95 % half-width of the paper's 20-seed means (Tables 2–3, no ceilings), whole points
T1_TOLERANCE = float(
    round(
        statistics.median(
            (hi - lo) / 2
            for table in (*paper.PAPER_T2.values(), *paper.PAPER_T3.values())
            for (m, lo, hi) in table.values()
            if m < 100.0
        )
    )
)
#: rule 6
WINDOW_SLOPE_TOL = 0.3
MC_EXPONENT_TOL = 0.5
#: rule 7
CLOSED_FORM_RTOL = 1e-9
#: seeds per stored cell (D.2)
SEEDS = len(paper.SEEDS)


def facing_half_widths(ours: dict, theirs) -> tuple[float, float]:
    """Rule 1: the half-widths of ``ours = {"mean", "lo", "hi"}`` and ``theirs = (mean, lo, hi)``
    on the sides that face each other's mean."""
    if ours["mean"] <= theirs[0]:
        return ours["hi"] - ours["mean"], theirs[0] - theirs[1]
    return ours["mean"] - ours["lo"], theirs[2] - theirs[0]


def two_sample_band(ours: dict, theirs) -> float:
    """Rule 1: the largest difference of the two means inside the band, √(h_ours² + h_paper²)."""
    return math.hypot(*facing_half_widths(ours, theirs))


def two_sample_agree(ours: dict, theirs) -> bool:
    """Rule 1: whether our mean and the paper's differ by no more than :func:`two_sample_band`."""
    return abs(ours["mean"] - theirs[0]) <= two_sample_band(ours, theirs)


def rule1(cell) -> dict:
    """Rule 1 against the paper's ``cell = (mean, lo, hi)``."""
    return dict(
        paper_value=cell[0],
        paper_uncertainty=[cell[1], cell[2]],
        check="predicate",
        holds=lambda v: two_sample_agree(v, cell),
        why="rule 1: two independent 20-seed means, each 95 % seed-bootstrap half-width read as "
        "1.96 SE: |ours − paper| ≤ √(h_ours² + h_paper²) (facing sides), a two-sided test at 5 % "
        "that counts our own uncertainty as well as the paper's",
    )


def rule2(why: str, count=SEEDS) -> dict:
    """Rule 2: at the 100 % ceiling, the number of perfect seeds must equal ``count``."""
    return dict(paper_value=count, check="equal", why=why)


def within(value, tolerance, why: str, **extra) -> dict:
    """A ``value`` check: ours within ± ``tolerance`` of the paper's ``value`` (rules 3, 4, 6, 7)."""
    return dict(paper_value=value, check="value", tolerance=tolerance, why=why, **extra)


def rule3(value: float) -> dict:
    why = f"rule 3: a 20-seed mean reported without an interval, ± {T1_TOLERANCE:g} points"
    return within(value, T1_TOLERANCE, why)


def rule6_window(exponent) -> dict:
    why = f"rule 6: a finite-n window slope within ± {WINDOW_SLOPE_TOL} of the exponent"
    return within(exponent, WINDOW_SLOPE_TOL, why)


def fisher_interval(rho: float, n: int, z: float = 1.96) -> tuple[float, float]:
    """Rule 5: the 95 % interval of a correlation ``rho`` over ``n`` points by Fisher's z."""
    c, h = math.atanh(rho), z / math.sqrt(n - 3)
    return (round(math.tanh(c - h), 3), round(math.tanh(c + h), 3))


def rule5(rho: float, n: int) -> dict:
    return dict(
        paper_value=rho,
        paper_uncertainty=list(fisher_interval(rho, n)),
        check="interval",
        interval=fisher_interval(rho, n),
        why=f"rule 5: the paper's value with its 95 % Fisher-z interval for n = {n}",
    )


def chance_side(lo: float, hi: float, chance: float = 50.0) -> str:
    """Rule 8: "above" or "below" chance where the interval (lo, hi) excludes it, else
    "indistinguishable"."""
    return "above" if lo > chance else "below" if hi < chance else "indistinguishable"


def paper_chance_side(value: float) -> str:
    """Rule 8: the side of chance of a Table 1 number without an interval, ± :data:`T1_TOLERANCE`."""
    return chance_side(value - T1_TOLERANCE, value + T1_TOLERANCE)


def live(cid, location, statement, paper_value, holds, why, **kw) -> Claim:
    """A claim the notebook measures live, checked by the predicate ``holds`` (rules 7, 10)."""
    return Claim(
        cid, location, statement, paper_value, "predicate", why, source="live", holds=holds, **kw
    )


def above_zero(v: dict) -> bool:
    """Rule 9 (and the sign of a gain): the 95 % seed-bootstrap interval lies above 0."""
    return v["lo"] > 0
