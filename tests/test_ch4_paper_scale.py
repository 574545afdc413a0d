"""Chapter 4's paper-scale GPU path, run on the CPU at a tiny size: the mixed-variant ensemble equals
the per-variant networks, the device sampler walks single-length batches exactly like the released
loop's epoch, per-member decay masks, exact resumption from a checkpoint, partial cells in the runs
facility, the ``paper`` scale and the commit named by the launcher on a machine without git."""

import math
import subprocess
import sys
import time

import pytest
import torch

from lengthgen.chapters.ch4 import paper
from lengthgen.chapters.ch4.data import train_set
from lengthgen.chapters.ch4.data import ModularMLP
from lengthgen.chapters.ch4.paper_scale import (
    DeviceLengthSampler,
    VariantMLP,
    members_of,
    train_paper_scale,
)
from lengthgen.chapters.ch4.training import updates_per_epoch
from lengthgen.config import ConfigError
from lengthgen import store
from lengthgen.engine import runs
from lengthgen.engine.optim import EnsembleOptimizer, OptimConfig
from lengthgen.engine.runs import Cell, run_cells
from lengthgen.store import ResultFileError, load_result

TINY = dict(
    p=5,
    width=16,
    budgets=(60, 200),
    wds=(0.1,),
    seeds=(1337, 1338),
    variants=(("sine", False), ("sine", True), ("relu", False)),
    lr=3e-2,
    steps=40,
    eval_every=20,
    n_eval=40,
    eval_lengths=(2, 3, 14, 53),
    batch_size=16,
)


def test_members_put_sine_first_and_check_input():
    ms = members_of((("relu", False), ("sine", True)), (100,), (0.1, 0.0), (1,))
    assert [m["activation"] for m in ms] == ["sine", "sine", "relu", "relu"]
    with pytest.raises(ConfigError, match="activation"):
        members_of((("tanh", False),), (100,), (0.1,), (1,))
    with pytest.raises(ConfigError, match=r"variant must be \(activation, bias\)"):
        members_of(("sine",), (100,), (0.1,), (1,))
    with pytest.raises(ConfigError, match="weight decay"):
        members_of((("sine", False),), (100,), (-1,), (1,))
    with pytest.raises(ConfigError, match="empty"):
        members_of((("sine", False),), (), (0.1,), (1,))


def test_variant_mlp_equals_the_per_variant_networks():
    ms = members_of(TINY["variants"], (60,), (0.1,), (7, 8))
    model = VariantMLP(5, 16, ms)
    P = model.init("cpu")
    x = torch.randint(0, 4, (len(ms), 9, 5)).float()
    out = model.forward(P, x)
    for i, m in enumerate(ms):
        ref = ModularMLP(5, 16, m["activation"], bias=m["bias"])
        Q = ref.init([m["seed"]])
        assert torch.equal(P["W"][i], Q["W"][0]) and torch.equal(P["V"][i], Q["V"][0])
        if m["bias"]:
            assert torch.equal(P["b"][i], Q["b"][0])
        else:
            assert not P["b"][i].any()
        torch.testing.assert_close(out[i], ref.forward(Q, x[i : i + 1])[0], rtol=1e-6, atol=1e-7)


def test_device_sampler_walks_single_length_batches_like_the_released_loop():
    sets = [train_set(1, 5, paper.TRAIN_LENGTHS, n) for n in (60, 200)]
    s = DeviceLengthSampler(sets, 5, batch=16, device="cpu", seed=3)
    assert s.spe == [updates_per_epoch(n, paper.TRAIN_LENGTHS, 16) for n in (60, 200)]
    for e, d in enumerate(sets):
        seen, lengths = [], []
        for step in range(s.spe[e]):
            s.reshuffle(step)
            x, y = s.batch()
            keep = y[e] >= 0
            xe = x[e][keep]
            m = xe.sum(1).unique()
            assert len(m) == 1  # one length per batch
            lengths.append(int(m))
            seen.append(xe)
        assert lengths == sorted(lengths)  # the lengths walked in order
        got = torch.cat(seen)
        assert got.shape[0] == len(d)  # every example once per epoch
        key = lambda t: sorted(map(tuple, t.long().tolist()))
        assert key(got) == key(d.x)
        s = DeviceLengthSampler(sets, 5, batch=16, device="cpu", seed=3)


