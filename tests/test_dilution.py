import math

import numpy as np
import pytest

from lengthgen.chapters.ch0 import experiments as ch0


def test_hand_computed():
    # N = 1: the only position gets everything
    assert ch0.favoured_weight(3.0, 1) == 1.0
    # c = 0: uniform
    assert ch0.favoured_weight(0.0, 4) == pytest.approx(0.25)
    # c = log 3, N = 4: e^c = 3 = N - 1 -> 1/2
    assert ch0.favoured_weight(math.log(3), 4) == pytest.approx(0.5)
    # log-scaled, c = 1: N / (2N - 1)
    assert ch0.favoured_weight(1.0, 10, log_scaled=True) == pytest.approx(10 / 19)


@pytest.mark.parametrize("N", list(range(1, 13)) + [1000, 100_000])
@pytest.mark.parametrize("log_scaled", [False, True])
def test_closed_form_matches_softmax(N, log_scaled):
    for c in (-1.0, 0.0, 0.5, 1.0, 2.5, 7.0):
        assert ch0.softmax_weight(c, N, log_scaled=log_scaled) == pytest.approx(
            float(ch0.favoured_weight(c, N, log_scaled=log_scaled)),
            abs=N * np.finfo(float).eps,
        )
    # (a float64 sum over N terms carries a rounding error of order N * eps)


def test_advantage_needed_inverts_weight():
    N = np.array([2, 10, 1000])
    for log_scaled in (False, True):
        c = ch0.advantage_needed(N, 0.7, log_scaled=log_scaled)
        np.testing.assert_allclose(ch0.favoured_weight(c, N, log_scaled=log_scaled), 0.7)


def test_bad_input():
    for bad in (0, -3, 2.5):
        with pytest.raises(ValueError, match="N must be"):
            ch0.favoured_weight(1.0, bad)
    with pytest.raises(ValueError, match="N must be"):
        ch0.softmax_weight(1.0, 0)
    with pytest.raises(ValueError, match="probability"):
        ch0.advantage_needed(10, 1.5)
    with pytest.raises(ValueError, match="strictly"):
        ch0.advantage_needed(10, 1.0)
    with pytest.raises(ValueError, match="finite"):
        ch0.softmax_weight(float("inf"), 3)
