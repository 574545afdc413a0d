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
  returns a *partial* result, which a re-run resumes (:mod:`lengthgen.engine.runs`);
* one update is :class:`PaperStep` -- batch, forward, backward, bias mask, optimizer, loss sum, on
  fixed device buffers -- which the eager loop calls and which, with ``graph=True`` on CUDA,
  :class:`CapturedStep` captures once as a CUDA graph and replays (the epoch reshuffle, the
  evaluations and the checkpoints stay outside it; off CUDA the eager step runs and one line says
  why). Its optimizer is then the :class:`CapturableOptimizer` (AdamW's bias correction from a
  device counter), equal to the eager one to float32 tolerance; ``check-graph`` below compares them
  on the device;
* ``checkpoint_parts=True`` writes the checkpoint as parts of at most 15 MB with a manifest of
  sizes and SHA-256 sums (:mod:`lengthgen.engine.parts`), which a device session can bring back
  and a later one resumes from bit for bit (``results/ch4/checkpoints/<cell>/``, see
  ``scripts/gpu_ch4.sh``).

``python -m lengthgen.chapters.ch4.paper_scale check-graph | rates | store-checkpoint`` (:func:`main`)
runs the device check of the captured step, measures updates/s of both step paths, and keeps a
brought-back checkpoint under ``results/ch4/checkpoints/`` (only the latest).

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
from lengthgen.engine.parts import load_parts, save_parts
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

    def optimizer(
        self, params: dict, lr: float, capturable: bool = False
    ) -> EnsembleOptimizer:
        """B.1.3's Muon (float32 Newton–Schulz) on W and V, AdamW without decay on b; decoupled decay
        on V for every member and on W for the ReLU members only. ``capturable=True`` gives the
        :class:`CapturableOptimizer` (AdamW's bias corrections computed on the device)."""
        if not isinstance(capturable, bool):
            raise ConfigError(f"capturable must be True or False, got {capturable!r}")
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
        cls = CapturableOptimizer if capturable else EnsembleOptimizer
        return cls(cfg, params, ["W", "V", "b"])


class CapturableOptimizer(EnsembleOptimizer):
    """:class:`EnsembleOptimizer` whose step contains no value that changes from update to update on
    the host, so that a CUDA graph can capture it (as ``capturable=True`` does for
    :class:`torch.optim.AdamW`).

    The only such value of the paper-scale step is AdamW's bias correction ``1 − βᵗ`` (on ``b``),
    a Python float in the parent class. Here the update count is also kept on the device, as a
    float64 0-dim tensor incremented in place by every step, and the corrections
    ``1 − β₁ᵗ``, ``√(1 − β₂ᵗ)`` and the step size ``lr / (1 − β₁ᵗ)`` are computed from it on the
    device; the arithmetic is otherwise AdamW's (the same as the parent's up to the rounding of
    the last operations: equal to float32 tolerance, not bit for bit). Muon (W, V) has no
    update-dependent scalar and runs the parent's code unchanged.

    The host count :attr:`t` is still incremented by :meth:`step`; a CUDA-graph replay does not
    run Python, so whoever replays adds one to :attr:`t` per replay (:meth:`PaperStep.after_replay`);
    :meth:`check_counter` compares the two.
    """

    _t_dev: torch.Tensor | None = None

    def step(self, params, grads) -> None:
        dev = params[self.names[0]].device
        if self._t_dev is None or self._t_dev.device != dev:
            self._t_dev = torch.full((), float(self.t), dtype=torch.float64, device=dev)
        with torch.no_grad():
            self._t_dev.add_(1)
        super().step(params, grads)

    def load_state_dict(self, sd) -> None:
        super().load_state_dict(sd)
        self._t_dev = None  # rebuilt from the restored host count at the next step

    def check_counter(self) -> None:
        """Raise RuntimeError when the device update count differs from the host's :attr:`t`
        (synchronises; called at checkpoints, not per update)."""
        if self._t_dev is not None and int(self._t_dev.item()) != self.t:
            raise RuntimeError(
                f"optimizer update count on the device is {int(self._t_dev.item())}, "
                f"on the host {self.t}: a replay was not counted"
            )

    def _adam_foreach(self, items, lr: float, wd: float, decoupled: bool) -> None:
        """AdamW/Adam with the bias corrections from the device count (class docstring)."""
        b1, b2 = self.config.betas
        t = self._t_dev
        bc1 = 1 - torch.pow(b1, t)
        bc2_sqrt = torch.sqrt(1 - torch.pow(b2, t))
        step_size = lr / bc1
        for p, g, st in items:
            if "exp_avg" not in st:
                st["exp_avg"] = torch.zeros_like(p)
                st["exp_avg_sq"] = torch.zeros_like(p)
            m, v = st["exp_avg"], st["exp_avg_sq"]
            if wd != 0:
                if decoupled:
                    p.mul_(1 - lr * wd)
                else:
                    g = g.add(p, alpha=wd)
            m.lerp_(g, 1 - b1)
            v.mul_(b2).addcmul_(g, g, value=1 - b2)
            denom = (v.sqrt() / bc2_sqrt.to(v.dtype)).add_(self.config.eps)
            p.sub_(step_size.to(p.dtype) * m / denom)


