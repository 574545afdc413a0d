"""Command line: ``python -m lengthgen {reproduce,claims,bench} ...``."""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from lengthgen.claims import CHAPTERS
from lengthgen.config import DEVICES, SCALES, ConfigError


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # argparse's choices message already names the valid values
        self.print_usage(sys.stderr)
        self.exit(2, f"{self.prog}: error: {message}\n")


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="python -m lengthgen", description="Length Generalization, Executable: run the book's reproductions.")
    sub = p.add_subparsers(dest="command", metavar="{reproduce,claims,bench}", parser_class=_Parser)
    r = sub.add_parser("reproduce", help="run a chapter's sweeps and store the results with provenance")
    r.add_argument("chapter", choices=CHAPTERS, help="which chapter")
    r.add_argument("--scale", choices=SCALES, default=None, help="smoke (default, or $LENGTHGEN_SCALE) or full")
    r.add_argument("--device", choices=DEVICES, default=None, help="auto (default, or $LENGTHGEN_DEVICE), cpu or cuda")
    r.add_argument("--out", default=None, help="output folder (default results/<chapter>)")
    r.add_argument("--only", default=None, metavar="NAME[,NAME…]",
                   help="run only these experiments (chapter 2: names of lengthgen.chapters.ch2.experiments.EXPERIMENTS)")
    c = sub.add_parser("claims", help="print the claims ledger of every chapter")
    c.add_argument("--json", action="store_true", help="print a JSON list of claim objects")
    c.add_argument("--chapter", choices=CHAPTERS, default=None, help="only this chapter")
    b = sub.add_parser("bench", help="ensemble engine vs Python loop benchmark")
    b.add_argument("--json", action="store_true", help="print the figures as one JSON object")
    b.add_argument("--steps", type=int, default=None, help="training steps per member")
    return p


def _reproduce(args) -> int:
    from lengthgen.chapters import get_reproducer
    from lengthgen.config import setup
    from lengthgen.store import results_dir

    cfg = setup(scale=args.scale, device=args.device)
    out = Path(args.out) if args.out else results_dir() / args.chapter
    fn = get_reproducer(args.chapter)
    kw = {}
    if args.only is not None:
        import inspect

        if "experiments" not in inspect.signature(fn).parameters:
            raise ConfigError(f"--only is not supported for chapter {args.chapter} (only ch2 runs named experiments)")
        kw["experiments"] = [x.strip() for x in args.only.split(",") if x.strip()]
    t0 = time.perf_counter()
    paths = fn(scale=cfg.scale, device=cfg.device, out=out, **kw)
    print(f"{args.chapter}: {cfg.scale} scale on {cfg.device} in {time.perf_counter() - t0:.1f} s")
    for path in paths or []:
        print(f"  wrote {path}")
    return 0


def _claims(args) -> int:
    from lengthgen.claims import claims_table, load_all, load_ledger

    rows = load_ledger(args.chapter) if args.chapter else load_all()
    if args.json:
        print(json.dumps(rows, indent=1))
        return 0
    if not rows:
        print("no claims recorded yet (execute the chapters to fill results/claims/)")
        return 0
    import pandas as pd

    with pd.option_context("display.max_rows", None, "display.max_colwidth", 60, "display.width", 200):
        print(claims_table(rows).drop(columns=["reason"]).to_string(index=False))
    return 0


def _bench(args) -> int:
    try:
        from lengthgen.engine.bench import run_benchmark
    except ImportError as err:
        raise NotImplementedError(f"the benchmark is not available: {err}") from None
    res = run_benchmark(steps=args.steps) if args.steps is not None else run_benchmark()
    if args.json:
        print(json.dumps(res))
    else:
        for k, v in res.items():
            print(f"{k:>24}: {v}")
    return 0


def main(argv=None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 2
    try:
        return {"reproduce": _reproduce, "claims": _claims, "bench": _bench}[args.command](args)
    except (ConfigError, NotImplementedError, ValueError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
