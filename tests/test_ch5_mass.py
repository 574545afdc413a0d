"""Chapter 5, section "Softmax mass, not just argmax": the refit and RoPE-far tools."""

import math

import numpy as np
import pytest
import torch

from lengthgen.chapters.ch3 import realizability as rz
from lengthgen.chapters.ch5 import mass
from lengthgen.config import ConfigError
from lengthgen.nn.positional import KernelFamily


def test_fit_ce_default_row_scale_is_the_old_arithmetic():
    for enc, task in (("rope", "prev"), ("learned_abs", "first"), ("alibi", "skip2")):
        fam = KernelFamily(enc, L0=20)
        a = rz.fit_ce(fam, task, 20, steps=30)
        b = rz.fit_ce(fam, task, 20, steps=30, row_scale=None)
        assert torch.equal(a, b)
        c = rz.fit_ce(fam, task, 20, steps=30, row_scale=torch.ones(20))
        assert torch.equal(a, c)  # multiplying by 1.0 is exact


def test_fit_ce_row_scale_checks():
    fam = KernelFamily("rope", L0=20)
    for bad in (torch.ones(19), -torch.ones(20), torch.full((20,), math.nan)):
        with pytest.raises(ConfigError, match="row_scale"):
            rz.fit_ce(fam, "prev", 20, steps=2, row_scale=bad)


def test_row_log_scale():
    s = mass.row_log_scale(25, 20)
    assert s[0] == 0 and s[19] == 1.0
    assert torch.allclose(s, torch.log(torch.arange(1.0, 26.0, dtype=torch.float64)) / math.log(20))


def test_row_alignment_brute_force():
    fam, W = rz.select("rope", "prev", "ce", L0=20)
    L = 40
    got = mass.row_alignment(W, fam, "prev", L, 20)
    T = rz.transfer(W, fam.features(L)) * mass.row_log_scale(L, 20)[:, None]
    rows = rz.scored_rows("prev", L, 20)
    tgt = rz.targets("prev", L)
    w = [torch.softmax(T[i, : i + 1], 0)[tgt[i]] for i in rows.tolist()]
    assert got["alpha_half"] == np.mean([float(x) > 0.5 for x in w])
    assert got["alpha"] == rz.simulate(W, fam, "prev", L, 20).alpha  # positive factor
    assert got == mass.row_alignment(W, fam, "prev", L, 20)


def test_clamped_half_rows_matches_computed():
    fam, W = rz.select("learned_abs", "first", "ce", L0=20)
    for L in (60, 700):
        got = mass.row_alignment(W, fam, "first", L, 20)["alpha_half"]
        assert (
            abs(got - mass.clamped_half(W, "first", L, 20, mass.row_log_scale(L, 20).numpy()[20:]))
            * (L - 20)
            <= 1
        )
    with pytest.raises(ConfigError):
        mass.clamped_half(W, "prev", 60, 20, 1.0)


def test_refit_learned_row_19_unchanged_and_deterministic():
    _, W_old = rz.select("learned_abs", "pos2", "ce", L0=20)
    _, W = mass.refit("learned_abs", "pos2", 20)
    assert mass.clamped_margin(W, "pos2") == mass.clamped_margin(W_old, "pos2")
    assert torch.equal(W, mass.refit("learned_abs", "pos2", 20)[1])
    with pytest.raises(ConfigError):
        mass.refit("bogus", "prev")


def test_rope_kappa_is_the_transfer():
    fam, W = rz.select("rope", "skip3", "ce", L0=20)
    L = 64
    T = rz.transfer(W, fam.features(L)).numpy()
    k = mass.rope_kappa(W, L, chunk=7)
    i, j = np.tril_indices(L)
    assert np.abs(T[i, j] - k[i - j]).max() <= 1e-12 * np.abs(T).max()
    with pytest.raises(ConfigError):
        mass.rope_coefficients(torch.zeros(3, 3))


def test_frequency_classes_and_torus_sup():
    cl = mass.frequency_classes()
    assert len(cl) == 4 and sorted(m for _, mem in cl for _, m in mem) == sorted(
        [1, 10, 100, 1000] * 4
    )
    # a kernel peaked at delta = 1 (Prop. 3A's form) attains the sum of amplitudes
    a = np.cos(1 * mass.frequencies().numpy())
    b = -np.sin(1 * mass.frequencies().numpy())
    W = torch.block_diag(*[torch.tensor([[x, y], [-y, x]]) for x, y in zip(a, b)])
    k = mass.rope_kappa(W, 50)
    assert abs(k[1] - 16) < 1e-12 and int(np.argmax(k)) == 1
    sup = mass.torus_sup(W, grid=2**16)
    assert abs(sup["S4"] - 16) < 1e-9 and abs(sup["S16"] - 16) < 1e-12


def test_level_measure_against_monte_carlo():
    _, W = rz.select("rope", "prev", "ce", L0=20)
    rng = np.random.default_rng(0)
    t = rng.uniform(0, 2 * np.pi, (200_000, 4))
    a, b = mass.rope_coefficients(W)
    F = sum(
        a[k] * np.cos(m * t[:, r]) - b[k] * np.sin(m * t[:, r])
        for r, (_, mem) in enumerate(mass.frequency_classes())
        for k, m in mem
    )
    levels = [0.0, 10.0]
    mu = mass.level_measure(W, levels, grid=2**16, bins=2**14)["mu"]
    for ell, m in zip(levels, mu):
        p = (F > ell).mean()
        assert abs(m - p) < 5 * math.sqrt(p * (1 - p) / len(F)) + 1e-3


def test_records_and_exceedance():
    k = np.array([0.0, 3.0, 1.0, 2.0, 4.0, 4.0, 5.0, 1.0])
    assert mass.first_exceedance(k, 1) == 4
    assert mass.first_exceedance(k, 6) == -1
    # offset 4 is a strict record; offset 5 ties it (row 5 fails); 6 is a record
    assert mass.far_records(k, 0).tolist() == [0, 1, 4, 6]
    assert rz.relative_alpha(k, "first", 8, 2) == 2 / 6


def test_cells_plans():
    full = {c.name for c in mass.cells("full")}
    assert {c.name for c in mass.cells("smoke")} <= full == {"mass_refit", "mass_far"}
    with pytest.raises(ConfigError):
        mass.cells("medium")


def test_moved_cell_functions_still_match_their_stored_cells():
    """``mass_refit`` / ``mass_far`` (ch5) and ``train_seeds`` / ``alpha_cell`` (ch3) moved modules;
    through ``stored_as`` their stored full-scale cells (not every one is stored) keep their hash."""
    from lengthgen import store
    from lengthgen.chapters.ch3 import experiments as e3
    from lengthgen.chapters.ch5 import experiments as e5

    moved = {mass.mass_refit, mass.mass_far, e3.train_seeds, e3.alpha_cell}
    for ch, plan in (("ch5", e5.cells("full")), ("ch3", e3.robustness_cells())):
        plan = [c for c in plan if c.fn in moved]
        folder = store.results_dir() / ch / "cells"
        stored = {
            k: v for k, v in store.plan_status(plan, folder, "full").items() if v != "missing"
        }
        assert stored and set(stored.values()) == {"done"}, (ch, stored)  # none "changed"