def test_decay_members_decays_only_the_marked_members():
    torch.manual_seed(0)
    W = torch.randn(2, 3, 4)
    g = torch.randn(2, 3, 4)
    masked = {"W": W.clone()}
    opt = EnsembleOptimizer(
        OptimConfig("adamw", lr=0.1, weight_decay=0.5, decay_members={"W": (False, True)}),
        masked,
        ["W"],
    )
    opt.step(masked, {"W": g.clone()})
    for i, wd in enumerate((0.0, 0.5)):
        one = {"W": W[i : i + 1].clone()}
        EnsembleOptimizer(OptimConfig("adamw", lr=0.1, weight_decay=wd), one, ["W"]).step(
            one, {"W": g[i : i + 1].clone()}
        )
        assert torch.equal(masked["W"][i], one["W"][0])
    with pytest.raises(ConfigError, match="True/False"):
        OptimConfig("adamw", decay_members={"W": (1, 0)})
    with pytest.raises(ConfigError, match="2 flags but the ensemble has 3"):
        EnsembleOptimizer(
            OptimConfig("adamw", decay_members={"W": (True, False)}),
            {"W": torch.zeros(3, 2, 2)},
            ["W"],
        )


def test_resume_from_checkpoint_is_exact(tmp_path, capsys):
    whole = train_paper_scale(**TINY, workdir=str(tmp_path / "a"))
    assert not whole["partial"] and whole["progress"] == {
        "done": 40,
        "target": 40,
        "unit": "updates",
    }
    assert [h["step"] for h in whole["history"]] == [20, 40]
    assert whole["updates_per_epoch"] == {"60": 7, "200": 14}
    cut = train_paper_scale(**TINY, workdir=str(tmp_path / "b"), _stop_at=30)
    assert cut["partial"] and cut["progress"]["done"] == 30 and cut["history"][-1]["step"] == 30
    prog = load_result(tmp_path / "b" / "progress.json")["data"]
    assert prog["step"] == 30 and [h["step"] for h in prog["history"]] == [20, 30]
    again = train_paper_scale(**TINY, workdir=str(tmp_path / "b"))
    assert "resumed from" in capsys.readouterr().out
    assert again["resumed_at"] == [30] and not again["partial"]
    assert again["final"] == whole["final"]  # bit-identical final accuracies
    a = torch.load(tmp_path / "a" / "checkpoint.pt", weights_only=False)["params"]
    b = torch.load(tmp_path / "b" / "checkpoint.pt", weights_only=False)["params"]
    assert all(torch.equal(a[k], b[k]) for k in a)
    for i, m in enumerate(whole["members"]):
        assert m["epochs"] == round(40 / (7 if m["n"] == 60 else 14), 2)


def test_deadline_and_bad_checkpoint(tmp_path):
    r = train_paper_scale(
        **TINY, deadline=time.time() - 1, stop_margin_s=0.0, workdir=str(tmp_path)
    )
    assert r["partial"] and r["progress"]["done"] == 1  # stops after the update in flight
    (tmp_path / "checkpoint.pt").write_text("not a checkpoint")
    with pytest.raises(ResultFileError, match="corrupt checkpoint .*checkpoint.pt"):
        train_paper_scale(**TINY, workdir=str(tmp_path))
    with pytest.raises(ConfigError, match="steps"):
        train_paper_scale(**{**TINY, "steps": 0})


_OVERRIDE: dict = {}


