"""How chapter 1 trains (paper §5.1 and Fig. 4): the FIRST and PARITY learners on the engine's
:func:`lengthgen.engine.train.train_ensemble` (FIRST strings grouped, :meth:`Encoder.group`), and
the analyses of the runs that the chapter's claims and notebooks read."""

from __future__ import annotations

import math
import time
from functools import partial
from typing import Mapping

import numpy as np
import torch

from lengthgen.chapters.ch1 import paper
from lengthgen.chapters.ch1.encoder import Encoder, EncoderConfig, Grouped
from lengthgen.chapters.ch1.encoder import accuracy, cross_entropy_bits
from lengthgen.config import ConfigError, check_choice, check_finite, check_positive_int, get_device
from lengthgen.engine.train import OptimConfig, Validation, train_ensemble
from lengthgen.nn.tasks import random_strings


# --------------------------------------------------------------------------- the learners
def _check_keys(name: str, value, expected) -> None:
    if not isinstance(value, Mapping) or set(value) != set(expected):
        raise ConfigError(f"{name} must be a dict with the keys {sorted(expected)}, got {value!r}")


def check_model(model: Mapping) -> dict:
    """``model`` as a dict with exactly the keys of :data:`paper.MODEL`, each value valid."""
    _check_keys("model", model, paper.MODEL)
    out = {k: check_positive_int(k, model[k]) for k in ("d_model", "d_ffn", "n_layers")}
    out.update({k: check_finite(k, model[k], nonnegative=True) for k in ("lr", "eps")})
    return {k: out[k] for k in paper.MODEL}


def check_offsets(offsets: Mapping, expected: Mapping) -> dict:
    """``offsets`` with exactly the keys of ``expected`` (a seed-offset table of :mod:`.paper`)."""
    _check_keys("seed_offsets", offsets, expected)
    return {k: check_positive_int(f"seed offset {k!r}", offsets[k], minimum=0) for k in expected}


def _learner(m: dict, heads: int, positional: str, flags, placement="logit") -> Encoder:
    """The chapter's learner (§5.1; ``m`` a checked model dict), one member per log-scaling flag."""
    shape = {k: m[k] for k in ("d_model", "n_layers", "d_ffn", "eps")}
    shape.update(n_heads=heads, positional=positional, log_placement=placement)
    return Encoder(EncoderConfig(**shape, log_scaled=tuple(bool(f) for f in flags)))


def first_model(log_scaled_flags, *, model: Mapping = paper.MODEL, placements=None) -> Encoder:
    """The FIRST learner, one member per entry of ``log_scaled_flags``, the factor log N on the
    logit or, per member in ``placements``, on the query input (``EncoderConfig.log_placement``)."""
    place = "logit" if placements is None else tuple(placements)
    return _learner(check_model(model), paper.FIRST_HEADS, "first", log_scaled_flags, place)


# --------------------------------------------------------------------------- training
def _ce_metric(out, y):
    """(accuracy [E], mean cross-entropy in bits [E]) for the engine's validation."""
    return accuracy(out, y).to(torch.float64), cross_entropy_bits(out, y).mean(-1).to(torch.float64)


def _stack(parts: list[Grouped], combine=torch.stack) -> Grouped:
    return Grouped(*(combine([getattr(g, f) for g in parts]) for f in Grouped._fields))


def _grouped_bank(enc: Encoder, gen: torch.Generator, strings: int, ns) -> Grouped:
    """``strings`` random strings of length ``ns[e]`` per member e, drawn from ``gen`` and grouped
    member by member (as grouping the whole [members, strings, n] tensor, without holding it)."""
    return _stack([enc.group(random_strings(strings, n, generator=gen)) for n in ns])


def _fit_bank(enc: Encoder, gen: torch.Generator, strings: int, ns) -> Grouped:
    """Cell ``first_rates``'s fit bank as it was computed: each field of the groups from its own
    pass of :func:`_grouped_bank`, so the label (first symbol) and the count of later 1s come from
    different draws; the symbols being independent and uniform, still a uniform random string."""
    return Grouped(*(getattr(_grouped_bank(enc, gen, strings, ns), f) for f in Grouped._fields))


def _scores(enc: Encoder, params: dict, x, dev) -> dict:
    """Mean ``test_acc``, ``test_ce_bits`` (bits) per member on ``x`` (FIRST grouped, or PARITY)."""
    grouped = isinstance(x, Grouped)
    with torch.no_grad():
        out = enc(params, Grouped(*(t.to(dev) for t in x)) if grouped else x.to(dev))
    y = x.tokens[..., 1] if grouped else x.sum(-1) % 2
    scores = _ce_metric(out.cpu().to(torch.float64), y)
    return {k: v.tolist() for k, v in zip(("test_acc", "test_ce_bits"), scores)}


