"""Statistics shared by the chapters: bootstrap intervals, rank correlation, permutation tests, AUC."""
from __future__ import annotations

import numpy as np

from lengthgen.config import check_positive_int, check_probability


def bootstrap_ci(values, *, level: float = 0.95, n_boot: int = 10_000, seed: int = 0, stat=np.mean):
    """Percentile bootstrap interval of ``stat`` over the first axis of ``values``.

    Returns ``(estimate, lo, hi)``. Used for the seed-bootstrap intervals of chapters 1–3.
    """
    x = np.asarray(values, dtype=float)
    if x.ndim == 0 or x.shape[0] == 0:
        raise ValueError("bootstrap_ci needs at least one value")
    check_probability("level", level)
    check_positive_int("n_boot", n_boot)
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, x.shape[0], size=(n_boot, x.shape[0]))
    boots = np.array([stat(x[i]) for i in idx]) if stat is not np.mean else x[idx].mean(axis=1)
    a = (1 - level) / 2
    return float(stat(x)), float(np.quantile(boots, a)), float(np.quantile(boots, 1 - a))


def rankdata(x) -> np.ndarray:
    """Average ranks (1-based), ties sharing the mean rank."""
    from scipy.stats import rankdata as _rd

    return _rd(np.asarray(x, dtype=float))


def spearman(x, y) -> float:
    """Spearman rank correlation (Pearson correlation of average ranks)."""
    rx, ry = rankdata(x), rankdata(y)
    if rx.std() == 0 or ry.std() == 0:
        return float("nan")
    return float(np.corrcoef(rx, ry)[0, 1])


def auc(scores, labels) -> float:
    """Area under the ROC curve of ``scores`` for binary ``labels`` (Mann–Whitney form, ties count 1/2)."""
    s = np.asarray(scores, dtype=float)
    y = np.asarray(labels, dtype=bool)
    pos, neg = s[y], s[~y]
    if len(pos) == 0 or len(neg) == 0:
        return float("nan")
    diff = pos[:, None] - neg[None, :]
    return float(((diff > 0) + 0.5 * (diff == 0)).mean())


def permutation_pvalue(stat_fn, x, y, *, n_perm: int = 10_000, seed: int = 0, groups=None,
                       alternative: str = "two-sided") -> tuple[float, float]:
    """Permutation test of ``stat_fn(x, y)`` permuting ``y`` (within ``groups`` when given).

    Returns ``(observed, p)`` with the add-one estimate ``(1 + #extreme) / (1 + n_perm)``.
    """
    from lengthgen.config import check_choice

    check_choice("alternative", alternative, ("two-sided", "greater", "less"))
    rng = np.random.default_rng(seed)
    x, y = np.asarray(x), np.asarray(y)
    obs = stat_fn(x, y)
    groups = np.zeros(len(y), dtype=int) if groups is None else np.asarray(groups)
    idx_by_group = [np.flatnonzero(groups == g) for g in np.unique(groups)]
    extreme = 0
    for _ in range(check_positive_int("n_perm", n_perm)):
        yp = y.copy()
        for idx in idx_by_group:
            yp[idx] = y[rng.permutation(idx)]
        s = stat_fn(x, yp)
        if alternative == "two-sided":
            extreme += abs(s) >= abs(obs) - 1e-12
        elif alternative == "greater":
            extreme += s >= obs - 1e-12
        else:
            extreme += s <= obs + 1e-12
    return float(obs), (1 + extreme) / (1 + n_perm)


def loglog_slope(x, y, *, level: float = 0.95):
    """Least-squares slope of log y on log x with a t-interval: ``(slope, lo, hi)``."""
    from scipy import stats as st

    lx, ly = np.log(np.asarray(x, dtype=float)), np.log(np.asarray(y, dtype=float))
    if len(lx) < 3:
        raise ValueError("loglog_slope needs at least 3 points")
    res = st.linregress(lx, ly)
    t = st.t.ppf(0.5 + level / 2, len(lx) - 2)
    return float(res.slope), float(res.slope - t * res.stderr), float(res.slope + t * res.stderr)
