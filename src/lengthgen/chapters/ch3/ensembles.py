"""Chapter 3's trained study as study-sized ensembles on one device (``scripts/gpu_ch3.sh`` runs
:func:`main`): the 150 groups as 15 ensembles of 45 members, each member with its own weights, data,
schedule and banks, so its rows equal its own cell's up to float32 rounding (:func:`tiny_check`).
:func:`run_study` stores a cell per group; a non-CPU run never writes into ``results/ch3``."""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from pathlib import Path

import torch

from lengthgen.chapters.ch3 import experiments as ex
from lengthgen.chapters.ch3 import paper, training
from lengthgen.config import DEVICES, ConfigError, check_choice, check_finite, check_positive_int
from lengthgen.config import get_device, get_run_scale
from lengthgen.engine import runs
from lengthgen.store import ResultFileError, atomic_write_json, device_name, max_difference
from lengthgen.store import provenance, results_dir, write_cell

CHAPTER = "ch3"
#: Per-file size limit for what a device session copies back (``scripts/gpu_ch3.sh``).
COPY_LIMIT_BYTES = 15 * 1024 * 1024
#: The protocol of :func:`tiny_check` (seconds on a CPU): a main and a pos group of seed 0 (no
#: padding between them) and a main group of seed 1 (its lengths differ: padding).
TINY = {"tier": "1L1H", "encoding": "rope"}
TINY["groups"] = [(("prev", "first", "copy"), 0), (("pos2", "pos5"), 0)]
TINY["groups"] += [(("prev", "first", "copy"), 1)]
TINY["kwargs"] = {"steps": 3, "batch": 8, "lr": 3e-3, "weight_decay": 0.01, "lengths": (30, 40)}
TINY["kwargs"] |= {"eval_n": 4, "train_eval_n": 2, "L0": 20}
#: The study of ``--dry-run`` (the whole command on a CPU in seconds, at the ``smoke`` scale in its
#: own folder): 2 encodings × 2 seeds × a main and a pos group, 3 updates.
DRY_RUN = {"tiers": ("1L1H",), "encodings": ("rope", "nope"), "seeds": (0, 1)}
DRY_RUN |= {"groups": {"main": ("prev", "first"), "pos": ("pos2",)}}
DRY_RUN |= {**TINY["kwargs"], "lr": 3e-4, "lengths": (30,)}
#: A tiny check fails when an ensemble's row differs from its own group's run by more than this:
#: float32 rounding moves them by ~1e-6, a member mixed up with another by ~0.1.
TINY_LIMIT = 1e-3
#: A budget-limited run starts an ensemble only if its estimate ends this long before the budget.
STOP_MARGIN_S = 15.0


# --------------------------------------------------------------------------- the plan
def study_ensembles(scale: str) -> list[dict]:
    """The study of ``scale`` as ensembles, one per (tier, encoding), in plan order."""
    out: dict[str, dict] = {}
    for g in ex.study_plan(check_choice("scale", scale, tuple(paper.PROTOCOL))):
        name = f"{g['tier']}__{g['encoding']}"
        e = out.setdefault(name, {"name": name, "tier": g["tier"], "encoding": g["encoding"]})
        e.setdefault("groups", []).append(g)
    return list(out.values())


def group_cells(scale: str) -> dict:
    """``{cell name: Cell}`` of the trained groups of ``scale`` (those of ``experiments.cells``)."""
    return {c.name: c for c in ex.cells(scale) if c.fn is ex.train_cell_group}


def protocol_kwargs(scale: str, groups) -> dict:
    """The :func:`~.experiments.group_kwargs` that ``groups`` share, or :class:`ConfigError`."""
    own = ("tier", "encoding", "tasks", "seed")
    kws = [{k: v for k, v in ex.group_kwargs(scale, g).items() if k not in own} for g in groups]
    if not kws or any(kw != kws[0] for kw in kws):
        raise ConfigError("an ensemble needs one or more groups that share one protocol")
    return kws[0]


def float32_precision(device) -> dict:
    """Train in float32, TF32 off (the paper's precision); returns what the provenance records."""
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    torch.set_float32_matmul_precision("highest")
    mm, dev = torch.get_float32_matmul_precision(), str(get_device(device))
    return {"dtype": "float32", "tf32": False, "float32_matmul_precision": mm, "device": dev}


