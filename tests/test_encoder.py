"""The chapter-1 encoder: a hand-computed 3-position example, agreement with torch.nn, batching, bad input."""

import math

import pytest
import torch

from lengthgen.config import ConfigError
from lengthgen.chapters.ch1.encoder import (
    Encoder,
    EncoderConfig,
    accuracy,
    cross_entropy_bits,
    param_shapes,
    positional_features,
)


def tiny(layer_norm=False, log_scaled=False):
    """d = 2, one layer, one head: the model of the hand computation below."""
    cfg = EncoderConfig(
        d_model=2,
        n_layers=1,
        n_heads=1,
        d_head=1,
        d_ffn=1,
        layer_norm=layer_norm,
        eps=0.0,
        log_scaled=log_scaled,
        positional="first",
        pos_map=((1.0, 0.0),),
    )
    enc = Encoder(cfg)
    p = enc.zeros(1)
    p["embed"][0] = torch.tensor([[1.0, 0.0], [0.0, 1.0], [0.0, 0.0]])  # symbol 0, symbol 1, CLS
    p["bq"][0, 0, 0, 0] = 1.0  # q = 1 everywhere
    p["wk"][0, 0, 0, 0, 0] = 1.0  # k_i = x_i[0]
    p["wv"][0, 0, 0, 1, 0] = 1.0  # v_i = x_i[1]
    p["wo"][0, 0, 0, 0, 1] = 1.0  # head output → coordinate 1
    p["w1"][0, 0, 1, 0] = -1.0  # hidden = ReLU(1 − h[1])
    p["b1"][0, 0, 0] = 1.0
    p["w2"][0, 0, 0, 0] = 1.0  # → coordinate 0
    p["out_w"][0] = torch.tensor([1.0, 2.0])
    p["out_b"][0] = -1.0
    return enc, p


def test_hand_computed_three_positions():
    # w = "01": x_0 = CLS = (0, 0), x_1 = e(0) + 1[i=1] e_0 = (2, 0), x_2 = e(1) = (0, 1).
    # keys (0, 2, 0), q = 1 → weights (1, e², 1) / (2 + e²); values (0, 0, 1) → t = 1 / (2 + e²)
    # h_0 = (0, t); FFN adds ReLU(1 − t) to coordinate 0 → z_0 = (1 − t, t); s = (1 − t) + 2t − 1 = t
    enc, p = tiny()
    tr = enc.trace(p, torch.tensor([[0, 1]]))
    e2 = math.exp(2.0)
    t = 1.0 / (2.0 + e2)
    assert torch.allclose(
        tr["attention"][0][0, 0, 0],
        torch.tensor([1.0, e2, 1.0], dtype=torch.float64) / (2 + e2),
    )
    assert torch.allclose(tr["cls"][0, 0], torch.tensor([1 - t, t], dtype=torch.float64))
    assert abs(float(tr["logit"][0, 0]) - t) < 1e-15
    # log-length scaling: logits × log 3 → weights (1, 9, 1) / 11, s = 1/11
    enc, p = tiny(log_scaled=True)
    assert abs(float(enc(p, torch.tensor([[0, 1]]))[0, 0]) - 1 / 11) < 1e-15
    # layer norm with ε = 0: h_0 = (0, t) → (−1, 1); FFN adds ReLU(1 − 1) = 0; z_0 = (−1, 1); s = −1 + 2 − 1 = 0
    enc, p = tiny(layer_norm=True)
    p["out_b"][0] = 0.0
    assert abs(float(enc(p, torch.tensor([[0, 1]]))[0, 0]) - 1.0) < 1e-12


def test_positional_features():
    f = positional_features("parity", 5)
    assert torch.equal(f[:, 0], torch.arange(5, dtype=torch.float64) / 5)
    assert torch.equal(f[:, 1], torch.tensor([1.0, -1, 1, -1, 1], dtype=torch.float64))
    assert torch.equal(
        positional_features("first", 4)[:, 0],
        torch.tensor([0.0, 1, 0, 0], dtype=torch.float64),
    )


