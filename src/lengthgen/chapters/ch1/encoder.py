"""The CLS-token post-norm transformer encoder of chapter 1 (Chiang & Cholak 2022, §2.2; section
"The encoder"), β = log N for log-length scaled attention (§5.3), layer norm ε may be 0 (§4.2).

Every parameter has a leading member dimension E, so one :class:`Encoder` call evaluates E encoders
(the model interface of :mod:`lengthgen.engine.train`). :meth:`Encoder.zeros` is the canvas of the
hand-set constructions, :meth:`Encoder.group` the exact grouped form of FIRST strings. Two exact
shortcuts: the last layer computes the CLS position only, and without gradients a head with all-zero
keys attends uniformly, so its output is the mean value."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import NamedTuple, Sequence

import torch

from lengthgen.nn.attention import log_length_scale
from lengthgen.config import ConfigError, check_choice, check_finite, check_positive_int
from lengthgen.config import check_seeds
from lengthgen.nn.tasks import check_bits

#: Fixed positional features (what ``pos_features(i, N)`` returns) and their number p.
POSITIONAL = {"first": 1, "parity": 2}
#: Where a log-scaled member's factor log N multiplies (see :class:`EncoderConfig`).
LOG_PLACEMENTS = ("logit", "query")
#: Vocabulary: symbol 0, symbol 1, CLS.
VOCAB = 3
CLS = 2


def positional_features(kind: str, N: int, *, dtype=torch.float64, device=None) -> torch.Tensor:
    """Features ``[N, p]`` of positions 0 … N−1: 1[i = 1] (``first``, §3.3) or i/N, cos(π i)."""
    i = torch.arange(N, dtype=dtype, device=device)
    if kind == "first":
        return (i == 1).to(dtype).unsqueeze(-1)
    # cos(π i) = (−1)^i exactly (torch.cos(π i) would carry rounding error)
    return torch.stack([i / N, 1.0 - 2.0 * (i % 2)], dim=-1)


@dataclass(frozen=True)
class EncoderConfig:
    """Shape and options of an :class:`Encoder`. ``log_scaled`` and ``log_placement``: one for all
    members or one per member; the factor log N multiplies the ``"logit"`` (ours: the whole
    query–key product) or the ``"query"`` input (the authors' code: the query bias is not scaled).
    ``pos_map``: the ``[p, d_model]`` placement of the positional features (default: the identity).
    ``layer_norm`` switches both layer norms, with ε ``eps`` (0 allowed, §4.2)."""

    d_model: int
    n_layers: int = 2
    n_heads: int = 1
    d_head: int | None = None
    d_ffn: int = 64
    layer_norm: bool = True
    eps: float = 1e-5
    log_scaled: bool | tuple = False
    positional: str = "first"
    pos_map: tuple | None = None
    log_placement: str | tuple = "logit"

    def __post_init__(self):
        for name in ("d_model", "n_layers", "n_heads", "d_ffn", "d_head"):
            if getattr(self, name) is not None:
                check_positive_int(name, getattr(self, name))
        if self.d_head is None and self.d_model % self.n_heads:
            raise ConfigError(f"d_model {self.d_model} is not divisible by n_heads {self.n_heads}")
        check_finite("eps", self.eps, nonnegative=True)
        check_choice("positional", self.positional, tuple(POSITIONAL))
        flags, places = self.per_member()
        if not flags or not all(isinstance(f, bool) for f in flags):
            raise ConfigError(f"log_scaled must be bools, got {self.log_scaled!r}")
        sizes = {len(v) for v in (self.log_scaled, self.log_placement) if isinstance(v, tuple)}
        if len(sizes) > 1 or not places or not set(places) <= set(LOG_PLACEMENTS):
            raise ConfigError(
                f"log_placement must be one of {LOG_PLACEMENTS} or a tuple of them, one per "
                f"log_scaled flag; got {self.log_placement!r}"
            )
        p, m = POSITIONAL[self.positional], self.pos_map
        if m is not None and (len(m) != p or any(len(r) != self.d_model for r in m)):
            raise ConfigError(f"pos_map must be a {p} x {self.d_model} nested tuple")

    def per_member(self, members: int = 1) -> tuple[tuple, tuple]:
        """``log_scaled`` and ``log_placement`` as tuples (one value repeated ``members`` times)."""
        flags, places = self.log_scaled, self.log_placement
        flags = flags if isinstance(flags, tuple) else (flags,) * members
        return flags, places if isinstance(places, tuple) else (places,) * members

    @property
    def head_dim(self) -> int:
        return self.d_head if self.d_head is not None else self.d_model // self.n_heads

    def pos_matrix(self, dtype=torch.float64, device=None) -> torch.Tensor:
        """The fixed ``[p, d_model]`` placement of the positional features."""
        p = POSITIONAL[self.positional]
        if self.pos_map is not None:
            return torch.tensor(self.pos_map, dtype=dtype, device=device).reshape(p, self.d_model)
        return torch.eye(p, self.d_model, dtype=dtype, device=device)


def param_shapes(cfg: EncoderConfig) -> dict[str, tuple[int, ...]]:
    """Shapes of every parameter of an encoder with config ``cfg`` (member dimension excluded)."""
    L, H, d, k, f = cfg.n_layers, cfg.n_heads, cfg.d_model, cfg.head_dim, cfg.d_ffn
    shapes = {"embed": (VOCAB, d)}
    for x in "qkv":
        shapes.update({"w" + x: (L, H, d, k), "b" + x: (L, H, k)})
    shapes |= {"wo": (L, H, k, d), "bo": (L, d), "w1": (L, d, f), "b1": (L, f), "w2": (L, f, d)}
    shapes |= {"b2": (L, d), "out_w": (d,), "out_b": ()}
    if cfg.layer_norm:
        shapes |= {"ln1_g": (L, d), "ln1_b": (L, d), "ln2_g": (L, d), "ln2_b": (L, d)}
    return shapes


@dataclass(frozen=True)
class Encoder:
    """A batched CLS-token transformer encoder (see the module docstring)."""

    config: EncoderConfig

    # ------------------------------------------------------------------ parameters
    def zeros(self, members: int = 1, *, dtype=torch.float64, device=None) -> dict:
        """All-zero parameters (layer-norm gains 1) for ``members`` members: the hand-set canvas."""
        shapes = param_shapes(self.config).items()
        p = {k: torch.zeros((members, *s), dtype=dtype, device=device) for k, s in shapes}
        for k in ("ln1_g", "ln2_g") if self.config.layer_norm else ():
            p[k].fill_(1.0)
        return p

    def init(self, seeds: Sequence[int], dtype=torch.float32, device=None) -> dict:
        """PyTorch's default initialisation of ``nn.TransformerEncoder`` (every layer starts from the
        same values, as its deep copies do), member e drawn from a generator seeded ``seeds[e]``."""
        cfg = self.config
        seeds = check_seeds(seeds)
        H, d, k, f = cfg.n_heads, cfg.d_model, cfg.head_dim, cfg.d_ffn
        inner = H * k
        p = self.zeros(len(seeds))  # float64: zero biases, unit layer-norm gains
        for e, s in enumerate(seeds):
            g = torch.Generator().manual_seed(s)

            def u(shape, bound):
                return (torch.rand(shape, generator=g, dtype=torch.float64) * 2 - 1) * bound

            # each assignment fills every layer (a member's layers share their values)
            p["embed"][e] = torch.randn((VOCAB, d), generator=g, dtype=torch.float64)
            w_in = u((3 * inner, d), math.sqrt(6.0 / (d + 3 * inner)))  # rows: q, k, v outputs
            for name, block in zip(("wq", "wk", "wv"), w_in.chunk(3)):
                p[name][e] = block.reshape(H, k, d).transpose(-1, -2)  # [H, d, k]
            p["wo"][e] = u((d, inner), 1 / math.sqrt(inner)).T.reshape(H, k, d)
            p["w1"][e] = u((f, d), 1 / math.sqrt(d)).T
            p["b1"][e] = u((f,), 1 / math.sqrt(d))
            p["w2"][e] = u((d, f), 1 / math.sqrt(f)).T
            p["b2"][e] = u((d,), 1 / math.sqrt(f))
            p["out_w"][e] = u((d,), 1 / math.sqrt(d))
            p["out_b"][e] = u((), 1 / math.sqrt(d))
        return {k_: v.to(dtype=dtype, device=device).contiguous() for k_, v in p.items()}

    def _scales(self, E: int, N, dtype, device):
        """Per-member multipliers ``[E, B or 1]`` of the attention logit (β) and of the query input
        (``None`` if unused): log N for a log-scaled member at its ``log_placement``, else 1."""
        flags, places = self.config.per_member(E)
        if len(flags) != E or len(places) != E:
            raise ValueError(f"{len(flags)} flags, {len(places)} placements for {E} members")
        if isinstance(N, torch.Tensor):
            logn = torch.log(N.to(dtype))
        else:
            logn = torch.full((E, 1), log_length_scale(N), dtype=dtype, device=device)
        one = torch.ones((), dtype=dtype, device=device)
        query = torch.tensor([f and p == "query" for f, p in zip(flags, places)], device=device)
        logit = torch.tensor(flags, device=device) & ~query
        qscale = torch.where(query[:, None], logn, one) if bool(query.any()) else None
        return torch.where(logit[:, None], logn, one), qscale

    # ------------------------------------------------------------------ forward
    def group(self, bits) -> "Grouped":
        """The strings as :func:`grouped`, exact for ``positional`` ``first``: attention over the
        groups adds log(count) to the logits, O(1) per string; ``forward`` accepts it."""
        if self.config.positional == "parity":
            raise ValueError("positional 'parity': every position differs, cannot be grouped")
        bits = check_bits(bits)
        return grouped(bits[..., 0], bits[..., 1:].sum(-1).to(torch.float64), bits.shape[-1])

    def embed(self, params: dict, tokens: torch.Tensor, feats: torch.Tensor) -> torch.Tensor:
        """Input vectors ``[E, B, T, d]`` from tokens ``[E, B, T]`` and features ``[…, T, p]``."""
        emb = params["embed"]
        E = emb.shape[0]
        member = torch.arange(E, device=emb.device).view(E, *([1] * (tokens.ndim - 1)))
        flat = tokens + VOCAB * member  # member e's vocabulary rows in the flattened table
        x = torch.nn.functional.embedding(flat, emb.reshape(E * VOCAB, emb.shape[-1]))
        return x + feats.to(emb.dtype) @ self.config.pos_matrix(dtype=emb.dtype, device=emb.device)

    def _attend(self, P, x, beta, inp: "_Inputs", *, last, want_weights, fast, qscale):
        """Multi-head attention of one layer (``P(name)``: its parameters), output projection and
        bias included; ``last`` computes the CLS query only. Returns (output, CLS attention row)."""
        E, B, T, d = x.shape
        H = self.config.n_heads
        if fast and bool((P("wk") == 0).all()):
            # keys equal at every position → uniform softmax → the head output is the mean value,
            # and by linearity mean(x W_V + b_V) = mean(x) W_V + b_V
            if inp.counts is None:
                xm = x.mean(dim=-2)
                w = torch.full((E, B, H, T), 1.0 / T, dtype=x.dtype, device=x.device)
            else:
                c = inp.counts.to(x.dtype)
                xm = (x * c[..., None]).sum(-2) / inp.N[..., None].to(x.dtype)
                w = (c / inp.N[..., None].to(x.dtype))[:, :, None, :].expand(E, B, H, T)
            v = torch.einsum("ebd,ehdk->ebhk", xm, P("wv")) + P("bv")[:, None]
            a = torch.einsum("ebhk,ehkd->ebd", v, P("wo")) + P("bo")[:, None]
            return a[:, :, None, :], (w if want_weights else None)

        def project(inputs, name):
            out = torch.einsum("ebnd,ehdk->ebhnk", inputs, P("w" + name))
            if name == "q" and qscale is not None:
                # authors' placement: (log N · x) W_Q + b_Q for those members (qscale 1 elsewhere)
                out = out * qscale[:, :, None, None, None]
            return out + P("b" + name)[:, None, :, None, :]

        q = project(x[:, :, :1] if last else x, "q")
        k, v = project(x, "k"), project(x, "v")
        scale = beta[:, :, None, None, None] / math.sqrt(self.config.head_dim)
        logits = (q @ k.transpose(-1, -2)) * scale
        if inp.counts is not None:
            logits = logits + torch.log(inp.counts.to(x.dtype))[:, :, None, None, :]
        att = torch.softmax(logits, dim=-1)
        a = torch.einsum("ebhnk,ehkd->ebnd", att @ v, P("wo")) + P("bo")[:, None, None, :]
        return a, (att[..., 0, :] if want_weights else None)

    def _layer(self, params, l, x, beta, inp: "_Inputs", *, last: bool, **att):
        """One encoder layer (``att``: the options of :meth:`_attend`); same (output, CLS row)."""
        P = lambda name: params[name][:, l]  # noqa: E731
        fast, ln = att["fast"], self.config.layer_norm
        unit = (("ln1_g", 1), ("ln2_g", 1), ("ln1_b", 0), ("ln2_b", 0))
        plain = fast and ln and all(bool((P(n) == v).all()) for n, v in unit)

        def norm(y, i):
            """Layer norm i (ε may be 0), its affine step skipped where it is the identity."""
            if not ln:
                return y
            y = torch.nn.functional.layer_norm(y, y.shape[-1:], eps=self.config.eps)
            g, b = (P(f"ln{i}_{k}")[:, None, None, :] for k in "gb")
            return y if plain else y * g + b

        def bias(y, name):  # skipped where zero for every member (the hand-set constructions)
            return y if fast and bool((P(name) == 0).all()) else y + P(name)[:, None, None, :]

        a, w = self._attend(P, x, beta, inp, last=last, **att)
        h = norm((x[:, :, :1] if last else x) + a, 1)
        hid = bias(torch.einsum("ebnd,edf->ebnf", h, P("w1")), "b1")
        ff = bias(torch.einsum("ebnf,efd->ebnd", torch.relu_(hid), P("w2")), "b2")
        return norm(ff.add_(h) if fast else h + ff, 2), w

    def _prepare(self, params, inp) -> "_Inputs":
        E, dev = params["embed"].shape[0], params["embed"].device
        if isinstance(inp, Grouped):
            if inp.tokens.ndim == 2:
                inp = Grouped(*(t.unsqueeze(0).expand(E, *t.shape) for t in inp))
            tokens, feats, counts = (t.to(dev) for t in inp)
            return _Inputs(tokens, feats, counts, counts.sum(-1))
        bits = check_bits(inp).to(dev)
        bits = bits.unsqueeze(0) if bits.ndim == 1 else bits
        if bits.ndim == 2:
            bits = bits.unsqueeze(0).expand(E, *bits.shape)
        if bits.ndim != 3 or bits.shape[0] != E:
            raise ValueError(f"strings must be [B, n] or [E={E}, B, n], got {tuple(bits.shape)}")
        _, B, n = bits.shape
        tokens = torch.cat([torch.full((E, B, 1), CLS, dtype=torch.long, device=dev), bits], dim=-1)
        dtype = params["embed"].dtype
        feats = positional_features(self.config.positional, n + 1, dtype=dtype, device=dev)
        return _Inputs(tokens, feats, None, n + 1)

    def _run(self, params, inp: "_Inputs", *, want_weights: bool):
        E = inp.tokens.shape[0]
        x = self.embed(params, inp.tokens, inp.feats)
        beta, qscale = self._scales(E, inp.N, x.dtype, x.device)
        fast = not torch.is_grad_enabled() or not any(t.requires_grad for t in params.values())
        opts = {"want_weights": want_weights, "fast": fast, "qscale": qscale}
        weights, L = [], self.config.n_layers
        for l in range(L):
            x, w = self._layer(params, l, x, beta, inp, last=l == L - 1, **opts)
            weights.append(w)
        cls = x[:, :, 0]
        logit = (cls * params["out_w"][:, None, :]).sum(-1) + params["out_b"][:, None]
        return logit, cls, weights

    def forward(self, params: dict, x, *, max_elements: int = 2**22) -> torch.Tensor:
        """CLS logits ``[E, B]`` for strings ``x`` (``[B, n]``, ``[E, B, n]`` or :class:`Grouped`);
        without gradients in chunks of about ``max_elements`` entries per intermediate tensor."""
        inp = self._prepare(params, x)
        E, B, T = inp.tokens.shape
        cfg = self.config
        # widest per-string tensor: attention rows [H, T, T] in a non-last layer whose keys vary,
        # otherwise the hidden states [T, max(d, d_ffn, H·d_head)]
        full = any(bool((params["wk"][:, l] != 0).any()) for l in range(cfg.n_layers - 1))
        heads = cfg.n_heads * max(cfg.head_dim, T if full else 0)
        chunk = max(1, max_elements // max(1, E * T * max(cfg.d_model, cfg.d_ffn, heads)))
        if torch.is_grad_enabled() or chunk >= B:
            return self._run(params, inp, want_weights=False)[0]
        run = lambda i: self._run(params, inp.slice(i, i + chunk), want_weights=False)  # noqa: E731
        return torch.cat([run(i)[0] for i in range(0, B, chunk)], dim=1)

    __call__ = forward

    def trace(self, params: dict, x) -> dict[str, object]:
        """Logits ``[E, B]``, the final CLS vector ``[E, B, d]`` and, per layer, the CLS row of the
        attention weights ``[E, B, H, N]`` (per group for :class:`Grouped` input; for the explorer)."""
        inp = self._prepare(params, x)
        with torch.no_grad():
            logit, cls, weights = self._run(params, inp, want_weights=True)
        return {"logit": logit, "cls": cls, "attention": weights}


class Grouped(NamedTuple):
    """Strings as groups of identical positions: ``tokens`` [(E,) B, T] (group 0 = CLS), positional
    ``features`` [(E,) B, T, p] and multiplicities ``counts`` [(E,) B, T]; see :meth:`Encoder.group`."""

    tokens: torch.Tensor
    features: torch.Tensor
    counts: torch.Tensor


def grouped(first: torch.Tensor, ones_later: torch.Tensor, n: int) -> Grouped:
    """Strings of length ``n`` (first symbols ``first``, k′ = ``ones_later`` later 1s, float64) as
    the groups CLS, first symbol, later 0s, later 1s, counts 1, 1, n − 1 − k′, k′."""
    one, zero = torch.ones_like(ones_later), first * 0
    tokens = torch.stack([zero + CLS, first, zero, zero + 1], dim=-1)
    feats = torch.tensor([[0.0], [1.0], [0.0], [0.0]], dtype=torch.float64, device=first.device)
    counts = torch.stack([one, one, (n - 1) - ones_later, ones_later], dim=-1)
    return Grouped(tokens, feats.expand(*first.shape, 4, 1), counts)


class _Inputs(NamedTuple):
    tokens: torch.Tensor  # [E, B, T]
    feats: torch.Tensor  # [T, p] or [E, B, T, p]
    counts: torch.Tensor | None  # [E, B, T] or None (every position its own group)
    N: object  # int, or [E, B] tensor of position counts

    def slice(self, lo: int, hi: int) -> "_Inputs":
        cut = lambda t: t[:, lo:hi] if t is not None and t.ndim >= 3 else t  # noqa: E731
        N = self.N[:, lo:hi] if isinstance(self.N, torch.Tensor) else self.N
        return _Inputs(self.tokens[:, lo:hi], cut(self.feats), cut(self.counts), N)


# --------------------------------------------------------------------------- metrics
def _signed(logits: torch.Tensor, labels) -> torch.Tensor:
    """±s: the logit, negated where the label is 0 (positive when it is right)."""
    labels = torch.as_tensor(labels, device=logits.device)
    return (2.0 * labels.to(logits.dtype) - 1.0) * logits


def cross_entropy_bits(logits: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
    """Per-string cross-entropy in bits, −log₂ σ(±s), computed stably; same shape as ``logits``."""
    return torch.nn.functional.softplus(-_signed(logits, labels)) / math.log(2.0)


def accuracy(logits: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
    """Fraction of strings whose logit has the label's sign (logit 0 counts as wrong), over the last dim."""
    return (_signed(logits, labels) > 0).to(logits.dtype).mean(-1)
