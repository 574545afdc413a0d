"""Chapter 1 (Chiang & Cholak 2022): exact constructions, cross-entropy vs length, training on FIRST/PARITY.

Scale-independent pieces (run live by the notebook at full size):

* :func:`exactness`         accuracy of every construction, exhaustive for n ≤ 16 and on random strings
* :func:`ce_curve`          mean cross-entropy (bits) and accuracy against n (the paper's Fig. 2)
* :func:`logit_range`       min / max |logit| of a construction at each n (the 1/4 … 1/2 band of §5.3)
* :func:`parity_logit_closed_form` the PARITY logit's two magnitudes (k odd, k even) in closed form
* :func:`favoured_logit`    the favoured attention logit of a construction's last layer, measured
* :func:`sensitivity_sweep` the PARITY construction with the k/N value weight moved off 1 (§5.1)
* :func:`flawed_first_error` exact error rate of the one-layer FIRST transformer with standard attention

The chapter's reproduction (``python -m lengthgen reproduce ch1``) is the list of cells of the runs
facility returned by :func:`cells`, one per stored unit (the notebook's section in brackets):

* ``fig2``            :func:`fig2`, the six curves of Fig. 2 ("Confidence: cross-entropy against length")
* ``sensitivity``     :func:`sensitivity`, the value-weight sweep ("PARITY is not learned …")
* ``parity_training`` :func:`train_parity`, the standard setup on PARITY (§5.1; same section)
* ``first_training``  :func:`train_first`, standard and log-scaled encoders on FIRST at training
  lengths 10 … 300, tested at n = 1000, all settings and runs as one ensemble of the engine
  (paper Fig. 4; "Learning FIRST")
* ``first_rates``     :func:`train_first_rates`, the same protocol with 100 runs per training length
  and three attention arms (standard, our log scaling, the authors' placement of the factor):
  success rates of the FIRST learners (issue 15; "How often does training find the solution?")

Their configuration comes from :mod:`lengthgen.chapters.ch1.paper`; stored full-scale cells live in
``results/ch1/cells/`` and are read back with :func:`lengthgen.engine.runs.load_stored` and the
schemas of :data:`SCHEMAS`.

FIRST strings are fed to the encoder as groups of identical positions (:meth:`Encoder.group`),
which is exact and makes a string of length 1000 cost as much as one of length 3.
"""

from __future__ import annotations

import inspect
import math
import time
from functools import lru_cache
from typing import Mapping

import numpy as np
import torch

from lengthgen.chapters.ch1 import constructions as C
from lengthgen.chapters.ch1 import paper
from lengthgen.chapters.ch1.encoder import (
    Encoder,
    EncoderConfig,
    Grouped,
    accuracy,
    cross_entropy_bits,
)
from lengthgen.config import (
    ConfigError,
    check_choice,
    check_finite,
    check_positive_int,
    get_device,
)
from lengthgen.engine.runs import Cell
from lengthgen.engine.train import OptimConfig, Validation, train_ensemble
from lengthgen.nn.tasks import all_strings, label, random_strings
from lengthgen.store import Schema


@lru_cache(maxsize=None)
def _all_strings(n: int) -> torch.Tensor:
    """Every string of length n (cached: the exhaustive checks reuse them for every construction)."""
    return all_strings(n)


def task_of(construction: str) -> str:
    """The task a construction solves: ``"parity"`` for PARITY, ``"first"`` for both FIRST constructions."""
    return (
        "parity"
        if check_choice("construction", construction, C.CONSTRUCTIONS) == "parity"
        else "first"
    )


def _inputs(enc: Encoder, bits: torch.Tensor):
    """Grouped input where exact (positional 'first'), the strings themselves otherwise."""
    return enc.group(bits) if enc.config.positional != "parity" else bits


@torch.no_grad()
def evaluate(enc: Encoder, params: dict, bits: torch.Tensor, task: str) -> dict:
    """Accuracy, mean cross-entropy (bits) and min / max |logit| of member 0 on ``bits``."""
    logits = enc(params, _inputs(enc, bits))[0]
    y = label(task, bits)
    mag = logits.abs()
    return {
        "acc": float(accuracy(logits, y)),
        "ce_bits": float(cross_entropy_bits(logits, y).mean()),
        "min_abs_logit": float(mag.min()),
        "max_abs_logit": float(mag.max()),
    }


def exactness(
    name: str,
    kw: dict | None = None,
    *,
    n_exhaustive: int = paper.EXACT_N_EXHAUSTIVE,
    random_ns=paper.EXACT_RANDOM_NS,
    n_random: int = paper.EXACT_RANDOM_STRINGS,
    seed: int = paper.SEED,
) -> dict:
    """Accuracy of construction ``name`` on every string with n ≤ ``n_exhaustive`` and on
    ``n_random`` random strings at each n in ``random_ns`` (the check of §3.4)."""
    check_choice("construction", name, C.CONSTRUCTIONS)
    n_exhaustive = check_positive_int("n_exhaustive", n_exhaustive)
    enc, p = C.build(name, **(kw or {}))
    task = task_of(name)
    exh = [
        evaluate(enc, p, _all_strings(n), task)["acc"]
        for n in range(1, n_exhaustive + 1)
    ]
    g = torch.Generator().manual_seed(seed)
    rnd = {
        int(n): evaluate(enc, p, random_strings(n_random, n, generator=g), task)["acc"]
        for n in random_ns
    }
    return {
        "exhaustive_min_acc": min(exh),
        "exhaustive_strings": int(sum(2**n for n in range(1, n_exhaustive + 1))),
        "random_acc": rnd,
        "all_correct": min(exh) == 1.0 and all(a == 1.0 for a in rnd.values()),
    }


