"""What a reproduction costs: the compute recorded in the stored full-scale cells, per chapter.

:func:`chapter_cost` compares a chapter's full-scale plan with the cells stored under
``results/<chapter>/cells/`` and sums what their provenance records (fields :data:`FIELDS`):
``stored`` cells carry the planned configuration hash (``stale`` ones do not and are not summed,
nor are cells not yet run); ``cpu_s`` sums the ``cpu_recorded`` cells' CPU time (``cpu_unknown``
cells have none, ``migrated`` ones predate the runs facility); ``refreshed`` cells were re-run for
their CPU time (``refresh_max_diff``: the largest change of value); ``loaded`` cells started with a
load average above their thread count; ``projection_2core_s`` is CPU s / 2 plus the wall time of
the cells without CPU time (then an upper bound, ``projection_upper_bound``).

Issue 17's speed figures: :data:`MEASURED` per-unit CPU costs before and after its speed-ups,
:func:`speed_targets` judging its targets, :func:`ch3_matmul_bound` bounding chapter 3's study by
its matrix products. Book page ``book/cost.md`` ("What a reproduction costs") explains them all;
``python -m lengthgen cost [--json] [--chapter chN]`` prints the table.
"""

from __future__ import annotations

import os
from fnmatch import fnmatch
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
from lengthgen.tables import text_table

FIELDS = tuple(
    "chapter planned stored stale wall_s cpu_s cpu_recorded cpu_unknown migrated refreshed "
    "refresh_max_diff loaded projection_2core_s projection_upper_bound".split()
)


def _num(x) -> float | None:
    return float(x) if isinstance(x, (int, float)) and not isinstance(x, bool) else None


def _loaded(prov: dict) -> bool:
    """Whether the 1-minute load average at the cell's start exceeded its thread count."""
    load, threads = prov.get("load_avg_start"), _num(prov.get("threads"))
    known = isinstance(load, (list, tuple)) and load and _num(load[0]) is not None
    return bool(known and threads and load[0] > threads)


def _stored_provenances(results, chapter: str, cells):
    """``(state, provenance)`` of every cell of ``cells`` stored at full scale under
    ``<results>/<chapter>/cells`` (the provenance only for ``"done"`` cells, else ``None``); a
    provenance that is not an object raises :class:`ResultFileError` naming the file."""
    folder = (Path(results) if results is not None else results_dir()) / chapter / "cells"
    for cell in cells:
        state = stored_state(folder, cell, "full")
        prov = load_cell(folder, cell.name, scale="full")["provenance"] if state == "done" else None
        if state == "done" and not isinstance(prov, dict):
            raise ResultFileError(
                f"corrupt result file {cell_path(folder, cell.name)}: "
                "the provenance is not an object"
            )
        if state != "missing":
            yield state, prov


def _plan(chapter: str, keep=lambda name: True) -> list:
    """The cells of ``chapter``'s full-scale plan whose names ``keep`` accepts."""
    from lengthgen.chapters import chapter_module

    return [c for c in chapter_module(chapter).cells("full") if keep(c.name)]


