"""What a reproduction costs: the compute recorded in the stored full-scale cells, per chapter.

For every chapter, :func:`cost_table` compares the chapter's full-scale plan
(``chapter_module(ch).cells("full")``) with the cells stored under ``results/<chapter>/cells/`` and
sums what their provenance blocks (:mod:`lengthgen.engine.runs`) record:

* ``planned``: cells of the full-scale plan; ``stored``: those stored with the planned
  configuration hash (``stale``: stored under the planned name but for another configuration or
  scale; these are not summed, and neither are cells not yet run);
* ``wall_s``: the summed stored wall seconds; ``cpu_s``: the summed process CPU seconds, only over
  the ``cpu_recorded`` cells whose provenance has ``cpu_time_s`` (cells run through the runs
  facility); ``cpu_unknown`` cells have none, ``migrated`` of them being results re-keyed from
  runs made before the facility existed;
* ``loaded``: cells whose 1-minute load average at start exceeded their torch thread count, so
  other work shared the cores and their wall time overstates their cost;
* ``projection_2core_s``: a projection for a machine with two free cores: CPU seconds / 2 where the
  CPU time is known, plus the stored wall time of the other cells. Those wall times come from a
  shared, often loaded two-core machine, so the projection is then an upper bound
  (``projection_upper_bound``).

:func:`cost_markdown` renders the table for the book page ``book/cost.md`` ("What a reproduction
costs"; ``scripts/build_pages.py`` writes it to ``book/_generated/cost_table.md``), which explains
the measurement; ``python -m lengthgen cost [--json] [--chapter chN]`` prints it.
"""
from __future__ import annotations

import os
from pathlib import Path

from lengthgen.config import CHAPTERS, check_choice
from lengthgen.store import ResultFileError, results_dir

FIELDS = ("chapter", "planned", "stored", "stale", "wall_s", "cpu_s", "cpu_recorded", "cpu_unknown",
          "migrated", "loaded", "projection_2core_s", "projection_upper_bound")


def _num(x) -> float | None:
    return float(x) if isinstance(x, (int, float)) and not isinstance(x, bool) else None


def _loaded(prov: dict) -> bool:
    """Whether the 1-minute load average at the cell's start exceeded its thread count."""
    load, threads = prov.get("load_avg_start"), _num(prov.get("threads"))
    if isinstance(load, (list, tuple)) and load and _num(load[0]) is not None and threads:
        return load[0] > threads
    return False


def chapter_cost(chapter: str, results: str | os.PathLike | None = None, cells=None) -> dict:
    """One row of :func:`cost_table` for ``chapter`` (fields :data:`FIELDS`). ``results`` is the
    results folder (default ``results/``); ``cells`` the plan (default the chapter's full plan).
    A corrupt stored cell raises :class:`lengthgen.store.ResultFileError` naming the file."""
    from lengthgen.engine import runs

    check_choice("chapter", chapter, CHAPTERS)
    if cells is None:
        from lengthgen.chapters import chapter_module

        cells = chapter_module(chapter).cells("full")
    folder = Path(results) if results is not None else results_dir()
    folder = folder / chapter / "cells"
    row = {"chapter": chapter, "planned": len(cells), "stored": 0, "stale": 0, "wall_s": 0.0,
           "cpu_s": 0.0, "cpu_recorded": 0, "cpu_unknown": 0, "migrated": 0, "loaded": 0,
           "projection_2core_s": 0.0, "projection_upper_bound": False}
    unknown_wall = 0.0
    for cell in cells:
        state = runs.stored_state(folder, cell, "full")
        if state == "missing":
            continue
        if state != "done":
            row["stale"] += 1
            continue
        prov = runs.load_cell(folder, cell.name, scale="full")["provenance"]
        if not isinstance(prov, dict):
            raise ResultFileError(f"corrupt result file {runs.cell_path(folder, cell.name)}: "
                                  "the provenance is not an object")
        row["stored"] += 1
        wall, cpu = _num(prov.get("wall_time_s")), _num(prov.get("cpu_time_s"))
        row["wall_s"] += wall or 0.0
        if cpu is not None:
            row["cpu_recorded"] += 1
            row["cpu_s"] += cpu
        else:
            row["cpu_unknown"] += 1
            unknown_wall += wall or 0.0
        row["migrated"] += "migrated" in prov
        row["loaded"] += _loaded(prov)
    row["projection_2core_s"] = row["cpu_s"] / 2 + unknown_wall
    row["projection_upper_bound"] = row["cpu_unknown"] > 0
    for k in ("wall_s", "cpu_s", "projection_2core_s"):
        row[k] = round(row[k], 3)
    return row


