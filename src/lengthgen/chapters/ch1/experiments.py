"""Chapter 1's plan (Chiang & Cholak 2022): the cells of ``python -m lengthgen reproduce ch1``,
their functions, and the schemas of the stored cells.

The chapter's code by role: :mod:`.constructions` builds the exact transformers and
:mod:`.measures` measures them (live in the notebook, cheap at full size); :mod:`.training` trains
the learners on FIRST and PARITY and analyses the runs; :mod:`.figures` draws the explorer. This
module says what runs and what is stored: one cell per stored unit (the notebook's section in
brackets), configured by :data:`paper.PROTOCOLS` at each scale (:func:`cells`):

* ``fig2``            :func:`fig2`, the six curves of Fig. 2 ("Confidence: cross-entropy against length")
* ``sensitivity``     :func:`sensitivity`, the value-weight sweep ("PARITY is not learned …")
* ``parity_training`` :func:`train_parity`, the standard setup on PARITY (§5.1; same section)
* ``first_training``  :func:`train_first`, standard and log-scaled encoders on FIRST at training
  lengths 10 … 300, tested at n = 1000, all settings and runs as one ensemble of the engine
  (paper Fig. 4; "Learning FIRST")
* ``first_rates``     :func:`train_first_rates`, the same protocol with 100 runs per training length
  and three attention arms (standard, our log scaling, the authors' placement of the factor):
  success rates of the FIRST learners (issue 15; "How often does training find the solution?")
* ``first_mechanism`` :func:`first_mechanism`, the runs of ``first_training`` again, each probed for
  every count of later 1s at n = 1000 (§5.2; details page, issue 38)
* ``parity_grid``     :func:`studies.train_parity_grid`, the PARITY learner over other settings (§5.1)

Stored full-scale cells live in ``results/ch1/cells/`` and are checked against :func:`schema`
when read back (:func:`lengthgen.engine.runs.load_stored`). The measurements and analyses are
re-exported here, so the notebooks and claims read them as ``experiments.<name>``.
"""

from __future__ import annotations

import inspect
from typing import Mapping

import numpy as np

from lengthgen.chapters.ch1 import paper, studies
from lengthgen.chapters.ch1 import training as T
from lengthgen.chapters.ch1.measures import (  # noqa: F401  (re-exported)
    ce_curve,
    evaluate,
    exactness,
    favoured_logit,
    flawed_first_error,
    logit_range,
    oscillations,
    parity_logit_closed_form,
    sensitivity_sweep,
    task_of,
)
from lengthgen.chapters.ch1.training import (  # noqa: F401  (re-exported)
    failure_breakdown,
    first_model,
    first_table,
    perfect_key,
    placement_comparison,
    shared_runs,
    success_rates,
    summarize,
)
from lengthgen.config import ConfigError, check_choice, check_finite, check_positive_int
from lengthgen.engine.runs import Cell
from lengthgen.store import Schema


# --------------------------------------------------------------------------- the cells' functions
def fig2(
    lengths=paper.FIG2_LENGTHS,
    n_strings: int = 1000,
    seed: int = paper.SEED,
    sqrt_d: bool = False,
) -> list[dict]:
    """The six curves of Fig. 2 (cell ``fig2``): PARITY and FIRST, each without layer norm and with
    ε = 1e-5 and 0 (:data:`paper.LN_VARIANTS`), at each of ``lengths``; a list of :func:`ce_curve`
    results with their ``label`` (section "Confidence: cross-entropy against length"). With
    ``sqrt_d`` the same curves in the authors' configuration (the query weight is c, each head
    divides by √(width / heads), PARITY padded to width 10 over its two heads; see
    :mod:`.constructions`), which the chapter computes live."""
    extra = {"sqrt_d": True} if sqrt_d else {}
    return [
        {
            **ce_curve(name, {**kw, **extra}, lengths=lengths, n_strings=n_strings, seed=seed),
            "label": lab,
        }
        for name in ("parity", "first")
        for lab, kw in paper.LN_VARIANTS
    ]


