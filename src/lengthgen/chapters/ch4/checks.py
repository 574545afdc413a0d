"""Chapter 4: a network's accuracy at every length, exactly where possible (section "Claim 1 —
the constructions, checked exactly"), with the errors outside the "tie residues" (Lemma D.2)."""

from __future__ import annotations

import math

import numpy as np
import torch

from lengthgen.chapters.ch4 import experiments_cell, paper
from lengthgen.chapters.ch4.constructions import construct_fixed_length, construct_fourier
from lengthgen.chapters.ch4.constructions import construct_relu, construct_with_bias
from lengthgen.chapters.ch4.constructions import fourier_accuracy, path_lower_bound, relu_kinks
from lengthgen.chapters.ch4.constructions import relu_width_lower_bound
from lengthgen.chapters.ch4.data import all_count_vectors, all_inputs, check_length, check_modulus
from lengthgen.chapters.ch4.data import count_vectors, labels_of, labels_of_counts
from lengthgen.chapters.ch4.data import Network, activate, uargmax
from lengthgen.chapters.ch4.paper import N_TEST, OOD_LENGTHS
from lengthgen.config import ConfigError, check_positive_int, nonempty


class _Tally:
    """Per-length counts of right and tied predictions and of tie-residue labels, and the errors
    outside those residues (never made by the bias-free network, Lemma D.2)."""

    def __init__(self, p: int, lengths: int):
        self.tie_res = (2 * torch.arange(p)) % p == 0
        self.correct, self.ties, self.tie_frac = (torch.zeros(lengths) for _ in range(3))
        self.outside = 0

    def add(self, pred: torch.Tensor, y: torch.Tensor) -> None:
        """Count predictions ``pred`` (−1: tied) of labels ``y``, both [inputs, lengths]."""
        ok = pred == y
        self.correct += ok.sum(0)
        self.ties += (pred < 0).sum(0)
        self.tie_frac += self.tie_res[y].sum(0)
        self.outside += int((~ok & ~self.tie_res[y]).sum())

    def result(self, lengths: list, n: int) -> dict:
        frac = lambda t: (t / n).tolist()  # noqa: E731
        out = {"lengths": lengths, "acc": frac(self.correct), "ties": frac(self.ties)}
        out.update(errors_outside_tie_residues=self.outside, n=n)
        return {**out, "tie_residue_frac": frac(self.tie_frac)}


def _token_chunks(p: int, max_m: int, n: int, seed: int, chunk: int):
    """``n`` sampled token sequences of length ``max_m`` ([k, max_m]), ``chunk`` at a time."""
    n, chunk = check_positive_int("n", n), check_positive_int("chunk", chunk)
    g = torch.Generator().manual_seed(check_positive_int("seed", seed, minimum=0))
    for lo in range(0, n, chunk):
        yield torch.randint(0, p, (min(chunk, n - lo), max_m), generator=g)


def accuracy_by_length(net, p, max_m, n=N_TEST, seed=0, lengths=None, tol=1e-6, chunk=250) -> dict:
    """Strict-uniqueness accuracy of the float64 ``net`` at lengths 1 … ``max_m`` (or ``lengths``),
    ``n`` sampled inputs each (prefixes of one sequence per row), as :class:`_Tally`'s fractions."""
    p, max_m = check_modulus(p), check_length(max_m)
    lens = list(range(1, max_m + 1)) if lengths is None else sorted(map(check_length, set(lengths)))
    if max(lens) > max_m:
        raise ConfigError(f"lengths go beyond max_m = {max_m}")
    if not isinstance(net, Network) or net.p != p:
        raise ConfigError(f"net must be a Network with p = {p} classes")
    sel, tally = torch.tensor(lens) - 1, _Tally(p, len(lens))
    Wt = net.W.T.contiguous()  # [p, d]
    for tok in _token_chunks(p, max_m, n, seed, chunk):
        h = Wt[tok].cumsum(1)[:, sel]  # [k, L, d] = W x^(m)
        h = h if net.b is None else h + net.b
        tally.add(uargmax(activate(h, net.activation) @ net.V.T, tol), tok.cumsum(1)[:, sel] % p)
    return tally.result(lens, n)


def phase_automaton(N: torch.Tensor, beta: torch.Tensor, D: int, max_states: int = 200_000):
    """The first layer ``W = 2πN/D``, ``b = 2πβ/D`` of a sine network as an exact automaton on
    ``ρ = (N x + β) mod D`` ("The phase/rotation view"): ``(states [K, d], trans [K, p], 0)``."""
    D = check_positive_int("D", D)
    cols = [tuple(c) for c in torch.as_tensor(N, dtype=torch.long).T.remainder(D).tolist()]
    start = tuple(torch.as_tensor(beta, dtype=torch.long).remainder(D).tolist())
    ids, states, trans = {start: 0}, [start], []
    for st in states:  # grows while it is walked: breadth-first
        row = []
        for c in cols:
            nxt = tuple((a + b) % D for a, b in zip(st, c))
            if nxt not in ids:
                ids[nxt] = len(states)
                states.append(nxt)
                if len(states) > max_states:
                    raise ConfigError(f"the phase automaton has more than {max_states} states")
            row.append(ids[nxt])
        trans.append(row)
    return torch.tensor(states, dtype=torch.long), torch.tensor(trans, dtype=torch.long), 0


