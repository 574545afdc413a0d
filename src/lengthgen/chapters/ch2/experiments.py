"""Chapter 2 (Zhu & Chiang 2026): training protocol of App. D.2–D.3 and the stored volume scans.

``reproduce(scale, device, out)`` runs, in order of priority, one ensemble per (task, model
family) — all seeds × maximum lengths N × paired variants as ONE batched program through
:func:`lengthgen.engine.train.train_ensemble` — and evaluates every selected checkpoint on the saved test
banks at the lengths N, 2N+1, 3N, 5N, 8N+1, 10N+1. Each experiment is one key of a
:class:`~lengthgen.store.ResultStore` under ``out/runs`` so an interrupted run resumes.

Protocol (D.2): Adam (lr 3e-4, β = (0.9, 0.999), ε = 1e-8, no weight decay), batch 256, gradient
clipping at 1, float64, at most ``steps`` updates, validation every 500 updates on 1,000
examples at length N, stop after 3 consecutive perfect validations, checkpoint = best validation
accuracy, then lower cross-entropy, then earlier update. Init scales and the A_pos/A_norm pairing
are those of :func:`lengthgen.chapters.ch2.single_layer.init_member`.

Batches: one data length per update, uniform on {1, …, N} (odd lengths for Majority). The uniform
draw ``u`` is shared by all members of the ensemble at a given update (member e gets
``L_e = ⌈u N_e⌉``), so each member's lengths are exactly uniform on its own range while the
padded batch is only as long as the longest member's length; bits and queries are independent
per data stream. Paired A_pos/A_norm members read the same stream.
"""
from __future__ import annotations

import math
import time
from pathlib import Path

import numpy as np
import torch

from lengthgen.config import ConfigError, check_choice, check_positive_int, get_scale
from lengthgen.chapters.ch2.single_layer import FAMILIES, FIXED_TOKEN, PAD, SingleLayer, encode
from lengthgen.store import ResultStore, load_result, provenance, results_dir, save_result
from lengthgen.nn.tasks import first_bank, index_bank, label, majority_bank, random_strings

SEEDS = tuple(range(2000, 2020))
NS = (11, 21, 31, 41, 51)
H = 8
#: experiment name → (task, variants). Order = priority when the budget is short.
EXPERIMENTS = {
    "index_posnorm": ("index", ("pos", "norm")),
    "first_posnorm": ("first", ("pos", "norm")),
    "majority_gen": ("majority", ("gen",)),
    "majority_sin": ("majority", ("sin",)),
    "first_gen": ("first", ("gen",)),
    "index_gen": ("index", ("gen",)),
    "first_sin": ("first", ("sin",)),
    "index_sin": ("index", ("sin",)),
    "parity_gen": ("parity", ("gen",)),
    "index_posnorm_sqrt": ("index", ("norm",)),   # diagnostic: A_norm with F(v) = v/√(1+‖v‖²), same streams as index_posnorm
    "index_posnorm_small": ("index", ("pos", "norm")),   # the same experiment at N = 11, 21 (time permitting)
    "index_posnorm_mid": ("index", ("pos", "norm")),     # ... and at N = 31, 41
    "majority_gen_more": ("majority", ("gen",)),         # Tables 2–3 at N = 11 … 41 (time permitting)
    "first_posnorm_more": ("first", ("pos", "norm")),
    "majority_sin_more": ("majority", ("sin",)),
    "majority_posnorm": ("majority", ("pos", "norm")),    # Table 1: Majority under A_pos / A_norm
}
#: run sizes per scale. ``full`` is the paper's protocol; ``steps`` may be capped by budget.
SCALES = {
    "smoke": {"seeds": SEEDS[:2], "Ns": (11,), "steps": 300, "every": 100, "val_size": 200, "test_size": 200,
              "batch": 64, "experiments": ("index_posnorm", "majority_gen")},
    "full": {"seeds": SEEDS, "Ns": NS, "steps": 30_000, "every": 500, "val_size": 1000, "test_size": 1000,
             "batch": 256, "experiments": tuple(EXPERIMENTS)},
}
#: What the stored full run actually uses. The paper trains every experiment at N ∈ {11, …, 51}
#: for up to 30,000 updates; on the book's 2-core shared CPU the stored run caps the number of
#: updates per experiment and runs the Table 1 cells outside Table 2 only at N = 51. The main
#: ensembles are at N = 51; the ``_small``/``_mid``/``_more`` ensembles add the smaller N with the
#: same protocol, and ``index_posnorm_sqrt`` is a diagnostic (A_norm with F(v) = v/√(1+‖v‖²)).
#: Validation, early stopping and selection are exactly those of D.2; every reduction is recorded
#: as a deviation in the claims ledger.
FULL_STEP_CAPS = {"index_posnorm": 30_000, "first_posnorm": 6_000, "majority_gen": 10_000, "majority_sin": 6_000,
                  "first_gen": 30_000, "index_gen": 30_000, "first_sin": 30_000, "index_sin": 30_000, "parity_gen": 30_000,
                  "index_posnorm_sqrt": 12_000, "index_posnorm_small": 12_000,
                  "index_posnorm_mid": 30_000, "majority_gen_more": 10_000, "first_posnorm_more": 6_000,
                  "majority_sin_more": 6_000, "majority_posnorm": 30_000}
