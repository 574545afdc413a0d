"""Chapter 5, section "Softmax mass, not just argmax" (chapters 0/1 × chapter 3).

Chapter 3's alignment α_L counts the scored rows whose strict causal argmax of the fitted kernel
``T_L(W)`` is the target (:func:`lengthgen.chapters.ch3.realizability.simulate`). No positive
rescaling of the logits changes an argmax, so multiplying them by a length factor — chapter 1's
log-length scaling — is invisible to α_L. Chapter 0's dilution is about *mass*: here
α_L^{½} is the fraction of scored rows whose causal softmax weight on the target exceeds ½, with
the logits multiplied by ``s = 1`` (``scale="none"``) or ``s = log L / log L0`` (``"log"``) at
evaluation time.

:func:`first_clamped_half` is our closed form of α_L^{½} for a learned absolute table on a task
with a fixed target key (``first``, ``pos2``, ``pos5``): beyond L0 the table is clamped, so every
key j ≥ L0 − 1 of a row i ≥ L0 has the logit of the last trained key, and the weight on the target
falls like 1/i. With the log factor the target's advantage m (over that tail key) becomes
m log L / log L0, the tail's total weight grows like L and the target's like L^{m / log L0}: the
mass is kept at every length iff c = m / log L0 > 1 — chapter 0's rule, with log L0 in place of 1.
"""

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


def target_weight(z, r, tgt) -> torch.Tensor:
    """The causal softmax weight on the target of each scored row: ``z`` the rows' logits
    [rows, keys] (any factor applied), ``r`` the rows' positions, ``tgt`` their targets."""
    causal = torch.arange(z.shape[1])[None, :] <= r[:, None]
    z = z.masked_fill(~causal, -math.inf)
    return torch.exp(z.gather(1, tgt[:, None]).squeeze(1) - torch.logsumexp(z, 1))


def weight_summary(weights, suffix: str = "") -> dict:
    """α^{½} (the share of target weights above ½), the smallest and the median weight of the
    per-chunk ``weights``, under keys ending in ``suffix``."""
    w = torch.cat(weights)
    return {
        f"alpha_half{suffix}": float((w > 0.5).double().mean()),
        f"min_weight{suffix}": float(w.min()),
        f"median_weight{suffix}": float(w.median()),
    }


def mass_alignment(
    W, family, task: str, L: int, L0: int = rz.L0_DEFAULT, *, chunk: int = 512
) -> dict:
    """α_L (strict argmax, chapter 3's eq. 3; ``alpha_log`` with the log-scaled logits) and α_L^{½}
    (causal softmax weight on the target > ½) of the head ``W`` on ``task`` at length ``L``, for
    both scales, from one pass over the scored rows
    (:func:`lengthgen.chapters.ch3.realizability.scored_logits`). Also the smallest and median
    target weight of each scale."""
    L = check_positive_int("L", L)
    tgt_all = rz.targets(task, L)
    s = {k: logit_scale(k, L, L0) for k in SCALES}
    correct, correct_log = [], []
    weights = {k: [] for k in SCALES}
    for r, logits in rz.scored_logits(W, family, task, L, L0, chunk=chunk):
        tgt = tgt_all[r]
        correct.append(rz._row_stats(logits, r, tgt)[2])
        correct_log.append(rz._row_stats(logits * s["log"], r, tgt)[2])
        for k in SCALES:
            weights[k].append(target_weight(logits * s[k], r, tgt))
    out = {
        "L": int(L),
        "alpha": float(torch.cat(correct).double().mean()),
        "alpha_log": float(torch.cat(correct_log).double().mean()),
    }
    for k in SCALES:
        out |= weight_summary(weights[k], f"_{k}")
    return out


def _fixed_target(task: str) -> int:
    if task not in FIXED_TARGET:
        raise ConfigError(f"task {task!r} has no fixed target; choices: {', '.join(FIXED_TARGET)}")
    return FIXED_TARGET[task]


def clamped_margin(W, task: str, L0: int = rz.L0_DEFAULT) -> float:
    """m = W[c, target] − W[c, c], c = L0 − 1: the learned table's advantage of the target over
    the clamped tail key, in the row every query beyond L0 uses."""
    tau = _fixed_target(task)
    W = torch.as_tensor(W, dtype=torch.float64)
    c = L0 - 1
    return float(W[c, tau] - W[c, c])


def clamped_half(W, task: str, L: int, L0: int, s) -> float:
    """Our closed form of α_L^{½} for a learned absolute table ``W`` (L0 × L0) on a fixed-target
    task with the factor ``s`` on the logits (one number, or one per row i = L0 … L − 1): a
    scored row i ∈ [L0, L) uses row c = L0 − 1 of W, and its keys j ≥ c share the logit
    W[c, c], so the target's weight exceeds ½ iff
    (i − c + 1) e^{s W[c,c]} < e^{s W[c,τ]} − Σ_{j < c, j ≠ τ} e^{s W[c,j]} (τ the target).
    Returns the fraction of scored rows that satisfy it (rows with i < τ are not scored)."""
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


def first_clamped_half(W, task: str, L: int, L0: int = rz.L0_DEFAULT, scale="none"):
    """:func:`clamped_half` with the evaluation-time factor of ``scale`` (:func:`logit_scale`)."""
    return clamped_half(W, task, L, L0, logit_scale(scale, L, L0))
