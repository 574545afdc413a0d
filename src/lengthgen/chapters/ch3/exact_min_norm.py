"""Chapter 3's exact min-norm rule (§4: ``W* = Φ⁺ R (Φ⁺)ᵀ``; section "α_L for every encoding and
task") for the sinusoidal and RoPE bases, whose Φ_20 has singular values below float64's
resolution: ``dps``-digit arithmetic (mpmath), no cutoff."""

from __future__ import annotations

import mpmath
import numpy as np

from lengthgen.chapters.ch3.realizability import BASE, L0_DEFAULT, NUM_FREQ, _check_lengths
from lengthgen.chapters.ch3.realizability import check_task, query_rows, scored_rows, targets
from lengthgen.config import check_choice, check_positive_int

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
    Lmax = max(lengths)
    out = {"_recomputed": 0, "_l0_exact": {}}
    with mpmath.workdps(dps):
        th = _exact_frequencies(num_freq, base)
        rule = _sinusoidal_argmaxes if encoding == "sinusoidal" else _rope_argmaxes
        argmaxes = rule(th, L0, Lmax)
        for task in tasks:
            t0 = targets(task, L0).tolist()
            args, recomputed = argmaxes(t0)
            out["_recomputed"] += recomputed
            q0 = query_rows(task, L0).tolist()
            out["_l0_exact"][f"{encoding}/{task}"] = all(args[i] == t0[i] for i in q0)
            row = {}
            for L in lengths:
                tg, rs = targets(task, L), scored_rows(task, L, L0).tolist()
                hits = sum(args[i] == int(tg[i]) for i in rs)
                row[int(L)] = hits / len(rs) if rs else float("nan")
            out[f"{encoding}/{task}"] = row
    return out


def _sinusoidal_argmaxes(th, L0: int, Lmax: int):
    """Sinusoidal W*: ``t0 ↦ ({row: strict argmax, −1 on a tie}, rows recomputed)``."""
    kd = {d: mpmath.fsum(mpmath.cos(d * t) for t in th) for d in range(-(L0 - 1), Lmax)}
    G = mpmath.matrix([[kd[m - n] for n in range(L0)] for m in range(L0)])
    Gi = G**-1
    A = mpmath.matrix([[kd[i - m] for m in range(L0)] for i in range(Lmax)]) * Gi
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