def _readout_automaton(net: Network, p: int, tol: float, who: str):
    """:func:`phase_automaton` of a sine ``net`` and each state's float64 prediction ``table``."""
    sine = isinstance(net, Network) and net.activation == "sine" and net.p == p
    if not sine or net.rational is None:
        raise ConfigError(f"{who} needs a sine Network with rational phases and p classes")
    Nm, beta, D = net.rational
    states, trans, start = phase_automaton(Nm, beta, D)
    hidden = torch.sin(2 * math.pi * states.double() / D)
    return states, trans, start, uargmax(hidden @ net.V.T, tol)


def automaton_accuracy(net, p, max_m, n=N_TEST, seed=0, tol=1e-9, chunk=2_000) -> dict:
    """:func:`accuracy_by_length` with the first layer run exactly (:func:`phase_automaton`);
    ``tol`` ≫ 1e-16, ≪ the gaps 1 − cos(2π/p)."""
    p, max_m = check_modulus(p), check_length(max_m)
    states, trans, start, table = _readout_automaton(net, p, tol, "automaton_accuracy")
    tally = _Tally(p, max_m)
    for tok in _token_chunks(p, max_m, n, seed, chunk):
        sid = torch.full((len(tok),), start, dtype=torch.long)
        pred = torch.empty(len(tok), max_m, dtype=torch.long)
        for j in range(max_m):
            sid = trans[sid, tok[:, j]]
            pred[:, j] = table[sid]
        tally.add(pred, tok.cumsum(1).remainder(p))
    return {**tally.result(list(range(1, max_m + 1)), n), "states": int(states.shape[0])}


def exact_lengths(net: Network, p: int, max_m: int, tol: float = 1e-9) -> list[int]:
    """The lengths ``1 … max_m`` at which the sine ``net`` is right on all ``p^m`` inputs (brute
    force over reachable (automaton state, label) pairs)."""
    p, max_m = check_modulus(p), check_length(max_m)
    states, trans, start, table = _readout_automaton(net, p, tol, "exact_lengths")
    s, y, out = torch.tensor([start]), torch.tensor([0]), []  # the empty input: sum 0
    for m in range(1, max_m + 1):
        reach = torch.zeros(states.shape[0], p, dtype=torch.bool)
        reach[trans[s].reshape(-1), ((y[:, None] + torch.arange(p)) % p).reshape(-1)] = True
        s, y = reach.nonzero(as_tuple=True)
        if bool((table[s] == y).all()):
            out.append(m)
    return out


def exhaustive_accuracy(net: Network, m: int, tol: float = 1e-6) -> dict:
    """Accuracy of ``net`` over all ``p^m`` ordered inputs of length m (each weighted once)."""
    tok = all_inputs(m, net.p)
    pred, y = net.predict(count_vectors(tok, net.p, torch.float64), tol), labels_of(tok, net.p)
    acc, ties = float((pred == y).double().mean()), float((pred < 0).double().mean())
    return {"m": m, "p": net.p, "inputs": int(tok.shape[0]), "acc": acc, "ties": ties}


# --------------------------------------------------------------------------- claim 1: constructions
@experiments_cell
def small_exhaustive(ps=(2, 3, 4, 5, 6, 7, 11), ms=(1, 2, 3, 4), limit: int = 20_000) -> list[dict]:
    """Every construction on every ordered input of length m, for (m, p) with p^m ≤ ``limit``."""
    limit, rows = check_positive_int("limit", limit), []
    for p in nonempty("ps", ps):
        for m in nonempty("ms", ms):
            if check_modulus(p) ** check_length(m) > limit:
                continue
            row = {"p": p, "m": m, "inputs": p**m}
            row["thm41"] = exhaustive_accuracy(construct_fixed_length(m, p), m)["acc"]
            row["thm42_bias"] = exhaustive_accuracy(construct_with_bias(p), m)["acc"]
            f = p >= 3  # the bias-free network needs p ≥ 3
            row["fourier"] = exhaustive_accuracy(construct_fourier(p), m)["acc"] if f else None
            rows.append({**row, "fourier_theory": fourier_accuracy(p) if f else None})
    return rows


