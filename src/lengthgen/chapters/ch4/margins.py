"""Chapter 4 (Huang & Li): multiclass margins and the normalised margins of Sec. 6 / App. B.1.2.

Section "Claim 4 — over-parameterized regime and normalized margins": the margin
``s_y(x) − max_{ℓ≠y} s_ℓ(x)`` of each example (:func:`margins`), its 0.5th percentile over the
training set (:func:`percentile_margin`), the layer norms that normalise it
(:func:`layer_norm_product`: ``‖V‖_{1,∞}`` for sine, ``‖W‖_F ‖V‖_2`` for ReLU) and all three per
member of a trained ensemble (:func:`train_margins`).
"""

from __future__ import annotations

from typing import Sequence

import torch

from lengthgen.chapters.ch4.data import Dataset
from lengthgen.chapters.ch4.model import ModularMLP, check_activation
from lengthgen.chapters.ch4.training import padded_sets, resolve_device
from lengthgen.config import ConfigError, check_finite
from lengthgen.engine.runs import note_device


def margins(scores: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """The multiclass margin ``s_y(x) − max_{ℓ≠y} s_ℓ(x)`` of each example (negative = wrong)."""
    if scores.shape[:-1] != y.shape:
        raise ConfigError(f"scores {tuple(scores.shape)} and labels {tuple(y.shape)} disagree")
    y = y.long()
    if bool((y < 0).any()) or bool((y >= scores.shape[-1]).any()):
        raise ConfigError(f"labels must lie in [0, {scores.shape[-1]})")
    sy = scores.gather(-1, y.unsqueeze(-1)).squeeze(-1)
    others = scores.scatter(-1, y.unsqueeze(-1), float("-inf"))
    return sy - others.amax(-1)


def percentile_margin(scores: torch.Tensor, y: torch.Tensor, q: float = 0.5) -> torch.Tensor:
    """The ``q``-th percentile (B.1.2: q = 0.5) of the training margins over the example axis
    (``torch.quantile``): ``scores`` [..., n, p], ``y`` [..., n] → [...]."""
    if not 0 <= check_finite("q", q) <= 100:
        raise ConfigError(f"q is a percentile in [0, 100], got {q!r}")
    return torch.quantile(margins(scores, y).double(), q / 100.0, dim=-1)


def layer_norm_product(params: dict, activation: str) -> torch.Tensor:
    """The normaliser of Sec. 6: ``‖V‖_{1,∞}`` (max row ℓ1 norm) for sine, ``‖W‖_F ‖V‖_2`` for ReLU.

    ``params`` holds ``W`` [E, d, p] and ``V`` [E, p, d] (or unbatched [d, p], [p, d]); returns [E] (or a scalar).
    """
    W, V = params["W"].double(), params["V"].double()
    if check_activation(activation) == "sine":
        return V.abs().sum(-1).amax(-1)
    return torch.linalg.matrix_norm(W, "fro") * torch.linalg.matrix_norm(V, 2)


def train_margins(
    model: ModularMLP, params: dict, datasets: Sequence[Dataset], q: float = 0.5, device=None
) -> dict:
    """Per member e on its training set ``datasets[e]``: the q-th percentile margin (B.1.2: q = 0.5),
    the layer norm of Sec. 6 and their ratio, the normalized margin. Computed on ``device``
    (default: where ``params`` live)."""
    x, y = padded_sets(datasets)
    dev = next(iter(params.values())).device if device is None else resolve_device(device)
    note_device(dev)
    params = {k: v.to(dev) for k, v in params.items()}
    with torch.no_grad():
        out, y = model.forward(params, x.to(dev)), y.to(dev)
    gam = torch.stack([percentile_margin(o[t >= 0], t[t >= 0], q) for o, t in zip(out, y)])
    norm = layer_norm_product(params, model.activation)
    return {"margin": gam.tolist(), "norm": norm.tolist(), "normalized": (gam / norm).tolist()}
