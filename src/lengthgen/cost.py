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
* ``refreshed``: cells re-run to record their CPU time in place of a migrated result
  (:func:`lengthgen.engine.runs.refresh_record`), and ``refresh_max_diff``, the largest absolute
  difference between such a re-run's value and the one it replaced (``None`` if none);
* ``loaded``: cells whose 1-minute load average at start exceeded their torch thread count, so
  other work shared the cores and their wall time overstates their cost;
* ``projection_2core_s``: a projection for a machine with two free cores: CPU seconds / 2 where the
  CPU time is known, plus the stored wall time of the other cells. Those wall times come from a
  shared, often loaded two-core machine, so the projection is then an upper bound
  (``projection_upper_bound``).

:func:`cost_markdown` renders the table for the book page ``book/cost.md`` ("What a reproduction
costs"; ``scripts/build_pages.py`` writes it to ``book/_generated/cost_table.md``), which explains
the measurement; ``python -m lengthgen cost [--json] [--chapter chN]`` prints it.

Measured speed figures (issue 17): :data:`MEASURED` holds per-unit CPU costs before and after
its speed-ups; :func:`speed_targets` projects them onto two workers on two cores and judges the
issue's targets (on the stored cells' CPU times once every covered cell has one,
:func:`stored_projection`); :func:`ch3_matmul_bound` bounds chapter 3's study by its matrix products.
"""

from __future__ import annotations

import os
from pathlib import Path

from lengthgen.config import CHAPTERS, check_choice
from lengthgen.store import (
    ResultFileError,
    cell_path,
    load_cell,
    machine_label,
    refresh_difference,
    results_dir,
    stored_state,
)

FIELDS = (
    "chapter",
    "planned",
    "stored",
    "stale",
    "wall_s",
    "cpu_s",
    "cpu_recorded",
    "cpu_unknown",
    "migrated",
    "refreshed",
    "refresh_max_diff",
    "loaded",
    "projection_2core_s",
    "projection_upper_bound",
)


def _num(x) -> float | None:
    return float(x) if isinstance(x, (int, float)) and not isinstance(x, bool) else None


def _loaded(prov: dict) -> bool:
    """Whether the 1-minute load average at the cell's start exceeded its thread count."""
    load, threads = prov.get("load_avg_start"), _num(prov.get("threads"))
    known = isinstance(load, (list, tuple)) and load and _num(load[0]) is not None
    return bool(known and threads and load[0] > threads)


def _cells_folder(results, chapter: str) -> Path:
    """``<results>/<chapter>/cells``; ``results`` defaults to ``results/``."""
    return (Path(results) if results is not None else results_dir()) / chapter / "cells"


def _stored_provenances(folder: Path, cells):
    """``(cell, state, provenance)`` for every cell of ``cells`` stored under ``folder`` at full
    scale (``state`` from :func:`lengthgen.store.stored_state`; the provenance only for
    ``"done"`` cells, else ``None``). A provenance that is not an object raises
    :class:`lengthgen.store.ResultFileError` naming the file."""
    for cell in cells:
        state = stored_state(folder, cell, "full")
        if state == "missing":
            continue
        prov = None
        if state == "done":
            prov = load_cell(folder, cell.name, scale="full")["provenance"]
            if not isinstance(prov, dict):
                raise ResultFileError(
                    f"corrupt result file {cell_path(folder, cell.name)}: "
                    "the provenance is not an object"
                )
        yield cell, state, prov


