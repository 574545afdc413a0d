"""Chapter 4: the exact networks of Sec. 4 as float64 :class:`~.data.Network` s (Thms 4.1–4.2,
our ReLU interpolant; sine weights carry exact rational phases for :mod:`.checks`) and what ReLU
networks cannot do (Thms 4.3–4.4: width bounds, same-ray pairs), section "Claim 2"."""

from __future__ import annotations

import math

import torch

from lengthgen.chapters.ch4.data import Network, check_length, check_modulus, labels_of_counts
from lengthgen.config import ConfigError


def _readout(p: int) -> torch.Tensor:
    """``V_ℓ = (cos 2πℓ/p, sin 2πℓ/p)``: with hidden (cos φ, sin φ) the score is cos(φ − 2πℓ/p)."""
    ang = 2 * math.pi * torch.arange(p, dtype=torch.float64) / p
    return torch.stack([torch.cos(ang), torch.sin(ang)], 1)


def construct_fixed_length(m: int, p: int) -> Network:
    """Thm 4.1: width-2 bias-free sine network exact on length ``m``, ``W_{1v} = 2πv/p + π/(2m)``,
    ``W_{2v} = 2πv/p``: on ``X_m`` the score ``cos(2π(S − ℓ)/p)`` peaks uniquely at ``ℓ ≡ S``."""
    m, p = check_length(m), check_modulus(p)
    base = 2 * math.pi * torch.arange(p, dtype=torch.float64) / p
    W, v = torch.stack([base + math.pi / (2 * m), base]), torch.arange(p)
    N = torch.stack([4 * m * v + p, 4 * m * v])
    rational = (N, torch.zeros(2, dtype=torch.long), 4 * m * p)
    return Network(W, _readout(p), "sine", None, f"Thm 4.1 (m = {m})", rational=rational)


def fixed_length_window(m: int, p: int, max_m: int) -> list[int]:
    """The lengths ``1 … max_m`` where Thm 4.1's network for ``m`` is exact, by our derivation for
    odd p ("The phase/rotation view"): ``|m′ − m − 4mk| < 2m/p`` for some integer k."""
    m, p, max_m = check_length(m), check_modulus(p), check_length(max_m)
    if p % 2 == 0:
        raise ConfigError(f"the closed-form window is derived for odd p, got p = {p}")
    # the phase error (L − m)·π/(2m), reduced to [−π, π), below π/p
    return [L for L in range(1, max_m + 1) if p * abs((L + m) % (4 * m) - 2 * m) < 2 * m]


def construct_with_bias(p: int) -> Network:
    """Thm 4.2 (with bias): width 2, ``W_{jv} = 2πv/p``, ``b = (π/2, 0)``; exact at every length."""
    p = check_modulus(p)
    base = 2 * math.pi * torch.arange(p, dtype=torch.float64) / p
    W, b = torch.stack([base, base]), torch.tensor([math.pi / 2, 0.0], dtype=torch.float64)
    rational = (torch.stack([4 * torch.arange(p)] * 2), torch.tensor([p, 0]), 4 * p)
    return Network(W, _readout(p), "sine", b, "Thm 4.2 (bias)", rational=rational)


def construct_fourier(p: int) -> Network:
    """Thm 4.2 (no bias), p ≥ 3: width ``K = ⌊(p−1)/2⌋``, ``W_{kv} = 2πkv/p``,
    ``V_{ℓk} = sin(2πkℓ/p)``; right unless ``S ≡ −S`` (a tie, our Lemma D.2)."""
    p = check_modulus(p)
    K = (p - 1) // 2
    if K < 1:
        raise ConfigError(f"the bias-free Fourier construction needs p >= 3, got p = {p}")
    k, v = torch.arange(1, K + 1, dtype=torch.float64), torch.arange(p, dtype=torch.float64)
    W = 2 * math.pi * k[:, None] * v[None, :] / p
    V = torch.sin(2 * math.pi * v[:, None] * k[None, :] / p)
    rational = ((torch.arange(1, K + 1)[:, None] * torch.arange(p)) % p, torch.zeros(K).long(), p)
    return Network(W, V, "sine", None, "Thm 4.2 (no bias)", rational=rational)


def fourier_accuracy(p: int) -> float:
    """The population accuracy of :func:`construct_fourier`: 1 − 1/p (odd p), 1 − 2/p (even p)."""
    return 1 - (1 if check_modulus(p) % 2 else 2) / p


