"""Chapter 1's claims ledger: the declarations, and tamper tests on copies of the stored results
(``claims --check`` must fail and name the claim whose stored number was corrupted)."""

import pytest

from lengthgen import claims
from lengthgen.chapters.ch1 import claims as ch1_claims
from lengthgen.chapters.ch1 import paper
from lengthgen.claims import Claim, Unchecked
from helpers import copy_results, edit_cell


def _member(value, n, log_scaled, run):
    return next(
        i
        for i, m in enumerate(value["members"])
        if m["train_n"] == n and m["log_scaled"] == log_scaled and m["run"] == run
    )


def test_declarations():
    mod = claims.chapter_claims("ch1")
    ids = [c.id for c in mod.CLAIMS]
    assert len(ids) == len(set(ids))
    checked = [c for c in mod.CLAIMS if isinstance(c, Claim)]
    # deviations are declared only on the Fig. 4 claims, each with a cause of the chapter's list
    assert {c.id for c in checked if c.deviation} == {
        "ch1.first_train.standard_chance_at_10",
        "ch1.first_train.scaled_perfect_n10",
        "ch1.first_train.scaled_perfect_n300",
        "ch1.first_rates.scaled_n10",
        "ch1.first_rates.scaled_n300",
        "ch1.first_rates.authors_placement_n10",
        "ch1.first_rates.authors_placement_n300",
    }
    assert all(c.deviation.cause in ch1_claims.CAUSES for c in checked if c.deviation)
    # the ceiling of Fig. 4 is checked as a count of perfect runs, one claim per training length
    perfect = [
        c for c in checked if c.id.startswith("ch1.first_train.scaled_perfect_n")
    ]
    assert len(perfect) == len(paper.TRAIN_LENGTHS)
    assert all(c.check == "equal" and c.paper_value == paper.FIG4_RUNS for c in perfect)
    # checks of our own code against our own formulas are self-checks, not paper claims
    assert {c.id for c in checked if c.group == "self-check"} == {
        "ch1.dilution.closed_form_vs_encoder",
        "ch1.fig2.first_logit_formula",
        "ch1.fig2.eps_0_output_scaling",
        "ch1.logscaled.low_ce",
        "ch1.first_rates.placement_same_rate",
        "ch1.first_rates.repeats_first_training",
    }
    # the success rates (rule 8) are judged by p̂^20 >= 0.05, a predicate fixed before the runs
    rates = [
        c
        for c in checked
        if c.id.startswith(("ch1.first_rates.scaled_n", "ch1.first_rates.authors_"))
    ]
    assert len(rates) == 2 * len(paper.TRAIN_LENGTHS) and all(
        c.check == "predicate" for c in rates
    )
    assert all(
        c.holds({"p_20_of_20": 0.05}) and not c.holds({"p_20_of_20": 0.049})
        for c in rates
    )
    assert all(
        c.deviation.cause == "success rate below 1" for c in rates if c.deviation
    )
    # order statements are direction checks, never numeric reproductions (rule 6)
    for cid in (
        "ch1.first_train.scaled_beats_standard",
        "ch1.fig2.parity_logit_shrinks",
        "ch1.fig2.eps_1e-5_grows",
        "ch1.first_train.standard_not_perfect",
        "ch1.dilution.flawed_first",
    ):
        assert next(c for c in checked if c.id == cid).check == "direction", cid
    unchecked = {u.id: u.status for u in mod.CLAIMS if isinstance(u, Unchecked)}
    assert unchecked["ch1.mt.bleu_long_sentences"] == "not-reproducible"


def test_committed_ledger_is_complete_and_current():
    rows = claims.load_ledger("ch1")
    assert [r["id"] for r in rows] == [
        c.id for c in claims.chapter_claims("ch1").CLAIMS
    ]
    assert claims.check_ledgers(["ch1"]) == []
    status = {r["id"]: claims.category(r) for r in rows}
    assert status["ch1.first_train.scaled_beats_standard"] == "direction"
    assert status["ch1.first_train.scaled_perfect_n30"] == "reproduced"


def test_tamper_one_member_accuracy_is_caught(tmp_path):
    """One log-scaled run at training length 30 loses a test string: the 20/20 count becomes 19."""
    root = copy_results(tmp_path)

    def edit(v):
        v["test_acc"][_member(v, 30, True, 7)] = 0.99

    edit_cell(root, "ch1", "first_training", edit)
    problems = {
        p["id"]: p["problem"] for p in claims.check_ledgers(["ch1"], results_root=root)
    }
    # the count claim fails; the direction claim reads the same accuracies, so its value moved too, and
    # the run no longer ends as its twin in first_rates
    assert set(problems) == {
        "ch1.first_train.scaled_perfect_n30",
        "ch1.first_train.scaled_beats_standard",
        "ch1.first_rates.repeats_first_training",
    }
    assert (
        "fails without a declared deviation"
        in problems["ch1.first_train.scaled_perfect_n30"]
    )
    assert problems["ch1.first_train.scaled_beats_standard"].startswith("value")


