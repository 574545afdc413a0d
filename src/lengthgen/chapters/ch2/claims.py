"""Chapter 2's claims: Zhu & Chiang (2026), *Exact-Solution Volume and Length Generalization in
Transformers*, next to ours (the paper's numbers are in :mod:`lengthgen.chapters.ch2.paper`).

Where ours comes from
---------------------
Training claims (Tables 1–3, §4.3, App. D.4, D.7) read the stored full-scale cells
``results/ch2/cells/<experiment>.json`` (validated by ``experiments.SCHEMAS``), so
``python -m lengthgen claims --check`` re-checks them without the notebook. :data:`RUNS` says which
stored experiment provides each (task, model, N). The volume claims read the stored scan
``volume_scans``; constructions, closed forms and the brute-force checker are measured live by the
notebook (``source="live"``).

How each comparison was chosen (fixed before looking at our value)
-------------------------------------------------------------------
Each rule is written once as code below (``rule1`` … ``rule8``, :func:`above_zero` for rule 9) and
a claim names the rule it is checked by; the paper's Tables 1–3 are tables of rows (:data:`TABLE2`
…), one row per claim with its literal id, each read by one small builder next to it.
Not blind: rules 1 and 8–9, changed for issue 25, were chosen while our seed means and their
intervals were already on the chapter's page (their declarations were still committed before
the claims were re-evaluated).

1. The paper reports a 95 % seed-bootstrap interval (Table 2, Table 3), and so do we (our 20 seeds,
   10,000 resamples: ``experiments.longest_summary`` / ``ood_summary``). The two means are compared
   as two independent samples (:func:`two_sample_agree`, a ``predicate``): each 95 % half-width is
   read as 1.96 standard errors, so the difference of the means is within the two-sided 5 % band
   when ``|ours − paper| ≤ √(h_ours² + h_paper²)``, each ``h`` being the half-width on the side of
   its interval that faces the other mean (percentile intervals are not symmetric). Neither
   interval is widened; both resample seeds only and leave out the sampling error of the test bank.
   (Until issue 25 the rule asked our mean to lie inside the paper's interval, which ignored our own
   seed-to-seed uncertainty; "the intervals overlap" was not chosen because it allows a difference
   up to ``h_ours + h_paper``, a test at a level far below 5 %.)
2. An accuracy at the 100 % ceiling (First; the paper's "100.0 (100.0–100.0)" means every seed is
   perfect): the number of our 20 seeds with 100 % test accuracy must equal 20 (``equal``).
3. A 20-seed mean the paper reports without an interval (the Table 1 cells outside Table 2):
   ``|ours − paper| ≤`` :data:`T1_TOLERANCE` points, the median 95 % half-width of the paper's own
   20-seed means in Tables 2–3 (ceiling entries excluded), rounded to whole points.
4. A difference of two reported means (the A_norm − A_pos gain of §4.3): the sum of the two 95 %
   half-widths (the widest the difference can be for any correlation between the two).
5. A correlation over n checkpoints reported without an interval (D.4): ours must lie in the paper's
   95 % interval by Fisher's z, ``tanh(atanh ρ ± 1.96/√(n − 3))`` (:func:`fisher_interval`).
6. A theorem's asymptotic exponent measured at finite n: a log-log slope of one exact window within
   :data:`WINDOW_SLOPE_TOL` of the exponent, a Monte Carlo exponent of an exact fraction within
   :data:`MC_EXPONENT_TOL` (both fixed when the scans were designed: the log n attention scale adds
   slowly varying factors, and a fraction is a product of several windows plus sampling error).
   A window with one side still exact at the search limit is measured on the side that closes
   (:func:`window_measure`), the rule the notebook's live scan has always used.
7. A closed form the paper derives, computed numerically in float64: relative error ≤
   :data:`CLOSED_FORM_RTOL`. Statements that hold for every point checked (bounds, "none is exact")
   are ``predicate`` checks saying exactly what was checked.
8. A Table 1 cell with zero NESV whose accuracy is reported a few points from chance (First and Index
   under A_gen and A_sin; every D.3 bank of these tasks has exactly balanced labels, so a constant
   answer scores 50 %): besides rule 3, a ``predicate`` on chance (:func:`chance_side`). Our
   20-seed mean is distinguishable from 50 % when its 95 % seed-bootstrap interval excludes 50; the
   paper gives no interval for these cells, so its number is read with rule 3's half-width: above
   chance where it exceeds 50 by more than :data:`T1_TOLERANCE`, indistinguishable from chance
   otherwise. The claim holds when ours falls on the same side.
9. A shape of a curve the paper describes in words (Fig. 2; the §3.2 counterexample): a
   ``direction`` claim on seed-paired differences, whose 95 % seed-bootstrap interval must exclude 0
   on the stated side; "as well as" (§3.2) is a ``predicate``: at no compared cell is A_sin below
   A_gen by more than the band of rule 1 (one-sided).
10. A lemma's inequality (App. A.3, Lemmas 6–7): checked as the lemma states it, with the constant
   of its proof, at the points we compute (a ``predicate``); a Monte Carlo probability enters by
   the lower end of its 95 % Clopper–Pearson interval.
A ``direction`` claim (the sign or order agrees) is never counted as a numeric reproduction; where
the paper gives a size too, a separate value claim checks it.

Protocol
--------
A claim that reads an experiment trained under an update cap below the paper's 30,000 carries
``reduced("update cap …")`` (the notebook prints how many members reached the cap). Every A_norm
claim reads runs and scans with the paper's map F(v) = v/√(1+‖v‖²) (eq. 17). Our earlier misreading
v/(1+‖v‖²) survives only in the ablation experiment ``index_norm_misread``, which no claim reads;
a claim that did read it would carry ``modified(MISREAD_MAP)``.

Deviations are declared below (:data:`DEVIATIONS`), one per claim that deviates today, each with a
cause from :data:`CAUSES` and an explanation we wrote.
"""

from __future__ import annotations

import dataclasses
import math
import statistics
import weakref

import numpy as np

from lengthgen.chapters.ch2 import paper
from lengthgen.chapters.ch2.experiments import (
    EXPERIMENTS,
    coefficient_analysis,
    longest_accuracy,
    longest_summary,
    ood_summary,
    test_lengths,
)
from lengthgen.claims import (
    PAPER_PROTOCOL,
    Claim,
    Deviation,
    Unchecked,
    modified,
    reduced,
)

PAPER = "Zhu & Chiang 2026"

#: why a claim of this chapter may deviate
CAUSES = {
    "replication sampling": "an independent replication: the paper does not publish its data streams, initial "
    "draws or test banks, and its 95 % interval covers the uncertainty of its own mean only",
    "pre-asymptotic lengths": "a finite-n measurement of an asymptotic rate that has not reached its limit at the "
    "lengths we can scan",
    "unexplained": "a difference we have not traced to a cause; the explanation says what was ruled out "
    "and what was not measured",
    "count-only chance above 50 %": "a model that uses only the number of ones beats a coin on these tasks (the best "
    "rule of the count is right ½ + ½·P(Bin(n − 1, ½) = (n − 1)/2) of the time, 51.8 % at n = 511), so "
    "'at chance' for a model without positional information is not 50 %; rule 8 compared with 50 %",
}

