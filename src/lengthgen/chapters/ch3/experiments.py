"""Chapter 3's cells (``python -m lengthgen reproduce ch3``), from ``paper.PROTOCOL``: the α tables,
theory checks, lr grid, one ``<tier>__<encoding>__<group>__seed<s>`` cell per trained group
(:func:`study_plan`), App. F–H's cells; :func:`load` reads a stored cell (:func:`schema`)."""

from __future__ import annotations

import numpy as np
import torch

from lengthgen.chapters.ch3 import paper
from lengthgen.chapters.ch3 import realizability as rz
from lengthgen.chapters.ch3.paper import ALPHA_SPEC, POS_TASKS, STUDY
from lengthgen.chapters.ch3.realizability import MAIN_TASKS, SELECTION_RULES, relative_alpha
from lengthgen.config import ConfigError, check_choice, check_finite, check_positive_int
from lengthgen.engine.runs import Cell
from lengthgen.nn.positional import ENCODINGS, KernelFamily, frequencies
from lengthgen.store import ResultFileError, cells_dir, has_stored, load_stored
from lengthgen.store import stored_state, validate
from lengthgen.chapters.ch3.training import train_groups

CHAPTER = "ch3"


# --------------------------------------------------------------------------- α tables and theory
def _alpha_tab(encodings, tasks, lengths, rule, L0, fit) -> dict:
    """:func:`~.realizability.alpha_table` keyed ``"enc/task"``."""
    tab = rz.alpha_table(tuple(encodings), tuple(tasks), tuple(lengths), rule=rule, L0=L0, **fit)
    return {f"{e}/{t}": v for (e, t), v in tab.items()}


def alpha_tables(
    encodings=ALPHA_SPEC["encodings"],
    tasks=ALPHA_SPEC["tasks"],
    lengths=ALPHA_SPEC["lengths"],
    L0: int = ALPHA_SPEC["L0"],
    fit=None,
) -> dict:
    """``{rule: {"enc/task": {L: α}}}``, both rules (section "α_L for every encoding and task")."""
    fit = dict(paper.CE_FIT if fit is None else fit)  # checked by :func:`~.realizability.select`
    return {rule: _alpha_tab(encodings, tasks, lengths, rule, L0, fit) for rule in SELECTION_RULES}


#: The (rule, encoding) rows of the α tables that float64 cannot pin down (Φ_20's smallest singular
#: values are at its floor, so they move with the CPU's rounding): compared from storage only.
ILL_CONDITIONED_ROWS = (("min_norm", "sinusoidal"), ("min_norm", "rope"))


def alpha_differences(live: dict, stored: dict) -> dict:
    """Entries of two :func:`alpha_tables` that differ, compared, skipped (ill-conditioned)."""
    out = {"differ": 0, "compared": 0, "skipped": 0}
    for rule in SELECTION_RULES:
        for key, row in stored[rule].items():
            if (rule, key.split("/")[0]) in ILL_CONDITIONED_ROWS:
                out["skipped"] += len(row)
            else:
                out["compared"] += len(row)
                out["differ"] += sum(live[rule].get(key, {}).get(L) != v for L, v in row.items())
    return out


#: RoPE tasks of the fixed-offset claim (α_L = 1 up to L = 512).
FIXED_OFFSET_TASKS = ("prev", "skip2", "skip3", "skip5")


