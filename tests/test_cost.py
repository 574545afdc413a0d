"""``lengthgen.cost`` and ``python -m lengthgen cost``: sums and accounting over a synthetic results tree."""

import json

import pytest

from lengthgen import cli, cost
from lengthgen.chapters import chapter_module
from lengthgen.config import CHAPTERS
from lengthgen.engine import runs
from lengthgen.store import ResultFileError, results_dir


def _prov(**kw):
    return {
        "scale": "full",
        "device": "cpu",
        "torch_version": "2.13.0+cpu",
        "date": "2026-11-30T12:00:00+00:00",
        **kw,
    }


@pytest.fixture
def tree(tmp_path, monkeypatch):
    """results/ with ch0's real cell marked migrated (its CPU time removed) and three ch4 cells: one run
    since the runs facility on an idle machine, one on a loaded machine, one migrated; plus one ch4
    cell stored for another configuration (stale)."""
    import json

    root = tmp_path / "results"
    (root / "ch0" / "cells").mkdir(parents=True)
    grid = json.loads((results_dir() / "ch0" / "cells" / "dilution_grid.json").read_text())
    grid["provenance"].pop("cpu_time_s", None)
    grid["provenance"]["migrated"] = {"from": "old.json", "note": "re-keyed"}
    (root / "ch0" / "cells" / "dilution_grid.json").write_text(json.dumps(grid))
    cells = {c.name: c for c in chapter_module("ch4").cells("full")}
    folder = root / "ch4" / "cells"
    runs.write_cell(
        folder,
        cells["bounds"],
        "full",
        {"x": 1},
        _prov(
            wall_time_s=10.0,
            cpu_time_s=18.0,
            threads=2,
            load_avg_start=[0.5, 0.4, 0.3],
            executor="inprocess",
            trained_on=[],
        ),
    )
    runs.write_cell(
        folder,
        cells["exhaustive"],
        "full",
        {"x": 2},
        _prov(
            wall_time_s=30.0,
            cpu_time_s=6.0,
            threads=1,
            load_avg_start=[3.2, 2.0, 1.0],
            executor="process",
            trained_on=["cpu"],
        ),
    )
    runs.write_cell(
        folder,
        cells["automaton"],
        "full",
        {"x": 3},
        _prov(wall_time_s=100.0, migrated={"from": "old.json", "note": "re-keyed"}),
    )
    stale = runs.Cell("timing", cells["timing"].fn, {**cells["timing"].kwargs, "zzz_other": 1})
    runs.write_cell(folder, stale, "full", {"x": 4}, _prov(wall_time_s=999.0, cpu_time_s=999.0))
    monkeypatch.setenv("LENGTHGEN_ROOT", str(tmp_path))
    return root


def test_chapter_sums(tree):
    row = cost.chapter_cost("ch4", tree)
    assert row["planned"] == len(chapter_module("ch4").cells("full"))
    assert row["stored"] == 3 and row["stale"] == 1
    assert row["wall_s"] == pytest.approx(140.0)
    assert row["cpu_s"] == pytest.approx(24.0)
    assert (row["cpu_recorded"], row["cpu_unknown"], row["migrated"]) == (2, 1, 1)
    assert row["loaded"] == 1
    assert row["projection_2core_s"] == pytest.approx(24.0 / 2 + 100.0)
    assert row["projection_upper_bound"] is True


def test_cpu_known_everywhere_is_not_an_upper_bound(tree):
    (tree / "ch4" / "cells" / "automaton.json").unlink()
    row = cost.chapter_cost("ch4", tree)
    assert row["projection_2core_s"] == pytest.approx(12.0)
    assert row["projection_upper_bound"] is False


def test_table_totals(tree):
    rows = cost.cost_table(["ch0", "ch4"], tree)
    assert [r["chapter"] for r in rows] == ["ch0", "ch4", "total"]
    ch0, ch4, tot = rows
    assert ch0["stored"] == 1 and ch0["migrated"] == 1 and ch0["cpu_recorded"] == 0
    for k in (
        "planned",
        "stored",
        "stale",
        "cpu_recorded",
        "cpu_unknown",
        "migrated",
        "loaded",
    ):
        assert tot[k] == ch0[k] + ch4[k]
    assert tot["wall_s"] == pytest.approx(ch0["wall_s"] + 140.0)
    assert tot["projection_upper_bound"] is True
    md = cost.cost_markdown(tree)
    table, speed = md.split("### Measured unit costs and the speed targets")
    assert table.count("\n| ch") == len(CHAPTERS) and "**total**" in table
    assert "| ch3 | 4L4H main group (7 models) | 25 |" in speed and "shared" in speed


