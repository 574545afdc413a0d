"""The chapters' rows of ``python -m lengthgen bench``: the ensemble engine against a Python loop.

``python -m lengthgen bench [--json] [--steps K]`` runs :func:`run_chapter_benchmark`: one row per
chapter's real training step (``ch1_encoder``, ``ch2_single_layer``, ``ch3_decoder``,
``ch4_mlp_muon``) plus the toy case of :mod:`lengthgen.engine.bench` (``toy``), each timed as an
ensemble and as a per-member loop with the best plain-PyTorch settings (see "per-chapter rows"
below); the top-level ``ratio`` is the median of the rows' ratios. It sits above the engine
because it builds the chapters' models (the engine never imports a chapter). No test asserts a
speed: the tests check the keys and that the two sides end with the same losses.
"""

from __future__ import annotations

import time

import torch

from lengthgen.config import ConfigError, check_choice, check_positive_int
from lengthgen.engine.bench import _timed, peak_rss_mb, run_benchmark
from lengthgen.engine.train import (
    OptimConfig,
    members_of,
    seeded_generators,
    train_ensemble,
)

# =========================================================================== per-chapter rows
# ``python -m lengthgen bench`` measures each chapter's real training step: the chapter's own
# model (the same forward function on both sides), its optimiser settings, dtype and batch shape,
# trained for a few updates (a) as one ensemble through :func:`train_ensemble` and (b) as a plain
# PyTorch loop over the members, each member its own leaf tensors and its own ``torch.optim``
# optimiser with the fastest per-member settings this torch offers (``fused=True`` Adam / AdamW,
# ``torch.optim.Muon`` for chapter 4). The batches are drawn once, before timing, by the chapter's
# own sampler for all members; member e of the loop trains on row e of the same batches, so the
# final training losses agree up to rounding (``max_abs_loss_diff``). Throughput is in
# member-updates per CPU second of this process (one torch thread: on an idle core equal to
# wall-clock seconds; CPU time is less disturbed by other processes on a shared machine); the wall
# figures are reported too.

#: keys of every per-chapter row (issue 17, item 4)
ROW_KEYS = (
    "name",
    "members",
    "ensemble_updates_per_s",
    "loop_updates_per_s",
    "ratio",
    "max_abs_loss_diff",
)
#: the chapters' rows, in order
CHAPTER_ROWS = ("toy", "ch1_encoder", "ch2_single_layer", "ch3_decoder", "ch4_mlp_muon")


def _tmap(fn, obj):
    from lengthgen.engine.ensemble import _tree_map

    return _tree_map(fn, obj)


def _fused_ok(dtype) -> bool:
    """Whether ``torch.optim.Adam(fused=True)`` runs on CPU tensors of ``dtype`` in this torch."""
    try:
        p = torch.zeros(2, dtype=dtype, requires_grad=True)
        p.grad = torch.ones(2, dtype=dtype)
        torch.optim.Adam([p], lr=1e-3, fused=True).step()
        return True
    except (RuntimeError, TypeError, ValueError):
        return False


def _adam_loop_opt(
    kind: str, lr, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0, dtype=torch.float32
):
    """Factory ``named_params -> (optimizer, label)`` of the loop's per-member Adam / AdamW."""
    fused = _fused_ok(dtype)
    cls = torch.optim.AdamW if kind == "adamw" else torch.optim.Adam

    def make(named):
        opt = cls(
            [p for _, p in named],
            lr=lr,
            betas=betas,
            eps=eps,
            weight_decay=weight_decay,
            **({"fused": True} if fused else {"foreach": True}),
        )
        return opt

    return make, f"torch.optim.{cls.__name__}({'fused' if fused else 'foreach'})"


def _loop(params, member_model, batches, loss, loop_opt, clip, members, n):
    """The plain PyTorch side of :func:`_pair`: each member of ``members`` trained alone for
    ``n`` updates, as member-shaped leaf tensors with its own optimiser; its final losses."""
    trained = [k for k in params if not k.startswith("_")]
    const = [k for k in params if k.startswith("_")]
    finals = []
    for e in members:
        mm = member_model(e)
        P = {k: params[k][e].detach().clone().requires_grad_(True) for k in trained}
        C = {k: params[k][e : e + 1] for k in const}
        opt = loop_opt(list(P.items()))
        last = None
        for step in range(n):
            x, y = _tmap(lambda t: t[e : e + 1], batches[step])
            lv = loss(
                mm.forward({**{k: v.unsqueeze(0) for k, v in P.items()}, **C}, x), y
            )
            opt.zero_grad(set_to_none=True)
            lv.sum().backward()
            if clip is not None:
                torch.nn.utils.clip_grad_norm_(list(P.values()), clip, foreach=True)
            opt.step()
            last = lv.detach()
        finals.append(float(last[0]))
    return torch.tensor(finals, dtype=torch.float64)


