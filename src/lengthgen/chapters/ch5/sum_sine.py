"""Chapter 5, section "Parity: averaging versus summing": the exact-solution volume of summing
attention + a sine unit s = V sin(W x + b), x = (n − t, t), around chapter 4's biased width-2 θ*
for p = 2 (:func:`volume_scan`), and that network trained (:func:`train_variant`)."""

from __future__ import annotations

import math

import numpy as np
import torch

from lengthgen.config import ConfigError, check_choice, check_finite, get_scale
from lengthgen.engine.runs import Cell
from lengthgen.chapters.ch4.constructions import construct_with_bias
from lengthgen.stats import clopper_pearson, plane_fit
from lengthgen.chapters.ch4.data import train_set
from lengthgen.chapters.ch4.data import ModularMLP, Network, check_activation
from lengthgen.chapters.ch4.training import accuracy_on, b1_optimizer, fit
from lengthgen.chapters.ch4 import paper as p4
from lengthgen.chapters.ch5.common import SLOPE_ALLOWANCE, claim_maker, equal, failed, holds
from lengthgen.chapters.ch5.common import slope_fit, slope_holds

DT = torch.float64
KINDS = ("one", "joint")


def center() -> dict[str, torch.Tensor]:
    """θ* (float64 ``W`` [unit, symbol], ``b``, ``V`` [class, unit]): chapter 4's construction."""
    net = construct_with_bias(2)
    return {"W": net.W.clone(), "b": net.b.clone(), "V": net.V.clone()}


def necessary_radius(eta: float, n: int, kind: str) -> float:
    """The necessary condition's bound on |w − u| (``one``) or on |u| and |w| (``joint``), from
    the longest arc the decisive unit's phase perturbation may occupy, π + 2 arcsin((2η + 10⁻¹⁵)
    / (2 − 2η)) (10⁻¹⁵ covers |sin π| of the float64 center)."""
    L = math.pi + 2 * math.asin((2 * eta + 1e-15) / (2 - 2 * eta))
    return min(2 * eta, L / n) if kind == "one" else min(eta, L / (n - 1))


def restricted_share(eta: float, n: int, kind: str) -> float:
    R = necessary_radius(eta, n, kind)
    return 1 - (1 - R / (2 * eta)) ** 2 if kind == "one" else (R / eta) ** 2


def sample_box(eta: float, samples: int, seed: int, *, n=None, kind: str = "one") -> dict:
    """``samples`` batched points of θ* + [−η, η]^10, or (with ``n``) of its restricted region at
    length n (``one``: w = u + d with d uniform in [−R, R], points with |w| > η rejected)."""
    g = torch.Generator().manual_seed(seed)
    c = center()
    off = (torch.rand(samples, 10, generator=g, dtype=DT) * 2 - 1) * eta
    if n is not None:
        R = necessary_radius(eta, n, kind)
        extra = (torch.rand(samples, generator=g, dtype=DT) * 2 - 1) * R
        if kind == "joint":
            off[:, 0] = off[:, 0] / eta * R
            off[:, 1] = extra
        else:
            off[:, 1] = off[:, 0] + extra
            off = off[off[:, 1].abs() <= eta]
    P = off.shape[0]
    return {
        "W": c["W"] + off[:, 0:4].reshape(P, 2, 2),
        "b": c["b"] + off[:, 4:6],
        "V": c["V"] + off[:, 6:10].reshape(P, 2, 2),
    }


def margins(P: dict, n: int) -> torch.Tensor:
    """(−1)^t (s₀ − s₁) at every t = 0 … n: [points, n + 1], positive iff exact at n."""
    t = torch.arange(n + 1, dtype=DT)
    x = torch.stack([n - t, t], -1)  # [T, 2]
    h = torch.einsum("pjv,tv->ptj", P["W"], x) + P["b"][:, None, :]
    s = torch.einsum("ptj,plj->ptl", torch.sin(h), P["V"])
    sign = 1 - 2 * (torch.arange(n + 1) % 2).to(DT)
    return (s[..., 0] - s[..., 1]) * sign


def exact_at(P: dict, n: int, chunk: int = 2048) -> torch.Tensor:
    """Whether each point is exact at length n (the strict argmax of s is t mod 2 at every t)."""
    m = P["W"].shape[0]
    out = torch.zeros(m, dtype=torch.bool)
    for lo in range(0, m, chunk):
        sl = {k: v[lo : lo + chunk] for k, v in P.items()}
        out[lo : lo + chunk] = (margins(sl, n) > 0).all(1)
    return out


