"""Chapter 2 reproduction entry point: sampler, banks, a tiny end-to-end run, summaries, bad input."""
import numpy as np
import pytest
import torch

from lengthgen.chapters.ch2 import experiments as ch2
from lengthgen.chapters.ch2.single_layer import PAD


def test_test_lengths_and_banks():
    assert ch2.test_lengths(51) == (51, 103, 153, 255, 409, 511)
    x, y = ch2.test_bank("index", 23, 100)
    assert x.shape == (100, 24) and torch.equal(y[50:], 1 - y[:50])          # complemented strings, same queries
    x2, _ = ch2.test_bank("index", 23, 100)
    assert torch.equal(x, x2)                                               # saved bank: deterministic
    x, y = ch2.test_bank("first", 11, 100)
    assert int(y.sum()) == 50
    with pytest.raises(ValueError, match="odd"):
        ch2.test_bank("majority", 10, 100)


def test_sampler_lengths_and_pairing():
    Ns = [11, 11, 51, 51]
    samp = ch2.make_sampler("majority", Ns, [0, 0, 1, 1], batch=32)
    seen = set()
    for step in range(200):
        x, y = samp(step, None)
        n = (x[..., :-1] != PAD).sum(-1)
        assert torch.equal(x[0], x[1]) and torch.equal(x[2], x[3])            # paired members share batches
        assert int(n[0, 0]) <= 11 and int(n[2, 0]) <= 51 and int(n[0, 0]) % 2 == 1
        ones = (x[..., :-1] == 1).sum(-1)
        assert torch.equal(y, (ones >= (n + 1) // 2).long())
        seen.add(int(n[0, 0]))
    assert seen == set(range(1, 12, 2))
    x, y = ch2.make_sampler("index", [5], [0], batch=64)(3, None)
    k = x[0, :, -1].long()
    assert torch.equal(y[0], x[0].gather(-1, (k - 1)[:, None]).squeeze(-1).long())


def test_tiny_run_and_summaries():
    r = ch2.run_experiment("index_posnorm", seeds=(2000, 2001), Ns=(5,), steps=20, every=10, val_size=20, test_size=20,
                           batch=16, progress=False)
    assert len(r["members"]) == 4 and {m["variant"] for m in r["members"]} == {"pos", "norm"}
    m, lo, hi = ch2.longest_summary(r, "pos", 5, n_boot=200)
    assert lo <= m <= hi
    ca = ch2.coefficient_analysis(r, n_perm=50)
    rho, p = ca["chi"]["rho"], ca["chi"]["p"]
    assert (np.isnan(rho) and np.isnan(p)) or (-1 <= rho <= 1 and 0 < p <= 1)
    p = ch2.run_experiment("parity_gen", seeds=(2000,), Ns=(5,), steps=10, every=5, val_size=10, test_size=10,
                           batch=8, progress=False)
    assert p["members"][0]["sign_changes"] <= p["members"][0]["kinks"] + 1


def test_bad_input():
    with pytest.raises(ValueError, match="unknown experiment"):
        ch2.run_experiment("sorting", seeds=(1,), Ns=(5,), steps=1, every=1, val_size=2, test_size=2, batch=2)
    with pytest.raises(ValueError, match="N must be an integer"):
        ch2.test_lengths(0)


def test_cap_note():
    res = {"steps_cap": 100, "members": [{"variant": "pos", "stop_step": 100, "best_val_acc": 1.0},
                                         {"variant": "pos", "stop_step": 50, "best_val_acc": 1.0}]}
    assert ch2.cap_note(res, "pos").startswith("1/2 members were cut")
    assert ch2.cap_note({**res, "steps_cap": 30_000, "members": [{**m, "stop_step": 30_000} for m in res["members"]]},
                        "pos").startswith("the paper's protocol: 2/2 members ran all 30000 updates")
    res["members"][0]["stop_step"] = 60
    assert "not the cause" in ch2.cap_note(res, "pos")
