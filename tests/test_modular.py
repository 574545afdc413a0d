"""Chapter 4's task and data, model, exact constructions and their checks, ReLU limits, margins and
sampler (lengthgen.chapters.ch4.{data, constructions, checks, training})."""

import math

import pytest
import torch

from lengthgen.chapters.ch4 import checks as K
from lengthgen.chapters.ch4 import constructions as C
from lengthgen.chapters.ch4 import data as D
from lengthgen.chapters.ch4 import training as G
from lengthgen.chapters.ch4 import paper
from lengthgen.chapters.ch4 import constructions as R
from lengthgen.chapters.ch4 import training as T
from lengthgen.config import ConfigError

SMALL = [(p, m) for p in range(2, 8) for m in range(1, 5) if p**m <= 2401]


# --------------------------------------------------------------------------- constructions, exhaustively
@pytest.mark.parametrize("p,m", SMALL)
def test_width2_constructions_exact_on_all_inputs(p, m):
    assert K.exhaustive_accuracy(C.construct_fixed_length(m, p), m)["acc"] == 1.0
    assert K.exhaustive_accuracy(C.construct_with_bias(p), m)["acc"] == 1.0


@pytest.mark.parametrize("p,m", [(p, m) for p, m in SMALL if p >= 3])
def test_fourier_construction_accuracy_is_exactly_1_minus_ties(p, m):
    net = C.construct_fourier(p)
    assert net.width == (p - 1) // 2
    r = K.exhaustive_accuracy(net, m)
    # all p^m ordered tuples: labels exactly uniform, so the accuracy is exactly 1 - 1/p or 1 - 2/p
    assert r["acc"] == pytest.approx(C.fourier_accuracy(p), abs=1e-12)
    assert r["ties"] == pytest.approx(1 - C.fourier_accuracy(p), abs=1e-12)


def test_fourier_scores_match_lemma():
    p = 9
    net = C.construct_fourier(p)
    for S in range(p):
        x = torch.zeros(p)
        x[S] = 1
        s = net.scores(x)
        want = torch.zeros(p, dtype=torch.float64)
        if S != 0:
            want[S] += p / 4
            want[(-S) % p] -= p / 4
        assert torch.allclose(s, want, atol=1e-9)


@pytest.mark.parametrize("p,m", [(2, 5), (3, 4), (5, 3), (4, 6), (7, 2)])
def test_relu_construction_interpolates_all_count_vectors(p, m):
    net = C.construct_relu(m, p)
    X = D.all_count_vectors(m, p)
    assert bool((net.predict(X, tol=1e-9) == D.labels_of_counts(X, p)).all())
    assert net.width >= R.path_lower_bound(m, p)
    # bias-free: at another length the kinks move and it fails somewhere
    X2 = D.all_count_vectors(m + 1, p)
    assert not bool((net.predict(X2, tol=1e-9) == D.labels_of_counts(X2, p)).all())


def test_automaton_agrees_with_float_network_and_exhaustive():
    p = 11
    for net in (C.construct_with_bias(p), C.construct_fourier(p)):
        a = K.automaton_accuracy(net, p, 40, n=300, seed=3)
        f = K.accuracy_by_length(net, p, 40, n=300, seed=3)
        assert a["acc"] == f["acc"] and a["ties"] == f["ties"]
        assert a["errors_outside_tie_residues"] == 0
    # Thm 4.1's network for m scores X_m as Thm 4.2's biased one does (the checks' family stand-in)
    for m in (1, 2, 3):
        X = D.all_count_vectors(m, p).double()
        assert torch.allclose(
            C.construct_fixed_length(m, p).scores(X), C.construct_with_bias(p).scores(X)
        )
    states, trans, start = K.phase_automaton(*C.construct_fourier(p).rational)
    assert states.shape[0] == p and trans.shape == (p, p)


def test_fixed_length_network_fails_at_other_lengths():
    r = K.automaton_accuracy(C.construct_fixed_length(7, 13), 13, 40, n=400)
    assert r["acc"][6] == 1.0 and min(r["acc"]) < 0.5


@pytest.mark.parametrize("p", [3, 5, 9, 11, 15])
@pytest.mark.parametrize("m", [1, 2, 4, 7, 10])
def test_derived_window_equals_brute_force_at_other_cases(p, m):
    """The window |m' − m − 4mk| < 2m/p (odd p) against brute force over every input, on (p, m)
    outside the ledger's cases, and against exhaustive enumeration where p^m' is small."""
    net = C.construct_fixed_length(m, p)
    bf = K.exact_lengths(net, p, 6 * m)
    assert bf == C.fixed_length_window(m, p, 6 * m)
    for length in range(1, 7):
        if p**length <= 60_000:
            exact = K.exhaustive_accuracy(net, length, tol=1e-9)["acc"] == 1.0
            assert exact == (length in bf), (p, m, length)


