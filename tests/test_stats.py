import numpy as np
import pytest

from lengthgen import stats


def test_bootstrap_ci_contains_mean_and_is_deterministic():
    x = np.arange(20.0)
    est, lo, hi = stats.bootstrap_ci(x, seed=1)
    assert est == 9.5 and lo < est < hi
    assert stats.bootstrap_ci(x, seed=1) == (est, lo, hi)
    assert stats.bootstrap_ci(np.ones(5)) == (1.0, 1.0, 1.0)
    with pytest.raises(ValueError):
        stats.bootstrap_ci([])
    with pytest.raises(ValueError, match="probability"):
        stats.bootstrap_ci(x, level=2)


def test_spearman_auc_hand_cases():
    assert stats.spearman([1, 2, 3], [10, 20, 30]) == pytest.approx(1.0)
    assert stats.spearman([1, 2, 3], [3, 2, 1]) == pytest.approx(-1.0)
    assert stats.auc([0.9, 0.8, 0.1], [1, 1, 0]) == 1.0
    assert stats.auc([0.5, 0.5], [1, 0]) == 0.5


def test_permutation_and_slope():
    rng = np.random.default_rng(0)
    x = np.arange(30.0)
    y = x + rng.normal(0, 1, 30)
    obs, p = stats.permutation_pvalue(stats.spearman, x, y, n_perm=200)
    assert obs > 0.9 and p == pytest.approx(1 / 201)
    n = np.array([10, 20, 40, 80])
    s, lo, hi = stats.loglog_slope(n, 3.0 * n**-2.0)
    assert s == pytest.approx(-2.0) and lo <= s <= hi


# --------------------------------------------------------------------------- brute force on small inputs
def brute_ranks(x):
    """Average 1-based ranks by counting: 1 + #smaller + (#equal - 1) / 2."""
    return np.array(
        [1 + sum(b < a for b in x) + (sum(b == a for b in x) - 1) / 2 for a in x],
        dtype=float,
    )


def brute_pearson(a, b):
    n = len(a)
    ma, mb = sum(a) / n, sum(b) / n
    sab = sum((p - ma) * (q - mb) for p, q in zip(a, b))
    saa = sum((p - ma) ** 2 for p in a)
    sbb = sum((q - mb) ** 2 for q in b)
    return sab / (saa * sbb) ** 0.5


def small_cases(n_cases=200, seed=0):
    rng = np.random.default_rng(seed)
    for k in range(n_cases):
        n = int(rng.integers(2, 12))
        x = (
            rng.integers(0, 4, n).astype(float) if k % 2 else rng.normal(size=n)
        )  # with and without ties
        y = rng.integers(0, 3, n).astype(float) if k % 3 == 0 else rng.normal(size=n)
        yield x, y, rng.integers(0, 2, n).astype(bool)


def test_rankdata_matches_counting():
    for x, _, _ in small_cases():
        assert np.array_equal(stats.rankdata(x), brute_ranks(x))
    assert stats.rankdata([3, 1, 3]).tolist() == [2.5, 1.0, 2.5]


def test_spearman_matches_pearson_of_counted_ranks():
    checked = 0
    for x, y, _ in small_cases():
        rx, ry = brute_ranks(x), brute_ranks(y)
        if rx.std() == 0 or ry.std() == 0:
            assert np.isnan(stats.spearman(x, y))
            continue
        assert abs(stats.spearman(x, y) - brute_pearson(rx, ry)) <= 1e-12
        if len(set(x)) == len(x) and len(set(y)) == len(y):  # no ties: 1 - 6 Σd² / (n(n² - 1))
            n = len(x)
            assert (
                abs(stats.spearman(x, y) - (1 - 6 * ((rx - ry) ** 2).sum() / (n * (n * n - 1))))
                <= 1e-12
            )
        checked += 1
    assert checked > 100
    assert np.isnan(stats.spearman([2, 2, 2], [1, 2, 3])) and np.isnan(stats.spearman([1], [1]))


def test_auc_equals_pair_counting_exactly():
    from scipy.stats import mannwhitneyu

    checked = 0
    for x, _, lab in small_cases():
        pos, neg = x[lab], x[~lab]
        if len(pos) == 0 or len(neg) == 0:
            assert np.isnan(stats.auc(x, lab))
            continue
        wins = sum((p > q) + 0.5 * (p == q) for p in pos for q in neg)
        assert stats.auc(x, lab) == wins / (len(pos) * len(neg))
        u = mannwhitneyu(pos, neg, method="asymptotic").statistic  # the library's number
        assert abs(stats.auc(x, lab) - u / (len(pos) * len(neg))) < 1e-12
        checked += 1
    assert checked > 100
    assert (
        stats.auc([0.2, 0.9, 0.4], [0, 1, 0]) == 1.0
        and stats.auc([1, 2, 3, 4], [1, 0, 1, 0]) == 0.25
    )


