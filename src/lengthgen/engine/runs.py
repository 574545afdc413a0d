"""Resumable runs: a chapter's ``reproduce`` is a list of named cells run through :func:`run_cells`.
A :class:`Cell` (a name, a module-level function, its keyword arguments) is stored under its name
with the scale and its configuration hash (:func:`config_hash`): a re-run skips stored cells,
recomputes changed ones and never replaces another scale's. Executors: ``inprocess``, ``process``
and ``dask``. ``book/engine.md`` ("Runs: cells, keys and executors") explains each rule."""

from __future__ import annotations

import concurrent.futures as cf
import contextlib
import hashlib
import inspect
import json
import multiprocessing as mp
import os
import re
import time
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace
from typing import Any, Callable, Iterator, Mapping, Sequence

from lengthgen.config import ConfigError, check_choice, check_finite, check_positive_int
from lengthgen.config import get_run_scale
from lengthgen import store

EXECUTORS = ("inprocess", "process", "dask")
#: Dask: default wait for one cell (plus ``budget_s``) and for a cluster without workers.
DASK_TIMEOUT_S = 6 * 3600.0
DASK_NO_WORKERS_S = 60.0
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.=-]*$")


class RunError(RuntimeError):
    """A cell function failed; the message names the cell. Finished cells stay stored."""


# --------------------------------------------------------------------------- devices actually used
_DEVICES_SEEN: set[str] = set()


def note_device(device) -> None:
    """Record that the current cell trained on ``device`` (its provenance)."""
    _DEVICES_SEEN.add(str(device))


# --------------------------------------------------------------------------- cells and keys
def _qualname(fn: Callable) -> str:
    # a cell function moved to another module sets ``stored_as`` to the name its cells were hashed by
    default = f"{getattr(fn, '__module__', '?')}.{getattr(fn, '__qualname__', repr(fn))}"
    return getattr(fn, "stored_as", default)


