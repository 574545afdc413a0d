"""Chapter 3's tables (DataFrames) and figures, from what the chapter computes; none is a claim."""

from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib.lines import Line2D
from matplotlib.patches import Rectangle

from lengthgen import plotting
from lengthgen.chapters.ch3 import paper
from lengthgen.chapters.ch3.realizability import L0_DEFAULT, MAIN_TASKS, SELECTION_RULES, alpha
from lengthgen.chapters.ch3.realizability import fit_min_norm, select, simulate, transfer
from lengthgen.config import check_choice
from lengthgen.nn.decoder import TIERS
from lengthgen.nn.positional import ENCODINGS, KernelFamily
from lengthgen.store import refresh_difference
from lengthgen.chapters.ch3.measures import cell_rows
from lengthgen.chapters.ch3.experiments import FIXED_OFFSET_TASKS, study_plan


def lr_matches(data: dict):
    """Per lr of an ``lr_grid`` result: the paper's α matched (rule 2), per source, on the edge."""
    rows = []
    for lr in data["lrs"]:
        pts = [p for p in data["points"] if p["lr"] == lr]
        gap = [abs(p["alpha"] - p["paper"]) - 0.5 * 10.0 ** (-p["decimals"]) for p in pts]
        hit = [g <= 1e-12 for g in gap]
        row = {"lr": lr}
        for src in dict.fromkeys(p["source"] for p in pts):
            sub = [h for p, h in zip(pts, hit) if p["source"] == src]
            row[f"{src} ({len(sub)})"] = sum(sub)
        row[f"matched (of {len(pts)})"] = sum(hit)
        row["on the edge"] = sum(abs(g) <= 1e-12 for g in gap)
        row["largest difference"] = max(abs(p["alpha"] - p["paper"]) for p in pts)
        rows.append(row)
    return pd.DataFrame(rows).set_index("lr")


def lr_points(data: dict):
    """The paper's α values (rows) against ours at each lr (columns), from an ``lr_grid`` result."""
    nf = lambda p: "" if p["num_freq"] == 16 else f", {p['num_freq']} freq."
    name = lambda p: f"{p['source']}: {p['encoding']}/{p['task']} @ {p['L']}{nf(p)}"
    tab = {}
    for p in data["points"]:
        tab.setdefault(name(p), {"paper": p["paper"]})[f"lr {p['lr']:g}"] = p["alpha"]
    return pd.DataFrame(tab).T


def lr_fixed_offsets(data: dict):
    """Per lr: the minimum α_L of each RoPE fixed-offset task and whether all four are 1."""
    low = lambda lr, t: min(f["alpha"] for f in data["fixed"] if f["lr"] == lr and f["task"] == t)
    df = pd.DataFrame([{t: low(lr, t) for t in FIXED_OFFSET_TASKS} for lr in data["lrs"]])
    df.index = pd.Index(data["lrs"], name="lr")
    df["α = 1 up to 512"] = (df == 1.0).all(axis=1)
    return df


def min_norm_rules_frame(tabs: dict, exact: dict, lengths=(30, 60, 512)):
    """The min-norm α under torch's cutoff (``tabs``) and exact (``exact``), side by side."""
    rows = {
        k: {("torch cutoff", f"L = {L}"): tabs["min_norm"][k][L] for L in lengths}
        | {("exact", f"L = {L}"): row[L] for L in lengths}
        for k, row in exact["alpha"].items()
    }
    return pd.DataFrame(rows).T


