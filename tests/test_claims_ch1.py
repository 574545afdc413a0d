"""Chapter 1's claims ledger: the declarations, and tamper tests on copies of the stored results
(``claims --check`` must fail and name the claim whose stored number was corrupted)."""

import math
from pathlib import Path

import pytest

from lengthgen import claims, pages
from lengthgen.chapters.ch1 import claims as ch1_claims
from lengthgen.chapters.ch1 import paper, training
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
        "ch1.first_train.mechanism",
    }
    assert all(c.deviation.cause in ch1_claims.CAUSES for c in checked if c.deviation)
    # the ceiling of Fig. 4 is checked as a count of perfect runs, one claim per training length
    perfect = [c for c in checked if c.id.startswith("ch1.first_train.scaled_perfect_n")]
    assert len(perfect) == len(paper.TRAIN_LENGTHS)
    assert all(c.check == "equal" and c.paper_value == paper.FIG4_RUNS for c in perfect)
    # checks of our own code against our own formulas are self-checks, not paper claims
    assert {c.id for c in checked if c.group == "self-check"} == {
        "ch1.dilution.closed_form_vs_encoder",
        "ch1.fig2.first_logit_formula",
        "ch1.fig2.eps_0_output_scaling",
        "ch1.fig2.authors_head_logit",
        "ch1.fig2.authors_eps0_floor",
        "ch1.logscaled.band",
        "ch1.logscaled.low_ce",
        "ch1.first_rates.repeats_first_training",
    }
    # a McNemar test with a handful of discordant runs cannot reject: not a claim (issue 25)
    assert "ch1.first_rates.placement_same_rate" not in {c.id for c in mod.CLAIMS}
    # the success rates (rule 8) are judged by p̂^20 >= 0.05, a predicate fixed before the runs
    rates = [
        c
        for c in checked
        if c.id.startswith(("ch1.first_rates.scaled_n", "ch1.first_rates.authors_"))
    ]
    assert len(rates) == 2 * len(paper.TRAIN_LENGTHS) and all(c.check == "predicate" for c in rates)
    assert all(c.holds({"p_20_of_20": 0.05}) and not c.holds({"p_20_of_20": 0.049}) for c in rates)
    assert all(c.deviation.cause == "success rate below 1" for c in rates if c.deviation)
    # order statements are direction checks, never numeric reproductions (rule 6)
    for cid in (
        "ch1.first_train.scaled_beats_standard",
        "ch1.fig2.eps_1e-5_initially_better",
        "ch1.fig2.eps_1e-5_parity_rises",
        "ch1.first_train.standard_not_perfect",
        "ch1.dilution.flawed_first",
    ):
        assert next(c for c in checked if c.id == cid).check == "direction", cid
    # closed forms and readings of the figure are value checks (issue 25)
    by_id = {c.id: c for c in checked}
    shrink = by_id["ch1.fig2.parity_logit_shrinks"]
    assert shrink.check == "value" and shrink.tolerance == ch1_claims.FLOAT_TOL
    assert shrink.group == "paper"
    assert all(b < a for a, b in zip(shrink.paper_value, shrink.paper_value[1:]))
    grows = by_id["ch1.fig2.eps_1e-5_grows"]
    assert grows.check == "value" and grows.source == "live"
    assert (grows.paper_value, grows.tolerance) == (
        paper.FIG2_FIRST_EPS5_RISE_BITS,
        ch1_claims.FIG2_RISE_TOL,
    )
    # the authors' layout: 1/√5 and 1/√6 per head, ε = 0 logits √10 and √6
    assert by_id["ch1.fig2.authors_head_logit"].paper_value == pytest.approx(
        [1 / math.sqrt(5), 1 / math.sqrt(6)], abs=1e-15
    )
    assert by_id["ch1.fig2.authors_eps0_floor"].paper_value == pytest.approx(
        [
            math.log2(1 + math.exp(-math.sqrt(10))),
            math.log2(1 + math.exp(-math.sqrt(6))),
        ],
        abs=1e-15,
    )
    unchecked = {u.id: u.status for u in mod.CLAIMS if isinstance(u, Unchecked)}
    assert unchecked["ch1.mt.bleu_long_sentences"] == "not-reproducible"


