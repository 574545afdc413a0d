"""Chapter 5's Parity study: the maths against brute force on small sizes, and bad input."""

import math

import numpy as np
import pytest
import torch

from lengthgen.config import ConfigError
from lengthgen.chapters.ch2 import volume as vo
from lengthgen.chapters.ch5 import parity as pa


def _P(samples=64, seed=3):
    return vo.uniform_box("gen", 3, 1.5, samples, seed)


def test_log_beta_is_the_old_arithmetic():
    """count_level_logits with beta="log" is, bit for bit, the formula chapter 2 used before the
    option existed (so chapter 2's stored cells cannot move)."""
    P, n = _P(), 13
    X = (P["b_Q"] * (P["W_K"][:, :, 1] - P["W_K"][:, :, 0])).sum(-1)
    t = torch.arange(0, n + 1, dtype=torch.float64)
    old = torch.log(t) - torch.log(n - t) + math.log(n) * X[:, None]
    assert torch.equal(vo.count_level_logits(P, n), old)
    assert torch.equal(vo.count_level_logits(P, n, "log"), old)


@pytest.mark.parametrize("beta", ["one", "log"])
def test_count_levels_match_explicit_softmax_over_strings(beta):
    """A_t from the closed form equals a softmax over an explicit string with t ones."""
    P, n = _P(8), 6
    A = vo.count_level_attention(P, n, beta)
    X = vo.score_contrast(P)
    scale = math.log(n) if beta == "log" else 1.0
    v0 = P["W_V"][:, :, 0] + P["b_V"]
    v1 = P["W_V"][:, :, 1] + P["b_V"]
    for t in range(n + 1):
        bits = torch.tensor([1] * t + [0] * (n - t), dtype=torch.float64)
        w = torch.softmax(scale * X[:, None] * bits[None, :], -1)  # scores: X on a one
        brute = v0 + (w * bits).sum(-1, keepdim=True) * (v1 - v0)
        assert torch.allclose(A[:, t], brute, atol=1e-12)


def test_doubling_collapses_without_log_and_shifts_with_it():
    P = _P()
    one = pa.doubling_gap(P, 7, "one")
    log = pa.doubling_gap(P, 7, "log")
    assert one["max_abs_output"] < 1e-13 and one["max_logit_error"] < 1e-13
    assert log["max_logit_error"] < 1e-12 and log["max_abs_output"] > 1e-3


def _brute_phase(omega, rho, grid=3_000):
    return any(
        pa.sine_levels_exact(omega, phi, rho)
        for phi in np.linspace(0, 2 * math.pi, grid, endpoint=False)
    )


@pytest.mark.parametrize("n", [1, 2, 3, 4, 6])
def test_phase_for_agrees_with_a_dense_phase_grid(n):
    rng = np.random.default_rng(n)
    for _ in range(12):
        omega = rng.uniform(0.1, 4 * math.pi)
        rho = pa.averaging_levels(n, rng.normal())
        found = pa.phase_for(omega, rho)
        if found is not None:
            assert pa.sine_levels_exact(omega, found, rho)
        else:
            assert not _brute_phase(omega, rho)


@pytest.mark.parametrize("n", [2, 3, 5, 8])
def test_the_bound_holds_at_equal_spacing(n):
    """At X = 0: a working phase exists just above ω = (n − 1)π and none just below."""
    rho = pa.averaging_levels(n, 0.0)
    assert pa.phase_for((n - 1) * math.pi * 1.001, rho) is not None
    assert pa.phase_for((n - 1) * math.pi * 0.999, rho) is None


def test_averaging_sine_bound_and_search_small():
    assert [pa.averaging_sine_bound(B) for B in (2, 3, 4)] == [3, 6, 11]
    assert pa.largest_exact_n(2.0, 6, omegas=60) == 3


def test_summing_is_exact_and_ignores_the_zeros():
    r = pa.summing_check(500, all_lengths=40)
    assert r["errors"] == 0 and r["errors_all_lengths"] == 0
    assert r["weight_on_zeros"] == 0.0 and r["min_margin"] > 0
    assert r["pairs_all_lengths"] == sum(n + 1 for n in range(1, 41))


@pytest.mark.parametrize("n", [4, 5, 7])
def test_chapter_2s_parity_solution_has_the_least_relu_width(n):
    """Width n − 1: a width-h ReLU network of the count changes sign at most h + 1 times."""
    P = vo.parity_solution(n)
    assert P["W1"].shape[0] == n - 1
    assert bool(vo.parity_sign_changes(P, n)["exact"].all())


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda: pa.doubling_gap(_P(2), 5, "half"), "beta"),
        (lambda: pa.doubling_gap(_P(2), 1, "log"), "n"),
        (lambda: pa.averaging_sine_bound(-1.0), "B"),
        (lambda: pa.search_averaging_sine(1.0, 3), "π/2"),
        (lambda: pa.summing_check(0), "n_max"),
        (lambda: vo.count_level_logits(_P(2), 4, "sqrt"), "beta"),
    ],
)
def test_bad_input(call, match):
    with pytest.raises((ConfigError, ValueError), match=match):
        call()


