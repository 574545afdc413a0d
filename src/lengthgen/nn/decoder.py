"""A small decoder-only transformer (chapters 3 and 4): :class:`Decoder`, an ensemble model of
:mod:`lengthgen.engine.train` hand-batched over members (Han, Chai & Wang 2026, App. C): token
embedding, pre-LN blocks of causal multi-head attention and an MLP, a final LN and an untied
read-out; PyTorch's default initialisation. ``kernels="fused"`` uses ``F.layer_norm`` and one
``baddbmm`` per linear map; ``"reference"`` is the hand-written form that trained the stored
chapter-3 study; both compute the same function (``tests/test_speed_paths.py``)."""

from __future__ import annotations

import math
from typing import Sequence

import torch
import torch.nn.functional as F

from lengthgen.nn.attention import attend, causal_mask
from lengthgen.config import ConfigError, check_choice, check_finite, check_positive_int
from lengthgen.config import check_seeds
from lengthgen.nn import positional as pe

ACTIVATIONS = ("gelu", "relu", "sine")
#: Depth tiers of chapter 3 (§6): name → (layers, heads).
TIERS = {"1L1H": (1, 1), "2L4H": (2, 4), "4L4H": (4, 4)}
#: the decoder's kernels: ``fused`` (torch.nn.functional's layer norm and attention) or ``reference``
KERNELS = ("fused", "reference")


def _layer_norm(x, g, b, eps: float = 1e-5):
    """Reference layer norm ``(x − mean) / √(var + ε) · g + b`` (biased variance)."""
    mu = x.mean(-1, keepdim=True)
    var = x.var(-1, keepdim=True, unbiased=False)
    return (x - mu) / torch.sqrt(var + eps) * g + b


def _layer_norm_fused(x, g, b, eps: float = 1e-5):
    """The same layer norm through :func:`torch.nn.functional.layer_norm`, then gain and bias."""
    return torch.addcmul(b, F.layer_norm(x, x.shape[-1:], eps=eps), g)


def _linear(x, W, b, fused: bool):
    """``x W + b`` per member (``x [E, ..., d_in]``): one ``baddbmm`` if ``fused``, else the
    reference einsum and add."""
    if not fused:
        if x.dim() == 4:
            return torch.einsum("ebnd,edf->ebnf", x, W) + b[:, None, None]
        return torch.einsum("e...d,edf->e...f", x, W) + _bcast(b, x[..., :1])
    E, d = x.shape[0], x.shape[-1]
    out = torch.baddbmm(b.unsqueeze(1), x.reshape(E, -1, d), W)
    return out.view(*x.shape[:-1], W.shape[-1])


def _bcast(p, x):
    """Reshape a per-member tensor ``[E, *s]`` to broadcast against ``x [E, ..., *s]``."""
    return p.reshape(p.shape[0], *([1] * (x.dim() - p.dim())), *p.shape[1:])


