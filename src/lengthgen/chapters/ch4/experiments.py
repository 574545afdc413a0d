"""Chapter 4 (Huang & Li, sine activation for modular addition): experiments and the full run.

Every experiment is a function of the scale (``smoke`` for the notebook, ``full`` for the stored
run) returning a JSON-ready dict; :func:`reproduce` runs the full set through a
:class:`~lengthgen.store.ResultStore` (one key per sweep cell, so an interrupted run resumes) and
writes ``results/ch4/*.json`` with provenance. All training goes through the ensemble engine
(:func:`lengthgen.chapters.ch4.modular.fit` → :func:`lengthgen.engine.train.train_ensemble`).

The paper trains each run for up to 300,000 epochs on a GPU. Our full protocol (:data:`PROTOCOL`)
is a fixed number of optimizer updates per run, sized so that the whole full run fits in about
40 minutes of one shared CPU core; the chapter records this (and the reduced widths, grids and
seeds) as deviations in the ledger.
"""
from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import torch

from lengthgen.chapters.ch4 import modular as M
from lengthgen.config import check_choice, get_scale
from lengthgen.store import ResultStore, load_result, provenance, save_result

# --------------------------------------------------------------------------- protocol
#: Per-scale settings. ``steps`` are optimizer updates (batch 1024); see the module docstring.
PROTOCOL = {
    "smoke": {
        "relu_width": {"p": 3, "lengths": (3, 6), "widths": (2, 4, 8), "steps": 300, "lr": 3e-3,
                       "seeds": (1337,)},
        "two_lengths": {"p": 5, "m1": 4, "m2": 6, "width": 32, "steps": 300, "lr": 1e-2, "seeds": (1337,)},
        "underparam": {"configs": ((4, 17),), "widths": (8,), "budgets": (500,), "steps": 300,
                       "lr": 1e-2, "seeds": (1337,), "n_test": 1000},
        "overparam": {"m": 4, "p": 17, "width": 32, "n": 300, "wds": (0.0, 0.1, 1.0), "steps": 200,
                      "lr": 3e-2, "seeds": (1337,), "n_test": 1000},
        "lengthgen": {"p": 17, "width": 32, "budgets": (500,), "wds": (0.1,), "steps": 200,
                      "lr": 3e-2, "seeds": (1337,), "n_test": 500, "test_lengths": (14, 53, 201)},
        "transformer": {"m": 3, "p": 17, "d_model": 32, "budgets": (200,), "steps": 20, "lr": 1e-2,
                        "seeds": (1337,), "n_test": 500, "batch_size": 256},
        "budget_study": {"p": 17, "width": 32, "n": 500, "wds": (0.3,), "seeds": (1337,), "steps": 100, "every": 50,
                         "lr": 3e-2, "val_length": 201, "n_val": 200, "n_test": 200, "test_lengths": (14, 53)},
    },
    "full": {
        "relu_width": {"p": 3, "lengths": (6, 12, 24, 48), "widths": (4, 8, 16, 32, 64),
                       "steps": 3000, "lr": 3e-3, "seeds": (1337,)},
        "two_lengths": {"p": 5, "m1": 4, "m2": 6, "width": 64, "steps": 3000, "lr": 1e-2, "seeds": (1337, 1338)},
        "underparam": {"configs": ((4, 17), (3, 23)), "widths": (8, 16, 32), "budgets": (500, 1000, 2000, 4000),
                       "steps": 1500, "lr": 1e-2, "seeds": (1337, 1338), "n_test": 10_000},
        "overparam": {"m": 4, "p": 17, "width": 128, "n": 500, "wds": (0.0, 0.01, 0.03, 0.1, 0.3, 1.0),
                      "steps": 1500, "lr": 3e-2, "seeds": (1337,), "n_test": 10_000},
        "lengthgen": {"p": 17, "width": 128, "budgets": (500, 2000), "wds": (0.03, 0.1, 0.3), "steps": 2000,
                      "lr": 3e-2, "seeds": (1337,), "n_test": 10_000, "test_lengths": M.OOD_LENGTHS},
        "transformer": {"m": 3, "p": 17, "d_model": 32, "budgets": (500, 1000, 2000), "steps": 800,
                        "lr": 1e-2, "seeds": (1337,), "n_test": 2000, "batch_size": 512},
        "lengthgen_long": {"p": 17, "width": 128, "budgets": (2000, 8000), "wds": (0.03, 0.1, 0.3), "steps": 20_000,
                           "lr": 1e-3, "seeds": (1337,), "n_test": 10_000, "test_lengths": M.OOD_LENGTHS,
                           "track_every": 1000, "track_length": 201, "n_track": 1000},
        "lengthgen_paper_lr_60k": {"p": 17, "width": 128, "budgets": (8000,), "wds": (0.03, 0.1, 0.3), "steps": 60_000,
                                   "lr": 1e-3, "seeds": (1337,), "n_test": 10_000, "test_lengths": M.OOD_LENGTHS,
                                   "track_every": 2000, "track_length": 811, "n_track": 1000},
        "budget_study": {"p": 17, "width": 128, "n": 2000, "wds": (0.1, 0.3), "seeds": (1337,), "steps": 8000,
                         "every": 500, "lr": 3e-2, "val_length": 201, "n_val": 2000, "n_test": 10_000,
                         "test_lengths": M.OOD_LENGTHS},
    },
}
#: The paper's settings that our protocol changes (recorded in the ledger as deviations).
PAPER_PROTOCOL = {
    "budget": "up to 300,000 epochs per run (batch 1024), final checkpoint",
    "moduli": "(m, p) = (2, 307), (4, 53), (3, 97) (B.1.1–B.1.2); p = 97 and 53 (B.1.3)",
    "learning rates": "AdamW 1e-3 (B.1.1); Muon 1e-3 (B.1.2–B.1.3)",
    "width (B.1.3)": "1024", "seeds": "1337, 1338, 1339",
    "Newton–Schulz dtype": "bfloat16 (PyTorch Muon)",
}


