"""Chapter 4: training the MLPs through the ensemble engine (:func:`fit`; section "Training:
protocol and budget", App. B.1) and the margins of Sec. 6 / B.1.2 (section "Claim 4")."""

from __future__ import annotations

from typing import Sequence

import torch
import torch.nn.functional as F

from lengthgen.chapters.ch4.data import Dataset, ModularMLP, check_activation, split_budget, uargmax
from lengthgen.chapters.ch4.paper import BATCH_SIZE, NS_DTYPE
from lengthgen.config import ConfigError, check_choice, check_positive_int
from lengthgen.config import get_device
from lengthgen.engine import train as engine
from lengthgen.engine.optim import OptimConfig
from lengthgen.engine.runs import note_device


def resolve_device(device) -> torch.device:
    """A ``torch.device`` as given (tests use ``"meta"``), else :func:`.config.get_device`."""
    return device if isinstance(device, torch.device) else get_device(device)


# --------------------------------------------------------------------------- data, loss, metric, sampler
def padded_sets(datasets: Sequence[Dataset], dtype=torch.float32):
    """Stack per-member datasets into ``x`` [E, n_max, p] and ``y`` [E, n_max] (label ``-1`` = padding)."""
    nmax = max(len(d) for d in datasets)
    x = torch.zeros(len(datasets), nmax, *datasets[0].x.shape[1:], dtype=dtype)
    y = torch.full((len(datasets), nmax), -1, dtype=torch.long)
    for e, d in enumerate(datasets):
        x[e, : len(d)], y[e, : len(d)] = d.x.to(dtype), d.y
    return x, y


