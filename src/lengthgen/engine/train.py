"""The ensemble engine (book page ``book/engine.md``): E models trained as one vectorised program.
A *model* has ``init(seeds, dtype, device)`` and a hand-batched ``forward(params, x) -> Tensor[E,
B, ...]``, its parameters stacked along a leading member dimension (:func:`members_of`,
:func:`select_members`, :func:`seeded_generators`). :func:`train_ensemble` (:class:`Validation`
for early stopping and checkpoint selection), :func:`evaluate_ensemble`. Member e reads only its
own tensors, data stream and hyperparameters, so the ensemble equals E separate trainings up to
rounding (``tests/test_train.py``)."""

from __future__ import annotations

import inspect
import itertools
import math
import time
from dataclasses import dataclass
from typing import Any, Callable, Mapping, Sequence

import torch
import torch.nn.functional as F

from lengthgen.config import ConfigError, check_choice, check_positive_int, check_seeds, get_device
from lengthgen.engine.optim import EnsembleOptimizer, OptimConfig, clip_grad_norm_
from lengthgen.engine.runs import note_device, progress_bar


# --------------------------------------------------------------------------- pytrees of tensors
def _tree_map(fn, obj):
    if isinstance(obj, torch.Tensor):
        return fn(obj)
    if isinstance(obj, tuple) and hasattr(obj, "_fields"):
        return type(obj)(*(_tree_map(fn, o) for o in obj))
    if isinstance(obj, (tuple, list)):
        return type(obj)(_tree_map(fn, o) for o in obj)
    if isinstance(obj, Mapping):
        return {k: _tree_map(fn, v) for k, v in obj.items()}
    return obj


def _tree_leaves(obj) -> list[torch.Tensor]:
    out: list[torch.Tensor] = []
    _tree_map(lambda t: out.append(t) or t, obj)
    return out


def seeded_generators(seeds: Sequence[int], device="cpu") -> list[torch.Generator]:
    """One ``torch.Generator`` per seed (``manual_seed(seed)``): per-member init or data streams."""
    return [torch.Generator(device=device).manual_seed(s) for s in check_seeds(seeds)]


def members_of(params: Mapping[str, torch.Tensor]) -> int:
    """The ensemble size E of a params dict (checking every tensor has the same leading dim)."""
    if not isinstance(params, Mapping) or not params:
        raise ValueError("params must be a non-empty dict of tensors [E, ...]")
    for name, t in params.items():
        if not isinstance(t, torch.Tensor) or t.dim() == 0:
            got = f"shape {tuple(t.shape)}" if isinstance(t, torch.Tensor) else type(t).__name__
            raise ValueError(f"parameter {name!r} must be a tensor [E, ...], got {got}")
    sizes = {name: int(t.shape[0]) for name, t in params.items()}
    if len(set(sizes.values())) != 1:
        raise ValueError(f"parameters disagree on the number of members: {sizes}")
    return next(iter(sizes.values()))


def select_members(params: Mapping[str, torch.Tensor], index) -> dict[str, torch.Tensor]:
    """The sub-ensemble ``index`` (ints or a long tensor) of a params dict, as new tensors."""
    E = members_of(params)
    idx = torch.as_tensor(index, dtype=torch.long)
    if idx.dim() != 1 or (idx.numel() and (int(idx.min()) < 0 or int(idx.max()) >= E)):
        raise ValueError(f"member index must be a 1-D list of integers in [0, {E}), got {index!r}")
    return {k: v.detach().index_select(0, idx.to(v.device)).clone() for k, v in params.items()}


def _check_model(model) -> None:
    if not callable(getattr(model, "forward", None)):
        raise TypeError(f"model must have a forward(params, x) method; got {type(model).__name__}")


def _params_device(params) -> torch.device:
    devs = {t.device for t in params.values()}
    if len(devs) != 1:
        raise ValueError(f"parameters live on several devices: {sorted(map(str, devs))}")
    return devs.pop()


# --------------------------------------------------------------------------- losses and metrics
def _classes(out: torch.Tensor, y: torch.Tensor) -> bool:
    """Whether ``out`` [E, B, C] holds class scores for labels [E, B] (else binary logits)."""
    if out.dim() == y.dim() + 1 or out.shape == y.shape:
        return out.dim() == y.dim() + 1
    raise ValueError(
        f"cannot match outputs of shape {tuple(out.shape)} with labels of shape {tuple(y.shape)}: "
        "expected [E, B, C] with [E, B] (classes) or [E, B] with [E, B] (binary logits)"
    )