def test_bootstrap_ci_is_the_percentile_interval_of_the_seeded_resamples():
    from scipy.stats import bootstrap

    x = np.array([0.3, 1.7, -0.4, 2.2, 0.9, 0.0, 1.1])
    rng = np.random.default_rng(4)
    idx = rng.integers(0, len(x), size=(300, len(x)))
    boots = np.array([np.median(x[i]) for i in idx])
    assert stats.bootstrap_ci(x, n_boot=300, seed=4, stat=np.median, level=0.9) == (
        float(np.median(x)),
        float(np.quantile(boots, (1 - 0.9) / 2)),
        float(np.quantile(boots, 1 - (1 - 0.9) / 2)),
    )
    # the resamples are exactly those of scipy.stats.bootstrap with the same Generator seed
    res = bootstrap(
        (x,),
        np.mean,
        n_resamples=300,
        method="percentile",
        rng=np.random.default_rng(4),
    )
    assert np.array_equal(res.bootstrap_distribution, x[idx].mean(axis=1))
    est, lo, hi = stats.bootstrap_ci(x, n_boot=300, seed=4)
    a = (1 - 0.95) / 2  # 0.025000000000000022, as computed inside
    assert (lo, hi) == (
        np.quantile(res.bootstrap_distribution, a),
        np.quantile(res.bootstrap_distribution, 1 - a),
    )
    assert stats.bootstrap_ci([5.0]) == (
        5.0,
        5.0,
        5.0,
    )  # one seed: a point interval (scipy refuses n = 1)


# Numbers computed by the hand-written bootstrap and permutation test as stored in the ledgers
# (before this module moved to scipy for ranks, Spearman and AUC); they must not change.
X = np.array(
    [
        0.034,
        1.36,
        1.225,
        -0.51,
        -0.298,
        -0.527,
        0.57,
        -0.056,
        0.747,
        -1.847,
        1.567,
        -0.096,
        0.68,
        -0.137,
    ]
)
Y = np.array(
    [
        -0.534,
        2.054,
        2.461,
        -0.814,
        -0.527,
        0.501,
        -0.736,
        -2.328,
        1.339,
        -2.853,
        -1.314,
        -1.318,
        -0.021,
        -1.926,
    ]
)
G = np.repeat([0, 1, 2], [5, 5, 4])


def pearson(a, b):
    return float(np.corrcoef(a, b)[0, 1])


def test_bootstrap_and_permutation_numbers_are_pinned():
    assert stats.bootstrap_ci(Y, seed=1) == (
        -0.42971428571428577,
        -1.2042357142857143,
        0.3683821428571424,
    )
    assert stats.bootstrap_ci(
        np.stack([X, Y], 1),
        stat=lambda w: pearson(w[:, 0], w[:, 1]),
        n_boot=500,
        seed=2,
    ) == (0.6226354663113358, 0.15658817552619247, 0.8882111963134361)
    assert stats.permutation_pvalue(pearson, X, Y, n_perm=500, seed=3) == (
        0.6226354663113358,
        0.02594810379241517,
    )
    assert stats.permutation_pvalue(pearson, X, Y, n_perm=500, seed=3, groups=G) == (
        0.6226354663113358,
        0.01996007984031936,
    )
    assert stats.permutation_pvalue(
        lambda s, lab: stats.auc(s, lab),
        X,
        Y > 0,
        n_perm=500,
        seed=4,
        alternative="greater",
    ) == (0.7, 0.14570858283433133)
    assert stats.permutation_pvalue(
        pearson, X, Y, n_perm=500, seed=5, groups=G, alternative="less"
    ) == (0.6226354663113358, 0.9940119760479041)


def test_permutation_shuffles_within_groups_and_counts_extremes():
    seen = []

    def stat(x, y):
        seen.append(y.copy())
        return pearson(x, y)

    obs, p = stats.permutation_pvalue(stat, X, Y, n_perm=300, seed=7, groups=G)
    null = np.array([pearson(X, y) for y in seen[1:]])
    assert len(null) == 300 and obs == pearson(X, Y)
    for y in seen[1:]:  # every group keeps its own values
        for g in np.unique(G):
            assert sorted(y[G == g]) == sorted(Y[G == g])
    assert any(not np.array_equal(y, Y) for y in seen[1:])
    assert p == (1 + np.sum(np.abs(null) >= abs(obs) - 1e-12)) / 301  # two-sided: |s| >= |observed|


