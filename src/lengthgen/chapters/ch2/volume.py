"""Exact-solution analysis of the single-layer models (chapter 2, "Exact-solution volume"): A_gen's
count levels (eq. 71) and what builds on them (Lemma 4's Majority area, the score contrast of
Lemmas 6–7, App. A.4's Parity), the paper's centers, the score-gap coefficients (eqs. 9, 20), the
exactness checker (:func:`exactness`), admissible widths, Monte Carlo exact fractions; and, by the
output-bias fiber (:func:`bias_fiber`), the volumes the scans do not reach (details page): paper
Table 1's zeros, Majority under A_sin (Thm. 9, Lemma 10) and eq. 87's whole-box bound."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch

from lengthgen import stats
from lengthgen.config import check_choice, check_finite, check_positive_int
from lengthgen.chapters.ch2.single_layer import BETAS  # noqa: F401  (re-exported: volume.BETAS)
from lengthgen.chapters.ch2.single_layer import FAMILIES, VARIANTS, F_norm, check_beta, check_width
from lengthgen.chapters.ch2.single_layer import encode, forward, param_shapes, positional_scores
from lengthgen.chapters.ch2.single_layer import classifier, single_point, value_mix
from lengthgen.chapters.ch2.paper import H
from lengthgen.nn.tasks import TASKS, all_strings, label

DT = torch.float64


def _check_n(n, task=None) -> int:
    n = check_positive_int("length n", n)
    if task == "majority" and n % 2 == 0:
        raise ValueError(f"majority is defined for odd n only, got n = {n}")
    return n


def _positive(name: str, x) -> float:
    if not check_finite(name, x) > 0:
        raise ValueError(f"{name} must be > 0, got {x}")
    return float(x)


def _beta_n(n: int, beta: str) -> float:
    return math.log(n) if check_beta(beta) == "log" else 1.0


def _batch(params: dict) -> dict:
    """``params`` with a point dimension (added if it is a single point)."""
    return single_point(params) if params["b2"].dim() == 1 else dict(params)


def _head_diff(P: dict, A: torch.Tensor) -> torch.Tensor:
    """f = y₁ − y₀ for attention outputs A [P, ..., 2]."""
    y = classifier(P, A.reshape(A.shape[0], -1, 2))
    return (y[..., 1] - y[..., 0]).reshape(A.shape[:-1])


# --------------------------------------------------------------------------- count levels (eq. 71)
def count_level_logits(P: dict, n: int, beta: str = "log", levels=None) -> torch.Tensor:
    """The log-odds d_t = log t − log(n − t) + β_n X of the attention share ρ_t = σ(d_t) on the ones
    at A_gen's count levels t (eq. 71; ``levels``, default 0 … n): [P, levels]; β_n: log n or 1."""
    t = torch.arange(0, n + 1, dtype=DT) if levels is None else levels
    return torch.log(t) - torch.log(n - t) + _beta_n(n, beta) * score_contrast(P)[:, None]


def count_level_attention(P: dict, n: int, beta: str = "log", levels=None) -> torch.Tensor:
    """A_gen's attention output A_t = v₀ + ρ_t (v₁ − v₀) at its count levels (eq. 71), [P, t, 2]."""
    return value_mix(P["W_V"], P["b_V"], torch.sigmoid(count_level_logits(P, n, beta, levels)))


def count_level_outputs(P: dict, n: int, beta: str = "log", levels=None) -> torch.Tensor:
    """f(A_t) = y₁ − y₀ at A_gen's count levels (eq. 71): [P, levels]."""
    return _head_diff(P, count_level_attention(P, n, beta, levels))


