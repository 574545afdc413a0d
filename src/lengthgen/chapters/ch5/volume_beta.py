"""Chapter 5, section "Log-length scaling in the volume theory": the runs, each a computation of
chapter 2 through its own code with β_n = 1 next to β_n = log n (its ``beta`` option; the plan:
:func:`cells`). Predictions: :mod:`.volume_claims`."""

from __future__ import annotations

import math

import numpy as np

from lengthgen.chapters.ch2 import experiments as ex
from lengthgen.chapters.ch2 import paper
from lengthgen.chapters.ch2 import volume as vo
from lengthgen.chapters.ch5 import volume_claims as vc
from lengthgen.config import ConfigError, check_positive_int, get_scale
from lengthgen.engine.runs import Cell
from lengthgen.stats import bootstrap_ci, clopper_pearson

#: the chapter-2 training experiments repeated under both scales (cell name = "beta_train_" + exp)
TRAIN_EXPERIMENTS = tuple(e for exps in vc.TRAIN_RUNS.values() for e in exps)


def closed_forms(
    area_ns=vc.AREA_NS,
    center_ns=vc.CENTER_NS,
    paper_eta_ns=vc.PAPER_ETA_NS,
    majority_n_max=vc.MAJORITY_N_MAX,
) -> dict:
    """Majority's exact (X, b₂,₁) area, both scales, against 4η³ artanh(1/n)/β_n; without log n
    η* of the First/Index center, the center near η* and at the paper's η; Majority's failures."""
    area, grid, span, paper_eta = [], vc.AREA_GRID, vc.AREA_SPAN, vc.PAPER_ETA
    cm = vo.center("gen", "majority", 8, eta=vc.AREA_ETA)
    for n in area_ns:
        row = {"n": int(n)}
        for beta in vo.BETAS:
            b = math.log(n) if beta == "log" else 1.0
            X = np.linspace(-span / b, span / b, grid)
            r = vo.majority_bias_area(cm, n, X, beta=beta)
            closed = vo.majority_area_closed_form(vc.AREA_ETA, n, beta)
            row |= {f"area_{beta}": r["area"], f"closed_{beta}": closed}
            row[f"rel_err_{beta}"] = abs(r["area"] - closed) / closed
            row[f"width_X0_{beta}"] = float(r["widths"][grid // 2])
        row["ratio"] = row["area_one"] / row["area_log"]
        area.append(row)
    eta_star = {t: vo.center_exact_eta(t) for t in ("first", "index")}
    center_one = []
    for task in ("first", "index"):
        for v in ("pos", "norm"):

            def exact_at(eta, n, v=v, task=task):
                c = vo.center(v, task, 8, eta=eta)
                return vo.exactness(c, v, task, n, method="structural", beta="one").all()

            above, below = (eta_star[task] * (1 + s * vc.ETA_STEP) for s in (1, -1))
            fails = [n for n in range(1, center_ns + 1) if not exact_at(below, n)]
            paper_ok = [n for n in range(1, paper_eta_ns + 1) if exact_at(paper_eta, n)]
            row = {"task": task, "variant": v, "eta_star": eta_star[task]}
            row["exact_above"] = all(exact_at(above, n) for n in range(1, center_ns + 1))
            row |= {"fails_below": bool(fails), "first_failure_below": fails[0] if fails else None}
            row["paper_eta_largest_n"] = max(paper_ok) if paper_ok else 0
            row["log_n_star_paper_eta"] = vo.center_exact_threshold(task, paper_eta)
            center_one.append(row)
    failures = 0
    for eta in vc.MAJORITY_ETAS:
        c = vo.center("gen", "majority", 8, eta=eta)
        for beta in vo.BETAS:
            for n in range(1, majority_n_max + 1, 2):
                failures += int(not vo.exactness(c, "gen", "majority", n, beta=beta).all())
    out = {"area": area, "eta_star": eta_star, "center_one": center_one}
    return out | {"majority_center_failures": failures}


def volume(beta: str, **kwargs) -> dict:
    """Chapter 2's ``volume_scans`` with its configuration (``kwargs``) under the scale ``beta``."""
    return ex.volume_scans(beta=beta, **kwargs)


def _volume_kwargs() -> dict:
    return {
        "ns": list(ex.VOLUME_NS),
        "combos": [list(c) for c in ex.VOLUME_COMBOS],
        "mc_ns": {k: list(v) for k, v in ex.VOLUME_MC_NS.items()},
        "mc_samples": ex.VOLUME_MC_SAMPLES,
        "h": ex.H,
        "eta": ex.VOLUME_ETA,
        "half_width": ex.VOLUME_HALF_WIDTH,
        "norm_map": "sqrt",
    }


def train_pair(device="cpu", progress: bool = True, **cfg) -> dict:
    """Chapter 2's ``train_experiment``, every member under both scales (A_gen: its X, eq. 70)."""
    out = ex.train_experiment(
        **cfg, device=device, progress=progress, keep_params=True, beta=["log", "one"]
    )
    params = out.pop("params")
    if "gen" in cfg["variants"]:
        X = vo.score_contrast({k: v.detach().cpu() for k, v in params.items() if k[0] != "_"})
        for m, x in zip(out["members"], X.tolist()):
            m["X"] = float(x)
    return out


def train_kwargs(exp: str, scale: str) -> dict:
    """Chapter 2's configuration of ``exp`` (full: its stored N and cap; smoke: its smoke sizes)."""
    if scale == "smoke":
        keys = ("seeds", "Ns", "steps", "every", "val_size", "test_size", "batch")
        return ex.experiment_config(exp, **{k: ex.SMOKE[k] for k in keys})
    return ex.experiment_config(
        exp, Ns=paper.STORED_NS[exp], steps=paper.STORED_STEP_CAPS[exp], **ex.FULL
    )


def majority_box(ns=vc.BOX_NS, samples=vc.BOX_SAMPLES, chunk=100_000) -> dict:
    """A_gen Majority's exact fraction of chapter 2's raw box [−B, B]^D under both scales on the
    same points (chunk j of the i-th n seeded seed + 1000 i + j) with its 95 % interval per n."""
    h, B, seed = vc.BOX_H, vc.BOX_B, vc.BOX_SEED
    ns = [check_positive_int("n", n, minimum=3) for n in ns]
    samples = [check_positive_int("samples", m) for m in samples]
    if len(ns) != len(samples):
        raise ConfigError(f"ns and samples must have the same length: {len(ns)}, {len(samples)}")
    chunk = check_positive_int("chunk", chunk)
    rows = []
    for i, (n, m) in enumerate(zip(ns, samples)):
        hits, undecided = {"log": 0, "one": 0}, 0
        for j, lo in enumerate(range(0, m, chunk)):
            P = vo.uniform_box("gen", h, B, min(chunk, m - lo), seed + 1000 * i + j)
            for beta in hits:
                dec = vo.exactness(P, "gen", "majority", n, method="structural", beta=beta)
                hits[beta] += int((dec.decision == True).sum())  # noqa: E712
                undecided += int(np.equal(dec.decision, None).sum())
        rows.append({"n": int(n), "samples": int(m), "undecided": undecided, **_shares(hits, m)})
    return {"rows": rows, "h": h, "B": B}


def _shares(hits: dict, m: int) -> dict:
    """Per scale β: ``exact_β``, ``fraction_β`` of ``m`` and its 95 % interval ``lo_β``, ``hi_β``."""
    vals = {b: (k, k / m, *clopper_pearson(k, m)) for b, k in hits.items()}
    return {
        f"{key}_{b}": v for b in hits for key, v in zip(("exact", "fraction", "lo", "hi"), vals[b])
    }


def _joint_points(variant, task, m, seed, h, B, half_width):
    """``m`` points: A_gen from the raw box, A_pos/A_norm the η = 1 center with a, b, r, s uniform
    within ± ``half_width``."""
    import torch

    if variant == "gen":
        return vo.uniform_box("gen", h, B, m, seed)
    g = torch.Generator().manual_seed(seed)
    P = {}
    for k, v in vo.center(variant, task, h, eta=1.0).items():
        P[k] = v.unsqueeze(0).expand(m, *v.shape).clone()
        if k in ("a", "b", "r", "s"):
            noise = torch.rand(P[k].shape, generator=g, dtype=v.dtype)
            P[k] += (noise * 2 - 1) * half_width
    return P


def joint_box(variant, task, Ns, samples, seed=vc.BOX_SEED, half_width=0.1, chunk=50_000) -> dict:
    """Per N, both scales on the same points: counts exact at N and at both N and L = 10N + 1, the
    joint fraction with its 95 % interval, ``one_not_log`` (0 by the nesting of the exact sets)."""
    rows = []
    for i, (N, m) in enumerate(zip(Ns, samples)):
        N, m, L = int(N), check_positive_int("samples", m), 10 * int(N) + 1
        row = {"N": N, "L": L, "samples": m, "one_not_log": 0}
        joint = {}
        for j, lo in enumerate(range(0, m, chunk)):
            args = (min(chunk, m - lo), seed + 1000 * i + j, vc.BOX_H, vc.BOX_B, half_width)
            P = _joint_points(variant, task, *args)
            for beta in vo.BETAS:
                ok = vo.exactness(P, variant, task, N, method="structural", beta=beta)
                keep = np.flatnonzero(ok.decision == True)  # noqa: E712
                row[f"exact_N_{beta}"] = row.get(f"exact_N_{beta}", 0) + len(keep)
                hit = np.zeros(len(ok.decision), dtype=bool)
                if len(keep):
                    sub = {k: v[keep] for k, v in P.items()}
                    dec = vo.exactness(sub, variant, task, L, method="structural", beta=beta)
                    hit[keep] = dec.decision == True  # noqa: E712
                joint[beta] = hit
            row["one_not_log"] += int((joint["one"] & ~joint["log"]).sum())
            for beta, hit in joint.items():
                row[f"exact_{beta}"] = row.get(f"exact_{beta}", 0) + int(hit.sum())
        rows.append(row | _shares({b: row[f"exact_{b}"] for b in vo.BETAS}, m))
    return {"variant": variant, "task": task, "rows": rows}


def cells(scale: str, *, training: bool = True) -> list[Cell]:
    """The section's plan at ``scale`` (with ``training``: the paired training cells)."""
    scale = get_scale(scale)
    out = [
        Cell("beta_closed_forms", closed_forms, {}),
        Cell("beta_volume_log", volume, {"beta": "log", **_volume_kwargs()}),
        Cell("beta_volume_one", volume, {"beta": "one", **_volume_kwargs()}),
        Cell(
            "beta_majority_box",
            majority_box,
            {} if scale == "full" else {"ns": [11, 15, 21], "samples": [5000] * 3},
        ),
    ]
    for key, (Ns, samples) in vc.JOINT.items():
        v, task = key.split("/")
        if scale == "smoke":  # a few thousand points at the two shortest lengths
            Ns, samples = Ns[:2], [2000, 2000]
        kw = {"variant": v, "task": task, "Ns": list(Ns), "samples": list(samples)}
        out.append(Cell(f"joint_{v}_{task}", joint_box, kw))
    if training:
        exps = ex.SMOKE_EXPERIMENTS if scale == "smoke" else TRAIN_EXPERIMENTS
        for exp in exps:
            kw = train_kwargs(exp, scale)
            out.append(Cell(f"beta_train_{exp}", train_pair, kw, seeds=tuple(kw["seeds"])))
    return out


def paired_by_n(results, exp: str, variant: str) -> list[dict]:
    """Per N: the mean paired difference (one − log) at L = 10N+1, its 95 % interval, arm means."""
    pairs = vc.paired_accuracy(vc.members(results, exp), variant)
    out = []
    for N in sorted({N for N, _ in pairs}):
        one, log = np.array([pairs[k] for k in pairs if k[0] == N]).T  # per seed, in seed order
        m, lo, hi = bootstrap_ci(one - log, **vc.BOOT)
        arms = {"log": float(np.mean(log)), "one": float(np.mean(one))}
        out.append({"N": N, "diff": m, "lo": lo, "hi": hi, **arms})
    return out


def _by_n_and_scale(rows):
    """``(N, beta, the rows of that N and scale)`` in order of N, log before one."""
    for N in sorted({m["N"] for m in rows}):
        for beta in ("log", "one"):
            yield N, beta, [m for m in rows if m["N"] == N and m["beta"] == beta]


def drift_medians(results, variant: str = "norm") -> list[dict]:
    """Per N and scale: the median learned |χ̂| and N|ℓ̂| (A_pos: |χ|, N|ℓ|) of the Index runs, and
    the share of seeds with perfect validation."""
    rows = [m for m in vc.members(results, "index_posnorm") if m["variant"] == variant]
    chi, ell = ("chi_hat", "ell_hat") if variant == "norm" else ("chi", "ell")
    return [
        {
            "N": N,
            "beta": beta,
            "chi": float(np.median([abs(m[chi]) for m in ms])),
            "N_ell": float(np.median([N * abs(m[ell]) for m in ms])),
            "perfect_val": float(np.mean([m["best_val_acc"] == 1.0 for m in ms])),
        }
        for N, beta, ms in _by_n_and_scale(rows)
    ]


def contrast_medians(results, exp: str = "majority_gen") -> list[dict]:
    """Per N and scale: the median |X| of the learned A_gen score contrasts."""
    return [
        {"N": N, "beta": beta, "abs_X": float(np.median([abs(m["X"]) for m in ms]))}
        for N, beta, ms in _by_n_and_scale(vc.members(results, exp))
    ]
