"""How chapter 2 trains (App. D.2–D.3, section "Training"): saved test banks (:func:`test_bank`),
the batch sampler (:func:`make_sampler`), one experiment's ensemble (:func:`run`, on the engine)."""

from __future__ import annotations

import itertools
import time

import torch

from lengthgen.chapters.ch2 import paper
from lengthgen.chapters.ch2.paper import test_lengths
from lengthgen.chapters.ch2.single_layer import FAMILIES, FIXED_TOKEN, PAD
from lengthgen.chapters.ch2.single_layer import SingleLayer, encode
from lengthgen.chapters.ch2.volume import parity_sign_changes, score_coefficients
from lengthgen.config import ConfigError, check_choice
from lengthgen.engine import train as engine  # its trainers looked up per call (tests spy on them)
from lengthgen.engine.train import OptimConfig, Validation, select_members
from lengthgen.nn.tasks import TASKS, first_bank, index_bank, label, majority_bank, random_strings


# -------------------------------------------------------------------------- banks and batches (D.3)
def fixed_token(task: str, fixed):
    """The index token of a task without a query (``None``: :data:`FIXED_TOKEN`); Index has none."""
    if task == "index":
        if fixed is not None:
            raise ConfigError(f"Index reads its query from the index token; got fixed = {fixed!r}")
        return None
    fixed = FIXED_TOKEN[task] if fixed is None else fixed
    if isinstance(fixed, bool) or fixed not in (0, 1):
        raise ConfigError(f"fixed index token of {task} must be 0 or 1, got {fixed!r}")
    return int(fixed)


def _labelled(task: str, bits, k, fixed, pad_to=None):
    x = encode(bits, k, pad_to=pad_to, fixed=1 if fixed is None else fixed)
    return x, (label(task, bits, k) if task == "index" else label(task, bits))


def test_bank(task: str, L: int, size: int = 1000, seed: int = 0, fixed: int | None = None):
    """The saved test bank ``(x, y)`` at length L (D.3), shared by all seeds and variants."""
    check_choice("task", task, TASKS)
    fixed = fixed_token(task, fixed)
    seed = paper.TEST_SEED_STRIDE * (1 + seed) + paper.TEST_SEED_LENGTH_STRIDE * L
    g = torch.Generator().manual_seed(seed + paper.TEST_SEED_TASK[task])
    if task == "index":
        return _labelled(task, *index_bank(L, size, g), fixed)
    bank = {"first": first_bank, "majority": majority_bank}.get(task)
    return _labelled(task, bank(L, size, g) if bank else random_strings(size, L, g), None, fixed)


def _validation_bank(task: str, Ns_members, size: int, fixed: int | None, seed: int = 0):
    """Validation banks at each member's N (D.2), padded: x [E, S, max N + 1], y [E, S]."""
    Lmax, cache = max(Ns_members), {}
    for N in sorted(set(Ns_members)):
        g = torch.Generator().manual_seed(paper.VALIDATION_SEED_STRIDE * (1 + seed) + N)
        bits = random_strings(size, N, g)
        k = torch.randint(1, N + 1, (size,), generator=g) if task == "index" else None
        cache[N] = _labelled(task, bits, k, fixed, pad_to=Lmax)
    return tuple(torch.stack([cache[N][i] for N in Ns_members]) for i in (0, 1))


