"""Chapter 5, log scaling inside the volume theory: chapter 2's ``beta`` option (β_n = log n or 1).

With ``beta="log"`` everything is chapter 2's computation bit for bit (checked against stored
chapter-2 cells and explicit calls); with ``beta="one"`` the models, the exactness checker, the
windows and the closed forms are checked against brute force on small n."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from lengthgen.chapters.ch2 import experiments as ex
from lengthgen.chapters.ch2 import single_layer as sl
from lengthgen.chapters.ch2 import volume as vo
from lengthgen.config import ConfigError

DT = torch.float64


def _params(variant, seeds=(1, 2, 3), scale=0.5, beta="log"):
    m = sl.SingleLayer(variant, 4, max_lengths=11, beta=beta)
    P = m.init(list(seeds))
    g = torch.Generator().manual_seed(7)
    for k in P:
        if P[k].is_floating_point():
            P[k] = P[k] + scale * torch.randn(P[k].shape, generator=g, dtype=DT)
    return m, P


def _inputs(variant, n, B=30, E=3):
    g = torch.Generator().manual_seed(11)
    bits = torch.randint(0, 2, (E, B, n), generator=g)
    ks = torch.randint(1, n + 1, (E, B), generator=g)
    return sl.encode(bits, ks if variant in ("pos", "norm") else None)


# --------------------------------------------------------------------------- β = log n: unchanged
@pytest.mark.parametrize("variant", sl.VARIANTS)
def test_log_is_the_default_bit_for_bit(variant):
    m, P = _params(variant)
    x = _inputs(variant, 9)
    a = sl.forward("pos" if variant == "norm" else variant, P, x)
    b = sl.forward("pos" if variant == "norm" else variant, P, x, beta="log")
    assert torch.equal(a, b)
    assert "_beta_one" not in P  # a plain model carries no flag


def test_log_path_is_the_default_path_bit_for_bit():
    """Chapter 2's volume scans with beta="log" spelled out equal the default call bit for bit,
    in this process (the stored chapter-2 cells are compared with the ledger, not here: a live
    bisection or Monte Carlo decision may round differently on another CPU)."""
    c = vo.center("pos", "index", 8, eta=ex.VOLUME_ETA)
    d = vo.direction("pos", "ell", c)
    n = ex.VOLUME_NS[0]
    a = vo.admissible_width(c, d, "pos", "index", n)["width"]
    b = vo.admissible_width(c, d, "pos", "index", n, beta="log")["width"]
    assert a == b
    kw = dict(
        coords=("a", "b", "r", "s"),
        half_width=ex.VOLUME_HALF_WIDTH,
        samples=2_000,
        seed=n,
        eta=ex.VOLUME_ETA,
        h=ex.H,
    )
    m1 = vo.mc_fraction("pos", "index", n, **kw)
    m2 = vo.mc_fraction("pos", "index", n, beta="log", **kw)
    assert m1["exact"] == m2["exact"] and m1["fraction"] == m2["fraction"]


# --------------------------------------------------------------------------- β = 1: brute force
def _rescaled(variant, P, s):
    """A point whose scores are ``s`` times those of ``P`` (the value/classifier untouched)."""
    Q = {k: v.clone() for k, v in P.items()}
    if sl.FAMILIES[variant] == "positional":
        Q["r"], Q["s"] = P["r"] * s, P["s"] * s
    else:
        Q["W_K"], Q["b_K"] = P["W_K"] * s, P["b_K"] * s
    return Q


@pytest.mark.parametrize("variant", sl.VARIANTS)
@pytest.mark.parametrize("n", [3, 8])
def test_one_equals_log_with_scores_divided_by_log_n(variant, n):
    """β_n = 1 at length n is β_n = log n applied to scores divided by log n."""
    m, P = _params(variant)
    x = _inputs(variant, n)
    v = "pos" if variant == "norm" else variant
    one = sl.forward(v, P, x, beta="one")
    log = sl.forward(v, _rescaled(variant, P, 1 / math.log(n)), x)
    assert torch.allclose(one, log, rtol=1e-11, atol=1e-12)
    assert not torch.allclose(one, sl.forward(v, P, x), atol=1e-6)


def test_one_positional_forward_against_explicit_softmax():
    """A_pos with β_n = 1: the explicit softmax of g_j over the n positions, then value and head."""
    m, P = _params("pos", seeds=(4,))
    n = 6
    x = _inputs("pos", n, B=20, E=1)
    out = sl.forward("pos", P, x, beta="one")
    k = x[0, :, -1].to(DT)
    g = sl.positional_scores(P, k[None], n, False)[0]  # [B, n]
    alpha = torch.softmax(g, -1)
    p = (alpha * x[0, :, :n].to(DT)).sum(-1)
    u0 = P["C_V"][0, :, 0] + P["b_V"][0]
    u1 = P["C_V"][0, :, 1] + P["b_V"][0]
    A = u0 + p[:, None] * (u1 - u0)
    hid = torch.relu(A @ P["W1"][0].T + P["b1"][0])
    y = hid @ P["W2"][0].T + P["b2"][0]
    assert torch.allclose(out[0], y, rtol=1e-12, atol=1e-13)


def test_per_member_flag_matches_separate_models():
    """A mixed ensemble (β = log n and 1 per member) gives each member its own scale."""
    m, P = _params("gen", seeds=(1, 2), beta=["log", "one"])
    assert P["_beta_one"].tolist() == [False, True]
    x = _inputs("gen", 7, E=2)
    mixed = m.forward(P, x)
    plain = {k: v for k, v in P.items() if k != "_beta_one"}
    assert torch.equal(mixed[0], sl.forward("gen", plain, x)[0])
    assert torch.equal(mixed[1], sl.forward("gen", plain, x, beta="one")[1])


@pytest.mark.parametrize("variant,task", [("pos", "index"), ("norm", "index"), ("pos", "first")])
def test_one_structural_exactness_agrees_with_exhaustive(variant, task):
    c = vo.center(variant, task, 8, eta=1.0)
    g = torch.Generator().manual_seed(3)
    P = {
        k: v.unsqueeze(0) + 0.15 * torch.randn(40, *v.shape, generator=g, dtype=DT)
        for k, v in c.items()
    }
    for n in (3, 6):
        s = vo.exactness(P, variant, task, n, method="structural", beta="one")
        e = vo.exactness(P, variant, task, n, method="exhaustive", beta="one")
        for ds, de in zip(s.decision, e.decision):
            if ds is not None:
                assert ds == de
        assert any(d is True for d in e.decision) and any(d is False for d in e.decision)


def test_one_diagonal_attention_and_profile_explicit():
    c = vo.center("pos", "index", 8, eta=0.7)
    n = 9
    g, a = vo.attention_profile(c, "pos", n, 4, beta="one")
    assert np.allclose(a, np.exp(g) / np.exp(g).sum(), rtol=1e-13)
    diag = vo.diagonal_attention(vo._batch(c), "pos", n, range(1, n + 1), beta="one")
    want = [vo.attention_profile(c, "pos", n, k, beta="one")[1][k - 1] for k in range(1, n + 1)]
    assert np.allclose(diag[0].numpy(), want, rtol=1e-12)


def test_one_gen_exactness_by_brute_force_on_strings():
    """A_gen Majority with β_n = 1: the count-level check against every string of length 7."""
    P = vo.uniform_box("gen", 4, 1.0, 300, seed=5)
    s = vo.exactness(P, "gen", "majority", 7, method="structural", beta="one")
    e = vo.exactness(P, "gen", "majority", 7, method="exhaustive", beta="one")
    assert list(s.decision) == list(e.decision)


def test_majority_area_closed_form_both_scales():
    c = vo.center("gen", "majority", 8, eta=0.5)
    for n in (5, 21):
        for beta, b in (("log", math.log(n)), ("one", 1.0)):
            X = np.linspace(-40 / b, 40 / b, 4001)
            got = vo.majority_bias_area(c, n, X, beta=beta)["area"]
            want = vo.majority_area_closed_form(0.5, n, beta)
            assert abs(got - want) <= 1e-9 * want
    assert math.isclose(
        vo.majority_area_closed_form(1.0, 21, "one") / vo.majority_area_closed_form(1.0, 21, "log"),
        math.log(21),
        rel_tol=1e-14,
    )


@pytest.mark.parametrize("task", ["first", "index"])
def test_center_eta_threshold_by_brute_force(task):
    """Below η* the β_n = 1 center fails at some n; above it, it is exact at every n checked."""
    from lengthgen.chapters.ch5 import volume_beta as vb

    eta = vo.center_exact_eta(task)
    # Poisson summation (chapter 5), with its next-order term
    assert abs(eta / vb.ETA_STAR[task] - 1) < vb.ETA_STAR_TOL
    for e, ok in ((eta * 1.01, True), (eta * 0.99, False)):
        c = vo.center("pos", task, 8, eta=e)
        res = [
            vo.exactness(c, "pos", task, n, method="exhaustive", beta="one").all()
            for n in range(2, 13)
        ]
        assert all(res) if ok else not all(res)


def test_training_both_scales_pairs_log_members_with_a_plain_run():
    """beta=["log", "one"]: the log members are the plain run's members (same init, batches)."""
    cfg = ex.experiment_config(
        "majority_gen",
        seeds=[2000, 2001],
        Ns=[5],
        steps=60,
        every=30,
        val_size=50,
        test_size=50,
        batch=16,
    )
    plain = ex.train_experiment(**cfg, progress=False)
    both = ex.train_experiment(**cfg, progress=False, beta=["log", "one"])
    log_rows = [m for m in both["members"] if m["beta"] == "log"]
    assert len(both["members"]) == 2 * len(plain["members"])
    for a, b in zip(plain["members"], log_rows):
        b = {k: v for k, v in b.items() if k != "beta"}
        assert a["seed"] == b["seed"] and a["N"] == b["N"]
        assert a["test"] == b["test"]
        assert math.isclose(a["best_val_loss"], b["best_val_loss"], rel_tol=1e-12)