def exact_jointly(P: dict, n: int) -> torch.Tensor:
    """Whether each point is exact at every length m = 1 … n: bool [P]."""
    alive = torch.ones(P["W"].shape[0], dtype=torch.bool)
    for m in range(1, n + 1):
        idx = alive.nonzero().squeeze(1)
        if len(idx) == 0:
            break
        alive[idx] = exact_at({k: v[idx] for k, v in P.items()}, m)
    return alive


def volume_fraction(eta: float, n: int, kind: str, *, samples, seed, restrict=True) -> dict:
    """The fraction of θ* + [−η, η]^10 exact at n (``one``) or at every length up to n (``joint``),
    95 % interval: Monte Carlo over the region the necessary condition leaves, times its share."""
    eta = check_finite("eta", eta)
    if not 0 < eta < 0.5:  # where the decisive unit's weight beats the other's in the whole box
        raise ConfigError(f"eta must lie in (0, 0.5), got {eta}")
    check_choice("kind", kind, KINDS)
    P = sample_box(eta, samples, seed, n=n if restrict else None, kind=kind)
    ok = exact_at(P, n) if kind == "one" else exact_jointly(P, n)
    k, N = int(ok.sum()), int(ok.numel())
    share = restricted_share(eta, n, kind) if restrict else 1.0
    lo, hi = clopper_pearson(k, N)
    drawn = {"n": n, "kind": kind, "eta": eta, "restricted": restrict, "share": share}
    drawn |= {"drawn": samples, "points": N, "exact": k}
    return drawn | {"fraction": share * k / N, "lo": share * lo, "hi": share * hi}


def volume_scan(eta, ns_one, ns_joint, samples_one, samples_joint, check_ns, check_samples):
    """The cell of one η: restricted :func:`volume_fraction` at ``ns_one`` and ``ns_joint``
    (seed n), and plain Monte Carlo of both kinds at ``check_ns`` (seed n + 1)."""
    scans = (("one", ns_one, samples_one), ("joint", ns_joint, samples_joint))
    rows = [
        volume_fraction(eta, int(n), k, samples=m, seed=int(n)) for k, ns, m in scans for n in ns
    ]
    plain = [
        volume_fraction(eta, int(n), kind, samples=check_samples, seed=int(n) + 1, restrict=False)
        for kind in KINDS
        for n in check_ns
    ]
    return {"eta": eta, "rows": rows, "plain": plain}


def length_margins(net, L: int) -> torch.Tensor:
    """(−1)^t (s₀ − s₁) of a chapter-4 ``Network`` (p = 2) at every count t = 0 … L."""
    t = torch.arange(L + 1)
    s = net.scores(torch.stack([L - t, t], -1))
    return (s[:, 0] - s[:, 1]) * (1 - 2 * (t % 2)).to(DT)


def first_failing_length(net, L_max: int) -> int | None:
    """The smallest L ≤ ``L_max`` at which ``net`` is not exact, or ``None``."""
    return next((L for L in range(1, L_max + 1) if not (length_margins(net, L) > 0).all()), None)


def population_accuracy(net, L: int) -> float:
    """Accuracy over uniform binary strings of length L, exactly (binomial weights)."""
    from scipy.stats import binom

    w = binom.pmf(np.arange(L + 1), L, 0.5)
    ok = (length_margins(net, L) > 0).numpy()
    return min(1.0, float(w[ok].sum()))  # the pmf sums to 1 only up to rounding


def collective_phase(net, x0, x1) -> tuple[torch.Tensor, torch.Tensor]:
    """(|Z|, arg Z) of Z(x) = Σ_j (V₀ⱼ − V₁ⱼ) exp(i (b_j + W_j0 x₀ + (W_j1 − π) x₁)): the margin
    is Im Z, so the network is right at x iff arg Z ∈ (0, π)."""
    W, V = net.W, net.V
    b = net.b if net.b is not None else torch.zeros(W.shape[0], dtype=DT)
    x0, x1 = (torch.as_tensor(x, dtype=DT) for x in (x0, x1))
    th = b + x0[:, None] * W[:, 0] + x1[:, None] * (W[:, 1] - math.pi)
    z = ((V[0] - V[1]) * torch.exp(1j * th)).sum(-1)
    return z.abs(), torch.angle(z)