def paper_alpha_points() -> list[dict]:
    """Every CE α the paper prints (37), with its source, cell, L, frequencies and decimals."""
    P = paper
    pts = [("Prop. 4(a)", "rope/first", L, v, 16) for L, v in P.ROPE_FIRST_ALPHA.items()]
    pts += [("App. A.4", "sinusoidal/prev", L, v, 16) for L, v in P.SIN_PREV_ALPHA.items()]
    pts += [("Table 3", k, 60, row["alpha60"], 16) for k, row in P.TABLE3.items()]
    pts += [("App. I", "sinusoidal/prev", 60, v, nf) for nf, v in P.FREQ_SIN_PREV_ALPHA60.items()]
    pts += [("App. I", "sinusoidal/first", 60, v, nf) for nf, v in P.FREQ_SIN_FIRST_ALPHA60.items()]
    rope = [(t, nf) for t in ("prev", "skip3") for nf in (8, 16, 32) if (t, nf) != ("prev", 16)]
    pts += [("App. I", f"rope/{t}", 60, P.FREQ_ROPE_FIXED, nf) for t, nf in rope]
    for e in ENCODINGS:
        v = P.APP_E_ALPHA60["absolute" if e in P.APP_E_ABSOLUTE else "other"]
        pts += [("App. E", f"{e}/{t}", 60, v, 16) for t in POS_TASKS]
    out = []
    for source, cell, L, v, nf in pts:
        e, t = cell.split("/")
        out.append({"source": source, "encoding": e, "task": t, "L": int(L), "num_freq": nf})
        out[-1] |= {"paper": float(v), "decimals": 2 if abs(round(v, 2) - v) < 1e-9 else 3}
    return out


def lr_grid(*, lrs) -> dict:
    """The CE fit at each lr of ``lrs`` on :func:`paper_alpha_points` and the RoPE fixed offsets."""
    lrs = [check_finite("lr", lr, nonnegative=True) for lr in lrs]
    points, fixed = [], []
    for lr in lrs:
        for p in paper_alpha_points():
            a = rz.alpha(p["encoding"], p["task"], p["L"], num_freq=p["num_freq"], lr=lr)
            points.append({**p, "lr": lr, "alpha": a})
        for t in FIXED_OFFSET_TASKS:
            for L in ALPHA_SPEC["lengths"]:
                a = rz.alpha("rope", t, L, lr=lr)
                fixed.append({"lr": lr, "task": t, "L": int(L), "alpha": a})
    return {"lrs": lrs, "points": points, "fixed": fixed}


def theory_checks(*, n_trials: int, n_random: int) -> dict:
    """The executable theory checks (Props. 1–4, Thm. 2, App. A.5–A.6) at the given sizes."""
    n_trials = check_positive_int("n_trials", n_trials)
    res = {"prop1": rz.prop1_search(n=30, n_random=check_positive_int("n_random", n_random))}
    ce = list(paper.COUNTEREXAMPLE_KAPPA)
    arg = rz.relative_argmax(ce + [-10.0] * 16, 20)
    deep = sorted(set(arg[3:].tolist()))
    res["thm2_counterexample"] = {"kappa": ce, "row2_offset": int(arg[2]), "deep_offsets": deep}
    res["thm2_random"] = rz.thm2_random_kernels(4000, 200)
    peak = rz.peaked_kernel
    res["thm2_fixed_offset"] = {
        k: {L: relative_alpha(peak(c, L), k, L) for L in (30, 60, 128, 512, 5000)}
        for k, c in (("prev", 1), ("skip2", 2), ("skip3", 3), ("skip5", 5))
    }
    res["thm2_growing"] = {
        t: {c: relative_alpha(peak(c, 2 * c + 200), t, 2 * c + 200) for c in (1, 5, 15, 30)}
        for t in ("copy", "reverse")
    }
    k30, k1 = peak(30, 200_000), peak(1, 50_000)
    clip = lambda i, L: 1 if i < 30 else 30
    squares = lambda i, L: 2 if int(round(i**0.5)) ** 2 == i else 1
    res["thm2_clipped"] = {L: relative_alpha(k30, clip, L) for L in (40, 100, 1000, 200_000)}
    res["thm2_squares"] = {L: relative_alpha(k1, squares, L) for L in (200, 5000, 50_000)}
    parity = lambda i, L: 1 + i % 2
    res["thm2_parity"] = {c: relative_alpha(peak(c, 1000), parity, 1000) for c in (1, 2)}
    ladder = np.full(40_961, -1.0)
    for m in range(6):
        ladder[20 * 4**m] = m + 2
    res["thm2_ladder"] = {
        L: relative_alpha(ladder, "copy", L) for L in paper.THM2_LADDER["lengths"]
    }
    two = np.full(100, -1.0)
    two[10], two[30] = 5.0, 8.0
    # copy at L0: every query row's strict argmax is its target
    arg, t = rz.relative_argmax(two, paper.L0), rz.targets("copy", paper.L0)
    copy_L0 = all(arg[i] == i - int(t[i]) for i in (t >= 0).nonzero().flatten().tolist())
    res["thm2_two_lengths"] = {"copy_L0": copy_L0, "copy_60": relative_alpha(two, "copy", 60)}
    res["thm2_reverse_sweep"] = {"kernels": 20_000, "solved": rz.reverse_sweep(20_000)}
    res["prop2"] = {
        rule: {L: rz.prop2_montecarlo(L, n_trials=n_trials, rule=rule) for L in (30, 60)}
        for rule in ("min_norm", "generic")
    }
    res["prop3_copy"] = rz.prop3_monotone_copy()
    res["prop3_existence"] = rz.prop3_existence(1, 50_000)
    res["prop4"] = rz.duality_table()
    return res


