"""Chapter 4's plan (``reproduce ch4``): :func:`cells` lists the cell functions of :mod:`.checks`,
:mod:`.sweeps` and :mod:`.paper_scale` with the settings of :mod:`.paper`; and the readers of
``results/ch4/cells/``, checked against today's plan and :func:`schema`."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from lengthgen.chapters.ch4 import paper

# the cells of the plan, and what the notebooks call through this module (hence noqa: F401)
from lengthgen.chapters.ch4.checks import automaton_summary, float_summary, relu_bounds_table
from lengthgen.chapters.ch4.checks import fixed_length_exact_lengths, window_key  # noqa: F401
from lengthgen.chapters.ch4.checks import float_network_checks, long_length_checks  # noqa: F401
from lengthgen.chapters.ch4.checks import relu_construction_check, summarize_checks  # noqa: F401
from lengthgen.chapters.ch4.checks import small_exhaustive
from lengthgen.chapters.ch4.data import ACTIVATIONS, check_activation
from lengthgen.chapters.ch4.paper import BATCH_SIZE, IN_DOMAIN_LENGTHS, LENGTHGEN_VARIANTS
from lengthgen.chapters.ch4.paper import TRAIN_LENGTHS, checks, protocol
from lengthgen.chapters.ch4.paper_scale import train_paper_scale
from lengthgen.chapters.ch4.sweeps import TRANSFORMER_ACTIVATIONS, TWO_LENGTH_RUNS, budget_study
from lengthgen.chapters.ch4.sweeps import epoch_timing, lengthgen, overparam, relu_min_width
from lengthgen.chapters.ch4.sweeps import sampler_comparison, transformer_baseline  # noqa: F401
from lengthgen.chapters.ch4.sweeps import margin_widths, sample_needs, two_lengths, underparam
from lengthgen.config import ConfigError
from lengthgen.engine.runs import Cell
from lengthgen.store import ResultFileError, cell_path, load_stored, results_dir
from lengthgen.store import stored_state


# --------------------------------------------------------------------------- the plan
def lengthgen_cell_name(prefix: str, activation: str, bias: bool) -> str:
    """``<prefix>_<activation>_<bias|nobias>``, e.g. ``lengthgen_sine_bias``."""
    return f"{prefix}_{check_activation(activation)}_{'bias' if bias else 'nobias'}"


#: the name of the paper-scale cell (``reproduce ch4 --scale paper``)
PAPER_CELL = f"paper_p{paper.PAPER_RUN['p']}"


def _trained(name: str, fn, kwargs: dict) -> Cell:
    """A training cell: its seeds are those of its settings."""
    return Cell(name, fn, kwargs, kwargs["seeds"])


def _b13(block: dict, **kw) -> dict:
    """The settings of a B.1.3 run: ``block`` with the paper's lengths and batch size."""
    b13 = dict(train_lengths=TRAIN_LENGTHS, in_domain_lengths=IN_DOMAIN_LENGTHS)
    return {**block, **kw, **b13, "batch_size": BATCH_SIZE}


def _lengthgen_cells(prefix: str, block: dict, variants=LENGTHGEN_VARIANTS) -> list:
    """One length-generalization cell per variant (activation, bias) of the sweep ``block``."""
    return [
        _trained(lengthgen_cell_name(prefix, a, b), lengthgen, _b13(block, activation=a, bias=b))
        for a, b in variants
    ]