def linear_failure_length(phi0, a0, a1, L_max: int) -> int | None:
    """The first L ≤ ``L_max`` at which Φ0 + a0 (L − t) + a1 t leaves (0, π) at t = 0 or t = L
    (a linear function's extremes on the segment), or ``None``."""
    inside = lambda L: all(0 < e < math.pi for e in (phi0 + a0 * L, phi0 + a1 * L))  # noqa: E731
    return next((L for L in range(1, L_max + 1) if not inside(L)), None)


def drift_diagnostics(net, train_lengths, L_max: int) -> dict:
    """Per unit d_j = V₀ⱼ − V₁ⱼ, δ_j = W_j1 − W_j0 − π, ν_j = W_j0 in (−π, π]; arg Z fitted as
    Φ0 + α₀ x₀ + α₁ x₁ on the training lattice; the failure that predicts and the measured one."""
    pts = [(m - t, t) for m in train_lengths for t in range(m + 1)]
    x0, x1 = (torch.tensor([p[i] for p in pts], dtype=DT) for i in (0, 1))
    R, ph = collective_phase(net, x0, x1)
    exact_train = bool(((ph > 0) & (ph < math.pi) & (R > 0)).all())
    phi0, a0, a1 = plane_fit(x0.numpy(), x1.numpy(), ph.numpy())
    resid = float((ph - (phi0 + a0 * x0 + a1 * x1)).abs().max())
    d = net.V[0] - net.V[1]
    delta, nu = (
        math.pi - torch.remainder(math.pi - x, 2 * math.pi)
        for x in (net.W[:, 1] - net.W[:, 0] - math.pi, net.W[:, 0])
    )
    j = int(d.abs().argmax())
    out = {"exact_on_train": exact_train, "phi0": phi0, "alpha_zeros": a0, "alpha_ones": a1}
    return out | {
        "residual": resid,
        "predicted_failure": linear_failure_length(phi0, a0, a1, L_max),
        "measured_failure": first_failing_length(net, L_max),
        "dominant": {"d": float(d[j]), "delta": float(delta[j]), "nu": float(nu[j])},
        "units": {"d": d.tolist(), "delta": delta.tolist(), "nu": nu.tolist()},
    }


def train_variant(
    *,
    activation: str,
    bias: bool,
    wds,
    width: int,
    n: int,
    steps: int,
    lr: float,
    seeds,
    test_lengths,
    in_domain_lengths,
    train_lengths,
    L_max: int,
    device="cpu",
) -> dict:
    """Chapter 4's B.1.3 protocol at p = 2, one ensemble of members (wd, seed): per member the
    accuracy per length, the first failing length ≤ ``L_max``, sine: :func:`drift_diagnostics`."""
    act = check_activation(activation)
    if not isinstance(bias, bool):
        raise ConfigError(f"bias must be True or False, got {bias!r}")
    members = [(float(wd), int(s)) for wd in wds for s in seeds]
    member_wds, member_seeds = [wd for wd, _ in members], [s for _, s in members]
    train = [train_set(s, 2, train_lengths, n) for s in member_seeds]
    model = ModularMLP(2, width, act, bias=bias)
    optim = b1_optimizer("muon", lr, member_wds, act, bias)
    desc = f"sum_sine {act}{'+b' if bias else ''}"
    res = fit(model, train, optim=optim, steps=steps, seeds=member_seeds, device=device, desc=desc)
    P = res.final_params
    train_acc = accuracy_on(model, P, train).tolist()
    lengths = [int(L) for L in (*in_domain_lengths, *test_lengths)]
    rows = []
    for i, (wd, s) in enumerate(members):
        b = P["b"][i].double() if "b" in P else None
        net = Network(P["W"][i].double(), P["V"][i].double(), act, b)
        row = {"activation": act, "bias": bias, "width": width, "wd": wd, "seed": s}
        row["train_acc"] = train_acc[i]
        row["acc"] = {str(L): population_accuracy(net, L) for L in lengths}
        row["exact_at"] = {str(L): bool((length_margins(net, L) > 0).all()) for L in lengths}
        if act == "sine":
            row["drift"] = drift_diagnostics(net, train_lengths, L_max)
            row["first_failure"] = row["drift"]["measured_failure"]
        else:
            row["first_failure"] = first_failing_length(net, L_max)
        rows.append(row)
    return {"rows": rows, "steps": res.steps_run, "L_max": L_max}


