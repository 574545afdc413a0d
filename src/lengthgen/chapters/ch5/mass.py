"""Chapter 5, section "Softmax mass, not just argmax" (chapters 0/1 × chapter 3): α_L^{½}, the
share of scored rows whose causal softmax weight on the target exceeds ½, with the logits times 1
(``none``) or log L / log L0 (``log``) (:func:`mass_alignment`), and our closed form of it for a
learned absolute table (:func:`clamped_half`). Beyond that factor (derived on the details page):
``mass_refit``, chapter 3's CE fit redone and evaluated with the per-row factor
s_i = log(i + 1) / log L0; ``mass_far``, a RoPE head's κ(d) = Σ_k a_k cos(dθ_k) − b_k sin(dθ_k)
out to 10⁷; its frequencies fall into four classes of integer multiples, so κ lives on the
4-torus: sup κ = S4 (:func:`torus_sup`), the density μ(ℓ) above a level (:func:`level_measure`)."""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np
import torch

from lengthgen.chapters.ch3 import realizability as rz
from lengthgen.config import ConfigError, check_choice, check_positive_int
from lengthgen.engine.runs import Cell
from lengthgen.nn.positional import ENCODINGS, KernelFamily, frequencies

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
        alpha, half = (float(x.double().mean()) for x in (torch.cat(correct[k]), w > 0.5))
        out[k] = {"alpha": alpha, "alpha_half": half, "min_weight": float(w.min())}
        out[k]["median_weight"] = float(w.median())
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


#: the far lengths of ``mass_far`` (fixed before any was computed)
FAR_LENGTHS = (100_000, 1_000_000, 10_000_000)
#: the study's largest length: κ beyond it was computed only after the predictions commit
STUDY_MAX = 16_384
#: grid points per class (on [0, 2π)) and value bins of :func:`level_measure`
TORUS_GRID = 2**21
VALUE_BINS = 2**17
FIXED_OFFSET = {"prev": 1, "skip2": 2, "skip3": 3, "skip5": 5}


def row_log_scale(n: int, L0: int = rz.L0_DEFAULT) -> torch.Tensor:
    """``s_i = log(i + 1) / log L0`` for rows i = 0 … n−1 (float64)."""
    return torch.log(torch.arange(1, n + 1, dtype=torch.float64)) / math.log(L0)


@lru_cache(maxsize=64)
def _refit(encoding: str, task: str, L0: int):
    fam = KernelFamily(encoding, L0=L0)
    return fam, rz.fit_ce(fam, task, L0, row_scale=row_log_scale(L0, L0))


def refit(encoding: str, task: str, L0: int = rz.L0_DEFAULT):
    """``(family, W)``: chapter 3's CE fit with the per-row factor s_i (cached, a copy)."""
    fam, W = _refit(encoding, task, L0)
    return fam, W.clone()


def row_alignment(W, family, task: str, L: int, L0: int = rz.L0_DEFAULT) -> dict:
    """α_L, α_L^{½}, smallest and median target weight of ``W``, row i's logits times s_i."""
    s = row_log_scale(L, L0)
    got = alignment(W, family, task, L, L0, {"row": lambda r: s[r][:, None]})["row"]
    return {"L": int(L), **got}


def mass_refit(lengths=None, encodings=None, tasks=None) -> dict:
    """The refit's α_L, α_L^{½} per (encoding, task, L); per fit its norm next to chapter 3's and,
    for learned tables on fixed-target tasks, both fits' clamped margins and the closed form."""
    from lengthgen.chapters.ch5.claims import MASS_L0, MASS_LENGTHS

    rows, fits = [], []
    for e in encodings or ENCODINGS:
        for t in tasks or rz.TASKS:
            fam, W = refit(e, t, MASS_L0)
            _, W_old = rz.select(e, t, "ce", L0=MASS_L0)
            fit = dict(encoding=e, task=t, norm=float(W.norm()), norm_old=float(W_old.norm()))
            fit["train_margin"] = rz.train_margin(W, fam, t, MASS_L0)
            if e == "learned_abs" and t in FIXED_TARGET:
                fit["m"] = clamped_margin(W, t, MASS_L0)
                fit["m_old"] = clamped_margin(W_old, t, MASS_L0)
            fits.append(fit)
            for L in lengths or MASS_LENGTHS:
                row = {"encoding": e, "task": t, **row_alignment(W, fam, t, L, MASS_L0)}
                if "m" in fit:  # the closed form under the per-row factor s_i
                    s = row_log_scale(L, MASS_L0).numpy()[MASS_L0:]
                    row["closed_form"] = clamped_half(W, t, L, MASS_L0, s)
                rows.append(row)
    return {"rows": rows, "fits": fits}


