"""Chapter 1 (Chiang & Cholak 2022): exact constructions, cross-entropy vs length, training on FIRST/PARITY.

Scale-independent pieces (run live by the notebook at full size):

* :func:`exactness`         accuracy of every construction, exhaustive for n ≤ 16 and on random strings
* :func:`ce_curve`          mean cross-entropy (bits) and accuracy against n (the paper's Fig. 2)
* :func:`logit_range`       min / max |logit| of a construction at each n (Knowl 5's 1/4 … 1/2 band)
* :func:`sensitivity_sweep` the PARITY construction with the k/N value weight moved off 1 (Knowl 8)
* :func:`flawed_first_error` exact error rate of the one-layer FIRST transformer with standard attention

Training (scale-dependent; stored by ``python -m lengthgen reproduce ch1 --scale full``):

* :func:`train_first`  standard and log-scaled encoders on FIRST at training lengths 10 … 300, tested
  at n = 1000, all settings and runs as one ensemble of the engine (Knowl 6, Fig. 4)
* :func:`train_parity` the standard setup on PARITY (Knowl 8)

FIRST strings are fed to the encoder as groups of identical positions (:meth:`Encoder.group`),
which is exact and makes a string of length 1000 cost as much as one of length 3.
"""
from __future__ import annotations

import math
import time
from functools import lru_cache
from pathlib import Path

import numpy as np
import torch

from lengthgen.chapters.ch1 import constructions as C
from lengthgen.config import check_choice, check_positive_int, get_device
from lengthgen.chapters.ch1.encoder import Encoder, EncoderConfig, Grouped, accuracy, cross_entropy_bits
from lengthgen.store import ResultStore, load_result, provenance
from lengthgen.nn.tasks import all_strings, label, random_strings

#: The three layer-norm settings of Fig. 2: (label, keyword arguments of the construction).
LN_VARIANTS = (("no layer norm", {}), ("layer norm, eps = 1e-5", {"layer_norm": True, "eps": 1e-5}),
               ("layer norm, eps = 0", {"layer_norm": True, "eps": 0.0}))
#: Lengths of Fig. 2 (log-spaced from 1 to 1000).
FIG2_LENGTHS = (1, 2, 3, 5, 10, 20, 30, 50, 100, 200, 300, 500, 1000)
TRAIN_LENGTHS = (10, 30, 100, 300)

#: Training protocols. ``full`` is the paper's (Knowl 6 and 8; epochs and batch size 1 from the
#: authors' released scripts); ``smoke`` is what the notebook runs live.
PROTOCOLS = {
    "full": {"runs": 20, "epochs": 100, "steps_per_epoch": 100, "test_n": 1000, "test_strings": 100,
             "eval_every_epochs": 5, "parity_runs": 20, "parity_epochs": 100, "parity_n": 100,
             "fig2_strings": 1000, "sens_points": 401, "sens_strings": 100},
    "smoke": {"runs": 1, "epochs": 3, "steps_per_epoch": 100, "test_n": 1000, "test_strings": 100,
              "eval_every_epochs": 1, "parity_runs": 2, "parity_epochs": 1, "parity_n": 20,
              "fig2_strings": 100, "sens_points": 81, "sens_strings": 100},
}
MODEL = {"d_model": 16, "d_ffn": 64, "n_layers": 2, "lr": 3e-4, "eps": 1e-5}


@lru_cache(maxsize=None)
def _all_strings(n: int) -> torch.Tensor:
    """Every string of length n (cached: the exhaustive checks reuse them for every construction)."""
    return all_strings(n)


def task_of(construction: str) -> str:
    return "parity" if construction == "parity" else "first"


def _inputs(enc: Encoder, bits: torch.Tensor):
    """Grouped input where exact (positional 'first'), the strings themselves otherwise."""
    return enc.group(bits) if enc.config.positional != "parity" else bits


@torch.no_grad()
def evaluate(enc: Encoder, params: dict, bits: torch.Tensor, task: str) -> dict:
    """Accuracy, mean cross-entropy (bits) and min / max |logit| of member 0 on ``bits``."""
    logits = enc(params, _inputs(enc, bits))[0]
    y = label(task, bits)
    mag = logits.abs()
    return {"acc": float(accuracy(logits, y)), "ce_bits": float(cross_entropy_bits(logits, y).mean()),
            "min_abs_logit": float(mag.min()), "max_abs_logit": float(mag.max())}