def study_label(groups: dict) -> str:
    """One line on the stored groups: how many, devices, torch versions, dates, re-runs."""
    if not groups:
        return "no stored full-scale study"
    provs = [rec["provenance"] for rec in groups.values()]
    dates = sorted(p.get("date", "")[:10] for p in provs)
    seen = lambda k: ", ".join(sorted({str(p.get(k)) for p in provs}))
    migrated = sum(1 for p in provs if "migrated" in p)
    refreshed = [p for p in provs if isinstance(p.get("refreshed"), dict)]
    diffs = [d for d in map(refresh_difference, refreshed) if d is not None]
    text = f"stored full run: {len(groups)} of {len(study_plan('full'))} planned groups "
    text += f"({seen('device')}, torch {seen('torch_version')}, {dates[0]} to {dates[-1]}"
    if migrated:
        text += f", {migrated} migrated from the pre-cells store"
    if refreshed and diffs:
        text += f"; {len(refreshed)} re-run to record their CPU time, differing from the values "
        text += f"they replaced by at most {max(diffs):.2g}"
    return text + ")"


def alpha_frame(tabs: dict, rule: str = "ce"):
    """α_L table of one selection rule as a DataFrame (rows ``encoding/task``, columns L)."""
    check_choice("selection rule", rule, SELECTION_RULES)
    df = pd.DataFrame({k: {int(L): v for L, v in vals.items()} for k, vals in tabs[rule].items()}).T
    df.index.name = "encoding/task"
    return df


def min_norm_cutoff(
    cells=(("rope", "prev"), ("rope", "skip2"), ("rope", "first"), ("sinusoidal", "first")),
    rtols=(None, 1e-12, 1e-10, 1e-8),
    lengths=(30, 60, 128, 512),
):
    """α_L of the min-norm rule against the pseudo-inverse cutoff (the numerical rank of Φ_L0)."""
    rows = []
    for e, t in cells:
        fam = KernelFamily(e)
        for rt in rtols:
            W = fit_min_norm(fam, t, rtol=rt)
            row = {"cell": f"{e}/{t}", "rtol": "default" if rt is None else rt}
            rows.append(row | {int(L): simulate(W, fam, t, L).alpha for L in lengths})
    return pd.DataFrame(rows).set_index(["cell", "rtol"])


def lr_sensitivity(
    cells=(("rope", "first"), ("sinusoidal", "prev"), ("sinusoidal", "skip3")),
    lrs=(0.01, 0.02, 0.05, 0.1, 0.2),
    lengths=(30, 40, 60, 128, 256, 512),
):
    """α_L of the CE selection rule as a function of its (unstated) Adam learning rate."""
    rows = [
        {"cell": f"{e}/{t}", "lr": lr} | {int(L): alpha(e, t, L, lr=lr) for L in lengths}
        for e, t in cells
        for lr in lrs
    ]
    return pd.DataFrame(rows).set_index(["cell", "lr"])


