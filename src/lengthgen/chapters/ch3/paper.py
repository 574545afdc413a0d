"""Han, Chai & Wang (2026), *A Positional Realizability Theory of Length Generalization*: the
paper's numbers and chapter 3's protocol (:data:`PROTOCOL`, from which :mod:`.experiments` builds
the cells). Comments give each value's place in the paper; values marked *ours* are the book's."""

from __future__ import annotations

from lengthgen.nn.decoder import TIERS
from lengthgen.nn.positional import ENCODINGS

# --------------------------------------------------------------------------- tasks and lengths
#: The seven tasks of the main study (§6, App. C) and the two interior absolute positions (App. E).
MAIN_TASKS = ("prev", "skip2", "skip3", "skip5", "copy", "reverse", "first")
POS_TASKS = ("pos2", "pos5")
TASKS = MAIN_TASKS + POS_TASKS
#: App. H's content-driven task: the token after the previous occurrence of the current token.
CONTENT_TASKS = ("induction",)
#: Training length L0 and test lengths of the trained study (App. C); the α_L tables add App. A.7's.
L0 = 20
STUDY_LENGTHS = (30, 40, 50, 60, 80)
LONG_LENGTHS = (128, 256, 512)

# ------------------------------------------------------------------------- the selection rule's fit
#: The cross-entropy selection rule (§4, App. C): 400 Adam steps, weight decay 1e-4 (paper); the
#: learning rate 0.05 is ours, chosen before looking at any number (the paper does not state it).
CE_FIT = {"steps": 400, "lr": 0.05, "weight_decay": 1e-4}
#: The learning rates of its sensitivity analysis (ours): 0.06 … 0.12 and a coarse outer grid.
LR_GRID = (0.01, 0.02, 0.05, 0.06, 0.07, 0.08, 0.09, 0.1, 0.11, 0.12, 0.2)

#: The α_L tables (section "α_L for every encoding and task"), the same at both scales.
ALPHA_SPEC = dict(encodings=ENCODINGS, tasks=TASKS, L0=L0, fit=CE_FIT)
ALPHA_SPEC["lengths"] = STUDY_LENGTHS + LONG_LENGTHS

# --------------------------------------------------------------------------- the trained study
#: Five seeds per (tier, encoding, task) (App. C).
SEEDS = (0, 1, 2, 3, 4)
#: The trained groups: an ensemble per (tier, encoding, seed, group), the group's tasks as members.
STUDY_GROUPS = {"main": MAIN_TASKS, "pos": POS_TASKS}
#: Seeds of a group with seed s (ours): initialisation and length schedule s, member τ's data
#: ``DATA_SEED_OFFSET + DATA_SEED_STRIDE·s + TASKS.index(τ)``, banks ``EVAL_SEED_OFFSET + s``.
DATA_SEED_OFFSET = 10_000
DATA_SEED_STRIDE = 1_000
EVAL_SEED_OFFSET = 777

#: The plan per scale: ``theory``, the Monte-Carlo sizes of Props. 1–2 (ours); ``study``, App. C's
#: protocol with our evaluation sizes (sequences per test length and per training length).
# fmt: off
STUDY = {"tiers": tuple(TIERS), "encodings": ENCODINGS, "seeds": SEEDS, "groups": STUDY_GROUPS,
         "steps": 2000, "batch": 64, "lr": 3e-4, "weight_decay": 0.01,
         "lengths": STUDY_LENGTHS, "eval_n": 256, "train_eval_n": 22, "L0": L0}
PROTOCOL = {
    "full": {"alpha": ALPHA_SPEC, "theory": {"n_trials": 20_000, "n_random": 20_000},
             "lr_grid": {"lrs": LR_GRID}, "study": STUDY},
    "smoke": {"alpha": ALPHA_SPEC, "theory": {"n_trials": 5000, "n_random": 5000},
              "study": {**STUDY, "tiers": ("1L1H",), "encodings": ("rope",), "seeds": (0,),
                        "groups": {"main": ("prev", "first")}, "steps": 150, "lengths": (30, 60),
                        "eval_n": 32, "train_eval_n": 6}},
}
# fmt: on

