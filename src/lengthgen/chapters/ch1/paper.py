"""Chiang & Cholak (2022), *Overcoming a Theoretical Limitation of Self-Attention*: the paper's
numbers and chapter 1's protocol, as constants, each naming the paper's section or figure."""

from __future__ import annotations

# --------------------------------------------------------------------------- exact constructions
#: The exactness check of §3.4 (chapter section "Two exact constructions"): every string up to this
#: length, and this many random strings at each of these lengths.
EXACT_N_EXHAUSTIVE = 16
EXACT_RANDOM_NS = (100, 1000)
EXACT_RANDOM_STRINGS = 1000

# --------------------------------------------------------------------------- Fig. 2
#: Lengths of Fig. 2 (log-spaced from 1 to 1000; section "Confidence: cross-entropy against length").
FIG2_LENGTHS = (1, 2, 3, 5, 10, 20, 30, 50, 100, 200, 300, 500, 1000)
#: The three layer-norm settings of Fig. 2: (label, keyword arguments of the construction).
LN_VARIANTS = (
    ("no layer norm", {}),
    ("layer norm, eps = 1e-5", {"layer_norm": True, "eps": 1e-5}),
    ("layer norm, eps = 0", {"layer_norm": True, "eps": 0.0}),
)

#: The authors' exact constructions that Fig. 2 evaluates (their released scripts,
#: github.com/ndnlp/parity; torch's attention needs a width the heads split evenly): width without
#: layer norm (paired layer norm doubles it), heads; each head divides by sqrt(width / heads).
AUTHORS_WIDTH = {"parity": 10, "first": 6}
AUTHORS_HEADS = {"parity": 2, "first": 1}
#: §4.3, paper Fig. 2: the rise (bits) of FIRST's cross-entropy with layer norm and eps = 1e-5 from
#: n = 1 to 1000 in the authors' configuration, read by eye ("several tenths of a bit"; rule 9).
FIG2_FIRST_EPS5_RISE_BITS = 0.5

# --------------------------------------------------------------------------- log-scaled FIRST (§5.3)
#: The band the log-scaled one-layer FIRST logit stays in at every length (|s| in [1/4, 1/2]).
LOGIT_BAND = (0.25, 0.5)

# --------------------------------------------------------------------------- training (§5.1, §5.4)
#: FIRST (paper Fig. 4): training lengths, test length, and the two attention settings compared.
TRAIN_LENGTHS = (10, 30, 100, 300)
TEST_N = 1000
ATTENTION_ARMS = ("standard", "log-scaled")  # log_scaled False, True
#: The arms of cell ``first_rates``: name → (log-scaled, where log N multiplies: ours, the whole
#: logit; the authors' released code, the query input, so the query bias is not scaled), N = n + 1.
FIRST_ARMS = {
    "standard": (False, "logit"),
    "log-scaled": (True, "logit"),
    "authors' placement": (True, "query"),
}
#: The learners (§5.1): post-norm, trained with Adam at learning rate ``lr``.
MODEL = {"d_model": 16, "d_ffn": 64, "n_layers": 2, "lr": 3e-4, "eps": 1e-5}
FIRST_HEADS, PARITY_HEADS = 1, 2  # heads of the FIRST and of the PARITY learner

#: Training protocols per scale: ``full`` is the paper's (§5.1, Fig. 4; epochs, batch size 1 and
#: PARITY's n = 100 from the authors' scripts), ``smoke`` what the notebook runs live. ``rate_runs``:
#: runs per arm and training length of cell ``first_rates``; ``fig2_strings`` / ``sens_*``: strings
#: per length of Fig. 2, points and strings of the sensitivity sweep.
_FULL = {"rate_runs": 100, "runs": 20, "epochs": 100, "steps_per_epoch": 100, "test_n": TEST_N}
_FULL.update(test_strings=100, eval_every_epochs=5, parity_runs=20, parity_epochs=100)
_FULL.update(parity_n=100, fig2_strings=1000, sens_points=401, sens_strings=100)
_SMOKE = {"rate_runs": 2, "runs": 1, "epochs": 3, "eval_every_epochs": 1, "parity_runs": 2}
_SMOKE.update(parity_epochs=1, parity_n=20, fig2_strings=100, sens_points=81)
PROTOCOLS = {"full": _FULL, "smoke": {**_FULL, **_SMOKE}}

#: §5.1, "other settings" (cell ``parity_grid``; the paper does not list the ones it tried): Adam
#: learning rates around the reported 3e-4, depth 2 (reported) and 4, standard and log-scaled
#: attention, ``runs`` runs per setting; PARITY's length and updates are those of ``parity_training``.
PARITY_GRID = {
    "full": {"depths": [2, 4], "lrs": [1e-4, 3e-4, 1e-3, 3e-3], "runs": 3},
    "smoke": {"depths": [2], "lrs": [1e-3], "runs": 1},
}
PARITY_GRID = {k: {**v, "log_scaled": [False, True]} for k, v in PARITY_GRID.items()}

# --------------------------------------------------------------------------- sensitivity (§5.1)
#: The value weight computing k/N is swept over this interval (1 is the construction), at length n.
SENS_RANGE = (0.9, 1.1)
SENS_N = 100

# --------------------------------------------------------------------------- seeds
#: Base seed of every cell; run r of a training ensemble is initialised from seed ``SEED + r``.
SEED = 0
#: FIRST's generators: run r at the i-th training length ``data + data_per_length·i + SEED + r``
#: (shared by the arms: paired design), the validation bank ``bank + SEED``, test ``test + SEED``.
FIRST_SEED_OFFSETS = {"data": 10_000, "data_per_length": 1_000, "bank": 99_000, "test": 199_000}
#: The same for PARITY: run r reads ``data + SEED + r``; test strings from ``test + SEED``.
PARITY_SEED_OFFSETS = {"data": 20_000, "test": 299_000}
#: Cell ``first_rates``: FIRST's offsets (run r < 20 reads the strings of ``first_training``) and
#: ``fit`` for the fresh strings of the training length on which each run's fit is measured.
FIRST_RATE_SEED_OFFSETS = {**FIRST_SEED_OFFSETS, "fit": 399_000}

# --------------------------------------------------------------------------- the paper's reported values
# Every number chapter 1 quotes from the paper (the claims of :mod:`.claims` read them from here).
#: Paper Fig. 4: runs per setting ("20-run averages"); with log-scaled attention every setting
#: reaches perfect test accuracy and cross-entropy, i.e. all of these runs are perfect.
FIG4_RUNS = 20
#: §3.4: accuracy of the exact constructions (they are exact: 100%).
EXACT_ACCURACY = 1.0
#: §5.1: accuracy of the ε = 0 layer-norm PARITY construction at the correct value weight 1.
SENS_EXACT_ACCURACY = 1.0
#: §4.3, paper Fig. 2: the upper bound the cross-entropy approaches without layer norm (bits per string).
CE_BOUND_BITS = 1.0

# --------------------------------------------------------------------------- machine translation (§5.4)
#: BLEU on IWSLT'15 En–Vi, (standard, log-scaled), as the paper reports them: training on sentences
#: of at most 20 tokens and testing on longer ones, and with matched lengths. Not reproducible here.
MT_BLEU_SHORT_TRAIN = (11.4, 12.4)
MT_BLEU_MATCHED = (32.6, 32.5)
#: Significance level of the short-train / long-test gain.
MT_P_VALUE = 0.01
