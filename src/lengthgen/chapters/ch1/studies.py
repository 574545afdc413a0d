"""Chapter 1's secondary studies (details page, issue 38; their claims in :mod:`.claims`): the
feed-forward network for PARITY (§3.1), the log-scaled FIRST construction with layer norm (§5.3),
the outvote probe of trained FIRST encoders (§5.2, cell ``first_mechanism``) and the PARITY learner
over other settings (§5.1, cell ``parity_grid``)."""

from __future__ import annotations

import math
from typing import Mapping

import numpy as np
import torch

from lengthgen.chapters.ch1 import paper
from lengthgen.chapters.ch1 import training as T
from lengthgen.chapters.ch1.encoder import Grouped, grouped
from lengthgen.chapters.ch1.measures import exact_sets
from lengthgen.config import ConfigError, check_finite, check_positive_int


# --------------------------------------------------------------------------- §3.1: FFNN for PARITY
def ffnn_parity_logits(bits: torch.Tensor, *, relu: bool = False) -> torch.Tensor:
    """Logits of the feed-forward PARITY network F_n for strings ``bits`` [B, n] (float64, exact).
    Hidden unit j = 1 … n is a threshold unit h_j = 1[Σ x_i − j + ½ > 0] = 1[k ≥ j]; the output
    Σ_j (−1)^(j+1) h_j − ½ is ½ for odd k and −½ for even k. With ``relu`` each threshold unit is
    the pair ReLU(k − j + 1) − ReLU(k − j), equal to 1[k ≥ j] for integer k (2n ReLU units)."""
    n = bits.shape[-1]
    j = torch.arange(1, n + 1, dtype=torch.float64)
    alt = torch.where(j % 2 == 1, 1.0, -1.0).to(torch.float64)
    if relu:
        w1, b1, w2 = torch.ones(n, 2 * n), torch.cat([1 - j, -j]), torch.cat([alt, -alt])
    else:
        w1, b1, w2 = torch.ones(n, n), 0.5 - j, alt
    h = bits.to(torch.float64) @ w1.to(torch.float64) + b1  # every unit reads the count k
    h = torch.relu(h) if relu else (h > 0).to(torch.float64)
    return h @ w2 - 0.5


def ffnn_exactness(*, relu: bool, n_exhaustive: int = paper.EXACT_N_EXHAUSTIVE) -> dict:
    """Accuracy and |logit| range of F_n on :func:`measures.exact_sets`."""
    sets = exact_sets(n_exhaustive)
    logits = [ffnn_parity_logits(bits, relu=relu) for bits in sets]
    accs = [float(((s > 0).long() == b.sum(-1) % 2).double().mean()) for s, b in zip(logits, sets)]
    mags = torch.cat(logits).abs()
    out = {"exhaustive_min_acc": min(accs[:n_exhaustive])}
    out["random_acc"] = dict(zip(paper.EXACT_RANDOM_NS, accs[n_exhaustive:]))
    return {**out, "min_abs_logit": float(mags.min()), "max_abs_logit": float(mags.max())}


# --------------------------------------------------------------------------- §5.3 with layer norm
#: Lengths and layer-norm ε of the log-scaled FIRST construction with paired layer norm.
LN_NS = (1, 2, 3, 5, 10, 30, 100, 300, 1000, 10_000, 100_000)
LN_EPS = (0.0, 1e-5)
#: Output weight at which the cross-entropy target of claim ch1.logscaled.with_layer_norm is read.
LN_LAMBDA = 40.0


def ln_logit_bound(eps: float, *, s_min: float = 0.25, d: int = 5) -> float:
    """Lower bound on |logit| of the one-layer log-scaled FIRST construction (width d) with paired
    layer norm (ε ≥ 0), given |s| ≥ ``s_min`` without it (§5.3; details page, eq-ln-log-bound)."""
    eps = check_finite("eps", eps, nonnegative=True)
    return s_min / math.sqrt((1 + eps) * (1 + s_min**2) / d + eps**2)


# --------------------------------------------------------------------------- §5.2: outvoted?
def _probe_inputs(n: int) -> Grouped:
    """Every string class at length n as groups: first symbol w₁ ∈ {0, 1} (outer) and k′ = 0 … n − 1
    later 1s (inner). With the feature 1[i = 1] only, the encoder's output depends on nothing else."""
    k = torch.arange(n, dtype=torch.float64).repeat(2)
    return grouped(torch.arange(2).repeat_interleave(n), k, n)


