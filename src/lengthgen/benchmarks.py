"""``python -m lengthgen bench``: the ensemble engine against a plain PyTorch loop, one row per case.

:func:`run_chapter_benchmark` trains a toy case (the attention classifier below) and each
chapter's real training step for a few updates, (a) as one ensemble (:func:`train_ensemble`) and
(b) as a loop over the members, each with its own leaf tensors and the fastest per-member
``torch.optim`` optimiser this torch offers. Both sides see the same batches, drawn before
timing, so their final losses agree up to rounding. Throughput is member-updates per CPU second
(one torch thread); no test asserts a speed. Book page ``book/engine.md`` ("Benchmark").
"""

from __future__ import annotations

import math
import resource
import statistics
import sys
import time

import torch

from lengthgen.config import ConfigError, check_choice, check_positive_int
from lengthgen.engine.ensemble import _tree_map
from lengthgen.tables import text_table
from lengthgen.engine.train import (
    OptimConfig,
    classification_loss,
    members_of,
    seeded_generators,
    train_ensemble,
)

#: the rows, in order
CHAPTER_ROWS = ("toy", "ch1_encoder", "ch2_single_layer", "ch3_decoder", "ch4_mlp_muon")
FORMULATIONS = ("factored", "softmax")
#: the toy classifier's width and longest string
WIDTH, MAX_LEN = 8, 51

# =========================================================================== the toy case
_SHAPES = lambda d, h, L: {  # noqa: E731 - name -> per-member shape and init std
    "E0": ((d,), 1.0),
    "E1": ((d,), 1.0),
    "P": ((L, d), 1.0),
    "q0": ((d,), 1.0),
    "Wq": ((d, d), 1 / math.sqrt(d)),
    "Wk": ((d, d), 1 / math.sqrt(d)),
    "Wv": ((d, d), 1 / math.sqrt(d)),
    "W1": ((h, d), 1 / math.sqrt(d)),
    "b1": ((h,), 0.0),
    "W2": ((2, h), 1 / math.sqrt(h)),
    "b2": ((2,), 0.0),
}


def _pool_softmax(bits, base, c, E0, dE, Pn):
    """Attention pooling with an explicit softmax over [..., B, n] scores."""
    s = torch.addcmul(base[..., None, :], bits, c[..., None, None])
    a = torch.softmax(s, -1)
    m = (a * bits).sum(-1)
    return E0[..., None, :] + m[..., None] * dE[..., None, :] + a @ Pn


def _pool_factored(bits, base, c, E0, dE, Pn):
    """The same pooling without a [..., B, n] intermediate, using that the tokens are bits.

    With w_j = exp(base_j − max base) and the per-bit factors u0 = exp(−c⁺), u1 = exp(c − c⁺),
    exp(s_bj − max) = w_j (u0 + (u1 − u0) bit_bj), so the softmax normaliser and the weighted
    sums of bits and positions are the matrix product ``bits @ [w | w ⊙ P]`` plus per-member
    constants. (The shifts are detached: softmax does not depend on them.)
    """
    w = torch.exp(base - base.max(-1, keepdim=True).values.detach())  # [..., n]
    cp = torch.relu(c).detach()
    u0, u1 = torch.exp(-cp), torch.exp(c - cp)  # [...]
    wP = w[..., None] * Pn  # [..., n, d]
    S = bits @ torch.cat([w[..., None], wP], -1)  # [..., B, 1 + d]
    Sw, SP = S[..., 0], S[..., 1:]
    du = (u1 - u0)[..., None]
    Z = u0[..., None] * w.sum(-1)[..., None] + du * Sw  # [..., B]
    mbits = u1[..., None] * Sw / Z
    aP = (u0[..., None, None] * wP.sum(-2)[..., None, :] + du[..., None] * SP) / Z[..., None]
    return E0[..., None, :] + mbits[..., None] * dE[..., None, :] + aP