def cells(scale: str) -> list[Cell]:
    """The chapter's reproduction plan at ``scale``, in run order (``paper``: the one GPU cell)."""
    if scale == "paper":
        return [_trained(PAPER_CELL, train_paper_scale, dict(paper.PAPER_RUN))]
    P, C = protocol(scale), checks(scale)
    out = [
        Cell("exhaustive", small_exhaustive, C["exhaustive"]),
        Cell("automaton", automaton_summary, C["automaton"]),
        Cell(f"float_n{C['float']['n']}", float_summary, C["float"]),
        Cell("bounds", relu_bounds_table, C["bounds"]),
        _trained("relu_min_width", relu_min_width, P["relu_width"]),
        _trained("two_lengths", two_lengths, P["two_lengths"]),
        _trained("underparam", underparam, {**P["underparam"], "batch_size": BATCH_SIZE}),
        _trained("overparam", overparam, {**P["overparam"], "batch_size": BATCH_SIZE}),
        *_lengthgen_cells("lengthgen", P["lengthgen"]),
        Cell("timing", epoch_timing, C["timing"]),
    ]
    if "lengthgen_long" in P:  # the paper's Muon lr (1e-3) with a 10x longer update budget
        out += _lengthgen_cells("lengthgen_long", P["lengthgen_long"])
    if "lengthgen_paper_lr_60k" in P:  # the biased sine MLP, 3x longer again
        block = P["lengthgen_paper_lr_60k"]
        out += _lengthgen_cells("lengthgen_paper_lr_60k", block, (("sine", True),))
    if "budget_study" in P:
        out.append(_trained("budget_study", budget_study, _b13(P["budget_study"])))
    for name, fn in THEORY_CELLS:  # the details page's learning theory (full scale only)
        if name in P:
            out.append(_trained(name, fn, {**P[name], "batch_size": BATCH_SIZE}))
    if "transformer" in P:
        block = P["transformer"]
        out.append(_trained(f"transformer_m{block['m']}", transformer_baseline, block))
    return out


#: the cells of the learning-theory section (:mod:`.sweeps`; Fig. 9 reuses :func:`underparam`)
THEORY_CELLS = (
    ("margin_widths", margin_widths),
    ("sample_needs", sample_needs),
    ("underparam_sgd", underparam),
    ("underparam_adamw97", underparam),
)


# ----------------------------------------------------------------------- what the stored cells hold
_ACCS = "rows.*.(train_acc|test_acc):p"
_BY_ACT = f"{_ACCS} rows={len(ACTIVATIONS)}*"  # one row per activation × the grid that follows
_SUMMARY = "(thm41|thm42_bias|fourier)@($primes).(errors_outside_tie_residues|lengths|n_per_length"
_SUMMARY += "|max_abs_acc_minus_1_minus_tie_share) (thm41|thm42_bias|fourier)@($primes)"
_SUMMARY += ".(min_acc|max_acc|mean_acc):p =3*primes"
_MEMBERS = "rows.*.(activation|bias|n|wd|seed) rows=budgets*wds*seeds"
_LENGTHS = "$in_domain_lengths|$test_lengths"
_TRACKED = " val_step track_length val_acc.*.*:p val_acc.*=budgets*wds*seeds"

#: What each cell function's stored cell holds: a ``store.validate`` spec, or a function of kwargs
SCHEMAS_BY_FUNCTION = {
    small_exhaustive: lambda kw: (
        "*.(p|m|inputs|fourier|fourier_theory) *.(thm41|thm42_bias):p"
        f" ={sum(p**m <= kw['limit'] for p in kw['ps'] for m in kw['ms'])}"
    ),
    automaton_summary: _SUMMARY,
    float_summary: _SUMMARY,
    relu_bounds_table: "*.(m|paper_bound|path_bound|construction_width) =lengths",
    relu_min_width: "p rows.*.(width|m|seed) rows.*.train_acc:p rows=widths*lengths*seeds"
    " (min_width|paper_bound|path_bound|construction_width)=lengths",
    two_lengths: "p m1 m2 pairs runs.*.(name|example.W) runs.*.(acc_m1|acc_m2).*:p"
    f" runs={len(TWO_LENGTH_RUNS)} runs.*.(acc_m1|acc_m2|same_prediction_pairs)=seeds",
    underparam: f"rows.*.(m|p|activation|width|n|seed) {_BY_ACT}configs*widths*budgets*seeds",
    overparam: f"rows.*.(activation|wd|seed|margin|norm|normalized_margin) {_BY_ACT}wds*seeds",
    lengthgen: lambda kw: (
        f"{_MEMBERS} steps example_(W|V|member|b) rows.*.(train|{_LENGTHS}):p"
        + (_TRACKED if kw.get("track_every") else "")
    ),
    budget_study: "val_length val_step steps (final_acc|val_acc).*.*:p"
    f" (members|final_acc.*|val_acc.*)=wds*seeds final_acc.({_LENGTHS})",
    transformer_baseline: f"m p rows.*.(activation|n|seed) {_ACCS}"
    f" rows={len(TRANSFORMER_ACTIVATIONS)}*budgets*seeds",
    train_paper_scale: "progress.(done|target) updates_per_epoch device_name final.step"
    " history.*.step members.*.(activation|bias|n|wd|seed)"
    " (final|history.*).(train_acc.*|acc.*.*):p (members|final.train_acc|final.acc.*)=variants*budgets*wds*seeds final.acc=eval_lengths",
    margin_widths: f"m p n wd rows.*.(activation|width|seed|normalized_margin) {_BY_ACT}widths*seeds",
    sample_needs: f"m rows.*.(p|width|n|seed) {_ACCS} rows=grid*ratios*seeds",
    epoch_timing: "p width n runs updates_per_epoch engine_s loop_s threads",
}


