"""Chapter 4 at the paper's protocol (B.1.3, p = 53), on a GPU (section "At the paper's modulus").

Every variant (sine, sine + bias, ReLU) x budget x weight decay x seed trains as one ensemble
whose loop stays on the device: :class:`DeviceLengthSampler` draws the single-length batches,
:class:`VariantMLP` is ``V σ(W x + b)`` per member, one update is
:class:`~lengthgen.chapters.ch4.paper_step.PaperStep` (captured as a CUDA graph with
``graph=True``), and checkpoints (optionally in parts, :mod:`lengthgen.engine.parts`) let a
partial run resume bit for bit. ``python -m lengthgen.chapters.ch4.paper_scale check-graph |
rates | store-checkpoint`` runs :func:`lengthgen.chapters.ch4.device_checks.main`;
``scripts/gpu_ch4.sh`` prepares a bare GPU machine.
"""

from __future__ import annotations

import contextlib
import os
import time
from pathlib import Path
from typing import Sequence

import torch

from lengthgen.chapters.ch4.data import check_length, check_modulus, test_set, train_set
from lengthgen.chapters.ch4.model import ModularMLP, check_activation, uargmax
from lengthgen.chapters.ch4.paper import BATCH_SIZE, NS_DTYPE, TRAIN_LENGTHS
from lengthgen.chapters.ch4.paper_step import (
    CapturableOptimizer,
    CapturedStep,
    PaperStep,
    graph_unavailable_reason,
)
from lengthgen.chapters.ch4.training import resolve_device
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
        if not isinstance(v, (list, tuple)) or len(v) != 2 or not isinstance(v[1], bool):
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
    return sorted(out, key=lambda m: m["activation"] != "sine")  # stable: sine members first


class VariantMLP:
    """``V σ(W x + b)`` batched over members; σ = sin for members ``[0, n_sine)``, ReLU after.
    Member e starts from :class:`ModularMLP`'s weights for its seed; ``b`` stays zero for members
    without a bias (:meth:`mask_grads`)."""

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

    def optimizer(self, params: dict, lr: float, capturable: bool = False) -> EnsembleOptimizer:
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


# --------------------------------------------------------------------------- data on the device
class DeviceLengthSampler:
    """Single-length mini-batches drawn on the device, as in the authors' released loop: each
    member's training set (padded to the largest budget) lives on the device, its epoch walks the
    shards in order, each reshuffled from one device generator (``seed``, part of :meth:`state`);
    an epoch is :attr:`spe` updates.
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
        self.k = torch.zeros(E, 1, dtype=torch.long, device=device)  # batch index in the epoch
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
            keys = self.shard + torch.rand(self.shard.shape, generator=self.gen, device=self.dev)
            fresh = keys.argsort(dim=1)
            self.perm.copy_(fresh if all(restart) else torch.where(self.k == 0, fresh, self.perm))

    def batch(self):
        """The next batch of every member (``x`` [E, B, p], ``y`` [E, B], ``-1`` = padding), advancing
        ``k`` in place: device work only, on fixed buffers, so that a CUDA graph can capture it."""
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
        train = (torch.stack(n_ok).sum(0).double() / (sampler.Y >= 0).sum(1)).cpu().tolist()
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
@contextlib.contextmanager
def float32_throughout():
    """B.1's "float32 precision throughout": no TF32 in float32 matmuls while the block runs."""
    prev = torch.get_float32_matmul_precision()
    torch.set_float32_matmul_precision("highest")
    try:
        yield
    finally:
        torch.set_float32_matmul_precision(prev)


#: the arguments of :func:`train_paper_scale` that make its configuration
_CONFIG_KEYS = (
    "p width budgets wds seeds variants lr steps eval_every n_eval eval_lengths "
    "train_lengths batch_size"
).split()


