"""Chapter 4 (Huang & Li, sine activation for modular addition): the chapter's runs as cells.

Every experiment is a module-level function of its full configuration (keyword arguments, plus
``device`` and ``progress`` for the ones that train) returning a JSON-ready value. :func:`cells`
lists them as cells of the runs facility (:mod:`lengthgen.engine.runs`) with the settings of
:mod:`lengthgen.chapters.ch4.paper` for a scale; ``python -m lengthgen reproduce ch4`` runs them
(full scale into ``results/ch4/cells/``, smoke scale into ``_build/smoke-results/ch4/cells/``).
The notebook runs the same functions live at smoke scale and reads the stored full-scale cells
through :func:`stored_constructions` and :func:`stored_training`, which check each stored cell
against today's plan (same configuration hash) and against the schema of its kind
(:func:`schema_of`: accuracies in [0, 1], one row per declared member).

All training goes through the ensemble engine (:func:`lengthgen.chapters.ch4.training.fit` →
:func:`lengthgen.engine.train.train_ensemble`) on the requested device.
"""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import torch

from lengthgen.chapters.ch4 import paper
from lengthgen.chapters.ch4.checks import (
    accuracy_by_length,
    automaton_accuracy,
    exact_lengths,
    exhaustive_accuracy,
)
from lengthgen.chapters.ch4.constructions import (
    construct_fixed_length,
    construct_fourier,
    construct_with_bias,
    fourier_accuracy,
    relu_kinks,
)
from lengthgen.chapters.ch4.data import (
    Dataset,
    all_count_vectors,
    check_length,
    check_modulus,
    labels_of,
    labels_of_counts,
    sample_tokens,
    test_set,
    test_seed,
    train_seed,
    train_set,
)
from lengthgen.chapters.ch4.margins import train_margins
from lengthgen.chapters.ch4.model import (
    ACTIVATIONS,
    ModularMLP,
    Network,
    check_activation,
)
from lengthgen.chapters.ch4.paper import (
    BATCH_SIZE,
    IN_DOMAIN_LENGTHS,
    LENGTHGEN_VARIANTS,
    OOD_LENGTHS,
    PAPER_SEEDS,
    TRAIN_LENGTHS,
    checks,
    protocol,
)
from lengthgen.chapters.ch4.paper_scale import members_of, train_paper_scale
from lengthgen.chapters.ch4.relu_limits import (
    homogeneous_pairs,
    path_lower_bound,
    relu_width_lower_bound,
)
from lengthgen.chapters.ch4.training import (
    EpochSampler,
    accuracy_on,
    b1_optimizer,
    fit,
    masked_loss,
    masked_metric,
    padded_sets,
    resolve_device,
    updates_per_epoch,
)
from lengthgen.chapters.ch4.transformer import LastTokenDecoder, addition_sequences
from lengthgen.config import ConfigError, check_positive_int, check_probability
from lengthgen.engine.optim import OptimConfig
from lengthgen.engine.runs import Cell, note_device
from lengthgen.store import ResultFileError, Schema

TRANSFORMER_ACTIVATIONS = ("sine", "relu", "gelu")


def _seeds(seeds) -> list[int]:
    """``seeds`` as a non-empty list of integers ≥ 0 (ConfigError naming the bad value otherwise)."""
    if (
        isinstance(seeds, (str, bytes))
        or not hasattr(seeds, "__len__")
        or len(seeds) == 0
    ):
        raise ConfigError(f"seeds must be a non-empty list of integers, got {seeds!r}")
    return [
        check_positive_int(f"seeds[{i}]", s, minimum=0) for i, s in enumerate(seeds)
    ]


def _nonempty(name: str, values) -> list:
    if (
        isinstance(values, (str, bytes))
        or not hasattr(values, "__len__")
        or len(values) == 0
    ):
        raise ConfigError(f"{name} must be a non-empty list, got {values!r}")
    return list(values)


# --------------------------------------------------------------------------- claim 1: constructions
def small_exhaustive(
    ps=(2, 3, 4, 5, 6, 7, 11), ms=(1, 2, 3, 4), limit: int = 20_000
) -> list[dict]:
    """Every construction on every ordered input of length m, for small (m, p) with p^m ≤ ``limit``
    (section "Claim 1 — the constructions, checked exactly")."""
    limit = check_positive_int("limit", limit)
    rows = []
    for p in _nonempty("ps", ps):
        for m in _nonempty("ms", ms):
            if check_modulus(p) ** check_length(m) > limit:
                continue
            row = {
                "p": p,
                "m": m,
                "inputs": p**m,
                "thm41": exhaustive_accuracy(construct_fixed_length(m, p), m)["acc"],
                "thm42_bias": exhaustive_accuracy(construct_with_bias(p), m)["acc"],
                "fourier": exhaustive_accuracy(construct_fourier(p), m)["acc"]
                if p >= 3
                else None,
                "fourier_theory": fourier_accuracy(p) if p >= 3 else None,
            }
            rows.append(row)
    return rows


def long_length_checks(
    primes=(97, 53),
    max_m: int = max(OOD_LENGTHS),
    n: int = paper.N_TEST,
    seed: int = paper.AUTOMATON_SEED,
) -> dict:
    """Exact checks (phase automaton) of the three sine constructions at every m ≤ ``max_m``."""
    out = {}
    for p in _nonempty("primes", primes):
        fam = automaton_accuracy(
            None, p, max_m, n=n, seed=seed, fixed_length_family=True
        )
        bias = automaton_accuracy(construct_with_bias(p), p, max_m, n=n, seed=seed + 1)
        four = automaton_accuracy(construct_fourier(p), p, max_m, n=n, seed=seed + 2)
        out[p] = {"thm41": fam, "thm42_bias": bias, "fourier": four}
    return out


def float_network_checks(
    primes=(97, 53),
    max_m: int = max(OOD_LENGTHS),
    n: int = paper.N_TEST,
    lengths=None,
    seed: int = paper.FLOAT_SEED,
) -> dict:
    """The same constructions evaluated directly as float64 networks ``V sin(W x + b)``."""
    out = {}
    for p in _nonempty("primes", primes):
        out[p] = {
            "thm41": accuracy_by_length(
                None,
                p,
                max_m,
                n=n,
                seed=seed,
                lengths=lengths,
                fixed_length_family=True,
            ),
            "thm42_bias": accuracy_by_length(
                construct_with_bias(p), p, max_m, n=n, seed=seed + 1, lengths=lengths
            ),
            "fourier": accuracy_by_length(
                construct_fourier(p), p, max_m, n=n, seed=seed + 2, lengths=lengths
            ),
        }
    return out


