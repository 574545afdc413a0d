"""Positional encodings: the feature maps φ of chapter 3 and the encodings of the trained decoder.
Chapter 3 (Han, Chai & Wang 2026, §3) models the positional logit as ``φ(i)ᵀ W φ(j)``; the rows
``φ(0) … φ(n−1)`` form ``Φ_n`` (:func:`feature_map`) and :class:`KernelFamily` holds the ``W`` each
encoding can realize (the table in chapter 3's "One head, positions only"). The decoder's encodings:
:func:`sinusoidal_table`, :func:`clamped_positions`, :func:`rope_rotate`, :func:`alibi_bias`."""

from __future__ import annotations

import math

import torch

from lengthgen.config import ConfigError, check_choice, check_finite, check_positive_int

#: The five encodings of chapter 3, in the paper's order (Table 2).
ENCODINGS = ("learned_abs", "nope", "alibi", "sinusoidal", "rope")
#: Encodings whose kernel depends on i − j only.
RELATIVE = ("rope", "alibi")
#: The paper's predictor defaults (Prop. 3, App. I): 16 frequencies with base 10⁴.
NUM_FREQ = 16
BASE = 1e4


def check_encoding(encoding: str) -> str:
    """``encoding`` if it is one of :data:`ENCODINGS`; otherwise raise naming the choices."""
    return check_choice("encoding", encoding, ENCODINGS)


def frequencies(num_freq: int = NUM_FREQ, base: float = BASE, dtype=torch.float64) -> torch.Tensor:
    """Geometric frequencies ``θ_k = base^(−k/num_freq)``, k = 0 … num_freq−1 (θ_0 = 1 rad/position)."""
    num_freq = check_positive_int("num_freq", num_freq)
    base = check_finite("base", base)
    if base <= 1:
        raise ConfigError(f"base must be > 1, got {base!r}")
    k = torch.arange(num_freq, dtype=dtype)
    return base ** (-k / num_freq)


# --------------------------------------------------------------------------- feature maps (ch. 3 §3)
def feature_map(
    encoding: str,
    n: int,
    *,
    L0: int = 20,
    num_freq: int = NUM_FREQ,
    base: float = BASE,
    dtype=torch.float64,
) -> torch.Tensor:
    """The stacked positional features ``Φ_n ∈ ℝ^{n×m}`` of ``encoding`` (row i = φ(i)ᵀ; ``L0``
    rows of a learned-absolute table)."""
    check_encoding(encoding)
    n = check_positive_int("n", n)
    L0 = check_positive_int("L0", L0)
    i = torch.arange(n, dtype=torch.float64)
    if encoding == "nope":
        phi = torch.ones(n, 1, dtype=torch.float64)
    elif encoding == "alibi":
        phi = torch.stack([torch.ones_like(i), i], dim=1)
    elif encoding == "learned_abs":
        phi = torch.nn.functional.one_hot(clamped_positions(n, L0), L0).to(torch.float64)
    else:  # sinusoidal and RoPE share the features; they differ in the admissible W
        ang = i[:, None] * frequencies(num_freq, base)[None, :]
        phi = torch.stack([torch.cos(ang), torch.sin(ang)], dim=2).reshape(n, 2 * ang.shape[1])
    return phi.to(dtype)


# --------------------------------------------------------------------------- kernel families
class KernelFamily:
    """The realizable positional kernels ``Φ W(c) Φᵀ`` of one encoding (ch. 3 §3–4): ``W(c)`` is
    linear in :attr:`n_coef` coefficients (RoPE: 2×2 blocks ``[[a, b], [−b, a]]``; ALiBi:
    ``[[c₀, −s], [s, 0]]`` with ``s ≤ 0``, :meth:`project`)."""

    def __init__(
        self, encoding: str, *, L0: int = 20, num_freq: int = NUM_FREQ, base: float = BASE
    ):
        self.encoding, self.L0, self.num_freq, self.base = encoding, L0, num_freq, base
        self.m = self.features(1).shape[1]  # checks the arguments
        self.n_coef = {"nope": 1, "alibi": 2, "rope": 2 * num_freq}.get(encoding, self.m**2)
        self.relative = encoding in RELATIVE

    def features(self, n: int, dtype=torch.float64) -> torch.Tensor:
        """``Φ_n`` for this family (see :func:`feature_map`)."""
        return feature_map(
            self.encoding, n, L0=self.L0, num_freq=self.num_freq, base=self.base, dtype=dtype
        )

    def W(self, coef: torch.Tensor) -> torch.Tensor:
        """The m×m parameter ``W(c)`` for coefficients ``coef`` (differentiable, any float dtype)."""
        coef = torch.as_tensor(coef)
        if coef.shape != (self.n_coef,):
            raise ValueError(
                f"{self.encoding} needs {self.n_coef} coefficients, got shape {tuple(coef.shape)}"
            )
        if self.encoding in ("sinusoidal", "learned_abs", "nope"):  # unconstrained (NoPE: 1×1)
            return coef.reshape(self.m, self.m)
        if self.encoding == "alibi":
            c0, s = coef[0], coef[1]
            z = torch.zeros((), dtype=coef.dtype)
            return torch.stack([torch.stack([c0, -s]), torch.stack([s, z])])
        a, b = coef[: self.num_freq], coef[self.num_freq :]
        blocks = torch.stack([torch.stack([a, b], -1), torch.stack([-b, a], -1)], -2)  # [F, 2, 2]
        return torch.block_diag(*blocks)

    def project(self, coef: torch.Tensor) -> torch.Tensor:
        """Impose the sign constraint in place (ALiBi recency slope ``s ≤ 0``) and return ``coef``."""
        if self.encoding == "alibi":
            with torch.no_grad():
                coef[1].clamp_(max=0.0)
        return coef

    def kappa(self, coef: torch.Tensor, d: torch.Tensor) -> torch.Tensor:
        """The relative kernel ``κ(d)`` at offsets ``d`` (RoPE and ALiBi only)."""
        if not self.relative:
            raise ValueError(f"{self.encoding!r} is not relative; valid: {', '.join(RELATIVE)}")
        coef = torch.as_tensor(coef, dtype=torch.float64)
        d = torch.as_tensor(d, dtype=torch.float64)
        if self.encoding == "alibi":
            return coef[0] + coef[1] * d
        ang = d[..., None] * frequencies(self.num_freq, self.base)
        a, b = coef[: self.num_freq], coef[self.num_freq :]
        return (a * torch.cos(ang) - b * torch.sin(ang)).sum(-1)