def _pair(
    name: str,
    model,
    member_model,
    params: dict,
    batches: list,
    loss,
    optim: OptimConfig,
    loop_opt,
    loop_label: str,
    *,
    clip: float | None = None,
    warmup: int = 1,
    extra: dict | None = None,
) -> dict:
    """Time one chapter's training step as an ensemble and as a per-member loop; one row.

    ``model`` is the E-member model, ``member_model(e)`` the same model for member e alone (its
    forward takes 1-member parameters), ``batches`` a list of ``(x, y)`` with leading dim E (one per
    update), ``loss(out, y) -> [E]`` the chapter's per-member loss, ``optim`` the chapter's
    :class:`OptimConfig` (the ensemble side), ``loop_opt(named_params)`` the loop's optimiser."""
    E = members_of(params)
    steps = len(batches)

    def ens(sub_params, n):
        E_ = members_of(sub_params)
        sample = (
            (lambda step, gens, members=None: batches[step])
            if E_ == E
            else (
                lambda step, gens, members=None: _tmap(lambda t: t[:E_], batches[step])
            )
        )  # noqa: E731
        return train_ensemble(
            model,
            sub_params,
            sample=sample,
            loss=loss,
            optim=optim,
            steps=n,
            data_seeds=list(range(E_)),
            progress=False,
            record_every=max(1, n),
        )

    def loop(members, n):
        return _loop(params, member_model, batches, loss, loop_opt, clip, members, n)

    # untimed warm-up of both sides (lazy imports, kernel selection, first-call allocations)
    ens(params, warmup)
    loop([0], warmup)
    res, t_ens, c_ens = _timed(ens, params, steps)
    loop_loss, t_loop, c_loop = _timed(loop, range(E), steps)
    ens_loss = res.history["loss"][-1]
    row = {
        "name": name,
        "members": E,
        "ensemble_updates_per_s": round(E * steps / max(c_ens, 1e-9), 1),
        "loop_updates_per_s": round(E * steps / max(c_loop, 1e-9), 1),
        "ratio": round(c_loop / max(c_ens, 1e-9), 2),
        "max_abs_loss_diff": float((loop_loss - ens_loss).abs().max()),
        "steps": steps,
        "dtype": str(next(iter(params.values())).dtype).replace("torch.", ""),
        "loop_optimizer": loop_label,
        "ensemble_cpu_s": round(c_ens, 3),
        "loop_cpu_s": round(c_loop, 3),
        "ensemble_wall_s": round(t_ens, 3),
        "loop_wall_s": round(t_loop, 3),
        "wall_ratio": round(t_loop / max(t_ens, 1e-9), 2),
    }
    row.update(extra or {})
    return row


def _row_toy(steps: int, members: int, batch: int) -> dict:
    """The original toy benchmark (:func:`run_benchmark`) as one row."""
    r = run_benchmark(steps=steps, members=members, batch=batch, vmap=False)
    return {
        "name": "toy",
        "members": r["members"],  # wall-clock figures (the CPU seconds are rounded)
        "ensemble_updates_per_s": r["ensemble_steps_per_s"],
        "loop_updates_per_s": r["loop_steps_per_s"],
        "ratio": r["ratio"],
        "max_abs_loss_diff": r["max_abs_loss_diff"],
        "steps": steps,
        "dtype": "float64",
        "loop_optimizer": "torch.optim.Adam(default) + clip_grad_norm_",
        "ensemble_cpu_s": r["ensemble_cpu_s"],
        "loop_cpu_s": r["loop_cpu_s"],
        "ensemble_wall_s": r["ensemble_s"],
        "loop_wall_s": r["loop_s"],
        "cpu_ratio": r["cpu_time_ratio"],
        "measure": "wall",
        "model": "single-layer attention classifier, width 8, batch %d, lengths 1-51"
        % batch,
    }


