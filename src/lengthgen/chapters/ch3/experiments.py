"""Chapter 3's cells (``python -m lengthgen reproduce ch3``), built from ``paper.PROTOCOL``.

:func:`cells` lists them: the α tables, the theory checks, the learning-rate grid and one
``<tier>__<encoding>__<group>__seed<s>`` cell per trained group (:func:`train_cell_group`, in the
order of :func:`study_plan`). :func:`load` reads a stored cell checked against :func:`schema` (and
:func:`check_group`); :func:`study_rows` gathers every stored group's measurements.
"""

from __future__ import annotations

import numpy as np
import torch

from lengthgen.chapters.ch3 import paper
from lengthgen.chapters.ch3.paper import (
    ALPHA_SPEC,
    COUNTEREXAMPLE_KAPPA,
    DATA_SEED_OFFSET,
    DATA_SEED_STRIDE,
    EVAL_SEED_OFFSET,
    POS_TASKS,
)
from lengthgen.chapters.ch3.exact_min_norm import (
    EXACT_DPS,
    EXACT_ENCODINGS,
    exact_min_norm_alpha,
    exact_min_norm_spectrum,
)
from lengthgen.chapters.ch3.realizability import (
    L0_DEFAULT,
    MAIN_TASKS,
    SELECTION_RULES,
    alpha,
    alpha_table,
    check_task,
    duality_table,
    peaked_kernel,
    prop1_search,
    prop2_montecarlo,
    prop3_existence,
    prop3_monotone_copy,
    relative_alpha,
    relative_argmax,
    reverse_sweep,
    targets,
    thm2_random_kernels,
)
from lengthgen.config import ConfigError, check_choice, check_finite, check_positive_int
from lengthgen.engine.runs import Cell
from lengthgen.nn.decoder import Decoder
from lengthgen.nn.positional import ENCODINGS, check_encoding
from lengthgen.store import ResultFileError, Schema
from lengthgen.chapters.ch3.training import (
    length_schedule,
    make_sampler,  # noqa: F401 -- lengthgen.benchmarks imports it from here
    masked_ce,  # noqa: F401 -- lengthgen.benchmarks imports it from here
    train_groups,
)


CHAPTER = "ch3"


# --------------------------------------------------------------------------- α tables and theory
def _alpha_tab(encodings, tasks, lengths, rule, L0, fit) -> dict:
    """:func:`~.realizability.alpha_table` keyed ``"enc/task"``."""
    tab = alpha_table(tuple(encodings), tuple(tasks), tuple(lengths), rule=rule, L0=L0, **fit)
    return {f"{e}/{t}": v for (e, t), v in tab.items()}


def alpha_tables(
    encodings=ALPHA_SPEC["encodings"],
    tasks=ALPHA_SPEC["tasks"],
    lengths=ALPHA_SPEC["lengths"],
    L0: int = ALPHA_SPEC["L0"],
    fit=None,
) -> dict:
    """``{rule: {"enc/task": {L: α}}}`` for both selection rules (section "α_L for every encoding
    and task"); ``fit`` configures the CE rule (default :data:`~.paper.CE_FIT`)."""
    fit = dict(paper.CE_FIT if fit is None else fit)
    if set(fit) - set(paper.CE_FIT):
        raise ConfigError(f"fit has unknown keys; valid: {sorted(paper.CE_FIT)}")
    for e in encodings:
        check_encoding(e)
    for t in tasks:
        check_task(t)
    return {rule: _alpha_tab(encodings, tasks, lengths, rule, L0, fit) for rule in SELECTION_RULES}


#: The (rule, encoding) rows of the α tables that float64 cannot pin down: Φ_20 of the sinusoidal
#: and RoPE bases has singular values down to the float64 floor, so the min-norm interpolant's
#: smallest kept components (and the argmaxes they decide) change with the CPU's rounding. These
#: rows are compared from stored results only (section "α_L for every encoding and task").
ILL_CONDITIONED_ROWS = (("min_norm", "sinusoidal"), ("min_norm", "rope"))


