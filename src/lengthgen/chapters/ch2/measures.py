"""Chapter 2's measurements: which stored run and protocol each (task, model, N) comes from
(:func:`run_of`, :func:`protocol_of`), the summaries of a stored run and our value of each
stored-result claim of :mod:`.claims`."""

from __future__ import annotations

import math
import weakref

import numpy as np

from lengthgen.chapters.ch2 import experiments as ex, paper
from lengthgen.chapters.ch2.paper import two_sample_band
from lengthgen.claims import PAPER_PROTOCOL, reduced
from lengthgen.stats import bootstrap_ci, loglog_slope, permutation_pvalue, rankdata


# --------------------------------------------------------------------------- which stored run
def run_of(task: str, model: str, N: int) -> str:
    """The first experiment of :data:`~.experiments.EXPERIMENTS` that trains (task, model) at N
    with the paper's A_norm map (so never the ablation ``index_norm_misread``)."""
    for name, e in ex.EXPERIMENTS.items():
        if e.task == task and model in e.variants and e.norm_map == "sqrt":
            if N in paper.STORED_NS[name]:
                return name
    raise KeyError(f"no stored experiment holds {task}/{model} at N = {N}")


def protocol_of(cells) -> object:
    """The protocol of a claim reading the stored (task, model, N) ``cells``: the paper's, or
    reduced by the update caps below the paper's (:func:`run_of` never reads the misread map)."""
    caps = dict.fromkeys(paper.STORED_STEP_CAPS[run_of(*cell)] for cell in cells)
    top = paper.PAPER_MAX_UPDATES
    notes = [f"update cap {cap:,} (paper: {top:,})" for cap in caps if cap < top]
    return reduced("; ".join(notes)) if notes else PAPER_PROTOCOL


# --------------------------------------------------------------------------- stored-run summaries
def _ood(m: dict) -> float:
    """A member's mean accuracy (%) over the five test lengths > N (D.3; Table 3)."""
    return 100 * np.mean([m["test"][str(L)] for L in paper.test_lengths(m["N"])[1:]])


def members(result: dict, variant: str, N: int) -> list[dict]:
    """The stored members of ``variant`` trained at N, in seed order."""
    return [m for m in result["members"] if m["variant"] == variant and m["N"] == N]


def accuracy_curve(result: dict, variant: str, N: int) -> tuple[list[int], np.ndarray]:
    """Test lengths and the per-seed accuracies [seeds, lengths] (percent; Fig. 2)."""
    Ls = list(paper.test_lengths(N))
    acc = [[100 * m["test"][str(L)] for L in Ls] for m in members(result, variant, N)]
    return Ls, np.array(acc)


def longest_accuracy(result: dict, variant: str, N: int) -> np.ndarray:
    """Per-seed accuracy (%) at L = 10N+1 (Table 2)."""
    return accuracy_curve(result, variant, N)[1][:, -1]


def seed_summary(result: dict, variant: str, N: int, ood: bool = False, n_boot: int = 10_000):
    """``(mean, lo, hi)``: the accuracy (%) at L = 10N+1 across seeds (``ood``: each seed's mean
    over the five lengths > N, equal weight) with its 95 % seed-bootstrap interval."""
    ms = members(result, variant, N)
    acc = [_ood(m) if ood else 100 * m["test"][str(10 * N + 1)] for m in ms]
    return bootstrap_ci(np.asarray(acc), n_boot=n_boot, seed=0)


def coefficient_analysis(result: dict, n_perm: int = 10_000, seed: int = 0) -> dict:
    """D.4: within-N ranks of N²|χ| and N|ℓ| against seed-level mean OOD accuracy, pooled over N,
    with a two-sided permutation test that shuffles ranks only within the same N."""
    rows = [m for m in result["members"] if m["variant"] == "pos"]
    Ns = np.array([m["N"] for m in rows])
    acc = np.array([_ood(m) for m in rows])
    out = {"N": Ns.tolist(), "acc": acc.tolist()}
    for name, power in (("chi", 2), ("ell", 1)):
        val = np.array([m["N"] ** power * abs(m[name]) for m in rows])
        rv, ra = np.empty(len(val)), np.empty(len(val))
        for N in np.unique(Ns):
            idx = Ns == N
            rv[idx], ra[idx] = rankdata(val[idx]), rankdata(acc[idx])
        r = p = float("nan")
        if rv.std() > 0 and ra.std() > 0:  # the Pearson correlation of the within-N ranks
            stat = lambda x, y: float(np.corrcoef(x, y)[0, 1])  # noqa: E731
            r, p = permutation_pvalue(stat, rv, ra, n_perm=n_perm, seed=seed, groups=Ns)
        out[name] = {"values": val.tolist(), "rho": r, "p": p}
    return out


def cap_note(result: dict, variant: str) -> str:
    """How the update cap touched one variant of a stored experiment (printed beside the claims)."""
    ms = [m for m in result["members"] if m["variant"] == variant]
    cap, of = result["steps_cap"], f"/{len(ms)}"
    hit, perfect = sum(m["stop_step"] >= cap for m in ms), sum(m["best_val_acc"] == 1.0 for m in ms)
    perfect = f"({perfect}{of} selected checkpoints have perfect validation)"
    if hit and cap >= paper.PAPER_MAX_UPDATES:
        return (
            f"the paper's protocol: {hit}{of} members ran all {cap} updates without meeting the "
            f"stopping rule {perfect}"
        )
    if hit:
        return (
            f"{hit}{of} members were cut at the {cap}-update cap (paper: up to "
            f"{paper.PAPER_MAX_UPDATES:,}) before the stopping rule fired {perfect}"
        )
    return (
        f"all {len(ms)} members stopped by the paper's rule (3 perfect validations) before the "
        f"{cap}-update cap, so the cap is not the cause"
    )