def test_experiments_plan_is_the_same_at_both_scales():
    from lengthgen.chapters.ch5 import experiments as ex

    full = [c.name for c in ex.cells("full")]
    assert set(ex.SCHEMAS) == set(full) and len(set(full)) == len(full)
    # one declaration: schema(name, scale), full-scale cells only
    assert all(ex.schema(n) is ex.SCHEMAS[n] for n in full)
    assert ex.schema("summing", "smoke") is None and ex.schema("nope") is None
    # the smoke plan is a subset (chapter 5.1's training cells run at full scale only)
    assert set(c.name for c in ex.cells("smoke")) <= set(full)


# --------------------------------------------------------------------------- 5.2 softmax mass
from lengthgen.chapters.ch3 import realizability as rz  # noqa: E402
from lengthgen.chapters.ch5 import mass  # noqa: E402
from lengthgen.nn.positional import KernelFamily  # noqa: E402


def _random_head(encoding, seed=0, L0=8):
    """A random learned absolute table (any W is admissible for it)."""
    fam = KernelFamily(encoding, L0=L0, num_freq=4)
    g = torch.Generator().manual_seed(seed)
    return fam, torch.randn(fam.m, fam.m, generator=g, dtype=torch.float64) * 2


@pytest.mark.parametrize("task", ["prev", "first", "copy", "pos2"])
def test_mass_alignment_against_the_full_softmax(task):
    """α and α^{½} from the chunked pass equal a brute force over the whole causal kernel."""
    L0, L = 8, 23
    fam, W = _random_head("learned_abs", seed=len(task), L0=L0)
    got = mass.mass_alignment(W, fam, task, L, L0, chunk=5)
    T = rz.transfer(W, fam.features(L))
    rows = rz.scored_rows(task, L, L0)
    tgt = rz.targets(task, L)
    sim = rz.simulate(W, fam, task, L, L0)
    assert got["alpha"] == sim.alpha
    for k in mass.SCALES:
        s = mass.logit_scale(k, L, L0)
        half = []
        for i in rows.tolist():
            z = s * T[i, : i + 1]
            half.append(float(torch.softmax(z, 0)[tgt[i]]) > 0.5)
        assert got[f"alpha_half_{k}"] == pytest.approx(np.mean(half), abs=1e-15)


@pytest.mark.parametrize("task", ["first", "pos2", "pos5"])
@pytest.mark.parametrize("scale", ["none", "log"])
def test_clamped_closed_form_against_the_computation(task, scale):
    L0 = 10
    for seed in range(4):
        fam, W = _random_head("learned_abs", seed=seed, L0=L0)
        W[L0 - 1, mass.FIXED_TARGET[task]] += 3.0 + seed  # a target that wins the clamped row
        for L in (11, 40, 300):
            got = mass.mass_alignment(W, fam, task, L, L0)[f"alpha_half_{scale}"]
            closed = mass.clamped_half(W, task, L, L0, mass.logit_scale(scale, L, L0))
            assert abs(got - closed) * (L - L0) <= 1, (seed, L, got, closed)


def test_mass_bad_input():
    fam, W = _random_head("learned_abs")
    with pytest.raises(ConfigError, match="scale"):
        mass.logit_scale("sqrt", 30, 20)
    with pytest.raises(ConfigError, match="fixed target"):
        mass.clamped_margin(W, "prev", 8)
    with pytest.raises(ConfigError, match="fixed target"):
        mass.clamped_half(W, "copy", 30, 8, 1.0)


def test_scaled_tables_reach_their_c_and_keep_the_argmax():
    """mass_scaled multiplies each learned table so that m / log L0 is the requested c'; a
    positive factor keeps α_L (the argmax) of the fitted table."""
    from lengthgen.chapters.ch5 import experiments as ex

    out = ex.mass_scaled(targets=[0.5, 2.0], lengths=[30])
    assert len(out["rows"]) == 2 * len(mass.FIXED_TARGET)
    fitted = {r["task"]: r for r in ex.mass_clamped(lengths=[30])["rows"]}
    for r in out["rows"]:
        assert r["c"] == pytest.approx(0.5 if r["c"] < 1 else 2.0, rel=1e-12)
        assert r["alpha"] == 1.0  # the learned tables' argmax is right on these tasks
        assert r["c_fit"] == pytest.approx(fitted[r["task"]]["c"], rel=1e-15)
        assert abs(r["alpha_half_log"] - r["closed_form_log"]) * (30 - 20) <= 1
    with pytest.raises(ConfigError, match="c'"):
        ex.mass_scaled(targets=[0.0])
    with pytest.raises(ConfigError, match="c'"):
        ex.mass_scaled(targets=[float("nan")])