# --------------------------------------------------------------------------- bad input, named
@pytest.mark.parametrize(
    "call",
    [
        lambda: sl.forward("gen", _params("gen")[1], _inputs("gen", 5), beta="sqrt"),
        lambda: sl.SingleLayer("pos", 4, beta="half"),
        lambda: sl.SingleLayer("pos", 4, beta=[]),
        lambda: vo.exactness(vo.center("pos", "first", 4), "pos", "first", 5, beta=2),
        lambda: vo.mc_fraction(
            "pos", "first", 4, coords=("a",), half_width=0.1, samples=4, beta="ln"
        ),
        lambda: vo.majority_area_closed_form(1.0, 5, "e"),
        lambda: vo.attention_profile(vo.center("pos", "index", 4), "pos", 5, 2, "x"),
    ],
)
def test_bad_beta_is_named(call):
    with pytest.raises(ValueError, match="beta"):
        call()


def test_bad_beta_combinations_are_named():
    m, P = _params("pos", seeds=(1, 2), beta=["one", "log"])
    with pytest.raises(ValueError, match="_beta_one"):
        sl.forward("pos", P, _inputs("pos", 5, E=2), beta="one")
    with pytest.raises(ValueError, match="2 members"):
        sl.SingleLayer("gen", 4, beta=["one"]).init([1, 2])
    cfg = ex.experiment_config(
        "majority_gen",
        seeds=[2000],
        Ns=[5],
        steps=2,
        every=1,
        val_size=5,
        test_size=5,
        batch=2,
    )
    for bad in (["log", "log"], [], "natural"):
        with pytest.raises((ConfigError, ValueError), match="beta"):
            ex.train_experiment(**cfg, progress=False, beta=bad)
    with pytest.raises(ConfigError, match="beta"):
        ex.volume_scans(ns=[8], combos=[], mc_ns={}, beta="log2")


