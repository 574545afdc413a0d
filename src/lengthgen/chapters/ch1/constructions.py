"""Hand-set transformers of chapter 1 (Chiang & Cholak 2022): exact PARITY and FIRST, each as
``(encoder, params)`` of one member (E = 1), float64. Coordinates are 0-based (the paper's from 1).

PARITY (paper §3.2; ``parity``): d = 9 (10 with ``sqrt_d``, coordinate 9 unused).
    0,1,2  one-hot of symbol 0, symbol 1, CLS;   3  i/N;   4  cos(π i)
    layer 1, head 1: zero keys → uniform average; values put k/N in 5 and 1/N in 6
    layer 1, FFN:    (ReLU(k−i+1) − 2 ReLU(k−i) + ReLU(k−i−1)) / N = 1[i = k] / N in 7
                     (bias-free: the three hidden units read 5, 3 and 6)
    layer 2, heads 1/2: CLS query, keys −cos(π i) / +cos(π i) (favour odd / even positions),
                     values read 7; head 1 minus head 2 is written to 8
    output logit  s = output_scale · x_8 at CLS, positive exactly when k is odd.

FIRST (paper §3.3; ``first``): d = 6.
    0,1,2  one-hot;   3  1[i = 1]
    layer 1, FFN:    ReLU(tok₁ + 1[i=1] − (tok₀ + tok₁ + CLS)) = 1[i = 1 and w_i = 1] in 4
                     (bias-free because the three one-hot coordinates sum to 1)
    layer 2, head:   CLS query c, key 1[i = 1] → logit c on position 1, 0 elsewhere;
                     value x_4 − x_3 / 2 = (1[w_1 = 1] − 1/2) at position 1, 0 elsewhere → 5
    output logit  s = e^c / (e^c + N − 1) · (1[w_1 = 1] − 1/2)   (times ``output_scale``).

Log-scaled FIRST (paper §5.3; ``first_log_scaled``): one layer, d = 5.
    head: CLS query c = 2, key 1[i = 1]; value (tok₁ − tok₀)/2 at every position → 4.
    With β = log N the first position's weight is N^c, and for c = 2 the logit obeys
    1/4 < |s| < 1/2 at every length (derivation in chapter 1). With standard attention the same
    weights are the "flawed" construction of §5.2, whose other positions can outvote the first.

Layer norm (§4.1, §4.2; ``layer_norm=True``): :func:`paired` rewrites a construction on [x; −x]
and turns the unused last FFN into the clean-up of §4.2. Logit (Fig. 2, details page "two
layouts"): the query weight c·√d_head cancels the encoder's 1/√d_head, so the favoured logit is c;
``sqrt_d=True`` lays it out as the authors' scripts do (:data:`.paper.AUTHORS_WIDTH`): query weight
c, each head divides by √(width / heads), the width padded to a multiple of the heads.
"""

from __future__ import annotations

import dataclasses
import math

import torch

from lengthgen.config import check_choice, check_finite
from lengthgen.chapters.ch1.encoder import Encoder, EncoderConfig


def _padded(d: int, n_heads: int, sqrt_d: bool) -> int:
    """The model width: ``d``, or with ``sqrt_d`` the next multiple of ``n_heads`` (torch's rule)."""
    if not isinstance(sqrt_d, bool):
        raise TypeError(f"sqrt_d must be a bool, got {sqrt_d!r}")
    return n_heads * math.ceil(d / n_heads) if sqrt_d else d


def _query_scale(d_head: int, n_heads: int, width: int, layer_norm: bool, sqrt_d: bool) -> float:
    """Query weight per unit of logit: √d_head (logit exactly c) or, with ``sqrt_d``,
    √d_head / √(width / n_heads), the width doubled by paired layer norm."""
    per_head = (2 * width if layer_norm else width) / n_heads
    return math.sqrt(d_head) / math.sqrt(per_head) if sqrt_d else math.sqrt(d_head)


