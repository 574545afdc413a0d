"""Chapter 2 models (Zhu & Chiang 2026 §2.2, §4.2, App. C.1): counts, hand-computed outputs, batching, bad input."""

import math

import pytest
import torch

from lengthgen.chapters.ch2 import single_layer as sl
from lengthgen.nn.tasks import first_bank, index_bank, majority_bank


@pytest.mark.parametrize("variant,extra", [("gen", 20), ("pos", 18), ("norm", 18), ("sin", 32)])
@pytest.mark.parametrize("h", [2, 8])
def test_parameter_counts(variant, extra, h):
    assert sl.param_count(variant, h) == 5 * h + extra
    p = sl.SingleLayer(variant, h, max_lengths=11).init([2000])
    assert sum(t[0].numel() for k, t in p.items() if not k.startswith("_")) == 5 * h + extra


def _reference(v, P, bits, k):
    """Direct transcription of eqs. 2–3 (and 8, 19, 129) for one input."""
    n = len(bits)
    if v in ("pos", "norm"):
        a, b, r, s, cK = P["a"], P["b"], P["r"], P["s"], P["c_K"]
        q = a * k + b
        qq = b + (a * k) / (1 + (a * k).dot(a * k)) if v == "norm" else q
        g = torch.stack([q.dot(r * j + cK) + qq.dot(s * j * j) for j in range(1, n + 1)])
        vals = torch.stack(
            [
                P["C_V"] @ torch.tensor([1.0 - w, float(w)], dtype=torch.float64) + P["b_V"]
                for w in bits
            ]
        )
    else:
        toks = [
            torch.tensor(
                [1.0 - w, float(w)] + ([] if v == "gen" else [math.sin(j), math.cos(j)]),
                dtype=torch.float64,
            )
            for j, w in enumerate(bits, 1)
        ]
        q = P["W_Q"] @ torch.zeros(P["W_Q"].shape[1], dtype=torch.float64) + P["b_Q"]
        g = torch.stack([q.dot(P["W_K"] @ t + P["b_K"]) for t in toks])
        vals = torch.stack([P["W_V"] @ t + P["b_V"] for t in toks])
    A = torch.softmax(g * math.log(n), 0) @ vals
    return P["W2"] @ torch.relu(P["W1"] @ A + P["b1"]) + P["b2"]


@pytest.mark.parametrize("variant", sl.VARIANTS)
def test_forward_matches_definition(variant):
    g = torch.Generator().manual_seed(3)
    m = sl.SingleLayer(variant, 3, max_lengths=5)
    p = m.init([7])
    p = {
        k: (
            t + 0.5 * torch.randn(t.shape, generator=g, dtype=t.dtype)
            if t.is_floating_point()
            else t
        )
        for k, t in p.items()
    }
    P1 = {k: t[0] for k, t in p.items()}
    for n in (1, 2, 5, 9):
        bits = torch.randint(0, 2, (n,), generator=g)
        k = int(torch.randint(1, n + 1, (1,), generator=g))
        out = m.forward(p, sl.encode(bits[None], torch.tensor([k]), pad_to=12))[0, 0]
        assert torch.allclose(out, _reference(variant, P1, bits.tolist(), k), atol=1e-12)


def test_hand_computed_pos_case():
    # n = 2, k = 1, center-like point: g_j = 2kj − j², so scores (1, 0); α₁ = 2/(2+1) with log-2 scaling
    P = {
        "a": torch.tensor([[2.0, 0]]),
        "b": torch.tensor([[0, -1.0]]),
        "r": torch.tensor([[1.0, 0]]),
        "s": torch.tensor([[0, 1.0]]),
        "c_K": torch.zeros(1, 2),
        "C_V": torch.eye(2)[None],
        "b_V": torch.zeros(1, 2),
        "W1": torch.eye(2)[None],
        "b1": torch.zeros(1, 2),
        "W2": torch.eye(2)[None],
        "b2": torch.zeros(1, 2),
    }
    P = {k: v.double() for k, v in P.items()}
    out = sl.forward("pos", P, sl.encode(torch.tensor([[1, 0]]), torch.tensor([1])))[0, 0]
    a1 = 2 / 3  # exp(log2·1) / (exp(log2·1) + exp(0))
    assert torch.allclose(out, torch.tensor([1 - a1, a1], dtype=torch.float64))


def test_pairing_and_ensemble_equals_loop():
    m = sl.SingleLayer("pos", 8, max_lengths=[11, 11, 51], variants=["pos", "norm", "pos"])
    p = m.init([2000, 2000, 2001])
    for k, v in p.items():
        if not k.startswith("_"):
            assert torch.equal(v[0], v[1])  # A_pos / A_norm pairs share initial tensors
    assert p["_norm"].tolist() == [False, True, False]
    x = sl.encode(torch.randint(0, 2, (6, 9)), torch.randint(1, 10, (6,)))
    out = m.forward(p, x)
    for e, v in enumerate(["pos", "norm", "pos"]):
        single = {k: t[e : e + 1] for k, t in p.items() if not k.startswith("_")}
        assert torch.allclose(out[e], sl.forward(v, single, x)[0])


def test_init_scales_follow_d2():
    p = sl.SingleLayer("pos", 8, max_lengths=51).init(list(range(2000, 2400)))
    assert abs(float(p["a"].std()) - 0.1 / 51) < 0.15 * 0.1 / 51
    assert abs(float(p["s"].std()) - 0.1 / 51**2) < 0.15 * 0.1 / 51**2
    assert abs(float(p["b"].std()) - 0.1) < 0.015
    assert float(p["b1"].abs().max()) == 0.0
    gen = sl.SingleLayer("gen", 8, max_lengths=51).init([2000])
    pos = sl.SingleLayer("pos", 8, max_lengths=51).init([2000])
    assert (
        torch.equal(gen["W_V"], pos["C_V"])
        and torch.equal(gen["b_Q"], pos["b"])
        and torch.equal(gen["W1"], pos["W1"])
    )


