"""Chapter 0: softmax attention dilution and how scaling logits by log N removes it. One query over
N positions, logit ``c`` at position 0 and 0 elsewhere: the favoured weight is e^c / (e^c + N − 1)
(eq. 1), or N^c / (N^c + N − 1) with log-length scaling (eq. 2). The closed forms, and their check
on a grid of N up to 10^5: the one stored cell ``dilution_grid`` (section "The stored run")."""

from __future__ import annotations

import itertools

import numpy as np

from lengthgen.config import check_finite, check_positive_int, check_probability, get_dtype
from lengthgen.engine.runs import Cell

#: Advantages and lengths of the chapter's table; scale-independent, so smoke == full.
C_VALUES = (0.5, 1.0, 2.0, 4.0)
N_VALUES = (1, 2, 10, 100, 1_000, 10_000, 100_000)

#: What a stored dilution grid holds (:func:`lengthgen.store.validate`; the same at every scale).
GRID_SCHEMA = "rows.*.(c|N|log_scaled) max_abs_error rows.*.(softmax|closed_form):p"
GRID_SCHEMA += " rows=2*c_values*n_values"


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


def schema(name: str, scale: str = "full") -> str | None:
    """What stored cell ``name`` must hold."""
    return GRID_SCHEMA if name == "dilution_grid" else None


def dilution_grid(c_values=C_VALUES, n_values=N_VALUES) -> dict:
    """Numeric (torch.softmax) and closed-form favoured weights on the (c, N) grid, both scalings
    (chapter 0, "The weight of the favoured position")."""
    rows = [
        {
            "log_scaled": scaled,
            "c": c,
            "N": n,
            "softmax": softmax_weight(c, n, log_scaled=scaled),
            "closed_form": float(favoured_weight(c, n, log_scaled=scaled)),
        }
        for scaled, c, n in itertools.product((False, True), c_values, n_values)
    ]
    err = max(abs(r["softmax"] - r["closed_form"]) for r in rows)
    return {"rows": rows, "max_abs_error": err}


def cells(scale: str) -> list[Cell]:
    """The chapter's reproduction plan: one cell, the same at both scales."""
    kw = {"c_values": list(C_VALUES), "n_values": list(N_VALUES)}
    return [Cell("dilution_grid", dilution_grid, kw)]