def test_window_of_even_p_is_wider_and_not_in_closed_form():
    """The page's example: at p = 4 the network built for m = 2 is exact at lengths 1–3 (the odd-p
    formula would give 2 alone); the closed form refuses even p."""
    assert K.exact_lengths(C.construct_fixed_length(2, 4), 4, 8) == [1, 2, 3]
    with pytest.raises(ConfigError, match="odd p"):
        C.fixed_length_window(2, 4, 8)


def test_exact_lengths_of_the_length_free_constructions():
    assert K.exact_lengths(C.construct_with_bias(7), 7, 30) == list(range(1, 31))
    assert K.exact_lengths(C.construct_fourier(7), 7, 10) == []  # the ties at S ≡ 0


# --------------------------------------------------------------------------- ReLU limits
def test_lower_bounds():
    for p in (2, 3, 5, 97):
        for m in (1, 2, 10, 100, 811):
            assert R.path_lower_bound(m, p) >= math.floor(R.relu_width_lower_bound(m, p)) or m < p
            assert (
                R.path_lower_bound(m, p) <= C.construct_relu(m, p).width if m * p < 2000 else True
            )
    assert R.relu_width_lower_bound(811, 97) == pytest.approx((811 - 97) / 99)
    assert R.path_lower_bound(811, 97) == 8


def test_path_kinks_of_constructed_relu():
    m, p = 12, 3
    net = C.construct_relu(m, p)
    kinks = R.path_kinks(net, m)
    # along the path S = t, so the kinks sit at the construction's positions below m
    assert kinks == pytest.approx([c for c in C.relu_kinks(m, p) if c < m])
    x = R.path_inputs(m, p)
    assert x.sum(1).tolist() == [m] * (m + 1)
    assert D.labels_of_counts(x, p).tolist() == [t % p for t in range(m + 1)]


def test_homogeneous_pairs_force_equal_predictions():
    p, m1, m2 = 5, 4, 6
    h = R.homogeneous_pairs(m1, m2, p)
    assert h["g"] == 2 and h["incongruent"] and len(h["pairs"]) == p - 1
    g = torch.Generator().manual_seed(0)
    net = D.Network(
        torch.randn(16, p, generator=g, dtype=torch.float64),
        torch.randn(p, 16, generator=g, dtype=torch.float64),
        "relu",
    )
    for x1, x2, y1, y2 in h["pairs"]:
        assert x1.sum() == m1 and x2.sum() == m2 and y1 != y2
        assert int(net.predict(x1, 0.0)) == int(net.predict(x2, 0.0))
    assert R.homogeneous_pairs(3, 8, 5)["incongruent"] is False


# --------------------------------------------------------------------------- data
def test_labels_uniform_over_all_tuples():
    for p, m in [(5, 3), (6, 2), (3, 5)]:
        y = D.labels_of(D.all_inputs(m, p), p)
        assert torch.bincount(y, minlength=p).tolist() == [p ** (m - 1)] * p


def test_count_vectors_and_labels():
    tok = torch.tensor([[0, 2, 2, 4], [1, 1, 1, 1]])
    x = D.count_vectors(tok, 5)
    assert x.tolist() == [[1, 0, 2, 0, 1], [0, 4, 0, 0, 0]]
    assert D.labels_of(tok, 5).tolist() == [3, 4]
    assert D.labels_of_counts(x, 5).tolist() == [3, 4]
    X = D.all_count_vectors(3, 4)
    assert X.shape[0] == math.comb(6, 3) and bool((X.sum(1) == 3).all())


def test_split_budget():
    assert D.split_budget(4000, paper.TRAIN_LENGTHS) == [
        572,
        572,
        572,
        571,
        571,
        571,
        571,
    ]
    assert sum(D.split_budget(1000, paper.TRAIN_LENGTHS)) == 1000


def test_train_set_seeding_and_prefix_property():
    p, L = 53, paper.TRAIN_LENGTHS
    small, big = D.train_set(1337, p, L, 1000), D.train_set(1337, p, L, 2000)
    assert len(small) == 1000 and len(big) == 2000
    for m in L:
        s, b = small.x[small.m == m], big.x[big.m == m]
        assert torch.equal(s, b[: len(s)])  # strict prefix within each length
        assert bool((s.sum(1) == m).all())
    # the shard of length m is drawn by the generator seeded seed*1009 + m
    g = torch.Generator().manual_seed(1337 * 1009 + 2)
    tok = torch.randint(0, p, (143, 2), generator=g)
    assert torch.equal(small.x[small.m == 2], D.count_vectors(tok, p))
    assert torch.equal(small.y[small.m == 2], D.labels_of(tok, p))
    assert not torch.equal(D.train_set(1338, p, L, 1000).x, small.x)
    assert torch.equal(D.train_set(1337, p, L, 1000).x, small.x)


