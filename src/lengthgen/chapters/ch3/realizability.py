"""Positional realizability (chapter 3, "Tasks and the transfer operator"): the tasks' targets,
``T_L(W) = Φ_L W Φ_Lᵀ``, the selection rules, α_L (§4, eq. 2–3; a tied top is a failure) and the
checks of Props. 1–4 and Theorem 2, and the exact min-norm rule (``dps``-digit arithmetic)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

import mpmath
import numpy as np
import torch

from lengthgen.config import ConfigError, check_choice, check_finite, check_positive_int
from lengthgen.nn.positional import BASE, ENCODINGS, NUM_FREQ, KernelFamily, frequencies
from lengthgen.nn.positional import check_encoding
from lengthgen.nn.positional import monotone_range, theta_min

from lengthgen.chapters.ch3.paper import CE_FIT, LONG_LENGTHS, STUDY_LENGTHS, TASKS
from lengthgen.chapters.ch3.paper import L0 as L0_DEFAULT
from lengthgen.chapters.ch3.paper import MAIN_TASKS  # noqa: F401  (re-exported: ch3.experiments)

SELECTION_RULES = ("ce", "min_norm")
#: Relative tolerance below which two logits count as tied (float64 rounding of Φ W Φᵀ).
TIE_RTOL = 1e-9


def check_task(task: str) -> str:
    """Return ``task`` if it is one of :data:`TASKS`; otherwise raise naming the choices."""
    return check_choice("task", task, TASKS)


def _check_lengths(L: int, L0: int) -> tuple[int, int]:
    L0, L = check_positive_int("L0", L0), check_positive_int("L", L)
    if L <= L0:
        raise ConfigError(f"the test length L must exceed the training length L0 = {L0}, got {L}")
    return L, L0


# --------------------------------------------------------------------------- tasks
def targets(task: str, n: int) -> torch.Tensor:
    """``t_n(i)`` for i = 0 … n−1 (a LongTensor), ``−1`` where row i is not a query row."""
    check_task(task)
    n = check_positive_int("n", n)
    i = torch.arange(n)
    h = (n + 1) // 2  # ⌈n/2⌉
    if task == "first":
        return torch.zeros(n, dtype=torch.long)
    if task.startswith("pos"):  # posP: key P, from row P on
        start = int(task[3:])
        t = torch.full((n,), start, dtype=torch.long)
    elif task in ("copy", "reverse"):
        start, t = h, (i - h if task == "copy" else 2 * h - 1 - i)
    else:  # prev and skipK: the key k back
        start = 1 if task == "prev" else int(task[4:])
        t = i - start
    return torch.where(i >= start, t, -1)


def query_rows(task: str, n: int) -> torch.Tensor:
    """The rows of a length-``n`` input on which ``task`` defines a target."""
    return torch.nonzero(targets(task, n) >= 0).flatten()


def scored_rows(task: str, L: int, L0: int = L0_DEFAULT) -> torch.Tensor:
    """``S_L``: the task's query rows that lie in ``[L0, L)`` (eq. 3)."""
    L, L0 = _check_lengths(L, L0)
    q = query_rows(task, L)
    return q[q >= L0]


def offsets(task: str, n: int) -> torch.Tensor:
    """The demanded offsets ``δ_n(i) = i − t_n(i)`` (−1 on non-query rows)."""
    t = targets(task, n)
    return torch.where(t >= 0, torch.arange(n) - t, -1)


def pattern(task: str, n: int, dtype=torch.float64) -> torch.Tensor:
    """The required pattern ``R_n[i, j] = 1[j = t_n(i)]`` (zero rows off the query set)."""
    t = targets(task, n)
    R, q = torch.zeros(n, n, dtype=dtype), torch.nonzero(t >= 0).flatten()
    R[q, t[q]] = 1.0
    return R


# --------------------------------------------------------------------------- the transfer operator
def transfer(W: torch.Tensor, Phi: torch.Tensor) -> torch.Tensor:
    """``T_L(W) = Φ_L W Φ_Lᵀ`` (eq. 2): the head's positional logits on the length-L grid."""
    W, Phi = torch.as_tensor(W), torch.as_tensor(Phi)
    if Phi.ndim != 2 or W.shape != (Phi.shape[1], Phi.shape[1]):
        shapes = f"got W {tuple(W.shape)}, Φ {tuple(Phi.shape)}"
        raise ValueError(f"W must be m×m with m = Φ.shape[1]; {shapes}")
    return Phi @ W @ Phi.T


