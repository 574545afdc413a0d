"""Ensemble engine vs Python loop (the issue's benchmark); the same as ``python -m lengthgen bench``.

Usage::

    .venv/bin/python benchmarks/ensemble_vs_loop.py [--steps N] [--members E] [--repeat R]
                                                    [--lengths per_member|shared] [--formulation factored|softmax]
                                                    [--no-vmap] [--json]

Everything lives in :mod:`lengthgen.engine.bench`; this script only parses arguments and prints.
"""

from __future__ import annotations

import argparse
import json

from lengthgen.engine.bench import MEMBERS, STEPS, run_benchmark


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument(
        "--steps", type=int, default=STEPS, help=f"updates per member (default {STEPS})"
    )
    p.add_argument(
        "--members",
        type=int,
        default=MEMBERS,
        help=f"ensemble size (default {MEMBERS})",
    )
    p.add_argument(
        "--repeat", type=int, default=1, help="run the benchmark this many times"
    )
    p.add_argument(
        "--lengths",
        choices=("per_member", "shared"),
        default="per_member",
        help="each member draws its own length per batch (default), or one shared length per step",
    )
    p.add_argument(
        "--formulation",
        choices=("factored", "softmax"),
        default="factored",
        help="attention computed via one batched matmul over the bits (default) or an explicit softmax",
    )
    p.add_argument(
        "--no-vmap", action="store_true", help="skip the torch.func.vmap variant"
    )
    p.add_argument("--json", action="store_true", help="one JSON object per run")
    args = p.parse_args(argv)
    for _ in range(max(1, args.repeat)):
        res = run_benchmark(
            steps=args.steps,
            members=args.members,
            vmap=not args.no_vmap,
            lengths=args.lengths,
            formulation=args.formulation,
        )
        if args.json:
            print(json.dumps(res), flush=True)
        else:
            print("\n".join(f"{k:>30}: {v}" for k, v in res.items()), "\n", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
