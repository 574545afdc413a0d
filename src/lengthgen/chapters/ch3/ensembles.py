"""Chapter 3's trained study as a few study-sized ensembles on one device (section "The trained study").

:func:`study_ensembles` puts many groups into one
:func:`~lengthgen.chapters.ch3.training.train_groups` call (``by="tier_encoding"``: the 150 groups
as 15 ensembles of 45 members); each member keeps its own weights, data, schedule and evaluation
banks, so its rows equal its own cell's up to float32 rounding (``tests/test_ch3_device.py``).
:func:`run_study` stores one cell per group exactly as ``reproduce ch3`` would (same name,
configuration hash and schema; provenance ``executor: "study_ensemble"``), skipping stored groups,
writing each finished ensemble atomically and, with ``budget_s``, starting an ensemble only when its
estimate (:func:`profile_study`) fits. A non-CPU run writes under ``results/ch3/device`` by default
(:func:`default_out`) and never into ``results/ch3`` itself. Precision: float32 with TF32 off
(:func:`float32_precision`), recorded in the provenance.

Command line (``scripts/gpu_ch3.sh``)::

    python -m lengthgen.chapters.ch3.ensembles --device cuda --out OUT --budget-minutes 8

runs :func:`tiny_check`, :func:`profile_study`, then :func:`run_study`; ``--tiny-only`` and
``--profile-only`` stop earlier.
"""

from __future__ import annotations

import argparse
import fnmatch
import json
import math
import sys
import time
from pathlib import Path

import torch

from lengthgen.chapters.ch3 import experiments as ex
from lengthgen.chapters.ch3 import paper, training
from lengthgen.config import (
    DEVICES,
    ConfigError,
    check_choice,
    check_finite,
    check_positive_int,
    get_device,
    get_run_scale,
)
from lengthgen.nn.decoder import TIERS

#: How :func:`study_ensembles` groups the study's groups into ensembles: every group of a (tier,
#: encoding) (``tier_encoding``: 45 members at full scale), the main and pos groups of one seed
#: (``seed``: 9 members, no padding) or one group each (``group``: today's cells).
BY = ("tier_encoding", "seed", "group")
CHAPTER = "ch3"
#: Per-file size limit for what a device session copies back (``scripts/gpu_ch3.sh``).
COPY_LIMIT_BYTES = 15 * 1024 * 1024
#: The tiny protocol of :func:`tiny_check` (seconds on a CPU): a main and a pos group of seed 0 (no
#: padding between them) and a main group of seed 1 (its lengths differ: padding).
TINY = {
    "tier": "1L1H",
    "encoding": "rope",
    "groups": [
        (("prev", "first", "copy"), 0),
        (("pos2", "pos5"), 0),
        (("prev", "first", "copy"), 1),
    ],
    "kwargs": {
        "steps": 3,
        "batch": 8,
        "lr": 3e-3,
        "weight_decay": 0.01,
        "lengths": (30, 40),
        "eval_n": 4,
        "train_eval_n": 2,
        "L0": 20,
    },
}
#: The study of a dry run (``--dry-run``: the whole command on a CPU in seconds, stored at the
#: ``smoke`` scale into its own folder): 2 encodings × 2 seeds × a main and a pos group, 3 updates.
DRY_RUN = {
    "tiers": ("1L1H",),
    "encodings": ("rope", "nope"),
    "seeds": (0, 1),
    "groups": {"main": ("prev", "first"), "pos": ("pos2",)},
    "steps": 3,
    "batch": 8,
    "lr": 3e-4,
    "weight_decay": 0.01,
    "lengths": (30,),
    "eval_n": 4,
    "train_eval_n": 2,
    "L0": 20,
}
#: A tiny check fails when a row of the study-sized ensemble differs from its own group's run on
#: the same device by more than this in loss or accuracy: after 4 updates float32 rounding moves
#: them by ~1e-6, while a member mixed up with another (wrong weights, data or bank) moves them by ~0.1.
TINY_LIMIT = 1e-3