@dataclass
class Simulation:
    """The outcome of one transfer ``(W, task, L)``: α_L and its row-level evidence."""

    alpha: float
    rows: np.ndarray  # scored rows S_L
    target: np.ndarray  # t_L(i) on those rows
    argmax: np.ndarray  # strict causal argmax (−1 where the top is tied)
    margin: np.ndarray  # logit of the target minus the best competitor (≤ 0 means wrong)
    correct: np.ndarray  # bool


def _row_stats(logits: torch.Tensor, rows: torch.Tensor, tgt: torch.Tensor):
    """Strict causal argmax (−1 on a tie within ``TIE_RTOL``) and target margin of ``rows``."""
    keys = torch.arange(logits.shape[1])
    masked = logits.masked_fill(keys[None, :] > rows[:, None], -math.inf)
    # a −∞ key gives a one-key grid its runner-up
    top2 = torch.nn.functional.pad(masked, (0, 1), value=-math.inf).topk(2, dim=1)
    top, second, arg = top2.values[:, 0], top2.values[:, 1], top2.indices[:, 0]
    tol = TIE_RTOL * top.abs().clamp(min=1.0)
    unique = (top - second) > tol
    t_logit = masked.gather(1, tgt[:, None]).squeeze(1)
    margin = t_logit - torch.where(arg == tgt, second, top)  # best competitor of the target
    correct = margin > tol
    return torch.where(unique, arg, torch.full_like(arg, -1)), margin, correct


def scored_logits(W, family: KernelFamily, task: str, L: int, L0=L0_DEFAULT, *, chunk=1024):
    """``(rows, T_L(W) on them)`` for the scored rows of ``task``, ``chunk`` rows at a time."""
    L, L0 = _check_lengths(L, L0)
    W = torch.as_tensor(W, dtype=torch.float64)
    Phi = family.features(L)
    if W.shape != (family.m, family.m):
        m = family.m
        raise ValueError(f"W must be {m}×{m} for {family.encoding}, got {tuple(W.shape)}")
    rows = scored_rows(task, L, L0)
    sr, sc = (W != 0).any(1).nonzero().flatten(), (W != 0).any(0).nonzero().flatten()
    if len(sr) == 0:
        sr = sc = torch.tensor([0])
    Wsub, Pr, Pc = W[sr][:, sc], Phi[:, sr], Phi[:, sc]
    for s in range(0, len(rows), check_positive_int("chunk", chunk)):
        r = rows[s : s + chunk]
        kmax = int(r.max()) + 1
        yield r, Pr[r] @ Wsub @ Pc[:kmax].T


def simulate(W, family: KernelFamily, task: str, L: int, L0=L0_DEFAULT, *, chunk=1024):
    """α_L (eq. 3, strict argmax) of the head ``W`` of ``family`` on ``task`` at length ``L``."""
    rows, tgt = scored_rows(check_task(task), L, L0), targets(task, L)
    logits = scored_logits(W, family, task, L, L0, chunk=chunk)
    parts = [_row_stats(lg, r, tgt[r]) for r, lg in logits]
    arg, margin, ok = (torch.cat(p).numpy() for p in zip(*parts)) if parts else [np.zeros(0)] * 3
    alpha, ok = float(ok.mean()) if len(rows) else float("nan"), ok.astype(bool)
    return Simulation(alpha, rows.numpy(), tgt[rows].numpy(), arg.astype(int), margin, ok)


def train_margin(W: torch.Tensor, family: KernelFamily, task: str, L0: int = L0_DEFAULT) -> float:
    """The smallest target margin over the query rows at L0 (> 0: W realizes R_L0)."""
    L0 = check_positive_int("L0", L0)
    Phi = family.features(L0)
    rows = query_rows(task, L0)
    P = transfer(torch.as_tensor(W, dtype=torch.float64), Phi)
    _, m, _ = _row_stats(P[rows], rows, targets(task, L0)[rows])
    return float(m.min())


# --------------------------------------------------------------------------- selection rules
def _masked_logits(P: torch.Tensor) -> torch.Tensor:
    n = P.shape[-1]
    return P.masked_fill(~torch.ones(n, n, dtype=torch.bool).tril(), -math.inf)


