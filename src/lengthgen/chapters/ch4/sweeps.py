"""Chapter 4's training cells (planned in :mod:`.experiments`), each a function of its settings
returning a JSON-ready value, trained through :func:`.training.fit`; the B.1.4 transformer; the
learning theory, measured (details page): the VC proposition exactly, our ReLU interpolant's
margins (Thm 6.3), margins across widths (Sec. 6) and samples needed (Cor. 5.8)."""

from __future__ import annotations

import itertools
import math
import time
from fractions import Fraction
from types import SimpleNamespace

import numpy as np
import torch

from lengthgen.chapters.ch4 import experiments_cell
from lengthgen.chapters.ch4.constructions import homogeneous_pairs, path_lower_bound, relu_kinks
from lengthgen.chapters.ch4.constructions import construct_relu, relu_width_lower_bound
from lengthgen.chapters.ch4.data import Dataset, all_count_vectors, check_length, check_modulus
from lengthgen.chapters.ch4.data import check_tokens, labels_of, labels_of_counts
from lengthgen.chapters.ch4.data import data_seed, sample_tokens, test_set, train_set
from lengthgen.chapters.ch4.data import ACTIVATIONS, ModularMLP, Network, check_activation
from lengthgen.chapters.ch4.paper import BATCH_SIZE, IN_DOMAIN_LENGTHS, INIT_STD, PAPER_SEEDS
from lengthgen.chapters.ch4.paper import TRAIN_LENGTHS, TRANSFORMER_INIT_SEED_OFFSET
from lengthgen.chapters.ch4.training import accuracy_on, b1_optimizer, fit, updates_per_epoch
from lengthgen.chapters.ch4.training import fit_columns, masked_metric, padded_sets
from lengthgen.chapters.ch4.training import layer_norm_product, margins, resolve_device
from lengthgen.config import ConfigError, check_positive_int, check_seeds, nonempty
from lengthgen.engine.optim import OptimConfig
from lengthgen.engine.runs import note_device
from lengthgen.engine import train as engine  # by module: the tests stub train_ensemble

TRANSFORMER_ACTIVATIONS = ("sine", "relu", "gelu")
_RUN = "steps lr seeds n_test"  # settings every training cell of SETTINGS takes

#: the ``**settings`` of the training cells (not device, progress): required, optional with defaults
SETTINGS = {
    "underparam": (f"configs widths budgets {_RUN}", dict(optimizer="adamw")),
    "overparam": (f"m p width n wds {_RUN}", {}),
    "transformer_baseline": (f"m p d_model budgets {_RUN}", {}),
    "margin_widths": (f"m p n widths wd {_RUN}", dict(activations=("relu", "sine"))),
    "sample_needs": (f"m grid ratios {_RUN}", {}),
    "lengthgen": (
        f"p width budgets wds test_lengths {_RUN}",
        dict(activation="sine", bias=False, sampler="mixed", train_lengths=TRAIN_LENGTHS)
        | dict(in_domain_lengths=IN_DOMAIN_LENGTHS, track_every=None, track_length=None)
        | dict(n_track=None),
    ),
}


def cell_settings(fn: str, given: dict, device, progress: bool) -> tuple[SimpleNamespace, dict]:
    """``given`` over cell ``fn``'s :data:`SETTINGS` defaults (``batch_size``: BATCH_SIZE), seeds
    checked (a missing or unknown name: ConfigError); and the options shared by :func:`.fit`."""
    required, defaults = SETTINGS[fn]
    defaults = {"batch_size": BATCH_SIZE, **defaults}
    missing = [k for k in required.split() if k not in given]
    unknown = sorted(set(given) - set(required.split()) - set(defaults))
    if missing or unknown:
        raise ConfigError(f"{fn}: settings missing {missing}, unknown {unknown}")
    c = SimpleNamespace(**{**defaults, **given})
    c.seeds, dev = check_seeds(c.seeds), resolve_device(device)
    return c, dict(steps=c.steps, progress=progress, device=dev, batch_size=c.batch_size)