# --------------------------------------------------------------------------- the plan
def study_ensembles(scale: str, by: str = "tier_encoding") -> list[dict]:
    """The study of ``scale`` (:data:`lengthgen.chapters.ch3.paper.PROTOCOL`) as ensembles, in the
    order their first group appears in :func:`~lengthgen.chapters.ch3.experiments.study_plan` (so
    a budget-limited run stores first what the §6 statistics need most): ``[{"name", "tier",
    "encoding", "groups": [study_plan entries]}]``. ``by`` is one of :data:`BY`."""
    scale = check_choice("scale", scale, tuple(paper.PROTOCOL))
    by = check_choice("by", by, BY)
    out: dict[str, dict] = {}
    for g in ex.study_plan(scale):
        name = {
            "tier_encoding": f"{g['tier']}__{g['encoding']}",
            "seed": f"{g['tier']}__{g['encoding']}__seed{g['seed']}",
            "group": g["key"],
        }[by]
        e = out.setdefault(
            name,
            {"name": name, "tier": g["tier"], "encoding": g["encoding"], "groups": []},
        )
        e["groups"].append(g)
    return list(out.values())


def group_cells(scale: str) -> dict:
    """``{cell name: Cell}`` of the trained groups of ``scale``: the very cells of
    :func:`~lengthgen.chapters.ch3.experiments.cells` (name, function, keyword arguments, hash)."""
    return {c.name: c for c in ex.cells(scale) if c.fn is ex.train_cell_group}


def protocol_kwargs(scale: str, groups) -> dict:
    """The keyword arguments that ``groups`` (entries of ``study_plan(scale)``) share, i.e. their
    :func:`~lengthgen.chapters.ch3.experiments.group_kwargs` without tier, encoding, tasks and seed;
    raises :class:`ConfigError` if they differ (they cannot share an ensemble)."""
    shared = None
    for g in groups:
        kw = ex.group_kwargs(scale, g)
        for k in ("tier", "encoding", "tasks", "seed"):
            kw.pop(k)
        if shared is None:
            shared = kw
        elif kw != shared:
            raise ConfigError(
                f"group {g['key']} has another protocol than the ensemble's first group"
            )
    if shared is None:
        raise ConfigError("an ensemble needs at least one group")
    return shared


def float32_precision(device) -> dict:
    """Train in float32 with TF32 off (the paper's precision) on ``device``: sets
    ``torch.backends.cuda.matmul.allow_tf32 = False``, ``torch.backends.cudnn.allow_tf32 = False``
    and the float32 matmul precision ``"highest"``. Returns what the provenance records."""
    dev = get_device(device)
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    torch.set_float32_matmul_precision("highest")
    return {
        "dtype": "float32",
        "tf32": False,
        "float32_matmul_precision": torch.get_float32_matmul_precision(),
        "device": str(dev),
    }


def train_ensemble_groups(
    scale: str, ensemble: dict, *, groups=None, device="cpu", progress=False
) -> dict:
    """Train the groups of ``ensemble`` (an entry of :func:`study_ensembles`; ``groups``: a subset of
    its groups, default all) as one :func:`~lengthgen.chapters.ch3.training.train_groups` call at
    ``scale``'s protocol on ``device``. Returns ``{cell name: rows}``, each what that group's cell stores."""
    if not isinstance(ensemble, dict) or "groups" not in ensemble:
        raise ConfigError(f"ensemble must be an entry of study_ensembles(), got {ensemble!r}")
    groups = ensemble["groups"] if groups is None else list(groups)
    if not groups:
        raise ConfigError(f"ensemble {ensemble.get('name')!r}: no groups to train")
    kw = protocol_kwargs(scale, groups)
    rows = training.train_groups(
        ensemble["tier"],
        ensemble["encoding"],
        [(g["tasks"], g["seed"]) for g in groups],
        device=device,
        progress=progress,
        **kw,
    )
    return {g["key"]: r for g, r in zip(groups, rows)}