def theory_table(th: dict, copy_2c: dict | None = None):
    """Theorem 2's checks (a :func:`~.experiments.theory_checks` result): check, ours, paper."""
    vals = lambda d, fmt="{:.3f}": ", ".join(f"{k}: {fmt.format(v)}" for k, v in d.items())
    ce, rnd, fixed = th["thm2_counterexample"], th["thm2_random"], th["thm2_fixed_offset"]
    grow, two, rev = th["thm2_growing"], th["thm2_two_lengths"], th["thm2_reverse_sweep"]
    # fmt: off
    rows = [
        ("counterexample κ = (1.46, 1.96, 1.80, 6.32)",
         f"row 2 takes offset {ce['row2_offset']}, deep rows {ce['deep_offsets']}",
         "offset 1, deep rows 3"),
        ("deep-row lemma, random kernels",
         f"{sum(rnd['violations'].values())} violations in {rnd['deep_rows_checked']:,} deep rows "
         f"({rnd['kernels']:,} kernels)", "none"),
        ("fixed offsets (kernel peaked at k), min α_L over L ≤ 5000",
         f"{min(min(v.values()) for v in fixed.values()):.3f} ({', '.join(fixed)})", "1"),
        ("growing offsets, peak c, L = 2c + 200: max α_L",
         f"copy {max(grow['copy'].values()):.3f}, reverse {max(grow['reverse'].values()):.3f}",
         "→ 0"),
        ("clipped rows (peak 30, offset 1): α_L at L",
         vals(th["thm2_clipped"], "{:.4f}"), vals(paper.THM2_CLIPPED_ALPHA, "{:.4f}")),
        ("offset 2 on perfect squares: α_L at L",
         vals(th["thm2_squares"]), vals(paper.THM2_SQUARES_ALPHA)),
        ("parity offsets δ ∈ {1, 2}: α_L per peak",
         vals(th["thm2_parity"], "{:.2f}"), f"{paper.THM2_PARITY_ALPHA:.2f}"),
        ("unbounded ladder, copy: min α_L over L = 40 … 40960",
         f"{min(th['thm2_ladder'].values()):.3f}", f"{paper.THM2_LADDER['alpha']:.3f}"),
        ("κ[10] = 5, κ[30] = 8: copy at L0 = 20 and at L = 60",
         f"{'solved' if two['copy_L0'] else 'not solved'}; α_60 = {two['copy_60']:.3f}",
         "solved; 1"),
        ("reverse at L0 = 20: kernels that solve it", f"{rev['solved']} of {rev['kernels']:,}",
         f"{paper.REVERSE_SWEEP['solved']} of {paper.REVERSE_SWEEP['kernels']:,}"),
    ]
    if copy_2c:
        rows.append(("peak c ∈ {15, 30, 100}: min α_L on copy at L = 2c − 1, 2c",
                     f"{min(copy_2c.values()):.3f}", f"{paper.PEAK_COPY_ALPHA:.3f}"))
    # fmt: on
    return pd.DataFrame(rows, columns=["check", "ours", "paper"])


def _box(ax, x: int, y: int) -> None:
    """Outline the heat-map cell at column ``x``, row ``y``."""
    ax.add_patch(Rectangle((x - 0.5, y - 0.5), 1, 1, fill=False, ec=plotting.PALETTE[5], lw=2))


def _heat(ax, M, text=lambda v: f"{v:.2f}", *, fontsize=9, xticks, yticks, skip=()):
    """Draw ``M`` as a [0, 1] heat-map, each finite cell not in ``skip`` labelled ``text(v)``."""
    im = ax.imshow(M, vmin=0, vmax=1, cmap="magma", aspect="auto")
    for (r, c), v in np.ndenumerate(M):
        if np.isfinite(v) and (r, c) not in skip:
            kw = dict(ha="center", va="center", color="w" if v < 0.6 else "k")
            ax.text(c, r, text(v), fontsize=fontsize, **kw)
    ax.set(xticks=range(len(xticks)), xticklabels=xticks)
    ax.set(yticks=range(len(yticks)), yticklabels=yticks)
    ax.grid(False)
    return im


def plot_alpha_tables(tabs: dict, marked=()):
    """Both rules' α_L tables as heat-maps (CE left); ``marked`` ``(row, L)`` cells boxed."""
    frames = [alpha_frame(tabs, r) for r in SELECTION_RULES]
    rows, Ls = list(frames[0].index), list(frames[0].columns)
    fig, axes = plotting.figure(1, 2, width=3.4, height=0.19 * len(rows) + 1.2, sharey=True)
    short = lambda v: "1" if v == 1 else ("0" if v == 0 else f"{v:.2f}".lstrip("0"))
    for ax, df, rule in zip(axes, frames, SELECTION_RULES):
        _heat(ax, df.to_numpy(dtype=float), short, xticks=Ls, yticks=rows)
        for r in range(len(ENCODINGS) - 1):
            ax.axhline((r + 1) * len(rows) / len(ENCODINGS) - 0.5, color="w", lw=1.5)
        for name, L in marked if rule == "ce" else ():
            if name in rows and L in Ls:
                _box(ax, Ls.index(L), rows.index(name))
        title = "cross-entropy fit" if rule == "ce" else "min-norm interpolant"
        ax.set(xlabel="test length L", ylabel="encoding/task", title=title)
        ax.tick_params(axis="x", rotation=90, labelsize=9)
        ax.tick_params(axis="y", labelsize=9)
        ax.xaxis.set_ticks_position("top")
        ax.xaxis.set_label_position("top")
    axes[1].yaxis.label.set_visible(False)
    return plotting.finish(fig)