def _all_length_set(m: int, p: int) -> Dataset:
    X = all_count_vectors(m, p)
    return Dataset(X.float(), labels_of_counts(X, p), torch.full((X.shape[0],), m))


def member_rows(members, keys: str, cols, **same) -> list[dict]:
    """One row per member: ``same``, its tuple under the names ``keys``, then its ``cols``."""
    return [{**same, **dict(zip(keys.split(), m)), **c} for m, c in zip(members, cols)]


@experiments_cell
def relu_min_width(*, p, lengths, widths, steps, lr, seeds, device="cpu", progress=False) -> dict:
    """Train bias-free ReLU MLPs on all of X_m (full batch, Adam) per width; one ensemble per width
    over (length, seed); record train accuracy (section "Claim 2")."""
    seeds, dev = check_seeds(seeds), resolve_device(device)
    sets = {m: _all_length_set(m, p) for m in nonempty("lengths", lengths)}
    members = [(m, s) for m in lengths for s in seeds]
    ds = [sets[m] for m, _ in members]
    run = dict(steps=steps, progress=progress, device=dev, optim=OptimConfig("adam", lr=lr))
    run.update(seeds=[s for _, s in members], batch_size=max(len(d) for d in ds))
    rows = []
    for w in nonempty("widths", widths):
        model = ModularMLP(p, w, "relu", bias=False)
        res = fit(model, ds, desc=f"relu w={w}", **run)
        acc = accuracy_on(model, res.final_params, ds, device=dev).tolist()
        rows += member_rows(members, "m seed", [{"train_acc": a} for a in acc], width=w)
    fits = lambda m: [r["width"] for r in rows if r["m"] == m and r["train_acc"] == 1.0]  # noqa: E731
    out = {"rows": rows, "min_width": {m: min(fits(m), default=None) for m in lengths}, "p": p}
    out["paper_bound"] = {m: relu_width_lower_bound(m, p) for m in lengths}
    out["path_bound"] = {m: path_lower_bound(m, p) for m in lengths}
    return {**out, "construction_width": {m: 2 + len(relu_kinks(m, p)) for m in lengths}}


TWO_LENGTH_RUNS = (
    ("relu, X_m1 only", False, "m1"),
    ("relu, X_m1 ∪ X_m2", False, "union"),
    ("relu + bias, X_m1 ∪ X_m2", True, "union"),
)


@experiments_cell
def two_lengths(*, p, m1, m2, width, steps, lr: float, seeds, device="cpu", progress=False) -> dict:
    """Thm 4.4: bias-free ReLU trained on X_m1 alone, on X_m1 ∪ X_m2, and a ReLU with bias on the union."""
    seeds, dev = check_seeds(seeds), resolve_device(device)
    a, b = _all_length_set(m1, p), _all_length_set(m2, p)
    union = Dataset(torch.cat([a.x, b.x]), torch.cat([a.y, b.y]), torch.cat([a.m, b.m]))
    pairs = homogeneous_pairs(m1, m2, p)["pairs"]
    out = {"p": p, "m1": m1, "m2": m2, "pairs": len(pairs), "runs": []}
    run = dict(optim=OptimConfig("adam", lr=lr), steps=steps, seeds=seeds, progress=progress)
    run["device"] = dev
    for name, bias, which in TWO_LENGTH_RUNS:
        data, model = a if which == "m1" else union, ModularMLP(p, width, "relu", bias=bias)
        P = fit(model, [data] * len(seeds), batch_size=len(data), desc=name, **run).final_params
        # predictions at the paired inputs (m1/g) z and (m2/g) z (float64 on the CPU)
        nets = [
            Network(*(P[k][e].double() for k in "WV"), "relu", P["b"][e].double() if bias else None)
            for e in range(len(seeds))
        ]
        same = [
            sum(int(n.predict(x1, 0.0)) == int(n.predict(x2, 0.0)) for x1, x2, _, _ in pairs)
            for n in nets
        ]
        acc = {
            f"acc_m{i}": accuracy_on(model, P, d, device=dev).tolist() for i, d in ((1, a), (2, b))
        }
        example = {k: P[k][0].tolist() for k in "WV"} | {"b": P["b"][0].tolist() if bias else None}
        out["runs"].append(
            dict(name=name, bias=bias, **acc, same_prediction_pairs=same, example=example)
        )
    return out