# --------------------------------------------------------------------------- folders
def default_out(scale: str, device) -> Path:
    """Where :func:`run_study` writes by default: the folder of ``reproduce ch3``
    (:func:`lengthgen.engine.runs.default_out`) on the CPU; on any other device
    ``results/ch3/device`` (full scale) or ``_build/smoke-results/ch3/device`` (smoke)."""
    from lengthgen.engine import runs

    base = runs.default_out(CHAPTER, get_run_scale(scale))
    return base if get_device(device).type == "cpu" else base / "device"


def check_out(out, device) -> Path:
    """Check and create the output folder ``out`` of a run on ``device``: a run on a device other
    than the CPU must not write into the stored CPU study (``results/ch3``, whose ``cells/`` it
    would fill). Returns the folder."""
    from lengthgen.engine import runs
    from lengthgen.store import results_dir

    out = Path(out)
    if get_device(device).type != "cpu" and (out.resolve() == (results_dir() / CHAPTER).resolve()):
        raise ConfigError(
            f"--out {out} holds the stored CPU study (results/ch3/cells); a {get_device(device).type} "
            "run writes elsewhere, e.g. results/ch3/device"
        )
    return runs.check_out_dir(out)


# --------------------------------------------------------------------------- the tiny check
def tiny_check(device="cpu", *, reference_cpu: bool | None = None) -> dict:
    """The study-sized path at a tiny size on ``device`` (seconds): :data:`TINY`'s groups trained as one
    ensemble and each on its own. Returns the largest row differences (``max_abs_diff``, ``bitwise``),
    the wall times and, with ``reference_cpu`` (default: a non-CPU ``device``), the difference from the
    same ensemble on the CPU. Raises :class:`RuntimeError` when a difference exceeds
    :data:`TINY_LIMIT` or a value is not finite.
    """
    dev = get_device(device)
    if reference_cpu is None:
        reference_cpu = dev.type != "cpu"
    if not isinstance(reference_cpu, bool):
        raise ConfigError(f"reference_cpu must be True, False or None, got {reference_cpu!r}")
    t = TINY
    t0 = time.perf_counter()
    ens = training.train_groups(
        t["tier"], t["encoding"], t["groups"], device=str(dev.type), **t["kwargs"]
    )
    t_ens = time.perf_counter() - t0
    t0 = time.perf_counter()
    own = [
        ex.train_cell_group(t["tier"], t["encoding"], tasks, s, device=str(dev.type), **t["kwargs"])
        for tasks, s in t["groups"]
    ]
    t_own = time.perf_counter() - t0
    out = {
        "device": str(dev),
        "members": sum(len(g[0]) for g in t["groups"]),
        "groups": len(t["groups"]),
        "steps": t["kwargs"]["steps"],
        "bitwise": ens == own,
        "max_abs_diff": rows_difference(ens, own),
        "ensemble_s": round(t_ens, 3),
        "per_group_s": round(t_own, 3),
    }
    if reference_cpu:
        cpu = training.train_groups(
            t["tier"], t["encoding"], t["groups"], device="cpu", **t["kwargs"]
        )
        out["max_abs_diff_vs_cpu"] = rows_difference(ens, cpu)
    vals = [r[k] for g in ens for r in g for k in ("acc", "train_acc", "final_loss")]
    if not all(math.isfinite(v) for v in vals):
        raise RuntimeError(f"tiny check on {dev}: a loss or accuracy is not finite")
    if out["max_abs_diff"] > TINY_LIMIT:
        raise RuntimeError(
            f"tiny check on {dev}: the study-sized ensemble differs from the per-group runs by "
            f"{out['max_abs_diff']:.3g} > {TINY_LIMIT:g}; its members are mixed up"
        )
    return out


def rows_difference(a, b) -> float:
    """The largest |Δ| of ``acc``, ``train_acc`` and ``final_loss`` between two lists of groups' rows
    with the same (task, L, seed) in the same order (``inf`` where they do not line up)."""
    worst = 0.0
    if len(a) != len(b):
        return math.inf
    for ga, gb in zip(a, b):
        if len(ga) != len(gb):
            return math.inf
        for ra, rb in zip(ga, gb):
            if (ra["task"], ra["L"], ra["seed"]) != (rb["task"], rb["L"], rb["seed"]):
                return math.inf
            for k in ("acc", "train_acc", "final_loss"):
                worst = max(worst, abs(ra[k] - rb[k]))
    return worst