def _torch_reference(enc: Encoder, p: dict, e: int, bits: torch.Tensor) -> torch.Tensor:
    """The same network built from torch.nn.TransformerEncoderLayer (post-norm, ReLU, no dropout)."""
    cfg = enc.config
    d, H, k = cfg.d_model, cfg.n_heads, cfg.head_dim
    outs = []
    layers = []
    for l in range(cfg.n_layers):
        layer = torch.nn.TransformerEncoderLayer(
            d,
            H,
            cfg.d_ffn,
            dropout=0.0,
            batch_first=True,
            layer_norm_eps=cfg.eps,
            dtype=torch.float64,
        )
        with torch.no_grad():
            w_in = torch.cat(
                [p[n][e, l].transpose(-1, -2).reshape(H * k, d) for n in ("wq", "wk", "wv")]
            )
            layer.self_attn.in_proj_weight.copy_(w_in)
            layer.self_attn.in_proj_bias.copy_(
                torch.cat([p[n][e, l].reshape(-1) for n in ("bq", "bk", "bv")])
            )
            layer.self_attn.out_proj.weight.copy_(p["wo"][e, l].reshape(H * k, d).T)
            layer.self_attn.out_proj.bias.copy_(p["bo"][e, l])
            layer.linear1.weight.copy_(p["w1"][e, l].T)
            layer.linear1.bias.copy_(p["b1"][e, l])
            layer.linear2.weight.copy_(p["w2"][e, l].T)
            layer.linear2.bias.copy_(p["b2"][e, l])
            for i in (1, 2):
                getattr(layer, f"norm{i}").weight.copy_(p[f"ln{i}_g"][e, l])
                getattr(layer, f"norm{i}").bias.copy_(p[f"ln{i}_b"][e, l])
        layers.append(layer.eval())
    with torch.no_grad():
        pe = {k_: v[e : e + 1] for k_, v in p.items()}
        inp = enc._prepare(pe, bits)
        x = enc.embed(pe, inp.tokens, inp.feats)[0]
        for layer in layers:
            x = layer(x)
        outs = x[:, 0] @ p["out_w"][e] + p["out_b"][e]
    return outs


def test_matches_torch_transformer_encoder_layer():
    cfg = EncoderConfig(
        d_model=8,
        n_layers=2,
        n_heads=2,
        d_ffn=16,
        layer_norm=True,
        eps=1e-5,
        positional="parity",
    )
    enc = Encoder(cfg)
    p = enc.init([3, 4], dtype=torch.float64)
    bits = torch.randint(0, 2, (5, 7), generator=torch.Generator().manual_seed(0))
    ours = enc(p, bits)
    for e in range(2):
        assert torch.allclose(ours[e], _torch_reference(enc, p, e, bits), atol=1e-12)


def test_init_is_per_seed_and_layers_start_equal():
    enc = Encoder(EncoderConfig(d_model=16, n_heads=1, d_ffn=64))
    a, b = enc.init([0, 1]), enc.init([1])
    assert torch.equal(a["w1"][1], b["w1"][0]) and not torch.equal(a["w1"][0], a["w1"][1])
    assert torch.equal(a["wq"][0, 0], a["wq"][0, 1])  # nn.TransformerEncoder clones one layer
    bound = math.sqrt(6 / (16 + 48))
    assert float(a["wq"].abs().max()) <= bound and float(a["bq"].abs().max()) == 0.0
    assert a["embed"].dtype == torch.float32 and set(a) == set(param_shapes(enc.config))


def test_members_are_independent_and_per_member_scaling():
    cfg = EncoderConfig(d_model=8, n_layers=2, n_heads=1, d_ffn=16, log_scaled=(False, True))
    enc = Encoder(cfg)
    p = enc.init([5, 5], dtype=torch.float64)
    bits = torch.randint(0, 2, (2, 4, 9), generator=torch.Generator().manual_seed(1))
    out = enc(p, bits)
    for e, flag in enumerate((False, True)):
        single = Encoder(EncoderConfig(d_model=8, n_layers=2, n_heads=1, d_ffn=16, log_scaled=flag))
        ref = single({k: v[e : e + 1] for k, v in p.items()}, bits[e])
        assert torch.allclose(out[e], ref[0], atol=1e-12)
    assert not torch.allclose(out[0], out[1])