# --------------------------------------------------------------------------- our measurements
def _cell(results, task, model, N):
    return results.cell(run_of(task, model, N))


def mean_longest(results, task, model, N) -> float:
    """Our 20-seed mean accuracy (%) at L = 10N+1."""
    return float(np.mean(longest_accuracy(_cell(results, task, model, N), model, N)))


def summary(results, task, model, N, ood: bool = False) -> dict:
    """Our 20-seed mean accuracy (%) at L = 10N+1 (``ood``: lengths > N), its 95 % bootstrap CI."""
    m, lo, hi = seed_summary(_cell(results, task, model, N), model, N, ood)
    return {"mean": m, "lo": lo, "hi": hi}


def perfect_seeds(results, task, model, N) -> int:
    """How many of our seeds are at 100 % test accuracy at L = 10N+1."""
    ms = members(_cell(results, task, model, N), model, N)
    return sum(m["test"][str(10 * N + 1)] == 1.0 for m in ms)


def paired(results, a: tuple, b: tuple, N: int = 51) -> dict:
    """Index accuracy of ``a`` = (variant, L) minus ``b`` at N, paired by seed (same initial
    tensors and batches; percentage points), with its 95 % seed-bootstrap interval."""
    if run_of("index", a[0], N) != run_of("index", b[0], N):
        raise ValueError(f"A_{a[0]} and A_{b[0]} are not one paired run at N = {N}")
    res = _cell(results, "index", a[0], N)
    x, y = ({m["seed"]: 100 * m["test"][str(L)] for m in members(res, v, N)} for v, L in (a, b))
    if sorted(x) != sorted(y):
        raise ValueError(f"the paired seeds differ: {sorted(x)} vs {sorted(y)}")
    diff = np.array([x[s] - y[s] for s in sorted(x)])
    return dict(zip(("mean", "lo", "hi"), bootstrap_ci(diff, seed=0)))


#: Fig. 2's test lengths strictly between N and 10N+1 at N = 51 (2N+1, 3N, 5N, 8N+1)
FIG2_INTERMEDIATE = paper.test_lengths(paper.FIG2_N)[1:-1]
#: §3.2's counterexample: the cells compared, (label, ood, N)
COUNTEREXAMPLE_CELLS = (("N=51, L=511", False, 51), *((f"N={N}, L>N", True, N) for N in paper.NS))


def counterexample(results) -> dict:
    """§3.2: Majority under A_sin minus A_gen (20-seed means, points) at N = 51, L = 511 and in mean
    OOD accuracy at every N, each with rule 1's band (:func:`two_sample_band`)."""
    diff, band = {}, {}
    for label, ood, N in COUNTEREXAMPLE_CELLS:
        gen, sin = (summary(results, "majority", m, N, ood) for m in ("gen", "sin"))
        diff[label] = sin["mean"] - gen["mean"]
        band[label] = two_sample_band(sin, (gen["mean"], gen["lo"], gen["hi"]))
    return {"diff": diff, "band": band}


_COEF_CACHE: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def coefficients(results) -> dict:
    """D.4 on our 100 selected A_pos Index checkpoints (20 seeds × N = 11 … 51), cached."""
    if results not in _COEF_CACHE:
        cells = [(_cell(results, "index", "pos", N), N) for N in paper.NS]
        pooled = [m for res, N in cells for m in members(res, "pos", N)]
        _COEF_CACHE[results] = coefficient_analysis({"members": pooled})
    return _COEF_CACHE[results]


def window_measure(r: dict) -> list:
    """The widths a window claim fits from a stored curve: the sides that close (``finite_width``,
    as in the notebook's live scan) where every one is finite, else the full ``width``."""
    fin = r.get("finite_width")
    if fin is not None and all(w is not None and math.isfinite(w) for w in fin):
        return list(fin)
    return list(r["width"])


def window_slope(results, key: str) -> float:
    """Log-log slope of a stored exact-window curve (n = 8 … 512), see :func:`window_measure`."""
    r = results.cell("volume_scans")["widths"][key]
    return loglog_slope(r["n"], window_measure(r))[0]


def mc_exponent(results, key: str) -> float:
    """Log-log slope of a stored Monte Carlo exact fraction over lengths with ≥ 10 exact points."""
    rows = [r for r in results.cell("volume_scans")["mc"][key] if r["exact"] >= 10]
    return loglog_slope([r["n"] for r in rows], [r["fraction"] for r in rows])[0]


def parity_trained(results) -> dict:
    """Sign changes and kinks of the 20 stored Parity models (A_gen(8), N = 11)."""
    ms = results.cell("parity_gen")["members"]
    return {
        "models": len(ms),
        "max_sign_changes": max(m["sign_changes"] for m in ms),
        "max_kinks": max(m["kinks"] for m in ms),
        "violations": sum(not (m["sign_changes"] <= m["kinks"] + 1 <= paper.H + 1) for m in ms),
    }


def majority_equivalent(results) -> int:
    """Seeds whose A_pos and A_norm Majority members have identical test accuracies."""
    ms = results.cell("majority_posnorm")["members"]
    pos, norm = ({m["seed"]: m["test"] for m in ms if m["variant"] == v} for v in ("pos", "norm"))
    return sum(pos[s] == norm.get(s) for s in pos)
