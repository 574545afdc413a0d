"""Chapter 5, section "Parity: averaging versus summing": the volume of summing + sine around
chapter 4's construction and the trained summing networks (:mod:`lengthgen.chapters.ch5.sum_sine`),
checked against brute force on small sizes."""

from __future__ import annotations

import math

import pytest
import torch

from lengthgen.chapters.ch4.data import Network
from lengthgen.chapters.ch5 import sum_sine as ss
from lengthgen.chapters.ch5.experiments import schema
from lengthgen.config import ConfigError

DT = torch.float64


def _point(P, i):
    return Network(P["W"][i], P["V"][i], "sine", P["b"][i])


def test_center_is_the_construction_and_exact_everywhere():
    c = ss.center()
    P = {k: v[None] for k, v in c.items()}
    for n in (1, 2, 7, 50):
        m = ss.margins(P, n)
        assert torch.allclose(m, torch.full_like(m, 2.0), atol=1e-12)
    assert bool(ss.exact_jointly(P, 60)[0])


def test_margins_match_brute_force_scores():
    P = ss.sample_box(0.25, 6, seed=3)
    for n in (2, 5, 9):
        m = ss.margins(P, n)
        for i in range(6):
            net = _point(P, i)
            for t in range(n + 1):
                s = net.scores(torch.tensor([[n - t, t]]))[0]
                want = (s[t % 2] - s[1 - t % 2]).item()
                assert m[i, t].item() == pytest.approx(want, abs=1e-12)


def test_margin_identity_a_cos_plus_c_sin():
    """(−1)^t (s₀ − s₁) = a cos φ₀ + c sin φ₁ (the module's derivation)."""
    c = ss.center()
    P = ss.sample_box(0.25, 20, seed=5)
    n = 13
    t = torch.arange(n + 1, dtype=DT)
    dW = P["W"] - c["W"]
    db = P["b"] - c["b"]
    phi0 = dW[:, 0, 0, None] * (n - t) + dW[:, 0, 1, None] * t + db[:, 0, None]
    phi1 = dW[:, 1, 0, None] * (n - t) + dW[:, 1, 1, None] * t + db[:, 1, None]
    a = (P["V"][:, 0, 0] - P["V"][:, 1, 0])[:, None]
    cc = (P["V"][:, 0, 1] - P["V"][:, 1, 1])[:, None]
    want = a * torch.cos(phi0) + cc * torch.sin(phi1)
    assert torch.allclose(ss.margins(P, n), want, atol=1e-12)


@pytest.mark.parametrize("eta", ss.ETAS)
def test_necessary_condition_holds_for_every_exact_point(eta):
    """Brute force on the whole box: every point exact at n has |w − u| < R_one, every point
    exact jointly up to n has |u|, |w| < R_joint."""
    P = ss.sample_box(eta, 20_000, seed=1)
    c = ss.center()
    u = P["W"][:, 0, 0] - c["W"][0, 0]
    w = P["W"][:, 0, 1] - c["W"][0, 1]
    for n in (8, 16):
        one = ss.exact_at(P, n)
        assert one.any()
        assert bool(((w - u)[one].abs() < ss.necessary_radius(eta, n, "one")).all())
        joint = ss.exact_jointly(P, n)
        R = ss.necessary_radius(eta, n, "joint")
        assert bool((u[joint].abs() < R).all() and (w[joint].abs() < R).all())


def test_restricted_sampling_region_and_share():
    eta, n = 0.25, 64
    c = ss.center()
    P = ss.sample_box(eta, 40_000, seed=2, n=n, kind="one")
    u = P["W"][:, 0, 0] - c["W"][0, 0]
    w = P["W"][:, 0, 1] - c["W"][0, 1]
    R = ss.necessary_radius(eta, n, "one")
    assert bool((w.abs() <= eta).all() and ((w - u).abs() <= R + 1e-15).all())
    # acceptance of the rejection step = band area / (2η · 2R)
    acc = P["W"].shape[0] / 40_000
    want = ss.restricted_share(eta, n, "one") * (2 * eta) / (2 * R)
    assert acc == pytest.approx(want, abs=4 * math.sqrt(want * (1 - want) / 40_000))
    Q = ss.sample_box(eta, 1000, seed=2, n=n, kind="joint")
    r = ss.necessary_radius(eta, n, "joint")
    du = Q["W"][:, 0, :] - c["W"][0]
    assert Q["W"].shape[0] == 1000 and bool((du.abs() <= r).all())
    assert ss.restricted_share(eta, n, "joint") == pytest.approx((r / eta) ** 2)


