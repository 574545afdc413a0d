"""Chapter 3's claims on the chapter page (Han, Chai & Wang 2026); :data:`CLAIMS` adds the details
page's (:mod:`.claims_details`). Each claim sits next to its paper value (:mod:`.paper`), its
comparison (:mod:`.rules`, which says how each is chosen) and its measurement (:mod:`.measures`).
Stored claims read ``results/ch3/cells``; live claims are measured by the notebook."""

from __future__ import annotations

from lengthgen.chapters.ch3 import measures as m
from lengthgen.chapters.ch3 import paper
from lengthgen.chapters.ch3.paper import STUDY_LENGTHS
from lengthgen.chapters.ch3.claims_details import DETAIL_CLAIMS, table3_lg_claim
from lengthgen.chapters.ch3.rules import CAUSES  # noqa: F401 -- the ledger core reads it from here
from lengthgen.chapters.ch3.rules import CE_LR, FLOAT_TOL, NEAR_ZERO, PRECISION_1L1H_CI, claim
from lengthgen.chapters.ch3.rules import element_wise, exact, lr_deviation, paper_interval, printed
from lengthgen.chapters.ch3.rules import rank_correlation, rounding, seed_mean_tol, tau_holds
from lengthgen.claims import Deviation, modified
from lengthgen.nn.positional import ENCODINGS

V = paper.VIOLATIONS_1L1H
RUN_TO_RUN = "run-to-run variance"
#: rules 2, 3, 1 entry by entry, for a high-α row of the study: [α_L, 5-seed mean LG, failing seeds]
ROW_TOLS = [rounding(2), seed_mean_tol(), 0]
ROW_WHY = "rules 2, 3, 1 element-wise: α ±0.005, a 5-seed mean ±0.045, the count exactly"