def sensitivity(
    *,
    lo: float = paper.SENS_RANGE[0],
    hi: float = paper.SENS_RANGE[1],
    points: int = 401,
    n: int = paper.SENS_N,
    n_strings: int = 100,
    seed: int = paper.SEED,
) -> dict:
    """Cell ``sensitivity``: :func:`sensitivity_sweep` at ``points`` value weights evenly spaced
    from ``lo`` to ``hi`` (``numpy.linspace``)."""
    lo, hi = check_finite("lo", lo), check_finite("hi", hi)
    if not lo < hi:
        raise ConfigError(f"the sweep needs lo < hi, got lo = {lo!r}, hi = {hi!r}")
    points = check_positive_int("points", points, minimum=2)
    return sensitivity_sweep(np.linspace(lo, hi, points), n=n, n_strings=n_strings, seed=seed)


def train_parity(
    *,
    runs: int = 20,
    n: int = 100,
    seed: int = paper.SEED,
    epochs: int = 100,
    steps_per_epoch: int = 100,
    test_strings: int = 100,
    seed_offsets: Mapping = paper.PARITY_SEED_OFFSETS,
    model: Mapping = paper.MODEL,
    device: str = "cpu",
    progress: bool = False,
) -> dict:
    """Train the standard setup on PARITY (§5.1; cell ``parity_training``) on ``device``: ``runs``
    members initialised from seeds ``seed + r``, training and test strings of length ``n`` (data
    seeds from :data:`paper.PARITY_SEED_OFFSETS`). Section "PARITY is not learned …" of the chapter."""
    settings = {"runs": runs, "epochs": epochs, "steps_per_epoch": steps_per_epoch}
    settings.update(n=n, test_strings=test_strings, seed=seed)
    return T.train_parity_runs(
        settings,
        seed_offsets=seed_offsets,
        model=model,
        device=device,
        progress=progress,
    )


def train_first(
    *,
    lengths=paper.TRAIN_LENGTHS,
    runs: int = 20,
    epochs: int = 100,
    steps_per_epoch: int = 100,
    test_n: int = paper.TEST_N,
    test_strings: int = 100,
    eval_every_epochs: int = 5,
    seed: int = paper.SEED,
    seed_offsets: Mapping = paper.FIRST_SEED_OFFSETS,
    model: Mapping = paper.MODEL,
    arms=None,
    fit_strings: int | None = None,
    device: str = "cpu",
    progress: bool = False,
    analyse=None,
) -> dict:
    """Train standard and log-scaled encoders on FIRST (paper Fig. 4; cell ``first_training``),
    every (training length, scaling, run) one member of one ensemble, trained on ``device``.

    One string per update (batch size 1), ``steps_per_epoch`` updates per epoch, Adam (``model["lr"]``),
    float32. Member (length L, scaling s, run r) is initialised from seed ``seed + r`` and reads its
    own data stream (seeds from ``seed_offsets``, see :data:`paper.FIRST_SEED_OFFSETS`), shared by the
    standard and scaled member of the same run and length (paired design). Every
    ``eval_every_epochs`` epochs all members are tested on a fixed bank of ``test_strings`` strings
    of length ``test_n`` per member; at the end on fresh ones (the paper's last-epoch test).
    Section "Learning FIRST (paper Fig. 4)" of the chapter.

    With ``arms`` (names of :data:`paper.FIRST_ARMS`) and ``fit_strings`` it is the success-rate
    protocol of :func:`train_first_rates`: members name their arm, and each run's fit on
    ``fit_strings`` fresh strings of its own training length is recorded too.
    """
    settings = {"lengths": lengths, "runs": runs, "epochs": epochs}
    settings.update(steps_per_epoch=steps_per_epoch, test_n=test_n, seed=seed)
    settings.update(test_strings=test_strings, eval_every_epochs=eval_every_epochs)
    s, members, out = T.train_first_arms(
        settings,
        arms=paper.ATTENTION_ARMS if arms is None else arms,
        seed_offsets=seed_offsets,
        model=model,
        device=device,
        progress=progress,
        fit_strings=fit_strings,
        analyse=analyse,
    )
    protocol = {k: s[k] for k in ("lengths", "runs", "epochs", "steps_per_epoch")}
    protocol.update(batch_size=1, test_n=s["test_n"], test_strings=s["test_strings"])
    protocol.update(seed=s["seed"], **s["model"], n_heads=paper.FIRST_HEADS)
    protocol.update(positional="1[i = 1] (fixed)", dtype="float32")
    if arms is None:  # cell first_training: the arm is the member's log_scaled flag
        kept = [
            {"train_n": n, "log_scaled": paper.FIRST_ARMS[a][0], "run": r} for n, a, r in members
        ]
    else:
        named = list(dict.fromkeys(m[1] for m in members))
        protocol.update(arms=named, fit_strings=fit_strings)
        protocol["arm_definitions"] = {
            a: {
                "log_scaled": paper.FIRST_ARMS[a][0],
                "placement": paper.FIRST_ARMS[a][1],
            }
            for a in arms
        }
        kept = [{"train_n": n, "arm": a, "run": r} for n, a, r in members]
    seeds = sorted({s["seed"] + m[2] for m in members})
    return {"protocol": protocol, "members": kept, **out, "seeds": seeds}