def train_ensemble_groups(scale: str, ensemble: dict, *, groups=None, device="cpu", steps=None):
    """Train ``groups`` (default all) of ``ensemble`` as one ensemble: ``{cell: rows}``."""
    groups = ensemble["groups"] if groups is None else list(groups)
    kw = protocol_kwargs(scale, groups)
    pairs, kw = [(g["tasks"], g["seed"]) for g in groups], {**kw, "steps": steps or kw["steps"]}
    rows = training.train_groups(ensemble["tier"], ensemble["encoding"], pairs, device=device, **kw)
    return {g["key"]: r for g, r in zip(groups, rows)}


# --------------------------------------------------------------------------- folders
def default_out(scale: str, device) -> Path:
    """``reproduce ch3``'s folder on the CPU, its ``device`` subfolder on any other device."""
    base = runs.default_out(CHAPTER, get_run_scale(scale))
    return base if get_device(device).type == "cpu" else base / "device"


def check_out(out, device) -> Path:
    """Check and create ``out``: a non-CPU run must not write into ``results/ch3``."""
    out, kind = Path(out), get_device(device).type
    if kind != "cpu" and out.resolve() == (results_dir() / CHAPTER).resolve():
        where = f"a {kind} run writes elsewhere, e.g. results/ch3/device"
        raise ConfigError(f"--out {out} holds the stored CPU study (results/ch3/cells); {where}")
    return runs.check_out_dir(out)


# --------------------------------------------------------------------------- the tiny check
def tiny_check(device="cpu") -> dict:
    """:data:`TINY`'s groups as one ensemble and each alone on ``device``: the largest difference,
    the wall times; raises :class:`RuntimeError` above :data:`TINY_LIMIT`."""
    t, dev = TINY, get_device(device)
    tier_enc, kind = (t["tier"], t["encoding"]), dev.type
    ensemble = lambda on: training.train_groups(*tier_enc, t["groups"], device=on, **t["kwargs"])
    t0 = time.perf_counter()
    ens = ensemble(kind)
    t1 = time.perf_counter()
    kw = dict(device=kind, **t["kwargs"])
    own = [ex.train_cell_group(*tier_enc, ts, s, **kw) for ts, s in t["groups"]]
    out = {"device": str(dev), "members": sum(len(g[0]) for g in t["groups"])}
    out |= {"groups": len(t["groups"]), "steps": t["kwargs"]["steps"], "bitwise": ens == own}
    out |= {"max_abs_diff": max_difference(ens, own), "ensemble_s": round(t1 - t0, 3)}
    out["per_group_s"] = round(time.perf_counter() - t1, 3)
    if kind != "cpu":
        out["max_abs_diff_vs_cpu"] = max_difference(ens, ensemble("cpu"))
    vals = [r[k] for g in ens for r in g for k in ("acc", "train_acc", "final_loss")]
    if not all(math.isfinite(v) for v in vals):
        raise RuntimeError(f"tiny check on {dev}: a loss or accuracy is not finite")
    if out["max_abs_diff"] > TINY_LIMIT:
        diff = f"{out['max_abs_diff']:.3g} > {TINY_LIMIT:g}; its members are mixed up"
        msg = f"the study-sized ensemble differs from the per-group runs by {diff}"
        raise RuntimeError(f"tiny check on {dev}: {msg}")
    return out


# --------------------------------------------------------------------------- the profile
def profile_study(scale: str = "full", *, device="cpu") -> dict:
    """Seconds per update of each tier's first ensemble and the estimate of the whole study."""
    a, b = 2, 6
    ens_list = study_ensembles(scale)
    tiers = dict.fromkeys(e["tier"] for e in ens_list)  # the plan's order: tier by tier
    n_steps = ex._protocol(scale)["study"]["steps"]
    dev = get_device(device).type
    out = {"tiers": {}, "ensembles": {}, "steps_each": n_steps, "device": dev}
    for tier in tiers:
        ens = next(e for e in ens_list if e["tier"] == tier)
        times = []
        for k in (1, a, b):
            t0 = time.perf_counter()
            train_ensemble_groups(scale, ens, device=dev, steps=k)
            times.append(time.perf_counter() - t0)
        per = max((times[2] - times[1]) / (b - a), 1e-9)
        members = sum(len(g["tasks"]) for g in ens["groups"])
        out["tiers"][tier] = {"members": members, "s_per_update": per}
        out["tiers"][tier] |= {"fixed_s": max(times[1] - a * per, 0.0)}
        out["tiers"][tier] |= {"member_updates_per_s": members / per, "profiled_on": ens["name"]}
    out["ensembles"] = {e["name"]: estimate_s(out, e["tier"], n_steps) for e in ens_list}
    out["estimate_s"] = sum(out["ensembles"].values())
    return out


