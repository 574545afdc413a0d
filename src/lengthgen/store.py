"""The result store: JSON files with provenance, written atomically.

Every stored result is one JSON object ``{"provenance": {...}, "data": ...}``. Provenance records
the command line, git commit and dirty flag, device, torch version, scale, seeds, wall time and
date. Writes go to a temporary file in the same folder followed by :func:`os.replace`, so a
failed or interrupted run never leaves a half-written file and never clobbers what was stored.
A file that cannot be parsed raises :class:`ResultFileError` naming the file.
"""
from __future__ import annotations

import datetime as _dt
import json
import math
import os
import platform
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any, Iterable


class ResultFileError(RuntimeError):
    """A stored result file is missing, unreadable or malformed; the message names the file."""


# --------------------------------------------------------------------------- locations
def repo_root() -> Path:
    """The book's repository root (the folder holding ``_config.yml``).

    ``$LENGTHGEN_ROOT`` wins; otherwise we search upwards from this file (editable install) and
    then from the working directory (e.g. a notebook run from ``notebooks/``).
    """
    env = os.environ.get("LENGTHGEN_ROOT")
    if env:
        return Path(env).resolve()
    for start in (Path(__file__).resolve(), Path.cwd().resolve()):
        for p in (start, *start.parents):
            if (p / "_config.yml").is_file() and (p / "src" / "lengthgen").is_dir():
                return p
    return Path.cwd().resolve()


def results_dir() -> Path:
    """``<root>/results``: where stored full-scale runs and the claims ledger live."""
    return repo_root() / "results"


# --------------------------------------------------------------------------- provenance
def _git(*args: str) -> str | None:
    try:
        out = subprocess.run(["git", *args], cwd=repo_root(), capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() if out.returncode == 0 else None


def _command_line() -> str:
    """The current command line, written as the user typed it for ``python -m lengthgen``."""
    prog = Path(sys.argv[0])
    head = "python -m lengthgen" if prog.name == "__main__.py" and prog.parent.name == "lengthgen" else prog.name
    return " ".join([head, *sys.argv[1:]])


def provenance(*, scale: str, device: str, seeds: Iterable[int] = (), wall_time_s: float | None = None,
               command: str | None = None, extra: dict | None = None) -> dict:
    """Collect the provenance block stored with every result."""
    import torch

    status = _git("status", "--porcelain", "--untracked-files=no")
    prov = {
        "command": command if command is not None else _command_line(),
        "git_commit": _git("rev-parse", "HEAD"),
        "git_dirty": None if status is None else bool(status),
        "device": str(device),
        "device_name": (torch.cuda.get_device_name(0) if str(device).startswith("cuda") else platform.processor() or platform.machine()),
        "torch_version": torch.__version__,
        "python_version": platform.python_version(),
        "scale": scale,
        "seeds": [int(s) for s in seeds],
        "wall_time_s": None if wall_time_s is None else round(float(wall_time_s), 3),
        "date": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
    }
    if extra:
        prov.update(extra)
    return prov


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


def atomic_write_json(path: str | os.PathLike, obj: Any) -> Path:
    """Write ``obj`` as JSON to ``path`` atomically (temp file + rename in the same folder)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(_clean(obj), indent=1, sort_keys=False) + "\n"
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    return path


def read_json(path: str | os.PathLike) -> Any:
    """Read a JSON file; any failure raises :class:`ResultFileError` naming the file."""
    path = Path(path)
    try:
        with open(path) as fh:
            return json.load(fh)
    except FileNotFoundError:
        raise ResultFileError(f"result file not found: {path}") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as err:
        raise ResultFileError(f"corrupt result file {path}: {err}") from None


def save_result(path: str | os.PathLike, data: Any, prov: dict) -> Path:
    """Store ``data`` with its provenance block at ``path`` (atomically)."""
    for key in ("scale", "device", "torch_version", "date"):
        if key not in prov:
            raise ValueError(f"provenance is missing {key!r}; build it with lengthgen.store.provenance()")
    return atomic_write_json(path, {"provenance": prov, "data": data})


def load_result(path: str | os.PathLike) -> dict:
    """Load a stored result; returns ``{"provenance": ..., "data": ...}``.

    Raises :class:`ResultFileError` naming the file if it is missing, not JSON, or lacks the
    provenance/data structure.
    """
    obj = read_json(path)
    if not isinstance(obj, dict) or "provenance" not in obj or "data" not in obj:
        raise ResultFileError(f"corrupt result file {path}: expected an object with 'provenance' and 'data'")
    return obj


def stored_label(result: dict) -> str:
    """A one-line label for a stored result, e.g. for a figure caption or a table note."""
    p = result["provenance"]
    commit = (p.get("git_commit") or "unknown")[:8]
    wall = p.get("wall_time_s")
    wall_s = f", {wall:.0f} s" if isinstance(wall, (int, float)) else ""
    return f"stored {p.get('scale')} run ({p.get('device')}, torch {p.get('torch_version')}, commit {commit}{wall_s}, {p.get('date', '')[:10]})"


class ResultStore:
    """A folder of keyed results (one JSON file per key), used by sweeps to resume.

    ``put`` is atomic, so a key is either fully stored or absent; ``has``/``get`` read back.
    """

    def __init__(self, folder: str | os.PathLike):
        self.folder = Path(folder)

    @staticmethod
    def _fname(key: str) -> str:
        safe = "".join(c if (c.isalnum() or c in "-_.=") else "_" for c in str(key))
        if not safe:
            raise ValueError(f"empty result key {key!r}")
        return safe + ".json"

    def path(self, key: str) -> Path:
        return self.folder / self._fname(key)

    def has(self, key: str) -> bool:
        return self.path(key).is_file()

    def put(self, key: str, data: Any, prov: dict) -> Path:
        return save_result(self.path(key), {"key": key, "value": data}, prov)

    def get(self, key: str) -> Any:
        return load_result(self.path(key))["data"]["value"]

    def keys(self) -> list[str]:
        out = []
        for p in sorted(self.folder.glob("*.json")):
            out.append(load_result(p)["data"]["key"])
        return out
