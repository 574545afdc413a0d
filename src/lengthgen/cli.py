"""Command line: ``python -m lengthgen {reproduce,merge,verify,claims,cost,bench} ...``."""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
import time
from pathlib import Path

from lengthgen.config import CHAPTERS, DEVICES, RUN_SCALES, ConfigError, check_positive_int
from lengthgen.engine.runs import EXECUTORS, RunError
from lengthgen.store import ResultFileError


def _arg(*flags, **kw):
    """One argument of a command: the flags and keywords of ``add_argument``."""
    return flags, kw


_CHAPTER = _arg("chapter", choices=CHAPTERS, help="which chapter")
_CHAPTER_OPT = _arg("--chapter", choices=CHAPTERS, help="only this chapter")
_DEVICE = _arg("--device", choices=DEVICES, help="auto (default or $LENGTHGEN_DEVICE), cpu or cuda")
_WORKERS = _arg("--workers", type=int, help="worker processes for process/dask-local (default 2)")


def _only(verb: str, default: str = ""):
    what = f"{verb} only the cells whose names match these shell patterns{default}"
    return _arg("--only", metavar="PATTERN[,PATTERN…]", help=what)


def _executor(what: str):
    return _arg("--executor", choices=EXECUTORS, default="inprocess", help=what)


def _flag(flag: str, what: str):
    return _arg(flag, action="store_true", help=what)


#: every command: its help line and its arguments
COMMANDS = {
    "reproduce": (
        "run a chapter's cells and store the results with provenance",
        [
            _CHAPTER,
            _arg(
                "--scale",
                choices=RUN_SCALES,
                help="smoke (default, or $LENGTHGEN_SCALE), full, or paper (the paper's own "
                "protocol, chapter 4 only; needs a GPU)",
            ),
            _DEVICE,
            _arg(
                "--out",
                help="output folder (default: results/<chapter> at full scale, "
                "_build/smoke-results/<chapter> at smoke)",
            ),
            _only("run", " (e.g. 'lengthgen_*')"),
            _executor("inprocess (default), process (a local pool) or dask"),
            _WORKERS,
            _arg(
                "--scheduler",
                metavar="ADDRESS|local",
                help="with --executor dask: a scheduler address (tcp://host:8786) or 'local' "
                "(default)",
            ),
            _arg(
                "--budget-minutes",
                type=float,
                help="start no new cell after this many minutes, and stop a cell that can stop "
                "early (it stores what it did as a partial result; re-run to resume)",
            ),
            _flag("--allow-dirty", "allow a full-scale run with uncommitted changes (recorded)"),
            _flag(
                "--refresh-unmeasured",
                "also re-run stored cells without a recorded CPU time (migrated ones); each "
                "re-run replaces its cell and records how far its value moved",
            ),
        ],
    ),
    "merge": (
        "bring cells computed into another folder (reproduce --out) into the store",
        [
            _CHAPTER,
            _arg("source", help="the other run's --out folder (its cells/ is read)"),
            _arg("--scale", choices=RUN_SCALES, default="full", help="the scale (default full)"),
            _arg("--out", help="the store to merge into (default: results/<chapter>)"),
        ],
    ),
    "verify": (
        "re-run stored full-scale cells into another folder and judge every claim against "
        "the stored one (same / within noise / borderline / changed)",
        [
            _CHAPTER,
            _only("re-run", " (default: every cell)"),
            _arg(
                "--out",
                help="where the re-runs go (default results/_scratch/verify/<chapter>; cells "
                "already there are not re-run); never the store",
            ),
            _DEVICE,
            _executor("inprocess (default), process or dask"),
            _WORKERS,
            _flag("--all", "list every claim, not only those that moved"),
            _flag("--json", "print the comparison as JSON"),
        ],
    ),
    "claims": (
        "print the claims ledger, or re-check it from the stored results",
        [
            _flag("--json", "print a JSON list of claim records"),
            _CHAPTER_OPT,
            _flag(
                "--check",
                "re-evaluate every stored-result claim from results/ and compare with the "
                "committed ledger; exit 1 on any change",
            ),
        ],
    ),
    "cost": (
        "what the stored full-scale runs cost: wall and CPU time per chapter",
        [_flag("--json", "print a JSON list of per-chapter rows and a total"), _CHAPTER_OPT],
    ),
    "bench": (
        "ensemble engine vs Python loop benchmark",
        [
            _flag("--json", "print the figures as one JSON object"),
            _arg("--steps", type=int, help="training steps per member"),
        ],
    ),
}


def build_parser() -> argparse.ArgumentParser:
    """The parser of every command in :data:`COMMANDS`."""
    p = argparse.ArgumentParser(
        prog="python -m lengthgen",
        description="Length Generalization, Executable: run the book's reproductions.",
    )
    sub = p.add_subparsers(dest="command", metavar="{" + ",".join(COMMANDS) + "}")
    for name, (what, args) in COMMANDS.items():
        cmd = sub.add_parser(name, help=what)
        for flags, kw in args:
            cmd.add_argument(*flags, **kw)
    return p


@contextlib.contextmanager
def _no_empty_folder_left(out):
    """A failed run or merge into ``out`` removes the empty folders it created."""
    path = Path(out).absolute()
    created = [p for p in (path, *path.parents) if not p.exists()]  # the topmost last
    try:
        yield
    except BaseException:
        if created and not created[-1].is_symlink():
            for top, _, _ in os.walk(created[-1], topdown=False):
                with contextlib.suppress(OSError):  # not empty: it stays
                    os.rmdir(top)
        raise