def classification_loss(out: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """Per-member mean cross-entropy ``[E]`` (class scores or binary logits, :func:`_classes`)."""
    if _classes(out, y):
        E, C = out.shape[0], out.shape[-1]
        ce = F.cross_entropy(out.reshape(-1, C), y.reshape(-1).long(), reduction="none")
        return ce.view(E, -1).mean(1)
    bce = F.binary_cross_entropy_with_logits(out, y.to(out.dtype), reduction="none")
    return bce.reshape(out.shape[0], -1).mean(1)


def accuracy(out: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """Per-member fraction of correct predictions ``[E]`` (argmax, or logit > 0 for binary)."""
    pred = out.argmax(-1) if _classes(out, y) else (out > 0).long()
    correct = (pred == y.long()).to(torch.float64)
    return correct.reshape(correct.shape[0], -1).mean(1)


def classification_metric(out: torch.Tensor, y: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """``(accuracy [E], cross-entropy [E])``: the default validation metric."""
    return accuracy(out, y), classification_loss(out, y).to(torch.float64)


METRICS = {"accuracy": accuracy, "cross_entropy": classification_loss}


# --------------------------------------------------------------------------- configuration
@dataclass(frozen=True)
class Validation:
    """Validation, early stopping and checkpoint selection per member (Zhu & Chiang D.2): every
    ``every`` updates and after the last, members are scored on ``bank`` (x, y) by ``metric(out,
    y) -> (accuracy [E], loss [E])``; a member stops after ``patience`` perfect validations in a
    row; the checkpoint kept has the highest accuracy, then lower loss, then earlier update."""

    every: int
    bank: Any
    patience: int | None = 3
    metric: Callable | None = None
    per_member: bool = False
    batch_size: int | None = None

    def __post_init__(self):
        check_positive_int("validation every", self.every)
        if self.patience is not None:
            check_positive_int("patience", self.patience)
        if self.batch_size is not None:
            check_positive_int("validation batch_size", self.batch_size)
        if not (isinstance(self.bank, (tuple, list)) and len(self.bank) == 2):
            raise ConfigError("validation bank must be a pair (x, y)")
        if self.metric is not None and not callable(self.metric):
            raise ConfigError(f"validation metric must be callable, got {self.metric!r}")


@dataclass
class TrainResult:
    """What :func:`train_ensemble` returns (per-member tensors on the CPU): ``params`` the
    selected checkpoints, ``final_params`` the last ones; ``history`` ``loss`` [records, E] at
    updates ``step``, ``val_step``, ``val_acc``, ``val_loss`` (NaN once a member stopped);
    ``best_step`` / ``best_acc`` / ``best_loss`` of the checkpoint; ``stop_step`` per member."""

    params: dict[str, torch.Tensor]
    final_params: dict[str, torch.Tensor]
    history: dict[str, Any]
    best_step: torch.Tensor
    best_acc: torch.Tensor
    best_loss: torch.Tensor
    stop_step: torch.Tensor
    steps_run: int
    members: int
    wall_time_s: float
    device: str = "cpu"


# --------------------------------------------------------------------------- evaluation
def _batch(x, lo: int, hi: int, E: int, per_member: bool):
    """Examples ``lo:hi`` of a bank, one copy per member (a per-member bank has its own)."""
    if not per_member:
        return _tree_map(lambda t: t[lo:hi].unsqueeze(0).expand(E, hi - lo, *t.shape[1:]), x)
    for t in _tree_leaves(x):
        if t.shape[0] != E:
            raise ValueError(f"per-member bank has leading dim {t.shape[0]}, expected {E} members")
    return _tree_map(lambda t: t[:, lo:hi] if t.dim() > 1 else t, x)


@torch.no_grad()
def _evaluate(model, params, x, y, metric, E: int, per_member: bool, batch_size, device):
    """Example-weighted mean of ``metric`` over chunks of the bank; returns a tuple of [E] tensors."""
    x, y = _tree_map(lambda t: t.to(device), (x, y))
    dim = 1 if per_member else 0  # the examples' dimension
    sizes = {int(t.shape[dim]) for t in _tree_leaves(x) if t.dim() > dim}
    if len(sizes) != 1:
        raise ValueError(f"a bank's tensors must agree on the number of examples: {sorted(sizes)}")
    n = sizes.pop()
    bs = n if batch_size is None else batch_size
    totals = None
    for lo in range(0, n, bs):
        hi = min(n, lo + bs)
        xb, yb = (_batch(t, lo, hi, E, per_member) for t in (x, y))
        vals = metric(model.forward(params, xb), yb)
        vals = vals if isinstance(vals, tuple) else (vals,)
        vals = tuple(v.detach().to(torch.float64) * (hi - lo) for v in vals)
        totals = vals if totals is None else tuple(a + b for a, b in zip(totals, vals))
    return tuple(t / n for t in totals)


def evaluate_ensemble(
    model,
    params: Mapping[str, torch.Tensor],
    banks: Mapping,
    metric="accuracy",
    *,
    per_member: bool = False,
    batch_size: int | None = None,
    device=None,
) -> dict:
    """Every member on every bank of ``banks`` (``{key: (x, y)}``): ``{key: Tensor[E]}`` on the CPU.
    ``metric``: ``"accuracy"``, ``"cross_entropy"`` or a callable ``(out, y) -> Tensor[E]``."""
    _check_model(model)
    E = members_of(params)
    if isinstance(metric, str):
        metric = METRICS[check_choice("metric", metric, tuple(METRICS))]
    elif not callable(metric):
        raise ConfigError(f"metric must be 'accuracy', 'cross_entropy' or a callable: {metric!r}")
    if not isinstance(banks, Mapping) or not banks:
        raise ConfigError("banks must be a non-empty dict {key: (x, y)}")
    if batch_size is not None:
        check_positive_int("batch_size", batch_size)
    dev = _params_device(params) if device is None else get_device(device)
    note_device(dev)  # provenance: where the trained tensors live
    params = {k: v.detach().to(dev) for k, v in params.items()}
    for key, bank in banks.items():
        if not (isinstance(bank, (tuple, list)) and len(bank) == 2):
            raise ConfigError(f"bank {key!r} must be a pair (x, y)")
    evaluate = lambda x, y: _evaluate(model, params, x, y, metric, E, per_member, batch_size, dev)
    return {key: evaluate(*bank)[0].cpu() for key, bank in banks.items()}


def _accepts_members(fn) -> bool:
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return False
    return any(p.name == "members" or p.kind == p.VAR_KEYWORD for p in params)


# --------------------------------------------------------------------------- the engine
def train_ensemble(
    model,
    params: Mapping[str, torch.Tensor],
    *,
    sample: Callable,
    loss: Callable = classification_loss,
    optim: OptimConfig | None = None,
    steps: int,
    data_seeds: Sequence[int],
    validation: Validation | None = None,
    progress: bool = True,
    record_every: int = 1,
    device=None,
    desc: str = "train",
) -> TrainResult:
    """Train the E members of ``params`` (``[E, ...]``, copied) for up to ``steps`` updates:
    ``sample(step, generators) -> (x, y)`` draws a batch from one CPU generator per member still
    training (seeded by ``data_seeds``; a ``members`` keyword gets their indices); ``optim``
    defaults to Adam at lr 1e-3; ``validation`` selects checkpoints and stops members early."""
    # every argument by name (first statement: locals() holds only the arguments)
    E, steps, record_every, optim, gens, dev, names = _check_train_args(**locals())
    metric = getattr(validation, "metric", None) or classification_metric
    with_members = _accepts_members(sample)
    t0 = time.perf_counter()
    P = {k: v.detach().to(dev).clone().requires_grad_(k in names) for k, v in params.items()}
    opt = EnsembleOptimizer(optim, P, names)
    members = _Members(P, E, steps, validation)
    log = []  # (update, loss [active], active) of the recorded updates, on the device until the end
    bar = progress_bar(progress, steps, 0, desc)
    try:
        for step in range(steps):  # steps >= 1: ``step`` is bound after the loop
            n_act = int(members.active.numel())
            kw = {"members": members.active.clone()} if with_members else {}
            mine = gens if n_act == len(gens) else [gens[i] for i in members.active.tolist()]
            x, y = _tree_map(lambda t: t.to(dev), sample(step, mine, **kw))
            lvec = _update_step(model, P, names, opt, optim.clip, loss, x, y, n_act)
            done = step + 1
            if done % record_every == 0 or done == steps:
                log.append((done, lvec.detach(), members.active))
            if bar is not None:
                bar.update(1)
                if done % 50 == 0 or done == steps:
                    bar.set_postfix(training=f"{n_act}/{E}", refresh=False)
            if validation is not None and (done % validation.every == 0 or done == steps):
                members.validate(model, P, done, metric, dev)
                P = members.drop_stopped(P, names, opt, done, dev)
                if P is None:  # every member has stopped
                    break
    finally:
        if bar is not None:
            bar.close()
    steps_run = step + 1
    members.finish(P, steps_run, dev)
    return _train_result(members, log, steps_run, E, time.perf_counter() - t0, dev)


def _check_train_args(
    model, params, sample, loss, optim, steps, data_seeds, validation, record_every, device, **_
):
    """Check :func:`train_ensemble`'s arguments: ``(E, steps, record_every, optim, gens, device,
    trained names)``."""
    _check_model(model)
    E = members_of(params)
    steps = check_positive_int("steps", steps)
    record_every = check_positive_int("record_every", record_every)
    if not callable(sample):
        raise ConfigError(f"sample must be a callable (step, generators) -> (x, y), got {sample!r}")
    if not callable(loss):
        raise ConfigError(f"loss must be a callable loss(out, y) -> Tensor[E], got {loss!r}")
    optim = OptimConfig() if optim is None else optim
    if not isinstance(optim, OptimConfig):
        raise ConfigError(f"optim must be an OptimConfig, got {type(optim).__name__}")
    if validation is not None and not isinstance(validation, Validation):
        raise ConfigError(f"validation must be a Validation, got {type(validation).__name__}")
    seeds = check_seeds(data_seeds, "data_seeds")  # the one seeds check
    if len(seeds) != E:
        raise ConfigError(f"data_seeds has {len(seeds)} seeds but params have {E} members")
    gens = seeded_generators(seeds)
    names = [k for k in params if not k.startswith("_")]
    if not names:
        raise ConfigError("no trainable parameters (every name starts with '_')")
    for name in names:
        if not (t := params[name]).is_floating_point():
            raise ConfigError(f"trainable parameter {name!r} must be floating point ({t.dtype})")
    dev = _params_device(params) if device is None else get_device(device)
    note_device(dev)  # provenance: where the trained tensors live
    return E, steps, record_every, optim, gens, dev, names


def _update_step(model, P, names, opt, clip, loss, x, y, n_act: int) -> torch.Tensor:
    """One update of the ``n_act`` members in ``P`` (in place); returns their loss before it."""
    lvec = loss(model.forward(P, x), y)
    if not isinstance(lvec, torch.Tensor) or lvec.shape != (n_act,):
        got = getattr(lvec, "shape", type(lvec).__name__)
        raise ValueError(f"loss must return a per-member tensor of shape [{n_act}], not {got}")
    grads = torch.autograd.grad(lvec.sum(), [P[k] for k in names], allow_unused=True)
    grads = [torch.zeros_like(P[k]) if g is None else g for k, g in zip(names, grads)]
    if clip is not None:
        clip_grad_norm_(grads, clip)
    opt.step(P, dict(zip(names, grads)))
    return lvec


class _Members:
    """Per-member bookkeeping: ``active`` holds the original indices of the members training;
    ``final`` / ``stop_step`` / ``best*`` the stopped members' and selected checkpoints."""

    def __init__(self, P: Mapping[str, torch.Tensor], E: int, steps: int, validation):
        self.validation, self.steps = validation, steps
        self.active = torch.arange(E)
        self.final = {k: v.detach().to("cpu").clone() for k, v in P.items()}
        self.best = {k: v.clone() for k, v in self.final.items()}
        self.best_step = torch.zeros(E, dtype=torch.long)
        worst = (math.nan, math.nan) if validation is None else (-math.inf, math.inf)
        self.best_acc = torch.full((E,), worst[0], dtype=torch.float64)
        self.best_loss = torch.full((E,), worst[1], dtype=torch.float64)
        self.stop_step = torch.full((E,), steps, dtype=torch.long)
        self.perfect = torch.zeros(E, dtype=torch.long)
        self.val_step, self.val_acc, self.val_loss = [], [], []  # validation rows

    def validate(self, model, P, done: int, metric, dev) -> None:
        """Validate the training members after update ``done``; keep every improved checkpoint."""
        v, active = self.validation, self.active
        bx, by = v.bank
        if v.per_member:
            bx, by = _tree_map(lambda t: t.index_select(0, active.to(t.device)), (bx, by))
        vals = _evaluate(
            model, P, bx, by, metric, int(active.numel()), v.per_member, v.batch_size, dev
        )
        if len(vals) != 2:
            raise ValueError("the validation metric must return (accuracy [E], loss [E])")
        acc, vloss = (v.cpu() for v in vals)
        self.val_step.append(done)
        for rows, vals in ((self.val_acc, acc), (self.val_loss, vloss)):
            rows.append(torch.full(self.best_acc.shape, math.nan, dtype=torch.float64))
            rows[-1][active] = vals
        better = (acc > self.best_acc[active]) | (
            (acc == self.best_acc[active]) & (vloss < self.best_loss[active])
        )
        if bool(better.any()):
            idx = better.nonzero().flatten()
            orig = self._keep(self.best, P, idx, dev)
            self.best_acc[orig], self.best_loss[orig] = acc[idx], vloss[idx]
            self.best_step[orig] = done
        perfect = self.perfect[active]
        self.perfect[active] = torch.where(acc == 1.0, perfect + 1, torch.zeros_like(perfect))

    def _keep(self, into: dict, P, idx: torch.Tensor, dev) -> torch.Tensor:
        """Copy the training members at positions ``idx`` of ``P`` into ``into``; their indices."""
        orig = self.active[idx]
        for k in P:
            into[k][orig] = P[k].detach()[idx.to(dev)].cpu()
        return orig

    def drop_stopped(self, P, names, opt, done: int, dev):
        """Stop the members with ``patience`` perfect validations in a row (their parameters become
        final ones) and drop them from ``P`` and the optimizer; ``None`` once none is left."""
        if self.validation.patience is None:
            return P
        stop = self.perfect[self.active] >= self.validation.patience
        if not bool(stop.any()):
            return P
        self.stop_step[self._keep(self.final, P, stop.nonzero().flatten(), dev)] = done
        keep = (~stop).nonzero().flatten()
        self.active = self.active[keep]
        if keep.numel() == 0:
            return None
        opt.select(keep)
        kd = keep.to(dev)
        return {k: v.detach()[kd].clone().requires_grad_(k in names) for k, v in P.items()}

    def finish(self, P, steps_run: int, dev) -> None:
        """End of the loop: the members still training keep their parameters as final ones."""
        if n := int(self.active.numel()):
            self.stop_step[self._keep(self.final, P, torch.arange(n), dev)] = steps_run
        if self.validation is None:
            self.best = {k: v.clone() for k, v in self.final.items()}
            self.best_step = self.stop_step.clone()


def _train_result(members, log: list, steps_run: int, E: int, wall_time_s: float, dev):
    """The :class:`TrainResult` of a finished training; the training losses (NaN for a stopped
    member) recorded with the same members move to the CPU in one transfer."""
    loss = torch.full((len(log), E), math.nan, dtype=torch.float64)
    i = 0
    for _, rows in itertools.groupby(log, key=lambda r: id(r[2])):
        rows = list(rows)
        loss[i : i + len(rows), rows[0][2]] = torch.stack([lv for _, lv, _ in rows]).to(loss)
        i += len(rows)
    stack = lambda xs: torch.stack(xs) if xs else torch.empty(0, E, dtype=torch.float64)
    history = {
        "loss": loss,
        "step": torch.tensor([done for done, _, _ in log], dtype=torch.long),
        "val_step": torch.tensor(members.val_step, dtype=torch.long),
        "val_acc": stack(members.val_acc),
        "val_loss": stack(members.val_loss),
    }
    done = dict(steps_run=steps_run, members=E, wall_time_s=wall_time_s, device=str(dev))
    picked = {k: getattr(members, k) for k in ("best_step", "best_acc", "best_loss", "stop_step")}
    return TrainResult(members.best, members.final, history, **picked, **done)
