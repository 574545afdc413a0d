"""Softmax attention ``softmax(β · q kᵀ + bias) v`` shared by every chapter's models, batched over
any leading dimensions; :func:`log_length_scale` is Chiang & Cholak's β = log N (2022, §5.3)."""

from __future__ import annotations

import math

import torch


def log_length_scale(n_positions: int) -> float:
    """β = log N for N positions."""
    if n_positions < 1:
        raise ValueError(f"number of positions must be >= 1, got {n_positions}")
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