def _results_store() -> None:
    """Check that ``results/`` is a folder (``$LENGTHGEN_ROOT`` may point elsewhere)."""
    from lengthgen.store import results_dir

    folder = results_dir()
    if not folder.is_dir():
        env = os.environ.get("LENGTHGEN_ROOT")
        where = f" (LENGTHGEN_ROOT={env})" if env else ""
        what = "is not a folder" if folder.exists() else "does not exist"
        raise ConfigError(
            f"no results store: {folder} {what}{where}; run from the book's repository or set "
            "LENGTHGEN_ROOT to it"
        )


def _cells_asked(args) -> list[str] | None:
    """``--only``'s patterns (``None``: every cell), once ``--workers`` is checked."""
    if args.workers is not None:
        check_positive_int("--workers", args.workers)
    return None if args.only is None else [x.strip() for x in args.only.split(",") if x.strip()]


def _reproduce(args) -> int:
    from lengthgen.chapters import reproduce
    from lengthgen.config import check_finite, setup
    from lengthgen.engine.runs import default_out

    only, budget_s = _cells_asked(args), args.budget_minutes
    if budget_s is not None:
        budget_s = 60 * check_finite("--budget-minutes", budget_s, nonnegative=True)
    cfg = setup(scale=args.scale, device=args.device, run=True)
    out = args.out if args.out is not None else default_out(args.chapter, cfg.scale)
    t0 = time.perf_counter()
    # the command's options that reproduce (and run_cells) take under the same name
    run = {k: getattr(args, k) for k in ("out", "executor", "workers", "scheduler")}
    run |= {"allow_dirty": args.allow_dirty, "only": only, "budget_s": budget_s}
    with _no_empty_folder_left(out):
        paths = reproduce(
            args.chapter, scale=cfg.scale, device=cfg.device, refresh=args.refresh_unmeasured, **run
        )
    print(
        f"{args.chapter}: {cfg.scale} scale on {cfg.device} in {time.perf_counter() - t0:.1f} s; "
        f"{len(paths)} result files"
    )
    for path in paths or []:
        print(f"  {path}")
    return 0


def _verify(args) -> int:
    from lengthgen.config import setup
    from lengthgen.verify import exit_code, verify, verify_text

    only = _cells_asked(args)
    cfg = setup(scale="full", device=args.device, run=True)
    run = {k: getattr(args, k) for k in ("out", "executor", "workers")}
    res = verify(args.chapter, only=only, device=cfg.device, **run)
    text = verify_text(res, all_claims=args.all)
    print(json.dumps(res, indent=1, default=str) if args.json else text)
    return exit_code(res)


def _claims(args) -> int:
    from lengthgen.claims import category, check_ledgers, load_all, load_ledger, protocol_label

    _results_store()
    if args.check:
        chapters = [args.chapter] if args.chapter else list(CHAPTERS)
        t0 = time.perf_counter()
        problems = check_ledgers(chapters)
        n = sum(len(load_ledger(ch)) for ch in chapters)
        if args.json:
            print(json.dumps(problems, indent=1))
        for p in problems:
            print(f"  {p['id']}: {p['problem']}")
        print(
            f"claims --check: {len(problems)} problem(s) in {n} claims of {', '.join(chapters)} "
            f"({time.perf_counter() - t0:.1f} s)"
        )
        return 1 if problems else 0
    rows = load_ledger(args.chapter) if args.chapter else load_all()
    if args.json or not rows:
        empty = "no claims recorded yet (execute the chapters to fill results/claims/)"
        print(json.dumps(rows, indent=1) if args.json else empty)
        return 0
    for r in rows:
        selfc = r.get("group") == "self-check"
        prot = "self-check (not a paper claim)" if selfc else protocol_label(r)
        print(f"{category(r):<17} {str(r.get('check') or '—'):<9} {r['id']:<44} {prot}")
        print(f"{'':17} {r['statement']}")
    return 0


def _merge(args) -> int:
    from lengthgen.chapters import chapter_schema, plan
    from lengthgen.engine import runs
    from lengthgen.store import merge_cells

    src = Path(args.source) / "cells"
    if not src.is_dir():
        raise ConfigError(f"{args.source} has no cells/ folder: give a run's --out folder")
    out = args.out if args.out is not None else runs.default_out(args.chapter, args.scale)
    with _no_empty_folder_left(out):
        dst = runs.check_out_dir(out) / "cells"
        cells = plan(args.chapter, args.scale, None)
        schema = chapter_schema(args.chapter, args.scale)
        res = merge_cells(src, dst, cells, args.scale, schema=schema)
    print(
        f"{args.chapter}: took {len(res['taken'])} cells into {dst}, kept {len(res['kept'])} already stored, "
        f"{len(res['absent'])} not in {src}"
    )
    return 0


def _cost(args) -> int:
    from lengthgen.cost import cost_table, cost_text

    _results_store()
    rows = cost_table(args.chapter)
    print(json.dumps(rows, indent=1) if args.json else cost_text(rows))
    return 0


def _bench(args) -> int:
    from lengthgen.benchmarks import bench_text, run_chapter_benchmark

    res = run_chapter_benchmark(steps=args.steps)
    print(json.dumps(res) if args.json else bench_text(res))
    return 0


def main(argv=None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 2
    commands = (_reproduce, _merge, _verify, _claims, _cost, _bench)  # in COMMANDS' order
    try:
        return dict(zip(COMMANDS, commands))[args.command](args)
    except (ConfigError, ResultFileError, ValueError, RunError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 1 if isinstance(err, RunError) else 2
    except BrokenPipeError:  # output piped into e.g. `head`: not an error
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except OSError as err:  # a file or folder the run could not read or write
        where = f": {err.filename}" if err.filename else ""
        print(f"error: {err.strerror or err}{where}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        msg = "interrupted; finished cells are stored — re-run the same command to resume"
        print(msg, file=sys.stderr)
        return 130
