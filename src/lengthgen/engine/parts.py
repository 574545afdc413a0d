"""Checkpoints stored as a folder of size-capped parts (a device session returns files up to 16 MB)
with a manifest of sizes, SHA-256 sums and a JSON ``meta`` block. The manifest is written last and
stale parts removed after it, so a killed writer leaves the old checkpoint or the new one; reading
checks every part first (:class:`lengthgen.store.ResultFileError` names a bad one)."""

from __future__ import annotations

import hashlib
import io
import json
import os
from pathlib import Path
from typing import Any

import torch

from lengthgen.config import ConfigError, check_positive_int
from lengthgen.store import ResultFileError, atomic_write_bytes, atomic_write_json

FORMAT = "lengthgen-checkpoint-parts-1"
MANIFEST = "manifest.json"
#: the default size cap of one part: 15 MB, under the 16 MB a device session returns per file
PART_BYTES = 15_000_000


def _folder(folder) -> Path:
    if not isinstance(folder, (str, os.PathLike)) or not str(folder):
        raise ConfigError(f"checkpoint folder must be a path, got {folder!r}")
    return Path(folder)


def save_parts(folder, obj: Any, *, part_bytes: int = PART_BYTES, meta: dict | None = None) -> dict:
    """Store ``torch.save(obj)`` in ``folder`` as parts of at most ``part_bytes`` bytes and a
    manifest carrying ``meta``, replacing the checkpoint there; returns the manifest."""
    folder = _folder(folder)
    part_bytes = check_positive_int("part_bytes", part_bytes)
    if meta is not None and not isinstance(meta, dict):
        raise ConfigError(f"meta must be a dict or None, got {type(meta).__name__}")
    buf = io.BytesIO()
    torch.save(obj, buf)
    blob = buf.getvalue()
    whole = hashlib.sha256(blob).hexdigest()
    folder.mkdir(parents=True, exist_ok=True)
    parts = []
    for i, lo in enumerate(range(0, max(len(blob), 1), part_bytes)):
        chunk = blob[lo : lo + part_bytes]
        name = f"part-{whole[:12]}-{i:03d}.bin"
        atomic_write_bytes(folder / name, chunk)
        digest = hashlib.sha256(chunk).hexdigest()
        parts.append({"name": name, "bytes": len(chunk), "sha256": digest})
    manifest = {"format": FORMAT, "total_bytes": len(blob), "sha256": whole}
    manifest |= {"part_bytes": part_bytes, "parts": parts, "meta": dict(meta or {})}
    _publish(folder, manifest)
    return manifest


def _publish(folder: Path, manifest: dict) -> None:
    """Write ``manifest`` into ``folder``, then remove the parts it does not name."""
    atomic_write_json(folder / MANIFEST, manifest)
    keep = {p["name"] for p in manifest["parts"]}
    for old in folder.glob("part-*.bin"):
        if old.name not in keep:
            old.unlink()


def read_manifest(folder) -> dict | None:
    """The manifest of the parted checkpoint in ``folder`` (``None`` if none)."""
    path = _folder(folder) / MANIFEST
    if not path.is_file():
        return None
    try:
        man = json.loads(path.read_text())
    except (OSError, ValueError) as err:
        raise ResultFileError(
            f"corrupt checkpoint manifest {path}: {err}; move the folder away to start afresh"
        ) from None
    ok = isinstance(man, dict) and man.get("format") == FORMAT
    if not (ok and isinstance(man.get("parts"), list)):
        raise ResultFileError(
            f"corrupt checkpoint manifest {path}: not a {FORMAT} manifest; move the folder away"
        )
    return man


def verify_parts(folder) -> dict:
    """Check every part of ``folder``'s checkpoint (size, SHA-256) and the whole; its manifest."""
    if (read := _read(folder)) is None:
        raise ResultFileError(f"no checkpoint in {folder}: {MANIFEST} is missing")
    return read[0]


def _read(folder) -> tuple[dict, bytes] | None:
    """The manifest and the whole of the checkpoint in ``folder``, every part checked (or None)."""
    folder = _folder(folder)
    if (man := read_manifest(folder)) is None:
        return None
    chunks = []
    for p in man["parts"]:
        path = folder / str(p.get("name"))
        if not path.is_file():
            raise ResultFileError(
                f"checkpoint part {path} is missing ({len(man['parts'])} parts in {folder / MANIFEST})"
            )
        data = path.read_bytes()
        if len(data) != p.get("bytes"):
            raise ResultFileError(
                f"checkpoint part {path} is corrupt: {len(data)} bytes, the manifest says {p.get('bytes')}"
            )
        if hashlib.sha256(data).hexdigest() != p.get("sha256"):
            raise ResultFileError(
                f"checkpoint part {path} is corrupt: its SHA-256 differs from the manifest's"
            )
        chunks.append(data)
    blob = b"".join(chunks)
    if len(blob) != man.get("total_bytes") or hashlib.sha256(blob).hexdigest() != man.get("sha256"):
        raise ResultFileError(
            f"checkpoint in {folder} is corrupt: its parts do not add up to the manifest's whole"
        )
    return man, blob


def load_parts(folder, map_location=None) -> Any | None:
    """The object stored by :func:`save_parts` in ``folder``, verified (``None`` if none)."""
    if (read := _read(folder)) is None:
        return None
    try:
        return torch.load(io.BytesIO(read[1]), map_location=map_location, weights_only=False)
    except Exception as err:  # noqa: BLE001 - any undecodable checkpoint is named
        raise ResultFileError(
            f"corrupt checkpoint in {folder}: {type(err).__name__}: {err}".splitlines()[0]
        ) from None


def parts_size(folder) -> int:
    """Bytes on disk of the parted checkpoint in ``folder`` (its parts and its manifest)."""
    man = verify_parts(folder)
    return sum(p["bytes"] for p in man["parts"]) + (Path(folder) / MANIFEST).stat().st_size


def copy_parts(src, dest, *, step_key: str = "step") -> str:
    """Copy the parted checkpoint ``src`` to ``dest`` unless ``dest`` holds one of another
    ``meta['key']`` or a larger ``meta[step_key]``; returns ``"copied"`` or ``"kept: why"``."""
    src, dest = _folder(src), _folder(dest)
    man = verify_parts(src)
    old = read_manifest(dest) if dest.is_dir() else None
    if old is not None:
        om, nm = old.get("meta", {}), man.get("meta", {})
        if om.get("key") != nm.get("key"):
            return (
                f"kept: {dest} holds a checkpoint of another configuration "
                f"({om.get('key')} vs {nm.get('key')}); move it away to replace it"
            )
        if (om.get(step_key) or 0) > (nm.get(step_key) or 0):
            return f"kept: {dest} is further along ({om.get(step_key)} > {nm.get(step_key)})"
    dest.mkdir(parents=True, exist_ok=True)
    for p in man["parts"]:
        target = dest / p["name"]
        if not target.is_file() or hashlib.sha256(target.read_bytes()).hexdigest() != p["sha256"]:
            atomic_write_bytes(target, (src / p["name"]).read_bytes())
    _publish(dest, man)
    verify_parts(dest)
    return "copied"
