"""``python -m lengthgen verify``: :func:`verify` re-runs stored full-scale cells into a separate
folder (never ``results/``); :func:`compare_claims` gives each stored-result claim a verdict
(:data:`VERDICTS`) against its chapter's declared :class:`NoiseBand`. ``book/running.md`` explains
the verdicts: training amplifies rounding, so a re-run may move a trained claim within its band."""

from __future__ import annotations

import math
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from lengthgen.config import CHAPTERS, ConfigError, check_choice
from lengthgen.store import _clean, cell_path, load_cell, max_difference, results_dir, stored_state

VERDICTS = ("same", "within noise", "borderline", "changed")


@dataclass(frozen=True)
class NoiseBand:
    """How far a re-run may move the claims whose ids start with ``prefix``: at most ``band`` on
    every number of the value; ``why`` names the measurement behind it."""

    prefix: str
    band: float
    why: str


def _evaluate(claim, results, chapter: str):
    """``(raw value, status)`` of a stored claim on ``results``; status ``fails`` for a failed
    check without a declared deviation, ``error: …`` where the value cannot be computed."""
    from lengthgen.claims import ClaimFailed, evaluate

    try:
        ours = _clean(claim.measure(results))
    except Exception as err:  # noqa: BLE001 - a re-run that breaks a claim is reported as such
        return None, f"error: {type(err).__name__}: {err}"
    try:
        return ours, evaluate(claim, ours, chapter=chapter, scale="full")["status"]
    except ClaimFailed:
        return ours, "fails"


def compare_claims(
    chapter: str, stored_root, rerun_root, rerun_cells: dict[str, bool]
) -> list[dict]:
    """Per stored-result claim of ``chapter``: its value on the results folder ``stored_root``
    against ``rerun_root`` (the re-run cells in place); ``rerun_cells``: ``{name: trains}``."""
    from lengthgen import claims as lc

    mod = lc.chapter_claims(chapter)  # checks the chapter
    old = lc.StoredResults(chapter, Path(stored_root) / chapter / "cells")
    new = lc.StoredResults(chapter, Path(rerun_root) / chapter / "cells")
    bands = getattr(mod, "RERUN_NOISE", ()) if any(rerun_cells.values()) else ()
    rows = []
    for c in [c for c in mod.CLAIMS if isinstance(c, lc.Claim) and c.source == "stored"]:
        (a, sa), (b, sb) = (_evaluate(c, res, chapter) for res in (old, new))
        diff = max_difference(a, b)
        floor = lc.residue_of(c)  # rounding residues compare as their bound
        ra, rb = (lc.round_sig(lc.bound_residues(x, floor), c.digits) for x in (a, b))
        same = sa == sb and lc.same_within_rounding(ra, rb, c.digits)
        # the declared band with the longest prefix of the claim's id
        mine = [nb for nb in bands if c.id.startswith(nb.prefix)]
        band = max(mine, key=lambda nb: len(nb.prefix), default=None)
        errors = sa.startswith("error") or sb.startswith("error")
        noise = band is not None and diff <= band.band and not errors
        verdict = "same" if same else ("within noise" if sa == sb else "borderline")
        verdict = verdict if same or noise else "changed"
        row = {"id": c.id, "stored": a, "rerun": b, "status_stored": sa, "status_rerun": sb}
        row |= {"difference": diff, "band": getattr(band, "band", None)}
        rows.append(row | {"band_why": getattr(band, "why", None), "verdict": verdict})
    return rows


def _without_timing(x):
    """``x`` without the timings some cells store (keys ending in ``time_s`` or ``wall_s``)."""
    if isinstance(x, dict):
        return {
            k: _without_timing(v) for k, v in x.items() if not str(k).endswith(("time_s", "wall_s"))
        }
    if isinstance(x, list):
        return [_without_timing(v) for v in x]
    return x


def compare_cells(stored_folder, rerun_folder, names) -> list[dict]:
    """Per re-run cell ``{cell, trained, difference}`` (largest absolute difference, no timings)."""
    rows = []
    for name in names:
        new = load_cell(rerun_folder, name, scale="full")
        old = load_cell(stored_folder, name, scale="full")["data"]["value"]
        diff = max_difference(_without_timing(old), _without_timing(new["data"]["value"]))
        trained = bool(new["provenance"].get("trained_on"))
        rows.append({"cell": name, "trained": trained, "difference": diff})
    return rows