def alpha_differences(live: dict, stored: dict) -> dict:
    """``{"differ", "compared", "skipped"}`` counts of the entries of two :func:`alpha_tables`
    results: the :data:`ILL_CONDITIONED_ROWS` are skipped, every other entry must be equal (the CE
    fit starts from zero and runs fixed steps, so it is deterministic)."""
    out = {"differ": 0, "compared": 0, "skipped": 0}
    for rule in SELECTION_RULES:
        for key, row in stored[rule].items():
            if (rule, key.split("/")[0]) in ILL_CONDITIONED_ROWS:
                out["skipped"] += len(row)
                continue
            mine = live[rule].get(key, {})
            out["compared"] += len(row)
            out["differ"] += sum(mine.get(L) != v for L, v in row.items())
    return out


#: RoPE tasks of the fixed-offset claim (α_L = 1 up to L = 512).
FIXED_OFFSET_TASKS = ("prev", "skip2", "skip3", "skip5")


def paper_alpha_points() -> list[dict]:
    """Every α of a CE-fitted head that the paper prints (37: Prop. 4(a), App. A.4, Table 3, App. I
    and App. E) as ``{"source", "encoding", "task", "L", "num_freq", "paper", "decimals"}``, where
    ``decimals`` is the printed precision (two, or three for values such as 0.055)."""
    pts = [("Prop. 4(a)", "rope/first", L, v, 16) for L, v in paper.ROPE_FIRST_ALPHA.items()]
    pts += [("App. A.4", "sinusoidal/prev", L, v, 16) for L, v in paper.SIN_PREV_ALPHA.items()]
    pts += [("Table 3", k, 60, row["alpha60"], 16) for k, row in paper.TABLE3.items()]
    pts += [
        ("App. I", "sinusoidal/prev", 60, v, nf) for nf, v in paper.FREQ_SIN_PREV_ALPHA60.items()
    ]
    pts += [
        ("App. I", "sinusoidal/first", 60, v, nf) for nf, v in paper.FREQ_SIN_FIRST_ALPHA60.items()
    ]
    pts += [
        ("App. I", f"rope/{t}", 60, paper.FREQ_ROPE_FIXED, nf)
        for t in ("prev", "skip3")
        for nf in (8, 16, 32)
        if not (t == "prev" and nf == 16)
    ]
    for e in ENCODINGS:
        v = paper.APP_E_ALPHA60["absolute" if e in paper.APP_E_ABSOLUTE else "other"]
        pts += [("App. E", f"{e}/{t}", 60, v, 16) for t in POS_TASKS]
    out = []
    for source, cell, L, v, nf in pts:
        e, t = cell.split("/")
        out.append({"source": source, "encoding": e, "task": t, "L": int(L), "num_freq": nf})
        out[-1] |= {"paper": float(v), "decimals": 2 if abs(round(v, 2) - v) < 1e-9 else 3}
    return out


def lr_grid(*, lrs) -> dict:
    """The CE fit at every learning rate in ``lrs`` (section "Selection-rule dependence"):
    ``{"lrs", "points", "fixed"}`` — ``points``: one row per (lr, :func:`paper_alpha_points`) with
    our ``alpha``; ``fixed``: one row per (lr, task of :data:`FIXED_OFFSET_TASKS`, L) on RoPE."""
    lrs = [check_finite("lr", lr, nonnegative=True) for lr in lrs]
    points, fixed = [], []
    for lr in lrs:
        for p in paper_alpha_points():
            a = alpha(p["encoding"], p["task"], p["L"], num_freq=p["num_freq"], lr=lr)
            points.append({**p, "lr": lr, "alpha": a})
        for t in FIXED_OFFSET_TASKS:
            for L in ALPHA_SPEC["lengths"]:
                fixed.append(
                    {"lr": lr, "task": t, "L": int(L), "alpha": alpha("rope", t, L, lr=lr)}
                )
    return {"lrs": lrs, "points": points, "fixed": fixed}


