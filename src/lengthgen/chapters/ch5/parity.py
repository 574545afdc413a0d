"""Chapter 5, section "Parity: averaging versus summing" (chapter 2 × chapter 4).

Chapter 2's single-layer model A_gen sees a binary string only through its count of ones ``t``:
its attention output is ``A_t = v₀ + ρ_t (v₁ − v₀)`` with log-odds
``d_t = log t − log(n − t) + β_n X`` (eq. 71; :func:`lengthgen.chapters.ch2.volume.count_level_logits`).
Chapter 4's sine network computes a sum mod p at every length from the counts. This module puts the
two together:

* :func:`doubling_gap` — with β_n = 1 the log-odds depend on t and n only through t/n, so the
  string with t ones among n and the one with 2t ones among 2n get the same attention output
  although their parities differ (t odd): no classifier of any kind is exact at both n and 2n.
  With β_n = log n the two log-odds differ by exactly X log 2, at every t and n.
* :func:`sine_levels_exact`, :func:`search_averaging_sine` — an averaging attention followed by
  one sine unit, all parameters in [−B, B]: the largest n at which it classifies Parity exactly.
* :func:`summing_check` — summing instead of averaging (the output times n is the count t): chapter
  4's biased width-2 sine construction with p = 2 (Thm 4.2) classifies every count exactly.
"""

from __future__ import annotations

import math

import numpy as np
import torch

from lengthgen.config import ConfigError, check_choice, check_finite, check_positive_int
from lengthgen.chapters.ch2 import volume as vo

DT = torch.float64


def doubling_gap(P: dict, n: int, beta: str) -> dict:
    """Compare A_gen's count levels at length n with those at 2n, at t and 2t ones, for the
    parameter points ``P`` (batched A_gen points, :func:`lengthgen.chapters.ch2.volume.uniform_box`).

    Returns, over the points and t = 1 … n − 1 (t = 0 and t = n have log-odds ∓∞):
    ``max_abs_output`` = max |A_t(n) − A_{2t}(2n)| (both coordinates), and
    ``max_logit_error`` = max |(d_{2t}(2n) − d_t(n)) − (c_2n − c_n) X|, where c_n = β_n (log n or 1),
    i.e. how far the log-odds difference is from the closed form X log 2 (β = log n) or 0 (β = 1).
    """
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
    """Whether ``a sin(φ + ω ρ_t)`` has the sign of Parity's label (−1)^{t+1} strictly at every
    level ρ_0 … ρ_n for one of the two signs of a (``rho``: the n + 1 levels)."""
    rho = np.asarray(rho, dtype=float)
    sign = np.where(np.arange(len(rho)) % 2 == 1, 1.0, -1.0)
    f = np.sin(phi + omega * rho) * sign
    return bool((f > 0).all() or (f < 0).all())


def phase_for(omega: float, rho) -> float | None:
    """A phase φ making ``sin(φ + ω ρ_t)`` alternate in sign along the levels (t = 0 negative,
    or all signs flipped), or ``None`` if there is none. Each level asks φ to lie on an open
    half-circle; a non-empty intersection of half-circles is an open arc between two consecutive
    end points, so the midpoints of consecutive end points are the only candidates."""
    rho = np.asarray(rho, dtype=float)
    t = np.arange(len(rho))
    starts = np.mod(-omega * rho + np.where(t % 2 == 0, math.pi, 0.0), 2 * math.pi)
    ends = np.mod(starts + math.pi, 2 * math.pi)
    pts = np.sort(np.concatenate([starts, ends]))
    mids = (
        pts + np.roll(pts, -1) + np.where(np.arange(len(pts)) == len(pts) - 1, 2 * math.pi, 0)
    ) / 2
    for phi in mids:
        if sine_levels_exact(omega, phi, rho):
            return float(phi)
    return None


def averaging_sine_bound(B: float) -> int:
    """The largest n at which averaging + one sine unit with parameters in [−B, B] can be exact
    (our derivation, chapter 5): the unit sees θ_t = φ + ω ρ_t with ω = w (v₁ − v₀), so
    |ω| ≤ 2B²; the levels ρ_0 = 0 < … < ρ_n = 1 span [0, 1] whatever X is, and n sign changes of
    a sine need n of its zeros, π apart, inside an interval of length |ω|: (n − 1) π < 2B².
    Equal spacing (X = 0) reaches the bound when the phase is free modulo π (B ≥ π/2)."""
    B = check_finite("B", B)
    if not B > 0:
        raise ConfigError(f"B must be > 0, got {B}")
    return int(math.ceil(2 * B * B / math.pi))  # the largest n with (n − 1) π < 2B²


