"""Batched optimizers against torch.optim, member by member; Muon vs torch.optim.Muon; bad input."""

import math

import pytest
import torch
from torch.optim._muon import _zeropower_via_newtonschulz

from lengthgen.config import ConfigError
from lengthgen.engine.optim import (
    MUON_NS_COEFFICIENTS,
    EnsembleOptimizer,
    OptimConfig,
    clip_grad_norm_,
    zeropower_newton_schulz,
)
from lengthgen.engine.train import OptimConfig as TrainOptimConfig
from lengthgen.engine.train import train_ensemble

E = 3


def _run_both(cfg: OptimConfig, make_torch, shapes, dtype=torch.float64, steps=6, seed=0):
    """Apply the same random gradients to the batched optimizer and to E torch optimizers."""
    g = torch.Generator().manual_seed(seed)
    params = {n: torch.randn(E, *s, generator=g, dtype=dtype) for n, s in shapes.items()}
    opt = EnsembleOptimizer(cfg, params, list(params))
    singles = [{n: params[n][e].clone().requires_grad_(True) for n in params} for e in range(E)]
    topts = [make_torch(e, singles[e]) for e in range(E)]
    for _ in range(steps):
        grads = {n: torch.randn(E, *s, generator=g, dtype=dtype) for n, s in shapes.items()}
        opt.step(params, grads)
        for e in range(E):
            for n in params:
                singles[e][n].grad = grads[n][e].clone()
            for o in topts[e]:
                o.step()
    return params, singles


@pytest.mark.parametrize(
    "name,cls,kw",
    [
        ("adam", torch.optim.Adam, {}),
        ("adamw", torch.optim.AdamW, {}),
        ("sgd", torch.optim.SGD, {}),
    ],
)
@pytest.mark.parametrize("per_member", [False, True])
def test_matches_torch_optim(name, cls, kw, per_member):
    lrs = [0.1, 0.01, 0.05] if per_member else [0.03] * E
    wds = [0.0, 0.1, 0.01] if per_member else [0.02] * E
    cfg = OptimConfig(
        name,
        lr=lrs if per_member else lrs[0],
        weight_decay=wds if per_member else wds[0],
        **kw,
    )
    shapes = {"a": (4, 3), "b": (5,), "c": (2, 2, 2)}
    params, singles = _run_both(
        cfg,
        lambda e, p: [cls(p.values(), lr=lrs[e], weight_decay=wds[e], **kw)],
        shapes,
    )
    for e in range(E):
        for n in shapes:
            torch.testing.assert_close(params[n][e], singles[e][n].detach(), rtol=0, atol=1e-14)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_batched_muon_matches_torch_muon(dtype):
    """Matrices on Muon (tall, wide, square), the vector on AdamW without decay (``decay``)."""
    shapes = {"tall": (7, 3), "wide": (3, 8), "square": (5, 5), "bias": (4,)}
    cfg = OptimConfig("muon", lr=0.02, weight_decay=0.1, decay=("tall", "wide", "square"))

    def make(e, p):
        mats = [p["tall"], p["wide"], p["square"]]
        return [
            torch.optim.Muon(mats, lr=0.02, weight_decay=0.1),
            torch.optim.AdamW([p["bias"]], lr=0.02, weight_decay=0.0),
        ]

    params, singles = _run_both(cfg, make, shapes, dtype=dtype, steps=8)
    tol = (
        1e-6 if dtype == torch.float32 else 1e-8
    )  # updates are bfloat16 numbers, as in torch.optim.Muon
    for e in range(E):
        for n in shapes:
            torch.testing.assert_close(params[n][e], singles[e][n].detach(), rtol=0, atol=tol)


