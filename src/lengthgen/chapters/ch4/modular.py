"""Modular addition with two-layer MLPs on count vectors (chapter 4, Huang & Li).

The task. ``m`` tokens ``s_1 … s_m`` in ``[p] = {0, …, p−1}``; the label is ``(s_1+…+s_m) mod p``.
The shared, position-independent embedding of Huang & Li turns the tokens into the count vector
``x ∈ ℕ^p`` (``x_v`` = how many tokens equal ``v``; ``Σ_v x_v = m``), so a two-layer MLP computes
the ``p`` logits ``s(x) = V σ(W x [+ b])`` with ``W ∈ ℝ^{d×p}``, ``V ∈ ℝ^{p×d}``, optional
first-layer bias ``b ∈ ℝ^d`` and ``σ ∈ {sin, ReLU}``.

Prediction uses the *strict-uniqueness* argmax of the paper (``uargmax``): a tie for the top
score is an invalid prediction and counts as wrong (:func:`uargmax`).

What lives here
---------------
* data: :func:`sample_tokens`, :func:`count_vectors`, :func:`labels_of`, :func:`all_inputs`,
  the seeding scheme of Appendix B.1.3 (:func:`train_set`, :func:`test_set`, :func:`split_budget`);
* the batched model for the ensemble engine (:class:`ModularMLP`), the engine's sampler with
  per-epoch reshuffling (:class:`EpochSampler`), a padding-aware loss and metric;
* the exact constructions of Sec. 4 (:func:`construct_fixed_length` – Thm 4.1,
  :func:`construct_with_bias` – Thm 4.2 with bias, :func:`construct_fourier` – the bias-free
  width-⌊(p−1)/2⌋ network of Thm 4.2) and an explicit interpolating ReLU network
  (:func:`construct_relu`), evaluated on every length at once by :func:`accuracy_by_length`;
* the ReLU limits of Thms 4.3–4.4 (:func:`relu_width_lower_bound`, :func:`path_lower_bound`,
  :func:`homogeneous_pairs`);
* margins (Sec. 6 / B.1.2): :func:`margins`, :func:`percentile_margin`, :func:`normalized_margin`.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

import torch
import torch.nn.functional as F

from lengthgen.config import ConfigError, check_choice, check_finite, check_positive_int

ACTIVATIONS = ("sine", "relu")
#: seeds of Appendix B.1 ("three random seeds {1337, 1338, 1339}")
PAPER_SEEDS = (1337, 1338, 1339)
#: training and test lengths of the length-generalization experiment (Sec. 7.3, B.1.3)
TRAIN_LENGTHS = (2, 3, 4, 5, 7, 13, 19)
OOD_LENGTHS = (14, 38, 53, 97, 201, 303, 401, 512, 602, 705, 811)
IN_DOMAIN_LENGTHS = (3, 7, 13)
#: weight-decay grid of B.1.3 (ascending) and its sample budgets
WD_GRID = (0.0, 0.001, 0.003, 0.01, 0.03, 0.1, 0.3)
BUDGETS = {97: (4000, 8000, 16000, 32000, 64000), 53: (1000, 2000, 4000, 8000, 16000)}
#: largest number of ordered tuples all_inputs will enumerate
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
    p = check_modulus(p)
    t = torch.as_tensor(tokens)
    if t.is_floating_point() or t.is_complex() or t.dtype == torch.bool:
        raise ConfigError(f"tokens must be integers in [0, {p}), got dtype {t.dtype}")
    t = t.long()
    if t.dim() == 0 or t.numel() == 0:
        raise ConfigError("tokens must be a non-empty array of shape [..., m]")
    lo, hi = int(t.min()), int(t.max())
    if lo < 0 or hi >= p:
        bad = lo if lo < 0 else hi
        raise ConfigError(f"token {bad} lies outside [0, {p}); valid tokens are 0 … {p - 1}")
    return t


def check_counts(x, p: int) -> torch.Tensor:
    """Count vectors ``x`` of shape [..., p] with non-negative integer entries (any float/int dtype)."""
    p = check_modulus(p)
    x = torch.as_tensor(x)
    if x.dim() == 0 or x.shape[-1] != p:
        raise ConfigError(f"count vectors must have last dimension p = {p}, got shape {tuple(x.shape)}")
    if bool((x < 0).any()) or bool((x != torch.round(x.double()).to(x.dtype)).any()):
        raise ConfigError("count vectors must have non-negative integer entries")
    return x


def check_activation(activation: str) -> str:
    return check_choice("activation", activation, ACTIVATIONS)


def activate(h: torch.Tensor, activation: str) -> torch.Tensor:
    """σ(h) for σ = sin or ReLU."""
    check_activation(activation)
    return torch.sin(h) if activation == "sine" else torch.relu(h)


# --------------------------------------------------------------------------- the task
def labels_of(tokens, p: int) -> torch.Tensor:
    """The label ``(Σ_i s_i) mod p`` of each token tuple (last axis = the m tokens)."""
    t = check_tokens(tokens, p)
    return t.sum(-1).remainder(p)


def count_vectors(tokens, p: int, dtype=torch.float32) -> torch.Tensor:
    """The shared embedding: ``x_v = #{i : s_i = v}`` for each tuple; shape [..., p]."""
    t = check_tokens(tokens, p)
    out = torch.zeros(*t.shape[:-1], p, dtype=dtype)
    return out.scatter_add_(-1, t, torch.ones(t.shape, dtype=dtype))