def train_cell_group(tier, encoding, tasks, seed, *, device="cpu", progress=False, **protocol):
    """The cell of one trained group: :func:`~.training.train_groups` with one group."""
    kw = dict(device=device, progress=progress, **protocol)
    return train_groups(tier, encoding, [(tasks, seed)], **kw)[0]


# --------------------------------------------------------------------------- the plan
#: Run order of the encodings inside a (tier, seed): those whose α_L is informative first.
RUN_ORDER = ("rope", "sinusoidal", "learned_abs", "nope", "alibi")


def _protocol(scale: str) -> dict:
    return paper.PROTOCOL[check_choice("scale", scale, tuple(paper.PROTOCOL))]


def study_plan(scale: str) -> list[dict]:
    """The trained groups of ``scale`` (``key`` = cell name, tier, encoding, group, tasks, seed) in
    run order: 1L1H main, the deeper tiers' first seed, 1L1H pos, the other seeds, their pos."""
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
    """The keyword arguments of :func:`train_cell_group` for one group of :func:`study_plan`."""
    P = _protocol(scale)["study"]
    kw = {"tier": group["tier"], "encoding": group["encoding"], "tasks": list(group["tasks"])}
    kw |= {"seed": int(group["seed"])} | {k: P[k] for k in ("steps", "batch", "lr", "weight_decay")}
    kw |= {"lengths": list(P["lengths"])} | {k: P[k] for k in ("eval_n", "train_eval_n", "L0")}
    seeds = ("data_seed_offset", "data_seed_stride", "eval_seed_offset")
    return kw | {k: getattr(paper, k.upper()) for k in seeds}


def exact_min_norm_tables(
    encodings=rz.EXACT_ENCODINGS,
    tasks=ALPHA_SPEC["tasks"],
    lengths=ALPHA_SPEC["lengths"],
    L0: int = ALPHA_SPEC["L0"],
    dps: int = rz.EXACT_DPS,
) -> dict:
    """The exact min-norm rule (:func:`.realizability.exact_min_norm_alpha`) for the ill-conditioned
    encodings: α tables, ``l0_exact``, rows ``recomputed``, smallest singular values and ``dps``."""
    out = dict(alpha={}, l0_exact={}, recomputed=0, smallest_singular_value={}, dps=int(dps))
    for e in encodings:
        res = rz.exact_min_norm_alpha(e, tasks, lengths, L0, dps=dps)
        out["recomputed"] += res.pop("_recomputed")
        out["l0_exact"].update(res.pop("_l0_exact"))
        out["alpha"].update(res)
        out["smallest_singular_value"][e] = rz.exact_min_norm_spectrum(e, L0, dps=dps)[-1]
    return out


#: The CE-fit learning rates that reproduce the most printed α values in the lr grid (35 and 34
#: of 37 at 0.09 and 0.1; the ``lr_grid`` cell): the §6 statistics are recomputed at them.
LR_MATCH = (0.09, 0.1)


def ce_alpha_at_lrs(lrs, encodings, tasks, lengths, L0: int, fit: dict) -> dict:
    """α_L of the CE rule at each lr of ``lrs``: ``{lrs, alpha: {str(lr): table}}``."""
    lrs = [float(check_finite("lr", lr, nonnegative=True)) for lr in lrs]
    fits = {str(lr): {**fit, "lr": lr} for lr in lrs}
    alphas = {k: _alpha_tab(encodings, tasks, lengths, "ce", L0, f) for k, f in fits.items()}
    return {"lrs": lrs, "alpha": alphas}


