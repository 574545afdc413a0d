"""Chapter 2's zero and whole-box volumes (lengthgen.chapters.ch2.volume) against brute force."""

import math

import pytest
import torch

from lengthgen.chapters.ch2 import claims as ch2_claims
from lengthgen.chapters.ch2 import volume as vo
from lengthgen.chapters.ch2.volume import count_level_outputs
from lengthgen.nn.tasks import all_strings, label


def _with_b21(P, b21):
    Q = dict(P)
    Q["b2"] = P["b2"].clone()
    Q["b2"][:, 1] = b21
    return Q


@pytest.mark.parametrize(
    "variant,task", [("gen", "majority"), ("sin", "majority"), ("sin", "first")]
)
def test_bias_fiber_is_the_exact_interval(variant, task):
    """Inside the fiber (its midpoint) every string is strictly correct, outside it not."""
    n = 5
    P = vo.uniform_box(variant, 8, 1.0, 3000, seed=3)
    S = all_strings(n)
    y = label(task, S, None)
    phi = vo.bias_fiber(P, variant, S, None, y)
    inside = phi > 0
    assert inside.any()
    Hw = None
    # the interval's midpoint, recomputed from its ends
    from lengthgen.chapters.ch2.single_layer import encode, forward

    out = forward(variant, P, encode(S, fixed=0))
    Hw = out[..., 1] - out[..., 0] - (P["b2"][:, 1] - P["b2"][:, 0])[:, None]
    lo = P["b2"][:, 0] - torch.where(y.bool(), Hw, torch.inf).min(-1).values
    hi = P["b2"][:, 0] - torch.where(y.bool(), -torch.inf, Hw).max(-1).values
    mid = (lo.clamp(min=-1) + hi.clamp(max=1)) / 2
    sub = {k: v[inside] for k, v in _with_b21(P, mid).items()}
    assert vo.exactness(sub, variant, task, n, method="exhaustive").all()
    # a point with an empty fiber is not exact at any b₂,₁ in the box
    out_pts = {k: v[~inside][:200] for k, v in P.items()}
    for b in (-0.9, 0.0, 0.9):
        dec = vo.exactness(
            _with_b21(out_pts, torch.full((len(out_pts["b2"]),), b, dtype=torch.float64)),
            variant,
            task,
            n,
            method="exhaustive",
        ).decision
        assert not any(d is True for d in dec)


def test_sin_majority_structural_agrees_with_enumeration():
    """Certified decisions of the A_sin Majority checker equal enumeration, True ones included."""
    g = torch.Generator().manual_seed(5)
    for n in (7, 11, 13):
        c = vo.sin_center(n)
        P = {
            k: v + 0.02 * torch.randn(400, *v.shape, generator=g, dtype=torch.float64)
            for k, v in c.items()
        }
        dec, _ = vo.sin_majority_structural(P, n)
        ex = vo._exhaustive(P, "sin", "majority", n) > 0
        decided = [i for i in range(len(dec)) if dec[i] is not None]
        assert len(decided) > 300
        assert sum(dec[i] is True for i in decided) > 20
        assert sum(dec[i] is False for i in decided) > 20
        assert all(dec[i] == bool(ex[i]) for i in decided)


def test_sin_centers_exact_by_enumeration():
    for n in (11, 13, 15):
        assert vo.exactness(vo.sin_center(n), "sin", "majority", n, method="exhaustive").all()


def test_majority_fiber_prefilter_changes_nothing():
    P = vo.uniform_box("gen", 8, 1.0, 4000, seed=9)
    n = 51
    y = (torch.arange(n + 1) >= (n + 1) // 2).long()
    full = vo.fiber_of(P, count_level_outputs(P, n), y, 1.0)
    assert (full > 0).sum() > 10
    assert torch.equal(vo._majority_fiber(P, n), full)


def test_eq87_bound_and_estimates_are_deterministic():
    assert vo.eq87_bound(101) == pytest.approx(16 * 8 * math.atanh(1 / 101) / math.log(101))
    a = vo.whole_box_majority(M=500, ns=(11, 21, 41))
    assert a == vo.whole_box_majority(M=500, ns=(11, 21, 41))
    assert all(r["lo"] <= r["mean"] <= r["hi"] or r["hits"] == 0 for r in a.values())


def test_bad_inputs():
    with pytest.raises(ValueError, match="odd"):
        vo.sin_center(10)
    with pytest.raises(ValueError, match="Majority only"):
        vo.exactness(vo.uniform_box("sin", 8, 1.0, 2), "sin", "first", 20, method="structural")


def test_each_claim_can_fail():
    """The predicates reject the values a refutation would produce."""
    C = {c.id: c for c in ch2_claims.NESV}
    sf = {k: {"mean": m} for k, m in (("7", 1e-3), ("45", 1e-4), ("711", 2e-4))}
    pz = C["ch2.nesv.positional_tasks_gen_sin"].holds
    assert pz({"points": 10, "pair_gap": 0.0, "sin_first": {**sf, "711": {"mean": 1e-5}}})
    assert not pz({"points": 10, "pair_gap": 1e-12, "sin_first": {**sf, "711": {"mean": 1e-5}}})
    assert not pz({"points": 10, "pair_gap": 0.0, "sin_first": sf})  # no tenfold fall
    par = {m: {"points": 5, "exact": 0, "max_sign_changes": 9} for m in ("pos", "norm")}
    hp = C["ch2.nesv.parity_other_models"].holds
    assert hp({**par, "sin": {"points": 5, "exact": 0}})
    assert not hp({**par, "sin": {"points": 5, "exact": 1}})
    assert not hp(
        {
            **par,
            "pos": {"points": 5, "exact": 0, "max_sign_changes": 10},
            "sin": {"points": 5, "exact": 0},
        }
    )
    wb = C["ch2.nesv.whole_box"].holds
    row = {"lo": 0.01, "bound": 0.02}
    assert wb({str(n): row for n in vo.WHOLE_NS})
    assert not wb({**{str(n): row for n in vo.WHOLE_NS}, "3001": {"lo": 0.03, "bound": 0.02}})
    ms = C["ch2.nesv.majority_sin"]
    assert ms.check == "value" and ms.paper_value == -3 and ms.tolerance == 0.3


def test_near_chance_cells_cannot_exclude_chance():
    """The reason the three Table 1 accuracy cells stay unattempted: each paper value lies within
    the 95 % binomial half-width of one 1,000-example bank at 50 % (3.1 points)."""
    from lengthgen.chapters.ch2 import paper

    half = 100 * 1.96 * math.sqrt(0.25 / 1000)
    assert round(half, 1) == 3.1
    for cell in (("first", "gen"), ("index", "gen"), ("index", "sin")):
        assert abs(paper.PAPER_T1[cell] - 50) < half