# --------------------------------------------------------------------------- the profile
def profile_study(
    scale: str = "full",
    *,
    device="cpu",
    by: str = "tier_encoding",
    steps=(2, 6),
    tiers=None,
) -> dict:
    """Seconds per update of the study-sized ensembles of ``scale`` on ``device`` and an estimate of the
    whole study: per tier, its first ensemble trained for ``steps[0]`` and ``steps[1]`` updates after a
    warm-up (the difference gives seconds per update, the rest the fixed cost); an ensemble is
    estimated as fixed + the protocol's steps × seconds per update. ``tiers`` restricts the profile.
    Returns ``{"tiers": {tier: {...}}, "ensembles": {name: seconds}, "estimate_s", "steps_each"}``.
    """
    scale = check_choice("scale", scale, tuple(paper.PROTOCOL))
    if (
        not isinstance(steps, (tuple, list))
        or len(steps) != 2
        or not all(isinstance(s, int) and not isinstance(s, bool) for s in steps)
        or not 1 <= steps[0] < steps[1]
    ):
        raise ConfigError(f"steps must be two update counts 1 ≤ a < b, e.g. (2, 6), got {steps!r}")
    ens_list = study_ensembles(scale, by)
    known = sorted({e["tier"] for e in ens_list}, key=list(TIERS).index)
    if tiers is None:
        tiers = known
    for t in tiers:
        check_choice("tier", t, tuple(known))
    P = ex._protocol(scale)["study"]
    dev = get_device(device).type
    out = {"tiers": {}, "ensembles": {}, "steps_each": P["steps"], "device": dev}
    for tier in tiers:
        ens = next(e for e in ens_list if e["tier"] == tier)
        kw = protocol_kwargs(scale, ens["groups"])
        groups = [(g["tasks"], g["seed"]) for g in ens["groups"]]
        times = []
        for k in (1, *steps):
            t0 = time.perf_counter()
            training.train_groups(tier, ens["encoding"], groups, device=dev, **{**kw, "steps": k})
            times.append(time.perf_counter() - t0)
        per = max((times[2] - times[1]) / (steps[1] - steps[0]), 1e-9)
        members = sum(len(g[0]) for g in groups)
        out["tiers"][tier] = {
            "members": members,
            "s_per_update": per,
            "fixed_s": max(times[1] - steps[0] * per, 0.0),
            "member_updates_per_s": members / per,
            "profiled_on": ens["name"],
        }
    for e in ens_list:
        if e["tier"] in out["tiers"]:
            out["ensembles"][e["name"]] = estimate_s(out, e["tier"], P["steps"])
    out["estimate_s"] = sum(out["ensembles"].values())
    return out


def estimate_s(profile: dict, tier: str, steps: int) -> float:
    """The estimated seconds of one ensemble of ``tier`` with ``steps`` updates from a
    :func:`profile_study` result (fixed cost + steps × seconds per update)."""
    p = profile["tiers"][tier]
    return p["fixed_s"] + check_positive_int("steps", steps) * p["s_per_update"]