def prop2_old_key(*, L: int = 128, m: int = 64, n_trials: int = 20_000, seed: int = 0) -> dict:
    """Prop. 2 with an old-key target (attend-first at row L − 1): ratio to 1/(k − 1) (§5)."""
    kw = dict(m=m, n_trials=n_trials, task="first", rule="min_norm", seed=seed, old_key=True)
    return rz.prop2_montecarlo(L, **kw)


# ---------------------------------------------- App. F–H, the robustness studies (details page)
#: App. G: the 1L1H study at other training lengths (3 seeds, evaluated at 3·L0); L0 = 20 is
#: the main study's seeds 0–2 (the same protocol), so only 10 and 40 are trained here.
APP_G = {"L0s": (10, 20, 40), "trained": (10, 40), "seeds": (0, 1, 2)}
#: App. H, Table 10: RoPE frequency scales on skip-3 (1L1H, the main study's 5 seeds). 0.03 and
#: 0.01 are the paper's; 1 (standard), 0.3 and 0.1 ("moderately low") are our reading of the rest.
ROPE_SCALES = (1.0, 0.3, 0.1, 0.03, 0.01)
#: App. F: vocabulary 64, d = 128, the paper's 2 seeds; the 1L1H tier (the 2L4H tier is not run).
APP_F = {"vocab": 64, "d_model": 128, "seeds": (0, 1), "tier": "1L1H"}
#: App. H, Table 9: induction at one and two layers; 3 seeds (ours), LG at L = 60 (ours).
INDUCTION = {"tiers": ("1L1H", "2L4H"), "seeds": (0, 1, 2)}
#: Planned cells not stored yet (``reproduce ch3 --scale full`` stores them; their claims are then
#: checked): App. G at L0 = 40, over 20 CPU-minutes per ensemble (5); App. F, about 13 each.
NOT_RUN: frozenset = frozenset(n for e in ENCODINGS for n in (f"appG__L0_40__{e}", f"appF__{e}"))
#: App. G's training lengths that are measured: those whose cells are all stored.
APP_G_MEASURED = tuple(
    L0 for L0 in APP_G["L0s"] if not {f"appG__L0_{L0}__{e}" for e in ENCODINGS} & NOT_RUN
)


def train_seeds(tier, encoding, tasks, seeds, *, setting: dict, **protocol) -> list[dict]:
    """Train ``tasks`` × ``seeds`` as one ensemble, its rows tagged with ``setting``."""
    rows = train_groups(tier, encoding, [(tasks, s) for s in seeds], **protocol)
    return [{**r, **setting} for g in rows for r in g]


train_seeds.stored_as = "lengthgen.chapters.ch3.robustness.train_seeds"


def _cell(name, tier, enc, tasks, seeds, **over) -> Cell:
    """A trained cell of App. C's protocol (:data:`paper.STUDY`), ``over`` changed (and tagged)."""
    kw = {"tier": tier, "encoding": enc, "tasks": list(tasks), "seeds": list(seeds)}
    kw |= {k: STUDY[k] for k in ("steps", "batch", "lr", "weight_decay", "eval_n", "train_eval_n")}
    kw |= {"L0": paper.L0, "lengths": list(STUDY["lengths"])} | over
    tag = {k: over[k] for k in ("L0", "rope_scale", "vocab") if k in over}
    return Cell(name, train_seeds, kw | {"setting": tag}, seeds=seeds)


