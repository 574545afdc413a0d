"""What chapter 1's hand-set constructions do (Chiang & Cholak 2022, §3–§5): their exactness, Fig.
2's curves, their logits, the sensitivity sweep of §5.1 and the flawed FIRST transformer of §5.2,
cheap enough to run live at full size; then readers of the stored cells and the explorer."""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np
import torch

from lengthgen import plotting
from lengthgen.chapters.ch1 import constructions as C
from lengthgen.chapters.ch1 import paper
from lengthgen.chapters.ch1.encoder import Encoder, accuracy, cross_entropy_bits
from lengthgen.config import ConfigError, check_choice, check_finite, check_positive_int, nonempty
from lengthgen.nn.tasks import all_strings, label, random_strings


_all_strings = lru_cache(maxsize=None)(all_strings)  # reused by every construction's check


def exact_sets(
    n_exhaustive=paper.EXACT_N_EXHAUSTIVE,
    random_ns=paper.EXACT_RANDOM_NS,
    n_random=paper.EXACT_RANDOM_STRINGS,
    seed=paper.SEED,
) -> list[torch.Tensor]:
    """§3.4's test strings: every string of each length n ≤ ``n_exhaustive``, then ``n_random``
    random strings at each n in ``random_ns``."""
    g = torch.Generator().manual_seed(seed)
    sets = [_all_strings(n) for n in range(1, n_exhaustive + 1)]
    return sets + [random_strings(n_random, n, generator=g) for n in random_ns]


@torch.no_grad()
def evaluate(enc: Encoder, params: dict, bits: torch.Tensor, task: str | None = None) -> dict:
    """Accuracy, mean cross-entropy (bits), min / max |logit| of member 0 on ``bits`` (grouped for
    positional ``first``, where exact) for ``task``, by default that of its positional features."""
    grouped = enc.config.positional == "first"
    logits = enc(params, enc.group(bits) if grouped else bits)[0]
    y = label(task or enc.config.positional, bits)
    mag, ce = logits.abs(), cross_entropy_bits(logits, y).mean()
    out = {"acc": float(accuracy(logits, y)), "ce_bits": float(ce)}
    return {**out, "min_abs_logit": float(mag.min()), "max_abs_logit": float(mag.max())}


def exactness(
    name: str,
    kw: dict | None = None,
    *,
    n_exhaustive: int = paper.EXACT_N_EXHAUSTIVE,
    random_ns=paper.EXACT_RANDOM_NS,
    n_random: int = paper.EXACT_RANDOM_STRINGS,
    seed: int = paper.SEED,
) -> dict:
    """Accuracy of construction ``name`` on :func:`exact_sets` (the check of §3.4)."""
    n_exhaustive = check_positive_int("n_exhaustive", n_exhaustive)
    enc, p = C.build(name, **(kw or {}))
    sets = exact_sets(n_exhaustive, random_ns, n_random, seed)
    acc = [evaluate(enc, p, bits)["acc"] for bits in sets]
    exh, rnd = acc[:n_exhaustive], dict(zip(map(int, random_ns), acc[n_exhaustive:]))
    out = {"exhaustive_min_acc": min(exh), "exhaustive_strings": 2 ** (n_exhaustive + 1) - 2}
    ok = min(exh) == 1.0 and all(a == 1.0 for a in rnd.values())
    return {**out, "random_acc": rnd, "all_correct": ok}


def ce_curve(
    name: str,
    kw: dict | None = None,
    *,
    lengths=paper.FIG2_LENGTHS,
    n_strings: int = 1000,
    seed: int = paper.SEED,
) -> dict:
    """Mean cross-entropy (bits), accuracy and |logit| range of a construction on ``n_strings``
    random strings per length (section "Confidence: cross-entropy against length")."""
    n_strings = check_positive_int("n_strings", n_strings)
    enc, p = C.build(name, **(kw or {}))
    g = torch.Generator().manual_seed(seed)
    strings = ((int(n), random_strings(n_strings, int(n), generator=g)) for n in lengths)
    rows = [{"n": n, **evaluate(enc, p, bits)} for n, bits in strings]
    return {"construction": name, "kw": dict(kw or {}), "n_strings": n_strings, "rows": rows}