# --------------------------------------------------------------------------- the update step
class PaperStep:
    """One training update of the whole ensemble -- the one piece of code that both the eager loop
    calls and a CUDA graph captures (:class:`CapturedStep`).

    Calling it draws the next batch from the sampler's current permutations
    (:meth:`DeviceLengthSampler.batch`), computes the per-member masked cross-entropy and its
    gradients, zeroes the bias gradient of the bias-free members, applies the optimizer (Muon on W
    and V, AdamW on b, the per-member decay mask) and adds the per-member loss to ``loss_sum``.
    Every tensor it reads or writes across updates is one of :meth:`buffers` and is updated in
    place (never re-bound), which is what replaying a captured graph needs; the epoch reshuffle
    (:meth:`DeviceLengthSampler.reshuffle`) is done by the caller before the call.
    """

    NAMES = ("W", "V", "b")

    def __init__(self, model, sampler, opt, params: dict, loss_sum: torch.Tensor):
        if set(params) != set(self.NAMES):
            raise ConfigError(
                f"PaperStep needs parameters {self.NAMES}, got {sorted(params)}"
            )
        self.model, self.sampler, self.opt = model, sampler, opt
        self.params, self.loss_sum = params, loss_sum

    def __call__(self) -> None:
        names = self.NAMES
        x, y = self.sampler.batch()
        P = {n: self.params[n].detach().requires_grad_(True) for n in names}
        lvec = masked_loss(self.model.forward(P, x), y)
        grads = dict(zip(names, torch.autograd.grad(lvec.sum(), [P[n] for n in names])))
        self.model.mask_grads(grads)
        self.opt.step(self.params, grads)
        self.loss_sum += lvec.detach().double()

    def after_replay(self) -> None:
        """The host-side effect of one update that a graph replay skips: the optimizer's count."""
        self.opt.t += 1

    def buffers(self) -> dict[str, torch.Tensor]:
        """Every tensor the step carries from one update to the next, by name."""
        out = {f"params.{n}": t for n, t in self.params.items()}
        for n, st in self.opt.state.items():
            out.update({f"opt.{n}.{k}": v for k, v in st.items()})
        if getattr(self.opt, "_t_dev", None) is not None:
            out["opt.t"] = self.opt._t_dev
        out["sampler.perm"], out["sampler.k"] = self.sampler.perm, self.sampler.k
        out["loss_sum"] = self.loss_sum
        return out


def graph_unavailable_reason(device) -> str | None:
    """Why the captured step cannot run on ``device`` (one line), or ``None`` when it can: CUDA
    graphs need a CUDA device and a torch built with CUDA that sees one."""
    dev = torch.device(device) if not isinstance(device, torch.device) else device
    if dev.type != "cuda":
        return f"CUDA graphs need a CUDA device, this run is on {dev.type}"
    if not torch.cuda.is_available():
        return "CUDA graphs need a CUDA device, and torch sees none"
    return None