def test_muon_per_member_lr_and_options():
    lrs, wds = [0.02, 0.01, 0.05], [0.0, 0.1, 0.3]
    cfg = OptimConfig(
        "muon",
        lr=lrs,
        weight_decay=wds,
        muon_momentum=0.9,
        ns_steps=3,
    )
    shapes = {"W": (6, 4)}
    params, singles = _run_both(
        cfg,
        lambda e, p: [
            torch.optim.Muon(
                p.values(),
                lr=lrs[e],
                weight_decay=wds[e],
                momentum=0.9,
                ns_steps=3,
            )
        ],
        shapes,
    )
    for e in range(E):
        torch.testing.assert_close(params["W"][e], singles[e]["W"].detach(), rtol=0, atol=1e-8)


def test_muon_parameter_routing():
    p = {"W": torch.zeros(2, 3, 3), "emb": torch.zeros(2, 4, 3), "b": torch.zeros(2, 3)}
    assert EnsembleOptimizer(OptimConfig("muon"), p, list(p)).muon == {"W", "emb"}
    assert EnsembleOptimizer(OptimConfig("muon", adamw_params=("emb",)), p, list(p)).muon == {"W"}
    assert EnsembleOptimizer(OptimConfig("muon", muon_params=("W",)), p, list(p)).muon == {"W"}
    with pytest.raises(ValueError, match="both muon_params and adamw_params"):
        EnsembleOptimizer(OptimConfig("muon", muon_params=("W",), adamw_params=("W",)), p, list(p))


@pytest.mark.parametrize("shape", [(4, 6), (6, 4), (5, 5)])
def test_newton_schulz_matches_torch_per_member(shape):
    G = torch.randn(3, *shape, generator=torch.Generator().manual_seed(1), dtype=torch.float64)
    X = zeropower_newton_schulz(G)
    assert X.dtype == torch.bfloat16
    for e in range(3):
        ref = _zeropower_via_newtonschulz(G[e], MUON_NS_COEFFICIENTS, 5, 1e-7)
        torch.testing.assert_close(X[e].double(), ref.double(), rtol=0, atol=1e-2)
    # in float64 the singular values land near 1 (the quintic's band is roughly 0.7 … 1.2)
    s = torch.linalg.svdvals(zeropower_newton_schulz(G, dtype=torch.float64, steps=10))
    assert bool((s > 0.5).all() and (s < 1.5).all())
    with pytest.raises(ValueError, match="stack of matrices"):
        zeropower_newton_schulz(torch.zeros(3, 3))


def test_clip_grad_norm_matches_torch():
    g = torch.Generator().manual_seed(2)
    grads = [
        torch.randn(E, 4, 3, generator=g, dtype=torch.float64),
        torch.randn(E, 5, generator=g, dtype=torch.float64),
    ]
    grads[0][1] *= 1e-3  # member 1 is below the threshold: untouched
    ref = [[t[e].clone() for t in grads] for e in range(E)]
    norms = clip_grad_norm_(grads, 1.0)
    for e in range(E):
        ps = [torch.nn.Parameter(torch.zeros_like(t)) for t in ref[e]]
        for p, t in zip(ps, ref[e]):
            p.grad = t.clone()
        total = torch.nn.utils.clip_grad_norm_(ps, 1.0)
        torch.testing.assert_close(norms[e], total, rtol=0, atol=1e-14)
        for p, t in zip(ps, grads):
            torch.testing.assert_close(t[e], p.grad, rtol=0, atol=1e-15)