def test_volume_fraction_is_deterministic_and_bounded():
    a = ss.volume_fraction(0.1, 32, "joint", samples=300, seed=4)
    b = ss.volume_fraction(0.1, 32, "joint", samples=300, seed=4)
    assert a == b
    assert 0 <= a["lo"] <= a["fraction"] <= a["hi"] <= a["share"]


def test_linear_failure_length_matches_a_scan_over_every_count():
    for phi0, a0, a1 in ((1.5, 0.01, -0.02), (0.3, -0.05, 0.1), (1.57, 0.0, 0.0)):
        got = ss.linear_failure_length(phi0, a0, a1, 500)
        want = None
        for L in range(1, 501):
            f = [phi0 + a0 * (L - t) + a1 * t for t in range(L + 1)]
            if not all(0 < x < math.pi for x in f):
                want = L
                break
        assert got == want


def test_collective_phase_gives_the_margins():
    g = torch.Generator().manual_seed(0)
    net = Network(
        torch.randn(5, 2, generator=g, dtype=DT),
        torch.randn(2, 5, generator=g, dtype=DT),
        "sine",
        torch.randn(5, generator=g, dtype=DT),
    )
    L = 11
    t = torch.arange(L + 1)
    R, ph = ss.collective_phase(net, L - t, t)
    assert torch.allclose(R * torch.sin(ph), ss.length_margins(net, L), atol=1e-12)


def test_construction_never_fails_and_has_no_drift():
    c = ss.center()
    net = Network(c["W"], c["V"], "sine", c["b"])
    assert ss.first_failing_length(net, 300) is None
    assert ss.population_accuracy(net, 41) == pytest.approx(1.0, abs=1e-12)
    d = ss.drift_diagnostics(net, (2, 3, 19), 200)
    assert d["exact_on_train"] and d["predicted_failure"] is None
    assert d["measured_failure"] is None
    assert abs(d["dominant"]["delta"]) < 1e-12 and abs(d["dominant"]["nu"]) < 1e-12


def test_bias_free_relu_fails_by_length_two():
    g = torch.Generator().manual_seed(1)
    for _ in range(20):
        net = Network(
            torch.randn(8, 2, generator=g, dtype=DT),
            torch.randn(2, 8, generator=g, dtype=DT),
            "relu",
        )
        assert ss.first_failing_length(net, 10) in (1, 2)


def test_training_is_deterministic_and_reports_every_member():
    kw = ss.train_kwargs("smoke")
    kw.update(steps=5, test_lengths=[14], L_max=40)
    a = ss.train_variant(activation="sine", bias=True, **kw)
    b = ss.train_variant(activation="sine", bias=True, **kw)
    assert a == b
    assert len(a["rows"]) == len(kw["wds"]) * len(kw["seeds"])
    assert "drift" in a["rows"][0]


def test_plan_names_are_the_same_at_both_scales():
    s = [c.name for c in ss.cells("smoke")]
    f = [c.name for c in ss.cells("full")]
    assert s == f and all(schema(n) is not None for n in f)


def test_claims_are_ours_with_unique_ids():
    ids = [c.id for c in ss.CLAIMS]
    assert len(ids) == len(set(ids))
    checks = {
        "ch5.sumsine.volume_plain_check_eta0p25",
        "ch5.sumsine.volume_plain_check_eta0p1",
        "ch5.sumsine.relu_nobias_fails_by_2",
        "ch5.sumsine.relu_bias_width_bound",
    }
    assert {c.id: c.group for c in ss.CLAIMS} == {
        i: "self-check" if i in checks else "ours" for i in ids
    }


def test_bad_inputs_fail_with_one_line():
    # the public edges: the volume estimate and the training cell
    for bad in (dict(eta=0.5), dict(eta=-0.1), dict(kind="both"), dict(kind="x")):
        args = {"eta": 0.25, "n": 16, "kind": "one", "samples": 10, "seed": 0, **bad}
        with pytest.raises(ConfigError):
            ss.volume_fraction(**args)
    kw = ss.train_kwargs("smoke")
    with pytest.raises(ConfigError):
        ss.train_variant(activation="tanh", bias=True, **kw)
    with pytest.raises(ConfigError):
        ss.train_variant(activation="sine", bias=1, **kw)


def test_population_accuracy_is_a_probability_at_every_test_length():
    c = ss.center()
    net = Network(c["W"], c["V"], "sine", c["b"])
    for L in (3, 7, 13, 14, 38, 53):
        # the construction is right on every count, so the whole pmf is counted: 1 up to the
        # rounding of L + 1 float64 terms; a flipped answer on any count would lose ≥ 2^-L
        acc = ss.population_accuracy(net, L)
        assert 1.0 - (L + 1) * 2 * math.ulp(1.0) <= acc <= 1.0