def estimate_s(profile: dict, tier: str, steps: int) -> float:
    """Estimated seconds of one ensemble of ``tier`` with ``steps`` updates, from ``profile``."""
    p = profile["tiers"][tier]
    return p["fixed_s"] + check_positive_int("steps", steps) * p["s_per_update"]


# --------------------------------------------------------------------------- the run
def run_study(
    scale: str = "full",
    *,
    out=None,
    device="cpu",
    budget_s: float | None = None,
    allow_dirty: bool = False,
    profile: dict | None = None,
    extra: dict | None = None,
    log=print,
) -> dict:
    """Train the study of ``scale`` as :func:`study_ensembles`, storing a cell per group under
    ``<out>/cells`` and skipping stored ones; ``budget_s``: stop before an ensemble whose estimate
    would overrun it. Returns the record appended to run.json."""
    scale = check_choice("scale", get_run_scale(scale), tuple(paper.PROTOCOL))
    if budget_s is not None:
        budget_s = check_finite("budget_s", budget_s, nonnegative=True)
    dev = get_device(device)
    precision = float32_precision(dev)
    out = check_out(default_out(scale, dev) if out is None else out, dev)
    folder, extra = out / "cells", dict(extra or {})
    ens_list = study_ensembles(scale)
    cells = group_cells(scale)
    status, git, _ = runs.plan_run(list(cells.values()), folder, scale, allow_dirty)
    todo = [e for e in ens_list if any(status[g["key"]] != "done" for g in e["groups"])]
    steps = ex._protocol(scale)["study"]["steps"]
    est = {t: estimate_s(profile, t, steps) for t in (profile or {}).get("tiers", {})}
    t_start = time.time()
    deadline = None if budget_s is None else t_start + budget_s
    record = {"scale": scale, "device": str(dev), "device_name": device_name(str(dev))}
    record |= {"precision": precision, "folder": str(folder), "ensembles": []}
    record |= {"skipped": [e["name"] for e in ens_list if e not in todo]}
    record |= {"remaining": [], "stopped": False, "budget_s": budget_s, "profile": profile, **extra}
    for i, e in enumerate(todo):
        guess = est.get(e["tier"]) or 0.0
        if deadline is not None and time.time() + guess > deadline - STOP_MARGIN_S:
            record |= {"stopped": True, "remaining": [x["name"] for x in todo[i:]]}
            left = f"{max(deadline - time.time(), 0):.0f} s of the budget left"
            log(f"stopping before {e['name']} (estimated {guess:.0f} s, {left}); re-run to resume")
            break
        groups = [g for g in e["groups"] if status[g["key"]] != "done"]
        members = sum(len(g["tasks"]) for g in groups)
        w0, c0 = time.perf_counter(), time.process_time()
        rows = train_ensemble_groups(scale, e, groups=groups, device=dev.type)
        wall, cpu = time.perf_counter() - w0, time.process_time() - c0
        est[e["tier"]] = wall
        info = {"name": e["name"], "members": members, "groups": [g["key"] for g in groups]}
        info |= {"wall_s": round(wall, 3), "cpu_s": round(cpu, 3)}
        info["member_updates_per_s"] = round(members * steps / wall, 1)
        ensemble = {k: info[k] for k in ("name", "members", "wall_s", "cpu_s")}
        for g in groups:  # each cell with its share of the wall and CPU time
            c, share = cells[g["key"]], len(g["tasks"]) / members
            pv = {"wall_time_s": wall * share, "cpu_time_s": cpu * share, "trained_on": [str(dev)]}
            pv |= {"requested_device": str(device), "executor": "study_ensemble", "cell": c.name}
            pv |= {"config_hash": c.hash, "allow_dirty": allow_dirty, "precision": precision}
            pv |= {"ensemble": ensemble | {"share": round(share, 6)}, **extra}
            prov = provenance(scale=scale, device=str(dev), seeds=c.seeds, git=git, extra=pv)
            write_cell(folder, c, scale, rows[c.name], prov)
        record["ensembles"].append(info)
        rate = f"{info['member_updates_per_s']:.0f} member-updates/s"
        log(f"{e['name']}: {len(groups)} groups, {members} members in {wall:.1f} s ({rate})")
    record["wall_s"] = round(time.time() - t_start, 3)
    try:
        history = json.loads((out / "run.json").read_text()).get("runs", [])
    except (OSError, ValueError, AttributeError):
        history = []  # none yet, or an unreadable one: replaced by a readable one, never the cells
    atomic_write_json(out / "run.json", {"runs": [*history, record]})
    return record