def _row_ch1(steps: int, runs: int, n: int = 100) -> dict:
    """Chapter 1's FIRST learner (2 layers, d 16, FFN 64, post-norm), standard and log-scaled arms ×
    ``runs``, one grouped string of length ``n`` per update (batch 1), Adam lr 3e-4, float32."""
    from lengthgen.chapters.ch1 import paper as p1
    from lengthgen.chapters.ch1.experiments import first_model
    from lengthgen.engine.train import classification_loss
    from lengthgen.nn.tasks import random_strings

    arms = [p1.FIRST_ARMS[a] for a in p1.ATTENTION_ARMS for _ in range(runs)]
    flags, places = [a[0] for a in arms], [a[1] for a in arms]
    enc = first_model(flags, placements=places)
    E = len(arms)
    params = enc.init([1000 + (i % runs) for i in range(E)], dtype=torch.float32)
    gens = seeded_generators([5000 + i for i in range(E)])
    batches = []
    for _ in range(steps):
        x = enc.group(torch.stack([random_strings(1, n, generator=g) for g in gens]))
        batches.append((x, x.tokens[..., 1]))
    loop_opt, label = _adam_loop_opt("adam", p1.MODEL["lr"], dtype=torch.float32)
    return _pair(
        "ch1_encoder",
        enc,
        lambda e: first_model([flags[e]], placements=[places[e]]),
        params,
        batches,
        classification_loss,
        OptimConfig("adam", lr=p1.MODEL["lr"]),
        loop_opt,
        label,
        extra={
            "model": f"ch1 FIRST encoder, 2 arms x {runs} runs, n = {n}, batch 1 (grouped)"
        },
    )


def _row_ch2(
    steps: int, seeds: int, Ns=(11, 21, 31, 41, 51), task: str = "index"
) -> dict:
    """Chapter 2's A_pos/A_norm pair (Table 2's positional family): ``seeds`` × ``Ns`` × 2 variants in
    one ensemble, the chapter's sampler (batch 256, shared uniform length draw), Adam (lr 3e-4) with
    clipping at 1, float64."""
    from lengthgen.chapters.ch2 import paper as p2
    from lengthgen.chapters.ch2.experiments import make_sampler as ch2_sampler
    from lengthgen.chapters.ch2.single_layer import SingleLayer
    from lengthgen.engine.train import classification_loss

    members = [(v, N, s) for v in ("pos", "norm") for N in Ns for s in p2.SEEDS[:seeds]]
    vs, Nm, sm = (
        [m[0] for m in members],
        [m[1] for m in members],
        [m[2] for m in members],
    )
    ids: dict = {}
    streams = [ids.setdefault((N, s), len(ids)) for (_, N, s) in members]
    model = SingleLayer("pos", p2.H, max_lengths=Nm, variants=vs)
    params = model.init(sm, torch.float64)
    sample = ch2_sampler(task, Nm, streams, p2.BATCH, base_seed=0)
    batches = [sample(step, None) for step in range(steps)]
    loop_opt, label = _adam_loop_opt(
        "adam", p2.LR, betas=tuple(p2.BETAS), eps=p2.EPS, dtype=torch.float64
    )
    return _pair(
        "ch2_single_layer",
        model,
        lambda e: SingleLayer("pos", p2.H, max_lengths=[Nm[e]], variants=[vs[e]]),
        params,
        batches,
        classification_loss,
        OptimConfig("adam", lr=p2.LR, betas=tuple(p2.BETAS), eps=p2.EPS, clip=p2.CLIP),
        loop_opt,
        label + " + clip_grad_norm_(foreach)",
        clip=p2.CLIP,
        extra={
            "model": f"ch2 A_pos/A_norm ({task}), {seeds} seeds x N {list(Ns)} x 2, batch {p2.BATCH}"
        },
    )


def _row_ch3(steps: int, tier: str = "2L4H", encoding: str = "rope") -> dict:
    """Chapter 3's decoder (``tier``, ``encoding``) on the main task group (7 members, one init seed),
    the chapter's sampler (batch 64, n ~ U{10 … 20}), masked cross-entropy, AdamW (lr 3e-4, wd 0.01),
    float32."""
    from lengthgen.chapters.ch3 import paper as p3
    from lengthgen.chapters.ch3.experiments import (
        make_sampler as ch3_sampler,
        masked_ce,
    )
    from lengthgen.nn.decoder import Decoder

    P = p3.PROTOCOL["full"]["study"]
    tasks = p3.MAIN_TASKS
    model = Decoder.tier(tier, encoding, L0=P["L0"])
    params = model.init([0] * len(tasks), dtype=torch.float32)
    sample = ch3_sampler(
        tasks, batch=P["batch"], L0=P["L0"], steps=steps, length_seed=0
    )
    gens = seeded_generators([100 + i for i in range(len(tasks))])
    batches = [sample(step, gens) for step in range(steps)]
    loop_opt, label = _adam_loop_opt(
        "adamw", P["lr"], weight_decay=P["weight_decay"], dtype=torch.float32
    )
    return _pair(
        "ch3_decoder",
        model,
        lambda e: model,
        params,
        batches,
        masked_ce,
        OptimConfig("adamw", lr=P["lr"], weight_decay=P["weight_decay"]),
        loop_opt,
        label,
        extra={
            "model": f"ch3 decoder {tier} {encoding}, 7 tasks, batch {P['batch']}, n 10-20"
        },
    )