def summarize_checks(checks_: dict) -> dict:
    """Min/max accuracy per construction and prime, and the largest gap to 1 − (tie-residue share)."""
    if not isinstance(checks_, dict) or not checks_:
        raise ConfigError(
            "summarize_checks needs the dict returned by long_length_checks or float_network_checks"
        )
    out = {}
    for p, d in checks_.items():
        for name, r in d.items():
            acc = np.array(r["acc"])
            tie = np.array(r["tie_residue_frac"])
            out[f"{name}@{p}"] = {
                "min_acc": float(acc.min()),
                "max_acc": float(acc.max()),
                "max_abs_acc_minus_1_minus_tie_share": float(
                    np.abs(acc - (1 - tie)).max()
                ),
                "errors_outside_tie_residues": int(r["errors_outside_tie_residues"]),
                "lengths": len(acc),
                "n_per_length": int(r["n"]),
                "mean_acc": float(acc.mean()),
            }
    return out


def automaton_summary(primes, max_m: int, n: int, seed: int) -> dict:
    """Cell ``automaton``: :func:`summarize_checks` of :func:`long_length_checks`."""
    return summarize_checks(
        long_length_checks(primes=primes, max_m=max_m, n=n, seed=seed)
    )


def float_summary(primes, max_m: int, n: int, seed: int, lengths=None) -> dict:
    """Cell ``float_n<n>``: :func:`summarize_checks` of :func:`float_network_checks`."""
    return summarize_checks(
        float_network_checks(
            primes=primes, max_m=max_m, n=n, lengths=lengths, seed=seed
        )
    )


# --------------------------------------------------------------------------- claim 2: ReLU limits
def window_key(p: int, m: int) -> str:
    """The key of one (p, m) case of the window check: ``"p = 13, m = 9"``."""
    return f"p = {check_modulus(p)}, m = {check_length(m)}"


def fixed_length_exact_lengths(
    cases=paper.WINDOW_CASES, span: int = paper.WINDOW_SPAN
) -> dict:
    """Brute force for claim ``ch4.thm41.window``: per (p, m) case, the lengths 1 … span·m at which
    the Thm 4.1 network built for m is right on every input (:func:`~.checks.exact_lengths`)."""
    span = check_positive_int("span", span)
    cases = _nonempty("cases", cases)
    for c in cases:
        if not isinstance(c, (list, tuple)) or len(c) != 2:
            raise ConfigError(f"each case must be a pair (p, m), got {c!r}")
    return {
        window_key(p, m): exact_lengths(construct_fixed_length(m, p), p, span * m)
        for p, m in cases
    }


def relu_bounds_table(p: int = 97, lengths=OOD_LENGTHS) -> list[dict]:
    """Thm 4.3's bound, our path bound and the width of our explicit interpolant at each m."""
    return [
        {
            "m": m,
            "paper_bound": relu_width_lower_bound(m, p),
            "path_bound": path_lower_bound(m, p),
            "construction_width": 2 + len(relu_kinks(m, p)),
        }
        for m in _nonempty("lengths", lengths)
    ]


def relu_construction_check(cases=((3, (6, 12, 24, 48)), (5, (4, 6)))) -> list[dict]:
    """Our explicit bias-free ReLU interpolant (:func:`~.constructions.construct_relu`) on every count
    vector of ``X_m``, for each ``(p, lengths)`` of ``cases``: accuracy, width and our path bound."""
    from lengthgen.chapters.ch4.constructions import construct_relu

    rows = []
    for p, lengths in _nonempty("cases", cases):
        for m in _nonempty("lengths", lengths):
            net = construct_relu(m, p)
            X = all_count_vectors(m, p)
            acc = float(
                (net.predict(X.double(), 1e-9) == labels_of_counts(X, p))
                .double()
                .mean()
            )
            rows.append(
                {
                    "p": p,
                    "m": m,
                    "count_vectors": int(X.shape[0]),
                    "acc": acc,
                    "width": int(net.W.shape[0]),
                    "path_bound": path_lower_bound(m, p),
                }
            )
    return rows


def _all_length_set(m: int, p: int) -> Dataset:
    X = all_count_vectors(m, p)
    return Dataset(X.float(), labels_of_counts(X, p), torch.full((X.shape[0],), m))


def relu_min_width(
    *,
    p: int,
    lengths,
    widths,
    steps: int,
    lr: float,
    seeds,
    device="cpu",
    progress: bool = False,
) -> dict:
    """Train bias-free ReLU MLPs on all of X_m (full batch, Adam) for each width; record train accuracy
    (section "Claim 2"). One ensemble per width; its members are (length, seed) pairs (padded full batches).
    """
    seeds, dev = _seeds(seeds), resolve_device(device)
    sets = {m: _all_length_set(m, p) for m in _nonempty("lengths", lengths)}
    members = [(m, s) for m in lengths for s in seeds]
    rows = []
    for w in _nonempty("widths", widths):
        model = ModularMLP(p, w, "relu", bias=False)
        ds = [sets[m] for m, _ in members]
        bs = max(len(d) for d in ds)
        res = fit(
            model,
            ds,
            optim=OptimConfig("adam", lr=lr),
            steps=steps,
            seeds=[s for _, s in members],
            batch_size=bs,
            progress=progress,
            desc=f"relu w={w}",
            device=dev,
        )
        acc = accuracy_on(model, res.final_params, ds, device=dev)
        for (m, s), a in zip(members, acc.tolist()):
            rows.append({"width": w, "m": m, "seed": s, "train_acc": a})
    minw = {}
    for m in lengths:
        ok = sorted({r["width"] for r in rows if r["m"] == m and r["train_acc"] == 1.0})
        minw[m] = ok[0] if ok else None
    return {
        "rows": rows,
        "min_width": minw,
        "p": p,
        "paper_bound": {m: relu_width_lower_bound(m, p) for m in lengths},
        "path_bound": {m: path_lower_bound(m, p) for m in lengths},
        "construction_width": {m: 2 + len(relu_kinks(m, p)) for m in lengths},
    }


TWO_LENGTH_RUNS = (
    ("relu, X_m1 only", False, "m1"),
    ("relu, X_m1 ∪ X_m2", False, "union"),
    ("relu + bias, X_m1 ∪ X_m2", True, "union"),
)