def chapter_cost(chapter: str, results: str | os.PathLike | None = None, cells=None) -> dict:
    """One row of :func:`cost_table` for ``chapter`` (fields :data:`FIELDS`). ``results`` is the
    results folder (default ``results/``); ``cells`` the plan (default the chapter's full plan).
    A corrupt stored cell raises :class:`lengthgen.store.ResultFileError` naming the file."""
    check_choice("chapter", chapter, CHAPTERS)
    if cells is None:
        from lengthgen.chapters import chapter_module

        cells = chapter_module(chapter).cells("full")
    folder = _cells_folder(results, chapter)
    row = {
        "chapter": chapter,
        "planned": len(cells),
        "stored": 0,
        "stale": 0,
        "wall_s": 0.0,
        "cpu_s": 0.0,
        "cpu_recorded": 0,
        "cpu_unknown": 0,
        "migrated": 0,
        "refreshed": 0,
        "refresh_max_diff": None,
        "loaded": 0,
        "projection_2core_s": 0.0,
        "projection_upper_bound": False,
        "machines": {},
    }
    unknown_wall = 0.0
    for _, state, prov in _stored_provenances(folder, cells):
        if state != "done":
            row["stale"] += 1
            continue
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
        if isinstance(prov.get("refreshed"), dict):
            row["refreshed"] += 1
            d = refresh_difference(prov)
            if d is not None:  # the largest difference of any refreshed cell
                row["refresh_max_diff"] = max(d, row["refresh_max_diff"] or d)
        row["loaded"] += _loaded(prov)
        label = machine_label(prov)
        row["machines"][label] = row["machines"].get(label, 0) + 1
    row["projection_2core_s"] = row["cpu_s"] / 2 + unknown_wall
    row["projection_upper_bound"] = row["cpu_unknown"] > 0
    for k in ("wall_s", "cpu_s", "projection_2core_s"):
        row[k] = round(row[k], 3)
    return row


# --------------------------------------------------------------------------- measured speed (issue 17)
#: Per-unit CPU costs measured for issue 17 (``time.process_time``, one process, one torch thread).
#: ``before_cpu_s`` / ``after_cpu_s``: one unit before and after the speed-ups (``None`` where the
#: chapter's code was not changed: then ``after`` = ``before``); ``count``: units in the study.
#: Chapter 3: training CPU s/step × 2000 steps (measured over 60 steps per tier × group × kernels, for
#: RoPE and NoPE; a group's figure is (RoPE + 4 × NoPE) / 5, the other encodings cost like NoPE) plus
#: its evaluation, before and after interleaved in one session; the change is the decoder's fused
#: kernels (layer norm, baddbmm) and contiguous RoPE (``lengthgen.nn``). Full re-runs of stored groups
#: with them: 1L1H__rope__main__seed0 identical accuracies in 124 CPU s, 2L4H__rope__main__seed0 one
#: flipped position of 5120 in one of 35 rows in 259 CPU s (final losses within 2.4e-7). Chapter 2: the Table 2 cells, CPU s as recorded by the runs
#: facility (first_posnorm re-measured: 26.5 s against 28.7 s recorded) or re-measured in full here
#: (``majority_gen*``, not stored). Chapter 1: the Fig. 4 cell ``first_training`` (160 members,
#: 10,000 updates) re-run in full (not stored; the same test accuracies as the stored cell).
MEASURED = {
    "date": "2026-11-30",
    "machine": (
        "the book's 2-core CPU machine (AMD EPYC, AVX-512), shared with other engineers' jobs "
        "while measured (load average 1.0-3.2 on 2 cores), so the figures are pessimistic, not idle-machine ones"
    ),
    "method": "time.process_time of one process with one torch thread",
    "units": [
        dict(zip(("chapter", "unit", "count", "before_cpu_s", "after_cpu_s"), row))
        for row in (  # chapter, unit, count, CPU s before, CPU s after
            ("ch3", "1L1H main group (7 models)", 25, 147, 115),
            ("ch3", "1L1H pos group (2 models)", 25, 44, 33),
            ("ch3", "2L4H main group (7 models)", 25, 289, 231),
            ("ch3", "2L4H pos group (2 models)", 25, 87, 69),
            ("ch3", "4L4H main group (7 models)", 25, 591, 493),
            ("ch3", "4L4H pos group (2 models)", 25, 166, 128),
            ("ch2", "first_posnorm (N 51, A_pos+A_norm, 20 seeds)", 1, 28.7, None),
            ("ch2", "first_posnorm_more (N 11-41)", 1, 80.1, None),
            ("ch2", "majority_gen (N 51, A_gen, 20 seeds)", 1, 14.6, None),
            ("ch2", "majority_gen_more (N 11-41)", 1, 29.1, None),
            ("ch2", "index_posnorm (N 51)", 1, 190.3, None),
            ("ch2", "index_posnorm_small (N 11, 21)", 1, 121.2, None),
            ("ch2", "index_posnorm_mid (N 31, 41)", 1, 201.8, None),
            ("ch1", "Fig. 4 cell first_training (160 members)", 1, 133.9, None),
        )
    ],
}
#: The rate of one core's float32 matrix products at chapter 3's shapes (``scripts/matmul_rate.py``):
#: one decoder layer's linear maps for a 7-member group (960 rows, width 64, MLP 256), each forward
#: product and its two backward products, ``torch.bmm`` with one thread, GFLOP/s of process CPU
#: time. Four runs of five repeats on 2026-11-30 gave 68.1-86.2 (run medians 72.5, 78.5, 70.1,
#: 81.2), measured while chapter 3's two re-run workers shared the two cores. :func:`ch3_matmul_bound`
#: uses the fastest, 86.2, so that the matrix products' share it gives is not overstated by the
#: choice of rate (an idle core may still be somewhat faster).
MATMUL_RATE = {
    "gflops": 86.2,
    "range": (68.1, 86.2),
    "run_medians": (72.5, 78.5, 70.1, 81.2),
    "how": "scripts/matmul_rate.py: torch.bmm, float32, one thread, one layer's products at the "
    "study's shapes, process CPU time, 2026-11-30, two other single-threaded jobs running",
}


