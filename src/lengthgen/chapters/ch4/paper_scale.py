"""Chapter 4 at the paper's protocol (B.1.3, p = 53) on a GPU (section "At the paper's modulus"):
:func:`train_paper_scale` trains every (variant, budget, weight decay, seed) as one on-device
ensemble, resumable bit for bit from checkpoints (optionally in parts); the engine's
``train_ensemble`` cannot resume from optimizer and sampler state, stop before a deadline or draw
batches on the device from one generator. :func:`main` stores a brought-back checkpoint."""

from __future__ import annotations

import argparse
import itertools
import os
import sys
import time
from pathlib import Path
from typing import Sequence

import torch

from lengthgen.chapters.ch4.data import check_length, check_modulus, test_set, train_set
from lengthgen.chapters.ch4.data import ModularMLP, check_activation, uargmax
from lengthgen.chapters.ch4.paper import BATCH_SIZE, NS_DTYPE, TRAIN_LENGTHS
from lengthgen.chapters.ch4.training import masked_loss, padded_sets, resolve_device
from lengthgen.config import ConfigError, check_finite, check_positive_int
from lengthgen.engine.optim import EnsembleOptimizer, OptimConfig
from lengthgen.engine.parts import copy_parts, load_parts, parts_size, read_manifest, save_parts
from lengthgen.engine.runs import config_hash, note_device
from lengthgen.store import ResultFileError, device_name, provenance, results_dir, save_result

#: the environment variable read when ``checkpoint_parts`` is left at ``None``
PARTS_ENV = "LENGTHGEN_CH4_PARTS"
#: the folder (in ``workdir``) of the checkpoint in parts
PARTS_DIR = "checkpoint"


def members_of(variants, budgets, wds, seeds) -> list[dict]:
    """The ensemble's members, sine ones first: one per (variant, budget n, weight decay, seed)."""
    for v in variants:
        if not isinstance(v, (list, tuple)) or len(v) != 2 or not isinstance(v[1], bool):
            raise ConfigError(f"each variant must be (activation, bias), got {v!r}")
    budgets = [check_positive_int("budget n", n) for n in budgets]
    wds = [check_finite("weight decay", wd, nonnegative=True) for wd in wds]
    seeds = [check_positive_int("seed", s, minimum=0) for s in seeds]
    out = [
        dict(activation=check_activation(a), bias=b, n=n, wd=wd, seed=s)
        for (a, b), n, wd, s in itertools.product(variants, budgets, wds, seeds)
    ]
    if not out:
        raise ConfigError("the ensemble is empty: give a variant, budget, weight decay and seed")
    return sorted(out, key=lambda m: m["activation"] != "sine")  # stable: sine members first


class VariantMLP:
    """``V σ(W x + b)`` batched over members, σ = sin for members ``[0, n_sine)``, ReLU after; each
    starts from :class:`ModularMLP`'s weights for its seed, ``b`` = 0 for those without a bias."""

    def __init__(self, p: int, width: int, members: Sequence[dict]):
        self.p, self.width, self.members = p, width, list(members)
        self.n_sine = sum(m["activation"] == "sine" for m in self.members)
        self.has_bias = torch.tensor([m["bias"] for m in self.members])

    def init(self, device) -> dict[str, torch.Tensor]:
        """The members' initial weights on ``device``, where the bias mask stays too (a copy per
        update would synchronise the GPU)."""
        seeds = [m["seed"] for m in self.members]
        params = ModularMLP(self.p, self.width, "sine", bias=True).init(seeds, device=device)
        self.bias_mask = self.has_bias.to(device, params["b"].dtype).unsqueeze(1)
        params["b"] = params["b"] * self.bias_mask
        return params

    def forward(self, params: dict, x: torch.Tensor) -> torch.Tensor:
        """Logits [E, B, p] of count vectors ``x`` [E, B, p]."""
        h = torch.baddbmm(params["b"].unsqueeze(1), x, params["W"].transpose(1, 2))
        a = torch.cat([torch.sin(h[: self.n_sine]), torch.relu(h[self.n_sine :])])
        return torch.bmm(a, params["V"].transpose(1, 2))

    def optimizer(self, params: dict, lr: float) -> EnsembleOptimizer:
        """B.1.3's Muon (float32 Newton–Schulz) on W and V, AdamW without decay on b; decoupled decay
        on V for every member and on W for the ReLU members only."""
        kw = dict(muon_params=["W", "V"], adamw_params=["b"], ns_dtype=NS_DTYPE, decay=["W", "V"])
        kw["decay_members"] = {"W": [m["activation"] == "relu" for m in self.members]}
        cfg = OptimConfig("muon", lr=lr, weight_decay=[m["wd"] for m in self.members], **kw)
        return EnsembleOptimizer(cfg, params, ["W", "V", "b"])


