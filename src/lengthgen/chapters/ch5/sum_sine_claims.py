"""Chapter 5, section "Parity: averaging versus summing": our predictions on the runs of
:mod:`.sum_sine`, each written with its comparison before the run it judges. The restricted volume
estimate carries the power of n through its share by construction: the volume predictions' content
is that the hit rate inside it tends to a positive constant. Seen before writing these: exploratory
runs at η = 0.17, not a judged η (hit rates ≈ 20 %; local slopes −0.96 over n = 64 … 1024 and −1.2
over 1024 … 4096 at one length from 400–2000 points, −2.0 and −2.2 jointly over 64 … 256 … 512 from
300–500 points), and training at seeds 7 and 8 (not judged) with 2000 updates: biased sine networks
failed first at lengths 6 … 27, biased ReLU ones at 4 … 5; of three biased sine networks right on
the whole training lattice one failed within a factor 2 of the linear-phase prediction (27 vs 45)
and two did not (6 vs 85, 11 vs 43); width-2 runs failed at length 1 against predictions of 31 … 74.
We expected the drift relation to fail for some networks (those seen failed where |Z| collapses
between training lengths, which a linear phase does not see) and kept it unchanged. After the runs a
review moved ``relu_nobias_fails_by_2`` and ``relu_bias_width_bound`` to ``self-check`` (comparisons
unchanged)."""

from __future__ import annotations

import math

import numpy as np

from lengthgen.chapters.ch4 import paper as _P4
from lengthgen.chapters.ch5.common import SLOPE_ALLOWANCE, claim_maker, equal, failed, holds
from lengthgen.chapters.ch5.common import slope_fit, slope_holds
from lengthgen.chapters.ch5.sum_sine import train_cell_name, volume_cell_name

LOC = "ch. 5 § averaging vs summing"
#: the volume claims: (id, η, kind, the fitted lengths, fixed before the run)
VOLUME_CLAIMS = (
    ("ch5.sumsine.volume_one_eta0p25", 0.25, "one", (64, 4096)),
    ("ch5.sumsine.volume_joint_eta0p25", 0.25, "joint", (64, 1024)),
    ("ch5.sumsine.volume_one_eta0p1", 0.1, "one", (256, 4096)),
    ("ch5.sumsine.volume_joint_eta0p1", 0.1, "joint", (64, 1024)),
)
FIT_NS = {(eta, kind): ns for _, eta, kind, ns in VOLUME_CLAIMS}
EXPONENTS = {"one": -1, "joint": -2}
#: the width of the trained networks (chapter 4's full-scale width) and the longest training length
WIDTH = _P4.PROTOCOL["full"]["lengthgen"]["width"]
LONGEST_TRAIN = max(_P4.TRAIN_LENGTHS)
DRIFT_FACTOR = 2.0


def volume_slope(results, eta, kind) -> dict:
    """The log-log slope of the exact fraction over the fitted lengths, with its 95 % interval."""
    lo, hi = FIT_NS[(eta, kind)]
    rows = results.cell(volume_cell_name(eta))["rows"]
    rows = [r for r in rows if r["kind"] == kind and lo <= r["n"] <= hi]
    ns, fractions, hits = ([r[k] for r in rows] for k in ("n", "fraction", "exact"))
    return slope_fit(ns, fractions, hits, lengths=True)


def plain_disagreements(results, eta) -> int:
    """Lengths × kinds where the plain Monte Carlo interval and the restricted one do not overlap."""
    cell = results.cell(volume_cell_name(eta))
    rest = {(r["kind"], r["n"]): r for r in cell["rows"]}
    return sum(
        int(p["hi"] < r["lo"] or r["hi"] < p["lo"])
        for p in cell["plain"]
        for r in [rest[(p["kind"], p["n"])]]
    )


def _rows(results, act, bias):
    return results.cell(train_cell_name(act, bias))["rows"]


def _failure(r, cap):
    """A member's first failing length, ``cap + 1`` where it is exact up to the cap."""
    return cap + 1 if r["first_failure"] is None else r["first_failure"]


def exact_beyond(results, act, bias, n) -> int:
    """The stored members of a variant still exact at every length ≤ ``n``."""
    return sum(_failure(r, n) > n for r in _rows(results, act, bias))


def sine_vs_relu(results) -> dict:
    cap = results.cell(train_cell_name("sine", True))["L_max"]
    s, r_ = ([_failure(r, cap) for r in _rows(results, a, True)] for a in ("sine", "relu"))
    return {"sine_median": float(np.median(s)), "relu_max": int(max(r_))}


def _match(meas, pred, cap) -> bool:
    """Within DRIFT_FACTOR, where ``None`` (exact up to ``cap``) counts as ``cap``."""
    if meas is None or pred is None:
        return meas is pred or (meas or pred) * DRIFT_FACTOR >= cap
    return abs(math.log(meas / pred)) <= math.log(DRIFT_FACTOR)