class CapturedStep:
    """A :class:`PaperStep` run through one CUDA-graph capture (``torch.cuda.CUDAGraph``).

    The first ``warmup`` calls run the step eagerly on a side stream (real updates: cuBLAS and the
    optimizer's lazily created state are set up by them); the next call captures the step into a
    graph and replays it once (capture itself executes nothing), and every later call replays it
    and calls :meth:`PaperStep.after_replay`. The captured step reads and writes only the step's
    :meth:`PaperStep.buffers`, so a replay is exactly the update the eager call would have made with
    the same kernels. Raises ConfigError (one line, :func:`graph_unavailable_reason`) off CUDA.
    """

    def __init__(self, step: PaperStep, warmup: int = 3):
        if not isinstance(step, PaperStep):
            raise ConfigError(
                f"CapturedStep needs a PaperStep, got {type(step).__name__}"
            )
        if not isinstance(step.opt, CapturableOptimizer):
            raise ConfigError(
                "CapturedStep needs the PaperStep built with a CapturableOptimizer "
                "(VariantMLP.optimizer(..., capturable=True))"
            )
        why = graph_unavailable_reason(step.params["W"].device)
        if why is not None:
            raise ConfigError(f"cannot capture the step: {why}")
        self.step = step
        self.warmup = check_positive_int("warmup", warmup)
        self.calls, self.graph, self.capture_s = 0, None, None

    def __call__(self) -> None:
        if self.graph is not None:
            self.graph.replay()
            self.step.after_replay()
        elif self.calls < self.warmup:
            side = torch.cuda.Stream()
            side.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(side):
                self.step()
            torch.cuda.current_stream().wait_stream(side)
        else:
            t0 = time.perf_counter()
            torch.cuda.synchronize()
            g = torch.cuda.CUDAGraph()
            with torch.cuda.graph(g):
                self.step()  # recorded, not executed: its host effects count for this update
            g.replay()
            torch.cuda.synchronize()
            self.graph, self.capture_s = g, time.perf_counter() - t0
        self.calls += 1


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
        """The batch of update ``step`` (0-based): ``x`` [E, B, p], ``y`` [E, B] (``-1`` = padding);
        :meth:`reshuffle` for ``step``, then :meth:`batch`."""
        self.reshuffle(step)
        return self.batch()

    def reshuffle(self, step: int) -> None:
        """At update ``step``, draw a fresh permutation for the members whose epoch starts there
        (``step`` a multiple of their updates per epoch; known on the host, no synchronisation).
        The only random draw of the sampler, kept out of the captured step (:class:`CapturedStep`);
        :attr:`perm` is updated in place."""
        restart = [step % s == 0 for s in self.spe]
        if any(restart):
            keys = self.shard + torch.rand(
                self.shard.shape, generator=self.gen, device=self.dev
            )
            fresh = keys.argsort(dim=1)
            self.perm.copy_(
                fresh if all(restart) else torch.where(self.k == 0, fresh, self.perm)
            )

    def batch(self):
        """The next batch of every member from its current permutation and batch index ``k``
        (``x`` [E, B, p], ``y`` [E, B], ``-1`` = padding), advancing ``k`` in place: device work
        only, on fixed buffers, so that a CUDA graph can capture it."""
        pos = (self.start.gather(1, self.k) + self.ar).clamp(max=self.n_max - 1)
        valid = self.ar < self.length.gather(1, self.k)
        idx = self.perm.gather(1, pos)
        x = self.X.gather(1, idx.unsqueeze(-1).expand(-1, -1, self.p))
        y = torch.where(valid, self.Y.gather(1, idx), torch.full_like(idx, -1))
        self.k.copy_((self.k + 1).remainder(self.spe_t))
        return x, y

    def state(self) -> dict:
        """The sampler's state for a checkpoint: permutations, batch indices, generator state."""
        return {"perm": self.perm, "k": self.k, "gen": self.gen.get_state()}

    def load(self, st: dict) -> None:
        """Restore :meth:`state` (copied into the existing buffers: shapes must match)."""
        for name in ("perm", "k"):
            if tuple(st[name].shape) != tuple(getattr(self, name).shape):
                raise ConfigError(
                    f"sampler checkpoint {name} has shape {tuple(st[name].shape)}, "
                    f"this sampler {tuple(getattr(self, name).shape)}"
                )
        gen = st["gen"].cpu()
        if gen.numel() != self.gen.get_state().numel():
            raise ConfigError(
                f"the checkpoint's sampler RNG state ({gen.numel()} bytes) is not one of a "
                f"{self.dev} generator ({self.gen.get_state().numel()} bytes): resume it on the "
                "device type it was made on"
            )
        self.perm.copy_(st["perm"])
        self.k.copy_(st["k"])
        self.gen.set_state(gen)


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
    """The checkpoint ``path`` (a ``checkpoint.pt`` file, or a folder of parts with a manifest,
    :mod:`lengthgen.engine.parts`) if it belongs to ``key``; ``None`` when absent or of another
    configuration; an unreadable one raises :class:`ResultFileError` naming it."""
    if path.is_dir() or path.suffix != ".pt":
        obj = load_parts(path, map_location=device) if path.is_dir() else None
        return None if obj is None else _same_configuration(obj, key, path)
    if not path.is_file():
        return None
    try:
        obj = torch.load(path, map_location=device, weights_only=False)
    except Exception as err:  # noqa: BLE001 - any unreadable checkpoint is named
        raise ResultFileError(
            f"corrupt checkpoint {path}: {err}; move it away to start afresh"
        ) from None
    return _same_configuration(obj, key, path)