# --------------------------------------------------------------------------- claims 3–5: training
@experiments_cell
def underparam(*, device="cpu", progress=False, **settings) -> dict:
    """B.1.1: sine vs ReLU at matched (m, p, width, n), AdamW (or Fig. 9's SGD), wd 0 (section
    "Claim 3"): one ensemble per (config, activation, width) over (budget, seed)."""
    c, run = cell_settings("underparam", settings, device, progress)
    members = [(n, s) for n in nonempty("budgets", c.budgets) for s in c.seeds]
    run["seeds"], rows = [s for _, s in members], []
    for m, p in nonempty("configs", c.configs):
        train = [train_set(s, p, (m,), n) for n, s in members]
        tests_e = [test_set(s, p, m, c.n_test) for _, s in members]
        for act, w in itertools.product(ACTIVATIONS, nonempty("widths", c.widths)):
            optim = b1_optimizer(c.optimizer, c.lr, 0.0, act, False)
            desc = f"under m={m} p={p} {act} d={w}"
            cols = fit_columns(ModularMLP(p, w, act), train, tests_e, optim=optim, desc=desc, **run)
            rows += member_rows(members, "n seed", cols, m=m, p=p, activation=act, width=w)
    return {"rows": rows}


@experiments_cell
def overparam(*, device="cpu", progress=False, **settings) -> dict:
    """B.1.2: Muon over weight decays; accuracies and normalized 0.5%-margins (section "Claim 4")."""
    c, run = cell_settings("overparam", settings, device, progress)
    members = [(wd, s) for wd in nonempty("wds", c.wds) for s in c.seeds]
    run.update(margins=True, seeds=[s for _, s in members])
    wds_e, train = [wd for wd, _ in members], [train_set(s, c.p, (c.m,), c.n) for _, s in members]
    rows, tests_e = [], [test_set(s, c.p, c.m, c.n_test) for _, s in members]
    for act in ACTIVATIONS:
        optim = b1_optimizer("muon", c.lr, wds_e, act, False)
        model, desc = ModularMLP(c.p, c.width, act), f"over {act}"
        cols = fit_columns(model, train, tests_e, optim=optim, desc=desc, **run)
        rows += member_rows(members, "wd seed", cols, activation=act)
    return {"rows": rows, "m": c.m, "p": c.p, "width": c.width, "n": c.n}


@experiments_cell
def lengthgen(*, device="cpu", progress=False, **settings) -> dict:
    """B.1.3 for one variant (activation, bias), members (budget, wd, seed): per-length test
    accuracy (section "Claim 5"); with ``track_every``, the accuracy on ``n_track`` inputs of length
    ``track_length`` during training; ``sampler``: a key of :data:`~.training.SAMPLERS`."""
    c, run = cell_settings("lengthgen", settings, device, progress)
    seeds, dev, p = c.seeds, run["device"], c.p
    act, bias = check_activation(c.activation), c.bias
    test_lengths = nonempty("test_lengths", c.test_lengths)
    budgets, wds = nonempty("budgets", c.budgets), nonempty("wds", c.wds)
    members = list(itertools.product(budgets, wds, seeds))  # (n, wd, seed)
    train = [train_set(s, p, c.train_lengths, n) for n, _, s in members]
    model, validation = ModularMLP(p, c.width, act, bias=bias), None
    if c.track_every:  # the engine's validation hook: accuracy at one length, no early stopping
        bank = test_set(seeds[0], p, c.track_length, c.n_track)
        hook = dict(bank=(bank.x, bank.y), patience=None, metric=masked_metric)
        validation = engine.Validation(every=c.track_every, **hook)
    optim = b1_optimizer("muon", c.lr, [wd for _, wd, _ in members], act, bias)
    seeds_e, desc = [s for _, _, s in members], f"lengthgen {act}{'+b' if bias else ''}"
    run["sampler"] = c.sampler
    res = fit(model, train, optim=optim, seeds=seeds_e, desc=desc, validation=validation, **run)
    P = res.final_params
    acc = {"train": accuracy_on(model, P, train, device=dev).tolist()}
    for L in (*c.in_domain_lengths, *test_lengths):  # each member on its seed's test set
        tests = {s: test_set(s, p, L, c.n_test) for s in dict.fromkeys(seeds_e)}
        acc[L] = accuracy_on(model, P, [tests[s] for s in seeds_e], device=dev).tolist()
    cols = [{str(k): v[i] for k, v in acc.items()} for i in range(len(members))]
    best = max(range(len(members)), key=lambda i: acc[test_lengths[-1]][i])
    out = {"rows": member_rows(members, "n wd seed", cols, activation=act, bias=bias)}
    out.update(wall_time_s=res.wall_time_s, steps=res.steps_run, example_member=list(members[best]))
    out.update({f"example_{k}": P[k][best].tolist() if k in P else None for k in "WVb"})
    if validation is not None:  # the tracked accuracy
        out.update({k: res.history[k].tolist() for k in ("val_step", "val_acc")})
        out["track_length"] = c.track_length
    return out


