"""``lengthgen.cost`` and ``python -m lengthgen cost``: sums and accounting over a synthetic results tree."""

import json

import pytest

from lengthgen import cli, cost
from lengthgen.chapters import chapter_module
from lengthgen.config import CHAPTERS
from lengthgen.engine import runs
from lengthgen import store
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
    store.write_cell(
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
    store.write_cell(
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
    store.write_cell(
        folder,
        cells["automaton"],
        "full",
        {"x": 3},
        _prov(wall_time_s=100.0, migrated={"from": "old.json", "note": "re-keyed"}),
    )
    stale = runs.Cell("timing", cells["timing"].fn, {**cells["timing"].kwargs, "zzz_other": 1})
    store.write_cell(folder, stale, "full", {"x": 4}, _prov(wall_time_s=999.0, cpu_time_s=999.0))
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
    table = cost.cost_markdown(tree)
    assert table.count("\n| ch") == len(CHAPTERS) and "**total**" in table


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


def test_corrupt_provenance(tree):
    cells = {c.name: c for c in chapter_module("ch1").cells("full")}
    store.write_cell(
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
        cost.chapter_cost("ch1", tree)


def test_refreshed_cells_are_counted(tree):
    """Cells re-run to record their CPU time are counted, with the largest difference they showed."""
    cells = {c.name: c for c in chapter_module("ch4").cells("full")}
    folder = tree / "ch4" / "cells"
    for name, diff in (("bounds", 0.0), ("exhaustive", 2.5e-7)):
        store.write_cell(
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
    store.write_cell(
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
        store.write_cell(folder, c, "full", {"x": 1}, _prov(wall_time_s=9.0, cpu_time_s=8.0))
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
    store.write_cell(
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