def ce_curve(
    name: str,
    kw: dict | None = None,
    *,
    lengths=paper.FIG2_LENGTHS,
    n_strings: int = 1000,
    seed: int = paper.SEED,
) -> dict:
    """Mean cross-entropy (bits), accuracy and |logit| range of a construction at each length, on
    ``n_strings`` random strings per length (chapter section "Confidence: cross-entropy against length")."""
    check_choice("construction", name, C.CONSTRUCTIONS)
    n_strings = check_positive_int("n_strings", n_strings)
    enc, p = C.build(name, **(kw or {}))
    g = torch.Generator().manual_seed(seed)
    rows = [
        {
            "n": int(n),
            **evaluate(
                enc, p, random_strings(n_strings, int(n), generator=g), task_of(name)
            ),
        }
        for n in lengths
    ]
    return {
        "construction": name,
        "kw": dict(kw or {}),
        "n_strings": n_strings,
        "rows": rows,
    }


def fig2(
    lengths=paper.FIG2_LENGTHS, n_strings: int = 1000, seed: int = paper.SEED
) -> list[dict]:
    """The six curves of Fig. 2 (cell ``fig2``): PARITY and FIRST, each without layer norm and with
    ε = 1e-5 and 0 (:data:`paper.LN_VARIANTS`), at each of ``lengths``; a list of :func:`ce_curve`
    results with their ``label`` (section "Confidence: cross-entropy against length")."""
    out = []
    for name in ("parity", "first"):
        for lab, kw in paper.LN_VARIANTS:
            out.append(
                {
                    **ce_curve(
                        name, kw, lengths=lengths, n_strings=n_strings, seed=seed
                    ),
                    "label": lab,
                }
            )
    return out


def fig2_sqrt_d(
    lengths=paper.FIG2_LENGTHS, n_strings: int = 1000, seed: int = paper.SEED
) -> list[dict]:
    """The six curves of :func:`fig2` in the authors' configuration (``sqrt_d=True``: the query
    weight is c, each head divides by √(width / heads), PARITY padded to width 10 over its two
    heads; see :mod:`.constructions`), computed live by the chapter."""
    out = []
    for name in ("parity", "first"):
        for lab, kw in paper.LN_VARIANTS:
            out.append(
                {
                    **ce_curve(
                        name,
                        {**kw, "sqrt_d": True},
                        lengths=lengths,
                        n_strings=n_strings,
                        seed=seed,
                    ),
                    "label": lab,
                }
            )
    return out


def parity_logit_closed_form(n: int, a: float = 1.0) -> dict:
    """The two magnitudes of the PARITY construction's logit without layer norm at length ``n``
    (eq. eq-parity-logit of the chapter, unit output weight), for an odd and an even count k of 1s:
    ``{"odd": |s|, "even": |s|}``. ``a`` > 0 is the favoured attention logit of layer 2 (1 in our
    convention, 1/√5 in the authors' configuration). With E even and O odd positions among
    0 … n and Z_odd = O e^a + E e^-a, Z_even = O e^-a + E e^a,
    |s| = (e^a / Z_odd − e^-a / Z_even) / N for odd k and (e^a / Z_even − e^-a / Z_odd) / N for even k."""
    n = check_positive_int("n", n)
    a = check_finite("a", a)
    if a <= 0:
        raise ConfigError(f"a must be > 0, got {a!r}")
    N = n + 1
    even, odd = n // 2 + 1, (n + 1) // 2
    up, down = math.exp(a), math.exp(-a)
    z_odd, z_even = odd * up + even * down, odd * down + even * up
    return {
        "odd": (up / z_odd - down / z_even) / N,
        "even": (up / z_even - down / z_odd) / N,
    }


def favoured_logit(name: str, kw: dict | None = None, *, n: int = 4) -> float:
    """The favoured attention logit of a construction's last layer, read off the CLS attention
    weights w_i of its first head on the all-zero string of length ``n`` ≥ 2: log(w₁ / w₂) for
    FIRST (key 1[i = 1]: position 1 against position 2), log(w₁ / w₂) / 2 for PARITY (keys +1 at
    odd and −1 at even positions). Without layer norm this is the query–key logit of one unit of
    key, c / √(width / heads) in the authors' configuration (``sqrt_d``)."""
    check_choice("construction", name, ("parity", "first"))
    n = check_positive_int("n", n, minimum=2)
    kw = dict(kw or {})
    if kw.get("layer_norm"):
        raise ValueError(
            "favoured_logit reads a construction without layer norm (layer norm rescales the query)"
        )
    enc, p = C.build(name, **kw)
    w = enc.trace(p, torch.zeros(1, n, dtype=torch.long))["attention"][-1][0, 0, 0]
    ratio = math.log(float(w[1]) / float(w[2]))
    return ratio / 2 if name == "parity" else ratio