def _canvas(shape, positional, pos_map, log_scaled):
    """An all-zero one-member encoder of ``shape`` (d, layers, heads, head width, FFN width), no
    layer norm (:func:`paired` adds it), tokens one-hot in coordinates 0, 1, 2."""
    sizes = dict(zip(("d_model", "n_layers", "n_heads", "d_head", "d_ffn"), shape))
    opts = dict(layer_norm=False, eps=0.0, log_scaled=log_scaled, positional=positional)
    enc = Encoder(EncoderConfig(**sizes, **opts, pos_map=pos_map))
    p = enc.zeros(1)  # float64
    p["embed"][0, :, :3] = torch.eye(3, dtype=torch.float64)
    return enc, p


def _read_out(enc, p, coord, output_scale, layer_norm, eps, cleanup=True):
    """Finish a construction: logit ``output_scale`` · x_coord at CLS, :func:`paired` if ``layer_norm``."""
    p["out_w"][0, coord] = output_scale
    return paired(enc, p, eps=eps, keep=coord, cleanup=cleanup) if layer_norm else (enc, p)


def _check_common(eps, output_scale, c=1.0) -> float:
    """Validate the shared options; returns ``c`` as a float."""
    check_finite("eps", eps, nonnegative=True)
    if check_finite("output_scale", output_scale) <= 0:
        raise ValueError(f"output_scale must be > 0, got {output_scale!r}")
    return check_finite("c", c)


def parity(
    *, layer_norm=False, eps=0.0, log_scaled=False, output_scale=1.0, value_k=1.0, sqrt_d=False
):
    """The exact two-layer, two-head PARITY transformer (paper §3.2); paired + clean-up if
    ``layer_norm``. ``value_k``: the value weight computing k/N (1; the sweep of §5.1 moves it)."""
    _check_common(eps, output_scale)
    check_finite("value_k", value_k)
    heads, dk = 2, 2
    d = _padded(9, heads, sqrt_d)
    pos = tuple(tuple(float(j == c) for j in range(d)) for c in (3, 4))
    enc, p = _canvas((d, 2, heads, dk, 3), "parity", pos, log_scaled)
    # the module docstring's map, layer by layer
    p["wv"][0, 0, 0, 1, 0] = value_k  # symbol 1 → value 0
    p["wv"][0, 0, 0, 2, 1] = 1.0  # CLS      → value 1
    p["wo"][0, 0, 0, [0, 1], [5, 6]] = 1.0  # value 0 → 5, value 1 → 6
    # hidden unit j = (k − i + 1 − j)/N from coordinates 5 (k/N), 3 (i/N) and 6 (1/N)
    p["w1"][0, 0, [5, 3, 6]] = torch.tensor([[1.0] * 3, [-1.0] * 3, [1.0, 0.0, -1.0]]).double()
    p["w2"][0, 0, :, 7] = torch.tensor([1.0, -2.0, 1.0], dtype=torch.float64)
    sq = _query_scale(dk, heads, d, layer_norm, sqrt_d)
    for h, sign in ((0, -1.0), (1, 1.0)):
        p["wq"][0, 1, h, 2, 0] = sq
        p["wk"][0, 1, h, 4, 0] = sign
        p["wv"][0, 1, h, 7, 0] = 1.0
        p["wo"][0, 1, h, 0, 8] = -sign  # head 0 adds, head 1 subtracts
    return _read_out(enc, p, 8, output_scale, layer_norm, eps)


def first(*, layer_norm=False, eps=0.0, log_scaled=False, c=1.0, output_scale=1.0, sqrt_d=False):
    """The exact two-layer FIRST (§3.3), first-position advantage ``c`` (c/√6 if ``sqrt_d``)."""
    c = _check_common(eps, output_scale, c)
    heads, dk = 1, 1
    d = _padded(6, heads, sqrt_d)
    pos = ((0, 0, 0, 1, 0, 0),)  # 1[i = 1] in coordinate 3
    enc, p = _canvas((d, 2, heads, dk, 1), "first", pos, log_scaled)
    p["w1"][0, 0, :, 0] = torch.tensor([-1.0, 0.0, -1.0, 1.0, 0.0, 0.0], dtype=torch.float64)
    p["w2"][0, 0, 0, 4] = 1.0
    p["wq"][0, 1, 0, 2, 0] = c * _query_scale(dk, heads, d, layer_norm, sqrt_d)
    p["wk"][0, 1, 0, 3, 0] = 1.0
    p["wv"][0, 1, 0, [4, 3], 0] = torch.tensor([1.0, -0.5], dtype=torch.float64)  # x_4 − x_3 / 2
    p["wo"][0, 1, 0, 0, 5] = 1.0
    return _read_out(enc, p, 5, output_scale, layer_norm, eps)