def partial_cell(target, stop_at, workdir=None):
    done = _OVERRIDE.get("done", min(target, stop_at))
    return {
        "partial": done < target,
        "progress": {"done": done, "target": target},
        "x": done,
    }


def test_partial_cells_are_stored_resumed_and_never_shrunk(tmp_path, monkeypatch, capsys):
    c = Cell("long", partial_cell, {"target": 10, "stop_at": 6})
    run_cells([c], tmp_path, scale="smoke", progress=False)
    assert store.stored_state(tmp_path, c, "smoke") == "partial"
    monkeypatch.setitem(_OVERRIDE, "done", 3)  # a re-run that did less (no checkpoint)
    run_cells([c], tmp_path, scale="smoke", progress=False)
    assert load_result(tmp_path / "long.json")["data"]["value"]["x"] == 6
    assert "kept" in capsys.readouterr().out
    monkeypatch.setitem(_OVERRIDE, "done", 10)  # the resumed run finishes
    out = run_cells([c], tmp_path, scale="smoke", progress=False)
    assert out["long"]["x"] == 10 and store.stored_state(tmp_path, c, "smoke") == "done"


def test_workdir_and_deadline_reach_the_cell(tmp_path):
    seen = {}

    def cell(n, deadline=None, workdir=None):
        seen.update(deadline=deadline, workdir=workdir)
        return n

    run_cells(
        [Cell("w", cell, {"n": 1})],
        tmp_path / "cells",
        scale="smoke",
        budget_s=60,
        progress=False,
    )
    assert seen["workdir"].endswith("work/w") and seen["deadline"] > time.time()


def test_paper_scale_is_chapter_4_only_and_needs_a_clean_tree(tmp_path, monkeypatch):
    from lengthgen.chapters import plan

    assert [c.name for c in plan("ch4", "paper")] == ["paper_p53"]
    with pytest.raises(ConfigError, match="scale"):
        plan("ch1", "paper")
    monkeypatch.setattr(runs.store, "git_state", lambda: {"commit": "abc", "dirty": True})
    with pytest.raises(ConfigError, match="paper-scale run needs a clean git tree"):
        run_cells(
            [Cell("sq", partial_cell, {"target": 1, "stop_at": 1})],
            tmp_path,
            scale="paper",
            progress=False,
        )
    assert runs.default_out("ch4", "paper").name == "ch4"
    out = subprocess.run(
        [sys.executable, "-m", "lengthgen", "reproduce", "ch1", "--scale", "paper"],
        capture_output=True,
        text=True,
    )
    assert out.returncode != 0 and "Traceback" not in out.stderr and "scale" in out.stderr


def test_commit_named_by_the_launcher_without_git(monkeypatch):
    monkeypatch.setattr(store, "_git", lambda *a: None)  # no git at all
    monkeypatch.setenv("LENGTHGEN_SOURCE_COMMIT", "f" * 40)
    st = store.git_state()
    assert st == {
        "commit": "f" * 40,
        "dirty": None,
        "commit_source": "LENGTHGEN_SOURCE_COMMIT",
    }
    prov = store.provenance(scale="paper", device="cpu", git=st)
    assert prov["git_commit"] == "f" * 40 and prov["git_commit_source"] == "LENGTHGEN_SOURCE_COMMIT"
    # a copy inside another checkout: that checkout's HEAD is not this tree's commit
    monkeypatch.setattr(
        store, "_git", lambda *a: "/elsewhere" if "--show-toplevel" in a else "e" * 40
    )
    assert store.git_state()["commit"] == "f" * 40
    monkeypatch.delenv("LENGTHGEN_SOURCE_COMMIT")
    assert store.git_state() == {"commit": None, "dirty": None}


def test_flop_count_of_an_update():
    from lengthgen.chapters.ch4.paper_scale import paper_scale_flops

    assert paper_scale_flops(53, 1024, 36) == pytest.approx(2.0e10, rel=0.01)
    assert math.isclose(paper_scale_flops(2, 1, 1, batch=1), 20.0)


