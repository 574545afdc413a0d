"""Benchmark: the ensemble engine against a Python loop over the same models (the toy case).

The chapters' rows of ``python -m lengthgen bench`` (one per chapter's real training step) live in
:mod:`lengthgen.benchmarks`, above the engine, since they build the chapters' models; this module
holds what they share and the toy case. No test asserts a speed: the tests check the keys and
that the two sides end with the same losses.

The toy case (:func:`run_benchmark`): E = 40 members of a small single-layer attention classifier (embedding and hidden width 8,
float64, batch 256, one length per batch drawn uniformly from 1 … 51 by each member's own data
generator, task First, Adam with lr 1e-3 and gradient clipping at 1) are trained for a fixed
number of steps

(a) by :func:`lengthgen.engine.train.train_ensemble` with the hand-batched model :class:`AttentionClassifier`,
(b) by :func:`lengthgen.engine.train.train_ensemble` with the same model written as an ``nn.Module``
    and wrapped by :func:`lengthgen.engine.train.vmap_model` (``torch.func.vmap``),
(c) as a plain Python loop over the 40 models, each an ``nn.Module`` trained with
    ``torch.optim.Adam`` and ``clip_grad_norm_`` on its own generator's batches.

All three start from the same initial tensors and see the same batches, so their final losses
agree to rounding (``max_abs_loss_diff``). Throughput is reported in member-updates per second.
In the ensemble each member's batch is padded to the longest length drawn by any member in
that step (masked attention); the loop trains each member at its own length.

The model's attention has one learned query (as in the chapters' classifiers). Because tokens
are bits, every position's key score and pooled value are affine in the bit, so no [B, n, d]
tensor is needed. ``formulation="softmax"`` still forms the [B, n] scores and their softmax;
``"factored"`` (default) folds the softmax into one matrix product ``bits @ [w | w ⊙ P]``
(see :func:`_pool_factored`). (a), (b) and (c) call the same function :func:`_classify`, so
the per-member arithmetic is identical; only the batching differs.
"""

from __future__ import annotations

import math
import resource
import sys
import time

import torch
import torch.nn.functional as F

from lengthgen.config import ConfigError, check_choice, check_positive_int
from lengthgen.engine.train import (
    OptimConfig,
    seeded_generators,
    train_ensemble,
    vmap_model,
)

#: Defaults of the benchmark (the issue's protocol).
MEMBERS, WIDTH, BATCH, MAX_LEN, STEPS, LR = 40, 8, 256, 51, 40, 1e-3

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


FORMULATIONS = ("factored", "softmax")


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
    aP = (u0[..., None, None] * wP.sum(-2)[..., None, :] + du[..., None] * SP) / Z[
        ..., None
    ]
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
    pooled = (_pool_factored if factored else _pool_softmax)(
        bits, base, c, p["E0"], dE, Pn
    )
    v = pooled @ p["Wv"].mT
    h = torch.relu(v @ p["W1"].mT + p["b1"][..., None, :])
    return h @ p["W2"].mT + p["b2"][..., None, :]