def protocol(scale: str | None = None) -> dict:
    """The settings of :data:`PROTOCOL` for ``scale`` (default: the LENGTHGEN_SCALE knob)."""
    return PROTOCOL[check_choice("scale", get_scale(scale), tuple(PROTOCOL))]


# --------------------------------------------------------------------------- claim 1: constructions
def small_exhaustive(ps=(2, 3, 4, 5, 6, 7, 11), ms=(1, 2, 3, 4), limit: int = 20_000) -> list[dict]:
    """Every construction on every ordered input of length m, for small (m, p) with p^m ≤ ``limit``."""
    rows = []
    for p in ps:
        for m in ms:
            if p ** m > limit:
                continue
            row = {"p": p, "m": m, "inputs": p ** m,
                   "thm41": M.exhaustive_accuracy(M.construct_fixed_length(m, p), m)["acc"],
                   "thm42_bias": M.exhaustive_accuracy(M.construct_with_bias(p), m)["acc"],
                   "fourier": M.exhaustive_accuracy(M.construct_fourier(p), m)["acc"] if p >= 3 else None,
                   "fourier_theory": M.fourier_accuracy(p) if p >= 3 else None}
            rows.append(row)
    return rows


def long_length_checks(primes=(97, 53), max_m: int = 811, n: int = 10_000, seed: int = 0) -> dict:
    """Exact checks (phase automaton) of the three sine constructions at every m ≤ ``max_m``."""
    out = {}
    for p in primes:
        fam = M.automaton_accuracy(None, p, max_m, n=n, seed=seed, fixed_length_family=True)
        bias = M.automaton_accuracy(M.construct_with_bias(p), p, max_m, n=n, seed=seed + 1)
        four = M.automaton_accuracy(M.construct_fourier(p), p, max_m, n=n, seed=seed + 2)
        out[p] = {"thm41": fam, "thm42_bias": bias, "fourier": four}
    return out


