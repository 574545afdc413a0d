"""The toy row of ``python -m lengthgen bench`` with its options (ensemble engine vs a Python loop).

Usage::

    .venv/bin/python benchmarks/ensemble_vs_loop.py [--steps N] [--members E] [--repeat R]
        [--lengths per_member|shared] [--formulation factored|softmax] [--json]

Everything lives in :mod:`lengthgen.benchmarks`; this script only parses arguments and prints.
"""

from __future__ import annotations

import argparse
import json

from lengthgen.benchmarks import FORMULATIONS, bench_text, run_chapter_benchmark


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--steps", type=int, default=40, help="updates per member (40)")
    p.add_argument("--members", type=int, default=40, help="ensemble size (40)")
    p.add_argument("--repeat", type=int, default=1, help="run it this many times")
    p.add_argument(
        "--lengths",
        choices=("per_member", "shared"),
        default="per_member",
        help="each member draws its own length per batch, or one length per step for all",
    )
    p.add_argument("--formulation", choices=FORMULATIONS, default="factored")
    p.add_argument("--json", action="store_true", help="one JSON object per run")
    args = p.parse_args(argv)
    toy = {"members": args.members, "lengths": args.lengths}
    for _ in range(max(1, args.repeat)):
        res = run_chapter_benchmark(
            "toy",
            steps=args.steps,
            overrides={"toy": {**toy, "formulation": args.formulation}},
        )
        print(json.dumps(res) if args.json else bench_text(res), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