def _classify(p, bits, mask, scale, factored: bool):
    """Logits [..., B, 2]; ``p`` holds one member's tensors or stacked [E, ...] tensors."""
    n = bits.shape[-1]
    q = (p["Wq"] @ p["q0"][..., None])[..., 0]
    kq = (p["Wk"].mT @ q[..., None])[..., 0]
    dE = p["E1"] - p["E0"]
    t0 = (p["E0"] * kq).sum(-1)
    Pn = p["P"][..., :n, :]
    base = scale[..., None] * (t0[..., None] + (Pn @ kq[..., None])[..., 0])  # [..., n]
    base = base.masked_fill(~mask, float("-inf"))
    c = scale * (dE * kq).sum(-1)
    pooled = (_pool_factored if factored else _pool_softmax)(bits, base, c, p["E0"], dE, Pn)
    v = pooled @ p["Wv"].mT
    h = torch.relu(v @ p["W1"].mT + p["b1"][..., None, :])
    return h @ p["W2"].mT + p["b2"][..., None, :]


class AttentionClassifier:
    """Hand-batched single-layer, single-query attention classifier over bit strings.

    Per member: token embeddings E0, E1, position embeddings P_j, a query q0 with maps Wq, Wk, Wv,
    a width-h ReLU layer and 2 logits. With kq = Wkᵀ Wq q0, position j scores
    log(n) · (E_{w_j} + P_j) · kq and the pooled value is Wv Σ_j α_j (E_{w_j} + P_j).
    ``x = (bits [E, B, n], mask [E, n], scale [E])``. ``formulation="softmax"`` forms the
    [E, B, n] scores; ``"factored"`` the same function in one matrix product (:func:`_pool_factored`).
    """

    def __init__(
        self,
        width: int = WIDTH,
        hidden: int = WIDTH,
        max_len: int = MAX_LEN,
        formulation: str = "factored",
    ):
        self.d = check_positive_int("width", width)
        self.h = check_positive_int("hidden", hidden)
        self.max_len = check_positive_int("max_len", max_len)
        self.factored = check_choice("formulation", formulation, FORMULATIONS) == "factored"

    def init(self, seeds, dtype=torch.float64, device=None):
        gens = seeded_generators(seeds)
        out = {}
        for name, (shape, std) in _SHAPES(self.d, self.h, self.max_len).items():
            out[name] = torch.stack(
                [torch.randn(shape, generator=g, dtype=dtype) * std for g in gens]
            )
        return {k: v.to(device or "cpu") for k, v in out.items()}

    def forward(self, p, x):
        bits, mask, scale = x
        return _classify(p, bits, mask, scale, self.factored)


_BYTE_BITS: dict = {}


def unpack_bits(words: torch.Tensor, n: int, dtype=torch.float64) -> torch.Tensor:
    """Bits 0 … n−1 (little-endian) of int64 words, as ``dtype``: ``[..., W] -> [..., n]``, n ≤ 64·W.

    One table lookup per byte (a [256, 8] table of bits), so unpacking E members' batches is a
    single ``index_select``.
    """
    if n > 64 * words.shape[-1]:
        raise ValueError(f"cannot unpack {n} bits from {words.shape[-1]} 64-bit words")
    key = (dtype, words.device)
    if key not in _BYTE_BITS:
        _BYTE_BITS[key] = (
            (
                torch.arange(256, device=words.device)[:, None]
                >> torch.arange(8, device=words.device)
            )
            & 1
        ).to(dtype)
    table = _BYTE_BITS[key]
    b = words.contiguous().view(torch.uint8).flatten().long()
    out = table.index_select(0, b).view(*words.shape[:-1], 64 * words.shape[-1])
    return out[..., :n].contiguous()