_STUDY_KEYS = (
    "study_cpu_s",
    "study_basis",
    "other_cpu_s",
    "other_budget_s",
    "shrink_needed",
)


def ch3_matmul_bound(
    scale: str = "full",
    results: str | os.PathLike | None = None,
    *,
    stored: dict | None = None,
) -> dict:
    """Chapter 3's trained study at ``scale`` split into its matrix products and the rest: the
    products' work counted from the protocol (:func:`lengthgen.chapters.ch3.experiments.study_matmul_flops`)
    at the fastest measured rate (:data:`MATMUL_RATE`), the rest as the study's CPU cost minus that,
    and the factor by which the rest would have to shrink for the study to fit the 2 h target on two
    workers. The study's CPU cost (full scale only) is the CPU time its stored groups record once
    every group has it (:func:`stored_projection`, ``study_basis`` "stored cells"), else the
    measured units after the speed-ups (:data:`MEASURED`, "measured units").

    Returns ``{"tflop", "gflops", "cpu_s", "two_worker_s", "study_cpu_s", "study_basis",
    "other_cpu_s", "other_budget_s", "shrink_needed"}`` (the last five ``None`` below full scale;
    ``shrink_needed`` is ``inf`` when the products alone exceed the target). ``results`` is the
    results folder (default ``results/``); ``stored`` a :func:`stored_projection` of chapter 3 already
    read from it (:func:`cost_table` passes its own). Book page "What a reproduction costs", "What bounds
    chapter 3"."""
    from lengthgen.chapters.ch3.experiments import study_matmul_flops

    flops = study_matmul_flops(scale)["total"]
    cpu = flops / (MATMUL_RATE["gflops"] * 1e9)
    out = {
        "tflop": round(flops / 1e12, 1),
        "gflops": MATMUL_RATE["gflops"],
        "cpu_s": round(cpu, 1),
        "two_worker_s": round(cpu / 2, 1),
        **dict.fromkeys(_STUDY_KEYS),  # filled in at full scale
    }
    if scale == "full":
        if stored is None:
            stored = stored_projection("ch3", results)
        if stored["projection_s"] is not None:
            study, basis = stored["cpu_s"], "stored cells"
        else:
            study, basis = (
                sum(u["total_after_cpu_s"] for u in measured_units("ch3")),
                "measured units",
            )
        other, budget = study - cpu, 2 * TARGETS["ch3"][1] - cpu
        out.update(
            study_cpu_s=round(study, 1),
            study_basis=basis,
            other_cpu_s=round(other, 1),
            other_budget_s=round(budget, 1),
            shrink_needed=round(other / budget, 1) if budget > 0 else float("inf"),
        )
    return out