def _paper_config(**cfg) -> dict:
    """The run's configuration (the arguments named in :data:`_CONFIG_KEYS`), checked, as hashed
    into its checkpoints' key."""
    p, width = check_modulus(cfg["p"]), check_positive_int("width", cfg["width"])
    steps = check_positive_int("steps", cfg["steps"])
    eval_every = check_positive_int("eval_every", cfg["eval_every"])
    n_eval = check_positive_int("n_eval", cfg["n_eval"])
    lr = check_finite("lr", cfg["lr"], nonnegative=True)
    return {
        **cfg,
        "p": p,
        "width": width,
        "budgets": list(cfg["budgets"]),
        "wds": list(cfg["wds"]),
        "seeds": list(cfg["seeds"]),
        "variants": [list(v) for v in cfg["variants"]],
        "lr": lr,
        "steps": steps,
        "eval_every": eval_every,
        "n_eval": n_eval,
        "eval_lengths": [check_length(m) for m in cfg["eval_lengths"]],
        "train_lengths": [check_length(m) for m in cfg["train_lengths"]],
    }


class _PaperRun:
    """The state of one paper-scale run -- model, sampler, parameters, optimizer, evaluation
    history, loss accumulator -- which its checkpoints hold, and the run's loop over it."""

    def __init__(self, cfg, members, dev, use_graph, capturable, workdir, parts):
        self.cfg, self.members, self.dev = cfg, members, dev
        self.capturable, self.parts = capturable, parts
        self.key = config_hash(train_paper_scale, cfg)
        self.ckpt_path = Path(workdir) / "checkpoint.pt" if workdir else None
        self.parts_path = Path(workdir) / PARTS_DIR if workdir else None
        p, lr = cfg["p"], cfg["lr"]
        self.model = VariantMLP(p, cfg["width"], members)
        cache: dict = {}
        sets = [
            cache.setdefault(
                (m["seed"], m["n"]),
                train_set(m["seed"], p, cfg["train_lengths"], m["n"]),
            )
            for m in members
        ]
        self.sampler = DeviceLengthSampler(sets, p, cfg["batch_size"], dev, seed=members[0]["seed"])
        uniq = sorted({m["seed"] for m in members})
        self.seed_index = torch.tensor([uniq.index(m["seed"]) for m in members], device=dev)
        self.banks = _banks(uniq, p, cfg["eval_lengths"], cfg["n_eval"], dev)
        self.params = self.model.init(dev)
        self.opt = self.model.optimizer(self.params, lr, capturable=capturable)
        self.step, self.history, self.wall_before, self.resumed = 0, [], 0.0, []
        self.loss_sum = torch.zeros(len(members), dtype=torch.float64, device=dev)
        self.loss_n = 0
        self.paths = self._resume()
        now = "graph" if use_graph else "eager-capturable" if capturable else "eager"
        if not self.paths or self.paths[-1][1] != now:
            self.paths.append([self.step, now])

    def _resume(self) -> list:
        """Resume from the further-along of ``checkpoint.pt`` and the parted checkpoint, if any
        belongs to this configuration; returns the step paths run so far."""
        found = [
            c
            for c in (
                _load_checkpoint(self.ckpt_path, self.key, self.dev) if self.ckpt_path else None,
                _load_checkpoint(self.parts_path, self.key, self.dev) if self.parts_path else None,
            )
            if c is not None
        ]
        if not found:
            return []
        ck = max(found, key=lambda c: c["step"])
        self.params = {k: v.to(self.dev) for k, v in ck["params"].items()}
        self.opt = self.model.optimizer(self.params, self.cfg["lr"], capturable=self.capturable)
        self.opt.load_state_dict(ck["opt"])
        self.sampler.load(ck["sampler"])
        self.step, self.history, self.wall_before = (
            ck["step"],
            ck["history"],
            ck["wall_s"],
        )
        self.loss_sum, self.loss_n = ck["loss_sum"].to(self.dev), ck["loss_n"]
        self.resumed = ck["resumed"] + [ck["step"]]
        where = self.parts_path if ck.get("parts") else self.ckpt_path
        print(f"resumed from {where} at update {self.step}", flush=True)
        # a checkpoint without "paths" was made by the eager loop from update 0
        return list(ck.get("paths", [[0, "eager"]]))

    def wall_s(self) -> float:
        return self.wall_before + time.perf_counter() - self.t0

    def checkpoint(self) -> None:
        """Write the checkpoint (a file, or parts with a manifest) and ``progress.json``."""
        if self.ckpt_path is None:
            return
        if self.capturable:
            self.opt.check_counter()
        obj = {
            "key": self.key,
            "step": self.step,
            "params": self.params,
            "opt": self.opt.state_dict(),
            "sampler": self.sampler.state(),
            "history": self.history,
            "wall_s": self.wall_s(),
            "loss_sum": self.loss_sum,
            "loss_n": self.loss_n,
            "resumed": self.resumed,
        }
        if self.paths != [[0, "eager"]]:
            obj["paths"] = self.paths
        steps = self.cfg["steps"]
        if self.parts:
            meta = {
                "key": self.key,
                "step": self.step,
                "target": steps,
                "p": self.cfg["p"],
            }
            save_parts(self.parts_path, {**obj, "parts": True}, meta=meta)
        else:
            _save_checkpoint(self.ckpt_path, obj)
        # the evaluations so far as readable JSON too: a run killed outright keeps them
        save_result(
            self.ckpt_path.with_name("progress.json"),
            {
                "step": self.step,
                "target": steps,
                "members": self.members,
                "history": self.history,
            },
            provenance(
                scale="paper",
                device=str(self.dev),
                seeds=sorted({m["seed"] for m in self.members}),
                extra={"note": "progress of an unfinished paper-scale run (not a stored cell)"},
            ),
        )

    def evaluate(self) -> None:
        """Record one evaluation (and print one progress line)."""
        train, acc = _evaluate(self.model, self.params, self.sampler, self.banks, self.seed_index)
        mean_loss = (self.loss_sum / max(self.loss_n, 1)).cpu().tolist()
        self.loss_sum.zero_()  # in place: the step's buffer
        self.loss_n = 0
        self.history.append(
            {
                "step": self.step,
                "wall_s": round(self.wall_s(), 2),
                "train_loss": mean_loss,
                "train_acc": train,
                "acc": acc,
            }
        )
        far, by = str(max(self.cfg["eval_lengths"])), {}
        for i, m in enumerate(self.members):
            tag = m["activation"] + ("+b" if m["bias"] else "")
            by.setdefault(tag, []).append(acc[far][i])
        rate = (self.step - self.step0) / max(time.perf_counter() - self.t0, 1e-9)
        print(
            f"update {self.step:>8}/{self.cfg['steps']}  {rate:7.0f} upd/s  best acc at m={far}: "
            + ", ".join(f"{t} {max(v):.3f}" for t, v in by.items()),
            flush=True,
        )

    def loop(self, run_step, deadline, stop_margin_s, checkpoint_every_s, stop_at) -> bool:
        """Run updates up to the target, evaluating every ``eval_every``; stop early (evaluate,
        checkpoint, return True: partial) at ``deadline`` − ``stop_margin_s`` or ``stop_at``."""
        steps, every = self.cfg["steps"], self.cfg["eval_every"]
        self.t0 = t_ckpt = time.perf_counter()
        self.step0 = self.step
        while self.step < steps:
            self.sampler.reshuffle(self.step)
            run_step()
            self.loss_n += 1
            self.step += 1
            if self.step % every == 0 or self.step == steps:
                self.evaluate()
            stop = (stop_at is not None and self.step >= stop_at) or (
                deadline is not None and time.time() > deadline - stop_margin_s
            )
            if stop and self.step < steps:
                if not self.history or self.history[-1]["step"] != self.step:
                    self.evaluate()
                self.checkpoint()
                return True
            if self.step % 200 == 0 and time.perf_counter() - t_ckpt > checkpoint_every_s:
                self.checkpoint()
                t_ckpt = time.perf_counter()
        return False

    def captured_step(self, requested, skipped, run_step) -> dict:
        """How the updates were run: the captured step requested, used, skipped (why), its capture
        time and the step paths by update."""
        used = isinstance(run_step, CapturedStep)
        capture_s = run_step.capture_s if used else None
        return {
            "requested": requested,
            "used": used,
            "skipped_because": skipped,
            "capture_s": None if capture_s is None else round(capture_s, 3),
            "paths": self.paths,
        }

    def result(self, partial: bool, train_s: float, setup_s: float) -> dict:
        """The stored value of the run (see :func:`train_paper_scale`)."""
        step, sampler, last = self.step, self.sampler, self.history[-1]
        spe = {m["n"]: sampler.spe[i] for i, m in enumerate(self.members)}
        return {
            "partial": partial,
            "progress": {"done": step, "target": self.cfg["steps"], "unit": "updates"},
            "members": [
                {**m, "epochs": round(step / sampler.spe[i], 2)} for i, m in enumerate(self.members)
            ],
            "updates_per_epoch": {str(n): s for n, s in sorted(spe.items())},
            "eval_lengths": self.cfg["eval_lengths"],
            "train_lengths": self.cfg["train_lengths"],
            "history": self.history,
            "final": {
                "step": last["step"],
                "train_acc": last["train_acc"],
                "acc": last["acc"],
            },
            "updates_per_s_this_session": round((step - self.step0) / max(train_s, 1e-9), 2),
            "train_wall_s": round(self.wall_before + train_s, 2),
            "setup_s": round(setup_s, 2),
            "resumed_at": self.resumed,
            "device_name": device_name(str(self.dev)),
            "float32_matmul_precision": "highest",
        }