@experiments_cell
def budget_study(*, n, every, val_length, n_val, device="cpu", progress=False, **run) -> dict:
    """Far-length accuracy of the biased sine MLP vs updates (B.1.3, p = 17): :func:`lengthgen`
    (``run``: its other settings) at one budget, accuracy at ``val_length`` every ``every``."""
    track = dict(track_every=every, track_length=val_length, n_track=n_val)
    out = lengthgen(**run, budgets=(n,), bias=True, device=device, progress=progress, **track)
    rows = out["rows"]
    return {
        "members": [[r["wd"], r["seed"]] for r in rows],
        "val_length": val_length,
        **{k: out[k] for k in ("val_step", "val_acc")},
        "final_acc": {L: [r[L] for r in rows] for L in rows[0] if L.isdigit()},
        "steps": run["steps"],
    }


# --------------------------------------------------------------------------- the transformer (B.1.4)
def addition_sequences(tokens: torch.Tensor, p: int) -> torch.Tensor:
    """B.1.4 tokenisation: ``x1 + x2 + … + xm =`` with ``+`` = id p and ``=`` = id p+1; [n, 2m]."""
    tok = check_tokens(tokens, p)
    n, m = tok.shape
    seq = torch.full((n, 2 * m), p, dtype=torch.long)
    seq[:, 0::2] = tok
    seq[:, -1] = p + 1
    return seq


class LastTokenDecoder:
    """The chapter-3 :class:`~lengthgen.nn.decoder.Decoder` read out at the last position (``=``),
    initialised as in B.1.4 (weights N(0, 0.01²), biases 0, LayerNorm 1/0)."""

    def __init__(self, p, m, activation, d_model=64, init_std=INIT_STD):
        from lengthgen.nn.decoder import Decoder

        self.p, self.m, self.init_std = p, m, init_std
        shape = dict(n_layers=1, n_heads=1, d_model=d_model, vocab=p + 2, L0=2 * m, n_out=p)
        self.dec = Decoder("learned_abs", activation=activation, **shape)

    def init(self, seeds, dtype=torch.float32, device=None):
        """Per-member parameters ``{name: [E, ...]}`` on ``device`` with the B.1.4 initialisation."""
        params = self.dec.init(seeds, dtype=dtype, device=device)
        for e, s in enumerate(seeds):
            g = torch.Generator().manual_seed(int(s) + TRANSFORMER_INIT_SEED_OFFSET)
            for name, t in params.items():
                leaf = name.split(".")[-1]  # LayerNorm gains *_g keep their 1
                if leaf.startswith("b") or leaf.endswith("_b"):
                    t[e].zero_()
                elif not leaf.endswith("_g"):
                    t[e].copy_(torch.randn(t[e].shape, generator=g) * self.init_std)
        return params

    def forward(self, params, x):
        """Logits at the last position: [E, B, p]."""
        return self.dec.forward(params, x.long())[:, :, -1]