def theory_checks(*, n_trials: int, n_random: int) -> dict:
    """All executable theory checks (Props. 1–4, Thm. 2, App. A.5–A.6; sections "Theorem 2" to
    "Proposition 4"). ``n_trials`` (Monte-Carlo sample per (L, rule) of Prop. 2) and ``n_random``
    (random W of Prop. 1) come from ``paper.PROTOCOL``; every other check has a fixed size.
    """
    n_trials = check_positive_int("n_trials", n_trials)
    n_random = check_positive_int("n_random", n_random)
    res = {"prop1": prop1_search(n=30, n_random=n_random)}
    ce = list(COUNTEREXAMPLE_KAPPA)
    arg = relative_argmax(ce + [-10.0] * 16, 20)
    res["thm2_counterexample"] = {
        "kappa": ce,
        "row2_offset": int(arg[2]),
        "deep_offsets": sorted(set(arg[3:].tolist())),
    }
    res["thm2_random"] = thm2_random_kernels(4000, 200)
    res["thm2_fixed_offset"] = {
        k: {L: relative_alpha(peaked_kernel(c, L), k, L) for L in (30, 60, 128, 512, 5000)}
        for k, c in (("prev", 1), ("skip2", 2), ("skip3", 3), ("skip5", 5))
    }
    res["thm2_growing"] = {
        t: {
            c: relative_alpha(peaked_kernel(c, 2 * c + 200), t, 2 * c + 200) for c in (1, 5, 15, 30)
        }
        for t in ("copy", "reverse")
    }
    k30 = peaked_kernel(30, 200_000)
    res["thm2_clipped"] = {
        L: relative_alpha(k30, lambda i, L: 1 if i < 30 else 30, L)
        for L in (40, 100, 1000, 200_000)
    }
    k1 = peaked_kernel(1, 50_000)
    res["thm2_squares"] = {
        L: relative_alpha(k1, lambda i, L: 2 if int(round(i**0.5)) ** 2 == i else 1, L)
        for L in (200, 5000, 50_000)
    }
    res["thm2_parity"] = {
        c: relative_alpha(peaked_kernel(c, 1000), lambda i, L: 1 + i % 2, 1000) for c in (1, 2)
    }
    ladder = np.full(40_961, -1.0)
    for m in range(6):
        ladder[20 * 4**m] = m + 2
    res["thm2_ladder"] = {
        L: relative_alpha(ladder, "copy", L) for L in (40, 160, 640, 2560, 10240, 40960)
    }
    two = np.full(100, -1.0)
    two[10], two[30] = 5.0, 8.0
    # copy at L0: every query row's strict argmax is its target
    arg, t = relative_argmax(two, L0_DEFAULT), targets("copy", L0_DEFAULT)
    copy_L0 = all(arg[i] == i - int(t[i]) for i in (t >= 0).nonzero().flatten().tolist())
    res["thm2_two_lengths"] = {"copy_L0": copy_L0, "copy_60": relative_alpha(two, "copy", 60)}
    res["thm2_reverse_sweep"] = {"kernels": 20_000, "solved": reverse_sweep(20_000)}
    res["prop2"] = {
        rule: {L: prop2_montecarlo(L, n_trials=n_trials, rule=rule) for L in (30, 60)}
        for rule in ("min_norm", "generic")
    }
    res["prop3_copy"] = prop3_monotone_copy()
    res["prop3_existence"] = prop3_existence(1, 50_000)
    res["prop4"] = duality_table()
    return res


def train_cell_group(
    tier: str,
    encoding: str,
    tasks,
    seed: int,
    *,
    device: str = "cpu",
    progress: bool = False,
    **protocol,
) -> list[dict]:
    """The cell function of every trained group (section "The trained study"): one ensemble
    (members ``tasks``, init seed ``seed``), :func:`~.training.train_groups` with one group;
    ``protocol`` is the rest of :func:`group_kwargs`. One row per (task, L): ``{tier, encoding,
    task, seed, L, acc, train_acc, final_loss, steps}``."""
    return train_groups(
        tier, encoding, [(tasks, seed)], device=device, progress=progress, **protocol
    )[0]


