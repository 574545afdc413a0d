"""Chapter 4's claims ledger: the committed ledger re-checks from results/, tampering with a stored
number behind a claim is caught and named, and the declarations follow the chapter's rules
(reduced protocols stay visible, deviations carry a declared cause and never quote our value)."""

import math

import pytest

from lengthgen import claims
from lengthgen.chapters.ch4 import claims as C4
from lengthgen.claims import Claim, Unchecked
from helpers import copy_results, edit_cell


@pytest.fixture
def results_copy(tmp_path):
    return copy_results(tmp_path, chapters=["ch4"])


def _committed():
    return {r["id"]: r for r in claims.load_ledger("ch4")}


def test_ch4_ledger_rechecks_clean():
    assert claims.check_ledgers(["ch4"]) == []


def test_tamper_headline_length_generalization_is_caught(results_copy):
    """The biased sine MLP's length-811 accuracy (a reproduced paper claim) corrupted in the stored cell."""
    assert _committed()["ch4.fig5.paper_lr_60k.bias_far"]["status"] == "reproduced"

    def corrupt(v):
        for row in v["rows"]:
            row["811"] = 0.5

    edit_cell(results_copy, "ch4", "lengthgen_paper_lr_60k_sine_bias", corrupt)
    problems = claims.check_ledgers(["ch4"], results_root=results_copy)
    assert [p["id"] for p in problems] == ["ch4.fig5.paper_lr_60k.bias_far"]
    assert "fails without a declared deviation" in problems[0]["problem"]


def test_tamper_paper_scale_gpu_run_is_caught(results_copy):
    """The p = 53 GPU run: the bias-free sine MLP's length-811 accuracy set to chance in the stored
    cell falsifies the reproduced Fig. 4 claim and moves the bias comparison's recorded value."""
    assert _committed()["ch4.fig4.p53.sine_far"]["status"] == "reproduced"

    def corrupt(v):
        for i, m in enumerate(v["members"]):
            if m["activation"] == "sine" and not m["bias"]:
                v["final"]["acc"]["811"][i] = 0.02

    edit_cell(results_copy, "ch4", "paper_p53", corrupt)
    problems = {
        p["id"]: p["problem"]
        for p in claims.check_ledgers(["ch4"], results_root=results_copy)
    }
    assert "fails without a declared deviation" in problems["ch4.fig4.p53.sine_far"]
    assert set(problems) <= {"ch4.fig4.p53.sine_far", "ch4.fig5.p53.bias_robust"}


def test_paper_scale_cell_is_loaded_at_its_own_scale(results_copy):
    from lengthgen.chapters.ch4.experiments import load_stored_cell
    from lengthgen.store import ResultFileError

    rec = load_stored_cell("paper_p53", folder=results_copy / "ch4" / "cells")
    assert (
        rec["provenance"]["device_name"] == "NVIDIA H200"
        and rec["data"]["partial"] is True
    )
    edit_cell(
        results_copy, "ch4", "paper_p53", lambda v: v["final"]["acc"]["811"].pop()
    )
    with pytest.raises(ResultFileError, match="paper_p53"):
        load_stored_cell("paper_p53", folder=results_copy / "ch4" / "cells")


def test_tamper_theorem_accuracy_is_caught(results_copy):
    """One error of the Thm 4.1 network at p = 97 falsifies the exact claim."""
    edit_cell(
        results_copy, "ch4", "automaton", lambda v: v["thm41@97"].update(min_acc=0.9999)
    )
    problems = claims.check_ledgers(["ch4"], results_root=results_copy)
    assert [p["id"] for p in problems] == ["ch4.thm41.long"]


def test_tamper_that_moves_a_reported_value_is_caught_and_one_that_does_not_is_not(
    results_copy,
):
    """ReLU's chance-level claim reads the highest far-length accuracy: raising it within the chance band
    changes the recorded value (reported); lowering a non-maximal entry changes nothing."""
    committed = _committed()["ch4.fig4.paper_lr.relu_chance"]

    def lower(v):
        for row in v["rows"]:
            row["401"] = min(row["401"], 0.05)

    edit_cell(results_copy, "ch4", "lengthgen_long_relu_nobias", lower)
    assert claims.check_ledgers(["ch4"], results_root=results_copy) == []

    def raise_far(v):
        for row in v["rows"]:
            row["512"] = committed["our_value"] + 0.02

    edit_cell(results_copy, "ch4", "lengthgen_long_relu_nobias", raise_far)
    problems = claims.check_ledgers(["ch4"], results_root=results_copy)
    assert [p["id"] for p in problems] == ["ch4.fig4.paper_lr.relu_chance"]
    assert problems[0]["problem"].startswith("value")


