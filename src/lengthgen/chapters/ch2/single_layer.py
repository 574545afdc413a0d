"""The four single-layer transformers of chapter 2 ("The models", §2.2), batched over members:
``gen`` A_gen (its output depends only on the count of ones, eq. 71), ``pos`` A_pos, ``norm``
A_norm (eq. 19, :func:`F_norm`) and ``sin`` A_sin (App. C.1). :func:`encode` builds the inputs,
:func:`forward` the logits, :class:`SingleLayer` the ensemble the engine trains."""

from __future__ import annotations

import math
from typing import Sequence

import torch

from lengthgen.config import check_choice, check_positive_int, check_seeds, nonempty
from lengthgen.nn.tasks import check_bits

VARIANTS = ("gen", "pos", "sin", "norm")
FAMILIES = {"gen": "gen", "sin": "sin", "pos": "positional", "norm": "positional"}
#: padding symbol for data positions beyond a string's length
PAD = 2


def check_width(h) -> int:
    """The classifier width h; the paper's theorems need h ≥ 2."""
    return check_positive_int("classifier width h", h, minimum=2)


def param_count(variant: str, h: int) -> int:
    """Number of trainable scalars: 5h+20 (gen), 5h+18 (pos, norm), 5h+32 (sin)."""
    return 5 * check_width(h) + {"gen": 20, "pos": 18, "norm": 18, "sin": 32}[variant]


def param_shapes(variant: str, h: int) -> dict[str, tuple[int, ...]]:
    """Name → shape (without the member dimension) of every trainable tensor of ``variant``."""
    head = {"W1": (h, 2), "b1": (h,), "W2": (2, h), "b2": (2,)}
    if FAMILIES[variant] == "positional":
        att = dict.fromkeys(("a", "b", "r", "s", "c_K"), (2,)) | {"C_V": (2, 2), "b_V": (2,)}
    else:
        d = 2 if variant == "gen" else 4
        att = {"W_Q": (2, d), "b_Q": (2,), "W_K": (2, d), "b_K": (2,), "W_V": (2, d), "b_V": (2,)}
    return {**att, **head}


# --------------------------------------------------------------------------- inputs
#: The fixed index token of the tasks without a query (§2.1 keeps the token in every input); First
#: reads it as k = 1 (§2.2). The paper prints no value for the counting tasks; App. D.7's "A_pos and
#: A_norm give the same result for every seed on Majority" holds exactly when it is 0 (F(0) = 0).
FIXED_TOKEN = {"first": 1, "majority": 0, "parity": 0}


def encode(bits, k=None, *, pad_to: int | None = None, fixed: int = 1) -> torch.Tensor:
    """Model input ``[..., L+1]``: the 0/1 ``bits`` [..., n] (right-padded with PAD to ``pad_to``)
    then the index token: the Index query ``k`` (1-based), or ``fixed`` (:data:`FIXED_TOKEN`)."""
    bits = check_bits(bits)
    n = bits.shape[-1]
    if k is None:
        if fixed not in (0, 1):
            raise ValueError(f"fixed index token must be 0 or 1, got {fixed!r}")
        kk = torch.full(bits.shape[:-1], int(fixed), dtype=torch.long)
    else:
        kk = torch.as_tensor(k, dtype=torch.long).expand(bits.shape[:-1])
        bad = kk[(kk < 1) | (kk > n)]
        if bad.numel():
            raise ValueError(f"index query k must lie in [1, {n}], got {int(bad.flatten()[0])}")
    if pad_to is not None:
        pad_to = check_positive_int("pad_to", pad_to)
        if pad_to < n:
            raise ValueError(f"pad_to = {pad_to} is shorter than the strings (n = {n})")
        pad = torch.full((*bits.shape[:-1], pad_to - n), PAD, dtype=torch.long)
        bits = torch.cat([bits, pad], -1)
    return torch.cat([bits, kk.to(bits.device).unsqueeze(-1)], -1)


# --------------------------------------------------------------------------- initialisation (D.2)
def _xavier(shape, g, dtype):
    bound = math.sqrt(6.0 / (shape[1] + shape[0]))  # fan_in + fan_out
    return (torch.rand(shape, generator=g, dtype=dtype) * 2 - 1) * bound


