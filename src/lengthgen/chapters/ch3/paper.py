"""Han, Chai & Wang (2026), *A Positional Realizability Theory of Length Generalization*: the paper's
numbers and chapter 3's protocol, in one place.

Everything here is a constant. :mod:`lengthgen.chapters.ch3.realizability` takes the task set,
lengths and the fit of the selection rule from it, :mod:`lengthgen.chapters.ch3.experiments` builds
the chapter's cells from :data:`PROTOCOL`, and the notebook
(``notebooks/03_positional_realizability``) compares its measurements with the values below.
Comments give each value's place in the paper; values marked *ours* are choices of this book.
"""
from __future__ import annotations

from lengthgen.nn.decoder import TIERS
from lengthgen.nn.positional import ENCODINGS

# --------------------------------------------------------------------------- tasks and lengths
#: The seven tasks of the main study (§6, App. C) and the two interior absolute positions (App. E).
MAIN_TASKS = ("prev", "skip2", "skip3", "skip5", "copy", "reverse", "first")
POS_TASKS = ("pos2", "pos5")
TASKS = MAIN_TASKS + POS_TASKS
#: Training length L0 (App. C) and the test lengths of the trained study (App. C); the α_L tables
#: add the longer lengths of App. A.7.
L0 = 20
STUDY_LENGTHS = (30, 40, 50, 60, 80)
LONG_LENGTHS = (128, 256, 512)

# --------------------------------------------------------------------------- the selection rule's fit
#: The cross-entropy selection rule (§4, App. C): 400 Adam steps with weight decay 1e-4 (paper);
#: the learning rate is not stated in the paper — 0.05 is ours, chosen before looking at any number
#: (chapter section "Selection-rule dependence: the learning rate of the fit").
CE_FIT = {"steps": 400, "lr": 0.05, "weight_decay": 1e-4}

#: The α_L tables (chapter section "α_L for every encoding and task"): every encoding, task and
#: length, both selection rules; the same at both scales (seconds on a CPU).
ALPHA_SPEC = {"encodings": ENCODINGS, "tasks": TASKS, "lengths": STUDY_LENGTHS + LONG_LENGTHS, "L0": L0,
              "fit": CE_FIT}

# --------------------------------------------------------------------------- the trained study
#: Five seeds per (tier, encoding, task) (App. C).
SEEDS = (0, 1, 2, 3, 4)
#: The trained groups: one ensemble per (tier, encoding, seed, group) with the group's tasks as members.
STUDY_GROUPS = {"main": MAIN_TASKS, "pos": POS_TASKS}
#: Seeds of a group with seed s (ours): model initialisation s, training-length schedule s; the data
#: stream of the member training task τ is ``DATA_SEED_OFFSET + DATA_SEED_STRIDE·s + TASKS.index(τ)``
#: and the evaluation banks are drawn from ``EVAL_SEED_OFFSET + s``.
DATA_SEED_OFFSET = 10_000
DATA_SEED_STRIDE = 1_000
EVAL_SEED_OFFSET = 777

#: The chapter's plan per scale (``reproduce ch3 --scale full|smoke``).
#: ``alpha``: the α_L tables (:data:`ALPHA_SPEC`). ``theory``: Monte-Carlo sample of Prop. 2 per
#: (L, rule) and random W of Prop. 1 (ours: 20 000 for the stored run, 5000 live in the notebook).
#: ``study``: App. C's protocol — depth tiers, encodings, seeds, AdamW (lr 3e-4, weight decay 0.01),
#: batch 64, 2000 steps, the test lengths — with evaluation sizes of ours (``eval_n`` sequences per
#: test length, ``train_eval_n`` per training length). ``smoke`` trains one RoPE group for 150 steps.
PROTOCOL = {
    "full": {
        "alpha": ALPHA_SPEC,
        "theory": {"n_trials": 20_000, "n_random": 20_000},
        "study": {"tiers": tuple(TIERS), "encodings": ENCODINGS, "seeds": SEEDS, "groups": STUDY_GROUPS,
                  "steps": 2000, "batch": 64, "lr": 3e-4, "weight_decay": 0.01, "lengths": STUDY_LENGTHS,
                  "eval_n": 256, "train_eval_n": 22, "L0": L0},
    },
    "smoke": {
        "alpha": ALPHA_SPEC,
        "theory": {"n_trials": 5000, "n_random": 5000},
        "study": {"tiers": ("1L1H",), "encodings": ("rope",), "seeds": (0,), "groups": {"main": ("prev", "first")},
                  "steps": 150, "batch": 64, "lr": 3e-4, "weight_decay": 0.01, "lengths": (30, 60),
                  "eval_n": 32, "train_eval_n": 6, "L0": L0},
    },
}

# --------------------------------------------------------------------------- paper values: α_L
#: RoPE attend-first α_L under the CE rule (Prop. 4(a), App. A.7).
ROPE_FIRST_ALPHA = {30: 0.80, 40: 0.40, 60: 0.20, 128: 0.12, 256: 0.055, 512: 0.039}
#: Sinusoidal prev α_L under the CE rule (Prop. 3, App. A.4: existence vs selection).
SIN_PREV_ALPHA = {60: 0.45, 128: 0.34}
#: §6 (primary confirmation): standard deviation of the cell-level α (mean over L = 30…80) of the
#: NoPE/ALiBi/copy/reverse cells, and the largest cell-level α among non-generalizing cells (RoPE/first).
ZERO_CELLS_ALPHA_STD = 0.02
MAX_NEGATIVE_CELL_ALPHA = 0.36
#: App. I, Table 12: sinusoidal prev α_60 with 8 and with 32 frequencies.
FREQ_SIN_PREV_ALPHA60 = {8: 0.47, 32: 0.00}