def robustness_cells() -> list[Cell]:
    """The robustness cells of the full-scale plan, cheapest first."""
    G, F, I = APP_G["seeds"], APP_F, INDUCTION
    app_g = lambda L0: [
        _cell(f"appG__L0_{L0}__{e}", "1L1H", e, MAIN_TASKS, G, L0=L0, lengths=[3 * L0])
        for e in ENCODINGS
    ]
    sweep = [
        _cell(f"appH__rope_scale_{s:g}", "1L1H", "rope", ("skip3",), paper.SEEDS, rope_scale=s)
        for s in ROPE_SCALES
    ]
    ind = [
        _cell(f"appH__induction__{t}__{e}", t, e, ("induction",), I["seeds"], lengths=[60])
        for t in I["tiers"]
        for e in ENCODINGS
    ]
    size = {"vocab": F["vocab"], "d_model": F["d_model"]}
    big = [_cell(f"appF__{e}", F["tier"], e, MAIN_TASKS, F["seeds"], **size) for e in ENCODINGS]
    return [Cell("robustness_alpha", alpha_cell, {}), *app_g(10), *sweep, *ind, *app_g(40), *big]


class ScaledRope(KernelFamily):
    """RoPE's kernel family with every frequency multiplied by ``scale`` (App. H's sweep)."""

    def __init__(self, scale: float, **kw):
        self.scale = check_finite("scale", scale)  # before the base class sizes the features
        super().__init__("rope", **kw)

    def features(self, n: int, dtype=torch.float64) -> torch.Tensor:
        theta = self.scale * frequencies(self.num_freq, self.base)
        ang = torch.arange(n, dtype=torch.float64)[:, None] * theta
        return torch.stack([ang.cos(), ang.sin()], 2).reshape(n, -1).to(dtype)


def alpha_cell() -> dict:
    """α_L (CE) of App. G ``{L0: {"enc/task": α at 3·L0}}`` and App. H ``{scale: {L: α}}``."""
    appG = {
        str(L0): {
            f"{e}/{t}": rz.simulate(rz.fit_ce(fam, t, L0, **paper.CE_FIT), fam, t, 3 * L0, L0).alpha
            for e in ENCODINGS
            for fam in [KernelFamily(e, L0=L0)]
            for t in MAIN_TASKS
        }
        for L0 in APP_G["L0s"]
    }
    scaled = {}
    for s in ROPE_SCALES:
        fam = ScaledRope(s)
        W = rz.fit_ce(fam, "skip3", paper.L0, **paper.CE_FIT)
        scaled[f"{s:g}"] = {str(L): rz.simulate(W, fam, "skip3", L).alpha for L in STUDY["lengths"]}
    return {"appG": appG, "rope_scale": scaled}


alpha_cell.stored_as = "lengthgen.chapters.ch3.robustness.alpha_cell"


def cells(scale: str) -> list[Cell]:
    """The plan at ``scale``: single cells, the trained groups, at full scale App. F–H."""
    P = _protocol(scale)
    A = P["alpha"]
    spec = {"tasks": list(A["tasks"]), "lengths": list(A["lengths"]), "L0": A["L0"]}
    main = {"tasks": [t for t in A["tasks"] if t in MAIN_TASKS], "L0": A["L0"]}
    main["lengths"] = [L for L in A["lengths"] if L in paper.STUDY_LENGTHS]
    enc, fit = {"encodings": list(A["encodings"])}, {"fit": dict(A["fit"])}
    lr_match = {"lrs": list(LR_MATCH)} | enc | main | fit
    out = [
        Cell("alpha_tables", alpha_tables, enc | spec | fit),
        Cell("alpha_min_norm_exact", exact_min_norm_tables, spec),
        Cell("theory", theory_checks, dict(P["theory"])),
        Cell("alpha_lr_match", ce_alpha_at_lrs, lr_match),
        Cell("prop2_old_key", prop2_old_key, {"n_trials": P["theory"]["n_trials"]}),
    ]
    if "lr_grid" in P:
        out.append(Cell("lr_grid", lr_grid, {"lrs": list(P["lr_grid"]["lrs"])}))
    for g in study_plan(scale):
        out.append(Cell(g["key"], train_cell_group, group_kwargs(scale, g), seeds=(g["seed"],)))
    if scale == "full":  # App. F, G and H (details page), after the main study
        out += robustness_cells()
    return out