# --------------------------------------------------------------------------- paper values: α_L
#: RoPE attend-first α_L under the CE rule (Prop. 4(a), App. A.7).
ROPE_FIRST_ALPHA = {30: 0.80, 40: 0.40, 60: 0.20, 128: 0.12, 256: 0.055, 512: 0.039}
#: Sinusoidal prev α_L under the CE rule (Prop. 3, App. A.4: existence vs selection).
SIN_PREV_ALPHA = {60: 0.45, 128: 0.34}
#: §6, App. D: standard deviation of the cell-level α of the 20 NoPE/ALiBi/copy/reverse cells.
ZERO_CELLS_ALPHA_STD = 0.02
#: App. I, Table 12 (caption): sinusoidal prev and first α_60 with 8 and with 32 frequencies.
FREQ_SIN_PREV_ALPHA60 = {8: 0.47, 32: 0.00}
FREQ_SIN_FIRST_ALPHA60 = {8: 0.93, 32: 1.00}
#: App. I, Table 11 (caption): RoPE prev and skip3 α_L = 1.00 at every frequency count and θ-base.
FREQ_ROPE_FIXED = 1.00

# --------------------------------------------------------------------------- paper values: theory
#: App. A.5–A.6: the kernel κ(0…3) whose shallow row 2 takes offset 1 while deep rows take offset 3.
COUNTEREXAMPLE_KAPPA = (1.46, 1.96, 1.80, 6.32)
COUNTEREXAMPLE_OFFSETS = (1, (3,))  # (row 2's offset, the deep rows' offsets)
#: App. A.5: peak at 30, offset 1 on the clipped rows: α_L = 1 − 10/(L − 20).
THM2_CLIPPED_ALPHA = {40: 0.500, 100: 0.875, 1000: 0.990, 200_000: 0.99995}
#: App. A.6(a): offset 2 on perfect squares and 1 elsewhere, kernel peaked at 1.
THM2_SQUARES_ALPHA = {200: 0.944, 5000: 0.987, 50_000: 0.996}
#: Prop. 2's Monte-Carlo figures per L: unconditional hit rate, share of winners among new keys.
PROP2_MC = {30: (0.034, 0.30), 60: (0.016, 0.65)}
#: App. A.5–A.6: parity offsets δ(i) ∈ {1, 2} score 0.5; the ladder kernel attains α_L = 1 on
#: copy along L = 40 … 40960; a peak at c solves copy at L = 2c − 1, 2c; no swept kernel, reverse.
THM2_PARITY_ALPHA = 0.5
THM2_LADDER = {"lengths": (40, 160, 640, 2560, 10240, 40960), "alpha": 1.0}
PEAK_COPY_ALPHA = 1.0
REVERSE_SWEEP = {"kernels": 20_000, "solved": 0}
#: Prop. 4 / App. A.7: α_L of the relative and the clamped learned-absolute head on prev and first.
DUALITY = {"relative": {"prev": 1.0, "first": 0.0}, "clamped": {"prev": 0.0, "first": 1.0}}
#: Prop. 3: sin(d θ_min) (16 frequencies, base 1e4) solves copy at L = 17665 (offset 8833); θ_min.
PROP3_COPY = {"L": 17665, "copy_offset": 8833, "alpha": 1.0, "theta_min": 1.78e-4}

