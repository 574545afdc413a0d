"""A_gen's count levels (eq. 71) and what chapter 2 builds on them: A_gen's exactness
(:func:`structural_gen`), the Majority area (Lemma 4), the score contrast of Lemmas 6–7 and
Parity (App. A.4). :mod:`.volume` re-exports these names.
"""

from __future__ import annotations

import math

import numpy as np
import torch

from lengthgen.chapters.ch2.single_layer import check_beta, param_shapes
from lengthgen.config import check_finite, check_positive_int

DT = torch.float64


def _check_n(n, task=None) -> int:
    n = check_positive_int("length n", n)
    if task == "majority" and n % 2 == 0:
        raise ValueError(f"majority is defined for odd n only, got n = {n}")
    return n


def _positive(name: str, x) -> float:
    """``x`` as a float, or a ValueError unless it is finite and > 0."""
    if not check_finite(name, x) > 0:
        raise ValueError(f"{name} must be > 0, got {x}")
    return float(x)


def _beta_n(n: int, beta: str) -> float:
    """β_n as a float: ``math.log(n)`` (``log``) or ``1.0`` (``one``)."""
    return math.log(n) if check_beta(beta) == "log" else 1.0


def _batch(params: dict) -> tuple[dict, bool]:
    """Add a point dimension if ``params`` is a single point; returns (batched, was_single)."""
    single = params["b2"].dim() == 1
    return (
        {k: (v.unsqueeze(0) if isinstance(v, torch.Tensor) else v) for k, v in params.items()}
        if single
        else dict(params)
    ), single


def _head_diff(P: dict, A: torch.Tensor) -> torch.Tensor:
    """f = y₁ − y₀ for attention outputs A [P, ..., 2]."""
    shape = A.shape
    A2 = A.reshape(shape[0], -1, 2)
    hid = torch.relu(torch.einsum("pbi,phi->pbh", A2, P["W1"]) + P["b1"][:, None, :])
    y = torch.einsum("pbh,pch->pbc", hid, P["W2"]) + P["b2"][:, None, :]
    return (y[..., 1] - y[..., 0]).reshape(shape[:-1])


# --------------------------------------------------------------------------- count levels (eq. 71)
def count_level_logits(P: dict, n: int, beta: str = "log") -> torch.Tensor:
    """The log-odds d_t = log t − log(n − t) + β_n X of the attention share ρ_t = σ(d_t) on the
    ones, at the count levels t = 0 … n of A_gen (eq. 71), shape [P, n+1]; β_n = log n
    (``beta="log"``, the paper's) or 1 (``"one"``, chapter 5)."""
    t = torch.arange(0, n + 1, dtype=DT)
    return torch.log(t) - torch.log(n - t) + _beta_n(n, beta) * score_contrast(P)[:, None]


def count_level_attention(P: dict, n: int, beta: str = "log") -> torch.Tensor:
    """The attention output A_t = v₀ + ρ_t (v₁ − v₀) of A_gen at the count levels t = 0 … n
    (eq. 71), shape [P, n+1, 2] (:func:`count_level_logits` for ρ_t and ``beta``)."""
    WV, bV = P["W_V"], P["b_V"]
    rho = torch.sigmoid(count_level_logits(P, n, beta))
    v0, v1 = WV[:, :, 0] + bV, WV[:, :, 1] + bV
    return v0[:, None, :] + rho[..., None] * (v1 - v0)[:, None, :]


def count_level_outputs(P: dict, n: int, beta: str = "log") -> torch.Tensor:
    """f(A_t) = y₁ − y₀ at the n+1 count levels t = 0 … n of A_gen (eq. 71), shape [P, n+1]
    (``beta``: see :func:`count_level_logits`)."""
    return _head_diff(P, count_level_attention(P, n, beta))