def plot_lr_sensitivity(sens, paper_alpha: dict | None = None):
    """α_L against L per lr of the CE fit, a panel per cell; ``paper_alpha`` adds the paper's."""
    cells = list(dict.fromkeys(sens.index.get_level_values("cell")))
    fig, axes = plotting.figure(1, len(cells), width=6.8 / len(cells), height=2.9, sharey=True)
    for ax, cell in zip(np.atleast_1d(axes), cells):
        sub = sens.loc[cell]
        Ls = [int(L) for L in sub.columns]
        for j, (lr, row) in enumerate(sub.iterrows()):
            label = f"lr {lr:g}" + (" (ours)" if lr == paper.CE_FIT["lr"] else "")
            col = plotting.PALETTE[j % 5]
            ax.plot(Ls, row.to_numpy(), "o-", ms=3, lw=1.3, color=col, label=label)
        if pv := (paper_alpha or {}).get(cell):
            ax.plot(list(pv), list(pv.values()), "kx", ms=8, mew=2, label="paper")
        ax.set(xscale="log", xlabel="test length L", ylabel="α_L", title=cell, ylim=(-0.03, 1.03))
        ax.set_xticks([30, 60, 128, 512], labels=["30", "60", "128", "512"])
        ax.minorticks_off()
    legend = {}  # one entry per label over the panels
    for ax in np.atleast_1d(axes):
        for h, label in zip(*ax.get_legend_handles_labels()):
            legend.setdefault(label, h)
    kw = dict(loc="outside lower center", ncol=len(legend), fontsize=9)
    fig.legend(list(legend.values()), list(legend), handlelength=1.2, columnspacing=0.8, **kw)
    return plotting.finish(fig)


def show_transfer(encoding="rope", task="first", L=60, rule="ce", L0=L0_DEFAULT):
    """Figure: the selected head's T_L(W) with each scored row's strict argmax (green: the target,
    red: wrong or tied) and the target (white ×); returns (fig, Simulation)."""
    fam, W = select(encoding, task, rule, L0=L0)
    sim = simulate(W, fam, task, L, L0)
    P = transfer(W, fam.features(L)).numpy().copy()
    P[np.triu_indices(L, 1)] = np.nan
    fig, ax = plotting.figure(width=5.6, height=5.0)
    lo, hi = np.nanpercentile(P, 2), np.nanpercentile(P, 98)
    hi = hi if hi > lo else lo + 1
    im = ax.imshow(P, cmap="viridis", vmin=lo, vmax=hi, interpolation="nearest")
    fig.colorbar(im, ax=ax, label="positional logit φ(i)ᵀWφ(j)")
    ok, bad, red = sim.correct, ~sim.correct, plotting.PALETTE[3]
    arg = np.where(sim.argmax >= 0, sim.argmax, np.nan)
    ax.scatter(arg[ok], sim.rows[ok], s=9, c=plotting.PALETTE[2], label="argmax = target")
    ax.scatter(arg[bad], sim.rows[bad], s=9, c=red, label="argmax ≠ target")
    tied = bad & (sim.argmax < 0)
    if tied.any():
        kw = dict(s=9, marker="<", c=red, label="tied top")
        ax.scatter(np.full(tied.sum(), -0.5), sim.rows[tied], **kw)
    x = dict(marker="x", c="white", linewidths=0.8)
    ax.scatter(sim.target, sim.rows, s=14, label="target t_L(i)", **x)
    ax.axhline(L0 - 0.5, color="white", lw=0.8, ls="--")
    title = f"{encoding} / {task} ({rule}), L = {L}: α_L = {sim.alpha:.3f}"
    ax.set(xlabel="key position j", ylabel="query position i", title=title)
    kw = dict(handletextpad=0.3, columnspacing=0.8, facecolor="#aaaaaa", framealpha=1)
    fig.legend(loc="outside lower center", ncol=3, fontsize=9, **kw)
    ax.grid(False)
    return plotting.finish(fig), sim


