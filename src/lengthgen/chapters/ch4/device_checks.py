"""Device checks of chapter 4's paper-scale run (section "At the paper's modulus"): the captured
step against the eager one (:func:`compare_step_paths`), the updates/s of both
(:func:`measure_step_rates`), and keeping a brought-back checkpoint under ``results/``
(:func:`store_checkpoint`). ``python -m lengthgen.chapters.ch4.paper_scale check-graph | rates |
store-checkpoint`` runs them (:func:`main`; ``scripts/gpu_ch4.sh``)."""

from __future__ import annotations

import time
from pathlib import Path

import torch

from lengthgen.chapters.ch4.paper import BATCH_SIZE, TRAIN_LENGTHS
from lengthgen.chapters.ch4.paper_scale import _ensemble, _paper_config, float32_throughout
from lengthgen.chapters.ch4.paper_scale import members_of, train_paper_scale
from lengthgen.chapters.ch4.paper_step import CapturedStep, PaperStep, graph_unavailable_reason
from lengthgen.chapters.ch4.training import resolve_device
from lengthgen.config import ConfigError, check_positive_int
from lengthgen.store import ResultFileError, device_name


#: the tiny ensemble of the device check (:func:`compare_step_paths`): every variant, two budgets
#: whose epochs restart at different updates, two weight decays, two seeds
TINY_CHECK = {
    "p": 7,
    "width": 32,
    "budgets": (60, 200),
    "wds": (0.1, 0.03),
    "seeds": (1337, 1338),
    "variants": (("sine", False), ("sine", True), ("relu", False)),
    "lr": 3e-2,
    "steps": 30,
    "eval_every": 10,
    "n_eval": 40,
    "eval_lengths": (2, 3, 14, 53),
    "batch_size": 16,
}

#: float32 tolerance of two step paths that round differently: ``REL_TOL_ULPS`` units of float32
#: rounding (2⁻²³) of each tensor's largest magnitude -- a few roundings per update, compounded
#: over the check's updates, stays far below it, while any real difference (a wrong mask, a missed
#: update) is orders of magnitude above
REL_TOL_ULPS = 4096


def _state_tensors(ck: dict) -> dict[str, torch.Tensor]:
    """Every tensor of a paper-scale checkpoint by name (parameters, optimizer state, sampler, loss)."""
    out = {f"params.{k}": v for k, v in ck["params"].items()}
    out |= {f"opt.{n}.{k}": v for n, st in ck["opt"]["state"].items() for k, v in st.items()}
    out |= {f"sampler.{k}": ck["sampler"][k] for k in ("perm", "k", "gen")}
    return out | {"loss_sum": ck["loss_sum"]}


def compare_states(a: dict, b: dict) -> dict:
    """Compare two paper-scale checkpoints tensor by tensor: whether every tensor, the optimizer
    count and the evaluation history (accuracies and losses; wall times excluded) are bitwise
    equal; the largest absolute difference and its ratio to float32 rounding (2⁻²³) of the tensor's
    largest magnitude; and whether that ratio is within :data:`REL_TOL_ULPS`."""
    ta, tb = _state_tensors(a), _state_tensors(b)
    if set(ta) != set(tb):
        raise ConfigError(
            f"the two checkpoints hold different tensors: {sorted(set(ta) ^ set(tb))}"
        )
    rows, worst = {}, 0.0
    for k in sorted(ta):
        x, y = ta[k].cpu(), tb[k].cpu()
        same = x.shape == y.shape and torch.equal(x, y)
        diff = 0.0
        if not same and x.is_floating_point() and x.shape == y.shape:
            diff = float((x.double() - y.double()).abs().max())
            scale = float(x.double().abs().max()) or 1.0
            ulps = diff / (scale * 2.0**-23)
        else:
            ulps = 0.0 if same else float("inf")
        worst = max(worst, ulps)
        rows[k] = {"bitwise": same, "max_abs_diff": diff, "ulps_of_max": round(ulps, 2)}
    strip = lambda h: [{k: v for k, v in e.items() if k != "wall_s"} for e in h]  # noqa: E731
    hist_same = strip(a["history"]) == strip(b["history"])
    same_t = a["opt"]["t"] == b["opt"]["t"]
    return {
        "bitwise": all(r["bitwise"] for r in rows.values()) and hist_same and same_t,
        "history_equal": hist_same,
        "optimizer_count_equal": same_t,
        "worst_ulps_of_max": round(worst, 2),
        "within_float32_tolerance": worst <= REL_TOL_ULPS and same_t,
        "tolerance_ulps": REL_TOL_ULPS,
        "tensors": rows,
    }