def config_hash(fn: Callable, kwargs: Mapping) -> str:
    """12 hex digits of SHA-256 over the function's qualified name and its keyword arguments."""
    spec = {"fn": _qualname(fn), "kwargs": store._clean(dict(kwargs))}
    blob = json.dumps(spec, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(blob.encode()).hexdigest()[:12]


@dataclass(frozen=True)
class Cell:
    """One unit of a reproduction, stored as ``<folder>/<name>.json``: ``fn(**kwargs)`` (plus
    ``device``, ``progress``, ``deadline``, ``workdir`` where its signature names them)."""

    name: str
    fn: Callable
    kwargs: Mapping = field(default_factory=dict)
    seeds: Sequence[int] = ()

    def __post_init__(self):
        if not isinstance(self.name, str) or not _NAME.match(self.name):
            raise ConfigError(f"cell name {self.name!r} must be letters, digits, _.=- (no slashes)")
        if not callable(self.fn):
            raise ConfigError(f"cell {self.name!r}: fn must be callable, got {self.fn!r}")
        if not isinstance(self.kwargs, Mapping):
            raise ConfigError(
                f"cell {self.name!r}: kwargs must be a dict, got {type(self.kwargs).__name__}"
            )

    @property
    def hash(self) -> str:
        return config_hash(self.fn, self.kwargs)


# --------------------------------------------------------------------------- output folders
def default_out(chapter: str, scale: str) -> Path:
    """``results/<chapter>``, or ``_build/smoke-results/<chapter>`` at smoke scale."""
    if get_run_scale(scale) != "smoke":
        return store.results_dir() / chapter
    return store.repo_root() / "_build" / "smoke-results" / chapter


def check_out_dir(out: str | os.PathLike) -> Path:
    """Check that ``out`` can be a result folder (created if needed) before any work starts."""
    out = Path(out)
    for parent in (out, *out.parents):
        if parent.exists():
            if not parent.is_dir():
                what = "is an existing file" if parent == out else f"is under the file {parent}"
                raise ConfigError(f"--out {out} {what}; give a folder")
            break
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise ConfigError(f"--out {out} cannot be created: {err.strerror or err}") from None
    if not os.access(out, os.W_OK | os.X_OK):
        raise ConfigError(f"--out {out} is not writable")
    return out


# --------------------------------------------------------------------------- execution
def _call(fn: Callable, kwargs: Mapping, device: str, progress: bool, threads: int, extras=None):
    """Run one cell in this process; returns its value and what the provenance needs."""
    import torch

    if torch.get_num_threads() != threads:
        torch.set_num_threads(threads)
    params = inspect.signature(fn).parameters
    given = {"device": device, "progress": progress, **(extras or {})}
    kw = {**kwargs, **{k: v for k, v in given.items() if k in params}}
    _DEVICES_SEEN.clear()
    load0 = os.getloadavg()
    w0, c0 = time.perf_counter(), time.process_time()
    value = fn(**kw)
    info = {"wall_time_s": time.perf_counter() - w0, "cpu_time_s": time.process_time() - c0}
    for key, load in (("load_avg_start", load0), ("load_avg_end", os.getloadavg())):
        info[key] = [round(v, 2) for v in load]
    info |= {"devices_used": sorted(_DEVICES_SEEN), "threads": torch.get_num_threads()}
    info["pid"] = os.getpid()
    return store._clean(value), info


@contextlib.contextmanager
def make_executor(executor=None, *, workers=None, scheduler=None) -> Iterator[cf.Executor | None]:
    """The executor named ``executor`` (``None`` in-process), closed on exit; ``"dask"`` runs a
    ``LocalCluster`` or joins the scheduler at ``scheduler``. An ``Executor`` is used as is."""
    if isinstance(executor, cf.Executor):
        yield executor
        return
    kind = check_choice("executor", executor or "inprocess", EXECUTORS)
    workers = None if workers is None else check_positive_int("workers", workers)
    if scheduler is not None and kind != "dask":
        raise ConfigError(f"--scheduler needs --executor dask (got executor {kind!r})")
    if kind == "inprocess":
        yield None
    elif kind == "process":
        ctx = mp.get_context("spawn")
        with cf.ProcessPoolExecutor(max_workers=workers or 2, mp_context=ctx) as ex:
            yield ex
    else:
        try:
            from dask.distributed import Client, LocalCluster
        except ImportError:
            raise ConfigError(
                "--executor dask needs the 'distributed' package (pip install 'dask[distributed]')"
            ) from None
        if scheduler in (None, "local"):
            kw = dict(threads_per_worker=1, processes=True, dashboard_address=None)
            cluster = LocalCluster(n_workers=workers or 2, **kw)
            client = Client(cluster)
        else:
            if workers is not None:
                raise ConfigError("--workers sizes a local cluster; a remote scheduler has its own")
            cluster = None
            try:
                client = Client(scheduler, timeout="10s")
            except (OSError, TimeoutError) as err:
                raise ConfigError(f"cannot reach the Dask scheduler {scheduler!r}: {err}") from None
        try:
            yield client.get_executor(pure=False)
        finally:
            client.close()
            if cluster is not None:
                cluster.close()


def _dask_workers(client) -> int:
    try:
        return len(client.nthreads(callback_timeout=10))
    except Exception:  # noqa: BLE001 - an unreachable scheduler has no workers for us
        return 0


def _wait_dask(pending: dict, submitted: dict, client, run) -> set:
    """The finished futures of ``pending`` (waiting for one); :class:`RunError` when a cell runs
    past ``run.timeout_s`` or the cluster has had no worker for ``run.no_workers_s``."""
    timeout_s, no_workers_s = run.timeout_s, run.no_workers_s
    poll = max(0.05, min(2.0, timeout_s / 4, no_workers_s / 4))
    alone_since = None
    while True:
        done, _ = cf.wait(list(pending), timeout=poll, return_when=cf.FIRST_COMPLETED)
        if done:
            return done
        now = time.perf_counter()
        late = [f for f in pending if now - submitted[f] > timeout_s]
        problem = None
        if late:
            problem = (
                f"cell {pending[late[0]].name!r} did not finish within {timeout_s:g} s on the Dask cluster "
                "(timeout_s)"
            )
        elif _dask_workers(client):
            alone_since = None
        elif alone_since is None:
            alone_since = now
        elif now - alone_since > no_workers_s:
            problem = (
                f"the Dask cluster has had no worker for {no_workers_s:g} s (the last one died or left), "
                f"so cell {next(iter(pending.values())).name!r} cannot finish"
            )
        if problem:
            for f in pending:
                f.cancel()
            raise RunError(
                f"{run.desc}: {problem}; re-run to resume (cells that finished are kept under "
                f"{run.folder})"
            )


def refuse_dirty(todo, scale: str, git: dict, allow_dirty: bool) -> None:
    """Refuse a run above smoke scale with work ``todo`` from a dirty git tree (no ``allow_dirty``)."""
    if todo and scale != "smoke" and git["dirty"] and not allow_dirty:
        why = "a clean git tree (commit first), or --allow-dirty (recorded in the provenance)"
        raise ConfigError(f"a {scale}-scale run needs {why}")


def plan_run(cells, folder: Path, scale: str, allow_dirty: bool, refresh: bool = False):
    """``(status, git, todo)`` of a run of ``cells`` into ``folder``: each cell's stored state, the
    git state at the start and the cells to compute (``refresh``: also stored ones without a CPU
    time); a dirty tree is refused (:func:`refuse_dirty`). The first step of :func:`run_cells` and
    of any runner that stores cells its own way."""
    status, git = store.plan_status(cells, folder, scale), store.git_state()
    todo = [
        c
        for c in cells
        if status[c.name] != "done" or (refresh and store.unmeasured(folder, c, scale))
    ]
    refuse_dirty(todo, scale, git, allow_dirty)
    return status, git, todo


def run_cells(
    cells: Sequence[Cell],
    folder: str | os.PathLike,
    *,
    scale: str,
    device: str = "cpu",
    executor: str | cf.Executor | None = None,
    workers: int | None = None,
    scheduler: str | None = None,
    budget_s: float | None = None,
    allow_dirty: bool = False,
    progress: bool = True,
    desc: str = "cells",
    extra: Mapping | None = None,
    refresh: bool = False,
    timeout_s: float | None = None,
    no_workers_s: float | None = None,
) -> dict[str, Any]:
    """Compute every cell not stored under ``folder`` with this scale and hash (``refresh``: also
    those without a CPU time); returns ``{name: value}`` of the stored cells. After ``budget_s``
    seconds no new cell starts; ``extra`` is added to each provenance."""
    import torch

    scale = get_run_scale(scale)
    cells, folder = list(cells), Path(folder)
    timeout_s, no_workers_s = _check_run_args(cells, refresh, budget_s, timeout_s, no_workers_s)
    status, git, todo = plan_run(cells, folder, scale, allow_dirty, refresh)
    stale = {c.name for c in todo if status[c.name] == "done"}  # re-run for their CPU time
    # what the queue needs besides its executor and its cells
    run = SimpleNamespace(folder=folder, scale=scale, git=git, stale=stale, extra=extra, desc=desc)
    run.budget_s, run.timeout_s, run.no_workers_s = budget_s, timeout_s, no_workers_s
    run.progress, run.window = progress, max(1, workers or 2)
    run.record = {"requested_device": str(device), "allow_dirty": bool(allow_dirty)}
    deadline = None if budget_s is None else time.time() + budget_s
    # what every cell's call gets besides its own function and arguments
    run.call = {"device": str(device), "threads": torch.get_num_threads(), "deadline": deadline}
    run.t_start = time.perf_counter()  # the budget counts from here
    bar = progress_bar(progress and todo, len(cells), len(cells) - len(todo), desc)
    try:
        with make_executor(executor, workers=workers, scheduler=scheduler) as ex:
            label = executor if isinstance(executor, str) else type(ex).__name__
            run.record["executor"] = "inprocess" if ex is None else label
            _run_queue(ex, todo, run, bar)
    finally:
        if bar is not None:
            bar.close()
    kept = [c.name for c in cells if store.stored_state(folder, c, scale) in ("done", "partial")]
    return {name: store.cell_value(folder, name) for name in kept}


def _run_queue(ex, todo: list[Cell], run, bar) -> None:
    """Run and store the cells ``todo`` on ``ex``; after a failure nothing new starts and
    :class:`RunError` names the first failure."""
    window = 1 if ex is None else run.window
    client = getattr(ex, "_client", None)  # a Dask ClientExecutor's client
    queue, pending, submitted, failures = list(todo), {}, {}, []
    while queue or pending:
        while queue and len(pending) < window and not failures:
            if run.budget_s is not None and time.perf_counter() - run.t_start > run.budget_s:
                queue.clear()
                break
            c = queue.pop(0)
            fut = _submit(ex, c, run.folder, run.call, bool(run.progress and ex is None))
            pending[fut], submitted[fut] = c, time.perf_counter()
        if not pending:
            break
        if client is not None:
            done = _wait_dask(pending, submitted, client, run)
        else:
            done, _ = cf.wait(list(pending), return_when=cf.FIRST_COMPLETED)
        for fut in done:
            c = pending.pop(fut)
            try:
                value, info = fut.result()
            except Exception as err:  # noqa: BLE001 - reported by run_cells with the cell
                failures.append((c, err))
                for other in list(pending):
                    if other.cancel():
                        pending.pop(other)
                continue
            _store(c, value, info, run)
            if bar is not None:
                bar.update(1)
    if failures:
        c, err = failures[0]
        raise RunError(
            f"{run.desc}: cell {c.name!r} failed: {err!r}; re-run to resume (cells that "
            f"finished are kept under {run.folder})"
        ) from err


def _check_run_args(cells, refresh, budget_s, timeout_s, no_workers_s):
    """Check :func:`run_cells`' arguments; returns ``(timeout_s, no_workers_s)``."""
    if not all(isinstance(c, Cell) for c in cells):
        raise ConfigError("cells must be a list of lengthgen.engine.runs.Cell")
    if not isinstance(refresh, bool):
        raise ConfigError(f"refresh must be True or False, got {refresh!r}")
    budget = check_finite("budget_s", budget_s, nonnegative=True) if budget_s else 0.0
    timeout_s = DASK_TIMEOUT_S + budget if timeout_s is None else timeout_s
    no_workers_s = DASK_NO_WORKERS_S if no_workers_s is None else no_workers_s
    for name, value in (("timeout_s", timeout_s), ("no_workers_s", no_workers_s)):
        if check_finite(name, value) <= 0:
            raise ConfigError(f"{name} must be a positive number of seconds, got {value!r}")
    return timeout_s, no_workers_s


def progress_bar(show, total: int, initial: int, desc: str):
    """A tqdm bar (``None`` when not ``show``): a plan's cells, or a training's updates."""
    if not show:
        return None
    from tqdm.auto import tqdm

    return tqdm(total=total, initial=initial, desc=desc, leave=False, dynamic_ncols=True)


def _submit(ex, c: Cell, folder: Path, call: dict, progress: bool) -> cf.Future:
    """Start cell ``c`` on ``ex`` (``None``: run it now, into a finished future)."""
    extras = {"deadline": call["deadline"], "workdir": str(folder.parent / "work" / c.name)}
    args = (c.fn, dict(c.kwargs), call["device"], progress, call["threads"], extras)
    if ex is not None:
        return ex.submit(_call, *args)
    fut: cf.Future = cf.Future()
    try:
        fut.set_result(_call(*args))
    except Exception as err:  # noqa: BLE001 - reported by run_cells with the cell
        fut.set_exception(err)
    return fut


def _store(c: Cell, value, info: dict, run) -> None:
    """Write finished cell ``c`` with its provenance (``extra`` wins)."""
    trained_on = info.pop("devices_used")
    rec = run.record  # requested_device, executor, allow_dirty
    extra = {**info, "trained_on": trained_on, "requested_device": rec["requested_device"]}
    extra |= {"executor": rec["executor"], "cell": c.name, "config_hash": c.hash}
    extra |= {"allow_dirty": rec["allow_dirty"], **(run.extra or {})}
    device = ",".join(trained_on or ["cpu"])
    prov = store.provenance(scale=run.scale, device=device, seeds=c.seeds, git=run.git, extra=extra)
    if c.name in run.stale:
        old = store.load_cell(run.folder, c.name, scale=run.scale)
        prov["refreshed"] = store.refresh_record(old, value)
    store.write_cell(run.folder, c, run.scale, value, prov)