def fit_ce(
    family: KernelFamily,
    task: str,
    L0: int = L0_DEFAULT,
    *,
    steps: int = CE_FIT["steps"],
    lr: float = CE_FIT["lr"],
    weight_decay: float = CE_FIT["weight_decay"],
    row_scale: torch.Tensor | None = None,
) -> torch.Tensor:
    """The CE selection rule (§4, App. C): sign-projected Adam from zero on the causal-softmax CE at
    L0; ``row_scale`` (chapter 5): per-row factors."""
    L0, steps = check_positive_int("L0", L0), check_positive_int("steps", steps)
    if row_scale is not None:
        row_scale = torch.as_tensor(row_scale, dtype=torch.float64)
        ok = bool(torch.isfinite(row_scale).all() and (row_scale >= 0).all())
        if row_scale.shape != (L0,) or not ok:
            raise ConfigError(
                f"row_scale must be {L0} finite non-negative factors (one per row of the "
                f"length-L0 grid) or None, got shape {tuple(row_scale.shape)}"
            )
    Phi = family.features(L0)
    rows = query_rows(task, L0)
    tgt = targets(task, L0)[rows]
    coef = torch.zeros(family.n_coef, dtype=torch.float64, requires_grad=True)
    opt = torch.optim.Adam([coef], lr=lr, weight_decay=weight_decay)
    for _ in range(steps):
        T = transfer(family.W(coef), Phi)
        if row_scale is not None:
            T = T * row_scale[:, None]
        loss = torch.nn.functional.cross_entropy(_masked_logits(T)[rows], tgt)
        opt.zero_grad(), loss.backward(), opt.step()
        family.project(coef)
    return family.W(coef.detach()).detach()


def fit_min_norm(
    family: KernelFamily, task: str, L0: int = L0_DEFAULT, *, rtol: float | None = None
) -> torch.Tensor:
    """The min-norm selection rule (§4): ``W* = Φ⁺ R (Φ⁺)ᵀ`` within the family (ALiBi's
    positive slope clipped to 0); ``rtol``: the pseudo-inverse's cutoff."""
    L0 = check_positive_int("L0", L0)
    Phi = family.features(L0)
    R = pattern(task, L0)
    if family.encoding in ("sinusoidal", "learned_abs", "nope"):
        Pp = torch.linalg.pinv(Phi, rtol=rtol)
        return Pp @ R @ Pp.T
    eye = torch.eye(family.n_coef, dtype=torch.float64)
    A = torch.stack([transfer(family.W(eye[c]), Phi).flatten() for c in range(family.n_coef)], 1)
    coef = torch.linalg.pinv(A, rtol=rtol) @ R.flatten()
    if family.encoding == "alibi" and coef[1] > 0:
        coef = torch.stack([R.mean(), torch.zeros((), dtype=torch.float64)])
    return family.W(coef)


@lru_cache(maxsize=512)
def _select_cached(encoding, task, rule, L0, num_freq, base, steps, lr, weight_decay):
    fam = KernelFamily(encoding, L0=L0, num_freq=num_freq, base=base)
    if rule == "ce":
        W = fit_ce(fam, task, L0, steps=steps, lr=lr, weight_decay=weight_decay)
    else:
        W = fit_min_norm(fam, task, L0)
    return fam, W


def select(encoding, task, rule="ce", *, L0=L0_DEFAULT, num_freq=NUM_FREQ, base=BASE, **fit):
    """``(family, W)`` selected by ``rule`` (cached); ``fit``: the CE fit's keys, :data:`CE_FIT`."""
    check_encoding(encoding)
    check_task(task)
    check_choice("selection rule", rule, SELECTION_RULES)
    if set(fit) - set(CE_FIT):
        raise ConfigError(f"unknown fit keys {sorted(set(fit) - set(CE_FIT))}; valid: {CE_FIT}")
    fit = {**CE_FIT, **fit}
    ints = [check_positive_int(k, v) for k, v in (("L0", L0), ("num_freq", num_freq))]
    steps = check_positive_int("steps", fit["steps"])
    lr, wd = (check_finite(k, fit[k], nonnegative=True) for k in ("lr", "weight_decay"))
    fam, W = _select_cached(encoding, task, rule, *ints, check_finite("base", base), steps, lr, wd)
    return fam, W.clone()


