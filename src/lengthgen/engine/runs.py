"""Sweeps: a declared grid of cells, resumable through the result store, with pluggable executors.

A sweep is a grid ``axes = {"N": [11, 21], "seed": range(2000, 2020), ...}`` (the cartesian product,
in declared order) and a cell function. Each cell's result is written to a
:class:`lengthgen.store.ResultStore` under a key built from the cell (``"N=11__seed=2000"``) as
soon as it is computed, atomically and with provenance; cells already in the store are skipped.
So an interrupted sweep, re-run with the same arguments, resumes where it stopped and nothing is
lost or computed twice (``tests/test_sweep.py`` kills a sweep process mid-run and resumes it).

Packing: with ``pack_by=key_fn`` (or ``pack_by=("task", "N")``, axis names) the missing cells
that share ``key_fn(cell)`` (e.g. everything but the seed: the same model shape) are handed to the cell function together, as a list, so
that it can train them as one ensemble with :func:`lengthgen.engine.train.train_ensemble`; it returns
one result per cell, in order. ``max_pack`` bounds the size of a pack.

Executors: anything implementing :class:`concurrent.futures.Executor`.

* ``None`` / ``"inprocess"`` -- run in this process, one task at a time (the default);
* ``"process"`` or a :class:`concurrent.futures.ProcessPoolExecutor` -- local processes (the cell
  function must be importable, i.e. defined at module level);
* :func:`dask_executor` -- a Dask ``distributed`` cluster. For a real cluster::

      from dask.distributed import Client
      from lengthgen.engine.runs import dask_executor, run_sweep
      client = Client("tcp://scheduler-address:8786")       # or Client(LocalCluster(...))
      run_sweep(axes, cell_fn, store, pack_by=..., executor=dask_executor(client))

  Workers need the ``lengthgen`` package installed; results come back to this process, which
  alone writes the store. ``local_dask_executor()`` starts a throw-away local cluster.

Results are written by the calling process only, so workers never need access to the store.
"""
from __future__ import annotations

import concurrent.futures as cf
import contextlib
import itertools
import time
from typing import Any, Callable, Iterator, Mapping, Sequence

from lengthgen.config import ConfigError, check_choice, check_positive_int, get_device, get_scale
from lengthgen.store import ResultStore, provenance

EXECUTORS = ("inprocess", "process", "dask")


class SweepError(RuntimeError):
    """A cell function failed; the message names the cell(s). Finished cells stay stored."""


# --------------------------------------------------------------------------- grid and keys
def grid(axes: Mapping[str, Sequence]) -> list[dict]:
    """All cells of the grid: dicts axis → value, cartesian product in declared order."""
    if not isinstance(axes, Mapping) or not axes:
        raise ConfigError("axes must be a non-empty dict {axis name: sequence of values}")
    values = []
    for name, vals in axes.items():
        if not isinstance(name, str) or not name:
            raise ConfigError(f"axis names must be non-empty strings, got {name!r}")
        if isinstance(vals, (str, bytes)) or not hasattr(vals, "__iter__"):
            raise ConfigError(f"axis {name!r} must be a sequence of values, got {vals!r}")
        vals = list(vals)
        if not vals:
            raise ConfigError(f"axis {name!r} has no values")
        if len(set(map(repr, vals))) != len(vals):
            raise ConfigError(f"axis {name!r} has repeated values: {vals!r}")
        values.append(vals)
    return [dict(zip(axes, combo)) for combo in itertools.product(*values)]


def cell_key(cell: Mapping) -> str:
    """The store key of a cell: ``"axis=value__axis=value"`` in the cell's axis order."""
    if not isinstance(cell, Mapping) or not cell:
        raise ConfigError(f"a cell must be a non-empty dict, got {cell!r}")
    return "__".join(f"{k}={v}" for k, v in cell.items())


# --------------------------------------------------------------------------- executors
class InProcessExecutor(cf.Executor):
    """Runs each submitted call immediately in the calling process (the default executor)."""

    def submit(self, fn, /, *args, **kwargs):
        fut: cf.Future = cf.Future()
        try:
            fut.set_result(fn(*args, **kwargs))
        except BaseException as err:  # noqa: BLE001 - delivered through the future
            if isinstance(err, (KeyboardInterrupt, SystemExit)):
                raise
            fut.set_exception(err)
        return fut


def dask_executor(client) -> cf.Executor:
    """A :class:`concurrent.futures.Executor` running tasks on a ``dask.distributed.Client``.

    Tasks are submitted with ``pure=False`` so that Dask never merges two calls.
    """
    if not hasattr(client, "get_executor"):
        raise ConfigError(f"dask_executor needs a dask.distributed.Client, got {type(client).__name__}")
    return client.get_executor(pure=False)