def init_member(variant: str, h: int, seed: int, N: int, dtype=torch.float64) -> dict:
    """One member's initial tensors (App. D.2) from ``manual_seed(seed)``: a, r, s, b, c_K ~
    N(0, σ²), σ = 0.1/N, 0.1/N, 0.1/N², 0.1, 0.1; C_V, W1, W2 Xavier-uniform; biases 0; ``gen``,
    ``sin`` copy b_Q ← b, b_K ← c_K, value content ← C_V and the classifier, the rest Xavier."""
    g = torch.Generator().manual_seed(seed)
    rn = lambda sd: torch.randn(2, generator=g, dtype=dtype) * sd  # noqa: E731
    a, r, s, b, c_K = (rn(sd) for sd in (0.1 / N, 0.1 / N, 0.1 / N**2, 0.1, 0.1))
    C_V, W1, W2 = (_xavier(shape, g, dtype) for shape in ((2, 2), (h, 2), (2, h)))
    head = dict(W1=W1, b1=torch.zeros(h, dtype=dtype), W2=W2, b2=torch.zeros(2, dtype=dtype))
    zero2 = torch.zeros(2, dtype=dtype)
    if FAMILIES[variant] == "positional":
        return dict(a=a, b=b, r=r, s=s, c_K=c_K, C_V=C_V, b_V=zero2, **head)
    if variant == "gen":
        W_Q, W_K = _xavier((2, 2), g, dtype), _xavier((2, 2), g, dtype)
        return dict(W_Q=W_Q, b_Q=b, W_K=W_K, b_K=c_K, W_V=C_V, b_V=zero2, **head)
    WQc, WQp, WKc, WKp, WVp = (_xavier((2, 2), g, dtype) for _ in range(5))
    att = dict(W_Q=torch.cat([WQc, WQp], 1), b_Q=b, W_K=torch.cat([WKc, WKp], 1), b_K=c_K)
    return dict(att, W_V=torch.cat([C_V, WVp], 1), b_V=zero2, **head)


# --------------------------------------------------------------------------- forward passes
def classifier(params, A):
    """``W2 ReLU(W1 A + b1) + b2``: A [E, B, 2] → logits [E, B, 2]."""
    hid = torch.relu(torch.einsum("ebi,ehi->ebh", A, params["W1"]) + params["b1"][:, None, :])
    return torch.einsum("ebh,ech->ebc", hid, params["W2"]) + params["b2"][:, None, :]


def value_mix(V, bV, p: torch.Tensor) -> torch.Tensor:
    """The attention output u₀ + p(u₁ − u₀) at the mass ``p`` [E, ...] on the ones, u_c = column c
    of the value map ``V`` plus ``bV``: [E, ..., 2]."""
    u0, u1 = (V[:, :, c] + bV for c in (0, 1))
    shape = (-1, *[1] * (p.dim() - 1), 2)
    return u0.view(shape) + p[..., None] * (u1 - u0).view(shape)


#: the A_norm maps: ``sqrt`` (the paper's, default), ``misread`` (our earlier error, an ablation)
NORM_MAPS = ("sqrt", "misread")


def F_norm(v: torch.Tensor, kind: str = "sqrt") -> torch.Tensor:
    """The bounded map of eq. 17 on the last dimension: ``sqrt`` v / √(1 + ‖v‖²), the paper's;
    ``misread`` v / (1 + ‖v‖²), our earlier misreading (an ablation)."""
    check_choice("norm map", kind, NORM_MAPS)
    if kind == "misread":
        return v / (1 + (v * v).sum(-1, keepdim=True))
    return v / torch.sqrt(1 + (v * v).sum(-1, keepdim=True))


def _positional_coefs(params, k: torch.Tensor, normalized):
    """(c1, c2, c0) with g_j = c1·j + c2·j² + c0: eq. 8 (A_pos) or eq. 19 (A_norm); each [E, B]."""
    a, b, r, s, cK = (params[n] for n in ("a", "b", "r", "s", "c_K"))
    ak = a[:, None, :] * k[..., None]  # [E, B, 2]
    q = ak + b[:, None, :]
    Fa = F_norm(ak)
    mis = params.get("_norm_misread")  # per-member ablation flag (bool [E])
    if mis is not None and bool(mis.any()):
        Fa = torch.where(mis.bool().view(-1, 1, 1), F_norm(ak, "misread"), Fa)
    norm = torch.as_tensor(normalized, device=q.device).bool().view(-1, 1, 1)  # bool or per member
    qq = torch.where(norm, b[:, None, :] + Fa, q)
    return ((q * r[:, None, :]).sum(-1), (qq * s[:, None, :]).sum(-1), (q * cK[:, None, :]).sum(-1))