def bound_line(bound: dict | None = None) -> str:
    """What :func:`ch3_matmul_bound` says (``bound``, computed over ``results/`` when ``None``), in two
    sentences (the CLI's and the page's)."""
    b = ch3_matmul_bound() if bound is None else bound
    lo, hi = MATMUL_RATE["range"]
    out = (
        f"Chapter 3's study: its matrix products are {b['tflop']:,.0f} TFLOP (counted from the protocol); "
        f"at {b['gflops']:.0f} GFLOP/s, the fastest of one core's measured {lo:.0f}-{hi:.0f} GFLOP/s at these "
        f"shapes, they take {b['cpu_s'] / 3600:.1f} h of CPU, {fmt_seconds(b['two_worker_s'])} on two workers."
    )
    if b["shrink_needed"] is not None:
        source = (
            "recorded by its stored groups"
            if b["study_basis"] == "stored cells"
            else "measured (per-unit costs)"
        )
        out += (
            f" Of the study's {b['study_cpu_s'] / 3600:.1f} CPU hours ({source}) the other "
            f"{b['other_cpu_s'] / 3600:.1f} (layer norms, activations, softmax, copies, the optimizer) would "
            f"have to fit in {b['other_budget_s'] / 3600:.1f} for 2 h on two workers: "
            f"{b['shrink_needed']:.1f} times less."
        )
    return out


#: The issue's targets (wall seconds on two free cores) and the units each covers.
TARGETS = {
    "ch3": ("chapter 3 study (all 150 groups)", 2 * 3600),
    "ch2": ("chapter 2 Table 2 (all N, models, 20 seeds)", 30 * 60),
    "ch1": ("chapter 1 Fig. 4 study (2 arms, 4 lengths, 20 seeds)", 5 * 60),
    "total": ("every full-scale reproduction", 6 * 3600),
}
#: The stored cells each target covers (shell patterns over the chapter's full-scale cell names):
#: chapter 3's trained groups (``tier__encoding__group__seedS``), chapter 2's Table 2 cells and
#: chapter 1's Fig. 4 cell -- the same cells as the :data:`MEASURED` units of each chapter.
TARGET_CELLS = {
    "ch3": ("1L1H__*", "2L4H__*", "4L4H__*"),  # the main study (App. F–H cells apart)
    "ch2": (
        "first_posnorm",
        "first_posnorm_more",
        "majority_gen",
        "majority_gen_more",
        "index_posnorm",
        "index_posnorm_small",
        "index_posnorm_mid",
    ),
    "ch1": ("first_training",),
}


def _after(u: dict) -> float | None:
    return u["after_cpu_s"] if u["after_cpu_s"] is not None else u["before_cpu_s"]


def measured_units(chapter: str) -> list[dict]:
    """The :data:`MEASURED` units of ``chapter`` with their study totals (CPU s, before and after)."""
    out = []
    for u in MEASURED["units"]:
        if u["chapter"] != chapter:
            continue
        b, a = u["before_cpu_s"], _after(u)
        out.append(
            {
                **u,
                "after_cpu_s": a,
                "changed": u["after_cpu_s"] is not None,
                "total_before_cpu_s": None if b is None else round(b * u["count"], 1),
                "total_after_cpu_s": None if a is None else round(a * u["count"], 1),
            }
        )
    return out


def _two_workers(units: list[dict], key: str) -> float | None:
    """Wall seconds of the units on two worker processes: half the summed CPU, but no less than the
    longest single unit (a cell never splits across workers)."""
    vals = [(u[key], u["count"]) for u in units]
    if not vals or any(v is None for v, _ in vals):
        return None
    total = sum(v * c for v, c in vals)
    return round(max(total / 2, max(v for v, _ in vals)), 1)