def test_test_set_seeding():
    t = D.test_set(1337, 97, 811, n=50)
    g = torch.Generator().manual_seed(1337 * 2009 + 811)
    tok = torch.randint(0, 97, (50, 811), generator=g)
    assert torch.equal(t.y, D.labels_of(tok, 97)) and bool((t.x.sum(1) == 811).all())
    assert D.data_seed(1, 3) == 1012 and D.data_seed(1, 3, test=True) == 2012
    big = D.test_set(7, 97, 100, n=20000)
    counts = torch.bincount(big.y, minlength=97).double()
    chi2 = float(((counts - 20000 / 97) ** 2 / (20000 / 97)).sum())
    assert chi2 < 160  # 96 d.o.f.: the labels are uniform (p-value far from 0)


def test_epoch_sampler_visits_each_example_once_per_epoch():
    ds = [D.train_set(1, 7, (2, 3), 10), D.train_set(2, 7, (2, 3), 7)]
    smp = T.EpochSampler(ds, batch_size=4)
    gens = [torch.Generator().manual_seed(s) for s in (5, 6)]
    seen = [[], []]
    for step in range(3):  # 3 batches = one epoch of member 0
        x, y = smp(step, gens)
        assert x.shape == (2, 4, 7) and y.shape == (2, 4)
        for e in range(2):
            seen[e].append(x[e][y[e] >= 0])
    x0 = torch.cat(seen[0])
    assert x0.shape[0] == 10 and sorted(map(tuple, x0.tolist())) == sorted(
        map(tuple, ds[0].x.tolist())
    )
    assert torch.cat(seen[1][:2]).shape[0] == 7  # member 1: 2 batches per epoch
    loss = T.masked_loss(torch.zeros(2, 4, 7), y)
    assert torch.allclose(loss, torch.full((2,), math.log(7)))


def test_length_sampler_walks_lengths_in_order_with_single_length_batches():
    ds = [D.train_set(1, 7, (2, 3, 5), 10), D.train_set(2, 7, (2, 3, 5), 7)]
    smp = T.LengthEpochSampler(ds, batch_size=3)
    assert [smp.steps_per_epoch(e) for e in (0, 1)] == [4, 3]  # shards 4,3,3 and 3,2,2
    gens = [torch.Generator().manual_seed(s) for s in (5, 6)]
    seen, lengths = [], []
    for step in range(4):  # one epoch of member 0
        x, y = smp(step, gens)
        rows = x[0][y[0] >= 0]
        lengths.append(sorted(set(rows.sum(1).long().tolist())))
        seen.append(rows)
    assert lengths == [[2], [2], [3], [5]]  # one length per batch, in order
    x0 = torch.cat(seen)
    assert sorted(map(tuple, x0.tolist())) == sorted(map(tuple, ds[0].x.tolist()))
    x, y = smp(4, gens)  # a new epoch starts at length 2
    assert set(x[0][y[0] >= 0].sum(1).long().tolist()) == {2}
    with pytest.raises(ConfigError):
        T.fit(
            D.ModularMLP(7, 2, "sine"),
            ds,
            optim=None,
            steps=1,
            seeds=[1, 2],
            sampler="x",
        )


def test_updates_per_epoch_match_the_recorded_paper_protocol():
    L7 = paper.TRAIN_LENGTHS
    upe = {n: T.updates_per_epoch(n, L7) for n in paper.PAPER_LENGTHGEN_BUDGETS[97]}
    assert upe == {4000: 7, 8000: 14, 16000: 21, 32000: 35, 64000: 63}
    assert all(T.updates_per_epoch(n, L7) == 7 for n in (1000, 2000))
    assert T.updates_per_epoch(8000, L7, by_length=False) == 8
    rec = paper.PAPER_PROTOCOL["updates (B.1.3)"]
    for n, k in upe.items():
        assert f" {k} " in rec and f"{paper.PAPER_EPOCHS * k / 1e6:.1f}M" in rec
    ns = paper.PAPER_PROTOCOL["Newton–Schulz dtype"]  # unstated by the paper: our reading, said so
    assert (
        ns.startswith("unstated")
        and "float32 throughout" in ns
        and ns.endswith("we read it as float32")
    )
    assert paper.NS_DTYPE == "float32"
    assert T.b1_optimizer("muon", 1e-3, 0.1, "sine", True).ns_dtype == "float32"