# A table laid out by hand: per claim its id, location, statement, paper value, measure, comparison.
# fmt: off
MAIN_CLAIMS = [
    claim("value", "ch3.thm1.old_rows", "Thm. 1 / App. A.1",
        "Sinusoidal prev, causal mask: max |T_128(W) − T_20(W)| over the rows i < L0", 0.0,
        tolerance=1e-10, group="self-check", source="live", digits=1,
        why="the same W and features on both grids: only float64 rounding may differ"),
    exact("ch3.alpha.stored_regression", "§5, App. C (predictor fit)",
        "Live α_L tables against the stored full-scale ones: entries that differ (of 5 × 9 × 8 × "
        "2, less the 2 × 9 × 8 ill-conditioned min-norm entries, read from storage only)", 0,
        why="the CE fit and the well-conditioned min-norm rows are deterministic: a difference is "
        "a change of the code", group="self-check", source="live"),
    exact("ch3.theory.stored_regression", "App. A (executable checks)",
        "Live theory checks against the stored ones: keys that differ (Monte Carlo left out)", [],
        why="all but the Monte Carlo of Props. 1–2 is deterministic and scale-free",
        group="self-check", source="live"),
    exact("ch3.thm2.deep_row_lemma", "App. A.5 (Lemma)",
        "Deep rows whose prefix-maximum argmax misses the peak's offset (4,000 random kernels "
        "with a strict global peak; both tie rules)", 0,
        lambda r: sum(m.th("thm2_random", "violations")(r)[k] for k in ("low", "high")),
        why="rule 1; it checks our O(L) argmax's tie handling, not the paper", group="self-check"),
    printed("ch3.alpha.rope_first_short", "Prop. 4(a), App. A.7",
        "RoPE attend-first α_L at L = 30, 40, 60 (CE selection)",
        [paper.ROPE_FIRST_ALPHA[L] for L in (30, 40, 60)], m.alpha_at("rope/first", (30, 40, 60))),
    printed("ch3.alpha.rope_first_long", "Prop. 4(a), App. A.7",
        "RoPE attend-first α_L at L = 128, 256, 512 (CE selection)",
        [paper.ROPE_FIRST_ALPHA[L] for L in (128, 256, 512)],
        m.alpha_at("rope/first", (128, 256, 512)),
        why="rule 2: ±0.005, set by the coarsest entry (0.12)",
        deviation=lr_deviation("Same decay; our tail is longer: how many long rows RoPE's kernel "
            "hits depends on its fitted low frequencies, i.e. on the fit's learning rate. ")),
    printed("ch3.alpha.sin_prev", "Prop. 3, App. A.4",
        "Sinusoidal prev α_L at L = 60 and 128 (the existence-versus-selection gap)",
        list(paper.SIN_PREV_ALPHA.values()), m.alpha_at("sinusoidal/prev", paper.SIN_PREV_ALPHA),
        deviation=lr_deviation("Both are below 1 as the proposition says; which kernel realizing "
            "prev at L0 the fit returns depends on its learning rate. ")),
    exact("ch3.alpha.clamped_first", "Prop. 4(b), App. A.7",
        "Clamped learned-absolute attend-first: smallest α_L over L ≤ 512",
        1.0, lambda r: min(m.alpha(r)["learned_abs/first"].values())),
    exact("ch3.alpha.rope_fixed_offsets", "Prop. 4(a), Table 3, Table 11",
        "RoPE prev and skip-2/3/5: smallest α_L over the four tasks and L ≤ 512 (CE fit at our "
        "lr 0.05; some lrs give less than 1)", 1.0,
        lambda r: min(min(m.alpha(r)[f"rope/{t}"].values())
                      for t in ("prev", "skip2", "skip3", "skip5"))),
    claim("predicate", "ch3.alpha.clamped_prev_tie", "Prop. 4(b), App. A.7",
        "Clamped learned-absolute prev: [α_60, target ties all keys j ≥ L0 − 1 on all 40 rows]",
        "0.00 (exact tie)", holds=lambda v: v[0] == 0.0 and v[1] is True,
        why="rule 1: keys j ≥ L0 − 1 share one feature", source="live"),
    claim("interval", "ch3.alpha.copy_reverse", "Thm. 2 corollary, Tables 11–12",
        "Copy and reverse: largest α_512 of the 10 cells (≤ 0.01)", "≈ 0",
        lambda r: max(m.alpha(r)[f"{e}/{t}"][512] for e in ENCODINGS for t in ("copy", "reverse")),
        interval=(0.0, NEAR_ZERO), why="rule 7, at the longest length"),
    printed("ch3.alpha.zero_cells_std", "§6 (primary confirmation), App. D",
        "The 20 NoPE/ALiBi/copy/reverse cells: standard deviation of α (mean over L = 30…80)",
        paper.ZERO_CELLS_ALPHA_STD, m.zero_cells_std, why="rule 2"),
    exact("ch3.alpha.nope_alibi_zero", "Prop. 1, Table 3",
        "NoPE and sign-constrained ALiBi: largest α_L over every task and length", 0.0,
        lambda r: max(v for k, d in m.alpha(r).items() if k.split("/")[0] in ("nope", "alibi")
                      for v in d.values())),
    printed("ch3.table3.alpha60", "Table 3 (α_L column)",
        "α_60 of the ten Table-3 cells (CE selection), in the table's order",
        paper.T3_ALPHA, lambda r: [m.alpha(r)[k][60] for k in paper.T3_KEYS],
        deviation=lr_deviation("Nine cells agree; sinusoidal skip-3's α moves with the lr. ")),
    exact("ch3.thm2.counterexample", "App. A.5",
        "κ = [1.46, 1.96, 1.80, 6.32]: [offset of shallow row 2 (not min(2, 3)), offsets of the "
        "deep rows]", [paper.COUNTEREXAMPLE_OFFSETS[0], list(paper.COUNTEREXAMPLE_OFFSETS[1])],
        lambda r: [m.th("thm2_counterexample", k)(r) for k in ("row2_offset", "deep_offsets")]),
    claim("predicate", "ch3.thm2.fixed_vs_growing", "Thm. 2 (corollaries)",
        "Kernel peaked at c: [min α_L on skip-c up to L = 5000, max on copy/reverse at L > 2c]",
        "1 / → 0",
        lambda r: [min(min(d.values()) for d in m.th("thm2_fixed_offset")(r).values()),
                   max(max(d.values()) for d in m.th("thm2_growing")(r).values())],
        holds=lambda v: v[0] == 1.0 and v[1] <= NEAR_ZERO, why="rule 1 for 1; rule 7 for '→ 0'"),
    printed("ch3.thm2.clipped_rows", "App. A.5",
        "Peak 30, offset 1 on the clipped rows: α_L = 1 − 10/(L − 20) at L = 40, 100, 10³, 2·10⁵",
        list(paper.THM2_CLIPPED_ALPHA.values()), lambda r: list(m.th("thm2_clipped")(r).values()),
        decimals=3, why="rule 2 at three decimals (the last entry has five)", digits=6),
    printed("ch3.thm2.density", "App. A.6(a)",
        "Offset 2 on squares, 1 elsewhere, kernel peaked at 1: α_L at L = 200, 5·10³, 5·10⁴",
        list(paper.THM2_SQUARES_ALPHA.values()), lambda r: list(m.th("thm2_squares")(r).values()),
        decimals=3, why="rule 2 at three decimals"),
    exact("ch3.thm2.parity", "App. A.5",
        "Alternating offsets δ(i) ∈ {1, 2}: α_L of a kernel peaked at 1 and at 2 (exactly 0.5)",
        [paper.THM2_PARITY_ALPHA] * 2, lambda r: list(m.th("thm2_parity")(r).values())),
    exact("ch3.thm2.ladder", "App. A.6(c)",
        "Unbounded ladder kernel (no global maximiser), copy: smallest α_L over L = 40 … 40960",
        paper.THM2_LADDER["alpha"], lambda r: min(m.th("thm2_ladder")(r).values())),
    exact("ch3.thm2.two_lengths", "App. A.5",
        "κ[10] = 5, κ[30] = 8 solves copy at L0 = 20 and at L = 60 (shallow clipping)", True,
        lambda r: bool(m.th("thm2_two_lengths", "copy_L0")(r)
                       and m.th("thm2_two_lengths", "copy_60")(r) == 1.0)),
    exact("ch3.thm2.copy_at_2c", "App. A.5 (capacity corollary), A.6(c)",
        "Kernel peaked at c = 15, 30, 100, copy: smallest α_L at L = 2c − 1 and 2c",
        paper.PEAK_COPY_ALPHA, why="rule 1: the demanded offset ⌈L/2⌉ is c", source="live"),
    exact("ch3.thm2.reverse_sweep", "App. A.5(b)",
        "Relative kernels (of a 20,000-kernel sweep) that solve reverse at L0 = 20",
        paper.REVERSE_SWEEP["solved"], m.th("thm2_reverse_sweep", "solved")),
    exact("ch3.prop1.random", "Prop. 1 / App. A.2",
        "φ(i) = [1, i]: strict interior argmaxes over 560,000 random (W, row) pairs",
        0, m.th("prop1", "interior_strict_argmax")),
    claim("predicate", "ch3.prop1.adversarial", "Prop. 1",
        "φ(i) = [1, i]: best prev-token margin reached by gradient ascent", "≤ 0",
        m.th("prop1", "best_prev_margin"), holds=lambda v: v <= FLOAT_TOL, why="rule 7"),
    exact("ch3.study.n_generalizing", "§6 (primary confirmation)",
        "1L1H: cells (of 35) whose mean LG reaches 0.5", paper.STUDY_1L1H["n_pos"],
        m.stat("1L1H", "n_pos")),
    exact("ch3.study.auc", "§6 (primary confirmation)",
        "1L1H: AUC of the cell-level α separating cells with LG ≥ 0.5 from the rest (35 cells)",
        paper.STUDY_1L1H["auc"], m.stat("1L1H", "auc"), why="rule 1: a perfect separation"),
    exact("ch3.study.auc_p", "§6 (primary confirmation)",
        "1L1H: label shuffles (of 20,000) whose AUC reaches ours (the paper's p = 5·10⁻⁵ is the "
        "floor 1/20,001: none)",
        0, lambda r: int(round(m.stats(r, "1L1H")["auc_p"] * (m.N_PERM + 1))) - 1,
        why="rule 1: a p-value at its floor, compared as its count"),
    printed("ch3.study.auc_margin", "§6 (primary confirmation)",
        "1L1H: [smallest cell-level α of the generalizing cells, largest of the others]",
        [paper.STUDY_1L1H[k] for k in ("min_alpha_pos", "max_alpha_neg")],
        lambda r: [m.stats(r, "1L1H")[k] for k in ("min_alpha_pos", "max_alpha_neg")],
        why="rule 2"),
    exact("ch3.study.auc_nontrivial", "§6 (primary confirmation)",
        "1L1H: [number of cells with α > 0.05, their AUC]",
        [paper.STUDY_1L1H[k] for k in ("n_nontrivial", "auc_nontrivial")], m.auc_nontrivial),
    rank_correlation("ch3.study.spearman_all_1L1H", "§6 (primary confirmation)",
        "1L1H: cell-level Spearman(α, LG) over all 35 cells",
        paper.STUDY_1L1H["spearman_all"], m.stat("1L1H", "spearman_all")),
    exact("ch3.study.n_learnable_1L1H", "§6 (binary indicator)",
        "1L1H: learnable cells (train accuracy > 0.8), of 35",
        paper.N_LEARNABLE["1L1H"], m.stat("1L1H", "n_learnable")),
    paper_interval("ch3.study.spearman_1L1H", "§6, Table 4",
        "1L1H: cell-level Spearman(α, LG) over the learnable cells",
        paper.TABLE4["1L1H"][0], m.stat("1L1H", "spearman_learnable"),
        interval=paper.TABLE4_CI[("spearman", "1L1H")], why="rule 4: the paper's 95 % interval"),
    rank_correlation("ch3.study.spearman_binarized", "§6 (binary indicator)",
        "1L1H learnable cells: Spearman with α binarised at 0.5",
        paper.GRADED_1L1H["binarized"], m.spearman_binarized),
    rank_correlation("ch3.study.spearman_nontrivial", "§6 (binary indicator)",
        "1L1H learnable cells with α > 0.05: cell-level Spearman(α, LG)",
        paper.GRADED_1L1H["nontrivial"],
        lambda r: m.spearman_cells(r, lambda k, v: v["train"] > m.LEARNABLE and v["alpha"] > 0.05)),
    rank_correlation("ch3.study.cutoff_robustness", "App. D (robustness checks)",
        "1L1H: learnable-cell Spearman at learnability cutoffs train accuracy > 0.5, 0.7, 0.9",
        list(paper.CUTOFF_RHO.values()),
        lambda r: [m.spearman_cells(r, lambda k, v, c=c: v["train"] > c)
                   for c in paper.CUTOFF_RHO]),
    rank_correlation("ch3.study.sinusoidal_graded_cell", "§6 (binary indicator)",
        "1L1H: cell-level Spearman(α, LG) over the 4 sinusoidal prev/skip-2/3/5 cells",
        paper.GRADED_1L1H["sin_cell"],
        lambda r: m.spearman_cells(r, lambda k, v: k in m.SIN_BOUNDED)),
    rank_correlation("ch3.study.sinusoidal_graded_fine", "§6 (binary indicator)",
        "1L1H, sinusoidal prev/skip-2/3/5: Spearman(α_L, LG) over the (cell, L, seed) rows and "
        "over the (cell, L) means", [paper.GRADED_1L1H["sin_row"], paper.GRADED_1L1H["sin_cell_L"]],
        m.sin_graded_fine,
        deviation=lr_deviation("These rank the α_L that move with the fit's learning rate "
            "(ch3.alpha.sin_prev, ch3.table3.alpha60); like the paper's, ours show no positive "
            "graded signal in this family. ")),
    exact("ch3.study.high_rows_1L1H", "§6 (sufficiency)",
        "1L1H: high-α rows (cell, L, seed with α_L ≥ 0.5) behind the precision",
        paper.HIGH_ROWS_1L1H["rows"], m.stat("1L1H", "n_high_rows"),
        why="rule 1: it fixes what the precision is over",
        deviation=lr_deviation("The paper's fit puts sinusoidal prev at L = 40 at α = 0.50, in "
            "the high-α set (five rows, one per seed); ours just below, so five rows fewer. ")),
    claim("interval", "ch3.study.precision_1L1H", "§6 (sufficiency), Table 4",
        "1L1H: precision Pr[LG ≥ 0.7 | α_L ≥ 0.5] over the high-α (cell, L, seed) rows",
        paper.TABLE4["1L1H"][1], m.stat("1L1H", "precision"), interval=PRECISION_1L1H_CI,
        why="rule 5 over the paper's 148 of 160 rows (its interval is lost with Table 4)",
        protocol=modified("our high-α set has 155 rows, not the paper's 160: sinusoidal prev at "
            "L = 40 falls below α = 0.5 in our CE fit (see ch3.study.high_rows_1L1H)")),
    claim("predicate", "ch3.study.precision_tau", "§6 (sufficiency)",
        "1L1H: precision Pr[LG ≥ 0.7 | α_L ≥ τ] and its rows at τ = 0.5, 0.7, 0.9, each within "
        "2 binomial standard errors (over our rows) of the paper's",
        list(paper.PRECISION_TAU.values()), m.precision_tau_rows, holds=tau_holds,
        why="rule 5; the paper prints no intervals, so 2 binomial SEs √(p(1−p)/n) (not blind: "
        "our precisions were in the ledger as a direction claim when this band was chosen)"),
    element_wise("ch3.study.violation_rope_first", "§6 (sufficiency, what the theorem certifies)",
        "1L1H RoPE attend-first at L = 30: [α_30, mean LG, seeds with LG < 0.7]",
        [V["rope/first"][k] for k in ("alpha", "lg", "seeds")], m.violation("rope/first", 30),
        tolerances=ROW_TOLS, why=ROW_WHY),
    element_wise("ch3.study.violation_sin_prev", "§6 (sufficiency)",
        "1L1H sinusoidal prev at L = 40: [α_40, mean LG, high-α seeds with LG < 0.7]",
        [V["sinusoidal/prev"][k] for k in ("alpha", "lg", "seeds")],
        m.violation("sinusoidal/prev", 40), tolerances=ROW_TOLS, why=ROW_WHY,
        deviation=lr_deviation("Our models fail this row as the paper's do, but our α_40 is just "
            "below 0.5, so it is no high-α violation (ch3.study.high_rows_1L1H). ")),
    element_wise("ch3.study.violation_sin_first", "§6 (sufficiency, what the theorem certifies)",
        "1L1H sinusoidal first: [mean LG@80, worst seed's LG@80, seeds with LG < 0.7 at 60, 80]",
        [*(V["sinusoidal/first"][k] for k in ("lg80", "worst")), *V["sinusoidal/first"]["seeds"]],
        m.violation_sin_first, tolerances=[seed_mean_tol(), seed_mean_tol(n=1), 0, 0],
        why="rules 3, 1 element-wise: mean ±0.045, one seed ±0.10, counts exact",
        deviation=Deviation(RUN_TO_RUN, "One of the paper's five seeds lands on a poorly "
            "extrapolating solution at L = 60 and 80; none of ours does. The paper's own spread "
            "for this cell (±0.13 at L = 60, Table 3) shows how much one seed moves it.")),
    exact("ch3.study.violations_elsewhere", "§6 (sufficiency)",
        "1L1H: high-α rows with LG < 0.7 outside the paper's families (RoPE first at 30, "
        "sinusoidal prev at 40, sinusoidal first at 60 and 80)",
        [], lambda r: [k for k in m.violations(r) if k not in m.PAPER_FAMILIES],
        why="rule 1: the paper confines its violations to these",
        deviation=Deviation(RUN_TO_RUN, "One seed of RoPE prev at L = 80 ends just under the 0.7 "
            "bar; the cell's other seeds and the paper's stay above. Where one seed of a cell "
            "near 0.8 falls relative to a fixed bar varies between independent runs.")),
    exact("ch3.study.n_learnable_2L4H", "App. F (Table 7's caption)",
        "2L4H: learnable cells (train accuracy > 0.8), of 35",
        paper.N_LEARNABLE["2L4H"], m.stat("2L4H", "n_learnable")),
    *[rank_correlation(id, "§6 (scale and depth), Table 4",
        f"{t}: cell-level Spearman(α, LG) over the learnable cells",
        paper.TABLE4[t][0], m.stat(t, "spearman_learnable"),
        why="rule 4: the paper prints no interval (only that it includes 0)")
      for id, t in (("ch3.study.depth_2L4H", "2L4H"), ("ch3.study.depth_4L4H", "4L4H"))],
    exact("ch3.study.depth_significance", "§6 (scale and depth), Table 4, paper Fig. 6",
        "Learnable-cell Spearman: does our 95 % bootstrap interval exclude 0 at [1L1H, 2L4H, 4L4H]",
        [True, False, False],
        lambda r: [bool(m.stats(r, t)["spearman_ci"][0] > 0) for t in ("1L1H", "2L4H", "4L4H")],
        why="rule 1: the paper states which intervals contain 0"),
    paper_interval("ch3.study.precision_2L4H", "§6 (scale and depth), Table 4",
        "2L4H: precision Pr[LG ≥ 0.7 | α_L ≥ 0.5] over the high-α rows",
        paper.TABLE4["2L4H"][1], m.stat("2L4H", "precision"),
        interval=paper.TABLE4_CI[("precision", "2L4H")]),
    paper_interval("ch3.study.precision_4L4H", "§6 (scale and depth), Table 4",
        "4L4H: precision Pr[LG ≥ 0.7 | α_L ≥ 0.5] over the high-α rows",
        paper.TABLE4["4L4H"][1], m.stat("4L4H", "precision"),
        interval=paper.TABLE4_CI[("precision", "4L4H")],
        deviation=Deviation(CE_LR, "At our lr the high-α set has fewer rows than the paper's and "
            "none of our 4L4H high-α rows misses LG ≥ 0.7. At the rates that best reproduce the "
            "paper's α the set has its 160 rows and the precision is inside its interval "
            "(ch3.study.precision_4L4H_lr_match): the fit's rows differ, not the trained models. "
            "Precision stays high at depth in both.")),
    table3_lg_claim("ch3.table3.lg60_1L1H", "1L1H"),
    exact("ch3.alpha.copy_reverse_study", "Thm. 2 corollary, Tables 11–12",
        "Copy and reverse at the study lengths L = 30…80: the (cell, L) with α_L > 0.01",
        [], lambda r: [f"{e}/{t}@{L}" for e in ENCODINGS for t in ("copy", "reverse")
                       for L in STUDY_LENGTHS if m.alpha(r)[f"{e}/{t}"][L] > NEAR_ZERO],
        why="rule 7 at every trained length, not only the longest",
        deviation=Deviation("one crossing per length", "The learned-absolute cells hit one row "
            "per length (copy: the row whose target is the clamped table's top key; reverse: the "
            "last row, target 0); RoPE reverse the row at its kernel's peak offset; the "
            "sinusoidal cells a few rows at some lengths. None transfers the growing offset; "
            "ch3.alpha.copy_reverse holds at L = 512 only because the scored set has grown.")),
]