def plot_heatmaps(alpha60: dict, lg60: dict, title: str = "", paper_lg60: dict | None = None):
    """Fig. 5: α_60 (top) and LG@60 (bottom); ``paper_lg60`` adds the paper's under ours."""
    grid = lambda d: np.array([[d.get(f"{e}/{t}", np.nan) for t in MAIN_TASKS] for e in ENCODINGS])
    cells = [(r, c, f"{e}/{t}") for r, e in enumerate(ENCODINGS) for c, t in enumerate(MAIN_TASKS)]
    fig, axes = plotting.figure(2, 1, width=6.8, height=3.3)
    names = ("α_60 (training-free)", "LG@60 (trained, mean over seeds)")
    for ax, M, name in zip(axes, (grid(alpha60), grid(lg60)), names):
        pv = {} if ax is axes[0] else paper_lg60 or {}
        both = {(r, c): pv[k] for r, c, k in cells if k in pv and np.isfinite(M[r, c])}
        im = _heat(ax, M, fontsize=10, xticks=MAIN_TASKS, yticks=ENCODINGS, skip=both)
        for (r, c), p in both.items():  # ours above the paper's ("paper 1.00" is too wide)
            kw = dict(ha="center", va="center", color="w" if M[r, c] < 0.6 else "k")
            ax.text(c, r - 0.17, f"{M[r, c]:.2f}", fontsize=10, **kw)
            ax.text(c, r + 0.23, f"({p:.2f})", fontsize=9, style="italic", **kw)
            _box(ax, c, r)
        ax.set(xlabel="task", ylabel="encoding", title=name)
    fig.colorbar(im, ax=axes, label="fraction of rows correct", shrink=0.8)
    return plotting.finish(fig, title=title or None)


#: The cells of Fig. 4 (:func:`plot_lg_curves`).
LG_CURVE_CELLS = (
    *(("rope", t) for t in ("prev", "skip5", "first")),
    *(("sinusoidal", t) for t in ("prev", "first")),
    *(("learned_abs", t) for t in ("first", "prev")),
    ("rope", "copy"),
)


def plot_lg_curves(rows, alpha: dict, tier: str = "1L1H", cells=LG_CURVE_CELLS):
    """Fig. 4: trained LG (mean ± one seed sd) and α_L (dashed) against L."""
    fig, ax = plotting.figure(width=6.8, height=4.6)
    for c, (e, t) in enumerate(cells):
        r = cell_rows(rows, tier, e, t)
        if not r:
            continue
        Ls = sorted({x["L"] for x in r})
        col = plotting.PALETTE[c % len(plotting.PALETTE)]
        acc = [np.array([x["acc"] for x in r if x["L"] == L]) for L in Ls]
        m, sd = np.array([a.mean() for a in acc]), np.array([a.std() for a in acc])
        ax.plot(Ls, m, "-o", color=col, ms=3, label=f"{e}/{t}")
        ax.fill_between(Ls, m - sd, m + sd, color=col, alpha=0.15, lw=0)
        ax.plot(Ls, [alpha[f"{e}/{t}"][L] for L in Ls], "--", color=col, lw=1.2)
    h, lab = ax.get_legend_handles_labels()
    grey = dict(color="grey")
    h += [Line2D([], [], marker="o", ms=3, **grey), Line2D([], [], ls="--", lw=1.2, **grey)]
    lab += ["trained LG (mean ± sd)", "α_L"]
    ylabel = "accuracy on rows [L0, L) / α_L"
    ax.set(xlabel="test length L (tokens)", ylabel=ylabel, ylim=(-0.03, 1.03))
    kw = dict(handlelength=1.6, columnspacing=1.0)
    fig.legend(h, lab, fontsize=9, ncol=4, loc="outside lower center", **kw)
    return plotting.finish(fig)


