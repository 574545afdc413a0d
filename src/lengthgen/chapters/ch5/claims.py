"""Chapter 5's claims: **our** predictions for experiments that none of the four papers runs
(group ``ours``), each compared with our measured value by a comparison fixed before the run, and
self-checks of the code the experiments reuse. They are not claims of the papers and the scorecard
counts them apart.

Sections: "Parity: averaging versus summing" (``parity``). Sections 5.1 (log scaling inside the
volume theory) and 5.2 (softmax mass beyond argmax) of the chapter's plan have no claims yet:
their experiments have not run.

Each prediction was written, with its comparison, in the commit that introduced it, before the
experiment it judges was run (``git log -p`` of this file shows the order).
"""

from __future__ import annotations

from lengthgen.claims import Claim

PAPER = "our experiments across the papers (not claims of the papers)"
#: causes a prediction of ours may fail for (none declared yet)
CAUSES: dict[str, str] = {}

#: chapter 5.3's parameter boxes and lengths (fixed before the runs)
DOUBLING_N = (3, 5, 11, 51)
SINE_B = (2.0, 3.0, 4.0, 6.0, 8.0)
SUMMING_N = 100_000
SUMMING_ALL = 1_000


def _cell(results, name):
    return results.cell(name)


def _doubling(results, beta, key):
    rows = [r for r in _cell(results, "parity_doubling")["rows"] if r["beta"] == beta]
    return max(r[key] for r in rows)


CLAIMS = [
    Claim(
        "ch5.parity.collapse_beta_one",
        "ch. 5 § averaging vs summing",
        "With β_n = 1 the attention output for t ones among n equals the one for 2t among 2n "
        "(largest difference over 10⁴ A_gen points, n = 3, 5, 11, 51), so no classifier is "
        "exact at both n and 2n",
        0.0,
        source="stored",
        measure=lambda r: _doubling(r, "one", "max_abs_output"),
        check="value",
        tolerance=1e-12,
        residue=1e-12,
        why="with β_n = 1 the log-odds log t − log(n − t) + X are equal at (t, n) and (2t, 2n) up "
        "to float64 rounding of the logarithms, far below 10⁻¹²",
        group="ours",
    ),
    Claim(
        "ch5.parity.logit_shift_log",
        "ch. 5 § averaging vs summing",
        "With β_n = log n the log-odds of the attention share at (2t, 2n) exceed those at (t, n) by "
        "exactly X log 2, at every t and n (largest error over the same points)",
        0.0,
        source="stored",
        measure=lambda r: _doubling(r, "log", "max_logit_error"),
        check="value",
        tolerance=1e-9,
        residue=1e-9,
        why="the difference is (log 2n − log n) X = X log 2 in exact arithmetic; float64 "
        "logarithms of n ≤ 102 and |X| ≤ 2 round far below 10⁻⁹",
        group="ours",
    ),
    Claim(
        "ch5.parity.averaging_sine_nmax",
        "ch. 5 § averaging vs summing",
        "Averaging attention + one sine unit with every parameter in [−B, B]: the largest length at "
        "which a search finds an exact Parity classifier, for B = 2, 3, 4, 6, 8, equals our bound "
        "⌈2B²/π⌉",
        [3, 6, 11, 23, 41],
        source="stored",
        measure=lambda r: [
            row["largest_exact_n"] for row in _cell(r, "averaging_sine")["rows"]
        ],
        check="equal",
        why="our derivation: n sign changes need n zeros of the sine, π apart, within |ω| ≤ 2B²; "
        "an exact count can only equal it (a larger value refutes the bound, a smaller one its "
        "tightness)",
        group="ours",
    ),
    Claim(
        "ch5.parity.summing_exact",
        "ch. 5 § averaging vs summing",
        "Summing instead of averaging: chapter 4's biased width-2 sine construction (p = 2) "
        "classifies every count t ≤ 10⁵ correctly, and every (n, t) with n ≤ 1,000 "
        "(errors: both counts)",
        [0, 0],
        source="stored",
        measure=lambda r: [
            _cell(r, "summing")["errors"],
            _cell(r, "summing")["errors_all_lengths"],
        ],
        check="equal",
        why="the construction's phase is π t exactly (its weight on the count of zeros is 0), "
        "so any error is a real failure, not rounding",
        group="ours",
    ),
    Claim(
        "ch5.parity.summing_ignores_zeros",
        "ch. 5 § averaging vs summing",
        "The construction's first-layer weight on the count of zeros is exactly 0",
        0.0,
        source="stored",
        measure=lambda r: _cell(r, "summing")["weight_on_zeros"],
        check="equal",
        why="W_{j0} = 2π·0/p is 0 in any arithmetic",
        group="self-check",
    ),
]

HEADLINE = {
    "finding": "Averaging attention loses Parity at long lengths for any classifier (β = 1) or "
    "any bounded sine classifier (β = log n), while summing plus chapter 4's sine construction is "
    "exact at every length we checked.",
    "finding_ids": ["ch5.parity.collapse_beta_one", "ch5.parity.summing_exact"],
    "deviation": "None yet; sections 5.1 and 5.2 have not run.",
    "deviation_ids": [],
    "claims": [
        {
            "claim": "Without log n, t of n and 2t of 2n look the same",
            "id": "ch5.parity.collapse_beta_one",
        },
        {
            "claim": "With log n, they differ by a fixed log-odds shift",
            "id": "ch5.parity.logit_shift_log",
        },
        {
            "claim": "Averaging + a bounded sine unit: exact only up to ⌈2B²/π⌉",
            "id": "ch5.parity.averaging_sine_nmax",
        },
        {
            "claim": "Summing + chapter 4's sine unit: exact at every length checked",
            "id": "ch5.parity.summing_exact",
        },
    ],
}
