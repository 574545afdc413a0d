"""Chapter 1, issue 15: the authors' placement of the log factor, the success-rate cell ``first_rates``
and the refactored FIRST trainer (which must leave ``first_training`` unchanged)."""

import math

import pytest
import torch

from lengthgen.chapters.ch1 import experiments as ch1
from lengthgen.chapters.ch1 import paper, training
from lengthgen.chapters.ch1.encoder import Encoder, EncoderConfig
from lengthgen.config import ConfigError
from lengthgen.nn.tasks import random_strings

SMALL = {
    "lengths": (10, 30),
    "runs": 3,
    "epochs": 2,
    "steps_per_epoch": 20,
    "eval_every_epochs": 1,
    "test_strings": 20,
}


def _cfg(flags, place):
    return EncoderConfig(
        d_model=8,
        n_layers=2,
        n_heads=1,
        d_ffn=16,
        layer_norm=True,
        eps=1e-5,
        log_scaled=flags,
        positional="first",
        log_placement=place,
    )


@pytest.mark.parametrize("grouped", [False, True])
def test_log_placements_equal_a_rescaled_standard_encoder(grouped):
    """At a fixed length N = n + 1, the logit placement equals a standard encoder with W_Q and b_Q
    multiplied by log N, the query placement one with W_Q alone multiplied (the bias unscaled)."""
    n = 37
    enc = Encoder(_cfg((True, True), ("logit", "query")))
    p = enc.init([3, 3], dtype=torch.float64)
    bq = torch.randn(
        p["bq"].shape[1:],
        generator=torch.Generator().manual_seed(1),
        dtype=torch.float64,
    )
    p["bq"] = bq.expand_as(p["bq"]).clone()  # the same query bias in both members
    bits = random_strings(50, n, generator=torch.Generator().manual_seed(2))
    x = enc.group(bits) if grouped else bits
    out = enc(p, x)
    std = Encoder(_cfg(False, "logit"))
    logn = math.log(n + 1)
    one = {k: v[:1].clone() for k, v in p.items()}
    scaled_all = {**one, "wq": one["wq"] * logn, "bq": one["bq"] * logn}
    scaled_w = {**one, "wq": one["wq"] * logn}
    assert torch.allclose(out[0], std(scaled_all, x)[0], atol=1e-10)
    assert torch.allclose(out[1], std(scaled_w, x)[0], atol=1e-10)
    assert not torch.allclose(out[0], out[1], atol=1e-6)  # the bias makes them differ
    # without a query bias the two placements coincide
    p0 = {**p, "bq": torch.zeros_like(p["bq"])}
    o0 = enc(p0, x)
    assert torch.allclose(o0[0], o0[1], atol=1e-10)


def test_log_placement_is_checked():
    with pytest.raises(ConfigError, match="log_placement"):
        _cfg(True, "key")
    with pytest.raises(ConfigError, match="log_placement"):
        _cfg((True, False), ("logit",))


def test_train_first_is_unchanged_by_the_refactor():
    """The refactored trainer gives ``first_training`` the numbers of the code that stored it (values
    recorded with the pre-refactor trainer, commit 7a83db8, on this configuration)."""
    r = ch1.train_first(**SMALL)
    assert r["test_acc"][:6] == [0.35, 0.4, 0.5, 0.4, 0.35, 0.7]
    assert r["train_ce_bits_last_epoch"][:3] == pytest.approx(
        [1.0432276227643225, 1.0107979893766184, 0.9495411851446887], rel=1e-6
    )