def float_network_checks(primes=(97, 53), max_m: int = 811, n: int = 10_000, lengths=None, seed: int = 10) -> dict:
    """The same constructions evaluated directly as float64 networks ``V sin(W x + b)``."""
    out = {}
    for p in primes:
        out[p] = {
            "thm41": M.accuracy_by_length(None, p, max_m, n=n, seed=seed, lengths=lengths, fixed_length_family=True),
            "thm42_bias": M.accuracy_by_length(M.construct_with_bias(p), p, max_m, n=n, seed=seed + 1, lengths=lengths),
            "fourier": M.accuracy_by_length(M.construct_fourier(p), p, max_m, n=n, seed=seed + 2, lengths=lengths),
        }
    return out


def summarize_checks(checks: dict) -> dict:
    """Min/max accuracy per construction and prime, and the largest gap to 1 − (tie-residue share)."""
    out = {}
    for p, d in checks.items():
        for name, r in d.items():
            acc = np.array(r["acc"]); tie = np.array(r["tie_residue_frac"])
            out[f"{name}@{p}"] = {"min_acc": float(acc.min()), "max_acc": float(acc.max()),
                                  "max_abs_acc_minus_1_minus_tie_share": float(np.abs(acc - (1 - tie)).max()),
                                  "errors_outside_tie_residues": int(r["errors_outside_tie_residues"]),
                                  "lengths": len(acc), "n_per_length": int(r["n"]),
                                  "mean_acc": float(acc.mean())}
    return out


# --------------------------------------------------------------------------- claim 2: ReLU limits
def relu_bounds_table(p: int = 97, lengths=(14, 38, 53, 97, 201, 303, 401, 512, 602, 705, 811)) -> list[dict]:
    """Thm 4.3's bound, our path bound and the width of our explicit interpolant at each m."""
    return [{"m": m, "paper_bound": M.relu_width_lower_bound(m, p), "path_bound": M.path_lower_bound(m, p),
             "construction_width": 2 + len(M.relu_kinks(m, p))} for m in lengths]


def _all_length_set(m: int, p: int) -> M.Dataset:
    X = M.all_count_vectors(m, p)
    return M.Dataset(X.float(), M.labels_of_counts(X, p), torch.full((X.shape[0],), m))


def relu_min_width(cfg: dict, progress: bool = False) -> dict:
    """Train bias-free ReLU MLPs on all of X_m (full batch, Adam) for each width; record train accuracy.

    One ensemble per width; its members are (length, seed) pairs (padded full batches).
    """
    from lengthgen.engine.train import OptimConfig

    p = cfg["p"]
    sets = {m: _all_length_set(m, p) for m in cfg["lengths"]}
    members = [(m, s) for m in cfg["lengths"] for s in cfg["seeds"]]
    rows = []
    for w in cfg["widths"]:
        model = M.ModularMLP(p, w, "relu", bias=False)
        ds = [sets[m] for m, _ in members]
        bs = max(len(d) for d in ds)
        res = M.fit(model, ds, optim=OptimConfig("adam", lr=cfg["lr"]), steps=cfg["steps"],
                    seeds=[s for _, s in members], batch_size=bs, progress=progress, desc=f"relu w={w}")
        acc = M.accuracy_on(model, res.final_params, ds)
        for (m, s), a in zip(members, acc.tolist()):
            rows.append({"width": w, "m": m, "seed": s, "train_acc": a})
    minw = {}
    for m in cfg["lengths"]:
        ok = sorted({r["width"] for r in rows if r["m"] == m and r["train_acc"] == 1.0})
        minw[m] = ok[0] if ok else None
    return {"rows": rows, "min_width": minw, "p": p,
            "paper_bound": {m: M.relu_width_lower_bound(m, p) for m in cfg["lengths"]},
            "path_bound": {m: M.path_lower_bound(m, p) for m in cfg["lengths"]},
            "construction_width": {m: 2 + len(M.relu_kinks(m, p)) for m in cfg["lengths"]}}


