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
    s, lo, hi = stats.loglog_slope(n, 3.0 * n ** -2.0)
    assert s == pytest.approx(-2.0) and lo <= s <= hi
