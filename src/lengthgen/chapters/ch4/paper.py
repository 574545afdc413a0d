"""Chapter 4: the paper's numbers and our protocol, in one place (nothing here computes):
the paper's setting (App. B.1, :data:`PAPER_PROTOCOL`), our per-scale :data:`PROTOCOL` and
:data:`CHECKS`, and :data:`PAPER_VALUES`, every value quoted from the paper with its location."""

from __future__ import annotations

from lengthgen.claims import Claim, Unchecked, reduced
from lengthgen.config import check_choice, get_scale

# ------------------------------------------------------------------- the paper's setting (App. B.1)
PAPER_SEEDS = (1337, 1338, 1339)  # "three random seeds {1337, 1338, 1339}"
#: training and test lengths of the length-generalization experiment (Sec. 7.3, B.1.3)
TRAIN_LENGTHS = (2, 3, 4, 5, 7, 13, 19)
OOD_LENGTHS = (14, 38, 53, 97, 201, 303, 401, 512, 602, 705, 811)
#: held-out inputs of three training lengths, reported next to the unseen lengths
IN_DOMAIN_LENGTHS = (3, 7, 13)
#: B.1.3 seeding: data of length m from generator ``seed·(TRAIN or TEST)_SEED_MULTIPLIER + m``
TRAIN_SEED_MULTIPLIER = 1009
TEST_SEED_MULTIPLIER = 2009
BATCH_SIZE = 1024  # every MLP run (B.1)
INIT_STD = 0.01  # initial weights i.i.d. N(0, INIT_STD²) (B.1, B.1.4)
N_TEST = 10_000  # test inputs per length (B.1.3)
PAPER_EPOCHS = 300_000  # B.1: "trained for up to 300,000 epochs", final checkpoint
#: the B.1.3 budgets n of the length-generalization sweeps: p → budgets
PAPER_LENGTHGEN_BUDGETS = {
    97: (4000, 8000, 16_000, 32_000, 64_000),
    53: (1000, 2000, 4000, 8000, 16_000),
}

#: The paper's settings that our protocol changes (updates per epoch: ``updates_per_epoch``)
PAPER_PROTOCOL = {
    "budget": "up to 300,000 epochs per run, final checkpoint",
    "batches": "1024, single-length: an epoch walks the training lengths in order (released loop)",
    "updates (B.1.3)": "an epoch is 7 updates at n ≤ 4k, 14 at 8k, 21 at 16k, 35 at 32k, 63 at "
    "64k: 300,000 epochs ≈ 2.1M, 4.2M, 6.3M, 10.5M, 18.9M updates",
    "moduli": "(m, p) = (2, 307), (4, 53), (3, 97) (B.1.1–B.1.2); p = 97 and 53 (B.1.3)",
    "learning rates": "AdamW 1e-3 (B.1.1); Muon 1e-3 (B.1.2–B.1.3)",
    "width (B.1.3)": "1024",
    "seeds": "1337, 1338, 1339",
    "Newton–Schulz dtype": "unstated: B.1 says float32 throughout and 5 steps at the library defaults "
    "(a library Muon runs the iteration in bfloat16); we read it as float32",
    "transformer (B.1.4)": "(m, p) = (3, 97), width 256, AdamW lr 1e-4, grad-norm clip 1.0 "
    "(released code)",
}
#: Newton–Schulz dtype of our Muon runs: B.1's "float32 throughout" (engine default: bfloat16)
NS_DTYPE = "float32"

# --------------------------------------------------------------------------- our seeds and offsets
#: added to a member's seed for the B.1.4 re-initialisation of the transformer baseline
TRANSFORMER_INIT_SEED_OFFSET = 7919
#: seeds of the exact (automaton) and float64 checks (the three constructions: seed … seed+2)
AUTOMATON_SEED = 0
FLOAT_SEED = 10