# --------------------------------------------------------------------------- the tolerance rules
# Each rule of the docstring, written once; a claim names the rule it is checked by (``**ruleN(…)``
# gives its paper value, check, tolerance or predicate, and its one-line ``why``).
_HALF_WIDTHS = [
    (hi - lo) / 2
    for cells in paper.PAPER_T2.values()
    for (m, lo, hi) in cells.values()
    if m < 100.0
]
_HALF_WIDTHS += [
    (hi - lo) / 2 for cells in paper.PAPER_T3.values() for (m, lo, hi) in cells.values()
]
#: rule 3: median 95 % half-width of the paper's 20-seed means (Tables 2–3, ceilings excluded), whole points
T1_TOLERANCE = float(round(statistics.median(_HALF_WIDTHS)))
#: rule 6
WINDOW_SLOPE_TOL = 0.3
MC_EXPONENT_TOL = 0.5
#: rule 7
CLOSED_FORM_RTOL = 1e-9
#: seeds per stored cell (D.2)
SEEDS = len(paper.SEEDS)
#: rule 8: the chance level of First and Index on the D.3 banks (exactly balanced labels), percent
CHANCE = 50.0


def facing_half_widths(ours: dict, theirs) -> tuple[float, float]:
    """Rule 1: the half-widths of our interval ``{"mean", "lo", "hi"}`` and the paper's
    ``(mean, lo, hi)`` on the sides that face each other's mean."""
    m, lo, hi = ours["mean"], ours["lo"], ours["hi"]
    pm, plo, phi = theirs
    if m <= pm:
        return hi - m, pm - plo
    return m - lo, phi - pm


def two_sample_band(ours: dict, theirs) -> float:
    """Rule 1: the largest difference of the two means inside the two-sided 5 % band,
    √(h_ours² + h_paper²) with the facing half-widths (each 1.96 standard errors)."""
    h_ours, h_paper = facing_half_widths(ours, theirs)
    return math.hypot(h_ours, h_paper)


def two_sample_agree(ours: dict, theirs) -> bool:
    """Rule 1: whether our mean and the paper's differ by no more than :func:`two_sample_band`."""
    return abs(ours["mean"] - theirs[0]) <= two_sample_band(ours, theirs)


#: rule 1's one-line justification, shared by the Table 2 and Table 3 claims
RULE1_WHY = (
    "rule 1: two independent 20-seed means, each 95 % seed-bootstrap half-width read as 1.96 SE: "
    "|ours − paper| ≤ √(h_ours² + h_paper²) (facing sides), a two-sided test at 5 % that counts "
    "our own uncertainty as well as the paper's"
)


def rule1(cell) -> dict:
    """Rule 1: our 20-seed mean and interval against the paper's ``cell = (mean, lo, hi)``."""
    return dict(
        paper_value=cell[0],
        paper_uncertainty=[cell[1], cell[2]],
        check="predicate",
        holds=lambda v: two_sample_agree(v, cell),
        why=RULE1_WHY,
    )


def rule2(why: str, count=SEEDS) -> dict:
    """Rule 2: at the 100 % ceiling, the number of perfect seeds must equal ``count``."""
    return dict(paper_value=count, check="equal", why=why)


def _within(value, tolerance, why: str, **extra) -> dict:
    """A ``value`` check: ours within ± ``tolerance`` of the paper's ``value``."""
    return dict(paper_value=value, check="value", tolerance=tolerance, why=why, **extra)


def rule3(value: float) -> dict:
    """Rule 3: a 20-seed mean the paper reports without an interval, ± :data:`T1_TOLERANCE`."""
    why = f"rule 3: a 20-seed mean reported without an interval, ± {T1_TOLERANCE:g} points"
    return _within(value, T1_TOLERANCE, why)


def rule4(a, b) -> dict:
    """Rule 4: the difference b − a of two reported ``(mean, lo, hi)``, ± the sum of their
    95 % half-widths."""
    tol = round((a[2] - a[1]) / 2 + (b[2] - b[1]) / 2, 2)
    why = "rule 4: a difference of two reported means, ± the sum of their 95 % half-widths"
    return _within(round(b[0] - a[0], 1), tol, why)


def fisher_interval(rho: float, n: int, z: float = 1.96) -> tuple[float, float]:
    """Rule 5: the 95 % interval of a correlation ``rho`` over ``n`` points by Fisher's z."""
    c, h = math.atanh(rho), z / math.sqrt(n - 3)
    return (round(math.tanh(c - h), 3), round(math.tanh(c + h), 3))


def rule5(rho: float, n: int) -> dict:
    """Rule 5: ours in the paper's 95 % Fisher-z interval of ``rho`` over ``n`` points."""
    return dict(
        paper_value=rho,
        paper_uncertainty=list(fisher_interval(rho, n)),
        check="interval",
        interval=fisher_interval(rho, n),
        why=f"rule 5: the paper's value with its 95 % Fisher-z interval for n = {n}",
    )


def rule6_window(exponent) -> dict:
    """Rule 6: a finite-n window slope within :data:`WINDOW_SLOPE_TOL` of the exponent."""
    why = f"rule 6: a finite-n window slope within ± {WINDOW_SLOPE_TOL} of the exponent"
    return _within(exponent, WINDOW_SLOPE_TOL, why)


def rule6_mc(exponent) -> dict:
    """Rule 6: a Monte Carlo exponent within :data:`MC_EXPONENT_TOL` of the theorem's."""
    why = f"rule 6: a Monte Carlo exponent within ± {MC_EXPONENT_TOL} of the theorem's"
    return _within(exponent, MC_EXPONENT_TOL, why)


def rule7() -> dict:
    """Rule 7: a closed form computed in float64, largest relative error ≤ :data:`CLOSED_FORM_RTOL`."""
    why = f"rule 7: a closed form computed numerically in float64, relative error ≤ {CLOSED_FORM_RTOL:g}"
    return _within(0.0, CLOSED_FORM_RTOL, why, digits=1)


def chance_side(lo: float, hi: float, chance: float = CHANCE) -> str:
    """Rule 8: "above" or "below" chance where the interval (lo, hi) excludes it, else
    "indistinguishable"."""
    if lo > chance:
        return "above"
    if hi < chance:
        return "below"
    return "indistinguishable"


def paper_chance_side(value: float) -> str:
    """Rule 8: the side of chance of a Table 1 number the paper reports without an interval, read
    with rule 3's half-width."""
    return chance_side(value - T1_TOLERANCE, value + T1_TOLERANCE)


def rule8(value: float) -> dict:
    """Rule 8: ours on the same side of chance as the paper's ``value`` (:func:`chance_side`)."""
    side = paper_chance_side(value)
    return dict(
        paper_value=f"{side} ({value:g} %)",
        check="predicate",
        holds=lambda v: chance_side(v["lo"], v["hi"]) == side,
        why=f"rule 8: a cell near chance passes ± {T1_TOLERANCE:g} points even for a model that "
        "learns nothing, so its side of chance (50 %, balanced banks) is checked on its own",
    )


def above_zero(v: dict) -> bool:
    """Rule 9 (and the sign of a gain): the 95 % seed-bootstrap interval lies above 0."""
    return v["lo"] > 0


# --------------------------------------------------------------------------- which stored run gives what
def run_of(task: str, model: str, N: int) -> str:
    """The stored experiment holding (task, model) at maximum training length N."""
    base = {
        ("first", "pos"): "first_posnorm",
        ("first", "norm"): "first_posnorm",
        ("majority", "gen"): "majority_gen",
        ("majority", "sin"): "majority_sin",
        ("index", "pos"): "index_posnorm",
        ("index", "norm"): "index_posnorm",
        ("first", "gen"): "first_gen",
        ("first", "sin"): "first_sin",
        ("index", "gen"): "index_gen",
        ("index", "sin"): "index_sin",
        ("majority", "pos"): "majority_posnorm",
        ("majority", "norm"): "majority_posnorm",
        ("parity", "gen"): "parity_gen",
    }[(task, model)]
    if N in paper.STORED_NS[base]:
        return base
    for suffix in ("_more", "_small", "_mid"):
        if base + suffix in paper.STORED_NS and N in paper.STORED_NS[base + suffix]:
            return base + suffix
    raise KeyError(f"no stored experiment holds {task}/{model} at N = {N}")