def make_sampler(task: str, Ns_members, streams, batch: int, base_seed: int = 0, fixed=None):
    """``sample(step, generators, members)`` for :func:`train_ensemble`: one data length per update
    from a uniform ``u`` shared by all members (member e: ``L_e = ⌈u N_e⌉``, padded to the longest);
    members of one (N, seed) ``stream`` (paired A_pos / A_norm, repeats) read the same batches."""
    check_choice("task", task, TASKS)
    fixed = fixed_token(task, fixed)
    streams = torch.as_tensor(streams, dtype=torch.long)
    U = int(streams.max()) + 1
    Ns_stream = torch.zeros(U, dtype=torch.long)
    Ns_stream[streams] = torch.as_tensor(Ns_members, dtype=torch.long)

    def sample(step, generators, members=None):
        g = torch.Generator().manual_seed(base_seed * paper.BATCH_STREAM_STRIDE + step)
        u = torch.rand((), generator=g, dtype=torch.float64)
        if task == "majority":
            L = 2 * torch.floor(u * ((Ns_stream + 1) // 2)).long() + 1
        else:
            L = torch.floor(u * Ns_stream).long() + 1
        Lmax = int(L.max())
        bits = torch.randint(0, 2, (U, batch, Lmax), generator=g, dtype=torch.float64)
        k = torch.floor(torch.rand(U, batch, generator=g, dtype=torch.float64) * L[:, None]) + 1
        valid = torch.arange(1, Lmax + 1)[None, :] <= L[:, None]  # [U, Lmax]
        data = bits.masked_fill(~valid[:, None, :], PAD)
        kk = k if task == "index" else torch.full_like(k, fixed)
        if task == "index":
            y = torch.gather(bits, -1, (k.long() - 1).unsqueeze(-1)).squeeze(-1).long()
        else:
            ones, half = (bits * valid[:, None, :]).sum(-1), (L[:, None] + 1) // 2
            y = {"first": bits[..., 0], "majority": ones >= half, "parity": ones % 2}[task].long()
        x = torch.cat([data, kk.unsqueeze(-1)], -1)
        sel = streams if members is None else streams[members]
        return x[sel], y[sel]

    return sample


# --------------------------------------------------------------------------- one experiment
def _model(c: dict, members: list, idx) -> SingleLayer:
    """The ensemble model of the members ``idx`` (one β per member unless all use log n)."""
    vs, Ns, betas = ([members[i][j] for i in idx] for j in (0, 1, 3))
    kw = dict(norm_map=c["norm_map"] or "sqrt", beta="log" if c["att_betas"] == ["log"] else betas)
    return SingleLayer(vs[0], c["h"], max_lengths=Ns, variants=vs, **kw)


def _train(c: dict, members: list, dev, progress: bool):
    """Train every member (variant, N, seed, β) as one ensemble: the engine's result."""
    task, Nm = c["task"], [m[1] for m in members]
    stream_ids = {}
    streams = [stream_ids.setdefault((N, s), len(stream_ids)) for (_, N, s, _) in members]
    model = _model(c, members, range(len(members)))
    params = model.init([m[2] for m in members], torch.float64, dev)
    bank = _validation_bank(task, Nm, c["val_size"], c["fixed"])
    return engine.train_ensemble(
        model,
        params,
        sample=make_sampler(task, Nm, streams, c["batch"], base_seed=c["stream"], fixed=c["fixed"]),
        optim=OptimConfig("adam", lr=c["lr"], betas=c["betas"], eps=c["eps"], clip=c["clip"]),
        steps=c["steps"],
        data_seeds=[s + paper.DATA_SEED_N_STRIDE * N for (_, N, s, _) in members],
        validation=Validation(c["every"], bank, c["patience"], per_member=True, batch_size=250),
        progress=progress,
        record_every=max(1, c["every"] // 5),
        device=dev.type,
        desc=c["experiment"],
    )


def _test(c: dict, members: list, params: dict, device: str) -> dict:
    """Each member's accuracy on the saved test banks at its N's six test lengths."""
    tests = {}
    for N in sorted({m[1] for m in members}):
        idx = [i for i, m in enumerate(members) if m[1] == N]
        Ls = test_lengths(N)
        banks = {L: test_bank(c["task"], L, c["test_size"], fixed=c["fixed"]) for L in Ls}
        bs = max(10, min(1000, 4_000_000 // (len(idx) * (10 * N + 2))))
        sub, model = select_members(params, idx), _model(c, members, idx)
        acc = engine.evaluate_ensemble(model, sub, banks, batch_size=bs, device=device)
        for j, i in enumerate(idx):
            tests[i] = {str(L): float(acc[L][j]) for L in banks}
    return tests


def _row(c: dict, res, i: int, member: tuple, test: dict, coef) -> dict:
    """Member ``i``'s stored row: its selection, its tests and, by model, what the chapter
    analyses (the drift coefficients; Parity's sign changes and kinks, App. A.4)."""
    v, N, s, b = member
    row = dict(variant=v, N=N, seed=s, best_step=int(res.best_step[i]))
    row |= dict(stop_step=int(res.stop_step[i]), best_val_acc=float(res.best_acc[i]))
    row |= dict(best_val_loss=float(res.best_loss[i]), test=test)
    if c["att_betas"] != ["log"]:
        row["beta"] = b
    if coef is not None:
        row.update({k: coef[k][i] for k in coef})
    if c["task"] == "parity" and v == "gen":
        point = {k: t[i] for k, t in res.params.items() if not k.startswith("_")}
        sc = parity_sign_changes(point, N, b)
        row |= {k: int(sc[k][0]) for k in ("sign_changes", "kinks")}
    return row


def run(c: dict, dev, progress: bool, keep_params: bool) -> dict:
    """Train and test the checked configuration ``c`` of one experiment (every (variant, N,
    seed, β) member in one ensemble on device ``dev``): the stored cell's value."""
    grid = itertools.product(c["att_betas"], c["variants"], c["Ns"], c["seeds"])
    members = [(v, N, s, b) for b, v, N, s in grid]
    t0 = time.perf_counter()
    res = _train(c, members, dev, progress)
    train_s = time.perf_counter() - t0
    tests = _test(c, members, res.params, dev.type)
    coef = None
    if FAMILIES[members[0][0]] == "positional":  # the drift coefficients χ, ℓ, χ̂, ℓ̂ (D.4)
        c9 = score_coefficients(res.params)
        coef = {k: c9[k].tolist() for k in ("chi", "ell", "chi_hat", "ell_hat")}
    rows = [_row(c, res, i, m, tests[i], coef) for i, m in enumerate(members)]
    out = {k: c[k] for k in ("experiment", "task")}
    out |= {"variants": list(c["variants"]), "steps_cap": c["steps"]}
    out |= {k: c[k] for k in ("every", "batch", "val_size", "test_size")}
    out |= {"train_wall_s": train_s, "steps_run": res.steps_run, "members": rows}
    return out | ({"params": res.params} if keep_params else {})
