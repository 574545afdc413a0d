"""Chapter 4 (Huang & Li) at the paper's own protocol, on a GPU (section "At the paper's modulus").

The length-generalization study of B.1.3 at p = 53: width 1024, Muon at lr 1e-3 with
Newton–Schulz in float32, single-length batches of 1024 walking the training lengths in order
(the released loop's epoch), the B.1.3 training sets and held-out sets (CPU generators
``seed·1009 + m`` and ``seed·2009 + m``), and every variant (sine, sine + bias, ReLU) × budget ×
weight decay × seed as **one ensemble** whose whole loop stays on the device:

* :class:`DeviceLengthSampler` draws each member's next single-length batch on the device (per-shard
  reshuffles at the start of each member's epoch, from one device generator);
* :class:`VariantMLP` is ``V σ(W x + b)`` with σ = sin for the first members and ReLU for the rest,
  and ``b`` kept at 0 (gradient masked) for the members without a bias;
* the optimizer is the engine's :class:`lengthgen.engine.optim.EnsembleOptimizer` (Muon on W and V,
  AdamW without decay on b; decay on V for sine, on W and V for ReLU via ``decay_members``);
* every ``eval_every`` updates the accuracy on each member's training set and on ``n_eval``
  held-out inputs of every evaluation length is recorded (the first ``n_eval`` rows of the paper's
  10,000-input test sets, by the prefix property of the generators);
* a checkpoint (and ``progress.json``, the evaluations so far) is written to ``workdir`` every
  ``checkpoint_every_s`` seconds; at the run's
  ``deadline`` (the ``--budget-minutes`` of ``reproduce``) the loop evaluates, checkpoints and
  returns a *partial* result, which a re-run resumes (:mod:`lengthgen.engine.runs`).

``python -m lengthgen reproduce ch4 --scale paper --device cuda --budget-minutes 8`` runs it
(``scripts/gpu_ch4.sh`` prepares a bare GPU machine first). On a CPU it runs too, only slowly;
``tests/test_ch4_paper_scale.py`` runs it at a tiny size and checks resumption is exact.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Sequence

import torch

from lengthgen.chapters.ch4.data import check_length, check_modulus, test_set, train_set
from lengthgen.chapters.ch4.model import ModularMLP, check_activation, uargmax
from lengthgen.chapters.ch4.paper import BATCH_SIZE, NS_DTYPE, TRAIN_LENGTHS
from lengthgen.chapters.ch4.training import masked_loss, resolve_device
from lengthgen.config import ConfigError, check_finite, check_positive_int
from lengthgen.engine.optim import EnsembleOptimizer, OptimConfig
from lengthgen.engine.runs import config_hash, note_device
from lengthgen.store import ResultFileError, device_name, provenance, save_result


# --------------------------------------------------------------------------- members
def members_of(variants, budgets, wds, seeds) -> list[dict]:
    """The ensemble's members, sine ones first: one per (variant, budget n, weight decay, seed)."""
    out = []
    for v in variants:
        if (
            not isinstance(v, (list, tuple))
            or len(v) != 2
            or not isinstance(v[1], bool)
        ):
            raise ConfigError(f"each variant must be (activation, bias), got {v!r}")
        act = check_activation(v[0])
        for n in budgets:
            for wd in wds:
                for s in seeds:
                    out.append(
                        {
                            "activation": act,
                            "bias": v[1],
                            "n": check_positive_int("budget n", n),
                            "wd": check_finite("weight decay", wd, nonnegative=True),
                            "seed": check_positive_int("seed", s, minimum=0),
                        }
                    )
    if not out:
        raise ConfigError(
            "the ensemble is empty: give at least one variant, budget, weight decay and seed"
        )
    return sorted(
        out, key=lambda m: m["activation"] != "sine"
    )  # stable: sine members first