def chapter_cost(chapter: str, results: str | os.PathLike | None = None, cells=None) -> dict:
    """One row of :func:`cost_table` for ``chapter`` over ``results`` (default ``results/``) and
    the plan ``cells`` (default the chapter's full plan)."""
    check_choice("chapter", chapter, CHAPTERS)
    cells = _plan(chapter) if cells is None else cells
    row = dict.fromkeys(FIELDS, 0) | {"chapter": chapter, "planned": len(cells)}
    row |= {"refresh_max_diff": None, "projection_upper_bound": False, "machines": {}}
    row |= dict.fromkeys(("wall_s", "cpu_s"), 0.0)
    unknown_wall = 0.0
    for state, prov in _stored_provenances(results, chapter, cells):
        if state != "done":
            row["stale"] += 1
            continue
        row["stored"] += 1
        wall, cpu = _num(prov.get("wall_time_s")) or 0.0, _num(prov.get("cpu_time_s"))
        row["wall_s"] += wall
        if cpu is not None:
            row["cpu_recorded"] += 1
            row["cpu_s"] += cpu
        else:
            row["cpu_unknown"] += 1
            unknown_wall += wall
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
#: Per-unit CPU costs measured for issue 17 (``time.process_time``, one process, one torch thread);
#: ``after_cpu_s`` ``None`` where the chapter's code did not change. Chapter 3: training CPU s/step
#: × 2000 steps plus evaluation, measured over 60 steps per tier × group (a group: (RoPE + 4 × NoPE)
#: / 5), before and after the decoder's fused kernels and contiguous RoPE (``lengthgen.nn``); full
#: re-runs with them gave identical accuracies (1L1H rope) and one flipped position of 5120 (2L4H
#: rope). Chapter 2: the Table 2 cells' recorded or re-measured CPU s. Chapter 1: the Fig. 4 cell
#: ``first_training`` re-run in full (the same test accuracies as the stored cell).
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
#: One core's float32 matrix-product rate at chapter 3's shapes (``scripts/matmul_rate.py``, GFLOP/s
#: of process CPU time, four runs on 2026-11-30 beside two other jobs). :func:`ch3_matmul_bound`
#: uses the fastest, so the products' share it gives is not overstated by the choice of rate.
MATMUL_RATE = {
    "gflops": 86.2,
    "range": (68.1, 86.2),
    "run_medians": (72.5, 78.5, 70.1, 81.2),
    "how": "scripts/matmul_rate.py: torch.bmm, float32, one thread, one layer's products at the "
    "study's shapes, process CPU time, 2026-11-30, two other single-threaded jobs running",
}
#: The issue's targets (wall seconds on two free cores) and the units each covers.
TARGETS = {
    "ch3": ("chapter 3 study (all 150 groups)", 2 * 3600),
    "ch2": ("chapter 2 Table 2 (all N, models, 20 seeds)", 30 * 60),
    "ch1": ("chapter 1 Fig. 4 study (2 arms, 4 lengths, 20 seeds)", 5 * 60),
    "total": ("every full-scale reproduction", 6 * 3600),
}
#: The stored cells each target covers (shell patterns over full-scale cell names): the same cells
#: as the :data:`MEASURED` units of each chapter.
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


def _in_study(chapter: str):
    return lambda name: any(fnmatch(name, pat) for pat in TARGET_CELLS[chapter])


def ch3_matmul_bound(
    scale: str = "full", results: str | os.PathLike | None = None, *, stored: dict | None = None
) -> dict:
    """Chapter 3's trained study at ``scale`` split into its matrix products (counted from the
    protocol, :func:`lengthgen.chapters.ch3.experiments.study_matmul_flops`, at
    :data:`MATMUL_RATE`) and the rest, and the factor by which the rest would have to shrink for
    the 2 h target on two workers. At full scale the study's CPU cost is what its stored groups
    record once all have it (``stored``: a :func:`stored_projection` already read), else the
    measured units; below full scale the last five keys are ``None``. Book page "What a
    reproduction costs", "What bounds chapter 3"."""
    from lengthgen.chapters.ch3.experiments import study_matmul_flops

    flops = study_matmul_flops(scale)["total"]
    cpu = flops / (MATMUL_RATE["gflops"] * 1e9)
    out = {
        "tflop": round(flops / 1e12, 1),
        "gflops": MATMUL_RATE["gflops"],
        "cpu_s": round(cpu, 1),
        "two_worker_s": round(cpu / 2, 1),
    }
    out |= dict.fromkeys(
        ("study_cpu_s", "study_basis", "other_cpu_s", "other_budget_s", "shrink_needed")
    )
    if scale == "full":
        stored = stored_projection("ch3", results) if stored is None else stored
        if stored["projection_s"] is not None:
            study, basis = stored["cpu_s"], "stored cells"
        else:
            study = sum(u["total_after_cpu_s"] for u in measured_units("ch3"))
            basis = "measured units"
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
    """:func:`ch3_matmul_bound` (over ``results/`` when ``bound`` is ``None``) in two sentences."""
    b = ch3_matmul_bound() if bound is None else bound
    lo, hi = MATMUL_RATE["range"]
    out = (
        f"Chapter 3's study: its matrix products are {b['tflop']:,.0f} TFLOP (counted from the protocol); "
        f"at {b['gflops']:.0f} GFLOP/s, the fastest of one core's measured {lo:.0f}-{hi:.0f} GFLOP/s at these "
        f"shapes, they take {b['cpu_s'] / 3600:.1f} h of CPU, {fmt_seconds(b['two_worker_s'])} on two workers."
    )
    if b["shrink_needed"] is not None:
        stored = b["study_basis"] == "stored cells"
        source = "recorded by its stored groups" if stored else "measured (per-unit costs)"
        out += (
            f" Of the study's {b['study_cpu_s'] / 3600:.1f} CPU hours ({source}) the other "
            f"{b['other_cpu_s'] / 3600:.1f} (layer norms, activations, softmax, copies, the optimizer) would "
            f"have to fit in {b['other_budget_s'] / 3600:.1f} for 2 h on two workers: "
            f"{b['shrink_needed']:.1f} times less."
        )
    return out