def stored_projection(chapter: str, results: str | os.PathLike | None = None) -> dict:
    """The two-worker wall time of the cells a target covers (:data:`TARGET_CELLS`), from the CPU time
    their stored provenance records (the measurement of the target itself, once every cell has it).

    Returns ``{"cells", "with_cpu", "cpu_s", "longest_cpu_s", "projection_s"}``: ``cells`` covered,
    ``with_cpu`` of them stored for the planned configuration with ``cpu_time_s`` (their sum and
    largest value), and ``projection_s`` = max(sum / 2, longest), as :func:`_two_workers` (perfect
    packing onto two workers, so slightly optimistic for a few long cells) -- ``None`` unless every
    covered cell has its CPU time. Corrupt cells raise
    :class:`lengthgen.store.ResultFileError` naming the file."""
    from fnmatch import fnmatch

    from lengthgen.chapters import chapter_module

    check_choice("chapter with a speed target", chapter, tuple(TARGET_CELLS))
    cells = [
        c
        for c in chapter_module(chapter).cells("full")
        if any(fnmatch(c.name, pat) for pat in TARGET_CELLS[chapter])
    ]
    folder = _cells_folder(results, chapter)
    cpu = [
        c
        for _, _, prov in _stored_provenances(folder, cells)
        if prov is not None and (c := _num(prov.get("cpu_time_s"))) is not None
    ]
    complete = bool(cells) and len(cpu) == len(cells)
    return {
        "cells": len(cells),
        "with_cpu": len(cpu),
        "cpu_s": round(sum(cpu), 1),
        "longest_cpu_s": round(max(cpu), 1) if cpu else None,
        "projection_s": _two_workers([{"cpu": c, "count": 1} for c in cpu], "cpu")
        if complete
        else None,
    }


def speed_targets(rows: list[dict], results=None) -> list[dict]:
    """The targets of issue 17 against the measured projections (two workers on two cores).

    Per chapter with a target: ``projection_before_s`` / ``projection_after_s`` from
    :data:`MEASURED` (``None`` where a unit is not measured), and ``stored`` from
    :func:`stored_projection` (the covered cells' recorded CPU time; not looked up with
    ``results=False``). ``met`` judges the stored projection where every covered cell has its CPU
    time (``basis`` "stored cells"), else the measured one (``basis`` "measured units").
    The whole book: the chapters' 2-core projections of ``rows`` (:func:`chapter_cost` over
    ``results``, upper bounds where CPU time is unknown), with chapter 3's trained study replaced by
    its projection (stored if complete, else measured: its stored groups may lack CPU time or be
    missing); ``uncounted_cells`` are planned cells outside that study not stored (or stale),
    whose cost is unknown: with any of them a projection under the target leaves it open
    (``met`` None). ``results=False`` skips the whole-book row."""
    out = []
    for ch in ("ch3", "ch2", "ch1"):
        units = measured_units(ch)
        name, target = TARGETS[ch]
        before, after = (
            _two_workers(units, "before_cpu_s"),
            _two_workers(units, "after_cpu_s"),
        )
        stored = None if results is False else stored_projection(ch, results)
        basis, proj = (
            ("stored cells", stored["projection_s"])
            if stored and stored["projection_s"] is not None
            else ("measured units", after)
        )
        out.append(
            {
                "chapter": ch,
                "target": name,
                "target_s": target,
                "projection_before_s": before,
                "projection_after_s": after,
                "stored": stored,
                "basis": basis,
                "met": None if proj is None else proj <= target,
            }
        )
    chapters = [r for r in rows if r["chapter"] != "total"]
    if results is not False and {r["chapter"] for r in chapters} >= set(CHAPTERS):
        t3 = next(t for t in out if t["chapter"] == "ch3")
        ch3_study = (
            t3["stored"]["projection_s"]
            if t3["basis"] == "stored cells"
            else t3["projection_after_s"]
        )
        ch3_rest = _ch3_other_cells(results)
        others = [r for r in chapters if r["chapter"] != "ch3"] + [ch3_rest]
        upper = any(r["projection_upper_bound"] for r in others)
        uncounted = sum(r["planned"] - r["stored"] for r in others)
        name, target = TARGETS["total"]
        if ch3_study is None:
            total = met = None
        else:
            total = round(sum(r["projection_2core_s"] for r in others) + ch3_study, 1)
            met = _book_verdict(total, target, upper, uncounted)
        out.append(
            {
                "chapter": "total",
                "target": name,
                "target_s": target,
                "projection_before_s": None,
                "projection_after_s": total,
                "upper_bound": upper,
                "uncounted_cells": uncounted,
                "basis": t3["basis"],
                "met": met,
            }
        )
    return out