class VariantMLP:
    """``V σ(W x + b)`` batched over members; σ = sin for members ``[0, n_sine)``, ReLU after.

    Initial weights: member e's W, V (and b) are those of :class:`ModularMLP` with its seed, i.e.
    the same for every member of one seed; ``b`` is zero for members without a bias, and
    :meth:`mask_grads` keeps it there."""

    def __init__(self, p: int, width: int, members: Sequence[dict]):
        self.p, self.width = check_modulus(p), check_positive_int("width", width)
        self.members = list(members)
        self.n_sine = sum(m["activation"] == "sine" for m in self.members)
        if any(m["activation"] == "sine" for m in self.members[self.n_sine :]):
            raise ConfigError("members must list the sine ones first (see members_of)")
        self.has_bias = torch.tensor([m["bias"] for m in self.members])

    def init(self, device) -> dict[str, torch.Tensor]:
        params = ModularMLP(self.p, self.width, "sine", bias=True).init(
            [m["seed"] for m in self.members], device=device
        )
        params["b"] = params["b"] * self.has_bias.to(device).unsqueeze(1)
        return params

    def forward(self, params: dict, x: torch.Tensor) -> torch.Tensor:
        """Logits [E, B, p] of count vectors ``x`` [E, B, p]."""
        h = torch.baddbmm(params["b"].unsqueeze(1), x, params["W"].transpose(1, 2))
        k = self.n_sine
        a = (
            torch.sin(h)
            if k == h.shape[0]
            else torch.relu(h)
            if k == 0
            else torch.cat([torch.sin(h[:k]), torch.relu(h[k:])])
        )
        return torch.bmm(a, params["V"].transpose(1, 2))

    def mask_grads(self, grads: dict) -> None:
        """Zero the bias gradient of the members without a bias (the mask is kept on the device:
        a host-to-device copy per update would synchronise the GPU)."""
        g = grads["b"]
        if getattr(self, "_mask", None) is None or self._mask.device != g.device:
            self._mask = self.has_bias.to(g.device, g.dtype).unsqueeze(1)
        g.mul_(self._mask)

    def optimizer(self, params: dict, lr: float) -> EnsembleOptimizer:
        """B.1.3's Muon (float32 Newton–Schulz) on W and V, AdamW without decay on b; decoupled decay
        on V for every member and on W for the ReLU members only."""
        wds = [m["wd"] for m in self.members]
        relu = [m["activation"] == "relu" for m in self.members]
        cfg = OptimConfig(
            "muon",
            lr=lr,
            weight_decay=wds,
            decay=["W", "V"],
            muon_params=["W", "V"],
            adamw_params=["b"],
            ns_dtype=NS_DTYPE,
            decay_members={"W": relu},
        )
        return EnsembleOptimizer(cfg, params, ["W", "V", "b"])