def two_lengths(
    *,
    p: int,
    m1: int,
    m2: int,
    width: int,
    steps: int,
    lr: float,
    seeds,
    device="cpu",
    progress: bool = False,
) -> dict:
    """Thm 4.4: bias-free ReLU trained on X_m1 alone, on X_m1 ∪ X_m2, and a ReLU with bias on the union."""
    seeds, dev = _seeds(seeds), resolve_device(device)
    a, b = _all_length_set(m1, p), _all_length_set(m2, p)
    union = Dataset(torch.cat([a.x, b.x]), torch.cat([a.y, b.y]), torch.cat([a.m, b.m]))
    pairs = homogeneous_pairs(m1, m2, p)
    out = {"p": p, "m1": m1, "m2": m2, "pairs": len(pairs["pairs"]), "runs": []}
    for name, bias, which in TWO_LENGTH_RUNS:
        data = a if which == "m1" else union
        model = ModularMLP(p, width, "relu", bias=bias)
        res = fit(
            model,
            [data] * len(seeds),
            optim=OptimConfig("adam", lr=lr),
            steps=steps,
            seeds=seeds,
            batch_size=len(data),
            progress=progress,
            desc=name,
            device=dev,
        )
        P = res.final_params
        acc1 = accuracy_on(model, P, a, device=dev).tolist()
        acc2 = accuracy_on(model, P, b, device=dev).tolist()
        # predictions at the paired inputs (m1/g) z and (m2/g) z (float64 on the CPU)
        same = []
        for e in range(len(seeds)):
            net = Network(
                P["W"][e].double(),
                P["V"][e].double(),
                "relu",
                P["b"][e].double() if bias else None,
            )
            same.append(
                sum(
                    int(net.predict(x1, 0.0)) == int(net.predict(x2, 0.0))
                    for x1, x2, _, _ in pairs["pairs"]
                )
            )
        out["runs"].append(
            {
                "name": name,
                "bias": bias,
                "acc_m1": acc1,
                "acc_m2": acc2,
                "same_prediction_pairs": same,
                "example": {
                    "W": P["W"][0].tolist(),
                    "V": P["V"][0].tolist(),
                    "b": P["b"][0].tolist() if bias else None,
                },
            }
        )
    return out


# --------------------------------------------------------------------------- claims 3–5: training
def underparam(
    *,
    configs,
    widths,
    budgets,
    steps: int,
    lr: float,
    seeds,
    n_test: int,
    batch_size: int = BATCH_SIZE,
    device="cpu",
    progress: bool = False,
) -> dict:
    """B.1.1: sine vs ReLU at matched (m, p, width, n), AdamW, wd 0 (section "Claim 3").

    One ensemble per (config, activation, width); members are (budget, seed). Training sets of
    one seed are prefixes of each other across budgets; test sets are fixed per (seed, m).
    """
    seeds, dev = _seeds(seeds), resolve_device(device)
    rows = []
    for m, p in _nonempty("configs", configs):
        members = [(n, s) for n in _nonempty("budgets", budgets) for s in seeds]
        train = [train_set(s, p, (m,), n) for n, s in members]
        tests = {s: test_set(s, p, m, n_test) for s in seeds}
        for act in ACTIVATIONS:
            for w in _nonempty("widths", widths):
                model = ModularMLP(p, w, act)
                res = fit(
                    model,
                    train,
                    optim=b1_optimizer("adamw", lr, 0.0, act, False),
                    steps=steps,
                    seeds=[s for _, s in members],
                    batch_size=batch_size,
                    progress=progress,
                    desc=f"under m={m} p={p} {act} d={w}",
                    device=dev,
                )
                tr = accuracy_on(model, res.final_params, train, device=dev).tolist()
                te = accuracy_on(
                    model, res.final_params, [tests[s] for _, s in members], device=dev
                ).tolist()
                for (n, s), a, b in zip(members, tr, te):
                    rows.append(
                        {
                            "m": m,
                            "p": p,
                            "activation": act,
                            "width": w,
                            "n": n,
                            "seed": s,
                            "train_acc": a,
                            "test_acc": b,
                        }
                    )
    return {"rows": rows}


def overparam(
    *,
    m: int,
    p: int,
    width: int,
    n: int,
    wds,
    steps: int,
    lr: float,
    seeds,
    n_test: int,
    batch_size: int = BATCH_SIZE,
    device="cpu",
    progress: bool = False,
) -> dict:
    """B.1.2: Muon with a weight-decay sweep; train/test accuracy and normalized 0.5%-margins (section "Claim 4")."""
    seeds, dev = _seeds(seeds), resolve_device(device)
    members = [(wd, s) for wd in _nonempty("wds", wds) for s in seeds]
    train = [train_set(s, p, (m,), n) for _, s in members]
    tests = {s: test_set(s, p, m, n_test) for s in seeds}
    rows = []
    for act in ACTIVATIONS:
        model = ModularMLP(p, width, act)
        res = fit(
            model,
            train,
            optim=b1_optimizer("muon", lr, [wd for wd, _ in members], act, False),
            steps=steps,
            seeds=[s for _, s in members],
            batch_size=batch_size,
            progress=progress,
            desc=f"over {act}",
            device=dev,
        )
        P = res.final_params
        tr = accuracy_on(model, P, train, device=dev).tolist()
        te = accuracy_on(model, P, [tests[s] for _, s in members], device=dev).tolist()
        mg = train_margins(model, P, train, device=dev)
        for i, (wd, s) in enumerate(members):
            rows.append(
                {
                    "activation": act,
                    "wd": wd,
                    "seed": s,
                    "train_acc": tr[i],
                    "test_acc": te[i],
                    "margin": mg["margin"][i],
                    "norm": mg["norm"][i],
                    "normalized_margin": mg["normalized"][i],
                }
            )
    return {"rows": rows, "m": m, "p": p, "width": width, "n": n}


