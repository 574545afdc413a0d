"""Chapter 2 exactness checker, centers and volume tools (Zhu & Chiang 2026) against brute force."""

import math

import pytest
import torch

from lengthgen.chapters.ch2 import single_layer as sl
from lengthgen.chapters.ch2 import volume as vo


def _jitter(base, P, scale, g):
    return {
        k: base[k].unsqueeze(0).expand(P, *base[k].shape)
        + scale * torch.randn(P, *base[k].shape, generator=g, dtype=torch.float64)
        for k in base
    }


@pytest.mark.parametrize(
    "variant,task",
    [
        ("pos", "first"),
        ("pos", "index"),
        ("norm", "first"),
        ("norm", "index"),
        ("gen", "majority"),
        ("gen", "parity"),
        ("gen", "first"),
        ("gen", "index"),
    ],
)
def test_structural_agrees_with_brute_force(variant, task):
    """Structural decisions equal exhaustive enumeration (n ≤ 12) on random points near and far from the centers."""
    g = torch.Generator().manual_seed(1)
    base = vo.center(variant, "majority" if variant == "gen" else task, 8, eta=1.0)
    ns = (
        [1, 3, 5, 7, 9, 11]
        if task in ("majority",)
        else [1, 2, 3, 6, 12]
        if task == "first" or variant == "gen"
        else [1, 2, 4, 7, 10]
    )
    seen = set()
    for scale in (0.05, 0.3, 1.5):
        P = _jitter(base, 24 if task != "index" else 8, scale, g)
        for n in ns:
            s = vo.exactness(P, variant, task, n, method="structural").decision
            e = vo.exactness(P, variant, task, n, method="exhaustive").decision
            for a, b in zip(s, e):
                assert a is None or a == b
                seen.add(b)
    if not (variant == "gen" and task in ("first", "index")):
        assert seen == {True, False}


def test_index_brute_force_n12():
    g = torch.Generator().manual_seed(2)
    P = _jitter(vo.center("norm", "index", 8, eta=1.0), 2, 0.05, g)
    s = vo.exactness(P, "norm", "index", 12, method="structural").decision
    e = vo.exactness(P, "norm", "index", 12, method="exhaustive").decision
    assert all(a is None or a == b for a, b in zip(s, e))


def test_centers_exact_eta_one_and_not_at_paper_eta():
    for v in ("pos", "norm"):
        for task in ("first", "index"):
            c = vo.center(v, task, 8, eta=1.0)
            assert vo.exactness(c, v, task, 300).all()
            c16 = vo.center(v, task, 8)  # η = min(B/16, 1/16) with B = 1
            assert vo.exactness(c16, v, task, 50).decision[0] is False
    assert vo.exactness(vo.center("gen", "majority", 8), "gen", "majority", 501).all()
    assert vo.paper_eta(1.0) == 1 / 16 and vo.paper_eta(0.5) == 0.5 / 16


def test_center_threshold_matches_theta_function():
    # Index: 1 + 2Σ x^{d²} = 2 at x ≈ 0.4560; First: Σ_{d≥1} x^{d²} = 1 at x ≈ 0.7049 (x = n^{-η²})
    for task, x_star in (("index", 0.45604), ("first", 0.70491)):
        logn = vo.center_exact_threshold(task, 1 / 16)
        assert math.isclose(math.exp(-logn / 256), x_star, rel_tol=2e-3)


def test_score_gap_expansion():
    g = torch.Generator().manual_seed(4)
    c = {
        k: v + 0.2 * torch.randn(v.shape, generator=g, dtype=torch.float64)
        for k, v in vo.center("pos", "index", 4, eta=1.0).items()
    }
    for v in ("pos", "norm"):
        for k, d in ((3, 2), (10, -4), (7, 1)):
            s, _ = vo.attention_profile(c, v, 20, k)
            assert math.isclose(
                vo.score_gap(c, k, d, v),
                s[k + d - 1] - s[k - 1],
                rel_tol=1e-9,
                abs_tol=1e-9,
            )


def test_admissible_widths_scale():
    c = vo.center("pos", "index", 8, eta=1.0)
    w = [
        vo.admissible_width(c, vo.direction("pos", "chi", c), "pos", "index", n, grid=16)["width"]
        for n in (16, 32)
    ]
    assert 3.0 < w[0] / w[1] < 5.0  # ≈ 4: χ-range ∝ n^{-2}


def test_norm_windows_with_the_papers_map():
    """A_norm with F(v) = v/√(1+‖v‖²) (App. B.1): ℓ̂ is confined to an O(1/n) window, χ̂ at fixed
    ℓ̂ is not (one side closes at a width that does not shrink, the other stays open)."""
    c = vo.center("norm", "index", 8, eta=1.0)
    ell = [
        vo.admissible_width(c, vo.direction("norm", "ell", c), "norm", "index", n, grid=16)["width"]
        for n in (16, 32)
    ]
    assert 1.7 < ell[0] / ell[1] < 2.3  # ≈ 2: ℓ̂-range ∝ n^{-1}
    free = [
        vo.admissible_width(
            c, vo.direction("norm", "chi_fixed_ell_hat", c), "norm", "index", n, grid=16
        )
        for n in (16, 64)
    ]
    assert all(r["plus_capped"] != r["minus_capped"] for r in free)
    assert 0.8 < free[0]["finite_width"] / free[1]["finite_width"] < 1.25
    assert free[1]["finite_width"] > 10 * ell[1]