def alpha(encoding: str, task: str, L: int, *, rule="ce", L0=L0_DEFAULT, **fit_kw) -> float:
    """α_L of ``(encoding, task)`` under the selection ``rule`` (eq. 3)."""
    fam, W = select(encoding, task, rule, L0=L0, **fit_kw)
    return simulate(W, fam, task, L, L0).alpha


def alpha_table(
    encodings=ENCODINGS,
    tasks=TASKS,
    lengths=STUDY_LENGTHS + LONG_LENGTHS,
    *,
    rule: str = "ce",
    L0: int = L0_DEFAULT,
    **fit_kw,
) -> dict:
    """α_L for every (encoding, task, L): ``{(encoding, task): {L: α}}``."""
    return {
        (e, t): {int(L): alpha(e, t, L, rule=rule, L0=L0, **fit_kw) for L in lengths}
        for e in encodings
        for t in tasks
    }


# ------------------------------------------------------------------------ relative kernels (Thm. 2)
def relative_argmax(kappa, n: int, *, tie: str = "fail", rtol: float = TIE_RTOL) -> np.ndarray:
    """Causal row-argmax offsets of the relative kernel ``a_ij = κ(i − j)`` (``kappa`` may be
    a batch) in one prefix-maximum pass; a tied top: ``fail`` (−1), ``low`` or ``high``."""
    check_choice("tie rule", tie, ("fail", "low", "high"))
    n = check_positive_int("n", n)
    k = np.asarray(kappa, dtype=float)
    if k.ndim not in (1, 2) or k.shape[-1] < n:
        raise ValueError(f"kappa must list κ(0) … κ(n−1) (length ≥ {n}), got shape {k.shape}")
    k2 = np.atleast_2d(k)[:, :n]
    M = np.maximum.accumulate(k2, axis=1)  # prefix maximum
    prev = np.concatenate([np.full((len(k2), 1), -np.inf), M[:, :-1]], axis=1)
    tol = rtol * np.maximum(1.0, np.abs(np.where(np.isfinite(prev), prev, 0.0)))
    d = np.arange(n)[None, :]
    new_top = k2 > prev + tol  # a strictly larger value starts a new top
    joins = k2 >= prev - tol  # a new top or a tie with the current one
    low = np.maximum.accumulate(np.where(new_top, d, -1), axis=1)
    high = np.maximum.accumulate(np.where(joins, d, -1), axis=1)
    out = np.where(low == high, low, -1) if tie == "fail" else (low if tie == "low" else high)
    return out[0] if k.ndim == 1 else out


def relative_alpha(
    kappa, task_or_offsets, L: int, L0: int = L0_DEFAULT, *, tie: str = "fail"
) -> float:
    """α_L of a relative kernel κ in O(L) for a task or an ``offset(i, L)`` (App. A.5)."""
    L, L0 = _check_lengths(L, L0)
    arg = relative_argmax(kappa, L, tie=tie)
    if isinstance(task_or_offsets, str):
        rows = scored_rows(task_or_offsets, L, L0).numpy()
        demand = offsets(task_or_offsets, L).numpy()[rows]
    else:
        rows = np.arange(L0, L)
        demand = np.array([task_or_offsets(int(i), L) for i in rows])
    return float(np.mean(arg[rows] == demand)) if len(rows) else float("nan")


def peaked_kernel(c: int, n: int) -> np.ndarray:
    """The relative kernel ``κ(d) = −|d − c|`` (strict unique global maximizer c), d = 0 … n−1."""
    c = check_positive_int("c", c, minimum=0)
    return -np.abs(np.arange(check_positive_int("n", n)) - c).astype(float)


def thm2_random_kernels(n_kernels: int = 4000, n: int = 200, seed: int = 0) -> dict:
    """Deep-row lemma (App. A.5): violations over random kernels with a strict global peak."""
    rng = np.random.default_rng(seed)
    n_kernels, n = check_positive_int("n_kernels", n_kernels), check_positive_int("n", n)
    viol, checked = {"low": 0, "high": 0}, 0
    for _ in range(n_kernels):
        support = int(rng.integers(2, 61))
        k = np.full(n, -1.0)
        k[:support] = rng.integers(0, 7, size=support)
        c = int(rng.integers(0, support))
        k[c] = k[:support].max() + 1.0 + rng.random()
        for tie in ("low", "high"):
            arg = relative_argmax(k, n, tie=tie)
            viol[tie] += int(np.sum(arg[c:] != c))
        checked += n - c
    return {"violations": viol, "deep_rows_checked": checked, "kernels": n_kernels}