def test_newton_schulz_flop_count():
    """Five quintic steps on the short side a = min(d, p) of each of the two d×p matrices:
    Gram 2a²b, its square 2a³, the product with X 2a²b (b = max(d, p))."""
    from lengthgen.chapters.ch4.paper_scale import newton_schulz_flops

    a, b = 53, 1024
    per_step = 2 * a * a * b + 2 * a**3 + 2 * a * a * b
    assert newton_schulz_flops(53, 1024, 1) == 2 * 5 * per_step
    assert newton_schulz_flops(1024, 53, 1) == newton_schulz_flops(53, 1024, 1)
    assert newton_schulz_flops(53, 1024, 36, steps=1) == 36 * 2 * per_step


def test_git_state_on_a_real_checkout(tmp_path, monkeypatch):
    """The clean-tree check reads git itself (results/ and _build/ do not count as dirty)."""
    import shutil

    if shutil.which("git") is None:
        pytest.skip("git not installed")
    root = tmp_path / "book"
    (root / "src" / "lengthgen").mkdir(parents=True)
    (root / "_config.yml").write_text("title: t\n")
    env = {
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@t",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@t",
    }
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    subprocess.run(["git", "-C", str(root), "add", "."], check=True)
    subprocess.run(["git", "-C", str(root), "commit", "-qm", "init"], check=True)
    monkeypatch.setattr(store, "repo_root", lambda: root)
    monkeypatch.delenv("LENGTHGEN_SOURCE_COMMIT", raising=False)
    st = store.git_state()
    assert len(st["commit"]) == 40 and st["dirty"] is False
    (root / "results").mkdir()
    (root / "results" / "x.json").write_text("{}")
    (root / "_build").mkdir()
    (root / "_build" / "y").write_text("")
    assert store.git_state()["dirty"] is False
    (root / "_config.yml").write_text("title: u\n")
    assert store.git_state()["dirty"] is True


def _toy_value():
    members = [
        {"activation": "sine", "bias": b, "n": 8, "wd": 0.1, "seed": s}
        for b in (False, True)
        for s in (1, 2)
    ]
    members.append({"activation": "relu", "bias": False, "n": 8, "wd": 0.1, "seed": 1})
    hist = [
        {"step": 10, "acc": {"2": [1.0] * 5, "9": [0.1, 0.2, 0.95, 0.0, 0.0]}},
        {"step": 20, "acc": {"2": [1.0] * 5, "9": [0.9, 0.3, 0.99, 0.5, 0.0]}},
    ]
    final = {
        "train_acc": [1.0] * 5,
        "acc": {"2": [1.0] * 5, "9": [0.9, 0.3, 0.99, 0.5, 0.0]},
    }
    return {
        "members": members,
        "eval_lengths": [2, 9],
        "train_lengths": [2],
        "history": hist,
        "final": final,
    }


def test_paper_scale_ranges_and_arrivals_brute_force():
    from lengthgen.chapters.ch4.experiments import (
        paper_scale_arrivals,
        paper_scale_ranges,
    )

    v = _toy_value()
    rng = paper_scale_ranges(v, 8)  # only the held-out length 9 counts
    assert rng[("sine", 0.1)] == pytest.approx((0.6, 0.6)) and rng[
        ("sine+bias", 0.1)
    ] == pytest.approx((0.745, 0.745))
    assert rng[("relu", 0.1)] == (0.0, 0.0)
    arr = paper_scale_arrivals(v, 8, length=9)
    assert arr == {
        ("sine", 0.1, 1): 20,
        ("sine", 0.1, 2): None,
        ("sine+bias", 0.1, 1): 10,
        ("sine+bias", 0.1, 2): None,
        ("relu", 0.1, 1): None,
    }
    for read in (paper_scale_ranges, paper_scale_arrivals):
        with pytest.raises(ConfigError, match="budget n = 9 is not one of"):
            read(v, 9)