# --------------------------------------------------------------------------- the section's cells
def test_plan_and_schemas():
    from lengthgen.chapters.ch5 import volume_beta as vb
    from lengthgen.chapters.ch5.experiments import schema as ch5_schema

    names = [c.name for c in vb.cells("full")]
    first = [
        "beta_closed_forms",
        "beta_volume_log",
        "beta_volume_one",
        "beta_majority_box",
    ]
    assert names[:4] == first
    assert all(ch5_schema(n) is not None for n in names)
    stored = {"beta_train_" + e for exps in vb.TRAIN_RUNS.values() for e in exps}
    assert stored <= set(names)
    joint = [f"joint_{k.replace('/', '_')}" for k in vb.JOINT]
    assert names[4:7] == joint
    assert [c.name for c in vb.cells("smoke", training=False)] == names[:7]
    # the full-scale training cells are chapter 2's cells with both scales
    kw = vb.train_kwargs("majority_gen", "full")
    assert kw == ex.experiment_config(
        "majority_gen",
        Ns=ex.paper.STORED_NS["majority_gen"],
        steps=ex.paper.STORED_STEP_CAPS["majority_gen"],
        **ex.FULL,
    )


def test_closed_forms_small():
    from lengthgen.chapters.ch5 import volume_beta as vb

    out = vb.closed_forms(area_ns=(5, 11), center_ns=12, paper_eta_ns=6, majority_n_max=21)
    for r in out["area"]:
        assert r["rel_err_one"] < 1e-9 and r["rel_err_log"] < 1e-9
        assert abs(r["ratio"] / math.log(r["n"]) - 1) < 1e-9
    assert all(r["exact_above"] and r["fails_below"] for r in out["center_one"])
    assert [r["paper_eta_largest_n"] for r in out["center_one"]] == [2, 2, 2, 2]
    assert out["majority_center_failures"] == 0