def positional_scores(params, k: torch.Tensor, L: int, normalized) -> torch.Tensor:
    """Scores ``g_j`` (eq. 8 for A_pos, eq. 19 for A_norm) for j = 1 … L, shape [E, B, L], for
    queries ``k`` [E, B]; ``normalized``: a bool or a bool tensor [E] (per member)."""
    c1, c2, c0 = _positional_coefs(params, k, normalized)
    j = torch.arange(1, L + 1, dtype=k.dtype, device=k.device)
    return c1[..., None] * j + c2[..., None] * (j * j) + c0[..., None]


#: the attention scale β_n: ``log`` (log n, the paper's eq. 2) or ``one`` (1; chapter 5)
BETAS = ("log", "one")


def check_beta(beta) -> str:
    """``beta`` (one of :data:`BETAS`) or a ValueError naming the bad value."""
    return check_choice("beta (attention scale)", beta, BETAS)


def attention_scale(params, n: torch.Tensor, beta: str = "log") -> torch.Tensor:
    """β_n for every input (shape of ``n``): ``log n`` or ``1``; a per-member flag
    ``params["_beta_one"]`` (bool [E]) selects β_n = 1 member by member (``beta`` then ``log``)."""
    check_beta(beta)
    logn, flag = torch.log(n), params.get("_beta_one")
    if flag is not None:
        if beta != "log":
            raise ValueError("a per-member flag _beta_one needs beta='log' for the other members")
        one = flag.bool().view(-1, *([1] * (logn.dim() - 1)))
        return torch.where(one, torch.ones_like(logn), logn)
    return logn if beta == "log" else torch.ones_like(logn)


def forward(variant: str, params, x: torch.Tensor, beta: str = "log") -> torch.Tensor:
    """Logits [E, B, 2] of ``variant`` for inputs ``x`` [E, B, L+1] (or [B, L+1], shared), β_n by
    ``beta``; ``params["_norm"]`` (bool [E]) picks A_norm per member (pairs run in one pass)."""
    check_choice("variant", variant, VARIANTS)
    if not isinstance(x, torch.Tensor) or x.dim() < 2 or x.shape[-1] < 2:
        raise ValueError(
            "model input must be a tensor [..., L + 1] (data tokens then the index token); "
            "build it with lengthgen.chapters.ch2.single_layer.encode"
        )
    dtype, E = params["b_V"].dtype, params["b_V"].shape[0]
    x = (x.unsqueeze(0).expand(E, *x.shape) if x.dim() == 2 else x).to(dtype)
    if x.shape[0] != E:
        raise ValueError(f"input has leading dim {x.shape[0]}, the ensemble has {E} members")
    data, k = x[..., :-1], x[..., -1]  # the data tokens (PAD beyond n) and the index token
    valid = data != PAD
    n = valid.sum(-1, dtype=dtype)
    if bool((n < 1).any()):
        raise ValueError("every input needs at least one data token")
    beta_n = attention_scale(params, n, beta)  # β_n (log n unless β = 1)
    L = data.shape[-1]
    j = torch.arange(1, L + 1, dtype=dtype, device=x.device)  # the positions
    if variant in ("gen", "sin"):  # the index token is z = 0: q = Q(0) = b_Q
        q, WK, bK, WV, bV = (params[k] for k in ("b_Q", "W_K", "b_K", "W_V", "b_V"))
        s0, s1 = ((q * (WK[:, :, c] + bK)).sum(-1) for c in (0, 1))  # a zero's, a one's score
    if variant == "gen":
        t = data.sum(-1) - PAD * (L - n)  # number of ones
        rho = torch.sigmoid(torch.log(t) - torch.log(n - t) + beta_n * (s1 - s0)[:, None])  # eq. 71
        return classifier(params, value_mix(WV, bV, rho))
    if variant == "sin":
        w = data * valid
        pj = torch.stack([torch.sin(j), torch.cos(j)], -1)  # [L, 2]
        pos = torch.einsum("ed,edp,lp->el", q, WK[:, :, 2:], pj)  # qᵀ W_K^pos p_j
        # the symbol-0 score s0 is common to every position and cancels in the softmax
        logits = torch.addcmul(pos[:, None, :], w, (s1 - s0)[:, None, None]) * beta_n[..., None]
        alpha = torch.softmax(logits.masked_fill(~valid, float("-inf")), -1)
        p = (alpha * w).sum(-1)
        P = torch.einsum("ebl,lp->ebp", alpha, pj)
        A = value_mix(WV, bV, p) + torch.einsum("edp,ebp->ebd", WV[:, :, 2:], P)  # + positional
        return classifier(params, A)
    # c0 = qᵀc_K is common to all j: cancels in the softmax
    c1, c2, _ = _positional_coefs(params, k, params.get("_norm", variant == "norm"))
    coef = torch.stack([c1, c2], -1) * beta_n[..., None]  # [E, B, 2]
    logits = torch.matmul(coef, torch.stack([j, j * j]))  # [E, B, L]
    alpha = torch.softmax(logits.masked_fill(~valid, float("-inf")), -1)
    p = (alpha * data).sum(-1)  # attention mass on ones (PAD positions have α = 0)
    return classifier(params, value_mix(params["C_V"], params["b_V"], p))