def two_lengths(cfg: dict, progress: bool = False) -> dict:
    """Thm 4.4: bias-free ReLU trained on X_m1 alone, on X_m1 ∪ X_m2, and a ReLU with bias on the union."""
    from lengthgen.engine.train import OptimConfig

    p, m1, m2 = cfg["p"], cfg["m1"], cfg["m2"]
    a, b = _all_length_set(m1, p), _all_length_set(m2, p)
    union = M.Dataset(torch.cat([a.x, b.x]), torch.cat([a.y, b.y]), torch.cat([a.m, b.m]))
    pairs = M.homogeneous_pairs(m1, m2, p)
    out = {"p": p, "m1": m1, "m2": m2, "pairs": len(pairs["pairs"]), "runs": []}
    for name, bias, data in (("relu, X_m1 only", False, a), ("relu, X_m1 ∪ X_m2", False, union),
                             ("relu + bias, X_m1 ∪ X_m2", True, union)):
        model = M.ModularMLP(p, cfg["width"], "relu", bias=bias)
        seeds = list(cfg["seeds"])
        res = M.fit(model, [data] * len(seeds), optim=OptimConfig("adam", lr=cfg["lr"]), steps=cfg["steps"],
                    seeds=seeds, batch_size=len(data), progress=progress, desc=name)
        P = res.final_params
        acc1 = M.accuracy_on(model, P, a).tolist()
        acc2 = M.accuracy_on(model, P, b).tolist()
        # predictions at the paired inputs (m1/g) z and (m2/g) z
        same = []
        for e in range(len(seeds)):
            net = M.Network(P["W"][e].double(), P["V"][e].double(), "relu", P["b"][e].double() if bias else None)
            same.append(sum(int(net.predict(x1, 0.0)) == int(net.predict(x2, 0.0)) for x1, x2, _, _ in pairs["pairs"]))
        out["runs"].append({"name": name, "bias": bias, "acc_m1": acc1, "acc_m2": acc2, "same_prediction_pairs": same,
                            "example": {"W": P["W"][0].tolist(), "V": P["V"][0].tolist(),
                                        "b": P["b"][0].tolist() if bias else None}})
    return out


# --------------------------------------------------------------------------- claims 3–5: training
def _optim(name: str, lr: float, wds, activation: str, bias: bool):
    """B.1: AdamW (wd 0) or Muon with decoupled decay on V (sine) or on W and V (ReLU); the bias by AdamW, no decay."""
    from lengthgen.engine.train import OptimConfig

    decay = ["V"] if activation == "sine" else ["W", "V"]
    if name == "adamw":
        return OptimConfig("adamw", lr=lr, weight_decay=wds, decay=decay)
    return OptimConfig("muon", lr=lr, weight_decay=wds, decay=decay, muon_params=["W", "V"], ns_dtype="float32",
                       adamw_params=["b"] if bias else ())


def underparam(cfg: dict, progress: bool = False) -> dict:
    """B.1.1: sine vs ReLU at matched (m, p, width, n), AdamW lr 1e-3, wd 0, batch 1024.

    One ensemble per (config, activation, width); members are (budget, seed). Training sets of
    one seed are prefixes of each other across budgets; test sets are fixed per (seed, m).
    """
    rows = []
    for m, p in cfg["configs"]:
        members = [(n, s) for n in cfg["budgets"] for s in cfg["seeds"]]
        train = [M.train_set(s, p, (m,), n) for n, s in members]
        tests = {s: M.test_set(s, p, m, cfg["n_test"]) for s in cfg["seeds"]}
        for act in M.ACTIVATIONS:
            for w in cfg["widths"]:
                model = M.ModularMLP(p, w, act)
                res = M.fit(model, train, optim=_optim("adamw", cfg["lr"], 0.0, act, False), steps=cfg["steps"],
                            seeds=[s for _, s in members], progress=progress, desc=f"under m={m} p={p} {act} d={w}")
                tr = M.accuracy_on(model, res.final_params, train).tolist()
                te = M.accuracy_on(model, res.final_params, [tests[s] for _, s in members]).tolist()
                for (n, s), a, b in zip(members, tr, te):
                    rows.append({"m": m, "p": p, "activation": act, "width": w, "n": n, "seed": s,
                                 "train_acc": a, "test_acc": b})
    return {"rows": rows}