class DeviceLengthSampler:
    """Single-length mini-batches drawn on the device, as in the authors' released loop: member e's
    epoch (``spe[e]`` updates) walks its length shards in order, reshuffled from one generator."""

    def __init__(self, sets, p: int, batch: int, device, seed: int):
        self.dev, self.B, self.p = device, check_positive_int("batch size", batch), p
        E, self.n_max = len(sets), max(len(d) for d in sets)
        X, Y = padded_sets(sets)
        shard = torch.full((E, self.n_max), float(len(TRAIN_LENGTHS) + 1))  # padding sorts last
        plans = []  # per member: (start, size) of each batch of its epoch
        for e, d in enumerate(sets):
            plan, off = [], 0
            for j, L in enumerate(dict.fromkeys(d.m.tolist())):
                n_j = int((d.m == L).sum())
                shard[e, off : off + n_j] = float(j)
                plan += [(off + c, min(self.B, n_j - c)) for c in range(0, n_j, self.B)]
                off += n_j
            plans.append(plan)
        self.spe = [len(pl) for pl in plans]
        padded = [pl + [(0, 0)] * (max(self.spe) - len(pl)) for pl in plans]
        start, length = torch.tensor(padded, dtype=torch.long).unbind(-1)
        self.X, self.Y, self.shard = X.to(device), Y.to(device), shard.to(device)
        self.start, self.length = start.to(device), length.to(device)
        self.ar = torch.arange(self.B, device=device)
        self.gen = torch.Generator(device=device).manual_seed(int(seed))
        self.perm = torch.zeros(E, self.n_max, dtype=torch.long, device=device)
        self.k = torch.zeros(E, 1, dtype=torch.long, device=device)  # batch index in the epoch
        self.spe_t = torch.tensor(self.spe, device=device).unsqueeze(1)

    def reshuffle(self, step: int) -> None:
        """A fresh in-shard permutation, in place, for the members whose epoch starts at ``step``
        (known on the host: no synchronisation)."""
        restart = [step % s == 0 for s in self.spe]
        if any(restart):
            keys = self.shard + torch.rand(self.shard.shape, generator=self.gen, device=self.dev)
            fresh = keys.argsort(dim=1)
            self.perm.copy_(fresh if all(restart) else torch.where(self.k == 0, fresh, self.perm))

    def batch(self):
        """The next batch of every member (``x`` [E, B, p], ``y`` [E, B], ``-1`` = padding)."""
        pos = (self.start.gather(1, self.k) + self.ar).clamp(max=self.n_max - 1)
        valid, idx = self.ar < self.length.gather(1, self.k), self.perm.gather(1, pos)
        x = self.X.gather(1, idx.unsqueeze(-1).expand(-1, -1, self.p))
        y = torch.where(valid, self.Y.gather(1, idx), torch.full_like(idx, -1))
        self.k.copy_((self.k + 1).remainder(self.spe_t))
        return x, y

    def state(self) -> dict:
        """The sampler's state for a checkpoint: permutations, batch indices, generator state."""
        return {"perm": self.perm, "k": self.k, "gen": self.gen.get_state()}

    def load(self, st: dict) -> None:
        """Restore :meth:`state` (a checkpoint of this configuration: the shapes match)."""
        gen, mine = st["gen"].cpu(), self.gen.get_state().numel()
        if gen.numel() != mine:
            raise ConfigError(
                f"the checkpoint's sampler RNG state ({gen.numel()} bytes) is not one of a "
                f"{self.dev} generator ({mine} bytes): resume it on the device type it was made on"
            )
        self.perm.copy_(st["perm"])
        self.k.copy_(st["k"])
        self.gen.set_state(gen)