#: the two box half-widths (both < 1/2, see :func:`volume_fraction`)
ETAS = (0.25, 0.1)
#: lengths of the volume scans (doublings), per kind, and of the plain Monte Carlo check
VOLUME_NS = {"one": tuple(2**k for k in range(4, 13)), "joint": tuple(2**k for k in range(4, 11))}
CHECK_NS = (32, 64)
VOLUME_SAMPLES = {"smoke": {"one": 400, "joint": 200}, "full": {"one": 20_000, "joint": 5000}}
CHECK_SAMPLES = {"smoke": 400, "full": 20_000}
#: training: chapter 4's full-scale B.1.3 block (p = 17 there) at p = 2, one budget, three seeds
TRAIN_VARIANTS = (("sine", True), ("relu", True), ("sine", False), ("relu", False))


def train_kwargs(scale: str) -> dict:
    """Chapter 4's ``lengthgen`` protocol at p = 2: its largest budget, seeds 1337–1339 (full)."""
    scale = get_scale(scale)
    blk = p4.PROTOCOL[scale]["lengthgen"]
    return {
        "width": blk["width"],
        "n": max(blk["budgets"]) if scale == "full" else blk["budgets"][0],
        "wds": list(blk["wds"]),
        "steps": blk["steps"] if scale == "full" else 100,
        "lr": blk["lr"],
        "seeds": [1337, 1338, 1339] if scale == "full" else [1337],
        "test_lengths": list(blk["test_lengths"]),
        "in_domain_lengths": list(p4.IN_DOMAIN_LENGTHS),
        "train_lengths": list(p4.TRAIN_LENGTHS),
        "L_max": 2048 if scale == "full" else 256,
    }


def volume_cell_name(eta: float) -> str:
    return f"sumsine_volume_eta{eta:g}".replace(".", "p")


def train_cell_name(activation: str, bias: bool) -> str:
    return f"sumsine_train_{activation}{'_bias' if bias else ''}"


def cells(scale: str) -> list[Cell]:
    """One volume scan per η, one training ensemble per variant (smoke: smaller, same names)."""
    scale = get_scale(scale)
    full = scale == "full"
    scan = {f"ns_{k}": list(VOLUME_NS[k] if full else VOLUME_NS[k][:3]) for k in KINDS}
    scan |= {f"samples_{k}": VOLUME_SAMPLES[scale][k] for k in KINDS}
    scan |= {"check_ns": list(CHECK_NS) if full else [32], "check_samples": CHECK_SAMPLES[scale]}
    kw = train_kwargs(scale)
    return [Cell(volume_cell_name(eta), volume_scan, {"eta": eta, **scan}) for eta in ETAS] + [
        Cell(
            train_cell_name(a, b),
            train_variant,
            {"activation": a, "bias": b, **kw},
            seeds=tuple(kw["seeds"]),
        )
        for a, b in TRAIN_VARIANTS
    ]


# --------------------------------------------------------------------------- predictions
# Our predictions on the runs above, each written with its comparison before the run it judges. The
# restricted volume estimate carries the power of n through its share by construction: the volume
# predictions' content is that the hit rate inside it tends to a positive constant. Seen before
# writing these: exploratory runs at η = 0.17, not a judged η (hit rates ≈ 20 %; local slopes −0.96
# over n = 64 … 1024 and −1.2 over 1024 … 4096 at one length from 400–2000 points, −2.0 and −2.2
# jointly over 64 … 256 … 512 from 300–500 points), and training at seeds 7 and 8 (not judged) with
# 2000 updates: biased sine networks failed first at lengths 6 … 27, biased ReLU ones at 4 … 5; of
# three biased sine networks right on the whole training lattice one failed within a factor 2 of the
# linear-phase prediction (27 vs 45) and two did not (6 vs 85, 11 vs 43); width-2 runs failed at
# length 1 against predictions of 31 … 74. We expected the drift relation to fail for some networks
# (those seen failed where |Z| collapses between training lengths, which a linear phase does not
# see) and kept it unchanged. After the runs a review moved ``relu_nobias_fails_by_2`` and
# ``relu_bias_width_bound`` to ``self-check`` (comparisons unchanged).

