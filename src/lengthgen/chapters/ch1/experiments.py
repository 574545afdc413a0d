"""Chapter 1's plan (Chiang & Cholak 2022): the cells of ``python -m lengthgen reproduce ch1``,
their functions, and the schemas of the stored cells (``results/ch1/cells/``). Cells, configured
by :data:`paper.PROTOCOLS` (the notebook's section in brackets): ``fig2`` (Fig. 2, "Confidence:
cross-entropy against length"), ``sensitivity`` and ``parity_training`` ("PARITY is not learned
…"), ``first_training`` (Fig. 4, "Learning FIRST"), ``first_rates`` (100 runs per arm and three
attention arms, "How often does training find the solution?"), and for the details page
``first_mechanism`` (§5.2) and ``parity_grid`` (§5.1)."""

from __future__ import annotations

import inspect
from typing import Mapping

import numpy as np

from lengthgen.chapters.ch1 import paper, studies
from lengthgen.chapters.ch1 import training as T
from lengthgen.chapters.ch1.measures import ce_curve, sensitivity_sweep
from lengthgen.config import ConfigError, check_choice, check_finite, check_positive_int
from lengthgen.engine.runs import Cell


# --------------------------------------------------------------------------- the cells' functions
def fig2(
    lengths=paper.FIG2_LENGTHS, n_strings: int = 1000, seed: int = paper.SEED, sqrt_d: bool = False
) -> list[dict]:
    """The six curves of Fig. 2: :func:`ce_curve` of PARITY and FIRST in each layer-norm setting of
    :data:`paper.LN_VARIANTS`; ``sqrt_d``: the authors' configuration (:mod:`.constructions`)."""
    extra = {"sqrt_d": True} if sqrt_d else {}
    opts = dict(lengths=lengths, n_strings=n_strings, seed=seed)
    return [
        {**ce_curve(name, {**kw, **extra}, **opts), "label": lab}
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
    """:func:`sensitivity_sweep` at ``points`` value weights evenly spaced from ``lo`` to ``hi``."""
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
    """The standard setup on PARITY (§5.1): :func:`training.train_parity_runs`."""
    settings = dict(runs=runs, epochs=epochs, steps_per_epoch=steps_per_epoch, n=n, seed=seed)
    settings["test_strings"] = test_strings
    return T.train_parity_runs(settings, seed_offsets, model, device, progress)


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
    """Standard and log-scaled learners on FIRST (Fig. 4): :func:`training.train_first_arms`;
    with ``arms`` and ``fit_strings``, :func:`train_first_rates`."""
    settings = {"lengths": lengths, "runs": runs, "epochs": epochs}
    settings.update(steps_per_epoch=steps_per_epoch, test_n=test_n, seed=seed)
    settings.update(test_strings=test_strings, eval_every_epochs=eval_every_epochs)
    chosen = paper.ATTENTION_ARMS if arms is None else arms
    s, members, out = T.train_first_arms(
        settings, chosen, seed_offsets, model, device, progress, fit_strings, analyse
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
        protocol.update(arms=list(dict.fromkeys(m[1] for m in members)), fit_strings=fit_strings)
        fields = ("log_scaled", "placement")
        protocol["arm_definitions"] = {a: dict(zip(fields, paper.FIRST_ARMS[a])) for a in arms}
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
    """:func:`train_first` (``protocol``: its other arguments) with 100 runs of the three arms of
    :data:`paper.FIRST_ARMS`; run r reads the weights and strings of run r of ``first_training``."""
    kw = dict(arms=arms, runs=runs, fit_strings=fit_strings, seed_offsets=seed_offsets)
    return train_first(**kw, device=device, progress=progress, **protocol)


def first_mechanism(*, probe_n: int = paper.TEST_N, **protocol) -> dict:
    """The runs of ``first_training`` (``protocol``: the arguments of :func:`train_first`) trained
    again, each probed at length ``probe_n`` by :func:`studies.outvote_profile` (§5.2)."""
    probe_n = check_positive_int("probe_n", probe_n, minimum=2)
    out = train_first(analyse=lambda enc, p: studies.outvote_profile(enc, p, probe_n), **protocol)
    out["protocol"]["probe_n"] = probe_n
    return out


# --------------------------------------------------------------------------- the plan
def cells(scale: str) -> list[Cell]:
    """The chapter's reproduction plan at ``scale`` (``smoke`` or ``full``), in run order."""
    proto = paper.PROTOCOLS[check_choice("scale", scale, tuple(paper.PROTOCOLS))]
    seed = paper.SEED

    def cell(name, fn, kwargs) -> Cell:  # run r of a training cell starts from seed + r
        return Cell(name, fn, kwargs, seeds=[seed + r for r in range(kwargs.get("runs", 1))])

    shared = {k: proto[k] for k in ("steps_per_epoch", "test_strings")}
    shared.update(seed=seed, model=dict(paper.MODEL))
    first = {k: proto[k] for k in ("epochs", "test_n", "eval_every_epochs")}  # the FIRST cells'
    first.update(shared, lengths=list(paper.TRAIN_LENGTHS))
    parity = {"epochs": proto["parity_epochs"], "n": proto["parity_n"], **shared}  # PARITY's
    parity["seed_offsets"] = dict(paper.PARITY_SEED_OFFSETS)
    sweep = {"lo": paper.SENS_RANGE[0], "hi": paper.SENS_RANGE[1], "n": paper.SENS_N}
    sweep.update(points=proto["sens_points"], n_strings=proto["sens_strings"], seed=seed)
    fig = {"lengths": list(paper.FIG2_LENGTHS), "n_strings": proto["fig2_strings"], "seed": seed}
    rates = {"arms": list(paper.FIRST_ARMS), "runs": proto["rate_runs"]}
    rates.update(fit_strings=proto["test_strings"], seed_offsets=paper.FIRST_RATE_SEED_OFFSETS)
    trained = {**first, "runs": proto["runs"]}  # first_training's runs, re-run by first_mechanism
    return [
        cell("fig2", fig2, fig),
        cell("sensitivity", sensitivity, sweep),
        cell("parity_training", train_parity, {**parity, "runs": proto["parity_runs"]}),
        cell("first_training", train_first, {**trained, "seed_offsets": paper.FIRST_SEED_OFFSETS}),
        cell("first_rates", train_first_rates, {**first, **rates}),
        cell("first_mechanism", first_mechanism, {**trained, "probe_n": proto["test_n"]}),
        cell("parity_grid", studies.train_parity_grid, {**paper.PARITY_GRID[scale], **parity}),
    ]


def run_live(name: str, scale: str, *, device: str = "cpu", progress: bool = False):
    """Cell ``name`` at ``scale``, not stored (given ``device``, ``progress`` if it takes them)."""
    plan = {c.name: c for c in cells(scale)}
    cell = plan[check_choice("cell", name, tuple(plan))]
    params = inspect.signature(cell.fn).parameters
    extra = {k: v for k, v in (("device", device), ("progress", progress)) if k in params}
    return cell.fn(**cell.kwargs, **extra)


# ----------------------------------------------------------------------- what the stored cells hold
def _first(member: str, protocol: str = "", arms: str = "") -> str:
    """A FIRST cell: one entry per member (runs × lengths × arms), one curve row per epoch."""
    n = f"protocol.runs*protocol.lengths*{arms or len(paper.ATTENTION_ARMS)}"
    lists = "(test_acc|test_ce_bits|train_ce_bits_last_epoch|members|curve.(acc|ce_bits).*)"
    return (
        f"protocol.(lengths|runs|epochs|steps_per_epoch|test_n|seed{protocol}) members.*.(train_n|"
        f"run|{member}) {lists}={n} test_acc.*:p curve.acc.*.*:p curve.epoch curve.acc=curve.epoch"
    )


#: What each stored cell holds (:func:`lengthgen.store.validate`), checked whenever it is loaded.
SCHEMAS = {
    "fig2": "*.(construction|label|n_strings) *.rows.*.(n|ce_bits|min_abs_logit|max_abs_logit)"
    f" *.rows.*.acc:p *.rows=lengths {2 * len(paper.LN_VARIANTS) - 1}.rows",
    "sensitivity": "n n_strings rows.*.(value|ce_bits) rows.*.acc:p rows=points",
    "parity_training": "protocol.(runs|n|epochs|steps_per_epoch|seed) test_acc.*:p"
    " (test_acc|test_ce_bits|train_ce_bits_last_epoch|seeds)=protocol.runs",
    "first_training": _first("log_scaled"),
    "first_rates": _first("arm", "|arms|fit_strings", "protocol.arms")
    + " train_len_(acc|ce_bits)=members train_len_acc.*:p seeds",
    "first_mechanism": _first("log_scaled", "|probe_n")
    + " (exact_error|balanced_correct|flip_distance)=members exact_error.*:p",
    "parity_grid": "protocol.(runs|n) settings.*.(depth|lr|log_scaled) setting test_ce_bits"
    " test_acc.*:p test_acc=setting",
}


def schema(name: str, scale: str = "full") -> str | None:
    """What stored cell ``name`` must hold (the same at every scale; ``None``: no such cell)."""
    return SCHEMAS.get(name)
