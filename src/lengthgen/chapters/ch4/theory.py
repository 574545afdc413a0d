"""Chapter 4's learning theory, measured (details page): the VC proposition exactly, our ReLU
interpolant's margins (Thm 6.3), margins across widths (Sec. 6) and samples needed (Cor. 5.8)."""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import numpy as np
import torch

from lengthgen.chapters.ch4 import experiments_cell
from lengthgen.chapters.ch4.constructions import construct_relu
from lengthgen.chapters.ch4.data import check_length, check_modulus, test_set, train_set
from lengthgen.chapters.ch4.model import ModularMLP, check_activation
from lengthgen.chapters.ch4.sweeps import cell_settings, member_rows
from lengthgen.chapters.ch4.training import b1_optimizer, fit_columns, layer_norm_product, margins
from lengthgen.config import ConfigError, check_positive_int, nonempty


# ---------------------------------------------------------------------- the VC proposition (Sec. 4)
def shatter_frequency(labels) -> Fraction:
    """a/π with ``sgn(sin(a·2^i)) = labels[i]`` (±1): binary digit i set where the label is −1,
    plus 2^−N so no point lands on a zero of the sine."""
    labels = list(labels)
    if not labels or any(y not in (-1, 1) for y in labels):
        raise ConfigError(f"labels must be a non-empty list of ±1, got {labels!r}")
    digits = sum((Fraction(1, 2**i) for i, y in enumerate(labels) if y == -1), Fraction(0))
    return digits + Fraction(1, 2 ** len(labels))


def sign_sin_pi(t: Fraction) -> int:
    """``sgn(sin(π t))`` for a rational t, exactly: +1 on (0, 1) mod 2, −1 on (1, 2), 0 at integers."""
    r = Fraction(t) % 2
    return 0 if r.denominator == 1 else (1 if r < 1 else -1)


def shattered_labellings(n: int) -> int:
    """How many labellings of 1, 2, 4, …, 2^(n−1) :func:`shatter_frequency` realizes (exactly)."""
    n = check_positive_int("n", n)
    xs = [2**i for i in range(n)]
    return sum(
        all(sign_sin_pi(shatter_frequency(ys) * x) == y for x, y in zip(xs, ys))
        for ys in itertools.product((-1, 1), repeat=n)
    )


# ----------------------------------------------------------------------- Thm 6.3: margins against m
def sum_representatives(m: int, p: int) -> torch.Tensor:
    """One count vector of X_m per token sum S = 0 … m(p−1): tokens p−1, one S mod (p−1), zeros."""
    m, p = check_length(m), check_modulus(p)
    S = torch.arange(m * (p - 1) + 1)
    x, q, r = torch.zeros(len(S), p, dtype=torch.long), S // (p - 1), S % (p - 1)
    x[:, p - 1] += q
    x[torch.arange(len(S)), r] += (r > 0).long()
    x[:, 0] += m - x.sum(1)
    return x


def relu_interpolant_margins(p: int, ms) -> list[dict]:
    """Per m: width, margin on X_m, ``‖W‖_F ‖V‖_2`` and normalized margin of our ReLU interpolant
    (its units read only m and S, so :func:`sum_representatives` give the margin over X_m)."""
    out = []
    for m in nonempty("ms", ms):
        net, x = construct_relu(m, p), sum_representatives(m, p)
        gam = float(margins(net.scores(x), (x * torch.arange(p)).sum(1) % p).min())
        norm = float(layer_norm_product({"W": net.W, "V": net.V}, "relu"))
        out += [{"m": m, "width": net.width, "margin": gam, "norm": norm, "normalized": gam / norm}]
    return out


def slope_growth(rows) -> float:
    """Log-log slope of γ̄ against m over the last doubling of m over that of the one before:
    2 for γ̄ ∝ e^(−cm) (the slope doubles with m), 1 for a power law m^(−k)."""
    ms = [r["m"] for r in rows]
    if len(ms) < 3 or any(b != 2 * a for a, b in zip(ms, ms[1:])):
        raise ConfigError(f"slope_growth needs ≥ 3 lengths, each twice the last; got {ms}")
    g = [math.log2(r["normalized"]) for r in rows[-3:]]
    return (g[2] - g[1]) / (g[1] - g[0])


# --------------------------------------------------------------------------- training cells
@experiments_cell
def margin_widths(*, device="cpu", progress: bool = False, **settings) -> dict:
    """B.1.2 at several widths (Sec. 6 remark): train/test accuracy, normalized 0.5 % margin."""
    c, run = cell_settings("margin_widths", settings, device, progress)
    run["seeds"], m, p = c.seeds, c.m, c.p
    train = [train_set(s, p, (m,), c.n) for s in c.seeds]
    tests = [test_set(s, p, m, c.n_test) for s in c.seeds]
    rows, keep = [], ("train_acc", "test_acc", "normalized_margin")
    for act, w in itertools.product(c.activations, nonempty("widths", c.widths)):
        model = ModularMLP(p, w, check_activation(act))
        optim, desc = b1_optimizer("muon", c.lr, c.wd, act, False), f"{act} d={w}"
        cols = fit_columns(model, train, tests, margins=True, optim=optim, desc=desc, **run)
        kept = [{k: col[k] for k in keep} for col in cols]
        rows += member_rows([(s,) for s in c.seeds], "seed", kept, activation=act, width=w)
    return {"rows": rows, "m": m, "p": p, "n": c.n, "wd": c.wd}


@experiments_cell
def sample_needs(*, device="cpu", progress: bool = False, **settings) -> dict:
    """Cor. 5.8 / Thm 5.6: sine MLPs (AdamW, no decay) per (p, width) of ``grid``, one ensemble
    of n = round(ratio·p) examples per (ratio, seed); train and test accuracy per member."""
    c, run = cell_settings("sample_needs", settings, device, progress)
    optim, rows = b1_optimizer("adamw", c.lr, 0.0, "sine", False), []
    for p, w in nonempty("grid", c.grid):
        members = [(max(1, round(r * p)), s) for r in nonempty("ratios", c.ratios) for s in c.seeds]
        train = [train_set(s, p, (c.m,), n) for n, s in members]
        tests = [test_set(s, p, c.m, c.n_test) for _, s in members]
        model, seeds_e = ModularMLP(p, w, "sine"), [s for _, s in members]
        desc = f"samples p={p} d={w}"
        cols = fit_columns(model, train, tests, optim=optim, seeds=seeds_e, desc=desc, **run)
        rows += member_rows(members, "n seed", cols, p=p, width=w)
    return {"rows": rows, "m": c.m}


# ------------------------------------------------------------------------- reading the sample sweep
def samples_needed(rows, p: int, width: int, level: float) -> float | None:
    """The training-set size where the seed-mean test accuracy of (p, width) first reaches
    ``level``, linear in log n between grid sizes (``None``: never)."""
    sel = [r for r in rows if r["p"] == p and r["width"] == width]
    ns = sorted({r["n"] for r in sel})
    acc = [np.mean([r["test_acc"] for r in sel if r["n"] == n]) for n in ns]
    for i, a in enumerate(acc):
        if a >= level:
            if i == 0:
                return float(ns[0])
            t = (level - acc[i - 1]) / (a - acc[i - 1])
            return float(math.exp((1 - t) * math.log(ns[i - 1]) + t * math.log(ns[i])))
    return None