# --------------------------------------------------------------------------- stored cells
#: What the stored cells hold (:func:`lengthgen.store.validate`); a trained group's rows are the
#: declared tasks × lengths, tier, encoding and seed (:func:`check_group`).
GROUP_SCHEMA = "*.(tier|encoding|task|seed|L|final_loss|steps) *.(acc|train_acc):p"
SCHEMAS = {
    "alpha_tables": "(ce|min_norm)=encodings*tasks (ce|min_norm).*=lengths (ce|min_norm).*.*:p",
    "alpha_min_norm_exact": "l0_exact recomputed smallest_singular_value dps alpha.*.*:p",
    "alpha_lr_match": "lrs alpha.*.*.*:p",
    "prop2_old_key": "ratio bound n_trials m L unconditional:p",
    "robustness_alpha": "(appG|rope_scale).*.*:p",
    "lr_grid": "lrs (points|fixed).*.alpha:p",
    "theory": "prop1.(interior_strict_argmax|rows_checked|best_prev_margin) prop4.*.L prop2=2"
    " thm2_counterexample.(row2_offset|deep_offsets) thm2_random.violations.(low|high) prop2.*=2"
    " thm2_two_lengths.copy_L0 thm2_reverse_sweep.solved prop3_copy.(L|copy_offset|theta_min)"
    " prop3_existence.argmax prop3_copy.alpha:p prop3_existence.alpha_at_dmax:p"
    " thm2_(fixed_offset.*.*|growing.*.*|clipped.*|squares.*|parity.*|ladder.*):p"
    " thm2_two_lengths.copy_60:p prop2.*.*.(bound|conditional|unconditional|p_new):p",
}


def schema(name: str, scale: str = "full") -> str | None:
    """What the stored cell ``name`` holds: :data:`SCHEMAS`, else a trained group's."""
    return SCHEMAS.get(name, GROUP_SCHEMA)


def check_group(rows, kwargs: dict, path="<data>") -> list[dict]:
    """Check a trained group's ``rows`` against :data:`GROUP_SCHEMA` and its cell's ``kwargs``
    (:func:`group_kwargs`): one row per declared task × length, each with the declared tier,
    encoding, seed and steps. Raises :class:`ResultFileError` naming ``path``; returns ``rows``."""
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
        for f in ("tier", "encoding", "seed", "steps"):
            if r[f] != kwargs[f]:
                msg = f"field '{i}.{f}' is {r[f]!r}, but the cell declares {kwargs[f]!r}"
                raise ResultFileError(f"{bad}: {msg}")
    return rows


def load(name: str, *, folder=None) -> dict:
    """The stored full-scale cell ``name`` (provenance, data, path), validated (:func:`_load`)."""
    return _load(name, {c.name: c for c in cells("full")}, folder)


def _load(name: str, plan: dict, folder) -> dict:
    if name not in plan:
        raise ConfigError(
            f"no chapter-3 cell {name!r}; the cells are {', '.join(SCHEMAS)}, appF__*, appG__*, "
            "appH__* and <tier>__<encoding>__<main|pos>__seed<s> (e.g. 1L1H__rope__main__seed0)"
        )
    folder = cells_dir(CHAPTER, folder)
    rec = load_stored(CHAPTER, name, schema=schema(name), folder=folder)
    if stored_state(folder, plan[name], "full") != "done":
        raise ResultFileError(
            f"{rec['path']} holds {name} from another configuration than today's plan (config hash "
            f"differs); re-run `python -m lengthgen reproduce ch3 --scale full --only {name}`"
        )
    if plan[name].fn is train_cell_group:
        check_group(rec["data"], plan[name].kwargs, rec["path"])
    return rec


def stored_groups(folder=None) -> dict[str, dict]:
    """Every stored full-scale trained group, ``{cell name: load(name)}`` in cell-name order."""
    folder, plan = cells_dir(CHAPTER, folder), {c.name: c for c in cells("full")}
    groups = [n for n, c in plan.items() if c.fn is train_cell_group]
    names = sorted(n for n in groups if has_stored(CHAPTER, n, folder=folder))
    return {n: _load(n, plan, folder) for n in names}


def study_rows(folder=None) -> list[dict]:
    """All rows of the stored full-scale study, in cell-name order (reproducible resampling)."""
    return [row for rec in stored_groups(folder).values() for row in rec["data"]]