def drift_relation(results) -> dict:
    """Sine networks right on the whole training lattice whose measured first failing length is
    within a factor 2 of the linear-phase prediction (both variants pooled)."""
    n_ok, pairs = 0, []
    for bias in (True, False):
        cap = results.cell(train_cell_name("sine", bias))["L_max"]
        for d in (r["drift"] for r in _rows(results, "sine", bias)):
            if d["exact_on_train"]:
                n_ok += int(_match(d["measured_failure"], d["predicted_failure"], cap))
                pairs.append([d["measured_failure"], d["predicted_failure"]])
    return {"networks": len(pairs), "within_factor_2": n_ok, "pairs": pairs}


_c, _check = (claim_maker(LOC, g) for g in ("ours", "self-check"))

#: the plain Monte Carlo checks: (id, η)
PLAIN_CHECKS = (
    ("ch5.sumsine.volume_plain_check_eta0p25", 0.25),
    ("ch5.sumsine.volume_plain_check_eta0p1", 0.1),
)
_WHAT = {"one": "at one length n", "joint": "jointly at every length up to n"}

CLAIMS = [
    *(
        _c(
            cid,
            f"The fraction of the box θ* + [−{eta:g}, {eta:g}]^10 around chapter 4's construction "
            f"exact {_WHAT[kind]} decays like n^{EXPONENTS[kind]} (log-log slope over n = {ns[0]} "
            f"… {ns[1]}, doublings; the exponent inside its 95 % interval ± {SLOPE_ALLOWANCE})",
            holds(EXPONENTS[kind], lambda v, e=EXPONENTS[kind]: slope_holds(v, e)),
            "one length: only the step w − u of the decisive unit's phase along t must be O(1/n), "
            "its offset only modulo 2π; jointly both u and w must be O(1/n); the rest enters "
            f"through the slack; allowance {SLOPE_ALLOWANCE} (finite-n bias ≤ 0.05)",
            lambda r, eta=eta, kind=kind: volume_slope(r, eta, kind),
        )
        for cid, eta, kind, ns in VOLUME_CLAIMS
    ),
    *(
        _check(
            cid,
            f"Plain Monte Carlo over the whole box (η = {eta:g}) and the restricted estimate agree "
            "at n = 32 and 64, both kinds (pairs whose 95 % intervals do not overlap)",
            equal(0),
            "the restricted estimate is unbiased when the necessary condition holds; two "
            "independent 95 % intervals miss each other rarely",
            lambda r, eta=eta: plain_disagreements(r, eta),
        )
        for cid, eta in PLAIN_CHECKS
    ),
    _check(
        "ch5.sumsine.relu_nobias_fails_by_2",
        "Every bias-free ReLU network trained with chapter 4's protocol at p = 2 fails at length "
        "1 or 2 (members whose first failing length exceeds 2)",
        equal(0),
        "a bias-free ReLU network is positively homogeneous: (0, 1) and (0, 2) get the same "
        "decision but different parities",
        lambda r: exact_beyond(r, "relu", False, 2),
    ),
    _check(
        "ch5.sumsine.relu_bias_width_bound",
        f"Every biased ReLU network of width h = {WIDTH} fails at some length ≤ h + 2 (members "
        "exact at every length up to h + 2)",
        equal(0),
        "at one length the network is piecewise linear in t with ≤ h kinks, so ≤ h + 1 sign "
        "changes, and Parity at length n needs n",
        lambda r: exact_beyond(r, "relu", True, WIDTH + 2),
    ),
    _c(
        "ch5.sumsine.sine_beyond_relu",
        "Biased sine networks stay exact further than biased ReLU networks: the median first "
        "failing length of the sine members exceeds the largest of the ReLU members",
        holds("sine median > ReLU max", lambda v: v["sine_median"] > v["relu_max"]),
        "the sine unit's phase can follow t with frequency π; a ReLU network's sign changes are "
        "its kinks (seen at seeds 7–8: sine 6 … 27, ReLU 4 … 5)",
        sine_vs_relu,
    ),
    _c(
        "ch5.sumsine.sine_fails_by_38",
        f"No biased sine network learns the construction's zero drift: every one fails at some "
        f"length ≤ 2 × {LONGEST_TRAIN} = {2 * LONGEST_TRAIN}",
        holds(
            f"max first failing length ≤ {2 * LONGEST_TRAIN}",
            lambda v: v <= 2 * LONGEST_TRAIN,
        ),
        "the training lattice (7 lengths ≤ 19) leaves the per-length phase ν and the frequency "
        "offset δ free up to O(1/19); seen at seeds 7–8: failures at 6 … 27",
        lambda r: max(_failure(x, 10**9) for x in _rows(r, "sine", True)),
        **failed("one biased sine network stayed exact far past length 38"),
    ),
    _c(
        "ch5.sumsine.drift_relation",
        "Each sine network right on the whole training lattice (with and without bias) fails first "
        "within a factor 2 of the length at which its fitted linear collective phase leaves (0, π)",
        holds(
            "every network within a factor 2",
            lambda v: v["networks"] > 0 and v["within_factor_2"] == v["networks"],
        ),
        "the sign of (−1)^t (s₀ − s₁) is the side of arg Z; a phase drifting linearly in "
        "(n − t, t) reaches the decision slack at a computable length (expected to fail for "
        "some networks, as in exploratory runs at seeds 7–8)",
        drift_relation,
        **failed(
            "most fail well before the extrapolated length; only one matches within a factor 2"
        ),
    ),
]
