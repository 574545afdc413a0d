"""Chapter 3 predictor: tasks, scored rows, the transfer operator, α_L, selection rules, theory tools."""

import math

import numpy as np
import pytest
import torch

from lengthgen.config import ConfigError
from lengthgen.nn.positional import KernelFamily
from lengthgen.chapters.ch3 import realizability as rz
from lengthgen.chapters.ch3.realizability import (
    TASKS,
    alpha,
    fit_ce,
    fit_min_norm,
    offsets,
    pattern,
    peaked_kernel,
    prop1_search,
    prop2_montecarlo,
    query_rows,
    relative_alpha,
    relative_argmax,
    reverse_sweep,
    scored_rows,
    select,
    simulate,
    targets,
    thm2_random_kernels,
    train_margin,
    transfer,
)


def test_targets_by_hand():
    assert targets("prev", 5).tolist() == [-1, 0, 1, 2, 3]
    assert targets("skip3", 6).tolist() == [-1, -1, -1, 0, 1, 2]
    assert targets("copy", 6).tolist() == [-1, -1, -1, 0, 1, 2]
    assert targets("copy", 7).tolist() == [-1, -1, -1, -1, 0, 1, 2]  # ⌈7/2⌉ = 4
    assert targets("reverse", 6).tolist() == [-1, -1, -1, 2, 1, 0]
    assert (
        targets("reverse", 20)[18] == 1 and targets("reverse", 20)[17] == 2
    )  # offsets 17 and 15 (App. A.5)
    assert targets("first", 4).tolist() == [0, 0, 0, 0]
    assert targets("pos5", 7).tolist() == [-1, -1, -1, -1, -1, 5, 5]
    assert offsets("reverse", 20)[10:].tolist() == [1, 3, 5, 7, 9, 11, 13, 15, 17, 19]


@pytest.mark.parametrize("task", TASKS)
def test_targets_are_causal_and_pattern_matches(task):
    for n in range(1, 25):
        t = targets(task, n)
        q = t >= 0
        assert torch.all(t[q] <= torch.arange(n)[q])
        R = pattern(task, n)
        assert torch.equal(R.sum(1) > 0, q) and torch.equal(R.argmax(1)[q], t[q])


def test_scored_row_sets():
    assert scored_rows("prev", 30, 20).tolist() == list(range(20, 30))
    assert scored_rows("copy", 30, 20).tolist() == list(
        range(20, 30)
    )  # second half [15, 30) ∩ [20, 30)
    assert scored_rows("copy", 50, 20).tolist() == list(
        range(25, 50)
    )  # second half starts above L0
    assert scored_rows("reverse", 60, 20).tolist() == list(range(30, 60))
    assert scored_rows("pos5", 30, 20).tolist() == list(range(20, 30))
    assert query_rows("skip5", 8).tolist() == [5, 6, 7]


def test_nope_all_ties_gives_alpha_zero():
    fam = KernelFamily("nope")
    for task in TASKS:
        sim = simulate(torch.tensor([[3.7]], dtype=torch.float64), fam, task, 40)
        assert sim.alpha == 0.0 and np.all(sim.argmax == -1) and np.all(sim.margin == 0)
    assert (
        alpha("nope", "first", 30, rule="min_norm") == 0.0
        and alpha("nope", "prev", 30, steps=20) == 0.0
    )


def test_relative_kernel_peaked_at_one_realizes_prev_at_every_length():
    for L in (21, 30, 60, 128, 1000):
        assert relative_alpha(peaked_kernel(1, L), "prev", L) == 1.0
    # the same kernel inside the RoPE family: κ(d) = Σ_k cos((d − 1) θ_k)  (Prop. 3A) via the full transfer
    fam = KernelFamily("rope")
    th = torch.as_tensor(
        fam.kappa(torch.cat([torch.ones(16), torch.zeros(16)]).double(), torch.tensor([0.0]))
    )
    coef = torch.cat(
        [torch.cos(torch.tensor(1.0) * _th()), -torch.sin(torch.tensor(1.0) * _th())]
    ).double()
    W = fam.W(coef)
    for L in (30, 60, 128):
        assert simulate(W, fam, "prev", L).alpha == 1.0
    assert th.shape == (1,)