def structural_gen(P, task, n, beta="log"):
    f = count_level_outputs(P, n, beta)
    t = torch.arange(0, n + 1)
    Pn = f.shape[0]
    if task in ("first", "index") and n >= 2:
        marg = -f[:, 1:n].abs().min(-1).values  # count 1 … n−1 carries both labels
        dec = np.array([False] * Pn, dtype=object)
        return dec, marg.numpy()
    if task in ("first", "index"):  # n = 1: the label is the single bit
        lab = t
    elif task == "majority":
        lab = (t >= (n + 1) // 2).long()
    else:
        lab = t % 2
    m = (f * (2 * lab - 1).to(DT)).min(-1).values
    dec = np.array((m > 0).tolist(), dtype=object)
    return dec, m.numpy()


# --------------------------------------------------------------------------- the Majority area (Lemma 4, eq. 75)
def majority_area_closed_form(eta: float, n: int, beta: str = "log") -> float:
    """∫ (width of the exact b₂,₁ interval) dX at the A_gen Majority center of scale η:
    η³ · 4 artanh(1/n) / β_n (Lemma 8's slope η³ along the value segment times eq. 75 with
    β = β_n: log n or 1)."""
    eta = _positive("eta", eta)
    n = _check_n(n, "majority")
    return eta**3 * 4 * math.atanh(1 / n) / _beta_n(n, beta)


def majority_bias_area(params: dict, n: int, X_grid: np.ndarray, beta: str = "log") -> dict:
    """∫ (width of the exact b₂,₁ interval) dX over the score contrast X (A_gen Majority,
    Lemma 5): at each grid X (set through W_K) the interval is read off the two central count
    levels. Returns the widths and the trapezoid area (:func:`majority_area_closed_form`)."""
    n = _check_n(n, "majority")
    P, _ = _batch(params)
    WK = P["W_K"][0]
    m = (n - 1) // 2
    widths = []
    for X in np.asarray(X_grid, dtype=float):
        Q = {k: v.clone() for k, v in P.items()}
        Q["W_K"] = WK.clone()[None]
        Q["W_K"][0, 0, 1] = WK[0, 0] + X / float(P["b_Q"][0, 0])
        f = count_level_outputs({**Q, "b2": torch.zeros_like(P["b2"])}, n, beta)[0]
        widths.append(max(0.0, float(f[m + 1] - f[m])))
    widths = np.array(widths)
    return {"widths": widths, "area": float(np.trapezoid(widths, X_grid))}


# --------------------------------------------------------------------------- the score contrast (Lemmas 6–7)
def uniform_box(
    variant: str, h: int, B: float, samples: int, seed: int = 0
) -> dict[str, torch.Tensor]:
    """``samples`` points drawn uniformly from the raw box [−B, B]^D of ``variant``'s trainable
    scalars (Definition 1): every tensor of :func:`single_layer.param_shapes` with a leading sample
    dimension, float64, from ``torch.Generator().manual_seed(seed)`` in the order of the shapes."""
    B = _positive("the box half-width B", B)
    samples = check_positive_int("samples", samples)
    g = torch.Generator().manual_seed(check_positive_int("seed", seed, minimum=0))
    return {
        k: (torch.rand(samples, *s, generator=g, dtype=DT) * 2 - 1) * B
        for k, s in param_shapes(variant, h).items()
    }


def score_contrast(params: dict) -> torch.Tensor:
    """The score contrast X = qᵀW_K(e₁ − e₀) of A_gen points (eq. 70; q = b_Q as z = 0), one
    per point: a one's score minus a zero's, before the β_n factor."""
    P, _ = _batch(params)
    dK = P["W_K"][:, :, 1] - P["W_K"][:, :, 0]
    return (P["b_Q"] * dK).sum(-1)


def sample_score_contrast(
    B: float, samples: int, seed: int = 0, h: int = 8, chunk: int = 100_000
) -> np.ndarray:
    """X = qᵀW_K(e₁ − e₀) of ``samples`` A_gen(h) points drawn uniformly from the box [−B, B]^D,
    in chunks of ``chunk`` points (:func:`uniform_box` with seeds ``seed``, ``seed + 1``, …)."""
    samples = check_positive_int("samples", samples)
    out = []
    for i, lo in enumerate(range(0, samples, chunk)):
        m = min(chunk, samples - lo)
        out.append(score_contrast(uniform_box("gen", h, B, m, seed=seed + i)).numpy())
    return np.concatenate(out)


def score_contrast_peak_density(B: float = 1.0) -> float:
    """The peak density of X = qᵀW_K(e₁ − e₀) under the uniform box [−B, B]^D (Lemma 6 bounds it
    by B⁻²), by quadrature (chapter 2 details, "Lemmas 6–7"): the density peaks at X = 0, where
    with t = max|q_i| (density 2t at B = 1) and u = min|q_i|/t (uniform), f_X(0) = 2∫₀¹ g(u) du,
    g(u) being the density at 0 of Δ₁ + uΔ₂ (Δ_i triangular on [−2, 2]); X/B² is B-free."""
    from scipy import integrate

    B = _positive("the box half-width B", B)

    def f_tri(v):  # density of the difference of two uniforms on [−1, 1]
        return max(0.0, 2.0 - abs(v)) / 4.0

    def g(u):
        if u == 0.0:
            return f_tri(0.0)
        return integrate.quad(
            lambda v: f_tri(v) * f_tri(v / u) / u,
            -2 * u,
            2 * u,
            points=[0.0],
            epsabs=1e-13,
            epsrel=1e-12,
        )[0]

    val = 2 * integrate.quad(g, 0.0, 1.0, epsabs=1e-12, epsrel=1e-11, limit=200)[0]
    return val / B**2


# --------------------------------------------------------------------------- Parity (App. A.4)
def parity_sign_changes(params: dict, n: int, beta: str = "log") -> dict:
    """Sign changes of f along the count levels ρ₀ < … < ρ_n and kinks of f on the value segment.

    The proof of eq. 7 (App. A.4): exact Parity needs n sign changes of f(ρ_t), and a piecewise
    linear f with κ kinks in (0, 1) has at most κ + 1, with κ ≤ h. Returns both counts per point.
    """
    n = _check_n(n)
    P, _ = _batch(params)
    f = count_level_outputs(P, n, beta)
    s = torch.sign(f)
    changes = ((s[:, 1:] * s[:, :-1]) < 0).sum(-1) + 0
    WV, bV = P["W_V"], P["b_V"]
    v0, v1 = WV[:, :, 0] + bV, WV[:, :, 1] + bV
    z0 = torch.einsum("phi,pi->ph", P["W1"], v0) + P["b1"]
    d = torch.einsum("phi,pi->ph", P["W1"], v1 - v0)
    with torch.no_grad():
        kink = -z0 / torch.where(d != 0, d, torch.full_like(d, float("nan")))
    kinks = ((kink > 0) & (kink < 1)).sum(-1)
    alt = torch.tensor([(-1) ** (t + 1) for t in range(n + 1)], dtype=DT)
    exact = (f * alt > 0).all(-1)
    return dict(sign_changes=changes.numpy(), kinks=kinks.numpy(), exact=exact.numpy(), needed=n)


def parity_solution(n: int) -> dict[str, torch.Tensor]:
    """An exact A_gen(h = n−1) Parity solution at length n ≥ 4 (unbatched point; chapter 2,
    "Parity"): X = 0, v₀ = 0, v₁ = e₁, hidden kinks at the count levels t/n (unit 3 opens to
    the left), output weights from a linear program maximising the smallest margin."""
    from scipy.optimize import linprog

    n = check_positive_int("n", n, minimum=4)
    h = n - 1
    kinks = np.arange(1, n) / n
    sigma = np.ones(h)
    sigma[2] = -1.0  # unit 3 opens to the left
    ps = np.arange(0, n + 1) / n
    feats = np.maximum(0.0, sigma[None, :] * (ps[:, None] - kinks[None, :]))  # [n+1, h]
    sgn = np.array([(-1) ** (t + 1) for t in range(n + 1)], dtype=float)
    # variables: beta (h), c, m ; maximise m s.t. sgn_t (feats_t·beta + c) ≥ m, |beta|, |c| ≤ 4n
    A_ub = np.hstack([-(sgn[:, None] * feats), -sgn[:, None], np.ones((n + 1, 1))])
    res = linprog(
        np.r_[np.zeros(h + 1), -1.0],
        A_ub=A_ub,
        b_ub=np.zeros(n + 1),
        bounds=[(-4 * n, 4 * n)] * (h + 1) + [(None, 1.0)],
        method="highs",
    )
    if not res.success or res.x[-1] <= 0:
        raise RuntimeError(f"no parity solution found for n = {n}: {res.message}")
    beta, c = res.x[:h], res.x[h]
    W1 = torch.zeros(h, 2, dtype=DT)
    W1[:, 0] = torch.tensor(sigma)
    b1 = torch.tensor(-sigma * kinks, dtype=DT)
    W2 = torch.zeros(2, h, dtype=DT)
    W2[1] = torch.tensor(beta)
    t = lambda *v: torch.tensor(v, dtype=DT)  # noqa: E731
    att = dict(W_Q=torch.zeros(2, 2, dtype=DT), b_Q=t(1, 0), W_K=torch.zeros(2, 2, dtype=DT))
    att |= dict(b_K=t(0, 0), W_V=t(0, 1, 0, 0).view(2, 2), b_V=t(0, 0))
    return dict(att, W1=W1, b1=b1, W2=W2, b2=t(0.0, c))
