"""Chapter 4's experiment functions (lengthgen.chapters.ch4.experiments) on tiny configurations."""
import pytest
import torch

from lengthgen.chapters.ch4 import modular as M
from lengthgen.chapters.ch4 import experiments as ch4
from lengthgen.config import ConfigError


def test_protocol_scales():
    for scale in ("smoke", "full"):
        P = ch4.protocol(scale)
        assert set(P) >= {"relu_width", "two_lengths", "underparam", "overparam", "lengthgen", "transformer"}
    assert ch4.protocol("full")["lengthgen"]["test_lengths"] == M.OOD_LENGTHS
    with pytest.raises(ConfigError):
        ch4.protocol("huge")


def test_small_exhaustive_and_long_checks():
    rows = ch4.small_exhaustive(ps=(3, 4), ms=(1, 2))
    assert all(r["thm41"] == 1.0 and r["thm42_bias"] == 1.0 for r in rows)
    assert all(abs(r["fourier"] - r["fourier_theory"]) < 1e-12 for r in rows)
    s = ch4.summarize_checks(ch4.long_length_checks(primes=(7,), max_m=30, n=200))
    assert s["thm41@7"]["min_acc"] == 1.0 and s["thm42_bias@7"]["min_acc"] == 1.0
    assert s["fourier@7"]["errors_outside_tie_residues"] == 0
    assert s["fourier@7"]["max_abs_acc_minus_1_minus_tie_share"] < 1e-6
    f = ch4.summarize_checks(ch4.float_network_checks(primes=(7,), max_m=30, n=100, lengths=(1, 30)))
    assert f["thm42_bias@7"]["lengths"] == 2 and f["thm42_bias@7"]["min_acc"] == 1.0


def test_relu_bounds_table():
    rows = ch4.relu_bounds_table(p=5, lengths=(5, 20))
    assert rows[0]["paper_bound"] == 0.0 and rows[1]["path_bound"] == 4
    assert all(r["construction_width"] >= r["path_bound"] for r in rows)


def test_tiny_training_runs():
    r = ch4.relu_min_width({"p": 3, "lengths": (2,), "widths": (4,), "steps": 3, "lr": 1e-2, "seeds": (1,)})
    assert set(r["min_width"]) == {2} and len(r["rows"]) == 1
    t = ch4.two_lengths({"p": 5, "m1": 2, "m2": 3, "width": 4, "steps": 2, "lr": 1e-2, "seeds": (1,)})
    assert t["pairs"] == 4 and len(t["runs"]) == 3
    # Thm 4.4 holds for any bias-free ReLU network, trained or not: paired inputs share a prediction
    assert t["runs"][1]["same_prediction_pairs"] == [4]
    u = ch4.underparam({"configs": ((2, 5),), "widths": (4,), "budgets": (20, 40), "steps": 2, "lr": 1e-2,
                        "seeds": (1,), "n_test": 50})
    assert len(u["rows"]) == 2 * 2
    o = ch4.overparam({"m": 2, "p": 5, "width": 8, "n": 30, "wds": (0.0, 0.1), "steps": 2, "lr": 1e-2,
                       "seeds": (1,), "n_test": 50})
    assert len(o["rows"]) == 4 and all("normalized_margin" in r for r in o["rows"])
    lg = ch4.lengthgen({"p": 5, "width": 8, "budgets": (30,), "wds": (0.1,), "steps": 2, "lr": 1e-2,
                        "seeds": (1,), "n_test": 20, "test_lengths": (14, 40)}, ("sine", True))
    assert set(lg["rows"][0]) >= {"train", "3", "14", "40"} and lg["example_b"] is not None


def test_transformer_pieces():
    seq = ch4.addition_sequences(torch.tensor([[3, 4, 1]]), 5)
    assert seq.tolist() == [[3, 5, 4, 5, 1, 6]]
    model = ch4.LastTokenDecoder(5, 3, "sine", d_model=8)
    P = model.init([1, 2])
    assert float(P["l0.b1"].abs().max()) == 0.0 and float(P["l0.ln1_g"].min()) == 1.0
    assert 0.005 < float(P["l0.w1"].std()) < 0.02
    out = model.forward(P, seq.unsqueeze(0).expand(2, 1, 6))
    assert out.shape == (2, 1, 5)
    r = ch4.transformer_baseline({"m": 2, "p": 5, "d_model": 8, "budgets": (10,), "steps": 2, "lr": 1e-2,
                                  "seeds": (1,), "n_test": 20, "batch_size": 8})
    assert {row["activation"] for row in r["rows"]} == {"sine", "relu", "gelu"}