def reverse_sweep(n_kernels: int = 20_000, L0: int = L0_DEFAULT, seed: int = 0) -> int:
    """How many random relative kernels solve reverse at L0 (Theorem 2(b): none)."""
    rng = np.random.default_rng(seed)
    K = rng.standard_normal((check_positive_int("n_kernels", n_kernels), L0))
    rows = query_rows("reverse", L0).numpy()
    demand = offsets("reverse", L0).numpy()
    solved = np.ones(len(K), dtype=bool)
    for i in rows:
        win = K[:, : i + 1]
        top = win.max(1)
        solved &= (win[:, demand[i]] == top) & ((win >= top[:, None]).sum(1) == 1)
    return int(solved.sum())


# --------------------------------------------------------------------------- Prop. 1
def prop1_search(
    n: int = 30, n_random: int = 5000, n_adversarial: int = 3, steps: int = 100, seed: int = 0
) -> dict:
    """Prop. 1 (φ(i) = [1, i]): strict interior argmaxes of random W, best adversarial margin."""
    n = check_positive_int("n", n, minimum=3)
    g = torch.Generator().manual_seed(seed)
    Phi = torch.stack([torch.ones(n, dtype=torch.float64), torch.arange(n, dtype=torch.float64)], 1)
    n_random = check_positive_int("n_random", n_random)
    Ws = torch.randn(n_random, 2, 2, generator=g, dtype=torch.float64)
    P = _masked_logits(torch.einsum("ia,nab,jb->nij", Phi, Ws, Phi))  # [N, n, n], keys j > i masked
    top = P.max(2)
    near = P >= (top.values - TIE_RTOL * top.values.abs().clamp(min=1.0))[..., None]
    unique = near.sum(2) == 1
    i = torch.arange(n)
    interior = unique & (top.indices > 0) & (top.indices < i) & (i >= 2)
    best = -math.inf
    rows, tgt = torch.arange(2, n), torch.arange(1, n - 1)
    for _ in range(check_positive_int("n_adversarial", n_adversarial)):
        W = torch.randn(2, 2, generator=g, dtype=torch.float64).requires_grad_(True)
        opt = torch.optim.Adam([W], lr=0.05)
        for _ in range(check_positive_int("steps", steps)):
            Pm = _masked_logits(Phi @ (W / W.norm()) @ Phi.T)[rows]
            t_logit = Pm.gather(1, tgt[:, None]).squeeze(1)
            margin = t_logit - Pm.scatter(1, tgt[:, None], -math.inf).max(1).values
            loss = torch.logsumexp(-margin / 0.01, 0) * 0.01  # a soft maximum of −margin
            opt.zero_grad(), loss.backward(), opt.step()
            best = max(best, float(margin.detach().min()))
    out = {"interior_strict_argmax": int(interior.sum()), "rows_checked": len(Ws) * (n - 2)}
    return out | {"best_prev_margin": best}


