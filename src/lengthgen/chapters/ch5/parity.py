"""Chapter 5, section "Parity: averaging versus summing": with β_n = 1 chapter 2's A_gen gives
(t, n) and (2t, 2n) one output (:func:`doubling_gap`); averaging + a sine unit is exact only up to
a bounded n (:func:`search_averaging_sine`), summing + chapter 4's construction at every n."""

from __future__ import annotations

import math

import numpy as np
import torch

from lengthgen.config import ConfigError, check_choice, check_finite, check_positive_int
from lengthgen.chapters.ch2 import volume as vo
from lengthgen.chapters.ch4.constructions import construct_with_bias


def doubling_gap(P: dict, n: int, beta: str) -> dict:
    """Over A_gen points ``P``, t = 1 … n − 1: max |A_t(n) − A_{2t}(2n)| (``max_abs_output``) and
    of d_{2t}(2n) − d_t(n) minus X log 2 (log n) or 0 (β_n = 1) (``max_logit_error``)."""
    n = check_positive_int("n", n, minimum=2)
    check_choice("beta", beta, vo.BETAS)
    d1 = vo.count_level_logits(P, n, beta)[:, 1:n]
    d2 = vo.count_level_logits(P, 2 * n, beta)[:, 2 : 2 * n : 2]
    A1 = vo.count_level_attention(P, n, beta)[:, 1:n]
    A2 = vo.count_level_attention(P, 2 * n, beta)[:, 2 : 2 * n : 2]
    X = vo.score_contrast(P)
    shift = math.log(2.0) if beta == "log" else 0.0
    return {
        "max_abs_output": float((A1 - A2).abs().max()),
        "max_logit_error": float(((d2 - d1) - shift * X[:, None]).abs().max()),
    }


def sine_levels_exact(omega: float, phi: float, rho) -> bool:
    """Whether ``± sin(φ + ω ρ_t)`` has the sign of (−1)^{t+1} at every level ρ_t (one sign)."""
    rho = np.asarray(rho, dtype=float)
    sign = np.where(np.arange(len(rho)) % 2 == 1, 1.0, -1.0)
    f = np.sin(phi + omega * rho) * sign
    return bool((f > 0).all() or (f < 0).all())


def phase_for(omega: float, rho) -> float | None:
    """A phase φ making ``sin(φ + ω ρ_t)`` alternate in sign along the levels, or ``None``: each
    level asks φ into an open half-circle: the midpoints of consecutive ends are the candidates."""
    rho = np.asarray(rho, dtype=float)
    t = np.arange(len(rho))
    starts = np.mod(-omega * rho + np.where(t % 2 == 0, math.pi, 0.0), 2 * math.pi)
    ends = np.mod(starts + math.pi, 2 * math.pi)
    pts = np.sort(np.concatenate([starts, ends]))
    mids = (pts + np.roll(pts, -1) + np.r_[np.zeros(len(pts) - 1), 2 * math.pi]) / 2
    return next((float(phi) for phi in mids if sine_levels_exact(omega, phi, rho)), None)


def averaging_sine_bound(B: float) -> int:
    """The largest n at which averaging + a sine unit with parameters in [−B, B] can be exact:
    n sign changes of sin(φ + ω ρ_t), |ω| ≤ 2B², ρ in [0, 1], need (n − 1) π < 2B²."""
    B = check_finite("B", B)
    if not B > 0:
        raise ConfigError(f"B must be > 0, got {B}")
    return int(math.ceil(2 * B * B / math.pi))


def averaging_levels(n: int, X: float) -> np.ndarray:
    """The attention shares ρ_t = σ(log t − log(n − t) + X log n), t = 0 … n."""
    t = np.arange(n + 1)
    scale = math.log(n) if n > 1 else 1.0
    with np.errstate(divide="ignore"):
        d = np.log(t) - np.log(n - t) + scale * X
    return 1.0 / (1.0 + np.exp(-d))


#: the score contrasts the search tries, as fractions of their largest value 2B²
X_FRACTIONS = (-0.5, -0.1, -0.02, 0.0, 0.02, 0.1, 0.5)


def search_averaging_sine(B: float, n: int, *, omegas: int = 400) -> dict:
    """An exact averaging + sine classifier of Parity at length n, parameters in [−B, B], B ≥ π/2:
    X = x · 2B², x in :data:`X_FRACTIONS`, ``omegas`` values of ω below 2B², :func:`phase_for`."""
    B = check_finite("B", B)
    if not B >= math.pi / 2:
        raise ConfigError(f"B must be ≥ π/2 (a free phase), got {B}")
    for xfrac in X_FRACTIONS:
        X = xfrac * 2 * B * B
        rho = averaging_levels(n, X)
        for omega in np.linspace(2 * B * B, 0.0, omegas, endpoint=False):
            phi = phase_for(omega, rho)
            if phi is not None:
                return {"found": True, "X": X, "omega": float(omega), "phi": phi}
    return {"found": False}


def largest_exact_n(B: float, n_max: int, **kw) -> int:
    """The largest n ≤ ``n_max`` at which :func:`search_averaging_sine` finds a solution (or 0)."""
    found = [n for n in range(1, n_max + 1) if search_averaging_sine(B, n, **kw)["found"]]
    return max(found) if found else 0


def summing_check(n_max: int, *, all_lengths: int = 1000) -> dict:
    """Chapter 4's width-2 sine construction (p = 2) on summed counts (n − t, t): errors at every
    t ≤ ``n_max`` and (n, t), n ≤ ``all_lengths``; the smallest margin, the weight on zeros."""
    n_max = check_positive_int("n_max", n_max)
    all_lengths = check_positive_int("all_lengths", all_lengths)
    net = construct_with_bias(2)
    t = torch.arange(n_max + 1)
    x = torch.stack([n_max - t, t], -1)
    s = net.scores(x)
    lab = t % 2
    margin = (s.gather(1, lab[:, None]) - s.gather(1, 1 - lab[:, None])).squeeze(1)
    errors = int((net.predict(x) != lab).sum())
    pairs = torch.tensor([(n - k, k) for n in range(1, all_lengths + 1) for k in range(n + 1)])
    errors_all = int((net.predict(pairs) != pairs[:, 1] % 2).sum())
    out = {"n_max": n_max, "errors": errors, "errors_all_lengths": errors_all}
    out |= {"pairs_all_lengths": int(len(pairs)), "min_margin": float(margin.min())}
    return out | {"weight_on_zeros": float(net.W[:, 0].abs().max())}