# --------------------------------------------------------------------------- paper values: theory
#: App. A.5–A.6: the kernel κ(0…3) whose shallow row 2 takes offset 1 while deep rows take offset 3.
COUNTEREXAMPLE_KAPPA = (1.46, 1.96, 1.80, 6.32)
COUNTEREXAMPLE_OFFSETS = (1, (3,))                # (row 2's offset, the deep rows' offsets)
#: App. A.5: peak at 30, offset 1 on the clipped rows: α_L = 1 − 10/(L − 20).
THM2_CLIPPED_ALPHA = {40: 0.500, 100: 0.875, 1000: 0.990, 200_000: 0.99995}
#: App. A.6(a): offset 2 on perfect squares and 1 elsewhere, kernel peaked at 1.
THM2_SQUARES_ALPHA = {200: 0.944, 5000: 0.987, 50_000: 0.996}
#: Prop. 2's Monte-Carlo figures: unconditional hit rate and share of winners among the new keys, per L.
PROP2_MC = {30: (0.034, 0.30), 60: (0.016, 0.65)}
#: Prop. 3: sin(d θ_min) (16 frequencies, base 1e4) solves copy at L = 17665 (offset 8833); θ_min.
PROP3_COPY = {"L": 17665, "copy_offset": 8833, "alpha": 1.0, "theta_min": 1.78e-4}

# --------------------------------------------------------------------------- paper values: the trained study
#: Table 3: per cell, α_60 (CE rule) and the trained LG@60 of the 1L1H and 2L4H tiers.
TABLE3 = {
    "rope/skip5": {"alpha60": 1.00, "lg_1L1H": 1.00, "lg_2L4H": 0.97},
    "rope/prev": {"alpha60": 1.00, "lg_1L1H": 0.87, "lg_2L4H": 0.85},
    "rope/copy": {"alpha60": 0.00, "lg_1L1H": 0.10, "lg_2L4H": 0.14},
    "sinusoidal/first": {"alpha60": 1.00, "lg_1L1H": 0.87, "lg_2L4H": 0.92},
    "sinusoidal/skip3": {"alpha60": 0.25, "lg_1L1H": 0.22, "lg_2L4H": 0.11},
    "learned_abs/first": {"alpha60": 1.00, "lg_1L1H": 1.00, "lg_2L4H": 1.00},
    "learned_abs/prev": {"alpha60": 0.00, "lg_1L1H": 0.08, "lg_2L4H": 0.08},
    "alibi/prev": {"alpha60": 0.00, "lg_1L1H": 0.18, "lg_2L4H": 1.00},
    "alibi/first": {"alpha60": 0.00, "lg_1L1H": 0.15, "lg_2L4H": 1.00},
    "nope/first": {"alpha60": 0.00, "lg_1L1H": 0.16, "lg_2L4H": 1.00},
}
#: Table 4: per tier, (Spearman ρ over learnable cells, precision Pr[LG ≥ 0.7 | α_L ≥ 0.5]).
TABLE4 = {"1L1H": (0.90, 0.925), "2L4H": (0.31, 0.94), "4L4H": (0.28, 0.97)}
#: §6 (primary confirmation), 1L1H: cell-level AUC of α for LG ≥ 0.5, its permutation p, and the
#: unconditioned Spearman over all cells.
STUDY_1L1H = {"auc": 1.0, "auc_p": 5e-5, "spearman_all": 0.47}
#: App. D, Table 5: Spearman(α_L, LG) over the 75 (learnable cell, L) rows of 1L1H for the CE fit,
#: the min-norm interpolant and the CE fit without weight decay.
TABLE5 = {"ce": 0.91, "min_norm": 0.56, "ce_wd0": 0.92}
TABLE5_ROWS = 75
#: App. D (depth trend): cells with mean α_L < 0.5 whose mean LG reaches 0.5 (rescued by content).
RESCUED = {"2L4H": frozenset({"alibi/prev", "alibi/first", "alibi/skip2", "nope/prev", "nope/first", "rope/first"})}
RESCUED["4L4H"] = RESCUED["2L4H"] | {"alibi/skip3"}
#: App. D (depth trend): mean LG of the two marginal rescued cells at 2L4H and 4L4H.
MARGINAL_GROWTH = {("nope/prev", "2L4H"): 0.53, ("nope/prev", "4L4H"): 0.74,
                   ("rope/first", "2L4H"): 0.83, ("rope/first", "4L4H"): 1.00}
#: App. E, Table 6: the absolute encodings reach LG@80 ≥ 0.97 on pos2/pos5; the α screen separates
#: the cells perfectly (AUC 1).
APP_E_ABSOLUTE = ("learned_abs", "sinusoidal")
APP_E_MIN_LG80 = 0.97
APP_E_AUC = 1.0
