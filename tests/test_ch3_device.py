"""Chapter 3's study as study-sized ensembles (issue 28, :mod:`lengthgen.chapters.ch3.ensembles`):
equality with today's per-group cells, the stored cells, the budget and the GPU script's dry run.

The tolerance of the padded ensembles (groups of several seeds draw different lengths at an update,
so their batches are padded to the longest): padding is exact in exact arithmetic (causal attention,
every other map position by position, unscored padded positions), so the ensemble and today's cell
are two float32 roundings of the same computation. Each deviates from it by about today's own float32
error δ, measured against the same run in float64 (whose own error is ~1e-9 of it); hence
|ensemble − cell| ≤ |ensemble − exact| + |cell − exact| ≈ 2δ. For the final loss the test asserts
4δ (δ of that member's loss) plus 4 float32 ulps (a sum that rounds differently even from equal
parameters; measured: at most 0.3 of it). For the parameters the deviations are heavy-tailed (AdamW's
first updates are ≈ lr·sign(g), and rounding can flip the sign of a near-zero gradient component), so
δ is pooled over all members (the largest |float32 − float64| of any parameter) and the bound is
8δ (measured on this machine: 2.6δ at most). The
accuracies are discrete: a prediction can only flip at a position whose logit margin is below the
logit difference, so the accuracies may differ by at most the share of such positions (0 here, so
they are equal)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
import torch

import lengthgen.engine.train as engine
from lengthgen.chapters.ch3 import ensembles as en
from lengthgen.chapters.ch3 import experiments as ex
from lengthgen.chapters.ch3 import training as tr3
from lengthgen.chapters.ch3 import paper
from lengthgen.config import ConfigError
from lengthgen.engine import runs
from lengthgen import store
from lengthgen.nn.decoder import Decoder
from lengthgen.store import load_result, repo_root, results_dir

MAIN, POS = ("prev", "first", "copy"), ("pos2", "pos5")
TINY = dict(
    steps=4, batch=8, lr=3e-3, weight_decay=0.01, lengths=(30, 40), eval_n=6, train_eval_n=2
)
EPS32 = torch.finfo(torch.float32).eps


def _capture(monkeypatch):
    """Record every TrainResult of train_ensemble (today's cells do not return their parameters)."""
    seen = []
    real = engine.train_ensemble

    def train(*a, **k):
        res = real(*a, **k)
        seen.append(res)
        return res

    monkeypatch.setattr(engine, "train_ensemble", train)
    return seen


def test_groups_of_one_seed_equal_their_own_cells_bit_for_bit():
    for tier, enc in (("2L4H", "alibi"), ("1L1H", "learned_abs")):
        groups = [(MAIN, 3), (POS, 3)]
        ens = tr3.train_groups(tier, enc, groups, **TINY)
        own = [ex.train_cell_group(tier, enc, t, s, **TINY) for t, s in groups]
        assert ens == own, (tier, enc)


def test_padded_study_ensemble_equals_per_group_cells_to_float32_rounding(monkeypatch):
    tier, enc = "2L4H", "rope"
    groups = [(MAIN, 0), (POS, 0), (MAIN, 1), (POS, 1)]
    seen = _capture(monkeypatch)
    ens = tr3.train_groups(tier, enc, groups, **TINY)
    assert tr3.train_groups(tier, enc, groups, **TINY) == ens  # deterministic
    res_ens = seen[0]
    seen.clear()
    own = [ex.train_cell_group(tier, enc, t, s, **TINY) for t, s in groups]
    res_own = list(seen)
    seen.clear()
    f64 = [tr3.train_groups(tier, enc, [g], dtype="float64", **TINY)[0] for g in groups]
    res_64 = list(seen)
    # the schedules of seeds 0 and 1 differ, so there is padding and the arithmetic is not the same
    s0 = tr3.length_schedule(TINY["steps"], paper.L0, 0)
    s1 = tr3.length_schedule(TINY["steps"], paper.L0, 1)
    assert not torch.equal(s0, s1)
    model = Decoder.tier(tier, enc, L0=paper.L0)
    nL, e, deltas, diffs = len(TINY["lengths"]), 0, [], []
    bank_kw = dict(n_eval=TINY["eval_n"], train_n=TINY["train_eval_n"], L0=paper.L0)
    for (tasks, seed), rows_e, rows_o, rows_64, r_o, r_64 in zip(
        groups, ens, own, f64, res_own, res_64
    ):
        banks = tr3.eval_banks(
            tasks, TINY["lengths"], seed=paper.EVAL_SEED_OFFSET + seed, **bank_kw
        )
        close = []  # per member: {bank: share of scored positions that may flip}
        for i in range(len(tasks)):
            th_e = {n: v[e + i : e + i + 1] for n, v in res_ens.params.items()}
            th_o = {n: v[i : i + 1] for n, v in r_o.params.items()}
            th_64 = {n: v[i : i + 1] for n, v in r_64.params.items()}
            deltas.append(max(float((th_o[n].double() - th_64[n]).abs().max()) for n in th_o))
            diffs.append(max(float((th_e[n] - th_o[n]).abs().max()) for n in th_o))
            share = {}
            for key, (x, y) in banks.items():
                lo = model.forward(th_o, x[i : i + 1])[0]
                le = model.forward(th_e, x[i : i + 1])[0]
                top = lo.topk(2, dim=-1).values
                scored = y[i] != tr3.IGNORE
                near = (top[..., 0] - top[..., 1]) <= 2 * float((lo - le).abs().max())
                share[key] = int((near & scored).sum()) / max(int(scored.sum()), 1)
            close.append(share)
        for j, (re_, ro, r64) in enumerate(zip(rows_e, rows_o, rows_64)):
            share = close[j // nL]
            assert abs(re_["acc"] - ro["acc"]) <= share[ro["L"]]
            train_share = max(v for k, v in share.items() if isinstance(k, tuple))
            assert abs(re_["train_acc"] - ro["train_acc"]) <= train_share
            d_loss = abs(ro["final_loss"] - r64["final_loss"])
            tol = 4 * d_loss + 4 * EPS32 * abs(ro["final_loss"])
            assert abs(re_["final_loss"] - ro["final_loss"]) <= tol, (re_, ro, tol)
        e += len(tasks)
    # the parameters: within 8 δ, δ today's float32 error pooled over the members
    assert 0 < max(deltas) < 1e-3 and max(diffs) <= 8 * max(deltas), (diffs, deltas)


def test_the_full_study_is_fifteen_ensembles_of_45_members():
    ens = en.study_ensembles("full")
    assert len(ens) == 15 and ens[0]["name"] == "1L1H__rope"
    assert [e["tier"] for e in ens] == ["1L1H"] * 5 + ["2L4H"] * 5 + ["4L4H"] * 5
    keys = [g["key"] for e in ens for g in e["groups"]]
    assert sorted(keys) == sorted(g["key"] for g in ex.study_plan("full"))
    assert {sum(len(g["tasks"]) for g in e["groups"]) for e in ens} == {45}
    assert set(en.group_cells("full")) == set(keys)
    kw = en.protocol_kwargs("full", ens[0]["groups"])
    assert kw["steps"] == 2000 and "seed" not in kw


@pytest.fixture
def dry(monkeypatch):
    monkeypatch.setitem(paper.PROTOCOL, "smoke", {**paper.PROTOCOL["smoke"], "study": en.DRY_RUN})


def test_run_study_stores_every_group_as_its_cell_and_resumes(dry, tmp_path, monkeypatch):
    log = []
    rec = en.run_study("smoke", out=tmp_path, device="cpu", log=log.append)
    folder = tmp_path / "cells"
    cells = en.group_cells("smoke")
    assert len(cells) == 8 and not rec["stopped"] and len(rec["ensembles"]) == 2
    for name, c in cells.items():
        assert store.stored_state(folder, c, "smoke") == "done"
        obj = load_result(folder / f"{name}.json")
        ex.check_group(obj["data"]["value"], c.kwargs, name)
        prov = obj["provenance"]
        assert prov["executor"] == "study_ensemble" and prov["precision"]["tf32"] is False
        assert prov["ensemble"]["members"] == 6 and prov["config_hash"] == c.hash
    # the same numbers as training each ensemble directly (the stored value is the rows)
    e0 = en.study_ensembles("smoke")[0]
    direct = en.train_ensemble_groups("smoke", e0)
    assert {k: store.cell_value(folder, k) for k in direct} == direct
    run = json.loads((tmp_path / "run.json").read_text())["runs"][0]
    assert run["precision"]["float32_matmul_precision"] == "highest"
    # a re-run trains nothing; a lost cell is re-trained alone, equal to its own cell bit for bit
    (folder / "1L1H__nope__main__seed1.json").unlink()
    calls = []
    real = tr3.train_groups

    def spy(tier, encoding, groups, **kw):
        calls.append((tier, encoding, list(groups)))
        return real(tier, encoding, groups, **kw)

    monkeypatch.setattr(tr3, "train_groups", spy)
    rec2 = en.run_study("smoke", out=tmp_path, device="cpu", log=log.append)
    assert calls == [("1L1H", "nope", [(("prev", "first"), 1)])]
    c = cells["1L1H__nope__main__seed1"]
    assert store.cell_value(folder, c.name) == ex.train_cell_group(**c.kwargs)
    assert rec2["skipped"] == ["1L1H__rope"]
    assert len(json.loads((tmp_path / "run.json").read_text())["runs"]) == 2


def test_a_spent_budget_stops_cleanly_before_an_ensemble(dry, tmp_path):
    prof = en.profile_study("smoke", device="cpu")
    assert set(prof["tiers"]) == {"1L1H"} and prof["tiers"]["1L1H"]["members"] == 6
    assert prof["estimate_s"] > 0 and set(prof["ensembles"]) == {"1L1H__rope", "1L1H__nope"}
    log = []
    rec = en.run_study(
        "smoke", out=tmp_path, device="cpu", budget_s=0, profile=prof, log=log.append
    )
    assert rec["stopped"] and rec["remaining"] == ["1L1H__rope", "1L1H__nope"]
    assert not list((tmp_path / "cells").glob("*.json")) and "re-run" in log[0]


def test_a_full_study_from_a_dirty_tree_is_refused_before_any_work(tmp_path, monkeypatch):
    import lengthgen.store as store

    monkeypatch.setattr(store, "git_state", lambda: {"commit": "abc", "dirty": True})
    with pytest.raises(ConfigError, match="full-scale run needs a clean git tree"):
        en.run_study("full", out=tmp_path, device="cpu", log=lambda _: None)
    assert not (tmp_path / "cells").exists() or not list((tmp_path / "cells").iterdir())


def test_refuse_dirty_refuses_only_work_above_smoke_from_a_dirty_tree():
    dirty, clean = {"dirty": True}, {"dirty": False}
    runs.refuse_dirty(["a"], "smoke", dirty, False)
    runs.refuse_dirty([], "full", dirty, False)
    runs.refuse_dirty(["a"], "full", clean, False)
    runs.refuse_dirty(["a"], "full", dirty, True)
    with pytest.raises(ConfigError, match="paper-scale run needs a clean git tree"):
        runs.refuse_dirty(["a"], "paper", dirty, False)


def test_a_device_run_never_writes_into_the_stored_cpu_study():
    meta = torch.device("meta")  # any device other than the CPU
    assert en.default_out("full", meta) == results_dir() / "ch3" / "device"
    assert en.default_out("full", "cpu") == results_dir() / "ch3"
    with pytest.raises(ConfigError, match="stored CPU study"):
        en.check_out(results_dir() / "ch3", meta)


def test_arguments_are_checked_with_one_line_naming_the_value():
    train = lambda groups, **kw: lambda: tr3.train_groups("1L1H", "rope", groups, **kw, **TINY)
    for call, match in (
        (train([]), "groups"),
        (train([("prev",)]), "pair"),
        (train([(("swap",), 0)]), "swap"),
        (train([(MAIN, 0), (MAIN, 0)]), "repeat"),
        (train([(MAIN, 0)], dtype="half"), "half"),
        (lambda: en.study_ensembles("paper"), "paper"),
        (lambda: en.run_study("smoke", budget_s=-1), "budget_s"),
    ):
        with pytest.raises(ConfigError, match=match) as err:
            call()
        assert "\n" not in str(err.value)


def test_gpu_script_dry_run_on_the_cpu(tmp_path):
    env = {**os.environ, "PYTHON": sys.executable}
    env.pop("LENGTHGEN_DEVICE", None)
    out, copy = tmp_path / "out", tmp_path / "copy"
    script = ["bash", "scripts/gpu_ch3.sh", "--dry-run", str(out)]
    kw = dict(cwd=repo_root(), env=env, capture_output=True, text=True)
    p = subprocess.run([*script, "10", "cpu", str(copy)], timeout=120, **kw)
    assert p.returncode == 0, p.stdout + p.stderr
    assert "TF32 off" in p.stdout and "tiny check" in p.stdout and "estimate" in p.stdout
    cells = sorted(x.name for x in (copy / "cells").glob("*.json"))
    assert len(cells) == 8
    assert all((copy / "cells" / c).stat().st_size <= en.COPY_LIMIT_BYTES for c in cells)
    run = json.loads((copy / "run.json").read_text())["runs"][-1]
    assert run["dry_run"] and run["precision"]["tf32"] is False and not run["stopped"]
    tiny = json.loads((copy / "tiny.json").read_text())
    assert tiny["max_abs_diff"] <= en.TINY_LIMIT
    bad = subprocess.run([*script, "1", "tpu"], timeout=60, **kw)
    assert bad.returncode == 2 and "tpu" in bad.stderr


def test_the_scripts_copy_limit_is_the_packages():
    """gpu_ch3.sh types its copy-back limit (it must work before the package is importable);
    it is pinned here to ensembles.COPY_LIMIT_BYTES, and the message's "15 MB" with it."""
    import re

    text = (repo_root() / "scripts" / "gpu_ch3.sh").read_text()
    m = re.search(r"^LIMIT=\$\(\((\d+) \* 1024 \* 1024\)\)$", text, re.M)
    assert m and int(m.group(1)) * 1024 * 1024 == en.COPY_LIMIT_BYTES
    assert f"over {en.COPY_LIMIT_BYTES // 2**20} MB" in text