#: the protocol note of a claim measured with our earlier misread A_norm map (the ablation only)
MISREAD_MAP = "A_norm with our misread map F(v) = v/(1+‖v‖²) (paper: v/√(1+‖v‖²))"


def protocol_of(pairs) -> object:
    """The protocol of a claim reading the stored (task, model, N) triples ``pairs``."""
    notes = []
    for task, model, N in pairs:
        name = run_of(task, model, N)
        cap = paper.STORED_STEP_CAPS[name]
        if cap < paper.PAPER_MAX_UPDATES:
            note = f"update cap {cap:,} (paper: {paper.PAPER_MAX_UPDATES:,})"
            if note not in notes:
                notes.append(note)
        # (Majority's fixed token k = 0 makes F(ak) = 0 for any F)
        misread = model == "norm" and EXPERIMENTS[name].norm_map != "sqrt"
        if misread and task != "majority" and MISREAD_MAP not in notes:
            notes.append(MISREAD_MAP)
    if MISREAD_MAP in notes:  # a different model than the paper's, not a smaller run
        return modified("; ".join(notes))
    return reduced("; ".join(notes)) if notes else PAPER_PROTOCOL


# --------------------------------------------------------------------------- measures (stored cells)
def _cell(results, task, model, N):
    return results.cell(run_of(task, model, N))


def mean_longest(results, task, model, N) -> float:
    """Our 20-seed mean accuracy (%) at L = 10N+1."""
    return float(np.mean(longest_accuracy(_cell(results, task, model, N), model, N)))


def perfect_seeds(results, task, model, N) -> int:
    """How many of our seeds are at 100 % test accuracy at L = 10N+1."""
    return len(_at_length(_cell(results, task, model, N), model, N, 10 * N + 1, 1.0))


def summary_longest(results, task, model, N) -> dict:
    """Our 20-seed mean accuracy (%) at L = 10N+1 with its 95 % seed-bootstrap interval."""
    m, lo, hi = longest_summary(_cell(results, task, model, N), model, N)
    return {"mean": m, "lo": lo, "hi": hi}


def summary_ood(results, task, model, N) -> dict:
    """Our 20-seed mean OOD accuracy (%, five lengths > N) with its 95 % seed-bootstrap interval."""
    m, lo, hi = ood_summary(_cell(results, task, model, N), model, N)
    return {"mean": m, "lo": lo, "hi": hi}


def _at_length(result, model, N, L, only=None) -> dict:
    """Per-seed accuracy (%) at test length L; ``only``: just the seeds at that accuracy (0–1)."""
    return {
        m["seed"]: 100 * m["test"][str(L)]
        for m in result["members"]
        if m["variant"] == model
        and m["N"] == N
        and (only is None or m["test"][str(L)] == only)
    }


def _paired_ci(a: dict, b: dict) -> dict:
    """Mean of the seed-paired differences a − b with its 95 % seed-bootstrap interval."""
    from lengthgen.stats import bootstrap_ci

    if sorted(a) != sorted(b):
        raise ValueError(f"the paired seeds differ: {sorted(a)} vs {sorted(b)}")
    m, lo, hi = bootstrap_ci(np.array([a[s] - b[s] for s in sorted(a)]), seed=0)
    return {"mean": m, "lo": lo, "hi": hi}


def paired_gain(results, N: int = 51, L: int | None = None) -> dict:
    """A_norm − A_pos accuracy on Index at L (default 10N+1), paired by seed (same initial
    tensors and batches): mean and 95 % seed-bootstrap interval (percentage points)."""
    res = _cell(results, "index", "pos", N)
    if run_of("index", "norm", N) != run_of("index", "pos", N):
        raise ValueError(f"A_pos and A_norm are not one paired run at N = {N}")
    L = 10 * N + 1 if L is None else L
    return _paired_ci(_at_length(res, "norm", N, L), _at_length(res, "pos", N, L))


#: Fig. 2's test lengths strictly between N and 10N+1 at N = 51 (2N+1, 3N, 5N, 8N+1)
FIG2_INTERMEDIATE = test_lengths(paper.FIG2_N)[1:-1]


def fig2_gains(results, N: int = paper.FIG2_N) -> dict:
    """A_norm − A_pos accuracy on Index at each intermediate test length of Fig. 2, paired by seed
    (percentage points): ``{str(L): {"mean", "lo", "hi"}}``."""
    return {str(L): paired_gain(results, N, L) for L in test_lengths(N)[1:-1]}


def fig2_pos_drop(results, N: int = paper.FIG2_N) -> dict:
    """The fall of A_pos's Index accuracy from L = N to the first test length beyond it, 2N+1,
    paired by seed (percentage points)."""
    res = _cell(results, "index", "pos", N)
    return _paired_ci(
        _at_length(res, "pos", N, N), _at_length(res, "pos", N, 2 * N + 1)
    )


#: §3.2's counterexample: the cells compared, (label, statistic, N)
COUNTEREXAMPLE_CELLS = (("N=51, L=511", "longest", 51),) + tuple(
    (f"N={N}, L>N", "ood", N) for N in paper.NS
)


def counterexample(results) -> dict:
    """§3.2: Majority under A_sin minus A_gen (20-seed means, percentage points) at N = 51 and
    L = 511 (Table 1) and in mean OOD accuracy at every N (Table 3), each with rule 1's band
    (:func:`two_sample_band` of the two seed-bootstrap intervals, facing sides)."""
    diff, band = {}, {}
    for label, stat, N in COUNTEREXAMPLE_CELLS:
        summ = summary_longest if stat == "longest" else summary_ood
        gen, sin = (summ(results, "majority", m, N) for m in ("gen", "sin"))
        diff[label] = sin["mean"] - gen["mean"]
        band[label] = two_sample_band(sin, (gen["mean"], gen["lo"], gen["hi"]))
    return {"diff": diff, "band": band}


_COEF_CACHE: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def coefficients(results) -> dict:
    """D.4 on our 100 selected A_pos Index checkpoints (20 seeds × N = 11 … 51), cached per results."""
    if results not in _COEF_CACHE:
        members = [
            m
            for N in paper.NS
            for m in _cell(results, "index", "pos", N)["members"]
            if m["variant"] == "pos" and m["N"] == N
        ]
        _COEF_CACHE[results] = coefficient_analysis({"members": members})
    return _COEF_CACHE[results]


def window_measure(r: dict) -> list:
    """The widths a window claim fits, from one stored curve ``{"n", "width", "finite_width"}``:
    where a side of the window is still exact at the search limit, the sides that close
    (``finite_width``, as in the notebook's live scan); the full ``width`` only where no side closes."""
    fin = r.get("finite_width")
    if fin is not None and all(w is not None and math.isfinite(w) for w in fin):
        return list(fin)
    return list(r["width"])


def window_slope(results, key: str) -> float:
    """Log-log slope of a stored exact-window curve (n = 8 … 512), see :func:`window_measure`."""
    from lengthgen.stats import loglog_slope

    r = results.cell("volume_scans")["widths"][key]
    return loglog_slope(r["n"], window_measure(r))[0]


def mc_exponent(results, key: str) -> float:
    """Log-log slope of a stored Monte Carlo exact fraction over the lengths with ≥ 10 exact points."""
    from lengthgen.stats import loglog_slope

    rows = [r for r in results.cell("volume_scans")["mc"][key] if r["exact"] >= 10]
    return loglog_slope([r["n"] for r in rows], [r["fraction"] for r in rows])[0]


