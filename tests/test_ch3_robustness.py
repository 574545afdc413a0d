"""Chapter 3's robustness studies (App. F–H; ``lengthgen.chapters.ch3.experiments``): the induction
targets, the frequency-scaled RoPE of the decoder and of the predictor, and the plan's cells."""

import math

import pytest
import torch

from lengthgen.chapters.ch3 import experiments as ch3
from lengthgen.chapters.ch3 import measures as m3
from lengthgen.chapters.ch3.paper import MAIN_TASKS
from lengthgen.chapters.ch3.training import induction_targets, train_groups
from lengthgen.config import ConfigError
from lengthgen.nn.decoder import Decoder
from lengthgen.nn.positional import KernelFamily, frequencies, rope_rotate


#: a protocol of seconds
KW = dict(steps=2, batch=4, lr=1e-3, weight_decay=0.0, lengths=[30], eval_n=4, train_eval_n=2)


def test_induction_targets_match_brute_force():
    g = torch.Generator().manual_seed(0)
    x = torch.randint(0, 5, (20, 17), generator=g)
    t = induction_targets(x)
    for b in range(20):
        for i in range(17):
            prev = [j for j in range(i) if x[b, j] == x[b, i]]
            assert int(t[b, i]) == (prev[-1] + 1 if prev else -1)


def test_scaled_rope_rotates_by_scaled_angles():
    x = torch.randn(3, 7, 8, dtype=torch.float64)
    s = 0.03
    th = frequencies(4, 1e4) * s
    out = rope_rotate(x, 1e4, s)
    for i in range(7):
        for k in range(4):
            c, si = math.cos(i * th[k]), math.sin(i * th[k])
            a, b = x[:, i, 2 * k], x[:, i, 2 * k + 1]
            assert torch.allclose(out[:, i, 2 * k], a * c - b * si)
            assert torch.allclose(out[:, i, 2 * k + 1], a * si + b * c)
    assert torch.equal(rope_rotate(x, 1e4, 1.0), rope_rotate(x, 1e4))


def test_scale_one_is_the_standard_decoder_and_family():
    m0, m1 = Decoder("rope"), Decoder("rope", rope_scale=1.0)
    p = m0.init([0, 1])
    x = torch.randint(0, 12, (2, 3, 9), generator=torch.Generator().manual_seed(1))
    assert torch.equal(m0(p, x), m1(p, x))
    assert torch.equal(ch3.ScaledRope(1.0).features(25), KernelFamily("rope").features(25))
    assert not torch.equal(Decoder("rope", rope_scale=0.1)(p, x), m0(p, x))
    with pytest.raises(ConfigError, match="rope_scale"):
        Decoder("rope", rope_scale=float("nan"))


def test_train_groups_accepts_the_induction_task_and_rejects_unknown_tasks():
    rows = train_groups("1L1H", "alibi", [(("induction", "prev"), 0)], **KW)[0]
    assert [r["task"] for r in rows] == ["induction", "prev"]
    with pytest.raises(ConfigError, match="task"):
        train_groups("1L1H", "alibi", [(("inductio",), 0)], **KW)


def test_robustness_cells_are_planned_once_with_seeds_as_members():
    cs = [c for c in ch3.cells("full") if c.fn is ch3.train_seeds]
    names = [c.name for c in cs]
    assert len(names) == len(set(names)) == 30
    g10 = next(c for c in cs if c.name == "appG__L0_10__rope").kwargs
    assert g10["L0"] == 10 and g10["lengths"] == [30] and g10["seeds"] == [0, 1, 2]
    assert g10["tasks"] == list(MAIN_TASKS) and g10["steps"] == 2000
    f = next(c for c in cs if c.name == "appF__nope").kwargs
    assert (f["vocab"], f["d_model"], f["seeds"]) == (64, 128, [0, 1])
    assert not [c for c in ch3.cells("smoke") if c.fn is ch3.train_seeds]


def test_train_seeds_is_train_groups_per_seed():
    scale = {"rope_scale": 0.5}
    rows = ch3.train_seeds("1L1H", "rope", ["skip3"], [0, 1], setting=scale, **KW | scale)
    ref = train_groups("1L1H", "rope", [(("skip3",), 0), (("skip3",), 1)], **KW | scale)
    assert rows == [{**r, "rope_scale": 0.5} for g in ref for r in g]


def test_a_claim_waits_for_its_cells(monkeypatch):
    from lengthgen.chapters.ch3 import claims_details as cd
    from lengthgen.claims import Claim, Unchecked

    c = Claim("ch3.x", "App. H", "s", 1.0, "equal", "rule 1", measure=lambda r: 1.0)
    monkeypatch.setattr(cd, "NOT_RUN", frozenset({"appH__induction__2L4H__rope"}))
    u = cd.until_run(c, "appH__induction__*", "a few minutes")
    assert isinstance(u, Unchecked) and u.status == "not-attempted"
    assert "--only 'appH__induction__*' (a few minutes)" in u.reason and "rule 1" in u.reason
    assert cd.until_run(c, "appF__*", "an hour") is c


def test_app_g_alpha_is_one_on_the_same_cells_at_every_training_length():
    """Pins the details page's sentence on App. G's stored α side."""
    from lengthgen.claims import StoredResults

    tabs = m3.stored(StoredResults("ch3"), "robustness_alpha")["appG"]
    ones = {L0: sorted(k for k, a in t.items() if a == 1.0) for L0, t in tabs.items()}
    assert set(ones) == {"10", "20", "40"} and len({tuple(v) for v in ones.values()}) == 1
    assert "rope/skip3" in ones["10"] and "learned_abs/first" in ones["40"]


def test_scaled_rope_lg_equals_its_training_accuracy_at_every_length():
    """Pins the details page's sentence on the stored frequency sweep (scales below 1)."""
    import numpy as np
    from lengthgen.claims import StoredResults

    r = StoredResults("ch3")
    for s in [s for s in ch3.ROPE_SCALES if s < 1 and f"appH__rope_scale_{s:g}" not in ch3.NOT_RUN]:
        rows = m3.stored(r, f"appH__rope_scale_{s:g}")
        train = np.mean([x["train_acc"] for x in rows])
        if train <= 0.8:  # the sentence is about the scales where the models learn skip-3
            continue
        for L in {x["L"] for x in rows}:
            assert abs(np.mean([x["acc"] for x in rows if x["L"] == L]) - train) <= 0.02