def masked_loss(out: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """Per-member mean cross-entropy ``[E]`` over the entries with ``y ≥ 0`` (``-1`` = padding)."""
    E, B, C = out.shape
    valid = y >= 0
    ce = F.cross_entropy(out.reshape(-1, C), y.clamp(min=0).reshape(-1), reduction="none")
    return (ce.view(E, B) * valid).sum(1) / valid.sum(1).clamp(min=1)


def masked_metric(out: torch.Tensor, y: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """``(accuracy [E], cross-entropy [E])`` over non-padding entries; accuracy uses :func:`uargmax`."""
    valid = y >= 0
    correct = (uargmax(out) == y) & valid
    return correct.sum(1).double() / valid.sum(1).clamp(min=1), masked_loss(out, y).double()


class EpochSampler:
    """The engine's ``sample(step, generators, members)``, mixed-length batches: each epoch member
    e's set is reshuffled by its own generator (B.1) and cut into batches (padding: label -1)."""

    def __init__(self, datasets, batch_size=BATCH_SIZE, dtype=torch.float32):
        self.batch = check_positive_int("batch_size", batch_size)
        self.n = [len(d) for d in datasets]
        self.B = min(self.batch, max(self.n))
        self.x, self.y = padded_sets(datasets, dtype)
        self.perm: dict[int, torch.Tensor] = {}

    def steps_per_epoch(self, e: int) -> int:
        """Mini-batches per epoch of member ``e``."""
        return -(-self.n[e] // self.batch)

    def _indices(self, e: int, k: int, gen) -> torch.Tensor:
        """Member ``e``'s example indices for batch ``k`` of its epoch (reshuffled when ``k = 0``)."""
        if k == 0 or e not in self.perm:
            self.perm[e] = torch.randperm(self.n[e], generator=gen)
        return self.perm[e][k * self.batch : (k + 1) * self.batch]

    def __call__(self, step: int, generators, members=None):
        members = range(len(generators)) if members is None else [int(i) for i in members]
        rows = []
        for gen, e in zip(generators, members):
            sl = self._indices(e, step % self.steps_per_epoch(e), gen)
            rows.append(torch.cat([sl, torch.full((self.B - sl.numel(),), -1, dtype=torch.long)]))
        idx = torch.stack(rows)  # [E, B], -1 = padding
        mem, safe = torch.tensor(list(members)).unsqueeze(1), idx.clamp(min=0)
        y = torch.where(idx >= 0, self.y[mem, safe], torch.full_like(safe, -1))
        return self.x[mem, safe], y


class LengthEpochSampler(EpochSampler):
    """Single-length mini-batches, as in the authors' released loop: an epoch walks the training
    lengths in order, each shard reshuffled and cut into ``ceil(n_m / batch_size)`` batches."""

    def __init__(self, datasets, batch_size=BATCH_SIZE, dtype=torch.float32):
        super().__init__(datasets, batch_size, dtype)
        self.shards = [  # per member: the example indices of each length, in order
            [torch.nonzero(d.m == L).flatten() for L in dict.fromkeys(d.m.tolist())]
            for d in datasets
        ]
        self.plan = [
            [(j, k) for j, ix in enumerate(sh) for k in range(-(-len(ix) // self.batch))]
            for sh in self.shards
        ]
        self.B = min(self.batch, max(len(ix) for sh in self.shards for ix in sh))
        self.shard_perm: dict[int, list[torch.Tensor]] = {}

    def steps_per_epoch(self, e: int) -> int:
        return len(self.plan[e])

    def _indices(self, e: int, k: int, gen) -> torch.Tensor:
        """Batch ``k`` of member ``e``'s epoch: a chunk of one length's shard (reshuffled at k = 0)."""
        if k == 0 or e not in self.shard_perm:
            self.shard_perm[e] = [
                ix[torch.randperm(len(ix), generator=gen)] for ix in self.shards[e]
            ]
        j, c = self.plan[e][k]
        return self.shard_perm[e][j][c * self.batch : (c + 1) * self.batch]


#: :func:`fit`'s samplers: mixed-length batches (our stored runs) or single-length (released loop)
SAMPLERS = {"mixed": EpochSampler, "by_length": LengthEpochSampler}


def updates_per_epoch(n, lengths, batch_size=BATCH_SIZE, by_length=True) -> int:
    """Updates per epoch of budget ``n`` split over ``lengths``: ``Σ_m ceil(n_m / batch_size)``
    with single-length batches, else ``ceil(n / batch_size)``."""
    return sum(-(-k // batch_size) for k in (split_budget(n, lengths) if by_length else [n]))


# --------------------------------------------------------------------------- optimizers of B.1
def b1_optimizer(name: str, lr, wds, activation: str, bias: bool) -> OptimConfig:
    """B.1: AdamW, Muon (the bias trained by AdamW without decay) or B.1.1's vanilla SGD (Fig. 9)
    with decoupled decay on V (sine) or on W and V (ReLU); ``lr``, ``wds`` may be one per member."""
    check_choice("optimizer", name, ("adamw", "muon", "sgd"))
    decay = ["V"] if check_activation(activation) == "sine" else ["W", "V"]
    kw = dict(lr=lr, weight_decay=wds, decay=decay)
    if name == "muon":
        kw.update(muon_params=["W", "V"], ns_dtype=NS_DTYPE, adamw_params=["b"] if bias else ())
    return OptimConfig(name, **kw)


# --------------------------------------------------------------------------- training and evaluation
def fit(model, datasets, *, seeds, batch_size=BATCH_SIZE, device="cpu", sampler="mixed", **train):
    """Train one ensemble of ``model`` (member e: seed ``seeds[e]``, data ``datasets[e]``) on
    :func:`masked_loss` by :func:`.train.train_ensemble` (``train``: ``optim``, ``steps``, …)."""
    if len(seeds) != len(datasets):
        raise ConfigError(f"{len(seeds)} seeds for {len(datasets)} datasets")
    sample = SAMPLERS[check_choice("sampler", sampler, tuple(SAMPLERS))](datasets, batch_size)
    dev = resolve_device(device)
    note_device(dev)
    kw = {"loss": masked_loss, "progress": False, "desc": "ch4", "record_every": 10, **train}
    kw.update(sample=sample, data_seeds=[int(s) for s in seeds])
    return engine.train_ensemble(model, model.init(list(seeds), device=dev), **kw)


def accuracy_on(model, params: dict, datasets, chunk: int = 4096, device=None) -> torch.Tensor:
    """Strict-uniqueness accuracy ``[E]`` (CPU) of member e on ``datasets[e]`` or one shared set."""
    dev = next(iter(params.values())).device if device is None else resolve_device(device)
    params = {k: v.to(dev) for k, v in params.items()}
    if isinstance(datasets, Dataset):
        bank = {0: (datasets.x, datasets.y)}
        acc = lambda out, y: masked_metric(out, y)[0]  # noqa: E731
        return engine.evaluate_ensemble(model, params, bank, metric=acc, batch_size=chunk)[0]
    x, y = padded_sets(datasets)
    note_device(dev)
    with torch.no_grad():
        out = model.forward(params, x.to(dev))
    return masked_metric(out, y.to(dev))[0].cpu()


def fit_columns(model: ModularMLP, train, tests, *, margins: bool = False, **fit_kw) -> list[dict]:
    """:func:`fit` on ``train``, then per member e ``train_acc``, ``test_acc`` (on ``train[e]``,
    ``tests[e]``) and, with ``margins``, :func:`train_margins` (sections "Claim 3", "Claim 4")."""
    P, dev = fit(model, train, **fit_kw).final_params, fit_kw.get("device", "cpu")
    tr, te = (accuracy_on(model, P, d, device=dev).tolist() for d in (train, tests))
    cols = [{"train_acc": a, "test_acc": b} for a, b in zip(tr, te)]
    if margins:
        mg = train_margins(model, P, train, device=fit_kw.get("device"))
        for c, g, n, r in zip(cols, mg["margin"], mg["norm"], mg["normalized"]):
            c.update(margin=g, norm=n, normalized_margin=r)
    return cols


# --------------------------------------------------------------------------- margins (Sec. 6, B.1.2)
def margins(scores: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """The multiclass margin ``s_y(x) − max_{ℓ≠y} s_ℓ(x)`` of each example (negative = wrong)."""
    if scores.shape[:-1] != y.shape:
        raise ConfigError(f"scores {tuple(scores.shape)} and labels {tuple(y.shape)} disagree")
    y = y.long()
    sy = scores.gather(-1, y.unsqueeze(-1)).squeeze(-1)
    return sy - scores.scatter(-1, y.unsqueeze(-1), float("-inf")).amax(-1)


def percentile_margin(scores: torch.Tensor, y: torch.Tensor, q: float = 0.5) -> torch.Tensor:
    """The ``q``-th percentile (B.1.2: q = 0.5) of the training margins over the example axis
    (``torch.quantile``): ``scores`` [..., n, p], ``y`` [..., n] → [...]."""
    return torch.quantile(margins(scores, y).double(), q / 100.0, dim=-1)


def layer_norm_product(params: dict, activation: str) -> torch.Tensor:
    """The Sec. 6 normaliser: ``‖V‖_{1,∞}`` (max row ℓ1 norm) for sine, ``‖W‖_F ‖V‖_2`` for ReLU."""
    W, V = params["W"].double(), params["V"].double()
    if check_activation(activation) == "sine":
        return V.abs().sum(-1).amax(-1)
    return torch.linalg.matrix_norm(W, "fro") * torch.linalg.matrix_norm(V, 2)


def train_margins(model, params, datasets, q=0.5, device=None) -> dict:
    """Per member e on ``datasets[e]``: the q-th percentile margin, the layer norm of Sec. 6 and
    their ratio, the normalized margin (on ``device``; default: where ``params`` live)."""
    x, y = padded_sets(datasets)
    dev = next(iter(params.values())).device if device is None else resolve_device(device)
    note_device(dev)
    params = {k: v.to(dev) for k, v in params.items()}
    with torch.no_grad():
        out, y = model.forward(params, x.to(dev)), y.to(dev)
    gam = torch.stack([percentile_margin(o[t >= 0], t[t >= 0], q) for o, t in zip(out, y)])
    norm = layer_norm_product(params, model.activation)
    return {"margin": gam.tolist(), "norm": norm.tolist(), "normalized": (gam / norm).tolist()}
