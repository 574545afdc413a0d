"""Chapter 4: the two-layer MLP ``s(x) = V σ(W x [+ b])`` on count vectors (section "The task
and the model"): one float64 :class:`Network`, the batched :class:`ModularMLP`; :func:`uargmax`."""

from __future__ import annotations

from dataclasses import dataclass

import torch

from lengthgen.chapters.ch4.data import check_counts, check_modulus
from lengthgen.chapters.ch4.paper import INIT_STD
from lengthgen.config import ConfigError, check_choice, check_finite, check_positive_int
from lengthgen.config import check_seeds

ACTIVATIONS = ("sine", "relu")


def check_activation(activation: str) -> str:
    """``activation`` if it is one of :data:`ACTIVATIONS`, else ConfigError naming the choices."""
    return check_choice("activation", activation, ACTIVATIONS)


def activate(h: torch.Tensor, activation: str) -> torch.Tensor:
    """σ(h) for σ = sin or ReLU."""
    return torch.sin(h) if check_activation(activation) == "sine" else torch.relu(h)


def uargmax(scores: torch.Tensor, tol: float = 0.0) -> torch.Tensor:
    """Strict-uniqueness argmax over the last axis; ``-1`` where the top score does not exceed the
    runner-up by more than ``tol`` (0 in the paper; the float64 constructions use a tiny ``tol``
    that absorbs rounding, far below their smallest true gap)."""
    check_finite("tol", tol, nonnegative=True)
    if scores.dim() == 0 or scores.shape[-1] < 2:
        raise ConfigError(f"scores need ≥ 2 classes on the last axis, got {tuple(scores.shape)}")
    top = scores.topk(2, dim=-1)
    unique = (top.values[..., 0] - top.values[..., 1]) > tol
    return torch.where(unique, top.indices[..., 0], torch.full_like(top.indices[..., 0], -1))


@dataclass
class Network:
    """One two-layer network ``s(x) = V σ(W x + b)`` (float64), e.g. an exact construction."""

    W: torch.Tensor  # [d, p]
    V: torch.Tensor  # [p, d]
    activation: str = "sine"
    b: torch.Tensor | None = None  # [d]
    name: str = ""
    #: exact phases: ``W = 2π N / D`` and ``b = 2π β / D`` with integer ``N`` [d, p], ``β`` [d]
    rational: tuple | None = None

    @property
    def width(self) -> int:
        return int(self.W.shape[0])

    @property
    def p(self) -> int:
        return int(self.V.shape[0])

    def scores(self, x) -> torch.Tensor:
        """Logits for count vectors ``x`` [..., p] (float64)."""
        x = check_counts(x, self.p).double()
        h = x @ self.W.T
        if self.b is not None:
            h = h + self.b
        return activate(h, self.activation) @ self.V.T

    def predict(self, x, tol: float = 1e-6) -> torch.Tensor:
        """Strict-uniqueness predictions (:func:`uargmax`, ``-1`` = tie) for count vectors ``x``."""
        return uargmax(self.scores(x), tol)


class ModularMLP:
    """``s(x) = V σ(W x + b)`` batched over members for :mod:`lengthgen.engine.train`: ``W``
    [E, d, p], ``V`` [E, p, d], ``b`` [E, d], N(0, ``init_std``²) from each member's seed (B.1)."""

    def __init__(self, p: int, width: int, activation="sine", bias=False, init_std=INIT_STD):
        self.p, self.width = check_modulus(p), check_positive_int("width", width)
        self.activation = check_activation(activation)
        if not isinstance(bias, bool):
            raise ConfigError(f"bias must be True or False, got {bias!r}")
        self.bias, self.init_std = bias, check_finite("init_std", init_std, nonnegative=True)

    def init(self, seeds, dtype=torch.float32, device="cpu") -> dict[str, torch.Tensor]:
        """Per-member initial parameters ``{"W", "V"[, "b"]}`` on ``device`` (member e from seed
        ``seeds[e]``: W, V, then b drawn from its generator)."""
        shapes = {"W": (self.width, self.p), "V": (self.p, self.width), "b": (self.width,)}
        shapes = {k: v for k, v in shapes.items() if k != "b" or self.bias}
        out = {k: [] for k in shapes}
        for s in check_seeds(seeds):
            g = torch.Generator().manual_seed(s)
            for k, shape in shapes.items():
                out[k].append(torch.randn(*shape, generator=g, dtype=torch.float64) * self.init_std)
        return {k: torch.stack(v).to(device, dtype) for k, v in out.items()}

    def forward(self, params: dict, x: torch.Tensor) -> torch.Tensor:
        """Logits ``V σ(W x + b)``: [E, B, p]."""
        h = torch.bmm(x, params["W"].transpose(1, 2))
        h = h + params["b"].unsqueeze(1) if self.bias else h
        return torch.bmm(activate(h, self.activation), params["V"].transpose(1, 2))