# --------------------------------------------------------------------------- checkpoints
def _load_checkpoint(path: Path, key: str, device):
    """The checkpoint ``path`` (a ``.pt`` file or a folder of parts) if it belongs to ``key``, else
    ``None``; an unreadable one raises :class:`ResultFileError` naming it."""
    if path.suffix != ".pt":
        obj = load_parts(path, map_location=device) if path.is_dir() else None
    elif path.is_file():
        try:
            obj = torch.load(path, map_location=device, weights_only=False)
        except Exception as err:  # noqa: BLE001 - any unreadable checkpoint is named
            raise ResultFileError(
                f"corrupt checkpoint {path}: {err}; move it away to start afresh"
            ) from None
    else:
        return None
    if obj is not None and (not isinstance(obj, dict) or obj.get("key") != key):
        print(f"ignoring checkpoint {path}: it belongs to another configuration", flush=True)
        return None
    return obj


def _parts_flag(value) -> bool:
    """``checkpoint_parts`` as a bool; ``None`` reads :data:`PARTS_ENV` (unset, ``0`` or ``1``)."""
    if value is None:
        raw = os.environ.get(PARTS_ENV, "0").strip()
        if raw not in ("", "0", "1"):
            raise ConfigError(f"{PARTS_ENV} must be 0 or 1, got {raw!r}")
        return raw == "1"
    if not isinstance(value, bool):
        raise ConfigError(f"checkpoint_parts must be True, False or None, got {value!r}")
    return value


#: the settings of :func:`train_paper_scale` that make its configuration, and its options
_CONFIG_KEYS = "p width budgets wds seeds variants lr steps eval_every n_eval eval_lengths".split()
_CONFIG_KEYS += ["train_lengths", "batch_size"]
_OPTIONS = dict(checkpoint_every_s=120.0, stop_margin_s=30.0, checkpoint_parts=None, _stop_at=None)


def _paper_config(cfg: dict) -> dict:
    """The run's configuration, checked and in canonical form, as hashed into its checkpoints' key."""
    out = {**cfg, **{k: list(cfg[k]) for k in ("budgets", "wds", "seeds")}}
    out.update(p=check_modulus(cfg["p"]), width=check_positive_int("width", cfg["width"]))
    out.update(variants=[list(v) for v in cfg["variants"]])
    out.update(lr=check_finite("lr", cfg["lr"], nonnegative=True))
    out.update({k: check_positive_int(k, cfg[k]) for k in ("steps", "eval_every", "n_eval")})
    out.update({k: [check_length(m) for m in cfg[k]] for k in ("eval_lengths", "train_lengths")})
    return out