def _th():
    from lengthgen.nn.positional import frequencies

    return frequencies(16, 1e4)


def test_transfer_matches_brute_force():
    fam = KernelFamily("sinusoidal", num_freq=3)
    W = torch.randn(6, 6, dtype=torch.float64, generator=torch.Generator().manual_seed(0))
    Phi = fam.features(9)
    P = transfer(W, Phi)
    for i in range(9):
        for j in range(9):
            assert math.isclose(P[i, j], float(Phi[i] @ W @ Phi[j]), rel_tol=1e-12, abs_tol=1e-12)
    sim = simulate(W, fam, "prev", 9, 4)
    brute = [int(np.argmax(P[i, : i + 1].numpy())) == i - 1 for i in range(4, 9)]
    assert sim.alpha == np.mean(brute)


def test_old_rows_keep_their_logits_under_the_causal_mask():
    """Theorem 1's identity: rows i < L0 see the same logits at every length."""
    fam, W = select("sinusoidal", "prev")
    P20, P60 = transfer(W, fam.features(20)), transfer(W, fam.features(60))
    assert torch.allclose(torch.tril(P60[:20, :20]), torch.tril(P20), rtol=0, atol=1e-12)


def test_clamped_learned_abs_duality():
    fam, W = select("learned_abs", "first")
    assert train_margin(W, fam, "first") > 0
    sim = simulate(W, fam, "first", 128)
    assert sim.alpha == 1.0 and sim.margin.min() > 0
    fam, W = select("learned_abs", "prev")
    sim = simulate(W, fam, "prev", 60)
    assert sim.alpha == 0.0 and np.all(sim.margin <= 0)
    P = transfer(W, fam.features(60))
    for i in range(20, 60):  # the target ties exactly with every key j >= L0 - 1
        assert torch.all(P[i, 19 : i + 1] == P[i, i - 1])


def test_selection_rules_realize_rope_prev_and_fail_alibi():
    fam = KernelFamily("rope")
    W = fit_ce(fam, "prev", steps=200)
    assert train_margin(W, fam, "prev") > 0
    assert simulate(W, fam, "prev", 80).alpha == 1.0
    fa = KernelFamily("alibi")
    Wa = fit_ce(fa, "prev", steps=100)
    assert Wa[1, 0] <= 0 and simulate(Wa, fa, "prev", 40).alpha == 0.0
    Wm = fit_min_norm(KernelFamily("learned_abs"), "first")
    assert torch.allclose(Wm[:, 0], torch.ones(20, dtype=torch.float64))


def test_relative_argmax_tie_rules_and_counterexample():
    k = [1.46, 1.96, 1.80, 6.32] + [0.0] * 6
    arg = relative_argmax(k, 10)
    assert arg[2] == 1 and all(arg[3:] == 3)
    assert relative_argmax([1.0, 1.0, 0.0], 3, tie="fail").tolist() == [0, -1, -1]
    assert relative_argmax([1.0, 1.0, 0.0], 3, tie="low").tolist() == [0, 0, 0]
    assert relative_argmax([1.0, 1.0, 0.0], 3, tie="high").tolist() == [0, 1, 1]


def test_theorem2_examples():
    k = peaked_kernel(30, 2000)
    demand = lambda i, L: 1 if i < 30 else 30
    for L, want in ((40, 0.5), (100, 0.875), (1000, 1 - 10 / 980)):
        assert math.isclose(relative_alpha(k, demand, L), want)
    assert relative_alpha(peaked_kernel(2, 200), "copy", 200) == 0.0
    r = thm2_random_kernels(200, 80)
    assert r["violations"] == {"low": 0, "high": 0}
    assert reverse_sweep(2000) == 0


def test_prop1_and_prop2_small():
    r = prop1_search(n=12, n_random=500, n_adversarial=2, steps=50)
    assert r["interior_strict_argmax"] == 0 and r["best_prev_margin"] <= 1e-9
    mc = prop2_montecarlo(30, n_trials=2000, m=32)
    assert mc["k"] == 10 and mc["unconditional"] <= mc["bound"] + 0.02