def test_tamper_fig2_logit_is_caught(tmp_path):
    """A FIRST logit of the stored Fig. 2 moved by 1e-6 no longer equals Knowl 2's formula."""
    root = copy_results(tmp_path)

    def edit(v):
        curve = next(
            c
            for c in v
            if c["construction"] == "first" and c["label"] == "no layer norm"
        )
        curve["rows"][-1]["max_abs_logit"] += 1e-6

    edit_cell(root, "ch1", "fig2", edit)
    assert [p["id"] for p in claims.check_ledgers(["ch1"], results_root=root)] == [
        "ch1.fig2.first_logit_formula"
    ]


def test_tamper_that_makes_a_declared_deviation_hold_is_reported(tmp_path):
    """If every log-scaled run at length 10 were perfect, the declared deviation would no longer apply."""
    root = copy_results(tmp_path)

    def edit(v):
        for run in range(v["protocol"]["runs"]):
            i = _member(v, 10, True, run)
            v["test_acc"][i], v["test_ce_bits"][i] = 1.0, 1e-4

    edit_cell(root, "ch1", "first_training", edit)
    problems = claims.check_ledgers(["ch1"], results_root=root)
    assert {p["id"] for p in problems} == {
        "ch1.first_train.scaled_perfect_n10",
        "ch1.first_train.scaled_beats_standard",
        "ch1.first_rates.repeats_first_training",
    }
    assert any(
        p["id"] == "ch1.first_train.scaled_perfect_n10"
        and "declared deviation (run-to-run variance) now holds" in p["problem"]
        for p in problems
    )


@pytest.mark.parametrize("cell", ["parity_training", "sensitivity"])
def test_tamper_other_cells_is_caught(tmp_path, cell):
    root = copy_results(tmp_path)
    if cell == "parity_training":
        edit, expect = (
            (
                lambda v: v["test_acc"].__setitem__(
                    slice(None), [1.0] * len(v["test_acc"])
                )
            ),
            "ch1.parity_train.not_learned",
        )
    else:

        def edit(v):
            for r in v["rows"]:
                r["acc"] = 1.0

        expect = "ch1.sensitivity.oscillates"
    edit_cell(root, "ch1", cell, edit)
    assert expect in [p["id"] for p in claims.check_ledgers(["ch1"], results_root=root)]


def _rate_member(value, n, arm, run):
    return next(
        i
        for i, m in enumerate(value["members"])
        if m["train_n"] == n and m["arm"] == arm and m["run"] == run
    )


def test_tamper_success_rate_is_caught(tmp_path):
    """Fifteen more log-scaled runs at training length 30 fail (runs 20-34, outside the runs shared with
    first_training): the rate falls below 0.861 and the 20-of-20 claim fails without a deviation."""
    root = copy_results(tmp_path)

    def edit(v):
        for run in range(20, 35):
            v["test_acc"][_rate_member(v, 30, "log-scaled", run)] = 0.5

    edit_cell(root, "ch1", "first_rates", edit)
    problems = {
        p["id"]: p["problem"] for p in claims.check_ledgers(["ch1"], results_root=root)
    }
    assert (
        "fails without a declared deviation" in problems["ch1.first_rates.scaled_n30"]
    )
    assert "ch1.first_rates.authors_placement_n30" not in problems
    assert "ch1.first_rates.repeats_first_training" not in problems


def test_tamper_that_makes_a_rate_deviation_hold_is_reported(tmp_path):
    """If every run of the authors' placement at length 300 were perfect, its declared deviation would
    no longer apply."""
    root = copy_results(tmp_path)

    def edit(v):
        for run in range(v["protocol"]["runs"]):
            i = _rate_member(v, 300, "authors' placement", run)
            v["test_acc"][i], v["test_ce_bits"][i] = 1.0, 1e-4

    edit_cell(root, "ch1", "first_rates", edit)
    problems = claims.check_ledgers(["ch1"], results_root=root)
    assert any(
        p["id"] == "ch1.first_rates.authors_placement_n300"
        and "declared deviation (success rate below 1) now holds" in p["problem"]
        for p in problems
    )


def test_tamper_shared_run_is_caught(tmp_path):
    """A shared run whose training loss no longer matches first_training fails the self-check."""
    root = copy_results(tmp_path)

    def edit(v):
        v["train_ce_bits_last_epoch"][_rate_member(v, 100, "standard", 3)] *= 1.01

    edit_cell(root, "ch1", "first_rates", edit)
    problems = {p["id"] for p in claims.check_ledgers(["ch1"], results_root=root)}
    assert problems == {"ch1.first_rates.repeats_first_training"}