def train_first_rates(
    *,
    arms=tuple(paper.FIRST_ARMS),
    runs: int = 100,
    fit_strings: int = 100,
    seed_offsets: Mapping = paper.FIRST_RATE_SEED_OFFSETS,
    device: str = "cpu",
    progress: bool = False,
    **protocol,
) -> dict:
    """Cell ``first_rates``: :func:`train_first` (``protocol``: its other arguments, same defaults)
    with many runs and three attention arms (:data:`paper.FIRST_ARMS`: standard, our log scaling of
    the whole logit, and the authors' placement of the factor on the query input), to measure each
    arm's rate of perfect generalisation (issue 15).

    Run r of every arm and training length starts from the weights of seed ``seed + r`` and reads the
    data stream of its length and run (the streams and initialisations of ``first_training`` for
    r < 20), so the arms are compared on the same seeds. Per run it records what ``first_training``
    records plus the fit on the training distribution: accuracy and cross-entropy of the final
    parameters on ``fit_strings`` fresh strings of the run's own training length.
    """
    return train_first(
        arms=arms,
        runs=runs,
        fit_strings=fit_strings,
        seed_offsets=seed_offsets,
        device=device,
        progress=progress,
        **protocol,
    )


def first_mechanism(*, probe_n: int = paper.TEST_N, **protocol) -> dict:
    """Cell ``first_mechanism``: the runs of ``first_training`` (``protocol``: the arguments of
    :func:`train_first`) trained again, each probed at length ``probe_n`` for every first symbol and
    count of later 1s (:func:`studies.outvote_profile`; §5.2, details page)."""
    probe_n = check_positive_int("probe_n", probe_n, minimum=2)
    out = train_first(analyse=lambda enc, p: studies.outvote_profile(enc, p, probe_n), **protocol)
    out["protocol"]["probe_n"] = probe_n
    return out


def _study_cells(scale: str, first: dict, parity: dict, proto: dict) -> list[Cell]:
    """The cells of the details page's secondary studies (issue 38) at ``scale``: ``first_mechanism``
    (the FIRST cells' settings ``first``) and ``parity_grid`` (PARITY's ``parity``)."""
    seed = paper.SEED
    return [
        Cell(
            "first_mechanism",
            first_mechanism,
            {**first, "runs": proto["runs"], "probe_n": proto["test_n"]},
            seeds=[seed + r for r in range(proto["runs"])],
        ),
        Cell(
            "parity_grid",
            studies.train_parity_grid,
            {
                **paper.PARITY_GRID[scale],
                **parity,
                "steps_per_epoch": proto["steps_per_epoch"],
                "test_strings": proto["test_strings"],
                "seed": seed,
                "seed_offsets": dict(paper.PARITY_SEED_OFFSETS),
                "model": dict(paper.MODEL),
            },
            seeds=[seed + r for r in range(paper.PARITY_GRID[scale]["runs"])],
        ),
    ]


