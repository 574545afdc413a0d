"""Chapter 0: softmax attention dilution and how scaling logits by log N removes it.

One query attends over N positions; position 0 gets logit ``c`` and the other N−1 get 0.
Without scaling the favoured weight is

    w(c, N) = e^c / (e^c + N − 1)                                     (ch. 0, eq. 1)

which tends to 0 like e^c / N. Multiplying every logit by log N (Chiang & Cholak 2022, §5.3)
turns the advantage into c·log N, i.e. a factor N^c:

    w_log(c, N) = N^c / (N^c + N − 1)                                 (ch. 0, eq. 2)

which tends to 1 for c > 1, to 1/2 for c = 1 and to 0 for c < 1. :func:`softmax_weight`
computes the same quantities numerically with ``torch.softmax`` for comparison.
"""

from __future__ import annotations

import numpy as np

from lengthgen.config import check_finite, check_positive_int, check_probability, get_dtype


def _check_N(N) -> np.ndarray:
    arr = np.asarray(N)
    integral = arr.size and np.issubdtype(arr.dtype, np.number) and np.all(arr == np.floor(arr))
    if not integral or np.any(arr < 1):
        raise ValueError(
            f"N must be a positive integer number of positions (or an array of them), got {N!r}"
        )
    return arr.astype(np.float64)


def favoured_weight(c, N, *, log_scaled: bool = False):
    """Closed-form attention weight of the favoured position (eq. 1, or eq. 2 if ``log_scaled``).

    Computed stably as ``1 / (1 + (N − 1) e^{−c'})`` with ``c' = c`` or ``c log N``.
    """
    check_finite("c", float(np.max(np.abs(np.asarray(c, dtype=float)))))
    n = _check_N(N)
    adv = np.asarray(c, dtype=np.float64) * (np.log(n) if log_scaled else 1.0)
    return 1.0 / (1.0 + (n - 1.0) * np.exp(-adv))


def softmax_weight(c: float, N: int, *, log_scaled: bool = False, dtype: str = "float64") -> float:
    """The favoured weight computed by ``torch.softmax`` over an explicit length-N logit vector."""
    import torch

    c = check_finite("c", c)
    N = check_positive_int("N", N)
    logits = torch.zeros(N, dtype=get_dtype(dtype))
    logits[0] = c
    if log_scaled:
        logits = logits * torch.log(torch.tensor(float(N), dtype=logits.dtype))
    return float(torch.softmax(logits, dim=0)[0])


def advantage_needed(N, weight: float = 0.5, *, log_scaled: bool = False):
    """Smallest logit advantage c giving the favoured position at least ``weight``.

    Unscaled: c = log(w (N−1) / (1−w)), which grows like log N. Scaled by log N the same advantage
    is divided by log N and tends to the constant 1 (for N ≥ 2).
    """
    w = check_probability("weight", weight)
    if not 0 < w < 1:
        raise ValueError(f"weight must lie strictly between 0 and 1, got {weight!r}")
    n = _check_N(N)
    with np.errstate(divide="ignore"):
        c = np.log(w * (n - 1.0) / (1.0 - w))
        return c / np.log(n) if log_scaled else c