def first_log_scaled(*, layer_norm=False, eps=0.0, log_scaled=True, c=2.0, output_scale=1.0):
    """§5.3's one-layer FIRST (1/4 < |s| < 1/2 for all n at c = 2); unscaled, §5.2's flawed one."""
    c = _check_common(eps, output_scale, c)
    d, dk = 5, 1
    pos = ((0, 0, 0, 1, 0),)  # 1[i = 1] in coordinate 3
    enc, p = _canvas((d, 1, 1, dk, 1), "first", pos, log_scaled)
    p["wq"][0, 0, 0, 2, 0] = c * math.sqrt(dk)
    p["wk"][0, 0, 0, 3, 0] = 1.0
    p["wv"][0, 0, 0, [1, 0], 0] = torch.tensor([0.5, -0.5], dtype=torch.float64)  # (tok₁ − tok₀)/2
    p["wo"][0, 0, 0, 0, 4] = 1.0
    # one layer: no unused last FFN to turn into the clean-up (§5.3 needs none)
    return _read_out(enc, p, 4, output_scale, layer_norm, eps, cleanup=False)


def build(name: str, **kw):
    """Dispatch by name: ``parity``, ``first`` or ``first_log_scaled``."""
    fns = {"parity": parity, "first": first, "first_log_scaled": first_log_scaled}
    return fns[check_choice("construction", name, tuple(fns))](**kw)


def paired(
    enc: Encoder, params: dict, *, eps: float = 0.0, keep: int | None = None, cleanup: bool = True
):
    """Rewrite a layer-norm-free construction on [x; −x] and switch layer norm on (§4.1). Biases
    must be zero: only bias-free maps commute with layer norm's positive per-position factor. With
    ``cleanup`` the last (unused) FFN becomes §4.2's clean-up, zeroing every pair but ``keep``."""
    cfg = enc.config
    if cfg.layer_norm:
        raise ValueError("paired() expects a construction without layer norm")
    for name in ("bq", "bk", "bv", "bo", "b1", "b2", "out_b"):
        if bool((params[name] != 0).any()):
            raise ValueError(f"paired() needs bias-free constructions; {name} is nonzero")
    d = cfg.d_model
    f = max(cfg.d_ffn, 2 * d) if cleanup else cfg.d_ffn
    pos = cfg.pos_matrix()
    pos_map = tuple(map(tuple, torch.cat([pos, -pos], -1).tolist()))
    sizes = dict(d_model=2 * d, d_head=cfg.head_dim, d_ffn=f)
    new = Encoder(dataclasses.replace(cfg, **sizes, layer_norm=True, eps=eps, pos_map=pos_map))
    emb = params["embed"]
    p = new.zeros(emb.shape[0], dtype=emb.dtype, device=emb.device)
    p["embed"] = torch.cat([emb, -emb], -1)
    for name in ("wq", "wk", "wv"):
        p[name][..., :d, :] = params[name]
    p["wo"] = torch.cat([params["wo"], -params["wo"]], -1)
    p["w1"][..., :d, : cfg.d_ffn] = params["w1"]
    p["w2"][..., : cfg.d_ffn, :] = torch.cat([params["w2"], -params["w2"]], -1)
    p["out_w"][..., :d] = params["out_w"]
    if cleanup:
        if keep is None:
            raise ValueError("cleanup needs the coordinate to keep")
        last = cfg.n_layers - 1
        if bool((params["w1"][:, last] != 0).any()) or bool((params["w2"][:, last] != 0).any()):
            raise ValueError("the clean-up needs the last layer's FFN to be unused")
        # hidden j = ReLU(x_j), j = 0 … 2d−1; output_j = −ReLU(x_j) + ReLU(x_{j±d}) = −x_j except the kept pair
        p["w1"][:, last, :, : 2 * d] = torch.eye(2 * d, dtype=p["w1"].dtype)
        block = torch.tensor([[-1.0, 1.0], [1.0, -1.0]])  # rows and columns j, j + d
        for j in set(range(d)) - {keep}:
            p["w2"][:, last, j : 2 * d : d, j : 2 * d : d] = block
    return new, p