LOC = "ch. 5 § averaging vs summing"
#: the volume claims: (id, η, kind, the fitted lengths, fixed before the run)
VOLUME_CLAIMS = (
    ("ch5.sumsine.volume_one_eta0p25", 0.25, "one", (64, 4096)),
    ("ch5.sumsine.volume_joint_eta0p25", 0.25, "joint", (64, 1024)),
    ("ch5.sumsine.volume_one_eta0p1", 0.1, "one", (256, 4096)),
    ("ch5.sumsine.volume_joint_eta0p1", 0.1, "joint", (64, 1024)),
)
FIT_NS = {(eta, kind): ns for _, eta, kind, ns in VOLUME_CLAIMS}
EXPONENTS = {"one": -1, "joint": -2}
#: the width of the trained networks (chapter 4's full-scale width) and the longest training length
WIDTH = p4.PROTOCOL["full"]["lengthgen"]["width"]
LONGEST_TRAIN = max(p4.TRAIN_LENGTHS)
DRIFT_FACTOR = 2.0


def volume_slope(results, eta, kind) -> dict:
    """The log-log slope of the exact fraction over the fitted lengths, with its 95 % interval."""
    lo, hi = FIT_NS[(eta, kind)]
    rows = results.cell(volume_cell_name(eta))["rows"]
    rows = [r for r in rows if r["kind"] == kind and lo <= r["n"] <= hi]
    ns, fractions, hits = ([r[k] for r in rows] for k in ("n", "fraction", "exact"))
    return slope_fit(ns, fractions, hits, lengths=True)


def plain_disagreements(results, eta) -> int:
    """Lengths × kinds where the plain Monte Carlo and the restricted intervals do not overlap."""
    cell = results.cell(volume_cell_name(eta))
    rest = {(r["kind"], r["n"]): r for r in cell["rows"]}
    return sum(
        int(p["hi"] < r["lo"] or r["hi"] < p["lo"])
        for p in cell["plain"]
        for r in [rest[(p["kind"], p["n"])]]
    )


def _rows(results, act, bias):
    return results.cell(train_cell_name(act, bias))["rows"]


def _failure(r, cap):
    """A member's first failing length, ``cap + 1`` where it is exact up to the cap."""
    return cap + 1 if r["first_failure"] is None else r["first_failure"]


def exact_beyond(results, act, bias, n) -> int:
    """The stored members of a variant still exact at every length ≤ ``n``."""
    return sum(_failure(r, n) > n for r in _rows(results, act, bias))


def sine_vs_relu(results) -> dict:
    cap = results.cell(train_cell_name("sine", True))["L_max"]
    s, r_ = ([_failure(r, cap) for r in _rows(results, a, True)] for a in ("sine", "relu"))
    return {"sine_median": float(np.median(s)), "relu_max": int(max(r_))}


def _match(meas, pred, cap) -> bool:
    """Within DRIFT_FACTOR, where ``None`` (exact up to ``cap``) counts as ``cap``."""
    if meas is None or pred is None:
        return meas is pred or (meas or pred) * DRIFT_FACTOR >= cap
    return abs(math.log(meas / pred)) <= math.log(DRIFT_FACTOR)


def drift_relation(results) -> dict:
    """Sine networks right on the whole training lattice whose measured first failing length is
    within a factor 2 of the linear-phase prediction (both variants pooled)."""
    n_ok, pairs = 0, []
    for bias in (True, False):
        cap = results.cell(train_cell_name("sine", bias))["L_max"]
        for d in (r["drift"] for r in _rows(results, "sine", bias)):
            if d["exact_on_train"]:
                n_ok += int(_match(d["measured_failure"], d["predicted_failure"], cap))
                pairs.append([d["measured_failure"], d["predicted_failure"]])
    return {"networks": len(pairs), "within_factor_2": n_ok, "pairs": pairs}


_c, _check = (claim_maker(LOC, g) for g in ("ours", "self-check"))

#: the plain Monte Carlo checks: (id, η)
PLAIN_CHECKS = (
    ("ch5.sumsine.volume_plain_check_eta0p25", 0.25),
    ("ch5.sumsine.volume_plain_check_eta0p1", 0.1),
)
_WHAT = {"one": "at one length n", "joint": "jointly at every length up to n"}