# --------------------------------------------------------------------------- the run
class _PaperRun:
    """One paper-scale run: the state its checkpoints hold, and its loop."""

    def __init__(self, cfg, members, dev, workdir, parts):
        self.cfg, self.members, self.dev, self.parts = cfg, members, dev, parts
        self.key = config_hash(train_paper_scale, cfg)
        self.ckpt_path = Path(workdir) / "checkpoint.pt" if workdir else None
        p = cfg["p"]
        self.model = VariantMLP(p, cfg["width"], members)
        keys = dict.fromkeys((m["seed"], m["n"]) for m in members)  # decays share a training set
        data = {(s, n): train_set(s, p, cfg["train_lengths"], n) for s, n in keys}
        sets = [data[m["seed"], m["n"]] for m in members]
        self.sampler = DeviceLengthSampler(sets, p, cfg["batch_size"], dev, members[0]["seed"])
        self.params = self.model.init(dev)
        self.opt = self.model.optimizer(self.params, cfg["lr"])
        uniq = sorted({m["seed"] for m in members})
        self.seed_index = torch.tensor([uniq.index(m["seed"]) for m in members], device=dev)
        self.banks = {}  # held-out inputs per evaluation length, one row per distinct seed
        for L in cfg["eval_lengths"]:
            tests = [test_set(s, p, L, cfg["n_eval"]) for s in uniq]
            self.banks[L] = tuple(torch.stack([getattr(d, f) for d in tests]).to(dev) for f in "xy")
        self.step, self.history, self.wall_before, self.resumed = 0, [], 0.0, []
        self.loss_sum, self.loss_n = torch.zeros(len(members), dtype=torch.float64, device=dev), 0
        self._resume()

    def _resume(self) -> None:
        """Resume from the further-along of this configuration's checkpoints, if any."""
        if self.ckpt_path is None:
            return
        where = (self.ckpt_path, self.ckpt_path.with_name(PARTS_DIR))
        found = [(c, w) for w in where if (c := _load_checkpoint(w, self.key, self.dev))]
        if not found:
            return
        ck, path = max(found, key=lambda cw: cw[0]["step"])
        self.params = {k: v.to(self.dev) for k, v in ck["params"].items()}
        self.opt = self.model.optimizer(self.params, self.cfg["lr"])
        self.opt.load_state_dict(ck["opt"])
        self.sampler.load(ck["sampler"])
        self.step, self.history, self.wall_before = ck["step"], ck["history"], ck["wall_s"]
        self.loss_sum, self.loss_n = ck["loss_sum"].to(self.dev), ck["loss_n"]
        self.resumed = ck["resumed"] + [ck["step"]]
        print(f"resumed from {path} at update {self.step}", flush=True)

    def update(self) -> None:
        """One update of the ensemble (the caller reshuffles at epoch starts)."""
        names = ("W", "V", "b")
        x, y = self.sampler.batch()
        P = {n: self.params[n].detach().requires_grad_(True) for n in names}
        lvec = masked_loss(self.model.forward(P, x), y)
        grads = dict(zip(names, torch.autograd.grad(lvec.sum(), [P[n] for n in names])))
        grads["b"].mul_(self.model.bias_mask)  # the members without a bias keep b = 0
        self.opt.step(self.params, grads)
        self.loss_sum += lvec.detach().double()

    def wall_s(self) -> float:
        return self.wall_before + time.perf_counter() - self.t0

    def checkpoint(self) -> None:
        """Write the checkpoint (a file, or parts with a manifest) and ``progress.json``."""
        if self.ckpt_path is None:
            return
        obj = dict(key=self.key, step=self.step, params=self.params, opt=self.opt.state_dict())
        obj.update(sampler=self.sampler.state(), history=self.history, wall_s=self.wall_s())
        obj.update(loss_sum=self.loss_sum, loss_n=self.loss_n, resumed=self.resumed)
        steps = self.cfg["steps"]
        if self.parts:
            meta = {"key": self.key, "step": self.step, "target": steps, "p": self.cfg["p"]}
            save_parts(self.ckpt_path.with_name(PARTS_DIR), {**obj, "parts": True}, meta=meta)
        else:
            self.ckpt_path.parent.mkdir(parents=True, exist_ok=True)
            tmp = self.ckpt_path.with_suffix(".tmp")
            torch.save(obj, tmp)
            os.replace(tmp, self.ckpt_path)
        # the evaluations so far as readable JSON too: a run killed outright keeps them
        note = {"note": "progress of an unfinished paper-scale run (not a stored cell)"}
        seeds = sorted({m["seed"] for m in self.members})
        prov = provenance(scale="paper", device=str(self.dev), seeds=seeds, extra=note)
        value = dict(step=self.step, target=steps, members=self.members, history=self.history)
        save_result(self.ckpt_path.with_name("progress.json"), value, prov)

    @torch.no_grad()
    def evaluate(self, chunk: int = 4096) -> None:
        """Record each member's train and held-out accuracies and mean loss; print a progress line."""
        s, n_ok = self.sampler, 0
        for lo in range(0, s.n_max, chunk):
            out = self.model.forward(self.params, s.X[:, lo : lo + chunk])
            y = s.Y[:, lo : lo + chunk]
            n_ok = n_ok + ((uargmax(out) == y) & (y >= 0)).sum(1)
        train, acc = (n_ok.double() / (s.Y >= 0).sum(1)).cpu().tolist(), {}
        for L, (x, y) in self.banks.items():
            out = self.model.forward(self.params, x.index_select(0, self.seed_index))
            correct = uargmax(out) == y.index_select(0, self.seed_index)
            acc[str(L)] = correct.double().mean(1).cpu().tolist()
        mean_loss = (self.loss_sum / max(self.loss_n, 1)).cpu().tolist()
        self.loss_sum.zero_()  # in place: the step's buffer
        self.loss_n = 0
        wall = round(self.wall_s(), 2)
        entry = dict(step=self.step, wall_s=wall, train_loss=mean_loss, train_acc=train, acc=acc)
        self.history.append(entry)
        far, by = str(max(self.cfg["eval_lengths"])), {}
        for i, m in enumerate(self.members):
            by.setdefault(m["activation"] + ("+b" if m["bias"] else ""), []).append(acc[far][i])
        rate = (self.step - self.step0) / max(time.perf_counter() - self.t0, 1e-9)
        best = ", ".join(f"{t} {max(v):.3f}" for t, v in by.items())
        print(f"update {self.step:>8}/{self.cfg['steps']}  {rate:7.0f} upd/s  ", end="")
        print(f"best acc at m={far}: {best}", flush=True)

    def loop(self, deadline, stop_margin_s, checkpoint_every_s, stop_at) -> bool:
        """Run updates up to the target, evaluating every ``eval_every``; stop early (evaluate,
        checkpoint, return True: partial) at ``deadline`` − ``stop_margin_s`` or ``stop_at``."""
        steps, every = self.cfg["steps"], self.cfg["eval_every"]
        self.t0 = t_ckpt = time.perf_counter()
        self.step0 = self.step
        while self.step < steps:
            self.sampler.reshuffle(self.step)
            self.update()
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

    def result(self, partial: bool, train_s: float, setup_s: float) -> dict:
        """The stored value of the run (see :func:`train_paper_scale`)."""
        step, spe, last = self.step, self.sampler.spe, self.history[-1]
        by_n = dict(zip((m["n"] for m in self.members), spe))
        return {
            "partial": partial,
            "progress": {"done": step, "target": self.cfg["steps"], "unit": "updates"},
            "members": [{**m, "epochs": round(step / s, 2)} for m, s in zip(self.members, spe)],
            "updates_per_epoch": {str(n): s for n, s in sorted(by_n.items())},
            **{k: self.cfg[k] for k in ("eval_lengths", "train_lengths")},
            "history": self.history,
            "final": {k: last[k] for k in ("step", "train_acc", "acc")},
            "updates_per_s_this_session": round((step - self.step0) / max(train_s, 1e-9), 2),
            "train_wall_s": round(self.wall_before + train_s, 2),
            "setup_s": round(setup_s, 2),
            "resumed_at": self.resumed,
            "device_name": device_name(str(self.dev)),
            "float32_matmul_precision": "highest",
        }