def parity_trained(results) -> dict:
    """Sign changes and kinks of the 20 stored Parity models (A_gen(8), N = 11)."""
    ms = results.cell("parity_gen")["members"]
    return {
        "models": len(ms),
        "max_sign_changes": max(m["sign_changes"] for m in ms),
        "max_kinks": max(m["kinks"] for m in ms),
        "violations": sum(
            not (m["sign_changes"] <= m["kinks"] + 1 <= paper.H + 1) for m in ms
        ),
    }


def majority_equivalent(results) -> int:
    """Seeds whose A_pos and A_norm Majority members have identical test accuracies."""
    ms = results.cell("majority_posnorm")["members"]
    pos = {m["seed"]: m["test"] for m in ms if m["variant"] == "pos"}
    norm = {m["seed"]: m["test"] for m in ms if m["variant"] == "norm"}
    return sum(pos[s] == norm.get(s) for s in pos)


# --------------------------------------------------------------------------- the claims
#: the models' names in the statements
NAMES = {"pos": "A_pos", "gen": "A_gen", "sin": "A_sin", "norm": "A_norm"}
#: rule 2's justification where the paper's interval is "100.0 (100.0–100.0)"
CEILING_WHY = (
    "rule 2: a mean of 100.0 (100.0–100.0) means every seed is perfect; at the ceiling we "
    "compare the count of perfect seeds"
)

SELF_CHECKS = [
    Claim(
        "ch2.params.count",
        "§2.2, §4.2",
        group="self-check",
        source="live",
        statement="Our A_gen(8), A_pos(8) and A_norm(8) have 5h+20 = 60, 5h+18 = 58 and 58 trainable scalars",
        paper_value=[60, 58, 58],
        check="equal",
        why="a count of the paper's parameterisation: exact",
    ),
    Claim(
        "ch2.gap.expansion",
        "§4.1 eq. 10, §4.2 eqs. 21–22",
        group="self-check",
        source="live",
        statement="The score-gap expansion in χ, ℓ, δ, φ equals our models' own score differences "
        "(A_pos and A_norm, 3 queries, every offset, a perturbed center)",
        paper_value=0.0,
        check="value",
        tolerance=1e-9,
        digits=1,
        why="an algebraic identity evaluated in float64: only rounding may differ",
    ),
    Claim(
        "ch2.checker.bruteforce",
        "Definition 1 (our checker)",
        group="self-check",
        source="live",
        statement="Every certified decision of the structural exactness checker equals exhaustive "
        "enumeration on random points (n ≤ 12)",
        paper_value="agree on every decided point",
        check="predicate",
        holds=lambda v: v["decided"] > 0 and v["agree"] == v["decided"],
        why="brute force over all 2ⁿ strings is exact for small n",
    ),
    Claim(
        "ch2.center.eta16_threshold",
        "§4.1.1, App. A.1–A.2 (η = min(B/16, 1/16))",
        group="self-check",
        source="live",
        statement="With η = 1/16 the paper's First and Index centers are not exact at n = 3 … 5000 and "
        "become exact only beyond a finite threshold n* (ours: log n* for First, Index)",
        paper_value="exact for all sufficiently large n",
        check="predicate",
        holds=lambda v: (
            v["inexact_at_practical_n"]
            and all(math.isfinite(x) for x in v["log_threshold"])
        ),
        why="the closed-form threshold and the checker must agree that the centers are exact only "
        "asymptotically",
    ),
    Claim(
        "ch2.center.eta1_exact",
        "§4.1.1, App. A.1–A.3, B.1 (centers with a free scale)",
        group="self-check",
        source="live",
        statement="The same centers with η = 1 are certified exact for First and Index under A_pos and A_norm "
        "at every tested n ≤ 1000, and the A_gen Majority center at n ≤ 2001",
        paper_value="the centers are exact solutions",
        check="predicate",
        holds=lambda v: all(v.values()),
        why="our constructions, certified by the exactness checker at each n",
    ),
    Claim(
        "ch2.norm.eq23_bound",
        "§4.2 eq. 23 (and eq. 106)",
        source="live",
        statement="With the paper's map F(v) = v/√(1+‖v‖²), |ε_χ(k)| ≤ ‖s‖/(2k²‖a‖²) holds at every one of "
        "10⁵ random (a, s, k)",
        paper_value="bound holds",
        check="predicate",
        holds=lambda v: v["violations"] == 0 and v["points"] > 0,
        why="an inequality of the paper: one violation would refute it",
    ),
]

# ---- volume (Thm. 1, Thm. 2): the stored scan, rule 6
#: exact-window claims: (id, model, task, coordinate); the exponent is
#: paper.PAPER_WINDOW_SLOPES[(model, task, coordinate)], ours :func:`window_slope`
WINDOWS = (
    ("ch2.volume.pos_index_chi", "pos", "index", "chi"),
    ("ch2.volume.pos_index_ell", "pos", "index", "ell"),
    ("ch2.volume.norm_index_ell", "norm", "index", "ell"),
    ("ch2.volume.norm_index_chi_fixed_ell_hat", "norm", "index", "chi_fixed_ell_hat"),
    ("ch2.volume.pos_first_chi", "pos", "first", "chi"),
    ("ch2.volume.pos_first_ell", "pos", "first", "ell"),
)
_WINDOW_WHERE = {
    ("pos", "index"): "Thm. 1 eq. 5, §4.1.1 eq. 13",
    ("norm", "index"): "Thm. 2, §4.2 eqs. 20–23",
    ("pos", "first"): "Thm. 1 eq. 4",
}
_WINDOW_MOVES = {
    "chi": "χ",
    "ell": "ℓ",
    "chi_fixed_ell_hat": "χ̂ at fixed ℓ̂ = ℓ + 2χ̂",
    "norm_ell": "ℓ̂ = ℓ + 2χ̂ (moved through r₁ at fixed χ̂)",
}
#: Monte Carlo claims: (id, "model/task"); the exponent is paper.PAPER_MC_EXPONENTS[key], ours
#: :func:`mc_exponent`
MC_FRACTIONS = (
    ("ch2.volume.mc_pos_index", "pos/index"),
    ("ch2.volume.mc_norm_index", "norm/index"),
    ("ch2.volume.mc_pos_first", "pos/first"),
)


def _window_claim(cid, v, t, c) -> Claim:
    theory = paper.PAPER_WINDOW_SLOPES[(v, t, c)]
    moved = _WINDOW_MOVES["norm_ell" if (v, c) == ("norm", "ell") else c]
    return Claim(
        cid,
        _WINDOW_WHERE[(v, t)],
        statement=f"{t.capitalize()} under {NAMES[v]}: the exact window of {moved} around "
        f"the η = 1 center shrinks like n^{theory} (log-log slope, n = 8 … 512)",
        **rule6_window(theory),
        measure=lambda r: window_slope(r, f"{v}/{t}/{c}"),
    )


def _mc_claim(cid, key) -> Claim:
    theory = paper.PAPER_MC_EXPONENTS[key]
    v, t = key.split("/")
    return Claim(
        cid,
        "Thm. 1 eqs. 4–5, Thm. 2",
        statement=f"{t.capitalize()} under A_{v}: the Monte Carlo exact fraction of a box around the "
        f"η = 1 center decays like n^{theory} (fit over the lengths with ≥ 10 exact points)",
        **rule6_mc(theory),
        measure=lambda r: mc_exponent(r, key),
    )