def labels_of_counts(x, p: int) -> torch.Tensor:
    """The label of count vectors: ``(Σ_v v·x_v) mod p``."""
    x = check_counts(x, p)
    v = torch.arange(p, dtype=torch.long)
    return (x.long() * v).sum(-1).remainder(p)


def sample_tokens(n: int, m: int, p: int, generator: torch.Generator | None = None) -> torch.Tensor:
    """``n`` i.i.d. uniform m-tuples from ``[p]``, shape [n, m] (``torch.randint``, row-major).

    Drawing with the same generator state and a larger ``n`` extends the rows: the first ``n``
    rows of an ``n' > n`` draw equal the ``n``-row draw (the prefix property of B.1).
    """
    n = check_positive_int("n", n)
    m, p = check_length(m), check_modulus(p)
    return torch.randint(0, p, (n, m), generator=generator)


def all_inputs(m: int, p: int) -> torch.Tensor:
    """All ``p^m`` ordered token tuples (shape [p^m, m]): the exhaustive check on small (m, p)."""
    m, p = check_length(m), check_modulus(p)
    if p ** m > MAX_ENUMERATION:
        raise ConfigError(f"p^m = {p}^{m} exceeds {MAX_ENUMERATION} tuples; use sampled inputs instead")
    grids = torch.meshgrid(*[torch.arange(p)] * m, indexing="ij")
    return torch.stack([g.reshape(-1) for g in grids], -1)


def all_count_vectors(m: int, p: int) -> torch.Tensor:
    """Every count vector of ``X_m`` (multisets of m tokens), shape [C(m+p−1, p−1), p], int64."""
    m, p = check_length(m), check_modulus(p)
    if math.comb(m + p - 1, p - 1) > MAX_ENUMERATION:
        raise ConfigError(f"X_m has C({m + p - 1}, {p - 1}) > {MAX_ENUMERATION} count vectors")
    rows: list[list[int]] = []

    def rec(prefix, left, slots):
        if slots == 1:
            rows.append(prefix + [left])
            return
        for k in range(left, -1, -1):
            rec(prefix + [k], left - k, slots - 1)

    rec([], m, p)
    return torch.tensor(rows, dtype=torch.long)


def split_budget(n: int, lengths: Sequence[int]) -> list[int]:
    """Split ``n`` examples as evenly as possible over ``lengths`` (the first ones get the remainder)."""
    n = check_positive_int("n", n)
    lengths = [check_length(m) for m in lengths]
    if not lengths:
        raise ConfigError("lengths must not be empty")
    q, r = divmod(n, len(lengths))
    return [q + (1 if i < r else 0) for i in range(len(lengths))]


def train_seed(seed: int, m: int) -> int:
    """B.1.3: the generator of the training data of length m is seeded with ``seed·1009 + m``."""
    return check_positive_int("seed", seed, minimum=0) * 1009 + check_length(m)


def test_seed(seed: int, m: int) -> int:
    """B.1.3: the generator of the test data of length m is seeded with ``seed·2009 + m``."""
    return check_positive_int("seed", seed, minimum=0) * 2009 + check_length(m)


@dataclass
class Dataset:
    """Count vectors ``x`` [n, p] (float32), labels ``y`` [n] and lengths ``m`` [n]."""

    x: torch.Tensor
    y: torch.Tensor
    m: torch.Tensor

    def __len__(self) -> int:
        return int(self.y.shape[0])