# ------------------------------------------------------------------ paper values: the trained study
#: Table 3: per cell α_60 (CE rule) and the 5-seed mean LG@60 of 1L1H and 2L4H; ``sd_*``: the ±
#: after each mean, the spread over the seeds (ours are alike: RoPE prev 1L1H 0.047 against 0.05).
TABLE3 = {
    cell: dict(zip(("alpha60", "lg_1L1H", "sd_1L1H", "lg_2L4H", "sd_2L4H"), values))
    for cell, values in {
        "rope/skip5": (1.00, 1.00, 0.00, 0.97, 0.02),
        "rope/prev": (1.00, 0.87, 0.05, 0.85, 0.13),
        "rope/copy": (0.00, 0.10, 0.01, 0.14, 0.01),
        "sinusoidal/first": (1.00, 0.87, 0.13, 0.92, 0.04),
        "sinusoidal/skip3": (0.25, 0.22, 0.03, 0.11, 0.01),
        "learned_abs/first": (1.00, 1.00, 0.00, 1.00, 0.00),
        "learned_abs/prev": (0.00, 0.08, 0.00, 0.08, 0.00),
        "alibi/prev": (0.00, 0.18, 0.00, 1.00, 0.00),
        "alibi/first": (0.00, 0.15, 0.01, 1.00, 0.00),
        "nope/first": (0.00, 0.16, 0.01, 1.00, 0.00),
    }.items()
}
#: Table 3's columns in the table's order (the order of the claims that read them).
T3_KEYS = list(TABLE3)
T3_ALPHA = [TABLE3[k]["alpha60"] for k in T3_KEYS]
T3_LG = {t: [TABLE3[k][f"lg_{t}"] for k in T3_KEYS] for t in ("1L1H", "2L4H")}
T3_SD = {t: [TABLE3[k][f"sd_{t}"] for k in T3_KEYS] for t in ("1L1H", "2L4H")}
#: Table 4: per tier, (Spearman ρ over learnable cells, precision Pr[LG ≥ 0.7 | α_L ≥ 0.5]).
TABLE4 = {"1L1H": (0.90, 0.925), "2L4H": (0.31, 0.94), "4L4H": (0.28, 0.97)}
#: Table 4's 95 % intervals surviving in the text (§6, App. D): the 1L1H Spearman, the deeper tiers'
#: precisions (their Spearman intervals only "include 0"; the 1L1H precision's is lost).
TABLE4_CI = {
    ("spearman", "1L1H"): (0.73, 0.95),
    ("precision", "2L4H"): (0.89, 0.97),
    ("precision", "4L4H"): (0.94, 0.99),
}
#: Learnable cells (train acc > 0.8): 15 of 35 at 1L1H (§6), 20 at 2L4H (Table 7's caption).
N_LEARNABLE = {"1L1H": 15, "2L4H": 20}
#: §6 (primary confirmation), 1L1H: AUC of α for LG ≥ 0.5 and its permutation p, Spearman over the
#: 35 cells, the 6 positives, the separation's margin, the AUC over the 11 cells with α > 0.05.
STUDY_1L1H = {"auc": 1.0, "auc_p": 5e-5, "n_perm": 20_000, "spearman_all": 0.47, "n_cells": 35,
              "n_pos": 6, "min_alpha_pos": 1.00, "max_alpha_neg": 0.36, "n_nontrivial": 11,
              "auc_nontrivial": 1.0}  # fmt: skip
#: §6 (binary indicator), 1L1H learnable cells: ρ with α binarised at 0.5, over α > 0.05, and in
#: the sinusoidal bounded-offset family at cell, row and (PE, task, L) level.
GRADED_1L1H = {"binarized": 0.85, "nontrivial": 0.77, "sin_cell": -0.20, "sin_row": 0.04,
               "sin_cell_L": 0.09}  # fmt: skip
