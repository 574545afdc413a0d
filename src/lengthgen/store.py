"""The result store: JSON files ``{"provenance": {...}, "data": ...}``, written atomically (a
temporary file, then :func:`os.replace`); a file that cannot be read raises
:class:`ResultFileError` naming it. This module alone reads and writes the cell files."""

from __future__ import annotations

import contextlib
import datetime as _dt
import json
import math
import os
import platform
import re
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

from lengthgen.config import CHAPTERS, ConfigError, check_choice, get_run_scale


class ResultFileError(RuntimeError):
    """A stored result file is missing, unreadable or malformed; the message names the file."""


# --------------------------------------------------------------------------- locations
def repo_root() -> Path:
    """``$LENGTHGEN_ROOT``, else the first folder with ``_config.yml`` above this file or cwd."""
    if env := os.environ.get("LENGTHGEN_ROOT"):
        return Path(env).resolve()
    for start in (Path(__file__).resolve(), Path.cwd().resolve()):
        for p in (start, *start.parents):
            if (p / "_config.yml").is_file() and (p / "src" / "lengthgen").is_dir():
                return p
    return Path.cwd().resolve()


def results_dir() -> Path:
    return repo_root() / "results"


# --------------------------------------------------------------------------- provenance
def _git(*args: str) -> str | None:
    try:
        out = subprocess.run(
            ["git", *args], cwd=repo_root(), capture_output=True, text=True, timeout=10
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() if out.returncode == 0 else None


def git_state() -> dict:
    """``{"commit", "dirty"}`` of the book's repository (changes under ``results/`` and ``_build/``
    not counted); a copy that is no checkout takes ``$LENGTHGEN_SOURCE_COMMIT``, dirty unknown."""
    top = _git("rev-parse", "--show-toplevel")
    own = top is not None and Path(top).resolve() == repo_root().resolve()
    commit = _git("rev-parse", "HEAD") if own else None  # not an enclosing checkout's HEAD
    if commit is None and (env := os.environ.get("LENGTHGEN_SOURCE_COMMIT")):
        return {"commit": env.strip(), "dirty": None, "commit_source": "LENGTHGEN_SOURCE_COMMIT"}
    if not own:
        return {"commit": None, "dirty": None}
    args = "status --porcelain --untracked-files=normal -- . :(exclude)results :(exclude)_build"
    status = _git(*args.split())
    return {"commit": commit, "dirty": None if status is None else bool(status)}


def device_name(device: str) -> str:
    """The GPU's name for a CUDA ``device``, the CPU's model otherwise."""
    import torch

    if "cuda" in str(device) and torch.cuda.is_available():
        return torch.cuda.get_device_name(0)
    return _cpu_model()


def _cpu_model() -> str:
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text("utf-8", "replace").splitlines():
            if line.lower().startswith("model name") and ":" in line:
                return line.split(":", 1)[1].strip()
    return platform.processor() or platform.machine() or "unknown"


def machine() -> dict:
    """Which machine a number came from (every cell's provenance ``machine``): its CPU, the
    BLAS/LAPACK of the torch build and the knobs that change its kernels."""
    import torch

    try:
        capability = torch.backends.cpu.get_cpu_capability()
    except (AttributeError, RuntimeError):
        capability = "unknown"
    cfg = torch.__config__.show()
    info = dict(re.findall(r"\b(BLAS_INFO|LAPACK_INFO)=([^,\s]+)", cfg))
    mkl = re.search(r"Math Kernel Library Version ([^\s]+)", cfg)
    knobs = ("MKL_ENABLE_INSTRUCTIONS", "MKL_CBWR", "ATEN_CPU_CAPABILITY")
    return {
        "cpu_model": _cpu_model(),
        "arch": platform.machine(),
        "logical_cpus": os.cpu_count(),
        "cpu_capability": capability,
        "blas": info.get("BLAS_INFO", "unknown"),
        "lapack": info.get("LAPACK_INFO", "unknown"),
        **({"mkl_version": mkl.group(1)} if mkl else {}),
        **{k.lower(): os.environ[k] for k in knobs if os.environ.get(k)},
        "torch_build": f"cuda {torch.version.cuda}" if torch.version.cuda else "cpu",
        "threads": torch.get_num_threads(),
        "interop_threads": torch.get_num_interop_threads(),
        "os": platform.platform(terse=True),
    }


def machine_label(prov: dict) -> str:
    """One line naming the machine of a stored provenance (``"—"`` where none was recorded)."""
    m = prov.get("machine") if isinstance(prov, dict) else None
    if not isinstance(m, dict):
        return "—"
    return (
        f"{m.get('cpu_model', '?')} · {m.get('cpu_capability', '?')} · {m.get('blas', '?')} · "
        f"{m.get('threads', '?')} thread{'s' if m.get('threads') != 1 else ''}"
    )


def provenance(
    *,
    scale: str,
    device: str,
    seeds: Iterable[int] = (),
    git: dict | None = None,
    extra: dict | None = None,
) -> dict:
    """The provenance block of every result (``git``: taken at the run's start), plus ``extra``
    (e.g. ``wall_time_s``, floats rounded to 3 decimals)."""
    import numpy
    import torch

    from lengthgen import __version__

    git = git_state() if git is None else git
    prog = Path(sys.argv[0])  # the command line, as ``python -m lengthgen …`` where it was that
    module = prog.name == "__main__.py" and prog.parent.name == "lengthgen"
    prov = {
        "command": " ".join(["python -m lengthgen" if module else prog.name, *sys.argv[1:]]),
        "git_commit": git.get("commit"),
        "git_dirty": git.get("dirty"),
        **({"git_commit_source": git["commit_source"]} if git.get("commit_source") else {}),
        "device": str(device),
        "device_name": device_name(str(device)),
        "lengthgen_version": __version__,
        "torch_version": torch.__version__,
        "numpy_version": numpy.__version__,
        "python_version": platform.python_version(),
        "threads": torch.get_num_threads(),
        "scale": scale,
        "seeds": [int(s) for s in seeds],
        "wall_time_s": None,
        "date": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "machine": machine(),
    }
    if extra:
        prov.update({k: (round(v, 3) if isinstance(v, float) else v) for k, v in extra.items()})
    return prov


def max_difference(a, b) -> float:
    """Largest absolute difference between the numbers of two equally shaped JSON-like values
    (``inf`` if their shapes, keys or non-numbers differ)."""
    if isinstance(a, dict) and isinstance(b, dict):
        if set(map(str, a)) != set(map(str, b)):
            return math.inf
        bb = {str(k): v for k, v in b.items()}
        return max((max_difference(v, bb[str(k)]) for k, v in a.items()), default=0.0)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        if len(a) != len(b):
            return math.inf
        return max((max_difference(x, y) for x, y in zip(a, b)), default=0.0)
    if number(a) is not None and number(b) is not None:  # bools and None compare as equal or not
        return abs(float(a) - float(b))
    return 0.0 if a == b else math.inf


# --------------------------------------------------------------------------- JSON I/O
def _clean(obj: Any) -> Any:
    """Make ``obj`` JSON-serialisable: numpy/torch scalars and arrays become Python values."""
    if isinstance(obj, dict):
        return {str(k): _clean(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_clean(v) for v in obj]
    if hasattr(obj, "tolist") and not isinstance(obj, (str, bytes)):
        return _clean(obj.tolist())
    if isinstance(obj, float) and not math.isfinite(obj):
        return None if math.isnan(obj) else ("inf" if obj > 0 else "-inf")
    if hasattr(obj, "item") and not isinstance(obj, (str, bytes)):
        return obj.item()
    return obj


def atomic_write_bytes(path: str | os.PathLike, data: bytes) -> Path:
    """Write ``data`` to ``path`` atomically (temporary file, fsync, rename)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, 0o644)  # stored results are world-readable (mkstemp makes 0600)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def atomic_write_json(path: str | os.PathLike, obj: Any) -> Path:
    """Write ``obj`` as JSON to ``path`` atomically (:func:`atomic_write_bytes`)."""
    text = json.dumps(_clean(obj), indent=1, sort_keys=False) + "\n"
    return atomic_write_bytes(path, text.encode("utf-8"))


def read_json(path: str | os.PathLike) -> Any:
    """Read a JSON file; any failure raises :class:`ResultFileError` naming the file."""
    path = Path(path)
    try:
        with open(path) as fh:
            return json.load(fh)
    except FileNotFoundError:
        msg = f"result file not found: {path}"
    except IsADirectoryError:
        msg = f"{path} is a folder where a result file should be; move it away"
    except OSError as err:
        msg = f"cannot read result file {path}: {err.strerror or err}"
    except (json.JSONDecodeError, UnicodeDecodeError) as err:
        msg = f"corrupt result file {path}: {err}"
    raise ResultFileError(msg)


def save_result(path: str | os.PathLike, data: Any, prov: dict) -> Path:
    """Store ``data`` with its provenance block at ``path`` (atomically)."""
    if missing := [k for k in ("scale", "device", "torch_version", "date") if k not in prov]:
        raise ValueError(f"provenance lacks {missing[0]!r}; build it with store.provenance()")
    return atomic_write_json(path, {"provenance": prov, "data": data})


_MISSING = object()


def _walk(obj, parts: list[str], prefix: str = ""):
    """``(path, value)`` for every match of the dotted pattern ``parts`` (``_MISSING`` if none)."""
    if not parts:
        yield prefix, obj
        return
    head, rest = parts[0], parts[1:]
    join = lambda k: f"{prefix}.{k}" if prefix else str(k)
    if head == "*" and isinstance(obj, (dict, list)):
        for k, v in obj.items() if isinstance(obj, dict) else enumerate(obj):
            yield from _walk(v, rest, join(k))
    elif isinstance(obj, dict) and head in obj:
        yield from _walk(obj[head], rest, join(head))
    elif isinstance(obj, list) and head.lstrip("-").isdigit() and -len(obj) <= int(head) < len(obj):
        yield from _walk(obj[int(head)], rest, join(head))
    else:
        yield join(head), _MISSING


def _expand(token: str, kwargs: Mapping) -> list[str]:
    """``a.(b|c)`` as ``a.b a.c``; ``($k)`` runs over the items of the cell's argument ``k``."""
    m = re.search(r"\(([^()]*)\)", token)
    if m is None:
        return [token]
    alts = [x for a in m[1].split("|") for x in (kwargs[a[1:]] if a[:1] == "$" else [a])]
    return [e for a in alts for e in _expand(f"{token[: m.start()]}{a}{token[m.end() :]}", kwargs)]


def _size(factor: str, data, kwargs: Mapping) -> int:
    """A count's factor: a number, or the size (int or length) of a path of the value or argument."""
    if factor.isdigit():
        return int(factor)
    for obj in (data, kwargs):
        _, v = next(_walk(obj, factor.split(".")))
        if v is not _MISSING:
            return v if isinstance(v, int) and not isinstance(v, bool) else len(v)
    raise KeyError(factor)


def validate(data, spec: str, path: str | os.PathLike = "<data>", kwargs: Mapping | None = None):
    """Check a stored cell's value ``data`` against its description ``spec``, whitespace-separated
    dotted paths (``*`` any item, ``(a|b)`` each of a and b, ``($k)`` each item of the cell's
    argument ``k`` in ``kwargs``) that must exist; ``path:p`` a probability in [0, 1]; ``path=f*g``
    a list or dict of f·g entries (:func:`_size`). Returns ``data``, else a ResultFileError."""
    kwargs = kwargs or {}

    def bad(field, msg):
        raise ResultFileError(f"invalid result {path}: field {field or '<top level>'!r} {msg}")

    if not isinstance(spec, str):
        raise ConfigError(f"a cell's description must be a str, got {spec!r}")
    for token in spec.split():
        try:
            tokens = _expand(token, kwargs)
        except (KeyError, TypeError) as err:
            bad(token, f"cannot be expanded: the cell declares no list {err}")
        for tok in tokens:
            pattern, _, count = tok.partition("=")
            pattern, prob = pattern.removesuffix(":p"), pattern.endswith(":p")
            try:
                want = math.prod(_size(f, data, kwargs) for f in count.split("*")) if count else -1
            except Exception as err:  # noqa: BLE001 - a malformed protocol inside the file
                bad(pattern, f"cannot be counted against the declared protocol ({err!r})")
            for where, v in _walk(data, pattern.split(".") if pattern else []):
                if v is _MISSING or (want >= 0 and not hasattr(v, "__len__")):
                    bad(where, "is missing")
                if prob and (number(v) is None or not 0 <= v <= 1):
                    bad(where, f"must be a probability in [0, 1], got {v!r}")
                if want >= 0 and len(v) != want:
                    bad(where, f"has {len(v)} entries, but the declared protocol needs {want}")
    return data


def load_result(path: str | os.PathLike) -> dict:
    """A stored result ``{"provenance", "data"}`` (a cell is checked by :func:`load_stored`)."""
    obj = read_json(path)
    if isinstance(obj, dict) and isinstance(obj.get("provenance"), dict) and "data" in obj:
        return obj
    raise ResultFileError(f"corrupt result file {path}: expected a 'provenance' object and 'data'")


def stored_label(result: dict) -> str:
    """A one-line label for a stored result (a figure caption, a table note)."""
    p = result["provenance"]
    commit = (p.get("git_commit") or "unknown")[:8]
    wall_s = f", {wall:.0f} s" if isinstance(wall := p.get("wall_time_s"), (int, float)) else ""
    return f"stored {p.get('scale')} run ({p.get('device')}, torch {p.get('torch_version')}, commit {commit}{wall_s}, {p.get('date', '')[:10]})"


# --------------------------------------------------------------------------- stored cells
# <folder>/<name>.json with the provenance and {"key", "scale", "config_hash", "kwargs", "value"}
class ScaleConflict(ConfigError):
    """A stored result of another scale (or kind) sits where this run would write."""


def cells_dir(chapter: str, folder: str | os.PathLike | None = None) -> Path:
    return Path(folder) if folder is not None else results_dir() / chapter / "cells"


def cell_path(folder: str | os.PathLike, name: str) -> Path:
    return Path(folder) / f"{name}.json"


def _partial_done(value) -> int | None:
    """``progress.done`` of a partial cell value, ``None`` for a complete one."""
    if isinstance(value, dict) and value.get("partial"):
        return int((value.get("progress") or {}).get("done", 0))
    return None


def stored_state(folder, cell, scale: str) -> str:
    """``done``, ``partial`` (stopped early: resumed), ``missing``, ``changed`` (another
    configuration: recomputed) or ``other-scale`` (never replaced)."""
    if not cell_path(folder, cell.name).exists():
        return "missing"
    data = load_cell(folder, cell.name)["data"]
    if data["scale"] != scale:
        return "other-scale"
    if data["config_hash"] != cell.hash:
        return "changed"
    return "partial" if _partial_done(data.get("value")) is not None else "done"


def number(x) -> float | None:
    """``x`` as a float if it is a number (not a bool), else ``None``."""
    return float(x) if isinstance(x, (int, float)) and not isinstance(x, bool) else None


def cpu_time(prov: dict) -> float | None:
    """A stored run's CPU seconds, or None where it was not measured (a migrated cell)."""
    return number(prov.get("cpu_time_s"))


def unmeasured(folder, cell, scale: str) -> bool:
    """Whether ``cell`` is stored complete without a CPU time (migrated): ``refresh`` re-runs it."""
    done = stored_state(folder, cell, scale) == "done"
    return done and cpu_time(load_cell(folder, cell.name)["provenance"]) is None


def refresh_record(old: dict, new_value) -> dict:
    """What a refreshed cell's provenance keeps of the record ``old`` it replaces."""
    prov = old["provenance"]
    diff = max_difference(_clean(new_value), old["data"]["value"])
    rec = {"previous_date": prov.get("date"), "previous_git_commit": prov.get("git_commit")}
    rec["previous_wall_time_s"] = prov.get("wall_time_s")
    rec["previous_migrated"] = "migrated" in prov
    return rec | {"max_abs_difference": diff if diff != float("inf") else "inf"}


def refresh_difference(prov) -> float | None:
    """The ``max_abs_difference`` a refreshed cell's provenance records (else ``None``)."""
    ref = prov.get("refreshed") if isinstance(prov, dict) else None
    d = ref.get("max_abs_difference") if isinstance(ref, dict) else None
    return float("inf") if d == "inf" else number(d)


def load_cell(folder, name: str, *, scale: str | None = None) -> dict:
    """The stored record of cell ``name``; ``scale`` (if given) must match."""
    path = cell_path(folder, name)
    obj = load_result(path)
    data = obj["data"]
    if not isinstance(data, dict) or not {"scale", "config_hash", "value"} <= set(data):
        raise ResultFileError(
            f"corrupt result file {path}: not a cell of the runs facility (no 'scale', "
            "'config_hash' or 'value'); move it away or migrate it"
        )
    if scale is not None and data["scale"] != scale:
        raise ScaleConflict(f"{path} holds a {data['scale']}-scale result, not {scale}")
    return obj


def cell_value(folder, name: str, *, scale: str | None = None):
    """The stored value of cell ``name`` (see :func:`load_cell`)."""
    return load_cell(folder, name, scale=scale)["data"]["value"]


def write_cell(folder, cell, scale: str, value, prov: dict) -> Path:
    """Store ``value`` as cell ``cell`` at ``scale`` (never over another scale, nor over a stored
    partial result that did more work)."""
    path = cell_path(folder, cell.name)
    state = stored_state(folder, cell, scale) if path.exists() else "missing"
    if state == "other-scale":
        raise ScaleConflict(
            f"{path} holds a result of another scale; a {scale} run does not replace it"
        )
    new = _partial_done(value)
    if state == "partial" and new is not None:
        old = _partial_done(load_result(path)["data"]["value"])
        if old > new:
            print(f"kept {path}: its partial result did {old} units of work, this run only {new}")
            return path
    data = {"key": cell.name, "scale": scale, "config_hash": cell.hash}
    return save_result(path, {**data, "kwargs": _clean(dict(cell.kwargs)), "value": value}, prov)


def load_stored(
    chapter: str,
    name: str,
    *,
    schema=None,
    folder: str | os.PathLike | None = None,
    scale: str = "full",
) -> dict:
    """The stored cell ``name`` of ``chapter`` as ``{"provenance", "data": value, "path"}``."""
    check_choice("chapter", chapter, CHAPTERS)
    folder = cells_dir(chapter, folder)
    path = cell_path(folder, name)
    obj = load_cell(folder, name, scale=scale)
    if schema is not None:
        validate(obj["data"]["value"], schema, path, obj["data"].get("kwargs"))
    return {"provenance": obj["provenance"], "data": obj["data"]["value"], "path": str(path)}


def has_stored(chapter: str, name: str, *, folder: str | os.PathLike | None = None) -> bool:
    """Whether ``chapter`` has a stored cell file ``name``."""
    return cell_path(cells_dir(chapter, folder), name).is_file()


def plan_status(cells: Sequence, folder, scale: str) -> dict[str, str]:
    """``{cell name: stored_state}``; :class:`ScaleConflict` for a cell of another scale."""
    names = [c.name for c in cells]
    if dup := sorted({n for n in names if names.count(n) > 1}):
        raise ConfigError(f"cell names must be unique; repeated: {', '.join(dup)}")
    status = {c.name: stored_state(folder, c, scale) for c in cells}
    if clash := [n for n, s in status.items() if s == "other-scale"]:
        raise ScaleConflict(
            f"{cell_path(folder, clash[0])} holds a result of another scale than {scale}; "
            f"a {scale} run never replaces it (write elsewhere with --out)"
        )
    return status


# --------------------------------------------------------------------------- merging a run's cells
def merge_cells(src, dst, cells: Sequence, scale: str, *, schema=None) -> dict[str, list[str]]:
    """Bring the cells computed into ``src`` (``reproduce --out``) into the store ``dst`` as a run
    into ``dst`` would (a measured complete cell is never replaced), each checked by
    ``schema(cell)`` (a :func:`validate` description or ``None``); all or nothing. Returns
    ``{"taken", "kept", "absent"}`` (names)."""
    scale = get_run_scale(scale)
    src, dst = Path(src), Path(dst)
    if not src.is_dir():
        raise ConfigError(f"source folder {src} does not exist")
    if dst.exists() and not dst.is_dir():
        raise ConfigError(f"destination {dst} is a file, not a folder of cells")
    out = {"taken": [], "kept": [], "absent": []}
    status = plan_status(cells, dst, scale)
    writes = []  # (cell, value, provenance), all checked
    for c in cells:
        have = stored_state(src, c, scale)
        if have not in ("done", "partial"):
            out["absent"].append(c.name)
            continue
        new = load_cell(src, c.name, scale=scale)
        prov, value = dict(new["provenance"]), new["data"]["value"]
        if status[c.name] == "done":  # replaced only by a measured run of a cell stored unmeasured
            old = load_cell(dst, c.name)
            cpu_new, cpu_old = cpu_time(prov), cpu_time(old["provenance"])
            if have != "done" or cpu_new is None or cpu_old is not None:
                out["kept"].append(c.name)
                continue
            prov["refreshed"] = refresh_record(old, value)
        if schema is not None and (spec := schema(c)) is not None:
            validate(value, spec, cell_path(src, c.name), new["data"].get("kwargs"))
        writes.append((c, value, prov))
    _write_all(dst, scale, writes, out)
    names = [c.name for c in cells]
    return {k: sorted(v, key=names.index) for k, v in out.items()}


def _write_all(dst: Path, scale: str, writes, out: dict) -> None:
    """Write a merge's ``(cell, value, provenance)``; a failed write puts back what was written."""
    done = []  # (path, its bytes and stat before, or None)
    try:
        for c, value, prov in writes:
            path = cell_path(dst, c.name)
            before = (path.read_bytes(), path.stat()) if path.exists() else None
            done.append((path, before))
            write_cell(dst, c, scale, value, prov)
            unchanged = before is not None and path.stat().st_mtime_ns == before[1].st_mtime_ns
            (out["kept"] if unchanged else out["taken"]).append(c.name)
    except BaseException as err:
        for path, before in reversed(done):
            with contextlib.suppress(OSError):
                if before is None:
                    path.unlink(missing_ok=True)
                else:
                    atomic_write_bytes(path, before[0])
                    os.utime(path, ns=(before[1].st_atime_ns, before[1].st_mtime_ns))
        if isinstance(err, OSError):
            raise ConfigError(
                f"cannot write the merged cells into {dst}: {err.strerror or err}; "
                "nothing was merged"
            ) from None
        raise