def _book_verdict(total: float, target: float, upper: bool, uncounted: int) -> bool | None:
    """Whether the whole-book projection meets its target: an upper bound at or under the target
    meets it once every planned cell is counted; a projection over the target fails it unless it is
    only an upper bound; cells not yet stored can only add, so under the target they leave it open
    (``None``)."""
    if total > target:
        return None if upper else False
    return None if uncounted else True


def _ch3_other_cells(results) -> dict:
    """:func:`chapter_cost` of chapter 3's cells outside the trained study (α tables, theory, lr grid,
    the App. F–H robustness studies)."""
    from fnmatch import fnmatch

    from lengthgen.chapters import chapter_module

    study = TARGET_CELLS["ch3"]
    cells = [
        c
        for c in chapter_module("ch3").cells("full")
        if not any(fnmatch(c.name, pat) for pat in study)
    ]
    return chapter_cost("ch3", results, cells=cells)


def cost_table(chapters=None, results: str | os.PathLike | None = None) -> list[dict]:
    """Per-chapter rows (see the module docstring) for ``chapters`` (default all) followed by a
    ``"total"`` row summing them. Every row also carries ``targets`` (issue 17's speed targets that
    concern it, :func:`speed_targets`) and every chapter row its ``measured_units``; the total row
    carries ``ch3_bound`` (:func:`ch3_matmul_bound` over the same ``results``) when chapter 3 is
    among ``chapters``, else ``None``."""
    if isinstance(chapters, str):
        chapters = [chapters]
    chapters = list(CHAPTERS if chapters is None else chapters)
    rows = [chapter_cost(ch, results) for ch in chapters]
    total = {"chapter": "total"}
    for k in FIELDS[1:]:
        vals = [r[k] for r in rows]
        if k == "projection_upper_bound":
            total[k] = any(vals)
        elif k == "refresh_max_diff":
            known = [v for v in vals if v is not None]
            total[k] = max(known) if known else None
        elif k.endswith("_s"):
            total[k] = round(sum(vals), 3)
        else:
            total[k] = sum(vals)
    total["machines"] = {}
    for r in rows:
        for label, n in r["machines"].items():
            total["machines"][label] = total["machines"].get(label, 0) + n
    targets = speed_targets(rows, results)
    for r in rows:
        r["measured_units"] = measured_units(r["chapter"])
        r["targets"] = [t for t in targets if t["chapter"] == r["chapter"]]
    total["targets"] = [t for t in targets if t["chapter"] == "total"]
    t3 = next(t for t in targets if t["chapter"] == "ch3")
    total["ch3_bound"] = (
        ch3_matmul_bound(results=results, stored=t3["stored"]) if "ch3" in chapters else None
    )
    return rows + [total]


def fmt_seconds(s: float) -> str:
    """``45 s``, ``12 min``, ``3.4 h``."""
    if s < 120:
        return f"{s:.0f} s"
    if s < 2 * 3600:
        return f"{s / 60:.0f} min"
    return f"{s / 3600:.1f} h"


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
HEADERS = tuple(cli for cli, _ in COLUMNS)
PAGE_HEADERS = tuple(page for _, page in COLUMNS)


def _cells(r: dict) -> list[str]:
    cpu = f"{fmt_seconds(r['cpu_s'])} ({r['cpu_recorded']})" if r["cpu_recorded"] else "— (0)"
    proj = ("≤ " if r["projection_upper_bound"] else "") + fmt_seconds(r["projection_2core_s"])
    return [
        r["chapter"],
        f"{r['stored']} / {r['planned']}",
        str(r["stale"]),
        fmt_seconds(r["wall_s"]),
        cpu,
        f"{r['cpu_unknown']} ({r['migrated']})",
        str(r["loaded"]),
        proj,
    ]


