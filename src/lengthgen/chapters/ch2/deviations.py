"""Chapter 2's declared deviations: why a claim of :mod:`.claims` may deviate (:data:`CAUSES`)
and, by claim id, the claims that deviate today, each with its cause and an explanation we wrote
before the check runs (:data:`DEVIATIONS`)."""

from lengthgen.claims import Deviation

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
    "ch2.train.table2.majority_gen_N21": Deviation("replication sampling", _REPLICATION),
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