def train_paper_scale(*, device="cpu", deadline=None, workdir=None, **settings) -> dict:
    """Train the B.1.3 study with ``settings`` (:data:`_CONFIG_KEYS`, :data:`_OPTIONS`) as one
    on-device ensemble: members, updates per epoch, evaluation history, final accuracies,
    throughput and ``partial`` (stopped at ``deadline`` − ``stop_margin_s``). ``checkpoint_parts``
    (``None``: ``$LENGTHGEN_CH4_PARTS`` = 1) writes the checkpoint in parts."""
    t_call = time.perf_counter()
    given = {"train_lengths": TRAIN_LENGTHS, "batch_size": BATCH_SIZE, **settings}
    opt = {k: given.pop(k, v) for k, v in _OPTIONS.items()}
    if sorted(given) != sorted(_CONFIG_KEYS):
        raise ConfigError(f"train_paper_scale takes {_CONFIG_KEYS} and {list(_OPTIONS)}")
    members = members_of(*(given[k] for k in ("variants", "budgets", "wds", "seeds")))
    cfg, parts = _paper_config(given), _parts_flag(opt["checkpoint_parts"])
    dev = resolve_device(device)
    note_device(dev)
    precision = torch.get_float32_matmul_precision()
    torch.set_float32_matmul_precision("highest")  # B.1's "float32 precision throughout"
    try:
        run, setup_s = _PaperRun(cfg, members, dev, workdir, parts), time.perf_counter() - t_call
        stops = (deadline, opt["stop_margin_s"], opt["checkpoint_every_s"], opt["_stop_at"])
        partial = run.loop(*stops)
        if dev.type == "cuda":
            torch.cuda.synchronize()
        train_s = time.perf_counter() - run.t0
        if not partial:
            run.checkpoint()
    finally:
        torch.set_float32_matmul_precision(precision)
    return run.result(partial, train_s, setup_s)


