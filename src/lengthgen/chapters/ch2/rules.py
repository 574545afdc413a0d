"""Chapter 2's tolerance rules as code (each fixed before looking at our value); a claim of
:mod:`.claims` names its rule, and ``ruleN`` gives its check, tolerance or predicate and ``why``.

1. Two 20-seed means with 95 % seed-bootstrap intervals (Tables 2–3; ours: 10,000 resamples),
   compared as two independent samples: each half-width, on the side facing the other mean, is
   1.96 SE, so they agree when ``|ours − paper| ≤ √(h_ours² + h_paper²)`` (:func:`two_sample_band`).
   Both intervals resample seeds only, without the test bank's sampling error.
2. The 100 % ceiling ("100.0 (100.0–100.0)"): all 20 of our seeds at 100 % (``equal``).
3. A 20-seed mean without an interval (Table 1 outside Table 2): ± :data:`T1_TOLERANCE` points,
   the median 95 % half-width of the paper's means in Tables 2–3 (no ceilings), whole points.
4. A difference of two reported means (§4.3's gain): ± the sum of the two 95 % half-widths.
5. A correlation over n checkpoints without an interval (D.4): ours inside the paper's 95 %
   Fisher-z interval ``tanh(atanh ρ ± 1.96/√(n − 3))``.
6. A theorem's exponent at finite n: a window's log-log slope within :data:`WINDOW_SLOPE_TOL`, a
   Monte Carlo exponent within :data:`MC_EXPONENT_TOL` (fixed when the scans were designed: log n
   adds slowly varying factors; a fraction multiplies several windows and sampling error). A
   window with one side still exact at the search limit is measured on the side that closes.
7. A closed form in float64: relative error ≤ :data:`CLOSED_FORM_RTOL`; statements for every
   point checked (bounds, "none is exact") are ``predicate`` checks saying what was checked.
8. A zero-NESV Table 1 cell a few points from chance (the D.3 banks of First and Index are
   balanced): ours must fall on the paper's side of 50 % (:func:`chance_side`), ours by its 95 %
   interval, the paper's number by rule 3's half-width.
9. A shape described in words (Fig. 2; §3.2): a ``direction`` claim on seed-paired differences
   whose 95 % interval excludes 0 on the stated side; "as well as" is a ``predicate``: nowhere
   below by more than rule 1's band.
10. A lemma's inequality (App. A.3): checked as stated with its proof's constant (``predicate``);
   a Monte Carlo probability enters by the lower end of its 95 % Clopper–Pearson interval.
A ``direction`` claim never counts as a numeric reproduction; a size gets its own value claim."""

from __future__ import annotations

import math
import statistics

from lengthgen.chapters.ch2 import paper
from lengthgen.claims import Claim

#: rule 3: median 95 % half-width of the paper's 20-seed means (Tables 2–3, no ceilings), whole points
_CELLS = [c for t in (*paper.PAPER_T2.values(), *paper.PAPER_T3.values()) for c in t.values()]
T1_TOLERANCE = float(round(statistics.median((hi - lo) / 2 for m, lo, hi in _CELLS if m < 100.0)))
#: rule 6
WINDOW_SLOPE_TOL = 0.3
MC_EXPONENT_TOL = 0.5
#: rule 7
CLOSED_FORM_RTOL = 1e-9
#: seeds per stored cell (D.2)
SEEDS = len(paper.SEEDS)


def two_sample_band(ours: dict, theirs) -> float:
    """Rule 1: the largest difference of the means in the band √(h_ours² + h_paper²), h the facing
    half-widths of ``ours = {"mean", "lo", "hi"}`` and ``theirs = (mean, lo, hi)``."""
    if ours["mean"] <= theirs[0]:
        return math.hypot(ours["hi"] - ours["mean"], theirs[0] - theirs[1])
    return math.hypot(ours["mean"] - ours["lo"], theirs[2] - theirs[0])


def two_sample_agree(ours: dict, theirs) -> bool:
    """Rule 1: whether our mean and the paper's differ by no more than :func:`two_sample_band`."""
    return abs(ours["mean"] - theirs[0]) <= two_sample_band(ours, theirs)


def rule1(cell) -> dict:
    """Rule 1 against the paper's ``cell = (mean, lo, hi)``."""
    why = "rule 1: two independent 20-seed means: |ours − paper| ≤ √(h_ours² + h_paper²), "
    why += "h = facing 95 % seed-bootstrap half-widths"
    unc, holds = [cell[1], cell[2]], lambda v: two_sample_agree(v, cell)
    return dict(paper_value=cell[0], paper_uncertainty=unc, check="predicate", holds=holds, why=why)


def rule2(count=SEEDS) -> dict:
    """Rule 2: at the 100 % ceiling, the number of perfect seeds must equal ``count``."""
    why = "rule 2: at the 100 % ceiling (every seed perfect) we compare the count of perfect seeds"
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


def rule5(rho: float, n: int, z: float = 1.96) -> dict:
    """Rule 5: the paper's ``rho`` over ``n`` points with its 95 % interval by Fisher's z."""
    c, h = math.atanh(rho), z / math.sqrt(n - 3)
    ci = (round(math.tanh(c - h), 3), round(math.tanh(c + h), 3))
    why = f"rule 5: the paper's value with its 95 % Fisher-z interval for n = {n}"
    return dict(paper_value=rho, paper_uncertainty=list(ci), check="interval", interval=ci, why=why)


def chance_side(lo: float, hi: float, chance: float = 50.0) -> str:
    """Rule 8: "above" or "below" chance where (lo, hi) excludes it, else "indistinguishable"."""
    return "above" if lo > chance else "below" if hi < chance else "indistinguishable"


def paper_chance_side(value: float) -> str:
    """Rule 8: the side of chance of a Table 1 number (no interval), ± :data:`T1_TOLERANCE`."""
    return chance_side(value - T1_TOLERANCE, value + T1_TOLERANCE)


def live(cid, location, statement, paper_value, holds, why, **kw) -> Claim:
    """A claim the notebook measures live, checked by the predicate ``holds`` (rules 7, 10)."""
    return Claim(
        cid, location, statement, paper_value, "predicate", why, source="live", holds=holds, **kw
    )


def above_zero(v: dict) -> bool:
    """Rule 9 (and the sign of a gain): the 95 % seed-bootstrap interval lies above 0."""
    return v["lo"] > 0
