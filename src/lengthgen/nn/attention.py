"""Softmax attention ``softmax(β · q kᵀ + bias) v`` shared by every chapter's models, batched over
any leading dimensions; :func:`log_length_scale` is Chiang & Cholak's β = log N (2022, §5.3)."""

from __future__ import annotations

import math

import torch


def log_length_scale(
    n_positions: int | torch.Tensor, *, causal: bool = False, dtype=torch.float64, device=None
):
    """β = log N. For ``causal=True`` returns the per-row vector ``log(i + 1)``, i = 0 … N−1, shape [N, 1]."""
    if bool((torch.as_tensor(n_positions) < 1).any()):
        raise ValueError(f"number of positions must be >= 1, got {n_positions}")
    if causal:
        return torch.log(torch.arange(1, int(n_positions) + 1, dtype=dtype, device=device))[:, None]
    if isinstance(n_positions, torch.Tensor):
        return torch.log(n_positions.to(dtype))
    return math.log(int(n_positions))


def causal_mask(n: int, device=None) -> torch.Tensor:
    """Boolean [n, n] mask, True where query i may attend to key j (j ≤ i)."""
    return torch.ones(n, n, dtype=torch.bool, device=device).tril()


def attend(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, *, scale=1.0, bias=None, mask=None):
    """Attention output ``[..., n_q, d_v]``: the softmax over keys of ``scale · q kᵀ + bias``
    (masked entries weigh 0) times ``v``."""
    logits = torch.matmul(q, k.transpose(-1, -2)) * scale
    if bias is not None:
        logits = logits + bias
    if mask is not None:
        logits = logits.masked_fill(~mask, float("-inf"))
    return torch.matmul(torch.softmax(logits, dim=-1), v)