# --------------------------------------------------------------------------- data on the device
class DeviceLengthSampler:
    """Single-length mini-batches drawn on the device, as in the authors' released loop.

    Member e's training set (:func:`lengthgen.chapters.ch4.data.train_set`, shards of the training
    lengths in order) lives on the device, padded to the largest budget. Its epoch walks the
    shards in order, each reshuffled at the epoch's start and cut into ``ceil(n_m / batch)``
    batches, so an epoch is ``Σ_m ceil(n_m / batch)`` updates (:attr:`spe`). Members with
    different budgets restart their epochs at different steps; the reshuffle of each is drawn
    from one device generator (``seed``), whose state is part of :meth:`state`.
    """

    def __init__(self, sets, p: int, batch: int, device, seed: int):
        self.dev, self.B, self.p = device, check_positive_int("batch size", batch), p
        E = len(sets)
        self.n_max = max(len(d) for d in sets)
        self.X = torch.zeros(E, self.n_max, p, dtype=torch.float32)
        self.Y = torch.full((E, self.n_max), -1, dtype=torch.long)
        shard = torch.full((E, self.n_max), float(len(TRAIN_LENGTHS) + 1))
        plans = []
        for e, d in enumerate(sets):
            self.X[e, : len(d)], self.Y[e, : len(d)] = d.x, d.y
            lengths = list(dict.fromkeys(d.m.tolist()))
            plan, off = [], 0
            for j, L in enumerate(lengths):
                n_j = int((d.m == L).sum())
                shard[e, off : off + n_j] = float(j)
                plan += [
                    (off + c * self.B, min(self.B, n_j - c * self.B))
                    for c in range(-(-n_j // self.B))
                ]
                off += n_j
            plans.append(plan)
        self.spe = [len(pl) for pl in plans]
        K = max(self.spe)
        start = torch.zeros(E, K, dtype=torch.long)
        length = torch.zeros(E, K, dtype=torch.long)
        for e, pl in enumerate(plans):
            start[e, : len(pl)] = torch.tensor([a for a, _ in pl])
            length[e, : len(pl)] = torch.tensor([b for _, b in pl])
        self.X, self.Y, self.shard = (
            self.X.to(device),
            self.Y.to(device),
            shard.to(device),
        )
        self.start, self.length = start.to(device), length.to(device)
        self.ar = torch.arange(self.B, device=device)
        self.gen = torch.Generator(device=device).manual_seed(int(seed))
        self.perm = torch.zeros(E, self.n_max, dtype=torch.long, device=device)
        self.k = torch.zeros(
            E, 1, dtype=torch.long, device=device
        )  # batch index in the epoch
        self.spe_t = torch.tensor(self.spe, device=device).unsqueeze(1)

    def __call__(self, step: int):
        """The batch of update ``step`` (0-based): ``x`` [E, B, p], ``y`` [E, B] (``-1`` = padding)."""
        restart = [
            step % s == 0 for s in self.spe
        ]  # known on the host: no synchronisation
        if any(restart):
            keys = self.shard + torch.rand(
                self.shard.shape, generator=self.gen, device=self.dev
            )
            fresh = keys.argsort(dim=1)
            self.perm = (
                fresh if all(restart) else torch.where(self.k == 0, fresh, self.perm)
            )
        pos = (self.start.gather(1, self.k) + self.ar).clamp(max=self.n_max - 1)
        valid = self.ar < self.length.gather(1, self.k)
        idx = self.perm.gather(1, pos)
        x = self.X.gather(1, idx.unsqueeze(-1).expand(-1, -1, self.p))
        y = torch.where(valid, self.Y.gather(1, idx), torch.full_like(idx, -1))
        self.k = (self.k + 1).remainder(self.spe_t)
        return x, y

    def state(self) -> dict:
        return {"perm": self.perm, "k": self.k, "gen": self.gen.get_state()}

    def load(self, st: dict) -> None:
        self.perm, self.k = st["perm"].to(self.dev), st["k"].to(self.dev)
        self.gen.set_state(st["gen"].cpu())


# --------------------------------------------------------------------------- evaluation
def _evaluate(
    model: VariantMLP,
    params,
    sampler: DeviceLengthSampler,
    banks: dict,
    seed_index,
    chunk: int = 4096,
):
    """Per-member accuracy on its own training set and on each held-out bank (lists, CPU)."""
    with torch.no_grad():
        accs, n_ok = [], []
        for lo in range(0, sampler.n_max, chunk):
            out = model.forward(params, sampler.X[:, lo : lo + chunk])
            y = sampler.Y[:, lo : lo + chunk]
            n_ok.append(((uargmax(out) == y) & (y >= 0)).sum(1))
        train = (
            (torch.stack(n_ok).sum(0).double() / (sampler.Y >= 0).sum(1)).cpu().tolist()
        )
        for L, (x, y) in banks.items():
            out = model.forward(params, x.index_select(0, seed_index))
            yy = y.index_select(0, seed_index)
            accs.append((str(L), (uargmax(out) == yy).double().mean(1).cpu().tolist()))
    return train, dict(accs)


def _banks(seeds: list[int], p: int, lengths, n: int, device) -> dict:
    """Held-out inputs per evaluation length: ``x`` [S, n, p], ``y`` [S, n] for the distinct seeds."""
    out = {}
    for L in lengths:
        sets = [test_set(s, p, check_length(L), n) for s in seeds]
        out[L] = (
            torch.stack([d.x for d in sets]).to(device),
            torch.stack([d.y for d in sets]).to(device),
        )
    return out


# --------------------------------------------------------------------------- checkpoints
def _save_checkpoint(path: Path, obj: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    torch.save(obj, tmp)
    os.replace(tmp, path)


def _load_checkpoint(path: Path, key: str, device):
    if not path.is_file():
        return None
    try:
        obj = torch.load(path, map_location=device, weights_only=False)
    except Exception as err:  # noqa: BLE001 - any unreadable checkpoint is named
        raise ResultFileError(
            f"corrupt checkpoint {path}: {err}; move it away to start afresh"
        ) from None
    if not isinstance(obj, dict) or obj.get("key") != key:
        print(
            f"ignoring checkpoint {path}: it belongs to another configuration",
            flush=True,
        )
        return None
    return obj


# --------------------------------------------------------------------------- the run
def train_paper_scale(
    *,
    p: int,
    width: int,
    budgets,
    wds,
    seeds,
    variants,
    lr: float,
    steps: int,
    eval_every: int,
    n_eval: int,
    eval_lengths,
    train_lengths=TRAIN_LENGTHS,
    batch_size: int = BATCH_SIZE,
    device="cpu",
    deadline: float | None = None,
    workdir: str | None = None,
    checkpoint_every_s: float = 120.0,
    stop_margin_s: float = 30.0,
    _stop_at: int | None = None,
) -> dict:
    """Train the B.1.3 study at the paper's settings as one on-device ensemble (module docstring).

    Returns the members, updates per epoch, the evaluation history (``eval_every`` updates apart),
    the final accuracies, the throughput and whether the run is ``partial`` (stopped at
    ``deadline`` − ``stop_margin_s`` before ``steps`` updates; ``progress.done`` says how many).
    ``_stop_at`` (tests only) stops after that many updates as a deadline would.
    """
    t_call = time.perf_counter()
    p, width = check_modulus(p), check_positive_int("width", width)
    steps, eval_every = (
        check_positive_int("steps", steps),
        check_positive_int("eval_every", eval_every),
    )
    n_eval, lr = (
        check_positive_int("n_eval", n_eval),
        check_finite("lr", lr, nonnegative=True),
    )
    train_lengths = [check_length(m) for m in train_lengths]
    eval_lengths = [check_length(m) for m in eval_lengths]
    members = members_of(variants, budgets, wds, seeds)
    dev = resolve_device(device)
    note_device(dev)
    key = config_hash(
        train_paper_scale,
        {
            "p": p,
            "width": width,
            "budgets": list(budgets),
            "wds": list(wds),
            "seeds": list(seeds),
            "variants": [list(v) for v in variants],
            "lr": lr,
            "steps": steps,
            "eval_every": eval_every,
            "n_eval": n_eval,
            "eval_lengths": eval_lengths,
            "train_lengths": train_lengths,
            "batch_size": batch_size,
        },
    )
    ckpt_path = Path(workdir) / "checkpoint.pt" if workdir else None
    prev_precision = torch.get_float32_matmul_precision()
    torch.set_float32_matmul_precision("highest")  # B.1: float32 throughout (no TF32)
    try:
        model = VariantMLP(p, width, members)
        cache: dict = {}
        sets = [
            cache.setdefault(
                (m["seed"], m["n"]), train_set(m["seed"], p, train_lengths, m["n"])
            )
            for m in members
        ]
        sampler = DeviceLengthSampler(sets, p, batch_size, dev, seed=members[0]["seed"])
        uniq = sorted({m["seed"] for m in members})
        seed_index = torch.tensor([uniq.index(m["seed"]) for m in members], device=dev)
        banks = _banks(uniq, p, eval_lengths, n_eval, dev)
        params = model.init(dev)
        opt = model.optimizer(params, lr)
        E = len(members)
        step, history, wall_before, resumed = 0, [], 0.0, []
        loss_sum = torch.zeros(E, dtype=torch.float64, device=dev)
        loss_n = 0
        ck = _load_checkpoint(ckpt_path, key, dev) if ckpt_path else None
        if ck is not None:
            params = {k: v.to(dev) for k, v in ck["params"].items()}
            opt = model.optimizer(params, lr)
            opt.load_state_dict(ck["opt"])
            sampler.load(ck["sampler"])
            step, history, wall_before = ck["step"], ck["history"], ck["wall_s"]
            loss_sum, loss_n, resumed = (
                ck["loss_sum"].to(dev),
                ck["loss_n"],
                ck["resumed"] + [ck["step"]],
            )
            print(f"resumed from {ckpt_path} at update {step}", flush=True)
        setup_s = time.perf_counter() - t_call
        t0, t_ckpt, step0 = time.perf_counter(), time.perf_counter(), step
        names = ("W", "V", "b")

        def checkpoint():
            if ckpt_path is not None:
                _save_checkpoint(
                    ckpt_path,
                    {
                        "key": key,
                        "step": step,
                        "params": params,
                        "opt": opt.state_dict(),
                        "sampler": sampler.state(),
                        "history": history,
                        "wall_s": wall_before + time.perf_counter() - t0,
                        "loss_sum": loss_sum,
                        "loss_n": loss_n,
                        "resumed": resumed,
                    },
                )
                # the evaluations so far as readable JSON too: a run killed outright keeps them
                save_result(
                    ckpt_path.with_name("progress.json"),
                    {
                        "step": step,
                        "target": steps,
                        "members": members,
                        "history": history,
                    },
                    provenance(
                        scale="paper",
                        device=str(dev),
                        seeds=sorted({m["seed"] for m in members}),
                        extra={
                            "note": "progress of an unfinished paper-scale run (not a stored "
                            "cell)"
                        },
                    ),
                )

        def evaluate():
            nonlocal loss_sum, loss_n
            train, acc = _evaluate(model, params, sampler, banks, seed_index)
            mean_loss = (loss_sum / max(loss_n, 1)).cpu().tolist()
            loss_sum, loss_n = torch.zeros_like(loss_sum), 0
            history.append(
                {
                    "step": step,
                    "wall_s": round(wall_before + time.perf_counter() - t0, 2),
                    "train_loss": mean_loss,
                    "train_acc": train,
                    "acc": acc,
                }
            )
            far, by = str(max(eval_lengths)), {}  # one progress line per evaluation
            for i, m in enumerate(members):
                by.setdefault(m["activation"] + ("+b" if m["bias"] else ""), []).append(
                    acc[far][i]
                )
            rate = (step - step0) / max(time.perf_counter() - t0, 1e-9)
            print(
                f"update {step:>8}/{steps}  {rate:7.0f} upd/s  best acc at m={far}: "
                + ", ".join(f"{t} {max(v):.3f}" for t, v in by.items()),
                flush=True,
            )

        partial = False
        while step < steps:
            x, y = sampler(step)
            P = {n: params[n].detach().requires_grad_(True) for n in names}
            lvec = masked_loss(model.forward(P, x), y)
            grads = dict(
                zip(names, torch.autograd.grad(lvec.sum(), [P[n] for n in names]))
            )
            model.mask_grads(grads)
            opt.step(params, grads)
            loss_sum += lvec.detach().double()
            loss_n += 1
            step += 1
            if step % eval_every == 0 or step == steps:
                evaluate()
            stop = (_stop_at is not None and step >= _stop_at) or (
                deadline is not None and time.time() > deadline - stop_margin_s
            )
            if stop and step < steps:
                if not history or history[-1]["step"] != step:
                    evaluate()
                partial = True
                checkpoint()
                break
            if step % 200 == 0 and time.perf_counter() - t_ckpt > checkpoint_every_s:
                checkpoint()
                t_ckpt = time.perf_counter()
        if dev.type == "cuda":
            torch.cuda.synchronize()
        train_s = time.perf_counter() - t0
        if not partial:
            checkpoint()
    finally:
        torch.set_float32_matmul_precision(prev_precision)
    last = history[-1]
    spe = {
        str(n): s
        for n, s in sorted(
            {m["n"]: sampler.spe[i] for i, m in enumerate(members)}.items()
        )
    }
    return {
        "partial": partial,
        "progress": {"done": step, "target": steps, "unit": "updates"},
        "members": [
            {**m, "epochs": round(step / sampler.spe[i], 2)}
            for i, m in enumerate(members)
        ],
        "updates_per_epoch": spe,
        "eval_lengths": eval_lengths,
        "train_lengths": train_lengths,
        "history": history,
        "final": {
            "step": last["step"],
            "train_acc": last["train_acc"],
            "acc": last["acc"],
        },
        "updates_per_s_this_session": round((step - step0) / max(train_s, 1e-9), 2),
        "train_wall_s": round(wall_before + train_s, 2),
        "setup_s": round(setup_s, 2),
        "resumed_at": resumed,
        "device_name": device_name(str(dev)),
        "float32_matmul_precision": "highest",
    }


def paper_scale_flops(
    p: int, width: int, members: int, batch: int = BATCH_SIZE
) -> float:
    """Floating-point operations of the forward and backward passes of one training update of the
    ensemble (forward 2 matmuls, backward 3, each ``2·E·B·d·p``); Muon's Newton–Schulz iteration
    is :func:`newton_schulz_flops`, elementwise work is not counted."""
    p, width = check_modulus(p), check_positive_int("width", width)
    members = check_positive_int("members", members)
    batch = check_positive_int("batch", batch)
    return 5 * 2.0 * members * batch * width * p


def newton_schulz_flops(p: int, width: int, members: int, steps: int = 5) -> float:
    """Floating-point operations of Muon's Newton–Schulz iteration in one update of the ensemble:
    ``steps`` quintic steps on each of the two d×p weight matrices, each step on the short side
    ``a = min(d, p)``, ``b = max(d, p)``: the Gram matrix XXᵀ (2a²b), its square (2a³) and the
    product with X (2a²b) -- ``2·E·steps·(4a²b + 2a³)``, independent of the batch size (matrix
    additions and the normalisation not counted)."""
    p, width = check_modulus(p), check_positive_int("width", width)
    members = check_positive_int("members", members)
    steps = check_positive_int("steps", steps)
    a, b = min(p, width), max(p, width)
    return 2.0 * members * steps * (4 * a * a * b + 2 * a**3)