def parity_logit_closed_form(n: int, a: float = 1.0) -> dict:
    """``{"odd": |s|, "even": |s|}``: the PARITY logit without layer norm at length ``n`` (chapter
    eq-parity-logit, output weight 1); ``a`` > 0: layer 2's favoured logit (1 ours, 1/√5 theirs)."""
    n = check_positive_int("n", n)
    a = check_finite("a", a)
    if a <= 0:
        raise ConfigError(f"a must be > 0, got {a!r}")
    N = n + 1
    even, odd = n // 2 + 1, (n + 1) // 2
    up, down = math.exp(a), math.exp(-a)
    z_odd, z_even = odd * up + even * down, odd * down + even * up
    return {"odd": (up / z_odd - down / z_even) / N, "even": (up / z_even - down / z_odd) / N}


def favoured_logit(name: str, kw: dict | None = None, *, n: int = 4) -> float:
    """The favoured attention logit of a construction's last layer (no layer norm) from its first
    head's CLS weights w on 0…0 (length ``n`` ≥ 2): log(w₁ / w₂), halved for PARITY (keys ±1)."""
    check_choice("construction", name, ("parity", "first"))
    n = check_positive_int("n", n, minimum=2)
    kw = dict(kw or {})
    if kw.get("layer_norm"):
        raise ValueError("favoured_logit reads a construction without layer norm")
    enc, p = C.build(name, **kw)
    w = enc.trace(p, torch.zeros(1, n, dtype=torch.long))["attention"][-1][0, 0, 0]
    ratio = math.log(float(w[1]) / float(w[2]))
    return ratio / 2 if name == "parity" else ratio


