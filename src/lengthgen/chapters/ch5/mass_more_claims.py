"""Chapter 5, section "Softmax mass, not just argmax": our further predictions on the runs of
:mod:`.mass_more`, each written with its comparison before the run it judges.

Seen before writing them (design look-ups, none at a judged size): the stored ``mass_tables`` and
``mass_clamped`` cells (c ≈ 2.1 for the three learned tables); for chapter 3's RoPE fits, κ and
its running maximum up to L = 16,384 (d1 = 560, 995, 2585, 640 for prev, skip2, skip3, skip5; 36
records of κ in [20, 16,384) for first), S4, S16 and the measures μ of the study maximum and of
κ(δ). Nothing of the refit beyond its code, and no κ beyond 16,384.

After the runs a review moved ``mass_refit.margin_kept``, ``alpha_structural``, ``below_eval_log``
and ``mass_far.fixed_offset`` from ``ours`` to ``self-check`` (comparisons unchanged).
"""

from __future__ import annotations

import math

from lengthgen.chapters.ch3.realizability import L0_DEFAULT as L0
from lengthgen.chapters.ch5.common import ONE_ROW, claim_maker, everywhere
from lengthgen.chapters.ch5.common import equal, failed, holds, value
from lengthgen.chapters.ch5.mass import FIXED_TARGET
from lengthgen.chapters.ch5.mass_more import FIXED_OFFSET

ENC_SAME = ("nope", "alibi", "learned_abs")


def _refit_rows(results):
    return results.cell("mass_refit")["rows"]


def _old(results):
    """The unscaled fit's row of ``mass_tables`` for each (encoding, task, L)."""
    return {(r["encoding"], r["task"], r["L"]): r for r in results.cell("mass_tables")["rows"]}


def _pairs(results):
    """(refit row, the unscaled fit's row) for every refit cell."""
    old = _old(results)
    return [(r, old[(r["encoding"], r["task"], r["L"])]) for r in _refit_rows(results)]


def _margin_change(results):
    fits = results.cell("mass_refit")["fits"]
    return max(abs(f["m"] - f["m_old"]) for f in fits if "m" in f)


def _rope_fixed_changes(results):
    L = max(r["L"] for r in _refit_rows(results))
    return sum(
        r["alpha"] != o["alpha"]
        for r, o in _pairs(results)
        if r["encoding"] == "rope" and r["task"] in FIXED_OFFSET and r["L"] == L
    )


def _perfect_half(results):
    """(refit α^{½} − unscaled fit's unscaled α^{½}) over the relative/absolute-feature cells
    (RoPE, sinusoidal) where both fits have α_L = 1."""
    return {
        f"{r['encoding']}/{r['task']}/{r['L']}": r["alpha_half"] - o["alpha_half_none"]
        for r, o in _pairs(results)
        if r["encoding"] in ("rope", "sinusoidal") and r["alpha"] == 1 == o["alpha"]
    }


def _far(results):
    return {r["task"]: r for r in results.cell("mass_far")["rows"]}


def _study_alpha_matches(results):
    old, far = _old(results), _far(results)
    L = results.cell("mass_far")["study_max"]
    return max(abs(far[t]["alpha_study"] - old[("rope", t, L)]["alpha"]) for t in far)


def _fixed_offset_rows(results):
    """Largest |α_L·|S_L| − (d1 − L0)| in rows over the fixed-offset tasks and far lengths."""
    far = _far(results)
    return max(
        abs(f["alpha"] * f["n_scored"] - (far[t]["d1"] - L0))
        for t in FIXED_OFFSET
        for f in far[t]["far"]
    )


def _sup_respected(results):
    """Per task at the farthest length: [running max − S4, S16 − S4, running max − study max]."""
    out = {}
    for t, r in _far(results).items():
        top = r["far"][-1]["running_max"]
        out[t] = [top - r["S4"], r["S16"] - r["S4"], top - r["study_max"]]
    return out


def _sup_ok(v):
    return bool(v) and all(a <= 1e-6 and b > 0 and c > 0 for a, b, c in v.values())


def _exceed_ratios(results, key="exceed", mu="mu_study_max", tasks=None, min_expected=50):
    out = {}
    for t, r in ((t, r) for t, r in _far(results).items() if not tasks or t in tasks):
        f = r["far"][-1]
        expected = r[mu] * (f["L"] - results.cell("mass_far")["study_max"])
        if expected >= min_expected:
            out[t] = f[key] / expected
    return out


def _first_records(results):
    """first at each far length: [correct rows − study records, far records, exceedances]."""
    r = _far(results)["first"]
    n0 = r["study_records"]
    return [[round(f["alpha"] * f["n_scored"]) - n0, f["records"], f["exceed"]] for f in r["far"]]