def _aligned(head, body: list[list[str]]) -> list[str]:
    """A plain-text table: columns padded to their widest cell, a dashed rule under the head."""
    lines = [list(head)] + body
    widths = [max(len(line[i]) for line in lines) for i in range(len(head))]
    out = ["  ".join(c.ljust(w) for c, w in zip(line, widths)).rstrip() for line in lines]
    return out[:1] + ["  ".join("-" * w for w in widths)] + out[1:]


def _pipe_table(head, body: list[list[str]], left: int) -> list[str]:
    """A MyST pipe table whose first ``left`` columns are left-aligned, the others right."""
    align = [":--"] * left + ["--:"] * (len(head) - left)
    rows = [list(head), *body]
    return ["| " + " | ".join(rows[0]) + " |", "|" + "|".join(align) + "|"] + [
        "| " + " | ".join(line) + " |" for line in rows[1:]
    ]


def cost_text(rows: list[dict]) -> str:
    """The table as aligned plain text (the CLI's output)."""
    out = _aligned(HEADERS, [_cells(r) for r in rows]) + [""]
    if any(r["projection_upper_bound"] for r in rows):
        out.append(
            "≤: an upper bound — some cells have no recorded CPU time, and their wall time comes "
            "from a shared, often loaded two-core machine."
        )
    if any(r["stored"] < r["planned"] for r in rows):
        out.append("Cells of the plan not yet stored are not counted.")
    out += refresh_lines(rows)
    out += machine_lines(rows)
    speed = speed_lines(rows)
    if speed:
        out += ["", *speed]
    return "\n".join(out)


def machine_lines(rows: list[dict]) -> list[str]:
    """One sentence per chapter naming the machines its stored cells ran on (CPU model, the
    instruction set torch dispatched to, BLAS, threads; :func:`lengthgen.store.machine_label`)."""
    out = []
    for r in rows:
        if r["chapter"] == "total" or not r.get("machines"):
            continue
        parts = [
            f"{'not recorded (stored before machines were)' if k == '—' else k} × {n}"
            for k, n in sorted(r["machines"].items(), key=lambda kv: (kv[0] == "—", kv[0]))
        ]
        out.append(f"{r['chapter']} machines: " + "; ".join(parts) + ".")
    return out


def refresh_lines(rows: list[dict]) -> list[str]:
    """One sentence per chapter with refreshed cells: how many, and how far their re-runs moved."""
    out = []
    for r in rows:
        if r["chapter"] != "total" and r.get("refreshed"):
            d = r["refresh_max_diff"]
            out.append(
                f"{r['chapter']}: {r['refreshed']} migrated cells re-run to record their CPU time; the largest "
                f"absolute difference from the values they replaced is {'unknown' if d is None else f'{d:.2g}'}."
            )
    return out


def _fmt(s) -> str:
    return "—" if s is None else fmt_seconds(s)


def _stored_cell(st: dict | None) -> str:
    """A target's projection from its stored cells, for the table (:func:`stored_projection`)."""
    if not st:
        return ""
    if st["projection_s"] is None:
        return f"— ({st['with_cpu']}/{st['cells']} cells with CPU time)"
    return f"{_fmt(st['projection_s'])} ({st['with_cpu']}/{st['cells']} cells)"


def _verdict(t: dict) -> str:
    """Whether a speed target is met, in words, with what it was judged on."""
    if t["met"] is None:
        if t["projection_after_s"] is None:
            return "not measured"
        why = []
        if t.get("uncounted_cells"):
            why.append(f"{t['uncounted_cells']} cells not stored")
        if t.get("upper_bound"):
            why.append("upper bound")
        return "open: " + ", ".join(why)
    met = "met" if t["met"] else "not met"
    if not t.get("basis"):
        return met
    if t["chapter"] == "total":
        return f"{met} (chapter 3's study from {t['basis']})"
    return f"{met} ({t['basis']})"