VOLUME_LIVE = [
    Claim(
        "ch2.volume.majority_area_eq75",
        "Lemma 4 eq. 75",
        source="live",
        statement="The exact (X, b₂,₁) area of the A_gen Majority center equals η³·4 artanh(1/n)/log n "
        "(largest relative error over n = 11 … 3001)",
        **rule7(),
    ),
    Claim(
        "ch2.volume.majority_area",
        "Thm. 1 eq. 6, Lemma 4",
        source="live",
        statement="The exact area times log n decays like n⁻¹ (log-log slope over n = 11 … 3001)",
        **rule6_window(paper.PAPER_MAJORITY_AREA_SLOPE),
        group="self-check",
    ),
    Claim(
        "ch2.volume.lemma6_density",
        "App. A.3, Lemma 6 (eq. 84)",
        source="live",
        statement="Under the uniform box [−B, B]^D of A_gen the density of the score contrast "
        "X = qᵀW_K(e₁ − e₀) is at most B⁻²: its peak (at X = 0, by quadrature) and the largest "
        "bin of a 10⁶-sample histogram (bins B²/50 wide), times B², at B = 0.5, 1, 2",
        paper_value="‖f_X‖∞ ≤ B⁻²",
        check="predicate",
        holds=lambda v: (
            len(v["peak_B2"]) == len(v["histogram_max_B2"]) > 0
            and max(v["peak_B2"] + v["histogram_max_B2"]) <= paper.PAPER_LEMMA6_BOUND
        ),
        why="rule 10: the lemma's bound must hold for every B; the histogram checks the "
        "quadrature's peak on the model's own sampled parameters",
    ),
    Claim(
        "ch2.volume.lemma7_mass",
        "App. A.3, Lemma 7 (eqs. 88, 91)",
        source="live",
        statement="Under the same box, Pr(|X| ≤ 1/log n) ≥ c_X/log n with the proof's "
        "c_X = 9/(512 B²), at B = 1, 2 and n = 10⁴, 10⁶, 10⁹ (each with 1/log n ≤ B²/8, where "
        "eq. 91 is derived): the lower end of the 95 % Clopper–Pearson interval of a "
        "10⁶-sample estimate, times log n, against c_X",
        paper_value="Pr(|X| ≤ 1/log n) ≥ c_X/log n, c_X = 9/(512 B²)",
        check="predicate",
        holds=lambda v: (
            len(v["lower_times_log_n"]) == len(v["c_X"]) > 0
            and all(a >= c for a, c in zip(v["lower_times_log_n"], v["c_X"]))
            and max(v["eps_over_B2"]) <= paper.PAPER_LEMMA7_EPS_MAX
        ),
        why="rule 10: the lemma's inequality with the constant its proof derives, at lengths "
        "inside the proof's range",
    ),
]

PARITY = [
    Claim(
        "ch2.parity.random",
        "Thm. 1 eq. 7, App. A.4",
        source="live",
        statement="On 5000 random and 20 briefly trained A_gen(8) points at n = 11 the logit difference has at "
        "most kinks + 1 ≤ h + 1 = 9 sign changes along the count segment, so none is exact",
        paper_value="NESV = 0 for n > h + 1",
        check="predicate",
        holds=lambda v: (
            v["violations"] == 0 and v["exact"] == 0 and v["max_kinks"] <= paper.H
        ),
        why="the paper's capacity argument must hold at every point; one exact point would refute it",
        group="self-check",
    ),
    Claim(
        "ch2.parity.trained",
        "Thm. 1 eq. 7, App. A.4",
        statement="Each of the 20 stored A_gen(8) Parity models (N = 11) has at most kinks + 1 ≤ 9 sign changes, "
        "fewer than the 11 an exact solution needs",
        paper_value="NESV = 0 for n > h + 1",
        check="predicate",
        holds=lambda v: (
            v["models"] == SEEDS and v["violations"] == 0 and v["max_sign_changes"] < 11
        ),
        why="the paper's capacity argument must hold for every trained model",
        measure=parity_trained,
        group="self-check",
    ),
    Claim(
        "ch2.parity.tight",
        "Thm. 1 eq. 7 (our construction)",
        group="self-check",
        source="live",
        statement="Exact A_gen(n−1) Parity solutions exist for n = 4, 5, 8, 12, 64 (our construction), so "
        "n > h + 1 is also tight from n = 4 on",
        paper_value="exact",
        check="predicate",
        holds=lambda v: all(v.values()),
        why="each construction certified exact by the checker",
    ),
]

# ---- paper Table 2 (App. D.5): accuracy at L = 10N+1, every (task, model, N) its own claim.
# Paper value: paper.PAPER_T2[(task, model)][N] = (mean, lo, hi). Ours: summary_longest (our
# 20-seed mean with its 95 % seed-bootstrap interval, from the stored run run_of(task, model, N)).
# Comparison: rule1 (two_sample_agree); where the paper's cell is 100.0 (100.0–100.0), rule2 on
# perfect_seeds. The N = 51 row is also Table 1's.
TABLE2 = (
    ("ch2.train.table2.first_pos_N11", "first", "pos", 11),
    ("ch2.train.table2.majority_gen_N11", "majority", "gen", 11),
    ("ch2.train.table2.index_pos_N11", "index", "pos", 11),
    ("ch2.train.table2.index_norm_N11", "index", "norm", 11),
    ("ch2.train.table2.first_pos_N21", "first", "pos", 21),
    ("ch2.train.table2.majority_gen_N21", "majority", "gen", 21),
    ("ch2.train.table2.index_pos_N21", "index", "pos", 21),
    ("ch2.train.table2.index_norm_N21", "index", "norm", 21),
    ("ch2.train.table2.first_pos_N31", "first", "pos", 31),
    ("ch2.train.table2.majority_gen_N31", "majority", "gen", 31),
    ("ch2.train.table2.index_pos_N31", "index", "pos", 31),
    ("ch2.train.table2.index_norm_N31", "index", "norm", 31),
    ("ch2.train.table2.first_pos_N41", "first", "pos", 41),
    ("ch2.train.table2.majority_gen_N41", "majority", "gen", 41),
    ("ch2.train.table2.index_pos_N41", "index", "pos", 41),
    ("ch2.train.table2.index_norm_N41", "index", "norm", 41),
    ("ch2.train.table2.first_pos_N51", "first", "pos", 51),
    ("ch2.train.table2.majority_gen_N51", "majority", "gen", 51),
    ("ch2.train.table2.index_pos_N51", "index", "pos", 51),
    ("ch2.train.table2.index_norm_N51", "index", "norm", 51),
)


def _table2_claim(cid, task, model, N) -> Claim:
    """One row of :data:`TABLE2`."""
    cell = paper.PAPER_T2[(task, model)][N]
    loc = "Table 2 (App. D.5)" + ("; Table 1" if N == 51 else "")
    loc += "; abstract, §4.3" if task == "index" and N == 51 else ""
    said = f"{task.capitalize()} under {NAMES[model]} at N = {N}: "
    if cell[0] == 100.0:  # the ceiling: every seed perfect
        return Claim(
            cid,
            loc,
            statement=said + f"all 20 seeds are at 100 % accuracy at L = {10 * N + 1}",
            **rule2(CEILING_WHY),
            paper_uncertainty=[cell[1], cell[2]],
            measure=lambda r: perfect_seeds(r, task, model, N),
            protocol=protocol_of([(task, model, N)]),
        )
    return Claim(
        cid,
        loc,
        statement=said
        + f"mean accuracy over 20 seeds at L = {10 * N + 1} (ours with its "
        "95 % seed-bootstrap interval)",
        **rule1(cell),
        measure=lambda r: summary_longest(r, task, model, N),
        protocol=protocol_of([(task, model, N)]),
    )