def test_muon_in_the_engine_matches_torch_loop():
    """train_ensemble with Muon (matrix) + AdamW (bias) == per-member torch.optim.Muon + AdamW."""
    E_, D = 2, 4
    gens = [torch.Generator().manual_seed(s) for s in (1, 2)]
    params = {
        "W": torch.stack([torch.randn(3, D, generator=g, dtype=torch.float64) for g in gens]),
        "b": torch.zeros(E_, 3, dtype=torch.float64),
    }

    class Lin:
        def forward(self, p, x):
            return torch.einsum("ebd,ecd->ebc", x, p["W"]) + p["b"][:, None]

    def sample(step, gs):
        x = torch.stack([torch.randn(16, D, generator=g, dtype=torch.float64) for g in gs])
        return x, x.argmax(-1).clamp(max=2)

    cfg = TrainOptimConfig("muon", lr=0.02, weight_decay=0.05, decay=("W",))
    res = train_ensemble(
        Lin(),
        params,
        sample=sample,
        optim=cfg,
        steps=6,
        data_seeds=[7, 8],
        progress=False,
    )
    for e, s in enumerate((7, 8)):
        W = params["W"][e].clone().requires_grad_(True)
        b = params["b"][e].clone().requires_grad_(True)
        o1 = torch.optim.Muon([W], lr=0.02, weight_decay=0.05)
        o2 = torch.optim.AdamW([b], lr=0.02, weight_decay=0.0)
        g = torch.Generator().manual_seed(s)
        for step in range(6):
            x, y = sample(step, [g])
            loss = torch.nn.functional.cross_entropy(x[0] @ W.T + b, y[0])
            o1.zero_grad(), o2.zero_grad()
            loss.backward()
            o1.step(), o2.step()
        torch.testing.assert_close(res.final_params["W"][e], W.detach(), rtol=0, atol=1e-8)
        torch.testing.assert_close(res.final_params["b"][e], b.detach(), rtol=0, atol=1e-8)


@pytest.mark.parametrize(
    "kw,match",
    [
        (
            {"name": "rmsprop"},
            "unknown optimizer 'rmsprop'; valid choices: adam, adamw, sgd, muon",
        ),
        ({"lr": -0.1}, "lr must be >= 0"),
        ({"lr": float("nan")}, "lr must be a finite number"),
        ({"lr": [0.1, -1.0]}, r"lr\[1\] must be >= 0"),
        ({"lr": []}, "lr must be a non-empty list"),
        ({"lr": "fast"}, "lr must be a non-empty list"),
        ({"weight_decay": -1e-3}, "weight_decay must be >= 0"),
        ({"betas": (0.9,)}, "betas must be a pair"),
        ({"betas": (0.9, 1.0)}, r"betas\[1\] must lie in \[0, 1\)"),
        ({"eps": -1.0}, "eps must be >= 0"),
        ({"clip": 0.0}, "clip must be > 0"),
        ({"clip": -1.0}, "clip must be > 0"),
        ({"ns_steps": 0}, "ns_steps must be an integer >= 1"),
        ({"ns_steps": 100}, "ns_steps must be < 100"),
        ({"ns_dtype": "float16"}, "valid choices: bfloat16, float32, float64"),
        ({"decay": "W"}, "decay must be a sequence of parameter names"),
    ],
)
def test_bad_config(kw, match):
    with pytest.raises(ConfigError, match=match):
        OptimConfig(**kw)


def test_per_member_lengths_and_optimizer_input():
    cfg = OptimConfig("adam", lr=[0.1, 0.2, 0.3])
    assert cfg.per_member("lr", 3) == (0.1, 0.2, 0.3)
    assert OptimConfig(lr=torch.tensor([0.1, 0.2])).per_member("lr", 2) == pytest.approx((0.1, 0.2))
    with pytest.raises(ConfigError, match="lr has 3 values but the ensemble has 2 members"):
        cfg.per_member("lr", 2)


def test_select_keeps_member_state():
    cfg = OptimConfig("adam", lr=[0.1, 0.2, 0.3])
    p = {"a": torch.ones(3, 2, dtype=torch.float64)}
    opt = EnsembleOptimizer(cfg, p, ["a"])
    opt.step(
        p,
        {"a": torch.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], dtype=torch.float64)},
    )
    m = opt.state["a"]["exp_avg"].clone()
    opt.select(torch.tensor([2, 0]))
    assert opt.lr == (0.3, 0.1) and opt.members == 2
    assert torch.equal(opt.state["a"]["exp_avg"], m[[2, 0]])
    assert not math.isnan(float(opt.state["a"]["exp_avg_sq"].sum()))