# --------------------------------------------------------------------------- Prop. 2
def prop2_montecarlo(
    L, *, L0=L0_DEFAULT, m=32, n_trials=5000, task="prev", rule="min_norm", seed=0, old_key=False
) -> dict:
    """Prop. 2 by Monte Carlo at row i = L − 1 (Gaussian features, a ``min_norm`` or ``generic``
    W blind to the untrained rows): Pr[M_i = t | M_i ∈ N_i] against 1/(k − 1); ``old_key``: a
    trained target, adding ``ratio`` = Pr[M_i = t]·(k − 1)."""
    L, L0 = _check_lengths(L, L0)
    m, n_trials = check_positive_int("m", m), check_positive_int("n_trials", n_trials)
    check_choice("rule", rule, ("min_norm", "generic"))
    if m < L0:
        raise ValueError(f"m must be >= L0 = {L0} so the trained rows are independent, got m = {m}")
    i = L - 1
    t = int(targets(task, L)[i])
    if not isinstance(old_key, bool):
        raise ConfigError(f"old_key must be True or False, got {old_key!r}")
    if old_key and not (0 <= t < L0):
        raise ValueError(f"task {task!r} at L = {L}: target {t} of row {i} is not a trained key")
    if not old_key and not (L0 <= t < i):
        raise ValueError(f"task {task!r} at L = {L}: target {t} of row {i} is not an untrained key")
    g = torch.Generator().manual_seed(seed)
    R = pattern(task, L0)
    hits = in_new = 0
    B = 2000
    for s in range(0, n_trials, B):
        b = min(B, n_trials - s)
        V = torch.randn(b, L, m, generator=g, dtype=torch.float64) / math.sqrt(m)
        M = _prop2_argmax(V, i, L0, R, rule, g)
        in_new += int(((M >= L0) & (M < i)).sum())
        hits += int((M == t).sum())
    k = i - L0 + 1
    out = {"L": L, "row": i, "k": k, "rule": rule, "m": m, "bound": 1.0 / (k - 1)}
    out |= {"conditional": hits / max(in_new, 1), "n_in_new": in_new}
    out |= {"unconditional": hits / n_trials, "p_new": in_new / n_trials, "n_trials": n_trials}
    return out | ({"ratio": (hits / n_trials) * (k - 1)} if old_key else {})


def _prop2_argmax(V, i: int, L0: int, R, rule: str, g) -> torch.Tensor:
    """Row ``i``'s strict argmax M_i (−1 on a tie) for a batch of feature tables ``V``."""
    b, _, m = V.shape
    if rule == "min_norm":
        V0 = V[:, :L0]  # [b, L0, m]
        C = V0 @ V[:, : i + 1].transpose(1, 2)  # V0 v_j for every key
        Gi = torch.linalg.solve(V0 @ V0.transpose(1, 2), torch.cat([C[:, :, i:], C], 2))
        a, Bk = Gi[:, :, 0], Gi[:, :, 1:]  # G⁻¹V0 v_i and G⁻¹V0 v_j
        logits = torch.einsum("bp,pq,bqj->bj", a, R, Bk)  # v_iᵀ V0ᵀG⁻¹ R G⁻¹V0 v_j
    else:
        W = torch.randn(b, m, m, generator=g, dtype=torch.float64)
        logits = torch.einsum("bm,bmn,bjn->bj", V[:, i], W, V[:, : i + 1])
    top = logits.topk(2, dim=1)
    tol = TIE_RTOL * top.values[:, 0].abs().clamp(min=1.0)
    unique = (top.values[:, 0] - top.values[:, 1]) > tol
    return torch.where(unique, top.indices[:, 0], torch.full_like(top.indices[:, 0], -1))