# --------------------------------------------------------------------------- training protocol
# Per-scale settings of the training studies; ``steps`` (optimizer updates) fit one CPU core.
_S1, _S2, _S3 = (1337,), (1337, 1338), (1337, 1338, 1339)  # seeds
#: the main CPU length-generalization sweep (30x the paper's learning rate)
_MAIN = dict(
    p=17, width=128, budgets=(500, 2000), wds=(0.03, 0.1, 0.3), steps=2000, lr=3e-2, seeds=_S1,
    n_test=10_000, test_lengths=OOD_LENGTHS,
)  # fmt: skip
#: the CPU sweep at the paper's Muon learning rate, tracking accuracy at one long length
_PAPER_LR = {
    **_MAIN,
    **dict(budgets=(2000, 8000), steps=20_000, lr=1e-3),
    **dict(track_every=1000, track_length=201, n_track=1000),
}
#: Fig. 9 (App. B.2) at (3, 97): vanilla SGD at the paper's lr 0.1, AdamW at our B.1.1 lr
_FIG9 = dict(
    configs=((3, 97),), widths=(16,), budgets=(2000, 8000), steps=2000, seeds=_S2, n_test=10_000
)
_FULL_PROTOCOL = {
    "relu_width": dict(
        p=3, lengths=(6, 12, 24, 48), widths=(4, 8, 16, 32, 64), steps=3000, lr=3e-3, seeds=_S1
    ),
    "two_lengths": dict(p=5, m1=4, m2=6, width=64, steps=3000, lr=1e-2, seeds=_S2),
    "underparam": dict(
        configs=((4, 17), (3, 23)), widths=(8, 16, 32), budgets=(500, 1000, 2000, 4000), steps=1500,
        lr=1e-2, seeds=_S2, n_test=10_000,
    ),
    "overparam": dict(
        m=4, p=17, width=128, n=500, wds=(0.0, 0.01, 0.03, 0.1, 0.3, 1.0), steps=1500, lr=3e-2,
        seeds=_S1, n_test=10_000,
    ),
    "lengthgen": _MAIN,
    "transformer": dict(
        m=3, p=17, d_model=32, budgets=(500, 1000, 2000), steps=800, lr=1e-2, seeds=_S1,
        n_test=2000, batch_size=512,
    ),
    # the paper's Muon lr (1e-3) with a 10x longer update budget
    "lengthgen_long": _PAPER_LR,
    # the biased sine MLP at the paper's lr, 3x longer again, budget n = 8,000
    "lengthgen_paper_lr_60k": {
        **_PAPER_LR, **dict(budgets=(8000,), steps=60_000, track_every=2000, track_length=811)
    },
    "underparam_sgd": {**_FIG9, "lr": 0.1, "optimizer": "sgd"},
    "underparam_adamw97": {**_FIG9, "lr": 1e-2, "optimizer": "adamw"},
    # Sec. 6 remark and Thm 6.2: the over-parameterized setting of "overparam" at several widths
    "margin_widths": dict(
        m=4, p=17, n=500, widths=(8, 16, 32, 64, 128, 256), wd=0.1, steps=1500, lr=3e-2, seeds=_S2,
        n_test=10_000,
    ),
    # Cor. 5.8 (p grows at width 16) and Thm 5.6 (width grows at p = 23): n = ratio·p, ratio
    # 4–128 doubling (a first run with ratios 1–16 reached test accuracy 0.9 at no (p, width))
    "sample_needs": dict(
        m=3, grid=tuple((p, 16) for p in (11, 17, 23, 31, 41)) + ((23, 8), (23, 32)),
        ratios=(4, 8, 16, 32, 64, 128), steps=1500, lr=1e-2, seeds=_S3, n_test=2000,
    ),
    "budget_study": dict(
        p=17, width=128, n=2000, wds=(0.1, 0.3), seeds=_S1, steps=8000, every=500, lr=3e-2,
        val_length=201, n_val=2000, n_test=10_000, test_lengths=OOD_LENGTHS,
    ),
}  # fmt: skip
#: smoke scale: the same runs, small enough for a test (what differs from full scale)
_SMOKE_CHANGES = {
    "relu_width": dict(lengths=(3, 6), widths=(2, 4, 8), steps=300),
    "two_lengths": dict(width=32, steps=300, seeds=_S1),
    "underparam": dict(
        configs=((4, 17),), widths=(8,), budgets=(500,), steps=300, seeds=_S1, n_test=1000
    ),
    "overparam": dict(width=32, n=300, wds=(0.0, 0.1, 1.0), steps=200, n_test=1000),
    "lengthgen": dict(
        width=32, budgets=(500,), wds=(0.1,), steps=200, n_test=500, test_lengths=(14, 53, 201)
    ),
    "transformer": dict(budgets=(200,), steps=20, n_test=500, batch_size=256),
    "budget_study": dict(
        width=32, n=500, wds=(0.3,), steps=100, every=50, n_val=200, n_test=200,
        test_lengths=(14, 53),
    ),
}  # fmt: skip
PROTOCOL = {
    "smoke": {k: {**_FULL_PROTOCOL[k], **v} for k, v in _SMOKE_CHANGES.items()},
    "full": _FULL_PROTOCOL,
}