def exactness(name: str, kw: dict | None = None, *, n_exhaustive: int = 16, random_ns=(100, 1000),
              n_random: int = 1000, seed: int = 0) -> dict:
    """Accuracy of construction ``name`` on every string with n ≤ ``n_exhaustive`` and on
    ``n_random`` random strings at each n in ``random_ns`` (Knowl 9's check, Claim 1)."""
    check_choice("construction", name, C.CONSTRUCTIONS)
    n_exhaustive = check_positive_int("n_exhaustive", n_exhaustive)
    enc, p = C.build(name, **(kw or {}))
    task = task_of(name)
    exh = [evaluate(enc, p, _all_strings(n), task)["acc"] for n in range(1, n_exhaustive + 1)]
    g = torch.Generator().manual_seed(seed)
    rnd = {int(n): evaluate(enc, p, random_strings(n_random, n, generator=g), task)["acc"] for n in random_ns}
    return {"exhaustive_min_acc": min(exh), "exhaustive_strings": int(sum(2 ** n for n in range(1, n_exhaustive + 1))),
            "random_acc": rnd, "all_correct": min(exh) == 1.0 and all(a == 1.0 for a in rnd.values())}


def ce_curve(name: str, kw: dict | None = None, *, lengths=FIG2_LENGTHS, n_strings: int = 1000, seed: int = 0) -> dict:
    """Mean cross-entropy (bits), accuracy and |logit| range of a construction at each length."""
    check_choice("construction", name, C.CONSTRUCTIONS)
    n_strings = check_positive_int("n_strings", n_strings)
    enc, p = C.build(name, **(kw or {}))
    g = torch.Generator().manual_seed(seed)
    rows = [{"n": int(n), **evaluate(enc, p, random_strings(n_strings, int(n), generator=g), task_of(name))}
            for n in lengths]
    return {"construction": name, "kw": dict(kw or {}), "n_strings": n_strings, "rows": rows}


def fig2(lengths=FIG2_LENGTHS, n_strings: int = 1000, seed: int = 0) -> list[dict]:
    """The six curves of Fig. 2: PARITY and FIRST, each without layer norm and with ε = 1e-5 and 0."""
    out = []
    for name in ("parity", "first"):
        for lab, kw in LN_VARIANTS:
            out.append({**ce_curve(name, kw, lengths=lengths, n_strings=n_strings, seed=seed), "label": lab})
    return out


