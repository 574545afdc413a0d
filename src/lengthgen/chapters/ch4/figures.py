"""Chapter 4's page helpers: :func:`paper_level` (a paper's word as a reference line), the frame
explorer (:func:`explorer_frame`), the pages' tables and the paper-scale run's figure."""

from __future__ import annotations

import numpy as np
import torch

from lengthgen import plotting
from lengthgen.chapters.ch4 import constructions as C
from lengthgen.chapters.ch4 import paper
from lengthgen.chapters.ch4.checks import accuracy_by_length, automaton_accuracy
from lengthgen.chapters.ch4.measures import WORD_BAND, best_over_wd
from lengthgen.chapters.ch4.experiments import paper_scale_rows, variant_name
from lengthgen.chapters.ch4.data import Network
from lengthgen.config import ConfigError, check_positive_int


# --------------------------------------------------------------------------- the paper's levels
def paper_level(ax, y: float, label: str, *, band: bool = True, color: str = "k", ls: str = "--"):
    """The level a sentence of the paper names, a line at ``y`` labelled ``label`` ("paper: …"),
    with the ±WORD_BAND band the claims are read with when ``band``."""
    ax.axhline(y, color=color, lw=1.0, ls=ls, label=label, zorder=1)
    if band:
        ax.axhspan(y - WORD_BAND, min(y + WORD_BAND, 1.0), color=color, alpha=0.08, lw=0, zorder=0)


# --------------------------------------------------------------------------- the explorer
#: the networks of the explorer; the trained ones are examples kept in the stored full run (p = 17)
TRAINED = {
    "trained sine (2k updates)": ("lengthgen", 0),
    "trained sine+bias (60k updates)": ("lengthgen_paper_lr_60k", None),
}
#: the three sine constructions, by their key in :func:`~.checks.summarize_checks`
NETWORK_NAMES = dict(
    thm41="Thm 4.1 (fixed m)", thm42_bias="Thm 4.2 (bias)", fourier="Thm 4.2 (no bias)"
)
EXPLORER_KINDS = (*NETWORK_NAMES.values(), "ReLU interpolant", *TRAINED)
#: lengths of the explorer's accuracy panel: every length to 40, then the paper's long test lengths
EXPLORER_LENGTHS = tuple(range(1, 41)) + (53, 97, 201, 303, 401, 512, 602, 705, 811)
_EXAMPLE = ("example_W", "example_V", "example_b")  # a trained example's weights (b: None)


def explorer_network(kind: str, p: int, m: int, stored: dict | None = None) -> Network:
    """The network ``kind`` at modulus ``p`` (built for length ``m`` where that matters); trained
    ones are examples kept in ``stored`` (``experiments.stored_training()["data"]``)."""
    built = {
        "Thm 4.1 (fixed m)": lambda: C.construct_fixed_length(m, p),
        "Thm 4.2 (bias)": lambda: C.construct_with_bias(p),
        "Thm 4.2 (no bias)": lambda: C.construct_fourier(p),
        "ReLU interpolant": lambda: C.construct_relu(m, p),
    }
    if kind in built:
        return built[kind]()
    if kind not in TRAINED:
        raise ConfigError(f"unknown explorer network {kind!r}; choose from {EXPLORER_KINDS}")
    if not stored:
        raise ConfigError("trained networks need the stored training cells")
    key, i = TRAINED[kind]
    ex = stored[key] if i is None else stored[key][i]
    W, V, b = (ex[k] and torch.tensor(ex[k], dtype=torch.float64) for k in _EXAMPLE)
    n, wd, _ = ex["example_member"]
    return Network(W, V, "sine", b, f"{kind}: n = {n:,}, wd = {wd}")


def _draw_phases(ax, net: Network) -> None:
    """The first-layer phases of the six neurons the readout uses most (a sine network)."""
    ph, t = C.phases(net.W).numpy(), np.linspace(0, 2 * np.pi, 200)
    ax.plot(np.cos(t), np.sin(t), color="0.8", lw=0.8)
    top = net.V.norm(dim=0).argsort(descending=True)[:6].tolist()
    for i, j in enumerate(top):
        c = plotting.PALETTE[i % len(plotting.PALETTE)]
        ax.scatter(np.cos(ph[j]), np.sin(ph[j]), s=12, color=c, label=f"neuron {j}")
        ax.scatter(np.cos(ph[j, 1]), np.sin(ph[j, 1]), s=40, facecolor="none", edgecolor=c)
    lim = (-1.3, 1.3)
    ax.set(xlabel="cos W_jv", ylabel="sin W_jv", aspect="equal", xlim=lim, ylim=lim)
    ax.set_title("token phases (○: v = 1)")
    ax.legend(fontsize=9, loc="center", frameon=False)