class _OneMuon:
    """The engine's Muon for one member, with ``torch.optim``'s interface (where this torch has
    no ``torch.optim.Muon``)."""

    def __init__(self, cfg, named):
        from lengthgen.engine.optim import EnsembleOptimizer

        self.named = dict(named)
        ens = {k: t.unsqueeze(0) for k, t in self.named.items()}
        self.opt = EnsembleOptimizer(cfg, ens, list(self.named))

    def zero_grad(self, set_to_none=True):
        for t in self.named.values():
            t.grad = None

    @torch.no_grad()
    def step(self):
        self.opt.step(
            {k: t.unsqueeze(0) for k, t in self.named.items()},
            {k: t.grad.unsqueeze(0) for k, t in self.named.items()},
        )


def _muon_loop_opt(cfg, lr: float, wd: float):
    """The loop's per-member Muon for chapter 4 (weight decay on V only) and its label:
    ``torch.optim.Muon`` where this torch has it, else the engine's, one member at a time."""
    if not hasattr(torch.optim, "Muon"):
        label = f"engine Muon per member ({cfg.ns_dtype} Newton-Schulz)"
        return (lambda named: _OneMuon(cfg, named)), label

    def make(named):
        d = dict(named)
        return torch.optim.Muon(
            [
                {"params": [d["W"]], "weight_decay": 0.0},
                {"params": [d["V"]], "weight_decay": wd},
            ],
            lr=lr,
            momentum=cfg.muon_momentum,
            nesterov=cfg.muon_nesterov,
            ns_coefficients=tuple(cfg.ns_coefficients),
            eps=cfg.ns_eps,
            ns_steps=cfg.ns_steps,
            adjust_lr_fn=cfg.adjust_lr,
        )

    return make, "torch.optim.Muon (bfloat16 Newton-Schulz)"


def _row_ch4(
    steps: int,
    members: int,
    p: int = 53,
    width: int = 256,
    n: int = 2000,
    batch: int = 1024,
    lr: float = 1e-3,
    wd: float = 0.1,
    ns_dtype: str | None = None,
) -> dict:
    """Chapter 4's MLP ``V sin(W x)`` trained with Muon (:func:`training.b1_optimizer`: decay on V,
    Newton–Schulz in the chapter's dtype) on per-member training sets (:class:`EpochSampler`, batch
    1024), float32; the loop uses ``torch.optim.Muon`` (its Newton–Schulz runs in bfloat16) when this
    torch has it, otherwise the engine's Muon one member at a time. ``ns_dtype`` overrides the
    ensemble's Newton–Schulz dtype (``"bfloat16"`` matches ``torch.optim.Muon``)."""
    import dataclasses

    from lengthgen.chapters.ch4 import paper as p4
    from lengthgen.chapters.ch4.data import train_set
    from lengthgen.chapters.ch4.model import ModularMLP
    from lengthgen.chapters.ch4.training import EpochSampler, b1_optimizer, masked_loss

    model = ModularMLP(p, width, "sine")
    seeds = [1337 + i for i in range(members)]
    params = model.init(seeds)
    data = [train_set(s, p, p4.TRAIN_LENGTHS, n) for s in seeds]
    sampler = EpochSampler(data, batch)
    gens = seeded_generators(seeds)
    batches = [sampler(step, gens) for step in range(steps)]
    cfg = b1_optimizer("muon", lr, wd, "sine", False)
    if ns_dtype is not None:
        cfg = dataclasses.replace(cfg, ns_dtype=ns_dtype)
    loop_opt, label = _muon_loop_opt(cfg, lr, wd)
    return _pair(
        "ch4_mlp_muon",
        model,
        lambda e: model,
        params,
        batches,
        masked_loss,
        cfg,
        loop_opt,
        label,
        extra={
            "model": f"ch4 MLP sine, p {p}, width {width}, n {n}, batch {batch}, Muon lr {lr}, wd {wd} on V",
            "ensemble_ns_dtype": cfg.ns_dtype,
        },
    )