def paper_scale_flops(p: int, width: int, members: int, batch: int = BATCH_SIZE) -> float:
    """Matmul FLOPs of one update's forward (2) and backward (3) passes, each ``2·E·B·d·p``."""
    return 5 * 2.0 * members * batch * width * p


def newton_schulz_flops(p: int, width: int, members: int, steps: int = 5) -> float:
    """Matmul FLOPs of Muon's Newton–Schulz in one update, whatever the batch: ``steps`` quintic
    steps on each of the two d×p matrices, with ``a = min(d, p)``, ``b = max(d, p)``: XXᵀ (2a²b),
    its square (2a³), the product with X (2a²b), i.e. ``2·E·steps·(4a²b + 2a³)``."""
    a, b = min(p, width), max(p, width)
    return 2.0 * members * steps * (4 * a * a * b + 2 * a**3)


def store_checkpoint(src, name: str, dest_root=None) -> dict:
    """Copy the parted checkpoint ``src`` to ``results/ch4/checkpoints/<name>/`` (or ``dest_root``)
    unless the stored one got further (:func:`.parts.copy_parts`): what happened, steps, size."""
    if not isinstance(name, str) or not name or "/" in name or name.startswith("."):
        raise ConfigError(f"checkpoint name must be a plain folder name, got {name!r}")
    dest = (Path(dest_root) if dest_root else results_dir() / "ch4" / "checkpoints") / name
    out = {"result": copy_parts(src, dest), "dest": str(dest), "bytes": parts_size(dest)}
    man = read_manifest(dest)
    return {**out, "step": man["meta"].get("step"), "parts": len(man["parts"])}


def main(argv=None) -> int:
    """``python -m lengthgen.chapters.ch4.paper_scale store-checkpoint SRC NAME``: keep a run's
    checkpoint parts under results/ (:func:`store_checkpoint`); exit 2 with one line on error."""
    ap = argparse.ArgumentParser(prog="python -m lengthgen.chapters.ch4.paper_scale")
    ap.add_argument("command", choices=["store-checkpoint"])
    ap.add_argument("src", help="a run's checkpoint folder (workdir/checkpoint)")
    ap.add_argument("name", help="the cell's name, e.g. paper_p53")
    args = ap.parse_args(argv)
    try:
        r = store_checkpoint(args.src, args.name)
    except (ConfigError, ResultFileError, ValueError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    mb = r["bytes"] / 1e6
    print(f"{r['result']}: {r['dest']} at update {r['step']}, {r['parts']} parts, {mb:.1f} MB")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
