"""How chapter 3 trains its decoders (App. C; section "The trained study"): the tasks' data, the
masked loss and accuracy, and :func:`train_groups` (several groups as one ensemble)."""

from __future__ import annotations

import itertools

import torch

from lengthgen.chapters.ch3.paper import CONTENT_TASKS, DATA_SEED_OFFSET, DATA_SEED_STRIDE
from lengthgen.chapters.ch3.paper import EVAL_SEED_OFFSET
from lengthgen.chapters.ch3.realizability import L0_DEFAULT, TASKS, targets
from lengthgen.config import ConfigError, check_choice, check_positive_int, get_device
from lengthgen.nn.decoder import Decoder

#: Every task a decoder trains on: the positional tasks and App. H's content task (induction).
TRAIN_TASKS = TASKS + CONTENT_TASKS

#: Label of the positions a task does not score (ignored by the loss and the accuracy).
IGNORE = -100


def target_table(tasks, L: int) -> torch.Tensor:
    """``[T, L+1, L]``: [τ, n, i] = t_n(i) of task τ, length n (−1 off the query rows or i ≥ n)."""
    T = torch.full((len(tasks), L + 1, L), -1, dtype=torch.long)
    for a, task in enumerate(tasks):
        for n in range(1, L + 1 if task not in CONTENT_TASKS else 1):
            T[a, n, :n] = targets(task, n)
    return T


def induction_targets(x: torch.Tensor) -> torch.Tensor:
    """App. H's induction on tokens ``x``: t(i) = j + 1, the last j < i with x_j = x_i (else −1)."""
    n = x.shape[-1]
    seen = (x[..., :, None] == x[..., None, :]) & torch.ones(n, n, dtype=torch.bool).tril(-1)
    j = torch.where(seen, torch.arange(n), -1).amax(-1)
    return torch.where(j >= 0, j + 1, -1)


def labels(x: torch.Tensor, tgt: torch.Tensor) -> torch.Tensor:
    """Per-position labels ``x[t(i)]`` where ``tgt[..., i] ≥ 0``, :data:`IGNORE` elsewhere."""
    y = torch.gather(x, -1, tgt.clamp(min=0))
    return torch.where(tgt >= 0, y, torch.full_like(y, IGNORE))