#: sizes of the default (full) bench and of the tiny one the tests use: name -> keyword arguments
SIZES = {
    "full": {
        "toy": {"steps": 40, "members": 40, "batch": 256},
        "ch1_encoder": {"steps": 150, "runs": 20},
        "ch2_single_layer": {"steps": 60, "seeds": 4},
        "ch3_decoder": {"steps": 20},
        "ch4_mlp_muon": {"steps": 30, "members": 6},
    },
    "tiny": {
        "toy": {"steps": 2, "members": 3, "batch": 8},
        "ch1_encoder": {"steps": 3, "runs": 2},
        "ch2_single_layer": {"steps": 3, "seeds": 1, "Ns": (5, 9)},
        "ch3_decoder": {"steps": 2, "tier": "1L1H"},
        "ch4_mlp_muon": {
            "steps": 3,
            "members": 2,
            "p": 7,
            "width": 16,
            "n": 200,
            "batch": 64,
        },
    },
}
_ROWS = {
    "toy": _row_toy,
    "ch1_encoder": _row_ch1,
    "ch2_single_layer": _row_ch2,
    "ch3_decoder": _row_ch3,
    "ch4_mlp_muon": _row_ch4,
}


def run_chapter_benchmark(
    rows=CHAPTER_ROWS,
    *,
    size: str = "full",
    threads: int = 1,
    overrides: dict | None = None,
    steps: int | None = None,
) -> dict:
    """The per-chapter benchmark (``python -m lengthgen bench``): one row per entry of ``rows``
    (names of :data:`CHAPTER_ROWS`) at ``size`` (``full`` or ``tiny``, :data:`SIZES`; ``overrides``
    maps a row name to keyword arguments replacing those of the size; ``steps`` sets every row's
    number of timed updates). Returns ``{"rows": [...],
    "ratio": median row ratio, "threads", "torch", "measure"}``; every row has the keys
    :data:`ROW_KEYS` (and more: steps, dtype, the loop's optimiser, CPU and wall seconds)."""
    check_choice("size", size, tuple(SIZES))
    threads = check_positive_int("threads", threads)
    if steps is not None:
        steps = check_positive_int("steps", steps)
    rows = [
        check_choice("row", r, CHAPTER_ROWS)
        for r in ([rows] if isinstance(rows, str) else rows)
    ]
    if not rows:
        raise ConfigError("bench needs at least one row")
    old = torch.get_num_threads()
    torch.set_num_threads(threads)
    t0, c0 = time.perf_counter(), time.process_time()
    try:
        out = []
        for r in rows:
            kw = {
                **SIZES[size][r],
                **((overrides or {}).get(r, {})),
                **({"steps": steps} if steps else {}),
            }
            torch.manual_seed(0)
            out.append(_ROWS[r](**kw))
    finally:
        torch.set_num_threads(old)
    ratios = sorted(r["ratio"] for r in out)
    mid = len(ratios) // 2
    median = ratios[mid] if len(ratios) % 2 else (ratios[mid - 1] + ratios[mid]) / 2
    return {
        "ratio": round(median, 2),
        "rows": out,
        "threads": threads,
        "size": size,
        "torch": torch.__version__,
        "measure": "member-updates per process CPU second (1 torch thread); ratio = loop CPU s / ensemble CPU s",
        "total_wall_s": round(time.perf_counter() - t0, 1),
        "total_cpu_s": round(time.process_time() - c0, 1),
        "peak_rss_mb": round(peak_rss_mb(), 1),
    }


def bench_text(res: dict) -> str:
    """The per-chapter benchmark as an aligned plain-text table (the CLI's output without ``--json``)."""
    head = (
        "row",
        "members",
        "steps",
        "dtype",
        "ensemble upd/s",
        "loop upd/s",
        "ratio",
        "max |loss diff|",
        "loop optimiser",
    )
    lines = [head] + [
        (
            r["name"],
            str(r["members"]),
            str(r["steps"]),
            r["dtype"],
            f"{r['ensemble_updates_per_s']:.1f}",
            f"{r['loop_updates_per_s']:.1f}",
            f"{r['ratio']:.2f}",
            f"{r['max_abs_loss_diff']:.1e}",
            r["loop_optimizer"],
        )
        for r in res["rows"]
    ]
    w = [max(len(line[i]) for line in lines) for i in range(len(head))]
    out = ["  ".join(c.ljust(x) for c, x in zip(line, w)).rstrip() for line in lines]
    out.insert(1, "  ".join("-" * x for x in w))
    out.append(
        f"median ratio {res['ratio']:.2f}; {res['measure']}; torch {res['torch']}; "
        f"{res['total_wall_s']} s wall, {res['total_cpu_s']} CPU s in all"
    )
    return "\n".join(out)