def measured_units(chapter: str) -> list[dict]:
    """The :data:`MEASURED` units of ``chapter`` with their study totals (CPU s, before and after)."""
    out = []
    for u in MEASURED["units"]:
        if u["chapter"] == chapter:
            b = u["before_cpu_s"]
            a = b if u["after_cpu_s"] is None else u["after_cpu_s"]
            out.append(
                u
                | {
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
    return round(max(sum(v * c for v, c in vals) / 2, max(v for v, _ in vals)), 1)


def stored_projection(chapter: str, results: str | os.PathLike | None = None) -> dict:
    """The two-worker wall time of the cells a target covers (:data:`TARGET_CELLS`) from the CPU
    time their stored provenance records: ``{"cells", "with_cpu", "cpu_s", "longest_cpu_s",
    "projection_s"}``, ``projection_s`` as :func:`_two_workers` (perfect packing, so slightly
    optimistic) and ``None`` unless every covered cell has its CPU time."""
    check_choice("chapter with a speed target", chapter, tuple(TARGET_CELLS))
    cells = _plan(chapter, _in_study(chapter))
    cpu = [
        c
        for _, prov in _stored_provenances(results, chapter, cells)
        if prov is not None and (c := _num(prov.get("cpu_time_s"))) is not None
    ]
    complete = bool(cells) and len(cpu) == len(cells)
    return {
        "cells": len(cells),
        "with_cpu": len(cpu),
        "cpu_s": round(sum(cpu), 1),
        "longest_cpu_s": round(max(cpu), 1) if cpu else None,
        "projection_s": (
            _two_workers([{"cpu": c, "count": 1} for c in cpu], "cpu") if complete else None
        ),
    }


def _target(chapter: str, before, after, **more) -> dict:
    name, target = TARGETS[chapter]
    return {
        "chapter": chapter,
        "target": name,
        "target_s": target,
        "projection_before_s": before,
        "projection_after_s": after,
        **more,
    }


def speed_targets(rows: list[dict], results=None) -> list[dict]:
    """Issue 17's targets (two workers on two cores) against the projections.

    Per chapter with a target: the projections before and after from :data:`MEASURED`, and
    ``stored`` (:func:`stored_projection`; skipped with ``results=False``); ``met`` judges the
    stored projection once every covered cell has its CPU time (``basis`` "stored cells"), else
    the measured one. The whole book (not with ``results=False``): the other chapters' 2-core
    projections of ``rows`` plus chapter 3's outside its study, plus the study's projection as
    judged above; ``uncounted_cells`` (planned, not stored) leave a projection under the target
    open (``met`` None), and one over it fails only if it is not an upper bound."""
    out = []
    for ch in ("ch3", "ch2", "ch1"):
        units = measured_units(ch)
        after = _two_workers(units, "after_cpu_s")
        stored = None if results is False else stored_projection(ch, results)
        if stored and stored["projection_s"] is not None:
            basis, proj = "stored cells", stored["projection_s"]
        else:
            basis, proj = "measured units", after
        before = _two_workers(units, "before_cpu_s")
        met = None if proj is None else proj <= TARGETS[ch][1]
        out.append(_target(ch, before, after, stored=stored, basis=basis, met=met))
    chapters = [r for r in rows if r["chapter"] != "total"]
    if results is False or not {r["chapter"] for r in chapters} >= set(CHAPTERS):
        return out
    t3 = out[0]
    study = (
        t3["stored"]["projection_s"] if t3["basis"] == "stored cells" else t3["projection_after_s"]
    )
    ch3_rest = chapter_cost("ch3", results, cells=_plan("ch3", lambda n: not _in_study("ch3")(n)))
    others = [r for r in chapters if r["chapter"] != "ch3"] + [ch3_rest]
    upper = any(r["projection_upper_bound"] for r in others)
    uncounted = sum(r["planned"] - r["stored"] for r in others)
    total = met = None
    if study is not None:
        total = round(sum(r["projection_2core_s"] for r in others) + study, 1)
        met = _book_verdict(total, TARGETS["total"][1], upper, uncounted)
    more = {"upper_bound": upper, "uncounted_cells": uncounted, "basis": t3["basis"], "met": met}
    return out + [_target("total", None, total, **more)]


def _book_verdict(total: float, target: float, upper: bool, uncounted: int) -> bool | None:
    """Whether the whole-book projection meets its target: over it fails unless only an upper
    bound; under it meets it once every planned cell is counted (missing cells can only add)."""
    if total > target:
        return None if upper else False
    return None if uncounted else True


def cost_table(chapters=None, results: str | os.PathLike | None = None) -> list[dict]:
    """:func:`chapter_cost` rows for ``chapters`` (default all) and a ``"total"`` row summing them;
    every row carries the speed ``targets`` that concern it, every chapter row its
    ``measured_units``, the total row ``ch3_bound`` (``None`` without chapter 3)."""
    chapters = (
        [chapters]
        if isinstance(chapters, str)
        else list(CHAPTERS if chapters is None else chapters)
    )
    rows = [chapter_cost(ch, results) for ch in chapters]
    total = {"chapter": "total"}
    for k in FIELDS[1:]:
        vals = [r[k] for r in rows]
        if k == "projection_upper_bound":
            total[k] = any(vals)
        elif k == "refresh_max_diff":
            total[k] = max((v for v in vals if v is not None), default=None)
        else:
            total[k] = round(sum(vals), 3) if k.endswith("_s") else sum(vals)
    total["machines"] = {}
    for r in rows:
        for label, n in r["machines"].items():
            total["machines"][label] = total["machines"].get(label, 0) + n
    targets = speed_targets(rows, results)
    for r in rows:
        r["measured_units"] = measured_units(r["chapter"])
        r["targets"] = [t for t in targets if t["chapter"] == r["chapter"]]
    total["targets"] = [t for t in targets if t["chapter"] == "total"]
    total["ch3_bound"] = (
        ch3_matmul_bound(results=results, stored=targets[0]["stored"])
        if "ch3" in chapters
        else None
    )
    return rows + [total]


# --------------------------------------------------------------------------- text and page
def fmt_seconds(s: float) -> str:
    """``45 s``, ``12 min``, ``3.4 h``."""
    if s < 120:
        return f"{s:.0f} s"
    return f"{s / 60:.0f} min" if s < 2 * 3600 else f"{s / 3600:.1f} h"


def _fmt(s) -> str:
    return "—" if s is None else fmt_seconds(s)


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
UNIT_HEADERS = ("chapter", "unit", "count", "CPU before", "CPU after")
TARGET_HEADERS = (
    "target (two workers on two cores)",
    "target",
    "projected before",
    "projected after",
    "from stored cells",
    "",
)


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


def _pipe_table(head, body: list[list[str]], left: int) -> list[str]:
    """A MyST pipe table whose first ``left`` columns are left-aligned, the others right."""
    align = "|" + "|".join([":--"] * left + ["--:"] * (len(head) - left)) + "|"
    lines = ["| " + " | ".join(line) + " |" for line in [list(head), *body]]
    return lines[:1] + [align] + lines[1:]


def _refresh_lines(rows: list[dict]) -> list[str]:
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


def _machine_lines(rows: list[dict]) -> list[str]:
    """One sentence per chapter naming the machines its stored cells ran on
    (:func:`lengthgen.store.machine_label`)."""
    out = []
    for r in rows:
        if r["chapter"] != "total" and r.get("machines"):
            parts = [
                f"{'not recorded (stored before machines were)' if k == '—' else k} × {n}"
                for k, n in sorted(r["machines"].items(), key=lambda kv: (kv[0] == "—", kv[0]))
            ]
            out.append(f"{r['chapter']} machines: " + "; ".join(parts) + ".")
    return out


def _verdict(t: dict) -> str:
    """Whether a speed target is met, in words, with what it was judged on."""
    if t["met"] is None:
        if t["projection_after_s"] is None:
            return "not measured"
        why = [f"{t['uncounted_cells']} cells not stored"] if t.get("uncounted_cells") else []
        return "open: " + ", ".join(why + ["upper bound"] * bool(t.get("upper_bound")))
    met = "met" if t["met"] else "not met"
    if not t.get("basis"):
        return met
    on = "chapter 3's study from " if t["chapter"] == "total" else ""
    return f"{met} ({on}{t['basis']})"


def _speed_tables(rows: list[dict]):
    """``[(UNIT_HEADERS, unit rows), (TARGET_HEADERS, target rows)]`` of ``rows``."""
    sec = lambda v: "—" if v is None else f"{v:,.0f} s"  # noqa: E731
    units = [
        [u["chapter"], u["unit"], str(u["count"]), sec(u["before_cpu_s"])]
        + [sec(u["after_cpu_s"]) + ("" if u["changed"] else " (code unchanged)")]
        for r in rows
        for u in r.get("measured_units", [])
    ]
    targets = []
    for r in rows:
        for t in r.get("targets", []):
            st, stored = t.get("stored"), ""
            if st:
                cells = f"{st['with_cpu']}/{st['cells']} cells"
                stored = (
                    f"— ({cells} with CPU time)"
                    if st["projection_s"] is None
                    else f"{_fmt(st['projection_s'])} ({cells})"
                )
            targets.append(
                [t["target"], "≤ " + fmt_seconds(t["target_s"]), _fmt(t["projection_before_s"])]
                + [("≤ " if t.get("upper_bound") else "") + _fmt(t["projection_after_s"])]
                + [stored, _verdict(t)]
            )
    return [(UNIT_HEADERS, units), (TARGET_HEADERS, targets)]


def _bound_lines(rows: list[dict]) -> list[str]:
    """:func:`bound_line` of the chapter-3 bound that :func:`cost_table` put in the total row."""
    return [
        bound_line(r["ch3_bound"]) for r in rows if r["chapter"] == "total" and r.get("ch3_bound")
    ]


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
    out += _refresh_lines(rows) + _machine_lines(rows)
    tables = _speed_tables(rows)
    if any(body for _, body in tables):
        out += [
            "",
            f"Measured per-unit CPU cost (issue 17; {MEASURED['date']}, {MEASURED['method']}; "
            f"{MEASURED['machine']}):",
        ]
        for head, body in tables:
            out += text_table(head, body) + [""] if body else []
        out += _bound_lines(rows)
    return "\n".join(out)


def cost_markdown(results: str | os.PathLike | None = None) -> str:
    """The generated table of ``book/cost.md``: a MyST pipe table, a note, and the measured unit
    costs and speed targets as two more tables."""
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
    out = [*_pipe_table([page for _, page in COLUMNS], body, left=1), ""]
    note = " ".join([note, *_refresh_lines(rows)]) + " " + " ".join(_machine_lines(rows))
    out += [note, "", "### Measured unit costs and the speed targets", ""]
    for head, body in _speed_tables(rows):
        out += _pipe_table(head, [[c.replace("|", "/") for c in line] for line in body], 2) + [""]
    out.append(f"Measured {MEASURED['date']} with {MEASURED['method']} on {MEASURED['machine']}.")
    return "\n".join(out + ["", *_bound_lines(rows), ""])