def rope_coefficients(W) -> tuple[np.ndarray, np.ndarray]:
    """``(a, b)`` of a RoPE W (its 2×2 blocks ``[[a_k, b_k], [−b_k, a_k]]``)."""
    W = torch.as_tensor(W, dtype=torch.float64)
    if W.ndim != 2 or W.shape[0] != W.shape[1] or W.shape[0] % 2:
        raise ConfigError(f"W must be a square RoPE matrix (2F × 2F), got {tuple(W.shape)}")
    return torch.diagonal(W)[0::2].numpy().copy(), W[0::2, 1::2].diagonal().numpy().copy()


def rope_kappa(W, n: int, *, chunk=1_000_000) -> np.ndarray:
    """κ(0 … n−1) of a RoPE W in float64, in chunks of offsets (what ``Φ W Φᵀ`` computes)."""
    a, b = rope_coefficients(W)
    th = frequencies().numpy()
    out = np.empty(n)
    for s in range(0, n, chunk):
        ang = np.arange(s, min(s + chunk, n), dtype=np.float64)[:, None] * th[None, :]
        out[s : s + chunk] = np.cos(ang) @ a - np.sin(ang) @ b
    return out


def frequency_classes():
    """``[(base index, [(k, multiplier), …]), …]``: classes of integer multiples (≤ 10⁶)."""
    th = frequencies().numpy()
    classes, seen = [], set()
    for j in sorted(range(len(th)), key=lambda k: th[k]):
        if j in seen:
            continue
        members = []
        for k in range(len(th)):
            q = th[k] / th[j]
            if k not in seen and round(q) <= 10**6 and abs(q - round(q)) <= 1e-12 * q:
                members.append((k, int(round(q))))
        seen.update(k for k, _ in members)
        classes.append((j, members))
    return classes


def _class_f(a, b, members, t):
    return sum(a[k] * np.cos(m * t) - b[k] * np.sin(m * t) for k, m in members)


def torus_sup(W, *, grid=TORUS_GRID) -> dict:
    """S4 = Σ_r max f_r (grid maxima refined by bounded minimisation) and S16 = Σ amplitudes."""
    from scipy.optimize import minimize_scalar

    a, b = rope_coefficients(W)
    sup, t, h = 0.0, np.linspace(0.0, 2 * np.pi, grid, endpoint=False), 2 * np.pi / grid
    classes = frequency_classes()
    for _, mem in classes:
        f = _class_f(a, b, mem, t)
        i = int(f.argmax())
        opts = {"bounds": (t[i] - h, t[i] + h), "method": "bounded", "options": {"xatol": 1e-13}}
        res = minimize_scalar(lambda x, mem=mem: -_class_f(a, b, mem, x), **opts)
        sup += float(max(-res.fun, float(f[i])))
    return {"S4": sup, "S16": float(np.hypot(a, b).sum()), "classes": len(classes)}


def level_measure(W, levels, *, grid=TORUS_GRID, bins=VALUE_BINS, independent: bool = False):
    """μ(ℓ) = |{t ∈ T^4 : F(t) > ℓ}| per level by FFT convolution of the f_r's histograms (to a
    level shift ``level_error``); ``independent=True``: the (wrong) measure on the 16-torus."""
    a, b = rope_coefficients(W)
    classes = frequency_classes()
    if independent:
        classes = [(k, [(k, 1)]) for k in range(len(a))]
    t = np.linspace(0.0, 2 * np.pi, grid, endpoint=False)
    vals = [_class_f(a, b, mem, t) for _, mem in classes]
    lo = [float(v.min()) for v in vals]
    span = sum(float(v.max()) - m for v, m in zip(vals, lo))
    h = span / (bins - len(vals))
    dist = np.ones(1)
    for v, m in zip(vals, lo):
        p = np.bincount(((v - m) / h).astype(np.int64), minlength=1) / len(v)
        n = len(dist) + len(p) - 1
        N = 1 << (n - 1).bit_length()
        dist = np.fft.irfft(np.fft.rfft(dist, N) * np.fft.rfft(p, N), N)[:n]
    dist = np.clip(dist, 0.0, None)
    tail = np.cumsum(dist[::-1])[::-1]  # tail[j] = P(bin ≥ j)
    js = [int(math.floor((ell - sum(lo)) / h)) + 1 for ell in levels]
    mu = [float(tail[j]) if 0 <= j < len(tail) else float(j < 0) for j in js]
    return {"mu": mu, "level_error": len(vals) * h}