FULL_NS = {name: (51,) for name in EXPERIMENTS}
FULL_NS["parity_gen"] = (11,)
FULL_NS["index_posnorm_small"] = (11, 21)
FULL_NS["index_posnorm_mid"] = (31, 41)
for _name in ("majority_gen_more", "first_posnorm_more", "majority_sin_more"):
    FULL_NS[_name] = (11, 21, 31, 41)


def test_lengths(N: int) -> tuple[int, ...]:
    """The test grid of eq. 151: N, 2N+1, 3N, 5N, 8N+1, 10N+1."""
    N = check_positive_int("N", N)
    return (N, 2 * N + 1, 3 * N, 5 * N, 8 * N + 1, 10 * N + 1)


def _labels(task: str, bits: torch.Tensor, k: torch.Tensor | None) -> torch.Tensor:
    return label(task, bits, k) if task == "index" else label(task, bits)


def test_bank(task: str, L: int, size: int = 1000, seed: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    """The saved test bank at length L (D.3), shared by all seeds and variants: ``(x, y)``."""
    check_choice("task", task, ("first", "index", "majority", "parity"))
    g = torch.Generator().manual_seed(7_000_003 * (1 + seed) + 1009 * L + {"first": 1, "index": 2, "majority": 3, "parity": 4}[task])
    k = None
    if task == "first":
        bits = first_bank(L, size, g)
    elif task == "majority":
        bits = majority_bank(L, size, g)
    elif task == "index":
        bits, k = index_bank(L, size, g)
    else:
        bits = random_strings(size, L, g)
    return encode(bits, k, fixed=FIXED_TOKEN.get(task, 1)), _labels(task, bits, k)


def validation_bank(task: str, Ns_members, size: int, seed: int = 0):
    """Per-member validation banks at each member's N (random examples), padded: ``(x [E,S,51+1], y [E,S])``."""
    Lmax = max(Ns_members)
    cache = {}
    for N in sorted(set(Ns_members)):
        g = torch.Generator().manual_seed(5_000_011 * (1 + seed) + N)
        bits = random_strings(size, N, g)
        k = torch.randint(1, N + 1, (size,), generator=g) if task == "index" else None
        cache[N] = (encode(bits, k, pad_to=Lmax, fixed=FIXED_TOKEN.get(task, 1)), _labels(task, bits, k))
    x = torch.stack([cache[N][0] for N in Ns_members])
    y = torch.stack([cache[N][1] for N in Ns_members])
    return x, y


def make_sampler(task: str, Ns_members, stream_of_member, batch: int, base_seed: int = 0):
    """``sample(step, generators, members)`` for :func:`train_ensemble` (see the module docstring)."""
    Ns = torch.as_tensor(Ns_members, dtype=torch.long)
    streams = torch.as_tensor(stream_of_member, dtype=torch.long)
    U = int(streams.max()) + 1
    Ns_stream = torch.zeros(U, dtype=torch.long)
    Ns_stream[streams] = Ns

    def sample(step, generators, members=None):
        g = torch.Generator().manual_seed(base_seed * 1_000_003 + step)
        u = torch.rand((), generator=g, dtype=torch.float64)
        if task == "majority":
            L = 2 * torch.floor(u * ((Ns_stream + 1) // 2)).long() + 1
        else:
            L = torch.floor(u * Ns_stream).long() + 1
        Lmax = int(L.max())
        bits = torch.randint(0, 2, (U, batch, Lmax), generator=g, dtype=torch.float64)
        k = (torch.floor(torch.rand(U, batch, generator=g, dtype=torch.float64) * L[:, None]) + 1)
        valid = torch.arange(1, Lmax + 1)[None, :] <= L[:, None]                    # [U, Lmax]
        data = bits.masked_fill(~valid[:, None, :], PAD)
        if task == "index":
            y = torch.gather(bits, -1, (k.long() - 1).unsqueeze(-1)).squeeze(-1).long()
            kk = k
        else:
            ones = (bits * valid[:, None, :]).sum(-1)
            y = {"first": bits[..., 0], "majority": (ones >= (L[:, None] + 1) // 2),
                 "parity": ones % 2}[task].long()
            kk = torch.full_like(k, FIXED_TOKEN[task])
        x = torch.cat([data, kk.unsqueeze(-1)], -1)
        sel = streams if members is None else streams[members]
        return x[sel], y[sel]

    return sample


def _coefficients(params, N):
    a, b, r, s = (params[k] for k in ("a", "b", "r", "s"))
    chi = (a * s).sum(-1)
    ell = 2 * (b * s).sum(-1) + (a * r).sum(-1)
    ahat = a / a.norm(dim=-1, keepdim=True)
    chi_hat = (ahat * s).sum(-1)
    return {"chi": chi.tolist(), "ell": ell.tolist(), "chi_hat": chi_hat.tolist(), "ell_hat": (ell + 2 * chi_hat).tolist()}


def run_experiment(name: str, *, seeds, Ns, steps: int, every: int, val_size: int, test_size: int, batch: int,
                   device="cpu", progress: bool = True, keep_params: bool = False) -> dict:
    """Train and test one experiment (all seeds × N × variants as one ensemble); JSON-ready dict.

    For Parity under A_gen each member also reports the sign changes and kinks of its selected
    checkpoint at length N (App. A.4). ``keep_params=True`` adds the selected parameters (tensors,
    not JSON) under ``"params"``.
    """
    from lengthgen.engine.train import OptimConfig, Validation, evaluate_ensemble, select_members, train_ensemble

    check_choice("experiment", name, tuple(EXPERIMENTS))
    task, variants = EXPERIMENTS[name]
    members = [(v, N, s) for v in variants for N in Ns for s in seeds]
    vs = [m[0] for m in members]
    Nm = [m[1] for m in members]
    sm = [m[2] for m in members]
    stream_ids = {}
    streams = [stream_ids.setdefault((N, s), len(stream_ids)) for (_, N, s) in members]
    norm_map = "sqrt" if name.endswith("_sqrt") else "paper"
    model = SingleLayer(vs[0], H, max_lengths=Nm, variants=vs, norm_map=norm_map)
    params = model.init(sm, torch.float64, device)
    vx, vy = validation_bank(task, Nm, val_size)
    t0 = time.perf_counter()
    base = 1 + list(EXPERIMENTS).index(name.removesuffix("_sqrt").removesuffix("_small").removesuffix("_mid").removesuffix("_more"))
    res = train_ensemble(model, params, sample=make_sampler(task, Nm, streams, batch, base_seed=base),
                         optim=OptimConfig("adam", lr=3e-4, clip=1.0), steps=steps,
                         data_seeds=[s + 100 * N for (_, N, s) in members],
                         validation=Validation(every=every, bank=(vx, vy), patience=3, per_member=True, batch_size=250),
                         progress=progress, record_every=max(1, every // 5), device=device, desc=name)
    train_s = time.perf_counter() - t0
    tests = {}
    for N in sorted(set(Nm)):
        idx = [i for i, n in enumerate(Nm) if n == N]
        sub = select_members(res.params, idx)
        submodel = SingleLayer(vs[0], H, max_lengths=[Nm[i] for i in idx], variants=[vs[i] for i in idx], norm_map=norm_map)
        banks = {L: test_bank(task, L, test_size) for L in test_lengths(N)}
        bs = max(10, min(1000, 4_000_000 // (len(idx) * (10 * N + 2))))
        acc = evaluate_ensemble(submodel, sub, banks, batch_size=bs)
        for j, i in enumerate(idx):
            tests[i] = {str(L): float(acc[L][j]) for L in banks}
    rows = []
    coef = _coefficients(res.params, None) if FAMILIES[vs[0]] == "positional" else None
    for i, (v, N, s) in enumerate(members):
        row = {"variant": v, "N": N, "seed": s, "best_step": int(res.best_step[i]), "stop_step": int(res.stop_step[i]),
               "best_val_acc": float(res.best_acc[i]), "best_val_loss": float(res.best_loss[i]), "test": tests[i]}
        if coef is not None:
            row.update({k: coef[k][i] for k in coef})
        if task == "parity" and vs[0] == "gen":
            from lengthgen.chapters.ch2.volume import parity_sign_changes

            sc = parity_sign_changes({k: t[i] for k, t in res.params.items()}, N)
            row.update({"sign_changes": int(sc["sign_changes"][0]), "kinks": int(sc["kinks"][0])})
        rows.append(row)
    return {"experiment": name, "task": task, "variants": list(variants), "steps_cap": steps, "every": every,
            "batch": batch, "val_size": val_size, "test_size": test_size, "train_wall_s": train_s,
            "steps_run": res.steps_run, "members": rows, **({"params": res.params} if keep_params else {})}


# --------------------------------------------------------------------------- summaries
def longest_accuracy(result: dict, variant: str, N: int) -> np.ndarray:
    """Per-seed accuracy at L = 10N+1 for one variant and N (percent)."""
    L = str(10 * N + 1)
    return np.array([100 * m["test"][L] for m in result["members"] if m["variant"] == variant and m["N"] == N])


def mean_ood(result: dict, variant: str, N: int) -> np.ndarray:
    """Per-seed mean accuracy over the five test lengths > N (percent), D.3."""
    out = []
    for m in result["members"]:
        if m["variant"] == variant and m["N"] == N:
            out.append(100 * np.mean([m["test"][str(L)] for L in test_lengths(N)[1:]]))
    return np.array(out)


def accuracy_curve(result: dict, variant: str, N: int) -> tuple[list[int], np.ndarray]:
    """Test lengths and the per-seed accuracies [seeds, lengths] (percent)."""
    Ls = list(test_lengths(N))
    A = np.array([[100 * m["test"][str(L)] for L in Ls] for m in result["members"] if m["variant"] == variant and m["N"] == N])
    return Ls, A


# --------------------------------------------------------------------------- volume scans (stored)
def volume_scans(ns=(8, 16, 32, 64, 128, 256, 512), mc_ns=None, mc_samples: int = 20_000, progress=True) -> dict:
    """Admissible widths of the length-sensitive coordinates and Monte Carlo exact fractions."""
    from lengthgen.chapters.ch2 import volume as vo

    out = {"widths": {}, "mc": {}}
    combos = [("pos", "index", "chi"), ("pos", "index", "ell"), ("norm", "index", "chi"), ("norm", "index", "ell"),
              ("norm", "index", "chi_fixed_ell_hat"), ("pos", "first", "chi"), ("pos", "first", "ell")]
    for v, task, coord in combos:
        c = vo.center(v, task, H, eta=1.0)
        d = vo.direction(v, coord, c)
        out["widths"][f"{v}/{task}/{coord}"] = {"n": list(ns), "width": [vo.admissible_width(c, d, v, task, n)["width"] for n in ns]}
    mc_ns = mc_ns or {"pos/index": (4, 8, 16, 32, 64), "norm/index": (4, 8, 16, 32, 64, 128), "pos/first": (4, 16, 64, 256)}
    for key, nlist in mc_ns.items():
        v, task = key.split("/")
        out["mc"][key] = [vo.mc_fraction(v, task, n, coords=("a", "b", "r", "s"), half_width=0.1,
                                         samples=mc_samples * (4 if (v == "pos" and task == "index" and n >= 32) else 1),
                                         seed=n) for n in nlist]
    return out


def reproduce(scale: str, device: str, out: Path, experiments=None) -> list[Path]:
    """Run chapter 2's stored experiments at ``scale``; resumable (one store key per experiment)."""
    scale = get_scale(scale)
    cfg = dict(SCALES[scale])
    out = Path(out)
    store = ResultStore(out / "runs")
    paths = []
    names = experiments or cfg.pop("experiments")
    cfg.pop("experiments", None)
    if experiments is not None:
        if not experiments:
            raise ConfigError(f"no experiment named; choose from {', '.join(EXPERIMENTS)}")
        for name in experiments:
            check_choice("experiment", name, tuple(EXPERIMENTS))
    for name in names:
        key = f"{scale}_{name}"
        if store.has(key):
            paths.append(store.path(key))
            continue
        torch.set_num_threads(1)
        run_cfg = dict(cfg)
        if scale == "full":
            run_cfg["steps"] = FULL_STEP_CAPS[name]
            run_cfg["Ns"] = FULL_NS.get(name, cfg["Ns"])
        t0 = time.perf_counter()
        data = run_experiment(name, device=device, **run_cfg)
        prov = provenance(scale=scale, device=device, seeds=cfg["seeds"], wall_time_s=time.perf_counter() - t0)
        paths.append(store.put(key, data, prov))
    if scale == "full" and not (out / "volume_scans.json").exists():
        t0 = time.perf_counter()
        data = volume_scans()
        paths.append(save_result(out / "volume_scans.json", data,
                                 provenance(scale=scale, device=device, wall_time_s=time.perf_counter() - t0)))
    return paths


# --------------------------------------------------------------------------- notebook helpers
def load_runs(folder: Path | None = None, scale: str = "full") -> dict:
    """Stored experiments ``{name: (result_dict, provenance)}`` (missing experiments are absent)."""
    from lengthgen.store import load_result, results_dir

    runs = ResultStore(Path(folder) if folder else results_dir() / "ch2" / "runs")
    out = {}
    for name in EXPERIMENTS:
        key = f"{scale}_{name}"
        if runs.has(key):
            obj = load_result(runs.path(key))
            out[name] = (obj["data"]["value"], obj["provenance"])
    return out


def longest_summary(result: dict, variant: str, N: int, n_boot: int = 10_000) -> tuple[float, float, float]:
    """Mean accuracy at L = 10N+1 across seeds with its 95% seed-bootstrap interval (percent)."""
    from lengthgen.stats import bootstrap_ci

    return bootstrap_ci(longest_accuracy(result, variant, N), n_boot=n_boot, seed=0)


def ood_summary(result: dict, variant: str, N: int, n_boot: int = 10_000) -> tuple[float, float, float]:
    """Mean OOD accuracy (equal weight over the five lengths > N) with its 95% bootstrap interval."""
    from lengthgen.stats import bootstrap_ci

    return bootstrap_ci(mean_ood(result, variant, N), n_boot=n_boot, seed=0)


def coefficient_analysis(result: dict, n_perm: int = 10_000, seed: int = 0) -> dict:
    """D.4: within-N ranks of N²|χ| and N|ℓ| against seed-level mean OOD accuracy, pooled over N,
    with a two-sided permutation test that shuffles ranks only within the same N."""
    from lengthgen.stats import permutation_pvalue, rankdata

    rows = [m for m in result["members"] if m["variant"] == "pos"]
    Ns = np.array([m["N"] for m in rows])
    acc = np.array([100 * np.mean([m["test"][str(L)] for L in test_lengths(m["N"])[1:]]) for m in rows])
    out = {"N": Ns.tolist(), "acc": acc.tolist()}
    for name, val in (("chi", [m["N"] ** 2 * abs(m["chi"]) for m in rows]), ("ell", [m["N"] * abs(m["ell"]) for m in rows])):
        val = np.asarray(val)
        rv, ra = np.empty(len(val)), np.empty(len(val))
        for N in np.unique(Ns):
            idx = Ns == N
            rv[idx], ra[idx] = rankdata(val[idx]), rankdata(acc[idx])
        if rv.std() == 0 or ra.std() == 0:
            out[name] = {"values": val.tolist(), "rho": float("nan"), "p": float("nan")}
            continue
        stat = lambda x, y: float(np.corrcoef(x, y)[0, 1])  # noqa: E731  (Pearson of within-N ranks)
        r, p = permutation_pvalue(stat, rv, ra, n_perm=n_perm, seed=seed, groups=Ns)
        out[name] = {"values": val.tolist(), "rho": r, "p": p}
    return out


#: the update budget of App. D.2
PAPER_MAX_UPDATES = 30_000


def cap_note(result: dict, variant: str) -> str:
    """How the update cap touched one variant of a stored experiment (for the ledger's reasons)."""
    ms = [m for m in result["members"] if m["variant"] == variant]
    cap = result["steps_cap"]
    hit = sum(m["stop_step"] >= cap for m in ms)
    perfect = sum(m["best_val_acc"] == 1.0 for m in ms)
    if hit and cap >= PAPER_MAX_UPDATES:
        return (f"the paper's protocol: {hit}/{len(ms)} members ran all {cap} updates without meeting the stopping rule "
                f"({perfect}/{len(ms)} selected checkpoints have perfect validation)")
    if hit:
        return (f"{hit}/{len(ms)} members were cut at the {cap}-update cap (paper: up to {PAPER_MAX_UPDATES:,}) before the "
                f"stopping rule fired ({perfect}/{len(ms)} selected checkpoints have perfect validation)")
    return (f"all {len(ms)} members stopped by the paper's rule (3 perfect validations) before the {cap}-update cap, "
            "so the cap is not the cause")