class Decoder:
    """Pre-LN decoder-only transformer batched over E members (module docstring); ``L0`` rows
    of a learned-absolute table, ``base`` and ``rope_scale`` for the sinusoidal and rotary
    encodings, ``n_out`` outputs (default ``vocab``)."""

    def __init__(
        self,
        encoding: str = "rope",
        *,
        n_layers: int = 1,
        n_heads: int = 1,
        d_model: int = 64,
        vocab: int = 12,
        mlp_ratio: int = 4,
        activation: str = "gelu",
        L0: int = 20,
        base: float = 1e4,
        rope_scale: float = 1.0,
        n_out: int | None = None,
        kernels: str = "fused",
    ):
        self.kernels = check_choice("kernels", kernels, KERNELS)
        self._ln = _layer_norm_fused if kernels == "fused" else _layer_norm
        self.encoding = check_choice("encoding", encoding, pe.ENCODINGS)
        self.n_layers = check_positive_int("n_layers", n_layers)
        self.n_heads = check_positive_int("n_heads", n_heads)
        self.d_model = check_positive_int("d_model", d_model)
        if d_model % n_heads:
            raise ConfigError(f"d_model = {d_model} must be divisible by n_heads = {n_heads}")
        self.d_head = d_model // n_heads
        if encoding == "rope" and self.d_head % 2:
            raise ConfigError(f"RoPE needs an even head width, got d_model/n_heads = {self.d_head}")
        if encoding == "sinusoidal" and d_model % 2:
            raise ConfigError(f"the sinusoidal encoding needs an even d_model, got {d_model}")
        self.vocab = check_positive_int("vocab", vocab, minimum=2)
        self.n_out = self.vocab if n_out is None else check_positive_int("n_out", n_out)
        self.mlp = check_positive_int("mlp_ratio", mlp_ratio) * d_model
        self.activation = check_choice("activation", activation, ACTIVATIONS)
        self._act = {"gelu": F.gelu, "relu": F.relu, "sine": torch.sin}[activation]
        self.L0 = check_positive_int("L0", L0)
        self.base = float(base)
        self.rope_scale = check_finite("rope_scale", rope_scale)

    @classmethod
    def tier(cls, name: str, encoding: str, **kw) -> "Decoder":
        """The chapter-3 depth tier ``name`` (``1L1H``, ``2L4H``, ``4L4H``) with ``encoding``."""
        layers, heads = TIERS[check_choice("tier", name, tuple(TIERS))]
        return cls(encoding, n_layers=layers, n_heads=heads, **kw)

    def param_shapes(self) -> dict[str, tuple]:
        """Name → per-member shape of every parameter."""
        d, m, o = self.d_model, self.mlp, self.n_out
        shapes = {"tok_emb": (self.vocab, d)}
        if self.encoding == "learned_abs":
            shapes["pos_emb"] = (self.L0, d)
        attn = dict(ln1_g=(d,), ln1_b=(d,), wqkv=(d, 3 * d), bqkv=(3 * d,), wo=(d, d), bo=(d,))
        mlp = dict(ln2_g=(d,), ln2_b=(d,), w1=(d, m), b1=(m,), w2=(m, d), b2=(d,))
        for l in range(self.n_layers):
            shapes.update({f"l{l}.{k}": shape for k, shape in {**attn, **mlp}.items()})
        return shapes | {"lnf_g": (d,), "lnf_b": (d,), "w_out": (d, o), "b_out": (o,)}

    def matmul_flops(self, batch: int, n: int, *, backward: bool = True) -> int:
        """FLOPs of one member's matrix products over ``batch`` sequences of length ``n`` (forward;
        times 3 with ``backward``), as book page "What a reproduction costs" counts them."""
        batch, n = check_positive_int("batch", batch), check_positive_int("n", n)
        if not isinstance(backward, bool):
            raise ConfigError(f"backward must be True or False, got {backward!r}")
        d, m = self.d_model, self.mlp
        per_pos = self.n_layers * 2 * (4 * d * d + 2 * d * m + 2 * n * d) + 2 * d * self.n_out
        return per_pos * batch * n * (3 if backward else 1)

    def init(self, seeds: Sequence[int], dtype=torch.float32, device=None):
        """Per-member initial parameters ``{name: [E, ...]}``, member e from ``torch.Generator(seeds[e])``."""
        shapes = self.param_shapes()
        members = {k: [] for k in shapes}
        for s in check_seeds(seeds):
            g = torch.Generator().manual_seed(s)
            for name, shape in shapes.items():
                leaf = name.split(".")[-1]
                if leaf in ("tok_emb", "pos_emb"):
                    t = torch.randn(shape, generator=g, dtype=torch.float64)
                elif leaf.endswith("_g"):
                    t = torch.ones(shape, dtype=torch.float64)
                elif leaf.startswith("ln") or leaf == "lnf_b":
                    t = torch.zeros(shape, dtype=torch.float64)
                else:  # linear weight or bias: U(-1/sqrt(fan_in), 1/sqrt(fan_in)) as nn.Linear
                    fan_in = self.mlp if leaf in ("w2", "b2") else self.d_model
                    bound = 1.0 / math.sqrt(fan_in)
                    t = (torch.rand(shape, generator=g, dtype=torch.float64) * 2 - 1) * bound
                members[name].append(t)
        return {k: torch.stack(v).to(dtype=dtype, device=device) for k, v in members.items()}

    def embed(self, params, x):
        """Token (+ additive position) embedding ``[E, B, n, d]``."""
        E, B, n = x.shape
        emb, ids = params["tok_emb"], x[..., None].expand(E, B, n, self.d_model).long()
        h = torch.gather(emb[:, None].expand(E, B, *emb.shape[1:]), 2, ids)
        if self.encoding == "sinusoidal":
            h = h + pe.sinusoidal_table(n, self.d_model, self.base, dtype=h.dtype).to(h.device)
        elif self.encoding == "learned_abs":
            pos = pe.clamped_positions(n, self.L0, device=h.device)
            h = h + params["pos_emb"][:, pos][:, None]  # [E, 1, n, d]
        return h

    def _block(self, params, l, h):
        """Pre-LN block ``l``: causal multi-head attention, then the MLP, each added to ``h``."""
        E, B, n, d = h.shape
        H, dh = self.n_heads, self.d_head
        p, fused = f"l{l}.", self.kernels == "fused"
        z = self._ln(h, _bcast(params[p + "ln1_g"], h), _bcast(params[p + "ln1_b"], h))
        qkv = _linear(z, params[p + "wqkv"], params[p + "bqkv"], fused)
        # q, k, v: [E, B, H, n, dh]
        q, k, v = (t.reshape(E, B, n, H, dh).transpose(2, 3) for t in qkv.split(d, dim=-1))
        if self.encoding == "rope":
            q, k = (pe.rope_rotate(t, self.base, self.rope_scale) for t in (q, k))
        alibi = self.encoding == "alibi"
        bias = pe.alibi_bias(n, H, dtype=z.dtype, device=z.device) if alibi else None
        mask = causal_mask(n, device=z.device)
        out = attend(q, k, v, scale=1 / math.sqrt(dh), bias=bias, mask=mask)
        out = out.transpose(2, 3).reshape(E, B, n, d)
        h = h + _linear(out, params[p + "wo"], params[p + "bo"], fused)
        z = self._ln(h, _bcast(params[p + "ln2_g"], h), _bcast(params[p + "ln2_b"], h))
        z = self._act(_linear(z, params[p + "w1"], params[p + "b1"], fused))
        if fused:
            return h + _linear(z, params[p + "w2"], params[p + "b2"], True)
        zw = torch.einsum("ebnf,efd->ebnd", z, params[p + "w2"])
        return h + zw + params[p + "b2"][:, None, None]  # the reference order: (h + z W2) + b2

    def forward(self, params: dict[str, torch.Tensor], x: torch.Tensor) -> torch.Tensor:
        """Logits ``[E, B, n, n_out]`` for token ids ``x [E, B, n]`` (causal: position i sees 0 … i)."""
        if getattr(x, "dtype", None) not in (torch.int64, torch.int32) or x.dim() != 3:
            got = f"{getattr(x, 'shape', type(x).__name__)} {getattr(x, 'dtype', '')}"
            raise ValueError(f"x must be an integer tensor [E, B, n] of token ids, got {got}")
        if x.shape[0] != (E := params["tok_emb"].shape[0]):
            raise ValueError(f"x has {x.shape[0]} members, params have {E}")
        if x.numel() and (int(x.min()) < 0 or int(x.max()) >= self.vocab):
            raise ValueError(
                f"token ids must lie in [0, {self.vocab}), got range [{int(x.min())}, {int(x.max())}]"
            )
        h = self.embed(params, x)
        for l in range(self.n_layers):
            h = self._block(params, l, h)
        h = self._ln(h, _bcast(params["lnf_g"], h), _bcast(params["lnf_b"], h))
        return _linear(h, params["w_out"], params["b_out"], self.kernels == "fused")

    __call__ = forward