def lengthgen(
    *,
    p: int,
    width: int,
    budgets,
    wds,
    steps: int,
    lr: float,
    seeds,
    n_test: int,
    test_lengths,
    activation: str = "sine",
    bias: bool = False,
    train_lengths=TRAIN_LENGTHS,
    in_domain_lengths=IN_DOMAIN_LENGTHS,
    batch_size: int = BATCH_SIZE,
    track_every: int | None = None,
    track_length: int | None = None,
    n_track: int | None = None,
    device="cpu",
    progress: bool = False,
    sampler: str = "mixed",
) -> dict:
    """B.1.3 for one variant (activation, bias): members are (budget, wd, seed); per-length test accuracy
    (section "Claim 5"). With ``track_every`` the accuracy on ``n_track`` inputs of length
    ``track_length`` is recorded during training (no early stopping). ``sampler``: mixed-length
    batches (``"mixed"``, our stored runs) or single-length ones (``"by_length"``, the released loop)."""
    from lengthgen.engine.train import Validation

    seeds, dev = _seeds(seeds), resolve_device(device)
    act = check_activation(activation)
    test_lengths = _nonempty("test_lengths", test_lengths)
    members = [
        (n, wd, s)
        for n in _nonempty("budgets", budgets)
        for wd in _nonempty("wds", wds)
        for s in seeds
    ]
    train = [train_set(s, p, train_lengths, n) for n, _, s in members]
    model = ModularMLP(p, width, act, bias=bias)
    validation = None
    if track_every:
        bank = test_set(seeds[0], p, track_length, n_track)
        validation = Validation(
            every=track_every,
            bank=(bank.x, bank.y),
            patience=None,
            metric=masked_metric,
        )
    res = fit(
        model,
        train,
        optim=b1_optimizer("muon", lr, [wd for _, wd, _ in members], act, bias),
        steps=steps,
        seeds=[s for _, _, s in members],
        batch_size=batch_size,
        progress=progress,
        desc=f"lengthgen {act}{'+b' if bias else ''}",
        validation=validation,
        device=dev,
        sampler=sampler,
    )
    P = res.final_params
    acc = {"train": accuracy_on(model, P, train, device=dev).tolist()}
    for L in tuple(in_domain_lengths) + tuple(test_lengths):
        tests = {s: test_set(s, p, L, n_test) for s in seeds}
        acc[L] = accuracy_on(
            model, P, [tests[s] for _, _, s in members], device=dev
        ).tolist()
    rows = []
    for i, (n, wd, s) in enumerate(members):
        rows.append(
            {
                "activation": act,
                "bias": bias,
                "n": n,
                "wd": wd,
                "seed": s,
                **{str(k): v[i] for k, v in acc.items()},
            }
        )
    best = max(range(len(members)), key=lambda i: acc[test_lengths[-1]][i])
    return {
        "rows": rows,
        "wall_time_s": res.wall_time_s,
        "steps": res.steps_run,
        "example_W": P["W"][best].tolist(),
        "example_V": P["V"][best].tolist(),
        "example_member": list(members[best]),
        "example_b": P["b"][best].tolist() if bias else None,
        **(
            {
                "track_length": track_length,
                "val_step": res.history["val_step"].tolist(),
                "val_acc": res.history["val_acc"].tolist(),
            }
            if validation is not None
            else {}
        ),
    }


def budget_study(
    *,
    p: int,
    width: int,
    n: int,
    wds,
    seeds,
    steps: int,
    every: int,
    lr: float,
    val_length: int,
    n_val: int,
    n_test: int,
    test_lengths,
    train_lengths=TRAIN_LENGTHS,
    in_domain_lengths=IN_DOMAIN_LENGTHS,
    batch_size: int = BATCH_SIZE,
    device="cpu",
    progress: bool = False,
) -> dict:
    """How far-length accuracy of the biased sine MLP grows with the update budget (B.1.3 setting at p = 17).

    One ensemble over weight decays, trained 4× longer than the length-generalization cells;
    the engine's validation records the accuracy on a fixed bank of length ``val_length`` every
    ``every`` updates (no early stopping; the final parameters are evaluated on every length).
    """
    from lengthgen.engine.train import Validation

    seeds, dev = _seeds(seeds), resolve_device(device)
    members = [(wd, s) for wd in _nonempty("wds", wds) for s in seeds]
    train = [train_set(s, p, train_lengths, n) for _, s in members]
    bank = test_set(seeds[0], p, val_length, n_val)
    model = ModularMLP(p, width, "sine", bias=True)
    res = fit(
        model,
        train,
        optim=b1_optimizer("muon", lr, [wd for wd, _ in members], "sine", True),
        steps=steps,
        seeds=[s for _, s in members],
        batch_size=batch_size,
        progress=progress,
        desc="budget study",
        device=dev,
        validation=Validation(
            every=every, bank=(bank.x, bank.y), patience=None, metric=masked_metric
        ),
    )
    P = res.final_params
    acc = {}
    for L in tuple(in_domain_lengths) + tuple(_nonempty("test_lengths", test_lengths)):
        tests = {s: test_set(s, p, L, n_test) for s in seeds}
        acc[str(L)] = accuracy_on(
            model, P, [tests[s] for _, s in members], device=dev
        ).tolist()
    return {
        "members": [list(m) for m in members],
        "val_length": val_length,
        "val_step": res.history["val_step"].tolist(),
        "val_acc": res.history["val_acc"].tolist(),
        "final_acc": acc,
        "steps": steps,
    }


# --------------------------------------------------------------------------- claim 6: transformer baseline
def transformer_baseline(
    *,
    m: int,
    p: int,
    d_model: int,
    budgets,
    steps: int,
    lr: float,
    seeds,
    n_test: int,
    batch_size: int = BATCH_SIZE,
    device="cpu",
    progress: bool = False,
) -> dict:
    """B.1.4: 1-layer 1-head decoder, FFN activation sine / ReLU / GELU, test accuracy vs training-set size
    (section "Claim 6 — transformer baseline")."""
    from lengthgen.engine.train import train_ensemble

    seeds, dev = _seeds(seeds), resolve_device(device)
    members = [(n, s) for n in _nonempty("budgets", budgets) for s in seeds]
    sets, tests = [], {}
    for n, s in members:
        g = torch.Generator().manual_seed(train_seed(s, m))
        tok = sample_tokens(n, m, p, g)
        sets.append(
            Dataset(addition_sequences(tok, p), labels_of(tok, p), torch.full((n,), m))
        )
    for s in seeds:
        g = torch.Generator().manual_seed(test_seed(s, m))
        tok = sample_tokens(n_test, m, p, g)
        tests[s] = (addition_sequences(tok, p), labels_of(tok, p))
    xtr, ytr = padded_sets(sets, dtype=torch.long)
    xte = torch.stack([tests[s][0] for _, s in members])
    yte = torch.stack([tests[s][1] for _, s in members])
    rows = []
    for act in TRANSFORMER_ACTIVATIONS:
        model = LastTokenDecoder(p, m, act, d_model=d_model)
        params = model.init([s for _, s in members], device=dev)
        note_device(dev)
        sampler = EpochSampler(sets, batch_size, dtype=torch.long)
        res = train_ensemble(
            model,
            params,
            sample=sampler,
            loss=masked_loss,
            optim=OptimConfig("adamw", lr=lr, weight_decay=0.0),
            steps=steps,
            data_seeds=[s for _, s in members],
            progress=progress,
            desc=f"transformer {act}",
        )
        P = {k: v.to(dev) for k, v in res.final_params.items()}
        with torch.no_grad():
            tr = masked_metric(model.forward(P, xtr.to(dev)), ytr.to(dev))[0].tolist()
            te = masked_metric(model.forward(P, xte.to(dev)), yte.to(dev))[0].tolist()
        for (n, s), a, b in zip(members, tr, te):
            rows.append(
                {"activation": act, "n": n, "seed": s, "train_acc": a, "test_acc": b}
            )
    return {"rows": rows, "m": m, "p": p}