def averaging_levels(n: int, X: float, beta: str = "log") -> np.ndarray:
    """The attention shares ρ_0 … ρ_n on the ones of an averaging head with score contrast X
    (ρ_t = σ(log t − log(n − t) + β_n X))."""
    t = np.arange(n + 1)
    scale = math.log(n) if (beta == "log" and n > 1) else 1.0
    with np.errstate(divide="ignore"):
        d = np.log(t) - np.log(n - t) + scale * X
    return 1.0 / (1.0 + np.exp(-d))


#: the score contrasts the search tries, as fractions of their largest value 2B²
X_FRACTIONS = (-0.5, -0.1, -0.02, 0.0, 0.02, 0.1, 0.5)


def search_averaging_sine(
    B: float, n: int, *, omegas: int = 400, xs=X_FRACTIONS, beta: str = "log"
) -> dict:
    """Search for an exact averaging + sine classifier of Parity at length n, every parameter in
    [−B, B] (keys k₀, k₁ and query q, so X = q (k₁ − k₀) ∈ [−2B², 2B²]; values v₀, v₁; the unit
    a sin(w A + b)). The unit sees θ_t = φ + ω ρ_t with ω = w (v₁ − v₀) ∈ [−2B², 2B²] and
    φ = w v₀ + b, whose reachable range is longer than π for B ≥ π/2 (then φ is free modulo π,
    and the sign of a gives the other half). Tries X = x · 2B² for x in ``xs`` and ``omegas``
    values of ω down from 2B²; for each the exact phase test :func:`phase_for`."""
    B = check_finite("B", B)
    if not B >= math.pi / 2:
        raise ConfigError(f"B must be ≥ π/2 (a free phase), got {B}")
    n = check_positive_int("n", n, minimum=1)
    check_choice("beta", beta, vo.BETAS)
    for xfrac in xs:
        rho = averaging_levels(n, xfrac * 2 * B * B, beta)
        for omega in np.linspace(2 * B * B, 0.0, omegas, endpoint=False):
            phi = phase_for(omega, rho)
            if phi is not None:
                return {
                    "found": True,
                    "X": xfrac * 2 * B * B,
                    "omega": float(omega),
                    "phi": phi,
                }
    return {"found": False}


def largest_exact_n(B: float, n_max: int, **kw) -> int:
    """The largest n ≤ ``n_max`` at which :func:`search_averaging_sine` finds a solution (0 if
    none), trying every n = 1 … n_max."""
    n_max = check_positive_int("n_max", n_max)
    found = [n for n in range(1, n_max + 1) if search_averaging_sine(B, n, **kw)["found"]]
    return max(found) if found else 0


def summing_check(n_max: int, *, all_lengths: int = 1000) -> dict:
    """Chapter 4's biased width-2 sine construction with p = 2 (Thm 4.2,
    :func:`lengthgen.chapters.ch4.constructions.construct_with_bias`) fed the counts
    (n − t, t) — a summing attention's output — classifies Parity: checked at every count
    t = 0 … ``n_max`` of the length n_max, and at every (n, t) with n ≤ ``all_lengths``.
    Returns the number of errors, the smallest margin and the construction's weight on the count
    of zeros (exactly 0: the prediction depends on t alone)."""
    from lengthgen.chapters.ch4.constructions import construct_with_bias

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
    return {
        "n_max": n_max,
        "errors": errors,
        "errors_all_lengths": errors_all,
        "pairs_all_lengths": int(len(pairs)),
        "min_margin": float(margin.min()),
        "weight_on_zeros": float(net.W[:, 0].abs().max()),
    }


def relu_width_needed(n: int) -> int:
    """The smallest width of a ReLU classifier of the count t ∈ {0, …, n} that is exact for
    Parity: a width-h ReLU network of a scalar is piecewise linear with at most h kinks, so it
    changes sign at most h + 1 times, and Parity needs n sign changes: h ≥ n − 1; chapter 2's
    A_gen solution (:func:`lengthgen.chapters.ch2.volume.parity_solution`) has h = n − 1 for
    n ≥ 4."""
    n = check_positive_int("n", n, minimum=1)
    return max(n - 1, 1)
