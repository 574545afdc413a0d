"""What a reproduction costs, per chapter: :func:`chapter_cost` sums the provenance of a chapter's
stored full-scale cells (fields :data:`FIELDS`, explained on ``book/cost.md``); :func:`cost_text` is
``python -m lengthgen cost``'s table and :func:`cost_markdown` the book's."""

from __future__ import annotations

import os
from collections import Counter
from pathlib import Path

from lengthgen.config import CHAPTERS
from lengthgen import store
from lengthgen.tables import text_table

FIELDS = tuple(
    "chapter planned stored stale wall_s cpu_s cpu_recorded cpu_unknown migrated refreshed "
    "refresh_max_diff loaded projection_2core_s projection_upper_bound".split()
)


def _loaded(prov: dict) -> bool:
    """Whether the 1-minute load average at the cell's start exceeded its thread count."""
    load, threads = prov.get("load_avg_start"), store.number(prov.get("threads"))
    known = isinstance(load, (list, tuple)) and load and store.number(load[0]) is not None
    return bool(known and threads and load[0] > threads)


def chapter_cost(chapter: str, results: str | os.PathLike | None = None) -> dict:
    """One row of :func:`cost_table` for ``chapter``'s full plan over ``results`` (default
    ``results/``); ``projection_2core_s`` is CPU s / 2 plus the wall time of cells without CPU s."""
    from lengthgen.chapters import chapter_module

    cells = chapter_module(chapter).cells("full")  # checks the chapter
    folder = (Path(results) if results is not None else store.results_dir()) / chapter / "cells"
    row = dict.fromkeys(FIELDS, 0) | {"chapter": chapter, "planned": len(cells)}
    row |= {"refresh_max_diff": None, "wall_s": 0.0, "cpu_s": 0.0, "machines": Counter()}
    unknown_wall = 0.0
    for cell in cells:
        state = store.stored_state(folder, cell, "full")
        row["stale"] += state not in ("done", "missing")
        if state != "done":
            continue
        prov = store.load_cell(folder, cell.name, scale="full")["provenance"]
        row["stored"] += 1
        wall = store.number(prov.get("wall_time_s")) or 0.0
        cpu = store.cpu_time(prov)
        row["wall_s"] += wall
        row["cpu_recorded" if cpu is not None else "cpu_unknown"] += 1
        row["cpu_s"] += cpu or 0.0
        unknown_wall += wall if cpu is None else 0.0
        row["migrated"] += "migrated" in prov
        row["refreshed"] += isinstance(prov.get("refreshed"), dict)
        if (d := store.refresh_difference(prov)) is not None:  # the largest of any refreshed cell
            row["refresh_max_diff"] = max(d, row["refresh_max_diff"] or d)
        row["loaded"] += _loaded(prov)
        row["machines"][store.machine_label(prov)] += 1
    row["projection_2core_s"] = row["cpu_s"] / 2 + unknown_wall
    row["projection_upper_bound"] = row["cpu_unknown"] > 0
    for k in ("wall_s", "cpu_s", "projection_2core_s"):
        row[k] = round(row[k], 3)
    return row


def cost_table(chapters=None, results: str | os.PathLike | None = None) -> list[dict]:
    """:func:`chapter_cost` rows for ``chapters`` (default all) and a ``"total"`` row summing them."""
    chapters = [chapters] if isinstance(chapters, str) else list(chapters or CHAPTERS)
    rows = [chapter_cost(ch, results) for ch in chapters]
    total = {"chapter": "total", "machines": {}}
    for k in FIELDS[1:]:
        vals = [r[k] for r in rows]
        if k == "projection_upper_bound":
            total[k] = any(vals)
        elif k == "refresh_max_diff":
            total[k] = max((v for v in vals if v is not None), default=None)
        else:
            total[k] = round(sum(vals), 3) if k.endswith("_s") else sum(vals)
    total["machines"] = dict(sum((Counter(r["machines"]) for r in rows), Counter()))
    return rows + [total]


# --------------------------------------------------------------------------- text and page
def fmt_seconds(s: float) -> str:
    """``45 s``, ``12 min``, ``3.4 h``."""
    if s < 120:
        return f"{s:.0f} s"
    return f"{s / 60:.0f} min" if s < 2 * 3600 else f"{s / 3600:.1f} h"


