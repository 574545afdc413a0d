"""Chapter 4's task and model (section "The task and the model"): ``m`` tokens in ``[p]``, label
``(s_1+…+s_m) mod p``, embedded as the count vector ``x ∈ ℕ^p``; its argument checks, sampling,
enumeration and the datasets and seeding of App. B.1.3; the two-layer MLP ``s(x) = V σ(W x [+ b])``
on count vectors: one float64 :class:`Network`, the batched :class:`ModularMLP`; :func:`uargmax`."""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from typing import Sequence

import torch

from lengthgen.chapters.ch4.paper import INIT_STD, N_TEST, TEST_SEED_MULTIPLIER
from lengthgen.chapters.ch4.paper import TRAIN_SEED_MULTIPLIER
from lengthgen.config import ConfigError, check_choice, check_finite, check_positive_int
from lengthgen.config import check_seeds, nonempty

#: largest number of ordered tuples (or count vectors) the enumerations will produce
MAX_ENUMERATION = 2_000_000


# --------------------------------------------------------------------------- argument checks
def check_modulus(p) -> int:
    """``p`` as int if it is an integer ≥ 2 (the number of residues), else ConfigError."""
    return check_positive_int("modulus p", p, minimum=2)


def check_length(m) -> int:
    """``m`` as int if it is an integer ≥ 1 (the number of summands), else ConfigError."""
    return check_positive_int("length m", m, minimum=1)


def check_tokens(tokens, p: int) -> torch.Tensor:
    """``tokens`` as a long tensor whose entries all lie in ``[0, p)``; ConfigError otherwise."""
    t = torch.as_tensor(tokens)
    if t.is_floating_point() or t.is_complex() or t.dtype == torch.bool:
        raise ConfigError(f"tokens must be integers in [0, {p}), got dtype {t.dtype}")
    if t.dim() == 0 or t.numel() == 0:
        raise ConfigError("tokens must be a non-empty array of shape [..., m]")
    if int(t.min()) < 0 or int(t.max()) >= check_modulus(p):
        bad = int(t.min()) if int(t.min()) < 0 else int(t.max())
        raise ConfigError(f"token {bad} lies outside [0, {p}); valid tokens are 0 … {p - 1}")
    return t.long()


def check_counts(x, p: int) -> torch.Tensor:
    """Count vectors ``x`` of shape [..., p] with non-negative integer entries (any float/int dtype)."""
    x = torch.as_tensor(x)
    if x.dim() == 0 or x.shape[-1] != check_modulus(p):
        raise ConfigError(f"count vectors need last dimension p = {p}, got shape {tuple(x.shape)}")
    if bool((x < 0).any()) or bool((x != torch.round(x.double()).to(x.dtype)).any()):
        raise ConfigError("count vectors must have non-negative integer entries")
    return x


# --------------------------------------------------------------------------- the task
def labels_of(tokens, p: int) -> torch.Tensor:
    """The label ``(Σ_i s_i) mod p`` of each token tuple (last axis = the m tokens)."""
    return check_tokens(tokens, p).sum(-1).remainder(p)


def count_vectors(tokens, p: int, dtype=torch.float32) -> torch.Tensor:
    """The shared embedding: ``x_v = #{i : s_i = v}`` for each tuple; shape [..., p]."""
    t = check_tokens(tokens, p)
    out = torch.zeros(*t.shape[:-1], p, dtype=dtype)
    return out.scatter_add_(-1, t, torch.ones(t.shape, dtype=dtype))


def labels_of_counts(x, p: int) -> torch.Tensor:
    """The label of count vectors: ``(Σ_v v·x_v) mod p``."""
    return (check_counts(x, p).long() * torch.arange(p)).sum(-1).remainder(p)


def sample_tokens(n: int, m: int, p: int, generator: torch.Generator | None = None) -> torch.Tensor:
    """``n`` i.i.d. uniform m-tuples from ``[p]``, shape [n, m]; a larger ``n`` from the same
    generator state extends the rows (the prefix property of B.1)."""
    n, m, p = check_positive_int("n", n), check_length(m), check_modulus(p)
    return torch.randint(0, p, (n, m), generator=generator)