# --------------------------------------------------------------------------- Prop. 3
def prop3_monotone_copy(
    num_freq: int = NUM_FREQ, base: float = BASE, L: int | None = None, L0: int = L0_DEFAULT
) -> dict:
    """Prop. 3: ``κ(d) = sin(d θ_min)`` solves copy; default L = 2·⌊π/(2θ_min)⌉ − 1."""
    fam = KernelFamily("sinusoidal", L0=L0, num_freq=num_freq, base=base)
    peak = monotone_range(num_freq, base)
    L = 2 * peak - 1 if L is None else L
    W = torch.zeros(fam.m, fam.m, dtype=torch.float64)
    W[-2, -1], W[-1, -2] = -1.0, 1.0
    sim = simulate(W, fam, "copy", L, L0, chunk=512)
    out = {"L": L, "theta_min": theta_min(num_freq, base), "peak_offset": peak}
    out |= {"copy_offset": (L + 1) // 2, "alpha": sim.alpha, "n_scored": len(sim.rows)}
    return out | {"min_margin": float(sim.margin.min())}


def prop3_existence(
    delta: int = 1, d_max: int = 50_000, num_freq: int = NUM_FREQ, base: float = BASE
) -> dict:
    """Prop. 3(A): argmax and margin of ``g(d) = Σ_k cos(θ_k (d − δ))``, α_L of offset δ."""
    th = frequencies(num_freq, base).numpy()
    d = np.arange(check_positive_int("d_max", d_max) + 1)
    g = np.cos(np.outer(d - delta, th)).sum(1)
    order = np.argsort(g)[::-1]
    task = {1: "prev", 2: "skip2", 3: "skip3", 5: "skip5"}.get(delta)
    a = relative_alpha(g, task, d_max, L0_DEFAULT) if task else float("nan")
    margin = float(g[order[0]] - g[order[1]])
    return {"argmax": int(order[0]), "margin": margin, "alpha_at_dmax": a, "d_max": d_max}


# --------------------------------------------------------------------------- Prop. 4
def clamped_margin(task: str, L: int, L0: int = L0_DEFAULT, rule: str = "ce") -> float:
    """Smallest target margin over the scored rows of the selected clamped learned-absolute head."""
    fam, W = select("learned_abs", task, rule, L0=L0)
    return float(simulate(W, fam, task, L, L0).margin.min())


def duality_table(lengths=(30, 60, 128), L0: int = L0_DEFAULT) -> list[dict]:
    """Prop. 4's table: α_L of the CE RoPE and clamped heads, peak-1 kernel, clamped margins."""
    rows, cells = [], [(e, t) for e in ("rope", "learned_abs") for t in ("prev", "first", "copy")]
    for L in lengths:
        row = {"L": L} | {f"{e}/{t}": alpha(e, t, L, L0=L0) for e, t in cells}
        k1 = peaked_kernel(1, L)
        row |= {f"peak1/{t}": relative_alpha(k1, t, L, L0) for t in ("prev", "first")}
        row |= {f"learned_abs/{t} margin": clamped_margin(t, L, L0) for t in ("prev", "first")}
        rows.append(row)
    return rows


# ------------------------------------------- exact min-norm rule (§4, W* = Φ⁺ R (Φ⁺)ᵀ), no cutoff
#: Working precision (decimal digits) of :func:`exact_min_norm_alpha`. The sinusoidal Gram matrix
#: Φ_20 Φ_20ᵀ has condition ≈ 10⁵⁴ and RoPE's coefficient matrix ≈ 10⁶², so 150 digits leave
#: more than 80 correct ones; the α values are the same at 250 (tests/test_realizability.py).
EXACT_DPS = 150
#: the encodings whose min-norm interpolant float64 cannot compute (see :func:`fit_min_norm`)
EXACT_ENCODINGS = ("sinusoidal", "rope")


def _exact_frequencies(num_freq: int, base: float):
    return [mpmath.mpf(base) ** (-mpmath.mpf(k) / num_freq) for k in range(num_freq)]


def exact_min_norm_spectrum(
    encoding, L0=L0_DEFAULT, *, num_freq=NUM_FREQ, base=BASE, dps=EXACT_DPS
):
    """Singular values (descending, ``dps`` digits) of the matrix the min-norm rule inverts."""
    check_choice("encoding", encoding, EXACT_ENCODINGS)
    L0 = check_positive_int("L0", L0)
    with mpmath.workdps(check_positive_int("dps", dps, minimum=30)):
        th = _exact_frequencies(num_freq, base)
        if encoding == "sinusoidal":
            rows = [[f(i * t) for t in th for f in (mpmath.cos, mpmath.sin)] for i in range(L0)]
        else:
            rows = _rope_design(th, L0)
        S = mpmath.svd_r(mpmath.matrix(rows), compute_uv=False)
        return sorted((float(x) for x in S), reverse=True)


def _rope_basis(d, th):
    """RoPE's relative kernel basis at offset ``d``: κ(d) = Σ_k a_k cos(dθ_k) − b_k sin(dθ_k)."""
    return [mpmath.cos(d * t) for t in th] + [-mpmath.sin(d * t) for t in th]


def _rope_design(th, L0: int) -> list:
    """RoPE's coefficients → L0 × L0 logits, a row per offset d weighted by √(L0 − |d|)."""
    return [[mpmath.sqrt(L0 - abs(d)) * g for g in _rope_basis(d, th)] for d in range(1 - L0, L0)]


def exact_min_norm_alpha(
    encoding, tasks, lengths, L0=L0_DEFAULT, *, num_freq=NUM_FREQ, base=BASE, dps=EXACT_DPS
) -> dict:
    """α_L of the exact min-norm interpolant: ``{"enc/task": {L: α}}`` plus ``"_recomputed"``
    (rows the error bound could not certify) and ``"_l0_exact"`` (whether W realizes R_L0)."""
    check_choice("encoding", encoding, EXACT_ENCODINGS)
    tasks = [check_task(t) for t in tasks]
    L0 = check_positive_int("L0", L0)
    lengths = [_check_lengths(L, L0)[0] for L in lengths]
    dps = check_positive_int("dps", dps, minimum=30)
    out = {"_recomputed": 0, "_l0_exact": {}}
    with mpmath.workdps(dps):
        th = _exact_frequencies(num_freq, base)
        rule = _sinusoidal_argmaxes if encoding == "sinusoidal" else _rope_argmaxes
        argmaxes = rule(th, L0, max(lengths))
        for task in tasks:
            t0 = targets(task, L0).tolist()
            args, recomputed = argmaxes(t0)
            out["_recomputed"] += recomputed
            q0 = query_rows(task, L0).tolist()
            out["_l0_exact"][f"{encoding}/{task}"] = all(args[i] == t0[i] for i in q0)
            row = out[f"{encoding}/{task}"] = {}
            for L in lengths:
                tg, rs = targets(task, L), scored_rows(task, L, L0).tolist()
                hits = sum(args[i] == int(tg[i]) for i in rs)
                row[int(L)] = hits / len(rs) if rs else float("nan")
    return out


def _sinusoidal_argmaxes(th, L0: int, Lmax: int):
    """Sinusoidal W*: ``t0 ↦ ({row: strict argmax, −1 on a tie}, rows recomputed)``."""
    kd = {d: mpmath.fsum(mpmath.cos(d * t) for t in th) for d in range(-(L0 - 1), Lmax)}
    G = mpmath.matrix([[kd[m - n] for n in range(L0)] for m in range(L0)])
    A = mpmath.matrix([[kd[i - m] for m in range(L0)] for i in range(Lmax)]) * G**-1
    Af = np.array(A.tolist(), dtype=float)

    def argmaxes(t0):
        B = mpmath.matrix(Lmax, L0)
        for m in range(L0):
            if t0[m] >= 0:
                for i in range(Lmax):
                    B[i, t0[m]] += A[i, m]
        Bf = np.array(B.tolist(), dtype=float)
        T = Bf @ Af.T
        bound = 4 * (L0 + 2) * np.finfo(float).eps * (np.abs(Bf) @ np.abs(Af).T)

        def exact_row(i):
            b = [B[i, m] for m in range(L0)]
            vals = [mpmath.fdot(b, [A[j, m] for m in range(L0)]) for j in range(i + 1)]
            top = max(vals)
            win = [j for j, v in enumerate(vals) if v == top]
            return win[0] if len(win) == 1 else -1

        args, recomputed = {}, 0
        for i in range(Lmax):  # the float64 argmax where the error bound certifies it
            r, b = T[i, : i + 1], bound[i, : i + 1]
            top = int(np.argmax(r))
            ub = r + b
            ub[top] = -np.inf
            certified = i == 0 or r[top] - b[top] > ub.max()
            args[i] = top if certified else exact_row(i)
            recomputed += not certified
        return args, recomputed

    return argmaxes


def _rope_argmaxes(th, L0: int, Lmax: int):
    """RoPE's least-squares κ: ``t0 ↦ ({row i = d: argmax column, −1 on a tie}, 0)``."""
    basis = {d: _rope_basis(d, th) for d in range(-(L0 - 1), Lmax)}
    D = list(range(-(L0 - 1), L0))
    U, S, V = mpmath.svd_r(mpmath.matrix(_rope_design(th, L0)))

    def argmaxes(t0):
        # weighted targets per offset: the mean of R over each diagonal of the grid
        hits = [sum(1 for i in range(L0) if 0 <= i - d < L0 and t0[i] == i - d) for d in D]
        y = mpmath.matrix([h / mpmath.sqrt(L0 - abs(d)) for h, d in zip(hits, D)])
        coef = V.T * mpmath.diag([1 / x for x in S]) * (U.T * y)
        kappa = [mpmath.fdot(coef, basis[d]) for d in range(Lmax)]
        args, best, bd, tie = {}, None, -1, False
        for d in range(Lmax):
            if best is None or kappa[d] > best:
                best, bd, tie = kappa[d], d, False
            elif kappa[d] == best:
                tie = True
            args[d] = -1 if tie else d - bd  # row i = d: its argmax column
        return args, 0

    return argmaxes