CLAIMS = [
    *(
        _c(
            cid,
            f"The fraction of the box θ* + [−{eta:g}, {eta:g}]^10 around chapter 4's construction "
            f"that is exact {_WHAT[kind]} decays like n^{EXPONENTS[kind]} (log-log slope over "
            f"n = {ns[0]} … {ns[1]}, doublings; the exponent inside its 95 % interval "
            f"± {SLOPE_ALLOWANCE})",
            holds(EXPONENTS[kind], lambda v, e=EXPONENTS[kind]: slope_holds(v, e)),
            "one length: only the step w − u of the decisive unit's phase along t must be O(1/n), "
            "its offset only modulo 2π; jointly both u and w must be O(1/n); the rest enters "
            f"through the slack; allowance {SLOPE_ALLOWANCE} (finite-n bias ≤ 0.05)",
            lambda r, eta=eta, kind=kind: volume_slope(r, eta, kind),
        )
        for cid, eta, kind, ns in VOLUME_CLAIMS
    ),
    *(
        _check(
            cid,
            f"Plain Monte Carlo over the whole box (η = {eta:g}) and the restricted estimate agree "
            "at n = 32 and 64, both kinds (pairs whose 95 % intervals do not overlap)",
            equal(0),
            "the restricted estimate is unbiased when the necessary condition holds; two "
            "independent 95 % intervals miss each other rarely",
            lambda r, eta=eta: plain_disagreements(r, eta),
        )
        for cid, eta in PLAIN_CHECKS
    ),
    _check(
        "ch5.sumsine.relu_nobias_fails_by_2",
        "Every bias-free ReLU network trained with chapter 4's protocol at p = 2 fails at length "
        "1 or 2 (members whose first failing length exceeds 2)",
        equal(0),
        "a bias-free ReLU network is positively homogeneous: (0, 1) and (0, 2) get the same "
        "decision but different parities",
        lambda r: exact_beyond(r, "relu", False, 2),
    ),
    _check(
        "ch5.sumsine.relu_bias_width_bound",
        f"Every biased ReLU network of width h = {WIDTH} fails at some length ≤ h + 2 (members "
        "exact at every length up to h + 2)",
        equal(0),
        "at one length the network is piecewise linear in t with ≤ h kinks, so ≤ h + 1 sign "
        "changes, and Parity at length n needs n",
        lambda r: exact_beyond(r, "relu", True, WIDTH + 2),
    ),
    _c(
        "ch5.sumsine.sine_beyond_relu",
        "Biased sine networks stay exact further than biased ReLU networks: the median first "
        "failing length of the sine members exceeds the largest of the ReLU members",
        holds("sine median > ReLU max", lambda v: v["sine_median"] > v["relu_max"]),
        "the sine unit's phase can follow t with frequency π; a ReLU network's sign changes are "
        "its kinks (seen at seeds 7–8: sine 6 … 27, ReLU 4 … 5)",
        sine_vs_relu,
    ),
    _c(
        "ch5.sumsine.sine_fails_by_38",
        f"No biased sine network learns the construction's zero drift: every one fails at some "
        f"length ≤ 2 × {LONGEST_TRAIN} = {2 * LONGEST_TRAIN}",
        holds(f"max first failing length ≤ {2 * LONGEST_TRAIN}", lambda v: v <= 2 * LONGEST_TRAIN),
        "the training lattice (7 lengths ≤ 19) leaves the per-length phase ν and the frequency "
        "offset δ free up to O(1/19); seen at seeds 7–8: failures at 6 … 27",
        lambda r: max(_failure(x, 10**9) for x in _rows(r, "sine", True)),
        **failed("one biased sine network stayed exact far past length 38"),
    ),
    _c(
        "ch5.sumsine.drift_relation",
        "Each sine network right on the whole training lattice (with and without bias) fails first "
        "within a factor 2 of the length at which its fitted linear collective phase leaves (0, π)",
        holds(
            "every network within a factor 2",
            lambda v: v["networks"] > 0 and v["within_factor_2"] == v["networks"],
        ),
        "the sign of (−1)^t (s₀ − s₁) is the side of arg Z; a phase drifting linearly in "
        "(n − t, t) reaches the decision slack at a computable length (expected to fail for "
        "some networks, as in exploratory runs at seeds 7–8)",
        drift_relation,
        **failed(
            "most fail well before the extrapolated length; only one matches within a factor 2"
        ),
    ),
]