def overparam(cfg: dict, progress: bool = False) -> dict:
    """B.1.2: Muon with a weight-decay sweep; train/test accuracy and normalized 0.5%-margins."""
    m, p = cfg["m"], cfg["p"]
    members = [(wd, s) for wd in cfg["wds"] for s in cfg["seeds"]]
    train = [M.train_set(s, p, (m,), cfg["n"]) for _, s in members]
    tests = {s: M.test_set(s, p, m, cfg["n_test"]) for s in cfg["seeds"]}
    rows = []
    for act in M.ACTIVATIONS:
        model = M.ModularMLP(p, cfg["width"], act)
        res = M.fit(model, train, optim=_optim("muon", cfg["lr"], [wd for wd, _ in members], act, False),
                    steps=cfg["steps"], seeds=[s for _, s in members], progress=progress, desc=f"over {act}")
        P = res.final_params
        tr = M.accuracy_on(model, P, train).tolist()
        te = M.accuracy_on(model, P, [tests[s] for _, s in members]).tolist()
        mg = M.train_margins(model, P, train)
        for i, (wd, s) in enumerate(members):
            rows.append({"activation": act, "wd": wd, "seed": s, "train_acc": tr[i], "test_acc": te[i],
                         "margin": mg["margin"][i], "norm": mg["norm"][i], "normalized_margin": mg["normalized"][i]})
    return {"rows": rows, "m": m, "p": p, "width": cfg["width"], "n": cfg["n"]}


LENGTHGEN_VARIANTS = (("sine", False), ("sine", True), ("relu", False))


def lengthgen(cfg: dict, variant: tuple[str, bool], progress: bool = False) -> dict:
    """B.1.3 for one variant (activation, bias): members are (budget, wd, seed); per-length test accuracy."""
    act, bias = variant
    p = cfg["p"]
    members = [(n, wd, s) for n in cfg["budgets"] for wd in cfg["wds"] for s in cfg["seeds"]]
    train = [M.train_set(s, p, M.TRAIN_LENGTHS, n) for n, _, s in members]
    model = M.ModularMLP(p, cfg["width"], act, bias=bias)
    validation = None
    if cfg.get("track_every"):      # record accuracy at one far length during training (no early stopping)
        from lengthgen.engine.train import Validation

        bank = M.test_set(cfg["seeds"][0], p, cfg["track_length"], cfg["n_track"])
        validation = Validation(every=cfg["track_every"], bank=(bank.x, bank.y), patience=None, metric=M.masked_metric)
    res = M.fit(model, train, optim=_optim("muon", cfg["lr"], [wd for _, wd, _ in members], act, bias),
                steps=cfg["steps"], seeds=[s for _, _, s in members], progress=progress,
                desc=f"lengthgen {act}{'+b' if bias else ''}", validation=validation)
    P = res.final_params
    acc = {"train": M.accuracy_on(model, P, train).tolist()}
    for L in tuple(M.IN_DOMAIN_LENGTHS) + tuple(cfg["test_lengths"]):
        tests = {s: M.test_set(s, p, L, cfg["n_test"]) for s in cfg["seeds"]}
        acc[L] = M.accuracy_on(model, P, [tests[s] for _, _, s in members]).tolist()
    rows = []
    for i, (n, wd, s) in enumerate(members):
        rows.append({"activation": act, "bias": bias, "n": n, "wd": wd, "seed": s,
                     **{str(k): v[i] for k, v in acc.items()}})
    best = max(range(len(members)), key=lambda i: acc[cfg["test_lengths"][-1]][i])
    return {"rows": rows, "wall_time_s": res.wall_time_s, "steps": res.steps_run,
            "example_W": P["W"][best].tolist(), "example_V": P["V"][best].tolist(),
            "example_member": list(members[best]), "example_b": P["b"][best].tolist() if bias else None,
            **({"track_length": cfg["track_length"], "val_step": res.history["val_step"].tolist(),
                "val_acc": res.history["val_acc"].tolist()} if validation is not None else {})}