#: App. D: learnable-cell ρ with the learnability cutoff at train accuracy 0.5, 0.7, 0.9.
CUTOFF_RHO = {0.5: 0.91, 0.7: 0.90, 0.9: 0.90}
#: §6 (sufficiency), 1L1H: precision at τ = 0.5, 0.7, 0.9; at 0.5, 12 of 160 high-α rows fail, from
#: three families (cell: L, α_L, mean LG, failing seeds).
PRECISION_TAU = {0.5: 0.925, 0.7: 0.95, 0.9: 0.987}
HIGH_ROWS_1L1H = {"rows": 160, "violations": 12}
VIOLATIONS_1L1H = {
    "rope/first": {"L": 30, "alpha": 0.80, "lg": 0.13, "seeds": 5},
    "sinusoidal/prev": {"L": 40, "alpha": 0.50, "lg": 0.14, "seeds": 5},
    "sinusoidal/first": {"L": (60, 80), "seeds": (1, 1), "lg80": 0.77, "worst": 0.49},
}
#: App. D, Table 5: Spearman(α_L, LG) over 75 rows of 1L1H: CE, min-norm, CE without weight decay.
TABLE5 = {"ce": 0.91, "min_norm": 0.56, "ce_wd0": 0.92}
#: App. D (depth trend): cells with mean α_L < 0.5 whose mean LG reaches 0.5 (rescued by content).
RESCUED = {
    "2L4H": frozenset("alibi/prev alibi/first alibi/skip2 nope/prev nope/first rope/first".split())
}
RESCUED["4L4H"] = RESCUED["2L4H"] | {"alibi/skip3"}
#: App. D (depth trend): mean LG of the two marginal rescued cells at 2L4H and 4L4H.
MARGINAL_GROWTH = {("nope/prev", "2L4H"): 0.53, ("nope/prev", "4L4H"): 0.74,
                   ("rope/first", "2L4H"): 0.83, ("rope/first", "4L4H"): 1.00}  # fmt: skip
#: App. E, Table 6: absolute encodings, LG@80 ≥ 0.97 on pos2/pos5; α separates the cells (AUC 1).
APP_E_ABSOLUTE = ("learned_abs", "sinusoidal")
#: App. E: α_60 on every absolute-encoding pos2/pos5 cell and on every relative/NoPE one.
APP_E_ALPHA60 = {"absolute": 1.0, "other": 0.0}
APP_E_MIN_LG80 = 0.97
APP_E_AUC = 1.0

# --------------------------------------------------------- paper values the book does not check
#: Study sizes (§6, App. E): 3 tiers × 5 PEs × 7 (or 2) tasks × 5 seeds × 5 lengths (Table 6: 1L1H).
N_MEASUREMENTS = {"main": 2625, "pos": 750, "pos_1L1H": 250}
#: §6 (relation to the taxonomy): ρ of the PE-blind rule and of the taxonomy baseline.
BASELINE_RHO = {"pe_blind": -0.24, "taxonomy": 0.85}
#: §5: old-key target (attend-first, m = 64, L = 128): hit rate "up to 5.2×" 1/(k − 1).
PROP2_OLD_KEY_RATIO = 5.2
#: App. F, Table 7: vocab 64, d = 128 (2 seeds, 700 rows): 1L1H ρ, precision; 2L4H ρ over 19 cells.
SCALE_ROBUSTNESS = {"rho_1L1H": 0.92, "precision_1L1H": 0.94, "rho_2L4H": 0.36, "cells_2L4H": 19}
#: App. G, Table 8: L0 ∈ {10, 20, 40}, evaluated at 3 L0, 3 seeds: screen AUC 1.0 at every L0.
L0_SENSITIVITY = {"L0": (10, 20, 40), "auc": 1.0, "seeds": 3}
#: App. H, Table 9 (text): induction's 2-layer LG of ALiBi (the largest), RoPE, NoPE (all α_L = 0).
INDUCTION_LG = {"alibi": 0.84, "rope": 0.43, "nope": 0.34}
#: App. H, Table 10: RoPE frequency scale 0.03 on skip-3 (1L1H): trained LG while α_L = 0.
ROPE_FREQ_SCALE_LG = {"scale": 0.03, "lg": 0.88, "alpha": 0.0}
#: App. A.6(c): a kernel peaked at 100, secondary peak at 20, reaches α_L = 1 on copy at these L.
SECONDARY_PEAK_COPY_L = (39, 40, 199, 200)
#: App. A.7: the i.i.d.-extended learned-absolute head on prev scores the chance level 0.046.
IID_EXTENDED_PREV = 0.046