# --------------------------------------------------------------------------- model
def test_model_init_forward_and_determinism():
    net = D.ModularMLP(p=5, width=3, activation="sine", bias=True)
    a, b = net.init([1, 2]), net.init([1, 2])
    assert a["W"].shape == (2, 3, 5) and a["V"].shape == (2, 5, 3) and a["b"].shape == (2, 3)
    assert a["W"].dtype == torch.float32 and torch.equal(a["W"], b["W"])
    assert not torch.equal(a["W"][0], a["W"][1])
    assert 0.003 < float(net.init(list(range(50)))["W"].std()) < 0.03
    x = torch.rand(2, 4, 5)
    out = net.forward(a, x)
    want = torch.sin(x @ a["W"].transpose(1, 2) + a["b"][:, None]) @ a["V"].transpose(1, 2)
    assert out.shape == (2, 4, 5) and torch.allclose(out, want)
    relu = D.ModularMLP(p=5, width=3, activation="relu")
    assert "b" not in relu.init([0])


# --------------------------------------------------------------------------- margins
def test_margins_hand_made():
    s = torch.tensor([[3.0, 1.0, 0.0], [0.0, 2.0, 2.0], [1.0, 4.0, 0.5]])
    y = torch.tensor([0, 1, 0])
    assert G.margins(s, y).tolist() == [2.0, 0.0, -3.0]
    with pytest.raises(ConfigError, match="disagree"):
        G.margins(s, y[:1])
    assert D.uargmax(s).tolist() == [0, -1, 1]
    assert float(G.percentile_margin(s, y, 50.0)) == 0.0
    assert float(G.percentile_margin(s, y, 0.0)) == -3.0
    params = {"W": torch.tensor([[[3.0, 4.0]]]), "V": torch.tensor([[[2.0], [-1.0]]])}
    assert float(G.layer_norm_product(params, "sine")) == 2.0  # max row ℓ1 norm of V
    assert float(G.layer_norm_product(params, "relu")) == pytest.approx(5 * math.sqrt(5))
    # a hand-made ReLU net: x = e_0 -> h = 3, scores (6, -3): margin 9, normalised by 5·√5
    one = [D.Dataset(torch.tensor([[1.0, 0.0]]), torch.tensor([0]), torch.tensor([1]))]
    relu = G.train_margins(D.ModularMLP(2, 1, "relu"), params, one, q=0.5)
    assert relu["margin"] == [9.0] and relu["normalized"][0] == pytest.approx(
        9 / (5 * math.sqrt(5))
    )
    # sine: scores (2 sin 3, -sin 3): margin 3 sin 3, normalised by 2
    sine = G.train_margins(D.ModularMLP(2, 1, "sine"), params, one)
    assert sine["normalized"][0] == pytest.approx(3 * math.sin(3) / 2, rel=1e-6)


def test_construction_margins():
    p = 11
    net = C.construct_with_bias(p)
    x = D.count_vectors(D.all_inputs(3, p), p, torch.float64)
    g = G.margins(net.scores(x), D.labels_of_counts(x, p))
    assert float(g.min()) == pytest.approx(1 - math.cos(2 * math.pi / p), abs=1e-9)


# --------------------------------------------------------------------------- bad inputs
@pytest.mark.parametrize(
    "call",
    [
        lambda: D.check_modulus(1),
        lambda: D.check_modulus(2.0),
        lambda: D.check_length(0),
        lambda: D.labels_of([[0, 5]], 5),
        lambda: D.labels_of([[-1, 0]], 5),
        lambda: D.labels_of([[0.5]], 5),
        lambda: D.count_vectors([[0, 7]], 7),
        lambda: D.sample_tokens(3, 0, 5),
        lambda: D.sample_tokens(3, 2, 1),
        lambda: C.construct_fixed_length(0, 5),
        lambda: C.construct_with_bias(1),
        lambda: C.construct_fourier(2),
        lambda: C.construct_relu(3, 1),
        lambda: D.all_inputs(20, 97),
        lambda: D.split_budget(0, (2, 3)),
        lambda: D.split_budget(10, ()),
        lambda: D.train_set(-1, 5, (2,), 10),
        lambda: D.test_set(0, 5, 0),
        lambda: D.ModularMLP(5, 3, activation="gelu"),
        lambda: D.ModularMLP(1, 3),
        lambda: D.ModularMLP(5, 0),
        lambda: D.uargmax(torch.zeros(3, 1)),
        lambda: D.labels_of_counts(torch.tensor([[1, -1, 0]]), 3),
        lambda: D.check_counts(torch.zeros(2, 4), 3),
        lambda: K.automaton_accuracy(C.construct_relu(3, 5), 5, 3),
        lambda: K.exact_lengths(C.construct_relu(3, 5), 5, 3),
        lambda: K.exact_lengths(C.construct_with_bias(5), 5, 0),
        lambda: C.fixed_length_window(0, 5, 3),
        lambda: R.path_kinks(C.construct_with_bias(5), 3),
    ],
)
def test_bad_inputs_raise(call):
    with pytest.raises(ConfigError):
        call()