# ---- §4.3 / paper Fig. 2: the A_norm gain on Index at N = 51, direction and size
_GAIN_PROTOCOL = protocol_of([("index", "pos", 51), ("index", "norm", 51)])
GAIN = [
    Claim(
        "ch2.train.norm_vs_pos",
        "§4.3, paper Fig. 2, abstract",
        statement="On Index at N = 51, A_norm is more accurate than A_pos at L = 511 (gain paired by seed; "
        "its 95 % bootstrap interval lies above 0)",
        paper_value="A_norm > A_pos",
        check="direction",
        holds=above_zero,
        why="the sign of the paired gain; its size is the next claim",
        measure=paired_gain,
        protocol=_GAIN_PROTOCOL,
    ),
    Claim(
        "ch2.train.norm_vs_pos_size",
        "§4.3, Table 2 (N = 51)",
        statement="On Index at N = 51, the mean A_norm − A_pos accuracy gain at L = 511 (percentage points)",
        **rule4(
            paper.PAPER_T2[("index", "pos")][51], paper.PAPER_T2[("index", "norm")][51]
        ),
        measure=lambda r: paired_gain(r)["mean"],
        protocol=_GAIN_PROTOCOL,
    ),
    Claim(
        "ch2.train.fig2.norm_above_pos",
        "§4.3, paper Fig. 2",
        statement="On Index at N = 51, A_norm is more accurate than A_pos at each test length "
        f"of paper Fig. 2 between N and 10N+1 (L = {', '.join(map(str, FIG2_INTERMEDIATE))}; "
        "L = 511 is ch2.train.norm_vs_pos): the seed-paired gain's 95 % bootstrap interval "
        "lies above 0 at each",
        paper_value="A_norm above A_pos beyond N",
        check="direction",
        holds=lambda v: (
            len(v) == len(FIG2_INTERMEDIATE) and all(above_zero(x) for x in v.values())
        ),
        why="rule 9: the paper describes the curves of paper Fig. 2 in words only, so we check the sign "
        "of the paired gain at every length it plots beyond training",
        measure=fig2_gains,
        protocol=_GAIN_PROTOCOL,
    ),
    Claim(
        "ch2.train.fig2.pos_drop",
        "§4.3, paper Fig. 2",
        statement="On Index at N = 51, A_pos's accuracy falls from L = 51 to L = 103, the first "
        "test length beyond training (seed-paired fall; its 95 % bootstrap interval lies above 0)",
        paper_value="A_pos degrades beyond the training range",
        check="direction",
        holds=above_zero,
        why="rule 9: the paper gives 'rapidly' no number, so only the sign of the first fall "
        "beyond training is checked",
        measure=fig2_pos_drop,
        protocol=protocol_of([("index", "pos", 51)]),
    ),
    Unchecked(
        "ch2.train.fig2.values",
        "§4.3, paper Fig. 2",
        "The mean Index accuracies of A_pos and A_norm (N = 51) and their 95 % bootstrap bands "
        "at the test lengths below 511",
        "curves only",
        "not-reproducible",
        "the paper prints no number for the curves of paper Fig. 2, and the text of the paper we work from "
        "has the caption but not the figure, so there is nothing to read values from; the value "
        "at L = 511 is Table 2's N = 51 row (checked above), the shape is checked by "
        "ch2.train.fig2.norm_above_pos and ch2.train.fig2.pos_drop",
    ),
    Claim(
        "ch2.train.volume_order",
        "§1, §3 (Table 1)",
        statement="At N = 51 the accuracy at L = 511 follows the volume decay: First under A_pos (Θ(1)) > "
        "Majority under A_gen (Θ(1/(n log n))) > Index under A_pos (Θ(n⁻³))",
        paper_value="First > Majority > Index",
        check="direction",
        holds=lambda v: v[0] > v[1] > v[2],
        why="the paper's qualitative thesis is an order; the sizes are the Table 2 claims",
        measure=lambda r: [
            mean_longest(r, "first", "pos", 51),
            mean_longest(r, "majority", "gen", 51),
            mean_longest(r, "index", "pos", 51),
        ],
    ),
]

# ---- paper Table 1 (N = 51), the cells not in Table 2: paper value paper.PAPER_T1[(task, model)],
# ours at L = 511; rule 3 (rule 2 at the 100 % ceiling), rule 8 for the cells near chance
TABLE1 = (
    ("ch2.train.table1.first_sin", "first", "sin"),
    ("ch2.train.table1.majority_sin", "majority", "sin"),
    ("ch2.train.table1.first_norm", "first", "norm"),
)
#: cells a ±3-point band cannot check (a model that learns nothing passes): chance claims only
TABLE1_UNCHECKED = (
    ("ch2.train.table1.first_gen", "first", "gen"),
    ("ch2.train.table1.index_gen", "index", "gen"),
    ("ch2.train.table1.index_sin", "index", "sin"),
)
#: rule 8: the Table 1 cells with zero NESV whose accuracy is reported near chance
TABLE1_CHANCE = (
    ("ch2.train.table1.first_gen_chance", "first", "gen"),
    ("ch2.train.table1.first_sin_chance", "first", "sin"),
    ("ch2.train.table1.index_gen_chance", "index", "gen"),
    ("ch2.train.table1.index_sin_chance", "index", "sin"),
)
CHANCE_CELLS = tuple((t, m) for _, t, m in TABLE1_CHANCE)


def _table1_claim(cid, task, model) -> Claim:
    """One row of :data:`TABLE1`."""
    pv = paper.PAPER_T1[(task, model)]
    said = f"{task.capitalize()} under {NAMES[model]} at N = 51: "
    if pv == 100.0:  # the ceiling: every seed perfect
        return Claim(
            cid,
            "Table 1 (N = 51)",
            statement=said + "all 20 seeds are at 100 % accuracy at L = 511",
            **rule2(CEILING_WHY),
            measure=lambda r: perfect_seeds(r, task, model, 51),
            protocol=protocol_of([(task, model, 51)]),
        )
    return Claim(
        cid,
        "Table 1 (N = 51)",
        statement=said + "mean accuracy over 20 seeds at L = 511",
        **rule3(pv),
        measure=lambda r: mean_longest(r, task, model, 51),
        protocol=protocol_of([(task, model, 51)]),
    )


def _table1_unchecked(cid, task, model) -> Unchecked:
    """One row of :data:`TABLE1_UNCHECKED`."""
    return Unchecked(
        cid,
        "Table 1 (N = 51)",
        statement=f"{task.capitalize()} under {NAMES[model]} at N = 51: mean accuracy over 20 seeds at L = 511",
        paper_value=paper.PAPER_T1[(task, model)],
        status="not-attempted",
        reason="a ±3-point band around a number this close to 50 % is passed by a model that learns "
        "nothing, so it is no check; the cell's chance claim (next rows) is the one that can fail",
    )


def _chance_claim(cid, task, model) -> Claim:
    """One row of :data:`TABLE1_CHANCE` (rule 8)."""
    pv = paper.PAPER_T1[(task, model)]
    said = {
        "above": "above chance: its 95 % seed-bootstrap interval lies above 50 %",
        "below": "below chance: its 95 % seed-bootstrap interval lies below 50 %",
        "indistinguishable": "not distinguishable from chance: its 95 % seed-bootstrap "
        "interval contains 50 %",
    }[paper_chance_side(pv)]
    return Claim(
        cid,
        "Table 1 (N = 51)",
        statement=f"{task.capitalize()} under {NAMES[model]} at N = 51 (NESV 0): our 20-seed mean "
        f"accuracy at L = 511 is {said}, as is the paper's {pv:g} % read with a "
        f"± {T1_TOLERANCE:g}-point band (it gives no interval)",
        **rule8(pv),
        measure=lambda r: summary_longest(r, task, model, 51),
        protocol=protocol_of([(task, model, 51)]),
    )