@contextlib.contextmanager
def local_dask_executor(n_workers: int = 1, threads_per_worker: int = 1, processes: bool = False) -> Iterator[cf.Executor]:
    """A throw-away ``LocalCluster`` + ``Client`` as an executor (closed on exit)."""
    n_workers = check_positive_int("n_workers", n_workers)
    threads_per_worker = check_positive_int("threads_per_worker", threads_per_worker)
    from dask.distributed import Client, LocalCluster

    cluster = LocalCluster(n_workers=n_workers, threads_per_worker=threads_per_worker, processes=processes,
                           dashboard_address=None)
    client = Client(cluster)
    try:
        yield dask_executor(client)
    finally:
        client.close()
        cluster.close()


class _AxesKey:
    """``pack_by`` given as axis names: cells with equal values on those axes share a pack."""

    def __init__(self, names):
        self.names = tuple(names)

    def __call__(self, cell):
        return tuple(cell[a] for a in self.names)


def _timed(fn: Callable, arg) -> tuple[Any, float]:
    """Call ``fn(arg)`` and return ``(result, wall seconds)`` (module-level: picklable)."""
    t0 = time.perf_counter()
    out = fn(arg)
    return out, time.perf_counter() - t0


# --------------------------------------------------------------------------- the sweep
def _as_store(store) -> ResultStore:
    if isinstance(store, (str, bytes)) or hasattr(store, "__fspath__"):
        store = ResultStore(store)
    if not isinstance(store, ResultStore):
        raise ConfigError(f"store must be a ResultStore or a folder, got {type(store).__name__}")
    return store


def pending_cells(axes: Mapping[str, Sequence], store: ResultStore | str, key: Callable = cell_key) -> list[dict]:
    """The cells of the grid that are not in ``store`` (a ResultStore or its folder) yet."""
    store = _as_store(store)
    return [c for c in grid(axes) if not store.has(key(c))]


def collect(axes: Mapping[str, Sequence], store: ResultStore | str, *, key: Callable = cell_key,
            missing: str = "raise") -> list[dict]:
    """The stored results of a grid as table rows: each cell's axes merged with its result.

    A dict result is merged (``{**cell, **result}``), anything else lands under ``"value"``.
    ``missing="raise"`` (default) names the first cell without a result; ``"skip"`` leaves it out.
    """
    check_choice("missing", missing, ("raise", "skip"))
    store = _as_store(store)
    rows = []
    for cell in grid(axes):
        k = key(cell)
        if not store.has(k):
            if missing == "raise":
                raise SweepError(f"cell {k!r} has no stored result in {store.folder}; run the sweep first")
            continue
        value = store.get(k)
        rows.append({**cell, **value} if isinstance(value, dict) else {**cell, "value": value})
    return rows


