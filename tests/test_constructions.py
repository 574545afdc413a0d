"""Exact PARITY and FIRST transformers (Chiang & Cholak 2022), checked exhaustively for n ≤ 10."""

import math

import pytest
import torch

from lengthgen.chapters.ch1 import constructions as C
from lengthgen.chapters.ch1 import measures
from lengthgen.nn import tasks
from lengthgen.chapters.ch1.encoder import accuracy

VARIANTS = [
    ("parity", {}),
    ("parity", {"layer_norm": True, "eps": 0.0}),
    ("parity", {"layer_norm": True, "eps": 1e-5}),
    ("first", {}),
    ("first", {"layer_norm": True, "eps": 0.0}),
    ("first", {"layer_norm": True, "eps": 1e-5}),
    ("first", {"log_scaled": True}),
    ("parity", {"log_scaled": True}),
    ("first_log_scaled", {}),
    ("first_log_scaled", {"layer_norm": True, "eps": 0.0}),
    ("parity", {"sqrt_d": True}),
    ("parity", {"sqrt_d": True, "layer_norm": True, "eps": 1e-5}),
    ("first", {"sqrt_d": True}),
    ("first", {"sqrt_d": True, "layer_norm": True, "eps": 0.0}),
]
ALL = {n: tasks.all_strings(n) for n in range(1, 11)}


def task_of(name):
    return "parity" if name == "parity" else "first"


@pytest.mark.parametrize("name,kw", VARIANTS, ids=lambda v: str(v))
def test_exact_on_every_string_up_to_10(name, kw):
    enc, p = C.build(name, **kw)
    for n, s in ALL.items():
        logits = enc(p, s)[0]
        assert float(accuracy(logits, tasks.label(task_of(name), s))) == 1.0, (
            f"{name} {kw} fails at n = {n}"
        )


def test_first_logit_closed_form():
    # Knowl 2: s = e^c / (e^c + N − 1) · (1[w_1 = 1] − 1/2)
    for c in (0.5, 1.0, 3.0):
        enc, p = C.first(c=c)
        for n in (1, 4, 10):
            s = ALL[n]
            N = n + 1
            want = math.exp(c) / (math.exp(c) + N - 1) * (s[:, 0].double() - 0.5)
            assert torch.allclose(enc(p, s)[0], want, atol=1e-14)


def test_sqrt_d_convention():
    # default unchanged (logit exactly c); sqrt_d lays the constructions out as the authors' torch
    # scripts do: each head divides by √(width / heads), PARITY padded from 9 to 10 over two heads
    assert torch.equal(C.first()[1]["wq"], C.first(sqrt_d=False)[1]["wq"])
    assert torch.equal(C.parity()[1]["wq"], C.parity(sqrt_d=False)[1]["wq"])
    assert C.parity()[0].config.d_model == 9
    assert C.parity(sqrt_d=True)[0].config.d_model == 10
    assert C.parity(sqrt_d=True, layer_norm=True)[0].config.d_model == 20
    assert C.first(sqrt_d=True)[0].config.d_model == 6
    for c in (1.0, 2.0):
        enc, p = C.first(c=c, sqrt_d=True)
        s = ALL[6]
        a = c / math.sqrt(6)
        want = math.exp(a) / (math.exp(a) + 6) * (s[:, 0].double() - 0.5)
        assert torch.allclose(enc(p, s)[0], want, atol=1e-14)
    # query weight relative to the default: 1/√(width/heads), width doubled by paired layer norm
    for name, kw, per_head in (
        ("first", {}, 6),
        ("first", {"layer_norm": True}, 12),
        ("parity", {}, 5),
        ("parity", {"layer_norm": True}, 10),
    ):
        q0 = C.build(name, **kw)[1]["wq"]
        q1 = C.build(name, sqrt_d=True, **kw)[1]["wq"]
        q0, q1 = (
            q0[q0 != 0],
            q1[q1 != 0],
        )  # PARITY's padding changes the shape, not the weights
        assert q0.numel() > 0 and torch.allclose(q1 * math.sqrt(per_head), q0, atol=1e-15), (
            name,
            kw,
        )
    with pytest.raises(TypeError):
        C.first(sqrt_d=1)
    with pytest.raises(TypeError):
        C.parity(sqrt_d="yes")


def test_parity_logit_closed_form_on_every_string():
    # eq. eq-parity-logit: |s| depends only on n and the parity of k; sign +1 for odd k
    for kw, a in (({}, 1.0), ({"sqrt_d": True}, 1 / math.sqrt(5))):
        enc, p = C.parity(**kw)
        for n, s in ALL.items():
            form = measures.parity_logit_closed_form(n, a)
            odd = s.sum(-1) % 2 == 1
            want = torch.where(
                odd,
                torch.tensor(form["odd"], dtype=torch.float64),
                -torch.tensor(form["even"], dtype=torch.float64),
            )
            assert torch.allclose(enc(p, s)[0], want, atol=1e-15, rtol=1e-12), (kw, n)
    # n = 1: both magnitudes are tanh(a) / 2
    form = measures.parity_logit_closed_form(1)
    assert form["odd"] == pytest.approx(math.tanh(1) / 2, abs=1e-15)
    assert form["even"] == pytest.approx(math.tanh(1) / 2, abs=1e-15)
    with pytest.raises(ValueError, match="n must be"):
        measures.parity_logit_closed_form(0)
    with pytest.raises(ValueError, match="a must be > 0"):
        measures.parity_logit_closed_form(3, 0.0)
    with pytest.raises(ValueError, match="a must be a finite"):
        measures.parity_logit_closed_form(3, float("nan"))