def schema(name: str, scale: str = "full") -> str | None:
    """What the cell ``name`` of today's ``scale`` plan holds (``None``: no such cell)."""
    cell = {c.name: c for c in cells(scale)}.get(name)
    spec = None if cell is None else SCHEMAS_BY_FUNCTION[cell.fn]
    return spec(cell.kwargs) if callable(spec) else spec


# --------------------------------------------------------------------------- reading the stored full run
def load_stored_cell(name: str, *, folder=None) -> dict:
    """The stored cell ``name`` (full scale, or the paper-scale :data:`PAPER_CELL`, maybe partial)
    as ``{"provenance", "data", "path"}``, checked against today's plan and schema."""
    scale = "paper" if name == PAPER_CELL else "full"
    plan = {c.name: c for c in cells(scale)}
    if name not in plan:
        names = [c.name for c in cells("full")] + [PAPER_CELL]
        raise ConfigError(f"chapter 4 has no stored cell {name!r}; cells: {', '.join(names)}")
    folder = Path(folder) if folder is not None else results_dir() / "ch4" / "cells"
    state = stored_state(folder, plan[name], scale)
    if state not in (("done", "partial") if scale == "paper" else ("done",)):
        raise ResultFileError(
            f"{cell_path(folder, name)}: stored cell {name!r} is {state} for today's {scale}-scale "
            f"plan (run: python -m lengthgen reproduce ch4 --scale {scale} --only {name})"
        )
    return load_stored("ch4", name, schema=schema(name, scale), folder=folder, scale=scale)


def stored_label_of(records: dict) -> str:
    """One line describing several stored cells (devices, torch, commits, summed wall time, dates)."""
    provs = [r["provenance"] for r in records.values()]
    seen = lambda key: ", ".join(sorted({str(p.get(key)) for p in provs}))  # noqa: E731
    commits = len({(p.get("git_commit") or "unknown")[:8] for p in provs})
    days = sorted({str(p.get("date", ""))[:10] for p in provs})
    wall = sum(p.get("wall_time_s") or 0.0 for p in provs)
    migrated = sum(1 for p in provs if p.get("migrated"))
    return (
        f"stored {provs[0].get('scale')} run: {len(provs)} cells ({seen('device')}, torch "
        f"{seen('torch_version')}, {commits} commit{'s' if commits > 1 else ''}, {wall:,.0f} s of "
        f"cell wall time, {' to '.join(dict.fromkeys([days[0], days[-1]]))}"
        + (f"; {migrated} migrated from the old store" if migrated else "")
        + ")"
    )


def _gather(layout: dict, folder=None) -> dict:
    """The cells of ``layout`` (key → a cell name or a list): data, provenance, paths, label."""
    recs, data = {}, {}
    for key, names in layout.items():
        one = isinstance(names, str)
        got = {n: load_stored_cell(n, folder=folder) for n in ([names] if one else names)}
        recs.update(got)
        data[key] = got[names]["data"] if one else [r["data"] for r in got.values()]
    return {
        "data": data,
        "provenance": {n: r["provenance"] for n, r in recs.items()},
        "paths": [r["path"] for r in recs.values()],
        "label": stored_label_of(recs),
    }


