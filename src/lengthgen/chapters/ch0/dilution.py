"""Chapter 0: softmax attention dilution and how scaling logits by log N removes it. One query
over N positions, logit ``c`` at position 0 and 0 elsewhere: the favoured weight is
e^c / (e^c + N − 1) (eq. 1), or N^c / (N^c + N − 1) with log-length scaling (eq. 2)."""

from __future__ import annotations

import numpy as np

from lengthgen.config import check_finite, check_positive_int, check_probability, get_dtype


def _check_N(N) -> np.ndarray:
    arr = np.asarray(N)
    integral = arr.size and np.issubdtype(arr.dtype, np.number) and np.all(arr == np.floor(arr))
    if not integral or np.any(arr < 1):
        raise ValueError(f"N must be a positive integer number of positions, got {N!r}")
    return arr.astype(np.float64)


def favoured_weight(c, N, *, log_scaled: bool = False):
    """Closed-form favoured weight (eq. 1; eq. 2 if ``log_scaled``): 1 / (1 + (N − 1) e^{−c'})."""
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
    """Smallest advantage c giving the favoured position ``weight``: log(w (N−1) / (1−w)), divided
    by log N if ``log_scaled``."""
    w = check_probability("weight", weight)
    if not 0 < w < 1:
        raise ValueError(f"weight must lie strictly between 0 and 1, got {weight!r}")
    n = _check_N(N)
    with np.errstate(divide="ignore"):
        c = np.log(w * (n - 1.0) / (1.0 - w))
        return c / np.log(n) if log_scaled else c