def make_sampler(batch: int = 256, max_len: int = MAX_LEN, dtype=torch.float64, lengths=None):
    """``sample(step, generators)``: per member a length n ~ U{1..max_len}, then ``batch`` random
    strings of that length (task First, label = first bit); padded to the longest with a mask.

    Each member's generator draws its length and ``batch`` words of 62 random bits
    (max_len ≤ 62); the bits are unpacked for all members at once (cheap: one op instead of E).
    With ``lengths`` (a sequence, one length per step) every member uses ``lengths[step]`` and
    only the bits come from its generator: no padding, at the price of correlated lengths.
    """
    batch = check_positive_int("batch", batch)
    max_len = check_positive_int("max_len", max_len)
    if max_len > 62:
        raise ConfigError(
            f"the benchmark sampler draws one 62-bit word per string; max_len must be <= 62, got {max_len}"
        )
    if lengths is not None:
        lengths = [check_positive_int("lengths[i]", n) for n in lengths]
        if max(lengths) > max_len:
            raise ConfigError(f"shared lengths must be <= max_len = {max_len}, got {max(lengths)}")

    def sample(step, gens):
        if lengths is None:
            ns = [int(torch.randint(1, max_len + 1, (1,), generator=g)) for g in gens]
        else:
            ns = [lengths[step]] * len(gens)
        words = torch.stack([torch.randint(0, 2**62, (batch, 1), generator=g) for g in gens])
        L = max(ns)
        n = torch.tensor(ns)
        words &= ((1 << n) - 1)[:, None, None]  # zero the padding bits
        bits = unpack_bits(words, L, dtype)  # [E, B, L]
        mask = torch.arange(L)[None, :] < n[:, None]
        return (bits, mask, torch.log(n.to(dtype))), bits[:, :, 0].long()

    return sample


def peak_rss_mb() -> float:
    """Peak resident set size of this process so far, in MiB (``resource.getrusage``)."""
    r = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return r / 2**20 if sys.platform == "darwin" else r / 1024


def _timed(fn, *args):
    """``(fn(*args), wall seconds, CPU seconds of this process)``."""
    t0, c0 = time.perf_counter(), time.process_time()
    out = fn(*args)
    return out, time.perf_counter() - t0, time.process_time() - c0


# =========================================================================== the rows
def _adam_loop_opt(
    kind: str, lr, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0, dtype=torch.float32
):
    """``(make(named_params) -> optimizer, label)``: the loop's per-member Adam / AdamW, fused
    where this torch runs ``fused=True`` on CPU tensors of ``dtype``, else foreach."""
    try:
        p = torch.zeros(2, dtype=dtype, requires_grad=True)
        p.grad = torch.ones(2, dtype=dtype)
        torch.optim.Adam([p], lr=1e-3, fused=True).step()
        kernel = "fused"
    except (RuntimeError, TypeError, ValueError):
        kernel = "foreach"
    cls = torch.optim.AdamW if kind == "adamw" else torch.optim.Adam

    def make(named):
        return cls(
            [p for _, p in named],
            lr=lr,
            betas=betas,
            eps=eps,
            weight_decay=weight_decay,
            **{kernel: True},
        )

    return make, f"torch.optim.{cls.__name__}({kernel})"


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
            x, y = _tree_map(lambda t: t[e : e + 1], batches[step])
            lv = loss(mm.forward({**{k: v.unsqueeze(0) for k, v in P.items()}, **C}, x), y)
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
    loop: tuple,
    *,
    extra: dict | None = None,
) -> dict:
    """One row: the chapter's training step timed as the ensemble ``model`` (with ``optim``) and
    as a loop over ``member_model(e)`` (one member's model) with ``loop = (make, label)``, both on
    ``batches`` (one ``(x, y)`` per update, leading dim E) and clipping as ``optim.clip`` says."""
    loop_opt, loop_label = loop
    clip = optim.clip
    if clip is not None:
        loop_label += " + clip_grad_norm_(foreach)"
    E = members_of(params)
    steps = len(batches)

    def ens(sub_params, n):
        return train_ensemble(
            model,
            sub_params,
            sample=lambda step, gens, members=None: batches[step],
            loss=loss,
            optim=optim,
            steps=n,
            data_seeds=list(range(E)),
            progress=False,
            record_every=max(1, n),
        )

    def per_member(members, n):
        return _loop(params, member_model, batches, loss, loop_opt, clip, members, n)

    # untimed warm-up of both sides (lazy imports, kernel selection, first-call allocations)
    ens(params, 1)
    per_member([0], 1)
    res, t_ens, c_ens = _timed(ens, params, steps)
    loop_loss, t_loop, c_loop = _timed(per_member, range(E), steps)
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


