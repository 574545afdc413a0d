"""Chapter 1's secondary studies (lengthgen.chapters.ch1.studies): the maths against brute force on
small sizes, the probe against the encoder on real strings, and every bad-input path."""

import pytest
import torch

from lengthgen.chapters.ch1 import constructions as C
from lengthgen.chapters.ch1 import experiments as ch1
from lengthgen.chapters.ch1 import measures
from lengthgen.chapters.ch1 import studies as S
from lengthgen.chapters.ch1 import training
from lengthgen.config import ConfigError
from lengthgen.nn.tasks import all_strings, random_strings


#: float64 results of O(1) size computed two ways (a few dozen operations each): they agree to a few
#: hundred units in the last place on any CPU or BLAS; 4,096 ulps of 1 (≈ 9e-13) leaves room for
#: reordered sums while staying far below any modelling difference the tests look for
F64_TOL = 4096 * torch.finfo(torch.float64).eps


@pytest.mark.parametrize("relu", [False, True])
def test_ffnn_parity_brute_force(relu):
    for n in range(1, 11):
        bits = all_strings(n)
        s = S.ffnn_parity_logits(bits, relu=relu)
        odd = (bits.sum(-1) % 2).to(torch.float64)
        assert torch.equal(s, odd - 0.5)  # exactly ±1/2, the sign of the parity


def test_ffnn_exactness_small():
    r = S.ffnn_exactness(relu=True, n_exhaustive=5)
    assert r["exhaustive_min_acc"] == 1.0 and set(r["random_acc"]) == {100, 1000}
    assert r["min_abs_logit"] == r["max_abs_logit"] == 0.5


@pytest.mark.parametrize("eps", [0.0, 1e-5, 0.1])
def test_ln_bound_matches_encoder(eps):
    """|logit| with paired layer norm is |s| / √((1 + ε)(1 + s²)/5 + ε²), s the logit without it."""
    bits = torch.cat(
        [
            all_strings(4),
            random_strings(20, 30, generator=torch.Generator().manual_seed(0))[:, :4],
        ]
    )
    enc0, p0 = C.first_log_scaled()
    enc1, p1 = C.first_log_scaled(layer_norm=True, eps=eps)
    s, y = enc0(p0, bits)[0], enc1(p1, bits)[0]
    want = s / torch.sqrt((1 + eps) * (1 + s**2) / 5 + eps**2)
    assert torch.allclose(y, want, rtol=0, atol=F64_TOL)
    assert S.ln_logit_bound(eps) == pytest.approx(
        0.25 / ((1 + eps) * (1 + 1 / 16) / 5 + eps**2) ** 0.5, rel=1e-15
    )


def test_outvote_profile_flawed_construction():
    """On the flawed FIRST transformer (§5.2) the probe's error is the closed-form binomial tail."""
    enc, p = C.first_log_scaled(log_scaled=False)
    for n in (2, 10, 200):
        pr = S.outvote_profile(enc, p, n)
        assert pr["exact_error"][0] == pytest.approx(
            float(measures.flawed_first_error(2.0, n)), abs=1e-12
        )
        assert pr["balanced_correct"] == [True] and pr["rest_pushes_up"] == [True]
    assert S.outvote_profile(enc, p, 10)["flip_distance"] == [4.5]
    assert S.outvote_profile(enc, p, 3)["flip_distance"] == [None]


def test_probe_equals_encoder_on_strings():
    enc = training.first_model([False, True])
    params = enc.init([3, 4], dtype=torch.float64)
    n = 7
    bits = random_strings(40, n, generator=torch.Generator().manual_seed(1))
    probe = enc(params, S._probe_inputs(n))
    idx = bits[:, 0] * n + bits[:, 1:].sum(-1)
    assert torch.allclose(enc(params, bits), probe[:, idx], rtol=0, atol=F64_TOL)


def test_counts_on_fake_cells():
    cell = {
        "members": [{"log_scaled": ls} for ls in (False, False, False, True)],
        "test_acc": [1.0, 0.5, 0.7, 0.6],
        "balanced_correct": [True, True, False, True],
    }
    assert S.mechanism_counts(cell) == {"failed_runs": 2, "outvoted": 1}
    grid = {
        "settings": [
            {"depth": 2, "lr": 3e-4, "log_scaled": False},
            {"depth": 4, "lr": 1e-3, "log_scaled": True},
        ],
        "setting": [0, 0, 1, 1],
        "test_acc": [0.5, 0.6, 0.4, 0.5],
    }
    rows = S.grid_means(grid)
    assert [r["reported"] for r in rows] == [True, False]
    assert [r["mean_acc"] for r in rows] == pytest.approx([0.55, 0.45])


def test_parity_grid_tiny_and_deterministic():
    kw = dict(
        depths=[1],
        lrs=[1e-3, 3e-4],
        log_scaled=[False, True],
        runs=2,
        epochs=1,
        steps_per_epoch=2,
        n=5,
        test_strings=3,
        seed=0,
        seed_offsets={"data": 20_000, "test": 299_000},
    )
    a, b = S.train_parity_grid(**kw), S.train_parity_grid(**kw)
    assert a["test_acc"] == b["test_acc"] and len(a["settings"]) == 4
    assert a["setting"] == [0, 0, 1, 1, 2, 2, 3, 3]
    # the default members of train_parity_runs are the reported setting, run by run
    one = ch1.train_parity(runs=2, epochs=1, steps_per_epoch=2, n=5, test_strings=3)
    same = S.train_parity_grid(**{**kw, "depths": [2], "lrs": [3e-4], "log_scaled": [False]})
    assert one["test_acc"] == same["test_acc"]


def test_bad_input():
    with pytest.raises(ConfigError, match="eps"):
        S.ln_logit_bound(-1.0)
    with pytest.raises(ConfigError, match="learning rates"):
        S.train_parity_grid(lrs=[], runs=1)
    with pytest.raises(ConfigError, match="learning rates"):
        S.train_parity_grid(lrs=[-1e-3], runs=1)
    enc, p = C.first_log_scaled(log_scaled=False)
    with pytest.raises(ConfigError, match="n"):
        S.outvote_profile(enc, p, 1)
    with pytest.raises(ConfigError, match="probe_n"):
        ch1.first_mechanism(probe_n=0)
