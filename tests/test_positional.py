"""Chapter 3 feature maps and the decoder's positional encodings: shapes, constraints, bad input."""

import math

import pytest
import torch

from lengthgen.config import ConfigError
from lengthgen.nn.positional import (
    ENCODINGS,
    KernelFamily,
    alibi_bias,
    alibi_slopes,
    clamped_positions,
    feature_map,
    frequencies,
    monotone_range,
    rope_rotate,
    sinusoidal_table,
    theta_min,
)


@pytest.mark.parametrize(
    "enc,m",
    [("nope", 1), ("alibi", 2), ("learned_abs", 20), ("sinusoidal", 32), ("rope", 32)],
)
def test_feature_shapes(enc, m):
    Phi = feature_map(enc, 37)
    assert Phi.shape == (37, m) == (37, KernelFamily(enc).m)
    assert Phi.dtype == torch.float64


def test_learned_abs_is_clamped_one_hot():
    Phi = feature_map("learned_abs", 30, L0=20)
    assert torch.equal(Phi[:20], torch.eye(20, dtype=torch.float64))
    assert all(torch.equal(Phi[i], Phi[19]) for i in range(20, 30))
    assert clamped_positions(25, 20).tolist() == list(range(20)) + [19] * 5


def test_frequencies_and_theta_min():
    th = frequencies(16, 1e4)
    assert th[0] == 1.0 and torch.all(th[1:] < th[:-1])
    assert math.isclose(theta_min(), 1e4 ** (-15 / 16)) and abs(theta_min() - 1.78e-4) < 1e-6
    assert monotone_range() == 8833


def test_sinusoidal_features_are_cos_sin_pairs():
    Phi = feature_map("sinusoidal", 5, num_freq=3, base=100.0)
    th = frequencies(3, 100.0)
    assert torch.allclose(Phi[4, 0::2], torch.cos(4 * th)) and torch.allclose(
        Phi[4, 1::2], torch.sin(4 * th)
    )
    assert torch.allclose(
        sinusoidal_table(5, 6, base=100.0**1).double(),
        feature_map("sinusoidal", 5, num_freq=3, base=100.0),
        atol=1e-6,
    )


@pytest.mark.parametrize("enc", ["rope", "alibi"])
def test_relative_families_give_toeplitz_kernels(enc):
    fam = KernelFamily(enc)
    coef = torch.randn(fam.n_coef, dtype=torch.float64, generator=torch.Generator().manual_seed(1))
    fam.project(coef)
    W = fam.W(coef)
    Phi = fam.features(25)
    P = Phi @ W @ Phi.T
    d = torch.arange(25)[:, None] - torch.arange(25)[None, :]
    assert torch.allclose(P, fam.kappa(coef, d), atol=1e-9)


def test_alibi_slope_constraint():
    fam = KernelFamily("alibi")
    c = torch.tensor([0.3, 2.0], dtype=torch.float64)
    fam.project(c)
    assert c[1] == 0.0
    assert torch.equal(fam.W(c), torch.tensor([[0.3, 0.0], [0.0, 0.0]], dtype=torch.float64))


def test_rope_rotation_is_relative():
    g = torch.Generator().manual_seed(0)
    q, k = torch.randn(1, 16, generator=g), torch.randn(1, 16, generator=g)
    Q, K = rope_rotate(q.expand(12, 16).clone()), rope_rotate(k.expand(12, 16).clone())
    S = Q @ K.T
    assert torch.allclose(S[5, 2], S[9, 6], atol=1e-5) and torch.allclose(
        S[3, 3], S[11, 11], atol=1e-5
    )


def test_alibi_bias_shape_and_sign():
    b = alibi_bias(6, 4)
    assert b.shape == (4, 6, 6)
    assert torch.all(alibi_slopes(4) > 0) and math.isclose(float(alibi_slopes(1)[0]), 2**-8)
    assert torch.all(b[:, 5, :5] < 0) and torch.all(torch.diagonal(b, dim1=1, dim2=2) == 0)


def test_bad_inputs():
    with pytest.raises(ConfigError, match="unknown encoding 'rotary'"):
        feature_map("rotary", 5)
    with pytest.raises(ConfigError):
        KernelFamily("xpos")
    with pytest.raises(ConfigError):
        feature_map("rope", 0)
    with pytest.raises(ConfigError):
        frequencies(4, base=1.0)
    with pytest.raises(ConfigError):
        sinusoidal_table(4, 7)
    with pytest.raises(ConfigError):
        rope_rotate(torch.zeros(3, 5))
    with pytest.raises(ValueError):
        KernelFamily("rope").W(torch.zeros(5))
    with pytest.raises(ValueError, match="not relative"):
        KernelFamily("sinusoidal").kappa(torch.zeros(1024), torch.arange(3))
    assert set(ENCODINGS) == {"nope", "sinusoidal", "learned_abs", "rope", "alibi"}