def _speed_cells(rows: list[dict]):
    units = [u for r in rows for u in r.get("measured_units", [])]
    targets = [t for r in rows for t in r.get("targets", [])]
    sec = lambda v: "—" if v is None else f"{v:,.0f} s"  # noqa: E731
    urows = [
        [
            u["chapter"],
            u["unit"],
            str(u["count"]),
            sec(u["before_cpu_s"]),
            sec(u["after_cpu_s"]) + ("" if u["changed"] else " (code unchanged)"),
        ]
        for u in units
    ]
    trows = [
        [
            t["target"],
            "≤ " + fmt_seconds(t["target_s"]),
            _fmt(t["projection_before_s"]),
            ("≤ " if t.get("upper_bound") else "") + _fmt(t["projection_after_s"]),
            _stored_cell(t.get("stored")),
            _verdict(t),
        ]
        for t in targets
    ]
    return urows, trows


UNIT_HEADERS = ("chapter", "unit", "count", "CPU before", "CPU after")
TARGET_HEADERS = (
    "target (two workers on two cores)",
    "target",
    "projected before",
    "projected after",
    "from stored cells",
    "",
)


def _bound_lines(rows: list[dict]) -> list[str]:
    """:func:`bound_line` of the chapter-3 bound that :func:`cost_table` put in the total row, if any."""
    total = [r for r in rows if r.get("chapter") == "total" and r.get("ch3_bound")]
    return [bound_line(r["ch3_bound"]) for r in total[:1]]


def speed_lines(rows: list[dict]) -> list[str]:
    """Plain-text tables of the measured unit costs and the targets for ``rows`` (empty if none),
    and chapter 3's bound where ``rows`` carry it (:func:`cost_table`)."""
    urows, trows = _speed_cells(rows)
    if not urows and not trows:
        return []
    out = [
        f"Measured per-unit CPU cost (issue 17; {MEASURED['date']}, {MEASURED['method']}; {MEASURED['machine']}):"
    ]
    for head, body in ((UNIT_HEADERS, urows), (TARGET_HEADERS, trows)):
        if body:
            out += _aligned(head, body) + [""]
    return out + _bound_lines(rows)


def speed_markdown(rows: list[dict]) -> str:
    """The measured unit costs and the targets as two MyST pipe tables, and chapter 3's bound."""
    urows, trows = _speed_cells(rows)
    out = []
    for head, body in ((UNIT_HEADERS, urows), (TARGET_HEADERS, trows)):
        body = [[c.replace("|", "/") for c in line] for line in body]
        out += _pipe_table(head, body, left=2) + [""]
    out.append(f"Measured {MEASURED['date']} with {MEASURED['method']} on {MEASURED['machine']}.")
    out += ["", *_bound_lines(rows)]
    return "\n".join(out)


def cost_markdown(results: str | os.PathLike | None = None) -> str:
    """The generated table of ``book/cost.md`` (a MyST pipe table and a note), from the stored cells."""
    rows = cost_table(results=results)
    body = [[f"**{c}**" for c in _cells(r)] if r["chapter"] == "total" else _cells(r) for r in rows]
    tot = rows[-1]
    note = (
        f"Summed over {tot['stored']} stored cells of {tot['planned']} planned: CPU time is recorded "
        f"for {tot['cpu_recorded']}, unknown for {tot['cpu_unknown']} (of which {tot['migrated']} "
        f"migrated from runs made before the runs facility); the load average is recorded for the same "
        f"{tot['cpu_recorded']}, and {tot['loaded']} of them started on a machine whose load average "
        f"exceeded their thread count."
    )
    if any(r["projection_upper_bound"] for r in rows):
        note += " ≤ marks a projection that is an upper bound."
    if tot["stored"] < tot["planned"]:
        note += " Cells not yet stored are not counted."
    refreshed = refresh_lines(rows)
    if refreshed:
        note += " " + " ".join(refreshed)
    note += " " + " ".join(machine_lines(rows))
    return "\n".join(
        [
            *_pipe_table(PAGE_HEADERS, body, left=1),
            "",
            note,
            "",
            "### Measured unit costs and the speed targets",
            "",
            speed_markdown(rows),
            "",
        ]
    )