class AttentionClassifier:
    """Hand-batched single-layer, single-query attention classifier over bit strings.

    Per member: token embeddings E0, E1 and position embeddings P_j (width d), a learned query
    vector q0 with maps Wq, Wk, Wv, then a width-h ReLU layer and 2 logits. With kq = Wkᵀ Wq q0
    the score of position j is s_j = log(n) · (E_{w_j} + P_j) · kq, the pooled value is
    Wv Σ_j α_j (E_{w_j} + P_j) with α = softmax(s) over the first n positions.
    ``x = (bits [E, B, n], mask [E, n], scale [E])``; returns logits [E, B, 2].
    ``formulation="softmax"`` materialises the [E, B, n] scores; ``"factored"`` (default)
    computes the same function with one batched matrix product (see :func:`_pool_factored`).
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
        self.factored = (
            check_choice("formulation", formulation, FORMULATIONS) == "factored"
        )

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


class AttentionClassifierModule(torch.nn.Module):
    """The same classifier for one member as an ``nn.Module`` (the loop's and vmap's model)."""

    def __init__(
        self,
        width: int = WIDTH,
        hidden: int = WIDTH,
        max_len: int = MAX_LEN,
        formulation: str = "factored",
    ):
        super().__init__()
        self.factored = (
            check_choice("formulation", formulation, FORMULATIONS) == "factored"
        )
        for name, (shape, std) in _SHAPES(width, hidden, max_len).items():
            setattr(self, name, torch.nn.Parameter(torch.randn(shape) * std))

    def forward(self, bits, mask, scale):
        p = {
            name: getattr(self, name) for name in _SHAPES(1, 1, 1)
        }  # works under functional_call too
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


def make_sampler(
    batch: int = BATCH, max_len: int = MAX_LEN, dtype=torch.float64, lengths=None
):
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
            raise ConfigError(
                f"shared lengths must be <= max_len = {max_len}, got {max(lengths)}"
            )

    def sample(step, gens):
        if lengths is None:
            ns = [int(torch.randint(1, max_len + 1, (1,), generator=g)) for g in gens]
        else:
            ns = [lengths[step]] * len(gens)
        words = torch.stack(
            [torch.randint(0, 2**62, (batch, 1), generator=g) for g in gens]
        )
        L = max(ns)
        n = torch.tensor(ns)
        words &= ((1 << n) - 1)[:, None, None]  # zero the padding bits
        bits = unpack_bits(words, L, dtype)  # [E, B, L]
        mask = torch.arange(L)[None, :] < n[:, None]
        return (bits, mask, torch.log(n.to(dtype))), bits[:, :, 0].long()

    return sample


def _train_loop(
    params,
    seeds,
    steps,
    batch,
    max_len,
    width,
    lr,
    lengths=None,
    formulation="factored",
):
    """Baseline: one nn.Module + torch.optim.Adam per member, one after the other."""
    sample = make_sampler(batch, max_len, lengths=lengths)
    losses, finals = [], []
    for e, seed in enumerate(seeds):
        mod = AttentionClassifierModule(width, width, max_len, formulation).to(
            torch.float64
        )
        with torch.no_grad():
            for name, prm in mod.named_parameters():
                prm.copy_(params[name][e])
        opt = torch.optim.Adam(mod.parameters(), lr=lr)
        gen = torch.Generator().manual_seed(int(seed))
        loss = None
        for step in range(steps):
            (bits, mask, scale), y = sample(step, [gen])
            loss = F.cross_entropy(mod(bits[0], mask[0], scale[0]), y[0])
            opt.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(mod.parameters(), 1.0)
            opt.step()
        losses.append(loss.item())
        finals.append({k: v.detach().clone() for k, v in mod.named_parameters()})
    return torch.tensor(losses, dtype=torch.float64), finals


def peak_rss_mb() -> float:
    """Peak resident set size of this process so far, in MiB (``resource.getrusage``)."""
    r = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return r / 2**20 if sys.platform == "darwin" else r / 1024


def _timed(fn, *args):
    """``(fn(*args), wall seconds, CPU seconds of this process)``."""
    t0, c0 = time.perf_counter(), time.process_time()
    out = fn(*args)
    return out, time.perf_counter() - t0, time.process_time() - c0


def run_benchmark(
    steps: int = STEPS,
    members: int = MEMBERS,
    *,
    batch: int = BATCH,
    max_len: int = MAX_LEN,
    width: int = WIDTH,
    threads: int = 1,
    seed: int = 0,
    vmap: bool = True,
    lengths: str = "per_member",
    formulation: str = "factored",
) -> dict:
    """Time ensemble vs vmap vs Python loop on the same members and data; return the figures.

    Keys: ``ensemble_steps_per_s``, ``vmap_steps_per_s`` and ``loop_steps_per_s`` (member-updates
    per second), ``ratio`` (ensemble / loop), ``vmap_ratio`` (vmap / loop), ``members``, ``steps``,
    ``max_abs_loss_diff`` (final training losses, ensemble vs loop, and vmap vs loop),
    ``max_abs_param_diff``, ``peak_rss_mb`` (whole process; ``peak_rss_at_start_mb`` is the peak
    before the benchmark ran, i.e. Python + torch), wall and CPU seconds, and the settings. ``ratio`` uses
    wall-clock time; ``cpu_time_ratio`` uses this process's CPU time, which is less disturbed by
    other processes on a shared machine. ``handbatched_vs_vmap`` > 1 means hand-batched is faster.
    ``lengths="per_member"`` (default) lets every member draw its own length per batch (the
    ensemble pads to the longest); ``"shared"`` draws one length per step for all members (and
    the loop uses the same lengths), which removes the padding.
    """
    steps = check_positive_int("steps", steps)
    check_choice("lengths", lengths, ("per_member", "shared"))
    check_choice("formulation", formulation, FORMULATIONS)
    members = check_positive_int("members", members)
    threads = check_positive_int("threads", threads)
    check_positive_int("seed", seed, minimum=0)
    rss_start = peak_rss_mb()
    old_threads = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        out = _compare(
            steps, members, batch, max_len, width, seed, vmap, lengths, formulation
        )
        return {
            **out,
            "peak_rss_at_start_mb": round(rss_start, 1),
            "peak_rss_mb": round(peak_rss_mb(), 1),
            "threads": threads,
            "dtype": "float64",
            "batch": batch,
            "max_len": max_len,
            "lengths": lengths,
            "formulation": formulation,
            "width": width,
            "torch": torch.__version__,
        }
    finally:
        torch.set_num_threads(old_threads)


def _compare(
    steps, members, batch, max_len, width, seed, vmap, lengths, formulation
) -> dict:
    """The measurement of :func:`run_benchmark` (arguments checked, threads set): train the
    same members as one ensemble, through ``torch.func.vmap`` and in a Python loop, and time
    each."""
    seeds = [seed + 1000 + e for e in range(members)]
    data_seeds = [seed + 5000 + e for e in range(members)]
    model = AttentionClassifier(width, width, max_len, formulation)
    params = model.init(seeds, torch.float64)
    optim = OptimConfig("adam", lr=LR, clip=1.0)
    shared = None  # per-member lengths; else one drawn length per step, for all members
    if lengths == "shared":
        gen = torch.Generator().manual_seed(seed + 9)
        shared = torch.randint(1, max_len + 1, (steps,), generator=gen).tolist()
    sample = make_sampler(batch, max_len, lengths=shared)

    def ensemble(mod, ps, n_steps, seeds_):
        return train_ensemble(
            mod,
            ps,
            sample=sample,
            optim=optim,
            steps=n_steps,
            data_seeds=seeds_,
            progress=False,
        )

    def loop(ps, seeds_, n_steps):
        return _train_loop(
            ps, seeds_, n_steps, batch, max_len, width, LR, shared, formulation
        )

    # warm-up (untimed): first calls import and initialise lazily (torch.optim imports
    # torch._dynamo on the first step, torch.func builds its batching rules), which would
    # otherwise be charged to whichever variant runs first
    sub = {k: v[:2] for k, v in params.items()}
    ensemble(model, sub, 1, data_seeds[:2])
    loop(sub, data_seeds[:1], 1)

    res, t_ens, c_ens = _timed(ensemble, model, params, steps, data_seeds)
    ens_loss = res.history["loss"][-1]
    out = {"members": members, "steps": steps}
    diffs = []
    if vmap:
        vm = vmap_model(
            lambda: AttentionClassifierModule(width, width, max_len, formulation)
        )
        vm.init([0], torch.float64)  # the template; parameters come from `params`
        ensemble(vm, sub, 1, data_seeds[:2])
        resv, t_vmap, c_vmap = _timed(ensemble, vm, params, steps, data_seeds)
        diffs.append((resv.history["loss"][-1] - ens_loss).abs().max().item())
    (loop_loss, loop_params), t_loop, c_loop = _timed(loop, params, data_seeds, steps)
    diffs.append((loop_loss - ens_loss).abs().max().item())
    pdiff = max(
        (res.final_params[k][e] - loop_params[e][k]).abs().max().item()
        for e in range(members)
        for k in loop_params[e]
    )

    out["ensemble_steps_per_s"] = round(members * steps / t_ens, 1)  # member-updates/s
    out["loop_steps_per_s"] = round(members * steps / t_loop, 1)
    out["ratio"] = round(t_loop / t_ens, 2)
    out["cpu_time_ratio"] = round(c_loop / c_ens, 2)
    if vmap:
        out["vmap_steps_per_s"] = round(members * steps / t_vmap, 1)
        out["vmap_ratio"] = round(t_loop / t_vmap, 2)
        out["handbatched_vs_vmap"] = round(t_vmap / t_ens, 2)
        out["handbatched_vs_vmap_cpu_time"] = round(c_vmap / c_ens, 2)
    out.update(
        {
            "max_abs_loss_diff": max(diffs),
            "max_abs_param_diff": pdiff,
            "ensemble_s": round(t_ens, 2),
            "loop_s": round(t_loop, 2),
            "ensemble_cpu_s": round(c_ens, 2),
            "loop_cpu_s": round(c_loop, 2),
        }
    )
    return out