# --------------------------------------------------------------------------- epoch timing
def sampler_comparison(
    *,
    p: int,
    width: int,
    n: int,
    wd: float,
    steps: int,
    lr: float,
    seed: int,
    n_test: int,
    test_lengths,
    activation: str = "sine",
    bias: bool = True,
    device="cpu",
) -> list[dict]:
    """Section "Training: protocol and budget": the same B.1.3 run (one member, same seed, data and
    initialisation) trained with mixed-length batches and with the released loop's single-length
    batches. One row per sampler: updates per epoch, epochs run, and the accuracies of :func:`lengthgen`."""
    rows = []
    for name, by_length in (("mixed", False), ("by_length", True)):
        out = lengthgen(
            p=p,
            width=width,
            budgets=(n,),
            wds=(wd,),
            steps=steps,
            lr=lr,
            seeds=(seed,),
            n_test=n_test,
            test_lengths=test_lengths,
            activation=activation,
            bias=bias,
            device=device,
            sampler=name,
        )
        upe = updates_per_epoch(n, TRAIN_LENGTHS, BATCH_SIZE, by_length=by_length)
        rows.append(
            {
                "sampler": name,
                "updates per epoch": upe,
                "epochs": steps / upe,
                **{
                    k: v
                    for k, v in out["rows"][0].items()
                    if k not in ("activation", "bias", "n", "wd", "seed")
                },
            }
        )
    return rows


def _sync(dev: torch.device) -> None:
    if dev.type == "cuda":
        torch.cuda.synchronize(dev)