def test_window_slope_of_constant_widths_is_exactly_zero():
    """A constant window gives slope 0 exactly, not a build-dependent rounding residue."""
    from lengthgen.chapters.ch5 import volume_beta as vb

    class R:
        def cell(self, name):
            return {"widths": {"k": {"n": [8, 16, 32, 64], "width": [0.3] * 4}}}

    r = R()
    got = vb.window_slope(r, "one", "k")
    assert got == 0.0 and str(got) == "0.0"


def test_majority_box_counts_the_structural_test_on_the_same_points():
    """majority_box: per n, the exact counts of both scales are chapter 2's structural test on the
    same sampled points (recomputed here point by point at n = 7 against the exhaustive check),
    deterministic, with bad input refused in one line."""
    from lengthgen.chapters.ch5 import volume_beta as vb

    a = vb.majority_box(ns=[7, 9], samples=[3000, 2000], chunk=1000)
    assert a == vb.majority_box(ns=[7, 9], samples=[3000, 2000], chunk=1000)
    r7 = a["rows"][0]
    hits = {"log": 0, "one": 0}
    for j in range(3):
        P = vo.uniform_box("gen", 8, 1.0, 1000, 5 + j)
        for beta in hits:
            ex_ = vo.exactness(P, "gen", "majority", 7, method="exhaustive", beta=beta)
            hits[beta] += int((ex_.decision == True).sum())  # noqa: E712
    assert (r7["exact_log"], r7["exact_one"]) == (hits["log"], hits["one"])
    assert r7["undecided"] == 0
    assert r7["lo_one"] <= r7["fraction_one"] <= r7["hi_one"]
    with pytest.raises(ConfigError, match="same length"):
        vb.majority_box(ns=[7, 9], samples=[10])
    with pytest.raises(ConfigError, match="n"):
        vb.majority_box(ns=[2], samples=[10])