def _shard(seed_value: int, n: int, m: int, p: int) -> tuple[torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(seed_value)
    tok = sample_tokens(n, m, p, g)
    return count_vectors(tok, p), labels_of(tok, p)


def train_set(seed: int, p: int, lengths: Sequence[int], n: int) -> Dataset:
    """The static multi-length training set of B.1.3 (also used with one length for B.1.1–B.1.2).

    The budget ``n`` is split evenly over ``lengths`` (:func:`split_budget`); the shard of length
    ``m`` is drawn by its own CPU generator seeded ``seed·1009 + m``, so within each m a smaller
    budget's shard is a prefix of a larger budget's. Shards are concatenated in the given order.
    """
    p = check_modulus(p)
    sizes = split_budget(n, lengths)
    xs, ys, ms = [], [], []
    for m, k in zip(lengths, sizes):
        if k == 0:
            continue
        x, y = _shard(train_seed(seed, m), k, m, p)
        xs.append(x); ys.append(y); ms.append(torch.full((k,), m, dtype=torch.long))
    return Dataset(torch.cat(xs), torch.cat(ys), torch.cat(ms))


def test_set(seed: int, p: int, m: int, n: int = 10_000) -> Dataset:
    """The fixed held-out set of length ``m`` (B.1.3): ``n`` i.i.d. tuples from generator ``seed·2009 + m``."""
    p, m = check_modulus(p), check_length(m)
    x, y = _shard(test_seed(seed, m), check_positive_int("n", n), m, p)
    return Dataset(x, y, torch.full((n,), m, dtype=torch.long))


# --------------------------------------------------------------------------- prediction and margins
def uargmax(scores: torch.Tensor, tol: float = 0.0) -> torch.Tensor:
    """Strict-uniqueness argmax over the last axis; ``-1`` where the top score is not unique.

    A top score counts as unique when it exceeds the runner-up by more than ``tol`` (``tol = 0``:
    exact strictness, as in the paper; the exact constructions are evaluated in float64 with a
    tiny ``tol`` that absorbs rounding, far below their smallest true gap).
    """
    check_finite("tol", tol, nonnegative=True)
    if scores.dim() == 0 or scores.shape[-1] < 2:
        raise ConfigError(f"scores need a last axis of at least 2 classes, got shape {tuple(scores.shape)}")
    top = scores.topk(2, dim=-1)
    unique = (top.values[..., 0] - top.values[..., 1]) > tol
    return torch.where(unique, top.indices[..., 0], torch.full_like(top.indices[..., 0], -1))


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
    """The ``q``-th percentile (B.1.2: q = 0.5) of the training margins, over the example axis.

    ``scores`` [..., n, p], ``y`` [..., n] → [...] (e.g. one value per ensemble member).
    Uses linear interpolation between order statistics (``torch.quantile``).
    """
    q = check_finite("q", q, nonnegative=True)
    if q > 100:
        raise ConfigError(f"q is a percentile in [0, 100], got {q!r}")
    g = margins(scores, y).double()
    return torch.quantile(g, q / 100.0, dim=-1)


def layer_norm_product(params: dict, activation: str) -> torch.Tensor:
    """The normaliser of Sec. 6: ``‖V‖_{1,∞}`` (max row ℓ1 norm) for sine, ``‖W‖_F ‖V‖_2`` for ReLU.

    ``params`` holds ``W`` [E, d, p] and ``V`` [E, p, d] (or unbatched [d, p], [p, d]); returns [E] (or a scalar).
    """
    check_activation(activation)
    W, V = params["W"].double(), params["V"].double()
    if activation == "sine":
        return V.abs().sum(-1).amax(-1)
    return torch.linalg.matrix_norm(W, "fro") * torch.linalg.matrix_norm(V, 2)


def normalized_margin(params: dict, x: torch.Tensor, y: torch.Tensor, activation: str, q: float = 0.5) -> torch.Tensor:
    """``γ^{q%}_train / norm`` (B.1.2, Sec. 6) for each member of a batched params dict.

    ``x`` [n, p] (shared) or [E, n, p]; ``y`` [n] or [E, n]. The norm is :func:`layer_norm_product`.
    """
    model = ModularMLP(p=params["V"].shape[-2], width=params["W"].shape[-2], activation=activation,
                       bias="b" in params)
    E = params["W"].shape[0]
    xb = x.unsqueeze(0).expand(E, *x.shape) if x.dim() == 2 else x
    yb = y.unsqueeze(0).expand(E, *y.shape) if y.dim() == 1 else y
    with torch.no_grad():
        s = model.forward(params, xb.to(params["W"].dtype))
    return percentile_margin(s, yb, q) / layer_norm_product(params, activation)


# --------------------------------------------------------------------------- the batched model
class ModularMLP:
    """``s(x) = V σ(W x + b)`` batched over ensemble members, for :mod:`lengthgen.engine.train`.

    Parameters ``W`` [E, d, p], ``V`` [E, p, d] and (``bias=True``) ``b`` [E, d], each member
    initialised i.i.d. N(0, ``init_std``²) from its own generator (B.1: std 0.01, float32).
    ``forward(params, x)`` maps count vectors ``x`` [E, B, p] to logits [E, B, p].
    """

    def __init__(self, p: int, width: int, activation: str = "sine", bias: bool = False, init_std: float = 0.01):
        self.p = check_modulus(p)
        self.width = check_positive_int("width", width)
        self.activation = check_activation(activation)
        if not isinstance(bias, bool):
            raise ConfigError(f"bias must be True or False, got {bias!r}")
        self.bias = bias
        self.init_std = check_finite("init_std", init_std, nonnegative=True)

    def init(self, seeds: Sequence[int], dtype=torch.float32, device="cpu") -> dict[str, torch.Tensor]:
        if isinstance(seeds, (str, bytes)) or not hasattr(seeds, "__len__") or len(seeds) == 0:
            raise ConfigError(f"seeds must be a non-empty sequence of integers, got {seeds!r}")
        Ws, Vs, bs = [], [], []
        for i, s in enumerate(seeds):
            g = torch.Generator().manual_seed(check_positive_int(f"seeds[{i}]", s, minimum=0))
            Ws.append(torch.randn(self.width, self.p, generator=g, dtype=torch.float64) * self.init_std)
            Vs.append(torch.randn(self.p, self.width, generator=g, dtype=torch.float64) * self.init_std)
            if self.bias:
                bs.append(torch.randn(self.width, generator=g, dtype=torch.float64) * self.init_std)
        out = {"W": torch.stack(Ws).to(device, dtype), "V": torch.stack(Vs).to(device, dtype)}
        if self.bias:
            out["b"] = torch.stack(bs).to(device, dtype)
        return out

    def hidden(self, params: dict, x: torch.Tensor) -> torch.Tensor:
        """Pre-activations ``W x + b``: [E, B, d]."""
        h = torch.bmm(x, params["W"].transpose(1, 2))
        if self.bias:
            h = h + params["b"].unsqueeze(1)
        return h

    def forward(self, params: dict, x: torch.Tensor) -> torch.Tensor:
        a = activate(self.hidden(params, x), self.activation)
        return torch.bmm(a, params["V"].transpose(1, 2))


# --------------------------------------------------------------------------- engine helpers
def masked_loss(out: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """Per-member mean cross-entropy ``[E]`` over the entries with ``y ≥ 0`` (``-1`` = padding)."""
    E, B, C = out.shape
    valid = (y >= 0)
    ce = F.cross_entropy(out.reshape(-1, C), y.clamp(min=0).reshape(-1), reduction="none").view(E, B)
    return (ce * valid).sum(1) / valid.sum(1).clamp(min=1)


def masked_metric(out: torch.Tensor, y: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """``(accuracy [E], cross-entropy [E])`` over non-padding entries; accuracy uses :func:`uargmax`."""
    valid = (y >= 0)
    correct = (uargmax(out) == y) & valid
    acc = correct.sum(1).double() / valid.sum(1).clamp(min=1)
    return acc, masked_loss(out, y).double()


def accuracy_of(out: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """Per-member strict-uniqueness accuracy ``[E]`` (a metric for ``evaluate_ensemble``)."""
    return masked_metric(out, y)[0]


class EpochSampler:
    """The engine's ``sample(step, generators, members)`` for static per-member training sets.

    Member e owns a training set ``(x_e, y_e)`` of ``n_e`` examples, reshuffled at the start of
    each of its epochs with its own generator (B.1: "reshuffle it at the start of every epoch");
    an epoch is ``ceil(n_e / batch_size)`` mini-batches, the last one possibly short. Batches
    are padded to ``batch_size`` with label ``-1`` (ignored by :func:`masked_loss`).
    """

    def __init__(self, datasets: Sequence[Dataset], batch_size: int = 1024, dtype=torch.float32):
        if not datasets:
            raise ConfigError("EpochSampler needs at least one dataset")
        self.batch = check_positive_int("batch_size", batch_size)
        self.n = [len(d) for d in datasets]
        nmax = max(self.n)
        p = datasets[0].x.shape[-1]
        self.B = min(self.batch, nmax)
        self.x = torch.zeros(len(datasets), nmax, p, dtype=dtype)
        self.y = torch.full((len(datasets), nmax), -1, dtype=torch.long)
        for e, d in enumerate(datasets):
            self.x[e, :len(d)] = d.x.to(dtype)
            self.y[e, :len(d)] = d.y
        self.perm: dict[int, torch.Tensor] = {}

    def steps_per_epoch(self, e: int) -> int:
        return -(-self.n[e] // self.batch)

    def __call__(self, step: int, generators, members=None):
        idx_rows, E = [], len(generators)
        members = list(range(E)) if members is None else [int(i) for i in members]
        for gen, e in zip(generators, members):
            spe = self.steps_per_epoch(e)
            k = step % spe
            if k == 0 or e not in self.perm:
                self.perm[e] = torch.randperm(self.n[e], generator=gen)
            sl = self.perm[e][k * self.batch:(k + 1) * self.batch]
            if sl.numel() < self.B:
                sl = torch.cat([sl, torch.full((self.B - sl.numel(),), -1, dtype=torch.long)])
            idx_rows.append(sl)
        idx = torch.stack(idx_rows)                       # [E, B], -1 = padding
        mem = torch.tensor(members).unsqueeze(1)
        safe = idx.clamp(min=0)
        x = self.x[mem, safe]
        y = torch.where(idx >= 0, self.y[mem, safe], torch.full_like(safe, -1))
        return x, y


# --------------------------------------------------------------------------- exact constructions
@dataclass
class Network:
    """One two-layer network ``s(x) = V σ(W x + b)`` (float64), e.g. an exact construction."""

    W: torch.Tensor            # [d, p]
    V: torch.Tensor            # [p, d]
    activation: str = "sine"
    b: torch.Tensor | None = None   # [d]
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
        return uargmax(self.scores(x), tol)

    def as_params(self, dtype=torch.float64) -> dict[str, torch.Tensor]:
        """A one-member params dict for :class:`ModularMLP` / the engine."""
        out = {"W": self.W[None].to(dtype), "V": self.V[None].to(dtype)}
        if self.b is not None:
            out["b"] = self.b[None].to(dtype)
        return out


def _readout(p: int) -> torch.Tensor:
    """``V_ℓ = (cos 2πℓ/p, sin 2πℓ/p)``: with hidden (cos φ, sin φ) the score is cos(φ − 2πℓ/p)."""
    ang = 2 * math.pi * torch.arange(p, dtype=torch.float64) / p
    return torch.stack([torch.cos(ang), torch.sin(ang)], 1)


def construct_fixed_length(m: int, p: int) -> Network:
    """Thm 4.1: a width-2 bias-free sine network that realises the sum mod p on length ``m``.

    ``W_{1v} = 2πv/p + π/(2m)`` and ``W_{2v} = 2πv/p``. On ``X_m``, ``W_1 x = 2πS/p + π/2`` (because
    ``Σ_v x_v = m``), so the hidden units are ``(cos 2πS/p, sin 2πS/p)`` with ``S = Σ_v v x_v``, and
    ``s_ℓ = cos(2π(S − ℓ)/p)`` peaks uniquely at ``ℓ ≡ S``.
    """
    m, p = check_length(m), check_modulus(p)
    base = 2 * math.pi * torch.arange(p, dtype=torch.float64) / p
    W = torch.stack([base + math.pi / (2 * m), base])
    v = torch.arange(p)
    N = torch.stack([4 * m * v + p, 4 * m * v])
    return Network(W, _readout(p), "sine", None, f"Thm 4.1 (m = {m})",
                   rational=(N, torch.zeros(2, dtype=torch.long), 4 * m * p))


def construct_with_bias(p: int) -> Network:
    """Thm 4.2 (with bias): width 2, ``W_{jv} = 2πv/p``, ``b = (π/2, 0)``; exact at every length."""
    p = check_modulus(p)
    base = 2 * math.pi * torch.arange(p, dtype=torch.float64) / p
    W = torch.stack([base, base])
    b = torch.tensor([math.pi / 2, 0.0], dtype=torch.float64)
    v = torch.arange(p)
    return Network(W, _readout(p), "sine", b, "Thm 4.2 (bias)",
                   rational=(torch.stack([4 * v, 4 * v]), torch.tensor([p, 0]), 4 * p))


def construct_fourier(p: int) -> Network:
    """Thm 4.2 (no bias): width ``K = ⌊(p−1)/2⌋``, ``W_{kv} = 2πkv/p``, ``V_{ℓk} = sin(2πkℓ/p)``.

    ``s_ℓ = Σ_k sin(2πkℓ/p) sin(2πkS/p) = (p/4)(1[ℓ ≡ S] − 1[ℓ ≡ −S])`` (our Lemma D.2), so the
    prediction is right unless ``S ≡ −S`` (mod p), where every score is 0 (a tie): accuracy
    ``1 − 1/p`` for odd p and ``1 − 2/p`` for even p, at every length. Needs ``p ≥ 3``.
    """
    p = check_modulus(p)
    K = (p - 1) // 2
    if K < 1:
        raise ConfigError(f"the bias-free Fourier construction needs p >= 3 (width ⌊(p−1)/2⌋ ≥ 1), got p = {p}")
    k = torch.arange(1, K + 1, dtype=torch.float64)
    v = torch.arange(p, dtype=torch.float64)
    W = 2 * math.pi * k[:, None] * v[None, :] / p
    V = torch.sin(2 * math.pi * v[:, None] * k[None, :] / p)
    N = (torch.arange(1, K + 1)[:, None] * torch.arange(p)[None, :]) % p
    return Network(W, V, "sine", None, "Thm 4.2 (no bias)", rational=(N, torch.zeros(K, dtype=torch.long), p))


def fourier_accuracy(p: int) -> float:
    """The population accuracy of :func:`construct_fourier`: ``1 − 1/p`` (odd p), ``1 − 2/p`` (even p)."""
    p = check_modulus(p)
    return 1 - (1 if p % 2 else 2) / p


def relu_kinks(m: int, p: int) -> list[float]:
    """Kink positions (in units of S) of :func:`construct_relu`: ``kp + p − 3/4`` and ``kp + p − 1/4`` below ``m(p−1)``."""
    m, p = check_length(m), check_modulus(p)
    N = m * (p - 1)
    out, k = [], 0
    while k * p + p - 0.75 < N:
        out.append(k * p + p - 0.75)
        if k * p + p - 0.25 < N:
            out.append(k * p + p - 0.25)
        k += 1
    return out


def construct_relu(m: int, p: int) -> Network:
    """An explicit bias-free ReLU network that interpolates ``X_m`` exactly (our construction).

    All units read ``S = Σ_v v x_v`` shifted by a multiple of ``m = Σ_v x_v`` (the bias-free way to
    place a kink at a fixed length): unit 0 is ``ReLU(m)`` with readout ``−ℓ²/(2m)``, unit 1 is
    ``ReLU(S)`` with readout ``ℓ``, and each kink ``c`` is ``ReLU(S − c·m/m)`` with readout ``∓2pℓ``.
    Along S the score ``F_ℓ`` is p-periodic and equals ``ℓj − ℓ²/2`` at ``S ≡ j``, whose unique
    maximiser is ``ℓ = j`` (margin 1/2). Width ``2 + 2⌈·⌉ ≈ 2m(p−1)/p + 2``: an upper bound to set
    against the lower bounds of Thm 4.3.
    """
    m, p = check_length(m), check_modulus(p)
    v = torch.arange(p, dtype=torch.float64)
    ell = torch.arange(p, dtype=torch.float64)
    kinks = relu_kinks(m, p)
    W = [torch.ones(p, dtype=torch.float64), v.clone()] + [v - c / m for c in kinks]
    V = [-(ell ** 2) / (2 * m), ell.clone()]
    for i, _ in enumerate(kinks):
        V.append((-2 * p if i % 2 == 0 else 2 * p) * ell)
    return Network(torch.stack(W), torch.stack(V, 1), "relu", None, f"ReLU interpolant (m = {m})")


# --------------------------------------------------------------------------- evaluation on every length
def accuracy_by_length(net: Network | None, p: int, max_m: int, n: int = 10_000, seed: int = 0,
                       lengths: Sequence[int] | None = None, tol: float = 1e-6, chunk: int = 250,
                       fixed_length_family: bool = False) -> dict:
    """Strict-uniqueness accuracy of ``net`` at every length ``m = 1 … max_m`` on ``n`` sampled inputs each.

    Vectorised with prefixes: row r draws one token sequence of length ``max_m``; its length-m
    input is the prefix of length m, so ``W x^{(m)} = Σ_{i≤m} W[:, s_i]`` is a cumulative sum.
    For each m the n rows are i.i.d. uniform m-tuples (the lengths share randomness, which does not
    matter for a per-length check). Returns ``acc`` [len], ``ties`` [len] (fraction of tied top
    scores), ``wrong_label`` [len] (fraction with a unique but wrong top score) and
    ``errors_outside_tie_residues`` (count of wrong predictions whose label is not a residue with
    ``S ≡ −S``; 0 for the Fourier network, as Lemma D.2 says) and ``lengths``.

    ``fixed_length_family=True`` evaluates, at each length m, the Thm 4.1 network *built for that
    m* (``net`` is ignored): its first row is ``W_0 + π/(2m)``, so ``W x = W_0 x + (π/(2m))·m``.
    """
    p, max_m = check_modulus(p), check_length(max_m)
    n, chunk = check_positive_int("n", n), check_positive_int("chunk", chunk)
    lens = list(range(1, max_m + 1)) if lengths is None else sorted({check_length(m) for m in lengths})
    if max(lens) > max_m:
        raise ConfigError(f"lengths go beyond max_m = {max_m}")
    if fixed_length_family:
        base = construct_with_bias(p)
        W, V, b, act = base.W, base.V, None, "sine"
    else:
        if not isinstance(net, Network) or net.p != p:
            raise ConfigError(f"net must be a Network with p = {p} classes")
        W, V, b, act = net.W, net.V, net.b, net.activation
    sel = torch.tensor(lens) - 1
    mm = torch.tensor(lens, dtype=torch.float64)
    g = torch.Generator().manual_seed(check_positive_int("seed", seed, minimum=0))
    correct = torch.zeros(len(lens)); ties = torch.zeros(len(lens)); wrong = torch.zeros(len(lens))
    outside = 0
    tie_frac = torch.zeros(len(lens))
    tie_res = torch.zeros(p, dtype=torch.bool)
    r = torch.arange(p)
    tie_res[(2 * r) % p == 0] = True
    Wt = W.T.contiguous()                                   # [p, d]
    for lo in range(0, n, chunk):
        k = min(chunk, n - lo)
        tok = torch.randint(0, p, (k, max_m), generator=g)
        S = tok.cumsum(1)[:, sel]                           # [k, L] token sums
        y = S.remainder(p)
        h = Wt[tok].cumsum(1)[:, sel]                       # [k, L, d]  = W x^(m)
        if fixed_length_family:
            h = h.clone()
            h[..., 0] += math.pi / 2                        # π/(2m)·m, the Thm 4.1 offset
        elif b is not None:
            h = h + b
        s = activate(h, act) @ V.T                          # [k, L, p]
        pred = uargmax(s, tol)
        ok = pred == y
        correct += ok.sum(0); ties += (pred < 0).sum(0); wrong += ((pred >= 0) & ~ok).sum(0)
        outside += int((~ok & ~tie_res[y]).sum())
        tie_frac += tie_res[y].sum(0)
    return {"lengths": lens, "acc": (correct / n).tolist(), "ties": (ties / n).tolist(),
            "wrong_label": (wrong / n).tolist(), "errors_outside_tie_residues": outside, "n": n,
            "tie_residue_frac": (tie_frac / n).tolist()}


def phase_automaton(N: torch.Tensor, beta: torch.Tensor, D: int, max_states: int = 200_000):
    """The first layer of a sine network with rational phases as a finite automaton (exact).

    With ``W = 2πN/D`` and ``b = 2πβ/D`` the pre-activation of an input is ``2π(N x + β)/D`` and
    ``sin`` only sees it modulo 2π, i.e. the integer residue vector ``ρ(x) = (N x + β) mod D``.
    Reading token v rotates every neuron by ``N[:, v]``: ``ρ ← (ρ + N[:, v]) mod D``. This walks
    on the finite set of residue vectors reachable from β; we enumerate it by breadth-first
    search. Returns ``(states [K, d], trans [K, p], start)``: ``trans[k, v]`` is the state after
    reading v in state k, ``start`` the state of the empty input.
    """
    N = torch.as_tensor(N, dtype=torch.long)
    beta = torch.as_tensor(beta, dtype=torch.long)
    D = check_positive_int("D", D)
    cols = [tuple(c) for c in N.T.remainder(D).tolist()]
    start = tuple(beta.remainder(D).tolist())
    ids = {start: 0}
    states = [start]
    trans: list[list[int]] = []
    i = 0
    while i < len(states):
        st = states[i]
        row = []
        for c in cols:
            nxt = tuple((a + b) % D for a, b in zip(st, c))
            j = ids.get(nxt)
            if j is None:
                j = ids[nxt] = len(states)
                states.append(nxt)
                if len(states) > max_states:
                    raise ConfigError(f"the phase automaton has more than {max_states} states")
            row.append(j)
        trans.append(row)
        i += 1
    return torch.tensor(states, dtype=torch.long), torch.tensor(trans, dtype=torch.long), 0


def automaton_accuracy(net: Network, p: int, max_m: int, n: int = 10_000, seed: int = 0, tol: float = 1e-9,
                       chunk: int = 2_000, fixed_length_family: bool = False) -> dict:
    """Exact strict-uniqueness accuracy at every length ``1 … max_m`` on ``n`` sampled inputs each.

    Each sampled token sequence is run through :func:`phase_automaton` (exact integer phases), and
    the readout ``V sin(2πρ/D)`` is computed once per reachable hidden state in float64. So the
    first layer involves no rounding at all, whatever the length; only the p-way readout of a
    handful of states does (``tol`` absorbs its 1e-16 noise; true gaps are ≥ 1 − cos(2π/p)).
    Same return dict as :func:`accuracy_by_length`.

    ``fixed_length_family=True``: at each m, the Thm 4.1 network built for that m. Its pre-activation
    is ``2π(4mS + p·m)/(4mp) = 2π(4S + p)/(4p)`` on ``X_m``, i.e. exactly the state of the biased
    network of Thm 4.2, whose automaton is used (``net`` is ignored).
    """
    p, max_m = check_modulus(p), check_length(max_m)
    n, chunk = check_positive_int("n", n), check_positive_int("chunk", chunk)
    if fixed_length_family:
        net = construct_with_bias(p)
    if not isinstance(net, Network) or net.rational is None or net.activation != "sine" or net.p != p:
        raise ConfigError("automaton_accuracy needs a sine Network with rational phases and p classes")
    Nm, beta, D = net.rational
    states, trans, start = phase_automaton(Nm, beta, D)
    hidden = torch.sin(2 * math.pi * states.double() / D)
    table = uargmax(hidden @ net.V.T, tol)                 # prediction of each hidden state
    g = torch.Generator().manual_seed(check_positive_int("seed", seed, minimum=0))
    r = torch.arange(p)
    tie_res = (2 * r) % p == 0
    correct = torch.zeros(max_m); ties = torch.zeros(max_m); wrong = torch.zeros(max_m)
    tie_frac = torch.zeros(max_m)
    outside = 0
    for lo in range(0, n, chunk):
        k = min(chunk, n - lo)
        tok = torch.randint(0, p, (k, max_m), generator=g)
        y = tok.cumsum(1).remainder(p)
        sid = torch.full((k,), start, dtype=torch.long)
        pred = torch.empty(k, max_m, dtype=torch.long)
        for j in range(max_m):
            sid = trans[sid, tok[:, j]]
            pred[:, j] = table[sid]
        ok = pred == y
        correct += ok.sum(0); ties += (pred < 0).sum(0); wrong += ((pred >= 0) & ~ok).sum(0)
        tie_frac += tie_res[y].sum(0)
        outside += int((~ok & ~tie_res[y]).sum())
    return {"lengths": list(range(1, max_m + 1)), "acc": (correct / n).tolist(), "ties": (ties / n).tolist(),
            "wrong_label": (wrong / n).tolist(), "errors_outside_tie_residues": outside, "n": n,
            "tie_residue_frac": (tie_frac / n).tolist(), "states": int(states.shape[0])}


def exhaustive_accuracy(net: Network, m: int, tol: float = 1e-6) -> dict:
    """Accuracy of ``net`` over all ``p^m`` ordered inputs of length m (each tuple weighted once)."""
    p = net.p
    tok = all_inputs(m, p)
    x = count_vectors(tok, p, torch.float64)
    pred = net.predict(x, tol)
    y = labels_of(tok, p)
    return {"m": m, "p": p, "inputs": int(tok.shape[0]), "acc": float((pred == y).double().mean()),
            "ties": float((pred < 0).double().mean())}


# --------------------------------------------------------------------------- ReLU limits (Thms 4.3, 4.4)
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
    x[:, 0] = m - t
    x[:, 1] += t
    return x


def path_kinks(net: Network, m: int) -> list[float]:
    """Kinks of a ReLU network along the path ``x(t)``, t ∈ [0, m]: the zeros of each unit's affine pre-activation."""
    if net.activation != "relu":
        raise ConfigError("path_kinks applies to ReLU networks")
    m = check_length(m)
    a = net.W[:, 0] * m + (net.b if net.b is not None else 0)     # pre-activation at t = 0
    slope = net.W[:, 1] - net.W[:, 0]
    out = []
    for a_j, s_j in zip(a.tolist(), slope.tolist()):
        if s_j != 0:
            t = -a_j / s_j
            if 0 < t < m:
                out.append(t)
    return sorted(out)


def homogeneous_pairs(m1: int, m2: int, p: int) -> dict:
    """Thm 4.4 (bias-free ReLU): inputs of lengths m1 and m2 on the same ray, with different labels.

    With ``g = gcd(m1, m2)`` and any ``z ∈ X_g``, the inputs ``(m1/g) z ∈ X_{m1}`` and
    ``(m2/g) z ∈ X_{m2}`` point in the same direction, so a positively homogeneous network
    (``s(λx) = λ s(x)``) predicts the same label for both; their labels differ by
    ``S(z)(m2 − m1)/g`` (mod p). Returns the conflicting pairs for ``z = (g−1)e_0 + e_v``.
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


# --------------------------------------------------------------------------- geometry for the explorer
def phases(W: torch.Tensor) -> torch.Tensor:
    """First-layer phases ``W_{jv} mod 2π`` ([d, p]): where token v puts neuron j on the unit circle."""
    return torch.remainder(W.double(), 2 * math.pi)


def dominant_frequency(W: torch.Tensor, p: int) -> torch.Tensor:
    """For each neuron j, the frequency k that best explains ``e^{iW_{jv}}`` as ``e^{i(2πkv/p + c)}`` ([d])."""
    p = check_modulus(p)
    z = torch.exp(1j * W.double())                                  # [d, p]
    v = torch.arange(p, dtype=torch.float64)
    k = torch.arange(p, dtype=torch.float64)
    basis = torch.exp(-2j * math.pi * k[:, None] * v[None, :] / p)  # [p(k), p(v)]
    return (z @ basis.T).abs().argmax(-1)


# --------------------------------------------------------------------------- training through the engine
def padded_sets(datasets: Sequence[Dataset], dtype=torch.float32) -> tuple[torch.Tensor, torch.Tensor]:
    """Stack per-member datasets into ``x`` [E, n_max, p] and ``y`` [E, n_max] (label ``-1`` = padding)."""
    if not datasets:
        raise ConfigError("need at least one dataset")
    nmax, p = max(len(d) for d in datasets), datasets[0].x.shape[-1]
    x = torch.zeros(len(datasets), nmax, p, dtype=dtype)
    y = torch.full((len(datasets), nmax), -1, dtype=torch.long)
    for e, d in enumerate(datasets):
        x[e, :len(d)] = d.x.to(dtype)
        y[e, :len(d)] = d.y
    return x, y


def fit(model: ModularMLP, datasets: Sequence[Dataset], *, optim, steps: int, seeds: Sequence[int],
        batch_size: int = 1024, progress: bool = False, desc: str = "ch4", device=None, record_every: int = 10,
        validation=None):
    """Train one ensemble of ``model`` (member e: init seed ``seeds[e]``, training set ``datasets[e]``).

    Mini-batches of ``batch_size`` with per-epoch reshuffling (:class:`EpochSampler`, reshuffled
    by a generator seeded like the member), cross-entropy on the logits (:func:`masked_loss`),
    the optimizer of ``optim`` (an :class:`lengthgen.engine.train.OptimConfig`), ``steps`` updates, all
    through :func:`lengthgen.engine.train.train_ensemble` (``validation``: an optional
    :class:`lengthgen.engine.train.Validation`, e.g. to record accuracy on a long-length bank during
    training). Returns the engine's ``TrainResult``.
    """
    from lengthgen.engine.train import train_ensemble

    if len(seeds) != len(datasets):
        raise ConfigError(f"{len(seeds)} seeds for {len(datasets)} datasets")
    params = model.init(list(seeds))
    if device is not None:
        from lengthgen.config import get_device
        params = {k: v.to(get_device(device)) for k, v in params.items()}
    sampler = EpochSampler(datasets, batch_size)
    return train_ensemble(model, params, sample=sampler, loss=masked_loss, optim=optim, steps=steps,
                          data_seeds=[int(s) for s in seeds], progress=progress, desc=desc,
                          record_every=record_every, device=device, validation=validation)


def accuracy_on(model: ModularMLP, params: dict, datasets: Sequence[Dataset] | Dataset, chunk: int = 4096) -> torch.Tensor:
    """Strict-uniqueness accuracy ``[E]``: member e on ``datasets[e]`` (or all members on one shared set)."""
    from lengthgen.engine.train import evaluate_ensemble

    if isinstance(datasets, Dataset):
        return evaluate_ensemble(model, params, {0: (datasets.x, datasets.y)}, metric=accuracy_of,
                                 batch_size=chunk)[0]
    x, y = padded_sets(datasets)
    with torch.no_grad():
        out = model.forward({k: v.to("cpu") for k, v in params.items()}, x)
    return masked_metric(out, y)[0]


def train_margins(model: ModularMLP, params: dict, datasets: Sequence[Dataset], q: float = 0.5) -> dict:
    """Per member: the q-th percentile training margin, the layer norm of Sec. 6 and their ratio."""
    x, y = padded_sets(datasets)
    params = {k: v.to("cpu") for k, v in params.items()}
    with torch.no_grad():
        out = model.forward(params, x)
    gam = torch.stack([percentile_margin(out[e][y[e] >= 0], y[e][y[e] >= 0], q) for e in range(len(datasets))])
    norm = layer_norm_product(params, model.activation)
    return {"margin": gam.tolist(), "norm": norm.tolist(), "normalized": (gam / norm).tolist()}
