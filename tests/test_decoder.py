"""The batched decoder of chapters 3–4: shapes, causal masking, encodings, member independence, bad input."""

import pytest
import torch

from lengthgen.config import ConfigError
from lengthgen.nn.decoder import ACTIVATIONS, TIERS, Decoder
from lengthgen.nn.positional import ENCODINGS


def _x(E=2, B=3, n=9, seed=0, vocab=12):
    return torch.randint(0, vocab, (E, B, n), generator=torch.Generator().manual_seed(seed))


@pytest.mark.parametrize("enc", ENCODINGS)
def test_shapes_and_causal_masking(enc):
    m = Decoder(enc, n_layers=2, n_heads=4, d_model=16, L0=6)
    p = m.init([0, 1], dtype=torch.float64)
    x = _x()
    out = m.forward(p, x)
    assert out.shape == (2, 3, 9, 12)
    y = x.clone()
    y[..., 5:] = (y[..., 5:] + 1) % 12  # change the future of position 4
    assert torch.allclose(m.forward(p, y)[..., :5, :], out[..., :5, :], atol=1e-12)


def test_members_are_independent_and_seeded():
    m = Decoder("rope", d_model=16)
    p2 = m.init([5, 7], dtype=torch.float64)
    p1 = m.init([7], dtype=torch.float64)
    assert all(torch.equal(p2[k][1], p1[k][0]) for k in p1)
    x = _x(E=2)
    out2 = m.forward(p2, x)
    out1 = m.forward(p1, x[1:])
    assert torch.allclose(out2[1], out1[0], atol=1e-12)


def test_learned_abs_clamps_positions_beyond_L0():
    m = Decoder("learned_abs", d_model=8, L0=4)
    p = m.init([0], dtype=torch.float64)
    x = torch.zeros(1, 1, 7, dtype=torch.long)
    h = m.embed(p, x)
    assert torch.equal(h[0, 0, 3], h[0, 0, 6]) and not torch.equal(h[0, 0, 2], h[0, 0, 3])
    assert p["pos_emb"].shape == (1, 4, 8)


@pytest.mark.parametrize("act", ACTIVATIONS)
def test_activations_and_tiers(act):
    for name, (layers, heads) in TIERS.items():
        m = Decoder.tier(name, "alibi", activation=act, d_model=16)
        assert (m.n_layers, m.n_heads, m.activation, m.mlp) == (layers, heads, act, 64)
    m = Decoder("nope", d_model=16, activation=act)
    p = m.init([0])
    assert torch.isfinite(m.forward(p, _x(E=1))).all()


def test_gradients_reach_every_parameter():
    m = Decoder("learned_abs", n_layers=2, n_heads=2, d_model=16, L0=9)
    p = {k: v.requires_grad_(True) for k, v in m.init([0, 1]).items()}
    m.forward(p, _x()).sum().backward()
    assert all(v.grad is not None and v.grad.abs().sum() > 0 for v in p.values())


def test_bad_inputs():
    with pytest.raises(ConfigError, match="unknown encoding"):
        Decoder("xpos")
    with pytest.raises(ConfigError, match="unknown activation"):
        Decoder("rope", activation="tanh")
    with pytest.raises(ConfigError, match="divisible"):
        Decoder("rope", d_model=10, n_heads=3)
    with pytest.raises(ConfigError, match="unknown tier"):
        Decoder.tier("8L8H", "rope")
    m = Decoder("rope", d_model=8)
    p = m.init([0])
    with pytest.raises(ValueError, match="token ids"):
        m.forward(p, torch.full((1, 1, 3), 12))
    with pytest.raises(ValueError, match="members"):
        m.forward(p, _x(E=2))
    with pytest.raises(ValueError):
        m.forward(p, torch.zeros(1, 3))
    with pytest.raises(ConfigError):
        m.init([])