# --------------------------------------------------------------------------- the plan
def cells(scale: str) -> list[Cell]:
    """The chapter's reproduction plan at ``scale`` (``smoke`` or ``full``, :data:`paper.PROTOCOLS`):
    the cells ``fig2``, ``sensitivity``, ``parity_training``, ``first_training``, ``first_rates``,
    ``first_mechanism`` and ``parity_grid``, in run order."""
    proto = paper.PROTOCOLS[check_choice("scale", scale, tuple(paper.PROTOCOLS))]
    seed = paper.SEED

    def seeds(runs: str) -> list[int]:
        return [seed + r for r in range(proto[runs])]

    first = {  # what the two FIRST cells share
        "lengths": list(paper.TRAIN_LENGTHS),
        "epochs": proto["epochs"],
        "steps_per_epoch": proto["steps_per_epoch"],
        "test_n": proto["test_n"],
        "test_strings": proto["test_strings"],
        "eval_every_epochs": proto["eval_every_epochs"],
        "seed": seed,
        "model": dict(paper.MODEL),
    }
    sweep = {"lo": paper.SENS_RANGE[0], "hi": paper.SENS_RANGE[1], "n": paper.SENS_N}
    sweep.update(points=proto["sens_points"], n_strings=proto["sens_strings"])
    parity = {"epochs": proto["parity_epochs"], "n": proto["parity_n"]}
    return [
        Cell(
            "fig2",
            fig2,
            {
                "lengths": list(paper.FIG2_LENGTHS),
                "n_strings": proto["fig2_strings"],
                "seed": seed,
            },
            seeds=[seed],
        ),
        Cell(
            "sensitivity",
            sensitivity,
            {**sweep, "seed": seed},
            seeds=[seed],
        ),
        Cell(
            "parity_training",
            train_parity,
            {
                **parity,
                "runs": proto["parity_runs"],
                "steps_per_epoch": proto["steps_per_epoch"],
                "test_strings": proto["test_strings"],
                "seed": seed,
                "seed_offsets": dict(paper.PARITY_SEED_OFFSETS),
                "model": dict(paper.MODEL),
            },
            seeds=seeds("parity_runs"),
        ),
        Cell(
            "first_training",
            train_first,
            {
                **first,
                "runs": proto["runs"],
                "seed_offsets": dict(paper.FIRST_SEED_OFFSETS),
            },
            seeds=seeds("runs"),
        ),
        Cell(
            "first_rates",
            train_first_rates,
            {
                **first,
                "arms": list(paper.FIRST_ARMS),
                "runs": proto["rate_runs"],
                "fit_strings": proto["test_strings"],
                "seed_offsets": dict(paper.FIRST_RATE_SEED_OFFSETS),
            },
            seeds=seeds("rate_runs"),
        ),
        *_study_cells(scale, first, parity, proto),
    ]


def run_live(name: str, scale: str, *, device: str = "cpu", progress: bool = False):
    """Compute cell ``name`` of :func:`cells` at ``scale`` here and now, without storing it (what the
    notebook shows live next to the stored full-scale run); ``device`` and ``progress`` go to the
    cell's function when it takes them."""
    plan = {c.name: c for c in cells(scale)}
    cell = plan[check_choice("cell", name, tuple(plan))]
    kw = dict(cell.kwargs)
    params = inspect.signature(cell.fn).parameters
    if "device" in params:
        kw["device"] = device
    if "progress" in params:
        kw["progress"] = progress
    return cell.fn(**kw)


# --------------------------------------------------------------------------- schemas of the stored cells
#: Per-member lists of the training cells (``curve`` lists: one entry per evaluation, per member).
_FIRST_LISTS = ("members", "test_acc", "test_ce_bits", "train_ce_bits_last_epoch")
_CURVE_LISTS = ("curve.acc.*", "curve.ce_bits.*")


def _members_declared(d) -> int:
    """Members a training result declares: runs, times training lengths × attention arms for FIRST."""
    p = d["protocol"]
    if "lengths" not in p:
        return p["runs"]
    return p["runs"] * len(p["lengths"]) * len(p.get("arms", paper.ATTENTION_ARMS))


def _training_schema(kind, protocol, members, lists, probabilities, extra=()):
    """A training cell's schema: its ``protocol`` fields and member fields exist, every per-member
    list has one entry per declared member (:func:`_members_declared`), and a FIRST cell's curve
    has one row per evaluation epoch."""
    curve = ("curve.epoch", "curve.ce_bits") if members else ()
    required = tuple(f"protocol.{f}" for f in protocol)
    required += tuple(f"members.*.{f}" for f in members)
    # the accuracy lists are checked as probabilities, the member list by its fields
    required += tuple(f for f in lists if "acc" not in f and f != "members") + curve
    counts = tuple((f, _members_declared) for f in lists)
    if members:  # FIRST: per-member curves, one row per evaluation epoch
        counts += tuple((f, _members_declared) for f in _CURVE_LISTS)
        counts += (("curve.acc", lambda d: len(d["curve"]["epoch"])),)
    return Schema(
        kind,
        required=required + extra,
        probabilities=probabilities,
        counts=counts,
    )