def _train(enc: Encoder, params: dict, lr, s: dict, **kw):
    """:func:`train_ensemble` with Adam at ``lr`` for ``s["epochs"]`` epochs: its result, the final
    parameters, each member's mean training cross-entropy (bits) over the last epoch, start time."""
    t0, spe = time.perf_counter(), s["steps_per_epoch"]
    adam, steps = OptimConfig("adam", lr=lr), s["epochs"] * spe
    res = train_ensemble(enc, params, optim=adam, steps=steps, **kw)
    final = {k: v.to(params["embed"].device) for k, v in res.final_params.items()}
    ce = (res.history["loss"][-spe:].mean(0) / math.log(2)).tolist()
    return res, final, ce, t0


def _first_sampler(enc: Encoder, lengths: list, members: list):
    """The engine's ``sample``: one fresh string of its training length per member and update,
    drawn from the member's own generator and grouped length by length (the members come length by
    length, so the groups concatenate in member order; no early stopping, so every member draws)."""
    by_len = {n: [i for i, m in enumerate(members) if m[0] == n] for n in lengths}

    def sample(step, gens):
        parts = [
            enc.group(torch.stack([random_strings(1, n, generator=gens[i]) for i in by_len[n]]))
            for n in lengths
        ]
        x = _stack(parts, torch.cat)
        return x, x.tokens[..., 1]

    return sample