def test_permutation_without_groups_agrees_with_scipy_one_sided_and_with_enumeration():
    import itertools
    import math

    from scipy.stats import permutation_test

    # 14! > n_perm: scipy draws the same permutations from the same Generator, so one-sided p agree exactly
    for alt in ("greater", "less"):
        ref = permutation_test(
            (Y,),
            lambda y: pearson(X, y),
            permutation_type="pairings",
            vectorized=False,
            n_resamples=400,
            alternative=alt,
            rng=np.random.default_rng(9),
        )
        assert stats.permutation_pvalue(pearson, X, Y, n_perm=400, seed=9, alternative=alt) == (
            float(ref.statistic),
            float(ref.pvalue),
        )
    # n = 5: the Monte-Carlo p approaches the exact p over all 5! permutations
    x, y = X[:5], Y[:5]
    obs = pearson(x, y)
    exact = np.mean(
        [pearson(x, y[list(q)]) >= obs - 1e-12 for q in itertools.permutations(range(5))]
    )
    _, p = stats.permutation_pvalue(pearson, x, y, n_perm=4000, seed=0, alternative="greater")
    assert abs(p - exact) < 4 * math.sqrt(exact * (1 - exact) / 4000)


def test_plane_fit_recovers_a_plane_and_matches_lapack():
    # points on a lattice x0 + x1 = m for m = 2, 3, 19 (chapter 5's drift fit)
    pts = [(m - t, t) for m in (2, 3, 19) for t in range(m + 1)]
    x0 = np.array([p[0] for p in pts], float)
    x1 = np.array([p[1] for p in pts], float)
    A = np.stack([np.ones_like(x0), x0, x1], -1)
    # a normwise backward-stable bound: n eps cond(A) |y|max, with a factor 100 of slack
    bound = 100 * len(pts) * np.finfo(float).eps * np.linalg.cond(A)
    y = 0.5 - 0.25 * x0 + 0.125 * x1  # an exact plane is recovered
    tol = bound * np.abs(y).max()
    assert np.allclose(stats.plane_fit(x0, x1, y), (0.5, -0.25, 0.125), rtol=0, atol=tol)
    # noisy data: LAPACK's least squares agrees within the same bound
    y = np.random.default_rng(0).normal(size=len(pts))
    ref = np.linalg.lstsq(A, y, rcond=None)[0]
    tol = bound * np.abs(y).max()
    assert np.allclose(stats.plane_fit(x0, x1, y), ref, rtol=0, atol=tol)
    assert stats.plane_fit(x0, x1, y) == stats.plane_fit(x0.copy(), x1.copy(), y.copy())


def test_bad_arguments_give_one_line_errors():
    bad = [
        (lambda: stats.spearman([1, 2, 3], [1, 2]), "lengths differ: x has 3, y has 2"),
        (lambda: stats.spearman([[1, 2]], [1]), "x must be a 1-D sequence"),
        (
            lambda: stats.auc([0.1, 0.2], [1, 0, 1]),
            "lengths differ: scores has 2, labels has 3",
        ),
        (lambda: stats.rankdata(np.zeros((2, 2))), "x must be a 1-D sequence"),
        (
            lambda: stats.bootstrap_ci([1.0, 2.0], n_boot=0),
            "n_boot must be an integer >= 1",
        ),
        (
            lambda: stats.bootstrap_ci([1.0, 2.0], stat="mean"),
            "stat must be a callable",
        ),
        (
            lambda: stats.permutation_pvalue(pearson, X, Y[:5]),
            "lengths differ: x has 14, y has 5",
        ),
        (
            lambda: stats.permutation_pvalue(pearson, X, Y, groups=G[:3]),
            "lengths differ: y has 14, groups has 3",
        ),
        (
            lambda: stats.permutation_pvalue(pearson, X, Y, alternative="both"),
            "valid choices",
        ),
        (
            lambda: stats.permutation_pvalue(pearson, X, Y, n_perm=0),
            "n_perm must be an integer >= 1",
        ),
        (lambda: stats.permutation_pvalue(None, X, Y), "stat_fn must be a callable"),
        (lambda: stats.loglog_slope([1, 2], [1, 2]), "at least 3 points"),
        (lambda: stats.plane_fit([0, 1], [1, 0], [1, 2]), "at least 3 points, got 2"),
        (lambda: stats.plane_fit([0, 1, 2], [1, 0], [1, 2, 3]), "x0 has 3, x1 has 2"),
        (lambda: stats.plane_fit([0, 1, 2], [2, 1, 0], [1, 2, 3]), "lie on one line"),
        (
            lambda: stats.plane_fit([0, 1, 2], [0, 1, 0], [1, np.nan, 3]),
            "y holds a non",
        ),
    ]
    for call, match in bad:
        with pytest.raises(ValueError, match=match) as err:
            call()
        assert "\n" not in str(err.value)
