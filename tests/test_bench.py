"""The benchmark runs, reports the agreed keys, and the ensemble and the loop agree (tiny step count)."""

import json

import pytest
import torch

from lengthgen.benchmarks import (
    CHAPTER_ROWS,
    AttentionClassifier,
    _pool,
    bench_text,
    make_sampler,
    run_chapter_benchmark,
)
from lengthgen.cli import main
from lengthgen.config import ConfigError
from lengthgen.engine.train import seeded_generators

ROW_KEYS = (
    "name",
    "members",
    "ensemble_updates_per_s",
    "loop_updates_per_s",
    "ratio",
    "max_abs_loss_diff",
)


def test_toy_row_equal_losses():
    res = run_chapter_benchmark("toy", size="tiny")
    (row,) = res["rows"]
    assert row["members"] == 3 and "attention classifier" in row["model"]
    assert row["max_abs_loss_diff"] < 1e-10 and res["peak_rss_mb"] > 0
    assert torch.get_num_threads() == 1  # restored
    json.dumps(res)


def test_cli_bench_json(capsys):
    assert main(["bench", "--json", "--steps", "1"]) == 0
    res = json.loads(capsys.readouterr().out)
    assert [r["name"] for r in res["rows"]] == list(CHAPTER_ROWS)
    for row in res["rows"]:
        assert set(ROW_KEYS) <= set(row) and row["steps"] == 1
    assert res["ratio"] == sorted(r["ratio"] for r in res["rows"])[len(res["rows"]) // 2]
    assert main(["bench", "--steps", "0"]) == 2
    assert "steps must be an integer >= 1" in capsys.readouterr().err


def test_chapter_rows_keys_and_equal_losses():
    """Every chapter's row on tiny sizes: the agreed keys, and the ensemble and the per-member loop
    (its own leaves and torch.optim optimiser) end with the same training losses (float noise only:
    float64 rows to 1e-12, float32 rows to 1e-5; ch4's loop runs torch.optim.Muon's bfloat16
    Newton-Schulz against the chapter's float32 one). No speed is asserted."""
    res = run_chapter_benchmark(size="tiny")
    assert torch.get_num_threads() == 1
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
    ratios = sorted(r["ratio"] for r in res["rows"])
    assert res["ratio"] == ratios[len(ratios) // 2]
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


def _tol(ref):
    """Between the errors the comparison must tell apart: float64 rounding of two evaluation orders
    (about 1e-15 of the values' scale on any CPU or BLAS) and a masking or batching fault (order 1
    of that scale); 1e-9 of the scale, at least 1e-9 absolute, leaves six orders either way."""
    return 1e-9 * max(1.0, float(ref.abs().max()))


def test_model_and_sampler():
    model = AttentionClassifier(max_len=9)
    params = model.init([1, 2], torch.float64)
    sample = make_sampler(batch=5, max_len=9)
    (bits, mask, scale), y = sample(0, seeded_generators([3, 4]))
    assert bits.shape[:2] == (2, 5) and torch.equal(y, bits[:, :, 0].long())
    assert torch.equal(mask.sum(1), torch.exp(scale).round().long())  # scale = log(length)
    assert float((bits * ~mask[:, None, :]).abs().sum()) == 0.0  # padding bits are 0
    out = model.forward(params, (bits, mask, scale))
    for e in range(2):  # member e alone, at its own length, gives the same logits
        one = {k: v[e : e + 1] for k, v in params.items()}
        n = int(mask[e].sum())
        ref = model.forward(one, (bits[e : e + 1, :, :n], mask[e : e + 1, :n], scale[e : e + 1]))
        torch.testing.assert_close(out[e], ref[0], rtol=0, atol=_tol(ref))


def test_factored_pooling_is_the_softmax_pooling():
    """``_pool`` (one matrix product) against the softmax over [E, B, n] scores written out."""
    g = torch.Generator().manual_seed(0)
    rand = lambda *shape: torch.randn(*shape, generator=g, dtype=torch.float64)  # noqa: E731
    bits = torch.randint(0, 2, (2, 5, 9), generator=g).double()
    base, c, E0, dE, Pn = rand(2, 9), rand(2), rand(2, 4), rand(2, 4), rand(2, 9, 4)
    base[:, -2:] = float("-inf")  # padding, as the model masks it
    a = torch.softmax(base[:, None, :] + bits * c[:, None, None], -1)
    ref = E0[:, None] + (a * bits).sum(-1)[..., None] * dE[:, None] + a @ Pn
    torch.testing.assert_close(_pool(bits, base, c, E0, dE, Pn), ref, rtol=0, atol=_tol(ref))


def test_bad_benchmark_arguments():
    with pytest.raises(ConfigError, match="rows must be a non-empty list"):
        run_chapter_benchmark([], size="tiny")