# --------------------------------------------------------------------------- the run
def run_study(
    scale: str = "full",
    *,
    out=None,
    device="cpu",
    by: str = "tier_encoding",
    budget_s: float | None = None,
    only=None,
    allow_dirty: bool = False,
    progress: bool = False,
    profile: dict | None = None,
    stop_margin_s: float = 15.0,
    extra: dict | None = None,
    log=print,
) -> dict:
    """Train the study of ``scale`` as :func:`study_ensembles` (``by``) on ``device`` and store one
    cell per group under ``<out>/cells`` (``out`` default :func:`default_out`), float32 with TF32 off.
    Stored groups are skipped; a stored cell of another scale raises
    :class:`~lengthgen.engine.runs.ScaleConflict` first. ``only``: shell patterns of ensemble names.
    ``budget_s``: stop before an ensemble whose estimate (``profile``, then the last measured ensemble
    of its tier) ends within ``stop_margin_s`` of it. A full-scale run from a dirty git tree is refused
    unless ``allow_dirty``. ``extra`` is added to the run's record and every cell's provenance.
    Returns the run's record, also appended to ``<out>/run.json``.
    """
    from lengthgen.engine import runs
    from lengthgen.store import device_name, git_state

    scale = check_choice("scale", get_run_scale(scale), tuple(paper.PROTOCOL))
    by = check_choice("by", by, BY)
    dev = get_device(device)
    budget_s, stop_margin_s, extra = _check_run_options(
        budget_s, stop_margin_s, allow_dirty, profile, extra
    )
    precision = float32_precision(dev)
    out = check_out(default_out(scale, dev) if out is None else out, dev)
    folder = out / "cells"
    ens_list, cells, status, todo = _todo(scale, by, only, folder)
    git = git_state()
    runs.refuse_dirty(todo, scale, git, allow_dirty)
    steps = ex._protocol(scale)["study"]["steps"]
    est = {t: estimate_s(profile, t, steps) for t in (profile or {}).get("tiers", {})}
    t_start = time.time()
    deadline = None if budget_s is None else t_start + budget_s
    record = {"scale": scale, "device": str(dev), "device_name": device_name(str(dev))}
    record |= {"precision": precision, "by": by, "folder": str(folder), "ensembles": []}
    record |= {"skipped": [e["name"] for e in ens_list if e not in todo]}
    record |= {"remaining": [], "stopped": False, "budget_s": budget_s}
    record |= {"profile": profile, **extra}
    run = {"scale": scale, "device": dev, "requested": device, "git": git}
    run |= {"allow_dirty": allow_dirty, "precision": precision, "by": by}
    for i, e in enumerate(todo):
        groups = [g for g in e["groups"] if status[g["key"]] != "done"]
        guess = est.get(e["tier"])
        if deadline is not None and (time.time() + (guess or 0.0) > deadline - stop_margin_s):
            record |= {"stopped": True, "remaining": [x["name"] for x in todo[i:]]}
            log(
                f"stopping before {e['name']} (estimated {guess or 0:.0f} s, "
                f"{max(deadline - time.time(), 0):.0f} s of the budget left); re-run to resume"
            )
            break
        rows, info, wall, cpu = _train_one(scale, e, groups, dev, progress, steps)
        est[e["tier"]] = wall
        run |= {"wall": wall, "cpu": cpu}
        _store(folder, [cells[g["key"]] for g in groups], rows, info, run, extra)
        record["ensembles"].append(info)
        log(
            f"{e['name']}: {len(groups)} groups, {info['members']} members in {wall:.1f} s "
            f"({info['member_updates_per_s']:.0f} member-updates/s)"
        )
    record["wall_s"] = round(time.time() - t_start, 3)
    _append_run(out / "run.json", record)
    return record


def _train_one(scale, e: dict, groups: list, dev, progress, steps: int):
    """Train the unstored ``groups`` of the ensemble ``e``; returns their rows, the ensemble's
    summary for ``run.json`` and its wall and CPU seconds."""
    members = sum(len(g["tasks"]) for g in groups)
    w0, c0 = time.perf_counter(), time.process_time()
    rows = train_ensemble_groups(scale, e, groups=groups, device=str(dev.type), progress=progress)
    wall, cpu = time.perf_counter() - w0, time.process_time() - c0
    info = {
        "name": e["name"],
        "members": members,
        "groups": [g["key"] for g in groups],
        "wall_s": round(wall, 3),
        "cpu_s": round(cpu, 3),
        "member_updates_per_s": round(members * steps / wall, 1),
    }
    return rows, info, wall, cpu


def _append_run(path: Path, record: dict) -> None:
    """Append a run's ``record`` to ``run.json`` (``{"runs": [...]}``), written atomically."""
    from lengthgen.store import atomic_write_json

    history = []
    if path.exists():
        try:
            history = json.loads(path.read_text()).get("runs", [])
        except (OSError, ValueError, AttributeError):
            history = []  # an unreadable record is replaced by a readable one, never the cells
    atomic_write_json(path, {"runs": [*history, record]})