def far_records(kappa, L0: int = rz.L0_DEFAULT) -> np.ndarray:
    """The offsets d ≥ L0 where κ(d) is a strict record of κ(0 … d) (chapter 3's tie tolerance)."""
    arg = rz.relative_argmax(kappa, len(kappa))
    d = np.arange(len(kappa))
    return d[(arg == d) & (d >= L0)]


def first_exceedance(kappa, delta: int) -> int:
    """The first offset d > δ with κ(d) > κ(δ) beyond chapter 3's tie tolerance (−1 if none)."""
    k = np.asarray(kappa)
    tol = rz.TIE_RTOL * max(1.0, abs(k[delta]))
    hit = np.nonzero(k[delta + 1 :] > k[delta] + tol)[0]
    return int(hit[0]) + delta + 1 if len(hit) else -1


def mass_far(lengths=FAR_LENGTHS, study_max: int = STUDY_MAX, grid=TORUS_GRID) -> dict:
    """Per RoPE task: S4, S16, d1, κ's running maximum at ``study_max`` and at each length, μ of
    that maximum and of κ(δ), the offsets beyond ``study_max`` exceeding it, the records, α_L."""
    from lengthgen.chapters.ch5.claims import MASS_L0

    lengths = [check_positive_int("L", L, minimum=study_max + 1) for L in lengths]
    rows = []
    for t in rz.TASKS:
        _, W = rz.select("rope", t, "ce", L0=MASS_L0)
        k = rope_kappa(W, max(lengths))
        M0 = float(k[:study_max].max())
        sup = torus_sup(W, grid=grid)
        delta = FIXED_OFFSET.get(t)
        levels = [M0] + ([float(k[delta])] if delta else [])
        mu = level_measure(W, levels, grid=grid)
        mu16 = level_measure(W, levels, grid=grid, independent=True)
        recs = far_records(k, MASS_L0)
        row = {"task": t, **sup, "study_max": M0, "mu_study_max": mu["mu"][0]}
        row["mu16_study_max"] = mu16["mu"][0]
        row["alpha_study"] = rz.relative_alpha(k, t, study_max, MASS_L0)
        row |= {"level_error": mu["level_error"], "study_records": int((recs < study_max).sum())}
        fixed = [None] * 4  # none of these without a fixed offset δ
        if delta:
            fixed = [first_exceedance(k, delta), levels[1], mu["mu"][1], mu16["mu"][1]]
        row |= dict(zip(("d1", "kappa_delta", "mu_kappa_delta", "mu16_kappa_delta"), fixed))
        row["far"] = []
        for L in lengths:
            far = {"L": int(L), "alpha": rz.relative_alpha(k, t, L, MASS_L0)}
            far["n_scored"] = int(len(rz.scored_rows(t, L, MASS_L0)))
            far |= {"running_max": float(k[:L].max()), "exceed": int((k[study_max:L] > M0).sum())}
            far["records"] = int(((recs >= study_max) & (recs < L)).sum())
            far["exceed_delta"] = int((k[study_max:L] > levels[1]).sum()) if delta else None
            row["far"].append(far)
        rows.append(row)
    return {"rows": rows, "study_max": int(study_max)}


# their cells were hashed when they lived in ``mass_more`` (engine.runs._qualname)
mass_refit.stored_as = "lengthgen.chapters.ch5.mass_more.mass_refit"
mass_far.stored_as = "lengthgen.chapters.ch5.mass_more.mass_far"


def cells(scale: str) -> list[Cell]:
    """``mass_refit``, ``mass_far`` (smoke: 2 encodings × 2 tasks, 3 lengths; 10⁵, coarser grid)."""
    check_choice("scale", scale, ("smoke", "full"))
    if scale == "full":
        return [Cell("mass_refit", mass_refit, {}), Cell("mass_far", mass_far, {})]
    refit_kw = {"lengths": [30, 60, 128], "encodings": ["learned_abs", "rope"]}
    return [
        Cell("mass_refit", mass_refit, {**refit_kw, "tasks": ["prev", "first"]}),
        Cell("mass_far", mass_far, {"lengths": [100_000], "grid": 2**16}),
    ]