def test_committed_ledger_is_complete_and_current():
    rows = claims.load_ledger("ch1")  # the chapter page's part, then the details page's
    mod = claims.chapter_claims("ch1")
    assert [r["id"] for r in rows] == [
        c.id for page in claims.PAGES for c in mod.CLAIMS if claims.page_of(mod, c.id) == page
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
    problems = {p["id"]: p["problem"] for p in claims.check_ledgers(["ch1"], results_root=root)}
    # the count claim fails; the direction claim reads the same accuracies, so its value moved too, and
    # the run no longer ends as its twin in first_rates
    assert set(problems) == {
        "ch1.first_train.scaled_perfect_n30",
        "ch1.first_train.scaled_beats_standard",
        "ch1.first_rates.repeats_first_training",
    }
    assert "fails without a declared deviation" in problems["ch1.first_train.scaled_perfect_n30"]
    assert problems["ch1.first_train.scaled_beats_standard"].startswith("value")


def test_tamper_fig2_logit_is_caught(tmp_path):
    """A FIRST logit of the stored Fig. 2 moved by 1e-6 no longer equals Knowl 2's formula."""
    root = copy_results(tmp_path)

    def edit(v):
        curve = next(c for c in v if c["construction"] == "first" and c["label"] == "no layer norm")
        curve["rows"][-1]["max_abs_logit"] += 1e-6

    edit_cell(root, "ch1", "fig2", edit)
    assert [p["id"] for p in claims.check_ledgers(["ch1"], results_root=root)] == [
        "ch1.fig2.first_logit_formula"
    ]


def test_tamper_fig2_parity_logit_is_caught(tmp_path):
    """A PARITY logit of the stored Fig. 2 moved by 1e-6 (still shrinking) no longer equals the closed
    form: the value check catches what the old order check could not."""
    root = copy_results(tmp_path)

    def edit(v):
        curve = next(
            c for c in v if c["construction"] == "parity" and c["label"] == "no layer norm"
        )
        curve["rows"][3]["max_abs_logit"] += 1e-6

    edit_cell(root, "ch1", "fig2", edit)
    assert [p["id"] for p in claims.check_ledgers(["ch1"], results_root=root)] == [
        "ch1.fig2.parity_logit_shrinks"
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
            (lambda v: v["test_acc"].__setitem__(slice(None), [1.0] * len(v["test_acc"]))),
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
    problems = {p["id"]: p["problem"] for p in claims.check_ledgers(["ch1"], results_root=root)}
    assert "fails without a declared deviation" in problems["ch1.first_rates.scaled_n30"]
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


# --------------------------------------------------------------------------- numbers in the prose
NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks"
#: the chapter's page and its details page: prose pinned here may sit on either
PAGES = (
    NOTEBOOKS / "01_log_scaled_attention.md",
    NOTEBOOKS / "01_log_scaled_attention_details.md",
)


def _pages_text() -> str:
    """Both pages' sources, whitespace collapsed (a pinned phrase may wrap across lines)."""
    return " ".join(" ".join(p.read_text() for p in PAGES).split())


def test_fig2_prose_numbers_are_pinned():
    """The numbers section "Confidence: cross-entropy against length" types, recomputed."""
    text = _pages_text()
    floor = [math.log2(1 + math.exp(-math.sqrt(d / 2))) for d in (18, 12, 20)]
    for snippet, shown, value in (
        ("\\approx 0.070$ bits", "0.070", floor[0]),
        ("($\\approx 0.119$ bits)", "0.119", floor[1]),
        ("floor about 0.060 bits instead of 0.070", "0.060", floor[2]),
        ("$1/\\sqrt5 \\approx 0.45$", "0.45", 1 / math.sqrt(5)),
        ("$1/\\sqrt{10} \\approx 0.32$", "0.32", 1 / math.sqrt(10)),
        ("$1/\\sqrt6 \\approx 0.41$", "0.41", 1 / math.sqrt(6)),
        ("$1/\\sqrt{12} \\approx 0.29$", "0.29", 1 / math.sqrt(12)),
        ("0.5 bits give or take 0.3", "0.5", paper.FIG2_FIRST_EPS5_RISE_BITS),
        ("0.5 bits give or take 0.3", "0.3", ch1_claims.FIG2_RISE_TOL),
    ):
        assert snippet in text, snippet
        assert f"{value:.{len(shown.split('.')[1])}f}" == shown, snippet
    assert ch1_claims.AUTHORS_EPS0_BITS[0] == pytest.approx(floor[2], abs=1e-15)
    # "rises from about 0.12 bits at n = 10 to more than half a bit at n = 1000; in ours it
    # rises by about 0.01 bits"
    assert "from about 0.12 bits at $n = 10$" in text and "about 0.01 bits" in text
    rows = {r["id"]: r for r in claims.load_ledger("ch1")}
    at = rows["ch1.fig2.sqrt_d_first_eps_1e-5_rises"]["our_value"]["ce_bits"]
    assert round(at[0], 2) == 0.12 and at[2] > 0.5
    curve = next(
        c["rows"]
        for c in claims.StoredResults("ch1").cell("fig2")
        if c["construction"] == "first" and c["label"] == paper.LN_VARIANTS[1][0]
    )
    assert round(curve[-1]["ce_bits"] - curve[0]["ce_bits"], 2) == 0.01


def test_placement_prose_numbers_are_pinned():
    """The counts the page gives instead of a placement claim, from the stored first_rates cell."""
    text = _pages_text()
    res = claims.StoredResults("ch1").cell("first_rates")
    rows = training.placement_comparison(res, perfect_ce_bits=ch1_claims.PERFECT_CE_BITS)
    runs = sum(r["runs"] for r in rows)
    differ = [r["only_a"] + r["only_b"] for r in rows]
    ours = sum(r["only_a"] for r in rows)
    assert f"agrees with ours in {runs - sum(differ)} of the {runs} runs" in text
    assert f"of the {sum(differ)} disagreements, {ours} favour our placement" in text
    assert max(differ) <= 3 and "at most three disagreements at a length" in text
    # McNemar's exact test with at most 5 discordant runs cannot reach p < 0.05
    from lengthgen.stats import mcnemar_exact

    assert mcnemar_exact([True] * 5, [False] * 5)["p_value"] >= 0.05
    rates = training.success_rates(res, perfect_ce_bits=ch1_claims.PERFECT_CE_BITS)
    theirs = [
        r["perfect"]
        for n in paper.TRAIN_LENGTHS
        for r in rates
        if r["arm"] == "authors' placement" and r["train_n"] == n
    ]
    assert "with {}, {}, {} and {} successes".format(*theirs) in text


def test_headline_claims_type_only_the_papers_protocol_numbers():
    """The results box's plain-words claims type no measured number: only training and test
    lengths and the paper's run count, each matching the claim it names."""
    import re

    allowed = {str(n) for n in paper.TRAIN_LENGTHS} | {
        str(paper.TEST_N),
        str(paper.FIG4_RUNS),
    }
    for it in pages.headline_claims("ch1"):
        numbers = set(re.findall(r"\d+", it["claim"]))
        assert numbers <= allowed, it
        m = re.search(r"_n(\d+)$", it["id"])
        if m:
            assert f"length {m.group(1)}:" in it["claim"], it


def test_studies_prose_numbers_are_pinned():
    """The derived numbers the details page's secondary studies type (issue 38)."""
    from lengthgen.chapters.ch1 import studies

    text = _pages_text()
    bound = studies.ln_logit_bound(0.0)
    assert "\\tfrac14\\sqrt{80/17} \\approx 0.542" in text and f"{bound:.3f}" == "0.542"
    assert math.sqrt(80 / 17) / 4 == pytest.approx(bound, rel=1e-15)
    assert "$\\sqrt{999}/2 \\approx 16$" in text and paper.TEST_N == 1000
    assert round(math.sqrt(paper.TEST_N - 1) / 2) == 16
    grid = paper.PARITY_GRID["full"]
    k = len(grid["depths"]) * len(grid["lrs"]) * len(grid["log_scaled"])
    assert f"That makes {k} settings, {k - 1} of them new, with {grid['runs']} runs each" in text
    runs = len(paper.TRAIN_LENGTHS) * len(paper.ATTENTION_ARMS) * paper.FIG4_RUNS
    assert f"trains the {runs} runs of paper Fig. 4" in text


def test_studies_claims_can_fail():
    """The four claims of the secondary studies (issue 38) fail on values just past their rules."""
    by_id = {c.id: c for c in claims.chapter_claims("ch1").CLAIMS}
    ffnn = by_id["ch1.ffnn_parity"]
    assert (ffnn.check, ffnn.paper_value, ffnn.source) == ("equal", 1.0, "live")
    mech = by_id["ch1.first_train.mechanism"].holds
    assert mech({"failed_runs": 5, "outvoted": 3})
    assert not mech({"failed_runs": 6, "outvoted": 3})  # half is not most
    assert not mech({"failed_runs": 4, "outvoted": 4})  # too few failed runs to judge
    grid = by_id["ch1.parity_train.other_settings"].holds
    assert grid([0.4, 0.6]) and not grid([0.39, 0.5]) and not grid([0.5, 0.61])
    ln = by_id["ch1.logscaled.with_layer_norm"].holds
    good = {"min_abs_logit": [0.6, 0.6], "min_acc": 1.0, "max_ce_bits": 1e-12}
    assert ln(good)
    assert not ln({**good, "min_abs_logit": [0.6, 0.54]})
    assert not ln({**good, "min_acc": 0.999})
    assert not ln({**good, "max_ce_bits": 1e-6})


def test_tamper_outvote_probe_is_caught(tmp_path):
    """Failed standard runs that were right at balance become wrong there: the mechanism claim fails."""
    root = copy_results(tmp_path)

    def edit(v):
        for i, m in enumerate(v["members"]):
            if not m["log_scaled"] and v["test_acc"][i] < 1.0:
                v["balanced_correct"][i] = False

    edit_cell(root, "ch1", "first_mechanism", edit)
    problems = {p["id"] for p in claims.check_ledgers(["ch1"], results_root=root)}
    assert problems == {"ch1.first_train.mechanism"}


def test_outvote_prose_numbers_are_pinned():
    """The counts the details page types from the stored outvote probe (cell first_mechanism)."""
    from lengthgen.chapters.ch1 import studies

    text = _pages_text()
    cell = claims.StoredResults("ch1").cell("first_mechanism")
    counts = studies.mechanism_counts(cell)
    failed, right = counts["failed_runs"], counts["outvoted"]
    assert f"Of the {failed} standard-attention runs" in text
    assert f"only {right} are right for both first" in text
    assert f"The other {failed - right} give the same answer" in text
    std = [i for i, m in enumerate(cell["members"]) if not m["log_scaled"]]
    wrong = [i for i in std if cell["test_acc"][i] < 1.0 and not cell["balanced_correct"][i]]
    errs = [cell["exact_error"][i] for i in wrong]
    assert 0.45 <= min(errs) and max(errs) <= 0.5 + 1e-12
    assert "exact error rate lies between 0.45 and 0.5" in text
    up = sum(cell["rest_pushes_up"][i] for i in std)
    assert f"In {up} of the {len(std)} standard runs more later 1s raise the logit" in text


def test_parity_grid_prose_numbers_are_pinned():
    """The range and the constant answers the details page types from the stored cell parity_grid."""
    import torch

    from lengthgen.chapters.ch1 import studies
    from lengthgen.nn.tasks import random_strings

    text = _pages_text()
    cell = claims.StoredResults("ch1").cell("parity_grid")
    means = [r["mean_acc"] for r in studies.grid_means(cell) if not r["reported"]]
    assert f"between {min(means):.2f} and {max(means):.2f}" in text
    runs = len(cell["test_acc"])
    assert f"Every one of the {runs} runs ends up giving one answer" in text
    # a constant answer scores the share of odd (or even) strings among the run's test strings
    p, per_depth = cell["protocol"], runs // 2
    tg = torch.Generator().manual_seed(paper.PARITY_SEED_OFFSETS["test"] + p["seed"])
    for i in range(per_depth):
        bits = random_strings(p["test_strings"], p["n"], generator=tg)
        odd = float((bits.sum(-1) % 2).double().mean())
        for acc in (cell["test_acc"][i], cell["test_acc"][i + per_depth]):
            assert min(abs(acc - odd), abs(acc - (1 - odd))) < 1e-12
