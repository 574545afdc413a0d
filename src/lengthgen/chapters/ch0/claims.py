"""Chapter 0's claims: self-checks of the closed forms (the chapter reproduces no experiment), kept
in the ledger so that a change to the dilution code or the stored grid is caught."""

from __future__ import annotations

import numpy as np

from lengthgen.chapters.ch0.experiments import N_VALUES
from lengthgen.claims import Claim

PAPER = "background (Chiang & Cholak 2022, §5.2–5.3)"
#: no deviations are expected in a chapter of closed forms
CAUSES: dict[str, str] = {}

#: float64 rounding bound of a softmax over N terms: N · 2⁻⁵²
ROUNDING_BOUND = max(N_VALUES) * float(np.finfo(np.float64).eps)


def _rows(results, c, log_scaled):
    """The stored grid's rows at advantage ``c`` and scaling ``log_scaled``, by N."""
    rows = results.cell("dilution_grid")["rows"]
    found = [r for r in rows if r["c"] == c and r["log_scaled"] == log_scaled]
    return sorted(found, key=lambda r: r["N"])


def _check(id, location, statement, paper_value, check, why, measure=None, **kw) -> Claim:
    """A self-check, stored when it has a ``measure``, live otherwise."""
    kw |= {"source": "stored" if measure else "live", "measure": measure, "group": "self-check"}
    return Claim(id, location, statement, paper_value, check, why, **kw)


_ROUNDING = {"tolerance": ROUNDING_BOUND, "digits": 2}

CLAIMS = [
    _check(
        "ch0.eq1.closed_form",
        "ch. 0 eqs. 1–2",
        "The closed forms of the favoured weight equal torch.softmax in float64 for N = 1 … 10⁵ "
        "(stored grid, both scalings)",
        0.0,
        "value",
        "a softmax over N terms is exact up to N rounding errors of 2⁻⁵² each",
        lambda r: r.cell("dilution_grid")["max_abs_error"],
        **_ROUNDING,
    ),
    _check(
        "ch0.stored.regression",
        "ch. 0 eqs. 1–2",
        "Today's live grid agrees with the stored full-scale grid",
        0.0,
        "value",
        "the same float64 computation; only rounding may differ",
        **_ROUNDING,
    ),
    _check(
        "ch0.dilution.unscaled",
        "Chiang & Cholak §5.2 (attention dilution)",
        "With a fixed margin c = 4, the favoured weight at N = 10⁵ is below 1 %",
        "weight → 0 as N grows",
        "predicate",
        "eq. 1 gives e⁴/(e⁴ + 10⁵ − 1) ≈ 5.5·10⁻⁴; 1 % is a loose bar for 'tends to 0'",
        lambda r: next(x["softmax"] for x in _rows(r, 4.0, False) if x["N"] == 100_000),
        holds=lambda w: w < 0.01,
    ),
    _check(
        "ch0.logscale.c2_to_one",
        "Chiang & Cholak §5.3 (log-length scaled attention)",
        "Scaled by log N, margin c = 2 gives a weight that rises with N and is ≥ 0.9999 at N = 10⁵",
        "weight bounded away from 0",
        "predicate",
        "eq. 2 gives N²/(N² + N − 1), increasing for N ≥ 2 and 1 − 10⁻⁵ at N = 10⁵",
        lambda r: [x["closed_form"] for x in _rows(r, 2.0, True)],
        holds=lambda w: bool(np.all(np.diff(w[1:]) >= 0)) and w[-1] >= 0.9999,
        digits=6,
    ),
    _check(
        "ch0.margin.grows_logN",
        "Chiang & Cholak §5.2 (simplified model)",
        "The margin for weight 1/2 grows like log N (least-squares slope on log N, N = 10 … 10⁵)",
        1.0,
        "value",
        "c* = log(N − 1) differs from log N by less than 0.11 over the range",
        tolerance=0.01,
    ),
    _check(
        "ch0.margin.scaled_constant",
        "Chiang & Cholak §5.3",
        "After log-length scaling the needed margin tends to the constant 1 (value at N = 10⁵)",
        1.0,
        "value",
        "log(N − 1)/log N = 1 − 10⁻⁵/log 10⁵ + …, far inside 10⁻³",
        tolerance=1e-3,
    ),
]

#: the intro's results box: the chapter's main finding and main deviation, with the claims behind them
HEADLINE = {
    "finding": "Closed forms of softmax dilution and of log-length scaling agree with torch.softmax "
    "to rounding for N up to 10⁵ (background; self-checks only).",
    "finding_ids": ["ch0.eq1.closed_form"],
    "deviation": "No deviation: the chapter reproduces no experiment.",
    "deviation_ids": [],
    # this background chapter's main checks (self-checks; no paper claims)
    "claims": {
        "ch0.eq1.closed_form": "Softmax's closed forms hold numerically up to N = 10⁵",
        "ch0.dilution.unscaled": "A fixed margin is diluted: the favoured weight falls below 1 %",
        "ch0.logscale.c2_to_one": "Scaled by log N, margin 2 keeps the weight near 1",
        "ch0.margin.scaled_constant": "Scaled by log N, the margin for half the mass tends to 1",
    },
}