def verify(chapter: str, *, only=None, out=None, results=None, **run) -> dict:
    """Re-run ``chapter``'s full-scale cells matching ``only`` into ``out`` (default
    ``results/_scratch/verify/<chapter>``, resumable; ``run``: the options of
    :func:`lengthgen.engine.runs.run_cells`) and compare them with the stored ones:
    ``{"cells": compare_cells rows, "claims": compare_claims rows, "out": folder}``."""
    from lengthgen.chapters import plan
    from lengthgen.engine import runs

    check_choice("chapter", chapter, CHAPTERS)
    root = Path(results) if results is not None else results_dir()
    stored = root / chapter / "cells"
    if not stored.is_dir():
        raise ConfigError(f"no stored results to verify against: {stored} does not exist")
    cells = plan(chapter, "full", only)
    if missing := [c.name for c in cells if stored_state(stored, c, "full") != "done"]:
        raise ConfigError(
            f"{chapter}: no stored full-scale result to compare for {', '.join(missing[:6])}"
            f"{' …' if len(missing) > 6 else ''}; name stored cells with --only"
        )
    out = Path(out) if out is not None else root / "_scratch" / "verify" / chapter
    if stored.parent.resolve() in (out.resolve(), *out.resolve().parents):
        raise ConfigError(f"--out {out} is the store itself; verify writes its re-runs elsewhere")
    out = runs.check_out_dir(out)
    about = dict(allow_dirty=True, desc=f"verify {chapter}", extra={"verify": True})
    runs.run_cells(cells, out / "cells", scale="full", **about, **run)
    names = [c.name for c in cells]
    cell_rows = compare_cells(stored, out / "cells", names)
    with tempfile.TemporaryDirectory(prefix="lengthgen-verify-") as tmp:
        # the stored cells with the re-run ones in their place
        overlay = Path(tmp) / chapter / "cells"
        shutil.copytree(stored, overlay)
        for name in names:
            shutil.copy2(cell_path(out / "cells", name), cell_path(overlay, name))
        trained = {r["cell"]: r["trained"] for r in cell_rows}
        claim_rows = compare_claims(chapter, root, Path(tmp), trained)
    return {"chapter": chapter, "cells": cell_rows, "claims": claim_rows, "out": str(out)}


def verify_text(res: dict, *, all_claims: bool = False) -> str:
    """The verification as plain text: the re-run cells, then the claims that moved (every claim
    with ``all_claims``), then the counts of each verdict."""
    from lengthgen.claims import fmt_value as _fmt

    lines = [f"{res['chapter']}: re-ran {len(res['cells'])} cell(s) into {res['out']}"]
    for r in res["cells"]:
        d = r["difference"]
        d = "identical" if d == 0 else ("structure differs" if math.isinf(d) else f"{d:.3g}")
        kind = "trained" if r["trained"] else "deterministic"
        lines.append(f"  cell {r['cell']:<36} {kind:<13} max |Δ| {d}")
    shown = [r for r in res["claims"] if all_claims or r["verdict"] != "same"]
    if shown:
        lines.append(f"  {'claim':<48} {'stored':<22} {'re-run':<22} {'band':<8} verdict")
    for r in shown:
        band = "—" if r["band"] is None else f"{r['band']:g}"
        a, b = r["status_stored"], r["status_rerun"]
        flip = f" ({a} → {b})" if a != b else ""
        lines.append(
            f"  {r['id']:<48} {_fmt(r['stored'])[:22]:<22} {_fmt(r['rerun'])[:22]:<22} {band:<8} "
            f"{r['verdict']}{flip}"
        )
    counts = ", ".join(f"{sum(r['verdict'] == v for r in res['claims'])} {v}" for v in VERDICTS)
    lines.append(f"{res['chapter']}: {len(res['claims'])} stored claims: {counts}")
    return "\n".join(lines)


def exit_code(res: dict) -> int:
    """1 if any claim ``changed``, else 0 (``within noise`` and ``borderline`` are not failures)."""
    return int(any(r["verdict"] == "changed" for r in res["claims"]))