def _step_path(graph, capturable_eager, dev) -> tuple:
    """Which update step a run on ``dev`` uses: ``(graph requested, graph used, capturable
    optimizer, why the graph is skipped)`` (one line printed when it is)."""
    graph = _flag("graph", graph, GRAPH_ENV)
    if not isinstance(capturable_eager, bool):
        raise ConfigError(f"_capturable_eager must be True or False, got {capturable_eager!r}")
    skipped = graph_unavailable_reason(dev) if graph else None
    if skipped:
        print(f"captured step skipped: {skipped}; running the eager step", flush=True)
    use_graph = graph and skipped is None
    return graph, use_graph, use_graph or capturable_eager, skipped


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

    Returns the members, updates per epoch, the evaluation history, final accuracies, throughput
    and ``partial`` (stopped at ``deadline`` − ``stop_margin_s``). ``graph`` / ``checkpoint_parts``
    (``None``: ``$LENGTHGEN_CH4_GRAPH`` / ``$LENGTHGEN_CH4_PARTS`` = 1) choose the captured step
    and parted checkpoints; ``_stop_at`` (tests) and ``_capturable_eager`` (device checks) are
    for checking only.
    """
    t_call = time.perf_counter()
    # the run's configuration (its first keyword arguments), checked; hashed into the checkpoints' key
    cfg = _paper_config(**{k: v for k, v in locals().items() if k in _CONFIG_KEYS})
    members = members_of(variants, budgets, wds, seeds)
    checkpoint_parts = _flag("checkpoint_parts", checkpoint_parts, PARTS_ENV)
    dev = resolve_device(device)
    note_device(dev)
    graph, use_graph, capturable, graph_skipped = _step_path(graph, _capturable_eager, dev)
    with float32_throughout():
        run = _PaperRun(cfg, members, dev, use_graph, capturable, workdir, checkpoint_parts)
        stepper = PaperStep(run.model, run.sampler, run.opt, run.params, run.loss_sum)
        run_step = CapturedStep(stepper) if use_graph else stepper
        setup_s = time.perf_counter() - t_call
        partial = run.loop(run_step, deadline, stop_margin_s, checkpoint_every_s, _stop_at)
        if dev.type == "cuda":
            torch.cuda.synchronize()
        train_s = time.perf_counter() - run.t0
        if not partial:
            run.checkpoint()
    out = run.result(partial, train_s, setup_s)
    if graph or capturable or run.paths != [[0, "eager"]]:
        out["captured_step"] = run.captured_step(graph, graph_skipped, run_step)
    return out


def paper_scale_flops(p: int, width: int, members: int, batch: int = BATCH_SIZE) -> float:
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


if __name__ == "__main__":  # the device checks' command line (kept at its historical name)
    from lengthgen.chapters.ch4.device_checks import main

    raise SystemExit(main())