def test_bad_inputs():
    with pytest.raises(ConfigError, match="old_key must be True or False"):
        prop2_montecarlo(30, n_trials=10, old_key="False")
    with pytest.raises(ConfigError, match="unknown task 'swap'"):
        targets("swap", 5)
    with pytest.raises(ConfigError, match="unknown encoding"):
        alpha("xpos", "prev", 30)
    with pytest.raises(ConfigError, match="must exceed the training length"):
        scored_rows("prev", 20, 20)
    with pytest.raises(ConfigError, match="must exceed"):
        alpha("rope", "prev", 10)
    with pytest.raises(ConfigError, match="selection rule"):
        select("rope", "prev", "svm")
    with pytest.raises(ValueError):
        transfer(torch.zeros(3, 3), torch.zeros(5, 2))
    with pytest.raises(ValueError):
        relative_argmax([1.0, 2.0], 5)
    with pytest.raises(ConfigError):
        relative_argmax([1.0], 1, tie="random")
    with pytest.raises(ValueError, match="not an untrained key"):
        prop2_montecarlo(30, task="first", n_trials=10)


# --------------------------------------------------------------------------- the exact min-norm rule
def _direct_sinusoidal_alpha(task, L, dps=80):
    """Brute force: W* = Φ⁺RΦ⁺ᵀ with Φ⁺ = Φᵀ(ΦΦᵀ)⁻¹ and T_L = Φ_L W* Φ_Lᵀ, all in mpmath."""
    import mpmath

    with mpmath.workdps(dps):
        th = [mpmath.mpf(rz.BASE) ** (-mpmath.mpf(k) / rz.NUM_FREQ) for k in range(rz.NUM_FREQ)]
        phi = lambda i: [f(i * t) for t in th for f in (mpmath.cos, mpmath.sin)]  # noqa: E731
        P0 = mpmath.matrix([phi(i) for i in range(20)])
        Pp = P0.T * (P0 * P0.T) ** -1
        R = mpmath.matrix(rz.pattern(task, 20).tolist())
        W = Pp * R * Pp.T
        PL = mpmath.matrix([phi(i) for i in range(L)])
        T = PL * W * PL.T
        tg = rz.targets(task, L)
        rows = rz.scored_rows(task, L).tolist()
        hits = 0
        for i in rows:
            vals = [T[i, j] for j in range(i + 1)]
            top = max(vals)
            win = [j for j, v in enumerate(vals) if v == top]
            hits += len(win) == 1 and win[0] == int(tg[i])
        return hits / len(rows)


@pytest.mark.parametrize("task", ["prev", "first", "reverse"])
def test_exact_min_norm_sinusoidal_matches_brute_force(task):
    got = rz.exact_min_norm_alpha("sinusoidal", [task], [30, 40], dps=80)
    assert got[f"sinusoidal/{task}"] == {L: _direct_sinusoidal_alpha(task, L) for L in (30, 40)}
    assert got["_l0_exact"] == {f"sinusoidal/{task}": True}


def test_exact_min_norm_is_stable_in_the_working_precision():
    for enc in rz.EXACT_ENCODINGS:
        a = rz.exact_min_norm_alpha(enc, ["prev", "skip3", "first"], [30, 512], dps=150)
        b = rz.exact_min_norm_alpha(enc, ["prev", "skip3", "first"], [30, 512], dps=250)
        assert a == b, enc


def test_exact_min_norm_spectrum_is_full_rank_and_float64_loses_its_tail():
    s = rz.exact_min_norm_spectrum("sinusoidal")
    assert len(s) == 20 and s[-1] > 1e-30 and s[-1] < 1e-20  # far below float64's reach
    f64 = torch.linalg.svdvals(rz.KernelFamily("sinusoidal").features(20)).tolist()
    assert f64[-1] > 10 * s[-1]  # float64 only sees its noise floor
    assert rz.exact_min_norm_spectrum("rope")[-1] > 1e-70


def test_exact_min_norm_bad_input():
    with pytest.raises(ConfigError, match="valid choices"):
        rz.exact_min_norm_alpha("alibi", ["prev"], [30])
    with pytest.raises(ConfigError, match="task"):
        rz.exact_min_norm_alpha("rope", ["nope"], [30])
    with pytest.raises(ConfigError, match="L0"):
        rz.exact_min_norm_alpha("rope", ["prev"], [10])
    with pytest.raises(ConfigError, match="dps"):
        rz.exact_min_norm_alpha("rope", ["prev"], [30], dps=5)
