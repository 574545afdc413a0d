"""Chapter 2 (Zhu & Chiang 2026): the training runs of App. D.2–D.3 and the stored volume scans.

The chapter's reproduction is a list of cells of the runs facility (:func:`cells`, run by
``python -m lengthgen reproduce ch2``): one cell per experiment of :data:`EXPERIMENTS` — all seeds
× maximum lengths N × paired variants of one (task, model family) trained as ONE batched program
through :func:`lengthgen.engine.train.train_ensemble` and evaluated on the saved test banks at
N, 2N+1, 3N, 5N, 8N+1, 10N+1 — plus, at full scale, the volume scans (:func:`volume_scans`).
Each cell's keyword arguments hold its whole configuration (task, variants, batch stream, seeds,
N, update cap, sizes, optimiser), so a changed configuration is recomputed, never reused. The
notebook reads the stored cells through :func:`load_runs` and :func:`load_volume_scans`, which
check them against :func:`experiment_schema` and :data:`VOLUME_SCHEMA`.

Protocol (D.2, numbers in :mod:`lengthgen.chapters.ch2.paper`): Adam (lr 3e-4, β = (0.9, 0.999),
ε = 1e-8, no weight decay), batch 256, gradient clipping at 1, float64, at most ``steps``
updates, validation every 500 updates on 1,000 examples at length N, stop after 3 consecutive
perfect validations, checkpoint = best validation accuracy, then lower cross-entropy, then
earlier update. Init scales and the A_pos/A_norm pairing are those of
:func:`lengthgen.chapters.ch2.single_layer.init_member`.

Batches: one data length per update, uniform on {1, …, N} (odd lengths for Majority). The uniform
draw ``u`` is shared by all members of the ensemble at a given update (member e gets
``L_e = ⌈u N_e⌉``), so each member's lengths are exactly uniform on its own range while the
padded batch is only as long as the longest member's length; bits and queries are independent
per data stream. Paired A_pos/A_norm members read the same stream. Experiments that repeat
another one's trainings (``_small``, ``_mid``, ``_more``, the ablation ``index_norm_misread``) use its
batch stream.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from lengthgen.chapters.ch2 import paper
from lengthgen.chapters.ch2.paper import PAPER_MAX_UPDATES, test_lengths
from lengthgen.chapters.ch2.single_layer import (
    FAMILIES,
    FIXED_TOKEN,
    NORM_MAPS,
    PAD,
    VARIANTS,
    SingleLayer,
    check_beta,
    check_width,
    encode,
)
from lengthgen.config import (
    ConfigError,
    check_choice,
    check_finite,
    check_positive_int,
    get_device,
    get_scale,
)
from lengthgen.engine.runs import Cell
from lengthgen.nn.tasks import (
    TASKS,
    first_bank,
    index_bank,
    label,
    majority_bank,
    random_strings,
)
from lengthgen.store import Schema

H = paper.H


@dataclass(frozen=True)
class Experiment:
    """One (task, model family) ensemble of the chapter.

    task     : ``first``, ``index``, ``majority`` or ``parity``
    variants : the models trained together (``("pos", "norm")`` pairs A_pos and A_norm members)
    stream   : the batch stream (see :data:`lengthgen.chapters.ch2.paper.BATCH_STREAM_STRIDE`);
               experiments that repeat another one's trainings share its stream
    norm_map : for experiments with an A_norm variant (the others store ``None``): ``sqrt``
               (the paper's map of eq. 17, v/√(1+‖v‖²); default) or ``misread`` (our
               earlier misreading, v/(1+‖v‖²), an ablation); see
               :func:`lengthgen.chapters.ch2.single_layer.F_norm`
    """

    task: str
    variants: tuple[str, ...]
    stream: int
    norm_map: str = "sqrt"


#: experiment name → definition. Order = priority when the budget is short (the run order).
EXPERIMENTS = {
    "index_posnorm": Experiment("index", ("pos", "norm"), 1),
    "first_posnorm": Experiment("first", ("pos", "norm"), 2),
    "majority_gen": Experiment("majority", ("gen",), 3),
    "majority_sin": Experiment("majority", ("sin",), 4),
    "first_gen": Experiment("first", ("gen",), 5),
    "index_gen": Experiment("index", ("gen",), 6),
    "first_sin": Experiment("first", ("sin",), 7),
    "index_sin": Experiment("index", ("sin",), 8),
    "parity_gen": Experiment("parity", ("gen",), 9),
    "index_posnorm_small": Experiment(
        "index", ("pos", "norm"), 1
    ),  # index_posnorm at N = 11, 21
    "index_posnorm_mid": Experiment(
        "index", ("pos", "norm"), 1
    ),  # ... and at N = 31, 41
    "majority_gen_more": Experiment(
        "majority", ("gen",), 3
    ),  # Tables 2–3 at N = 11 … 41
    "first_posnorm_more": Experiment("first", ("pos", "norm"), 2),
    "majority_sin_more": Experiment("majority", ("sin",), 4),
    "majority_posnorm": Experiment(
        "majority", ("pos", "norm"), 16
    ),  # Table 1: Majority under A_pos / A_norm
    # ablation: A_norm with our earlier misread map F(v) = v/(1+‖v‖²), same seeds, initial tensors and
    # batches as index_posnorm (which uses the paper's map)
    "index_norm_misread": Experiment("index", ("norm",), 1, norm_map="misread"),
}

#: the full-scale protocol (D.2–D.3); each experiment's cap and N are in paper.STORED_STEP_CAPS / STORED_NS
FULL = {
    "seeds": paper.SEEDS,
    "every": paper.VALIDATE_EVERY,
    "val_size": paper.VAL_SIZE,
    "test_size": paper.TEST_SIZE,
    "batch": paper.BATCH,
}
#: the smoke protocol: two seeds at N = 11, a few hundred updates, small banks
SMOKE = {
    "seeds": paper.SEEDS[:2],
    "Ns": (11,),
    "steps": 300,
    "every": 100,
    "val_size": 200,
    "test_size": 200,
    "batch": 64,
}
#: the experiments a smoke run trains (the full run trains all of EXPERIMENTS)
SMOKE_EXPERIMENTS = ("index_posnorm", "majority_gen")

#: the stored volume scans (section "Claim 2" and "Monte Carlo volume fractions")
VOLUME_NS = (8, 16, 32, 64, 128, 256, 512)
VOLUME_COMBOS = tuple(paper.PAPER_WINDOW_SLOPES)
VOLUME_MC_NS = {
    "pos/index": (4, 8, 16, 32, 64),
    "norm/index": (4, 8, 16, 32, 64, 128),
    "pos/first": (4, 16, 64, 256),
}
VOLUME_MC_SAMPLES = 20_000
VOLUME_HALF_WIDTH = 0.1
VOLUME_ETA = 1.0


# --------------------------------------------------------------------------- banks and batches (D.3)
def _nonempty(name: str, values) -> list:
    if (
        isinstance(values, (str, bytes))
        or not hasattr(values, "__len__")
        or len(values) == 0
    ):
        raise ConfigError(f"{name} must be a non-empty list, got {values!r}")
    return list(values)


def _fixed_token(task: str, fixed):
    """The index token of a task without a query (``None``: :data:`FIXED_TOKEN`); Index has none."""
    if task == "index":
        if fixed is not None:
            raise ConfigError(
                f"Index reads its query from the index token; fixed token must be None, got {fixed!r}"
            )
        return None
    fixed = FIXED_TOKEN[task] if fixed is None else fixed
    if isinstance(fixed, bool) or fixed not in (0, 1):
        raise ConfigError(f"fixed index token of {task} must be 0 or 1, got {fixed!r}")
    return int(fixed)


def _labels(task: str, bits: torch.Tensor, k: torch.Tensor | None) -> torch.Tensor:
    return label(task, bits, k) if task == "index" else label(task, bits)


def test_bank(
    task: str, L: int, size: int = 1000, seed: int = 0, fixed: int | None = None
):
    """The saved test bank at length L (D.3), shared by all seeds and variants: ``(x, y)``.

    ``fixed`` is the index token of the tasks without a query (default :data:`FIXED_TOKEN`)."""
    check_choice("task", task, TASKS)
    fixed = _fixed_token(task, fixed)
    L, size = (
        check_positive_int("test length L", L),
        check_positive_int("test bank size", size),
    )
    seed = check_positive_int("bank seed", seed, minimum=0)
    g = torch.Generator().manual_seed(
        paper.TEST_SEED_STRIDE * (1 + seed)
        + paper.TEST_SEED_LENGTH_STRIDE * L
        + paper.TEST_SEED_TASK[task]
    )
    k = None
    if task == "first":
        bits = first_bank(L, size, g)
    elif task == "majority":
        bits = majority_bank(L, size, g)
    elif task == "index":
        bits, k = index_bank(L, size, g)
    else:
        bits = random_strings(size, L, g)
    return encode(bits, k, fixed=1 if fixed is None else fixed), _labels(task, bits, k)


def validation_bank(
    task: str, Ns_members, size: int, seed: int = 0, fixed: int | None = None
):
    """Per-member validation banks at each member's N (random examples), padded:
    ``(x [E, S, max N + 1], y [E, S])`` (D.2)."""
    check_choice("task", task, TASKS)
    fixed = _fixed_token(task, fixed)
    size = check_positive_int("validation size", size)
    seed = check_positive_int("bank seed", seed, minimum=0)
    Ns_members = [
        check_positive_int("N", n) for n in _nonempty("Ns_members", Ns_members)
    ]
    Lmax = max(Ns_members)
    cache = {}
    for N in sorted(set(Ns_members)):
        g = torch.Generator().manual_seed(paper.VALIDATION_SEED_STRIDE * (1 + seed) + N)
        bits = random_strings(size, N, g)
        k = torch.randint(1, N + 1, (size,), generator=g) if task == "index" else None
        cache[N] = (
            encode(bits, k, pad_to=Lmax, fixed=1 if fixed is None else fixed),
            _labels(task, bits, k),
        )
    x = torch.stack([cache[N][0] for N in Ns_members])
    y = torch.stack([cache[N][1] for N in Ns_members])
    return x, y


def make_sampler(
    task: str,
    Ns_members,
    stream_of_member,
    batch: int,
    base_seed: int = 0,
    fixed: int | None = None,
):
    """``sample(step, generators, members)`` for :func:`train_ensemble` (see the module docstring);
    ``base_seed`` is the experiment's batch stream."""
    check_choice("task", task, TASKS)
    fixed = _fixed_token(task, fixed)
    batch = check_positive_int("batch", batch)
    base_seed = check_positive_int("batch stream", base_seed, minimum=0)
    Ns_members = [
        check_positive_int("N", n) for n in _nonempty("Ns_members", Ns_members)
    ]
    stream_of_member = [
        check_positive_int("stream of member", s, minimum=0)
        for s in _nonempty("stream_of_member", stream_of_member)
    ]
    if len(stream_of_member) != len(Ns_members):
        raise ConfigError(
            f"stream_of_member has {len(stream_of_member)} entries for {len(Ns_members)} members"
        )
    Ns = torch.as_tensor(Ns_members, dtype=torch.long)
    streams = torch.as_tensor(stream_of_member, dtype=torch.long)
    U = int(streams.max()) + 1
    Ns_stream = torch.zeros(U, dtype=torch.long)
    Ns_stream[streams] = Ns

    def sample(step, generators, members=None):
        g = torch.Generator().manual_seed(base_seed * paper.BATCH_STREAM_STRIDE + step)
        u = torch.rand((), generator=g, dtype=torch.float64)
        if task == "majority":
            L = 2 * torch.floor(u * ((Ns_stream + 1) // 2)).long() + 1
        else:
            L = torch.floor(u * Ns_stream).long() + 1
        Lmax = int(L.max())
        bits = torch.randint(0, 2, (U, batch, Lmax), generator=g, dtype=torch.float64)
        k = (
            torch.floor(
                torch.rand(U, batch, generator=g, dtype=torch.float64) * L[:, None]
            )
            + 1
        )
        valid = torch.arange(1, Lmax + 1)[None, :] <= L[:, None]  # [U, Lmax]
        data = bits.masked_fill(~valid[:, None, :], PAD)
        if task == "index":
            y = torch.gather(bits, -1, (k.long() - 1).unsqueeze(-1)).squeeze(-1).long()
            kk = k
        else:
            ones = (bits * valid[:, None, :]).sum(-1)
            y = {
                "first": bits[..., 0],
                "majority": (ones >= (L[:, None] + 1) // 2),
                "parity": ones % 2,
            }[task].long()
            kk = torch.full_like(k, fixed)
        x = torch.cat([data, kk.unsqueeze(-1)], -1)
        sel = streams if members is None else streams[members]
        return x[sel], y[sel]

    return sample


def _coefficients(params):
    a, b, r, s = (params[k] for k in ("a", "b", "r", "s"))
    chi = (a * s).sum(-1)
    ell = 2 * (b * s).sum(-1) + (a * r).sum(-1)
    ahat = a / a.norm(dim=-1, keepdim=True)
    chi_hat = (ahat * s).sum(-1)
    return {
        "chi": chi.tolist(),
        "ell": ell.tolist(),
        "chi_hat": chi_hat.tolist(),
        "ell_hat": (ell + 2 * chi_hat).tolist(),
    }


# --------------------------------------------------------------------------- one experiment (a cell)
def _check_ints(name, values, minimum=1) -> list[int]:
    out = [check_positive_int(name, v, minimum) for v in _nonempty(name, values)]
    if len(set(out)) != len(out):
        raise ConfigError(f"{name} must not repeat values, got {list(values)!r}")
    return out


def train_experiment(
    *,
    experiment: str,
    task: str,
    variants,
    stream: int,
    norm_map: str,
    fixed_token,
    seeds,
    Ns,
    steps: int,
    every: int,
    val_size: int,
    test_size: int,
    batch: int,
    h: int,
    lr: float,
    betas,
    eps: float,
    clip: float,
    patience: int,
    device="cpu",
    progress: bool = True,
    keep_params: bool = False,
    beta="log",
) -> dict:
    """Train and test one experiment (all ``seeds`` × ``Ns`` × ``variants`` as one ensemble on
    ``device``) with the protocol of App. D.2–D.3 (chapter 2, "Claims 3–4: training"); returns a
    JSON-ready dict (``keep_params=True`` adds the selected parameters, tensors, under ``"params"``).

    Every argument is part of the stored configuration (the cell's hash). For Parity under A_gen
    each member also reports the sign changes and kinks of its selected checkpoint at length N
    (App. A.4); for the positional models the drift coefficients χ, ℓ, χ̂, ℓ̂ (D.4).

    ``beta``: the attention scale β_n, ``log`` (log n, the paper's; the default, which leaves the
    run exactly as before and adds nothing to its configuration) or ``one`` (β_n = 1), or a list of
    both (chapter 5): then every (variant, N, seed) member is trained once per β in the same
    ensemble, with the same initial tensors and the same batches, and each row records its ``beta``.
    """
    from lengthgen.engine.train import (
        OptimConfig,
        Validation,
        evaluate_ensemble,
        select_members,
        train_ensemble,
    )

    if not isinstance(experiment, str) or not experiment:
        raise ConfigError(f"experiment must be a name, got {experiment!r}")
    check_choice("task", task, TASKS)
    if isinstance(variants, str) or not variants:
        raise ConfigError(
            f"variants must be a non-empty list of {', '.join(VARIANTS)}, got {variants!r}"
        )
    variants = [check_choice("variant", v, VARIANTS) for v in variants]
    stream = check_positive_int("batch stream", stream, minimum=0)
    if "norm" in variants:
        check_choice("norm map", norm_map, NORM_MAPS)
    elif norm_map is not None:
        raise ConfigError(
            f"norm_map applies to A_norm only; variants {variants} need None, got {norm_map!r}"
        )
    fixed = _fixed_token(task, fixed_token)
    seeds = _check_ints("seeds", seeds, minimum=0)
    Ns = _check_ints("Ns", Ns)
    steps, every = (
        check_positive_int("steps", steps),
        check_positive_int("validation every", every),
    )
    val_size, test_size = (
        check_positive_int("val_size", val_size),
        check_positive_int("test_size", test_size),
    )
    batch, h, patience = (
        check_positive_int("batch", batch),
        check_width(h),
        check_positive_int("patience", patience),
    )
    lr, eps, clip = (
        check_finite(n, v, nonnegative=True)
        for n, v in (("lr", lr), ("eps", eps), ("clip", clip))
    )
    if (
        isinstance(betas, (str, bytes))
        or not hasattr(betas, "__len__")
        or len(betas) != 2
    ):
        raise ConfigError(f"betas must be a pair of numbers, got {betas!r}")
    betas = tuple(check_finite("beta", b, nonnegative=True) for b in betas)
    if isinstance(beta, str):
        att_betas = [check_beta(beta)]
    elif hasattr(beta, "__len__") and len(beta) > 0:
        att_betas = [check_beta(b) for b in beta]
        if len(set(att_betas)) != len(att_betas):
            raise ConfigError(f"beta must not repeat values, got {list(beta)!r}")
    else:
        raise ConfigError(f"beta must be 'log', 'one' or a list of them, got {beta!r}")
    dev = get_device(device)  # "auto" resolved here; the trainer gets "cpu" or "cuda"
    device = dev.type

    members = [
        (v, N, s, b) for b in att_betas for v in variants for N in Ns for s in seeds
    ]
    vs = [m[0] for m in members]
    Nm = [m[1] for m in members]
    sm = [m[2] for m in members]
    bm = [m[3] for m in members]
    stream_ids = {}
    streams = [
        stream_ids.setdefault((N, s), len(stream_ids)) for (_, N, s, _) in members
    ]

    def _beta_arg(idx):  # "log" keeps a plain run unchanged; otherwise one β per member
        return "log" if att_betas == ["log"] else [bm[i] for i in idx]

    model = SingleLayer(
        vs[0],
        h,
        max_lengths=Nm,
        variants=vs,
        norm_map=norm_map or "sqrt",
        beta=_beta_arg(range(len(members))),
    )
    params = model.init(sm, torch.float64, dev)
    vx, vy = validation_bank(task, Nm, val_size, fixed=fixed)
    t0 = time.perf_counter()
    res = train_ensemble(
        model,
        params,
        sample=make_sampler(task, Nm, streams, batch, base_seed=stream, fixed=fixed),
        optim=OptimConfig("adam", lr=lr, betas=betas, eps=eps, clip=clip),
        steps=steps,
        data_seeds=[s + paper.DATA_SEED_N_STRIDE * N for (_, N, s, _) in members],
        validation=Validation(
            every=every,
            bank=(vx, vy),
            patience=patience,
            per_member=True,
            batch_size=250,
        ),
        progress=progress,
        record_every=max(1, every // 5),
        device=device,
        desc=experiment,
    )
    train_s = time.perf_counter() - t0
    tests = {}
    for N in sorted(set(Nm)):
        idx = [i for i, n in enumerate(Nm) if n == N]
        sub = select_members(res.params, idx)
        submodel = SingleLayer(
            vs[0],
            h,
            max_lengths=[Nm[i] for i in idx],
            variants=[vs[i] for i in idx],
            norm_map=norm_map or "sqrt",
            beta=_beta_arg(idx),
        )
        banks = {L: test_bank(task, L, test_size, fixed=fixed) for L in test_lengths(N)}
        bs = max(10, min(1000, 4_000_000 // (len(idx) * (10 * N + 2))))
        acc = evaluate_ensemble(submodel, sub, banks, batch_size=bs, device=device)
        for j, i in enumerate(idx):
            tests[i] = {str(L): float(acc[L][j]) for L in banks}
    rows = []
    coef = _coefficients(res.params) if FAMILIES[vs[0]] == "positional" else None
    for i, (v, N, s, b) in enumerate(members):
        row = {
            "variant": v,
            "N": N,
            "seed": s,
            "best_step": int(res.best_step[i]),
            "stop_step": int(res.stop_step[i]),
            "best_val_acc": float(res.best_acc[i]),
            "best_val_loss": float(res.best_loss[i]),
            "test": tests[i],
        }
        if att_betas != ["log"]:
            row["beta"] = b
        if coef is not None:
            row.update({k: coef[k][i] for k in coef})
        if task == "parity" and vs[0] == "gen":
            from lengthgen.chapters.ch2.volume import parity_sign_changes

            sc = parity_sign_changes(
                {k: t[i] for k, t in res.params.items() if not k.startswith("_")}, N, b
            )
            row.update(
                {
                    "sign_changes": int(sc["sign_changes"][0]),
                    "kinks": int(sc["kinks"][0]),
                }
            )
        rows.append(row)
    return {
        "experiment": experiment,
        "task": task,
        "variants": list(variants),
        "steps_cap": steps,
        "every": every,
        "batch": batch,
        "val_size": val_size,
        "test_size": test_size,
        "train_wall_s": train_s,
        "steps_run": res.steps_run,
        "members": rows,
        **({"params": res.params} if keep_params else {}),
    }


def experiment_config(
    name: str,
    *,
    seeds,
    Ns,
    steps: int,
    every: int,
    val_size: int,
    test_size: int,
    batch: int,
) -> dict:
    """The complete keyword arguments of :func:`train_experiment` for experiment ``name`` with the
    given run sizes; the rest (model, batch stream, fixed token, optimiser) is the definition in
    :data:`EXPERIMENTS` and the protocol of :mod:`lengthgen.chapters.ch2.paper`."""
    check_choice("experiment", name, tuple(EXPERIMENTS))
    ex = EXPERIMENTS[name]
    return {
        "experiment": name,
        "task": ex.task,
        "variants": list(ex.variants),
        "stream": ex.stream,
        "norm_map": ex.norm_map if "norm" in ex.variants else None,
        "fixed_token": None if ex.task == "index" else FIXED_TOKEN[ex.task],
        "seeds": list(seeds),
        "Ns": list(Ns),
        "steps": steps,
        "every": every,
        "val_size": val_size,
        "test_size": test_size,
        "batch": batch,
        "h": paper.H,
        "lr": paper.LR,
        "betas": list(paper.BETAS),
        "eps": paper.EPS,
        "clip": paper.CLIP,
        "patience": paper.PATIENCE,
    }


def run_experiment(
    name: str,
    *,
    seeds,
    Ns,
    steps: int,
    every: int,
    val_size: int,
    test_size: int,
    batch: int,
    device="cpu",
    progress: bool = True,
    keep_params: bool = False,
) -> dict:
    """Train and test experiment ``name`` of :data:`EXPERIMENTS` at the given run sizes (what a
    cell does, for the notebook's live runs); see :func:`train_experiment`."""
    cfg = experiment_config(
        name,
        seeds=seeds,
        Ns=Ns,
        steps=steps,
        every=every,
        val_size=val_size,
        test_size=test_size,
        batch=batch,
    )
    return train_experiment(
        **cfg, device=device, progress=progress, keep_params=keep_params
    )


# --------------------------------------------------------------------------- volume scans (a cell)
def volume_scans(
    *,
    ns=VOLUME_NS,
    combos=VOLUME_COMBOS,
    mc_ns=None,
    mc_samples: int = VOLUME_MC_SAMPLES,
    h: int = H,
    eta: float = VOLUME_ETA,
    half_width: float = VOLUME_HALF_WIDTH,
    norm_map: str = "sqrt",
    beta: str = "log",
) -> dict:
    """Admissible widths of the length-sensitive coordinates around the η = ``eta`` centers at the
    lengths ``ns`` (chapter 2, "Claim 2") and Monte Carlo exact fractions in a box of half-width
    ``half_width`` ("Monte Carlo volume fractions"); Index under A_pos gets 4× the samples from
    n = 32 on, where its exact fraction is smallest. ``norm_map`` is the A_norm map of the scan;
    the exactness checker implements the paper's ``sqrt`` only, and the argument is part of the
    cell's configuration so that a scan made with another map is never reused. ``beta``: the
    attention scale β_n of every exactness check, ``log`` (the paper's, the default) or ``one``
    (chapter 5); the sampled points do not depend on it."""
    from lengthgen.chapters.ch2 import volume as vo

    ns = _check_ints("ns", ns)
    mc_ns = dict(VOLUME_MC_NS if mc_ns is None else mc_ns)
    mc_samples = check_positive_int("mc_samples", mc_samples)
    h = check_width(h)
    eta = check_finite("eta", eta, nonnegative=True)
    half_width = check_finite("half_width", half_width, nonnegative=True)
    beta = check_beta(beta)
    if check_choice("norm map", norm_map, NORM_MAPS) != "sqrt":
        raise ConfigError(
            f"the volume scans use the paper's A_norm map 'sqrt' only, got {norm_map!r}"
        )
    out = {"widths": {}, "mc": {}}
    for combo in combos:
        if isinstance(combo, str) or len(combo) != 3:
            raise ConfigError(
                f"each volume combo must be (model, task, coordinate), got {combo!r}"
            )
        v, task, coord = combo
        c = vo.center(v, task, h, eta=eta)
        d = vo.direction(v, coord, c)
        res = [vo.admissible_width(c, d, v, task, n, beta=beta) for n in ns]
        # width: both sides, a side still exact at t_max counted as t_max; finite_width: the sides
        # that close before t_max (NaN if none does); capped: how many sides reached t_max
        out["widths"][f"{v}/{task}/{coord}"] = {
            "n": list(ns),
            "width": [r["width"] for r in res],
            "finite_width": [r["finite_width"] for r in res],
            "capped": [int(r["plus_capped"]) + int(r["minus_capped"]) for r in res],
        }
    for key, nlist in mc_ns.items():
        if not isinstance(key, str) or key.count("/") != 1:
            raise ConfigError(f"Monte Carlo keys are 'model/task', got {key!r}")
        v, task = key.split("/")
        out["mc"][key] = [
            vo.mc_fraction(
                v,
                task,
                n,
                coords=("a", "b", "r", "s"),
                half_width=half_width,
                samples=mc_samples
                * (4 if (v == "pos" and task == "index" and n >= 32) else 1),
                seed=n,
                eta=eta,
                h=h,
                beta=beta,
            )
            for n in _check_ints(f"mc_ns[{key!r}]", nlist)
        ]
    return out


# --------------------------------------------------------------------------- the plan
def cells(scale: str) -> list[Cell]:
    """Chapter 2's reproduction plan at ``scale``: one cell per experiment (smoke: the
    :data:`SMOKE_EXPERIMENTS` at the :data:`SMOKE` sizes; full: every experiment of
    :data:`EXPERIMENTS` with its stored cap and N, then ``volume_scans``)."""
    scale = get_scale(scale)
    out = []
    if scale == "smoke":
        sizes = {
            k: SMOKE[k]
            for k in ("seeds", "Ns", "steps", "every", "val_size", "test_size", "batch")
        }
        for name in SMOKE_EXPERIMENTS:
            out.append(
                Cell(
                    name,
                    train_experiment,
                    experiment_config(name, **sizes),
                    seeds=tuple(SMOKE["seeds"]),
                )
            )
        return out
    for name in EXPERIMENTS:
        cfg = experiment_config(
            name, Ns=paper.STORED_NS[name], steps=paper.STORED_STEP_CAPS[name], **FULL
        )
        out.append(Cell(name, train_experiment, cfg, seeds=tuple(FULL["seeds"])))
    out.append(
        Cell(
            "volume_scans",
            volume_scans,
            {
                "ns": list(VOLUME_NS),
                "combos": [list(c) for c in VOLUME_COMBOS],
                "mc_ns": {k: list(v) for k, v in VOLUME_MC_NS.items()},
                "mc_samples": VOLUME_MC_SAMPLES,
                "h": H,
                "eta": VOLUME_ETA,
                "half_width": VOLUME_HALF_WIDTH,
                "norm_map": "sqrt",
            },
        )
    )
    return out


# --------------------------------------------------------------------------- stored results
_MEMBER_FIELDS = (
    "variant",
    "N",
    "seed",
    "best_step",
    "stop_step",
    "best_val_acc",
    "best_val_loss",
    "test",
)


def experiment_schema(seeds, Ns) -> Schema:
    """What a stored experiment declared with ``seeds`` and ``Ns`` must hold: its summary fields,
    one member per seed × N × variant, six test lengths per member, accuracies in [0, 1]."""
    n = len(_check_ints("seeds", seeds, minimum=0)) * len(_check_ints("Ns", Ns))
    return Schema(
        "ch2 experiment",
        required=(
            "experiment",
            "task",
            "variants",
            "steps_cap",
            "steps_run",
            "every",
            "batch",
            *(f"members.*.{f}" for f in _MEMBER_FIELDS),
        ),
        probabilities=("members.*.test.*", "members.*.best_val_acc"),
        counts=(
            ("members", lambda d: n * len(d["variants"])),
            ("members.*.test", lambda d: 6),
        ),
    )


#: What the stored volume scans must hold: every planned width curve and Monte Carlo row.
VOLUME_SCHEMA = Schema(
    "ch2 volume scans",
    required=(
        "widths.*.n",
        "widths.*.width",
        "mc.*.*.n",
        "mc.*.*.samples",
        "mc.*.*.exact",
        "mc.*.*.undecided",
    ),
    probabilities=("mc.*.*.fraction", "mc.*.*.lo", "mc.*.*.hi"),
    counts=(
        ("widths", lambda d: len(VOLUME_COMBOS)),
        ("widths.*.width", lambda d: len(VOLUME_NS)),
        ("mc", lambda d: len(VOLUME_MC_NS)),
    ),
)

#: Schema of each stored full-scale cell, by cell name (read by :class:`lengthgen.claims.StoredResults`,
#: so the claims of :mod:`lengthgen.chapters.ch2.claims` see only validated values): an experiment
#: holds one member per seed of the protocol × stored N × variant.
SCHEMAS = {
    **{
        name: experiment_schema(FULL["seeds"], paper.STORED_NS[name])
        for name in EXPERIMENTS
    },
    "volume_scans": VOLUME_SCHEMA,
}


def _cells_folder(folder) -> Path:
    from lengthgen.store import results_dir

    return Path(folder) if folder is not None else results_dir() / "ch2" / "cells"


def load_experiment(name: str, folder=None, scale: str = "full") -> dict:
    """The stored cell of experiment ``name`` as ``{"provenance", "data", "path"}``, checked against
    :func:`experiment_schema` for the seeds and N its stored configuration declares
    (``folder`` defaults to ``results/ch2/cells``). Errors name the file."""
    from lengthgen.engine import runs
    from lengthgen.store import ResultFileError

    check_choice("experiment", name, tuple(EXPERIMENTS))
    folder = _cells_folder(folder)
    kw = runs.load_cell(folder, name, scale=scale)["data"].get("kwargs") or {}
    if "seeds" not in kw or "Ns" not in kw:
        raise ResultFileError(
            f"invalid ch2 experiment result {runs.cell_path(folder, name)}: "
            "its stored configuration declares no 'seeds'/'Ns'"
        )
    return runs.load_stored(
        "ch2",
        name,
        folder=folder,
        scale=scale,
        schema=experiment_schema(kw["seeds"], kw["Ns"]),
    )


def load_runs(folder=None, scale: str = "full") -> dict:
    """Stored experiments ``{name: (result, provenance)}`` in the order of :data:`EXPERIMENTS`
    (experiments not stored are absent), each checked by :func:`load_experiment`."""
    from lengthgen.engine import runs

    folder = _cells_folder(folder)
    out = {}
    for name in EXPERIMENTS:
        if runs.has_stored("ch2", name, folder=folder):
            obj = load_experiment(name, folder, scale)
            out[name] = (obj["data"], obj["provenance"])
    return out


def load_volume_scans(folder=None, scale: str = "full") -> dict | None:
    """The stored volume scans ``{"provenance", "data", "path"}`` checked against
    :data:`VOLUME_SCHEMA`, or ``None`` when none is stored."""
    from lengthgen.engine import runs

    folder = _cells_folder(folder)
    if not runs.has_stored("ch2", "volume_scans", folder=folder):
        return None
    return runs.load_stored(
        "ch2", "volume_scans", folder=folder, scale=scale, schema=VOLUME_SCHEMA
    )


# --------------------------------------------------------------------------- summaries
def _check_result(result, *keys):
    for key in ("members", *keys):
        if not isinstance(result, dict) or key not in result:
            raise ConfigError(
                f"result must be an experiment's result (a dict with {key!r}), got {type(result).__name__}"
            )


def _members(result: dict, variant: str, N: int) -> list[dict]:
    _check_result(result)
    check_choice("variant", variant, VARIANTS)
    N = check_positive_int("N", N)
    return [m for m in result["members"] if m["variant"] == variant and m["N"] == N]


def longest_accuracy(result: dict, variant: str, N: int) -> np.ndarray:
    """Per-seed accuracy at L = 10N+1 for one variant and N (percent; Table 2)."""
    L = str(10 * N + 1)
    return np.array([100 * m["test"][L] for m in _members(result, variant, N)])


def mean_ood(result: dict, variant: str, N: int) -> np.ndarray:
    """Per-seed mean accuracy over the five test lengths > N (percent), D.3 (Table 3)."""
    return np.array(
        [
            100 * np.mean([m["test"][str(L)] for L in test_lengths(N)[1:]])
            for m in _members(result, variant, N)
        ]
    )


def accuracy_curve(result: dict, variant: str, N: int) -> tuple[list[int], np.ndarray]:
    """Test lengths and the per-seed accuracies [seeds, lengths] (percent; Fig. 2)."""
    Ls = list(test_lengths(N))
    return Ls, np.array(
        [[100 * m["test"][str(L)] for L in Ls] for m in _members(result, variant, N)]
    )


def longest_summary(
    result: dict, variant: str, N: int, n_boot: int = 10_000
) -> tuple[float, float, float]:
    """Mean accuracy at L = 10N+1 across seeds with its 95% seed-bootstrap interval (percent)."""
    from lengthgen.stats import bootstrap_ci

    return bootstrap_ci(longest_accuracy(result, variant, N), n_boot=n_boot, seed=0)


def ood_summary(
    result: dict, variant: str, N: int, n_boot: int = 10_000
) -> tuple[float, float, float]:
    """Mean OOD accuracy (equal weight over the five lengths > N) with its 95% bootstrap interval."""
    from lengthgen.stats import bootstrap_ci

    return bootstrap_ci(mean_ood(result, variant, N), n_boot=n_boot, seed=0)


def coefficient_analysis(result: dict, n_perm: int = 10_000, seed: int = 0) -> dict:
    """D.4: within-N ranks of N²|χ| and N|ℓ| against seed-level mean OOD accuracy, pooled over N,
    with a two-sided permutation test that shuffles ranks only within the same N."""
    from lengthgen.stats import permutation_pvalue, rankdata

    _check_result(result)
    n_perm = check_positive_int("n_perm", n_perm)
    rows = [m for m in result["members"] if m["variant"] == "pos"]
    Ns = np.array([m["N"] for m in rows])
    acc = np.array(
        [
            100 * np.mean([m["test"][str(L)] for L in test_lengths(m["N"])[1:]])
            for m in rows
        ]
    )
    out = {"N": Ns.tolist(), "acc": acc.tolist()}
    for name, val in (
        ("chi", [m["N"] ** 2 * abs(m["chi"]) for m in rows]),
        ("ell", [m["N"] * abs(m["ell"]) for m in rows]),
    ):
        val = np.asarray(val)
        rv, ra = np.empty(len(val)), np.empty(len(val))
        for N in np.unique(Ns):
            idx = Ns == N
            rv[idx], ra[idx] = rankdata(val[idx]), rankdata(acc[idx])
        if rv.std() == 0 or ra.std() == 0:
            out[name] = {"values": val.tolist(), "rho": float("nan"), "p": float("nan")}
            continue
        stat = lambda x, y: float(np.corrcoef(x, y)[0, 1])  # noqa: E731  (Pearson of within-N ranks)
        r, p = permutation_pvalue(stat, rv, ra, n_perm=n_perm, seed=seed, groups=Ns)
        out[name] = {"values": val.tolist(), "rho": r, "p": p}
    return out


def cap_note(result: dict, variant: str) -> str:
    """How the update cap touched one variant of a stored experiment (printed next to the claims)."""
    _check_result(result, "steps_cap")
    check_choice("variant", variant, VARIANTS)
    ms = [m for m in result["members"] if m["variant"] == variant]
    cap = result["steps_cap"]
    hit = sum(m["stop_step"] >= cap for m in ms)
    perfect = sum(m["best_val_acc"] == 1.0 for m in ms)
    if hit and cap >= PAPER_MAX_UPDATES:
        return (
            f"the paper's protocol: {hit}/{len(ms)} members ran all {cap} updates without meeting the stopping rule "
            f"({perfect}/{len(ms)} selected checkpoints have perfect validation)"
        )
    if hit:
        return (
            f"{hit}/{len(ms)} members were cut at the {cap}-update cap (paper: up to {PAPER_MAX_UPDATES:,}) before the "
            f"stopping rule fired ({perfect}/{len(ms)} selected checkpoints have perfect validation)"
        )
    return (
        f"all {len(ms)} members stopped by the paper's rule (3 perfect validations) before the {cap}-update cap, "
        "so the cap is not the cause"
    )
