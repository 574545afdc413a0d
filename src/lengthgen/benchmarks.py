"""``python -m lengthgen bench`` (``book/engine.md``, "Benchmark"): :func:`run_chapter_benchmark`
trains each chapter's training step as one ensemble and as a loop over the members with
``torch.optim`` (:func:`_pair`) on the same batches, a row per chapter. No test asserts a speed."""

from __future__ import annotations

import resource
import statistics
import sys
import time

import torch

from lengthgen.config import check_choice, check_positive_int, nonempty
from lengthgen.engine.train import OptimConfig, _tree_map, classification_loss, members_of
from lengthgen.engine.train import seeded_generators, train_ensemble
from lengthgen.tables import text_table

#: the rows, in order
CHAPTER_ROWS = ("ch1_encoder", "ch2_single_layer", "ch3_decoder", "ch4_mlp_muon")
#: what the figures count
MEASURE = (
    "member-updates per process CPU second (1 torch thread); ratio = loop CPU s / ensemble CPU s"
)


# =========================================================================== ensemble vs loop
def _loop_optimizer(cfg: OptimConfig, dtype):
    """``(make(named params) -> optimizer, label)``: ``cfg`` for one member as ``torch.optim`` runs
    it: Adam / AdamW fused where this torch runs ``fused=True`` on CPU tensors of ``dtype`` (else
    foreach), ``torch.optim.Muon``; decay only on ``cfg.decay``'s parameters."""

    def groups(named):
        out = [[p for k, p in named if cfg.decay is None or k in cfg.decay]]
        out.append([p for k, p in named if not (cfg.decay is None or k in cfg.decay)])
        wds = (cfg.weight_decay, 0.0)
        return [{"params": ps, "weight_decay": wd} for ps, wd in zip(out, wds) if ps]

    if cfg.name == "muon":
        muon = dict(momentum=cfg.muon_momentum, ns_steps=cfg.ns_steps)  # torch's other defaults
        make = lambda named: torch.optim.Muon(groups(named), lr=cfg.lr, **muon)  # noqa: E731
        return make, "torch.optim.Muon (bfloat16 Newton-Schulz)"
    try:
        p = torch.zeros(2, dtype=dtype, requires_grad=True)
        p.grad = torch.ones(2, dtype=dtype)
        torch.optim.Adam([p], lr=1e-3, fused=True).step()
        kernel = "fused"
    except (RuntimeError, TypeError, ValueError):
        kernel = "foreach"
    cls = torch.optim.AdamW if cfg.name == "adamw" else torch.optim.Adam
    kw = {"lr": cfg.lr, "betas": cfg.betas, "eps": cfg.eps, kernel: True}
    return lambda named: cls(groups(named), **kw), f"torch.optim.{cls.__name__}({kernel})"


def _loop(params, member_model, batches, loss, make_opt, clip, members, n):
    """The plain PyTorch side of :func:`_pair`: each member of ``members`` trained alone for
    ``n`` updates, as member-shaped leaf tensors with its own optimiser; its final losses."""
    trained = [k for k in params if not k.startswith("_")]
    const = [k for k in params if k.startswith("_")]
    finals = []
    for e in members:
        mm = member_model(e)
        P = {k: params[k][e].detach().clone().requires_grad_(True) for k in trained}
        C = {k: params[k][e : e + 1] for k in const}
        opt = make_opt(list(P.items()))
        for step in range(n):
            x, y = _tree_map(lambda t: t[e : e + 1], batches[step])
            lv = loss(mm.forward({**{k: v.unsqueeze(0) for k, v in P.items()}, **C}, x), y)
            opt.zero_grad(set_to_none=True)
            lv.sum().backward()
            if clip is not None:
                torch.nn.utils.clip_grad_norm_(list(P.values()), clip, foreach=True)
            opt.step()
        finals.append(float(lv.detach()[0]))
    return torch.tensor(finals, dtype=torch.float64)


def _timed(fn, *args):
    """``(fn(*args), wall seconds, CPU seconds of this process)``."""
    t0, c0 = time.perf_counter(), time.process_time()
    out = fn(*args)
    return out, time.perf_counter() - t0, time.process_time() - c0


