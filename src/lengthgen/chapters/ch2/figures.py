"""Chapter 2's figures (matplotlib, styled by :mod:`lengthgen.plotting`) and accuracy tables,
the paper's values (open squares, with their 95 % intervals) beside ours."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from lengthgen import plotting
from lengthgen.chapters.ch2 import claims as c2, measures, paper, volume as vo
from lengthgen.config import check_choice
from lengthgen.rounding import superscript
from lengthgen.stats import bootstrap_ci
from lengthgen.tables import styled

#: marker styles: the paper's values (open squares, shifted right of ours), ours (filled circles)
PAPER_STYLE = {"marker": "s", "mfc": "white", "ls": "none", "capsize": 2, "ms": 5}
OURS_STYLE = {"marker": "o", "ls": "-", "capsize": 2, "ms": 4}


def _legend_below(fig, ncol: int, handles=()):
    """The legend (``handles``, labels; default: all axes') below the axes; the finished figure."""
    fig.legend(*handles, loc="outside lower center", ncol=ncol, fontsize=9)
    return plotting.finish(fig)


def attention_panels(center: dict, dirs: dict, chi=0.0, ell=0.0, k: int = 40, n: int = 64):
    """Attention weights over positions for query ``k`` at length ``n``, A_pos (left) and A_norm
    (right), at the center moved by ``chi`` and ``ell`` along ``dirs[variant][coordinate]``."""
    fig, axes = plotting.figure(1, 2, width=3.4, height=2.6, sharey=True)
    for i, (ax, v) in enumerate(zip(axes, ("pos", "norm"))):
        d = dirs[v]
        p = {key: center[key] + chi * d["chi"][key] + ell * d["ell"][key] for key in center}
        _, alpha = vo.attention_profile(p, v, n, k)
        ax.plot(np.arange(1, n + 1), alpha, marker=".", ms=3, color=plotting.PALETTE[i])
        ax.axvline(k, ls="--", color="grey", lw=1)
        peak = f"A_{v}: peak at j = {int(alpha.argmax()) + 1}"
        ax.set_title(f"{peak}\nα_k = {alpha[k - 1]:.2f}", fontsize=10)
        ax.set(xlabel="position j", ylabel="attention weight α_j", ylim=(0, 1.05))
    return plotting.finish(fig)


# --------------------------------------------------------------------------- accuracy tables
def _row(runs: dict, task: str, model: str, N: int, cell, stat: str) -> dict:
    """One row of :func:`accuracy_table`: the paper's ``cell = (mean, lo, hi)`` and ours."""
    name = measures.run_of(task, model, N)
    m, lo, hi = measures.seed_summary(runs[name][0], model, N, ood=stat == "ood")
    row = {"N": N, "task": task, "model": f"A_{model}"}
    row |= {"paper": cell[0], "paper lo": cell[1], "paper hi": cell[2]}
    return row | {"ours": m, "ours lo": lo, "ours hi": hi, "run": name}


def accuracy_table(runs: dict, table: str):
    """Paper against ours, one row per cell of ``table`` ("table1", "table2", "table3"): the
    paper's mean (and 95 % interval), our 20-seed mean with its 95 % interval, the stored run."""
    T1, T2, T3 = paper.PAPER_T1, paper.PAPER_T2, paper.PAPER_T3
    cells = {  # (task, model, N, the paper's (mean, lo, hi), statistic)
        "table1": [(t, m, 51, (pv, math.nan, math.nan), "longest") for (t, m), pv in T1.items()],
        "table2": [(t, m, N, c[N], "longest") for N in paper.NS for (t, m), c in T2.items()],
        "table3": [("majority", m, N, c, "ood") for m in T3 for N, c in sorted(T3[m].items())],
    }[check_choice("table", table, ("table1", "table2", "table3"))]
    return pd.DataFrame([_row(runs, *cell) for cell in cells])


def styled_accuracy_table(df, caption: str | None = None):
    """:func:`accuracy_table` as a formatted table: "mean (lo–hi)" for the paper and for us, and
    the rule each comparison uses (Table 1: rules 3 and 8; Tables 2–3: rule 1)."""
    rows = df.to_dict("records")
    trio = lambda r, who: (r[who], r[f"{who} lo"], r[f"{who} hi"])
    text = lambda m, lo, hi: f"{m:g}" if math.isnan(lo) else f"{m:.1f} ({lo:.1f}–{hi:.1f})"
    yes = lambda ok: "yes" if ok else "no"
    out = df[["N", "task", "model"]].copy()
    for col, who in (("paper", "paper"), ("ours (20 seeds)", "ours")):
        out[col] = [text(*trio(r, who)) for r in rows]
    T = paper.T1_TOLERANCE
    if df["paper lo"].isna().all():
        out[f"within ± {T:g} points"] = [yes(abs(r["ours"] - r["paper"]) <= T) for r in rows]
        chance = {(t, f"A_{m}") for t, m in c2.CHANCE_CELLS}
        out["side of 50 %: paper (chance rule) / ours"] = [
            f"{paper.paper_chance_side(r['paper'])} / "
            f"{paper.chance_side(r['ours lo'], r['ours hi'])}"
            if (r["task"], r["model"]) in chance
            else "—"
            for r in rows
        ]
    else:
        ours = lambda r: dict(zip(("mean", "lo", "hi"), trio(r, "ours")))
        agree = [paper.two_sample_agree(ours(r), trio(r, "paper")) for r in rows]
        out["agrees (two-sample rule)"] = [yes(ok) for ok in agree]
    out["stored run"] = df["run"]
    return styled(out, caption=caption)


# --------------------------------------------------------------------------- accuracy figures
def _errorbar(ax, x, m, lo, hi, **kw):
    m, lo, hi = (np.asarray(a, dtype=float) for a in (m, lo, hi))
    return ax.errorbar(x, m, yerr=[m - lo, hi - m], **kw)


def _paper_ours(ax, df, model: str, color, *, shift: float = 1.0):
    """Ours (filled) and the paper's (open squares, shifted by ``shift``) against N."""
    d = df[df["model"] == f"A_{model}"]
    for who, x, style in (("ours", d["N"], OURS_STYLE), ("paper", d["N"] + shift, PAPER_STYLE)):
        kw = dict(color=color, label=f"A_{model}: {who}", **style)
        _errorbar(ax, x, d[who], d[f"{who} lo"], d[f"{who} hi"], **kw)


def _against_N(ax, ylim, **kw):
    """The axes of an accuracy against the training lengths N of the paper's tables."""
    ax.set(xlabel="training length N (tokens)", xticks=list(paper.NS), ylim=ylim, **kw)


def index_table2_figure(t2):
    """Table 2's Index rows (A_pos, A_norm): accuracy at 10N+1 against N, ours and the paper's."""
    fig, ax = plotting.figure(width=6.4, height=3.8)
    d = t2[t2["task"] == "index"]
    _paper_ours(ax, d, "pos", plotting.PALETTE[0])
    _paper_ours(ax, d, "norm", plotting.PALETTE[3])
    ax.axhline(50, color="grey", lw=0.8)
    _against_N(ax, (40, 100), ylabel="Index accuracy at L = 10N+1 (%)")
    return _legend_below(fig, 2)


def majority_figure(t2, t3):
    """Majority: Table 2's A_gen accuracy at L = 10N+1 (left) and Table 3's mean OOD accuracy of
    A_gen and A_sin (right) against N, ours and the paper's."""
    fig, axes = plotting.figure(1, 2, width=3.4, height=3.0, sharey=True)
    _paper_ours(axes[0], t2[t2["task"] == "majority"], "gen", plotting.PALETTE[0])
    _paper_ours(axes[1], t3, "gen", plotting.PALETTE[0])
    _paper_ours(axes[1], t3, "sin", plotting.PALETTE[2], shift=2.0)
    for ax, title in zip(axes, ("L = 10N+1 (Table 2)", "mean over L > N (Table 3)")):
        _against_N(ax, (70, 100), ylabel="accuracy (%)", title=title)
        ax.title.set_fontsize(10)
    return _legend_below(fig, 4, axes[1].get_legend_handles_labels())


def curves_figure(runs: dict, N: int = 51):
    """Index accuracy against test length at N (mean and 95 % band over seeds) with the paper's
    Table 2 value at L = 10N+1; the misread-map ablation dashed where it is stored."""
    fig, ax = plotting.figure(width=6.4, height=3.6)
    curves = [
        ("pos", "index_posnorm", "A_pos", "-", 0),
        ("norm", "index_posnorm", "A_norm", "-", 3),
        ("norm", "index_norm_misread", "A_norm, misread map (ablation)", "--", 4),
    ]
    for v, name, lab, ls, ci in curves:
        if name in runs:
            Ls, A = measures.accuracy_curve(runs[name][0], v, N)
            band = np.array([bootstrap_ci(A[:, j], seed=0) for j in range(len(Ls))])
            kw = dict(color=plotting.PALETTE[ci], label=f"{lab}: ours")
            ax.plot(Ls, band[:, 0], marker="o", ms=4, ls=ls, **kw)
            ax.fill_between(Ls, band[:, 1], band[:, 2], alpha=0.2, color=kw["color"])
    for model, ci in (("pos", 0), ("norm", 3)):
        pv, plo, phi = paper.PAPER_T2[("index", model)][N]
        kw = dict(color=plotting.PALETTE[ci], label=f"A_{model}: paper (Table 2)", **PAPER_STYLE)
        _errorbar(ax, [(10 * N + 1) * 1.06], [pv], [plo], [phi], **kw)
    ax.axhline(50, color="grey", lw=0.8)
    ax.set(xlabel="test length L (tokens)", ylabel="Index accuracy (%)", xscale="log")
    ax.set(ylim=(40, 102))
    Ls = list(paper.test_lengths(N))
    ax.set_xticks(Ls, [str(L) for L in Ls])
    ax.minorticks_off()
    ax.legend(fontsize=9, loc="lower left", ncol=2)
    return plotting.finish(fig)


# --------------------------------------------------------------------------- volume figures
def _guide(ax, ns, ys, slope, color):
    """A dashed line of the paper's slope through the first point (no legend entry)."""
    ns = np.asarray(ns, dtype=float)
    ax.plot(ns, ys[0] * (ns / ns[0]) ** slope, ls="--", lw=1, color=color, label="_nolegend_")


def _rate_label(s) -> str:
    """The paper's rate as a power of n ("no paper claim" where the paper makes none)."""
    return "no paper claim" if s is None else f"paper n{superscript(int(s))}"


def windows_figure(widths: dict):
    """Exact-window widths (:func:`.measures.window_measure`) against n, A_pos (left) and A_norm
    (right), the paper's slope dashed through each first point."""
    fig, axes = plotting.figure(1, 2, width=3.4, height=3.9, sharey=True)
    names = {"pos": {"chi": r"$\chi$", "ell": r"$\ell$"}}
    names["norm"] = {"chi": r"$\hat\chi$ at fixed $\ell$", "ell": r"$\hat\ell$ (via $r_1$)"}
    names["norm"]["chi_fixed_ell_hat"] = r"$\hat\chi$ at fixed $\hat\ell$"
    for i, (key, r) in enumerate(widths.items()):
        v, t, c = key.split("/")
        ax = axes[0] if v == "pos" else axes[1]
        theory, w = paper.PAPER_WINDOW_SLOPES[(v, t, c)], measures.window_measure(r)
        col = plotting.PALETTE[i % len(plotting.PALETTE)]
        label = f"{v}/{t}: {names[v][c]} ({_rate_label(theory)})"
        ax.loglog(r["n"], w, marker="o", ms=4, color=col, label=label)
        if theory is not None:
            _guide(ax, r["n"], w, theory, col)
    for ax, title in zip(axes, ("A_pos", "A_norm")):
        ax.set_title(title, fontsize=10)
        ax.set(xlabel="input length n (tokens)", ylabel="exact-window width")
    return _legend_below(fig, 2)


def mc_figure(mc: dict, min_exact: int = 10):
    """Monte Carlo exact fractions against n (≥ ``min_exact`` exact points) with 95 % intervals,
    the paper's exponent dashed through the first point."""
    fig, ax = plotting.figure(width=5.0, height=3.3)
    for i, (key, rows) in enumerate(mc.items()):
        rows = [r for r in rows if r["exact"] >= min_exact]
        ns, fr, lo, hi = ([r[f] for r in rows] for f in ("n", "fraction", "lo", "hi"))
        col, theory = plotting.PALETTE[i], paper.PAPER_MC_EXPONENTS[key]
        kw = dict(marker="o", ms=4, capsize=2, color=col, label=f"{key} ({_rate_label(theory)})")
        _errorbar(ax, ns, fr, lo, hi, **kw)
        _guide(ax, ns, fr, theory, col)
    ax.set(xscale="log", yscale="log", xlabel="input length n (tokens)")
    ax.set(ylabel="exact fraction of the box")
    ax.legend(fontsize=9)
    return plotting.finish(fig)


def coefficient_figure(ca: dict):
    """D.4: mean OOD accuracy of each selected A_pos checkpoint against N²|χ| (left) and N|ℓ|
    (right), coloured by N; titles give our rank correlation and the paper's."""
    fig, axes = plotting.figure(1, 2, width=3.4, height=3.0, sharey=True)
    Ns = np.array(ca["N"])
    for ax, key, lab in zip(axes, ("chi", "ell"), ("N²|χ|", "N|ℓ|")):
        for i, N in enumerate(sorted(set(ca["N"]))):
            sel = Ns == N
            x, y = np.array(ca[key]["values"])[sel], np.array(ca["acc"])[sel]
            ax.scatter(x, y, s=12, label=f"N = {N}", color=plotting.PALETTE[i])
        ax.set(xscale="log", xlabel=f"{lab} of the checkpoint", ylabel="mean OOD accuracy (%)")
        rho = f"ρ = {ca[key]['rho']:+.2f} (paper {paper.PAPER_COEF_RHO[key]:+.2f})"
        ax.set_title(rho, fontsize=10)
    return _legend_below(fig, 5, axes[0].get_legend_handles_labels())