def structural_gen(P, task, n, beta="log"):
    """A_gen's exactness from its n + 1 count levels: (decisions, margins)."""
    f = count_level_outputs(P, n, beta)
    if task in ("first", "index") and n >= 2:  # count 1 … n−1 carries both labels
        return np.full(f.shape[0], False, dtype=object), (-f[:, 1:n].abs().min(-1).values).numpy()
    t = torch.arange(0, n + 1)
    lab = {"majority": (t >= (n + 1) // 2).long(), "parity": t % 2}.get(task, t)  # n = 1: the bit
    m = (f * (2 * lab - 1).to(DT)).min(-1).values
    return np.array((m > 0).tolist(), dtype=object), m.numpy()


# -------------------------------------------------------------- the Majority area (Lemma 4, eq. 75)
def majority_area_closed_form(eta: float, n: int, beta: str = "log") -> float:
    """∫ (width of the exact b₂,₁ interval) dX at the A_gen Majority center of scale η:
    η³ · 4 artanh(1/n) / β_n (Lemma 8's slope η³ times eq. 75)."""
    eta, n = _positive("eta", eta), _check_n(n, "majority")
    return eta**3 * 4 * math.atanh(1 / n) / _beta_n(n, beta)


def majority_bias_area(params: dict, n: int, X_grid: np.ndarray, beta: str = "log") -> dict:
    """The widths of the exact b₂,₁ interval (from the two central count levels) at each grid X
    (set through W_K) and their trapezoid area (A_gen Majority, Lemma 5)."""
    n, P = _check_n(n, "majority"), _batch(params)
    m = (n - 1) // 2

    def width(X):
        WK = P["W_K"].clone()
        WK[0, 0, 1] = WK[0, 0, 0] + X / float(P["b_Q"][0, 0])
        f = count_level_outputs(dict(P, W_K=WK, b2=torch.zeros_like(P["b2"])), n, beta)[0]
        return max(0.0, float(f[m + 1] - f[m]))

    widths = np.array([width(X) for X in np.asarray(X_grid, dtype=float)])
    return {"widths": widths, "area": float(np.trapezoid(widths, X_grid))}


# ------------------------------------------------------------------ the score contrast (Lemmas 6–7)
def uniform_box(variant: str, h: int, B: float, samples: int, seed: int = 0) -> dict:
    """``samples`` points drawn uniformly from the raw box [−B, B]^D of ``variant``'s trainable
    scalars (Definition 1), float64, in the order of :func:`single_layer.param_shapes`."""
    B, samples = _positive("the box half-width B", B), check_positive_int("samples", samples)
    g = torch.Generator().manual_seed(check_positive_int("seed", seed, minimum=0))
    draw = lambda shape: (torch.rand(samples, *shape, generator=g, dtype=DT) * 2 - 1) * B
    return {k: draw(shape) for k, shape in param_shapes(variant, h).items()}


def score_contrast(params: dict) -> torch.Tensor:
    """The score contrast X = qᵀW_K(e₁ − e₀) of A_gen points (eq. 70; q = b_Q as z = 0)."""
    P = _batch(params)
    return (P["b_Q"] * (P["W_K"][:, :, 1] - P["W_K"][:, :, 0])).sum(-1)


def sample_score_contrast(B: float, samples: int, seed=0, h=8, chunk=100_000) -> np.ndarray:
    """X of ``samples`` A_gen(h) points of the box [−B, B]^D, in chunks (:func:`uniform_box`
    with seeds ``seed``, ``seed + 1``, …)."""
    samples = check_positive_int("samples", samples)
    sizes = [min(chunk, samples - lo) for lo in range(0, samples, chunk)]
    X = lambda i, m: score_contrast(uniform_box("gen", h, B, m, seed=seed + i)).numpy()
    return np.concatenate([X(i, m) for i, m in enumerate(sizes)])


def score_contrast_peak_density(B: float = 1.0) -> float:
    """The peak density f_X(0) = 2∫₀¹ g(u) du of X in the box [−B, B]^D (Lemma 6: ≤ B⁻²), g(u) the
    density at 0 of Δ₁ + uΔ₂ (Δ_i triangular on [−2, 2]), by quadrature (details, "Lemmas 6–7")."""
    from scipy import integrate

    B = _positive("the box half-width B", B)

    def f_tri(v):  # density of the difference of two uniforms on [−1, 1]
        return max(0.0, 2.0 - abs(v)) / 4.0

    def g(u):
        if u == 0.0:
            return f_tri(0.0)
        f = lambda v: f_tri(v) * f_tri(v / u) / u  # noqa: E731
        return integrate.quad(f, -2 * u, 2 * u, points=[0.0], epsabs=1e-13, epsrel=1e-12)[0]

    val = 2 * integrate.quad(g, 0.0, 1.0, epsabs=1e-12, epsrel=1e-11, limit=200)[0]
    return val / B**2


# --------------------------------------------------------------------------- Parity (App. A.4)
def _kinks(P: dict, V: torch.Tensor) -> torch.Tensor:
    """Where on the value segment u₀ + p(u₁ − u₀) (u: columns 0, 1 of the value map V, plus b_V)
    each hidden unit switches, [P, h]; NaN where it never does."""
    u0, u1 = V[:, :, 0] + P["b_V"], V[:, :, 1] + P["b_V"]
    z0 = torch.einsum("phi,pi->ph", P["W1"], u0) + P["b1"]
    d = torch.einsum("phi,pi->ph", P["W1"], u1 - u0)
    return -z0 / torch.where(d != 0, d, torch.full_like(d, float("nan")))


def parity_sign_changes(params: dict, n: int, beta: str = "log") -> dict:
    """Per point, the sign changes of f along the count levels and the kinks of f on the value
    segment (App. A.4: exact Parity needs n, and κ ≤ h kinks allow at most κ + 1)."""
    n, P = _check_n(n), _batch(params)
    s = torch.sign(count_level_outputs(P, n, beta))
    kink = _kinks(P, P["W_V"])
    out = dict(sign_changes=((s[:, 1:] * s[:, :-1]) < 0).sum(-1).numpy(), needed=n)
    out |= dict(kinks=((kink > 0) & (kink < 1)).sum(-1).numpy())
    return out | dict(exact=structural_gen(P, "parity", n, beta)[1] > 0)


def parity_solution(n: int) -> dict[str, torch.Tensor]:
    """An exact A_gen(h = n−1) Parity solution at length n ≥ 4 (unbatched; chapter 2, "Parity"):
    hidden kinks at the count levels t/n, output weights by a linear program (largest margin)."""
    from scipy.optimize import linprog

    n = check_positive_int("n", n, minimum=4)
    h = n - 1
    kinks, ps = np.arange(1, n) / n, np.arange(0, n + 1) / n
    sigma = np.ones(h)
    sigma[2] = -1.0  # unit 3 opens to the left
    feats = np.maximum(0.0, sigma[None, :] * (ps[:, None] - kinks[None, :]))  # [n+1, h]
    sgn = np.array([(-1) ** (t + 1) for t in range(n + 1)], dtype=float)
    # variables: beta (h), c, m ; maximise m s.t. sgn_t (feats_t·beta + c) ≥ m, |beta|, |c| ≤ 4n
    A_ub = np.hstack([-(sgn[:, None] * feats), -sgn[:, None], np.ones((n + 1, 1))])
    cost, bounds = np.r_[np.zeros(h + 1), -1.0], [(-4 * n, 4 * n)] * (h + 1) + [(None, 1.0)]
    res = linprog(cost, A_ub=A_ub, b_ub=np.zeros(n + 1), bounds=bounds, method="highs")
    if not res.success or res.x[-1] <= 0:
        raise RuntimeError(f"no parity solution found for n = {n}: {res.message}")
    beta, c = res.x[:h], res.x[h]
    W1 = torch.tensor(np.stack([sigma, np.zeros(h)], 1))  # units read the mass on the ones
    W2 = torch.tensor(np.stack([np.zeros(h), beta]))
    b1 = torch.tensor(-sigma * kinks, dtype=DT)
    t = lambda *v: torch.tensor(v, dtype=DT)  # noqa: E731
    att = dict(W_Q=torch.zeros(2, 2, dtype=DT), b_Q=t(1, 0), W_K=torch.zeros(2, 2, dtype=DT))
    att |= dict(b_K=t(0, 0), W_V=t(0, 1, 0, 0).view(2, 2), b_V=t(0, 0))
    return dict(att, W1=W1, b1=b1, W2=W2, b2=t(0.0, c))


#: tasks each model family is analysed on
MODEL_TASKS = dict.fromkeys(("gen", "sin"), ("first", "index", "majority", "parity"))
MODEL_TASKS |= dict.fromkeys(("pos", "norm"), ("first", "index"))


def _check_model_task(variant, task):
    check_choice("variant", variant, VARIANTS)
    check_choice("task", task, TASKS)
    if task not in MODEL_TASKS[variant]:
        valid = ", ".join(MODEL_TASKS[variant])
        raise ValueError(f"task {task!r} is not analysed under A_{variant}; valid: {valid}")


# --------------------------------------------------------------------------- centers
def paper_eta(B: float) -> float:
    """The scale the paper's proofs use: η = min(B/16, 1/16) (App. A)."""
    return min(_positive("box size B", B) / 16, 1 / 16)


def center(variant: str, task: str, h: int = 8, *, B: float = 1.0, eta=None) -> dict:
    """The paper's exact center (unbatched, float64) of A_pos / A_norm First and Index (eqs. 25,
    37; B.1: scores −η²(j − k)² + const), A_gen Majority (Lemma 8); η: ``eta`` or paper_eta(B)."""
    _check_model_task(variant, task)
    h = check_width(h)
    e = paper_eta(B) if eta is None else check_finite("eta", eta, nonnegative=True)
    t = lambda *v: torch.tensor(v, dtype=DT)  # noqa: E731
    W1, W2 = torch.zeros(h, 2, dtype=DT), torch.zeros(2, h, dtype=DT)
    b1 = torch.full((h,), -e, dtype=DT)
    if FAMILIES[variant] == "positional":
        W1[0, 0] = W1[1, 1] = W2[0, 0] = W2[1, 1] = e
        b1[:2] = e * e
        att = dict(a=t(2 * e, 0), b=t(0, -e), r=t(e, 0), s=t(0, e), c_K=t(0, 0))
        att |= dict(C_V=e * torch.eye(2, dtype=DT), b_V=t(0, 0))
        return dict(att, W1=W1, b1=b1, W2=W2, b2=t(0, 0))
    if variant == "gen" and task == "majority":
        W1[0, 0] = b1[0] = W2[1, 0] = e
        W_K, W_V = t(e, e, 0, 0).view(2, 2), t(0, e, 0, 0).view(2, 2)
        att = dict(W_Q=torch.zeros(2, 2, dtype=DT), b_Q=t(e, 0), W_K=W_K, b_K=t(0, 0), W_V=W_V)
        return dict(att, b_V=t(0, 0), W1=W1, b1=b1, W2=W2, b2=t(0, -(e * e + e**3 / 2)))
    raise ValueError(
        f"the paper gives no center for task {task!r} under A_{variant} "
        "(implemented: A_pos/A_norm First and Index, A_gen Majority)"
    )


# --------------------------------------------------------------------------- score-gap coefficients
def score_coefficients(params: dict) -> dict[str, float]:
    """χ = aᵀs, ℓ = 2bᵀs + aᵀr, δ = bᵀs, φ = bᵀr (eq. 9) and, for A_norm, χ̂ = âᵀs, ℓ̂ = ℓ + 2χ̂
    (eq. 20), as tensors, of one point or a batch."""
    a, b, r, s = (params[k] for k in ("a", "b", "r", "s"))
    dot = lambda u, v: (u * v).sum(-1)  # noqa: E731
    out = dict(chi=dot(a, s), ell=2 * dot(b, s) + dot(a, r), delta=dot(b, s), phi=dot(b, r))
    out["chi_hat"] = dot(a / a.norm(dim=-1, keepdim=True).clamp_min(1e-300), s)
    return out | {"ell_hat": out["ell"] + 2 * out["chi_hat"]}


def score_gap(params: dict, k: int, delta: int, variant: str = "pos") -> float:
    """g_{k+Δ} − g_k from the expansion Δ·C_lin(k) + Δ²·C_quad(k) (eq. 10, or eq. 22 for A_norm)."""
    c = score_coefficients(params)
    if variant == "pos":
        C_lin = 2 * c["chi"] * k * k + c["ell"] * k + c["phi"]
        C_quad = c["chi"] * k + c["delta"]
    else:
        a, s = params["a"], params["s"]
        eps = ((F_norm(a * k) - a / a.norm()) * s).sum()
        C_lin = c["ell_hat"] * k + c["phi"] + 2 * k * eps
        C_quad = c["chi_hat"] + c["delta"] + eps
    return float(delta * C_lin + delta * delta * C_quad)


def attention_profile(params: dict, variant: str, n: int, k: int, beta: str = "log") -> tuple:
    """Scores g_j and weights α_j = softmax(β_n g)_j, j = 1 … n, of query k (A_pos / A_norm)."""
    if not 1 <= int(k) <= n:
        raise ValueError(f"query k must lie in [1, {n}], got {k}")
    P = single_point(params)
    g = positional_scores(P, torch.tensor([[float(k)]], dtype=DT), n, variant == "norm")[0, 0]
    return g.numpy(), torch.softmax(g * _beta_n(n, beta), 0).numpy()


# --------------------------------------------------------------------------- exactness
@dataclass
class Exactness:
    """:func:`exactness` of P points: ``decision`` [P] True / False / None (undecided)."""

    decision: np.ndarray

    def all(self) -> bool:
        return bool(all(d is True for d in self.decision))


def _exhaustive(P: dict, variant: str, task: str, n: int, beta: str = "log") -> np.ndarray:
    if n > 16:
        raise ValueError(f"exhaustive check: 2**n strings, n = {n} is too large (max 16)")
    S, ks = all_strings(n), None
    if task == "index":
        ks = torch.arange(1, n + 1).repeat_interleave(S.shape[0])
        S = S.repeat(n, 1)
    x, y = encode(S, ks), label(task, S, ks)
    margins = []
    for lo in range(0, x.shape[0], 8192):
        out = forward(variant, P, x[lo : lo + 8192], beta=beta)
        sgn = (2 * y[lo : lo + 8192] - 1).to(DT)
        margins.append(((out[..., 1] - out[..., 0]) * sgn).min(-1).values)
    return torch.stack(margins, -1).min(-1).values.numpy()


def diagonal_attention(P: dict, variant: str, n: int, ks, chunk=2_000_000, beta="log"):
    """α_k(k), the attention the query for k puts on position k: [P, len(ks)] (A_pos / A_norm)."""
    Pn, ks_t, out = P["b2"].shape[0], torch.as_tensor(list(ks), dtype=DT), []
    step, beta_n = max(1, chunk // max(1, Pn * n)), _beta_n(n, beta)
    normalized = P.get("_norm", variant == "norm")
    for lo in range(0, len(ks_t), step):
        kk = ks_t[lo : lo + step]
        g = positional_scores(P, kk.expand(Pn, -1), n, normalized) * beta_n  # [P, K, n]
        gk = torch.gather(g, -1, (kk.long() - 1).expand(Pn, -1).unsqueeze(-1)).squeeze(-1)
        out.append(torch.exp(gk - torch.logsumexp(g, -1)))
    return torch.cat(out, -1)


def _head_at(P, p):
    """f = y₁ − y₀ at the attention mass p [P, ...] on the ones: head(u₀ + p(u₁ − u₀))."""
    return _head_diff(P, value_mix(P["C_V"], P["b_V"], p))


def _interval_extremes(P: dict, lo: torch.Tensor, hi: torch.Tensor):
    """min and max of the piecewise-linear f(p) of :func:`_head_at` on [lo, hi] (lo, hi: [P, K])."""
    kinks = _kinks(P, P["C_V"]).nan_to_num(0.0, posinf=math.inf, neginf=-math.inf)  # [P, h]
    inside = torch.minimum(torch.maximum(kinks[:, None, :], lo[..., None]), hi[..., None])
    f = _head_at(P, torch.cat([lo[..., None], hi[..., None], inside], -1))  # [P, K, h+2]
    return f.min(-1).values, f.max(-1).values


def _structural_positional(P, variant, task, n, beta="log"):
    ks = [1] if task == "first" else list(range(1, n + 1))
    ak = diagonal_attention(P, variant, n, ks, beta=beta)  # [P, K]
    one, zero = torch.ones_like(ak), torch.zeros_like(ak)
    min1, _ = _interval_extremes(P, ak, one)
    _, max0 = _interval_extremes(P, zero, 1 - ak)
    cert_margin = torch.minimum(min1, -max0).min(-1).values  # > 0 ⇒ certified exact
    # witnesses: e_k (p = α_k), all ones (p = 1), all zeros (p = 0), all ones but k (p = 1 − α_k)
    wit = [_head_at(P, ak), _head_at(P, one), -_head_at(P, zero), -_head_at(P, 1 - ak)]
    wit_margin = torch.stack(wit, -1).min(-1).values.min(-1).values  # ≤ 0 ⇒ certified not exact
    dec = np.full(ak.shape[0], None, dtype=object)
    dec[(wit_margin <= 0).numpy()] = False
    dec[(cert_margin > 0).numpy()] = True
    return dec


def sin_affine_logit(P: dict, n: int, beta: str = "log"):
    """A_sin's logit difference times the softmax denominator, L(w) = L₀ + Σ_j w_j ℓ̂_j, where no
    hidden unit changes sign over {0, 1}ⁿ (App. C.2, eqs. 134–140; details page, "Majority under
    A_sin"): (L₀ [P], ℓ̂ [P, n], certified [P]), P_j rescaled by its maximum."""
    q, WK, WV, bV = P["b_Q"], P["W_K"], P["W_V"], P["b_V"]
    bn = _beta_n(n, beta)
    j = torch.arange(1, n + 1, dtype=DT)
    pj = torch.stack([torch.sin(j), torch.cos(j)], -1)  # [n, 2]
    lam = bn * (q * (WK[:, :, 1] - WK[:, :, 0])).sum(-1)  # λ (eq. 132)
    logP = bn * torch.einsum("pd,pdc,jc->pj", q, WK[:, :, 2:], pj)  # aᵀp_j
    Pj = torch.exp(logP - logP.max(-1, keepdim=True).values)
    pos = torch.einsum("pdc,jc->pjd", WV[:, :, 2:], pj)  # C_V p_j
    u0, u1 = ((WV[:, :, c] + bV)[:, None, :] + pos for c in (0, 1))  # a 0's, a 1's value at j
    z = lambda u: torch.einsum("pjd,phd->phj", u, P["W1"]) + P["b1"][:, :, None]  # noqa: E731
    c0 = Pj[:, None, :] * z(u0)  # [P, h, n]: D-scaled pre-activation of a 0 at j
    al = Pj[:, None, :] * torch.exp(lam)[:, None, None] * z(u1) - c0
    base = c0.sum(-1)
    lo, hi = base + al.clamp(max=0).sum(-1), base + al.clamp(min=0).sum(-1)
    on, certified = lo >= 0, ((lo >= 0) | (hi <= 0)).all(-1)
    d = (P["W2"][:, 1] - P["W2"][:, 0]) * on  # the active units' output weights
    c = P["b2"][:, 1] - P["b2"][:, 0]
    L0 = (d * base).sum(-1) + c * Pj.sum(-1)
    ell = torch.einsum("ph,phj->pj", d, al) + (c * (torch.exp(lam) - 1))[:, None] * Pj
    return L0, ell, certified


def sin_majority_structural(P: dict, n: int, beta: str = "log"):
    """Exactness of A_sin on Majority where :func:`sin_affine_logit` certifies the activation
    pattern: min L over ≥ m+1 ones > 0 and max L over ≤ m ones < 0; other points undecided."""
    L0, ell, cert = sin_affine_logit(P, n, beta)
    m = n // 2
    s = ell.sort(-1).values
    lo1 = L0 + s[:, : m + 1].sum(-1) + s[:, m + 1 :].clamp(max=0).sum(-1)
    hi0 = L0 + s.flip(-1)[:, :m].clamp(min=0).sum(-1)
    marg = (torch.minimum(lo1, -hi0) / ell.abs().sum(-1).clamp_min(1e-300)).numpy()
    dec = np.array((marg > 0).tolist(), dtype=object)
    dec[~cert.numpy()] = None
    return dec, marg


def exactness(params: dict, variant: str, task: str, n: int, *, method="auto", beta="log"):
    """Is each point (one or a batch) strictly correct (Definition 1) on every length-n input (every
    k for Index)? ``"exhaustive"`` enumerates the 2ⁿ strings (n ≤ 16); ``"structural"``: A_gen's
    n+1 count levels decide exactly; A_pos / A_norm are certified True by interval arithmetic over
    the attention mass p on the ones, False by a witness (e_k, 1, 0 or 1 − e_k), else None (then
    ``"auto"`` enumerates if n ≤ 16); A_sin only on Majority (:func:`sin_majority_structural`)."""
    _check_model_task(variant, task)
    n = _check_n(n, task)
    check_choice("method", method, ("auto", "exhaustive", "structural"))
    check_beta(beta)
    P = _batch(params)
    Pn = P["b2"].shape[0]
    enumerate_all = method == "exhaustive" or (variant == "sin" and task != "majority")
    if enumerate_all:  # every point undecided, then enumerated below
        if variant == "sin" and method == "structural":
            raise ValueError(
                "A_sin has a structural exactness check for Majority only; use "
                "method='exhaustive' (n ≤ 16)"
            )
        dec = np.full(Pn, None, dtype=object)
    elif variant == "gen":
        dec = structural_gen(P, task, n, beta)[0]
    elif variant == "sin":
        dec = sin_majority_structural(P, n, beta)[0]
    else:
        dec = _structural_positional(P, variant, task, n, beta)
    und = [i for i in range(Pn) if dec[i] is None]
    if und and (enumerate_all or (method == "auto" and n <= 16)):
        m = _exhaustive({k: v[und] for k, v in P.items()}, variant, task, n, beta)
        for i, margin in zip(und, m):
            dec[i] = bool(margin > 0)
    return Exactness(dec)


# --------------------------------------------------------------------------- the η = 1/16 centers
def center_attention_floor(task: str, eta: float, log_n: float, terms: int = 4000) -> float:
    """min_k α_k(k) at the center for very large n (``log_n``; valid when n > 2·terms): with
    x = n^{−η²}, First has α₁ = 1/Σ_{d≥0} x^{d²}, Index (k in the middle) 1/Σ_{d∈Z} x^{d²}."""
    d = np.arange(1, terms + 1, dtype=float)
    logs = -eta * eta * log_n * d * d
    m = logs.max()
    tail = math.exp(m) * np.exp(logs - m).sum() if m > -700 else 0.0
    return 1.0 / (1.0 + (1 if task == "first" else 2) * tail)


def center_exact_threshold(task: str, eta: float) -> float:
    """log n* above which the center with scale η is exact (every α_k > 1/2), by bisection."""
    check_choice("task", task, ("first", "index"))
    lo, hi = 0.0, 1.0
    while center_attention_floor(task, eta, hi) <= 0.5:
        hi *= 2
    for _ in range(200):
        mid = (lo + hi) / 2
        lo, hi = (lo, mid) if center_attention_floor(task, eta, mid) > 0.5 else (mid, hi)
    return hi


def center_exact_eta(task: str) -> float:
    """The scale η* above which the First / Index center is exact at every n if β_n = 1 (ch. 5)."""
    # the floor depends on η² log n only: the β_n = 1 limit at scale η is the log n = η² floor
    # at scale 1, so η* = √(log n* at η = 1)
    return math.sqrt(center_exact_threshold(task, 1.0))


# --------------------------------------------------------------------------- admissible widths
def direction(variant: str, coordinate: str, params: dict) -> dict[str, torch.Tensor]:
    """A direction moving one coordinate at unit rate, eq. 9's others fixed at the center (b₁ = 0):
    ``chi`` χ (A_norm: χ̂) via s₁, ``ell`` ℓ via r₁, ``chi_fixed_ell_hat`` χ̂, ℓ̂ fixed."""
    check_choice("coordinate", coordinate, ("chi", "ell", "chi_fixed_ell_hat"))
    if coordinate == "chi_fixed_ell_hat" and variant != "norm":
        raise ValueError("coordinate 'chi_fixed_ell_hat' is only defined for A_norm")
    a, a1 = params["a"], float(params["a"][0])
    d = {k: torch.zeros_like(v) for k, v in params.items()}
    if coordinate == "ell":
        d["r"][0] = 1.0 / a1
        return d
    d["s"][0] = 1.0 / (a1 if variant == "pos" else a1 / float(a.norm()))  # moves χ (A_pos) or χ̂
    if coordinate == "chi_fixed_ell_hat":
        d["r"][0] = -2.0 / a1  # keeps ℓ̂ = 2bᵀs + aᵀr + 2âᵀs fixed (b₁ = 0 at the center)
    return d


def _ray_exact(params, d, ts, variant, task, n, beta="log"):
    along = lambda v, dv: v.unsqueeze(0) + ts.view(-1, *([1] * v.dim())) * dv.unsqueeze(0)
    P = {k: along(v, d[k]) for k, v in params.items()}
    res = exactness(P, variant, task, n, method="structural", beta=beta)
    return np.array([x is True for x in res.decision]), np.array([x is None for x in res.decision])


def admissible_width(params, d, variant, task, n, *, t_max=10.0, grid=32, rounds=3, beta="log"):
    """Width of the certified-exact interval {t : params + t·d exact at length n} around t = 0: per
    side ``grid`` geometric points in (0, t_max], then ``rounds`` bracket refinements (undecided
    counts as not exact). A side exact at ``t_max`` is capped; ``finite_width`` sums the others."""
    ok0, _ = _ray_exact(params, d, torch.zeros(1, dtype=DT), variant, task, n, beta)
    if not ok0[0]:
        raise ValueError(f"the starting point is not (certified) exact at n = {n}")
    sides, capped, undecided = [], [], 0
    for sign in (1.0, -1.0):
        lo, hi = 0.0, None
        ts = torch.logspace(math.log10(t_max) - 12, math.log10(t_max), grid, dtype=DT)
        for rnd in range(rounds + 1):
            ok, und = _ray_exact(params, d, sign * ts, variant, task, n, beta)
            undecided += int(und.sum())
            bad = np.flatnonzero(~ok)
            first_bad = bad[0] if len(bad) else len(ok)
            lo = float(ts[first_bad - 1]) if first_bad > 0 else lo
            if len(bad) == 0 and rnd == 0:  # still exact at t_max: the side is capped
                break
            hi = float(ts[first_bad]) if len(bad) else hi
            ts = torch.linspace(lo, hi, grid + 2, dtype=DT)[1:-1]
        sides.append(lo if hi is None else (lo + hi) / 2 if lo > 0 else hi / 2)
        capped.append(hi is None)
    finite = [sd for sd, cap in zip(sides, capped) if not cap]
    fin = sum(finite) if finite else float("nan")
    out = dict(plus=sides[0], minus=sides[1], width=sides[0] + sides[1], plus_capped=capped[0])
    return out | dict(minus_capped=capped[1], finite_width=fin, undecided=undecided)


# --------------------------------------------------------------------------- Monte Carlo fractions
def mc_fraction(
    variant, task, n, *, coords, half_width, samples, seed=0, eta=1.0, h=8, chunk=4096, beta="log"
) -> dict:
    """Monte Carlo fraction of certified-exact points in a box around the center (η = ``eta``),
    the tensors ``coords`` drawn within ± ``half_width``: counts and the 95 % Wilson interval."""
    samples = check_positive_int("samples", samples)
    hw = check_finite("half_width", half_width, nonnegative=True)
    c = center(variant, task, h, eta=eta)
    g = torch.Generator().manual_seed(check_positive_int("seed", seed, minimum=0))
    n_true = n_none = 0
    for lo in range(0, samples, chunk):
        m = min(chunk, samples - lo)
        P = {k: v.unsqueeze(0).expand(m, *v.shape).clone() for k, v in c.items()}
        for k in coords:
            P[k] = P[k] + (torch.rand(P[k].shape, generator=g, dtype=DT) * 2 - 1) * hw
        dec = exactness(P, variant, task, n, method="structural", beta=beta).decision
        n_true += int((dec == True).sum())  # noqa: E712
        n_none += int(np.equal(dec, None).sum())
    p, z = n_true / samples, 1.96
    den = 1 + z * z / samples
    mid = (p + z * z / (2 * samples)) / den
    half = z * math.sqrt(p * (1 - p) / samples + z * z / (4 * samples * samples)) / den
    lo, hi = max(0.0, mid - half), min(1.0, mid + half)
    return dict(n=n, samples=samples, exact=n_true, undecided=n_none, fraction=p, lo=lo, hi=hi)


# --------------------------------------------------------------------------- the bias fiber
def bias_fiber(P: dict, variant: str, bits, ks, y, B: float = 1.0) -> torch.Tensor:
    """The fraction of [−B, B] of b₂,₁ that makes each point strictly correct on the inputs
    (``bits`` [K, n], Index queries ``ks`` or None, labels ``y`` [K]); shape [P]."""
    out = forward(variant, P, encode(bits, ks) if ks is not None else encode(bits, fixed=0))
    return fiber_of(P, out[..., 1] - out[..., 0], torch.as_tensor(y), B)


def fiber_of(P: dict, f: torch.Tensor, y: torch.Tensor, B: float):
    """:func:`bias_fiber` from the logit differences ``f`` [P, K] and labels [K]."""
    b20, Hw = P["b2"][:, 0], f - (P["b2"][:, 1] - P["b2"][:, 0])[:, None]  # Hw: without b₂
    inf = torch.tensor(float("inf"), dtype=DT)
    lo = b20 - torch.where(y.bool(), Hw, inf).min(-1).values  # b₂,₁ above this …
    hi = b20 - torch.where(y.bool(), -inf, Hw).max(-1).values  # … and below this
    return (hi.clamp(max=B) - lo.clamp(min=-B)).clamp(min=0) / (2 * B)


def box_estimate(phi: torch.Tensor, seed: int) -> dict:
    """Mean of the fibers and a 95 % Clopper–Pearson interval for it: b₂,₁ drawn uniformly on top
    of each point makes "exact on the inputs" a Bernoulli trial of success probability E φ."""
    g = torch.Generator().manual_seed(seed)
    k = int((torch.rand(phi.shape, generator=g, dtype=DT) < phi).sum())
    lo, hi = stats.clopper_pearson(k, phi.numel())
    return {"mean": float(phi.mean()), "hits": k, "lo": lo, "hi": hi}


# --------------------------------------------------------------------------- Table 1's zeros
#: lengths at which p_n = (sin n, cos n) nearly returns to p₁ (n − 1 ≈ 6, 44, 710 ≈ 2π·1, 7, 113)
RETURNS = (7, 45, 711)


def positional_zero(M: int = 2000, seed: int = 80) -> dict:
    """First and Index under A_gen and A_sin: the largest logit gap between the pairs of inputs
    that carry different labels but look the same to the model (at n = 2, 3, 8, 64, 511), and the
    whole-box mean fiber of First under A_sin on the pair (e₁, e_j*), p_j* nearest p₁."""
    gap, tried = 0.0, 0
    for i, n in enumerate((2, 3, 8, 64, 511)):
        e1, en = (torch.eye(n, dtype=torch.long)[[0]], torch.eye(n, dtype=torch.long)[[-1]])
        for variant, task in (("gen", "first"), ("gen", "index"), ("sin", "index")):
            P = uniform_box(variant, H, 1.0, M, seed + i)
            if task == "first":  # same count of ones, labels 1 and 0
                x = torch.cat([encode(e1, fixed=0), encode(en, fixed=0)])
            else:  # the same string queried at k = 1 (label 1) and k = 2 (label 0)
                x = torch.cat([encode(e1, 1), encode(e1, 2)])
            out = forward(variant, P, x)
            f = out[..., 1] - out[..., 0]
            gap, tried = max(gap, float((f[:, 0] - f[:, 1]).abs().max())), tried + M
    j, sin_first = np.arange(2, max(RETURNS) + 1), {}
    for n in RETURNS:
        js = int(j[: n - 1][np.argmin(np.abs(2 * np.sin((j[: n - 1] - 1) / 2)))])
        pair = torch.zeros(2, n, dtype=torch.long)
        pair[0, 0], pair[1, js - 1] = 1, 1
        phi = bias_fiber(uniform_box("sin", H, 1.0, M, seed + 10), "sin", pair, None, [1, 0])
        sin_first[str(n)] = {"j*": js, **box_estimate(phi, seed + n)}
    return {"pair_gap": gap, "points": tried, "sin_first": sin_first}


def parity_zero(n: int = 10, M: int = 2000, seed: int = 90) -> dict:
    """Parity at n = h + 2 (A_pos, A_norm, A_sin): whole-box points with a nonempty exact fiber over
    all 2ⁿ strings, and (A_pos, A_norm) the most sign changes of f along 0ⁿ, 10ⁿ⁻¹, 110ⁿ⁻², …"""
    S = all_strings(n)
    y = label("parity", S, None)
    chain, rows = torch.tensor([[1] * t + [0] * (n - t) for t in range(n + 1)]), {}
    for i, variant in enumerate(("pos", "norm", "sin")):
        P = uniform_box(variant, H, 1.0, M, seed + i)
        chunks = [{k: v[a : a + 500] for k, v in P.items()} for a in range(0, M, 500)]
        phi = torch.cat([bias_fiber(c, variant, S, None, y) for c in chunks])
        row = {"points": M, "exact": int((phi > 0).sum())}
        if variant != "sin":
            out = forward(variant, P, encode(chain, fixed=0))
            s = torch.sign(out[..., 1] - out[..., 0])
            row["max_sign_changes"] = int(((s[:, 1:] * s[:, :-1]) < 0).sum(-1).max())
        rows[variant] = row
    return rows


# --------------------------------------------------------------------------- Majority under A_sin
#: the center's positional value row (ξ/δ = this at η = 1) and λ_n = LAMBDA0/√n (eq. 148's
#: |λ| ≤ c₁n^-1/2)
XI_OVER_DELTA, LAMBDA0 = (0.2, -0.1), 1.0


def sin_center(n: int, q1: float = 1.0, compensate: bool = True) -> dict:
    """An A_sin(8) Majority point exact at length n (App. C.3, η = 1): v₀ = 0, v₁ = e₁, C_V's first
    row ξ/δ, one always-active unit, q = (q₁, 0), λ = λ₀/√n, the positional key at Lemma 10's
    a* = −(sinh λ/δ) ξ (eq. 138; a = 0 if not ``compensate``) and b₂,₁ at eq. 137's c*."""
    n, bn = _check_n(n, "majority"), math.log(n)
    lam = LAMBDA0 / math.sqrt(n)
    xi = torch.tensor(XI_OVER_DELTA, dtype=DT)  # ξ = ξ/δ as δ = η³ = 1
    a = -math.sinh(lam) * xi if compensate else torch.zeros(2, dtype=DT)
    WK, WV = torch.zeros(2, 4, dtype=DT), torch.zeros(2, 4, dtype=DT)
    WK[0, 1], WK[0, 2], WK[0, 3] = lam / (bn * q1), a[0] / (bn * q1), a[1] / (bn * q1)
    WV[0, 1], WV[0, 2], WV[0, 3] = 1.0, xi[0], xi[1]
    W1, W2 = torch.zeros(H, 2, dtype=DT), torch.zeros(2, H, dtype=DT)
    b1 = -torch.ones(H, dtype=DT)  # every unit but the first is off
    W1[0, 0], b1[0], W2[1, 0] = 1.0, 1.0, 1.0
    j = torch.arange(1, n + 1, dtype=DT)
    pj = torch.stack([torch.sin(j), torch.cos(j)], -1)
    w = torch.softmax(pj @ a, 0)
    G = math.exp(lam)
    # eq. 137 with ℓ_σ = e₁, v₀ = 0, v₁ = e₁ and μ = Σ_j P_j p_j / T
    c_star = -G / (1 + G) - float(xi @ (w @ pj))
    z2, b2 = torch.zeros(2, dtype=DT), torch.tensor([0.0, c_star - 1.0], dtype=DT)
    att = dict(W_Q=torch.zeros(2, 4, dtype=DT), b_Q=torch.tensor([q1, 0.0], dtype=DT), W_K=WK)
    return dict(att, b_K=z2, W_V=WV, b_V=z2.clone(), W1=W1, b1=b1, W2=W2, b2=b2)


def sin_windows(n: int, q1: float = 1.0) -> dict:
    """Exact windows (chapter's admissible widths) of the two positional key entries that move
    a = β_n q₁ (k_sin, k_cos) and of b₂,₁ around :func:`sin_center` at length n."""
    c, out = sin_center(n, q1), {}
    entries = {"k_sin": ("W_K", (0, 2)), "k_cos": ("W_K", (0, 3)), "b21": ("b2", (1,))}
    for name, (key, idx) in entries.items():
        d = {k: torch.zeros_like(v) for k, v in c.items()}
        d[key][idx] = 1.0
        out[name] = admissible_width(c, d, "sin", "majority", n, t_max=1.0)["width"]
    return out


SIN_NS = (11, 21, 41, 81, 161, 321, 641, 1281)


def majority_sin(ns=SIN_NS) -> dict:
    """The windows at each n, the log-log slope of their product times log² n (theory −3: eq. 145
    at fixed q), the k_sin window's 1/q₁ scaling (n = 161) and Lemma 10's check (a* needed)."""
    W = [sin_windows(n) for n in ns]
    prod = [w["k_sin"] * w["k_cos"] * w["b21"] * math.log(n) ** 2 for w, n in zip(W, ns)]
    qs = (0.125, 0.25, 0.5, 1.0)
    wq = [sin_windows(161, q)["k_sin"] for q in qs]
    exact = lambda p, n: exactness(p, "sin", "majority", n, method="structural").decision[0]
    return {
        "n": list(ns),
        "windows": W,
        "slope": stats.loglog_slope(ns, prod)[0],
        "q_slope": stats.loglog_slope(qs, wq)[0],
        "compensated_exact": [exact(sin_center(n), n) is True for n in ns],
        "uncompensated_exact": [exact(sin_center(n, compensate=False), n) is True for n in ns],
    }


# --------------------------------------------------------------------------- the whole box
WHOLE_NS = (101, 1001, 3001)


def eq87_bound(n: int, h: int = H) -> float:
    """The explicit whole-box upper bound of eq. 87: NESV ≤ 16 h artanh(1/n) / log n."""
    return 16 * h * math.atanh(1 / n) / math.log(n)


def _majority_fiber(P: dict, n: int) -> torch.Tensor:
    """The exact b₂,₁ fiber of A_gen on Majority over the n + 1 count levels; the levels
    0, m, m+1, n first, as their fiber contains the full one (most points are then done)."""
    y = (torch.arange(n + 1) >= (n + 1) // 2).long()
    t = torch.tensor([0, n // 2, n // 2 + 1, n])
    phi = fiber_of(P, count_level_outputs(P, n, levels=t.to(DT)), y[t], 1.0)
    keep = phi > 0
    if keep.any():
        Q = {k: v[keep] for k, v in P.items()}
        phi[keep] = fiber_of(Q, count_level_outputs(Q, n), y, 1.0)
    return phi


def whole_box_majority(M: int = 20000, seed: int = 70, ns=WHOLE_NS) -> dict:
    """Majority under A_gen(8) over the whole box B = 1: the exact fiber of b₂,₁ over the n + 1
    count levels (all strings) averaged over M points, its 95 % interval and eq. 87's bound."""
    P = uniform_box("gen", H, 1.0, M, seed)
    return {
        str(n): {**box_estimate(_majority_fiber(P, n), seed + n), "bound": eq87_bound(n)}
        for n in ns
    }