# --------------------------------------------------------------------------- the plan
#: Run order of the encodings inside a (tier, seed): those whose α_L is informative first.
RUN_ORDER = ("rope", "sinusoidal", "learned_abs", "nope", "alibi")


def _protocol(scale: str) -> dict:
    return paper.PROTOCOL[check_choice("scale", scale, tuple(paper.PROTOCOL))]


def study_plan(scale: str) -> list[dict]:
    """The trained groups of ``scale`` in run order, as ``{"key", "tier", "encoding", "group",
    "tasks", "seed"}`` (``key`` is the cell name). The order decides what exists when a budget-limited
    run stops: (0) 1L1H main groups, (1) the first seed of the deeper tiers, (2) 1L1H pos groups,
    (3) the other deeper seeds, (4) their pos groups; encodings follow :data:`RUN_ORDER`.
    """
    P = _protocol(scale)["study"]
    first_tier, first_seed = P["tiers"][0], P["seeds"][0]

    def band(g):
        pos = g["group"] == "pos"
        if g["tier"] == first_tier:
            return 2 if pos else 0
        return 4 if pos else (1 if g["seed"] == first_seed else 3)

    plan = [
        {"key": f"{tier}__{enc}__{gname}__seed{seed}", "tier": tier, "encoding": enc}
        | {"group": gname, "tasks": tuple(tasks), "seed": seed}
        for tier in P["tiers"]
        for seed in P["seeds"]
        for gname, tasks in P["groups"].items()
        for enc in sorted(P["encodings"], key=RUN_ORDER.index)
    ]
    return sorted(plan, key=band)  # stable: tier, seed, encoding order kept inside a band


def group_kwargs(scale: str, group: dict) -> dict:
    """The complete keyword arguments of :func:`train_cell_group` for one group of
    :func:`study_plan` at ``scale`` (what the cell's configuration hash covers)."""
    P = _protocol(scale)["study"]
    kw = {"tier": group["tier"], "encoding": group["encoding"], "tasks": list(group["tasks"])}
    kw |= {"seed": int(group["seed"])}
    kw |= {k: P[k] for k in ("steps", "batch", "lr", "weight_decay")}
    kw |= {"lengths": list(P["lengths"])}
    kw |= {k: P[k] for k in ("eval_n", "train_eval_n", "L0")}
    return kw | {
        "data_seed_offset": DATA_SEED_OFFSET,
        "data_seed_stride": DATA_SEED_STRIDE,
        "eval_seed_offset": EVAL_SEED_OFFSET,
    }


