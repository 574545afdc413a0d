"""Chapter 5, section "Softmax mass, not just argmax" (chapters 0/1 × chapter 3): α_L^{½}, the
share of scored rows whose causal softmax weight on the target exceeds ½, with the logits times 1
(``none``) or log L / log L0 (``log``) (:func:`mass_alignment`), and our closed form of it for a
learned absolute table (:func:`clamped_half`)."""

from __future__ import annotations

import math

import numpy as np
import torch

from lengthgen.config import ConfigError, check_choice, check_positive_int
from lengthgen.chapters.ch3 import realizability as rz

SCALES = ("none", "log")
#: tasks whose target is one fixed key (the clamped closed form applies to learned_abs on them)
FIXED_TARGET = {"first": 0, "pos2": 2, "pos5": 5}


def logit_scale(scale: str, L: int, L0: int) -> float:
    """The evaluation-time factor on the logits: 1, or log L / log L0."""
    check_choice("scale", scale, SCALES)
    return 1.0 if scale == "none" else math.log(L) / math.log(L0)


def alignment(W, family, task, L, L0, factors: dict, chunk: int = 512) -> dict:
    """Per name in ``factors`` (scored rows ``r`` → factor on their logits): α_L, α_L^{½} (the
    share of target weights above ½), the smallest and the median target weight."""
    tgt_all = rz.targets(task, L)
    correct, weights = ({k: [] for k in factors} for _ in range(2))
    for r, logits in rz.scored_logits(W, family, task, L, L0, chunk=chunk):
        tgt, causal = tgt_all[r], torch.arange(logits.shape[1])[None, :] <= r[:, None]
        for k, factor in factors.items():
            z = logits * factor(r)
            correct[k].append(rz._row_stats(z, r, tgt)[2])
            z = z.masked_fill(~causal, -math.inf)  # the causal softmax weight on the target:
            weights[k].append(torch.exp(z.gather(1, tgt[:, None])[:, 0] - torch.logsumexp(z, 1)))
    out = {}
    for k in factors:
        w = torch.cat(weights[k])
        out[k] = {
            "alpha": float(torch.cat(correct[k]).double().mean()),
            "alpha_half": float((w > 0.5).double().mean()),
            "min_weight": float(w.min()),
            "median_weight": float(w.median()),
        }
    return out


def mass_alignment(
    W, family, task: str, L: int, L0: int = rz.L0_DEFAULT, *, chunk: int = 512
) -> dict:
    """α_L (chapter 3's eq. 3; ``alpha_log`` with the log factor) and, per scale, α_L^{½} with the
    smallest and median target weight, from one pass over the scored rows."""
    s = {k: logit_scale(k, L, L0) for k in SCALES}
    got = alignment(W, family, task, L, L0, {k: lambda r, k=k: s[k] for k in SCALES}, chunk)
    out = {"L": int(L), "alpha": got["none"]["alpha"], "alpha_log": got["log"]["alpha"]}
    for k in SCALES:
        out |= {f"{key}_{k}": got[k][key] for key in ("alpha_half", "min_weight", "median_weight")}
    return out


def _fixed_target(task: str) -> int:
    if task not in FIXED_TARGET:
        raise ConfigError(f"task {task!r} has no fixed target; choices: {', '.join(FIXED_TARGET)}")
    return FIXED_TARGET[task]


def clamped_margin(W, task: str, L0: int = rz.L0_DEFAULT) -> float:
    """m = W[c, target] − W[c, c], c = L0 − 1: the target's advantage over the clamped tail key."""
    tau, c, W = _fixed_target(task), L0 - 1, torch.as_tensor(W, dtype=torch.float64)
    return float(W[c, tau] - W[c, c])


def clamped_half(W, task: str, L: int, L0: int, s) -> float:
    """Our closed form of α_L^{½} for a learned table with the factor ``s`` (one, or one per row
    i = L0 … L − 1): the target τ keeps more than half iff
    (i − c + 1) e^{s W[c,c]} < e^{s W[c,τ]} − Σ_{j < c, j ≠ τ} e^{s W[c,j]}, c = L0 − 1."""
    check_positive_int("L", L, minimum=L0 + 1)
    tau = _fixed_target(task)
    W = np.asarray(torch.as_tensor(W, dtype=torch.float64))
    c = L0 - 1
    row = np.reshape(s, (-1, 1)) * W[c]  # [1 or L − L0, L0]
    top = np.maximum(row.max(1), 0.0)  # shift for stability (the comparison is homogeneous)
    e = np.exp(row - top[:, None])
    rest = e[:, :c].sum(1) - e[:, tau]
    K = (e[:, tau] - rest) / e[:, c]  # rows i with i − c + 1 < K keep more than half
    i = np.arange(L0, L)
    return float(((i - c + 1) < K).mean())
