"""Chapter 4's learning-theory helpers (:mod:`lengthgen.chapters.ch4.sweeps`) against brute force
on small sizes, and their bad-input paths."""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import pytest
import torch

from lengthgen.chapters.ch4 import sweeps as T
from lengthgen.chapters.ch4.constructions import construct_relu
from lengthgen.chapters.ch4.data import all_count_vectors, labels_of_counts
from lengthgen.chapters.ch4.training import margins
from lengthgen.config import ConfigError
from lengthgen.stats import loglog_slope


def test_sign_of_sine_is_exact_at_rationals():
    assert [T.sign_sin_pi(Fraction(k, 4)) for k in range(9)] == [
        0,
        1,
        1,
        1,
        0,
        -1,
        -1,
        -1,
        0,
    ]
    assert T.sign_sin_pi(Fraction(-1, 3)) == -1


def test_shattering_frequency_agrees_with_float_sine():
    """The exact sign and math.sin agree on every labelling of 6 points (float error ≪ the
    distance 2^−N·π of every a·x from a zero of the sine)."""
    for ys in itertools.product((-1, 1), repeat=6):
        a = math.pi * float(T.shatter_frequency(ys))
        assert [1 if math.sin(a * 2**i) > 0 else -1 for i in range(6)] == list(ys)
    assert T.shattered_labellings(7) == 2**7


@pytest.mark.parametrize("labels", [[], [0, 1], [1, 2]])
def test_bad_labels_raise(labels):
    with pytest.raises(ConfigError):
        T.shatter_frequency(labels)


def test_sum_representatives_cover_every_sum_at_length_m():
    x = T.sum_representatives(4, 5)
    assert x.sum(1).tolist() == [4] * 17
    assert (x * torch.arange(5)).sum(1).tolist() == list(range(17))


@pytest.mark.parametrize("m,p", [(3, 3), (4, 5), (6, 3)])
def test_interpolant_margin_equals_the_minimum_over_all_of_X_m(m, p):
    net, X = construct_relu(m, p), all_count_vectors(m, p)
    brute = float(margins(net.scores(X), labels_of_counts(X, p)).min())
    assert T.relu_interpolant_margins(p, [m])[0]["margin"] == pytest.approx(brute, abs=1e-9)


def test_slope_growth_tells_exponential_from_power_law():
    ms = [8, 16, 32, 64]
    exp_rows = [{"m": m, "normalized": math.exp(-0.05 * m)} for m in ms]
    pow_rows = [{"m": m, "normalized": m**-1.0} for m in ms]
    assert T.slope_growth(exp_rows) == pytest.approx(2.0)
    assert T.slope_growth(pow_rows) == pytest.approx(1.0)
    with pytest.raises(ConfigError):
        T.slope_growth([{"m": m, "normalized": 1.0} for m in (8, 16, 24)])


def test_samples_needed_interpolates_in_log_n():
    rows = [
        {"p": 5, "width": 4, "n": n, "seed": s, "test_acc": a}
        for n, a in ((10, 0.5), (40, 1.0))
        for s in (0, 1)
    ]
    assert T.samples_needed(rows, 5, 4, 0.75) == pytest.approx(20.0)
    assert T.samples_needed(rows, 5, 4, 0.4) == 10.0
    assert T.samples_needed(rows, 5, 4, 1.01) is None


def test_loglog_slope_recovers_a_power_and_rejects_too_few_points():
    slope, lo, hi = loglog_slope([2, 4, 8, 16], [3 * x**1.5 for x in (2, 4, 8, 16)])
    assert slope == pytest.approx(1.5) and hi - lo == pytest.approx(0, abs=1e-9)
    with pytest.raises(ValueError):
        loglog_slope([1, 2], [1, 2])