def run_sweep(axes: Mapping[str, Sequence], fn: Callable, store: ResultStore | str, *, pack_by: Callable | None = None,
              max_pack: int | None = None, executor: cf.Executor | str | None = None, workers: int | None = None,
              key: Callable = cell_key, name: str = "sweep", scale: str | None = None, device: str | None = None,
              progress: bool = True) -> dict[str, Any]:
    """Compute every missing cell of the grid and return ``{key: result}`` for all cells.

    Parameters
    ----------
    axes : dict axis → values (see :func:`grid`).
    fn : ``fn(cell) -> result`` or, with ``pack_by``, ``fn(cells: list) -> list of results``.
        Results must be JSON-serialisable (tensors and arrays become lists).
    store : a :class:`ResultStore` or a folder for one.
    pack_by : ``pack_by(cell) -> hashable``, or axis names (e.g. ``("task", "N")``: every axis
        but the seed); missing cells with equal values form one call of ``fn``.
    max_pack : at most this many cells per call (``None``: no limit).
    executor : ``None``/``"inprocess"``, ``"process"``, ``"dask"`` (a local cluster), or any
        ``concurrent.futures.Executor`` (e.g. :func:`dask_executor` of a cluster's client).
        Executors passed in are not shut down.
    workers : number of workers for ``"process"`` / ``"dask"`` (default 1).
    key : cell → store key (default :func:`cell_key`).
    name, scale, device : recorded in each result's provenance (``scale`` / ``device`` default to
        the ``LENGTHGEN_SCALE`` / ``LENGTHGEN_DEVICE`` knobs).
    progress : show a tqdm bar over cells.
    """
    if not callable(fn):
        raise ConfigError(f"fn must be a callable cell function, got {fn!r}")
    if isinstance(pack_by, str):
        pack_by = (pack_by,)
    if pack_by is not None and not callable(pack_by):
        names = tuple(pack_by) if isinstance(pack_by, (list, tuple)) else None
        if not names or not all(isinstance(a, str) for a in names):
            raise ConfigError(f"pack_by must be a callable cell -> hashable or a sequence of axis names, got {pack_by!r}")
        for a in names:
            check_choice("pack_by axis", a, tuple(axes) if isinstance(axes, Mapping) else ())
        pack_by = _AxesKey(names)
    if max_pack is not None:
        max_pack = check_positive_int("max_pack", max_pack)
        if pack_by is None:
            raise ConfigError("max_pack needs pack_by (cells are only packed when pack_by is given)")
    if workers is not None:
        workers = check_positive_int("workers", workers)
    if not callable(key):
        raise ConfigError(f"key must be a callable cell -> str, got {key!r}")
    store = _as_store(store)
    scale = get_scale(scale)
    device = str(get_device(device))
    cells = grid(axes)
    keys = [key(c) for c in cells]
    if len(set(keys)) != len(keys):
        raise ConfigError("the key function maps two cells to the same key")
    todo = [c for c, k in zip(cells, keys) if not store.has(k)]

    # group into tasks
    if pack_by is None:
        tasks = [(c, [c]) for c in todo]
    else:
        groups: dict = {}
        for c in todo:
            groups.setdefault(pack_by(c), []).append(c)
        tasks = []
        for group in groups.values():
            size = len(group) if max_pack is None else max_pack
            for i in range(0, len(group), size):
                chunk = group[i:i + size]
                tasks.append((chunk, chunk))

    with contextlib.ExitStack() as stack:
        if executor is None or isinstance(executor, str):
            kind = check_choice("executor", "inprocess" if executor is None else executor, EXECUTORS)
            if kind == "inprocess":
                ex: cf.Executor = InProcessExecutor()
            elif kind == "process":
                ex = stack.enter_context(cf.ProcessPoolExecutor(max_workers=workers or 1))
            else:
                ex = stack.enter_context(local_dask_executor(n_workers=workers or 1))
        elif isinstance(executor, cf.Executor):
            ex = executor
        else:
            raise ConfigError(f"executor must be 'inprocess', 'process', 'dask' or a concurrent.futures.Executor, "
                              f"got {executor!r}")
        window = 1 if isinstance(ex, InProcessExecutor) else max(1, len(tasks))

        bar = None
        if progress:
            from tqdm.auto import tqdm

            bar = tqdm(total=len(cells), initial=len(cells) - len(todo), desc=name, leave=False, dynamic_ncols=True)
        queue = list(tasks)
        pending: dict[cf.Future, list[dict]] = {}
        failures = []
        try:
            while queue or pending:
                while queue and len(pending) < window and not failures:
                    arg, group = queue.pop(0)
                    pending[ex.submit(_timed, fn, arg)] = group
                if not pending:
                    break
                done, _ = cf.wait(list(pending), return_when=cf.FIRST_COMPLETED)
                for fut in done:
                    group = pending.pop(fut)
                    try:
                        result, wall = fut.result()
                    except Exception as err:  # noqa: BLE001 - reported below with the cell
                        failures.append((group, err))
                        for other in list(pending):
                            if other.cancel():
                                pending.pop(other)
                        continue
                    _store_results(store, key, group, result, wall, pack_by is not None, name, scale, device)
                    if bar is not None:
                        bar.update(len(group))
        finally:
            if bar is not None:
                bar.close()
        if failures:
            group, err = failures[0]
            raise SweepError(f"{name}: cell function failed on {[key(c) for c in group]}: {err!r}; "
                             "finished cells are stored, re-run to resume") from err
    return {k: store.get(k) for k in keys}


def _store_results(store, key, group, result, wall, packed, name, scale, device) -> None:
    if packed:
        if not isinstance(result, (list, tuple)) or len(result) != len(group):
            raise SweepError(f"{name}: a packed cell function must return one result per cell "
                             f"({len(group)}), got {type(result).__name__}"
                             + (f" of length {len(result)}" if isinstance(result, (list, tuple)) else ""))
        results = list(result)
    else:
        results = [result]
    for cell, res in zip(group, results):
        seeds = [v for k, v in cell.items() if "seed" in k and isinstance(v, int)]
        prov = provenance(scale=scale, device=device, seeds=seeds, wall_time_s=wall,
                          extra={"sweep": name, "cell": dict(cell), "pack_size": len(group)})
        store.put(key(cell), res, prov)