def test_fast_paths_and_chunking_agree_with_general_path():
    from lengthgen.chapters.ch1 import constructions as C

    enc, p = C.parity(layer_norm=True, eps=1e-5)
    bits = torch.randint(0, 2, (6, 11), generator=torch.Generator().manual_seed(2))
    with torch.no_grad():
        fast = enc(p, bits)
        chunked = enc(p, bits, max_elements=1)
    slow = enc({k: v.clone().requires_grad_(True) for k, v in p.items()}, bits).detach()
    assert torch.allclose(fast, slow, atol=1e-12) and torch.allclose(fast, chunked, atol=1e-14)


def test_gradients_flow():
    enc = Encoder(EncoderConfig(d_model=8, n_heads=2, d_ffn=16, log_scaled=True))
    p = {k: v.requires_grad_(True) for k, v in enc.init([0]).items()}
    loss = cross_entropy_bits(enc(p, torch.randint(0, 2, (3, 5))), torch.tensor([0, 1, 1])).mean()
    loss.backward()
    assert all(v.grad is not None for v in p.values())


def test_metrics():
    s = torch.tensor([2.0, -1.0, 0.0])
    y = torch.tensor([1, 0, 1])
    assert float(accuracy(s, y)) == pytest.approx(2 / 3)
    assert torch.allclose(
        cross_entropy_bits(s, y),
        torch.tensor([math.log2(1 + math.exp(-2)), math.log2(1 + math.exp(-1)), 1.0]),
    )


def test_bad_inputs():
    enc, p = tiny()
    with pytest.raises(ValueError, match="non-empty"):
        enc(p, torch.zeros(2, 0, dtype=torch.long))
    with pytest.raises(ValueError, match="binary.*2"):
        enc(p, torch.tensor([[0, 2, 1]]))
    with pytest.raises(ConfigError, match="eps must be >= 0"):
        EncoderConfig(d_model=4, eps=-1e-5)
    with pytest.raises(ConfigError, match="'rotary'.*first"):
        EncoderConfig(d_model=4, positional="rotary")
    with pytest.raises(ConfigError, match="divisible"):
        EncoderConfig(d_model=5, n_heads=2)
    with pytest.raises(ConfigError, match="log_scaled"):
        EncoderConfig(d_model=4, log_scaled="yes")
    with pytest.raises(ConfigError, match="pos_map"):
        EncoderConfig(d_model=4, positional="first", pos_map=((1.0, 0.0),))
    two = Encoder(EncoderConfig(d_model=4, n_heads=1, d_ffn=4, log_scaled=(True, False)))
    with pytest.raises(ValueError, match="2 flags"):
        two(two.init([0, 1, 2]), torch.tensor([[0, 1]]))
    with pytest.raises(ConfigError, match="seed"):
        two.init([-1])


def test_grouped_positions_equal_full_strings():
    from lengthgen.chapters.ch1.encoder import Grouped

    cfg = EncoderConfig(
        d_model=8,
        n_layers=2,
        n_heads=2,
        d_ffn=16,
        log_scaled=(False, True),
        positional="first",
    )
    enc = Encoder(cfg)
    p = enc.init([0, 1], dtype=torch.float64)
    for n in (1, 2, 7):
        bits = torch.randint(0, 2, (2, 5, n), generator=torch.Generator().manual_seed(n))
        g = enc.group(bits)
        assert isinstance(g, Grouped) and float(g.counts.sum(-1).max()) == n + 1
        assert torch.allclose(enc(p, bits), enc(p, g), atol=1e-12)
        with torch.no_grad():
            assert torch.allclose(enc(p, bits), enc(p, g), atol=1e-12)
    # gradients agree too (training on groups is training on the strings)
    bits = torch.randint(0, 2, (2, 3, 9), generator=torch.Generator().manual_seed(9))
    grads = []
    for x in (bits, enc.group(bits)):
        q = {k: v.clone().requires_grad_(True) for k, v in p.items()}
        enc(q, x).sum().backward()
        grads.append(torch.cat([q[k].grad.flatten() for k in sorted(q)]))
    assert torch.allclose(grads[0], grads[1], atol=1e-10)
    with pytest.raises(ValueError, match="cannot be grouped"):
        Encoder(EncoderConfig(d_model=4, positional="parity")).group(bits)