def test_paired_accuracy_pairs_each_log_member_with_its_beta_one_member():
    from lengthgen.chapters.ch5 import volume_beta as vb

    def m(beta, N, seed, acc, variant="gen"):
        return {
            "beta": beta,
            "N": N,
            "seed": seed,
            "variant": variant,
            "test": {str(10 * N + 1): acc},
        }

    members = [
        m("one", 5, 2, 0.5),
        m("log", 5, 2, 0.75),
        m("log", 3, 1, 0.25),
        m("one", 3, 1, 1.0),
        m("one", 3, 7, 0.0),
        m("log", 3, 1, 0.0, "sin"),
    ]
    assert vb.paired_accuracy(members, "gen") == {
        (3, 1): (100.0, 25.0),
        (5, 2): (50.0, 75.0),
    }
    assert list(vb.paired_accuracy(members, "gen")) == [(3, 1), (5, 2)]


@pytest.mark.parametrize("variant,task,N", [("gen", "majority", 5), ("norm", "index", 3)])
def test_joint_box_is_exactness_at_both_lengths(variant, task, N):
    """The joint counts (tested at 10N+1 only where exact at N) equal the exact-at-both counts of
    chapter 2's test run at both lengths on every point; the nesting leaves one_not_log at 0."""
    from lengthgen.chapters.ch5 import volume_beta as vb

    out = vb.joint_box(variant, task, [N], [300], seed=3, chunk=300)["rows"][0]
    P = vb._joint_points(variant, task, 300, 3, 8, 1.0, 0.1)
    both = {}
    for beta in ("log", "one"):
        ok = [
            np.equal(
                vo.exactness(P, variant, task, n, method="structural", beta=beta).decision,
                True,
            ).astype(bool)
            for n in (N, 10 * N + 1)
        ]
        both[beta] = ok[0] & ok[1]
        assert out[f"exact_{beta}"] == int(both[beta].sum())
        assert out[f"exact_N_{beta}"] == int(ok[0].sum())
    assert out["one_not_log"] == int((both["one"] & ~both["log"]).sum())
    if variant != "gen":
        assert out["one_not_log"] == 0


def test_joint_rates_are_the_derived_closed_forms():
    """The predicted joint areas: with β_n = 1 the single-length area at 10N+1; with log n the
    overlap of two intervals whose centres part by X log(L/N), integrated over X by quadrature."""
    from lengthgen.chapters.ch5 import volume_beta as vb

    for N in (5, 11, 41):
        L = 10 * N + 1
        a, b = 2 * math.atanh(1 / N), 2 * math.atanh(1 / L)
        X = np.linspace(-3 * (a + b), 3 * (a + b), 200_001)
        D = X * math.log(L / N)
        overlap = np.clip(np.minimum(a, D + b) - np.maximum(-a, D - b), 0, None)
        area = np.trapezoid(overlap, X) if hasattr(np, "trapezoid") else np.trapz(overlap, X)
        assert area == pytest.approx(16 * vb.joint_rate(N, "log"), rel=1e-6)  # 4ab
        assert vb.joint_rate(N, "one") == math.atanh(1 / L)


def test_the_pages_n_max_numbers_are_the_bounds():
    """The page's ⌈4B²/π⌉ (A_gen) and ⌈2B²/π⌉ (the scalar head) for B = 2, 4, 8."""
    from pathlib import Path

    page = (Path(__file__).parents[1] / "notebooks" / "05_across_the_papers.md").read_text()
    page = " ".join(page.split())
    gen, scalar = ([math.ceil(k * B * B / math.pi) for B in (2, 4, 8)] for k in (4, 2))
    assert f"({gen[0]}, {gen[1]} and {gen[2]} for $B$ = 2, 4, 8" in page
    assert f"against {scalar[0]}, {scalar[1]} and {scalar[2]} for the scalar head" in page
