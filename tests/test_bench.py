"""The benchmark runs, reports the agreed keys, and the ensemble and the loop agree (tiny step count)."""

import json

import pytest
import torch

from lengthgen.benchmarks import CHAPTER_ROWS, bench_text, run_chapter_benchmark
from lengthgen.cli import main
from lengthgen.config import ConfigError

ROW_KEYS = (
    "name",
    "members",
    "ensemble_updates_per_s",
    "loop_updates_per_s",
    "ratio",
    "max_abs_loss_diff",
)


def test_cli_bench_json(capsys):
    assert main(["bench", "--json", "--steps", "1"]) == 0
    res = json.loads(capsys.readouterr().out)
    assert [r["name"] for r in res["rows"]] == list(CHAPTER_ROWS)
    for row in res["rows"]:
        assert set(ROW_KEYS) <= set(row) and row["steps"] == 1
    mid = sorted(r["ratio"] for r in res["rows"])[1:3]  # four rows: the median is their mean
    assert res["ratio"] == round((mid[0] + mid[1]) / 2, 2)
    assert main(["bench", "--steps", "0"]) == 2
    assert "steps must be an integer >= 1" in capsys.readouterr().err


def test_chapter_rows_keys_and_equal_losses():
    """Every chapter's row on tiny sizes: the agreed keys, and the ensemble and the per-member loop
    (its own leaves and torch.optim optimiser) end with the same training losses (float noise only:
    float64 rows to 1e-12, float32 rows to 1e-5; ch4's loop runs torch.optim.Muon's bfloat16
    Newton-Schulz against the chapter's float32 one). No speed is asserted."""
    res = run_chapter_benchmark(size="tiny")
    assert torch.get_num_threads() == 1 and res["peak_rss_mb"] > 0  # threads restored
    json.dumps(res)
    rows = {r["name"]: r for r in res["rows"]}
    assert list(rows) == list(CHAPTER_ROWS)
    for name, row in rows.items():
        assert set(ROW_KEYS) <= set(row), name
        assert (
            row["members"] >= 2
            and row["ensemble_updates_per_s"] > 0
            and row["loop_updates_per_s"] > 0
        )
        tol = 1e-12 if row["dtype"] == "float64" else 1e-5
        assert row["max_abs_loss_diff"] <= tol, (name, row["max_abs_loss_diff"])
    mid = sorted(r["ratio"] for r in res["rows"])[1:3]  # four rows: the median is their mean
    assert res["ratio"] == round((mid[0] + mid[1]) / 2, 2)
    assert (
        "fused" in rows["ch3_decoder"]["loop_optimizer"]
        or "foreach" in rows["ch3_decoder"]["loop_optimizer"]
    )
    assert "ch3_decoder" in bench_text(res)


def test_chapter_bench_arguments():
    with pytest.raises(ConfigError, match="valid choices"):
        run_chapter_benchmark(["ch9"], size="tiny")
    with pytest.raises(ConfigError, match="valid choices"):
        run_chapter_benchmark(size="huge")
    with pytest.raises(ConfigError, match="steps"):
        run_chapter_benchmark(size="tiny", steps=0)
    one = run_chapter_benchmark("ch2_single_layer", size="tiny", steps=2)
    assert (
        len(one["rows"]) == 1
        and one["rows"][0]["steps"] == 2
        and one["ratio"] == one["rows"][0]["ratio"]
    )


def test_bad_benchmark_arguments():
    with pytest.raises(ConfigError, match="rows must be a non-empty list"):
        run_chapter_benchmark([], size="tiny")