def _sequences(seed_value: int, n: int, m: int, p: int):
    """``n`` addition sequences of length ``m`` (B.1.4) from generator ``seed_value``, and labels."""
    tok = sample_tokens(n, m, p, torch.Generator().manual_seed(seed_value))
    return addition_sequences(tok, p), labels_of(tok, p)


@experiments_cell
def transformer_baseline(*, device="cpu", progress=False, **settings) -> dict:
    """B.1.4: a 1-layer 1-head decoder, FFN activation sine / ReLU / GELU, accuracy vs training-set
    size (section "Claim 6 — transformer baseline")."""
    c, run = cell_settings("transformer_baseline", settings, device, progress)
    seeds, dev, m, p = c.seeds, run["device"], c.m, c.p
    members = [(n, s) for n in nonempty("budgets", c.budgets) for s in seeds]
    sets = [Dataset(*_sequences(data_seed(s, m), n, m, p), torch.full((n,), m)) for n, s in members]
    tests = {s: _sequences(data_seed(s, m, test=True), c.n_test, m, p) for s in seeds}
    banks = [
        [t.to(dev) for t in padded_sets(sets, dtype=torch.long)],
        [torch.stack([tests[s][i] for _, s in members]).to(dev) for i in (0, 1)],
    ]
    rows, seeds_e = [], [s for _, s in members]
    run.update(optim=OptimConfig("adamw", lr=c.lr, weight_decay=0.0), seeds=seeds_e)
    for act in TRANSFORMER_ACTIVATIONS:
        model = LastTokenDecoder(p, m, act, d_model=c.d_model)
        res = fit(model, sets, desc=f"transformer {act}", **run)
        P = {k: v.to(dev) for k, v in res.final_params.items()}
        with torch.no_grad():
            tr, te = (masked_metric(model.forward(P, x), y)[0].tolist() for x, y in banks)
        cols = [{"train_acc": a, "test_acc": b} for a, b in zip(tr, te)]
        rows += member_rows(members, "n seed", cols, activation=act)
    return {"rows": rows, "m": m, "p": p}


# --------------------------------------------------------------------------- epoch timing
_MEMBER_KEYS = ("activation", "bias", "n", "wd", "seed")  # a lengthgen row's member


def sampler_comparison(*, n, wd, steps, seed, bias=True, device="cpu", **run) -> list[dict]:
    """Section "Training: protocol and budget": one B.1.3 run (``run``: the other settings of
    :func:`lengthgen`) per sampler: updates per epoch, epochs and accuracies of each."""
    run.update(budgets=(n,), wds=(wd,), steps=steps, seeds=(seed,), bias=bias)
    rows = []
    for name in ("mixed", "by_length"):
        out = lengthgen(**run, device=device, sampler=name)
        upe = updates_per_epoch(n, TRAIN_LENGTHS, BATCH_SIZE, by_length=name == "by_length")
        accs = {k: v for k, v in out["rows"][0].items() if k not in _MEMBER_KEYS}
        rows.append({"sampler": name, "updates per epoch": upe, "epochs": steps / upe, **accs})
    return rows


def _sync(dev: torch.device) -> None:
    if dev.type == "cuda":
        torch.cuda.synchronize(dev)