def _three_constructions(check, primes, seed: int, **kw) -> dict:
    """``check`` of Thm 4.1's family, Thm 4.2 with and without bias (seeds ``seed`` … + 2); on X_m
    Thm 4.1's network for m computes Thm 4.2's biased one (W x + π/2), so that stands for all m."""
    return {
        p: {
            "thm41": check(construct_with_bias(p), p, seed=seed, **kw),
            "thm42_bias": check(construct_with_bias(p), p, seed=seed + 1, **kw),
            "fourier": check(construct_fourier(p), p, seed=seed + 2, **kw),
        }
        for p in nonempty("primes", primes)
    }


def long_length_checks(
    primes=(97, 53), max_m=max(OOD_LENGTHS), n=paper.N_TEST, seed=paper.AUTOMATON_SEED
) -> dict:
    """Exact checks (phase automaton) of the three sine constructions at every m ≤ ``max_m``."""
    return _three_constructions(automaton_accuracy, primes, seed, max_m=max_m, n=n)


def float_network_checks(
    primes=(97, 53), max_m=max(OOD_LENGTHS), n=paper.N_TEST, lengths=None, seed=paper.FLOAT_SEED
) -> dict:
    """The same constructions evaluated directly as float64 networks ``V sin(W x + b)``."""
    return _three_constructions(accuracy_by_length, primes, seed, max_m=max_m, n=n, lengths=lengths)


def summarize_checks(checks_: dict) -> dict:
    """Per construction and prime: min/max/mean accuracy, errors outside tie residues, and the
    largest gap to 1 − (tie-residue share)."""
    out = {}
    for p, d in checks_.items():
        for name, r in d.items():
            acc, tie = np.array(r["acc"]), np.array(r["tie_residue_frac"])
            s = {"min_acc": float(acc.min()), "max_acc": float(acc.max())}
            s["max_abs_acc_minus_1_minus_tie_share"] = float(np.abs(acc - (1 - tie)).max())
            s["errors_outside_tie_residues"] = int(r["errors_outside_tie_residues"])
            s.update(lengths=len(acc), n_per_length=int(r["n"]), mean_acc=float(acc.mean()))
            out[f"{name}@{p}"] = s
    return out


@experiments_cell
def automaton_summary(primes, max_m: int, n: int, seed: int) -> dict:
    """Cell ``automaton``: :func:`summarize_checks` of :func:`long_length_checks`."""
    return summarize_checks(long_length_checks(primes=primes, max_m=max_m, n=n, seed=seed))


@experiments_cell
def float_summary(primes, max_m: int, n: int, seed: int, lengths=None) -> dict:
    """Cell ``float_n<n>``: :func:`summarize_checks` of :func:`float_network_checks`."""
    return summarize_checks(float_network_checks(primes, max_m, n, lengths, seed))


# --------------------------------------------------------------------------- claim 2: ReLU limits
def window_key(p: int, m: int) -> str:
    """The key of one (p, m) case of the window check: ``"p = 13, m = 9"``."""
    return f"p = {check_modulus(p)}, m = {check_length(m)}"


def fixed_length_exact_lengths(cases=paper.WINDOW_CASES, span: int = paper.WINDOW_SPAN) -> dict:
    """``ch4.thm41.window`` by brute force: per (p, m), :func:`exact_lengths` up to span·m."""
    span = check_positive_int("span", span)
    if any(not isinstance(c, (list, tuple)) or len(c) != 2 for c in nonempty("cases", cases)):
        raise ConfigError(f"each case must be a pair (p, m), got {cases!r}")
    return {
        window_key(p, m): exact_lengths(construct_fixed_length(m, p), p, span * m) for p, m in cases
    }


@experiments_cell
def relu_bounds_table(p: int = 97, lengths=OOD_LENGTHS) -> list[dict]:
    """Thm 4.3's bound, our path bound and the width of our explicit interpolant at each m."""
    return [
        {
            "m": m,
            "paper_bound": relu_width_lower_bound(m, p),
            "path_bound": path_lower_bound(m, p),
            "construction_width": 2 + len(relu_kinks(m, p)),
        }
        for m in nonempty("lengths", lengths)
    ]


def relu_construction_check(cases=((3, (6, 12, 24, 48)), (5, (4, 6)))) -> list[dict]:
    """Our ReLU interpolant on all of X_m, per ``(p, lengths)``: accuracy, width, path bound."""
    rows = []
    for p, lengths in nonempty("cases", cases):
        for m in nonempty("lengths", lengths):
            net, X = construct_relu(m, p), all_count_vectors(m, p)
            acc = float((net.predict(X.double(), 1e-9) == labels_of_counts(X, p)).double().mean())
            row = {"p": p, "m": m, "count_vectors": int(X.shape[0]), "acc": acc}
            rows.append({**row, "width": int(net.W.shape[0]), "path_bound": path_lower_bound(m, p)})
    return rows
