"""Chapter 3 (Han, Chai & Wang 2026): α_L tables, theory checks and the trained-transformer study.

The chapter's reproduction (``python -m lengthgen reproduce ch3``) is the list of cells returned by
:func:`cells`, run by the runs facility (:mod:`lengthgen.engine.runs`) and built from
:data:`lengthgen.chapters.ch3.paper.PROTOCOL`:

* ``alpha_tables`` — :func:`alpha_tables`: α_L for every (encoding, task, L) and both selection
  rules (chapter section "α_L for every encoding and task");
* ``theory`` — :func:`theory_checks`: the executable checks of Props. 1–4 and Thm. 2;
* ``lr_grid`` — :func:`lr_grid`: the paper's α values and the RoPE fixed offsets under the CE fit
  at every learning rate of :data:`lengthgen.chapters.ch3.paper.LR_GRID` (the paper states none);
* one cell per trained group, named ``<tier>__<encoding>__<group>__seed<s>`` —
  :func:`train_cell_group`: one ensemble of decoders (:mod:`lengthgen.nn.decoder`, trained through
  :func:`lengthgen.engine.train.train_ensemble`) with the group's tasks as members, measured on the
  extrapolation rows [L0, L) (section "The trained study"). :func:`study_plan` gives their order.

Full-scale cells are stored under ``results/ch3/cells/``. :func:`load` reads one, checked against
its schema (:data:`ALPHA_SCHEMA`, :data:`THEORY_SCHEMA`, :data:`GROUP_SCHEMA` plus the group's
declared tasks, lengths and seed); :func:`study_rows` gathers the measurements of every stored
group, and :func:`study_stats`, :func:`cell_table`, :func:`content_channel` and
:func:`selection_ablation` compute the §6, App. D and App. E statistics from them.
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
)
from lengthgen.chapters.ch3.paper import (
    POS_TASKS,
)  # (also ch3.POS_TASKS in the chapter)
from lengthgen.chapters.ch3.realizability import (
    EXACT_DPS,
    EXACT_ENCODINGS,
    L0_DEFAULT,
    MAIN_TASKS,
    SELECTION_RULES,
    TASKS,
    alpha_table,
    check_task,
    duality_table,
    exact_min_norm_alpha,
    exact_min_norm_spectrum,
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
from lengthgen.config import (
    ConfigError,
    check_choice,
    check_finite,
    check_positive_int,
    check_probability,
    get_device,
)
from lengthgen.engine.runs import Cell, refresh_difference
from lengthgen.nn.decoder import TIERS, Decoder
from lengthgen.nn.positional import ENCODINGS, check_encoding
from lengthgen.store import ResultFileError, Schema

#: Label of the positions a task does not score (ignored by the loss and the accuracy).
IGNORE = -100
CHAPTER = "ch3"


# --------------------------------------------------------------------------- α tables and theory
def alpha_tables(
    encodings=ALPHA_SPEC["encodings"],
    tasks=ALPHA_SPEC["tasks"],
    lengths=ALPHA_SPEC["lengths"],
    L0: int = ALPHA_SPEC["L0"],
    fit=None,
) -> dict:
    """``{rule: {"enc/task": {L: α}}}`` for both selection rules, every encoding in ``encodings``,
    task in ``tasks`` and length in ``lengths`` (section "α_L for every encoding and task").

    ``fit`` configures the cross-entropy rule (keys ``steps``, ``lr``, ``weight_decay``; default
    :data:`lengthgen.chapters.ch3.paper.CE_FIT`); the min-norm rule has no parameters.
    """
    fit = dict(paper.CE_FIT if fit is None else fit)
    extra = sorted(set(fit) - set(paper.CE_FIT))
    if extra:
        raise ConfigError(
            f"fit has unknown keys {extra}; valid: {sorted(paper.CE_FIT)}"
        )
    for e in encodings:
        check_encoding(e)
    for t in tasks:
        check_task(t)
    out = {}
    for rule in SELECTION_RULES:
        tab = alpha_table(
            tuple(encodings), tuple(tasks), tuple(lengths), rule=rule, L0=L0, **fit
        )
        out[rule] = {f"{e}/{t}": v for (e, t), v in tab.items()}
    return out


#: The (rule, encoding) rows of the α tables that float64 cannot pin down: Φ_20 of the sinusoidal
#: and RoPE bases has singular values down to the float64 floor, so the min-norm interpolant's
#: smallest kept components (and the argmaxes they decide) change with the CPU's rounding. These
#: rows are compared from stored results only (section "α_L for every encoding and task").
ILL_CONDITIONED_ROWS = (("min_norm", "sinusoidal"), ("min_norm", "rope"))


def alpha_differences(live: dict, stored: dict) -> dict:
    """Entries of two α-table sets (``alpha_tables`` output) that differ, comparing only what is
    stable across machines: ``{"differ": count, "compared": count, "skipped": count}``, where
    the :data:`ILL_CONDITIONED_ROWS` are skipped (stored-only) and every other entry must be
    equal (the CE fit starts from zero and runs fixed steps, so it is deterministic)."""
    for name, tabs in (("live", live), ("stored", stored)):
        if not isinstance(tabs, dict) or set(tabs) != set(SELECTION_RULES):
            raise ConfigError(
                f"{name} α tables must have the rules {', '.join(SELECTION_RULES)}"
            )
    out = {"differ": 0, "compared": 0, "skipped": 0}
    for rule in SELECTION_RULES:
        for key, row in stored[rule].items():
            n = len(row)
            if (rule, key.split("/")[0]) in ILL_CONDITIONED_ROWS:
                out["skipped"] += n
                continue
            mine = live[rule].get(key, {})
            out["compared"] += n
            out["differ"] += sum(mine.get(L) != v for L, v in row.items())
    return out


#: RoPE tasks of the fixed-offset claim (α_L = 1 up to L = 512) and the lengths it spans.
FIXED_OFFSET_TASKS = ("prev", "skip2", "skip3", "skip5")


def _decimals(v: float) -> int:
    """Printed decimals of a paper α (two, or three for values such as 0.055 and 0.039)."""
    return 2 if abs(round(v, 2) - v) < 1e-9 else 3


def paper_alpha_points() -> list[dict]:
    """Every α value of a CE-fitted head that the paper prints and the chapter compares (per
    :mod:`~lengthgen.chapters.ch3.paper`): ``{"source", "encoding", "task", "L", "num_freq", "paper",
    "decimals"}``, one per value. Prop. 4(a)'s RoPE attend-first (6), App. A.4's sinusoidal prev
    (2), Table 3's α_60 (10), App. I's frequency sweep (sinusoidal prev and first at 8 and 32
    frequencies; RoPE prev and skip-3 at 8, 16, 32 — RoPE prev at 16 is Table 3's) and App. E's
    pos2/pos5 α_60 (10): 37 values."""
    pts = []

    def add(source, cell, L, value, num_freq=16):
        e, t = cell.split("/")
        pts.append(
            {
                "source": source,
                "encoding": e,
                "task": t,
                "L": int(L),
                "num_freq": num_freq,
                "paper": float(value),
                "decimals": _decimals(float(value)),
            }
        )

    for L, v in paper.ROPE_FIRST_ALPHA.items():
        add("Prop. 4(a)", "rope/first", L, v)
    for L, v in paper.SIN_PREV_ALPHA.items():
        add("App. A.4", "sinusoidal/prev", L, v)
    for k, row in paper.TABLE3.items():
        add("Table 3", k, 60, row["alpha60"])
    for nf, v in paper.FREQ_SIN_PREV_ALPHA60.items():
        add("App. I", "sinusoidal/prev", 60, v, nf)
    for nf, v in paper.FREQ_SIN_FIRST_ALPHA60.items():
        add("App. I", "sinusoidal/first", 60, v, nf)
    for t in ("prev", "skip3"):
        for nf in (8, 16, 32):
            if not (t == "prev" and nf == 16):
                add("App. I", f"rope/{t}", 60, paper.FREQ_ROPE_FIXED, nf)
    for e in ENCODINGS:
        v = paper.APP_E_ALPHA60["absolute" if e in paper.APP_E_ABSOLUTE else "other"]
        for t in POS_TASKS:
            add("App. E", f"{e}/{t}", 60, v)
    return pts


def lr_grid(*, lrs) -> dict:
    """The CE fit at every learning rate in ``lrs`` (section "Selection-rule dependence"):
    ``{"lrs", "points", "fixed"}`` — ``points``: one row per (lr, paper value of
    :func:`paper_alpha_points`) with our ``alpha``; ``fixed``: one row per (lr, RoPE task of
    :data:`FIXED_OFFSET_TASKS`, L of the α tables) with its ``alpha``."""
    from lengthgen.chapters.ch3.realizability import alpha

    lrs = [check_finite("lr", lr, nonnegative=True) for lr in lrs]
    points, fixed = [], []
    for lr in lrs:
        for p in paper_alpha_points():
            a = alpha(p["encoding"], p["task"], p["L"], num_freq=p["num_freq"], lr=lr)
            points.append({**p, "lr": lr, "alpha": a})
        for t in FIXED_OFFSET_TASKS:
            for L in ALPHA_SPEC["lengths"]:
                fixed.append(
                    {
                        "lr": lr,
                        "task": t,
                        "L": int(L),
                        "alpha": alpha("rope", t, L, lr=lr),
                    }
                )
    return {"lrs": lrs, "points": points, "fixed": fixed}


def lr_matches(data: dict):
    """Per learning rate of a :func:`lr_grid` result: how many of the paper's α values it matches
    (rule 2, half a unit of the last printed decimal, the band's edge included), in total and per
    source, how many of the matches lie on the band's edge (e.g. 0.475 for a printed 0.47) and the
    largest difference; rows in ``lrs`` order."""
    import pandas as pd

    rows = []
    for lr in data["lrs"]:
        pts = [p for p in data["points"] if p["lr"] == lr]
        gap = [
            abs(p["alpha"] - p["paper"]) - 0.5 * 10.0 ** (-p["decimals"]) for p in pts
        ]
        hit = [g <= 1e-12 for g in gap]
        row = {"lr": lr}
        for src in dict.fromkeys(p["source"] for p in pts):
            sub = [h for p, h in zip(pts, hit) if p["source"] == src]
            row[f"{src} ({len(sub)})"] = sum(sub)
        row[f"matched (of {len(pts)})"] = sum(hit)
        row["on the edge"] = sum(abs(g) <= 1e-12 for g in gap)
        row["largest difference"] = max(abs(p["alpha"] - p["paper"]) for p in pts)
        rows.append(row)
    return pd.DataFrame(rows).set_index("lr")


def lr_points(data: dict):
    """The paper's α values (rows ``source: cell @ L`` with the frequency count when it is not 16)
    against ours at each learning rate (columns), from a :func:`lr_grid` result."""
    import pandas as pd

    def name(p):
        nf = "" if p["num_freq"] == 16 else f", {p['num_freq']} freq."
        return f"{p['source']}: {p['encoding']}/{p['task']} @ {p['L']}{nf}"

    tab = {}
    for p in data["points"]:
        tab.setdefault(name(p), {"paper": p["paper"]})[f"lr {p['lr']:g}"] = p["alpha"]
    return pd.DataFrame(tab).T


def lr_fixed_offsets(data: dict):
    """Per learning rate of a :func:`lr_grid` result: the minimum α_L of each RoPE fixed-offset task
    over L = 30 … 512 and whether all four are 1 (the claim ``ch3.alpha.rope_fixed_offsets``)."""
    import pandas as pd

    rows = []
    for lr in data["lrs"]:
        row = {"lr": lr}
        for t in FIXED_OFFSET_TASKS:
            row[t] = min(
                f["alpha"] for f in data["fixed"] if f["lr"] == lr and f["task"] == t
            )
        row["α = 1 up to 512"] = all(row[t] == 1.0 for t in FIXED_OFFSET_TASKS)
        rows.append(row)
    return pd.DataFrame(rows).set_index("lr")


def theory_checks(*, n_trials: int, n_random: int) -> dict:
    """All executable theory checks (Props. 1–4, Thm. 2, App. A.5–A.6; sections "Theorem 2" to
    "Proposition 4").

    ``n_trials`` is the Monte-Carlo sample per (L, rule) of Prop. 2 and ``n_random`` the number of
    random W of Prop. 1 (:data:`lengthgen.chapters.ch3.paper.PROTOCOL`: 20 000 each for the stored
    run, 5000 live in the notebook); every other check has a fixed size.
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
        k: {
            L: relative_alpha(peaked_kernel(c, L), k, L)
            for L in (30, 60, 128, 512, 5000)
        }
        for k, c in (("prev", 1), ("skip2", 2), ("skip3", 3), ("skip5", 5))
    }
    res["thm2_growing"] = {
        t: {
            c: relative_alpha(peaked_kernel(c, 2 * c + 200), t, 2 * c + 200)
            for c in (1, 5, 15, 30)
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
        c: relative_alpha(peaked_kernel(c, 1000), lambda i, L: 1 + i % 2, 1000)
        for c in (1, 2)
    }
    ladder = np.full(40_961, -1.0)
    for m in range(6):
        ladder[20 * 4**m] = m + 2
    res["thm2_ladder"] = {
        L: relative_alpha(ladder, "copy", L) for L in (40, 160, 640, 2560, 10240, 40960)
    }
    two = np.full(100, -1.0)
    two[10], two[30] = 5.0, 8.0
    res["thm2_two_lengths"] = {
        "copy_L0": _copy_at_L0(two),
        "copy_60": relative_alpha(two, "copy", 60),
    }
    res["thm2_reverse_sweep"] = {"kernels": 20_000, "solved": reverse_sweep(20_000)}
    res["prop2"] = {
        rule: {L: prop2_montecarlo(L, n_trials=n_trials, rule=rule) for L in (30, 60)}
        for rule in ("min_norm", "generic")
    }
    res["prop3_copy"] = prop3_monotone_copy()
    res["prop3_existence"] = prop3_existence(1, 50_000)
    res["prop4"] = duality_table()
    return res


def _copy_at_L0(kappa, L0: int = L0_DEFAULT) -> bool:
    """Whether the relative kernel solves copy on every query row at length L0 (strict argmax)."""
    arg = relative_argmax(kappa, L0)
    t = targets("copy", L0)
    rows = (t >= 0).nonzero().flatten().tolist()
    return all(arg[i] == i - int(t[i]) for i in rows)


# --------------------------------------------------------------------------- the trained study: data
def target_table(tasks, L: int) -> torch.Tensor:
    """``[T, L+1, L]``: entry [τ, n, i] = t_n(i) of task τ at length n (−1 off the query rows or i ≥ n)."""
    T = torch.full((len(tasks), L + 1, L), -1, dtype=torch.long)
    for a, task in enumerate(tasks):
        for n in range(1, L + 1):
            T[a, n, :n] = targets(task, n)
    return T


def labels(x: torch.Tensor, tgt: torch.Tensor) -> torch.Tensor:
    """Per-position labels ``x[t(i)]`` where ``tgt[..., i] ≥ 0``, :data:`IGNORE` elsewhere (x, tgt: [..., n])."""
    y = torch.gather(x, -1, tgt.clamp(min=0))
    return torch.where(tgt >= 0, y, torch.full_like(y, IGNORE))


def length_schedule(steps: int, L0: int = L0_DEFAULT, seed: int = 0) -> torch.Tensor:
    """The training length of each of ``steps`` updates, n ~ U{L0/2, …, L0} from generator ``seed``
    (shared by every member of a group; :func:`make_sampler`)."""
    steps = check_positive_int("steps", steps)
    L0 = check_positive_int("L0", L0, minimum=2)
    seed = check_positive_int("seed", seed, minimum=0)
    return torch.randint(
        L0 // 2, L0 + 1, (steps,), generator=torch.Generator().manual_seed(seed)
    )


def make_sampler(
    tasks,
    *,
    batch: int,
    L0: int = L0_DEFAULT,
    vocab: int = 12,
    steps: int,
    length_seed: int = 0,
):
    """``sample(step, gens)`` for the engine: member e draws its tokens from its own generator.

    The training length of each update, n ~ U{L0/2, …, L0}, comes from one fixed schedule
    (generator ``length_seed``) shared by all members, so a batch is ``[E, batch, n]`` without
    padding and a member's data do not depend on which other members share its ensemble.
    """
    tab = target_table(tasks, L0)
    sched = length_schedule(steps, L0, length_seed)

    def sample(step, gens, members=None):
        idx = torch.arange(len(tasks)) if members is None else members
        n = int(sched[step % steps])
        x = torch.stack(
            [torch.randint(0, vocab, (batch, n), generator=g) for g in gens]
        )
        tg = tab[idx, n, :n][:, None, :].expand(len(gens), batch, n)
        return x, labels(x, tg)

    return sample


def masked_ce(out: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """Per-member mean cross-entropy over labelled positions (``y != IGNORE``): ``[E]``."""
    E, V = out.shape[0], out.shape[-1]
    ce = torch.nn.functional.cross_entropy(
        out.reshape(-1, V), y.reshape(-1), ignore_index=IGNORE, reduction="none"
    )
    ce = ce.view(E, -1)
    mask = (y.reshape(E, -1) != IGNORE).to(ce.dtype)
    return (ce * mask).sum(1) / mask.sum(1).clamp(min=1)


def masked_acc(out: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """Per-member accuracy over labelled positions: ``[E]``."""
    E = out.shape[0]
    mask = y.reshape(E, -1) != IGNORE
    hit = (out.argmax(-1).reshape(E, -1) == y.reshape(E, -1)) & mask
    return hit.sum(1).double() / mask.sum(1).clamp(min=1).double()


def eval_banks(
    tasks,
    lengths,
    *,
    n_eval: int,
    train_n: int,
    L0: int = L0_DEFAULT,
    vocab: int = 12,
    seed: int = 12345,
):
    """Per-member banks ``{key: (x [E, N, L], y [E, N, L])}``.

    Key ``L`` scores the extrapolation rows: the task's query rows in [L0, L) at length L. Keys
    ``("train", n)`` for n = L0/2 … L0 score every query row of the training lengths.
    """
    g = torch.Generator().manual_seed(seed)
    E = len(tasks)
    banks = {}
    for L in lengths:
        x = torch.randint(0, vocab, (n_eval, L), generator=g)
        tg = torch.stack([targets(t, L) for t in tasks])  # [E, L]
        tg[:, :L0] = -1  # score [L0, L) only
        xe = x[None].expand(E, n_eval, L)
        banks[int(L)] = (xe, labels(xe, tg[:, None, :].expand(E, n_eval, L)))
    for n in range(L0 // 2, L0 + 1):
        x = torch.randint(0, vocab, (train_n, n), generator=g)
        tg = torch.stack([targets(t, n) for t in tasks])
        xe = x[None].expand(E, train_n, n)
        banks[("train", n)] = (xe, labels(xe, tg[:, None, :].expand(E, train_n, n)))
    return banks


def train_cell_group(
    tier: str,
    encoding: str,
    tasks,
    seed: int,
    *,
    steps: int,
    batch: int,
    lr: float,
    weight_decay: float,
    lengths,
    eval_n: int,
    train_eval_n: int,
    L0: int = L0_DEFAULT,
    data_seed_offset: int = DATA_SEED_OFFSET,
    data_seed_stride: int = DATA_SEED_STRIDE,
    eval_seed_offset: int = EVAL_SEED_OFFSET,
    device: str = "cpu",
    progress: bool = False,
) -> list[dict]:
    """Train one ensemble (members = ``tasks``, all with init seed ``seed``) on ``device`` and measure
    it (section "The trained study"; the cell function of every trained group).

    Protocol (App. C, :data:`lengthgen.chapters.ch3.paper.PROTOCOL`): AdamW (``lr``,
    ``weight_decay``), ``batch`` sequences per update, ``steps`` updates, n ~ U{L0/2 … L0} from a
    schedule seeded by ``seed``, cross-entropy on the query positions only; member τ's data come
    from seed ``data_seed_offset + data_seed_stride·seed + TASKS.index(τ)`` and the evaluation banks
    from ``eval_seed_offset + seed``. Accuracy on the extrapolation rows [L0, L) for each L in
    ``lengths`` (``eval_n`` sequences each) and on the training lengths (``train_eval_n`` per length,
    ``train_acc``). ``device`` (``cpu``, ``cuda``, ``auto``) is where the ensemble is trained and
    evaluated. Returns one row per (task, L): ``{tier, encoding, task, seed, L, acc, train_acc,
    final_loss, steps}``. It is :func:`train_groups` with this one group.
    """
    return train_groups(
        tier,
        encoding,
        [(tasks, seed)],
        steps=steps,
        batch=batch,
        lr=lr,
        weight_decay=weight_decay,
        lengths=lengths,
        eval_n=eval_n,
        train_eval_n=train_eval_n,
        L0=L0,
        data_seed_offset=data_seed_offset,
        data_seed_stride=data_seed_stride,
        eval_seed_offset=eval_seed_offset,
        device=device,
        progress=progress,
    )[0]


#: The floating-point types :func:`train_groups` trains in (``float32``: the study's; ``float64``
#: measures the float32 rounding of a run, ``tests/test_ch3_device.py``).
GROUP_DTYPES = {"float32": torch.float32, "float64": torch.float64}


def train_groups(
    tier: str,
    encoding: str,
    groups,
    *,
    steps: int,
    batch: int,
    lr: float,
    weight_decay: float,
    lengths,
    eval_n: int,
    train_eval_n: int,
    L0: int = L0_DEFAULT,
    data_seed_offset: int = DATA_SEED_OFFSET,
    data_seed_stride: int = DATA_SEED_STRIDE,
    eval_seed_offset: int = EVAL_SEED_OFFSET,
    device: str = "cpu",
    progress: bool = False,
    dtype: str = "float32",
) -> list[list[dict]]:
    """Train several groups of one ``tier`` and ``encoding`` as ONE ensemble and measure them
    (section "The trained study"; :func:`train_cell_group` is this with one group, and
    :mod:`lengthgen.chapters.ch3.ensembles` runs the whole study this way on a GPU).

    ``groups`` is a list of ``(tasks, seed)`` pairs; the ensemble's members are every group's tasks
    in order. Member (τ, s) keeps exactly what it has in its own group's cell: initial weights from
    seed s, the data stream ``data_seed_offset + data_seed_stride·s + TASKS.index(τ)``, the
    training-length schedule of seed s and the evaluation banks of ``eval_seed_offset + s``. Groups
    with different seeds draw different lengths n_s at an update: each member's batch is drawn at
    its own length and padded at the end to the update's longest one, the padded positions
    unscored. Attention is causal and every other map acts position by position, so a member's
    logits and gradients are those of its unpadded batch — in exact arithmetic; in floating point
    the longer sums round differently (``tests/test_ch3_device.py`` measures it). Groups that share
    a seed need no padding, and their members' numbers equal their own cells' bit for bit on the
    CPU. ``dtype`` is ``"float32"`` (the study) or ``"float64"``. Returns one list of rows per
    group, each exactly the shape :func:`train_cell_group` returns.
    """
    from lengthgen.engine.train import OptimConfig, evaluate_ensemble, train_ensemble

    check_choice("tier", tier, tuple(TIERS))
    check_encoding(encoding)
    if isinstance(groups, (str, bytes)) or not hasattr(groups, "__len__") or not groups:
        raise ConfigError(
            f"groups must be a non-empty list of (tasks, seed) pairs, got {groups!r}"
        )
    checked = []
    for g in groups:
        if not (isinstance(g, (tuple, list)) and len(g) == 2):
            raise ConfigError(f"each group must be a pair (tasks, seed), got {g!r}")
        tasks, seed = g
        if isinstance(tasks, str) or not tasks:
            raise ConfigError(
                f"tasks must be a non-empty list of task names from {TASKS}, got {tasks!r}"
            )
        tasks = tuple(tasks)
        for t in tasks:
            check_choice("task", t, TASKS)
        checked.append((tasks, check_positive_int("seed", seed, minimum=0)))
    if len(set(checked)) != len(checked):
        raise ConfigError(
            f"groups must not repeat a (tasks, seed) pair, got {groups!r}"
        )
    steps = check_positive_int("steps", steps)
    batch = check_positive_int("batch", batch)
    lr = check_finite("lr", lr, nonnegative=True)
    weight_decay = check_finite("weight_decay", weight_decay, nonnegative=True)
    L0 = check_positive_int("L0", L0, minimum=2)
    if isinstance(lengths, (str, int)) or not lengths:
        raise ConfigError(
            f"lengths must be a non-empty list of test lengths > L0 = {L0}, got {lengths!r}"
        )
    lengths = tuple(
        check_positive_int("test length", L, minimum=L0 + 1) for L in lengths
    )
    eval_n = check_positive_int("eval_n", eval_n)
    train_eval_n = check_positive_int("train_eval_n", train_eval_n)
    for name, v in (
        ("data_seed_offset", data_seed_offset),
        ("data_seed_stride", data_seed_stride),
        ("eval_seed_offset", eval_seed_offset),
    ):
        check_positive_int(name, v, minimum=0)
    torch_dtype = GROUP_DTYPES[check_choice("dtype", dtype, tuple(GROUP_DTYPES))]
    dev = get_device(device).type  # "cpu" or "cuda" ("auto" resolved here)
    model = Decoder.tier(tier, encoding, L0=L0)
    params = model.init(
        [s for tasks, s in checked for _ in tasks], dtype=torch_dtype, device=dev
    )
    data_seeds = [
        data_seed_offset + data_seed_stride * s + TASKS.index(t)
        for tasks, s in checked
        for t in tasks
    ]
    seeds = sorted({s for _, s in checked})
    res = train_ensemble(
        model,
        params,
        sample=_groups_sampler(checked, batch=batch, L0=L0, steps=steps),
        loss=masked_ce,
        optim=OptimConfig("adamw", lr=lr, weight_decay=weight_decay),
        steps=steps,
        data_seeds=data_seeds,
        progress=progress,
        record_every=max(1, steps // 20),
        device=dev,
        desc=f"{tier} {encoding} s{','.join(map(str, seeds))}",
    )
    per_group = [
        eval_banks(
            tasks,
            lengths,
            n_eval=eval_n,
            train_n=train_eval_n,
            L0=L0,
            seed=eval_seed_offset + s,
        )
        for tasks, s in checked
    ]
    banks = (
        per_group[0]
        if len(per_group) == 1
        else {
            k: tuple(torch.cat([b[k][i] for b in per_group]) for i in (0, 1))
            for k in per_group[0]
        }
    )
    acc = evaluate_ensemble(
        model,
        res.params,
        banks,
        metric=masked_acc,
        per_member=True,
        batch_size=64,
        device=dev,
    )
    train_acc = torch.stack([acc[k] for k in acc if isinstance(k, tuple)]).mean(0)
    final_loss = res.history["loss"][-1].tolist()
    out, e = [], 0
    for tasks, seed in checked:
        rows = []
        for task in tasks:
            for L in lengths:
                rows.append(
                    {
                        "tier": tier,
                        "encoding": encoding,
                        "task": task,
                        "seed": int(seed),
                        "L": int(L),
                        "acc": float(acc[int(L)][e]),
                        "train_acc": float(train_acc[e]),
                        "final_loss": float(final_loss[e]),
                        "steps": steps,
                    }
                )
            e += 1
        out.append(rows)
    return out


def _groups_sampler(groups, *, batch: int, L0: int, steps: int):
    """The ``sample(step, gens)`` of :func:`train_groups`: group g's members draw their batch from
    their own :func:`make_sampler` (its tasks, its seed's length schedule); when the groups' lengths
    differ at an update, every batch is padded at the end to the longest (token 0, label
    :data:`IGNORE`). With one group it is that group's sampler."""
    samplers = [
        make_sampler(tasks, batch=batch, L0=L0, steps=steps, length_seed=s)
        for tasks, s in groups
    ]
    if len(samplers) == 1:
        return samplers[0]
    bounds, lo = [], 0
    for tasks, _ in groups:
        bounds.append((lo, lo + len(tasks)))
        lo += len(tasks)

    def sample(step, gens):
        parts = [f(step, gens[a:b]) for f, (a, b) in zip(samplers, bounds)]
        n = max(x.shape[-1] for x, _ in parts)
        xs, ys = [], []
        for x, y in parts:
            pad = n - x.shape[-1]
            xs.append(torch.nn.functional.pad(x, (0, pad), value=0) if pad else x)
            ys.append(torch.nn.functional.pad(y, (0, pad), value=IGNORE) if pad else y)
        return torch.cat(xs), torch.cat(ys)

    return sample


# --------------------------------------------------------------------------- the plan
#: Run order of the encodings inside a (tier, seed): those whose α_L is informative first.
RUN_ORDER = ("rope", "sinusoidal", "learned_abs", "nope", "alibi")


def _protocol(scale: str) -> dict:
    return paper.PROTOCOL[check_choice("scale", scale, tuple(paper.PROTOCOL))]


def study_plan(scale: str) -> list[dict]:
    """The trained groups of ``scale`` in run order, as ``{"key", "tier", "encoding", "group",
    "tasks", "seed"}`` (``key`` is the cell name). Every group is an independent cell; the order only
    decides what exists when a budget-limited run stops, so it puts first what the §6 statistics
    need most: (1) the first tier (1L1H), main tasks, every seed; (2) the first seed of the deeper
    tiers (2L4H, then 4L4H); (3) the pos2/pos5 groups of 1L1H (App. E); (4) the other seeds of the
    deeper tiers; (5) their pos2/pos5 groups. Inside a (tier, seed) the encodings follow
    :data:`RUN_ORDER`."""
    P = _protocol(scale)["study"]
    plan = []
    for tier in P["tiers"]:
        for seed in P["seeds"]:
            for gname, tasks in P["groups"].items():
                for enc in sorted(P["encodings"], key=RUN_ORDER.index):
                    plan.append(
                        {
                            "key": f"{tier}__{enc}__{gname}__seed{seed}",
                            "tier": tier,
                            "encoding": enc,
                            "group": gname,
                            "tasks": tuple(tasks),
                            "seed": seed,
                        }
                    )
    first_tier, first_seed = P["tiers"][0], P["seeds"][0]

    def band(g):  # the numbers (1)-(5) of the docstring, from 0
        pos = g["group"] == "pos"
        if g["tier"] == first_tier:
            return 2 if pos else 0
        return 4 if pos else (1 if g["seed"] == first_seed else 3)

    return sorted(
        plan, key=band
    )  # stable: tier, seed, encoding order kept inside a band


def group_kwargs(scale: str, group: dict) -> dict:
    """The complete keyword arguments of :func:`train_cell_group` for one group of
    :func:`study_plan` at ``scale`` (what the cell's configuration hash covers)."""
    P = _protocol(scale)["study"]
    need = ("tier", "encoding", "tasks", "seed")
    if not isinstance(group, dict) or any(k not in group for k in need):
        raise ConfigError(
            f"group must be an entry of study_plan() with keys {', '.join(need)}, got {group!r}"
        )
    return {
        "tier": group["tier"],
        "encoding": group["encoding"],
        "tasks": list(group["tasks"]),
        "seed": int(group["seed"]),
        "steps": P["steps"],
        "batch": P["batch"],
        "lr": P["lr"],
        "weight_decay": P["weight_decay"],
        "lengths": list(P["lengths"]),
        "eval_n": P["eval_n"],
        "train_eval_n": P["train_eval_n"],
        "L0": P["L0"],
        "data_seed_offset": DATA_SEED_OFFSET,
        "data_seed_stride": DATA_SEED_STRIDE,
        "eval_seed_offset": EVAL_SEED_OFFSET,
    }


def study_matmul_flops(scale: str) -> dict:
    """Floating-point operations of the matrix products of the trained study at ``scale``, counted
    from the protocol (:meth:`lengthgen.nn.decoder.Decoder.matmul_flops`): per group, every member's
    forward and backward pass at each update's length of its schedule (:func:`length_schedule`),
    plus the forward passes of its evaluation banks. Returns ``{"total", "train", "eval",
    "per_group": {key: flops}}``; the book page "What a reproduction costs" divides it by a measured
    matrix-product rate to bound the study's CPU time from below."""
    P = _protocol(scale)["study"]
    train = evals = 0
    per_group = {}
    for g in study_plan(scale):
        model = Decoder.tier(g["tier"], g["encoding"], L0=P["L0"])
        sched = length_schedule(P["steps"], P["L0"], g["seed"])
        ns, counts = torch.unique(sched, return_counts=True)
        tr = sum(
            int(c) * model.matmul_flops(P["batch"], int(n)) for n, c in zip(ns, counts)
        )
        ev = sum(
            model.matmul_flops(P["eval_n"], L, backward=False) for L in P["lengths"]
        )
        ev += sum(
            model.matmul_flops(P["train_eval_n"], n, backward=False)
            for n in range(P["L0"] // 2, P["L0"] + 1)
        )
        E = len(g["tasks"])
        per_group[g["key"]] = E * (tr + ev)
        train, evals = train + E * tr, evals + E * ev
    return {
        "total": train + evals,
        "train": train,
        "eval": evals,
        "per_group": per_group,
    }


def exact_min_norm_tables(
    encodings=EXACT_ENCODINGS,
    tasks=ALPHA_SPEC["tasks"],
    lengths=ALPHA_SPEC["lengths"],
    L0: int = ALPHA_SPEC["L0"],
    dps: int = EXACT_DPS,
) -> dict:
    """The exact min-norm rule (the paper's ``W* = Φ⁺ R (Φ⁺)ᵀ`` with no cutoff) for the encodings
    float64 cannot handle, section "α_L for every encoding and task":
    ``{"alpha": {"enc/task": {L: α}}, "l0_exact": {"enc/task": bool}, "recomputed": rows,
    "smallest_singular_value": {enc: σ_min}, "dps": dps}``
    (:func:`~lengthgen.chapters.ch3.realizability.exact_min_norm_alpha`). The same on every machine."""
    out = {
        "alpha": {},
        "l0_exact": {},
        "recomputed": 0,
        "smallest_singular_value": {},
        "dps": int(dps),
    }
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
    """α_L of the CE rule at each learning rate of ``lrs`` (the paper's 400 steps and weight decay
    1e-4 otherwise, or the steps and weight decay of ``fit``): ``{"lrs": [...], "alpha":
    {str(lr): {"enc/task": {L: α}}}}``, for the §6 statistics at the learning rates that match
    the paper's printed α best (section "The trained study")."""
    base = dict(paper.CE_FIT if fit is None else fit)
    out = {
        "lrs": [float(check_finite("lr", lr, nonnegative=True)) for lr in lrs],
        "alpha": {},
    }
    for lr in out["lrs"]:
        kw = {**base, "lr": lr}
        tab = alpha_table(
            tuple(encodings), tuple(tasks), tuple(lengths), rule="ce", L0=L0, **kw
        )
        out["alpha"][str(lr)] = {f"{e}/{t}": v for (e, t), v in tab.items()}
    return out


def prop2_old_key(
    *, L: int = 128, m: int = 64, n_trials: int = 20_000, seed: int = 0
) -> dict:
    """Prop. 2 with a target among the trained keys (attend-first at row L − 1): the min-norm
    selection's hit rate and its ratio to the bound 1/(k − 1), which the paper puts at up to 5.2
    for m = 64, L = 128 (§5; :func:`~lengthgen.chapters.ch3.realizability.prop2_montecarlo`)."""
    return prop2_montecarlo(
        L,
        m=m,
        n_trials=n_trials,
        task="first",
        rule="min_norm",
        seed=seed,
        old_key=True,
    )


def min_norm_rules_frame(tabs: dict, exact: dict, lengths=(30, 60, 512)):
    """The two min-norm rules side by side: α_L of torch's truncated pseudo-inverse (``tabs``, the
    ``alpha_tables`` output) and of the exact one (``exact``, :func:`exact_min_norm_tables`), one
    row per (encoding, task) of ``exact``, columns ``(rule, L)``."""
    import pandas as pd

    rows = {}
    for key, row in exact["alpha"].items():
        rows[key] = {
            **{("torch cutoff", f"L = {L}"): tabs["min_norm"][key][L] for L in lengths},
            **{("exact", f"L = {L}"): row[L] for L in lengths},
        }
    df = pd.DataFrame(rows).T
    df.columns = pd.MultiIndex.from_tuples(df.columns)
    return df


def cells(scale: str) -> list[Cell]:
    """The chapter's reproduction plan at ``scale`` (``smoke`` or ``full``, :data:`paper.PROTOCOL`):
    ``alpha_tables``, ``alpha_min_norm_exact``, ``theory``, ``lr_grid`` (where the scale plans
    it: the full one), then one
    cell per trained group in :func:`study_plan` order."""
    P = _protocol(scale)
    A = P["alpha"]
    out = [
        Cell(
            "alpha_tables",
            alpha_tables,
            {
                "encodings": list(A["encodings"]),
                "tasks": list(A["tasks"]),
                "lengths": list(A["lengths"]),
                "L0": A["L0"],
                "fit": dict(A["fit"]),
            },
        ),
        Cell(
            "alpha_min_norm_exact",
            exact_min_norm_tables,
            {"tasks": list(A["tasks"]), "lengths": list(A["lengths"]), "L0": A["L0"]},
        ),
        Cell("theory", theory_checks, dict(P["theory"])),
        Cell(
            "alpha_lr_match",
            ce_alpha_at_lrs,
            {
                "lrs": list(LR_MATCH),
                "encodings": list(A["encodings"]),
                "tasks": [t for t in A["tasks"] if t in MAIN_TASKS],
                "lengths": [L for L in A["lengths"] if L in paper.STUDY_LENGTHS],
                "L0": A["L0"],
                "fit": dict(A["fit"]),
            },
        ),
        Cell("prop2_old_key", prop2_old_key, {"n_trials": P["theory"]["n_trials"]}),
    ]
    if "lr_grid" in P:
        out.append(Cell("lr_grid", lr_grid, {"lrs": list(P["lr_grid"]["lrs"])}))
    for g in study_plan(scale):
        out.append(
            Cell(g["key"], train_cell_group, group_kwargs(scale, g), seeds=(g["seed"],))
        )
    return out


# --------------------------------------------------------------------------- stored results
def _alpha_cells(data) -> int:
    A = paper.PROTOCOL["full"]["alpha"]
    return len(A["encodings"]) * len(A["tasks"])


def _alpha_lengths(data) -> int:
    return len(paper.PROTOCOL["full"]["alpha"]["lengths"])


#: A stored α table (``alpha_tables`` cell): both rules, one entry per declared (encoding, task) of
#: the full protocol, one α ∈ [0, 1] per declared length.
ALPHA_SCHEMA = Schema(
    "ch3 alpha tables",
    required=SELECTION_RULES,
    probabilities=tuple(f"{r}.*.*" for r in SELECTION_RULES),
    counts=tuple((r, _alpha_cells) for r in SELECTION_RULES)
    + tuple((f"{r}.*", _alpha_lengths) for r in SELECTION_RULES),
)

#: The stored exact min-norm rule (``alpha_min_norm_exact`` cell): α ∈ [0, 1] per length.
EXACT_SCHEMA = Schema(
    "ch3 exact min-norm tables",
    required=("alpha", "l0_exact", "recomputed", "smallest_singular_value", "dps"),
    probabilities=("alpha.*.*",),
)

#: The CE α at the matching learning rates (``alpha_lr_match`` cell) and Prop. 2 with an old key.
LR_MATCH_SCHEMA = Schema(
    "ch3 CE α at the matching learning rates",
    required=("lrs", "alpha"),
    probabilities=("alpha.*.*.*",),
)
OLD_KEY_SCHEMA = Schema(
    "ch3 Prop. 2 with an old key",
    required=("ratio", "bound", "n_trials", "m", "L"),
    probabilities=("unconditional",),
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
        "thm2_fixed_offset.*.*",
        "thm2_growing.*.*",
        "thm2_clipped.*",
        "thm2_squares.*",
        "thm2_parity.*",
        "thm2_ladder.*",
        "thm2_two_lengths.copy_60",
        "prop2.*.*.bound",
        "prop2.*.*.conditional",
        "prop2.*.*.unconditional",
        "prop2.*.*.p_new",
        "prop3_copy.alpha",
        "prop3_existence.alpha_at_dmax",
    ),
    counts=(("prop2", lambda d: 2), ("prop2.*", lambda d: 2)),
)

#: A stored trained group: one row per (task, L) with its fields, accuracies in [0, 1]. That the
#: rows are exactly the declared tasks × lengths, for the declared tier, encoding and seed, is
#: checked against the cell's configuration by :func:`check_group`.
GROUP_SCHEMA = Schema(
    "ch3 study group",
    required=(
        "*.tier",
        "*.encoding",
        "*.task",
        "*.seed",
        "*.L",
        "*.final_loss",
        "*.steps",
    ),
    probabilities=("*.acc", "*.train_acc"),
)


def check_group(rows, kwargs: dict, path="<data>") -> list[dict]:
    """Check a trained group's ``rows`` against :data:`GROUP_SCHEMA` and the configuration
    ``kwargs`` it was declared with (:func:`group_kwargs`): exactly one row per declared task × length,
    each with the declared tier, encoding, seed and steps. Raises :class:`ResultFileError` naming
    ``path`` and the field; returns ``rows``."""
    from lengthgen.store import validate

    missing = [
        k
        for k in ("tier", "encoding", "seed", "steps", "tasks", "lengths")
        if k not in kwargs
    ]
    if missing:
        raise ConfigError(
            f"kwargs lacks {', '.join(missing)}: pass the cell's configuration (group_kwargs)"
        )
    if not isinstance(rows, list):
        raise ResultFileError(
            f"invalid ch3 study group result {path}: expected a list of rows, got {type(rows).__name__}"
        )
    validate(rows, GROUP_SCHEMA, path)
    want = [(t, int(L)) for t in kwargs["tasks"] for L in kwargs["lengths"]]
    got = [(r["task"], r["L"]) for r in rows]
    if sorted(got) != sorted(want):
        raise ResultFileError(
            f"invalid ch3 study group result {path}: rows (task, L) {sorted(set(got) ^ set(want)) or 'repeated'} "
            f"differ from the declared {len(kwargs['tasks'])} tasks × {len(kwargs['lengths'])} lengths"
        )
    for i, r in enumerate(rows):
        for field in ("tier", "encoding", "seed", "steps"):
            if r[field] != kwargs[field]:
                raise ResultFileError(
                    f"invalid ch3 study group result {path}: field '{i}.{field}' is {r[field]!r}, "
                    f"but the cell declares {kwargs[field]!r}"
                )
    return rows


#: The stored learning-rate grid (``lr_grid`` cell): every α in [0, 1].
LR_GRID_SCHEMA = Schema(
    "ch3 lr grid",
    required=("lrs", "points", "fixed"),
    probabilities=("points.*.alpha", "fixed.*.alpha"),
)


def schema_for(name: str) -> Schema:
    """The schema of the stored cell ``name`` (see :func:`cells`)."""
    return {
        "alpha_tables": ALPHA_SCHEMA,
        "alpha_min_norm_exact": EXACT_SCHEMA,
        "alpha_lr_match": LR_MATCH_SCHEMA,
        "prop2_old_key": OLD_KEY_SCHEMA,
        "theory": THEORY_SCHEMA,
        "lr_grid": LR_GRID_SCHEMA,
    }.get(name, GROUP_SCHEMA)


def load(name: str, *, folder=None) -> dict:
    """The stored full-scale cell ``name`` as ``{"provenance", "data", "path"}``
    (:func:`lengthgen.engine.runs.load_stored`), validated: its schema (:func:`schema_for`), for a
    trained group also :func:`check_group`, and its configuration must be today's plan (the stored
    configuration hash equals the planned one). ``folder`` defaults to ``results/ch3/cells``.
    Any failure raises :class:`ResultFileError` (or :class:`~lengthgen.engine.runs.ScaleConflict`)
    naming the file."""
    return _load(name, {c.name: c for c in cells("full")}, folder)


def _load(name: str, plan: dict, folder) -> dict:
    from lengthgen.engine import runs
    from lengthgen.store import results_dir

    if name not in plan:
        raise ConfigError(
            f"no chapter-3 cell {name!r}; the cells are alpha_tables, alpha_min_norm_exact, "
            "theory, alpha_lr_match, prop2_old_key, lr_grid and "
            "<tier>__<encoding>__<main|pos>__seed<s> (e.g. 1L1H__rope__main__seed0)"
        )
    folder = results_dir() / CHAPTER / "cells" if folder is None else folder
    rec = runs.load_stored(CHAPTER, name, schema=schema_for(name), folder=folder)
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
    from lengthgen.store import results_dir

    folder = results_dir() / CHAPTER / "cells" if folder is None else folder
    plan = {c.name: c for c in cells("full")}
    names = sorted(
        n
        for n, c in plan.items()
        if c.fn is train_cell_group and runs.has_stored(CHAPTER, n, folder=folder)
    )
    return {n: _load(n, plan, folder) for n in names}


def study_rows(folder=None) -> list[dict]:
    """All measurement rows of the stored full-scale study (every validated group of
    :func:`stored_groups`), concatenated in cell-name order so that the statistics' resampling is
    reproducible. Empty when nothing is stored."""
    return [row for rec in stored_groups(folder).values() for row in rec["data"]]


def study_label(groups: dict) -> str:
    """One line describing the stored groups (from :func:`stored_groups`) for a table or figure:
    how many of the planned groups, devices, torch versions, dates, how many are migrated and how many
    were re-run to record their CPU time (with the largest difference from the values they replaced,
    :func:`lengthgen.engine.runs.refresh_record`)."""
    if not isinstance(groups, dict):
        raise ConfigError(
            f"groups must be the dict returned by stored_groups(), got {type(groups).__name__}"
        )
    if not groups:
        return "no stored full-scale study"
    provs = [rec["provenance"] for rec in groups.values()]
    dates = sorted(p.get("date", "")[:10] for p in provs)
    devices = sorted({str(p.get("device")) for p in provs})
    torch_v = sorted({str(p.get("torch_version")) for p in provs})
    migrated = sum(1 for p in provs if "migrated" in p)
    refreshed = [p for p in provs if isinstance(p.get("refreshed"), dict)]
    diffs = [d for d in map(refresh_difference, refreshed) if d is not None]
    again = (
        f"; {len(refreshed)} re-run to record their CPU time, differing from the values they replaced by at "
        f"most {max(diffs):.2g}"
        if refreshed and diffs
        else ""
    )
    return (
        f"stored full run: {len(groups)} of {len(study_plan('full'))} planned groups "
        f"({', '.join(devices)}, torch {', '.join(torch_v)}, {dates[0]} to {dates[-1]}"
        + (f", {migrated} migrated from the pre-cells store" if migrated else "")
        + again
        + ")"
    )


# --------------------------------------------------------------------------- statistics
def cell_summary(rows, tier: str, alpha: dict, tasks=MAIN_TASKS) -> dict:
    """Per (encoding, task) cell of ``tier`` that has measurement ``rows``: ``{(enc, task): {"alpha"
    (α_L of the table ``alpha`` averaged over the measured lengths), "lg" (trained accuracy on the
    extrapolation rows, mean over seeds and lengths), "train" (mean train accuracy), "seeds",
    "lengths"}}`` — the cell-level view behind §6's AUC/Spearman, App. D and App. E (``tasks=POS_TASKS``)."""
    check_choice("tier", tier, tuple(TIERS))
    for t in tasks:
        check_choice("task", t, TASKS)
    out = {}
    for e in ENCODINGS:
        for t in tasks:
            r = [
                x
                for x in rows
                if x["tier"] == tier and x["encoding"] == e and x["task"] == t
            ]
            if not r:
                continue
            Ls = sorted({x["L"] for x in r})
            out[(e, t)] = {
                "alpha": float(np.mean([alpha[f"{e}/{t}"][L] for L in Ls])),
                "lg": float(np.mean([x["acc"] for x in r])),
                "train": float(np.mean([x["train_acc"] for x in r])),
                "seeds": sorted({x["seed"] for x in r}),
                "lengths": Ls,
            }
    return out


def study_stats(
    rows,
    alpha: dict,
    tier: str = "1L1H",
    *,
    n_perm: int = 20_000,
    n_boot: int = 10_000,
    learnable: float = 0.8,
    tasks=MAIN_TASKS,
) -> dict:
    """The §6 statistics of one tier from measurement ``rows`` and the CE α table ``alpha``
    (``{"enc/task": {L: α}}``): cell-level AUC (LG ≥ 0.5) with permutation p, Spearman over all
    cells and over learnable cells (train acc > ``learnable``) with a bootstrap CI over cells,
    and the precision Pr[LG ≥ 0.7 | α_L ≥ 0.5] over (cell, L, seed) rows with a bootstrap CI."""
    from lengthgen.stats import auc, bootstrap_ci, permutation_pvalue, spearman

    cells = cell_summary(rows, tier, alpha, tasks)
    if not cells:
        return {"tier": tier, "n_cells": 0}
    keys = sorted(cells)
    a = np.array([cells[k]["alpha"] for k in keys])
    lg = np.array([cells[k]["lg"] for k in keys])
    pos = lg >= 0.5
    out = {
        "tier": tier,
        "n_cells": len(keys),
        "n_pos": int(pos.sum()),
        "cells": {f"{e}/{t}": cells[(e, t)] for e, t in keys},
    }
    if 0 < pos.sum() < len(pos):
        obs, p = permutation_pvalue(
            lambda s, y: auc(s, y), a, pos, n_perm=n_perm, alternative="greater"
        )
        out.update(
            auc=obs,
            auc_p=p,
            min_alpha_pos=float(a[pos].min()),
            max_alpha_neg=float(a[~pos].max()),
        )
    out["spearman_all"] = spearman(a, lg)

    def rho(v):
        r = spearman(v[:, 0], v[:, 1])
        return 0.0 if np.isnan(r) else r

    learn = np.array([cells[k]["train"] > learnable for k in keys])
    out["n_learnable"] = int(learn.sum())
    if learn.sum() >= 3:
        v = np.stack([a[learn], lg[learn]], 1)
        est, lo, hi = bootstrap_ci(v, stat=rho, n_boot=n_boot)
        out.update(
            spearman_learnable=spearman(a[learn], lg[learn]), spearman_ci=(lo, hi)
        )
    hi_rows = [
        x
        for x in rows
        if x["tier"] == tier
        and x["task"] in tasks
        and alpha[f"{x['encoding']}/{x['task']}"][x["L"]] >= 0.5
    ]
    if hi_rows:
        ok = np.array([x["acc"] >= 0.7 for x in hi_rows], dtype=float)
        est, lo, hi = bootstrap_ci(ok, n_boot=n_boot)
        out.update(
            precision=est,
            precision_ci=(lo, hi),
            n_high_rows=len(hi_rows),
            n_violations=int((ok == 0).sum()),
        )
    return out


def selection_ablation(
    rows, alphas: dict, tier: str = "1L1H", learnable: float = 0.8
) -> dict:
    """App. D, Table 5: Spearman correlation between α_L and the trained LG over the
    (learnable cell, L) rows of one tier, for each α table in ``alphas``
    (``{name: {"enc/task": {L: α}}}``, e.g. the CE fit, the min-norm interpolant and the CE fit
    without weight decay). A cell is learnable when its mean train accuracy exceeds
    ``learnable`` (as in :func:`study_stats`); a row's LG is its mean over the seeds that exist.
    The paper has 15 learnable cells × 5 lengths = 75 rows at 1L1H."""
    from lengthgen.stats import spearman

    if not alphas:
        raise ValueError("alphas must name at least one α table")
    cells = cell_summary(rows, tier, next(iter(alphas.values())))
    keys = [k for k in sorted(cells) if cells[k]["train"] > learnable]
    pts = []
    for e, t in keys:
        for L in cells[(e, t)]["lengths"]:
            acc = [
                x["acc"]
                for x in rows
                if x["tier"] == tier
                and x["encoding"] == e
                and x["task"] == t
                and x["L"] == L
            ]
            pts.append((e, t, L, float(np.mean(acc))))
    out = {"tier": tier, "n_cells": len(keys), "n_rows": len(pts)}
    if len(pts) >= 3:
        lg = np.array([q[3] for q in pts])
        for name, tab in alphas.items():
            out[name] = spearman(
                np.array([tab[f"{e}/{t}"][L] for e, t, L, _ in pts]), lg
            )
    return out


def content_channel(
    rows,
    alpha: dict,
    tier: str,
    *,
    lg_min: float = 0.5,
    alpha_max: float = 0.5,
    tasks=MAIN_TASKS,
) -> dict:
    """App. D, depth trend: the cells the positional predictor rules out but training rescues.

    A cell (encoding, task) of ``tier`` is listed when its α (mean over the measured lengths) is
    below ``alpha_max`` while its trained LG (mean over seeds and lengths) is at least ``lg_min``
    — the same LG ≥ 0.5 split as the AUC of :func:`study_stats`. At depth these are the routes
    through token content (outside the positional-only abstraction, assumption S3) that the
    paper lists as growing with depth (with ``tasks=POS_TASKS``, the same for App. E's interior
    positions). Returns ``{"enc/task": {"alpha", "lg", "seeds"}}``.
    """
    lg_min, alpha_max = (
        check_probability("lg_min", lg_min),
        check_probability("alpha_max", alpha_max),
    )
    return {
        f"{e}/{t}": {"alpha": c["alpha"], "lg": c["lg"], "seeds": c["seeds"]}
        for (e, t), c in sorted(cell_summary(rows, tier, alpha, tasks).items())
        if c["alpha"] < alpha_max and c["lg"] >= lg_min
    }


def cell_table(rows, alpha, tier: str, L: int = 60, tasks=MAIN_TASKS) -> dict:
    """``{"enc/task": {"alpha": α_L, "lg_mean", "lg_std", "n_seeds"}}`` at one length (Table 3, Fig. 5, Table 6)."""
    out = {}
    for e in ENCODINGS:
        for t in tasks:
            acc = [
                x["acc"]
                for x in rows
                if x["tier"] == tier
                and x["encoding"] == e
                and x["task"] == t
                and x["L"] == L
            ]
            if acc:
                out[f"{e}/{t}"] = {
                    "alpha": alpha[f"{e}/{t}"][L],
                    "lg_mean": float(np.mean(acc)),
                    "lg_std": float(np.std(acc)),
                    "n_seeds": len(acc),
                }
    return out


# --------------------------------------------------------------------------- tables and figures
def alpha_frame(tabs: dict, rule: str = "ce", lengths=None):
    """α_L table of one selection rule as a DataFrame (rows ``encoding/task``, columns L)."""
    import pandas as pd

    check_choice("selection rule", rule, SELECTION_RULES)
    tab = tabs[rule]
    df = pd.DataFrame(
        {k: {int(L): v for L, v in vals.items()} for k, vals in tab.items()}
    ).T
    if lengths is not None:
        df = df[[int(L) for L in lengths]]
    df.index.name = "encoding/task"
    return df


def min_norm_cutoff(
    cells=(
        ("rope", "prev"),
        ("rope", "skip2"),
        ("rope", "first"),
        ("sinusoidal", "first"),
    ),
    rtols=(None, 1e-12, 1e-10, 1e-8),
    lengths=(30, 60, 128, 512),
):
    """α_L of the min-norm rule as a function of the pseudo-inverse cutoff (numerical rank of Φ_L0)."""
    import pandas as pd

    from lengthgen.nn.positional import KernelFamily
    from lengthgen.chapters.ch3.realizability import fit_min_norm, simulate

    rows = []
    for e, t in cells:
        fam = KernelFamily(e)
        for rt in rtols:
            W = fit_min_norm(fam, t, rtol=rt)
            rows.append(
                {
                    "cell": f"{e}/{t}",
                    "rtol": "default" if rt is None else rt,
                    **{int(L): simulate(W, fam, t, L).alpha for L in lengths},
                }
            )
    return pd.DataFrame(rows).set_index(["cell", "rtol"])


def lr_sensitivity(
    cells=(("rope", "first"), ("sinusoidal", "prev"), ("sinusoidal", "skip3")),
    lrs=(0.01, 0.02, 0.05, 0.1, 0.2),
    lengths=(30, 40, 60, 128, 256, 512),
):
    """α_L of the CE selection rule as a function of its (unstated) Adam learning rate."""
    import pandas as pd

    from lengthgen.chapters.ch3.realizability import alpha

    rows = []
    for e, t in cells:
        for lr in lrs:
            rows.append(
                {
                    "cell": f"{e}/{t}",
                    "lr": lr,
                    **{int(L): alpha(e, t, L, lr=lr) for L in lengths},
                }
            )
    return pd.DataFrame(rows).set_index(["cell", "lr"])


def theory_table(th: dict, copy_2c: dict | None = None):
    """Theorem 2's executable checks (``theory_checks(...)`` output) as rows of (check, result,
    paper) text, for the chapter's table."""
    import pandas as pd

    def vals(d, fmt="{:.3f}"):
        return ", ".join(f"{k}: {fmt.format(v)}" for k, v in d.items())

    ce = th["thm2_counterexample"]
    rnd = th["thm2_random"]
    fixed = th["thm2_fixed_offset"]
    grow = th["thm2_growing"]
    lad = th["thm2_ladder"]
    two = th["thm2_two_lengths"]
    rev = th["thm2_reverse_sweep"]
    rows = [
        (
            "counterexample κ = (1.46, 1.96, 1.80, 6.32)",
            f"row 2 takes offset {ce['row2_offset']}, deep rows {ce['deep_offsets']}",
            "offset 1, deep rows 3",
        ),
        (
            "deep-row lemma, random kernels",
            f"{sum(rnd['violations'].values())} violations in {rnd['deep_rows_checked']:,} deep rows "
            f"({rnd['kernels']:,} kernels)",
            "none",
        ),
        (
            "fixed offsets (kernel peaked at k), min α_L over L ≤ 5000",
            f"{min(min(v.values()) for v in fixed.values()):.3f} ({', '.join(fixed)})",
            "1",
        ),
        (
            "growing offsets, peak c, L = 2c + 200: max α_L",
            f"copy {max(grow['copy'].values()):.3f}, reverse {max(grow['reverse'].values()):.3f}",
            "→ 0",
        ),
        (
            "clipped rows (peak 30, offset 1): α_L at L",
            vals(th["thm2_clipped"], "{:.4f}"),
            vals(paper.THM2_CLIPPED_ALPHA, "{:.4f}"),
        ),
        (
            "offset 2 on perfect squares: α_L at L",
            vals(th["thm2_squares"]),
            vals(paper.THM2_SQUARES_ALPHA),
        ),
        (
            "parity offsets δ ∈ {1, 2}: α_L per peak",
            vals(th["thm2_parity"], "{:.2f}"),
            f"{paper.THM2_PARITY_ALPHA:.2f}",
        ),
        (
            "unbounded ladder, copy: min α_L over L = 40 … 40960",
            f"{min(lad.values()):.3f}",
            f"{paper.THM2_LADDER['alpha']:.3f}",
        ),
        (
            "κ[10] = 5, κ[30] = 8: copy at L0 = 20 and at L = 60",
            f"{'solved' if two['copy_L0'] else 'not solved'}; α_60 = {two['copy_60']:.3f}",
            "solved; 1",
        ),
        (
            "reverse at L0 = 20: kernels that solve it",
            f"{rev['solved']} of {rev['kernels']:,}",
            f"{paper.REVERSE_SWEEP['solved']} of {paper.REVERSE_SWEEP['kernels']:,}",
        ),
    ]
    if copy_2c:
        rows.append(
            (
                "peak c ∈ {15, 30, 100}: min α_L on copy at L = 2c − 1, 2c",
                f"{min(copy_2c.values()):.3f}",
                f"{paper.PEAK_COPY_ALPHA:.3f}",
            )
        )
    return pd.DataFrame(rows, columns=["check", "ours", "paper"])


def plot_alpha_tables(tabs: dict, marked=()):
    """The α_L tables of both selection rules as two heat-maps (rows ``encoding/task``, columns L),
    cross-entropy left, min-norm right; cells listed in ``marked`` (``(row, L)``) get a box."""
    from matplotlib.patches import Rectangle

    from lengthgen import plotting

    frames = [alpha_frame(tabs, r) for r in SELECTION_RULES]
    rows, Ls = list(frames[0].index), list(frames[0].columns)
    fig, axes = plotting.figure(
        1, 2, width=3.4, height=0.19 * len(rows) + 1.2, sharey=True
    )
    for ax, df, rule in zip(axes, frames, SELECTION_RULES):
        M = df.to_numpy(dtype=float)
        ax.imshow(M, vmin=0, vmax=1, cmap="magma", aspect="auto")
        for (r, c), v in np.ndenumerate(M):
            txt = "1" if v == 1 else ("0" if v == 0 else f"{v:.2f}".lstrip("0"))
            ax.text(
                c,
                r,
                txt,
                ha="center",
                va="center",
                fontsize=9,
                color="w" if v < 0.6 else "k",
            )
        for r in range(len(ENCODINGS) - 1):
            ax.axhline((r + 1) * len(rows) / len(ENCODINGS) - 0.5, color="w", lw=1.5)
        for name, L in marked:
            if name in rows and L in Ls and rule == "ce":
                ax.add_patch(
                    Rectangle(
                        (Ls.index(L) - 0.5, rows.index(name) - 0.5),
                        1,
                        1,
                        fill=False,
                        ec=plotting.PALETTE[5],
                        lw=2,
                    )
                )
        ax.set(
            xticks=range(len(Ls)),
            xticklabels=Ls,
            yticks=range(len(rows)),
            yticklabels=rows,
            xlabel="test length L",
            ylabel="encoding/task" if rule == "ce" else "",
            title="cross-entropy fit" if rule == "ce" else "min-norm interpolant",
        )
        ax.tick_params(axis="x", rotation=90, labelsize=9)
        ax.tick_params(axis="y", labelsize=9)
        ax.xaxis.set_ticks_position("top")
        ax.xaxis.set_label_position("top")
        ax.grid(False)
    axes[1].set_ylabel("encoding/task")
    axes[1].yaxis.label.set_visible(False)
    return plotting.finish(fig)


def plot_lr_sensitivity(sens, paper_alpha: dict | None = None):
    """α_L against L for each learning rate of the CE fit (one panel per cell of ``sens``,
    :func:`lr_sensitivity`); ``paper_alpha`` (``{cell: {L: α}}``) adds the paper's values."""
    from lengthgen import plotting

    cells = list(dict.fromkeys(sens.index.get_level_values("cell")))
    fig, axes = plotting.figure(
        1, len(cells), width=6.8 / len(cells), height=2.9, sharey=True
    )
    for ax, cell in zip(np.atleast_1d(axes), cells):
        sub = sens.loc[cell]
        Ls = [int(L) for L in sub.columns]
        for j, (lr, row) in enumerate(sub.iterrows()):
            ax.plot(
                Ls,
                row.to_numpy(),
                "o-",
                ms=3,
                lw=1.3,
                color=plotting.PALETTE[j % 5],
                label=f"lr {lr:g}" + (" (ours)" if lr == paper.CE_FIT["lr"] else ""),
            )
        pv = (paper_alpha or {}).get(cell)
        if pv:
            ax.plot(list(pv), list(pv.values()), "kx", ms=8, mew=2, label="paper")
        ax.set(
            xscale="log",
            xlabel="test length L",
            ylabel="α_L",
            title=cell,
            ylim=(-0.03, 1.03),
        )
        ax.set_xticks([30, 60, 128, 512], labels=["30", "60", "128", "512"])
        ax.minorticks_off()
    h, lab = np.atleast_1d(axes)[0].get_legend_handles_labels()
    for ax in np.atleast_1d(axes)[1:]:
        for hh, ll in zip(*ax.get_legend_handles_labels()):
            if ll not in lab:
                h.append(hh)
                lab.append(ll)
    fig.legend(
        h,
        lab,
        loc="outside lower center",
        ncol=len(lab),
        fontsize=9,
        handlelength=1.2,
        columnspacing=0.8,
    )
    return plotting.finish(fig)


def show_transfer(
    encoding: str = "rope",
    task: str = "first",
    L: int = 60,
    rule: str = "ce",
    L0: int = L0_DEFAULT,
):
    """Figure: the selected head's transferred kernel T_L(W) with each scored row's strict argmax
    (green: the target, red: wrong or tied) and the target (white ×); returns (fig, Simulation)."""
    from lengthgen import plotting
    from lengthgen.chapters.ch3.realizability import select, simulate, transfer

    fam, W = select(encoding, task, rule, L0=L0)
    sim = simulate(W, fam, task, L, L0)
    P = transfer(W, fam.features(L)).numpy().copy()
    P[np.triu_indices(L, 1)] = np.nan
    fig, ax = plotting.figure(width=5.6, height=5.0)
    lo, hi = np.nanpercentile(P, 2), np.nanpercentile(P, 98)
    im = ax.imshow(
        P,
        cmap="viridis",
        vmin=lo,
        vmax=hi if hi > lo else lo + 1,
        interpolation="nearest",
    )
    fig.colorbar(im, ax=ax, label="positional logit φ(i)ᵀWφ(j)").ax.set_xlabel("logit")
    ok, bad = sim.correct, ~sim.correct
    arg = np.where(sim.argmax >= 0, sim.argmax, np.nan)
    ax.scatter(
        arg[ok], sim.rows[ok], s=9, c=plotting.PALETTE[2], label="argmax = target"
    )
    ax.scatter(
        arg[bad], sim.rows[bad], s=9, c=plotting.PALETTE[3], label="argmax ≠ target"
    )
    tied = bad & (sim.argmax < 0)
    if tied.any():
        ax.scatter(
            np.full(tied.sum(), -0.5),
            sim.rows[tied],
            s=9,
            marker="<",
            c=plotting.PALETTE[3],
            label="tied top",
        )
    ax.scatter(
        sim.target,
        sim.rows,
        s=14,
        marker="x",
        c="white",
        linewidths=0.8,
        label="target t_L(i)",
    )
    ax.axhline(L0 - 0.5, color="white", lw=0.8, ls="--")
    ax.set(
        xlabel="key position j",
        ylabel="query position i",
        title=f"{encoding} / {task} ({rule}), L = {L}: α_L = {sim.alpha:.3f}",
    )
    fig.legend(
        loc="outside lower center",
        ncol=3,
        fontsize=9,
        handletextpad=0.3,
        columnspacing=0.8,
        facecolor="#aaaaaa",
        framealpha=1,
    )
    ax.grid(False)
    return plotting.finish(fig), sim


def plot_heatmaps(
    alpha60: dict, lg60: dict, title: str = "", paper_lg60: dict | None = None
):
    """Fig. 5: α_60 (top) and LG@60 (bottom) over (encoding, task); missing cells are blank.
    ``paper_lg60`` (``{"enc/task": LG}``, e.g. Table 3) adds the paper's value under ours, boxed."""
    from matplotlib.patches import Rectangle

    from lengthgen import plotting

    A = np.array(
        [[alpha60.get(f"{e}/{t}", np.nan) for t in MAIN_TASKS] for e in ENCODINGS]
    )
    G = np.array(
        [[lg60.get(f"{e}/{t}", np.nan) for t in MAIN_TASKS] for e in ENCODINGS]
    )
    fig, axes = plotting.figure(2, 1, width=6.8, height=3.3)
    for ax, M, name in (
        (axes[0], A, "α_60 (training-free)"),
        (axes[1], G, "LG@60 (trained, mean over seeds)"),
    ):
        im = ax.imshow(M, vmin=0, vmax=1, cmap="magma", aspect="auto")
        for (r, c), v in np.ndenumerate(M):
            if not np.isfinite(v):
                continue
            col = "w" if v < 0.6 else "k"
            key = f"{ENCODINGS[r]}/{MAIN_TASKS[c]}"
            if ax is axes[1] and paper_lg60 and key in paper_lg60:
                ax.text(
                    c,
                    r - 0.17,
                    f"{v:.2f}",
                    ha="center",
                    va="center",
                    fontsize=10,
                    color=col,
                )
                ax.text(
                    c,
                    r + 0.23,
                    f"paper {paper_lg60[key]:.2f}",
                    ha="center",
                    va="center",
                    fontsize=9,
                    color=col,
                    style="italic",
                )
                ax.add_patch(
                    Rectangle(
                        (c - 0.5, r - 0.5),
                        1,
                        1,
                        fill=False,
                        ec=plotting.PALETTE[5],
                        lw=2,
                    )
                )
            else:
                ax.text(
                    c, r, f"{v:.2f}", ha="center", va="center", fontsize=10, color=col
                )
        ax.set(
            xticks=range(len(MAIN_TASKS)),
            xticklabels=MAIN_TASKS,
            yticks=range(len(ENCODINGS)),
            yticklabels=ENCODINGS,
            xlabel="task",
            ylabel="encoding",
            title=name,
        )
        ax.grid(False)
    fig.colorbar(
        im, ax=axes, label="fraction of rows correct", shrink=0.8
    ).ax.set_xlabel("")
    fig.axes[-1].set_xlabel("fraction", fontsize=9)
    return plotting.finish(fig, title=title or None)


def plot_lg_curves(
    rows,
    alpha: dict,
    tier: str = "1L1H",
    cells=(
        ("rope", "prev"),
        ("rope", "skip5"),
        ("rope", "first"),
        ("sinusoidal", "prev"),
        ("sinusoidal", "first"),
        ("learned_abs", "first"),
        ("learned_abs", "prev"),
        ("rope", "copy"),
    ),
):
    """Fig. 4: trained LG (solid, mean over seeds, band: ± one seed standard deviation) and α_L
    (dashed) against the test length L."""
    from matplotlib.lines import Line2D

    from lengthgen import plotting

    fig, ax = plotting.figure(width=6.8, height=4.6)
    for c, (e, t) in enumerate(cells):
        r = [
            x
            for x in rows
            if x["tier"] == tier and x["encoding"] == e and x["task"] == t
        ]
        if not r:
            continue
        Ls = sorted({x["L"] for x in r})
        col = plotting.PALETTE[c % len(plotting.PALETTE)]
        acc = [np.array([x["acc"] for x in r if x["L"] == L]) for L in Ls]
        m, sd = np.array([a.mean() for a in acc]), np.array([a.std() for a in acc])
        ax.plot(Ls, m, "-o", color=col, ms=3, label=f"{e}/{t}")
        ax.fill_between(Ls, m - sd, m + sd, color=col, alpha=0.15, lw=0)
        ax.plot(Ls, [alpha[f"{e}/{t}"][L] for L in Ls], "--", color=col, lw=1.2)
    h, lab = ax.get_legend_handles_labels()
    h += [
        Line2D([], [], color="grey", marker="o", ms=3),
        Line2D([], [], color="grey", ls="--", lw=1.2),
    ]
    lab += ["trained LG (mean ± sd)", "α_L"]
    ax.set(
        xlabel="test length L (tokens)",
        ylabel="accuracy on rows [L0, L) / α_L",
        ylim=(-0.03, 1.03),
    )
    fig.legend(
        h,
        lab,
        fontsize=9,
        ncol=4,
        loc="outside lower center",
        handlelength=1.6,
        columnspacing=1.0,
    )
    return plotting.finish(fig)


def plot_alpha_vs_lg(
    tier_stats: dict, learnable: float = 0.8, paper_rho: dict | None = None
):
    """Fig. 3: cell-level α (mean over L) against trained LG, one panel per tier of ``tier_stats``
    (``{tier: study_stats(...)}``); learnable cells (train acc > ``learnable``) filled, others hollow.
    ``paper_rho`` (``{tier: ρ}``) adds the paper's learnable-cell Spearman to each title."""
    from lengthgen import plotting

    tiers = [t for t in tier_stats if tier_stats[t].get("n_cells")]
    n = max(1, len(tiers))
    fig, axes = plotting.figure(1, n, width=6.8 / max(n, 2), height=3.3, sharey=True)
    for ax, tier in zip(np.atleast_1d(axes), tiers):
        st = tier_stats[tier]
        cells = st["cells"].values()
        for learn, style in (
            (True, dict(color=plotting.PALETTE[0])),
            (False, dict(facecolors="none", edgecolors="grey")),
        ):
            pts = [
                (c["alpha"], c["lg"])
                for c in cells
                if (c["train"] > learnable) == learn
            ]
            if pts:
                a, g = zip(*pts)
                ax.scatter(
                    a, g, s=22, label="learnable" if learn else "not learnable", **style
                )
        rho = st.get("spearman_learnable")
        title = tier if rho is None else f"{tier}: ρ = {rho:.2f}"
        if paper_rho and tier in paper_rho:
            title += f"\n(paper {paper_rho[tier]:.2f})"
        ax.set(
            xlabel="α (mean over L)",
            ylabel="trained LG (mean)",
            xlim=(-0.05, 1.05),
            ylim=(-0.05, 1.05),
            title=title,
        )
        ax.title.set_fontsize(10)
        ax.text(
            0.97,
            0.03,
            f"{st['n_cells']} cells",
            transform=ax.transAxes,
            ha="right",
            fontsize=9,
        )
    h, lab = np.atleast_1d(axes)[0].get_legend_handles_labels()
    fig.legend(h, lab, loc="outside lower center", ncol=2, fontsize=9)
    return plotting.finish(fig)


def plot_depth_trend(tier_stats: dict, paper: dict | None = None):
    """Fig. 6: learnable-cell Spearman (circles) and precision Pr[LG ≥ 0.7 | α_L ≥ 0.5] (squares),
    each with its bootstrap CI, against depth; ``paper`` (``{tier: (ρ, precision)}``) adds the
    paper's values as black crosses (one legend entry, "paper")."""
    from lengthgen import plotting

    fig, ax = plotting.figure(width=6.0, height=3.6)
    tiers = [t for t in TIERS if tier_stats.get(t, {}).get("n_cells")]
    depth = [TIERS[t][0] for t in tiers]
    for key, ci, mark, col, name in (
        (
            "spearman_learnable",
            "spearman_ci",
            "o",
            plotting.PALETTE[0],
            "ours: Spearman ρ (learnable cells)",
        ),
        (
            "precision",
            "precision_ci",
            "s",
            plotting.PALETTE[1],
            "ours: precision of α_L ≥ 0.5",
        ),
    ):
        pts = [
            (d, tier_stats[t][key], tier_stats[t][ci])
            for d, t in zip(depth, tiers)
            if key in tier_stats[t]
        ]
        if pts:
            d, v, c = zip(*pts)
            err = np.array(
                [
                    [x - lo for x, (lo, _) in zip(v, c)],
                    [hi - x for x, (_, hi) in zip(v, c)],
                ]
            )
            ax.errorbar(
                d,
                v,
                yerr=np.clip(err, 0, None),
                fmt=mark + "-",
                color=col,
                capsize=3,
                label=name,
            )
    if paper:
        pd_ = [(TIERS[t][0], r, p) for t, (r, p) in paper.items() if t in TIERS]
        xs = [x[0] + 0.08 for x in pd_]
        ax.plot(
            xs + xs,
            [x[1] for x in pd_] + [x[2] for x in pd_],
            "x",
            color="k",
            ms=8,
            mew=2,
            label="paper (Table 4)",
        )
    ax.axhline(0, color="grey", lw=0.8)
    ax.set(
        xlabel="layers (1L1H, 2L4H, 4L4H)",
        ylabel="statistic (95% bootstrap CI)",
        xticks=[1, 2, 4],
        ylim=(-0.6, 1.08),
    )
    ax.legend(fontsize=9, loc="lower left")
    return plotting.finish(fig)