def logit_range(
    name: str, kw: dict | None = None, *, lengths, n_strings: int = 1000, seed: int = 0
) -> list[dict]:
    """min / max |logit|, accuracy and cross-entropy at each length, on random strings plus the four
    extreme strings 10…0, 01…1, 11…1 and 00…0 (where the later symbols push hardest against, or
    hardest with, the first one). Above n = 1000 fewer random strings are drawn (10⁶ symbols per length)."""
    enc, p = C.build(name, **(kw or {}))
    g = torch.Generator().manual_seed(seed)
    rows = []
    for n in lengths:
        n = check_positive_int("n", int(n))
        k = max(10, min(n_strings, 10**6 // n))
        bits = random_strings(k, n, generator=g)
        extreme = torch.zeros(4, n, dtype=torch.long)
        extreme[0, 0] = 1
        extreme[1, 1:] = 1
        extreme[2] = 1
        rows.append(
            {
                "n": n,
                "strings": k + 4,
                **evaluate(enc, p, torch.cat([bits, extreme]), task_of(name)),
            }
        )
    return rows


def sensitivity_sweep(
    values, *, n: int = paper.SENS_N, n_strings: int = 1000, seed: int = paper.SEED
) -> dict:
    """§5.1: the ε = 0 layer-norm PARITY construction with the k/N value weight set to each of
    ``values`` (1 is the construction); accuracy and cross-entropy on the same ``n_strings`` random
    strings of length ``n`` (section "PARITY is not learned, and its exact solution is a needle")."""
    n = check_positive_int("n", n)
    n_strings = check_positive_int("n_strings", n_strings)
    values = [check_finite("value weight", v) for v in values]
    if not values:
        raise ConfigError("sensitivity_sweep needs at least one value weight")
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
def _check_model(model: Mapping) -> dict:
    """``model`` as a dict with exactly the keys of :data:`paper.MODEL`, each value valid."""
    if not isinstance(model, Mapping) or set(model) != set(paper.MODEL):
        raise ConfigError(
            f"model must be a dict with the keys {sorted(paper.MODEL)}, got {model!r}"
        )
    out = {k: check_positive_int(k, model[k]) for k in ("d_model", "d_ffn", "n_layers")}
    out["lr"] = check_finite("lr", model["lr"], nonnegative=True)
    out["eps"] = check_finite("eps", model["eps"], nonnegative=True)
    return {k: out[k] for k in paper.MODEL}


def _check_offsets(offsets: Mapping, expected: Mapping) -> dict:
    """``offsets`` as a dict with exactly the keys of ``expected`` (a seed-offset table of :mod:`.paper`)."""
    if not isinstance(offsets, Mapping) or set(offsets) != set(expected):
        raise ConfigError(
            f"seed_offsets must be a dict with the keys {sorted(expected)}, got {offsets!r}"
        )
    return {
        k: check_positive_int(f"seed offset {k!r}", offsets[k], minimum=0)
        for k in expected
    }


def first_model(
    log_scaled_flags, *, model: Mapping = paper.MODEL, placements=None
) -> Encoder:
    """The FIRST learner (§5.1, paper Fig. 4): 2 layers, 1 head, d 16, FFN 64, post-norm ε 1e-5, fixed 1[i = 1];
    one member per entry of ``log_scaled_flags`` (True: log-length scaled attention), the factor placed
    on the logit or, per member in ``placements``, on the query input (``EncoderConfig.log_placement``)."""
    model = _check_model(model)
    flags = tuple(bool(f) for f in log_scaled_flags)
    place = "logit" if placements is None else tuple(placements)
    return Encoder(
        EncoderConfig(
            d_model=model["d_model"],
            n_layers=model["n_layers"],
            n_heads=paper.FIRST_HEADS,
            d_ffn=model["d_ffn"],
            layer_norm=True,
            eps=model["eps"],
            log_scaled=flags,
            positional="first",
            log_placement=place,
        )
    )


def parity_model(members: int, *, model: Mapping = paper.MODEL) -> Encoder:
    """The PARITY learner (§5.1): 2 layers, 2 heads, d 16, FFN 64, ε 1e-5, fixed i/N and cos(π i)."""
    model = _check_model(model)
    members = check_positive_int("members", members)
    return Encoder(
        EncoderConfig(
            d_model=model["d_model"],
            n_layers=model["n_layers"],
            n_heads=paper.PARITY_HEADS,
            d_ffn=model["d_ffn"],
            layer_norm=True,
            eps=model["eps"],
            log_scaled=tuple([False] * members),
            positional="parity",
        )
    )


def _ce_metric(out, y):
    """(accuracy [E], mean cross-entropy in bits [E]) for the engine's validation."""
    return accuracy(out, y).to(torch.float64), cross_entropy_bits(out, y).mean(-1).to(
        torch.float64
    )


def _stack_grouped(parts: list[Grouped], inv: torch.Tensor) -> Grouped:
    return Grouped(
        *(torch.cat([getattr(g, f) for g in parts])[inv] for f in Grouped._fields)
    )


def _grouped_bank(
    enc: Encoder, gen: torch.Generator, members: int, strings: int, n: int
) -> Grouped:
    """``strings`` random strings of length ``n`` for each of ``members`` members, drawn from ``gen`` one
    member after the other and grouped member by member (the same draws and groups as grouping the whole
    [members, strings, n] tensor at once, without holding it: 1,200 members × 100 × 1000 symbols)."""
    parts = [
        enc.group(random_strings(strings, n, generator=gen)) for _ in range(members)
    ]
    return Grouped(
        *(torch.stack([getattr(g, f) for g in parts]) for f in Grouped._fields)
    )


def _train_first_arms(
    *,
    lengths,
    arms,
    runs,
    epochs,
    steps_per_epoch,
    test_n,
    test_strings,
    eval_every_epochs,
    seed,
    off,
    model,
    device,
    progress,
    fit_strings: int | None = None,
) -> dict:
    """The FIRST training of :func:`train_first` and :func:`train_first_rates` with the attention
    arms ``arms`` (names of :data:`paper.FIRST_ARMS`): one member per (training length, arm, run), in
    that order; returns the members as (length, arm, run) plus the raw per-member results. With
    ``fit_strings``, the final parameters are also tested on that many fresh strings of the member's
    own training length (generator ``off["fit"] + seed``): the fit on the training distribution."""
    runs = check_positive_int("runs", runs)
    epochs = check_positive_int("epochs", epochs)
    steps_per_epoch = check_positive_int("steps_per_epoch", steps_per_epoch)
    test_n = check_positive_int("test_n", test_n)
    test_strings = check_positive_int("test_strings", test_strings)
    eval_every_epochs = check_positive_int("eval_every_epochs", eval_every_epochs)
    seed = check_positive_int("seed", seed, minimum=0)
    lengths = [check_positive_int("training length", n, minimum=2) for n in lengths]
    if not lengths or len(set(lengths)) != len(lengths):
        raise ConfigError(
            f"training lengths must be distinct and at least one, got {lengths}"
        )
    arms = [check_choice("arm", a, tuple(paper.FIRST_ARMS)) for a in arms]
    if not arms or len(set(arms)) != len(arms):
        raise ConfigError(f"arms must be distinct and at least one, got {arms}")
    model = _check_model(model)
    dev = get_device(device)
    members = [(n, a, r) for n in lengths for a in arms for r in range(runs)]
    E = len(members)
    enc = first_model(
        [paper.FIRST_ARMS[m[1]][0] for m in members],
        model=model,
        placements=[paper.FIRST_ARMS[m[1]][1] for m in members],
    )
    params = enc.init([seed + m[2] for m in members], dtype=torch.float32, device=dev)
    data_seeds = [
        off["data"] + off["data_per_length"] * lengths.index(m[0]) + seed + m[2]
        for m in members
    ]
    by_len = {n: [i for i, m in enumerate(members) if m[0] == n] for n in lengths}
    order = torch.tensor([i for n in lengths for i in by_len[n]])
    inv = torch.empty_like(order)
    inv[order] = torch.arange(E)

    def sample(step, gens, members=None):
        if members is not None and len(members) != E:
            raise RuntimeError("the FIRST training does not use early stopping")
        parts = [
            enc.group(
                torch.stack(
                    [random_strings(1, n, generator=gens[i]) for i in by_len[n]]
                )
            )
            for n in lengths
        ]
        x = _stack_grouped(parts, inv)
        return x, x.tokens[..., 1]

    bank_x = _grouped_bank(
        enc, torch.Generator().manual_seed(off["bank"] + seed), E, test_strings, test_n
    )
    bank = (bank_x, bank_x.tokens[..., 1])
    steps = epochs * steps_per_epoch
    val = Validation(
        every=eval_every_epochs * steps_per_epoch,
        bank=bank,
        patience=None,
        metric=_ce_metric,
        per_member=True,
    )
    t0 = time.perf_counter()
    res = train_ensemble(
        enc,
        params,
        sample=sample,
        optim=OptimConfig("adam", lr=model["lr"]),
        steps=steps,
        data_seeds=data_seeds,
        validation=val,
        progress=progress,
        device=device,
        desc="ch1 FIRST",
    )
    # the paper's numbers: last epoch's training loss and a fresh test set for the final parameters
    final_x = _grouped_bank(
        enc, torch.Generator().manual_seed(off["test"] + seed), E, test_strings, test_n
    )
    final_p = {k: v.to(dev) for k, v in res.final_params.items()}
    with torch.no_grad():
        out = (
            enc(final_p, Grouped(*(t.to(dev) for t in final_x))).cpu().to(torch.float64)
        )
    y = final_x.tokens[..., 1]
    extra = {}
    if fit_strings is not None:
        fit_strings = check_positive_int("fit_strings", fit_strings)
        fg = torch.Generator().manual_seed(off["fit"] + seed)
        fit_x = Grouped(
            *(
                torch.stack(
                    [
                        getattr(
                            enc.group(random_strings(fit_strings, m[0], generator=fg)),
                            f,
                        )
                        for m in members
                    ]
                )
                for f in Grouped._fields
            )
        )
        with torch.no_grad():
            fout = (
                enc(final_p, Grouped(*(t.to(dev) for t in fit_x)))
                .cpu()
                .to(torch.float64)
            )
        fy = fit_x.tokens[..., 1]
        extra = {
            "train_len_acc": accuracy(fout, fy).tolist(),
            "train_len_ce_bits": cross_entropy_bits(fout, fy).mean(-1).tolist(),
        }
    return {
        "members": members,
        "lengths": lengths,
        "model": model,
        "test_acc": accuracy(out, y).tolist(),
        "test_ce_bits": cross_entropy_bits(out, y).mean(-1).tolist(),
        "train_ce_bits_last_epoch": (
            res.history["loss"][-steps_per_epoch:].mean(0) / math.log(2)
        ).tolist(),
        "curve": {
            "epoch": (res.history["val_step"] // steps_per_epoch).tolist(),
            "acc": res.history["val_acc"].tolist(),
            "ce_bits": res.history["val_loss"].tolist(),
        },
        "wall_time_s": time.perf_counter() - t0,
        **extra,
    }


def _first_protocol(
    raw: dict, *, runs, epochs, steps_per_epoch, test_n, test_strings, seed
) -> dict:
    return {
        "lengths": raw["lengths"],
        "runs": runs,
        "epochs": epochs,
        "steps_per_epoch": steps_per_epoch,
        "batch_size": 1,
        "test_n": test_n,
        "test_strings": test_strings,
        "seed": seed,
        **raw["model"],
        "n_heads": paper.FIRST_HEADS,
        "positional": "1[i = 1] (fixed)",
        "dtype": "float32",
    }


def train_first(
    *,
    lengths=paper.TRAIN_LENGTHS,
    runs: int = 20,
    epochs: int = 100,
    steps_per_epoch: int = 100,
    test_n: int = paper.TEST_N,
    test_strings: int = 100,
    eval_every_epochs: int = 5,
    seed: int = paper.SEED,
    seed_offsets: Mapping = paper.FIRST_SEED_OFFSETS,
    model: Mapping = paper.MODEL,
    device: str = "cpu",
    progress: bool = False,
) -> dict:
    """Train standard and log-scaled encoders on FIRST (paper Fig. 4; cell ``first_training``),
    every (training length, scaling, run) one member of one ensemble, trained on ``device``.

    One string per update (batch size 1), ``steps_per_epoch`` updates per epoch, Adam (``model["lr"]``),
    float32. Member (length L, scaling s, run r) is initialised from seed ``seed + r`` and reads its
    own data stream (seeds from ``seed_offsets``, see :data:`paper.FIRST_SEED_OFFSETS`), shared by the
    standard and scaled member of the same run and length (paired design). Every
    ``eval_every_epochs`` epochs all members are tested on a fixed bank of ``test_strings`` strings
    of length ``test_n`` per member; at the end on fresh ones (the paper's last-epoch test).
    Section "Learning FIRST (paper Fig. 4)" of the chapter.
    """
    off = _check_offsets(seed_offsets, paper.FIRST_SEED_OFFSETS)
    raw = _train_first_arms(
        lengths=lengths,
        arms=paper.ATTENTION_ARMS,
        runs=runs,
        epochs=epochs,
        steps_per_epoch=steps_per_epoch,
        test_n=test_n,
        test_strings=test_strings,
        eval_every_epochs=eval_every_epochs,
        seed=seed,
        off=off,
        model=model,
        device=device,
        progress=progress,
    )
    members = raw["members"]
    return {
        "protocol": _first_protocol(
            raw,
            runs=runs,
            epochs=epochs,
            steps_per_epoch=steps_per_epoch,
            test_n=test_n,
            test_strings=test_strings,
            seed=seed,
        ),
        "members": [
            {"train_n": m[0], "log_scaled": paper.FIRST_ARMS[m[1]][0], "run": m[2]}
            for m in members
        ],
        "test_acc": raw["test_acc"],
        "test_ce_bits": raw["test_ce_bits"],
        "train_ce_bits_last_epoch": raw["train_ce_bits_last_epoch"],
        "curve": raw["curve"],
        "wall_time_s": raw["wall_time_s"],
        "seeds": sorted({seed + m[2] for m in members}),
    }


def train_first_rates(
    *,
    lengths=paper.TRAIN_LENGTHS,
    arms=tuple(paper.FIRST_ARMS),
    runs: int = 100,
    epochs: int = 100,
    steps_per_epoch: int = 100,
    test_n: int = paper.TEST_N,
    test_strings: int = 100,
    fit_strings: int = 100,
    eval_every_epochs: int = 5,
    seed: int = paper.SEED,
    seed_offsets: Mapping = paper.FIRST_RATE_SEED_OFFSETS,
    model: Mapping = paper.MODEL,
    device: str = "cpu",
    progress: bool = False,
) -> dict:
    """Cell ``first_rates``: the protocol of :func:`train_first` with many runs and three attention arms
    (:data:`paper.FIRST_ARMS`: standard, our log scaling of the whole logit, and the authors' placement
    of the factor on the query input), to measure each arm's rate of perfect generalisation (issue 15).

    Run r of every arm and training length starts from the weights of seed ``seed + r`` and reads the
    data stream of its length and run (the streams and initialisations of ``first_training`` for
    r < 20), so the arms are compared on the same seeds. Per run it records what ``first_training``
    records plus the fit on the training distribution: accuracy and cross-entropy of the final
    parameters on ``fit_strings`` fresh strings of the run's own training length.
    """
    off = _check_offsets(seed_offsets, paper.FIRST_RATE_SEED_OFFSETS)
    raw = _train_first_arms(
        lengths=lengths,
        arms=arms,
        runs=runs,
        epochs=epochs,
        steps_per_epoch=steps_per_epoch,
        test_n=test_n,
        test_strings=test_strings,
        eval_every_epochs=eval_every_epochs,
        seed=seed,
        off=off,
        model=model,
        device=device,
        progress=progress,
        fit_strings=fit_strings,
    )
    members = raw["members"]
    return {
        "protocol": {
            **_first_protocol(
                raw,
                runs=runs,
                epochs=epochs,
                steps_per_epoch=steps_per_epoch,
                test_n=test_n,
                test_strings=test_strings,
                seed=seed,
            ),
            "arms": list(dict.fromkeys(m[1] for m in members)),
            "fit_strings": fit_strings,
            "arm_definitions": {
                a: {
                    "log_scaled": paper.FIRST_ARMS[a][0],
                    "placement": paper.FIRST_ARMS[a][1],
                }
                for a in arms
            },
        },
        "members": [{"train_n": m[0], "arm": m[1], "run": m[2]} for m in members],
        "test_acc": raw["test_acc"],
        "test_ce_bits": raw["test_ce_bits"],
        "train_ce_bits_last_epoch": raw["train_ce_bits_last_epoch"],
        "train_len_acc": raw["train_len_acc"],
        "train_len_ce_bits": raw["train_len_ce_bits"],
        "curve": raw["curve"],
        "wall_time_s": raw["wall_time_s"],
        "seeds": sorted({seed + m[2] for m in members}),
    }


def train_parity(
    *,
    runs: int = 20,
    epochs: int = 100,
    steps_per_epoch: int = 100,
    n: int = 100,
    test_strings: int = 100,
    seed: int = paper.SEED,
    seed_offsets: Mapping = paper.PARITY_SEED_OFFSETS,
    model: Mapping = paper.MODEL,
    device: str = "cpu",
    progress: bool = False,
) -> dict:
    """Train the standard setup on PARITY (§5.1; cell ``parity_training``) on ``device``: ``runs``
    members initialised from seeds ``seed + r``, training and test strings of length ``n`` (data
    seeds from :data:`paper.PARITY_SEED_OFFSETS`). Section "PARITY is not learned …" of the chapter."""
    runs = check_positive_int("runs", runs)
    epochs = check_positive_int("epochs", epochs)
    steps_per_epoch = check_positive_int("steps_per_epoch", steps_per_epoch)
    n = check_positive_int("n", n)
    test_strings = check_positive_int("test_strings", test_strings)
    seed = check_positive_int("seed", seed, minimum=0)
    off = _check_offsets(seed_offsets, paper.PARITY_SEED_OFFSETS)
    model = _check_model(model)
    dev = get_device(device)
    enc = parity_model(runs, model=model)
    params = enc.init([seed + r for r in range(runs)], dtype=torch.float32, device=dev)

    def sample(step, gens):
        x = torch.stack([random_strings(1, n, generator=g) for g in gens])
        return x, x.sum(-1) % 2

    t0 = time.perf_counter()
    res = train_ensemble(
        enc,
        params,
        sample=sample,
        optim=OptimConfig("adam", lr=model["lr"]),
        steps=epochs * steps_per_epoch,
        data_seeds=[off["data"] + seed + r for r in range(runs)],
        progress=progress,
        device=device,
        desc="ch1 PARITY",
    )
    tg = torch.Generator().manual_seed(off["test"] + seed)
    bits = torch.stack(
        [random_strings(test_strings, n, generator=tg) for _ in range(runs)]
    )
    final_p = {k: v.to(dev) for k, v in res.final_params.items()}
    with torch.no_grad():
        out = enc(final_p, bits.to(dev)).cpu().to(torch.float64)
    y = bits.sum(-1) % 2
    last = res.history["loss"][-steps_per_epoch:]
    return {
        "protocol": {
            "runs": runs,
            "epochs": epochs,
            "steps_per_epoch": steps_per_epoch,
            "batch_size": 1,
            "n": n,
            "test_strings": test_strings,
            "seed": seed,
            **model,
            "n_heads": paper.PARITY_HEADS,
            "positional": "i/N, cos(pi i) (fixed)",
            "dtype": "float32",
        },
        "test_acc": accuracy(out, y).tolist(),
        "test_ce_bits": cross_entropy_bits(out, y).mean(-1).tolist(),
        "train_ce_bits_last_epoch": (last.mean(0) / math.log(2)).tolist(),
        "wall_time_s": time.perf_counter() - t0,
        "seeds": [seed + r for r in range(runs)],
    }


# --------------------------------------------------------------------------- analyses of the training runs
def summarize(values, *, seed: int = 0) -> dict:
    """Mean with its 95% seed-bootstrap interval (lengthgen.stats.bootstrap_ci)."""
    from lengthgen.stats import bootstrap_ci

    est, lo, hi = bootstrap_ci(np.asarray(values, dtype=float), seed=seed)
    return {"mean": est, "lo": lo, "hi": hi, "n": len(values)}


def _arm_members(result: dict, n: int, log_scaled: bool) -> list[int]:
    return [
        i
        for i, m in enumerate(result["members"])
        if m["train_n"] == n and m["log_scaled"] == log_scaled
    ]


def first_table(result: dict) -> list[dict]:
    """Per (training length, scaling) of a :func:`train_first` result: mean test accuracy and
    cross-entropy with 95% bootstrap CIs, and the number of perfect runs (paper Fig. 4)."""
    rows = []
    for n in result["protocol"]["lengths"]:
        for s, att in zip((False, True), paper.ATTENTION_ARMS):
            idx = _arm_members(result, n, s)
            acc = [result["test_acc"][i] for i in idx]
            ce = [result["test_ce_bits"][i] for i in idx]
            a, c = summarize(acc), summarize(ce)
            rows.append(
                {
                    "train_n": n,
                    "attention": att,
                    "runs": len(idx),
                    "test_acc": a["mean"],
                    "acc_lo": a["lo"],
                    "acc_hi": a["hi"],
                    "perfect_runs": int(sum(v == 1.0 for v in acc)),
                    "test_ce_bits": c["mean"],
                    "ce_lo": c["lo"],
                    "ce_hi": c["hi"],
                }
            )
    return rows


def first_verdicts(result: dict) -> dict:
    """The quantities Claim 4 is judged on, per attention type: mean test accuracy at each training
    length, the largest of them, the number of perfect runs, and the largest mean test cross-entropy."""
    rows = first_table(result)
    out = {}
    for att in paper.ATTENTION_ARMS:
        mine = [r for r in rows if r["attention"] == att]
        out[att] = {
            "acc_by_length": {r["train_n"]: r["test_acc"] for r in mine},
            "min_acc": min(r["test_acc"] for r in mine),
            "max_acc": max(r["test_acc"] for r in mine),
            "perfect_runs": sum(r["perfect_runs"] for r in mine),
            "runs": sum(r["runs"] for r in mine),
            "max_ce_bits": max(r["test_ce_bits"] for r in mine),
        }
    return out


def perfect_key(perfect_ce_bits: float) -> str:
    """The column of :func:`failure_breakdown` counting runs with 100% accuracy and low cross-entropy."""
    return f"perfect (100%, CE < {perfect_ce_bits:g} bits)"


def failure_breakdown(result: dict, *, perfect_ce_bits: float = 0.01) -> list[dict]:
    """Per (training length, attention): runs with 100% test accuracy, those of them whose mean test
    cross-entropy is also below ``perfect_ce_bits`` (the "perfect" runs of the chapter's claims, rule 3
    of :mod:`lengthgen.chapters.ch1.claims`), runs below 100%, how many of those never fitted their
    own training strings (last-epoch training cross-entropy above 0.5 bits), and runs near chance."""
    perfect_ce_bits = check_finite("perfect_ce_bits", perfect_ce_bits, nonnegative=True)
    out = []
    for n in result["protocol"]["lengths"]:
        for s, att in zip((False, True), paper.ATTENTION_ARMS):
            idx = _arm_members(result, n, s)
            perfect = [i for i in idx if result["test_acc"][i] == 1.0]
            failed = [i for i in idx if result["test_acc"][i] < 1.0]
            unfit = [i for i in failed if result["train_ce_bits_last_epoch"][i] > 0.5]
            out.append(
                {
                    "train_n": n,
                    "attention": att,
                    "runs": len(idx),
                    "perfect (100%)": len(perfect),
                    perfect_key(perfect_ce_bits): sum(
                        result["test_ce_bits"][i] < perfect_ce_bits for i in perfect
                    ),
                    "below_100%": len(failed),
                    "of_which_unfit_on_training": len(unfit),
                    "near_chance (≤ 0.6)": sum(
                        result["test_acc"][i] <= 0.6 for i in idx
                    ),
                }
            )
    return out


def rate_perfect(result: dict, i: int, *, perfect_ce_bits: float = 0.01) -> bool:
    """Whether member ``i`` of a :func:`train_first_rates` result generalised perfectly: 100% test
    accuracy at the test length and mean test cross-entropy below ``perfect_ce_bits`` (the "perfect"
    run of :func:`failure_breakdown`, rule 3 of :mod:`lengthgen.chapters.ch1.claims`)."""
    return result["test_acc"][i] == 1.0 and result["test_ce_bits"][i] < perfect_ce_bits


def _rate_members(result: dict, n: int, arm: str) -> list[int]:
    """Indices of the members of arm ``arm`` at training length ``n``, in run order."""
    idx = [
        i
        for i, m in enumerate(result["members"])
        if m["train_n"] == n and m["arm"] == arm
    ]
    return sorted(idx, key=lambda i: result["members"][i]["run"])


def success_rates(
    result: dict,
    *,
    perfect_ce_bits: float = 0.01,
    level: float = 0.95,
    paper_runs: int = paper.FIG4_RUNS,
) -> list[dict]:
    """Per (training length, arm) of a :func:`train_first_rates` result: runs, perfect runs
    (:func:`rate_perfect`), the success rate with its exact (Clopper–Pearson) ``level`` interval, the
    probability p̂^paper_runs that ``paper_runs`` independent runs at our rate are all perfect, the mean
    test accuracy, runs near chance (test accuracy ≤ 0.6), and runs that did not fit their own training
    length (accuracy below 100% on fresh strings of the training length)."""
    from lengthgen.stats import clopper_pearson

    perfect_ce_bits = check_finite("perfect_ce_bits", perfect_ce_bits, nonnegative=True)
    rows = []
    for n in result["protocol"]["lengths"]:
        for arm in result["protocol"]["arms"]:
            idx = _rate_members(result, n, arm)
            k = sum(
                rate_perfect(result, i, perfect_ce_bits=perfect_ce_bits) for i in idx
            )
            lo, hi = clopper_pearson(k, len(idx), level=level)
            rate = k / len(idx)
            rows.append(
                {
                    "train_n": n,
                    "arm": arm,
                    "runs": len(idx),
                    "perfect": k,
                    "rate": rate,
                    "rate_lo": lo,
                    "rate_hi": hi,
                    f"p_all_{paper_runs}": rate**paper_runs,
                    "mean_test_acc": float(
                        np.mean([result["test_acc"][i] for i in idx])
                    ),
                    "near_chance": sum(result["test_acc"][i] <= 0.6 for i in idx),
                    "unfit": sum(result["train_len_acc"][i] < 1.0 for i in idx),
                }
            )
    return rows


def placement_comparison(
    result: dict,
    *,
    a: str = "log-scaled",
    b: str = "authors' placement",
    perfect_ce_bits: float = 0.01,
) -> list[dict]:
    """Per training length: arms ``a`` and ``b`` compared run by run (run r of both arms starts from
    the same weights and reads the same strings): counts of runs perfect in both, in one only, in
    neither, and the two-sided exact McNemar p-value (:func:`lengthgen.stats.mcnemar_exact`)."""
    from lengthgen.stats import mcnemar_exact

    rows = []
    for n in result["protocol"]["lengths"]:
        ia, ib = _rate_members(result, n, a), _rate_members(result, n, b)
        if [result["members"][i]["run"] for i in ia] != [
            result["members"][i]["run"] for i in ib
        ]:
            raise ValueError(
                f"arms {a!r} and {b!r} do not hold the same runs at training length {n}"
            )
        pa = [rate_perfect(result, i, perfect_ce_bits=perfect_ce_bits) for i in ia]
        pb = [rate_perfect(result, i, perfect_ce_bits=perfect_ce_bits) for i in ib]
        rows.append({"train_n": n, "runs": len(ia), **mcnemar_exact(pa, pb)})
    return rows


def oscillations(values, acc, *, high: float = 0.8, low: float = 0.5) -> int:
    """Number of times the accuracy curve, read from left to right, climbs back above ``high``
    after having dropped below ``low`` (the recoveries of the oscillation of §5.1)."""
    count, dropped = 0, False
    for a in acc:
        if a < low:
            dropped = True
        elif a > high and dropped:
            count, dropped = count + 1, False
    return count


# --------------------------------------------------------------------------- the reproduction plan
def sensitivity(
    *,
    lo: float = paper.SENS_RANGE[0],
    hi: float = paper.SENS_RANGE[1],
    points: int = 401,
    n: int = paper.SENS_N,
    n_strings: int = 100,
    seed: int = paper.SEED,
) -> dict:
    """Cell ``sensitivity``: :func:`sensitivity_sweep` at ``points`` value weights evenly spaced
    from ``lo`` to ``hi`` (``numpy.linspace``)."""
    lo, hi = check_finite("lo", lo), check_finite("hi", hi)
    if not lo < hi:
        raise ConfigError(f"the sweep needs lo < hi, got lo = {lo!r}, hi = {hi!r}")
    points = check_positive_int("points", points, minimum=2)
    return sensitivity_sweep(
        np.linspace(lo, hi, points), n=n, n_strings=n_strings, seed=seed
    )


def cells(scale: str) -> list[Cell]:
    """The chapter's reproduction plan at ``scale`` (``smoke`` or ``full``, :data:`paper.PROTOCOLS`):
    the cells ``fig2``, ``sensitivity``, ``parity_training``, ``first_training`` and ``first_rates``,
    in run order."""
    proto = paper.PROTOCOLS[check_choice("scale", scale, tuple(paper.PROTOCOLS))]
    seed = paper.SEED
    return [
        Cell(
            "fig2",
            fig2,
            {
                "lengths": list(paper.FIG2_LENGTHS),
                "n_strings": proto["fig2_strings"],
                "seed": seed,
            },
            seeds=[seed],
        ),
        Cell(
            "sensitivity",
            sensitivity,
            {
                "lo": paper.SENS_RANGE[0],
                "hi": paper.SENS_RANGE[1],
                "points": proto["sens_points"],
                "n": paper.SENS_N,
                "n_strings": proto["sens_strings"],
                "seed": seed,
            },
            seeds=[seed],
        ),
        Cell(
            "parity_training",
            train_parity,
            {
                "runs": proto["parity_runs"],
                "epochs": proto["parity_epochs"],
                "steps_per_epoch": proto["steps_per_epoch"],
                "n": proto["parity_n"],
                "test_strings": proto["test_strings"],
                "seed": seed,
                "seed_offsets": dict(paper.PARITY_SEED_OFFSETS),
                "model": dict(paper.MODEL),
            },
            seeds=[seed + r for r in range(proto["parity_runs"])],
        ),
        Cell(
            "first_training",
            train_first,
            {
                "lengths": list(paper.TRAIN_LENGTHS),
                "runs": proto["runs"],
                "epochs": proto["epochs"],
                "steps_per_epoch": proto["steps_per_epoch"],
                "test_n": proto["test_n"],
                "test_strings": proto["test_strings"],
                "eval_every_epochs": proto["eval_every_epochs"],
                "seed": seed,
                "seed_offsets": dict(paper.FIRST_SEED_OFFSETS),
                "model": dict(paper.MODEL),
            },
            seeds=[seed + r for r in range(proto["runs"])],
        ),
        Cell(
            "first_rates",
            train_first_rates,
            {
                "lengths": list(paper.TRAIN_LENGTHS),
                "arms": list(paper.FIRST_ARMS),
                "runs": proto["rate_runs"],
                "epochs": proto["epochs"],
                "steps_per_epoch": proto["steps_per_epoch"],
                "test_n": proto["test_n"],
                "test_strings": proto["test_strings"],
                "fit_strings": proto["test_strings"],
                "eval_every_epochs": proto["eval_every_epochs"],
                "seed": seed,
                "seed_offsets": dict(paper.FIRST_RATE_SEED_OFFSETS),
                "model": dict(paper.MODEL),
            },
            seeds=[seed + r for r in range(proto["rate_runs"])],
        ),
    ]


def run_live(name: str, scale: str, *, device: str = "cpu", progress: bool = False):
    """Compute cell ``name`` of :func:`cells` at ``scale`` here and now, without storing it (what the
    notebook shows live next to the stored full-scale run); ``device`` and ``progress`` go to the
    cell's function when it takes them."""
    plan = {c.name: c for c in cells(scale)}
    cell = plan[check_choice("cell", name, tuple(plan))]
    kw = dict(cell.kwargs)
    params = inspect.signature(cell.fn).parameters
    if "device" in params:
        kw["device"] = device
    if "progress" in params:
        kw["progress"] = progress
    return cell.fn(**kw)


# --------------------------------------------------------------------------- schemas of the stored cells
def _first_members(d) -> int:
    """Members a FIRST training result declares: runs × training lengths × attention settings."""
    return (
        d["protocol"]["runs"]
        * len(d["protocol"]["lengths"])
        * len(paper.ATTENTION_ARMS)
    )


def _rate_count(d) -> int:
    """Members a success-rate result declares: runs × training lengths × arms."""
    return (
        d["protocol"]["runs"]
        * len(d["protocol"]["lengths"])
        * len(d["protocol"]["arms"])
    )


def _parity_runs(d) -> int:
    return d["protocol"]["runs"]


def schemas(scale: str = "full") -> dict[str, Schema]:
    """What each stored cell of chapter 1 must hold, by cell name. Counts of the training cells come
    from the protocol stored with them; Fig. 2 has one row per :data:`paper.FIG2_LENGTHS` in each of
    its (at least) six curves; the sensitivity sweep has ``sens_points`` rows of ``scale``'s protocol."""
    proto = paper.PROTOCOLS[check_choice("scale", scale, tuple(paper.PROTOCOLS))]
    curves = 2 * len(paper.LN_VARIANTS)
    return {
        "fig2": Schema(
            "ch1 Fig. 2 curves",
            required=(
                "*.construction",
                "*.label",
                "*.n_strings",
                "*.rows.*.n",
                "*.rows.*.ce_bits",
                "*.rows.*.min_abs_logit",
                "*.rows.*.max_abs_logit",
                f"{curves - 1}.rows",
            ),
            probabilities=("*.rows.*.acc",),
            counts=(("*.rows", lambda d: len(paper.FIG2_LENGTHS)),),
        ),
        "sensitivity": Schema(
            "ch1 sensitivity sweep",
            required=("n", "n_strings", "rows.*.value", "rows.*.ce_bits"),
            probabilities=("rows.*.acc",),
            counts=(("rows", lambda d, k=proto["sens_points"]: k),),
        ),
        "parity_training": Schema(
            "ch1 PARITY training",
            required=(
                "protocol.runs",
                "protocol.n",
                "protocol.epochs",
                "protocol.steps_per_epoch",
                "protocol.seed",
                "test_ce_bits",
                "train_ce_bits_last_epoch",
                "seeds",
            ),
            probabilities=("test_acc.*",),
            counts=tuple(
                (f, _parity_runs)
                for f in (
                    "test_acc",
                    "test_ce_bits",
                    "train_ce_bits_last_epoch",
                    "seeds",
                )
            ),
        ),
        "first_training": Schema(
            "ch1 FIRST training",
            required=(
                "protocol.lengths",
                "protocol.runs",
                "protocol.epochs",
                "protocol.steps_per_epoch",
                "protocol.test_n",
                "protocol.seed",
                "members.*.train_n",
                "members.*.log_scaled",
                "members.*.run",
                "test_ce_bits",
                "train_ce_bits_last_epoch",
                "curve.epoch",
                "curve.ce_bits",
            ),
            probabilities=("test_acc.*", "curve.acc.*.*"),
            counts=tuple(
                (f, _first_members)
                for f in (
                    "members",
                    "test_acc",
                    "test_ce_bits",
                    "train_ce_bits_last_epoch",
                    "curve.acc.*",
                    "curve.ce_bits.*",
                )
            )
            + (("curve.acc", lambda d: len(d["curve"]["epoch"])),),
        ),
        "first_rates": Schema(
            "ch1 FIRST success rates",
            required=(
                "protocol.lengths",
                "protocol.arms",
                "protocol.runs",
                "protocol.epochs",
                "protocol.steps_per_epoch",
                "protocol.test_n",
                "protocol.fit_strings",
                "protocol.seed",
                "members.*.train_n",
                "members.*.arm",
                "members.*.run",
                "test_ce_bits",
                "train_ce_bits_last_epoch",
                "train_len_ce_bits",
                "curve.epoch",
                "curve.ce_bits",
                "seeds",
            ),
            probabilities=("test_acc.*", "train_len_acc.*", "curve.acc.*.*"),
            counts=tuple(
                (f, _rate_count)
                for f in (
                    "members",
                    "test_acc",
                    "test_ce_bits",
                    "train_ce_bits_last_epoch",
                    "train_len_acc",
                    "train_len_ce_bits",
                    "curve.acc.*",
                    "curve.ce_bits.*",
                )
            )
            + (("curve.acc", lambda d: len(d["curve"]["epoch"])),),
        ),
    }


#: The schemas of the stored full-scale cells (``results/ch1/cells/``), checked whenever they are loaded.
SCHEMAS = schemas("full")