def train_first_arms(settings, arms, seed_offsets, model, device, progress, fit_strings, analyse):
    """The FIRST cells (:func:`.experiments.train_first`): member (n, arm, r) starts from seed
    ``seed + r`` and reads the data stream of (n, r), shared by the arms; batch 1. Returns the
    checked settings, the members and the per-member results."""
    rates = fit_strings is not None
    expected = paper.FIRST_RATE_SEED_OFFSETS if rates else paper.FIRST_SEED_OFFSETS
    off = check_offsets(seed_offsets, expected)
    counts = ("runs", "epochs", "steps_per_epoch", "test_n", "test_strings", "eval_every_epochs")
    s = {k: check_positive_int(k, settings[k]) for k in counts}
    s["seed"] = check_positive_int("seed", settings["seed"], minimum=0)
    lengths = [check_positive_int("training length", n, minimum=2) for n in settings["lengths"]]
    arms = [check_choice("arm", a, tuple(paper.FIRST_ARMS)) for a in arms]
    for what, values in (("training lengths", lengths), ("arms", arms)):
        if not values or len(set(values)) != len(values):
            raise ConfigError(f"{what} must be distinct and at least one, got {values}")
    model, dev = check_model(model), get_device(device)
    seed, spe = s["seed"], s["steps_per_epoch"]
    members = [(n, a, r) for n in lengths for a in arms for r in range(s["runs"])]
    E = len(members)
    flags, places = zip(*(paper.FIRST_ARMS[m[1]] for m in members))
    enc = _learner(model, paper.FIRST_HEADS, "first", flags, places)
    params = enc.init([seed + m[2] for m in members], dtype=torch.float32, device=dev)
    data_seeds = [
        off["data"] + off["data_per_length"] * lengths.index(m[0]) + seed + m[2] for m in members
    ]
    gen = lambda key: torch.Generator().manual_seed(off[key] + seed)  # noqa: E731
    bank_x = _grouped_bank(enc, gen("bank"), s["test_strings"], [s["test_n"]] * E)
    bank = (bank_x, bank_x.tokens[..., 1])
    val = Validation(s["eval_every_epochs"] * spe, bank, None, _ce_metric, per_member=True)
    kw = dict(sample=_first_sampler(enc, lengths, members), data_seeds=data_seeds, validation=val)
    kw.update(progress=progress, device=device, desc="ch1 FIRST")
    res, final_p, train_ce, t0 = _train(enc, params, model["lr"], s, **kw)
    test_x = _grouped_bank(enc, gen("test"), s["test_strings"], [s["test_n"]] * E)
    out = {**_scores(enc, final_p, test_x, dev), "train_ce_bits_last_epoch": train_ce}
    if rates:
        fit_strings = check_positive_int("fit_strings", fit_strings)
        fit_x = _fit_bank(enc, gen("fit"), fit_strings, [m[0] for m in members])
        fit = _scores(enc, final_p, fit_x, dev).values()
        out.update(zip(("train_len_acc", "train_len_ce_bits"), fit))
    out.update(analyse(enc, final_p) if analyse else {})
    h = res.history
    out["curve"] = {"epoch": (h["val_step"] // spe).tolist(), "acc": h["val_acc"].tolist()}
    out["curve"]["ce_bits"] = h["val_loss"].tolist()
    out["wall_time_s"] = time.perf_counter() - t0
    return {**s, "lengths": lengths, "model": model}, members, out


def train_parity_runs(settings: dict, seed_offsets, model, device, progress, members=None) -> dict:
    """Cell ``parity_training`` (§5.1, :func:`.experiments.train_parity`): members from seeds
    ``seed + r``; ``members``: (run, learning rate, log-scaled) each (cell ``parity_grid``)."""
    counts = ("runs", "epochs", "steps_per_epoch", "n", "test_strings")
    s = {k: check_positive_int(k, settings[k]) for k in counts}
    runs, n = s["runs"], s["n"]
    seed = check_positive_int("seed", settings["seed"], minimum=0)
    off = check_offsets(seed_offsets, paper.PARITY_SEED_OFFSETS)
    model, dev = check_model(model), get_device(device)
    if members is None:
        members = [(r, model["lr"], False) for r in range(runs)]
    ids, lrs, flags = zip(*members)
    enc = _learner(model, paper.PARITY_HEADS, "parity", flags)
    params = enc.init([seed + r for r in ids], dtype=torch.float32, device=dev)

    def sample(step, gens):
        x = torch.stack([random_strings(1, n, generator=g) for g in gens])
        return x, x.sum(-1) % 2

    kw = dict(sample=sample, data_seeds=[off["data"] + seed + r for r in ids], desc="ch1 PARITY")
    lr = lrs[0] if len(set(lrs)) == 1 else list(lrs)
    _, final_p, train_ce, t0 = _train(enc, params, lr, s, progress=progress, device=device, **kw)
    tg = torch.Generator().manual_seed(off["test"] + seed)
    bits = torch.stack([random_strings(s["test_strings"], n, generator=tg) for _ in ids])
    out = {**_scores(enc, final_p, bits, dev), "train_ce_bits_last_epoch": train_ce}
    protocol = {k: s[k] for k in ("runs", "epochs", "steps_per_epoch")}
    protocol.update(batch_size=1, n=n, test_strings=s["test_strings"], seed=seed, **model)
    protocol.update(n_heads=paper.PARITY_HEADS, positional="i/N, cos(pi i) (fixed)")
    protocol["dtype"] = "float32"
    out.update(wall_time_s=time.perf_counter() - t0, seeds=[seed + r for r in range(runs)])
    return {"protocol": protocol, **out}


# --------------------------------------------------------------------------- analyses of the runs
def summarize(values, *, seed: int = 0) -> dict:
    """Mean with its 95% seed-bootstrap interval (lengthgen.stats.bootstrap_ci)."""
    from lengthgen.stats import bootstrap_ci

    est, lo, hi = bootstrap_ci(np.asarray(values, dtype=float), seed=seed)
    return {"mean": est, "lo": lo, "hi": hi, "n": len(values)}


def _run_key(member: dict) -> tuple:
    """(training length, arm, run) of a member (``first_training`` names the arm by its flag)."""
    arm = member.get("arm", paper.ATTENTION_ARMS[bool(member.get("log_scaled"))])
    return member["train_n"], arm, member["run"]


def arm_members(result: dict, n: int, arm: str) -> list[int]:
    """Indices of the members of arm ``arm`` at training length ``n``, in run order."""
    members = result["members"]
    idx = [i for i, m in enumerate(members) if _run_key(m)[:2] == (n, arm)]
    return sorted(idx, key=lambda i: members[i]["run"])


def by_arm(result: dict, arms=paper.ATTENTION_ARMS):
    """(training length, arm, member indices) over a FIRST result, length by length."""
    for n in result["protocol"]["lengths"]:
        for arm in arms:
            yield n, arm, arm_members(result, n, arm)


def first_table(result: dict) -> list[dict]:
    """Per (training length, scaling) of a :func:`train_first` result: mean test accuracy and
    cross-entropy with 95% bootstrap CIs, and the number of perfect runs (paper Fig. 4)."""
    rows = []
    for n, att, idx in by_arm(result):
        acc = [result["test_acc"][i] for i in idx]
        a, c = summarize(acc), summarize([result["test_ce_bits"][i] for i in idx])
        row = {"train_n": n, "attention": att, "runs": len(idx), "test_acc": a["mean"]}
        row.update(acc_lo=a["lo"], acc_hi=a["hi"], perfect_runs=int(sum(v == 1.0 for v in acc)))
        rows.append({**row, "test_ce_bits": c["mean"], "ce_lo": c["lo"], "ce_hi": c["hi"]})
    return rows


def perfect_key(perfect_ce_bits: float) -> str:
    """The :func:`failure_breakdown` column counting runs at 100% accuracy and low cross-entropy."""
    return f"perfect (100%, CE < {perfect_ce_bits:g} bits)"


def rate_perfect(result: dict, i: int, *, perfect_ce_bits: float = 0.01) -> bool:
    """Whether member ``i`` generalised perfectly (rule 3 of :mod:`.claims`): 100% test accuracy
    and mean test cross-entropy below ``perfect_ce_bits``."""
    return result["test_acc"][i] == 1.0 and result["test_ce_bits"][i] < perfect_ce_bits


def failure_breakdown(result: dict, *, perfect_ce_bits: float = 0.01) -> list[dict]:
    """Per (training length, attention): runs at 100% test accuracy, of them perfect
    (:func:`rate_perfect`), runs below 100%, of them unfit (training CE > 0.5 bits), near chance."""
    ce = check_finite("perfect_ce_bits", perfect_ce_bits, nonnegative=True)
    acc = result["test_acc"]
    out = []
    for n, att, idx in by_arm(result):
        failed = [i for i in idx if acc[i] < 1.0]
        row = {"train_n": n, "attention": att, "runs": len(idx)}
        row["perfect (100%)"] = sum(acc[i] == 1.0 for i in idx)
        row[perfect_key(ce)] = sum(rate_perfect(result, i, perfect_ce_bits=ce) for i in idx)
        row["below_100%"] = len(failed)
        unfit = [result["train_ce_bits_last_epoch"][i] > 0.5 for i in failed]
        row["of_which_unfit_on_training"] = sum(unfit)
        out.append({**row, "near_chance (≤ 0.6)": sum(acc[i] <= 0.6 for i in idx)})
    return out


def success_rates(result, *, perfect_ce_bits=0.01, level=0.95, paper_runs=paper.FIG4_RUNS):
    """Per (training length, arm) of a ``first_rates`` result: perfect runs, success rate with its
    exact ``level`` interval, p̂^paper_runs, mean test accuracy, runs near chance (≤ 0.6), unfit."""
    from lengthgen.stats import clopper_pearson

    ce = check_finite("perfect_ce_bits", perfect_ce_bits, nonnegative=True)
    rows = []
    for n, arm, idx in by_arm(result, result["protocol"]["arms"]):
        k = sum(rate_perfect(result, i, perfect_ce_bits=ce) for i in idx)
        lo, hi = clopper_pearson(k, len(idx), level=level)
        rate, acc = k / len(idx), [result["test_acc"][i] for i in idx]
        row = {"train_n": n, "arm": arm, "runs": len(idx), "perfect": k, "rate": rate}
        row.update(rate_lo=lo, rate_hi=hi, **{f"p_all_{paper_runs}": rate**paper_runs})
        row.update(mean_test_acc=float(np.mean(acc)), near_chance=sum(a <= 0.6 for a in acc))
        rows.append({**row, "unfit": sum(result["train_len_acc"][i] < 1.0 for i in idx)})
    return rows


def placement_comparison(result, *, a="log-scaled", b="authors' placement", perfect_ce_bits=0.01):
    """Per training length: arms ``a`` and ``b`` run by run (perfect in both, in one only, in
    neither) and the exact McNemar p-value (:func:`lengthgen.stats.mcnemar_exact`)."""
    from lengthgen.stats import mcnemar_exact

    ok = partial(rate_perfect, result, perfect_ce_bits=perfect_ce_bits)
    rows = []
    for n in result["protocol"]["lengths"]:
        ia, ib = (arm_members(result, n, arm) for arm in (a, b))
        if [result["members"][i]["run"] for i in ia] != [result["members"][i]["run"] for i in ib]:
            raise ValueError(f"arms {a!r} and {b!r} do not hold the same runs at length {n}")
        pa, pb = [ok(i) for i in ia], [ok(i) for i in ib]
        rows.append({"train_n": n, "runs": len(pa), **mcnemar_exact(pa, pb)})
    return rows


def shared_runs(rates: dict, first: dict, *, perfect_ce_bits: float = 0.01) -> dict:
    """The runs a ``first_rates`` result shares with a ``first_training`` one: how many, the largest
    relative difference of their last-epoch training cross-entropy, and verdicts that differ."""
    where = {_run_key(m): i for i, m in enumerate(first["members"])}
    pairs = [(j, where[k]) for j, m in enumerate(rates["members"]) if (k := _run_key(m)) in where]
    ce, ok = "train_ce_bits_last_epoch", partial(rate_perfect, perfect_ce_bits=perfect_ce_bits)
    rel = [abs(rates[ce][j] - first[ce][i]) / max(abs(first[ce][i]), 1e-12) for j, i in pairs]
    diff, differ = max(rel, default=0.0), sum(ok(rates, j) != ok(first, i) for j, i in pairs)
    return {"shared_runs": len(pairs), "max_rel_diff_train_ce": diff, "verdicts_differ": differ}