_SMALL_NS = tuple(N for N in paper.NS if N != 51)
TABLE1_MAJORITY_AND_D7 = [
    Claim(
        "ch2.train.table1.majority_posnorm",
        "Table 1 (N = 51), A_pos and A_norm columns",
        statement="Majority under A_pos (and, identical by App. D.7, A_norm) at N = 51: mean accuracy over "
        "20 seeds at L = 511",
        **rule3(paper.PAPER_T1[("majority", "pos")]),
        measure=lambda r: mean_longest(r, "majority", "pos", 51),
        protocol=protocol_of([("majority", "pos", 51)]),
    ),
    Claim(
        "ch2.train.d7.first_norm",
        "App. D.7",
        statement=f"First under A_norm at N = {', '.join(map(str, _SMALL_NS))}: all 20 seeds are at 100 % accuracy "
        "at L = 10N+1 (N = 51: the Table 1 claim)",
        **rule2(
            "rule 2: at the 100 % ceiling we compare the count of perfect seeds",
            [SEEDS] * len(_SMALL_NS),
        ),
        measure=lambda r: [perfect_seeds(r, "first", "norm", N) for N in _SMALL_NS],
        protocol=protocol_of([("first", "norm", N) for N in _SMALL_NS]),
    ),
    Claim(
        "ch2.train.d7.majority_equivalent",
        "App. D.7",
        group="self-check",
        statement="On Majority our A_pos and A_norm members (same initial tensors and batches, fixed token "
        "k = 0) have identical test accuracies for all 20 seeds",
        paper_value=SEEDS,
        check="equal",
        why="with k = 0, F(ak) = 0 = ak, so the two models coincide by construction: a check of our code",
        measure=majority_equivalent,
    ),
]

# ---- paper Table 3 (App. D.6): Majority's mean OOD accuracy; paper value paper.PAPER_T3[model][N],
# ours summary_ood, rule 1
TABLE3 = (
    ("ch2.train.table3.gen_N11", "gen", 11),
    ("ch2.train.table3.sin_N11", "sin", 11),
    ("ch2.train.table3.gen_N21", "gen", 21),
    ("ch2.train.table3.sin_N21", "sin", 21),
    ("ch2.train.table3.gen_N31", "gen", 31),
    ("ch2.train.table3.sin_N31", "sin", 31),
    ("ch2.train.table3.gen_N41", "gen", 41),
    ("ch2.train.table3.sin_N41", "sin", 41),
    ("ch2.train.table3.gen_N51", "gen", 51),
    ("ch2.train.table3.sin_N51", "sin", 51),
)


def _table3_claim(cid, model, N) -> Claim:
    """One row of :data:`TABLE3`."""
    name = {"gen": "A_gen (NoPE)", "sin": "A_sin (sinusoidal)"}[model]
    return Claim(
        cid,
        "Table 3 (App. D.6)",
        statement=f"Majority under {name} at N = {N}: mean over 20 seeds of the accuracy averaged over "
        f"the five test lengths above N (ours with its 95 % seed-bootstrap interval)",
        **rule1(paper.PAPER_T3[model][N]),
        measure=lambda r: summary_ood(r, "majority", model, N),
        protocol=protocol_of([("majority", model, N)]),
    )


_COEF_N = paper.PAPER_COEF_CHECKPOINTS
_COEF_PROTOCOL = protocol_of([("index", "pos", N) for N in paper.NS])
COUNTEREXAMPLE_AND_D4 = [
    Claim(
        "ch2.train.counterexample_sin_majority",
        "§1, §3.2 (Table 1, Table 3, App. D.6)",
        statement="The paper's one counterexample: Majority under A_sin, whose NESV shrinks "
        "faster (Thm. 9), generalizes as well as under A_gen. Ours: at N = 51 and L = 511 and "
        "in mean OOD accuracy at every N, A_sin's 20-seed mean is nowhere below A_gen's by "
        "more than the two-sample band of the Table 2–3 comparisons (the volume half is "
        "ch2.nesv.majority_sin, not attempted)",
        paper_value=paper.PAPER_COUNTEREXAMPLE,
        check="predicate",
        holds=lambda v: (
            len(v["diff"]) == len(COUNTEREXAMPLE_CELLS)
            and all(v["diff"][k] >= -v["band"][k] for k in v["diff"])
        ),
        why="rule 9: 'as well as' means not worse, so rule 1's band on the lower side, at "
        "each cell where the paper's tables compare the two models",
        measure=counterexample,
        protocol=protocol_of(
            [("majority", m, N) for m in ("gen", "sin") for N in paper.NS]
        ),
    ),
    # ---- App. D.4 coefficient analysis
    Claim(
        "ch2.train.coef_direction",
        "§4.1.3, App. D.4, paper Fig. 1",
        statement="Within each N, larger N²|χ| and larger N|ℓ| of the 100 selected A_pos Index checkpoints go "
        "with lower mean OOD accuracy (both rank correlations negative, permutation p < 10⁻³)",
        paper_value="both negative, p < 1e-3",
        check="direction",
        holds=lambda v: (
            v["rho_chi"] < 0
            and v["rho_ell"] < 0
            and max(v["p_chi"], v["p_ell"]) < paper.PAPER_COEF_P
        ),
        why="the sign and significance of both associations; their sizes are the next two claims",
        measure=lambda r: {
            "rho_chi": coefficients(r)["chi"]["rho"],
            "rho_ell": coefficients(r)["ell"]["rho"],
            "p_chi": coefficients(r)["chi"]["p"],
            "p_ell": coefficients(r)["ell"]["p"],
        },
        protocol=_COEF_PROTOCOL,
    ),
    *(
        Claim(
            cid,
            "§4.1.3, App. D.4",
            statement=f"The pooled within-N rank correlation of {sym} with mean OOD accuracy over the 100 "
            "A_pos Index checkpoints",
            **rule5(paper.PAPER_COEF_RHO[key], _COEF_N),
            measure=lambda r, k=key: coefficients(r)[k]["rho"],
            digits=3,
            protocol=_COEF_PROTOCOL,
        )
        for cid, key, sym in (
            ("ch2.train.coef_chi", "chi", "N²|χ|"),
            ("ch2.train.coef_ell", "ell", "N|ℓ|"),
        )
    ),
]

# ---- what the book does not check (coverage of the paper)
NOT_CHECKED = [
    Unchecked(
        "ch2.nesv.majority_sin",
        "Thm. 9 (App. C), Table 1",
        "Majority under A_sin has NESV Θ(1/(n³ log n))",
        paper.PAPER_T1_NESV[("majority", "sin")],
        "not-attempted",
        "the book's exactness checker and volume scans cover A_gen, A_pos and A_norm; the sinusoidal bound "
        "rests on a compensation condition on two positional key columns (Lemma 10) that we did not "
        "implement",
    ),
    Unchecked(
        "ch2.nesv.positional_tasks_gen_sin",
        "Table 1",
        "First and Index have NESV 0 under A_gen and A_sin",
        "0",
        "not-attempted",
        "under A_gen the output depends only on the number of ones (the chapter says so), which settles "
        "First and Index for n ≥ 2; we do not check A_sin, whose fixed-frequency encoding would need its "
        "own exactness checker",
    ),
    Unchecked(
        "ch2.nesv.parity_other_models",
        "Table 1",
        "Parity has NESV 0 under A_pos, A_sin and A_norm",
        "0",
        "not-attempted",
        "our Parity checks (sign changes along the count segment) apply to A_gen only",
    ),
    Unchecked(
        "ch2.nesv.whole_box",
        "Thm. 1 (eqs. 4–7), Thm. 2, Lemma 3 (eq. 16), App. A.2.2, B",
        "The NESV over the whole box [−B, B]^D, with matching upper bounds",
        "Θ-bounds",
        "not-attempted",
        "we measure exact windows and Monte Carlo fractions in a small box around one exact center, which "
        "probes the lower-bound construction; the upper bounds are proofs over the whole box that we do "
        "not estimate by sampling",
    ),
]