def _first_ok(v):
    return bool(v) and all(c == n and 1 <= n <= 4 * (math.log(max(e, 1)) + 1) for c, n, e in v)


_c = claim_maker("ch. 5 § softmax mass")
_check = claim_maker("ch. 5 § softmax mass", group="self-check")

CLAIMS = [
    _check(
        "ch5.mass_refit.margin_kept",
        "The per-row log refit leaves the learned tables' clamped margin m unchanged on first, "
        "pos2, pos5 (largest |m_refit − m|)",
        value(0.0, 0.0),
        "m lives in table row L0 − 1 = 19, whose factor is log 20 / log 20 = 1 exactly; the "
        "table's rows are separate parameters, the loss is a mean of per-row terms, and Adam and "
        "its weight decay act per coordinate, so row 19 sees the same gradients bit for bit",
        _margin_change,
    ),
    _check(
        "ch5.mass_refit.alpha_structural",
        "The refit's α_L equals the unscaled fit's in every NoPE, ALiBi and learned-table cell "
        "(9 tasks × 6 lengths; number of cells that differ)",
        equal(0),
        "NoPE's kernel is constant (every row ties, α = 0); an ALiBi kernel c0 + s·d with "
        "s ≤ 0 puts the argmax at offset 0 or ties, and no task demands offset 0 (α = 0); the "
        "learned table's rows ≥ L0 all use row 19, which the refit leaves unchanged; a positive "
        "factor keeps every argmax",
        lambda r: sum(x["alpha"] != o["alpha"] for x, o in _pairs(r) if x["encoding"] in ENC_SAME),
    ),
    _c(
        "ch5.mass_refit.rope_moves",
        "The refit changes RoPE's α_L at L = 16,384 on at least one fixed-offset task (prev, "
        "skip2, skip3, skip5; number that change)",
        holds("≥ 1", lambda v: v >= 1),
        "the per-row factor (0.23 … 1 over the training rows) changes the objective of the "
        "shared relative kernel, so the fit lands elsewhere; α at 16,384 is set by the first "
        "offset d1 whose κ beats κ(δ), which moves with any change of κ",
        _rope_fixed_changes,
        **failed(
            "the refit left RoPE's α at 16,384 unchanged on every fixed-offset task: the first "
            "offset d1 whose κ beats κ(δ) did not move"
        ),
    ),
    _check(
        "ch5.mass_refit.closed_form",
        "Learned tables on first, pos2, pos5: the refit's α_L^{½} with the per-row factor "
        "matches our closed form at every length (largest difference, in rows)",
        value(0.0, ONE_ROW),
        "the closed form of the evaluation-time factor, with s_i per row; one boundary row "
        "may round the other way",
        lambda r: max(
            abs(x["alpha_half"] - x["closed_form"]) * (x["L"] - L0)
            for x in _refit_rows(r)
            if "closed_form" in x
        ),
    ),
    _check(
        "ch5.mass_refit.keeps_mass",
        "The refit's learned tables keep α_L^{½} = 1 at every length up to 16,384 on first, "
        "pos2, pos5 (smallest α^{½})",
        value(1.0, 0.0),
        "m is unchanged and c = m / log L0 ≈ 2.1 > 1: with s_i = log(i+1)/log L0 row i's "
        "target weight grows like (i+1)^c against a tail of about i keys; rows up to 512 kept "
        "their mass even without any factor, and s_i ≥ 1 there only raises it",
        lambda r: min(
            x["alpha_half"]
            for x in _refit_rows(r)
            if x["encoding"] == "learned_abs" and x["task"] in FIXED_TARGET
        ),
    ),
    _check(
        "ch5.mass_refit.below_eval_log",
        "For every learned-table cell the refit's α_L^{½} is at most the evaluation-time factor's",
        everywhere(),
        "same table row 19 and s_i ≤ log L / log L0 for every row i < L; a weight above ½ is "
        "on the row's maximum, and a larger factor only raises it",
        lambda r: all(
            x["alpha_half"] <= o["alpha_half_log"]
            for x, o in _pairs(r)
            if x["encoding"] == "learned_abs"
        ),
    ),
    _c(
        "ch5.mass_refit.perfect_gain",
        "RoPE and sinusoidal cells where both fits have a perfect argmax: the refit's α^{½} is at "
        "least the unscaled fit's (no factor) in every such cell",
        holds("≥ 0 in every cell", lambda v: bool(v) and all(x >= 0 for x in v.values())),
        "beyond L0 the refit multiplies row i by s_i ≥ 1, and to fit the early rows "
        "(s_i down to 0.23) its kernel needs larger margins than the unscaled fit's, so the "
        "weight on a correct maximum can only be larger (a failure would mean the fit spent "
        "its margin elsewhere)",
        _perfect_half,
    ),
    _check(
        "ch5.mass_refit.half_below_argmax",
        "α_L^{½} ≤ α_L in every refit cell",
        everywhere(),
        "a weight above ½ is the unique maximum: any failure is a bug",
        lambda r: all(x["alpha_half"] <= x["alpha"] for x in _refit_rows(r)),
    ),
    _check(
        "ch5.mass_far.kappa_is_transfer",
        "α_L from RoPE's κ (O(L)) equals α_L from the full transfer T_L(W) (mass_tables) at "
        "L = 16,384 on all 9 tasks (largest difference)",
        value(0.0, 0.0),
        "T_L(W)[i, j] = κ(i − j) exactly in real arithmetic; float64 rounding differs "
        "(≈10⁻¹³) far below the logit gaps that decide these argmaxes",
        _study_alpha_matches,
    ),
    _check(
        "ch5.mass_far.fixed_offset",
        "prev, skip2, skip3, skip5 at L = 10⁵, 10⁶, 10⁷: the right rows are exactly the d1 − L0 "
        "rows before the first offset d1 (found below 16,384) with κ(d1) > κ(δ) (largest "
        "deviation in rows)",
        value(0.0, 0.5),
        "a row i ≥ d1 sees offset d1, whose κ beats κ(δ), so its argmax is never δ; rows "
        "below d1 were right at 16,384 already; α_L = (d1 − L0)/(L − L0) → 0",
        _fixed_offset_rows,
    ),
    _c(
        "ch5.mass_far.sup_is_torus_max",
        "On all 9 RoPE tasks κ's running maximum at 10⁷ rises above its 16,384 value yet stays "
        "below S4 = Σ_r max f_r, which is itself below the sum of amplitudes S16",
        holds("M16384 < M(10⁷) ≤ S4 < S16", _sup_ok),
        "θ_{k+4} = θ_k/10 makes κ a function on the 4-torus, so sup κ = S4; Weyl "
        "equidistribution makes every level below S4 recur, and μ(M16384)·10⁷ ≥ 7 offsets are "
        "expected above the study's maximum on every task",
        _sup_respected,
    ),
    _c(
        "ch5.mass_far.equidistribution_max",
        "The offsets in [16,384, 10⁷) whose κ exceeds the study's maximum number μ·(10⁷ − 16,384) "
        "within a factor 2, μ the torus measure above that level (tasks expecting ≥ 50)",
        holds(
            "ratio in [0.5, 2]",
            lambda v: len(v) >= 7 and all(0.5 <= x <= 2 for x in v.values()),
        ),
        "Weyl: the fraction of offsets whose angles fall in a set of measure μ tends to μ; "
        "exceedances come in short runs (neighbouring offsets share the slow phases), so counts "
        "fluctuate more than Poisson; factor 2 for expected counts of 60 to 6000",
        _exceed_ratios,
    ),
    _c(
        "ch5.mass_far.equidistribution_delta",
        "Fixed-offset tasks: the offsets in [16,384, 10⁷) whose κ exceeds κ(δ) number "
        "μ(κ(δ))·(10⁷ − 16,384) within 25 %",
        holds(
            "ratio in [0.8, 1.25]",
            lambda v: len(v) == 4 and all(0.8 <= x <= 1.25 for x in v.values()),
        ),
        "as above, with expected counts of 2000 to 9000, where runs average out",
        lambda r: _exceed_ratios(r, "exceed_delta", "mu_kappa_delta", FIXED_OFFSET, 1),
    ),
    _c(
        "ch5.mass_far.first_records",
        "first at 10⁵, 10⁶, 10⁷: the right rows beyond the study's are exactly the new records "
        "of κ, at least 1 and at most 4(ln E + 1), E the exceedances of the study maximum",
        holds("records, 1 ≤ n ≤ 4(ln E + 1)", _first_ok),
        "row i of first is right iff κ(i) is a strict record; a new record must exceed the "
        "study maximum, and the first exceedance is one; among E exchangeable-like exceedances "
        "records number about ln E + 0.58, times short runs (≤ 4)",
        _first_records,
    ),
    _check(
        "ch5.mass_far.alpha_vanishes",
        "Every RoPE task has α_L < 10⁻³ at L = 10⁷ (largest α)",
        holds("< 1e-3", lambda v: v < 1e-3),
        "fixed offsets: (d1 − L0)/L ≤ 2.6·10⁻⁴; first/posP/reverse: right rows are records, "
        "at most 36 + (exceedances ≈ 5900) of 10⁷; copy: ⌈L/2⌉ would have to be a record",
        lambda r: max(x["far"][-1]["alpha"] for x in _far(r).values()),
    ),
]