#: The variants (activation, first-layer bias) of the length-generalization study (B.1.3, Fig. 5).
LENGTHGEN_VARIANTS = (("sine", False), ("sine", True), ("relu", False))
#: The paper-scale GPU run (``reproduce ch4 --scale paper``): B.1.3 at p = 53, 36 members in one
#: ensemble; ``steps`` is a target (a run stopped by its time budget is stored as partial).
PAPER_RUN = dict(
    p=53, width=1024, budgets=(2000, 8000), wds=(0.3, 0.1, 0.03), seeds=_S2,
    variants=LENGTHGEN_VARIANTS, lr=1e-3, steps=300_000, eval_every=10_000, n_eval=2000,
    eval_lengths=TRAIN_LENGTHS + OOD_LENGTHS, train_lengths=TRAIN_LENGTHS, batch_size=BATCH_SIZE,
)  # fmt: skip
#: A live side run (section "Training: protocol and budget"): the main sweep's biased sine MLP,
#: trained with our mixed-length batches and with the released loop's single-length batches.
SAMPLER_COMPARISON = dict(
    p=17, width=128, n=8000, wd=0.1, steps=400, lr=3e-2, seed=1337, n_test=500,
    test_lengths=(14, 53, 201),
)  # fmt: skip

# -------------------------------------------------------------------------- exact checks and timing
#: The (p, m) cases (odd p) of claim ch4.thm41.window, each over the lengths 1 … WINDOW_SPAN·m
WINDOW_CASES = ((3, 6), (5, 5), (13, 5), (13, 9), (17, 9), (7, 19), (97, 19))
WINDOW_SPAN = 6
#: Per-scale settings of the construction checks and the epoch timing (smoke: a smaller float check)
_CHECKS = {
    "exhaustive": dict(ps=(2, 3, 4, 5, 6, 7, 11), ms=(1, 2, 3, 4), limit=20_000),
    "automaton": dict(primes=(97, 53), max_m=max(OOD_LENGTHS), n=N_TEST, seed=AUTOMATON_SEED),
    "bounds": dict(p=97, lengths=OOD_LENGTHS),
    "timing": dict(p=53, width=1024, n=8000, runs=3),
}
CHECKS = {
    scale: {**_CHECKS, "float": dict(primes=(97, 53), max_m=max(OOD_LENGTHS), n=n, seed=FLOAT_SEED)}
    for scale, n in (("smoke", 200), ("full", 2000))
}


def protocol(scale: str | None = None) -> dict:
    """The training settings of :data:`PROTOCOL` for ``scale`` (default: LENGTHGEN_SCALE)."""
    return PROTOCOL[check_choice("scale", get_scale(scale), tuple(PROTOCOL))]


def checks(scale: str | None = None) -> dict:
    """The check and timing settings of :data:`CHECKS` for ``scale`` (default: LENGTHGEN_SCALE)."""
    return CHECKS[check_choice("scale", get_scale(scale), tuple(CHECKS))]