def relu_kinks(m: int, p: int) -> list[float]:
    """Kinks (in units of S) of :func:`construct_relu`: kp + p − 3/4 and kp + p − 1/4 < m(p−1)."""
    m, p = check_length(m), check_modulus(p)
    return [c for k in range(m) for c in (k * p + p - 0.75, k * p + p - 0.25) if c < m * (p - 1)]


def construct_relu(m: int, p: int) -> Network:
    """Our bias-free ReLU network exact on ``X_m`` ("Claim 2"): units ``ReLU(m)``, ``ReLU(S)`` and
    one per kink of :func:`relu_kinks`; argmax ``ℓ ≡ S`` (margin 1/2), width ≈ 2m(p−1)/p + 2."""
    m, p = check_length(m), check_modulus(p)
    v = ell = torch.arange(p, dtype=torch.float64)  # token values; labels
    kinks = relu_kinks(m, p)
    W = [torch.ones(p, dtype=torch.float64), v] + [v - c / m for c in kinks]
    V = [-(ell**2) / (2 * m), ell] + [(2 * p if i % 2 else -2 * p) * ell for i in range(len(kinks))]
    return Network(torch.stack(W), torch.stack(V, 1), "relu", None, f"ReLU interpolant (m = {m})")


def phases(W: torch.Tensor) -> torch.Tensor:
    """First-layer phases ``W_{jv} mod 2π`` ([d, p]): where token v puts neuron j on the circle."""
    return torch.remainder(torch.as_tensor(W).double(), 2 * math.pi)


# ----------------------------------------------------------------------- ReLU limits (Thms 4.3–4.4)
def relu_width_lower_bound(m: int, p: int) -> float:
    """Thm 4.3 as the paper states it: an exact ReLU interpolant has width ≥ (m − p)/(p + 2)."""
    m, p = check_length(m), check_modulus(p)
    return (m - p) / (p + 2)


def path_lower_bound(m: int, p: int) -> int:
    """Our counting-path bound: width ≥ ⌈(m + 1)/p⌉ − 1 (≤ d kinks on the path ``x(t)``, and an
    affine piece holds at most p consecutive labels)."""
    m, p = check_length(m), check_modulus(p)
    return -(-(m + 1) // p) - 1


def path_inputs(m: int, p: int) -> torch.Tensor:
    """The path of Thm 4.3: ``x(t) = (m − t) e_0 + t e_1``, t = 0 … m (label t mod p); [m+1, p]."""
    m, p = check_length(m), check_modulus(p)
    t, x = torch.arange(m + 1), torch.zeros(m + 1, p, dtype=torch.long)
    x[:, 0], x[:, 1] = m - t, t
    return x


def path_kinks(net: Network, m: int) -> list[float]:
    """Kinks of a ReLU network along the path ``x(t)``, t ∈ (0, m): zeros of its pre-activations."""
    if not isinstance(net, Network) or net.activation != "relu":
        raise ConfigError("path_kinks applies to ReLU networks (a Network with activation 'relu')")
    m = check_length(m)
    a = net.W[:, 0] * m + (net.b if net.b is not None else 0)  # pre-activation at t = 0
    slope = net.W[:, 1] - net.W[:, 0]
    kinks = [-a_j / s_j for a_j, s_j in zip(a.tolist(), slope.tolist()) if s_j != 0]
    return sorted(t for t in kinks if 0 < t < m)


def homogeneous_pairs(m1: int, m2: int, p: int) -> dict:
    """Thm 4.4: ``(m1/g) z`` and ``(m2/g) z`` (``g = gcd(m1, m2)``, ``z = (g−1)e_0 + e_v``) lie on
    one ray, so a bias-free ReLU net labels them alike; the pairs whose labels differ."""
    m1, m2, p = check_length(m1), check_length(m2), check_modulus(p)
    g, pairs = math.gcd(m1, m2), []
    for v in range(1, p):
        z = torch.eye(p, dtype=torch.long)[v]
        z[0] += g - 1
        x1, x2 = (m1 // g) * z, (m2 // g) * z
        y1, y2 = int(labels_of_counts(x1, p)), int(labels_of_counts(x2, p))
        if y1 != y2:
            pairs.append((x1, x2, y1, y2))
    return {"g": g, "pairs": pairs, "incongruent": (m1 - m2) % p != 0}