def length_schedule(steps: int, L0: int = L0_DEFAULT, seed: int = 0) -> torch.Tensor:
    """The training length of each update, n ~ U{L0/2, …, L0} from generator ``seed``."""
    steps = check_positive_int("steps", steps)  # public: the speed-path tests call it directly
    L0 = check_positive_int("L0", L0, minimum=2)
    seed = check_positive_int("seed", seed, minimum=0)
    return torch.randint(L0 // 2, L0 + 1, (steps,), generator=torch.Generator().manual_seed(seed))


def make_sampler(
    tasks, *, batch: int, L0: int = L0_DEFAULT, vocab: int = 12, steps: int, length_seed: int = 0
):
    """``sample(step, gens)`` for the engine: member e draws its tokens from its own generator,
    the length of each update from one schedule (``length_seed``): batches ``[E, batch, n]``."""
    tab = target_table(tasks, L0)
    content = torch.tensor([t in CONTENT_TASKS for t in tasks])
    sched = length_schedule(steps, L0, length_seed)

    def sample(step, gens, members=None):
        idx = torch.arange(len(tasks)) if members is None else members
        n = int(sched[step % steps])
        x = torch.stack([torch.randint(0, vocab, (batch, n), generator=g) for g in gens])
        tg = tab[idx, n, :n][:, None, :].expand(len(gens), batch, n)
        if content.any():
            tg = torch.where(content[idx][:, None, None], induction_targets(x), tg)
        return x, labels(x, tg)

    return sample


def masked_ce(out: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """Per-member mean cross-entropy over labelled positions (``y != IGNORE``): ``[E]``."""
    E, V = out.shape[0], out.shape[-1]
    F = torch.nn.functional
    ce = F.cross_entropy(out.reshape(-1, V), y.reshape(-1), ignore_index=IGNORE, reduction="none")
    ce = ce.view(E, -1)
    mask = (y.reshape(E, -1) != IGNORE).to(ce.dtype)
    return (ce * mask).sum(1) / mask.sum(1).clamp(min=1)


def masked_acc(out: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """Per-member accuracy over labelled positions: ``[E]``."""
    E = out.shape[0]
    mask = y.reshape(E, -1) != IGNORE
    hit = (out.argmax(-1).reshape(E, -1) == y.reshape(E, -1)) & mask
    return hit.sum(1).double() / mask.sum(1).clamp(min=1).double()


def eval_banks(tasks, lengths, *, n_eval, train_n, L0=L0_DEFAULT, vocab=12, seed=12345):
    """Per-member banks ``{key: (x, y)}``: key ``L`` scores the rows in [L0, L) at length L;
    keys ``("train", n)``, n = L0/2 … L0, every query row at length n."""
    g = torch.Generator().manual_seed(seed)
    banks = {}
    specs = [(int(L), n_eval, L) for L in lengths]
    specs += [(("train", n), train_n, n) for n in range(L0 // 2, L0 + 1)]
    for key, N, n in specs:
        x = torch.randint(0, vocab, (N, n), generator=g)
        tg = [induction_targets(x) if t in CONTENT_TASKS else targets(t, n) for t in tasks]
        tg = torch.stack([t.expand(x.shape) for t in tg])  # [E, N, n]
        if not isinstance(key, tuple):
            tg[..., :L0] = -1  # score [L0, L) only
        xe = x[None].expand(len(tasks), N, n)
        banks[key] = (xe, labels(xe, tg))
    return banks


#: The floating-point types :func:`train_groups` trains in (``float32``: the study's; ``float64``
#: measures the float32 rounding of a run, ``tests/test_ch3_device.py``).
GROUP_DTYPES = {"float32": torch.float32, "float64": torch.float64}


def train_groups(
    tier: str,
    encoding: str,
    groups,
    *,
    steps: int,
    batch: int,
    lr: float,
    weight_decay: float,
    lengths,
    eval_n: int,
    train_eval_n: int,
    L0: int = L0_DEFAULT,
    data_seed_offset: int = DATA_SEED_OFFSET,
    data_seed_stride: int = DATA_SEED_STRIDE,
    eval_seed_offset: int = EVAL_SEED_OFFSET,
    device: str = "cpu",
    progress: bool = False,
    dtype: str = "float32",
    vocab: int = 12,
    d_model: int = 64,
    rope_scale: float = 1.0,
) -> list[list[dict]]:
    """Train the ``(tasks, seed)`` ``groups`` of one ``tier`` and ``encoding`` as ONE ensemble and
    measure them: one list of rows per group. Member (τ, s) keeps its own cell's weights, data
    stream, length schedule and banks; groups of other seeds are padded, unscored (App. F and H vary
    ``vocab``, ``d_model``, ``rope_scale``)."""
    from lengthgen.engine.train import OptimConfig, evaluate_ensemble, train_ensemble

    checked = _check_groups(groups)
    L0 = check_positive_int("L0", L0, minimum=2)
    if isinstance(lengths, (str, int)) or not lengths:
        raise ConfigError(f"lengths must be a non-empty list of test lengths > L0, got {lengths!r}")
    lengths = tuple(check_positive_int("test length", L, minimum=L0 + 1) for L in lengths)
    steps = check_positive_int("steps", steps)
    dtype = GROUP_DTYPES[check_choice("dtype", dtype, tuple(GROUP_DTYPES))]
    dev = get_device(device).type  # "cpu" or "cuda" ("auto" resolved here)
    model = Decoder.tier(tier, encoding, L0=L0, vocab=vocab, d_model=d_model, rope_scale=rope_scale)
    params = model.init([s for t, s in checked for _ in t], dtype=dtype, device=dev)
    kw = dict(loss=masked_ce, optim=OptimConfig("adamw", lr=lr, weight_decay=weight_decay))
    kw |= dict(progress=progress, record_every=max(1, steps // 20), device=dev)
    kw["desc"] = f"{tier} {encoding} s{','.join(map(str, sorted({s for _, s in checked})))}"
    kw["sample"] = _groups_sampler(checked, batch=batch, L0=L0, steps=steps, vocab=vocab)
    offset = [(data_seed_offset + data_seed_stride * s, ts) for ts, s in checked]
    data = [o + TRAIN_TASKS.index(t) for o, ts in offset for t in ts]
    res = train_ensemble(model, params, steps=steps, data_seeds=data, **kw)
    # measure: each group on its own banks, the members' banks side by side
    kw = dict(n_eval=eval_n, train_n=train_eval_n, L0=L0, vocab=vocab)
    per_group = [eval_banks(ts, lengths, seed=eval_seed_offset + s, **kw) for ts, s in checked]
    cat = lambda k, i: torch.cat([b[k][i] for b in per_group])  # member-wise
    banks = {k: (cat(k, 0), cat(k, 1)) for k in per_group[0]}
    kw = dict(metric=masked_acc, per_member=True, batch_size=64, device=dev)
    acc = evaluate_ensemble(model, res.params, banks, **kw)
    train_acc = torch.stack([acc[k] for k in acc if isinstance(k, tuple)]).mean(0)
    final_loss = res.history["loss"][-1].tolist()
    out, e = [], 0
    for tasks, seed in checked:
        rows = []
        for task in tasks:
            head = dict(tier=tier, encoding=encoding, task=task, seed=int(seed))
            tail = {"train_acc": float(train_acc[e]), "final_loss": float(final_loss[e])}
            tail["steps"] = steps
            rows += [head | {"L": L, "acc": float(acc[L][e])} | tail for L in lengths]
            e += 1
        out.append(rows)
    return out


def _check_groups(groups) -> list[tuple]:
    """``groups`` as ``[(tasks, seed)]``: non-empty, distinct pairs of known tasks and seed ≥ 0."""
    if isinstance(groups, (str, bytes)) or not groups:
        raise ConfigError(f"groups must be a non-empty list of (tasks, seed) pairs, got {groups!r}")
    checked = []
    for g in groups:
        if not (isinstance(g, (tuple, list)) and len(g) == 2) or isinstance(g[0], str) or not g[0]:
            raise ConfigError(f"each group must be a pair (tasks, seed), got {g!r}")
        tasks = tuple(check_choice("task", t, TRAIN_TASKS) for t in g[0])
        checked.append((tasks, check_positive_int("seed", g[1], minimum=0)))
    if len(set(checked)) != len(checked):
        raise ConfigError(f"groups must not repeat a (tasks, seed) pair, got {groups!r}")
    return checked


def _groups_sampler(groups, *, batch: int, L0: int, steps: int, vocab: int = 12):
    """Each group's own :func:`make_sampler`, batches padded to the update's longest length."""
    samplers = [
        make_sampler(tasks, batch=batch, L0=L0, steps=steps, vocab=vocab, length_seed=s)
        for tasks, s in groups
    ]
    if len(samplers) == 1:
        return samplers[0]
    ends = list(itertools.accumulate(len(tasks) for tasks, _ in groups))
    bounds = list(zip([0] + ends[:-1], ends))

    def sample(step, gens):
        parts = [f(step, gens[a:b]) for f, (a, b) in zip(samplers, bounds)]
        n = max(x.shape[-1] for x, _ in parts)
        pad = lambda t, v: torch.nn.functional.pad(t, (0, n - t.shape[-1]), value=v)
        x = torch.cat([pad(x, 0) for x, _ in parts])
        return x, torch.cat([pad(y, IGNORE) for _, y in parts])

    return sample