#: every claim of the chapter, the chapter page's first (each page keeps its declaration order)
CLAIMS = [*MAIN_CLAIMS, *DETAIL_CLAIMS]
#: the claims shown on the details page (03_positional_realizability_details)
DETAILS = tuple(c.id for c in DETAIL_CLAIMS)

#: the intro's results box: the chapter's main finding and main deviation, with the claims behind
#: them; the chapter's results box: its headline claims in plain words (``claims``), the deviation
HEADLINE = {
    "finding": "The training-free α_L separates the one-layer cells that length-generalize from "
    "those that do not (AUC 1, same 6 of 35 cells), with the paper's learnable-cell correlation; "
    "at depth the correlation falls while high α_L still implies generalization, and the same "
    "cells are rescued by content.",
    "finding_ids": ["ch3.study.auc", "ch3.study.spearman_1L1H", "ch3.study.depth_significance",
                    "ch3.appD.content_4L4H"],
    "deviation": "The paper does not state its cross-entropy fit's learning rate; the scores that "
    "depend on it (sinusoidal fixed offsets, RoPE attend-first at long lengths) differ, and so "
    "does the four-layer precision, inside the paper's interval at the rates matching its scores.",
    "deviation_ids": ["ch3.table3.alpha60", "ch3.alpha.sin_prev", "ch3.study.precision_4L4H"],
    "claims": {
        "ch3.alpha.rope_fixed_offsets":
            "RoPE keeps a head on a fixed look-back distance at every test length",
        "ch3.alpha.copy_reverse":
            "No encoding follows copy or reverse, whose look-back distance grows with length",
        "ch3.study.auc":
            "A training-free score tells exactly which one-layer transformers extrapolate",
        "ch3.study.spearman_1L1H":
            "On the tasks one-layer models learn, the score ranks them as accuracy does",
        "ch3.study.depth_4L4H":
            "In four-layer models, which also use token content, the rank correlation is weak",
    },
}
# fmt: on