def test_first_rates_pairs_arms_and_matches_first_training():
    """Run r of the standard and log-scaled arms of ``first_rates`` trains exactly as run r of
    ``first_training`` (same weights, same strings): the last-epoch training losses agree to float
    noise; the three arms share the seeds."""
    old = ch1.train_first(**SMALL)
    new = ch1.train_first_rates(**SMALL, fit_strings=10)
    assert new["protocol"]["arms"] == list(paper.FIRST_ARMS)
    assert len(new["members"]) == 2 * 3 * 3 and len(new["train_len_acc"]) == 18
    key_old = {
        (m["train_n"], paper.ATTENTION_ARMS[m["log_scaled"]], m["run"]): i
        for i, m in enumerate(old["members"])
    }
    for j, m in enumerate(new["members"]):
        k = (m["train_n"], m["arm"], m["run"])
        if k in key_old:
            assert new["train_ce_bits_last_epoch"][j] == pytest.approx(
                old["train_ce_bits_last_epoch"][key_old[k]], rel=1e-5, abs=1e-7
            )
    assert all(0.0 <= a <= 1.0 for a in new["train_len_acc"])
    shared = training.shared_runs(new, old)  # the claim ch1.first_rates.repeats_first_training
    assert shared["shared_runs"] == 2 * 2 * 3 and shared["verdicts_differ"] == 0
    assert shared["max_rel_diff_train_ce"] <= 1e-5
    # train_first_rates is train_first with the rate arms and the fit on the training length
    assert new["protocol"]["fit_strings"] == 10
    assert new["protocol"]["arm_definitions"]["authors' placement"] == {
        "log_scaled": True,
        "placement": "query",
    }
    by_arm = {
        a: sorted((m["train_n"], m["run"]) for m in new["members"] if m["arm"] == a)
        for a in paper.FIRST_ARMS
    }
    assert len({tuple(v) for v in by_arm.values()}) == 1


def test_first_rates_cell_is_planned():
    full = {c.name: c for c in ch1.cells("full")}["first_rates"]
    assert full.kwargs["runs"] == paper.PROTOCOLS["full"]["rate_runs"] >= 100
    assert full.kwargs["arms"] == list(paper.FIRST_ARMS)
    assert full.kwargs["seed_offsets"] == paper.FIRST_RATE_SEED_OFFSETS
    first = {c.name: c for c in ch1.cells("full")}["first_training"].kwargs
    for k in (
        "lengths",
        "epochs",
        "steps_per_epoch",
        "test_n",
        "test_strings",
        "eval_every_epochs",
        "model",
    ):
        assert full.kwargs[k] == first[k]


def test_clopper_pearson_and_mcnemar():
    from lengthgen.stats import clopper_pearson, mcnemar_exact

    lo, hi = clopper_pearson(20, 20)
    assert hi == 1.0 and lo == pytest.approx(0.025 ** (1 / 20), rel=1e-9)  # (α/2)^(1/n) for k = n
    lo, hi = clopper_pearson(0, 100)
    assert lo == 0.0 and hi == pytest.approx(1 - 0.025 ** (1 / 100), rel=1e-9)
    lo, hi = clopper_pearson(85, 100)
    assert lo < 0.85 < hi
    with pytest.raises(ValueError):
        clopper_pearson(5, 4)
    r = mcnemar_exact([1, 1, 0, 0, 1], [1, 0, 0, 1, 1])
    assert (r["both"], r["only_a"], r["only_b"], r["neither"]) == (2, 1, 1, 1) and r[
        "p_value"
    ] == 1.0
    r = mcnemar_exact([1] * 10 + [0] * 5, [0] * 10 + [0] * 5)
    assert r["only_a"] == 10 and r["p_value"] == pytest.approx(2 * 0.5**10)


def test_success_rates_and_placement_comparison_on_a_toy_result():
    members = [
        {"train_n": n, "arm": a, "run": r}
        for n in (10,)
        for a in ("log-scaled", "authors' placement")
        for r in range(4)
    ]
    acc = [1.0, 1.0, 0.5, 1.0, 1.0, 0.5, 0.5, 1.0]
    ce = [
        1e-4,
        0.02,
        5.0,
        1e-4,
        1e-4,
        5.0,
        5.0,
        1e-4,
    ]  # run 1 of ours: 100% but CE too high
    res = {
        "protocol": {"lengths": [10], "arms": ["log-scaled", "authors' placement"]},
        "members": members,
        "test_acc": acc,
        "test_ce_bits": ce,
        "train_len_acc": [1.0] * 7 + [0.9],
    }
    rows = {r["arm"]: r for r in training.success_rates(res)}
    assert rows["log-scaled"]["perfect"] == 2 and rows["log-scaled"]["rate"] == 0.5
    assert rows["authors' placement"]["perfect"] == 2 and rows["authors' placement"]["unfit"] == 1
    assert rows["log-scaled"]["p_all_20"] == pytest.approx(0.5**20)
    cmp = training.placement_comparison(res)[0]
    assert (cmp["both"], cmp["only_a"], cmp["only_b"], cmp["neither"]) == (2, 0, 0, 2)
    res["members"] = members[:-1] + [{**members[-1], "run": 9}]  # the arms' runs differ
    with pytest.raises(ValueError, match="do not hold the same runs"):
        training.placement_comparison(res)