def test_favoured_logit_reads_the_layout():
    assert measures.favoured_logit("parity") == pytest.approx(1.0, abs=1e-12)
    assert measures.favoured_logit("first", {"c": 2.0}) == pytest.approx(2.0, abs=1e-12)
    assert measures.favoured_logit("parity", {"sqrt_d": True}) == pytest.approx(
        1 / math.sqrt(5), abs=1e-12
    )
    assert measures.favoured_logit("first", {"sqrt_d": True}) == pytest.approx(
        1 / math.sqrt(6), abs=1e-12
    )
    with pytest.raises(ValueError, match="without layer norm"):
        measures.favoured_logit("parity", {"layer_norm": True})
    with pytest.raises(ValueError, match="n must be an integer >= 2"):
        measures.favoured_logit("first", n=1)
    with pytest.raises(ValueError, match="'first_log_scaled'"):
        measures.favoured_logit("first_log_scaled")


def test_parity_logit_shrinks_but_keeps_sign():
    enc, p = C.parity()
    mags = [float(enc(p, ALL[n])[0].abs().max()) for n in range(1, 11)]
    assert all(b < a for a, b in zip(mags, mags[1:]))


def test_log_scaled_first_bounds():
    # 1/4 < |s| < 1/2 for c = 2 at every length (chapter 1's derivation), exhaustive for n ≤ 10
    enc, p = C.first_log_scaled()
    for n, s in ALL.items():
        mag = enc(p, s)[0].abs()
        assert float(mag.min()) > 0.25 and float(mag.max()) < 0.5
        N = n + 1
        ones = s[:, 1:].sum(-1).double()
        num = N**2 * (s[:, 0].double() - 0.5) + ones - (n - 1) / 2
        assert torch.allclose(enc(p, s)[0], num / (N**2 + N - 1), atol=1e-14)


def test_flawed_first_fails_without_scaling():
    enc, p = C.first_log_scaled(log_scaled=False)
    s = ALL[10]
    assert float(accuracy(enc(p, s)[0], tasks.label("first", s))) < 1.0


def test_eps_zero_output_is_length_independent():
    # Knowl 3: with ε = 0 the clean-up maps [s; −s] to ±√(d/2) whatever |s| is
    # (in the authors' layout PARITY's unused coordinate makes d = 20)
    for name, d, kw in (
        ("parity", 18, {}),
        ("first", 12, {}),
        ("parity", 20, {"sqrt_d": True}),
        ("first", 12, {"sqrt_d": True}),
    ):
        for scale in (1.0, 10.0):
            enc, p = C.build(name, layer_norm=True, eps=0.0, output_scale=scale, **kw)
            mags = torch.cat([enc(p, ALL[n])[0].abs() for n in range(1, 11)])
            assert torch.allclose(mags, torch.full_like(mags, scale * math.sqrt(d / 2)), rtol=1e-9)
    enc, p = C.parity(layer_norm=True, eps=1e-5)
    mags = [float(enc(p, ALL[n])[0].abs().mean()) for n in (1, 10)]
    assert mags[1] < mags[0]


def test_value_parameter_perturbation_breaks_parity():
    enc, p = C.parity(layer_norm=True, eps=0.0, value_k=1.2)
    s = ALL[10]
    assert float(accuracy(enc(p, s)[0], tasks.label("parity", s))) < 1.0


def test_construction_bad_inputs():
    with pytest.raises(ValueError, match="eps must be >= 0"):
        C.parity(layer_norm=True, eps=-1.0)
    with pytest.raises(ValueError, match="eps must be >= 0"):
        C.first(layer_norm=True, eps=-1e-5)
    with pytest.raises(ValueError, match="output_scale"):
        C.first(output_scale=0.0)
    with pytest.raises(ValueError, match="'majority'.*parity"):
        C.build("majority")
    enc, p = C.first()
    with pytest.raises(ValueError, match="non-empty"):
        enc(p, torch.zeros(1, 0, dtype=torch.long))
    with pytest.raises(ValueError, match="binary"):
        enc(p, torch.tensor([[1, 0, 3]]))
    p["b1"][0, 0, 0] = 1.0
    with pytest.raises(ValueError, match="bias-free"):
        C.paired(enc, p)
    enc2, p2 = C.first(layer_norm=True)
    with pytest.raises(ValueError, match="without layer norm"):
        C.paired(enc2, p2)