def test_banks_balance_and_pairing():
    b = first_bank(7, 1000, torch.Generator().manual_seed(0))
    assert int(b[:, 0].sum()) == 500
    m = majority_bank(9, 1000, torch.Generator().manual_seed(0))
    assert torch.equal(m[500:], 1 - m[:500])
    s, k = index_bank(9, 1000, torch.Generator().manual_seed(0))
    assert torch.equal(s[500:], 1 - s[:500]) and torch.equal(k[500:], k[:500])
    assert int(k.min()) >= 1 and int(k.max()) <= 9


def test_bad_inputs():
    with pytest.raises(ValueError, match="h must be an integer >= 2"):
        sl.param_count("pos", 1)
    with pytest.raises(ValueError, match="unknown variant 'rope'.*gen"):
        sl.SingleLayer("rope")
    with pytest.raises(ValueError, match="one parameter family"):
        sl.SingleLayer(variants=["pos", "gen"])
    with pytest.raises(ValueError, match=r"\[1, 3\]"):
        sl.encode(torch.tensor([[0, 1, 1]]), torch.tensor([4]))
    with pytest.raises(ValueError, match="pad_to"):
        sl.encode(torch.tensor([[0, 1, 1]]), pad_to=2)
    with pytest.raises(ValueError, match="odd"):
        majority_bank(10)
    with pytest.raises(ValueError, match="even"):
        first_bank(5, 999)


def test_norm_map_default_is_the_papers_and_misread_is_an_ablation():
    v = torch.tensor([[3.0, 4.0]], dtype=torch.float64)
    # eq. 17: F(v) = v/√(1+‖v‖²) is the default; our earlier misreading v/(1+‖v‖²) only on request
    assert torch.allclose(sl.F_norm(v), v / math.sqrt(26)) and torch.allclose(
        sl.F_norm(v, "sqrt"), v / math.sqrt(26)
    )
    assert torch.allclose(sl.F_norm(v, "misread"), v / 26)
    assert sl.NORM_MAPS == ("sqrt", "misread")
    # F(ak) = λ_a(k) â with 0 ≤ 1 − λ_a(k) ≤ 1/(2k²‖a‖²) (eqs. 105–106): the quadratic query tends to â
    a = torch.tensor([0.3, -0.4], dtype=torch.float64)
    for k in (1, 10, 1000):
        lam = (sl.F_norm(a * k) / (a / a.norm())).mean()
        assert 0 <= 1 - lam <= 1 / (2 * k * k * float(a.norm()) ** 2) + 1e-15
    x = sl.encode(torch.randint(0, 2, (4, 9)), torch.randint(1, 10, (4,)))
    a = sl.SingleLayer("pos", 8, max_lengths=9, variants=["pos", "norm"])
    b = sl.SingleLayer("pos", 8, max_lengths=9, variants=["pos", "norm"], norm_map="misread")
    assert a.norm_map == "sqrt" and "_norm_misread" not in a.init([1, 1])
    pa, pb = a.init([1, 1]), b.init([1, 1])
    pa["a"] = pb["a"] = torch.full((2, 2), 0.7, dtype=torch.float64)
    oa, ob = a.forward(pa, x), b.forward(pb, x)
    assert torch.equal(oa[0], ob[0]) and not torch.allclose(oa[1], ob[1])
    # the default forward pass uses v/√(1+‖v‖²) in the quadratic channel (eq. 19)
    k = x[:, -1].to(torch.float64)
    c1, c2, _ = sl._positional_coefs(pa, k.expand(2, -1), True)
    ak = pa["a"][1] * k[:, None]
    assert torch.allclose(
        c2[1],
        ((pa["b"][1] + ak / torch.sqrt(1 + (ak * ak).sum(-1, keepdim=True))) * pa["s"][1]).sum(-1),
    )
    with pytest.raises(ValueError, match="unknown norm map 'tanh'.*valid choices: sqrt, misread"):
        sl.SingleLayer("norm", norm_map="tanh")
    with pytest.raises(ValueError, match="unknown norm map 'paper'"):
        sl.F_norm(v, "paper")


def test_counting_tasks_fixed_token_makes_pos_and_norm_identical():
    """App. D.7: with the fixed index token 0 (FIXED_TOKEN for Majority) A_pos and A_norm compute the
    same function for the same parameters; with token 1 (First's) they differ."""
    assert sl.FIXED_TOKEN == {"first": 1, "majority": 0, "parity": 0}
    bits = torch.randint(0, 2, (16, 9), generator=torch.Generator().manual_seed(3))
    m = sl.SingleLayer("pos", 4, max_lengths=9, variants=["pos", "norm"])
    p = m.init([5, 5])  # identical tensors for both members
    p["a"] = torch.full((2, 2), 0.9, dtype=torch.float64)
    x0 = sl.encode(bits, fixed=0)
    assert torch.equal(x0[:, -1], torch.zeros(16, dtype=torch.long))
    o0 = m.forward(p, x0)
    assert torch.equal(o0[0], o0[1])
    o1 = m.forward(p, sl.encode(bits, fixed=1))
    assert not torch.allclose(o1[0], o1[1])
    with pytest.raises(ValueError, match="fixed index token must be 0 or 1, got 2"):
        sl.encode(bits, fixed=2)