# --------------------------------------------------------------------------- declared deviations
_REPLICATION = (
    "The paper's interval resamples its 20 seeds only. All seeds are scored on one saved bank of 1,000 "
    "examples per length, whose own sampling error (of the order of ±3 points at 95 % for accuracies "
    "near 50–90 %) is in neither the paper's interval nor ours, and our banks, data streams and "
    "initial draws are different draws (the paper publishes none of them; our batch lengths are "
    "also shared across seeds). An independent replication can therefore differ from the paper's mean "
    "by more than the two seed intervals allow with the protocol otherwise followed."
)

_UNEXPLAINED_POS_N51 = (
    "Ours is below the paper's mean by far more than the two seed intervals allow, and we have not found "
    "why. Ruled out: the update cap (every A_pos member at N = 51 stopped by the paper's own rule, each "
    "selected checkpoint perfect on validation) and the A_norm map (A_pos does not use it). Against a "
    "fixed offset of our protocol: at N = 11, 21 and 41 our A_pos means agree with the paper's under "
    "rule 1, two of them above it, and the A_norm members of the same run (same test banks, batches and "
    "initial tensors) agree with the paper at N = 51, which argues against a gross fault in the bank or "
    "the streams but not against one that touches A_pos alone. Not measured, so not ruled out: our one "
    "test bank at L = 511 (1,000 examples shared by every seed, its sampling error in neither interval), "
    "our data streams and initial draws (the paper publishes none), our batch lengths shared across "
    "seeds, and run-to-run drift (an earlier execution of the same code and seeds stored a higher mean, "
    "itself below the paper's interval). Telling these apart needs new training runs (fresh banks, "
    "per-seed length streams, repeated executions), which this revision does not do."
)


def _chance_explanation(model: str) -> str:
    sees = {
        "gen": "Under A_gen the model sees only the number of ones",
        "sin": "The number of ones is also available to A_sin (besides the phases of the positions)",
    }[model]
    return (
        f"{sees}, and the best rule of the count beats a coin (the cause). Our seed interval lies above "
        "50 % and near that count-only rate; rule 8 read the paper's number, which has no interval, with "
        "three points either side, which straddles 50 % and so predicted 'indistinguishable from chance'. "
        "Both say the same about the models — they learn nothing beyond the count — and the rule's "
        "mistake is to have taken 50 % for chance. Neither interval includes the sampling error of the "
        "one test bank that every seed shares."
    )


#: the claims that deviate today, each with a cause from CAUSES and our explanation
DEVIATIONS = {
    "ch2.volume.mc_pos_index": Deviation(
        "pre-asymptotic lengths",
        "The χ window shrinks like n⁻² and at the smallest lengths is still comparable to the box of half-width 0.1, "
        "so the exact fraction there falls more slowly than n⁻³; at the longest lengths of the scan too few sampled "
        "points are exact to enter the fit, so the fit sees the approach to the asymptotic rate rather than the rate.",
    ),
    "ch2.train.table2.index_pos_N31": Deviation("replication sampling", _REPLICATION),
    "ch2.train.table2.majority_gen_N21": Deviation(
        "replication sampling", _REPLICATION
    ),
    "ch2.train.table3.gen_N21": Deviation("replication sampling", _REPLICATION),
    "ch2.train.table2.index_pos_N51": Deviation("unexplained", _UNEXPLAINED_POS_N51),
    "ch2.train.table1.first_gen_chance": Deviation(
        "count-only chance above 50 %", _chance_explanation("gen")
    ),
    "ch2.train.table1.index_gen_chance": Deviation(
        "count-only chance above 50 %", _chance_explanation("gen")
    ),
    "ch2.train.table1.index_sin_chance": Deviation(
        "count-only chance above 50 %", _chance_explanation("sin")
    ),
}


def _with_deviations(claims: list) -> list:
    """``claims`` with each declared deviation attached to its claim (every one must name a claim)."""
    unknown = set(DEVIATIONS) - {c.id for c in claims}
    if unknown:
        raise KeyError(f"deviations declared for no claim: {sorted(unknown)}")
    return [
        dataclasses.replace(c, deviation=DEVIATIONS[c.id]) if c.id in DEVIATIONS else c
        for c in claims
    ]


CLAIMS = _with_deviations(
    [
        *SELF_CHECKS,
        *(_window_claim(*row) for row in WINDOWS),
        *(_mc_claim(*row) for row in MC_FRACTIONS),
        *VOLUME_LIVE,
        *PARITY,
        *(_table2_claim(*row) for row in TABLE2),
        *GAIN,
        *(_table1_claim(*row) for row in TABLE1),
        *(_table1_unchecked(*row) for row in TABLE1_UNCHECKED),
        *(_chance_claim(*row) for row in TABLE1_CHANCE),
        *TABLE1_MAJORITY_AND_D7,
        *(_table3_claim(*row) for row in TABLE3),
        *COUNTEREXAMPLE_AND_D4,
        *NOT_CHECKED,
    ]
)

#: the intro's results box: the chapter's main finding and main deviation, with the claims behind them
HEADLINE = {
    "claims": [
        {
            "claim": "For Index, the range of exact solutions in one coefficient narrows fast with length",
            "id": "ch2.volume.pos_index_chi",
        },
        {
            "claim": "A normalized query (A_norm) keeps that coefficient's range from narrowing",
            "id": "ch2.volume.norm_index_chi_fixed_ell_hat",
        },
        {
            "claim": "Tasks whose exact solutions shrink faster generalize worse after training",
            "id": "ch2.train.volume_order",
        },
        {
            "claim": "A_norm is far more accurate on Index at 10 times the training length",
            "id": "ch2.train.norm_vs_pos_size",
        },
        {
            "claim": "Trained models with a larger drifting coefficient χ generalize worse "
            "(rank correlation)",
            "id": "ch2.train.coef_chi",
        },
    ],
    "finding": "The exact-solution windows shrink as the paper derives (Index under A_pos: χ like n⁻², ℓ like "
    "n⁻¹; under A_norm only ℓ̂ like n⁻¹; First constant), and length generalization follows that "
    "order in training, with A_norm ahead of A_pos on Index by the paper's margin.",
    "finding_ids": [
        "ch2.volume.pos_index_chi",
        "ch2.volume.pos_index_ell",
        "ch2.volume.norm_index_chi_fixed_ell_hat",
        "ch2.train.volume_order",
        "ch2.train.norm_vs_pos_size",
    ],
    "deviation": "Index under A_pos at N = 51 lies well below the paper's mean in paper Table 2, "
    "further than the two seed intervals allow, for a reason we have not found.",
    "deviation_ids": ["ch2.train.table2.index_pos_N51"],
}

#: claims shown on the chapter's details page (02_exact_solution_volume_details): the Lemma 6–7
#: checks, the Monte Carlo fractions, Parity, the Table 1 cells outside Table 2, App. D.7, Table 3
#: and what the book does not check
DETAILS = (
    "ch2.volume.lemma",
    "ch2.volume.mc_",
    "ch2.parity.",
    "ch2.train.table1.",
    "ch2.train.d7.",
    "ch2.train.table3.",
    "ch2.nesv.",
)