def _draw_path(ax, net: Network, m: int, p: int) -> None:
    """The scores along the counting path x(t) of length ``m``, with its kinks (a ReLU network)."""
    s = net.scores(C.path_inputs(m, p)).numpy()
    for lab in range(min(p, 4)):
        ax.plot(np.arange(m + 1), s[:, lab], lw=1, label=f"score of label {lab}")
    for k in C.path_kinks(net, m):
        ax.axvline(k, color="k", lw=0.4, ls=":")
    ax.set(xlabel="t (ones on the path x(t))", ylabel="score (logit units)")
    ax.set_title("scores along the path")
    ax.legend(fontsize=9)


def _draw_accuracy(ax, net: Network, kind: str, m: int, p: int, n: int) -> None:
    """Accuracy by length on ``n`` inputs per length (exact phases for the constructions), ``m``
    marked with the accuracy there, and the training lengths or our window."""
    lens = np.array(sorted(set(EXPLORER_LENGTHS) | {m}))
    if net.rational is not None:
        acc = np.asarray(automaton_accuracy(net, p, int(lens.max()), n=n)["acc"])[lens - 1]
    else:
        acc = np.asarray(accuracy_by_length(net, p, int(lens.max()), n=n, lengths=lens)["acc"])
    ax.plot(lens, acc, marker=".", ms=3, label="ours")
    at = "built for and read at" if kind in ("Thm 4.1 (fixed m)", "ReLU interpolant") else "at"
    ax.axvline(m, color="k", lw=0.8, ls=":")
    hit = acc[lens == m][0]
    ring = {"s": 70, "facecolor": "none", "edgecolor": plotting.PALETTE[3], "lw": 1.6, "zorder": 4}
    ax.scatter([m], [hit], **ring, label=f"{at} m = {m}: {hit:.2f}")
    marks = []  # lengths marked at the top: the training lengths, or our window
    if kind in TRAINED:
        marks = [(paper.TRAIN_LENGTHS, "v", 4, "training lengths")]
    if kind == "Thm 4.1 (fixed m)" and p % 2:
        marks = [(C.fixed_length_window(m, p, int(lens.max())), "|", 6, "our window")]
    for xs, marker, ms, label in marks:
        ax.plot(xs, [1.04] * len(xs), marker, ms=ms, color="0.3", label=label)
    ax.axhline(1 / p, color="0.4", lw=0.8, ls="--", label="chance 1/p")
    ax.set(xscale="log", xlabel="input length m (tokens)", ylabel="accuracy", ylim=(-0.02, 1.08))
    ax.set_title(kind, fontsize=10)
    ax.legend(fontsize=9, loc="lower left")


def explorer_frame(kind: str, m: int, p: int = 17, stored: dict | None = None, n: int = 200):
    """The explorer's frame for network ``kind`` at length ``m``: left, its phases (sine) or scores
    along the counting path (ReLU); right, accuracy by length on ``n`` inputs per length."""
    m = check_positive_int("m", m)
    net = explorer_network(kind, p, m, stored)
    if net.p != p:
        raise ConfigError(f"{kind} has p = {net.p}, not {p}")
    fig, (ax0, ax1) = plotting.figure(1, 2, width=3.3, height=3.2)
    if net.activation == "sine":
        _draw_phases(ax0, net)
    else:
        _draw_path(ax0, net, m, p)
    _draw_accuracy(ax1, net, kind, m, p, n)
    return plotting.finish(fig)


# --------------------------------------------------------------------------- tables of the pages
#: the integer columns of :func:`check_frame`, formatted for :func:`lengthgen.tables.styled`
INT_FORMATS = dict.fromkeys(
    ("lengths", "inputs per length", "errors outside tie residues"), "{:,.0f}"
)


def check_frame(summary: dict, cols: dict):
    """A summarize_checks summary as a DataFrame: a row per (network, p); ``cols``: key → header."""
    import pandas as pd

    df = pd.DataFrame(summary).T[list(cols)].astype(float).rename(columns=cols)
    keys = [k.split("@") for k in df.index]
    df.insert(0, "network", [NETWORK_NAMES[a] for a, _ in keys])
    df.insert(1, "p", [int(b) for _, b in keys])
    return df.reset_index(drop=True)