def logit_range(
    name: str, kw: dict | None = None, *, lengths, n_strings: int = 1000, seed: int = 0
) -> list[dict]:
    """min / max |logit|, accuracy and cross-entropy at each length, on random strings (10⁶ symbols
    per length above n = 1000) plus the four extreme strings 10…0, 01…1, 11…1 and 00…0."""
    enc, p = C.build(name, **(kw or {}))
    g = torch.Generator().manual_seed(seed)
    rows = []
    for n in lengths:
        n = check_positive_int("n", int(n))
        k = max(10, min(n_strings, 10**6 // n))
        bits = random_strings(k, n, generator=g)
        extreme = torch.zeros(4, n, dtype=torch.long)
        extreme[0, 0] = extreme[2] = 1
        extreme[1, 1:] = 1
        rows.append({"n": n, "strings": k + 4, **evaluate(enc, p, torch.cat([bits, extreme]))})
    return rows


def sensitivity_sweep(
    values, *, n: int = paper.SENS_N, n_strings: int = 1000, seed: int = paper.SEED
) -> dict:
    """§5.1 (section "PARITY is not learned …"): :func:`evaluate` of the ε = 0 layer-norm PARITY
    construction at each k/N value weight of ``values`` on the same ``n_strings`` strings of length n."""
    n = check_positive_int("n", n)
    n_strings = check_positive_int("n_strings", n_strings)
    values = nonempty("value weights", [check_finite("value weight", v) for v in values])
    bits = random_strings(n_strings, n, generator=torch.Generator().manual_seed(seed))
    ln0 = {"layer_norm": True, "eps": 0.0}  # the ε = 0 layer-norm construction
    rows = [{"value": v, **evaluate(*C.parity(**ln0, value_k=v), bits)} for v in values]
    return {"n": n, "n_strings": n_strings, "rows": rows}


def flawed_first_error(c: float, n) -> np.ndarray:
    """Exact error rate of the one-layer FIRST transformer with standard attention (§5.2): the
    binomial tail P(k′ ≤ (n − 1 − e^c)/2), k′ ~ Binomial(n − 1, ½) (chapter eq-flawed)."""
    from scipy.stats import binom

    n = np.asarray(n)
    return binom.cdf(np.floor((n - 1 - math.exp(c)) / 2), n - 1, 0.5)


def oscillations(values, acc, *, high: float = 0.8, low: float = 0.5) -> int:
    """Number of times the accuracy curve, read from left to right, climbs back above ``high``
    after having dropped below ``low`` (the recoveries of the oscillation of §5.1)."""
    count, dropped = 0, False
    for a in acc:
        if a < low:
            dropped = True
        elif a > high and dropped:
            count, dropped = count + 1, False
    return count


# ------------------------------------------------------------------------- stored fig2, sensitivity
#: The advantage c of the exact FIRST construction as stored in Fig. 2 (its default).
FIRST_C = C.first.__kwdefaults__["c"]
NO_LN, EPS5, EPS0 = (lab for lab, _ in paper.LN_VARIANTS)


def fig2_curve(results, construction: str, label: str) -> list[dict]:
    """The rows of one curve of the stored cell ``fig2``."""
    want = (construction, label)
    return next(c["rows"] for c in results.cell("fig2") if (c["construction"], c["label"]) == want)


def first_logit_formula(n, c=FIRST_C):
    """|s| of the exact FIRST construction without layer norm at length n (§3.3)."""
    return math.exp(c) / (math.exp(c) + n) / 2  # N − 1 = n


def sensitivity_oscillation(results, near: float, *, low: float, high: float) -> dict:
    """Lowest accuracy of the stored sweep within ``near`` of 1; recoveries read outwards from 1."""
    rows = results.cell("sensitivity")["rows"]
    v, a = (np.array([r[k] for r in rows]) for k in ("value", "acc"))
    kw = {"high": high, "low": low}
    up, down = v >= 1, v <= 1
    rec = oscillations(v[up], a[up], **kw) + oscillations(v[down][::-1], a[down][::-1], **kw)
    return {"min_acc_near_1": float(a[np.abs(v - 1.0) <= near].min()), "recoveries": int(rec)}


# ------------------------------------------------------------------------- explorer
#: The two models of section "Explorer": the exact two-layer FIRST construction and the one-layer.
EXPLORER_MODELS = ("exact two-layer FIRST", "one-layer FIRST")


def explorer_frame(n: int = 100, model: str = EXPLORER_MODELS[0], seed: int = 0):
    """One explorer frame: a random length-``n`` string and it with w₁ flipped, read by ``model``
    (c = 2), standard vs log-scaled: last-layer CLS attention by position (left), logits (right)."""
    n = check_positive_int("n", int(n))
    check_choice("model", model, EXPLORER_MODELS)
    build = C.first if model == EXPLORER_MODELS[0] else C.first_log_scaled
    bits = random_strings(1, n, generator=torch.Generator().manual_seed(int(seed)))
    both = torch.cat([bits, bits])
    both[1, 0] = 1 - bits[0, 0]
    fig, (ax0, ax1) = plotting.figure(1, 2, width=3.4, height=2.8)
    logits = {}
    for scaled, col in ((False, plotting.PALETTE[0]), (True, plotting.PALETTE[1])):
        enc, p = build(c=2.0, log_scaled=scaled)  # c = 2: the default of first_log_scaled
        tr = enc.trace(p, both)
        lab = "× log N" if scaled else "standard"
        att = tr["attention"][-1][0, 0, 0].numpy()
        ax0.plot(range(n + 1), att, ".", ms=3, color=col, label=lab)
        logits[lab] = tr["logit"][0].numpy()
    ax0.set(yscale="log", xlabel="position i (0 = CLS)", ylabel="CLS attention weight")
    ax0.legend(loc="best", markerscale=3)
    x = np.arange(2)
    for j, (lab, v) in enumerate(logits.items()):
        ax1.bar(x + 0.38 * j, v, width=0.36, label=lab, color=plotting.PALETTE[j])
    ax1.axhline(0, color="k", lw=0.8)
    ticks = [f"w₁ = {int(both[0, 0])}", f"w₁ = {int(both[1, 0])}"]
    ax1.set(xticks=x + 0.19, xticklabels=ticks, xlabel=f"string of length n = {n}")
    ax1.set_ylabel("output logit s (> 0: accept)")
    fig.suptitle(f"{model} (c = 2)", fontsize=11)
    return plotting.finish(fig)