def all_inputs(m: int, p: int) -> torch.Tensor:
    """All ``p^m`` ordered token tuples (shape [p^m, m]): the exhaustive check on small (m, p)."""
    m, p = check_length(m), check_modulus(p)
    if p**m > MAX_ENUMERATION:
        raise ConfigError(f"p^m = {p}^{m} exceeds {MAX_ENUMERATION} tuples; sample inputs instead")
    grids = torch.meshgrid(*[torch.arange(p)] * m, indexing="ij")
    return torch.stack([g.reshape(-1) for g in grids], -1)


def all_count_vectors(m: int, p: int) -> torch.Tensor:
    """Every count vector of ``X_m`` (multisets of m tokens), shape [C(m+p−1, p−1), p], int64."""
    m, p = check_length(m), check_modulus(p)
    if math.comb(m + p - 1, p - 1) > MAX_ENUMERATION:
        raise ConfigError(f"X_m has C({m + p - 1}, {p - 1}) > {MAX_ENUMERATION} count vectors")
    # stars and bars: the p − 1 bar positions among m + p − 1 slots, in reverse lexicographic
    # order (the count of token 0 first and descending, then that of token 1, …)
    bars = reversed(list(itertools.combinations(range(m + p - 1), p - 1)))
    rows = [[b - a - 1 for a, b in zip((-1, *c), (*c, m + p - 1))] for c in bars]
    return torch.tensor(rows, dtype=torch.long)


# --------------------------------------------------------------------------- datasets and seeding (B.1.3)
def split_budget(n: int, lengths: Sequence[int]) -> list[int]:
    """Split ``n`` examples as evenly as possible over ``lengths`` (the first ones get the remainder)."""
    n, lengths = check_positive_int("n", n), nonempty("lengths", lengths)
    q, r = divmod(n, len(lengths))
    return [q + (1 if i < r else 0) for i in range(len(lengths))]


def data_seed(seed: int, m: int, test: bool = False) -> int:
    """B.1.3: training (test) data of length m come from generator ``seed·1009 (2009) + m``."""
    mult = TEST_SEED_MULTIPLIER if test else TRAIN_SEED_MULTIPLIER
    return check_positive_int("seed", seed, minimum=0) * mult + check_length(m)


@dataclass
class Dataset:
    """Inputs ``x`` [n, …] (count vectors [n, p] for the MLPs), labels ``y`` [n] and lengths ``m`` [n]."""

    x: torch.Tensor
    y: torch.Tensor
    m: torch.Tensor

    def __len__(self) -> int:
        return int(self.y.shape[0])


def _shard(seed_value: int, n: int, m: int, p: int) -> Dataset:
    tok = sample_tokens(n, m, p, torch.Generator().manual_seed(seed_value))
    return Dataset(count_vectors(tok, p), labels_of(tok, p), torch.full((n,), m, dtype=torch.long))


def train_set(seed: int, p: int, lengths: Sequence[int], n: int) -> Dataset:
    """B.1.3's static training set: ``n`` split over ``lengths`` (:func:`split_budget`), the shard
    of length m from generator ``seed·1009 + m`` (a smaller budget's is a prefix), in order."""
    p, sizes = check_modulus(p), split_budget(n, lengths)
    shards = [_shard(data_seed(seed, m), k, m, p) for m, k in zip(lengths, sizes) if k > 0]
    return Dataset(*(torch.cat([getattr(d, f) for d in shards]) for f in "xym"))


def test_set(seed: int, p: int, m: int, n: int = N_TEST) -> Dataset:
    """B.1.3's fixed held-out set of length ``m``: ``n`` tuples from generator ``seed·2009 + m``."""
    return _shard(data_seed(seed, m, test=True), n, m, p)  # sample_tokens checks n, m, p


# --------------------------------------------------------------------------- the model
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