def test_declared_deviation_that_starts_to_hold_is_reported(results_copy):
    """If the bias-free sine MLP became perfect at every length, its declared deviations would be flagged."""

    def perfect(v):
        for row in v["rows"]:
            for key in row:
                if key.isdigit() or key == "train":
                    row[key] = 1.0

    edit_cell(results_copy, "ch4", "lengthgen_long_sine_nobias", perfect)
    problems = {}
    for p in claims.check_ledgers(["ch4"], results_root=results_copy):
        problems.setdefault(p["id"], []).append(p["problem"])
    assert (
        "declared deviation (reduced budget) now holds"
        in problems["ch4.fig4.paper_lr.sine_far"]
    )
    assert "status deviates → reproduced" in problems["ch4.fig4.paper_lr.sine_far"]
    assert "ch4.fig4.paper_lr.sine_seen" in problems


# ------------------------------------------------------------------ the declarations follow the rules
def test_every_training_claim_names_its_reduced_protocol():
    for c in C4.CLAIMS:
        if (
            isinstance(c, Claim)
            and c.group == "paper"
            and c.id.startswith(("ch4.fig", "ch4.sec"))
        ):
            assert c.protocol.kind == "reduced" and "(paper: " in c.protocol.reduced, (
                c.id
            )
    lr60 = next(c for c in C4.CLAIMS if c.id == "ch4.fig5.paper_lr_60k.bias_far")
    assert "data-richer" in lr60.protocol.reduced and "1 seed" in lr60.protocol.reduced


@pytest.mark.parametrize(
    "p, n, m, held, total",
    [
        (17, 2000, 2, 132, 153),
        (97, 2000, 2, 277, 4753),
        (17, 8000, 2, 153, 153),
        (17, 8000, 3, 650, 969),
        (97, 8000, 2, 1006, 4753),
        (97, 8000, 3, 1142, 156849),
    ],
)
def test_data_richness_quoted_in_the_protocols(p, n, m, held, total):
    """The count-vector coverage the length-generalization protocols quote (seed 1337's training sets)."""
    from lengthgen.chapters.ch4.data import train_set
    from lengthgen.chapters.ch4.paper import TRAIN_LENGTHS

    d = train_set(1337, p, TRAIN_LENGTHS, n)
    assert (
        len({tuple(r) for r in d.x[d.m == m].long().tolist()}) == held
        and math.comb(m + p - 1, p - 1) == total
    )
    text = C4.MAIN.reduced if n == 2000 else C4.PAPER_LR_60K.reduced
    quoted = f"every one of the {total:,}" if held == total else f"{held:,} of "
    assert quoted in text and f"{total:,}" in text


def test_deviations_never_quote_our_value_and_causes_are_declared():
    committed = _committed()
    for c in C4.CLAIMS:
        if isinstance(c, Claim) and c.deviation is not None:
            assert c.deviation.cause in C4.CAUSES
            ours = committed[c.id]["our_value"]
            numbers = [ours] if isinstance(ours, (int, float)) else []
            for x in numbers:
                assert f"{x:.3g}" not in c.deviation.explanation, c.id
            assert committed[c.id]["status"] == "deviates", (
                c.id
            )  # declared only where it deviates


def test_self_checks_and_unchecked_coverage():
    by = {c.id: c for c in C4.CLAIMS}
    for cid in (
        "ch4.thm44.rays",
        "ch4.thm43.training",
        "ch4.thm42.nobias_ties",
        "ch4.constructions.live",
    ):
        assert by[cid].group == "self-check"
    for cid in ("ch4.thm43", "ch4.thm44"):
        assert isinstance(by[cid], Unchecked) and by[cid].status == "not-reproducible"
    assert (
        sum(isinstance(c, Unchecked) and c.status == "not-attempted" for c in C4.CLAIMS)
        >= 5
    )
    # the paper's values live in paper.py, one entry per paper claim (with its location)
    from lengthgen.chapters.ch4.paper import PAPER_VALUES

    for c in C4.CLAIMS:
        if c.group == "paper":
            assert any(
                v[1] == c.paper_value
                or c.paper_value
                in (C4.nobias_exhaustive_paper(), C4.nobias_long_paper())
                for v in PAPER_VALUES.values()
            ), c.id