@torch.no_grad()
def outvote_profile(enc, params: dict, n: int = paper.TEST_N) -> dict:
    """Per member of a trained FIRST encoder at length ``n``, from its logit for every (w₁, k′):
    ``exact_error``      error rate over all 2ⁿ strings (k′ ~ Binomial(n − 1, ½), w₁ fair)
    ``balanced_correct`` right for both w₁ when the later symbols are balanced, k′ ∈ {⌊(n−1)/2⌋,
                         ⌈(n−1)/2⌉}: the first position still decides once the others cancel
    ``flip_distance``    the smallest imbalance |k′ − (n − 1)/2| at which it is wrong (None: never)
    ``rest_pushes_up``   more later 1s raise its logit for both w₁ (the later symbols vote "1")."""
    from scipy.stats import binom

    n = check_positive_int("n", n, minimum=2)
    f = enc(params, _probe_inputs(n)).double().cpu().numpy().reshape(-1, 2, n)
    k = np.arange(n)
    wrong = (f > 0) != np.array([0, 1])[None, :, None]
    pmf = binom.pmf(k, n - 1, 0.5)
    dist = np.abs(k - (n - 1) / 2)
    mid = dist == dist.min()
    return {
        "exact_error": (0.5 * (wrong * pmf).sum((1, 2))).tolist(),
        "balanced_correct": [bool(not w[:, mid].any()) for w in wrong],
        "flip_distance": [float(dist[w.any(0)].min()) if w.any() else None for w in wrong],
        "rest_pushes_up": [bool((x[:, -1] > x[:, 0]).all()) for x in f],
    }


def mechanism_counts(cell: dict) -> dict:
    """Claim ch1.first_train.mechanism: among the standard-attention runs of cell ``first_mechanism``
    that are not 100% accurate on their test strings at n = 1000, how many are balanced-correct."""
    members, acc = cell["members"], cell["test_acc"]
    failed = [i for i, m in enumerate(members) if not m["log_scaled"] and acc[i] < 1.0]
    outvoted = sum(cell["balanced_correct"][i] for i in failed)
    return {"failed_runs": len(failed), "outvoted": outvoted}


def mechanism_table(cell: dict) -> list[dict]:
    """The details page's table of cell ``first_mechanism``, per (training length, attention)."""
    rows = []
    for n, arm, idx in T.by_arm(cell):
        failed = [i for i in idx if cell["test_acc"][i] < 1.0]
        row = {"training n": n, "attention": arm, "runs": len(idx)}
        row["not 100% at n = 1000"] = len(failed)
        row["of which right at balance"] = sum(cell["balanced_correct"][i] for i in failed)
        row["later 1s push the logit up"] = sum(cell["rest_pushes_up"][i] for i in idx)
        err = np.mean([cell["exact_error"][i] for i in idx])
        rows.append({**row, "mean exact error at n = 1000": float(err)})
    return rows


# --------------------------------------------------------------------------- §5.1: other settings
def train_parity_grid(
    *,
    depths=(2,),
    lrs=(paper.MODEL["lr"],),
    log_scaled=(False,),
    runs: int = 1,
    model: Mapping = paper.MODEL,
    device: str = "cpu",
    progress: bool = False,
    **settings,
) -> dict:
    """Cell ``parity_grid``: the PARITY learner of §5.1 at every (depth, learning rate, log
    scaling), ``runs`` runs each, one ensemble per depth; run r reads the seeds of run r of
    ``parity_training`` (``settings``: the other arguments of :func:`training.train_parity_runs`)."""
    lrs = [check_finite("learning rate", v) for v in lrs]
    if not lrs or min(lrs) <= 0 or not depths or not log_scaled:
        got = f"{depths}, {lrs}, {log_scaled}"
        raise ConfigError(f"the grid needs depths, learning rates > 0 and scalings, got {got}")
    runs = check_positive_int("runs", runs)
    grid = [(lr, bool(s)) for lr in lrs for s in log_scaled]
    members = [(r, lr, s) for lr, s in grid for r in range(runs)]
    kw, res = {**settings, "runs": runs}, []
    for depth in depths:
        m = {**model, "n_layers": check_positive_int("depth", depth)}
        res.append(T.train_parity_runs(kw, kw["seed_offsets"], m, device, progress, members))
    proto = {k: settings[k] for k in ("n", "epochs", "steps_per_epoch", "test_strings")}
    proto.update(runs=runs, seed=settings["seed"], model=dict(model))
    out = {"protocol": proto}
    out["settings"] = [{"depth": d, "lr": lr, "log_scaled": s} for d in depths for lr, s in grid]
    out["setting"] = [i // runs for i in range(len(depths) * len(members))]
    for key in ("test_acc", "test_ce_bits", "train_ce_bits_last_epoch"):
        out[key] = [v for r in res for v in r[key]]
    return {**out, "wall_time_s": sum(r["wall_time_s"] for r in res)}


def grid_means(cell: dict) -> list[dict]:
    """Per setting of cell ``parity_grid``: depth, learning rate, scaling, runs, mean test accuracy,
    and whether it is the setting the paper reports (depth 2, lr 3e-4, standard attention)."""
    rows = []
    for j, s in enumerate(cell["settings"]):
        acc = [a for a, i in zip(cell["test_acc"], cell["setting"]) if i == j]
        reported = (paper.MODEL["n_layers"], paper.MODEL["lr"], False)
        rows.append({**s, "runs": len(acc), "mean_acc": float(np.mean(acc))})
        rows[-1]["reported"] = (s["depth"], s["lr"], s["log_scaled"]) == reported
    return rows