def _todo(scale: str, by: str, only, folder):
    """The ensembles of the run (:func:`study_ensembles` kept by ``only``), the group cells, each
    cell's state in ``folder`` and the ensembles with a group still to train."""
    from lengthgen.engine import runs

    ens_list = _only(study_ensembles(scale, by), only)
    cells = group_cells(scale)
    status = runs.plan_status(list(cells.values()), folder, scale)
    todo = [e for e in ens_list if any(status[g["key"]] != "done" for g in e["groups"])]
    return ens_list, cells, status, todo


def _check_run_options(budget_s, stop_margin_s, allow_dirty, profile, extra) -> tuple:
    """:func:`run_study`'s options checked; returns ``budget_s``, ``stop_margin_s`` and ``extra``
    (a new dict)."""
    if budget_s is not None:
        budget_s = check_finite("budget_s", budget_s, nonnegative=True)
    stop_margin_s = check_finite("stop_margin_s", stop_margin_s, nonnegative=True)
    if not isinstance(allow_dirty, bool):
        raise ConfigError(f"allow_dirty must be True or False, got {allow_dirty!r}")
    if profile is not None and not (
        isinstance(profile, dict) and isinstance(profile.get("tiers"), dict)
    ):
        raise ConfigError("profile must be a profile_study() result or None")
    if extra is not None and not isinstance(extra, dict):
        raise ConfigError(f"extra must be a dict or None, got {extra!r}")
    return budget_s, stop_margin_s, dict(extra or {})


def _only(ens_list: list[dict], only) -> list[dict]:
    """The ensembles whose names match one of the shell patterns ``only`` (all when ``None``);
    each pattern must match at least one."""
    if only is None:
        return ens_list
    pats = [only] if isinstance(only, str) else list(only)
    names = [e["name"] for e in ens_list]
    for p in pats:
        if not isinstance(p, str) or not fnmatch.filter(names, p):
            raise ConfigError(f"--only {p!r} matches no ensemble; ensembles: {', '.join(names)}")
    return [e for e in ens_list if any(fnmatch.fnmatchcase(e["name"], p) for p in pats)]


def _store(folder, cells: list, rows: dict, info: dict, run: dict, extra: dict):
    """Write the cells of one trained ensemble (``info`` from :func:`run_study`), each with its
    share of the ensemble's wall and CPU time in its provenance."""
    from lengthgen.engine import runs
    from lengthgen.store import provenance

    dev, wall, cpu, members = run["device"], run["wall"], run["cpu"], info["members"]
    for c in cells:
        share = len(c.kwargs["tasks"]) / members
        prov = provenance(
            scale=run["scale"],
            device=str(dev),
            seeds=c.seeds,
            git=run["git"],
            extra={
                "wall_time_s": wall * share,
                "cpu_time_s": cpu * share,
                "trained_on": [str(dev)],
                "requested_device": str(run["requested"]),
                "executor": "study_ensemble",
                "cell": c.name,
                "config_hash": c.hash,
                "allow_dirty": run["allow_dirty"],
                "precision": run["precision"],
                "ensemble": {k: info[k] for k in ("name", "members", "wall_s", "cpu_s")}
                | {"by": run["by"], "share": round(share, 6)},
                **extra,
            },
        )
        runs.write_cell(folder, c, run["scale"], rows[c.name], prov)