def _pair(name, model, member_model, params, batches, loss, optim: OptimConfig, about) -> dict:
    """One row: ``batches`` (an ``(x, y)`` per update) trained as the ensemble ``model`` and as a
    loop over ``member_model(e)``; both final losses agree up to rounding (max_abs_loss_diff)."""
    dtype = next(iter(params.values())).dtype
    make_opt, label = _loop_optimizer(optim, dtype)
    label += " + clip_grad_norm_(foreach)" if optim.clip is not None else ""
    E, steps = members_of(params), len(batches)

    def ens(n):
        sample = lambda step, gens, members=None: batches[step]  # noqa: E731
        kw = dict(steps=n, data_seeds=list(range(E)), progress=False, record_every=max(1, n))
        return train_ensemble(model, params, sample=sample, loss=loss, optim=optim, **kw)

    def per_member(members, n):
        return _loop(params, member_model, batches, loss, make_opt, optim.clip, members, n)

    # untimed warm-up of both sides (lazy imports, kernel selection, first-call allocations)
    ens(1)
    per_member([0], 1)
    res, t_ens, c_ens = _timed(ens, steps)
    loop_loss, t_loop, c_loop = _timed(per_member, range(E), steps)
    c_ens, c_loop, t_ens, t_loop = (max(t, 1e-9) for t in (c_ens, c_loop, t_ens, t_loop))
    diff = float((loop_loss - res.history["loss"][-1]).abs().max())
    n = E * steps  # member-updates on each side
    row = {"name": name, "members": E, "ensemble_updates_per_s": round(n / c_ens, 1)}
    row |= {"loop_updates_per_s": round(n / c_loop, 1), "ratio": round(c_loop / c_ens, 2)}
    row |= {"max_abs_loss_diff": diff, "steps": steps, "dtype": str(dtype).replace("torch.", "")}
    cpu = {"ensemble_cpu_s": round(c_ens, 3), "loop_cpu_s": round(c_loop, 3)}
    wall = {"ensemble_wall_s": round(t_ens, 3), "loop_wall_s": round(t_loop, 3)}
    row |= {"loop_optimizer": label, **cpu, **wall, "wall_ratio": round(t_loop / t_ens, 2)}
    return row | {"model": about}


# =========================================================================== the rows
# Each row returns what :func:`_pair` compares: (model, member_model, params, batches, loss, optim,
# description); the description names the case.
def _row_ch1(steps: int = 150, runs: int = 20, n: int = 100) -> tuple:
    """Chapter 1's FIRST encoder, both attention arms, float32, the chapter's Adam."""
    from lengthgen.chapters.ch1 import paper as p1
    from lengthgen.chapters.ch1.training import first_model
    from lengthgen.nn.tasks import random_strings

    arms = [p1.FIRST_ARMS[a] for a in p1.ATTENTION_ARMS for _ in range(runs)]
    flags, places = [a[0] for a in arms], [a[1] for a in arms]
    enc = first_model(flags, placements=places)
    params = enc.init([1000 + (i % runs) for i in range(len(arms))], dtype=torch.float32)
    gens = seeded_generators([5000 + i for i in range(len(arms))])
    batches = []
    for _ in range(steps):
        x = enc.group(torch.stack([random_strings(1, n, generator=g) for g in gens]))
        batches.append((x, x.tokens[..., 1]))
    member = lambda e: first_model([flags[e]], placements=[places[e]])  # noqa: E731
    about = f"ch1 FIRST encoder, 2 arms x {runs} runs, n = {n}, batch 1 (grouped)"
    optim = OptimConfig("adam", lr=p1.MODEL["lr"])
    return enc, member, params, batches, classification_loss, optim, about


def _row_ch2(steps: int = 60, seeds: int = 4, Ns=(11, 21, 31, 41, 51), task="index") -> tuple:
    """Chapter 2's A_pos/A_norm pair (Table 2), the chapter's sampler and Adam, float64."""
    from lengthgen.chapters.ch2 import paper as p2
    from lengthgen.chapters.ch2.experiments import make_sampler as ch2_sampler
    from lengthgen.chapters.ch2.single_layer import SingleLayer

    members = [(v, N, s) for v in ("pos", "norm") for N in Ns for s in p2.SEEDS[:seeds]]
    vs, Nm, sm = (list(m) for m in zip(*members))
    ids: dict = {}
    streams = [ids.setdefault((N, s), len(ids)) for (_, N, s) in members]
    model = SingleLayer("pos", p2.H, max_lengths=Nm, variants=vs)
    params = model.init(sm, torch.float64)
    sample = ch2_sampler(task, Nm, streams, p2.BATCH, base_seed=0)
    batches = [sample(step, None) for step in range(steps)]
    member = lambda e: SingleLayer("pos", p2.H, max_lengths=[Nm[e]], variants=[vs[e]])  # noqa: E731
    optim = OptimConfig("adam", lr=p2.LR, betas=tuple(p2.BETAS), eps=p2.EPS, clip=p2.CLIP)
    about = f"ch2 A_pos/A_norm ({task}), {seeds} seeds x N {list(Ns)} x 2, batch {p2.BATCH}"
    return model, member, params, batches, classification_loss, optim, about


def _row_ch3(steps: int = 20, tier: str = "2L4H", encoding: str = "rope") -> tuple:
    """Chapter 3's decoder on the main task group, the chapter's sampler and AdamW, float32."""
    from lengthgen.chapters.ch3 import paper as p3
    from lengthgen.chapters.ch3.training import make_sampler as ch3_sampler, masked_ce
    from lengthgen.nn.decoder import Decoder

    P, tasks = p3.PROTOCOL["full"]["study"], p3.MAIN_TASKS
    model = Decoder.tier(tier, encoding, L0=P["L0"])
    params = model.init([0] * len(tasks), dtype=torch.float32)
    sample = ch3_sampler(tasks, batch=P["batch"], L0=P["L0"], steps=steps, length_seed=0)
    gens = seeded_generators([100 + i for i in range(len(tasks))])
    batches = [sample(step, gens) for step in range(steps)]
    optim = OptimConfig("adamw", lr=P["lr"], weight_decay=P["weight_decay"])
    about = f"ch3 decoder {tier} {encoding}, 7 tasks, batch {P['batch']}, n 10-20"
    return model, lambda e: model, params, batches, masked_ce, optim, about


