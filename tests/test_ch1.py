"""Chapter 1's sweeps and training entry points, on tiny sizes."""
import json

import numpy as np
import pytest
import torch

from lengthgen.chapters.ch1 import constructions as C
from lengthgen.nn import tasks
from lengthgen.chapters.ch1 import experiments as ch1

TINY = {"runs": 1, "epochs": 1, "steps_per_epoch": 3, "test_n": 50, "test_strings": 4, "eval_every_epochs": 1,
        "parity_runs": 1, "parity_epochs": 1, "parity_n": 6, "fig2_strings": 3, "sens_points": 3, "sens_strings": 5}


def test_flawed_first_error_matches_brute_force():
    for n in (1, 2, 5, 9, 12):
        enc, p = C.first_log_scaled(log_scaled=False, c=2.0)
        s = tasks.all_strings(n)
        wrong = 1 - float(ch1.evaluate(enc, p, s, "first")["acc"])
        assert wrong == pytest.approx(float(ch1.flawed_first_error(2.0, n)), abs=1e-12)


def test_exactness_and_curves_small():
    r = ch1.exactness("first", n_exhaustive=6, random_ns=(20,), n_random=10)
    assert r["all_correct"] and r["exhaustive_strings"] == 126
    c = ch1.ce_curve("parity", {"layer_norm": True, "eps": 0.0}, lengths=(1, 4), n_strings=5)
    assert [row["n"] for row in c["rows"]] == [1, 4] and all(row["acc"] == 1.0 for row in c["rows"])
    rows = ch1.logit_range("first_log_scaled", lengths=(3, 50), n_strings=20)
    assert rows[0]["strings"] == 24 and all(0.25 < r["min_abs_logit"] <= r["max_abs_logit"] < 0.5 for r in rows)


def test_sensitivity_and_oscillations():
    sw = ch1.sensitivity_sweep([0.98, 1.0], n=30, n_strings=20)
    assert sw["rows"][1]["acc"] == 1.0
    assert ch1.oscillations([0, 1, 2, 3, 4], [1.0, 0.2, 0.9, 0.1, 0.95]) == 2
    assert ch1.oscillations([0, 1], [1.0, 0.9]) == 0


def test_train_first_tiny_is_deterministic():
    kw = dict(lengths=(10, 30), runs=1, epochs=1, steps_per_epoch=3, test_n=40, test_strings=4, eval_every_epochs=1)
    a, b = ch1.train_first(**kw), ch1.train_first(**kw)
    assert len(a["members"]) == 4 and a["test_acc"] == b["test_acc"] and a["test_ce_bits"] == b["test_ce_bits"]
    table = ch1.first_table(a)
    assert {(r["train_n"], r["attention"]) for r in table} == {(10, "standard"), (10, "log-scaled"),
                                                              (30, "standard"), (30, "log-scaled")}
    v = ch1.first_verdicts(a)
    assert set(v) == {"standard", "log-scaled"} and set(v["standard"]["acc_by_length"]) == {10, 30}
    assert a["curve"]["epoch"] == [1]


def test_train_parity_tiny():
    r = ch1.train_parity(runs=2, epochs=1, steps_per_epoch=2, n=5, test_strings=3)
    assert len(r["test_acc"]) == 2 and r["protocol"]["n"] == 5


def test_reproduce_tiny_and_resumable(tmp_path, monkeypatch):
    monkeypatch.setitem(ch1.PROTOCOLS, "smoke", TINY)
    monkeypatch.setattr(ch1, "FIG2_LENGTHS", (1, 3))
    monkeypatch.setattr(ch1, "TRAIN_LENGTHS", (10,))
    paths = ch1.reproduce("smoke", "cpu", tmp_path)
    assert sorted(p.name for p in paths) == ["fig2.json", "first_training.json", "parity_training.json", "sensitivity.json"]
    data = json.loads((tmp_path / "parity_training.json").read_text())
    assert data["provenance"]["scale"] == "smoke" and data["data"]["key"] == "parity_training"
    before = {p.name: p.stat().st_mtime_ns for p in paths}
    again = ch1.reproduce("smoke", "cpu", tmp_path)
    assert {p.name: p.stat().st_mtime_ns for p in again} == before
    # a cell stored at another scale is recomputed, never mistaken for this scale's result
    monkeypatch.setitem(ch1.PROTOCOLS, "full", TINY)
    ch1.reproduce("full", "cpu", tmp_path)
    assert json.loads((tmp_path / "fig2.json").read_text())["provenance"]["scale"] == "full"


def test_summarize():
    s = ch1.summarize([1.0, 1.0, 0.0, 1.0])
    assert s["mean"] == 0.75 and s["lo"] <= 0.75 <= s["hi"] and s["n"] == 4


def test_bad_inputs():
    with pytest.raises(ValueError, match="'sort'.*parity"):
        ch1.exactness("sort")
    with pytest.raises(ValueError, match="n_strings"):
        ch1.ce_curve("first", n_strings=0)
    with pytest.raises(ValueError, match="runs"):
        ch1.train_first(runs=0)
    with pytest.raises(ValueError, match="training length"):
        ch1.train_first(lengths=(1,))
    with pytest.raises(ValueError, match="'huge'.*smoke"):
        ch1.reproduce("huge", "cpu", ".")
    with pytest.raises(ValueError, match="n must be"):
        ch1.logit_range("first", lengths=(0,))