# --------------------------------------------------------------------------- command line
def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m lengthgen.chapters.ch3.ensembles",
        description="Chapter 3's trained study as study-sized ensembles (float32, TF32 off).",
    )
    p.add_argument("--scale", choices=tuple(paper.PROTOCOL), default="full")
    p.add_argument("--device", choices=DEVICES, default="auto")
    p.add_argument("--out", default=None, help="output folder (cells/ and run.json)")
    p.add_argument("--by", choices=BY, default="tier_encoding")
    p.add_argument("--budget-minutes", type=float, default=None)
    p.add_argument("--only", action="append", default=None, help="ensemble pattern")
    p.add_argument("--allow-dirty", action="store_true")
    p.add_argument("--progress", action="store_true")
    p.add_argument("--skip-tiny", action="store_true", help="no tiny check first")
    p.add_argument("--tiny-only", action="store_true", help="only the tiny check")
    p.add_argument("--no-profile", action="store_true", help="no profile first")
    p.add_argument("--profile-only", action="store_true", help="stop after the profile")
    p.add_argument(
        "--dry-run",
        action="store_true",
        help="the whole command at the tiny DRY_RUN study (smoke scale, seconds on a CPU)",
    )
    return p


def _print_profile(prof: dict, budget_s: float | None) -> None:
    """The command line's lines on a :func:`profile_study` result and the budget."""
    for t, p in prof["tiers"].items():
        print(
            f"profile {t}: {p['members']} members, {1e3 * p['s_per_update']:.2f} ms/update, "
            f"fixed {p['fixed_s']:.2f} s",
            flush=True,
        )
    print(
        f"estimate of the whole study: {prof['estimate_s']:.0f} s"
        + (
            ""
            if budget_s is None
            else f" (budget {budget_s:.0f} s: "
            + ("fits" if prof["estimate_s"] < budget_s else "a partial run")
            + ")"
        ),
        flush=True,
    )


def main(argv=None) -> int:
    """The command line (see the module docstring); returns the exit status: 0 done or stopped
    cleanly at the budget, 2 bad arguments, 3 a failed tiny check."""
    from lengthgen.store import ResultFileError, atomic_write_json

    args = build_parser().parse_args(argv)
    if args.dry_run:
        if args.scale != "smoke" or args.out is None:
            print(
                "error: --dry-run needs --scale smoke and an --out folder of its own",
                file=sys.stderr,
            )
            return 2
        # this process only: the smoke study becomes the tiny DRY_RUN study
        paper.PROTOCOL["smoke"] = {**paper.PROTOCOL["smoke"], "study": DRY_RUN}
    try:
        budget_s = None
        if args.budget_minutes is not None:
            budget_s = 60 * check_finite("--budget-minutes", args.budget_minutes, nonnegative=True)
        dev = get_device(args.device)
        precision = float32_precision(dev)
        out = check_out(default_out(args.scale, dev) if args.out is None else args.out, dev)
        print(
            f"device {dev} ({precision['dtype']}, TF32 off, matmul precision "
            f"{precision['float32_matmul_precision']}); out {out}",
            flush=True,
        )
        t_start = time.time()
        if not args.skip_tiny:
            try:
                tiny = tiny_check(dev)
            except RuntimeError as err:
                print(f"error: {err}", file=sys.stderr)
                return 3
            atomic_write_json(out / "tiny.json", tiny)
            print(f"tiny check: {json.dumps(tiny)}", flush=True)
        if args.tiny_only:
            return 0
        prof = None
        if not args.no_profile:
            prof = profile_study(args.scale, device=dev, by=args.by)
            atomic_write_json(out / "profile.json", prof)
            _print_profile(prof, budget_s)
        if args.profile_only:
            return 0
        if budget_s is not None:
            budget_s = max(budget_s - (time.time() - t_start), 0.0)
        rec = run_study(
            args.scale,
            out=out,
            device=dev,
            by=args.by,
            budget_s=budget_s,
            only=args.only,
            allow_dirty=args.allow_dirty,
            progress=args.progress,
            profile=prof,
            extra={"dry_run": True} if args.dry_run else None,
        )
    except (ConfigError, ResultFileError, ValueError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    done = len(rec["ensembles"])
    print(
        f"{'stopped at the budget' if rec['stopped'] else 'done'}: {done} ensembles trained, "
        f"{len(rec['skipped'])} already stored, {len(rec['remaining'])} remaining "
        f"({rec['wall_s']:.0f} s); cells in {rec['folder']}",
        flush=True,
    )
    return 0


if __name__ == "__main__":  # pragma: no cover - the command line
    raise SystemExit(main())