# --------------------------------------------------------------------------- command line
def main(argv=None) -> int:
    """The command line; exit 0 done (or stopped at the budget), 2 bad arguments, 3 tiny failed."""
    p = argparse.ArgumentParser(
        prog="python -m lengthgen.chapters.ch3.ensembles",
        description="Chapter 3's trained study as study-sized ensembles (float32, TF32 off).",
    )
    p.add_argument("--scale", choices=tuple(paper.PROTOCOL), default="full")
    p.add_argument("--device", choices=DEVICES, default="auto")
    p.add_argument("--out", default=None, help="output folder (cells/ and run.json)")
    p.add_argument("--budget-minutes", type=float, default=None)
    p.add_argument("--allow-dirty", action="store_true")
    p.add_argument("--dry-run", action="store_true", help="the tiny DRY_RUN study (smoke scale)")
    args, say = p.parse_args(argv), lambda text: print(text, flush=True)
    if args.dry_run and (args.scale != "smoke" or args.out is None):
        print("error: --dry-run needs --scale smoke and an --out folder", file=sys.stderr)
        return 2
    if args.dry_run:  # this process only: the smoke study becomes the tiny DRY_RUN study
        paper.PROTOCOL["smoke"] = {**paper.PROTOCOL["smoke"], "study": DRY_RUN}
    try:
        budget_s = args.budget_minutes
        if budget_s is not None:
            budget_s = 60 * check_finite("--budget-minutes", budget_s, nonnegative=True)
        dev = get_device(args.device)
        mm = float32_precision(dev)["float32_matmul_precision"]
        out = check_out(default_out(args.scale, dev) if args.out is None else args.out, dev)
        say(f"device {dev} (float32, TF32 off, matmul precision {mm}); out {out}")
        t_start = time.time()
        try:
            tiny = tiny_check(dev)
        except RuntimeError as err:
            print(f"error: {err}", file=sys.stderr)
            return 3
        atomic_write_json(out / "tiny.json", tiny)
        say(f"tiny check: {json.dumps(tiny)}")
        prof = profile_study(args.scale, device=dev)
        atomic_write_json(out / "profile.json", prof)
        for t, row in prof["tiers"].items():
            ms = f"{1e3 * row['s_per_update']:.2f} ms/update, fixed {row['fixed_s']:.2f} s"
            say(f"profile {t}: {row['members']} members, {ms}")
        fits = "" if budget_s is None else f" (budget {budget_s:.0f} s)"
        say(f"estimate of the whole study: {prof['estimate_s']:.0f} s{fits}")
        if budget_s is not None:
            budget_s = max(budget_s - (time.time() - t_start), 0.0)
        kw = dict(out=out, device=dev, budget_s=budget_s, profile=prof)
        kw |= dict(allow_dirty=args.allow_dirty, extra={"dry_run": True} if args.dry_run else None)
        rec = run_study(args.scale, **kw)
    except (ConfigError, ResultFileError, ValueError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    say(
        f"{'stopped at the budget' if rec['stopped'] else 'done'}: {len(rec['ensembles'])} "
        f"ensembles trained, {len(rec['skipped'])} already stored, {len(rec['remaining'])} "
        f"remaining ({rec['wall_s']:.0f} s); cells in {rec['folder']}"
    )
    return 0


if __name__ == "__main__":  # pragma: no cover - the command line
    raise SystemExit(main())