def test_parity_solution_and_sign_changes():
    for n in (4, 7):
        p = vo.parity_solution(n)
        assert vo.exactness(p, "gen", "parity", n, method="exhaustive").all()
        sc = vo.parity_sign_changes(p, n)
        assert sc["sign_changes"][0] == n and sc["kinks"][0] == n - 1
    g = torch.Generator().manual_seed(5)
    P = _jitter(vo.center("gen", "majority", 3, eta=1.0), 200, 2.0, g)
    sc = vo.parity_sign_changes(P, 9)
    assert (
        (sc["sign_changes"] <= sc["kinks"] + 1).all()
        and (sc["kinks"] <= 3).all()
        and not sc["exact"].any()
    )


def test_mc_fraction_counts():
    r = vo.mc_fraction(
        "pos",
        "first",
        8,
        coords=("a", "b", "r", "s"),
        half_width=0.1,
        samples=500,
        seed=0,
    )
    assert r["exact"] + r["undecided"] <= 500 and r["lo"] <= r["fraction"] <= r["hi"]


def test_bad_inputs():
    c = vo.center("pos", "index", 8, eta=1.0)
    with pytest.raises(ValueError, match="odd"):
        vo.exactness(vo.center("gen", "majority", 8), "gen", "majority", 10)
    with pytest.raises(ValueError, match=r"\[1, 5\]"):
        vo.attention_profile(c, "pos", 5, 6)
    with pytest.raises(ValueError, match=r"\[1, 5\]"):
        vo.attention_profile(c, "pos", 5, 0)
    with pytest.raises(ValueError, match="h must be an integer >= 2"):
        vo.center("pos", "index", 1)
    with pytest.raises(ValueError, match="not analysed"):
        vo.exactness(c, "pos", "majority", 5)
    with pytest.raises(ValueError, match="unknown method"):
        vo.exactness(c, "pos", "index", 5, method="guess")
    with pytest.raises(ValueError, match="too large"):
        vo.exactness(c, "pos", "index", 20, method="exhaustive")
    with pytest.raises(ValueError, match="no center"):
        vo.center("gen", "parity")
    with pytest.raises(ValueError, match="> 0"):
        vo.paper_eta(0.0)
    with pytest.raises(ValueError, match="n must be an integer >= 4"):
        vo.parity_solution(3)


def test_score_contrast_lemmas_6_7():
    """The score contrast of A_gen (eq. 70) under the uniform box: X is the model's own score of a
    one minus that of a zero; its peak density is 5/(6B²) (quadrature, scaling as B⁻², Lemma 6's
    bound B⁻²), matched by a histogram; Lemma 7's mass near 0 is far above 9ε/(512B²)."""
    import numpy as np

    P = vo.uniform_box("gen", 8, 1.5, 7, seed=3)
    assert set(P) == set(sl.param_shapes("gen", 8))
    assert all(v.shape[0] == 7 and v.abs().max() <= 1.5 for v in P.values())
    q, WK, bK = P["b_Q"], P["W_K"], P["b_K"]
    s1 = (q * (WK[:, :, 1] + bK)).sum(-1)  # the score of token e₁, as in forward()
    s0 = (q * (WK[:, :, 0] + bK)).sum(-1)
    # two float64 sums of d products and a difference, against score_contrast's own sum: each
    # rounds by at most (d + 3)·eps times the sum of the magnitudes of its terms, per point
    eps = torch.finfo(torch.float64).eps
    mag = (q.abs() * (WK[:, :, 0].abs() + WK[:, :, 1].abs() + bK.abs())).sum(-1)
    tol = (q.shape[-1] + 3) * eps * mag
    assert ((vo.score_contrast(P) - (s1 - s0)).abs() <= tol).all()
    # one unbatched point: qᵀW_K(e₁ − e₀) written out
    one = {k: v[0] for k, v in P.items()}
    x = sum(float(q[0, i]) * float(WK[0, i, 1] - WK[0, i, 0]) for i in range(2))
    bound = 4 * eps * sum(abs(float(q[0, i])) * 2 * 1.5 for i in range(2))
    assert float(vo.score_contrast(one)[0]) == pytest.approx(x, abs=bound)
    # the peak density: 5/6 at B = 1, scaling like B⁻², below Lemma 6's bound
    assert vo.score_contrast_peak_density(1.0) == pytest.approx(5 / 6, abs=1e-10)
    assert vo.score_contrast_peak_density(2.0) == pytest.approx(5 / 24, abs=1e-10)
    X = vo.sample_score_contrast(1.0, 200_000, seed=1, chunk=50_000)
    assert X.shape == (200_000,) and np.abs(X).max() <= 4
    # mass of |X| ≤ 0.02: 2·0.02·f(0) to first order; a 4-SE binomial band
    p = float((np.abs(X) <= 0.02).mean())
    se = math.sqrt(p * (1 - p) / X.size)
    assert abs(p - 0.04 * 5 / 6) < 4 * se + 0.04 * 0.02  # + the curvature of f near 0
    # chunks are drawn with consecutive seeds: the same points whatever the first chunk's size
    assert np.array_equal(
        vo.sample_score_contrast(1.0, 10, seed=4, chunk=10),
        vo.score_contrast(vo.uniform_box("gen", 8, 1.0, 10, seed=4)).numpy(),
    )
    # Lemma 7 (eq. 91) at ε = 1/8: Pr(|X| ≤ ε) ≥ 9ε/512
    assert float((np.abs(X) <= 1 / 8).mean()) > 9 / 8 / 512
    for bad in (0.0, -1.0, float("nan")):
        with pytest.raises(ValueError, match="B must be"):
            vo.score_contrast_peak_density(bad)
        with pytest.raises(ValueError, match="B must be"):
            vo.uniform_box("gen", 8, bad, 3)
    with pytest.raises(ValueError):
        vo.sample_score_contrast(1.0, 0)