def test_direction_claims_are_not_counted_as_reproductions():
    rows = claims.load_ledger("ch4")
    cats = {r["id"]: claims.category(r) for r in rows}
    assert cats["ch4.fig1.width"] == "direction"
    assert cats["ch4.fig6.transformer"] == "deviates"
    assert all(cats[r["id"]] != "reproduced" for r in rows if r["check"] == "direction")


# ------------------------------------------------------------------ the helpers behind the rules
def test_tolerance_of_the_sampled_bias_free_accuracy_is_three_binomial_se():
    n = 811 * 10_000
    q = 1 - 1 / 53
    assert C4.NOBIAS_LONG_TOL == pytest.approx(3 * math.sqrt(q * (1 - q) / n))


def test_spearman_trend_permutation_p_and_seed_se():
    t = C4._spearman_trend([0, 1, 2, 3, 4], [1, 2, 3, 4, 5])
    assert t["rho"] == pytest.approx(1.0) and t["p"] == pytest.approx(1 / 120)
    assert C4._spearman_trend([0, 1, 2], [1, 1, 1])["p"] == 1.0
    mean, se = C4._seed_mean([1.0, 1.0], 10_000)
    assert mean == 1.0 and se == 0.0
    mean, se = C4._seed_mean([0.5], 10_000)
    assert se == pytest.approx(0.005)
    assert C4._ahead(0.6, 0.01, 0.5, 0.01) and not C4._ahead(0.52, 0.01, 0.5, 0.01)


def test_max_difference():
    assert C4.max_difference({"a": [1.0, 2]}, {"a": [1.0, 2]}) == 0.0
    assert C4.max_difference({"a": [1.0, 2]}, {"a": [1.5, 2]}) == 0.5
    assert C4.max_difference({"a": 1}, {"b": 1}) == math.inf
    assert C4.max_difference([1, None], [1, None]) == 0.0
    assert C4.max_difference([1], [1, 2]) == math.inf


def test_update_count_quoted_in_text_follows_the_stored_gpu_run():
    """The paper-scale cell can be resumed: the update count typed into the protocol, the abstract
    and the caption must follow its stored progress (a resumed run makes this test fail)."""
    from pathlib import Path

    from lengthgen.chapters.ch4.experiments import load_stored_cell

    done = load_stored_cell("paper_p53")["data"]["progress"]["done"]
    assert f"{done:,}" in C4.P53.reduced
    page = (
        Path(__file__).parents[1] / "notebooks" / "04_sine_modular_addition.md"
    ).read_text()
    assert page.count(f"{done:,}") >= 3
    gains = _committed()["ch4.fig5.p53.bias_robust"][
        "our_value"
    ]  # quoted in the prose, rounded
    assert (
        f"by {gains['8000']['gain']:.3f} at $n = 8000$ and {gains['2000']['gain']:.3f}"
        in page
    )


def test_gpu_section_ranges_and_arrivals_follow_the_stored_run():
    """The accuracy ranges and the update counts typed into the GPU section are those of the stored
    run (``paper_scale_ranges``, ``paper_scale_arrivals``): a changed run makes this test fail."""
    from pathlib import Path

    from lengthgen.chapters.ch4.experiments import (
        paper_scale_arrivals,
        paper_scale_ranges,
        stored_paper_scale,
    )

    value = stored_paper_scale()["data"]["paper"]
    page = (
        Path(__file__).parents[1] / "notebooks" / "04_sine_modular_addition.md"
    ).read_text()
    text = " ".join(page.split())
    low = lambda r: f"at least {math.floor(100 * r[0])} %"  # noqa: E731  (the lowest length, rounded down)
    rng = paper_scale_ranges(value, 8000)
    assert f"at decay 0.03 is right on {low(rng[('sine', 0.03)])} of the inputs" in text
    assert f"(at decay 0.1 on {low(rng[('sine', 0.1)])})" in text
    assert f"the biased one, at decay 0.3, on {low(rng[('sine+bias', 0.3)])}" in text
    hits = [s for s in paper_scale_arrivals(value, 8000).values() if s is not None]
    assert f"between {min(hits):,} and {max(hits):,} updates here" in text
