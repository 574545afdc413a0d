"""Issue 17: the optimised paths of the decoder give the numbers of the reference paths.

* layer norm through ``torch.nn.functional.layer_norm`` and linear maps as one ``baddbmm``
  (``Decoder(kernels="fused")``, the default) against the hand-written mean / biased-variance form and
  einsum-then-bias (``kernels="reference"``, what trained the stored chapter-3 study): equal to 1e-12
  in float64, forward and gradients;
* RoPE on contiguous tensors against the pairwise form: equal bit for bit (float32 and float64,
  values and gradients).
"""

import pytest
import torch

from lengthgen.config import ConfigError
from lengthgen.nn.decoder import KERNELS, Decoder, _layer_norm, _layer_norm_fused
from lengthgen.nn.positional import ENCODINGS, rope_rotate, rope_rotate_reference


@pytest.mark.parametrize("shape", [(3, 5, 7, 16), (2, 1, 1, 64), (4, 9, 8)])
@pytest.mark.parametrize("eps", [1e-5, 0.0])
def test_layer_norm_fused_equals_reference_float64(shape, eps):
    g = torch.Generator().manual_seed(1)
    x = (torch.randn(shape, generator=g, dtype=torch.float64) * 3 + 1).requires_grad_(True)
    gain = torch.randn(shape[-1], generator=g, dtype=torch.float64).requires_grad_(True)
    bias = torch.randn(shape[-1], generator=g, dtype=torch.float64).requires_grad_(True)
    w = torch.randn(shape, generator=g, dtype=torch.float64)
    ref = _layer_norm(x, gain, bias, eps)
    new = _layer_norm_fused(x, gain, bias, eps)
    assert (ref - new).abs().max().item() <= 1e-12
    gr = torch.autograd.grad((ref * w).sum(), (x, gain, bias))
    gn = torch.autograd.grad((new * w).sum(), (x, gain, bias))
    for a, b in zip(gr, gn):
        assert (a - b).abs().max().item() <= 1e-12


@pytest.mark.parametrize("encoding", ENCODINGS)
def test_decoder_fused_equals_reference(encoding):
    """Whole decoder (2 layers, 2 heads, 3 members), logits and every parameter's gradient."""
    kw = dict(n_layers=2, n_heads=2, d_model=16, vocab=6, L0=5)
    fused, ref = Decoder(encoding, **kw), Decoder(encoding, kernels="reference", **kw)
    assert fused.kernels == "fused" and ref.kernels == "reference"
    x = torch.randint(0, 6, (3, 4, 9), generator=torch.Generator().manual_seed(2))
    for dtype, tol in ((torch.float64, 1e-12), (torch.float32, 1e-5)):
        p = {k: v.requires_grad_(True) for k, v in fused.init([1, 2, 3], dtype=dtype).items()}
        a, b = fused(p, x), ref(p, x)
        assert (a - b).abs().max().item() <= tol
        ga = torch.autograd.grad(a.square().sum(), list(p.values()))
        gb = torch.autograd.grad(b.square().sum(), list(p.values()))
        for u, v in zip(ga, gb):
            assert (u - v).abs().max().item() <= tol * max(1.0, v.abs().max().item())


def test_decoder_kernels_choice():
    assert KERNELS == ("fused", "reference")
    with pytest.raises(ConfigError, match="valid choices: fused, reference"):
        Decoder("rope", kernels="compiled")


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_rope_contiguous_is_bitwise_the_pairwise_form(dtype):
    g = torch.Generator().manual_seed(3)
    x = torch.randn(2, 3, 4, 11, 8, generator=g, dtype=dtype).requires_grad_(True)
    w = torch.randn(2, 3, 4, 11, 8, generator=g, dtype=dtype)
    a, b = rope_rotate(x), rope_rotate_reference(x)
    assert torch.equal(a, b)
    assert torch.equal(
        torch.autograd.grad((a * w).sum(), x)[0],
        torch.autograd.grad((b * w).sum(), x)[0],
    )
    with pytest.raises(ConfigError, match="even head dimension"):
        rope_rotate_reference(torch.zeros(3, 5))


@pytest.mark.parametrize("tier", ["1L1H", "2L4H"])
@pytest.mark.parametrize("encoding", ENCODINGS)
@pytest.mark.parametrize("kernels", KERNELS)
def test_matmul_flops_equal_torch_flop_counter(tier, encoding, kernels):
    """``Decoder.matmul_flops`` (the per-pass count behind the cost page's chapter-3 figure) equals
    torch's own count of one forward and backward pass, and one forward pass."""
    from torch.utils.flop_counter import FlopCounterMode

    model = Decoder.tier(tier, encoding, L0=6, kernels=kernels)
    E = 3  # members; matmul_flops counts one
    params = {k: v.requires_grad_(True) for k, v in model.init(list(range(E))).items()}
    x = torch.randint(0, 12, (E, 5, 9), generator=torch.Generator().manual_seed(0))
    with FlopCounterMode(display=False) as fc:
        model(params, x).sum().backward()
    assert fc.get_total_flops() == E * model.matmul_flops(5, 9)
    with FlopCounterMode(display=False) as fc, torch.no_grad():
        model(params, x)
    assert fc.get_total_flops() == E * model.matmul_flops(5, 9, backward=False)


@pytest.mark.parametrize("bad", [0, -2, 1.5, "3"])
def test_matmul_flops_bad_input(bad):
    with pytest.raises(ConfigError, match="batch"):
        Decoder().matmul_flops(bad, 4)
    with pytest.raises(ConfigError, match="n"):
        Decoder().matmul_flops(4, bad)
    with pytest.raises(ConfigError, match="backward"):
        Decoder().matmul_flops(4, 4, backward="no")


def test_length_schedule_bad_input():
    from lengthgen.chapters.ch3.training import length_schedule

    for kw, name in (
        ({"steps": -1}, "steps"),
        ({"steps": 5.5}, "steps"),
        ({"steps": 4, "L0": 1}, "L0"),
        ({"steps": 4, "seed": -3}, "seed"),
    ):
        with pytest.raises(ConfigError, match=name):
            length_schedule(**kw)
    sched = length_schedule(500, 20, 3)
    assert int(sched.min()) == 10 and int(sched.max()) == 20