def schema(name: str, scale: str = "full") -> Schema | None:
    """What stored cell ``name`` of chapter 1 must hold at ``scale`` (``None``: no such cell).
    Counts of the training cells come from the protocol stored with them; Fig. 2 has one row per
    :data:`paper.FIG2_LENGTHS` in each of its (at least) six curves; the sensitivity sweep has
    ``sens_points`` rows of ``scale``'s protocol."""
    proto = paper.PROTOCOLS[check_choice("scale", scale, tuple(paper.PROTOCOLS))]
    first = ("lengths", "runs", "epochs", "steps_per_epoch", "test_n")
    if name == "fig2":
        rows = ("n", "ce_bits", "min_abs_logit", "max_abs_logit")
        return Schema(
            "ch1 Fig. 2 curves",
            required=("*.construction", "*.label", "*.n_strings")
            + tuple(f"*.rows.*.{f}" for f in rows)
            + (f"{2 * len(paper.LN_VARIANTS) - 1}.rows",),
            probabilities=("*.rows.*.acc",),
            counts=(("*.rows", lambda d: len(paper.FIG2_LENGTHS)),),
        )
    if name == "sensitivity":
        return Schema(
            "ch1 sensitivity sweep",
            required=("n", "n_strings", "rows.*.value", "rows.*.ce_bits"),
            probabilities=("rows.*.acc",),
            counts=(("rows", lambda d, k=proto["sens_points"]: k),),
        )
    if name == "parity_training":
        return _training_schema(
            "ch1 PARITY training",
            ("runs", "n", "epochs", "steps_per_epoch", "seed"),
            (),
            _FIRST_LISTS[1:] + ("seeds",),
            ("test_acc.*",),
        )
    if name == "first_training":
        return _training_schema(
            "ch1 FIRST training",
            first + ("seed",),
            ("train_n", "log_scaled", "run"),
            _FIRST_LISTS,
            ("test_acc.*", "curve.acc.*.*"),
        )
    if name == "first_rates":
        return _training_schema(
            "ch1 FIRST success rates",
            first[:1] + ("arms",) + first[1:] + ("fit_strings", "seed"),
            ("train_n", "arm", "run"),
            _FIRST_LISTS + ("train_len_acc", "train_len_ce_bits"),
            ("test_acc.*", "train_len_acc.*", "curve.acc.*.*"),
            extra=("seeds",),
        )
    if name == "first_mechanism":
        return _training_schema(
            "ch1 FIRST outvote probe",
            first + ("seed", "probe_n"),
            ("train_n", "log_scaled", "run"),
            _FIRST_LISTS + ("exact_error", "balanced_correct", "flip_distance"),
            ("test_acc.*", "exact_error.*", "curve.acc.*.*"),
        )
    if name == "parity_grid":
        return Schema(
            "ch1 PARITY grid",
            required=(
                "protocol.runs",
                "protocol.n",
                "settings.*.depth",
                "settings.*.lr",
            )
            + ("settings.*.log_scaled", "setting", "test_ce_bits"),
            probabilities=("test_acc.*",),
            counts=(("test_acc", lambda d: len(d["setting"])),),
        )
    return None


#: The cells of the plan, by name (the same at every scale).
CELL_NAMES = ("fig2", "sensitivity", "parity_training", "first_training", "first_rates")
CELL_NAMES += ("first_mechanism", "parity_grid")
#: The schemas of the stored full-scale cells (``results/ch1/cells/``), checked whenever they are
#: loaded (read by :class:`lengthgen.claims.StoredResults` and the notebooks).
SCHEMAS = {name: schema(name) for name in CELL_NAMES}


def schemas(scale: str = "full") -> dict[str, Schema]:
    """:func:`schema` of every cell at ``scale``, by name (the lookup
    :func:`lengthgen.chapters.chapter_schema` reads until it calls :func:`schema` itself)."""
    return {name: schema(name, scale) for name in CELL_NAMES}