def stored_constructions(folder=None) -> dict:
    """The stored full-scale cells of claims 1–2, as :func:`_gather` returns them."""
    names = ("exhaustive", "automaton", "float", "bounds", "relu_min_width", "two_lengths")
    layout = {n: n for n in names} | {"float": f"float_n{checks('full')['float']['n']}"}
    return _gather(layout, folder)


def stored_paper_scale(folder=None) -> dict:
    """The stored paper-scale GPU cell as ``data["paper"]`` of :func:`_gather`."""
    return _gather({"paper": PAPER_CELL}, folder)


def paper_scale_rows(value: dict) -> list[dict]:
    """One row per member of a paper-scale value at its last evaluation, shaped like a
    length-generalization cell's rows (member keys, ``train``, one accuracy per ``str(m)``)."""
    fin = value["final"]
    return [
        {**m, "train": fin["train_acc"][i], **{L: acc[i] for L, acc in fin["acc"].items()}}
        for i, m in enumerate(value["members"])
    ]


def paper_scale_at(value: dict, index: int) -> dict:
    """The paper-scale value with evaluation ``index`` of its history (negative: from the end) as
    ``final``, so the readers of the last evaluation read it there."""
    hist = value.get("history") or []
    if not isinstance(index, int) or not -len(hist) <= index < len(hist):
        raise ConfigError(f"index must address one of the {len(hist)} evaluations, got {index!r}")
    return {**value, "final": {k: hist[index][k] for k in ("step", "train_acc", "acc")}}


def variant_name(m: dict) -> str:
    """A member's variant: ``sine``, ``sine+bias``, ``relu`` (or ``relu+bias``)."""
    return m["activation"] + ("+bias" if m["bias"] else "")


def _check_budget(value: dict, n: int) -> None:
    budgets = sorted({m["n"] for m in value["members"]})
    if n not in budgets:
        raise ConfigError(f"budget n = {n} is not one of the run's budgets {budgets}")


def paper_scale_ranges(value: dict, n: int) -> dict:
    """``{(variant, wd): (lo, hi)}`` at budget ``n``: the range of seed-mean accuracy over the
    held-out lengths at the last evaluation (section "At the paper's modulus")."""
    _check_budget(value, n)
    held = [str(L) for L in value["eval_lengths"] if L not in value["train_lengths"]]
    groups: dict = {}
    for r in paper_scale_rows(value):
        if r["n"] == n:
            groups.setdefault((variant_name(r), r["wd"]), []).append(r)
    means = {k: [float(np.mean([r[L] for r in g])) for L in held] for k, g in groups.items()}
    return {k: (min(v), max(v)) for k, v in sorted(means.items())}


def paper_scale_arrivals(value: dict, n: int, *, length: int = 811, level: float = 0.9) -> dict:
    """``{(variant, wd, seed): update}`` at budget ``n``: the first evaluation at which accuracy at
    ``length`` reached ``level`` (``None``: never), when extrapolation "arrives"."""
    _check_budget(value, n)
    out = {}
    for i, m in enumerate(value["members"]):
        if m["n"] == n:
            hits = (e["step"] for e in value["history"] if e["acc"][str(length)][i] >= level)
            out[(variant_name(m), m["wd"], m["seed"])] = next(hits, None)
    return out


def stored_training(folder=None) -> dict:
    """The stored full-scale training cells (claims 3–6, the timing), as :func:`_gather` returns
    them; a sweep's entry lists one cell per :data:`~.paper.LENGTHGEN_VARIANTS`."""
    sweep = lambda s: [lengthgen_cell_name(s, a, b) for a, b in LENGTHGEN_VARIANTS]  # noqa: E731
    layout = dict(underparam="underparam", overparam="overparam", lengthgen=sweep("lengthgen"))
    layout.update(timing="timing", lengthgen_long=sweep("lengthgen_long"))
    layout["lengthgen_paper_lr_60k"] = lengthgen_cell_name("lengthgen_paper_lr_60k", "sine", True)
    layout["budget_study"] = "budget_study"
    layout["transformer"] = f"transformer_m{protocol('full')['transformer']['m']}"
    return _gather(layout, folder)