def _row_toy(
    steps: int,
    members: int,
    batch: int,
    max_len: int = 51,
    lengths: str = "per_member",
    formulation: str = "factored",
    lr: float = 1e-3,
) -> dict:
    """The toy case: ``members`` attention classifiers (:class:`AttentionClassifier`, width 8,
    float64) on task First, batch ``batch``, lengths 1 … ``max_len`` drawn per member and step
    (``lengths="per_member"``; the ensemble pads to the longest) or one per step for all
    (``"shared"``), Adam (lr 1e-3) with clipping at 1."""
    check_choice("lengths", lengths, ("per_member", "shared"))
    model = AttentionClassifier(max_len=max_len, formulation=formulation)
    params = model.init([1000 + e for e in range(members)], torch.float64)
    shared = None
    if lengths == "shared":
        gen = torch.Generator().manual_seed(9)
        shared = torch.randint(1, max_len + 1, (steps,), generator=gen).tolist()
    sample = make_sampler(batch, max_len, lengths=shared)
    gens = seeded_generators([5000 + e for e in range(members)])
    batches = [sample(step, gens) for step in range(steps)]
    loop = _adam_loop_opt("adam", lr, dtype=torch.float64)
    return _pair(
        "toy",
        model,
        lambda e: model,
        params,
        batches,
        classification_loss,
        OptimConfig("adam", lr=lr, clip=1.0),
        loop,
        extra={
            "model": f"single-layer attention classifier ({formulation}), width 8, "
            f"batch {batch}, lengths 1-{max_len} ({lengths})"
        },
    )


def _row_ch1(steps: int, runs: int, n: int = 100) -> dict:
    """Chapter 1's FIRST learner (2 layers, d 16, FFN 64, post-norm), standard and log-scaled arms ×
    ``runs``, one grouped string of length ``n`` per update (batch 1), Adam lr 3e-4, float32."""
    from lengthgen.chapters.ch1 import paper as p1
    from lengthgen.chapters.ch1.training import first_model
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
    loop = _adam_loop_opt("adam", p1.MODEL["lr"], dtype=torch.float32)
    return _pair(
        "ch1_encoder",
        enc,
        lambda e: first_model([flags[e]], placements=[places[e]]),
        params,
        batches,
        classification_loss,
        OptimConfig("adam", lr=p1.MODEL["lr"]),
        loop,
        extra={"model": f"ch1 FIRST encoder, 2 arms x {runs} runs, n = {n}, batch 1 (grouped)"},
    )


def _row_ch2(steps: int, seeds: int, Ns=(11, 21, 31, 41, 51), task: str = "index") -> dict:
    """Chapter 2's A_pos/A_norm pair (Table 2's positional family): ``seeds`` × ``Ns`` × 2 variants in
    one ensemble, the chapter's sampler (batch 256, shared uniform length draw), Adam (lr 3e-4) with
    clipping at 1, float64."""
    from lengthgen.chapters.ch2 import paper as p2
    from lengthgen.chapters.ch2.experiments import make_sampler as ch2_sampler
    from lengthgen.chapters.ch2.single_layer import SingleLayer

    members = [(v, N, s) for v in ("pos", "norm") for N in Ns for s in p2.SEEDS[:seeds]]
    vs, Nm, sm = ([m[0] for m in members], [m[1] for m in members], [m[2] for m in members])
    ids: dict = {}
    streams = [ids.setdefault((N, s), len(ids)) for (_, N, s) in members]
    model = SingleLayer("pos", p2.H, max_lengths=Nm, variants=vs)
    params = model.init(sm, torch.float64)
    sample = ch2_sampler(task, Nm, streams, p2.BATCH, base_seed=0)
    batches = [sample(step, None) for step in range(steps)]
    loop = _adam_loop_opt("adam", p2.LR, betas=tuple(p2.BETAS), eps=p2.EPS, dtype=torch.float64)
    return _pair(
        "ch2_single_layer",
        model,
        lambda e: SingleLayer("pos", p2.H, max_lengths=[Nm[e]], variants=[vs[e]]),
        params,
        batches,
        classification_loss,
        OptimConfig("adam", lr=p2.LR, betas=tuple(p2.BETAS), eps=p2.EPS, clip=p2.CLIP),
        loop,
        extra={
            "model": f"ch2 A_pos/A_norm ({task}), {seeds} seeds x N {list(Ns)} x 2, batch {p2.BATCH}"
        },
    )