# --------------------------------------------------------------------------- the paper's claims
#: What the chapter quotes from the paper: id → (location, value; for a figure its words, see R4).
PAPER_VALUES = {
    # Sec. 4: expressivity (exact statements)
    "ch4.thm41.exhaustive": ("Thm 4.1, App. D.1", 1.0),
    "ch4.thm42.bias_exhaustive": ("Thm 4.2 (with bias), App. D.2", 1.0),
    "ch4.thm42.nobias_exhaustive": (
        "Thm 4.2 (no bias), Sec. 1 item 1, App. D.2",
        "1 − 1/p (odd p), 1 − 2/p (even p), at every m",
    ),
    "ch4.thm41.long": ("Thm 4.1", 1.0),
    "ch4.thm42.bias_long": ("Thm 4.2 (with bias)", 1.0),
    "ch4.thm42.nobias_long": ("Thm 4.2 (no bias), App. D.2", "1 − 1/p (odd p), at every m"),
    "ch4.thm43": (
        "Thm 4.3, Sec. 1 item 1, App. D.3",
        "width ≥ (m − p)/(p + 2) for exact realization at length m",
    ),
    "ch4.thm44": (
        "Thm 4.4, Sec. 1 item 1, App. D.4",
        "no ReLU MLP fits two lengths m1 ≢ m2 (mod p) exactly",
    ),
    "ch4.prop_vc": ("Sec. 4 (proposition after Thm 4.2)", "VCdim{x ↦ sgn(sin(ax))} = ∞ on ℕ"),
    "ch4.thm56": ("Thm 5.6, Cor. 5.7, Tab. 1", "uniform convergence / sample complexity Θ̃(dp)"),
    "ch4.cor58": (
        "Cor. 5.8, Thm E.11",
        "interpolating constant-width sine ERM: Õ(p), matching Ω(p)",
    ),
    "ch4.thm62": (
        "Thm 6.2",
        "width-independent margin bound; population error Õ(p/√n) at Ω(1) normalized margin",
    ),
    "ch4.thm63": ("Thm 6.3", "ReLU interpolants' normalized margins decay exponentially with m"),
    # Sec. 7.1, Fig. 1, App. B.2 (Figs 7–9): under-parameterized regime
    "ch4.fig1.sine_beats_relu": (
        "Sec. 7.1, paper Fig. 1",
        "sine consistently outperforms ReLU in test accuracy across widths and training sizes",
    ),
    "ch4.fig1.width": (
        "Sec. 7.1, paper Fig. 1, paper Figs 7–8",
        "for a fixed n, reducing the width (while still "
        "sufficient for optimization) improves test accuracy",
    ),
    "ch4.fig9.sgd": (
        "App. B.2, paper Fig. 9",
        "with SGD at (3, 97) sine still beats ReLU; sine generalizes more slowly",
    ),
    "ch4.fig9.sgd.relu_matches": (
        "App. B.2, paper Fig. 9",
        "ReLU under SGD closely matches ReLU under AdamW",
    ),
    "ch4.fig9.sgd.sine_slower": (
        "App. B.2, paper Fig. 9",
        "sine under SGD never reaches the test accuracy of sine under AdamW",
    ),
    "ch4.sec6.relu_margins": (
        "Sec. 6 remark, paper Figs 3, 11, 13",
        "trained ReLU networks reach larger margins at smaller widths",
    ),
    # Sec. 7.2, Figs 2–3 (and 10–13): over-parameterized regime
    "ch4.fig23.margin_grows": (
        "Sec. 7.2, paper Figs 2–3",
        "normalized margins grow as weight decay increases through a moderate range",
    ),
    "ch4.fig23.test_improves": (
        "Sec. 7.2, paper Figs 2–3",
        "test accuracy improves as weight decay increases through a moderate range",
    ),
    "ch4.fig23.excessive": (
        "Sec. 7.2, paper Figs 2–3",
        "with excessively large decay, training accuracy falls and generalization degrades",
    ),
    "ch4.fig23.sine_vs_relu": (
        "Sec. 1 item 5, paper Figs 2–3",
        "sine outperforms ReLU; larger normalized margins track better test accuracy",
    ),
    # Sec. 7.3, Figs 4–5 (and 14–15): length generalization
    "ch4.fig4.sine_seen": (
        "Sec. 7.3, paper Fig. 4, App. B.2 (paper Fig. 14)",
        "perfect on all seen lengths once n ≥ 8k (p = 97)",
    ),
    "ch4.fig4.sine_far": (
        "Sec. 7.3, paper Fig. 4, App. B.2 (paper Fig. 14)",
        "essentially perfect at unseen lengths up to 811 once n ≥ 8k (p = 97)",
    ),
    "ch4.fig4.relu_in_domain": ("Sec. 7.3, paper Fig. 4", "ReLU MLPs struggle even in-domain"),
    "ch4.fig4.relu_chance": (
        "Sec. 7.3, paper Fig. 4",
        "ReLU MLPs degrade to chance (1/p) at longer unseen lengths",
    ),
    "ch4.fig5.bias_seen": (
        "Sec. 7.3, paper Fig. 5",
        "the bias preserves the excellent in-distribution performance",
    ),
    "ch4.fig5.bias_far": (
        "Sec. 1 item 5, Sec. 7.3, paper Figs 4–5",
        "near-perfect far beyond the training lengths (up to 811)",
    ),
    "ch4.fig5.bias_robust": (
        "Sec. 7.3, paper Fig. 5, App. B.2 (paper Fig. 15)",
        "with bias, accuracy stays high over a wider range of unseen lengths and weight decays",
    ),
    # Sec. 7.4, Fig. 6: transformer baseline
    "ch4.fig6.transformer": (
        "Sec. 7.4, paper Fig. 6",
        "sine reaches high test accuracy with fewer samples; ReLU "
        "and GELU notably worse at moderate budgets",
    ),
}


# ---------------------------------------------------------------------- what our protocols reduce
# The ``protocol=`` of the training claims: what each stored sweep changes, in the ledger's words.
def _set(xs, fmt="{:g}"):
    return "{" + ", ".join(fmt.format(x) for x in xs) + "}"