def study_matmul_flops(scale: str) -> dict:
    """Floating-point operations of the trained study's matrix products at ``scale``
    (:meth:`~lengthgen.nn.decoder.Decoder.matmul_flops`: every member's forward and backward pass at
    each update's length, plus the evaluation's forward passes): ``{"total", "train", "eval",
    "per_group": {key: flops}}`` (book page "What a reproduction costs")."""
    P = _protocol(scale)["study"]
    train = evals = 0
    per_group = {}
    for g in study_plan(scale):
        model = Decoder.tier(g["tier"], g["encoding"], L0=P["L0"])
        sched = length_schedule(P["steps"], P["L0"], g["seed"])
        ns, counts = torch.unique(sched, return_counts=True)
        tr = sum(int(c) * model.matmul_flops(P["batch"], int(n)) for n, c in zip(ns, counts))
        ev = sum(model.matmul_flops(P["eval_n"], L, backward=False) for L in P["lengths"])
        train_lengths = range(P["L0"] // 2, P["L0"] + 1)
        ev += sum(model.matmul_flops(P["train_eval_n"], n, backward=False) for n in train_lengths)
        E = len(g["tasks"])
        per_group[g["key"]] = E * (tr + ev)
        train, evals = train + E * tr, evals + E * ev
    return {"total": train + evals, "train": train, "eval": evals, "per_group": per_group}


def exact_min_norm_tables(
    encodings=EXACT_ENCODINGS,
    tasks=ALPHA_SPEC["tasks"],
    lengths=ALPHA_SPEC["lengths"],
    L0: int = ALPHA_SPEC["L0"],
    dps: int = EXACT_DPS,
) -> dict:
    """The exact min-norm rule (:func:`~.exact_min_norm.exact_min_norm_alpha`) for the encodings
    float64 cannot handle: ``{"alpha": {"enc/task": {L: α}}, "l0_exact": {"enc/task": bool},
    "recomputed": rows, "smallest_singular_value": {enc: σ_min}, "dps": dps}``."""
    out = {"alpha": {}, "l0_exact": {}, "recomputed": 0, "smallest_singular_value": {}}
    out["dps"] = int(dps)
    for e in encodings:
        res = exact_min_norm_alpha(e, tasks, lengths, L0, dps=dps)
        out["recomputed"] += res.pop("_recomputed")
        out["l0_exact"].update(res.pop("_l0_exact"))
        out["alpha"].update(res)
        out["smallest_singular_value"][e] = exact_min_norm_spectrum(e, L0, dps=dps)[-1]
    return out


#: The CE-fit learning rates that reproduce the most printed α values in the lr grid (35 and 34
#: of 37 at 0.09 and 0.1; the ``lr_grid`` cell): the §6 statistics are recomputed at them.
LR_MATCH = (0.09, 0.1)


def ce_alpha_at_lrs(
    lrs=LR_MATCH,
    encodings=ENCODINGS,
    tasks=MAIN_TASKS,
    lengths=paper.STUDY_LENGTHS,
    L0: int = L0_DEFAULT,
    fit=None,
) -> dict:
    """α_L of the CE rule at each learning rate of ``lrs`` (steps and weight decay of ``fit``,
    default the paper's): ``{"lrs": [...], "alpha": {str(lr): {"enc/task": {L: α}}}}``, for the §6
    statistics at the learning rates that match the paper's printed α best."""
    base = dict(paper.CE_FIT if fit is None else fit)
    lrs = [float(check_finite("lr", lr, nonnegative=True)) for lr in lrs]
    alphas = {
        str(lr): _alpha_tab(encodings, tasks, lengths, "ce", L0, {**base, "lr": lr}) for lr in lrs
    }
    return {"lrs": lrs, "alpha": alphas}


def prop2_old_key(*, L: int = 128, m: int = 64, n_trials: int = 20_000, seed: int = 0) -> dict:
    """Prop. 2 with a target among the trained keys (attend-first at row L − 1): the min-norm
    selection's hit rate and its ratio to the bound 1/(k − 1), which the paper puts at up to 5.2
    for m = 64, L = 128 (§5)."""
    return prop2_montecarlo(
        L, m=m, n_trials=n_trials, task="first", rule="min_norm", seed=seed, old_key=True
    )


def cells(scale: str) -> list[Cell]:
    """The chapter's reproduction plan at ``scale`` (``smoke`` or ``full``): the single cells (the
    ``lr_grid`` where the scale plans it), one cell per trained group in :func:`study_plan` order,
    then at full scale App. F, G and H (:mod:`~.robustness`)."""
    P = _protocol(scale)
    A = P["alpha"]
    spec = {"tasks": list(A["tasks"]), "lengths": list(A["lengths"]), "L0": A["L0"]}
    main = {
        "tasks": [t for t in A["tasks"] if t in MAIN_TASKS],
        "lengths": [L for L in A["lengths"] if L in paper.STUDY_LENGTHS],
    }
    enc, fit = {"encodings": list(A["encodings"])}, {"fit": dict(A["fit"])}
    out = [
        Cell("alpha_tables", alpha_tables, enc | spec | fit),
        Cell("alpha_min_norm_exact", exact_min_norm_tables, spec),
        Cell("theory", theory_checks, dict(P["theory"])),
        Cell(
            "alpha_lr_match",
            ce_alpha_at_lrs,
            {"lrs": list(LR_MATCH)} | enc | main | {"L0": A["L0"]} | fit,
        ),
        Cell("prop2_old_key", prop2_old_key, {"n_trials": P["theory"]["n_trials"]}),
    ]
    if "lr_grid" in P:
        out.append(Cell("lr_grid", lr_grid, {"lrs": list(P["lr_grid"]["lrs"])}))
    for g in study_plan(scale):
        out.append(Cell(g["key"], train_cell_group, group_kwargs(scale, g), seeds=(g["seed"],)))
    if scale == "full":  # App. F, G and H (details page), after the main study
        from lengthgen.chapters.ch3 import robustness

        out += robustness.cells()
    return out


# --------------------------------------------------------------------------- stored cells
#: A stored trained group: one row per (task, L), accuracies in [0, 1] (that the rows are the
#: declared tasks × lengths, tier, encoding and seed is :func:`check_group`'s).
GROUP_SCHEMA = Schema(
    "ch3 study group",
    required=tuple(
        f"*.{k}" for k in ("tier", "encoding", "task", "seed", "L", "final_loss", "steps")
    ),
    probabilities=("*.acc", "*.train_acc"),
)
#: The stored theory checks (``theory`` cell): every check present, rates and α values in [0, 1].
THEORY_SCHEMA = Schema(
    "ch3 theory checks",
    required=(
        "prop1.interior_strict_argmax",
        "prop1.rows_checked",
        "prop1.best_prev_margin",
        "thm2_counterexample.row2_offset",
        "thm2_counterexample.deep_offsets",
        "thm2_random.violations.low",
        "thm2_random.violations.high",
        "thm2_two_lengths.copy_L0",
        "thm2_reverse_sweep.solved",
        "prop3_copy.L",
        "prop3_copy.copy_offset",
        "prop3_copy.theta_min",
        "prop3_existence.argmax",
        "prop4.*.L",
    ),
    probabilities=(
        *(f"thm2_{k}" for k in ("fixed_offset.*.*", "growing.*.*", "clipped.*", "squares.*")),
        *(f"thm2_{k}" for k in ("parity.*", "ladder.*", "two_lengths.copy_60")),
        *(f"prop2.*.*.{k}" for k in ("bound", "conditional", "unconditional", "p_new")),
        "prop3_copy.alpha",
        "prop3_existence.alpha_at_dmax",
    ),
    counts=(("prop2", lambda d: 2), ("prop2.*", lambda d: 2)),
)


def schema(name: str, scale: str = "full") -> Schema | None:
    """The schema of the stored cell ``name`` of :func:`cells` at ``scale`` (α tables counted
    against that scale's protocol; any cell not named here is a trained group:
    :data:`GROUP_SCHEMA`, plus :func:`check_group`)."""
    A = _protocol(scale)["alpha"]
    n_cells, n_lengths = len(A["encodings"]) * len(A["tasks"]), len(A["lengths"])
    rules = SELECTION_RULES
    schemas = {
        "alpha_tables": Schema(
            "ch3 alpha tables",
            required=rules,
            probabilities=tuple(f"{r}.*.*" for r in rules),
            counts=tuple((r, lambda d: n_cells) for r in rules)
            + tuple((f"{r}.*", lambda d: n_lengths) for r in rules),
        ),
        "alpha_min_norm_exact": Schema(
            "ch3 exact min-norm tables",
            required=("alpha", "l0_exact", "recomputed", "smallest_singular_value", "dps"),
            probabilities=("alpha.*.*",),
        ),
        "alpha_lr_match": Schema(
            "ch3 CE α at the matching learning rates",
            required=("lrs", "alpha"),
            probabilities=("alpha.*.*.*",),
        ),
        "prop2_old_key": Schema(
            "ch3 Prop. 2 with an old key",
            required=("ratio", "bound", "n_trials", "m", "L"),
            probabilities=("unconditional",),
        ),
        "theory": THEORY_SCHEMA,
        "robustness_alpha": Schema(
            "ch3 robustness α",
            required=("appG", "rope_scale"),
            probabilities=("appG.*.*", "rope_scale.*.*"),
        ),
        "lr_grid": Schema(
            "ch3 lr grid",
            required=("lrs", "points", "fixed"),
            probabilities=("points.*.alpha", "fixed.*.alpha"),
        ),
    }
    return schemas.get(name, GROUP_SCHEMA)


def check_group(rows, kwargs: dict, path="<data>") -> list[dict]:
    """Check a trained group's ``rows`` against :data:`GROUP_SCHEMA` and its cell's configuration
    ``kwargs`` (:func:`group_kwargs`): one row per declared task × length, each with the declared
    tier, encoding, seed and steps. Raises :class:`ResultFileError` naming ``path`` and the field;
    returns ``rows``."""
    from lengthgen.store import validate

    bad = f"invalid ch3 study group result {path}"
    if not isinstance(rows, list):
        raise ResultFileError(f"{bad}: expected a list of rows, got {type(rows).__name__}")
    validate(rows, GROUP_SCHEMA, path)
    want = [(t, int(L)) for t in kwargs["tasks"] for L in kwargs["lengths"]]
    got = [(r["task"], r["L"]) for r in rows]
    if sorted(got) != sorted(want):
        raise ResultFileError(
            f"{bad}: rows (task, L) {sorted(set(got) ^ set(want)) or 'repeated'} differ from the "
            f"declared {len(kwargs['tasks'])} tasks × {len(kwargs['lengths'])} lengths"
        )
    for i, r in enumerate(rows):
        for field in ("tier", "encoding", "seed", "steps"):
            if r[field] != kwargs[field]:
                raise ResultFileError(
                    f"{bad}: field '{i}.{field}' is {r[field]!r}, but the cell declares "
                    f"{kwargs[field]!r}"
                )
    return rows


def load(name: str, *, folder=None) -> dict:
    """The stored full-scale cell ``name`` (default folder ``results/ch3/cells``) as
    ``{"provenance", "data", "path"}``, validated against :func:`schema`, :func:`check_group` for a
    trained group, and today's configuration hash; a failure raises :class:`ResultFileError` (or
    :class:`~lengthgen.engine.runs.ScaleConflict`) naming the file."""
    return _load(name, {c.name: c for c in cells("full")}, folder)


def _cells_folder(folder):
    from lengthgen.store import results_dir

    return results_dir() / CHAPTER / "cells" if folder is None else folder


def _load(name: str, plan: dict, folder) -> dict:
    from lengthgen.engine import runs

    if name not in plan:
        raise ConfigError(
            f"no chapter-3 cell {name!r}; the cells are alpha_tables, alpha_min_norm_exact, "
            "theory, alpha_lr_match, prop2_old_key, lr_grid, robustness_alpha, the robustness "
            "studies appF__*, appG__*, appH__* and <tier>__<encoding>__<main|pos>__seed<s> "
            "(e.g. 1L1H__rope__main__seed0)"
        )
    folder = _cells_folder(folder)
    rec = runs.load_stored(CHAPTER, name, schema=schema(name), folder=folder)
    if runs.stored_state(folder, plan[name], "full") != "done":
        raise ResultFileError(
            f"{rec['path']} holds {name} computed with another configuration than today's plan "
            f"(config hash differs); re-run `python -m lengthgen reproduce ch3 --scale full --only {name}`"
        )
    if plan[name].fn is train_cell_group:
        check_group(rec["data"], plan[name].kwargs, rec["path"])
    return rec


def stored_groups(folder=None) -> dict[str, dict]:
    """Every stored full-scale trained group, ``{cell name: load(name)}`` in cell-name order (the
    planned groups that are not stored are left out)."""
    from lengthgen.engine import runs

    folder = _cells_folder(folder)
    plan = {c.name: c for c in cells("full")}
    names = sorted(
        n
        for n, c in plan.items()
        if c.fn is train_cell_group and runs.has_stored(CHAPTER, n, folder=folder)
    )
    return {n: _load(n, plan, folder) for n in names}


def study_rows(folder=None) -> list[dict]:
    """All measurement rows of the stored full-scale study (:func:`stored_groups`), in cell-name
    order so that the statistics' resampling is reproducible; empty when nothing is stored."""
    return [row for rec in stored_groups(folder).values() for row in rec["data"]]