#: the table's columns: the CLI's header and the book page's shorter one (its text explains each)
COLUMNS = (
    ("chapter", "chapter"),
    ("cells stored / planned", "stored / planned"),
    ("stale", "stale"),
    ("stored wall time", "wall"),
    ("CPU time (cells)", "CPU (cells)"),
    ("CPU unknown (migrated)", "no CPU (migrated)"),
    ("loaded at start", "loaded"),
    ("2-core projection", "2-core estimate"),
)


def _cells(r: dict) -> list[str]:
    cpu = f"{fmt_seconds(r['cpu_s'])} ({r['cpu_recorded']})" if r["cpu_recorded"] else "— (0)"
    proj = ("≤ " if r["projection_upper_bound"] else "") + fmt_seconds(r["projection_2core_s"])
    stored, unknown = f"{r['stored']} / {r['planned']}", f"{r['cpu_unknown']} ({r['migrated']})"
    wall, stale, loaded = fmt_seconds(r["wall_s"]), str(r["stale"]), str(r["loaded"])
    return [r["chapter"], stored, stale, wall, cpu, unknown, loaded, proj]  # in COLUMNS' order


def _notes(rows: list[dict]) -> list[str]:
    """One sentence per chapter with refreshed cells (how many, how far their re-runs moved), then
    one per chapter naming the machines its stored cells ran on (:func:`store.machine_label`)."""
    chapters = [r for r in rows if r["chapter"] != "total"]
    out = []
    for r in chapters:
        if r["refreshed"]:
            d = r["refresh_max_diff"]
            out.append(
                f"{r['chapter']}: {r['refreshed']} migrated cells re-run to record their CPU time; the largest "
                f"absolute difference from the values they replaced is {'unknown' if d is None else f'{d:.2g}'}."
            )
    for r in chapters:
        if r["machines"]:
            parts = [
                f"{'not recorded (stored before machines were)' if k == '—' else k} × {n}"
                for k, n in sorted(r["machines"].items(), key=lambda kv: (kv[0] == "—", kv[0]))
            ]
            out.append(f"{r['chapter']} machines: " + "; ".join(parts) + ".")
    return out


def cost_text(rows: list[dict]) -> str:
    """The table of :func:`cost_table` as aligned plain text (the CLI's output)."""
    out = text_table([cli for cli, _ in COLUMNS], [_cells(r) for r in rows]) + [""]
    if any(r["projection_upper_bound"] for r in rows):
        out.append(
            "≤: an upper bound — some cells have no recorded CPU time, and their wall time comes "
            "from a shared, often loaded two-core machine."
        )
    if any(r["stored"] < r["planned"] for r in rows):
        out.append("Cells of the plan not yet stored are not counted.")
    return "\n".join(out + _notes(rows))


def cost_markdown(results: str | os.PathLike | None = None) -> str:
    """The generated table of ``book/cost.md``: a MyST pipe table and a note under it."""
    rows = cost_table(results=results)
    body = [[f"**{c}**" for c in _cells(r)] if r["chapter"] == "total" else _cells(r) for r in rows]
    lines = ["| " + " | ".join(line) + " |" for line in [[p for _, p in COLUMNS], *body]]
    tot = rows[-1]
    note = (
        f"Summed over {tot['stored']} stored cells of {tot['planned']} planned: CPU time is recorded "
        f"for {tot['cpu_recorded']}, unknown for {tot['cpu_unknown']} (of which {tot['migrated']} "
        f"migrated from runs made before the runs facility); the load average is recorded for the same "
        f"{tot['cpu_recorded']}, and {tot['loaded']} of them started on a machine whose load average "
        f"exceeded their thread count."
    )
    if tot["projection_upper_bound"]:
        note += " ≤ marks a projection that is an upper bound."
    if tot["stored"] < tot["planned"]:
        note += " Cells not yet stored are not counted."
    align = "|:--|" + "--:|" * (len(COLUMNS) - 1)
    return "\n".join([lines[0], align, *lines[1:], "", " ".join([note, *_notes(rows)]), ""])