def _lg_protocol(block, extra):
    b = PROTOCOL["full"][block]
    return reduced(
        f"p = {b['p']} (paper: 53, 97), width {b['width']} (paper: 1024), n ∈ "
        f"{_set(b['budgets'], '{:,}')}, weight decay ∈ {_set(b['wds'])} (paper: 7 values), "
        f"{len(b['seeds'])} seed (paper: 3); {b['steps']:,} Muon updates at lr {b['lr']:g}, "
        "mixed-length batches (paper: lr 1e-3, 3·10⁵ epochs of single-length batches ≈ 4.2M "
        f"updates at n = 8,000){extra}"
    )


_DATA_RICH = (
    "; at p = 17, n = 8,000 holds every one of the 153 count vectors of length 2 and 650 of the "
    "969 of length 3 (at p = 97: 1,006 of 4,753 and 1,142 of 156,849), so the paper's p = 97 "
    "threshold n ≥ 8k is a data-richer setting here"
)
MAIN = _lg_protocol(
    "lengthgen",
    "; p = 17 is data-richer than the paper's p = 97 at the same n: n = 2,000 holds 132 "
    "of the 153 count vectors of length 2 (at p = 97: 277 of 4,753)",
)
PAPER_LR = _lg_protocol("lengthgen_long", _DATA_RICH)
PAPER_LR_60K = _lg_protocol("lengthgen_paper_lr_60k", _DATA_RICH)

_U, _O, _T = (PROTOCOL["full"][k] for k in ("underparam", "overparam", "transformer"))
UNDER = reduced(
    f"(m, p) = {', '.join(map(str, _U['configs']))} (paper: p ∈ {{53, 97, 307}}); widths "
    f"{', '.join(map(str, _U['widths']))}; n = {min(_U['budgets']):,}–{max(_U['budgets']):,}; "
    f"{len(_U['seeds'])} seeds (paper: 3); {_U['steps']:,} AdamW updates at lr {_U['lr']:g} "
    "(paper: lr 1e-3, 3·10⁵ epochs ≈ 0.3M–1.2M updates at these n)"
)
OVER = reduced(
    f"(m, p) = ({_O['m']}, {_O['p']}) (paper: p ∈ {{53, 307}}), width {_O['width']}, n = "
    f"{_O['n']}, weight decay ∈ {_set(_O['wds'])}, {len(_O['seeds'])} seed (paper: 3); "
    f"{_O['steps']:,} Muon updates at lr {_O['lr']:g} (paper: lr 1e-3, 3·10⁵ epochs ≈ 0.3M "
    f"updates at n = {_O['n']})"
)
TRANSFORMER = reduced(
    f"(m, p) = ({_T['m']}, {_T['p']}), d_model {_T['d_model']}, n ∈ {_set(_T['budgets'], '{:,}')}, "
    f"{len(_T['seeds'])} seed (paper: 3); {_T['steps']} AdamW updates at lr {_T['lr']:g}, batch "
    f"{_T['batch_size']} (the paper's B.1.4 gives neither the optimizer nor "
    "the budget; the released code: (m, p) = (3, 97), width 256, AdamW lr 1e-4, grad-norm clip 1.0)"
)
_R = PAPER_RUN
P53 = reduced(
    f"the paper's p = {_R['p']}, width {_R['width']}, Muon lr {_R['lr']:g}, single-length batches "
    f"of {_R['batch_size']} and test lengths, on one GPU, with Newton–Schulz in float32 (our "
    "reading of 'float32 throughout'; a library Muon would run it in bfloat16); but n ∈ "
    f"{_set(_R['budgets'], '{:,}')} (paper: 1k–16k), weight decay ∈ {_set(_R['wds'])} (paper: 7 "
    f"values), seeds {', '.join(map(str, _R['seeds']))} (paper: 3), {_R['n_eval']:,} held-out "
    f"inputs per length (paper: 10,000), and a target of {_R['steps']:,} updates cut by the "
    "device budget (the stored run is partial: 213,289 updates; paper: 3·10⁵ epochs ≈ 2.1M "
    "updates at n = 2,000 and 4.2M at 8,000)"
)


def paper_claim(id, statement, rule=None, measure=None, *, key=None, **kw) -> Claim:
    """A claim of the paper at ``PAPER_VALUES[key or id]``, compared by ``rule`` (:mod:`.measures`;
    ``kw`` may refine it, or give the ``paper_value`` compared, e.g. its formula at our cells)."""
    location, value = PAPER_VALUES[key or id]
    kw = {"paper_value": value, **(rule or {}), **kw}
    return Claim(id, location, statement=statement, measure=measure, **kw)


def paper_unchecked(id, statement, status, reason) -> Unchecked:
    """A claim of the paper the chapter does not check, and why."""
    location, value = PAPER_VALUES[id]
    return Unchecked(id, location, statement, value, status, reason)