def _same_configuration(obj, key, path):
    """``obj`` if it is a checkpoint of configuration ``key``, else ``None`` (said once)."""
    if not isinstance(obj, dict) or obj.get("key") != key:
        print(
            f"ignoring checkpoint {path}: it belongs to another configuration",
            flush=True,
        )
        return None
    return obj


def _flag(name: str, value, env: str) -> bool:
    """``value`` as a bool; ``None`` reads the environment variable ``env`` (unset, ``0`` or ``1``)."""
    if value is None:
        raw = os.environ.get(env, "0").strip()
        if raw not in ("", "0", "1"):
            raise ConfigError(f"{env} must be 0 or 1, got {raw!r}")
        return raw == "1"
    if not isinstance(value, bool):
        raise ConfigError(f"{name} must be True, False or None, got {value!r}")
    return value


#: the environment variables read when ``graph`` / ``checkpoint_parts`` are left at ``None``
GRAPH_ENV, PARTS_ENV = "LENGTHGEN_CH4_GRAPH", "LENGTHGEN_CH4_PARTS"
#: the folder (in ``workdir``) of the checkpoint in parts
PARTS_DIR = "checkpoint"


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
    graph: bool | None = None,
    checkpoint_parts: bool | None = None,
    _stop_at: int | None = None,
    _capturable_eager: bool = False,
) -> dict:
    """Train the B.1.3 study at the paper's settings as one on-device ensemble (module docstring).

    Returns the members, updates per epoch, the evaluation history (``eval_every`` updates apart),
    the final accuracies, the throughput and whether the run is ``partial`` (stopped at
    ``deadline`` − ``stop_margin_s`` before ``steps`` updates; ``progress.done`` says how many).
    ``_stop_at`` (tests only) stops after that many updates as a deadline would.

    ``graph=True`` (``None``: ``$LENGTHGEN_CH4_GRAPH`` = 1) runs the updates through one CUDA-graph
    capture of :class:`PaperStep` (:class:`CapturedStep`, with the :class:`CapturableOptimizer`);
    off CUDA it prints one line saying why it is skipped and runs the eager step, whose results are
    those of ``graph=False``. ``checkpoint_parts=True`` (``None``: ``$LENGTHGEN_CH4_PARTS`` = 1)
    writes the checkpoint as ``workdir/checkpoint/`` -- parts of at most 15 MB with a manifest
    (:mod:`lengthgen.engine.parts`) -- instead of ``workdir/checkpoint.pt``; a run resumes from
    either (the one further along), so copying that folder to another machine's workdir resumes the
    run there. ``_capturable_eager`` (device checks only) runs the capturable step without a graph.
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
    graph = _flag("graph", graph, GRAPH_ENV)
    checkpoint_parts = _flag("checkpoint_parts", checkpoint_parts, PARTS_ENV)
    if not isinstance(_capturable_eager, bool):
        raise ConfigError(
            f"_capturable_eager must be True or False, got {_capturable_eager!r}"
        )
    dev = resolve_device(device)
    note_device(dev)
    graph_skipped = graph_unavailable_reason(dev) if graph else None
    if graph_skipped:
        print(
            f"captured step skipped: {graph_skipped}; running the eager step",
            flush=True,
        )
    use_graph = graph and graph_skipped is None
    capturable = use_graph or _capturable_eager
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
    parts_path = Path(workdir) / PARTS_DIR if workdir else None
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
        opt = model.optimizer(params, lr, capturable=capturable)
        E = len(members)
        step, history, wall_before, resumed = 0, [], 0.0, []
        loss_sum = torch.zeros(E, dtype=torch.float64, device=dev)
        loss_n = 0
        found = [
            c
            for c in (
                _load_checkpoint(ckpt_path, key, dev) if ckpt_path else None,
                _load_checkpoint(parts_path, key, dev) if parts_path else None,
            )
            if c is not None
        ]
        ck = max(found, key=lambda c: c["step"]) if found else None
        # a checkpoint without "paths" was made by the eager loop from update 0
        paths = list(ck.get("paths", [[0, "eager"]])) if ck is not None else []
        if ck is not None:
            params = {k: v.to(dev) for k, v in ck["params"].items()}
            opt = model.optimizer(params, lr, capturable=capturable)
            opt.load_state_dict(ck["opt"])
            sampler.load(ck["sampler"])
            step, history, wall_before = ck["step"], ck["history"], ck["wall_s"]
            loss_sum, loss_n, resumed = (
                ck["loss_sum"].to(dev),
                ck["loss_n"],
                ck["resumed"] + [ck["step"]],
            )
            where = parts_path if ck.get("parts") else ckpt_path
            print(f"resumed from {where} at update {step}", flush=True)
        stepper = PaperStep(model, sampler, opt, params, loss_sum)
        run_step = CapturedStep(stepper) if use_graph else stepper
        path_now = (
            "graph" if use_graph else "eager-capturable" if capturable else "eager"
        )
        if not paths or paths[-1][1] != path_now:
            paths.append([step, path_now])
        setup_s = time.perf_counter() - t_call
        t0, t_ckpt, step0 = time.perf_counter(), time.perf_counter(), step

        def checkpoint():
            if ckpt_path is not None:
                if capturable:
                    opt.check_counter()
                obj = {
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
                }
                if paths != [[0, "eager"]]:
                    obj["paths"] = paths
                if checkpoint_parts:
                    save_parts(
                        parts_path,
                        {**obj, "parts": True},
                        meta={"key": key, "step": step, "target": steps, "p": p},
                    )
                else:
                    _save_checkpoint(ckpt_path, obj)
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
            loss_sum.zero_()  # in place: the step's buffer
            loss_n = 0
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
            sampler.reshuffle(step)
            run_step()
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
        **(
            {
                "captured_step": {
                    "requested": graph,
                    "used": use_graph,
                    "skipped_because": graph_skipped,
                    "capture_s": None
                    if not use_graph or run_step.capture_s is None
                    else round(run_step.capture_s, 3),
                    "paths": paths,
                }
            }
            if graph or capturable or paths != [[0, "eager"]]
            else {}
        ),
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


# --------------------------------------------------------------------------- device checks
#: the tiny ensemble of the device check (:func:`compare_step_paths`): every variant, two budgets
#: whose epochs restart at different updates, two weight decays, two seeds
TINY_CHECK = {
    "p": 7,
    "width": 32,
    "budgets": (60, 200),
    "wds": (0.1, 0.03),
    "seeds": (1337, 1338),
    "variants": (("sine", False), ("sine", True), ("relu", False)),
    "lr": 3e-2,
    "steps": 30,
    "eval_every": 10,
    "n_eval": 40,
    "eval_lengths": (2, 3, 14, 53),
    "batch_size": 16,
}

#: float32 tolerance of two step paths that round differently: ``REL_TOL_ULPS`` units of float32
#: rounding (2⁻²³) of each tensor's largest magnitude -- a few roundings per update, compounded
#: over the check's updates, stays far below it, while any real difference (a wrong mask, a missed
#: update) is orders of magnitude above
REL_TOL_ULPS = 4096


def _state_tensors(ck: dict) -> dict[str, torch.Tensor]:
    """Every tensor of a paper-scale checkpoint by name (parameters, optimizer state, sampler, loss)."""
    out = {f"params.{k}": v for k, v in ck["params"].items()}
    for n, st in ck["opt"]["state"].items():
        out.update({f"opt.{n}.{k}": v for k, v in st.items()})
    out["sampler.perm"], out["sampler.k"] = ck["sampler"]["perm"], ck["sampler"]["k"]
    out["sampler.gen"] = ck["sampler"]["gen"]
    out["loss_sum"] = ck["loss_sum"]
    return out


def compare_states(a: dict, b: dict) -> dict:
    """Compare two paper-scale checkpoints tensor by tensor: whether every tensor, the optimizer
    count and the evaluation history (accuracies and losses; wall times excluded) are bitwise
    equal; the largest absolute difference and its ratio to float32 rounding (2⁻²³) of the tensor's
    largest magnitude; and whether that ratio is within :data:`REL_TOL_ULPS`."""
    ta, tb = _state_tensors(a), _state_tensors(b)
    if set(ta) != set(tb):
        raise ConfigError(
            f"the two checkpoints hold different tensors: {sorted(set(ta) ^ set(tb))}"
        )
    rows, worst = {}, 0.0
    for k in sorted(ta):
        x, y = ta[k].cpu(), tb[k].cpu()
        same = x.shape == y.shape and torch.equal(x, y)
        diff = 0.0
        if not same and x.is_floating_point() and x.shape == y.shape:
            diff = float((x.double() - y.double()).abs().max())
            scale = float(x.double().abs().max()) or 1.0
            ulps = diff / (scale * 2.0**-23)
        else:
            ulps = 0.0 if same else float("inf")
        worst = max(worst, ulps)
        rows[k] = {"bitwise": same, "max_abs_diff": diff, "ulps_of_max": round(ulps, 2)}
    strip = lambda h: [{k: v for k, v in e.items() if k != "wall_s"} for e in h]  # noqa: E731
    hist_same = strip(a["history"]) == strip(b["history"])
    bitwise = all(r["bitwise"] for r in rows.values()) and hist_same
    bitwise = bitwise and a["opt"]["t"] == b["opt"]["t"]
    return {
        "bitwise": bitwise,
        "history_equal": hist_same,
        "optimizer_count_equal": a["opt"]["t"] == b["opt"]["t"],
        "worst_ulps_of_max": round(worst, 2),
        "within_float32_tolerance": worst <= REL_TOL_ULPS
        and a["opt"]["t"] == b["opt"]["t"],
        "tolerance_ulps": REL_TOL_ULPS,
        "tensors": rows,
    }


def compare_step_paths(device="cuda", workdir=None, config: dict | None = None) -> dict:
    """The device check of the captured step: the tiny ensemble (:data:`TINY_CHECK`, or ``config``)
    trained three ways from the same start -- the eager loop (``graph=False``), the capturable
    step called eagerly, and the captured step (``graph=True``: warm-up, capture, replays) -- and
    their final states compared with :func:`compare_states`. ``graph_vs_capturable_eager`` compares
    the same code with and without the graph (expected bit for bit); ``graph_vs_eager`` compares
    with today's eager loop (AdamW's bias correction rounded differently: expected within float32
    tolerance). ``passed``: the graph equals the capturable eager step bit for bit or within float32
    tolerance, and today's eager loop within float32 tolerance. Off CUDA the graph is skipped and
    the report says why (``skipped``)."""
    import tempfile

    cfg = dict(TINY_CHECK if config is None else config)
    dev = resolve_device(device)
    why = graph_unavailable_reason(dev)
    if why is not None:
        return {"skipped": why, "passed": None, "device": str(dev)}
    root = Path(workdir) if workdir else Path(tempfile.mkdtemp(prefix="ch4-graph-"))
    runs_, rates = {}, {}
    for name, kw in (
        ("eager", {"graph": False}),
        ("capturable_eager", {"graph": False, "_capturable_eager": True}),
        ("graph", {"graph": True}),
    ):
        r = train_paper_scale(
            **cfg, device=dev, workdir=str(root / name), checkpoint_parts=False, **kw
        )
        rates[name] = r["updates_per_s_this_session"]
        runs_[name] = torch.load(
            root / name / "checkpoint.pt", map_location="cpu", weights_only=False
        )
    same_code = compare_states(runs_["capturable_eager"], runs_["graph"])
    today = compare_states(runs_["eager"], runs_["graph"])
    return {
        "device": str(dev),
        "device_name": device_name(str(dev)),
        "torch": torch.__version__,
        "config": {k: list(v) if isinstance(v, tuple) else v for k, v in cfg.items()},
        "graph_vs_capturable_eager": same_code,
        "graph_vs_eager": today,
        "passed": bool(
            (same_code["bitwise"] or same_code["within_float32_tolerance"])
            and today["within_float32_tolerance"]
        ),
        "updates_per_s_tiny": rates,
    }


def measure_step_rates(
    config: dict, *, updates: int = 300, warmup: int = 5, device="cuda"
) -> dict:
    """Updates per second of the eager step and of the captured step (:class:`CapturedStep`) for
    the ensemble of ``config`` (the keys of :data:`paper.PAPER_RUN`; only the model, data and
    optimizer settings are read), each timed over ``updates`` updates after ``warmup`` (which, for
    the graph, include its capture), with the epoch reshuffles and no evaluation. Off CUDA only the
    eager rate is measured and ``graph_skipped`` says why."""
    need = ("p", "width", "budgets", "wds", "seeds", "variants", "lr")
    if not isinstance(config, dict) or any(k not in config for k in need):
        raise ConfigError(
            f"config must be a dict with keys {', '.join(need)}, got {config!r}"[:300]
        )
    updates = check_positive_int("updates", updates)
    warmup = check_positive_int("warmup", warmup, minimum=2)
    p, width = check_modulus(config["p"]), check_positive_int("width", config["width"])
    lr = check_finite("lr", config["lr"], nonnegative=True)
    batch = check_positive_int("batch size", config.get("batch_size", BATCH_SIZE))
    lengths = [check_length(m) for m in config.get("train_lengths", TRAIN_LENGTHS)]
    members = members_of(
        config["variants"], config["budgets"], config["wds"], config["seeds"]
    )
    dev = resolve_device(device)
    why = graph_unavailable_reason(dev)
    sync = torch.cuda.synchronize if dev.type == "cuda" else (lambda: None)
    prev = torch.get_float32_matmul_precision()
    torch.set_float32_matmul_precision("highest")
    out = {
        "p": p,
        "width": width,
        "members": len(members),
        "batch_size": batch,
        "updates": updates,
        "device": str(dev),
        "device_name": device_name(str(dev)),
    }
    try:
        cache: dict = {}
        sets = [
            cache.setdefault(
                (m["seed"], m["n"]), train_set(m["seed"], p, lengths, m["n"])
            )
            for m in members
        ]
        for path in ("eager", "graph"):
            if path == "graph" and why is not None:
                out["graph_skipped"] = why
                break
            model = VariantMLP(p, width, members)
            sampler = DeviceLengthSampler(sets, p, batch, dev, seed=members[0]["seed"])
            params = model.init(dev)
            opt = model.optimizer(params, lr, capturable=path == "graph")
            loss_sum = torch.zeros(len(members), dtype=torch.float64, device=dev)
            stepper = PaperStep(model, sampler, opt, params, loss_sum)
            run = (
                CapturedStep(stepper, warmup=warmup - 1) if path == "graph" else stepper
            )
            t0 = time.perf_counter()
            for i in range(warmup):
                sampler.reshuffle(i)
                run()
            sync()
            t1 = time.perf_counter()
            for i in range(warmup, warmup + updates):
                sampler.reshuffle(i)
                run()
            sync()
            t2 = time.perf_counter()
            out[f"{path}_updates_per_s"] = round(updates / (t2 - t1), 1)
            out[f"{path}_warmup_s"] = round(t1 - t0, 3)
            if not bool(torch.isfinite(params["W"]).all()):
                raise RuntimeError(f"the {path} step produced non-finite weights")
        if "graph_updates_per_s" in out:
            out["speedup"] = round(
                out["graph_updates_per_s"] / out["eager_updates_per_s"], 2
            )
    finally:
        torch.set_float32_matmul_precision(prev)
    return out


def store_checkpoint(src, name: str, dest_root=None) -> dict:
    """Copy the parted checkpoint in ``src`` (a run's ``workdir/checkpoint``) to
    ``results/ch4/checkpoints/<name>/`` (or ``dest_root/<name>``), keeping only the latest
    (:func:`lengthgen.engine.parts.copy_parts`: never replaced by a run that got less far). Returns
    what happened, the stored update count and the stored size in bytes."""
    from lengthgen.engine.parts import copy_parts, parts_size, read_manifest
    from lengthgen.store import results_dir

    if not isinstance(name, str) or not name or "/" in name or name.startswith("."):
        raise ConfigError(f"checkpoint name must be a plain folder name, got {name!r}")
    dest = (
        Path(dest_root) if dest_root else results_dir() / "ch4" / "checkpoints"
    ) / name
    what = copy_parts(src, dest)
    man = read_manifest(dest)
    return {
        "result": what,
        "dest": str(dest),
        "step": man["meta"].get("step"),
        "bytes": parts_size(dest),
        "parts": len(man["parts"]),
    }


def main(argv=None) -> int:
    """``python -m lengthgen.chapters.ch4.paper_scale check-graph | rates | store-checkpoint``:
    the device check of the captured step (exit 1 when it fails), the updates/s of both step paths
    at the paper's ensemble for each ``--p``, and storing a run's checkpoint parts under results/."""
    import argparse
    import json
    import sys

    from lengthgen.chapters.ch4.paper import PAPER_RUN
    from lengthgen.store import atomic_write_json

    ap = argparse.ArgumentParser(prog="python -m lengthgen.chapters.ch4.paper_scale")
    sub = ap.add_subparsers(dest="command", required=True)
    a = sub.add_parser("check-graph", help="graph step vs eager step at tiny size")
    a.add_argument("--device", default="cuda")
    a.add_argument("--out", help="write the report (JSON) here")
    b = sub.add_parser("rates", help="updates/s of the eager and the captured step")
    b.add_argument("--device", default="cuda")
    b.add_argument("--p", type=int, nargs="+", default=[PAPER_RUN["p"]])
    b.add_argument("--updates", type=int, default=300)
    b.add_argument("--out", help="write the report (JSON) here")
    c = sub.add_parser(
        "store-checkpoint", help="keep a run's checkpoint under results/"
    )
    c.add_argument("src", help="a run's checkpoint folder (workdir/checkpoint)")
    c.add_argument("name", help="the cell's name, e.g. paper_p53")
    args = ap.parse_args(argv)
    try:
        if args.command == "check-graph":
            rep = compare_step_paths(args.device)
            brief = {
                k: rep[k]["bitwise"] if isinstance(rep.get(k), dict) else rep.get(k)
                for k in ("graph_vs_capturable_eager", "graph_vs_eager")
            }
            print(
                "graph check:",
                json.dumps(
                    {
                        "passed": rep["passed"],
                        "skipped": rep.get("skipped"),
                        "bitwise": brief,
                        "worst_ulps": {
                            k: rep[k]["worst_ulps_of_max"]
                            for k in ("graph_vs_capturable_eager", "graph_vs_eager")
                            if k in rep
                        },
                    }
                ),
                flush=True,
            )
            if args.out:
                atomic_write_json(args.out, rep)
            return 1 if rep["passed"] is False else 0
        if args.command == "rates":
            reps = []
            for p in args.p:
                r = measure_step_rates(
                    {**PAPER_RUN, "p": p}, updates=args.updates, device=args.device
                )
                print("rates:", json.dumps(r), flush=True)
                reps.append(r)
                if args.out:
                    atomic_write_json(args.out, reps)
            return 0
        r = store_checkpoint(args.src, args.name)
        print(
            f"{r['result']}: {r['dest']} at update {r['step']}, {r['parts']} parts, "
            f"{r['bytes'] / 1e6:.1f} MB",
            flush=True,
        )
        return 0
    except (ConfigError, ResultFileError, ValueError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    raise SystemExit(main())