def _row_ch4(steps=30, members=6, p=53, width=256, n=2000, batch=1024) -> tuple:
    """Chapter 4's MLP ``V sin(W x)`` with the chapter's Muon, float32; the loop runs
    ``torch.optim.Muon`` (Newton–Schulz in bfloat16)."""
    from lengthgen.chapters.ch4 import paper as p4
    from lengthgen.chapters.ch4.data import train_set
    from lengthgen.chapters.ch4.data import ModularMLP
    from lengthgen.chapters.ch4.training import EpochSampler, b1_optimizer, masked_loss

    model, seeds = ModularMLP(p, width, "sine"), [1337 + i for i in range(members)]
    sampler = EpochSampler([train_set(s, p, p4.TRAIN_LENGTHS, n) for s in seeds], batch)
    gens = seeded_generators(seeds)
    batches = [sampler(step, gens) for step in range(steps)]
    optim = b1_optimizer("muon", 1e-3, 0.1, "sine", False)
    about = f"ch4 MLP sine, p {p}, width {width}, n {n}, batch {batch}, Muon lr 0.001, wd 0.1 on V"
    about += f", Newton-Schulz in {optim.ns_dtype}"
    return model, lambda e: model, model.init(seeds), batches, masked_loss, optim, about


#: the rows' keyword arguments at each size: full (the default) is each row's defaults; tiny the
#: one the tests use
SIZES = {
    "full": dict.fromkeys(CHAPTER_ROWS, {}),
    "tiny": {
        "ch1_encoder": {"steps": 3, "runs": 2},
        "ch2_single_layer": {"steps": 3, "seeds": 1, "Ns": (5, 9)},
        "ch3_decoder": {"steps": 2, "tier": "1L1H"},
        "ch4_mlp_muon": {"steps": 3, "members": 2, "p": 7, "width": 16, "n": 200, "batch": 64},
    },
}
_ROWS = dict(zip(CHAPTER_ROWS, (_row_ch1, _row_ch2, _row_ch3, _row_ch4)))


def run_chapter_benchmark(rows=CHAPTER_ROWS, *, size: str = "full", steps=None) -> dict:
    """One row (:func:`_pair`) per name of ``rows`` at ``size`` (:data:`SIZES`; ``steps``: every
    row's timed updates) on one torch thread, and the median of the rows' ``ratio``."""
    check_choice("size", size, tuple(SIZES))
    more = {} if steps is None else {"steps": check_positive_int("steps", steps)}
    rows = nonempty("rows", [rows] if isinstance(rows, str) else rows)
    rows = [check_choice("row", r, CHAPTER_ROWS) for r in rows]
    old = torch.get_num_threads()
    torch.set_num_threads(1)
    t0, c0 = time.perf_counter(), time.process_time()
    try:
        out = []
        for r in rows:
            torch.manual_seed(0)
            out.append(_pair(r, *_ROWS[r](**(SIZES[size][r] | more))))
    finally:
        torch.set_num_threads(old)
    per_mb = 2**20 if sys.platform == "darwin" else 1024  # ru_maxrss: bytes on macOS, else KiB
    rss = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / per_mb, 1)
    res = {"ratio": round(statistics.median(r["ratio"] for r in out), 2), "rows": out, "size": size}
    res |= {"torch": torch.__version__, "measure": MEASURE, "peak_rss_mb": rss}
    wall, cpu = round(time.perf_counter() - t0, 1), round(time.process_time() - c0, 1)
    return res | {"total_wall_s": wall, "total_cpu_s": cpu}


def bench_text(res: dict) -> str:
    """The benchmark as an aligned plain-text table (the CLI's output without ``--json``)."""
    head = ("row", "members", "steps", "dtype", "ensemble upd/s", "loop upd/s", "ratio")
    body = [
        (r["name"], str(r["members"]), str(r["steps"]), r["dtype"])
        + (f"{r['ensemble_updates_per_s']:.1f}", f"{r['loop_updates_per_s']:.1f}")
        + (f"{r['ratio']:.2f}", f"{r['max_abs_loss_diff']:.1e}", r["loop_optimizer"])
        for r in res["rows"]
    ]
    tail = (
        f"median ratio {res['ratio']:.2f}; {res['measure']}; torch {res['torch']}; "
        f"{res['total_wall_s']} s wall, {res['total_cpu_s']} CPU s in all"
    )
    return "\n".join(text_table(head + ("max |loss diff|", "loop optimiser"), body) + [tail])