def logit_range(name: str, kw: dict | None = None, *, lengths, n_strings: int = 1000, seed: int = 0) -> list[dict]:
    """min / max |logit|, accuracy and cross-entropy at each length, on random strings plus the four
    extreme strings 10…0, 01…1, 11…1 and 00…0 (where the later symbols push hardest against, or
    hardest with, the first one). Above n = 1000 fewer random strings are drawn (10⁶ symbols per length)."""
    enc, p = C.build(name, **(kw or {}))
    g = torch.Generator().manual_seed(seed)
    rows = []
    for n in lengths:
        n = check_positive_int("n", int(n))
        k = max(10, min(n_strings, 10 ** 6 // n))
        bits = random_strings(k, n, generator=g)
        extreme = torch.zeros(4, n, dtype=torch.long)
        extreme[0, 0] = 1
        extreme[1, 1:] = 1
        extreme[2] = 1
        rows.append({"n": n, "strings": k + 4, **evaluate(enc, p, torch.cat([bits, extreme]), task_of(name))})
    return rows


def sensitivity_sweep(values, *, n: int = 100, n_strings: int = 1000, seed: int = 0) -> dict:
    """Knowl 8: the ε = 0 layer-norm PARITY construction with the k/N value weight set to each of
    ``values`` (1 is the construction); accuracy and cross-entropy on the same random strings."""
    g = torch.Generator().manual_seed(seed)
    bits = random_strings(n_strings, n, generator=g)
    rows = []
    for v in values:
        enc, p = C.parity(layer_norm=True, eps=0.0, value_k=float(v))
        rows.append({"value": float(v), **evaluate(enc, p, bits, "parity")})
    return {"n": n, "n_strings": n_strings, "rows": rows}


def flawed_first_error(c: float, n) -> np.ndarray:
    """Exact error rate of the one-layer FIRST transformer with standard attention (§5.2).

    Its logit is (e^c (w₁ − ½) + S) / Z with S = k′ − (n − 1)/2, k′ ~ Binomial(n − 1, ½) the
    number of 1s after the first symbol. For w₁ = 1 it is wrong (≤ 0) iff k′ ≤ (n − 1 − e^c)/2;
    w₁ = 0 is the mirror image, so the error rate is that binomial tail, which tends to 1/2.
    """
    from scipy.stats import binom

    n = np.asarray(n)
    return binom.cdf(np.floor((n - 1 - math.exp(c)) / 2), n - 1, 0.5)


# --------------------------------------------------------------------------- training
def first_model(n_members_flags, *, eps: float = MODEL["eps"]) -> Encoder:
    """The FIRST learner (Knowl 6): 2 layers, 1 head, d 16, FFN 64, post-norm ε 1e-5, fixed 1[i = 1]."""
    return Encoder(EncoderConfig(d_model=MODEL["d_model"], n_layers=MODEL["n_layers"], n_heads=1,
                                 d_ffn=MODEL["d_ffn"], layer_norm=True, eps=eps,
                                 log_scaled=tuple(bool(f) for f in n_members_flags), positional="first"))


def parity_model(members: int) -> Encoder:
    """The PARITY learner (Knowl 8): 2 layers, 2 heads, d 16, FFN 64, ε 1e-5, fixed i/N and cos(π i)."""
    return Encoder(EncoderConfig(d_model=MODEL["d_model"], n_layers=MODEL["n_layers"], n_heads=2,
                                 d_ffn=MODEL["d_ffn"], layer_norm=True, eps=MODEL["eps"],
                                 log_scaled=tuple([False] * members), positional="parity"))


def _ce_metric(out, y):
    """(accuracy [E], mean cross-entropy in bits [E]) for the engine's validation."""
    return accuracy(out, y).to(torch.float64), cross_entropy_bits(out, y).mean(-1).to(torch.float64)


def _stack_grouped(parts: list[Grouped], inv: torch.Tensor) -> Grouped:
    return Grouped(*(torch.cat([getattr(g, f) for g in parts])[inv] for f in Grouped._fields))


def train_first(*, lengths=TRAIN_LENGTHS, runs: int = 20, epochs: int = 100, steps_per_epoch: int = 100,
                test_n: int = 1000, test_strings: int = 100, eval_every_epochs: int = 5, seed: int = 0,
                device="cpu", progress: bool = False) -> dict:
    """Train standard and log-scaled encoders on FIRST (Knowl 6), every (length, scaling, run) one member.

    One string per update (batch size 1), ``steps_per_epoch`` updates per epoch, Adam 3e-4, float32.
    Member (length L, scaling s, run r) is initialised from seed ``seed + r`` and reads its own data
    stream, shared by the standard and scaled member of the same run and length (paired design).
    Every ``eval_every_epochs`` epochs all members are tested on a fixed bank of ``test_strings``
    strings of length ``test_n`` per member; at the end on fresh ones (the paper's last-epoch test).
    """
    from lengthgen.engine.train import OptimConfig, Validation, train_ensemble

    runs = check_positive_int("runs", runs)
    epochs = check_positive_int("epochs", epochs)
    steps_per_epoch = check_positive_int("steps_per_epoch", steps_per_epoch)
    lengths = [check_positive_int("training length", n, minimum=2) for n in lengths]
    members = [(n, s, r) for n in lengths for s in (False, True) for r in range(runs)]
    E = len(members)
    enc = first_model([m[1] for m in members])
    dev = get_device(device) if isinstance(device, str) else device
    params = enc.init([seed + m[2] for m in members], dtype=torch.float32, device=dev)
    data_seeds = [10_000 + 1000 * lengths.index(m[0]) + seed + m[2] for m in members]
    by_len = {n: [i for i, m in enumerate(members) if m[0] == n] for n in lengths}
    order = torch.tensor([i for n in lengths for i in by_len[n]])
    inv = torch.empty_like(order)
    inv[order] = torch.arange(E)

    def sample(step, gens, members=None):
        if members is not None and len(members) != E:
            raise RuntimeError("train_first does not use early stopping")
        parts = [enc.group(torch.stack([random_strings(1, n, generator=gens[i]) for i in by_len[n]])) for n in lengths]
        x = _stack_grouped(parts, inv)
        return x, x.tokens[..., 1]

    tg = torch.Generator().manual_seed(99_000 + seed)
    bank_bits = torch.stack([random_strings(test_strings, test_n, generator=tg) for _ in range(E)])
    bank = (enc.group(bank_bits), bank_bits[..., 0])
    steps = epochs * steps_per_epoch
    val = Validation(every=eval_every_epochs * steps_per_epoch, bank=bank, patience=None, metric=_ce_metric,
                     per_member=True)
    t0 = time.perf_counter()
    res = train_ensemble(enc, params, sample=sample, optim=OptimConfig("adam", lr=MODEL["lr"]), steps=steps,
                         data_seeds=data_seeds, validation=val, progress=progress, desc="ch1 FIRST")
    # the paper's numbers: last epoch's training loss and a fresh test set for the final parameters
    fg = torch.Generator().manual_seed(199_000 + seed)
    final_bits = torch.stack([random_strings(test_strings, test_n, generator=fg) for _ in range(E)])
    final_p = {k: v.to(dev) for k, v in res.final_params.items()}
    with torch.no_grad():
        out = enc(final_p, enc.group(final_bits.to(dev))).cpu().to(torch.float64)
    y = final_bits[..., 0]
    test_acc = accuracy(out, y)
    test_ce = cross_entropy_bits(out, y).mean(-1)
    train_ce = (res.history["loss"][-steps_per_epoch:].mean(0) / math.log(2)).tolist()
    wall = time.perf_counter() - t0
    return {
        "protocol": {"lengths": lengths, "runs": runs, "epochs": epochs, "steps_per_epoch": steps_per_epoch,
                     "batch_size": 1, "test_n": test_n, "test_strings": test_strings, "seed": seed, **MODEL,
                     "n_heads": 1, "positional": "1[i = 1] (fixed)", "dtype": "float32"},
        "members": [{"train_n": m[0], "log_scaled": m[1], "run": m[2]} for m in members],
        "test_acc": test_acc.tolist(), "test_ce_bits": test_ce.tolist(), "train_ce_bits_last_epoch": train_ce,
        "curve": {"epoch": (res.history["val_step"] // steps_per_epoch).tolist(),
                  "acc": res.history["val_acc"].tolist(), "ce_bits": res.history["val_loss"].tolist()},
        "wall_time_s": wall, "seeds": sorted({seed + m[2] for m in members}),
    }


def train_parity(*, runs: int = 20, epochs: int = 100, steps_per_epoch: int = 100, n: int = 100,
                 test_strings: int = 100, seed: int = 0, device="cpu", progress: bool = False) -> dict:
    """Train the standard setup on PARITY (Knowl 8): training and test strings of length ``n``."""
    from lengthgen.engine.train import OptimConfig, train_ensemble

    runs = check_positive_int("runs", runs)
    n = check_positive_int("n", n)
    enc = parity_model(runs)
    dev = get_device(device) if isinstance(device, str) else device
    params = enc.init([seed + r for r in range(runs)], dtype=torch.float32, device=dev)

    def sample(step, gens):
        x = torch.stack([random_strings(1, n, generator=g) for g in gens])
        return x, x.sum(-1) % 2

    t0 = time.perf_counter()
    res = train_ensemble(enc, params, sample=sample, optim=OptimConfig("adam", lr=MODEL["lr"]),
                         steps=epochs * steps_per_epoch, data_seeds=[20_000 + seed + r for r in range(runs)],
                         progress=progress, desc="ch1 PARITY")
    tg = torch.Generator().manual_seed(299_000 + seed)
    bits = torch.stack([random_strings(test_strings, n, generator=tg) for _ in range(runs)])
    final_p = {k: v.to(dev) for k, v in res.final_params.items()}
    with torch.no_grad():
        out = enc(final_p, bits.to(dev)).cpu().to(torch.float64)
    y = bits.sum(-1) % 2
    last = res.history["loss"][-steps_per_epoch:]
    return {
        "protocol": {"runs": runs, "epochs": epochs, "steps_per_epoch": steps_per_epoch, "batch_size": 1, "n": n,
                     "test_strings": test_strings, "seed": seed, **MODEL, "n_heads": 2,
                     "positional": "i/N, cos(pi i) (fixed)", "dtype": "float32"},
        "test_acc": accuracy(out, y).tolist(), "test_ce_bits": cross_entropy_bits(out, y).mean(-1).tolist(),
        "train_ce_bits_last_epoch": (last.mean(0) / math.log(2)).tolist(),
        "wall_time_s": time.perf_counter() - t0, "seeds": [seed + r for r in range(runs)],
    }


def summarize(values, *, seed: int = 0) -> dict:
    """Mean with its 95% seed-bootstrap interval (lengthgen.stats.bootstrap_ci)."""
    from lengthgen.stats import bootstrap_ci

    est, lo, hi = bootstrap_ci(np.asarray(values, dtype=float), seed=seed)
    return {"mean": est, "lo": lo, "hi": hi, "n": len(values)}


def first_table(result: dict) -> list[dict]:
    """Per (training length, scaling): mean test accuracy and cross-entropy with 95% bootstrap CIs."""
    rows = []
    mem = result["members"]
    for n in result["protocol"]["lengths"]:
        for s in (False, True):
            idx = [i for i, m in enumerate(mem) if m["train_n"] == n and m["log_scaled"] == s]
            acc = [result["test_acc"][i] for i in idx]
            ce = [result["test_ce_bits"][i] for i in idx]
            a, c = summarize(acc), summarize(ce)
            rows.append({"train_n": n, "attention": "log-scaled" if s else "standard", "runs": len(idx),
                         "test_acc": a["mean"], "acc_lo": a["lo"], "acc_hi": a["hi"],
                         "perfect_runs": int(sum(v == 1.0 for v in acc)),
                         "test_ce_bits": c["mean"], "ce_lo": c["lo"], "ce_hi": c["hi"]})
    return rows


def first_verdicts(result: dict) -> dict:
    """The quantities Claim 4 is judged on, per attention type: mean test accuracy at each training
    length, the largest of them, the number of perfect runs, and the largest mean test cross-entropy."""
    rows = first_table(result)
    out = {}
    for att in ("standard", "log-scaled"):
        mine = [r for r in rows if r["attention"] == att]
        out[att] = {"acc_by_length": {r["train_n"]: r["test_acc"] for r in mine},
                    "min_acc": min(r["test_acc"] for r in mine), "max_acc": max(r["test_acc"] for r in mine),
                    "perfect_runs": sum(r["perfect_runs"] for r in mine), "runs": sum(r["runs"] for r in mine),
                    "max_ce_bits": max(r["test_ce_bits"] for r in mine)}
    return out


def failure_breakdown(result: dict) -> list[dict]:
    """Per (training length, attention): runs below 100% test accuracy, and how many of those never
    fitted their own training strings (last-epoch training cross-entropy above 0.5 bits)."""
    out = []
    mem = result["members"]
    for n in result["protocol"]["lengths"]:
        for s in (False, True):
            idx = [i for i, m in enumerate(mem) if m["train_n"] == n and m["log_scaled"] == s]
            failed = [i for i in idx if result["test_acc"][i] < 1.0]
            unfit = [i for i in failed if result["train_ce_bits_last_epoch"][i] > 0.5]
            out.append({"train_n": n, "attention": "log-scaled" if s else "standard", "runs": len(idx),
                        "below_100%": len(failed), "of_which_unfit_on_training": len(unfit),
                        "near_chance (≤ 0.6)": sum(result["test_acc"][i] <= 0.6 for i in idx)})
    return out


def oscillations(values, acc, *, high: float = 0.8, low: float = 0.5) -> int:
    """Number of times the accuracy curve, read from left to right, climbs back above ``high``
    after having dropped below ``low`` (the recoveries of Knowl 8's oscillation)."""
    count, dropped = 0, False
    for a in acc:
        if a < low:
            dropped = True
        elif a > high and dropped:
            count, dropped = count + 1, False
    return count


# --------------------------------------------------------------------------- command line entry
def reproduce(scale: str, device: str, out: Path) -> list[Path]:
    """Run the chapter's sweeps at ``scale`` and store each under ``out`` (resumable per cell)."""
    from tqdm.auto import tqdm

    check_choice("scale", scale, tuple(PROTOCOLS))
    proto = PROTOCOLS[scale]
    store = ResultStore(out)
    cells = ["fig2", "sensitivity", "parity_training", "first_training"]
    paths = []
    for key in tqdm(cells, desc=f"ch1 {scale}"):
        if store.has(key) and load_result(store.path(key))["provenance"].get("scale") == scale:
            paths.append(store.path(key))                 # finished cell of this scale: resume past it
            continue
        t0 = time.perf_counter()
        if key == "fig2":
            data, seeds = fig2(lengths=FIG2_LENGTHS, n_strings=proto["fig2_strings"]), [0]
        elif key == "sensitivity":
            vals = np.linspace(0.9, 1.1, proto["sens_points"])
            data, seeds = sensitivity_sweep(vals, n=100, n_strings=proto["sens_strings"]), [0]
        elif key == "parity_training":
            data = train_parity(runs=proto["parity_runs"], epochs=proto["parity_epochs"],
                                steps_per_epoch=proto["steps_per_epoch"], n=proto["parity_n"], device=device,
                                progress=True)
            seeds = data["seeds"]
        else:
            data = train_first(lengths=TRAIN_LENGTHS, runs=proto["runs"], epochs=proto["epochs"],
                               steps_per_epoch=proto["steps_per_epoch"],
                               test_n=proto["test_n"], test_strings=proto["test_strings"],
                               eval_every_epochs=proto["eval_every_epochs"], device=device, progress=True)
            seeds = data["seeds"]
        prov = provenance(scale=scale, device=device, seeds=seeds, wall_time_s=time.perf_counter() - t0)
        paths.append(store.put(key, data, prov))
    return paths