def _per_member(name: str, values, E: int) -> list:
    """``values`` as one per member: a single value repeated, or a sequence of exactly E."""
    if isinstance(values, (str, int)):
        return [values] * E
    if len(values) != E:
        raise ValueError(f"{name} has {len(values)} entries for {E} members")
    return list(values)


class SingleLayer:
    """Ensemble model (the engine's interface) of one parameter family, per member ``variants``
    (pos, norm), ``beta`` (log, one), ``max_lengths`` (N: D.2's init scales), ``norm_map``."""

    def __init__(
        self, variant="pos", h=8, max_lengths=1, variants=None, norm_map="sqrt", beta="log"
    ):
        self.h = check_width(h)
        self.norm_map = check_choice("norm map", norm_map, NORM_MAPS)
        one = isinstance(beta, str)
        self.beta = check_beta(beta) if one else [check_beta(b) for b in nonempty("beta", beta)]
        self.variant, self.variants = check_choice("variant", variant, VARIANTS), None
        if variants is not None:
            self.variants = [check_choice("variant", v, VARIANTS) for v in variants]
            if len({FAMILIES[v] for v in self.variants}) != 1:
                raise ValueError(f"one ensemble holds one parameter family, got {variants}")
            self.variant = "norm" if set(self.variants) == {"norm"} else self.variants[0]
        self.max_lengths = max_lengths

    def init(self, seeds: Sequence[int], dtype=torch.float64, device=None) -> dict:
        """Stacked initial tensors, member e from seed ``seeds[e]`` with its own N (App. D.2)."""
        seeds = check_seeds(seeds)
        E = len(seeds)
        Ns = [check_positive_int("N", N) for N in _per_member("max_lengths", self.max_lengths, E)]
        vs = _per_member("variants", self.variants or self.variant, E)
        members = [init_member(v, self.h, s, N, dtype) for v, s, N in zip(vs, seeds, Ns)]
        out = {k: torch.stack([m[k] for m in members]).to(device or "cpu") for k in members[0]}
        if FAMILIES[self.variant] == "positional":
            out["_norm"] = torch.tensor([v == "norm" for v in vs], device=device or "cpu")
            if self.norm_map == "misread":
                out["_norm_misread"] = out["_norm"].clone()
        if self.beta != "log":
            bs = _per_member("beta", self.beta, E)
            out["_beta_one"] = torch.tensor([b == "one" for b in bs], device=device or "cpu")
        return out

    def forward(self, params, x) -> torch.Tensor:
        return forward("pos" if FAMILIES[self.variant] == "positional" else self.variant, params, x)


def single_point(params: dict) -> dict[str, torch.Tensor]:
    """Add a member dimension of size 1 to an unbatched parameter point (for :func:`forward`)."""
    return {k: torch.as_tensor(v).unsqueeze(0) for k, v in params.items()}