def cost_table(chapters=None, results: str | os.PathLike | None = None) -> list[dict]:
    """Per-chapter rows (see the module docstring) for ``chapters`` (default all) followed by a
    ``"total"`` row summing them."""
    chapters = list(CHAPTERS) if chapters is None else [chapters] if isinstance(chapters, str) else list(chapters)
    rows = [chapter_cost(ch, results) for ch in chapters]
    total = {"chapter": "total"}
    for k in FIELDS[1:]:
        vals = [r[k] for r in rows]
        if k == "projection_upper_bound":
            total[k] = any(vals)
        elif k.endswith("_s"):
            total[k] = round(sum(vals), 3)
        else:
            total[k] = sum(vals)
    return rows + [total]


def fmt_seconds(s: float) -> str:
    """``45 s``, ``12 min``, ``3.4 h``."""
    if s < 120:
        return f"{s:.0f} s"
    if s < 2 * 3600:
        return f"{s / 60:.0f} min"
    return f"{s / 3600:.1f} h"


HEADERS = ("chapter", "cells stored / planned", "stale", "stored wall time", "CPU time (cells)",
           "CPU unknown (migrated)", "loaded at start", "2-core projection")


#: shorter headers for the book's column (the page's text explains each)
PAGE_HEADERS = ("chapter", "stored / planned", "stale", "wall", "CPU (cells)", "no CPU (migrated)",
                "loaded", "2-core estimate")


def _cells(r: dict) -> list[str]:
    cpu = f"{fmt_seconds(r['cpu_s'])} ({r['cpu_recorded']})" if r["cpu_recorded"] else "— (0)"
    proj = ("≤ " if r["projection_upper_bound"] else "") + fmt_seconds(r["projection_2core_s"])
    return [r["chapter"], f"{r['stored']} / {r['planned']}", str(r["stale"]), fmt_seconds(r["wall_s"]), cpu,
            f"{r['cpu_unknown']} ({r['migrated']})", str(r["loaded"]), proj]


def cost_text(rows: list[dict]) -> str:
    """The table as aligned plain text (the CLI's output)."""
    lines = [list(HEADERS)] + [_cells(r) for r in rows]
    widths = [max(len(line[i]) for line in lines) for i in range(len(HEADERS))]
    out = ["  ".join(c.ljust(w) for c, w in zip(line, widths)).rstrip() for line in lines]
    out.insert(1, "  ".join("-" * w for w in widths))
    out.append("")
    out.append("≤: an upper bound — some cells have no recorded CPU time, and their wall time comes "
               "from a shared, often loaded two-core machine. Cells not yet stored are not counted.")
    return "\n".join(out)


def cost_markdown(results: str | os.PathLike | None = None) -> str:
    """The generated table of ``book/cost.md`` (a MyST pipe table and a note), from the stored cells."""
    rows = cost_table(results=results)
    head = "| " + " | ".join(PAGE_HEADERS) + " |"
    sep = "|" + "|".join([":--"] + ["--:"] * (len(PAGE_HEADERS) - 1)) + "|"
    body = []
    for r in rows:
        cells = _cells(r)
        if r["chapter"] == "total":
            cells = [f"**{c}**" for c in cells]
        body.append("| " + " | ".join(cells) + " |")
    tot = rows[-1]
    note = (f"Summed over {tot['stored']} stored cells of {tot['planned']} planned: CPU time is recorded "
            f"for {tot['cpu_recorded']}, unknown for {tot['cpu_unknown']} (of which {tot['migrated']} "
            f"migrated from runs made before the runs facility); the load average is recorded for the same "
            f"{tot['cpu_recorded']}, and {tot['loaded']} of them started on a machine whose load average "
            f"exceeded their thread count. ≤ marks a projection that is an upper bound; cells not yet "
            f"stored are not counted.")
    return "\n".join([head, sep, *body, "", note, ""])