def lengthgen_table(results):
    """Length-generalization cells as a DataFrame: per (variant, n) and length, the best over
    weight decay of the seed-mean accuracy."""
    import pandas as pd

    df = pd.DataFrame([r for res in results for r in res["rows"]])
    df["variant"] = df["activation"] + np.where(df["bias"], "+bias", "")
    cols = [c for c in df.columns if c.isdigit() or c == "train"]
    best = df.groupby(["variant", "n", "wd"])[cols].mean().groupby(["variant", "n"]).max()
    return best[["train"] + sorted([c for c in cols if c != "train"], key=int)]


def lengthgen_shown(results, summary: str):
    """:func:`lengthgen_table` as a collapsible table headed ``summary``."""
    from lengthgen.tables import collapsible, styled

    return collapsible(styled(lengthgen_table(results), digits=2), summary)


# -------------------------------------------------------------------------- the paper-scale GPU run
def paper_scale_table(value: dict, lengths=(3, 13, 14, 53, 201, 811)):
    """Section "At the paper's modulus": per (variant, n, weight decay) of the paper-scale cell, the
    seed-mean train and held-out accuracy at ``lengths`` at the last evaluation (a DataFrame)."""
    import pandas as pd

    rows = {}
    for r in paper_scale_rows(value):
        row = [r["train"]] + [r[str(L)] for L in lengths]
        rows.setdefault((variant_name(r), r["n"], r["wd"]), []).append(row)
    cols = ["train"] + [f"m = {L}" for L in lengths]
    df = pd.DataFrame({k: np.mean(v, axis=0) for k, v in rows.items()}, index=cols).T
    df.index.names = ["variant", "n", "weight decay"]
    return df


def paper_scale_figure(value: dict, n: int = 8000, track: int = 811):
    """Section "At the paper's modulus": left, accuracy at length ``track`` against updates, each
    member of budget ``n``; right, the last evaluation by length, best over weight decay."""
    if not value.get("members") or not value.get("history"):
        raise ConfigError("paper_scale_figure needs the value of the stored paper-scale cell")
    p = paper.PAPER_RUN["p"]
    variants = list(dict.fromkeys(variant_name(m) for m in value["members"]))
    colour = {v: plotting.PALETTE[i] for i, v in enumerate(variants)}
    wds = sorted({m["wd"] for m in value["members"]}, reverse=True)
    style, steps = dict(zip(wds, ["-", "--", ":", "-."])), [h["step"] for h in value["history"]]
    fig, (ax0, ax1) = plotting.figure(1, 2, width=3.4, height=4.6, sharey=True)
    for ax in (ax0, ax1):
        paper_level(ax, 1.0, "paper: near-perfect (sine)")
        paper_level(ax, 1 / p, f"paper: ReLU at chance (1/{p})", color="0.45")
    for i, m in enumerate(value["members"]):
        if m["n"] == n:
            acc, c = [h["acc"][str(track)][i] for h in value["history"]], colour[variant_name(m)]
            ax0.plot(steps, acc, color=c, ls=style[m["wd"]], lw=1.1, alpha=0.85)
    for v in variants:
        ax0.plot([], [], color=colour[v], label=v)
    for wd in wds:
        ax0.plot([], [], color="0.3", ls=style[wd], label=f"wd {wd:g}")
    lengths, rows = sorted(int(L) for L in value["final"]["acc"]), paper_scale_rows(value)
    for v in variants:
        mine = [r for r in rows if variant_name(r) == v]
        for budget, ls in zip(sorted({r["n"] for r in mine}, reverse=True), ("-", ":")):
            best, label = best_over_wd(mine, budget, lengths), f"{v}, n = {budget:,}"
            kw = dict(color=colour[v], label=label, marker="o", ms=2.5, ls=ls)
            ax1.plot(lengths, [best[L] for L in lengths], **kw)
    ax0.set(xlabel="optimizer updates", ylabel=f"accuracy at m = {track}", ylim=(-0.02, 1.06))
    ax1.axvspan(2, 19, color="0.9", lw=0)
    ax1.set(xscale="log", xlabel="test length m (tokens)", ylabel="final (best over wd)")
    # one entry per label, in first-seen order (the paper's levels are drawn alike on both axes)
    handles = {lab: h for ax in (ax0, ax1) for h, lab in zip(*ax.get_legend_handles_labels())}
    fig.legend(handles.values(), handles, loc="outside lower center", ncol=2, fontsize=9)
    return fig