def epoch_timing(p: int = 53, width: int = 1024, n: int = 8000, runs: int = 3) -> dict:
    """Seconds for one epoch (n/1024 updates) of the B.1.3 configuration, ``runs`` runs:
    the ensemble engine (one batched program) vs a plain per-run PyTorch loop (nn.Linear + torch.optim.Muon)."""
    from lengthgen.engine.train import OptimConfig

    seeds = list(M.PAPER_SEEDS[:runs]) if runs <= 3 else list(range(1337, 1337 + runs))
    train = [M.train_set(s, p, M.TRAIN_LENGTHS, n) for s in seeds]
    steps = -(-n // 1024)
    model = M.ModularMLP(p, width, "sine")
    t0 = time.perf_counter()
    M.fit(model, train, optim=OptimConfig("muon", lr=1e-3, weight_decay=0.01, decay=["V"]), steps=steps, seeds=seeds)
    engine = time.perf_counter() - t0
    t0 = time.perf_counter()
    for s, d in zip(seeds, train):
        torch.manual_seed(s)
        W = torch.nn.Linear(p, width, bias=False)
        V = torch.nn.Linear(width, p, bias=False)
        torch.nn.init.normal_(W.weight, std=0.01); torch.nn.init.normal_(V.weight, std=0.01)
        opt = torch.optim.Muon([W.weight, V.weight], lr=1e-3, weight_decay=0.01)
        g = torch.Generator().manual_seed(s)
        perm = torch.randperm(len(d), generator=g)
        for k in range(steps):
            idx = perm[k * 1024:(k + 1) * 1024]
            loss = torch.nn.functional.cross_entropy(V(torch.sin(W(d.x[idx]))), d.y[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
    loop = time.perf_counter() - t0
    return {"p": p, "width": width, "n": n, "runs": runs, "updates_per_epoch": steps,
            "engine_s": engine, "loop_s": loop, "threads": torch.get_num_threads()}


def budget_study(cfg: dict, progress: bool = False) -> dict:
    """How far-length accuracy of the biased sine MLP grows with the update budget (B.1.3 setting at p = 17).

    One ensemble over weight decays, trained 4× longer than the length-generalization cells;
    the engine's validation records the accuracy on a fixed bank of length ``val_length`` every
    ``every`` updates (no early stopping; the final parameters are evaluated on every length).
    """
    from lengthgen.engine.train import Validation

    p = cfg["p"]
    members = [(wd, s) for wd in cfg["wds"] for s in cfg["seeds"]]
    train = [M.train_set(s, p, M.TRAIN_LENGTHS, cfg["n"]) for _, s in members]
    bank = M.test_set(cfg["seeds"][0], p, cfg["val_length"], cfg["n_val"])
    model = M.ModularMLP(p, cfg["width"], "sine", bias=True)
    res = M.fit(model, train, optim=_optim("muon", cfg["lr"], [wd for wd, _ in members], "sine", True),
                steps=cfg["steps"], seeds=[s for _, s in members], progress=progress, desc="budget study",
                validation=Validation(every=cfg["every"], bank=(bank.x, bank.y), patience=None, metric=M.masked_metric))
    P = res.final_params
    acc = {}
    for L in tuple(M.IN_DOMAIN_LENGTHS) + tuple(cfg["test_lengths"]):
        tests = {s: M.test_set(s, p, L, cfg["n_test"]) for s in cfg["seeds"]}
        acc[str(L)] = M.accuracy_on(model, P, [tests[s] for _, s in members]).tolist()
    return {"members": [list(m) for m in members], "val_length": cfg["val_length"],
            "val_step": res.history["val_step"].tolist(), "val_acc": res.history["val_acc"].tolist(),
            "final_acc": acc, "steps": cfg["steps"]}


# --------------------------------------------------------------------------- claim 6: transformer baseline
def addition_sequences(tokens: torch.Tensor, p: int) -> torch.Tensor:
    """B.1.4 tokenisation: ``x1 + x2 + … + xm =`` with ``+`` = id p and ``=`` = id p+1; [n, 2m]."""
    tok = M.check_tokens(tokens, p)
    n, m = tok.shape
    seq = torch.full((n, 2 * m), p, dtype=torch.long)
    seq[:, 0::2] = tok
    seq[:, -1] = p + 1
    return seq


class LastTokenDecoder:
    """The chapter-3 :class:`~lengthgen.nn.decoder.Decoder` read out at the last position (the ``=``).

    B.1.4 initialisation: every linear and embedding weight i.i.d. N(0, 0.01²), linear biases 0,
    LayerNorm gains 1 and biases 0.
    """

    def __init__(self, p: int, m: int, activation: str, d_model: int = 64, init_std: float = 0.01):
        from lengthgen.nn.decoder import Decoder

        self.p, self.m = M.check_modulus(p), M.check_length(m)
        self.dec = Decoder("learned_abs", n_layers=1, n_heads=1, d_model=d_model, vocab=p + 2,
                           activation=activation, L0=2 * m, n_out=p)
        self.init_std = init_std

    def init(self, seeds, dtype=torch.float32, device=None):
        params = self.dec.init(seeds, dtype=dtype, device=device)
        for e, s in enumerate(seeds):
            g = torch.Generator().manual_seed(int(s) + 7919)
            for name, t in params.items():
                leaf = name.split(".")[-1]
                if leaf.endswith("_g"):
                    continue
                if leaf.startswith("b") or leaf.endswith("_b"):
                    t[e].zero_()
                else:
                    t[e].copy_(torch.randn(t[e].shape, generator=g) * self.init_std)
        return params

    def forward(self, params, x):
        return self.dec.forward(params, x.long())[:, :, -1]


def transformer_baseline(cfg: dict, progress: bool = False) -> dict:
    """B.1.4: 1-layer 1-head decoder, FFN activation sine / ReLU / GELU, test accuracy vs training-set size."""
    from lengthgen.engine.train import OptimConfig, train_ensemble

    m, p = cfg["m"], cfg["p"]
    members = [(n, s) for n in cfg["budgets"] for s in cfg["seeds"]]
    sets, tests = [], {}
    for n, s in members:
        g = torch.Generator().manual_seed(M.train_seed(s, m))
        tok = M.sample_tokens(n, m, p, g)
        sets.append(M.Dataset(addition_sequences(tok, p), M.labels_of(tok, p), torch.full((n,), m)))
    for s in cfg["seeds"]:
        g = torch.Generator().manual_seed(M.test_seed(s, m))
        tok = M.sample_tokens(cfg["n_test"], m, p, g)
        tests[s] = (addition_sequences(tok, p), M.labels_of(tok, p))
    rows = []
    for act in ("sine", "relu", "gelu"):
        model = LastTokenDecoder(p, m, act, d_model=cfg["d_model"])
        params = model.init([s for _, s in members])
        sampler = M.EpochSampler(sets, cfg.get("batch_size", 1024), dtype=torch.long)
        res = train_ensemble(model, params, sample=sampler, loss=M.masked_loss,
                             optim=OptimConfig("adamw", lr=cfg["lr"], weight_decay=0.0), steps=cfg["steps"],
                             data_seeds=[s for _, s in members], progress=progress, desc=f"transformer {act}")
        P = res.final_params
        with torch.no_grad():
            xtr = torch.stack([torch.cat([d.x, d.x[:1].expand(max(len(e) for e in sets) - len(d), -1)]) for d in sets])
            ytr = torch.stack([torch.cat([d.y, torch.full((max(len(e) for e in sets) - len(d),), -1)]) for d in sets])
            tr = M.masked_metric(model.forward(P, xtr), ytr)[0].tolist()
            xte = torch.stack([tests[s][0] for _, s in members])
            yte = torch.stack([tests[s][1] for _, s in members])
            te = M.masked_metric(model.forward(P, xte), yte)[0].tolist()
        for (n, s), a, b in zip(members, tr, te):
            rows.append({"activation": act, "n": n, "seed": s, "train_acc": a, "test_acc": b})
    return {"rows": rows, "m": m, "p": p}


# --------------------------------------------------------------------------- full run
def reproduce(scale: str, device: str, out: Path) -> list[Path]:
    """Run every chapter-4 experiment at ``scale`` and store the results under ``out``."""
    scale = get_scale(scale)
    cfg = protocol(scale)
    out = Path(out)
    store = ResultStore(out / "cells")
    paths = []
    t_all = time.perf_counter()

    cell_times: dict[str, float] = {}

    def cell(key, fn, seeds=()):
        if store.has(key):
            cell_times[key] = load_result(store.path(key))["provenance"].get("wall_time_s") or 0.0
            return store.get(key)
        t0 = time.perf_counter()
        val = fn()
        cell_times[key] = time.perf_counter() - t0
        store.put(key, val, provenance(scale=scale, device=device, seeds=seeds, wall_time_s=cell_times[key]))
        return val

    def block_provenance(keys, seeds=()):
        """Provenance of a result file: wall time = sum of its cells' stored wall times (resumed runs included)."""
        return provenance(scale=scale, device=device, seeds=seeds, wall_time_s=sum(cell_times[k] for k in keys),
                          extra={"cell_wall_time_s": {k: round(cell_times[k], 3) for k in keys},
                                 "session_wall_time_s": round(time.perf_counter() - t_all, 3)})

    n_float = 2000 if scale == "full" else 200
    data = {
        "exhaustive": cell("exhaustive", small_exhaustive),
        "automaton": cell("automaton", lambda: summarize_checks(long_length_checks())),
        "float": cell(f"float_n{n_float}", lambda: summarize_checks(float_network_checks(n=n_float))),
        "bounds": cell("bounds", relu_bounds_table),
        "relu_min_width": cell("relu_min_width", lambda: relu_min_width(cfg["relu_width"], progress=True),
                               cfg["relu_width"]["seeds"]),
        "two_lengths": cell("two_lengths", lambda: two_lengths(cfg["two_lengths"], progress=True),
                            cfg["two_lengths"]["seeds"]),
    }
    first = list(cell_times)
    paths.append(save_result(out / "constructions_relu.json", data, block_provenance(first)))

    train = {"protocol": {k: {kk: (list(vv) if isinstance(vv, tuple) else vv) for kk, vv in v.items()}
                          for k, v in cfg.items()},
             "underparam": cell("underparam", lambda: underparam(cfg["underparam"], progress=True),
                                cfg["underparam"]["seeds"]),
             "overparam": cell("overparam", lambda: overparam(cfg["overparam"], progress=True),
                               cfg["overparam"]["seeds"]),
             "lengthgen": [cell(f"lengthgen_{a}_{'bias' if b else 'nobias'}",
                                lambda a=a, b=b: lengthgen(cfg["lengthgen"], (a, b), progress=True),
                                cfg["lengthgen"]["seeds"]) for a, b in LENGTHGEN_VARIANTS],
             "timing": cell("timing", epoch_timing)}
    if "lengthgen_long" in cfg:     # the paper's Muon lr (1e-3) with a 10x longer update budget
        train["lengthgen_long"] = [cell(f"lengthgen_long_{a}_{'bias' if b else 'nobias'}",
                                        lambda a=a, b=b: lengthgen(cfg["lengthgen_long"], (a, b), progress=True),
                                        cfg["lengthgen_long"]["seeds"]) for a, b in LENGTHGEN_VARIANTS]
    if "lengthgen_paper_lr_60k" in cfg:   # the biased sine MLP at the paper's lr, 3x longer again, budget n = 8,000
        train["lengthgen_paper_lr_60k"] = cell("lengthgen_paper_lr_60k_sine_bias",
                                               lambda: lengthgen(cfg["lengthgen_paper_lr_60k"], ("sine", True), progress=True),
                                               cfg["lengthgen_paper_lr_60k"]["seeds"])
    if "budget_study" in cfg:
        train["budget_study"] = cell("budget_study", lambda: budget_study(cfg["budget_study"], progress=True),
                                     cfg["budget_study"]["seeds"])
    if "transformer" in cfg:
        train["transformer"] = cell("transformer_m3", lambda: transformer_baseline(cfg["transformer"], progress=True),
                                    cfg["transformer"]["seeds"])
    rest = [k for k in cell_times if k not in first]
    paths.append(save_result(out / "training.json", train, block_provenance(rest, seeds=sorted(
        {s for k in ("underparam", "overparam", "lengthgen") for s in cfg[k]["seeds"]}))))
    return paths