def test_missing_chapter_folder_counts_nothing(tree):
    row = cost.chapter_cost("ch2", tree)
    assert row["stored"] == 0 and row["planned"] > 0 and row["wall_s"] == 0


def test_cli_json_and_text(tree, capsys):
    assert cli.main(["cost", "--json", "--chapter", "ch4"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [r["chapter"] for r in rows] == ["ch4", "total"]
    assert rows[0]["cpu_s"] == pytest.approx(24.0) and rows[0]["loaded"] == 1
    assert cli.main(["cost", "--chapter", "ch4"]) == 0
    out = capsys.readouterr().out
    assert "3 / " in out and "upper bound" in out


def test_cli_bad_chapter(capsys):
    with pytest.raises(SystemExit) as exc:
        cli.main(["cost", "--chapter", "ch9"])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert "invalid choice: 'ch9'" in err and "choose from" in err


def test_corrupt_cell_is_one_line_error(tree, capsys):
    (tree / "ch4" / "cells" / "bounds.json").write_text("{not json")
    with pytest.raises(ResultFileError, match="bounds.json"):
        cost.chapter_cost("ch4", tree)
    assert cli.main(["cost", "--chapter", "ch4"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error:") and "bounds.json" in err and "\n" not in err


def test_measured_units_and_targets():
    """Issue 17: the measured unit costs, their study totals and the two-worker projections."""
    ch3 = cost.measured_units("ch3")
    assert len(ch3) == 6 and all(u["changed"] and u["count"] == 25 for u in ch3)
    for u in ch3:
        assert u["total_after_cpu_s"] == pytest.approx(u["after_cpu_s"] * 25)
        assert u["after_cpu_s"] < u["before_cpu_s"]
    ch2 = cost.measured_units("ch2")
    assert ch2 and all(not u["changed"] and u["after_cpu_s"] == u["before_cpu_s"] for u in ch2)
    rows = [
        {
            "chapter": ch,
            "planned": 1,
            "stored": 1,
            "projection_2core_s": 60.0,
            "projection_upper_bound": False,
        }
        for ch in cost.CHAPTERS
    ]
    targets = {t["chapter"]: t for t in cost.speed_targets(rows, results=False)}
    assert set(targets) == {"ch1", "ch2", "ch3"}  # no whole-book row without results
    t3 = targets["ch3"]
    total = sum(u["after_cpu_s"] * u["count"] for u in ch3)
    assert t3["projection_after_s"] == pytest.approx(
        round(max(total / 2, max(u["after_cpu_s"] for u in ch3)), 1)
    )
    assert t3["met"] is (t3["projection_after_s"] <= 2 * 3600)
    assert t3["projection_before_s"] > t3["projection_after_s"]
    assert (
        cost._two_workers([{"x": 100.0, "count": 1}, {"x": 10.0, "count": 1}], "x") == 100.0
    )  # a cell never splits
    assert cost._two_workers([{"x": None, "count": 1}], "x") is None


def test_rows_carry_targets(tree):
    rows = cost.cost_table(results=tree)
    by = {r["chapter"]: r for r in rows}
    assert [t["chapter"] for t in by["ch3"]["targets"]] == ["ch3"] and by["ch3"]["measured_units"]
    book = by["total"]["targets"]
    assert len(book) == 1 and book[0]["target_s"] == 6 * 3600 and book[0]["uncounted_cells"] > 0
    assert book[0]["met"] in (None, False)  # cells are missing from the synthetic tree
    text = cost.cost_text(rows)
    assert (
        "Measured per-unit CPU cost" in text
        and "two workers on two cores" in text
        and "shared" in text
    )
    json.dumps(rows)


def test_stored_projection_from_recorded_cpu(tree):
    """Issue 17: a target is judged on its covered cells' recorded CPU time once all of them have it."""
    cells = {c.name: c for c in chapter_module("ch1").cells("full")}
    folder = tree / "ch1" / "cells"
    empty = cost.stored_projection("ch1", tree)
    assert empty == {
        "cells": 1,
        "with_cpu": 0,
        "cpu_s": 0,
        "longest_cpu_s": None,
        "projection_s": None,
    }
    runs.write_cell(
        folder,
        cells["first_training"],
        "full",
        {"x": 1},
        _prov(wall_time_s=70.0, cpu_time_s=130.0),
    )
    st = cost.stored_projection("ch1", tree)
    assert (
        st["with_cpu"] == 1 and st["projection_s"] == 130.0
    )  # one cell never splits across workers
    t1 = next(
        t
        for t in cost.speed_targets(cost.cost_table(results=tree)[:-1], tree)
        if t["chapter"] == "ch1"
    )
    assert t1["basis"] == "stored cells" and t1["met"] is True and t1["stored"] == st
    # chapter 3: only some groups stored -> no stored projection, the measured units decide
    plan = [c for c in chapter_module("ch3").cells("full") if c.name[:4] in STUDY]
    runs.write_cell(
        tree / "ch3" / "cells",
        plan[0],
        "full",
        {"x": 1},
        _prov(wall_time_s=9.0, cpu_time_s=100.0),
    )
    runs.write_cell(
        tree / "ch3" / "cells",
        plan[1],
        "full",
        {"x": 1},
        _prov(wall_time_s=9.0, cpu_time_s=40.0),
    )
    st3 = cost.stored_projection("ch3", tree)
    assert (st3["cells"], st3["with_cpu"], st3["cpu_s"], st3["longest_cpu_s"]) == (
        len(plan),
        2,
        140.0,
        100.0,
    )
    assert st3["projection_s"] is None
    t3 = next(
        t
        for t in cost.speed_targets(cost.cost_table(results=tree)[:-1], tree)
        if t["chapter"] == "ch3"
    )
    assert t3["basis"] == "measured units" and "2/150 cells with CPU time" in cost.cost_text(
        cost.cost_table(results=tree)
    )
    with pytest.raises(Exception, match="ch4"):
        cost.stored_projection("ch4", tree)


STUDY = ("1L1H", "2L4H", "4L4H")  # the main study's tiers (App. F–H cells apart)


def test_ch3_matmul_bound(tree):
    """The chapter-3 bound is the counted matrix-product work at the recorded rate; the rest of the
    study's CPU comes from its stored groups once all of them record it, else from the measured units."""
    from lengthgen.chapters.ch3.experiments import study_matmul_flops

    b = cost.ch3_matmul_bound("smoke")
    flops = study_matmul_flops("smoke")["total"]
    assert b["cpu_s"] == pytest.approx(flops / (cost.MATMUL_RATE["gflops"] * 1e9), abs=0.05)
    assert b["two_worker_s"] == pytest.approx(b["cpu_s"] / 2, abs=0.1)  # both rounded to 0.1 s
    assert b["shrink_needed"] is None and b["study_basis"] is None  # no study cost below full scale
    assert cost.MATMUL_RATE["gflops"] == max(cost.MATMUL_RATE["range"])  # the fastest measured rate
    full = cost.ch3_matmul_bound(results=tree)  # no ch3 group in the tree
    study = sum(u["after_cpu_s"] * u["count"] for u in cost.measured_units("ch3"))
    assert full["study_basis"] == "measured units" and full["study_cpu_s"] == pytest.approx(
        study, abs=0.1
    )
    assert full["other_cpu_s"] == pytest.approx(study - full["cpu_s"], abs=0.2)
    assert full["other_budget_s"] == pytest.approx(4 * 3600 - full["cpu_s"], abs=0.2)
    assert full["shrink_needed"] == pytest.approx(
        full["other_cpu_s"] / full["other_budget_s"], abs=0.06
    )
    assert "times less" in cost.bound_line(full) and "measured (per-unit costs)" in cost.bound_line(
        full
    )
    rows = cost.cost_table(results=tree)
    assert rows[-1]["ch3_bound"] == full and cost.bound_line(full) in cost.cost_text(rows)
    assert cost.cost_table("ch4", tree)[-1]["ch3_bound"] is None
    plan = [c for c in chapter_module("ch3").cells("full") if c.name[:4] in STUDY]
    for c in plan:
        runs.write_cell(
            tree / "ch3" / "cells",
            c,
            "full",
            {"x": 1},
            _prov(wall_time_s=9.0, cpu_time_s=100.0),
        )
    stored = cost.ch3_matmul_bound(results=tree)
    assert stored["study_basis"] == "stored cells" and stored["study_cpu_s"] == 100.0 * len(plan)
    assert stored["other_cpu_s"] == pytest.approx(100.0 * len(plan) - stored["cpu_s"], abs=0.2)
    assert stored["shrink_needed"] == pytest.approx(
        stored["other_cpu_s"] / stored["other_budget_s"], abs=0.06
    )
    text = cost.cost_text(cost.cost_table(results=tree))
    assert "recorded by its stored groups" in text and "(150/150 cells)" in text


@pytest.mark.parametrize(
    "total,upper,uncounted,verdict",
    [
        (100, False, 0, True),
        (100, True, 0, True),
        (100, False, 3, None),
        (100, True, 3, None),
        (900, False, 0, False),
        (900, True, 0, None),
        (900, False, 3, False),
        (900, True, 3, None),
    ],
)
def test_whole_book_verdict(total, upper, uncounted, verdict):
    """An upper bound under the target meets it; missing cells can only add to a projection."""
    assert cost._book_verdict(total, 500, upper, uncounted) is verdict


def test_stored_projection_corrupt_provenance(tree):
    cells = {c.name: c for c in chapter_module("ch1").cells("full")}
    runs.write_cell(
        tree / "ch1" / "cells",
        cells["first_training"],
        "full",
        {"x": 1},
        _prov(cpu_time_s=1.0),
    )
    path = tree / "ch1" / "cells" / "first_training.json"
    doc = json.loads(path.read_text())
    doc["provenance"] = ["not", "an", "object"]
    path.write_text(json.dumps(doc))
    with pytest.raises(ResultFileError, match="first_training.json"):
        cost.stored_projection("ch1", tree)


def test_refreshed_cells_are_counted(tree):
    """Cells re-run to record their CPU time are counted, with the largest difference they showed."""
    cells = {c.name: c for c in chapter_module("ch4").cells("full")}
    folder = tree / "ch4" / "cells"
    for name, diff in (("bounds", 0.0), ("exhaustive", 2.5e-7)):
        runs.write_cell(
            folder,
            cells[name],
            "full",
            {"x": 1},
            _prov(wall_time_s=5.0, cpu_time_s=4.0, refreshed={"max_abs_difference": diff}),
        )
    row = cost.chapter_cost("ch4", tree)
    assert row["refreshed"] == 2 and row["refresh_max_diff"] == 2.5e-7
    rows = cost.cost_table(results=tree)
    assert rows[-1]["refreshed"] == 2 and rows[-1]["refresh_max_diff"] == 2.5e-7
    assert "ch4: 2 migrated cells re-run to record their CPU time" in cost.cost_text(rows)
    assert "2.5e-07" in cost.cost_markdown(tree)
    runs.write_cell(
        folder,
        cells["bounds"],
        "full",
        {"x": 1},
        _prov(wall_time_s=5.0, cpu_time_s=4.0, refreshed={"max_abs_difference": "inf"}),
    )
    assert cost.chapter_cost("ch4", tree)["refresh_max_diff"] == float("inf")
    assert cost.chapter_cost("ch0", tree)["refresh_max_diff"] is None


def test_notes_only_where_they_apply(tree):
    """The upper-bound and not-stored notes appear while they apply and vanish once every planned
    cell is stored with its CPU time."""
    text, md = cost.cost_text(cost.cost_table("ch4", tree)), cost.cost_markdown(tree)
    assert "≤: an upper bound" in text and "not yet stored" in text
    assert "≤ marks a projection" in md and "not yet stored" in md
    folder = tree / "ch4" / "cells"
    for c in chapter_module("ch4").cells("full"):
        runs.write_cell(folder, c, "full", {"x": 1}, _prov(wall_time_s=9.0, cpu_time_s=8.0))
    rows = cost.cost_table("ch4", tree)
    assert rows[0]["stored"] == rows[0]["planned"] and not rows[0]["projection_upper_bound"]
    text = cost.cost_text(rows)
    assert "upper bound" not in text and "not yet stored" not in text


def test_machines_of_the_stored_cells_are_counted_and_printed(tree):
    m = {
        "cpu_model": "Intel Xeon X",
        "cpu_capability": "AVX512",
        "blas": "mkl",
        "threads": 1,
    }
    cells = {c.name: c for c in chapter_module("ch4").cells("full")}
    runs.write_cell(
        tree / "ch4" / "cells",
        cells["bounds"],
        "full",
        {"x": 1},
        _prov(wall_time_s=10.0, cpu_time_s=18.0, machine=m),
    )
    rows = cost.cost_table(["ch4"], tree)
    assert rows[0]["machines"] == {"Intel Xeon X · AVX512 · mkl · 1 thread": 1, "—": 2}
    assert rows[-1]["machines"] == rows[0]["machines"]
    text = cost.cost_text(rows)
    assert "ch4 machines: Intel Xeon X · AVX512 · mkl · 1 thread × 1; not recorded" in text