@experiments_cell
def epoch_timing(p=53, width=1024, n=8000, runs=3, device="cpu") -> dict:
    """Seconds for one B.1.3 epoch of ``runs`` runs: the ensemble engine vs a plain per-run PyTorch
    loop (nn.Linear, torch.optim.Muon) (section "How fast is an epoch?")."""
    runs, dev = check_positive_int("runs", runs), resolve_device(device)
    seeds = list(range(PAPER_SEEDS[0], PAPER_SEEDS[0] + runs))  # the paper's, continued
    train, steps = [train_set(s, p, TRAIN_LENGTHS, n) for s in seeds], -(-n // BATCH_SIZE)
    optim = OptimConfig("muon", lr=1e-3, weight_decay=0.01, decay=["V"])
    _sync(dev)
    t0 = time.perf_counter()
    fit(ModularMLP(p, width, "sine"), train, optim=optim, steps=steps, seeds=seeds, device=dev)
    _sync(dev)
    engine_s = time.perf_counter() - t0
    note_device(dev)
    t0 = time.perf_counter()
    for s, d in zip(seeds, train):
        torch.manual_seed(s)
        W, V = torch.nn.Linear(p, width, bias=False), torch.nn.Linear(width, p, bias=False)
        for layer in (W, V):
            torch.nn.init.normal_(layer.weight, std=0.01)
            layer.to(dev)
        x, y = d.x.to(dev), d.y.to(dev)
        opt = torch.optim.Muon([W.weight, V.weight], lr=1e-3, weight_decay=0.01)
        perm = torch.randperm(len(d), generator=torch.Generator().manual_seed(s)).to(dev)
        for k in range(steps):
            idx = perm[k * BATCH_SIZE : (k + 1) * BATCH_SIZE]
            loss = torch.nn.functional.cross_entropy(V(torch.sin(W(x[idx]))), y[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
    _sync(dev)
    out = dict(p=p, width=width, n=n, runs=runs, updates_per_epoch=steps, engine_s=engine_s)
    return {**out, "loop_s": time.perf_counter() - t0, "threads": torch.get_num_threads()}


# ---------------------------------------------------------------------- the VC proposition (Sec. 4)
def shatter_frequency(labels) -> Fraction:
    """a/π with ``sgn(sin(a·2^i)) = labels[i]`` (±1): binary digit i set where the label is −1,
    plus 2^−N so no point lands on a zero of the sine."""
    labels = list(labels)
    if not labels or any(y not in (-1, 1) for y in labels):
        raise ConfigError(f"labels must be a non-empty list of ±1, got {labels!r}")
    digits = sum((Fraction(1, 2**i) for i, y in enumerate(labels) if y == -1), Fraction(0))
    return digits + Fraction(1, 2 ** len(labels))


def sign_sin_pi(t: Fraction) -> int:
    """``sgn(sin(π t))`` for a rational t, exactly: +1 on (0, 1) mod 2, −1 on (1, 2), 0 at integers."""
    r = Fraction(t) % 2
    return 0 if r.denominator == 1 else (1 if r < 1 else -1)


def shattered_labellings(n: int) -> int:
    """How many labellings of 1, 2, 4, …, 2^(n−1) :func:`shatter_frequency` realizes (exactly)."""
    n = check_positive_int("n", n)
    xs = [2**i for i in range(n)]
    return sum(
        all(sign_sin_pi(shatter_frequency(ys) * x) == y for x, y in zip(xs, ys))
        for ys in itertools.product((-1, 1), repeat=n)
    )


# ----------------------------------------------------------------------- Thm 6.3: margins against m
def sum_representatives(m: int, p: int) -> torch.Tensor:
    """One count vector of X_m per token sum S = 0 … m(p−1): tokens p−1, one S mod (p−1), zeros."""
    m, p = check_length(m), check_modulus(p)
    S = torch.arange(m * (p - 1) + 1)
    x, q, r = torch.zeros(len(S), p, dtype=torch.long), S // (p - 1), S % (p - 1)
    x[:, p - 1] += q
    x[torch.arange(len(S)), r] += (r > 0).long()
    x[:, 0] += m - x.sum(1)
    return x


def relu_interpolant_margins(p: int, ms) -> list[dict]:
    """Per m: width, margin on X_m, ``‖W‖_F ‖V‖_2`` and normalized margin of our ReLU interpolant
    (its units read only m and S, so :func:`sum_representatives` give the margin over X_m)."""
    out = []
    for m in nonempty("ms", ms):
        net, x = construct_relu(m, p), sum_representatives(m, p)
        gam = float(margins(net.scores(x), (x * torch.arange(p)).sum(1) % p).min())
        norm = float(layer_norm_product({"W": net.W, "V": net.V}, "relu"))
        out += [{"m": m, "width": net.width, "margin": gam, "norm": norm, "normalized": gam / norm}]
    return out


def slope_growth(rows) -> float:
    """Log-log slope of γ̄ against m over the last doubling of m over that of the one before:
    2 for γ̄ ∝ e^(−cm) (the slope doubles with m), 1 for a power law m^(−k)."""
    ms = [r["m"] for r in rows]
    if len(ms) < 3 or any(b != 2 * a for a, b in zip(ms, ms[1:])):
        raise ConfigError(f"slope_growth needs ≥ 3 lengths, each twice the last; got {ms}")
    g = [math.log2(r["normalized"]) for r in rows[-3:]]
    return (g[2] - g[1]) / (g[1] - g[0])


# --------------------------------------------------------------------------- training cells
@experiments_cell
def margin_widths(*, device="cpu", progress: bool = False, **settings) -> dict:
    """B.1.2 at several widths (Sec. 6 remark): train/test accuracy, normalized 0.5 % margin."""
    c, run = cell_settings("margin_widths", settings, device, progress)
    run["seeds"], m, p = c.seeds, c.m, c.p
    train = [train_set(s, p, (m,), c.n) for s in c.seeds]
    tests = [test_set(s, p, m, c.n_test) for s in c.seeds]
    rows, keep = [], ("train_acc", "test_acc", "normalized_margin")
    for act, w in itertools.product(c.activations, nonempty("widths", c.widths)):
        model = ModularMLP(p, w, check_activation(act))
        optim, desc = b1_optimizer("muon", c.lr, c.wd, act, False), f"{act} d={w}"
        cols = fit_columns(model, train, tests, margins=True, optim=optim, desc=desc, **run)
        kept = [{k: col[k] for k in keep} for col in cols]
        rows += member_rows([(s,) for s in c.seeds], "seed", kept, activation=act, width=w)
    return {"rows": rows, "m": m, "p": p, "n": c.n, "wd": c.wd}


@experiments_cell
def sample_needs(*, device="cpu", progress: bool = False, **settings) -> dict:
    """Cor. 5.8 / Thm 5.6: sine MLPs (AdamW, no decay) per (p, width) of ``grid``, one ensemble
    of n = round(ratio·p) examples per (ratio, seed); train and test accuracy per member."""
    c, run = cell_settings("sample_needs", settings, device, progress)
    optim, rows = b1_optimizer("adamw", c.lr, 0.0, "sine", False), []
    for p, w in nonempty("grid", c.grid):
        members = [(max(1, round(r * p)), s) for r in nonempty("ratios", c.ratios) for s in c.seeds]
        train = [train_set(s, p, (c.m,), n) for n, s in members]
        tests = [test_set(s, p, c.m, c.n_test) for _, s in members]
        model, seeds_e = ModularMLP(p, w, "sine"), [s for _, s in members]
        desc = f"samples p={p} d={w}"
        cols = fit_columns(model, train, tests, optim=optim, seeds=seeds_e, desc=desc, **run)
        rows += member_rows(members, "n seed", cols, p=p, width=w)
    return {"rows": rows, "m": c.m}


# ------------------------------------------------------------------------- reading the sample sweep
def samples_needed(rows, p: int, width: int, level: float) -> float | None:
    """The training-set size where the seed-mean test accuracy of (p, width) first reaches
    ``level``, linear in log n between grid sizes (``None``: never)."""
    sel = [r for r in rows if r["p"] == p and r["width"] == width]
    ns = sorted({r["n"] for r in sel})
    acc = [np.mean([r["test_acc"] for r in sel if r["n"] == n]) for n in ns]
    for i, a in enumerate(acc):
        if a >= level:
            if i == 0:
                return float(ns[0])
            t = (level - acc[i - 1]) / (a - acc[i - 1])
            return float(math.exp((1 - t) * math.log(ns[i - 1]) + t * math.log(ns[i])))
    return None