# --------------------------------------------------------------------------- encodings of the decoder
def sinusoidal_table(n: int, dim: int, base: float = BASE, dtype=torch.float32) -> torch.Tensor:
    """Additive sinusoidal position table ``[n, dim]`` (Vaswani et al. 2017): row i is φ(i) with
    ``num_freq = dim/2``."""
    dim = check_positive_int("dim", dim, minimum=2)
    if dim % 2:
        raise ConfigError(f"dim must be even, got {dim}")
    return feature_map("sinusoidal", n, num_freq=dim // 2, base=base).to(dtype)


def clamped_positions(n: int, L0: int, device=None) -> torch.Tensor:
    """Indices ``min(i, L0−1)`` into a learned-absolute table of size ``L0`` (positions ≥ L0 share L0−1)."""
    return torch.arange(n, device=device).clamp(max=L0 - 1)


def _rope_angles(x: torch.Tensor, base: float, scale: float = 1.0) -> torch.Tensor:
    """The angles ``i·scale·θ_k`` [n, d_head/2] of RoPE for ``x[..., n, d_head]``."""
    n, dh = x.shape[-2], x.shape[-1]
    if dh % 2:
        raise ConfigError(f"RoPE needs an even head dimension, got {dh}")
    th = (frequencies(dh // 2, base) * scale).to(x.dtype).to(x.device)  # × 1.0 is exact
    return torch.arange(n, dtype=x.dtype, device=x.device)[:, None] * th


def rope_rotate(x: torch.Tensor, base: float = BASE, scale: float = 1.0) -> torch.Tensor:
    """Rotary position embedding (Su et al. 2024) of ``x[..., n, d_head]``: pairs ``(2k, 2k+1)``
    rotated by ``i·scale·θ_k``, computed as ``x ⊙ cos + (−x_{2k+1}, x_{2k}) ⊙ sin`` (bit for bit
    the pairwise :func:`rope_rotate_reference`)."""
    ang = _rope_angles(x, base, scale)
    cos, sin = (f(ang).repeat_interleave(2, -1) for f in (torch.cos, torch.sin))
    xp = x.unflatten(-1, (x.shape[-1] // 2, 2))
    rot = torch.stack([xp[..., 1].neg(), xp[..., 0]], dim=-1).flatten(-2)
    return x * cos + rot * sin


def rope_rotate_reference(x: torch.Tensor, base: float = BASE) -> torch.Tensor:
    """The pairwise form of :func:`rope_rotate` (what trained the stored chapter-3 study)."""
    ang = _rope_angles(x, base)
    cos, sin = torch.cos(ang), torch.sin(ang)
    x1, x2 = x[..., 0::2], x[..., 1::2]
    return torch.stack([x1 * cos - x2 * sin, x1 * sin + x2 * cos], dim=-1).flatten(-2)


def alibi_slopes(n_heads: int, dtype=torch.float32) -> torch.Tensor:
    """ALiBi's fixed geometric head slopes ``2^(−8h/H)``, h = 1 … H (Press et al. 2022)."""
    H = check_positive_int("n_heads", n_heads)
    return torch.tensor([2.0 ** (-8.0 * h / H) for h in range(1, H + 1)], dtype=dtype)


def alibi_bias(n: int, n_heads: int, dtype=torch.float32, device=None) -> torch.Tensor:
    """ALiBi's additive logit bias ``[H, n, n]``: ``−slope_h · (i − j)`` (a recency penalty, slope ≤ 0 in κ)."""
    n = check_positive_int("n", n)
    i = torch.arange(n, dtype=dtype, device=device)
    d = i[:, None] - i[None, :]
    return -alibi_slopes(n_heads, dtype).to(device)[:, None, None] * d


def theta_min(num_freq: int = NUM_FREQ, base: float = BASE) -> float:
    """The lowest frequency ``θ_min = base^(−(num_freq−1)/num_freq)`` (≈ 1.78·10⁻⁴ for 16, 10⁴)."""
    return float(frequencies(num_freq, base)[-1])


def monotone_range(num_freq: int = NUM_FREQ, base: float = BASE) -> int:
    """The largest offset d at which ``sin(d θ_min)`` still increases: ``π / (2 θ_min)``, rounded."""
    return int(round(math.pi / (2 * theta_min(num_freq, base))))