def compare_step_paths(device="cuda", workdir=None, config: dict | None = None) -> dict:
    """The device check of the captured step: the tiny ensemble (:data:`TINY_CHECK`, or ``config``)
    trained from one start by the eager loop, the capturable step called eagerly and the captured
    step, final states compared by :func:`compare_states`. ``passed``: the graph equals the
    capturable eager step (bit for bit or within float32 tolerance) and the eager loop within
    float32 tolerance (AdamW's bias correction rounds differently). Off CUDA: ``skipped``, why."""
    import tempfile

    cfg = dict(TINY_CHECK if config is None else config)
    dev = resolve_device(device)
    why = graph_unavailable_reason(dev)
    if why is not None:
        return {"skipped": why, "passed": None, "device": str(dev)}
    root = Path(workdir) if workdir else Path(tempfile.mkdtemp(prefix="ch4-graph-"))
    runs_, rates = {}, {}
    for name, kw in (
        ("eager", {"graph": False}),
        ("capturable_eager", {"graph": False, "_capturable_eager": True}),
        ("graph", {"graph": True}),
    ):
        r = train_paper_scale(
            **cfg, device=dev, workdir=str(root / name), checkpoint_parts=False, **kw
        )
        rates[name] = r["updates_per_s_this_session"]
        runs_[name] = torch.load(
            root / name / "checkpoint.pt", map_location="cpu", weights_only=False
        )
    same_code = compare_states(runs_["capturable_eager"], runs_["graph"])
    today = compare_states(runs_["eager"], runs_["graph"])
    return {
        "device": str(dev),
        "device_name": device_name(str(dev)),
        "torch": torch.__version__,
        "config": {k: list(v) if isinstance(v, tuple) else v for k, v in cfg.items()},
        "graph_vs_capturable_eager": same_code,
        "graph_vs_eager": today,
        "passed": bool(
            (same_code["bitwise"] or same_code["within_float32_tolerance"])
            and today["within_float32_tolerance"]
        ),
        "updates_per_s_tiny": rates,
    }


def measure_step_rates(config: dict, *, updates: int = 300, warmup: int = 5, device="cuda") -> dict:
    """Updates per second of the eager step and of the captured step (:class:`CapturedStep`) for
    the ensemble of ``config`` (the keys of :data:`paper.PAPER_RUN`; only the model, data and
    optimizer settings are read), each timed over ``updates`` updates after ``warmup`` (which, for
    the graph, include its capture), with the epoch reshuffles and no evaluation. Off CUDA only the
    eager rate is measured and ``graph_skipped`` says why."""
    need = ("p", "width", "budgets", "wds", "seeds", "variants", "lr")
    if not isinstance(config, dict) or any(k not in config for k in need):
        raise ConfigError(
            f"config must be a dict with keys {', '.join(need)}, got {config!r}"[:300]
        )
    updates = check_positive_int("updates", updates)
    warmup = check_positive_int("warmup", warmup, minimum=2)
    defaults = {"steps": 1, "eval_every": 1, "n_eval": 1, "eval_lengths": ()}
    cfg = _paper_config(
        {"batch_size": BATCH_SIZE, "train_lengths": TRAIN_LENGTHS, **defaults, **config}
    )
    members = members_of(cfg["variants"], cfg["budgets"], cfg["wds"], cfg["seeds"])
    dev = resolve_device(device)
    why = graph_unavailable_reason(dev)
    sync = torch.cuda.synchronize if dev.type == "cuda" else (lambda: None)
    out = {
        "p": cfg["p"],
        "width": cfg["width"],
        "members": len(members),
        "batch_size": cfg["batch_size"],
        "updates": updates,
        "device": str(dev),
        "device_name": device_name(str(dev)),
    }
    with float32_throughout():
        for path in ("eager", "graph"):
            if path == "graph" and why is not None:
                out["graph_skipped"] = why
                break
            model, sampler, params, opt = _ensemble(cfg, members, dev, path == "graph")
            loss_sum = torch.zeros(len(members), dtype=torch.float64, device=dev)
            stepper = PaperStep(model, sampler, opt, params, loss_sum)
            run = CapturedStep(stepper, warmup=warmup - 1) if path == "graph" else stepper
            times = [time.perf_counter()]
            for lo, hi in ((0, warmup), (warmup, warmup + updates)):
                for i in range(lo, hi):
                    sampler.reshuffle(i)
                    run()
                sync()
                times.append(time.perf_counter())
            out[f"{path}_updates_per_s"] = round(updates / (times[2] - times[1]), 1)
            out[f"{path}_warmup_s"] = round(times[1] - times[0], 3)
            if not bool(torch.isfinite(params["W"]).all()):
                raise RuntimeError(f"the {path} step produced non-finite weights")
        if "graph_updates_per_s" in out:
            out["speedup"] = round(out["graph_updates_per_s"] / out["eager_updates_per_s"], 2)
    return out