def _row_ch3(steps: int, tier: str = "2L4H", encoding: str = "rope") -> dict:
    """Chapter 3's decoder (``tier``, ``encoding``) on the main task group (7 members, one init seed),
    the chapter's sampler (batch 64, n ~ U{10 … 20}), masked cross-entropy, AdamW (lr 3e-4, wd 0.01),
    float32."""
    from lengthgen.chapters.ch3 import paper as p3
    from lengthgen.chapters.ch3.experiments import make_sampler as ch3_sampler, masked_ce
    from lengthgen.nn.decoder import Decoder

    P = p3.PROTOCOL["full"]["study"]
    tasks = p3.MAIN_TASKS
    model = Decoder.tier(tier, encoding, L0=P["L0"])
    params = model.init([0] * len(tasks), dtype=torch.float32)
    sample = ch3_sampler(tasks, batch=P["batch"], L0=P["L0"], steps=steps, length_seed=0)
    gens = seeded_generators([100 + i for i in range(len(tasks))])
    batches = [sample(step, gens) for step in range(steps)]
    loop = _adam_loop_opt("adamw", P["lr"], weight_decay=P["weight_decay"], dtype=torch.float32)
    return _pair(
        "ch3_decoder",
        model,
        lambda e: model,
        params,
        batches,
        masked_ce,
        OptimConfig("adamw", lr=P["lr"], weight_decay=P["weight_decay"]),
        loop,
        extra={"model": f"ch3 decoder {tier} {encoding}, 7 tasks, batch {P['batch']}, n 10-20"},
    )


def _muon_loop_opt(cfg, lr: float, wd: float):
    """The loop's per-member ``torch.optim.Muon`` for chapter 4 (weight decay on V only)."""

    def make(named):
        d = dict(named)
        return torch.optim.Muon(
            [{"params": [d["W"]], "weight_decay": 0.0}, {"params": [d["V"]], "weight_decay": wd}],
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
) -> dict:
    """Chapter 4's MLP ``V sin(W x)`` trained with Muon (:func:`training.b1_optimizer`: decay on V,
    Newton–Schulz in the chapter's dtype) on per-member training sets (batch 1024), float32; the
    loop uses ``torch.optim.Muon`` (its Newton–Schulz runs in bfloat16)."""
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
    loop = _muon_loop_opt(cfg, lr, wd)
    return _pair(
        "ch4_mlp_muon",
        model,
        lambda e: model,
        params,
        batches,
        masked_loss,
        cfg,
        loop,
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
        "ch4_mlp_muon": {"steps": 3, "members": 2, "p": 7, "width": 16, "n": 200, "batch": 64},
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
    """``python -m lengthgen bench``: one row (:func:`_pair`) per name of ``rows`` at ``size``
    (:data:`SIZES`; ``overrides`` maps a row to keyword arguments replacing the size's, ``steps``
    sets every row's timed updates), and the median of the rows' ``ratio``."""
    check_choice("size", size, tuple(SIZES))
    threads = check_positive_int("threads", threads)
    if steps is not None:
        steps = check_positive_int("steps", steps)
    rows = [
        check_choice("row", r, CHAPTER_ROWS) for r in ([rows] if isinstance(rows, str) else rows)
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
    return {
        "ratio": round(statistics.median(r["ratio"] for r in out), 2),
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