def epoch_timing(
    p: int = 53, width: int = 1024, n: int = 8000, runs: int = 3, device="cpu"
) -> dict:
    """Seconds for one epoch (n/1024 updates) of the B.1.3 configuration, ``runs`` runs, on ``device``:
    the ensemble engine (one batched program) vs a plain per-run PyTorch loop (nn.Linear +
    torch.optim.Muon) (section "How fast is an epoch?")."""
    runs, dev = check_positive_int("runs", runs), resolve_device(device)
    seeds = (
        list(PAPER_SEEDS[:runs])
        if runs <= len(PAPER_SEEDS)
        else list(range(PAPER_SEEDS[0], PAPER_SEEDS[0] + runs))
    )
    train = [train_set(s, p, TRAIN_LENGTHS, n) for s in seeds]
    steps = -(-n // BATCH_SIZE)
    model = ModularMLP(p, width, "sine")
    _sync(dev)
    t0 = time.perf_counter()
    fit(
        model,
        train,
        optim=OptimConfig("muon", lr=1e-3, weight_decay=0.01, decay=["V"]),
        steps=steps,
        seeds=seeds,
        device=dev,
    )
    _sync(dev)
    engine = time.perf_counter() - t0
    note_device(dev)
    t0 = time.perf_counter()
    for s, d in zip(seeds, train):
        torch.manual_seed(s)
        W = torch.nn.Linear(p, width, bias=False)
        V = torch.nn.Linear(width, p, bias=False)
        torch.nn.init.normal_(W.weight, std=0.01)
        torch.nn.init.normal_(V.weight, std=0.01)
        W, V = W.to(dev), V.to(dev)
        x, y = d.x.to(dev), d.y.to(dev)
        opt = torch.optim.Muon([W.weight, V.weight], lr=1e-3, weight_decay=0.01)
        g = torch.Generator().manual_seed(s)
        perm = torch.randperm(len(d), generator=g).to(dev)
        for k in range(steps):
            idx = perm[k * BATCH_SIZE : (k + 1) * BATCH_SIZE]
            loss = torch.nn.functional.cross_entropy(V(torch.sin(W(x[idx]))), y[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
    _sync(dev)
    loop = time.perf_counter() - t0
    return {
        "p": p,
        "width": width,
        "n": n,
        "runs": runs,
        "updates_per_epoch": steps,
        "engine_s": engine,
        "loop_s": loop,
        "threads": torch.get_num_threads(),
    }


# --------------------------------------------------------------------------- the plan
def lengthgen_cell_name(prefix: str, activation: str, bias: bool) -> str:
    """``<prefix>_<activation>_<bias|nobias>``, e.g. ``lengthgen_sine_bias``."""
    return f"{prefix}_{check_activation(activation)}_{'bias' if bias else 'nobias'}"


def _lengthgen_kwargs(block: dict, activation: str, bias: bool) -> dict:
    return {
        **block,
        "activation": activation,
        "bias": bias,
        "train_lengths": TRAIN_LENGTHS,
        "in_domain_lengths": IN_DOMAIN_LENGTHS,
        "batch_size": BATCH_SIZE,
    }


#: the name of the paper-scale cell (``reproduce ch4 --scale paper``)
PAPER_CELL = f"paper_p{paper.PAPER_RUN['p']}"


def cells(scale: str) -> list[Cell]:
    """The chapter's reproduction plan at ``scale`` (settings of :mod:`.paper`), in run order.
    ``paper``: the one GPU cell of :mod:`.paper_scale` with :data:`paper.PAPER_RUN`."""
    if scale == "paper":
        return [
            Cell(
                PAPER_CELL,
                train_paper_scale,
                dict(paper.PAPER_RUN),
                paper.PAPER_RUN["seeds"],
            )
        ]
    P, C = protocol(scale), checks(scale)
    out = [
        Cell("exhaustive", small_exhaustive, C["exhaustive"]),
        Cell("automaton", automaton_summary, C["automaton"]),
        Cell(f"float_n{C['float']['n']}", float_summary, C["float"]),
        Cell("bounds", relu_bounds_table, C["bounds"]),
        Cell(
            "relu_min_width", relu_min_width, P["relu_width"], P["relu_width"]["seeds"]
        ),
        Cell("two_lengths", two_lengths, P["two_lengths"], P["two_lengths"]["seeds"]),
        Cell(
            "underparam",
            underparam,
            {**P["underparam"], "batch_size": BATCH_SIZE},
            P["underparam"]["seeds"],
        ),
        Cell(
            "overparam",
            overparam,
            {**P["overparam"], "batch_size": BATCH_SIZE},
            P["overparam"]["seeds"],
        ),
    ]
    out += [
        Cell(
            lengthgen_cell_name("lengthgen", a, b),
            lengthgen,
            _lengthgen_kwargs(P["lengthgen"], a, b),
            P["lengthgen"]["seeds"],
        )
        for a, b in LENGTHGEN_VARIANTS
    ]
    out.append(Cell("timing", epoch_timing, C["timing"]))
    if (
        "lengthgen_long" in P
    ):  # the paper's Muon lr (1e-3) with a 10x longer update budget
        out += [
            Cell(
                lengthgen_cell_name("lengthgen_long", a, b),
                lengthgen,
                _lengthgen_kwargs(P["lengthgen_long"], a, b),
                P["lengthgen_long"]["seeds"],
            )
            for a, b in LENGTHGEN_VARIANTS
        ]
    if "lengthgen_paper_lr_60k" in P:
        block = P["lengthgen_paper_lr_60k"]
        out.append(
            Cell(
                lengthgen_cell_name("lengthgen_paper_lr_60k", "sine", True),
                lengthgen,
                _lengthgen_kwargs(block, "sine", True),
                block["seeds"],
            )
        )
    if "budget_study" in P:
        block = P["budget_study"]
        out.append(
            Cell(
                "budget_study",
                budget_study,
                {
                    **block,
                    "train_lengths": TRAIN_LENGTHS,
                    "in_domain_lengths": IN_DOMAIN_LENGTHS,
                    "batch_size": BATCH_SIZE,
                },
                block["seeds"],
            )
        )
    if "transformer" in P:
        block = P["transformer"]
        out.append(
            Cell(
                f"transformer_m{block['m']}",
                transformer_baseline,
                block,
                block["seeds"],
            )
        )
    return out


# --------------------------------------------------------------------------- schemas of the stored kinds
def _n(*sizes) -> int:
    out = 1
    for s in sizes:
        out *= len(s) if hasattr(s, "__len__") else int(s)
    return out


def _count(k: int):
    return lambda data: k


def _summary_schema(kind: str, kw: dict) -> Schema:
    keys = [
        f"{c}@{p}" for p in kw["primes"] for c in ("thm41", "thm42_bias", "fourier")
    ]
    return Schema(
        kind,
        required=tuple(
            f"{k}.{f}"
            for k in keys
            for f in (
                "errors_outside_tie_residues",
                "lengths",
                "n_per_length",
                "max_abs_acc_minus_1_minus_tie_share",
            )
        ),
        probabilities=tuple(
            f"{k}.{f}" for k in keys for f in ("min_acc", "max_acc", "mean_acc")
        ),
        counts=(("", _count(len(keys))),),
    )


def _lengthgen_schema(kw: dict) -> Schema:
    E = _n(kw["budgets"], kw["wds"], kw["seeds"])
    lengths = [
        str(L) for L in tuple(kw["in_domain_lengths"]) + tuple(kw["test_lengths"])
    ]
    tracked = bool(kw.get("track_every"))
    return Schema(
        "ch4 length-generalization cell",
        required=(
            "rows.*.activation",
            "rows.*.bias",
            "rows.*.n",
            "rows.*.wd",
            "rows.*.seed",
            "steps",
            "example_W",
            "example_V",
            "example_member",
            "example_b",
        )
        + (("val_step", "track_length") if tracked else ()),
        probabilities=("rows.*.train",)
        + tuple(f"rows.*.{L}" for L in lengths)
        + (("val_acc.*.*",) if tracked else ()),
        counts=(("rows", _count(E)),)
        + ((("val_acc.*", _count(E)),) if tracked else ()),
    )


def schema_of(cell: Cell) -> Schema:
    """The :class:`lengthgen.store.Schema` a stored value of ``cell`` must satisfy: required keys,
    accuracies in [0, 1], and as many rows / entries as the cell's declared seeds × variants."""
    if not isinstance(cell, Cell):
        raise ConfigError(
            f"schema_of needs a Cell of chapter 4, got {type(cell).__name__}"
        )
    kw, fn = cell.kwargs, cell.fn
    if fn is small_exhaustive:
        cases = sum(1 for p in kw["ps"] for m in kw["ms"] if p**m <= kw["limit"])
        return Schema(
            "ch4 exhaustive check",
            required=("*.p", "*.m", "*.inputs", "*.fourier", "*.fourier_theory"),
            probabilities=("*.thm41", "*.thm42_bias"),
            counts=(("", _count(cases)),),
        )
    if fn is automaton_summary:
        return _summary_schema("ch4 automaton check", kw)
    if fn is float_summary:
        return _summary_schema("ch4 float-network check", kw)
    if fn is relu_bounds_table:
        return Schema(
            "ch4 ReLU bounds",
            required=("*.m", "*.paper_bound", "*.path_bound", "*.construction_width"),
            counts=(("", _count(len(kw["lengths"]))),),
        )
    if fn is relu_min_width:
        L = len(kw["lengths"])
        return Schema(
            "ch4 ReLU minimal width",
            required=("p", "rows.*.width", "rows.*.m", "rows.*.seed"),
            probabilities=("rows.*.train_acc",),
            counts=(
                ("rows", _count(_n(kw["widths"], kw["lengths"], kw["seeds"]))),
                ("min_width", _count(L)),
                ("paper_bound", _count(L)),
                ("path_bound", _count(L)),
                ("construction_width", _count(L)),
            ),
        )
    if fn is two_lengths:
        S = len(kw["seeds"])
        return Schema(
            "ch4 two-lengths cell",
            required=("p", "m1", "m2", "pairs", "runs.*.name", "runs.*.example.W"),
            probabilities=("runs.*.acc_m1.*", "runs.*.acc_m2.*"),
            counts=(
                ("runs", _count(len(TWO_LENGTH_RUNS))),
                ("runs.*.acc_m1", _count(S)),
                ("runs.*.acc_m2", _count(S)),
                ("runs.*.same_prediction_pairs", _count(S)),
            ),
        )
    if fn is underparam:
        E = _n(kw["configs"], ACTIVATIONS, kw["widths"], kw["budgets"], kw["seeds"])
        return Schema(
            "ch4 under-parameterized cell",
            required=tuple(
                f"rows.*.{k}" for k in ("m", "p", "activation", "width", "n", "seed")
            ),
            probabilities=("rows.*.train_acc", "rows.*.test_acc"),
            counts=(("rows", _count(E)),),
        )
    if fn is overparam:
        E = _n(ACTIVATIONS, kw["wds"], kw["seeds"])
        return Schema(
            "ch4 over-parameterized cell",
            required=tuple(
                f"rows.*.{k}"
                for k in (
                    "activation",
                    "wd",
                    "seed",
                    "margin",
                    "norm",
                    "normalized_margin",
                )
            ),
            probabilities=("rows.*.train_acc", "rows.*.test_acc"),
            counts=(("rows", _count(E)),),
        )
    if fn is lengthgen:
        return _lengthgen_schema(kw)
    if fn is budget_study:
        E = _n(kw["wds"], kw["seeds"])
        L = len(kw["in_domain_lengths"]) + len(kw["test_lengths"])
        return Schema(
            "ch4 budget study",
            required=("val_length", "val_step", "steps"),
            probabilities=("final_acc.*.*", "val_acc.*.*"),
            counts=(
                ("members", _count(E)),
                ("final_acc", _count(L)),
                ("final_acc.*", _count(E)),
                ("val_acc.*", _count(E)),
            ),
        )
    if fn is transformer_baseline:
        E = _n(TRANSFORMER_ACTIVATIONS, kw["budgets"], kw["seeds"])
        return Schema(
            "ch4 transformer baseline",
            required=("m", "p", "rows.*.activation", "rows.*.n", "rows.*.seed"),
            probabilities=("rows.*.train_acc", "rows.*.test_acc"),
            counts=(("rows", _count(E)),),
        )
    if fn is train_paper_scale:
        E = len(members_of(kw["variants"], kw["budgets"], kw["wds"], kw["seeds"]))
        L = len(kw["eval_lengths"])
        return Schema(
            "ch4 paper-scale cell",
            required=(
                "progress.done",
                "progress.target",
                "updates_per_epoch",
                "device_name",
                "members.*.activation",
                "members.*.bias",
                "members.*.n",
                "members.*.wd",
                "members.*.seed",
                "history.*.step",
                "final.step",
            ),
            probabilities=(
                "final.train_acc.*",
                "final.acc.*.*",
                "history.*.train_acc.*",
                "history.*.acc.*.*",
            ),
            counts=(
                ("members", _count(E)),
                ("final.train_acc", _count(E)),
                ("final.acc", _count(L)),
                ("final.acc.*", _count(E)),
            ),
        )
    if fn is epoch_timing:
        return Schema(
            "ch4 epoch timing",
            required=(
                "p",
                "width",
                "n",
                "runs",
                "updates_per_epoch",
                "engine_s",
                "loop_s",
                "threads",
            ),
        )
    raise ConfigError(f"no schema for cell {cell.name!r} (function {fn.__name__})")


# --------------------------------------------------------------------------- reading the stored full run
def _cells_folder(folder=None) -> Path:
    from lengthgen.store import results_dir

    return Path(folder) if folder is not None else results_dir() / "ch4" / "cells"


def load_stored_cell(name: str, *, folder=None) -> dict:
    """The stored cell ``name`` (full scale, or the paper-scale :data:`PAPER_CELL`) as
    ``{"provenance", "data", "path"}``, after checking that it was computed with today's
    configuration (same hash) and satisfies its schema; the paper-scale cell may be partial (its
    ``progress`` says how far it got). Raises :class:`lengthgen.store.ResultFileError` naming the
    file otherwise."""
    from lengthgen.engine import runs

    scale = "paper" if name == PAPER_CELL else "full"
    plan = {c.name: c for c in cells(scale)}
    if name not in plan:
        names = [c.name for c in cells("full")] + [PAPER_CELL]
        raise ConfigError(
            f"chapter 4 has no stored cell {name!r}; cells: {', '.join(names)}"
        )
    folder = _cells_folder(folder)
    state = runs.stored_state(folder, plan[name], scale)
    if state not in (("done", "partial") if scale == "paper" else ("done",)):
        raise ResultFileError(
            f"{runs.cell_path(folder, name)}: stored ch4 cell {name!r} is {state} for today's "
            f"{scale}-scale plan (run: python -m lengthgen reproduce ch4 --scale {scale} "
            f"--only {name})"
        )
    return runs.load_stored(
        "ch4", name, schema=schema_of(plan[name]), folder=folder, scale=scale
    )


def stored_label_of(records: dict) -> str:
    """One line describing several stored cells (devices, torch, commits, summed wall time, dates)."""
    provs = [r["provenance"] for r in records.values()]
    if not provs:
        raise ConfigError("stored_label_of needs at least one stored cell")
    devices = sorted({str(p.get("device")) for p in provs})
    torches = sorted({str(p.get("torch_version")) for p in provs})
    commits = sorted({(p.get("git_commit") or "unknown")[:8] for p in provs})
    days = sorted({str(p.get("date", ""))[:10] for p in provs})
    wall = sum(p.get("wall_time_s") or 0.0 for p in provs)
    migrated = sum(1 for p in provs if p.get("migrated"))
    return (
        f"stored {provs[0].get('scale')} run: {len(provs)} cells ({', '.join(devices)}, torch {', '.join(torches)}, "
        f"{len(commits)} commit{'s' if len(commits) > 1 else ''}, {wall:,.0f} s of cell wall time, "
        f"{' to '.join([days[0], days[-1]] if len(days) > 1 else days)}"
        + (f"; {migrated} migrated from the old store" if migrated else "")
        + ")"
    )


def _gather(layout: dict, folder=None) -> dict:
    recs = {}
    data = {}
    for key, names in layout.items():
        got = [
            load_stored_cell(n, folder=folder)
            for n in ([names] if isinstance(names, str) else names)
        ]
        recs.update(
            {n: r for n, r in zip([names] if isinstance(names, str) else names, got)}
        )
        data[key] = (
            got[0]["data"] if isinstance(names, str) else [r["data"] for r in got]
        )
    return {
        "data": data,
        "provenance": {n: r["provenance"] for n, r in recs.items()},
        "paths": [r["path"] for r in recs.values()],
        "label": stored_label_of(recs),
    }


def stored_constructions(folder=None) -> dict:
    """The stored full-scale cells of claims 1–2, ``{"data": {"exhaustive", "automaton", "float",
    "bounds", "relu_min_width", "two_lengths"}, "provenance": {cell: ...}, "paths", "label"}``,
    each checked as in :func:`load_stored_cell`."""
    return _gather(
        {
            "exhaustive": "exhaustive",
            "automaton": "automaton",
            "float": f"float_n{checks('full')['float']['n']}",
            "bounds": "bounds",
            "relu_min_width": "relu_min_width",
            "two_lengths": "two_lengths",
        },
        folder,
    )


def stored_paper_scale(folder=None) -> dict:
    """The stored paper-scale GPU cell (:data:`PAPER_CELL`), shaped like :func:`stored_constructions`
    with ``data["paper"]``; checked as in :func:`load_stored_cell`."""
    return _gather({"paper": PAPER_CELL}, folder)


def paper_scale_rows(value: dict) -> list[dict]:
    """One row per member of a paper-scale value at its last evaluation, in the shape of the
    length-generalization cells' rows: ``activation, bias, n, wd, seed, epochs, train`` and one
    accuracy per evaluation length (keys ``str(m)``)."""
    fin = value["final"]
    return [
        {
            **m,
            "train": fin["train_acc"][i],
            **{L: acc[i] for L, acc in fin["acc"].items()},
        }
        for i, m in enumerate(value["members"])
    ]


def paper_scale_at(value: dict, index: int) -> dict:
    """The paper-scale value as it stood at evaluation ``index`` of its history (negative indices
    count from the end): the same value with that evaluation's accuracies as ``final``, so the
    readers of the last evaluation (:func:`paper_scale_rows`, the p = 53 claims) read it there."""
    hist = value.get("history") or []
    if not hist:
        raise ConfigError(
            "the paper-scale value has no evaluation history (the run stored no evaluation yet)"
        )
    if isinstance(index, bool) or not isinstance(index, int):
        raise ConfigError(f"index must be an integer, got {index!r}")
    if not -len(hist) <= index < len(hist):
        raise ConfigError(
            f"index must address one of the {len(hist)} evaluations, got {index}"
        )
    h = hist[index]
    return {
        **value,
        "final": {"step": h["step"], "train_acc": h["train_acc"], "acc": h["acc"]},
    }


def _variant_of(m: dict) -> str:
    return (
        "relu" if m["activation"] == "relu" else ("sine+bias" if m["bias"] else "sine")
    )


def _check_budget(value: dict, n) -> int:
    budgets = sorted({m["n"] for m in value["members"]})
    if n not in budgets:
        raise ConfigError(f"n must be one of the run's budgets {budgets}, got {n!r}")
    return n


def paper_scale_ranges(value: dict, n: int) -> dict:
    """Per (variant, weight decay) at budget ``n``: the lowest and highest seed-mean accuracy over the
    held-out evaluation lengths (those that are not training lengths) at the last evaluation of a
    paper-scale value -- the ranges the chapter's section "At the paper's modulus, on a GPU" quotes.
    Keys ``(variant, wd)`` with variant ``sine``, ``sine+bias`` or ``relu``; values ``(lo, hi)``."""
    n = _check_budget(value, n)
    rows = [r for r in paper_scale_rows(value) if r["n"] == n]
    held = [str(L) for L in value["eval_lengths"] if L not in value["train_lengths"]]
    out = {}
    for key in sorted({(_variant_of(r), r["wd"]) for r in rows}):
        group = [r for r in rows if (_variant_of(r), r["wd"]) == key]
        means = [float(np.mean([r[L] for r in group])) for L in held]
        out[key] = (min(means), max(means))
    return out


def paper_scale_arrivals(
    value: dict, n: int, *, length: int = 811, level: float = 0.9
) -> dict:
    """Per member of budget ``n`` (keys ``(variant, wd, seed)``): the first evaluated update at which
    its accuracy at test length ``length`` reached ``level``, or ``None`` if it never did -- when
    extrapolation "arrives" in the chapter's section "At the paper's modulus, on a GPU"."""
    if not value.get("history"):
        raise ConfigError(
            "the paper-scale value has no evaluation history (the run stored no evaluation yet)"
        )
    if str(length) not in value["history"][0]["acc"]:
        raise ConfigError(
            f"length must be one of the evaluated lengths {value['eval_lengths']}, got {length!r}"
        )
    level = check_probability("level", level)
    n = _check_budget(value, n)
    out = {}
    for i, m in enumerate(value["members"]):
        if m["n"] != n:
            continue
        hit = [e["step"] for e in value["history"] if e["acc"][str(length)][i] >= level]
        out[(_variant_of(m), m["wd"], m["seed"])] = hit[0] if hit else None
    return out


def stored_training(folder=None) -> dict:
    """The stored full-scale training cells (claims 3–6 and the timing), shaped like
    :func:`stored_constructions`: ``data`` holds ``underparam``, ``overparam``, ``lengthgen`` (one
    entry per :data:`~.paper.LENGTHGEN_VARIANTS`), ``timing``, ``lengthgen_long`` (likewise),
    ``lengthgen_paper_lr_60k``, ``budget_study`` and ``transformer``."""
    P = protocol("full")
    return _gather(
        {
            "underparam": "underparam",
            "overparam": "overparam",
            "lengthgen": [
                lengthgen_cell_name("lengthgen", a, b) for a, b in LENGTHGEN_VARIANTS
            ],
            "timing": "timing",
            "lengthgen_long": [
                lengthgen_cell_name("lengthgen_long", a, b)
                for a, b in LENGTHGEN_VARIANTS
            ],
            "lengthgen_paper_lr_60k": lengthgen_cell_name(
                "lengthgen_paper_lr_60k", "sine", True
            ),
            "budget_study": "budget_study",
            "transformer": f"transformer_m{P['transformer']['m']}",
        },
        folder,
    )