def store_checkpoint(src, name: str, dest_root=None) -> dict:
    """Copy the parted checkpoint in ``src`` (a run's ``workdir/checkpoint``) to
    ``results/ch4/checkpoints/<name>/`` (or ``dest_root/<name>``), keeping only the latest
    (:func:`lengthgen.engine.parts.copy_parts`: never replaced by a run that got less far). Returns
    what happened, the stored update count and the stored size in bytes."""
    from lengthgen.engine.parts import copy_parts, parts_size, read_manifest
    from lengthgen.store import results_dir

    if not isinstance(name, str) or not name or "/" in name or name.startswith("."):
        raise ConfigError(f"checkpoint name must be a plain folder name, got {name!r}")
    dest = (Path(dest_root) if dest_root else results_dir() / "ch4" / "checkpoints") / name
    what = copy_parts(src, dest)
    man = read_manifest(dest)
    return {
        "result": what,
        "dest": str(dest),
        "step": man["meta"].get("step"),
        "bytes": parts_size(dest),
        "parts": len(man["parts"]),
    }


def main(argv=None) -> int:
    """``python -m lengthgen.chapters.ch4.paper_scale check-graph | rates | store-checkpoint``:
    the device check of the captured step (exit 1 when it fails), the updates/s of both step paths
    at the paper's ensemble for each ``--p``, and storing a run's checkpoint parts under results/."""
    import argparse
    import json
    import sys

    from lengthgen.chapters.ch4.paper import PAPER_RUN
    from lengthgen.store import atomic_write_json

    ap = argparse.ArgumentParser(prog="python -m lengthgen.chapters.ch4.paper_scale")
    sub = ap.add_subparsers(dest="command", required=True)
    a = sub.add_parser("check-graph", help="graph step vs eager step at tiny size")
    a.add_argument("--device", default="cuda")
    a.add_argument("--out", help="write the report (JSON) here")
    b = sub.add_parser("rates", help="updates/s of the eager and the captured step")
    b.add_argument("--device", default="cuda")
    b.add_argument("--p", type=int, nargs="+", default=[PAPER_RUN["p"]])
    b.add_argument("--updates", type=int, default=300)
    b.add_argument("--out", help="write the report (JSON) here")
    c = sub.add_parser("store-checkpoint", help="keep a run's checkpoint under results/")
    c.add_argument("src", help="a run's checkpoint folder (workdir/checkpoint)")
    c.add_argument("name", help="the cell's name, e.g. paper_p53")
    args = ap.parse_args(argv)
    try:
        if args.command == "check-graph":
            rep = compare_step_paths(args.device)
            pairs = [k for k in ("graph_vs_capturable_eager", "graph_vs_eager") if k in rep]
            brief = {
                "passed": rep["passed"],
                "skipped": rep.get("skipped"),
                "bitwise": {k: rep[k]["bitwise"] for k in pairs},
                "worst_ulps": {k: rep[k]["worst_ulps_of_max"] for k in pairs},
            }
            print("graph check:", json.dumps(brief), flush=True)
            if args.out:
                atomic_write_json(args.out, rep)
            return 1 if rep["passed"] is False else 0
        if args.command == "rates":
            reps = []
            for p in args.p:
                r = measure_step_rates(
                    {**PAPER_RUN, "p": p}, updates=args.updates, device=args.device
                )
                print("rates:", json.dumps(r), flush=True)
                reps.append(r)
                if args.out:
                    atomic_write_json(args.out, reps)
            return 0
        r = store_checkpoint(args.src, args.name)
        print(
            f"{r['result']}: {r['dest']} at update {r['step']}, {r['parts']} parts, "
            f"{r['bytes'] / 1e6:.1f} MB",
            flush=True,
        )
        return 0
    except (ConfigError, ResultFileError, ValueError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
