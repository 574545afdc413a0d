"""Chapter 0's claims: all of them are self-checks of the closed forms (the chapter is background and
reproduces no experiment of a paper). They stay in the ledger, in the ``self-check`` group, so that a
change to the dilution code or the stored grid is caught.

The chapter's sections: "Numerical check against torch.softmax" (``eq1``, ``stored``), "How fast the
weight drains away" (``dilution``, ``logscale``), "The margin a head would need" (``margin``).
"""

from __future__ import annotations

import numpy as np

from lengthgen.chapters.ch0.experiments import N_VALUES
from lengthgen.claims import Claim

PAPER = "background (Chiang & Cholak 2022, §5.2–5.3)"
#: no deviations are expected in a chapter of closed forms
CAUSES: dict[str, str] = {}

#: float64 rounding bound of a softmax over N terms: N · 2⁻⁵²
ROUNDING_BOUND = max(N_VALUES) * float(np.finfo(np.float64).eps)


def _row(results, c, N, log_scaled):
    rows = results.cell("dilution_grid")["rows"]
    return next(r for r in rows if r["c"] == c and r["N"] == N and r["log_scaled"] == log_scaled)


def _c2_scaled(results):
    rows = [r for r in results.cell("dilution_grid")["rows"] if r["c"] == 2.0 and r["log_scaled"]]
    return [r["closed_form"] for r in sorted(rows, key=lambda r: r["N"])]


CLAIMS = [
    Claim(
        "ch0.eq1.closed_form",
        "ch. 0 eqs. 1–2",
        group="self-check",
        statement="The closed forms of the favoured weight equal torch.softmax in float64 for N = 1 … 10⁵ "
        "(stored grid, both scalings)",
        paper_value=0.0,
        check="value",
        tolerance=ROUNDING_BOUND,
        why="a softmax over N terms is exact up to N rounding errors of 2⁻⁵² each",
        measure=lambda r: r.cell("dilution_grid")["max_abs_error"],
        digits=2,
    ),
    Claim(
        "ch0.stored.regression",
        "ch. 0 eqs. 1–2",
        group="self-check",
        source="live",
        statement="Today's live grid agrees with the stored full-scale grid",
        paper_value=0.0,
        check="value",
        tolerance=ROUNDING_BOUND,
        why="the same float64 computation; only rounding may differ",
        digits=2,
    ),
    Claim(
        "ch0.dilution.unscaled",
        "Chiang & Cholak §5.2 (attention dilution)",
        group="self-check",
        statement="With a fixed margin c = 4, the favoured weight at N = 10⁵ is below 1 %",
        paper_value="weight → 0 as N grows",
        check="predicate",
        holds=lambda w: w < 0.01,
        why="eq. 1 gives e⁴/(e⁴ + 10⁵ − 1) ≈ 5.5·10⁻⁴; 1 % is a loose bar for 'tends to 0'",
        measure=lambda r: _row(r, 4.0, 100_000, False)["softmax"],
    ),
    Claim(
        "ch0.logscale.c2_to_one",
        "Chiang & Cholak §5.3 (log-length scaled attention)",
        group="self-check",
        statement="Scaled by log N, margin c = 2 gives a weight that rises with N and is ≥ 0.9999 at N = 10⁵",
        paper_value="weight bounded away from 0",
        check="predicate",
        holds=lambda w: bool(np.all(np.diff(w[1:]) >= 0)) and w[-1] >= 0.9999,
        why="eq. 2 gives N²/(N² + N − 1), increasing for N ≥ 2 and 1 − 10⁻⁵ at N = 10⁵",
        measure=_c2_scaled,
        digits=6,
    ),
    Claim(
        "ch0.margin.grows_logN",
        "Chiang & Cholak §5.2 (simplified model)",
        group="self-check",
        source="live",
        statement="The margin needed for weight 1/2 grows like log N (least-squares slope against log N, "
        "N = 10 … 10⁵)",
        paper_value=1.0,
        check="value",
        tolerance=0.01,
        why="c* = log(N − 1) differs from log N by less than 0.11 over the range",
    ),
    Claim(
        "ch0.margin.scaled_constant",
        "Chiang & Cholak §5.3",
        group="self-check",
        source="live",
        statement="After log-length scaling the needed margin tends to the constant 1 (value at N = 10⁵)",
        paper_value=1.0,
        check="value",
        tolerance=1e-3,
        why="log(N − 1)/log N = 1 − 10⁻⁵/log 10⁵ + …, far inside 10⁻³",
    ),
]

#: the intro's results box: the chapter's main finding and main deviation, with the claims behind them
HEADLINE = {
    "finding": "Closed forms of softmax dilution and of log-length scaling agree with torch.softmax "
    "to rounding for N up to 10⁵ (background; self-checks only).",
    "finding_ids": ["ch0.eq1.closed_form"],
    "deviation": "No deviation: the chapter reproduces no experiment.",
    "deviation_ids": [],
    # the results box: this background chapter's main checks (self-checks; no paper claims)
    "claims": [
        {
            "claim": "Softmax's closed forms hold numerically up to N = 10⁵",
            "id": "ch0.eq1.closed_form",
        },
        {
            "claim": "A fixed margin is diluted: the favoured weight falls below 1 %",
            "id": "ch0.dilution.unscaled",
        },
        {
            "claim": "Scaled by log N, margin 2 keeps the weight near 1",
            "id": "ch0.logscale.c2_to_one",
        },
        {
            "claim": "With log N scaling the margin needed for half the mass tends to 1",
            "id": "ch0.margin.scaled_constant",
        },
    ],
}