def plot_alpha_vs_lg(tier_stats: dict, learnable: float = 0.8, paper_rho: dict | None = None):
    """Fig. 3: cell-level α against LG per tier; ``paper_rho`` adds the paper's ρ."""
    tiers = [t for t in tier_stats if tier_stats[t].get("n_cells")]
    n = max(1, len(tiers))
    fig, axes = plotting.figure(1, n, width=6.8 / max(n, 2), height=3.3, sharey=True)
    learnt, other = dict(color=plotting.PALETTE[0]), dict(facecolors="none", edgecolors="grey")
    for ax, tier in zip(np.atleast_1d(axes), tiers):
        st = tier_stats[tier]
        for learn, style in ((True, learnt), (False, other)):
            cells = [c for c in st["cells"].values() if (c["train"] > learnable) == learn]
            pts = [(c["alpha"], c["lg"]) for c in cells]
            if pts:
                a, g = zip(*pts)
                ax.scatter(a, g, s=22, label="learnable" if learn else "not learnable", **style)
        rho = st.get("spearman_learnable")
        title = tier if rho is None else f"{tier}: ρ = {rho:.2f}"
        if paper_rho and tier in paper_rho:
            title += f"\n(paper {paper_rho[tier]:.2f})"
        lim, cells = (-0.05, 1.05), f"{st['n_cells']} cells"
        ax.set(xlabel="α (mean over L)", ylabel="trained LG (mean)", xlim=lim, ylim=lim)
        ax.set_title(title, fontsize=10)
        ax.text(0.97, 0.03, cells, transform=ax.transAxes, ha="right", fontsize=9)
    h, lab = np.atleast_1d(axes)[0].get_legend_handles_labels()
    fig.legend(h, lab, loc="outside lower center", ncol=2, fontsize=9)
    return plotting.finish(fig)


def plot_depth_trend(tier_stats: dict, paper: dict | None = None):
    """Fig. 6: learnable-cell ρ and precision with CIs against depth; ``paper``: crosses."""
    fig, ax = plotting.figure(width=6.0, height=3.6)
    tiers = [t for t in TIERS if tier_stats.get(t, {}).get("n_cells")]
    depth = [TIERS[t][0] for t in tiers]
    P = plotting.PALETTE
    for key, ci, mark, col, name in (
        ("spearman_learnable", "spearman_ci", "o", P[0], "ours: Spearman ρ (learnable cells)"),
        ("precision", "precision_ci", "s", P[1], "ours: precision of α_L ≥ 0.5"),
    ):
        pts = [(d, tier_stats[t]) for d, t in zip(depth, tiers) if key in tier_stats[t]]
        if pts:
            d, v, c = zip(*[(d, st[key], st[ci]) for d, st in pts])
            lo, hi = np.array(c).T
            err = np.clip([np.array(v) - lo, hi - np.array(v)], 0, None)
            ax.errorbar(d, v, yerr=err, fmt=mark + "-", color=col, capsize=3, label=name)
    if paper:
        xs, rs, ps = zip(*[(TIERS[t][0] + 0.08, r, p) for t, (r, p) in paper.items() if t in TIERS])
        ax.plot(xs + xs, rs + ps, "x", color="k", ms=8, mew=2, label="paper (Table 4)")
    ax.axhline(0, color="grey", lw=0.8)
    xlabel, ylabel = "layers (1L1H, 2L4H, 4L4H)", "statistic (95% bootstrap CI)"
    ax.set(xlabel=xlabel, ylabel=ylabel, xticks=[1, 2, 4], ylim=(-0.6, 1.08))
    ax.legend(fontsize=9, loc="lower left")
    return plotting.finish(fig)
