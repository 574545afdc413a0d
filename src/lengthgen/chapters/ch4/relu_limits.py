"""Chapter 4: what ReLU networks cannot do (section "Claim 2 — what ReLU networks cannot do"):
width lower bounds (Thm 4.3, :func:`relu_width_lower_bound`; our :func:`path_lower_bound` along
:func:`path_inputs`) and Thm 4.4's same-ray pairs of two lengths (:func:`homogeneous_pairs`).
"""

from __future__ import annotations

import math

import torch

from lengthgen.chapters.ch4.data import check_length, check_modulus, labels_of_counts
from lengthgen.chapters.ch4.model import Network
from lengthgen.config import ConfigError


def relu_width_lower_bound(m: int, p: int) -> float:
    """Thm 4.3 as stated by the paper: an exact ReLU interpolant of ``X_m`` has width ≥ (m − p)/(p + 2)."""
    m, p = check_length(m), check_modulus(p)
    return (m - p) / (p + 2)


def path_lower_bound(m: int, p: int) -> int:
    """Our counting-path bound: width ≥ ⌈(m + 1)/p⌉ − 1 (a ReLU net is affine between ≤ d kinks on
    the path ``x(t) = (m−t)e_0 + t e_1``, and an affine piece can hold at most p consecutive labels)."""
    m, p = check_length(m), check_modulus(p)
    return -(-(m + 1) // p) - 1


def path_inputs(m: int, p: int) -> torch.Tensor:
    """The path of Thm 4.3: ``x(t) = (m − t) e_0 + t e_1`` for t = 0 … m (label t mod p); [m+1, p]."""
    m, p = check_length(m), check_modulus(p)
    t = torch.arange(m + 1)
    x = torch.zeros(m + 1, p, dtype=torch.long)
    x[:, 0], x[:, 1] = m - t, t
    return x


def path_kinks(net: Network, m: int) -> list[float]:
    """Kinks of a ReLU network along the path ``x(t)``, t ∈ [0, m]: the zeros of each unit's affine pre-activation."""
    if not isinstance(net, Network) or net.activation != "relu":
        raise ConfigError("path_kinks applies to ReLU networks (a Network with activation 'relu')")
    m = check_length(m)
    a = net.W[:, 0] * m + (net.b if net.b is not None else 0)  # pre-activation at t = 0
    slope = net.W[:, 1] - net.W[:, 0]
    kinks = [-a_j / s_j for a_j, s_j in zip(a.tolist(), slope.tolist()) if s_j != 0]
    return sorted(t for t in kinks if 0 < t < m)


def homogeneous_pairs(m1: int, m2: int, p: int) -> dict:
    """Thm 4.4 (bias-free ReLU): the inputs ``(m1/g) z`` and ``(m2/g) z`` (``g = gcd(m1, m2)``,
    ``z = (g−1)e_0 + e_v``) lie on one ray, so a positively homogeneous network labels them alike,
    while their labels differ (section "Claim 2"). Returns the conflicting pairs.
    """
    m1, m2, p = check_length(m1), check_length(m2), check_modulus(p)
    g = math.gcd(m1, m2)
    pairs = []
    for v in range(1, p):
        z = torch.zeros(p, dtype=torch.long)
        z[0] = g - 1
        z[v] += 1
        x1, x2 = (m1 // g) * z, (m2 // g) * z
        y1, y2 = int(labels_of_counts(x1, p)), int(labels_of_counts(x2, p))
        if y1 != y2:
            pairs.append((x1, x2, y1, y2))
    return {"g": g, "pairs": pairs, "incongruent": (m1 - m2) % p != 0}
